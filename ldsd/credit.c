/* credit.c - per-destination credit of a link; see credit.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "credit.h"
#include "wire.h"

struct credit_dest {
	char name[WIRE_ENDPOINT_MAX + 1];
	size_t bytes;
	struct credit_dest *next;
};

#define CREDIT_COST(len) ((size_t)(len) + 1)

void credit_init(struct credit *c, size_t cap)
{
	memset(c, 0, sizeof(*c));
	c->cap = cap;
}

void credit_free(struct credit *c)
{
	for (unsigned i = 0; i < CREDIT_BUCKETS; i++) {
		while (c->buckets[i]) {
			struct credit_dest *d = c->buckets[i];

			c->buckets[i] = d->next;
			free(d);
		}
	}
}

static struct credit_dest **credit_slot(struct credit *c, const char *name)
{
	unsigned h = 5381;
	struct credit_dest **pp;

	for (const char *p = name; *p; p++)
		h = h * 33 + (unsigned char)*p;
	for (pp = &c->buckets[h % CREDIT_BUCKETS]; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0)
			break;
	return pp;
}

static void credit_sub(struct credit *c, struct credit_dest *d, size_t n)
{
	struct credit_dest **pp;

	d->bytes -= n;
	if (d->bytes > 0)
		return;
	pp = credit_slot(c, d->name);
	*pp = d->next;
	free(d);
}

int credit_reserve(struct credit *c, const char *name, size_t len, struct credit_dest **dp)
{
	struct credit_dest **pp = credit_slot(c, name);

	if (*pp == NULL && strlen(name) <= WIRE_ENDPOINT_MAX) {
		*pp = calloc(1, sizeof(**pp));
		if (*pp)
			memcpy((*pp)->name, name, strlen(name) + 1);
	}
	if (*pp == NULL)
		return -ENOMEM;
	if ((*pp)->bytes > 0 && (*pp)->bytes + CREDIT_COST(len) > c->cap)
		return -ENOSPC;
	*dp = *pp;
	return 0;
}

void credit_commit(struct credit_dest *d, size_t len)
{
	d->bytes += CREDIT_COST(len);
}

void credit_abandon(struct credit *c, struct credit_dest *d)
{
	if (d->bytes == 0)
		credit_sub(c, d, 0);
}

void credit_return(struct credit *c, struct credit_dest *d, size_t len)
{
	credit_sub(c, d, CREDIT_COST(len));
}
