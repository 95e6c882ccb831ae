/*
 * transport.h - the one interface between ldsd's core and a transport.
 *
 * A transport provides reliable, ordered byte-stream connections ("conns")
 * to a peer gateway: plain TCP, UDP with its own retransmission, RDMA.  The
 * core stripes a link over several conns, frames the bytes, and recovers
 * from conns that fail; the transport knows nothing of links, frames or
 * sequence numbers, and the core knows nothing of a transport's internals.
 * Pattern: Redis's connection.h (one ops table per kind) and libfabric's
 * providers.
 *
 * Threading: everything runs on the event-loop thread.  Upcalls are made
 * from fd callbacks, never from inside an op, so an upcall handler may call
 * any op, including close on the conn it is told about.
 *
 * Errors are negative errno values.  A conn reports its end exactly once:
 * through upcalls->closed, or by the core calling ops->close (after which
 * no upcall names it again).
 */
#ifndef LDS_TRANSPORT_H
#define LDS_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct lds_transport;
struct lds_tp_conn;
struct lds_tp_listener;

/* What a transport needs from its host (the daemon's event loop). */
struct lds_tp_host {
	void *ctx;
	/* Watch fd for TP_EV_READ/TP_EV_WRITE (0 = registered but quiet);
	 * cb gets the events that fired (TP_EV_ERROR for hang-up/error).
	 * Returns 0 or -errno. */
	int (*watch)(void *ctx, int fd, unsigned events, void (*cb)(int fd, unsigned events, void *arg), void *arg);
	void (*unwatch)(void *ctx, int fd);
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
};

/* Counters and kernel state a transport can report about a conn. */
struct lds_tp_info {
	uint64_t bytes_sent;
	uint64_t bytes_recv;
	uint32_t rtt_us;       /* transport's smoothed RTT, 0 if unknown */
	uint32_t min_rtt_us;   /* its lowest RTT lately: the path without queues; 0 if unknown */
	uint32_t cwnd;         /* congestion window in packets, 0 if unknown */
	uint32_t retransmits;  /* transport-level retransmissions so far */
	char peer[64];         /* "address:port", "[v6 address]:port" */
};

/* Options for connect and listen. */
struct lds_tp_opts {
	const char *congestion;   /* congestion control name or NULL for default */
	size_t sndbuf, rcvbuf;    /* socket buffers, 0 = kernel default/autotune */
	size_t unsent_max;        /* a conn holding more bytes not yet sent than
				     this is not writable; 0 = no limit */
	double connect_timeout;   /* seconds, 0 = transport default */
};

/* send() flags. */
#define LDS_TP_MORE 1u

struct lds_transport_ops {
	const char *name;                /* as in config: "tcp", "udp", "rdma" */

	/* Prepares the transport; -ENODEV if the hardware it needs is
	 * absent (e.g. RDMA: "no RDMA device"). */
	int (*init)(struct lds_transport **tp, const struct lds_tp_host *host, const struct lds_tp_upcalls *up);
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
	 * messages: "address", "socket", "congestion control", "socket
	 * option" or "connect". */
	int (*connect)(struct lds_transport *tp, const char *host, uint16_t port, const struct lds_tp_opts *o,
		       void *ud, struct lds_tp_conn **out, const char **step);

	void (*set_userdata)(struct lds_tp_conn *c, void *ud);
	/* Applies o's congestion control and buffer sizes to an established
	 * conn: a listener accepts before the core knows which link (and so
	 * which options) a conn belongs to.  Returns 0 or -errno; the conn
	 * stays usable either way. */
	int (*set_opts)(struct lds_tp_conn *c, const struct lds_tp_opts *o);

	/* Writes up to the iovecs' total; *sent = bytes taken (may be short).
	 * flags: LDS_TP_MORE says more data follows at once, so the transport
	 * may hold back a partly filled packet; the core then either sends
	 * again or calls push.  Returns 0 (including a short write), -EAGAIN
	 * (nothing taken), or -errno: the conn is broken and the core must
	 * close it. */
	int (*send)(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, unsigned flags, size_t *sent);
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
	/* Turns writable upcalls on or off. */
	void (*want_write)(struct lds_tp_conn *c, int on);
	/* Turns readable upcalls on (the default) or off: a conn not read
	 * from pushes back on its peer. */
	void (*want_read)(struct lds_tp_conn *c, int on);
	/* Ends the conn at once and frees it; pending data is discarded. */
	void (*close)(struct lds_tp_conn *c);
	/* Fills *info; returns 0 or -errno. */
	int (*query)(struct lds_tp_conn *c, struct lds_tp_info *info);
};

/* The registered transports; NULL if name is unknown. */
const struct lds_transport_ops *transport_find(const char *name);
/* Comma-separated names of registered transports, for messages. */
const char *transport_names(void);

#endif
