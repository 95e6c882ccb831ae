/* lostrep.c - reports of undelivered messages between gateways; see lostrep.h. */
#include <errno.h>
#include <stdlib.h>

#include "lostrep.h"

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

void lostrep_free(struct lostrep *lr)
{
	for (unsigned r = 0; r < LOSTREP_REASONS; r++)
		idset_free(&lr->pending[r]);
	while (lr->sent) {
		struct lostrep_sent *s = lr->sent;

		lr->sent = s->next;
		idset_free(&s->nos);
		free(s);
	}
}

void lostrep_reset(struct lostrep *lr)
{
	lostrep_free(lr);
}

int lostrep_add(struct lostrep *lr, uint64_t msgno, enum ep_drop reason)
{
	if ((unsigned)reason >= LOSTREP_REASONS || reason == EP_DROP_NONE)
		return -EINVAL;
	if (idset_add(&lr->pending[reason], msgno + 1, msgno + 1) < 0)
		return -ENOMEM;
	lr->dropped++;
	return 0;
}

int lostrep_pending(const struct lostrep *lr)
{
	for (unsigned r = 1; r < LOSTREP_REASONS; r++)
		if (lr->pending[r].n > 0)
			return 1;
	return 0;
}

size_t lostrep_encode(const struct lostrep *lr, uint8_t *buf, uint64_t *id)
{
	for (unsigned r = 1; r < LOSTREP_REASONS; r++) {
		const struct idset *s = &lr->pending[r];
		size_t n = s->n < LOSTREP_MAX_RANGES ? s->n : LOSTREP_MAX_RANGES;

		if (n == 0)
			continue;
		buf[0] = LOSTREP_VERSION;
		buf[1] = (uint8_t)r;
		buf[2] = (uint8_t)(n >> 8);
		buf[3] = (uint8_t)n;
		for (size_t i = 0; i < n; i++) {
			put64(buf + 4 + 16 * i, s->r[i].first - 1);
			put64(buf + 12 + 16 * i, s->r[i].last - 1);
		}
		*id = lr->next_id + 1;
		return 4 + 16 * n;
	}
	return 0;
}

void lostrep_sent(struct lostrep *lr, uint64_t id)
{
	struct lostrep_sent *s = calloc(1, sizeof(*s));

	for (unsigned r = 1; r < LOSTREP_REASONS; r++) {
		struct idset *p = &lr->pending[r];
		size_t n = p->n < LOSTREP_MAX_RANGES ? p->n : LOSTREP_MAX_RANGES;

		if (n == 0)
			continue;
		lr->next_id = id;
		if (s == NULL)
			return; /* they stay pending and go out again: the peer ignores repeats */
		/* Moving whole ranges: the pending set keeps what did not fit. */
		for (size_t i = 0; i < n; i++)
			idset_add(&s->nos, p->r[i].first, p->r[i].last);
		idset_remove_upto(p, p->r[n - 1].last);
		s->id = id;
		s->next = lr->sent;
		lr->sent = s;
		return;
	}
	free(s);
}

void lostrep_confirmed(struct lostrep *lr, uint64_t id, void (*settle)(void *arg, uint64_t first, uint64_t last),
		       void *arg)
{
	for (struct lostrep_sent **pp = &lr->sent; *pp; pp = &(*pp)->next) {
		struct lostrep_sent *s = *pp;

		if (s->id != id)
			continue;
		*pp = s->next;
		for (size_t i = 0; i < s->nos.n; i++)
			settle(arg, s->nos.r[i].first - 1, s->nos.r[i].last - 1);
		idset_free(&s->nos);
		free(s);
		return;
	}
}

int lostrep_decode(const uint8_t *p, size_t len, void (*lost)(void *arg, uint64_t first, uint64_t last, unsigned reason),
		   void *arg)
{
	size_t n;
	uint64_t prev = 0;

	if (len < 4 || p[0] != LOSTREP_VERSION || p[1] == EP_DROP_NONE || p[1] >= LOSTREP_REASONS)
		return -EBADMSG;
	n = (size_t)p[2] << 8 | p[3];
	if (n == 0 || n > LOSTREP_MAX_RANGES || len != 4 + 16 * n)
		return -EBADMSG;
	for (size_t i = 0; i < n; i++) {
		uint64_t first = get64(p + 4 + 16 * i), last = get64(p + 12 + 16 * i);

		if (last < first || (i > 0 && first <= prev))
			return -EBADMSG;
		prev = last;
	}
	for (size_t i = 0; i < n; i++)
		lost(arg, get64(p + 4 + 16 * i), get64(p + 12 + 16 * i), p[1]);
	return 0;
}
