#!/usr/bin/env bash
# bench-failover.sh - issue 24's failover target: a run whose remote
# cluster is killed mid-run (its sub-master SIGKILLed, on_remote_failure =
# "continue") takes at most the no-failure time plus the lost cluster's
# share, plus 2 s.  Side by side in each run, over wanemu (20 ms round
# trip, 100 Mbit/s), mw_matmul on two clusters of one worker each:
#   T0    the run without failure (mwlaunch's seconds);
#   T1    the same run, clusterB killed once the master reports half of
#         the tasks joined (its progress line);
#   share the tasks clusterB did in T0's run but not before its kill,
#         at the main cluster's own pace in T0's run (its tasks / T0):
#         what the main cluster must compute in its place;
#   target T1 <= T0 + share + 2 s; the margin T0 + share + 2 - T1 is printed.
# Medians of RUNS (default 3).  Needs root and /dev/net/tun (skipped otherwise).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/mw_lib.sh"
. "$(dirname "$0")/../integration/mwl_lib.sh"
. "$(dirname "$0")/../wan/netbed.sh"
. "$(dirname "$0")/lib.sh"
mw_bench bench-failover
QUICK=${QUICK:-0}
RUNS=${RUNS:-3}
N=${N:-$([ "$QUICK" = 1 ] && echo 1024 || echo 2048)}
B=${BLOCK:-128}
star_on_netbed 2 'all:delay=10ms,rate=100mbit' 2
LOAD_BALANCE=false ON_REMOTE_FAILURE=default DEADLINE=30 JOB_TIMEOUT=600 write_job 2 "-n $N -b $B --verify"
machine bench-failover
tasks=$(( (N / B) ** 3 ))
echo "bench-failover: mw_matmul -n $N -b $B: $tasks tasks; link 20 ms RTT, 100 Mbit/s; 1 worker per cluster; deadline 30 s"

declare -a t0s t1s shares margins
for r in $(seq 1 "$RUNS"); do
	mwlaunch_job || fail "run $r without failure: mwlaunch failed ($?): $(tail -30 "$T/out")"
	t0=$(jq .seconds "$T/job.json")
	a_done=$(jq '.clusters[0].report.workers[] | select(.role != "CommManager" and .role != "Master") | .done' "$T/job.json" | awk '{s += $1} END {print s}')
	b_done=$(cm_done clusterB)
	mwlaunch_job & mpid=$!
	sub=""
	for _ in $(seq 1 6000); do
		[ -n "$sub" ] || sub=$(role_pid submaster) || sub=""
		[ -n "$sub" ] && grep -q "^\[clusterA:0\] mw: [0-9]*/$tasks tasks (\([5-9][0-9]\|100\)\." "$T/out" && break
		kill -0 "$mpid" 2> /dev/null || break
		sleep 0.05
	done
	[ -n "$sub" ] || fail "run $r: no sub-master to kill"
	kill -9 "$sub"
	wait "$mpid" || fail "run $r with clusterB killed: mwlaunch failed ($?): $(tail -30 "$T/out")"
	grep -q '^\[clusterA:0\] mw_matmul: verify: .*: OK$' "$T/out" || fail "run $r: product not verified"
	t1=$(jq .seconds "$T/job.json")
	b_before=$(cm_done clusterB)
	share=$(awk -v b="$b_done" -v k="$b_before" -v a="$a_done" -v t="$t0" 'BEGIN { l = b - k; if (l < 0) l = 0; printf "%.2f", l * t / a }')
	margin=$(awk -v t0="$t0" -v s="$share" -v t1="$t1" 'BEGIN { printf "%.2f", t0 + s + 2 - t1 }')
	t0s+=("$t0") t1s+=("$t1") shares+=("$share") margins+=("$margin")
	echo "bench-failover: run $r: no failure $t0 s (clusterB $b_done tasks); clusterB killed at half the tasks: $t1 s, it had done $b_before; its lost share at the main cluster's pace $share s; target $t0 + $share + 2 s, margin $margin s"
done
M=$(printf '%s\n' "${margins[@]}" | median)
echo
echo "| measure (median of $RUNS) | value |"
echo "|---|---|"
echo "| run without failure (T0) | $(printf '%s\n' "${t0s[@]}" | median) s |"
echo "| run with clusterB killed at half the tasks (T1) | $(printf '%s\n' "${t1s[@]}" | median) s |"
echo "| clusterB's lost share at the main cluster's pace | $(printf '%s\n' "${shares[@]}" | median) s |"
echo "| margin to the target (T0 + share + 2 s - T1; >= 0 meets it) | $M s |"
awk -v m="$M" 'BEGIN { exit !(m >= 0) }' && echo "bench-failover: target met" || echo "bench-failover: target MISSED"
