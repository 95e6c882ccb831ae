/* fakeclock.h - the unit tests' monotonic clock, which a test can move
 * forward instead of waiting (fakeclock.c). */
#ifndef LDS_TEST_FAKECLOCK_H
#define LDS_TEST_FAKECLOCK_H

#include <stdint.h>

/* From now on CLOCK_MONOTONIC reads ns later than it did, for every
 * module of the test binary (ldsd's clock_now_ns included). */
void fakeclock_advance(uint64_t ns);
/* How far the clock has been moved: a bound in real time is a bound on
 * clock_now_ns() - fakeclock_offset(). */
uint64_t fakeclock_offset(void);
/* Back to the real clock (each test that moved it, at its end). */
void fakeclock_reset(void);

#endif
