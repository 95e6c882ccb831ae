#!/usr/bin/env bash
# Attack: a job's process that left its process group (setsid, then a
# double fork, so that init adopts it) outlived the job and its time
# limit: ldsd signalled only the process group.  Defence: the job's
# supervisor is a child subreaper (the job's orphans become its children)
# and signals every descendant, whatever its session; when mpirun ends it
# SIGKILLs what is left (ldsd/proctree.h, ldsd/jobspawn.c).  Checked: a
# job that runs into its time limit, one that does so deaf to SIGTERM
# itself, and one that ends by itself, each leave a setsid +
# double-forked sleep deaf to SIGTERM behind, which must be gone when the
# job's EXIT arrives; so must one left by a launcher that ignores SIGTERM
# (ldsd's SIGKILL 5 s after the stop goes to every descendant).
. "$(dirname "$0")/exec_lib.sh"
app escape.sh "#!/bin/sh
# escape.sh NAME [wait] [deaf]: leaves a sleep behind in a session of its
# own, deaf to SIGTERM; with deaf, is deaf to it too.
( setsid /bin/sh -c 'trap \"\" TERM; sleep 300 < /dev/null > /dev/null 2>&1 & echo \$! > $MARK/\$0.pid' \"\$1\" & )
for _ in \$(seq 1 50); do [ -s $MARK/\$1.pid ] && break; sleep 0.1; done
[ \"\$2\" = deaf ] && trap '' TERM
[ \"\$2\" != \"\" ] && exec sleep 300
exit 0"
exec_clusters "exec = { allow_clusters = [ \"clusterA\" ]; programs = [ \"$T/app/escape.sh\" ];
  user = \"$JOBUSER\"; max_time = 3.0; };"

# escapee NAME: fails if the process job NAME left behind still runs
# (a zombie is dead: its parent has not reaped it yet).
escapee() {
	local pid
	pid=$(cat "$MARK/$1.pid" 2>/dev/null) || fail "$1: the job did not start its escapee: $(cat "$T/$1.out")"
	PIDS="$PIDS $pid"
	if [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
		fail "$1: its setsid child (pid $pid: $(tr '\0' ' ' < "/proc/$pid/cmdline"), parent $(awk '/^PPid:/ { print $2 }' \
			"/proc/$pid/status")) outlived the job: $(cat "$T/$1.out")"
	fi
}

start=$(date +%s)
timeout 60 $EXEC "$T/app/escape.sh" limit wait > "$T/limit.out" 2>&1
grep -q "^EXIT .*stopped: it ran into its time limit" "$T/limit.out" || fail "limit: not stopped at its limit: $(cat "$T/limit.out")"
secs=$(( $(date +%s) - start ))
sleep 0.5
escapee limit
# The job itself deaf to SIGTERM too: whatever mpirun does then, all of
# it is gone within the 5 s to SIGKILL (and the supervisor's 5 s more).
start=$(date +%s)
timeout 60 $EXEC "$T/app/escape.sh" deaf deaf > "$T/deaf.out" 2>&1
grep -q "^EXIT .*stopped: it ran into its time limit" "$T/deaf.out" || fail "deaf: not stopped at its limit: $(cat "$T/deaf.out")"
deaf_secs=$(( $(date +%s) - start ))
[ "$deaf_secs" -le 15 ] || fail "deaf: its EXIT came after $deaf_secs s (limit 3 s, SIGKILL 5 s later)"
sleep 0.5
escapee deaf
timeout 60 $EXEC "$T/app/escape.sh" done > "$T/done.out" 2>&1
grep -q "^EXIT 0 " "$T/done.out" || fail "done: $(cat "$T/done.out")"
sleep 0.5
escapee done
# A launcher deaf to SIGTERM (a stand-in for a hung mpirun) with an
# escapee of its own: ldsd's SIGKILL 5 s after the stop must reach both.
app deaf-mpirun "#!/bin/sh
trap '' TERM
( setsid /bin/sh -c 'sleep 300 < /dev/null > /dev/null 2>&1 & echo \$! > $MARK/launcher.pid' & )
exec sleep 300"
kill "$PID_clusterB"
wait "$PID_clusterB" 2> /dev/null
sed -i "s|^exec = { |exec = { mpirun = \"$T/app/deaf-mpirun\"; |" "$T/clusterB.conf"
start_ldsd clusterB
wait_up clusterA 1
start=$(date +%s)
timeout 60 $EXEC "$T/app/escape.sh" launcher wait > "$T/launcher.out" 2>&1
hung_secs=$(( $(date +%s) - start ))
grep -q "^EXIT -9 killed by signal 9, .*stopped: it ran into its time limit" "$T/launcher.out" ||
	fail "launcher: not killed at its limit: $(cat "$T/launcher.out")"
grep -q "exec: job 1 of clusterA/anon-[0-9a-f]* did not end within 5 s of SIGTERM: SIGKILL" "$T/clusterB.log" ||
	fail "launcher: no SIGKILL logged: $(tail -3 "$T/clusterB.log")"
[ "$hung_secs" -le 20 ] || fail "launcher: its EXIT came after $hung_secs s (limit 3 s, SIGKILL 5 s later)"
sleep 0.5
escapee launcher
echo "measured: setsid + double-forked children deaf to SIGTERM gone after the time limit (job stopped after $secs s; $deaf_secs s when deaf itself) after a normal end, and with a launcher deaf to SIGTERM (EXIT after $hung_secs s)"
