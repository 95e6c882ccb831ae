#!/usr/bin/env bash
# The listening gateway stops with SIGTERM while data flows, stays away for
# RESTART_GAP seconds (30 by default), and comes back.  Every message the
# sender was told is lost is sent again; the receiver gets every message
# intact; only messages reported lost may appear twice.
. "$(dirname "$0")/lib.sh"
GAP=${RESTART_GAP:-30}
two_clusters 4
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c 40000 -B 256k -T 180 --reconnect \
	--allow-dup-file "$T/lost" > "$T/r.out" 2> "$T/r.log" &
rpid=$!
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c 40000 -B 256k -T 180 --resend-lost \
	--lost-file "$T/lost" > "$T/s.out" 2> "$T/s.log" &
spid=$!
sleep 0.5
kill -TERM $PID_clusterB; wait $PID_clusterB 2>/dev/null
t0=$(date +%s)
sleep "$GAP"
start_ldsd clusterB
wait $spid || fail "sender: $(cat "$T/s.out" "$T/s.log")"
wait $rpid || fail "receiver: $(cat "$T/r.out" "$T/r.log")"
grep -q "peer gateway restarted" "$T/clusterA.log" || fail "clusterA did not detect the restart"
echo "measured: $(cat "$T/s.out")"
echo "measured: $(cat "$T/r.out"); gap ${GAP}s, total $(( $(date +%s) - t0 ))s after the stop"
