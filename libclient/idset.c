/* idset.c - sets of message ids as ranges; see idset.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "idset.h"

/* The first range whose last id is >= id (s->n if none). */
static size_t idset_find(const struct idset *s, uint64_t id)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->r[mid].last < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int idset_reserve(struct idset *s, size_t n)
{
	size_t cap = s->cap ? s->cap : 8;
	struct idrange *r;

	if (n <= s->cap)
		return 0;
	if (s->max && n > s->max)
		return -ENOSPC;
	while (cap < n)
		cap *= 2;
	if (s->max && cap > s->max)
		cap = s->max;
	r = realloc(s->r, cap * sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	s->r = r;
	s->cap = cap;
	return 0;
}

int64_t idset_add(struct idset *s, uint64_t first, uint64_t last)
{
	/* Ranges that touch first..last (one id apart) merge with it. */
	size_t i = idset_find(s, first > 0 ? first - 1 : 0), j;
	uint64_t added = last - first + 1, lo = first, hi = last;

	for (j = i; j < s->n && s->r[j].first <= last + 1; j++) {
		uint64_t a = s->r[j].first > first ? s->r[j].first : first;
		uint64_t b = s->r[j].last < last ? s->r[j].last : last;

		if (a <= b)
			added -= b - a + 1;
		if (s->r[j].first < lo)
			lo = s->r[j].first;
		if (s->r[j].last > hi)
			hi = s->r[j].last;
	}
	if (i == j) {
		int r = idset_reserve(s, s->n + 1);

		if (r < 0)
			return r;
		memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(*s->r));
		s->n++;
	} else {
		memmove(&s->r[i + 1], &s->r[j], (s->n - j) * sizeof(*s->r));
		s->n -= j - i - 1;
	}
	s->r[i].first = lo;
	s->r[i].last = hi;
	return (int64_t)added;
}

int idset_remove(struct idset *s, uint64_t id)
{
	size_t i = idset_find(s, id);
	struct idrange *r;

	if (i == s->n || s->r[i].first > id)
		return 0;
	r = &s->r[i];
	if (r->first == r->last) {
		memmove(r, r + 1, (s->n - i - 1) * sizeof(*r));
		s->n--;
	} else if (id == r->first) {
		r->first++;
	} else if (id == r->last) {
		r->last--;
	} else {
		int e = idset_reserve(s, s->n + 1);

		if (e < 0)
			return e;
		r = &s->r[i];
		memmove(r + 1, r, (s->n - i) * sizeof(*r));
		s->n++;
		r[0].last = id - 1;
		r[1].first = id + 1;
	}
	return 1;
}

void idset_remove_upto(struct idset *s, uint64_t id)
{
	size_t i;

	if (s->n == 0 || id == UINT64_MAX) {
		s->n = 0;
		return;
	}
	i = idset_find(s, id + 1);
	memmove(s->r, s->r + i, (s->n - i) * sizeof(*s->r));
	s->n -= i;
	if (s->n > 0 && s->r[0].first <= id)
		s->r[0].first = id + 1;
}

int idset_contains(const struct idset *s, uint64_t id)
{
	size_t i = idset_find(s, id);

	return i < s->n && s->r[i].first <= id;
}

int idset_gap(const struct idset *s, uint64_t from, uint64_t upto, uint64_t *first, uint64_t *last)
{
	size_t i = idset_find(s, from);

	if (i < s->n && s->r[i].first <= from) {
		if (s->r[i].last >= upto)
			return 0;
		from = s->r[i].last + 1;
		i++;
	}
	if (from > upto)
		return 0;
	*first = from;
	*last = i < s->n && s->r[i].first <= upto ? s->r[i].first - 1 : upto;
	return 1;
}

uint64_t idset_prefix(const struct idset *s)
{
	return s->n > 0 && s->r[0].first == 1 ? s->r[0].last : 0;
}

void idset_free(struct idset *s)
{
	free(s->r);
	s->r = NULL;
	s->n = s->cap = 0;
}
