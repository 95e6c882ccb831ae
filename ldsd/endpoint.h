/*
 * endpoint.h - the endpoints of this cluster and the messages waiting for
 * them.
 *
 * An endpoint ("cluster/name") exists while a process has it open, while
 * messages wait for it, and for a linger time after its last process
 * closed it; then it is forgotten.  Lookups go through a hash table with a
 * per-process random seed, so that names chosen by a client cannot make
 * every lookup walk one chain.
 *
 * Messages for an endpoint that no process has open ("held" messages) are
 * bounded per origin (a link, or NULL for messages from this cluster's own
 * clients): together they may cost at most the origin's pool (eptab_pool),
 * one endpoint at most half of it (unless it holds nothing: one message of
 * any size always fits), and each waits at most the table's ttl.  A
 * message costs its length plus EP_MSG_COST for its bookkeeping, so that a
 * flood of empty messages is bounded too.  Pure bookkeeping: no I/O; the
 * caller passes the clock.
 */
#ifndef LDS_ENDPOINT_H
#define LDS_ENDPOINT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jobmark.h"
#include "recvbuf.h"

#define EP_MSG_COST 512u       /* bytes a held message costs beyond its payload */
#define EP_MAX_POOLS 65u       /* origins: every link and the local one */

struct client;

struct endpoint {
	char name[WIRE_ENDPOINT_MAX + 1];
	struct client *client;        /* attached connection, or NULL */
	struct rb_msg *head, *tail;   /* waiting to be written, oldest first */
	size_t queued, queued_bytes;
	size_t held_cost;             /* what its queue costs, while nobody has it open */
	uid_t owner;                  /* uid of the processes that opened it */
	int owned;                    /* owner is set: some process opened it */
	int anonymous;                /* daemon-chosen name: dies with its client */
	int warned;                   /* "no such endpoint yet" logged */
	uint64_t closed_ns;           /* when it was last left without a process */
	struct endpoint *hnext;       /* hash chain */
	struct endpoint *dprev, *dnext; /* the table's list of endpoints without a process */
};

struct ep_pool {
	const void *origin;           /* a link, or NULL: this cluster's clients */
	size_t used, cap;
};

struct eptab {
	struct endpoint **buckets;
	size_t nbuckets, count;
	uint64_t seed;
	struct endpoint *detached;    /* no process: the expiry scan walks these */
	struct ep_pool pools[EP_MAX_POOLS];
	size_t npools;
	uint64_t ttl_ns, linger_ns;
	struct jobmarks ended;        /* jobs ended (jobend.h): their endpoints take nothing more to hold */
};

/* Why eptab_admit refused a message, or why one expired. */
enum ep_drop {
	EP_DROP_NONE = 0,
	EP_DROP_SHARE,        /* its endpoint holds its share of the origin's pool */
	EP_DROP_POOL,         /* the origin's pool is full */
	EP_DROP_EXPIRED,      /* waited longer than the ttl */
	EP_DROP_GONE,         /* an anonymous endpoint's process exited */
	EP_DROP_ENDED,        /* its job ended (jobend.h) */
};
extern const char *const ep_drop_reasons[];

/* ttl_ns: how long a held message waits; linger_ns: how long a closed,
 * empty endpoint keeps its owner.  Returns 0 or -ENOMEM. */
int eptab_init(struct eptab *t, uint64_t ttl_ns, uint64_t linger_ns);
/* Frees every endpoint and every message still queued (rb_msg_free). */
void eptab_free(struct eptab *t);

/* Sets the pool of origin (cap bytes).  Returns 0, or -ENOSPC if there
 * are EP_MAX_POOLS already. */
int eptab_pool(struct eptab *t, const void *origin, size_t cap);

struct endpoint *eptab_find(const struct eptab *t, const char *name);
/* The endpoint name, created (detached, unowned) if new.  NULL if out of
 * memory or name is longer than WIRE_ENDPOINT_MAX. */
struct endpoint *eptab_get(struct eptab *t, const char *name, uint64_t now_ns);
/* Forgets e (frees it) if it has no process, no messages, and either
 * nobody ever opened it or its linger has passed. */
void eptab_maybe_forget(struct eptab *t, struct endpoint *e, uint64_t now_ns);

/* What m would cost its origin's pool if it waited for e. */
size_t ep_msg_cost(const struct rb_msg *m);
/* Whether m (from m->origin) may wait for e, which no process has open:
 * EP_DROP_NONE or why not.  An endpoint with a process takes everything:
 * its senders are held back by their gateway's credit instead. */
enum ep_drop eptab_admit(const struct eptab *t, const struct endpoint *e, const struct rb_msg *m);
/* Appends m (m->t_ns set to now) to e's queue. */
void eptab_enqueue(struct eptab *t, struct endpoint *e, struct rb_msg *m, uint64_t now_ns);
/* As eptab_enqueue, but right after after (a message in e's queue), or
 * first if after is NULL. */
void eptab_insert(struct eptab *t, struct endpoint *e, struct rb_msg *after, struct rb_msg *m, uint64_t now_ns);
/* Removes and returns e's head (NULL if empty). */
struct rb_msg *eptab_dequeue(struct eptab *t, struct endpoint *e);

/* A process opened e (c) or left it (NULL): held messages stop or start
 * counting against their pools. */
void eptab_attach(struct eptab *t, struct endpoint *e, struct client *c, uint64_t now_ns);

/* Drops the held messages older than the ttl, calling drop(arg, e, m,
 * EP_DROP_EXPIRED) for each (which owns m from then on), and forgets
 * endpoints whose linger has passed.  Returns how many messages expired. */
typedef void ep_drop_fn(void *arg, struct endpoint *e, struct rb_msg *m, enum ep_drop why);
size_t eptab_expire(struct eptab *t, uint64_t now_ns, ep_drop_fn *drop, void *arg);

/* The pool of origin, or NULL. */
const struct ep_pool *eptab_pool_of(const struct eptab *t, const void *origin);

/* Calls fn for every endpoint (unspecified order); fn must not add or
 * remove endpoints. */
void eptab_foreach(const struct eptab *t, void (*fn)(void *arg, const struct endpoint *e), void *arg);

#endif
