/* testrng.h - the unit tests' reproducible pseudo-random numbers: a test
 * sets rng_state, then draws with rng() (a 64-bit LCG's upper bits). */
#ifndef LDS_TEST_TESTRNG_H
#define LDS_TEST_TESTRNG_H

#include <stdint.h>

extern uint64_t rng_state;
uint32_t rng(void);

#endif
