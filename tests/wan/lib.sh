# lib.sh - shared helpers of the wanemu tests (sourced, not run): a bed of
# sites from netbed.sh, skipped (exit 77) where this machine cannot run
# one, and checks that compare a measurement with what was configured.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/netbed.sh"
WANEMU=$NETBED_WANEMU
PORT=$((20000 + ($$ % 12000)))

if ! why=$(netbed_check); then
	echo "SKIP: $why"
	exit 77
fi
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }

# These tests hold the emulator to the wall clock (a delay to the
# millisecond, a rate to 3 %).  Beside a CPU-bound program at the same
# priority, wanemu's thread and the measuring probes got the CPU late
# and the RTTs came out 1-4 ms long (a stress run, docs/testbed.md): an
# emulated network must not queue behind the hosts' load.  So wanemu, the
# probes and iperf3 run under SCHED_FIFO where this machine allows it
# (the kernel's RT throttling still leaves others 5 % of each CPU).
if chrt -f 10 true 2> /dev/null; then NETBED_SCHED="chrt -f 10"; else NETBED_SCHED=""; fi

# sched_exec SITE COMMAND...: COMMAND in SITE, at the emulator's priority.
sched_exec() { netbed_exec "$1" $NETBED_SCHED "${@:2}"; }

fail() {
	echo "FAIL: $*" >&2
	[ -n "${NETBED_DIR:-}" ] && [ -f "$NETBED_DIR/wanemu.log" ] && tail -5 "$NETBED_DIR/wanemu.log" >&2
	exit 1
}

# check NAME VALUE LOW HIGH: LOW <= VALUE <= HIGH, and say what was measured.
check() {
	echo "measured: $1 = $2 (want $3 .. $4)"
	awk -v v="$2" -v l="$3" -v h="$4" 'BEGIN { exit !(v != "" && v + 0 >= l + 0 && v + 0 <= h + 0) }' ||
		fail "$1 = $2, outside $3 .. $4"
}

# binomial99 N P: the 99 % interval of a Binomial(N, P) count (normal
# approximation, fine for N P (1 - P) > 20).
binomial99() {
	awk -v n="$1" -v p="$2" 'BEGIN { m = n * p; s = 2.5758 * sqrt(n * p * (1 - p));
		printf "%d %d\n", int(m - s), int(m + s + 1) }'
}

# probe_server SITE: a UDP echo server in SITE for the rest of the test.
probe_server() {
	sched_exec "$1" "$WANEMU" probe --server -p "$PORT" -t 120s &
	# netbed_down kills it; disowned, bash does not report that.
	disown
	sleep 0.2
}

# probe FROM TO ARGS...: probe's JSON, from site FROM to site TO.
probe() {
	local from=$1 to=$2
	shift 2
	sched_exec "$from" "$WANEMU" probe -p "$PORT" "$@" "$(netbed_addr "$to")" || fail "probe $from -> $to"
}

# stat DIRECTION FIELD: a counter from wanemu's stats.
stat() { netbed_ctl stats | jq -r ".directions[] | select(.name == \"$1\") | .$2"; }
