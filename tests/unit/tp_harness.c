/* tp_harness.c - one transport-level run for the unit tests; see
 * tp_harness.h. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldsd/crc32c.h"
#include "ldsd/tphost.h"
#include "tp_harness.h"

struct tp_run tp_run;

size_t tp_run_msg_len(int i)
{
	unsigned s = (unsigned)i * 2654435761u + tp_run.p.seed;
	size_t max = tp_run.p.max_len < 200000 ? tp_run.p.max_len : 200000;

	if (i == 3)
		return tp_run.p.max_len;
	return 1 + (size_t)rand_r(&s) % max;
}

static void msg_fill(int i, uint8_t *b, size_t n)
{
	unsigned s = (unsigned)i + 77 + tp_run.p.seed;

	for (size_t k = 0; k < n; k++)
		b[k] = (uint8_t)rand_r(&s);
}

static void stop_when_done(void)
{
	if (tp_run.closed_client && tp_run.closed_server)
		evloop_stop(tp_run.ev);
}

/* All is sent (message kinds: and reported sent): the client is done. */
static void client_done(void)
{
	tp_run.info_err = tp_run.p.ops->query ? tp_run.p.ops->query(tp_run.client, &tp_run.info) : -ENOSYS;
	tp_run.p.ops->close(tp_run.client);
}

/* Byte-stream kinds: one write of the rest of the chunk (a new one drawn
 * when it is all taken); *n bytes of iov taken. */
static int write_bytes(struct iovec *iov, size_t *n)
{
	int r;

	if (tp_run.chunk_off == tp_run.chunk_len) {
		tp_run.chunk_len = 1 + (size_t)rand_r(&tp_run.draw) % TP_RUN_CHUNK_MAX;
		if (tp_run.chunk_len > TP_RUN_TOTAL - tp_run.sent)
			tp_run.chunk_len = TP_RUN_TOTAL - tp_run.sent;
		for (size_t i = 0; i < tp_run.chunk_len; i++)
			tp_run.chunk[i] = (unsigned char)rand_r(&tp_run.draw);
		tp_run.chunk_off = 0;
	}
	iov->iov_base = tp_run.chunk + tp_run.chunk_off;
	iov->iov_len = tp_run.chunk_len - tp_run.chunk_off;
	r = tp_run.p.ops->send(tp_run.client, iov, 1, 0, n);
	if (r == 0)
		tp_run.chunk_off += *n;
	return r;
}

/* Message kinds: the next message, whole, in a buffer of its own (two
 * iovecs where it is long enough: the transport gathers them). */
static int write_msg(struct iovec *iov, size_t *n)
{
	uint8_t *b;
	struct iovec v[2];
	int r;

	*n = tp_run_msg_len(tp_run.next_send);
	b = malloc(*n);
	ck_assert_ptr_nonnull(b);
	msg_fill(tp_run.next_send, b, *n);
	v[0] = (struct iovec){ b, *n / 3 };
	v[1] = (struct iovec){ b + *n / 3, *n - *n / 3 };
	r = *n / 3 ? tp_run.p.ops->send_msg(tp_run.client, v, 2, NULL, b)
		   : tp_run.p.ops->send_msg(tp_run.client, &v[1], 1, NULL, b);
	if (r < 0) {
		free(b);
		return r;
	}
	tp_run.held[tp_run.next_send % TP_RUN_WINDOW_MAX] = b;
	tp_run.next_send++;
	*iov = (struct iovec){ b, *n };
	return 0;
}

static bool more_to_send(void)
{
	if (!tp_run.msg)
		return tp_run.sent < TP_RUN_TOTAL;
	return tp_run.next_send < tp_run.p.nmsg && tp_run.next_send - tp_run.next_sent < tp_run.p.window;
}

/* Sends until the transport (or, message kinds, the window) takes no
 * more; a byte-stream client closes when all is sent. */
static void client_send(void)
{
	while (more_to_send()) {
		struct iovec iov;
		size_t n;
		int r = tp_run.msg ? write_msg(&iov, &n) : write_bytes(&iov, &n);

		if (r == -EAGAIN) {
			tp_run.p.ops->want_write(tp_run.client, 1);
			return;
		}
		if (r < 0) {
			tp_run.send_err = r;
			tp_run.p.ops->close(tp_run.client);
			return;
		}
		tp_run.crc_sent = crc32c(tp_run.crc_sent, iov.iov_base, n);
		tp_run.sent += n;
	}
	if (!tp_run.msg && tp_run.sent == TP_RUN_TOTAL)
		client_done();
}

static void up_connected(struct lds_tp_conn *c, int err, void *ud)
{
	ck_assert_ptr_eq(ud, &tp_run.client);
	tp_run.connected++;
	tp_run.connect_err = err;
	if (err) {
		evloop_stop(tp_run.ev);   /* no conn is left: no closed upcall comes */
		return;
	}
	tp_run.client = c;
	tp_run.in_upcall++;
	client_send();
	tp_run.in_upcall--;
}

static void up_accepted(struct lds_tp_listener *l, struct lds_tp_conn *c, void *ud)
{
	ck_assert_ptr_eq(l, tp_run.l);
	tp_run.accepted++;
	tp_run.server = c;
	tp_run.p.ops->set_userdata(c, &tp_run.server);
	if (tp_run.p.accepted)
		tp_run.p.accepted(c);
}

/* The client reads only the end of its conn, once the server closed. */
static void client_readable(struct lds_tp_conn *c)
{
	unsigned char b;
	struct iovec iov = { .iov_base = &b, .iov_len = 1 };
	struct lds_tp_msg m;
	size_t n;
	int r = tp_run.msg ? tp_run.p.ops->recv_msg(c, &m) : tp_run.p.ops->recv(c, &iov, 1, &n);

	ck_assert_int_ne(r, 0);
	if (r != -EAGAIN)
		tp_run.p.ops->close(c);
}

/* One read of the server's: 0 with the bytes at *p, *n (a message, whole,
 * checked against what its number says: msg_done after), or what recv or
 * recv_msg said. */
static int server_read(struct lds_tp_conn *c, unsigned char *buf, size_t len, struct lds_tp_msg *m,
		       const unsigned char **p, size_t *n)
{
	static uint8_t want[(4u << 20) + 64];
	struct iovec iov = { .iov_base = buf, .iov_len = 1 + (size_t)rand_r(&tp_run.draw) % len };
	size_t expect;
	int r;

	if (!tp_run.msg) {
		*p = buf;
		return tp_run.p.ops->recv(c, &iov, 1, n);
	}
	r = tp_run.p.ops->recv_msg(c, m);
	if (r < 0)
		return r;
	ck_assert_int_lt(tp_run.next_recv, tp_run.p.nmsg);
	expect = tp_run_msg_len(tp_run.next_recv);
	ck_assert_msg(m->len == expect, "%s: message %d of %zu bytes, sent with %zu", tp_run.p.ops->name,
		      tp_run.next_recv, m->len, expect);
	ck_assert_uint_le(expect, sizeof(want));
	msg_fill(tp_run.next_recv, want, expect);
	ck_assert_msg(memcmp(m->data, want, expect) == 0, "%s: message %d differs", tp_run.p.ops->name,
		      tp_run.next_recv);
	tp_run.next_recv++;
	*p = m->data;
	*n = m->len;
	return 0;
}

static void server_readable(struct lds_tp_conn *c)
{
	unsigned char buf[32768];

	if (tp_run.close_in_readable) {
		tp_run.p.ops->close(c);
		return;
	}
	/* A bounded number of reads: the transport must call again for the rest. */
	for (int i = 0; i < 64; i++) {
		struct lds_tp_msg m;
		const unsigned char *p;
		size_t n;
		int r = server_read(c, buf, sizeof(buf), &m, &p, &n);

		if (r == -EAGAIN)
			return;
		if (r < 0) {
			tp_run.eof = r == -EPIPE;
			tp_run.recv_err = r;
			tp_run.p.ops->close(c);
			return;
		}
		tp_run.crc_got = crc32c(tp_run.crc_got, p, n);
		tp_run.got += n;
		if (tp_run.msg)
			tp_run.p.ops->msg_done(c, &m);
	}
}

static void up_readable(struct lds_tp_conn *c, void *ud)
{
	tp_run.in_upcall++;
	if (ud == &tp_run.client) {
		client_readable(c);
	} else {
		ck_assert_ptr_eq(ud, &tp_run.server);
		server_readable(c);
	}
	tp_run.in_upcall--;
}

static void up_writable(struct lds_tp_conn *c, void *ud)
{
	ck_assert_ptr_eq(c, tp_run.client);
	tp_run.p.ops->want_write(c, 0);
	tp_run.in_upcall++;
	client_send();
	tp_run.in_upcall--;
}

/* Once per message, oldest first; its buffer may be rewritten now. */
static void up_sent(struct lds_tp_conn *c, void *ctx, void *ud)
{
	uint8_t **slot = &tp_run.held[tp_run.next_sent % TP_RUN_WINDOW_MAX];

	ck_assert_ptr_eq(c, tp_run.client);
	ck_assert_int_lt(tp_run.next_sent, tp_run.next_send);
	ck_assert_ptr_eq(ctx, *slot);    /* in the order sent */
	memset(*slot, 0xa5, tp_run_msg_len(tp_run.next_sent));
	free(*slot);
	*slot = NULL;
	tp_run.next_sent++;
	tp_run.in_upcall++;
	if (tp_run.next_sent == tp_run.p.nmsg)
		client_done();
	else
		client_send();
	tp_run.in_upcall--;
}

static void up_closed(struct lds_tp_conn *c, void *ud)
{
	if (tp_run.in_upcall)
		tp_run.closed_inside++;
	if (ud == &tp_run.client) {
		/* The transport let go of what it held: ours to free. */
		for (int i = 0; i < TP_RUN_WINDOW_MAX; i++) {
			free(tp_run.held[i]);
			tp_run.held[i] = NULL;
		}
		tp_run.closed_client++;
	} else if (ud == &tp_run.server) {
		tp_run.closed_server++;
	}
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
	tp_run.timed_out = 1;
	evloop_stop(tp_run.ev);
}

void tp_run_start(const struct tp_run_params *p)
{
	struct lds_tp_host host;
	struct lds_tp_opts o = { 0 };
	int r = -EADDRINUSE;

	memset(&tp_run, 0, sizeof(tp_run));
	tp_run.p = *p;
	ck_assert_ptr_nonnull(p->ops);
	tp_run.msg = (p->ops->caps.flags & LDS_TP_CAP_MESSAGE) != 0;
	if (tp_run.p.window == 0)
		tp_run.p.window = 8;
	if (tp_run.p.seed == 0)
		tp_run.p.seed = (unsigned)getpid();
	if (tp_run.p.deadline_ms == 0)
		tp_run.p.deadline_ms = 10000;
	ck_assert_int_le(tp_run.p.window, TP_RUN_WINDOW_MAX);
	ck_assert(!tp_run.msg || (tp_run.p.nmsg >= 1 && tp_run.p.max_len >= 1 &&
				  tp_run.p.max_len <= p->ops->caps.max_msg));
	tp_run.draw = tp_run.p.seed;
	tp_run.ev = evloop_new();
	ck_assert_ptr_nonnull(tp_run.ev);
	tphost_init(&host, tp_run.ev);
	ck_assert_int_eq(p->ops->init(&tp_run.tp, &host, &upcalls), 0);
	for (unsigned k = 0; k < 50 && r == -EADDRINUSE; k++) {
		tp_run.port = (uint16_t)(20000 + ((unsigned)getpid() * 7 + k * 131) % 40000);
		r = p->ops->listen(tp_run.tp, "127.0.0.1", tp_run.port, &o, &tp_run, &tp_run.l);
	}
	ck_assert_int_eq(r, 0);
	ck_assert_int_gt(evloop_tick_add(tp_run.ev, tp_run.p.deadline_ms, deadline, NULL), 0);
}

void tp_run_connect(uint16_t port)
{
	struct lds_tp_opts o = { .connect_timeout = 5.0 };
	const char *step = NULL;

	ck_assert_int_eq(tp_run.p.ops->connect(tp_run.tp, "127.0.0.1", port, &o, &tp_run.client, &tp_run.client,
					       &step), 0);
}

void tp_run_loop(void)
{
	ck_assert_int_eq(evloop_run(tp_run.ev), 0);
}

void tp_run_check_closed(void)
{
	ck_assert_msg(!tp_run.timed_out, "%s: timed out: sent %zu bytes (%d messages, %d reported sent), got %zu "
		      "(%d messages), closed client %d, server %d", tp_run.p.ops->name, tp_run.sent, tp_run.next_send,
		      tp_run.next_sent, tp_run.got, tp_run.next_recv, tp_run.closed_client, tp_run.closed_server);
	ck_assert_int_eq(tp_run.connect_err, 0);
	ck_assert_int_eq(tp_run.closed_client, 1);
	ck_assert_int_eq(tp_run.closed_server, 1);
	ck_assert_int_eq(tp_run.closed_inside, 0);
}

void tp_run_check_delivery(void)
{
	tp_run_check_closed();
	ck_assert_int_eq(tp_run.connected, 1);
	ck_assert_int_eq(tp_run.accepted, 1);
	ck_assert_int_eq(tp_run.send_err, 0);
	if (tp_run.msg) {
		ck_assert_int_eq(tp_run.next_send, tp_run.p.nmsg);
		ck_assert_int_eq(tp_run.next_sent, tp_run.p.nmsg);
		ck_assert_int_eq(tp_run.next_recv, tp_run.p.nmsg);
	} else {
		ck_assert_uint_eq(tp_run.sent, TP_RUN_TOTAL);
	}
	ck_assert_uint_eq(tp_run.got, tp_run.sent);
	ck_assert_uint_eq(tp_run.crc_got, tp_run.crc_sent);
	ck_assert_msg(tp_run.eof == 1, "%s: the receiver ended with %d, not -EPIPE", tp_run.p.ops->name,
		      tp_run.recv_err);
}

void tp_run_close_in_upcall(void)
{
	tp_run.close_in_readable = 1;
	tp_run_connect(tp_run.port);
	tp_run_loop();
	tp_run_check_closed();
	ck_assert_uint_eq(tp_run.got, 0);
	ck_assert_int_eq(tp_run.next_recv, 0);
}

void tp_run_finish(void)
{
	tp_run.p.ops->listener_close(tp_run.l);
	tp_run.p.ops->fini(tp_run.tp);
	evloop_free(tp_run.ev);
}
