/*
 * mw_ring.h - growing a ring buffer of fixed-size elements (the runtime's
 * queues: a worker's tasks, the sub-master's fine tasks, a CM's messages
 * awaiting their acknowledgement).
 */
#ifndef MW_RING_H
#define MW_RING_H

#include <stddef.h>

/* The ring *ring of *cap elements of size elem holds n of them from
 * *head on.  When it is full, doubles it (at least 64) with the
 * elements moved to the front (*head = 0) and the new slots zeroed, so
 * that an element may own a buffer it keeps across reuse (the worker's
 * queued tasks).  0 or -ENOMEM. */
int mw_ring_make_room(void **ring, size_t *cap, size_t *head, size_t n, size_t elem);

#endif
