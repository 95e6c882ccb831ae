/* udp_sendq.c - outgoing messages as a stream; see udp_sendq.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "udp_sendq.h"

#define RETX_RANGES_MAX 65536
#define ACKED_RANGES_MAX 65536

void udp_sendq_init(struct udp_sendq *q)
{
	memset(q, 0, sizeof(*q));
	udp_ranges_init(&q->acked_above, ACKED_RANGES_MAX);
	udp_ranges_init(&q->retx, RETX_RANGES_MAX);
}

static struct udp_msg *msg_at(const struct udp_sendq *q, size_t i)
{
	return &q->m[(q->head + i) & (q->cap - 1)];     /* cap: a power of two */
}

static void msg_release(struct udp_msg *m)
{
	if (m->iov != m->iov_inline)
		free(m->iov);
}

void udp_sendq_free(struct udp_sendq *q)
{
	for (size_t i = 0; i < q->n; i++)
		msg_release(msg_at(q, i));
	free(q->m);
	free(q->owned);
	udp_ranges_free(&q->acked_above);
	udp_ranges_free(&q->retx);
	q->m = NULL;
	q->owned = NULL;
	q->n = 0;
}

static int grow(struct udp_sendq *q)
{
	size_t nc = q->cap ? q->cap * 2 : 64;
	struct udp_msg *nm = malloc(nc * sizeof(*nm));

	if (nm == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < q->n; i++) {
		nm[i] = *msg_at(q, i);
		if (msg_at(q, i)->iov == msg_at(q, i)->iov_inline)
			nm[i].iov = nm[i].iov_inline;
	}
	free(q->m);
	q->m = nm;
	q->cap = nc;
	q->head = 0;
	return 0;
}

int udp_sendq_push(struct udp_sendq *q, const struct iovec *iov, int iovcnt, size_t total, void *ctx)
{
	struct udp_msg *m;

	if (q->n == q->cap && grow(q) < 0)
		return -ENOMEM;
	m = msg_at(q, q->n);
	memset(m, 0, sizeof(*m));
	m->iov = iovcnt <= UDP_MSG_IOV_INLINE ? m->iov_inline : malloc((size_t)iovcnt * sizeof(*iov));
	if (m->iov == NULL)
		return -ENOMEM;
	memcpy(m->iov, iov, (size_t)iovcnt * sizeof(*iov));
	m->iovcnt = iovcnt;
	m->start = q->end;
	m->len = 4 + total;
	m->hdr_len = 4;
	m->hdr[0] = (uint8_t)(total >> 24);
	m->hdr[1] = (uint8_t)(total >> 16);
	m->hdr[2] = (uint8_t)(total >> 8);
	m->hdr[3] = (uint8_t)total;
	m->ctx = ctx;
	q->n++;
	q->end += m->len;
	return 0;
}

/* The message holding stream offset off (queued).  Packets mostly go
 * in stream order: the message of the last one, or the next, is tried
 * before a search (which misses the cache at every step of a window of
 * thousands). */
static size_t find(struct udp_sendq *q, uint64_t off)
{
	size_t a = 0, b = q->n;

	for (size_t i = q->hint; i < q->hint + 2 && i < q->n; i++) {
		const struct udp_msg *m = msg_at(q, i);

		if (m->start <= off && off < m->start + m->len)
			return q->hint = i;
	}

	while (b - a > 1) {
		size_t mid = a + (b - a) / 2;

		if (msg_at(q, mid)->start <= off)
			a = mid;
		else
			b = mid;
	}
	return q->hint = a;
}

/* Where n stream bytes from offset at within message m lie: at most max
 * pieces into piece[], fewer bytes than n if the message ends or max
 * pieces are filled first.  Returns the pieces. */
static int msg_pieces(const struct udp_msg *m, uint64_t at, size_t n, struct iovec *piece, int max)
{
	size_t done = 0;
	int np = 0;

	if (at < m->hdr_len) {
		size_t k = m->hdr_len - (size_t)at < n ? m->hdr_len - (size_t)at : n;

		if (max < 1)
			return 0;
		piece[np++] = (struct iovec){ (uint8_t *)m->hdr + at, k };
		done = k;
		at = 0;
	} else {
		at -= m->hdr_len;
	}
	for (int i = 0; i < m->iovcnt && done < n && np < max; i++) {
		size_t il = m->iov[i].iov_len, k;

		if (at >= il) {
			at -= il;
			continue;
		}
		k = il - (size_t)at < n - done ? il - (size_t)at : n - done;
		piece[np++] = (struct iovec){ (uint8_t *)m->iov[i].iov_base + at, k };
		done += k;
		at = 0;
	}
	return np;
}

/* Up to max pieces of the n stream bytes from off into piece[]; *got
 * says how many bytes they hold. */
static int pieces(struct udp_sendq *q, uint64_t off, size_t n, struct iovec *piece, int max, size_t *got)
{
	int np = 0;

	*got = 0;
	for (size_t i = find(q, off); n > 0 && i < q->n && np < max; i++) {
		const struct udp_msg *m = msg_at(q, i);
		int k = msg_pieces(m, off - m->start, n, piece + np, max - np);

		for (int j = np; j < np + k; j++) {
			off += piece[j].iov_len;
			n -= piece[j].iov_len;
			*got += piece[j].iov_len;
		}
		np += k;
	}
	return np;
}

int udp_sendq_refs(struct udp_sendq *q, uint64_t off, size_t n, struct iovec *piece, int max)
{
	size_t got;
	int np = pieces(q, off, n, piece, max, &got);

	return got == n ? np : -1;
}

void udp_sendq_gather(struct udp_sendq *q, uint64_t off, uint8_t *dst, size_t n)
{
	struct iovec piece[16];
	size_t got;

	/* In rounds: small messages make many pieces. */
	while (n > 0) {
		int k = pieces(q, off, n, piece, 16, &got);

		if (k == 0)
			return;
		for (int j = 0; j < k; j++) {
			memcpy(dst, piece[j].iov_base, piece[j].iov_len);
			dst += piece[j].iov_len;
		}
		off += got;
		n -= got;
	}
}

int udp_sendq_next(struct udp_sendq *q, size_t max, uint64_t *off, size_t *len, int *retx)
{
	while (q->retx.n) {
		uint64_t lo = q->retx.r[0].first, hi = q->retx.r[0].last + 1, gap;

		/* Skip what was acknowledged since it was lost (a late ACK). */
		if (lo < q->acked)
			lo = q->acked;
		lo = udp_ranges_next_missing(&q->acked_above, lo, &gap);
		if (lo >= hi) {
			udp_ranges_remove_below(&q->retx, hi);
			continue;
		}
		*off = lo;
		*len = (size_t)(hi - lo < gap ? hi - lo : gap);
		if (*len > max)
			*len = max;
		*retx = 1;
		return 1;
	}
	if (q->next >= q->end || q->next >= q->peer_max)
		return 0;
	*off = q->next;
	*len = max;
	if (*len > q->end - q->next)
		*len = (size_t)(q->end - q->next);
	if (*len > q->peer_max - q->next)
		*len = (size_t)(q->peer_max - q->next);
	*retx = 0;
	return 1;
}

void udp_sendq_sent(struct udp_sendq *q, uint64_t off, size_t len, int retx)
{
	if (retx)
		udp_ranges_remove_below(&q->retx, off + len);
	else
		q->next = off + len;
}

int udp_sendq_acked(struct udp_sendq *q, uint64_t off, size_t len)
{
	int r;

	if (off + len <= q->acked)
		return 0;
	r = udp_ranges_add(&q->acked_above, off, off + len);
	if (r < 0)
		return r;
	if (q->acked_above.r[0].first <= q->acked) {
		q->acked = q->acked_above.r[0].last + 1;
		udp_ranges_remove_below(&q->acked_above, q->acked);
	}
	return 0;
}

int udp_sendq_lost(struct udp_sendq *q, uint64_t off, size_t len)
{
	if (off + len <= q->acked)
		return 0;
	return udp_ranges_add(&q->retx, off, off + len);
}

int udp_sendq_pop_done(struct udp_sendq *q, void **ctx)
{
	struct udp_msg *m;

	if (q->n == 0)
		return 0;
	m = msg_at(q, 0);
	if (m->start + m->len > q->acked)
		return 0;
	*ctx = m->ctx;
	msg_release(m);
	q->head = (q->head + 1) & (q->cap - 1);
	if (q->hint)
		q->hint--;
	q->n--;
	return 1;
}

int udp_sendq_own(struct udp_sendq *q)
{
	uint64_t from = q->acked, n = q->end - q->acked;
	uint8_t *copy = n ? malloc((size_t)n) : NULL;
	struct udp_msg one = { .start = from, .len = n, .iovcnt = 1 };

	if (n && copy == NULL)
		return -ENOMEM;
	if (n)
		udp_sendq_gather(q, from, copy, (size_t)n);
	for (size_t i = 0; i < q->n; i++)
		msg_release(msg_at(q, i));
	q->n = 0;
	q->head = 0;
	free(q->owned);
	q->owned = copy;
	if (n == 0)
		return 0;
	if (q->cap == 0 && grow(q) < 0)
		return -ENOMEM;
	one.iov = NULL;
	q->m[0] = one;
	q->m[0].iov = q->m[0].iov_inline;
	q->m[0].iov_inline[0] = (struct iovec){ .iov_base = copy, .iov_len = (size_t)n };
	q->n = 1;
	return 0;
}

int udp_sendq_empty(const struct udp_sendq *q)
{
	return q->acked >= q->end;
}
