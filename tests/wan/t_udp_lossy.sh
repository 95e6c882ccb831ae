#!/usr/bin/env bash
# A link over transport = "udp" through wanemu (issue 20): 100 Mbit/s, a
# 100 ms round trip and 5 % random loss each way, a 300 ms path, then
# bursty loss with reordering and duplicates.  Every message arrives once,
# in order and intact.  Outages: t_udp_outage.sh.
# As a benchmark (UDP_LOSSY_BENCH=1, what make bench runs with 6000
# messages): the lossy transfer must keep at least a third of the link
# rate (a loss-halving controller gets well under a tenth here: about
# 1.2 MSS / (RTT sqrt(loss)) per flow), and the same transfer over the
# default TCP link runs after it for comparison.  The lossy transfers run
# without sealing (encryption = "none") so that they measure the
# transports, not how much the core lets one stream hold in flight while
# it seals.
. "$(dirname "$0")/lds_lib.sh"
UDP='transport = "udp";'
BENCH=${UDP_LOSSY_BENCH:-0}
COUNT=${UDP_LOSSY_COUNT:-$([ "$BENCH" = 1 ] && echo 6000 || echo 600)}

# transfer LABEL STREAMS EXTRA: COUNT messages of 64 KiB over a fresh pair.
transfer() {
	wan_clusters "$2" 'delay=50ms,rate=100mbit,loss=5%' "$3"
	start_pair "$COUNT" "" "" -B 64k -T 300
	wait_pair
	grep -q "$COUNT messages intact, in order and once" "$T/r.out" || fail "$1: receiver: $(cat "$T/r.out")"
	echo "measured: $1: $(cat "$T/r.out")"
	# The sender's transport conns: what they put on the wire, and what
	# they sent again under the loss.
	conns=$(ctl clusterA status --json | jq -c '.links[0].transport_conns')
	bytes=$(awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "bytes") print $i}' "$T/r.out")
	[ "$(jq --argjson n "$bytes" '.retransmits > 0 and .bytes_sent > $n' <<< "$conns")" = true ] ||
		fail "$1: clusterA's transport_conns show no retransmits under 5 % loss, or fewer bytes than the $bytes delivered: $conns"
	echo "measured: $1: clusterA's transport conns: $conns"
	RATE=$(awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "bytes") b = $i; else if ($(i + 1) == "s,") t = $i}
		END {printf "%.2f", b / t / 1e6}' "$T/r.out")
	kill "$PID_clusterA" "$PID_clusterB"
	wait "$PID_clusterA" "$PID_clusterB" 2> /dev/null
	rm -f "$T"/*.sock "$T"/*.ctl
	netbed_down
	PORT=$((PORT + 1))
}
transfer "udp, 5 % loss, 100 ms" 1 "$UDP encryption = \"none\";"
if [ "$BENCH" = 1 ]; then
	awk -v r="$RATE" 'BEGIN {exit !(r >= 4.2)}' || fail "udp kept $RATE MB/s of the link's 12.5 under 5 % loss"
	transfer "tcp (4 streams, $(grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control && echo bbr ||
		echo the kernel default)), 5 % loss, 100 ms" 4 'encryption = "none";'
fi

# A 300 ms path: a sealed link's queue must take data although its pings
# and acks are always in flight there (it did not: nothing was sent).
wan_clusters 1 'delay=150ms,rate=100mbit' "$UDP"
start_pair 300 "" "" -b 64k -B 64k -T 60
wait_pair
grep -q "300 messages intact, in order and once" "$T/r.out" || fail "300 ms path: $(cat "$T/r.out")"
echo "measured: udp, 300 ms, sealed: $(cat "$T/r.out")"
kill "$PID_clusterA" "$PID_clusterB"
wait "$PID_clusterA" "$PID_clusterB" 2> /dev/null
rm -f "$T"/*.sock "$T"/*.ctl
netbed_down
PORT=$((PORT + 1))

# Bursty loss (Gilbert-Elliott: 1 % on average in bursts of 5 packets),
# reordering and duplication at once, sealed.
wan_clusters 1 'delay=50ms,rate=100mbit,ge_p=0.2525%,ge_r=20%,ge_bad=100%,reorder=2%,reorder_delay=5ms,dup=1%' "$UDP"
start_pair 600 "" "" -b 1 -B 64k -T 120
wait_pair
grep -q "600 messages intact, in order and once" "$T/r.out" || fail "bursty loss, reordering, duplicates: $(cat "$T/r.out")"
echo "measured: udp, bursty loss, reordering and duplicates, sealed: $(cat "$T/r.out")"
