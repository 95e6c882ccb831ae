/*
 * check_link.c - the link (ldsd/link.c and the modules link_int.h lists)
 * between two whole daemons in this process: clusterA connects, clusterB
 * listens, one event loop drives both, over every registered transport
 * that can carry a link (tcp on loopback, and the tests' tp_mem.c: its byte
 * stream "mem" and its message twin "memmsg"), sealed and in clear.  The
 * link-level half of the conformance suite (check_conformance.c is the
 * transport-level one): what a sender on A is promised, checked on what
 * arrives at B.
 *
 * Messages of random sizes (one byte to over three blocks) carry a byte
 * pattern computed from their id, so B checks every byte, the order and
 * that no id comes twice; A counts each message's outcome (delivered or
 * lost) and that none gets two.  Faults are made at chosen moments: a
 * stream closed (link_fault_break) or its conn reset with blocks in flight
 * (tp_mem_break), a conn held while the others overtake it (tp_mem_hold),
 * bytes no peer sent (tp_mem_inject: a message cut inside a frame),
 * a receiver that stops consuming, a wrong key or setting, B torn down and
 * started again with a new instance id.
 *
 * Time: the links run on the real monotonic clock with short timeouts
 * (reconnects from 10 ms), and every run is bounded by a deadline.  What
 * the tests check does not depend on the interleaving; how the blocks
 * interleave does.  The test of the reconnect back-off moves the clock
 * instead (fakeclock.h): seconds of back-off, checked to the tick, in a
 * fraction of a second.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldsd/admission.h"
#include "ldsd/clock.h"
#include "ldsd/link_int.h"
#include "ldsd/log.h"
#include "fakeclock.h"
#include "suites.h"
#include "tp_mem.h"

#define NMSG_MAX 1024               /* message ids 1..NMSG_MAX */
#define STREAMS 4
#define BLOCK 4096
#define MEMORY (512u << 10)         /* send_memory and recv_memory */
#define TICK_MS 5
#define DEADLINE_NS (8 * 1000000000ull)
#define CLIENT 7
#define KEY "check_link: a key for the tests, no secret"

/* One daemon and what its sink saw. */
struct side {
	struct config cfg;
	struct daemon d;
	struct link *l;                 /* d.links[0] */
	int running;
	int hold;                       /* B: keep what arrives, undelivered */
	struct rb_msg *held;
	size_t held_bytes, held_max;
	uint64_t expect;                /* B: the id due next; 0: any (a new session) */
	uint64_t arrived;               /* B: messages, this incarnation */
};

static struct run {
	const struct lds_transport_ops *ops;
	struct evloop *ev;
	struct side a, b;
	FILE *log;
	int stderr_fd;                  /* the real stderr, while the log goes to log */
	uint64_t start_ns, deadline_ns;
	int timed_out;
	int (*step)(void);              /* each tick; 1: the test is done */
	void (*in_round)(void);         /* NULL, or each loop round after the links' writes */
	unsigned phase, ticks;          /* the step's, as it likes */
	uint64_t mark;                  /* backpressure_step: arrivals at the last look */
	uint64_t held_id;               /* tp_mem_id of the conn tp_mem_hold holds */
	/* A's sender. */
	uint64_t next_id, send_to;      /* sent ids 1..next_id; sends on to send_to */
	uint64_t enospc;                /* link_send said the link is full */
	uint8_t settled[NMSG_MAX + 1];  /* 1: acknowledged delivered, 2: lost */
	uint64_t acked, lost, settled_twice;
	/* B's receiver, over every incarnation of B. */
	uint8_t seen[NMSG_MAX + 1];
	uint64_t dups, misordered, corrupt, bad_id;
	size_t ooo_max;                 /* most out-of-order bytes B held */
} run;

/* The kinds that can carry a link (config_transport_usable), by index:
 * tp_mem's first (nmem of them), whose faults some tests need. */
static const struct lds_transport_ops *kinds[8];
static int nkinds, nmem;

/* ---- messages ------------------------------------------------------------ */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* Three in four under 1500 bytes, the others up to four blocks. */
static uint32_t msg_len(uint64_t id)
{
	uint64_t h = mix(id);

	return (uint32_t)(1 + ((h & 3) ? (h >> 8) % 1500 : (h >> 8) % (3 * BLOCK + 100)));
}

static uint8_t msg_byte(uint64_t id, size_t k)
{
	return (uint8_t)(mix(id * 0x9e3779b97f4a7c15ull + k / 8) >> (8 * (k % 8)));
}

/* sb_fill_fn: the pattern of the message whose id arg points to. */
static int msg_fill(void *arg, const struct iovec *iov, int n)
{
	uint64_t id = *(const uint64_t *)arg;
	size_t k = 0;

	for (int i = 0; i < n; i++)
		for (size_t j = 0; j < iov[i].iov_len; j++)
			((uint8_t *)iov[i].iov_base)[j] = msg_byte(id, k++);
	return 0;
}

static int msg_intact(const struct rb_msg *m)
{
	if (m->rec.len != msg_len(m->rec.msg_id) || strcmp(m->rec.src, "clusterA/check") != 0)
		return 0;
	for (size_t k = 0; k < m->rec.len; k++)
		if (m->data[k] != msg_byte(m->rec.msg_id, k))
			return 0;
	return 1;
}

/* Sends until the link is full or send_to is reached. */
static void pump(void)
{
	while (run.a.running && run.next_id < run.send_to) {
		uint64_t id = run.next_id + 1;
		struct wire_record rec = { .len = msg_len(id), .msg_id = id, .incarnation = 1 };
		int r;

		snprintf(rec.src, sizeof(rec.src), "clusterA/check");
		snprintf(rec.dst, sizeof(rec.dst), "clusterB/check");
		r = link_send_from(run.a.l, &rec, msg_fill, &id, CLIENT);
		if (r == -ENOSPC) {
			run.enospc++;
			return;
		}
		ck_assert_msg(r == 0, "link_send: %s", strerror(-r));
		run.next_id = id;
	}
}

/* ---- the daemons' sinks ----------------------------------------------- */

static void sink_deliver(void *arg, struct link *from, struct rb_msg *m)
{
	struct side *s = arg;
	uint64_t id = m->rec.msg_id;

	if (id == 0 || id > NMSG_MAX)
		run.bad_id++;
	else if (run.seen[id]++)
		run.dups++;
	if (s->expect && id != s->expect)
		run.misordered++;
	s->expect = id + 1;
	run.corrupt += !msg_intact(m);
	s->arrived++;
	if (s->hold) {
		m->next = s->held;
		s->held = m;
		s->held_bytes += m->rec.len;
		if (s->held_bytes > s->held_max)
			s->held_max = s->held_bytes;
		return;
	}
	link_delivered(from, m);
}

static void settle(uint64_t client, uint64_t id, uint8_t how)
{
	ck_assert_uint_eq(client, CLIENT);
	ck_assert_uint_ge(id, 1);
	ck_assert_uint_le(id, run.next_id);
	if (run.settled[id])
		run.settled_twice++;
	run.settled[id] = how;
	run.acked += how == 1;
	run.lost += how == 2;
}

static void sink_acked(void *arg, uint64_t client, uint64_t id)
{
	settle(client, id, 1);
}

static void sink_lost(void *arg, struct link *l, uint64_t client, uint64_t id, const char *reason)
{
	settle(client, id, 2);
}

static void sink_space(void *arg, struct link *l)
{
}

/* B consumes what it held, in the order it came. */
static void side_release(struct side *s)
{
	struct rb_msg *m = s->held, *rev = NULL;

	s->hold = 0;
	while (m) {
		struct rb_msg *next = m->next;

		m->next = rev;
		rev = m;
		m = next;
	}
	for (s->held = NULL; rev; rev = m) {
		m = rev->next;
		link_delivered(s->l, rev);
	}
	s->held_bytes = 0;
}

/* ---- two daemons, one loop ------------------------------------------- */

static void side_config(struct side *s, const char *self, const char *peer, enum config_role role)
{
	struct config *c = &s->cfg;
	struct config_peer *p = &c->peers[0];

	memset(c, 0, sizeof(*c));
	snprintf(c->file, sizeof(c->file), "check_link-%s.conf", self);
	snprintf(c->cluster, sizeof(c->cluster), "%s", self);
	config_handshake_defaults(&c->handshake);
	config_peer_defaults(p);
	snprintf(p->cluster, sizeof(p->cluster), "%s", peer);
	snprintf(p->address, sizeof(p->address), "127.0.0.1");
	p->role = role;
	snprintf(p->transport, sizeof(p->transport), "%s", run.ops->name);
	memset(p->tp_conf, 0, sizeof(p->tp_conf));
	if (run.ops->conf_defaults)
		run.ops->conf_defaults(p->tp_conf);
	p->streams = STREAMS;
	p->block_size = BLOCK;
	p->send_memory = p->recv_memory = MEMORY;
	p->reconnect_min = 0.01;
	p->reconnect_max = 0.05;
	p->connect_timeout = 2;
	p->inactivity_timeout = 5;
	p->keepalive = 1;
	snprintf(p->key_file, sizeof(p->key_file), "/check_link/key");
	memcpy(p->key, KEY, strlen(KEY));
	p->key_len = strlen(KEY);
	c->npeers = 1;
}

static int side_start(struct side *s)
{
	memset(&s->d, 0, sizeof(s->d));
	s->expect = s->arrived = 0;
	s->held_max = 0;
	s->d.ev = run.ev;
	s->d.sink = (struct daemon_sink){ .arg = s, .deliver = sink_deliver, .acked = sink_acked, .lost = sink_lost,
					  .space = sink_space };
	if (daemon_init(&s->d, &s->cfg) < 0 || daemon_start(&s->d) < 0) {
		daemon_fini(&s->d);
		return -1;
	}
	s->l = s->d.links[0];
	s->running = 1;
	return 0;
}

static void side_stop(struct side *s)
{
	while (s->held) {
		struct rb_msg *m = s->held;

		s->held = m->next;
		rb_msg_free(m);
	}
	s->held_bytes = 0;
	s->hold = 0;
	if (s->running)
		daemon_fini(&s->d);
	s->running = 0;
	s->l = NULL;
}

static void on_tick(uint64_t now, void *arg)
{
	if (run.a.running)
		daemon_tick(&run.a.d, now);
	if (run.b.running) {
		daemon_tick(&run.b.d, now);
		if (run.b.l->rb.ooo_bytes > run.ooo_max)
			run.ooo_max = run.b.l->rb.ooo_bytes;
	}
	run.ticks++;
	if (run.step()) {
		evloop_stop(run.ev);
	} else if (now > run.deadline_ns) {
		run.timed_out = 1;
		evloop_stop(run.ev);
	}
}

static void on_idle(void *arg)
{
	if (run.a.running)
		daemon_flush(&run.a.d);
	if (run.b.running)
		daemon_flush(&run.b.d);
	if (run.in_round)
		run.in_round();
	pump();
}

/* Both daemons configured for kind i (not started): tests change what
 * they need, then call go(). */
static void setup(int i)
{
	memset(&run, 0, sizeof(run));
	ck_assert_int_lt(i, nkinds);
	run.ops = kinds[i];
	/* The log goes to a file the tests read back; what the sanitizers
	 * say at exit, to stderr again (finish). */
	run.log = tmpfile();
	ck_assert_ptr_nonnull(run.log);
	run.stderr_fd = dup(STDERR_FILENO);
	ck_assert_int_ge(run.stderr_fd, 0);
	ck_assert_int_ge(dup2(fileno(run.log), STDERR_FILENO), 0);
	log_init("check_link", 1, LOG_LVL_INFO);
	run.ev = evloop_new();
	ck_assert_ptr_nonnull(run.ev);
	side_config(&run.b, "clusterB", "clusterA", CONFIG_ROLE_LISTEN);
	side_config(&run.a, "clusterA", "clusterB", CONFIG_ROLE_CONNECT);
}

/* Starts B on a free port, then A. */
static void go(void)
{
	for (unsigned k = 0; k < 50 && !run.b.running; k++) {
		uint16_t port = (uint16_t)(20000 + ((unsigned)getpid() * 7 + k * 131) % 40000);

		run.a.cfg.peers[0].port = run.b.cfg.peers[0].port = port;
		side_start(&run.b);
	}
	ck_assert_msg(run.b.running, "cannot start clusterB over %s", run.ops->name);
	ck_assert_msg(side_start(&run.a) == 0, "cannot start clusterA over %s", run.ops->name);
	ck_assert_int_gt(evloop_tick_add(run.ev, TICK_MS, on_tick, NULL), 0);
	ck_assert_int_gt(evloop_idle_add(run.ev, on_idle, NULL), 0);
}

static void run_until(int (*step)(void))
{
	run.step = step;
	run.start_ns = clock_now_ns();
	run.deadline_ns = run.start_ns + DEADLINE_NS;
	ck_assert_int_eq(evloop_run(run.ev), 0);
	ck_assert_msg(!run.timed_out,
		      "%s: timed out in phase %u: sent %" PRIu64 " of %" PRIu64 ", acked %" PRIu64 ", lost %" PRIu64
		      ", arrived at B %" PRIu64 " (%" PRIu64 " duplicates, %" PRIu64 " out of order, %" PRIu64
		      " corrupt), streams up A %u B %u", run.ops->name, run.phase, run.next_id, run.send_to, run.acked,
		      run.lost, run.b.arrived, run.dups, run.misordered, run.corrupt, run.a.running ? run.a.l->up : 0,
		      run.b.running ? run.b.l->up : 0);
}

static void finish(void)
{
	side_stop(&run.a);
	side_stop(&run.b);
	evloop_free(run.ev);
	fflush(stderr);
	dup2(run.stderr_fd, STDERR_FILENO);
	close(run.stderr_fd);
	fclose(run.log);
}

static int log_count(const char *what)
{
	char line[2048];
	int n = 0;

	fflush(stderr);
	rewind(run.log);
	while (fgets(line, sizeof(line), run.log))
		n += strstr(line, what) != NULL;
	return n;
}

/* Ids first..last each arrived once, whole, in order, and their sender
 * was told `how` (1: delivered, 2: lost) once; nothing else arrived. */
static void assert_once(uint64_t first, uint64_t last, uint8_t how)
{
	ck_assert_msg(run.dups == 0 && run.misordered == 0 && run.corrupt == 0 && run.bad_id == 0,
		      "%s: %" PRIu64 " duplicates, %" PRIu64 " out of order, %" PRIu64 " corrupt, %" PRIu64
		      " unknown ids", run.ops->name, run.dups, run.misordered, run.corrupt, run.bad_id);
	for (uint64_t id = first; id <= last; id++) {
		ck_assert_msg(run.seen[id] == 1, "%s: message %" PRIu64 " arrived %u times", run.ops->name, id,
			      run.seen[id]);
		ck_assert_msg(run.settled[id] == how, "%s: message %" PRIu64 " settled as %u, not %u", run.ops->name,
			      id, run.settled[id], how);
	}
	ck_assert_uint_eq(run.settled_twice, 0);
}

static int all_acked(void)
{
	return run.next_id == run.send_to && run.acked + run.lost == run.send_to;
}

/* Kind i / 2, sealed (i even) or in clear (odd). */
static void setup_sealed_or_clear(int i)
{
	setup(i / 2);
	if (i % 2)
		run.a.cfg.peers[0].encryption = run.b.cfg.peers[0].encryption = CONFIG_ENC_NONE;
}

/* Over kind i / 2, sealed or in clear (setup_sealed_or_clear), sends n
 * messages (the steps may add more) until step says done; each arrived
 * once, in order, and was acknowledged once. */
static void send_all(int i, uint64_t n, int (*step)(void), void (*in_round)(void))
{
	setup_sealed_or_clear(i);
	go();
	run.send_to = n;
	run.in_round = in_round;
	run_until(step);
	assert_once(1, run.send_to, 1);
}

/* ---- delivery ------------------------------------------------------------ */

/* Messages of random sizes over 4 streams arrive once each, whole and in
 * order, and each is acknowledged to its sender once. */
START_TEST(t_delivery)
{
	send_all(_i, 600, all_acked, NULL);
	ck_assert_uint_eq(run.acked, 600);
	ck_assert_uint_eq(run.a.l->up, STREAMS);
	ck_assert_uint_eq(run.b.l->up, STREAMS);
	finish();
}
END_TEST

/* A's send buffer holds seven blocks (a message may take half): each slot is filled again as soon
 * as its block is acknowledged, so a block given back before the
 * transport is done with it (memmsg holds what it sends several loop
 * rounds) is rewritten under it. */
START_TEST(t_small_sendbuf)
{
	setup_sealed_or_clear(_i);
	run.a.cfg.peers[0].send_memory = 7 * BLOCK;
	go();
	run.send_to = 300;
	run_until(all_acked);
	assert_once(1, run.send_to, 1);
	finish();
}
END_TEST

/* B stops consuming: A's sends are refused (-ENOSPC) while B holds no
 * more than its recv_memory; once B consumes, everything arrives once. */
static int backpressure_step(void)
{
	if (run.phase == 0) {
		if (run.b.arrived != run.mark || run.enospc == 0) {
			run.mark = run.b.arrived;
			run.ticks = 0;
		} else if (run.ticks >= 20) {
			run.phase = 1;             /* stuck for 100 ms: consume */
			ck_assert_uint_lt(run.next_id, run.send_to);
			side_release(&run.b);
		}
		return 0;
	}
	return all_acked();
}

START_TEST(t_backpressure)
{
	setup(_i);
	go();
	run.b.hold = 1;
	run.send_to = NMSG_MAX;
	run_until(backpressure_step);
	assert_once(1, NMSG_MAX, 1);
	ck_assert_uint_gt(run.enospc, 0);
	ck_assert_uint_gt(run.b.held_max, 0);
	ck_assert_uint_le(run.b.held_max, MEMORY);
	finish();
}
END_TEST

/* ---- broken streams -------------------------------------------------- */

/* An up stream of A with blocks written to it and not acknowledged, or -1. */
static int stream_in_flight(void)
{
	for (int k = 0; k < STREAMS; k++) {
		const struct stream *s = run.a.l->streams[k];

		if (s && s->st == ST_UP && sendbuf_stream_unacked(&run.a.l->sb, k))
			return k;
	}
	return -1;
}

/* Every loop round, just after the links wrote: three batches of 250
 * messages, one after the other, each with a stream closed while blocks
 * are in flight on it, by A, by B, by A.  A batch that went through
 * before a round saw blocks in flight (a loaded machine) gets another
 * after it. */
static void break_in_round(void)
{
	int k = stream_in_flight();

	if (run.phase % 2 == 0 && run.phase < 6 && all_acked()) {
		run.send_to += 250;
		run.phase++;
	} else if (run.phase % 2 && k >= 0 && link_fault_break((run.phase % 4 == 3 ? &run.b : &run.a)->l, k) == 1) {
		run.phase++;
	} else if (run.phase % 2 && all_acked() && run.send_to + 250 <= NMSG_MAX) {
		run.send_to += 250;
	}
}

static int break_step(void)
{
	return run.phase == 6 && all_acked();
}

START_TEST(t_break_in_flight)
{
	send_all(_i, 0, break_step, break_in_round);
	ck_assert_uint_gt(run.a.l->sb.blocks_resent, 0);
	ck_assert_uint_ge(run.a.l->nfail + run.b.l->nfail, 3);
	finish();
}
END_TEST

/* TCP with zerocopy on both sides, every write zero-copy (zerocopy_min
 * 1): the stream's queue is a ring of bytes held until the kernel's
 * completion.  Messages arrive once each, in order (_i 0), also with
 * streams closed while blocks are in flight (_i 1: conns reset while the
 * kernel holds sends, their memory kept until it let go); zero-copy
 * sends were made and completed. */
START_TEST(t_zerocopy)
{
	struct side *sides[2] = { &run.a, &run.b };
	uint64_t sends = 0, done = 0;
	char err[256];
	int k = 0;

	while (k < nkinds && strcmp(kinds[k]->name, "tcp") != 0)
		k++;
	ck_assert_int_lt(k, nkinds);
	setup_sealed_or_clear(2 * k);
	for (int j = 0; j < 2; j++) {
		ck_assert_msg(config_peer_set(&sides[j]->cfg.peers[0], "zerocopy", "true", err, sizeof(err)) == 0, "%s",
			      err);
		ck_assert_msg(config_peer_set(&sides[j]->cfg.peers[0], "zerocopy_min", "1", err, sizeof(err)) == 0,
			      "%s", err);
	}
	go();
	run.send_to = _i == 0 ? 600 : 0;
	run.in_round = _i == 0 ? NULL : break_in_round;
	run_until(_i == 0 ? all_acked : break_step);
	assert_once(1, run.send_to, 1);
	for (unsigned q = 0; q < STREAMS; q++) {
		struct lds_tp_info info;

		if (stream_query(run.a.l->streams[q], &info)) {
			sends += info.zc_sends;
			done += info.zc_completed;
		}
	}
	ck_assert_uint_gt(sends, 0);
	ck_assert_uint_le(done, sends);
	finish();
}
END_TEST

/* tp_mem: B's end of stream 0 is held, and a batch of messages sent: 1
 * once the stream is up.  Stream 0 because a link fills its streams in
 * order: its first blocks go there. */
static int hold_and_send(void)
{
	const struct stream *s = run.b.l->streams[0];

	if (s == NULL || s->st != ST_UP)
		return 0;
	run.held_id = tp_mem_id(s->conn);
	tp_mem_hold(s->conn, 1);
	run.send_to += 250;
	run.ticks = 0;
	return 1;
}

/* The held conn, while B's stream 0 still carries it; NULL once the link
 * closed it (a stream not read from may be closed, and its conn freed). */
static struct lds_tp_conn *held_conn(void)
{
	const struct stream *s = run.b.l->streams[0];

	return s != NULL && s->conn != NULL && tp_mem_id(s->conn) == run.held_id ? s->conn : NULL;
}

/* Three rounds of hold_and_send, each ended, if reset, by resetting the
 * held conn once blocks wait in it, else by letting it go once B holds
 * blocks out of order (later ones came on the other streams); a round
 * whose held conn the link closed itself ends with it. */
static int hold_step(int reset)
{
	struct lds_tp_conn *c;

	if (run.phase == 6)
		return all_acked();
	if (run.phase % 2 == 0) {
		run.phase += hold_and_send();
	} else if ((c = held_conn()) == NULL) {
		run.phase++;
	} else if (reset && tp_mem_unread(c) >= 2 * BLOCK) {
		tp_mem_break(c);
		run.phase++;
	} else if (!reset && (run.b.l->rb.ooo_bytes > 0 || run.ticks > 100)) {
		tp_mem_hold(c, 0);
		run.phase++;
	}
	return 0;
}

static int loss_step(void)
{
	return hold_step(1);
}

static int reorder_step(void)
{
	return hold_step(0);
}

/* tp_mem only: blocks in flight are lost in a reset conn, three times:
 * they are resent on the other streams. */
START_TEST(t_loss_in_flight)
{
	send_all(_i, 0, loss_step, NULL);
	ck_assert_uint_eq(run.send_to, 750);
	ck_assert_uint_gt(run.a.l->sb.blocks_resent, 0);
	ck_assert_uint_ge(run.a.l->nfail, 3);
	finish();
}
END_TEST

/* tp_mem only: B's end of a stream is held while the others carry later
 * blocks, three times: B holds them out of order and delivers in order. */
START_TEST(t_reorder)
{
	send_all(_i, 0, reorder_step, NULL);
	ck_assert_uint_eq(run.send_to, 750);
	ck_assert_uint_gt(run.ooo_max, 0);
	ck_assert_uint_eq(run.a.l->nfail, 0);
	finish();
}
END_TEST

/* ---- bad frames ------------------------------------------------------ */

/* Once B's stream 0 is up and 100 messages acknowledged, B's end of it
 * receives what no peer sent - a message cut inside a DATA frame on a
 * message kind, a frame with a wrong magic on a byte stream - and 250
 * more messages are sent. */
static int bad_frame_step(void)
{
	static const uint8_t cut[] = { 0x4c, 0x44, WIRE_VERSION, WIRE_DATA, 0, 0, 0x10, 0, 0, 0,
				       0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const uint8_t magic[WIRE_HDR_LEN] = { 'N', 'O' };
	const struct stream *s = run.b.l->streams[0];

	if (run.phase > 0)
		return all_acked();
	if (s == NULL || s->st != ST_UP || run.acked < 100)
		return 0;
	if (run.ops->caps.flags & LDS_TP_CAP_MESSAGE)
		ck_assert_int_eq(tp_mem_inject(s->conn, cut, sizeof(cut)), 0);
	else
		ck_assert_int_eq(tp_mem_inject(s->conn, magic, sizeof(magic)), 0);
	run.send_to += 250;
	run.phase++;
	return 0;
}

/* tp_mem kinds: B refuses the bad frame, naming the peer, and closes that
 * stream only; what A sends arrives once, in order, on the others and on
 * the stream A connects again. */
START_TEST(t_bad_frame)
{
	send_all(_i, 100, bad_frame_step, NULL);
	ck_assert_uint_eq(run.send_to, 350);
	/* "clusterA: peer mem:0x...: bad frame (...); closing the stream" */
	ck_assert_msg(log_count(": peer mem:0x") == 1 && log_count("bad frame (") >= 1,
		      "%s: B logged the bad frame %d times, naming the peer %d times", run.ops->name,
		      log_count("bad frame ("), log_count(": peer mem:0x"));
	ck_assert_int_ge(log_count(run.ops->caps.flags & LDS_TP_CAP_MESSAGE
				   ? "bad frame (a message of 20 bytes ends inside a frame at byte 0); closing"
				   : "bad frame (Protocol error); closing"), 1);
	ck_assert_uint_ge(run.b.l->nfail, 1);
	finish();
}
END_TEST

/* ---- handshake refusals ---------------------------------------------- */

static const struct refusal {
	const char *what;
	const char *a_logs;                 /* A's line about it, once */
} refusals[] = {
	{ "wrong key", "failed authentication (wrong key?" },
	{ "encryption mismatch", "refused the connection: encryption mismatch" },
	{ "unknown cluster", "refused the connection: unknown cluster" },
};

static uint64_t admission_failed(const struct admission *adm)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	const char *p;
	uint64_t n = 0;

	ck_assert_ptr_nonnull(f);
	admission_status_json(adm, f);
	ck_assert_int_eq(fclose(f), 0);
	p = strstr(text, "\"failed\":");
	ck_assert_ptr_nonnull(p);
	n = strtoull(p + 9, NULL, 10);
	free(text);
	return n;
}

/* Runs 300 ms and at least 3 reconnects; no stream is up at any tick. */
static int refused_step(void)
{
	ck_assert_uint_eq(run.a.l->up, 0);
	ck_assert_uint_eq(run.b.l->up, 0);
	return clock_now_ns() - run.start_ns > 300 * 1000000ull && run.a.l->reconnects >= 3;
}

/* Over tp_mem: A keeps trying and is refused every time; A logs why
 * once, B counts every failed handshake; nothing is delivered or reported
 * lost.  A's slots back off: from reconnect_min, doubling to
 * reconnect_max, each slot tries at most elapsed / reconnect_max + 5
 * times (10, 20, 40, then 50 ms apart; retrying every reconnect_min
 * would be some 30 times in 300 ms).  A loaded machine only tries less. */
START_TEST(t_refused)
{
	const struct refusal *r = &refusals[_i];
	double secs, most;

	setup(0);
	if (_i == 0)
		run.b.cfg.peers[0].key[0] ^= 1;
	else if (_i == 1)
		run.b.cfg.peers[0].encryption = CONFIG_ENC_NONE;
	else
		snprintf(run.b.cfg.peers[0].cluster, sizeof(run.b.cfg.peers[0].cluster), "clusterC");
	go();
	run.send_to = 10;
	run_until(refused_step);
	secs = (double)(clock_now_ns() - run.start_ns) / 1e9;
	most = STREAMS * (secs / run.a.cfg.peers[0].reconnect_max + 5);
	ck_assert_msg(run.a.l->reconnects <= most, "%s: %" PRIu64 " reconnects in %.3f s, at most %.0f with back-off",
		      r->what, run.a.l->reconnects, secs, most);
	/* Not even for a moment between two ticks. */
	ck_assert_msg(log_count("streams up") == 0, "%s: a stream came up", r->what);
	ck_assert_uint_eq(run.a.l->nfail + run.b.l->nfail, 0);
	ck_assert_msg(log_count(r->a_logs) == 1, "%s: A logged \"%s\" %d times", r->what, r->a_logs,
		      log_count(r->a_logs));
	ck_assert_uint_ge(admission_failed(run.b.d.adm), 3);
	ck_assert_uint_eq(run.b.arrived, 0);
	ck_assert_uint_eq(run.acked + run.lost, 0);
	ck_assert_uint_eq(run.next_id, 10);
	finish();
}
END_TEST

/* ---- peer restart ---------------------------------------------------- */

#define RESTART_N1 200     /* delivered by the first B */
#define RESTART_N2 40      /* held by the first B, never delivered */
#define RESTART_N3 200     /* for the second B */

static int restart_step(void)
{
	switch (run.phase) {
	case 0:
		if (run.acked < RESTART_N1)
			return 0;
		run.b.hold = 1;
		run.send_to += RESTART_N2;
		run.phase++;
		return 0;
	case 1:
		if (run.b.arrived < RESTART_N1 + RESTART_N2)
			return 0;
		/* B goes with messages held: their senders must hear they
		 * were lost, not that they arrived, and never get them twice. */
		side_stop(&run.b);
		ck_assert_int_eq(side_start(&run.b), 0);
		run.phase++;
		return 0;
	case 2:
		if (run.lost < RESTART_N2)
			return 0;
		run.send_to += RESTART_N3;
		run.phase++;
		return 0;
	default:
		return all_acked();
	}
}

/* B restarts (a new instance id) while A's messages wait undelivered in
 * it: A resets the session, reports each of those lost once, and what it
 * sends next reaches the new B once, in order. */
START_TEST(t_peer_restart)
{
	const uint64_t first3 = RESTART_N1 + RESTART_N2 + 1, last = RESTART_N1 + RESTART_N2 + RESTART_N3;

	setup(_i);
	go();
	run.send_to = RESTART_N1;
	run_until(restart_step);
	ck_assert_uint_eq(run.a.l->resets, 1);
	ck_assert_int_eq(log_count("peer gateway restarted"), 1);
	ck_assert_uint_eq(run.lost, RESTART_N2);
	ck_assert_uint_eq(run.acked, RESTART_N1 + RESTART_N3);
	/* The second B got the third batch only. */
	ck_assert_uint_eq(run.b.arrived, RESTART_N3);
	assert_once(1, RESTART_N1, 1);
	assert_once(RESTART_N1 + 1, first3 - 1, 2);
	assert_once(first3, last, 1);
	finish();
}
END_TEST

/* ---- reconnect back-off, on the fake clock --------------------------- */

#define BACKOFF_MIN 1.0
#define BACKOFF_MAX 8.0
#define BACKOFF_N1 100                     /* before the path goes */
#define BACKOFF_N2 100                     /* after it is back */
#define FAKE_STEP_NS (50 * 1000000ull)     /* the clock moves this much a tick */
#define ATTEMPTS_REFUSED 4                 /* then the path returns */

static struct {
	uint64_t break_ns, back_ns, up_ns;
	uint64_t reconnects0;              /* l->reconnects at the break */
	uint64_t at[16];                   /* each attempt's time */
	unsigned n;
} bo;

/* Records A's connection attempts since the break, with the time. */
static void backoff_count(uint64_t now)
{
	while (run.a.l->reconnects > bo.reconnects0 + bo.n && bo.n < sizeof(bo.at) / sizeof(bo.at[0]))
		bo.at[bo.n++] = now;
}

static int backoff_step(void)
{
	uint64_t now = clock_now_ns();

	switch (run.phase) {
	case 0:
		if (!all_acked())
			return 0;
		/* The stream has been up longer than its back-off: its first
		 * attempt goes at once.  1.5 s stay under the link's silence
		 * limit (2 s). */
		fakeclock_advance(1500 * 1000000ull);
		now = clock_now_ns();
		run.deadline_ns = now + 60 * 1000000000ull;
		tp_mem_refuse(1);
		bo.break_ns = now;
		bo.reconnects0 = run.a.l->reconnects;
		tp_mem_break(run.a.l->streams[0]->conn);
		run.phase++;
		return 0;
	case 1:
		backoff_count(now);
		if (bo.n == ATTEMPTS_REFUSED) {
			tp_mem_refuse(0);
			bo.back_ns = now;
			run.phase++;
		}
		fakeclock_advance(FAKE_STEP_NS);
		return 0;
	case 2:
		backoff_count(now);
		if (run.a.l->up == 0) {
			fakeclock_advance(FAKE_STEP_NS);
			return 0;
		}
		bo.up_ns = now;
		run.send_to += BACKOFF_N2;
		run.phase++;
		return 0;
	default:
		return all_acked();
	}
}

/* The path to B goes (every connect refused, B keeps its session) and
 * comes back: A tries at once, then after 2, 4 and 8 s (the back-off
 * doubles from reconnect_min, each counted from the attempt before, up
 * to reconnect_max); the path returns between two attempts and the link
 * is up at the next one, not before and not later; the session goes on
 * (nothing lost or twice) and the back-off starts from reconnect_min
 * again. */
START_TEST(t_reconnect_backoff)
{
	static const double gap[] = { 2, 4, 8, 8 };     /* s, after the first attempt */
	const uint64_t tol = 2 * FAKE_STEP_NS;

	setup(0);
	memset(&bo, 0, sizeof(bo));
	for (int k = 0; k < 2; k++) {
		struct config_peer *p = &(k ? &run.b : &run.a)->cfg.peers[0];

		p->streams = 1;
		p->encryption = CONFIG_ENC_NONE;
		p->reconnect_min = BACKOFF_MIN;
		p->reconnect_max = BACKOFF_MAX;
	}
	go();
	run.send_to = BACKOFF_N1;
	run_until(backoff_step);
	fakeclock_reset();
	ck_assert_uint_eq(bo.n, ATTEMPTS_REFUSED + 1);
	ck_assert_msg(bo.at[0] - bo.break_ns <= tol, "first attempt %.3f s after the break, not at once",
		      (double)(bo.at[0] - bo.break_ns) / 1e9);
	for (unsigned k = 1; k < bo.n; k++) {
		uint64_t want = (uint64_t)(gap[k - 1] * 1e9), got = bo.at[k] - bo.at[k - 1];

		ck_assert_msg(got >= want && got <= want + tol, "attempt %u came %.3f s after the one before, not %.1f",
			      k, (double)got / 1e9, gap[k - 1]);
	}
	ck_assert_msg(bo.back_ns < bo.at[ATTEMPTS_REFUSED] && bo.up_ns - bo.at[ATTEMPTS_REFUSED] <= 10 * FAKE_STEP_NS,
		      "path back at %.3f s, attempt at %.3f s, link up at %.3f s (after the break)",
		      (double)(bo.back_ns - bo.break_ns) / 1e9, (double)(bo.at[ATTEMPTS_REFUSED] - bo.break_ns) / 1e9,
		      (double)(bo.up_ns - bo.break_ns) / 1e9);
	ck_assert_double_eq(run.a.l->backoff[0], BACKOFF_MIN);
	ck_assert_uint_eq(run.a.l->resets, 0);
	ck_assert_uint_eq(run.lost, 0);
	assert_once(1, BACKOFF_N1 + BACKOFF_N2, 1);
	finish();
}
END_TEST

/* A kind whose hardware is absent (RDMA without a device) is left out,
 * saying so, as in the conformance suite. */
static int kind_runs_here(const struct lds_transport_ops *ops)
{
	char why[256];

	if (ops->probe == NULL || ops->probe(why, sizeof(why)) == 0)
		return 1;
	fprintf(stderr, "link: %s: skipped: %s\n", ops->name, why);
	return 0;
}

Suite *make_link_suite(void)
{
	Suite *s = suite_create("link");
	TCase *tc = tcase_create("link");

	/* Registered in the suite's process, which each test's inherits. */
	if ((transport_find(mem_transport_ops.name) == NULL && transport_register(&mem_transport_ops) < 0) ||
	    (transport_find(memmsg_transport_ops.name) == NULL && transport_register(&memmsg_transport_ops) < 0))
		fprintf(stderr, "link: cannot register the sample transports\n");
	nkinds = nmem = 0;
	for (size_t i = 0; transport_at(i) != NULL && nkinds < (int)(sizeof(kinds) / sizeof(kinds[0])); i++) {
		const struct lds_transport_ops *ops = transport_at(i);

		if (!config_transport_usable(ops) || !kind_runs_here(ops))
			continue;
		/* tp_mem's first: the tests of its faults use kinds 0..nmem-1. */
		if (ops == &mem_transport_ops || ops == &memmsg_transport_ops) {
			memmove(&kinds[nmem + 1], &kinds[nmem], (size_t)(nkinds - nmem) * sizeof(kinds[0]));
			kinds[nmem++] = ops;
		} else {
			kinds[nkinds] = ops;
		}
		nkinds++;
	}
	tcase_set_timeout(tc, 30);
	/* These tests' loop index names a kind and sealed or clear
	 * (setup_sealed_or_clear). */
	tcase_add_loop_test(tc, t_delivery, 0, 2 * nkinds);
	tcase_add_loop_test(tc, t_break_in_flight, 0, 2 * nkinds);
	tcase_add_loop_test(tc, t_small_sendbuf, 0, 2 * nkinds);
	tcase_add_loop_test(tc, t_loss_in_flight, 0, 2 * nmem);
	tcase_add_loop_test(tc, t_reorder, 0, 2 * nmem);
	tcase_add_loop_test(tc, t_bad_frame, 0, 2 * nmem);
	tcase_add_loop_test(tc, t_backpressure, 0, nkinds);
	tcase_add_loop_test(tc, t_peer_restart, 0, nkinds);
	tcase_add_loop_test(tc, t_zerocopy, 0, 2);
	if (nmem > 0)
		tcase_add_test(tc, t_reconnect_backoff);
	if (nmem > 0)
		tcase_add_loop_test(tc, t_refused, 0, (int)(sizeof(refusals) / sizeof(refusals[0])));
	suite_add_tcase(s, tc);
	return s;
}
