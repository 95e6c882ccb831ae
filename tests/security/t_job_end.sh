#!/usr/bin/env bash
# Ending a job (ldsd/jobend.h): what waits in a gateway for a job's
# endpoints ("*-TAG") is dropped at once when the job's owner says it
# ended, instead of after undelivered_ttl - and nobody else can end it.
#  1. Another local user (uid) asks clusterB to end root's job: refused
#     (EPERM, logged), the messages still wait.
#  2. A client of the peer cluster that did not start a job there asks
#     through the link: refused (logged), the messages still wait; one
#     that did start a job there (run as exec.user, nobody) asks for root's
#     tag after its job: refused too (the endpoints are not exec.user's).
#  3. The owner asks: the 5 messages are dropped at once, counted as
#     undelivered of an ended job, and reported lost to their sender;
#     3 more sent later are dropped as they come.
# Before ENDs existed, a local END was refused ("takes requests from peer
# gateways only") and the messages waited for undelivered_ttl.
# Needs root (a second user, made and removed here).
. "$(dirname "$0")/../integration/lib.sh"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root to run a client as a second user"; exit 77; }
command -v useradd > /dev/null && command -v setpriv > /dev/null || { echo "SKIP: needs useradd and setpriv"; exit 77; }
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
u=ldse$$
useradd -M -N -s /usr/sbin/nologin "$u" 2> /dev/null || fail "useradd $u failed"
trap 'userdel "$u" 2>/dev/null; cleanup' EXIT
as_user() { setpriv --reuid="$u" --regid=nogroup --clear-groups "$@"; }
chmod 755 "$T"
id nobody > /dev/null 2>&1 || { echo "SKIP: no user nobody to run exec-service jobs as"; exit 77; }
[ -x /usr/bin/mpirun ] || { echo "SKIP: no /usr/bin/mpirun (Open MPI) to start exec-service jobs with"; exit 77; }
tag=0123456789abcdef
make_key "$T/key"
CLIENTS_EXTRA='undelivered_ttl = 60.0;' write_conf clusterB clusterA listen 1
echo 'exec = { allow_clusters = [ "clusterA" ]; programs = [ "/bin/true" ]; user = "nobody"; };' >> "$T/clusterB.conf"
write_conf clusterA clusterB connect 1
start_ldsd clusterB
start_ldsd clusterA
wait_up clusterA 1

# queued: messages waiting for clusterB/cm-TAG (0 when the endpoint is gone).
queued() { ctl clusterB status --json | jq --arg n "clusterB/cm-$tag" '[.clients.endpoints[] | select(.name == $n) | .queued] | add // 0'; }
ended() { ctl clusterB status --json | jq '.clients.undelivered_job_ended'; }

# The job's endpoint, opened by root and left; 5 messages arrive for it.
"$TBIN/clientattack" open -s "$T/clusterB.sock" -n "cm-$tag" > "$T/o.out" || fail "open: $(cat "$T/o.out")"
"$TBIN/ldstest" send -s "$T/clusterA.sock" -n src -t "clusterB/cm-$tag" -c 5 > "$T/s.out" 2>&1 &
spid=$!; PIDS="$PIDS $spid"
for _ in $(seq 1 50); do [ "$(queued)" = 5 ] && break; sleep 0.1; done
[ "$(queued)" = 5 ] || fail "the messages did not wait for clusterB/cm-$tag: $(ctl clusterB status)"

# 1. Another uid.
as_user "$TBIN/clientattack" end -s "$T/clusterB.sock" -t "$tag" > "$T/e1.out" && fail "user $u ended root's job: $(cat "$T/e1.out")"
grep -q "refused: endpoint clusterB/cm-$tag of job $tag belongs to uid 0" "$T/e1.out" || fail "not refused as it should: $(cat "$T/e1.out")"
grep -q "END of job $tag refused: endpoint clusterB/cm-$tag of job $tag belongs to uid 0" "$T/clusterB.log" ||
	fail "clusterB did not log the refusal"
# 2. A peer's client that started no job on clusterB.
"$TBIN/clientattack" end -s "$T/clusterA.sock" -n clusterB -c 1 -t "$tag" > "$T/e2.out" || fail "END over the link: $(cat "$T/e2.out")"
wait_log "$T/clusterB.log" "exec: END of job $tag from clusterA/[^ ]* \(its job 1\) refused: it did not start job 1 here" 10 ||
	fail "clusterB did not refuse the END of a peer that started no job"
timeout 60 "$TBIN/exectest" -s "$T/clusterA.sock" -c clusterB -T 30 -E "$tag" /bin/true > "$T/x.out" 2>&1 ||
	fail "a job through clusterB's exec service: $(cat "$T/x.out")"
grep -q "^END $tag" "$T/x.out" || fail "exectest did not send its END: $(cat "$T/x.out")"
wait_log "$T/clusterB.log" "exec: END of job $tag from clusterA/[^ ]* \(its job 1\) refused: endpoint clusterB/cm-$tag of job $tag belongs to uid 0" 10 ||
	fail "clusterB did not refuse the END of another job's requester: $(grep 'END' "$T/clusterB.log")"
[ "$(queued)" = 5 ] || fail "refused ENDs dropped messages: $(queued) left of 5"
[ "$(ended)" = 0 ] || fail "refused ENDs counted drops: $(ended)"
# 3. The owner.
t0=$(date +%s%N)
"$TBIN/clientattack" end -s "$T/clusterB.sock" -t "$tag" > "$T/e3.out" || fail "the owner's END: $(cat "$T/e3.out")"
[ "$(queued)" = 0 ] || fail "the owner's END left $(queued) messages queued"
[ "$(ended)" = 5 ] || fail "undelivered_job_ended is $(ended), want 5"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
for _ in $(seq 1 50); do [ "$(ctl clusterA status --json | jq '.links[0].sent.messages_lost')" = 5 ] && break; sleep 0.1; done
[ "$(ctl clusterA status --json | jq '.links[0].sent.messages_lost')" = 5 ] || fail "clusterA was not told of the 5 drops"
grep -q "ended job $tag: 5 messages waiting for it dropped" "$T/clusterB.log" || fail "clusterB did not log the end"
# Later messages for the ended job are dropped as they come (a sender
# apiece: after a loss liblds holds a handle's next messages back).
for k in 1 2 3; do
	timeout 20 "$TBIN/ldstest" send -s "$T/clusterA.sock" -n "late$k" -t "clusterB/cm-$tag" -c 1 > "$T/s$k.out" 2>&1
done
for _ in $(seq 1 50); do [ "$(ended)" = 8 ] && break; sleep 0.1; done
[ "$(ended)" = 8 ] || fail "later messages for the ended job: $(ended) dropped of 8, $(queued) queued"
[ "$(ctl clusterB status --json | jq '.clients.undelivered')" = 8 ] || fail "undelivered is not 8"
echo "measured: user $u, a peer's client without a job and the requester of another job refused; the owner's END dropped 5 queued messages in $ms ms (sender told), 3 later ones on arrival"
