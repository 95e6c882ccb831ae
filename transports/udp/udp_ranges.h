/*
 * udp_ranges.h - half-open ranges [lo, hi) of 64-bit numbers: packet
 * numbers received (ACK frames), stream offsets received, acknowledged or
 * to be sent again.  Kept in an idset (libclient/idset.h: the same sorted
 * ranges, inclusive) bounded by its max, so that a peer that punches
 * holes cannot make one grow without bound; these adapt the bounds.
 */
#ifndef LDS_UDP_RANGES_H
#define LDS_UDP_RANGES_H

#include <stdint.h>
#include <string.h>

#include "libclient/idset.h"

static inline void udp_ranges_init(struct idset *s, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
}

static inline void udp_ranges_free(struct idset *s)
{
	idset_free(s);
}

/* Adds [lo, hi), merging with neighbours.  Returns 0, -ENOSPC when it
 * would take a range more than max (nothing added), or -ENOMEM. */
static inline int udp_ranges_add(struct idset *s, uint64_t lo, uint64_t hi)
{
	int64_t r = lo < hi ? idset_add(s, lo, hi - 1) : 0;

	return r < 0 ? (int)r : 0;
}

static inline int udp_ranges_contains(const struct idset *s, uint64_t x)
{
	return idset_contains(s, x);
}

/* Removes every number below x. */
static inline void udp_ranges_remove_below(struct idset *s, uint64_t x)
{
	if (x > 0)
		idset_remove_upto(s, x - 1);
}

/* The first number >= from not in the set; *len the length of the gap
 * there (UINT64_MAX - start when no range lies above). */
static inline uint64_t udp_ranges_next_missing(const struct idset *s, uint64_t from, uint64_t *len)
{
	uint64_t first, last;

	if (!idset_gap(s, from, UINT64_MAX - 1, &first, &last)) {
		*len = 0;
		return UINT64_MAX;
	}
	*len = last - first + 1;
	return first;
}

#endif
