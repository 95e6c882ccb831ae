#!/usr/bin/env bash
# A stream that goes silent without breaking (as behind a black hole) is
# declared broken after inactivity_timeout: the stalled side times it out
# (and its close reaches the other side as a reset), the blocks stuck in it
# go out again on the other streams, and the transfer completes intact.
. "$(dirname "$0")/lib.sh"
two_clusters 4 'inactivity_timeout = 2.0; keepalive = 0.5;'
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c 20000 -B 256k -T 60 > "$T/r.out" 2>&1 &
rpid=$!
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c 20000 -B 256k -T 60 > "$T/s.out" 2>&1 &
spid=$!
sleep 0.3
# The receiving side stops reading: blocks in flight on stream 2 are stuck
# until both sides give up on it and clusterA sends them again.
ctl clusterB fault stall clusterA 2 | grep -q "stalled 1 stream" || fail "could not stall stream 2"
wait $spid || fail "sender: $(cat "$T/s.out")"
wait $rpid || fail "receiver: $(tail -1 "$T/r.out")"
grep -q "stream 2 .*broken (no data for 2.0 s)" "$T/clusterB.log" || fail "clusterB did not time the stalled stream out"
grep -q "stream 2 .*broken" "$T/clusterA.log" || fail "clusterA did not notice the stream end"
resent=$(json_field clusterA blocks_resent)
[ "$resent" -gt 0 ] || fail "no block was resent, so the stall did not hold any data"
echo "measured: stalled stream timed out after 2.0 s of silence, $resent blocks resent; $(tail -1 "$T/r.out")"
