/*
 * udp.c - LDS's own reliable transport over UDP (docs/udp.md): a message
 * kind (LDS_TP_CAP_MESSAGE) with its own packets, acknowledgements, loss
 * recovery, model-based congestion control, pacing and flow control.
 *
 * This file holds the ops table and the instance: one host timer (every
 * millisecond while any conn exists, less often where all paths are
 * long: udp_tick_ms) reads the busy sockets
 * (udp_sock_poll) and drives every conn's timers and sending; the before-sleep pending hook frees closed conns after their
 * closed upcall and makes the level-triggered upcalls (readable while a
 * whole message waits, writable while there is room).  Sockets and the
 * handshake are udp_sock.c's, a conn's packets udp_conn.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "udp.h"

/* Frees conns that are done: closed by the core, told, and lingered out. */
static void reap_finished(struct lds_transport *tp, uint64_t now)
{
	for (struct lds_tp_conn **pp = &tp->conns; *pp;) {
		struct lds_tp_conn *c = *pp;

		if (!udp_conn_finished(c, now)) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		tp->nconns--;
		udp_conn_free(c);
	}
}

static void udp_tick(uint64_t now_ns, void *arg)
{
	struct lds_transport *tp = arg;
	uint64_t now;

	/* Reads first: a conn's timers must not see a clock older than its packets. */
	udp_sock_poll(tp, clock_now_ns());
	now = clock_now_ns();
	for (struct lds_tp_conn *c = tp->conns; c; c = c->next)
		udp_conn_tick(c, now);
	for (struct lds_tp_conn *c = tp->conns; c; c = c->next)
		udp_conn_upcalls(c);
	reap_finished(tp, now);
	udp_timer_adjust(tp);
	if (tp->nconns == 0 && tp->timer_id > 0) {
		tp->host.timer_del(tp->host.ctx, tp->timer_id);
		tp->timer_id = 0;
		/* A listener's socket is read on its readiness again. */
		for (struct udp_sock *s = tp->socks; s; s = s->next)
			udp_sock_set_polled(s, 0);
	}
}

unsigned udp_tick_ms(uint64_t path_ns)
{
	if (path_ns >= UDP_TICK_LONGER_MIN_RTT_NS)
		return UDP_TICK_LONGER_MS;
	return path_ns >= UDP_TICK_LONG_MIN_RTT_NS ? UDP_TICK_LONG_MS : UDP_TICK_MS;
}

/* The timer's interval: the shortest path's (a conn with no sample yet
 * counts as the shortest). */
static unsigned tick_wanted(const struct lds_transport *tp)
{
	uint64_t least = UINT64_MAX;

	for (const struct lds_tp_conn *c = tp->conns; c; c = c->next)
		if (c->path_rtt_min < least)
			least = c->path_rtt_min;
	return udp_tick_ms(least);
}

void udp_timer_adjust(struct lds_transport *tp)
{
	unsigned ms = tick_wanted(tp);

	if (tp->timer_id <= 0 || ms == tp->tick_ms)
		return;
	tp->host.timer_del(tp->host.ctx, tp->timer_id);
	tp->timer_id = 0;
	udp_timer_need(tp);
}

void udp_timer_need(struct lds_transport *tp)
{
	if (tp->timer_id > 0)
		return;
	tp->tick_ms = tick_wanted(tp);
	tp->timer_id = tp->host.timer_add(tp->host.ctx, tp->tick_ms, udp_tick, tp);
	/* Without a timer nothing is retransmitted: conns fail on their first loss. */
	if (tp->timer_id < 0)
		tp->timer_id = 0;
}

/* Closed upcalls owed, then the upcalls the conns owe; > 0 when the core
 * took or gave something, so that the loop comes back without sleeping. */
static int udp_pending(void *arg)
{
	struct lds_transport *tp = arg;
	int progress = 0;

	while (tp->dead) {
		struct lds_tp_conn *c = tp->dead;

		tp->dead = c->next_dead;
		c->dead_listed = 0;
		if (tp->up.closed)
			tp->up.closed(c, c->ud);
	}
	for (struct lds_tp_conn *c = tp->conns; c; c = c->next) {
		uint64_t base = c->rq.base, end = c->sq.end;

		udp_conn_upcalls(c);
		if (c->rq.base != base || c->sq.end != end) {
			udp_conn_nudge(c, clock_now_ns());
			progress = 1;
		}
	}
	return progress;
}

static int udp_init(struct lds_transport **out, const struct lds_tp_host *host, const struct lds_tp_upcalls *up)
{
	struct lds_transport *tp = calloc(1, sizeof(*tp));

	if (tp == NULL)
		return -ENOMEM;
	tp->host = *host;
	tp->up = *up;
	tp->ev = (struct udp_events){ .packet = udp_demux_packet, .settle = udp_demux_settle, .failed = udp_conn_fail,
				      .timer_need = udp_timer_need };
	if (getrandom(tp->secret, sizeof(tp->secret), 0) != sizeof(tp->secret)) {
		free(tp);
		return -EIO;
	}
	tp->pending_id = host->pending_add(host->ctx, udp_pending, tp);
	if (tp->pending_id < 0) {
		int r = tp->pending_id;

		free(tp);
		return r;
	}
	*out = tp;
	return 0;
}

static void udp_fini(struct lds_transport *tp)
{
	udp_pending(tp);
	while (tp->conns) {
		struct lds_tp_conn *c = tp->conns;

		tp->conns = c->next;
		udp_conn_free(c);
	}
	if (tp->timer_id > 0)
		tp->host.timer_del(tp->host.ctx, tp->timer_id);
	tp->host.pending_del(tp->host.ctx, tp->pending_id);
	free(tp);
}

static int udp_listen(struct lds_transport *tp, const char *addr, uint16_t port, const struct lds_tp_opts *o,
		      void *ud, struct lds_tp_listener **out)
{
	struct lds_tp_listener *l = calloc(1, sizeof(*l));
	const char *step;
	int r;

	if (l == NULL)
		return -ENOMEM;
	udp_conf_get(&l->conf, o ? o->conf : NULL);
	l->unsent_max = o ? o->unsent_max : 0;
	l->ud = ud;
	r = udp_sock_open(tp, addr, port, 1, &l->conf, &l->sock, NULL, NULL, &step);
	if (r < 0) {
		free(l);
		return r;
	}
	l->sock->refs++;
	l->sock->l = l;
	*out = l;
	return 0;
}

/* The conns it accepted stay: they share its socket, which lives on
 * until the last of them is gone. */
static void udp_listener_close(struct lds_tp_listener *l)
{
	l->sock->l = NULL;
	udp_sock_unref(l->sock);
	free(l);
}

/* Paused: INITs are dropped (clients try again); its conns carry on. */
static int udp_listener_pause(struct lds_tp_listener *l, int paused)
{
	l->paused = paused;
	return 0;
}

static int udp_connect(struct lds_transport *tp, const char *host, uint16_t port, const struct lds_tp_opts *o,
		       void *ud, struct lds_tp_conn **out, const char **step)
{
	struct udp_conf uc;
	struct udp_sock *s;
	struct lds_tp_conn *c;
	struct sockaddr_storage peer;
	socklen_t pl = 0;
	uint64_t now = clock_now_ns();
	int r;

	udp_conf_get(&uc, o ? o->conf : NULL);
	r = udp_sock_open(tp, host, port, 0, &uc, &s, &peer, &pl, step);
	if (r < 0)
		return r;
	c = udp_conn_new(tp, s, &uc, o ? o->unsent_max : 0);
	if (c == NULL) {
		s->refs = 1;
		udp_sock_unref(s);
		*step = "memory";
		return -ENOMEM;
	}
	c->ud = ud;
	c->peer = peer;
	c->peer_len = pl;
	udp_peer_name(&peer, c->peer_name, sizeof(c->peer_name));
	c->state = UDP_ST_CONNECTING;
	c->hs_deadline_ns = now + (o && o->connect_timeout > 0 ? (uint64_t)(o->connect_timeout * 1e9)
							       : UDP_CONNECT_TIMEOUT_NS);
	c->hs_interval_ns = 250000000ull;
	c->hs_next_ns = now + c->hs_interval_ns;
	udp_conn_send_hs(c, UDP_PKT_INIT, now);
	*out = c;
	return 0;
}

static void udp_set_userdata(struct lds_tp_conn *c, void *ud)
{
	c->ud = ud;
}

/* The link's settings, once the core knows which link an accepted conn
 * serves: the whole receive window opens, grown to the link's
 * `udp_window` (an accepted conn is made with the smallest, as its
 * listener serves every peer on its address and grants only
 * UDP_WINDOW_PREAUTH before the core's handshake), the link's rate cap,
 * idle timeout and packet sizes apply. */
static int udp_set_opts(struct lds_tp_conn *c, const struct lds_tp_opts *o)
{
	struct udp_conf uc;

	udp_conf_get(&uc, o->conf);
	udp_recvq_open(&c->rq, c->rq.size);
	c->conf.rate_max = uc.rate_max;
	c->cc.rate_max = uc.rate_max;
	c->conf.idle_timeout = uc.idle_timeout;
	if (o->unsent_max)
		c->unsent_max = o->unsent_max;
	udp_conn_mtu_conf(c, uc.mtu, uc.mtu_max);
	return udp_recvq_grow(&c->rq, uc.window);
}

static int udp_send_msg(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx)
{
	size_t total = 0;
	int r;

	if (c->state == UDP_ST_FAILED)
		return c->err;
	if (c->state != UDP_ST_OPEN)
		return -ENOTCONN;
	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (total == 0 || total > UDP_MSG_MAX)
		return -EMSGSIZE;
	if (c->sq.end - c->sq.next >= c->unsent_max)
		return -EAGAIN;
	r = udp_sendq_push(&c->sq, iov, iovcnt, total, ctx);
	if (r < 0)
		return r;
	udp_conn_nudge(c, clock_now_ns());
	return 0;
}

static int udp_recv_msg(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	const uint8_t *data;
	size_t len;
	int r;

	if (c->rq.held)
		return -EBUSY;
	r = udp_recvq_peek(&c->rq, &data, &len);
	if (r == 1) {
		m->data = data;
		m->len = len;
		m->tp_priv = c;
		return 0;
	}
	if (r < 0) {
		/* A length past max_msg: the peer breaks the protocol. */
		udp_conn_fail(c, r);
		c->err_told = 1;
		return r;
	}
	if (c->state == UDP_ST_FAILED) {
		c->err_told = 1;
		return c->err;
	}
	return -EAGAIN;
}

static void udp_msg_done(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	udp_recvq_done(&c->rq);
}

static void udp_want_write(struct lds_tp_conn *c, int on)
{
	c->want_w = !!on;
}

static void udp_want_read(struct lds_tp_conn *c, int on)
{
	c->no_read = !on;
}

static void udp_close(struct lds_tp_conn *c)
{
	struct lds_transport *tp = c->tp;

	if (c->core_closed)
		return;
	c->core_closed = 1;
	c->dead_listed = 1;
	c->next_dead = tp->dead;
	tp->dead = c;
	udp_conn_close(c, clock_now_ns());
}

static int udp_query(struct lds_tp_conn *c, struct lds_tp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->bytes_sent = c->bytes_sent;
	info->bytes_recv = c->bytes_recv;
	if (c->rec.have_rtt) {
		info->rtt_us = (uint32_t)(c->rec.srtt / 1000);
		info->min_rtt_us = (uint32_t)(c->rec.min_rtt / 1000);
	}
	info->cwnd = (uint32_t)(c->cc.cwnd / c->conf.mtu);
	info->retransmits = (uint32_t)c->rec.retransmits;
	info->mtu = c->conf.mtu;
	snprintf(info->peer, sizeof(info->peer), "%s", c->peer_name);
	return 0;
}

static void udp_dropped(struct lds_transport *tp, FILE *out)
{
	const struct udp_stats *st = &tp->stats;

	fprintf(out, "\"bad\":%" PRIu64 ",\"unknown\":%" PRIu64 ",\"replayed\":%" PRIu64 ",\"bad_tokens\":%" PRIu64
		",\"refused\":%" PRIu64 ",\"retries\":%" PRIu64,
		st->bad, st->unknown, st->replayed, st->bad_tokens, st->refused, st->retries);
}

const struct lds_transport_ops udp_transport_ops = {
	.size = LDS_TP_OPS_SIZE,
	.name = "udp",
	.caps = { .flags = LDS_TP_CAP_MESSAGE | LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE | LDS_TP_CAP_FORK_SAFE,
		  .max_msg = UDP_MSG_MAX },
	.options = udp_options,
	.conf_size = sizeof(struct udp_conf),
	.conf_defaults = udp_conf_defaults,
	.check = udp_conf_check,
	.init = udp_init,
	.fini = udp_fini,
	.listen = udp_listen,
	.listener_close = udp_listener_close,
	.listener_pause = udp_listener_pause,
	.connect = udp_connect,
	.set_userdata = udp_set_userdata,
	.set_opts = udp_set_opts,
	.send_msg = udp_send_msg,
	.recv_msg = udp_recv_msg,
	.msg_done = udp_msg_done,
	.want_write = udp_want_write,
	.want_read = udp_want_read,
	.close = udp_close,
	.query = udp_query,
	.status = udp_conf_status,
	.describe = udp_conf_describe,
	.dropped = udp_dropped,
};
