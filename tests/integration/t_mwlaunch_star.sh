#!/usr/bin/env bash
# Three clusters in a star (clusterA's gateway linked to clusterB's and
# clusterC's): mw_matmul verified, both remote clusters computed a share,
# one with grain 1 (passthrough) and one with grain 8.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
# Every remote cluster computes a share however late it starts (check_job).
LOAD_BALANCE=false
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_clusters 3 2
write_job 3 "-n 256 -b 32 --verify"
sed -i '0,/grain = 4;/s//grain = 1;/; 0,/grain = 4;/s//grain = 8;/' "$T/job.conf"
# The grains reach the communication managers that bundle the tasks.
"$BIN/mwlaunch" --dry-run "$T/job.conf" > "$T/dry" || fail "--dry-run failed"
grep -q -- "-x MWL_REMOTE=clusterB -x MWL_GRAIN=1 " "$T/dry" && grep -q -- "-x MWL_REMOTE=clusterC -x MWL_GRAIN=8 " "$T/dry" ||
	fail "the CMs do not get grain 1 for clusterB and 8 for clusterC: $(grep -o 'MWL_REMOTE=[^ ]* -x MWL_GRAIN=[0-9]*' "$T/dry")"
# -j -: standard output is the JSON summary alone, everything else on
# standard error.
timeout 200 "$BIN/mwlaunch" -j - "$T/job.conf" > "$T/job.json" 2> "$T/out" || fail "mwlaunch failed ($?): $(tail -30 "$T/out")"
[ "$(jq -s length "$T/job.json")" = 1 ] || fail "-j -: standard output is not one JSON document: $(head -c 300 "$T/job.json")"
check_job 3
echo "measured: of 512 tasks clusterB (grain 1) computed $(cm_done clusterB), clusterC (grain 8) $(cm_done clusterC)"
