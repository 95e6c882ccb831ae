#!/usr/bin/env bash
# liblds reaches its gateway through shared-memory rings by default and
# through the socket with LDS_SHM=0; both carry checksummed messages
# intact, in order and once, with the copying calls and with the zero-copy
# ones (--zc).  The rings are small (64 KiB) and messages up to 200 KiB,
# so that frames wrap around the ring's end, fill it, and are larger than
# it (read and written in pieces, or copied by the zero-copy calls); and
# a slow receiver reading in place is killed (t_receiver_killed.sh --zc).
. "$(dirname "$0")/lib.sh"
CLIENTS_EXTRA='shm_ring = "64K";'
two_clusters 2
"$BIN/ldsd" --check -c "$T/clusterA.conf" | grep -q 'shm_ring = 65536;' ||
	fail "ldsd --check does not print shm_ring back: $("$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1 | grep -i shm)"

# path NAME: the "shm" field of endpoint clusterB/NAME in clusterB's status
# once it is connected (10 s).
path() {
	local st
	for _ in $(seq 1 100); do
		st=$(ctl clusterB status --json | grep -o "\"name\":\"clusterB/$1\",\"connected\":true[^}]*\"shm\":[a-z]*")
		[ -n "$st" ] && { echo "${st##*\"shm\":}"; return 0; }
		sleep 0.1
	done
	echo "never connected"
}

# run TAG SHM ZC: a pair of 400 messages over the given path.
run() {
	local tag=$1 shm=$2 zc=$3 got
	LDS_SHM=$shm "$TBIN/ldstest" recv -s "$T/clusterB.sock" -n "sink$tag" -f "clusterA/src$tag" -c 400 \
		-b 1 -B 200k -S "$tag" -T 60 $zc > "$T/r$tag.out" 2>&1 &
	local rp=$!
	PIDS="$PIDS $rp"
	got=$(path "sink$tag")
	want=$([ "$shm" = 1 ] && echo true || echo false)
	[ "$got" = "$want" ] || fail "LDS_SHM=$shm: the receiver's connection has shm $got, want $want"
	LDS_SHM=$shm "$TBIN/ldstest" send -s "$T/clusterA.sock" -n "src$tag" -t "clusterB/sink$tag" -c 400 \
		-b 1 -B 200k -S "$tag" -T 60 $zc > "$T/s$tag.out" 2>&1 || fail "sender $tag: $(cat "$T/s$tag.out")"
	wait $rp || fail "receiver $tag: $(cat "$T/r$tag.out")"
	grep -q "received 400 messages intact, in order and once" "$T/r$tag.out" || fail "receiver $tag: $(cat "$T/r$tag.out")"
	grep -q "acked 400, lost 0" "$T/s$tag.out" || fail "sender $tag: $(cat "$T/s$tag.out")"
	echo "measured: shm=$shm ${zc:-copying}: $(cat "$T/r$tag.out")"
}
run 1 1 ""
run 2 0 ""
run 3 1 --zc
run 4 0 --zc
# A local pair (no link) through the rings too.
LDS_SHM=1 "$TBIN/ldstest" recv -s "$T/clusterA.sock" -n lsink -f clusterA/lsrc -c 300 -B 100k -T 30 --zc \
	> "$T/lr.out" 2>&1 &
lr=$!; PIDS="$PIDS $lr"
LDS_SHM=1 "$TBIN/ldstest" send -s "$T/clusterA.sock" -n lsrc -t clusterA/lsink -c 300 -B 100k -T 30 --zc \
	> "$T/ls.out" 2>&1 || fail "local sender: $(cat "$T/ls.out")"
wait $lr || fail "local receiver: $(cat "$T/lr.out")"
kill -0 "$PID_clusterA" && kill -0 "$PID_clusterB" || fail "a daemon died"
# A slow receiver reading in place (--zc) killed with a backlog: what it
# held and never released goes to the next process on its name.
out=$(RECV_OPTS=--zc bash "$(dirname "$0")/t_receiver_killed.sh" 2>&1) ||
	fail "t_receiver_killed with --zc: $(echo "$out" | grep -v '^[0-9:.]* ldsd' | tail -5)"
echo "measured: --zc $(echo "$out" | grep measured | tail -1)"
