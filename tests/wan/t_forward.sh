#!/usr/bin/env bash
# TCP streams arrive intact through a clean link (super-packets forwarded
# whole) and an impaired one (segmented, lost, duplicated, reordered); the
# MTU drops larger packets; `wanemu ctl set` changes a link while it runs.
. "$(dirname "$0")/lib.sh"

netbed_up 3 's1-s3:delay=5ms,rate=200mbit,loss=1%,dup=1%,reorder=1%,reorder_delay=2ms' 's1>s2:mtu=1200' ||
	fail "bed did not start"

probe_server s2
# Before the route below: the kernel would then fragment these.
check "datagrams of 1300 bytes over mtu=1200 received" "$(probe s1 s2 -c 20 -i 1ms -s 1272 -w 200ms | jq .received)" 0 0
check "s1>s2 dropped_mtu" "$(stat 's1>s2' dropped_mtu)" 20 20
check "datagrams of 1000 bytes received" "$(probe s1 s2 -c 20 -i 1ms -s 972 | jq .received)" 20 20

for to in s2 s3; do
	netbed_exec "$to" "$WANEMU" probe --tcp-server -p "$PORT" -t 30s > "$NETBED_DIR/tcp.json" &
	srv=$!
	sleep 0.2
	# s2: the sender's packets must fit the 1200-byte MTU; it learns that
	# only from the route (wanemu sends no ICMP).
	[ "$to" = s2 ] && netbed_exec s1 ip route replace "$(netbed_addr s2)" dev wan0 mtu 1200
	netbed_exec s1 "$WANEMU" probe --tcp 20m -p "$PORT" "$(netbed_addr "$to")" > /dev/null || fail "TCP to $to"
	wait "$srv" || fail "TCP stream to $to corrupted: $(cat "$NETBED_DIR/tcp.json")"
	check "bytes intact s1 -> $to" "$(jq .bytes "$NETBED_DIR/tcp.json")" 20971520 20971520
done
check "s1>s3 packets lost (segments of TSO super-packets)" "$(stat 's1>s3' dropped_loss)" 1 100000

netbed_ctl 's1>s2' set loss=100% > /dev/null || fail "ctl set loss=100%"
check "received at loss=100%" "$(probe s1 s2 -c 50 -i 1ms -w 200ms | jq .received)" 0 0
netbed_ctl s1-s2 set loss=0,delay=20ms > /dev/null || fail "ctl set loss=0"
check "received after loss=0" "$(probe s1 s2 -c 50 -i 1ms | jq .received)" 50 50
# The least of 20 round trips: a busy machine delays echoes, never
# speeds them up, so the set delay shows in the minimum (t_rtt holds the
# emulator's delays to the millisecond).
check "least RTT after set delay=20ms (ms)" "$(probe s1 s2 -c 20 -i 5ms | jq .rtt_ms.min)" 40 45
err=$(netbed_ctl s1-s2 set bogus=1 2>&1) && fail "ctl set bogus=1 was accepted"
echo "$err" | grep -q "unknown key 'bogus'" || fail "ctl set bogus=1 said: $err"
