/*
 * check_udp_e2e.c - the UDP transport end to end through its ops, over
 * loopback sockets and the daemon's own event loop: random-sized
 * messages (up to the largest allowed) through a shim that drops,
 * duplicates and reorders datagrams both ways (a fixed seed) arrive whole,
 * in order, once, with the bytes that were sent; sent upcalls come once
 * per message, in order; the sender's close ends the receiver's stream.
 * Also: sprayed garbage and forged handshakes allocate nothing and are
 * counted; a connect to a closed port fails; a close inside an upcall.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "ldsd/crc32c.h"
#include "ldsd/evloop.h"
#include "ldsd/tphost.h"
#include "suites.h"
#include "transports/udp/udp.h"

#define DEADLINE_MS 60000

/* ---- the shim: a UDP proxy between client and server ------------------ */

struct shim {
	int front, back;                 /* the client's side, the server's side */
	struct sockaddr_in client;
	int have_client;
	unsigned seed, loss, dup, reorder;  /* per mille */
	uint8_t held[UDP_PKT_MAX];
	size_t held_len;
	int held_dir;                    /* 0 none, 1 to server, 2 to client */
	unsigned dropped, duplicated, reordered, passed;
	uint64_t delay_ns;               /* one way, both ways: a long path */
	struct delayed { uint64_t at; int dir; size_t len; uint8_t b[UDP_PKT_MAX]; } *q;
	size_t qh, qn;                   /* a FIFO of SHIM_QUEUE datagrams on their way */
};
#define SHIM_QUEUE 8192

static void shim_send(struct shim *s, int dir, const uint8_t *b, size_t n)
{
	if (dir == 1)
		(void)send(s->back, b, n, MSG_DONTWAIT);
	else
		(void)sendto(s->front, b, n, MSG_DONTWAIT, (struct sockaddr *)&s->client, sizeof(s->client));
}

/* On a long path the datagram waits its delay (a full queue drops it). */
static void shim_out(struct shim *s, int dir, const uint8_t *b, size_t n)
{
	struct delayed *d;

	if (s->delay_ns == 0) {
		shim_send(s, dir, b, n);
		return;
	}
	if (s->qn == SHIM_QUEUE) {
		s->dropped++;
		return;
	}
	d = &s->q[(s->qh + s->qn++) % SHIM_QUEUE];
	d->at = udp_now_ns() + s->delay_ns;
	d->dir = dir;
	d->len = n;
	memcpy(d->b, b, n);
}

static void shim_due(struct shim *s)
{
	uint64_t now = udp_now_ns();

	while (s->qn && s->q[s->qh].at <= now) {
		shim_send(s, s->q[s->qh].dir, s->q[s->qh].b, s->q[s->qh].len);
		s->qh = (s->qh + 1) % SHIM_QUEUE;
		s->qn--;
	}
}

static void shim_release(struct shim *s)
{
	if (s->held_dir) {
		shim_out(s, s->held_dir, s->held, s->held_len);
		s->held_dir = 0;
	}
}

static void shim_pass(struct shim *s, int dir, const uint8_t *b, size_t n)
{
	unsigned r = (unsigned)rand_r(&s->seed) % 1000;

	if (r < s->loss) {
		s->dropped++;
		return;
	}
	r -= s->loss;
	if (r < s->reorder && !s->held_dir) {
		/* Held until the next datagram has gone (or the next tick). */
		memcpy(s->held, b, n);
		s->held_len = n;
		s->held_dir = dir;
		s->reordered++;
		return;
	}
	r -= s->reorder;
	shim_out(s, dir, b, n);
	if (r < s->dup) {
		shim_out(s, dir, b, n);
		s->duplicated++;
	}
	s->passed++;
	shim_release(s);
}

static void shim_event(int fd, unsigned events, void *arg)
{
	struct shim *s = arg;
	static uint8_t b[UDP_PKT_MAX + 1];

	for (int i = 0; i < 256; i++) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, b, sizeof(b), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

		if (n < 0)
			return;
		if (fd == s->front) {
			s->client = from;
			s->have_client = 1;
			shim_pass(s, 1, b, (size_t)n);
		} else if (s->have_client) {
			shim_pass(s, 2, b, (size_t)n);
		}
	}
}

static void shim_tick(uint64_t now, void *arg)
{
	shim_release(arg);
	shim_due(arg);
}

static uint16_t bind_loopback(int fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	return ntohs(a.sin_port);
}

/* Opens the shim in front of the server's port; returns the shim's port. */
static uint16_t shim_open(struct shim *s, struct evloop *ev, uint16_t server_port, unsigned seed)
{
	struct sockaddr_in srv = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				   .sin_port = htons(server_port) };
	int big = 4 << 20;
	uint16_t port;

	memset(s, 0, sizeof(*s));
	s->seed = seed;
	s->q = calloc(SHIM_QUEUE, sizeof(*s->q));
	ck_assert_ptr_nonnull(s->q);
	s->front = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	s->back = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s->front, 0);
	ck_assert_int_ge(s->back, 0);
	setsockopt(s->front, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(s->back, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	port = bind_loopback(s->front);
	ck_assert_int_eq(connect(s->back, (struct sockaddr *)&srv, sizeof(srv)), 0);
	ck_assert_int_eq(evloop_watch(ev, s->front, EV_READ, shim_event, s), 0);
	ck_assert_int_eq(evloop_watch(ev, s->back, EV_READ, shim_event, s), 0);
	ck_assert_int_gt(evloop_tick_add(ev, 1, shim_tick, s), 0);
	return port;
}

static void shim_close(struct shim *s, struct evloop *ev)
{
	evloop_unwatch(ev, s->front);
	evloop_unwatch(ev, s->back);
	close(s->front);
	close(s->back);
	free(s->q);
}

/* ---- one run: a client sends messages, a server receives them --------- */

struct run {
	const struct lds_transport_ops *ops;
	struct lds_transport *tp;
	struct evloop *ev;
	struct lds_tp_listener *l;
	struct lds_tp_conn *client, *server;
	uint16_t port;
	int nmsg;                        /* messages to send */
	size_t max_len;
	int next_send, next_sent, next_recv;
	int connected, connect_err, accepted, eof, recv_err, close_in_readable;
	int closed_client, closed_server, in_upcall, closed_inside;
	uint32_t crc_sent, crc_got;
	int timed_out;
	struct lds_tp_info info;         /* the client's, when all was acknowledged */
	uint8_t *held[64];               /* messages the transport holds, by number % 64 */
};

static struct run run;

/* Message i's length and bytes: both sides compute them from i. */
static size_t msg_len(int i)
{
	unsigned s = (unsigned)i * 2654435761u + 1;

	if (i == 3)
		return run.max_len;          /* one of the largest the kind takes */
	return 1 + (size_t)rand_r(&s) % (run.max_len < 200000 ? run.max_len : 200000);
}

static void msg_fill(int i, uint8_t *b, size_t n)
{
	unsigned s = (unsigned)i + 77;

	for (size_t k = 0; k < n; k++)
		b[k] = (uint8_t)rand_r(&s);
}

static void stop_when_done(void)
{
	if (run.closed_client && run.closed_server)
		evloop_stop(run.ev);
}

static void client_send(void)
{
	while (run.next_send < run.nmsg && run.next_send - run.next_sent < 64) {
		size_t n = msg_len(run.next_send);
		uint8_t *b = malloc(n);
		struct iovec iov[2];
		int r;

		ck_assert_ptr_nonnull(b);
		msg_fill(run.next_send, b, n);
		iov[0] = (struct iovec){ b, n / 3 };
		iov[1] = (struct iovec){ b + n / 3, n - n / 3 };
		r = run.ops->send_msg(run.client, iov, 2, NULL, b);
		if (r == -EAGAIN) {
			free(b);
			run.ops->want_write(run.client, 1);
			return;
		}
		if (r < 0 && run.close_in_readable) {
			/* The server closed: the conn is over, as the core would see it. */
			free(b);
			run.ops->close(run.client);
			return;
		}
		ck_assert_int_eq(r, 0);
		run.held[run.next_send % 64] = b;
		run.crc_sent = crc32c(run.crc_sent, b, n);
		run.next_send++;
	}
	run.ops->want_write(run.client, 0);
}

static void up_connected(struct lds_tp_conn *c, int err, void *ud)
{
	ck_assert_ptr_eq(ud, &run.client);
	run.connected++;
	run.connect_err = err;
	if (err) {
		run.closed_client = run.closed_server = 1;
		evloop_stop(run.ev);
		return;
	}
	run.client = c;
	client_send();
}

static void up_accepted(struct lds_tp_listener *l, struct lds_tp_conn *c, void *ud)
{
	ck_assert_ptr_eq(l, run.l);
	struct lds_tp_opts o = { 0 };

	run.accepted++;
	run.server = c;
	run.ops->set_userdata(c, &run.server);
	/* Until the core knows the link, the client may send a small window only. */
	ck_assert_uint_eq(udp_recvq_limit(&c->rq), UDP_WINDOW_PREAUTH);
	ck_assert_uint_eq(c->advertised, UDP_WINDOW_PREAUTH);
	ck_assert_int_eq(run.ops->set_opts(c, &o), 0);
	ck_assert_uint_eq(udp_recvq_limit(&c->rq), UDP_WINDOW_DEFAULT);
}

static void up_sent(struct lds_tp_conn *c, void *ctx, void *ud)
{
	ck_assert_ptr_eq(ud, &run.client);
	ck_assert_ptr_eq(ctx, run.held[run.next_sent % 64]);   /* in the order sent */
	free(ctx);
	run.held[run.next_sent % 64] = NULL;
	run.next_sent++;
	ck_assert_int_le(run.next_sent, run.next_send);
	if (run.next_sent == run.nmsg) {
		ck_assert_int_eq(run.ops->query(c, &run.info), 0);
		run.in_upcall++;
		run.ops->close(c);          /* all acknowledged: done */
		run.in_upcall--;
		return;
	}
	client_send();
}

static void up_readable(struct lds_tp_conn *c, void *ud)
{
	static uint8_t want[(4u << 20) + 64];
	struct lds_tp_msg m;
	int r;

	if (ud == &run.client) {
		r = run.ops->recv_msg(c, &m);
		ck_assert_int_ne(r, 0);
		if (r != -EAGAIN) {
			run.in_upcall++;
			run.ops->close(c);
			run.in_upcall--;
		}
		return;
	}
	run.in_upcall++;
	if (run.close_in_readable) {
		run.ops->close(c);
		run.in_upcall--;
		return;
	}
	while ((r = run.ops->recv_msg(c, &m)) == 0) {
		size_t n = msg_len(run.next_recv);

		ck_assert_int_lt(run.next_recv, run.nmsg);
		ck_assert_uint_eq(m.len, n);
		msg_fill(run.next_recv, want, n);
		ck_assert_msg(memcmp(m.data, want, n) == 0, "message %d differs", run.next_recv);
		run.crc_got = crc32c(run.crc_got, m.data, m.len);
		run.next_recv++;
		run.ops->msg_done(c, &m);
	}
	if (r != -EAGAIN) {
		run.eof = r == -EPIPE;
		run.recv_err = r;
		run.ops->close(c);
	}
	run.in_upcall--;
}

static void up_writable(struct lds_tp_conn *c, void *ud)
{
	ck_assert_ptr_eq(c, run.client);
	client_send();
}

static void up_closed(struct lds_tp_conn *c, void *ud)
{
	if (run.in_upcall)
		run.closed_inside++;
	if (ud == &run.client) {
		/* The transport let go of what it held: ours to free. */
		for (int i = 0; i < 64; i++) {
			free(run.held[i]);
			run.held[i] = NULL;
		}
		run.closed_client++;
	}
	else if (ud == &run.server)
		run.closed_server++;
	stop_when_done();
}

static void up_accept_failed(struct lds_tp_listener *l, int err, void *ud)
{
	ck_abort_msg("accept failed: %s", strerror(-err));
}

static const struct lds_tp_upcalls upcalls = {
	.connected = up_connected,
	.accepted = up_accepted,
	.accept_failed = up_accept_failed,
	.readable = up_readable,
	.writable = up_writable,
	.sent = up_sent,
	.closed = up_closed,
};

static void deadline(uint64_t now_ns, void *arg)
{
	run.timed_out = 1;
	evloop_stop(run.ev);
}

static void start(int nmsg, size_t max_len)
{
	struct lds_tp_host host;
	struct lds_tp_opts o = { 0 };
	int r = -EADDRINUSE;

	memset(&run, 0, sizeof(run));
	run.ops = transport_find("udp");
	ck_assert_ptr_nonnull(run.ops);
	run.nmsg = nmsg;
	run.max_len = max_len;
	run.ev = evloop_new();
	ck_assert_ptr_nonnull(run.ev);
	tphost_init(&host, run.ev);
	ck_assert_int_eq(run.ops->init(&run.tp, &host, &upcalls), 0);
	for (unsigned k = 0; k < 50 && r == -EADDRINUSE; k++) {
		run.port = (uint16_t)(20000 + ((unsigned)getpid() * 11 + k * 137) % 40000);
		r = run.ops->listen(run.tp, "127.0.0.1", run.port, &o, &run, &run.l);
	}
	ck_assert_int_eq(r, 0);
	ck_assert_int_gt(evloop_tick_add(run.ev, DEADLINE_MS, deadline, NULL), 0);
}

static void connect_to(uint16_t port)
{
	struct lds_tp_opts o = { .connect_timeout = 5.0 };
	const char *step = NULL;

	ck_assert_int_eq(run.ops->connect(run.tp, "127.0.0.1", port, &o, &run.client, &run.client, &step), 0);
}

static void finish(void)
{
	run.ops->listener_close(run.l);
	run.ops->fini(run.tp);
	evloop_free(run.ev);
}

static void check_delivery(void)
{
	ck_assert_msg(!run.timed_out, "timed out: sent %d, acknowledged %d, received %d", run.next_send,
		      run.next_sent, run.next_recv);
	ck_assert_int_eq(run.connected, 1);
	ck_assert_int_eq(run.connect_err, 0);
	ck_assert_int_eq(run.accepted, 1);
	ck_assert_int_eq(run.next_sent, run.nmsg);
	ck_assert_int_eq(run.next_recv, run.nmsg);
	ck_assert_uint_eq(run.crc_got, run.crc_sent);
	ck_assert_msg(run.eof == 1, "the receiver ended with %d, not -EPIPE", run.recv_err);
	ck_assert_int_eq(run.closed_client, 1);
	ck_assert_int_eq(run.closed_server, 1);
	ck_assert_int_eq(run.closed_inside, 0);
	ck_assert_uint_ge(run.info.bytes_sent, run.info.bytes_recv);
	ck_assert_uint_gt(run.info.rtt_us, 0);
	ck_assert_uint_le(run.info.min_rtt_us, run.info.rtt_us);
	ck_assert_uint_ge(run.info.cwnd, UDP_CC_MIN_CWND_PKTS);
	ck_assert_msg(strncmp(run.info.peer, "127.0.0.1:", 10) == 0, "peer %s", run.info.peer);
}

static struct shim shim;

/* A clean path: everything arrives, no retransmission needed. */
START_TEST(test_clean)
{
	start(200, UDP_MSG_MAX);
	connect_to(run.port);
	ck_assert_int_eq(evloop_run(run.ev), 0);
	check_delivery();
	ck_assert_uint_eq(run.tp->stats.bad, 0);
	ck_assert_uint_gt(run.info.bytes_sent, 200ull * 100000);
	finish();
}
END_TEST

/* 3 % loss, 2 % duplicates, 3 % reordered, both ways. */
START_TEST(test_lossy)
{
	uint16_t sp;

	start(150, UDP_MSG_MAX);
	sp = shim_open(&shim, run.ev, run.port, 12345);
	shim.loss = 30;
	shim.dup = 20;
	shim.reorder = 30;
	connect_to(sp);
	ck_assert_int_eq(evloop_run(run.ev), 0);
	check_delivery();
	ck_assert_uint_gt(shim.dropped, 10);
	ck_assert_uint_gt(shim.duplicated, 10);
	ck_assert_uint_gt(shim.reordered, 10);
	ck_assert_uint_gt(run.info.retransmits, 0);
	shim_close(&shim, run.ev);
	finish();
}
END_TEST

/* A 100 ms round trip with 2 % loss: the rate (printed) and the same
 * guarantees. */
START_TEST(test_long_path)
{
	uint16_t sp;
	uint64_t t0 = udp_now_ns(), bytes = 0;

	start(300, 200000);
	sp = shim_open(&shim, run.ev, run.port, 777);
	shim.delay_ns = 50000000;
	shim.loss = 20;
	connect_to(sp);
	ck_assert_int_eq(evloop_run(run.ev), 0);
	check_delivery();
	for (int i = 0; i < run.nmsg; i++)
		bytes += msg_len(i);
	printf("udp_e2e long path: %llu bytes in %.2f s, %u datagrams dropped, %u retransmits, srtt %u us, cwnd %u\n",
	       (unsigned long long)bytes, (double)(udp_now_ns() - t0) / 1e9, shim.dropped, run.info.retransmits,
	       run.info.rtt_us, run.info.cwnd);
	ck_assert_uint_ge(run.info.min_rtt_us, 100000);
	shim_close(&shim, run.ev);
	finish();
}
END_TEST

/* The server closes in its first readable upcall: the client sees the end
 * of its conn; one closed upcall each, never inside another. */
START_TEST(test_close_in_upcall)
{
	start(1000, 100000);
	run.close_in_readable = 1;
	connect_to(run.port);
	ck_assert_int_eq(evloop_run(run.ev), 0);
	ck_assert(!run.timed_out);
	ck_assert_int_eq(run.closed_client, 1);
	ck_assert_int_eq(run.closed_server, 1);
	ck_assert_int_eq(run.closed_inside, 0);
	ck_assert_int_eq(run.next_recv, 0);
	finish();
}
END_TEST

/* Nothing listens: ICMP says so, the connect fails, no conn is left. */
START_TEST(test_refused)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint16_t dead = bind_loopback(fd);

	close(fd);
	start(1, 10);
	connect_to(dead);
	ck_assert_int_eq(evloop_run(run.ev), 0);
	ck_assert(!run.timed_out);
	ck_assert_int_eq(run.connected, 1);
	ck_assert_int_eq(run.connect_err, -ECONNREFUSED);
	finish();
}
END_TEST

/* Datagrams from an attacker: garbage, INITs without and with forged
 * tokens, short INITs, packets for conns that do not exist.  Nothing is
 * allocated, every one is counted, a real client then still gets through. */
START_TEST(test_spray)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static uint8_t b[1400];
	unsigned seed = 99;
	struct udp_hdr h = { .type = UDP_PKT_INIT, .scid = 5 };

	start(20, 5000);
	to.sin_port = htons(run.port);
	bind_loopback(fd);
	for (int i = 0; i < 200; i++) {
		size_t n = (size_t)rand_r(&seed) % sizeof(b);

		for (size_t k = 0; k < n; k++)
			b[k] = (uint8_t)rand_r(&seed);
		ck_assert_int_ge(sendto(fd, b, n, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	}
	/* INIT with a forged token, 1300 bytes. */
	memset(b, 0, sizeof(b));
	udp_hdr_write(b, &h);
	b[UDP_HDR_LEN + 1] = UDP_TOKEN_LEN;
	memset(b + UDP_HDR_LEN + 2, 0xAA, UDP_TOKEN_LEN);
	udp_pkt_seal(b, 1300);
	for (int i = 0; i < 20; i++)
		ck_assert_int_ge(sendto(fd, b, 1300, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	/* INIT without a token: a RETRY comes back, nothing is kept. */
	b[UDP_HDR_LEN + 1] = 0;
	memset(b + UDP_HDR_LEN + 2, 0, UDP_TOKEN_LEN);
	udp_pkt_seal(b, 1300);
	for (int i = 0; i < 20; i++)
		ck_assert_int_ge(sendto(fd, b, 1300, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	/* Too short to be an INIT (it would amplify). */
	udp_pkt_seal(b, 300);
	ck_assert_int_ge(sendto(fd, b, 300, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	/* A DATA packet for a conn that does not exist. */
	h.type = UDP_PKT_DATA;
	h.dcid = 12345;
	udp_hdr_write(b, &h);
	udp_pkt_seal(b, 100);
	ck_assert_int_ge(sendto(fd, b, 100, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	connect_to(run.port);
	ck_assert_int_eq(evloop_run(run.ev), 0);
	check_delivery();
	ck_assert_uint_ge(run.tp->stats.bad, 190);
	ck_assert_uint_eq(run.tp->stats.bad_tokens, 20);
	ck_assert_uint_ge(run.tp->stats.retries, 21);            /* 20 sprayed, 1 for the real client */
	ck_assert_uint_ge(run.tp->stats.unknown, 1);
	ck_assert_int_eq(run.accepted, 1);                       /* the real client's conn only */
	{
		ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);

		ck_assert_int_eq(n, UDP_HDR_LEN + 2 + UDP_TOKEN_LEN); /* a RETRY, smaller than the INIT */
	}
	close(fd);
	finish();
}
END_TEST

/* The kind's status keys, from the settings block. */
START_TEST(test_status)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const struct lds_transport_ops *ops = transport_find("udp");
	struct udp_conf uc;

	ck_assert_ptr_nonnull(ops);
	ck_assert(ops->caps.flags & LDS_TP_CAP_MESSAGE);
	ck_assert_uint_ge(ops->caps.max_msg, (4u << 20) + 64);
	ops->conf_defaults(&uc);
	ops->status(&uc, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\"udp_mtu\":1232"));
	ck_assert_ptr_nonnull(strstr(buf, "\"udp_window\":16777216"));
	ck_assert_ptr_nonnull(strstr(buf, "\"udp_idle_timeout\":30"));
	free(buf);
}
END_TEST

Suite *make_udp_e2e_suite(void)
{
	Suite *s = suite_create("udp_e2e");
	TCase *tc = tcase_create("udp_e2e");

	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_clean);
	tcase_add_test(tc, test_lossy);
	tcase_add_test(tc, test_long_path);
	tcase_add_test(tc, test_close_in_upcall);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_spray);
	tcase_add_test(tc, test_status);
	suite_add_tcase(s, tc);
	return s;
}
