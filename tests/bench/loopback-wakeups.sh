#!/usr/bin/env bash
# loopback-wakeups.sh - what the loopback path of loopback-cpu.sh keeps in
# flight and how often each gateway sleeps: the figures behind issue 21's
# "no copy in ldsd" and "fewer wake-ups" (docs/BENCHMARKS.md).  One
# transfer of COUNT 1 MiB messages (default 5000) over STREAMS streams
# (default 4; PEER adds peer settings); meanwhile clusterA's status is read
# every 20 ms: its bytes not yet acknowledged (queued or in flight) and
# those sent but not yet acknowledged, i.e. what the sending gateway must
# keep for a resend.  Then each daemon's voluntary (it slept) and
# involuntary (it was preempted) context switches per GB, from /proc, and
# the ACK frames ldsd B sent (one per pass of its loop that took blocks)
# and the blocks it held because they came ahead of their turn
# (received.blocks_held: read into a buffer, copied later), and how much of what ldsd A sent it sealed straight from the sender's
# ring (deferred_bytes, less those copied after all), and how much ldsd B
# reassembled straight in the receiver's ring (clients.placed_bytes, less
# those moved out).  With perf, also the system calls and context
# switches of each of the four processes (perf stat) per GB.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib.sh"
COUNT=${COUNT:-5000}
STREAMS=${STREAMS:-4}

command -v jq > /dev/null || { echo "loopback-wakeups: needs jq (make deps)" >&2; exit 2; }
# switches PID: "voluntary involuntary" so far.
switches() { awk '/^voluntary_ctxt_switches/ {v = $2} /^nonvoluntary_ctxt_switches/ {n = $2} END {print v, n}' "/proc/$1/status"; }
# pct P: the P-th percentile of the numbers on stdin, in MB.
pct() { sort -n | awk -v p="$1" '{a[NR] = $1} END {if (NR) printf "%.1f", a[int((NR - 1) * p / 100) + 1] / 1e6; else print "-"}'; }

machine loopback-wakeups
two_clusters "$STREAMS" "${PEER:-}"
read -r av0 an0 < <(switches "$PID_clusterA")
read -r bv0 bn0 < <(switches "$PID_clusterB")
# counted WHO CMD...: CMD under perf stat (system calls, context
# switches) into $T/WHO.stat where perf is there, else CMD.
counted() {
	local who=$1
	shift
	if command -v perf > /dev/null; then
		exec perf stat -x, -e raw_syscalls:sys_enter,context-switches -o "$T/$who.stat" "$@"
	fi
	exec "$@"
}
(counted receiver "$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c "$COUNT" -b 1M -B 1M \
	-T 120 --fast > "$T/r.out" 2>/dev/null) &
rpid=$!
if command -v perf > /dev/null; then
	perf stat -x, -e raw_syscalls:sys_enter,context-switches -o "$T/ldsdA.stat" -p "$PID_clusterA" &
	ppid=$!
fi
if command -v perf > /dev/null; then
	perf stat -x, -e raw_syscalls:sys_enter,context-switches -o "$T/ldsdB.stat" -p "$PID_clusterB" &
	ppidb=$!
fi
(counted sender "$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c "$COUNT" -b 1M -B 1M \
	-T 120 --fast > /dev/null 2>&1) &
spid=$!
# At most 120 s of samples: the transfer's own limit.
for _ in $(seq 1 6000); do
	kill -0 "$spid" 2> /dev/null || break
	ctl clusterA status --json 2> /dev/null |
		jq -r '.links[0].sent | "\(.unacked_bytes) \(.bytes - .bytes_acked)"' 2> /dev/null
	sleep 0.02
done > "$T/samples"
wait "$spid" || fail "sender failed"
[ -n "${ppid:-}" ] && { kill -INT "$ppid" "$ppidb"; wait "$ppid" "$ppidb"; } 2> /dev/null
wait "$rpid" || fail "transfer failed: $(cat "$T/r.out")"
read -r av1 an1 < <(switches "$PID_clusterA")
read -r bv1 bn1 < <(switches "$PID_clusterB")
read -r acks blocks held < <(ctl clusterB status --json | jq -r '.links[0].received | "\(.acks_sent) \(.blocks) \(.blocks_held // "n/a")"')
read -r sent deferred dcopied < <(ctl clusterA status --json |
	jq -r '.links[0].sent | "\(.bytes) \(.deferred_bytes) \(.deferred_copied_bytes)"')
read -r placed moved < <(ctl clusterB status --json | jq -r '.clients | "\(.placed_bytes) \(.placed_moved_bytes)"')
gb=$(awk '{for (i = 1; i <= NF; i++) if ($i == "bytes") print $(i-1) / 1e9}' "$T/r.out")
echo "loopback-wakeups: $(cat "$T/r.out")"
echo "loopback-wakeups: clusterA, $(wc -l < "$T/samples") samples: not acknowledged p50 $(cut -d' ' -f1 "$T/samples" | pct 50)" \
	"p90 $(cut -d' ' -f1 "$T/samples" | pct 90) MB; sent, not acknowledged p50 $(cut -d' ' -f2 "$T/samples" | pct 50)" \
	"p90 $(cut -d' ' -f2 "$T/samples" | pct 90) MB"
awk -v g="$gb" -v a="$((av1 - av0)) $((an1 - an0))" -v b="$((bv1 - bv0)) $((bn1 - bn0))" 'BEGIN {
	split(a, x, " "); split(b, y, " ")
	printf "loopback-wakeups: context switches per GB: ldsd A %.0f voluntary, %.0f involuntary; ldsd B %.0f voluntary, %.0f involuntary\n",
		x[1] / g, x[2] / g, y[1] / g, y[2] / g }'
echo "loopback-wakeups: ldsd B sent $acks ACK frames for $blocks blocks: $(awk -v a="$acks" -v b="$blocks" -v g="$gb" \
	'BEGIN {if (a > 0) printf "%.1f blocks each, %.0f per GB", b / a, a / g; else print "none"}'); $held of the blocks arrived ahead of their turn and were held (read into a buffer, copied later)"
echo "loopback-wakeups: ldsd A sealed $(awk -v s="$sent" -v d="$deferred" -v c="$dcopied" \
	'BEGIN {if (s > 0) printf "%.1f %% of the bytes it sent straight from the client ring (%.1f %% deferred, %.1f %% of them copied after all)", 100 * (d - c) / s, 100 * d / s, (d > 0 ? 100 * c / d : 0)}')"
echo "loopback-wakeups: ldsd B reassembled $(awk -v p="$placed" -v m="$moved" -v g="$gb" \
	'BEGIN {printf "%.1f %% of the bytes it delivered straight in the receiver'"'"'s ring (%.1f %% of them moved out after all)", 100 * (p - m) / (g * 1e9), (p > 0 ? 100 * m / p : 0)}')"
for f in sender ldsdA ldsdB receiver; do
	[ -s "$T/$f.stat" ] || continue
	awk -F, -v g="$gb" -v who="$f" '$3 == "raw_syscalls:sys_enter" {s = $1} $3 == "context-switches" {c = $1}
		END {printf "loopback-wakeups: %s: %.0f system calls, %.0f context switches per GB (perf stat)\n", who, s / g, c / g}' "$T/$f.stat"
done
