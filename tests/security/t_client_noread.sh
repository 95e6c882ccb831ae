#!/usr/bin/env bash
# Attack: a client sends SENDs that are refused and never reads the
# refusals; they queued inside ldsd without bound (343 MB seen).  Now a
# client that leaves more than queue_max bytes of notices unread is closed.
. "$(dirname "$0")/../integration/lib.sh"
make_key "$T/key"
CLIENTS_EXTRA='queue_max = "1M";'
write_conf clusterA clusterB connect 1
start_ldsd clusterA
rss() { awk '$1 == "VmHWM:" {print $2}' "/proc/$PID_clusterA/status"; }
rss0=$(rss)
out=$("$TBIN/clientattack" noread -s "$T/clusterA.sock" -c 1000000 -T 20) || fail "clientattack: $out"
rss1=$(rss)
grow=$(( (rss1 - rss0) / 1024 ))
echo "$out" | grep -q "closed by ldsd" || fail "ldsd kept a client that reads nothing: $out (VmHWM (peak RSS) +$grow MiB)"
[ "$grow" -lt 32 ] || fail "ldsd's memory grew by $grow MiB for one client's unread refusals"
grep -q "more than 1048576 bytes of notices unread; closing it" "$T/clusterA.log" || fail "ldsd did not log why"
echo "measured: $out; VmHWM (peak RSS) +$grow MiB"
