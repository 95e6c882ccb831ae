#!/usr/bin/env bash
# Datagrams from anyone at a udp link's listening gateway: random bytes,
# and random bytes behind the transport's magic and version (each packet
# type), 3000 in all, while an honest flow runs over the link.  The
# gateway must drop them all (docs/security.md, "UDP transport"): it keeps
# running, its link stays up without a reconnect, the flow completes its
# rounds intact, and it holds no more descriptors than before.  Then (as
# root: a packet socket and a raw one) a genuine packet of the link, taken
# off the loopback, sent again 200 times from another port and 200 times
# from the conn's own address and port (a replay).  Each kind of drop is
# counted where an operator sees it: the link's "transport_dropped" in
# ldsctl status and the metrics.
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
if [ "$(id -u)" = 0 ]; then
	REPLAYS=200
	python3 - "$PORT" "$REPLAYS" <<'EOP' || fail "replay: no packet of the link to replay"
import socket, struct, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
sniff = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
sniff.bind(("lo", 0))
sniff.settimeout(1)
deadline = time.time() + 10
while True:
    if time.time() > deadline:
        sys.exit(1)
    try:
        ip = sniff.recv(65535)[14:]
    except socket.timeout:
        continue
    if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 17:
        continue
    ihl = (ip[0] & 15) * 4
    sport, dport = struct.unpack("!HH", ip[ihl:ihl + 4])
    pl = ip[ihl + 8:]
    # One DATA packet to the listener, not a GSO train of several.
    if dport == port and 32 < len(pl) <= 1232 and pl[:2] == b"LU" and pl[3] == 4:
        break
other = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
# Its IP header as it was; UDP checksum 0 (none): the captured one may be
# left to an offload.
dgram = ip[:ihl] + struct.pack("!HHHH", sport, dport, 8 + len(pl), 0) + pl
for _ in range(n):
    other.sendto(pl, ("127.0.0.1", port))
    raw.sendto(dgram, ("127.0.0.1", 0))
EOP
fi
sleep 1
flow_stop
kill -0 "$PID_clusterB" 2> /dev/null || fail "clusterB died"
st=$(ctl clusterA status --json)
[ "$(jq -r '.links[0] | "\(.streams_up) \(.reconnects)"' <<< "$st")" = "2 0" ] ||
	fail "the link went down or reconnected under the spray: $st"
after=$(nfds "$PID_clusterB")
[ "$after" -le "$before" ] || fail "clusterB holds $after descriptors, $before before the spray"
# Random bytes fail the CRC but for one in 2^32: all 3000 counted bad.
drops=$(ctl clusterB status --json | jq -c '.links[0].transport_dropped')
[ "$(jq '.bad >= 3000' <<< "$drops")" = true ] || fail "clusterB did not count the 3000 malformed datagrams: $drops"
if [ -n "${REPLAYS:-}" ]; then
	[ "$(jq --argjson n "$REPLAYS" '.unknown >= $n and .replayed >= $n' <<< "$drops")" = true ] ||
		fail "clusterB did not count $REPLAYS packets from an unknown source and $REPLAYS replayed: $drops"
fi
metrics=$(ctl clusterB metrics)
for k in bad unknown replayed; do
	v=$(jq ".$k" <<< "$drops")
	grep -qx "lds_link_transport_dropped_${k}_total{peer=\"clusterA\"} $v" <<< "$metrics" ||
		fail "metrics lack lds_link_transport_dropped_${k}_total $v: $(grep transport_dropped <<< "$metrics")"
done
echo "measured: 3000 datagrams sprayed${REPLAYS:+, a genuine packet sent again $REPLAYS times from another port and replayed $REPLAYS times}; honest flow completed $FLOW_ROUNDS rounds; link up, 0 reconnects; dropped: $drops"
