/* check_evloop.c - unit tests of the event loop (ldsd/evloop.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "ldsd/clock.h"
#include "ldsd/evloop.h"
#include "ldsd/tphost.h"
#include "suites.h"

/* ---- helpers --------------------------------------------------------- */

#define MS 1000000ull

static void stop_cb(uint64_t now_ns, void *arg)
{
	evloop_stop(arg);
}

/* Runs the loop for about ms milliseconds; returns the nanoseconds it ran. */
static uint64_t run_for(struct evloop *ev, unsigned ms)
{
	uint64_t t0 = clock_now_ns();
	int id = evloop_tick_add(ev, ms, stop_cb, ev);

	ck_assert_int_gt(id, 0);
	ck_assert_int_eq(evloop_run(ev), 0);
	evloop_tick_del(ev, id);
	return clock_now_ns() - t0;
}

static void xpipe(int p[2])
{
	ck_assert_int_eq(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
}

static void xsocketpair(int sv[2])
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
}

static void put(int fd, const char *s)
{
	ck_assert_int_eq(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

/* What an fd callback saw. */
struct seen {
	struct evloop *ev;
	int calls;
	unsigned events[64];       /* of the first 64 calls */
	unsigned all;              /* OR of every call's events */
	int fds[64];
	int stop_after;            /* evloop_stop at this many calls (0: never) */
	int drain;                 /* read what is there */
	char data[64];
	size_t ndata;
	int unwatch_self;
	/* Bookkeeping shared between callbacks. */
	int round_first;           /* round of the first call */
	int *round;
};

static void seen_cb(int fd, unsigned events, void *arg)
{
	struct seen *s = arg;

	if (s->calls < 64) {
		s->events[s->calls] = events;
		s->fds[s->calls] = fd;
	}
	if (s->calls == 0 && s->round)
		s->round_first = *s->round;
	s->calls++;
	s->all |= events;
	if (s->drain) {
		ssize_t n = read(fd, s->data + s->ndata, sizeof(s->data) - s->ndata);

		if (n > 0)
			s->ndata += (size_t)n;
	}
	if (s->unwatch_self)
		evloop_unwatch(s->ev, fd);
	if (s->stop_after && s->calls == s->stop_after)
		evloop_stop(s->ev);
}

/* ---- fds ------------------------------------------------------------- */

START_TEST(pipe_readable)
{
	struct evloop *ev = evloop_new();
	struct seen s;
	int p[2];
	uint64_t t;

	ck_assert_ptr_nonnull(ev);
	xpipe(p);
	memset(&s, 0, sizeof(s));
	s.ev = ev;
	s.drain = 1;
	s.stop_after = 1;
	ck_assert_int_eq(evloop_watch(ev, p[0], EV_READ, seen_cb, &s), 0);
	/* Nothing to read: not called. */
	run_for(ev, 30);
	ck_assert_int_eq(s.calls, 0);

	put(p[1], "hello");
	t = run_for(ev, 2000);
	ck_assert_uint_lt(t, 1000 * MS);        /* stopped by the callback */
	ck_assert_int_eq(s.calls, 1);
	ck_assert_uint_eq(s.events[0], EV_READ);
	ck_assert_int_eq(s.fds[0], p[0]);
	ck_assert_uint_eq(s.ndata, 5);
	ck_assert_mem_eq(s.data, "hello", 5);

	/* Drained: quiet again. */
	s.stop_after = 0;
	run_for(ev, 30);
	ck_assert_int_eq(s.calls, 1);
	evloop_unwatch(ev, p[0]);
	close(p[0]);
	close(p[1]);
	evloop_free(ev);
}
END_TEST

static void write_tick(uint64_t now_ns, void *arg)
{
	int *fd = arg;

	if (*fd >= 0) {
		put(*fd, "x");
		*fd = -1;
	}
}

START_TEST(pipe_written_while_running)
{
	struct evloop *ev = evloop_new();
	struct seen s;
	int p[2], wfd, id;
	uint64_t t;

	ck_assert_ptr_nonnull(ev);
	xpipe(p);
	wfd = p[1];
	memset(&s, 0, sizeof(s));
	s.ev = ev;
	s.drain = 1;
	s.stop_after = 1;
	ck_assert_int_eq(evloop_watch(ev, p[0], EV_READ, seen_cb, &s), 0);
	id = evloop_tick_add(ev, 20, write_tick, &wfd);
	ck_assert_int_gt(id, 0);
	t = run_for(ev, 3000);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_uint_eq(s.events[0], EV_READ);
	ck_assert_uint_eq(s.ndata, 1);
	ck_assert_int_eq(s.data[0], 'x');
	ck_assert_uint_ge(t, 20 * MS);
	ck_assert_uint_lt(t, 2000 * MS);
	evloop_tick_del(ev, id);
	close(p[0]);
	close(p[1]);
	evloop_free(ev);
}
END_TEST

START_TEST(socketpair_write)
{
	struct evloop *ev = evloop_new();
	struct seen s;
	int sv[2];
	char buf[8];

	ck_assert_ptr_nonnull(ev);
	xsocketpair(sv);
	memset(&s, 0, sizeof(s));
	s.ev = ev;
	s.stop_after = 1;
	ck_assert_int_eq(evloop_watch(ev, sv[0], EV_WRITE, seen_cb, &s), 0);
	run_for(ev, 2000);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_uint_eq(s.events[0], EV_WRITE);
	ck_assert_int_eq(s.fds[0], sv[0]);
	put(sv[0], "ok");
	ck_assert_int_eq(read(sv[1], buf, sizeof(buf)), 2);
	ck_assert_mem_eq(buf, "ok", 2);
	evloop_unwatch(ev, sv[0]);
	close(sv[0]);
	close(sv[1]);
	evloop_free(ev);
}
END_TEST

/* Only the events asked for are reported. */
START_TEST(events_filtered_by_mask)
{
	struct evloop *ev = evloop_new();
	struct seen s;
	int sv[2];

	ck_assert_ptr_nonnull(ev);
	xsocketpair(sv);
	put(sv[1], "data");                     /* sv[0] readable and writable */
	memset(&s, 0, sizeof(s));
	s.ev = ev;
	s.stop_after = 3;
	ck_assert_int_eq(evloop_watch(ev, sv[0], EV_READ, seen_cb, &s), 0);
	run_for(ev, 2000);
	ck_assert_int_eq(s.calls, 3);
	ck_assert_uint_eq(s.all, EV_READ);

	memset(&s, 0, sizeof(s));
	s.ev = ev;
	s.stop_after = 3;
	ck_assert_int_eq(evloop_watch(ev, sv[0], EV_WRITE, seen_cb, &s), 0);
	run_for(ev, 2000);
	ck_assert_int_eq(s.calls, 3);
	ck_assert_uint_eq(s.all, EV_WRITE);

	memset(&s, 0, sizeof(s));
	s.ev = ev;
	s.stop_after = 3;
	ck_assert_int_eq(evloop_watch(ev, sv[0], EV_READ | EV_WRITE, seen_cb, &s), 0);
	run_for(ev, 2000);
	ck_assert_int_eq(s.calls, 3);
	ck_assert_uint_eq(s.events[0], EV_READ | EV_WRITE);
	ck_assert_uint_eq(s.all, EV_READ | EV_WRITE);
	evloop_unwatch(ev, sv[0]);
	close(sv[0]);
	close(sv[1]);
	evloop_free(ev);
}
END_TEST

START_TEST(change_mask)
{
	struct evloop *ev = evloop_new();
	struct seen s1, s2;
	int sv[2];

	ck_assert_ptr_nonnull(ev);
	xsocketpair(sv);
	memset(&s1, 0, sizeof(s1));
	memset(&s2, 0, sizeof(s2));
	s1.ev = s2.ev = ev;

	/* Read only, nothing to read. */
	ck_assert_int_eq(evloop_watch(ev, sv[0], EV_READ, seen_cb, &s1), 0);
	run_for(ev, 40);
	ck_assert_int_eq(s1.calls, 0);

	/* Add write: writable at once. */
	ck_assert_int_eq(evloop_watch(ev, sv[0], EV_READ | EV_WRITE, seen_cb, &s1), 0);
	s1.stop_after = 2;
	run_for(ev, 2000);
	ck_assert_int_eq(s1.calls, 2);
	ck_assert_uint_eq(s1.all, EV_WRITE);

	/* Quiet: registered but silent, even with data to read. */
	memset(&s1, 0, sizeof(s1));
	s1.ev = ev;
	ck_assert_int_eq(evloop_watch(ev, sv[0], 0, seen_cb, &s1), 0);
	put(sv[1], "abc");
	run_for(ev, 40);
	ck_assert_int_eq(s1.calls, 0);

	/* Read again, with another callback. */
	s2.stop_after = 1;
	s2.drain = 1;
	ck_assert_int_eq(evloop_watch(ev, sv[0], EV_READ, seen_cb, &s2), 0);
	run_for(ev, 2000);
	ck_assert_int_eq(s1.calls, 0);
	ck_assert_int_eq(s2.calls, 1);
	ck_assert_uint_eq(s2.events[0], EV_READ);
	ck_assert_uint_eq(s2.ndata, 3);
	ck_assert_mem_eq(s2.data, "abc", 3);

	/* Same mask, new callback and argument: the new pair is used. */
	put(sv[1], "d");
	s1.stop_after = 1;
	s1.drain = 1;
	ck_assert_int_eq(evloop_watch(ev, sv[0], EV_READ, seen_cb, &s1), 0);
	run_for(ev, 2000);
	ck_assert_int_eq(s1.calls, 1);
	ck_assert_int_eq(s2.calls, 1);
	ck_assert_uint_eq(s1.ndata, 1);
	ck_assert_int_eq(s1.data[0], 'd');
	evloop_unwatch(ev, sv[0]);
	close(sv[0]);
	close(sv[1]);
	evloop_free(ev);
}
END_TEST

START_TEST(unwatch_self)
{
	struct evloop *ev = evloop_new();
	struct seen s;
	int p[2];

	ck_assert_ptr_nonnull(ev);
	xpipe(p);
	put(p[1], "never drained");
	memset(&s, 0, sizeof(s));
	s.ev = ev;
	s.unwatch_self = 1;
	ck_assert_int_eq(evloop_watch(ev, p[0], EV_READ, seen_cb, &s), 0);
	run_for(ev, 60);
	ck_assert_int_eq(s.calls, 1);
	/* Unwatching again, or an fd never watched, is a no-op. */
	evloop_unwatch(ev, p[0]);
	evloop_unwatch(ev, p[1]);
	evloop_unwatch(ev, 100000);
	evloop_unwatch(ev, -1);
	/* Watching again works. */
	s.unwatch_self = 0;
	s.stop_after = 2;
	ck_assert_int_eq(evloop_watch(ev, p[0], EV_READ, seen_cb, &s), 0);
	run_for(ev, 2000);
	ck_assert_int_eq(s.calls, 2);
	evloop_unwatch(ev, p[0]);
	close(p[0]);
	close(p[1]);
	evloop_free(ev);
}
END_TEST

/* Two readable fds in one round: whichever runs first unwatches the other
 * (and optionally watches it again with another callback). */
struct pairctx {
	struct evloop *ev;
	int fd[2];
	int calls[2];
	int first;                 /* index of the first called, -1 */
	int rewatch;
	struct seen fresh;         /* the new callback's view */
	int round;
};

static void pair_cb(int fd, unsigned events, void *arg)
{
	struct pairctx *c = arg;
	int me = fd == c->fd[0] ? 0 : 1;

	ck_assert_int_eq(fd, c->fd[me]);
	ck_assert_uint_eq(events, EV_READ);
	c->calls[me]++;
	if (c->first < 0) {
		c->first = me;
		evloop_unwatch(c->ev, c->fd[!me]);
		if (c->rewatch)
			ck_assert_int_eq(evloop_watch(c->ev, c->fd[!me], EV_READ, seen_cb, &c->fresh), 0);
	}
}

static void round_idle(void *arg)
{
	(*(int *)arg)++;
}

static void unwatch_other(int rewatch)
{
	struct evloop *ev = evloop_new();
	struct pairctx c;
	int p[2], q[2];

	ck_assert_ptr_nonnull(ev);
	xpipe(p);
	xpipe(q);
	put(p[1], "1");
	put(q[1], "2");
	memset(&c, 0, sizeof(c));
	c.ev = ev;
	c.fd[0] = p[0];
	c.fd[1] = q[0];
	c.first = -1;
	c.rewatch = rewatch;
	c.fresh.ev = ev;
	c.fresh.round = &c.round;
	ck_assert_int_gt(evloop_idle_add(ev, round_idle, &c.round), 0);
	ck_assert_int_eq(evloop_watch(ev, p[0], EV_READ, pair_cb, &c), 0);
	ck_assert_int_eq(evloop_watch(ev, q[0], EV_READ, pair_cb, &c), 0);
	run_for(ev, 60);
	ck_assert_int_ge(c.first, 0);
	/* The survivor is called every round (never drained)... */
	ck_assert_int_ge(c.calls[c.first], 1);
	/* ...the other never by its old callback. */
	ck_assert_int_eq(c.calls[!c.first], 0);
	if (rewatch) {
		/* The new watch works, but not on the old round's event. */
		ck_assert_int_ge(c.fresh.calls, 1);
		ck_assert_int_eq(c.fresh.fds[0], c.fd[!c.first]);
		ck_assert_uint_eq(c.fresh.events[0], EV_READ);
		ck_assert_int_gt(c.fresh.round_first, 1);
	} else {
		ck_assert_int_eq(c.fresh.calls, 0);
	}
	ck_assert_int_gt(c.round, 2);
	evloop_unwatch(ev, p[0]);
	evloop_unwatch(ev, q[0]);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	evloop_free(ev);
}

START_TEST(unwatch_other_same_round)
{
	unwatch_other(0);
}
END_TEST

START_TEST(unwatch_rewatch_same_round)
{
	unwatch_other(1);
}
END_TEST

START_TEST(hangup_reported)
{
	struct evloop *ev = evloop_new();
	struct seen s;
	int p[2];

	ck_assert_ptr_nonnull(ev);
	xpipe(p);
	memset(&s, 0, sizeof(s));
	s.ev = ev;
	s.stop_after = 1;
	/* Quiet watch: a hang-up still comes, as EV_ERROR only. */
	ck_assert_int_eq(evloop_watch(ev, p[0], 0, seen_cb, &s), 0);
	close(p[1]);
	run_for(ev, 2000);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_uint_eq(s.events[0], EV_ERROR);
	evloop_unwatch(ev, p[0]);
	close(p[0]);
	evloop_free(ev);
}
END_TEST

/* A quiet watch hears of a hang-up once, not every round: its owner has
 * chosen not to read, and a level-triggered report would keep the loop
 * from sleeping (ldsd spun on a client that exited while it waited for
 * memory).  Asking for EV_READ again brings the hang-up back. */
START_TEST(hangup_on_quiet_watch_once)
{
	struct evloop *ev = evloop_new();
	struct seen s;
	int round = 0, p[2];

	ck_assert_ptr_nonnull(ev);
	xpipe(p);
	memset(&s, 0, sizeof(s));
	s.ev = ev;
	ck_assert_int_eq(evloop_watch(ev, p[0], 0, seen_cb, &s), 0);
	put(p[1], "left");
	close(p[1]);
	ck_assert_int_gt(evloop_idle_add(ev, round_idle, &round), 0);
	run_for(ev, 100);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_uint_eq(s.events[0], EV_ERROR);
	ck_assert_int_lt(round, 50);            /* it slept; a spin makes thousands */

	/* Still quiet: still once. */
	ck_assert_int_eq(evloop_watch(ev, p[0], 0, seen_cb, &s), 0);
	run_for(ev, 30);
	ck_assert_int_eq(s.calls, 1);

	/* Reading again: the data, then the hang-up, as EV_READ. */
	s.drain = 1;
	s.stop_after = 2;
	ck_assert_int_eq(evloop_watch(ev, p[0], EV_READ, seen_cb, &s), 0);
	run_for(ev, 2000);
	ck_assert_int_eq(s.calls, 2);
	ck_assert_uint_eq(s.events[1] & EV_READ, EV_READ);
	ck_assert_uint_eq(s.ndata, 4);
	ck_assert_mem_eq(s.data, "left", 4);
	evloop_unwatch(ev, p[0]);
	close(p[0]);
	evloop_free(ev);
}
END_TEST

START_TEST(high_fd)
{
	struct evloop *ev = evloop_new();
	struct seen s;
	int p[2], hi;

	ck_assert_ptr_nonnull(ev);
	xpipe(p);
	hi = fcntl(p[0], F_DUPFD_CLOEXEC, 300);
	ck_assert_int_ge(hi, 300);
	memset(&s, 0, sizeof(s));
	s.ev = ev;
	s.stop_after = 1;
	s.drain = 1;
	ck_assert_int_eq(evloop_watch(ev, hi, EV_READ, seen_cb, &s), 0);
	put(p[1], "z");
	run_for(ev, 2000);
	ck_assert_int_eq(s.calls, 1);
	ck_assert_int_eq(s.fds[0], hi);
	ck_assert_int_eq(s.data[0], 'z');
	evloop_unwatch(ev, hi);
	close(hi);
	close(p[0]);
	close(p[1]);
	evloop_free(ev);
}
END_TEST

START_TEST(bad_arguments)
{
	struct evloop *ev = evloop_new();
	int p[2], ids[40], n;
	int dummy = 0;

	ck_assert_ptr_nonnull(ev);
	ck_assert_int_eq(evloop_watch(ev, -1, EV_READ, seen_cb, NULL), -EBADF);
	xpipe(p);
	close(p[1]);
	close(p[0]);
	/* A closed fd: epoll_ctl's error comes back. */
	ck_assert_int_eq(evloop_watch(ev, p[0], EV_READ, seen_cb, NULL), -EBADF);
	ck_assert_int_eq(evloop_tick_add(ev, 0, stop_cb, ev), -EINVAL);
	for (n = 0; n < 40; n++) {
		ids[n] = evloop_tick_add(ev, 1000, stop_cb, ev);
		if (ids[n] < 0)
			break;
		ck_assert_int_gt(ids[n], 0);
		for (int k = 0; k < n; k++)
			ck_assert_int_ne(ids[k], ids[n]);
	}
	ck_assert_int_eq(n, 32);
	ck_assert_int_eq(ids[32], -ENOSPC);
	/* Deleting frees a place; unknown ids are ignored. */
	evloop_tick_del(ev, ids[5]);
	evloop_tick_del(ev, 999999);
	evloop_tick_del(ev, ids[5]);
	ck_assert_int_gt(evloop_tick_add(ev, 1000, stop_cb, ev), 0);
	ck_assert_int_eq(evloop_tick_add(ev, 1000, stop_cb, ev), -ENOSPC);
	for (n = 0; n < 20; n++)
		if (evloop_idle_add(ev, round_idle, &dummy) < 0)
			break;
	ck_assert_int_eq(n, 16);
	ck_assert_int_eq(evloop_idle_add(ev, round_idle, &dummy), -ENOSPC);
	evloop_free(ev);
	evloop_free(NULL);
}
END_TEST

/* ---- ticks and idle -------------------------------------------------- */

struct tickrec {
	struct evloop *ev;
	int calls;
	uint64_t now[64];
	int stop_at;
	int del_at;                /* tick_del itself on this call */
	int id;
};

static void tick_cb(uint64_t now_ns, void *arg)
{
	struct tickrec *t = arg;

	if (t->calls < 64)
		t->now[t->calls] = now_ns;
	t->calls++;
	if (t->stop_at && t->calls == t->stop_at)
		evloop_stop(t->ev);
	if (t->del_at && t->calls == t->del_at)
		evloop_tick_del(t->ev, t->id);
}

START_TEST(tick_interval)
{
	struct evloop *ev = evloop_new();
	struct tickrec t;
	uint64_t t0, ran;

	ck_assert_ptr_nonnull(ev);
	memset(&t, 0, sizeof(t));
	t.ev = ev;
	t0 = clock_now_ns();
	t.id = evloop_tick_add(ev, 20, tick_cb, &t);
	ck_assert_int_gt(t.id, 0);
	ran = run_for(ev, 200);
	ck_assert_uint_ge(ran, 200 * MS);
	ck_assert_int_ge(t.calls, 5);
	ck_assert_int_le(t.calls, 30);
	/* Never early: the k-th tick comes at least k intervals after it was
	 * added, and now_ns is the monotonic clock. */
	for (int k = 0; k < t.calls && k < 64; k++) {
		ck_assert_uint_ge(t.now[k], t0 + (uint64_t)(k + 1) * 20 * MS);
		ck_assert_uint_le(t.now[k], clock_now_ns());
		if (k > 0)
			ck_assert_uint_gt(t.now[k], t.now[k - 1]);
	}
	evloop_tick_del(ev, t.id);
	evloop_free(ev);
}
END_TEST

START_TEST(tick_stop_ends_run)
{
	struct evloop *ev = evloop_new();
	struct tickrec t;
	uint64_t t0, ran;
	int guard;

	ck_assert_ptr_nonnull(ev);
	memset(&t, 0, sizeof(t));
	t.ev = ev;
	t.stop_at = 3;
	/* A long tick bounds the test if stopping did not work. */
	guard = evloop_tick_add(ev, 3000, stop_cb, ev);
	ck_assert_int_gt(guard, 0);
	t0 = clock_now_ns();
	t.id = evloop_tick_add(ev, 10, tick_cb, &t);
	ck_assert_int_eq(evloop_run(ev), 0);
	ran = clock_now_ns() - t0;
	ck_assert_int_eq(t.calls, 3);
	ck_assert_uint_ge(ran, 30 * MS);
	ck_assert_uint_lt(ran, 2000 * MS);
	/* The loop can be run again; the tick goes on. */
	t.stop_at = 5;
	ck_assert_int_eq(evloop_run(ev), 0);
	ck_assert_int_eq(t.calls, 5);
	evloop_free(ev);
}
END_TEST

START_TEST(tick_del)
{
	struct evloop *ev = evloop_new();
	struct tickrec a, b, c;

	ck_assert_ptr_nonnull(ev);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	a.ev = b.ev = c.ev = ev;
	a.id = evloop_tick_add(ev, 10, tick_cb, &a);
	b.id = evloop_tick_add(ev, 10, tick_cb, &b);
	c.id = evloop_tick_add(ev, 10, tick_cb, &c);
	ck_assert_int_gt(a.id, 0);
	ck_assert_int_ne(a.id, b.id);
	ck_assert_int_ne(b.id, c.id);
	c.del_at = 2;                          /* c removes itself */
	evloop_tick_del(ev, a.id);
	run_for(ev, 150);
	ck_assert_int_eq(a.calls, 0);
	ck_assert_int_ge(b.calls, 3);
	ck_assert_int_eq(c.calls, 2);
	/* b removed between runs. */
	evloop_tick_del(ev, b.id);
	b.calls = 0;
	run_for(ev, 50);
	ck_assert_int_eq(b.calls, 0);
	ck_assert_int_eq(c.calls, 2);
	evloop_free(ev);
}
END_TEST

/* The order of work: idle callbacks, then the round's fd events. */
struct trace {
	struct evloop *ev;
	char log[64];
	size_t n;
	int reads;
};

static void trace_idle_i(void *arg)
{
	struct trace *t = arg;

	if (t->n < sizeof(t->log) - 1)
		t->log[t->n++] = 'I';
}

static void trace_idle_j(void *arg)
{
	struct trace *t = arg;

	if (t->n < sizeof(t->log) - 1)
		t->log[t->n++] = 'J';
}

static void trace_read(int fd, unsigned events, void *arg)
{
	struct trace *t = arg;

	if (t->n < sizeof(t->log) - 1)
		t->log[t->n++] = 'R';
	if (++t->reads == 5)
		evloop_stop(t->ev);
}

START_TEST(idle_once_per_round)
{
	struct evloop *ev = evloop_new();
	struct trace t;
	int p[2], guard;

	ck_assert_ptr_nonnull(ev);
	memset(&t, 0, sizeof(t));
	t.ev = ev;
	xpipe(p);
	put(p[1], "never drained");
	guard = evloop_tick_add(ev, 3000, stop_cb, ev);
	ck_assert_int_gt(guard, 0);
	ck_assert_int_eq(evloop_idle_add(ev, trace_idle_i, &t), 1);
	ck_assert_int_eq(evloop_idle_add(ev, trace_idle_j, &t), 2);
	ck_assert_int_eq(evloop_watch(ev, p[0], EV_READ, trace_read, &t), 0);
	ck_assert_int_eq(evloop_run(ev), 0);
	t.log[t.n] = '\0';
	ck_assert_str_eq(t.log, "IJRIJRIJRIJRIJR");
	evloop_unwatch(ev, p[0]);
	close(p[0]);
	close(p[1]);
	evloop_free(ev);
}
END_TEST

/* With nothing happening, rounds are paced by the ticks. */
START_TEST(idle_paced_by_ticks)
{
	struct evloop *ev = evloop_new();
	struct tickrec t;
	int rounds = 0;

	ck_assert_ptr_nonnull(ev);
	memset(&t, 0, sizeof(t));
	t.ev = ev;
	t.stop_at = 5;
	ck_assert_int_gt(evloop_idle_add(ev, round_idle, &rounds), 0);
	t.id = evloop_tick_add(ev, 10, tick_cb, &t);
	ck_assert_int_eq(evloop_run(ev), 0);
	ck_assert_int_eq(t.calls, 5);
	/* At least one round per tick, and no busy spinning. */
	ck_assert_int_ge(rounds, 5);
	ck_assert_int_le(rounds, 50);
	evloop_free(ev);
}
END_TEST

/* ---- the transports' host services (tphost.h) -------------------------- */

struct hostrun {
	struct evloop *ev;
	int pending_calls, idle_calls, timer_calls;
};

/* Work for five rounds, then stop: with nothing else to wake it, the loop
 * must not sleep between them, nor after the stop. */
static int host_pending(void *arg)
{
	struct hostrun *h = arg;

	if (++h->pending_calls < 5)
		return 1;
	evloop_stop(h->ev);
	return 0;
}

static void host_idle(void *arg)
{
	((struct hostrun *)arg)->idle_calls++;
}

static void host_timer(uint64_t now_ns, void *arg)
{
	struct hostrun *h = arg;

	h->timer_calls++;
	evloop_stop(h->ev);
}

START_TEST(host_pending_keeps_awake)
{
	struct hostrun h = { .ev = evloop_new() };
	struct lds_tp_host host;
	int id, idle;

	ck_assert_ptr_nonnull(h.ev);
	tphost_init(&host, h.ev);
	idle = evloop_idle_add(h.ev, host_idle, &h);
	ck_assert_int_gt(idle, 0);
	evloop_idle_del(h.ev, idle);
	id = host.pending_add(host.ctx, host_pending, &h);
	ck_assert_int_gt(id, 0);
	ck_assert_int_eq(evloop_run(h.ev), 0);
	ck_assert_int_eq(h.pending_calls, 5);
	ck_assert_int_eq(h.idle_calls, 0);
	host.pending_del(host.ctx, id);
	id = host.timer_add(host.ctx, 20, host_timer, &h);
	ck_assert_int_gt(id, 0);
	ck_assert_int_eq(evloop_run(h.ev), 0);
	ck_assert_int_eq(h.pending_calls, 5);
	ck_assert_int_eq(h.timer_calls, 1);
	host.timer_del(host.ctx, id);
	evloop_free(h.ev);
}
END_TEST

Suite *make_evloop_suite(void)
{
	Suite *s = suite_create("evloop");
	TCase *fd = tcase_create("fds");
	TCase *tk = tcase_create("ticks");

	tcase_add_test(fd, pipe_readable);
	tcase_add_test(fd, pipe_written_while_running);
	tcase_add_test(fd, socketpair_write);
	tcase_add_test(fd, events_filtered_by_mask);
	tcase_add_test(fd, change_mask);
	tcase_add_test(fd, unwatch_self);
	tcase_add_test(fd, unwatch_other_same_round);
	tcase_add_test(fd, unwatch_rewatch_same_round);
	tcase_add_test(fd, hangup_reported);
	tcase_add_test(fd, hangup_on_quiet_watch_once);
	tcase_add_test(fd, high_fd);
	tcase_add_test(fd, bad_arguments);
	tcase_set_timeout(fd, 10);
	suite_add_tcase(s, fd);

	tcase_add_test(tk, tick_interval);
	tcase_add_test(tk, tick_stop_ends_run);
	tcase_add_test(tk, tick_del);
	tcase_add_test(tk, idle_once_per_round);
	tcase_add_test(tk, idle_paced_by_ticks);
	tcase_add_test(tk, host_pending_keeps_awake);
	tcase_set_timeout(tk, 10);
	suite_add_tcase(s, tk);
	return s;
}
