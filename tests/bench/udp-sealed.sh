#!/usr/bin/env bash
# udp-sealed.sh - one sealed udp link (encryption = "aead", the default)
# over wanemu, 200 Mbit/s and 200 ms round trip: N messages of random
# sizes up to 64 KiB (default 20000, 119 MB), checked once, in order and
# intact; prints the transfer's time.  What it measures: how much of the
# path one sealed message-mode stream keeps busy, which the sealed output
# queue bounds (ldsd/sealq.h).  Not part of make bench (docs/BENCHMARKS.md,
# "Sealing").  As root (network namespaces, /dev/net/tun).
. "$(dirname "$0")/../wan/lds_lib.sh"
N=${N:-20000}
netbed_up 2 "all:delay=100ms,rate=200mbit" || fail "test bed did not start"
GW_ADDR=$(netbed_addr s2)
NS_clusterA=$(netbed_ns s1) NS_clusterB=$(netbed_ns s2)
make_key "$T/key"
write_conf clusterB clusterA listen 1 'transport = "udp";'
write_conf clusterA clusterB connect 1 'transport = "udp";'
start_ldsd clusterB
start_ldsd clusterA
wait_up clusterA 1
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c "$N" -B 64k -T 300 > "$T/r.out" 2>&1 &
r=$!
PIDS="$PIDS $r"
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c "$N" -B 64k -T 300 > "$T/s.out" 2>&1 &
PIDS="$PIDS $!"
wait "$r" || fail "$(cat "$T/r.out")"
echo "measured: sealed udp, 200 Mbit/s, 200 ms: $(tail -1 "$T/r.out")"
