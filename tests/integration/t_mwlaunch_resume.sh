#!/usr/bin/env bash
# Resume under mwlaunch, as under mpirun: the master of a two-cluster job
# is killed mid-run (SIGKILL), then the same job with --resume replays the
# journal and runs only the rest, with both clusters, and the product is
# right.  It failed two times in three ("worker 2 sent RESULT for task
# 177: it does not hold that task": the killed job's messages, still
# queued in the gateways, reached the new one).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_clusters 2 2
write_job 2 "-n 1024 -b 64 --verify --journal $T/journal"
mwlaunch_job & mpid=$!
PIDS="$PIDS $mpid"
wait_log "$T/out" '^\[clusterA:0\] mw: [1-9][0-9]*/4096' 60 && wait_log "$T/out" '^\[clusterB:0\] mw: [1-9][0-9]*/' 60 ||
	fail "the job did not get going: $(tail "$T/out")"
master=""
for p in $(pgrep -s 0 mw_matmul 2> /dev/null); do
	tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qx MWL_ROLE=master && master=$p
done
[ -n "$master" ] || fail "no master running"
kill -9 "$master"
wait "$mpid" && fail "the job survived its master's SIGKILL"
write_job 2 "-n 1024 -b 64 --verify --journal $T/journal --resume"
mwlaunch_job || fail "the resumed job failed ($?): $(tail -30 "$T/out")"
grep -q '^\[clusterA:0\] mw_matmul: verify: .*: OK$' "$T/out" || fail "product not verified: $(tail -30 "$T/out")"
jq -e '.status == "ok" and all(.clusters[]; .status == "exit 0") and .clusters[1].report.joined > 0' "$T/job.json" \
	> /dev/null || fail "summary: $(jq -c '[.status, .clusters[].status, .clusters[1].report.joined]' "$T/job.json")"
replayed=$(jq .clusters[0].report.replayed "$T/job.json")
[ "$replayed" -gt 0 ] && [ "$(jq .clusters[0].report.joined "$T/job.json")" = $((4096 - replayed)) ] ||
	fail "resume replayed $replayed and joined $(jq .clusters[0].report.joined "$T/job.json") of 4096"
echo "measured: master killed mid-run; the resumed job replayed $replayed, ran the rest on both clusters (clusterB $(cm_done clusterB)), verified"
