#!/usr/bin/env bash
# mwlaunch runs mw_matmul over two clusters whose gateways are on
# loopback: the product is verified, the remote cluster computed a share
# through its communication managers and sub-master at grain 4, every
# output line is tagged with cluster and rank, and --dry-run shows the
# roles without starting anything.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
star_clusters 2 2
write_job 2 "-n 256 -b 32 --verify"
"$BIN/mwlaunch" --dry-run "$T/job.conf" > "$T/dry" || fail "--dry-run failed"
grep -c "^mpirun --oversubscribe" "$T/dry" | grep -qx 2 || fail "--dry-run: not one mpirun per cluster: $(cat "$T/dry")"
for r in "rank 0: master" "rank 2: cm" "rank 0: submaster" "rank 1: cm" "MWL_REMOTE=clusterB" "MWL_GRAIN=4"; do
	grep -q "$r" "$T/dry" || fail "--dry-run lacks '$r': $(cat "$T/dry")"
done
mwlaunch_job || fail "mwlaunch failed ($?): $(tail -30 "$T/out")"
check_job 2
grep -q '^\[clusterB:0\] Execution: matmul, tasks [0-9]* .* in cluster clusterB' "$T/out" ||
	fail "no end report of the remote cluster: $(tail -30 "$T/out")"
grep -q '^\[clusterB:1\] mw: cm: linked to clusterA/cm-clusterB' "$T/out" || fail "remote CM did not link"
untagged=$(grep -cv '^\[cluster[AB]:[0-9a-z]*\] \|^$\|^mwlaunch: \|^  cluster\|^  clusterA \|^  clusterB ' "$T/out")
[ "$untagged" = 0 ] || fail "$untagged untagged output lines: $(grep -v '^\[' "$T/out" | head)"
echo "measured: clusterB computed $(cm_done clusterB) of 512 tasks at grain 4"
