#!/usr/bin/env bash
# Attack: clients.tcp served liblds over TCP with no authentication, so
# anyone who could reach the port could send and receive as any endpoint
# (the kernel does not say who a TCP client is).  Now clients.tcp without
# clients.tcp_key_file is refused by --check and at start, and a TCP client
# must prove it holds the key (CHALLENGE/PROOF, docs/protocol.md) before
# HELLO.  Checked: the refusal names file:line; an honest client with
# LDS_KEY_FILE delivers checksummed messages; no key, a wrong key, a raw
# HELLO without a proof and a silent connection all get nowhere.
. "$(dirname "$0")/../integration/lib.sh"
command -v python3 > /dev/null || { echo "SKIP: python3 is missing (make deps)"; exit 77; }
CLIENT_TCP=$((PORT + 1))
make_key "$T/key"
make_key "$T/client.key"
make_key "$T/wrong.key"

# ---- a TCP port without a key is refused ---------------------------------------
CLIENTS_EXTRA="tcp = \"127.0.0.1:$CLIENT_TCP\";" write_conf clusterA clusterB connect 1
"$BIN/ldsd" --check -c "$T/clusterA.conf" > "$T/check.out" 2>&1 && fail "--check passed clients.tcp without a key"
grep -q "clusterA.conf:2: clients.tcp: needs clients.tcp_key_file" "$T/check.out" ||
	fail "--check's refusal does not name file:line and the setting: $(cat "$T/check.out")"
timeout 10 "$BIN/ldsd" -f -c "$T/clusterA.conf" > "$T/start.out" 2>&1 && fail "ldsd started with clients.tcp without a key"
grep -q "needs clients.tcp_key_file" "$T/start.out" || fail "ldsd's refusal: $(cat "$T/start.out")"

# ---- with a key -----------------------------------------------------------------
CLIENTS_EXTRA="tcp = \"127.0.0.1:$CLIENT_TCP\"; tcp_key_file = \"$T/client.key\"; hello_timeout = 1;" \
	write_conf clusterA clusterB connect 1
write_conf clusterB clusterA listen 1
start_ldsd clusterB
start_ldsd clusterA
wait_up clusterA 1

# An honest client over TCP: 200 checksummed messages reach clusterB.
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c 200 -T 60 > "$T/r.out" 2>&1 &
rpid=$!; PIDS="$PIDS $rpid"
LDS_KEY_FILE=$T/client.key timeout 60 "$TBIN/ldstest" send -s "tcp:127.0.0.1:$CLIENT_TCP" -n src -t clusterB/sink \
	-c 200 -B 64k > "$T/s.out" 2>&1 || fail "send over TCP with the key: $(cat "$T/s.out")"
wait "$rpid" || fail "receiver: $(cat "$T/r.out")"

# No key, a wrong key: liblds says why, nothing is sent.
"$TBIN/clientattack" open -s "tcp:127.0.0.1:$CLIENT_TCP" -n nokey > "$T/o.out" 2>&1 && fail "opened without a key"
grep -q "LDS_KEY_FILE" "$T/o.out" || fail "no-key refusal does not say LDS_KEY_FILE: $(cat "$T/o.out")"
LDS_KEY_FILE=$T/wrong.key "$TBIN/clientattack" open -s "tcp:127.0.0.1:$CLIENT_TCP" -n wrong > "$T/o.out" 2>&1 &&
	fail "opened with a wrong key"
grep -q "refused the key" "$T/o.out" || fail "wrong-key refusal: $(cat "$T/o.out")"
wait_log "$T/clusterA.log" "from 127.0.0.1 port [0-9]+: wrong key \(not the one in $T/client.key\)" ||
	fail "ldsd did not log the wrong key: $(tail -3 "$T/clusterA.log")"

# A client of the old protocol (HELLO straight away) and a silent one:
# what ldsd writes to each, until it closes them.
python3 - "$CLIENT_TCP" > "$T/raw.out" 2>&1 <<'PY' || fail "raw clients: $(cat "$T/raw.out")"
import socket, struct, sys, time
port = int(sys.argv[1])
def frames(s, limit=10):
    s.settimeout(limit)
    data, t0 = b"", time.time()
    while time.time() - t0 < limit:
        b = s.recv(65536)
        if not b:
            break
        data += b
    types = []
    while len(data) >= 8:
        n, t = struct.unpack(">IB", data[:5])
        types.append(t)
        data = data[8 + n:]
    return types, time.time() - t0
hello = struct.pack(">HHQB", 2, 0, 1, 3) + b"raw"
s = socket.create_connection(("127.0.0.1", port))
s.sendall(struct.pack(">IBBH", len(hello), 1, 2, 0) + hello)
print("hello:", *frames(s))
s = socket.create_connection(("127.0.0.1", port))
print("silent:", *frames(s))
PY
# CHALLENGE is type 10, ERROR 7, WELCOME 2.
grep -q "^hello: \[10, 7\]" "$T/raw.out" || fail "a HELLO without a proof got: $(cat "$T/raw.out")"
grep -q "^silent: \[10\]" "$T/raw.out" || fail "a silent connection got: $(cat "$T/raw.out")"
wait_log "$T/clusterA.log" "sent HELLO before proving it holds clients.tcp's key" ||
	fail "the raw HELLO was not logged: $(tail -3 "$T/clusterA.log")"
wait_log "$T/clusterA.log" "no HELLO within hello_timeout = 1 s" || fail "the silent connection was not closed"
ctl clusterA status --json | grep -q '"name":"clusterA/raw"' && fail "the raw client got an endpoint"
ctl clusterA status --json | grep -q '"tcp_key_failures":1,' || fail "status does not count the wrong key"
echo "measured: 200 messages over TCP with the key; no key, wrong key, raw HELLO and a silent connection refused"
echo "measured: $(cat "$T/raw.out" | tr '\n' ';')"
