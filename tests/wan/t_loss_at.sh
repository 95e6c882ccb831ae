#!/usr/bin/env bash
# Where random loss acts (wanemu's loss_at): UDP offered at twice a
# 20 Mbit/s link with 10 % loss, so that about half of what arrives finds
# the queue full.  Lost after the bottleneck queue (the default) only the
# packets that passed the queue meet the loss, and a lost one used the
# link; before it (loss_at=enqueue, netem's order) every arriving packet
# meets it, and the link carries only what survives.  Counted from
# wanemu's counters, so the wall clock does not enter.
. "$(dirname "$0")/lib.sh"
command -v iperf3 > /dev/null || { echo "SKIP: iperf3 is missing (make deps)"; exit 77; }

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
netbed_up 3 's1>s2:rate=20mbit' 's1>s3:rate=20mbit,loss_at=enqueue' || fail "bed did not start"

# counts DIR: "forwarded lost queue-dropped" packets of direction DIR.
counts() {
	netbed_ctl stats | jq -r ".directions[] | select(.name == \"$1\") |
		\"\(.forwarded_packets) \(.dropped_loss) \(.dropped_queue)\""
}

# shares SITE: iperf3 UDP at 40 Mbit/s from s1 to SITE; once it runs,
# 10 % loss on s1>SITE (set then: iperf3's UDP setup does not survive
# loss); over the next 2 s prints the loss's share of the packets
# forwarded or lost (after the queue: those that passed it) and of all
# that arrived.
shares() {
	local srv cli f0 l0 q0 f1 l1 q1
	sched_exec "$1" iperf3 -s -1 -p "$PORT" > /dev/null 2>&1 &
	srv=$!
	sleep 0.3
	sched_exec s1 iperf3 -c "$(netbed_addr "$1")" -p "$PORT" -u -b 40M -l 1400 -t 4 > "$T/iperf3.$1" 2>&1 &
	cli=$!
	sleep 0.7
	netbed_ctl "s1>$1" set loss=10% > /dev/null || fail "ctl set loss on s1>$1"
	sleep 0.3
	read -r f0 l0 q0 <<< "$(counts "s1>$1")"
	sleep 2
	read -r f1 l1 q1 <<< "$(counts "s1>$1")"
	wait "$cli" || fail "iperf3 to $1: $(cat "$T/iperf3.$1")"
	wait "$srv"
	[ $((q1 - q0)) -gt $(((f1 - f0) / 2)) ] || fail "s1>$1: the queue was not full ($((q1 - q0)) dropped, $((f1 - f0)) forwarded)"
	awk -v f=$((f1 - f0)) -v l=$((l1 - l0)) -v q=$((q1 - q0)) 'BEGIN {print l / (f + l), l / (f + l + q)}'
}

read -r wire_passed wire_all <<< "$(shares s2)"
read -r enq_passed enq_all <<< "$(shares s3)"
# About 3500 packets passed in 2 s, about 7000 arrived: 99 % intervals.
check "loss after the queue: share of the packets that passed it" "$wire_passed" 0.085 0.115
check "loss after the queue: share of all that arrived" "$wire_all" 0.03 0.07
check "loss_at=enqueue: share of all that arrived" "$enq_all" 0.088 0.112
# Lost among those forwarded or lost: more than the 10 % after the queue,
# as the queue's drops came after the loss.
check "loss_at=enqueue: share of the packets forwarded or lost" "$enq_passed" 0.115 0.3
netbed_ctl s1-s3 show | grep -q 'loss=10%,loss_at=enqueue' || fail "ctl show does not print loss_at=enqueue"
