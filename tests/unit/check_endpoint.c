/* check_endpoint.c - the endpoint table and held messages (ldsd/endpoint.c),
 * with a fake clock; reports of dropped messages (ldsd/lostrep.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/endpoint.h"
#include "ldsd/lostrep.h"
#include "suites.h"

#define S 1000000000ull    /* a second, in the fake clock's nanoseconds */

static int link_a, link_b;  /* origins: only their addresses matter */

static struct rb_msg *msg(const void *origin, uint32_t len)
{
	struct rb_msg *m = calloc(1, sizeof(*m));

	ck_assert_ptr_nonnull(m);
	m->rec.len = len;
	m->origin = (void *)origin;
	m->data = malloc(len ? len : 1);
	return m;
}

START_TEST(t_many_names_found_and_forgotten)
{
	struct eptab t;
	char name[64];

	ck_assert_int_eq(eptab_init(&t, 10 * S, 0), 0);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "c/n-%d", i);
		ck_assert_ptr_nonnull(eptab_get(&t, name, 0));
	}
	ck_assert_uint_eq(t.count, 5000);
	/* The table grew: chains stay short. */
	ck_assert_uint_ge(t.nbuckets, 2048);
	for (int i = 0; i < 5000; i++) {
		struct endpoint *e;

		snprintf(name, sizeof(name), "c/n-%d", i);
		e = eptab_find(&t, name);
		ck_assert_ptr_nonnull(e);
		ck_assert_str_eq(e->name, name);
		ck_assert_ptr_eq(eptab_get(&t, name, 0), e);
	}
	ck_assert_ptr_null(eptab_find(&t, "c/n-5000"));
	/* Nobody opened them and nothing waits for them: forgotten. */
	for (int i = 0; i < 5000; i += 2) {
		snprintf(name, sizeof(name), "c/n-%d", i);
		eptab_maybe_forget(&t, eptab_find(&t, name), 0);
	}
	ck_assert_uint_eq(t.count, 2500);
	ck_assert_ptr_null(eptab_find(&t, "c/n-0"));
	ck_assert_ptr_nonnull(eptab_find(&t, "c/n-1"));
	eptab_expire(&t, 1, NULL, NULL);
	ck_assert_uint_eq(t.count, 0);
	eptab_free(&t);
}
END_TEST

/* The pool of an origin bounds everything held for names nobody has open;
 * one name takes at most half of it, except a first message of any size. */
START_TEST(t_share_and_pool)
{
	struct eptab t;
	struct endpoint *x, *y, *z;
	struct rb_msg *big;

	ck_assert_int_eq(eptab_init(&t, 10 * S, 0), 0);
	ck_assert_int_eq(eptab_pool(&t, &link_a, 100000), 0);
	ck_assert_int_eq(eptab_pool(&t, &link_b, 100000), 0);
	x = eptab_get(&t, "c/x", 0);
	y = eptab_get(&t, "c/y", 0);
	z = eptab_get(&t, "c/z", 0);
	big = msg(&link_a, 70000);
	/* A name holding nothing takes one message beyond its share. */
	ck_assert_int_eq(eptab_admit(&t, x, big), EP_DROP_NONE);
	eptab_enqueue(&t, x, big, 0);
	ck_assert_uint_eq(eptab_pool_of(&t, &link_a)->used, 70000 + EP_MSG_COST);
	/* Then nothing more for it... */
	struct rb_msg *small = msg(&link_a, 10);
	ck_assert_int_eq(eptab_admit(&t, x, small), EP_DROP_SHARE);
	/* ...and the pool has room for less than another such message. */
	struct rb_msg *big2 = msg(&link_a, 40000);
	ck_assert_int_eq(eptab_admit(&t, y, big2), EP_DROP_POOL);
	/* Another origin's pool is its own. */
	struct rb_msg *other = msg(&link_b, 40000);
	ck_assert_int_eq(eptab_admit(&t, y, other), EP_DROP_NONE);
	/* Each message costs EP_MSG_COST beyond its payload: empty ones too. */
	unsigned n = 0;
	struct rb_msg *e0;
	while (eptab_admit(&t, z, (e0 = msg(&link_a, 0))) == EP_DROP_NONE) {
		eptab_enqueue(&t, z, e0, 0);
		n++;
	}
	ck_assert_uint_eq(n, (100000 - 70000 - EP_MSG_COST) / EP_MSG_COST);
	/* A process opens x: its queue no longer counts, and it takes all. */
	eptab_attach(&t, x, (struct client *)&n, 0);
	ck_assert_uint_eq(eptab_pool_of(&t, &link_a)->used, n * EP_MSG_COST);
	ck_assert_int_eq(eptab_admit(&t, x, small), EP_DROP_NONE);
	/* It leaves: its queue counts again. */
	eptab_attach(&t, x, NULL, 0);
	ck_assert_uint_eq(eptab_pool_of(&t, &link_a)->used, n * EP_MSG_COST + 70000 + EP_MSG_COST);
	ck_assert_ptr_eq(eptab_dequeue(&t, x), big);
	ck_assert_uint_eq(eptab_pool_of(&t, &link_a)->used, n * EP_MSG_COST);
	rb_msg_free(big);
	rb_msg_free(small);
	rb_msg_free(big2);
	rb_msg_free(other);
	rb_msg_free(e0);
	eptab_free(&t);
}
END_TEST

struct dropped {
	int n;
	enum ep_drop why;
	char last[WIRE_ENDPOINT_MAX + 1];
};

static void on_drop(void *arg, struct endpoint *e, struct rb_msg *m, enum ep_drop why)
{
	struct dropped *d = arg;

	d->n++;
	d->why = why;
	snprintf(d->last, sizeof(d->last), "%s", e->name);
	rb_msg_free(m);
}

/* Held messages expire after the ttl, oldest first; a name that was
 * opened keeps its owner for the linger time, then is forgotten. */
START_TEST(t_ttl_and_linger)
{
	struct eptab t;
	struct dropped d = { 0 };
	struct endpoint *x, *y;

	ck_assert_int_eq(eptab_init(&t, 10 * S, 30 * S), 0);
	ck_assert_int_eq(eptab_pool(&t, &link_a, 1 << 20), 0);
	x = eptab_get(&t, "c/x", 0);
	eptab_enqueue(&t, x, msg(&link_a, 5), 0);
	eptab_enqueue(&t, x, msg(&link_a, 5), 4 * S);
	ck_assert_uint_eq(eptab_expire(&t, 9 * S, on_drop, &d), 0);
	ck_assert_uint_eq(eptab_expire(&t, 10 * S, on_drop, &d), 1);
	ck_assert_int_eq(d.why, EP_DROP_EXPIRED);
	ck_assert_str_eq(d.last, "c/x");
	ck_assert_uint_eq(x->queued, 1);
	ck_assert_uint_eq(eptab_expire(&t, 14 * S, on_drop, &d), 1);
	/* Never opened, now empty: forgotten at once. */
	ck_assert_ptr_null(eptab_find(&t, "c/x"));
	ck_assert_uint_eq(eptab_pool_of(&t, &link_a)->used, 0);

	/* An open name's messages never expire. */
	y = eptab_get(&t, "c/y", 20 * S);
	eptab_attach(&t, y, (struct client *)&d, 20 * S);
	y->owner = 1000;
	y->owned = 1;
	eptab_enqueue(&t, y, msg(&link_a, 5), 20 * S);
	ck_assert_uint_eq(eptab_expire(&t, 100 * S, on_drop, &d), 0);
	rb_msg_free(eptab_dequeue(&t, y));
	/* Closed at 100 s: kept for its owner until 130 s. */
	eptab_attach(&t, y, NULL, 100 * S);
	eptab_maybe_forget(&t, y, 100 * S);
	eptab_expire(&t, 129 * S, on_drop, &d);
	ck_assert_ptr_eq(eptab_find(&t, "c/y"), y);
	ck_assert_uint_eq(y->owner, 1000);
	eptab_expire(&t, 130 * S, on_drop, &d);
	ck_assert_ptr_null(eptab_find(&t, "c/y"));
	ck_assert_int_eq(d.n, 2);
	eptab_free(&t);
}
END_TEST

struct ranges {
	uint64_t r[16][2];
	unsigned reason[16];
	int n;
};

static void on_range(void *arg, uint64_t first, uint64_t last, unsigned reason)
{
	struct ranges *x = arg;

	x->r[x->n][0] = first;
	x->r[x->n][1] = last;
	x->reason[x->n++] = reason;
}

static void on_settle(void *arg, uint64_t first, uint64_t last)
{
	on_range(arg, first, last, 0);
}

/* Drops become reports; a report's numbers are settled only once the
 * peer has it; reports decode to what was dropped. */
START_TEST(t_lostrep_round_trip)
{
	struct lostrep lr = { 0 };
	struct ranges got = { 0 }, settled = { 0 };
	static uint8_t buf[LOSTREP_MAX_LEN];
	uint64_t id = 0;
	size_t n;

	ck_assert_int_eq(lostrep_pending(&lr), 0);
	ck_assert_uint_eq(lostrep_encode(&lr, buf, &id), 0);
	ck_assert_int_eq(lostrep_add(&lr, 0, EP_DROP_EXPIRED), 0);
	ck_assert_int_eq(lostrep_add(&lr, 1, EP_DROP_EXPIRED), 0);
	ck_assert_int_eq(lostrep_add(&lr, 7, EP_DROP_EXPIRED), 0);
	ck_assert_int_eq(lostrep_add(&lr, 3, EP_DROP_POOL), 0);
	ck_assert_int_eq(lostrep_add(&lr, 3, EP_DROP_NONE), -EINVAL);
	n = lostrep_encode(&lr, buf, &id);
	ck_assert_uint_eq(n, 4 + 16);
	ck_assert_int_eq(lostrep_decode(buf, n, on_range, &got), 0);
	ck_assert_int_eq(got.n, 1);
	ck_assert_uint_eq(got.r[0][0], 3);
	ck_assert_uint_eq(got.reason[0], EP_DROP_POOL);
	/* Not sent (no room): the same report again. */
	ck_assert_uint_eq(lostrep_encode(&lr, buf, &id), n);
	lostrep_sent(&lr, id);
	ck_assert_uint_eq(id, 1);
	n = lostrep_encode(&lr, buf, &id);
	ck_assert_uint_eq(n, 4 + 2 * 16);
	ck_assert_int_eq(lostrep_decode(buf, n, on_range, &got), 0);
	ck_assert_int_eq(got.n, 3);
	ck_assert_uint_eq(got.r[1][0], 0);
	ck_assert_uint_eq(got.r[1][1], 1);
	ck_assert_uint_eq(got.r[2][0], 7);
	ck_assert_uint_eq(got.reason[2], EP_DROP_EXPIRED);
	lostrep_sent(&lr, id);
	ck_assert_int_eq(lostrep_pending(&lr), 0);
	/* The peer has report 2, then report 1. */
	lostrep_confirmed(&lr, 2, on_settle, &settled);
	ck_assert_int_eq(settled.n, 2);
	lostrep_confirmed(&lr, 1, on_settle, &settled);
	lostrep_confirmed(&lr, 1, on_settle, &settled);
	ck_assert_int_eq(settled.n, 3);
	ck_assert_uint_eq(settled.r[2][0], 3);
	ck_assert_ptr_null(lr.sent);
	lostrep_free(&lr);
}
END_TEST

START_TEST(t_lostrep_decode_rejects)
{
	static const uint8_t ok[] = { 1, 3, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 6 };
	uint8_t b[sizeof(ok) + 16];
	struct ranges got = { 0 };

	ck_assert_int_eq(lostrep_decode(ok, sizeof(ok), on_range, &got), 0);
	ck_assert_int_eq(got.n, 1);
	memcpy(b, ok, sizeof(ok));
	b[0] = 2;   /* version */
	ck_assert_int_eq(lostrep_decode(b, sizeof(ok), on_range, &got), -EBADMSG);
	memcpy(b, ok, sizeof(ok));
	b[1] = 0;   /* reason */
	ck_assert_int_eq(lostrep_decode(b, sizeof(ok), on_range, &got), -EBADMSG);
	ck_assert_int_eq(lostrep_decode(ok, sizeof(ok) - 1, on_range, &got), -EBADMSG);
	memcpy(b, ok, sizeof(ok));
	b[11] = 7;  /* first > last */
	ck_assert_int_eq(lostrep_decode(b, sizeof(ok), on_range, &got), -EBADMSG);
	/* Two ranges not ascending. */
	memcpy(b, ok, sizeof(ok));
	b[3] = 2;
	memcpy(b + 20, ok + 4, 16);
	ck_assert_int_eq(lostrep_decode(b, sizeof(b), on_range, &got), -EBADMSG);
	ck_assert_int_eq(got.n, 1);
}
END_TEST

Suite *make_endpoint_suite(void)
{
	Suite *s = suite_create("endpoint");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, t_many_names_found_and_forgotten);
	tcase_add_test(tc, t_share_and_pool);
	tcase_add_test(tc, t_ttl_and_linger);
	tcase_add_test(tc, t_lostrep_round_trip);
	tcase_add_test(tc, t_lostrep_decode_rejects);
	suite_add_tcase(s, tc);
	return s;
}
