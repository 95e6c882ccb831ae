/*
 * fakeclock.c - CLOCK_MONOTONIC plus an offset the tests advance.
 *
 * The unit test binaries are linked with -Wl,--wrap=clock_gettime, so
 * every call of the modules linked into them (clock.h's clock_now_ns,
 * evloop's timers, the links' back-off) comes here: the daemon's code
 * stays as it runs in ldsd, with no hook for tests, and a test of
 * timing over tens of seconds runs in a fraction of one.  Other clocks
 * (CLOCK_REALTIME for logs, Check's own timeouts) are left alone.
 */
#include <stdatomic.h>
#include <time.h>

#include "fakeclock.h"

int __real_clock_gettime(clockid_t id, struct timespec *ts);
int __wrap_clock_gettime(clockid_t id, struct timespec *ts);

static _Atomic uint64_t offset_ns;

int __wrap_clock_gettime(clockid_t id, struct timespec *ts)
{
	int r = __real_clock_gettime(id, ts);
	uint64_t off = atomic_load_explicit(&offset_ns, memory_order_relaxed);

	if (r == 0 && id == CLOCK_MONOTONIC && off) {
		uint64_t ns = (uint64_t)ts->tv_nsec + off % 1000000000u;

		ts->tv_sec += (time_t)(off / 1000000000u + ns / 1000000000u);
		ts->tv_nsec = (long)(ns % 1000000000u);
	}
	return r;
}

void fakeclock_advance(uint64_t ns)
{
	atomic_fetch_add_explicit(&offset_ns, ns, memory_order_relaxed);
}

uint64_t fakeclock_offset(void)
{
	return atomic_load_explicit(&offset_ns, memory_order_relaxed);
}

void fakeclock_reset(void)
{
	atomic_store_explicit(&offset_ns, 0, memory_order_relaxed);
}
