#!/usr/bin/env bash
# encryption = "aead" | "none" per peer (ldsd.conf(5)): ldsd --check
# prints it (default "aead"), two ends that differ are refused with a log
# line on both naming the peer and both settings, and two ends with
# "none" carry a checksummed flow in clear, which status reports.  ldsd -V
# names the code that seals (ipsec-mb where linked with it on a CPU with
# AES-NI, else OpenSSL) and the one that computes the CRC.
. "$(dirname "$0")/lib.sh"
make_key "$T/key"
write_conf clusterB clusterA listen 2 'encryption = "none";'
write_conf clusterA clusterB connect 2
"$BIN/ldsd" --check -c "$T/clusterA.conf" 2>/dev/null | grep -q 'encryption = "aead"' || fail "--check does not print the default"
"$BIN/ldsd" --check -c "$T/clusterB.conf" 2>/dev/null | grep -q 'encryption = "none"' || fail "--check does not print \"none\""
v=$("$BIN/ldsd" -V) || fail "ldsd -V exited $?"
echo "$v" | grep -Eq '^CRC-32C: .+' || fail "ldsd -V does not name its CRC-32C code: $v"
echo "$v" | grep -Eq '^AES-256-GCM: (Intel ipsec-mb [0-9.]+, (SSE|AVX|AVX2|AVX-512)|OpenSSL EVP)$' ||
	fail "ldsd -V does not name its AES-256-GCM code: $v"
if ldd "$BIN/ldsd" | grep -q libIPSec_MB && grep -qw aes /proc/cpuinfo; then
	echo "$v" | grep -q 'AES-256-GCM: Intel ipsec-mb' || fail "linked with ipsec-mb on a CPU with AES-NI, yet: $v"
fi
sed 's/"none"/"rot13"/' "$T/clusterB.conf" > "$T/bad.conf"
out=$("$BIN/ldsd" --check -c "$T/bad.conf" 2>&1)
[ $? -eq 3 ] || fail "encryption = \"rot13\" accepted: $out"
echo "$out" | grep -q 'encryption' || fail "the error does not name the field: $out"

start_ldsd clusterB
start_ldsd clusterA
sleep 1.5
grep -q 'connection from .* as cluster clusterA failed its handshake: refused: the peer has encryption = "aead", this gateway "none"' \
	"$T/clusterB.log" || fail "clusterB did not log the mismatch"
grep -q 'link clusterB: peer .* refused the connection: encryption mismatch: you have "aead", clusterB has "none"' \
	"$T/clusterA.log" || fail "clusterA did not log the mismatch"
[ "$(json_field clusterA streams_up)" = 0 ] || fail "a stream came up with encryption settings that differ"
n=$(grep -c 'encryption mismatch' "$T/clusterA.log")
[ "$n" -le 2 ] || fail "mismatch logged $n times in 1.5 s: log flood"
kill "$PID_clusterA" "$PID_clusterB"
wait "$PID_clusterA" "$PID_clusterB" 2>/dev/null

write_conf clusterA clusterB connect 2 'encryption = "none";'
start_ldsd clusterB
start_ldsd clusterA
wait_up clusterA 2
ctl clusterA status --json | grep -q '"encryption":"none"' || fail "status --json does not say \"none\""
ctl clusterA status | grep -q 'encryption none' || fail "text status does not say \"encryption none\""
start_pair 100 "-T 30" "" -b 1k -B 64k
wait_pair
echo "measured: ldsd -V: $(echo "$v" | sed -n 's/^AES-256-GCM: //p')"
echo "measured: mismatch refused and logged on both sides; \"none\" on both carried 100 messages intact"
