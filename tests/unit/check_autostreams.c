/* check_autostreams.c - the stream-count chooser (ldsd/autostreams.c)
 * against goodput curves whose best count is known. */
#include <check.h>

#include "ldsd/autostreams.h"
#include "suites.h"

/* Goodput (MB/s) of a path where each stream carries 10 MB/s until the
 * link saturates at `cap` streams' worth. */
static double linear_until(unsigned n, unsigned cap)
{
	return 10.0 * (n < cap ? n : cap);
}

/* Runs `periods` periods on curve(n, cap) and returns the final count. */
static unsigned run(struct autostreams *a, unsigned cap, int periods)
{
	for (int i = 0; i < periods; i++)
		autostreams_period(a, linear_until(a->n, cap), 0);
	return a->n;
}

/* AS_HOLD periods at `rate` keep the count as it is. */
static void assert_holds(struct autostreams *a, double rate, int queued)
{
	unsigned n = a->n;

	for (int i = 0; i < AS_HOLD; i++)
		ck_assert_uint_eq(autostreams_period(a, rate, queued), n);
}

START_TEST(t_grows_to_saturation)
{
	struct autostreams a;

	autostreams_init(&a, 1, 16, 4);
	/* Holds the first guess a while; then 4 -> 6 -> 9 gain, 13 does
	 * not: back to 9, hold, then down to 8 (as good), 7 is worse:
	 * settles at 8, the fewest that saturate. */
	assert_holds(&a, linear_until(4, 8), 0);
	ck_assert_uint_eq(autostreams_period(&a, linear_until(4, 8), 0), 6);
	ck_assert_uint_eq(autostreams_period(&a, linear_until(6, 8), 0), 9);
	ck_assert_uint_eq(autostreams_period(&a, linear_until(9, 8), 0), 13);
	ck_assert_uint_eq(autostreams_period(&a, linear_until(13, 8), 0), 9);
	assert_holds(&a, linear_until(9, 8), 0);
	ck_assert_uint_eq(autostreams_period(&a, linear_until(9, 8), 0), 8);
	ck_assert_uint_eq(autostreams_period(&a, linear_until(8, 8), 0), 7);
	ck_assert_uint_eq(autostreams_period(&a, linear_until(7, 8), 0), 8);
	/* Later probes (up, then down) keep coming back to 8. */
	for (int i = 0; i < 100; i++) {
		unsigned n = autostreams_period(&a, linear_until(a.n, 8), 0);

		ck_assert_uint_ge(n, 7);
		ck_assert_uint_le(n, 12);
	}
	ck_assert_uint_eq(run(&a, 8, AS_HOLD + 2), 8);
}
END_TEST

/* More streams never help (bbr, or a clean path): it falls to the minimum. */
START_TEST(t_flat_goes_to_min)
{
	struct autostreams a;

	autostreams_init(&a, 2, 16, 4);
	ck_assert_uint_eq(run(&a, 1, 3 * (AS_HOLD + 4)), 2);
}
END_TEST

/* A path that gets better: the count follows it upwards, to within the
 * 10 % that one step up must gain. */
START_TEST(t_follows_change)
{
	struct autostreams a;

	autostreams_init(&a, 1, 32, 4);
	ck_assert_uint_eq(run(&a, 4, 40), 4);
	ck_assert_double_ge(linear_until(run(&a, 20, 60), 20), 0.9 * linear_until(20, 20));
}
END_TEST

/* The count after a period that took no step (a hold). */
static unsigned run_curve_settled(struct autostreams *a)
{
	for (int i = 0; i < 2 * (AS_HOLD + 4) && a->hold == 0; i++)
		autostreams_period(a, 100.0 * (1 - 0.03 * (8 - a->n)), 0);
	return a->n;
}

/* Each stream fewer costs 3 %: one step down is within the slack, but a
 * descent stops before it has lost more than 5 % in all (it may try 6,
 * 9 % down, and comes back to 7). */
START_TEST(t_descent_does_not_drift)
{
	struct autostreams a;
	unsigned n;

	autostreams_init(&a, 1, 8, 8);
	for (int i = 0; i < 20 * (AS_HOLD + 4); i++) {
		n = autostreams_period(&a, 100.0 * (1 - 0.03 * (8 - a.n)), 0);
		ck_assert_uint_ge(n, 6);
	}
	ck_assert_uint_ge(run_curve_settled(&a), 7);
}
END_TEST

/* A bottleneck that 4 streams fill, and that then holds a standing
 * queue: from 8 it never pays for an upward probe, it goes down to the
 * fewest that fill it (3 carries less: back to 4) and stays there. */
START_TEST(t_queued_probes_down)
{
	struct autostreams a;

	autostreams_init(&a, 1, 16, 8);
	assert_holds(&a, linear_until(8, 4), 1);
	ck_assert_uint_eq(autostreams_period(&a, linear_until(8, 4), 1), 7);
	for (int i = 0; i < 20 * (AS_HOLD + 4); i++) {
		unsigned n = autostreams_period(&a, linear_until(a.n, 4), a.n >= 4);

		ck_assert_uint_ge(n, 3);
		ck_assert_uint_le(n, 7);
	}
	for (int i = 0; i < AS_HOLD + 2 && a.hold == 0; i++)
		autostreams_period(&a, linear_until(a.n, 4), a.n >= 4);
	ck_assert_uint_eq(a.n, 4);
}
END_TEST

START_TEST(t_bounds)
{
	struct autostreams a;

	autostreams_init(&a, 4, 4, 1);
	ck_assert_uint_eq(a.n, 4);
	ck_assert_uint_eq(run(&a, 64, 50), 4);
	autostreams_init(&a, 1, 3, 4);
	ck_assert_uint_eq(a.n, 3);
	ck_assert_uint_le(run(&a, 64, 50), 3);
	ck_assert_uint_eq(run(&a, 64, 50), 3);
}
END_TEST

Suite *make_autostreams_suite(void)
{
	Suite *s = suite_create("autostreams");
	TCase *tc = tcase_create("choose");

	tcase_add_test(tc, t_grows_to_saturation);
	tcase_add_test(tc, t_flat_goes_to_min);
	tcase_add_test(tc, t_follows_change);
	tcase_add_test(tc, t_descent_does_not_drift);
	tcase_add_test(tc, t_queued_probes_down);
	tcase_add_test(tc, t_bounds);
	suite_add_tcase(s, tc);
	return s;
}
