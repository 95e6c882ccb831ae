/* dedup.c - highest message id taken per sender; see dedup.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../ldsd/wire.h"
#include "dedup.h"

#define DEDUP_BUCKETS 1024

struct dedup_src {
	char name[WIRE_ENDPOINT_MAX + 1];
	uint64_t incarnation;
	uint64_t high;                 /* highest id taken */
	struct dedup_src *chain;       /* same bucket */
	struct dedup_src *newer, *older;
};

void dedup_init(struct dedup *d, size_t max)
{
	memset(d, 0, sizeof(*d));
	d->max = max > 0 ? max : 1;
}

void dedup_free(struct dedup *d)
{
	while (d->recent) {
		struct dedup_src *e = d->recent;

		d->recent = e->older;
		free(e);
	}
	free(d->buckets);
	dedup_init(d, d->max);
}

static size_t dedup_bucket(const char *src, uint64_t incarnation)
{
	uint64_t h = 1469598103934665603ull ^ incarnation;

	for (const unsigned char *p = (const unsigned char *)src; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (size_t)(h % DEDUP_BUCKETS);
}

static int dedup_is(const struct dedup_src *e, const char *src, uint64_t incarnation)
{
	return e->incarnation == incarnation && strcmp(e->name, src) == 0;
}

static void lru_unlink(struct dedup *d, struct dedup_src *e)
{
	if (e->newer)
		e->newer->older = e->older;
	else
		d->recent = e->older;
	if (e->older)
		e->older->newer = e->newer;
	else
		d->oldest = e->newer;
}

static void lru_push(struct dedup *d, struct dedup_src *e)
{
	e->newer = NULL;
	e->older = d->recent;
	if (d->recent)
		d->recent->newer = e;
	else
		d->oldest = e;
	d->recent = e;
}

static void dedup_forget_oldest(struct dedup *d)
{
	struct dedup_src *e = d->oldest, **pp;

	lru_unlink(d, e);
	for (pp = &d->buckets[dedup_bucket(e->name, e->incarnation)]; *pp != e; pp = &(*pp)->chain)
		;
	*pp = e->chain;
	free(e);
	d->n--;
}

/* The entry for (src, incarnation), made the most recent; created with
 * nothing taken if new.  NULL: out of memory. */
static struct dedup_src *dedup_get(struct dedup *d, const char *src, uint64_t incarnation)
{
	struct dedup_src *e = d->recent, **head;
	size_t len;

	if (e && dedup_is(e, src, incarnation))
		return e;
	if (d->buckets == NULL && (d->buckets = calloc(DEDUP_BUCKETS, sizeof(*d->buckets))) == NULL)
		return NULL;
	head = &d->buckets[dedup_bucket(src, incarnation)];
	for (e = *head; e; e = e->chain) {
		if (dedup_is(e, src, incarnation)) {
			lru_unlink(d, e);
			lru_push(d, e);
			return e;
		}
	}
	len = strlen(src);
	if (len > WIRE_ENDPOINT_MAX)
		return NULL;
	if (d->n == d->max)
		dedup_forget_oldest(d);
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	memcpy(e->name, src, len + 1);
	e->incarnation = incarnation;
	e->chain = *head;
	*head = e;
	lru_push(d, e);
	d->n++;
	return e;
}

int dedup_admit(struct dedup *d, const char *src, uint64_t incarnation, uint64_t id)
{
	struct dedup_src *e = dedup_get(d, src, incarnation);

	if (e == NULL)
		return -ENOMEM;
	if (id <= e->high)
		return 0;
	e->high = id;
	return 1;
}
