/* rdx_sendq.c - posted sends in order, selectively signalled; see rdx_sendq.h. */
#include <errno.h>
#include <stdlib.h>

#include "rdx_sendq.h"

int rdx_sendq_init(struct rdx_sendq *q, uint32_t cap, uint32_t every)
{
	if (cap == 0 || every == 0 || every > cap)
		return -EINVAL;
	*q = (struct rdx_sendq){ .cap = cap, .every = every };
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

int rdx_sendq_signal(const struct rdx_sendq *q, const void *ctx)
{
	return ctx != NULL || q->unsignalled + 1 >= q->every || rdx_sendq_outstanding(q) + 1 >= q->cap;
}

uint64_t rdx_sendq_push(struct rdx_sendq *q, uint32_t slot, void *ctx, int signalled)
{
	q->e[q->tail % q->cap] = (struct rdx_sendq_ent){ .slot = slot, .ctx = ctx };
	q->unsignalled = signalled ? 0 : q->unsignalled + 1;
	return q->tail++;
}

int rdx_sendq_complete(struct rdx_sendq *q, uint64_t wr_id, int ok)
{
	if (wr_id < q->done || wr_id >= q->tail)
		return -EPROTO;
	q->done = wr_id + 1;
	if (!ok)
		q->failed = 1;
	return 0;
}

int rdx_sendq_pop(struct rdx_sendq *q, struct rdx_sendq_done *d)
{
	const struct rdx_sendq_ent *e;

	if (q->head == q->done)
		return 0;
	e = &q->e[q->head++ % q->cap];
	d->slot = e->slot;
	/* A failure may be any of the sends it retires: report none. */
	d->ctx = q->failed ? NULL : e->ctx;
	return 1;
}

unsigned rdx_sendq_flush(struct rdx_sendq *q, void (*give)(void *arg, uint32_t slot), void *arg)
{
	unsigned msgs = 0;

	for (; q->head != q->tail; q->head++) {
		const struct rdx_sendq_ent *e = &q->e[q->head % q->cap];

		if (e->slot != RDX_NO_SLOT)
			give(arg, e->slot);
		msgs += e->ctx != NULL;
	}
	q->done = q->tail;
	q->failed = 1;
	return msgs;
}
