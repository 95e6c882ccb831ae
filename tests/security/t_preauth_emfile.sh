#!/usr/bin/env bash
# Out of descriptors: the listening gateway runs with 64, and 300 stalled
# HELLOs from 5 addresses (the per-source and total limits allow them) use
# them up.  accept() then fails with EMFILE: the gateway must drop the
# waiting connection with its reserve descriptor, log it once, pause
# accepting instead of spinning (on the control socket too), keep the honest link's streams, and
# accept again (the honest link reconnecting) once the attack is over.
# An honest flow runs while the descriptors run out, on client
# connections opened before (new ones would need descriptors too: the
# client socket's accept is outside this test).
# Reproduces: ldsd spun on accept failing with EMFILE, 7.7 CPU-s in 10 s,
# nothing logged.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/attack_lib.sh"
make_key "$T/key"
write_conf clusterB clusterA listen 2
write_conf clusterA clusterB connect 2
start_ldsd_nofile clusterB 64
start_ldsd clusterA
wait_up clusterA 2
start_pair 40000 "" "" -B 64k -T 120
sleep 0.5
start_attack fill stall -n 300 -s 127.0.0.2 -S 5 -t 10
sleep 2
fds=$(nfds "$PID_clusterB")
# ldsctl knocks meanwhile: the control socket's accept runs out too, and
# must not spin either (it drops the request: ldsctl fails at once).
(for _ in 1 2 3; do timeout 2 "$BIN/ldsctl" -s "$T/clusterB.ctl" status > /dev/null 2>&1; sleep 1; done) &
knock=$!
PIDS="$PIDS $knock"
cpu=$(cpu_in "$PID_clusterB" 6)
wait "$knock"
lt "$cpu" 0.6 || fail "clusterB used $cpu CPU-s in 6 s out of descriptors ($fds open): spinning on accept"
kill -0 "$PID_clusterB" || fail "clusterB died"
n=$(grep -c "cannot accept connections: Too many open files" "$T/clusterB.log")
[ "$n" = 1 ] || fail "the descriptor shortage was logged $n times, not once"
wait "$APID_fill"
# The attack is over: its connections are closed, and the listener
# accepts again.
t0=$(date +%s)
ctl clusterA fault break clusterB | grep -q "2 streams" || fail "could not break the honest streams"
wait_up clusterA 2
grep -q "accepting connections again; [0-9]* were dropped for lack of descriptors" "$T/clusterB.log" ||
	fail "clusterB did not log that it accepts again"
wait_pair
echo "measured: out of descriptors ($fds of 64): $cpu CPU-s in 6 s, logged once; honest link back $(( $(date +%s) - t0 )) s after the attack; $(cat "$T/fill.out"); honest flow: $(cat "$T/r.out")"
