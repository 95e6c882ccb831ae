#!/usr/bin/env bash
# mwlaunch --benchmark with remote clusters that start late (issue: a
# remote cluster slow to start got no calibration task and the whole
# benchmark failed).  The job's mpirun is a wrapper that holds back the
# start of the clusters named in SLOW (name:seconds ...), as a remote site
# slow to come up does.
#  1. clusterB starts 4 s after the main cluster, whose worker alone runs
#     the whole calibration in well under a second: every run still
#     measures clusterB, because the master waits for it to join and
#     deals it its own tasks; the model describes both clusters.
#  2. Three clusters, clusterC never starts within the join wait: the
#     benchmark names it, says why, writes the model of clusterA and
#     clusterB (which mwpredict accepts) and exits 1.
# lane: background
# (run-all.sh runs it beside the other integration tests: most of its
# ~45 s is waiting - clusterB's late start, clusterC's join wait, and the
# 17 s mwlaunch gives a remote cluster after the main one ended - and it
# checks what was measured, never how fast.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
cat > "$T/slow-mpirun" <<'EOS'
#!/usr/bin/env bash
# Holds back a cluster's mpirun: SLOW="clusterB:4 clusterC:600".
for a in "$@"; do
	for s in $SLOW; do [ "$a" = "MWL_CLUSTER=${s%%:*}" ] && { sleep "${s#*:}"; break 2; }; done
done
exec mpirun "$@"
EOS
chmod +x "$T/slow-mpirun"
export SLOW
cfg() { sed -n "s/^[[:space:]]*$1 = \(.*\);$/\1/p" "$2"; }

star_clusters 3 2

# Refused before anything starts: fewer tasks than the clusters' workers x
# grain (1 + 4), a join wait not below link_timeout (20 s).
write_job 2 "-n 256 -b 32"
out=$("$BIN/mwlaunch" --benchmark --calibrate-tasks 4 -o "$T/no.conf" "$T/job.conf" 2>&1); rc=$?
[ $rc = 1 ] && [[ "$out" == *"--calibrate-tasks 4: every cluster needs a task per worker and grain, 5 in all"* ]] ||
	fail "--calibrate-tasks 4: exit $rc: $out"
out=$("$BIN/mwlaunch" --benchmark --join-wait 20 -o "$T/no.conf" "$T/job.conf" 2>&1); rc=$?
[ $rc = 1 ] && [[ "$out" == *"--join-wait 20 s is not below the job's link_timeout (20 s)"* ]] ||
	fail "--join-wait 20: exit $rc: $out"
out=$("$BIN/mwlaunch" --benchmark --join-wait soon "$T/job.conf" 2>&1); rc=$?
[ $rc = 2 ] && [[ "$out" == *"--join-wait: expected 0 to 3600 seconds, got 'soon'"* ]] || fail "--join-wait soon: exit $rc: $out"
[ -e "$T/no.conf" ] && fail "a refused benchmark wrote a model"

# 1. Late by 4 s: the join wait (20 s, half of link_timeout) covers it,
# with room for a slow start on a loaded machine.
LINK_TIMEOUT=40 write_job 2 "-n 256 -b 32" "mpirun = \"$T/slow-mpirun\";"
SLOW="clusterB:4" timeout 200 "$BIN/mwlaunch" --benchmark -o "$T/late.conf" --calibrate-repeat 2 --probe-seconds 1 \
	"$T/job.conf" > "$T/late.out" 2>&1 || fail "--benchmark with clusterB 4 s late exited $?: $(tail -20 "$T/late.out")"
# 1 worker x grain 1 and 1 x grain 4: 16 x 5 = 80 tasks, 16 and 64.
grep -q "^mwlaunch: benchmark: 2 calibration runs of 80 tasks spread over the job's tasks: clusterA 16, clusterB 64; each run waits up to 20 s" \
	"$T/late.out" || fail "no plan of the calibration: $(head -5 "$T/late.out")"
for r in 1 2; do
	grep -q "^mwlaunch: benchmark: calibration $r of 2, workers: clusterA [0-9.e+]*; clusterB [0-9.e+]* op/s$" "$T/late.out" ||
		fail "calibration $r did not measure both clusters: $(cat "$T/late.out")"
done
grep -q "left out" "$T/late.out" && fail "a cluster was left out: $(cat "$T/late.out")"
# The LAN probe keeps the workers' PrefetchDepth (the default, 2) in flight.
grep -q "^mwlaunch: benchmark: cluster clusterB: LAN, 1 s of [0-9]*-byte tasks and [0-9]*-byte results, 2 in flight$" \
	"$T/late.out" || fail "no LAN probe of clusterB with 2 in flight: $(grep LAN "$T/late.out")"
[ "$(cfg name "$T/late.conf" | tr '\n' ' ')" = '"clusterA" "clusterB" ' ] || fail "model clusters: $(cat "$T/late.conf")"
"$BIN/mwlaunch" --predict-only -m "$T/late.conf" "$T/job.conf" > /dev/null || fail "the measured model does not fit the job"
echo "measured: clusterB 4 s late: $(grep -c '^mwlaunch: benchmark: calibration [12] of 2' "$T/late.out") calibration runs measured both clusters"

# 2. clusterC does not come within the join wait of 10 s (it would after
# 600 s; mwlaunch stops it 2 + 15 s after the main cluster ended), while
# clusterB, started at once, joins well within it.
DEADLINE=2.0 write_job 3 "-n 256 -b 32" "mpirun = \"$T/slow-mpirun\";"
SLOW="clusterC:600" timeout 200 "$BIN/mwlaunch" --benchmark -o "$T/part.conf" --calibrate-repeat 1 --probe-seconds 1 \
	--join-wait 10 "$T/job.conf" > "$T/part.out" 2>&1; rc=$?
[ $rc = 1 ] || fail "--benchmark without clusterC: exit $rc, not 1: $(tail -20 "$T/part.out")"
for s in "^mwlaunch: benchmark: calibration 1: cluster clusterC did not join within 10 s; it is left out$" \
	"^mwlaunch: benchmark: calibration 1 of 1, workers: clusterA [0-9.e+]*; clusterB [0-9.e+]* op/s$" \
	"^mwlaunch: benchmark: cluster clusterB: Internet in" "^mwlaunch: benchmark: model written to $T/part.conf" \
	"^mwlaunch: --benchmark: the model describes the other clusters only, without clusterC"; do
	grep -q "$s" "$T/part.out" || fail "--benchmark without clusterC did not say '$s': $(cat "$T/part.out")"
done
grep -q "cluster clusterC: \(LAN\|Internet\)" "$T/part.out" && fail "clusterC was probed: $(cat "$T/part.out")"
[ "$(cfg name "$T/part.conf" | tr '\n' ' ')" = '"clusterA" "clusterB" ' ] || fail "model clusters: $(cat "$T/part.conf")"
grep -q "^# Cluster clusterC is not in this model: it did not join within 10 s in a calibration run.$" "$T/part.conf" ||
	fail "the model does not say why clusterC is missing: $(head -8 "$T/part.conf")"
"$BIN/mwpredict" "$T/part.conf" > /dev/null || fail "mwpredict refused the model of the others: $(cat "$T/part.conf")"
echo "measured: clusterC absent: model of $(cfg name "$T/part.conf" | tr -d '"' | tr '\n' ' ')written, exit $rc"
