/*
 * check_calstat.c - mwlaunch --benchmark's medians of its calibration
 * runs: odd and even counts, one run, and runs that cannot be combined.
 * Each expected value is worked out beside its case.
 */
#include <check.h>
#include <stdlib.h>

#include "tools/mwlaunch/calstat.h"
#include "suites.h"

START_TEST(median_odd_even_one_none)
{
	double odd[] = { 160, 57, 159 };    /* sorted 57 159 160: the middle one */
	double even[] = { 4, 1, 3, 2 };     /* sorted 1 2 3 4: (2 + 3) / 2 */
	double one[] = { 7.5 };

	ck_assert_double_eq(calib_median(odd, 3), 159);
	ck_assert_double_eq(calib_median(even, 4), 2.5);
	ck_assert_double_eq(calib_median(one, 1), 7.5);
	ck_assert_double_eq(calib_median(NULL, 0), 0);
}
END_TEST

/* Three runs of a main cluster with two workers and a remote one: each
 * worker's median is taken on its own, so the result can mix runs. */
START_TEST(merge_takes_each_workers_median)
{
	struct calib_meas *runs = calloc(3, sizeof(*runs)), *out = calloc(1, sizeof(*out));
	const struct calib_meas *p[] = { &runs[0], &runs[1], &runs[2] };
	/* worker 0: 57 (a run whose CPU was taken), 159, 160 -> 159 (run 2);
	 * worker 1: 120, 110, 130 -> 120 (run 1). */
	double w0[] = { 57, 159, 160 }, w1[] = { 120, 110, 130 };
	/* inter_task 1.7e6, 1.6e6, 1.65e6 -> 1.65e6; inter_result 10, 30, 20 -> 20. */
	double it[] = { 1.7e6, 1.6e6, 1.65e6 }, ir[] = { 10, 30, 20 };

	for (int r = 0; r < 3; r++) {
		runs[r].nperf = 2;
		runs[r].perf[0] = w0[r];
		runs[r].perf[1] = w1[r];
		runs[r].inter_task = it[r];
		runs[r].inter_result = ir[r];
		runs[r].lan = 1e9;          /* the probes' figures are not the runs' */
	}
	ck_assert_int_eq(calib_merge(p, 3, out), 0);
	ck_assert_uint_eq(out->nperf, 2);
	ck_assert_double_eq(out->perf[0], 159);
	ck_assert_double_eq(out->perf[1], 120);
	ck_assert_double_eq(out->inter_task, 1.65e6);
	ck_assert_double_eq(out->inter_result, 20);
	ck_assert_double_eq(out->lan, 0);
	/* The runs are left as they were (the medians sort copies). */
	ck_assert_double_eq(runs[0].perf[0], 57);
	/* One run is its own median; two are averaged: (57 + 159) / 2 = 108. */
	ck_assert_int_eq(calib_merge(p, 1, out), 0);
	ck_assert_double_eq(out->perf[0], 57);
	ck_assert_int_eq(calib_merge(p, 2, out), 0);
	ck_assert_double_eq(out->perf[0], 108);
	free(runs);
	free(out);
}
END_TEST

START_TEST(merge_refuses_what_does_not_match)
{
	struct calib_meas *runs = calloc(CALIB_MAX_RUNS + 1, sizeof(*runs)), *out = calloc(1, sizeof(*out));
	const struct calib_meas *p[CALIB_MAX_RUNS + 1];

	for (int r = 0; r <= CALIB_MAX_RUNS; r++) {
		runs[r].nperf = 1;
		p[r] = &runs[r];
	}
	ck_assert_int_eq(calib_merge(p, 0, out), -1);
	ck_assert_int_eq(calib_merge(p, CALIB_MAX_RUNS + 1, out), -1);
	ck_assert_int_eq(calib_merge(p, CALIB_MAX_RUNS, out), 0);
	runs[1].nperf = 2;          /* a run that saw another worker count */
	ck_assert_int_eq(calib_merge(p, 2, out), -1);
	free(runs);
	free(out);
}
END_TEST

Suite *make_calstat_suite(void)
{
	Suite *s = suite_create("calstat");
	TCase *tc = tcase_create("median");

	tcase_add_test(tc, median_odd_even_one_none);
	tcase_add_test(tc, merge_takes_each_workers_median);
	tcase_add_test(tc, merge_refuses_what_does_not_match);
	suite_add_tcase(s, tc);
	return s;
}
