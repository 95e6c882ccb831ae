#!/usr/bin/env bash
# Attack: a local user opens connections without end and never says HELLO.
# There was no limit on clients and no idle timeout.  Now max_clients and
# max_clients_per_user refuse the excess with an ERROR saying which, and a
# connection without HELLO within hello_timeout is closed.  As root, a
# second user still gets in while the first holds all it may.
. "$(dirname "$0")/../integration/lib.sh"
make_key "$T/key"
CLIENTS_EXTRA='max_clients = 40; max_clients_per_user = 25; hello_timeout = 2.0;'
write_conf clusterA clusterB connect 1
start_ldsd clusterA
"$TBIN/clientattack" conns -s "$T/clusterA.sock" -c 60 -T 6 > "$T/atk.out" 2>&1 &
apid=$!; PIDS="$PIDS $apid"
for _ in $(seq 1 50); do grep -q "opened" "$T/atk.out" && break; sleep 0.1; done
grep -q "conns: 60 opened, 35 refused: uid 0 has max_clients_per_user = 25 connections already" "$T/atk.out" ||
	[ "$(id -u)" != 0 ] || fail "per-user limit not applied: $(cat "$T/atk.out")"
grep -q "conns: 60 opened, 35 refused" "$T/atk.out" || fail "limits not applied: $(cat "$T/atk.out")"
other=""
if [ "$(id -u)" = 0 ] && command -v useradd > /dev/null; then
	# Another user, while the attacker holds its 25: it must get in.
	u=ldsc$$
	useradd -M -N -s /usr/sbin/nologin "$u" 2> /dev/null || fail "useradd $u failed"
	trap 'userdel "$u" 2>/dev/null; cleanup' EXIT
	chmod 755 "$T"
	setpriv --reuid="$u" --regid=nogroup --clear-groups "$TBIN/clientattack" open -s "$T/clusterA.sock" -n other \
		> "$T/other.out" 2>&1 || fail "a second user was locked out: $(cat "$T/other.out")"
	other=", a second user got in"
fi
wait $apid || fail "clientattack: $(cat "$T/atk.out")"
grep -q "conns: 25 of 25 closed by ldsd within 6 s" "$T/atk.out" || fail "silent connections not closed: $(cat "$T/atk.out")"
grep -q "no HELLO within hello_timeout = 2 s" "$T/clusterA.log" || fail "ldsd did not log the timeout"
"$TBIN/clientattack" open -s "$T/clusterA.sock" -n honest > "$T/open.out" || fail "an honest client cannot open: $(cat "$T/open.out")"
echo "measured: 60 connections: 35 refused at once, 25 closed after hello_timeout$other"
