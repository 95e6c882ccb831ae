/*
 * check_conformance.c - the same transport-level promises checked over
 * every registered transport (the built-in ones and the tests' sample,
 * tp_mem.c), in the manner of libfabric's fabtests: connect, bytes of
 * random sizes arrive whole and in order (CRC-32C on both sides), a close
 * from either side ends the other's stream, and every close brings one
 * closed upcall, after the upcall it was made in, even when made inside
 * one.  Message kinds (LDS_TP_CAP_MESSAGE) send messages of random sizes
 * up to their max_msg from a ring of buffers, each rewritten only after
 * its sent upcall, which must come once per message, in send order; the
 * receiver checks each message's length (its boundaries are kept), and
 * the sender closes only once every message is reported sent.  The
 * link-level half (blocks, loss, reconnects, restarts) is check_link.c.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldsd/crc32c.h"
#include "ldsd/evloop.h"
#include "ldsd/tphost.h"
#include "suites.h"
#include "tp_mem.h"

#define TOTAL_BYTES (3u << 20)
#define CHUNK_MAX 65536
#define DEADLINE_MS 10000
#define RING 8                       /* message kinds: messages sent, not yet reported sent */

/* One run: a client conn sends, a server conn receives. */
struct run {
	const struct lds_transport_ops *ops;
	struct lds_transport *tp;
	struct evloop *ev;
	struct lds_tp_listener *l;
	struct lds_tp_conn *client, *server;
	int close_in_readable;       /* the server closes in its first readable upcall */
	int in_upcall;               /* an upcall of this run is running */
	int closed_client, closed_server, closed_inside;
	int connected, accepted, eof;
	size_t sent, got;
	uint32_t crc_sent, crc_got;
	unsigned seed;
	unsigned char chunk[CHUNK_MAX];
	size_t chunk_len, chunk_off;
	/* Message kinds: the ring of messages the transport holds. */
	int msg;
	unsigned char ring[RING][CHUNK_MAX];
	unsigned ring_head, ring_n;
	unsigned len_tx, len_rx;     /* the same sequence of message lengths, drawn on each side */
	size_t msgs_sent, msgs_got, msgs_reported;
	int timed_out;
	int send_err;                /* what broke the client's stream, 0: nothing */
	uint16_t port;
};

static struct run run;

static void stop_when_done(void)
{
	if (run.closed_client && run.closed_server)
		evloop_stop(run.ev);
}

static void next_chunk(void)
{
	run.chunk_len = 1 + (size_t)rand_r(&run.seed) % CHUNK_MAX;
	if (run.chunk_len > TOTAL_BYTES - run.sent)
		run.chunk_len = TOTAL_BYTES - run.sent;
	for (size_t i = 0; i < run.chunk_len; i++)
		run.chunk[i] = (unsigned char)rand_r(&run.seed);
	run.chunk_off = 0;
}

/* The next message's length, from the sequence at *seed, for the bytes
 * left of TOTAL_BYTES after done. */
static size_t msg_len(unsigned *seed, size_t done)
{
	size_t max = run.ops->caps.max_msg < CHUNK_MAX ? run.ops->caps.max_msg : CHUNK_MAX;
	size_t n = 1 + (size_t)rand_r(seed) % max;

	return n < TOTAL_BYTES - done ? n : TOTAL_BYTES - done;
}

/* One write of the client's, of what iov is set to: the rest of the
 * chunk (*n bytes taken), or the next message of the ring (whole). */
static int client_write(struct iovec *iov, size_t *n)
{
	unsigned char *m = run.ring[(run.ring_head + run.ring_n) % RING];
	int r;

	if (!run.msg) {
		if (run.chunk_off == run.chunk_len)
			next_chunk();
		iov->iov_base = run.chunk + run.chunk_off;
		iov->iov_len = run.chunk_len - run.chunk_off;
		r = run.ops->send(run.client, iov, 1, 0, n);
		if (r == 0)
			run.chunk_off += *n;
		return r;
	}
	iov->iov_base = m;
	iov->iov_len = *n = msg_len(&run.len_tx, run.sent);
	for (size_t i = 0; i < *n; i++)
		m[i] = (unsigned char)rand_r(&run.seed);
	r = run.ops->send_msg(run.client, iov, 1, NULL, m);
	if (r == 0) {
		run.msgs_sent++;
		run.ring_n++;
	}
	return r;
}

/* Sends until the transport (or, message kinds, the ring) takes no more;
 * closes the client when all is sent (and reported sent). */
static void client_send(void)
{
	while (run.sent < TOTAL_BYTES && run.ring_n < RING) {
		unsigned mark = run.len_tx;
		struct iovec iov;
		size_t n;
		int r = client_write(&iov, &n);

		if (r == -EAGAIN) {
			/* The same length next time: the receiver expects it. */
			run.len_tx = mark;
			run.ops->want_write(run.client, 1);
			return;
		}
		if (r < 0) {
			run.send_err = r;
			run.ops->close(run.client);
			return;
		}
		run.crc_sent = crc32c(run.crc_sent, iov.iov_base, n);
		run.sent += n;
	}
	if (run.sent == TOTAL_BYTES && run.ring_n == 0)
		run.ops->close(run.client);
}

static void up_connected(struct lds_tp_conn *c, int err, void *ud)
{
	ck_assert_int_eq(err, 0);
	ck_assert_ptr_eq(ud, &run.client);
	run.connected++;
	run.client = c;
	run.in_upcall++;
	client_send();
	run.in_upcall--;
}

static void up_accepted(struct lds_tp_listener *l, struct lds_tp_conn *c, void *ud)
{
	ck_assert_ptr_eq(l, run.l);
	run.accepted++;
	run.server = c;
	run.ops->set_userdata(c, &run.server);
}

/* The client reads only the end of its stream, once the server closed. */
static void client_readable(struct lds_tp_conn *c)
{
	unsigned char b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct lds_tp_msg m;
	size_t n;
	int r = run.msg ? run.ops->recv_msg(c, &m) : run.ops->recv(c, &iov, 1, &n);

	ck_assert_int_ne(r, 0);
	if (r != -EAGAIN)
		run.ops->close(c);
}

/* One read of the server's: 0 with the bytes at *p, *n (a message kind's
 * message, whole, of the length the sender drew: msg_done after), or
 * what recv or recv_msg said. */
static int server_read(struct lds_tp_conn *c, unsigned char *buf, size_t len, struct lds_tp_msg *m,
		       const unsigned char **p, size_t *n)
{
	struct iovec iov = { .iov_base = buf, .iov_len = 1 + (size_t)rand_r(&run.seed) % len };
	int r;

	if (!run.msg) {
		*p = buf;
		return run.ops->recv(c, &iov, 1, n);
	}
	r = run.ops->recv_msg(c, m);
	if (r < 0)
		return r;
	ck_assert_msg(m->len == msg_len(&run.len_rx, run.got), "%s: message %zu of %zu bytes, sent with another length",
		      run.ops->name, run.msgs_got, m->len);
	run.msgs_got++;
	*p = m->data;
	*n = m->len;
	return 0;
}

static void up_readable(struct lds_tp_conn *c, void *ud)
{
	unsigned char buf[32768];

	run.in_upcall++;
	if (ud == &run.client) {
		client_readable(c);
		run.in_upcall--;
		return;
	}
	ck_assert_ptr_eq(ud, &run.server);
	if (run.close_in_readable) {
		run.ops->close(c);
		run.in_upcall--;
		return;
	}
	for (int i = 0; i < 64; i++) {
		struct lds_tp_msg m;
		const unsigned char *p;
		size_t n;
		int r = server_read(c, buf, sizeof(buf), &m, &p, &n);

		if (r == -EAGAIN)
			break;
		if (r == -EPIPE) {
			run.eof = 1;
			run.ops->close(c);
			break;
		}
		ck_assert_int_eq(r, 0);
		run.crc_got = crc32c(run.crc_got, p, n);
		run.got += n;
		if (run.msg)
			run.ops->msg_done(c, &m);
	}
	run.in_upcall--;
}

static void up_writable(struct lds_tp_conn *c, void *ud)
{
	ck_assert_ptr_eq(c, run.client);
	run.ops->want_write(c, 0);
	client_send();
}

/* Once per message, oldest first; its buffer may be rewritten now. */
static void up_sent(struct lds_tp_conn *c, void *ctx, void *ud)
{
	ck_assert_ptr_eq(c, run.client);
	ck_assert_uint_gt(run.ring_n, 0);
	ck_assert_ptr_eq(ctx, run.ring[run.ring_head]);
	memset(run.ring[run.ring_head], 0xa5, CHUNK_MAX);
	run.ring_head = (run.ring_head + 1) % RING;
	run.ring_n--;
	run.msgs_reported++;
	run.in_upcall++;
	client_send();
	run.in_upcall--;
}

static void up_closed(struct lds_tp_conn *c, void *ud)
{
	if (run.in_upcall)
		run.closed_inside++;
	if (ud == &run.client)
		run.closed_client++;
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

/* Sets up kind i, listens on a free loopback port and connects to it. */
static void start(int i)
{
	struct lds_tp_host host;
	struct lds_tp_opts o = { 0 };
	int r = -EADDRINUSE;

	memset(&run, 0, sizeof(run));
	run.ops = transport_at((size_t)i);
	ck_assert_ptr_nonnull(run.ops);
	run.seed = (unsigned)getpid();
	run.msg = (run.ops->caps.flags & LDS_TP_CAP_MESSAGE) != 0;
	run.len_tx = run.len_rx = run.seed * 31;
	run.ev = evloop_new();
	ck_assert_ptr_nonnull(run.ev);
	tphost_init(&host, run.ev);
	ck_assert_int_eq(run.ops->init(&run.tp, &host, &upcalls), 0);
	for (unsigned k = 0; k < 50 && r == -EADDRINUSE; k++) {
		run.port = (uint16_t)(20000 + ((unsigned)getpid() * 7 + k * 131) % 40000);
		r = run.ops->listen(run.tp, "127.0.0.1", run.port, &o, &run, &run.l);
	}
	ck_assert_int_eq(r, 0);
	ck_assert_int_gt(evloop_tick_add(run.ev, DEADLINE_MS, deadline, NULL), 0);
}

static void connect_to_listener(void)
{
	struct lds_tp_opts o = { .connect_timeout = 5.0 };
	const char *step = NULL;

	ck_assert_int_eq(run.ops->connect(run.tp, "127.0.0.1", run.port, &o, &run.client, &run.client, &step), 0);
}

/* Runs the loop until both conns are closed; each got one closed upcall,
 * none inside another upcall. */
static void run_until_closed(void)
{
	ck_assert_int_eq(evloop_run(run.ev), 0);
	ck_assert_msg(!run.timed_out, "%s: timed out: sent %zu, got %zu, closed client %d, server %d",
		      run.ops->name, run.sent, run.got, run.closed_client, run.closed_server);
	ck_assert_int_eq(run.closed_client, 1);
	ck_assert_int_eq(run.closed_server, 1);
	ck_assert_int_eq(run.closed_inside, 0);
}

static void finish(void)
{
	run.ops->listener_close(run.l);
	run.ops->fini(run.tp);
	evloop_free(run.ev);
}

/* Random sizes arrive whole and in order; the sender's close ends the
 * receiver's stream; each conn gets one closed upcall, never inside
 * another. */
START_TEST(test_stream)
{
	start(_i);
	connect_to_listener();
	run_until_closed();
	ck_assert_int_eq(run.connected, 1);
	ck_assert_int_eq(run.accepted, 1);
	ck_assert_uint_eq(run.sent, TOTAL_BYTES);
	ck_assert_uint_eq(run.got, TOTAL_BYTES);
	ck_assert_uint_eq(run.crc_got, run.crc_sent);
	ck_assert_int_eq(run.eof, 1);
	ck_assert_int_eq(run.send_err, 0);
	ck_assert(!run.msg || run.msgs_sent > 0);
	ck_assert_uint_eq(run.msgs_got, run.msgs_sent);
	ck_assert_uint_eq(run.msgs_reported, run.msgs_sent);
	finish();
}
END_TEST

/* A conn closed inside its own readable upcall: nothing more is read from
 * it, its peer sees the end, and its closed upcall comes once, after. */
START_TEST(test_close_in_upcall)
{
	start(_i);
	run.close_in_readable = 1;
	connect_to_listener();
	run_until_closed();
	ck_assert_uint_eq(run.got, 0);
	finish();
}
END_TEST

Suite *make_conformance_suite(void)
{
	Suite *s = suite_create("conformance");
	TCase *tc = tcase_create("transport");
	int n = 0;

	/* Registered in the suite's process, which each test's inherits. */
	if ((transport_find(mem_transport_ops.name) == NULL && transport_register(&mem_transport_ops) < 0) ||
	    (transport_find(memmsg_transport_ops.name) == NULL && transport_register(&memmsg_transport_ops) < 0))
		fprintf(stderr, "conformance: cannot register the sample transports\n");
	while (transport_at((size_t)n) != NULL)
		n++;
	tcase_set_timeout(tc, 30);
	for (int i = 0; i < n; i++) {
		const struct lds_transport_ops *o = transport_at((size_t)i);
		char why[256];

		/* Check has no "skipped": a kind whose hardware is absent (RDMA
		 * here) is left out, saying so. */
		if (o->probe && o->probe(why, sizeof(why)) < 0) {
			fprintf(stderr, "conformance: %s: skipped: %s\n", o->name, why);
			continue;
		}
		tcase_add_loop_test(tc, test_stream, i, i + 1);
		tcase_add_loop_test(tc, test_close_in_upcall, i, i + 1);
	}
	suite_add_tcase(s, tc);
	return s;
}
