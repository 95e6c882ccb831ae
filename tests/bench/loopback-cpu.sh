#!/usr/bin/env bash
# loopback-cpu.sh - where the CPU goes on the loopback path of run-bench.sh:
# client -> ldsd -> ldsd -> client, 4 streams, 1 MiB messages, side by side
# with iperf3 -P 4.  For each of RUNS runs it prints goodput and the CPU
# seconds each process spent per GB moved (user + system, from /proc), a
# figure that a busy machine disturbs far less than throughput; then the
# medians and the two ratios to iperf3 that issue 21 sets targets for
# (make bench runs it sealed and with encryption = "none").  COUNT
# messages per run (default 2000), RUNS (default 3); STREAMS (default 4)
# and PEER (extra peer settings, e.g.
# 'congestion = "cubic"; block_size = 262144;') configure the link;
# OPTS adds ldstest options on both sides (e.g. --zc: the zero-copy calls);
# PERF_DIR=DIR records each daemon with perf during the transfers
# (DIR/ldsd-A.data, DIR/ldsd-B.data; read with perf report -i FILE, or
# tests/bench/perf-shares.sh FILE for the shares by kind of work), with
# PERF_OPTS as perf record's options (default -g; "--call-graph dwarf"
# names the callers of inlined code).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib.sh"
RUNS=${RUNS:-3}
COUNT=${COUNT:-2000}
STREAMS=${STREAMS:-4}
PEER=${PEER:-}

# per_gb SECONDS BYTES
per_gb() { awk "BEGIN {printf \"%.3f\", $1 / ($2 / 1e9)}"; }

iperf_run() {
	local t0 t1 s c out
	/usr/bin/time -f "%U %S" -o "$T/is.time" iperf3 -s -1 -p $((PORT + 500)) > /dev/null 2>&1 &
	s=$!
	sleep 0.3
	out=$(/usr/bin/time -f "%U %S" -o "$T/ic.time" iperf3 -c 127.0.0.1 -p $((PORT + 500)) -P 4 -t 3 -J 2>/dev/null)
	wait $s
	c=$(echo "$out" | jq '.end.sum_received.bytes')
	echo "$(echo "$out" | jq '.end.sum_received.bits_per_second / 8 / 1e6 | floor')" \
		"$(per_gb "$(awk '{s += $1 + $2} END {print s}' "$T/is.time" "$T/ic.time")" "$c")"
}

# Prints MB/s and CPU s/GB of sender, ldsd A, ldsd B, receiver, total.
lds_run() {
	local a0 b0 a1 b1 bytes secs
	a0=$(cpu_seconds "$PID_clusterA"); b0=$(cpu_seconds "$PID_clusterB")
	/usr/bin/time -f "%U %S" -o "$T/r.time" "$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src \
		-c "$COUNT" -b 1M -B 1M -T 120 --fast ${OPTS:-} > "$T/r.out" 2>/dev/null &
	local rpid=$! pa="" pb=""
	if [ -n "${PERF_DIR:-}" ]; then
		perf record ${PERF_OPTS:--g} -o "$PERF_DIR/ldsd-A.data" -p "$PID_clusterA" > /dev/null 2>&1 & pa=$!
		perf record ${PERF_OPTS:--g} -o "$PERF_DIR/ldsd-B.data" -p "$PID_clusterB" > /dev/null 2>&1 & pb=$!
	fi
	/usr/bin/time -f "%U %S" -o "$T/s.time" "$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink \
		-c "$COUNT" -b 1M -B 1M -T 120 --fast ${OPTS:-} > /dev/null 2>&1
	wait $rpid || fail "transfer failed: $(cat "$T/r.out")"
	[ -n "$pa" ] && { kill -INT $pa $pb; wait $pa $pb; }
	a1=$(cpu_seconds "$PID_clusterA"); b1=$(cpu_seconds "$PID_clusterB")
	bytes=$(awk '{for (i = 1; i <= NF; i++) if ($i == "bytes") print $(i-1)}' "$T/r.out")
	secs=$(awk '{for (i = 1; i <= NF; i++) if ($i == "s,") print $(i-1)}' "$T/r.out")
	awk -v b="$bytes" -v s="$secs" -v a="$(awk "BEGIN {print $a1 - $a0}")" -v bb="$(awk "BEGIN {print $b1 - $b0}")" \
		-v snd="$(awk '{print $1 + $2}' "$T/s.time")" -v rcv="$(awk '{print $1 + $2}' "$T/r.time")" \
		'BEGIN {g = b / 1e9; printf "%.0f %.3f %.3f %.3f %.3f %.3f\n", b / s / 1e6, snd / g, a / g, bb / g, rcv / g, (snd + a + bb + rcv) / g}'
}

if [ -n "${PERF_DIR:-}" ]; then
	command -v perf > /dev/null || { echo "loopback-cpu: PERF_DIR needs perf (apt-get install linux-perf)" >&2; exit 2; }
	mkdir -p "$PERF_DIR" || exit 2
fi
machine loopback-cpu
two_clusters "$STREAMS" "$PEER"
echo "loopback-cpu: $STREAMS streams${PEER:+, $PEER}"
declare -a ipr ipc ldr col
for r in $(seq 1 "$RUNS"); do
	read -r mb c < <(iperf_run)
	ipr+=("$mb"); ipc+=("$c")
	read -r -a v < <(lds_run)
	ldr+=("${v[0]}")
	for k in 1 2 3 4 5; do col[$k]="${col[$k]:-} ${v[$k]}"; done
	echo "loopback-cpu: run $r: iperf3 -P 4 $mb MB/s ($c CPU s/GB); LDS ${v[0]} MB/s, CPU s/GB:" \
		"sender ${v[1]}, ldsd A ${v[2]}, ldsd B ${v[3]}, receiver ${v[4]}, total ${v[5]}" \
		"(ratio $(ratio "${v[0]}" "$mb"))"
done
m() { printf '%s\n' "$@" | median; }
# shellcheck disable=SC2086
echo "loopback-cpu: medians: iperf3 $(m "${ipr[@]}") MB/s ($(m "${ipc[@]}") s/GB); LDS $(m "${ldr[@]}") MB/s;" \
	"s/GB sender $(m ${col[1]}), ldsd A $(m ${col[2]}), ldsd B $(m ${col[3]}), receiver $(m ${col[4]})," \
	"total $(m ${col[5]})"
# Issue 21's two targets, from the medians (run-bench.sh reads this line).
# shellcheck disable=SC2086
echo "loopback-cpu: against iperf3 -P 4: rate $(ratio "$(m "${ldr[@]}")" "$(m "${ipr[@]}")") (target >= 0.50)," \
	"CPU per GB $(ratio "$(m ${col[5]})" "$(m "${ipc[@]}")")x (target <= 2.00)"
