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
for t in t_*.sh; do
	start=$(date +%s)
	out=$(bash "./$t" 2>&1)
	rc=$?
	# A test marked "# retry:" holds wanemu to the wall clock (a delay to
	# the millisecond, a rate to 3 %): a stall of a shared VM's host fails
	# one try, a fault of the emulator both.  The first failure is printed
	# either way.  Only wanemu's own t_rtt, t_rate and t_outage have one:
	# docs/testbed.md, "Timing", says why and how every other test does
	# without.
	if [ $rc -ne 0 ] && [ $rc -ne 77 ] && grep -q '^# retry: ' "$t"; then
		first=$(echo "$out" | grep -m 1 '^FAIL: ' || echo "exit status $rc")
		out=$(bash "./$t" 2>&1)
		rc=$?
		out="note: first try failed (${first#FAIL: }); this is the second"$'\n'"$out"
	fi
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); echo "PASS $t (${secs}s)"
		echo "$out" | grep -E '^(measured|note):' | sed 's/^/     /'
	elif [ $rc -eq 77 ]; then
		skip=$((skip + 1)); echo "SKIP $t: $(echo "$out" | tail -1)"
	else
		failn=$((failn + 1)); failed="$failed $t"; echo "FAIL $t (${secs}s)"
		# The reason first: the logs dumped after it can push it out of a tail.
		echo "$out" | grep -m 3 -E '^(FAIL|note): ' | sed 's/^/     /'
		echo "$out" | tail -40 | sed 's/^/     /'
	fi
done
echo "$name: $pass passed, $failn failed, $skip skipped"
[ $failn -eq 0 ]
