#!/usr/bin/env bash
# A gateway with the wrong key is refused, both sides log why, no stream
# comes up, and a client's message waits (it is not lost or delivered).
. "$(dirname "$0")/lib.sh"
make_key "$T/key"; make_key "$T/other"
write_conf clusterB clusterA listen 2
KEYFILE=$T/other write_conf clusterA clusterB connect 2
start_ldsd clusterB; start_ldsd clusterA
t0=$(date +%s%N)
wait_log "$T/clusterB.log" "authentication failed" || fail "listener did not log the failed authentication"
wait_log "$T/clusterA.log" "failed authentication|refused the connection" || fail "connector did not log the refusal"
# Over at least 2 s, at most 3 refusals logged per 2 s: attempts go on
# (they back off), the log must not flood.  A loaded machine that took
# longer to log the first one only gets a longer window.
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -lt 2000 ] && sleep "$(awk -v ms="$ms" 'BEGIN { print (2000 - ms) / 1000 }')"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$(json_field clusterA streams_up)" = 0 ] || fail "a stream came up with the wrong key"
n=$(grep -c "authentication failed" "$T/clusterB.log")
[ "$n" -le $(( 3 * ((ms + 1999) / 2000) )) ] || fail "refusal logged $n times in $ms ms: log flood"
echo "measured: wrong key refused; listener logged it $n time(s) in $ms ms"
