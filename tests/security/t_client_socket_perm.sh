#!/usr/bin/env bash
# The client socket was always mode 0666 and owned by ldsd's user: a site
# could not keep local users out of its gateway short of a firewall on the
# file system.  Now clients.socket_owner, socket_group and socket_mode set
# them.  Checked: the socket's owner, group and mode; a member of the group
# opens a handle, a user outside it is refused by the kernel; bad values are
# refused naming file:line.
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to add the test's users and group"; exit 77; }
command -v useradd > /dev/null && command -v groupadd > /dev/null || { echo "SKIP: no useradd/groupadd"; exit 77; }
GRP=ldsgrp$$
OWNER=ldsown$$
MEMBER=ldsmem$$
OUTSIDER=ldsout$$
trap 'cleanup; for u in "$OWNER" "$MEMBER" "$OUTSIDER"; do userdel "$u" 2> /dev/null; done; groupdel "$GRP" 2> /dev/null' EXIT
groupadd "$GRP" && useradd -M -N -s /usr/sbin/nologin "$OWNER" && useradd -M -N -s /usr/sbin/nologin -G "$GRP" "$MEMBER" &&
	useradd -M -N -s /usr/sbin/nologin "$OUTSIDER" || fail "useradd/groupadd failed"
# The test directory must be reachable by the test's users.
chmod 755 "$T"
make_key "$T/key"

# Bad values: file:line and the setting.
for bad in 'socket_mode = "0999";:not an octal mode' 'socket_mode = "0466";:denies the owner write access' \
	"socket_owner = \"nouser$$\";:no such user" "socket_group = \"nogroup$$\";:no such group"; do
	CLIENTS_EXTRA=${bad%%:*} write_conf clusterA clusterB connect 1
	"$BIN/ldsd" --check -c "$T/clusterA.conf" > "$T/check.out" 2>&1 && fail "--check passed ${bad%%:*}"
	grep -q "clusterA.conf:2: clients.socket_[a-z]*: .*${bad#*:}" "$T/check.out" ||
		fail "${bad%%:*}: $(cat "$T/check.out")"
done

CLIENTS_EXTRA="socket_owner = \"$OWNER\"; socket_group = \"$GRP\"; socket_mode = \"0660\";" \
	write_conf clusterA clusterB connect 1
"$BIN/ldsd" --check -c "$T/clusterA.conf" > "$T/check.out" 2>&1 || fail "--check: $(cat "$T/check.out")"
grep -q "socket_mode = \"0660\";" "$T/check.out" || fail "--check does not print socket_mode back"
start_ldsd clusterA
[ "$(stat -c '%U:%G %a' "$T/clusterA.sock")" = "$OWNER:$GRP 660" ] ||
	fail "socket is $(stat -c '%U:%G %a' "$T/clusterA.sock"), not $OWNER:$GRP 660"

# as USER ARGS...: clientattack run by that user, with its groups.
as() {
	local u=$1
	shift
	timeout 30 setpriv --reuid="$u" --regid="$(id -g "$u")" --init-groups "$TBIN/clientattack" "$@" > "$T/o.out" 2>&1
}
as "$MEMBER" open -s "$T/clusterA.sock" -n member || fail "a member of $GRP could not open: $(cat "$T/o.out")"
grep -q "^opened clusterA/member$" "$T/o.out" || fail "member: $(cat "$T/o.out")"
as "$OUTSIDER" open -s "$T/clusterA.sock" -n outsider && fail "a user outside $GRP opened a handle"
grep -q "Permission denied" "$T/o.out" || fail "outsider: $(cat "$T/o.out")"
echo "measured: socket $(stat -c '%U:%G %a' "$T/clusterA.sock"); member opened, outsider refused (EACCES)"
