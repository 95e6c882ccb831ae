# mwl_lib.sh - helpers for the mwlaunch tests (sourced after lib.sh and
# mw_lib.sh): a star of gateways (clusterA in the centre, linked to
# clusterB, clusterC...), a job file for it, and checks of the job's
# JSON summary.
CLUSTERS=(clusterA clusterB clusterC clusterD)

# star_conf N STREAMS: the gateways' configurations.  clusterA connects to
# each other cluster K, which listens on PORT+K at ${ADDR_<name>:-GW_ADDR}.
# EXEC_<name> is added to that cluster's file (its exec group), PEERS_<name>
# to its peers list, PEER_EXTRA to every peer group on both sides.
star_conf() {
	local n=$1 streams=$2 peers="" name addr exec more
	[ -e "$T/key" ] || make_key "$T/key"
	for ((k = 1; k < n; k++)); do
		name=${CLUSTERS[$k]}
		eval "addr=\${ADDR_$name:-$GW_ADDR} exec=\${EXEC_$name:-} more=\${PEERS_$name:-}"
		cat > "$T/$name.conf" <<EOC
cluster = "$name";
clients = { socket = "$T/$name.sock"; };
control_socket = "$T/$name.ctl";
drain_timeout = 5.0;
peers = ( { cluster = "clusterA"; role = "listen"; address = "$addr"; port = $((PORT + k));
            streams = $streams; key_file = "$T/key"; ${PEER_EXTRA:-} } ${more:+, $more} );
$exec
EOC
		peers="$peers${peers:+,} { cluster = \"$name\"; role = \"connect\"; address = \"$addr\";
            port = $((PORT + k)); streams = $streams; key_file = \"${KEYFILE:-$T/key}\"; ${PEER_EXTRA:-} }"
	done
	cat > "$T/clusterA.conf" <<EOC
cluster = "clusterA";
clients = { socket = "$T/clusterA.sock"; };
control_socket = "$T/clusterA.ctl";
drain_timeout = 5.0;
peers = ( $peers );
EOC
}

# star_on_netbed N LINK-SPEC STREAMS: N netbed sites joined by wanemu
# (netbed.sh sourced), cluster K's gateway in site s(K+1), then
# star_clusters N STREAMS.
star_on_netbed() {
	netbed_up "$1" "$2" || fail "the wanemu test bed did not start"
	for ((k = 0; k < $1; k++)); do
		eval "NS_${CLUSTERS[$k]}=$(netbed_ns "s$((k + 1))")"
		[ "$k" = 0 ] || eval "ADDR_${CLUSTERS[$k]}=$(netbed_addr "s$((k + 1))")"
	done
	star_clusters "$1" "$3"
}

# outage_mid_run PID LINK SECONDS: once clusterB's sub-master has done some
# of its work (its progress line in $T/out) while job PID runs, LINK of
# the netbed goes black for SECONDS; the job must still run afterwards.
outage_mid_run() {
	for _ in $(seq 1 300); do
		grep -q '^\[clusterB:0\] mw: [1-9][0-9]*/' "$T/out" && break
		kill -0 "$1" 2> /dev/null || fail "the job ended before the outage: $(tail -20 "$T/out")"
		sleep 0.1
	done
	netbed_ctl "$2" down > /dev/null || fail "wanemu ctl $2 down"
	sleep "$3"
	netbed_ctl "$2" up > /dev/null || fail "wanemu ctl $2 up"
	kill -0 "$1" 2> /dev/null || fail "the job ended during the outage"
}

# star_clusters N STREAMS: starts them and waits until every link is up.
star_clusters() {
	star_conf "$1" "$2"
	for ((k = 1; k < $1; k++)); do start_ldsd "${CLUSTERS[$k]}"; done
	start_ldsd clusterA
	for ((k = 1; k < $1; k++)); do wait_up "${CLUSTERS[$k]}" "$2"; done
}

# cpus CPUS WORKER-CPUS: a cluster's settings for them, where set.
cpus() { echo "${1:+cpus = \"$1\";} ${2:+worker_cpus = \"$2\";}"; }

# write_job N "APP-ARGS" [EXTRA-JOB-SETTINGS]: $T/job.conf for mw_matmul
# (or APP) over the star; WORKERS (per cluster; MAIN_WORKERS for clusterA),
# GRAIN, PREFETCH, PREFETCH_MIB, DEADLINE, CACHE_MIB, STATS_IV (StatisticsInterval),
# LOAD_BALANCE (LoadBalance; unset: the runtime's default), FRAMEWORK
# (extra entries), CPUS and WORKER_CPUS (the remote clusters'
# cpus and worker_cpus; MAIN_CPUS, MAIN_WORKER_CPUS clusterA's) tune it,
# START says how remote clusters start ("local" unless set).
# on_remote_failure: $ON_REMOTE_FAILURE, default "abort" (these tests
# check a failure's own path); "default": the line is left out.
write_job() {
	local n=$1 args="" a cl=""
	for a in $2; do args="$args${args:+, }\"$a\""; done
	for ((k = 0; k < n; k++)); do
		if [ "$k" = 0 ]; then
			cl="{ name = \"clusterA\"; main = true; workers = ${MAIN_WORKERS:-${WORKERS:-1}}; socket = \"$T/clusterA.sock\"; $(cpus "${MAIN_CPUS:-}" "${MAIN_WORKER_CPUS:-}") }"
		else
			cl="$cl, { name = \"${CLUSTERS[$k]}\"; workers = ${WORKERS:-1}; socket = \"$T/${CLUSTERS[$k]}.sock\";
			   start = \"${START:-local}\"; grain = ${GRAIN:-4}; prefetch = ${PREFETCH:-32}; ${PREFETCH_MIB:+prefetch_mib = $PREFETCH_MIB;}
			   deadline = ${DEADLINE:-10.0}; ${CACHE_MIB:+cache_mib = $CACHE_MIB;} $(cpus "${CPUS:-}" "${WORKER_CPUS:-}") }"
		fi
	done
	cat > "$T/job.conf" <<EOC
application = { program = "${APP:-$MWBIN/mw_matmul}"; args = [ $args ]; };
framework = { StatisticsInterval = ${STATS_IV:-1.0}; IdleSleepMax = 0.002; ${LOAD_BALANCE:+LoadBalance = $LOAD_BALANCE;} ${FRAMEWORK:-} };
timeout = ${JOB_TIMEOUT:-120.0};
link_timeout = ${LINK_TIMEOUT:-20.0};
${3:-}
$(case "${ON_REMOTE_FAILURE:-abort} ${3:-}" in default*|*on_remote_failure*) ;; *) echo "on_remote_failure = \"${ON_REMOTE_FAILURE:-abort}\";" ;; esac)
clusters = ( $cl );
EOC
}

# mwlaunch_job: runs the job (bounded), output in $T/out, summary in
# $T/job.json; returns mwlaunch's exit status.
mwlaunch_job() {
	timeout 200 "$BIN/mwlaunch" -j "$T/job.json" "$@" "$T/job.conf" > "$T/out" 2>&1
}

# mwlaunch_timed: mwlaunch_job with its exit status in rc and its
# duration in secs.
mwlaunch_timed() {
	local start
	start=$(date +%s)
	mwlaunch_job; rc=$?
	secs=$(( $(date +%s) - start ))
}

# check_job N: the product was verified by the master, every cluster ended
# well, the master joined every task once, and every remote cluster
# computed a share (its CM's results came from its workers).  That share
# is sure only with LOAD_BALANCE=false in the job: with end-of-run copies,
# a main cluster that finishes before a remote one has started (a loaded
# machine) also runs copies of what the remote CM holds, and its first
# results win.  Without copies the CM's tasks wait for its cluster.
check_job() {
	grep -q '^\[clusterA:0\] mw_matmul: verify: .*: OK$' "$T/out" || fail "product not verified: $(tail -30 "$T/out")"
	jq -e --argjson n "$1" '
		.status == "ok" and (.clusters | length) == $n and all(.clusters[]; .status == "exit 0") and
		(.clusters[0].report | .joined == .tasks and ([.workers[].done] | add) == .tasks) and
		([.clusters[0].report.workers[] | select(.role == "CommManager")] | length) == $n - 1 and
		all(.clusters[0].report.workers[] | select(.role == "CommManager"); .done > 0) and
		all(.clusters[1:][]; .report.joined > 0)' "$T/job.json" > /dev/null ||
		fail "job summary does not add up: $(cat "$T/job.json")"
}

# sumcheck_app: the tests' own application (tests/mw/mw_sumcheck.c, which
# shares no code with the examples) as the job's APP.
sumcheck_app() {
	APP=$ROOT/$BUILD/mwtests/mw_sumcheck
	[ -x "$APP" ] || fail "$APP missing: run make"
}

# cm_done NAME: tasks the master counted as done by NAME's CM.
cm_done() {
	jq --arg h "cm:$1" '.clusters[0].report.workers[] | select(.host == $h) | .done' "$T/job.json"
}

# exec_group USER PROGRAM...: an exec group that lets clusterA start those
# programs as USER (for EXEC_<name>).
exec_group() {
	local user=$1 progs="" p
	shift
	for p in "$@"; do progs="$progs${progs:+, }\"$p\""; done
	echo "exec = { allow_clusters = [ \"clusterA\" ]; programs = [ $progs ]; user = \"$user\"; max_time = 600.0; };"
}

# job_user: who gateway-started jobs run as: as root the unprivileged
# "nobody", otherwise ourselves (a daemon that is not root can only run
# jobs as itself).  Prints the name; returns 1 when root has no nobody.
job_user() {
	if [ "$(id -u)" != 0 ]; then id -un; return 0; fi
	id nobody > /dev/null 2>&1 && echo nobody
}

# job_app DIR: the programs a gateway job runs, where its unprivileged
# user can reach them (our test directory is root's, mode 0700): copies of
# mw_matmul in DIR, opened to others, as is $T for the gateways' sockets.
job_app() {
	mkdir -p "$1" && cp "$MWBIN/mw_matmul" "$1/" && chmod 755 "$1" "$1/mw_matmul" && chmod 711 "$T" ||
		fail "cannot set up $1"
}

# role_pid ROLE: a process of this test's job (our session) whose
# MWL_ROLE is ROLE (master, worker, cm, submaster); 1 if none runs.
role_pid() {
	local p
	for p in $(pgrep -s 0 -f "${APP:-$MWBIN/mw_matmul}" 2> /dev/null); do
		tr '\0' '\n' < "/proc/$p/environ" 2> /dev/null | grep -qx "MWL_ROLE=$1" && { echo "$p"; return 0; }
	done
	return 1
}
