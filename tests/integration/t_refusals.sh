#!/usr/bin/env bash
# Gateways refuse, with a log line saying which: a cluster they do not
# know, and a peer speaking another protocol version (answered with a
# REFUSE frame).  The refused side logs the refusal too; nothing comes up.
. "$(dirname "$0")/lib.sh"
make_key "$T/key"
write_conf clusterB clusterA listen 2
write_conf clusterX clusterB connect 2
start_ldsd clusterB
start_ldsd clusterX
wait_log "$T/clusterB.log" 'cluster "clusterX" asking for "clusterB" is not a listen peer' ||
	fail "clusterB did not name the unknown cluster"
wait_log "$T/clusterX.log" "refused the connection: unknown cluster" || fail "clusterX did not log the refusal"
[ "$(json_field clusterX streams_up)" = 0 ] || fail "a stream came up for an unknown cluster"

# A frame header of protocol version 2, the one before sealed frames and
# the authenticated transcript (magic 0x4C44, version 2, HELLO, empty
# payload, any CRC): the gateway must answer REFUSE (type 5) in its own
# version and log.
exec 3<>"/dev/tcp/127.0.0.1/$PORT" || fail "cannot connect to clusterB"
printf '\x4c\x44\x02\x01\x00\x00\x00\x00\x00\x00\x00\x00' >&3
reply=$(timeout 3 head -c 4 <&3 | od -An -tx1 | tr -d ' \n')
exec 3<&-
[ "$reply" = "4c440305" ] || fail "expected a version-3 REFUSE header (4c440305), got \"$reply\""
grep -q "speaks protocol version 2, we speak 3" "$T/clusterB.log" || fail "clusterB did not log the version"
kill -0 "$PID_clusterB" || fail "clusterB died"
echo "measured: unknown cluster and protocol version 2 refused and logged on both sides"
