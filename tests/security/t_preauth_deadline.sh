#!/usr/bin/env bash
# A connection that sends a valid HELLO (cluster names are public) and then
# nothing must be closed when the handshake deadline (handshake.timeout,
# 10 s by default) has passed, like one that sends nothing at all; once
# they are gone the gateway holds no more descriptors than before.
# Reproduces: 300 such connections still open after 120 s.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/attack_lib.sh"
two_clusters 2
before=$(nfds "$PID_clusterB")
flow_start
start_attack stall stall -n 20 -s 127.0.0.2 -t 14
start_attack hold hold -n 5 -s 127.0.0.3 -t 14
sleep 2
unauth=$(json_field clusterB unauth)
wait "$APID_stall" "$APID_hold"
flow_stop
for a in stall hold; do
	[ "$(attack_field $a opened)" -gt 0 ] || fail "$a: no connection opened: $(cat "$T/$a.out")"
	[ "$(attack_field $a open)" = 0 ] ||
		fail "$a: $(attack_field $a open) connections still open after 14 s (deadline 10 s): $(cat "$T/$a.out")"
done
after=$(nfds "$PID_clusterB")
[ "$after" -le "$before" ] || fail "clusterB holds $after descriptors, $before before the attack"
[ "$unauth" = 25 ] || fail "clusterB counted ${unauth:-no} connections before authentication, not 25"
grep -q "127.0.0.2:[0-9]* as cluster clusterA failed its handshake: not authenticated within 10.0 s" "$T/clusterB.log" ||
	fail "the stalled HELLO was not logged with its source and the deadline"
[ "$(json_field clusterA streams_up)" = 2 ] || fail "the honest link lost streams"
echo "measured: 20 stalled HELLOs and 5 silent connections closed by the 10 s deadline; descriptors $before before, $after after;" \
	"honest flow: $FLOW_ROUNDS rounds intact"
