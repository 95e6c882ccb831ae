/*
 * check_lds_reconnect.c - liblds against a fake ldsd (fakeldsd.h) that
 * goes away: what the handle reports then, resends of lost messages,
 * lds_reconnect (copies dropped, messages in doubt reported, a restarting
 * daemon waited for).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fakeldsd.h"
#include "suites.h"

#define VANISH_LEN   (8u << 20)
#define RESTART_GONE_MS 300      /* s_restart: no socket, */
#define RESTART_REFUSING_MS 200  /* then a socket that refuses */

/* ---- a daemon that goes away ------------------------------------------ */

static void s_gone(struct fake *f)
{
	if (fk_welcome(f, "clusterA") == 0)
		fk_deliver(f, "clusterB/x", 1, "last words", 10);
}

START_TEST(t_daemon_gone)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_gone);
	h = open_ok(&f, "cm");
	/* What arrived before the end is still handed out. */
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_mem_eq(m.data, "last words", 10);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), -ECONNRESET);
	ck_assert_int_eq(lds_send(h, "x", "a", 1, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_send_nb(h, "x", "a", 1, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_process(h), -ECONNRESET);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* Takes 64 KiB of an 8 MiB message and hangs up. */
static void s_vanish(struct fake *f)
{
	static uint8_t sink[64 << 10];

	if (fk_welcome(f, "clusterA") == 0)
		fk_read_all(f, sink, sizeof(sink));
}

START_TEST(t_daemon_vanishes_during_send)
{
	uint8_t *big = calloc(1, VANISH_LEN);
	struct fake f = { 0 };
	struct lds *h;

	ck_assert_ptr_nonnull(big);
	fake_start(&f, s_vanish);
	h = open_ok(&f, "cm");
	/* An error code, not SIGPIPE. */
	ck_assert_int_eq(lds_send(h, "clusterB/x", big, VANISH_LEN, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	free(big);
}
END_TEST

/* ---- resends, copies and reconnecting ---------------------------------- */

#define PART_LEN 100000u

/* Processes input until the daemon's connection ends. */
static void wait_reset(struct lds *h)
{
	for (int i = 0; i < 500; i++) {
		struct pollfd p = { .fd = lds_fd(h), .events = POLLIN };
		int rc = lds_process(h);

		if (rc == -ECONNRESET)
			return;
		ck_assert_int_eq(rc, 0);
		ck_assert_int_ge(poll(&p, 1, 10), 0);
	}
	ck_abort_msg("the connection did not end");
}

/* Three messages and the start of a fourth, then the daemon dies.  The
 * restarted daemon hands over again what the sender resent (2 to 4), then
 * 5, and message 1 of the same sender name restarted (new incarnation). */
static void s_copies(struct fake *f)
{
	uint8_t *big = malloc(PART_LEN);
	struct cp_msg m = { .type = CP_DELIVER, .msg_id = 4, .incarnation = FK_INCARNATION,
			    .payload_len = PART_LEN, .name = "clusterB/src" };
	uint8_t hdr[CP_HDR_LEN + 512];
	size_t n = cp_encode(hdr, sizeof(hdr), &m);
	uint64_t inc;

	FK_CHECK(f, big != NULL && n > 0);
	fill(big, PART_LEN, 4);
	if (fk_welcome(f, "clusterA") < 0)
		goto out;
	inc = f->hello_incarnation;
	for (uint64_t id = 1; id <= 3; id++)
		if (fk_deliver(f, "clusterB/src", id, "m", 1) < 0)
			goto out;
	if (fk_write_all(f, hdr, n) < 0 || fk_write_all(f, big, PART_LEN / 2) < 0)
		goto out;
	fk_hangup(f);
	if (fk_welcome(f, "clusterA") < 0)
		goto out;
	if (f->hello_incarnation != inc || strcmp(f->hello_name, "cm") != 0) {
		FK_ERR(f, "reconnect changed the HELLO");
		goto out;
	}
	if (fk_deliver(f, "clusterB/src", 2, "m", 1) < 0 || fk_deliver(f, "clusterB/src", 3, "m", 1) < 0 ||
	    fk_deliver(f, "clusterB/src", 4, big, PART_LEN) < 0 || fk_deliver(f, "clusterB/src", 5, "five", 4) < 0 ||
	    fk_deliver_from(f, "clusterB/src", FK_INCARNATION + 1, 1, "new", 3) < 0)
		goto out;
	fk_bye(f);
out:
	free(big);
}

START_TEST(t_reconnect_drops_copies)
{
	struct fake f = { 0 };
	struct lds_stats st;
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_copies);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 1);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 2);
	wait_reset(h);
	ck_assert_int_eq(lds_reconnect(h, WAIT_MS), 0);
	ck_assert_str_eq(lds_name(h), "clusterA/cm");
	/* 3 was received before and not yet taken: it is still there. */
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 3);
	/* The half-received 4 arrives whole, once. */
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 4);
	ck_assert_uint_eq(m.len, PART_LEN);
	ck_assert(filled(m.data, m.len, 4));
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 5);
	ck_assert_mem_eq(m.data, "five", 4);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 1);
	ck_assert_mem_eq(m.data, "new", 3);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.received, 6);
	ck_assert_uint_eq(st.duplicates, 2);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

static int fk_lost(struct fake *f, uint64_t id)
{
	return fk_range(f, CP_LOST, id, id, "clusterB", "peer gateway restarted");
}

/* Takes the event fk_lost(id) gave. */
static void expect_lost(struct lds *h, uint64_t id)
{
	expect_event(h, LDS_EV_LOST, id, id, 0, "clusterB", "peer gateway restarted");
}

static void s_resend(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_read_sends(f, 3) < 0)
		return;
	if (fk_acked(f, 1, 1) < 0 || fk_lost(f, 2) < 0 || fk_lost(f, 3) < 0)
		return;
	if (fk_expect_send(f, 2, "m2") < 0 || fk_expect_send(f, 3, "m3") < 0 || fk_acked(f, 2, 3) < 0)
		return;
	/* Fresh 4 is lost; 5 and 6 too. */
	if (fk_expect_send(f, 4, "m4") < 0 || fk_lost(f, 4) < 0 || fk_expect_send(f, 5, "m5") < 0 ||
	    fk_expect_send(f, 6, "m6") < 0 || fk_lost(f, 5) < 0 || fk_lost(f, 6) < 0)
		return;
	if (fk_ack_send(f, 6, "m6") == 0)
		fk_bye(f);
}

START_TEST(t_resend)
{
	struct fake f = { 0 };
	struct lds_stats st;
	struct lds *h;

	fake_start(&f, s_resend);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m1", 2, NULL), 0);
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m2", 2, NULL), 0);
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m3", 2, NULL), 0);
	wait_stats(h, 1, 2, 0);
	ck_assert_uint_eq(lds_settled_upto(h), 3);
	/* Only a loss the application has taken may be resent. */
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 2), -EINVAL);
	expect_lost(h, 2);
	expect_lost(h, 3);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 1), -EINVAL);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 2), 0);
	/* In doubt again; and resent only once. */
	ck_assert_uint_eq(lds_settled_upto(h), 1);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 2), -EINVAL);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m3", 2, 3), 0);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_uint_eq(st.resent, 2);
	ck_assert_uint_eq(st.sent, 3);
	ck_assert_int_eq(lds_wait_settled(h, 3, WAIT_MS), 0);
	wait_stats(h, 3, 0, 0);

	/* A new message overtakes losses taken before it: they can no
	 * longer be resent, as the receiver could drop them for copies. */
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m4", 2, NULL), 0);
	wait_stats(h, 3, 1, 0);
	expect_lost(h, 4);
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m5", 2, NULL), 0);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m4", 2, 4), -EINVAL);
	/* Resending 6 abandons 5 the same way. */
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m6", 2, NULL), 0);
	wait_stats(h, 3, 3, 0);
	expect_lost(h, 5);
	expect_lost(h, 6);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m6", 2, 6), 0);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m5", 2, 5), -EINVAL);
	ck_assert_int_eq(lds_wait_settled(h, 6, WAIT_MS), 0);
	wait_stats(h, 4, 2, 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	/* RESUME counts the LOST events taken naming the peer. */
	ck_assert_str_eq(f.resume_peer, "clusterB");
	ck_assert_uint_eq(f.resume_count, 5);
}
END_TEST

/* The daemon dies with messages 2 and 3 in doubt; the restarted one gets
 * 2 again, with its id. */
static void s_in_doubt(struct fake *f)
{
	uint64_t inc;

	if (fk_welcome(f, "clusterA") < 0 || fk_read_sends(f, 3) < 0 || fk_acked(f, 1, 1) < 0)
		return;
	inc = f->hello_incarnation;
	fk_hangup(f);
	if (fk_welcome(f, "clusterA") < 0)
		return;
	FK_CHECK(f, f->hello_incarnation == inc);
	if (fk_ack_send(f, 2, "m2") == 0)
		fk_bye(f);
}

START_TEST(t_reconnect_reports_in_doubt)
{
	struct fake f = { 0 };
	struct lds_event ev;
	struct lds *h;

	fake_start(&f, s_in_doubt);
	h = open_ok(&f, "cm");
	for (int i = 1; i <= 3; i++)
		ck_assert_int_eq(lds_send(h, "clusterB/x", i == 2 ? "m2" : "mm", 2, NULL), 0);
	wait_stats(h, 1, 0, 0);
	wait_reset(h);
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m4", 2, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_reconnect(h, WAIT_MS), 0);
	wait_stats(h, 1, 2, 0);
	expect_event(h, LDS_EV_LOST, 2, 3, 0, "", "connection to the local ldsd lost: outcome unknown");
	ck_assert_int_eq(lds_next_event(h, &ev), 0);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 2), 0);
	ck_assert_int_eq(lds_wait_settled(h, 3, WAIT_MS), 0);
	wait_stats(h, 2, 1, 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	/* A lost connection is no fence of the new one's daemon. */
	ck_assert_uint_eq(f.resumes, 0);
}
END_TEST

/* The daemon restarts: first its socket is gone, then it is there but
 * not listening yet (refuses), then it listens again. */
static void s_restart(struct fake *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (fk_welcome(f, "clusterA") < 0)
		return;
	close(f->lfd);
	FK_CHECK(f, unlink(f->sock) == 0);
	fk_hangup(f);
	poll(NULL, 0, RESTART_GONE_MS);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->sock);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FK_CHECK(f, f->lfd >= 0 && bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	poll(NULL, 0, RESTART_REFUSING_MS);
	FK_CHECK(f, listen(f->lfd, 4) == 0);
	if (fk_welcome(f, "clusterA") == 0 && fk_deliver(f, "clusterB/x", 1, "back", 4) == 0)
		fk_bye(f);
}

/* A handle whose daemon, running script, has ended the connection. */
static struct lds *open_until_reset(struct fake *f, script_fn script)
{
	struct lds *h;

	fake_start(f, script);
	h = open_ok(f, "cm");
	wait_reset(h);
	return h;
}

/* lds_reconnect waits for a restarting daemon, within its timeout. */
START_TEST(t_reconnect_waits)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h = open_until_reset(&f, s_restart);
	int64_t t0 = now_ms();

	ck_assert_int_eq(lds_reconnect(h, WAIT_MS), 0);
	ck_assert_int_ge(now_ms() - t0, RESTART_GONE_MS + RESTART_REFUSING_MS - 50);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_mem_eq(m.data, "back", 4);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* No daemon to come back to: the handle says so until one is there. */
START_TEST(t_reconnect_fails)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h = open_until_reset(&f, s_gone);
	int64_t t0;

	fake_stop(&f);
	t0 = now_ms();
	ck_assert_int_eq(lds_reconnect(h, 200), -ENOENT);
	/* It tried until its timeout, not once. */
	ck_assert_int_ge(now_ms() - t0, 180);
	ck_assert_int_eq(lds_recv(h, &m, 0), 0);
	ck_assert_mem_eq(m.data, "last words", 10);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), -ECONNRESET);
	ck_assert_int_eq(lds_send(h, "x", "a", 1, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_close(h), 0);
}
END_TEST

Suite *make_lds_reconnect_suite(void)
{
	Suite *s = suite_create("lds_reconnect");
	TCase *api = tcase_create("api");

	tcase_set_timeout(api, 60);
	tcase_add_test(api, t_daemon_gone);
	tcase_add_test(api, t_daemon_vanishes_during_send);
	tcase_add_test(api, t_reconnect_drops_copies);
	tcase_add_test(api, t_resend);
	tcase_add_test(api, t_reconnect_reports_in_doubt);
	tcase_add_test(api, t_reconnect_fails);
	tcase_add_test(api, t_reconnect_waits);
	suite_add_tcase(s, api);
	return s;
}
