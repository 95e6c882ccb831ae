/* check_dedup.c - which messages a receiving handle already has (libclient/dedup.c). */
#include <stdio.h>

#include "libclient/dedup.h"
#include "suites.h"

START_TEST(t_copies_dropped)
{
	struct dedup d;

	dedup_init(&d, 16);
	ck_assert_int_eq(dedup_admit(&d, "clusterA/src", 77, 1), 1);
	ck_assert_int_eq(dedup_admit(&d, "clusterA/src", 77, 2), 1);
	ck_assert_int_eq(dedup_admit(&d, "clusterA/src", 77, 2), 0);
	ck_assert_int_eq(dedup_admit(&d, "clusterA/src", 77, 1), 0);
	/* Ids to one destination may skip (messages to others, refused ones). */
	ck_assert_int_eq(dedup_admit(&d, "clusterA/src", 77, 9), 1);
	ck_assert_int_eq(dedup_admit(&d, "clusterA/src", 77, 5), 0);
	ck_assert_int_eq(dedup_admit(&d, "clusterA/src", 77, 10), 1);
	ck_assert_uint_eq(d.n, 1);
	dedup_free(&d);
	/* Free forgets everything; the table is usable again. */
	ck_assert_int_eq(dedup_admit(&d, "clusterA/src", 77, 1), 1);
	dedup_free(&d);
}
END_TEST

/* A restarted sender process reuses the endpoint name and starts again at
 * id 1: its new incarnation keeps it from passing for copies. */
START_TEST(t_new_incarnation)
{
	struct dedup d;

	dedup_init(&d, 16);
	for (uint64_t id = 1; id <= 100; id++)
		ck_assert_int_eq(dedup_admit(&d, "clusterA/cm", 0x1111, id), 1);
	ck_assert_int_eq(dedup_admit(&d, "clusterA/cm", 0x2222, 1), 1);
	ck_assert_int_eq(dedup_admit(&d, "clusterA/cm", 0x2222, 2), 1);
	ck_assert_int_eq(dedup_admit(&d, "clusterA/cm", 0x2222, 2), 0);
	/* The old one is still known: a late copy from it is still a copy. */
	ck_assert_int_eq(dedup_admit(&d, "clusterA/cm", 0x1111, 100), 0);
	/* The same incarnation under another name is another sender. */
	ck_assert_int_eq(dedup_admit(&d, "clusterB/cm", 0x1111, 50), 1);
	ck_assert_uint_eq(d.n, 3);
	dedup_free(&d);
}
END_TEST

/* Interleaved senders, far more than fit the bucket array's first guess
 * of one per bucket, each with its own high mark. */
START_TEST(t_many_senders)
{
	char name[64];
	struct dedup d;

	dedup_init(&d, 5000);
	for (uint64_t round = 1; round <= 3; round++) {
		for (int k = 0; k < 4000; k++) {
			snprintf(name, sizeof(name), "c%d/anon-%d", k % 7, k);
			ck_assert_int_eq(dedup_admit(&d, name, (uint64_t)k * 31, round * 2), 1);
			ck_assert_int_eq(dedup_admit(&d, name, (uint64_t)k * 31, round * 2 - 1), 0);
		}
	}
	ck_assert_uint_eq(d.n, 4000);
	dedup_free(&d);
}
END_TEST

/* Beyond max senders the least recently heard from is forgotten. */
START_TEST(t_oldest_forgotten)
{
	struct dedup d;

	dedup_init(&d, 3);
	ck_assert_int_eq(dedup_admit(&d, "c/a", 1, 5), 1);
	ck_assert_int_eq(dedup_admit(&d, "c/b", 1, 5), 1);
	ck_assert_int_eq(dedup_admit(&d, "c/c", 1, 5), 1);
	/* a is heard from again: b is now the oldest. */
	ck_assert_int_eq(dedup_admit(&d, "c/a", 1, 6), 1);
	ck_assert_int_eq(dedup_admit(&d, "c/d", 1, 5), 1);
	ck_assert_uint_eq(d.n, 3);
	ck_assert_int_eq(dedup_admit(&d, "c/a", 1, 6), 0);
	ck_assert_int_eq(dedup_admit(&d, "c/c", 1, 5), 0);
	ck_assert_int_eq(dedup_admit(&d, "c/d", 1, 5), 0);
	/* b was forgotten: its copy passes (and a is now the oldest). */
	ck_assert_int_eq(dedup_admit(&d, "c/b", 1, 5), 1);
	ck_assert_int_eq(dedup_admit(&d, "c/a", 1, 6), 1);
	ck_assert_uint_eq(d.n, 3);
	dedup_free(&d);
}
END_TEST

Suite *make_dedup_suite(void)
{
	Suite *s = suite_create("dedup");
	TCase *tc = tcase_create("senders");

	tcase_add_test(tc, t_copies_dropped);
	tcase_add_test(tc, t_new_incarnation);
	tcase_add_test(tc, t_many_senders);
	tcase_add_test(tc, t_oldest_forgotten);
	suite_add_tcase(s, tc);
	return s;
}
