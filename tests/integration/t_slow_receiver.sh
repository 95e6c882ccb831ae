#!/usr/bin/env bash
# Back-pressure is per destination: a producer flooding an endpoint that no
# process reads is held back (its lds_send blocks), its backlog in the
# receiving gateway stays within a quarter of recv_memory (plus one
# message), and another pair of processes on the same link is not slowed
# down to a halt.  When a reader appears, the backlog drains in order.
. "$(dirname "$0")/lib.sh"
two_clusters 4 'recv_memory = "32M"; send_memory = "32M";'
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n flood -t clusterB/nobody -c 100000 -b 1M -B 2M -S 3 -T 120 \
	> "$T/flood.out" 2>&1 &
fpid=$!; PIDS="$PIDS $fpid"
sleep 2
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c 2000 -B 256k -S 4 -T 60 > "$T/r.out" 2>&1 &
rpid=$!
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c 2000 -B 256k -S 4 -T 60 > "$T/s.out" 2>&1 \
	|| fail "the other pair's sender was stalled: $(cat "$T/s.out")"
wait $rpid || fail "the other pair's receiver: $(cat "$T/r.out")"
kill -0 $fpid || fail "the flooding sender stopped instead of waiting: $(cat "$T/flood.out")"
held=$(ctl clusterB status --json | grep -o '"name":"clusterB/nobody","connected":false,"queued":[0-9]*,"queued_bytes":[0-9]*' |
	sed 's/.*"queued_bytes"://')
[ -n "$held" ] || fail "no backlog for clusterB/nobody in ldsctl status"
limit=$(( 32 * 1024 * 1024 / 4 + 2 * 1024 * 1024 ))
[ "$held" -le "$limit" ] || fail "backlog for the unread endpoint is $held bytes, over $limit"
timeout 60 "$TBIN/ldstest" recv -s "$T/clusterB.sock" -n nobody -f clusterA/flood -c 50 -b 1M -B 2M -S 3 -T 50 \
	> "$T/late.out" 2>&1 || fail "the late reader: $(cat "$T/late.out")"
echo "measured: backlog for the unread endpoint held at $held bytes (limit $limit); other pair: $(cat "$T/r.out")"
