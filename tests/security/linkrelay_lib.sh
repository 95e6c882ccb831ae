# linkrelay_lib.sh - an attack by build/tests/linkrelay (linkrelay.c) on the
# link between clusterA (connect, through the relay) and clusterB (listen),
# while an honest checksummed flow crosses it (sourced, not run).
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"

COUNT=${COUNT:-300}

# relay_attack MODE: runs the flow through a relay attacking in MODE and
# fails unless the relay attacked, every honest message arrived intact, in
# order and once, and no other message did.  The caller then checks what
# the gateways logged.
relay_attack() {
	local rport=$((PORT + 1)) msgs
	make_key "$T/key"
	write_conf clusterB clusterA listen 2
	PORT=$rport write_conf clusterA clusterB connect 2
	"$TBIN/linkrelay" -l "$rport" -t "$PORT" -m "$1" -T 100 > "$T/relay.out" 2> "$T/relay.log" &
	PIDS="$PIDS $!"
	start_ldsd clusterB
	start_ldsd clusterA
	# The flow is under way while the streams come up, so that even an
	# attack on the handshake's last frame meets it.
	start_pair "$COUNT" "-T 60" "" -b 1k -B 128k
	# The receiver first: it sees an altered or forged message at once,
	# while the sender would wait out its timeout for acknowledgements.
	wait "$rpid" || fail "receiver: $(cat "$T/r.out" "$T/r.log")"
	wait "$spid" || fail "sender: $(cat "$T/s.out" "$T/s.log")"
	grep -q '^attack: ' "$T/relay.out" || fail "the relay found nothing to attack: the test proves nothing"
	msgs=$(ctl clusterB status --json | grep -o '"received":{[^}]*' | grep -o '"messages":[0-9]*' | cut -d: -f2)
	[ "$msgs" = "$COUNT" ] || fail "clusterB received $msgs messages from the link, want exactly $COUNT"
}

# link_reset NAME: the attack cost NAME a stream (its blocks resent), which
# its failure log shows.
link_reset() {
	local n
	n=$(json_field "$1" failures_total)
	[ "${n:-0}" -ge 1 ] || fail "$1: no stream was reset (failures_total ${n:-none})"
}
