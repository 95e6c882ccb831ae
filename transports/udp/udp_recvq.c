/* udp_recvq.c - reassembly and message cutting; see udp_recvq.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "udp_recvq.h"

#define HOLES_MAX 1024

int udp_recvq_init(struct udp_recvq *q, size_t window, size_t max_msg)
{
	memset(q, 0, sizeof(*q));
	q->buf = malloc(window);
	if (q->buf == NULL)
		return -ENOMEM;
	q->size = q->open = window;
	q->max_msg = max_msg;
	udp_ranges_init(&q->above, HOLES_MAX);
	return 0;
}

void udp_recvq_free(struct udp_recvq *q)
{
	free(q->buf);
	free(q->scratch);
	udp_ranges_free(&q->above);
	q->buf = q->scratch = NULL;
}

/* Copies between the stream and the ring, either way, across its end. */
static void ring_io(const struct udp_recvq *q, uint64_t off, uint8_t *mem, size_t len, int to_ring)
{
	while (len > 0) {
		size_t at = (size_t)(off % q->size), k = q->size - at < len ? q->size - at : len;

		if (to_ring)
			memcpy(q->buf + at, mem, k);
		else
			memcpy(mem, q->buf + at, k);
		off += k;
		mem += k;
		len -= k;
	}
}

uint64_t udp_recvq_limit(const struct udp_recvq *q)
{
	return q->base + q->open;
}

void udp_recvq_open(struct udp_recvq *q, size_t open)
{
	q->open = open < q->size ? open : q->size;
}

/* Moves the ring to a larger buffer: every offset of the window keeps
 * its bytes (present or not: the copy does not need to know which). */
static int resize(struct udp_recvq *q, size_t size)
{
	struct udp_recvq n = { .size = size };
	size_t at = (size_t)(q->base % q->size);

	n.buf = malloc(size);
	if (n.buf == NULL)
		return -ENOMEM;
	ring_io(&n, q->base, q->buf + at, q->size - at, 1);
	ring_io(&n, q->base + (q->size - at), q->buf, at, 1);
	free(q->buf);
	q->buf = n.buf;
	q->size = q->open = size;
	q->want = 0;
	return 0;
}

int udp_recvq_grow(struct udp_recvq *q, size_t size)
{
	if (size <= q->size)
		return 0;
	if (q->held) {
		q->want = size;
		return 0;
	}
	return resize(q, size);
}

int udp_recvq_insert(struct udp_recvq *q, uint64_t off, const uint8_t *data, size_t len)
{
	int r;

	if (off + len > udp_recvq_limit(q))
		return -EMSGSIZE;
	if (off + len <= q->contig) {
		q->dups += len;
		return 0;
	}
	if (off < q->contig) {
		data += q->contig - off;
		len -= (size_t)(q->contig - off);
		off = q->contig;
	}
	if (off > q->contig) {
		uint64_t gap;

		if (udp_ranges_next_missing(&q->above, off, &gap) >= off + len)
			q->dups += len;
		r = udp_ranges_add(&q->above, off, off + len);
		if (r < 0)
			return r;
	}
	/* Bytes already here are the same bytes: writing them again is harmless. */
	ring_io(q, off, (uint8_t *)data, len, 1);
	if (off == q->contig)
		q->contig = off + len;
	if (q->above.n && q->above.r[0].first <= q->contig) {
		if (q->above.r[0].last >= q->contig)
			q->contig = q->above.r[0].last + 1;
		udp_ranges_remove_below(&q->above, q->contig);
	}
	return 0;
}

/* The length prefix at base; -1 if not all here. */
static long long head_len(const struct udp_recvq *q)
{
	uint8_t h[4];

	if (q->contig - q->base < 4)
		return -1;
	ring_io(q, q->base, h, 4, 0);
	return (long long)((size_t)h[0] << 24 | (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3]);
}

int udp_recvq_ready(const struct udp_recvq *q)
{
	long long n = head_len(q);

	return n >= 0 && (n == 0 || (size_t)n > q->max_msg || q->contig - q->base >= 4 + (uint64_t)n);
}

int udp_recvq_peek(struct udp_recvq *q, const uint8_t **data, size_t *len)
{
	long long hl = head_len(q);
	size_t n, at;

	if (hl < 0)
		return 0;
	n = (size_t)hl;
	if (n == 0 || n > q->max_msg || n + 4 > q->size)
		return -EPROTO;
	if (q->contig - q->base < 4 + n)
		return 0;
	at = (size_t)((q->base + 4) % q->size);
	if (at + n <= q->size) {
		*data = q->buf + at;
	} else {
		if (q->scratch == NULL && (q->scratch = malloc(q->max_msg)) == NULL)
			return -ENOMEM;
		ring_io(q, q->base + 4, q->scratch, n, 0);
		*data = q->scratch;
	}
	*len = n;
	q->held = 1;
	q->held_len = n;
	return 1;
}

void udp_recvq_done(struct udp_recvq *q)
{
	if (!q->held)
		return;
	q->base += 4 + q->held_len;
	q->held = 0;
	/* Failing, the ring stays as it was: a smaller window, not an error. */
	if (q->want)
		(void)resize(q, q->want);
}
