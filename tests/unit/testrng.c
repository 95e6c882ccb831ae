/* testrng.c - see testrng.h. */
#include "testrng.h"

uint64_t rng_state;

uint32_t rng(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}
