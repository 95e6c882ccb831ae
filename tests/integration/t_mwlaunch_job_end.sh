#!/usr/bin/env bash
# What an interrupted job leaves queued in its gateways is dropped when it
# ends, not after undelivered_ttl (600 s).  Each time, a communication
# manager is frozen mid-run (SIGSTOP) so that messages pile up for it in
# its gateway, then killed, which ends its cluster:
#  A. clusterB's CM: the job goes on without clusterB (on_remote_failure
#     "continue"); tasks for clusterB/cm-ID wait in clusterB's gateway;
#  B. clusterA's CM: the main cluster fails, mwlaunch stops the job;
#     results for clusterA/cm-clusterB-ID wait in clusterA's gateway.
# When mwlaunch has exited, no endpoint of the job holds a message in
# either gateway, the drops are counted as undelivered of an ended job,
# and the other gateway was told of each (messages_lost).  Before, they
# waited under the job's names until undelivered_ttl.  The application is
# the tests' own (tests/mw/mw_sumcheck.c).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_clusters 2 2
sumcheck_app
ON_REMOTE_FAILURE=default DEADLINE=30 LOAD_BALANCE=false write_job 2 "-t 4000 --ms 3"

# cm_pid CLUSTER: the pid of that cluster's communication manager.
cm_pid() {
	local p e
	for p in $(pgrep -s 0 -f "$APP" 2> /dev/null); do
		e=$(tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null)
		grep -qx MWL_ROLE=cm <<< "$e" && grep -qx "MWL_CLUSTER=$1" <<< "$e" && { echo "$p"; return 0; }
	done
	return 1
}
# stat CLUSTER JQ: a number from its gateway's status.
stat() { ctl "$1" status --json | jq "$2"; }
# held CLUSTER ID: messages its gateway holds for the job's endpoints.
held() { ctl "$1" status --json | jq --arg id "$2" '[.clients.endpoints[] | select(.name | endswith("-" + $id)) | .queued] | add // 0'; }

# interrupt CLUSTER OTHER: runs the job, freezes CLUSTER's CM once it has
# linked, kills it a second later; then checks both gateways.
interrupt() {
	local c=$1 o=$2 e0 u0 l0 p id ended lost
	e0=$(stat "$c" .clients.undelivered_job_ended)
	u0=$(stat "$c" .clients.undelivered)
	l0=$(stat "$o" '.links[0].sent.messages_lost')
	mwlaunch_job & mpid=$!
	wait_log "$T/out" '^\[clusterB:[0-9]+\] mw: cm: linked to ' 60 || fail "$c: clusterB never linked: $(tail "$T/out")"
	sleep 0.5
	p=$(cm_pid "$c") || fail "$c: no CM process"
	kill -STOP "$p"
	sleep 1
	kill -9 "$p"
	wait "$mpid"
	id=$(jq -r .id "$T/job.json")
	[ -n "$id" ] && [ "$id" != null ] || fail "$c: no job id in the summary: $(tail -20 "$T/out")"
	# mwlaunch waited for its gateways' answers before exiting.
	for g in clusterA clusterB; do
		[ "$(held "$g" "$id")" = 0 ] || fail "$c killed: $g still holds $(held "$g" "$id") messages of job $id: $(ctl "$g" status)"
	done
	ended=$(( $(stat "$c" .clients.undelivered_job_ended) - e0 ))
	[ "$ended" -gt 0 ] || fail "$c killed: nothing was dropped: the test did not test"
	[ $(( $(stat "$c" .clients.undelivered) - u0 )) = "$ended" ] || fail "$c killed: other drops than the job's end"
	for _ in $(seq 1 30); do
		lost=$(( $(stat "$o" '.links[0].sent.messages_lost') - l0 ))
		[ "$lost" = "$ended" ] && break
		sleep 0.1
	done
	[ "$lost" = "$ended" ] || fail "$c killed: $c dropped $ended messages, $o was told of $lost"
	grep -q "ended job $id: $ended messages waiting for it dropped" "$T/$c.log" || fail "$c did not log the end of job $id"
	echo "measured: $c's CM frozen and killed: job $id's $ended queued messages dropped at its end (mwlaunch exit $(jq -r .status "$T/job.json")), $o told"
}

interrupt clusterB clusterA
jq -e '.status == "ok" and .clusters[1].status != "exit 0"' "$T/job.json" > /dev/null ||
	fail "clusterB killed: the job should have finished without it: $(cat "$T/job.json")"
interrupt clusterA clusterB
jq -e '.status != "ok"' "$T/job.json" > /dev/null || fail "clusterA killed: the job should have failed: $(cat "$T/job.json")"
