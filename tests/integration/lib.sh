# lib.sh - shared helpers for the integration tests (sourced, not run).
#
# Each test gets a fresh directory, its own ports, two ldsd processes
# (clusterA connects, clusterB listens) on loopback, and a trap that kills
# everything it started, whatever happens.
set -u

BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=$ROOT/$BUILD/bin
TBIN=$ROOT/$BUILD/tests
T=$(mktemp -d "${TMPDIR:-/tmp}/lds-it.XXXXXX")
PIDS=""
# Ports from the test's own PID, so that parallel runs do not collide, and
# below the ephemeral range (32768 and up) so that no client socket of ours
# can be given the port a gateway is about to listen on.  A test uses at
# most PORT .. PORT+600.
PORT=$((20000 + ($$ % 12000)))

cleanup() {
	# Quiet: bash would report each killed job.
	exec 2>/dev/null
	for p in $PIDS; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then echo "kept $T"; else rm -rf "$T"; fi
}
# A signal ends the script (through the EXIT trap): cleaning up and going
# on would run the rest without its processes and files, and exit 0.
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# waited CMD...: runs CMD in the background and waits for it, so that a
# signal ends the script at once (bash holds a trap back until a
# foreground command has ended).  The cleanup SIGKILLs CMD, not what CMD
# started: use it for a single process, or for one in a netbed site,
# which netbed_down empties.
waited() { "$@" & PIDS="$PIDS $!"; wait $!; }

fail() {
	echo "FAIL: $*" >&2
	for f in "$T"/*.log; do [ -e "$f" ] && { echo "--- $f (tail)"; tail -15 "$f"; } >&2; done
	for c in "$T"/*.ctl; do
		[ -S "$c" ] && { echo "--- ldsctl -s $c status"; timeout 5 "$BIN/ldsctl" -s "$c" status; } >&2
	done
	exit 1
}

# make_key FILE: a fresh pre-shared key.
make_key() { head -c 32 /dev/urandom | base64 > "$1"; chmod 600 "$1"; }

# Gateways run on loopback unless a test sets GW_ADDR (the listening
# gateway's address, which the other connects to) and NS_<NAME> (the
# network namespace to run gateway NAME in), as the WAN tests do.
GW_ADDR=${GW_ADDR:-127.0.0.1}

# write_conf NAME PEER ROLE STREAMS [EXTRA-PEER-SETTINGS]; $CLIENTS_EXTRA
# goes into the clients group.
write_conf() {
	cat > "$T/$1.conf" <<EOC
cluster = "$1";
clients = { socket = "$T/$1.sock"; ${CLIENTS_EXTRA:-} };
control_socket = "$T/$1.ctl";
allow_faults = true;
drain_timeout = 20.0;
peers = ( { cluster = "$2"; role = "$3"; address = "$GW_ADDR"; port = $PORT;
            streams = $4; key_file = "${KEYFILE:-$T/key}"; ${5:-} } );
EOC
}

# start_ldsd NAME: starts it in the foreground mode, logs to $T/NAME.log
# (with debug messages if LDSD_DEBUG is set).
start_ldsd() {
	local ns
	eval "ns=\${NS_$1:-}"
	# ip netns exec execs ldsd: $! is ldsd's pid either way.
	${ns:+ip netns exec "$ns"} "$BIN/ldsd" -f ${LDSD_DEBUG:+-d} -c "$T/$1.conf" >> "$T/$1.log" 2>&1 &
	eval "PID_$1=$!"
	PIDS="$PIDS $!"
	for _ in $(seq 1 50); do [ -S "$T/$1.sock" ] && return 0; sleep 0.1; done
	fail "ldsd $1 did not create its socket"
}

# wait_up NAME N: until link of NAME has N streams up (10 s).
wait_up() {
	for _ in $(seq 1 100); do
		"$BIN/ldsctl" -s "$T/$1.ctl" status --json 2>/dev/null | grep -q "\"streams_up\":$2" && return 0
		sleep 0.1
	done
	fail "$1: $2 streams not up within 10 s"
}

# expect RC PATTERN CMD...: CMD exits RC and says PATTERN (within 30 s).
expect() {
	local rc=$1 pat=$2 out got
	shift 2
	out=$(timeout 30 "$@" 2>&1)
	got=$?
	[ "$got" -eq "$rc" ] || fail "$* exited $got, want $rc: $out"
	echo "$out" | grep -q -- "$pat" || fail "$* said: $out"
}

# wait_log FILE REGEX [SECONDS]: until a line of FILE matches REGEX
# (grep -E), polling for at most SECONDS (default 10): what a test waits
# for, not a guess of how long it takes, so that a loaded machine only
# makes it slower.  1 if it never matched.
wait_log() {
	for _ in $(seq 1 $(( ${3:-10} * 10 ))); do
		grep -Eq -- "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
	done
	grep -Eq -- "$2" "$1" 2> /dev/null
}

# two_clusters STREAMS [EXTRA]: clusterA (connect) and clusterB (listen).
# STREAMS may be '"auto"', which starts with 8.
two_clusters() {
	make_key "$T/key"
	write_conf clusterB clusterA listen "$1" "${2:-}"
	write_conf clusterA clusterB connect "$1" "${2:-}"
	start_ldsd clusterB
	start_ldsd clusterA
	wait_up clusterA "$([ "$1" = '"auto"' ] && echo 8 || echo "$1")"
}

ctl() { "$BIN/ldsctl" -s "$T/$1.ctl" "${@:2}"; }

# json_field NAME KEY: first numeric value of "KEY" in NAME's status.
json_field() { ctl "$1" status --json | grep -o "\"$2\":[0-9.]*" | head -1 | cut -d: -f2; }

# cpu_seconds PID: user + system CPU seconds a running process has used.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }

# start_pair COUNT "RECV-OPTS" "SEND-OPTS" [COMMON-OPTS...]: clusterA/src
# sends COUNT checksummed messages to clusterB/sink, which verifies them.
# Sets rpid and spid; output goes to $T/{r,s}.out and $T/{r,s}.log.
start_pair() {
	local count=$1 ropts=$2 sopts=$3
	shift 3
	# shellcheck disable=SC2086
	"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c "$count" "$@" $ropts \
		> "$T/r.out" 2> "$T/r.log" &
	rpid=$!
	# shellcheck disable=SC2086
	"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c "$count" "$@" $sopts \
		> "$T/s.out" 2> "$T/s.log" &
	spid=$!
}

# wait_pair: both must succeed.
wait_pair() {
	wait "$spid" || fail "sender: $(cat "$T/s.out" "$T/s.log")"
	wait "$rpid" || fail "receiver: $(cat "$T/r.out" "$T/r.log")"
}

# Options for a pair that lives through a gateway restart: the receiver
# reconnects its handle, the sender resends what it is told was lost (and
# lists it in $T/lost).
RESTART_RECV_OPTS="--reconnect"
RESTART_SEND_OPTS="--resend-lost --lost-file $T/lost"
