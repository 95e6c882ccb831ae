#!/usr/bin/env bash
# Remote clusters started through their gateways (ldsd's exec service):
# clusterA's gateway is linked to clusterB (exec group: jobs of clusterA,
# as an unprivileged user), clusterC (jobs of another cluster only) and
# clusterD (no exec group).  mw_matmul runs over A and B with B started by
# its gateway: product verified, B's output tagged, its report sent back,
# its processes of the configured user, its job directory removed.  A
# job's output waits for a reader without loss; STOP ends a job.  Every
# refusal - a program off the allow-list (also through a symbolic link),
# a forbidden environment variable, a cluster not allowed, a gateway without exec, a malformed
# request, a local client posing as the service - is logged by the
# refusing gateway and returned; mwlaunch then fails quickly and says why.
# An argument ":" reaches the program, not mpirun (tests/security has the
# attacks on the exec service).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
# Every remote cluster computes a share however late it starts (check_job).
LOAD_BALANCE=false
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
JOBUSER=$(job_user) || { echo "SKIP: running as root, and there is no user nobody to run gateway jobs as"; exit 77; }
JOBUID=$(id -u "$JOBUSER")
APPDIR=$T/app
job_app "$APPDIR"
ln -s /bin/sh "$APPDIR/mw_link"
EXEC_clusterB="$(exec_group "$JOBUSER" "$APPDIR/mw_matmul" /usr/bin/id /bin/sleep /usr/bin/seq) allow_faults = true;"
EXEC_clusterC="exec = { allow_clusters = [ \"clusterZ\" ]; programs = [ \"/usr/bin/id\" ]; user = \"$JOBUSER\"; };"
PEERS_clusterC="{ cluster = \"clusterZ\"; role = \"listen\"; address = \"$GW_ADDR\"; port = $((PORT + 9)); key_file = \"$T/key\"; }"
# A small window per destination (recv_memory / 4), so that a job's
# output must wait for its reader.
PEER_EXTRA='recv_memory = "1M";'
star_clusters 4 2
EXEC="$TBIN/exectest -s $T/clusterA.sock -T 30"

# refused CLUSTER ERRNO TEXT EXECTEST-ARGS...: refused with errno and text,
# answered at once, and logged by that cluster's gateway.
refused() {
	local cl=$1 err=$2 text=$3 rc
	shift 3
	timeout 40 $EXEC -c "$cl" "$@" > "$T/x.out" 2>&1; rc=$?
	[ "$rc" = 3 ] && grep -q "^REFUSED $err .*$text" "$T/x.out" || fail "$*: not refused with $err '$text' (exit $rc): $(cat "$T/x.out")"
	grep -q "exec: refused job .* (link clusterA): .*$text" "$T/$cl.log" || fail "$*: refusal not logged on $cl: $(tail -5 "$T/$cl.log")"
}

# Who the jobs run as: id's own answer, through the gateway.
timeout 40 $EXEC -c clusterB /usr/bin/id > "$T/x.out" 2>&1 || fail "id through the gateway: $(cat "$T/x.out")"
grep -q "^\[1,0\]<stdout>:uid=$JOBUID($JOBUSER) gid=$(id -g "$JOBUSER")(" "$T/x.out" || fail "id did not run as $JOBUSER: $(cat "$T/x.out")"
grep -q "^EXIT 0 " "$T/x.out" || fail "id: no EXIT 0: $(cat "$T/x.out")"

# The job: clusterB through its gateway.
START=gateway APP=$APPDIR/mw_matmul write_job 2 "-n 384 -b 32 --verify"
"$BIN/mwlaunch" --dry-run "$T/job.conf" > "$T/dry" || fail "--dry-run failed"
grep -q "started by its gateway: the request goes through $T/clusterA.sock (ldsd of clusterA) to clusterB/ldsd.exec" "$T/dry" &&
	grep -q "^  ranks as one mpirun would start them (clusterB's gateway runs each through ldsd-exec): mpirun --tag-output -np 1 -x MWL_ROLE=submaster" "$T/dry" ||
	fail "--dry-run does not say which gateway runs what: $(cat "$T/dry")"
mwlaunch_job & mpid=$!
uid=""
# Only this test's ranks (other tests on the machine run mw_matmul too,
# some as root), by their socket in $T; the effective uid from status.
for _ in $(seq 1 300); do
	for p in $(pgrep -x mw_matmul); do
		tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -x -e MWL_CLUSTER=clusterB -e "LDS_SOCKET=$T/.*" |
			grep -c . | grep -qx 2 && uid=$(awk '/^Uid:/ { print $3 }' "/proc/$p/status") && break 2
	done
	sleep 0.05
done
wait "$mpid" || fail "mwlaunch failed ($?): $(tail -30 "$T/out")"
check_job 2
share="$(cm_done clusterB) of $(jq .clusters[0].report.tasks "$T/job.json")"
[ "$uid" = "$JOBUID" ] || fail "clusterB's ranks ran as uid '${uid:-none seen}', not $JOBUSER ($JOBUID)"
grep -q "^mwlaunch: cluster clusterB: started by its gateway: .* as user $JOBUSER$" "$T/out" || fail "no start message: $(head "$T/out")"
grep -q '^\[clusterB:1\] mw: cm: linked to clusterA/cm-clusterB' "$T/out" || fail "clusterB's output not tagged: $(tail -30 "$T/out")"
dir=$(grep -o "in /[^ ]*lds-job-[^ ,]*" "$T/clusterB.log" | tail -1 | cut -c4-)
[ -n "$dir" ] && [ ! -e "$dir" ] || fail "job directory '$dir' was not removed"
# The job's end, told to both gateways (ldsd/jobend.h): to clusterB's
# through the link by the endpoint that started the job there.
id=$(jq -r .id "$T/job.json")
wait_log "$T/clusterB.log" "exec: clusterA/[^ ]* ended job $id \(its job [0-9]+\)" 5 ||
	fail "clusterB's gateway was not told that job $id ended: $(grep -i 'end' "$T/clusterB.log" | tail -3)"
grep -q "ended job $id: " "$T/clusterA.log" || fail "clusterA's gateway was not told that job $id ended"

# Output waits for its reader (-P: it reads nothing for 8 s), and for a
# link that is down (its streams stalled, a black hole, until the gateways
# give up on them and reconnect): the job blocks (the gateway reads no
# more of its output for a second), and every byte it read arrives.  The
# stalled-link job writes until STOP (-S) ends it, so that no machine is
# fast enough to finish it before the stall.
held_back() {
	local got sent rc
	wait_up clusterB 2
	if [ "$1" = -P ]; then
		timeout 60 $EXEC -c clusterB "$@" -l /usr/bin/seq 1 1500000 > "$T/bp.out" 2>&1 & xpid=$!
	else
		timeout 60 $EXEC -c clusterB "$@" -l /usr/bin/seq 1 inf > "$T/bp.out" 2>&1 & xpid=$!
		sleep 0.5
		ctl clusterB fault stall clusterA > /dev/null || fail "cannot stall the link"
	fi
	# How much it wrote before it was held back depends on the machine's
	# speed; that it then stays blocked, its output unread, does not: two
	# looks 0.5 s apart find it waiting with the same bytes read.  On a
	# loaded machine the first "waiting" can be a moment's, the link
	# draining again until the receiving side's share is full: looked for
	# again every 0.05 s, within the hold (8 s of -P, less the job's start,
	# which a loaded machine made 3 s; a stall lasts 2 s, until the silence
	# is noticed and the link replaced).
	local ok=0 t0
	t0=$(date +%s%N)
	while [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt 7000 ]; do
		ctl clusterB status --json > "$T/st1.json"
		if jq -e '.exec.jobs[0].waiting_for_link == true' "$T/st1.json" > /dev/null; then
			sleep 0.5
			ctl clusterB status --json > "$T/st2.json"
			jq -e --argjson b "$(jq .exec.jobs[0].output_bytes "$T/st1.json")" \
				'.exec.jobs[0].waiting_for_link == true and .exec.jobs[0].output_bytes == $b' "$T/st2.json" \
				> /dev/null && ok=1 && break
		else
			sleep 0.05
		fi
	done
	[ "$ok" = 1 ] || fail "$*: the job was not held back: $(jq -c .exec "$T/st1.json") then $(jq -c .exec "$T/st2.json" 2> /dev/null)"
	wait "$xpid"; rc=$?
	if [ "$1" = -P ]; then
		[ "$rc" = 0 ] && grep -q "^EXIT 0 exit 0, " "$T/bp.out"
	else
		[ "$rc" = 1 ] && grep -q "^EXIT .*, stopped: asked by clusterA/anon-[0-9a-f]*: exectest -S$" "$T/bp.out"
	fi || fail "seq through the gateway ($*): exit $rc: $(cat "$T/bp.out")"
	got=$(sed -n 's/^BYTES //p' "$T/bp.out")
	sent=$(sed -n 's/^EXIT .*, \([0-9]*\) bytes of output.*$/\1/p' "$T/bp.out")
	[ -n "$got" ] && [ "$got" = "$sent" ] || fail "$*: output lost: gateway read $sent bytes, $got arrived: $(cat "$T/bp.out")"
	held="$held $got"
}
held=""
held_back -P 8
held_back -S 4

# STOP: SIGTERM to the job, whose end is reported with the reason.
start=$(date +%s)
timeout 40 $EXEC -c clusterB -S 0.5 /bin/sleep 60 > "$T/x.out" 2>&1
grep -q "^EXIT .* stopped: asked by clusterA/anon-[0-9a-f]*: exectest -S$" "$T/x.out" || fail "stop: $(cat "$T/x.out")"
stop_s=$(( $(date +%s) - start ))
[ "$stop_s" -lt 10 ] || fail "stop took $stop_s s"

refused clusterB 13 "program /bin/sh is not on the allow-list" /bin/sh -c id
refused clusterB 13 "program $APPDIR/mw_link is not on the allow-list" "$APPDIR/mw_link" -c id
refused clusterB 1 'environment entry "PATH=/tmp" of rank 0 is not allowed' -e PATH=/tmp /usr/bin/id
# ":" is the program's argument: mpirun never sees a request's arguments.
# (id may write its message in two pieces, each tagged.)
timeout 40 $EXEC -c clusterB /usr/bin/id : /bin/sh > "$T/x.out" 2>&1
grep -q "<stderr>:':': no such user\|<stderr>:/usr/bin/id: ':': no such user" "$T/x.out" && grep -q "^EXIT 1 " "$T/x.out" ||
	fail "\":\" did not reach id as its argument: $(cat "$T/x.out")"
refused clusterB 74 "malformed request of 8 bytes" -r 0301000000070000
refused clusterB 93 "another version of the exec protocol" -r 0101000000070000
refused clusterC 1 "cluster clusterA may not start jobs on cluster clusterC" /usr/bin/id
refused clusterD 38 "the gateway of cluster clusterD runs no jobs" /usr/bin/id
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n ldsd.exec -f x -c 1 -T 5 > "$T/x.out" 2>&1 &&
	fail "a client opened the endpoint ldsd.exec"
grep -q "Permission denied" "$T/x.out" || fail "reserved endpoint: $(cat "$T/x.out")"
timeout 20 "$TBIN/exectest" -s "$T/clusterB.sock" -c clusterB -T 10 /usr/bin/id > "$T/x.out" 2>&1
grep -q "^ERROR clusterB/ldsd.exec takes requests from peer gateways only" "$T/x.out" || fail "local request: $(cat "$T/x.out")"

# mwlaunch refused: a program off clusterB's allow-list (a copy at
# another path), and a cluster that does not take clusterA's jobs.
cp "$APPDIR/mw_matmul" "$APPDIR/mw_other"
START=gateway APP=$APPDIR/mw_other write_job 2 "-n 128 -b 32"
mwlaunch_timed
[ "$rc" = 1 ] || fail "program off the allow-list: exit $rc: $(tail -20 "$T/out")"
grep -q "^mwlaunch: cluster clusterB: its gateway refused to start it: program $APPDIR/mw_other is not on the allow-list" "$T/out" ||
	fail "no clear refusal: $(tail -20 "$T/out")"
# The summary's status says why, whole (it was cut at 63 bytes).
jq -e --arg p "$APPDIR/mw_other" '.status == "failed" and
	(.clusters[1].status | startswith("refused by its gateway: program \($p) is not on the allow-list"))' \
	"$T/job.json" > /dev/null ||
	fail "summary: $(cat "$T/job.json")"
[ "$secs" -lt 30 ] || fail "refused job took $secs s"
START=gateway APP=$APPDIR/mw_matmul write_job 2 "-n 128 -b 32"
sed -i 's/"clusterB"/"clusterC"/; s|clusterB.sock|clusterC.sock|' "$T/job.conf"
mwlaunch_job; rc=$?
[ "$rc" = 1 ] && grep -q "^mwlaunch: cluster clusterC: its gateway refused to start it: cluster clusterA may not start jobs" "$T/out" ||
	fail "cluster not allowed: exit $rc: $(tail -20 "$T/out")"
echo "measured: clusterB started through its gateway as $JOBUSER computed $share tasks;" \
	"held-back output arrived whole (bytes, reader away / link down:$held); a stop took ${stop_s} s; a refused job ended in $secs s"
