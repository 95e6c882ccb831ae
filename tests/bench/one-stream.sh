#!/usr/bin/env bash
# one-stream.sh - one TCP stream on a long fat emulated path: the link's
# tcp_buffer against the kernel's autotuning, iperf3 beside it (issue 4,
# docs/BENCHMARKS.md).  Not part of make bench: it explains a figure of
# the matrix rather than checking a target.
#
# Two netbed sites joined by wanemu (RTT ms, RATE Mbit/s, no loss).  Per
# round, one after the other, each 12 s with the first 4 s omitted, bbr:
# ldsbench --direct with one stream (autotuning, then --window WINDOW on
# both ends), iperf3 -P 1 (default 128 KiB writes, -l 64K like ldsd's
# blocks, -w WINDOW).  Prints the medians of RUNS rounds.
#   RUNS=N     rounds (default 3)
#   RTT=MS     round trip (default 300)
#   RATE=MBIT  link rate (default 200)
#   WINDOW=B   socket buffer (default: the smaller of net.core.wmem_max and
#              rmem_max, the most an unprivileged setsockopt gets)
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../wan/netbed.sh"
. "$(dirname "$0")/lib.sh"
RUNS=${RUNS:-3}
RTT=${RTT:-300}
RATE=${RATE:-200}
WINDOW=${WINDOW:-$(sort -n /proc/sys/net/core/wmem_max /proc/sys/net/core/rmem_max | head -1)}
bench_needs one-stream iperf3 jq
machine one-stream
netbed_up 2 "all:delay=$((RTT / 2))ms,rate=${RATE}mbit" || fail "bed did not start"
to=$(netbed_addr s2)
netbed_exec s2 "$BIN/ldsbench" recv --direct "$PORT" -i 0 -q > /dev/null 2>&1 &
netbed_exec s2 "$BIN/ldsbench" recv --direct "$((PORT + 1))" --window "$WINDOW" -i 0 -q > /dev/null 2>&1 &
netbed_exec s2 iperf3 -s -p "$((PORT + 2))" > /dev/null 2>&1 &
sleep 0.5

# lds NAME PORT ARGS...: one ldsbench run's Mb/s appended to $T/NAME.
lds() {
	local name=$1 port=$2
	shift 2
	netbed_exec s1 "$BIN/ldsbench" send --direct "$to:$port" -P 1 --congestion bbr -t 12 -O 4 -q --json-stream "$@" \
		> "$T/run.json" 2>&1 || fail "ldsbench $name: $(tail -3 "$T/run.json")"
	jq -r 'select(.event == "end") | .data.bits_per_second / 1e6' "$T/run.json" >> "$T/$name"
}
# ip3 NAME ARGS...: one iperf3 run's Mb/s (received) appended to $T/NAME.
ip3() {
	local name=$1
	shift
	netbed_exec s1 iperf3 -c "$to" -p "$((PORT + 2))" -C bbr -t 12 -O 4 -J "$@" > "$T/run.json" 2>&1 ||
		fail "iperf3 $name: $(jq -r .error "$T/run.json")"
	jq '.end.sum_received.bits_per_second / 1e6' "$T/run.json" >> "$T/$name"
}
for r in $(seq "$RUNS"); do
	lds lds "$PORT"
	lds lds_w "$((PORT + 1))" --window "$WINDOW"
	ip3 ip
	ip3 ip_l -l 64K
	ip3 ip_w -w "$WINDOW"
	echo "one-stream: round $r of $RUNS done"
done
netbed_down

cell() { printf '%.1f [%s]' "$(median < "$T/$1")" "$(awk '{printf "%s%.1f", (NR > 1 ? " " : ""), $1}' "$T/$1")"; }
echo
echo "One stream, bbr, ${RTT} ms, ${RATE} Mbit/s, 12 s runs (4 s omitted), Mb/s, median [runs]; window $WINDOW bytes:"
echo
echo "| sender | autotuned buffers | window $WINDOW |"
echo "|---|---|---|"
echo "| ldsbench --direct -P 1 (64 KiB blocks) | $(cell lds) | $(cell lds_w) |"
echo "| iperf3 -P 1 (128 KiB writes) | $(cell ip) | $(cell ip_w) |"
echo "| iperf3 -P 1 -l 64K | $(cell ip_l) | - |"
echo
echo "reproduce: RUNS=$RUNS RTT=$RTT RATE=$RATE WINDOW=$WINDOW tests/bench/one-stream.sh (as root)"
