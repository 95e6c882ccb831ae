/*
 * check_rdma_wspace.c - the write rings of the RDMA transport
 * (transports/rdma/rdx_wspace.c): how a frame is sent by size (inline,
 * one send, chunks, RDMA write with immediate data); the writer placing
 * frames in the peer's ring under its grant and the receiver finding each
 * where the rule puts it, around the ring and across the 2^32 wrap of the
 * counts; space granted again only once the core is done, so a stopped
 * reader stops its writer; every bad write refused.  Then two simulated
 * conns (credits, write rings and receive queues of both sides, messages
 * crossing in flight) carry frames of every size both ways, byte for
 * byte, without deadlock, a slow reader included.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "transports/rdma/rdx_credit.h"
#include "transports/rdma/rdx_proto.h"
#include "transports/rdma/rdx_recvq.h"
#include "transports/rdma/rdx_wspace.h"

#define RING RP_MIN_RING            /* 64 KiB: frames up to 8 KiB by write */
#define MAXW (RING / RP_WRITE_FRAC)

static uint8_t ring[RING];

/* w writes into r's ring of RING bytes. */
static void pair(struct rdx_wspace *w, struct rdx_wspace *r)
{
	memset(w, 0, sizeof(*w));
	memset(r, 0, sizeof(*r));
	rdx_wspace_init(w, NULL, 0, 2048);
	rdx_wspace_init(r, ring, RING, 2048);
	rdx_wspace_peer(w, 0x10000, 77, RING);
}

/* The choice by size: inline up to the inline limit (header included),
 * write above the threshold when from registered memory and at most an
 * eighth of the peer's ring, else one send when it fits a chunk, chunks. */
START_TEST(test_way)
{
	struct rdx_wspace w, r;
	const size_t chunk = 4084, inl = 64;

	pair(&w, &r);
	ck_assert_int_eq(rdx_wspace_way(&w, 0, 0, chunk, inl), RDX_WAY_INLINE);    /* a credit message */
	ck_assert_int_eq(rdx_wspace_way(&w, 52, 1, chunk, inl), RDX_WAY_INLINE);
	ck_assert_int_eq(rdx_wspace_way(&w, 53, 1, chunk, inl), RDX_WAY_SEND);
	ck_assert_int_eq(rdx_wspace_way(&w, 2048, 1, chunk, inl), RDX_WAY_SEND);   /* not above the threshold */
	ck_assert_int_eq(rdx_wspace_way(&w, 2049, 1, chunk, inl), RDX_WAY_WRITE);
	ck_assert_int_eq(rdx_wspace_way(&w, 2049, 0, chunk, inl), RDX_WAY_SEND);   /* unregistered: copied */
	ck_assert_int_eq(rdx_wspace_way(&w, MAXW, 1, chunk, inl), RDX_WAY_WRITE);
	ck_assert_int_eq(rdx_wspace_way(&w, MAXW, 0, chunk, inl), RDX_WAY_CHUNKS);
	ck_assert_int_eq(rdx_wspace_way(&w, MAXW + 1, 1, chunk, inl), RDX_WAY_CHUNKS);  /* over an eighth */
	ck_assert_int_eq(rdx_wspace_way(&w, 0, 0, chunk, 0), RDX_WAY_SEND);        /* no inline at all */
	rdx_wspace_peer(&w, 0, 0, 0);                                               /* the peer has no ring */
	ck_assert_int_eq(rdx_wspace_way(&w, 3000, 1, chunk, inl), RDX_WAY_SEND);
	ck_assert_int_eq(rdx_wspace_way(&w, 5000, 1, chunk, inl), RDX_WAY_CHUNKS);
}
END_TEST

/* Writes a frame of len bytes (value v) from w into r as the verbs glue
 * and the adapter would: 0, or what placing or arriving says. */
static int write_frame(struct rdx_wspace *w, struct rdx_wspace *r, size_t len, uint8_t v, uint8_t **at,
		       uint32_t *span)
{
	struct rdx_wplace p;
	int rc = rdx_wspace_place(w, len, &p);

	if (rc < 0)
		return rc;
	ck_assert_uint_eq(p.off % RP_WRITE_ALIGN, 0);
	ck_assert_uint_le(p.off + len, RING);           /* never past the ring */
	memset(ring + p.off, v, len);
	rdx_wspace_wrote(w, &p);
	rc = rdx_wspace_arrived(r, p.off, len, at, span);
	if (rc == 0) {
		ck_assert_ptr_eq(*at, ring + p.off);
		ck_assert_uint_eq(*span, p.span);
	}
	return rc;
}

/* Grants heard by the writer, as a credit-only message carries them. */
static void tell(struct rdx_wspace *w, struct rdx_wspace *r)
{
	ck_assert_int_eq(rdx_wspace_heard(w, rdx_wspace_tell(r)), 0);
}

/* Grant, consume, wrap: frames go one after the other, a frame that does
 * not fit before the end goes to the start, the ring fills exactly to
 * the grant, and space comes back only as the core is done and the grant
 * is told. */
START_TEST(test_grant_consume_wrap)
{
	struct rdx_wspace w, r;
	uint8_t *at;
	uint32_t span, spans[16];
	int n = 0;

	pair(&w, &r);
	/* 7 frames of 8000 bytes (8192 each) and one of 5000 fill 62 KiB. */
	for (n = 0; n < 7; n++)
		ck_assert_int_eq(write_frame(&w, &r, 8000, (uint8_t)n, &at, &spans[n]), 0);
	ck_assert_int_eq(write_frame(&w, &r, 5000, 7, &at, &spans[n++]), 0);
	ck_assert_ptr_eq(at, ring + 7 * 8192);
	/* 3 KiB left before the end: a 4000-byte frame wraps to the start,
	 * padding included, and the grant does not cover it. */
	ck_assert_int_eq(write_frame(&w, &r, 4000, 9, &at, &span), -EAGAIN);
	ck_assert(!rdx_wspace_update_due(&r));
	/* The core is done with one frame: not yet a quarter, nothing told. */
	rdx_wspace_consumed(&r, spans[0]);
	ck_assert(!rdx_wspace_update_due(&r));
	rdx_wspace_consumed(&r, spans[1]);
	ck_assert(rdx_wspace_update_due(&r));
	ck_assert_int_eq(write_frame(&w, &r, 4000, 9, &at, &span), -EAGAIN);   /* not told yet */
	tell(&w, &r);
	ck_assert(!rdx_wspace_update_due(&r));
	ck_assert_int_eq(write_frame(&w, &r, 4000, 9, &at, &span), 0);
	ck_assert_ptr_eq(at, ring);                           /* wrapped */
	ck_assert_uint_eq(span, (RING - (7 * 8192 + 5120)) + 4096);
	ck_assert_uint_eq(ring[0], 9);
	ck_assert_uint_eq(ring[8192], 1);                     /* the second frame, not yet overwritten */
}
END_TEST

/* Frames of every size, the reader done with each at once, across the
 * 2^32 wrap of the counts: every frame lands where the rule says, inside
 * the ring, and the writer never waits for long. */
START_TEST(test_long_run)
{
	struct rdx_wspace w, r;
	unsigned seed = 7;
	uint64_t bytes = 0;

	pair(&w, &r);
	/* Start just below the wrap of the 32-bit counts. */
	w.out.written = w.out.limit = r.in.written = r.in.limit = r.grant = 0xffff0000u;
	w.out.limit += RING;
	r.in.limit += RING;
	r.grant += RING;
	for (int i = 0; i < 20000; i++) {
		size_t len = RP_MIN_WRITE + (size_t)rand_r(&seed) % (MAXW - RP_MIN_WRITE + 1);
		uint8_t *at;
		uint32_t span;
		int rc = write_frame(&w, &r, len, (uint8_t)i, &at, &span);

		if (rc == -EAGAIN) {
			tell(&w, &r);
			rc = write_frame(&w, &r, len, (uint8_t)i, &at, &span);
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_eq(at[0], (uint8_t)i);
		ck_assert_uint_eq(at[len - 1], (uint8_t)i);
		rdx_wspace_consumed(&r, span);
		if (rdx_wspace_update_due(&r))
			tell(&w, &r);
		bytes += span;
	}
	ck_assert_uint_gt(bytes, 1ull << 32 >> 16);
	ck_assert_uint_lt(r.in.written, 0xffff0000u);         /* the counts wrapped */
}
END_TEST

/* A reader that stops reading stops its writer: with nothing consumed no
 * grant is due, whatever else happens; the writer resumes once the core
 * is done and the grant told. */
START_TEST(test_stopped_reader)
{
	struct rdx_wspace w, r;
	uint32_t spans[64];
	uint8_t *at;
	int n = 0, rc;

	pair(&w, &r);
	while ((rc = write_frame(&w, &r, 3000, 1, &at, &spans[n])) == 0)
		n++;
	ck_assert_int_eq(rc, -EAGAIN);
	ck_assert_int_eq(n, RING / 3072);
	for (int k = 0; k < 100; k++) {
		ck_assert(!rdx_wspace_update_due(&r));
		tell(&w, &r);   /* a credit message for other reasons changes nothing */
		ck_assert_int_eq(write_frame(&w, &r, 3000, 1, &at, &spans[n]), -EAGAIN);
	}
	for (int k = 0; k < n; k++)
		rdx_wspace_consumed(&r, spans[k]);
	ck_assert(rdx_wspace_update_due(&r));
	tell(&w, &r);
	ck_assert_int_eq(write_frame(&w, &r, 3000, 1, &at, &spans[0]), 0);
}
END_TEST

/* Every bad write ends the conn: no ring, a length out of range, an
 * offset not where the rule puts the frame (past the ring too), space
 * not granted; a grant that goes back or covers more than the ring. */
START_TEST(test_bad_writes)
{
	struct rdx_wspace w, r, none;
	uint8_t *at = NULL;
	uint32_t span, next;

	pair(&w, &r);
	rdx_wspace_init(&none, NULL, 0, 2048);
	ck_assert_int_eq(rdx_wspace_arrived(&none, 0, 4096, &at, &span), -EPROTO);
	ck_assert_int_eq(rdx_wspace_arrived(&r, 0, RP_MIN_WRITE - 1, &at, &span), -EPROTO);
	ck_assert_int_eq(rdx_wspace_arrived(&r, 0, 0, &at, &span), -EPROTO);
	ck_assert_int_eq(rdx_wspace_arrived(&r, 0, MAXW + 1, &at, &span), -EPROTO);
	ck_assert_int_eq(rdx_wspace_arrived(&r, RP_WRITE_ALIGN, 4096, &at, &span), -EPROTO);   /* not the next place */
	ck_assert_int_eq(rdx_wspace_arrived(&r, 0xffffu * RP_WRITE_ALIGN, 4096, &at, &span), -EPROTO);  /* past the ring */
	ck_assert_ptr_null(at);
	ck_assert_uint_eq(r.in.written, 0);                  /* refusals change nothing */
	/* Fill the grant, then one more frame at the right place: refused. */
	for (next = 0; next + MAXW <= RING; next += MAXW)
		ck_assert_int_eq(rdx_wspace_arrived(&r, next, MAXW, &at, &span), 0);
	ck_assert_int_eq(rdx_wspace_arrived(&r, 0, MAXW, &at, &span), -EPROTO);
	rdx_wspace_consumed(&r, MAXW);
	ck_assert_int_eq(rdx_wspace_arrived(&r, 0, MAXW, &at, &span), -EPROTO);   /* consumed, but not told */
	(void)rdx_wspace_tell(&r);
	ck_assert_int_eq(rdx_wspace_arrived(&r, 0, MAXW, &at, &span), 0);
	/* Grants: forward within the ring is fine; back, or more than the
	 * ring beyond what was written, is a lie. */
	ck_assert_int_eq(rdx_wspace_heard(&w, RING), 0);        /* the same again */
	ck_assert_int_eq(rdx_wspace_heard(&w, RING - 1), -EPROTO);
	ck_assert_int_eq(rdx_wspace_heard(&w, RING + 1), -EPROTO);   /* nothing written: the ring is all */
	ck_assert_int_eq(rdx_wspace_heard(&none, 1), -EPROTO);   /* no ring: only 0 */
	ck_assert_int_eq(rdx_wspace_heard(&none, 0), 0);
}
END_TEST

/* ---- two simulated conns ------------------------------------------------ */

#define DEPTH 8
#define BUF 2048
#define CHUNK (BUF - RP_HDR_LEN)
#define FIFO 64
#define SIM_FRAMES 3000

/* What travels from one side to the other, in order (an RC queue pair). */
struct wire_msg {
	int write;             /* an RDMA write with immediate data; else a send */
	uint32_t imm;
	size_t len;            /* a write's bytes; a send's, header included */
	uint8_t bytes[BUF];    /* a send's message */
};

struct side {
	struct rdx_credit cr;
	struct rdx_wspace ws;
	struct rdx_recvq rq;
	uint8_t ring[RING];
	uint8_t rx[DEPTH][BUF];
	int rx_posted[DEPTH];
	struct wire_msg fifo[FIFO];    /* sent to the other side, not yet arrived */
	unsigned fh, fn;
	unsigned sent, got;            /* frames */
	size_t next_len;               /* the frame being sent; 0: pick one */
	unsigned writes, credit_msgs;
};

static size_t frame_len(unsigned i)
{
	/* Every way: tiny, one send, above the threshold (writes). */
	static const size_t lens[] = { 1, 40, 300, CHUNK, 2049, 3000, MAXW - 1, MAXW, 5000, 1024 };

	return lens[(i * 7 + i / 10) % (sizeof(lens) / sizeof(lens[0]))];
}

static uint8_t frame_byte(unsigned i, size_t k)
{
	return (uint8_t)(i * 31 + k * 7);
}

/* Byte for byte (one assertion: Check's cost per assertion). */
static int frame_ok(unsigned i, const uint8_t *d, size_t len)
{
	for (size_t k = 0; k < len; k++)
		if (d[k] != frame_byte(i, k))
			return 0;
	return 1;
}

static struct wire_msg *fifo_push(struct side *s)
{
	return &s->fifo[(s->fh + s->fn++) % FIFO];
}

/* One step of the sender's pump: the frame being sent if credits and
 * space allow, else a credit-only message if due.  1 if it sent. */
static int sim_send(struct side *s, struct side *peer)
{
	struct rp_hdr h = { 0 };
	struct rdx_wplace p;
	struct wire_msg *m;
	size_t len;

	if (s->fn == FIFO)
		return 0;
	if (s->sent < SIM_FRAMES) {
		len = frame_len(s->sent);
		if (rdx_wspace_way(&s->ws, len, 1, CHUNK, 64) == RDX_WAY_WRITE) {
			if (rdx_wspace_place(&s->ws, len, &p) == 0 && rdx_credit_take(&s->cr, 1, &h.credits) == 0) {
				for (size_t k = 0; k < len; k++)   /* the adapter's write */
					peer->ring[p.off + k] = frame_byte(s->sent, k);
				rdx_wspace_wrote(&s->ws, &p);
				m = fifo_push(s);
				*m = (struct wire_msg){ .write = 1, .imm = rp_imm_encode(h.credits, p.off), .len = len };
				s->sent++;
				s->writes++;
				return 1;
			}
		} else if (rdx_credit_take(&s->cr, 1, &h.credits) == 0) {
			ck_assert_uint_le(len, CHUNK);
			h.type = RP_DATA;
			h.flags = RP_F_FIRST | RP_F_LAST;
			h.len = h.total = (uint32_t)len;
			m = fifo_push(s);
			m->write = 0;
			m->len = RP_HDR_LEN + len;
			rp_hdr_encode(&h, m->bytes);
			for (size_t k = 0; k < len; k++)
				m->bytes[RP_HDR_LEN + k] = frame_byte(s->sent, k);
			s->sent++;
			return 1;
		}
	}
	if ((rdx_credit_update_due(&s->cr) || rdx_wspace_update_due(&s->ws)) &&
	    rdx_credit_take(&s->cr, 0, &h.credits) == 0) {
		h.type = RP_CREDIT;
		h.total = rdx_wspace_tell(&s->ws);
		m = fifo_push(s);
		m->write = 0;
		m->len = RP_HDR_LEN;
		rp_hdr_encode(&h, m->bytes);
		s->credit_msgs++;
		return 1;
	}
	return 0;
}

/* The oldest message from `from` arrives at `to`, in a posted buffer. */
static void sim_arrive(struct side *from, struct side *to)
{
	struct wire_msg *m = &from->fifo[from->fh];
	int repost = 1, i = 0;

	if (from->fn == 0)
		return;
	while (i < DEPTH && !to->rx_posted[i])
		i++;
	ck_assert_msg(i < DEPTH, "a message with no receive buffer posted: credits broken");
	to->rx_posted[i] = 0;
	if (m->write) {
		ck_assert_int_eq(rdx_recvq_written(&to->rq, &to->cr, m->imm, m->len), 0);
	} else {
		memcpy(to->rx[i], m->bytes, m->len);
		ck_assert_int_eq(rdx_recvq_arrived(&to->rq, &to->cr, (uint32_t)i, to->rx[i], m->len, &repost), 0);
	}
	if (repost)
		to->rx_posted[i] = 1;
	from->fh = (from->fh + 1) % FIFO;
	from->fn--;
}

/* The core reads one frame, checks it byte for byte and is done with it. */
static void sim_read(struct side *s)
{
	const uint8_t *d;
	size_t len;
	int64_t buf;

	if (rdx_recvq_peek(&s->rq, &d, &len) < 0)
		return;
	ck_assert_uint_eq(len, frame_len(s->got));
	ck_assert_msg(frame_ok(s->got, d, len), "frame %u corrupted", s->got);
	s->got++;
	ck_assert_int_eq(rdx_recvq_done(&s->rq, &s->cr, &buf), 0);
	if (buf >= 0)
		s->rx_posted[buf] = 1;
}

static void side_init(struct side *s)
{
	memset(s, 0, sizeof(*s));
	rdx_credit_init(&s->cr, DEPTH, DEPTH);
	rdx_wspace_init(&s->ws, s->ring, RING, 2048);
	rdx_wspace_peer(&s->ws, 0x1000, 1, RING);
	ck_assert_int_eq(rdx_recvq_init(&s->rq, DEPTH, 1u << 20), 0);
	ck_assert_int_eq(rdx_recvq_writes(&s->rq, &s->ws), 0);
	for (int i = 0; i < DEPTH; i++)
		s->rx_posted[i] = 1;
}

/* Both sides send SIM_FRAMES frames; a reader reads one in `slow`
 * rounds.  Every frame arrives once, in order, byte for byte; nothing
 * deadlocks; credit-only messages stay a small share. */
static void simulate(unsigned slow, unsigned seed)
{
	static struct side a, b;
	long steps = 0;

	side_init(&a);
	side_init(&b);
	while (a.got < SIM_FRAMES || b.got < SIM_FRAMES) {
		ck_assert_msg(++steps < 5000000, "deadlock: a sent %u got %u, b sent %u got %u", a.sent, a.got,
			      b.sent, b.got);
		switch (rand_r(&seed) % 6) {
		case 0: sim_send(&a, &b); break;
		case 1: sim_send(&b, &a); break;
		case 2: sim_arrive(&a, &b); break;
		case 3: sim_arrive(&b, &a); break;
		case 4: if (rand_r(&seed) % slow == 0) sim_read(&a); break;
		default: if (rand_r(&seed) % slow == 0) sim_read(&b); break;
		}
	}
	ck_assert_uint_gt(a.writes, SIM_FRAMES / 4);
	ck_assert_uint_lt(a.credit_msgs + b.credit_msgs, SIM_FRAMES);
	rdx_recvq_fini(&a.rq);
	rdx_recvq_fini(&b.rq);
}

START_TEST(test_simulated_conns)
{
	simulate(1, 1);
	simulate(1, 2);
	simulate(20, 3);   /* slow readers */
	simulate(3, 4);
}
END_TEST

Suite *make_rdma_wspace_suite(void)
{
	Suite *s = suite_create("rdma_wspace");
	TCase *tc = tcase_create("wspace");

	tcase_add_test(tc, test_way);
	tcase_add_test(tc, test_grant_consume_wrap);
	tcase_add_test(tc, test_long_run);
	tcase_add_test(tc, test_stopped_reader);
	tcase_add_test(tc, test_bad_writes);
	tcase_add_test(tc, test_simulated_conns);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}
