#!/usr/bin/env bash
# RDMA without a device (issue 22): a gateway with a tcp peer and an rdma
# peer - clusterA connects over both, clusterB listens on both - says, for
# each rdma peer and listener, exactly why it cannot run it and what to
# use instead, and serves its tcp link: checksummed messages cross it,
# also after a reload that adds another rdma peer.  `ldsd --check` warns of
# the same and still passes the file.  Skipped
# where this ldsd has no rdma kind (built without rdma-core) or where a
# device exists (then the kind runs: the conformance suite covers it).
. "$(dirname "$0")/lib.sh"
MSG='no RDMA device found (ibv_get_device_list returned none); use transport tcp'

make_key "$T/key"
# two_peers NAME ROLE OTHER [PEER]: NAME's tcp peer OTHER and an rdma peer
# clusterC, both in ROLE, and PEER (a group and its comma) after them.
two_peers() {
	cat > "$T/$1.conf" <<EOC
cluster = "$1";
clients = { socket = "$T/$1.sock"; };
control_socket = "$T/$1.ctl";
drain_timeout = 5.0;
peers = ( { cluster = "$3"; role = "$2"; address = "127.0.0.1"; port = $PORT; streams = 2; key_file = "$T/key"; },
          { cluster = "clusterC"; role = "$2"; address = "127.0.0.1"; port = $((PORT + 1)); key_file = "$T/key";
            transport = "rdma"; rdma_buffers = 16; rdma_write_ring = "1M"; rdma_write_threshold = "8k"; } ${4:-} );
EOC
}
two_peers clusterA connect clusterB
two_peers clusterB listen clusterA

out=$("$BIN/ldsd" --check -c "$T/clusterA.conf" 2>&1; echo "rc=$?")
if grep -q 'transport "rdma" is not built in' <<< "$out"; then
	echo "skipped: this ldsd is built without rdma-core (no rdma transport)"
	exit 77
fi
if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	echo "skipped: this machine has an RDMA device ($(ls /sys/class/infiniband | tr '\n' ' '))"
	exit 77
fi
grep -q "rc=0" <<< "$out" || fail "--check refused a file whose only fault is the machine: $out"
grep -qF "ldsd: warning: $T/clusterA.conf:6: peers.[1].transport: $MSG" <<< "$out" ||
	fail "--check did not warn of the missing device with file:line and setting: $out"
grep -q 'rdma_buffers = 16;' <<< "$out" && grep -q 'rdma_write_ring = 1048576;' <<< "$out" &&
	grep -q 'rdma_write_threshold = 8192;' <<< "$out" || fail "--check did not print the rdma settings back: $out"

start_ldsd clusterB
start_ldsd clusterA
wait_up clusterA 2
for g in clusterA clusterB; do
	n=$(grep -cF "rdma transport: $MSG" "$T/$g.log")
	[ "$n" -ge 1 ] || fail "$g did not log '$MSG'"
	grep -qF "$g.conf:6: peers: cluster clusterC: no link" "$T/$g.log" || fail "$g did not name the peer left out"
done
# A reload that adds another rdma peer says so again and keeps the link.
two_peers clusterA connect clusterB ", { cluster = \"clusterD\"; role = \"connect\"; address = \"127.0.0.1\";
          port = $((PORT + 2)); key_file = \"$T/key\"; transport = \"rdma\"; }"
n=$(grep -cF "rdma transport: $MSG" "$T/clusterA.log")
kill -HUP "$PID_clusterA"
wait_log "$T/clusterA.log" "cluster clusterD: transport \"rdma\" cannot start" || fail "the reload did not refuse clusterD's link"
[ "$(grep -cF "rdma transport: $MSG" "$T/clusterA.log")" -gt "$n" ] || fail "the reload did not say why"
start_pair 200 "" "" -B 4k -T 60
wait_pair
grep -q "200 messages" "$T/r.out" || fail "receiver: $(cat "$T/r.out")"
kill -0 "$PID_clusterA" && kill -0 "$PID_clusterB" || fail "a gateway exited"
echo "measured: both gateways logged '$MSG' (at start and at a reload adding an rdma peer) and served their tcp link: $(cat "$T/r.out")"
