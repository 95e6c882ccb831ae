/*
 * credit.h - per-destination credit of a link.
 *
 * Bytes sent over a link to one destination endpoint and not yet reported
 * delivered.  Capping them keeps one slow or absent receiver from filling
 * the peer's receive memory and stalling everyone else (head-of-line).
 * A message counts one more than its size against its destination, so
 * that an entry with empty messages outstanding is never freed.
 */
#ifndef LDS_CREDIT_H
#define LDS_CREDIT_H

#include <stddef.h>

#define CREDIT_BUCKETS 64

struct credit_dest;

struct credit {
	struct credit_dest *buckets[CREDIT_BUCKETS];
	size_t cap;                  /* undelivered bytes allowed per destination */
};

void credit_init(struct credit *c, size_t cap);
void credit_free(struct credit *c);
/* May a message of len bytes go to destination name now?  0 with *dp set
 * (then credit_commit or credit_abandon), -ENOSPC (its share is full) or
 * -ENOMEM.  A destination with nothing outstanding may always take one
 * message, however large: the cap must not make a message unsendable. */
int credit_reserve(struct credit *c, const char *name, size_t len, struct credit_dest **dp);
/* The message reserved for was queued: it counts from now on. */
void credit_commit(struct credit_dest *d, size_t len);
/* The message reserved for was not queued after all. */
void credit_abandon(struct credit *c, struct credit_dest *d);
/* A committed message of len bytes was delivered or lost. */
void credit_return(struct credit *c, struct credit_dest *d, size_t len);

#endif
