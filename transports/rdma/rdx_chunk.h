/*
 * rdx_chunk.h - a core message cut into chunks that each fit one of the
 * peer's receive buffers, and put back together on the other side.
 *
 * Sending: the chunker keeps a copy of the message's iovecs (the memory
 * itself stays the core's until upcalls->sent) and hands out one chunk at
 * a time as credits allow, so that a message larger than the peer's whole
 * receive queue still goes.  A chunk is sent from the core's memory when
 * every piece of it is registered (a desc) and the pieces fit the send
 * work request's gather list; else the transport copies it into a send
 * slot.  Receiving: a message of one chunk is handed up in its receive
 * buffer; longer ones are copied into one allocation of the message's
 * announced total, checked chunk by chunk.  Pure logic, no verbs
 * (tests/unit/check_rdma_chunk.c).
 */
#ifndef LDS_RDX_CHUNK_H
#define LDS_RDX_CHUNK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "rdx_proto.h"

#define RDMA_CHUNK_IOV 8   /* iovecs one message may come in */

struct rdx_seg {
	const uint8_t *base;
	size_t len;
	void *desc;          /* the core's mem_reg desc, NULL: not registered */
};

struct rdx_chunk {
	struct rdx_seg seg[RDMA_CHUNK_IOV];
	int nseg;
	size_t len;          /* payload bytes */
	uint8_t flags;       /* RP_F_FIRST, RP_F_LAST */
	int registered;      /* every piece has a desc */
};

struct rdx_chunker {
	struct rdx_seg iov[RDMA_CHUNK_IOV];
	int iovcnt;
	size_t total;        /* the message's bytes */
	size_t off;          /* bytes already sent as chunks */
	int cur;             /* iovec where the next chunk starts, */
	size_t cur_off;      /* and the offset in it */
	void *ctx;           /* the core's, for upcalls->sent */
};

/* Takes a message (iovcnt 1..RDMA_CHUNK_IOV, desc NULL or one per iovec):
 * 0, -EMSGSIZE for 0 bytes or more than max_msg, -EINVAL for too many
 * iovecs.  Empty iovecs are skipped. */
int rdx_chunker_start(struct rdx_chunker *k, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx,
		       size_t max_msg);
/* Every piece of the message is registered, and there are at most
 * max_seg of them: it can go in one work request as it is. */
int rdx_chunker_registered(const struct rdx_chunker *k, uint32_t max_seg);
/* A message is taken and not all of it chunked. */
int rdx_chunker_busy(const struct rdx_chunker *k);
/* The next chunk, of at most room (>= 1) payload bytes, into *c; the
 * chunker does not move until rdx_chunker_advance(k, c).  0, or -ENOENT
 * when nothing is left. */
int rdx_chunker_next(const struct rdx_chunker *k, size_t room, struct rdx_chunk *c);
void rdx_chunker_advance(struct rdx_chunker *k, const struct rdx_chunk *c);
/* Copies c's pieces to dst (c->len bytes). */
void rdx_chunk_copy(const struct rdx_chunk *c, uint8_t *dst);

struct rdx_reasm {
	uint8_t *buf;        /* the message being put together; NULL: none */
	size_t total, got;
};

/* Where a data chunk with header h goes: 1 = it is a whole message, handed
 * up in its buffer; 0 = rdx_reasm_add; -EBADMSG = a whole message while
 * another is being put together. */
int rdx_reasm_whole(const struct rdx_reasm *r, const struct rp_hdr *h);
/* Adds a chunk (h decoded by rp_hdr_decode, so h->len <= h->total <=
 * max_msg).  1 when the message is complete: *msg (malloc'd, the caller
 * frees it) and *len; 0 when more chunks are due; -EBADMSG for a chunk out
 * of place (a first chunk during a message, a later one without a first,
 * another total, more bytes than the total, a last chunk short of it);
 * -ENOMEM. */
int rdx_reasm_add(struct rdx_reasm *r, const struct rp_hdr *h, const uint8_t *payload, uint8_t **msg, size_t *len);
void rdx_reasm_fini(struct rdx_reasm *r);

#endif
