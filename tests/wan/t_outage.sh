#!/usr/bin/env bash
# A scheduled outage stops all traffic for exactly its length; an outage
# on command is a black hole: TCP stalls and resumes, it is not reset.
# retry: it holds an outage's edges to the millisecond against the wall clock (tests/integration/run-all.sh)
. "$(dirname "$0")/lib.sh"
command -v iperf3 > /dev/null || { echo "SKIP: iperf3 is missing (make deps)"; exit 77; }
NETBED_OPTS="--outage s1-s2:1s@1.5s"

netbed_up 2 's1-s2:rate=20mbit' || fail "bed did not start"
probe_server s2
# One datagram per ms from ~0.2 s to ~3.7 s after start: across the outage.
out=$(probe s1 s2 -c 3500 -i 1ms)
check "datagrams lost in a 1 s outage at 1 ms spacing" "$(echo "$out" | jq .lost)" 998 1002
check "loss runs" "$(echo "$out" | jq .loss_runs)" 1 1
check "longest silence (ms)" "$(echo "$out" | jq .longest_gap_ms)" 999 1005

sched_exec s2 iperf3 -s -1 -p "$PORT" > /dev/null 2>&1 &
srv=$!
sleep 0.3
sched_exec s1 iperf3 -c "$(netbed_addr s2)" -p "$PORT" -t 6 -J > "$NETBED_DIR/iperf.json" &
cli=$!
sleep 1.5
netbed_ctl s1-s2 down > /dev/null || fail "ctl down"
sleep 1.5
netbed_ctl s1-s2 up > /dev/null || fail "ctl up"
wait "$cli" || fail "iperf3 failed across a 1.5 s outage: $(jq -c .error "$NETBED_DIR/iperf.json")"
wait "$srv"
check "iperf3 intervals with no data (outage)" \
	"$(jq '[.intervals[] | select(.sum.bytes == 0)] | length' "$NETBED_DIR/iperf.json")" 1 4
check "iperf3 last interval (Mbit/s), after the outage" \
	"$(jq '.intervals[-1].sum.bits_per_second / 1e6' "$NETBED_DIR/iperf.json")" 1 21
check "s1>s2 dropped_outage" "$(stat 's1>s2' dropped_outage)" 1 1000000
