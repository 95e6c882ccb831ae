#!/usr/bin/env bash
# The WAN series of --stats-log (and --plot, which draws it) on a 10
# Mbit/s link: every interval's rate stays within the link's rate.  The
# remote cluster does all the work (clusterA has no workers), in coarse
# tasks of 64 tasks of 32 KiB (2 MiB).  The series used to count a
# runtime message when its whole acknowledgement came, so an interval of
# 2 s that caught two of them showed 16.8 Mbit/s (the issue's 67 Mbit/s
# on a 50 Mbit/s link); it now follows the gateway's link block by block
# (lds_link_bytes).  RATE_MBIT sets the link's rate (default 10).
. "$(dirname "$0")/lds_lib.sh"
. "$(dirname "$0")/../integration/mw_lib.sh"
. "$(dirname "$0")/../integration/mwl_lib.sh"
RATE_MBIT=${RATE_MBIT:-10}
IV=2
star_on_netbed 2 "all:delay=10ms,rate=${RATE_MBIT}mbit" 2
MAIN_WORKERS=0 WORKERS=2 CACHE_MIB=0 GRAIN=64 PREFETCH=256 DEADLINE=60 STATS_IV=$IV LOAD_BALANCE=false \
	write_job 2 "-n 448 -b 64 --verify --stats-log $T/series.tsv"
mwlaunch_job || fail "mwlaunch failed ($?): $(tail -30 "$T/out")"
check_job 2
head -1 "$T/series.tsv" | grep -q $'to:cm:clusterB\tfrom:cm:clusterB$' || fail "no WAN columns: $(head -2 "$T/series.tsv")"
wan_out=$(jq '.clusters[0].report.workers[] | select(.host == "cm:clusterB") | .wan_bytes_out' "$T/job.json")
# Columns 6 and 7: bytes to and from clusterB in each interval of IV s,
# drawn by --plot as bytes * 8 / IV.
read -r peak_out peak_in sum_out rows < <(awk -v iv=$IV '!/^#/ { o = $6 * 8 / iv / 1e6; i = $7 * 8 / iv / 1e6;
	if (o > po) po = o; if (i > pi) pi = i; s += $6; n++ }
	END { printf "%.2f %.2f %d %d\n", po, pi, s, n }' "$T/series.tsv")
echo "measured: peak $peak_out Mbit/s to clusterB, $peak_in from it (link $RATE_MBIT Mbit/s, intervals of $IV s," \
	"$rows rows); series total out $sum_out bytes, runtime messages $wan_out bytes; the job took $(jq .seconds "$T/job.json") s"
[ "$rows" -ge 4 ] || fail "only $rows intervals: the test did not test"
# The link carried every task: the series adds up to the messages' bytes.
awk -v s="$sum_out" -v w="$wan_out" 'BEGIN { exit !(w > 8388608 && s >= 0.95 * w && s <= 1.1 * w) }' ||
	fail "the series adds up to $sum_out bytes out, the runtime sent $wan_out"
limit=$(awk -v r="$RATE_MBIT" 'BEGIN { print r * 1.1 }')
awk -v p="$peak_out" -v q="$peak_in" -v l="$limit" 'BEGIN { exit !(p <= l && q <= l) }' ||
	fail "the series shows $peak_out Mbit/s out, $peak_in in, on a $RATE_MBIT Mbit/s link (at most $limit): $(cat "$T/series.tsv")"
awk -v p="$peak_out" -v r="$RATE_MBIT" 'BEGIN { exit !(p >= 0.5 * r) }' || fail "the link was never busy: peak $peak_out Mbit/s"
