/*
 * rdx_sendq.h - the send work requests an RDMA conn has posted and not
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
#ifndef LDS_RDX_SENDQ_H
#define LDS_RDX_SENDQ_H

#include <stdint.h>

struct rdx_sendq_ent {
	uint32_t slot;       /* the send slot (rdx_pool index) */
	void *ctx;           /* the core's message, on its last chunk; else NULL */
};

struct rdx_sendq {
	struct rdx_sendq_ent *e;
	uint32_t cap;        /* entries: the send queue's depth */
	uint64_t head;       /* sequence (wr_id) of the oldest posted entry */
	uint64_t tail;       /* sequence the next entry gets */
	int failed;          /* a completion failed: nothing is reported sent any more */
};

/* Outcome of one completion. */
struct rdx_sendq_done {
	uint32_t slot;       /* give this send slot back */
	void *ctx;           /* non-NULL: report this message sent */
};

int rdx_sendq_init(struct rdx_sendq *q, uint32_t cap);
void rdx_sendq_fini(struct rdx_sendq *q);
/* Room for another entry. */
int rdx_sendq_full(const struct rdx_sendq *q);
/* Entries posted and not completed. */
uint32_t rdx_sendq_outstanding(const struct rdx_sendq *q);
/* Records a posted send; returns its wr_id.  The caller checked
 * rdx_sendq_full. */
uint64_t rdx_sendq_push(struct rdx_sendq *q, uint32_t slot, void *ctx);
/* The completion of wr_id, ok or not: 0 with *d filled, or -EPROTO for a
 * wr_id that is not the oldest outstanding one (nothing changes). */
int rdx_sendq_complete(struct rdx_sendq *q, uint64_t wr_id, int ok, struct rdx_sendq_done *d);
/* After the queue pair is destroyed (no send can complete any more):
 * calls give(arg, slot) for every entry still outstanding, empties the
 * queue and returns how many core messages it held (never reported
 * sent). */
unsigned rdx_sendq_flush(struct rdx_sendq *q, void (*give)(void *arg, uint32_t slot), void *arg);

#endif
