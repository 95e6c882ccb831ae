#!/usr/bin/env bash
# mwlaunch through wanemu: mw_matmul verified over two clusters (40 ms
# round trip, 100 Mbit/s), then over a 3-cluster star whose gateways live
# in three netbed sites.
. "$(dirname "$0")/lds_lib.sh"
. "$(dirname "$0")/../integration/mw_lib.sh"
. "$(dirname "$0")/../integration/mwl_lib.sh"
star_on_netbed 3 'all:delay=20ms,rate=100mbit' 2
write_job 2 "-n 512 -b 64 --verify"
mwlaunch_job || fail "2 clusters: mwlaunch failed ($?): $(tail -30 "$T/out")"
check_job 2
echo "measured: 2 clusters over wanemu: clusterB computed $(cm_done clusterB) of 512 tasks"
write_job 3 "-n 512 -b 64 --verify"
mwlaunch_job || fail "3 clusters: mwlaunch failed ($?): $(tail -30 "$T/out")"
check_job 3
echo "measured: 3-cluster star over wanemu: clusterB $(cm_done clusterB), clusterC $(cm_done clusterC) of 512 tasks"
