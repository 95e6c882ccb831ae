#!/usr/bin/env bash
# What ldsd says when it cannot connect to a peer: a name that does not
# resolve is reported with the resolver's error (not "Cannot assign
# requested address", not blamed on the congestion control); refused
# connects are logged at warning level, once, not at every retry, and the
# link coming up says how many more failed; an attempt nobody answers is
# logged as such.
. "$(dirname "$0")/lib.sh"
make_key "$T/key"

# 1. A name that does not resolve (.invalid never does, RFC 6761).
GW_ADDR=nonexistent.invalid write_conf clusterA clusterB connect 2
start_ldsd clusterA
for _ in $(seq 1 50); do grep -q "cannot resolve" "$T/clusterA.log" && break; sleep 0.1; done
grep -q 'link clusterB: cannot resolve "nonexistent.invalid": ' "$T/clusterA.log" ||
	fail "the failed lookup is not logged with the resolver's error"
grep -Eq "Cannot assign requested address|congestion" "$T/clusterA.log" && fail "wrong reason logged"
for _ in $(seq 1 30); do ctl clusterA status --json | jq -r '.links[0].last_error' | grep -q "cannot resolve" && break; sleep 0.1; done
ctl clusterA status --json | jq -r '.links[0].last_error' | grep -q 'cannot resolve "nonexistent.invalid"' ||
	fail "status does not say why: $(ctl clusterA status --json | jq -r '.links[0].last_error')"
kill "$PID_clusterA"; wait "$PID_clusterA" 2>/dev/null
rm -f "$T"/*.sock "$T"/*.ctl

# 2. Refused connects: 4 streams retrying every 0.1 s for 3 s.
write_conf clusterA clusterB connect 4 "reconnect_max = 0.1;"
write_conf clusterB clusterA listen 4
start_ldsd clusterA
sleep 3
tries=$(ctl clusterA status --json | jq '.links[0].reconnects')
refused=$(grep -c "link clusterB: cannot connect to 127.0.0.1:$PORT: Connection refused" "$T/clusterA.log")
[ "$tries" -ge 20 ] || fail "only $tries reconnects in 3 s"
[ "$refused" = 1 ] || fail "refused connects logged $refused times in $tries attempts, not once"
grep "cannot connect" "$T/clusterA.log" | grep -q "\[warn\]" || fail "refused connect not at warning level"
start_ldsd clusterB
wait_up clusterA 4
grep -Eq "link clusterB: connected to 127.0.0.1:$PORT after [0-9]+ more failed attempts \(the last: cannot connect to 127.0.0.1:$PORT: Connection refused\)" \
	"$T/clusterA.log" || fail "the link coming up does not say how many attempts failed"
kill "$PID_clusterA" "$PID_clusterB"; wait "$PID_clusterA" "$PID_clusterB" 2>/dev/null
rm -f "$T"/*.sock "$T"/*.ctl

# 3. Nobody answers: a listener whose accept queue is full drops SYNs.
command -v python3 > /dev/null || { echo "SKIP (part 3): no python3"; exit 77; }
PORT=$((PORT + 1))
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(0)
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
open(sys.argv[2], "w").close()
time.sleep(30)' "$PORT" "$T/full" &
PIDS="$PIDS $!"
for _ in $(seq 1 100); do [ -e "$T/full" ] && break; sleep 0.1; done
[ -e "$T/full" ] || fail "the full listener did not start"
write_conf clusterA clusterB connect 1
start_ldsd clusterA
for _ in $(seq 1 40); do grep -q "no answer within" "$T/clusterA.log" && break; sleep 0.1; done
grep -q "link clusterB: cannot connect to 127.0.0.1:$PORT: no answer within 1.0 s" "$T/clusterA.log" ||
	fail "an unanswered connect is not logged"
echo "measured: failed lookup, $refused line for $tries refused connects, unanswered connect: all logged"
