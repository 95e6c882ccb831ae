#!/usr/bin/env bash
# Bad command lines: exit 2 and a message that quotes the offending token;
# --check prints the topology as it was understood.  Needs no root.
set -u
W=$(cd "$(dirname "$0")/../.." && pwd)/${BUILD:-build}/bin/wanemu
SITES=(-S a:netns=x,addr=10.77.0.1/24 -S b:netns=y,addr=10.77.0.2/24)
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect_usage_error WANT-TEXT ARGS...
expect_usage_error() {
	local want=$1 out rc
	shift
	out=$("$W" "$@" 2>&1)
	rc=$?
	[ $rc -eq 2 ] || fail "wanemu $*: exit $rc, want 2 ($out)"
	echo "$out" | grep -qF -- "$want" || fail "wanemu $*: message '$out' lacks '$want'"
}

expect_usage_error "at least two sites" -S a:netns=x,addr=10.77.0.1/24 -n
expect_usage_error "bad value 'abc' for delay" "${SITES[@]}" -l a-b:delay=abc -n
expect_usage_error "unknown key 'latency'" "${SITES[@]}" -l a-b:latency=5ms -n
expect_usage_error "'a-c': unknown site" "${SITES[@]}" -l a-c -n
expect_usage_error "bad value '150%' for loss" "${SITES[@]}" -l a-b:loss=150% -n
expect_usage_error "'loss' is not key=value" "${SITES[@]}" -l a-b:loss -n
expect_usage_error "address used by another site" -S a:netns=x,addr=10.77.0.1/24 -S b:netns=y,addr=10.77.0.1/24 -n
expect_usage_error "--outage 'a-b:5s'" "${SITES[@]}" -l a-b -o a-b:5s -n
expect_usage_error "ge_p without ge_r" "${SITES[@]}" -l a-b:ge_p=1% -n
expect_usage_error "bad interval 'x'" probe -i x 10.0.0.1

out=$("$W" "${SITES[@]}" -l a-b:delay=10ms,rate=50mbit,queue=2bdp -l 'a>b:loss=1%' -o a-b:2s@1s -n) ||
	fail "--check refused a good command line"
echo "$out" | grep -qx "link a>b: delay=10.000ms,loss=1%,rate=50000000bit,queue=2bdp,outage=2.000s@1.000s" ||
	fail "--check printed: $out"
echo "$out" | grep -qx "link b>a: delay=10.000ms,rate=50000000bit,queue=2bdp,outage=2.000s@1.000s" ||
	fail "--check printed: $out"

out=$("$W" ctl -s "/tmp/wanemu-none-$$.sock" stats 2>&1)
[ $? -eq 1 ] || fail "ctl without wanemu: want exit 1"
echo "$out" | grep -q "cannot reach wanemu" || fail "ctl without wanemu said: $out"
"$W" --help | grep -q -- "--outage" || fail "--help lacks --outage"
echo "ok: usage errors name their token"
