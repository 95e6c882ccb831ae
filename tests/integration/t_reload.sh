#!/usr/bin/env bash
# SIGHUP reloads ldsd's configuration.  clusterA connects to clusterB
# (a checksummed transfer in flight) and to clusterD (down, 10 messages
# waiting for it), and listens for clusterE.  The reloaded file adds
# clusterC, removes clusterD and clusterE, adds a listen peer clusterF on
# another port, changes clusterB's keepalive, and changes the client
# socket, which needs a restart.  Then: every message to clusterB arrives
# once, intact, and no stream of clusterB reconnected; clusterC comes up;
# the sender to clusterD is told its 10 messages were lost; clusterE's port
# is closed and clusterF's open; the client socket stays; status shows
# the new set.  A file with an error is refused with its file:line and
# changes nothing.  Then a change of clusterC's streams applies in place,
# and one of its block_size replaces its link, leaving clusterB's alone.
. "$(dirname "$0")/lib.sh"
make_key "$T/key"
PB=$PORT PC=$((PORT + 1)) PD=$((PORT + 2)) PE=$((PORT + 3)) PF=$((PORT + 4))

# peer CLUSTER ROLE PORT [EXTRA]: 2 streams unless EXTRA says
peer() {
	local streams="streams = 2;"
	case "${4:-}" in *streams*) streams="" ;; esac
	echo "{ cluster = \"$1\"; role = \"$2\"; address = \"127.0.0.1\"; port = $3; $streams key_file = \"$T/key\"; ${4:-} }"
}
# conf NAME SOCKET PEER...
conf() {
	local name=$1 sock=$2 list
	shift 2
	list=$(IFS=,; echo "$*")
	cat > "$T/$name.conf" <<EOC
cluster = "$name";
clients = { socket = "$sock"; };
control_socket = "$T/$name.ctl";
drain_timeout = 5.0;
peers = ( $list );
EOC
}
conf clusterB "$T/clusterB.sock" "$(peer clusterA listen "$PB")"
conf clusterC "$T/clusterC.sock" "$(peer clusterA listen "$PC")"
conf clusterA "$T/clusterA.sock" "$(peer clusterB connect "$PB" 'keepalive = 2.0;')" \
	"$(peer clusterD connect "$PD")" "$(peer clusterE listen "$PE")"
start_ldsd clusterB
start_ldsd clusterC
start_ldsd clusterA
wait_up clusterA 2
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port_open "$PE" || fail "clusterA does not listen for clusterE on $PE"
port_open "$PF" && fail "port $PF is open before the reload"

COUNT=2000
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t clusterB/sink -c $COUNT -b 1 -B 64k -T 60 > "$T/s.out" 2>&1 &
spid=$!
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n tod -t clusterD/x -c 10 -b 1 -B 1k -T 30 > "$T/d.out" 2>&1 &
dpid=$!
# Messages in flight: the receiver opens its endpoint only after the reload.
for _ in $(seq 1 100); do
	held=$(ctl clusterB status --json | jq '[.clients.endpoints[] | select(.name == "clusterB/sink") | .queued] | add // 0')
	[ "$held" -gt 0 ] && break
	sleep 0.1
done
[ "$held" -gt 0 ] || fail "no message reached clusterB before the reload"
reconnects_before=$(ctl clusterA status --json | jq '.links[] | select(.peer == "clusterB") | .reconnects')

conf clusterA "$T/other.sock" "$(peer clusterB connect "$PB" 'keepalive = 1.0;')" \
	"$(peer clusterC connect "$PC")" "$(peer clusterF listen "$PF")"
kill -HUP "$PID_clusterA"
for _ in $(seq 1 50); do grep -q "reload: configuration of" "$T/clusterA.log" && break; sleep 0.1; done
grep -q "reload: configuration of $T/clusterA.conf applied: 3 peers" "$T/clusterA.log" || fail "no reload logged"
"$TBIN/ldstest" recv -s "$T/clusterB.sock" -n sink -f clusterA/src -c $COUNT -b 1 -B 64k -T 60 > "$T/r.out" 2>&1 ||
	fail "receiver: $(cat "$T/r.out")"
wait $spid || fail "sender: $(cat "$T/s.out")"
wait $dpid && fail "the sender to the removed clusterD succeeded: $(cat "$T/d.out")"
grep -q "lost 10," "$T/d.out" || fail "the sender to clusterD was not told its 10 messages were lost: $(cat "$T/d.out")"

st=$(ctl clusterA status --json)
[ "$(jq -c '[.links[].peer] | sort' <<< "$st")" = '["clusterB","clusterC","clusterF"]' ] ||
	fail "links after the reload: $(jq -c '[.links[].peer]' <<< "$st")"
[ "$(jq '.links[] | select(.peer == "clusterB") | .reconnects' <<< "$st")" = "$reconnects_before" ] ||
	fail "clusterB's link reconnected across the reload"
grep -q "keepalive = 1.0" <<< "$("$BIN/ldsd" --check -c "$T/clusterA.conf" 2>/dev/null)" || fail "--check of the new file"
n_up=$(grep -c "link clusterB: stream [0-9] up" "$T/clusterA.log")
[ "$n_up" = 2 ] || fail "clusterB's streams came up $n_up times, not 2"
wait_up clusterC 2
# The link the reload added has its bounded share of recv_memory for
# messages nobody has open (64M of 128M): of four 20 MiB messages to
# never-opened names the fourth is dropped and counted.
"$TBIN/clientattack" lost -s "$T/clusterC.sock" -n catk -t clusterA/never- -c 4 -b 20M -T 20 > "$T/catk.out" 2>&1 &
PIDS="$PIDS $!"
for _ in $(seq 1 150); do ctl clusterA status | grep -q "clients: .* 1 messages not delivered" && break; sleep 0.1; done
ctl clusterA status | grep -q "clients: .* 1 messages not delivered" ||
	fail "messages for unopened names over the link a reload added are not bounded: $(ctl clusterA status | grep clients:)"
grep -q "clients.socket changed: that needs a restart" "$T/clusterA.log" || fail "client socket change not logged"
[ -S "$T/clusterA.sock" ] && [ ! -e "$T/other.sock" ] || fail "the client socket moved"
port_open "$PE" && fail "clusterE's port $PE is still open"
port_open "$PF" || fail "clusterF's port $PF is not open"

# A bad file: refused with its line, nothing changes.
echo "peers = ( { cluster = \"clusterQ\"; role = \"connect\"; }, );" >> "$T/clusterA.conf"
kill -HUP "$PID_clusterA"
for _ in $(seq 1 50); do grep -q "running on with the configuration as it was" "$T/clusterA.log" && break; sleep 0.1; done
grep -q "reload: $T/clusterA.conf:[0-9]*: .*running on with the configuration as it was" "$T/clusterA.log" ||
	fail "a bad file was not refused with its file:line"
[ "$(ctl clusterA status --json | jq '.links | length')" = 3 ] || fail "a bad file changed the links"
kill -0 "$PID_clusterA" || fail "clusterA died"

# clusterC's streams change in place; then its block_size, which replaces
# its link alone.
reload_with() {
	conf clusterA "$T/other.sock" "$(peer clusterB connect "$PB" 'keepalive = 1.0;')" \
		"$(peer clusterC connect "$PC" "$1")" "$(peer clusterF listen "$PF")"
	local n
	n=$(grep -c "reload: configuration of" "$T/clusterA.log")
	kill -HUP "$PID_clusterA"
	for _ in $(seq 1 50); do
		[ "$(grep -c "reload: configuration of" "$T/clusterA.log")" -gt "$n" ] && return 0
		sleep 0.1
	done
	fail "reload not applied"
}
c_streams() { ctl clusterA status --json | jq '.links[] | select(.peer == "clusterC") | .streams_up'; }
reload_with "streams = 3;"
for _ in $(seq 1 50); do [ "$(c_streams)" = 3 ] && break; sleep 0.1; done
[ "$(c_streams)" = 3 ] || fail "clusterC has $(c_streams) streams up, not 3"
grep -q "link clusterC: .*replacing" "$T/clusterA.log" && fail "a change of streams replaced the link"
reload_with "streams = 3; block_size = 32768;"
grep -q "link clusterC: block_size or memory changed: replacing the link" "$T/clusterA.log" ||
	fail "a change of block_size did not replace the link"
for _ in $(seq 1 50); do [ "$(c_streams)" = 3 ] && break; sleep 0.1; done
[ "$(c_streams)" = 3 ] || fail "the new clusterC link has $(c_streams) streams up, not 3"
[ "$(ctl clusterA status --json | jq '.links[] | select(.peer == "clusterB") | .reconnects')" = "$reconnects_before" ] ||
	fail "clusterB's link reconnected when clusterC's was replaced"
[ "$(grep -c "link clusterB: stream [0-9] up" "$T/clusterA.log")" = 2 ] || fail "clusterB's streams came up again"
echo "measured: $(cat "$T/r.out"); clusterD's sender: $(cat "$T/d.out" | tail -1)"
