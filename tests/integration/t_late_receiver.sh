#!/usr/bin/env bash
# Messages held for an endpoint that nobody has opened yet all reach the
# process that opens it later, although they are more than ldsd writes to
# a client in one turn (64 frames).
. "$(dirname "$0")/lib.sh"
two_clusters 2
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c 1000 -b 1 -B 2k -T 30 > "$T/s.out" 2>&1 &
spid=$!
held=0
for _ in $(seq 1 100); do
	held=$(ctl clusterB status --json | jq '[.clients.endpoints[] | select(.name == "clusterB/sink") | .queued] | add // 0')
	[ "$held" = 1000 ] && break
	sleep 0.1
done
[ "$held" = 1000 ] || fail "clusterB holds $held messages for clusterB/sink, not 1000"
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c 1000 -b 1 -B 2k -T 10 > "$T/r.out" 2>&1 ||
	fail "receiver: $(cat "$T/r.out")"
wait $spid || fail "sender: $(cat "$T/s.out")"
echo "measured: $(cat "$T/r.out")"
