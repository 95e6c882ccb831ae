#!/usr/bin/env bash
# netbed.sh - a test bed of N sites joined by wanemu links (full mesh).
#
# Site K (1..N) is network namespace ${NETBED_PREFIX}sK holding loopback and
# TUN device wan0 with gateway address 10.77.0.K/24; sites reach each other
# only through wanemu, one emulated link per pair.  See docs/testbed.md.
#
# As a library (bash):
#   . tests/wan/netbed.sh
#   netbed_check || exit 77            # prints why it cannot run
#   netbed_up 3 'all:delay=10ms' 's1-s3:delay=40ms,loss=1%'
#   netbed_exec s1 iperf3 -c "$(netbed_addr s2)"
#   netbed_ctl s1-s2 down              # wanemu ctl on this bed
#   netbed_down                        # also run by the EXIT trap
# netbed_up puts netbed_down in front of the EXIT trap already set, so
# set your own trap first.  Extra wanemu options: NETBED_OPTS (e.g.
# "--seed 7 --outage s1-s2:5s@2s"); files (wanemu.log, stats.json) go to
# NETBED_DIR (default: a fresh temporary directory, removed by
# netbed_down unless NETBED_KEEP=1).  NETBED_SCHED: a command put in front
# of wanemu (tests/wan/lib.sh: "chrt -f 10" for the emulator's own tests).
#
# As a command:
#   tests/wan/netbed.sh N [LINK-SPEC...] -- COMMAND [ARG...]
#       brings the bed up, runs COMMAND in the host namespace with
#       NETBED_PREFIX, NETBED_N and NETBED_CTL exported, tears it down and
#       exits with COMMAND's status (77 if the bed cannot run here);
#   tests/wan/netbed.sh exec SITE COMMAND [ARG...]
#       inside such a COMMAND: runs COMMAND in site SITE (s1, s2, ...).
# LINK-SPEC: "all:PARAMS" for every pair, or "sA-sB:PARAMS" / "sA>sB:PARAMS"
# (PARAMS as in wanemu(8)); later specs add to earlier ones.

NETBED_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NETBED_WANEMU=${NETBED_WANEMU:-$NETBED_ROOT/${BUILD:-build}/bin/wanemu}
NETBED_PREFIX=${NETBED_PREFIX:-nb$$}
NETBED_N=${NETBED_N:-0}
NETBED_PID=""
NETBED_OWNDIR=0

# netbed_check: 0 if this machine can run a bed, else 1 with the reason.
netbed_check() {
	if [ "$(id -u)" -ne 0 ]; then echo "netbed: needs root (network namespaces, TUN devices)"; return 1; fi
	if [ ! -c /dev/net/tun ]; then echo "netbed: /dev/net/tun is missing (modprobe tun)"; return 1; fi
	if ! command -v ip > /dev/null; then echo "netbed: ip (iproute2) is missing"; return 1; fi
	if [ ! -x "$NETBED_WANEMU" ]; then echo "netbed: $NETBED_WANEMU is not built (run make)"; return 1; fi
	if ! ip netns add "${NETBED_PREFIX}chk" 2> /dev/null; then
		echo "netbed: cannot create network namespaces here"; return 1
	fi
	ip netns del "${NETBED_PREFIX}chk"
	return 0
}

# netbed_site SITE: the site's index K from "sK" or "K".
netbed_site() {
	local k=${1#s}
	case $k in '' | *[!0-9]*) echo "netbed: bad site '$1' (s1..s$NETBED_N)" >&2; return 1 ;; esac
	if [ "$k" -lt 1 ] || [ "$k" -gt "$NETBED_N" ]; then
		echo "netbed: no site '$1' (s1..s$NETBED_N)" >&2; return 1
	fi
	echo "$k"
}

netbed_addr() { local k; k=$(netbed_site "$1") && echo "10.77.0.$k"; }
netbed_ns() { local k; k=$(netbed_site "$1") && echo "${NETBED_PREFIX}s$k"; }

# netbed_exec SITE COMMAND...: runs COMMAND inside the site's namespace.
netbed_exec() {
	local ns
	ns=$(netbed_ns "$1") || return 2
	shift
	ip netns exec "$ns" "$@"
}

# Prints the command of "trap -- 'COMMAND' EXIT" (its words as arguments).
_netbed_trap_cmd() { printf '%s' "$2"; }

netbed_ctl() { "$NETBED_WANEMU" ctl -s "$NETBED_CTL" "$@"; }

# netbed_up N [LINK-SPEC...]: starts the bed; returns non-zero (and
# leaves nothing behind) if it cannot.
netbed_up() {
	local n=$1 i j spec args=() prev
	shift
	if [ "$n" -lt 2 ] || [ "$n" -gt 16 ]; then echo "netbed: 2..16 sites, not '$n'" >&2; return 2; fi
	if [ -z "${NETBED_DIR:-}" ]; then
		NETBED_DIR=$(mktemp -d "${TMPDIR:-/tmp}/netbed.XXXXXX") || return 1
		NETBED_OWNDIR=1
	fi
	NETBED_N=$n
	NETBED_CTL=$NETBED_DIR/wanemu.sock
	prev=$(trap -p EXIT)
	[ -n "$prev" ] && prev=$(eval "_netbed_trap_cmd ${prev#trap }")
	# shellcheck disable=SC2064
	trap "netbed_down; $prev" EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	for i in $(seq 1 "$n"); do
		ip netns add "${NETBED_PREFIX}s$i" || { netbed_down; return 1; }
		args+=(--site "s$i:netns=${NETBED_PREFIX}s$i,addr=10.77.0.$i/24")
	done
	for i in $(seq 1 "$n"); do
		for j in $(seq $((i + 1)) "$n"); do args+=(--link "s$i-s$j"); done
	done
	for spec in "$@"; do
		if [ "${spec%%:*}" = all ]; then
			for i in $(seq 1 "$n"); do
				for j in $(seq $((i + 1)) "$n"); do args+=(--link "s$i-s$j:${spec#all:}"); done
			done
		else
			args+=(--link "$spec")
		fi
	done
	# shellcheck disable=SC2086
	${NETBED_SCHED:-} "$NETBED_WANEMU" "${args[@]}" --ctl "$NETBED_CTL" --stats "$NETBED_DIR/stats.json" ${NETBED_OPTS:-} \
		> "$NETBED_DIR/wanemu.log" 2>&1 &
	NETBED_PID=$!
	for _ in $(seq 1 100); do
		[ -S "$NETBED_CTL" ] && return 0
		kill -0 "$NETBED_PID" 2> /dev/null || break
		sleep 0.05
	done
	echo "netbed: wanemu did not start:" >&2
	cat "$NETBED_DIR/wanemu.log" >&2
	netbed_down
	return 1
}

# netbed_down: stops wanemu (its counters land in $NETBED_DIR/stats.json),
# kills what still runs in the sites and removes them.  Idempotent.
netbed_down() {
	local i ns pids pid
	if [ -n "$NETBED_PID" ]; then
		kill "$NETBED_PID" 2> /dev/null
		wait "$NETBED_PID" 2> /dev/null
		NETBED_PID=""
	fi
	for i in $(seq 1 "$NETBED_N"); do
		ns=${NETBED_PREFIX}s$i
		[ -e "/run/netns/$ns" ] || continue
		# Only processes inside our own namespaces: nobody else's.  Those
		# that are our children are reaped here, so that bash does not
		# report each as "Killed".
		pids=$(ip netns pids "$ns" 2> /dev/null)
		[ -n "$pids" ] && kill -9 $pids 2> /dev/null
		for pid in $pids; do wait "$pid" 2> /dev/null; done
		ip netns del "$ns" 2> /dev/null
	done
	if [ "$NETBED_OWNDIR" = 1 ] && [ "${NETBED_KEEP:-0}" != 1 ] && [ -n "${NETBED_DIR:-}" ]; then
		rm -rf "$NETBED_DIR"
		NETBED_DIR=""
		NETBED_OWNDIR=0
	fi
}

netbed_main() {
	local n specs=()
	case ${1:-} in
	exec)
		shift
		[ "$NETBED_N" -gt 0 ] || { echo "netbed: exec works inside 'netbed.sh N ... -- COMMAND'" >&2; exit 2; }
		netbed_exec "$@"
		exit
		;;
	-h | --help)
		sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	'')
		echo "netbed: want N [LINK-SPEC...] -- COMMAND, or --help" >&2
		exit 2
		;;
	esac
	n=$1
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do specs+=("$1"); shift; done
	[ "${1:-}" = -- ] && [ $# -gt 1 ] || { echo "netbed: want N [LINK-SPEC...] -- COMMAND" >&2; exit 2; }
	shift
	netbed_check || exit 77
	netbed_up "$n" "${specs[@]}" || exit 1
	export NETBED_PREFIX NETBED_N NETBED_CTL
	"$@"
	exit
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	netbed_main "$@"
fi
