#!/usr/bin/env bash
# A 40 s outage in mid-run: two clusters over wanemu (50 Mbit/s, 40 ms
# round trip), every task on the remote cluster (the main cluster has no
# workers of its own), and the link black for OUTAGE s (default 30, to keep
# make check within its 15 minutes; longer ones: OUTAGE=600) while
# the job runs.  The deadline (120 s) is longer than the outage, so
# nothing is reassigned: clusterB keeps what it holds, its results wait
# in its gateway and arrive when the link returns, and the job goes on
# and ends with the verified product.  The master's WAN time series shows
# the silence and the traffic after it.
# lane: background
# (run-all.sh runs it beside the other WAN tests: 30 of its ~40 s are the
# outage; nothing in it is held to the wall clock closer than 5 s.)
. "$(dirname "$0")/lds_lib.sh"
. "$(dirname "$0")/../integration/mw_lib.sh"
. "$(dirname "$0")/../integration/mwl_lib.sh"
# Every remote cluster computes a share however late it starts (check_job).
LOAD_BALANCE=false
OUTAGE=${OUTAGE:-30}
star_on_netbed 2 'all:delay=20ms,rate=50mbit' 2
MAIN_WORKERS=0 DEADLINE=120 JOB_TIMEOUT=$((OUTAGE + 120)) write_job 2 "-n 1024 -b 128 --verify --stats-log $T/series.tsv"
start=$(date +%s)
mwlaunch_job & mpid=$!
outage_mid_run "$mpid" s1-s2 "$OUTAGE"
wait "$mpid" || fail "mwlaunch failed ($?) after the outage: $(tail -30 "$T/out")"
secs=$(( $(date +%s) - start ))
check_job 2
jq -e '.clusters[0].report.workers[0] | .done == 512 and .forfeited == 0 and .late == 0' "$T/job.json" > /dev/null ||
	fail "clusterB's share: $(jq -c '.clusters[0].report.workers[0] | {done, forfeited, late}' "$T/job.json")"
# The WAN samples (one a second): a silence at least OUTAGE - 5 s long
# from clusterB, then its results again.
jq -r '.clusters[0].report.workers[0].wan_series[] | .in' "$T/job.json" | awk -v want=$((OUTAGE - 5)) '
	$1 == 0 { run++; if (run > best) best = run; next }
	{ if (best >= want) after += $1; run = 0 }
	END { printf "measured: longest silence from clusterB %d s, then %d bytes\n", best, after; exit !(best >= want && after > 0) }' ||
	fail "the WAN time series does not show the outage and the traffic after it"
grep -q 'to:cm:clusterB	from:cm:clusterB' "$T/series.tsv" || fail "no WAN columns in the --stats-log series"
echo "measured: ${OUTAGE} s outage mid-run: job done in $secs s, product verified, clusterB computed all 512 tasks"
