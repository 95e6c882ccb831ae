#!/usr/bin/env bash
# Attack: a client of clusterA sends three 60 MiB messages to three
# endpoints of clusterB that nobody opens.  They filled clusterB's
# recv_memory (128 MiB) and froze every other flow on the link.  Now
# messages for names nobody has open may hold at most undelivered_share of
# recv_memory (one name half of that); the rest are dropped at once, the
# others after undelivered_ttl, and the sender is told LOST each time.
. "$(dirname "$0")/../integration/lib.sh"
CLIENTS_EXTRA='undelivered_ttl = 4.0;'
two_clusters 2 'recv_memory = "128M"; send_memory = "256M";'
"$TBIN/clientattack" lost -s "$T/clusterA.sock" -n atk -t clusterB/never- -c 3 -b 60M -T 30 > "$T/atk.out" 2>&1 &
apid=$!; PIDS="$PIDS $apid"
# The honest flow starts once the attack's bytes are on their way.
for _ in $(seq 1 100); do
	[ "$(json_field clusterA bytes_sent)" -gt $((100 << 20)) ] 2>/dev/null && break
	sleep 0.1
done
t0=$(date +%s.%N)
start_pair 500 "-T 20" "-T 20" -b 1k -B 64k
wait_pair
t1=$(date +%s.%N)
took=$(awk "BEGIN {printf \"%.2f\", $t1 - $t0}")
wait $apid || fail "clientattack: $(cat "$T/atk.out")"
grep -q "lost: 0 acked, 3 lost, 0 refused; last reason: not delivered" "$T/atk.out" ||
	fail "the attacker was not told its messages were lost: $(cat "$T/atk.out")"
awk "BEGIN {exit !($took < 15)}" || fail "the honest flow took $took s beside the attack"
st=$(ctl clusterB status)
echo "$st" | grep -q "clusterB/never-" && fail "clusterB still holds the attack's names: $st"
echo "$st" | grep -q "clients: .* 3 messages not delivered" || fail "clusterB does not count 3 dropped messages: $st"
echo "measured: 3 x 60 MiB to never-opened endpoints: honest 500 messages in $took s beside them; $(cat "$T/atk.out")"

# The same inside clusterA: four 16 MiB messages to local names nobody
# opens filled the 64 MiB for local messages, and every other local sender
# waited.  Now one is held, the others refused at once (ENOBUFS), the held
# one after the ttl (ETIMEDOUT), and a local pair keeps going.
"$TBIN/clientattack" lost -s "$T/clusterA.sock" -n latk -t clusterA/never- -c 4 -b 16M -T 20 > "$T/latk.out" 2>&1 &
lpid=$!; PIDS="$PIDS $lpid"
sleep 1
"$TBIN/ldstest" recv -s "$T/clusterA.sock" -n lsink -f clusterA/lsrc -c 500 -B 64k -T 15 > "$T/lr.out" 2>&1 &
lrpid=$!; PIDS="$PIDS $lrpid"
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n lsrc -t clusterA/lsink -c 500 -B 64k -T 15 > "$T/ls.out" 2>&1 ||
	fail "local sender beside the attack: $(cat "$T/ls.out")"
wait $lrpid || fail "local receiver beside the attack: $(cat "$T/lr.out")"
wait $lpid || fail "local attacker: $(cat "$T/latk.out")"
grep -q "lost: 0 acked, 0 lost, 4 refused; last reason: not delivered" "$T/latk.out" ||
	fail "the local attacker was not told: $(cat "$T/latk.out")"
echo "measured: inside the cluster, 4 x 16 MiB to never-opened names: a local pair's 500 messages went through; $(cat "$T/latk.out")"
