#!/usr/bin/env bash
# The listening gateway is killed with SIGKILL mid-transfer and restarted.
# The sender is told which messages were not acknowledged, resends them,
# and every message arrives intact; only reported-lost ones may repeat.
. "$(dirname "$0")/lib.sh"
two_clusters 4
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c 40000 -B 256k -T 120 --reconnect \
	--allow-dup-file "$T/lost" > "$T/r.out" 2> "$T/r.log" &
rpid=$!
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c 40000 -B 256k -T 120 --resend-lost \
	--lost-file "$T/lost" > "$T/s.out" 2> "$T/s.log" &
spid=$!
sleep 0.5
kill -9 $PID_clusterB; wait $PID_clusterB 2>/dev/null
sleep 2
start_ldsd clusterB
wait $spid || fail "sender: $(cat "$T/s.out" "$T/s.log")"
wait $rpid || fail "receiver: $(cat "$T/r.out" "$T/r.log")"
lost=$(wc -l < "$T/lost")
[ "$lost" -gt 0 ] || fail "no message was reported lost although the receiving gateway was killed mid-transfer"
echo "measured: $lost messages reported lost and resent; $(cat "$T/r.out")"
