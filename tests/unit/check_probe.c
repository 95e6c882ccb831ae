/* check_probe.c - the reconnection grid of a link that lost its path
 * (ldsd/probe.c). */
#include <check.h>

#include "ldsd/probe.h"
#include "suites.h"

#define S 1000000000ull

START_TEST(t_first_times_spread)
{
	struct probe_grid g;

	probe_start(&g, 5 * S, S, S, 4);
	ck_assert(probe_active(&g));
	ck_assert_uint_eq(probe_next(&g, 0, 0), 5 * S);
	ck_assert_uint_eq(probe_next(&g, 1, 0), 5 * S + S / 4);
	ck_assert_uint_eq(probe_next(&g, 2, 0), 5 * S + S / 2);
	ck_assert_uint_eq(probe_next(&g, 3, 0), 5 * S + 3 * S / 4);
}
END_TEST

/* An attempt that started late (a tick after its time) still gets the
 * slot's next time on the grid, not its start plus a period: many late
 * rounds add up to nothing. */
START_TEST(t_no_drift)
{
	struct probe_grid g;
	uint64_t t;

	probe_start(&g, 5 * S, S, S, 4);
	t = probe_next(&g, 1, 0);
	for (int round = 1; round <= 30; round++) {
		uint64_t late = t + 50000000ull;   /* the attempt started 50 ms late */

		t = probe_next(&g, 1, late);
		ck_assert_uint_eq(t, 5 * S + S / 4 + (uint64_t)round * S);
	}
}
END_TEST

/* Exactly at a time means that time was taken: the next is a period on. */
START_TEST(t_strictly_after)
{
	struct probe_grid g;

	probe_start(&g, 5 * S, S, S, 2);
	ck_assert_uint_eq(probe_next(&g, 1, 5 * S + S / 2), 6 * S + S / 2);
	ck_assert_uint_eq(probe_next(&g, 1, 5 * S + S / 2 - 1), 5 * S + S / 2);
	/* Far behind (an attempt that took several periods): the next one. */
	ck_assert_uint_eq(probe_next(&g, 0, 9 * S + 1), 10 * S);
}
END_TEST

/* Slots added while probing (streams = "auto") share the grid. */
START_TEST(t_slot_beyond_n)
{
	struct probe_grid g;

	probe_start(&g, S, S, S, 4);
	ck_assert_uint_eq(probe_next(&g, 5, 0), probe_next(&g, 1, 0));
	probe_stop(&g);
	ck_assert(!probe_active(&g));
}
END_TEST

/* Slot 0 keeps the full period; the others share the fast one, spread
 * over it, and a fast period above the full one is the full one. */
START_TEST(t_fast_slots)
{
	struct probe_grid g;
	const uint64_t f = 3 * S / 10;

	probe_start(&g, 5 * S, S, f, 4);
	ck_assert_uint_eq(probe_next(&g, 0, 5 * S), 6 * S);
	ck_assert_uint_eq(probe_next(&g, 1, 0), 5 * S + f / 4);
	ck_assert_uint_eq(probe_next(&g, 3, 0), 5 * S + 3 * f / 4);
	ck_assert_uint_eq(probe_next(&g, 2, 5 * S + f / 2), 5 * S + f / 2 + f);
	/* Late by a tick for 30 rounds: still on the grid. */
	for (uint64_t t = probe_next(&g, 2, 0), k = 1; k <= 30; k++) {
		t = probe_next(&g, 2, t + 50000000ull);
		ck_assert_uint_eq(t, 5 * S + f / 2 + k * f);
	}
	probe_start(&g, 5 * S, S, 2 * S, 4);
	ck_assert_uint_eq(probe_next(&g, 2, 0), 5 * S + S / 2);
}
END_TEST

/* Degenerate arguments do not divide by zero. */
START_TEST(t_degenerate)
{
	struct probe_grid g;

	probe_start(&g, S, 0, 0, 0);
	ck_assert_uint_gt(probe_next(&g, 3, S), S);
}
END_TEST

Suite *make_probe_suite(void)
{
	Suite *s = suite_create("probe");
	TCase *tc = tcase_create("grid");

	tcase_add_test(tc, t_first_times_spread);
	tcase_add_test(tc, t_no_drift);
	tcase_add_test(tc, t_strictly_after);
	tcase_add_test(tc, t_slot_beyond_n);
	tcase_add_test(tc, t_fast_slots);
	tcase_add_test(tc, t_degenerate);
	suite_add_tcase(s, tc);
	return s;
}
