#!/usr/bin/env bash
# Attack: a client of clusterA sends 50,000 empty messages to endpoints of
# clusterB that nobody ever opens.  clusterB looked each up by a linear
# search over endpoints it never forgot: 24 CPU-seconds, the honest flow
# on the link stalled 28.5 s and ran at 20 times its former CPU cost
# afterwards.  Now endpoints are in a hash table, what waits for a name
# nobody has open is bounded and expires (undelivered_ttl), and the names
# are forgotten.
. "$(dirname "$0")/../integration/lib.sh"
CLIENTS_EXTRA='undelivered_ttl = 3.0;'
two_clusters 2
N=50000
honest() {
	local t0 t1
	t0=$(date +%s.%N)
	start_pair 2000 "-T 60" "-T 60" -b 1k -B 1k
	wait_pair
	t1=$(date +%s.%N)
	awk "BEGIN {printf \"%.2f\", $t1 - $t0}"
}
cb=$(cpu_seconds "$PID_clusterB")
base=$(honest)
c0=$(cpu_seconds "$PID_clusterB")
base_cpu=$(awk "BEGIN {printf \"%.2f\", $c0 - $cb}")
"$TBIN/clientattack" flood -s "$T/clusterA.sock" -t clusterB -c $N -b 0 -T 60 > "$T/flood.out" 2>&1 &
fpid=$!; PIDS="$PIDS $fpid"
sleep 0.5
during=$(honest)
wait $fpid || fail "flood: $(cat "$T/flood.out")"
# Until clusterB has received what the flood sent: its count stops
# growing.  (Once the first of them expire, the sender is told they were
# lost, and liblds fences the rest of its messages to clusterB until the
# application takes those losses: not all 50,000 need to cross.)
last=-1
for _ in $(seq 1 60); do
	got=$(ctl clusterB status | grep -o 'received [0-9]* bytes, [0-9]* blocks ([0-9]* duplicates), [0-9]* messages' |
		awk '{print $(NF-1)}')
	[ "$got" = "$last" ] && break
	last=$got
	sleep 1
done
c1=$(cpu_seconds "$PID_clusterB")
flood_cpu=$(awk "BEGIN {printf \"%.2f\", $c1 - $c0}")
# After undelivered_ttl the flood's names are forgotten.
for _ in $(seq 1 100); do
	n=$(ctl clusterB status | grep -c "clusterB/never-")
	[ "$n" = 0 ] && break
	sleep 0.1
done
[ "$n" = 0 ] || fail "clusterB still holds $n endpoints nobody opened, 10 s after the flood"
c1a=$(cpu_seconds "$PID_clusterB")
after=$(honest)
c2=$(cpu_seconds "$PID_clusterB")
after_cpu=$(awk "BEGIN {printf \"%.2f\", $c2 - $c1a}")
echo "honest 2000 x 1 KiB: alone $base s, during the flood $during s, after $after s; clusterB CPU: honest run $base_cpu s, flood $flood_cpu s, honest run after $after_cpu s"
awk "BEGIN {exit !($flood_cpu < 10)}" || fail "clusterB spent $flood_cpu CPU-seconds on $N empty messages"
awk "BEGIN {exit !($during < 10 * $base + 10)}" || fail "the honest flow took $during s during the flood (alone: $base s)"
awk "BEGIN {exit !($after < 3 * $base + 3)}" || fail "the honest flow took $after s after the flood (alone: $base s)"
awk "BEGIN {exit !($after_cpu < 3 * $base_cpu + 0.5)}" ||
	fail "the honest flow cost clusterB $after_cpu CPU-seconds after the flood (before: $base_cpu s)"
echo "measured: $N empty messages to never-opened endpoints (clusterB received $got messages in all): clusterB CPU $flood_cpu s (an honest run: $base_cpu s before, $after_cpu s after); honest flow $base s alone, $during s during, $after s after; names forgotten after undelivered_ttl"
