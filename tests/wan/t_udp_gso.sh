#!/usr/bin/env bash
# A link over transport = "udp" through a wanemu link with only delay (20
# ms round trip): the sender's UDP GSO sends reach wanemu whole through
# the TUN device's UDP segmentation offload and go on whole, and the
# receiving ldsd takes them as GRO batches.  Every message must arrive
# once, in order and intact, and the sending site's device must have
# carried fewer packets than a quarter of the MTU-sized ones the bytes
# would need (on kernels before 6.2, without USO, that check is skipped).
. "$(dirname "$0")/lds_lib.sh"
wan_clusters 1 'delay=10ms' 'transport = "udp";'
start_pair 2000 "" "" -b 64k -B 64k -T 60
wait_pair
grep -q "2000 messages intact, in order and once" "$T/r.out" || fail "udp with super-packets: $(cat "$T/r.out")"
read -r bytes pkts < <(netbed_exec s1 cat /sys/class/net/wan0/statistics/tx_bytes /sys/class/net/wan0/statistics/tx_packets |
	tr '\n' ' ')
echo "measured: udp through a delay-only link: $(cat "$T/r.out"); s1's wan0 sent $bytes bytes in $pkts packets"
if grep -q "no UDP segmentation offload" "$NETBED_DIR/wanemu.log"; then
	echo "skipped: the super-packet count: this kernel has no UDP segmentation offload on TUN (Linux 6.2 has it)"
elif [ "$pkts" -ge $((bytes / 1500 / 4)) ]; then
	fail "s1's wan0 sent $bytes bytes in $pkts packets: UDP GSO sends were cut before wanemu (USO not in use)"
fi
