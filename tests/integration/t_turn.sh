#!/usr/bin/env bash
# With several streams, a DATA block that arrives ahead of the one
# expected waits in its socket until its turn (received.blocks_parked),
# where it would be read into a buffer and copied into its message later
# (received.blocks_held): on loopback, with 4 streams and 1 MiB messages,
# a third to a half of the blocks were held before.  Every message arrives
# intact, in order and once, and at most 5 % of the blocks are held.  Over
# a long path blocks never wait: tests/wan/t_lds_impaired.sh.
. "$(dirname "$0")/lib.sh"
two_clusters 4
start_pair 1500 "" "" -b 1M -B 1M -T 120
wait_pair
grep -q "received 1500 messages intact, in order and once" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
read -r blocks held parked < <(ctl clusterB status --json |
	jq -r '.links[0].received | "\(.blocks) \(.blocks_held) \(.blocks_parked)"')
echo "measured: $(cat "$T/r.out"); $blocks blocks, $parked waited in their socket, $held held"
[ "${parked:-0}" -gt 0 ] 2> /dev/null || fail "no block waited in its socket for its turn ($blocks blocks, $held held)"
[ $((held * 20)) -le "$blocks" ] 2> /dev/null ||
	fail "$held of $blocks blocks were read ahead of their turn and held (at most 5 % expected)"

# A stream this side stops reading (stalled, as ldsctl fault stall does)
# holds up the block expected until inactivity_timeout; the blocks behind
# it on the other streams must not wait for it in their sockets
# meanwhile, but be let go and held, so that the peer keeps sending
# (linkturn.c: no stream left running, or a block waited 20 ms; each
# rule alone is checked in tests/unit/check_linkturn.c).
kill "$PID_clusterA" "$PID_clusterB"; wait "$PID_clusterA" "$PID_clusterB" 2> /dev/null
rm -f "$T"/*.sock "$T"/*.ctl
PORT=$((PORT + 1))
two_clusters 4 'inactivity_timeout = 3.0; keepalive = 0.5;'
start_pair 3000 "" "" -b 1M -B 1M -T 120
sleep 0.3
held0=$(ctl clusterB status --json | jq '.links[0].received.blocks_held')
ctl clusterB fault stall clusterA 2 | grep -q "stalled 1 stream" || fail "could not stall stream 2"
kill -0 "$spid" || fail "the transfer ended before the stall; make it longer"
sleep 1
held1=$(ctl clusterB status --json | jq '.links[0].received.blocks_held')
wait_pair
grep -q "received 3000 messages intact, in order and once" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
echo "measured: stream 2 stalled at the receiver: $((held1 - held0)) blocks held in the second after; $(cat "$T/r.out")"
# clusterA may send 32 MiB (a quarter of recv_memory) past the block
# stuck: well over 16 blocks of 64 KiB to hold.
[ "$held1" -gt $((held0 + 16)) ] ||
	fail "while stream 2 was stalled the other streams' blocks waited in their sockets ($held0 -> $held1 held)"
