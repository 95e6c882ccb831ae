/* sealq.c - a stream's sealed output queue; see sealq.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sealq.h"

int sealq_room(struct sealq *q, size_t need)
{
	size_t cap = q->cap ? q->cap : 65536;
	uint8_t *p;

	if (!sealq_fits(q, need))
		return -ENOBUFS;
	/* Held bytes stay where they are: past the end, begin again at the start. */
	if (q->held > 0) {
		if (q->wrap == 0 && q->len + need > q->cap) {
			q->wrap = q->len;
			q->off = q->len = 0;
		}
		return 0;
	}
	if (q->off > 0 && q->len + need > q->cap) {
		memmove(q->buf, q->buf + q->off, q->len - q->off);
		q->len -= q->off;
		q->off = 0;
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
	for (int i = 0; i < 8; i++)
		be[i] = (uint8_t)(seq >> (56 - 8 * i));
	n = seal_frame(&q->seal.tx, WIRE_DATA, be, sizeof(be), block, len, q->buf + q->len);
	if (n == 0)
		return -EIO;
	q->len += n;
	return 0;
}

void sealq_sent(struct sealq *q, size_t n)
{
	q->off += n;
	if (q->off >= q->len)
		q->off = q->len = 0;
}

int sealq_fits(const struct sealq *q, size_t need)
{
	if (q->held > 0 && q->wrap)
		return q->len + need <= q->wrap - (q->held - q->off);
	if (q->held > 0)
		return q->len + need <= q->cap ||
		       (q->fixed && sealq_pending(q) == 0 && need <= q->off - q->held);
	return !q->fixed || sealq_pending(q) + need <= q->cap;
}

void sealq_take(struct sealq *q, size_t n)
{
	q->off += n;
	q->held += n;
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
	/* The bytes before the wrap are all given back. */
	if (q->wrap && q->held <= q->off)
		q->wrap = 0;
	if (q->held == 0 && q->off >= q->len)
		q->off = q->len = 0;
}

int sealq_fix(struct sealq *q, size_t cap)
{
	uint8_t *p;

	if (cap < q->cap)
		cap = q->cap;
	if (q->held > 0) {
		/* Held bytes must not move: they stay in the old buffer, freed
		 * once given back; what waits moves to the new one. */
		p = malloc(cap);
		if (p == NULL)
			return -ENOMEM;
		memcpy(p, q->buf + q->off, q->len - q->off);
		q->old = q->buf;
		q->old_held = q->held;
		q->buf = p;
		q->len -= q->off;
		q->off = q->held = q->wrap = 0;
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
