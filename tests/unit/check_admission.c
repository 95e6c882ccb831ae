/* check_admission.c - the bounds on connections before authentication
 * (ldsd/admission.c). */
#include <check.h>
#include <errno.h>

#include "ldsd/admission.h"
#include "ldsd/log.h"
#include "suites.h"

#define S 1000000000ull

static const struct config_handshake hs = {
	.timeout = 10, .max_unauth = 8, .early_drop = 8, .max_per_source = 3, .max_failures = 5,
};

static struct admission *new_adm(const struct config_handshake *c)
{
	struct admission *a;

	log_init("check_admission", 1, LOG_LVL_ERR);
	a = admission_new(c);
	ck_assert_ptr_nonnull(a);
	return a;
}

START_TEST(t_per_source)
{
	struct admission *a = new_adm(&hs);

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(admission_admit(a, "10.0.0.1:1000", S), 0);
	ck_assert_int_eq(admission_admit(a, "10.0.0.1:1003", S), -1);
	/* Another address is not held back by the first. */
	ck_assert_int_eq(admission_admit(a, "10.0.0.2:1000", S), 0);
	/* One ends: its source may open another. */
	admission_release(a, "10.0.0.1:1000", NULL, "closed by peer", S);
	ck_assert_int_eq(admission_admit(a, "10.0.0.1:1004", S), 0);
	admission_free(a);
}
END_TEST

START_TEST(t_total)
{
	struct admission *a = new_adm(&hs);
	char peer[32];

	for (int i = 0; i < 8; i++) {
		snprintf(peer, sizeof(peer), "10.0.1.%d:5", i);
		ck_assert_int_eq(admission_admit(a, peer, S), 0);
	}
	ck_assert_int_eq(admission_admit(a, "10.0.2.1:5", S), -1);
	admission_release(a, "10.0.1.0:5", NULL, NULL, S);
	ck_assert_int_eq(admission_admit(a, "10.0.2.1:5", S), 0);
	admission_free(a);
}
END_TEST

/* Halfway between early_drop and max_unauth about half are dropped. */
START_TEST(t_early_drop)
{
	struct config_handshake c = hs;
	struct admission *a;
	char peer[32];
	int admitted = 0;

	c.max_unauth = 1001;
	c.early_drop = 101;
	c.max_per_source = 1001;
	a = new_adm(&c);
	for (int i = 0; i < 101; i++) {
		snprintf(peer, sizeof(peer), "10.1.%d.%d:5", i / 200, i % 200);
		ck_assert_int_eq(admission_admit(a, peer, S), 0);
	}
	/* 101 held: below early_drop + 1 nothing is dropped yet. */
	ck_assert_int_eq(admission_admit(a, "10.1.9.1:5", S), 0);
	for (int i = 0; i < 449; i++) {
		snprintf(peer, sizeof(peer), "10.4.%d.%d:5", i / 200, i % 200);
		while (admission_admit(a, peer, S) < 0)
			;
	}
	/* 551 held: each new one is dropped with probability 451/901;
	 * released at once, so that the count stays. */
	for (int i = 0; i < 2000; i++) {
		snprintf(peer, sizeof(peer), "10.2.%d.%d:5", i / 200, i % 200);
		if (admission_admit(a, peer, S) == 0) {
			admitted++;
			admission_release(a, peer, NULL, NULL, S);
		}
	}
	ck_assert_int_gt(admitted, 800);
	ck_assert_int_lt(admitted, 1200);
	admission_free(a);
}
END_TEST

/* A source that failed max_failures times is dropped until its window
 * is over. */
START_TEST(t_penalty)
{
	struct admission *a = new_adm(&hs);

	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(admission_admit(a, "10.0.0.9:1", S), 0);
		admission_release(a, "10.0.0.9:1", "clusterA", "refused: authentication failed", S);
	}
	ck_assert_int_eq(admission_admit(a, "10.0.0.9:2", 2 * S), -1);
	ck_assert_int_eq(admission_admit(a, "10.0.0.8:2", 2 * S), 0);
	admission_tick(a, (1 + ADMISSION_WINDOW_S) * S);
	ck_assert_int_eq(admission_admit(a, "10.0.0.9:3", (1 + ADMISSION_WINDOW_S) * S), 0);
	admission_free(a);
}
END_TEST

/* An address that authenticated keeps a place when the table is full,
 * within max_per_source, and is not penalised for failures. */
START_TEST(t_trusted)
{
	struct admission *a = new_adm(&hs);
	char peer[32];

	ck_assert_int_eq(admission_admit(a, "10.9.9.9:1", S), 0);
	admission_release(a, "10.9.9.9:1", "clusterA", NULL, S);
	for (int i = 0; i < 8; i++) {
		snprintf(peer, sizeof(peer), "10.0.1.%d:5", i);
		ck_assert_int_eq(admission_admit(a, peer, S), 0);
	}
	ck_assert_int_eq(admission_admit(a, "10.0.2.1:5", S), -1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(admission_admit(a, "10.9.9.9:2", 2 * S), 0);
	ck_assert_int_eq(admission_admit(a, "10.9.9.9:3", 2 * S), -1);
	/* Its failures are counted and logged, but do not lock it out. */
	for (int i = 0; i < 10; i++) {
		admission_release(a, "10.9.9.9:2", "clusterA", "closed by peer", 2 * S);
		ck_assert_int_eq(admission_admit(a, "10.9.9.9:2", 2 * S), 0);
	}
	admission_free(a);
}
END_TEST

/* IPv6 addresses hold colons: the source is all before the port. */
START_TEST(t_ipv6_source)
{
	struct admission *a = new_adm(&hs);

	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(admission_admit(a, "2001:db8::1:4000", S), 0);
	ck_assert_int_eq(admission_admit(a, "2001:db8::1:4001", S), -1);
	ck_assert_int_eq(admission_admit(a, "2001:db8::2:4000", S), 0);
	admission_free(a);
}
END_TEST

START_TEST(t_accept_backoff)
{
	struct admission *a = new_adm(&hs);
	uint64_t w = admission_accept_failed(a, -EMFILE, S), prev = w;

	ck_assert_uint_gt(w, 0);
	for (int i = 0; i < 20; i++) {
		w = admission_accept_failed(a, -EMFILE, S);
		ck_assert_uint_ge(w, prev);
		ck_assert_uint_le(w, S);
		prev = w;
	}
	ck_assert_uint_eq(w, S);
	/* Accepting again ends the episode: the back-off starts over. */
	ck_assert_int_eq(admission_admit(a, "10.0.0.1:1", 2 * S), 0);
	ck_assert_uint_lt(admission_accept_failed(a, -EMFILE, 3 * S), S);
	admission_free(a);
}
END_TEST

Suite *make_admission_suite(void)
{
	Suite *s = suite_create("admission");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, t_per_source);
	tcase_add_test(tc, t_total);
	tcase_add_test(tc, t_early_drop);
	tcase_add_test(tc, t_penalty);
	tcase_add_test(tc, t_trusted);
	tcase_add_test(tc, t_ipv6_source);
	tcase_add_test(tc, t_accept_backoff);
	suite_add_tcase(s, tc);
	return s;
}
