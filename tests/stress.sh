#!/usr/bin/env bash
# stress.sh N - runs the integration and the WAN tests N times in a row
# (tests/integration/run-all.sh, then run-all.sh tests/wan) with CPU hogs
# beside them, as on a loaded shared machine, and reports each test's
# failures and first-try failures (a test marked "# retry:" passed on its
# second try).  Exit status 0 only when no test failed in any round.
#
#   STRESS_HOGS   busy-loop processes beside the tests (default 1; at
#                 nice 0, the tests' own priority)
#   STRESS_DIRS   the suites (default "tests/integration tests/wan")
#   STRESS_LOG    directory for each round's output (default: a temporary
#                 one, kept and named at the end)
#   BUILD         the build directory, as for make check (default build)
# The WAN tests need root and /dev/net/tun and skip without them; a round
# takes several minutes on 2 cores.  Run make all first.
set -u
cd "$(dirname "$0")/.." || exit 2
n=${1:-}
case "$n" in ''|*[!0-9]*|0) echo "usage: tests/stress.sh N (rounds, >= 1)" >&2; exit 2 ;; esac
hogs=${STRESS_HOGS:-1}
dirs=${STRESS_DIRS:-tests/integration tests/wan}
log=${STRESS_LOG:-$(mktemp -d "${TMPDIR:-/tmp}/lds-stress.XXXXXX")}
mkdir -p "$log" || exit 2
export BUILD=${BUILD:-build}
[ -x "$BUILD/bin/ldsd" ] || { echo "stress.sh: $BUILD/bin/ldsd missing: run make all" >&2; exit 2; }

# The hogs: each a busy loop bounded in time (a round's worst case, per
# round), killed by id on any exit.
hog_pids=""
stop_hogs() {
	for p in $hog_pids; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
}
trap stop_hogs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for ((h = 0; h < hogs; h++)); do
	nice -n 0 timeout $((n * 3600)) bash -c 'while :; do :; done' &
	hog_pids="$hog_pids $!"
done

declare -A runs fails retried
start=$(date +%s)
for ((r = 1; r <= n; r++)); do
	for d in $dirs; do
		name=$(basename "$d")
		out="$log/round$r-$name.txt"
		tests/integration/run-all.sh "$d" > "$out" 2>&1
		echo "round $r/$n $d: $(tail -1 "$out")"
		while read -r verdict t _; do
			runs[$t]=$(( ${runs[$t]:-0} + 1 ))
			[ "$verdict" = FAIL ] && fails[$t]=$(( ${fails[$t]:-0} + 1 ))
		done < <(grep -E '^(PASS|FAIL) t_' "$out")
		# run-all.sh's note on a retried test follows its PASS line.
		while read -r t; do
			retried[$t]=$(( ${retried[$t]:-0} + 1 ))
		done < <(awk '/^(PASS|FAIL) t_/ { t = $1 == "PASS" ? $2 : "" } /^ +note: first try failed/ && t { print t; t = "" }' "$out")
	done
done

total=0
printf '\n%-34s %5s %8s %14s\n' test runs failed "passed 2nd try"
for t in $(printf '%s\n' "${!runs[@]}" | sort); do
	printf '%-34s %5d %8d %14d\n' "$t" "${runs[$t]}" "${fails[$t]:-0}" "${retried[$t]:-0}"
	total=$(( total + ${fails[$t]:-0} ))
done
echo "stress: $n round(s) of $dirs with $hogs CPU hog(s) in $(( $(date +%s) - start )) s: $total failure(s); logs in $log"
[ "$total" -eq 0 ]
