#!/usr/bin/env bash
# mw_lanprobe, mwlaunch --benchmark's LAN probe: with DEPTH tasks in flight
# (small ones, and 1 MiB ones that Open MPI sends by rendezvous) every
# round trip completes and a throughput is printed; a bad DEPTH is refused
# with the usage and a non-zero exit.  It checks what was measured, never
# how fast.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mw_lib.sh"
PROBE=$ROOT/$BUILD/bin/mw_lanprobe
[ -x "$PROBE" ] || fail "$PROBE missing: run make"

# probe ARGS...: one run, its lan_bytes_per_s (non-zero) echoed.
probe() {
	local out v
	out=$(timeout 60 mpirun --oversubscribe -np 2 "$PROBE" "$@" 2>&1) || fail "mw_lanprobe $*: exit $?: $out"
	v=$(echo "$out" | sed -n 's/^lan_bytes_per_s \([0-9]*\)$/\1/p')
	[ -n "$v" ] && [ "$v" -gt 0 ] || fail "mw_lanprobe $*: no throughput: $out"
	echo "$v"
}

small1=$(probe 16 16 0.3 1)
small8=$(probe 16 16 0.3 8)
large=$(probe 1048576 65536 0.3 4)
default=$(probe 64 64 0.3)
out=$(timeout 60 mpirun --oversubscribe -np 2 "$PROBE" 16 16 0.3 0 2>&1) && fail "DEPTH 0 was accepted: $out"
[[ "$out" == *"usage: mpirun -np 2 mw_lanprobe TASK_BYTES RESULT_BYTES SECONDS [DEPTH]"* ]] ||
	fail "DEPTH 0: no usage: $out"
echo "measured: mw_lanprobe bytes/s: 16 B, 1 in flight $small1, 8 in flight $small8; 1 MiB tasks, 4 in flight $large; 64 B, default $default"
