/*
 * check_mw_calib.c - a calibration run's tasks (launcher/mw_calib.h):
 * spread over the whole problem, dealt to the clusters by their shares
 * (exactly, and each cluster's spread too), found again by id; the
 * MWL_CALIB_SHARES list; and the scheduler's groups that keep each
 * cluster to its own tasks.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "launcher/mw_calib.h"
#include "launcher/mw_sched.h"
#include "suites.h"

/* 192 of 512: each of the 192 equal stretches of the range (2.67 tasks
 * each) holds exactly one, its middle; ids increase. */
START_TEST(spread_covers_the_range)
{
	uint64_t ids[192];

	mw_calib_spread(512, 192, ids);
	ck_assert_uint_eq(ids[0], 1);                  /* 512 / 384 = 1.33 */
	ck_assert_uint_eq(ids[191], 510);              /* 383 * 512 / 384 = 510.67 */
	for (unsigned k = 0; k < 192; k++) {
		ck_assert_uint_ge(ids[k] * 192, (uint64_t)k * 512);
		ck_assert_uint_lt(ids[k] * 192, (uint64_t)(k + 1) * 512);
		if (k > 0)
			ck_assert_uint_gt(ids[k], ids[k - 1]);
	}
}
END_TEST

/* As many as the problem has: every task, in order; and a range near
 * 2^64 does not overflow. */
START_TEST(spread_all_and_huge)
{
	uint64_t ids[5], big = UINT64_MAX - 1;

	mw_calib_spread(5, 5, ids);
	for (unsigned k = 0; k < 5; k++)
		ck_assert_uint_eq(ids[k], k);
	mw_calib_spread(big, 3, ids);
	ck_assert_uint_eq(ids[0], big / 6);            /* the middle of the first third */
	ck_assert_uint_gt(ids[1], ids[0]);
	ck_assert_uint_gt(ids[2], ids[1]);
	ck_assert_uint_lt(ids[2], big);
	ck_assert_uint_ge(ids[2], big - big / 6 - 1);
}
END_TEST

/* Shares 64 and 128 of 192 (main: 1 worker x 4 grain... any counts):
 * exactly those, and each group's tasks reach from the start of the
 * sample to its end with no gap wider than its stride plus one. */
START_TEST(deal_exact_and_spread)
{
	double w[] = { 64, 128 };
	unsigned g[192], n[2] = { 0, 0 }, first[2] = { 999, 999 }, last[2] = { 0, 0 }, prev[2] = { 0, 0 };
	unsigned gap[2] = { 0, 0 };

	ck_assert_int_eq(mw_calib_deal(192, w, 2, g), 0);
	for (unsigned k = 0; k < 192; k++) {
		unsigned x = g[k];

		ck_assert_uint_lt(x, 2);
		if (n[x] > 0 && k - prev[x] > gap[x])
			gap[x] = k - prev[x];
		if (first[x] == 999)
			first[x] = k;
		last[x] = k;
		prev[x] = k;
		n[x]++;
	}
	ck_assert_uint_eq(n[0], 64);
	ck_assert_uint_eq(n[1], 128);
	ck_assert_uint_le(first[0], 3);
	ck_assert_uint_le(first[1], 2);
	ck_assert_uint_ge(last[0], 188);
	ck_assert_uint_ge(last[1], 189);
	ck_assert_uint_le(gap[0], 4);                  /* stride 3 */
	ck_assert_uint_le(gap[1], 3);                  /* stride 1.5 */
}
END_TEST

/* Uneven whole shares come out exact; a group of weight 0 gets nothing;
 * weights that give nobody a task, or are negative or not numbers, are
 * refused. */
START_TEST(deal_uneven_zero_and_bad)
{
	double w[] = { 7, 13, 5 }, z[] = { 1, 0, 3 }, none[] = { 0, 0 }, neg[] = { 2, -1 }, nan_w[] = { 1, NAN };
	unsigned g[25], n[3] = { 0, 0, 0 };

	ck_assert_int_eq(mw_calib_deal(25, w, 3, g), 0);
	for (unsigned k = 0; k < 25; k++)
		n[g[k]]++;
	ck_assert_uint_eq(n[0], 7);
	ck_assert_uint_eq(n[1], 13);
	ck_assert_uint_eq(n[2], 5);
	n[0] = n[1] = n[2] = 0;
	ck_assert_int_eq(mw_calib_deal(8, z, 3, g), 0);
	for (unsigned k = 0; k < 8; k++)
		n[g[k]]++;
	ck_assert_uint_eq(n[0], 2);
	ck_assert_uint_eq(n[1], 0);
	ck_assert_uint_eq(n[2], 6);
	ck_assert_int_eq(mw_calib_deal(4, none, 2, g), -1);
	ck_assert_int_eq(mw_calib_deal(4, neg, 2, g), -1);
	ck_assert_int_eq(mw_calib_deal(4, nan_w, 2, g), -1);
}
END_TEST

START_TEST(index_finds_ids)
{
	uint64_t ids[] = { 1, 4, 6, 9, 12 };

	ck_assert_int_eq(mw_calib_index(ids, 5, 1), 0);
	ck_assert_int_eq(mw_calib_index(ids, 5, 9), 3);
	ck_assert_int_eq(mw_calib_index(ids, 5, 12), 4);
	ck_assert_int_eq(mw_calib_index(ids, 5, 0), -1);
	ck_assert_int_eq(mw_calib_index(ids, 5, 5), -1);
	ck_assert_int_eq(mw_calib_index(ids, 5, 13), -1);
	ck_assert_int_eq(mw_calib_index(ids, 0, 1), -1);
}
END_TEST

/* A name must match whole; a bad entry anywhere spoils the list. */
START_TEST(share_list)
{
	double v = -1;

	ck_assert_int_eq(mw_calib_share("clusterA:64,clusterB:128", "clusterB", &v), 0);
	ck_assert_double_eq(v, 128);
	ck_assert_int_eq(mw_calib_share("clusterA:64,clusterB:128", "clusterA", &v), 0);
	ck_assert_double_eq(v, 64);
	ck_assert_int_eq(mw_calib_share("clusterAB:3,clusterA:5", "clusterA", &v), 0);
	ck_assert_double_eq(v, 5);
	ck_assert_int_eq(mw_calib_share("clusterA:64", "cluster", &v), -1);
	ck_assert_int_eq(mw_calib_share("", "clusterA", &v), -1);
	ck_assert_int_eq(mw_calib_share("clusterA64", "clusterA", &v), -2);
	ck_assert_int_eq(mw_calib_share("clusterA:x", "clusterA", &v), -2);
	ck_assert_int_eq(mw_calib_share("clusterA:1,clusterB:-2", "clusterA", &v), -2);
	ck_assert_int_eq(mw_calib_share("clusterA:1,", "clusterA", &v), 0);
}
END_TEST

/* Tasks 0 2 4 are group 0's (worker 0), 1 3 5 group 1's (worker 1): each
 * worker gets its own in order and nothing of the other's, not even a
 * copy at the end, and its window shows its own pending tasks only. */
START_TEST(sched_groups_keep_to_their_own)
{
	struct mw_sched s;
	unsigned tg[] = { 0, 1, 0, 1, 0, 1 }, wg[] = { 0, 1 };
	uint64_t id, win[8];

	ck_assert_int_eq(mw_sched_init(&s, 6, 2, 2), 0);
	ck_assert_int_eq(mw_sched_set_depth(&s, 0, 8), 0);
	ck_assert_int_eq(mw_sched_set_groups(&s, tg, wg, 2), 0);
	ck_assert_uint_eq(mw_sched_window(&s, 1, win, 8), 3);
	ck_assert_uint_eq(win[0], 1);
	ck_assert_uint_eq(win[2], 5);
	for (uint64_t want = 0; want < 6; want += 2) {
		ck_assert_int_eq(mw_sched_peek(&s, 0, &id), MW_SCHED_NEW);
		ck_assert_uint_eq(id, want);
		ck_assert_int_eq(mw_sched_assign(&s, 0, id, 0), 0);
	}
	/* Worker 0 holds all of group 0: nothing more for it, and worker 1
	 * with an empty queue gets its own first task, not a copy. */
	ck_assert_int_eq(mw_sched_peek(&s, 0, &id), MW_SCHED_NONE);
	ck_assert_int_eq(mw_sched_peek(&s, 1, &id), MW_SCHED_NEW);
	ck_assert_uint_eq(id, 1);
	for (uint64_t t = 1; t < 6; t += 2) {
		ck_assert_int_eq(mw_sched_assign(&s, 1, t, 0), 0);
		ck_assert_int_eq(mw_sched_complete(&s, 1, t, 1), MW_SCHED_JOIN);
	}
	/* Group 1 done, group 0 outstanding: no copy of group 0's crosses over. */
	ck_assert_int_eq(mw_sched_peek(&s, 1, &id), MW_SCHED_NONE);
	/* Forfeited, a task is pending in its own group again. */
	ck_assert_uint_eq(mw_sched_forfeit(&s, 0), 3);
	ck_assert_int_eq(mw_sched_peek(&s, 1, &id), MW_SCHED_NONE);
	mw_sched_back(&s, 0);
	ck_assert_int_eq(mw_sched_peek(&s, 0, &id), MW_SCHED_NEW);
	ck_assert_uint_eq(id, 0);
	/* Groups are set before the first assignment only, and in range. */
	ck_assert_int_eq(mw_sched_assign(&s, 0, 0, 2), 0);
	ck_assert_int_eq(mw_sched_set_groups(&s, tg, wg, 2), -EINVAL);
	mw_sched_free(&s);
	ck_assert_int_eq(mw_sched_init(&s, 6, 2, 1), 0);
	ck_assert_int_eq(mw_sched_set_groups(&s, tg, wg, 1), -EINVAL);
	mw_sched_free(&s);
}
END_TEST

Suite *make_mw_calib_suite(void)
{
	Suite *s = suite_create("mw_calib");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, spread_covers_the_range);
	tcase_add_test(tc, spread_all_and_huge);
	tcase_add_test(tc, deal_exact_and_spread);
	tcase_add_test(tc, deal_uneven_zero_and_bad);
	tcase_add_test(tc, index_finds_ids);
	tcase_add_test(tc, share_list);
	tcase_add_test(tc, sched_groups_keep_to_their_own);
	suite_add_tcase(s, tc);
	return s;
}
