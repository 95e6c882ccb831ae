#!/usr/bin/env bash
# A peer's name is looked up off the event loop: with a DNS server that
# never answers (3 s timeout), ldsd still answers ldsctl at once, and logs
# the lookup's failure with the resolver's reason.  Runs ldsd in a network
# and mount namespace of the test's own, with its own /etc/hosts and
# /etc/resolv.conf naming a silent server on that namespace's loopback.
. "$(dirname "$0")/lib.sh"
command -v ip > /dev/null && command -v python3 > /dev/null || { echo "SKIP: needs ip and python3"; exit 77; }
command -v unshare > /dev/null && unshare -m -n --propagation private true 2>/dev/null ||
	{ echo "SKIP: cannot make network and mount namespaces"; exit 77; }
make_key "$T/key"
GW_ADDR=peer.lds-test.example write_conf clusterA clusterB connect 2 "reconnect_max = 0.2;"
printf '127.0.0.1 localhost\n' > "$T/hosts"
printf 'nameserver 127.0.0.1\noptions timeout:3 attempts:1\n' > "$T/resolv.conf"
cat > "$T/ns.sh" <<EOS
ip link set lo up || exit 1
mount --bind "$T/hosts" /etc/hosts && mount --bind "$T/resolv.conf" /etc/resolv.conf || exit 1
# The silent DNS server: takes the queries, answers none.
python3 -c 'import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 53))
open("$T/dns.ready", "w").close(); time.sleep(20)' &
echo \$! > "$T/dns.pid"
for _ in \$(seq 1 50); do [ -e "$T/dns.ready" ] && break; sleep 0.1; done
exec "$BIN/ldsd" -f -c "$T/clusterA.conf"
EOS
unshare -m -n --propagation private bash "$T/ns.sh" >> "$T/clusterA.log" 2>&1 &
PIDS="$PIDS $!"
for _ in $(seq 1 100); do [ -S "$T/clusterA.ctl" ] && break; sleep 0.1; done
[ -S "$T/clusterA.ctl" ] || fail "ldsd did not start"
PIDS="$PIDS $(cat "$T/dns.pid")"
# 8 status requests over 4 s, while lookups wait for the silent server.
slowest=0
for _ in $(seq 1 8); do
	t0=$(date +%s%N)
	timeout 10 "$BIN/ldsctl" -s "$T/clusterA.ctl" status > /dev/null || fail "ldsctl status failed"
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$ms" -gt "$slowest" ] && slowest=$ms
	sleep 0.5
done
[ "$slowest" -lt 1000 ] || fail "ldsctl status took $slowest ms while a lookup was under way"
for _ in $(seq 1 50); do grep -q "cannot resolve" "$T/clusterA.log" && break; sleep 0.1; done
grep -q 'link clusterB: cannot resolve "peer.lds-test.example": ' "$T/clusterA.log" ||
	fail "the failed lookup was not logged"
echo "measured: slowest ldsctl status $slowest ms during 3 s lookups; $(grep -m1 'cannot resolve' "$T/clusterA.log" | sed 's/.*: cannot/cannot/')"
