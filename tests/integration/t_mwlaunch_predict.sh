#!/usr/bin/env bash
# mwlaunch with a model (docs/model.md): --predict-only prints exactly
# mwpredict's prediction for the same model file (text and JSON); a job
# whose model does not describe it is refused naming the cluster; during a
# run the master's progress line shows the elapsed against the predicted
# time, its report and mwlaunch's summary set the prediction against the
# measurement per cluster and for the job, and the numbers agree with
# each other.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
# Every remote cluster computes a share however late it starts (check_job).
LOAD_BALANCE=false
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_clusters 2 2
# 512 tasks of 2 * 32^3 flop; a worker of 1e8 flop/s runs 1526 tasks/s.
cat > "$T/model.conf" <<EOC
efficiency_threshold = 0.5;
application = { tasks = 512; oper = 65536.0; task_bytes = 16384.0; result_bytes = 8192.0; };
clusters = (
	{ name = "clusterA"; main = true; lan_throughput = 1.0e9; workers = [ 1.0e8 ]; },
	{ name = "clusterB"; lan_throughput = 1.0e9; workers = [ 1.0e8 ]; inet_in = 1.0e8; inet_out = 1.0e8; grain = 4; }
);
EOC
STATS_IV=0.1 write_job 2 "-n 256 -b 32 --verify" 'model = "model.conf";'

"$BIN/mwlaunch" --predict-only "$T/job.conf" > "$T/p.txt" || fail "--predict-only exited $?"
"$BIN/mwpredict" "$T/model.conf" > "$T/mwp.txt" || fail "mwpredict exited $?"
cmp -s "$T/p.txt" "$T/mwp.txt" || fail "--predict-only differs from mwpredict: $(diff "$T/p.txt" "$T/mwp.txt")"
"$BIN/mwlaunch" --predict-only -j "$T/p.json" "$T/job.conf" || fail "--predict-only -j exited $?"
"$BIN/mwpredict" --json "$T/model.conf" > "$T/mwp.json"
cmp -s "$T/p.json" "$T/mwp.json" || fail "--predict-only JSON differs from mwpredict's: $(diff "$T/p.json" "$T/mwp.json")"
jq -e '.multi.time_best > 0 and (.clusters | length) == 2' "$T/p.json" > /dev/null || fail "no prediction in $(cat "$T/p.json")"
# -m names another model; one that does not describe the job is refused.
sed 's/grain = 4;/grain = 2;/' "$T/model.conf" > "$T/other.conf"
out=$("$BIN/mwlaunch" --predict-only -m "$T/other.conf" "$T/job.conf" 2>&1); rc=$?
[ $rc = 2 ] || fail "a model with another grain: exit $rc"
case "$out" in *"other.conf: cluster clusterB has grain 2 there, 4 in the job"*) ;; *) fail "grain mismatch: '$out'" ;; esac
sed 's/workers = \[ 1.0e8 \]; },/workers = [ 1.0e8, 1.0e8 ]; },/' "$T/model.conf" > "$T/other.conf"
out=$("$BIN/mwlaunch" --predict-only -m "$T/other.conf" "$T/job.conf" 2>&1)
case "$out" in *"cluster clusterA has 2 workers there, 1 in the job"*) ;; *) fail "workers mismatch: '$out'" ;; esac
out=$("$BIN/mwlaunch" --predict-only -m "$T/absent.conf" "$T/job.conf" 2>&1); rc=$?
[ $rc = 2 ] || fail "a missing model: exit $rc"
case "$out" in *"absent.conf: cannot read"*) ;; *) fail "missing model: '$out'" ;; esac
write_job 2 "-n 256 -b 32"
out=$("$BIN/mwlaunch" --predict-only "$T/job.conf" 2>&1); rc=$?
[ $rc = 2 ] || fail "--predict-only without a model: exit $rc"
case "$out" in *"--predict-only needs a model"*) ;; *) fail "no model: '$out'" ;; esac

# A run: the prediction goes to the master and the sub-master.
STATS_IV=0.1 write_job 2 "-n 256 -b 32 --verify" 'model = "model.conf";'
mwlaunch_job || fail "mwlaunch failed ($?): $(tail -30 "$T/out")"
check_job 2
best=$(jq .multi.time_best "$T/p.json"); worst=$(jq .multi.time_worst "$T/p.json")
grep -q "^mwlaunch: predicted .* s (best end) to .* s (worst end)" "$T/out" || fail "no prediction before the run"
grep -q "^\[clusterA:0\] mw: .* | [0-9.]* s, predicted $(printf '%.1f-%.1f' "$best" "$worst") s | master busy" "$T/out" ||
	fail "no prediction in the master's progress line: $(grep 'clusterA:0\] mw:' "$T/out" | head -3)"
grep -q '^\[clusterA:0\] Predicted Execution Time: ' "$T/out" || fail "no prediction in the master's report"
grep -q '^\[clusterB:0\] Predicted Execution Time: ' "$T/out" || fail "no prediction in the sub-master's report"
grep -q '^mwlaunch: predicted (model .*model.conf) against measured' "$T/out" || fail "no comparison in the summary"
for c in clusterA clusterB job; do
	grep -q "^  $c  *[0-9]" "$T/out" || fail "no comparison row for $c: $(tail -8 "$T/out")"
done
# The summary's numbers: the prediction's are the model's, the measured
# ones the master's report's, and they add up.
jq -e --slurpfile p "$T/p.json" '
	.prediction as $x | .clusters[0].report as $r |
	($x.job.time_best - $p[0].multi.time_best | fabs) < 1e-6 and
	($x.clusters[1].time_worst - $p[0].clusters[1].time_worst | fabs) < 1e-6 and
	$x.clusters[1].tasks_best == $p[0].clusters[1].workload_best and
	($x.job.time_measured - $r.total_time | fabs) < 1e-5 and
	$x.job.tasks_measured == 512 and
	([$x.clusters[].tasks_measured] | add) == 512 and
	$x.clusters[1].tasks_measured == ($r.workers[] | select(.role == "CommManager") | .done) and
	all($x.clusters[]; .time_measured > 0 and .time_measured <= $r.total_time + 1e-6) and
	($x.job.measured_over_best - $r.total_time / $x.job.time_best | fabs) < 1e-6 and
	$r.predicted_best > 0 and
	all($x.clusters[] , $x.job; .efficiency_measured > 0)' "$T/job.json" > /dev/null ||
	fail "the prediction against the measurement does not add up: $(jq -c .prediction "$T/job.json")"
echo "measured: predicted $best-$worst s, measured $(jq .prediction.job.time_measured "$T/job.json") s"

# --benchmark: calibration runs of tasks spread over the job and probes
# write a model that mwpredict accepts, describing the job, with values
# in plausible bounds.  Two runs: each worker's figure is then the mean of
# the two that each run printed.  192 of the 512 tasks, dealt 1 : 4 (one
# worker each, grain 1 and 4); the remote cluster, started later, is
# waited for (t_mwlaunch_calibrate.sh starts it late on purpose).
"$BIN/mwlaunch" --benchmark -o "$T/bm.conf" --calibrate-tasks 192 --calibrate-repeat 2 --probe-seconds 1 "$T/job.conf" \
	> "$T/bm.out" 2>&1 || fail "--benchmark exited $?: $(tail -20 "$T/bm.out")"
for s in "2 calibration runs of 192 tasks spread over the job's tasks: clusterA 38, clusterB 154;" "calibration 1 of 2, workers: clusterA [0-9.e+]*; clusterB" \
	"calibration 2 of 2, workers: clusterA" "the median of the calibrations, workers: clusterA" \
	"cluster clusterA: LAN" "cluster clusterB: Internet in" "cluster clusterB: Internet out" \
	"model written to $T/bm.conf"; do
	grep -q "^mwlaunch: benchmark: .*$s" "$T/bm.out" || fail "--benchmark did not say '$s': $(cat "$T/bm.out")"
done
"$BIN/mwpredict" --json "$T/bm.conf" > "$T/bm.json" || fail "mwpredict refused the measured model: $(cat "$T/bm.conf")"
"$BIN/mwlaunch" --predict-only -m "$T/bm.conf" "$T/job.conf" > /dev/null || fail "the measured model does not fit the job"
# mw_matmul -n 256 -b 32: 512 tasks of 2 * 32^3 flop, a task two 32 x 32
# blocks of floats (8 KiB), a result one (4 KiB), each with a header; an
# inter-cluster result 4 of them (grain 4); a task less with the data cache.
cfg() { sed -n "s/^[[:space:]]*$1 = \(.*\);$/\1/p" "$T/bm.conf" | sed -n "${2:-1}p"; }
inside() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }' || fail "$4 = $1, not in [$2, $3]: $(cat "$T/bm.conf")"; }
[ "$(cfg tasks)" = 512 ] || fail "tasks $(cfg tasks)"
inside "$(cfg oper)" 65536 65536 oper
inside "$(cfg task_bytes)" 8192 9216 task_bytes
inside "$(cfg result_bytes)" 4096 5120 result_bytes
inside "$(cfg lan_throughput 1)" 1e6 1e12 "clusterA lan_throughput"
inside "$(cfg lan_throughput 2)" 1e6 1e12 "clusterB lan_throughput"
inside "$(cfg inet_in)" 1e5 1e11 inet_in
inside "$(cfg inet_out)" 1e5 1e11 inet_out
inside "$(cfg inter_task_bytes)" 1 $((4 * 9216)) inter_task_bytes
inside "$(cfg inter_result_bytes)" $((4 * 4096)) $((4 * 5120)) inter_result_bytes
for k in 1 2; do
	w=$(cfg workers "$k" | tr -d '()[] ')
	inside "$w" 1e6 1e12 "workers of cluster $k"
	# Each run's figure is printed to 4 digits, the model's to 6.
	runs=$(sed -n "s/^mwlaunch: benchmark: calibration [12] of 2, workers: \(.*\) op\/s$/\1/p" "$T/bm.out" |
		awk -F'; ' -v k="$k" '{ split($k, f, " "); print f[2] }')
	mean=$(echo "$runs" | awk '{ s += $1 } END { if (NR == 2) print s / 2 }')
	inside "$w" "$(awk -v m="$mean" 'BEGIN { print m * 0.999 }')" "$(awk -v m="$mean" 'BEGIN { print m * 1.001 }')" \
		"workers of cluster $k against the mean of its two calibrations ($(echo $runs))"
done
echo "measured: --benchmark: $(jq -c '[.clusters[] | {name, cperf, bound}]' "$T/bm.json")"
