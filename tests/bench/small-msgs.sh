#!/usr/bin/env bash
# small-msgs.sh - 64-byte messages client -> ldsd -> ldsd -> client on
# loopback (2 streams): messages per second and the CPU seconds per
# million messages of each process (user + system, as loopback-cpu.sh
# counts them), for RUNS runs (default 3) of COUNT messages (default
# 200000), then the medians.  Over the shared-memory rings by default;
# LDS_SHM=0 measures the socket path; OPTS adds ldstest options on both
# sides (e.g. --zc).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib.sh"
RUNS=${RUNS:-3}
COUNT=${COUNT:-200000}

machine small-msgs
two_clusters 2
echo "small-msgs: $COUNT messages of 64 bytes a run, LDS_SHM=${LDS_SHM:-1}${OPTS:+, $OPTS}"
declare -a col
for r in $(seq 1 "$RUNS"); do
	a0=$(cpu_seconds "$PID_clusterA"); b0=$(cpu_seconds "$PID_clusterB")
	/usr/bin/time -f "%U %S" -o "$T/r.time" "$TBIN/ldstest" recv -s "$T/clusterB.sock" -n "sink$r" -f "clusterA/src$r" \
		-c "$COUNT" -b 64 -B 64 -T 120 --fast ${OPTS:-} > "$T/r.out" 2>&1 &
	rp=$!
	/usr/bin/time -f "%U %S" -o "$T/s.time" "$TBIN/ldstest" send -s "$T/clusterA.sock" -n "src$r" -t "clusterB/sink$r" \
		-c "$COUNT" -b 64 -B 64 -T 120 --fast ${OPTS:-} > "$T/s.out" 2>&1 || fail "sender: $(cat "$T/s.out")"
	wait $rp || fail "receiver: $(cat "$T/r.out")"
	a1=$(cpu_seconds "$PID_clusterA"); b1=$(cpu_seconds "$PID_clusterB")
	secs=$(awk '{for (i = 1; i <= NF; i++) if ($i == "s,") print $(i-1)}' "$T/r.out")
	read -r -a v < <(awk -v c="$COUNT" -v s="$secs" -v snd="$(awk '{print $1 + $2}' "$T/s.time")" \
		-v rcv="$(awk '{print $1 + $2}' "$T/r.time")" -v a="$(awk "BEGIN {print $a1 - $a0}")" \
		-v b="$(awk "BEGIN {print $b1 - $b0}")" \
		'BEGIN {m = c / 1e6; printf "%.0f %.2f %.2f %.2f %.2f %.2f\n", c / s, snd / m, a / m, b / m, rcv / m, (snd + a + b + rcv) / m}')
	for k in 0 1 2 3 4 5; do col[$k]="${col[$k]:-} ${v[$k]}"; done
	echo "small-msgs: run $r: ${v[0]} msgs/s; CPU s per million messages: sender ${v[1]}, ldsd A ${v[2]}," \
		"ldsd B ${v[3]}, receiver ${v[4]}, total ${v[5]}"
done
m() { printf '%s\n' "$@" | median; }
# shellcheck disable=SC2086
echo "small-msgs: medians: $(m ${col[0]}) msgs/s; CPU s per million messages: sender $(m ${col[1]})," \
	"ldsd A $(m ${col[2]}), ldsd B $(m ${col[3]}), receiver $(m ${col[4]}), total $(m ${col[5]})"
