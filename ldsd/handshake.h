/*
 * handshake.h - the handshake of a link's stream as a state machine
 * (docs/protocol.md, "Handshake"), and the accepted conns that have not
 * yet authenticated (admission.h).
 *
 * A table of (states, event, action, next state), in the manner of
 * OpenBSD ospfd's iface_fsm[]: hs_dispatch finds the row, runs its action
 * and moves the stream to the row's next state through stream_set_state,
 * the one place a state changes and is logged.  A pair with no row is
 * refused: logged (debug, as unauthenticated peers could flood the log;
 * admission logs the closed conn, rate-limited) and -1 returned, so that
 * the caller closes the stream.
 *
 * Private to the link's modules.  The handshake calls the stream below it
 * and reports to the link above through struct hs_upcalls; it reads the
 * link's configuration (link_int.h) but calls no link function.
 */
#ifndef LDS_HANDSHAKE_H
#define LDS_HANDSHAKE_H

#include <stdint.h>

#include "stream.h"

enum hs_event {
	HS_EV_CONNECTED,   /* the connector's transport connected */
	HS_EV_HELLO,       /* frames received */
	HS_EV_CHALLENGE,
	HS_EV_AUTH,
	HS_EV_READY,
	HS_EV_REFUSE,
	HS_EV_OTHER,       /* any other frame before the stream is up */
	HS_EV_COUNT
};
extern const char *const hs_event_names[HS_EV_COUNT];

/* What the handshake asks of the link; s->link is set in each. */
struct hs_upcalls {
	/* Listener: the link for the cluster a HELLO names, or NULL. */
	struct link *(*identify)(struct daemon *d, const char *cluster);
	/* Listener: the HELLO was accepted (the peer is not authenticated
	 * yet): the link's transport options go on the conn. */
	void (*identified)(struct stream *s);
	/* The peer proved it holds the key; instance is its session's, and a
	 * new one lost its state.  Closes no stream but s's rivals. */
	void (*authentic)(struct stream *s, uint64_t instance);
	/* Queues the link's ACK on s: 0 or -ENOBUFS. */
	int (*queue_ack)(struct stream *s);
	/* s takes slot idx, just before it goes up; the peer asked for
	 * nstreams slots (0: no change). */
	void (*attach)(struct stream *s, unsigned idx, unsigned nstreams);
};

/* A row of the table: in any of `states` (a mask of 1 << enum
 * stream_state), event ev runs action; if it returns 0 the stream moves
 * to next, or is closed by the caller if next is HS_CLOSE. */
#define HS_CLOSE (-1)
struct hs_transition {
	unsigned states;
	enum hs_event ev;
	int (*action)(const struct hs_upcalls *up, struct stream *s, const struct wire_frame *f);
	int next;
};

/* The row for (st, ev), or NULL: the pair is refused. */
const struct hs_transition *hs_lookup(enum stream_state st, enum hs_event ev);
/* Runs event ev (frame f, NULL for HS_EV_CONNECTED) on s.  0, or -1: the
 * caller closes s. */
int hs_dispatch(const struct hs_upcalls *up, struct stream *s, enum hs_event ev, const struct wire_frame *f);
/* The same for a frame: its event is its type. */
int hs_frame(const struct hs_upcalls *up, struct stream *s, const struct wire_frame *f);

/* The link's encryption setting as HELLO and CHALLENGE carry it, and its name. */
uint8_t hs_encryption(const struct link *l);
const char *hs_encryption_name(uint8_t e);

/* A conn accepted on a listener, in stream s (ST_WAIT_HELLO): admitted
 * and kept on the list of unauthenticated conns, or closed and freed. */
void hs_accept(struct stream *s, struct lds_tp_conn *c);
/* s authenticated (why NULL) or failed (why logged by admission,
 * rate-limited): it no longer counts against the limits on connections
 * before authentication. */
void hs_unpend(struct stream *s, const char *why);
/* Closes accepted conns not authenticated within timeout s of being
 * accepted; all of d's (at exit). */
void hs_tick_pending(uint64_t now_ns, double timeout);
void hs_close_pending(struct daemon *d);

#endif
