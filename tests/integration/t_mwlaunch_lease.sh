#!/usr/bin/env bash
# A remote cluster whose job's main side falls silent ends itself after its
# lease.  Here clusterA's gateway is frozen (SIGSTOP) mid-run, so that
# clusterB hears nothing from the main cluster: before, its ranks went on
# computing until the job's timeout (an hour by default) for a job that
# might no longer exist.  Now its CM gives up after `lease` (4 s here),
# the cluster ends, and once the gateway thaws the job finishes on the
# main cluster (on_remote_failure's default, "continue") with a verified
# product.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_clusters 2 2
ON_REMOTE_FAILURE=default DEADLINE=60 write_job 2 "-n 1024 -b 64 --verify"
sed -i 's/deadline = 60;/deadline = 60; lease = 4;/' "$T/job.conf"
grep -q "lease = 4;" "$T/job.conf" || fail "could not set the lease"
mwlaunch_job & mpid=$!
PIDS="$PIDS $mpid"
wait_log "$T/out" '^\[clusterB:0\] mw: [1-9][0-9]*/' 60 || fail "clusterB did not start working: $(tail "$T/out")"
# Thawed on any exit, so that the cleanup can stop it.
trap 'kill -CONT "$PID_clusterA" 2> /dev/null; cleanup' EXIT
kill -STOP "$PID_clusterA"
t0=$(date +%s.%N)
wait_log "$T/out" "^mwlaunch: remote cluster clusterB failed" 30 ||
	fail "clusterB did not end within 30 s of the main side's silence: $(tail -20 "$T/out")"
t_end=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
grep -q "mw: cm (cluster clusterB): nothing from clusterA/cm-clusterB-[0-9a-f]* for 4 s (lease)" "$T/out" ||
	fail "the lease did not end clusterB: $(grep 'clusterB' "$T/out" | tail -5)"
kill -CONT "$PID_clusterA"
wait "$mpid" || fail "the job did not finish on the main cluster ($?): $(tail -30 "$T/out")"
grep -q '^\[clusterA:0\] mw_matmul: verify: .*: OK$' "$T/out" || fail "product not verified: $(tail -30 "$T/out")"
jq -e '.status == "ok" and .clusters[1].status != "exit 0"' "$T/job.json" > /dev/null ||
	fail "summary: $(jq -c '[.status, .clusters[].status]' "$T/job.json")"
echo "measured: clusterA's gateway frozen mid-run; clusterB ended itself $t_end s later (lease 4 s); the main cluster finished the job, verified"
