#!/usr/bin/env bash
# t_mw_errors.sh - bad input to the runtime: a broken config names file
# and line, usage errors exit 2, roles it cannot run are refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"

printf 'StatisticsInterval = 1;\nWorkerBehaviour = 5;\n' > "$T/bad.conf"
mwrun 2 mw_matmul -n 64 -b 32 -c "$T/bad.conf" && fail "accepted WorkerBehaviour = 5"
grep -q "$T/bad.conf:2: WorkerBehaviour = 5 is out of range" "$T/out" || fail "unclear config error: $(cat "$T/out")"

"$MWBIN/mw_matmul" -n 100 -b 32 > "$T/out" 2>&1
[ $? = 2 ] || fail "bad -n did not exit 2"
grep -q "multiple of -b" "$T/out" || fail "unclear usage error: $(cat "$T/out")"
"$MWBIN/mw_tsp" --journal > "$T/out" 2>&1
[ $? = 2 ] || fail "--journal without a file did not exit 2"
"$MWBIN/mw_tsp" --resume > "$T/out" 2>&1 && fail "--resume without --journal accepted"
grep -q -- "--resume needs --journal" "$T/out" || fail "unclear --resume error: $(cat "$T/out")"
"$MWBIN/mw_tsp" --help > "$T/out" 2>&1
grep -q -- "--stats-log" "$T/out" || fail "--help does not list the runtime options"

MWL_ROLE=cm mwrun 2 mw_tsp -n 6 -d 1 && fail "a cluster of communication managers accepted"
grep -q "0 ranks have MWL_ROLE=master or submaster" "$T/out" || fail "unclear role error: $(cat "$T/out")"
MWL_ROLE=submaster mwrun 2 mw_tsp -n 6 -d 1 && fail "two sub-masters accepted"
grep -q "2 ranks have MWL_ROLE=master or submaster" "$T/out" || fail "unclear role error: $(cat "$T/out")"
MWL_ROLE=worker mwrun 2 mw_tsp -n 6 -d 1 && fail "a job without a master accepted"
grep -q "0 ranks have MWL_ROLE=master" "$T/out" || fail "unclear role error: $(cat "$T/out")"
# --json -: standard output is one JSON document (docs/mw.md's example);
# progress, the text report and the application's lines go to stderr.
timeout 60 mpirun --oversubscribe -np 3 "$MWBIN/mw_tsp" -n 8 -d 2 --verify --json - > "$T/json.out" 2> "$T/json.err" ||
	fail "--json -: $(cat "$T/json.err")"
jq -e '.app == "tsp" and .tasks > 0' "$T/json.out" > /dev/null || fail "--json -: stdout is not the report alone: $(head -c 600 "$T/json.out")"
[ "$(jq -s length "$T/json.out")" = 1 ] || fail "--json -: more than one document"
grep -q "^Statistics" "$T/json.err" && grep -q "verify" "$T/json.err" || fail "--json -: the text went nowhere: $(cat "$T/json.err")"
# A run shorter than StatisticsInterval (10 s) still ends with a progress line.
grep -Eq "^mw: ([0-9]+)/\1 tasks \(100.0%\)" "$T/json.err" || fail "no last progress line: $(cat "$T/json.err")"
exit 0
