/* check_sendbuf.c - unit tests of the sending half of a link (ldsd/sendbuf.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/sendbuf.h"
#include "ldsd/wire.h"
#include "suites.h"

/* ---- helpers --------------------------------------------------------- */

#define SRC "clusterA/src"
#define DST "clusterB/dst"
/* Record header with SRC and DST: WIRE_REC_FIXED + 12 + 12 bytes. */
#define RHL (WIRE_REC_FIXED + 24u)

static uint64_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

static void mkrec(struct wire_record *r, uint32_t len, uint64_t id)
{
	memset(r, 0, sizeof(*r));
	r->len = len;
	r->msg_id = id;
	snprintf(r->src, sizeof(r->src), "%s", SRC);
	snprintf(r->dst, sizeof(r->dst), "%s", DST);
}

/* Appends a message of len payload bytes (filled from id) and returns
 * sendbuf_append's result. */
static int append(struct sendbuf *sb, uint32_t len, uint64_t id, uint64_t client)
{
	struct wire_record r;
	uint8_t *p = malloc(len ? len : 1);
	int ret;

	ck_assert_ptr_nonnull(p);
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(id * 31 + i);
	mkrec(&r, len, id);
	ret = sendbuf_append(sb, &r, p, client, NULL);
	free(p);
	return ret;
}

static int ack(struct sendbuf *sb, uint64_t recv_cum, uint64_t window_end)
{
	struct wire_ack a;

	memset(&a, 0, sizeof(a));
	a.recv_cum = recv_cum;
	a.window_end = window_end;
	return sendbuf_ack(sb, &a, NULL, NULL);
}

/* Records the (client, id) pairs a callback was called with. */
struct calls {
	size_t n;
	uint64_t client[256];
	uint64_t id[256];
};

static void record_call(void *arg, const struct sb_msg *m)
{
	struct calls *c = arg;

	ck_assert_uint_lt(c->n, 256);
	c->client[c->n] = m->client;
	c->id[c->n] = m->id;
	c->n++;
}

/* Takes the next block and checks it is seq. */
static struct sb_block *take(struct sendbuf *sb, int stream, int partial, uint64_t seq)
{
	struct sb_block *b;

	ck_assert_int_eq(sendbuf_has_next(sb, partial), 1);
	b = sendbuf_next(sb, stream, partial);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->seq, seq);
	ck_assert_int_eq(b->stream, stream);
	ck_assert_int_eq(b->busy, 1);
	ck_assert_int_eq(b->state, SB_INFLIGHT);
	return b;
}

/* A buffer of 256-byte blocks holding nblocks full blocks: each message
 * is exactly one block (RHL + 216 payload bytes). */
#define BS 256u
static void fill_blocks(struct sendbuf *sb, unsigned nblocks, uint64_t first_id)
{
	for (unsigned i = 0; i < nblocks; i++)
		ck_assert_int_eq(append(sb, BS - RHL, first_id + i, 1), 0);
}

/* ---- init and append ------------------------------------------------- */

START_TEST(init_sizes)
{
	struct sendbuf sb;

	ck_assert_int_eq(sendbuf_init(&sb, 1000, 4500), 0);
	ck_assert_uint_eq(sb.block_size, 1000);
	ck_assert_uint_eq(sb.nslots, 4);
	ck_assert_uint_eq(sb.mem, 4000);
	ck_assert_uint_eq(sb.max_msgs, 64);
	ck_assert_uint_eq(sendbuf_space(&sb), 4000);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 0);
	ck_assert_int_eq(sendbuf_idle(&sb), 1);
	ck_assert_uint_eq(sb.base, 0);
	ck_assert_uint_eq(sb.next, 0);
	ck_assert_uint_eq(sb.window_end, 0);
	ck_assert_int_eq(sb.open, 0);
	for (size_t i = 0; i < sb.nslots; i++) {
		ck_assert_int_eq(sb.slots[i].state, SB_FREE);
		ck_assert_int_eq(sb.slots[i].stream, -1);
	}
	ck_assert_ptr_null(sendbuf_next(&sb, 0, 1));
	sendbuf_free(&sb);

	ck_assert_int_eq(sendbuf_init(&sb, 4096, 1u << 20), 0);
	ck_assert_uint_eq(sb.nslots, 256);
	ck_assert_uint_eq(sb.mem, 1u << 20);
	ck_assert_uint_eq(sb.max_msgs, (1u << 20) / 256);
	ck_assert_uint_eq(sendbuf_space(&sb), 1u << 20);
	sendbuf_free(&sb);
	/* Freeing twice is harmless. */
	sendbuf_free(&sb);
}
END_TEST

START_TEST(append_accounting)
{
	struct sendbuf sb;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	ck_assert_int_eq(append(&sb, 100 - RHL, 1, 5), 0);      /* 100 bytes */
	ck_assert_uint_eq(sendbuf_space(&sb), 4 * BS - 100);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 100);
	ck_assert_uint_eq(sb.next, 1);
	ck_assert_int_eq(sb.open, 1);
	ck_assert_int_eq(sb.slots[0].state, SB_OPEN);
	ck_assert_uint_eq(sb.slots[0].len, 100);
	ck_assert_uint_eq(sb.msg_next, 1);
	ck_assert_uint_eq(sb.msgs[0].client, 5);
	ck_assert_uint_eq(sb.msgs[0].id, 1);
	ck_assert_int_eq(sendbuf_idle(&sb), 0);

	ck_assert_int_eq(append(&sb, 240 - RHL, 2, 6), 0);      /* 240 bytes: 340 in all */
	ck_assert_uint_eq(sb.next, 2);
	ck_assert_int_eq(sb.slots[0].state, SB_READY);          /* sealed when full */
	ck_assert_uint_eq(sb.slots[0].len, BS);
	ck_assert_int_eq(sb.slots[1].state, SB_OPEN);
	ck_assert_uint_eq(sb.slots[1].len, 340 - BS);
	ck_assert_uint_eq(sendbuf_space(&sb), 4 * BS - 340);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 340);
	ck_assert_uint_eq(sb.msg_next, 2);

	/* Exactly filling the open block seals it and opens nothing. */
	ck_assert_int_eq(append(&sb, 2 * BS - 340 - RHL, 3, 6), 0);
	ck_assert_uint_eq(sb.next, 2);
	ck_assert_int_eq(sb.open, 0);
	ck_assert_int_eq(sb.slots[1].state, SB_READY);
	ck_assert_uint_eq(sendbuf_space(&sb), 2 * BS);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 2 * BS);

	/* Empty payloads are records too. */
	ck_assert_int_eq(append(&sb, 0, 4, 6), 0);
	ck_assert_uint_eq(sendbuf_space(&sb), 2 * BS - RHL);
	ck_assert_uint_eq(sb.msg_next, 4);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(append_enospc)
{
	struct sendbuf sb;
	size_t space, next, msgs;
	int i;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	for (i = 0; i < 100; i++)
		if (append(&sb, 150 - RHL, (uint64_t)i, 1) != 0)
			break;
	ck_assert_int_eq(i, 4 * BS / 150);                       /* 6 fit, 900 bytes */
	space = sendbuf_space(&sb);
	ck_assert_uint_eq(space, 4 * BS - 6 * 150);
	next = sb.next;
	msgs = sb.msg_next;
	ck_assert_int_eq(append(&sb, 150 - RHL, 99, 1), -ENOSPC);
	/* A failed append changes nothing. */
	ck_assert_uint_eq(sendbuf_space(&sb), space);
	ck_assert_uint_eq(sb.next, next);
	ck_assert_uint_eq(sb.msg_next, msgs);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 6 * 150);
	/* What still fits does. */
	ck_assert_int_eq(append(&sb, (uint32_t)(space - RHL), 100, 1), 0);
	ck_assert_uint_eq(sendbuf_space(&sb), 0);
	ck_assert_int_eq(append(&sb, 0, 101, 1), -ENOSPC);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(append_msg_table_full)
{
	struct sendbuf sb;
	struct wire_ack a;

	/* 4096 / 256 = 16 entries, raised to the floor of 64. */
	ck_assert_int_eq(sendbuf_init(&sb, 1024, 4096), 0);
	ck_assert_uint_eq(sb.max_msgs, 64);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(append(&sb, 0, (uint64_t)i, 1), 0);
	ck_assert_uint_gt(sendbuf_space(&sb), RHL);
	ck_assert_int_eq(append(&sb, 0, 64, 1), -ENOSPC);
	ck_assert_uint_eq(sb.msg_next, 64);
	/* A delivery frees an entry. */
	memset(&a, 0, sizeof(a));
	a.deliv_cum = 1;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, NULL, NULL), 0);
	ck_assert_uint_eq(sb.msg_base, 1);
	ck_assert_int_eq(append(&sb, 0, 64, 1), 0);
	ck_assert_uint_eq(sb.msgs[64 % 64].id, 64);
	ck_assert_int_eq(append(&sb, 0, 65, 1), -ENOSPC);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(append_emsgsize_einval)
{
	struct sendbuf sb;
	struct wire_record r;
	uint8_t pay[8] = { 0 };

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	/* Larger than all of memory: can never fit. */
	ck_assert_int_eq(append(&sb, 4 * BS - RHL + 1, 1, 1), -EMSGSIZE);
	ck_assert_int_eq(append(&sb, 100000, 1, 1), -EMSGSIZE);
	ck_assert_uint_eq(sb.next, 0);
	ck_assert_uint_eq(sb.msg_next, 0);
	/* mem - block_size bytes of record fit in an empty buffer. */
	ck_assert_int_eq(append(&sb, 3 * BS - RHL, 1, 1), 0);
	ck_assert_uint_eq(sb.next, 3);
	ck_assert_uint_eq(sendbuf_space(&sb), BS);
	/* Too big stays -EMSGSIZE (not -ENOSPC) when the buffer is busy. */
	ck_assert_int_eq(append(&sb, 4 * BS, 2, 1), -EMSGSIZE);
	/* Bad names. */
	mkrec(&r, 8, 3);
	snprintf(r.src, sizeof(r.src), "nocluster");
	ck_assert_int_eq(sendbuf_append(&sb, &r, pay, 1, NULL), -EINVAL);
	mkrec(&r, 8, 3);
	snprintf(r.dst, sizeof(r.dst), "clusterB/bad name");
	ck_assert_int_eq(sendbuf_append(&sb, &r, pay, 1, NULL), -EINVAL);
	ck_assert_uint_eq(sb.msg_next, 1);
	ck_assert_uint_eq(sendbuf_space(&sb), BS);
	sendbuf_free(&sb);
}
END_TEST

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

	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1), 2);
	ck_assert_int_eq(b[0]->state, SB_READY);
	ck_assert_int_eq(b[0]->stream, -1);
	ck_assert_int_eq(b[2]->state, SB_READY);
	ck_assert_int_eq(b[1]->state, SB_INFLIGHT);
	ck_assert_int_eq(b[3]->state, SB_INFLIGHT);
	ck_assert_uint_eq(sb.resend_pending, 2);
	/* Losing it again queues nothing more; unknown streams nothing. */
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1), 0);
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 7), 0);

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
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 2), 2);
	take(&sb, 4, 0, 1);
	take(&sb, 4, 0, 3);
	take(&sb, 4, 0, 5);
	ck_assert_ptr_null(sendbuf_next(&sb, 4, 1));
	ck_assert_uint_eq(sb.blocks_resent, 4);
	ck_assert_uint_eq(sb.blocks_sent, 10);
	/* Stream 3 held 0, 2 and 4 (4 was never released: still requeued). */
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 3), 3);
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
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1), 1);
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
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1), 2);
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
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1), 2);
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
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1), 4);
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
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 2), 2);
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
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1), 0);
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
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 1), 1);
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

/* ---- block contents -------------------------------------------------- */

struct expect {
	uint32_t len;
	uint64_t id;
	uint8_t *data;
};

/* Checks one handed-out block's frame and appends its payload to out. */
static void check_block_frame(const struct sb_block *b, uint64_t seq, uint8_t *out, size_t *outlen, size_t cap)
{
	uint8_t frame[WIRE_DATA_HDR_LEN + 512];
	struct wire_frame f;
	size_t consumed = 0;
	uint64_t fseq = ~0ull;
	const uint8_t *data;
	uint32_t dlen;

	ck_assert_uint_eq(b->seq, seq);
	ck_assert_uint_ge(b->len, 1);
	ck_assert_uint_le(b->len, 512);
	memcpy(frame, b->hdr, WIRE_DATA_HDR_LEN);
	memcpy(frame + WIRE_DATA_HDR_LEN, b->data, b->len);
	ck_assert_int_eq(wire_frame_parse(frame, WIRE_DATA_HDR_LEN + b->len, &f, &consumed), 1);
	ck_assert_uint_eq(consumed, WIRE_DATA_HDR_LEN + b->len);
	ck_assert_uint_eq(f.type, WIRE_DATA);
	ck_assert_int_eq(wire_decode_data(&f, &fseq, &data, &dlen), 0);
	ck_assert_uint_eq(fseq, seq);
	ck_assert_uint_eq(dlen, b->len);
	ck_assert_mem_eq(data, b->data, b->len);
	/* The CRC covers the payload. */
	frame[WIRE_DATA_HDR_LEN + b->len - 1] ^= 0x40;
	ck_assert_int_eq(wire_frame_parse(frame, WIRE_DATA_HDR_LEN + b->len, &f, &consumed), -EBADMSG);

	ck_assert_uint_le(*outlen + b->len, cap);
	memcpy(out + *outlen, b->data, b->len);
	*outlen += b->len;
}

/* A sealed link's blocks carry no clear header: sealq.c makes the frame,
 * and the CRC pass is saved. */
START_TEST(no_hdr)
{
	static const uint8_t zero[WIRE_DATA_HDR_LEN];
	struct sendbuf sb;
	struct sb_block *b;

	ck_assert_int_eq(sendbuf_init(&sb, 512, 4 * 512), 0);
	sb.no_hdr = 1;
	ck_assert_int_eq(append(&sb, 100, 1, 1), 0);
	ck_assert_int_eq(ack(&sb, 0, 16), 0);
	b = sendbuf_next(&sb, 0, 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->seq, 0);
	ck_assert_uint_eq(b->len, RHL + 100);
	ck_assert_mem_eq(b->hdr, zero, WIRE_DATA_HDR_LEN);
	sendbuf_release(&sb, b);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(block_contents_roundtrip)
{
	enum { NMSG = 150, BSZ = 512 };
	struct sendbuf sb;
	struct expect *ex = calloc(NMSG, sizeof(*ex));
	size_t cap = (size_t)NMSG * (RHL + 3 * BSZ), outlen = 0, off;
	uint8_t *out = malloc(cap);
	uint64_t seq = 0;
	int appended = 0, guard;
	struct calls dl;

	ck_assert_ptr_nonnull(ex);
	ck_assert_ptr_nonnull(out);
	rng_state = 12345;
	for (int i = 0; i < NMSG; i++) {
		ex[i].len = rng() % (3 * BSZ + 1);
		ex[i].id = 1000 + (uint64_t)i * 7;
		ex[i].data = malloc(ex[i].len ? ex[i].len : 1);
		ck_assert_ptr_nonnull(ex[i].data);
		for (uint32_t k = 0; k < ex[i].len; k++)
			ex[i].data[k] = (uint8_t)rng();
	}
	/* Zero-length and maximal ones are certainly there. */
	ex[3].len = 0;
	ex[4].len = 3 * BSZ;
	ex[4].data = realloc(ex[4].data, 3 * BSZ);
	ck_assert_ptr_nonnull(ex[4].data);
	memset(ex[4].data, 0xA5, 3 * BSZ);

	ck_assert_int_eq(sendbuf_init(&sb, BSZ, 8 * BSZ), 0);
	ck_assert_int_eq(ack(&sb, 0, 2), 0);
	memset(&dl, 0, sizeof(dl));
	for (guard = 0; guard < 100000 && (appended < NMSG || !sendbuf_idle(&sb)); guard++) {
		struct sb_block *b;
		struct wire_ack a;

		while (appended < NMSG) {
			struct wire_record r;
			int ret;

			mkrec(&r, ex[appended].len, ex[appended].id);
			ret = sendbuf_append(&sb, &r, ex[appended].data, 42, NULL);
			if (ret == -ENOSPC)
				break;
			ck_assert_int_eq(ret, 0);
			appended++;
		}
		/* Partial blocks only now and then, or at the end. */
		b = sendbuf_next(&sb, (int)(rng() % 3), appended == NMSG || rng() % 4 == 0);
		if (b != NULL) {
			check_block_frame(b, seq, out, &outlen, cap);
			seq++;
			sendbuf_release(&sb, b);
		}
		/* The peer acknowledges everything sent and delivers every
		 * message wholly inside the acknowledged bytes; keep it
		 * simple: deliver all appended so far once acked. */
		memset(&a, 0, sizeof(a));
		a.recv_cum = seq;
		a.window_end = seq + 2;
		if (sb.open == 0 && seq == sb.next)
			a.deliv_cum = sb.msg_next;
		else
			a.deliv_cum = sb.msg_base;
		ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &dl), 0);
	}
	ck_assert_int_eq(appended, NMSG);
	ck_assert_int_eq(sendbuf_idle(&sb), 1);
	ck_assert_uint_eq(sb.blocks_sent, seq);
	ck_assert_uint_eq(sb.blocks_acked, seq);
	ck_assert_uint_eq(sb.bytes_sent, outlen);
	ck_assert_uint_eq(sb.bytes_acked, outlen);
	ck_assert_uint_eq(sb.blocks_resent, 0);
	ck_assert_uint_eq(dl.n, NMSG);

	/* The concatenated blocks are the records, byte for byte. */
	off = 0;
	for (int i = 0; i < NMSG; i++) {
		struct wire_record r;
		int hl = wire_decode_record_hdr(out + off, outlen - off, &r);

		ck_assert_int_eq(hl, (int)RHL);
		ck_assert_uint_eq(r.len, ex[i].len);
		ck_assert_uint_eq(r.msg_id, ex[i].id);
		ck_assert_str_eq(r.src, SRC);
		ck_assert_str_eq(r.dst, DST);
		off += (size_t)hl;
		ck_assert_uint_le(off + r.len, outlen);
		ck_assert_mem_eq(out + off, ex[i].data, ex[i].len);
		off += r.len;
		ck_assert_uint_eq(dl.id[i], ex[i].id);
		ck_assert_uint_eq(dl.client[i], 42);
	}
	ck_assert_uint_eq(off, outlen);

	for (int i = 0; i < NMSG; i++)
		free(ex[i].data);
	free(ex);
	free(out);
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
	ck_assert_uint_eq(sendbuf_stream_lost(&sb, 0), 2);
	take(&sb, 1, 1, 0);
	ck_assert_ptr_eq(take(&sb, 1, 1, 1), b);
	ck_assert_mem_eq(b->hdr, hdr, sizeof(hdr));
	ck_assert_mem_eq(b->data, data, RHL + 3);
	ck_assert_uint_eq(b->len, RHL + 3);
	sendbuf_free(&sb);
}
END_TEST

/* sb_fill_fn for the tests: writes bytes i * 7 + 3 of the payload until
 * fail_at of them, then fails (fail_at beyond the payload: never). */
struct fill_test {
	size_t done, fail_at;
	int calls, regions;
};

static int fill_test(void *arg, const struct iovec *iov, int n)
{
	struct fill_test *t = arg;

	t->calls++;
	t->regions = n;
	for (int k = 0; k < n; k++) {
		for (size_t i = 0; i < iov[k].iov_len; i++, t->done++) {
			if (t->done == t->fail_at)
				return -ECONNRESET;
			((uint8_t *)iov[k].iov_base)[i] = (uint8_t)(t->done * 7 + 3);
		}
	}
	return 0;
}

/* The payload goes straight into the blocks, region by region; a fill
 * that fails leaves no trace. */
START_TEST(append_from_fills_in_place)
{
	struct fill_test ok = { .fail_at = SIZE_MAX }, bad = { .fail_at = 500 };
	struct sendbuf sb;
	struct wire_record r;
	struct sb_block *b;
	size_t space;
	uint8_t *all;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	ck_assert_int_eq(append(&sb, 100 - RHL, 1, 1), 0);      /* block 0 open, 100 bytes */
	space = sendbuf_space(&sb);
	mkrec(&r, 3 * BS, 2);
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_test, &bad, 1, NULL), -ECONNRESET);
	ck_assert_uint_eq(sendbuf_space(&sb), space);
	ck_assert_uint_eq(sb.next, 1);
	ck_assert_int_eq(sb.open, 1);
	ck_assert_int_eq(sb.slots[0].state, SB_OPEN);
	ck_assert_uint_eq(sb.slots[0].len, 100);
	ck_assert_uint_eq(sb.msg_next, 1);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 100);

	/* 100 + RHL + 3 * BS bytes: blocks 0-2 full and sealed, block 3
	 * open; the payload's regions are the rest of block 0, blocks 1 and
	 * 2, the start of block 3. */
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_test, &ok, 1, NULL), 0);
	ck_assert_int_eq(ok.calls, 1);
	ck_assert_int_eq(ok.regions, 4);
	ck_assert_uint_eq(ok.done, 3 * BS);
	ck_assert_uint_eq(sb.next, 4);
	ck_assert_int_eq(sb.open, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(sb.slots[i].state, SB_READY);
	ck_assert_int_eq(sb.slots[3].state, SB_OPEN);
	ck_assert_uint_eq(sb.slots[3].len, 100 + RHL);
	ck_assert_uint_eq(sb.msg_next, 2);
	/* The record stream is header then payload, and each sealed block's
	 * frame header checks out against its bytes. */
	all = malloc(4 * BS);
	ck_assert_ptr_nonnull(all);
	for (int i = 0; i < 4; i++)
		memcpy(all + i * BS, sb.slots[i].data, sb.slots[i].len);
	ck_assert_uint_eq(all[100], WIRE_REC_MAGIC);
	for (size_t i = 0; i < 3 * BS; i++)
		ck_assert_uint_eq(all[100 + RHL + i], (uint8_t)(i * 7 + 3));
	b = sendbuf_next(&sb, 0, 0);
	ck_assert_ptr_null(b);                                 /* no window yet */
	ck_assert_int_eq(ack(&sb, 0, 8), 0);
	b = sendbuf_next(&sb, 0, 0);
	ck_assert_ptr_nonnull(b);
	{
		uint8_t hdr[WIRE_DATA_HDR_LEN];

		wire_encode_data_hdr(hdr, b->seq, b->data, b->len);
		ck_assert_mem_eq(hdr, b->hdr, WIRE_DATA_HDR_LEN);
	}
	sendbuf_release(&sb, b);
	free(all);
	sendbuf_free(&sb);
}
END_TEST

Suite *make_sendbuf_suite(void)
{
	Suite *s = suite_create("sendbuf");
	TCase *ap = tcase_create("append");
	TCase *tx = tcase_create("send");
	TCase *ak = tcase_create("ack");
	TCase *dv = tcase_create("deliver");
	TCase *ct = tcase_create("contents");

	tcase_add_test(ap, init_sizes);
	tcase_add_test(ap, peer_drops_reported_lost);
	tcase_add_test(ap, append_accounting);
	tcase_add_test(ap, append_enospc);
	tcase_add_test(ap, append_msg_table_full);
	tcase_add_test(ap, append_emsgsize_einval);
	tcase_add_test(ap, append_from_fills_in_place);
	suite_add_tcase(s, ap);

	tcase_add_test(tx, next_respects_window);
	tcase_add_test(tx, next_window_stops_at_open_block);
	tcase_add_test(tx, release_keeps_block);
	tcase_add_test(tx, stream_lost_requeues);
	tcase_add_test(tx, stream_lost_busy_waits_for_release);
	tcase_add_test(tx, resend_same_frame);
	suite_add_tcase(s, tx);

	tcase_add_test(ak, cumulative_ack_frees);
	tcase_add_test(ak, sacked_not_resent);
	tcase_add_test(ak, sack_of_requeued_block);
	tcase_add_test(ak, acked_while_busy_freed_at_release);
	tcase_add_test(ak, busy_acked_slot_not_reused);
	tcase_add_test(ak, stale_sack_does_not_hit_newer_block);
	tcase_add_test(ak, impossible_acks);
	tcase_add_test(ak, sack_of_open_block_is_eproto);
	tcase_add_test(ak, ack_of_unsent_block_is_eproto);
	suite_add_tcase(s, ak);

	tcase_add_test(dv, delivered_once_any_order);
	tcase_add_test(dv, delivered_ring_wraps);
	tcase_add_test(dv, reset_reports_lost);
	tcase_add_test(dv, idle_states);
	suite_add_tcase(s, dv);

	tcase_add_test(ct, block_contents_roundtrip);
	tcase_add_test(ct, no_hdr);
	tcase_set_timeout(ct, 10);
	suite_add_tcase(s, ct);
	return s;
}
