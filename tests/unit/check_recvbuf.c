/* check_recvbuf.c - unit tests of the receiving half of a link
 * (ldsd/recvbuf.c): blocks in any order reassembled into messages, and
 * malformed records.  What the ACK reports (window, SACK and delivered
 * ranges, epochs): check_recvbuf_ack.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/recvbuf.h"
#include "ldsd/wire.h"
#include "rbtest.h"
#include "suites.h"

START_TEST(init_and_first_ack)
{
	struct recvbuf rb;
	struct wire_ack a;
	uint8_t blk[64] = { WIRE_REC_MAGIC };

	ck_assert_int_eq(recvbuf_init(&rb, 64, 64 * 10 + 5), 0);
	ck_assert_uint_eq(rb.nslots, 10);
	ck_assert_uint_eq(rb.block_size, 64);
	ck_assert_uint_eq(rb.recv_cum, 0);
	ck_assert_uint_eq(rb.window_end, 0);
	/* The window is closed until the first ACK is built. */
	ck_assert_int_eq(recvbuf_block(&rb, 0, blk, sizeof(blk), collect, NULL), -EPROTO);
	ck_assert_uint_eq(rb.blocks_recv, 0);
	memset(&a, 0xff, sizeof(a));
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, 0);
	ck_assert_uint_eq(a.window_end, 10);
	ck_assert_uint_eq(a.deliv_cum, 0);
	ck_assert_uint_eq(a.nsack, 0);
	ck_assert_uint_eq(a.ndeliv, 0);
	ck_assert_uint_eq(rb.window_end, 10);
	/* Nothing changes: the same window again. */
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.window_end, 10);
	recvbuf_free(&rb);
	recvbuf_free(&rb);
}
END_TEST

START_TEST(in_order)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64;
	uint64_t nb;

	rng_state = 1;
	ts_build(&s, 30, NULL, 200, 5000);
	nb = nblocks(&s, bs);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 256), 0);
	open_window(&rb, &a);
	ck_assert_uint_ge(a.window_end, nb);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < nb; q++) {
		size_t have = (size_t)(q + 1) * bs;

		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
		ck_assert_uint_eq(rb.recv_cum, q + 1);
		/* Each message as soon as its last byte is in. */
		ck_assert_uint_eq(g.n, complete_in(&s, have < s.len ? have : s.len));
	}
	ck_assert_uint_eq(g.n, s.n);
	ck_assert_uint_eq(rb.blocks_recv, nb);
	ck_assert_uint_eq(rb.blocks_dup, 0);
	ck_assert_uint_eq(rb.bytes_recv, s.len);
	ck_assert_uint_eq(rb.msgs_recv, s.n);
	ck_assert_uint_eq(rb.ooo_bytes, 0);
	ck_assert_uint_eq(rb.msg_bytes, payload_sum(&s, 0, s.n));
	ck_assert_ptr_null(rb.cur);
	ck_assert_uint_eq(rb.hdr_have, 0);

	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, nb);
	ck_assert_uint_eq(a.nsack, 0);
	ck_assert_uint_eq(a.deliv_cum, 0);
	got_deliver_all(&g);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	ack_deliv_is(&rb, &a, s.n, "");
	ck_assert_uint_eq(a.window_end, nb + rb.nslots);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

START_TEST(reverse_order)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 50;
	uint64_t nb;
	size_t held = 0;

	rng_state = 2;
	ts_build(&s, 25, NULL, 150, 1);
	nb = nblocks(&s, bs);
	ck_assert_uint_ge(nb, 10);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 256), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	for (uint64_t q = nb - 1; q >= 1; q--) {
		size_t len = q == nb - 1 ? s.len - (size_t)q * bs : bs;

		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
		held += len;
		ck_assert_uint_eq(rb.ooo_bytes, held);
		ck_assert_uint_eq(rb.recv_cum, 0);
	}
	ck_assert_uint_eq(g.n, 0);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.recv_cum, 0);
	ck_assert_uint_eq(a.nsack, 1);
	ck_assert_uint_eq(a.sack[0].start, 1);
	ck_assert_uint_eq(a.sack[0].end, nb);

	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), 1);
	ck_assert_uint_eq(g.n, s.n);
	ck_assert_uint_eq(rb.recv_cum, nb);
	ck_assert_uint_eq(rb.ooo_bytes, 0);
	ck_assert_uint_eq(rb.blocks_recv, nb);
	ck_assert_uint_eq(rb.msgs_recv, s.n);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.nsack, 0);
	got_deliver_all(&g);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* Each block 1 to 3 times, shuffled; block size varies with the seed. */
START_TEST(shuffled_with_duplicates)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 16 + 13 * (size_t)_i;
	uint64_t nb, *order;
	size_t norder = 0, news = 0, dups = 0;

	rng_state = 100 + (uint64_t)_i;
	ts_build(&s, 40, NULL, 300, 77);
	nb = nblocks(&s, bs);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * (nb + 8)), 0);
	open_window(&rb, &a);
	ck_assert_uint_ge(a.window_end, nb);
	order = malloc(3 * nb * sizeof(*order));
	ck_assert_ptr_nonnull(order);
	for (uint64_t q = 0; q < nb; q++) {
		unsigned copies = 1 + rng() % 3;

		for (unsigned c = 0; c < copies; c++)
			order[norder++] = q;
	}
	for (size_t i = norder - 1; i > 0; i--) {
		size_t j = rng() % (i + 1);
		uint64_t t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	got_init(&g, &rb, &s);
	g.deliver_now = _i % 2;
	for (size_t i = 0; i < norder; i++) {
		int r = feed(&rb, &s, bs, order[i], &g);

		if (r == 1)
			news++;
		else if (r == 0)
			dups++;
		else
			ck_abort_msg("block %llu: %d", (unsigned long long)order[i], r);
		/* Delivered = every message inside the in-order prefix. */
		ck_assert_uint_eq(g.n, complete_in(&s, rb.recv_cum == nb ? s.len : (size_t)rb.recv_cum * bs));
	}
	ck_assert_uint_eq(news, nb);
	ck_assert_uint_eq(dups, norder - nb);
	ck_assert_uint_eq(rb.blocks_dup, dups);
	ck_assert_uint_eq(rb.blocks_recv, nb);
	ck_assert_uint_eq(rb.bytes_recv, s.len);
	ck_assert_uint_eq(g.n, s.n);
	ck_assert_uint_eq(rb.recv_cum, nb);
	ck_assert_uint_eq(rb.ooo_bytes, 0);
	got_deliver_all(&g);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	ack_deliv_is(&rb, &a, s.n, "");
	free(order);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

START_TEST(duplicates)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64;
	size_t n1, ooo;

	rng_state = 3;
	ts_build(&s, 20, NULL, 100, 1);
	ck_assert_uint_ge(nblocks(&s, bs), 6);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 64), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), 1);
	ck_assert_int_eq(feed(&rb, &s, bs, 1, &g), 1);
	n1 = g.n;
	ck_assert_uint_eq(n1, complete_in(&s, 2 * bs));
	/* Below recv_cum. */
	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), 0);
	ck_assert_int_eq(feed(&rb, &s, bs, 1, &g), 0);
	ck_assert_uint_eq(g.n, n1);
	ck_assert_uint_eq(rb.blocks_dup, 2);
	/* Already held out of order. */
	ck_assert_int_eq(feed(&rb, &s, bs, 4, &g), 1);
	ooo = rb.ooo_bytes;
	ck_assert_uint_eq(ooo, bs);
	ck_assert_int_eq(feed(&rb, &s, bs, 4, &g), 0);
	ck_assert_uint_eq(rb.ooo_bytes, ooo);
	ck_assert_uint_eq(rb.blocks_dup, 3);
	ck_assert_uint_eq(rb.blocks_recv, 3);
	ck_assert_uint_eq(rb.bytes_recv, 3 * bs);
	/* A duplicate is dropped even with a different length or content. */
	ck_assert_int_eq(recvbuf_block(&rb, 4, s.buf, 10, collect, &g), 0);
	ck_assert_int_eq(recvbuf_block(&rb, 0, s.buf + 5, 7, collect, &g), 0);
	ck_assert_uint_eq(rb.blocks_dup, 5);
	ck_assert_uint_eq(g.n, n1);
	got_deliver_all(&g);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

START_TEST(corrupt_records)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	size_t bs = 64, bad;
	uint64_t badblk;
	uint8_t *orig;

	rng_state = 10;
	ts_build(&s, 12, NULL, 100, 1);
	orig = malloc(s.len);
	ck_assert_ptr_nonnull(orig);
	memcpy(orig, s.buf, s.len);

	/* Bad magic in the very first byte. */
	s.buf[0] ^= 0xff;
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 64), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, NULL);
	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), -EPROTO);
	ck_assert_uint_eq(g.n, 0);
	recvbuf_free(&rb);
	memcpy(s.buf, orig, s.len);

	/* Bad magic of record 5 in the middle of the stream: the messages
	 * before it arrive, the block holding it is refused. */
	bad = s.start[5];
	badblk = bad / bs;
	s.buf[bad] = 0x5A;
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 64), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < badblk; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_int_eq(feed(&rb, &s, bs, badblk, &g), -EPROTO);
	ck_assert_uint_eq(g.n, 5);
	got_deliver_all(&g);
	recvbuf_free(&rb);

	/* The same block arriving early is held, and refused when the gap
	 * before it fills. */
	ck_assert_uint_ge(badblk, 1);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 64), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	ck_assert_int_eq(feed(&rb, &s, bs, badblk, &g), 1);
	for (uint64_t q = 0; q + 1 < badblk; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_int_eq(feed(&rb, &s, bs, badblk - 1, &g), -EPROTO);
	ck_assert_uint_eq(g.n, 5);
	got_deliver_all(&g);
	recvbuf_free(&rb);
	memcpy(s.buf, orig, s.len);

	/* Reported as soon as the bytes show it: record 5 starts on the last
	 * byte of block 0. */
	bs = s.start[5] + 1;
	s.buf[s.start[5]] = 0;
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 16), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), -EPROTO);
	ck_assert_uint_eq(g.n, 5);
	got_deliver_all(&g);
	recvbuf_free(&rb);
	memcpy(s.buf, orig, s.len);
	bs = 64;

	/* Non-zero flags, bad name, oversized length. */
	for (int k = 0; k < 3; k++) {
		memcpy(s.buf, orig, s.len);
		if (k == 0)
			s.buf[1] = 1;
		else if (k == 1)
			s.buf[WIRE_REC_FIXED + 3] = ' ';       /* "clu ter..." */
		else
			s.buf[4] = 0x7f;                       /* len ~2 GiB */
		ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 64), 0);
		open_window(&rb, &a);
		got_init(&g, &rb, NULL);
		ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), -EPROTO);
		ck_assert_uint_eq(g.n, 0);
		recvbuf_free(&rb);
	}
	free(orig);
	ts_free(&s);
}
END_TEST

/* Headers split at every possible place: block sizes 1..40; odd sizes
 * deliver synchronously from the callback. */
START_TEST(block_sizes)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 1 + (size_t)_i;
	const uint32_t lens[12] = { 0, 1, 0, 0, 57, 300, 2, 0, 41, 42, 43, 0 };

	rng_state = 12;
	ts_build(&s, 12, lens, 0, 1);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 2048), 0);
	open_window(&rb, &a);
	ck_assert_uint_ge(a.window_end, nblocks(&s, bs));
	got_init(&g, &rb, &s);
	g.deliver_now = bs % 2;
	for (uint64_t q = 0; q < nblocks(&s, bs); q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(g.n, s.n);
	ck_assert_uint_eq(rb.hdr_have, 0);
	ck_assert_ptr_null(rb.cur);
	got_deliver_all(&g);
	recvbuf_ack(&rb, &a);
	ck_assert_uint_eq(a.deliv_cum, s.n);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* recvbuf_free drops held blocks, a partial message and the deliv set. */
START_TEST(free_with_state)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64;
	const uint32_t lens[4] = { 10, 20, 500, 3 };

	rng_state = 13;
	ts_build(&s, 4, lens, 0, 1);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 128), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < 6; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_int_eq(feed(&rb, &s, bs, 9, &g), 1);
	ck_assert_uint_eq(g.n, 2);
	ck_assert_ptr_nonnull(rb.cur);          /* a partial message */
	ck_assert_uint_gt(rb.cur_have, 0);
	ck_assert_uint_eq(rb.ooo_bytes, bs);
	ck_assert_int_eq(recvbuf_delivered(&rb, g.m[1]), 0);
	g.m[1] = NULL;
	for (size_t i = 0; i < g.n; i++)
		rb_msg_free(g.m[i]);           /* rb_msg_free(NULL) is fine */
	rb_msg_free(NULL);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* Blocks written straight into their message where recvbuf_place allows,
 * the others taken by recvbuf_block, every other pair swapped so that
 * held blocks follow placed ones: the messages come out as fed whole. */
START_TEST(placed_blocks)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64 + 32 * (size_t)_i;
	size_t placed = 0, held = 0;
	uint64_t nb;

	rng_state = 300 + (uint64_t)_i;
	ts_build(&s, 30, NULL, 700, 9);
	nb = nblocks(&s, bs);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * (nb + 8)), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < nb; q++) {
		/* Every fourth block arrives after the one behind it. */
		uint64_t seq = q % 4 == 0 && q + 1 < nb ? q + 1 : q % 4 == 1 ? q - 1 : q;
		size_t off = (size_t)seq * bs;
		uint32_t len = (uint32_t)(s.len - off < bs ? s.len - off : bs);
		uint8_t *dst = recvbuf_place(&rb, seq, len);

		if (dst == NULL) {
			ck_assert_int_eq(feed(&rb, &s, bs, seq, &g), 1);
			continue;
		}
		/* The next block only wholly inside one payload; a later one
		 * where it is held. */
		if (seq == rb.recv_cum) {
			ck_assert_ptr_nonnull(rb.cur);
			ck_assert_ptr_eq(dst, rb.cur->data + rb.cur_have);
			placed++;
		} else {
			held++;
		}
		memcpy(dst, s.buf + off, len);
		ck_assert_int_eq(recvbuf_placed(&rb, seq, len, collect, &g), 1);
	}
	ck_assert_uint_gt(placed, 0);
	ck_assert_uint_gt(held, 0);
	ck_assert_uint_eq(g.n, s.n);
	ck_assert_uint_eq(rb.recv_cum, nb);
	ck_assert_uint_eq(rb.blocks_recv, nb);
	ck_assert_uint_eq(rb.ooo_bytes, 0);
	got_deliver_all(&g);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* Where a block may not go straight into a message. */
START_TEST(place_refused)
{
	const uint32_t lens[2] = { 300, 5 };
	const size_t bs = 64;
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;

	rng_state = 8;
	ts_build(&s, 2, lens, 0, 1);
	ck_assert_uint_eq(nblocks(&s, bs), 7);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 16), 0);
	got_init(&g, &rb, &s);
	/* Before any window, and with no message begun. */
	ck_assert_ptr_null(recvbuf_place(&rb, 0, bs));
	open_window(&rb, &a);
	ck_assert_ptr_null(recvbuf_place(&rb, 0, bs));
	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), 1);
	/* Blocks 1 to 4 lie inside message 0's payload and may go straight
	 * there in order; a later one where it is held, until it is held;
	 * none larger than a block, before the window or beyond it. */
	ck_assert_ptr_eq(recvbuf_place(&rb, 1, bs), rb.cur->data + rb.cur_have);
	ck_assert_ptr_null(recvbuf_place(&rb, 1, bs + 1));
	ck_assert_ptr_nonnull(recvbuf_place(&rb, 3, bs));
	ck_assert_ptr_ne(recvbuf_place(&rb, 3, bs), rb.cur->data + rb.cur_have);
	ck_assert_int_eq(feed(&rb, &s, bs, 3, &g), 1);
	ck_assert_ptr_null(recvbuf_place(&rb, 3, bs));
	ck_assert_ptr_null(recvbuf_place(&rb, 0, bs));
	ck_assert_ptr_null(recvbuf_place(&rb, rb.window_end, bs));
	for (uint64_t q = 1; q <= 4; q++)
		if (q != 3)
			ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	/* Block 5 holds the end of message 0 and the start of message 1's
	 * header; block 6 the rest of message 1, whose header is not whole
	 * yet. */
	ck_assert_uint_lt(rb.cur->rec.len - rb.cur_have, bs);
	ck_assert_ptr_null(recvbuf_place(&rb, 5, bs));
	ck_assert_int_eq(feed(&rb, &s, bs, 5, &g), 1);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_ptr_null(rb.cur);
	ck_assert_ptr_null(recvbuf_place(&rb, 6, (uint32_t)(s.len - 6 * bs)));
	ck_assert_int_eq(feed(&rb, &s, bs, 6, &g), 1);
	ck_assert_uint_eq(g.n, 2);
	got_deliver_all(&g);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* A record longer than the link's largest message (mem / 2, what the link
 * advertises) is refused before anything is allocated for it, whether its
 * header arrives in order or was held. */
START_TEST(record_over_max_msg)
{
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	const size_t bs = 64, mem = bs * 64;
	const uint32_t lens[2] = { (uint32_t)mem / 2, (uint32_t)mem / 2 + 1 };
	uint64_t hdrblk;

	rng_state = 11;
	ts_build(&s, 2, lens, 0, 1);
	/* The block in which its header is complete. */
	hdrblk = (s.start[1] + RHL - 1) / bs;
	ck_assert_uint_gt(hdrblk, 0);

	ck_assert_int_eq(recvbuf_init(&rb, bs, mem), 0);
	ck_assert_uint_eq(rb.max_msg, mem / 2);
	open_window(&rb, &a);
	ck_assert_uint_gt(a.window_end, hdrblk);
	got_init(&g, &rb, &s);
	for (uint64_t q = 0; q < hdrblk; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_int_eq(feed(&rb, &s, bs, hdrblk, &g), -EMSGSIZE);
	/* The message of exactly the limit arrived; nothing was begun for the other. */
	ck_assert_uint_eq(g.n, 1);
	ck_assert_ptr_null(rb.cur);
	ck_assert_uint_eq(rb.msg_bytes, lens[0]);
	got_deliver_all(&g);
	recvbuf_free(&rb);

	ck_assert_int_eq(recvbuf_init(&rb, bs, mem), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	ck_assert_int_eq(feed(&rb, &s, bs, hdrblk, &g), 1);
	for (uint64_t q = 0; q + 1 < hdrblk; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_int_eq(feed(&rb, &s, bs, hdrblk - 1, &g), -EMSGSIZE);
	ck_assert_uint_eq(g.n, 1);
	ck_assert_ptr_null(rb.cur);
	got_deliver_all(&g);
	recvbuf_free(&rb);
	ts_free(&s);

	/* However much memory, never more than the wire allows. */
	ck_assert_int_eq(recvbuf_init(&rb, WIRE_MAX_BLOCK, 4 * (size_t)WIRE_MAX_MSG), 0);
	ck_assert_uint_eq(rb.max_msg, WIRE_MAX_MSG);
	recvbuf_free(&rb);
}
END_TEST

/* Blocks that arrived ahead and lie wholly inside a message's payload are
 * kept as its parts, not copied: read through rb_msg_iov (from any
 * offset) or flattened, the payload is intact, and their memory counts
 * twice until the message is delivered. */
START_TEST(held_blocks_kept_as_parts)
{
	static const uint32_t lens[] = { 1000, 10, 700, 64, 2000, 5 };
	const size_t bs = 64;
	struct recvbuf rb;
	struct tstream s;
	struct got g;
	struct wire_ack a;
	uint64_t nb;
	size_t counted = 0, parts = 0;

	rng_state = 7;
	ts_build(&s, 6, lens, 0, 1);
	nb = nblocks(&s, bs);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 256), 0);
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	for (uint64_t q = nb - 1; q >= 1; q--)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), 1);
	ck_assert_uint_eq(g.n, s.n);
	ck_assert_uint_eq(rb.ooo_bytes, 0);
	for (size_t i = 0; i < g.n; i++) {
		struct rb_msg *m = g.m[i];
		uint32_t in_parts = 0;

		for (uint32_t k = 0; k < m->nparts; k++) {
			ck_assert_uint_eq(m->parts[k].len, bs);
			ck_assert_uint_le(m->parts[k].off + m->parts[k].len, m->rec.len);
			in_parts += m->parts[k].len;
		}
		ck_assert_uint_eq(m->extra, in_parts);
		/* All but the blocks at each end of a long payload are parts. */
		if (m->rec.len >= 3 * bs)
			ck_assert_uint_ge(m->nparts, m->rec.len / bs - 2);
		counted += m->rec.len + m->extra;
		parts += m->nparts;
	}
	ck_assert_uint_ge(parts, 50);
	ck_assert_uint_eq(rb.msg_bytes, counted);
	for (size_t i = 0; i < g.n; i++) {
		struct rb_msg *m = g.m[i];
		const uint8_t *want = s.buf + s.end[i] - s.rec[i].len;

		if (m->nparts > 1) {
			/* From inside a part and from inside data between two. */
			size_t offs[] = { m->parts[0].off + 3, m->parts[1].off - 1, m->rec.len - 1 };

			for (size_t k = 0; k < 3; k++)
				ck_assert_int_eq(msg_matches(m, offs[k], want), 1);
		}
		rb_msg_flatten(m);
		ck_assert_uint_eq(m->nparts, 0);
		ck_assert_mem_eq(m->data, want, m->rec.len);
	}
	ck_assert_uint_eq(rb.msg_bytes, counted);
	got_deliver_all(&g);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* A store standing in for a client's ring: messages of 100 bytes or more
 * are reassembled in buffers of its own; the one numbered move_at is moved
 * out (as clientplace.c's tick does) once half its blocks are in. */
struct tstore {
	struct rb_store st;
	struct rb_msg *m[MAXM];
	uint8_t *buf[MAXM];
	size_t n, released, move_at;
	struct rb_msg *moved;
};

static void tstore_release(struct rb_store *st, struct rb_msg *m)
{
	struct tstore *t = (struct tstore *)st;

	for (size_t i = 0; i < t->n; i++) {
		if (t->m[i] == m) {
			ck_assert_ptr_eq(m->data, t->buf[i]);
			free(t->buf[i]);
			t->m[i] = NULL;
			t->released++;
			return;
		}
	}
	ck_abort_msg("released a message the store does not hold");
}

static uint8_t *tstore_place(void *arg, struct rb_msg *m)
{
	struct tstore *t = arg;

	if (m->rec.len < 100)
		return NULL;
	t->m[t->n] = m;
	t->buf[t->n] = malloc(m->rec.len);
	m->store = &t->st;
	return t->buf[t->n++];
}

static void tstore_move(struct tstore *t, size_t i)
{
	struct rb_msg *m = t->m[i];
	uint8_t *own = malloc(m->rec.len);

	memcpy(own, m->data, m->rec.len);
	memset(t->buf[i], 0xee, m->rec.len);
	free(t->buf[i]);
	m->data = own;
	m->store = NULL;
	t->m[i] = NULL;
	t->moved = m;
}

START_TEST(messages_in_a_store)
{
	static const uint32_t lens[] = { 1000, 10, 700, 64, 2000, 5, 300 };
	const size_t bs = 64;
	struct recvbuf rb;
	struct tstream s;
	struct tstore t = { .st.release = tstore_release, .move_at = 2 };
	struct got g;
	struct wire_ack a;
	uint64_t nb, q;
	size_t placed = 0;

	rng_state = 11;
	ts_build(&s, 7, lens, 0, 1);
	nb = nblocks(&s, bs);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 256), 0);
	rb.place = tstore_place;
	rb.place_arg = &t;
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	/* The first half in reverse (held, then parsed in), the rest in
	 * order; the store moves message move_at out in the middle of it. */
	for (q = nb / 2; q >= 1; q--)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), 1);
	ck_assert_uint_ge(t.n, t.move_at + 1);
	ck_assert_ptr_eq(rb.cur, t.m[t.move_at]);
	tstore_move(&t, t.move_at);
	for (q = nb / 2 + 1; q < nb; q++)
		ck_assert_int_eq(feed(&rb, &s, bs, q, &g), 1);
	ck_assert_uint_eq(g.n, s.n);
	for (size_t i = 0; i < g.n; i++) {
		struct rb_msg *m = g.m[i];

		/* Kept no block as a part: every byte is where the store said. */
		ck_assert_uint_eq(m->nparts, 0);
		ck_assert_mem_eq(m->data, s.buf + s.end[i] - s.rec[i].len, m->rec.len);
		ck_assert_int_eq(m->store != NULL, m->rec.len >= 100 && m != t.moved);
		placed += m->store != NULL;
	}
	ck_assert_ptr_nonnull(t.moved);
	ck_assert_uint_eq(placed, 3);
	got_deliver_all(&g);
	ck_assert_uint_eq(t.released, placed);
	ck_assert_uint_eq(rb.msg_bytes, 0);
	recvbuf_free(&rb);
	ts_free(&s);
}
END_TEST

/* A message being reassembled in a store when the buffer is dropped (a
 * session reset) is released, once. */
START_TEST(store_released_on_reset)
{
	static const uint32_t lens[] = { 1000 };
	const size_t bs = 64;
	struct recvbuf rb;
	struct tstream s;
	struct tstore t = { .st.release = tstore_release };
	struct got g;
	struct wire_ack a;

	ts_build(&s, 1, lens, 0, 1);
	ck_assert_int_eq(recvbuf_init(&rb, bs, bs * 256), 0);
	rb.place = tstore_place;
	rb.place_arg = &t;
	open_window(&rb, &a);
	got_init(&g, &rb, &s);
	ck_assert_int_eq(feed(&rb, &s, bs, 0, &g), 1);
	ck_assert_uint_eq(t.n, 1);
	recvbuf_reset(&rb);
	ck_assert_uint_eq(t.released, 1);
	ck_assert_uint_eq(g.n, 0);
	recvbuf_free(&rb);
	ck_assert_uint_eq(t.released, 1);
	ts_free(&s);
}
END_TEST

Suite *make_recvbuf_suite(void)
{
	Suite *s = suite_create("recvbuf");
	TCase *ord = tcase_create("order");
	TCase *bad = tcase_create("malformed");

	tcase_add_test(ord, init_and_first_ack);
	tcase_add_test(ord, in_order);
	tcase_add_test(ord, reverse_order);
	tcase_add_test(ord, held_blocks_kept_as_parts);
	tcase_add_test(ord, messages_in_a_store);
	tcase_add_test(ord, store_released_on_reset);
	tcase_add_loop_test(ord, shuffled_with_duplicates, 0, 8);
	tcase_add_test(ord, duplicates);
	tcase_add_loop_test(ord, block_sizes, 0, 40);
	tcase_add_test(ord, free_with_state);
	tcase_add_loop_test(ord, placed_blocks, 0, 6);
	tcase_add_test(ord, place_refused);
	tcase_set_timeout(ord, 10);
	suite_add_tcase(s, ord);

	tcase_add_test(bad, corrupt_records);
	tcase_add_test(bad, record_over_max_msg);
	suite_add_tcase(s, bad);
	return s;
}
