/* sendbuf.c - blocks, acks and resends of a link's sending half; see sendbuf.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sendbuf.h"

/* Message table entries per byte of send memory: a floor of 1 entry per
 * 256 bytes keeps the table small while allowing millions of messages/s on
 * long paths.  */
#define SB_BYTES_PER_MSG 256

int sendbuf_init(struct sendbuf *sb, size_t block_size, size_t mem)
{
	memset(sb, 0, sizeof(*sb));
	sb->block_size = block_size;
	sb->nslots = mem / block_size;
	sb->mem = sb->nslots * block_size;
	sb->max_msgs = mem / SB_BYTES_PER_MSG;
	if (sb->max_msgs < 64)
		sb->max_msgs = 64;
	sb->slots = calloc(sb->nslots, sizeof(*sb->slots));
	sb->msgs = calloc(sb->max_msgs, sizeof(*sb->msgs));
	sb->fill_iov = calloc(sb->nslots + 2, sizeof(*sb->fill_iov));
	/* Pages are touched only as blocks fill them. */
	sb->blocks = malloc(sb->mem);
	if (sb->slots == NULL || sb->msgs == NULL || sb->fill_iov == NULL || sb->blocks == NULL) {
		sendbuf_free(sb);
		return -ENOMEM;
	}
	for (size_t i = 0; i < sb->nslots; i++) {
		sb->slots[i].stream = -1;
		sb->slots[i].data = sb->blocks + i * block_size;
	}
	return 0;
}

void sendbuf_free(struct sendbuf *sb)
{
	for (size_t i = 0; sb->slots && i < sb->nslots; i++)
		sendbuf_block_settle(&sb->slots[i]);
	free(sb->blocks);
	free(sb->slots);
	free(sb->msgs);
	free(sb->fill_iov);
	sb->slots = NULL;
	sb->blocks = NULL;
	sb->msgs = NULL;
	sb->fill_iov = NULL;
}

static struct sb_block *sb_slot(const struct sendbuf *sb, uint64_t seq)
{
	return &sb->slots[seq % sb->nslots];
}

size_t sendbuf_space(const struct sendbuf *sb)
{
	size_t used = (size_t)(sb->next - sb->base) * sb->block_size;
	size_t space = sb->mem - used;

	if (sb->open)
		space += sb->block_size - sb_slot(sb, sb->next - 1)->len;
	return space;
}

size_t sendbuf_unacked_bytes(const struct sendbuf *sb)
{
	size_t n = 0;

	for (uint64_t s = sb->base; s < sb->next; s++)
		n += sb_slot(sb, s)->len;
	return n;
}

int sendbuf_idle(const struct sendbuf *sb)
{
	return sb->base == sb->next && sb->msg_base == sb->msg_next;
}

static void sb_seal(struct sendbuf *sb, struct sb_block *b)
{
	if (!sb->no_hdr)
		wire_encode_data_hdr(b->hdr, b->seq, b->data, b->len);
	b->state = SB_READY;
	sb->open = 0;
}

/* Opens a new block; the caller has checked there is a free slot. */
static struct sb_block *sb_open_block(struct sendbuf *sb)
{
	struct sb_block *b = sb_slot(sb, sb->next);

	b->seq = sb->next++;
	b->state = SB_OPEN;
	b->stream = -1;
	b->busy = b->freed = 0;
	b->len = 0;
	b->sends = 0;
	sb->open = 1;
	return b;
}

/* True if appending n bytes would open a slot whose old block a stream is
 * still writing (acknowledged through another stream meanwhile). */
static int sb_reuse_busy(const struct sendbuf *sb, size_t n)
{
	size_t room = sb->open ? sb->block_size - sb_slot(sb, sb->next - 1)->len : 0;
	uint64_t s = sb->next;

	if (n <= room)
		return 0;
	for (n -= room; n > 0; n -= n < sb->block_size ? n : sb->block_size)
		if (sb_slot(sb, s++)->busy)
			return 1;
	return 0;
}

/* Where an append may be undone: the block numbering and the open block's
 * fill before it. */
struct sb_mark {
	uint64_t next;
	int open;
	uint32_t open_len;
};

/* Takes n bytes of block space after what is appended so far, opening
 * blocks as needed but sealing none (their bytes are not there yet), and
 * describes it in sb->fill_iov.  Returns the number of regions. */
static int sb_reserve(struct sendbuf *sb, size_t n)
{
	int k = 0;

	while (n > 0) {
		struct sb_block *b = sb->open ? sb_slot(sb, sb->next - 1) : sb_open_block(sb);
		size_t take = sb->block_size - b->len;

		if (take > n)
			take = n;
		sb->fill_iov[k].iov_base = b->data + b->len;
		sb->fill_iov[k++].iov_len = take;
		b->len += (uint32_t)take;
		n -= take;
		/* Full: the next bytes go to a new block; sealed once filled. */
		if (b->len == sb->block_size)
			sb->open = 0;
	}
	return k;
}

/* Seals the blocks from mark's open block on that are full now. */
static void sb_seal_filled(struct sendbuf *sb, const struct sb_mark *mark)
{
	for (uint64_t s = mark->open ? mark->next - 1 : mark->next; s < sb->next; s++) {
		struct sb_block *b = sb_slot(sb, s);

		if (b->len == sb->block_size)
			sb_seal(sb, b);
		else
			sb->open = 1; /* the last one, partly filled */
	}
}

/* Lets go of b's deferred regions from offset keep on. */
static void sb_settle_from(struct sb_block *b, uint32_t keep)
{
	while (b->ndefer > 0 && b->defer[b->ndefer - 1].off >= keep) {
		const struct sb_defer *d = &b->defer[--b->ndefer];

		d->own->settled(d->own, d->token);
	}
}

void sendbuf_block_settle(struct sb_block *b)
{
	sb_settle_from(b, 0);
}

void sendbuf_materialize(struct sendbuf *sb, struct sb_block *b)
{
	for (unsigned i = 0; i < b->ndefer; i++) {
		memcpy(b->data + b->defer[i].off, b->defer[i].src, b->defer[i].len);
		sb->bytes_deferred_copied += b->defer[i].len;
	}
	sendbuf_block_settle(b);
}

int sendbuf_block_src(const struct sb_block *b, struct iovec *iov)
{
	uint32_t at = 0;
	int n = 0;

	for (unsigned i = 0; i <= b->ndefer; i++) {
		uint32_t end = i < b->ndefer ? b->defer[i].off : b->len;

		if (end > at)
			iov[n++] = (struct iovec){ b->data + at, end - at };
		if (i < b->ndefer) {
			iov[n++] = (struct iovec){ (void *)b->defer[i].src, b->defer[i].len };
			at = end + b->defer[i].len;
		}
	}
	return n;
}

void sendbuf_defer_tick(struct sendbuf *sb)
{
	uint64_t went = 2 * (sb->blocks_sent - sb->defer_mark);

	sb->defer_ahead = went > sb->defer_min ? went : sb->defer_min;
	sb->defer_mark = sb->blocks_sent;
}

struct sb_block *sendbuf_defer(struct sendbuf *sb, uint8_t *dst, const uint8_t *src, size_t len, struct sb_src *own,
			       uint32_t token)
{
	struct sb_block *b = &sb->slots[(size_t)(dst - sb->blocks) / sb->block_size];
	uint64_t first = sb->send_cursor > sb->base ? sb->send_cursor : sb->base;

	if (!sb->no_hdr || sb->defer_min == 0 || b->ndefer == SB_DEFER_MAX || b->seq >= sb->window_end ||
	    b->seq > first + sb->defer_ahead)
		return NULL;
	b->defer[b->ndefer++] = (struct sb_defer){ (uint32_t)(dst - b->data), (uint32_t)len, src, own, token };
	sb->bytes_deferred += len;
	return b;
}

static void sb_undo(struct sendbuf *sb, const struct sb_mark *mark)
{
	if (mark->open)
		sb_settle_from(sb_slot(sb, mark->next - 1), mark->open_len);
	for (uint64_t s = mark->next; s < sb->next; s++) {
		sb_settle_from(sb_slot(sb, s), 0);
		sb_slot(sb, s)->state = SB_FREE;
	}
	if (mark->open) {
		sb_slot(sb, mark->next - 1)->len = mark->open_len;
		sb_slot(sb, mark->next - 1)->state = SB_OPEN;
	}
	sb->next = mark->next;
	sb->open = mark->open;
}

int sendbuf_fill_copy(void *arg, struct sendbuf *sb, const struct iovec *iov, int n)
{
	const uint8_t *p = arg;

	(void)sb;
	for (int i = 0; i < n; i++) {
		memcpy(iov[i].iov_base, p, iov[i].iov_len);
		p += iov[i].iov_len;
	}
	return 0;
}

int sendbuf_append(struct sendbuf *sb, const struct wire_record *rec, const void *payload, uint64_t client,
		   void *tag)
{
	return sendbuf_append_from(sb, rec, sendbuf_fill_copy, (void *)payload, client, tag);
}

/*
 * The payload of a record of SB_ALIGN_BLOCKS blocks or more starts a
 * block: the block its header ends in is sent short.  The receiver then
 * reads each block of that payload straight to the message's place; a
 * block that held one record's end and the next one's payload would go
 * through a buffer, the next record's header being needed to know where
 * its bytes go.  At most one block in SB_ALIGN_BLOCKS is left short.
 */
#define SB_ALIGN_BLOCKS 16

int sendbuf_append_from(struct sendbuf *sb, const struct wire_record *rec, sb_fill_fn *fill, void *arg,
			uint64_t client, void *tag)
{
	uint8_t hdr[WIRE_REC_FIXED + 2 * WIRE_ENDPOINT_MAX];
	size_t hl = wire_encode_record_hdr(hdr, sizeof(hdr), rec);
	struct sb_mark mark = { .next = sb->next, .open = sb->open }, filled = mark;
	int align = rec->len >= SB_ALIGN_BLOCKS * sb->block_size;
	size_t need, span;
	struct sb_msg *m;
	struct iovec *iov;
	int n, r;

	if (hl == 0)
		return -EINVAL;
	need = hl + rec->len;
	/* An aligned record may leave up to a block's room unfilled. */
	span = need + (align ? sb->block_size : 0);
	if (span > sb->mem - sb->block_size)
		return -EMSGSIZE;
	if (span > sendbuf_space(sb) || sb->msg_next - sb->msg_base >= sb->max_msgs || sb_reuse_busy(sb, span))
		return -ENOSPC;
	if (mark.open)
		mark.open_len = sb_slot(sb, sb->next - 1)->len;
	n = sb_reserve(sb, align ? hl : need);
	/* The header takes the first hl bytes of the regions. */
	iov = sb->fill_iov;
	for (size_t left = hl; left > 0;) {
		size_t take = iov->iov_len < left ? iov->iov_len : left;

		memcpy(iov->iov_base, hdr + (hl - left), take);
		iov->iov_base = (uint8_t *)iov->iov_base + take;
		iov->iov_len -= take;
		left -= take;
		if (iov->iov_len == 0) {
			iov++;
			n--;
		}
	}
	if (align) {
		sb_seal_filled(sb, &mark);
		if (sb->open)
			sb_seal(sb, sb_slot(sb, sb->next - 1));
		filled = (struct sb_mark){ .next = sb->next };
		n = sb_reserve(sb, rec->len);
		iov = sb->fill_iov;
	}
	r = fill(arg, sb, iov, n);
	if (r < 0) {
		sb_undo(sb, &mark);
		return r;
	}
	sb_seal_filled(sb, &filled);
	m = &sb->msgs[sb->msg_next % sb->max_msgs];
	m->client = client;
	m->id = rec->msg_id;
	m->tag = tag;
	m->len = rec->len;
	m->delivered = 0;
	sb->msg_next++;
	return 0;
}

static struct sb_block *sb_take(struct sendbuf *sb, struct sb_block *b, int stream)
{
	if (b->sends > 0) {
		sb->blocks_resent++;
		sb->resend_pending--;
	}
	b->state = SB_INFLIGHT;
	b->stream = stream;
	b->busy = 1;
	b->sends++;
	sb->blocks_sent++;
	sb->bytes_sent += b->len;
	return b;
}

/* The block sendbuf_next takes, without taking it: an open one is
 * returned unsealed. */
static struct sb_block *sb_pick(const struct sendbuf *sb, int allow_partial)
{
	uint64_t s = sb->send_cursor < sb->base ? sb->base : sb->send_cursor;

	/* Resends come first and are not limited by the window: the peer
	 * granted those sequence numbers already. */
	if (sb->resend_pending > 0) {
		for (uint64_t r = sb->base; r < sb->next; r++) {
			struct sb_block *b = sb_slot(sb, r);

			if (b->state == SB_READY && b->sends > 0 && !b->busy)
				return b;
		}
	}
	for (; s < sb->next && s < sb->window_end; s++) {
		struct sb_block *b = sb_slot(sb, s);

		if (b->state == SB_OPEN)
			return allow_partial ? b : NULL;
		if (b->state == SB_READY && !b->busy)
			return b;
	}
	return NULL;
}

struct sb_block *sendbuf_next(struct sendbuf *sb, int stream, int allow_partial)
{
	struct sb_block *b = sb_pick(sb, allow_partial);

	if (b == NULL)
		return NULL;
	if (b->state == SB_OPEN)
		sb_seal(sb, b);
	/* Every block sent before lies below the cursor. */
	if (b->seq >= sb->send_cursor)
		sb->send_cursor = b->seq + 1;
	return sb_take(sb, b, stream);
}

int sendbuf_has_next(const struct sendbuf *sb, int allow_partial)
{
	return sb_pick(sb, allow_partial) != NULL;
}

static void sb_free_block(struct sendbuf *sb, struct sb_block *b)
{
	/* Keep the buffer for reuse; only the state goes. */
	b->state = SB_FREE;
	b->stream = -1;
	b->len = 0;
	b->busy = b->freed = b->ciphered = 0;
	sendbuf_block_settle(b);
	(void)sb;
}

void sendbuf_release(struct sendbuf *sb, struct sb_block *b)
{
	b->busy = 0;
	if (b->freed)
		sb_free_block(sb, b);
}

int sendbuf_stream_unacked(const struct sendbuf *sb, int stream)
{
	for (uint64_t s = sb->base; s < sb->next; s++) {
		const struct sb_block *b = sb_slot(sb, s);

		if (b->state == SB_INFLIGHT && b->stream == stream)
			return 1;
	}
	return 0;
}

size_t sendbuf_stream_lost(struct sendbuf *sb, int stream, sb_unseal_fn *unseal, void *arg)
{
	size_t n = 0;

	for (uint64_t s = sb->base; s < sb->next; s++) {
		struct sb_block *b = sb_slot(sb, s);

		if (b->state == SB_INFLIGHT && b->stream == stream) {
			if (b->ciphered) {
				unseal(arg, b);
				b->ciphered = 0;
			}
			b->state = SB_READY;
			b->stream = -1;
			sb->resend_pending++;
			n++;
		}
	}
	return n;
}

static void sb_mark_delivered(struct sendbuf *sb, uint64_t from, uint64_t to, sb_msg_cb *delivered, void *arg)
{
	if (from < sb->msg_base)
		from = sb->msg_base;
	for (uint64_t n = from; n < to; n++) {
		struct sb_msg *m = &sb->msgs[n % sb->max_msgs];

		if (m->delivered)
			continue;
		m->delivered = 1;
		sb->msgs_delivered++;
		if (delivered)
			delivered(arg, m);
	}
}

/* A block the peer may claim to have: handed to a stream at least once. */
static int sb_was_sent(const struct sendbuf *sb, uint64_t seq)
{
	const struct sb_block *b = sb_slot(sb, seq);

	return b->seq == seq && b->state != SB_OPEN && b->state != SB_FREE && b->sends > 0;
}

/* Checks an ACK against what was sent before anything is changed.  Parts
 * below sb->base are stale (ACKs overtake each other on different streams)
 * and are ignored, not errors. */
static int sb_ack_valid(const struct sendbuf *sb, const struct wire_ack *a)
{
	if (a->recv_cum > sb->next || a->deliv_cum > sb->msg_next || a->window_end < a->recv_cum)
		return 0;
	for (uint64_t s = sb->base; s < a->recv_cum; s++)
		if (!sb_was_sent(sb, s))
			return 0;
	for (unsigned i = 0; i < a->nsack; i++) {
		if (a->sack[i].start < a->recv_cum || a->sack[i].start >= a->sack[i].end || a->sack[i].end > sb->next)
			return 0;
		for (uint64_t s = a->sack[i].start > sb->base ? a->sack[i].start : sb->base; s < a->sack[i].end; s++)
			if (!sb_was_sent(sb, s))
				return 0;
	}
	for (unsigned i = 0; i < a->ndeliv; i++)
		if (a->deliv[i].start < a->deliv_cum || a->deliv[i].start >= a->deliv[i].end ||
		    a->deliv[i].end > sb->msg_next)
			return 0;
	return 1;
}

void sendbuf_msgs_lost(struct sendbuf *sb, uint64_t first, uint64_t last, sb_msg_cb *lost, void *arg)
{
	if (first < sb->msg_base)
		first = sb->msg_base;
	for (uint64_t n = first; n <= last && n < sb->msg_next; n++) {
		struct sb_msg *m = &sb->msgs[n % sb->max_msgs];

		if (m->delivered)
			continue;
		m->delivered = 1;
		sb->msgs_lost++;
		lost(arg, m);
	}
	while (sb->msg_base < sb->msg_next && sb->msgs[sb->msg_base % sb->max_msgs].delivered)
		sb->msg_base++;
}

int sendbuf_ack(struct sendbuf *sb, const struct wire_ack *a, sb_msg_cb *delivered, void *arg)
{
	if (!sb_ack_valid(sb, a))
		return -EPROTO;
	/* ACKs travel on different streams and may arrive out of order: only
	 * ever move forward. */
	if (a->window_end > sb->window_end)
		sb->window_end = a->window_end;
	for (; sb->base < a->recv_cum; sb->base++) {
		struct sb_block *b = sb_slot(sb, sb->base);

		if (b->state == SB_READY && b->sends > 0)
			sb->resend_pending--;
		sb->blocks_acked++;
		sb->bytes_acked += b->len;
		if (b->state != SB_SACKED)
			sb->bytes_reached += b->len;
		if (b->busy)
			b->freed = 1;
		else
			sb_free_block(sb, b);
	}
	for (unsigned i = 0; i < a->nsack; i++) {
		for (uint64_t s = a->sack[i].start > sb->base ? a->sack[i].start : sb->base; s < a->sack[i].end; s++) {
			struct sb_block *b = sb_slot(sb, s);

			if (b->state == SB_READY && b->sends > 0)
				sb->resend_pending--;
			if (b->state == SB_READY || b->state == SB_INFLIGHT) {
				b->state = SB_SACKED;
				sb->bytes_reached += b->len;
			}
		}
	}
	sb_mark_delivered(sb, sb->msg_base, a->deliv_cum, delivered, arg);
	for (unsigned i = 0; i < a->ndeliv; i++)
		sb_mark_delivered(sb, a->deliv[i].start, a->deliv[i].end, delivered, arg);
	while (sb->msg_base < sb->msg_next && sb->msgs[sb->msg_base % sb->max_msgs].delivered)
		sb->msg_base++;
	return 0;
}

void sendbuf_reset(struct sendbuf *sb, sb_msg_cb *lost, void *arg)
{
	for (uint64_t n = sb->msg_base; n < sb->msg_next; n++) {
		struct sb_msg *m = &sb->msgs[n % sb->max_msgs];

		if (!m->delivered && lost)
			lost(arg, m);
	}
	for (uint64_t s = sb->base; s < sb->next; s++) {
		struct sb_block *b = sb_slot(sb, s);

		if (b->busy)
			b->freed = 1;
		else
			sb_free_block(sb, b);
	}
	/* Busy blocks are still referenced by a stream until released, so the
	 * new session's numbering must not reuse their slots before that; the
	 * streams of the old session are all closed at reset, which releases
	 * them first (see link.c). */
	sb->base = sb->next = sb->send_cursor = sb->window_end = 0;
	sb->open = 0;
	sb->resend_pending = 0;
	sb->msg_base = sb->msg_next = 0;
}
