#!/usr/bin/env bash
# small-msgs.sh - 64-byte messages client -> ldsd -> ldsd -> client on
# loopback (2 streams), over the shared-memory rings and, side by side in
# each run, over the socket (LDS_SHM=0): messages per second and the CPU
# seconds per million messages of each process (user + system, as
# loopback-cpu.sh counts them), for RUNS runs (default 3) of COUNT
# messages (default 200000), then the medians.  OPTS adds ldstest options
# on both sides (e.g. --zc).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib.sh"
RUNS=${RUNS:-3}
COUNT=${COUNT:-200000}

# pair TAG SHM: prints msgs/s and the CPU s per million messages of sender,
# ldsd A, ldsd B, receiver, total.
pair() {
	local a0 b0 a1 b1 secs rp
	a0=$(cpu_seconds "$PID_clusterA"); b0=$(cpu_seconds "$PID_clusterB")
	LDS_SHM=$2 /usr/bin/time -f "%U %S" -o "$T/r.time" "$TBIN/ldstest" recv -s "$T/clusterB.sock" -n "sink$1" \
		-f "clusterA/src$1" -c "$COUNT" -b 64 -B 64 -T 120 --fast ${OPTS:-} > "$T/r.out" 2>&1 &
	rp=$!
	LDS_SHM=$2 /usr/bin/time -f "%U %S" -o "$T/s.time" "$TBIN/ldstest" send -s "$T/clusterA.sock" -n "src$1" \
		-t "clusterB/sink$1" -c "$COUNT" -b 64 -B 64 -T 120 --fast ${OPTS:-} > "$T/s.out" 2>&1 ||
		fail "sender: $(cat "$T/s.out")"
	wait $rp || fail "receiver: $(cat "$T/r.out")"
	a1=$(cpu_seconds "$PID_clusterA"); b1=$(cpu_seconds "$PID_clusterB")
	secs=$(awk '{for (i = 1; i <= NF; i++) if ($i == "s,") print $(i-1)}' "$T/r.out")
	awk -v c="$COUNT" -v s="$secs" -v snd="$(awk '{print $1 + $2}' "$T/s.time")" \
		-v rcv="$(awk '{print $1 + $2}' "$T/r.time")" -v a="$(awk "BEGIN {print $a1 - $a0}")" \
		-v b="$(awk "BEGIN {print $b1 - $b0}")" \
		'BEGIN {m = c / 1e6; printf "%.0f %.2f %.2f %.2f %.2f %.2f\n", c / s, snd / m, a / m, b / m, rcv / m, (snd + a + b + rcv) / m}'
}

machine small-msgs
two_clusters 2
echo "small-msgs: $COUNT messages of 64 bytes a run${OPTS:+, $OPTS}"
declare -A col
for r in $(seq 1 "$RUNS"); do
	for shm in 1 0; do
		read -r -a v < <(pair "$r-$shm" "$shm")
		for k in 0 1 2 3 4 5; do col[$shm,$k]="${col[$shm,$k]:-} ${v[$k]}"; done
		echo "small-msgs: run $r, $([ $shm = 1 ] && echo "shared memory" || echo "socket"): ${v[0]} msgs/s;" \
			"CPU s per million messages: sender ${v[1]}, ldsd A ${v[2]}, ldsd B ${v[3]}, receiver ${v[4]}, total ${v[5]}"
	done
done
m() { printf '%s\n' "$@" | median; }
for shm in 1 0; do
	# shellcheck disable=SC2086
	echo "small-msgs: medians, $([ $shm = 1 ] && echo "shared memory" || echo "socket"): $(m ${col[$shm,0]}) msgs/s;" \
		"CPU s per million messages: sender $(m ${col[$shm,1]}), ldsd A $(m ${col[$shm,2]}), ldsd B $(m ${col[$shm,3]})," \
		"receiver $(m ${col[$shm,4]}), total $(m ${col[$shm,5]})"
done
