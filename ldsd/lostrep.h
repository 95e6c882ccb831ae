/*
 * lostrep.h - telling a peer gateway which of its messages this gateway
 * will never deliver (docs/protocol.md, "Undelivered messages").
 *
 * A message for an endpoint that no process opens in time (or one whose
 * share of memory is full, see endpoint.h) is dropped by the receiving
 * gateway.  Its number must reach the sender as "lost", never as
 * "delivered": so the receiver reports it in a message from its reserved
 * endpoint CLUSTER/ldsd.lost to the peer's, carried like any other message
 * (exactly once, in order), and counts it settled in its ACKs only once
 * the peer has reported that report delivered.  Until then the ACKs'
 * delivered ranges leave the number out.
 *
 * Report payload (big-endian): u8 version (1), u8 reason (enum ep_drop),
 * u16 n (1..LOSTREP_MAX_RANGES), then n ranges of u64 first, u64 last:
 * message numbers of the link direction, 0-based, inclusive, ascending.
 * Pure bookkeeping: no I/O.
 */
#ifndef LDS_LOSTREP_H
#define LDS_LOSTREP_H

#include <stddef.h>
#include <stdint.h>

#include "endpoint.h"
#include "libclient/idset.h"

#define LOSTREP_ENDPOINT   "ldsd.lost"
#define LOSTREP_CLIENT     UINT64_MAX    /* sendbuf client id of reports */
#define LOSTREP_VERSION    1u
#define LOSTREP_MAX_RANGES 1024u
#define LOSTREP_MAX_LEN    (4u + 16u * LOSTREP_MAX_RANGES)
#define LOSTREP_REASONS    6u            /* enum ep_drop values */

struct lostrep_sent {
	uint64_t id;
	struct idset nos;                    /* message numbers + 1 */
	struct lostrep_sent *next;
};

struct lostrep {
	struct idset pending[LOSTREP_REASONS];   /* dropped, not yet in a report; numbers + 1 */
	struct lostrep_sent *sent;               /* reported, not yet confirmed */
	uint64_t next_id;
	uint64_t dropped;                        /* messages dropped, ever (status) */
	enum ep_drop why;                        /* of the report being applied */
};

/* A zeroed struct lostrep is ready. */
void lostrep_free(struct lostrep *lr);
/* The session restarted: forgets everything pending or sent. */
void lostrep_reset(struct lostrep *lr);

/* Message number msgno was dropped for reason.  Returns 0 or -ENOMEM. */
int lostrep_add(struct lostrep *lr, uint64_t msgno, enum ep_drop reason);
/* True if a report waits to be sent. */
int lostrep_pending(const struct lostrep *lr);
/* Encodes the next report into buf (LOSTREP_MAX_LEN bytes) and returns its
 * length, or 0 if nothing is pending; *id gets its id.  Nothing changes
 * until lostrep_sent(lr, *id) says it went out. */
size_t lostrep_encode(const struct lostrep *lr, uint8_t *buf, uint64_t *id);
/* The report lostrep_encode just made was queued: its numbers wait for
 * confirmation. */
void lostrep_sent(struct lostrep *lr, uint64_t id);
/* The peer reported report id delivered: calls settle(arg, first, last)
 * for every range of message numbers it carried, then forgets it. */
void lostrep_confirmed(struct lostrep *lr, uint64_t id, void (*settle)(void *arg, uint64_t first, uint64_t last),
		       void *arg);

/* Decodes a report from the peer: calls lost(arg, first, last, reason) for
 * each range.  Returns 0, or -EBADMSG (nothing was called). */
int lostrep_decode(const uint8_t *p, size_t len, void (*lost)(void *arg, uint64_t first, uint64_t last, unsigned reason),
		   void *arg);

#endif
