#!/usr/bin/env bash
# A thesis-API ping-pong runs while the client's local ldsd is killed
# (SIGKILL: its socket stays, refusing) and restarted RESTART_GAP seconds
# later, then the server's local ldsd is stopped (SIGTERM: its socket goes
# away) and restarted: the calls in progress wait for their gateway to
# come back (docs/thesis-api.md promises up to 30 s) and the ping-pong
# completes with every echo verified byte for byte.
. "$(dirname "$0")/lib.sh"
GAP=${RESTART_GAP:-2}
ROUNDS=400
two_clusters 2
printf 'Server = 1\nSocket = %s\n' "$T/clusterB.sock" > "$T/server.ini"
printf 'Server = 0\nServerHostName = clusterB\nSocket = %s\n' "$T/clusterA.sock" > "$T/client.ini"
"$TBIN/thesisping" "$T/server.ini" $ROUNDS 100000 0 > "$T/server.out" 2> "$T/server.log" &
srv=$!; PIDS="$PIDS $srv"
"$TBIN/thesisping" "$T/client.ini" $ROUNDS 100000 20 > "$T/client.out" 2> "$T/client.log" &
cli=$!; PIDS="$PIDS $cli"

sleep 1
kill -0 $cli 2>/dev/null || fail "the client ended before the restart: $(cat "$T/client.out" "$T/client.log")"
kill -KILL $PID_clusterA; wait $PID_clusterA 2>/dev/null
sleep "$GAP"
start_ldsd clusterA
wait_up clusterA 2
sleep 1
kill -0 $srv 2>/dev/null || fail "the server ended before its gateway's restart: $(cat "$T/server.log")"
kill -TERM $PID_clusterB; wait $PID_clusterB 2>/dev/null
sleep "$GAP"
start_ldsd clusterB
for _ in $(seq 1 600); do kill -0 $cli 2>/dev/null || break; sleep 0.1; done
kill -0 $cli 2>/dev/null && fail "the ping-pong did not complete within 60 s of the restarts"
wait $cli || fail "client: $(cat "$T/client.out" "$T/client.log")"
wait $srv || fail "server: $(cat "$T/server.out" "$T/server.log")"
grep -qx "client: $ROUNDS rounds verified" "$T/client.out" || fail "client said: $(cat "$T/client.out")"
grep -qx "server: $ROUNDS rounds echoed" "$T/server.out" || fail "server said: $(cat "$T/server.out")"
echo "measured: $(cat "$T/client.out"), both gateways restarted after ${GAP}s away"
