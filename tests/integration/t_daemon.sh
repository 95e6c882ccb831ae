#!/usr/bin/env bash
# ldsd as a service: without -f it detaches, returns once it is up, writes
# and locks its pid file, and drains and exits on SIGTERM (the signal
# must reach the detached process); a start-up failure is the command's
# exit status; under systemd (NOTIFY_SOCKET) it reports READY=1 and
# STOPPING=1, and with JOURNAL_STREAM its lines carry "<N>" priorities.
. "$(dirname "$0")/lib.sh"
make_key "$T/key"
write_conf clusterB clusterA listen 1
pidf=$T/ldsd.pid

"$BIN/ldsd" -c "$T/clusterB.conf" -p "$pidf" || fail "ldsd without -f exited $?"
[ -S "$T/clusterB.sock" ] || fail "ldsd returned before its client socket existed"
pid=$(cat "$pidf") || fail "no pid file"
PIDS="$PIDS $pid"
kill -0 "$pid" 2>/dev/null || fail "pid file names $pid, which does not run"
[ "$(ps -o comm= -p "$pid")" = ldsd ] || fail "pid $pid is not ldsd"
[ "$(ps -o sid= -p "$pid" | tr -d ' ')" = "$pid" ] || fail "ldsd did not start its own session"
ctl clusterB status >/dev/null || fail "ldsctl status got no answer from the detached ldsd"

# A second daemon with the same pid file is refused.
"$BIN/ldsd" -c "$T/clusterB.conf" -p "$pidf" 2>/dev/null && fail "a second ldsd started with a locked pid file"
[ "$(cat "$pidf")" = "$pid" ] || fail "the pid file was overwritten by the refused second ldsd"

kill -TERM "$pid"
for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "detached ldsd ignored SIGTERM for 10 s ($(grep SigPnd /proc/"$pid"/status))"
[ -e "$pidf" ] && fail "pid file left behind after exit"

# Start-up failure (the client socket's directory does not exist): the
# command itself fails, it does not leave a broken daemon behind.
sed "s|$T/clusterB.sock|$T/missing/dir/b.sock|" "$T/clusterB.conf" > "$T/bad.conf"
"$BIN/ldsd" -c "$T/bad.conf" -p "$T/bad.pid" 2> "$T/bad.err"
rc=$?
[ "$rc" -ne 0 ] || fail "ldsd without -f exited 0 although its start-up failed"
grep -q "start-up failed" "$T/bad.err" || fail "the failed start-up printed nothing to the terminal: $(cat "$T/bad.err")"
[ -e "$T/bad.pid" ] && fail "a failed start-up left its pid file"

# systemd's readiness protocol and journal priorities, with a datagram
# socket standing in for systemd.
command -v python3 >/dev/null || { echo "SKIP: python3 needed for the sd_notify part"; exit 77; }
python3 - "$T/notify" > "$T/notify.out" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
for _ in range(2):
    print(s.recv(4096).decode().replace("\n", " "), flush=True)
PY
npid=$!
PIDS="$PIDS $npid"
for _ in $(seq 1 50); do [ -S "$T/notify" ] && break; sleep 0.1; done
exec 3>"$T/journal"
JOURNAL_STREAM="$(stat -c '%d:%i' "$T/journal")" NOTIFY_SOCKET=$T/notify \
	"$BIN/ldsd" -f -c "$T/clusterB.conf" 2>&3 &
jpid=$!
PIDS="$PIDS $jpid"
for _ in $(seq 1 50); do grep -q READY=1 "$T/notify.out" && break; sleep 0.1; done
grep -q "READY=1 MAINPID=$jpid" "$T/notify.out" || fail "no READY=1 with MAINPID=$jpid: $(cat "$T/notify.out")"
kill -TERM "$jpid"
wait "$jpid" || fail "ldsd -f exited $? after SIGTERM"
wait "$npid"
grep -q "STOPPING=1" "$T/notify.out" || fail "no STOPPING=1: $(cat "$T/notify.out")"
grep -q '^<6>ldsd for cluster clusterB started' "$T/journal" || fail "journal lines lack <6>: $(head -3 "$T/journal")"
echo "measured: detached ldsd stopped by SIGTERM, pid file written, locked and removed; start-up failure exit $rc; READY/STOPPING sent; journal priorities"
