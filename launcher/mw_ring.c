/* mw_ring.c - growing a ring buffer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/mw_ring.h"

int mw_ring_make_room(void **ring, size_t *cap, size_t *head, size_t n, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 64, first;
	unsigned char *r, *old = *ring;

	if (n < *cap)
		return 0;
	r = calloc(ncap, elem);
	if (r == NULL)
		return -ENOMEM;
	first = *cap - *head < n ? *cap - *head : n;
	if (n > 0) {
		memcpy(r, old + *head * elem, first * elem);
		memcpy(r + first * elem, old, (n - first) * elem);
	}
	free(old);
	*ring = r;
	*cap = ncap;
	*head = 0;
	return 0;
}
