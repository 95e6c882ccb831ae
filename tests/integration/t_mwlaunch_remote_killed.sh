#!/usr/bin/env bash
# A remote cluster killed mid-run (its sub-master SIGKILLed, so its mpirun
# ends the cluster) under on_remote_failure = "continue": mwlaunch names
# the failure, goes on and tells the main CM at once (GONE through the
# gateway), which hands the dead cluster's tasks back to the master now
# and waits for no goodbye (it waited for the deadline twice: 30 s here),
# and the product is still right.  Then the next job, at once, on the same
# gateways: what the killed job left queued for its communication managers
# must not reach it (it did: "expected HELLO first from
# clusterA/cm-clusterB", until clusterB's ldsd was restarted).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_clusters 2 2
# on_remote_failure is left at its default, "continue".
ON_REMOTE_FAILURE=default DEADLINE=30 write_job 2 "-n 1024 -b 64 --verify"
mwlaunch_job & mpid=$!
# The sub-master, once it has work.
sub=""
for _ in $(seq 1 100); do
	[ -n "$sub" ] || sub=$(role_pid submaster) || sub=""
	[ -n "$sub" ] && grep -q "clusterB:0\] mw: [0-9]*/" "$T/out" && break
	sleep 0.1
done
[ -n "$sub" ] || fail "no sub-master running: $(tail "$T/out")"
kill -9 "$sub"
wait "$mpid" || fail "mwlaunch failed ($?) after the remote cluster was killed: $(tail -30 "$T/out")"
grep -q "^mwlaunch: remote cluster clusterB failed .* the job goes on" "$T/out" || fail "failure not named: $(tail -30 "$T/out")"
grep -q '^\[clusterA:0\] mw_matmul: verify: .*: OK$' "$T/out" || fail "product not verified: $(tail -30 "$T/out")"
grep -q "mw: cm (cluster clusterA): mwlaunch says clusterB ended (.*): its [0-9]* outstanding tasks go to other workers now" "$T/out" ||
	fail "the main CM was not told at once: $(grep 'mw: cm' "$T/out")"
grep -q "did not say goodbye within\|for 30 s (deadline)" "$T/out" && fail "the deadline was waited for: $(grep deadline "$T/out")"
t_killed=$(jq .seconds "$T/job.json")
awk -v t="$t_killed" 'BEGIN { exit !(t < 30) }' || fail "the job took $t_killed s with a deadline of 30 s"
jq -e '.status == "ok" and .clusters[0].report.joined == .clusters[0].report.tasks and
	.clusters[1].status != "exit 0"' "$T/job.json" > /dev/null || fail "summary: $(cat "$T/job.json")"
killed_done=$(cm_done clusterB)
id1=$(jq -r .id "$T/job.json")
mwlaunch_job || fail "the job after the killed one failed ($?): $(tail -30 "$T/out")"
check_job 2
[ "$(jq -r .id "$T/job.json")" != "$id1" ] || fail "two jobs with the same id $id1"
grep -q "mw: cm: linked to clusterA/cm-clusterB-$(jq -r .id "$T/job.json") " "$T/out" ||
	fail "the remote CM did not link to this job's main CM: $(grep 'linked to' "$T/out")"
echo "measured: clusterB killed mid-run; its CM had $killed_done tasks done; the job took $t_killed s (deadline 30 s); answer verified; the next job at once: ok, its CM did $(cm_done clusterB) tasks"
