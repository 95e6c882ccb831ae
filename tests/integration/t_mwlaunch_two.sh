#!/usr/bin/env bash
# mwlaunch runs mw_matmul over two clusters whose gateways are on
# loopback: the product is verified, the remote cluster computed a share
# through its communication managers and sub-master at grain 4, every
# output line is tagged with cluster and rank, --dry-run shows the
# roles without starting anything, and clusterB's ranks run on the CPUs
# its cpus and worker_cpus settings name (the last and the first this
# test may use).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
# Every remote cluster computes a share however late it starts (check_job).
LOAD_BALANCE=false
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_clusters 2 2
cpus=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
first=${cpus%%[-,]*} last=${cpus##*[-,]}
CPUS=$last WORKER_CPUS=$first write_job 2 "-n 256 -b 32 --verify"
"$BIN/mwlaunch" --dry-run "$T/job.conf" > "$T/dry" || fail "--dry-run failed"
grep -c "^mpirun --oversubscribe" "$T/dry" | grep -qx 2 || fail "--dry-run: not one mpirun per cluster: $(cat "$T/dry")"
for r in "rank 0: master" "rank 2: cm" "rank 0: submaster" "rank 1: cm" "MWL_REMOTE=clusterB" "MWL_GRAIN=4" \
	"MWL_ROLE=submaster .* taskset -c $last " "MWL_ROLE=worker -x MWL_CLUSTER=clusterB .* taskset -c $first "; do
	grep -q -- "$r" "$T/dry" || fail "--dry-run lacks '$r': $(cat "$T/dry")"
done
# --stats-log and --plot describe the whole job: the main cluster's master
# alone gets them (every cluster's hub wrote the same file).
sed 's/args = \[/args = [ "--stats-log", "s.tsv", "--plot=p.png", /' "$T/job.conf" > "$T/job2.conf"
"$BIN/mwlaunch" --dry-run "$T/job2.conf" > "$T/dry2" || fail "--dry-run with --stats-log failed"
[ "$(grep -o -- "--stats-log s.tsv" "$T/dry2" | wc -l)" = 1 ] && [ "$(grep -o -- "--plot=p.png" "$T/dry2" | wc -l)" = 1 ] &&
	grep -q -- "MWL_ROLE=master .*--stats-log s.tsv --plot=p.png" "$T/dry2" ||
	fail "--stats-log/--plot not for the master alone: $(grep -o -- "MWL_ROLE=[a-z]*\|--stats-log s.tsv\|--plot=p.png" "$T/dry2" | tr '\n' ' ')"
mwlaunch_job & job=$!
# Where clusterB's ranks (found by their gateway socket) may run, seen
# while the job runs: "ROLE CPUS", each process's last sample.  Earlier
# ones can be passing: hwloc's topology discovery in MPI_Init binds the
# process to each CPU in turn to read it, then puts the mask back.
for _ in $(seq 1 600); do
	for p in $(pgrep -x mw_matmul); do
		env=$(tr '\0' '\n' 2> /dev/null < "/proc/$p/environ")
		c=$(awk '/^Cpus_allowed_list/ {print $2}' "/proc/$p/status" 2> /dev/null)
		grep -qx "LDS_SOCKET=$T/clusterB.sock" <<< "$env" && [ -n "$c" ] &&
			echo "$p $(sed -n 's/^MWL_ROLE=//p' <<< "$env") $c"
	done
	kill -0 "$job" 2> /dev/null || break
	sleep 0.05
done | awk '{last[$1] = $2 " " $3} END {for (p in last) print last[p]}' | sort -u > "$T/cpus"
wait "$job" || fail "mwlaunch failed ($?): $(tail -30 "$T/out")"
grep -q "^worker $first$" "$T/cpus" && grep -q "^submaster $last$" "$T/cpus" &&
	awk -v f="$first" -v l="$last" '$2 != ($1 == "worker" ? f : l) {exit 1}' "$T/cpus" ||
	fail "clusterB's ranks not where cpus = \"$last\" and worker_cpus = \"$first\" say (role, CPUs): $(cat "$T/cpus")"
check_job 2
grep -q '^\[clusterB:0\] Execution: matmul, tasks [0-9]* .* in cluster clusterB' "$T/out" ||
	fail "no end report of the remote cluster: $(tail -30 "$T/out")"
grep -q '^\[clusterB:1\] mw: cm: linked to clusterA/cm-clusterB' "$T/out" || fail "remote CM did not link"
untagged=$(grep -cv '^\[cluster[AB]:[0-9a-z]*\] \|^$\|^mwlaunch: \|^  cluster\|^  clusterA \|^  clusterB ' "$T/out")
[ "$untagged" = 0 ] || fail "$untagged untagged output lines: $(grep -v '^\[' "$T/out" | head)"
echo "measured: clusterB computed $(cm_done clusterB) of 512 tasks at grain 4"
