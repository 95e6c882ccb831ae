/*
 * lds.h - liblds, the client library of the Long-Distance Service.
 *
 * A process opens a handle to its cluster's gateway daemon (ldsd), takes an
 * endpoint name ("cm" becomes "clusterA/cm"), and exchanges messages with
 * endpoints in any cluster the gateway can reach.  Message boundaries are
 * kept.  Delivery is exactly once and in order per (source, destination)
 * pair, across WAN outages of any length.  A message counts as delivered
 * (LDS_EV_ACKED at its sender) once lds_recv has returned it; what a
 * receiving process did not take when it exits or dies goes to the next
 * process that opens its endpoint, in order (except the last messages it
 * took and had not yet reported, at most 2 ms or 64 messages' worth:
 * those it gets too).
 *
 * Threading: a handle is not thread-safe; use one handle per thread, or
 * lock around calls.  Handles are independent.
 *
 * Errors: functions return 0 or a negative errno value; lds_strerror()
 * describes it.  The important ones:
 *   -EAGAIN      non-blocking call would block (send memory full / no message)
 *   -ETIMEDOUT   the timeout passed
 *   -EMSGSIZE    message larger than the link allows (see lds_max_msg)
 *   -EHOSTUNREACH  no gateway link to the destination's cluster
 *   -ECONNRESET  the local ldsd went away; lds_reconnect (not a new handle)
 *   -EADDRINUSE  the endpoint name is taken by another client
 *
 * Acknowledgements: every message sent gets an id (1, 2, 3... per handle).
 * The gateway reports when a message was taken by its destination client
 * (LDS_EV_ACKED, lds_settled_upto) and, if the peer gateway restarted and
 * lost state, exactly which messages were never acknowledged (LDS_EV_LOST).
 * Some of those may have arrived all the same (a gateway killed after
 * handing them over could not say so); the application decides whether to
 * send them again, with lds_resend, which keeps each message's id: the
 * receiving liblds recognises a copy of a message it already has by its
 * sender, the sender's incarnation (a random number drawn by lds_open) and
 * the id, and drops it.  So a lost message that is resent arrives once.
 */
#ifndef LDS_H
#define LDS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LDS_NAME_MAX 128            /* endpoint names, including NUL */
#define LDS_DEFAULT_SOCKET "/run/lds/ldsd.sock"
#define LDS_SOCKET_ENV "LDS_SOCKET" /* overrides the default socket path */
/* Where the gateway is, before LDS_SOCKET: a socket path, "tcp:HOST:PORT"
 * or "rdma://HOST:PORT" (ldsd's clients.rdma, from another node of the
 * cluster); the same forms go in lds_open's socket_path. */
#define LDS_GATEWAY_ENV "LDS_GATEWAY"
#define LDS_RDMA_PREFIX "rdma://"

struct lds;

struct lds_msg {
	char src[LDS_NAME_MAX];  /* sender, "cluster/name" */
	uint64_t id;             /* sender's message id */
	size_t len;
	void *data;              /* owned by the handle; valid until the next lds_recv or lds_close
				  * (from lds_recv_zc: until lds_recv_release) */
};

enum lds_event_type {
	LDS_EV_ACKED = 1,        /* messages first..last reached their destination */
	LDS_EV_LOST,             /* messages first..last were dropped: peer gateway lost its state */
	LDS_EV_ERROR,            /* message first (0 = none) failed: err, text */
};

struct lds_event {
	enum lds_event_type type;
	uint64_t first, last;    /* inclusive message id range */
	int err;                 /* negative errno for LDS_EV_ERROR */
	char peer[LDS_NAME_MAX]; /* cluster concerned, for LOST */
	char text[256];
};

struct lds_stats {
	uint64_t sent;           /* messages accepted by lds_send */
	uint64_t acked;          /* ... of which acknowledged */
	uint64_t lost;           /* ... of which reported lost and not resent since */
	uint64_t failed;         /* ... of which refused with an error */
	uint64_t received;       /* messages returned by lds_recv */
	uint64_t bytes_sent, bytes_received;
	uint64_t resent;         /* lds_resend calls that handed a message over */
	uint64_t duplicates;     /* copies of messages already received, dropped */
};

/*
 * Connects to the ldsd listening on socket_path (NULL: $LDS_GATEWAY, else
 * $LDS_SOCKET, else LDS_DEFAULT_SOCKET; "tcp:HOST:PORT" for a TCP client
 * port, "rdma://HOST:PORT" for an RDMA one: -ENODEV with no RDMA device)
 * and registers
 * endpoint name (NULL or "": the daemon picks a unique one).  Blocks until
 * the daemon answers or timeout_ms passes (< 0: forever).  On failure returns
 * NULL and, if err is not NULL, stores a negative errno in *err.
 */
struct lds *lds_open(const char *socket_path, const char *name, int timeout_ms, int *err);
/* The socket lds_open(socket_path, ...) connects to: socket_path, else
 * $LDS_GATEWAY, else $LDS_SOCKET, else LDS_DEFAULT_SOCKET (NULL and "" count as not given);
 * for error messages and tools that derive other paths from it. */
const char *lds_socket_path(const char *socket_path);
/* Flushes unsent bytes (up to 10 s), says goodbye and frees the handle. */
int lds_close(struct lds *h);
/*
 * Connects the handle to its ldsd again, e.g. after -ECONNRESET when the
 * gateway was restarted, under the same endpoint name (a daemon-chosen name
 * is chosen anew).  Everything else is kept: messages received and not yet
 * taken, pending events, message ids, and the record of what was received
 * (so copies of messages resent after the crash are still dropped).  Sent
 * messages whose outcome the old connection had not reported are reported
 * lost (LDS_EV_LOST with an empty peer; a partially written lds_send_nb
 * message is among them).  They may be resent at once, and must be resent
 * before anything new is sent, which would make them impossible to resend
 * (see lds_resend).  While the gateway is not back (its socket missing or
 * refusing, or it closes the connection during the hello), it tries again,
 * 50 ms apart doubling to 1 s, until timeout_ms (as for lds_open); other
 * refusals (EACCES, EPROTONOSUPPORT, ...) return at once.  Returns 0, or a
 * negative errno, after which the handle answers -ECONNRESET until a
 * reconnect works.
 */
int lds_reconnect(struct lds *h, int timeout_ms);

/* This endpoint's full name, "cluster/name". */
const char *lds_name(const struct lds *h);
/* This cluster's name. */
const char *lds_cluster(const struct lds *h);
/* Largest message the gateway accepts, in bytes. */
size_t lds_max_msg(const struct lds *h);

/*
 * Sends len bytes to dst ("cluster/name"; a bare "name" means this cluster).
 * Blocks while the gateway's send memory is full; returns 0 once the whole
 * message is handed to the gateway (not yet acknowledged) and stores its id
 * in *id if id is not NULL.
 */
int lds_send(struct lds *h, const char *dst, const void *buf, size_t len, uint64_t *id);
/* As lds_send, but returns -EAGAIN instead of blocking.  At most one
 * partially written message is kept inside the handle; it is finished by
 * later calls or by lds_flush. */
int lds_send_nb(struct lds *h, const char *dst, const void *buf, size_t len, uint64_t *id);
/*
 * Sends message id again after an LDS_EV_LOST event named it, keeping the
 * id: the receiver drops the copy if it got the message before.  dst, buf
 * and len must be those of the original message.  Blocks as lds_send.
 * Ids must reach a destination in increasing order, so resend the lost
 * messages oldest first, before sending new ones: handing over a message
 * (lds_send, lds_send_nb, lds_resend) makes the lost ids below it, whose
 * events were taken before, impossible to resend (-EINVAL).  The message is
 * in doubt again until it is acknowledged, lost or refused anew.  Returns
 * 0, -EINVAL if id is not a lost message that may be resent (its LOST event
 * must have been taken with lds_next_event), or as lds_send.
 */
int lds_resend(struct lds *h, const char *dst, const void *buf, size_t len, uint64_t id);
/* Waits until everything accepted by lds_send_nb is handed to the gateway.
 * timeout_ms as for lds_recv: 0 = do not wait (-EAGAIN if not done),
 * < 0 = wait forever, else at most that long (-ETIMEDOUT). */
int lds_flush(struct lds *h, int timeout_ms);

/*
 * Receives the next message.  timeout_ms: 0 = do not block (-EAGAIN if none),
 * < 0 = block forever, else at most that long (-ETIMEDOUT).
 */
int lds_recv(struct lds *h, struct lds_msg *msg, int timeout_ms);

/*
 * Zero-copy calls, beside the copying ones.  When the handle talks to ldsd
 * through shared-memory rings (the default for a unix socket on Linux;
 * LDS_SHM=0 turns them off), a message is built or read in place in the
 * ring; over a socket, or for a message larger than the ring, they copy
 * through a buffer of the handle, so that programs need not care.
 *
 * lds_send_reserve returns in *buf room for a message of len bytes to
 * dst; fill it, then lds_send_commit hands it over as lds_send would (the
 * message id in *id).  Blocks while the ring has no room.  Between the
 * two, no other send, lds_flush or lds_reconnect (they return -EBUSY);
 * lds_send_cancel drops the reserved message instead.
 *
 * lds_recv_zc receives as lds_recv does, but msg->data may point into the
 * ring, which is mapped read-only (a write into it is SIGSEGV): it stays
 * valid, and the message counts as taken by the application (see
 * "delivered" in README), only until lds_recv_release(h, msg).  One
 * message may be held at a time (-EBUSY); while it is, other frames keep
 * arriving behind it, but release it soon: its bytes take room in the ring.
 */
int lds_send_reserve(struct lds *h, const char *dst, size_t len, void **buf);
int lds_send_commit(struct lds *h, uint64_t *id);
int lds_send_cancel(struct lds *h);
int lds_recv_zc(struct lds *h, struct lds_msg *msg, int timeout_ms);
int lds_recv_release(struct lds *h, struct lds_msg *msg);

/* A file descriptor that becomes readable when lds_recv or lds_next_event
 * may have something, or writable when a pending send can progress.  Do not
 * read from or write to it.  With shared-memory rings it is an epoll
 * descriptor that only becomes readable, also when a pending send can
 * progress: poll it for POLLIN and retry the send after lds_process. */
int lds_fd(const struct lds *h);
/* Reads whatever the daemon sent without blocking and updates events and
 * counters; call after poll says lds_fd is readable if you wait on it. */
int lds_process(struct lds *h);

/* Dequeues the oldest pending LOST or ERROR event (ACKED ones update
 * counters only unless lds_set_ack_events(h, 1) was called).  Returns 1 if
 * *ev was filled, 0 if none is pending. */
int lds_next_event(struct lds *h, struct lds_event *ev);
/* Queue LDS_EV_ACKED events too (on != 0; default off).  Returns 0. */
int lds_set_ack_events(struct lds *h, int on);
/* Highest n such that every message 1..n is acknowledged or reported lost
 * or failed: nothing at or below n is still in doubt. */
uint64_t lds_settled_upto(const struct lds *h);
/* Blocks until lds_settled_upto(h) >= id.  timeout_ms as for lds_recv:
 * 0 = do not wait (-EAGAIN if not settled), < 0 = wait forever, else at
 * most that long (-ETIMEDOUT).  -EINVAL if id was not used yet. */
int lds_wait_settled(struct lds *h, uint64_t id, int timeout_ms);
void lds_get_stats(const struct lds *h, struct lds_stats *st);

/* The gateway's link to a peer cluster, as lds_peer reports it. */
enum lds_peer_state {
	LDS_PEER_UNKNOWN,         /* the gateway has no such peer */
	LDS_PEER_UP,              /* at least one stream of the link is up */
	LDS_PEER_DOWN             /* none is */
};
struct lds_peer {
	enum lds_peer_state state;
	unsigned down_s;          /* LDS_PEER_DOWN: since when, in seconds (the last stream, or the start) */
	char why[256];            /* why its last connection attempt failed, e.g. a refused key; "" if none */
};
/* Asks the gateway how its link to cluster is: for a message that says
 * why a peer does not answer instead of guessing.  timeout_ms as for
 * lds_recv.  0 with *p filled, -EINVAL (not a cluster name), -ETIMEDOUT,
 * or a connection error. */
int lds_peer(struct lds *h, const char *cluster, struct lds_peer *p, int timeout_ms);

/* What the gateway's link to a peer cluster carried since the gateway
 * started, block by block (a message's acknowledgement comes only once
 * the whole message crossed, which makes a rate of acknowledged
 * messages jump). */
struct lds_link_bytes {
	uint64_t sent;            /* bytes of blocks the peer's gateway reported received, each once */
	uint64_t received;        /* bytes of blocks received from it, each once */
};
/* Never waits: returns the gateway's answer that arrived since the last
 * call, and asks again unless a question is on its way (the answer comes
 * in with the handle's other input: lds_process, lds_recv...).  Call it
 * at the pace samples are wanted.  1 with *b filled, 0 when no new
 * answer came, -ENOTSUP (an ldsd that does not report them), -ENOENT (no
 * link to that cluster), -EINVAL (not a cluster name), or the handle's
 * error. */
int lds_link_bytes(struct lds *h, const char *cluster, struct lds_link_bytes *b);

/* Describes a negative errno returned by liblds. */
const char *lds_strerror(int err);

/*
 * The thesis API (Appendix A of the architecture thesis), kept so that
 * programs written against it compile and run unchanged.  It is a thin
 * layer over the calls above with one process-wide handle and byte-stream
 * semantics: LDS_Recv(buf, n) returns exactly n bytes, joining and
 * splitting messages as needed.  The configuration file (default
 * "LDN_Service.ini") uses the thesis's "Key = value" lines; see
 * docs/thesis-api.md for the keys and how they map onto ldsd.
 * Functions return 0 on success or a positive LDS_E* code.
 */
#define LDS_OK        0
#define LDS_ECONFIG   1   /* configuration file missing or invalid */
#define LDS_ECONNECT  2   /* local ldsd unreachable */
#define LDS_ESTATE    3   /* called before LDS_Init or after LDS_Finalize */
#define LDS_EIO       4   /* the gateway refused or lost the connection */
#define LDS_EARG      5   /* bad argument */

int LDSM_SetConfigFile(char *filename);
int LDS_Init(int aitCommInstances);
int LDS_Rank(void);
int LDS_Send(void *buf, int count);
int LDS_Recv(void *buf, int count);
int LDS_Finalize(void);

#ifdef __cplusplus
}
#endif
#endif
