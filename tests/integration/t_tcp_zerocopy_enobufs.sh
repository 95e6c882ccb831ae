#!/usr/bin/env bash
# zerocopy = true where the kernel refuses zero-copy sends (ENOBUFS: the
# socket's option memory, net.core.optmem_max, cannot hold another
# completion notice; transports/tcp_zc.c falls back to a copying send,
# held in order behind the zero-copy ones still in flight).  Both gateways
# run in a network namespace of the test's own, whose optmem_max is
# lowered (the setting is per namespace): 2048 bytes lets some sends be
# zero-copy and refuses others, 0 refuses every one.  Each time 300
# checksummed messages must arrive intact, in order and once, and the link
# must count what it did.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || { echo "skipped: needs root (a network namespace)"; exit 77; }
NS=ldszc$$
ip netns add "$NS" 2> /dev/null || { echo "skipped: ip netns add failed (no network namespaces here)"; exit 77; }
trap 'cleanup; ip netns del "$NS"' EXIT
ip netns exec "$NS" ip link set lo up || fail "lo up in $NS"
NS_clusterA=$NS
NS_clusterB=$NS

zc() { ctl clusterA status --json | jq ".links[0].zerocopy.$1"; }

for optmem in 2048 0; do
	ip netns exec "$NS" sysctl -qw net.core.optmem_max=$optmem || fail "cannot set optmem_max in $NS"
	two_clusters 2 'zerocopy = true; zerocopy_min = "4K";'
	start_pair 300 "" "" -b 1 -B 300k -S "optmem$optmem" -T 60
	wait_pair
	grep -q "received 300 messages intact, in order and once" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
	grep -q "acked 300, lost 0" "$T/s.out" || fail "sender: $(cat "$T/s.out")"
	for _ in $(seq 1 100); do [ "$(zc sends)" = "$(zc completed)" ] && break; sleep 0.1; done
	counts="sends $(zc sends) completed $(zc completed) refused $(zc refused)"
	echo "measured: optmem_max $optmem: $counts"
	[ "$(zc refused)" -gt 0 ] || fail "optmem_max $optmem: the kernel refused no zero-copy send ($counts)"
	[ "$(zc sends)" = "$(zc completed)" ] || fail "optmem_max $optmem: zero-copy sends not all completed ($counts)"
	if [ $optmem = 0 ]; then
		[ "$(zc sends)" = 0 ] || fail "optmem_max 0 let zero-copy sends through ($counts)"
	else
		[ "$(zc sends)" -gt 0 ] || fail "optmem_max $optmem: no zero-copy send beside the refused ones ($counts)"
	fi
	kill -9 "$PID_clusterA" "$PID_clusterB"
	wait "$PID_clusterA" "$PID_clusterB" 2> /dev/null
	rm -f "$T"/*.sock "$T"/*.ctl
done
echo "ok"
