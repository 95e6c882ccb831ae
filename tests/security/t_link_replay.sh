#!/usr/bin/env bash
# Attack: an on-path relay sends a DATA frame of the connector's a second
# time after the handshake (docs/security.md, "Sealed link").  Without
# sealing it was taken without a word (dropped as a duplicate at best).
# Sealed, the copy fails its tag (its frame number is not the next one):
# refused and logged, the stream reset, the honest flow complete.
. "$(dirname "$0")/linkrelay_lib.sh"
relay_attack replay
grep -q "authentication failed (altered, replayed, reordered or injected) on a sealed DATA frame" \
	"$T/clusterB.log" || fail "clusterB did not log the replayed frame"
link_reset clusterB
echo "measured: $(sed -n 's/^attack: //p' "$T/relay.out" | head -1): refused, stream reset, $COUNT messages intact"
