/*
 * fuzz_udp_packet.c - libFuzzer target for the UDP transport's packets
 * (transports/udp/udp_packet.c, udp_ack.c) and what a conn does with
 * their frames: received packet numbers, reassembly into messages, ACK
 * ranges applied to packets in flight and to the send queue.
 *
 * Each input is tried as it came (the CRC almost always refuses it) and
 * with its CRC made right, so that the frame parsers see it.  Besides "no
 * crash, no out-of-bounds read": ACK ranges are descending and disjoint,
 * bytes in flight never go below 0, a message handed up is never longer
 * than the largest allowed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/udp/udp_ack.h"
#include "transports/udp/udp_packet.h"
#include "transports/udp/udp_recovery.h"
#include "transports/udp/udp_recvq.h"
#include "transports/udp/udp_sendq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static void frames_apply(const struct udp_hdr *h, const struct udp_frames *fp)
{
	struct udp_frames f = *fp;
	struct udp_rx rx;
	struct udp_recvq rq;
	struct udp_recovery rec;
	struct udp_sendq sq;
	struct udp_rec_cb cb = { NULL, NULL, NULL };
	static uint8_t msg[20000];
	struct iovec iov = { msg, sizeof(msg) };
	const uint8_t *d;
	size_t dl;
	uint64_t before;

	for (size_t i = 0; i < f.nranges; i++) {
		CHECK(f.ranges[i].lo < f.ranges[i].hi);
		CHECK(i == 0 || f.ranges[i].hi < f.ranges[i - 1].lo);
	}
	udp_rx_init(&rx);
	CHECK(udp_rx_record(&rx, h->pn, udp_frames_eliciting(&f), 1) == 0);
	CHECK(udp_rx_seen(&rx, h->pn));
	udp_rx_free(&rx);
	CHECK(udp_recvq_init(&rq, 1u << 16, 1u << 15) == 0);
	if (f.has_stream && udp_recvq_insert(&rq, f.stream_off, f.stream_data, f.stream_len) == 0)
		while (udp_recvq_peek(&rq, &d, &dl) == 1) {
			CHECK(dl <= (1u << 15));
			udp_recvq_done(&rq);
		}
	udp_recvq_free(&rq);
	if (!f.has_ack)
		return;
	/* 40 packets in flight, 500 stream bytes each, acknowledged as the frame says. */
	CHECK(udp_rec_init(&rec, 0) == 0);
	udp_sendq_init(&sq);
	CHECK(udp_sendq_push(&sq, &iov, 1, sizeof(msg), NULL) == 0);
	for (int i = 0; i < 40; i++) {
		uint64_t pn;
		struct udp_sent *p = udp_rec_next(&rec, &pn);

		CHECK(p != NULL);
		p->time_ns = (uint64_t)i * 1000;
		p->off = pn * 500;
		p->len = 500;
		p->size = 532;
		p->flags = UDP_SENT_ELICITING | UDP_SENT_INFLIGHT;
		udp_rec_commit(&rec, p);
	}
	before = rec.in_flight;
	udp_rec_on_ack(&rec, &f, 1000000, &cb);
	CHECK(rec.in_flight <= before);
	for (size_t i = 0; i < f.nranges; i++)
		if (f.ranges[i].lo < 40)
			(void)udp_sendq_acked(&sq, f.ranges[i].lo * 500,
					      (size_t)((f.ranges[i].hi < 40 ? f.ranges[i].hi : 40) - f.ranges[i].lo) * 500);
	CHECK(sq.acked <= sq.end);
	udp_sendq_free(&sq);
	udp_rec_free(&rec);
}

/* A packet that opened: DATA and ACCEPT come with their frames; the
 * others' payloads are tried as frames too. */
static void try_packet(const struct udp_hdr *h, struct udp_rd *r, struct udp_frames *f)
{
	if (h->type != UDP_PKT_DATA && h->type != UDP_PKT_ACCEPT && udp_frames_parse(r, f) < 0)
		return;
	frames_apply(h, f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	struct udp_hdr h;
	struct udp_rd r;
	struct udp_frames f;

	CHECK(buf != NULL);
	memcpy(buf, data, size);
	if (udp_pkt_open(buf, size, &h, &r, &f) == 0)
		try_packet(&h, &r, &f);
	if (size >= 4 && size >= udp_hdr_len(buf[3]) && size <= UDP_PKT_MAX) {
		/* The CRC leaves a DATA packet's STREAM data out: where it
		 * begins is the frames' to say. */
		struct udp_rd fr = { buf + udp_hdr_len(buf[3]), buf + size, 0 };
		size_t covered = size;

		if (buf[3] == UDP_PKT_DATA && udp_frames_parse(&fr, &f) == 0 && f.has_stream)
			covered -= f.stream_len;
		udp_pkt_seal(buf, covered);
		if (udp_pkt_open(buf, size, &h, &r, &f) == 0)
			try_packet(&h, &r, &f);
	}
	free(buf);
	return 0;
}
