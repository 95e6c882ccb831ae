#!/usr/bin/env bash
# ldsd --check refuses what cannot start: a transport not built into this
# ldsd (with the file:line, the setting and the transports it has), as the
# daemon's own start-up does; a setting no transport knows.  TCP's own
# settings are still read, printed back by --check, applied and reported
# in the link's status under the same keys (issue 19).
. "$(dirname "$0")/lib.sh"
make_key "$T/key"

# check_refused TRANSPORT-OR-SETTING EXPECTED-MESSAGE
check_refused() {
	write_conf clusterA clusterB connect 2 "$1"
	out=$("$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1; echo "rc=$?")
	grep -qF "$2" <<< "$out" && grep -q "rc=3" <<< "$out" || fail "--check did not refuse '$1' with '$2': $out"
}

for tp in quic; do
	check_refused "transport = \"$tp\";" \
		"clusterA.conf:7: peers.[0].transport: transport \"$tp\" is not built in; available: tcp"
done
# The daemon refuses it at start too, saying the same.
"$BIN/ldsd" -f -c "$T/clusterA.conf" > "$T/start.log" 2>&1 && fail "ldsd started with transport \"quic\""
grep -qF 'transport "quic" is not built in; available: tcp' "$T/start.log" ||
	fail "ldsd's start-up did not say why: $(cat "$T/start.log")"
check_refused "tcp_windwo = 4;" 'clusterA.conf:7: peers.[0].tcp_windwo: unknown setting'
check_refused "tcp_buffer = \"2G\";" 'clusterA.conf:7: peers.[0].tcp_buffer: too large'

# TCP's settings, printed back and in force on a running link.
write_conf clusterA clusterB connect 2 'congestion = "reno"; tcp_buffer = "64k";'
out=$("$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1) || fail "--check refused TCP's settings: $out"
grep -q 'congestion = "reno";' <<< "$out" && grep -q 'tcp_buffer = 65536;' <<< "$out" ||
	fail "--check did not print TCP's settings back: $out"
write_conf clusterB clusterA listen 2 'congestion = "reno"; tcp_buffer = "64k";'
start_ldsd clusterB
start_ldsd clusterA
wait_up clusterA 2
st=$(ctl clusterA status --json)
[ "$(jq -r '.links[0] | "\(.transport) \(.congestion) \(.tcp_buffer)"' <<< "$st")" = "tcp reno 65536" ] ||
	fail "status does not report TCP's settings: $st"
ctl clusterA status | grep -q 'tcp/reno' || fail "status text lacks tcp/reno: $(ctl clusterA status)"
echo "measured: quic refused with file:line and the list, at --check and at start; reno and 64k in force"
