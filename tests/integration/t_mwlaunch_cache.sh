#!/usr/bin/env bash
# The sub-master's data cache and the application's coarse grains, counted
# on the wire: the same job (every task on the remote cluster, the main
# cluster has no workers) runs without and with the cache; ldsd's own
# counters show the bytes clusterB received over its link, which must
# shrink by what the runtime says the cache saved.  mw_matmul -k 4 makes
# every task 4 block products, which clusterB's sub-master splits into 4
# tasks for its workers and joins back through the application's hooks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
# Every remote cluster computes a share however late it starts (check_job).
LOAD_BALANCE=false
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_clusters 2 2
rx() { ctl clusterB status --json | jq '.links[0].received.bytes'; }
declare -A got saved
for mib in 0 64; do
	before=$(rx)
	MAIN_WORKERS=0 WORKERS=2 CACHE_MIB=$mib write_job 2 "-n 512 -b 64 -k 4 --verify"
	mwlaunch_job || fail "cache_mib $mib: mwlaunch failed ($?): $(tail -30 "$T/out")"
	check_job 2
	got[$mib]=$(( $(rx) - before ))
	saved[$mib]=$(jq '.clusters[0].report.workers[] | select(.role == "CommManager") | .cache_bytes_saved' "$T/job.json")
	# clusterB ran all 128 tasks as 4 fine tasks each
	jq -e '.clusters[0].report.joined == 128 and .clusters[1].report.tasks == 512 and
		([.clusters[1].report.workers[].done] | add) == 512' "$T/job.json" > /dev/null ||
		fail "cache_mib $mib: tasks do not add up: $(jq -c '[.clusters[].report | {tasks, joined}]' "$T/job.json")"
	jq -e '[.clusters[0].report.workers[] | select(.role == "CommManager") | .wan_series | length] | .[0] >= 1' \
		"$T/job.json" > /dev/null || fail "no WAN time series in the report"
	# The series follows the main gateway's link (lds_link_bytes): it adds
	# up to what clusterB's link received in the job.
	series=$(jq '[.clusters[0].report.workers[] | select(.role == "CommManager") | .wan_series[].out] | add' "$T/job.json")
	awk -v s="$series" -v g="${got[$mib]}" 'BEGIN { exit !(s >= 0.95 * g && s <= g) }' ||
		fail "cache_mib $mib: the WAN series adds up to $series bytes out, clusterB's link received ${got[$mib]}"
	echo "measured: cache_mib $mib: clusterB's link received ${got[$mib]} bytes (the WAN series: $series); the runtime says the cache saved ${saved[$mib]}"
done
[ "${saved[0]}" = 0 ] || fail "the cache saved ${saved[0]} bytes while it was off"
# 128 tasks of 8 blocks of 16 KiB cross as 16 MiB without the cache; with
# it, each of the 128 distinct blocks crosses once (2 MiB).
[ "${got[0]}" -gt 16000000 ] || fail "without the cache only ${got[0]} bytes crossed"
[ "${saved[64]}" -gt 13000000 ] || fail "the cache saved only ${saved[64]} bytes"
diff=$(( got[0] - got[64] ))
awk -v d="$diff" -v s="${saved[64]}" 'BEGIN { exit !(d > 0.95 * s && d < 1.05 * s) }' ||
	fail "the link carried $diff bytes less, the runtime counted ${saved[64]} saved"
echo "measured: the data cache cut clusterB's inbound WAN bytes from ${got[0]} to ${got[64]} ($(( 100 * got[64] / got[0] )) %)"
