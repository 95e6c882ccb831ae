#!/usr/bin/env bash
# demo.sh - two clusters' gateways on this machine, a checksummed stream of
# messages through them, a stream broken on purpose half-way, and the link
# statistics at the end.  (The multi-cluster master-worker job joins this
# demo when mwlaunch exists.)
set -u
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/$BUILD/bin
T=$(mktemp -d "${TMPDIR:-/tmp}/lds-demo.XXXXXX")
PIDS=""
trap 'for p in $PIDS; do kill $p 2>/dev/null; done; wait 2>/dev/null; rm -rf "$T"' EXIT INT TERM
COUNT=${DEMO_COUNT:-20000}
PORT=$((10000 + $$ % 10000))   # below the ephemeral port range

head -c 32 /dev/urandom | base64 > "$T/key"; chmod 600 "$T/key"
for side in "clusterA clusterB connect" "clusterB clusterA listen"; do
	set -- $side
	cat > "$T/$1.conf" <<EOC
cluster = "$1";
clients = { socket = "$T/$1.sock"; };
control_socket = "$T/$1.ctl";
allow_faults = true;
peers = ( { cluster = "$2"; role = "$3"; address = "127.0.0.1"; port = $PORT; streams = 4; key_file = "$T/key"; } );
EOC
done
echo "== starting ldsd for clusterB (listens on 127.0.0.1:$PORT) and clusterA (connects, 4 streams)"
"$BIN/ldsd" -f -c "$T/clusterB.conf" 2> "$T/clusterB.log" & PIDS="$PIDS $!"
"$BIN/ldsd" -f -c "$T/clusterA.conf" 2> "$T/clusterA.log" & PIDS="$PIDS $!"
for _ in $(seq 1 50); do
	"$BIN/ldsctl" -s "$T/clusterA.ctl" status --json 2>/dev/null | grep -q '"streams_up":4' && break
	sleep 0.1
done
echo "== sending $COUNT checksummed messages (1 B .. 1 MiB) from clusterA/producer to clusterB/consumer"
"$ROOT/$BUILD/tests/ldstest" recv -s "$T/clusterB.sock" -n consumer -f clusterA/producer -c "$COUNT" -B 1M -T 300 \
	> "$T/recv.out" 2> >(sed -u 's/^ldstest: /  progress: /' >&2) &
rpid=$!
"$ROOT/$BUILD/tests/ldstest" send -s "$T/clusterA.sock" -n producer -t clusterB/consumer -c "$COUNT" -B 1M -T 300 \
	> "$T/send.out" &
spid=$!
sleep 1
echo "== breaking two of the four TCP streams mid-transfer (ldsctl fault break)"
"$BIN/ldsctl" -s "$T/clusterA.ctl" fault break clusterB 1
"$BIN/ldsctl" -s "$T/clusterB.ctl" fault break clusterA 2
wait $spid; src=$?
wait $rpid; rrc=$?
echo "== sender:   $(cat "$T/send.out")"
echo "== receiver: $(cat "$T/recv.out")"
echo "== link statistics (ldsctl status on clusterA)"
"$BIN/ldsctl" -s "$T/clusterA.ctl" status
if [ $src -eq 0 ] && [ $rrc -eq 0 ]; then
	echo "== demo OK: every message arrived once, in order and intact"
	exit 0
fi
echo "== demo FAILED (sender $src, receiver $rrc); gateway logs:"; tail -20 "$T"/*.log
exit 1
