#!/usr/bin/env bash
# `ldsctl streams PEER N` below the current count retires streams, and the
# log says that is why, on both sides (it used to blame streams = auto).
. "$(dirname "$0")/lib.sh"
two_clusters 4
ctl clusterA streams clusterB 2 > /dev/null || fail "ldsctl streams failed"
for _ in $(seq 1 50); do grep -q "no longer wanted" "$T/clusterA.log" && break; sleep 0.1; done
grep -q "link clusterB: stream [23] to .* closed (no longer wanted (streams set to 2))" "$T/clusterA.log" ||
	fail "the connecting side does not say the streams were set to 2"
grep -q "streams = auto" "$T/clusterA.log" "$T/clusterB.log" && fail "streams = auto blamed"
for _ in $(seq 1 50); do grep -q "retired by the peer" "$T/clusterB.log" && break; sleep 0.1; done
grep -q "link clusterA: stream [23] .* closed (retired by the peer: it wants fewer streams)" "$T/clusterB.log" ||
	fail "the listening side does not say the peer retired the streams"
echo "measured: 4 -> 2 streams logged as set by ldsctl on both sides"
