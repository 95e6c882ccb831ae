#!/usr/bin/env bash
# A link over transport = "udp" through wanemu (issue 20; 100 Mbit/s,
# 100 ms round trip) survives black-hole outages of 10 s and 60 s
# (UDP_OUTAGE_LONG) in the middle of one transfer: every message arrives
# once, in order and intact, and traffic resumes within 2 s of the path's
# return (the 1 s target is benchmarked by make bench: bench-udp-wan.sh).
# Past the conn's idle timeout (30 s) the conn ends and the core connects
# a new one, resending what was not acknowledged.
# lane: background
# (run-all.sh runs it beside the other WAN tests: it spends over a minute
# waiting out the outages.)
. "$(dirname "$0")/lds_lib.sh"
LONG=${UDP_OUTAGE_LONG:-60}
wan_clusters 1 'delay=50ms,rate=100mbit' 'transport = "udp";'
# Enough messages that the transfer outlasts both outages.
start_pair 3000 "" "" -b 64k -B 64k -T $((LONG + 200))
sleep 1
outages 2000 10 "$LONG"
wait_pair
grep -q "3000 messages intact, in order and once" "$T/r.out" || fail "after the outages: $(cat "$T/r.out")"
echo "measured: udp through the outages: $(cat "$T/r.out")"
