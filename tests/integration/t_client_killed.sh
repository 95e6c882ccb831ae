#!/usr/bin/env bash
# A sending client killed in the middle of a large message: the daemon drops
# the partial message, closes the connection (also where it was waiting
# for the message's rest in the shared-memory ring), keeps serving, and a
# new client's stream arrives intact; the receiver of the first sender
# sees only whole, valid messages.
. "$(dirname "$0")/lib.sh"
two_clusters 4
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink1 -f clusterA/victim -c 100000 -b 1M -B 4M -T 60 \
	> "$T/r1.out" 2> "$T/r1.log" &
r1pid=$!; PIDS="$PIDS $r1pid"
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n victim -t clusterB/sink1 -c 100000 -b 1M -B 4M -T 60 \
	> /dev/null 2>&1 &
vpid=$!; PIDS="$PIDS $vpid"
sleep 1
kill -9 $vpid; wait $vpid 2>/dev/null
for _ in $(seq 1 50); do
	ctl clusterA status --json | grep -q '"name":"clusterA/victim","connected":false' && break
	sleep 0.1
done
ctl clusterA status --json | grep -q '"name":"clusterA/victim","connected":false' ||
	fail "clusterA still holds the killed sender's connection 5 s later: $(ctl clusterA status | grep -A1 victim)"
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink2 -f clusterA/src2 -c 500 -B 1M -S 9 -T 60 > "$T/r.out" 2>&1 &
rpid=$!
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src2 -t clusterB/sink2 -c 500 -B 1M -S 9 -T 60 > "$T/s.out" 2>&1 \
	|| fail "second sender: $(cat "$T/s.out")"
wait $rpid || fail "receiver: $(cat "$T/r.out")"
# The killed sender's receiver must still be waiting, having seen only
# valid messages (it stops at the first bad one).
kill -0 $r1pid || fail "receiver of the killed sender stopped: $(cat "$T/r1.log")"
kill -0 $PID_clusterA && kill -0 $PID_clusterB || fail "a daemon died"
echo "measured: $(cat "$T/r.out")"
