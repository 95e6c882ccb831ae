#!/usr/bin/env bash
# Attack: one local user's clients each write all but the last byte of a
# large SEND and stop.  ldsd buffered every such frame: 16 clients with
# 15 MiB each held 240 MiB.  Now the unfinished frames of one user's
# clients may hold input_per_user (a user holding none may always start
# one); the other clients wait, unread, until one is done.
. "$(dirname "$0")/../integration/lib.sh"
make_key "$T/key"
CLIENTS_EXTRA='max_message = "16M"; input_per_user = "32M";'
write_conf clusterA clusterB connect 1
start_ldsd clusterA
hwm() { awk '$1 == "VmHWM:" {print $2}' "/proc/$PID_clusterA/status"; }
m0=$(hwm)
out=$("$TBIN/clientattack" partial -s "$T/clusterA.sock" -c 16 -b 15M -T 8) || fail "clientattack: $out"
m1=$(hwm)
grow=$(( (m1 - m0) / 1024 ))
echo "$out" | grep -q "partial: 16 connections" || fail "clientattack: $out"
[ "$grow" -lt 100 ] || fail "ldsd's peak memory grew by $grow MiB for one user's unfinished frames ($out)"
# An honest client of the same user is not locked out: its frames are small.
"$TBIN/ldstest" recv -s "$T/clusterA.sock" -n sink -f clusterA/src -c 100 -B 32k -T 10 > "$T/r.out" 2>&1 &
rpid=$!; PIDS="$PIDS $rpid"
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterA/sink -c 100 -B 32k -T 10 > "$T/s.out" 2>&1 ||
	fail "sender: $(cat "$T/s.out")"
wait $rpid || fail "receiver: $(cat "$T/r.out")"
echo "measured: 16 clients x 15 MiB unfinished frames: $out; ldsd VmHWM +$grow MiB (input_per_user 32 MiB); a small local pair went through"
