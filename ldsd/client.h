/*
 * client.h - one local client connection and the client server's state,
 * shared by the files of the client server: clientsrv.c (what the rest of
 * ldsd calls: sockets, timer, messages from links, flush, status),
 * clientconn.c (connections: accepting, reading frames, pausing, closing),
 * clientreq.c (what a client's frames do), clientep.c (the endpoints'
 * queues), clientout.c (what is written to a client), clientsock.c
 * (payloads read straight from a socket), clientshm.c (the shared-memory
 * rings that replace the socket's bytes) and clientkey.c (the key check of
 * TCP clients).
 * clientconn.c reports decoded frames up through struct client_handlers,
 * which clientreq.c fills; clientreq.c calls down, never the reverse.
 * clientout.c and clientshm.c, below clientconn.c and clientsrv.c, reach
 * them only through struct client_upcalls, which clientsrv.c fills.
 * Nothing outside them includes it; the rest of ldsd sees clientsrv.h.
 */
#ifndef LDS_CLIENT_H
#define LDS_CLIENT_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "clientsrv.h"
#include "endpoint.h"
#include "evloop.h"
#include "libclient/clientproto.h"
#include "libclient/shmring.h"

#define CS_LOCAL_MEMORY (64u << 20)   /* messages between clients of this cluster */
#define CS_UID_TCP ((uid_t)-1)        /* the one "user" of every TCP client */

struct sendbuf;

struct client {
	struct clientsrv *cs;
	int fd;
	uint64_t id;
	uint64_t incarnation;         /* the liblds handle's, from HELLO */
	struct endpoint *ep;          /* after HELLO */
	char peer[64];
	/* The peer process (SO_PEERCRED); TCP clients have none and count as
	 * one user, CS_UID_TCP. */
	uid_t uid;
	gid_t gid;
	pid_t pid;
	uint64_t accepted_ns;
	int tcp;                      /* came through clients.tcp or .rdma (from: "HOST port P")... */
	char from[64];
	int keyed;                    /* ...and proved it holds the key */
	uint8_t nonce[CPAUTH_NONCE_LEN];   /* of the CHALLENGE sent to it */
	uint32_t max_msg;             /* WELCOME's: bounds its SEND frames */
	int doomed;                   /* must be closed at the next safe point */
	/* Shared-memory rings (clientshm.c): the bytes the socket carried
	 * go through them once set up after HELLO; NULL: the socket. */
	struct clientshm *shm;
	/* Messages from links reassembled in its ring (clientplace.c), or
	 * NULL: none yet. */
	struct clientplace *place;

	uint8_t *in;
	size_t in_len, in_cap;
	size_t in_budget;             /* of its user's input_per_user, for the frame it reads */
	int paused;                   /* not reading: waiting for send memory */
	int await_rest;               /* not reading: the frame begun in the input buffer is being written into the ring */
	int hung_up;                  /* see client_hung_up */

	uint8_t *ctl;                 /* encoded control frames to write */
	size_t ctl_len, ctl_off, ctl_cap;
	/* With CP_F_TAKEN, a DELIVER written whole stays at the head of the
	 * endpoint's queue until the client's TAKEN covers it, so that a
	 * process that dies leaves it to the next one on the name. */
	int takes;                    /* CP_F_TAKEN agreed */
	int link_bytes;               /* CP_F_LINKBYTES agreed: PEER carries the link's counters */
	size_t written;               /* written, not yet taken: the queue's first */
	struct rb_msg *last_written;  /* the last of them, or NULL */
	uint64_t taken;               /* TAKEN's count so far */
	struct rb_msg *cur;           /* DELIVER being written (in the queue) */
	uint8_t cur_hdr[CP_HDR_LEN + 17 + WIRE_ENDPOINT_MAX];
	size_t cur_hdr_len, cur_off;
	int want_write;

	uint64_t ack_first, ack_last; /* coalesced ACKED range; 0 = none */
	/* Per link on which messages of this client were lost: until the
	 * client has said (RESUME) that its application took every LOST
	 * reported so far, newer messages to it are reported lost too, so that
	 * resends stay in order. */
	struct fence {
		struct link *link;
		uint64_t reported;   /* LOST frames naming the link, ever */
		int up;              /* not all of them taken yet */
	} fences[CONFIG_MAX_PEERS];
	size_t nfences;
	struct client *next;
	uint64_t msgs_in, msgs_out, bytes_in, bytes_out;
};

struct clientsrv {
	struct daemon *d;
	const struct client_handlers *handlers;   /* clientreq_handlers */
	const struct client_upcalls *up;          /* for clientout.c and clientshm.c */
	int unix_fd, tcp_fd;
	struct clientrdma *rdma;      /* clients.rdma's listener (clientrdma.c), or NULL */
	struct client *clients;
	size_t nclients;
	struct eptab eps;
	uint64_t next_id;
	size_t local_bytes;
	int resume_pending;
	struct client *last_lookup;
	uint64_t msgs_local, msgs_refused, msgs_undelivered, clients_refused;
	uint64_t msgs_ended;          /* of msgs_undelivered: their job ended (jobend.h) */
	uint64_t tcp_key_failures;    /* TCP clients closed for a wrong PROOF */
	uint64_t placed_bytes;        /* messages from links reassembled in clients' rings (clientplace.c) */
	uint64_t placed_moved_bytes;  /* ...of which moved out before the client took them */
	int tick_id;
};

#define CS_TICK_MS 500   /* the client server's tick: expiry of held messages, names, silent clients, ring regions */

/* ---- upcalls of the output side ----------------------------------------- */
/*
 * What clientout.c and clientshm.c need from the files above them, which
 * call them: they reach it only through this table (cs->up, clientsrv.c's),
 * so that calls between the files go one way.
 */
struct client_upcalls {
	/* evloop_fd_cb of a client's socket and of its rings' bell (arg: the
	 * client): reads, writes, notes hang-ups (clientconn.c's client_event). */
	evloop_fd_cb *event;
	/* Message id of local client client was delivered (clientsrv_acked). */
	void (*acked)(struct clientsrv *cs, uint64_t client, uint64_t id);
};

/* ---- clientconn.c -------------------------------------------------------- */
/*
 * What the connection layer calls up for a client's frames (clientreq.c's
 * clientreq_handlers).  Every handler runs inside the client's event; it
 * never closes the client itself but says so by its return value, and it
 * may queue frames to write (clientout.c), which are written after it.
 */
/* Frame m, decoded whole, after the TCP key check and, but for HELLO itself,
 * after the HELLO.  Returns 0 (done: the next frame follows), -ENOSPC
 * (not done: the client is paused and m handed again when memory frees),
 * or -1 (logged, or an ERROR told): the client is closed. */
typedef int client_frame_fn(struct client *c, const struct cp_msg *m);
struct client_handlers {
	/* By frame type; NULL: a frame no client may send (the client is
	 * closed).  A new request is a new entry. */
	client_frame_fn *frame[CP_TYPE_MAX];
	/* A frame of which header h and the first avail bytes of its body
	 * (body) are in the input buffer, the rest not yet: it may take the
	 * rest from the socket or ring itself.  Returns 1 (the frame is
	 * consumed), 0 (read it whole first, then hand it to frame[]), 2
	 * (the rest is being written into the ring: read nothing more of
	 * this client before its bell rings, then call head again), -ENOSPC
	 * (paused, as above) or -1 (closed). */
	int (*head)(struct client *c, const struct cp_hdr *h, const uint8_t *body, size_t avail);
	/* c is being closed: what its frames set up is undone (c is still
	 * whole, but off the client list). */
	void (*closed)(struct client *c);
};

/* evloop_fd_cb of the listening sockets (arg: the server): accepts
 * clients within max_clients and max_clients_per_user. */
void clientconn_accept(int fd, unsigned events, void *arg);
/* Serves fd, a connected stream socket of another kind of listener
 * (kind: "rdma", clientrdma.c's relay), as a keyed client from `from`
 * (for the log), within the same limits: refused, it is told why and
 * closed. */
void clientconn_adopt(struct clientsrv *cs, int fd, const char *kind, const char *from);
struct client *client_by_id(struct clientsrv *cs, uint64_t id);
/* The socket's events (see evloop.h): reads it, writes it, notes hang-ups. */
void client_event(int fd, unsigned events, void *arg);
/* Closes c now (logged with why) and frees it; not from inside its event. */
void client_close(struct client *c, const char *why);
/* Dooms connections with no HELLO within clients.hello_timeout. */
void clientconn_expire(struct clientsrv *cs, uint64_t now_ns);
/* Closes the doomed clients and reads on from those paused for memory
 * (cs->resume_pending said it may have freed). */
void clientconn_resume(struct clientsrv *cs);

/* ---- clientreq.c --------------------------------------------------------- */
/* HELLO, SEND, RESUME, PEERQ, TAKEN, BYE, and the direct read of a large
 * SEND's payload into a link's send buffer. */
extern const struct client_handlers clientreq_handlers;

/* ---- clientep.c ---------------------------------------------------------- */
/* ep_drop_fn (arg: the server): m, from a link or a local client, will
 * never be delivered: the link is told, or the local sender gets an ERROR. */
void clientep_drop(void *arg, struct endpoint *e, struct rb_msg *m, enum ep_drop why);
/* e lost its process: messages for an anonymous name can never be
 * delivered; a named one keeps them, and its owner, for a while. */
void clientep_detach(struct clientsrv *cs, struct endpoint *e);
/* Queues m for e (and writes it if e is open), or drops it if nobody has
 * e open and its share is full. */
void clientep_enqueue(struct clientsrv *cs, struct endpoint *e, struct rb_msg *m);

/* ---- clientout.c --------------------------------------------------------- */
/* Queues a control frame (ACKED, LOST, ERROR, WELCOME).  Returns 0 (also
 * when nothing is queued because the client is gone, or is doomed for
 * leaving more than queue_max bytes unread), or -EINVAL/-ENOMEM. */
int client_ctl_append(struct client *c, const struct cp_msg *m);
/* Tells the peer of fd, best effort, why it is closed next (an ERROR with
 * msg_id 0): a connection refused at accept, or one failing its key check. */
void client_tell_closing(int fd, int err, const char *text);
void client_send_error(struct client *c, uint64_t id, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Answers PEERQ: the state of the link to cluster. */
void client_answer_peer(struct client *c, const char *cluster);
void client_flush_acks(struct client *c);
/* Notes that c's message id was delivered: coalesced into one ACKED with
 * the ids next to it, written at the next flush. */
void client_ack(struct client *c, uint64_t id);
/* Watches the socket for what the client's state needs now. */
void client_set_events(struct client *c);
void client_hung_up(struct client *c, const char *why);
/* Writes control frames and deliveries while the socket takes them. */
void client_write(struct client *c);
/* Where m, from a link for c's endpoint, its header just read, is
 * reassembled: in c's ring if its frame would be the next thing c reads
 * (clientplace_start), else NULL. */
uint8_t *client_place(struct client *c, struct rb_msg *m);
/* m, reassembled in c's ring, is whole: it is queued before every
 * message not yet written, published, and counts as written. */
void client_deliver_placed(struct client *c, struct rb_msg *m);
/* The fence kept for link l, or NULL. */
struct fence *client_fence(struct client *c, const struct link *l);
void client_report_lost(struct client *c, struct link *l, uint64_t id, const char *reason);
/* TAKEN: the application took the first count DELIVERs of this connection;
 * they count as delivered now (a count already covered changes nothing).
 * Returns 0, or -1 (logged) if count goes beyond what was written or the
 * client did not agree to TAKEN: the client must be closed. */
int client_on_taken(struct client *c, uint64_t count);
/* Counts every DELIVER written to c as taken (see client_pause). */
void client_take_written(struct client *c);

/* c must be closed at the next safe point (the server's resume pass). */
static inline void client_doom(struct client *c)
{
	c->doomed = 1;
	c->cs->resume_pending = 1;
}

/* ---- clientshm.c -------------------------------------------------------- */
/* HELLO asked for rings: sets them up within clients.shm_ring and the
 * user's input_per_user.  Returns 1 (WELCOME says CP_F_SHM), or 0: the
 * client goes on over the socket (not a unix client, off, over the limit,
 * or no memory: logged). */
int clientshm_offer(struct client *c);
/* Writes the queued WELCOME and the SHM frame carrying the file and the
 * eventfds; from here on the client's bytes go through the rings.
 * Returns 0, or -1 (logged): the client must be closed. */
int clientshm_start(struct client *c);
void clientshm_free(struct client *c);
/* The ring the client writes to, or NULL on the socket. */
struct shmring *clientshm_in_ring(struct client *c);
/* The ring ldsd writes to the client, or NULL (the socket, or broken). */
struct shmring *clientshm_out_ring(struct client *c);
/* The count of DELIVERs taken that the client wrote into its rings'
 * header (as TAKEN's; unchecked), ahead of its TAKEN frame. */
uint64_t clientshm_taken(struct client *c);
/* Bytes were published in that ring: wakes the client if it sleeps. */
void clientshm_wake_reader(struct client *c);
/* Fills the regions iov[0..n) (the first from offset skip) from that
 * ring: left there (sendbuf_defer, where they are blocks of sb) or copied
 * out.  0, -EIO (not all there), -EPROTO (a broken ring). */
int clientshm_fill(struct client *c, struct sendbuf *sb, const struct iovec *iov, int n, size_t skip);
/* Copies the next len bytes in the ring, leaving them there: 1, or 0 if
 * fewer wait (or the ring is broken: the next read says so). */
int clientshm_peek(struct client *c, void *buf, size_t len);
/* The ring holds need bytes to read: 1; else 0 (the client rings when it
 * has written more), or -1 (never: more than the ring, a broken ring, or
 * the socket polled readable: the client is gone). */
int clientshm_await(struct client *c, size_t need);
/* Every CS_TICK_MS: payload regions that waited in the ring since the
 * last tick are copied into their blocks. */
void clientshm_tick(struct client *c);
/* Watches the socket (for its end only) and rings our own bell if bytes
 * wait that nobody rang for. */
void clientshm_set_events(struct client *c);
/* The client's turn ended with work left (bytes to write: always; to
 * read: if its ring holds some, else the client is asked to ring us):
 * rings our own bell, so that the event loop comes back to it next
 * round, as a ready socket would. */
void clientshm_kick(struct client *c, int always);
/* ---- clientplace.c ------------------------------------------------------ */
/* Where m (from a link, its header just read; hdr is its DELIVER frame's
 * header, hl bytes) is reassembled: right after hdr at the end of c's
 * ring, m->store set; or NULL (no ring, too small, another there, no
 * room): in a buffer of its own.  The caller makes sure nothing waits to
 * be written to c before it. */
uint8_t *clientplace_start(struct client *c, struct rb_msg *m, const uint8_t *hdr, size_t hl);
/* Asked when something waits to be written to c: 1 if a message being
 * reassembled in c's ring holds it back (nothing may be written after
 * it); one that has for 20 ms is moved into a buffer of its own first
 * (0). */
int clientplace_busy(struct client *c);
/* m, the message being reassembled in c's ring, is whole: its frame is
 * published.  It stays there, kept, until freed (taken) or moved. */
void clientplace_publish(struct client *c, struct rb_msg *m);
/* Every CS_TICK_MS: a message being reassembled for longer than a tick
 * is moved into a buffer of its own. */
void clientplace_tick(struct client *c);
/* c goes: every message still in its ring is moved into a buffer of its
 * own (for the next process on the name). */
void clientplace_free(struct client *c);

/* read(2), writev(2) and FIONREAD on the client's bytes, socket or rings.
 * A broken ring is -1 with errno EPROTO, logged, and dooms the client. */
ssize_t client_read(struct client *c, void *buf, size_t len);
ssize_t client_writev(struct client *c, const struct iovec *iov, int n);
int client_waiting(struct client *c, size_t *n);

/* ---- clientkey.c --------------------------------------------------------- */
/* Notes where a new TCP client comes from (accept's address), for the log. */
void clientkey_from(struct client *c, const struct sockaddr *sa, socklen_t len);
/* Queues the CHALLENGE a new TCP client must answer before HELLO.
 * Returns 0 or -errno. */
int clientkey_challenge(struct client *c);
/* Checks a TCP client's first frame, its PROOF, against clients.tcp's key
 * and answers with ldsd's PROOF.  Returns 0, or -1 (logged, the client told
 * why) if the client must be closed. */
int clientkey_check(struct client *c, const struct cp_msg *m);

/* ---- clientrdma.c -------------------------------------------------------- */
/* Listens on clients.rdma if set: each RDMA client's byte stream is
 * relayed (transports/rdma/rdx_relay.h) to a socketpair whose other end
 * is served like a TCP client (clientconn_adopt).  With no RDMA device it
 * logs why once and returns 0: the other listeners are served.  -1
 * (logged) when the address cannot be listened on. */
int clientrdma_start(struct clientsrv *cs);
void clientrdma_stop_accepting(struct clientsrv *cs);
/* Ends every relay and the instance. */
void clientrdma_free(struct clientsrv *cs);

/* ---- clientsock.c -------------------------------------------------------- */

/* Where a SEND's payload comes from: the input buffer, then - when the
 * rest of the frame is waiting in the socket - the socket itself, read
 * straight into the send buffer's blocks instead of through the input
 * buffer. */
struct payload_src {
	const uint8_t *have;
	size_t have_len;
	int fd;                       /* -1: have holds the whole payload */
	struct client *ring;          /* else the rest is in this client's ring */
	int err;                      /* reading fd failed: the client is gone */
};
/* sb_fill_fn over a struct payload_src: copies what is buffered, reads the
 * rest. */
int clientsock_fill_payload(void *arg, struct sendbuf *sb, const struct iovec *iov, int n);

#endif
