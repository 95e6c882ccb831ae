/*
 * link.h - one peer gateway: its streams, handshake, keepalive, reconnect
 * back-off, and the session (sendbuf/recvbuf) that survives reconnects.
 *
 * A link stripes blocks over up to `streams` transport conns.  When a
 * stream breaks (error, EOF, or no byte for inactivity_timeout) its
 * unacknowledged blocks go out at once on the surviving streams and the
 * slot reconnects with capped exponential back-off.  If the peer comes back
 * with a different instance id it lost its state: the session is reset and
 * every sender of an unacknowledged message is told (clientsrv_lost).
 *
 * Implemented by link.c and the modules link_int.h lists (the file of
 * each group is named above it); their state is private to them.
 */
#ifndef LDS_LINK_H
#define LDS_LINK_H

#include <stdint.h>
#include <stdio.h>

#include "daemon.h"
#include "endpoint.h"
#include "recvbuf.h"
#include "sendbuf.h"

/* Creates the link for peer cfg over tp, the instance of its transport
 * kind ops (daemon_transport), not yet connected; cfg must live as long
 * as the link, or until link_reconfigure or link_retire.  Returns NULL and
 * logs on failure. */
struct link *link_new(struct daemon *d, const struct config_peer *cfg, const struct lds_transport_ops *ops,
		      struct lds_transport *tp);
/* A link made while the daemon runs (a reload) starts a new session: it
 * tells its peer a fresh instance id instead of the daemon's, so that the
 * peer drops the state it kept for an earlier link to us (sequence
 * numbers this link never sent) and reports what it lost.  0 or -EIO. */
int link_new_session(struct link *l);
void link_free(struct link *l);
/* Starts connecting (role connect); listen-role links wait for the peer. */
void link_start(struct link *l);

/* The link to cluster, or NULL. */
struct link *link_find(struct daemon *d, const char *cluster);
const char *link_name(const struct link *l);

/* The link's recv_memory (ldsd.conf), what its undelivered messages share. */
size_t link_recv_memory(const struct link *l);

/* linkmsg.c */
/* Largest message this link carries. */
size_t link_max_msg(const struct link *l);
/* Queues one message for the peer.  Returns 0, -ENOSPC (send memory full:
 * the caller waits for clientsrv_space), or -EMSGSIZE. */
int link_send(struct link *l, const struct wire_record *rec, const void *payload, uint64_t client);
/* The same with the payload written into the send buffer by fill(arg, ...)
 * (see sendbuf_append_from); also returns fill's error. */
int link_send_from(struct link *l, const struct wire_record *rec, sb_fill_fn *fill, void *arg, uint64_t client);
/* The client server wrote (or discarded) a message that came over l. */
void link_delivered(struct link *l, struct rb_msg *m);
/* The client server drops m, which came over l, undelivered (why: see
 * endpoint.h): the peer is told and reports it lost to its sender. */
void link_undelivered(struct link *l, struct rb_msg *m, enum ep_drop why);
/* m came over l for this gateway's reserved endpoint ldsd.lost: the
 * peer's report of our messages it dropped (lostrep.h).  Consumes m. */
void link_peer_lost(struct link *l, struct rb_msg *m);
/* link.c */
/* True if every message sent over l was acknowledged. */
int link_idle(const struct link *l);

/* A conn accepted on a listener: the link is found from its HELLO. */
void link_accept(struct daemon *d, const struct lds_transport_ops *ops, struct lds_transport *tp,
		 struct lds_tp_conn *c);

/* Periodic work: keepalives, inactivity, reconnects, ACK refresh. */
void link_tick(struct link *l, uint64_t now_ns);
/* Closes accepted conns that did not authenticate within timeout s of
 * being accepted, whatever their handshake state. */
void link_tick_pending(uint64_t now_ns, double timeout);
/* Closes d's accepted conns that have not authenticated (at exit). */
void link_close_pending(struct daemon *d);
/* The conns' upcalls: they drive links' streams.  The daemon hands its
 * transports these with its listeners' own (accepted, accept_failed). */
extern const struct lds_tp_upcalls link_upcalls;
/* Once per loop round: sends coalesced ACKs and new data. */
void link_flush(struct link *l);
/* Starts draining: the peer gets no more window, only a final ACK of what
 * arrived and was delivered. */
void link_drain(struct link *l);
/* True when nothing of ours is unacknowledged and the peer has been sent an
 * ACK covering every delivery: exiting now loses nothing. */
int link_drained(const struct link *l);
/* Stops everything: BYE on every stream, then closes them. */
void link_shutdown(struct link *l);
/* The peer was taken out of the configuration: shuts the link down, and
 * every sender of a message it did not deliver is told it was lost, for
 * why.  The link then takes no messages (link_send: -ENOTCONN), but stays
 * valid for what still refers to it (messages it delivered, jobs of the
 * peer) until link_free; it keeps a copy of its config, without the key.
 * why must outlive the link. */
void link_retire(struct link *l, const char *why);
/* Takes p's settings (a reload; p replaces the link's config from now
 * on, the old one may be freed after this returns), for those that can change while the
 * link runs: timeouts, keepalive, reconnect back-off, streams (connect
 * side), congestion control and socket buffers (streams connected from
 * now on), key (handshakes from now on).  The caller has made sure that
 * p's role, address, port, transport and buffer sizes are the link's. */
void link_reconfigure(struct link *l, const struct config_peer *p);

/* linkauto.c */
/* Sets the number of streams of a connect-side link from now on: n
 * (1..CONFIG_MAX_STREAMS), or 0 for "auto" (hill climbing from the count
 * it has now, within streams_min..streams_max).  New streams connect at
 * once; streams beyond n are retired, as "auto" does, once their blocks
 * are acknowledged.  Returns 0, -EINVAL (n out of range, or a listen-side
 * link, whose peer decides) or -ENOMEM. */
int link_set_stream_count(struct link *l, unsigned n);

/* linkstatus.c */
/* Status as JSON (one object) or text, for ldsctl. */
void link_status_json(const struct link *l, FILE *out);
void link_status_text(const struct link *l, FILE *out);
/* Seconds since the link's last stream went down; 0 while one is up. */
double link_down_for(const struct link *l);
/* Why the last stream that never came up failed ("" if none did). */
const char *link_last_error(const struct link *l);
/* Bytes of blocks the peer reported received, each counted once when
 * first reported (what the path carried, block by block), and bytes of
 * blocks received from it; since this ldsd started. */
void link_byte_counts(const struct link *l, uint64_t *out, uint64_t *in);

/* link.c */
/* Fault injection for tests: breaks stream idx (-1: all) at once, or
 * stalls it (stops reading and writing it without closing, as a black hole
 * would).  Return how many streams were affected. */
int link_fault_break(struct link *l, int idx);
int link_fault_stall(struct link *l, int idx);

#endif
