#!/usr/bin/env bash
# bench-mwlaunch.sh - issue 6: block matrix multiplication on two emulated
# clusters, each with its own ldsd, joined by wanemu (100 ms round trip,
# 50 Mbit/s), against the main cluster alone, side by side in each run;
# medians of RUNS.
#   main cluster alone: mpirun -np 2 mw_matmul (master + 1 worker)
#   two clusters:       mwlaunch: clusterA master + 1 worker + CM,
#                       clusterB sub-master + CM + 1 worker
#   speedup = alone / two clusters (the master's Total Execution Time);
#   multi-cluster efficiency = speedup / 2 (clusterB has as many workers
#   as clusterA: twice the computing power).
# The grain is chosen for the link: a task is a whole C block (-k = N/B
# block products, about 90 ms on this machine), which clusterB's
# sub-master splits into single products for its worker and joins back,
# so one block returns per task; the data cache sends each block of A and
# B over the WAN once, and mw_matmul's scheduler gives clusterB the rows
# of C from the end, so that it keeps using the rows of A it holds.
# Needs root and /dev/net/tun (skipped otherwise).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/mw_lib.sh"
. "$(dirname "$0")/../integration/mwl_lib.sh"
. "$(dirname "$0")/../wan/netbed.sh"
. "$(dirname "$0")/lib.sh"
mw_bench bench-mwlaunch
QUICK=${QUICK:-0}
RUNS=${RUNS:-3}
N=${N:-$([ "$QUICK" = 1 ] && echo 2048 || echo 4096)}
B=${BLOCK:-256}
K=${KSTEPS:-$((N / B))}

star_on_netbed 2 'all:delay=50ms,rate=50mbit' 4
ARGS="-n $N -b $B -k $K"
GRAIN=1 PREFETCH=4 DEADLINE=60 CACHE_MIB=256 JOB_TIMEOUT=600 FRAMEWORK="PickWindow = 256;" \
	write_job 2 "$ARGS --quiet"
# The main cluster alone runs with the job's framework entries.
sed -n 's/^framework = { \(.*\) };$/\1/p' "$T/job.conf" > "$T/mw.conf"
machine bench-mwlaunch
echo "bench-mwlaunch: mw_matmul $ARGS: $((N / B * N / B * N / B / K)) tasks; link 100 ms RTT, 50 Mbit/s; grain 1, prefetch 4, cache 256 MiB"
declare -a alone two sp eff share
for r in $(seq 1 "$RUNS"); do
	timeout 600 mpirun --oversubscribe -np 2 "$MWBIN/mw_matmul" $ARGS -c "$T/mw.conf" --quiet --json "$T/alone.json" \
		> "$T/alone.out" 2>&1 || fail "main cluster alone failed: $(tail "$T/alone.out")"
	mwlaunch_job || fail "mwlaunch failed ($?): $(tail -30 "$T/out")"
	alone+=("$(jq .total_time "$T/alone.json")")
	two+=("$(jq .clusters[0].report.total_time "$T/job.json")")
	sp+=("$(ratio "${alone[-1]}" "${two[-1]}")")
	eff+=("$(awk -v s="${sp[-1]}" 'BEGIN {printf "%.1f", 100 * s / 2}')")
	share+=("$(jq '.clusters[0].report | (.workers[] | select(.role == "CommManager") | .done) * 100 / .tasks | round' "$T/job.json")")
	w=$(jq -c '.clusters[0].report.workers[] | select(.role == "CommManager") |
		{out: (.wan_bytes_out / 1048576 | round), in: (.wan_bytes_in / 1048576 | round),
		 saved: (.cache_bytes_saved / 1048576 | round)}' "$T/job.json")
	echo "bench-mwlaunch: run $r: alone ${alone[-1]} s, two clusters ${two[-1]} s, speedup ${sp[-1]}, efficiency ${eff[-1]} %, clusterB did ${share[-1]} % of the tasks; WAN MiB $w"
done
S=$(printf '%s\n' "${sp[@]}" | median)
echo
echo "| measure (median of $RUNS) | value |"
echo "|---|---|"
echo "| main cluster alone (master + 1 worker) | $(printf '%s\n' "${alone[@]}" | median) s |"
echo "| two clusters over wanemu (1 + 1 workers) | $(printf '%s\n' "${two[@]}" | median) s |"
echo "| speedup over the main cluster alone | $S |"
echo "| multi-cluster efficiency (speedup / 2) | $(printf '%s\n' "${eff[@]}" | median) % |"
echo "| tasks computed by clusterB | $(printf '%s\n' "${share[@]}" | median) % |"
