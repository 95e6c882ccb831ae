#!/usr/bin/env bash
# ldsd --check catches what would keep a link from coming up: a peer name
# that does not resolve (an error naming file:line and the field), an
# unbalanced "[v6" address, and a congestion control that the kernel has
# but does not allow a process without CAP_NET_ADMIN to set (the daemon's
# own start-up refuses it too, instead of a link that never comes up).
. "$(dirname "$0")/lib.sh"
make_key "$T/key"

GW_ADDR=nonexistent.invalid write_conf clusterA clusterB connect 2
out=$("$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1) && fail "--check passed a name that does not resolve"
grep -q "clusterA.conf:6: peers.\[0\].address: \"nonexistent.invalid\" does not resolve: " <<< "$out" ||
	fail "--check does not name file:line and field: $out"

GW_ADDR="[::1" write_conf clusterA clusterB connect 2
out=$("$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1; echo "rc=$?")
grep -q "clusterA.conf:6: peers.\[0\].address: .*rc=3" <<< "$(tr '\n' ' ' <<< "$out")" ||
	fail "--check passed an unbalanced bracket: $out"

avail=$(cat /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null)
allowed=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control 2>/dev/null)
cc=""
for a in $avail; do grep -qw "$a" <<< "$allowed" || { cc=$a; break; }; done
if [ -z "$cc" ] || ! command -v setpriv > /dev/null; then
	echo "measured: names checked; congestion check SKIPPED (every available algorithm is allowed, or no setpriv)"
	exit 0
fi
write_conf clusterA clusterB connect 2 "congestion = \"$cc\";"
drop="setpriv --inh-caps=-net_admin --bounding-set=-net_admin"
out=$($drop "$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1; echo "rc=$?")
grep -q "clusterA.conf:7: peers.\[0\].congestion: \"$cc\" is not allowed for this user" <<< "$out" &&
	grep -q "rc=3" <<< "$out" || fail "--check without CAP_NET_ADMIN passed congestion \"$cc\": $out"
$drop "$BIN/ldsd" -f -c "$T/clusterA.conf" > "$T/start.log" 2>&1 && fail "ldsd started with congestion \"$cc\""
grep -q "is not allowed for this user" "$T/start.log" || fail "ldsd's start-up did not say why: $(cat "$T/start.log")"
capeff=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
if [ -n "$capeff" ] && (((0x$capeff >> 12) & 1)); then
	"$BIN/ldsd" --check -c "$T/clusterA.conf" > /dev/null 2>&1 || fail "--check with CAP_NET_ADMIN refused \"$cc\""
fi
echo "measured: names, [v6 and congestion \"$cc\" (allowed: $allowed) checked"
