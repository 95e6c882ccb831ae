/*
 * check_udp_proto.c - the UDP transport's wire and queues: range sets,
 * ACK frames (build, encode, decode, merge), packets (encode, decode, and
 * every kind of bad one refused), messages cut into stream bytes and put
 * back together whole, in order, once, from packets out of order.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/crc32c.h"
#include "suites.h"
#include "transports/udp/udp.h"
#include "transports/udp/udp_ack.h"
#include "transports/udp/udp_packet.h"
#include "transports/udp/udp_ranges.h"
#include "transports/udp/udp_pmtu.h"
#include "transports/udp/udp_recvq.h"
#include "transports/udp/udp_sendq.h"

START_TEST(test_ranges)
{
	struct idset s;
	uint64_t len;

	udp_ranges_init(&s, 3);
	ck_assert_int_eq(udp_ranges_add(&s, 10, 20), 0);
	ck_assert_int_eq(udp_ranges_add(&s, 30, 40), 0);
	ck_assert_int_eq(udp_ranges_add(&s, 50, 60), 0);
	ck_assert_int_eq(udp_ranges_add(&s, 70, 80), -ENOSPC);   /* a fourth range */
	ck_assert_uint_eq(s.n, 3);
	ck_assert_int_eq(udp_ranges_add(&s, 20, 30), 0);          /* touching both: one range */
	ck_assert_uint_eq(s.n, 2);
	ck_assert_uint_eq(s.r[0].first, 10);
	ck_assert_uint_eq(s.r[0].last, 39);
	ck_assert_int_eq(udp_ranges_add(&s, 5, 65), 0);           /* covering all */
	ck_assert_uint_eq(s.n, 1);
	ck_assert(udp_ranges_contains(&s, 5));
	ck_assert(udp_ranges_contains(&s, 64));
	ck_assert(!udp_ranges_contains(&s, 65));
	ck_assert(!udp_ranges_contains(&s, 4));
	ck_assert_uint_eq(udp_ranges_next_missing(&s, 7, &len), 65);
	ck_assert_uint_eq(udp_ranges_next_missing(&s, 2, &len), 2);
	ck_assert_uint_eq(len, 3);
	ck_assert_uint_eq(udp_ranges_next_missing(&s, 70, &len), 70);
	ck_assert_uint_eq(len, UINT64_MAX - 70);                   /* nothing above */
	udp_ranges_remove_below(&s, 30);
	ck_assert_uint_eq(s.r[0].first, 30);
	udp_ranges_remove_below(&s, 100);
	ck_assert_uint_eq(s.n, 0);
	udp_ranges_free(&s);
	ck_assert_uint_eq(s.max, 3);                               /* still bounded after a free */
}
END_TEST

/* Received packet numbers with holes come back from the wire as the
 * same ranges; what does not fit in the frame is the oldest. */
START_TEST(test_ack_roundtrip)
{
	struct udp_rx rx;
	uint8_t buf[1500];
	struct udp_wr w = { buf, buf + sizeof(buf), 0 };
	struct udp_rd r = { buf, NULL, 0 };
	struct udp_frames f;
	static const uint64_t pns[] = { 0, 1, 2, 5, 6, 9, 100, 101, 102, 103 };

	udp_rx_init(&rx);
	for (size_t i = 0; i < sizeof(pns) / sizeof(pns[0]); i++)
		ck_assert_int_eq(udp_rx_record(&rx, pns[i], 1, 1000), 0);
	ck_assert(rx.now);                                        /* gaps: ack at once */
	ck_assert(udp_rx_seen(&rx, 6));
	ck_assert(!udp_rx_seen(&rx, 7));
	udp_ack_encode(&rx, &w, 3000000);
	ck_assert(!w.full);
	ck_assert_uint_eq(rx.unacked, 0);
	r.end = w.p;
	ck_assert_int_eq(udp_frames_parse(&r, &f), 0);
	ck_assert(f.has_ack);
	ck_assert_uint_eq(f.ack_largest, 103);
	ck_assert_uint_eq(f.ack_delay_us, 2999);
	ck_assert_uint_eq(f.nranges, 4);
	ck_assert_uint_eq(f.ranges[0].lo, 100);
	ck_assert_uint_eq(f.ranges[0].hi, 104);
	ck_assert_uint_eq(f.ranges[1].lo, 9);
	ck_assert_uint_eq(f.ranges[1].hi, 10);
	ck_assert_uint_eq(f.ranges[2].lo, 5);
	ck_assert_uint_eq(f.ranges[2].hi, 7);
	ck_assert_uint_eq(f.ranges[3].lo, 0);
	ck_assert_uint_eq(f.ranges[3].hi, 3);
	/* A frame too small for all ranges keeps the newest. */
	w = (struct udp_wr){ buf, buf + 9, 0 };
	udp_ack_encode(&rx, &w, 3000000);
	r = (struct udp_rd){ buf, w.p, 0 };
	ck_assert_int_eq(udp_frames_parse(&r, &f), 0);
	ck_assert_uint_lt(f.nranges, 4);
	ck_assert_uint_eq(f.ranges[0].lo, 100);
	udp_rx_free(&rx);
}
END_TEST

/* More holes than kept: the oldest are forgotten and count as seen. */
START_TEST(test_ack_forget)
{
	struct udp_rx rx;

	udp_rx_init(&rx);
	for (uint64_t pn = 0; pn < 2 * UDP_RX_RANGES_MAX + 10; pn++)
		ck_assert_int_eq(udp_rx_record(&rx, pn * 2, 1, 0), 0);
	ck_assert_uint_eq(rx.seen.n, UDP_RX_RANGES_MAX);
	ck_assert_uint_gt(rx.floor, 0);
	ck_assert(udp_rx_seen(&rx, 1));                           /* below the floor */
	ck_assert_uint_eq(rx.largest, (2 * UDP_RX_RANGES_MAX + 9) * 2);
	udp_rx_free(&rx);
}
END_TEST

/* ACK frames that lie: ranges below packet 0, too many ranges. */
START_TEST(test_ack_bad)
{
	uint8_t buf[64];
	struct udp_wr w = { buf, buf + sizeof(buf), 0 };
	struct udp_rd r;
	struct udp_frames f;

	udp_wr_varint(&w, UDP_FR_ACK);
	udp_wr_varint(&w, 5);      /* largest */
	udp_wr_varint(&w, 0);
	udp_wr_varint(&w, 0);
	udp_wr_varint(&w, 6);      /* first range longer than 0..5 */
	r = (struct udp_rd){ buf, w.p, 0 };
	ck_assert_int_eq(udp_frames_parse(&r, &f), -1);
	w = (struct udp_wr){ buf, buf + sizeof(buf), 0 };
	udp_wr_varint(&w, UDP_FR_ACK);
	udp_wr_varint(&w, 10);
	udp_wr_varint(&w, 0);
	udp_wr_varint(&w, 1);
	udp_wr_varint(&w, 2);      /* 8..10 */
	udp_wr_varint(&w, 7);      /* gap past 0 */
	udp_wr_varint(&w, 0);
	r = (struct udp_rd){ buf, w.p, 0 };
	ck_assert_int_eq(udp_frames_parse(&r, &f), -1);
	w = (struct udp_wr){ buf, buf + sizeof(buf), 0 };
	udp_wr_varint(&w, UDP_FR_ACK);
	udp_wr_varint(&w, 1000);
	udp_wr_varint(&w, 0);
	udp_wr_varint(&w, UDP_ACK_RANGES_MAX);   /* one range too many */
	r = (struct udp_rd){ buf, w.p, 0 };
	ck_assert_int_eq(udp_frames_parse(&r, &f), -1);
}
END_TEST

START_TEST(test_varint)
{
	static const uint64_t v[] = { 0, 63, 64, 16383, 16384, (1u << 30) - 1, 1u << 30, (1ull << 62) - 1 };
	uint8_t buf[128];
	struct udp_wr w = { buf, buf + sizeof(buf), 0 };
	struct udp_rd r = { buf, NULL, 0 };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		udp_wr_varint(&w, v[i]);
	r.end = w.p;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		ck_assert_uint_eq(udp_rd_varint(&r), v[i]);
	ck_assert(!r.bad);
	ck_assert_uint_eq(udp_rd_varint(&r), 0);
	ck_assert(r.bad);                                         /* past the end */
	w = (struct udp_wr){ buf, buf + 3, 0 };
	udp_wr_varint(&w, 1u << 30);
	ck_assert(w.full);
}
END_TEST

/* Builds a DATA packet with one STREAM frame of len bytes. */
static size_t make_packet(uint8_t *buf, uint64_t pn, uint64_t off, const uint8_t *data, size_t len)
{
	struct udp_hdr h = { .type = UDP_PKT_DATA, .dcid = 7, .scid = 9, .pn = pn };
	struct udp_wr w = { buf + udp_hdr_write(buf, &h), buf + UDP_PKT_MAX, 0 };

	udp_wr_varint(&w, UDP_FR_STREAM);
	udp_wr_varint(&w, off);
	udp_wr_bytes(&w, data, len);
	udp_pkt_seal(buf, (size_t)(w.p - buf) - len);
	return (size_t)(w.p - buf);
}

START_TEST(test_packet)
{
	static uint8_t buf[UDP_PKT_MAX];
	const uint8_t data[5] = "hello";
	size_t n = make_packet(buf, (1ull << 32) + 42, 1000, data, sizeof(data));
	struct udp_hdr h;
	struct udp_rd r;
	struct udp_frames f;

	/* The short header: no source conn id, the packet number's low 32
	 * bits, a STREAM frame without a length (its data ends the packet). */
	ck_assert_uint_eq(n, UDP_DATA_HDR_LEN + 1 + 2 + sizeof(data));
	ck_assert_int_eq(udp_pkt_open(buf, n, &h, &r, &f), 0);
	ck_assert_uint_eq(h.type, UDP_PKT_DATA);
	ck_assert_uint_eq(h.dcid, 7);
	ck_assert_uint_eq(h.scid, 0);
	ck_assert_uint_eq(h.pn, 42);
	ck_assert(f.has_stream);
	ck_assert_uint_eq(f.stream_off, 1000);
	ck_assert_uint_eq(f.stream_len, 5);
	ck_assert_mem_eq(f.stream_data, "hello", 5);
	ck_assert(udp_frames_eliciting(&f));
	/* Every single flipped bit of the header and the frames is caught
	 * (CRC-32C); the STREAM data is not the CRC's: the core checks its
	 * frames (tag or CRC) and the kernel the UDP checksum, and the
	 * sender never reads it. */
	for (size_t i = 0; i < n * 8; i++) {
		buf[i / 8] ^= (uint8_t)(1u << (i % 8));
		ck_assert_int_eq(udp_pkt_open(buf, n, &h, &r, &f), i / 8 < n - sizeof(data) ? -1 : 0);
		buf[i / 8] ^= (uint8_t)(1u << (i % 8));
	}
	/* Short, truncated, too long. */
	ck_assert_int_eq(udp_pkt_open(buf, UDP_DATA_HDR_LEN - 1, &h, &r, &f), -1);
	ck_assert_int_eq(udp_pkt_open(buf, UDP_DATA_HDR_LEN + 2, &h, &r, &f), -1);
	ck_assert_int_eq(udp_pkt_open(buf, UDP_PKT_MAX + 1, &h, &r, &f), -1);
	/* Sealed over the whole packet, as version 1 did: refused. */
	udp_pkt_seal(buf, n);
	ck_assert_int_eq(udp_pkt_open(buf, n, &h, &r, &f), -1);
	/* A long-header type needs the long header's 24 bytes. */
	buf[3] = UDP_PKT_CLOSE;
	udp_pkt_seal(buf, UDP_HDR_LEN - 1);
	ck_assert_int_eq(udp_pkt_open(buf, UDP_HDR_LEN - 1, &h, &r, &f), -1);
	udp_pkt_seal(buf, UDP_HDR_LEN + 1);
	ck_assert_int_eq(udp_pkt_open(buf, UDP_HDR_LEN + 1, &h, &r, &f), 0);
	ck_assert_uint_eq(h.type, UDP_PKT_CLOSE);
	ck_assert_uint_eq(h.pn, 0);
}
END_TEST

/* A DATA packet's number from its low 32 bits: the one nearest the next
 * expected, across the 2^32 boundary either way (RFC 9000, A.3). */
START_TEST(test_pn_decode)
{
	struct udp_rx rx;
	const uint64_t win = 1ull << 32;

	udp_rx_init(&rx);
	ck_assert_uint_eq(udp_rx_pn(&rx, 0), 0);
	ck_assert_uint_eq(udp_rx_pn(&rx, 42), 42);
	ck_assert_int_eq(udp_rx_record(&rx, win - 10, 1, 1), 0);
	ck_assert_uint_eq(udp_rx_pn(&rx, 5), win + 5);               /* past the wrap */
	ck_assert_uint_eq(udp_rx_pn(&rx, 0xfffffff0u), win - 16);    /* a late one */
	ck_assert_int_eq(udp_rx_record(&rx, win + 5, 1, 2), 0);
	ck_assert_uint_eq(udp_rx_pn(&rx, 0xfffffffeu), win - 2);     /* late, behind the wrap */
	ck_assert_uint_eq(udp_rx_pn(&rx, 6), win + 6);
	/* Half a window ahead is still ahead; further is taken as behind. */
	ck_assert_uint_eq(udp_rx_pn(&rx, (uint32_t)(6 + win / 2)), win + 6 + win / 2);
	ck_assert_uint_eq(udp_rx_pn(&rx, (uint32_t)(7 + win / 2)), 7 + win / 2);
	udp_rx_free(&rx);
}
END_TEST

/* Frames that lie about their length, repeat or are unknown: refused
 * even with a good CRC. */
START_TEST(test_frames_bad)
{
	static uint8_t buf[UDP_PKT_MAX];
	const uint8_t data[5] = "hello";
	size_t n = make_packet(buf, 1, 0, data, sizeof(data));
	struct udp_hdr h;
	struct udp_rd r;
	struct udp_frames f;
	uint8_t two[2 * 16];
	struct udp_wr w = { two, two + sizeof(two), 0 };

	/* A STREAM frame without data, or whose offset runs past the end. */
	udp_pkt_seal(buf, UDP_DATA_HDR_LEN + 2);
	ck_assert_int_eq(udp_pkt_open(buf, UDP_DATA_HDR_LEN + 2, &h, &r, &f), -1);
	buf[UDP_DATA_HDR_LEN + 1] = 0xc0;                      /* an 8-byte varint */
	udp_pkt_seal(buf, n);
	ck_assert_int_eq(udp_pkt_open(buf, n, &h, &r, &f), -1);
	/* Unknown frame type. */
	buf[UDP_DATA_HDR_LEN] = 0x3f;
	udp_pkt_seal(buf, n);
	ck_assert_int_eq(udp_pkt_open(buf, n, &h, &r, &f), -1);
	/* Unknown packet type and version, version 2 among them. */
	n = make_packet(buf, 1, 0, data, sizeof(data));
	buf[3] = 9;
	udp_pkt_seal(buf, n - sizeof(data));
	ck_assert_int_eq(udp_pkt_open(buf, n, &h, &r, &f), -1);
	buf[3] = UDP_PKT_DATA;
	for (uint8_t v = 1; v <= UDP_VERSION + 1; v++) {
		buf[2] = v;
		udp_pkt_seal(buf, n - sizeof(data));
		ck_assert_int_eq(udp_pkt_open(buf, n, &h, &r, &f), v == UDP_VERSION ? 0 : -1);
	}
	buf[2] = UDP_VERSION;
	/* What follows a STREAM frame's offset is its data, whatever it
	 * looks like: a PING there is a byte of the stream. */
	buf[n++] = UDP_FR_PING;
	udp_pkt_seal(buf, n - 1 - sizeof(data));
	ck_assert_int_eq(udp_pkt_open(buf, n, &h, &r, &f), 0);
	ck_assert_uint_eq(f.stream_len, sizeof(data) + 1);
	ck_assert(!f.ping);
	/* Two MAX_DATA frames. */
	udp_wr_varint(&w, UDP_FR_MAX_DATA);
	udp_wr_varint(&w, 5);
	udp_wr_varint(&w, UDP_FR_MAX_DATA);
	udp_wr_varint(&w, 6);
	r = (struct udp_rd){ two, w.p, 0 };
	ck_assert_int_eq(udp_frames_parse(&r, &f), -1);
}
END_TEST

/* Small messages: more pieces than a packet points at are refused, and
 * copied instead, whole. */
START_TEST(test_sendq_refs_many)
{
	struct udp_sendq sq;
	static uint8_t m[64][3];
	uint8_t out[64 * 7], want[64 * 7];
	struct iovec piece[UDP_OUT_REFS];
	size_t at = 0;

	udp_sendq_init(&sq);
	for (int i = 0; i < 64; i++) {
		struct iovec iov = { m[i], sizeof(m[i]) };

		memset(m[i], 'a' + i % 26, sizeof(m[i]));
		ck_assert_int_eq(udp_sendq_push(&sq, &iov, 1, sizeof(m[i]), NULL), 0);
		want[at++] = 0;
		want[at++] = 0;
		want[at++] = 0;
		want[at++] = 3;
		memcpy(want + at, m[i], 3);
		at += 3;
	}
	ck_assert_int_eq(udp_sendq_refs(&sq, 0, sizeof(out), piece, UDP_OUT_REFS), -1);
	ck_assert_int_eq(udp_sendq_refs(&sq, 2, 8, piece, UDP_OUT_REFS), 3);  /* prefix tail, body, next prefix */
	ck_assert_ptr_eq(piece[1].iov_base, m[0]);
	udp_sendq_gather(&sq, 0, out, sizeof(out));
	ck_assert_mem_eq(out, want, sizeof(out));
	udp_sendq_gather(&sq, 5, out, 100);
	ck_assert_mem_eq(out, want + 5, 100);
	udp_sendq_free(&sq);
}
END_TEST

/* Messages become stream bytes, cut into packets, delivered out of order
 * and twice, and come back whole, in order, once. */
START_TEST(test_packetize_reassemble)
{
	struct udp_sendq sq;
	struct udp_recvq rq;
	enum { NMSG = 40, CHUNK = 1100 };
	static uint8_t msgs[NMSG][70000];
	size_t lens[NMSG];
	uint32_t crc_sent = 0, crc_got = 0;
	unsigned seed = 7;
	struct { uint64_t off; size_t len; } pk[4096];
	size_t npk = 0, got = 0;
	uint8_t tmp[CHUNK];

	udp_sendq_init(&sq);
	sq.peer_max = UINT64_MAX / 4;
	ck_assert_int_eq(udp_recvq_init(&rq, 1u << 22, 1u << 20), 0);
	for (int i = 0; i < NMSG; i++) {
		struct iovec iov[2];

		lens[i] = 1 + (size_t)rand_r(&seed) % sizeof(msgs[i]);
		for (size_t k = 0; k < lens[i]; k++)
			msgs[i][k] = (uint8_t)rand_r(&seed);
		crc_sent = crc32c(crc_sent, msgs[i], lens[i]);
		/* Two iovecs: the transport gathers across them. */
		iov[0] = (struct iovec){ msgs[i], lens[i] / 2 };
		iov[1] = (struct iovec){ msgs[i] + lens[i] / 2, lens[i] - lens[i] / 2 };
		ck_assert_int_eq(udp_sendq_push(&sq, iov, 2, lens[i], msgs[i]), 0);
	}
	for (;;) {
		uint64_t off;
		size_t len;
		int retx;

		if (!udp_sendq_next(&sq, CHUNK, &off, &len, &retx))
			break;
		ck_assert(!retx);
		udp_sendq_sent(&sq, off, len, retx);
		ck_assert_uint_lt(npk, 4096);
		pk[npk].off = off;
		pk[npk].len = len;
		npk++;
	}
	ck_assert_uint_eq(sq.next, sq.end);
	/* Shuffle, then deliver each packet, some twice. */
	for (size_t i = npk - 1; i > 0; i--) {
		size_t j = (size_t)rand_r(&seed) % (i + 1);
		__typeof__(pk[0]) t = pk[i];

		pk[i] = pk[j];
		pk[j] = t;
	}
	for (size_t i = 0; i < npk; i++) {
		for (int twice = 0; twice < 1 + (i % 5 == 0); twice++) {
			const uint8_t *d;
			size_t dl;
			int r;

			if (i % 2) {
				udp_sendq_gather(&sq, pk[i].off, tmp, pk[i].len);
			} else {
				/* In place: pieces of the messages and their prefixes. */
				struct iovec piece[UDP_OUT_REFS];
				int np = udp_sendq_refs(&sq, pk[i].off, pk[i].len, piece, UDP_OUT_REFS);
				size_t at = 0;

				ck_assert_int_gt(np, 0);
				for (int k = 0; k < np; k++) {
					const uint8_t *b = piece[k].iov_base;

					ck_assert((b >= msgs[0] && b < msgs[NMSG]) || piece[k].iov_len <= 4);
					memcpy(tmp + at, b, piece[k].iov_len);
					at += piece[k].iov_len;
				}
				ck_assert_uint_eq(at, pk[i].len);
			}
			ck_assert_int_eq(udp_recvq_insert(&rq, pk[i].off, tmp, pk[i].len), 0);
			while ((r = udp_recvq_peek(&rq, &d, &dl)) == 1) {
				ck_assert_uint_lt(got, NMSG);
				ck_assert_uint_eq(dl, lens[got]);
				ck_assert_mem_eq(d, msgs[got], dl);
				crc_got = crc32c(crc_got, d, dl);
				got++;
				udp_recvq_done(&rq);
			}
			ck_assert_int_eq(r, 0);
		}
	}
	ck_assert_uint_eq(got, NMSG);
	ck_assert_uint_eq(crc_got, crc_sent);
	ck_assert_uint_gt(rq.dups, 0);
	/* Acknowledged out of order, messages are done in order, and only
	 * when all of their bytes are. */
	for (size_t i = 0; i < npk; i++) {
		void *ctx;

		ck_assert_int_eq(udp_sendq_acked(&sq, pk[i].off, pk[i].len), 0);
		while (udp_sendq_pop_done(&sq, &ctx))
			ck_assert_ptr_eq(ctx, msgs[NMSG - (int)sq.n - 1]);
	}
	ck_assert(udp_sendq_empty(&sq));
	ck_assert_uint_eq(sq.n, 0);
	udp_sendq_free(&sq);
	udp_recvq_free(&rq);
}
END_TEST

/* Lost bytes go again before new ones, less what was acknowledged late. */
START_TEST(test_sendq_retx)
{
	struct udp_sendq sq;
	static uint8_t m[10000];
	struct iovec iov = { m, sizeof(m) };
	uint64_t off;
	size_t len;
	int retx;

	udp_sendq_init(&sq);
	sq.peer_max = 5000;                                       /* the peer's window */
	ck_assert_int_eq(udp_sendq_push(&sq, &iov, 1, sizeof(m), NULL), 0);
	ck_assert(udp_sendq_next(&sq, 100000, &off, &len, &retx));
	ck_assert_uint_eq(len, 5000);                             /* no further than the window */
	udp_sendq_sent(&sq, off, len, retx);
	ck_assert(!udp_sendq_next(&sq, 100000, &off, &len, &retx));
	ck_assert_int_eq(udp_sendq_lost(&sq, 1000, 2000), 0);
	ck_assert_int_eq(udp_sendq_acked(&sq, 1500, 500), 0);     /* a late ACK for part of it */
	ck_assert(udp_sendq_next(&sq, 100000, &off, &len, &retx));
	ck_assert(retx);
	ck_assert_uint_eq(off, 1000);
	ck_assert_uint_eq(len, 500);
	udp_sendq_sent(&sq, off, len, retx);
	ck_assert(udp_sendq_next(&sq, 100000, &off, &len, &retx));
	ck_assert_uint_eq(off, 2000);
	ck_assert_uint_eq(len, 1000);
	udp_sendq_free(&sq);
}
END_TEST

/* A peer that sends past the window, or a length past max_msg, is refused. */
/* A ring grown while it holds data across its end, holes and a message
 * the core holds: every message still comes whole, in order, once, and
 * the whole larger window is granted. */
START_TEST(test_recvq_grow)
{
	struct udp_recvq rq;
	uint8_t stream[40000];
	const uint8_t *d;
	size_t dl, at = 0, got = 0, next = 0;
	unsigned seed = 3;

	/* Messages of 1..2000 bytes as the stream: 4-byte length, bytes. */
	while (at + 4 + 2000 <= sizeof(stream)) {
		size_t n = 1 + (size_t)rand_r(&seed) % 2000;

		stream[at] = 0;
		stream[at + 1] = 0;
		stream[at + 2] = (uint8_t)(n >> 8);
		stream[at + 3] = (uint8_t)n;
		for (size_t k = 0; k < n; k++)
			stream[at + 4 + k] = (uint8_t)(at + k);
		at += 4 + n;
	}
	ck_assert_int_eq(udp_recvq_init(&rq, 5000, 2000), 0);
	for (int step = 0; next < at || udp_recvq_ready(&rq); step++) {
		size_t lim = (size_t)udp_recvq_limit(&rq), end = lim < at ? lim : at;

		ck_assert_int_lt(step, 100000);
		/* The window's second half first (a hole), then the first. */
		if (next < end) {
			size_t mid = next + (end - next) / 2;

			ck_assert_int_eq(udp_recvq_insert(&rq, mid, stream + mid, end - mid), 0);
			if (step == 3)
				ck_assert_int_eq(udp_recvq_grow(&rq, 9000), 0);
			ck_assert_int_eq(udp_recvq_insert(&rq, next, stream + next, mid - next), 0);
			next = end;
		}
		if (udp_recvq_peek(&rq, &d, &dl) == 1) {
			ck_assert_mem_eq(d, stream + got + 4, dl);
			got += 4 + dl;
			/* Grown while the core holds a message: at its done. */
			if (step == 7) {
				ck_assert_int_eq(udp_recvq_grow(&rq, 30000), 0);
				ck_assert_uint_eq(rq.size, 9000);
			}
			udp_recvq_done(&rq);
		}
	}
	ck_assert_uint_eq(got, at);
	ck_assert_uint_eq(rq.size, 30000);
	ck_assert_uint_eq(udp_recvq_limit(&rq), rq.base + 30000);
	udp_recvq_free(&rq);
}
END_TEST

/* Probes on a path that carries at most path bytes, the socket refusing
 * above iface: the size data packets use; the probes it took. */
static unsigned pmtu_run(struct udp_pmtu *m, unsigned path, unsigned iface, uint64_t now, unsigned *probes)
{
	unsigned size, cur = m->cur;

	for (*probes = 0; (size = udp_pmtu_next(m, now)) != 0; (*probes)++) {
		ck_assert_uint_lt(*probes, 64);
		ck_assert_uint_gt(size, cur);
		if (size > iface) {
			cur = udp_pmtu_lost(m, 1);
			continue;
		}
		udp_pmtu_sent(m, size);
		ck_assert_uint_eq(udp_pmtu_next(m, now), 0);      /* one at a time */
		cur = size <= path ? udp_pmtu_acked(m) : udp_pmtu_lost(m, 0);
		ck_assert_uint_le(cur, path);
	}
	return cur;
}

/* The search: the largest size first, then halving to within a step;
 * three losses of a size before it is given up, none after EMSGSIZE. */
START_TEST(test_pmtu_search)
{
	struct udp_pmtu m;
	unsigned probes;

	udp_pmtu_init(&m, 1232, 1472);
	ck_assert_uint_eq(pmtu_run(&m, 1500, 65535, 0, &probes), 1472);
	ck_assert_uint_eq(probes, 1);
	udp_pmtu_init(&m, 1232, 9000);
	ck_assert_uint_eq(pmtu_run(&m, 9000, 65535, 0, &probes), 9000);
	udp_pmtu_init(&m, 1232, 9000);
	ck_assert_uint_ge(pmtu_run(&m, 4000, 65535, 0, &probes), 4000 - UDP_PMTU_STEP);
	ck_assert_uint_le(probes, 40);
	ck_assert_uint_ge(m.lost, UDP_PMTU_TRIES);
	/* Larger than the interface: refused at once, once per size. */
	udp_pmtu_init(&m, 1232, 9000);
	ck_assert_uint_ge(pmtu_run(&m, 65535, 1472, 0, &probes), 1472 - UDP_PMTU_STEP);
	ck_assert_uint_le(m.lost, 10);
	/* Nothing larger carried: the safe size stays. */
	udp_pmtu_init(&m, 1232, 1472);
	ck_assert_uint_eq(pmtu_run(&m, 1240, 65535, 0, &probes), 1232);
	/* No search when the largest is not above the safe size. */
	udp_pmtu_init(&m, 1472, 1232);
	ck_assert_uint_eq(udp_pmtu_next(&m, 0), 0);
	ck_assert_uint_eq(m.cur, 1472);
}
END_TEST

/* A black hole (probe timeouts in a row at the larger size) falls back to
 * the safe size and searches again; a search that ended below the
 * largest size starts again after UDP_PMTU_RAISE_NS. */
START_TEST(test_pmtu_black_hole)
{
	struct udp_pmtu m;
	unsigned probes;

	udp_pmtu_init(&m, 1232, 9000);
	ck_assert_uint_eq(pmtu_run(&m, 9000, 65535, 0, &probes), 9000);
	ck_assert_uint_eq(udp_pmtu_on_pto(&m, UDP_PMTU_PTOS - 1), 9000);
	ck_assert_uint_eq(udp_pmtu_on_pto(&m, UDP_PMTU_PTOS), 1232);
	ck_assert_uint_ge(pmtu_run(&m, 1500, 65535, 1, &probes), 1500 - UDP_PMTU_STEP);
	/* Ended below the largest: quiet until the raise timer. */
	ck_assert_uint_eq(udp_pmtu_next(&m, 2), 0);
	ck_assert_uint_eq(udp_pmtu_next(&m, UDP_PMTU_RAISE_NS), 0);
	ck_assert_uint_eq(udp_pmtu_next(&m, 2 + UDP_PMTU_RAISE_NS), 9000);
	ck_assert_uint_eq(pmtu_run(&m, 9000, 65535, 2 + UDP_PMTU_RAISE_NS, &probes), 9000);
	/* At the safe size a probe timeout is only an outage. */
	udp_pmtu_init(&m, 1232, 1232);
	ck_assert_uint_eq(udp_pmtu_on_pto(&m, 10), 1232);
}
END_TEST

START_TEST(test_recvq_bad)
{
	struct udp_recvq rq;
	const uint8_t *d;
	size_t dl;
	uint8_t hdr[4] = { 0x7f, 0, 0, 0 };

	ck_assert_int_eq(udp_recvq_init(&rq, 4096, 1000), 0);
	ck_assert_int_eq(udp_recvq_insert(&rq, 4000, hdr, 200), -EMSGSIZE);
	ck_assert_int_eq(udp_recvq_insert(&rq, 0, hdr, 4), 0);
	ck_assert_int_eq(udp_recvq_peek(&rq, &d, &dl), -EPROTO);
	udp_recvq_free(&rq);
	ck_assert_int_eq(udp_recvq_init(&rq, 4096, 1000), 0);
	for (uint64_t i = 0; i < 2000; i++) {
		int r = udp_recvq_insert(&rq, 4 + 2 * i, hdr, 1);

		if (r == -ENOSPC)
			break;                                    /* too many holes: dropped, not grown */
		ck_assert_int_eq(r, i < 2046 ? 0 : -EMSGSIZE);
	}
	ck_assert_uint_le(rq.above.n, 1024);
	udp_recvq_free(&rq);
}
END_TEST

/* The timer's interval by the least path: 1 ms until a path is known and
 * under 15 ms, 2 ms up to 100 ms, 4 ms from there; never longer than the
 * pacer's bucket or an ACK may wait. */
START_TEST(test_tick_ms)
{
	ck_assert_uint_eq(udp_tick_ms(0), UDP_TICK_MS);
	ck_assert_uint_eq(udp_tick_ms(UDP_TICK_LONG_MIN_RTT_NS - 1), UDP_TICK_MS);
	ck_assert_uint_eq(udp_tick_ms(UDP_TICK_LONG_MIN_RTT_NS), UDP_TICK_LONG_MS);
	ck_assert_uint_eq(udp_tick_ms(UDP_TICK_LONGER_MIN_RTT_NS - 1), UDP_TICK_LONG_MS);
	ck_assert_uint_eq(udp_tick_ms(UDP_TICK_LONGER_MIN_RTT_NS), UDP_TICK_LONGER_MS);
	ck_assert_uint_eq(udp_tick_ms(UINT64_MAX), UDP_TICK_LONGER_MS);
	ck_assert_uint_le(UDP_TICK_LONGER_MS * 1000000ull, UDP_PACER_BURST_NS);
	ck_assert_uint_le(UDP_TICK_LONGER_MS * 1000000ull, UDP_MAX_ACK_DELAY_NS);
}
END_TEST

Suite *make_udp_proto_suite(void)
{
	Suite *s = suite_create("udp_proto");
	TCase *tc = tcase_create("udp_proto");

	tcase_add_test(tc, test_ranges);
	tcase_add_test(tc, test_ack_roundtrip);
	tcase_add_test(tc, test_ack_forget);
	tcase_add_test(tc, test_ack_bad);
	tcase_add_test(tc, test_varint);
	tcase_add_test(tc, test_packet);
	tcase_add_test(tc, test_pn_decode);
	tcase_add_test(tc, test_sendq_refs_many);
	tcase_add_test(tc, test_frames_bad);
	tcase_add_test(tc, test_packetize_reassemble);
	tcase_add_test(tc, test_sendq_retx);
	tcase_add_test(tc, test_recvq_grow);
	tcase_add_test(tc, test_pmtu_search);
	tcase_add_test(tc, test_pmtu_black_hole);
	tcase_add_test(tc, test_recvq_bad);
	tcase_add_test(tc, test_tick_ms);
	suite_add_tcase(s, tc);
	return s;
}
