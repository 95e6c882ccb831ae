#!/usr/bin/env bash
# Floods of connections that send a valid HELLO and stall, while an honest
# flow runs over the link: first 1100 from one address, then 1200 from 40
# addresses, opened again as fast as the gateway closes them.  The
# listening gateway (512 descriptors) must keep its descriptors and CPU,
# answer ldsctl, greet a new client, lose no message of the flow, and let
# the honest link reconnect after its streams are broken.
# Reproduces: 1100 such connections filled ldsd's descriptors; it spun on
# accept, ldsctl got no answer, and the honest link could not reconnect.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/attack_lib.sh"
make_key "$T/key"
write_conf clusterB clusterA listen 4
write_conf clusterA clusterB connect 4
start_ldsd_nofile clusterB 512
start_ldsd clusterA
wait_up clusterA 4
flow_start

# check_under_attack WHAT MAXFDS: what must hold while an attack runs.
check_under_attack() {
	local fds cpu t0 t1
	fds=$(nfds "$PID_clusterB")
	[ "$fds" -lt "$2" ] || fail "$1: clusterB holds $fds descriptors (limit 512)"
	cpu=$(cpu_in "$PID_clusterB" 3)
	lt "$cpu" 1.5 || fail "$1: clusterB used $cpu CPU-s in 3 s"
	timeout 5 "$BIN/ldsctl" -s "$T/clusterB.ctl" status > /dev/null || fail "$1: ldsctl status got no answer"
	# A new client is greeted (WELCOME) and gets a message across.
	"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n "probe$1" -f "clusterA/p$1" -c 1 -T 10 > "$T/probe-r.out" 2>&1 &
	local r=$!
	timeout 15 "$TBIN/ldstest" send -s "$T/clusterA.sock" -n "p$1" -t "clusterB/probe$1" -c 1 -T 10 \
		> "$T/probe-s.out" 2>&1 || fail "$1: a new client could not send: $(cat "$T/probe-s.out")"
	wait $r || fail "$1: a new client of clusterB got nothing: $(cat "$T/probe-r.out")"
	# The honest link reconnects while the attack goes on.
	t0=$(date +%s.%N)
	ctl clusterA fault break clusterB | grep -q "4 streams" || fail "$1: could not break the honest streams"
	wait_up clusterA 4
	t1=$(date +%s.%N)
	RECONNECT=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", b - a}')
	echo "measured: $1: clusterB $fds descriptors, $cpu CPU-s in 3 s, honest link back in $RECONNECT s"
}

# One address: held to max_per_source (64) at once, the rest dropped.
start_attack one stall -n 1100 -s 127.0.0.2 -t 60
sleep 3
check_under_attack one-address 200
stop_attack one

# 40 addresses, 30 connections each, opened again 1 s after each close:
# the table of 256 stays full, and random early drop and the honest
# address's record of authenticating keep a place for the link.
start_attack many stall -n 1200 -s 127.0.0.10 -S 40 -r -R 1000 -t 60
sleep 3
check_under_attack 40-addresses 400
stop_attack many

flow_stop
dropped=$(json_field clusterB dropped)
[ "${dropped:-0}" -gt 1000 ] || fail "clusterB dropped ${dropped:-no} connections at accept, expected over 1000"
echo "measured: honest flow: $FLOW_ROUNDS rounds of 300 checksummed messages intact during the floods;" \
	"$dropped connections dropped at accept; one: $(cat "$T/one.out"); many: $(cat "$T/many.out")"
