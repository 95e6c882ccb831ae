/*
 * rdx_proto.h - what the RDMA transport puts on the wire: the header at
 * the start of every message it sends (one receive buffer each), and the
 * private data of the connection manager's connect and accept.
 *
 * A core message larger than one receive buffer goes as several chunks,
 * two-sided sends in order on the one queue pair (docs/rdma.md says why not
 * RDMA writes with immediate data).  Every header carries the sender's
 * credit count (rdx_credit.h), so credits ride on data; a credit-only
 * message carries nothing else.  Big-endian throughout; decoders check
 * every field against what the receiver allows and never trust a length.
 */
#ifndef LDS_RDX_PROTO_H
#define LDS_RDX_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define RP_HDR_LEN 12u

enum rp_type {
	RP_DATA = 1,    /* a chunk of a core message */
	RP_CREDIT = 2,  /* credits only, no payload */
};

#define RP_F_FIRST 0x01u  /* the first chunk of a message */
#define RP_F_LAST  0x02u  /* its last (a message of one chunk has both) */

struct rp_hdr {
	uint8_t type;      /* enum rp_type */
	uint8_t flags;     /* RP_F_*; 0 for RP_CREDIT */
	uint16_t credits;  /* the sender's cumulative grant, mod 2^16 (rdx_credit.h) */
	uint32_t len;      /* payload bytes after the header */
	uint32_t total;    /* RP_DATA: the whole message's length, the same in every chunk */
};

/* Writes h into buf[RP_HDR_LEN]. */
void rp_hdr_encode(const struct rp_hdr *h, uint8_t *buf);
/* Reads the header of a received message of got bytes (the completion's
 * byte count) into *h: 0, or -EBADMSG for a message shorter than a
 * header, an unknown type or flag, a length that disagrees with got, a
 * data chunk with no payload or a total over max_msg or under its chunk,
 * a credit message with a payload. */
int rp_hdr_decode(const uint8_t *buf, size_t got, size_t max_msg, struct rp_hdr *h);

/* The connection manager's private data, both ways: what each side's
 * receive queue holds, so that the other sizes its chunks and credits. */
#define RP_PRIV_LEN 12u
#define RP_MAGIC 0x4c445352u   /* "LDSR" */
#define RP_VERSION 1u
#define RP_MIN_BUF 1024u       /* a buffer must hold a header and a useful chunk */
#define RP_MAX_BUF (1u << 24)
#define RP_MIN_DEPTH 4u        /* rdx_credit.h keeps one credit back */
#define RP_MAX_DEPTH 16384u    /* far below 2^15: cumulative counts mod 2^16 stay unambiguous */

struct rp_priv {
	uint32_t buf_size;   /* bytes in each receive buffer, header included */
	uint16_t depth;      /* receive buffers posted: the credits the peer starts with */
};

void rp_priv_encode(const struct rp_priv *p, uint8_t *buf);
/* Reads the peer's private data (len bytes; the CM may pad it): 0, or
 * -EPROTO for other magic or version, -EBADMSG for a short one or sizes
 * out of RP_MIN..RP_MAX. */
int rp_priv_decode(const uint8_t *buf, size_t len, struct rp_priv *p);

#endif
