#!/usr/bin/env bash
# A gateway killed (SIGKILL) and restarted mid-run, for the failure model
# of docs/mwlaunch.md.  The remote one: clusterB's communication manager
# loses its gateway and its cluster ends (exit 1); under on_remote_failure
# = "continue" the main cluster finishes the job alone, verified, exit 0.
# The main one: the main CM loses its gateway, the main cluster and so the
# job end at once (exit 1, resumable with a journal), never a hang; and
# the next job on the restarted gateways succeeds.  The application is the
# tests' own (tests/mw/).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
sumcheck_app
star_clusters 2 2
WORKERS=1 MAIN_WORKERS=1 GRAIN=2 PREFETCH=8 write_job 2 "-t 400 --ms 15" 'on_remote_failure = "continue";'

# restart_mid_run NAME: runs the job, restarts gateway NAME once clusterB
# computes; rc and secs of the job.  The gateway is frozen for a second
# first, so that messages sent to it wait unacknowledged and its peer
# reports them lost when it comes back without its state (the main CM
# once ended the job on that, or not, by the timing of the restart).
restart_mid_run() {
	local start mpid
	start=$(date +%s.%N)
	mwlaunch_job & mpid=$!
	PIDS="$PIDS $mpid"
	wait_log "$T/out" '^\[clusterB:0\] mw: [1-9][0-9]*/' 60 || fail "clusterB did not get going: $(tail "$T/out")"
	eval "kill -STOP \$PID_$1"
	sleep 1
	eval "kill -9 \$PID_$1; wait \$PID_$1 2> /dev/null"
	start_ldsd "$1"
	wait "$mpid"; rc=$?
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	for c in clusterB clusterA; do wait_up $c 2; done
}

restart_mid_run clusterB
[ "$rc" = 0 ] || fail "remote gateway restarted: mwlaunch exited $rc: $(tail -30 "$T/out")"
grep -q '^\[clusterA:0\] mw_sumcheck: verify: 400 tasks, sum [0-9a-f]*: OK$' "$T/out" || fail "not verified: $(tail -30 "$T/out")"
grep -q "^mwlaunch: remote cluster clusterB failed (exit 1) .* the job goes on" "$T/out" ||
	fail "the remote failure was not named: $(tail -30 "$T/out")"
grep -q "^\[clusterA:[0-9]*\] mw: cm (cluster clusterA): clusterB/cm-[0-9a-f]*: messages [0-9]*\.\.[0-9]* were lost: .*: its [0-9]* outstanding tasks go to other workers$" "$T/out" ||
	fail "the main CM did not report the lost messages: $(grep -i lost "$T/out")"
jq -e '.status == "ok" and .clusters[0].report.joined == .clusters[0].report.tasks' "$T/job.json" > /dev/null ||
	fail "summary: $(cat "$T/job.json")"
t_remote=$secs

restart_mid_run clusterA
[ "$rc" = 1 ] || fail "main gateway restarted: mwlaunch exited $rc, want 1: $(tail -30 "$T/out")"
grep -q "connection to the local ldsd lost" "$T/out" && grep -q "^mwlaunch: cluster clusterA failed (exit 1)" "$T/out" ||
	fail "the main failure was not named: $(tail -30 "$T/out")"
awk -v t="$secs" 'BEGIN { exit !(t < 20) }' || fail "the failed job took $secs s"
t_main=$secs

mwlaunch_job || fail "the next job on the restarted gateways failed ($?): $(tail -30 "$T/out")"
grep -q '^\[clusterA:0\] mw_sumcheck: verify: 400 tasks, sum [0-9a-f]*: OK$' "$T/out" || fail "next job not verified"
echo "measured: remote gateway restarted: job verified in $t_remote s; main gateway restarted: exit 1 in $t_main s;" \
	"the next job: ok in $(jq .seconds "$T/job.json") s"
