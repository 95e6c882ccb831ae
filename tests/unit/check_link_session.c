/*
 * check_link_session.c - the link's sessions between two daemons
 * (linkbed.h): handshakes refused for a wrong key or setting, a peer torn
 * down and started again with a new instance id, and the reconnect
 * back-off, on the fake clock (fakeclock.h): seconds of back-off, checked
 * to the tick, in a fraction of a second.
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
#include "linkbed.h"
#include "suites.h"
#include "tp_mem.h"

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
Suite *make_link_session_suite(void)
{
	Suite *s = suite_create("link_session");
	TCase *tc = tcase_create("session");

	linkbed_find_kinds();
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, t_peer_restart, 0, nkinds);
	if (nmem > 0)
		tcase_add_test(tc, t_reconnect_backoff);
	if (nmem > 0)
		tcase_add_loop_test(tc, t_refused, 0, (int)(sizeof(refusals) / sizeof(refusals[0])));
	suite_add_tcase(s, tc);
	return s;
}
