/*
 * rdx_credit.h - credit-based flow control of one RDMA conn.
 *
 * A two-sided send needs a receive buffer posted at the peer, or the
 * peer's queue pair fails (receiver not ready).  Each side counts, mod
 * 2^16, the receive buffers it has made available to the other (its
 * grant, starting at its depth) and writes the count into the header of
 * every message it sends; the other side's credits are that grant minus
 * the messages it has sent.  Cumulative counts make a stale or repeated
 * grant harmless and wrap-around free; a grant that would give more than
 * the peer's depth is a lie, refused.
 *
 * A buffer is granted again only when the core is done with what it held
 * (msg_done), so a receiver that does not read stops its sender.  Data
 * leaves RDMA_CREDIT_RESERVE credits unused, so a side can always tell the
 * other of its grants with a credit-only message; such a message is sent
 * only once `threshold` (at least 2) grants wait, so that credit-only
 * messages, which cost a credit each, never answer each other forever.
 * Pure bookkeeping: no verbs, unit-tested (tests/unit/check_rdma_credit.c).
 */
#ifndef LDS_RDX_CREDIT_H
#define LDS_RDX_CREDIT_H

#include <stdint.h>

#define RDMA_CREDIT_RESERVE 1u

struct rdx_credit {
	uint16_t peer_depth;  /* the peer's receive buffers for us (its private data) */
	uint16_t granted;     /* the peer's grant, as last heard */
	uint16_t used;        /* messages we have sent */
	uint16_t depth;       /* our receive buffers */
	uint16_t released;    /* our grant: buffers made available to the peer */
	uint16_t told;        /* our grant as we last sent it */
	uint16_t received;    /* messages the peer has sent us */
	uint16_t threshold;   /* grants waiting that call for a credit-only message */
};

/* depth and peer_depth in RP_MIN_DEPTH..RP_MAX_DEPTH (rdx_proto.h). */
void rdx_credit_init(struct rdx_credit *c, uint16_t depth, uint16_t peer_depth);
/* Messages we may send now (0..peer_depth). */
unsigned rdx_credit_avail(const struct rdx_credit *c);
/* Spends a credit for a message (data != 0: a data chunk, which must
 * leave the reserve; 0: a credit-only message) and sets *stamp to the
 * grant its header carries.  0, or -EAGAIN: no credit, nothing spent. */
int rdx_credit_take(struct rdx_credit *c, int data, uint16_t *stamp);
/* The peer's grant from a message's header: 0, or -EPROTO for a grant
 * that goes back or gives more credits than the peer has buffers. */
int rdx_credit_heard(struct rdx_credit *c, uint16_t grant);
/* A message arrived in one of our buffers: 0, or -EPROTO when the peer
 * had no credit for it. */
int rdx_credit_arrived(struct rdx_credit *c);
/* n buffers of arrived messages are posted again and may be granted: 0,
 * or -EINVAL for more than arrived and not yet released. */
int rdx_credit_release(struct rdx_credit *c, unsigned n);
/* Grants waiting to be told (released, not yet stamped on a message). */
unsigned rdx_credit_untold(const struct rdx_credit *c);
/* A credit-only message is due (threshold grants wait) and a credit is
 * there for it. */
int rdx_credit_update_due(const struct rdx_credit *c);

#endif
