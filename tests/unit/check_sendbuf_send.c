/* check_sendbuf_send.c - the send buffer (ldsd/sendbuf.c) handing blocks
 * to streams, resending them, reporting deliveries, resetting. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/sendbuf.h"
#include "ldsd/wire.h"
#include "sbtest.h"
#include "suites.h"

/* ---- sending ------------------------------------------------------------ */

START_TEST(next_respects_window)
{
	struct sendbuf sb;
	struct sb_block *b;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	fill_blocks(&sb, 3, 0);
	ck_assert_int_eq(append(&sb, 50 - RHL, 3, 1), 0);      /* block 3 open, 50 bytes */
	ck_assert_uint_eq(sb.next, 4);
	/* Nothing before the first ACK opens the window. */
	ck_assert_int_eq(sendbuf_has_next(&sb, 1), 0);
	ck_assert_ptr_null(sendbuf_next(&sb, 0, 0));
	ck_assert_ptr_null(sendbuf_next(&sb, 0, 1));
	ck_assert_uint_eq(sb.blocks_sent, 0);

	ck_assert_int_eq(ack(&sb, 0, 2), 0);
	ck_assert_uint_eq(sb.window_end, 2);
	b = take(&sb, 0, 1, 0);
	ck_assert_uint_eq(b->sends, 1);
	ck_assert_uint_eq(b->len, BS);
	take(&sb, 1, 1, 1);
	ck_assert_ptr_null(sendbuf_next(&sb, 0, 1));
	ck_assert_uint_eq(sb.blocks_sent, 2);
	ck_assert_uint_eq(sb.bytes_sent, 2 * BS);

	/* A window going backwards is ignored. */
	ck_assert_int_eq(ack(&sb, 0, 1), 0);
	ck_assert_uint_eq(sb.window_end, 2);

	ck_assert_int_eq(ack(&sb, 0, 10), 0);
	take(&sb, 0, 0, 2);
	/* The open block goes only when partial blocks are allowed; asking
	 * whether there is one does not seal it. */
	ck_assert_int_eq(sendbuf_has_next(&sb, 0), 0);
	ck_assert_int_eq(sendbuf_has_next(&sb, 1), 1);
	ck_assert_int_eq(sb.slots[3].state, SB_OPEN);
	ck_assert_ptr_null(sendbuf_next(&sb, 0, 0));
	ck_assert_int_eq(sb.open, 1);
	ck_assert_int_eq(sb.slots[3].state, SB_OPEN);
	b = take(&sb, 2, 1, 3);
	ck_assert_uint_eq(b->len, 50);
	ck_assert_int_eq(sb.open, 0);
	ck_assert_ptr_null(sendbuf_next(&sb, 0, 1));
	ck_assert_uint_eq(sb.blocks_sent, 4);
	ck_assert_uint_eq(sb.bytes_sent, 3 * BS + 50);
	ck_assert_uint_eq(sb.blocks_resent, 0);
	/* The sealed partial block costs a whole block of space. */
	ck_assert_uint_eq(sendbuf_space(&sb), 4 * BS);
	/* The next append opens a new block. */
	ck_assert_int_eq(append(&sb, 10, 4, 1), 0);
	ck_assert_uint_eq(sb.next, 5);
	ck_assert_int_eq(sb.slots[4].state, SB_OPEN);
	take(&sb, 0, 1, 4);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(next_window_stops_at_open_block)
{
	struct sendbuf sb;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	fill_blocks(&sb, 1, 0);
	ck_assert_int_eq(append(&sb, 50 - RHL, 1, 1), 0);       /* block 1 open */
	ck_assert_int_eq(ack(&sb, 0, 1), 0);
	take(&sb, 0, 1, 0);
	/* Block 1 is outside the window: not sealed even with allow_partial. */
	ck_assert_ptr_null(sendbuf_next(&sb, 0, 1));
	ck_assert_int_eq(sb.open, 1);
	ck_assert_int_eq(sb.slots[1].state, SB_OPEN);
	ck_assert_int_eq(append(&sb, 50 - RHL, 2, 1), 0);       /* still appends to block 1 */
	ck_assert_uint_eq(sb.next, 2);
	ck_assert_uint_eq(sb.slots[1].len, 100);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(release_keeps_block)
{
	struct sendbuf sb;
	struct sb_block *b;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	fill_blocks(&sb, 2, 0);
	ck_assert_int_eq(ack(&sb, 0, 4), 0);
	b = take(&sb, 3, 0, 0);
	sendbuf_release(&sb, b);
	ck_assert_int_eq(b->busy, 0);
	ck_assert_int_eq(b->state, SB_INFLIGHT);
	ck_assert_int_eq(b->stream, 3);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 2 * BS);
	ck_assert_uint_eq(sendbuf_space(&sb), 2 * BS);
	/* Released but unacknowledged: never handed out again by itself. */
	take(&sb, 3, 0, 1);
	ck_assert_ptr_null(sendbuf_next(&sb, 3, 1));
	sendbuf_free(&sb);
}
END_TEST

START_TEST(stream_lost_requeues)
{
	struct sendbuf sb;
	struct sb_block *b[6];

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	fill_blocks(&sb, 6, 0);
	ck_assert_int_eq(ack(&sb, 0, 8), 0);
	b[0] = take(&sb, 1, 0, 0);
	b[1] = take(&sb, 2, 0, 1);
	b[2] = take(&sb, 1, 0, 2);
	b[3] = take(&sb, 2, 0, 3);
	for (int i = 0; i < 4; i++)
		sendbuf_release(&sb, b[i]);

	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1, NULL, NULL), 2);
	ck_assert_int_eq(b[0]->state, SB_READY);
	ck_assert_int_eq(b[0]->stream, -1);
	ck_assert_int_eq(b[2]->state, SB_READY);
	ck_assert_int_eq(b[1]->state, SB_INFLIGHT);
	ck_assert_int_eq(b[3]->state, SB_INFLIGHT);
	ck_assert_uint_eq(sb.resend_pending, 2);
	/* Losing it again queues nothing more; unknown streams nothing. */
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1, NULL, NULL), 0);
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 7, NULL, NULL), 0);

	/* Resends first, lowest first, then new blocks. */
	ck_assert_ptr_eq(take(&sb, 3, 0, 0), b[0]);
	ck_assert_uint_eq(b[0]->sends, 2);
	ck_assert_ptr_eq(take(&sb, 3, 0, 2), b[2]);
	ck_assert_uint_eq(sb.blocks_resent, 2);
	ck_assert_uint_eq(sb.resend_pending, 0);
	take(&sb, 3, 0, 4);
	ck_assert_uint_eq(sb.blocks_resent, 2);
	ck_assert_uint_eq(sb.blocks_sent, 7);

	/* Stream 2 breaks: 1 and 3 jump ahead of block 5. */
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 2, NULL, NULL), 2);
	take(&sb, 4, 0, 1);
	take(&sb, 4, 0, 3);
	take(&sb, 4, 0, 5);
	ck_assert_ptr_null(sendbuf_next(&sb, 4, 1));
	ck_assert_uint_eq(sb.blocks_resent, 4);
	ck_assert_uint_eq(sb.blocks_sent, 10);
	/* Stream 3 held 0, 2 and 4 (4 was never released: still requeued). */
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 3, NULL, NULL), 3);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(stream_lost_busy_waits_for_release)
{
	struct sendbuf sb;
	struct sb_block *b0;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	fill_blocks(&sb, 3, 0);
	ck_assert_int_eq(ack(&sb, 0, 8), 0);
	b0 = take(&sb, 1, 0, 0);
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1, NULL, NULL), 1);
	ck_assert_int_eq(b0->state, SB_READY);
	/* Still being written by the old stream: not handed out twice. */
	take(&sb, 2, 0, 1);
	take(&sb, 2, 0, 2);
	ck_assert_ptr_null(sendbuf_next(&sb, 2, 1));
	sendbuf_release(&sb, b0);
	ck_assert_int_eq(b0->state, SB_READY);
	ck_assert_ptr_eq(take(&sb, 2, 0, 0), b0);
	ck_assert_uint_eq(sb.blocks_resent, 1);
	ck_assert_uint_eq(sb.resend_pending, 0);
	sendbuf_free(&sb);
}
END_TEST

/* Resent blocks carry the same header and bytes as the first time. */
START_TEST(resend_same_frame)
{
	struct sendbuf sb;
	struct sb_block *b;
	uint8_t hdr[WIRE_DATA_HDR_LEN], data[BS];

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	fill_blocks(&sb, 1, 5);
	ck_assert_int_eq(append(&sb, 3, 6, 1), 0);
	ck_assert_int_eq(ack(&sb, 0, 4), 0);
	take(&sb, 0, 0, 0);
	b = take(&sb, 0, 1, 1);
	ck_assert_uint_eq(b->len, RHL + 3);
	memcpy(hdr, b->hdr, sizeof(hdr));
	memcpy(data, b->data, b->len);
	sendbuf_release(&sb, b);
	sendbuf_release(&sb, &sb.slots[0]);
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 0, NULL, NULL), 2);
	take(&sb, 1, 1, 0);
	ck_assert_ptr_eq(take(&sb, 1, 1, 1), b);
	ck_assert_mem_eq(b->hdr, hdr, sizeof(hdr));
	ck_assert_mem_eq(b->data, data, RHL + 3);
	ck_assert_uint_eq(b->len, RHL + 3);
	sendbuf_free(&sb);
}
END_TEST

/* ---- deliveries ------------------------------------------------------ */

START_TEST(delivered_once_any_order)
{
	struct sendbuf sb;
	struct calls c;
	struct wire_ack a;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	for (unsigned i = 0; i < 10; i++)
		ck_assert_int_eq(append(&sb, 0, 100 + i, 7 + (i % 2)), 0);
	memset(&c, 0, sizeof(c));

	memset(&a, 0, sizeof(a));
	a.ndeliv = 2;
	a.deliv[0].start = 3;
	a.deliv[0].end = 5;
	a.deliv[1].start = 7;
	a.deliv[1].end = 8;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &c), 0);
	ck_assert_uint_eq(c.n, 3);
	ck_assert_uint_eq(c.id[0], 103);
	ck_assert_uint_eq(c.client[0], 8);
	ck_assert_uint_eq(c.id[1], 104);
	ck_assert_uint_eq(c.client[1], 7);
	ck_assert_uint_eq(c.id[2], 107);
	ck_assert_uint_eq(c.client[2], 8);
	ck_assert_uint_eq(sb.msg_base, 0);
	ck_assert_uint_eq(sb.msgs_delivered, 3);

	/* Same ACK again: nothing new. */
	ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &c), 0);
	ck_assert_uint_eq(c.n, 3);

	memset(&a, 0, sizeof(a));
	a.deliv_cum = 2;
	a.ndeliv = 1;
	a.deliv[0].start = 3;
	a.deliv[0].end = 6;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &c), 0);
	ck_assert_uint_eq(c.n, 6);
	ck_assert_uint_eq(c.id[3], 100);
	ck_assert_uint_eq(c.client[3], 7);
	ck_assert_uint_eq(c.id[4], 101);
	ck_assert_uint_eq(c.id[5], 105);
	ck_assert_uint_eq(sb.msg_base, 2);          /* 2 is missing */

	/* A stale ACK delivers nothing. */
	memset(&a, 0, sizeof(a));
	a.deliv_cum = 1;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &c), 0);
	ck_assert_uint_eq(c.n, 6);

	memset(&a, 0, sizeof(a));
	a.deliv_cum = 10;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &c), 0);
	ck_assert_uint_eq(c.n, 10);
	ck_assert_uint_eq(c.id[6], 102);
	ck_assert_uint_eq(c.id[7], 106);
	ck_assert_uint_eq(c.id[8], 108);
	ck_assert_uint_eq(c.id[9], 109);
	ck_assert_uint_eq(sb.msg_base, 10);
	ck_assert_uint_eq(sb.msgs_delivered, 10);

	/* Every id exactly once. */
	for (uint64_t id = 100; id < 110; id++) {
		int seen = 0;

		for (size_t k = 0; k < c.n; k++)
			seen += c.id[k] == id;
		ck_assert_int_eq(seen, 1);
	}
	ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &c), 0);
	ck_assert_uint_eq(c.n, 10);
	/* A NULL callback is allowed. */
	ck_assert_int_eq(append(&sb, 0, 110, 7), 0);
	a.deliv_cum = 11;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, NULL, NULL), 0);
	ck_assert_uint_eq(sb.msg_base, 11);
	sendbuf_free(&sb);
}
END_TEST

/* Delivery numbering survives wrapping the message ring several times. */
START_TEST(delivered_ring_wraps)
{
	struct sendbuf sb;
	struct calls c;
	struct wire_ack a;
	uint64_t id = 0;

	ck_assert_int_eq(sendbuf_init(&sb, 1024, 4096), 0);
	ck_assert_uint_eq(sb.max_msgs, 64);
	memset(&a, 0, sizeof(a));
	for (int round = 0; round < 5; round++) {
		memset(&c, 0, sizeof(c));
		for (int i = 0; i < 40; i++, id++)
			ck_assert_int_eq(append(&sb, 0, id, 3), 0);
		/* Deliver the second half first, then all. */
		a.deliv_cum = sb.msg_base;
		a.ndeliv = 1;
		a.deliv[0].start = sb.msg_base + 20;
		a.deliv[0].end = sb.msg_next;
		ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &c), 0);
		a.ndeliv = 0;
		a.deliv_cum = sb.msg_next;
		ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &c), 0);
		ck_assert_uint_eq(c.n, 40);
		for (int i = 0; i < 20; i++) {
			ck_assert_uint_eq(c.id[i], id - 20 + (uint64_t)i);
			ck_assert_uint_eq(c.id[20 + i], id - 40 + (uint64_t)i);
		}
		/* Keep the block stream moving too. */
		while (sb.next - sb.base > 1) {
			struct sb_block *b;

			ck_assert_int_eq(ack(&sb, sb.base, sb.next + 4), 0);
			b = sendbuf_next(&sb, 0, 1);
			ck_assert_ptr_nonnull(b);
			sendbuf_release(&sb, b);
			ck_assert_int_eq(ack(&sb, b->seq + 1, sb.next + 4), 0);
		}
	}
	ck_assert_uint_eq(sb.msgs_delivered, 200);
	sendbuf_free(&sb);
}
END_TEST

/* ---- reset and idle -------------------------------------------------- */

START_TEST(reset_reports_lost)
{
	struct sendbuf sb;
	struct calls lost, dl;
	struct wire_ack a;
	struct sb_block *b;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	for (unsigned i = 0; i < 5; i++)
		ck_assert_int_eq(append(&sb, 200, 1 + i, 20 + i), 0);
	ck_assert_int_eq(ack(&sb, 0, 8), 0);
	b = take(&sb, 0, 0, 0);
	sendbuf_release(&sb, b);
	take(&sb, 0, 0, 1);
	memset(&a, 0, sizeof(a));
	a.recv_cum = 1;
	a.window_end = 8;
	a.ndeliv = 2;
	a.deliv[0].start = 1;
	a.deliv[0].end = 2;
	a.deliv[1].start = 3;
	a.deliv[1].end = 4;
	memset(&dl, 0, sizeof(dl));
	ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &dl), 0);
	ck_assert_uint_eq(dl.n, 2);

	memset(&lost, 0, sizeof(lost));
	sendbuf_reset(&sb, record_call, &lost);
	ck_assert_uint_eq(lost.n, 3);
	ck_assert_uint_eq(lost.id[0], 1);
	ck_assert_uint_eq(lost.client[0], 20);
	ck_assert_uint_eq(lost.id[1], 3);
	ck_assert_uint_eq(lost.client[1], 22);
	ck_assert_uint_eq(lost.id[2], 5);
	ck_assert_uint_eq(lost.client[2], 24);

	ck_assert_uint_eq(sb.base, 0);
	ck_assert_uint_eq(sb.next, 0);
	ck_assert_uint_eq(sb.window_end, 0);
	ck_assert_uint_eq(sb.msg_base, 0);
	ck_assert_uint_eq(sb.msg_next, 0);
	ck_assert_int_eq(sb.open, 0);
	ck_assert_uint_eq(sb.resend_pending, 0);
	ck_assert_int_eq(sendbuf_idle(&sb), 1);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 0);
	/* The busy block is freed by its release. */
	sendbuf_release(&sb, &sb.slots[1]);
	ck_assert_int_eq(sb.slots[1].state, SB_FREE);
	ck_assert_uint_eq(sendbuf_space(&sb), 8 * BS);

	/* A new session: seq 0 again, nothing sendable before its first ACK. */
	ck_assert_int_eq(append(&sb, 5, 77, 9), 0);
	ck_assert_uint_eq(sb.next, 1);
	ck_assert_ptr_null(sendbuf_next(&sb, 0, 1));
	ck_assert_int_eq(ack(&sb, 0, 4), 0);
	b = take(&sb, 0, 1, 0);
	ck_assert_uint_eq(b->len, RHL + 5);
	ck_assert_uint_eq(b->sends, 1);
	ck_assert_uint_eq(sb.msgs[0].id, 77);

	/* A second reset reports only the new message. */
	memset(&lost, 0, sizeof(lost));
	sendbuf_release(&sb, b);
	sendbuf_reset(&sb, record_call, &lost);
	ck_assert_uint_eq(lost.n, 1);
	ck_assert_uint_eq(lost.id[0], 77);
	ck_assert_uint_eq(lost.client[0], 9);
	/* NULL lost callback. */
	ck_assert_int_eq(append(&sb, 5, 78, 9), 0);
	sendbuf_reset(&sb, NULL, NULL);
	ck_assert_int_eq(sendbuf_idle(&sb), 1);
	sendbuf_free(&sb);
}
END_TEST

/* The peer reports messages it dropped: each is reported lost once, a
 * later ACK covering it does not report it acknowledged, and numbers
 * outside what is pending are ignored. */
START_TEST(idle_states)
{
	struct sendbuf sb;
	struct sb_block *b;
	struct wire_ack a;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	ck_assert_int_eq(sendbuf_idle(&sb), 1);
	ck_assert_int_eq(append(&sb, 10, 1, 1), 0);
	ck_assert_int_eq(sendbuf_idle(&sb), 0);
	ck_assert_int_eq(ack(&sb, 0, 4), 0);
	b = take(&sb, 0, 1, 0);
	sendbuf_release(&sb, b);
	ck_assert_int_eq(sendbuf_idle(&sb), 0);
	/* Acknowledged but not delivered: not idle. */
	ck_assert_int_eq(ack(&sb, 1, 4), 0);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 0);
	ck_assert_int_eq(sendbuf_idle(&sb), 0);
	memset(&a, 0, sizeof(a));
	a.recv_cum = 1;
	a.window_end = 4;
	a.deliv_cum = 1;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, NULL, NULL), 0);
	ck_assert_int_eq(sendbuf_idle(&sb), 1);
	/* Delivered but a block still unacked: not idle. */
	ck_assert_int_eq(append(&sb, 10, 2, 1), 0);
	b = take(&sb, 0, 1, 1);
	sendbuf_release(&sb, b);
	a.deliv_cum = 2;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, NULL, NULL), 0);
	ck_assert_uint_eq(sb.msg_base, 2);
	ck_assert_int_eq(sendbuf_idle(&sb), 0);
	ck_assert_int_eq(ack(&sb, 2, 4), 0);
	ck_assert_int_eq(sendbuf_idle(&sb), 1);
	ck_assert_uint_eq(sendbuf_space(&sb), 4 * BS);
	sendbuf_free(&sb);
}
END_TEST

Suite *make_sendbuf_send_suite(void)
{
	Suite *s = suite_create("sendbuf_send");
	TCase *tx = tcase_create("send");
	TCase *dv = tcase_create("deliver");

	tcase_add_test(tx, next_respects_window);
	tcase_add_test(tx, next_window_stops_at_open_block);
	tcase_add_test(tx, release_keeps_block);
	tcase_add_test(tx, stream_lost_requeues);
	tcase_add_test(tx, stream_lost_busy_waits_for_release);
	tcase_add_test(tx, resend_same_frame);
	suite_add_tcase(s, tx);

	tcase_add_test(dv, delivered_once_any_order);
	tcase_add_test(dv, delivered_ring_wraps);
	tcase_add_test(dv, reset_reports_lost);
	tcase_add_test(dv, idle_states);
	suite_add_tcase(s, dv);
	return s;
}
