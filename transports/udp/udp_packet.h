/*
 * udp_packet.h - the UDP transport's packets on the wire (docs/udp.md):
 * a header, then frames; every field read through a bounds-checked
 * cursor, so that a lying or broken peer's packet is refused, never read
 * past its end.
 *
 *   0  u16 magic 0x4C55 ("LU")   2  u8 version (3)   3  u8 type
 *   4  u32 CRC-32C, this field 0 8  u64 destination conn id
 *  16  DATA: u32 packet number, its low 32 bits (udp_rx_pn gives the rest)
 *      others: u64 source conn id
 *  20 or 24  payload
 *
 * DATA packets carry the least header, as QUIC's short header does: the
 * destination conn id names the conn, whose peer is known by then.
 *
 * The CRC covers the packet but for a DATA packet's STREAM data, which
 * is its last frame's and ends it: those bytes are the core's frames,
 * each checked above (AEAD tag, or its own CRC-32C) and under (the UDP
 * checksum), so the sender passes them to the kernel without reading
 * them, as the TCP link does.
 *
 * Integers are big-endian; frame fields are QUIC variable-length integers.
 */
#ifndef LDS_UDP_PACKET_H
#define LDS_UDP_PACKET_H

#include <stddef.h>
#include <stdint.h>

#define UDP_MAGIC 0x4C55
#define UDP_VERSION 3               /* 2: the CRC leaves STREAM data out; 3: short DATA header */
#define UDP_HDR_LEN 24              /* INIT, RETRY, ACCEPT, CLOSE */
#define UDP_DATA_HDR_LEN 20
#define UDP_PKT_MAX 9216            /* the largest packet taken (udp_mtu's maximum) */
#define UDP_TOKEN_LEN 16
#define UDP_INIT_MIN 1200           /* INITs are padded to this: a RETRY never amplifies */
#define UDP_ACK_RANGES_MAX 32       /* ranges in one ACK frame */

enum udp_pkt_type {
	UDP_PKT_INIT = 1,           /* client: token (empty at first), frames, padding */
	UDP_PKT_RETRY = 2,          /* server: a token for the client's next INIT */
	UDP_PKT_ACCEPT = 3,         /* server: the conn exists; frames */
	UDP_PKT_DATA = 4,           /* frames */
	UDP_PKT_CLOSE = 5,          /* u8 code: 0 all delivered, else aborted */
};

enum udp_frame_type {
	UDP_FR_PADDING = 0x00,      /* the rest of the packet is padding */
	UDP_FR_PING = 0x01,
	UDP_FR_ACK = 0x02,
	UDP_FR_MAX_DATA = 0x04,
	UDP_FR_STREAM = 0x08,       /* offset, then data to the packet's end */
};

struct udp_rd {
	const uint8_t *p, *end;
	int bad;                    /* a read went past the end */
};

struct udp_wr {
	uint8_t *p, *end;
	int full;                   /* a write did not fit */
};

uint64_t udp_rd_u8(struct udp_rd *r);
uint64_t udp_rd_u16be(struct udp_rd *r);
uint64_t udp_rd_u32be(struct udp_rd *r);
uint64_t udp_rd_u64be(struct udp_rd *r);
uint64_t udp_rd_varint(struct udp_rd *r);
/* n bytes in place; NULL (and bad) if fewer remain. */
const uint8_t *udp_rd_bytes(struct udp_rd *r, size_t n);
void udp_wr_u8(struct udp_wr *w, uint64_t v);
void udp_wr_u16be(struct udp_wr *w, uint64_t v);
void udp_wr_u32be(struct udp_wr *w, uint64_t v);
void udp_wr_u64be(struct udp_wr *w, uint64_t v);
void udp_wr_varint(struct udp_wr *w, uint64_t v);   /* v < 2^62 */
void udp_wr_bytes(struct udp_wr *w, const void *b, size_t n);
size_t udp_varint_len(uint64_t v);

struct udp_hdr {
	uint8_t type;
	uint64_t dcid;
	uint64_t scid;              /* 0 in DATA */
	uint64_t pn;                /* DATA: as sent, its low 32 bits; 0 in the others */
};

/* The header's length for a packet of this type. */
size_t udp_hdr_len(uint8_t type);
/* Writes the header at buf (udp_hdr_len bytes, CRC 0); returns its length. */
size_t udp_hdr_write(uint8_t *buf, const struct udp_hdr *h);
/* Fills the CRC of a finished packet over its first covered bytes: all
 * of it, or all but a DATA packet's STREAM data. */
void udp_pkt_seal(uint8_t *buf, size_t covered);

/* What a DATA, ACCEPT or INIT packet's frames say (at most one of each). */
struct udp_frames {
	int ping;
	int has_ack;
	uint64_t ack_largest, ack_delay_us;
	size_t nranges;                           /* ranges[0] holds largest */
	struct { uint64_t lo, hi; } ranges[UDP_ACK_RANGES_MAX];  /* descending, [lo, hi) */
	int has_max_data;
	uint64_t max_data;
	int has_stream;
	uint64_t stream_off;
	size_t stream_len;
	const uint8_t *stream_data;
};

/* Checks a received packet: size, magic, version, type, frames of a DATA
 * or ACCEPT packet (parsed into *f), CRC.  Returns 0 with *h filled and
 * *payload the rest (past the frames for DATA and ACCEPT), or -1. */
int udp_pkt_open(const uint8_t *buf, size_t len, struct udp_hdr *h, struct udp_rd *payload, struct udp_frames *f);
/* Parses frames to the end of r.  Returns 0, or -1 for an unknown frame,
 * a repeated one, a field past the end, ranges that do not fit (packet
 * numbers below 0) or a STREAM frame with no data (its data runs to the
 * packet's end, so nothing can follow it). */
int udp_frames_parse(struct udp_rd *r, struct udp_frames *f);
/* The packet asks for an acknowledgement. */
int udp_frames_eliciting(const struct udp_frames *f);

#endif
