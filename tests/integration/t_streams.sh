#!/usr/bin/env bash
# 1 GiB of checksummed messages of random sizes (1 B .. 4 MiB) through two
# ldsd with 1, 4 and 16 streams, while streams are broken on both sides
# every 100 ms.  Every message must arrive once, in order and intact.
. "$(dirname "$0")/lib.sh"
COUNT=${COUNT:-3900}   # ~1.07 GB with log-uniform sizes up to 4 MiB
for n in 1 4 16; do
	two_clusters "$n"
	"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c "$COUNT" -B 4M -S "$n" -T 240 \
		> "$T/recv.out" 2> "$T/recv.log" &
	rpid=$!
	"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c "$COUNT" -B 4M -S "$n" -T 240 \
		> "$T/send.out" 2> "$T/send.log" &
	spid=$!
	breaks=0
	while kill -0 $spid 2>/dev/null && [ $breaks -lt 600 ]; do
		sleep 0.1
		ctl clusterA fault break clusterB $((breaks % n)) > /dev/null 2>&1
		ctl clusterB fault break clusterA $(((breaks + 1) % n)) > /dev/null 2>&1
		breaks=$((breaks + 2))
	done
	wait $spid || fail "$n streams: sender failed: $(cat "$T/send.out" "$T/send.log")"
	wait $rpid || fail "$n streams: receiver failed: $(cat "$T/recv.out" "$T/recv.log")"
	resent=$(json_field clusterA blocks_resent)
	echo "measured: $n streams: $(cat "$T/recv.out"); $breaks stream breaks, $resent blocks resent"
	[ "$breaks" -gt 4 ] || fail "$n streams: transfer too short to break streams"
	kill $PID_clusterA $PID_clusterB; wait $PID_clusterA $PID_clusterB 2>/dev/null
	rm -f "$T"/*.sock "$T"/*.ctl
	PORT=$((PORT + 1))
done
