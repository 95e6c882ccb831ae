#!/usr/bin/env bash
# t_mwpredict.sh - mwpredict on conf/model-example.conf (values computed by
# hand below, from the formulas of docs/model.md) and on broken model files
# (exit status, and an error naming file, line and setting).
. "$(dirname "$0")/lib.sh"

P=$BIN/mwpredict
EX=$ROOT/conf/model-example.conf
command -v jq >/dev/null || { echo "jq missing (tools/install-deps.sh installs it)"; exit 77; }
[ -x "$P" ] || fail "$P not built"

# near JSON_VALUE EXPECTED: equal within 1e-6 relative.
near() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; if (m < 1) m = 1;
		exit !(d <= 1e-6 * m) }' || fail "got $1, expected $2 ($3)"
}
# j FILTER: a value from the prediction of the example.
j() { jq -r "$1" "$T/ex.json"; }

"$P" --json "$EX" > "$T/ex.json" || fail "mwpredict --json exited $?"
jq -e . "$T/ex.json" >/dev/null || fail "--json output is not JSON"
for f in name steady_performance bound startup best_end worst_end min_workload workload_best workload_worst \
	time_best time_worst efficiency_best efficiency_worst; do
	[ "$(j "[.clusters[] | has(\"$f\")] | all")" = true ] || fail "a cluster lacks $f"
done
for f in time_best time_worst efficiency_best efficiency_worst; do
	[ "$(j ".multi | has(\"$f\")")" = true ] || fail "multi lacks $f"
done

# local: CPerf = 3 * 1.6e8 + 8e7 = 5.6e8 op/s; LAN feeds 1.6e7 * 1.25e8 /
# (640000 + 320000) = 2.08e9: CPU bound.  Tc_Task = 640000 / 1.25e8 =
# 5.12 ms, T_Up = 5.12 ms * (4 + 1) / 2 = 0.0128 s; Tc_Result = 2.56 ms,
# T_BestEnd = 0.0064 s; T_WorstEnd = (1.6e7 / 8e7) * 3 / 4 + 0.00256 =
# 0.15256 s; minimum workload (eq. 59) = (0.0128 + 0.15256) * 5.6e8 * 0.9 /
# 0.1 = 8.334e8 op = 52.09 -> 53 tasks.
[ "$(j '.clusters[0].bound')" = cpu ] || fail "local bound $(j '.clusters[0].bound')"
near "$(j '.clusters[0].steady_performance')" 5.6e8 "local steady"
near "$(j '.clusters[0].startup')" 0.0128 "local startup"
near "$(j '.clusters[0].best_end')" 0.0064 "local best end"
near "$(j '.clusters[0].worst_end')" 0.15256 "local worst end"
near "$(j '.clusters[0].min_workload')" 53 "local min workload"
# east (grain 4): Internet in feeds 1.6e7 * 4 * 1.25e7 / 1.28e6 = 6.25e8
# < CPerf 6.4e8 (out the same, the tie goes to inet_in).  T_Up (eq. 20-21):
# one inter-cluster task of 1.28e6 / 1.25e7 = 0.1024 s, then 1..4 LAN tasks
# of 5.12 ms: 0.1024 + 2.5 * 0.00512 = 0.1152 s.  Best end: 0.1024 + 2.5 *
# 0.00256 = 0.1088 s.  Worst: eq. 54 0.1 * 3/4 + 0.00256 + 0.1024 = 0.17996
# s > eq. 56 4 * 0.00256 + 1 * 0.1024 = 0.11264.  Minimum workload (eq. 58):
# 0.29516 * 6.25e8 * 5.76e8 / (6.25e8 - 5.76e8) = 2.1685e9 op = 135.5 -> 136.
[ "$(j '.clusters[1].bound')" = inet_in ] || fail "east bound $(j '.clusters[1].bound')"
near "$(j '.clusters[1].steady_performance')" 6.25e8 "east steady"
near "$(j '.clusters[1].startup')" 0.1152 "east startup"
near "$(j '.clusters[1].best_end')" 0.1088 "east best end"
near "$(j '.clusters[1].worst_end')" 0.17996 "east worst end"
near "$(j '.clusters[1].min_workload')" 136 "east min workload"
# west (one-to-one): in feeds 1.6e7 * 2.5e6 / 640000 = 6.25e7 of 3.2e8:
# 19.5 % < 0.9, no minimum workload (null).  T_Up (eq. 18): 0.256 * 3/2 +
# 0.0512 = 0.4352 s.  Worst end: eq. 49 0.1 / 2 + 0.0256 + 0.064 = 0.1396 <
# eq. 51 0.0256 + 2 * 0.064 = 0.1536 s.
[ "$(j '.clusters[2].bound')" = inet_in ] || fail "west bound"
[ "$(j '.clusters[2].min_workload')" = null ] || fail "west min workload $(j '.clusters[2].min_workload')"
near "$(j '.clusters[2].startup')" 0.4352 "west startup"
near "$(j '.clusters[2].worst_end')" 0.1536 "west worst end"
# Balance with best ends (eq. 61): overheads 0.0192, 0.224, 0.5568 s;
# T = (1.6e10 + 0.0192 * 5.6e8 + 0.224 * 6.25e8 + 0.5568 * 6.25e7) /
# 1.2475e9 = 12.9744 s; east (12.9744 - 0.224) * 6.25e8 / 1.6e7 = 498.1 ->
# 125 inter-cluster tasks = 500; west 48.5 -> 49; local the rest, 451.
# West would then take 0.4352 + 49 * 1.6e7 / 6.25e7 + 0.1216 = 13.1008 s,
# the longest; one task from west to local (the sink) shortens the run:
# west 48 ends at 12.8448 s, local 452 at 0.0192 + 452 * 1.6e7 / 5.6e8 =
# 12.93349 s, and east is the slowest at 0.224 + 500 * 1.6e7 / 6.25e8 =
# 13.024 s (a task to east would take 4: one inter-cluster task).
[ "$(j '[.clusters[].workload_best] | join(",")')" = 452,500,48 ] || fail "best workloads $(j '[.clusters[].workload_best] | join(",")')"
near "$(j '.multi.time_best')" 13.024 "multi best time"
near "$(j '.clusters[0].time_best')" "$(awk 'BEGIN { printf "%.10g", 0.0192 + 452 * 1.6e7 / 5.6e8 }')" "local best time"

# --select: west's links saturate (each 1.6e8 > 6.25e7 / 0.9): both released.
# Worst balance of local and east: T = (1.6e10 + 0.16536 * 5.6e8 + 0.29516 *
# 6.25e8) / 1.185e9 = 13.736 s; east 525.0 -> 131 * 4 = 524; local 476 and
# 0.16536 + 476 * 1.6e7 / 5.6e8 = 13.76536 s.
"$P" -j --select "$EX" > "$T/sel.json" || fail "--select exited $?"
[ "$(jq -r '.selection[2].kept' "$T/sel.json")" = 0 ] || fail "west kept computers"
[ "$(jq -r '[.selection[2].workers[].state] | join(",")' "$T/sel.json")" = steady,steady ] || fail "west states"
[ "$(jq -r '.clusters | map(.workload_worst) | join(",")' "$T/sel.json")" = 476,524,0 ] || fail "selected workloads"
near "$(jq -r '.multi.time_worst' "$T/sel.json")" 13.76536 "selected worst time"
jq -e '[.clusters[] | select(.workload_worst > 0) | .efficiency_worst >= 0.9] | all' "$T/sel.json" >/dev/null ||
	fail "a selected cluster is below the threshold"

# --tune: a coarser grain for west (inter-cluster tasks grow as sqrt(N))
# lets it keep a computer and shortens the run.
"$P" -j -t "$EX" > "$T/tune.json" || fail "--tune exited $?"
jq -e '.tuning[] | select(.name == "west") | .grain_to > 1 and .kept_to >= 1 and .time_worst_to < .time_worst_from' \
	"$T/tune.json" >/dev/null || fail "no useful grain for west: $(jq -c .tuning "$T/tune.json")"
"$P" -t -s "$EX" > "$T/report.txt" || fail "report exited $?"
grep -q "west: grain 1 ->" "$T/report.txt" || fail "report lacks the tuning line"
grep -q "west: keeps 0 of 2" "$T/report.txt" || fail "report lacks the selection"

# A model measured in tasks (mwlaunch --benchmark without the application's
# ops_per_task writes oper = 1 and performances in tasks/s): the text
# table shows the rates (it printed "0" Mop/s).
cat > "$T/tasks.conf" <<'EOM'
efficiency_threshold = 0.5;
application = { tasks = 2000; oper = 1; task_bytes = 100; result_bytes = 100; };
clusters = ( { name = "a"; main = true; lan_throughput = 1.25e8; workers = [ 300.0, 250.0 ]; } );
EOM
"$P" "$T/tasks.conf" > "$T/tasks.txt" || fail "tasks-model: exit $?"
grep -Eq '^a +2 +1 +550 +550 ' "$T/tasks.txt" || fail "rates in tasks/s not shown: $(cat "$T/tasks.txt")"

# Usage errors exit 2, --help 0.
"$P" --help | grep -q "usage: mwpredict" || fail "--help"
"$P" > /dev/null 2>&1; [ $? = 2 ] || fail "no file: not exit 2"
"$P" --bogus "$EX" > /dev/null 2>&1; [ $? = 2 ] || fail "unknown option: not exit 2"
"$P" "$EX" "$EX" > /dev/null 2>&1; [ $? = 2 ] || fail "two files: not exit 2"

# bad_file NAME EXPECTED-STDERR-TEXT: exit 1 and the error names file:line.
bad_file() {
	local out rc
	out=$("$P" "$T/$1" 2>&1 >/dev/null); rc=$?
	[ $rc = 1 ] || fail "$1: exit $rc, expected 1"
	case "$out" in *"$T/$1$2"*) ;; *) fail "$1: error '$out' lacks '$T/$1$2'" ;; esac
}
# A negative worker on line 32 of a copy of the example.
sed 's/workers = \[ 1.6e8, 1.6e8, 1.6e8, 8.0e7 \]/workers = [ 1.6e8, -1.0e8, 1.6e8, 8.0e7 ]/' "$EX" > "$T/neg.conf"
line=$(grep -n -- '-1.0e8, 1.6e8' "$T/neg.conf" | cut -d: -f1)
[ -n "$line" ] || fail "could not make neg.conf"
bad_file neg.conf ":$line: clusters.[0].workers.[1]: must be > 0 (got -1e+08)"
sed 's/inet_out = 5.0e6;//' "$EX" > "$T/noout.conf"
line=$(grep -n 'name = "west"' "$T/noout.conf" | cut -d: -f1)
bad_file noout.conf ":$((line - 1)): clusters.[2].inet_out: missing (required)"
sed 's/efficiency_threshold = 0.9;/efficiency_threshold = 1.5;/' "$EX" > "$T/thr.conf"
line=$(grep -n '^efficiency_threshold' "$T/thr.conf" | cut -d: -f1)
bad_file thr.conf ":$line: efficiency_threshold: must be between 0 and 1"
sed 's/grain = 4;/grian = 4;/' "$EX" > "$T/typo.conf"
line=$(grep -n 'grian' "$T/typo.conf" | cut -d: -f1)
bad_file typo.conf ":$line: clusters.[1].grian: unknown setting"
printf 'efficiency_threshold = 0.9;\napplication = { tasks = ; };\n' > "$T/syntax.conf"
bad_file syntax.conf ":2: syntax error"
out=$("$P" "$T/absent.conf" 2>&1); [ $? = 1 ] || fail "missing file: not exit 1"
case "$out" in *"$T/absent.conf: cannot read"*) ;; *) fail "missing file: '$out'" ;; esac
echo "ok"
