#!/usr/bin/env bash
# Monitoring: `ldsctl metrics` and metrics_listen's GET /metrics serve
# OpenMetrics text that a real parser (python3-prometheus-client's
# OpenMetrics parser, strict) accepts, whose counters agree with the
# status JSON (which carries "schema": 2); the text status prints failure
# times in ISO 8601; and, as root, an unprivileged user in status_group
# reads status and metrics through the read-only status socket but cannot
# change anything.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
$PY -c 'import prometheus_client.openmetrics.parser' 2>/dev/null ||
	{ echo "SKIP: python3-prometheus-client (tools/install-deps.sh installs it) is missing"; exit 77; }
mport=$((PORT + 1))
two_clusters 2 "" 
sed -i "s|^cluster = \"clusterA\";|cluster = \"clusterA\"; metrics_listen = \"127.0.0.1:$mport\"; status_group = \"nogroup\";|" \
	"$T/clusterA.conf"
kill "$PID_clusterA"; wait "$PID_clusterA" 2>/dev/null
start_ldsd clusterA
wait_up clusterA 2
start_pair 200 "" ""
wait_pair
ctl clusterA fault break clusterB 0 > /dev/null || fail "fault break"
wait_up clusterA 2

ctl clusterA status --json > "$T/status.json"
jq -e '.schema == 2' "$T/status.json" > /dev/null || fail "status JSON has no \"schema\": 2"
sent=$(jq '.links[0].sent.bytes' "$T/status.json")
[ "$sent" -gt 0 ] || fail "no bytes sent in the status"
ctl clusterA status | grep -Eq 'down at 20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-9:]{8}\.[0-9]{3}Z' ||
	fail "text status does not give failure times in ISO 8601: $(ctl clusterA status | grep 'down at')"

# check_metrics FILE: parses it strictly; prints "streams_up sent_bytes".
check_metrics() {
	$PY - "$1" <<'PY'
import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
def val(fam, sample):
    return [s.value for s in fams[fam].samples if s.name == sample and s.labels.get("peer") == "clusterB"][0]
assert fams["lds_link_sent_bytes"].type == "counter" and fams["lds_link_sent_bytes"].unit == "bytes"
print(int(val("lds_link_streams_up", "lds_link_streams_up")), int(val("lds_link_sent_bytes", "lds_link_sent_bytes_total")))
PY
}
ctl clusterA metrics > "$T/metrics.txt" || fail "ldsctl metrics exited $?"
read -r up msent < <(check_metrics "$T/metrics.txt") || fail "ldsctl metrics is not valid OpenMetrics: $(head -20 "$T/metrics.txt")"
[ "$up" = 2 ] || fail "metrics say $up streams up, not 2"
[ "$msent" -ge "$sent" ] || fail "metrics say $msent bytes sent, status said $sent before"

# The HTTP endpoint, as Prometheus scrapes it.
$PY - "$mport" "$T/http.txt" <<'PY' || fail "GET /metrics failed"
import sys, urllib.request, urllib.error
url = "http://127.0.0.1:%s" % sys.argv[1]
r = urllib.request.urlopen(url + "/metrics", timeout=5)
assert r.status == 200 and r.headers["Content-Type"].startswith("application/openmetrics-text; version=1.0.0"), r.headers
open(sys.argv[2], "wb").write(r.read())
try:
    urllib.request.urlopen(url + "/other", timeout=5)
    sys.exit("GET /other did not fail")
except urllib.error.HTTPError as e:
    assert e.code == 404, e.code
PY
check_metrics "$T/http.txt" > /dev/null || fail "GET /metrics is not valid OpenMetrics"

# The read-only status socket.
[ "$(id -u)" = 0 ] || { echo "SKIP: the status socket part needs root (runuser)"; exit 77; }
chmod 755 "$T"
as_nobody() { runuser -u nobody -- "$BIN/ldsctl" -s "$T/clusterA.ctl" "$@"; }
as_nobody status > "$T/nobody.status" 2>&1 || fail "user nobody (group nogroup = status_group) cannot read status: $(cat "$T/nobody.status")"
grep -q 'link clusterB' "$T/nobody.status" || fail "nobody's status lacks the link"
as_nobody metrics > "$T/nobody.metrics" 2>&1 || fail "nobody cannot read metrics"
as_nobody streams clusterB 1 > "$T/nobody.streams" 2>&1 && fail "nobody changed the stream count"
runuser -u nobody -- "$BIN/ldsctl" -s "$T/clusterA.status" streams clusterB 1 > "$T/nobody.streams" 2>&1 &&
	fail "the status socket took a streams request"
grep -q 'refused on the status socket' "$T/nobody.streams" || fail "no clear refusal: $(cat "$T/nobody.streams")"
[ "$(json_field clusterA streams)" = 2 ] || fail "the stream count changed"
echo "measured: OpenMetrics accepted by prometheus_client's parser (ldsctl and HTTP), $msent bytes sent; schema 2; ISO 8601 failure times; nobody reads status and metrics, cannot change streams"
