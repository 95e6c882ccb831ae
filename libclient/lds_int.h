/*
 * lds_int.h - internal to liblds: a handle's state, and what ldsio.c (the
 * connection: frames in, the frame out, waiting), lds.c (the API's
 * copying calls) and ldszc.c (the zero-copy calls) share.
 * The functions are ldsi_*, which liblds.so does not export (lds.map).
 */
#ifndef LDS_INT_H
#define LDS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "clientproto.h"
#include "dedup.h"
#include "idset.h"
#include "lds.h"
#include "shmclient.h"

/* A SEND frame's header and fields: everything but the payload. */
#define OUT_FIELDS_MAX (CP_HDR_LEN + 8 + 1 + WIRE_ENDPOINT_MAX)

struct rxmsg {
	struct rxmsg *next;
	size_t cap;               /* bytes data can hold */
	uint64_t incarnation;     /* the sender's */
	uint64_t conn;            /* the connection it came on (struct lds's conn) */
	struct lds_msg m;
	unsigned char data[];
};

/* The one frame being written.  payload is the caller's buffer while a
 * call is in progress, or owned once the message outlives lds_send_nb. */
struct outmsg {
	int active;
	uint64_t id;              /* SEND's message id, else 0 */
	uint8_t hdr[OUT_FIELDS_MAX];
	size_t hdr_len, hdr_off;
	const uint8_t *payload;
	size_t payload_len, payload_off;
	uint8_t *owned;
};

/* LOST events naming one peer cluster that the application has taken:
 * RESUME tells the daemon how many, so that it lifts its fence only once
 * the application has seen every loss it reported. */
struct resume_count {
	char peer[WIRE_ENDPOINT_MAX + 1];
	uint64_t taken;
	int due;                  /* a RESUME with taken is still to be sent */
};

/* What the zero-copy calls hold (lds_send_reserve, lds_recv_zc). */
enum { ZC_NONE, ZC_RING, ZC_BUF };
struct zc {
	int reserved;             /* ZC_RING: built in the ring, ZC_BUF: in buf */
	size_t len, frame;        /* the payload; header and payload (ZC_RING) */
	char dst[WIRE_ENDPOINT_MAX + 1];   /* ZC_BUF */
	uint8_t *buf;
	size_t cap;
	size_t need_out;          /* lds_send_reserve waits for that much room */
	int want;                 /* lds_recv_zc waits: DELIVERs stay in the ring */
	size_t need_in;           /* the ring's first frame: such a DELIVER, this long */
	int held;                 /* ZC_RING: in the ring, ZC_BUF: a queued copy */
	size_t held_len;
	struct rxmsg *copy;       /* held ZC_BUF */
	/* The rings of a dropped connection, kept mapped while a message in
	 * them is held. */
	struct shmclient *old;
};

struct lds {
	int fd;
	/* The rings, once the daemon's SHM frame set them up (shm_agreed:
	 * WELCOME said it comes); the descriptors that came with it. */
	struct shmclient *shm;
	int shm_agreed;
	struct shmfds fds;
	int err;                  /* first fatal error; the handle is dead if set */
	int welcomed;
	int ack_events;
	char *path;               /* the daemon's socket, for lds_reconnect */
	char asked[WIRE_ENDPOINT_MAX + 1]; /* the name given to lds_open */
	char cluster[WIRE_NAME_MAX + 1];
	char name[WIRE_ENDPOINT_MAX + 1];
	size_t max_msg;
	uint64_t incarnation;     /* drawn at lds_open; names this handle with name */
	uint64_t last_id;         /* id of the last message accepted */

	struct idset settled;     /* ids acknowledged, lost or refused */
	/* Lost ids whose LOST event the application has taken and that it
	 * may still resend: handing over a message abandons those below it
	 * (see lds_resend). */
	struct idset resendable;
	struct dedup seen;        /* what was received, per sender */

	/* What the application took of this connection's DELIVERs, for TAKEN
	 * (CP_F_TAKEN): delivers - queued of them. */
	struct {
		int on;               /* the daemon agreed in WELCOME */
		uint64_t conn;        /* numbers connections */
		uint64_t delivers;    /* DELIVERs that arrived whole */
		size_t queued;        /* of them, not yet returned by lds_recv */
		uint64_t sent;        /* the count last sent */
		size_t bytes;         /* taken since then */
		uint64_t sent_ns;     /* when */
		int due;
	} tk;

	uint8_t *in;              /* IN_SIZE bytes: frames, and the start of
				   * a DELIVER too big for it */
	size_t in_len;
	/* That big DELIVER, its payload read straight into the message. */
	struct rxmsg *fill;
	size_t fill_have;
	struct outmsg out;

	struct rxmsg *rx_head, *rx_tail;
	struct rxmsg *rx_cur;     /* returned by the last lds_recv */
	struct rxmsg *rx_pool;    /* large buffers given back, see RX_POOL_MIN */
	size_t rx_npool;

	/* Per peer, on this connection; a RESUME that is due is sent once
	 * no message is half written. */
	struct resume_count *taken;
	size_t ntaken;
	size_t ev_stale;          /* events queued before the last reconnect */

	/* lds_peer's and lds_link_bytes's question: sent once no message
	 * is half written. */
	struct {
		char name[WIRE_NAME_MAX + 1];
		int due, answered;
		int waiting;          /* written, not yet answered on this connection */
		struct lds_peer ans;
		int bytes_on;         /* the daemon agreed to CP_F_LINKBYTES */
		int bytes_fresh;      /* bytes: an answer lds_link_bytes has not returned */
		struct lds_link_bytes bytes;
	} pq;

	struct lds_event *ev;     /* ring */
	size_t ev_head, ev_n, ev_cap;

	struct zc zc;

	struct lds_stats st;
};

/* The input buffer of a handle. */
#define LDSI_IN_SIZE (64u * 1024)

/* ---- ldsio.c: the connection -------------------------------------- */

/* Records the handle's first fatal error; returns it. */
int ldsi_fail(struct lds *h, int err);
/* lds.h promises -EAGAIN, not -ETIMEDOUT, when the caller did not wait. */
int ldsi_timed(int rc, int timeout_ms);

typedef int (*ldsi_wait_cond)(const struct lds *h, uint64_t arg);
/* Moves bytes both ways until done(h, arg) or the deadline.  What already
 * arrived counts even once the connection is dead. */
int ldsi_wait_for(struct lds *h, ldsi_wait_cond done, uint64_t arg, int64_t deadline);
/* Nothing is being written or due to be. */
int ldsi_out_idle(const struct lds *h, uint64_t arg);
/* One round: waits until the socket is ready or the deadline passes, then
 * reads and writes what it can.  0, -ETIMEDOUT if nothing became ready,
 * or a negative errno. */
int ldsi_pump(struct lds *h, int64_t deadline);
/* A new event at the end of the handle's queue, or NULL (out of memory). */
struct lds_event *ldsi_ev_push(struct lds *h);
/* The frame to write next: m with payload (not copied: it must stay until
 * written or the frame is cleared).  0 or -errno. */
int ldsi_out_set(struct lds *h, const struct cp_msg *m, const void *payload, size_t len);
/* Forgets the frame being written. */
void ldsi_out_clear(struct outmsg *o);
/* Writes as much of the pending frame as the connection takes now; the
 * payload goes straight from its buffer, never copied.  0 or -errno. */
int ldsi_write_out(struct lds *h);

/* ---- lds.c: the API ------------------------------------------------ */

/* "name" means this cluster's "cluster/name": 0 or -EINVAL. */
int ldsi_full_dst(const struct lds *h, const char *dst, char out[WIRE_ENDPOINT_MAX + 1]);
/* A new message was handed over: counts it and gives it its id. */
void ldsi_accept_send(struct lds *h, size_t len, uint64_t *id);

/* The header of the first frame in the daemon's ring, read in place:
 * 1, 0 if it has not all arrived, or -EPROTO.  *avail: bytes there. */
int ldsi_ring_head(struct lds *h, struct cp_hdr *hdr, size_t *avail);
/* Whether a TAKEN is due: the application took everything that arrived,
 * or a batch. */
void ldsi_taken_check(struct lds *h);
/* A DELIVER arrived whole: 1 if it is new (counted as queued), 0 if the
 * application was given it before (its sender resent it after a gateway
 * crash): a copy, counted, and taken at once; or -errno (the handle
 * failed).  The caller drops what is not new. */
int ldsi_rx_admit(struct lds *h, const char *src, uint64_t incarnation, uint64_t id);
/* Hands the first queued message to the application; it counts as taken
 * once the caller says so (ldsi_rx_taken). */
struct rxmsg *ldsi_rx_take(struct lds *h, struct lds_msg *msg);
void ldsi_rx_taken(struct lds *h, const struct rxmsg *r);
/* The application took a message of len bytes that came on this
 * connection: TAKEN may be due. */
void ldsi_note_taken(struct lds *h, size_t len);
/* Gives a received message's buffer back (kept for the next if large). */
void ldsi_rx_recycle(struct lds *h, struct rxmsg *r);

#endif
