/* rbtest.c - the receive buffer tests' shared helpers; see rbtest.h. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbtest.h"

void ts_build(struct tstream *s, size_t n, const uint32_t *lens, uint32_t maxlen, uint64_t id0)
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

void ts_free(struct tstream *s)
{
	free(s->buf);
	s->buf = NULL;
}

uint64_t nblocks(const struct tstream *s, size_t bs)
{
	return (s->len + bs - 1) / bs;
}
void check_msg(const struct tstream *s, const struct rb_msg *m, size_t i, uint32_t epoch)
{
	ck_assert_uint_lt(i, s->n);
	ck_assert_uint_eq(m->msgno, i);
	ck_assert_uint_eq(m->epoch, epoch);
	ck_assert_uint_eq(m->rec.len, s->rec[i].len);
	ck_assert_uint_eq(m->rec.msg_id, s->rec[i].msg_id);
	ck_assert_str_eq(m->rec.src, s->rec[i].src);
	ck_assert_str_eq(m->rec.dst, s->rec[i].dst);
	ck_assert_ptr_nonnull(m->data);
	ck_assert_int_eq(msg_matches(m, 0, s->buf + s->end[i] - s->rec[i].len), 1);
}

int msg_matches(const struct rb_msg *m, size_t off, const uint8_t *want)
{
	struct iovec iov[8];
	int n;

	/* Few iovecs at a time, so that a resumed walk is exercised too. */
	while ((n = rb_msg_iov(m, off, iov, 8)) > 0)
		for (int k = 0; k < n; k++) {
			if (memcmp(iov[k].iov_base, want + off, iov[k].iov_len) != 0)
				return 0;
			off += iov[k].iov_len;
		}
	return off == m->rec.len;
}

void collect(void *arg, struct rb_msg *m)
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

void got_init(struct got *g, struct recvbuf *rb, const struct tstream *ts)
{
	memset(g, 0, sizeof(*g));
	g->rb = rb;
	g->ts = ts;
}

void got_deliver_all(struct got *g)
{
	for (size_t i = 0; i < g->n; i++) {
		if (g->m[i]) {
			ck_assert_int_eq(recvbuf_delivered(g->rb, g->m[i]), 0);
			g->m[i] = NULL;
		}
	}
}

int feed(struct recvbuf *rb, const struct tstream *s, size_t bs, uint64_t seq, struct got *g)
{
	size_t off = (size_t)seq * bs;
	size_t len = s->len - off < bs ? s->len - off : bs;

	ck_assert_uint_lt(off, s->len);
	return recvbuf_block(rb, seq, s->buf + off, (uint32_t)len, collect, g);
}

size_t complete_in(const struct tstream *s, size_t have)
{
	size_t k = 0;

	while (k < s->n && s->end[k] <= have)
		k++;
	return k;
}

uint64_t payload_sum(const struct tstream *s, size_t from, size_t to)
{
	uint64_t t = 0;

	for (size_t i = from; i < to; i++)
		t += s->rec[i].len;
	return t;
}

void ack_deliv_is(struct recvbuf *rb, struct wire_ack *a, uint64_t cum, const char *spec)
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

void open_window(struct recvbuf *rb, struct wire_ack *a)
{
	recvbuf_ack(rb, a);
	ck_assert_uint_le(a->window_end, rb->recv_cum + rb->nslots);
}
