#!/usr/bin/env bash
# demo.sh - `make demo`: two clusters on this machine, each with its own
# ldsd, and the matrix multiplication example run across both with
# mwlaunch: its progress, both clusters' statistics, the product checked
# against a serial multiplication, and the link's statistics.  The remote
# cluster is started through its gateway: clusterB's ldsd runs its mpirun
# (exec service, as an unprivileged user: nobody when run as root).
#
# As root with /dev/net/tun the two gateways live in two network
# namespaces joined by wanemu with a realistic WAN (100 ms round trip,
# 50 Mbit/s); otherwise they talk over loopback.  The MPI ranks run on the
# host and reach their gateway's unix socket either way.
#   DEMO_SIZE=N DEMO_BLOCK=B  matrix and block size (default 1536, 128)
#   DEMO_LOOPBACK=1           loopback even where wanemu could run
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/../integration/mw_lib.sh"
. "$(dirname "$0")/../integration/mwl_lib.sh"
. "$(dirname "$0")/../wan/netbed.sh"
SIZE=${DEMO_SIZE:-1536}
BLOCK=${DEMO_BLOCK:-128}

if [ "${DEMO_LOOPBACK:-0}" != 1 ] && why=$(netbed_check); then
	echo "== two network namespaces joined by wanemu: 100 ms round trip, 50 Mbit/s"
	netbed_up 2 'all:delay=50ms,rate=50mbit' || fail "the wanemu test bed did not start"
	NS_clusterA=$(netbed_ns s1)
	NS_clusterB=$(netbed_ns s2)
	ADDR_clusterB=$(netbed_addr s2)
	where="wanemu, 100 ms RTT, 50 Mbit/s"
else
	echo "== gateways on loopback (${why:-DEMO_LOOPBACK=1}; as root with /dev/net/tun the demo uses wanemu)"
	where="loopback"
fi
JOBUSER=$(job_user) || fail "running as root, and there is no user nobody to run clusterB's job as"
APP=$T/app/mw_matmul
job_app "$T/app"
EXEC_clusterB=$(exec_group "$JOBUSER" "$APP")
echo "== starting ldsd for clusterB and clusterA (4 striped TCP streams between them);"
echo "   clusterB's gateway runs jobs that clusterA asks for, of $APP only, as user $JOBUSER:"
echo "   $EXEC_clusterB"
star_clusters 2 4
START=gateway GRAIN=4 PREFETCH=32 DEADLINE=60 WORKERS=1 JOB_TIMEOUT=300 LINK_TIMEOUT=30 \
	write_job 2 "-n $SIZE -b $BLOCK --verify"
echo "== the job file ($T/job.conf):"
sed 's/^/   /' "$T/job.conf"
echo "== mwlaunch: clusterA = master, 1 worker, 1 communication manager (started here);"
echo "             clusterB = sub-master, communication manager, 1 worker (started by its gateway);"
echo "             grain 4 over $where"
start=$(date +%s)
timeout 400 "$BIN/mwlaunch" -j "$T/job.json" "$T/job.conf" 2>&1 | tee "$T/out"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || fail "mwlaunch failed with exit status $rc"
check_job 2
grep -q "^mwlaunch: cluster clusterB: started by its gateway: .* as user $JOBUSER$" "$T/out" ||
	fail "clusterB was not started by its gateway"
echo "== link statistics (ldsctl status on clusterA)"
ctl clusterA status
echo "== demo done in $(( $(date +%s) - start )) s: $SIZE x $SIZE product verified;" \
	"clusterB computed $(cm_done clusterB) of $(jq .clusters[0].report.tasks "$T/job.json") block products"
