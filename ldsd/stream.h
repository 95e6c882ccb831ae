/*
 * stream.h - one stream of a link: a transport conn carrying frames.
 *
 * Private to the link's modules (link_int.h).  A stream frames what it is given (control frames queued,
 * data blocks taken from the send buffer in batches, sealed or in clear),
 * reads and parses what arrives, and reports up through the upcalls it was
 * made with; it never calls the link.  A byte stream transport's frames
 * go through stream_bytes.c, a message transport's through stream_msg.c
 * (whole frames per message, sent from where they lie): stream_framer.h.
 * Calls go one way:
 *
 *     link.c -> handshake.c -> stream.c -> transport, sendbuf, sealq
 *     link.c -------------------^     \-> (framer table) stream_bytes.c, stream_msg.c
 *
 * Upcalls may close the stream only where their comment says so; a write
 * error never closes it from inside stream_flush (the caller checks
 * stream_failed), because the stream's callers still hold it.
 */
#ifndef LDS_STREAM_H
#define LDS_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "auth.h"
#include "config.h"
#include "sealq.h"
#include "sendbuf.h"
#include "transports/transport.h"
#include "wire.h"

#define CTL_CAP 4096               /* queued control frames per stream */
#define STREAM_BATCH 4             /* data blocks per write */
#define HELLO_MAX (64 + 2 * WIRE_NAME_MAX)   /* HELLO payload */

/* The handshake's states (handshake.c), then up. */
enum stream_state {
	ST_CONNECTING,     /* transport connect in progress */
	ST_HELLO_SENT,     /* connector: waiting for CHALLENGE */
	ST_AUTH_SENT,      /* connector: waiting for READY */
	ST_WAIT_HELLO,     /* listener: accepted, waiting for HELLO */
	ST_CHALLENGE_SENT, /* listener: waiting for AUTH */
	ST_UP,
	ST_COUNT
};
extern const char *const stream_state_names[ST_COUNT];

struct daemon;
struct link;
struct stream;
struct stream_framer;
struct stream_msgq;

/* A byte stream's next DATA frame, ahead of its turn (wait_turn upcall). */
enum stream_park {
	STREAM_READING,              /* none waits: the stream is read */
	STREAM_PARKED,               /* it waits in the conn, which is not read */
	STREAM_RELEASED,             /* let go: read at the next wake, whatever its turn */
};

/* What a stream reports to its owner.  s is valid throughout each call. */
struct stream_upcalls {
	/* A whole frame, opened if sealed.  Returns 0, or -1 to have the
	 * stream closed (the reason is taken from the frame: BYE or protocol
	 * error).  May queue frames and flush, must not close s. */
	int (*frame)(struct stream *s, const struct wire_frame *f);
	/* Where DATA block seq of len bytes may be read straight to, or NULL
	 * to have it read as a frame (recvbuf_place). */
	uint8_t *(*place)(struct stream *s, uint64_t seq, uint32_t len);
	/* The block place() gave room for is there, verified.  0, or -1 to
	 * have the stream closed as a protocol error (logged by the owner). */
	int (*placed)(struct stream *s, uint64_t seq, uint32_t len);
	/* DATA block seq, its prefix read, is not yet wanted in order: 1 if
	 * s should leave it in the conn (stream_park) until the owner
	 * releases s (stream_unpark), 0 to read it now.  Byte streams only. */
	int (*wait_turn)(struct stream *s, uint64_t seq);
	/* Whether the stream may take blocks from its send buffer now. */
	int (*may_take)(const struct stream *s);
	/* The stream came up (stream_set_state to ST_UP). */
	void (*up)(struct stream *s);
	/* The stream is closing: the blocks of its unwritten batch are back
	 * in the send buffer; those written but not acknowledged are the
	 * owner's to count (sendbuf_stream_lost).  s is freed after this. */
	void (*down)(struct stream *s, const char *why, int level_warn);
};

struct stream {
	struct daemon *d;
	struct link *link;           /* NULL while an accepted conn is unidentified; never used here */
	const struct stream_upcalls *up;
	const struct lds_transport_ops *ops;
	struct lds_transport *tp;    /* the conn's instance (mem_reg) */
	const struct stream_framer *fr; /* byte stream or messages, as ops->caps say */
	struct stream_msgq *mq;      /* message framer's: messages the transport holds (stream_msg.c) */
	struct lds_tp_conn *conn;
	int idx;
	enum stream_state st;        /* set only by stream_new and stream_set_state */
	char name[WIRE_NAME_MAX + 1]; /* the link's, for logs; "" until known */
	struct sendbuf *sb;          /* where blocks come from; NULL until bound */
	size_t block_size;
	/* Handshake: the connector's HELLO payload, then the transcript hash. */
	uint8_t hello[HELLO_MAX];
	size_t hello_len;
	uint8_t th[AUTH_TH_LEN];
	int aead;                    /* encryption = "aead": all output goes through sq
					(on message kinds, control frames always do) */
	struct sealq sq;
	int sq_more;                 /* sq ends with a full batch and more blocks wait */
	int sq_held;                 /* byte streams: sq is a fixed ring whose bytes the transport
					reads until released (zerocopy, stream_bytes.c) */
	char peer_addr[CONFIG_ADDR_MAX + 8];
	/* What the peer claimed (HELLO; max_msg also in CHALLENGE), applied once authenticated. */
	uint64_t peer_instance;
	uint32_t peer_max_msg;
	unsigned peer_idx, peer_nstreams;

	uint8_t *rx;
	size_t rx_len, rx_cap;
	uint8_t ctl[CTL_CAP];
	size_t ctl_len, ctl_off;
	/* Data frames being written, taken together so that one write fills
	 * whole packets: a lone block plus its header is a full packet and a
	 * runt on links whose MSS is near block_size (loopback). */
	struct sb_block *out[STREAM_BATCH];
	int nout;
	int take;                    /* blocks to take next, 1..STREAM_BATCH */
	size_t out_off;              /* bytes of out[0]'s header+payload written */
	int blocked;
	int corked;                  /* the last send said LDS_TP_MORE */
	int retired;                 /* closed because fewer streams are wanted: not a failure */
	char close_why[200];         /* why a frame handler refused the stream ("" = a protocol error) */
	int failed;                  /* -errno of a failed write, handled by the caller */
	int stalled;                 /* fault injection: neither read nor written */
	int data_train;              /* the last frame read was DATA: see stream_read_size */
	int unauth;                  /* accepted, not yet authenticated: counted by admission */
	size_t pending;              /* bytes known to wait in the conn: asking costs a syscall */
	size_t rx_lowat;             /* bytes the conn waits for before a readable upcall (1: any) */
	uint64_t rx_wait_ns;         /* when the wait for the current frame (its rest, or its turn) began; 0: none */
	enum stream_park parked;     /* the DATA frame whose prefix s->rx holds, ahead of its turn */
	uint64_t parked_seq;         /* that frame's block, while not STREAM_READING */
	size_t tx_unsent;            /* the conn's limit on bytes not yet sent, as last set (0: as opened) */
	uint64_t tx_mark, tx_mark_ns; /* the transport's bytes sent at the last tick, and when */

	uint64_t created_ns, last_rx_ns, last_ping_ns, up_ns;
	struct stream *next_pending; /* list of accepted conns not yet authenticated (handshake.c) */
};

/* A stream in state st (ST_CONNECTING or ST_WAIT_HELLO), no conn yet, of
 * instance tp of kind ops; NULL if out of memory. */
struct stream *stream_new(struct daemon *d, const struct lds_transport_ops *ops, struct lds_transport *tp,
			  const struct stream_upcalls *up, enum stream_state st);
/* The stream belongs to link l (named name): its blocks come from sb. */
void stream_bind(struct stream *s, struct link *l, const char *name, struct sendbuf *sb, size_t block_size);
/* The one place a stream changes state: logs the change and why; to
 * ST_UP, reports up. */
void stream_set_state(struct stream *s, enum stream_state st, const char *why);

/* Appends a control frame to the queue: 0, -EINVAL or -ENOBUFS (full). */
int stream_queue(struct stream *s, const uint8_t *frame, size_t len);
/* Queues a REFUSE (code, reason) and writes it. */
void stream_refuse(struct stream *s, enum wire_refuse code, const char *reason);
/* Queues a PING or PONG (type) carrying t and writes it. */
void stream_ping(struct stream *s, uint8_t type, uint64_t t);
/* Queues a BYE for reason and writes it. */
void stream_bye(struct stream *s, enum wire_refuse reason);
/* Writes queued frames and blocks until the transport pushes back.  Never
 * closes s: a write error is left for stream_failed. */
void stream_flush(struct stream *s);
/* The sb_unseal_fn of a stream that sealed blocks in place (arg is s):
 * called while s still has its keys, as its link learns it is down. */
void stream_unseal_block(void *arg, struct sb_block *b);
/* Closes s if a write failed; returns 1 if it did (s is gone). */
int stream_failed(struct stream *s);
/* Reports down, closes the conn, frees s (once the transport let go of
 * what it holds of s: stream_closed). */
void stream_close(struct stream *s, const char *why, int level_warn);
/* Frees a stream that was never reported on (its conn already closed). */
void stream_free(struct stream *s);
/* Fault injection: neither reads nor writes s from now on. */
void stream_stall(struct stream *s);
/* Asks s's conn for a readable upcall only once bytes can be read (1:
 * any), where the transport can (rx_lowat). */
void stream_rx_lowat(struct stream *s, size_t bytes);
/* Limits the bytes s's conn holds not yet sent (tx_unsent), where the
 * transport can. */
void stream_tx_unsent(struct stream *s, size_t bytes);
/* s leaves its next DATA frame, block seq, in the conn and stops reading
 * it until stream_unpark. */
void stream_park(struct stream *s, uint64_t seq);
/* s, parked, reads that frame at the next wake: its turn came, or
 * waiting holds up the link (linkturn.c). */
void stream_unpark(struct stream *s);
/* Each tick: a wait for a DATA frame's rest (stream_bytes.c) that has
 * lasted too long ends, so that s reads what came and a slow path still
 * shows progress in last_rx_ns. */
void stream_rx_expire(struct stream *s, uint64_t now);

/* 1 with *info filled if s is up and its transport answers, else 0. */
int stream_query(const struct stream *s, struct lds_tp_info *info);
/* The lowest round trip (us) the transports of the up streams in v[0..n)
 * see now (*now_us) and saw lately, without queues (*min_us); 0 where
 * none knows. */
void stream_rtts(struct stream *const *v, unsigned n, uint32_t *now_us, uint32_t *min_us);

/* Transport upcalls (ud is the stream; NULL in closed: nothing held). */
void stream_readable(struct lds_tp_conn *c, void *ud);
void stream_writable(struct lds_tp_conn *c, void *ud);
void stream_sent(struct lds_tp_conn *c, void *ctx, void *ud);
void stream_released(struct lds_tp_conn *c, size_t bytes, void *ud);
void stream_closed(struct lds_tp_conn *c, void *ud);

/* Registered memory (LDS_TP_CAP_REGMEM kinds; else nothing is done): the
 * send buffer's blocks registered with instance tp once, when the link
 * is made; and let go when it ends, after its streams are closed (what a
 * closing conn still holds of it is then given back to no one). */
void stream_reg_sendbuf(const struct lds_transport_ops *ops, struct lds_transport *tp, struct sendbuf *sb);
void stream_dereg_sendbuf(const struct lds_transport_ops *ops, struct lds_transport *tp, struct sendbuf *sb);

#endif
