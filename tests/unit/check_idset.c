/* check_idset.c - sets of message ids (libclient/idset.c), against a bitmap. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libclient/idset.h"
#include "suites.h"

#define NBITS 200

/* The set's ranges must be sorted, non-empty, and neither overlap nor
 * touch; and hold exactly the ids the bitmap has. */
static void same_as(const struct idset *s, const unsigned char *bits)
{
	for (size_t i = 0; i < s->n; i++) {
		ck_assert_uint_le(s->r[i].first, s->r[i].last);
		if (i > 0)
			ck_assert_uint_gt(s->r[i].first, s->r[i - 1].last + 1);
	}
	/* ck_abort only on a mismatch: an assertion per id made this suite
	 * take half a minute under the sanitizers. */
	for (uint64_t id = 1; id < NBITS; id++)
		if (idset_contains(s, id) != bits[id])
			ck_abort_msg("id %llu: the set says %d, the bitmap %d", (unsigned long long)id,
				     idset_contains(s, id), bits[id]);
}

START_TEST(t_add_counts_new_ids)
{
	struct idset s = { 0 };

	ck_assert_int_eq(idset_add(&s, 10, 12), 3);
	ck_assert_int_eq(idset_add(&s, 1, 1), 1);
	ck_assert_uint_eq(idset_prefix(&s), 1);
	ck_assert_int_eq(idset_add(&s, 11, 15), 3);
	ck_assert_int_eq(idset_add(&s, 3, 4), 2);
	ck_assert_uint_eq(s.n, 3);
	/* Touching ranges join: 2 closes the gap between 1 and 3..4. */
	ck_assert_int_eq(idset_add(&s, 2, 2), 1);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(idset_prefix(&s), 4);
	/* One range swallowing two and the gap between. */
	ck_assert_int_eq(idset_add(&s, 1, 20), 20 - 4 - 6);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(idset_prefix(&s), 20);
	ck_assert_int_eq(idset_add(&s, 5, 5), 0);
	idset_free(&s);
	ck_assert_uint_eq(idset_prefix(&s), 0);
}
END_TEST

START_TEST(t_remove_splits)
{
	struct idset s = { 0 };

	ck_assert_int_eq(idset_add(&s, 1, 10), 10);
	ck_assert_int_eq(idset_remove(&s, 5), 1);
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(idset_prefix(&s), 4);
	ck_assert_int_eq(idset_remove(&s, 5), 0);
	ck_assert_int_eq(idset_remove(&s, 1), 1);
	ck_assert_uint_eq(idset_prefix(&s), 0);
	ck_assert_int_eq(idset_remove(&s, 10), 1);
	ck_assert_int_eq(idset_remove(&s, 11), 0);
	ck_assert(idset_contains(&s, 9) && idset_contains(&s, 2) && !idset_contains(&s, 10));
	idset_remove_upto(&s, 7);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(s.r[0].first, 8);
	ck_assert_uint_eq(s.r[0].last, 9);
	idset_remove_upto(&s, 100);
	ck_assert_uint_eq(s.n, 0);
	idset_remove_upto(&s, 100);
	idset_free(&s);
}
END_TEST

/* The first gap in from..upto must be first..last. */
static void expect_gap(const struct idset *s, uint64_t from, uint64_t upto, uint64_t first, uint64_t last)
{
	uint64_t a = 0, b = 0;
	int rc = idset_gap(s, from, upto, &a, &b);

	ck_assert_msg(rc == 1 && a == first && b == last, "gap in %llu..%llu: %d, %llu..%llu", (unsigned long long)from,
		      (unsigned long long)upto, rc, (unsigned long long)a, (unsigned long long)b);
}

START_TEST(t_gaps)
{
	struct idset s = { 0 };
	uint64_t a, b;

	expect_gap(&s, 1, 5, 1, 5);
	ck_assert_int_eq(idset_gap(&s, 6, 5, &a, &b), 0);
	ck_assert_int_eq(idset_add(&s, 1, 2), 2);
	ck_assert_int_eq(idset_add(&s, 5, 6), 2);
	ck_assert_int_eq(idset_add(&s, 9, 9), 1);
	expect_gap(&s, 1, 10, 3, 4);
	expect_gap(&s, 5, 10, 7, 8);
	expect_gap(&s, 8, 9, 8, 8);
	expect_gap(&s, 9, 10, 10, 10);
	ck_assert_int_eq(idset_gap(&s, 5, 6, &a, &b), 0);
	ck_assert_int_eq(idset_gap(&s, 9, 9, &a, &b), 0);
	idset_free(&s);
}
END_TEST

/* Random adds and removes, each checked against a bitmap. */
START_TEST(t_random_against_bitmap)
{
	unsigned char bits[NBITS] = { 0 };
	struct idset s = { 0 };
	uint64_t rng = 7 + (uint64_t)_i;

	for (int step = 0; step < 3000; step++) {
		uint64_t a, b;
		int op;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		op = (int)(rng >> 60) % 4;
		a = 1 + (rng >> 20) % (NBITS - 2);
		b = a + (rng >> 40) % 6;
		if (b >= NBITS)
			b = NBITS - 1;
		if (op <= 1) {
			int64_t want = 0;

			for (uint64_t id = a; id <= b; id++)
				want += !bits[id];
			ck_assert_int_eq(idset_add(&s, a, b), want);
			memset(bits + a, 1, b - a + 1);
		} else if (op == 2) {
			ck_assert_int_eq(idset_remove(&s, a), bits[a]);
			bits[a] = 0;
		} else if (step % 50 == 0) {
			idset_remove_upto(&s, a / 4);
			memset(bits, 0, a / 4 + 1);
		}
		same_as(&s, bits);
	}
	idset_free(&s);
}
END_TEST

Suite *make_idset_suite(void)
{
	Suite *s = suite_create("idset");
	TCase *tc = tcase_create("ranges");

	tcase_add_test(tc, t_add_counts_new_ids);
	tcase_add_test(tc, t_remove_splits);
	tcase_add_test(tc, t_gaps);
	tcase_add_loop_test(tc, t_random_against_bitmap, 0, 4);
	suite_add_tcase(s, tc);
	return s;
}
