#!/usr/bin/env bash
# The end of a run on a slow link: the main cluster finishes every task
# long before the WAN could carry the remote cluster's share (20 Mbit/s,
# 20 ms round trip, 64 KiB tasks, a prefetch of 512 tasks = 32 MiB).  When
# the master has every result, the main CM drops the coarse tasks still
# queued in it and sends STOP behind at most prefetch_mib of tasks already
# handed to its gateway.  Before prefetch_mib the CM handed ldsd all it
# held, and STOP waited behind 32 MiB (13 s at this rate) while the remote
# cluster computed tasks already done.  ENDRUN_PREFETCH_MIB=0 runs it that
# way (no limit): it prints its figures, then fails.
. "$(dirname "$0")/lds_lib.sh"
. "$(dirname "$0")/../integration/mw_lib.sh"
. "$(dirname "$0")/../integration/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_on_netbed 2 'all:delay=10ms,rate=20mbit' 2
CACHE_MIB=0 GRAIN=4 PREFETCH=512 PREFETCH_MIB=${ENDRUN_PREFETCH_MIB:-1} DEADLINE=30 \
	write_job 2 "-n 512 -b 64 --verify"
mwlaunch_job || fail "mwlaunch failed ($?): $(tail -30 "$T/out")"
grep -q '^\[clusterA:0\] mw_matmul: verify: .*: OK$' "$T/out" || fail "product not verified: $(tail -30 "$T/out")"
jq -e '.status == "ok" and .clusters[0].report.joined == .clusters[0].report.tasks' "$T/job.json" > /dev/null ||
	fail "summary: $(cat "$T/job.json")"
line=$(grep -o 'mw: cm (cluster clusterA): stop: dropped [0-9]* queued coarse tasks ([0-9.]* MiB) that had not left; [0-9.]* MiB still on the WAN ahead of the stop' "$T/out") ||
	fail "the main CM did not drop its queue at the stop: $(grep 'mw: cm' "$T/out" | head)"
read -r dropped dropped_mib ahead < <(echo "$line" | sed 's/.*dropped \([0-9]*\) queued coarse tasks (\([0-9.]*\) MiB).*; \([0-9.]*\) MiB still.*/\1 \2 \3/')
wan_out=$(jq '.clusters[0].report.workers[] | select(.host == "cm:clusterB") | .wan_bytes_out' "$T/job.json")
echo "measured: stop with $ahead MiB on the WAN (prefetch_mib ${ENDRUN_PREFETCH_MIB:-1}), $dropped coarse tasks ($dropped_mib MiB) dropped; clusterB got $((wan_out / 1048576)) MiB of 32; the job took $(jq .seconds "$T/job.json") s"
# One coarse task (4 x 64 KiB and headers) may go past the limit.
awk -v a="$ahead" 'BEGIN { exit !(a <= 1.3) }' || fail "$ahead MiB were on the WAN at the stop, prefetch_mib is 1"
[ "$dropped" -gt 0 ] || fail "nothing was queued at the stop: the test did not test"
[ "$wan_out" -lt $((8 * 1048576)) ] || fail "clusterB was sent $wan_out bytes for a run the main cluster did alone"
