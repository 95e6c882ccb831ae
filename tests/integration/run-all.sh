#!/usr/bin/env bash
# run-all.sh [DIR] - runs every test t_*.sh of DIR (default: this one, the
# integration tests) and prints a summary line "NAME: N passed, M failed"
# that CI reads.  Tests that need what this machine lacks (root,
# /dev/net/tun) print SKIP and do not count as failures.
set -u
cd "${1:-$(dirname "$0")}" || exit 1
name=$(basename "$PWD")
[ "$name" = integration ] || name="$name tests"
pass=0 failn=0 skip=0
failed=""
for t in t_*.sh; do
	start=$(date +%s)
	out=$(bash "./$t" 2>&1)
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ $rc -eq 0 ]; then
		pass=$((pass + 1)); echo "PASS $t (${secs}s)"
		echo "$out" | grep -E '^(measured|note):' | sed 's/^/     /'
	elif [ $rc -eq 77 ]; then
		skip=$((skip + 1)); echo "SKIP $t: $(echo "$out" | tail -1)"
	else
		failn=$((failn + 1)); failed="$failed $t"; echo "FAIL $t (${secs}s)"
		# The reason first: the logs dumped after it can push it out of a tail.
		echo "$out" | grep -m 3 '^FAIL: ' | sed 's/^/     /'
		echo "$out" | tail -40 | sed 's/^/     /'
	fi
done
echo "$name: $pass passed, $failn failed, $skip skipped"
[ $failn -eq 0 ]
