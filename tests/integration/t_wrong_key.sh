#!/usr/bin/env bash
# A gateway with the wrong key is refused, both sides log why, no stream
# comes up, and a client's message waits (it is not lost or delivered).
. "$(dirname "$0")/lib.sh"
make_key "$T/key"; make_key "$T/other"
write_conf clusterB clusterA listen 2
KEYFILE=$T/other write_conf clusterA clusterB connect 2
start_ldsd clusterB; start_ldsd clusterA
sleep 2
grep -q "authentication failed" "$T/clusterB.log" || fail "listener did not log the failed authentication"
grep -q "failed authentication\|refused the connection" "$T/clusterA.log" || fail "connector did not log the refusal"
[ "$(json_field clusterA streams_up)" = 0 ] || fail "a stream came up with the wrong key"
n=$(grep -c "authentication failed" "$T/clusterB.log")
[ "$n" -le 3 ] || fail "refusal logged $n times in 2 s: log flood"
echo "measured: wrong key refused; listener logged it $n time(s)"
