/*
 * clientsrv.h - the socket local processes (liblds) connect to.
 *
 * Owns endpoints ("cluster/name") and their delivery queues.  An endpoint's
 * queue outlives a client connection: a process that reconnects under the
 * same name gets what arrived meanwhile.  A SEND is accepted only whole and
 * only when the link has room; otherwise the client is not read from until
 * clientsrv_space says there is room (back-pressure reaches lds_send).  A
 * client that hangs up meanwhile is still read to its end then.
 * Every frame from a client is size- and syntax-checked; a bad one gets an
 * ERROR naming what was wrong and, if the stream cannot be resynchronised,
 * the connection is closed.  Other clients are unaffected.
 *
 * Every client is bounded (config.h, struct config_clients): connections
 * per server and per uid, time to HELLO, the frame it may send (checked on
 * the header, before any buffer grows), notices it may leave unread.  A
 * name belongs to the uid that opened it (SO_PEERCRED) while it is open,
 * while messages wait for it and for undelivered_ttl after; messages for a
 * name nobody has open are held within a share of their link's memory and
 * for undelivered_ttl (endpoint.h), then dropped and reported (a link's
 * message: link_undelivered; a local one: ERROR to its sender).
 *
 * Names starting with "ldsd." belong to the gateway (execmsg.h): no client
 * may open one or send to one of this cluster (but an END to its
 * ldsd.exec, jobend.h), and messages from links for them go to the exec
 * service (jobexec_request) instead of a client.
 */
#ifndef LDS_CLIENTSRV_H
#define LDS_CLIENTSRV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "daemon.h"
#include "recvbuf.h"

struct link;

/* Binds the unix socket (and the TCP address if configured).  Returns NULL
 * and logs on failure. */
struct clientsrv *clientsrv_new(struct daemon *d);
/* Gives every link that has none its share of recv_memory for messages
 * nobody has open (clients.undelivered_share): at start and after a
 * reload added links.  0, or -1 (logged) when no room is left. */
int clientsrv_links_changed(struct clientsrv *cs);
void clientsrv_free(struct clientsrv *cs);
/* Stops accepting new clients (drain). */
void clientsrv_stop_accepting(struct clientsrv *cs);

/* Whether clients.rdma can be served on this machine: 0, or -errno with
 * why (no RDMA device, no rdma kind built in) in why, for the log and
 * `ldsd --check`. */
int clientrdma_probe(char *why, size_t len);

/* A message from a peer for a local endpoint; cs owns m from now on and
 * calls link_delivered(from, m) once it is written to the client. */
void clientsrv_deliver(struct clientsrv *cs, struct link *from, struct rb_msg *m);
/* Where m, from a peer, its header just read, may be reassembled: in the
 * ring of the process that has its endpoint open (clientplace.c), or
 * NULL. */
uint8_t *clientsrv_place(struct clientsrv *cs, struct rb_msg *m);
/* Message id of client was delivered to its destination. */
void clientsrv_acked(struct clientsrv *cs, uint64_t client, uint64_t id);
/*
 * Message id of client, sent over l, was not acknowledged and never will be
 * (it may or may not have reached its destination).  The client is told,
 * and from then on its newer messages to l are reported lost as well (a
 * "fence") until its RESUME says that the application took every LOST
 * naming l (liblds counts them as the application takes the events):
 * otherwise a message already on its way could overtake the application's
 * resends.
 */
void clientsrv_lost(struct clientsrv *cs, struct link *l, uint64_t client, uint64_t id, const char *reason);
/* Link l has send memory again: resume every paused client (a client does
 * not record which link refused it; one that still finds no room pauses
 * again). */
void clientsrv_space(struct clientsrv *cs, struct link *l);
/* Once per loop round: flushes coalesced ACKED notices. */
void clientsrv_flush(struct clientsrv *cs);

/* The job of tag ended (jobend.h): for uid's endpoints, or exec.user's
 * when an exec-service requester asks.  How many messages were dropped,
 * or -EINVAL/-EPERM with why. */
long clientsrv_end_job(struct clientsrv *cs, const char *tag, uid_t uid, char *why, size_t len);

/* True when no connected client has messages or notices waiting to be
 * written to it. */
int clientsrv_drained(const struct clientsrv *cs);

void clientsrv_status_json(const struct clientsrv *cs, FILE *out);
void clientsrv_status_text(const struct clientsrv *cs, FILE *out);

#endif
