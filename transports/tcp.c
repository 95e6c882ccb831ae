/*
 * tcp.c - the plain TCP transport: one kernel TCP connection per conn.
 *
 * Nonblocking sockets, TCP_NODELAY (the core batches into blocks itself),
 * optional congestion control per socket (TCP_CONGESTION), and a connect
 * timeout enforced with TCP_USER_TIMEOUT plus SYN retries so that a black
 * hole fails the connect instead of hanging it for minutes.  Its settings
 * (congestion, tcp_buffer, zerocopy) are tcp_conf.c's; MSG_ZEROCOPY sends
 * and their completions tcp_zc.c's.  A closed conn's descriptor is
 * closed at once, its memory freed (and upcalls->closed made) from the
 * before-sleep hook, so that close is safe inside any upcall.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/tcp.h>     /* not netinet/tcp.h: its tcp_info lacks tcpi_min_rtt */
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "tcp_conf.h"
#include "tcp_zc.h"
#include "tp_addr.h"
#include "transport.h"

/* The most rx_lowat asks of the kernel: a DATA frame of the largest
 * block_size; more would only delay the wake past the frame. */
#define TCP_RX_LOWAT_MAX (4 << 20)

struct lds_transport {
	struct lds_tp_host host;
	struct lds_tp_upcalls up;
	int reserve_fd;              /* freed to accept and drop a connection when out of descriptors; -1: none */
	int pending_id;              /* the host's before-sleep hook that frees closed conns */
	struct lds_tp_conn *dead;    /* closed conns not yet freed */
	struct lds_tp_conn *closing; /* closed conns waiting for their zero-copy completions (tcp_close) */
	char step[64];               /* the last failed step, for messages (transport.h: connect) */
};

struct lds_tp_conn {
	struct lds_transport *tp;
	int fd;
	int connecting;
	int want_w;
	int no_read;
	void *ud;
	uint64_t sent, recvd;
	struct tcp_zc zc;            /* zerocopy: sends the kernel may still read */
	int zc_timer, zc_fd, zc_polls;  /* closed with such sends: tcp_zc_closing */
	char peer[64];
	struct lds_tp_conn *next_dead;
};

struct lds_tp_listener {
	struct lds_transport *tp;
	int fd;
	struct lds_tp_opts opts;
	struct tcp_conf conf;        /* opts.conf points here: the caller's may be freed by a reload */
	void *ud;
};

/* Frees the closed conns; each one's closed upcall comes after it is
 * gone from every list. */
static int tcp_reap(void *arg)
{
	struct lds_transport *tp = arg;

	while (tp->dead) {
		struct lds_tp_conn *c = tp->dead;

		tp->dead = c->next_dead;
		if (tp->up.closed)
			tp->up.closed(c, c->ud);
		tcp_zc_free(&c->zc);
		free(c);
	}
	return 0;
}

static int tcp_init(struct lds_transport **out, const struct lds_tp_host *host, const struct lds_tp_upcalls *up)
{
	struct lds_transport *tp = calloc(1, sizeof(*tp));

	if (tp == NULL)
		return -ENOMEM;
	tp->host = *host;
	tp->up = *up;
	tp->pending_id = host->pending_add(host->ctx, tcp_reap, tp);
	if (tp->pending_id < 0) {
		int r = tp->pending_id;

		free(tp);
		return r;
	}
	/* Without it (no /dev/null) a shortage still pauses the listener;
	 * only the waiting connection is not dropped at once. */
	tp->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	*out = tp;
	return 0;
}

static void tcp_zc_let_go(struct lds_tp_conn *c);

static void tcp_fini(struct lds_transport *tp)
{
	/* The instance ends (the daemon exits): no waiting for completions. */
	while (tp->closing)
		tcp_zc_let_go(tp->closing);
	tcp_reap(tp);
	tp->host.pending_del(tp->host.ctx, tp->pending_id);
	if (tp->reserve_fd >= 0)
		close(tp->reserve_fd);
	free(tp);
}

static void tcp_peer_name(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0)
		getnameinfo((struct sockaddr *)&ss, sl, host, sizeof(host), port, sizeof(port),
			    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/* Socket options shared by connected and accepted sockets; on error
 * *step says which (see transport.h), in tp->step. */
static int tcp_tune(struct lds_transport *tp, int fd, const struct lds_tp_opts *o, const char **step)
{
	const struct tcp_conf *tc = o ? o->conf : NULL;
	int one = 1;

	*step = "socket option";
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		return -errno;
	if (o == NULL)
		return 0;
	if (tc && tc->congestion[0] &&
	    setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, tc->congestion, (socklen_t)strlen(tc->congestion)) < 0) {
		snprintf(tp->step, sizeof(tp->step), "congestion control \"%s\"", tc->congestion);
		*step = tp->step;
		return -errno;
	}
	if (o->unsent_max) {
		int v = (int)o->unsent_max;
		if (setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, sizeof(v)) < 0)
			return -errno;
	}
	if (tc && tc->buffer) {
		int v = (int)tc->buffer;
		if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)) < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)) < 0)
			return -errno;
	}
	return 0;
}

static void tcp_conn_event(int fd, unsigned events, void *arg);

static struct lds_tp_conn *tcp_conn_new(struct lds_transport *tp, int fd, void *ud)
{
	struct lds_tp_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->tp = tp;
	c->fd = fd;
	c->ud = ud;
	return c;
}

static int tcp_conn_watch(struct lds_tp_conn *c)
{
	unsigned ev = c->connecting ? TP_EV_WRITE : (c->no_read ? 0 : TP_EV_READ) | (c->want_w ? TP_EV_WRITE : 0);

	return c->tp->host.watch(c->tp->host.ctx, c->fd, ev, tcp_conn_event, c);
}

/*
 * A conn closed while the kernel still reads some of its zero-copy sends
 * would go on sending from pages that the core frees once told closed,
 * for as long as the peer takes to acknowledge them: it is reset instead
 * (connect to AF_UNSPEC: an RST, and the kernel drops its send queue),
 * its socket kept open, and its error queue read every TCP_ZC_POLL_MS
 * until every held send has completed - also those a NIC or a pacing
 * queue still had - or TCP_ZC_WAIT_MS passed; only then is it closed and
 * the core told.  No fd watch: a reset socket polls as hung up, always.
 */
#define TCP_ZC_POLL_MS 10
#define TCP_ZC_WAIT_MS 2000

static void tcp_zc_let_go(struct lds_tp_conn *c)
{
	struct lds_tp_conn **p = &c->tp->closing;

	c->tp->host.timer_del(c->tp->host.ctx, c->zc_timer);
	close(c->zc_fd);
	while (*p != c)
		p = &(*p)->next_dead;
	*p = c->next_dead;
	c->next_dead = c->tp->dead;
	c->tp->dead = c;
}

static void tcp_zc_closing(uint64_t now_ns, void *arg)
{
	struct lds_tp_conn *c = arg;

	tcp_zc_drain(&c->zc, c->zc_fd);
	while (tcp_zc_release(&c->zc) > 0)
		;
	c->zc_polls++;
	(void)now_ns;
	if (c->zc.n == 0 || c->zc_polls * TCP_ZC_POLL_MS >= TCP_ZC_WAIT_MS)
		tcp_zc_let_go(c);
}

/* 0 if c waits for its completions now (tcp_zc_closing), else -1. */
static int tcp_zc_close(struct lds_tp_conn *c)
{
	struct sockaddr reset = { .sa_family = AF_UNSPEC };

	c->zc_timer = c->tp->host.timer_add(c->tp->host.ctx, TCP_ZC_POLL_MS, tcp_zc_closing, c);
	if (c->zc_timer < 0)
		return -1;
	(void)connect(c->fd, &reset, sizeof(reset));
	c->zc_fd = c->fd;
	c->fd = -1;
	c->next_dead = c->tp->closing;
	c->tp->closing = c;
	return 0;
}

static void tcp_close(struct lds_tp_conn *c)
{
	c->tp->host.unwatch(c->tp->host.ctx, c->fd);
	if (c->zc.n > 0 && tcp_zc_close(c) == 0)
		return;
	close(c->fd);
	c->fd = -1;
	c->next_dead = c->tp->dead;
	c->tp->dead = c;
}

/* A conn that never reached the core: freed at once, no closed upcall. */
static void tcp_conn_drop(struct lds_tp_conn *c)
{
	c->tp->host.unwatch(c->tp->host.ctx, c->fd);
	close(c->fd);
	tcp_zc_free(&c->zc);
	free(c);
}

/* zerocopy on where the setting asks for it and the core can be told when
 * the kernel is done with a send; where the kernel refuses, sends are
 * copied (tcp_conf_check said so already).  An accepted conn gets the
 * listener's settings, then its link's (set_opts, before the stream is up
 * and holds anything): off again if the link's say so. */
static void tcp_zc_setup(struct lds_tp_conn *c, const struct lds_tp_opts *o)
{
	const struct tcp_conf *tc = o ? o->conf : NULL;
	int want = tc && tc->zerocopy && c->tp->up.released;

	if (want && !c->zc.on)
		(void)tcp_zc_enable(&c->zc, c->fd, tc->zerocopy_min);
	else if (want)
		c->zc.min = tc->zerocopy_min;
	else if (c->zc.on && c->zc.n == 0)
		c->zc.on = 0;
}

/* The kernel's completions of zero-copy sends: the sends they free given
 * back to the core, oldest first.  Returns 1 if it read any (the error
 * event was theirs), 0 if none waited, -1 if the core closed c. */
static int tcp_zc_event(struct lds_tp_conn *c)
{
	size_t bytes;

	if (tcp_zc_drain(&c->zc, c->fd) == 0)
		return 0;
	while ((bytes = tcp_zc_release(&c->zc)) > 0) {
		c->tp->up.released(c, bytes, c->ud);
		if (c->fd < 0)
			return -1;
	}
	return 1;
}

static void tcp_conn_event(int fd, unsigned events, void *arg)
{
	struct lds_tp_conn *c = arg;
	struct lds_transport *tp = c->tp;

	if (c->connecting) {
		int err = 0;
		socklen_t el = sizeof(err);

		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
			err = errno;
		if (err == 0 && !(events & (TP_EV_WRITE | TP_EV_ERROR)))
			return;
		if (err != 0) {
			void *ud = c->ud;

			tcp_conn_drop(c);
			tp->up.connected(NULL, -err, ud);
			return;
		}
		c->connecting = 0;
		tcp_peer_name(fd, c->peer, sizeof(c->peer));
		if (tcp_conn_watch(c) < 0) {
			void *ud = c->ud;

			tcp_conn_drop(c);
			tp->up.connected(NULL, -EIO, ud);
			return;
		}
		tp->up.connected(c, 0, c->ud);
		return;
	}
	/* With zerocopy, the error queue's completions make the socket
	 * report an error: read them first; a real error stays and reports
	 * itself again. */
	if (c->zc.on && (events & TP_EV_ERROR)) {
		int r = tcp_zc_event(c);

		if (r < 0)
			return;
		if (r > 0)
			events &= ~TP_EV_ERROR;
	}
	/* Errors surface through recv/send, so read first: data may precede
	 * the error and must not be lost. */
	if (events & (TP_EV_READ | TP_EV_ERROR)) {
		tp->up.readable(c, c->ud);
		return; /* a pending write event comes back next round */
	}
	if (events & TP_EV_WRITE && c->fd >= 0)
		tp->up.writable(c, c->ud);
}

/* Resolves host:port and opens a nonblocking socket of the right family;
 * on success the caller frees *res. */
static int tcp_socket(const char *host, uint16_t port, int passive, struct addrinfo **res, int *fd,
		      const char **step)
{
	int r = tp_addr_resolve(host, port, SOCK_STREAM, passive, res);

	*step = "address";
	if (r < 0)
		return r;
	*step = "socket";
	*fd = socket((*res)->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (*fd < 0) {
		r = -errno;
		freeaddrinfo(*res);
		return r;
	}
	return 0;
}

static int tcp_connect(struct lds_transport *tp, const char *host, uint16_t port, const struct lds_tp_opts *o,
		       void *ud, struct lds_tp_conn **out, const char **step)
{
	struct addrinfo *res;
	struct lds_tp_conn *c;
	int fd, r;

	r = tcp_socket(host, port, 0, &res, &fd, step);
	if (r < 0)
		return r;
	r = tcp_tune(tp, fd, o, step);
	if (r == 0 && o && o->connect_timeout > 0) {
		/* Bounds how long SYNs and unacked data are retried. */
		unsigned ms = (unsigned)(o->connect_timeout * 1000.0);
		if (setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms)) < 0)
			r = -errno;
	}
	if (r == 0) {
		*step = "connect";
		if (connect(fd, res->ai_addr, res->ai_addrlen) < 0 && errno != EINPROGRESS)
			r = -errno;
	}
	freeaddrinfo(res);
	if (r < 0) {
		close(fd);
		return r;
	}
	c = tcp_conn_new(tp, fd, ud);
	if (c == NULL) {
		close(fd);
		return -ENOMEM;
	}
	c->connecting = 1;
	tcp_zc_setup(c, o);
	r = tcp_conn_watch(c);
	if (r < 0) {
		close(fd);
		tcp_zc_free(&c->zc);
		free(c);
		return r;
	}
	*out = c;
	return 0;
}

/* Out of descriptors: the waiting connection would make the listener
 * readable again at once, and the loop would spin.  The reserve descriptor
 * makes room to accept and close it (its peer learns at once); then the
 * core pauses the listener. */
static void tcp_accept_starved(struct lds_tp_listener *l, int err)
{
	struct lds_transport *tp = l->tp;
	int cfd;

	if (tp->reserve_fd >= 0) {
		close(tp->reserve_fd);
		cfd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd >= 0)
			close(cfd);
		tp->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	tp->up.accept_failed(l, err, l->ud);
}

static void tcp_accept_event(int fd, unsigned events, void *arg)
{
	struct lds_tp_listener *l = arg;
	const char *step;

	/* Bounded so a flood of connects cannot starve the loop. */
	for (int i = 0; i < 16; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct lds_tp_conn *c;

		if (cfd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				tcp_accept_starved(l, -errno);
			return; /* else EAGAIN, or an aborted connection: nothing to do */
		}
		if (tcp_tune(l->tp, cfd, &l->opts, &step) < 0 || (c = tcp_conn_new(l->tp, cfd, NULL)) == NULL) {
			close(cfd);
			continue;
		}
		tcp_peer_name(cfd, c->peer, sizeof(c->peer));
		tcp_zc_setup(c, &l->opts);
		if (tcp_conn_watch(c) < 0) {
			close(cfd);
			tcp_zc_free(&c->zc);
			free(c);
			continue;
		}
		l->tp->up.accepted(l, c, l->ud);
	}
}

static int tcp_listen(struct lds_transport *tp, const char *addr, uint16_t port, const struct lds_tp_opts *o,
		      void *ud, struct lds_tp_listener **out)
{
	struct addrinfo *res;
	struct lds_tp_listener *l;
	const char *step;
	int fd, r, one = 1;

	r = tcp_socket(addr, port, 1, &res, &fd, &step);
	if (r < 0)
		return r;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 128) < 0)
		r = -errno;
	freeaddrinfo(res);
	l = r == 0 ? calloc(1, sizeof(*l)) : NULL;
	if (r == 0 && l == NULL)
		r = -ENOMEM;
	if (r < 0) {
		close(fd);
		return r;
	}
	l->tp = tp;
	l->fd = fd;
	l->ud = ud;
	if (o) {
		l->opts = *o;
		if (o->conf)
			l->conf = *(const struct tcp_conf *)o->conf;
		l->opts.conf = o->conf ? &l->conf : NULL;
	}
	r = tp->host.watch(tp->host.ctx, fd, TP_EV_READ, tcp_accept_event, l);
	if (r < 0) {
		close(fd);
		free(l);
		return r;
	}
	*out = l;
	return 0;
}

static void tcp_listener_close(struct lds_tp_listener *l)
{
	l->tp->host.unwatch(l->tp->host.ctx, l->fd);
	close(l->fd);
	free(l);
}

static int tcp_listener_pause(struct lds_tp_listener *l, int paused)
{
	return l->tp->host.watch(l->tp->host.ctx, l->fd, paused ? 0 : TP_EV_READ, tcp_accept_event, l);
}

static void tcp_set_userdata(struct lds_tp_conn *c, void *ud)
{
	c->ud = ud;
}

static int tcp_set_opts(struct lds_tp_conn *c, const struct lds_tp_opts *o)
{
	const char *step;

	tcp_zc_setup(c, o);
	return tcp_tune(c->tp, c->fd, o, &step);
}

static int tcp_send_holds(struct lds_tp_conn *c)
{
	return c->zc.on;
}

static int tcp_send(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, unsigned flags, size_t *sent)
{
	struct msghdr mh = { 0 };
	int how = MSG_NOSIGNAL | MSG_DONTWAIT | (flags & LDS_TP_MORE ? MSG_MORE : 0), held = 0;
	ssize_t n;

	*sent = 0;
	mh.msg_iov = (struct iovec *)iov;
	mh.msg_iovlen = (size_t)iovcnt;
	if (c->zc.on && (flags & LDS_TP_HOLD)) {
		n = tcp_zc_sendmsg(&c->zc, c->fd, &mh, how, &held);
		if (n < 0)
			return n == -EAGAIN || n == -EWOULDBLOCK ? -EAGAIN : (int)n;
	} else {
		do
			n = sendmsg(c->fd, &mh, how);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
	*sent = (size_t)n;
	c->sent += (uint64_t)n;
	return held;
}

static void tcp_push(struct lds_tp_conn *c)
{
	int one = 1;

	/* Setting TCP_NODELAY (already on) sends what MSG_MORE held back.  It
	 * cannot fail on a connected socket; if it did, the data would still
	 * go out with the next send or the peer's next ACK. */
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int tcp_recv(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, size_t *got)
{
	struct msghdr mh = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
	ssize_t n;

	*got = 0;
	do
		n = recvmsg(c->fd, &mh, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return -EPIPE;
	*got = (size_t)n;
	c->recvd += (uint64_t)n;
	return 0;
}

static size_t tcp_pending(struct lds_tp_conn *c)
{
	int n = 0;

	return ioctl(c->fd, FIONREAD, &n) == 0 && n > 0 ? (size_t)n : 0;
}

/* SO_RCVLOWAT: poll reports the socket readable only with that much
 * queued, and the kernel wakes it anyway when the receive buffer runs
 * short, so waiting for more than can come never stalls the conn.  At
 * most a quarter of the receive buffer: more would make the kernel grow
 * the buffer and, before Linux 6.7, clamp the window to the low mark.  A
 * kernel that refuses either call wakes on every byte, as without it. */
static void tcp_rx_lowat(struct lds_tp_conn *c, size_t bytes)
{
	int v = bytes > TCP_RX_LOWAT_MAX ? TCP_RX_LOWAT_MAX : bytes < 1 ? 1 : (int)bytes, buf = 0;
	socklen_t len = sizeof(buf);

	if (v > 1 && getsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &buf, &len) == 0 && v > buf / 4)
		v = buf / 4 > 1 ? buf / 4 : 1;
	(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v));
}

static void tcp_tx_unsent(struct lds_tp_conn *c, size_t bytes)
{
	int v = bytes > INT_MAX ? INT_MAX : (int)bytes;

	/* Cannot fail on a connected socket; if it did, the old limit stays,
	 * which costs wake-ups, not data. */
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, sizeof(v));
}

static void tcp_want_write(struct lds_tp_conn *c, int on)
{
	if (c->want_w == !!on)
		return;
	c->want_w = !!on;
	/* A failed re-registration leaves the old mask; the next recv or send
	 * on the conn reports the underlying error. */
	(void)tcp_conn_watch(c);
}

static void tcp_want_read(struct lds_tp_conn *c, int on)
{
	if (c->no_read == !on)
		return;
	c->no_read = !on;
	(void)tcp_conn_watch(c);
}

static int tcp_query(struct lds_tp_conn *c, struct lds_tp_info *info)
{
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);

	memset(info, 0, sizeof(*info));
	info->bytes_sent = c->sent;
	info->bytes_recv = c->recvd;
	info->zc_sends = c->zc.sends;
	info->zc_completed = c->zc.completed;
	info->zc_copied = c->zc.copied;
	info->zc_refused = c->zc.refused;
	snprintf(info->peer, sizeof(info->peer), "%s", c->peer);
	if (getsockopt(c->fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) < 0)
		return -errno;
	info->rtt_us = ti.tcpi_rtt;
	info->min_rtt_us = ti.tcpi_min_rtt;
	info->cwnd = ti.tcpi_snd_cwnd;
	info->retransmits = ti.tcpi_total_retrans;
	return 0;
}

const struct lds_transport_ops tcp_transport_ops = {
	.size = LDS_TP_OPS_SIZE,
	.name = "tcp",
	.caps = { .flags = LDS_TP_CAP_STREAM | LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE | LDS_TP_CAP_FORK_SAFE },
	.options = tcp_options,
	.conf_size = sizeof(struct tcp_conf),
	.conf_defaults = tcp_conf_defaults,
	.check = tcp_conf_check,
	.init = tcp_init,
	.fini = tcp_fini,
	.listen = tcp_listen,
	.listener_close = tcp_listener_close,
	.listener_pause = tcp_listener_pause,
	.connect = tcp_connect,
	.set_userdata = tcp_set_userdata,
	.set_opts = tcp_set_opts,
	.send = tcp_send,
	.send_holds = tcp_send_holds,
	.push = tcp_push,
	.recv = tcp_recv,
	.pending = tcp_pending,
	.rx_lowat = tcp_rx_lowat,
	.tx_unsent = tcp_tx_unsent,
	.want_write = tcp_want_write,
	.want_read = tcp_want_read,
	.close = tcp_close,
	.query = tcp_query,
	.status = tcp_conf_status,
	.describe = tcp_conf_describe,
};
