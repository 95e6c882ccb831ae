/* sealq.c - a stream's sealed output queue; see sealq.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytebuf.h"
#include "sealq.h"

/* Where the queue is empty, it starts again at the buffer's start. */
static void sealq_settle(struct sealq *q)
{
	if (q->held == 0 && q->off == q->len && !q->wrap)
		q->head = q->off = q->len = 0;
}

/* A fixed queue: room for need more bytes at q->buf + q->len, going to
 * the start of the buffer if the end has none and the held bytes left
 * enough (strictly more: len == head would mean empty). */
static int sealq_room_ring(struct sealq *q, size_t need)
{
	if (q->wrap)
		return q->len + need < q->head ? 0 : -ENOBUFS;
	if (q->len + need <= q->cap)
		return 0;
	if (need >= q->head)
		return -ENOBUFS;
	q->wrap = q->len;
	if (q->off == q->len)
		q->off = 0;
	q->len = 0;
	return 0;
}

/* Room for need more bytes at q->buf + q->len. */
static int sealq_room(struct sealq *q, size_t need)
{
	size_t cap = q->cap ? q->cap : 65536;
	uint8_t *p;

	if (q->fixed)
		return sealq_room_ring(q, need);
	if (!sealq_fits(q, need))
		return -ENOBUFS;
	if (q->off > 0 && q->len + need > q->cap) {
		memmove(q->buf, q->buf + q->off, q->len - q->off);
		q->len -= q->off;
		q->head = q->off = 0;
	}
	while (cap < q->len + need)
		cap *= 2;
	if (cap == q->cap)
		return 0;
	p = realloc(q->buf, cap);
	if (p == NULL)
		return -ENOMEM;
	q->buf = p;
	q->cap = cap;
	return 0;
}

int sealq_put(struct sealq *q, const uint8_t *frame, size_t len, size_t limit)
{
	int r;

	if (len < WIRE_HDR_LEN || sealq_pending(q) + len + SEAL_OVERHEAD > limit)
		return -ENOBUFS;
	r = sealq_room(q, len + SEAL_OVERHEAD);
	if (r < 0)
		return r;
	if (q->seal.tx.ctx == NULL) {
		memcpy(q->buf + q->len, frame, len);
		q->len += len;
		return 0;
	}
	len = seal_frame(&q->seal.tx, frame[3], NULL, 0, frame + WIRE_HDR_LEN, len - WIRE_HDR_LEN, q->buf + q->len);
	if (len == 0)
		return -EIO;
	q->len += len;
	return 0;
}

int sealq_put_data(struct sealq *q, uint64_t seq, const uint8_t *block, uint32_t len)
{
	uint8_t be[8];
	size_t n;
	int r = sealq_room(q, WIRE_DATA_HDR_LEN + len + SEAL_OVERHEAD);

	if (r < 0)
		return r;
	bb_put_be64(be, seq);
	n = seal_frame(&q->seal.tx, WIRE_DATA, be, sizeof(be), block, len, q->buf + q->len);
	if (n == 0)
		return -EIO;
	q->len += n;
	return 0;
}

void sealq_sent(struct sealq *q, size_t n)
{
	sealq_take(q, n);
	sealq_release(q, n);
}

int sealq_fits(const struct sealq *q, size_t need)
{
	/* Held bytes must not move: neither compacted nor reallocated. */
	if (!q->fixed)
		return q->held == 0 || q->len + need <= q->cap;
	if (q->wrap)
		return q->len + need < q->head;
	return q->len + need <= q->cap || need < q->head;
}

void sealq_take(struct sealq *q, size_t n)
{
	q->off += n;
	q->held += n;
	/* The part before the wrap is all taken: what waits is at the start. */
	if (q->wrap && q->off == q->wrap)
		q->off = 0;
}

void sealq_release(struct sealq *q, size_t n)
{
	/* Oldest first: those left in the buffer sealq_fix replaced. */
	if (q->old_held > 0) {
		q->old_held -= n;
		if (q->old_held == 0) {
			free(q->old);
			q->old = NULL;
		}
		return;
	}
	q->held -= n;
	q->head += n;
	if (q->wrap && q->head == q->wrap) {
		q->head = 0;
		q->wrap = 0;
	}
	if (q->held == 0 && !q->wrap)
		q->head = q->off;
	sealq_settle(q);
}

int sealq_fix(struct sealq *q, size_t cap)
{
	uint8_t *p;

	if (cap < q->cap)
		cap = q->cap;
	if (q->held > 0) {
		/* Held bytes must not move: they stay in the old buffer (an
		 * unfixed queue never wraps), freed once given back; what
		 * waits moves to the new one. */
		p = malloc(cap);
		if (p == NULL)
			return -ENOMEM;
		memcpy(p, q->buf + q->off, q->len - q->off);
		q->old = q->buf;
		q->old_held = q->held;
		q->buf = p;
		q->len -= q->off;
		q->head = q->off = q->held = 0;
		q->cap = cap;
	} else if (cap > q->cap) {
		p = realloc(q->buf, cap);
		if (p == NULL)
			return -ENOMEM;
		q->buf = p;
		q->cap = cap;
	}
	q->fixed = 1;
	return 0;
}

void sealq_free(struct sealq *q)
{
	seal_free(&q->seal);
	free(q->buf);
	free(q->old);
	memset(q, 0, sizeof(*q));
}
