#!/usr/bin/env bash
# run-all.sh [DIR] - runs every test t_*.sh of DIR (default: this one, the
# integration tests) and prints a summary line "NAME: N passed, M failed"
# that CI reads.  Tests that need what this machine lacks (root,
# /dev/net/tun) print SKIP and do not count as failures.
set -u
shopt -s nullglob
cd "${1:-$(dirname "$0")}" || exit 1
name=$(basename "$PWD")
[ "$name" = integration ] || name="$name tests"
pass=0 failn=0 skip=0
failed=""

# run_once T: runs T once, its output on stdout, its exit status.  With
# BG_PIDFILE set, T runs as a session of its own (pid = session id =
# process group), whose id goes to that file: see "lane: background".
run_once() {
	if [ -n "${BG_PIDFILE:-}" ]; then
		setsid -w bash "./$1" 2>&1 &
		echo $! > "$BG_PIDFILE"
		wait $!
	else
		bash "./$1" 2>&1
	fi
}

# run_test T [NOTE]: runs T (a second time if it is marked "# retry:" and
# fails), prints its PASS, FAIL or SKIP lines (NOTE after the time),
# returns 0, 1 or 77.
run_test() {
	local t=$1 note=${2:+, $2} start out rc first secs
	start=$(date +%s)
	out=$(run_once "$t")
	rc=$?
	# A test marked "# retry:" holds wanemu to the wall clock (a delay to
	# the millisecond, a rate to 3 %): a stall of a shared VM's host fails
	# one try, a fault of the emulator both.  The first failure is printed
	# either way.  Only wanemu's own t_rtt, t_rate and t_outage have one:
	# docs/testbed.md, "Timing", says why and how every other test does
	# without.
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && grep -q '^# retry: ' "$t"; then
		first=$(echo "$out" | grep -m 1 '^FAIL: ' || echo "exit status $rc")
		out=$(run_once "$t")
		rc=$?
		out="note: first try failed (${first#FAIL: }); this is the second"$'\n'"$out"
	fi
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then
		echo "PASS $t (${secs}s$note)"
		echo "$out" | grep -E '^(measured|note):' | sed 's/^/     /'
		return 0
	elif [ $rc -eq 77 ]; then
		echo "SKIP $t: $(echo "$out" | tail -1)"
		return 77
	fi
	echo "FAIL $t (${secs}s$note)"
	# The reason first: the logs dumped after it can push it out of a tail.
	echo "$out" | grep -m 3 -E '^(FAIL|note): ' | sed 's/^/     /'
	echo "$out" | tail -40 | sed 's/^/     /'
	return 1
}

count() {
	case $1 in
	0) pass=$((pass + 1)) ;;
	77) skip=$((skip + 1)) ;;
	*) failn=$((failn + 1)); failed="$failed $2" ;;
	esac
}

# A test marked "# lane: background" spends most of its time waiting with
# the CPU idle (t_lds_outage: a minute's outage): it starts first, in a
# session of its own (the others' `pgrep -s 0` do not see its processes),
# runs beside the others, and its result is printed and counted at the
# end.  Only a test that holds nothing to the wall clock tighter than the
# others' load allows may have the mark (docs/testbed.md, "Lanes").
bg_dir=""
bg_tests=()
stop_bg() {
	local i
	for i in "${!bg_tests[@]}"; do
		[ -s "$bg_dir/$i.pid" ] && kill -TERM -- "-$(cat "$bg_dir/$i.pid")" 2> /dev/null
	done
	wait
	rm -rf "$bg_dir"
}
for t in t_*.sh; do
	grep -q '^# lane: background' "$t" || continue
	if [ -z "$bg_dir" ]; then
		bg_dir=$(mktemp -d "${TMPDIR:-/tmp}/run-all.XXXXXX") || exit 1
		trap 'stop_bg; exit 130' INT
		trap 'stop_bg; exit 143' TERM
	fi
	i=${#bg_tests[@]}
	(
		BG_PIDFILE=$bg_dir/$i.pid
		run_test "$t" "in the background" > "$bg_dir/$i.res"
		echo $? > "$bg_dir/$i.rc"
	) &
	bg_tests+=("$t")
	echo "started $t in the background"
done

for t in t_*.sh; do
	grep -q '^# lane: background' "$t" && continue
	run_test "$t"
	count $? "$t"
done
wait
for i in "${!bg_tests[@]}"; do
	cat "$bg_dir/$i.res"
	count "$(cat "$bg_dir/$i.rc" 2> /dev/null || echo 1)" "${bg_tests[$i]}"
done
[ -n "$bg_dir" ] && rm -rf "$bg_dir"
echo "$name: $pass passed, $failn failed, $skip skipped"
[ $failn -eq 0 ]
