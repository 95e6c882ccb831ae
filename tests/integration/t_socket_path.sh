#!/usr/bin/env bash
# The socket path stays the fallback (LDS_SHM=0, TCP clients, no
# clients.shm_ring): the liblds tests of a killed sender and a killed slow
# receiver, which run over shared-memory rings by default, run again with
# every client on the socket.
. "$(dirname "$0")/lib.sh"
dir=$(dirname "$0")
for t in t_client_killed t_receiver_killed; do
	out=$(LDS_SHM=0 bash "$dir/$t.sh" 2>&1) || fail "$t with LDS_SHM=0: $(echo "$out" | grep -v '^[0-9:.]* ldsd' | tail -5)"
	echo "measured: LDS_SHM=0 $t: $(echo "$out" | grep measured | tail -1)"
done
