#!/usr/bin/env bash
# Senders that exit while ldsd has no room for their messages: one sends
# into a link that is down (its destination's share full), one to a local
# endpoint whose process reads nothing (the cluster's local memory full;
# an endpoint no process has open would have its messages refused beyond
# its share instead, docs/security.md).  ldsd must sleep,
# not spin on their hung-up sockets (it ran epoll_wait ~27k times a second),
# must keep what they handed over, and once there is room (the link comes
# up, a reader appears) deliver every message intact, in order, and let the
# endpoints go.
. "$(dirname "$0")/lib.sh"
MEM='recv_memory = "16M";'          # a destination's share: 4 MiB
# 128 KiB messages; two more than fit wait in the sender's socket, which
# holds them whatever net.core.wmem_max is (at least ~400 KiB).
FAR=33                              # 31 fit the share
NEAR=513                            # 511 fill the cluster's local 64 MiB
make_key "$T/key"
write_conf clusterB clusterA listen 2 "$MEM"
write_conf clusterA clusterB connect 2 "$MEM"
start_ldsd clusterA                 # clusterB stays down for now
"$TBIN/clientattack" hold -s "$T/clusterA.sock" -n sink -T 60 > "$T/hold.out" 2>&1 &
hpid=$!; PIDS="$PIDS $hpid"
for _ in $(seq 1 50); do grep -q hold "$T/hold.out" && break; sleep 0.1; done

# -T 1: each sender hands over all its messages (lds_send returns once a
# message is in the socket), waits a second for acknowledgements, exits.
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n far -t clusterB/sink -c $FAR -b 128k -B 128k -T 1 \
	> "$T/far.out" 2>&1 &
fpid=$!; PIDS="$PIDS $fpid"
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n near -t clusterA/sink -c $NEAR -b 128k -B 128k -T 1 \
	> "$T/near.out" 2>&1 &
npid=$!; PIDS="$PIDS $npid"
for p in $fpid:far $npid:near; do
	for _ in $(seq 1 100); do kill -0 ${p%:*} 2>/dev/null || break; sleep 0.1; done
	kill -0 ${p%:*} 2>/dev/null && fail "sender ${p#*:} still blocks in lds_send after 10 s"
	grep -q "not all messages acknowledged" "$T/${p#*:}.out" ||
		fail "sender ${p#*:} did not hand over every message: $(cat "$T/${p#*:}.out")"
done
# The premise: ldsd waits for memory for both, and has not yet read all
# that they sent.
for ep in far:$FAR near:$NEAR; do
	line=$(ctl clusterA status | grep "clusterA/${ep%:*} .*waiting for memory") ||
		fail "clusterA/${ep%:*} is not waiting for memory"
	in=$(echo "$line" | sed 's/.* in \([0-9]*\) msgs.*/\1/')
	[ "$in" -lt "${ep#*:}" ] || fail "ldsd read every message of clusterA/${ep%:*} before it exited: $line"
done

c0=$(cpu_seconds $PID_clusterA)
sleep 2
c1=$(cpu_seconds $PID_clusterA)
spent=$(awk "BEGIN {printf \"%.2f\", $c1 - $c0}")
awk "BEGIN {exit !($spent < 0.2)}" || fail "ldsd used $spent s of CPU in 2 s with nothing to do (spinning)"
for ep in far near; do
	ctl clusterA status | grep "clusterA/$ep  *hung up, .*waiting for memory" > /dev/null ||
		fail "ldsctl does not show clusterA/$ep as hung up and waiting for memory"
done

start_ldsd clusterB
kill $hpid; wait $hpid 2>/dev/null
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/far -c $FAR -b 128k -B 128k -T 20 \
	> "$T/rfar.out" 2>&1 &
rfar=$!; PIDS="$PIDS $rfar"
"$TBIN/ldstest" recv -s "$T/clusterA.sock" -n sink -f clusterA/near -c $NEAR -b 128k -B 128k -T 20 \
	> "$T/rnear.out" 2>&1 || fail "local receiver: $(cat "$T/rnear.out")"
wait $rfar || fail "remote receiver: $(cat "$T/rfar.out")"
# Read to their end, the hung-up connections close and leave their names
# (which stay their user's a while, with nothing queued); the link holds
# nothing for them any more.
held() { echo "$1" | grep -E "clusterA/(far|near) " | grep -qv "no process, 0 queued"; }
for _ in $(seq 1 50); do
	st=$(ctl clusterA status)
	held "$st" || break
	sleep 0.1
done
held "$st" && fail "endpoints still held after their data went: $st"
echo "$st" | grep -q " 0 bytes unacked, $FAR messages delivered, 0 pending" ||
	fail "clusterA's link still holds messages: $st"
echo "measured: ldsd CPU with two hung-up waiting senders: $spent s in 2 s; then $FAR + $NEAR messages delivered intact"
