/*
 * check_mw_sched.c - the master's scheduling bookkeeping: on-demand order,
 * queue depth (prefetch), end-of-run copies of the slowest task, first
 * result joined and later ones discharged, lying workers, resume.
 */
#include <check.h>
#include <errno.h>

#include "launcher/mw_sched.h"
#include "suites.h"

static struct mw_sched s;

static void teardown(void)
{
	mw_sched_free(&s);
}

/* Assigns whatever peek offers; returns the id. */
static uint64_t give(unsigned w, double now, enum mw_sched_kind want)
{
	uint64_t id = ~0ULL;

	ck_assert_int_eq(mw_sched_peek(&s, w, &id), want);
	ck_assert_int_eq(mw_sched_assign(&s, w, id, now), 0);
	return id;
}

START_TEST(on_demand_in_order)
{
	uint64_t id;

	ck_assert_int_eq(mw_sched_init(&s, 5, 2, 2), 0);
	ck_assert_uint_eq(give(0, 0, MW_SCHED_NEW), 0);
	ck_assert_uint_eq(give(1, 0, MW_SCHED_NEW), 1);
	/* depth 1: a worker holding a task gets nothing more */
	ck_assert_int_eq(mw_sched_peek(&s, 0, &id), MW_SCHED_NONE);
	ck_assert_int_eq(mw_sched_assign(&s, 0, 2, 0), -EBUSY);
	ck_assert_int_eq(mw_sched_complete(&s, 1, 1, 1), MW_SCHED_JOIN);
	ck_assert_uint_eq(give(1, 1, MW_SCHED_NEW), 2);
	ck_assert_uint_eq(s.ndone, 1);
	ck_assert(!mw_sched_finished(&s));
}
END_TEST

START_TEST(prefetch_depth)
{
	uint64_t id;

	ck_assert_int_eq(mw_sched_init(&s, 10, 1, 2), 0);
	ck_assert_int_eq(mw_sched_set_depth(&s, 0, 3), 0);
	for (uint64_t i = 0; i < 3; i++)
		ck_assert_uint_eq(give(0, 0, MW_SCHED_NEW), i);
	ck_assert_int_eq(mw_sched_peek(&s, 0, &id), MW_SCHED_NONE);
	/* depth only changes while the worker holds nothing */
	ck_assert_int_eq(mw_sched_set_depth(&s, 0, 5), -EINVAL);
	ck_assert_int_eq(mw_sched_set_depth(&s, 0, 0), -EINVAL);
	/* results out of order are fine: the queue is searched */
	ck_assert_int_eq(mw_sched_complete(&s, 0, 1, 1), MW_SCHED_JOIN);
	ck_assert_uint_eq(give(0, 1, MW_SCHED_NEW), 3);
	ck_assert_uint_eq(s.outstanding, 3);
}
END_TEST

START_TEST(copies_of_the_slowest)
{
	uint64_t id;

	ck_assert_int_eq(mw_sched_init(&s, 5, 3, 2), 0);
	ck_assert_int_eq(mw_sched_set_depth(&s, 0, 2), 0);
	give(0, 0, MW_SCHED_NEW);
	give(0, 0, MW_SCHED_NEW);
	give(1, 0, MW_SCHED_NEW);
	/* both take 1 s per task */
	ck_assert_int_eq(mw_sched_complete(&s, 0, 0, 1), MW_SCHED_JOIN);
	ck_assert_int_eq(mw_sched_complete(&s, 1, 2, 1), MW_SCHED_JOIN);
	ck_assert_uint_eq(give(0, 1, MW_SCHED_NEW), 3);
	ck_assert_uint_eq(give(1, 1, MW_SCHED_NEW), 4);
	/* worker 0 runs 1 then 3 (due at 3 s), worker 1 runs 4 (due at 2 s):
	 * idle worker 2 gets a copy of task 3 */
	ck_assert_uint_eq(give(2, 1.5, MW_SCHED_COPY), 3);
	ck_assert_uint_eq(s.w[2].copies, 1);
	/* worker 2 is busy now: nothing more for it */
	ck_assert_int_eq(mw_sched_peek(&s, 2, &id), MW_SCHED_NONE);
	/* the copy wins, the original is discharged later */
	ck_assert_int_eq(mw_sched_complete(&s, 2, 3, 2), MW_SCHED_JOIN);
	ck_assert_int_eq(mw_sched_complete(&s, 0, 1, 2), MW_SCHED_JOIN);
	ck_assert_int_eq(mw_sched_complete(&s, 1, 4, 2), MW_SCHED_JOIN);
	ck_assert(mw_sched_finished(&s));
	ck_assert_uint_eq(s.outstanding, 1);
	ck_assert_int_eq(mw_sched_complete(&s, 0, 3, 3), MW_SCHED_DISCHARGED);
	ck_assert_uint_eq(s.w[0].done + s.w[1].done + s.w[2].done, 5);
	ck_assert_uint_eq(s.w[0].discharged, 1);
	ck_assert_uint_eq(s.outstanding, 0);
}
END_TEST

START_TEST(copies_limited)
{
	uint64_t id;

	/* max_copies 1: LoadBalance off, never copy */
	ck_assert_int_eq(mw_sched_init(&s, 1, 2, 1), 0);
	give(0, 0, MW_SCHED_NEW);
	ck_assert_int_eq(mw_sched_peek(&s, 1, &id), MW_SCHED_NONE);
	ck_assert_int_eq(mw_sched_assign(&s, 1, 0, 0), -EINVAL);
	mw_sched_free(&s);
	/* max_copies 2 and three workers: the third stays idle */
	ck_assert_int_eq(mw_sched_init(&s, 1, 3, 2), 0);
	ck_assert_int_eq(mw_sched_set_depth(&s, 0, 2), 0);
	give(0, 0, MW_SCHED_NEW);
	give(1, 0, MW_SCHED_COPY);
	ck_assert_int_eq(mw_sched_peek(&s, 2, &id), MW_SCHED_NONE);
	/* a worker never holds two copies of one task */
	ck_assert_int_eq(mw_sched_assign(&s, 0, 0, 0), -EINVAL);
}
END_TEST

START_TEST(lying_worker)
{
	ck_assert_int_eq(mw_sched_init(&s, 2, 2, 2), 0);
	give(0, 0, MW_SCHED_NEW);
	ck_assert_int_eq(mw_sched_complete(&s, 1, 0, 1), -ENOENT);
	ck_assert_int_eq(mw_sched_complete(&s, 0, 1, 1), -ENOENT);
	ck_assert_int_eq(mw_sched_complete(&s, 7, 0, 1), -ENOENT);
	ck_assert_int_eq(mw_sched_complete(&s, 0, 0, 1), MW_SCHED_JOIN);
	/* the same result twice: the second is not held any more */
	ck_assert_int_eq(mw_sched_complete(&s, 0, 0, 1), -ENOENT);
	ck_assert_uint_eq(s.ndone, 1);
}
END_TEST

START_TEST(replay_and_prune)
{
	uint64_t ids[8];

	ck_assert_int_eq(mw_sched_init(&s, 6, 1, 2), 0);
	ck_assert_int_eq(mw_sched_replayed(&s, 0), 0);
	ck_assert_int_eq(mw_sched_replayed(&s, 2), 0);
	ck_assert_int_eq(mw_sched_replayed(&s, 2), -EALREADY);
	ck_assert_int_eq(mw_sched_replayed(&s, 6), -EINVAL);
	ck_assert_int_eq(mw_sched_prune(&s, 3), 0);
	ck_assert_int_eq(mw_sched_prune(&s, 3), -EINVAL);
	ck_assert_uint_eq(mw_sched_window(&s, 0, ids, 8), 3);
	ck_assert_uint_eq(ids[0], 1);
	ck_assert_uint_eq(ids[1], 4);
	ck_assert_uint_eq(ids[2], 5);
	ck_assert_uint_eq(mw_sched_window(&s, 0, ids, 2), 2);
	/* the application may pick out of order */
	ck_assert_int_eq(mw_sched_assign(&s, 0, 5, 0), 0);
	ck_assert_int_eq(mw_sched_complete(&s, 0, 5, 1), MW_SCHED_JOIN);
	ck_assert_uint_eq(give(0, 1, MW_SCHED_NEW), 1);
	ck_assert_int_eq(mw_sched_complete(&s, 0, 1, 2), MW_SCHED_JOIN);
	ck_assert_uint_eq(give(0, 2, MW_SCHED_NEW), 4);
	ck_assert_int_eq(mw_sched_complete(&s, 0, 4, 3), MW_SCHED_JOIN);
	ck_assert(mw_sched_finished(&s));
	ck_assert_uint_eq(s.nreplayed, 2);
	ck_assert_uint_eq(s.npruned, 1);
}
END_TEST

START_TEST(slack_of_queued_work)
{
	ck_assert_int_eq(mw_sched_init(&s, 20, 2, 2), 0);
	ck_assert_int_eq(mw_sched_set_depth(&s, 0, 4), 0);
	ck_assert_int_eq(mw_sched_set_depth(&s, 1, 2), 0);
	/* nobody holds anything: no slack */
	ck_assert(mw_sched_slack(&s, 0) == 0);
	for (int i = 0; i < 4; i++)
		give(0, 0, MW_SCHED_NEW);
	give(1, 0, MW_SCHED_NEW);
	give(1, 0, MW_SCHED_NEW);
	/* paces unknown: no slack */
	ck_assert(mw_sched_slack(&s, 0) == 0);
	/* worker 0: 1 s per task, 3 left after t = 1: busy until 4 */
	ck_assert_int_eq(mw_sched_complete(&s, 0, 0, 1), MW_SCHED_JOIN);
	ck_assert(mw_sched_slack(&s, 1) == 0);
	/* worker 1: 2 s per task, 1 left after t = 2: busy until 4 */
	ck_assert_int_eq(mw_sched_complete(&s, 1, 4, 2), MW_SCHED_JOIN);
	ck_assert(mw_sched_slack(&s, 2) > 1.999 && mw_sched_slack(&s, 2) < 2.001);
	/* worker 1 refilled: busy until 6; worker 0 still until 4 */
	give(1, 2, MW_SCHED_NEW);
	ck_assert(mw_sched_slack(&s, 3) > 0.999 && mw_sched_slack(&s, 3) < 1.001);
	/* late: never negative */
	ck_assert(mw_sched_slack(&s, 10) == 0);
}
END_TEST

START_TEST(forfeit_reassigns_at_once)
{
	uint64_t id;

	/* worker 0 is a remote cluster with a deep queue, worker 1 local */
	ck_assert_int_eq(mw_sched_init(&s, 10, 2, 2), 0);
	ck_assert_int_eq(mw_sched_set_depth(&s, 0, 4), 0);
	for (uint64_t i = 0; i < 4; i++)
		ck_assert_uint_eq(give(0, 0, MW_SCHED_NEW), i);
	ck_assert_uint_eq(give(1, 0, MW_SCHED_NEW), 4);
	ck_assert_int_eq(mw_sched_complete(&s, 0, 0, 1), MW_SCHED_JOIN);
	/* task 3 also runs as a copy on worker 1 */
	ck_assert_int_eq(mw_sched_complete(&s, 1, 4, 1), MW_SCHED_JOIN);
	ck_assert_int_eq(mw_sched_assign(&s, 1, 3, 1), 0);
	/* worker 0 goes away holding 1, 2, 3: 1 and 2 are pending again at
	 * the front, 3 stays with its copy */
	ck_assert_uint_eq(mw_sched_forfeit(&s, 0), 3);
	ck_assert_uint_eq(s.w[0].forfeited, 3);
	ck_assert_uint_eq(s.outstanding, 1);
	ck_assert_int_eq(mw_sched_peek(&s, 0, &id), MW_SCHED_NONE);
	ck_assert_int_eq(mw_sched_complete(&s, 1, 3, 2), MW_SCHED_JOIN);
	ck_assert_uint_eq(give(1, 2, MW_SCHED_NEW), 1);
	ck_assert_int_eq(mw_sched_complete(&s, 1, 1, 3), MW_SCHED_JOIN);
	ck_assert_uint_eq(give(1, 3, MW_SCHED_NEW), 2);
	/* its late results are not its to give */
	ck_assert_int_eq(mw_sched_complete(&s, 0, 2, 3), -ENOENT);
	ck_assert_int_eq(mw_sched_complete(&s, 1, 2, 4), MW_SCHED_JOIN);
	/* back: it gets work again, from where the pending tasks are */
	mw_sched_back(&s, 0);
	ck_assert_uint_eq(give(0, 4, MW_SCHED_NEW), 5);
	ck_assert_uint_eq(s.ndone, 5);
}
END_TEST

START_TEST(bad_init)
{
	ck_assert_int_eq(mw_sched_init(&s, 1, 0, 2), -EINVAL);
	ck_assert_int_eq(mw_sched_init(&s, 1, 1, 0), -EINVAL);
	ck_assert_int_eq(mw_sched_init(&s, 0, 1, 1), 0);
	ck_assert(mw_sched_finished(&s));
}
END_TEST

Suite *make_mw_sched_suite(void)
{
	Suite *su = suite_create("mw_sched");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, on_demand_in_order);
	tcase_add_test(tc, prefetch_depth);
	tcase_add_test(tc, copies_of_the_slowest);
	tcase_add_test(tc, copies_limited);
	tcase_add_test(tc, lying_worker);
	tcase_add_test(tc, replay_and_prune);
	tcase_add_test(tc, slack_of_queued_work);
	tcase_add_test(tc, forfeit_reassigns_at_once);
	tcase_add_test(tc, bad_init);
	suite_add_tcase(su, tc);
	return su;
}
