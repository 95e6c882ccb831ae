#!/usr/bin/env bash
# 1 GiB of checksummed messages of random sizes (1 B .. 4 MiB) through two
# ldsd with 1, 4 and 16 streams, while streams are broken on both sides
# every 100 ms.  Every message must arrive once, in order and intact.
. "$(dirname "$0")/lib.sh"
COUNT=${COUNT:-3900}   # ~1.07 GB with log-uniform sizes up to 4 MiB
for n in 1 4 16; do
	two_clusters "$n"
	start_pair "$COUNT" "" "" -B 4M -S "$n" -T 240
	breaks=0
	while kill -0 $spid 2>/dev/null && [ $breaks -lt 600 ]; do
		sleep 0.1
		ctl clusterA fault break clusterB $((breaks % n)) > /dev/null 2>&1
		ctl clusterB fault break clusterA $(((breaks + 1) % n)) > /dev/null 2>&1
		breaks=$((breaks + 2))
	done
	wait_pair
	resent=$(json_field clusterA blocks_resent)
	echo "measured: $n streams: $(cat "$T/r.out"); $breaks stream breaks, $resent blocks resent"
	[ "$breaks" -gt 4 ] || fail "$n streams: transfer too short to break streams"
	kill $PID_clusterA $PID_clusterB; wait $PID_clusterA $PID_clusterB 2>/dev/null
	rm -f "$T"/*.sock "$T"/*.ctl
	PORT=$((PORT + 1))
done
