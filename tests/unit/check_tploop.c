/*
 * check_tploop.c - the small loop that hosts a transport in liblds
 * (libclient/tploop.c, the RDMA client path's): timers fire at their
 * interval however long it is asked to wait, a pending hook with work left
 * keeps it from sleeping, fds report what they are watched for, and an fd
 * unwatched by a callback is not called.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "ldsd/clock.h"
#include "libclient/tploop.h"
#include "suites.h"

static int ticks, busy_left, pendings, fired[2];
static struct tploop *tl;
static int tl_fd[2];

static void on_tick(uint64_t now_ns, void *arg)
{
	ticks++;
}

static int on_pending(void *arg)
{
	pendings++;
	return busy_left > 0 ? busy_left-- : 0;
}

static uint64_t ms_since(uint64_t t0)
{
	return (clock_now_ns() - t0) / 1000000;
}

START_TEST(loop_timers_fire_and_stop)
{
	struct lds_tp_host h;
	uint64_t t0 = clock_now_ns();
	int id;

	tl = tploop_new();
	tploop_host(tl, &h);
	ticks = 0;
	id = h.timer_add(h.ctx, 2, on_tick, NULL);
	ck_assert_int_gt(id, 0);
	/* The poll's timeout is cut to the timer: ticks come though the
	 * loop is asked to wait a second. */
	while (ms_since(t0) < 100)
		ck_assert_int_eq(tploop_run_once(tl, 1000), 0);
	ck_assert_int_ge(ticks, 10);
	ck_assert_int_le(ticks, 51);
	/* Deleted and added again (its slot reused): it runs again, once. */
	h.timer_del(h.ctx, id);
	ticks = 0;
	ck_assert_int_eq(tploop_run_once(tl, 10), 0);
	ck_assert_int_eq(ticks, 0);
	ck_assert_int_gt(h.timer_add(h.ctx, 1000, on_tick, NULL), 0);
	t0 = clock_now_ns();
	ck_assert_int_eq(tploop_run_once(tl, 20), 0);
	ck_assert_int_eq(ticks, 0);
	ck_assert_uint_ge(ms_since(t0), 15);
	tploop_free(tl);
}
END_TEST

START_TEST(loop_pending_keeps_it_awake)
{
	struct lds_tp_host h;
	uint64_t t0;

	tl = tploop_new();
	tploop_host(tl, &h);
	pendings = 0;
	busy_left = 5;
	ck_assert_int_gt(h.pending_add(h.ctx, on_pending, NULL), 0);
	/* Work left: the round does not sleep, and the hook runs every round. */
	t0 = clock_now_ns();
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(tploop_run_once(tl, 1000), 0);
	ck_assert_uint_lt(ms_since(t0), 500);
	ck_assert_int_eq(pendings, 5);
	/* None left: it sleeps the timeout out. */
	t0 = clock_now_ns();
	ck_assert_int_eq(tploop_run_once(tl, 30), 0);
	ck_assert_uint_ge(ms_since(t0), 25);
	ck_assert_int_eq(pendings, 6);
	tploop_free(tl);
}
END_TEST

/* Fired on tl_fd[0]: unwatches tl_fd[1], which fired in the same round. */
static void on_fd(int fd, unsigned events, void *arg)
{
	int k = fd == tl_fd[0] ? 0 : 1;
	struct lds_tp_host h;

	fired[k] |= (int)events;
	tploop_host(tl, &h);
	if (k == 0)
		h.unwatch(h.ctx, tl_fd[1]);
}

START_TEST(loop_fds_events_and_unwatch_in_a_callback)
{
	struct lds_tp_host h;
	int a[2], b[2];

	tl = tploop_new();
	tploop_host(tl, &h);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, a), 0);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, b), 0);
	tl_fd[0] = a[0];
	tl_fd[1] = b[0];
	ck_assert_int_eq(write(a[1], "x", 1), 1);
	ck_assert_int_eq(write(b[1], "x", 1), 1);
	/* Registered but quiet: not reported though readable. */
	ck_assert_int_eq(h.watch(h.ctx, a[0], 0, on_fd, NULL), 0);
	ck_assert_int_eq(h.watch(h.ctx, b[0], TP_EV_READ, on_fd, NULL), 0);
	fired[0] = fired[1] = 0;
	ck_assert_int_eq(tploop_run_once(tl, 10), 0);
	ck_assert_int_eq(fired[0], 0);
	ck_assert_int_eq(fired[1], TP_EV_READ);
	/* Both ready; the first's callback unwatches the second, whose
	 * callback then does not run. */
	ck_assert_int_eq(h.watch(h.ctx, a[0], TP_EV_READ | TP_EV_WRITE, on_fd, NULL), 0);
	fired[0] = fired[1] = 0;
	ck_assert_int_eq(tploop_run_once(tl, 10), 0);
	ck_assert_int_eq(fired[0], TP_EV_READ | TP_EV_WRITE);
	ck_assert_int_eq(fired[1], 0);
	/* The peer gone: an error event even with only reads watched. */
	ck_assert_int_eq(h.watch(h.ctx, a[0], TP_EV_READ, on_fd, NULL), 0);
	close(a[1]);
	fired[0] = 0;
	ck_assert_int_eq(tploop_run_once(tl, 10), 0);
	ck_assert(fired[0] & (TP_EV_READ | TP_EV_ERROR));
	h.unwatch(h.ctx, a[0]);
	close(a[0]);
	close(b[0]);
	close(b[1]);
	tploop_free(tl);
}
END_TEST

Suite *make_tploop_suite(void)
{
	Suite *s = suite_create("tploop");
	TCase *l = tcase_create("loop");

	tcase_set_timeout(l, 30);
	tcase_add_test(l, loop_timers_fire_and_stop);
	tcase_add_test(l, loop_pending_keeps_it_awake);
	tcase_add_test(l, loop_fds_events_and_unwatch_in_a_callback);
	suite_add_tcase(s, l);
	return s;
}
