#!/usr/bin/env bash
# Attack: an on-path relay lets a real handshake through and then sends a
# DATA frame of its own, with a correct CRC, carrying a message from
# clusterA/mallory (docs/security.md, "Sealed link"); an exec START would
# travel the same way.  Without sealing the gateway delivered it.  Sealed,
# a frame in clear after AUTH is refused and logged, the stream reset,
# nothing of it delivered, and the honest flow complete.
. "$(dirname "$0")/linkrelay_lib.sh"
relay_attack inject
grep -q "refused an unsealed (injected?) DATA frame" "$T/clusterB.log" ||
	fail "clusterB did not log the injected frame"
! grep -q "mallory" "$T/r.out" "$T/r.log" || fail "the receiver saw the injected message"
echo "measured: $(sed -n 's/^attack: //p' "$T/relay.out" | head -1): refused, $COUNT honest messages intact"
