/*
 * idset.h - a set of message ids (1, 2, 3...) kept as sorted, disjoint,
 * non-touching inclusive ranges.  liblds keeps two: the ids whose outcome
 * is known (settled), and the lost ids the application may still resend.
 *
 * Ranges are found by binary search, and the common patterns (ids settled
 * in order, one range growing at the end) touch only the ends of the array.
 * The UDP transport keeps its packet numbers and stream offsets in them
 * too, bounded (max), so that a peer punching holes cannot make one grow
 * without limit.
 */
#ifndef LDS_IDSET_H
#define LDS_IDSET_H

#include <stddef.h>
#include <stdint.h>

struct idrange {
	uint64_t first, last;
};

struct idset {
	struct idrange *r;
	size_t n, cap;
	size_t max;     /* the most ranges it may hold; 0: no limit */
};

/* Adds first..last (first <= last).  Returns how many of them were not in
 * the set yet, -ENOSPC if it would take a range more than max, or -ENOMEM
 * (either way the set is unchanged). */
int64_t idset_add(struct idset *s, uint64_t first, uint64_t last);
/* Removes id.  Returns 1 if it was in the set, 0 if not, -ENOMEM (or
 * -ENOSPC past max) if a range had to be split and could not be (the set
 * is unchanged). */
int idset_remove(struct idset *s, uint64_t id);
/* Removes every id <= id. */
void idset_remove_upto(struct idset *s, uint64_t id);
int idset_contains(const struct idset *s, uint64_t id);
/* The first run of ids in from..upto that are not in the set: returns 1
 * and stores it in *first, *last, or 0 if every one of them is. */
int idset_gap(const struct idset *s, uint64_t from, uint64_t upto, uint64_t *first, uint64_t *last);
/* The largest n such that 1..n are all in the set; 0 if 1 is not. */
uint64_t idset_prefix(const struct idset *s);
/* Frees the ranges; the set is empty and keeps its max. */
void idset_free(struct idset *s);

#endif
