/*
 * rdmaclient.h - liblds's path to a gateway over RDMA (rdma://HOST:PORT,
 * ldsd's clients.rdma; docs/rdma.md "The client path").
 *
 * The handle keeps speaking client frames on a socket: one end of a
 * socketpair, whose other end a relay (transports/rdma/rdx_relay.h)
 * carries over an RDMA conn of the rdma kind, on a thread of its own
 * with its own small loop (tploop.h).  The thread ends when the handle
 * closes its socket or the gateway's side ends, and frees everything.
 */
#ifndef LDS_RDMACLIENT_H
#define LDS_RDMACLIENT_H

#include <stdint.h>

#include "transports/transport.h"

/* Connects to host (a name or address) and port over the rdma kind by
 * deadline (deadline.h).  The handle's end of the socketpair
 * (nonblocking), or -errno: -ENODEV with no RDMA device (or a liblds
 * built without rdma-core), -EHOSTUNREACH when host does not resolve. */
int rdmaclient_connect(const char *host, const char *port, int64_t deadline);
/* The same over any message kind (ops) and a numeric host: what
 * rdmaclient_connect does once it has resolved host, and what the unit
 * tests drive with a fake transport. */
int rdmaclient_open(const struct lds_transport_ops *ops, const char *host, uint16_t port, int64_t deadline);

#endif
