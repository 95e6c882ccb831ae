#!/usr/bin/env bash
# A message of 64 KiB or more from a peer, for a process on the
# shared-memory rings, is reassembled straight in that process's ring
# (clients.placed_bytes) and kept there until it took it.  While one is
# being reassembled nothing else can be written to that process, so one
# whose link stops in the middle of it - here the sending gateway is
# frozen (SIGSTOP) - is moved into a buffer of ldsd's within a second
# (placed_moved_bytes), and the rest of it is reassembled there.  Every
# message then arrives intact, in order and once.  And a process killed
# before it took the messages in its ring leaves them to the next one.
. "$(dirname "$0")/lib.sh"
two_clusters 4 'tcp_buffer = "64K";'
start_pair 3000 "" "" -b 256k -B 1M -T 120
moved=0
# Frozen at a random point, the gateway may stop between two messages:
# up to five tries to stop it inside one.
for _ in 1 2 3 4 5; do
	sleep 0.3
	kill -0 "$spid" || fail "the transfer ended before a message was caught half-way; make it longer"
	kill -STOP "$PID_clusterA"
	sleep 1.5
	kill -CONT "$PID_clusterA"
	moved=$(json_field clusterB placed_moved_bytes)
	[ "${moved:-0}" -gt 0 ] && break
done
wait_pair
grep -q "received 3000 messages intact, in order and once" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
placed=$(json_field clusterB placed_bytes)
[ "${placed:-0}" -gt 0 ] || fail "clusterB reassembled nothing in the receiver's ring"
[ "${moved:-0}" -gt 0 ] ||
	fail "no message half-way through was moved out of the ring while the sending gateway was frozen ($placed bytes placed)"
echo "measured: $(cat "$T/r.out")"
echo "measured: reassembled in the receiver's ring $placed bytes, $moved of them moved out while the sender's gateway was frozen"

# A process that dies before it took what was reassembled in its ring:
# frozen right after it opened its endpoint, so that 20 messages are
# placed in its ring (up to 4 MiB) and the rest wait in ldsd; killed, its
# ring's messages are moved out, and a new process on the name gets all
# 20 intact, in order and once.
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink2 -f clusterA/src2 -c 20 -b 256k -B 256k -T 60 \
	> "$T/r1.out" 2>&1 &
r1=$!; PIDS="$PIDS $r1"
sleep 0.5
kill -STOP $r1
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src2 -t clusterB/sink2 -c 20 -b 256k -B 256k -T 60 \
	> "$T/s2.out" 2>&1 &
s2=$!; PIDS="$PIDS $s2"
sleep 1.5
before=$(json_field clusterB placed_moved_bytes)
kill -KILL $r1; wait $r1 2> /dev/null
sleep 0.5
after=$(json_field clusterB placed_moved_bytes)
[ "$after" -gt "$before" ] || fail "nothing was moved out of the killed process's ring ($before -> $after bytes moved)"
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink2 -f clusterA/src2 -c 20 -b 256k -B 256k -T 60 \
	> "$T/r2.out" 2>&1 || fail "second receiver: $(cat "$T/r2.out")"
grep -q "received 20 messages intact, in order and once" "$T/r2.out" || fail "second receiver: $(cat "$T/r2.out")"
wait $s2 || fail "second sender: $(cat "$T/s2.out")"
grep -q "acked 20, lost 0" "$T/s2.out" || fail "second sender: $(cat "$T/s2.out")"
echo "measured: killed with messages in its ring: $((after - before)) bytes moved out; the next process $(cat "$T/r2.out")"
