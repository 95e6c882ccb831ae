#!/usr/bin/env bash
# streams = "auto" on a long lossy path (100 ms, 1 % loss each way, the
# default congestion control): after holding its first guess the link
# changes its number of streams while a transfer runs, every message
# arrives once, in order and intact, and streams that are retired are not
# counted as failures.
. "$(dirname "$0")/lds_lib.sh"
wan_clusters '"auto"' 'delay=50ms,loss=1%,rate=100mbit' 'streams_max = 16;'
[ "$(ctl clusterA status --json | jq '.links[0].streams_auto')" = true ] || fail "status does not say streams_auto"
start_pair 100000 "" "" -b 1 -B 32k -T 200
wait_pair
grep -q "100000 messages intact, in order and once" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
changes=$(grep -c "streams = auto: " "$T/clusterA.log")
[ "$changes" -ge 1 ] || fail "the number of streams never changed on a long lossy path"
retired=$(grep -c "no longer wanted (streams = auto chose" "$T/clusterA.log")
failures=$(ctl clusterA status --json | jq '.links[0].failures | length')
echo "measured: $(cat "$T/r.out"); $changes changes of the stream count, $retired streams retired," \
	"$failures failures logged; last: $(grep "streams = auto: " "$T/clusterA.log" | tail -1 | sed 's/.*streams = auto: //')"
[ "$failures" -eq 0 ] || fail "retired streams were logged as failures: $(ctl clusterA status)"
