#!/usr/bin/env bash
# Attack: a local client writes garbage into its shared-memory ring and
# the ring's header: positions past what the ring holds, positions going
# back, a frame header claiming 4 GiB, a consumer position ahead of what
# ldsd wrote, a count of messages taken beyond what ldsd wrote.  ldsd must close that client with a log line naming it, and
# nothing else: ldsd stays up and another client's transfer through the
# same gateway, running meanwhile, arrives intact.  And the ring ldsd
# writes (where it keeps messages until they are taken) cannot be written
# by the client at all.
. "$(dirname "$0")/../integration/lib.sh"
two_clusters 2
start_pair 3000 "--delay-ms 1" "" -B 64k -S 3 -T 60
n=0
for mode in positions back header consumer; do
	n=$((n + 1))
	out=$("$TBIN/shmattack" "$mode" -s "$T/clusterA.sock" -n "evil$n" -T 10) ||
		fail "ldsd did not close the client that broke its ring ($mode): $out"
	[ "$out" = closed ] || fail "shmattack $mode: $out"
done
wait_log "$T/clusterA.log" 'client #[0-9]+ \(uid [0-9]+, pid [0-9]+, clusterA/evil1\): its shared-memory ring holds positions out of bounds; closing it' ||
	fail "no log line naming the client with a broken ring: $(grep -i 'evil\|ring' "$T/clusterA.log")"
# A count of messages taken beyond what was written, read by ldsd when a
# large message arrives for that client.
"$TBIN/shmattack" taken -s "$T/clusterB.sock" -n evil6 -T 10 > "$T/taken.out" &
apid=$!; PIDS="$PIDS $apid"
sleep 0.5
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src6 -t clusterB/evil6 -c 1 -b 100k -B 100k -T 5 > /dev/null 2>&1 &
PIDS="$PIDS $!"
wait $apid || fail "ldsd did not close the client claiming to have taken more than it got: $(cat "$T/taken.out")"
grep -q "TAKEN 1099511627776 but 0 taken and 0 more written; closing it" "$T/clusterB.log" ||
	fail "no log line for the client claiming too much taken: $(grep -i taken "$T/clusterB.log")"
out=$("$TBIN/shmattack" ring1 -s "$T/clusterA.sock" -n evil5 -T 10) || fail "shmattack ring1: $out"
[ "$out" = "ring 1 read-only" ] || fail "shmattack ring1: $out"
for who in evil2 evil4; do
	grep -q "clusterA/$who): its shared-memory ring holds positions out of bounds" "$T/clusterA.log" ||
		fail "no log line for $who: $(grep -i ring "$T/clusterA.log")"
done
grep -q "malformed frame header; closing it" "$T/clusterA.log" ||
	fail "the 4 GiB frame header was not refused: $(tail -5 "$T/clusterA.log")"
kill -0 "$rpid" || fail "the transfer ended before the attacks did: it must run beside them"
wait_pair
grep -q "received 3000 messages intact, in order and once" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
kill -0 "$PID_clusterA" || fail "ldsd died"
# The gateway still serves new clients over the rings.
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink2 -f clusterA/src2 -c 50 -T 20 > "$T/r2.out" 2>&1 &
r2=$!; PIDS="$PIDS $r2"
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src2 -t clusterB/sink2 -c 50 -T 20 > "$T/s2.out" 2>&1 ||
	fail "a new client after the attacks: $(cat "$T/s2.out")"
wait $r2 || fail "its receiver: $(cat "$T/r2.out")"
echo "measured: 5 clients with broken rings closed, each logged; ring 1 could not be written; the transfer beside them: $(cat "$T/r.out")"
