/*
 * mw_port.h - how a master or worker exchanges runtime messages with its
 * peers, behind a small ops table so that the master does not know whether
 * a peer is a worker rank, a communication manager (a "worker" with a deep
 * queue that forwards over ldsd) or, later, something else.
 *
 * Contract of every port:
 *  - send() copies header and payload and returns at once (the transfer
 *    progresses in later calls); messages to one peer arrive in order.
 *  - poll() returns one received message or none, never blocks; the
 *    message's payload stays valid until the next poll().
 *  - wait() blocks until a message may be ready or `seconds` passed, and
 *    progresses sends meanwhile; it answers at once (it spins).
 *  - nap() is wait() for a caller that can be late: it sleeps, so that
 *    it costs almost no CPU; while a send is unfinished it looks for
 *    messages and progresses sends every MW_NAP_SLICE.
 *  - flush() blocks until every send completed, but those to lost peers.
 *  - lose() gives up on a peer (a worker that died): sends to it that
 *    have not completed, and later ones, are abandoned, never waited for
 *    (MPI gives no error for a dead rank; the sends just never end).
 *  - beat() starts a heartbeat: whenever nothing was sent for interval
 *    seconds, h goes to peer by itself, also while the caller computes
 *    (a thread; every op is then serialized with it).  h NULL stops it
 *    (close() does too), so that nothing follows a last message.
 * Errors are negative errno values; single-threaded but for beat()'s thread.
 */
#ifndef MW_PORT_H
#define MW_PORT_H

#include <stddef.h>

#include "launcher/mw_proto.h"

#define MW_NAP_SLICE 0.0005     /* s */

struct mw_msg {
	unsigned peer;                  /* 0 .. npeers-1 */
	struct mw_hdr h;
	const unsigned char *data;      /* h.len bytes */
};

struct mw_port;

struct mw_port_ops {
	size_t size;                    /* sizeof(struct mw_port_ops) */
	const char *name;
	int (*send)(struct mw_port *p, unsigned peer, const struct mw_hdr *h, const void *data);
	int (*poll)(struct mw_port *p, struct mw_msg *m);
	int (*wait)(struct mw_port *p, double seconds);
	int (*nap)(struct mw_port *p, double seconds);
	int (*flush)(struct mw_port *p);
	void (*close)(struct mw_port *p);
	void (*lose)(struct mw_port *p, unsigned peer);
	int (*beat)(struct mw_port *p, unsigned peer, const struct mw_hdr *h, double interval);
};

struct mw_port {
	const struct mw_port_ops *ops;
	unsigned npeers;
};

static inline int mw_port_send(struct mw_port *p, unsigned peer, const struct mw_hdr *h, const void *data)
{
	return p->ops->send(p, peer, h, data);
}

static inline int mw_port_poll(struct mw_port *p, struct mw_msg *m)
{
	return p->ops->poll(p, m);
}

static inline int mw_port_wait(struct mw_port *p, double seconds)
{
	return p->ops->wait(p, seconds);
}

static inline int mw_port_nap(struct mw_port *p, double seconds)
{
	return p->ops->nap(p, seconds);
}

static inline int mw_port_flush(struct mw_port *p)
{
	return p->ops->flush(p);
}

static inline void mw_port_close(struct mw_port *p)
{
	p->ops->close(p);
}

static inline void mw_port_lose(struct mw_port *p, unsigned peer)
{
	p->ops->lose(p, peer);
}

static inline int mw_port_beat(struct mw_port *p, unsigned peer, const struct mw_hdr *h, double interval)
{
	return p->ops->beat(p, peer, h, interval);
}

#endif
