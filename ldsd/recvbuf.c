/* recvbuf.c - reordering, reassembly and flow control of a link's receiving half; see recvbuf.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recvbuf.h"

int recvbuf_init(struct recvbuf *rb, size_t block_size, size_t mem)
{
	memset(rb, 0, sizeof(*rb));
	rb->block_size = block_size;
	rb->mem = mem;
	rb->max_msg = mem / 2 < WIRE_MAX_MSG ? mem / 2 : WIRE_MAX_MSG;
	rb->nslots = mem / block_size;
	rb->slots = calloc(rb->nslots, sizeof(*rb->slots));
	return rb->slots ? 0 : -ENOMEM;
}

void rb_msg_free(struct rb_msg *m)
{
	if (m == NULL)
		return;
	for (uint32_t i = 0; i < m->nparts; i++)
		free(m->parts[i].buf);
	free(m->parts);
	if (m->store)
		m->store->release(m->store, m);
	else
		free(m->data);
	free(m);
}

int rb_msg_iov(const struct rb_msg *m, size_t off, struct iovec *iov, int max)
{
	uint32_t i = 0;
	int n = 0;

	while (i < m->nparts && (size_t)m->parts[i].off + m->parts[i].len <= off)
		i++;
	while (off < m->rec.len && n < max) {
		size_t end;

		if (i < m->nparts && m->parts[i].off <= off) {
			const struct rb_part *p = &m->parts[i++];

			end = (size_t)p->off + p->len;
			iov[n++] = (struct iovec){ p->buf + (off - p->off), end - off };
		} else {
			end = i < m->nparts ? m->parts[i].off : m->rec.len;
			iov[n++] = (struct iovec){ m->data + off, end - off };
		}
		off = end;
	}
	return n;
}

void rb_msg_flatten(struct rb_msg *m)
{
	for (uint32_t i = 0; i < m->nparts; i++) {
		memcpy(m->data + m->parts[i].off, m->parts[i].buf, m->parts[i].len);
		free(m->parts[i].buf);
	}
	free(m->parts);
	m->parts = NULL;
	m->nparts = 0;
}

static void rb_drop_held(struct recvbuf *rb)
{
	for (size_t i = 0; i < rb->nslots; i++) {
		free(rb->slots[i].data);
		rb->slots[i].data = NULL;
		rb->slots[i].len = 0;
	}
	rb->ooo_bytes = 0;
	if (rb->cur) {
		rb->msg_bytes -= rb->cur_have + rb->cur->extra;
		rb_msg_free(rb->cur);
		rb->cur = NULL;
	}
	rb->cur_have = 0;
	rb->hdr_have = 0;
}

void recvbuf_free(struct recvbuf *rb)
{
	if (rb->slots)
		rb_drop_held(rb);
	free(rb->slots);
	idset_free(&rb->delivered);
	free(rb->spare);
	rb->slots = NULL;
	rb->spare = NULL;
}

/* Hands the message being filled over once it is whole. */
static void rb_maybe_complete(struct recvbuf *rb, void (*deliver)(void *, struct rb_msg *), void *arg)
{
	struct rb_msg *m = rb->cur;

	if (m == NULL || rb->cur_have < m->rec.len)
		return;
	rb->cur = NULL;
	rb->cur_have = 0;
	rb->msgs_recv++;
	deliver(arg, m);
}

/* Feeds in-order stream bytes to the record parser. */
static int rb_parse(struct recvbuf *rb, const uint8_t *p, size_t n, void (*deliver)(void *, struct rb_msg *),
		    void *arg)
{
	while (n > 0) {
		if (rb->cur == NULL) {
			struct wire_record rec;
			size_t take = sizeof(rb->hdr) - rb->hdr_have;
			int hl;

			if (take > n)
				take = n;
			memcpy(rb->hdr + rb->hdr_have, p, take);
			hl = wire_decode_record_hdr(rb->hdr, rb->hdr_have + take, &rec);
			if (hl < 0)
				return -EPROTO;
			if (hl == 0) {
				/* A record header is at most sizeof(hdr) bytes. */
				if (rb->hdr_have + take == sizeof(rb->hdr))
					return -EPROTO;
				rb->hdr_have += take;
				return 0;
			}
			/* Consume only the header's own bytes from p. */
			take = (size_t)hl - rb->hdr_have;
			p += take;
			n -= take;
			rb->hdr_have = 0;
			/* The peer was told this limit; a larger record is a lie,
			 * and its length must not size an allocation. */
			if (rec.len > rb->max_msg)
				return -EMSGSIZE;
			rb->cur = calloc(1, sizeof(*rb->cur));
			if (rb->cur == NULL)
				return -ENOMEM;
			rb->cur->rec = rec;
			rb->cur->msgno = rb->next_msgno++;
			rb->cur->epoch = rb->epoch;
			rb->cur->data = rb->place ? rb->place(rb->place_arg, rb->cur) : NULL;
			/* malloc(0) may return NULL; give empty messages one byte. */
			if (rb->cur->data == NULL)
				rb->cur->data = malloc(rec.len ? rec.len : 1);
			if (rb->cur->data == NULL)
				return -ENOMEM;
			rb->cur_have = 0;
		}
		if (rb->cur_have < rb->cur->rec.len) {
			size_t take = rb->cur->rec.len - rb->cur_have;

			if (take > n)
				take = n;
			memcpy(rb->cur->data + rb->cur_have, p, take);
			rb->cur_have += take;
			rb->msg_bytes += take;
			p += take;
			n -= take;
		}
		rb_maybe_complete(rb, deliver, arg);
	}
	return 0;
}

/* A held block that now comes next lies wholly inside the payload of the
 * message being filled: the message keeps its buffer as a part instead of
 * a copy of it (with 4 streams most blocks arrive ahead of the one
 * expected, and this copy was a tenth of the receiving gateway's CPU).
 * Returns 1 if it did, 0 if the block must be parsed as usual. */
static int rb_adopt(struct recvbuf *rb, struct rb_slot *sl, void (*deliver)(void *, struct rb_msg *), void *arg)
{
	struct rb_msg *m = rb->cur;
	/* Blocks of at least half the block size only: short ones cost
	 * little to copy, and at most this many such blocks fit in it. */
	size_t half = rb->block_size > 1 ? rb->block_size / 2 : 1, cap = m ? m->rec.len / half + 1 : 0;

	if (m == NULL || m->store || sl->len < half || m->rec.len - rb->cur_have < sl->len || m->nparts == cap)
		return 0;
	if (m->parts == NULL) {
		m->parts = malloc(cap * sizeof(*m->parts));
		if (m->parts == NULL)
			return 0;
	}
	m->parts[m->nparts++] = (struct rb_part){ sl->data, (uint32_t)rb->cur_have, sl->len };
	m->extra += sl->len;
	rb->cur_have += sl->len;
	rb->msg_bytes += 2 * (size_t)sl->len;
	rb_maybe_complete(rb, deliver, arg);
	return 1;
}

/* Parses the held blocks that are now in order.  Returns 1, or -EPROTO. */
static int rb_parse_held(struct recvbuf *rb, void (*deliver)(void *, struct rb_msg *), void *arg)
{
	for (;;) {
		struct rb_slot *next = &rb->slots[rb->recv_cum % rb->nslots];
		int r = 0;

		if (next->data == NULL || rb->recv_cum >= rb->window_end)
			break;
		if (!rb_adopt(rb, next, deliver, arg)) {
			r = rb_parse(rb, next->data, next->len, deliver, arg);
			free(next->data);
		}
		rb->ooo_bytes -= next->len;
		next->data = NULL;
		next->len = 0;
		if (r < 0)
			return r;
		rb->recv_cum++;
	}
	return 1;
}

/* A block of len bytes now held in seq's slot. */
static void rb_held(struct recvbuf *rb, uint64_t seq, uint32_t len)
{
	rb->ooo_bytes += len;
	rb->blocks_held++;
	if (seq >= rb->held_end)
		rb->held_end = seq + 1;
}

int recvbuf_block(struct recvbuf *rb, uint64_t seq, const uint8_t *data, uint32_t len,
		  void (*deliver)(void *arg, struct rb_msg *m), void *arg)
{
	struct rb_slot *sl;

	if (seq < rb->recv_cum) {
		rb->blocks_dup++;
		return 0;
	}
	if (seq >= rb->window_end || len == 0 || len > rb->block_size)
		return -EPROTO;
	sl = &rb->slots[seq % rb->nslots];
	if (sl->data) {
		rb->blocks_dup++;
		return 0;
	}
	rb->blocks_recv++;
	rb->bytes_recv += len;
	if (seq == rb->recv_cum) {
		/* The common case: parse straight from the caller's buffer. */
		int r = rb_parse(rb, data, len, deliver, arg);

		if (r < 0)
			return r;
		rb->recv_cum++;
		return rb_parse_held(rb, deliver, arg);
	}
	sl->data = malloc(len);
	if (sl->data == NULL)
		return -ENOMEM;
	memcpy(sl->data, data, len);
	sl->len = len;
	rb_held(rb, seq, len);
	return 1;
}

uint8_t *recvbuf_place(struct recvbuf *rb, uint64_t seq, uint32_t len)
{
	if (seq < rb->recv_cum || seq >= rb->window_end || len == 0 || len > rb->block_size)
		return NULL;
	if (seq == rb->recv_cum)
		return rb->cur && rb->cur->rec.len - rb->cur_have >= len ? rb->cur->data + rb->cur_have : NULL;
	if (rb->slots[seq % rb->nslots].data)
		return NULL;
	if (rb->spare == NULL)
		rb->spare = malloc(rb->block_size);
	return rb->spare;
}

int recvbuf_placed(struct recvbuf *rb, uint64_t seq, uint32_t len, void (*deliver)(void *arg, struct rb_msg *m),
		   void *arg)
{
	rb->blocks_recv++;
	rb->bytes_recv += len;
	if (seq != rb->recv_cum) {
		struct rb_slot *sl = &rb->slots[seq % rb->nslots];

		sl->data = rb->spare;
		sl->len = len;
		rb->spare = NULL;
		rb_held(rb, seq, len);
		return 1;
	}
	rb->cur_have += len;
	rb->msg_bytes += len;
	rb->recv_cum++;
	rb_maybe_complete(rb, deliver, arg);
	return rb_parse_held(rb, deliver, arg);
}

int recvbuf_delivered(struct recvbuf *rb, struct rb_msg *m)
{
	int r = 0;

	rb->msg_bytes -= m->rec.len + m->extra;
	if (m->epoch == rb->epoch && idset_add(&rb->delivered, m->msgno + 1, m->msgno + 1) < 0)
		r = -ENOMEM;
	rb_msg_free(m);
	return r;
}

int recvbuf_discard(struct recvbuf *rb, struct rb_msg *m)
{
	int current = m->epoch == rb->epoch;

	rb->msg_bytes -= m->rec.len + m->extra;
	rb_msg_free(m);
	return current;
}

int recvbuf_settle(struct recvbuf *rb, uint64_t first, uint64_t last)
{
	return idset_add(&rb->delivered, first + 1, last + 1) < 0 ? -ENOMEM : 0;
}

static void rb_extend_window(struct recvbuf *rb)
{
	size_t committed = (size_t)(rb->window_end - rb->recv_cum) * rb->block_size;
	size_t used = committed + rb->msg_bytes;
	uint64_t limit = rb->recv_cum + rb->nslots;

	if (used >= rb->mem || rb->frozen)
		return;
	rb->window_end += (rb->mem - used) / rb->block_size;
	/* The slot ring must never wrap inside the window. */
	if (rb->window_end > limit)
		rb->window_end = limit;
}

void recvbuf_ack(struct recvbuf *rb, struct wire_ack *a)
{
	uint64_t s, end;

	rb_extend_window(rb);
	memset(a, 0, sizeof(*a));
	a->recv_cum = rb->recv_cum;
	a->window_end = rb->window_end;
	a->deliv_cum = idset_prefix(&rb->delivered);
	/* Nothing is held past held_end: an ACK scans the blocks ahead, not
	 * the whole window (thousands of slots, most of them empty). */
	end = rb->held_end < rb->window_end ? rb->held_end : rb->window_end;
	for (s = rb->recv_cum + 1; s < end && a->nsack < WIRE_MAX_RANGES; s++) {
		if (rb->slots[s % rb->nslots].data == NULL)
			continue;
		if (a->nsack > 0 && a->sack[a->nsack - 1].end == s) {
			a->sack[a->nsack - 1].end++;
		} else {
			a->sack[a->nsack].start = s;
			a->sack[a->nsack].end = s + 1;
			a->nsack++;
		}
	}
	for (size_t i = a->deliv_cum > 0; i < rb->delivered.n && a->ndeliv < WIRE_MAX_RANGES; i++)
		a->deliv[a->ndeliv++] = (struct wire_range){ .start = rb->delivered.r[i].first - 1,
							     .end = rb->delivered.r[i].last };
}

void recvbuf_reset(struct recvbuf *rb)
{
	rb_drop_held(rb);
	rb->recv_cum = rb->window_end = rb->held_end = 0;
	rb->next_msgno = 0;
	idset_free(&rb->delivered);
	rb->epoch++;
}
