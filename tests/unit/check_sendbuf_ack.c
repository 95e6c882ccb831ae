/* check_sendbuf_ack.c - the send buffer (ldsd/sendbuf.c) taking the
 * peer's acknowledgements: cumulative, selective, impossible ones, and the
 * drops the peer reports. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/sendbuf.h"
#include "ldsd/wire.h"
#include "sbtest.h"
#include "suites.h"

/* ---- acknowledgements ------------------------------------------------ */

START_TEST(cumulative_ack_frees)
{
	struct sendbuf sb;
	struct sb_block *b;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	fill_blocks(&sb, 4, 0);
	ck_assert_uint_eq(sendbuf_space(&sb), 0);
	ck_assert_int_eq(append(&sb, 0, 9, 1), -ENOSPC);
	ck_assert_int_eq(ack(&sb, 0, 4), 0);
	for (unsigned i = 0; i < 4; i++) {
		b = take(&sb, 1, 0, i);
		sendbuf_release(&sb, b);
	}
	ck_assert_int_eq(ack(&sb, 2, 6), 0);
	ck_assert_uint_eq(sb.base, 2);
	ck_assert_uint_eq(sb.blocks_acked, 2);
	ck_assert_uint_eq(sb.bytes_acked, 2 * BS);
	ck_assert_uint_eq(sendbuf_space(&sb), 2 * BS);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 2 * BS);
	ck_assert_int_eq(sb.slots[0].state, SB_FREE);
	ck_assert_int_eq(sb.slots[1].state, SB_FREE);
	ck_assert_int_eq(sb.slots[2].state, SB_INFLIGHT);
	/* Duplicate and stale ACKs change nothing. */
	ck_assert_int_eq(ack(&sb, 2, 6), 0);
	ck_assert_int_eq(ack(&sb, 1, 5), 0);
	ck_assert_uint_eq(sb.base, 2);
	ck_assert_uint_eq(sb.blocks_acked, 2);
	ck_assert_uint_eq(sb.window_end, 6);
	/* Only what recv_cum has not passed is resent. */
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1, NULL, NULL), 2);
	take(&sb, 2, 0, 2);
	take(&sb, 2, 0, 3);
	/* The freed slots take new blocks 4 and 5. */
	fill_blocks(&sb, 2, 4);
	ck_assert_uint_eq(sb.next, 6);
	ck_assert_uint_eq(sendbuf_space(&sb), 0);
	take(&sb, 2, 0, 4);
	take(&sb, 2, 0, 5);
	ck_assert_uint_eq(sb.slots[0].seq, 4);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(sacked_not_resent)
{
	struct sendbuf sb;
	struct sb_block *b;
	struct wire_ack a;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	fill_blocks(&sb, 4, 0);
	ck_assert_int_eq(ack(&sb, 0, 8), 0);
	for (unsigned i = 0; i < 4; i++) {
		b = take(&sb, 1, 0, i);
		sendbuf_release(&sb, b);
	}
	memset(&a, 0, sizeof(a));
	a.recv_cum = 0;
	a.window_end = 8;
	a.nsack = 1;
	a.sack[0].start = 1;
	a.sack[0].end = 3;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, NULL, NULL), 0);
	ck_assert_int_eq(sb.slots[1].state, SB_SACKED);
	ck_assert_int_eq(sb.slots[2].state, SB_SACKED);
	ck_assert_uint_eq(sb.base, 0);
	/* They reached the peer, though not acknowledged in order. */
	ck_assert_uint_eq(sb.bytes_reached, 2 * BS);
	ck_assert_uint_eq(sb.bytes_acked, 0);
	ck_assert_int_eq(sendbuf_ack(&sb, &a, NULL, NULL), 0);
	ck_assert_uint_eq(sb.bytes_reached, 2 * BS);
	/* SACKed blocks are kept (still unacked bytes). */
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 4 * BS);
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1, NULL, NULL), 2);
	take(&sb, 2, 0, 0);
	take(&sb, 2, 0, 3);
	ck_assert_ptr_null(sendbuf_next(&sb, 2, 1));
	ck_assert_uint_eq(sb.blocks_resent, 2);
	/* recv_cum passing them frees them, and counts each block once. */
	ck_assert_int_eq(ack(&sb, 3, 8), 0);
	ck_assert_uint_eq(sb.base, 3);
	ck_assert_uint_eq(sb.bytes_acked, 3 * BS);
	ck_assert_uint_eq(sb.bytes_reached, 3 * BS);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(sack_of_requeued_block)
{
	struct sendbuf sb;
	struct sb_block *b;
	struct wire_ack a;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	fill_blocks(&sb, 4, 0);
	ck_assert_int_eq(ack(&sb, 0, 8), 0);
	for (unsigned i = 0; i < 4; i++) {
		b = take(&sb, 1, 0, i);
		sendbuf_release(&sb, b);
	}
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1, NULL, NULL), 4);
	ck_assert_uint_eq(sb.resend_pending, 4);
	/* The SACK arrives after the loss: 1 and 2 need no resend. */
	memset(&a, 0, sizeof(a));
	a.window_end = 8;
	a.nsack = 1;
	a.sack[0].start = 1;
	a.sack[0].end = 3;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, NULL, NULL), 0);
	ck_assert_uint_eq(sb.resend_pending, 2);
	b = take(&sb, 2, 0, 0);
	sendbuf_release(&sb, b);
	b = take(&sb, 2, 0, 3);
	sendbuf_release(&sb, b);
	ck_assert_ptr_null(sendbuf_next(&sb, 2, 1));
	ck_assert_uint_eq(sb.resend_pending, 0);
	/* A cumulative ACK over a requeued block cancels its resend. */
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 2, NULL, NULL), 2);
	ck_assert_uint_eq(sb.resend_pending, 2);
	ck_assert_int_eq(ack(&sb, 1, 8), 0);
	ck_assert_uint_eq(sb.resend_pending, 1);
	take(&sb, 3, 0, 3);
	ck_assert_ptr_null(sendbuf_next(&sb, 3, 1));
	ck_assert_uint_eq(sb.resend_pending, 0);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(acked_while_busy_freed_at_release)
{
	struct sendbuf sb;
	struct sb_block *b;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	fill_blocks(&sb, 2, 0);
	ck_assert_int_eq(ack(&sb, 0, 4), 0);
	b = take(&sb, 1, 0, 0);
	ck_assert_int_eq(ack(&sb, 1, 4), 0);
	ck_assert_uint_eq(sb.base, 1);
	ck_assert_int_eq(b->freed, 1);
	ck_assert_int_eq(b->busy, 1);
	ck_assert_int_ne(b->state, SB_FREE);
	ck_assert_uint_eq(b->len, BS);          /* still readable by the stream */
	ck_assert_uint_eq(sb.blocks_acked, 1);
	sendbuf_release(&sb, b);
	ck_assert_int_eq(b->state, SB_FREE);
	ck_assert_int_eq(b->busy, 0);
	ck_assert_int_eq(b->freed, 0);
	ck_assert_uint_eq(b->len, 0);
	/* Not resent when the stream is lost afterwards. */
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1, NULL, NULL), 0);
	take(&sb, 1, 0, 1);
	sendbuf_free(&sb);
}
END_TEST

/*
 * BUG (sendbuf.c): a block acknowledged while busy stays referenced by the
 * stream writing it (link.c keeps s->cur across EAGAIN), but sendbuf_ack
 * moves base past it at once, so sendbuf_space() counts its slot as free and
 * new appends reopen the very same slot (sb_open_block resets seq, len, busy
 * and overwrites data) while the stream is still writing it.  Realistic path:
 * block 0 is resent on stream 2 after stream 1 broke, and the original copy's
 * ACK arrives while stream 2 is still writing.
 */
START_TEST(busy_acked_slot_not_reused)
{
	struct sendbuf sb;
	struct sb_block *b;
	uint8_t copy[64];
	int i;

	ck_assert_int_eq(sendbuf_init(&sb, 64, 256), 0);
	ck_assert_int_eq(append(&sb, 64 - RHL, 0, 1), 0);       /* block 0, full */
	ck_assert_int_eq(ack(&sb, 0, 100), 0);
	b = take(&sb, 1, 0, 0);
	sendbuf_release(&sb, b);
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1, NULL, NULL), 1);
	ck_assert_ptr_eq(take(&sb, 2, 0, 0), b);                /* resending */
	memcpy(copy, b->data, 64);
	ck_assert_int_eq(ack(&sb, 1, 100), 0);                  /* first copy arrived */
	for (i = 0; i < 16; i++)
		if (append(&sb, 64 - RHL, (uint64_t)i + 1, 1) != 0)
			break;
	/* Stream 2 is still writing b: it must be intact. */
	ck_assert_uint_eq(b->seq, 0);
	ck_assert_uint_eq(b->len, 64);
	ck_assert_int_eq(b->busy, 1);
	ck_assert_mem_eq(b->data, copy, 64);
	sendbuf_release(&sb, b);
	sendbuf_free(&sb);
}
END_TEST

/*
 * BUG (sendbuf.c): ACKs arrive out of order (docs/protocol.md: ignore values
 * that go backwards), but sendbuf_ack applies the SACK ranges of a stale ACK
 * (recv_cum < base) to seqs below base: sb_slot(seq) then is the slot of a
 * newer block seq + nslots, which gets marked SB_SACKED although the peer
 * never saw it.  Here block 5 - never sent - becomes SACKED and is never
 * sent at all: the link stalls.
 */
START_TEST(stale_sack_does_not_hit_newer_block)
{
	struct sendbuf sb;
	struct sb_block *b;
	struct wire_ack stale;

	ck_assert_int_eq(sendbuf_init(&sb, 64, 256), 0);       /* 4 slots */
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(append(&sb, 64 - RHL, (uint64_t)i, 1), 0);
	ck_assert_int_eq(ack(&sb, 0, 8), 0);
	for (unsigned i = 0; i < 4; i++) {
		b = take(&sb, 1, 0, i);
		sendbuf_release(&sb, b);
	}
	/* The peer sent "recv_cum 0, sack [1,4)" then "recv_cum 4"; the
	 * second overtakes the first. */
	memset(&stale, 0, sizeof(stale));
	stale.recv_cum = 0;
	stale.window_end = 8;
	stale.nsack = 1;
	stale.sack[0].start = 1;
	stale.sack[0].end = 4;
	ck_assert_int_eq(ack(&sb, 4, 8), 0);
	ck_assert_uint_eq(sb.base, 4);
	ck_assert_int_eq(append(&sb, 64 - RHL, 4, 1), 0);       /* block 4, slot 0 */
	ck_assert_int_eq(append(&sb, 64 - RHL, 5, 1), 0);       /* block 5, slot 1 */
	ck_assert_int_eq(sendbuf_ack(&sb, &stale, NULL, NULL), 0);
	take(&sb, 1, 0, 4);
	take(&sb, 1, 0, 5);             /* fails: block 5 was marked SACKED */
	ck_assert_ptr_null(sendbuf_next(&sb, 1, 1));
	sendbuf_free(&sb);
}
END_TEST

START_TEST(impossible_acks)
{
	struct sendbuf sb;
	struct calls c;
	struct wire_ack a, ok;
	struct sb_block *b;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	fill_blocks(&sb, 3, 0);
	ck_assert_int_eq(append(&sb, 10, 3, 1), 0);             /* block 3 open; 4 msgs */
	ck_assert_int_eq(ack(&sb, 0, 3), 0);
	for (unsigned i = 0; i < 3; i++) {
		b = take(&sb, 1, 0, i);
		sendbuf_release(&sb, b);
	}
	memset(&ok, 0, sizeof(ok));
	ok.recv_cum = 1;
	ok.window_end = 5;
	ok.deliv_cum = 1;
	memset(&c, 0, sizeof(c));

	/* Each is ok (1, 5, 1, no ranges) but for one impossible part. */
	static const struct wire_ack bad[] = {
		{ .recv_cum = 5, .window_end = 6, .deliv_cum = 1 },   /* recv_cum beyond next */
		{ .recv_cum = 4, .window_end = 5, .deliv_cum = 1 },   /* covers the open block */
		{ .recv_cum = 1, .window_end = 5, .deliv_cum = 5 },   /* deliv_cum beyond msg_next */
		{ .recv_cum = 1, .window_end = 0, .deliv_cum = 1 },   /* window_end below recv_cum */
		{ .recv_cum = 1, .window_end = 5, .deliv_cum = 1, .nsack = 1, .sack = { { 2, 5 } } },   /* sack beyond next */
		{ .recv_cum = 1, .window_end = 5, .deliv_cum = 1, .nsack = 1, .sack = { { 2, 2 } } },   /* empty sack range */
		{ .recv_cum = 1, .window_end = 5, .deliv_cum = 1, .ndeliv = 1, .deliv = { { 2, 5 } } }, /* deliv beyond msg_next */
		{ .recv_cum = 1, .window_end = 5, .deliv_cum = 1, .ndeliv = 1, .deliv = { { 3, 3 } } }, /* empty deliv range */
		{ .recv_cum = 1, .window_end = 5, .deliv_cum = 1, .ndeliv = 2,
		  .deliv = { { 2, 3 }, { 3, 9 } } },                 /* second deliv range bad */
		{ .recv_cum = 1, .window_end = 5, .deliv_cum = 1, .nsack = 2,
		  .sack = { { 1, 2 }, { 2, 7 } } },                  /* a good sack range, then a bad one */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a = bad[i];
		ck_assert_msg(sendbuf_ack(&sb, &a, record_call, &c) == -EPROTO, "impossible ack %zu accepted", i);
	}

	/* None of them changed anything. */
	ck_assert_uint_eq(c.n, 0);
	ck_assert_uint_eq(sb.base, 0);
	ck_assert_uint_eq(sb.window_end, 3);
	ck_assert_uint_eq(sb.msg_base, 0);
	ck_assert_uint_eq(sb.msgs_delivered, 0);
	ck_assert_uint_eq(sb.blocks_acked, 0);
	ck_assert_int_eq(sb.slots[1].state, SB_INFLIGHT);
	ck_assert_int_eq(sb.slots[2].state, SB_INFLIGHT);

	/* The boundary values are fine. */
	a = ok;
	a.deliv_cum = 4;
	a.nsack = 1;
	a.sack[0].start = 1;
	a.sack[0].end = 3;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &c), 0);
	ck_assert_uint_eq(c.n, 4);
	ck_assert_uint_eq(sb.base, 1);
	ck_assert_uint_eq(sb.window_end, 5);
	ck_assert_int_eq(sb.slots[1].state, SB_SACKED);
	ck_assert_int_eq(sb.slots[2].state, SB_SACKED);
	sendbuf_free(&sb);
}
END_TEST

/*
 * BUG (minor, sendbuf.c): docs/protocol.md calls an ACK that acknowledges
 * blocks never sent impossible, and sendbuf_ack itself rejects a recv_cum
 * covering the open block - but a SACK range covering the open block (never
 * sealed, never sent) is accepted, because ranges are only checked against
 * next.
 */
START_TEST(sack_of_open_block_is_eproto)
{
	struct sendbuf sb;
	struct wire_ack a;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	fill_blocks(&sb, 1, 0);
	ck_assert_int_eq(append(&sb, 10, 1, 1), 0);             /* block 1 open */
	memset(&a, 0, sizeof(a));
	a.window_end = 4;
	a.nsack = 1;
	a.sack[0].start = 1;
	a.sack[0].end = 2;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, NULL, NULL), -EPROTO);
	sendbuf_free(&sb);
}
END_TEST

/*
 * BUG (minor, sendbuf.c): the same for sealed blocks that were never handed
 * out: recv_cum may cover them (only recv_cum > next is checked), contrary
 * to "An ACK is impossible if it acknowledges blocks ... that were never
 * sent" (docs/protocol.md, sendbuf.h).
 */
START_TEST(ack_of_unsent_block_is_eproto)
{
	struct sendbuf sb;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	fill_blocks(&sb, 2, 0);
	ck_assert_int_eq(ack(&sb, 0, 4), 0);
	take(&sb, 1, 0, 0);
	/* Block 1 is sealed but was never sent. */
	ck_assert_int_eq(ack(&sb, 2, 4), -EPROTO);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(peer_drops_reported_lost)
{
	struct sendbuf sb;
	struct calls lost, dl;
	struct wire_ack a;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(append(&sb, 10, 1 + i, 30 + i), 0);
	memset(&lost, 0, sizeof(lost));
	sendbuf_msgs_lost(&sb, 1, 2, record_call, &lost);
	sendbuf_msgs_lost(&sb, 2, 2, record_call, &lost);
	sendbuf_msgs_lost(&sb, 5, 99, record_call, &lost);
	ck_assert_uint_eq(lost.n, 2);
	ck_assert_uint_eq(lost.id[0], 2);
	ck_assert_uint_eq(lost.client[0], 31);
	ck_assert_uint_eq(lost.id[1], 3);
	ck_assert_uint_eq(sb.msgs_lost, 2);
	ck_assert_uint_eq(sb.msg_base, 0);
	/* The peer's ACK then counts every one done: only 0, 3 and 4 were
	 * delivered. */
	memset(&a, 0, sizeof(a));
	a.window_end = 8;
	a.deliv_cum = 5;
	memset(&dl, 0, sizeof(dl));
	ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &dl), 0);
	ck_assert_uint_eq(dl.n, 3);
	ck_assert_uint_eq(dl.id[0], 1);
	ck_assert_uint_eq(dl.id[1], 4);
	ck_assert_uint_eq(dl.id[2], 5);
	ck_assert_uint_eq(sb.msg_base, 5);
	/* Numbers below msg_base: nothing. */
	sendbuf_msgs_lost(&sb, 0, 4, record_call, &lost);
	ck_assert_uint_eq(lost.n, 2);
	sendbuf_free(&sb);
}
END_TEST

Suite *make_sendbuf_ack_suite(void)
{
	Suite *s = suite_create("sendbuf_ack");
	TCase *ak = tcase_create("ack");

	tcase_add_test(ak, cumulative_ack_frees);
	tcase_add_test(ak, sacked_not_resent);
	tcase_add_test(ak, sack_of_requeued_block);
	tcase_add_test(ak, acked_while_busy_freed_at_release);
	tcase_add_test(ak, busy_acked_slot_not_reused);
	tcase_add_test(ak, stale_sack_does_not_hit_newer_block);
	tcase_add_test(ak, impossible_acks);
	tcase_add_test(ak, sack_of_open_block_is_eproto);
	tcase_add_test(ak, ack_of_unsent_block_is_eproto);
	tcase_add_test(ak, peer_drops_reported_lost);
	suite_add_tcase(s, ak);
	return s;
}
