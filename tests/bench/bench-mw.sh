#!/usr/bin/env bash
# bench-mw.sh - master-worker runtime targets (issue 5), side by side in
# one run, medians of RUNS:
#   1. dispatch rate of empty tasks, one master and one worker, against a
#      hand-written blocking MPI_Send/MPI_Recv loop (mpi_loop)
#      targets: >= 100,000 tasks/s and >= 50 % of mpi_loop
#   2. block matmul, compute-bound grain (BLOCK x BLOCK blocks), 2 workers:
#      efficiency = serial time / (2 x parallel time), the serial time
#      being the same program run as one process (role "serial");
#      target >= 90 %.  The CPU seconds of every rank (from the reports)
#      show where the cycles went.
# QUICK=1 shortens it.  CPUS=LIST runs everything under taskset -c LIST.
# Its temporary directory, and its cleanup on exit or signal, are the
# integration tests'.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/lib.sh"
B=$ROOT/$BUILD
QUICK=${QUICK:-0}
RUNS=${RUNS:-5}
TASKS=$([ "$QUICK" = 1 ] && echo 200000 || echo 1000000)
N=${N:-$([ "$QUICK" = 1 ] && echo 1024 || echo 2048)}
BLOCK=${BLOCK:-256}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1
PIN=()
[ -n "${CPUS:-}" ] && PIN=(taskset -c "$CPUS")
printf 'StatisticsInterval = 0;\nPrefetchDepth = %s;\n' "${DEPTH:-16}" > "$T/mw.conf"
MM=("$B/examples/mw_matmul" -n "$N" -b "$BLOCK" -c "$T/mw.conf" --quiet)

machine bench-mw
declare -a loop mw ser par eff cs cm cw
for r in $(seq 1 "$RUNS"); do
	loop+=("$("${PIN[@]}" mpirun -np 2 "$B/bench/mpi_loop" "$TASKS" | awk '/tasks\/s/ {print $2}')")
	"${PIN[@]}" mpirun -np 2 "$B/bench/mw_empty" -t "$TASKS" -c "$T/mw.conf" --quiet --json "$T/e.json" || exit 1
	mw+=("$(jq '.average_tasks_per_s | floor' "$T/e.json")")
	"${PIN[@]}" "${MM[@]}" --json "$T/s.json" > /dev/null || exit 1
	"${PIN[@]}" mpirun --oversubscribe -np 3 "${MM[@]}" --json "$T/p.json" > /dev/null || exit 1
	ser+=("$(jq .total_time "$T/s.json")")
	par+=("$(jq .total_time "$T/p.json")")
	eff+=("$(awk -v s="${ser[-1]}" -v p="${par[-1]}" 'BEGIN {printf "%.1f", 100 * s / (2 * p)}')")
	cs+=("$(jq '.master_cpu * 100 | round / 100' "$T/s.json")")
	cm+=("$(jq '.master_cpu * 100 | round / 100' "$T/p.json")")
	cw+=("$(jq '[.workers[].cpu_time] | add / length * 100 | round / 100' "$T/p.json")")
	echo "bench-mw: run $r: mpi_loop ${loop[-1]} tasks/s, runtime ${mw[-1]} tasks/s; matmul serial ${ser[-1]} s, 2 workers ${par[-1]} s, efficiency ${eff[-1]} %; CPU s: serial ${cs[-1]}, master ${cm[-1]}, each worker ${cw[-1]}"
done
L=$(printf '%s\n' "${loop[@]}" | median)
M=$(printf '%s\n' "${mw[@]}" | median)
E=$(printf '%s\n' "${eff[@]}" | median)
P=$(awk -v m="$M" -v l="$L" 'BEGIN {printf "%.0f", 100 * m / l}')
echo
echo "| measure (median of $RUNS) | value | target |"
echo "|---|---|---|"
echo "| hand-written MPI send/recv loop, 1 worker | $L tasks/s | reference |"
echo "| runtime, empty tasks, 1 worker, PrefetchDepth ${DEPTH:-16} | $M tasks/s ($P % of the loop) | >= 100000 and >= 50 % |"
echo "| matmul ${N}x${N}, ${BLOCK}x${BLOCK} blocks, 2 workers | efficiency $E % | >= 90 % |"
echo "| CPU seconds of that run: serial / master / each worker | $(printf '%s\n' "${cs[@]}" | median) / $(printf '%s\n' "${cm[@]}" | median) / $(printf '%s\n' "${cw[@]}" | median) | |"
awk -v m="$M" -v p="$P" -v e="$E" 'BEGIN {exit !(m >= 100000 && p >= 50 && e >= 90)}' && echo "bench-mw: targets met" || echo "bench-mw: TARGET MISSED"
