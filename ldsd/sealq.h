/*
 * sealq.h - a stream's output queue when its link seals frames
 * (encryption = "aead").
 *
 * Frames are sealed when they are queued, so that the order of the bytes
 * in the queue is the order of their nonces (seal.h): control frames and
 * data blocks alike are written from here, in turn, and never reordered.
 * Before the stream has keys (the handshake) frames are queued in clear.
 * Memory: the queue grows to what is pending; the caller bounds it.
 *
 * On a message transport the queue's bytes are sent from where they lie
 * and must stay there until the transport is done with them (transport.h,
 * send_msg): bytes taken (sealq_take) are held until given back
 * (sealq_release), in the order taken.  Such a queue is fixed (sealq_fix:
 * registered, never moved) and used as a ring: a frame that does not fit
 * behind the last one goes to the start of the buffer if the held bytes
 * left room there, so the queue is refilled while the transport still
 * holds a round trip of it (a linear queue idled one round trip per
 * queueful).  A frame never wraps: sealq_data() is always whole frames.
 */
#ifndef LDS_SEALQ_H
#define LDS_SEALQ_H

#include <stddef.h>
#include <stdint.h>

#include "seal.h"

struct sealq {
	struct seal seal;           /* the stream's keys; none until seal_init */
	uint8_t *buf;
	size_t cap;
	/* Bytes [head, off) are held (taken, not released), [off, len) wait
	 * to be written.  Wrapped (wrap > 0): the bytes from head run to wrap,
	 * then on from 0 to len; off lies in either part. */
	size_t head, off, len, wrap;
	size_t held;                /* bytes held, in both parts */
	uint8_t *old;               /* the buffer before sealq_fix while it holds bytes taken before */
	size_t old_held;            /* those bytes, given back before any in buf */
	int fixed;                  /* buf never moves (sealq_fix: registered with a transport) */
};

/* Bytes waiting to be written, from sealq_data(): up to the wrap if off is
 * before it. */
static inline size_t sealq_pending(const struct sealq *q)
{
	return (q->wrap && q->off >= q->head ? q->wrap : q->len) - q->off;
}

static inline const uint8_t *sealq_data(const struct sealq *q)
{
	return q->buf + q->off;
}

/*
 * Queues one whole frame (as a wire_encode_*() wrote it), sealed if the
 * queue has a tx key, unless the queue would then hold more than limit
 * bytes.  Returns 0, -ENOBUFS (over limit), -ENOMEM, or -EIO (sealing
 * failed: the stream must be closed).
 */
int sealq_put(struct sealq *q, const uint8_t *frame, size_t len, size_t limit);

/* Queues a DATA frame of seq and block, sealed (the queue must have a tx
 * key).  0, -ENOMEM or -EIO. */
int sealq_put_data(struct sealq *q, uint64_t seq, const uint8_t *block, uint32_t len);

/* n bytes of sealq_data() were written. */
void sealq_sent(struct sealq *q, size_t n);

/* Message transports: n bytes of sealq_data() were handed over and must
 * not move until sealq_release gives them back (oldest first). */
void sealq_take(struct sealq *q, size_t n);
void sealq_release(struct sealq *q, size_t n);
/* True if need more bytes can be queued now, in one part of the ring
 * (without moving held ones). */
int sealq_fits(const struct sealq *q, size_t need);
/* Makes the buffer cap bytes, once, and never moves it again.  Bytes held
 * now stay where they are (in the old buffer, freed when they are given
 * back).  0 or -ENOMEM. */
int sealq_fix(struct sealq *q, size_t cap);

/* Frees the buffer and the keys; q is then empty and keyless. */
void sealq_free(struct sealq *q);

#endif
