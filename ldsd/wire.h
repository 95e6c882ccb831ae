/*
 * wire.h - the gateway-to-gateway wire protocol: frame and record codecs.
 *
 * Pure functions over byte buffers; nothing here does I/O or allocates.
 * Every decoder is bounds-checked and treats its input as hostile: it returns
 * a negative errno value and never reads outside [buf, buf+len).
 * docs/protocol.md is the normative description; keep the two in step.
 *
 * Frame layout (all integers big-endian):
 *   0  u16 magic 0x4C44 ("LD")
 *   2  u8  protocol version (WIRE_VERSION)
 *   3  u8  type (enum wire_type)
 *   4  u32 payload length (bytes after this 12-byte header)
 *   8  u32 CRC-32C of header (with this field zero) and payload
 *
 * A sealed frame (type byte with WIRE_SEALED set, after the handshake of a
 * link with encryption = "aead") has a zero CRC field and its payload
 * encrypted and followed by a WIRE_TAG_LEN-byte tag (ldsd/seal.h); a DATA
 * frame's seq stays in clear, authenticated with the header.
 */
#ifndef LDS_WIRE_H
#define LDS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "bytebuf.h"

#define WIRE_MAGIC        0x4C44u
#define WIRE_VERSION      3u
#define WIRE_HDR_LEN      12u
#define WIRE_NONCE_LEN    32u
#define WIRE_MAC_LEN      32u            /* HMAC-SHA-256 */
#define WIRE_NAME_MAX     63u            /* cluster names, without NUL */
#define WIRE_REASON_MAX   255u
#define WIRE_MAX_RANGES   32u            /* SACK and delivered ranges per ACK */
#define WIRE_MAX_BLOCK    (16u << 20)    /* largest block payload */
#define WIRE_TAG_LEN      16u            /* AEAD tag of a sealed frame */
#define WIRE_SEALED       0x80u          /* type byte flag: the frame is sealed */
#define WIRE_MAX_PAYLOAD  (WIRE_MAX_BLOCK + 8u + WIRE_TAG_LEN)
#define WIRE_CHALLENGE_MAC_OFF 44u       /* of the mac in a CHALLENGE payload */
#define WIRE_DATA_HDR_LEN (WIRE_HDR_LEN + 8u)  /* frame header + seq */

enum wire_type {
	WIRE_HELLO = 1,     /* connector -> listener: who I am, my nonce */
	WIRE_CHALLENGE,     /* listener -> connector: who I am, my nonce, my MAC */
	WIRE_AUTH,          /* connector -> listener: connector's MAC */
	WIRE_READY,         /* listener -> connector: stream accepted */
	WIRE_REFUSE,        /* either way, then close: code and reason */
	WIRE_DATA,          /* one sequence-numbered block */
	WIRE_ACK,           /* cumulative + selective acks, window, deliveries */
	WIRE_PING,          /* keepalive and RTT probe */
	WIRE_PONG,          /* echo of a PING */
	WIRE_BYE,           /* orderly close of this stream */
	WIRE_TYPE_MAX
};
extern const char *const wire_type_names[WIRE_TYPE_MAX];

/* REFUSE codes. */
enum wire_refuse {
	WIRE_REFUSE_VERSION = 1,   /* protocol version not supported */
	WIRE_REFUSE_CLUSTER,       /* unknown or unexpected cluster name */
	WIRE_REFUSE_AUTH,          /* MAC did not verify: wrong key */
	WIRE_REFUSE_STREAMS,       /* stream index out of range or busy */
	WIRE_REFUSE_PROTOCOL,      /* malformed or unexpected frame */
	WIRE_REFUSE_SHUTDOWN,      /* daemon is shutting down */
	WIRE_REFUSE_RETIRED,       /* BYE only: this stream is no longer wanted (streams = "auto") */
	WIRE_REFUSE_ENCRYPTION,    /* the two ends' encryption settings differ */
};

/* HELLO and CHALLENGE: how the sender protects frames after the handshake. */
enum wire_encryption {
	WIRE_ENC_NONE = 0,         /* CRC-32C only */
	WIRE_ENC_AEAD = 1,         /* sealed frames, docs/protocol.md "Sealed frames" */
};

/* A parsed frame header; payload points into the caller's buffer. */
struct wire_frame {
	uint8_t version;
	uint8_t type;               /* without WIRE_SEALED */
	uint8_t sealed;             /* WIRE_SEALED was set: payload is still sealed */
	uint32_t len;
	const uint8_t *payload;
};

/*
 * Looks for one complete frame at the start of buf.
 * Returns 1 and fills *f and *consumed (header + payload) when a whole valid
 * frame is there; 0 when more bytes are needed (*consumed is then the number
 * of bytes the frame needs in total, or WIRE_HDR_LEN if the header is not
 * complete); or a negative errno:
 *   -EPROTO       bad magic
 *   -EPROTONOSUPPORT  version != WIRE_VERSION (f->version is set)
 *   -EMSGSIZE     length > WIRE_MAX_PAYLOAD
 *   -EBADMSG      CRC mismatch, or a sealed frame too short for its tag
 *   -EINVAL       unknown type
 * A sealed frame's CRC is not checked (its tag is, by seal_open): f->sealed
 * is set and f->len and f->payload still include the tag.
 */
int wire_frame_parse(const uint8_t *buf, size_t len, struct wire_frame *f, size_t *consumed);

/* The payload length of the frame whose WIRE_HDR_LEN-byte header is hdr
 * (nothing checked: wire_frame_parse checks it). */
static inline uint32_t wire_hdr_payload_len(const uint8_t *hdr)
{
	return bb_get_be32(hdr + 4);
}

struct wire_hello {
	uint16_t stream_idx;        /* 0 .. nstreams-1 */
	uint16_t nstreams;          /* streams the connector wants */
	uint32_t max_msg;           /* largest message the sender of this frame accepts */
	uint64_t instance;          /* random id of the sending daemon process */
	uint8_t nonce[WIRE_NONCE_LEN];
	uint8_t encryption;         /* enum wire_encryption */
	char from[WIRE_NAME_MAX + 1];  /* sender's cluster */
	char to[WIRE_NAME_MAX + 1];    /* cluster it expects to reach */
};

struct wire_challenge {
	uint32_t max_msg;
	uint64_t instance;
	uint8_t nonce[WIRE_NONCE_LEN];
	uint8_t mac[WIRE_MAC_LEN];
	uint8_t encryption;         /* enum wire_encryption */
	char from[WIRE_NAME_MAX + 1];
};

struct wire_auth {
	uint8_t mac[WIRE_MAC_LEN];
};

struct wire_refuse_msg {
	uint16_t code;              /* enum wire_refuse */
	char reason[WIRE_REASON_MAX + 1];
};

struct wire_range {
	uint64_t start;             /* first included */
	uint64_t end;               /* first excluded; start < end */
};

struct wire_ack {
	uint64_t recv_cum;          /* every block seq < recv_cum was received */
	uint64_t window_end;        /* sender may send seq < window_end */
	uint64_t deliv_cum;         /* every message number < deliv_cum was delivered */
	uint16_t nsack;             /* blocks received above recv_cum */
	uint16_t ndeliv;            /* messages delivered above deliv_cum */
	struct wire_range sack[WIRE_MAX_RANGES];
	struct wire_range deliv[WIRE_MAX_RANGES];
};

/*
 * Encoders write one whole frame (header, payload, CRC) into buf and return
 * its length, or 0 if cap is too small or a field is out of range (names
 * not valid per wire_name_valid, ranges not ascending, nsack >
 * WIRE_MAX_RANGES, a REFUSE reason longer than WIRE_REASON_MAX or holding
 * a control character: REFUSE reasons must not contain bytes below 0x20
 * or 0x7f, since they end up in the peer's log).
 */
size_t wire_encode_hello(uint8_t *buf, size_t cap, const struct wire_hello *h);
size_t wire_encode_challenge(uint8_t *buf, size_t cap, const struct wire_challenge *c);
size_t wire_encode_auth(uint8_t *buf, size_t cap, const struct wire_auth *a);
size_t wire_encode_ready(uint8_t *buf, size_t cap);
size_t wire_encode_refuse(uint8_t *buf, size_t cap, const struct wire_refuse_msg *r);
size_t wire_encode_ack(uint8_t *buf, size_t cap, const struct wire_ack *a);
size_t wire_encode_ping(uint8_t *buf, size_t cap, enum wire_type type, uint64_t t_ns);
size_t wire_encode_bye(uint8_t *buf, size_t cap, uint16_t reason);

/* DATA frames are sent as header + block payload without copying the
 * payload: this writes the WIRE_DATA_HDR_LEN bytes that precede it, with the
 * CRC already covering payload.  len must be <= WIRE_MAX_BLOCK. */
void wire_encode_data_hdr(uint8_t hdr[WIRE_DATA_HDR_LEN], uint64_t seq, const void *payload, uint32_t len);
/* The header of a sealed frame of this type whose payload (tag included)
 * is len bytes: WIRE_SEALED set, CRC field zero. */
void wire_encode_sealed_hdr(uint8_t hdr[WIRE_HDR_LEN], uint8_t type, uint32_t len);

/*
 * Decoders take a frame from wire_frame_parse() of the matching type and
 * return 0, or -EBADMSG if the payload is truncated, has trailing bytes, or
 * holds an out-of-range field (empty or over-long or non-printable name,
 * nsack > WIRE_MAX_RANGES, ranges not ascending and non-empty, a PING
 * payload of the wrong size, an unknown encryption...).  Names must match
 * [A-Za-z0-9._-]+.  A sealed frame must be opened first (f->sealed 0).
 */
int wire_decode_hello(const struct wire_frame *f, struct wire_hello *h);
int wire_decode_challenge(const struct wire_frame *f, struct wire_challenge *c);
int wire_decode_auth(const struct wire_frame *f, struct wire_auth *a);
int wire_decode_refuse(const struct wire_frame *f, struct wire_refuse_msg *r);
int wire_decode_ack(const struct wire_frame *f, struct wire_ack *a);
int wire_decode_ping(const struct wire_frame *f, uint64_t *t_ns);
int wire_decode_bye(const struct wire_frame *f, uint16_t *reason);
/* DATA: *seq and the block payload (points into f->payload).  An empty
 * block or one over WIRE_MAX_BLOCK is -EBADMSG. */
int wire_decode_data(const struct wire_frame *f, uint64_t *seq, const uint8_t **data, uint32_t *len);

/*
 * A DATA frame's first WIRE_DATA_HDR_LEN bytes, before its block has
 * arrived, so that the block can be read straight to where it belongs:
 * returns 1 and its seq, block length and whether it is sealed (the block
 * is then followed by a WIRE_TAG_LEN tag) if prefix starts a DATA frame of
 * this version with a block of 1 to WIRE_MAX_BLOCK bytes, else 0 (the frame
 * is then left to wire_frame_parse, which says what is wrong).
 */
int wire_peek_data(const uint8_t *prefix, uint64_t *seq, uint32_t *len, int *sealed);
/* True if the DATA frame that starts with prefix (as wire_peek_data took
 * it) and carries block, len bytes, has the right CRC. */
int wire_data_intact(const uint8_t *prefix, const void *block, uint32_t len);

/* True if s is a valid cluster name or the first part of an endpoint
 * (the part before the '/'): 1..WIRE_NAME_MAX characters of
 * [A-Za-z0-9._-]. */
int wire_name_valid(const char *s);

/*
 * Message records.  A link direction carries one byte stream of records,
 * cut into blocks; a record may span blocks.  Record header (big-endian):
 *   0  u8  record magic 0xA5
 *   1  u8  flags (0)
 *   2  u8  src length (1..WIRE_ENDPOINT_MAX)
 *   3  u8  dst length (1..WIRE_ENDPOINT_MAX)
 *   4  u32 payload length (0..WIRE_MAX_MSG)
 *   8  u64 sender's message id
 *  16  u64 sender's incarnation (random per liblds handle)
 *  24  src bytes, dst bytes ("cluster/name"), then the payload
 */
#define WIRE_REC_MAGIC     0xA5u
#define WIRE_REC_FIXED     24u
#define WIRE_ENDPOINT_MAX  127u           /* "cluster/name", without NUL */
#define WIRE_MAX_MSG       (256u << 20)

struct wire_record {
	uint32_t len;
	uint64_t msg_id;
	/* With src, names the sending handle: a resend keeps both id and
	 * incarnation, so the receiving liblds recognises a copy. */
	uint64_t incarnation;
	char src[WIRE_ENDPOINT_MAX + 1];
	char dst[WIRE_ENDPOINT_MAX + 1];
};

/* Bytes of a record header with these names. */
size_t wire_record_hdr_len(const struct wire_record *r);
/* Writes the record header; returns its length or 0 if cap is too small or a
 * name is invalid (see wire_endpoint_valid). */
size_t wire_encode_record_hdr(uint8_t *buf, size_t cap, const struct wire_record *r);
/* Parses a record header at buf.  Returns the header length (> 0), 0 if more
 * bytes are needed, or -EBADMSG (bad magic, bad name, len > WIRE_MAX_MSG). */
int wire_decode_record_hdr(const uint8_t *buf, size_t len, struct wire_record *r);
/* True if endpoint is "cluster/...". */
int wire_endpoint_in(const char *endpoint, const char *cluster);
/* True if the record comes from an endpoint of cluster from and goes to one
 * of cluster to: the only records a link between the two may carry. */
int wire_record_between(const struct wire_record *r, const char *from, const char *to);

/* True if s is "cluster/name": the cluster part valid per
 * wire_name_valid(); the name part non-empty and of the same characters
 * [A-Za-z0-9._-] (so no second '/'), and it may be longer than
 * WIRE_NAME_MAX as long as the whole is at most WIRE_ENDPOINT_MAX bytes. */
int wire_endpoint_valid(const char *s);

#endif
