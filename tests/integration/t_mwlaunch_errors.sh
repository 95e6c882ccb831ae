#!/usr/bin/env bash
# mwlaunch's failures are clear and bounded: a gateway link with the wrong
# key ends the job with the communication manager's message naming the
# peer (no hang); bad job files name file, line and setting (exit 2); a
# missing gateway socket is found before anything starts; usage errors
# exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
. "$(dirname "$0")/mwl_lib.sh"
command -v jq > /dev/null || { echo "SKIP: jq is missing (make deps)"; exit 77; }
"$BIN/mwlaunch" --help | grep -q "dry-run" || fail "--help"
"$BIN/mwlaunch" > /dev/null 2>&1; [ $? = 2 ] || fail "no job file: not a usage error"
"$BIN/mwlaunch" --bogus x > /dev/null 2>&1; [ $? = 2 ] || fail "unknown option: not a usage error"

# Wrong key: clusterA's gateway holds another secret; the link never
# comes up, and the CMs give up after link_timeout.
make_key "$T/key"; make_key "$T/other"
KEYFILE=$T/other star_conf 2 2
start_ldsd clusterB; start_ldsd clusterA
LINK_TIMEOUT=4 write_job 2 "-n 128 -b 32 --verify"
mwlaunch_timed
[ "$rc" = 1 ] || fail "wrong key: exit $rc, expected 1: $(tail -20 "$T/out")"
grep -q "no answer from clusterB/cm-[0-9a-f]\{16\} through the gateway within 4 s" "$T/out" ||
	fail "wrong key: no clear error: $(tail -30 "$T/out")"
# ...which says why, as the gateway knows it: before, only ldsd's log did.
why=$(grep -o "the gateway's link to clusterB is down (for [0-9]* s; last attempt: .*failed authentication (wrong key?.*)" "$T/out") ||
	fail "wrong key: the CM did not say what the gateway knows: $(grep 'no answer' "$T/out")"
echo "measured: the main CM said: $why"
grep -q "^mwlaunch: cluster cluster[AB] failed" "$T/out" || fail "wrong key: failing cluster not named"
[ "$secs" -lt 40 ] || fail "wrong key: took $secs s"
jq -e '.status == "failed"' "$T/job.json" > /dev/null || fail "wrong key: JSON status: $(cat "$T/job.json")"

# Job files: every problem named with file and line.
check_bad() {
	printf '%s\n' "$1" > "$T/bad.conf"
	"$BIN/mwlaunch" --dry-run "$T/bad.conf" > "$T/bad.out" 2>&1; rc=$?
	[ "$rc" = 2 ] || fail "bad job file accepted (exit $rc): $1"
	grep -q "$2" "$T/bad.out" || fail "unclear error for '$1': $(cat "$T/bad.out")"
}
app='application = { program = "/bin/true"; };'
a='{ name = "a"; main = true; socket = "/x"; }'
check_bad "$app clusters = ( $a );" 'bad.conf:1: clusters: expected a list .* of at least 2 clusters'
check_bad "$app clusters = ( $a, { name = \"a\"; socket = \"/y\"; } );" 'name: two clusters have this name'
# --json is mwlaunch's own (the user's was replaced without a word).
check_bad 'application = { program = "/bin/true"; args = [ "-n", "8", "--json", "x.json" ]; };'" clusters = ( $a, { name = \"b\"; socket = \"/y\"; } );" \
	'bad.conf:1: application.args: --json: mwlaunch writes every cluster.s report itself: use mwlaunch -j FILE'
# Framework entries are checked by the runtime's reader against the job
# file's own lines (they named a temporary file, and only at run time).
check_bad "$app
framework = { WorkerBehaviour = 2;
  Bogus = 1; };
clusters = ( $a, { name = \"b\"; socket = \"/y\"; } );" 'bad.conf:3: unknown setting Bogus'
check_bad "$app framework = { WorkerBehaviour = 7; }; clusters = ( $a, { name = \"b\"; socket = \"/y\"; } );" \
	'bad.conf:1: WorkerBehaviour = 7 is out of range'
long=$(printf 'c%.0s' $(seq 1 60))
check_bad "$app clusters = ( { name = \"$long\"; main = true; socket = \"/x\"; }, { name = \"b$long\"; socket = \"/y\"; } );" \
	'name: this name and the main cluster.s take more than 106 bytes together'
check_bad "$app clusters = ( $a, { name = \"b\"; socket = \"/y\"; grain = 0; } );" 'grain: 0 is out of range'
check_bad "$app clusters = ( $a, { name = \"b\"; socket = \"/y\"; cache_mib = -1; } );" 'cache_mib: -1 is out of range'
check_bad "$app clusters = ( { name = \"a\"; main = true; socket = \"/x\"; cache_mib = 8; }, { name = \"b\"; socket = \"/y\"; } );" \
	'cache_mib belong to remote clusters'
check_bad "$app clusters = ( $a, { name = \"b\"; socket = \"/y\"; prefetch_mib = -2; } );" 'prefetch_mib: -2 is out of range'
check_bad "$app clusters = ( { name = \"a\"; main = true; socket = \"/x\"; prefetch_mib = 8; }, { name = \"b\"; socket = \"/y\"; } );" \
	'prefetch_mib, deadline, lease and cache_mib belong to remote clusters'
check_bad "$app clusters = ( $a, { name = \"b\"; start = \"local\"; socket = \"/y\"; cpus = \"1;2\"; } );" \
	'bad.conf:1: cpus: expected CPU numbers and ranges like "0" or "0-3,8"'
check_bad "$app clusters = ( $a, { name = \"b\"; start = \"local\"; socket = \"/y\"; worker_cpus = \"0-\"; } );" \
	'worker_cpus: expected CPU numbers'
check_bad "$app clusters = ( $a, { name = \"b\"; socket = \"/y\"; worker_cpus = \"1\"; } );" \
	'worker_cpus: applies to clusters mwlaunch starts (start = "local")'
check_bad "$app clusters = ( { name = \"a\"; socket = \"/x\"; }, { name = \"b\"; socket = \"/y\"; } );" \
	'main: exactly one cluster must have main = true'
check_bad "$app clusters = ( $a, { name = \"b\"; socket = \"/y\"; colour = 1; } );" 'colour: unknown setting in a cluster'
check_bad "$app framework = ( 1 ); clusters = ( $a, { name = \"b\"; socket = \"/y\"; } );" 'framework: expected a group'
check_bad "clusters = ( $a, { name = \"b\"; socket = \"/y\"; } );" 'application: missing'
check_bad "$app clusters = ( $a, { name = ; } );" 'bad.conf:1: syntax error'

# Framework values are checked by the runtime's own reader before a start.
printf '%s\n' "$app" 'framework = { PrefetchDepth = 0; };' "clusters = ( $a, { name = \"b\"; socket = \"/y\"; } );" > "$T/bad.conf"
"$BIN/mwlaunch" "$T/bad.conf" > "$T/bad.out" 2>&1; rc=$?
[ "$rc" = 2 ] && grep -q "bad.conf: PrefetchDepth must be at least 1" "$T/bad.out" || fail "framework value: exit $rc: $(cat "$T/bad.out")"

# A gateway socket that is not there: said before anything starts.
sed -i "s|$T/clusterB.sock|$T/nowhere.sock|" "$T/job.conf"
mwlaunch_job; rc=$?
[ "$rc" = 1 ] && grep -q "cluster clusterB: no gateway socket at $T/nowhere.sock" "$T/out" ||
	fail "missing socket: exit $rc: $(cat "$T/out")"
echo "measured: wrong key ended the job in $secs s with the CM's message"
