/*
 * check_rdma_sendq.c - what an RDMA conn posted and has not seen complete
 * (transports/rdma/rdx_sendq.c): a message is reported sent when its
 * last chunk completes well, in order; after a queue pair error nothing
 * more is, and what was posted is handed back (its send slots to the
 * pool, its messages to the core through closed, for resending on
 * another conn).
 */
#include <check.h>
#include <errno.h>

#include "suites.h"
#include "transports/rdma/rdx_pool.h"
#include "transports/rdma/rdx_sendq.h"

static char m1, m2, m3;   /* the core's messages, by address */

/* msg1 in 2 chunks, msg2 in 1, a credit-only message, msg3 in 3. */
static void post_all(struct rdx_sendq *q, struct rdx_pool *p)
{
	void *ctx[] = { NULL, &m1, &m2, NULL, NULL, NULL, &m3 };

	for (unsigned i = 0; i < sizeof(ctx) / sizeof(ctx[0]); i++) {
		int64_t slot = rdx_pool_take(p);

		ck_assert_int_ge(slot, 0);
		ck_assert(!rdx_sendq_full(q));
		ck_assert_uint_eq(rdx_sendq_push(q, (uint32_t)slot, ctx[i]), i);
	}
}

static void give(void *pool, uint32_t slot)
{
	ck_assert_int_eq(rdx_pool_give(pool, slot), 0);
}

/* Completes wr_id; returns the message reported sent (NULL: none). */
static void *complete(struct rdx_sendq *q, struct rdx_pool *p, uint64_t wr_id, int ok)
{
	struct rdx_sendq_done d;

	ck_assert_int_eq(rdx_sendq_complete(q, wr_id, ok, &d), 0);
	give(p, d.slot);
	return d.ctx;
}

/* All well: msg1 after its second chunk, msg2, msg3 after its third. */
START_TEST(test_in_order)
{
	struct rdx_sendq q;
	struct rdx_pool p;
	void *want[] = { NULL, &m1, &m2, NULL, NULL, NULL, &m3 };

	ck_assert_int_eq(rdx_pool_init(&p, 8, 128), 0);
	ck_assert_int_eq(rdx_sendq_init(&q, 7), 0);
	post_all(&q, &p);
	ck_assert(rdx_sendq_full(&q));
	for (uint64_t i = 0; i < 7; i++)
		ck_assert_ptr_eq(complete(&q, &p, i, 1), want[i]);
	ck_assert_uint_eq(rdx_sendq_outstanding(&q), 0);
	ck_assert_uint_eq(p.nfree, 8);
	rdx_sendq_fini(&q);
	rdx_pool_fini(&p);
}
END_TEST

/* The queue pair fails on msg3's first chunk: msg1 and msg2 were sent and
 * reported; msg3's later chunks come back flushed, unreported; the one
 * still outstanding when the queue pair is destroyed is handed back by
 * the flush, counted as a message the core gets back.  Every slot is in
 * the pool again. */
START_TEST(test_error)
{
	struct rdx_sendq q;
	struct rdx_sendq_done d;
	struct rdx_pool p;

	ck_assert_int_eq(rdx_pool_init(&p, 8, 128), 0);
	ck_assert_int_eq(rdx_sendq_init(&q, 8), 0);
	post_all(&q, &p);
	ck_assert_ptr_null(complete(&q, &p, 0, 1));
	ck_assert_ptr_eq(complete(&q, &p, 1, 1), &m1);
	/* Completions come in posting order: another wr_id is refused. */
	ck_assert_int_eq(rdx_sendq_complete(&q, 3, 1, &d), -EPROTO);
	ck_assert_uint_eq(rdx_sendq_outstanding(&q), 5);
	ck_assert_ptr_eq(complete(&q, &p, 2, 1), &m2);
	ck_assert_ptr_null(complete(&q, &p, 3, 1));
	ck_assert_ptr_null(complete(&q, &p, 4, 0));   /* the error */
	ck_assert_ptr_null(complete(&q, &p, 5, 1));   /* even a success after it reports nothing */
	ck_assert_uint_eq(rdx_sendq_outstanding(&q), 1);
	ck_assert_uint_eq(rdx_sendq_flush(&q, give, &p), 1);
	ck_assert_uint_eq(rdx_sendq_outstanding(&q), 0);
	ck_assert_uint_eq(p.nfree, 8);
	ck_assert_int_eq(rdx_sendq_complete(&q, 6, 1, &d), -EPROTO);
	rdx_sendq_fini(&q);
	rdx_pool_fini(&p);
}
END_TEST

/* Closed with nothing completed: the three messages come back, none was
 * reported sent; then the queue is reusable with sequence going on. */
START_TEST(test_close_all_outstanding)
{
	struct rdx_sendq q;
	struct rdx_pool p;

	ck_assert_int_eq(rdx_pool_init(&p, 7, 128), 0);
	ck_assert_int_eq(rdx_sendq_init(&q, 7), 0);
	post_all(&q, &p);
	ck_assert_uint_eq(p.nfree, 0);
	ck_assert_uint_eq(rdx_sendq_flush(&q, give, &p), 3);
	ck_assert_uint_eq(p.nfree, 7);
	ck_assert(!rdx_sendq_full(&q));
	ck_assert_uint_eq(rdx_sendq_push(&q, 0, &m1), 7);
	rdx_sendq_fini(&q);
	rdx_pool_fini(&p);
}
END_TEST

Suite *make_rdma_sendq_suite(void)
{
	Suite *s = suite_create("rdma_sendq");
	TCase *tc = tcase_create("sendq");

	tcase_add_test(tc, test_in_order);
	tcase_add_test(tc, test_error);
	tcase_add_test(tc, test_close_all_outstanding);
	suite_add_tcase(s, tc);
	return s;
}
