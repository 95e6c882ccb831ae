/*
 * udp_recvq.h - a conn's incoming stream reassembled in a ring of the
 * receive window's size, and cut back into messages (a 4-byte length,
 * then the bytes), each handed up whole, in order, once.  Data beyond the
 * window, or holes too many to track, are refused: the packet is then
 * not acknowledged and comes again.
 */
#ifndef LDS_UDP_RECVQ_H
#define LDS_UDP_RECVQ_H

#include <stddef.h>
#include <stdint.h>

#include "udp_ranges.h"

struct udp_recvq {
	uint8_t *buf;             /* stream offset o lives at buf[o % size] */
	size_t size;              /* the receive window */
	size_t open;              /* the part of it granted to the peer so far (<= size) */
	size_t max_msg;
	uint64_t base;            /* bytes handed up and done with */
	uint64_t contig;          /* every byte below is here */
	struct idset above;       /* bytes here beyond contig */
	int held;                 /* the core holds the message at base */
	size_t held_len;          /* its payload length */
	uint8_t *scratch;         /* a message that wraps the ring, made whole */
	size_t want;              /* a larger size asked for while a message was held */
	uint64_t dups;            /* stream bytes received twice */
};

int udp_recvq_init(struct udp_recvq *q, size_t window, size_t max_msg);
void udp_recvq_free(struct udp_recvq *q);
/* Bytes [off, off + len).  Returns 0 (taken, or already here), -EMSGSIZE
 * (beyond the window) or -ENOSPC (too many holes): the caller drops the
 * packet; -ENOMEM. */
int udp_recvq_insert(struct udp_recvq *q, uint64_t off, const uint8_t *data, size_t len);
/* The next whole message: 1 with *data, *len (valid until udp_recvq_done),
 * 0 if none yet, -EPROTO if its length exceeds max_msg (the peer lies),
 * -ENOMEM. */
int udp_recvq_peek(struct udp_recvq *q, const uint8_t **data, size_t *len);
/* A whole message waits (peek would return 1 or -EPROTO). */
int udp_recvq_ready(const struct udp_recvq *q);
/* The core is done with the message peek returned. */
void udp_recvq_done(struct udp_recvq *q);
/* How far the peer may send: the granted window's end. */
uint64_t udp_recvq_limit(const struct udp_recvq *q);
/* Grants the peer open bytes of the window (at most its size). */
void udp_recvq_open(struct udp_recvq *q, size_t open);
/* Grows the ring to size bytes, keeping what it holds, and grants the
 * peer all of it; at once, or at udp_recvq_done while the core holds a
 * message in place.  A smaller size changes nothing.  0 or -ENOMEM (the
 * ring stays as it was). */
int udp_recvq_grow(struct udp_recvq *q, size_t size);

#endif
