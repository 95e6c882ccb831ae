#!/usr/bin/env bash
# A remote cluster away past its deadline, mid-run: a 3-cluster star
# whose main cluster has no workers of its own, so that every task runs
# in clusterB or clusterC (links of 10 Mbit/s, 20 ms round trip).  The
# link to clusterB goes black for OUTAGE s while the job runs; after
# DEADLINE s of silence clusterB's communication manager tells the master,
# which gives clusterB's outstanding tasks to clusterC at once.  When the
# link returns, clusterB's results for those tasks arrive late and are
# dropped and counted, clusterB is back and gets work again, and the
# product is right: every task joined exactly once.
. "$(dirname "$0")/lds_lib.sh"
. "$(dirname "$0")/../integration/mw_lib.sh"
. "$(dirname "$0")/../integration/mwl_lib.sh"
# Every remote cluster computes a share however late it starts (check_job).
LOAD_BALANCE=false
OUTAGE=${OUTAGE:-8}
star_on_netbed 3 'all:delay=10ms,rate=10mbit' 2
MAIN_WORKERS=0 DEADLINE=2 JOB_TIMEOUT=150 \
	write_job 3 "-n 1024 -b 128 --verify"
mwlaunch_job & mpid=$!
outage_mid_run "$mpid" s1-s2 "$OUTAGE"
wait "$mpid" || fail "mwlaunch failed ($?) after the outage: $(tail -30 "$T/out")"
check_job 3
grep -q "^\[clusterA:0\] mw: master: cm:clusterB is away past its deadline" "$T/out" ||
	fail "the master was not told that clusterB is away: $(grep -i 'away\|deadline' "$T/out" | head)"
grep -q "^\[clusterA:0\] mw: master: cm:clusterB is back" "$T/out" || fail "clusterB never came back"
r() { jq --arg h "cm:$1" ".clusters[0].report.workers[] | select(.host == \$h) | .$2" "$T/job.json"; }
forfeited=$(r clusterB forfeited)
late=$(r clusterB late)
echo "measured: clusterB away after ${OUTAGE} s black hole (deadline 2 s): $forfeited tasks forfeited to clusterC, $late late results dropped; done: clusterB $(r clusterB done), clusterC $(r clusterC done) of 512"
[ "$forfeited" -gt 0 ] || fail "no task was taken back from clusterB"
[ "$late" -gt 0 ] && [ "$late" -le "$forfeited" ] || fail "late results: $late (forfeited $forfeited)"
