#!/usr/bin/env bash
# t_mw_resume.sh - the master is killed (SIGKILL) in the middle of a run;
# --resume replays the journal and runs only the missing tasks, and the
# answer is exactly the serial one (no task lost, none joined twice).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"

printf 'StatisticsInterval = 0;\n' > "$T/c.conf"
J=$T/journal
timeout 60 mpirun --oversubscribe -np 3 "$MWBIN/mw_montecarlo" -t 120 --mean-ms 10 --spread 0.5 --verify \
	-c "$T/c.conf" --journal "$J" --quiet > "$T/first.out" 2>&1 &
MPID=$!
PIDS="$PIDS $MPID"
# Kill rank 0 once 20 results (40 bytes each with the record header) are in.
for _ in $(seq 1 300); do
	[ -f "$J" ] && [ "$(stat -c %s "$J")" -ge $((32 + 20 * 32)) ] && break
	sleep 0.05
done
[ "$(stat -c %s "$J" 2>/dev/null || echo 0)" -ge $((32 + 20 * 32)) ] || fail "journal did not grow: $(cat "$T/first.out")"
master=""
# timeout -> mpirun -> ranks
for p in $(pgrep -P "$(pgrep -P $MPID)"); do
	tr '\0' '\n' < /proc/$p/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=0 && master=$p
done
[ -n "$master" ] || fail "cannot find rank 0 among mpirun's children"
kill -9 "$master"
wait $MPID && fail "the run survived its master's SIGKILL"
before=$(( ($(stat -c %s "$J") - 32) / 32 ))
[ "$before" -lt 120 ] || fail "the run finished before the kill; make the tasks longer"

mwrun 3 mw_montecarlo -t 120 --mean-ms 10 --spread 0.5 --verify -c "$T/c.conf" --journal "$J" --resume \
	--json "$T/r.json" || fail "resume failed: $(tail -5 "$T/out")"
grep -q "verify: .*OK" "$T/out" || fail "resumed answer differs from the serial one: $(cat "$T/out")"
check_counts "$T/r.json" 2
replayed=$(jq .replayed "$T/r.json")
[ "$replayed" -ge 20 ] && [ "$replayed" -le "$before" ] || fail "replayed $replayed, journal held $before"
[ "$(jq .joined "$T/r.json")" = $((120 - replayed)) ] || fail "resume ran more than the missing tasks"
echo "measured: killed after $before journaled results; resume replayed $replayed and ran $(jq .joined "$T/r.json")"

# The same application and task count with other arguments is another
# job: its journal is refused (it was replayed, with wrong results).
mwrun 3 mw_montecarlo -t 120 --mean-ms 10 --spread 0.6 --verify -c "$T/c.conf" --journal "$J" --resume &&
	fail "resumed the journal of a job with other arguments"
grep -q "journal of the same application and task count but another job" "$T/out" || fail "no clear refusal: $(cat "$T/out")"
# A journal of another problem is refused with its name.
mwrun 3 mw_montecarlo -t 99 -c "$T/c.conf" --journal "$J" --resume && fail "resumed a journal of another problem"
grep -q "journal of another problem" "$T/out" || fail "no clear refusal: $(cat "$T/out")"
exit 0
