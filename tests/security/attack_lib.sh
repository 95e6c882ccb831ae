# attack_lib.sh - helpers of the attack tests (sourced after
# tests/integration/lib.sh): the attack client, what a process holds, and
# an honest flow that runs while an attack does.
ATTACK=$TBIN/ldsattack
[ -x "$ATTACK" ] || fail "$ATTACK missing: run make all"

nfds() { ls "/proc/$1/fd" | wc -l; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
# cpu_in PID SECONDS: CPU seconds PID uses over the next SECONDS.
cpu_in() {
	local a b
	a=$(cpu_seconds "$1"); sleep "$2"; b=$(cpu_seconds "$1")
	awk -v a="$a" -v b="$b" 'BEGIN {printf "%.2f", b - a}'
}
# lt A B: true if number A < number B.
lt() { awk -v a="$1" -v b="$2" 'BEGIN {exit !(a < b)}'; }

# start_attack NAME MODE [ARGS...]: ldsattack against clusterB's peer
# port in the background; its summary line goes to $T/NAME.out.
start_attack() {
	local name=$1
	shift
	"$ATTACK" "$@" -p "$PORT" > "$T/$name.out" 2>&1 &
	PIDS="$PIDS $!"
	eval "APID_$name=$!"
}
# stop_attack NAME: ends connection attack NAME now (it prints its summary)
# and waits for it: for a test whose checks under attack are done before
# the attack's -t, which then only bounds it.
stop_attack() {
	local pid
	eval "pid=\$APID_$1"
	kill -USR1 "$pid" 2> /dev/null
	wait "$pid"
}
# attack_field NAME KEY: KEY's value in attack NAME's summary.
attack_field() { grep -o "$2=[0-9.]*" "$T/$1.out" | cut -d= -f2; }

# start_ldsd_nofile NAME N: start_ldsd with at most N descriptors.
start_ldsd_nofile() {
	local old
	old=$(ulimit -Sn)
	ulimit -Sn "$2"
	start_ldsd "$1"
	ulimit -Sn "$old"
}

# An honest flow from clusterA to clusterB while attacks run: rounds of
# checksummed messages (ldstest), each verified, until $T/flow.stop
# exists; flow_stop waits and fails unless every round succeeded.
flow_start() {
	(
		i=0
		while [ ! -e "$T/flow.stop" ]; do
			i=$((i + 1))
			"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n "sink$i" -f "clusterA/src$i" -c 300 -B 16k -T 60 \
				> "$T/flow-r.out" 2>&1 &
			r=$!
			"$TBIN/ldstest" send -s "$T/clusterA.sock" -n "src$i" -t "clusterB/sink$i" -c 300 -B 16k -T 60 \
				> "$T/flow-s.out" 2>&1 || { echo "round $i: sender: $(cat "$T/flow-s.out")"; exit 1; }
			wait $r || { echo "round $i: receiver: $(cat "$T/flow-r.out")"; exit 1; }
			echo "$i" > "$T/flow.rounds"
			sleep 0.2
		done
	) > "$T/flow.out" 2>&1 &
	FLOW_PID=$!
	PIDS="$PIDS $FLOW_PID"
}
flow_stop() {
	touch "$T/flow.stop"
	wait "$FLOW_PID" || fail "honest flow broken: $(cat "$T/flow.out")"
	FLOW_ROUNDS=$(cat "$T/flow.rounds" 2>/dev/null || echo 0)
	[ "$FLOW_ROUNDS" -gt 0 ] || fail "honest flow completed no round"
}
