/*
 * stream_msg.c - the message framer (LDS_TP_CAP_MESSAGE kinds): each
 * message carries whole frames, at most caps.max_msg bytes, sent from where
 * they lie: control frames and sealed frames from the stream's queue
 * (s->sq), clear DATA frames straight from the send buffer's blocks.  What
 * a message points at stays put until the transport's sent upcall for it
 * (transport.h); a stream closed with messages held lives on until its
 * closed upcall.  What arrives is parsed in the transport's memory.  See
 * stream_framer.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "clock.h"
#include "log.h"
#include "seal.h"
#include "stream_framer.h"

#define MSGQ_MAX 1024              /* messages a stream's transport may hold */
#define MSG_IOV (1 + 2 * STREAM_BATCH)

/* A message the transport holds: what to give back at its sent upcall. */
struct msg_held {
	struct sb_block *blk[STREAM_BATCH];   /* clear DATA frames' blocks */
	int nblk;
	size_t sq_bytes;                      /* the queue's bytes it carries */
};

struct stream_msgq {
	struct msg_held held[MSGQ_MAX];       /* oldest at head */
	unsigned head, count;
	struct lds_tp_msg rx;                 /* the message being parsed */
	int rx_busy;                          /* rx is the transport's until msg_done */
	void *reg_sq;                         /* s->sq's registration, NULL if none */
	struct stream *next_orphan;
};

/* Closed streams whose conns still hold their memory (stream_closed frees
 * them); a link that ends takes its send buffer from them first. */
static struct stream *orphans;

static struct stream_msgq *msgq(struct stream *s)
{
	if (s->mq == NULL)
		s->mq = calloc(1, sizeof(*s->mq));
	return s->mq;
}

/* The queue at its final size once the stream is up and nothing is held,
 * registered once (a batch sealed while the last one is held, and
 * control frames beside): stream_sealq_ring for a sealed stream. */
static int msg_fix_queue(struct stream *s, struct stream_msgq *q)
{
	size_t cap = s->aead ? stream_sealq_ring(s) : 2 * CTL_CAP;

	/* Not waiting for held > 0 to end: on a path longer than the gap
	 * between control frames (pings, acks; a 250 ms round trip) some are
	 * always held, and the unfixed queue never took a batch. */
	if (s->sq.fixed || s->st != ST_UP)
		return 0;
	if (sealq_fix(&s->sq, cap) < 0)
		return -ENOMEM;
	/* Unregistered, the transport copies what it is given. */
	if ((s->ops->caps.flags & LDS_TP_CAP_REGMEM) && s->ops->mem_reg(s->tp, s->sq.buf, s->sq.cap, &q->reg_sq) < 0)
		q->reg_sq = NULL;
	return 0;
}

/* Bytes of the whole frames at p (len bytes of them) that fit in max. */
static size_t msg_frames(const uint8_t *p, size_t len, size_t max)
{
	size_t n = 0;

	while (n + WIRE_HDR_LEN <= len) {
		size_t f = WIRE_HDR_LEN + (size_t)wire_hdr_payload_len(p + n);

		if (n + f > max)
			break;
		n += f;
	}
	return n;
}

/* Seals the next batch once the queue is empty and has room for it
 * behind what the transport holds.  0 or -EIO. */
static int msg_seal_batch(struct stream *s)
{
	size_t per = WIRE_DATA_HDR_LEN + s->block_size + SEAL_OVERHEAD;

	if (sealq_pending(&s->sq) > 0 || !sealq_fits(&s->sq, (size_t)s->take * per))
		return 0;
	stream_take_blocks(s);
	return stream_seal_blocks(s);
}

/* The next message into iov/desc and m: frames from the queue, then (in
 * clear) DATA frames of s->out, as many whole ones as max_msg takes.
 * Returns the iovecs filled, 0 if nothing waits, or -errno. */
static int msg_compose(struct stream *s, const struct stream_msgq *q, struct msg_held *m, struct iovec *iov,
		       void **desc)
{
	size_t max = s->ops->caps.max_msg, total;
	int n = 0;

	if (s->aead && msg_seal_batch(s) < 0)
		return -EIO;
	if (!s->aead)
		stream_take_blocks(s);
	m->nblk = 0;
	m->sq_bytes = total = msg_frames(sealq_data(&s->sq), sealq_pending(&s->sq), max);
	if (total > 0) {
		iov[n] = (struct iovec){ (void *)sealq_data(&s->sq), total };
		desc[n++] = q->reg_sq;
	}
	for (int i = 0; i < s->nout && total + WIRE_DATA_HDR_LEN + s->out[i]->len <= max; i++) {
		struct sb_block *b = s->out[i];

		iov[n] = (struct iovec){ b->hdr, WIRE_DATA_HDR_LEN };
		desc[n++] = s->sb->reg_slots;
		iov[n] = (struct iovec){ b->data, b->len };
		desc[n++] = s->sb->reg_blocks;
		m->blk[m->nblk++] = b;
		total += WIRE_DATA_HDR_LEN + b->len;
	}
	/* A frame larger than a message: the configuration prevents it. */
	if (n == 0 && (sealq_pending(&s->sq) > 0 || s->nout > 0))
		return -EMSGSIZE;
	return n;
}

static void stream_msg_flush(struct stream *s)
{
	struct stream_msgq *q;

	if (s->failed || s->stalled)
		return;
	q = msgq(s);
	if (q == NULL || msg_fix_queue(s, q) < 0) {
		s->failed = -ENOMEM;
		return;
	}
	for (int rounds = 0; rounds < 64; rounds++) {
		struct iovec iov[MSG_IOV];
		void *desc[MSG_IOV];
		struct msg_held *m = &q->held[(q->head + q->count) % MSGQ_MAX];
		int n, r;

		/* Full: the next sent upcall flushes again. */
		if (q->count == MSGQ_MAX) {
			s->ops->want_write(s->conn, 0);
			return;
		}
		n = msg_compose(s, q, m, iov, desc);
		if (n < 0) {
			s->failed = n;
			return;
		}
		if (n == 0) {
			s->blocked = 0;
			s->ops->want_write(s->conn, 0);
			return;
		}
		r = s->ops->send_msg(s->conn, iov, n, desc, m);
		if (r == -EAGAIN) {
			s->take = 1;
			s->blocked = 1;
			s->ops->want_write(s->conn, 1);
			return;
		}
		if (r < 0) {
			s->failed = r;
			return;
		}
		sealq_take(&s->sq, m->sq_bytes);
		s->nout -= m->nblk;
		memmove(s->out, s->out + m->nblk, (size_t)s->nout * sizeof(s->out[0]));
		q->count++;
		s->take = s->take * 2 < STREAM_BATCH ? s->take * 2 : STREAM_BATCH;
	}
	/* Plenty sent this round; let other fds have a turn. */
	s->ops->want_write(s->conn, 1);
}

/* The transport is done with the oldest message. */
static void msg_let_go(struct stream *s, struct stream_msgq *q)
{
	struct msg_held *m = &q->held[q->head];

	/* A link that ended took its send buffer away (stream_dereg_sendbuf). */
	for (int i = 0; i < m->nblk && s->sb; i++)
		sendbuf_release(s->sb, m->blk[i]);
	sealq_release(&s->sq, m->sq_bytes);
	q->head = (q->head + 1) % MSGQ_MAX;
	q->count--;
}

void stream_sent(struct lds_tp_conn *c, void *ctx, void *ud)
{
	struct stream *s = ud;
	struct stream_msgq *q = s->mq;

	if (q == NULL || q->count == 0 || ctx != &q->held[q->head]) {
		log_warnx("link %s: stream %d: the %s transport reported a message sent that is not the oldest it "
			  "holds; closing the stream", stream_who(s), s->idx, s->ops->name);
		stream_close(s, "transport broke its send order", 1);
		return;
	}
	msg_let_go(s, q);
	stream_flush(s);
	stream_failed(s);
}

/* ---- reading ------------------------------------------------------------ */

/* The frames of the message q->rx, each opened in place (the transport
 * lends it until msg_done) and handed up.  0, or -1 if s was closed. */
static int msg_parse(struct stream *s, struct stream_msgq *q)
{
	uint8_t *p = (uint8_t *)q->rx.data;      /* writable: transport.h, struct lds_tp_msg */
	size_t len = q->rx.len, off = 0;
	char why[128];

	if (s->st != ST_UP && len > ADMISSION_RX_MAX) {
		snprintf(why, sizeof(why), "bad frame (a message of %zu bytes before authentication; at most %u)", len,
			 (unsigned)ADMISSION_RX_MAX);
		stream_refuse_frame(s, why);
		return -1;
	}
	while (off < len) {
		struct wire_frame f;
		size_t used;
		int r = wire_frame_parse(p + off, len - off, &f, &used);

		if (r == 0) {
			snprintf(why, sizeof(why), "bad frame (a message of %zu bytes ends inside a frame at byte %zu)",
				 len, off);
			stream_refuse_frame(s, why);
			return -1;
		}
		if (r < 0) {
			stream_bad_frame(s, r, f.version);
			return -1;
		}
		if (stream_unseal(s, p + off, &f) < 0 || stream_deliver(s, &f) < 0)
			return -1;
		off += used;
	}
	return 0;
}

static void stream_msg_readable(struct stream *s)
{
	struct stream_msgq *q = msgq(s);

	if (q == NULL) {
		stream_close(s, "out of memory", 1);
		return;
	}
	for (int reads = 0; reads < READS_PER_EVENT; reads++) {
		int r = s->ops->recv_msg(s->conn, &q->rx);

		if (r == -EAGAIN)
			return;
		if (r < 0) {
			stream_broken_io(s, r);
			return;
		}
		q->rx_busy = 1;
		s->last_rx_ns = clock_now_ns();
		if (msg_parse(s, q) < 0)
			return;
		q->rx_busy = 0;
		s->ops->msg_done(s->conn, &q->rx);
	}
}

/* ---- lifetime -------------------------------------------------------- */

static int stream_msg_closing(struct stream *s)
{
	struct stream_msgq *q = s->mq;

	if (q == NULL)
		return 0;
	if (q->rx_busy)
		s->ops->msg_done(s->conn, &q->rx);
	q->rx_busy = 0;
	if (q->count == 0)
		return 0;
	q->next_orphan = orphans;
	orphans = s;
	return 1;
}

static void stream_msg_free(struct stream *s)
{
	struct stream_msgq *q = s->mq;

	if (q == NULL)
		return;
	for (struct stream **pp = &orphans; *pp; pp = &(*pp)->mq->next_orphan) {
		if (*pp == s) {
			*pp = q->next_orphan;
			break;
		}
	}
	while (q->count > 0)
		msg_let_go(s, q);
	if (q->reg_sq)
		s->ops->mem_dereg(s->tp, q->reg_sq);
	free(q);
	s->mq = NULL;
}

const struct stream_framer stream_msg_framer = {
	.flush = stream_msg_flush,
	.readable = stream_msg_readable,
	.closing = stream_msg_closing,
	.free = stream_msg_free,
	.ctl_in_queue = 1,
};

/* ---- registered memory ---------------------------------------------- */

void stream_reg_sendbuf(const struct lds_transport_ops *ops, struct lds_transport *tp, struct sendbuf *sb)
{
	/* A sealing link sends its blocks from its streams' queues. */
	if (!(ops->caps.flags & LDS_TP_CAP_REGMEM) || sb->no_hdr || sb->blocks == NULL)
		return;
	if (ops->mem_reg(tp, sb->blocks, sb->mem, &sb->reg_blocks) < 0)
		sb->reg_blocks = NULL;
	if (ops->mem_reg(tp, sb->slots, sb->nslots * sizeof(sb->slots[0]), &sb->reg_slots) < 0)
		sb->reg_slots = NULL;
}

void stream_dereg_sendbuf(const struct lds_transport_ops *ops, struct lds_transport *tp, struct sendbuf *sb)
{
	for (struct stream *s = orphans; s; s = s->mq->next_orphan)
		if (s->sb == sb)
			s->sb = NULL;
	if (sb->reg_blocks)
		ops->mem_dereg(tp, sb->reg_blocks);
	if (sb->reg_slots)
		ops->mem_dereg(tp, sb->reg_slots);
	sb->reg_blocks = sb->reg_slots = NULL;
}
