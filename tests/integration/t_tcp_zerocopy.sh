#!/usr/bin/env bash
# zerocopy = true on a TCP link (MSG_ZEROCOPY, transports/tcp_zc.c): the
# settings are printed back by ldsd --check and shown in the link status;
# checksummed messages arrive intact, in order and once, sealed and in
# clear; every zero-copy send made is completed by the kernel (status
# "zerocopy": completed = sends > 0; on loopback the kernel copies every
# one: copied = sends); a link without the setting makes none.
. "$(dirname "$0")/lib.sh"
PEER='zerocopy = true; zerocopy_min = "4K";'
make_key "$T/key"

out=$(write_conf clusterA clusterB connect 2 "$PEER" && "$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1) ||
	fail "ldsd --check refused the zerocopy settings: $out"
grep -q 'zerocopy = true;' <<< "$out" && grep -q 'zerocopy_min = 4096;' <<< "$out" ||
	fail "ldsd --check does not print zerocopy back: $(grep -i zerocopy <<< "$out")"
write_conf clusterA clusterB connect 2 'zerocopy = "yes";'
out=$("$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1) && fail "ldsd --check took zerocopy = \"yes\""
grep -q 'zerocopy' <<< "$out" || fail "the refusal does not name zerocopy: $out"

# zc FIELD: the link's zerocopy FIELD in clusterA's status.
zc() { ctl clusterA status --json | jq ".links[0].zerocopy.$1"; }

# pair TAG: 300 checksummed messages of up to 300 KiB, clusterA to B.
pair() {
	start_pair 300 "" "" -b 1 -B 300k -S "$1" -T 60
	wait_pair
	grep -q "received 300 messages intact, in order and once" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
	grep -q "acked 300, lost 0" "$T/s.out" || fail "sender: $(cat "$T/s.out")"
}

# pair_breaking TAG: pair TAG while clusterA breaks a stream every 0.1 s
# (conns closed with zero-copy sends held: reset, their memory kept until
# the kernel is surely done).
pair_breaking() {
	start_pair 300 "" "" -b 1 -B 300k -S "$1" -T 60
	for i in $(seq 0 200); do
		kill -0 "$spid" 2> /dev/null || break
		ctl clusterA fault break clusterB $((i % 2)) > /dev/null 2>&1
		sleep 0.1
	done
	wait_pair
	grep -q "received 300 messages intact, in order and once" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
	[ "$(ctl clusterA status --json | jq '.links[0].reconnects')" -gt 0 ] || fail "no stream was broken"
}

# completed_all: every zero-copy send completed (10 s); prints the counts.
completed_all() {
	local s c
	for _ in $(seq 1 100); do
		s=$(zc sends); c=$(zc completed)
		[ "$s" -gt 0 ] && [ "$s" = "$c" ] && { echo "sends $s completed $c copied $(zc copied) refused $(zc refused)"; return 0; }
		sleep 0.1
	done
	fail "zero-copy sends not all completed: sends $s, completed $c"
}

for enc in aead none; do

	write_conf clusterB clusterA listen 2 "$PEER encryption = \"$enc\";"
	write_conf clusterA clusterB connect 2 "$PEER encryption = \"$enc\";"
	start_ldsd clusterB
	start_ldsd clusterA
	wait_up clusterA 2
	[ "$(ctl clusterA status --json | jq '.links[0].zerocopy_min')" = 4096 ] ||
		fail "status does not show zerocopy_min: $(ctl clusterA status --json | jq -c '.links[0]')"
	pair "$enc"
	if [ "$enc" = aead ]; then
		counts=$(completed_all)
		[ "$(zc copied)" = "$(zc sends)" ] || fail "loopback: the kernel should copy every zero-copy send ($counts)"
		echo "measured: sealed: $counts"
		pair_breaking breaks
		kill -0 "$PID_clusterA" && kill -0 "$PID_clusterB" || fail "a daemon died"
		echo "measured: with breaks: $(completed_all), reconnects $(ctl clusterA status --json | jq '.links[0].reconnects')"
		echo "measured: sent $(ctl clusterA status --json | jq ".links[0].sent.bytes")"
	else
		# In clear, blocks are written from the send buffer: copied.
		[ "$(zc sends)" = 0 ] || fail "encryption none made zero-copy sends: $(zc sends)"
	fi
	kill -9 "$PID_clusterA" "$PID_clusterB"
	wait "$PID_clusterA" "$PID_clusterB" 2> /dev/null
	rm -f "$T"/*.sock "$T"/*.ctl
done

# Without the setting: no zero-copy send.
two_clusters 2
pair plain
[ "$(zc sends)" = 0 ] || fail "a link without zerocopy made zero-copy sends: $(zc sends)"
echo "ok"
