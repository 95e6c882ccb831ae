# exec_lib.sh - helpers for the attacks on the exec service (sourced).
#
# clusterA (connect) and clusterB (listen) on loopback; clusterB's gateway
# runs jobs for clusterA as JOBUSER.  $T is opened (711) so that the job
# user reaches the programs and marker directory the tests put there.
. "$(dirname "$0")/../integration/lib.sh"

if [ "$(id -u)" = 0 ]; then
	id nobody > /dev/null 2>&1 || { echo "SKIP: running as root, and there is no user nobody to run jobs as"; exit 77; }
	JOBUSER=nobody
else
	JOBUSER=$(id -un)
fi
[ -x /usr/bin/mpirun ] || { echo "SKIP: no /usr/bin/mpirun (Open MPI) to start jobs with"; exit 77; }
chmod 711 "$T"
MARK=$T/mark
mkdir -m 1777 "$MARK"
EXEC="$TBIN/exectest -s $T/clusterA.sock -c clusterB -T 30"

# exec_clusters EXEC-GROUP: starts both gateways, clusterB with that group;
# clusterA serves clients on TCP port CLIENT_TCP too, if set, with the
# peers' key ($T/key; a client gives it in LDS_KEY_FILE).
exec_clusters() {
	make_key "$T/key"
	write_conf clusterB clusterA listen 1
	CLIENTS_EXTRA=${CLIENT_TCP:+"tcp = \"127.0.0.1:$CLIENT_TCP\"; tcp_key_file = \"$T/key\";"} write_conf clusterA clusterB connect 1
	echo "$1" >> "$T/clusterB.conf"
	start_ldsd clusterB
	start_ldsd clusterA
	wait_up clusterA 1
}

# app NAME TEXT: an executable script $T/app/NAME that jobs may run.
app() {
	mkdir -p -m 755 "$T/app"
	printf '%s\n' "$2" > "$T/app/$1"
	chmod 755 "$T/app/$1"
}
