#!/usr/bin/env bash
# Before authentication a gateway buffers no more than the handshake
# frames need (1 KiB): 16 connections whose first frame header declares
# the largest payload (16 MiB + 8) and 16 that send a valid HELLO first,
# each then sending 4 MiB of it, must be refused at once and leave the
# listening gateway's memory as it was.
# Reproduces: 16 such connections took 276 MB.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/attack_lib.sh"
two_clusters 2
flow_start
sleep 1
before=$(rss_kb "$PID_clusterB")
start_attack big big -n 16 -s 127.0.0.2 -B 4194304 -t 4
start_attack bighello bighello -n 16 -s 127.0.0.3 -B 4194304 -t 4
sleep 3
during=$(rss_kb "$PID_clusterB")
wait "$APID_big" "$APID_bighello"
flow_stop
grow=$(( (during - before) / 1024 ))
[ "$grow" -lt 8 ] || fail "clusterB grew by $grow MB (RSS $before -> $during kB) for 32 oversized frame headers"
for a in big bighello; do
	[ "$(attack_field $a opened)" = 16 ] || fail "$a: $(cat "$T/$a.out")"
	[ "$(attack_field $a open)" = 0 ] || fail "$a: connections not closed: $(cat "$T/$a.out")"
done
grep -q "127.0.0.2:[0-9]* failed its handshake: bad frame (Message too long)" "$T/clusterB.log" ||
	fail "the oversized header was not logged with its source"
[ "$(json_field clusterA streams_up)" = 2 ] || fail "the honest link lost streams"
echo "measured: 32 headers declaring 16 MiB refused; clusterB RSS $before -> $during kB; honest flow: $FLOW_ROUNDS rounds intact"
