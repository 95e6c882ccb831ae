/* sbtest.c - the send buffer tests' shared helpers; see sbtest.h. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbtest.h"

void mkrec(struct wire_record *r, uint32_t len, uint64_t id)
{
	memset(r, 0, sizeof(*r));
	r->len = len;
	r->msg_id = id;
	snprintf(r->src, sizeof(r->src), "%s", SRC);
	snprintf(r->dst, sizeof(r->dst), "%s", DST);
}

int append(struct sendbuf *sb, uint32_t len, uint64_t id, uint64_t client)
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

int ack(struct sendbuf *sb, uint64_t recv_cum, uint64_t window_end)
{
	struct wire_ack a;

	memset(&a, 0, sizeof(a));
	a.recv_cum = recv_cum;
	a.window_end = window_end;
	return sendbuf_ack(sb, &a, NULL, NULL);
}

void record_call(void *arg, const struct sb_msg *m)
{
	struct calls *c = arg;

	ck_assert_uint_lt(c->n, 256);
	c->client[c->n] = m->client;
	c->id[c->n] = m->id;
	c->n++;
}

struct sb_block *take(struct sendbuf *sb, int stream, int partial, uint64_t seq)
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

void fill_blocks(struct sendbuf *sb, unsigned nblocks, uint64_t first_id)
{
	for (unsigned i = 0; i < nblocks; i++)
		ck_assert_int_eq(append(sb, BS - RHL, first_id + i, 1), 0);
}
