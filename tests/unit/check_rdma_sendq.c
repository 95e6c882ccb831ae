/*
 * check_rdma_sendq.c - what an RDMA conn posted and has not seen complete
 * (transports/rdma/rdx_sendq.c): which sends are signalled (every Nth, the
 * last before the queue is full, every one that ends a core message); a
 * signalled completion retires the unsignalled sends before it; a message
 * is reported sent when its last send completes well, in order; after a
 * queue pair error nothing more is, and what was posted is handed back
 * (its send slots to the pool, its messages to the core through closed,
 * for resending on another conn).
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
		ck_assert_uint_eq(rdx_sendq_push(q, (uint32_t)slot, ctx[i], rdx_sendq_signal(q, ctx[i])), i);
	}
}

static void give(void *pool, uint32_t slot)
{
	ck_assert_int_eq(rdx_pool_give(pool, slot), 0);
}

/* Completes wr_id and retires what it covers, slots back to p; returns
 * the last message reported sent (NULL: none) and adds the count to *n. */
static void *complete_n(struct rdx_sendq *q, struct rdx_pool *p, uint64_t wr_id, int ok, unsigned *n)
{
	struct rdx_sendq_done d;
	void *last = NULL;

	ck_assert_int_eq(rdx_sendq_complete(q, wr_id, ok), 0);
	while (rdx_sendq_pop(q, &d) == 1) {
		if (d.slot != RDX_NO_SLOT)
			give(p, d.slot);
		if (d.ctx) {
			last = d.ctx;
			++*n;
		}
	}
	return last;
}

static void *complete(struct rdx_sendq *q, struct rdx_pool *p, uint64_t wr_id, int ok)
{
	unsigned n = 0;
	void *last = complete_n(q, p, wr_id, ok, &n);

	ck_assert_uint_le(n, 1);
	return last;
}

/* All well, each completing alone: msg1 after its second chunk, msg2,
 * msg3 after its third. */
START_TEST(test_in_order)
{
	struct rdx_sendq q;
	struct rdx_pool p;
	void *want[] = { NULL, &m1, &m2, NULL, NULL, NULL, &m3 };

	ck_assert_int_eq(rdx_pool_init(&p, 8, 128), 0);
	ck_assert_int_eq(rdx_sendq_init(&q, 7, 7), 0);
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
	struct rdx_pool p;

	ck_assert_int_eq(rdx_pool_init(&p, 8, 128), 0);
	ck_assert_int_eq(rdx_sendq_init(&q, 8, 8), 0);
	post_all(&q, &p);
	ck_assert_ptr_null(complete(&q, &p, 0, 1));
	ck_assert_ptr_eq(complete(&q, &p, 1, 1), &m1);
	/* Completions come in posting order: one already retired, or never
	 * posted, is refused. */
	ck_assert_int_eq(rdx_sendq_complete(&q, 1, 1), -EPROTO);
	ck_assert_int_eq(rdx_sendq_complete(&q, 7, 1), -EPROTO);
	ck_assert_uint_eq(rdx_sendq_outstanding(&q), 5);
	ck_assert_ptr_eq(complete(&q, &p, 2, 1), &m2);
	ck_assert_ptr_null(complete(&q, &p, 3, 1));
	ck_assert_ptr_null(complete(&q, &p, 4, 0));   /* the error */
	ck_assert_ptr_null(complete(&q, &p, 5, 1));   /* even a success after it reports nothing */
	ck_assert_uint_eq(rdx_sendq_outstanding(&q), 1);
	ck_assert_uint_eq(rdx_sendq_flush(&q, give, &p), 1);
	ck_assert_uint_eq(rdx_sendq_outstanding(&q), 0);
	ck_assert_uint_eq(p.nfree, 8);
	ck_assert_int_eq(rdx_sendq_complete(&q, 6, 1), -EPROTO);
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
	ck_assert_int_eq(rdx_sendq_init(&q, 7, 2), 0);
	post_all(&q, &p);
	ck_assert_uint_eq(p.nfree, 0);
	ck_assert_uint_eq(rdx_sendq_flush(&q, give, &p), 3);
	ck_assert_uint_eq(p.nfree, 7);
	ck_assert(!rdx_sendq_full(&q));
	ck_assert_uint_eq(rdx_sendq_push(&q, 0, &m1, 1), 7);
	rdx_sendq_fini(&q);
	rdx_pool_fini(&p);
}
END_TEST

/* Which sends are signalled: every fourth in a run without messages, the
 * one ending a message always, the last before the queue is full. */
START_TEST(test_signal_rule)
{
	struct rdx_sendq q;
	/* chunk, chunk, chunk, chunk, m1's last, credit, chunk, chunk (fills 8) */
	void *ctx[] = { NULL, NULL, NULL, NULL, &m1, NULL, NULL, NULL };
	int want[] = { 0, 0, 0, 1, 1, 0, 0, 1 };

	ck_assert_int_eq(rdx_sendq_init(&q, 8, 4), 0);
	for (unsigned i = 0; i < 8; i++) {
		int sig = rdx_sendq_signal(&q, ctx[i]);

		ck_assert_msg(sig == want[i], "send %u: signalled %d", i, sig);
		rdx_sendq_push(&q, i, ctx[i], sig);
	}
	ck_assert(rdx_sendq_full(&q));
	ck_assert_int_eq(rdx_sendq_init(&q, 4, 5), -EINVAL);
	ck_assert_int_eq(rdx_sendq_init(&q, 4, 0), -EINVAL);
	rdx_sendq_fini(&q);
}
END_TEST

/* One signalled completion retires the unsignalled sends before it:
 * their slots come back (a write, with none, gives none), and the
 * messages among them are reported in order. */
START_TEST(test_batch)
{
	struct rdx_sendq q;
	struct rdx_sendq_done d;
	struct rdx_pool p;
	void *got[3];
	unsigned n = 0;

	ck_assert_int_eq(rdx_pool_init(&p, 8, 128), 0);
	ck_assert_int_eq(rdx_sendq_init(&q, 8, 8), 0);
	rdx_sendq_push(&q, (uint32_t)rdx_pool_take(&p), NULL, 0);
	rdx_sendq_push(&q, (uint32_t)rdx_pool_take(&p), &m1, 0);
	rdx_sendq_push(&q, RDX_NO_SLOT, &m2, 0);              /* an RDMA write */
	rdx_sendq_push(&q, (uint32_t)rdx_pool_take(&p), NULL, 0);
	rdx_sendq_push(&q, (uint32_t)rdx_pool_take(&p), &m3, 1);
	ck_assert_uint_eq(p.nfree, 4);
	ck_assert_int_eq(rdx_sendq_pop(&q, &d), 0);           /* nothing complete yet */
	ck_assert_int_eq(rdx_sendq_complete(&q, 4, 1), 0);
	while (rdx_sendq_pop(&q, &d) == 1) {
		if (d.slot != RDX_NO_SLOT)
			give(&p, d.slot);
		if (d.ctx) {
			ck_assert_uint_lt(n, 3);
			got[n++] = d.ctx;
		}
	}
	ck_assert_uint_eq(n, 3);
	ck_assert(got[0] == &m1 && got[1] == &m2 && got[2] == &m3);
	ck_assert_uint_eq(p.nfree, 8);
	ck_assert_uint_eq(rdx_sendq_outstanding(&q), 0);
	/* Closed with a write and a send outstanding: the send's slot comes
	 * back, the write has none to give; both messages are handed back. */
	rdx_sendq_push(&q, RDX_NO_SLOT, &m1, 1);
	rdx_sendq_push(&q, (uint32_t)rdx_pool_take(&p), &m2, 1);
	ck_assert_uint_eq(rdx_sendq_flush(&q, give, &p), 2);
	ck_assert_uint_eq(p.nfree, 8);
	rdx_sendq_fini(&q);
	rdx_pool_fini(&p);
}
END_TEST

#define SIM_MSGS 3000
#define SIM_CAP 16

struct sim {
	struct rdx_sendq q;
	struct rdx_pool p;
	void *msg_of[SIM_MSGS * 6];   /* per wr_id: the message it ends, or NULL */
	int sig_of[SIM_MSGS * 6];     /* per wr_id: signalled */
	void *msgs[SIM_MSGS];         /* the messages, by address */
	uint64_t popped;              /* entries retired so far */
	unsigned reported, back;      /* messages reported sent, handed back */
	int failed;                   /* a completion failed */
};

/* Retires what the completion covered: slots back; messages reported in
 * posting order, each once, none from the first failed completion on;
 * those handed back. */
static void sim_pop(struct sim *s, int ok)
{
	struct rdx_sendq_done d;

	s->failed |= !ok;
	while (rdx_sendq_pop(&s->q, &d) == 1) {
		void *msg = s->msg_of[s->popped++];

		if (d.slot != RDX_NO_SLOT)
			give(&s->p, d.slot);
		if (d.ctx) {
			ck_assert_msg(!s->failed, "a message reported sent after the error");
			ck_assert_ptr_eq(d.ctx, msg);
			ck_assert_ptr_eq(d.ctx, &s->msgs[s->reported]);
			s->reported++;
		} else if (msg) {
			s->back++;
		}
	}
}

/* A sender posting messages of 1..5 sends (some writes, with no slot,
 * and credit-only messages between) under selective signalling, and an
 * adapter that completes the signalled sends in order and, once message
 * `fail_at` is posted, fails the next send and flushes part of the rest
 * (unsignalled ones too, as a queue pair in error does); then the queue
 * pair is destroyed.  Checks: no stall (the queue never fills without a
 * signalled send in it), messages reported in posting order, at most
 * once, none after the error; reported + handed back = posted; every
 * slot back in the pool. */
static void simulate(unsigned fail_at, unsigned seed)
{
	static struct sim s;
	unsigned posted = 0, chunks_left = 0;
	uint64_t wr = 0, cq = 0;   /* wr_ids posted; the next one the adapter completes */
	long steps = 0;

	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(rdx_pool_init(&s.p, SIM_CAP, 64), 0);
	ck_assert_int_eq(rdx_sendq_init(&s.q, SIM_CAP, SIM_CAP / 4), 0);
	for (;;) {
		int failing = posted >= fail_at;

		ck_assert_msg(++steps < 1000000, "stall: posted %u, %u outstanding", posted,
			      rdx_sendq_outstanding(&s.q));
		if (rand_r(&seed) % 2 && !rdx_sendq_full(&s.q) && (posted < SIM_MSGS || chunks_left > 0)) {
			void *ctx = NULL;
			uint32_t slot = RDX_NO_SLOT;
			int credit = chunks_left == 0 && rand_r(&seed) % 8 == 0;

			if (!credit && chunks_left == 0)
				chunks_left = 1 + rand_r(&seed) % 5;
			if (credit || rand_r(&seed) % 4) {
				if (s.p.nfree == 0)
					continue;
				slot = (uint32_t)rdx_pool_take(&s.p);
			}
			if (!credit && --chunks_left == 0)
				ctx = &s.msgs[posted++];
			s.msg_of[wr] = ctx;
			s.sig_of[wr] = rdx_sendq_signal(&s.q, ctx);
			ck_assert_uint_eq(rdx_sendq_push(&s.q, slot, ctx, s.sig_of[wr]), wr);
			wr++;
			continue;
		}
		/* The adapter: unsignalled sends give no completion, unless
		 * the queue pair is in error. */
		while (cq < wr && !s.sig_of[cq] && !failing)
			cq++;
		if (cq == wr) {
			if (posted == SIM_MSGS && chunks_left == 0)
				break;
			continue;
		}
		ck_assert_int_eq(rdx_sendq_complete(&s.q, cq++, !failing), 0);
		sim_pop(&s, !failing);
		if (failing) {
			while (cq < wr && rand_r(&seed) % 2) {
				int ok = rand_r(&seed) % 2;   /* flushed, or a success after the error */

				ck_assert_int_eq(rdx_sendq_complete(&s.q, cq++, ok), 0);
				sim_pop(&s, ok);
			}
			break;
		}
	}
	s.back += rdx_sendq_flush(&s.q, give, &s.p);
	ck_assert_uint_eq(s.p.nfree, SIM_CAP);
	ck_assert_uint_eq(rdx_sendq_outstanding(&s.q), 0);
	ck_assert_uint_eq(s.reported + s.back, posted);
	if (fail_at > SIM_MSGS)
		ck_assert_uint_eq(s.reported, SIM_MSGS);
	else
		ck_assert_uint_le(s.reported, fail_at);
	rdx_sendq_fini(&s.q);
	rdx_pool_fini(&s.p);
}

START_TEST(test_simulated_stream)
{
	simulate(SIM_MSGS + 1, 1);   /* no error */
	simulate(SIM_MSGS, 2);
	simulate(10, 3);             /* an error early, */
	simulate(SIM_MSGS / 2, 4);   /* in the middle, */
	simulate(SIM_MSGS - 1, 5);   /* at the end */
}
END_TEST

Suite *make_rdma_sendq_suite(void)
{
	Suite *s = suite_create("rdma_sendq");
	TCase *tc = tcase_create("sendq");

	tcase_add_test(tc, test_in_order);
	tcase_add_test(tc, test_error);
	tcase_add_test(tc, test_close_all_outstanding);
	tcase_add_test(tc, test_signal_rule);
	tcase_add_test(tc, test_batch);
	tcase_add_test(tc, test_simulated_stream);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
