/* udp_packet.c - packet header, integers and frames; see udp_packet.h. */
#include <string.h>

#include "ldsd/crc32c.h"
#include "udp_packet.h"

static uint64_t rd_be(struct udp_rd *r, size_t n)
{
	uint64_t v = 0;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v = v << 8 | r->p[i];
	r->p += n;
	return v;
}

uint64_t udp_rd_u8(struct udp_rd *r) { return rd_be(r, 1); }
uint64_t udp_rd_u16be(struct udp_rd *r) { return rd_be(r, 2); }
uint64_t udp_rd_u32be(struct udp_rd *r) { return rd_be(r, 4); }
uint64_t udp_rd_u64be(struct udp_rd *r) { return rd_be(r, 8); }

uint64_t udp_rd_varint(struct udp_rd *r)
{
	size_t n;
	uint64_t v;

	if (r->bad || r->p == r->end) {
		r->bad = 1;
		return 0;
	}
	n = (size_t)1 << (r->p[0] >> 6);
	v = rd_be(r, n);
	return v & (UINT64_MAX >> (64 - 8 * n + 2));
}

const uint8_t *udp_rd_bytes(struct udp_rd *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return NULL;
	}
	r->p += n;
	return p;
}

static void wr_be(struct udp_wr *w, uint64_t v, size_t n)
{
	if (w->full || (size_t)(w->end - w->p) < n) {
		w->full = 1;
		return;
	}
	for (size_t i = n; i-- > 0; v >>= 8)
		w->p[i] = (uint8_t)v;
	w->p += n;
}

void udp_wr_u8(struct udp_wr *w, uint64_t v) { wr_be(w, v, 1); }
void udp_wr_u16be(struct udp_wr *w, uint64_t v) { wr_be(w, v, 2); }
void udp_wr_u32be(struct udp_wr *w, uint64_t v) { wr_be(w, v, 4); }
void udp_wr_u64be(struct udp_wr *w, uint64_t v) { wr_be(w, v, 8); }

size_t udp_varint_len(uint64_t v)
{
	return v < 64 ? 1 : v < 16384 ? 2 : v < (1u << 30) ? 4 : 8;
}

void udp_wr_varint(struct udp_wr *w, uint64_t v)
{
	size_t n = udp_varint_len(v);
	static const uint64_t tag[9] = { [1] = 0, [2] = 1, [4] = 2, [8] = 3 };

	wr_be(w, v | tag[n] << (8 * n - 2), n);
}

void udp_wr_bytes(struct udp_wr *w, const void *b, size_t n)
{
	if (w->full || (size_t)(w->end - w->p) < n) {
		w->full = 1;
		return;
	}
	memcpy(w->p, b, n);
	w->p += n;
}

size_t udp_hdr_len(uint8_t type)
{
	return type == UDP_PKT_DATA ? UDP_DATA_HDR_LEN : UDP_HDR_LEN;
}

size_t udp_hdr_write(uint8_t *buf, const struct udp_hdr *h)
{
	struct udp_wr w = { buf, buf + UDP_HDR_LEN, 0 };

	udp_wr_u16be(&w, UDP_MAGIC);
	udp_wr_u8(&w, UDP_VERSION);
	udp_wr_u8(&w, h->type);
	udp_wr_u32be(&w, 0);
	udp_wr_u64be(&w, h->dcid);
	if (h->type == UDP_PKT_DATA)
		udp_wr_u32be(&w, h->pn & 0xffffffffu);
	else
		udp_wr_u64be(&w, h->scid);
	return (size_t)(w.p - buf);
}

#define CRC_OFF 4

/* The CRC over the packet's first covered bytes, its own field as zero. */
static uint32_t pkt_crc(const uint8_t *buf, size_t covered)
{
	static const uint8_t zero[4];
	uint32_t crc = crc32c(0, buf, CRC_OFF);

	crc = crc32c(crc, zero, sizeof(zero));
	return crc32c(crc, buf + CRC_OFF + 4, covered - CRC_OFF - 4);
}

void udp_pkt_seal(uint8_t *buf, size_t covered)
{
	uint32_t crc = pkt_crc(buf, covered);

	buf[CRC_OFF] = (uint8_t)(crc >> 24);
	buf[CRC_OFF + 1] = (uint8_t)(crc >> 16);
	buf[CRC_OFF + 2] = (uint8_t)(crc >> 8);
	buf[CRC_OFF + 3] = (uint8_t)crc;
}

int udp_pkt_open(const uint8_t *buf, size_t len, struct udp_hdr *h, struct udp_rd *payload, struct udp_frames *f)
{
	struct udp_rd r = { buf, buf + len, 0 };
	size_t covered = len;
	uint32_t want;

	if (len < UDP_DATA_HDR_LEN || len > UDP_PKT_MAX)
		return -1;
	if (udp_rd_u16be(&r) != UDP_MAGIC || udp_rd_u8(&r) != UDP_VERSION)
		return -1;
	h->type = (uint8_t)udp_rd_u8(&r);
	if (h->type < UDP_PKT_INIT || h->type > UDP_PKT_CLOSE || len < udp_hdr_len(h->type))
		return -1;
	want = (uint32_t)udp_rd_u32be(&r);
	h->dcid = udp_rd_u64be(&r);
	h->scid = 0;
	h->pn = 0;
	if (h->type == UDP_PKT_DATA)
		h->pn = udp_rd_u32be(&r);
	else
		h->scid = udp_rd_u64be(&r);
	*payload = r;
	/* Parsed before the CRC is known good: the parser is bounds-checked
	 * and changes nothing, and it says where a DATA packet's STREAM data,
	 * which the CRC leaves out, begins. */
	if (h->type == UDP_PKT_DATA || h->type == UDP_PKT_ACCEPT) {
		if (udp_frames_parse(payload, f) < 0)
			return -1;
		if (h->type == UDP_PKT_DATA && f->has_stream)
			covered = len - f->stream_len;
	}
	return pkt_crc(buf, covered) == want ? 0 : -1;
}

/* An ACK frame's fields after its type into f; -1 if malformed (ranges
 * going below packet 0, more than f holds). */
static int ack_decode(struct udp_rd *r, struct udp_frames *f)
{
	uint64_t largest = udp_rd_varint(r), count, first, lo;

	f->ack_largest = largest;
	f->ack_delay_us = udp_rd_varint(r);
	count = udp_rd_varint(r);
	first = udp_rd_varint(r);
	if (r->bad || first > largest || count >= UDP_ACK_RANGES_MAX || largest >= UINT64_MAX / 2)
		return -1;
	lo = largest - first;
	f->ranges[0].lo = lo;
	f->ranges[0].hi = largest + 1;
	f->nranges = 1;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t gap = udp_rd_varint(r), len = udp_rd_varint(r), hi;

		/* The next range ends gap + 1 numbers below this one's start. */
		if (r->bad || lo < gap + 2 || lo - gap - 2 < len)
			return -1;
		hi = lo - gap - 2;
		lo = hi - len;
		f->ranges[f->nranges].lo = lo;
		f->ranges[f->nranges].hi = hi + 1;
		f->nranges++;
	}
	return 0;
}

int udp_frames_parse(struct udp_rd *r, struct udp_frames *f)
{
	memset(f, 0, sizeof(*f));
	while (r->p < r->end) {
		uint64_t t = udp_rd_varint(r);

		switch (t) {
		case UDP_FR_PADDING:
			r->p = r->end;
			break;
		case UDP_FR_PING:
			f->ping = 1;
			break;
		case UDP_FR_ACK:
			if (f->has_ack || ack_decode(r, f) < 0)
				return -1;
			f->has_ack = 1;
			break;
		case UDP_FR_MAX_DATA:
			if (f->has_max_data)
				return -1;
			f->has_max_data = 1;
			f->max_data = udp_rd_varint(r);
			break;
		case UDP_FR_STREAM:
			if (f->has_stream)
				return -1;
			f->has_stream = 1;
			f->stream_off = udp_rd_varint(r);
			/* Its data ends the packet, so it needs no length, and the
			 * CRC covers what comes before it. */
			if (r->bad || r->p == r->end || f->stream_off > UINT64_MAX / 2)
				return -1;
			f->stream_len = (size_t)(r->end - r->p);
			f->stream_data = r->p;
			r->p = r->end;
			break;
		default:
			return -1;
		}
		if (r->bad)
			return -1;
	}
	return 0;
}

int udp_frames_eliciting(const struct udp_frames *f)
{
	return f->ping || f->has_stream || f->has_max_data;
}
