#!/usr/bin/env bash
# Every failed authentication is logged with its source, rate-limited with
# counts, and a source that keeps failing is refused for a while:
# 20 wrong-key handshakes from one address give a line naming it and,
# when its 10 s window ends, one line counting the other 19; 500 from
# another address are cut off after max_failures (60) and the log stays
# short.  The honest link stays up.
# Reproduces: 20 wrong-key attempts, 0 log lines; 500 attempts in 0.21 s.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/attack_lib.sh"
two_clusters 2
flow_start
"$ATTACK" wrongkey -p "$PORT" -n 20 -s 127.0.0.2 > "$T/twenty.out" || fail "ldsattack: $(cat "$T/twenty.out")"
[ "$(attack_field twenty refused_auth)" = 20 ] || fail "20 wrong keys not all refused: $(cat "$T/twenty.out")"
"$ATTACK" wrongkey -p "$PORT" -n 500 -s 127.0.0.3 > "$T/many.out" || fail "ldsattack: $(cat "$T/many.out")"
refused=$(attack_field many refused_auth)
[ "$refused" -le 70 ] || fail "$refused of 500 wrong keys tried and refused: not rate-limited ($(cat "$T/many.out"))"
# The windows of both sources end within 10 s of their first failure.
sleep 10.5
flow_stop
log=$T/clusterB.log
grep -q "connection from 127.0.0.2:[0-9]* as cluster clusterA failed its handshake: refused: authentication failed" "$log" ||
	fail "the first failed authentication from 127.0.0.2 was not logged with its source"
grep -q "19 more failed handshakes and 0 dropped connections from 127.0.0.2 in the last 10 s" "$log" ||
	fail "the other 19 failures from 127.0.0.2 were not counted in the log"
grep -q "failed handshakes from 127.0.0.3 within 10 s: its connections are dropped" "$log" ||
	fail "the cut-off of 127.0.0.3 was not logged"
lines=$(grep -c "127.0.0.[23]" "$log")
[ "$lines" -le 8 ] || fail "$lines log lines for 520 failed authentications: not rate-limited"
[ "$(json_field clusterA streams_up)" = 2 ] || fail "the honest link lost streams"
echo "measured: 20 wrong keys: $(cat "$T/twenty.out"); 500 wrong keys: $(cat "$T/many.out"); $lines log lines;" \
	"honest flow: $FLOW_ROUNDS rounds intact"
