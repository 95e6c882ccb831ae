/* check_recvbuf_ack.c - what the receive buffer (ldsd/recvbuf.c) reports
 * in its ACK: the window, SACK ranges, delivered ranges, and a new epoch
 * after a reset. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/recvbuf.h"
#include "ldsd/wire.h"
#include "rbtest.h"
#include "suites.h"

START_TEST(outside_window)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64;

	rng_state = 4;
	ts_build(&s, 30, NULL, 100, 1);
	ck_assert_uint_ge(nblocks(&s, bs), 12);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 8), 0);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, 8);
	got_init(&g, &rb, &s);
	ck_assert_int_eq(feed(&rb, &s, bs, 8, &g), -EPROTO);
	ck_assert_int_eq(feed(&rb, &s, bs, 9, &g), -EPROTO);
	ck_assert_int_eq(recvbuf_block(&rb, 1000000, s.buf, 10, collect, &g), -EPROTO);
	ck_assert_int_eq(recvbuf_block(&rb, UINT64_MAX, s.buf, 10, collect, &g), -EPROTO);
	/* Bad lengths. */
	ck_assert_int_eq(recvbuf_block(&rb, 1, s.buf, 0, collect, &g), -EPROTO);
	ck_assert_int_eq(recvbuf_block(&rb, 1, s.buf, bs + 1, collect, &g), -EPROTO);
	ck_assert_uint_eq(rb.blocks_recv, 0);
	ck_assert_uint_eq(rb.ooo_bytes, 0);
	/* The last block of the window is fine. */
	ck_assert_int_eq(feed(&rb, &s, bs, 7, &g), 1);
	ck_assert_uint_eq(rb.blocks_recv, 1);
	ck_assert_uint_eq(g.n, 0);
	/* Filling the window moves it: block 8 is still refused until the
	 * next ACK is built. */
	for (uint64_t q = 0; q < 7; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(rb.recv_cum, 8);
	ck_assert_int_eq(feed(&rb, &s, bs, 8, &g), -EPROTO);
	got_deliver_all(&g);
	/* Only a message still being reassembled holds memory now. */
	ck_assert_uint_eq(rb.msg_bytes, rb.cur_have);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.window_end, 8 + (8 * bs - rb.cur_have) / bs);
	ck_assert_uint_gt(a.window_end, 8);
	ck_assert_int_eq(feed(&rb, &s, bs, 8, &g), 1);
	got_deliver_all(&g);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

START_TEST(window_accounting)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64;
	/* Four messages of exactly two blocks each. */
	const uint32_t lens[4] = { 128 - RHL, 128 - RHL, 128 - RHL, 128 - RHL };
	/* The window once they are all held, and once two are delivered. */
	const uint64_t held4 = 8 + (512 - 4 * (128 - RHL)) / bs;
	const uint64_t held2 = held4 + (512 - (held4 - 8) * bs - 2 * (128 - RHL)) / bs;

	rng_state = 5;
	ts_build(&s, 4, lens, 0, 1);
	ck_assert_uint_eq(s.len, 512);
	ck_assert_int_eq(recvbuf_init(&rb, bs, 512), 0);
	ck_assert_uint_eq(rb.nslots, 8);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, 8);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < 8; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(g.n, 4);
	ck_assert_uint_eq(rb.msg_bytes, 4 * (128 - RHL));

	/* Undelivered messages hold 4 * (128 - RHL) bytes: only what is
	 * left of 512 in whole blocks fits. */
	open_window(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, 8);
	ck_assert_uint_eq(a.window_end, held4);
	ck_assert_uint_lt(held4, 16);
	/* And it does not grow while they are held. */
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, held4);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, held4);

	/* Two delivered: their bytes come back; the blocks granted stay
	 * committed. */
	ck_assert_int_eq(recvbuf_delivered(&rb, g.m[0]), 0);
	ck_assert_int_eq(recvbuf_delivered(&rb, g.m[1]), 0);
	g.m[0] = g.m[1] = NULL;
	ck_assert_uint_eq(rb.msg_bytes, 2 * (128 - RHL));
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, held2);
	ck_assert_uint_gt(held2, held4);
	ck_assert_uint_eq(a.deliv_cum, 2);

	/* All delivered: the window is capped by the slot ring. */
	got_deliver_all(&g);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, 16);
	ck_assert_uint_eq(a.deliv_cum, 4);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, 16);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* A partial message counts against the window as its bytes arrive. */
START_TEST(window_partial_message)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64;
	const uint32_t lens[2] = { 300, 5 };

	rng_state = 6;
	ts_build(&s, 2, lens, 0, 1);
	ck_assert_int_eq(recvbuf_init(&rb, bs, 64 * 10), 0);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, 10);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < 3; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(g.n, 0);
	ck_assert_ptr_nonnull(rb.cur);
	ck_assert_uint_eq(rb.msg_bytes, 3 * 64 - RHL);
	/* committed (10-3)*64 = 448, + 150 held: 598 of 640, no new block. */
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, 10);
	for (uint64_t q = 3; q < nblocks(&s, bs); q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(g.n, 2);
	ck_assert_uint_eq(rb.msg_bytes, 305);
	got_deliver_all(&g);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, nblocks(&s, bs) + 10);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

START_TEST(sack_ranges)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 16;
	static const uint64_t held[] = { 2, 3, 5, 9, 10, 11 };

	rng_state = 7;
	ts_build(&s, 40, NULL, 40, 1);
	ck_assert_uint_ge(nblocks(&s, bs), 90);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 128), 0);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, 128);
	got_init(&g, &rb, &s);
	for (size_t i = 0; i < sizeof(held) / sizeof(held[0]); i++)
		ck_assert_int_eq(feed(&rb, &s, bs, held[i], &g), 1);
	ck_assert_uint_eq(rb.ooo_bytes, 6 * bs);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, 0);
	ck_assert_uint_eq(a.nsack, 3);
	ck_assert_uint_eq(a.sack[0].start, 2);
	ck_assert_uint_eq(a.sack[0].end, 4);
	ck_assert_uint_eq(a.sack[1].start, 5);
	ck_assert_uint_eq(a.sack[1].end, 6);
	ck_assert_uint_eq(a.sack[2].start, 9);
	ck_assert_uint_eq(a.sack[2].end, 12);

	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), 1);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, 1);
	ck_assert_uint_eq(a.nsack, 3);
	ck_assert_uint_eq(a.sack[0].start, 2);

	ck_assert_int_eq(feed(&rb, &s, bs, 1, &g), 1);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, 4);
	ck_assert_uint_eq(rb.ooo_bytes, 4 * bs);
	ck_assert_uint_eq(a.nsack, 2);
	ck_assert_uint_eq(a.sack[0].start, 5);
	ck_assert_uint_eq(a.sack[0].end, 6);
	ck_assert_uint_eq(a.sack[1].start, 9);
	ck_assert_uint_eq(a.sack[1].end, 12);

	ck_assert_int_eq(feed(&rb, &s, bs, 4, &g), 1);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, 6);
	ck_assert_uint_eq(a.nsack, 1);
	ck_assert_uint_eq(a.sack[0].start, 9);
	ck_assert_uint_eq(a.sack[0].end, 12);
	for (uint64_t q = 6; q < 9; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, 12);
	ck_assert_uint_eq(a.nsack, 0);
	ck_assert_uint_eq(rb.ooo_bytes, 0);
	ck_assert_uint_eq(g.n, complete_in(&s, 12 * bs));
	got_deliver_all(&g);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* A block held by recvbuf_place (read straight into the spare buffer)
 * is reported as one held by recvbuf_block; after a reset only the new
 * session's blocks are. */
START_TEST(sack_placed_and_reset)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 16;
	uint8_t *dst;

	rng_state = 9;
	ts_build(&s, 40, NULL, 40, 1);
	ck_assert_uint_ge(nblocks(&s, bs), 40);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 128), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	ck_assert_int_eq(feed(&rb, &s, bs, 3, &g), 1);
	dst = recvbuf_place(&rb, 30, bs);
	ck_assert_ptr_nonnull(dst);
	memcpy(dst, s.buf + 30 * bs, bs);
	ck_assert_int_eq(recvbuf_placed(&rb, 30, bs, collect, &g), 1);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.nsack, 2);
	ck_assert_uint_eq(a.sack[0].start, 3);
	ck_assert_uint_eq(a.sack[0].end, 4);
	ck_assert_uint_eq(a.sack[1].start, 30);
	ck_assert_uint_eq(a.sack[1].end, 31);
	recvbuf_reset(&rb);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.nsack, 0);
	ck_assert_int_eq(feed(&rb, &s, bs, 2, &g), 1);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.nsack, 1);
	ck_assert_uint_eq(a.sack[0].start, 2);
	ck_assert_uint_eq(a.sack[0].end, 3);
	got_deliver_all(&g);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* More holes than an ACK carries: the lowest WIRE_MAX_RANGES go. */
START_TEST(sack_ranges_many)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 16;
	uint64_t nb;

	rng_state = 8;
	ts_build(&s, 40, NULL, 40, 1);
	nb = nblocks(&s, bs);
	ck_assert_uint_ge(nb, 81);
	ck_assert_uint_le(nb, 256);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 256), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	for (uint64_t q = 1; q < 80; q += 2)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.nsack, WIRE_MAX_RANGES);
	for (unsigned k = 0; k < WIRE_MAX_RANGES; k++) {
		ck_assert_uint_eq(a.sack[k].start, 2 * k + 1);
		ck_assert_uint_eq(a.sack[k].end, 2 * k + 2);
	}
	for (uint64_t q = 0; q < nb; q += 2)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	for (uint64_t q = 81; q < nb; q += 2)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(rb.recv_cum, nb);
	ck_assert_uint_eq(g.n, s.n);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.nsack, 0);
	got_deliver_all(&g);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* Checks deliv_cum and the ranges against a reference set. */
static void check_deliv(struct recvbuf *rb, const uint8_t *done, size_t n)
{
	struct wire_ack a;
	uint64_t cum = 0;
	size_t k = 0;

	recvbuf_ack(rb, &a);
	while (cum < n && done[cum])
		cum++;
	/* the set holds message numbers + 1: the prefix range, then the others */
	ck_assert_uint_eq(idset_prefix(&rb->delivered), cum);
	ck_assert_uint_eq(a.deliv_cum, cum);
	for (uint64_t i = cum; i < n;) {
		uint64_t st;

		if (!done[i]) {
			i++;
			continue;
		}
		st = i;
		while (i < n && done[i])
			i++;
		ck_assert_uint_lt(k + (cum > 0), rb->delivered.n);
		ck_assert_uint_eq(rb->delivered.r[k + (cum > 0)].first, st + 1);
		ck_assert_uint_eq(rb->delivered.r[k + (cum > 0)].last, i);
		if (k < WIRE_MAX_RANGES) {
			ck_assert_uint_eq(a.deliv[k].start, st);
			ck_assert_uint_eq(a.deliv[k].end, i);
		}
		k++;
	}
	ck_assert_uint_eq(rb->delivered.n, k + (cum > 0));
	ck_assert_uint_eq(a.ndeliv, k < WIRE_MAX_RANGES ? k : WIRE_MAX_RANGES);
}

START_TEST(deliv_ranges_example)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64;
	static const size_t order[] = { 3, 1, 0, 2, 7, 8 };

	rng_state = 9;
	ts_build(&s, 10, NULL, 30, 1);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 64), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < nblocks(&s, bs); q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(g.n, 10);
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		ck_assert_int_eq(recvbuf_delivered(&rb, g.m[order[i]]), 0);
		g.m[order[i]] = NULL;
	}
	ack_deliv_is(&rb, &a, 4, "7-9");
	/* 9 extends the range, 5 starts one, 4 and 6 close the gaps. */
	ck_assert_int_eq(recvbuf_delivered(&rb, g.m[9]), 0);
	ck_assert_int_eq(recvbuf_delivered(&rb, g.m[5]), 0);
	g.m[9] = g.m[5] = NULL;
	ack_deliv_is(&rb, &a, 4, "5-6 7-10");
	ck_assert_int_eq(recvbuf_delivered(&rb, g.m[4]), 0);
	g.m[4] = NULL;
	ack_deliv_is(&rb, &a, 6, "7-10");
	ck_assert_int_eq(recvbuf_delivered(&rb, g.m[6]), 0);
	g.m[6] = NULL;
	ack_deliv_is(&rb, &a, 10, "");
	ck_assert_uint_eq(rb.msg_bytes, 0);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* A dropped message frees its memory but stays out of the delivered
 * numbers until settled (the sender must hear of it as lost first). */
START_TEST(discard_then_settle)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64;

	rng_state = 11;
	ts_build(&s, 4, NULL, 30, 1);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 64), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < nblocks(&s, bs); q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(g.n, 4);
	ck_assert_int_eq(recvbuf_delivered(&rb, g.m[0]), 0);
	ck_assert_int_eq(recvbuf_discard(&rb, g.m[1]), 1);
	ck_assert_int_eq(recvbuf_delivered(&rb, g.m[2]), 0);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.deliv_cum, 1);
	ck_assert_uint_eq(a.ndeliv, 1);
	ck_assert_uint_eq(a.deliv[0].start, 2);
	ck_assert_uint_eq(rb.msg_bytes, s.rec[3].len);
	ck_assert_int_eq(recvbuf_settle(&rb, 1, 1), 0);
	ack_deliv_is(&rb, &a, 3, "");
	/* A message of an earlier session is not to be reported. */
	recvbuf_reset(&rb);
	ck_assert_int_eq(recvbuf_discard(&rb, g.m[3]), 0);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* Random delivery orders against a reference; more than 32 ranges. */
START_TEST(deliv_ranges_random)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 256;
	size_t perm[200];
	uint8_t done[200];

	rng_state = 1000 + (uint64_t)_i;
	ts_build(&s, 200, NULL, 8, 1);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 64), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < nblocks(&s, bs); q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(g.n, 200);
	for (size_t i = 0; i < 200; i++)
		perm[i] = i;
	if (_i == 0) {
		/* Every even number but 0 first (100 ranges), then the odd ones
		 * downwards, then 0. */
		size_t k = 0;

		for (size_t i = 2; i < 200; i += 2)
			perm[k++] = i;
		for (size_t i = 199; i < 200; i -= 2)
			perm[k++] = i;
		perm[k++] = 0;
		ck_assert_uint_eq(k, 200);
	} else {
		for (size_t i = 199; i > 0; i--) {
			size_t j = rng() % (i + 1), t = perm[i];

			perm[i] = perm[j];
			perm[j] = t;
		}
	}
	memset(done, 0, sizeof(done));
	for (size_t i = 0; i < 200; i++) {
		ck_assert_int_eq(recvbuf_delivered(&rb, g.m[perm[i]]), 0);
		g.m[perm[i]] = NULL;
		done[perm[i]] = 1;
		check_deliv(&rb, done, 200);
	}
	ck_assert_uint_eq(idset_prefix(&rb.delivered), 200);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

START_TEST(reset_new_epoch)
{
	struct recvbuf rb;
	struct tstream s1, s2;
	struct got g1, g2;
	struct wire_ack a;
	const size_t bs = 64;
	uint64_t part, held;
	size_t nold;
	uint64_t oldbytes;

	rng_state = 11;
	ts_build(&s1, 15, NULL, 150, 100);
	ts_build(&s2, 6, NULL, 150, 900);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 32), 0);
	open_window(&rb, &a);
	ck_assert_uint_eq(a.window_end, 32);
	got_init(&g1, &rb, &s1);
	/* Feed up to a block that ends inside a message, and hold a later one. */
	part = 0;
	for (uint64_t q = 0; q < nblocks(&s1, bs); q++) {
		size_t have = (size_t)(q + 1) * bs;
		size_t k = complete_in(&s1, have);

		if (k >= 3 && k < s1.n && s1.start[k] + RHL < have) {
			part = q;
			break;
		}
	}
	ck_assert_uint_gt(part, 0);
	for (uint64_t q = 0; q <= part; q++)
		ck_assert_int_eq(feed(&rb, &s1, bs, q, &g1), 1);
	held = part + 2;
	ck_assert_uint_lt(held, nblocks(&s1, bs));
	ck_assert_int_eq(feed(&rb, &s1, bs, held, &g1), 1);
	nold = g1.n;
	ck_assert_uint_ge(nold, 3);
	oldbytes = payload_sum(&s1, 0, nold);
	ck_assert_uint_gt(rb.msg_bytes, oldbytes);        /* a partial message too */
	ck_assert_ptr_nonnull(rb.cur);
	ck_assert_uint_eq(rb.ooo_bytes, bs);
	/* Message 1 delivered before the reset. */
	ck_assert_int_eq(recvbuf_delivered(&rb, g1.m[1]), 0);
	g1.m[1] = NULL;
	oldbytes -= s1.rec[1].len;

	recvbuf_reset(&rb);
	ck_assert_uint_eq(rb.epoch, 1);
	ck_assert_uint_eq(rb.recv_cum, 0);
	ck_assert_uint_eq(rb.window_end, 0);
	ck_assert_uint_eq(rb.next_msgno, 0);
	ck_assert_uint_eq(idset_prefix(&rb.delivered), 0);
	ck_assert_uint_eq(rb.delivered.n, 0);
	ck_assert_uint_eq(rb.ooo_bytes, 0);
	ck_assert_ptr_null(rb.cur);
	ck_assert_uint_eq(rb.cur_have, 0);
	ck_assert_uint_eq(rb.hdr_have, 0);
	/* Messages handed out before stay counted until delivered. */
	ck_assert_uint_eq(rb.msg_bytes, oldbytes);
	for (size_t i = 0; i < rb.nslots; i++)
		ck_assert_ptr_null(rb.slots[i].data);

	/* The new session's window is closed until its first ACK. */
	got_init(&g2, &rb, &s2);
	g2.epoch = 1;
	ck_assert_int_eq(feed(&rb, &s2, bs, 0, &g2), -EPROTO);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, 0);
	ck_assert_uint_eq(a.deliv_cum, 0);
	ck_assert_uint_eq(a.ndeliv, 0);
	ck_assert_uint_eq(a.nsack, 0);
	ck_assert_uint_eq(a.window_end, (bs * 32 - oldbytes) / bs);
	ck_assert_uint_ge(a.window_end, nblocks(&s2, bs));
	for (uint64_t q = 0; q < nblocks(&s2, bs); q++)
		ck_assert_int_eq(feed(&rb, &s2, bs, q, &g2), 1);
	/* Numbered from 0 again, in epoch 1, with the new stream's bytes
	 * (checked in collect). */
	ck_assert_uint_eq(g2.n, s2.n);
	ck_assert_uint_eq(g2.m[0]->msgno, 0);
	ck_assert_uint_eq(g2.m[0]->epoch, 1);

	/* Old-epoch messages (msgno 0 and 2) do not enter the new set. */
	ck_assert_uint_eq(g1.m[0]->msgno, 0);
	ck_assert_uint_eq(g1.m[0]->epoch, 0);
	ck_assert_int_eq(recvbuf_delivered(&rb, g1.m[0]), 0);
	ck_assert_int_eq(recvbuf_delivered(&rb, g1.m[2]), 0);
	g1.m[0] = g1.m[2] = NULL;
	ack_deliv_is(&rb, &a, 0, "");
	ck_assert_int_eq(recvbuf_delivered(&rb, g2.m[1]), 0);
	g2.m[1] = NULL;
	ack_deliv_is(&rb, &a, 0, "1-2");
	ck_assert_int_eq(recvbuf_delivered(&rb, g2.m[0]), 0);
	g2.m[0] = NULL;
	ack_deliv_is(&rb, &a, 2, "");
	got_deliver_all(&g1);
	ack_deliv_is(&rb, &a, 2, "");
	got_deliver_all(&g2);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.deliv_cum, s2.n);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	/* Old-session stream blocks: the old held block's slot is empty. */
	ck_assert_uint_eq(rb.ooo_bytes, 0);
	recvbuf_free(&rb);
	ts_free(&s1);
	ts_free(&s2);
}
END_TEST

Suite *make_recvbuf_ack_suite(void)
{
	Suite *s = suite_create("recvbuf_ack");
	TCase *win = tcase_create("window");
	TCase *dv = tcase_create("delivered");

	tcase_add_test(win, outside_window);
	tcase_add_test(win, window_accounting);
	tcase_add_test(win, window_partial_message);
	tcase_add_test(win, sack_ranges);
	tcase_add_test(win, sack_ranges_many);
	tcase_add_test(win, sack_placed_and_reset);
	suite_add_tcase(s, win);

	tcase_add_test(dv, deliv_ranges_example);
	tcase_add_test(dv, discard_then_settle);
	tcase_add_loop_test(dv, deliv_ranges_random, 0, 6);
	tcase_add_test(dv, reset_new_epoch);
	tcase_set_timeout(dv, 10);
	suite_add_tcase(s, dv);
	return s;
}
