/*
 * check_rdma_credit.c - the RDMA transport's credit-based flow control
 * (transports/rdma/rdx_credit.c): credits granted and spent, piggybacked
 * grants, the reserve kept for a credit-only message, lies refused,
 * wrap-around of the 16-bit counts, and two simulated peers exchanging
 * data under random reading that never send without a credit, never
 * deadlock and never answer credit-only messages with each other forever.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "transports/rdma/rdx_credit.h"

/* A sender spends its peer's depth down to the reserve; a credit-only
 * message may take the reserve; then nothing. */
START_TEST(test_spend)
{
	struct rdx_credit c;
	uint16_t st;

	rdx_credit_init(&c, 8, 4);
	ck_assert_uint_eq(rdx_credit_avail(&c), 4);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(rdx_credit_take(&c, 1, &st), 0);
	ck_assert_uint_eq(rdx_credit_avail(&c), 1);
	ck_assert_int_eq(rdx_credit_take(&c, 1, &st), -EAGAIN);   /* the reserve */
	ck_assert_uint_eq(rdx_credit_avail(&c), 1);
	ck_assert_int_eq(rdx_credit_take(&c, 0, &st), 0);
	ck_assert_int_eq(rdx_credit_take(&c, 0, &st), -EAGAIN);
	ck_assert_uint_eq(rdx_credit_avail(&c), 0);
	/* The peer grants 2 more (its count: 4 at the start, now 6). */
	ck_assert_int_eq(rdx_credit_heard(&c, 6), 0);
	ck_assert_uint_eq(rdx_credit_avail(&c), 2);
	/* A stale grant (an older count) changes nothing and is no lie. */
	ck_assert_int_eq(rdx_credit_heard(&c, 6), 0);
	ck_assert_uint_eq(rdx_credit_avail(&c), 2);
}
END_TEST

/* Grants ride on every message: each stamp is the receiver's count of
 * buffers released so far, and a credit-only message is due only once
 * `threshold` grants wait and a credit is there for it. */
START_TEST(test_piggyback)
{
	struct rdx_credit c;
	uint16_t st;

	rdx_credit_init(&c, 16, 16);
	ck_assert_uint_eq(c.threshold, 4);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(rdx_credit_arrived(&c), 0);
	ck_assert_int_eq(rdx_credit_release(&c, 3), 0);
	ck_assert_uint_eq(rdx_credit_untold(&c), 3);
	ck_assert(!rdx_credit_update_due(&c));
	ck_assert_int_eq(rdx_credit_take(&c, 1, &st), 0);
	ck_assert_uint_eq(st, 16 + 3);   /* depth plus the 3 released */
	ck_assert_uint_eq(rdx_credit_untold(&c), 0);
	ck_assert_int_eq(rdx_credit_release(&c, 2), 0);
	ck_assert_int_eq(rdx_credit_release(&c, 1), -EINVAL);   /* only 5 arrived */
	ck_assert(!rdx_credit_update_due(&c));
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(rdx_credit_arrived(&c), 0);
	ck_assert_int_eq(rdx_credit_release(&c, 2), 0);
	ck_assert(rdx_credit_update_due(&c));
	ck_assert_int_eq(rdx_credit_take(&c, 0, &st), 0);
	ck_assert_uint_eq(st, 16 + 7);
	ck_assert(!rdx_credit_update_due(&c));
}
END_TEST

/* A lying peer: sending with no credit, granting more buffers than it
 * has, or a grant that goes back. */
START_TEST(test_lies)
{
	struct rdx_credit c;

	rdx_credit_init(&c, 4, 4);
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(rdx_credit_arrived(&c), 0);
	ck_assert_int_eq(rdx_credit_arrived(&c), -EPROTO);   /* a fifth message into four buffers */
	ck_assert_int_eq(rdx_credit_heard(&c, 5), -EPROTO);  /* 5 credits from a depth of 4 */
	ck_assert_int_eq(rdx_credit_heard(&c, 3), -EPROTO);  /* back from 4 */
	ck_assert_uint_eq(rdx_credit_avail(&c), 4);           /* nothing changed */
	ck_assert_int_eq(rdx_credit_heard(&c, 4), 0);
}
END_TEST

/* The counts wrap at 2^16 with nothing lost: 70000 messages each way (past 2^16),
 * one at a time, credits exact throughout. */
START_TEST(test_wrap)
{
	struct rdx_credit a, b;
	uint16_t st;

	rdx_credit_init(&a, 8, 8);
	rdx_credit_init(&b, 8, 8);
	for (int i = 0; i < 70000; i++) {
		ck_assert_int_eq(rdx_credit_take(&a, 1, &st), 0);
		ck_assert_int_eq(rdx_credit_heard(&b, st), 0);
		ck_assert_int_eq(rdx_credit_arrived(&b), 0);
		ck_assert_int_eq(rdx_credit_release(&b, 1), 0);
		ck_assert_int_eq(rdx_credit_take(&b, 1, &st), 0);
		ck_assert_int_eq(rdx_credit_heard(&a, st), 0);
		ck_assert_int_eq(rdx_credit_arrived(&a), 0);
		ck_assert_int_eq(rdx_credit_release(&a, 1), 0);
		ck_assert_uint_eq(rdx_credit_avail(&a), 8);
		ck_assert_uint_eq(rdx_credit_avail(&b), 7);
	}
	ck_assert_uint_ne(a.used, 70000);   /* it did wrap */
}
END_TEST

/* Two simulated peers on an ordered channel each way.  Each sends data
 * when its credits allow (never otherwise: the receiver's arrived() would
 * say -EPROTO), a credit-only message when one is due; each receiver's
 * core holds up to `hold` messages and releases them at random.  All data
 * arrives (no deadlock), and once it has, the peers fall quiet (no
 * credit-only ping-pong). */
#define SIM_DATA 5000
#define SIM_Q 64

struct sim_peer {
	struct rdx_credit cr;
	unsigned to_send;       /* data messages left to send */
	unsigned got;           /* data messages received */
	unsigned held;          /* received, not yet released by the core */
	unsigned credit_msgs;   /* credit-only messages sent */
	struct { uint16_t stamp; int data; } q[SIM_Q];   /* in flight to the other */
	unsigned qh, qn;
};

static void sim_send(struct sim_peer *p)
{
	uint16_t st;
	int data = p->to_send > 0 && rdx_credit_take(&p->cr, 1, &st) == 0;

	if (!data) {
		if (!rdx_credit_update_due(&p->cr))
			return;
		ck_assert_int_eq(rdx_credit_take(&p->cr, 0, &st), 0);
	}
	ck_assert_uint_lt(p->qn, SIM_Q);
	p->q[(p->qh + p->qn++) % SIM_Q].stamp = st;
	p->q[(p->qh + p->qn - 1) % SIM_Q].data = data;
	p->to_send -= (unsigned)data;
	p->credit_msgs += (unsigned)!data;
}

static void sim_deliver(struct sim_peer *from, struct sim_peer *to)
{
	int data;

	if (from->qn == 0)
		return;
	data = from->q[from->qh].data;
	ck_assert_int_eq(rdx_credit_arrived(&to->cr), 0);
	ck_assert_int_eq(rdx_credit_heard(&to->cr, from->q[from->qh].stamp), 0);
	from->qh = (from->qh + 1) % SIM_Q;
	from->qn--;
	if (data) {
		to->got++;
		to->held++;
	} else {
		ck_assert_int_eq(rdx_credit_release(&to->cr, 1), 0);
	}
}

static void sim_release(struct sim_peer *p, unsigned n)
{
	n = n < p->held ? n : p->held;
	ck_assert_int_eq(rdx_credit_release(&p->cr, n), 0);
	p->held -= n;
}

static void simulate(uint16_t depth_a, uint16_t depth_b, unsigned hold, unsigned seed)
{
	static struct sim_peer a, b;
	long steps = 0;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	rdx_credit_init(&a.cr, depth_a, depth_b);
	rdx_credit_init(&b.cr, depth_b, depth_a);
	a.to_send = SIM_DATA;
	b.to_send = SIM_DATA / 3;
	while (a.got < SIM_DATA / 3 || b.got < SIM_DATA) {
		ck_assert_msg(++steps < 10000000, "deadlock: a got %u, b got %u, credits a %u b %u", a.got, b.got,
			      rdx_credit_avail(&a.cr), rdx_credit_avail(&b.cr));
		switch (rand_r(&seed) % 6) {
		case 0: sim_send(&a); break;
		case 1: sim_send(&b); break;
		case 2: sim_deliver(&a, &b); break;
		case 3: sim_deliver(&b, &a); break;
		case 4: if (a.held >= hold || rand_r(&seed) % 4 == 0) sim_release(&a, 1 + rand_r(&seed) % 3); break;
		default: if (b.held >= hold || rand_r(&seed) % 4 == 0) sim_release(&b, 1 + rand_r(&seed) % 3); break;
		}
	}
	/* Everything read: a few credit-only messages settle the counts,
	 * then the channel stays empty. */
	sim_release(&a, a.held);
	sim_release(&b, b.held);
	for (int i = 0; i < 100; i++) {
		sim_send(&a);
		sim_send(&b);
		sim_deliver(&a, &b);
		sim_deliver(&b, &a);
	}
	ck_assert_uint_eq(a.qn + b.qn, 0);
	{
		unsigned before = a.credit_msgs + b.credit_msgs;

		for (int i = 0; i < 100; i++) {
			sim_send(&a);
			sim_send(&b);
			sim_deliver(&a, &b);
			sim_deliver(&b, &a);
		}
		ck_assert_uint_eq(a.credit_msgs + b.credit_msgs, before);
	}
	/* Credit-only messages are a small share of the traffic. */
	ck_assert_uint_lt(a.credit_msgs + b.credit_msgs, SIM_DATA);
}

START_TEST(test_simulated_peers)
{
	simulate(4, 4, 4, 1);
	simulate(4, 64, 2, 2);
	simulate(32, 8, 30, 3);
	simulate(16, 16, 1, 4);
	simulate(256, 256, 200, 5);
}
END_TEST

Suite *make_rdma_credit_suite(void)
{
	Suite *s = suite_create("rdma_credit");
	TCase *tc = tcase_create("credit");

	tcase_add_test(tc, test_spend);
	tcase_add_test(tc, test_piggyback);
	tcase_add_test(tc, test_lies);
	tcase_add_test(tc, test_wrap);
	tcase_add_test(tc, test_simulated_peers);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
