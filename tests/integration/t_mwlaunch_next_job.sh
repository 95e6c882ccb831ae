#!/usr/bin/env bash
# Each role of a running job killed in turn - the master (SIGKILL), the
# whole launch (Ctrl-C: SIGINT to mwlaunch), the remote gateway's link
# (its streams broken mid-run) - and after each the next job starts at
# once on the same gateways and must succeed: what the interrupted job
# left queued in the gateways never reaches it (before job ids, a job
# after an interrupted one failed with "expected HELLO first" or "sent
# RESULT for task N: it does not hold that task" until the remote gateway
# restarted).  The remote cluster's own kill is t_mwlaunch_remote_killed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
EXEC_clusterB="allow_faults = true;"
star_clusters 2 2
LOAD_BALANCE=false write_job 2 "-n 768 -b 64 --verify"

# mid_run: waits until clusterB's CM has linked to the main one (its
# cluster gets tasks from then on; the job runs seconds more), then returns.
mid_run() {
	wait_log "$T/out" '^\[clusterB:[0-9]+\] mw: cm: linked to ' 60 || fail "clusterB never linked: $(tail "$T/out")"
	sleep 0.3
}

# next_job WHAT: the next job, at once; it must succeed.
next_job() {
	local id1=$1
	mwlaunch_job || fail "$2: the next job failed ($?): $(tail -30 "$T/out")"
	check_job 2
	[ "$(jq -r .id "$T/job.json")" != "$id1" ] || fail "$2: the next job had the same id"
	echo "measured: $2: the next job at once: ok in $(jq .seconds "$T/job.json") s, clusterB did $(cm_done clusterB) tasks"
}

# 1. The master killed.
mwlaunch_job & mpid=$!
mid_run
m=$(role_pid master) || fail "no master process"
kill -9 "$m"
wait "$mpid"; rc=$?
[ "$rc" = 1 ] || fail "master killed: mwlaunch exited $rc, want 1: $(tail -20 "$T/out")"
id=$(grep -o 'job [0-9a-f]\{16\}' "$T/out" | head -1 | cut -d' ' -f2)
next_job "$id" "master killed"

# 2. Ctrl-C: SIGINT to mwlaunch.
mwlaunch_job & mpid=$!
mid_run
# mwlaunch itself: a background job of a script ignores SIGINT.
l=$(pgrep -s 0 -x mwlaunch) || fail "no mwlaunch process"
kill -INT $l
wait "$mpid"; rc=$?
[ "$rc" = 130 ] || fail "Ctrl-C: mwlaunch exited $rc, want 130: $(tail -20 "$T/out")"
role_pid master > /dev/null && fail "Ctrl-C: the master still runs"
next_job "" "Ctrl-C"

# 3. The remote gateway's link broken mid-run: the job goes on.
mwlaunch_job & mpid=$!
mid_run
ctl clusterB fault break clusterA | grep -q "^broke [1-9]" || fail "could not break clusterB's link"
wait "$mpid" || fail "link broken: the job failed ($?): $(tail -30 "$T/out")"
check_job 2
next_job "$(jq -r .id "$T/job.json")" "link broken mid-run"
