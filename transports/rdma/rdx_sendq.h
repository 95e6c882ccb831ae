/*
 * rdx_sendq.h - the send work requests an RDMA conn has posted and not
 * yet seen complete, in posting order, and which of them are signalled.
 *
 * Each entry is one chunk, RDMA write or credit-only message and the send
 * slot it uses (its header, and its payload when copied), if any.  Only
 * some sends ask for a completion (selective signalling, so that
 * completion processing is amortised): every `every`-th, the last before
 * the queue is full (else nothing would ever come back), and every send
 * that ends a core message, whose completion the core waits for
 * (upcalls->sent).  A reliable-connected queue pair executes sends in the
 * order they were posted, so a signalled send's success means it and every
 * unsignalled one before it reached the peer's adapter: they are retired
 * together, and a core message is done when its last send is.  After the
 * first failed completion the queue pair is in error: what follows
 * completes flushed (unsignalled sends too), and no message is reported
 * sent any more - the core gets those back through upcalls->closed and
 * resends them on another conn.  Pure bookkeeping, no verbs
 * (check_rdma_sendq.c).
 */
#ifndef LDS_RDX_SENDQ_H
#define LDS_RDX_SENDQ_H

#include <stdint.h>

#define RDX_NO_SLOT UINT32_MAX   /* an entry with no send slot (an RDMA write) */

struct rdx_sendq_ent {
	uint32_t slot;       /* the send slot (rdx_pool index), or RDX_NO_SLOT */
	void *ctx;           /* the core's message, on its last send; else NULL */
};

struct rdx_sendq {
	struct rdx_sendq_ent *e;
	uint32_t cap;        /* entries: the send queue's depth */
	uint32_t every;      /* at most this many sends in a row without a signal */
	uint32_t unsignalled;/* sends posted since the last signalled one */
	uint64_t head;       /* sequence (wr_id) of the oldest posted entry */
	uint64_t done;       /* entries before this one are complete, not yet popped */
	uint64_t tail;       /* sequence the next entry gets */
	int failed;          /* a completion failed: nothing is reported sent any more */
};

/* Outcome of one retired entry. */
struct rdx_sendq_done {
	uint32_t slot;       /* give this send slot back (unless RDX_NO_SLOT) */
	void *ctx;           /* non-NULL: report this message sent */
};

/* cap entries, a signal at least every `every` (1..cap) sends. */
int rdx_sendq_init(struct rdx_sendq *q, uint32_t cap, uint32_t every);
void rdx_sendq_fini(struct rdx_sendq *q);
/* Room for another entry. */
int rdx_sendq_full(const struct rdx_sendq *q);
/* Entries posted and not retired. */
uint32_t rdx_sendq_outstanding(const struct rdx_sendq *q);
/* Whether the next send, for core message ctx (NULL: none ends with it),
 * must be signalled. */
int rdx_sendq_signal(const struct rdx_sendq *q, const void *ctx);
/* Records a posted send (signalled as rdx_sendq_signal said); returns its
 * wr_id.  The caller checked rdx_sendq_full. */
uint64_t rdx_sendq_push(struct rdx_sendq *q, uint32_t slot, void *ctx, int signalled);
/* The completion of wr_id, ok or not: it and every entry before it are
 * complete (rdx_sendq_pop hands them out).  0, or -EPROTO for a wr_id
 * already complete or never posted (nothing changes). */
int rdx_sendq_complete(struct rdx_sendq *q, uint64_t wr_id, int ok);
/* The oldest complete entry: 1 with *d filled, 0 when none waits. */
int rdx_sendq_pop(struct rdx_sendq *q, struct rdx_sendq_done *d);
/* After the queue pair is destroyed (no send can complete any more):
 * calls give(arg, slot) for every entry still held that has a slot,
 * empties the queue and returns how many core messages it held (never
 * reported sent). */
unsigned rdx_sendq_flush(struct rdx_sendq *q, void (*give)(void *arg, uint32_t slot), void *arg);

#endif
