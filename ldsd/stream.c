/*
 * stream.c - what every stream does, whatever its transport carries: its
 * state, its control frames, opening and handing up what arrives,
 * closing; the framer chosen by the transport's caps (stream_framer.h,
 * stream_new.c) puts frames on the conn.  See stream.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "clock.h"
#include "log.h"
#include "seal.h"
#include "stream_framer.h"

const char *const stream_state_names[ST_COUNT] = { "connecting", "hello-sent", "auth-sent", "wait-hello",
						   "challenge-sent", "up" };

void stream_bind(struct stream *s, struct link *l, const char *name, struct sendbuf *sb, size_t block_size)
{
	s->link = l;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->sb = sb;
	s->block_size = block_size;
}

const char *stream_who(const struct stream *s)
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

size_t stream_sealed_max(const struct stream *s)
{
	return CTL_CAP + STREAM_BATCH * (WIRE_DATA_HDR_LEN + s->block_size + SEAL_OVERHEAD);
}

/* A ring of a quarter of the send memory lets one stream keep a long fat
 * lossy path busy: twice the sealed batch held one udp stream to about
 * 512 KiB per round trip (2.2 MB/s at 100 ms); under loss a message is
 * let go only once a repair filled its hole, and 16 MiB stalled a conn
 * at 200 Mb/s, 200 ms, 1 % loss whenever a repair was lost too. */
#define SEALQ_RING_MAX (64u << 20)

size_t stream_sealq_ring(const struct stream *s)
{
	size_t path = s->sb ? s->sb->mem / 4 : 0;
	size_t cap = 2 * stream_sealed_max(s);

	if (path > cap)
		cap = path < SEALQ_RING_MAX ? path : SEALQ_RING_MAX;
	return cap;
}

int stream_queue(struct stream *s, const uint8_t *frame, size_t len)
{
	if (len == 0)
		return -EINVAL;
	/* The message framer sends control frames from the queue too. */
	if (s->aead || s->fr->ctl_in_queue)
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

void stream_broken_io(struct stream *s, int err)
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
void stream_take_blocks(struct stream *s)
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

int stream_seal_blocks(struct stream *s)
{
	for (int i = 0; i < s->nout; i++) {
		struct sb_block *b = s->out[i];
		int r;

		sendbuf_materialize(s->sb, b);
		r = sealq_put_data(&s->sq, b->seq, b->data, b->len);

		sendbuf_release(s->sb, b);
		if (r < 0) {
			memmove(s->out, s->out + i + 1, (size_t)(s->nout - i - 1) * sizeof(s->out[0]));
			s->nout -= i + 1;
			return -EIO;
		}
	}
	s->nout = 0;
	return 0;
}

int stream_seal_in_place(struct stream *s)
{
	for (int i = 0; i < s->nout; i++) {
		struct sb_block *b = s->out[i];
		struct iovec src[2 * SB_DEFER_MAX + 1];
		int n = sendbuf_block_src(b, src);
		int r = seal_block(&s->sq.seal.tx, b->seq, src, n, b->data, b->len, b->hdr, b->tag, &b->nonce);

		/* The cipher failed half way through the only copy of the
		 * block: sending anything would lose it silently. */
		if (r == -EIO)
			fatalx("%s: stream %d: sealing block %" PRIu64 " failed in the cipher library; its bytes are "
			       "lost, stopping", stream_who(s), s->idx, b->seq);
		if (r < 0)
			return -EIO;
		sendbuf_block_settle(b);
		b->ciphered = 1;
	}
	return 0;
}

void stream_unseal_block(void *arg, struct sb_block *b)
{
	struct stream *s = arg;

	if (seal_unseal_block(&s->sq.seal.tx, b->nonce, b->hdr, b->data, b->len, b->tag) < 0)
		fatalx("%s: stream %d: block %" PRIu64 ", sealed in place, no longer opens with its key: memory "
		       "corrupted; stopping rather than resend it wrong", stream_who(s), s->idx, b->seq);
}

void stream_flush(struct stream *s)
{
	s->fr->flush(s);
}

void stream_writable(struct lds_tp_conn *c, void *ud)
{
	stream_flush(ud);
	stream_failed(ud);
}

/* ---- lifetime -------------------------------------------------------- */

void stream_free(struct stream *s)
{
	s->fr->free(s);
	sealq_free(&s->sq);
	free(s);
}

void stream_close(struct stream *s, const char *why, int level_warn)
{
	for (int i = 0; i < s->nout; i++)
		sendbuf_release(s->sb, s->out[i]);
	s->nout = 0;
	s->up->down(s, why, level_warn);
	if (s->conn == NULL) {
		stream_free(s);
		return;
	}
	/* What the transport still holds of s keeps s until it is let go
	 * (stream_closed); otherwise its closed upcall names nothing of ours. */
	if (s->fr->closing(s)) {
		s->ops->close(s->conn);
		return;
	}
	s->ops->set_userdata(s->conn, NULL);
	s->ops->close(s->conn);
	stream_free(s);
}

void stream_closed(struct lds_tp_conn *c, void *ud)
{
	if (ud != NULL)
		stream_free(ud);
}

void stream_rx_lowat(struct stream *s, size_t bytes)
{
	if (s->ops->rx_lowat == NULL || s->conn == NULL || bytes == s->rx_lowat)
		return;
	s->ops->rx_lowat(s->conn, bytes);
	s->rx_lowat = bytes;
}

void stream_tx_unsent(struct stream *s, size_t bytes)
{
	if (s->ops->tx_unsent == NULL || s->conn == NULL || bytes == s->tx_unsent)
		return;
	s->ops->tx_unsent(s->conn, bytes);
	s->tx_unsent = bytes;
}

/* The longest a stream waits for a DATA frame's rest. */
#define STREAM_RX_WAIT_NS 250000000ull

void stream_park(struct stream *s, uint64_t seq)
{
	s->parked = STREAM_PARKED;
	s->parked_seq = seq;
	s->rx_wait_ns = clock_now_ns();
	s->ops->want_read(s->conn, 0);
}

void stream_unpark(struct stream *s)
{
	s->parked = STREAM_RELEASED;
	if (!s->stalled)
		s->ops->want_read(s->conn, 1);
}

void stream_rx_expire(struct stream *s, uint64_t now)
{
	if (s->rx_wait_ns && now - s->rx_wait_ns > STREAM_RX_WAIT_NS)
		stream_rx_lowat(s, 1);
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

void stream_bad_frame(struct stream *s, int err, uint8_t version)
{
	char why[96];

	if (err == -EPROTONOSUPPORT) {
		snprintf(why, sizeof(why), "speaks protocol version %u, we speak %u; upgrade one side", version,
			 WIRE_VERSION);
		stream_refuse(s, WIRE_REFUSE_VERSION, "protocol version not supported");
	} else {
		snprintf(why, sizeof(why), "bad frame (%s)", strerror(-err));
	}
	stream_refuse_frame(s, why);
}

void stream_refuse_frame(struct stream *s, const char *why)
{
	/* Unauthenticated streams are logged through admission's rate limit. */
	if (!s->unauth)
		log_warnx("%s: peer %s %s; closing the stream", stream_who(s), s->peer_addr, why);
	stream_close(s, why, 1);
}

/*
 * A frame that must be sealed and is not, or the reverse, or whose tag does
 * not verify: on a stream with keys, only the peer can seal, and only in
 * order (seal.h).  Says so, naming the link, and closes s: its blocks in
 * flight are resent on the other streams, nothing of the frame is used.
 */
void stream_bad_seal(struct stream *s, const char *why, uint8_t type)
{
	log_warnx("link %s: stream %d: %s %s frame from %s; closing the stream", s->name[0] ? s->name : "?",
		  s->idx, why, type < WIRE_TYPE_MAX ? wire_type_names[type] : "unknown", s->peer_addr);
	stream_close(s, "sealed frame refused", 1);
}

int stream_unseal(struct stream *s, uint8_t *frame, struct wire_frame *f)
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
		why = STREAM_BAD_TAG;
	}
	stream_bad_seal(s, why, f->type);
	return -1;
}

int stream_deliver(struct stream *s, struct wire_frame *f)
{
	uint16_t reason = 0;

	if (s->up->frame(s, f) == 0)
		return stream_failed(s) ? -1 : 0;
	if (f->type == WIRE_BYE && wire_decode_bye(f, &reason) == 0 && reason == WIRE_REFUSE_RETIRED)
		s->retired = 1;
	stream_close(s, s->retired ? "retired by the peer: it wants fewer streams"
		     : f->type == WIRE_BYE ? "peer said goodbye" : s->close_why[0] ? s->close_why : "protocol error",
		     f->type != WIRE_BYE);
	return -1;
}


void stream_readable(struct lds_tp_conn *c, void *ud)
{
	struct stream *s = ud;

	s->fr->readable(s);
}
