/* stream.c - one stream's framing, batching, reading and writing; see stream.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "clock.h"
#include "log.h"
#include "seal.h"
#include "stream.h"

#define RX_INITIAL (256u * 1024)
#define READS_PER_EVENT 16         /* fairness between streams and clients */

const char *const stream_state_names[ST_COUNT] = { "connecting", "hello-sent", "auth-sent", "wait-hello",
						   "challenge-sent", "up" };

struct stream *stream_new(struct daemon *d, const struct lds_transport_ops *ops, const struct stream_upcalls *up,
			  enum stream_state st)
{
	struct stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->d = d;
	s->ops = ops;
	s->up = up;
	s->idx = -1;
	s->st = st;
	s->created_ns = s->last_rx_ns = clock_now_ns();
	return s;
}

void stream_bind(struct stream *s, struct link *l, const char *name, struct sendbuf *sb, size_t block_size)
{
	s->link = l;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->sb = sb;
	s->block_size = block_size;
}

/* Who s belongs to, for logs: its link, or where it came from. */
static const char *stream_who(const struct stream *s)
{
	return s->name[0] ? s->name : s->peer_addr;
}

void stream_set_state(struct stream *s, enum stream_state st, const char *why)
{
	log_debug("link %s: stream %d (%s): %s -> %s (%s)", stream_who(s), s->idx, s->peer_addr,
		  stream_state_names[s->st], stream_state_names[st], why);
	s->st = st;
	if (st != ST_UP)
		return;
	s->take = 1;
	s->up_ns = s->last_ping_ns = clock_now_ns();
	s->up->up(s);
}

/* ---- control frames ---------------------------------------------------- */

/* What a sealed stream may hold unwritten: a batch of blocks and the
 * control frames queued behind it. */
static size_t stream_sealed_max(const struct stream *s)
{
	return CTL_CAP + STREAM_BATCH * (WIRE_DATA_HDR_LEN + s->block_size + SEAL_OVERHEAD);
}

int stream_queue(struct stream *s, const uint8_t *frame, size_t len)
{
	if (len == 0)
		return -EINVAL;
	if (s->aead)
		return sealq_put(&s->sq, frame, len, stream_sealed_max(s));
	if (s->ctl_off > 0 && s->ctl_len + len > CTL_CAP) {
		memmove(s->ctl, s->ctl + s->ctl_off, s->ctl_len - s->ctl_off);
		s->ctl_len -= s->ctl_off;
		s->ctl_off = 0;
	}
	if (s->ctl_len + len > CTL_CAP)
		return -ENOBUFS;
	memcpy(s->ctl + s->ctl_len, frame, len);
	s->ctl_len += len;
	return 0;
}

/* Queues frame (n bytes, 0 if it could not be encoded) and writes it. */
static void stream_send(struct stream *s, const uint8_t *frame, size_t n)
{
	if (n > 0 && stream_queue(s, frame, n) == 0)
		stream_flush(s);
}

void stream_refuse(struct stream *s, enum wire_refuse code, const char *reason)
{
	struct wire_refuse_msg r = { .code = (uint16_t)code };
	uint8_t buf[WIRE_HDR_LEN + 4 + WIRE_REASON_MAX];

	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	stream_send(s, buf, wire_encode_refuse(buf, sizeof(buf), &r));
}

/* A full control queue means the peer is not reading: the inactivity
 * timer handles that, not this PING or PONG. */
void stream_ping(struct stream *s, uint8_t type, uint64_t t)
{
	uint8_t buf[WIRE_HDR_LEN + 8];

	stream_send(s, buf, wire_encode_ping(buf, sizeof(buf), type, t));
}

void stream_bye(struct stream *s, enum wire_refuse reason)
{
	uint8_t buf[WIRE_HDR_LEN + 2];

	stream_send(s, buf, wire_encode_bye(buf, sizeof(buf), reason));
}

/* ---- writing -------------------------------------------------------------- */

static void stream_broken_io(struct stream *s, int err)
{
	char why[64];

	snprintf(why, sizeof(why), "%s", err == -EPIPE ? "closed by peer" : strerror(-err));
	stream_close(s, why, 1);
}

int stream_failed(struct stream *s)
{
	if (!s->failed)
		return 0;
	stream_broken_io(s, s->failed);
	return 1;
}

/* Takes blocks to write once the previous batch is gone, so that a stream
 * that cannot write holds few blocks back from the others: as many as its
 * last writes took whole, doubling up to STREAM_BATCH, one after a short
 * write.  A stream just up, or slowed down, holds one block that the
 * receiver may wait for, not a batch. */
static void stream_take_blocks(struct stream *s)
{
	if (s->nout > 0 || s->st != ST_UP || s->sb == NULL || !s->up->may_take(s))
		return;
	while (s->nout < s->take) {
		struct sb_block *b = sendbuf_next(s->sb, s->idx, 1);

		if (b == NULL)
			break;
		s->out[s->nout++] = b;
	}
}

/* Accounts for `sent` bytes of data frames written. */
static void stream_wrote_blocks(struct stream *s, size_t sent)
{
	while (sent > 0 && s->nout > 0) {
		size_t left = WIRE_DATA_HDR_LEN + s->out[0]->len - s->out_off;
		size_t took = sent < left ? sent : left;

		s->out_off += took;
		sent -= took;
		if (took < left)
			break;
		sendbuf_release(s->sb, s->out[0]);
		memmove(s->out, s->out + 1, (size_t)(s->nout - 1) * sizeof(s->out[0]));
		s->nout--;
		s->out_off = 0;
	}
}

/* What to write next in clear (encryption = "none"): control frames,
 * then blocks straight from the send buffer.  Returns the iovecs filled;
 * *ctl_part is the control frames' share. */
static int stream_iov_clear(struct stream *s, struct iovec *iov, size_t *ctl_part, int *more)
{
	size_t off = s->out_off;
	int n = 0;

	stream_take_blocks(s);
	/* Control frames go first unless a data frame is half written:
	 * frames must never interleave. */
	if (s->ctl_len > s->ctl_off && (s->nout == 0 || s->out_off == 0)) {
		*ctl_part = s->ctl_len - s->ctl_off;
		iov[n].iov_base = s->ctl + s->ctl_off;
		iov[n++].iov_len = *ctl_part;
	}
	for (int i = 0; i < s->nout; i++, off = 0) {
		struct sb_block *b = s->out[i];

		if (off < WIRE_DATA_HDR_LEN) {
			iov[n].iov_base = b->hdr + off;
			iov[n++].iov_len = WIRE_DATA_HDR_LEN - off;
			off = WIRE_DATA_HDR_LEN;
		}
		iov[n].iov_base = b->data + (off - WIRE_DATA_HDR_LEN);
		iov[n++].iov_len = b->len - (off - WIRE_DATA_HDR_LEN);
	}
	/* A full batch with more behind it: the next write continues
	 * the packet this one ends with. */
	*more = s->nout > 0 && s->nout == s->take && sendbuf_has_next(s->sb, 1);
	return n;
}

static void stream_wrote_clear(struct stream *s, size_t sent, size_t ctl_part)
{
	if (sent <= ctl_part) {
		s->ctl_off += sent;
		sent = 0;
	} else {
		s->ctl_off += ctl_part;
		sent -= ctl_part;
	}
	if (s->ctl_off == s->ctl_len)
		s->ctl_off = s->ctl_len = 0;
	stream_wrote_blocks(s, sent);
}

/* What to write next on a sealed stream: the queue, where the next batch
 * of blocks is sealed once the last one is written (a control frame
 * queued meanwhile waits behind at most that batch).  Returns the iovecs
 * filled (0 or 1), or -EIO if sealing failed. */
static int stream_iov_sealed(struct stream *s, struct iovec *iov, int *more)
{
	if (sealq_pending(&s->sq) == 0) {
		int full;

		stream_take_blocks(s);
		full = s->nout > 0 && s->nout == s->take;
		for (int i = 0; i < s->nout; i++) {
			struct sb_block *b = s->out[i];
			int r = sealq_put_data(&s->sq, b->seq, b->data, b->len);

			sendbuf_release(s->sb, b);
			if (r < 0) {
				memmove(s->out, s->out + i + 1, (size_t)(s->nout - i - 1) * sizeof(s->out[0]));
				s->nout -= i + 1;
				return -EIO;
			}
		}
		s->nout = 0;
		s->sq_more = full && sendbuf_has_next(s->sb, 1);
	}
	*more = s->sq_more;
	if (sealq_pending(&s->sq) == 0)
		return 0;
	iov[0].iov_base = (void *)sealq_data(&s->sq);
	iov[0].iov_len = sealq_pending(&s->sq);
	return 1;
}

void stream_flush(struct stream *s)
{
	if (s->failed || s->stalled)
		return;
	for (int rounds = 0; rounds < 64; rounds++) {
		struct iovec iov[1 + 2 * STREAM_BATCH];
		int n, r, more = 0;
		size_t sent, ctl_part = 0, offered = 0;

		n = s->aead ? stream_iov_sealed(s, iov, &more) : stream_iov_clear(s, iov, &ctl_part, &more);
		if (n < 0) {
			s->failed = n;
			return;
		}
		for (int i = 0; i < n; i++)
			offered += iov[i].iov_len;
		if (n == 0) {
			if (s->corked)
				s->ops->push(s->conn);
			s->corked = 0;
			s->blocked = 0;
			s->ops->want_write(s->conn, 0);
			return;
		}
		r = s->ops->send(s->conn, iov, n, more ? LDS_TP_MORE : 0, &sent);
		if (r == -EAGAIN) {
			s->take = 1;
			s->blocked = 1;
			s->ops->want_write(s->conn, 1);
			return;
		}
		s->corked = more;
		if (r < 0) {
			/* Closing here would free s under our callers' feet;
			 * they check s->failed (stream_failed). */
			s->failed = r;
			return;
		}
		s->take = sent < offered ? 1 : s->take * 2 < STREAM_BATCH ? s->take * 2 : STREAM_BATCH;
		if (s->aead)
			sealq_sent(&s->sq, sent);
		else
			stream_wrote_clear(s, sent, ctl_part);
	}
	/* Plenty written this round; let other fds have a turn. */
	s->ops->want_write(s->conn, 1);
}

void stream_writable(struct lds_tp_conn *c, void *ud)
{
	stream_flush(ud);
	stream_failed(ud);
}

/* ---- lifetime -------------------------------------------------------- */

void stream_free(struct stream *s)
{
	sealq_free(&s->sq);
	free(s->rx);
	free(s);
}

void stream_close(struct stream *s, const char *why, int level_warn)
{
	for (int i = 0; i < s->nout; i++)
		sendbuf_release(s->sb, s->out[i]);
	s->nout = 0;
	s->up->down(s, why, level_warn);
	if (s->conn)
		s->ops->close(s->conn);
	stream_free(s);
}

void stream_stall(struct stream *s)
{
	s->stalled = 1;
	s->ops->want_read(s->conn, 0);
	s->ops->want_write(s->conn, 0);
}

int stream_query(const struct stream *s, struct lds_tp_info *info)
{
	return s && s->st == ST_UP && s->ops->query && s->ops->query(s->conn, info) == 0;
}

void stream_rtts(struct stream *const *v, unsigned n, uint32_t *now_us, uint32_t *min_us)
{
	struct lds_tp_info info;

	*now_us = *min_us = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!stream_query(v[i], &info))
			continue;
		if (info.rtt_us && (*now_us == 0 || info.rtt_us < *now_us))
			*now_us = info.rtt_us;
		if (info.min_rtt_us && (*min_us == 0 || info.min_rtt_us < *min_us))
			*min_us = info.min_rtt_us;
	}
}

/* ---- reading ------------------------------------------------------------ */

/* Before authentication a stream holds at most ADMISSION_RX_MAX bytes. */
static int stream_rx_reserve(struct stream *s, size_t need)
{
	size_t cap = s->st == ST_UP ? RX_INITIAL : ADMISSION_RX_MAX;
	uint8_t *p;

	if (cap < s->rx_cap)
		cap = s->rx_cap;
	while (cap < need)
		cap *= 2;
	if (cap == s->rx_cap)
		return 0;
	p = realloc(s->rx, cap);
	if (p == NULL)
		return -ENOMEM;
	s->rx = p;
	s->rx_cap = cap;
	return 0;
}

/* A frame that wire_frame_parse (or the direct read's CRC check) refused:
 * says why and closes s. */
static void stream_bad_frame(struct stream *s, int err, uint8_t version)
{
	char why[96];

	if (err == -EPROTONOSUPPORT) {
		snprintf(why, sizeof(why), "speaks protocol version %u, we speak %u; upgrade one side", version,
			 WIRE_VERSION);
		stream_refuse(s, WIRE_REFUSE_VERSION, "protocol version not supported");
	} else {
		snprintf(why, sizeof(why), "bad frame (%s)", strerror(-err));
	}
	/* Unauthenticated streams are logged through admission's rate limit. */
	if (!s->unauth)
		log_warnx("%s: peer %s %s; closing the stream", stream_who(s), s->peer_addr, why);
	stream_close(s, why, 1);
}

#define BAD_TAG "authentication failed (altered, replayed, reordered or injected) on a sealed"

/*
 * A frame that must be sealed and is not, or the reverse, or whose tag does
 * not verify: on a stream with keys, only the peer can seal, and only in
 * order (seal.h).  Says so, naming the link, and closes s: its blocks in
 * flight are resent on the other streams, nothing of the frame is used.
 */
static void stream_bad_seal(struct stream *s, const char *why, uint8_t type)
{
	log_warnx("link %s: stream %d: %s %s frame from %s; closing the stream", s->name[0] ? s->name : "?",
		  s->idx, why, type < WIRE_TYPE_MAX ? wire_type_names[type] : "unknown", s->peer_addr);
	stream_close(s, "sealed frame refused", 1);
}

/* Opens the sealed frame f at frame in place, or checks that an unsealed
 * one may be taken as it is.  0, or -1 after closing s. */
static int stream_unseal(struct stream *s, uint8_t *frame, struct wire_frame *f)
{
	const char *why;

	if (s->sq.seal.rx.ctx == NULL) {
		if (!f->sealed)
			return 0;
		why = "sealed before the stream has keys:";
	} else if (!f->sealed) {
		/* The listener refuses an AUTH that does not verify before it
		 * has keys, so the connector reads that refusal in clear. */
		if (f->type == WIRE_REFUSE && s->st == ST_AUTH_SENT)
			return 0;
		why = "refused an unsealed (injected?)";
	} else if (seal_open_frame(&s->sq.seal.rx, frame, f) == 0) {
		return 0;
	} else {
		why = BAD_TAG;
	}
	stream_bad_seal(s, why, f->type);
	return -1;
}

static int stream_recv(struct stream *s, const struct iovec *iov, int n, size_t *got)
{
	int r = s->ops->recv(s->conn, iov, n, got);

	s->pending = *got < s->pending ? s->pending - *got : 0;
	return r;
}

/* How much the next read takes: all there is room for, except in a train
 * of DATA frames, where it stops after the next frame's prefix, so that
 * each block can be read straight into its message (stream_read_direct). */
static size_t stream_read_size(const struct stream *s)
{
	size_t end = WIRE_DATA_HDR_LEN;

	if (!s->data_train)
		return s->rx_cap - s->rx_len;
	/* s->rx starts with the frame being read; its header is valid. */
	if (s->rx_len >= WIRE_HDR_LEN)
		end = WIRE_HDR_LEN + ((size_t)s->rx[4] << 24 | (size_t)s->rx[5] << 16 | (size_t)s->rx[6] << 8 | s->rx[7]) +
		      WIRE_DATA_HDR_LEN;
	if (end > s->rx_cap)
		end = s->rx_cap;
	return end > s->rx_len ? end - s->rx_len : s->rx_cap - s->rx_len;
}

/*
 * s->rx starts with a DATA frame, its prefix there and its block not all
 * there yet.  If its block can go straight to where it belongs (the
 * owner's place upcall: into the message being reassembled, or where it
 * is held until the blocks before it arrive), and the rest of the frame
 * is all waiting in the socket, reads it there, with the next frame's
 * prefix into s->rx: a copy of every byte saved.  Whole frames only, so
 * that no message is left half-written while other streams run.  Returns
 * 1 if it took the frame, 0 if not, -1 if it closed s.
 */
static int stream_read_direct(struct stream *s)
{
	uint8_t prefix[WIRE_DATA_HDR_LEN], tag[SEAL_OVERHEAD], *dst;
	uint64_t seq;
	uint32_t len;
	size_t have, body;
	int r, sealed;

	if (s->link == NULL || s->st != ST_UP || s->rx_len < WIRE_DATA_HDR_LEN ||
	    !wire_peek_data(s->rx, &seq, &len, &sealed) || s->rx_len - WIRE_DATA_HDR_LEN >= len ||
	    sealed != (s->sq.seal.rx.ctx != NULL))
		return 0;
	/* A sealed block is followed by its tag, read into tag. */
	body = len + (sealed ? SEAL_OVERHEAD : 0);
	have = s->rx_len - WIRE_DATA_HDR_LEN;
	dst = s->up->place(s, seq, len);
	if (dst != NULL && s->pending < body - have)
		s->pending = s->ops->pending(s->conn);
	if (dst == NULL || s->pending < body - have)
		return 0;
	memcpy(prefix, s->rx, WIRE_DATA_HDR_LEN);
	memcpy(dst, s->rx + WIRE_DATA_HDR_LEN, have);
	s->rx_len = 0;
	while (have < body) {
		struct iovec iov[3];
		size_t got;
		int n = 0;

		if (have < len)
			iov[n++] = (struct iovec){ dst + have, len - have };
		if (body > len)
			iov[n++] = have < len ? (struct iovec){ tag, SEAL_OVERHEAD }
					      : (struct iovec){ tag + (have - len), body - have };
		iov[n++] = (struct iovec){ s->rx, WIRE_DATA_HDR_LEN };
		r = stream_recv(s, iov, n, &got);
		if (r == -EAGAIN) {
			/* Not all there after all: back to s->rx, the usual way. */
			memcpy(s->rx, prefix, WIRE_DATA_HDR_LEN);
			memcpy(s->rx + WIRE_DATA_HDR_LEN, dst, have < len ? have : len);
			if (have > len)
				memcpy(s->rx + WIRE_DATA_HDR_LEN + len, tag, have - len);
			s->rx_len = WIRE_DATA_HDR_LEN + have;
			return 0;
		}
		if (r < 0) {
			stream_broken_io(s, r);
			return -1;
		}
		if (got > body - have)
			s->rx_len = got - (body - have);
		have += got - s->rx_len;
	}
	s->last_rx_ns = clock_now_ns();
	if (sealed ? seal_open(&s->sq.seal.rx, prefix, WIRE_DATA_HDR_LEN, dst, len, tag) < 0
		   : !wire_data_intact(prefix, dst, len)) {
		if (sealed)
			stream_bad_seal(s, BAD_TAG, WIRE_DATA);
		else
			stream_bad_frame(s, -EBADMSG, WIRE_VERSION);
		return -1;
	}
	if (s->up->placed(s, seq, len) < 0) {
		stream_close(s, "protocol error", 1);
		return -1;
	}
	return 1;
}

/* Hands f to the owner; returns -1 if s was closed. */
static int stream_deliver(struct stream *s, struct wire_frame *f)
{
	uint16_t reason = 0;

	if (s->up->frame(s, f) == 0)
		return stream_failed(s) ? -1 : 0;
	if (f->type == WIRE_BYE && wire_decode_bye(f, &reason) == 0 && reason == WIRE_REFUSE_RETIRED)
		s->retired = 1;
	stream_close(s, s->retired ? "retired by the peer: it wants fewer streams"
		     : f->type == WIRE_BYE ? "peer said goodbye" : "protocol error",
		     f->type != WIRE_BYE);
	return -1;
}

void stream_readable(struct lds_tp_conn *c, void *ud)
{
	struct stream *s = ud;

	for (int reads = 0; reads < READS_PER_EVENT; reads++) {
		size_t got, off = 0, need = WIRE_HDR_LEN;
		struct wire_frame f;
		int r;

		/* A DATA frame whose prefix the last read brought. */
		r = stream_read_direct(s);
		if (r < 0)
			return;
		if (r > 0)
			continue;
		if (stream_rx_reserve(s, s->st == ST_UP ? s->rx_len + 65536 : ADMISSION_RX_MAX) < 0) {
			stream_close(s, "out of memory", 1);
			return;
		}
		r = stream_recv(s, &(struct iovec){ s->rx + s->rx_len, stream_read_size(s) }, 1, &got);
		if (r == -EAGAIN)
			return;
		if (r < 0) {
			stream_broken_io(s, r);
			return;
		}
		s->rx_len += got;
		s->last_rx_ns = clock_now_ns();
		for (;;) {
			size_t used;

			r = wire_frame_parse(s->rx + off, s->rx_len - off, &f, &used);
			if (r == 0) {
				need = used;
				break;
			}
			if (r < 0) {
				stream_bad_frame(s, r, f.version);
				return;
			}
			if (stream_unseal(s, s->rx + off, &f) < 0 || stream_deliver(s, &f) < 0)
				return;
			s->data_train = f.type == WIRE_DATA;
			off += used;
		}
		if (off > 0) {
			memmove(s->rx, s->rx + off, s->rx_len - off);
			s->rx_len -= off;
		}
		if (need > s->rx_cap && s->st != ST_UP) {
			stream_bad_frame(s, -EMSGSIZE, WIRE_VERSION);
			return;
		}
		if (need > s->rx_cap && stream_rx_reserve(s, need) < 0) {
			stream_close(s, "out of memory", 1);
			return;
		}
	}
}
