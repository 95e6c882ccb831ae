/*
 * sendbuf.h - the sending half of a link: blocks, sequence numbers, acks,
 * resends, and the messages the blocks carry.
 *
 * Messages are appended whole as records (wire.h) to one byte stream, cut
 * into sequence-numbered blocks of block_size bytes.  A block is kept until
 * the peer acknowledges it (recv_cum); a message is remembered until the
 * peer reports it delivered (deliv ranges), so that if the peer loses its
 * state every undelivered message can be named to its sender.
 *
 * Memory: block payloads never exceed mem bytes in total; the message table
 * holds at most max_msgs entries.  Pure bookkeeping: no I/O, no clock, one
 * thread.
 */
#ifndef LDS_SENDBUF_H
#define LDS_SENDBUF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "wire.h"

enum sb_state {
	SB_FREE,       /* slot unused */
	SB_OPEN,       /* being filled; not yet sendable */
	SB_READY,      /* sealed, never sent or must be resent */
	SB_INFLIGHT,   /* written to stream `stream`, not acknowledged */
	SB_SACKED,     /* peer has it (selective ack); waiting for recv_cum */
};

/*
 * A payload's bytes left where the sender wrote them (a local client's
 * shared-memory ring) until a stream seals them into their block, saving
 * the copy: sendbuf_defer.  Their owner learns, through settled, when the
 * bytes have been read (or are no longer wanted) and may be reused.
 */
struct sb_src {
	void (*settled)(struct sb_src *src, uint32_t token);
};

struct sb_defer {
	uint32_t off, len;    /* where in the block */
	const uint8_t *src;
	struct sb_src *own;
	uint32_t token;       /* the owner's */
};

#define SB_DEFER_MAX 4     /* deferred regions per block; beyond, copied */

struct sb_block {
	uint64_t seq;
	enum sb_state state;
	int stream;        /* stream it was last sent on, -1 if none */
	int busy;          /* a stream is writing it right now: do not free */
	int freed;         /* acknowledged while busy: free when released */
	uint32_t len;
	uint32_t sends;    /* times handed out (resends = sends - 1) */
	uint8_t hdr[WIRE_DATA_HDR_LEN];   /* valid once sealed, unless the sendbuf's no_hdr */
	uint8_t *data;
	/* A sealed stream sealed data in place (seal_block): data holds the
	 * ciphertext under that stream's key, nonce and tag the rest, until
	 * the block is acknowledged or unsealed to go on another stream. */
	int ciphered;
	uint64_t nonce;
	uint8_t tag[WIRE_TAG_LEN];
	/* Bytes of the block still at their source (sendbuf_defer), in
	 * order; sealed from there or copied in (sendbuf_materialize). */
	unsigned ndefer;
	struct sb_defer defer[SB_DEFER_MAX];
};

struct sb_msg {
	uint64_t client;   /* client connection id */
	uint64_t id;       /* client's message id */
	void *tag;         /* the owner's, from sendbuf_append */
	uint32_t len;      /* payload bytes */
	uint8_t delivered;
};

/* Called once per message when it is delivered or lost. */
typedef void sb_msg_cb(void *arg, const struct sb_msg *m);

struct sendbuf {
	size_t block_size, mem;
	/* The link seals its frames itself (ldsd/sealq.c): blocks need no
	 * clear header, nor the CRC pass over their bytes that it costs; and
	 * their bytes need not be there before a stream takes them, so
	 * payloads may be deferred (sendbuf_defer). */
	int no_hdr;
	/* Payloads may be deferred where defer_min > 0 (set by the link: its
	 * streams seal blocks in place), into a block with at most
	 * defer_ahead not yet sent before it: what went out in about two
	 * ticks, at least defer_min (sendbuf_defer_tick). */
	uint64_t defer_min, defer_ahead, defer_mark;
	size_t nslots;          /* mem / block_size */
	struct sb_block *slots; /* ring indexed by seq % nslots */
	uint8_t *blocks;        /* the slots' payloads, block_size bytes each: one region, registered once
				   with a transport that wants it (reg_*, the transport's, NULL if none) */
	void *reg_blocks, *reg_slots;
	uint64_t base;          /* lowest seq still held */
	uint64_t next;          /* next seq to create (the open block if any is next-1) */
	int open;               /* block next-1 is SB_OPEN */
	uint64_t send_cursor;   /* lowest seq that may be SB_READY */
	uint64_t window_end;    /* from the peer's ACKs */
	size_t resend_pending;  /* blocks in SB_READY that were sent before */

	struct sb_msg *msgs;    /* ring indexed by msgno % max_msgs */
	size_t max_msgs;
	uint64_t msg_base, msg_next;
	struct iovec *fill_iov; /* nslots + 2: where a payload goes, see sendbuf_append_from */

	/* Counters for status output.  bytes_reached counts each block once
	 * when the peer first reports it, selectively or cumulatively: unlike
	 * bytes_acked it does not wait behind a missing block, so it measures
	 * what the path carried in an interval (streams = "auto"). */
	uint64_t blocks_sent, blocks_resent, blocks_acked;
	uint64_t bytes_sent, bytes_acked, bytes_reached, msgs_delivered, msgs_lost;
	/* Payload bytes left at their source (sendbuf_defer), and those of
	 * them copied in after all (sendbuf_materialize). */
	uint64_t bytes_deferred, bytes_deferred_copied;
};

/* Returns 0 or -ENOMEM.  mem >= 4 * block_size (config checks this). */
int sendbuf_init(struct sendbuf *sb, size_t block_size, size_t mem);
void sendbuf_free(struct sendbuf *sb);

/* Bytes of record stream that can be appended now. */
size_t sendbuf_space(const struct sendbuf *sb);
/* Bytes held in blocks (sent or not), i.e. not yet acknowledged. */
size_t sendbuf_unacked_bytes(const struct sendbuf *sb);
/* True if every appended byte is acknowledged and every message delivered. */
int sendbuf_idle(const struct sendbuf *sb);

/*
 * Appends one message as a record.  Returns 0, -ENOSPC if it does not fit
 * now (sendbuf_space too small or message table full: retry after acks),
 * -EMSGSIZE if it can never fit, or -EINVAL for a bad record header.
 */
int sendbuf_append(struct sendbuf *sb, const struct wire_record *rec, const void *payload,
		   uint64_t client, void *tag);

/*
 * Fills the n regions of iov (rec->len bytes in all, in order) with the
 * payload, from wherever it is (a socket: the bytes go straight into the
 * blocks), or defers regions (sendbuf_defer on sb; sb is NULL where the
 * regions are not blocks).  Returns 0, or a negative errno if it could not.
 */
typedef int sb_fill_fn(void *arg, struct sendbuf *sb, const struct iovec *iov, int n);
/* The sb_fill_fn for a payload in memory: arg points to it. */
int sendbuf_fill_copy(void *arg, struct sendbuf *sb, const struct iovec *iov, int n);

/*
 * From an sb_fill_fn: the len bytes of the region at dst (within one
 * fill region, so in one block) are at src and stay there, unchanged or
 * not as their owner pleases, until own->settled(own, token).  Returns
 * the block, which the owner may sendbuf_materialize until then; or NULL
 * if they must be copied now instead: the link writes clear blocks, the
 * block lies beyond the peer's window or more than defer_ahead blocks
 * before it wait to be sent (it may not be sealed soon), or it has
 * SB_DEFER_MAX deferred regions already.
 */
struct sb_block *sendbuf_defer(struct sendbuf *sb, uint8_t *dst, const uint8_t *src, size_t len, struct sb_src *own,
			       uint32_t token);
/* Once per tick: payloads may be deferred into blocks due within about
 * two ticks at the rate blocks went out in the last one; else they are
 * copied, so that a slow link does not hold their source. */
void sendbuf_defer_tick(struct sendbuf *sb);
/* Where b's bytes lie, in order, into iov (room for 2 * SB_DEFER_MAX + 1):
 * its slot or their deferred source.  Returns the count. */
int sendbuf_block_src(const struct sb_block *b, struct iovec *iov);
/* b's deferred bytes were read (sealed from their source): let them go. */
void sendbuf_block_settle(struct sb_block *b);
/* Copies b's deferred bytes into its slot and lets them go: for a writer
 * that needs them there. */
void sendbuf_materialize(struct sendbuf *sb, struct sb_block *b);
/* As sendbuf_append, with the payload written by fill(arg, ...) in place.
 * If fill fails, nothing was appended and its error is returned. */
int sendbuf_append_from(struct sendbuf *sb, const struct wire_record *rec, sb_fill_fn *fill, void *arg,
			uint64_t client, void *tag);

/*
 * Picks the next block to write: the lowest block to resend, else the next
 * sealed block below the peer's window, else - if allow_partial - seals and
 * returns the open block.  Marks it busy and in flight on `stream`.  Returns
 * NULL if nothing may be sent.
 */
struct sb_block *sendbuf_next(struct sendbuf *sb, int stream, int allow_partial);
/* True if sendbuf_next would return a block now. */
int sendbuf_has_next(const struct sendbuf *sb, int allow_partial);
/* The stream finished (or abandoned) writing b. */
void sendbuf_release(struct sendbuf *sb, struct sb_block *b);

/* True if a block sent on `stream` still waits for its acknowledgement. */
int sendbuf_stream_unacked(const struct sendbuf *sb, int stream);

/* Turns a ciphered block back into its bytes (sendbuf_stream_lost). */
typedef void sb_unseal_fn(void *arg, struct sb_block *b);

/* Stream `stream` broke: its unacknowledged blocks must be resent, each
 * ciphered one first unsealed by unseal(arg, b) with the stream's key.
 * Returns how many blocks were queued again. */
size_t sendbuf_stream_lost(struct sendbuf *sb, int stream, sb_unseal_fn *unseal, void *arg);

/*
 * Applies an ACK.  For each message newly delivered, calls
 * delivered(arg, msg).  Returns 0, or -EPROTO if the ACK is
 * impossible (acks beyond what was sent, window going backwards below
 * recv_cum): the peer is broken or lying.
 */
int sendbuf_ack(struct sendbuf *sb, const struct wire_ack *a, sb_msg_cb *delivered, void *arg);

/*
 * The peer will never deliver messages first..last (message numbers): calls
 * lost(arg, msg) for each of them not yet delivered or lost, and counts it
 * done.  Numbers outside what is still pending are ignored.
 */
void sendbuf_msgs_lost(struct sendbuf *sb, uint64_t first, uint64_t last, sb_msg_cb *lost, void *arg);

/*
 * The peer lost its state: forgets every block and calls lost(arg, msg)
 * for every message not reported delivered, in order; then starts a new
 * session at seq 0.
 */
void sendbuf_reset(struct sendbuf *sb, sb_msg_cb *lost, void *arg);

#endif
