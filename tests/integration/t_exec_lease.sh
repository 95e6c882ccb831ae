#!/usr/bin/env bash
# A gateway stops a job whose requester is gone past the job's lease
# (START's lease, which mwlaunch sets to the cluster's lease): clusterA
# asks clusterB to run a job that would sleep for a minute, with a lease
# of 2 s, then clusterA's gateway dies.  clusterB stops the job (SIGTERM
# to its processes) once the link has been down for 2 s, and says why;
# before, the job ran to its time limit (an hour by default) for a
# requester that no longer was.  A second job with no lease (0) keeps
# running through the same outage.
. "$(dirname "$0")/../security/exec_lib.sh"
app sleeper "#!/bin/sh
echo \$\$ > $MARK/\$1.pid
exec sleep 60"
exec_clusters "exec = { user = \"$JOBUSER\"; allow_clusters = [ \"clusterA\" ]; programs = [ \"$T/app/sleeper\" ]; max_time = 120.0; };"
$EXEC -L 2 "$T/app/sleeper" leased > "$T/leased.out" 2>&1 & PIDS="$PIDS $!"
$EXEC "$T/app/sleeper" unleased > "$T/unleased.out" 2>&1 & PIDS="$PIDS $!"
for j in leased unleased; do
	wait_log "$T/$j.out" '^STARTED' 20 && wait_log "$MARK/$j.pid" . 10 || fail "job $j did not start: $(cat "$T/$j.out")"
done
grep -q "exec: job .* lease 2 s" "$T/clusterB.log" || fail "clusterB did not take the lease: $(grep 'exec: job' "$T/clusterB.log")"
leased=$(cat "$MARK/leased.pid") unleased=$(cat "$MARK/unleased.pid")
{ kill -9 "$PID_clusterA"; wait "$PID_clusterA"; } 2> /dev/null
t0=$(date +%s.%N)
wait_log "$T/clusterB.log" "exec: job [0-9]+ of clusterA/[^ ]*: stopping \(cluster clusterA, which asked for it, has been unreachable for over 2 s, its lease\)" 20 ||
	fail "clusterB did not stop the leased job: $(grep 'exec' "$T/clusterB.log" | tail -5)"
for _ in $(seq 1 100); do kill -0 "$leased" 2> /dev/null || break; sleep 0.1; done
kill -0 "$leased" 2> /dev/null && fail "the leased job's process $leased still runs"
t=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.1f", $1 - $2 }')
kill -0 "$unleased" 2> /dev/null || fail "the job without a lease was stopped too"
[ "$(grep -c 'stopping (cluster clusterA' "$T/clusterB.log")" = 1 ] || fail "more than the leased job was stopped"
echo "measured: clusterA's gateway killed; clusterB ended the leased job (lease 2 s) $t s later; the unleased one runs on"
