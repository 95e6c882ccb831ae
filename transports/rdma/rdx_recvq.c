/* rdx_recvq.c - received messages in order, buffers and credits back; see rdx_recvq.h. */
#include <errno.h>
#include <stdlib.h>

#include "rdx_proto.h"
#include "rdx_recvq.h"

int rdx_recvq_init(struct rdx_recvq *q, uint32_t depth, size_t max_msg)
{
	*q = (struct rdx_recvq){ .max_msg = max_msg };
	/* depth messages in buffers, and copies: one waiting for the core
	 * makes the chunks after it owed, so at most depth more complete. */
	q->cap = 2 * depth + 2;
	q->ring = calloc(q->cap, sizeof(*q->ring));
	return q->ring ? 0 : -ENOMEM;
}

int rdx_recvq_writes(struct rdx_recvq *q, struct rdx_wspace *ws)
{
	uint32_t cap = q->cap + ws->in.size / RP_MIN_WRITE;
	struct rdx_ready *ring = realloc(q->ring, cap * sizeof(*ring));

	if (ring == NULL)
		return -ENOMEM;
	q->ring = ring;
	q->cap = cap;
	q->ws = ws;
	return 0;
}

void rdx_recvq_fini(struct rdx_recvq *q)
{
	for (uint32_t k = 0; k < q->n && q->ring; k++) {
		struct rdx_ready *e = &q->ring[(q->head + k) % q->cap];

		if (e->buf == RDX_COPY)
			free(e->data);
	}
	free(q->ring);
	q->ring = NULL;
	q->n = 0;
	rdx_reasm_fini(&q->ra);
}

static int push(struct rdx_recvq *q, uint8_t *data, size_t len, int64_t buf, uint32_t span)
{
	/* Credits and ring space bound the ring: a peer that fills it lied. */
	if (q->n == q->cap)
		return -EPROTO;
	q->ring[(q->head + q->n++) % q->cap] = (struct rdx_ready){ .data = data, .len = len, .buf = buf, .span = span };
	q->copies += buf == RDX_COPY;
	return 0;
}

/* A credit-only message's write grant: the peer's ring's, or 0. */
static int grant_heard(struct rdx_recvq *q, uint32_t grant)
{
	if (q->ws == NULL)
		return grant == 0 ? 0 : -EPROTO;
	return rdx_wspace_heard(q->ws, grant);
}

int rdx_recvq_arrived(struct rdx_recvq *q, struct rdx_credit *cr, uint32_t i, uint8_t *buf, size_t got,
		      int *repost)
{
	struct rp_hdr h;
	uint8_t *msg = NULL;
	size_t len = 0;
	int r = 0;

	*repost = 0;
	if (rp_hdr_decode(buf, got, q->max_msg, &h) < 0 || rdx_credit_arrived(cr) < 0 ||
	    rdx_credit_heard(cr, h.credits) < 0)
		return -EPROTO;
	q->bytes += h.len;
	if (h.type == RP_CREDIT) {
		*repost = 1;
		return grant_heard(q, h.total) < 0 || rdx_credit_release(cr, 1) < 0 ? -EPROTO : 0;
	}
	r = rdx_reasm_whole(&q->ra, &h);
	if (r == 1)
		return push(q, buf + RP_HDR_LEN, h.len, i, 0);
	if (r == 0)
		r = rdx_reasm_add(&q->ra, &h, buf + RP_HDR_LEN, &msg, &len);
	if (r < 0)
		return r == -ENOMEM ? r : -EPROTO;
	*repost = 1;
	if (q->copies > 0)
		q->owed++;
	else if (rdx_credit_release(cr, 1) < 0)
		return -EPROTO;
	if (r == 1 && push(q, msg, len, RDX_COPY, 0) < 0) {
		free(msg);
		return -EPROTO;
	}
	return 0;
}

int rdx_recvq_written(struct rdx_recvq *q, struct rdx_credit *cr, uint32_t imm, size_t got)
{
	uint16_t credits;
	uint32_t off, span;
	uint8_t *data;

	rp_imm_decode(imm, &credits, &off);
	if (q->ws == NULL || rdx_credit_arrived(cr) < 0 || rdx_credit_heard(cr, credits) < 0 ||
	    rdx_wspace_arrived(q->ws, off, got, &data, &span) < 0 || push(q, data, got, RDX_RING, span) < 0 ||
	    rdx_credit_release(cr, 1) < 0)
		return -EPROTO;
	q->bytes += got;
	return 0;
}

int rdx_recvq_peek(struct rdx_recvq *q, const uint8_t **data, size_t *len)
{
	const struct rdx_ready *e;

	if (q->n == 0)
		return -EAGAIN;
	e = &q->ring[q->head];
	*data = e->data;
	*len = e->len;
	q->out = 1;
	return 0;
}

int rdx_recvq_done(struct rdx_recvq *q, struct rdx_credit *cr, int64_t *repost)
{
	struct rdx_ready *e;
	unsigned grant = 1;

	*repost = -1;
	if (!q->out || q->n == 0)
		return -EINVAL;
	e = &q->ring[q->head];
	q->head = (q->head + 1) % q->cap;
	q->n--;
	q->out = 0;
	if (e->buf >= 0) {
		*repost = e->buf;
	} else if (e->buf == RDX_RING) {
		rdx_wspace_consumed(q->ws, e->span);
		grant = 0;   /* its buffer went back on arrival */
	} else {
		free(e->data);
		grant = --q->copies == 0 ? q->owed : 0;
		q->owed = q->copies == 0 ? 0 : q->owed;
	}
	return rdx_credit_release(cr, grant) < 0 ? -EPROTO : 0;
}
