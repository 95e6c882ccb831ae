/*
 * check_rdma_relay.c - the RDMA client path without a device: the relay
 * (transports/rdma/rdx_relay.c) between a socket and a message conn, and
 * liblds's connection thread (libclient/rdmaclient.c), all over a fake
 * message kind whose conns hold the sender's memory until a few rounds
 * later (like the rdma kind) and allow `depth` messages not yet done with by
 * the receiver (its credits).
 *
 * Checked: client frames larger than a message cross message boundaries
 * byte for byte, both ways at once; a reader that stops reading stops
 * its sender within the credits, and everything arrives once it reads
 * again; an empty or oversized message from the peer ends the relay with
 * -EMSGSIZE and none of it reaches the socket; each side's end reaches
 * the other after the bytes before it; liblds's thread relays and frees
 * everything once the handle's socket closes; no device, -ENODEV; a
 * connect that never completes, -ETIMEDOUT (the loop itself:
 * check_tploop.c).  And the whole path, liblds's thread to a gateway-side relay, over a real message
 * kind (udp on loopback) in place of rdma: everything but the verbs, and
 * a bidirectional flow for the udp kind (it stalled in half the runs
 * before udp_conn.c sent the ACKs it built while its window was full, and
 * told a lost window again).
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "libclient/deadline.h"
#include "libclient/rdmaclient.h"
#include "libclient/tploop.h"
#include "suites.h"
#include "transports/rdma/rdx_relay.h"

/* ---- the fake message kind ------------------------------------------------ */

#define FK_Q 64
#define FK_LAG 16  /* rounds between deliveries */

struct lds_tp_conn {
	struct lds_transport *tp;
	struct lds_tp_conn *peer;     /* itself: an echo */
	void *ud;
	struct {
		const uint8_t *p;
		size_t len;
		void *ctx;
	} out[FK_Q];                  /* taken, delivered at the next round */
	unsigned nout;
	struct {
		uint8_t *data;
		size_t len;
	} in[FK_Q];
	unsigned in_head, nin;
	unsigned unacked;             /* sent, not yet done with by the peer: at most depth */
	unsigned max_unacked, eagain, writables;
	int want_w, no_read, connect_due, closed, closed_told;
};

struct lds_transport {
	struct lds_tp_host host;
	struct lds_tp_upcalls up;
	int pending_id;
	struct lds_tp_conn *conns[4];
	int n;
	unsigned round;
};

static unsigned fk_depth = 4;
static int fk_init_err;
static int fk_connect_never;
static atomic_int fk_finis;

static int fk_pending(void *arg)
{
	struct lds_transport *tp = arg;
	/* Sends complete a few rounds late, as an adapter's do: the sender's
	 * memory must stay put until then. */
	int deliver = tp->round++ % FK_LAG == 0;
	int work = 0;

	for (int i = 0; i < tp->n; i++) {
		struct lds_tp_conn *c = tp->conns[i];

		if (c->closed) {
			if (!c->closed_told && tp->up.closed) {
				c->closed_told = 1;
				tp->up.closed(c, c->ud);
			}
			continue;
		}
		if (c->connect_due) {
			c->connect_due = 0;
			tp->up.connected(c, 0, c->ud);
			work = 1;
			continue;
		}
		/* Deliveries of this round, then their sent upcalls in order. */
		while (deliver && c->nout > 0 && !c->closed) {
			struct lds_tp_conn *p = c->peer;
			void *ctx = c->out[0].ctx;

			if (!p->closed) {
				unsigned k = (p->in_head + p->nin++) % FK_Q;

				p->in[k].data = malloc(c->out[0].len);
				ck_assert_ptr_nonnull(p->in[k].data);
				memcpy(p->in[k].data, c->out[0].p, c->out[0].len);
				p->in[k].len = c->out[0].len;
			}
			memmove(&c->out[0], &c->out[1], --c->nout * sizeof(c->out[0]));
			tp->up.sent(c, ctx, c->ud);
		}
		work |= c->nout > 0;
		if (c->closed)
			continue;
		if (!c->no_read && (c->nin > 0 || c->peer->closed)) {
			tp->up.readable(c, c->ud);
			work = c->nin > 0 || work;
		}
		if (!c->closed && c->want_w && c->unacked < fk_depth) {
			c->writables++;
			tp->up.writable(c, c->ud);
			work = 1;
		}
	}
	return work;
}

static int fk_init(struct lds_transport **out, const struct lds_tp_host *host, const struct lds_tp_upcalls *up)
{
	struct lds_transport *tp;

	if (fk_init_err)
		return fk_init_err;
	tp = calloc(1, sizeof(*tp));
	ck_assert_ptr_nonnull(tp);
	tp->host = *host;
	tp->up = *up;
	tp->pending_id = host->pending_add(host->ctx, fk_pending, tp);
	ck_assert_int_gt(tp->pending_id, 0);
	*out = tp;
	return 0;
}

static void fk_fini(struct lds_transport *tp)
{
	tp->host.pending_del(tp->host.ctx, tp->pending_id);
	for (int i = 0; i < tp->n; i++) {
		struct lds_tp_conn *c = tp->conns[i];

		if (c->closed && !c->closed_told && tp->up.closed)
			tp->up.closed(c, c->ud);
		for (unsigned k = 0; k < c->nin; k++)
			free(c->in[(c->in_head + k) % FK_Q].data);
		free(c);
	}
	free(tp);
	atomic_fetch_add(&fk_finis, 1);
}

static struct lds_tp_conn *fk_conn(struct lds_transport *tp, void *ud)
{
	struct lds_tp_conn *c = calloc(1, sizeof(*c));

	ck_assert_ptr_nonnull(c);
	ck_assert_int_lt(tp->n, 4);
	c->tp = tp;
	c->peer = c;
	c->ud = ud;
	tp->conns[tp->n++] = c;
	return c;
}

static int fk_connect(struct lds_transport *tp, const char *host, uint16_t port, const struct lds_tp_opts *o,
		      void *ud, struct lds_tp_conn **out, const char **step)
{
	struct lds_tp_conn *c = fk_conn(tp, ud);

	c->connect_due = !fk_connect_never;
	*out = c;
	return 0;
}

static void fk_set_userdata(struct lds_tp_conn *c, void *ud)
{
	c->ud = ud;
}

static int fk_send_msg(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx)
{
	ck_assert_int_eq(iovcnt, 1);
	ck_assert(!c->closed);
	if (c->unacked >= fk_depth || c->nout == FK_Q) {
		c->eagain++;
		return -EAGAIN;
	}
	c->out[c->nout].p = iov[0].iov_base;
	c->out[c->nout].len = iov[0].iov_len;
	c->out[c->nout++].ctx = ctx;
	if (++c->unacked > c->max_unacked)
		c->max_unacked = c->unacked;
	return 0;
}

static int fk_recv_msg(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	if (c->nin == 0)
		return c->peer->closed ? -EPIPE : -EAGAIN;
	m->data = c->in[c->in_head].data;
	m->len = c->in[c->in_head].len;
	return 0;
}

static void fk_msg_done(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	ck_assert_ptr_eq(m->data, c->in[c->in_head].data);
	free(c->in[c->in_head].data);
	c->in_head = (c->in_head + 1) % FK_Q;
	c->nin--;
	c->peer->unacked--;
}

static void fk_want_write(struct lds_tp_conn *c, int on)
{
	c->want_w = on;
}

static void fk_want_read(struct lds_tp_conn *c, int on)
{
	c->no_read = !on;
}

static void fk_close(struct lds_tp_conn *c)
{
	c->closed = 1;
}

static int fk_query(struct lds_tp_conn *c, struct lds_tp_info *info)
{
	snprintf(info->peer, sizeof(info->peer), "fake");
	return 0;
}

static const struct lds_transport_ops fake_ops = {
	.size = LDS_TP_OPS_SIZE,
	.name = "fake-msg",
	.caps = { .flags = LDS_TP_CAP_MESSAGE | LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE, .max_msg = 1 << 20 },
	.init = fk_init,
	.fini = fk_fini,
	.connect = fk_connect,
	.set_userdata = fk_set_userdata,
	.send_msg = fk_send_msg,
	.recv_msg = fk_recv_msg,
	.msg_done = fk_msg_done,
	.want_write = fk_want_write,
	.want_read = fk_want_read,
	.close = fk_close,
	.query = fk_query,
};

/* ---- two relays over a pair of fake conns, on one loop --------------------- */

struct side {
	struct rdx_relay *r;
	struct lds_tp_conn *c;
	int app;                      /* the application's end of the socketpair */
	int done, err, freed;
};

static struct tploop *loop;
static struct lds_transport *tp;
static struct side A, B;

static void on_done(struct rdx_relay *r, int err, const char *why, void *arg)
{
	struct side *s = arg;

	ck_assert(!s->done);
	s->done = 1;
	s->err = err;
	rdx_relay_close(r);
}

static void on_closed(struct lds_tp_conn *c, void *ud)
{
	struct side *s = rdx_relay_arg(ud);

	rdx_relay_free(ud);
	s->freed = 1;
}

static const struct lds_tp_upcalls relay_up = {
	.readable = rdx_relay_on_readable,
	.writable = rdx_relay_on_writable,
	.sent = rdx_relay_on_sent,
	.closed = on_closed,
};

static void side_start(struct side *s)
{
	struct lds_tp_host h;
	int sv[2];

	memset(s, 0, sizeof(*s));
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	s->app = sv[0];
	s->c = fk_conn(tp, NULL);
	tploop_host(loop, &h);
	ck_assert_int_eq(rdx_relay_new(&s->r, &h, &fake_ops, s->c, sv[1], on_done, s), 0);
	fake_ops.set_userdata(s->c, s->r);
}

static void setup(void)
{
	struct lds_tp_host h;

	fk_depth = 4;
	loop = tploop_new();
	ck_assert_ptr_nonnull(loop);
	tploop_host(loop, &h);
	ck_assert_int_eq(fake_ops.init(&tp, &h, &relay_up), 0);
	side_start(&A);
	side_start(&B);
	A.c->peer = B.c;
	B.c->peer = A.c;
}

static void teardown(void)
{
	if (!A.done)
		rdx_relay_close(A.r);
	if (!B.done)
		rdx_relay_close(B.r);
	fake_ops.fini(tp);
	ck_assert(A.freed && B.freed);
	close(A.app);
	close(B.app);
	tploop_free(loop);
}

/* A stream of length-prefixed frames, some far larger than a message. */
static uint8_t *frames(size_t total, unsigned seed)
{
	uint8_t *b = malloc(total);
	size_t off = 0;

	ck_assert_ptr_nonnull(b);
	srand(seed);
	while (off < total) {
		size_t n = 1 + (size_t)rand() % (3 * RDX_RELAY_MSG);

		if (n > total - off)
			n = total - off;
		for (size_t k = 0; k < n; k++)
			b[off + k] = (uint8_t)(k == 0 ? n : (k * 31 + seed + off));
		off += n;
	}
	return b;
}

struct flow {
	const uint8_t *src;
	size_t len, wrote, got;
	uint8_t *dst;
	int from, to;
	int reading;                  /* 0: the reader does not read yet */
	int write_blocked;
};

static void flow_init(struct flow *f, const uint8_t *src, size_t len, int from, int to)
{
	memset(f, 0, sizeof(*f));
	f->src = src;
	f->len = len;
	f->dst = malloc(len + 1);
	ck_assert_ptr_nonnull(f->dst);
	f->from = from;
	f->to = to;
	f->reading = 1;
}

/* Writes and reads what the sockets take, in odd sizes. */
static void flow_step(struct flow *f)
{
	size_t n = 1 + (size_t)rand() % 100000;
	ssize_t w;

	if (f->wrote < f->len) {
		if (n > f->len - f->wrote)
			n = f->len - f->wrote;
		w = write(f->from, f->src + f->wrote, n);
		if (w > 0)
			f->wrote += (size_t)w;
		else
			f->write_blocked++;
	}
	while (f->reading) {
		ssize_t r = read(f->to, f->dst + f->got, f->len + 1 - f->got);

		if (r <= 0)
			break;
		f->got += (size_t)r;
	}
}

static void run_flows(struct flow *f, int nf, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		int left = 0;

		for (int k = 0; k < nf; k++) {
			flow_step(&f[k]);
			left |= f[k].got < f[k].len;
		}
		if (!left)
			return;
		ck_assert_int_eq(tploop_run_once(loop, 5), 0);
	}
}

START_TEST(frames_cross_messages_both_ways)
{
	size_t len = 700000;
	uint8_t *ab = frames(len, 1), *ba = frames(len, 2);
	struct flow f[2];

	/* More credits than the relay has slots: the slots, which stay the
	 * transport's until sent, bound what is in flight. */
	fk_depth = 32;
	flow_init(&f[0], ab, len, A.app, B.app);
	flow_init(&f[1], ba, len, B.app, A.app);
	run_flows(f, 2, 20000);
	for (int k = 0; k < 2; k++) {
		ck_assert_uint_eq(f[k].got, len);
		ck_assert(memcmp(f[k].dst, f[k].src, len) == 0);
		free(f[k].dst);
	}
	/* More messages than a frame each: frames were cut across them. */
	{
		uint64_t out, in;

		rdx_relay_counts(A.r, &out, &in);
		ck_assert_uint_eq(out, len);
		ck_assert_uint_eq(in, len);
	}
	ck_assert_uint_le(A.c->max_unacked, RDX_RELAY_SLOTS);
	ck_assert(!A.done && !B.done);
	free(ab);
	free(ba);
}
END_TEST

START_TEST(credits_exhausted_and_returned)
{
	size_t len = 2u << 20;
	uint8_t *ab = frames(len, 3);
	struct flow f;

	fk_depth = 2;
	flow_init(&f, ab, len, A.app, B.app);
	f.reading = 0;
	run_flows(&f, 1, 400);
	/* B's reader sleeps: B stops taking messages, A runs out of credits
	 * and stops reading its socket, whose writer then blocks. */
	ck_assert_uint_eq(f.got, 0);
	ck_assert_uint_lt(f.wrote, len);
	ck_assert_uint_gt(f.write_blocked, 0);
	ck_assert_int_eq(B.c->no_read, 1);
	ck_assert_uint_gt(A.c->eagain, 0);
	ck_assert_uint_eq(A.c->max_unacked, 2);
	/* It reads again: the credits come back and everything arrives. */
	f.reading = 1;
	run_flows(&f, 1, 40000);
	ck_assert_uint_eq(f.got, len);
	ck_assert(memcmp(f.dst, ab, len) == 0);
	ck_assert_uint_gt(A.c->writables, 0);
	ck_assert_uint_le(A.c->max_unacked, 2);
	free(f.dst);
	free(ab);
}
END_TEST

/* The peer's side hands B a message no relay sends. */
static void refused(size_t len)
{
	struct lds_tp_conn *c = B.c;
	uint8_t b;

	c->in[0].data = calloc(1, len + 1);
	c->in[0].len = len;
	c->nin = 1;
	A.c->unacked = 1;
	for (int i = 0; i < 20 && !B.done; i++)
		ck_assert_int_eq(tploop_run_once(loop, 5), 0);
	ck_assert(B.done);
	ck_assert_int_eq(B.err, -EMSGSIZE);
	/* Nothing of it reached the application; the socket just ends. */
	ck_assert_int_eq(read(B.app, &b, 1), 0);
}

START_TEST(oversized_message_refused)
{
	refused(RDX_RELAY_MSG + 1);
}
END_TEST

START_TEST(empty_message_refused)
{
	refused(0);
}
END_TEST

START_TEST(ends_reach_the_other_side_after_the_bytes)
{
	size_t len = 300000;
	uint8_t *ab = frames(len, 4);
	struct flow f;

	flow_init(&f, ab, len, A.app, B.app);
	run_flows(&f, 1, 20000);
	ck_assert_uint_eq(f.wrote, len);
	shutdown(A.app, SHUT_WR);
	for (int i = 0; i < 2000 && !(A.done && B.done); i++) {
		flow_step(&f);
		ck_assert_int_eq(tploop_run_once(loop, 5), 0);
	}
	ck_assert(A.done && B.done);
	ck_assert_int_eq(A.err, 0);
	ck_assert_int_eq(B.err, 0);
	flow_step(&f);
	ck_assert_uint_eq(f.got, len);
	ck_assert(memcmp(f.dst, ab, len) == 0);
	ck_assert_int_eq(read(B.app, f.dst, 1), 0);   /* then the end */
	free(f.dst);
	free(ab);
}
END_TEST

/* ---- liblds's connection thread --------------------------------------------- */

static void wait_finis(int want)
{
	for (int i = 0; i < 500 && atomic_load(&fk_finis) < want; i++)
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	ck_assert_int_eq(atomic_load(&fk_finis), want);
}

START_TEST(client_thread_relays_and_frees)
{
	size_t len = 400000, got = 0, wrote = 0;
	uint8_t *src = frames(len, 5), *dst = malloc(len);
	int finis = atomic_load(&fk_finis);
	int64_t until = deadline_after(10000);
	int fd;

	fk_depth = 4;
	fk_init_err = 0;
	fk_connect_never = 0;
	fd = rdmaclient_open(&fake_ops, "192.0.2.1", 7, deadline_after(5000));
	ck_assert_int_ge(fd, 0);
	/* The fake conn echoes: what goes out over the relay comes back. */
	while (got < len && deadline_poll_ms(until) > 0) {
		ssize_t n;

		if (wrote < len && (n = write(fd, src + wrote, len - wrote < 50000 ? len - wrote : 50000)) > 0)
			wrote += (size_t)n;
		n = read(fd, dst + got, len - got);
		if (n > 0)
			got += (size_t)n;
		else
			nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	ck_assert_uint_eq(got, len);
	ck_assert(memcmp(src, dst, len) == 0);
	close(fd);
	wait_finis(finis + 1);
	free(src);
	free(dst);
}
END_TEST

START_TEST(client_no_device)
{
	int finis = atomic_load(&fk_finis);

	fk_init_err = -ENODEV;
	ck_assert_int_eq(rdmaclient_open(&fake_ops, "192.0.2.1", 7, deadline_after(1000)), -ENODEV);
	fk_init_err = 0;
	ck_assert_int_eq(atomic_load(&fk_finis), finis);
}
END_TEST

START_TEST(client_connect_times_out)
{
	int finis = atomic_load(&fk_finis);

	fk_init_err = 0;
	fk_connect_never = 1;
	ck_assert_int_eq(rdmaclient_open(&fake_ops, "192.0.2.1", 7, deadline_after(100)), -ETIMEDOUT);
	fk_connect_never = 0;
	ck_assert_int_eq(atomic_load(&fk_finis), finis + 1);
}
END_TEST

/* ---- the whole client path over a real message kind: udp on loopback -------- */

/* The gateway's side, on a thread of its own: a udp listener whose
 * conns are relayed to socketpairs, as ldsd/clientrdma.c does. */
static struct {
	const struct lds_transport_ops *ops;
	struct tploop *loop;
	struct lds_transport *tp;
	struct lds_tp_listener *l;
	atomic_int app;               /* the accepted conn's socket, for the test; -1 none yet */
	atomic_int stop, closed;
} gw;

static void gw_done(struct rdx_relay *r, int err, const char *why, void *arg)
{
	rdx_relay_close(r);
}

static void gw_accepted(struct lds_tp_listener *l, struct lds_tp_conn *c, void *ud)
{
	struct lds_tp_host h;
	struct rdx_relay *r;
	int sv[2];

	tploop_host(gw.loop, &h);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	ck_assert_int_eq(rdx_relay_new(&r, &h, gw.ops, c, sv[1], gw_done, NULL), 0);
	gw.ops->set_userdata(c, r);
	atomic_store(&gw.app, sv[0]);
}

static void gw_closed(struct lds_tp_conn *c, void *ud)
{
	rdx_relay_free(ud);
	atomic_fetch_add(&gw.closed, 1);
}

static const struct lds_tp_upcalls gw_up = {
	.accepted = gw_accepted,
	.readable = rdx_relay_on_readable,
	.writable = rdx_relay_on_writable,
	.sent = rdx_relay_on_sent,
	.closed = gw_closed,
};

static void *gw_thread(void *arg)
{
	while (!atomic_load(&gw.stop))
		tploop_run_once(gw.loop, 5);
	return NULL;
}

START_TEST(client_path_over_udp)
{
	size_t len = 500000;
	uint8_t *up = frames(len, 6), *down = frames(len, 7);
	struct lds_tp_host h;
	struct flow f[2];
	pthread_t th;
	uint16_t port = 0;
	int fd, app = -1;

	gw.ops = transport_find("udp");
	ck_assert_ptr_nonnull(gw.ops);
	gw.loop = tploop_new();
	atomic_store(&gw.app, -1);
	tploop_host(gw.loop, &h);
	ck_assert_int_eq(gw.ops->init(&gw.tp, &h, &gw_up), 0);
	for (int k = 0; k < 20 && gw.l == NULL; k++) {
		port = (uint16_t)(20000 + ((unsigned)getpid() * 11 + (unsigned)k * 137) % 40000);
		if (gw.ops->listen(gw.tp, "127.0.0.1", port, NULL, NULL, &gw.l) < 0)
			gw.l = NULL;
	}
	ck_assert_ptr_nonnull(gw.l);
	ck_assert_int_eq(pthread_create(&th, NULL, gw_thread, NULL), 0);

	/* liblds's side: its thread, its loop, the udp kind instead of rdma. */
	fd = rdmaclient_open(gw.ops, "127.0.0.1", port, deadline_after(10000));
	ck_assert_int_ge(fd, 0);
	for (int i = 0; i < 1000 && (app = atomic_load(&gw.app)) < 0; i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	ck_assert_int_ge(app, 0);
	flow_init(&f[0], up, len, fd, app);
	flow_init(&f[1], down, len, app, fd);
	for (int i = 0; i < 20000 && (f[0].got < len || f[1].got < len); i++) {
		flow_step(&f[0]);
		flow_step(&f[1]);
		nanosleep(&(struct timespec){ 0, 200000 }, NULL);
	}
	ck_assert_uint_eq(f[0].got, len);
	ck_assert_uint_eq(f[1].got, len);
	ck_assert(memcmp(f[0].dst, up, len) == 0);
	ck_assert(memcmp(f[1].dst, down, len) == 0);
	/* The handle closes: the gateway's side sees the end after the bytes. */
	close(fd);
	{
		uint8_t b;
		ssize_t r = -1;

		for (int i = 0; i < 5000 && r != 0; i++) {
			r = read(app, &b, 1);
			if (r != 0)
				nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
		}
		ck_assert_int_eq(r, 0);
	}
	for (int i = 0; i < 5000 && atomic_load(&gw.closed) == 0; i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	ck_assert_int_eq(atomic_load(&gw.closed), 1);
	atomic_store(&gw.stop, 1);
	pthread_join(th, NULL);
	gw.ops->listener_close(gw.l);
	gw.ops->fini(gw.tp);
	tploop_free(gw.loop);
	close(app);
	free(f[0].dst);
	free(f[1].dst);
	free(up);
	free(down);
}
END_TEST

Suite *make_rdma_relay_suite(void)
{
	Suite *s = suite_create("rdma_relay");
	TCase *t = tcase_create("relay");
	TCase *c = tcase_create("client");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 60);
	tcase_add_test(t, frames_cross_messages_both_ways);
	tcase_add_test(t, credits_exhausted_and_returned);
	tcase_add_test(t, oversized_message_refused);
	tcase_add_test(t, empty_message_refused);
	tcase_add_test(t, ends_reach_the_other_side_after_the_bytes);
	suite_add_tcase(s, t);
	tcase_set_timeout(c, 60);
	tcase_add_test(c, client_thread_relays_and_frees);
	tcase_add_test(c, client_no_device);
	tcase_add_test(c, client_connect_times_out);
	tcase_add_test(c, client_path_over_udp);
	suite_add_tcase(s, c);
	return s;
}
