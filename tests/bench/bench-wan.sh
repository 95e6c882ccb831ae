#!/usr/bin/env bash
# bench-wan.sh - LDS against iperf3 on an emulated WAN (issue 4).
#
# Four netbed sites joined by wanemu at RATE Mbit/s: two gateways in s1
# and s2, iperf3 between s3 and s4, on twin emulated links of the same
# parameters.  For each scenario (round trip x random loss) it measures
# ldsd's striped TCP with streams = "auto", then 8, 4 and 1 streams, REPS
# runs each (ldsbench through the daemons, bytes checked at the receiver;
# medians), and, at the same time on the twin link, iperf3 -P 1/4/8 with
# cubic and with bbr, once each.  Goodput is what reached the receiving process
# (ldsbench: messages its gateway reports delivered; iperf3: its
# sum_received) after the first OMIT seconds (slow start).  Then:
# a stream sweep with cubic on the lossy long path (ldsbench --direct,
# Table A-2 of the thesis), and a 30 s black hole on both twin links in
# the middle of an ldsd transfer and an iperf3 transfer running side by side.
#
# Prints Markdown tables for docs/BENCHMARKS.md; JSON of every run and a
# plot per scenario go to RESULTS (default build/bench-results).
#   QUICK=1            the target scenario only, short runs (make bench-quick)
#   SCENARIOS="100/0.1% 20/0"   only these (RTT ms / loss; "1%q": the loss
#                      before the bottleneck queue, as netem, not after it:
#                      wanemu's loss_at=enqueue)
#   REPS=N             runs of every ldsd cell (median; default 3, QUICK 1)
#   SCENARIOS=none     no scenario of the matrix (with SWEEP=0: the outage only)
#   OUTAGE=N           runs of the outage scenario (median; default 1, 0 leaves it out)
#   SWEEP=N            runs of the stream sweep (median per count; default 3,
#                      0 leaves it out)
#   LENGTH="SECS OMIT" every run this long (seconds measured, omitted first)
#   PEER='recv_memory = "512M";'   extra settings for both gateways' link
#   TCPSTAT=1          after each ldsd run, its streams' TCP segments sent and
#                      retransmitted in the sending site (nstat), on stderr
#   SERIAL=1           iperf3's cells after ldsd's, not beside them (to check
#                      that the twin links do not disturb each other; the
#                      udp part always runs its references after its cells)
#   UDP_WAN=0          leaves out issue 20's part (the udp transport against
#                      striped TCP, iperf3 and UDT4: bench-udp-wan.sh, its own
#                      knobs UDP_SCENARIOS, UDP_REPS, UDP_LENGTH, UDP_OUTAGE);
#                      default 1, 0 under QUICK
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../wan/netbed.sh"
. "$(dirname "$0")/lib.sh"
QUICK=${QUICK:-0}
RATE=${RATE:-200}
RESULTS=${RESULTS:-$ROOT/$BUILD/bench-results}
TARGET="100/0.1%"
if [ "$QUICK" = 1 ]; then
	SCENARIOS=${SCENARIOS:-$TARGET}
	REPS=${REPS:-1}
	OUTAGE=${OUTAGE:-0}
	SWEEP=${SWEEP:-0}
else
	SCENARIOS=${SCENARIOS:-"20/0 20/0.1% 20/1% 100/0 100/0.1% 100/1% 300/0 300/0.1% 300/1%"}
	REPS=${REPS:-3}
	OUTAGE=${OUTAGE:-1}
	SWEEP=${SWEEP:-3}
fi
[ "$SCENARIOS" = none ] && SCENARIOS=""
bench_needs bench-wan iperf3 jq gnuplot
mkdir -p "$RESULTS" || exit 1
IPORT=$((PORT + 300))
DPORT=$((PORT + 301))
fmt() { awk -v v="$1" -v r="$RATE" 'BEGIN {if (v == "") print "-"; else if (v == "FAIL") print "FAIL"; else printf "%.0f (%.2f)", v, v / r}'; }
max() { printf '%s\n' "$@" | grep -v FAIL | sort -g | tail -1; }
# ref A B: the better of two references; FAIL if either failed (a ratio
# to the one left would not be to the best).
ref() { case " $* " in *" FAIL "*) echo FAIL ;; *) max "$@" ;; esac; }
r1() { for v in "$@"; do [ -n "$v" ] && awk -v v="$v" 'BEGIN {if (v == "FAIL" || v == "-") printf "%s ", v; else printf "%.1f ", v}'; done | sed 's/ $//'; }

# Run lengths (seconds measured, seconds omitted first) by round trip:
# slow start takes longer on longer paths.  The link delivers in order, so
# its goodput comes in bursts (everything behind a lost packet is released
# a round trip later at once): 2 s windows at 100 ms moved single 8-stream
# runs between 117 and 199 Mb/s, 3 s at 300 ms between 117 and 206.  The
# target scenario therefore runs iperf3's default 10 s, the other 100 ms
# and the 300 ms ones 6 s, the 20 ms ones (a hundred round trips in 2 s)
# stay short.  Every ldsd cell (auto, 1, 4, 8 streams) gets REPS runs of
# the same length; iperf3 runs once per cell, beside them.
lengths() {
	if [ -n "${LENGTH:-}" ]; then echo "$LENGTH"; return; fi
	if [ "$QUICK" = 1 ]; then echo "3 2"; return; fi
	case $1/${2:-} in
	"$TARGET") echo "10 3" ;;
	20/*) echo "2 1" ;;
	100/*) echo "6 2" ;;
	*) echo "6 3" ;;
	esac
}

# loss_spec LOSS: wanemu's loss settings of a scenario's LOSS ("1%",
# "1%q" before the queue, "0" none), with a leading comma.
loss_spec() {
	case $1 in
	0) ;;
	*q) echo ",loss=${1%q},loss_at=enqueue" ;;
	*) echo ",loss=$1" ;;
	esac
}

# bed RTT LOSS [STREAMS]: a fresh bed, two gateways (s1, s2) and an
# ldsbench receiver, an iperf3 server (s4, for clients in s3).  Each pair
# of sites has its own emulated link: iperf3's runs beside ldsd's on the
# twin link s3-s4 leave s1-s2 to ldsd (at 200 Mb/s each, the daemons,
# wanemu and iperf3 together keep a fraction of one core busy).
bed() {
	local half
	half=$(awk -v r="$1" 'BEGIN {print r / 2}')
	netbed_up 4 "all:delay=${half}ms,rate=${RATE}mbit$(loss_spec "$2")" || fail "bed did not start"
	GW_ADDR=$(netbed_addr s2)
	NS_clusterA=$(netbed_ns s1)
	NS_clusterB=$(netbed_ns s2)
	netbed_exec s4 iperf3 -s -p "$IPORT" > /dev/null 2>&1 &
	disown
	gateways "${3:-\"auto\"}" "${PEER:-}"
}

# gateways STREAMS SETTINGS: two gateways on s1 and s2 (the bed's) and an
# ldsbench receiver at clusterB; gateways_down stops them all.
gateways() {
	two_clusters "$1" "$2"
	"$BIN/ldsbench" recv -s "$T/clusterB.sock" -i 0 -q >> "$T/recv.log" 2>&1 &
	RECV=$!
	PIDS="$PIDS $RECV"
	sleep 0.3
}

gateways_down() {
	kill "$RECV" "$PID_clusterA" "$PID_clusterB" 2> /dev/null
	wait "$RECV" "$PID_clusterA" "$PID_clusterB" 2> /dev/null
	rm -f "$T"/*.sock "$T"/*.ctl
	PORT=$((PORT + 1))
}

unbed() {
	gateways_down
	netbed_down
}

# lds STREAMS SECS OMIT OUT: ldsd goodput (Mb/s) or FAIL; the run's JSON in OUT.
lds() {
	local p=()
	[ "$1" != auto ] && p=(-P "$1")
	echo "  \$ ldsbench send -T clusterB/bench ${p[*]} -t $(($2 + $3)) -O $3 -i 0.5 --json-stream" >> "$T/commands"
	[ "${TCPSTAT:-0}" = 1 ] && NSTAT_HISTORY=$T/nstat ip netns exec "$NS_clusterA" nstat -n
	"$BIN/ldsbench" send -s "$T/clusterA.sock" -T clusterB/bench "${p[@]}" -t $(($2 + $3)) -O "$3" -i 0.5 --wait 60 --json-stream \
		> "$4" 2>> "$T/send.err"
	[ "${TCPSTAT:-0}" = 1 ] && NSTAT_HISTORY=$T/nstat ip netns exec "$NS_clusterA" nstat -z TcpOutSegs TcpRetransSegs |
		awk -v f="$(basename "$4" .json)" '/^Tcp/ {v[$1] = $2} END {printf "bench-wan: %s: TCP retransmitted %d of %d segments sent\n", f, v["TcpRetransSegs"], v["TcpOutSegs"]}' >&2
	jq -r 'select(.event == "end") | .data | if .error == null then .bits_per_second / 1e6 else "FAIL" end' "$4" |
		tail -1 | grep . || echo FAIL
}

# iperf CC STREAMS SECS OMIT OUT: iperf3's received goodput (Mb/s) or FAIL.
# A run that fails (its control connection reset at 300 ms with 1 %
# loss, once in nine scenarios) is run once more: a reference, not the
# product under test; the first run's error goes to send.err.
iperf() {
	local try v
	# iperf3's -t counts after the omitted start, ldsbench's from the run's start.
	echo "  \$ iperf3 -c ADDR -C $1 -P $2 -t $3 -O $4 -J" >> "$T/commands"
	for try in 1 2; do
		netbed_exec s3 iperf3 -c "$(netbed_addr s4)" -p "$IPORT" -C "$1" -P "$2" -t "$3" -O "$4" -i 0.5 -J \
			> "$5" 2>> "$T/send.err"
		v=$(jq -r '.end.sum_received.bits_per_second / 1e6 // "FAIL"' "$5" 2> /dev/null | grep . || echo FAIL)
		[ "$v" != FAIL ] && break
		echo "iperf3 -C $1 -P $2 failed (try $try): $(jq -r '.error // "no JSON"' "$5" 2> /dev/null)" >> "$T/send.err"
	done
	echo "$v"
}

# iperf_cells: iperf3 -P (each of $counts) with cubic and bbr, $secs s
# after $omit s, as "CC+STREAMS Mb/s" lines in $T/iperf.cells.
iperf_cells() {
	for n in $counts; do
		for cc in cubic bbr; do
			echo "$cc$n $(iperf "$cc" "$n" "$secs" "$omit" "$RESULTS/$name.iperf3-$cc-$n.json")"
		done
	done > "$T/iperf.cells"
}

# Throughput over time of every run of a scenario, one line each.
plot_scenario() {
	local name=$1 dat="$RESULTS/$1.dat" plots="" i=0 f title
	: > "$dat"
	for f in "$RESULTS/$name".[a-z]*.json; do
		# The first of an ldsd cell's runs stands for them all.
		case $f in *.r1.json | *[!0-9].json) ;; *) continue ;; esac
		title=$(basename "$f" .json)
		title=${title#"$name".}
		title=${title%.r1}
		if grep -q '"event"' "$f"; then
			jq -r 'select(.event == "interval") | .data | "\(.end_s) \(.bits_per_second / 1e6)"' "$f"
		else
			jq -r '.intervals[]?.sum | "\(.end) \(.bits_per_second / 1e6)"' "$f" 2> /dev/null
		fi > "$dat.$i"
		{ cat "$dat.$i"; printf '\n\n'; } >> "$dat"
		rm -f "$dat.$i"
		plots="$plots${plots:+, }'$dat' index $i using 1:2 with lines lw 2 $(case $title in iperf3*) echo "dt 2" ;; esac) title '$title'"
		i=$((i + 1))
	done
	gnuplot -e "set terminal pngcairo size 1100,560; set output '$RESULTS/$name.png';
		set title 'ldsd and iperf3 over wanemu: $name, ${RATE} Mb/s'; set xlabel 'time (s)';
		set ylabel 'goodput (Mb/s)'; set yrange [0:*]; set key outside right; set grid; plot $plots" 2>> "$T/send.err"
}

machine bench-wan
echo "bench-wan: congestion controls: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control); ldsd's default: bbr where listed"
echo "bench-wan: results (JSON of every run, a plot per scenario) in $RESULTS"
rows1="" rows2="" met_all=1
for sc in $SCENARIOS; do
	rtt=${sc%%/*} loss=${sc#*/} t_sc=$(date +%s)
	read -r secs omit <<< "$(lengths "$rtt" "$loss")"
	# A scenario's results are "$name".[a-z]*.json: "$name".* would
	# take rtt100ms-loss0.1's for rtt100ms-loss0's.
	name="rtt${rtt}ms-loss${loss//%/}"
	rm -f "$RESULTS/$name".[a-z]*.json
	bed "$rtt" "$loss"
	declare -A g=()
	counts="8 4 1"
	[ "$QUICK" = 1 ] && counts=8
	# iperf3's cells on the twin link, beside ldsd's (SERIAL=1: after).
	if [ "${SERIAL:-0}" != 1 ]; then
		iperf_cells &
		icells=$!
		PIDS="$PIDS $icells"
	fi
	# streams = "auto" first, its runs one after the other on the fresh
	# link: what it learns in one run (periods in which the link was
	# network-limited) it keeps for the next, as it does between the
	# transfers of a real job.  Then the fixed counts in rounds, so that
	# a drift of the machine's load touches every count alike.  A first,
	# unmeasured transfer warms the link up: a gateway's streams outlive
	# its transfers, so every measured run (auto's first too) finds them
	# connected and out of slow start, as a running job's transfers do;
	# measured cold, auto's first run fell 10-20 % behind at 300 ms, and
	# 0.69 of the best fixed count in a single run.
	lds auto 1 "$omit" "$RESULTS/$name.ldsd-warmup.r0.json" > /dev/null
	auto_n=""
	for r in $(seq 1 "$REPS"); do
		g[auto]="${g[auto]:-} $(lds auto "$secs" "$omit" "$RESULTS/$name.ldsd-auto.r$r.json")"
		auto_n="$auto_n${auto_n:+ }$(jq -r 'select(.event == "interval") | .data.streams' "$RESULTS/$name.ldsd-auto.r$r.json" | tail -1)"
	done
	for r in $(seq 1 "$REPS"); do
		for n in $counts; do
			g[lds$n]="${g[lds$n]:-} $(lds "$n" "$secs" "$omit" "$RESULTS/$name.ldsd-$n.r$r.json")"
		done
	done
	if [ "${SERIAL:-0}" != 1 ]; then
		wait "$icells"
	else
		iperf_cells
	fi
	while read -r k v; do g[$k]=$v; done < "$T/iperf.cells"
	for k in auto lds8 lds4 lds1; do
		[ -n "${g[$k]:-}" ] || continue
		[ "$REPS" -gt 1 ] && echo "bench-wan: $name $k runs (Mb/s): $(r1 ${g[$k]})"
		g[$k]=$(printf '%s\n' ${g[$k]} | grep -v FAIL | median)
		[ -n "${g[$k]}" ] || g[$k]=FAIL
		awk -v v="${g[$k]}" -v r="$RATE" 'BEGIN {exit !(v != "FAIL" && v > 1.02 * r)}' &&
			echo "bench-wan: $name $k: median ${g[$k]} Mb/s above the link rate (a reordering backlog at the receiving gateway delivered at the window's start)"
	done
	unbed
	plot_scenario "$name"
	best_fixed=$(max "${g[lds1]:-FAIL}" "${g[lds4]:-FAIL}" "${g[lds8]}")
	auto_ratio=$(ratio "${g[auto]}" "$best_fixed")
	verdict=""
	if [ "$QUICK" != 1 ]; then
		if awk -v a="$auto_ratio" 'BEGIN {exit !(a != "-" && a >= 0.9)}'; then
			verdict="auto >= 90 % of best fixed (met); "
		else
			verdict="auto below 90 % of best fixed (MISSED); "
			met_all=0
		fi
	fi
	if [ "$sc" = "$TARGET" ]; then
		ib=$(ref "${g[cubic8]}" "${g[bbr8]}")
		if awk -v l="${g[lds8]}" -v i="$ib" -v r="$RATE" 'BEGIN {exit !(l != "FAIL" && i != "FAIL" && l >= 0.9 * r && l >= 0.95 * i)}'; then
			verdict="${verdict}8 streams: >= 90 % of link and >= 95 % of iperf3 (met)"
		else
			verdict="${verdict}8 streams: target MISSED (want >= $((RATE * 9 / 10)) Mb/s and >= 95 % of $ib)"
			met_all=0
		fi
	fi
	echo "bench-wan: $name ($(($(date +%s) - t_sc)) s; Mb/s): ldsd auto $(r1 "${g[auto]}") (streams at the runs' ends: ${auto_n:-?}), 1/4/8: $(r1 "${g[lds1]:-}" "${g[lds4]:-}" "${g[lds8]}");" \
		"iperf3 cubic $(r1 "${g[cubic1]:-}" "${g[cubic4]:-}" "${g[cubic8]}"), bbr $(r1 "${g[bbr1]:-}" "${g[bbr4]:-}" "${g[bbr8]}")"
	rows1="$rows1| $rtt ms, ${loss} | $(fmt "${g[lds1]:-}") | $(fmt "${g[lds4]:-}") | $(fmt "${g[lds8]}") | $(fmt "${g[auto]}") → ${auto_n:-?} | $(fmt "${g[cubic1]:-}") | $(fmt "${g[cubic4]:-}") | $(fmt "${g[cubic8]}") | $(fmt "${g[bbr1]:-}") | $(fmt "${g[bbr4]:-}") | $(fmt "${g[bbr8]}") |
"
	rows2="$rows2| $rtt ms, ${loss} | $(ratio "${g[lds1]:-FAIL}" "$(ref "${g[cubic1]:-FAIL}" "${g[bbr1]:-FAIL}")") | $(ratio "${g[lds4]:-FAIL}" "$(ref "${g[cubic4]:-FAIL}" "${g[bbr4]:-FAIL}")") | $(ratio "${g[lds8]}" "$(ref "${g[cubic8]}" "${g[bbr8]}")") | $auto_ratio | ${verdict:-} |
"
	unset g
done

[ -n "$SCENARIOS" ] && cat <<EOT

Goodput in Mb/s (fraction of the ${RATE} Mb/s link), after the omitted start; ldsd
with its default congestion control ($(grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control && echo bbr || cat /proc/sys/net/ipv4/tcp_congestion_control)); ldsd figures are medians of $REPS runs, iperf3's single runs.

| RTT, loss | ldsd 1 | ldsd 4 | ldsd 8 | ldsd auto → streams | iperf3 cubic -P 1 | cubic -P 4 | cubic -P 8 | iperf3 bbr -P 1 | bbr -P 4 | bbr -P 8 |
|---|---|---|---|---|---|---|---|---|---|---|
$rows1
Ratios: ldsd to the better iperf3 with the same number of streams; auto to the best fixed count.

| RTT, loss | 1 stream | 4 streams | 8 streams | auto / best fixed | targets |
|---|---|---|---|---|---|
$rows2
EOT

# ---- the stream sweep with cubic on the lossy long path (thesis Table A-2) -------------------
if [ "$SWEEP" -gt 0 ]; then
	read -r secs omit <<< "$(lengths 100)"
	counts=1,2,4,6,8,16,32
	netbed_up 2 "all:delay=50ms,rate=${RATE}mbit,loss=0.1%" || fail "bed did not start"
	netbed_exec s2 "$BIN/ldsbench" recv --direct "$DPORT" -i 0 -q > /dev/null 2>&1 &
	disown
	sleep 0.3
	echo
	echo "Stream sweep, ldsbench --direct with cubic, 100 ms, 0.1 % loss, ${RATE} Mb/s ($((secs + omit)) s runs, first $omit s omitted), median of $SWEEP sweeps:"
	echo "  \$ ldsbench send --direct HOST:$DPORT --congestion cubic --sweep streams=$counts -t $((secs + omit)) -O $omit -q"
	rm -f "$RESULTS"/sweep-cubic.*
	for r in $(seq "$SWEEP"); do
		waited netbed_exec s1 "$BIN/ldsbench" send --direct "$(netbed_addr s2):$DPORT" --congestion cubic \
			--sweep streams=$counts -t $((secs + omit)) -O "$omit" -q --plot "$RESULTS/sweep-cubic.r$r.png" \
			--json-stream > "$RESULTS/sweep-cubic.r$r.json" 2>> "$T/send.err" ||
			echo "bench-wan: sweep $r failed (see $RESULTS/sweep-cubic.r$r.json)"
	done
	echo
	echo "| streams | Mb/s, median [runs] | disconnections (all runs) | median relative to 1 stream's |"
	echo "|---|---|---|---|"
	# One array of rows per sweep; a count a failed sweep lacks is left out of its median.
	jq -rs '
		def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
			else (.[length / 2 - 1] + .[length / 2]) / 2 end;
		def mbs: . / 1e6 * 10 | round / 10;
		[.[] | select(.event == "sweep") | .data.rows] as $sweeps
		| ($sweeps | map(.[] | select(.streams == 1) | .bits_per_second) | median) as $one
		| $sweeps | map(.[]) | group_by(.streams)[]
		| (map(.bits_per_second) | median) as $m
		| "| \(.[0].streams) | \($m | mbs) [\(map(.bits_per_second | mbs | tostring) | join(" "))] | \(map(.disconnections) | add) | \(if $one then $m / $one * 100 | round / 100 else "-" end) |"' \
		"$RESULTS"/sweep-cubic.r*.json
	netbed_down
fi

# ---- a 30 s black hole: ldsd and iperf3 side by side, on twin links ----------------------------
# outage_run N STREAMS TAG: one run (the gateways' link: STREAMS and the
# settings in PEER); appends a table row to $orows and ldsd's resume
# time (or 99 if it never resumed or lost data) to $oresumes.  Results are
# RESULTS/TAG*; the gateways' logs stay there for the breakdown of the
# resume time.
outage_run() {
	local r=$1 tag=$3 c lpid ipid t_ip t_down t_up l_resume l_end l_ok i_resume i_err
	bed 100 0 "$2"
	kill "$RECV"
	wait "$RECV" 2> /dev/null
	"$BIN/ldsbench" recv -s "$T/clusterB.sock" -i 0.05 --json-stream > "$RESULTS/$tag-recv.r$r.json" 2>> "$T/send.err" &
	RECV=$!
	PIDS="$PIDS $RECV"
	sleep 0.3
	"$BIN/ldsbench" send -s "$T/clusterA.sock" -T clusterB/bench -t 43 -i 0.5 --wait 90 --json-stream > "$RESULTS/$tag.ldsd.r$r.json" 2>> "$T/send.err" &
	lpid=$!
	PIDS="$PIDS $lpid"
	t_ip=$(date +%s.%N)
	netbed_exec s3 iperf3 -c "$(netbed_addr s4)" -p "$IPORT" -P 4 -C bbr -t 43 -i 0.5 -J > "$RESULTS/$tag.iperf3.r$r.json" 2>> "$T/send.err" &
	ipid=$!
	waited sleep 5
	t_down=$(date +%s.%N)
	netbed_ctl s1-s2 down > /dev/null
	netbed_ctl s3-s4 down > /dev/null
	waited sleep 30
	netbed_ctl s1-s2 up > /dev/null
	netbed_ctl s3-s4 up > /dev/null
	t_up=$(date +%s.%N)
	wait "$lpid"
	wait "$ipid"
	for c in clusterA clusterB; do ctl "$c" status --json > "$RESULTS/$tag.$c.r$r.status"; done
	unbed
	for c in clusterA clusterB; do
		{ echo "path down at $(date -d "@$t_down" +%T.%3N), up at $(date -d "@$t_up" +%T.%3N)"; cat "$T/$c.log"; } \
			> "$RESULTS/$tag.$c.r$r.log"
		: > "$T/$c.log"
	done
	# ldsd: the first 50 ms at the receiver with new bytes after the path came back.
	l_resume=$(jq -r --argjson up "$t_up" 'select(.event == "recv_interval" and .data.bytes > 0 and .data.epoch_s > $up) | .data.epoch_s - $up' \
		"$RESULTS/$tag-recv.r$r.json" | head -1)
	l_end=$(jq -c 'select(.event == "end") | .data | {error, bytes_sent, receiver, disconnections}' "$RESULTS/$tag.ldsd.r$r.json")
	l_ok=$(echo "$l_end" | jq '.error == null and .receiver.errors == 0 and .receiver.bytes == .bytes_sent')
	i_resume=$(jq -r --argjson up "$(awk -v u="$t_up" -v s="$t_ip" 'BEGIN {print u - s}')" \
		'[.intervals[].sum | select(.start >= $up - 0.5 and .bytes > 0)][0].start - $up' "$RESULTS/$tag.iperf3.r$r.json" 2> /dev/null)
	i_err=$(jq -r '.error // empty' "$RESULTS/$tag.iperf3.r$r.json" 2> /dev/null)
	odown=$(awk -v d="$t_down" -v s="$t_ip" 'BEGIN {printf "%.0f", d - s}') oup=$(awk -v u="$t_up" -v s="$t_ip" 'BEGIN {printf "%.0f", u - s}')
	orows="$orows| $r | $(awk -v r="${l_resume:-}" 'BEGIN {if (r == "") print "never"; else printf "%.2f s", r}') |"
	orows="$orows $([ "$l_ok" = true ] && echo "none: $(echo "$l_end" | jq .receiver.bytes) bytes verified" || echo "RUN FAILED: $l_end") |"
	orows="$orows $(echo "$l_end" | jq .disconnections) stream failures logged |"
	orows="$orows $(awk -v r="${i_resume:-}" 'BEGIN {if (r == "" || r == "null") print "not within the run"; else printf "%.1f s", r}')${i_err:+ (error: $i_err)} |
"
	oresumes="$oresumes $([ "$l_ok" = true ] && echo "${l_resume:-99}" || echo 99)"
}

# outage_table LABEL RUNS STREAMS TAG: RUNS runs of outage_run, their table.
outage_table() {
	local label=$1 runs=$2 streams=$3 tag=$4 r orows="" oresumes="" omedian odown oup
	rm -f "$RESULTS/$tag".*.json "$RESULTS/$tag"-recv.*.json "$RESULTS/$tag".*.log "$RESULTS/$tag".*.status
	{
		echo "  \$ ldsbench recv -i 0.05 --json-stream; ldsbench send -T clusterB/bench -t 43 -i 0.5 --wait 90 --json-stream (outage)"
		echo "  \$ iperf3 -c ADDR -P 4 -C bbr -t 43 -i 0.5 -J (outage)"
		echo "  \$ wanemu ctl s1-s2 down; wanemu ctl s3-s4 down; sleep 30; wanemu ctl s1-s2 up; wanemu ctl s3-s4 up (outage)"
	} >> "$T/commands"
	for r in $(seq 1 "$runs"); do
		outage_run "$r" "$streams" "$tag"
		echo "bench-wan: $tag run $r: ldsd resumed $(echo "$oresumes" | awk '{print $NF}') s after the path returned"
	done
	omedian=$(printf '%s\n' $oresumes | median)
	echo
	echo "Outage: 100 ms, ${RATE} Mb/s, a black hole (wanemu ctl down) from $odown s to $oup s of a 43 s transfer;" \
		"$label and iperf3 -P 4 (bbr) side by side on twin links, $runs runs."
	echo
	echo "| run | ldsd: traffic again after the path returned | ldsd: data lost | ldsd: notes | iperf3 -P 4: traffic again |"
	echo "|---|---|---|---|---|"
	printf '%s' "$orows"
	echo
	echo "ldsd's resume time ($label), median of $runs: $(awk -v m="$omedian" 'BEGIN {printf "%.2f s", m}') (target <= 1 s, nothing lost)"
	awk -v m="$omedian" 'BEGIN {exit !(m <= 1.0)}' || met_all=0
	case " $oresumes " in *" 99 "*) met_all=0 ;; esac
	plot_scenario "$tag"
}

[ "$OUTAGE" -ge 1 ] && outage_table "ldsd (4 streams, bbr)" "$OUTAGE" 4 outage

# ---- issue 20: the udp transport against striped TCP, iperf3 and UDT4 ------------------------
. "$(dirname "$0")/bench-udp-wan.sh"
[ "${UDP_WAN:-$([ "$QUICK" = 1 ] && echo 0 || echo 1)}" != 0 ] && udp_wan_part
echo
echo "reproduce: $([ "$QUICK" = 1 ] && echo "QUICK=1 ")tests/bench/bench-wan.sh (as root; SCENARIOS=\"RTT/LOSS ...\" for some)"
if [ -s "$T/commands" ]; then
	echo "commands run per scenario:"
	sort -u "$T/commands" | sed 's/^/  /'
fi
[ -s "$T/send.err" ] && { echo "bench-wan: messages from the runs:"; sort "$T/send.err" | uniq -c | head -20; }
[ "$met_all" = 1 ] && echo "bench-wan: targets met" || echo "bench-wan: TARGET MISSED"
