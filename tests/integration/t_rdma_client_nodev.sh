#!/usr/bin/env bash
# The RDMA client path (issue 22): clusterA's ldsd has clients.rdma, its
# key in clients.tcp_key_file, and a tcp link to clusterB.
#   No RDMA device (this machine): `ldsd --check` prints clients.rdma back
#   and warns with file:line; ldsd logs why it does not listen there, once,
#   and serves its unix socket (checksummed messages from a local client
#   cross the link); a client with LDS_GATEWAY=rdma://... exits non-zero
#   saying "no RDMA device found ... use the unix socket or tcp:".
#   A device (soft-RoCE: rdma link add rxe0 type rxe netdev IFACE): a real
#   round trip instead - a sender over rdma:// on clusterA to clusterB and
#   a receiver over rdma:// on clusterA from clusterB, checksummed, with
#   the key; a client with a wrong key is refused.
# Skipped where this ldsd has no rdma kind (built without rdma-core).
. "$(dirname "$0")/lib.sh"
NODEV='no RDMA device found (ibv_get_device_list returned none)'
RDMA_PORT=$((PORT + 1))
make_key "$T/key"
make_key "$T/client.key"
make_key "$T/wrong.key"

# With a device, clients.rdma must be an address of the interface the
# device sits on (rxe cannot attach to lo).
ADDR=127.0.0.1
DEV=$(ls /sys/class/infiniband 2>/dev/null | head -1)
if [ -n "$DEV" ]; then
	IFACE=$(rdma link show 2>/dev/null | awk -v d="$DEV" '$2 ~ "^"d"/" { for (i = 1; i < NF; i++) if ($i == "netdev") print $(i + 1) }' | head -1)
	ADDR=$(ip -4 -o addr show dev "${IFACE:-none}" 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
	[ -n "$ADDR" ] || { echo "skipped: RDMA device $DEV has no interface with an IPv4 address"; exit 77; }
fi

CLIENTS_EXTRA="rdma = \"$ADDR:$RDMA_PORT\"; tcp_key_file = \"$T/client.key\"; hello_timeout = 2;" \
	write_conf clusterA clusterB connect 1
write_conf clusterB clusterA listen 1

out=$("$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1; echo "rc=$?")
if grep -q 'clients.rdma: transport "rdma" is not built in' <<< "$out"; then
	echo "skipped: this ldsd is built without rdma-core (no rdma transport)"
	exit 77
fi
grep -q "rc=0" <<< "$out" || fail "--check refused the file: $out"
grep -qF "rdma = \"$ADDR:$RDMA_PORT\";" <<< "$out" || fail "--check did not print clients.rdma back: $out"

start_ldsd clusterB
start_ldsd clusterA
wait_up clusterA 1

if [ -z "$DEV" ]; then
	grep -qF "ldsd: warning: $T/clusterA.conf:2: clients.rdma: $NODEV" <<< "$out" ||
		fail "--check did not warn of the missing device with file:line and setting: $out"
	wait_log "$T/clusterA.log" "clusterA.conf:2: clients.rdma: no RDMA device found" ||
		fail "ldsd did not log why clients.rdma is not served: $(cat "$T/clusterA.log")"
	n=$(grep -cF "clients.rdma: $NODEV" "$T/clusterA.log")
	[ "$n" -eq 1 ] || fail "ldsd logged the missing device $n times, not once"
	grep -q "the unix socket and the other listeners are served" "$T/clusterA.log" || fail "the log does not say what is served"

	# The unix socket still serves: 200 checksummed messages cross.
	start_pair 200 "" "" -B 16k -T 60
	wait_pair
	grep -q "200 messages" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"

	# A client sent to rdma:// fails at once, non-zero, saying why.
	LDS_GATEWAY="rdma://$ADDR:$RDMA_PORT" LDS_KEY_FILE=$T/client.key timeout 30 \
		"$TBIN/ldstest" send -s "" -n src2 -t clusterB/sink -c 1 -T 1 > "$T/c.out" 2>&1 &&
		fail "a client over rdma:// succeeded with no device: $(cat "$T/c.out")"
	grep -qF "no RDMA device found" "$T/c.out" || fail "the client did not say why: $(cat "$T/c.out")"
	grep -qF "use the unix socket or tcp:HOST:PORT" "$T/c.out" || fail "the client did not say what to use: $(cat "$T/c.out")"
	grep -qF "rdma://$ADDR:$RDMA_PORT" "$T/c.out" || fail "the client did not name where: $(cat "$T/c.out")"
	kill -0 "$PID_clusterA" || fail "clusterA exited"
	echo "measured: no device: --check warned, ldsd logged it once and served its unix socket ($(cat "$T/r.out")); rdma:// client: $(head -1 "$T/c.out")"
	exit 0
fi

# ---- a device: a real round trip over clients.rdma ---------------------------------
wait_log "$T/clusterA.log" "clients.rdma: listening on $ADDR:$RDMA_PORT" || fail "clients.rdma not listening: $(tail -5 "$T/clusterA.log")"
# clusterA/src (over rdma) -> clusterB/sink (unix socket).
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c 300 -T 60 > "$T/r.out" 2>&1 &
rpid=$!; PIDS="$PIDS $rpid"
LDS_GATEWAY="rdma://$ADDR:$RDMA_PORT" LDS_KEY_FILE=$T/client.key timeout 60 \
	"$TBIN/ldstest" send -s "" -n src -t clusterB/sink -c 300 -B 200k > "$T/s.out" 2>&1 ||
	fail "send over rdma://: $(cat "$T/s.out")"
wait "$rpid" || fail "receiver: $(cat "$T/r.out")"
grep -q "300 messages" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
# clusterB/src2 (unix socket) -> clusterA/sink2 (over rdma): the other direction.
LDS_GATEWAY="rdma://$ADDR:$RDMA_PORT" LDS_KEY_FILE=$T/client.key \
	"$TBIN/ldstest" recv -s "" -n sink2 -f clusterB/src2 -c 300 -T 60 > "$T/r2.out" 2>&1 &
rpid=$!; PIDS="$PIDS $rpid"
sleep 0.5
timeout 60 "$TBIN/ldstest" send -s "$T/clusterB.sock" -n src2 -t clusterA/sink2 -c 300 -B 200k > "$T/s2.out" 2>&1 ||
	fail "send to the rdma receiver: $(cat "$T/s2.out")"
wait "$rpid" || fail "receiver over rdma://: $(cat "$T/r2.out")"
grep -q "300 messages" "$T/r2.out" || fail "receiver over rdma://: $(cat "$T/r2.out")"
# A wrong key gets nowhere over rdma either.
LDS_GATEWAY="rdma://$ADDR:$RDMA_PORT" LDS_KEY_FILE=$T/wrong.key timeout 30 \
	"$TBIN/ldstest" send -s "" -n bad -t clusterB/sink -c 1 > "$T/w.out" 2>&1 && fail "a wrong key was accepted over rdma://"
grep -q "refused the key" "$T/w.out" || fail "wrong-key refusal over rdma://: $(cat "$T/w.out")"
echo "measured: device $DEV ($ADDR): over rdma:// $(cat "$T/r.out") / $(cat "$T/r2.out"); a wrong key refused"
