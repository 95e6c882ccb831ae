#!/usr/bin/env bash
# Attack: anonymous names were anon-N, N the connection's number, so a
# local user could take the next ones first and make every anonymous
# lds_open fail (EADDRINUSE).  Now they are anon-<16 random hex digits>.
. "$(dirname "$0")/../integration/lib.sh"
make_key "$T/key"
write_conf clusterA clusterB connect 1
start_ldsd clusterA
# The attacker's own 100 connections are numbered 1..100: it takes the
# names the next 100 connections would have had.
"$TBIN/clientattack" squat -s "$T/clusterA.sock" -n anon- -c 100 -o 101 -T 20 > "$T/sq.out" 2>&1 &
qpid=$!; PIDS="$PIDS $qpid"
for _ in $(seq 1 100); do grep -q "holding" "$T/sq.out" && break; sleep 0.1; done
grep -q "holding 100 of 100 names" "$T/sq.out" || fail "squatter: $(cat "$T/sq.out")"
out=$("$TBIN/clientattack" open -s "$T/clusterA.sock") || fail "an anonymous lds_open failed: $out"
echo "$out" | grep -Eq "^opened clusterA/anon-[0-9a-f]{16}$" || fail "anonymous name is not random: $out"
echo "measured: with anon-101..anon-200 taken, an anonymous open got ${out#opened }"
