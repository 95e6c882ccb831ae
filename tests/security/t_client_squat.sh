#!/usr/bin/env bash
# Attack: another local user opens an endpoint name while its owner's
# process is away, and receives the messages queued for it.  Now a name
# belongs to the uid that opened it while messages wait for it and for
# undelivered_ttl after its last close; another uid is refused (EACCES).
# Needs root (a second user, made and removed here).
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "needs root to run a client as a second user"; exit 77; }
command -v useradd > /dev/null && command -v setpriv > /dev/null || { echo "needs useradd and setpriv"; exit 77; }
u=ldss$$
useradd -M -N -s /usr/sbin/nologin "$u" 2> /dev/null || fail "useradd $u failed"
trap 'userdel "$u" 2>/dev/null; cleanup' EXIT
as_user() { setpriv --reuid="$u" --regid=nogroup --clear-groups "$@"; }
chmod 755 "$T"
CLIENTS_EXTRA='undelivered_ttl = 30.0;'
two_clusters 1
# The owner (root) opens its name, then goes away; a message arrives for it.
"$TBIN/clientattack" open -s "$T/clusterB.sock" -n svc > "$T/o1.out" || fail "owner: $(cat "$T/o1.out")"
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/svc -c 5 -T 10 > "$T/s.out" 2>&1 &
spid=$!; PIDS="$PIDS $spid"
for _ in $(seq 1 50); do
	ctl clusterB status | grep -q "clusterB/svc .*no process, 5 queued" && break
	sleep 0.1
done
ctl clusterB status | grep -q "clusterB/svc .*no process, 5 queued" || fail "the messages did not wait for clusterB/svc"
# The other user tries to take the name, and the messages with it.
if as_user "$TBIN/ldstest" recv -s "$T/clusterB.sock" -n svc -f clusterA/src -c 5 -T 3 > "$T/atk.out" 2>&1; then
	fail "user $u received the messages queued for root's endpoint clusterB/svc"
fi
grep -qi "permission denied" "$T/atk.out" || fail "not refused with EACCES: $(cat "$T/atk.out")"
grep -q "refused endpoint clusterB/svc: it belongs to uid 0" "$T/clusterB.log" || fail "ldsd did not log the refusal"
# A name nobody opened yet is free; the owner still gets its messages.
as_user "$TBIN/clientattack" open -s "$T/clusterB.sock" -n mine > "$T/o2.out" || fail "user $u: $(cat "$T/o2.out")"
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n svc -f clusterA/src -c 5 -T 10 > "$T/r.out" 2>&1 ||
	fail "the owner did not get its messages: $(cat "$T/r.out")"
wait $spid || fail "sender: $(cat "$T/s.out")"
echo "measured: user $u refused clusterB/svc (EACCES: it belongs to uid 0); the owner received its 5 messages"
