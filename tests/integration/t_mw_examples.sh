#!/usr/bin/env bash
# t_mw_examples.sh - every master-worker example under mpirun with 1 to 4
# workers (and serially): answers verified against a serial computation,
# report counts adding up, both worker behaviours.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"

printf 'StatisticsInterval = 0;\nWorkerBehaviour = 1;\n' > "$T/one.conf"
printf 'StatisticsInterval = 0.2;\nWorkerBehaviour = 2;\nPrefetchDepth = 3;\n' > "$T/two.conf"
for nw in 0 1 2 3 4; do
	np=$((nw + 1))
	conf=$T/$([ $((nw % 2)) = 1 ] && echo one || echo two).conf
	mwrun $np mw_matmul -n 256 -b 32 --verify -c "$conf" --json "$T/mm.json" ||
		fail "matmul with $nw workers: $(tail -5 "$T/out")"
	grep -q "verify: .*OK" "$T/out" || fail "matmul with $nw workers: no verified product"
	check_counts "$T/mm.json" $((nw ? nw : 1))
	[ "$(jq .tasks "$T/mm.json")" = 512 ] || fail "matmul: expected 8^3 = 512 tasks"
	[ "$(jq .joined "$T/mm.json")" = 512 ] || fail "matmul: not every task joined"

	mwrun $np mw_tsp -n 10 -d 2 --verify -c "$conf" --json "$T/tsp.json" ||
		fail "tsp with $nw workers: $(tail -5 "$T/out")"
	grep -q "verify: brute-force optimum .*OK" "$T/out" || fail "tsp with $nw workers: optimum not verified"
	check_counts "$T/tsp.json" $((nw ? nw : 1))

	mwrun $np mw_montecarlo -t 60 --mean-ms 2 --spread 0.8 --verify -c "$conf" --json "$T/mc.json" ||
		fail "montecarlo with $nw workers: $(tail -5 "$T/out")"
	grep -q "verify: .*OK" "$T/out" || fail "montecarlo with $nw workers: hits not verified"
	check_counts "$T/mc.json" $((nw ? nw : 1))
	echo "measured: $nw workers: matmul $(jq .total_time "$T/mm.json") s, tsp pruned $(jq .pruned "$T/tsp.json")/$(jq .tasks "$T/tsp.json"), montecarlo discharged $(jq '[.workers[].discharged] | add' "$T/mc.json")"
done
# Progress lines every 0.1 s, the end report, the time series and its plot.
printf 'StatisticsInterval = 0.1;\n' > "$T/progress.conf"
mwrun 3 mw_montecarlo -t 100 --mean-ms 5 -c "$T/progress.conf" --plot "$T/p.png" || fail "--plot run failed: $(cat "$T/out")"
grep -q '^mw: [0-9]*/100 tasks .* tasks/s .*master busy .*workers busy' "$T/out" || fail "no progress line: $(cat "$T/out")"
grep -q '^Total Execution Time: ' "$T/out" || fail "no end report"
grep -q 'Worker Efficiency (Worker WorkTime / Worker ExecutionTime)' "$T/out" || fail "no per-worker efficiency"
[ -s "$T/p.png" ] && head -c 8 "$T/p.png" | grep -q PNG || fail "--plot wrote no PNG"
[ "$(grep -vc '^#' "$T/p.png.tsv")" -ge 1 ] || fail "no rows in the time series"
exit 0
