/* rdx_relay.c - a client's byte stream between a socket and a message
 * conn; see rdx_relay.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "rdx_relay.h"

#define READS_PER_EVENT 16   /* socket reads per wake-up, then the loop's other work */
#define MSGS_PER_EVENT 64    /* messages written to the socket per wake-up */

struct rdx_relay {
	struct lds_tp_host host;
	const struct lds_transport_ops *ops;
	struct lds_tp_conn *conn;
	int fd;                       /* -1 once closed */
	unsigned events;              /* watched on fd */
	rdx_relay_done_fn *done;
	void *arg;
	int ended;                    /* done was called: nothing more is moved */
	int closed;
	/* Socket to conn: slots [head, head + inflight) are the transport's
	 * until their sent upcall; with pend, the slot after them holds
	 * bytes read and not yet taken (no room at the transport). */
	uint8_t *slots;
	size_t len[RDX_RELAY_SLOTS];
	unsigned head, inflight;
	int pend;
	int sock_eof;
	/* Conn to socket: the message being written, from off on. */
	struct lds_tp_msg cur;
	int have_cur;
	size_t off;
	int blocked;                  /* the socket is full: waiting for it, not the conn */
	int peer_eof;
	uint64_t out_bytes, in_bytes;
};

static void sock_event(int fd, unsigned events, void *arg);

static uint8_t *slot(const struct rdx_relay *r, unsigned i)
{
	return r->slots + (size_t)(i % RDX_RELAY_SLOTS) * RDX_RELAY_MSG;
}

static void end(struct rdx_relay *r, int err, const char *why)
{
	if (r->ended)
		return;
	r->ended = 1;
	r->done(r, err, why, r->arg);
}

/* Watches the socket for what the relay can do now: read while a slot
 * is free, write while a message waits for room. */
static void watch_update(struct rdx_relay *r)
{
	unsigned ev = 0;

	if (r->ended)
		return;
	if (!r->sock_eof && !r->pend && r->inflight < RDX_RELAY_SLOTS)
		ev |= TP_EV_READ;
	if (r->blocked)
		ev |= TP_EV_WRITE;
	if (ev == r->events)
		return;
	if (r->host.watch(r->host.ctx, r->fd, ev, sock_event, r) < 0) {
		end(r, -ENOMEM, "cannot watch the local socket");
		return;
	}
	r->events = ev;
}

/* The socket ended and everything read from it went. */
static void check_finished(struct rdx_relay *r)
{
	if (r->sock_eof && !r->pend && r->inflight == 0)
		end(r, 0, "the local side closed");
}

/* Hands the pending slot to the transport. */
static void try_send(struct rdx_relay *r)
{
	unsigned i = r->head + r->inflight;
	struct iovec iov = { slot(r, i), r->len[i % RDX_RELAY_SLOTS] };
	int rc;

	if (r->ended || !r->pend)
		return;
	rc = r->ops->send_msg(r->conn, &iov, 1, NULL, iov.iov_base);
	if (rc == -EAGAIN) {
		r->ops->want_write(r->conn, 1);
		return;
	}
	if (rc < 0) {
		end(r, rc, "the RDMA conn refused a send");
		return;
	}
	r->pend = 0;
	r->inflight++;
	r->out_bytes += iov.iov_len;
}

static void sock_readable(struct rdx_relay *r)
{
	for (int n = 0; n < READS_PER_EVENT && !r->ended; n++) {
		unsigned i = r->head + r->inflight;
		ssize_t got;

		if (r->sock_eof || r->pend || r->inflight == RDX_RELAY_SLOTS)
			break;
		got = recv(r->fd, slot(r, i), RDX_RELAY_MSG, MSG_DONTWAIT);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (got < 0) {
			end(r, -errno, "reading the local socket failed");
			return;
		}
		if (got == 0) {
			r->sock_eof = 1;
			break;
		}
		r->len[i % RDX_RELAY_SLOTS] = (size_t)got;
		r->pend = 1;
		try_send(r);
	}
	check_finished(r);
	watch_update(r);
}

/* Writes received messages to the socket while it takes them. */
static void pump_in(struct rdx_relay *r)
{
	for (int n = 0; n < MSGS_PER_EVENT && !r->ended && !r->blocked; n++) {
		ssize_t w;

		if (!r->have_cur) {
			int rc = r->ops->recv_msg(r->conn, &r->cur);

			if (rc == -EAGAIN)
				break;
			if (rc == -EPIPE) {
				r->peer_eof = 1;
				break;
			}
			if (rc < 0) {
				end(r, rc, "the RDMA conn failed");
				return;
			}
			r->have_cur = 1;
			r->off = 0;
			if (r->cur.len == 0 || r->cur.len > RDX_RELAY_MSG) {
				end(r, -EMSGSIZE, "the peer sent a message of a size no relay sends");
				return;
			}
		}
		w = send(r->fd, r->cur.data + r->off, r->cur.len - r->off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			/* The local reader is slow: stop taking messages, so that
			 * the peer runs out of credits instead of us of memory. */
			r->blocked = 1;
			r->ops->want_read(r->conn, 0);
			break;
		}
		if (w < 0) {
			end(r, -errno, "writing the local socket failed");
			return;
		}
		r->off += (size_t)w;
		if (r->off == r->cur.len) {
			r->in_bytes += r->cur.len;
			r->have_cur = 0;
			r->ops->msg_done(r->conn, &r->cur);
		}
	}
	if (r->peer_eof && !r->have_cur)
		end(r, 0, "the peer closed");
	watch_update(r);
}

static void sock_event(int fd, unsigned events, void *arg)
{
	struct rdx_relay *r = arg;

	if ((events & (TP_EV_WRITE | TP_EV_ERROR)) && r->blocked) {
		r->blocked = 0;
		r->ops->want_read(r->conn, 1);
		pump_in(r);
	}
	if (!r->ended && (events & (TP_EV_READ | TP_EV_ERROR)))
		sock_readable(r);
}

void rdx_relay_on_readable(struct lds_tp_conn *c, void *ud)
{
	pump_in(ud);
}

void rdx_relay_on_writable(struct lds_tp_conn *c, void *ud)
{
	struct rdx_relay *r = ud;

	if (r->ended)
		return;
	r->ops->want_write(c, 0);
	try_send(r);
	watch_update(r);
}

void rdx_relay_on_sent(struct lds_tp_conn *c, void *ctx, void *ud)
{
	struct rdx_relay *r = ud;

	if (r->ended)
		return;
	/* Sends complete in the order taken (transport.h). */
	if (r->inflight == 0 || ctx != slot(r, r->head)) {
		end(r, -EPROTO, "the transport reported a send out of order");
		return;
	}
	r->head = (r->head + 1) % RDX_RELAY_SLOTS;
	r->inflight--;
	try_send(r);
	check_finished(r);
	watch_update(r);
}

int rdx_relay_new(struct rdx_relay **out, const struct lds_tp_host *host, const struct lds_transport_ops *ops,
		  struct lds_tp_conn *conn, int fd, rdx_relay_done_fn *done, void *arg)
{
	struct rdx_relay *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	r->slots = malloc((size_t)RDX_RELAY_SLOTS * RDX_RELAY_MSG);
	if (r->slots == NULL) {
		free(r);
		return -ENOMEM;
	}
	r->host = *host;
	r->ops = ops;
	r->conn = conn;
	r->fd = fd;
	r->done = done;
	r->arg = arg;
	if (host->watch(host->ctx, fd, TP_EV_READ, sock_event, r) < 0) {
		free(r->slots);
		free(r);
		return -ENOMEM;
	}
	r->events = TP_EV_READ;
	*out = r;
	return 0;
}

void rdx_relay_close(struct rdx_relay *r)
{
	if (r->closed)
		return;
	r->closed = 1;
	r->ended = 1;
	r->host.unwatch(r->host.ctx, r->fd);
	close(r->fd);
	r->fd = -1;
	if (r->have_cur)
		r->ops->msg_done(r->conn, &r->cur);
	r->have_cur = 0;
	r->ops->close(r->conn);
}

void rdx_relay_free(struct rdx_relay *r)
{
	if (r == NULL)
		return;
	if (r->fd >= 0) {
		r->host.unwatch(r->host.ctx, r->fd);
		close(r->fd);
	}
	free(r->slots);
	free(r);
}

void *rdx_relay_arg(const struct rdx_relay *r)
{
	return r->arg;
}

const void *rdx_relay_conf(const struct lds_transport_ops *ops, void *conf)
{
	static const size_t none = 0;

	memset(conf, 0, LDS_TP_CONF_MAX);
	if (ops->conf_defaults)
		ops->conf_defaults(conf);
	for (const struct lds_tp_option *o = ops->options; o && o->name; o++)
		if (strcmp(o->name, "rdma_write_ring") == 0 && o->size == sizeof(none))
			memcpy((uint8_t *)conf + o->off, &none, sizeof(none));
	return conf;
}

void rdx_relay_counts(const struct rdx_relay *r, uint64_t *out, uint64_t *in)
{
	*out = r->out_bytes;
	*in = r->in_bytes;
}
