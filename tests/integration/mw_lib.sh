# mw_lib.sh - helpers for the master-worker runtime tests (sourced after
# lib.sh): Open MPI settings that work on a machine without a usable
# network (shared memory only) and as root, and mwrun NP ARGS...
MWBIN=$ROOT/$BUILD/examples
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl=self,vader OMPI_MCA_pml=ob1 OMPI_MCA_btl_vader_single_copy_mechanism=none
# Open MPI 4 makes its per-user session directory (TMPDIR/ompi.HOST.UID)
# at an mpirun's start and removes it when the last one ends; two mpiruns
# starting at the same moment (mwlaunch's clusters, or another test's)
# race on that mkdir, and one dies in orte_init ("mkdir ... File exists",
# seen on a loaded 2-core machine).  Each test has its own, kept for the
# test's life by a directory in it that Open MPI leaves alone.
if [ -n "${T:-}" ]; then
	export OMPI_MCA_orte_tmpdir_base=$T/ompi
	mkdir -p "$T/ompi/ompi.$(hostname -s).$(id -u)/keep" && touch "$T/ompi/ompi.$(hostname -s).$(id -u)/keep/keep"
fi
command -v mpirun > /dev/null || { echo "SKIP: mpirun not found (tools/install-deps.sh installs openmpi-bin)"; exit 77; }
for e in mw_matmul mw_tsp mw_montecarlo; do
	[ -x "$MWBIN/$e" ] || fail "$MWBIN/$e missing: run make"
done

# mwrun NP PROGRAM ARGS...: mpirun with a time limit, output in $T/out.
mwrun() {
	local np=$1; shift
	timeout 60 mpirun --oversubscribe -np "$np" "$MWBIN/$@" > "$T/out" 2>&1
}

# check_counts JSON NWORKERS: the report's task counts add up.
check_counts() {
	jq -e --argjson nw "$2" '
		(.workers | length) == $nw and
		([.workers[].done] | add) == .joined and
		.joined + .replayed + .pruned == .tasks and
		all(.workers[]; .done >= 0 and .discharged >= 0 and .work_time <= .exec_time + 0.05)' "$1" > /dev/null ||
		fail "counts do not add up in $1: $(cat "$1")"
}
