/*
 * stream_bytes.c - the byte stream framer (LDS_TP_CAP_STREAM kinds): frames
 * written in batches that fill whole packets (LDS_TP_MORE, push), short
 * writes accounted for, what arrives read into a buffer and parsed, a DATA
 * block read straight to where it belongs when all of it waits in the
 * conn.  See stream_framer.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "clock.h"
#include "seal.h"
#include "stream_framer.h"

#define RX_INITIAL (256u * 1024)

/* ---- writing -------------------------------------------------------------- */

/* A taken block's frame: its header, its block, and the tag if it was
 * sealed in place. */
static size_t out_frame_len(const struct sb_block *b)
{
	return WIRE_DATA_HDR_LEN + b->len + (b->ciphered ? SEAL_OVERHEAD : 0);
}

/* Accounts for `sent` bytes of data frames written; returns what is left
 * of sent beyond them. */
static size_t stream_wrote_blocks(struct stream *s, size_t sent)
{
	while (sent > 0 && s->nout > 0) {
		size_t left = out_frame_len(s->out[0]) - s->out_off;
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
	return sent;
}

/* Appends to iov[n..] the frames of the blocks taken, from out_off on,
 * straight from the send buffer; returns the new n. */
static int stream_iov_blocks(struct stream *s, struct iovec *iov, int n)
{
	size_t off = s->out_off;

	for (int i = 0; i < s->nout; i++, off = 0) {
		struct sb_block *b = s->out[i];
		const struct iovec part[3] = { { b->hdr, WIRE_DATA_HDR_LEN },
					       { b->data, b->len },
					       { b->tag, b->ciphered ? SEAL_OVERHEAD : 0 } };

		for (int k = 0; k < 3; k++) {
			if (off >= part[k].iov_len) {
				off -= part[k].iov_len;
				continue;
			}
			iov[n].iov_base = (uint8_t *)part[k].iov_base + off;
			iov[n++].iov_len = part[k].iov_len - off;
			off = 0;
		}
	}
	return n;
}

/* What to write next in clear (encryption = "none"): control frames,
 * then blocks straight from the send buffer.  Returns the iovecs filled;
 * *ctl_part is the control frames' share. */
static int stream_iov_clear(struct stream *s, struct iovec *iov, size_t *ctl_part, int *more)
{
	int n = 0;

	stream_take_blocks(s);
	/* Control frames go first unless a data frame is half written:
	 * frames must never interleave. */
	if (s->ctl_len > s->ctl_off && (s->nout == 0 || s->out_off == 0)) {
		*ctl_part = s->ctl_len - s->ctl_off;
		iov[n].iov_base = s->ctl + s->ctl_off;
		iov[n++].iov_len = *ctl_part;
	}
	n = stream_iov_blocks(s, iov, n);
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

/*
 * Zero copy (the transport's send_holds: TCP's zerocopy setting): once
 * the stream is up, its queue becomes a fixed ring (stream_sealq_ring)
 * and every write asks the transport to hold (LDS_TP_HOLD): the kernel
 * sends from the queue's pages, which are not sealed over until the
 * transport's released upcall gives them back, oldest first.  Clear
 * streams (encryption = "none") write from the send buffer's blocks and
 * the control buffer, which do not wait for the kernel: they copy.
 * 0, or -ENOMEM.
 */
static int stream_bytes_hold(struct stream *s)
{
	if (s->sq_held || s->st != ST_UP || s->ops->send_holds == NULL || !s->ops->send_holds(s->conn))
		return 0;
	if (sealq_fix(&s->sq, stream_sealq_ring(s)) < 0)
		return -ENOMEM;
	s->sq_held = 1;
	return 0;
}

void stream_released(struct lds_tp_conn *c, size_t bytes, void *ud)
{
	struct stream *s = ud;

	sealq_release(&s->sq, bytes);
	stream_flush(s);
	stream_failed(s);
}

/*
 * What to write next on a sealed stream.  A batch of blocks is taken and
 * sealed once the last one and the queue are written (a control frame
 * queued meanwhile waits behind at most that batch: frames go out in the
 * order of their nonces).  Sealed in place, each block's frame is written
 * from the send buffer, then the queue; in a held ring (zero copy) the
 * blocks are sealed into the queue, once they fit behind what the
 * transport still reads.  Returns the iovecs filled, or -errno.
 */
static int stream_iov_sealed(struct stream *s, struct iovec *iov, int *more)
{
	size_t batch = (size_t)s->take * (WIRE_DATA_HDR_LEN + s->block_size + SEAL_OVERHEAD);
	int n;

	if (s->nout == 0 && stream_bytes_hold(s) < 0)
		return -ENOMEM;
	if (s->nout == 0 && sealq_pending(&s->sq) == 0 && (!s->sq_held || sealq_fits(&s->sq, batch))) {
		int full;

		stream_take_blocks(s);
		full = s->nout > 0 && s->nout == s->take;
		if ((s->sq_held ? stream_seal_blocks(s) : stream_seal_in_place(s)) < 0)
			return -EIO;
		s->sq_more = full && sendbuf_has_next(s->sb, 1);
	}
	*more = s->sq_more;
	n = stream_iov_blocks(s, iov, 0);
	if (sealq_pending(&s->sq) > 0) {
		iov[n].iov_base = (void *)sealq_data(&s->sq);
		iov[n++].iov_len = sealq_pending(&s->sq);
	}
	return n;
}

static void stream_bytes_flush(struct stream *s)
{
	if (s->failed || s->stalled)
		return;
	for (int rounds = 0; rounds < 64; rounds++) {
		struct iovec iov[1 + 3 * STREAM_BATCH];
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
		r = s->ops->send(s->conn, iov, n, (more ? LDS_TP_MORE : 0) | (s->sq_held ? LDS_TP_HOLD : 0), &sent);
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
		if (r == 1)
			sealq_take(&s->sq, sent);
		else if (s->aead)
			sealq_sent(&s->sq, stream_wrote_blocks(s, sent));
		else
			stream_wrote_clear(s, sent, ctl_part);
	}
	/* Plenty written this round; let other fds have a turn. */
	s->ops->want_write(s->conn, 1);
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
		end = WIRE_HDR_LEN + (size_t)wire_hdr_payload_len(s->rx) + WIRE_DATA_HDR_LEN;
	if (end > s->rx_cap)
		end = s->rx_cap;
	return end > s->rx_len ? end - s->rx_len : s->rx_cap - s->rx_len;
}

/* The rest of a DATA frame, need bytes, is not all in the conn yet: waits
 * for it (2), so that it comes in one read and one wake instead of one a
 * segment.  Once a frame: woken without all of it (the transport's cap,
 * memory pressure, stream_rx_expire on the link's tick), s reads what
 * is there; and not when the transport cannot wait or most of the frame is
 * there already, where the usual read costs less than one more wake (0). */
static int stream_rx_wait(struct stream *s, size_t need)
{
	if (s->ops->rx_lowat == NULL || s->rx_wait_ns != 0 || s->pending >= need / 2)
		return 0;
	s->rx_wait_ns = clock_now_ns();
	stream_rx_lowat(s, need);
	return 2;
}

/*
 * s->rx starts with a DATA frame, its prefix there and its block not all
 * there yet.  If its block can go straight to where it belongs (the
 * owner's place upcall: into the message being reassembled, or where it
 * is held until the blocks before it arrive), and the rest of the frame
 * is all waiting in the socket, reads it there, with the next frame's
 * prefix into s->rx: a copy of every byte saved.  Whole frames only, so
 * that no message is left half-written while other streams run.  A block
 * ahead of its turn may instead wait in the conn (parked) until the
 * owner releases s.  Returns 1 if it took the frame, 2 if s waits for the
 * frame's rest or its turn, 0 if neither, -1 if it closed s.
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
	if (s->parked != STREAM_READING) {
		/* Released (its turn came, or it waited long enough): read
		 * it now, waiting once more for its rest if need be. */
		s->parked = STREAM_READING;
		s->rx_wait_ns = 0;
	} else if (s->up->wait_turn != NULL && s->up->wait_turn(s, seq)) {
		/* Ahead of its turn, the block would be read into a buffer
		 * and copied to its message later; in the conn it costs no
		 * copy, and the transport's receive window slows the peer
		 * on this stream only. */
		stream_park(s, seq);
		return 2;
	}
	dst = s->up->place(s, seq, len);
	if (dst == NULL)
		return 0;
	if (s->pending < body - have)
		s->pending = s->ops->pending(s->conn);
	if (s->pending < body - have)
		return stream_rx_wait(s, body - have);
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
	s->rx_wait_ns = 0;
	if (sealed ? seal_open(&s->sq.seal.rx, prefix, WIRE_DATA_HDR_LEN, dst, len, tag) < 0
		   : !wire_data_intact(prefix, dst, len)) {
		if (sealed)
			stream_bad_seal(s, STREAM_BAD_TAG, WIRE_DATA);
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

static void stream_bytes_readable(struct stream *s)
{
	for (int reads = 0; reads < READS_PER_EVENT; reads++) {
		size_t got, off = 0, need = WIRE_HDR_LEN;
		struct wire_frame f;
		int r;

		/* A DATA frame whose prefix the last read brought. */
		r = stream_read_direct(s);
		if (r < 0 || r == 2)
			return;
		if (r > 0)
			continue;
		if (stream_rx_reserve(s, s->st == ST_UP ? s->rx_len + 65536 : ADMISSION_RX_MAX) < 0) {
			stream_close(s, "out of memory", 1);
			return;
		}
		stream_rx_lowat(s, 1);
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
			s->rx_wait_ns = 0;
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
	/* Out of turns right after a frame read straight into place: the low
	 * mark raised for that frame's rest must not outlive the wait, or a
	 * shorter frame behind it would never wake us (the mark is only
	 * undone on the tick while a wait is on, stream_rx_expire). */
	if (s->rx_wait_ns == 0)
		stream_rx_lowat(s, 1);
}

/* Held bytes stay until the transport's closed upcall (tcp.c resets
 * such a conn and lets its pages go before it says closed). */
static int stream_bytes_closing(struct stream *s)
{
	return s->sq_held && s->sq.held > 0;
}

static void stream_bytes_free(struct stream *s)
{
	free(s->rx);
}

const struct stream_framer stream_bytes_framer = {
	.flush = stream_bytes_flush,
	.readable = stream_bytes_readable,
	.closing = stream_bytes_closing,
	.free = stream_bytes_free,
};
