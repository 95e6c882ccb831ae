/* udp_ranges.c - a bounded set of ranges; see udp_ranges.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "udp_ranges.h"

void udp_ranges_init(struct udp_ranges *s, size_t max)
{
	memset(s, 0, sizeof(*s));
	s->max = max;
}

void udp_ranges_free(struct udp_ranges *s)
{
	free(s->r);
	s->r = NULL;
	s->n = s->cap = 0;
}

/* The index of the first range whose hi >= lo (touching counts). */
static size_t first_touching(const struct udp_ranges *s, uint64_t lo)
{
	size_t a = 0, b = s->n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (s->r[m].hi < lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

int udp_ranges_add(struct udp_ranges *s, uint64_t lo, uint64_t hi)
{
	size_t i, j;

	if (lo >= hi)
		return 0;
	i = first_touching(s, lo);
	j = i;
	while (j < s->n && s->r[j].lo <= hi)
		j++;
	if (j > i) {
		/* Ranges i..j-1 touch [lo, hi): merge them into i. */
		s->r[i].lo = s->r[i].lo < lo ? s->r[i].lo : lo;
		s->r[i].hi = s->r[j - 1].hi > hi ? s->r[j - 1].hi : hi;
		memmove(&s->r[i + 1], &s->r[j], (s->n - j) * sizeof(s->r[0]));
		s->n -= j - i - 1;
		return 0;
	}
	if (s->n == s->max)
		return -ENOSPC;
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 8;
		struct udp_range *nr;

		if (nc > s->max)
			nc = s->max;
		nr = realloc(s->r, nc * sizeof(*nr));
		if (nr == NULL)
			return -ENOMEM;
		s->r = nr;
		s->cap = nc;
	}
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(s->r[0]));
	s->r[i] = (struct udp_range){ lo, hi };
	s->n++;
	return 0;
}

int udp_ranges_contains(const struct udp_ranges *s, uint64_t x)
{
	size_t i = first_touching(s, x + 1);

	/* r[i].hi >= x + 1 > x: x is in it if lo <= x. */
	return x != UINT64_MAX && i < s->n && s->r[i].lo <= x;
}

void udp_ranges_remove_below(struct udp_ranges *s, uint64_t x)
{
	size_t k = 0;

	while (k < s->n && s->r[k].hi <= x)
		k++;
	memmove(&s->r[0], &s->r[k], (s->n - k) * sizeof(s->r[0]));
	s->n -= k;
	if (s->n && s->r[0].lo < x)
		s->r[0].lo = x;
}

uint64_t udp_ranges_next_missing(const struct udp_ranges *s, uint64_t from, uint64_t *len)
{
	size_t i = first_touching(s, from + 1);

	if (i < s->n && s->r[i].lo <= from) {
		from = s->r[i].hi;
		i++;
	}
	*len = i < s->n ? s->r[i].lo - from : UINT64_MAX - from;
	return from;
}
