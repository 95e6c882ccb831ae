/* linkbed.c - the link tests' two daemons and one loop; see linkbed.h. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldsd/clock.h"
#include "ldsd/log.h"
#include "linkbed.h"
#include "rbtest.h"
#include "tp_mem.h"

struct run run;
const struct lds_transport_ops *kinds[8];
int nkinds, nmem;

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
uint32_t msg_len(uint64_t id)
{
	uint64_t h = mix(id);

	return (uint32_t)(1 + ((h & 3) ? (h >> 8) % 1500 : (h >> 8) % (3 * BLOCK + 100)));
}

uint8_t msg_byte(uint64_t id, size_t k)
{
	return (uint8_t)(mix(id * 0x9e3779b97f4a7c15ull + k / 8) >> (8 * (k % 8)));
}

/* Payload regions A's link left at their source (sendbuf_defer), as a
 * client's shared-memory ring would hold them: each a buffer of its own,
 * poisoned and freed when settled, so that a read after that shows. */
#define BED_DEFER_MAX 4096
static struct bed_defer {
	uint8_t *buf;
	size_t len;
} bed_defer[BED_DEFER_MAX];
static uint32_t bed_token;

static void bed_settled(struct sb_src *src, uint32_t token)
{
	struct bed_defer *d = &bed_defer[token % BED_DEFER_MAX];

	(void)src;
	ck_assert_ptr_nonnull(d->buf);
	memset(d->buf, 0xa5, d->len);
	free(d->buf);
	d->buf = NULL;
	run.defer_live--;
}

static struct sb_src bed_src = { bed_settled };

/* sb_fill_fn: the pattern of the message whose id arg points to; into a
 * buffer left to the link where it will take it (sb), else in place. */
static int msg_fill(void *arg, struct sendbuf *sb, const struct iovec *iov, int n)
{
	uint64_t id = *(const uint64_t *)arg;
	size_t k = 0;

	for (int i = 0; i < n; i++) {
		struct bed_defer *d = &bed_defer[bed_token % BED_DEFER_MAX];
		uint8_t *p = sb && d->buf == NULL ? malloc(iov[i].iov_len) : NULL;
		uint8_t *to = p ? p : iov[i].iov_base;

		for (size_t j = 0; j < iov[i].iov_len; j++)
			to[j] = msg_byte(id, k++);
		if (p == NULL)
			continue;
		if (sendbuf_defer(sb, iov[i].iov_base, p, iov[i].iov_len, &bed_src, bed_token) == NULL) {
			memcpy(iov[i].iov_base, p, iov[i].iov_len);
			free(p);
			continue;
		}
		*d = (struct bed_defer){ p, iov[i].iov_len };
		bed_token++;
		run.deferred++;
		run.defer_live++;
	}
	return 0;
}

int msg_intact(const struct rb_msg *m)
{
	uint8_t *want;
	int ok;

	if (m->rec.len != msg_len(m->rec.msg_id) || strcmp(m->rec.src, "clusterA/check") != 0)
		return 0;
	want = malloc(m->rec.len);
	ck_assert_ptr_nonnull(want);
	msg_fill(&(uint64_t){ m->rec.msg_id }, NULL, &(struct iovec){ want, m->rec.len }, 1);
	ok = msg_matches(m, 0, want);
	free(want);
	return ok;
}

/* Sends until the link is full or send_to is reached. */
void pump(void)
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
void side_release(struct side *s)
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

int side_start(struct side *s)
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

void side_stop(struct side *s)
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
void setup(int i)
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
void go(void)
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

void run_until(int (*step)(void))
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

void finish(void)
{
	side_stop(&run.a);
	side_stop(&run.b);
	ck_assert_msg(run.defer_live == 0, "%" PRIu64 " payload regions left at their source were never settled",
		      run.defer_live);
	evloop_free(run.ev);
	fflush(stderr);
	dup2(run.stderr_fd, STDERR_FILENO);
	close(run.stderr_fd);
	fclose(run.log);
}

int log_count(const char *what)
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
void assert_once(uint64_t first, uint64_t last, uint8_t how)
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

int all_acked(void)
{
	return run.next_id == run.send_to && run.acked + run.lost == run.send_to;
}

/* Kind i / 2, sealed (i even) or in clear (odd). */
void setup_sealed_or_clear(int i)
{
	setup(i / 2);
	if (i % 2)
		run.a.cfg.peers[0].encryption = run.b.cfg.peers[0].encryption = CONFIG_ENC_NONE;
}

/* Over kind i / 2, sealed or in clear (setup_sealed_or_clear), sends n
 * messages (the steps may add more) until step says done; each arrived
 * once, in order, and was acknowledged once. */
void send_all(int i, uint64_t n, int (*step)(void), void (*in_round)(void))
{
	setup_sealed_or_clear(i);
	go();
	run.send_to = n;
	run.in_round = in_round;
	run_until(step);
	assert_once(1, run.send_to, 1);
}

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

void linkbed_find_kinds(void)
{
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
}
