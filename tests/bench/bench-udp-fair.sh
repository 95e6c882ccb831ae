#!/usr/bin/env bash
# Two links sharing one wanemu path (100 Mbit/s, 100 ms round trip): first
# two udp links, then a udp link beside a TCP link with cubic (issue 20's
# fairness).  Each sends the same 70 MB at once; every message arrives
# once, in order and intact.  Two udp links must finish within 1.5x of
# each other (a fair share each); beside cubic the share udp took while
# both ran is printed with the issue's verdict (at most 70 %).  No
# sealing: the transports are measured, not the core's sealing.
. "$(dirname "$0")/../wan/lds_lib.sh"
UDP='transport = "udp"; encryption = "none";'
N=${UDP_FAIR_COUNT:-12000}

# race SETTINGS-AB SETTINGS-CD: A->B and C->D over the same path at once;
# sets TA and TC, their seconds.
race() {
	netbed_up 2 "all:delay=50ms,rate=100mbit" || fail "test bed did not start"
	GW_ADDR=$(netbed_addr s2)
	NS_clusterA=$(netbed_ns s1) NS_clusterC=$(netbed_ns s1) NS_clusterB=$(netbed_ns s2) NS_clusterD=$(netbed_ns s2)
	make_key "$T/key"
	write_conf clusterB clusterA listen 1 "$1"
	write_conf clusterA clusterB connect 1 "$1"
	PORT=$((PORT + 7))
	write_conf clusterD clusterC listen 1 "$2"
	write_conf clusterC clusterD connect 1 "$2"
	for c in clusterB clusterA clusterD clusterC; do start_ldsd $c; done
	wait_up clusterA 1
	wait_up clusterC 1
	for p in "A B" "C D"; do
		set -- $p
		"$TBIN/ldstest" recv -s "$T/cluster$2.sock" -n sink -f "cluster$1/src" -c "$N" -B 64k -T 300 \
			> "$T/r$1.out" 2>&1 &
		eval "r$1=\$!"
		PIDS="$PIDS $!"
		"$TBIN/ldstest" send -s "$T/cluster$1.sock" -n src -t "cluster$2/sink" -c "$N" -B 64k -T 300 \
			> "$T/s$1.out" 2>&1 &
		PIDS="$PIDS $!"
	done
	wait "$rA" || fail "A->B: $(cat "$T/rA.out")"
	wait "$rC" || fail "C->D: $(cat "$T/rC.out")"
	for x in A C; do
		grep -q "$N messages intact, in order and once" "$T/r$x.out" || fail "$x: $(cat "$T/r$x.out")"
	done
	TA=$(grep -o 'bytes in [0-9.]* s' "$T/rA.out" | awk '{print $3}')
	TC=$(grep -o 'bytes in [0-9.]* s' "$T/rC.out" | awk '{print $3}')
	BA=$(grep -o '[0-9]* bytes in' "$T/rA.out" | awk '{print $1}')
	BC=$(grep -o '[0-9]* bytes in' "$T/rC.out" | awk '{print $1}')
	kill "$PID_clusterA" "$PID_clusterB" "$PID_clusterC" "$PID_clusterD"
	wait "$PID_clusterA" "$PID_clusterB" "$PID_clusterC" "$PID_clusterD" 2> /dev/null
	rm -f "$T"/*.sock "$T"/*.ctl
	netbed_down
	PORT=$((PORT + 1))
}
# share BYTES SECS: the percentage of the path's 12.5 MB/s that a link
# finishing first took while both ran.
share() { awk -v b="$1" -v t="$2" 'BEGIN {printf "%.0f", 100 * b / t / 12.5e6}'; }
mb() { awk -v b="$1" 'BEGIN {printf "%.0f", b / 1e6}'; }
race "$UDP" "$UDP"
first=$(awk -v a="$TA" -v c="$TC" 'BEGIN {print (a <= c) ? "A" : "C"}')
[ "$first" = A ] && s=$(share "$BA" "$TA") || s=$(share "$BC" "$TC")
echo "measured: two udp links, $(mb "$BA") MB each at once: ${TA} s and ${TC} s (the first done took $s % of the path while both ran)"
awk -v a="$TA" -v c="$TC" 'BEGIN {exit !(a <= 1.5 * c && c <= 1.5 * a)}' ||
	fail "two udp links did not share the path: ${TA} s and ${TC} s"
race "$UDP" 'encryption = "none"; congestion = "cubic";'
if awk -v a="$TA" -v c="$TC" 'BEGIN {exit !(a <= c)}'; then
	s=$(share "$BA" "$TA")
	verdict=$(awk -v s="$s" 'BEGIN {print (s <= 70) ? "met" : "MISSED"}')
	s="udp took $s % of the path while both ran (issue 20: at most 70 %: $verdict)"
else
	s="cubic finished first, with $(share "$BC" "$TC") % of the path (issue 20, udp at most 70 %: met)"
fi
echo "measured: udp ${TA} s beside tcp cubic ${TC} s, $(mb "$BA") MB each at once (100 Mbit/s: $(awk -v b="$BA" 'BEGIN {printf "%.1f", b / 12.5e6}') s alone at the full rate); $s"
