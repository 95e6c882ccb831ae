/*
 * clientproto.h - the protocol between liblds and the local ldsd, spoken
 * over the client unix socket (or TCP).  Internal to LDS: the daemon and the
 * library both link clientproto.c.  docs/protocol.md describes it.
 *
 * Frame: 8-byte header then body (integers big-endian):
 *   0  u32 body length (<= CP_MAX_BODY)
 *   4  u8  type (enum cp_type)
 *   5  u8  CP_VERSION
 *   6  u16 zero
 * Strings in bodies are u8 length + bytes (no NUL); "str16" is u16 length.
 * The payload of SEND/DELIVER is the rest of the body after its fields.
 */
#ifndef LDS_CLIENTPROTO_H
#define LDS_CLIENTPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "../ldsd/wire.h"
#include "clientauth.h"

#define CP_VERSION  2u
#define CP_HDR_LEN  8u
#define CP_MAX_BODY (WIRE_MAX_MSG + 512u)
#define CP_TEXT_MAX 255u
/* Largest bodies: HELLO (u16, u16, u64, str name) and SEND (u64, str dst,
 * payload) around a payload of max_msg bytes. */
#define CP_HELLO_MAX_BODY (13u + WIRE_ENDPOINT_MAX)
#define CP_SEND_MAX_BODY(max_msg) (9u + WIRE_ENDPOINT_MAX + (size_t)(max_msg))

enum cp_type {
	CP_HELLO = 1,  /* c->d  u16 version, u16 flags (CP_F_*), u64 incarnation, str name ("" = daemon picks) */
	CP_WELCOME,    /* d->c  u16 version, u32 max_msg, str cluster, str endpoint[, u16 flags]: the
			* flags of HELLO the daemon honours, sent only if some are (so a client
			* that asked for none gets the WELCOME of protocol 2 as first written) */
	CP_SEND,       /* c->d  u64 msg_id, str dst, payload */
	CP_DELIVER,    /* d->c  u64 msg_id, u64 incarnation (both the sender's), str src, payload */
	CP_ACKED,      /* d->c  u64 first, u64 last: messages delivered to their destination */
	CP_LOST,       /* d->c  u64 first, u64 last, str peer, str16 reason: never acknowledged, dropped */
	CP_ERROR,      /* d->c  u64 msg_id (0 = none), i32 errno, str16 text */
	CP_BYE,        /* c->d  empty: orderly close */
	CP_RESUME,     /* c->d  u64 count, str peer: the application has taken `count`
			* LOST frames naming that peer; see clientsrv.h "fence" */
	CP_CHALLENGE,  /* d->c  u8[32] daemon nonce: first frame over TCP (clientauth.h) */
	CP_PROOF,      /* both  u8[32] client nonce, u8[32] MAC: the client's answer, then the daemon's */
	CP_PEERQ,      /* c->d  str cluster: how is the link to it? */
	CP_PEER,       /* d->c  str cluster, u8 state (enum cp_peer_state), u32 seconds down (0 when up),
			* str16 why the last attempt failed ("" none)[, u64 bytes reached, u64 bytes
			* received: the link's counters, only after CP_F_LINKBYTES was agreed]: the answer */
	CP_TAKEN,      /* c->d  u64 count: the application has taken the first `count` DELIVER
			* frames of this connection; only after CP_F_TAKEN was agreed */
	CP_SHM,        /* d->c  u64 ring size, with SCM_RIGHTS: the rings' memfd, the eventfd the client
			* sleeps on, the one it rings (shmring.h); only after CP_F_SHM was agreed, right
			* after WELCOME: every later frame goes through the rings */
	CP_TYPE_MAX
};
extern const char *const cp_type_names[CP_TYPE_MAX];

/* HELLO and WELCOME flags. */
#define CP_F_TAKEN 1u  /* the client sends TAKEN: a message counts as delivered once taken */
#define CP_F_SHM   2u  /* frames go through shared-memory rings (unix socket clients, Linux) */
#define CP_F_LINKBYTES 4u /* PEER carries the link's byte counters */

/* PEER's state: the link to that cluster. */
enum cp_peer_state {
	CP_PEER_UNKNOWN = 0,   /* no such peer in the gateway's configuration */
	CP_PEER_UP,            /* a stream is up */
	CP_PEER_DOWN,          /* none is: since the last went, or since start */
	CP_PEER_STATE_MAX
};

struct cp_hdr {
	uint32_t len;
	uint8_t type;
	uint8_t version;
};

/* A decoded body.  Pointers (payload) point into the caller's buffer. */
struct cp_msg {
	uint8_t type;
	uint16_t version;          /* HELLO, WELCOME */
	uint16_t flags;            /* HELLO, WELCOME: CP_F_* */
	uint32_t max_msg;          /* WELCOME */
	uint64_t msg_id;           /* SEND, DELIVER, ERROR */
	uint64_t incarnation;      /* HELLO: the handle's; DELIVER: the sender's */
	uint64_t first, last;      /* ACKED, LOST (inclusive) */
	uint64_t count;            /* RESUME, TAKEN */
	uint64_t ring_size;        /* SHM */
	uint8_t state;             /* PEER: enum cp_peer_state */
	uint32_t seconds;          /* PEER: down that long */
	int has_bytes;             /* PEER: the two counters below are there */
	uint64_t bytes_out;        /* PEER: bytes of blocks the peer gateway reported received */
	uint64_t bytes_in;         /* PEER: bytes of blocks received from it */
	int32_t err;               /* ERROR: positive errno */
	char name[WIRE_ENDPOINT_MAX + 1];   /* HELLO name, WELCOME cluster, SEND dst, DELIVER src, LOST/RESUME/
					     * PEERQ/PEER peer */
	char endpoint[WIRE_ENDPOINT_MAX + 1]; /* WELCOME: full "cluster/name" */
	char text[CP_TEXT_MAX + 1];         /* LOST reason, ERROR text, PEER last failure */
	uint8_t nonce[CPAUTH_NONCE_LEN];   /* CHALLENGE: the daemon's; PROOF: the client's */
	uint8_t mac[CPAUTH_MAC_LEN];       /* PROOF */
	const uint8_t *payload;    /* SEND, DELIVER */
	uint32_t payload_len;
};

/* Parses a header.  Returns 0, or -EBADMSG (wrong version, unknown type,
 * len > CP_MAX_BODY).  buf must hold CP_HDR_LEN bytes. */
int cp_hdr_parse(const uint8_t *buf, struct cp_hdr *h);
/* The largest body ldsd takes from a client: before WELCOME only a HELLO,
 * after it a SEND of up to max_msg payload bytes (WELCOME's max_msg). */
size_t cp_client_body_max(int welcomed, uint32_t max_msg);
/* Writes a header for a body of len bytes. */
void cp_hdr_write(uint8_t *buf, uint8_t type, uint32_t len);

/* Decodes the body of a frame of type h->type.  Returns 0 or -EBADMSG
 * (truncated, trailing bytes, bad name).  Names are checked loosely here:
 * the daemon validates endpoint syntax itself to give a precise error. */
int cp_decode(const struct cp_hdr *h, const uint8_t *body, struct cp_msg *m);

/*
 * Decodes the fields of a SEND or DELIVER frame from the first avail bytes
 * of its body, so that the payload can be read straight to where it
 * belongs.  On success m->payload points just past the fields (it may lie
 * beyond avail) and m->payload_len counts the whole payload.  Returns 0,
 * -EAGAIN if avail does not yet hold the fields, or -EBADMSG.
 */
int cp_decode_head(const struct cp_hdr *h, const uint8_t *body, size_t avail, struct cp_msg *m);

/*
 * Encodes the fields of m (for m->type) as a whole frame - header included -
 * into buf, WITHOUT the payload of SEND/DELIVER: the caller sends
 * m->payload_len payload bytes right after, and the header's length already
 * counts them.  Returns the bytes written or 0 if cap is too small or a field
 * is too long.
 */
size_t cp_encode(uint8_t *buf, size_t cap, const struct cp_msg *m);

#endif
