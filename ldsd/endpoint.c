/* endpoint.c - the endpoint table and held messages; see endpoint.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "endpoint.h"

#define EP_BUCKETS_MIN 64u

const char *const ep_drop_reasons[] = {
	[EP_DROP_NONE] = "",
	[EP_DROP_SHARE] = "not delivered: no process has the destination open and it holds its share of the "
			  "gateway's memory",
	[EP_DROP_POOL] = "not delivered: no process has the destination open and messages for such endpoints "
			 "fill their share of the gateway's memory",
	[EP_DROP_EXPIRED] = "not delivered: no process opened the destination within undelivered_ttl",
	[EP_DROP_GONE] = "not delivered: the receiving process exited",
	[EP_DROP_ENDED] = "not delivered: the destination's job ended",
};

/* FNV-1a over a random seed: a client cannot pick names that collide. */
static size_t ep_hash(const struct eptab *t, const char *name)
{
	uint64_t h = 14695981039346656037ull ^ t->seed;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return (size_t)(h ^ h >> 32) & (t->nbuckets - 1);
}

int eptab_init(struct eptab *t, uint64_t ttl_ns, uint64_t linger_ns)
{
	memset(t, 0, sizeof(*t));
	t->nbuckets = EP_BUCKETS_MIN;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (t->buckets == NULL)
		return -ENOMEM;
	if (getrandom(&t->seed, sizeof(t->seed), 0) != (ssize_t)sizeof(t->seed))
		t->seed = (uint64_t)(uintptr_t)t ^ 0x9e3779b97f4a7c15ull;
	t->ttl_ns = ttl_ns;
	t->linger_ns = linger_ns;
	return 0;
}

void eptab_free(struct eptab *t)
{
	for (size_t i = 0; i < t->nbuckets && t->buckets; i++) {
		while (t->buckets[i]) {
			struct endpoint *e = t->buckets[i];

			t->buckets[i] = e->hnext;
			while (e->head) {
				struct rb_msg *m = e->head;

				e->head = m->next;
				rb_msg_free(m);
			}
			free(e);
		}
	}
	free(t->buckets);
	t->buckets = NULL;
	t->count = 0;
}

static struct ep_pool *pool_of(struct eptab *t, const void *origin)
{
	for (size_t i = 0; i < t->npools; i++)
		if (t->pools[i].origin == origin)
			return &t->pools[i];
	return NULL;
}

const struct ep_pool *eptab_pool_of(const struct eptab *t, const void *origin)
{
	return pool_of((struct eptab *)t, origin);
}

int eptab_pool(struct eptab *t, const void *origin, size_t cap)
{
	struct ep_pool *p = pool_of(t, origin);

	if (p == NULL) {
		if (t->npools == EP_MAX_POOLS)
			return -ENOSPC;
		p = &t->pools[t->npools++];
		p->origin = origin;
	}
	p->cap = cap;
	return 0;
}

struct endpoint *eptab_find(const struct eptab *t, const char *name)
{
	for (struct endpoint *e = t->buckets[ep_hash(t, name)]; e; e = e->hnext)
		if (strcmp(e->name, name) == 0)
			return e;
	return NULL;
}

/* Doubles the table once chains grow past two on average; failing only
 * costs speed. */
static void ep_grow(struct eptab *t)
{
	size_t old = t->nbuckets;
	struct endpoint **ob = t->buckets, **nb;

	if (t->count < 2 * old || (nb = calloc(2 * old, sizeof(*nb))) == NULL)
		return;
	t->buckets = nb;
	t->nbuckets = 2 * old;
	for (size_t i = 0; i < old; i++) {
		while (ob[i]) {
			struct endpoint *e = ob[i];
			size_t h = ep_hash(t, e->name);

			ob[i] = e->hnext;
			e->hnext = nb[h];
			nb[h] = e;
		}
	}
	free(ob);
}

static void detached_add(struct eptab *t, struct endpoint *e)
{
	e->dprev = NULL;
	e->dnext = t->detached;
	if (t->detached)
		t->detached->dprev = e;
	t->detached = e;
}

static void detached_del(struct eptab *t, struct endpoint *e)
{
	if (e->dprev)
		e->dprev->dnext = e->dnext;
	else
		t->detached = e->dnext;
	if (e->dnext)
		e->dnext->dprev = e->dprev;
	e->dprev = e->dnext = NULL;
}

struct endpoint *eptab_get(struct eptab *t, const char *name, uint64_t now_ns)
{
	struct endpoint *e = eptab_find(t, name);
	size_t n = strlen(name), h;

	if (e)
		return e;
	if (n > WIRE_ENDPOINT_MAX || (e = calloc(1, sizeof(*e))) == NULL)
		return NULL;
	memcpy(e->name, name, n + 1);
	e->closed_ns = now_ns;
	h = ep_hash(t, name);
	e->hnext = t->buckets[h];
	t->buckets[h] = e;
	t->count++;
	detached_add(t, e);
	ep_grow(t);
	return e;
}

static void ep_forget(struct eptab *t, struct endpoint *e)
{
	struct endpoint **pp = &t->buckets[ep_hash(t, e->name)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	t->count--;
	detached_del(t, e);
	free(e);
}

/* A closed name keeps its owner a while: another user cannot take it the
 * moment its process restarts. */
static int ep_forgettable(const struct eptab *t, const struct endpoint *e, uint64_t now_ns)
{
	return e->client == NULL && e->head == NULL && (!e->owned || now_ns - e->closed_ns >= t->linger_ns);
}

void eptab_maybe_forget(struct eptab *t, struct endpoint *e, uint64_t now_ns)
{
	if (ep_forgettable(t, e, now_ns))
		ep_forget(t, e);
}

size_t ep_msg_cost(const struct rb_msg *m)
{
	return (size_t)m->rec.len + EP_MSG_COST;
}

enum ep_drop eptab_admit(const struct eptab *t, const struct endpoint *e, const struct rb_msg *m)
{
	const struct ep_pool *p = eptab_pool_of(t, m->origin);
	size_t cost = ep_msg_cost(m);

	if (e->client || p == NULL)
		return EP_DROP_NONE;
	if (jobmarks_has(&t->ended, e->name))
		return EP_DROP_ENDED;
	if (p->used + cost > p->cap)
		return EP_DROP_POOL;
	if (e->held_cost > 0 && e->held_cost + cost > p->cap / 2)
		return EP_DROP_SHARE;
	return EP_DROP_NONE;
}

/* m starts (sign 1) or stops (-1) counting against its pool. */
static void ep_hold(struct eptab *t, struct endpoint *e, const struct rb_msg *m, int sign)
{
	struct ep_pool *p = pool_of(t, m->origin);
	size_t cost = ep_msg_cost(m);

	if (sign > 0) {
		e->held_cost += cost;
		if (p)
			p->used += cost;
	} else {
		e->held_cost -= cost;
		if (p)
			p->used -= cost;
	}
}

void eptab_enqueue(struct eptab *t, struct endpoint *e, struct rb_msg *m, uint64_t now_ns)
{
	eptab_insert(t, e, e->tail, m, now_ns);
}

void eptab_insert(struct eptab *t, struct endpoint *e, struct rb_msg *after, struct rb_msg *m, uint64_t now_ns)
{
	struct rb_msg **at = after ? &after->next : &e->head;

	m->next = *at;
	*at = m;
	if (m->next == NULL)
		e->tail = m;
	m->t_ns = now_ns;
	e->queued++;
	e->queued_bytes += m->rec.len;
	if (e->client == NULL)
		ep_hold(t, e, m, 1);
}

struct rb_msg *eptab_dequeue(struct eptab *t, struct endpoint *e)
{
	struct rb_msg *m = e->head;

	if (m == NULL)
		return NULL;
	e->head = m->next;
	if (e->head == NULL)
		e->tail = NULL;
	e->queued--;
	e->queued_bytes -= m->rec.len;
	if (e->client == NULL)
		ep_hold(t, e, m, -1);
	m->next = NULL;
	return m;
}

void eptab_attach(struct eptab *t, struct endpoint *e, struct client *c, uint64_t now_ns)
{
	if ((e->client == NULL) == (c == NULL)) {
		e->client = c;
		return;
	}
	for (struct rb_msg *m = e->head; m; m = m->next)
		ep_hold(t, e, m, c ? -1 : 1);
	e->client = c;
	if (c) {
		detached_del(t, e);
	} else {
		e->closed_ns = now_ns;
		detached_add(t, e);
	}
}

size_t eptab_expire(struct eptab *t, uint64_t now_ns, ep_drop_fn *drop, void *arg)
{
	struct endpoint *e, *next;
	size_t n = 0;

	jobmarks_expire(&t->ended, now_ns);
	for (e = t->detached; e; e = next) {
		next = e->dnext;
		while (e->head && now_ns - e->head->t_ns >= t->ttl_ns) {
			struct rb_msg *m = eptab_dequeue(t, e);

			drop(arg, e, m, EP_DROP_EXPIRED);
			n++;
		}
		if (ep_forgettable(t, e, now_ns))
			ep_forget(t, e);
	}
	return n;
}

void eptab_foreach(const struct eptab *t, void (*fn)(void *arg, const struct endpoint *e), void *arg)
{
	for (size_t i = 0; i < t->nbuckets; i++)
		for (const struct endpoint *e = t->buckets[i]; e; e = e->hnext)
			fn(arg, e);
}
