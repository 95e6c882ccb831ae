/* check_recvbuf.c - unit tests of the receiving half of a link (ldsd/recvbuf.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/recvbuf.h"
#include "ldsd/wire.h"
#include "suites.h"

/* ---- helpers --------------------------------------------------------- */

#define MAXM 256
/* Record header of the test streams: WIRE_REC_FIXED + "clusterA/sNNN" + "clusterB/dNNN". */
#define RHL (WIRE_REC_FIXED + 26u)

static uint64_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

/* A record byte stream of n messages, as the sender would produce it. */
struct tstream {
	size_t n, len;
	uint8_t *buf;
	struct wire_record rec[MAXM];
	size_t start[MAXM];        /* offset of the record header */
	size_t end[MAXM];          /* offset just past the payload */
};

/* lens == NULL: random payload lengths 0..maxlen. */
static void ts_build(struct tstream *s, size_t n, const uint32_t *lens, uint32_t maxlen, uint64_t id0)
{
	size_t cap = 0;

	ck_assert_uint_le(n, MAXM);
	memset(s, 0, sizeof(*s));
	s->n = n;
	for (size_t i = 0; i < n; i++) {
		struct wire_record *r = &s->rec[i];

		r->len = lens ? lens[i] : rng() % (maxlen + 1);
		r->msg_id = id0 + i * 3;
		snprintf(r->src, sizeof(r->src), "clusterA/s%03zu", i);
		snprintf(r->dst, sizeof(r->dst), "clusterB/d%03zu", (i * 7) % 1000);
		cap += RHL + r->len;
	}
	s->buf = malloc(cap ? cap : 1);
	ck_assert_ptr_nonnull(s->buf);
	for (size_t i = 0; i < n; i++) {
		size_t hl = wire_encode_record_hdr(s->buf + s->len, cap - s->len, &s->rec[i]);

		ck_assert_uint_eq(hl, RHL);
		s->start[i] = s->len;
		s->len += hl;
		for (uint32_t k = 0; k < s->rec[i].len; k++)
			s->buf[s->len++] = (uint8_t)rng();
		s->end[i] = s->len;
	}
	ck_assert_uint_eq(s->len, cap);
}

static void ts_free(struct tstream *s)
{
	free(s->buf);
	s->buf = NULL;
}

static uint64_t nblocks(const struct tstream *s, size_t bs)
{
	return (s->len + bs - 1) / bs;
}

/* Messages handed out by recvbuf_block. */
struct got {
	struct recvbuf *rb;
	const struct tstream *ts;  /* when set, checked on arrival */
	uint32_t epoch;
	int deliver_now;           /* recvbuf_delivered right in the callback */
	size_t n;
	struct rb_msg *m[MAXM];
};

static void check_msg(const struct tstream *s, const struct rb_msg *m, size_t i, uint32_t epoch)
{
	ck_assert_uint_lt(i, s->n);
	ck_assert_uint_eq(m->msgno, i);
	ck_assert_uint_eq(m->epoch, epoch);
	ck_assert_uint_eq(m->rec.len, s->rec[i].len);
	ck_assert_uint_eq(m->rec.msg_id, s->rec[i].msg_id);
	ck_assert_str_eq(m->rec.src, s->rec[i].src);
	ck_assert_str_eq(m->rec.dst, s->rec[i].dst);
	ck_assert_ptr_nonnull(m->data);
	ck_assert_mem_eq(m->data, s->buf + s->end[i] - s->rec[i].len, s->rec[i].len);
}

static void collect(void *arg, struct rb_msg *m)
{
	struct got *g = arg;

	ck_assert_ptr_nonnull(m);
	ck_assert_uint_lt(g->n, MAXM);
	if (g->ts)
		check_msg(g->ts, m, g->n, g->epoch);
	if (g->deliver_now) {
		ck_assert_int_eq(recvbuf_delivered(g->rb, m), 0);
		g->m[g->n++] = NULL;
	} else {
		g->m[g->n++] = m;
	}
}

static void got_init(struct got *g, struct recvbuf *rb, const struct tstream *ts)
{
	memset(g, 0, sizeof(*g));
	g->rb = rb;
	g->ts = ts;
}

/* Marks every kept message delivered. */
static void got_deliver_all(struct got *g)
{
	for (size_t i = 0; i < g->n; i++) {
		if (g->m[i]) {
			ck_assert_int_eq(recvbuf_delivered(g->rb, g->m[i]), 0);
			g->m[i] = NULL;
		}
	}
}

static int feed(struct recvbuf *rb, const struct tstream *s, size_t bs, uint64_t seq, struct got *g)
{
	size_t off = (size_t)seq * bs;
	size_t len = s->len - off < bs ? s->len - off : bs;

	ck_assert_uint_lt(off, s->len);
	return recvbuf_block(rb, seq, s->buf + off, (uint32_t)len, collect, g);
}

/* Messages wholly inside the first `have` bytes of the stream. */
static size_t complete_in(const struct tstream *s, size_t have)
{
	size_t k = 0;

	while (k < s->n && s->end[k] <= have)
		k++;
	return k;
}

static uint64_t payload_sum(const struct tstream *s, size_t from, size_t to)
{
	uint64_t t = 0;

	for (size_t i = from; i < to; i++)
		t += s->rec[i].len;
	return t;
}

/* recvbuf_ack into *a, whose delivery part must be deliv_cum cum and the
 * ranges of spec, "5-6 7-10" (start-end, end excluded; "": none). */
static void ack_deliv_is(struct recvbuf *rb, struct wire_ack *a, uint64_t cum, const char *spec)
{
	const char *p = spec;
	unsigned k = 0;

	recvbuf_ack(rb, a);
	ck_assert_uint_eq(a->deliv_cum, cum);
	while (*p) {
		char *e;
		uint64_t start = strtoull(p, &e, 10), end = strtoull(e + 1, &e, 10);

		ck_assert_uint_lt(k, a->ndeliv);
		ck_assert_uint_eq(a->deliv[k].start, start);
		ck_assert_uint_eq(a->deliv[k].end, end);
		k++;
		p = e + strspn(e, " ");
	}
	ck_assert_uint_eq(a->ndeliv, k);
}

static void open_window(struct recvbuf *rb, struct wire_ack *a)
{
	recvbuf_ack(rb, a);
	ck_assert_uint_le(a->window_end, rb->recv_cum + rb->nslots);
}

/* ---- tests ----------------------------------------------------------- */

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

Suite *make_recvbuf_suite(void)
{
	Suite *s = suite_create("recvbuf");
	TCase *ord = tcase_create("order");
	TCase *win = tcase_create("window");
	TCase *dv = tcase_create("delivered");
	TCase *bad = tcase_create("malformed");

	tcase_add_test(ord, init_and_first_ack);
	tcase_add_test(ord, in_order);
	tcase_add_test(ord, reverse_order);
	tcase_add_loop_test(ord, shuffled_with_duplicates, 0, 8);
	tcase_add_test(ord, duplicates);
	tcase_add_loop_test(ord, block_sizes, 0, 40);
	tcase_add_test(ord, free_with_state);
	tcase_add_loop_test(ord, placed_blocks, 0, 6);
	tcase_add_test(ord, place_refused);
	tcase_set_timeout(ord, 10);
	suite_add_tcase(s, ord);

	tcase_add_test(win, outside_window);
	tcase_add_test(win, window_accounting);
	tcase_add_test(win, window_partial_message);
	tcase_add_test(win, sack_ranges);
	tcase_add_test(win, sack_ranges_many);
	suite_add_tcase(s, win);

	tcase_add_test(dv, deliv_ranges_example);
	tcase_add_test(dv, discard_then_settle);
	tcase_add_loop_test(dv, deliv_ranges_random, 0, 6);
	tcase_add_test(dv, reset_new_epoch);
	tcase_set_timeout(dv, 10);
	suite_add_tcase(s, dv);

	tcase_add_test(bad, corrupt_records);
	tcase_add_test(bad, record_over_max_msg);
	suite_add_tcase(s, bad);
	return s;
}
