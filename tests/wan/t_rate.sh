#!/usr/bin/env bash
# iperf3 TCP through a rate-limited link gets the configured rate within
# 3 %, in each direction with its own rate.  The rate counts IP bytes, so
# the expected goodput is rate * 1448 / 1500 (TCP payload with timestamps
# per 1500-byte packet).
# retry: it holds a rate to 3 % against the wall clock (tests/integration/run-all.sh)
. "$(dirname "$0")/lib.sh"
command -v iperf3 > /dev/null || { echo "SKIP: iperf3 is missing (make deps)"; exit 77; }

netbed_up 2 's1-s2:delay=10ms,rate=50mbit' 's2>s1:rate=20mbit' || fail "bed did not start"

# iperf_goodput ARGS...: Mbit/s received, s1 -> s2 (or back with -R).
iperf_goodput() {
	sched_exec s2 iperf3 -s -1 -p "$PORT" > /dev/null 2>&1 &
	local srv=$! out
	sleep 0.3
	out=$(sched_exec s1 iperf3 -c "$(netbed_addr s2)" -p "$PORT" -t 6 -O 1 -J "$@") || fail "iperf3 $*: $out"
	wait "$srv"
	echo "$out" | jq '.end.sum_received.bits_per_second / 1e6'
}

for dir in "50 " "20 -R"; do
	set -- $dir
	want=$(awk -v r="$1" 'BEGIN { print r * 1448 / 1500 }')
	got=$(iperf_goodput ${2:-})
	check "goodput at rate=${1}mbit ${2:-} (Mbit/s), expected $want" "$got" \
		"$(awk -v w="$want" 'BEGIN { print w * 0.97 }')" "$(awk -v w="$want" 'BEGIN { print w * 1.03 }')"
done
# Default queue: one BDP (50 Mbit/s * 20 ms = 125000 bytes).
check "s1>s2 queue peak (bytes)" "$(stat 's1>s2' queue_peak_bytes)" 1 125000
