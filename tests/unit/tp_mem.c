/*
 * tp_mem.c - a sample transport: conns are pairs of in-memory byte queues
 * inside one process.  Registered only by the unit tests
 * (transport_register), it shows what adding a transport takes: this one
 * file, one ops table, and its registration.  It has no descriptors, so
 * everything it hands up goes through the host's before-sleep pending hook
 * (transport.h), as an RDMA completion queue or TLS's buffered records
 * would.
 *
 * Addresses: a listener takes a port; connect finds the listener of that
 * port in any instance of the process (the host is ignored), so that two
 * daemons in one process can link (check_link.c); the accepted end
 * belongs to the listener's instance.  Its one setting, mem_window, is how
 * many bytes a conn holds unread before send says -EAGAIN.
 *
 * Faults for the link's tests (tp_mem.h): a conn can be broken, losing
 * what is in flight both ways, or held, so that what is sent on it waits
 * while other conns overtake it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_mem.h"

#define MEM_MAX_CONNS 64
#define MEM_MAX_LISTENERS 8

struct mem_conf {
	size_t window;
};

struct lds_transport {
	struct lds_tp_host host;
	struct lds_tp_upcalls up;
	int pending_id;
	struct lds_tp_conn *conns[MEM_MAX_CONNS];      /* live ones; NULL: a free slot */
	struct lds_tp_conn *dead;                       /* closed, freed by the next pending round */
};

/* Every instance's, by port. */
static struct lds_tp_listener *mem_listeners[MEM_MAX_LISTENERS];

struct lds_tp_listener {
	struct lds_transport *tp;
	uint16_t port;
	int paused;
	void *ud;
};

struct lds_tp_conn {
	struct lds_transport *tp;
	struct lds_tp_conn *peer;      /* NULL once the peer closed */
	struct lds_tp_listener *accept_on; /* set until the accepted upcall */
	int connecting;                /* the connected upcall is due */
	int want_w, no_read;
	int held;                      /* tp_mem_hold: what arrives waits */
	int broken;                    /* tp_mem_break: recv and send fail */
	int news;                      /* bytes or EOF arrived since the last readable upcall */
	int room;                      /* the peer read since the last writable upcall */
	size_t window;
	unsigned char *buf;            /* what the peer sent, unread: len bytes */
	size_t len;
	uint64_t sent, recvd;
	void *ud;
	struct lds_tp_conn *next_dead;
};

static const struct lds_tp_option mem_options[] = {
	{ .name = "mem_window", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct mem_conf, window),
	  .size = sizeof(size_t), .min = 1024, .max = 64u << 20 },
	{ .name = NULL },
};

static void mem_conf_defaults(void *conf)
{
	((struct mem_conf *)conf)->window = 64u << 10;
}

static int mem_conf_check(const void *conf, struct lds_tp_conf_error *e)
{
	const struct mem_conf *mc = conf;

	if (mc->window % 1024 == 0)
		return 0;
	e->option = "mem_window";
	snprintf(e->msg, sizeof(e->msg), "must be a multiple of 1024 (got %zu)", mc->window);
	return -1;
}

static void mem_status(const void *conf, FILE *out)
{
	fprintf(out, ",\"mem_window\":%zu", ((const struct mem_conf *)conf)->window);
}

static const char *mem_describe(const void *conf, char *buf, size_t len)
{
	snprintf(buf, len, "window %zu", ((const struct mem_conf *)conf)->window);
	return buf;
}

/* One round of what no fd announces: accepts, connects, data, room, and
 * freeing closed conns.  Returns the number of upcalls made. */
static int mem_pending(void *arg)
{
	struct lds_transport *tp = arg;
	int n = 0;

	for (size_t i = 0; i < MEM_MAX_CONNS; i++) {
		struct lds_tp_conn *c = tp->conns[i];

		if (c == NULL)
			continue;
		if (c->accept_on) {
			if (c->accept_on->paused)
				continue;
			n++;
			tp->up.accepted(c->accept_on, c, c->accept_on->ud);
			if (tp->conns[i] == c)
				c->accept_on = NULL;
		} else if (c->connecting) {
			c->connecting = 0;
			n++;
			tp->up.connected(c, 0, c->ud);
		} else if (c->news && !c->no_read && !c->held) {
			c->news = 0;
			n++;
			tp->up.readable(c, c->ud);
		} else if (c->want_w && c->room) {
			c->room = 0;
			n++;
			tp->up.writable(c, c->ud);
		}
	}
	while (tp->dead) {
		struct lds_tp_conn *c = tp->dead;

		tp->dead = c->next_dead;
		if (tp->up.closed)
			tp->up.closed(c, c->ud);
		free(c->buf);
		free(c);
		n++;
	}
	return n;
}

static int mem_init(struct lds_transport **out, const struct lds_tp_host *host, const struct lds_tp_upcalls *up)
{
	struct lds_transport *tp = calloc(1, sizeof(*tp));

	if (tp == NULL)
		return -ENOMEM;
	tp->host = *host;
	tp->up = *up;
	tp->pending_id = host->pending_add(host->ctx, mem_pending, tp);
	if (tp->pending_id < 0) {
		int r = tp->pending_id;

		free(tp);
		return r;
	}
	*out = tp;
	return 0;
}

static void mem_close(struct lds_tp_conn *c);

/* Conns the core never saw (accepted, not yet handed up) end with it. */
static void mem_fini(struct lds_transport *tp)
{
	tp->host.pending_del(tp->host.ctx, tp->pending_id);
	for (size_t i = 0; i < MEM_MAX_CONNS; i++)
		if (tp->conns[i])
			mem_close(tp->conns[i]);
	while (tp->dead) {
		struct lds_tp_conn *c = tp->dead;

		tp->dead = c->next_dead;
		free(c->buf);
		free(c);
	}
	free(tp);
}

static int mem_listen(struct lds_transport *tp, const char *addr, uint16_t port, const struct lds_tp_opts *o,
		      void *ud, struct lds_tp_listener **out)
{
	size_t free_slot = MEM_MAX_LISTENERS;

	for (size_t i = 0; i < MEM_MAX_LISTENERS; i++) {
		if (mem_listeners[i] && mem_listeners[i]->port == port)
			return -EADDRINUSE;
		if (mem_listeners[i] == NULL && free_slot == MEM_MAX_LISTENERS)
			free_slot = i;
	}
	if (free_slot == MEM_MAX_LISTENERS)
		return -ENOSPC;
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return -ENOMEM;
	**out = (struct lds_tp_listener){ .tp = tp, .port = port, .ud = ud };
	mem_listeners[free_slot] = *out;
	return 0;
}

static void mem_listener_close(struct lds_tp_listener *l)
{
	for (size_t i = 0; i < MEM_MAX_LISTENERS; i++)
		if (mem_listeners[i] == l)
			mem_listeners[i] = NULL;
	free(l);
}

static int mem_listener_pause(struct lds_tp_listener *l, int paused)
{
	l->paused = paused;
	return 0;
}

static struct lds_tp_conn *mem_conn_new(struct lds_transport *tp, size_t window, void *ud)
{
	struct lds_tp_conn *c;

	for (size_t i = 0; i < MEM_MAX_CONNS; i++) {
		if (tp->conns[i] != NULL)
			continue;
		c = calloc(1, sizeof(*c));
		if (c == NULL || (c->buf = malloc(window)) == NULL) {
			free(c);
			return NULL;
		}
		c->tp = tp;
		c->window = window;
		c->ud = ud;
		tp->conns[i] = c;
		return c;
	}
	return NULL;
}

static void mem_close(struct lds_tp_conn *c)
{
	struct lds_transport *tp = c->tp;

	for (size_t i = 0; i < MEM_MAX_CONNS; i++)
		if (tp->conns[i] == c)
			tp->conns[i] = NULL;
	if (c->peer) {
		c->peer->peer = NULL;
		c->peer->news = 1;     /* the peer's recv now says -EPIPE */
	}
	c->next_dead = tp->dead;
	tp->dead = c;
}

static int mem_connect(struct lds_transport *tp, const char *host, uint16_t port, const struct lds_tp_opts *o,
		       void *ud, struct lds_tp_conn **out, const char **step)
{
	const struct mem_conf *mc = o && o->conf ? o->conf : NULL;
	size_t window = mc ? mc->window : 64u << 10;
	struct lds_tp_listener *l = NULL;
	struct lds_tp_conn *c, *s;

	*step = "connect";
	for (size_t i = 0; i < MEM_MAX_LISTENERS && l == NULL; i++)
		if (mem_listeners[i] && mem_listeners[i]->port == port)
			l = mem_listeners[i];
	if (l == NULL)
		return -ECONNREFUSED;
	*step = "socket";
	c = mem_conn_new(tp, window, ud);
	s = c ? mem_conn_new(l->tp, window, NULL) : NULL;
	if (s == NULL) {
		if (c)
			mem_close(c);
		return -ENOMEM;
	}
	c->peer = s;
	s->peer = c;
	c->connecting = 1;
	s->accept_on = l;
	*out = c;
	return 0;
}

static void mem_set_userdata(struct lds_tp_conn *c, void *ud)
{
	c->ud = ud;
}

static int mem_send(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, unsigned flags, size_t *sent)
{
	struct lds_tp_conn *p = c->peer;

	*sent = 0;
	if (c->broken)
		return -ECONNRESET;
	if (p == NULL)
		return -EPIPE;
	for (int i = 0; i < iovcnt && p->len < p->window; i++) {
		size_t n = iov[i].iov_len < p->window - p->len ? iov[i].iov_len : p->window - p->len;

		memcpy(p->buf + p->len, iov[i].iov_base, n);
		p->len += n;
		*sent += n;
	}
	if (*sent == 0 && iovcnt > 0)
		return -EAGAIN;
	p->news = 1;
	c->sent += *sent;
	return 0;
}

static void mem_push(struct lds_tp_conn *c)
{
}

static int mem_recv(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, size_t *got)
{
	size_t off = 0;

	*got = 0;
	if (c->broken)
		return -ECONNRESET;
	if (c->len == 0 || c->held)
		return c->peer || c->held ? -EAGAIN : -EPIPE;
	for (int i = 0; i < iovcnt && off < c->len; i++) {
		size_t n = iov[i].iov_len < c->len - off ? iov[i].iov_len : c->len - off;

		memcpy(iov[i].iov_base, c->buf + off, n);
		off += n;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	*got = off;
	c->recvd += off;
	if (c->peer)
		c->peer->room = 1;
	if (c->len > 0)
		c->news = 1;       /* more than the caller took: tell it again */
	return 0;
}

static size_t mem_pending_bytes(struct lds_tp_conn *c)
{
	return c->held ? 0 : c->len;
}

static void mem_want_write(struct lds_tp_conn *c, int on)
{
	c->want_w = on;
	c->room = on;
}

static void mem_want_read(struct lds_tp_conn *c, int on)
{
	c->no_read = !on;
	if (on && c->len)
		c->news = 1;
}

static int mem_query(struct lds_tp_conn *c, struct lds_tp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->bytes_sent = c->sent;
	info->bytes_recv = c->recvd;
	snprintf(info->peer, sizeof(info->peer), "mem:%p", (void *)c->peer);
	return 0;
}

/* One end of a broken connection: what it held unread is lost, and it is
 * told at once. */
static void mem_break_end(struct lds_tp_conn *c)
{
	c->broken = 1;
	c->held = 0;
	c->len = 0;
	c->news = 1;
	c->peer = NULL;
}

void tp_mem_break(struct lds_tp_conn *c)
{
	if (c->peer)
		mem_break_end(c->peer);
	mem_break_end(c);
}

void tp_mem_hold(struct lds_tp_conn *c, int on)
{
	c->held = on;
	if (!on && c->len)
		c->news = 1;
}

size_t tp_mem_unread(const struct lds_tp_conn *c)
{
	return c->len;
}

const struct lds_transport_ops mem_transport_ops = {
	.size = LDS_TP_OPS_SIZE,
	.name = "mem",
	.caps = { .flags = LDS_TP_CAP_STREAM | LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE | LDS_TP_CAP_INTEGRITY |
			   LDS_TP_CAP_FORK_SAFE },
	.options = mem_options,
	.conf_size = sizeof(struct mem_conf),
	.conf_defaults = mem_conf_defaults,
	.check = mem_conf_check,
	.init = mem_init,
	.fini = mem_fini,
	.listen = mem_listen,
	.listener_close = mem_listener_close,
	.listener_pause = mem_listener_pause,
	.connect = mem_connect,
	.set_userdata = mem_set_userdata,
	.send = mem_send,
	.push = mem_push,
	.recv = mem_recv,
	.pending = mem_pending_bytes,
	.want_write = mem_want_write,
	.want_read = mem_want_read,
	.close = mem_close,
	.query = mem_query,
	.status = mem_status,
	.describe = mem_describe,
};
