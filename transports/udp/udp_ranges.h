/*
 * udp_ranges.h - a sorted set of half-open ranges [lo, hi) of 64-bit
 * numbers: packet numbers received (ACK frames), stream offsets received,
 * acknowledged or to be sent again.  At most max ranges, so a peer that
 * punches holes cannot make it grow without bound.
 */
#ifndef LDS_UDP_RANGES_H
#define LDS_UDP_RANGES_H

#include <stddef.h>
#include <stdint.h>

struct udp_range {
	uint64_t lo, hi;            /* [lo, hi), lo < hi */
};

struct udp_ranges {
	struct udp_range *r;        /* ascending, disjoint, not touching */
	size_t n, cap;
	size_t max;                 /* the most ranges ever held */
};

void udp_ranges_init(struct udp_ranges *s, size_t max);
void udp_ranges_free(struct udp_ranges *s);
/* Adds [lo, hi), merging with neighbours.  Returns 0, -ENOSPC when it
 * would take a range more than max (nothing added), or -ENOMEM. */
int udp_ranges_add(struct udp_ranges *s, uint64_t lo, uint64_t hi);
int udp_ranges_contains(const struct udp_ranges *s, uint64_t x);
/* Removes every number below x. */
void udp_ranges_remove_below(struct udp_ranges *s, uint64_t x);
/* The first number >= from not in the set; *len the length of the gap
 * there (UINT64_MAX - start when no range lies above). */
uint64_t udp_ranges_next_missing(const struct udp_ranges *s, uint64_t from, uint64_t *len);

#endif
