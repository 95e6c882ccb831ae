/* mw_cache.c - data cache between clusters: recipes, the main side's
 * mirror (hash of keys, least recently used first out), the sub-master's
 * slots. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/mw_cache.h"
#include "launcher/mw_proto.h"

struct mw_cache_entry {
	uint64_t key;
	size_t len;
	uint32_t prev, next;       /* LRU list (or free list: next), index + 1 */
};

static int seg(struct mw_buf *out, enum mw_seg_kind kind, uint32_t slot, const void *data, size_t len)
{
	unsigned char *p;
	bool bytes = kind == MW_SEG_INLINE || kind == MW_SEG_STORE;

	if (len > UINT32_MAX || (p = mw_buf_reserve(out, MW_SEG_LEN + (bytes ? len : 0))) == NULL)
		return -ENOMEM;
	p[0] = (unsigned char)kind;
	mw_put_le(p + 1, slot, 4);
	mw_put_le(p + 5, len, 4);
	if (bytes && len > 0)
		memcpy(p + MW_SEG_LEN, data, len);
	out->len += MW_SEG_LEN + (bytes ? len : 0);
	return 0;
}

/* ---- the main side's mirror -------------------------------------------- */

void mw_cache_tx_init(struct mw_cache_tx *c, size_t budget)
{
	memset(c, 0, sizeof(*c));
	c->budget = budget;
}

void mw_cache_tx_free(struct mw_cache_tx *c)
{
	free(c->e);
	free(c->table);
	mw_cache_tx_init(c, 0);
}

static uint32_t hash(uint64_t k, uint32_t tcap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return (uint32_t)k & (tcap - 1);
}

/* The table slot of key, or of the free place where it would go. */
static uint32_t probe(const struct mw_cache_tx *c, uint64_t key)
{
	uint32_t i = hash(key, c->tcap);

	while (c->table[i] != 0 && c->e[c->table[i] - 1].key != key)
		i = (i + 1) & (c->tcap - 1);
	return i;
}

static int rehash(struct mw_cache_tx *c, uint32_t tcap)
{
	uint32_t *old = c->table, ocap = c->tcap;

	c->table = calloc(tcap, sizeof(*c->table));
	if (c->table == NULL) {
		c->table = old;
		return -ENOMEM;
	}
	c->tcap = tcap;
	for (uint32_t i = 0; i < ocap; i++)
		if (old[i] != 0)
			c->table[probe(c, c->e[old[i] - 1].key)] = old[i];
	free(old);
	return 0;
}

/* Linear probing without tombstones: the entries after a hole that
 * probed past it move back into it. */
static void table_remove(struct mw_cache_tx *c, uint64_t key)
{
	uint32_t i = probe(c, key), j = i, home;

	c->table[i] = 0;
	for (;;) {
		j = (j + 1) & (c->tcap - 1);
		if (c->table[j] == 0)
			return;
		home = hash(c->e[c->table[j] - 1].key, c->tcap);
		/* j stays unless its home lies cyclically outside (i, j]. */
		if ((i < j) ? (home <= i || home > j) : (home <= i && home > j)) {
			c->table[i] = c->table[j];
			c->table[j] = 0;
			i = j;
		}
	}
}

static void unlink_lru(struct mw_cache_tx *c, uint32_t x)
{
	struct mw_cache_entry *e = &c->e[x - 1];

	if (e->prev)
		c->e[e->prev - 1].next = e->next;
	else
		c->lru = e->next;
	if (e->next)
		c->e[e->next - 1].prev = e->prev;
	else
		c->mru = e->prev;
	e->prev = e->next = 0;
}

static void push_mru(struct mw_cache_tx *c, uint32_t x)
{
	struct mw_cache_entry *e = &c->e[x - 1];

	e->prev = c->mru;
	e->next = 0;
	if (c->mru)
		c->e[c->mru - 1].next = x;
	else
		c->lru = x;
	c->mru = x;
}

/* Forgets entry x here, and tells the remote to forget its slot. */
static int drop(struct mw_cache_tx *c, uint32_t x, struct mw_buf *out)
{
	struct mw_cache_entry *e = &c->e[x - 1];

	unlink_lru(c, x);
	table_remove(c, e->key);
	c->used -= e->len;
	e->next = c->free_head;
	c->free_head = x;
	return seg(out, MW_SEG_DROP, x - 1, NULL, 0);
}

/* A new entry for key (len bytes), room made by evicting the least
 * recently used.  Its index + 1, 0 when it cannot be cached (too large,
 * too many slots), or -ENOMEM. */
static long admit(struct mw_cache_tx *c, uint64_t key, size_t len, struct mw_buf *out)
{
	uint32_t x;

	if (len == 0 || len > c->budget)
		return 0;
	if (c->free_head == 0 && c->ne == MW_CACHE_MAX_SLOTS)
		return 0;
	if ((c->ne + 1) * 2 > c->tcap && rehash(c, c->tcap ? c->tcap * 2 : 64) < 0)
		return -ENOMEM;
	if (c->free_head == 0 && c->ne == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 64;
		struct mw_cache_entry *e = realloc(c->e, cap * sizeof(*e));

		if (e == NULL)
			return -ENOMEM;
		c->e = e;
		c->cap = cap;
	}
	while (c->used + len > c->budget)
		if (drop(c, c->lru, out) < 0)
			return -ENOMEM;
	if (c->free_head != 0) {
		x = c->free_head;
		c->free_head = c->e[x - 1].next;
	} else {
		x = ++c->ne;
	}
	c->e[x - 1] = (struct mw_cache_entry){ .key = key, .len = len };
	c->table[probe(c, key)] = x;
	push_mru(c, x);
	c->used += len;
	return x;
}

static int one_block(struct mw_cache_tx *c, const unsigned char *data, const struct mw_block *b, struct mw_buf *out)
{
	uint32_t x = c->tcap ? c->table[probe(c, b->key)] : 0;
	long fresh;

	if (x != 0 && c->e[x - 1].len == b->len) {
		unlink_lru(c, x);
		push_mru(c, x);
		c->hits++;
		/* Naming the block costs a segment header; a block shorter
		 * than that saves nothing (and must not wrap the count). */
		c->saved += b->len > MW_SEG_LEN ? b->len - MW_SEG_LEN : 0;
		return seg(out, MW_SEG_USE, x - 1, NULL, b->len);
	}
	/* The same key for other bytes: the application reused a name. */
	if (x != 0 && drop(c, x, out) < 0)
		return -ENOMEM;
	fresh = admit(c, b->key, b->len, out);
	if (fresh < 0)
		return -ENOMEM;
	if (fresh == 0)
		return seg(out, MW_SEG_INLINE, 0, data + b->off, b->len);
	return seg(out, MW_SEG_STORE, (uint32_t)fresh - 1, data + b->off, b->len);
}

int mw_cache_encode(struct mw_cache_tx *c, const void *task, size_t len, const struct mw_block *b, size_t nb,
		    struct mw_buf *out)
{
	const unsigned char *data = task;
	size_t pos = 0;

	for (size_t i = 0; i < nb; i++)
		if (b[i].off < (i ? b[i - 1].off + b[i - 1].len : 0) || b[i].off > len || b[i].len > len - b[i].off)
			return -EINVAL;
	for (size_t i = 0; i < nb; i++) {
		if (b[i].off > pos && seg(out, MW_SEG_INLINE, 0, data + pos, b[i].off - pos) < 0)
			return -ENOMEM;
		if (one_block(c, data, &b[i], out) < 0)
			return -ENOMEM;
		pos = b[i].off + b[i].len;
	}
	if (pos < len && seg(out, MW_SEG_INLINE, 0, data + pos, len - pos) < 0)
		return -ENOMEM;
	return 0;
}

/* ---- the sub-master's slots --------------------------------------------- */

void mw_cache_rx_init(struct mw_cache_rx *c, size_t budget)
{
	memset(c, 0, sizeof(*c));
	c->budget = budget;
}

void mw_cache_rx_free(struct mw_cache_rx *c)
{
	for (uint32_t i = 0; i < c->nslots; i++)
		free(c->slot[i].data);
	free(c->slot);
	mw_cache_rx_init(c, 0);
}

static int bad(char *err, size_t errlen, const char *what, uint32_t slot)
{
	snprintf(err, errlen, "malformed data cache recipe: %s (slot %u)", what, slot);
	return -EBADMSG;
}

static int store(struct mw_cache_rx *c, uint32_t slot, const unsigned char *p, size_t len, char *err, size_t errlen)
{
	if (slot >= MW_CACHE_MAX_SLOTS)
		return bad(err, errlen, "slot out of range", slot);
	if (slot > c->opened || (slot == c->opened && c->live < c->opened))
		return bad(err, errlen, c->live < c->opened ? "a new slot while a lower one is free" :
				     "a slot beyond the next new one", slot);
	if (slot >= c->nslots) {
		uint32_t n = slot + 1 > c->nslots * 2 ? slot + 1 : c->nslots * 2;
		struct mw_buf *s = realloc(c->slot, n * sizeof(*s));

		if (s == NULL)
			return -ENOMEM;
		memset(s + c->nslots, 0, (n - c->nslots) * sizeof(*s));
		c->slot = s;
		c->nslots = n;
	}
	if (c->slot[slot].len != 0)
		return bad(err, errlen, "stored into a slot in use", slot);
	if (len == 0 || len > c->budget - c->used) {
		snprintf(err, errlen, "the main cluster stored more than the cache's %zu bytes (slot %u)", c->budget,
			 slot);
		return -EBADMSG;
	}
	if (mw_buf_put(&c->slot[slot], p, len) < 0)
		return -ENOMEM;
	c->used += len;
	c->live++;
	c->opened += slot == c->opened;
	return 0;
}

int mw_cache_decode(struct mw_cache_rx *c, const unsigned char *recipe, size_t len, struct mw_buf *out,
		    char *err, size_t errlen)
{
	size_t off = 0;
	int rc;

	while (off < len) {
		enum mw_seg_kind kind;
		uint32_t slot, n;
		const unsigned char *p;

		if (len - off < MW_SEG_LEN)
			return bad(err, errlen, "truncated segment header", 0);
		kind = recipe[off];
		slot = (uint32_t)mw_get_le(recipe + off + 1, 4);
		n = (uint32_t)mw_get_le(recipe + off + 5, 4);
		p = recipe + off + MW_SEG_LEN;
		off += MW_SEG_LEN;
		switch (kind) {
		case MW_SEG_INLINE:
		case MW_SEG_STORE:
			if (len - off < n)
				return bad(err, errlen, "bytes past the end", slot);
			if (kind == MW_SEG_STORE && (rc = store(c, slot, p, n, err, errlen)) < 0)
				return rc;
			if (mw_buf_put(out, p, n) < 0)
				return -ENOMEM;
			off += n;
			break;
		case MW_SEG_USE:
			if (slot >= c->nslots || c->slot[slot].len == 0 || c->slot[slot].len != n)
				return bad(err, errlen, "used a slot that does not hold that block", slot);
			if (mw_buf_put(out, c->slot[slot].data, n) < 0)
				return -ENOMEM;
			break;
		case MW_SEG_DROP:
			if (slot >= c->nslots || c->slot[slot].len == 0)
				return bad(err, errlen, "dropped an empty slot", slot);
			c->used -= c->slot[slot].len;
			c->live--;
			free(c->slot[slot].data);
			c->slot[slot] = (struct mw_buf){ 0 };
			break;
		default:
			return bad(err, errlen, "unknown segment kind", slot);
		}
	}
	return 0;
}
