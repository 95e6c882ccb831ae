/* rdx_credit.c - credit-based flow control; see rdx_credit.h. */
#include <errno.h>

#include "rdx_credit.h"

static uint16_t diff(uint16_t a, uint16_t b)
{
	return (uint16_t)(a - b);
}

void rdx_credit_init(struct rdx_credit *c, uint16_t depth, uint16_t peer_depth)
{
	*c = (struct rdx_credit){ .peer_depth = peer_depth, .granted = peer_depth, .depth = depth,
				   .released = depth, .told = depth };
	/* Below depth - RESERVE, or a peer stuck on its reserve would wait
	 * for grants that never reach the threshold. */
	c->threshold = depth / 4 > 2 ? (uint16_t)(depth / 4) : 2;
}

unsigned rdx_credit_avail(const struct rdx_credit *c)
{
	return diff(c->granted, c->used);
}

int rdx_credit_take(struct rdx_credit *c, int data, uint16_t *stamp)
{
	if (rdx_credit_avail(c) <= (data ? RDMA_CREDIT_RESERVE : 0))
		return -EAGAIN;
	c->used++;
	c->told = c->released;
	*stamp = c->released;
	return 0;
}

int rdx_credit_heard(struct rdx_credit *c, uint16_t grant)
{
	if (diff(grant, c->granted) > c->peer_depth || diff(grant, c->used) > c->peer_depth)
		return -EPROTO;
	c->granted = grant;
	return 0;
}

int rdx_credit_arrived(struct rdx_credit *c)
{
	if (c->received == c->released)
		return -EPROTO;
	c->received++;
	return 0;
}

int rdx_credit_release(struct rdx_credit *c, unsigned n)
{
	/* Arrived and not released: depth minus the buffers the peer may
	 * still fill. */
	unsigned held = c->depth - diff(c->released, c->received);

	if (n > held)
		return -EINVAL;
	c->released = (uint16_t)(c->released + n);
	return 0;
}

unsigned rdx_credit_untold(const struct rdx_credit *c)
{
	return diff(c->released, c->told);
}

int rdx_credit_update_due(const struct rdx_credit *c)
{
	return rdx_credit_untold(c) >= c->threshold && rdx_credit_avail(c) > 0;
}
