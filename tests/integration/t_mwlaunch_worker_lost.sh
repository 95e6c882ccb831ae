#!/usr/bin/env bash
# A worker rank of the main cluster SIGKILLed mid-run.  With
# on_worker_failure = "continue" (mpirun --enable-recovery, the runtime's
# WorkerFailure) the master declares it lost once it has been silent for
# WorkerTimeout while holding tasks, gives its tasks to the others, never
# waits on its sends, and the job ends verified with exit 0; the report
# names the lost worker and the tasks run again.  Meanwhile one task runs
# longer than WorkerTimeout: its worker's heartbeat keeps it from being
# taken for dead.  With the default ("abort") the job ends at once with
# the cluster's failure and exit 1, never a hang.  Before, a dead worker
# always ended the job, and under --enable-recovery the master waited for
# its results for ever.  The application is the tests' own (tests/mw/).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
sumcheck_app

# main_worker RANK: the pid of clusterA's rank RANK (a worker).
main_worker() {
	local p e
	for p in $(pgrep -s 0 -f "$APP" 2> /dev/null); do
		e=$(tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null)
		grep -qx MWL_CLUSTER=clusterA <<< "$e" && grep -qx MWL_ROLE=worker <<< "$e" &&
			grep -qx "MWL_RANK=$1" <<< "$e" && { echo "$p"; return 0; }
	done
	return 1
}

# kill_mid_run PID-OF-MWLAUNCH: SIGKILLs clusterA's second worker (rank 2)
# once the master has joined results; prints its pid.
kill_mid_run() {
	local w=""
	wait_log "$T/out" '^\[clusterA:0\] mw: [1-9][0-9]*/' 60 || fail "the job did not get going: $(tail "$T/out")"
	w=$(main_worker 2) || fail "no worker rank 2 in clusterA"
	kill -0 "$1" 2> /dev/null || fail "the job ended before the kill: $(tail "$T/out")"
	kill -9 "$w"
	echo "$w"
}

# Job file errors: a wrong policy, and the runtime's setting where the
# job's belongs.
write_job 2 "-t 10" 'on_worker_failure = "retry";'
"$BIN/mwlaunch" --dry-run "$T/job.conf" > "$T/dry" 2>&1; rc=$?
[ "$rc" = 2 ] && grep -q 'job.conf:[0-9]*: on_worker_failure: expected "abort" or "continue"' "$T/dry" ||
	fail "bad on_worker_failure: exit $rc: $(cat "$T/dry")"
FRAMEWORK='WorkerFailure = "continue";' write_job 2 "-t 10"
"$BIN/mwlaunch" --dry-run "$T/job.conf" > "$T/dry" 2>&1; rc=$?
[ "$rc" = 2 ] && grep -q 'job.conf:[0-9]*: WorkerFailure: set on_worker_failure in the job instead' "$T/dry" ||
	fail "WorkerFailure in framework: exit $rc: $(cat "$T/dry")"

star_clusters 2 2
MAIN_WORKERS=3 WORKERS=1 GRAIN=2 PREFETCH=8 write_job 2 "-t 600 --ms 15 --slow 0:4000" 'on_worker_failure = "continue";'
# Worker 1 gets task 0 first (the master fills queues in rank order):
# 4 s of task_run, silent but for its heartbeat.
sed -i 's/framework = {/framework = { WorkerTimeout = 1.5;/' "$T/job.conf"
"$BIN/mwlaunch" --dry-run "$T/job.conf" > "$T/dry" 2>&1 || fail "--dry-run: $(cat "$T/dry")"
grep -q "mpirun --oversubscribe --tag-output --enable-recovery --mca async_mpi_finalize 1 .*MWL_WORKER_FAILURE=continue" "$T/dry" ||
	fail "the main cluster's mpirun lacks --enable-recovery or MWL_WORKER_FAILURE: $(cat "$T/dry")"

# run_and_kill: runs the job and kills a main-cluster worker mid-run;
# sets victim (its pid), rc (mwlaunch's exit status) and secs.
run_and_kill() {
	local start mpid
	start=$(date +%s.%N)
	mwlaunch_job & mpid=$!
	PIDS="$PIDS $mpid"
	victim=$(kill_mid_run "$mpid")
	wait "$mpid"; rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc)
}

# 1. continue: the job survives the loss.
run_and_kill
[ "$rc" = 0 ] || fail "on_worker_failure = continue: mwlaunch exited $rc after worker $victim was killed: $(tail -30 "$T/out")"
grep -q '^\[clusterA:0\] mw_sumcheck: verify: 600 tasks, sum [0-9a-f]*: OK$' "$T/out" ||
	fail "result not verified: $(tail -30 "$T/out")"
grep -q "^\[clusterA:0\] mw: master: worker 2 (.*:$victim) is lost: silent for" "$T/out" ||
	fail "the loss of worker 2 (pid $victim) was not named: $(grep -i lost "$T/out")"
jq -e --arg pid ":$victim" '.status == "ok" and .clusters[0].status == "exit 0" and
	(.clusters[0].report | .joined == .tasks and
	 ([.workers[] | select(.lost)] | length == 1 and .[0].host[-($pid | length):] == $pid and
	  .[0].forfeited >= 1 and (.[0].lost | test("silent for"))))' "$T/job.json" > /dev/null ||
	fail "summary: $(jq -c '[.status, .clusters[0].status, .clusters[0].report.joined, .clusters[0].report.tasks,
		[.clusters[0].report.workers[] | {host, done, lost, forfeited, late}]]' "$T/job.json")"
grep -q '^\[clusterA:0\]   Lost: silent for' "$T/out" &&
	grep -q '^\[clusterA:0\]   Tasks Forfeited (run again by other workers): [1-9]' "$T/out" ||
	fail "the text report lacks the lost worker: $(grep -A1 'Lost:' "$T/out")"
awk -v t="$secs" 'BEGIN { exit !(t < 20) }' || fail "the job took $secs s"
redone=$(jq '[.clusters[0].report.workers[] | select(.lost) | .forfeited] | add' "$T/job.json")
t1=$secs

# 2. abort (the default): the job ends with the cluster's failure, at once.
MAIN_WORKERS=3 WORKERS=1 GRAIN=2 PREFETCH=8 write_job 2 "-t 600 --ms 15"
run_and_kill
[ "$rc" = 1 ] || fail "on_worker_failure = abort: mwlaunch exited $rc, want 1: $(tail -30 "$T/out")"
grep -q "^mwlaunch: cluster clusterA failed (.*) after .*; stopping the job" "$T/out" &&
	grep -q "^\[clusterA:mpirun\] mpirun noticed that process rank 2 .* exited on signal 9" "$T/out" ||
	fail "the failure was not named: $(tail -30 "$T/out")"
grep -q "verify: .*OK" "$T/out" && fail "abort: a result was verified after the loss: $(tail -30 "$T/out")"
awk -v t="$secs" 'BEGIN { exit !(t < 20) }' || fail "the aborted job took $secs s"
t2=$secs

# 3. continue, before the HELLOs: worker 2 dies in setup(), while worker
# 1's setup() takes 4 s (its heartbeat runs from before setup): worker 2
# is lost after WorkerTimeout, worker 1 is not, the job ends verified.
# Before, the master waited for every HELLO: here until the job's timeout.
JOB_TIMEOUT=40 MAIN_WORKERS=3 WORKERS=1 GRAIN=2 PREFETCH=8 \
	write_job 2 "-t 300 --ms 15 --slow-setup clusterA:1:4000 --die-in-setup clusterA:2" 'on_worker_failure = "continue";'
sed -i 's/framework = {/framework = { WorkerTimeout = 1.5;/' "$T/job.conf"
start=$(date +%s.%N)
mwlaunch_job; rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
[ "$rc" = 0 ] || fail "a worker dead in setup: mwlaunch exited $rc: $(tail -30 "$T/out")"
grep -q '^\[clusterA:0\] mw_sumcheck: verify: 300 tasks, sum [0-9a-f]*: OK$' "$T/out" || fail "not verified: $(tail -30 "$T/out")"
grep -q "^\[clusterA:0\] mw: master: worker 2 (.*) is lost: silent for [0-9.]* s (WorkerTimeout 1.5 s) before its HELLO; the run goes on without it" \
	"$T/out" || fail "the worker dead in setup was not named: $(grep -i 'lost\|HELLO' "$T/out")"
jq -e '[.clusters[0].report.workers[] | select(.lost)] | length == 1 and (.[0].lost | test("before its HELLO"))' \
	"$T/job.json" > /dev/null || fail "summary: $(jq -c '[.clusters[0].report.workers[] | {host, done, lost}]' "$T/job.json")"
[ "$(jq '[.clusters[0].report.workers[] | select(.role == "Worker" and .done > 0)] | length' "$T/job.json")" = 2 ] ||
	fail "the slow worker did no task: $(jq -c '[.clusters[0].report.workers[] | {host, done, lost}]' "$T/job.json")"
echo "measured: continue: worker 2 killed mid-run, lost after WorkerTimeout 1.5 s, $redone tasks run again," \
	"a 4 s task kept alive by its heartbeat, verified in ${t1} s; abort: exit 1 in ${t2} s;" \
	"a worker dead in setup() beside one whose setup() took 4 s: verified in ${secs} s"

