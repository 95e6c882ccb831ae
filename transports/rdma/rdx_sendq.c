/* rdx_sendq.c - posted sends in order; see rdx_sendq.h. */
#include <errno.h>
#include <stdlib.h>

#include "rdx_sendq.h"

int rdx_sendq_init(struct rdx_sendq *q, uint32_t cap)
{
	*q = (struct rdx_sendq){ .cap = cap };
	q->e = calloc(cap, sizeof(*q->e));
	return q->e ? 0 : -ENOMEM;
}

void rdx_sendq_fini(struct rdx_sendq *q)
{
	free(q->e);
	q->e = NULL;
}

int rdx_sendq_full(const struct rdx_sendq *q)
{
	return q->tail - q->head >= q->cap;
}

uint32_t rdx_sendq_outstanding(const struct rdx_sendq *q)
{
	return (uint32_t)(q->tail - q->head);
}

uint64_t rdx_sendq_push(struct rdx_sendq *q, uint32_t slot, void *ctx)
{
	q->e[q->tail % q->cap] = (struct rdx_sendq_ent){ .slot = slot, .ctx = ctx };
	return q->tail++;
}

int rdx_sendq_complete(struct rdx_sendq *q, uint64_t wr_id, int ok, struct rdx_sendq_done *d)
{
	const struct rdx_sendq_ent *e;

	if (q->head == q->tail || wr_id != q->head)
		return -EPROTO;
	e = &q->e[q->head++ % q->cap];
	if (!ok)
		q->failed = 1;
	d->slot = e->slot;
	d->ctx = q->failed ? NULL : e->ctx;
	return 0;
}

unsigned rdx_sendq_flush(struct rdx_sendq *q, void (*give)(void *arg, uint32_t slot), void *arg)
{
	unsigned msgs = 0;

	for (; q->head != q->tail; q->head++) {
		const struct rdx_sendq_ent *e = &q->e[q->head % q->cap];

		give(arg, e->slot);
		msgs += e->ctx != NULL;
	}
	q->failed = 1;
	return msgs;
}
