#!/usr/bin/env bash
# Round-trip times measured by UDP echoes equal the configured one-way
# delays: the least RTT within 1 ms above them (never below), the median
# within 2 ms (scheduling only adds: the tenth round of tests/stress.sh 10
# beside a CPU hog saw medians of 21.48 and 21.06 ms for 20), asymmetric
# delays add up, and jitter varies the delay without reordering packets.
# retry: it holds delays and their jitter to the millisecond against the wall clock (tests/integration/run-all.sh)
. "$(dirname "$0")/lib.sh"

netbed_up 3 'all:delay=10ms' 's1>s3:delay=30ms' 's3>s1:delay=5ms' 's2-s3:jitter=3ms' || fail "bed did not start"
probe_server s2
probe_server s3

for pair in "s1 s2 20" "s1 s3 35"; do
	set -- $pair
	out=$(probe "$1" "$2" -c 200 -i 5ms)
	check "$1-$2 median RTT (ms), configured $3" "$(echo "$out" | jq .rtt_ms.median)" "$(($3 - 1))" "$(($3 + 2))"
	check "$1-$2 min RTT (ms)" "$(echo "$out" | jq .rtt_ms.min)" "$3" "$(($3 + 1))"
	check "$1-$2 lost" "$(echo "$out" | jq .lost)" 0 0
done

out=$(probe s2 s3 -c 300 -i 5ms)
check "s2-s3 with 3 ms jitter: min RTT (ms)" "$(echo "$out" | jq .rtt_ms.min)" 14 21
# Single packets can be held up by a few ms more when the machine is busy
# (CI saw 28.15 ms once), and one by 30 ms when the VM itself stalls
# (51.6 ms seen), so the upper bounds hold the 99th percentile (the
# three slowest of 300 echoes are free); the median, which such outliers
# do not move, is held tight.
check "s2-s3 with 3 ms jitter: median RTT (ms)" "$(echo "$out" | jq .rtt_ms.median)" 18 22
check "s2-s3 with 3 ms jitter: 99th percentile RTT (ms)" "$(echo "$out" | jq .rtt_ms.p99)" 19 31
check "s2-s3 RTT spread to the 99th percentile (ms)" "$(echo "$out" | jq '.rtt_ms.p99 - .rtt_ms.min')" 2 16
echo "measured: s2-s3 with 3 ms jitter: max RTT (ms) = $(echo "$out" | jq .rtt_ms.max) (not bounded)"
check "s2-s3 reordered" "$(echo "$out" | jq .reordered)" 0 0
