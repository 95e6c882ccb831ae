/*
 * stream_framer.h - how a stream puts its frames on its conn: the byte
 * stream framer (stream_bytes.c, for LDS_TP_CAP_STREAM kinds) or the
 * message framer (stream_msg.c, for LDS_TP_CAP_MESSAGE kinds).
 *
 * stream.c holds what every stream does (state, control frames, close,
 * query) and reaches a framer only through its table, which stream_new.c
 * chooses; a framer calls down into stream.c's helpers below (parsing,
 * opening and handing up frames, taking blocks, closing).  Only these
 * four files include this.
 */
#ifndef LDS_STREAM_FRAMER_H
#define LDS_STREAM_FRAMER_H

#include "stream.h"

#define READS_PER_EVENT 16         /* fairness between streams and clients */

struct stream_framer {
	/* Writes queued frames and blocks until the transport pushes back;
	 * a write error goes to s->failed, never closes s. */
	void (*flush)(struct stream *s);
	/* The conn has something to read: reads at most READS_PER_EVENT
	 * times, handing frames up; may close s. */
	void (*readable)(struct stream *s);
	/* s is closing (its blocks not yet written are back in the send
	 * buffer): lets go of what the transport lent.  Returns 1 if the
	 * transport still holds memory of s (messages sent, not yet `sent`):
	 * s then lives on until the transport's closed upcall. */
	int (*closing)(struct stream *s);
	/* Frees the framer's state of s (and gives back what s held). */
	void (*free)(struct stream *s);
	/* Control frames go through the seal queue (s->sq) even in clear. */
	int ctl_in_queue;
};

extern const struct stream_framer stream_bytes_framer;
extern const struct stream_framer stream_msg_framer;

/* Who s belongs to, for logs: its link, or where it came from. */
const char *stream_who(const struct stream *s);
/* What a sealed stream may hold unwritten: a batch of blocks and the
 * control frames queued behind it. */
size_t stream_sealed_max(const struct stream *s);
/* The size of a sealed queue whose bytes its transport holds until it is
 * done with them (sealq_fix): what it has not let go of yet - for a
 * transport that keeps data until the peer acknowledges it (udp, TCP
 * with MSG_ZEROCOPY), a round trip's worth - is refilled as a ring as the
 * oldest is let go: a quarter of the link's send memory, at most 64 MiB,
 * at least twice stream_sealed_max. */
size_t stream_sealq_ring(const struct stream *s);
/* Takes the next batch of blocks to write into s->out, if s may. */
void stream_take_blocks(struct stream *s);
/* Seals the blocks of s->out into s->sq (copying in first any of their
 * bytes left at their source, sendbuf_materialize) and gives them back to
 * the send buffer (their bytes are in the queue now).  0, or -EIO. */
int stream_seal_blocks(struct stream *s);
/* Seals the blocks of s->out where they lie (seal_block), for a framer
 * that writes each frame from its block and keeps the block until it is
 * written.  0, or -EIO (no key or counter spent: s must close). */
int stream_seal_in_place(struct stream *s);
/* A read or write failed with err: closes s, saying why. */
void stream_broken_io(struct stream *s, int err);
/* A frame wire_frame_parse refused with err: says why, closes s. */
void stream_bad_frame(struct stream *s, int err, uint8_t version);
/* A frame refused for why (the peer's fault): says so, closes s. */
void stream_refuse_frame(struct stream *s, const char *why);
/* A frame whose seal is wrong (why): says so, closes s. */
void stream_bad_seal(struct stream *s, const char *why, uint8_t type);
#define STREAM_BAD_TAG "authentication failed (altered, replayed, reordered or injected) on a sealed"
/* Opens the sealed frame f at frame in place, or checks that an unsealed
 * one may be taken as it is.  0, or -1 after closing s. */
int stream_unseal(struct stream *s, uint8_t *frame, struct wire_frame *f);
/* Hands f to the owner; returns -1 if s was closed. */
int stream_deliver(struct stream *s, struct wire_frame *f);

#endif
