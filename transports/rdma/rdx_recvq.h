/*
 * rdx_recvq.h - what an RDMA conn has received and not yet handed to the
 * core, in order, and when each receive buffer is posted again and its
 * credit granted.
 *
 * A message of one chunk stays in its receive buffer until the core is
 * done with it (msg_done): then the buffer is posted again and granted.  A
 * credit-only message, and a chunk of a longer message once copied out,
 * give their buffer back at once; the chunk's credit too, unless a
 * reassembled message already waits for the core: then it is owed until
 * that one is done, so that a peer cannot make us copy without bound while
 * the core does not read.  A frame the peer wrote into our ring
 * (rdx_wspace.h) is handed up where it lies; its receive buffer, which
 * only carried the completion, goes back at once, and its ring space when
 * the core is done.  Every arrival is checked (header, credits, chunk
 * order, the immediate and the ring space); an error ends the conn.  Pure logic, no verbs: rdx_data.c
 * posts the buffers it is told to (check_rdma_recvq.c).
 */
#ifndef LDS_RDX_RECVQ_H
#define LDS_RDX_RECVQ_H

#include <stddef.h>
#include <stdint.h>

#include "rdx_chunk.h"
#include "rdx_credit.h"
#include "rdx_wspace.h"

/* A received message waiting for the core. */
struct rdx_ready {
	uint8_t *data;
	size_t len;
	int64_t buf;         /* its receive buffer, posted again when the core is done; RDX_COPY, RDX_RING */
	uint32_t span;       /* RDX_RING: the ring bytes it frees */
};
#define RDX_COPY (-1)        /* a reassembled copy (malloc'd) */
#define RDX_RING (-2)        /* in our write ring */

struct rdx_recvq {
	struct rdx_ready *ring;
	uint32_t cap, head, n;
	int out;             /* the head is with the core */
	unsigned copies;     /* reassembled messages in the ring */
	unsigned owed;       /* chunk credits granted once those are done */
	size_t max_msg;
	struct rdx_reasm ra;
	struct rdx_wspace *ws;  /* the write rings (rdx_recvq_writes); NULL: none */
	uint64_t bytes;      /* payload received */
};

/* Room for what depth receive buffers' credits allow; 0 or -ENOMEM. */
int rdx_recvq_init(struct rdx_recvq *q, uint32_t depth, size_t max_msg);
/* Takes frames written into ws's ring (and grants heard for the peer's)
 * too: room for the most such frames the ring holds.  Before any arrival;
 * 0 or -ENOMEM. */
int rdx_recvq_writes(struct rdx_recvq *q, struct rdx_wspace *ws);
/* Frees the copies and the message being put together. */
void rdx_recvq_fini(struct rdx_recvq *q);
/* A message of got bytes arrived in receive buffer i (buf), under credit
 * accounting cr.  0 with *repost = 1 when buffer i is to be posted again
 * now, 0 when the message stays in it for the core; -EPROTO (a bad header,
 * no credit for it, a lying grant, a chunk out of place) or -ENOMEM: the
 * conn ends. */
int rdx_recvq_arrived(struct rdx_recvq *q, struct rdx_credit *cr, uint32_t i, uint8_t *buf, size_t got,
		      int *repost);
/* The peer wrote got bytes into our ring with immediate data imm (host
 * order): its receive buffer is to be posted again now.  0, or -EPROTO
 * (no credit, a lying grant, a frame not where or not as large as the
 * ring allows, no ring): the conn ends. */
int rdx_recvq_written(struct rdx_recvq *q, struct rdx_credit *cr, uint32_t imm, size_t got);
/* The oldest message for the core: 0, or -EAGAIN when there is none.  It
 * stays the head until rdx_recvq_done. */
int rdx_recvq_peek(struct rdx_recvq *q, const uint8_t **data, size_t *len);
/* The core is done with the head: *repost is the receive buffer to post
 * again, or -1.  0, or -EINVAL with no head out, -EPROTO when a grant
 * breaks the accounting. */
int rdx_recvq_done(struct rdx_recvq *q, struct rdx_credit *cr, int64_t *repost);

#endif
