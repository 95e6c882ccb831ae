#!/usr/bin/env bash
# Attack: a local client declares a 256 MiB frame before HELLO.  Four such
# clients took ldsd from 126 MB to 2.2 GB of virtual memory, and it waited
# for the rest of each frame.  Now a frame larger than the client may send
# (before WELCOME: a HELLO) is refused before any buffer is grown, and the
# connection closed.
. "$(dirname "$0")/../integration/lib.sh"
make_key "$T/key"
write_conf clusterA clusterB connect 1
start_ldsd clusterA
vm() { awk -v k="$1:" '$1 == k {print $2}' "/proc/$PID_clusterA/status"; }
# VmPeak: the most virtual memory ldsd ever had, whenever it was.
vm0=$(vm VmPeak)
out=$("$TBIN/clientattack" bigframe -s "$T/clusterA.sock" -c 4 -T 4) || fail "clientattack: $out"
vm1=$(vm VmPeak)
rss1=$(vm VmRSS)
grow=$(( (vm1 - vm0) / 1024 ))
echo "$out" | grep -q "4 connections, 4 closed by ldsd" || fail "ldsd did not close the attackers: $out (VmPeak +$grow MiB)"
[ "$grow" -lt 64 ] || fail "ldsd's virtual memory grew by $grow MiB for four frame headers"
grep -q "exceeds its limit of 140 (a HELLO is all it may send first)" "$T/clusterA.log" ||
	fail "ldsd did not log why it closed them"
"$TBIN/clientattack" open -s "$T/clusterA.sock" -n honest > "$T/open.out" || fail "an honest client cannot open: $(cat "$T/open.out")"
echo "measured: 4 frames of 256 MiB declared before HELLO: connections closed, VmPeak +$grow MiB, VmRSS $((rss1 / 1024)) MiB"
