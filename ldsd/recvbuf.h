/*
 * recvbuf.h - the receiving half of a link: reorders blocks, drops
 * duplicates, reassembles records into messages, grants the sender its
 * window, and tracks which messages were delivered.
 *
 * Memory: out-of-order blocks plus messages not yet delivered never exceed
 * mem bytes, because the window advertised to the sender only ever covers
 * memory that is free.  A message keeps its memory until recvbuf_delivered;
 * a block kept as one of its parts counts twice meanwhile (its buffer and
 * the room left for it in data), so that the bound holds as it would if
 * the block had been copied.
 * Pure bookkeeping: no I/O, no clock, one thread.
 */
#ifndef LDS_RECVBUF_H
#define LDS_RECVBUF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "libclient/idset.h"
#include "wire.h"

/* Bytes [off, off + len) of a message that lie in a block buffer of their
 * own (buf, malloc'd) instead of in its data. */
struct rb_part {
	uint8_t *buf;
	uint32_t off, len;
};

struct rb_msg;

/* Memory outside ldsd's heap that a message is reassembled in (the
 * destination process's ring, clientshm.c): rb_msg_free calls release
 * instead of freeing the data; the store may also move the data into a
 * buffer of its own (data replaced, store cleared) at any time the
 * message is not being written. */
struct rb_store {
	void (*release)(struct rb_store *st, struct rb_msg *m);
};

/* A reassembled message, handed to the owner; freed with rb_msg_free. */
struct rb_msg {
	uint64_t msgno;            /* 0-based number in this link direction */
	uint32_t epoch;            /* session it belongs to (see recvbuf_reset) */
	struct wire_record rec;    /* names, sender's id, len */
	/* rec.len bytes, except the parts: blocks that arrived ahead of the
	 * one expected, held in buffers of their own, and wholly inside the
	 * payload, are kept where they are instead of being copied in.  Read
	 * through rb_msg_iov, or rb_msg_flatten first. */
	uint8_t *data;
	struct rb_store *store;    /* data lies there; NULL: malloc'd */
	struct rb_part *parts;     /* by offset; NULL if none */
	uint32_t nparts;
	uint32_t extra;            /* bytes of memory counted beside rec.len: the parts' buffers */
	/* For the owner: */
	struct rb_msg *next;       /* queue link */
	void *origin;              /* where it came from (a link, or NULL = local) */
	uint64_t client;           /* local messages: the sending client's id */
	uint64_t t_ns;             /* when it was queued for its endpoint */
};

struct rb_slot {
	uint8_t *data;
	uint32_t len;
};

struct recvbuf {
	size_t block_size, mem;
	size_t max_msg;            /* largest record accepted: what the link advertises, min(mem / 2, WIRE_MAX_MSG) */
	size_t nslots;
	struct rb_slot *slots;     /* ring indexed by seq % nslots */
	uint64_t recv_cum;         /* next seq expected in order */
	uint8_t *spare;            /* block_size bytes for recvbuf_place, or NULL */
	uint64_t window_end;
	size_t ooo_bytes;          /* held out-of-order block payload */
	uint64_t held_end;         /* one past the highest seq ever held out of order */
	size_t msg_bytes;          /* messages (complete or partial) not yet delivered */
	/* Where the message whose header was just read is reassembled
	 * (rec.len bytes; the owner sets m->store), or NULL: in a buffer of
	 * its own.  Such a message keeps no block as a part: blocks are
	 * written, or copied, into it. */
	uint8_t *(*place)(void *arg, struct rb_msg *m);
	void *place_arg;

	/* Record parser state. */
	uint8_t hdr[WIRE_REC_FIXED + 2 * WIRE_ENDPOINT_MAX];
	size_t hdr_have;
	struct rb_msg *cur;        /* message being filled, or NULL */
	size_t cur_have;
	uint64_t next_msgno;

	/* Delivered message numbers, each + 1 (an idset counts from 1).
	 * Unbounded so no delivery is forgotten; ACKs carry the prefix and
	 * the lowest WIRE_MAX_RANGES ranges above it. */
	struct idset delivered;
	uint32_t epoch;
	int frozen;                /* window no longer grows (daemon draining) */

	uint64_t blocks_recv, blocks_dup, bytes_recv, msgs_recv;
	uint64_t blocks_held;       /* of blocks_recv, those that arrived ahead of the one expected */
};

int recvbuf_init(struct recvbuf *rb, size_t block_size, size_t mem);
void recvbuf_free(struct recvbuf *rb);

/*
 * Takes one block.  Completed messages are passed in order to
 * deliver(arg, msg); the owner then owns msg.  Returns 1 if the block was
 * new, 0 if it was a duplicate (dropped), -EPROTO if it lies outside the
 * window or its records are malformed, -EMSGSIZE if a record declares
 * more than max_msg bytes (refused before anything is allocated for it;
 * the peer is broken in both cases), -ENOMEM.
 */
int recvbuf_block(struct recvbuf *rb, uint64_t seq, const uint8_t *data, uint32_t len,
		  void (*deliver)(void *arg, struct rb_msg *m), void *arg);

/*
 * Where block seq of len bytes may be written straight, instead of being
 * passed to recvbuf_block (which copies it): if it is the next block in
 * order and lies wholly inside the payload of the message being
 * reassembled, there; if it is a later one within the window and not yet
 * held, a buffer that it will be held in.  NULL if neither (or out of
 * memory): recvbuf_block takes it as usual.  Once the block is written
 * there (and found intact), recvbuf_placed takes it; if it never is,
 * nothing changed.
 */
uint8_t *recvbuf_place(struct recvbuf *rb, uint64_t seq, uint32_t len);
/* Block seq of len bytes is where recvbuf_place said: takes it as
 * recvbuf_block would.  Returns 1 or as recvbuf_block (-EPROTO,
 * -EMSGSIZE, -ENOMEM). */
int recvbuf_placed(struct recvbuf *rb, uint64_t seq, uint32_t len, void (*deliver)(void *arg, struct rb_msg *m),
		   void *arg);

/* The owner delivered (or discarded) m: frees it, releases its memory, and
 * records its number as delivered (unless it belongs to an earlier
 * session).  Returns 0 or -ENOMEM (the number could not be recorded). */
int recvbuf_delivered(struct recvbuf *rb, struct rb_msg *m);

/* The owner drops m without delivering it: frees it and releases its
 * memory, but does not record its number (recvbuf_settle does, once the
 * sender knows; see lostrep.h).  Returns 1 if m belongs to the current
 * session, so that its number must be reported, else 0. */
int recvbuf_discard(struct recvbuf *rb, struct rb_msg *m);
/* Records message numbers first..last as settled, as if delivered.
 * Returns 0 or -ENOMEM. */
int recvbuf_settle(struct recvbuf *rb, uint64_t first, uint64_t last);

/* Fills the ACK fields (recv_cum, window, SACKs, deliveries).  Extends the
 * window into free memory first. */
void recvbuf_ack(struct recvbuf *rb, struct wire_ack *a);

/* The peer lost its state: drops out-of-order blocks and any partial
 * message, restarts numbering at 0 in a new epoch.  Messages already
 * handed out stay the owner's (their memory is still counted until
 * delivered). */
void recvbuf_reset(struct recvbuf *rb);

void rb_msg_free(struct rb_msg *m);

/* Fills at most max iovecs with m's payload from byte off on, in order;
 * returns how many (0 at the end). */
int rb_msg_iov(const struct rb_msg *m, size_t off, struct iovec *iov, int max);

/* Copies m's parts into m->data and frees their buffers: m->data then
 * holds the whole payload.  For readers that need it in one piece (exec
 * requests, loss reports); its memory stays counted until delivery. */
void rb_msg_flatten(struct rb_msg *m);

#endif
