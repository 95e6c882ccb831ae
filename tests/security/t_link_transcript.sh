#!/usr/bin/env bash
# Attack: an on-path relay lowers max_msg in a HELLO and recomputes the
# CRC (docs/security.md, "Sealed link").  The MACs of protocol version 2
# covered the nonces and names only, so the altered limit was taken without
# a word.  Now both MACs cover the whole transcript: the connector finds
# that the listener's MAC does not verify, refuses the stream and logs it;
# the next stream's handshake is left alone and the honest flow completes.
. "$(dirname "$0")/linkrelay_lib.sh"
relay_attack hello
grep -q "failed authentication" "$T/clusterA.log" || fail "clusterA did not log the altered handshake"
grep -q "failed its handshake: it refused us: authentication failed" "$T/clusterB.log" ||
	fail "clusterB did not log clusterA's refusal"
echo "measured: $(sed -n 's/^attack: //p' "$T/relay.out" | head -1): handshake refused, $COUNT messages intact"
