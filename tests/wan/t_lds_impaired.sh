#!/usr/bin/env bash
# An LDS link through a lossy wanemu link (1 % random loss each way, 20 ms
# round trip) and through a long one (300 ms round trip): every message
# arrives once, in order and intact.  Over such paths no block ahead of
# its turn waits in its socket (received.blocks_parked, linkturn.c: a
# parked stream's window would close there while the block expected is a
# loss recovery away).
. "$(dirname "$0")/lds_lib.sh"

# transfer SPEC: a fresh pair of gateways over a link with SPEC.
transfer() {
	wan_clusters 4 "$1"
	start_pair 10000 "" "" -b 1 -B 32k -T 120
	wait_pair
	grep -q "10000 messages intact, in order and once" "$T/r.out" || fail "receiver over $1: $(cat "$T/r.out")"
	echo "measured: over $1: $(cat "$T/r.out"); $(ctl clusterA status --json |
		jq -r '.links[0] | "\(.sent.blocks) blocks sent, \(.sent.blocks_resent) resent, srtt \(.srtt_ms) ms"')"
	read -r held parked < <(ctl clusterB status --json | jq -r '.links[0].received | "\(.blocks_held) \(.blocks_parked)"')
	echo "measured: over $1: $held blocks held ahead of their turn, $parked waited in their socket"
	[ "$parked" = 0 ] || fail "over $1, $parked blocks ahead of their turn waited in their socket (none should on a long path)"
	kill "$PID_clusterA" "$PID_clusterB"
	wait "$PID_clusterA" "$PID_clusterB" 2> /dev/null
	rm -f "$T"/*.sock "$T"/*.ctl
	netbed_down
	PORT=$((PORT + 1))
}
transfer 'delay=10ms,loss=1%'
transfer 'delay=150ms'
