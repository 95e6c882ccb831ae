#!/usr/bin/env bash
# On a sealed link, a payload of 64 KiB or more written into the
# shared-memory ring stays there until a stream seals it from there into
# its block (no copy in ldsd; sent.deferred_bytes).  If the link stops
# taking blocks - here the peer gateway is frozen (SIGSTOP) with every
# stream up, so their sockets (64 KiB) fill - the regions left in the ring are
# copied out within a second (deferred_copied_bytes) and the sender goes on
# writing into ldsd's send buffer instead of waiting on its ring (4 MiB)
# until the peer is back.  Every message then
# arrives intact, in order and once.
. "$(dirname "$0")/lib.sh"
two_clusters 4 'tcp_buffer = "64K";'
start_pair 20000 "" "" -b 64k -B 1M -T 120
sleep 0.5
kill -0 "$spid" || fail "the transfer ended before the peer was frozen; make it longer"
kill -STOP "$PID_clusterB"
sleep 0.5
u0=$(json_field clusterA unacked_bytes)
sleep 2
u1=$(json_field clusterA unacked_bytes)
kill -CONT "$PID_clusterB"
wait_pair
read -r deferred copied < <(ctl clusterA status --json |
	jq -r '.links[0].sent | "\(.deferred_bytes) \(.deferred_copied_bytes)"')
[ "$deferred" -gt 0 ] || fail "clusterA sealed nothing straight from the sender's ring"
[ "$copied" -gt 0 ] || fail "clusterA copied nothing out of the ring while the peer was frozen ($deferred sealed from it; unacked $u0 -> $u1)"
# Unacknowledged bytes grew by more than two rings while the peer was
# frozen: the sender was not held up by regions left in its ring.
[ $((u1 - u0)) -gt $((8 << 20)) ] ||
	fail "the sender stalled while the peer was frozen: unacknowledged bytes $u0 -> $u1"
echo "measured: $(cat "$T/r.out")"
echo "measured: sealed from the ring $deferred bytes, $copied of them copied out while the peer was frozen;" \
	"unacknowledged bytes $u0 -> $u1 meanwhile"
