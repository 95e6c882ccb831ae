#!/usr/bin/env bash
# Datagrams from anyone at a udp link's listening gateway: random bytes,
# and random bytes behind the transport's magic and version (each packet
# type), 3000 in all, while an honest flow runs over the link.  The
# gateway must drop them all (docs/security.md, "UDP transport"): it keeps
# running, its link stays up without a reconnect, the flow completes its
# rounds intact, and it holds no more descriptors than before.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/attack_lib.sh"
two_clusters 2 'transport = "udp";'
before=$(nfds "$PID_clusterB")
flow_start
for i in $(seq 1 500); do
	for t in '' '\x01' '\x02' '\x03' '\x04' '\x05'; do
		{ [ -n "$t" ] && printf "LU\\x01$t"; head -c $((RANDOM % 1300 + 1)) /dev/urandom; } \
			> /dev/udp/127.0.0.1/"$PORT" 2> /dev/null
	done
done
sleep 1
flow_stop
kill -0 "$PID_clusterB" 2> /dev/null || fail "clusterB died"
st=$(ctl clusterA status --json)
[ "$(jq -r '.links[0] | "\(.streams_up) \(.reconnects)"' <<< "$st")" = "2 0" ] ||
	fail "the link went down or reconnected under the spray: $st"
after=$(nfds "$PID_clusterB")
[ "$after" -le "$before" ] || fail "clusterB holds $after descriptors, $before before the spray"
echo "measured: 3000 datagrams sprayed; honest flow completed $FLOW_ROUNDS rounds; link up, 0 reconnects"
