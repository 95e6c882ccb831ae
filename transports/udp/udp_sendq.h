/*
 * udp_sendq.h - a conn's outgoing messages as one stream of bytes: each
 * message is a 4-byte big-endian length and its bytes, read from the
 * core's memory in place until the peer has acknowledged all of it.
 * Tracks what was never sent, what must go again (lost), what the peer
 * acknowledged, and how far the peer's receive window reaches.
 */
#ifndef LDS_UDP_SENDQ_H
#define LDS_UDP_SENDQ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "udp_ranges.h"

#define UDP_MSG_IOV_INLINE 4

struct udp_msg {
	uint64_t start;           /* stream offset of its length prefix */
	uint64_t len;             /* prefix and payload */
	uint8_t hdr[4];
	uint8_t hdr_len;          /* 4, or 0 for the copy made at close */
	int iovcnt;
	struct iovec iov_inline[UDP_MSG_IOV_INLINE];
	struct iovec *iov;        /* iov_inline or allocated */
	void *ctx;                /* the core's, for upcalls->sent */
};

struct udp_sendq {
	struct udp_msg *m;        /* ring of n messages from head */
	size_t cap, head, n;
	uint64_t end;             /* stream bytes queued */
	uint64_t next;            /* first byte never sent */
	uint64_t acked;           /* every byte below is acknowledged */
	struct idset acked_above; /* acknowledged beyond acked */
	struct idset retx;        /* to send again */
	uint64_t peer_max;        /* the peer's window: send below this */
	uint8_t *owned;           /* the copy made at close (udp_sendq_own) */
	size_t hint;              /* the message the last lookup found (from head) */
};

void udp_sendq_init(struct udp_sendq *q);
void udp_sendq_free(struct udp_sendq *q);
/* Queues a message of the iovecs' total; 0 or -ENOMEM. */
int udp_sendq_push(struct udp_sendq *q, const struct iovec *iov, int iovcnt, size_t total, void *ctx);
/* Copies stream bytes [off, off + n) (all queued) to dst. */
void udp_sendq_gather(struct udp_sendq *q, uint64_t off, uint8_t *dst, size_t n);
/* Points piece[] at stream bytes [off, off + n) (all queued) where they
 * lie, for a send that reads them in place: valid until the next push or
 * pop.  Returns the pieces, or -1 if that takes more than max. */
int udp_sendq_refs(struct udp_sendq *q, uint64_t off, size_t n, struct iovec *piece, int max);
/* The next bytes to send, at most max: lost ones first, then new ones
 * the peer's window allows.  Returns 1 with *off, *len (*retx: sent
 * before), or 0 when nothing may go. */
int udp_sendq_next(struct udp_sendq *q, size_t max, uint64_t *off, size_t *len, int *retx);
/* Marks [off, off + len) as sent (after udp_sendq_next). */
void udp_sendq_sent(struct udp_sendq *q, uint64_t off, size_t len, int retx);
/* Bytes the peer acknowledged / that were lost.  0 or -errno. */
int udp_sendq_acked(struct udp_sendq *q, uint64_t off, size_t len);
int udp_sendq_lost(struct udp_sendq *q, uint64_t off, size_t len);
/* The oldest message the peer has whole: 1 with its ctx, removed; 0 if none. */
int udp_sendq_pop_done(struct udp_sendq *q, void **ctx);
/* Copies what is not yet acknowledged into memory of its own and forgets
 * the core's: after a close, the core's buffers are no longer ours.
 * 0 or -ENOMEM. */
int udp_sendq_own(struct udp_sendq *q);
/* Everything queued is acknowledged. */
int udp_sendq_empty(const struct udp_sendq *q);

#endif
