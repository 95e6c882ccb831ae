/*
 * dedup.h - what a receiving liblds handle was already given, so that a
 * message its sender resends after a gateway crash arrives once.
 *
 * A sending handle is named by its endpoint and its incarnation (a random
 * number drawn when it was opened), and numbers its messages 1, 2, 3...
 * Its messages to one destination arrive in increasing id order, resends
 * included (lds_resend keeps a message's id and is refused once a newer
 * message could have overtaken it).  So one number per sender is enough:
 * the highest id taken; a message at or below it is a copy.
 *
 * At most `max` senders are remembered; beyond that the one heard from
 * least recently is forgotten (a copy from it would then be taken again).
 * The sender of the last message is looked up first, without hashing, as
 * messages mostly come in runs from one sender.
 */
#ifndef LDS_DEDUP_H
#define LDS_DEDUP_H

#include <stddef.h>
#include <stdint.h>

struct dedup_src;

struct dedup {
	struct dedup_src **buckets;    /* allocated on first use */
	struct dedup_src *recent;      /* most recently heard from ... */
	struct dedup_src *oldest;      /* ... and least */
	size_t n, max;
};

void dedup_init(struct dedup *d, size_t max);
void dedup_free(struct dedup *d);

/* Message id from (src, incarnation) has arrived whole.  Returns 1 if it is
 * new (and remembers it), 0 if it is a copy of one taken before, -ENOMEM. */
int dedup_admit(struct dedup *d, const char *src, uint64_t incarnation, uint64_t id);

#endif
