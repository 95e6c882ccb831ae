#!/usr/bin/env bash
# small-msgs.sh - 64-byte messages through two gateways on loopback
# (client -> ldsd -> ldsd -> client), issue 21's small-message figures:
#   rate:    `ldsbench send -l 64` for SECS seconds, messages per second
#            delivered and the CPU microseconds each cost both gateways;
#   latency: `ldsbench send --latency`, round trips per second and their
#            median and 99th percentile (one way is about half).
# Medians of RUNS runs (default 3), each run SECS seconds (default 5)
# after 1 s left out.  Not part of make bench: a before/after measure of
# the client path (docs/BENCHMARKS.md, "Small messages").
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib.sh"
RUNS=${RUNS:-3}
SECS=${SECS:-5}
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
machine small-msgs
two_clusters 4
B=$BIN/ldsbench
# one ARGS...: one ldsbench run through the gateways; its end as JSON.
one() {
	"$B" recv -s "$T/clusterB.sock" -1 -i 0 > "$T/recv.txt" 2>&1 &
	local rpid=$!
	timeout $((SECS + 60)) "$B" send -s "$T/clusterA.sock" -T clusterB/bench -t $((SECS + 1)) -O 1 -i 1 -q -J \
		"$@" > "$T/send.json" || fail "ldsbench send $*: $(cat "$T/send.json")"
	wait "$rpid" || fail "ldsbench recv: $(cat "$T/recv.txt")"
	jq -c '.end' "$T/send.json"
}
declare -a rate cpu p50 p99 rtps
for r in $(seq 1 "$RUNS"); do
	a0=$(cpu_seconds "$PID_clusterA"); b0=$(cpu_seconds "$PID_clusterB")
	end=$(one -l 64)
	a1=$(cpu_seconds "$PID_clusterA"); b1=$(cpu_seconds "$PID_clusterB")
	[ "$(echo "$end" | jq '.error == null and .receiver.errors == 0 and .receiver.messages == .messages_sent')" = true ] ||
		fail "rate run: $end"
	msgs=$(echo "$end" | jq '.messages_sent')
	rate+=("$(echo "$end" | jq '.bits_per_second / 512 | round')")
	cpu+=("$(awk -v d="$(awk "BEGIN {print $a1 - $a0 + $b1 - $b0}")" -v n="$msgs" 'BEGIN {printf "%.2f", d * 1e6 / n}')")
	end=$(one --latency)
	[ "$(echo "$end" | jq '.error == null and .receiver.errors == 0')" = true ] || fail "latency run: $end"
	p50+=("$(echo "$end" | jq '.latency.rtt_p50_us')")
	p99+=("$(echo "$end" | jq '.latency.rtt_p99_us')")
	rtps+=("$(echo "$end" | jq '.latency.round_trips_per_second')")
	echo "small-msgs: run $r: ${rate[-1]} messages/s (${cpu[-1]} CPU us each in the gateways); round trip median ${p50[-1]} us, p99 ${p99[-1]} us, ${rtps[-1]} per second"
done
med() { printf '%s\n' "$@" | median; }
cat <<EOT

| 64-byte messages, loopback, client -> ldsd -> ldsd -> client (median of $RUNS) | value |
|---|---|
| messages per second, one direction (\`ldsbench send -l 64\`) | $(med "${rate[@]}") |
| CPU microseconds per message, both gateways | $(med "${cpu[@]}") |
| round trips per second (\`ldsbench send --latency\`) | $(med "${rtps[@]}") |
| round trip, median / p99 (us) | $(med "${p50[@]}") / $(med "${p99[@]}") |

reproduce: RUNS=$RUNS SECS=$SECS tests/bench/small-msgs.sh
EOT
