#!/usr/bin/env bash
# Peer addresses: "[::1]" works at run time as --check says it does, and
# a name with several addresses has every one tried, IPv6 first: a name
# giving ::1 and 127.0.0.1, with the peer listening on 127.0.0.1 only,
# connects through 127.0.0.1 after ::1 refuses.  The name lives in a
# private /etc/hosts (a mount namespace of the test's own).
. "$(dirname "$0")/lib.sh"
ip -6 addr show dev lo 2>/dev/null | grep -q "inet6 ::1/128" || { echo "SKIP: no IPv6 loopback"; exit 77; }
make_key "$T/key"

# 1. [::1] on both sides.
GW_ADDR="[::1]" write_conf clusterB clusterA listen 2
GW_ADDR="[::1]" write_conf clusterA clusterB connect 2
for c in clusterA clusterB; do
	out=$("$BIN/ldsd" --check -c "$T/$c.conf" 2>&1) || fail "--check $c: $out"
	grep -q 'address = "::1";' <<< "$out" || fail "--check $c does not print the address: $out"
done
start_ldsd clusterB
start_ldsd clusterA
wait_up clusterA 2
grep -q "link clusterB: stream 0 up (\[::1\]:$PORT)" "$T/clusterA.log" || fail "not connected over ::1"
start_pair 200 "" "" -B 64k
wait_pair
kill "$PID_clusterA" "$PID_clusterB"; wait "$PID_clusterA" "$PID_clusterB" 2>/dev/null
rm -f "$T"/*.sock "$T"/*.ctl

# 2. A name with two addresses, the first refusing.
printf '::1 lds-two-addrs\n127.0.0.1 lds-two-addrs\n' > "$T/hosts"
unshare -m --propagation private true 2>/dev/null || { echo "SKIP: cannot make a mount namespace"; exit 77; }
PORT=$((PORT + 1))
write_conf clusterB clusterA listen 2
GW_ADDR=lds-two-addrs write_conf clusterA clusterB connect 2
start_ldsd clusterB
unshare -m --propagation private sh -c 'mount --bind "$1" /etc/hosts && exec "$2" -f -c "$3"' sh \
	"$T/hosts" "$BIN/ldsd" "$T/clusterA.conf" >> "$T/clusterA.log" 2>&1 &
PIDS="$PIDS $!"
wait_up clusterA 2
grep -q "link clusterB: cannot connect to \[::1\]:$PORT: Connection refused" "$T/clusterA.log" ||
	fail "::1 was not tried first"
grep -q "link clusterB: stream [01] up (127.0.0.1:$PORT)" "$T/clusterA.log" || fail "not connected over 127.0.0.1"
start_pair 200 "" "" -B 64k
wait_pair
echo "measured: [::1] link up; lds-two-addrs: ::1 refused, 127.0.0.1 connected; 200 checksummed messages over each"
