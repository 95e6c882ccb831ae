/* deadline.h - liblds's waits: a deadline in clock_now_ns() time, or none. */
#ifndef LDS_DEADLINE_H
#define LDS_DEADLINE_H

#include <limits.h>
#include <stdint.h>

#include "../ldsd/clock.h"

#define DEADLINE_NEVER INT64_MAX

/* timeout_ms from now; < 0: none. */
static inline int64_t deadline_after(int timeout_ms)
{
	if (timeout_ms < 0)
		return DEADLINE_NEVER;
	return (int64_t)clock_now_ns() + (int64_t)timeout_ms * 1000000;
}

/* poll's timeout up to deadline: -1 for none, 0 once it passed. */
static inline int deadline_poll_ms(int64_t deadline)
{
	int64_t left;

	if (deadline == DEADLINE_NEVER)
		return -1;
	left = deadline - (int64_t)clock_now_ns();
	if (left <= 0)
		return 0;
	left = (left + 999999) / 1000000;
	return left > INT_MAX ? INT_MAX : (int)left;
}

#endif
