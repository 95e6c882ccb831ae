/* rdma_sendq.c - posted sends in order; see rdma_sendq.h. */
#include <errno.h>
#include <stdlib.h>

#include "rdma_sendq.h"

int rdma_sendq_init(struct rdma_sendq *q, uint32_t cap)
{
	*q = (struct rdma_sendq){ .cap = cap };
	q->e = calloc(cap, sizeof(*q->e));
	return q->e ? 0 : -ENOMEM;
}

void rdma_sendq_fini(struct rdma_sendq *q)
{
	free(q->e);
	q->e = NULL;
}

int rdma_sendq_full(const struct rdma_sendq *q)
{
	return q->tail - q->head >= q->cap;
}

uint32_t rdma_sendq_outstanding(const struct rdma_sendq *q)
{
	return (uint32_t)(q->tail - q->head);
}

uint64_t rdma_sendq_push(struct rdma_sendq *q, uint32_t slot, void *ctx)
{
	q->e[q->tail % q->cap] = (struct rdma_sendq_ent){ .slot = slot, .ctx = ctx };
	return q->tail++;
}

int rdma_sendq_complete(struct rdma_sendq *q, uint64_t wr_id, int ok, struct rdma_sendq_done *d)
{
	const struct rdma_sendq_ent *e;

	if (q->head == q->tail || wr_id != q->head)
		return -EPROTO;
	e = &q->e[q->head++ % q->cap];
	if (!ok)
		q->failed = 1;
	d->slot = e->slot;
	d->ctx = q->failed ? NULL : e->ctx;
	return 0;
}

unsigned rdma_sendq_flush(struct rdma_sendq *q, void (*give)(void *arg, uint32_t slot), void *arg)
{
	unsigned msgs = 0;

	for (; q->head != q->tail; q->head++) {
		const struct rdma_sendq_ent *e = &q->e[q->head % q->cap];

		give(arg, e->slot);
		msgs += e->ctx != NULL;
	}
	q->failed = 1;
	return msgs;
}
