/* rdma_credit.c - credit-based flow control; see rdma_credit.h. */
#include <errno.h>

#include "rdma_credit.h"

static uint16_t diff(uint16_t a, uint16_t b)
{
	return (uint16_t)(a - b);
}

void rdma_credit_init(struct rdma_credit *c, uint16_t depth, uint16_t peer_depth)
{
	*c = (struct rdma_credit){ .peer_depth = peer_depth, .granted = peer_depth, .depth = depth,
				   .released = depth, .told = depth };
	/* Below depth - RESERVE, or a peer stuck on its reserve would wait
	 * for grants that never reach the threshold. */
	c->threshold = depth / 4 > 2 ? (uint16_t)(depth / 4) : 2;
}

unsigned rdma_credit_avail(const struct rdma_credit *c)
{
	return diff(c->granted, c->used);
}

int rdma_credit_take(struct rdma_credit *c, int data, uint16_t *stamp)
{
	if (rdma_credit_avail(c) <= (data ? RDMA_CREDIT_RESERVE : 0))
		return -EAGAIN;
	c->used++;
	c->told = c->released;
	*stamp = c->released;
	return 0;
}

int rdma_credit_heard(struct rdma_credit *c, uint16_t grant)
{
	if (diff(grant, c->granted) > c->peer_depth || diff(grant, c->used) > c->peer_depth)
		return -EPROTO;
	c->granted = grant;
	return 0;
}

int rdma_credit_arrived(struct rdma_credit *c)
{
	if (c->received == c->released)
		return -EPROTO;
	c->received++;
	return 0;
}

int rdma_credit_release(struct rdma_credit *c, unsigned n)
{
	/* Arrived and not released: depth minus the buffers the peer may
	 * still fill. */
	unsigned held = c->depth - diff(c->released, c->received);

	if (n > held)
		return -EINVAL;
	c->released = (uint16_t)(c->released + n);
	return 0;
}

unsigned rdma_credit_untold(const struct rdma_credit *c)
{
	return diff(c->released, c->told);
}

int rdma_credit_update_due(const struct rdma_credit *c)
{
	return rdma_credit_untold(c) >= c->threshold && rdma_credit_avail(c) > 0;
}
