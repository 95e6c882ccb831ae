/*
 * rdma_sendq.h - the send work requests an RDMA conn has posted and not
 * yet seen complete, in posting order.
 *
 * Each entry is one chunk or credit-only message and the send slot it
 * uses (its header, and its payload when copied).  A reliable-connected
 * queue pair completes sends in the order they were posted, and a send's
 * success means the peer's adapter has the data, so a core message is
 * done (upcalls->sent) when its last chunk completes well.  After the
 * first failed completion the queue pair is in error: what follows
 * completes flushed, and no message is reported sent any more - the
 * core gets those back through upcalls->closed and resends them on
 * another conn.  Pure bookkeeping, no verbs (check_rdma_sendq.c).
 */
#ifndef LDS_RDMA_SENDQ_H
#define LDS_RDMA_SENDQ_H

#include <stdint.h>

struct rdma_sendq_ent {
	uint32_t slot;       /* the send slot (rdma_pool index) */
	void *ctx;           /* the core's message, on its last chunk; else NULL */
};

struct rdma_sendq {
	struct rdma_sendq_ent *e;
	uint32_t cap;        /* entries: the send queue's depth */
	uint64_t head;       /* sequence (wr_id) of the oldest posted entry */
	uint64_t tail;       /* sequence the next entry gets */
	int failed;          /* a completion failed: nothing is reported sent any more */
};

/* Outcome of one completion. */
struct rdma_sendq_done {
	uint32_t slot;       /* give this send slot back */
	void *ctx;           /* non-NULL: report this message sent */
};

int rdma_sendq_init(struct rdma_sendq *q, uint32_t cap);
void rdma_sendq_fini(struct rdma_sendq *q);
/* Room for another entry. */
int rdma_sendq_full(const struct rdma_sendq *q);
/* Entries posted and not completed. */
uint32_t rdma_sendq_outstanding(const struct rdma_sendq *q);
/* Records a posted send; returns its wr_id.  The caller checked
 * rdma_sendq_full. */
uint64_t rdma_sendq_push(struct rdma_sendq *q, uint32_t slot, void *ctx);
/* The completion of wr_id, ok or not: 0 with *d filled, or -EPROTO for a
 * wr_id that is not the oldest outstanding one (nothing changes). */
int rdma_sendq_complete(struct rdma_sendq *q, uint64_t wr_id, int ok, struct rdma_sendq_done *d);
/* After the queue pair is destroyed (no send can complete any more):
 * calls give(arg, slot) for every entry still outstanding, empties the
 * queue and returns how many core messages it held (never reported
 * sent). */
unsigned rdma_sendq_flush(struct rdma_sendq *q, void (*give)(void *arg, uint32_t slot), void *arg);

#endif
