/*
 * rdx_relay.h - a liblds client connection carried over RDMA: the byte
 * stream of client frames (docs/protocol.md) moved between a local
 * socket (one end of a socketpair) and a conn of a message kind of
 * transport (the rdma kind; a test's fake in check_rdma_relay.c).
 *
 * Both ends of the client path use it (docs/rdma.md, "The client path"):
 * in ldsd the other end of the socketpair is an ordinary client
 * connection of the client server, in liblds it is the handle's socket,
 * so that neither side's frame code changes.  What the relay adds is only
 * the mapping of a byte stream onto messages: each message carries the
 * bytes one read of the socket gave, at most RDX_RELAY_MSG; received
 * messages are written to the socket in order.  Credits, chunks and
 * registered buffers are the transport's (rdx_credit, rdx_chunk,
 * rdx_pool); the relay's own flow control is that it stops reading the
 * socket while all its send slots wait for the transport, and stops
 * taking messages (want_read off) while the socket is full, so that a
 * slow reader on either side pushes back on the other.
 *
 * A message larger than RDX_RELAY_MSG, or an empty one, is not one a
 * relay sends: the peer is refused (-EMSGSIZE).  The relay ends
 * (done callback) when the socket reaches its end and what was read
 * from it is sent, when the peer's side ends and what it sent is
 * written, or on an error; the owner then calls rdx_relay_close and
 * frees it with rdx_relay_free from the conn's closed upcall (the
 * transport may read the send slots until then).  Pure logic over
 * struct lds_tp_host and the transport ops: no verbs.
 */
#ifndef LDS_RDX_RELAY_H
#define LDS_RDX_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "rdx_proto.h"
#include "transports/transport.h"

/* One message: the payload of one default-sized receive buffer
 * (rdma_buffer_size 65536 minus the header), so that it goes as one
 * chunk and is handed up without a copy. */
#define RDX_RELAY_MSG (65536u - RP_HDR_LEN)
#define RDX_RELAY_SLOTS 8u     /* messages in flight per direction of a socket */

struct rdx_relay;

/* err 0: an orderly end; else -errno (a broken conn or socket, a
 * refused message).  why says what, for the log. */
typedef void rdx_relay_done_fn(struct rdx_relay *r, int err, const char *why, void *arg);

/* Starts relaying between fd (a nonblocking stream socket; the relay
 * owns it from now on) and conn, an established conn of ops whose
 * readable, writable and sent upcalls the owner forwards to rdx_relay_on_*
 * below with the relay as ud.  0, or -errno (nothing owned then). */
int rdx_relay_new(struct rdx_relay **out, const struct lds_tp_host *host, const struct lds_transport_ops *ops,
		  struct lds_tp_conn *conn, int fd, rdx_relay_done_fn *done, void *arg);
/* The transport's upcalls for the relay's conn (ud: the relay). */
void rdx_relay_on_readable(struct lds_tp_conn *c, void *ud);
void rdx_relay_on_writable(struct lds_tp_conn *c, void *ud);
void rdx_relay_on_sent(struct lds_tp_conn *c, void *ctx, void *ud);
/* Stops relaying: the socket is closed and the conn closed (ops->close);
 * safe inside the done callback and any upcall.  Idempotent. */
void rdx_relay_close(struct rdx_relay *r);
/* Frees a closed relay: from the conn's closed upcall, or once the
 * instance is gone. */
void rdx_relay_free(struct rdx_relay *r);
/* The arg given to rdx_relay_new (for the conn's closed upcall, whose
 * user data is the relay). */
void *rdx_relay_arg(const struct rdx_relay *r);
/* Bytes moved: socket to conn, conn to socket. */
void rdx_relay_counts(const struct rdx_relay *r, uint64_t *out, uint64_t *in);
/* The settings of conns that carry relays, in conf (LDS_TP_CONF_MAX
 * bytes): ops's defaults without a write ring (rdma_write_ring 0), since
 * a relay sends from memory it did not register, which never goes by
 * RDMA write: the ring would only pin memory on both sides.  Returns conf. */
const void *rdx_relay_conf(const struct lds_transport_ops *ops, void *conf);

#endif
