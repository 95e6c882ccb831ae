/*
 * rdx_proto.h - what the RDMA transport puts on the wire: the header at
 * the start of every message it sends (one receive buffer each), and the
 * private data of the connection manager's connect and accept.
 *
 * A core message larger than one receive buffer goes either as one RDMA
 * write with immediate data into the ring the receiver advertised in its
 * private data (rdx_wspace.h), or as several chunks, two-sided sends in
 * order on the one queue pair.  Every header, and every immediate, carries
 * the sender's credit count (rdx_credit.h), so credits ride on data; a
 * credit-only message carries the sender's write grant besides.
 * Big-endian throughout; decoders check every field against what the
 * receiver allows and never trust a length.
 */
#ifndef LDS_RDX_PROTO_H
#define LDS_RDX_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define RP_HDR_LEN 12u

enum rp_type {
	RP_DATA = 1,    /* a chunk of a core message */
	RP_CREDIT = 2,  /* credits and the write grant, no payload */
};

#define RP_F_FIRST 0x01u  /* the first chunk of a message */
#define RP_F_LAST  0x02u  /* its last (a message of one chunk has both) */

struct rp_hdr {
	uint8_t type;      /* enum rp_type */
	uint8_t flags;     /* RP_F_*; 0 for RP_CREDIT */
	uint16_t credits;  /* the sender's cumulative grant, mod 2^16 (rdx_credit.h) */
	uint32_t len;      /* payload bytes after the header */
	uint32_t total;    /* RP_DATA: the whole message's length, the same in every chunk;
			      RP_CREDIT: the sender's write grant (rdx_wspace.h), 0 without a ring */
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
 * receive queue holds, so that the other sizes its chunks and credits,
 * and the ring it takes RDMA writes into (size 0: none). */
#define RP_PRIV_LEN 28u
#define RP_MAGIC 0x4c445352u   /* "LDSR" */
#define RP_VERSION 2u
#define RP_MIN_BUF 1024u       /* a buffer must hold a header and a useful chunk */
#define RP_MAX_BUF (1u << 24)
#define RP_MIN_DEPTH 4u        /* rdx_credit.h keeps one credit back */
#define RP_MAX_DEPTH 16384u    /* far below 2^15: cumulative counts mod 2^16 stay unambiguous */

/* The write ring: whole pages, at most 2^16 units of RP_WRITE_ALIGN (the
 * immediate's offset field); a frame written into it is RP_MIN_WRITE ..
 * size / RP_WRITE_FRAC bytes, so that a grant of a quarter of the ring
 * always makes room for the largest one (rdx_wspace.h). */
#define RP_WRITE_ALIGN 256u
#define RP_RING_PAGE 4096u
#define RP_MIN_RING (64u << 10)
#define RP_MAX_RING (RP_WRITE_ALIGN << 16)
#define RP_MIN_WRITE 1024u
#define RP_WRITE_FRAC 8u

struct rp_priv {
	uint32_t buf_size;   /* bytes in each receive buffer, header included */
	uint16_t depth;      /* receive buffers posted: the credits the peer starts with */
	uint64_t ring_addr;  /* the write ring's address, */
	uint32_t ring_rkey;  /* its remote key, */
	uint32_t ring_size;  /* its bytes: 0 (then addr and rkey 0 too) or RP_MIN_RING..RP_MAX_RING, whole pages */
};

void rp_priv_encode(const struct rp_priv *p, uint8_t *buf);
/* Reads the peer's private data (len bytes; the CM may pad it): 0, or
 * -EPROTO for other magic or version, -EBADMSG for a short one or sizes
 * out of RP_MIN..RP_MAX, a ring that breaks the rules above. */
int rp_priv_decode(const uint8_t *buf, size_t len, struct rp_priv *p);

/* The immediate data of an RDMA write (host order; the verbs glue
 * converts): the sender's credit count in the high 16 bits, the frame's
 * offset in the ring in RP_WRITE_ALIGN units in the low 16. */
uint32_t rp_imm_encode(uint16_t credits, uint32_t off);
void rp_imm_decode(uint32_t imm, uint16_t *credits, uint32_t *off);

#endif
