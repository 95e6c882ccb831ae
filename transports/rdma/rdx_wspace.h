/*
 * rdx_wspace.h - the space of the write rings of one RDMA conn: where a
 * large frame goes by RDMA write with immediate data, and the credits for
 * that space (a second scheme beside rdx_credit.h's receive buffers).
 *
 * Each side may register a ring (one page-aligned slab, registered once
 * for remote writes) and advertises it in its private data (rdx_proto.h).
 * A writer puts frames in the peer's ring one after the other at
 * RP_WRITE_ALIGN-aligned offsets; a frame that does not fit before the
 * ring's end goes to its start, the tail left as padding.  Both sides apply
 * this rule, so the receiver knows where the next frame must be and refuses
 * an immediate that names another place.  Space is counted cumulatively,
 * mod 2^32: the writer may use bytes up to the receiver's grant, which
 * starts at the ring's size and grows as the core is done with frames
 * (msg_done, in order), so a reader that stops reading stops its writer.
 * Grants ride on credit-only messages, sent once a quarter of the ring
 * waits to be told; frames are at most an eighth of the ring, so that such
 * a grant always makes room for one (the write carries the writer's
 * receive-buffer credits back, and nothing waits on a grant never sent).
 * Pure logic, no verbs (tests/unit/check_rdma_wspace.c).
 */
#ifndef LDS_RDX_WSPACE_H
#define LDS_RDX_WSPACE_H

#include <stddef.h>
#include <stdint.h>

/* One direction's ring as both of its sides see it. */
struct rdx_wring {
	uint32_t size;       /* bytes; 0: no writes this way */
	uint32_t pos;        /* where the next frame goes, before the wrap rule */
	uint32_t written;    /* bytes used so far, padding included, mod 2^32 */
	uint32_t limit;      /* the grant the writer has: as heard (ours), as told (the peer's) */
};

struct rdx_wspace {
	struct rdx_wring out;   /* the peer's ring, which we write into */
	uint64_t peer_addr;
	uint32_t peer_rkey;
	struct rdx_wring in;    /* our ring, which the peer writes into */
	uint8_t *base;          /* its memory */
	uint32_t grant;         /* our grant: what the core is done with, plus the size */
	size_t threshold;       /* frames larger than this go by write (rdma_write_threshold) */
};

/* How a frame (or a credit-only message, len 0) is sent. */
enum rdx_way {
	RDX_WAY_INLINE,      /* one send, copied into the work request */
	RDX_WAY_SEND,        /* one send */
	RDX_WAY_CHUNKS,      /* several sends (rdx_chunk.h) */
	RDX_WAY_WRITE,       /* one RDMA write with immediate data into the peer's ring */
};

/* Where a frame goes in a ring: its offset, and the bytes it uses
 * (padding before it included). */
struct rdx_wplace {
	uint32_t off, span;
};

/* Our ring: size bytes at base (0: none), and our threshold; the peer
 * has none until rdx_wspace_peer. */
void rdx_wspace_init(struct rdx_wspace *w, uint8_t *base, uint32_t size, size_t threshold);
/* The peer's ring, from its private data (already checked). */
void rdx_wspace_peer(struct rdx_wspace *w, uint64_t addr, uint32_t rkey, uint32_t size);
/* How a frame of len bytes goes: inline when its message (header
 * included) is at most inline_max bytes; by write when it is larger than
 * the threshold, from registered memory (sendable: every piece has a desc
 * and they fit one work request), and fits the peer's ring; else one send
 * when it fits a chunk, chunks otherwise. */
enum rdx_way rdx_wspace_way(const struct rdx_wspace *w, size_t len, int sendable, size_t chunk, size_t inline_max);
/* Where the next frame of len bytes goes in the peer's ring: 0, or
 * -EAGAIN when the grant does not cover it yet. */
int rdx_wspace_place(const struct rdx_wspace *w, size_t len, struct rdx_wplace *p);
/* The frame placed at p was posted. */
void rdx_wspace_wrote(struct rdx_wspace *w, const struct rdx_wplace *p);
/* The peer's grant from a credit-only message: 0, or -EPROTO for one
 * that goes back or covers more than its ring. */
int rdx_wspace_heard(struct rdx_wspace *w, uint32_t grant);
/* The peer wrote len bytes and says they are at off: 0 with *data and
 * *span (for rdx_wspace_consumed), or -EPROTO when we have no ring, the
 * length is out of RP_MIN_WRITE .. size / RP_WRITE_FRAC, off is not
 * where the rule puts the frame, or the space was not granted. */
int rdx_wspace_arrived(struct rdx_wspace *w, uint32_t off, size_t len, uint8_t **data, uint32_t *span);
/* The core is done with the oldest written frame, of span bytes. */
void rdx_wspace_consumed(struct rdx_wspace *w, uint32_t span);
/* A credit-only message is due for the grant (a quarter of the ring). */
int rdx_wspace_update_due(const struct rdx_wspace *w);
/* Our grant, for a credit-only message; it counts as told. */
uint32_t rdx_wspace_tell(struct rdx_wspace *w);

#endif
