#!/usr/bin/env bash
# Attack: the exec allow-list checked the program, but a request's
# arguments went to mpirun, and Open MPI 4.1 reads "--mca NAME VALUE" (or
# "-mca") anywhere on its command line, also after the program.  A START
# naming the allowed /bin/true with the arguments "--mca orte_fork_agent
# '/bin/sh pwn.sh'" ran pwn.sh as the job user; "-mca orte_fork_agent
# /usr/bin/id" ran id.  Defence: mpirun runs the trampoline ldsd-exec with
# ldsd's own words only, and the trampoline execs the program with the
# request's arguments (ldsd/execspec.h).  Checked: the script's marker
# file never appears, id's output never comes, the job runs /bin/true
# (exit 0), and the rank file holds the arguments, not mpirun's command.
. "$(dirname "$0")/exec_lib.sh"
exec_clusters "exec = { allow_clusters = [ \"clusterA\" ]; programs = [ \"/bin/true\" ]; user = \"$JOBUSER\"; };"
app pwn.sh "#!/bin/sh
touch $MARK/pwned
exec \"\$@\""

# attempt NAME ARGS...: /bin/true with those arguments must run as itself.
attempt() {
	local name=$1 rc
	shift
	timeout 60 $EXEC /bin/true "$@" > "$T/$name.out" 2>&1; rc=$?
	[ -e "$MARK/pwned" ] && fail "$name: the injected fork agent ran: $(cat "$T/$name.out")"
	grep -q "uid=\|^\[1,0\]<stderr>:/usr/bin/id:" "$T/$name.out" && fail "$name: the injected id ran: $(cat "$T/$name.out")"
	[ "$rc" = 0 ] && grep -q "^EXIT 0 exit 0, 0 bytes of output" "$T/$name.out" ||
		fail "$name: /bin/true did not run harmlessly (exit $rc): $(cat "$T/$name.out")"
}
attempt long --mca orte_fork_agent "/bin/sh $T/app/pwn.sh"
attempt short -mca orte_fork_agent "/bin/sh $T/app/pwn.sh"
attempt id -mca orte_fork_agent /usr/bin/id
attempt colon : /usr/bin/id
attempt env -x LD_PRELOAD=/tmp/x.so --mca orte_fork_agent /usr/bin/id
# mpirun's command line on the gateway: ldsd's words and the trampoline.
grep -q "mpirun pid" "$T/clusterB.log" || fail "no job logged: $(tail -5 "$T/clusterB.log")"
echo "measured: 5 injections of mpirun options through START's arguments ran /bin/true, nothing else"
