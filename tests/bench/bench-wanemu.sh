#!/usr/bin/env bash
# bench-wanemu.sh - wanemu must not be the bottleneck (issue 3): iperf3 TCP
# between two namespaces through a wanemu link with no delay and no limit,
# side by side with the same namespaces joined by a plain veth pair, for
# every congestion control this kernel offers of cubic and bbr, and once
# more with a tiny loss that makes wanemu segment in user space; medians of
# RUNS runs of SECS seconds.  Prints a Markdown table for docs/BENCHMARKS.md.
. "$(dirname "$0")/../wan/netbed.sh"
. "$(dirname "$0")/lib.sh"
set -u
QUICK=${QUICK:-0}
RUNS=${RUNS:-3}
SECS=${SECS:-$([ "$QUICK" = 1 ] && echo 3 || echo 5)}
PORT=$((20000 + ($$ % 12000)))
bench_needs bench-wanemu iperf3 jq

# gbps ADDR CC: Gbit/s of one iperf3 TCP stream from s1 to ADDR in s2.
gbps() {
	netbed_exec s2 iperf3 -s -1 -p "$PORT" > /dev/null 2>&1 &
	local srv=$!
	sleep 0.3
	netbed_exec s1 iperf3 -c "$1" -p "$PORT" -t "$SECS" -O 1 -C "$2" -J |
		jq '.end.sum_received.bits_per_second / 1e9 * 100 | round / 100'
	wait "$srv"
}

netbed_up 2 || exit 1
# The reference: a veth pair between the same namespaces, 10.78.0.0/24.
ip link add "nb$$v1" netns "$(netbed_ns s1)" type veth peer name "nb$$v2" netns "$(netbed_ns s2)" || exit 1
netbed_exec s1 ip addr add 10.78.0.1/24 dev "nb$$v1"
netbed_exec s2 ip addr add 10.78.0.2/24 dev "nb$$v2"
netbed_exec s1 ip link set "nb$$v1" up
netbed_exec s2 ip link set "nb$$v2" up

machine bench-wanemu
echo "bench-wanemu: congestion controls available: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"
rows="" VC=0
for cc in cubic bbr; do
	if ! grep -qw "$cc" /proc/sys/net/ipv4/tcp_available_congestion_control; then
		echo "bench-wanemu: $cc not available (modprobe tcp_$cc), skipped"
		continue
	fi
	we=() ve=()
	for r in $(seq 1 "$RUNS"); do
		we+=("$(gbps "$(netbed_addr s2)" "$cc")")
		ve+=("$(gbps 10.78.0.2 "$cc")")
		echo "bench-wanemu: $cc run $r: wanemu ${we[-1]} Gb/s, veth ${ve[-1]} Gb/s"
	done
	W=$(printf '%s\n' "${we[@]}" | median)
	V=$(printf '%s\n' "${ve[@]}" | median)
	[ "$cc" = cubic ] && VC=$V
	rows="$rows| iperf3 TCP ($cc), 1 stream, ${SECS} s, no delay, no limit (Gb/s) | veth: $V | $W | $(ratio "$W" "$V") | ≥ 1 Gb/s | $(awk "BEGIN {print ($W >= 1) ? \"yes\" : \"no\"}") |
"
done
# Per-packet impairments make wanemu split TSO super-packets in user space:
# the cost of that path, with a loss too small to slow TCP down.
netbed_ctl s1-s2 set loss=0.001% > /dev/null
seg=()
for r in $(seq 1 "$RUNS"); do seg+=("$(gbps "$(netbed_addr s2)" cubic)"); done
S=$(printf '%s\n' "${seg[@]}" | median)
echo "bench-wanemu: segmented (loss=0.001%), cubic: ${seg[*]} Gb/s"
rows="$rows| same, cubic, loss=0.001% (super-packets split per packet) (Gb/s) | veth: $VC | $S | $(ratio "$S" "$VC") | ≥ 1 Gb/s | $(awk "BEGIN {print ($S >= 1) ? \"yes\" : \"no\"}") |
"
cat <<EOT

| benchmark | reference | wanemu | ratio | target | met |
|---|---|---|---|---|---|
$rows
EOT
