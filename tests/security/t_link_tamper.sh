#!/usr/bin/env bash
# Attack: an on-path relay flips a byte in a DATA block after the handshake
# and recomputes the CRC-32C, as "pay 100 EUR to alice" was turned into
# "pay 999 EUR to mallo" (docs/security.md, "Sealed link").  Without a
# MAC the altered message was delivered and nothing was logged.  Sealed,
# the block fails its tag: the stream is reset and logged, the block is
# resent, and every message of the honest flow arrives intact.
. "$(dirname "$0")/linkrelay_lib.sh"
relay_attack tamper
grep -q "authentication failed (altered, replayed, reordered or injected) on a sealed DATA frame" \
	"$T/clusterB.log" || fail "clusterB did not log the altered frame"
link_reset clusterB
echo "measured: $(sed -n 's/^attack: //p' "$T/relay.out" | head -1): refused, stream reset, $COUNT messages intact"
