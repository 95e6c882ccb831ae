#!/usr/bin/env bash
# mwlaunch through wanemu, every remote cluster started through its
# gateway (ldsd's exec service, as an unprivileged user) inside its netbed
# site: mw_matmul verified over two clusters (40 ms round trip,
# 100 Mbit/s), then over a 3-cluster star whose gateways live in three
# sites.
. "$(dirname "$0")/lds_lib.sh"
. "$(dirname "$0")/../integration/mw_lib.sh"
. "$(dirname "$0")/../integration/mwl_lib.sh"
# Every remote cluster computes a share however late it starts (check_job).
LOAD_BALANCE=false
JOBUSER=$(job_user) || { echo "SKIP: there is no user nobody to run gateway jobs as"; exit 77; }
APP=$T/app/mw_matmul
job_app "$T/app"
EXEC_clusterB=$(exec_group "$JOBUSER" "$APP")
EXEC_clusterC=$EXEC_clusterB
START=gateway
star_on_netbed 3 'all:delay=20ms,rate=100mbit' 2
write_job 2 "-n 768 -b 64 --verify"
mwlaunch_job || fail "2 clusters: mwlaunch failed ($?): $(tail -30 "$T/out")"
check_job 2
grep -q "^mwlaunch: cluster clusterB: started by its gateway: .* as user $JOBUSER$" "$T/out" || fail "clusterB not started by its gateway"
echo "measured: 2 clusters over wanemu, clusterB started by its gateway: it computed $(cm_done clusterB) of 1728 tasks"
write_job 3 "-n 768 -b 64 --verify"
mwlaunch_job || fail "3 clusters: mwlaunch failed ($?): $(tail -30 "$T/out")"
check_job 3
echo "measured: 3-cluster star over wanemu, remote clusters started by their gateways: clusterB $(cm_done clusterB), clusterC $(cm_done clusterC) of 1728 tasks"
