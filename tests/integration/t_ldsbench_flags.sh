#!/usr/bin/env bash
# ldsbench's iperf3 flags and output formats (issue 23): -w sets the
# streams' socket buffers and -C their congestion control (seen on the
# sockets with ss), -p the port, each refused through ldsd with the
# ldsd.conf setting to use instead; -R sends the run from the receiver
# and --bidir both ways at once, every byte checked by the side that
# receives it; -J prints one JSON document whose streams are numbers,
# --json-stream one parseable object per line; --plot draws no point that
# was not measured and marks the link's disconnections (its streams cut
# with ss -K during the run).
. "$(dirname "$0")/lib.sh"
B=$BIN/ldsbench
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
command -v gnuplot > /dev/null || { echo "SKIP: gnuplot is missing (make deps)"; exit 77; }
two_clusters 2
DPORT=$((PORT + 100))

# recv_direct PORT-ARGS...: a receiver for one command, in the background ($rpid).
recv_direct() {
	"$B" recv --direct "$@" -1 -i 0 -J > "$T/drecv.json" 2> "$T/drecv.err" &
	rpid=$!
	PIDS="$PIDS $rpid"
}

# ---- --help and --version -------------------------------------------------------
help=$("$B" --help) || fail "--help exited $?"
for f in "-w, --window" "-C, --congestion" "-p, --port" "-R, --reverse" "--bidir" "--json-stream" "--wait" \
	"-J, --json" "-V, --version"; do
	echo "$help" | grep -q -- "$f" || fail "--help does not list $f"
done
"$B" --version | grep -Eq '^ldsbench [0-9]' || fail "--version: $("$B" --version 2>&1)"

# ---- -p, -w and -C on a direct link: what the sockets really have ---------------------
recv_direct 127.0.0.1 -p "$DPORT" -w 96k
# The kernel doubles SO_SNDBUF and SO_RCVBUF (socket(7)): 96k is 196608.
timeout 60 "$B" send --direct 127.0.0.1 -p "$DPORT" -w 96k -C reno -P 2 -t 2 -i 0.5 --wait 10 -J > "$T/dsend.json" 2> "$T/dsend.err" &
spid=$!
PIDS="$PIDS $spid"
for _ in $(seq 50); do
	ss -timnH state established "( dport = :$DPORT or sport = :$DPORT )" > "$T/ss.txt"
	n=$(grep -c 'rb196608,t[0-9]*,tb196608' "$T/ss.txt")
	c=$(grep -cw reno "$T/ss.txt")
	[ "$n" -eq 4 ] && [ "$c" -ge 2 ] && break
	sleep 0.1
done
[ "$n" -eq 4 ] || fail "-w 96k: not 4 sockets with 192 KiB buffers on port $DPORT: $(cat "$T/ss.txt")"
# The connecting side sets the congestion control on its two streams.
[ "$c" -ge 2 ] || fail "-C reno: the streams on port $DPORT do not use reno: $(cat "$T/ss.txt")"
wait "$spid" || fail "send -p -w -C: $(cat "$T/dsend.json" "$T/dsend.err")"
wait "$rpid" || fail "recv -p -w: $(cat "$T/drecv.json" "$T/drecv.err")"

# ---- -J: one document, streams a number in start and end ------------------------------
[ "$(jq -s length "$T/dsend.json")" = 1 ] || fail "-J printed more than one JSON document: $(cat "$T/dsend.json")"
jq -e '(.start.streams | type) == "number" and (.end.streams | type) == "number" and .start.streams == 2
	and .end.streams == 2 and (.start.duration_s | type) == "number" and (.start.epoch_s | type) == "number"
	and (.start.timestamp | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T")) and (.intervals | length) >= 3
	and all(.intervals[]; (.start_s | type) == "number" and .end_s > .start_s and .epoch_s > 1e9)' \
	"$T/dsend.json" > /dev/null || fail "-J document: $(jq -c "{start: .start, end: .end}" "$T/dsend.json")"
jq -e '.start.congestion == "reno" and .end.error == null and .end.receiver.errors == 0
	and .end.receiver.bytes == .end.bytes_sent and .end.bytes_sent > 0' "$T/dsend.json" > /dev/null ||
	fail "direct run with -C reno: $(jq -c .end "$T/dsend.json")"
[ "$(jq -s length "$T/drecv.json")" = 1 ] && jq -e '.end.bytes == .end.messages * 102400 and .end.errors == 0' \
	"$T/drecv.json" > /dev/null || fail "recv -J: $(cat "$T/drecv.json")"

# ---- --json-stream: one object per line ------------------------------------------------
recv_direct "127.0.0.1:$DPORT"
timeout 60 "$B" send --direct "127.0.0.1:$DPORT" -t 1 -i 0.25 --json-stream > "$T/stream.json" 2> "$T/stream.err" ||
	fail "send --json-stream: $(cat "$T/stream.json" "$T/stream.err")"
wait "$rpid" || fail "recv: $(cat "$T/drecv.err")"
lines=$(wc -l < "$T/stream.json")
[ "$lines" -ge 5 ] || fail "--json-stream: $lines lines"
while IFS= read -r line; do
	echo "$line" | jq -e '.event and .data' > /dev/null || fail "--json-stream line does not parse: $line"
done < "$T/stream.json"
[ "$(jq -r .event "$T/stream.json" | sed -n '1p;$p' | tr '\n' ' ')" = "start end " ] ||
	fail "--json-stream events: $(jq -r .event "$T/stream.json" | tr '\n' ' ')"
jq -e 'select(.event == "start" or .event == "end") | (.data.streams | type) == "number"' "$T/stream.json" \
	> /dev/null || fail "--json-stream streams: $(cat "$T/stream.json")"

# ---- -R through the gateways: the receiver sends, the sender checks ------------------------
"$B" recv -s "$T/clusterB.sock" -1 -i 0 -J > "$T/rrecv.json" 2> "$T/rrecv.err" &
rpid=$!
PIDS="$PIDS $rpid"
timeout 60 "$B" send -s "$T/clusterA.sock" -T clusterB/bench -R -t 1.5 -i 0.5 -l 64k -J > "$T/rsend.json" 2> "$T/rsend.err" ||
	fail "send -R: $(cat "$T/rsend.json" "$T/rsend.err")"
wait "$rpid" || fail "recv for -R: $(cat "$T/rrecv.json" "$T/rrecv.err")"
end=$(jq -c .end "$T/rsend.json")
# This side's receiver checked every message (CRC-32C, sequence numbers).
echo "$end" | jq -e '.direction == "receive" and .error == null and .receiver.errors == 0
	and .receiver.bytes == .bytes_sent and .bytes_sent > 64 * 1024 * 10' > /dev/null || fail "-R: $end"
jq -e '.start.direction == "receive" and (.start.from | startswith("clusterB/"))
	and (.start.to | startswith("clusterA/"))' "$T/rsend.json" > /dev/null ||
	fail "-R start: $(jq -c .start "$T/rsend.json")"
# And the other side sent them: its run, in its own output.
[ "$(jq '.runs[] | select(.direction == "send") | .receiver.bytes' "$T/rrecv.json")" = "$(echo "$end" | jq .bytes_sent)" ] ||
	fail "-R: recv's side did not send the bytes: $(cat "$T/rrecv.json")"
echo "measured: ldsbench -R through ldsd: $(echo "$end" | jq '.receiver.bytes') bytes verified by the sender's side"
# A receiver that comes after the START: ldsd holds the START for the
# endpoint and hands it over with its welcome, where liblds reads it
# ahead; nothing else would make the socket readable.
timeout 60 "$B" send -s "$T/clusterA.sock" -T clusterB/bench -R -t 1 -i 0.5 --wait 10 -J > "$T/rsend.json" 2> "$T/rsend.err" &
spid=$!
PIDS="$PIDS $spid"
sleep 1
"$B" recv -s "$T/clusterB.sock" -1 -i 0 -J > "$T/rrecv.json" 2> "$T/rrecv.err" &
rpid=$!
PIDS="$PIDS $rpid"
wait "$spid" || fail "send -R before recv: $(jq -c .end "$T/rsend.json") $(cat "$T/rsend.err")"
wait "$rpid" || fail "recv after send -R: $(cat "$T/rrecv.json" "$T/rrecv.err")"
jq -e '.end.error == null and .end.receiver.bytes == .end.bytes_sent and .end.bytes_sent > 0' "$T/rsend.json" \
	> /dev/null || fail "send -R before recv: $(jq -c .end "$T/rsend.json")"

# ---- --bidir: both ways at once, each direction checked ------------------------------------
recv_direct "127.0.0.1:$DPORT"
timeout 60 "$B" send --direct "127.0.0.1:$DPORT" --bidir -P 2 -t 1.5 -i 0.5 -J > "$T/bsend.json" 2> "$T/bsend.err" ||
	fail "send --bidir: $(cat "$T/bsend.json" "$T/bsend.err")"
wait "$rpid" || fail "recv for --bidir: $(cat "$T/drecv.json" "$T/drecv.err")"
jq -e '[.runs[] | select(.error == null and .receiver.errors == 0 and .receiver.bytes == .bytes_sent
	and .bytes_sent > 0) | .direction] | sort == ["receive", "send"]' "$T/bsend.json" > /dev/null ||
	fail "--bidir: $(jq -c .runs "$T/bsend.json")"
# The two directions overlapped in time.
jq -e '([.intervals[] | select(.direction == "send")] | length) > 0
	and ([.intervals[] | select(.direction == "receive")] | length) > 0' "$T/bsend.json" > /dev/null ||
	fail "--bidir intervals: $(jq -c .intervals "$T/bsend.json")"
# recv's side: the run it checked and the run it sent.
jq -e '([.runs[] | .direction] | sort == ["receive", "send"])
	and all(.runs[] | select(.direction == "receive"); .errors == 0 and .bytes > 0)
	and all(.runs[] | select(.direction == "send"); .error == null and .receiver.bytes == .bytes_sent)' \
	"$T/drecv.json" > /dev/null || fail "--bidir: recv's runs: $(jq -c .runs "$T/drecv.json")"

# ---- --plot: measured points only, the link's cut marked ---------------------------------
recv_direct "127.0.0.1:$DPORT"
timeout 60 "$B" send --direct "127.0.0.1:$DPORT" -P 2 -t 3 -i 0.5 --plot "$T/cut.png" > "$T/cut.txt" 2>&1 &
spid=$!
PIDS="$PIDS $spid"
sleep 1.5
# Both streams' sockets, as a broken path would: the link reconnects and resends.
ss -K dst 127.0.0.1 dport = :"$DPORT" > "$T/ssk.txt" 2>&1
wait "$spid" || fail "send with a cut: $(cat "$T/cut.txt")"
wait "$rpid" || fail "recv with a cut: $(cat "$T/drecv.err")"
grep -q "all intact\|0 errors" "$T/cut.txt" || fail "run with a cut: $(cat "$T/cut.txt")"
[ "$(head -c 4 "$T/cut.png" | tail -c 3)" = PNG ] || fail "--plot wrote no PNG"
# The first point is the end of the first interval; nothing at 0 s.
awk '!/^#/ && NF == 2 && $1 + 0 < 0.4 {bad = bad " " $0} END {exit bad != ""}' "$T/cut.dat" ||
	fail "plot data has a point before the first interval ended: $(head -5 "$T/cut.dat")"
[ "$(awk '!/^#/ && NF == 2' "$T/cut.dat" | wc -l)" -ge 5 ] || fail "plot data: $(cat "$T/cut.dat")"
n=$(sed -n '/^# disconnections/,$p' "$T/cut.dat" | awk '!/^#/ && NF == 4 && $3 > 1 && $3 < 3' | wc -l)
[ "$n" -ge 1 ] || fail "the cut at 1.5 s is not marked in the plot data (ss -K: $(cat "$T/ssk.txt")): $(cat "$T/cut.dat")"

# ---- refused where they cannot apply, with the setting that can -----------------------------
expect 2 "peer's tcp_buffer in ldsd.conf" "$B" send -s "$T/clusterA.sock" -T clusterB/bench -w 1M
expect 2 "peer's congestion in ldsd.conf" "$B" send -s "$T/clusterA.sock" -T clusterB/bench -C cubic
expect 2 "--port is for --direct" "$B" send -s "$T/clusterA.sock" -T clusterB/bench -p 5201
expect 2 "with --port, --direct names the host or address only" "$B" send --direct "127.0.0.1:$DPORT" -p "$DPORT"
expect 2 "--reverse and --bidir exclude each other" "$B" send --direct "127.0.0.1:$DPORT" -R --bidir
expect 2 "recv takes no" "$B" recv --direct "$DPORT" -R
expect 2 "--port 0: want 1..65535" "$B" send --direct 127.0.0.1 -p 0
expect 1 "--congestion nosuchcc: not available" "$B" send --direct 127.0.0.1 -p "$DPORT" -C nosuchcc -t 1
# --transport: a name not built in, and rdma on a machine without a device,
# refused before any link with the daemon's words.
expect 1 '--transport quic: transport "quic" is not built in; available: tcp' "$B" send --direct 127.0.0.1 -p "$DPORT" \
	--transport quic
expect 2 "--transport are for --direct" "$B" send -s "$T/clusterA.sock" -T clusterB/bench --transport tcp
if "$B" recv --direct "$DPORT" --transport rdma -t 1 2>&1 | grep -q 'no RDMA device'; then
	expect 1 "--transport rdma: no RDMA device found (ibv_get_device_list returned none); use transport tcp" \
		"$B" send --direct 127.0.0.1 -p "$DPORT" --transport rdma -t 1
else
	echo "note: --transport rdma without a device: not checked (rdma not built in, or a device exists)"
fi
# The old short -w (--wait) is the window now: seconds are refused as a size.
expect 2 "--window 2: want 4k or more" "$B" send --direct 127.0.0.1 -p "$DPORT" -w 2
# An algorithm the kernel has but a user without CAP_NET_ADMIN may not set:
# refused before the run, not a link whose streams never connect.
cc=$(for a in $(cat /proc/sys/net/ipv4/tcp_available_congestion_control); do
	grep -qw "$a" /proc/sys/net/ipv4/tcp_allowed_congestion_control || { echo "$a"; break; }
done)
if [ "$(id -u)" = 0 ] && [ -n "$cc" ] && command -v setpriv > /dev/null; then
	expect 1 "--congestion $cc: not allowed for this user" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$B" send --direct 127.0.0.1 -p "$DPORT" -C "$cc" -t 1
else
	echo "note: -C with an algorithm a user may not set: not checked (needs root, setpriv, and one available but not allowed)"
fi
