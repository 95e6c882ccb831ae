#!/usr/bin/env bash
# ldsbench through two real ldsd on loopback, whose links use cubic
# (congestion = "cubic", checked on the sockets with ss): a timed run in
# JSON (-J: one document) whose bytes the receiver verified, the link's
# streams set for the run and put back, a --latency ping-pong, a --sweep
# table, --plot, --direct mode, and the exit
# codes of bad arguments and unreachable receivers.
. "$(dirname "$0")/lib.sh"
B=$BIN/ldsbench
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
two_clusters 2 'congestion = "cubic";'

# ---- the congestion control the sockets really use ----------------------------
cc_count() { ss -tin state established "( sport = :$PORT or dport = :$PORT )" | grep -cw "$1"; }
[ "$(ctl clusterA status --json | jq -r '.links[0].congestion')" = cubic ] || fail "status does not say cubic"
ctl clusterA status | grep -q "tcp/cubic" || fail "text status does not say tcp/cubic"
# Both ends of both streams are on this host: 4 sockets, all cubic.
[ "$(cc_count cubic)" -eq 4 ] || fail "sockets with cubic: $(cc_count cubic) of 4: $(ss -tin "( sport = :$PORT )")"
[ "$(cc_count bbr)" -eq 0 ] || fail "a socket of the link does not use cubic"

# ---- a run through the daemons, in JSON ----------------------------------------
"$B" recv -s "$T/clusterB.sock" -1 -J -i 0.5 > "$T/recv.json" 2> "$T/recv.err" &
rpid=$!
PIDS="$PIDS $rpid"
timeout 60 "$B" send -s "$T/clusterA.sock" -T clusterB/bench -P 3 -t 2 -i 0.5 -l 64k -J > "$T/send.json" ||
	fail "send: $(cat "$T/send.json")"
wait "$rpid" || fail "recv --once: $(cat "$T/recv.json" "$T/recv.err")"
jq -e . "$T/send.json" > /dev/null || fail "send's JSON does not parse"
jq -e . "$T/recv.json" > /dev/null || fail "recv's JSON does not parse"
end=$(jq -c '.end' "$T/send.json")
sent=$(echo "$end" | jq .bytes_sent)
[ "$(echo "$end" | jq .error)" = null ] || fail "run failed: $end"
[ "$(echo "$end" | jq .streams)" = 3 ] || fail "the run did not use 3 streams: $end"
[ "$(echo "$end" | jq .receiver.bytes)" = "$sent" ] || fail "receiver verified other bytes than sent: $end"
[ "$(echo "$end" | jq .receiver.errors)" = 0 ] || fail "receiver saw errors: $end"
[ "$sent" -gt $((64 * 1024 * 100)) ] || fail "too little sent to mean anything: $end"
[ "$(jq -c '.end.bytes' "$T/recv.json")" = "$sent" ] || fail "recv's own count differs: $(cat "$T/recv.json")"
n=$(jq '.intervals | length' "$T/send.json")
[ "$n" -eq 4 ] || fail "$n intervals of 0.5 s in 2 s"
[ "$(jq '[.intervals[].bytes] | add' "$T/send.json")" = "$(echo "$end" | jq .bytes_measured)" ] ||
	fail "intervals do not add up to the run's bytes"
# The link has its configured 2 streams again.
[ "$(ctl clusterA status --json | jq '.links[0].streams')" = 2 ] || fail "streams not put back: $(ctl clusterA status)"
echo "measured: ldsbench through ldsd on loopback: $(echo "$end" | jq '.bits_per_second / 1e6 | floor') Mb/s," \
	"$sent bytes verified"

# ---- --latency: a ping-pong of 64-byte messages, each echo checked ---------------
"$B" recv -s "$T/clusterB.sock" -1 -i 0 > "$T/lrecv.txt" 2>&1 &
rpid=$!
PIDS="$PIDS $rpid"
timeout 60 "$B" send -s "$T/clusterA.sock" -T clusterB/bench --latency -t 1 -O 0.2 -J > "$T/lat.json" ||
	fail "send --latency: $(cat "$T/lat.json")"
wait "$rpid" || fail "recv after --latency: $(cat "$T/lrecv.txt")"
end=$(jq -c '.end' "$T/lat.json")
# Every message went there (checked by the receiver) and came back
# (checked here), one at a time: as many round trips as messages, less
# those of the omitted start.
[ "$(echo "$end" | jq '.error == null and .receiver.errors == 0 and .receiver.messages == .messages_sent and .bytes_sent == 64 * .messages_sent')" = true ] ||
	fail "latency run: $end"
[ "$(echo "$end" | jq '.latency.round_trips > 20 and .latency.round_trips < .messages_sent and .latency.rtt_min_us > 0 and .latency.rtt_min_us <= .latency.rtt_p50_us and .latency.rtt_p50_us <= .latency.rtt_p99_us and .latency.rtt_p99_us <= .latency.rtt_max_us')" = true ] ||
	fail "latency figures: $end"
echo "measured: ldsbench --latency through ldsd on loopback: $(echo "$end" | jq -r '"\(.latency.round_trips) round trips of 64 bytes, median \(.latency.rtt_p50_us) us, p99 \(.latency.rtt_p99_us) us"')"
expect 2 "not with --reverse" "$B" send -s "$T/clusterA.sock" -T clusterB/bench --latency -R

# ---- a sweep, in text, with a plot ----------------------------------------------
"$B" recv -s "$T/clusterB.sock" -1 -i 0 > "$T/recv.txt" 2>&1 &
rpid=$!
PIDS="$PIDS $rpid"
plot=""
command -v gnuplot > /dev/null && plot="--plot $T/sweep.png"
# shellcheck disable=SC2086
timeout 60 "$B" send -s "$T/clusterA.sock" -T clusterB/bench --sweep streams=1,3 -t 1 -q $plot > "$T/sweep.txt" 2>&1 ||
	fail "sweep: $(cat "$T/sweep.txt")"
wait "$rpid" || fail "recv after the sweep: $(cat "$T/recv.txt")"
grep -q "relative" "$T/sweep.txt" || fail "no table: $(cat "$T/sweep.txt")"
awk '$1 == 1 && $5 == "1.00" {one = 1} $1 == 3 && NF >= 5 {three = 1} END {exit !(one && three)}' "$T/sweep.txt" ||
	fail "table rows: $(cat "$T/sweep.txt")"
[ "$(grep -c "all intact and in order" "$T/recv.txt")" -eq 2 ] || fail "receiver: $(cat "$T/recv.txt")"
if [ -n "$plot" ]; then
	[ "$(head -c 4 "$T/sweep.png" | tail -c 3)" = PNG ] || fail "--plot wrote no PNG"
	[ "$(grep -c '^# run' "$T/sweep.dat")" -eq 2 ] || fail "plot data: $(head "$T/sweep.dat")"
fi

# ---- --direct: the link code in-process, no daemons --------------------------------
DPORT=$((PORT + 100))
"$B" recv --direct "127.0.0.1:$DPORT" -1 -J -i 0 --window 96k > "$T/drecv.json" 2>&1 &
rpid=$!
PIDS="$PIDS $rpid"
# --window 96k: each stream's SO_SNDBUF and SO_RCVBUF, which the kernel
# doubles (socket(7)); ss shows them as tb and rb while the run lasts, on
# the two connected streams and, set once the handshake names the link,
# on the two accepted ones.
timeout 60 "$B" send --direct "127.0.0.1:$DPORT" -P 2 -t 1.5 --congestion cubic --window 96k -J > "$T/dsend.json" &
spid=$!
PIDS="$PIDS $spid"
for _ in $(seq 30); do
	ss -tmnHO "( dport = :$DPORT or sport = :$DPORT )" > "$T/ss.txt"
	n=$(grep -c 'rb196608,t[0-9]*,tb196608' "$T/ss.txt")
	[ "$n" -eq 4 ] && break
	sleep 0.1
done
[ "$n" -eq 4 ] ||
	fail "--window 96k: the streams' buffers are not 192 KiB at both ends: $(cat "$T/ss.txt")"
wait "$spid" || fail "direct send: $(cat "$T/dsend.json")"
wait "$rpid" || fail "direct recv: $(cat "$T/drecv.json")"
end=$(jq -c '.end' "$T/dsend.json")
[ "$(echo "$end" | jq '.error == null and .receiver.errors == 0 and .receiver.bytes == .bytes_sent and .bytes_sent > 0')" = true ] ||
	fail "direct run: $end"
[ "$(jq -r '.start.mode + " " + .start.congestion' "$T/dsend.json")" = "direct cubic" ] ||
	fail "direct start: $(jq -c .start "$T/dsend.json")"
echo "measured: ldsbench --direct on loopback: $(echo "$end" | jq '.bits_per_second / 1e6 | floor') Mb/s"

# ---- exit codes ------------------------------------------------------------------------
expect 2 "no command" "$B"
expect 2 "unknown option --bogus" "$B" send -T clusterB/bench --bogus
expect 2 "want CLUSTER/NAME" "$B" send -T clusterB
expect 2 "want 1..64 or auto" "$B" send -T clusterB/bench -P 65
expect 2 "--size 1X" "$B" send -T clusterB/bench -l 1X
expect 2 "omit must be shorter" "$B" send -T clusterB/bench -t 1 -O 2
expect 2 "recv takes no" "$B" recv --sweep streams=1,2
expect 2 "are for --direct" "$B" send -T clusterB/bench --key /dev/null
expect 2 "--window 1k: want 4k or more" "$B" send --direct "127.0.0.1:$((PORT + 101))" --window 1k
cap=$(sort -n /proc/sys/net/core/wmem_max /proc/sys/net/core/rmem_max | head -1)
expect 1 "--window $((cap + 1)): .*exceeds this kernel's limit ($cap, the smaller of net.core.wmem_max and rmem_max)" "$B" send --direct "127.0.0.1:$((PORT + 101))" --window $((cap + 1))
out=$("$B" send -J -P 0 -T clusterB/bench 2> /dev/null)
[ $? -eq 2 ] && echo "$out" | jq -e '.error | test("want 1..64")' > /dev/null || fail "usage error in JSON mode: $out"
out=$("$B" send --json-stream -P 0 -T clusterB/bench 2> /dev/null)
[ $? -eq 2 ] && [ "$(echo "$out" | jq -r .event)" = error ] || fail "usage error in JSON lines: $out"
expect 1 "cannot reach ldsd at $T/nothing.sock" "$B" send -s "$T/nothing.sock" -T clusterB/bench
# Nobody receives: a clear error within --wait, not a hang.
start=$(date +%s)
expect 1 "clusterB/nobody did not answer within 2 s" "$B" send -s "$T/clusterA.sock" -T clusterB/nobody -t 1 --wait 2
[ $(($(date +%s) - start)) -le 10 ] || fail "unreachable receiver took over 10 s"
expect 1 "Connection refused" "$B" send --direct "127.0.0.1:$((PORT + 101))" -t 1 --wait 2
# --key is checked as ldsd.conf's key_file is.
head -c 32 /dev/urandom | base64 > "$T/open.key"; chmod 644 "$T/open.key"
expect 1 "open.key is accessible by group or others (mode 0644): chmod 600" "$B" send --direct "127.0.0.1:$((PORT + 101))" --key "$T/open.key" -t 1
head -c 8 /dev/urandom | base64 > "$T/short.key"; chmod 600 "$T/short.key"
expect 1 "short.key holds 12 bytes of key; it must hold 16..1024" "$B" send --direct "127.0.0.1:$((PORT + 101))" --key "$T/short.key" -t 1
expect 1 'no link to "clusterZ"' "$B" send -s "$T/clusterA.sock" -T clusterZ/bench -P 2 -t 1 --wait 2
expect 1 'were refused: no link to cluster "clusterZ"' "$B" send -s "$T/clusterA.sock" -T clusterZ/bench -t 1 --wait 2
