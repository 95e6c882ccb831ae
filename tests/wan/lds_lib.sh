# lds_lib.sh - two LDS gateways in two netbed sites joined by wanemu
# (sourced by the t_lds_*.sh tests, not run).  clusterA runs in site s1 and
# connects to clusterB in site s2; clients run on the host and reach their
# gateway's unix socket.
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib.sh"
. "$(dirname "${BASH_SOURCE[0]}")/netbed.sh"
if ! why=$(netbed_check); then
	echo "SKIP: $why"
	exit 77
fi
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }

# wan_clusters STREAMS LINK-SPEC [EXTRA-PEER-SETTINGS]
wan_clusters() {
	netbed_up 2 "all:$2" || fail "test bed did not start"
	GW_ADDR=$(netbed_addr s2)
	NS_clusterA=$(netbed_ns s1)
	NS_clusterB=$(netbed_ns s2)
	two_clusters "$1" "${3:-}"
}

# rx_bytes: bytes clusterB has received over its link so far.
rx_bytes() { ctl clusterB status --json | jq '.links[0].received.bytes'; }

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# outages BOUND_MS SECS...: a black hole of each length in turn in the
# transfer start_pair runs; traffic must resume within BOUND_MS of each
# path's return (printed).
outages() {
	local bound=$1 secs ms
	shift
	for secs in "$@"; do
		kill -0 "$rpid" 2> /dev/null || fail "transfer ended before the ${secs} s outage"
		ms=$(outage "$secs")
		echo "measured: traffic resumed ${ms} ms after a ${secs} s outage ended"
		[ "$ms" -lt "$bound" ] || fail "traffic did not resume within ${bound} ms after a ${secs} s outage"
		sleep 2
	done
}

# outage SECONDS: a black hole on the link for SECONDS, then the time (ms)
# from the path's return until clusterB receives data again; 99999 if
# nothing arrives within 60 s.
outage() {
	local before up_at t
	netbed_ctl s1-s2 down > /dev/null || fail "wanemu ctl down"
	sleep "$1"
	before=$(rx_bytes)
	netbed_ctl s1-s2 up > /dev/null || fail "wanemu ctl up"
	up_at=$(now_ms)
	for _ in $(seq 1 1200); do
		[ "$(rx_bytes)" != "$before" ] && { echo $(( $(now_ms) - up_at )); return 0; }
		sleep 0.05
	done
	echo 99999
}
