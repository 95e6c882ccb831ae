#!/usr/bin/env bash
# The listening gateway is killed with SIGKILL mid-transfer and restarted.
# The sender is told which messages were not acknowledged, resends them,
# and every message arrives intact; only reported-lost ones may repeat.
. "$(dirname "$0")/lib.sh"
two_clusters 4
start_pair 40000 "$RESTART_RECV_OPTS" "$RESTART_SEND_OPTS" -B 256k -T 120
sleep 0.5
kill -9 $PID_clusterB; wait $PID_clusterB 2>/dev/null
sleep 2
start_ldsd clusterB
wait_pair
lost=$(wc -l < "$T/lost")
[ "$lost" -gt 0 ] || fail "no message was reported lost although the receiving gateway was killed mid-transfer"
echo "measured: $lost messages reported lost and resent; $(cat "$T/r.out")"
