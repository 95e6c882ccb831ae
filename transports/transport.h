/*
 * transport.h - the one interface between ldsd's core and a transport
 * (version 2; docs/transports.md tells how to add one).
 *
 * A transport carries connections ("conns") to a peer gateway: plain TCP,
 * UDP with its own retransmission, RDMA.  The core stripes a link over
 * several conns, frames what it sends, and recovers from conns that fail;
 * the transport knows nothing of links, frames or sequence numbers, and the
 * core knows nothing of a transport's internals: it asks the capabilities
 * (struct lds_tp_caps) instead of comparing names.  Patterns: libfabric's
 * providers (fi_info attributes, an ops table that starts with its size),
 * Valkey's ConnectionType (per-kind settings, a before-sleep pending hook,
 * a close deferred while callbacks run) and iperf3's struct protocol.
 *
 * Kinds and instances: a kind is a const struct lds_transport_ops,
 * registered by name (transports/registry.c).  The daemon creates one
 * instance (ops->init) per kind its configuration uses and ends it with
 * ops->fini; every listener and conn belongs to one instance.
 *
 * Settings: a kind declares its own peer settings (ops->options, stored in
 * a block of ops->conf_size bytes that the core keeps per peer and never
 * reads).  The core parses them from the peer's group with the same rules,
 * messages and printer as its own settings, so `ldsd --check` refuses a
 * bad one with FILE:LINE: SETTING and prints them back; ops->check then
 * validates them against this machine.
 *
 * Threading: everything runs on the event-loop thread.  Upcalls are made
 * from the transport's fd, timer or pending callbacks, never from inside an
 * op, so an upcall handler may call any op, including close on the conn it
 * is told about: the transport then defers freeing the conn until its
 * callback returns (a reference held around every upcall).
 *
 * Errors are negative errno values.  A conn ends exactly once: the core
 * calls ops->close (after which no upcall but closed names it), or connect
 * fails through upcalls->connected.  upcalls->closed, if set, then tells
 * the core that the transport has let go of the conn and of every buffer
 * it had taken from it.
 */
#ifndef LDS_TRANSPORT_H
#define LDS_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

struct lds_transport;
struct lds_tp_conn;
struct lds_tp_listener;

/* What a transport needs from its host (the daemon's event loop: see
 * ldsd/tphost.h).  Every call gets ctx first. */
struct lds_tp_host {
	void *ctx;
	/* Watch fd for TP_EV_READ/TP_EV_WRITE (0 = registered but quiet);
	 * cb gets the events that fired (TP_EV_ERROR for hang-up/error).
	 * Returns 0 or -errno. */
	int (*watch)(void *ctx, int fd, unsigned events, void (*cb)(int fd, unsigned events, void *arg), void *arg);
	void (*unwatch)(void *ctx, int fd);
	/* Calls cb every interval_ms (>= 1) with the monotonic time until
	 * timer_del: retransmission and keepalive timers of a datagram
	 * transport.  Returns an id > 0 or -errno. */
	int (*timer_add)(void *ctx, unsigned interval_ms, void (*cb)(uint64_t now_ns, void *arg), void *arg);
	void (*timer_del)(void *ctx, int id);
	/* Calls cb once per loop round before the loop sleeps, until
	 * pending_del: the place to hand up what no fd announces (data already
	 * read into memory, a completion queue to drain, re-arm and drain
	 * again).  cb returns > 0 while work remains: the loop then polls
	 * without sleeping.  Returns an id > 0 or -errno. */
	int (*pending_add)(void *ctx, int (*cb)(void *arg), void *arg);
	void (*pending_del)(void *ctx, int id);
};
#define TP_EV_READ  0x1u
#define TP_EV_WRITE 0x2u
#define TP_EV_ERROR 0x4u

/* Calls from a transport into the core.  ud is the conn's or listener's
 * user data.  */
struct lds_tp_upcalls {
	/* Outgoing connect finished: err 0 (conn usable) or -errno (conn is
	 * already gone; do not close it). */
	void (*connected)(struct lds_tp_conn *c, int err, void *ud);
	/* A listener accepted c; the core must set c's user data with
	 * ops->set_userdata before returning, or close it. */
	void (*accepted)(struct lds_tp_listener *l, struct lds_tp_conn *c, void *ud);
	/* A listener's accept failed for lack of descriptors or memory
	 * (err -EMFILE, -ENFILE, -ENOBUFS or -ENOMEM).  The transport has
	 * accepted and closed the connection that waited, with a descriptor
	 * it keeps in reserve for this, so that it does not wait in the
	 * backlog nor wake the loop again; the core pauses the listener
	 * (listener_pause) for a back-off. */
	void (*accept_failed)(struct lds_tp_listener *l, int err, void *ud);
	/* Bytes (or EOF/error, reported by recv) are ready. */
	void (*readable)(struct lds_tp_conn *c, void *ud);
	/* The conn can take more bytes (only while want_write is on). */
	void (*writable)(struct lds_tp_conn *c, void *ud);
	/* Message kinds (LDS_TP_CAP_MESSAGE) only: the transport is done
	 * with the memory of the message sent with ctx (send_msg) - for a
	 * transport that retransmits, once the peer has it.  Called once per
	 * message taken, in the order they were sent; never for messages
	 * still held when the conn closes (closed says those are let go). */
	void (*sent)(struct lds_tp_conn *c, void *ctx, void *ud);
	/* Byte-stream kinds, sends with LDS_TP_HOLD that returned 1: the
	 * transport no longer reads the memory of the oldest such send, of
	 * bytes bytes (what it took).  Once per held send, in the order
	 * sent; never after the conn's close (closed says those are let go).
	 * NULL: the transport holds nothing (send_holds says 0). */
	void (*released)(struct lds_tp_conn *c, size_t bytes, void *ud);
	/* Optional (NULL: not told).  The conn the core closed is gone: the
	 * transport holds nothing of it any more (a transport that sends from
	 * the core's buffers is done with them).  Called exactly once per
	 * ops->close, after the op and after any upcall that was running
	 * returned; c is only a name by then, never to be used. */
	void (*closed)(struct lds_tp_conn *c, void *ud);
};

/* Counters and kernel state a transport can report about a conn. */
struct lds_tp_info {
	uint64_t bytes_sent;
	uint64_t bytes_recv;
	uint32_t rtt_us;       /* transport's smoothed RTT, 0 if unknown */
	uint32_t min_rtt_us;   /* its lowest RTT lately: the path without queues; 0 if unknown */
	uint32_t cwnd;         /* congestion window in packets, 0 if unknown */
	uint32_t retransmits;  /* transport-level retransmissions so far */
	uint32_t mtu;          /* datagram kinds: payload bytes per packet now (the path MTU found); 0 if none */
	/* Zero-copy sends (TCP's MSG_ZEROCOPY; 0 where not used): sends made
	 * so, their completions received, those of them the kernel copied
	 * after all (loopback always does), and sends it refused (copied). */
	uint64_t zc_sends, zc_completed, zc_copied, zc_refused;
	char peer[64];         /* "address:port", "[v6 address]:port" */
};

/* Options for connect and listen: the core's, and the transport's own. */
struct lds_tp_opts {
	const void *conf;         /* the peer's settings block (ops->options), NULL = defaults */
	size_t unsent_max;        /* a conn holding more bytes not yet sent than
				     this is not writable; 0 = no limit */
	double connect_timeout;   /* seconds, 0 = transport default */
};

/* A received message (message kinds): the transport's memory, valid and
 * unchanged by the transport until msg_done.  The core may write into it
 * meanwhile (it opens sealed frames in place), so it must be writable. */
struct lds_tp_msg {
	const uint8_t *data;
	size_t len;
	void *tp_priv;            /* the transport's own, for msg_done */
};

/* send() flags. */
#define LDS_TP_MORE 1u
/* The core leaves the iovecs' memory unchanged until released says so
 * (byte-stream kinds whose send_holds is on): the transport may send
 * from it without copying. */
#define LDS_TP_HOLD 2u

/* What a kind offers: the core asks these, never the name. */
#define LDS_TP_CAP_STREAM    0x01u  /* conns carry a byte stream (send/push/recv/pending; no boundaries kept) */
#define LDS_TP_CAP_MESSAGE   0x02u  /* conns carry messages of at most max_msg bytes, boundaries kept
					(send_msg/recv_msg/msg_done, upcalls->sent) */
#define LDS_TP_CAP_ORDERED   0x04u  /* what is sent on a conn arrives in order */
#define LDS_TP_CAP_RELIABLE  0x08u  /* ...and all of it, or the conn ends */
#define LDS_TP_CAP_INTEGRITY 0x10u  /* the transport detects corrupted data itself */
#define LDS_TP_CAP_REGMEM    0x20u  /* sends are fastest from memory registered with mem_reg (a
					message without a desc is copied into the transport's own) */
#define LDS_TP_CAP_FORK_SAFE 0x40u  /* a forked child may run while conns are open (no pinned memory) */

struct lds_tp_caps {
	unsigned flags;           /* LDS_TP_CAP_* */
	size_t max_msg;           /* LDS_TP_CAP_MESSAGE: the largest message; else 0 */
};

/* One peer setting a kind owns.  The core parses it from the peer group
 * into the settings block at off (size bytes), with these rules:
 *   STRING  non-empty, at most size - 1 bytes, NUL-terminated;
 *   BYTES   an integer or a size string ("4M"), min..max, stored as size_t;
 *   UINT    an integer min..max, stored as unsigned;
 *   SECONDS a number > 0 and at most max, stored as double;
 *   BOOL    true or false, stored as int.
 * and prints it back in `ldsd --check`. */
enum lds_tp_opt_type { LDS_TP_OPT_STRING, LDS_TP_OPT_BYTES, LDS_TP_OPT_UINT, LDS_TP_OPT_SECONDS, LDS_TP_OPT_BOOL };

struct lds_tp_option {
	const char *name;                 /* as in ldsd.conf; must not be a core setting's name */
	enum lds_tp_opt_type type;
	size_t off, size;                 /* within the settings block */
	unsigned long long min, max;      /* BYTES, UINT: range; SECONDS: max */
};

/* What ops->check refuses: the setting to blame (an option's name; NULL:
 * the peer as a whole) and why, one line without the setting's name. */
struct lds_tp_conf_error {
	const char *option;
	char msg[768];
};

/* The ops table's size in this interface version: a table whose size
 * differs is refused (transport_register, transport_find). */
#define LDS_TP_OPS_SIZE sizeof(struct lds_transport_ops)

struct lds_transport_ops {
	size_t size;                     /* LDS_TP_OPS_SIZE: first, always */
	const char *name;                /* as in config: "tcp", "udp", "rdma" */
	struct lds_tp_caps caps;

	/* Peer settings: an array ended by a NULL name (NULL: none), stored
	 * in conf_size bytes (at most LDS_TP_CONF_MAX). */
	const struct lds_tp_option *options;
	size_t conf_size;
	/* Fills a settings block with the defaults (it is zeroed first);
	 * NULL: zeros are the defaults.  May look at the machine (TCP takes
	 * bbr where the kernel has it). */
	void (*conf_defaults)(void *conf);
	/* Validates a parsed settings block against this machine and across
	 * options; NULL: nothing to check.  Returns 0, or -1 with *e filled. */
	int (*check)(const void *conf, struct lds_tp_conf_error *e);

	/* Creates an instance; -ENODEV if the hardware it needs is absent
	 * (e.g. RDMA: "no RDMA device").  host and up are copied. */
	int (*init)(struct lds_transport **tp, const struct lds_tp_host *host, const struct lds_tp_upcalls *up);
	/* Ends an instance whose listeners and conns are all closed. */
	void (*fini)(struct lds_transport *tp);

	/* Starts listening on addr:port (addr NULL = all).  Accepted conns are
	 * reported through upcalls->accepted with the listener's ud. */
	int (*listen)(struct lds_transport *tp, const char *addr, uint16_t port, const struct lds_tp_opts *o,
		      void *ud, struct lds_tp_listener **out);
	void (*listener_close)(struct lds_tp_listener *l);
	/* Stops accepting (paused != 0: connections wait in the kernel's
	 * backlog) or starts again.  Returns 0 or -errno. */
	int (*listener_pause)(struct lds_tp_listener *l, int paused);

	/* Starts connecting to host, a numeric address (the core looks names
	 * up itself, off the event loop: a transport must not block);
	 * completion comes through upcalls->connected.  Returns 0 with *out
	 * set, or -errno with no conn and *step naming what failed, for
	 * messages ("address", "socket", "connect", or the transport's own
	 * words, e.g. TCP's "congestion control \"bbr\""), valid until the
	 * next op on the instance. */
	int (*connect)(struct lds_transport *tp, const char *host, uint16_t port, const struct lds_tp_opts *o,
		       void *ud, struct lds_tp_conn **out, const char **step);

	void (*set_userdata)(struct lds_tp_conn *c, void *ud);
	/* Applies o's settings to an established conn: a listener accepts
	 * before the core knows which link (and so which settings) a conn
	 * belongs to.  Returns 0 or -errno; the conn stays usable either way.
	 * NULL: nothing to apply. */
	int (*set_opts)(struct lds_tp_conn *c, const struct lds_tp_opts *o);

	/* Byte-stream kinds (LDS_TP_CAP_STREAM): send, push, recv, pending.
	 * Message kinds leave them NULL and set send_msg, recv_msg, msg_done.
	 *
	 * Writes up to the iovecs' total; *sent = bytes taken (may be short).
	 * flags: LDS_TP_MORE says more data follows at once, so the transport
	 * may hold back a partly filled packet; the core then either sends
	 * again or calls push.  Returns 0 (including a short write), -EAGAIN
	 * (nothing taken), or -errno: the conn is broken and the core must
	 * close it.  With LDS_TP_HOLD, 1 instead of 0 if the transport goes
	 * on reading the bytes it took until upcalls->released. */
	int (*send)(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, unsigned flags, size_t *sent);
	/* Optional (NULL: never).  Whether sends on c may hold their memory
	 * (LDS_TP_HOLD): fixed once the conn is set up (connect, set_opts);
	 * 0 unless the core handed a released upcall. */
	int (*send_holds)(struct lds_tp_conn *c);
	/* Sends now what an LDS_TP_MORE send held back. */
	void (*push)(struct lds_tp_conn *c);
	/* Reads up to the iovecs' total, filling them in order; *got = bytes
	 * read.  Returns 0 with *got > 0, -EAGAIN, -EPIPE at orderly end of
	 * stream, or -errno. */
	int (*recv)(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, size_t *got);
	/* Bytes that recv could take now without waiting (0 if unknown): the
	 * core reads a frame straight to where it belongs when it is all
	 * there. */
	size_t (*pending)(struct lds_tp_conn *c);
	/* Optional (NULL: any byte wakes).  Byte-stream kinds: the next
	 * readable upcall is wanted once bytes can be read (the transport
	 * may wake sooner: memory pressure, a closed window, end of stream);
	 * 1 restores the default.  The core waits so for the rest of a DATA
	 * frame, to read it whole in one call instead of a segment a wake. */
	void (*rx_lowat)(struct lds_tp_conn *c, size_t bytes);
	/* Optional (NULL: the opts' unsent_max stays).  Byte-stream kinds:
	 * from now on the conn is writable only while it holds fewer than
	 * bytes not yet sent (0: no limit).  The core raises the limit where
	 * a stream sends fast, so that its writes are not woken every few
	 * segments. */
	void (*tx_unsent)(struct lds_tp_conn *c, size_t bytes);
	/* Message kinds: takes one message, the iovecs' total (1 to
	 * caps.max_msg bytes), whole or not at all.  The transport may keep
	 * pointing into the iovecs' memory until upcalls->sent(c, ctx) (or the
	 * conn's close): the core leaves it unchanged until then.  desc is
	 * NULL or, per iovec, what mem_reg returned for the memory it lies in
	 * (NULL entries: not registered).  Messages arrive whole, in order,
	 * once (LDS_TP_CAP_RELIABLE) or the conn ends.  Returns 0 (taken),
	 * -EAGAIN (no room now: nothing taken; ask for a writable upcall),
	 * -EMSGSIZE, or -errno: the conn is broken and the core must close it. */
	int (*send_msg)(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx);
	/* Message kinds: the next message received, in the transport's
	 * memory (*m), which the core hands back with msg_done before asking
	 * for another.  Returns 0, -EAGAIN, -EPIPE at orderly end, or -errno. */
	int (*recv_msg)(struct lds_tp_conn *c, struct lds_tp_msg *m);
	void (*msg_done)(struct lds_tp_conn *c, struct lds_tp_msg *m);
	/* LDS_TP_CAP_REGMEM kinds (else NULL): registers [addr, addr+len) with
	 * the instance for sends and sets *desc for send_msg; 0 or -errno.
	 * The core registers long-lived buffers once, never on the data path,
	 * and deregisters them only when no message using them is held.
	 * Registration pins whole pages and (RDMA: ibv_fork_init) hides them
	 * from a forked child: register page-aligned memory holding nothing
	 * else. */
	int (*mem_reg)(struct lds_transport *tp, void *addr, size_t len, void **desc);
	void (*mem_dereg)(struct lds_transport *tp, void *desc);
	/* Turns writable upcalls on or off. */
	void (*want_write)(struct lds_tp_conn *c, int on);
	/* Turns readable upcalls on (the default) or off: a conn not read
	 * from pushes back on its peer. */
	void (*want_read)(struct lds_tp_conn *c, int on);
	/* Ends the conn at once; pending data is discarded.  No upcall but
	 * closed names it afterwards.  Safe inside any upcall, on that conn
	 * too: freeing waits until the upcall returns. */
	void (*close)(struct lds_tp_conn *c);
	/* Fills *info; returns 0 or -errno. */
	int (*query)(struct lds_tp_conn *c, struct lds_tp_info *info);
	/* The kind's part of a link's status JSON, for the settings block
	 * conf: members `,"key":value` under the kind's own keys (the link's
	 * own keys are the same for every transport).  NULL: nothing to add. */
	void (*status)(const void *conf, FILE *out);
	/* A few words on conf for the link's one-line summary, in buf;
	 * returns buf.  NULL: none. */
	const char *(*describe)(const void *conf, char *buf, size_t len);
	/* Optional (NULL: the kind runs wherever it is built).  Whether this
	 * machine can run the kind now: 0, or -errno (-ENODEV: the hardware
	 * is absent) with one line in buf saying what is missing and what to
	 * use instead.  init fails with the same error; the core logs the
	 * line for each peer and listener of the kind and serves the others,
	 * and `ldsd --check` prints it as a warning. */
	int (*probe)(char *buf, size_t len);
	/* Optional (NULL: none).  The instance's counts of input it dropped
	 * (datagrams from unknown sources, malformed or replayed packets...),
	 * as JSON members `"key":value,...` without braces: each of its
	 * links' status shows them as "transport_dropped", and the metrics
	 * export them. */
	void (*dropped)(struct lds_transport *tp, FILE *out);
};

/* The most bytes a kind's settings block may take (ops->conf_size). */
#define LDS_TP_CONF_MAX 128

/* The registered kind of that name, NULL if none. */
const struct lds_transport_ops *transport_find(const char *name);
/* The i-th registered kind, NULL past the last: for listings and tests. */
const struct lds_transport_ops *transport_at(size_t i);
/* Adds a kind at run time (a test's transport; the built-in ones are in
 * registry.c's table).  Returns 0, -EINVAL for a table whose size is not
 * LDS_TP_OPS_SIZE or that lacks a name or an op, -EEXIST for a name
 * already taken, -ENOSPC when the registry is full. */
int transport_register(const struct lds_transport_ops *ops);
/* Comma-separated names of registered kinds, for messages. */
const char *transport_names(void);

#endif
