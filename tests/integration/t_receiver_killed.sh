#!/usr/bin/env bash
# A slow receiver is killed (SIGKILL) with a backlog in its socket and in
# liblds's buffers; a new process opens the same endpoint.  A message counts
# as delivered only once a process took it (lds_recv returned it): the
# sender's gateway reports no more delivered than the first process took,
# the second process gets every other message intact, in order and once
# (it starts right after the first one's last), and the sender has every
# message acknowledged.  RECV_OPTS adds ldstest options to both receivers
# (t_socket_path.sh: --zc, messages held in place until released).
. "$(dirname "$0")/lib.sh"
COUNT=120
two_clusters 2
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c $COUNT -b 64k -B 256k -S 5 -T 60 \
	--delay-ms 40 --taken-file "$T/taken1" ${RECV_OPTS:-} > "$T/r1.out" 2> "$T/r1.log" &
r1=$!; PIDS="$PIDS $r1"
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c $COUNT -b 64k -B 256k -S 5 -T 90 \
	> "$T/s.out" 2> "$T/s.log" &
spid=$!; PIDS="$PIDS $spid"
sleep 1.5
kill -KILL $r1; wait $r1 2>/dev/null
took=$(tail -n 1 "$T/taken1" 2>/dev/null)
[ -n "$took" ] && [ "$took" -ge 1 ] || fail "the first receiver took nothing in 1.5 s"
[ "$took" -lt $COUNT ] || fail "the first receiver took all $COUNT messages before it was killed: no backlog"
# What the sender is told: the peer gateway's deliveries, once they
# settle (the first process's last TAKEN and its connection's end).
sleep 1
delivered=$(json_field clusterA messages_delivered)
[ -n "$delivered" ] || fail "no messages_delivered in clusterA's status"
[ "$delivered" -le "$took" ] ||
	fail "the sender's gateway counts $delivered messages delivered, but the killed process took only $took"
kill -0 $spid || fail "the sender ended before the second receiver started: $(cat "$T/s.out" "$T/s.log")"
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c $COUNT -b 64k -B 256k -S 5 -T 60 \
	--first $((took + 1)) ${RECV_OPTS:-} > "$T/r2.out" 2> "$T/r2.log" || fail "second receiver: $(cat "$T/r2.out" "$T/r2.log")"
wait $spid || fail "sender: $(cat "$T/s.out" "$T/s.log")"
grep -q "acked $COUNT, lost 0" "$T/s.out" || fail "sender: $(cat "$T/s.out")"
echo "measured: first process took $took of $COUNT (the sender's gateway counted $delivered delivered then);" \
	"second: $(cat "$T/r2.out")"
