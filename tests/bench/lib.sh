# lib.sh - helpers shared by the benchmarks (sourced, not run): medians
# and ratios for their tables, the machine the figures were measured on,
# and the skip rule of those that need a wanemu test bed.

# median: the median of the numbers on stdin, one a line.
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# ratio A B: A / B to two decimals; "-" where either is FAIL or B is not
# positive (a failed run has no ratio).
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "FAIL" || b == "FAIL" || b <= 0) print "-"; else printf "%.2f", a / b}'; }

# machine NAME: "NAME: machine: ..." for the figures' record (docs/BENCHMARKS.md).
machine() {
	echo "$1: machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r)"
}

# bench_needs NAME COMMAND...: a benchmark that needs a netbed (netbed.sh
# sourced) and COMMANDs says why it cannot run here and ends with 0, so
# that make bench goes on with the next one.
bench_needs() {
	local name=$1 why c
	shift
	why=$(netbed_check) || { echo "$name: skipped: $why"; exit 0; }
	for c in "$@"; do
		command -v "$c" > /dev/null || { echo "$name: skipped: $c is missing (make deps)"; exit 0; }
	done
}

# mw_bench NAME: bench_needs for the runtime's benchmarks over a netbed
# (mw_lib.sh sourced too); they measure what this machine's MPI does best,
# shared-memory single copy, which mw_lib.sh turns off for the tests (some
# containers forbid it).
mw_bench() {
	bench_needs "$1" jq
	unset OMPI_MCA_btl_vader_single_copy_mechanism
}
