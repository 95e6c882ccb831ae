/*
 * check_rdma_recvq.c - what an RDMA conn received and has not handed to
 * the core (transports/rdma/rdx_recvq.c): messages come out in arrival
 * order, whole; a one-chunk message keeps its buffer until the core is
 * done, credit-only messages and copied chunks give theirs back at once;
 * chunk credits are owed while a reassembled message waits for the core;
 * a peer sending without credit or out of order ends the conn.  Frames
 * written into our ring come out in place, in order with the others; their
 * buffers and credits go back at once, their ring space when the core is
 * done; a bad write or grant ends the conn.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "transports/rdma/rdx_proto.h"
#include "transports/rdma/rdx_recvq.h"

#define DEPTH 8
#define BUFSZ 64

static struct rdx_recvq q;
static struct rdx_credit mine, peer;   /* our accounting, and the sender's */
static uint8_t bufs[DEPTH][BUFSZ];

static void setup(void)
{
	ck_assert_int_eq(rdx_recvq_init(&q, DEPTH, 1000), 0);
	rdx_credit_init(&mine, DEPTH, DEPTH);
	rdx_credit_init(&peer, DEPTH, DEPTH);
}

static void teardown(void)
{
	rdx_recvq_fini(&q);
}

/* The peer sends into our buffer i: type, flags, payload of len bytes of
 * value v within a message of total bytes.  Returns what arrived says. */
static int arrive(uint32_t i, uint8_t type, uint8_t flags, size_t len, size_t total, uint8_t v, int *repost)
{
	struct rp_hdr h = { .type = type, .flags = flags, .len = (uint32_t)len, .total = (uint32_t)total };

	ck_assert_int_eq(rdx_credit_take(&peer, type == RP_DATA, &h.credits), 0);
	rp_hdr_encode(&h, bufs[i]);
	memset(bufs[i] + RP_HDR_LEN, v, len);
	return rdx_recvq_arrived(&q, &mine, i, bufs[i], RP_HDR_LEN + len, repost);
}

/* Peeks the head: len bytes, all v. */
static void head_is(size_t len, uint8_t v)
{
	const uint8_t *d;
	size_t n;

	ck_assert_int_eq(rdx_recvq_peek(&q, &d, &n), 0);
	ck_assert_uint_eq(n, len);
	for (size_t k = 0; k < n; k++)
		ck_assert_uint_eq(d[k], v);
}

/* One-chunk messages stay in their buffers, in order, until done; credit
 * messages go back at once; grants follow the core. */
START_TEST(test_in_buffers)
{
	int repost;
	int64_t buf;

	ck_assert_int_eq(arrive(3, RP_DATA, RP_F_FIRST | RP_F_LAST, 10, 10, 0xa1, &repost), 0);
	ck_assert_int_eq(repost, 0);
	ck_assert_int_eq(arrive(5, RP_CREDIT, 0, 0, 0, 0, &repost), 0);
	ck_assert_int_eq(repost, 1);
	ck_assert_uint_eq(rdx_credit_untold(&mine), 1);   /* the credit message's buffer only */
	ck_assert_int_eq(arrive(4, RP_DATA, RP_F_FIRST | RP_F_LAST, 20, 20, 0xb2, &repost), 0);
	head_is(10, 0xa1);
	ck_assert_ptr_eq(q.ring[q.head].data, bufs[3] + RP_HDR_LEN);   /* zero copy */
	ck_assert_int_eq(rdx_recvq_done(&q, &mine, &buf), 0);
	ck_assert_int_eq(buf, 3);
	ck_assert_uint_eq(rdx_credit_untold(&mine), 2);
	head_is(20, 0xb2);
	ck_assert_int_eq(rdx_recvq_done(&q, &mine, &buf), 0);
	ck_assert_int_eq(buf, 4);
	ck_assert_int_eq(rdx_recvq_done(&q, &mine, &buf), -EINVAL);   /* nothing out */
	ck_assert_int_eq(rdx_recvq_peek(&q, &(const uint8_t *){ NULL }, &(size_t){ 0 }), -EAGAIN);
	ck_assert_uint_eq(q.bytes, 30);
}
END_TEST

/* A message in three chunks is copied out, its buffers going back at
 * once, and comes out whole after a one-chunk message that came before. */
START_TEST(test_chunks)
{
	int repost;
	int64_t buf;

	ck_assert_int_eq(arrive(0, RP_DATA, RP_F_FIRST | RP_F_LAST, 5, 5, 1, &repost), 0);
	ck_assert_int_eq(arrive(1, RP_DATA, RP_F_FIRST, 40, 100, 2, &repost), 0);
	ck_assert_int_eq(repost, 1);
	ck_assert_int_eq(arrive(1, RP_DATA, 0, 40, 100, 2, &repost), 0);
	ck_assert_int_eq(repost, 1);
	ck_assert_int_eq(arrive(1, RP_DATA, RP_F_LAST, 20, 100, 2, &repost), 0);
	ck_assert_int_eq(repost, 1);
	ck_assert_uint_eq(rdx_credit_untold(&mine), 3);   /* granted as copied */
	head_is(5, 1);
	ck_assert_int_eq(rdx_recvq_done(&q, &mine, &buf), 0);
	head_is(100, 2);
	ck_assert_int_eq(rdx_recvq_done(&q, &mine, &buf), 0);
	ck_assert_int_eq(buf, -1);
	ck_assert_uint_eq(rdx_credit_untold(&mine), 4);
}
END_TEST

/* While a reassembled message waits for the core, the chunks of the next
 * are copied and their buffers posted, but their credits are owed: the
 * peer stops once its credits run out, until the core reads. */
START_TEST(test_owed)
{
	int repost;
	int64_t buf;

	ck_assert_int_eq(arrive(0, RP_DATA, RP_F_FIRST, 30, 60, 7, &repost), 0);
	ck_assert_int_eq(arrive(0, RP_DATA, RP_F_LAST, 30, 60, 7, &repost), 0);
	ck_assert_uint_eq(rdx_credit_untold(&mine), 2);
	for (int k = 0; k < 4; k++) {
		ck_assert_int_eq(arrive(0, RP_DATA, (uint8_t)(k == 0 ? RP_F_FIRST : 0), 30, 1000, 8, &repost), 0);
		ck_assert_int_eq(repost, 1);
	}
	ck_assert_uint_eq(rdx_credit_untold(&mine), 2);   /* nothing more granted */
	ck_assert_uint_eq(q.owed, 4);
	head_is(60, 7);
	ck_assert_int_eq(rdx_recvq_done(&q, &mine, &buf), 0);
	ck_assert_uint_eq(rdx_credit_untold(&mine), 6);   /* the owed ones with it */
	ck_assert_uint_eq(q.owed, 0);
}
END_TEST

/* A peer that sends beyond its credits, a bad header, or a chunk out of
 * place ends the conn. */
START_TEST(test_refusals)
{
	struct rp_hdr h = { .type = RP_DATA, .flags = RP_F_FIRST | RP_F_LAST, .len = 4, .total = 4,
			    .credits = DEPTH };
	int repost;

	for (int k = 0; k < DEPTH; k++) {
		rp_hdr_encode(&h, bufs[k]);
		ck_assert_int_eq(rdx_recvq_arrived(&q, &mine, (uint32_t)k, bufs[k], RP_HDR_LEN + 4, &repost), 0);
	}
	/* A ninth message into eight buffers, none given back. */
	ck_assert_int_eq(rdx_recvq_arrived(&q, &mine, 0, bufs[0], RP_HDR_LEN + 4, &repost), -EPROTO);
	teardown();
	setup();
	ck_assert_int_eq(rdx_recvq_arrived(&q, &mine, 0, bufs[0], RP_HDR_LEN + 3, &repost), -EPROTO);
	ck_assert_int_eq(arrive(1, RP_DATA, RP_F_LAST, 4, 10, 0, &repost), -EPROTO);   /* no first chunk */
	teardown();
	setup();
	ck_assert_int_eq(arrive(1, RP_DATA, RP_F_FIRST, 4, 10, 0, &repost), 0);
	ck_assert_int_eq(arrive(2, RP_DATA, RP_F_FIRST | RP_F_LAST, 4, 4, 0, &repost), -EPROTO);   /* inside one */
	ck_assert_int_eq(arrive(1, RP_DATA, RP_F_FIRST, 4, 2000, 0, &repost), -EPROTO);          /* over max_msg */
}
END_TEST

static uint8_t ring[RP_MIN_RING];

/* A ring of RP_MIN_RING bytes, attached to q; the peer's too. */
static void with_ring(struct rdx_wspace *ws)
{
	rdx_wspace_init(ws, ring, RP_MIN_RING, 2048);
	rdx_wspace_peer(ws, 0x1000, 5, RP_MIN_RING);
	ck_assert_int_eq(rdx_recvq_writes(&q, ws), 0);
}

/* The peer writes len bytes of value v at off. */
static int written(uint32_t off, size_t len, uint8_t v)
{
	uint16_t stamp;

	ck_assert_int_eq(rdx_credit_take(&peer, 1, &stamp), 0);
	memset(ring + off, v, len);
	return rdx_recvq_written(&q, &mine, rp_imm_encode(stamp, off), len);
}

/* A written frame comes out where it lies, after a message that came
 * before it; its buffer's credit is granted at once, its ring space once
 * the core is done with it. */
START_TEST(test_written)
{
	struct rdx_wspace ws;
	int repost;
	int64_t buf;
	const uint8_t *d;
	size_t n;

	with_ring(&ws);
	ck_assert_int_eq(arrive(2, RP_DATA, RP_F_FIRST | RP_F_LAST, 10, 10, 0x11, &repost), 0);
	ck_assert_int_eq(written(0, 5000, 0x22), 0);
	ck_assert_int_eq(written(5120, 8000, 0x33), 0);
	ck_assert_uint_eq(rdx_credit_untold(&mine), 2);   /* the writes' buffers */
	head_is(10, 0x11);
	ck_assert_int_eq(rdx_recvq_done(&q, &mine, &buf), 0);
	ck_assert_int_eq(buf, 2);
	ck_assert_int_eq(rdx_recvq_peek(&q, &d, &n), 0);
	ck_assert_ptr_eq(d, ring);                         /* zero copy */
	head_is(5000, 0x22);
	ck_assert_uint_eq(ws.grant, RP_MIN_RING);          /* not yet done */
	ck_assert_int_eq(rdx_recvq_done(&q, &mine, &buf), 0);
	ck_assert_int_eq(buf, -1);                         /* no buffer to post */
	ck_assert_uint_eq(ws.grant, RP_MIN_RING + 5120);
	ck_assert_uint_eq(rdx_credit_untold(&mine), 3);    /* nothing more for the write */
	head_is(8000, 0x33);
	ck_assert_int_eq(rdx_recvq_done(&q, &mine, &buf), 0);
	ck_assert_uint_eq(ws.grant, RP_MIN_RING + 5120 + 8192);
	ck_assert(!rdx_wspace_update_due(&ws));            /* under a quarter of the ring */
	ck_assert_uint_eq(q.bytes, 13010);
}
END_TEST

/* A write with no ring, no credit, at the wrong place, too short, and a
 * credit message whose grant lies or that has one with no ring: each
 * ends the conn. */
START_TEST(test_written_refusals)
{
	struct rdx_wspace ws;
	struct rp_hdr h = { .type = RP_CREDIT, .credits = DEPTH, .total = 1 };
	int repost;

	ck_assert_int_eq(written(0, 4096, 1), -EPROTO);                      /* no ring */
	rp_hdr_encode(&h, bufs[0]);
	ck_assert_int_eq(rdx_recvq_arrived(&q, &mine, 0, bufs[0], RP_HDR_LEN, &repost), -EPROTO);  /* grant, no ring */
	teardown();
	setup();
	with_ring(&ws);
	ck_assert_int_eq(written(256, 4096, 1), -EPROTO);                    /* not where the rule says */
	teardown();
	setup();
	with_ring(&ws);
	ck_assert_int_eq(written(0, RP_MIN_WRITE - 1, 1), -EPROTO);          /* too short */
	teardown();
	setup();
	with_ring(&ws);
	/* Every buffer holds a message the core has not read: a write now
	 * had no buffer, so no credit. */
	for (int k = 0; k < DEPTH; k++) {
		h = (struct rp_hdr){ .type = RP_DATA, .flags = RP_F_FIRST | RP_F_LAST, .len = 4, .total = 4,
				     .credits = DEPTH };
		rp_hdr_encode(&h, bufs[k]);
		ck_assert_int_eq(rdx_recvq_arrived(&q, &mine, (uint32_t)k, bufs[k], RP_HDR_LEN + 4, &repost), 0);
	}
	ck_assert_int_eq(rdx_recvq_written(&q, &mine, rp_imm_encode(DEPTH, 0), 4096), -EPROTO);
	teardown();
	setup();
	with_ring(&ws);
	h = (struct rp_hdr){ .type = RP_CREDIT, .credits = DEPTH, .total = 2 * RP_MIN_RING };   /* over the ring */
	rp_hdr_encode(&h, bufs[0]);
	ck_assert_int_eq(rdx_recvq_arrived(&q, &mine, 0, bufs[0], RP_HDR_LEN, &repost), -EPROTO);
}
END_TEST

Suite *make_rdma_recvq_suite(void)
{
	Suite *s = suite_create("rdma_recvq");
	TCase *tc = tcase_create("recvq");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_in_buffers);
	tcase_add_test(tc, test_chunks);
	tcase_add_test(tc, test_owed);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_written);
	tcase_add_test(tc, test_written_refusals);
	suite_add_tcase(s, tc);
	return s;
}
