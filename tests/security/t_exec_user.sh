#!/usr/bin/env bash
# Attack: exec permission was per cluster: any local user of a cluster
# allowed to start jobs - anyone with a shell on its gateway host - could
# start them, with any arguments, and could claim to be anyone.
# Defence: START names its requester (uid and user name); the requesting
# gateway checks them against the client socket's SO_PEERCRED and refuses
# a forged one; exec.rules on the running gateway grant per cluster and
# user, and may pin the arguments (execpolicy_vouch, execpolicy_check).
# Checked, with two users made for the test: the allowed user runs the
# program with the pinned arguments; the other user is refused (EPERM,
# logged), and so are the allowed user's other arguments; the other user
# claiming to be the allowed one is refused by its own gateway (EACCES),
# and so is any START over its TCP client port, where the kernel does not
# say who asks; the remote gateway never hears of these.  Needs root
# (useradd).
. "$(dirname "$0")/exec_lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to add the test's users"; exit 77; }
command -v useradd > /dev/null || { echo "SKIP: no useradd"; exit 77; }
GOOD=ldsgood$$
BAD=ldsbad$$
# Removed whatever happens: lib.sh's trap runs cleanup, then this.
trap 'cleanup; userdel "$GOOD" 2>/dev/null; userdel "$BAD" 2>/dev/null' EXIT
useradd -M -N -s /usr/sbin/nologin "$GOOD" && useradd -M -N -s /usr/sbin/nologin "$BAD" ||
	fail "useradd failed"
CLIENT_TCP=$((PORT + 1))
exec_clusters "exec = { user = \"$JOBUSER\"; rules = (
  { cluster = \"clusterA\"; users = [ \"$GOOD\" ]; program = \"/usr/bin/id\"; args = [ \"-u\" ]; },
  { cluster = \"clusterA\"; users = [ \"$GOOD\", \"$BAD\" ]; program = \"/bin/echo\"; args = [ \"hello\", \"[0-9]*\" ]; } ); };"

# as USER EXECTEST-ARGS...: exectest run by that user; output in $T/x.out.
as() {
	local u=$1
	shift
	timeout 60 setpriv --reuid="$u" --regid="$(id -g "$u")" --clear-groups $EXEC "$@" > "$T/x.out" 2>&1
}

as "$GOOD" /usr/bin/id -u || fail "$GOOD: id -u: $(cat "$T/x.out")"
grep -q "^\[1,0\]<stdout>:$(id -u "$JOBUSER")$" "$T/x.out" || fail "$GOOD: id -u did not run: $(cat "$T/x.out")"
grep -q "exec: job .* (its job 1, user $GOOD uid $(id -u "$GOOD") there)" "$T/clusterB.log" ||
	fail "clusterB did not log who asked: $(tail -3 "$T/clusterB.log")"
as "$BAD" /usr/bin/id -u
grep -q "^REFUSED 1 user $BAD of cluster clusterA may not run /usr/bin/id (exec.rules)" "$T/x.out" ||
	fail "$BAD: id -u not refused: $(cat "$T/x.out")"
grep -q "exec: refused job 1 of clusterA/anon-[0-9a-f]* (link clusterA): user $BAD of cluster clusterA may not" \
	"$T/clusterB.log" || fail "$BAD's refusal not logged: $(tail -3 "$T/clusterB.log")"
as "$GOOD" /usr/bin/id -u --mca orte_fork_agent /bin/sh
grep -q "^REFUSED 1 the 4 arguments of rank 0 do not match those exec.rules allows user $GOOD" "$T/x.out" ||
	fail "$GOOD: other arguments not refused: $(cat "$T/x.out")"
as "$BAD" /bin/echo hello 42 || fail "$BAD: echo hello 42: $(cat "$T/x.out")"
grep -q "^\[1,0\]<stdout>:hello 42$" "$T/x.out" || fail "$BAD: echo did not run: $(cat "$T/x.out")"
as "$BAD" /bin/echo hello x42
grep -q "^REFUSED 1 the 2 arguments of rank 0 do not match" "$T/x.out" || fail "$BAD: echo hello x42: $(cat "$T/x.out")"
# A forged requester goes no further than its own gateway.
n=$(grep -c "exec: refused job" "$T/clusterB.log")
as "$BAD" -u "$GOOD" -U "$(id -u "$GOOD")" /usr/bin/id -u
grep -q "^ERROR the start request names user $GOOD (uid $(id -u "$GOOD")), but comes from $BAD" "$T/x.out" ||
	fail "forged requester not refused by clusterA: $(cat "$T/x.out")"
as "$BAD" -U "$(id -u "$GOOD")" /usr/bin/id -u
grep -q "^ERROR the start request names user $BAD (uid $(id -u "$GOOD")), but comes from $BAD" "$T/x.out" ||
	fail "forged uid not refused by clusterA: $(cat "$T/x.out")"
# Over TCP the kernel does not say who asks: no START goes out that way.
LDS_KEY_FILE=$T/key timeout 60 "$TBIN/exectest" -s "tcp:127.0.0.1:$CLIENT_TCP" -c clusterB -T 30 /usr/bin/id -u > "$T/x.out" 2>&1
grep -q "^ERROR a job can be started only over the unix socket" "$T/x.out" ||
	fail "a START over the TCP client port was not refused by clusterA: $(cat "$T/x.out")"
[ "$(grep -c "exec: refused job" "$T/clusterB.log")" = "$n" ] || fail "a forged request reached clusterB"
grep -c "mpirun pid" "$T/clusterB.log" | grep -qx 2 || fail "not exactly the 2 allowed jobs ran: $(grep "exec:" "$T/clusterB.log")"
echo "measured: per-user rules: 2 allowed jobs ran, 3 refused by clusterB, 2 forged requesters and 1 over TCP refused by clusterA"
