/*
 * check_lds_send.c - liblds against a fake ldsd (fakeldsd.h): sending
 * (blocking, non-blocking, zero-copy), receiving, the outcomes of what was
 * sent (acknowledged, lost, refused) and TAKEN.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fakeldsd.h"
#include "suites.h"

#define BIG_LEN      (8u << 20)
#define BIG_NDELIV   32
#define BIG_DELIV    (256u << 10)
#define NB_LEN       100000u
#define NB_MAX       1000

/* ---- sending ---------------------------------------------------------- */

static void s_send_bytes(struct fake *f)
{
	static const uint8_t want1[] = { 0, 0, 0, 26, CP_SEND, CP_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 12,
					 'c', 'l', 'u', 's', 't', 'e', 'r', 'A', '/', 'c', 'm', '2',
					 'h', 'e', 'l', 'l', 'o' };
	static const uint8_t want2[] = { 0, 0, 0, 19, CP_SEND, CP_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 10,
					 'c', 'l', 'u', 's', 't', 'e', 'r', 'B', '/', 'x' };
	uint8_t got[sizeof(want1)];

	if (fk_welcome(f, "clusterA") < 0 || fk_read_all(f, got, sizeof(want1)) < 0)
		return;
	FK_CHECK(f, memcmp(got, want1, sizeof(want1)) == 0);
	if (fk_read_all(f, got, sizeof(want2)) < 0)
		return;
	FK_CHECK(f, memcmp(got, want2, sizeof(want2)) == 0);
	fk_bye(f);
}

START_TEST(t_send_bytes)
{
	static char big[1];
	struct fake f = { .max_msg = 1000 };
	struct lds_stats st;
	struct lds *h;
	uint64_t id = 0;

	fake_start(&f, s_send_bytes);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_send(h, "cm2", "hello", 5, &id), 0);
	ck_assert_uint_eq(id, 1);
	/* Refused messages use no id. */
	ck_assert_int_eq(lds_send(h, "bad name", "x", 1, &id), -EINVAL);
	ck_assert_int_eq(lds_send(h, "a/b/c", "x", 1, &id), -EINVAL);
	ck_assert_int_eq(lds_send(h, "x", big, 1001, &id), -EMSGSIZE);
	ck_assert_int_eq(lds_send(h, "x", NULL, 1, &id), -EINVAL);
	ck_assert_int_eq(lds_send(h, "clusterB/x", NULL, 0, &id), 0);
	ck_assert_uint_eq(id, 2);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.sent, 2);
	ck_assert_uint_eq(st.bytes_sent, 5);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* The daemon writes 8 MiB of DELIVERs before it reads anything, then reads
 * the client's 8 MiB SEND slowly: without reading while it writes, the
 * client would deadlock with it. */
static void s_big(struct fake *f)
{
	uint8_t *buf = malloc(BIG_DELIV);
	struct fk_frame fr = { 0 };

	FK_CHECK(f, buf != NULL);
	if (fk_welcome(f, "clusterA") < 0)
		goto out;
	for (unsigned i = 0; i < BIG_NDELIV; i++) {
		fill(buf, BIG_DELIV, i);
		if (fk_deliver(f, "clusterB/src", i + 1, buf, BIG_DELIV) < 0)
			goto out;
	}
	f->slow = 1;
	if (fk_read_frame(f, &fr, CP_SEND) < 0)
		goto out;
	f->slow = 0;
	if (fr.m.msg_id != 1 || strcmp(fr.m.name, "clusterB/sink") != 0 || fr.m.payload_len != BIG_LEN ||
	    !filled(fr.m.payload, BIG_LEN, 99)) {
		FK_ERR(f, "8 MiB SEND damaged");
		goto out;
	}
	if (fk_acked(f, 1, 1) == 0)
		fk_bye(f);
out:
	free(fr.body);
	free(buf);
}

START_TEST(t_big_no_deadlock)
{
	uint8_t *big = malloc(BIG_LEN);
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h;
	uint64_t id = 0;

	ck_assert_ptr_nonnull(big);
	fill(big, BIG_LEN, 99);
	fake_start(&f, s_big);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_send(h, "clusterB/sink", big, BIG_LEN, &id), 0);
	ck_assert_uint_eq(id, 1);
	for (unsigned i = 0; i < BIG_NDELIV; i++) {
		ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
		ck_assert_uint_eq(m.id, i + 1);
		ck_assert_str_eq(m.src, "clusterB/src");
		ck_assert_uint_eq(m.len, BIG_DELIV);
		ck_assert(filled(m.data, m.len, i));
	}
	ck_assert_int_eq(lds_wait_settled(h, 1, WAIT_MS), 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	free(big);
}
END_TEST

/* Once the test says go, reads SENDs with ids 1, 2, ... and checks each
 * one's pattern, until BYE. */
static void s_nb(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_wait_go(f) < 0)
		return;
	for (int i = 0; i <= NB_MAX; i++) {
		struct fk_frame fr = { 0 };
		struct cp_hdr h;
		int ok;

		if (fk_read_hdr(f, &h) < 0)
			return;
		if (h.type == CP_BYE && h.len == 0) {
			fk_eof(f);
			return;
		}
		if (fk_read_body(f, &h, &fr, CP_SEND) < 0) {
			free(fr.body);
			return;
		}
		f->got++;
		ok = fr.m.msg_id == f->got && fr.m.payload_len == NB_LEN && filled(fr.m.payload, NB_LEN, (unsigned)f->got);
		free(fr.body);
		FK_CHECK(f, ok);
	}
	FK_ERR(f, "too many messages");
}

START_TEST(t_send_nb)
{
	uint8_t *buf = malloc(NB_LEN);
	struct fake f = { 0 };
	struct lds *h;
	uint64_t id = 0;
	int k, rc = 0;

	ck_assert_ptr_nonnull(buf);
	fake_start(&f, s_nb);
	h = open_ok(&f, "cm");
	for (k = 0; k < NB_MAX; k++) {
		/* A new pattern each time: the library must have copied what
		 * it kept of the previous message. */
		fill(buf, NB_LEN, (unsigned)k + 1);
		rc = lds_send_nb(h, "clusterB/x", buf, NB_LEN, &id);
		if (rc == -EAGAIN)
			break;
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_eq(id, (uint64_t)k + 1);
	}
	ck_assert_int_eq(rc, -EAGAIN);
	ck_assert_int_gt(k, 0);
	rc = lds_flush(h, 0);
	ck_assert(rc == 0 || rc == -EAGAIN);
	ck_assert_int_eq(lds_send_nb(h, "clusterB/x", buf, NB_LEN, &id), -EAGAIN);
	fake_go(&f);
	ck_assert_int_eq(lds_flush(h, WAIT_MS), 0);
	/* The refused attempts used no id. */
	ck_assert_int_eq(lds_send(h, "clusterB/x", buf, NB_LEN, &id), 0);
	ck_assert_uint_eq(id, (uint64_t)k + 1);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	ck_assert_uint_eq(f.got, (unsigned long)k + 1);
	free(buf);
}
END_TEST

/* ---- receiving -------------------------------------------------------- */

static void s_recv(struct fake *f)
{
	if (fk_welcome(f, "clusterA") == 0 && fk_wait_go(f) == 0 && fk_deliver(f, "clusterB/x", 7, "abc", 3) == 0)
		fk_bye(f);
}

START_TEST(t_recv_timeouts)
{
	struct fake f = { 0 };
	struct lds_stats st;
	struct lds_msg m;
	struct lds *h;
	int64_t t0;

	fake_start(&f, s_recv);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv(h, &m, 0), -EAGAIN);
	t0 = now_ms();
	ck_assert_int_eq(lds_recv(h, &m, 100), -ETIMEDOUT);
	ck_assert_int_ge(now_ms() - t0, 95);
	ck_assert_int_lt(now_ms() - t0, 2000);
	fake_go(&f);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_str_eq(m.src, "clusterB/x");
	ck_assert_uint_eq(m.id, 7);
	ck_assert_uint_eq(m.len, 3);
	ck_assert_mem_eq(m.data, "abc", 3);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.received, 1);
	ck_assert_uint_eq(st.bytes_received, 3);
	ck_assert_int_eq(lds_recv(h, &m, 0), -EAGAIN);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* The zero-copy calls over a socket (the fake daemon offers no rings):
 * they copy through the handle's buffer, put the same bytes on the wire
 * as lds_send, and keep their one-at-a-time rules. */
START_TEST(t_zc_socket)
{
	struct fake f = { .max_msg = 1000 };
	struct lds_msg m;
	struct lds *h;
	uint64_t id = 0;
	void *p;

	fake_start(&f, s_send_bytes);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_send_reserve(h, "x", 1001, &p), -EMSGSIZE);
	ck_assert_int_eq(lds_send_reserve(h, "bad name", 1, &p), -EINVAL);
	ck_assert_int_eq(lds_send_commit(h, &id), -EINVAL);
	ck_assert_int_eq(lds_send_reserve(h, "cm2", 3, &p), 0);
	ck_assert_int_eq(lds_send_reserve(h, "cm2", 3, &p), -EBUSY);
	ck_assert_int_eq(lds_send(h, "cm2", "abc", 3, &id), -EBUSY);
	ck_assert_int_eq(lds_flush(h, 0), -EBUSY);
	ck_assert_int_eq(lds_send_cancel(h), 0);
	ck_assert_int_eq(lds_send_reserve(h, "cm2", 5, &p), 0);
	memcpy(p, "hello", 5);
	ck_assert_int_eq(lds_send_commit(h, &id), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(lds_send_reserve(h, "clusterB/x", 0, &p), 0);
	ck_assert_int_eq(lds_send_commit(h, &id), 0);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);

	memset(&f, 0, sizeof(f));
	fake_start(&f, s_recv);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv_zc(h, &m, 0), -EAGAIN);
	ck_assert_int_eq(lds_recv_release(h, &m), -EINVAL);
	fake_go(&f);
	ck_assert_int_eq(lds_recv_zc(h, &m, WAIT_MS), 0);
	ck_assert_str_eq(m.src, "clusterB/x");
	ck_assert_uint_eq(m.id, 7);
	ck_assert_uint_eq(m.len, 3);
	ck_assert_mem_eq(m.data, "abc", 3);
	ck_assert_int_eq(lds_recv_zc(h, &m, 0), -EBUSY);
	ck_assert_int_eq(lds_recv_release(h, &m), 0);
	ck_assert_int_eq(lds_recv_release(h, &m), -EINVAL);
	ck_assert_int_eq(lds_recv_zc(h, &m, 0), -EAGAIN);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* ---- acknowledgements, losses and errors ------------------------------ */

static void s_outcomes(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_read_sends(f, 6) < 0)
		return;
	if (fk_acked(f, 3, 4) < 0 || fk_range(f, CP_LOST, 1, 1, "clusterB", "peer gateway restarted") < 0 ||
	    fk_error(f, 6, EHOSTUNREACH, "no link to clusterC") < 0 || fk_wait_go(f) < 0)
		return;
	if (fk_acked(f, 2, 2) < 0 || fk_acked(f, 3, 4) < 0 || fk_wait_go(f) < 0)
		return;
	if (fk_error(f, 0, EIO, "daemon draining") == 0 && fk_acked(f, 5, 5) == 0)
		fk_bye(f);
}

START_TEST(t_outcomes)
{
	struct fake f = { 0 };
	struct lds_event ev;
	struct lds *h;

	fake_start(&f, s_outcomes);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_set_ack_events(h, 1), 0);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(lds_send(h, "clusterB/x", "m", 1, NULL), 0);
	wait_stats(h, 2, 1, 1);
	ck_assert_uint_eq(lds_settled_upto(h), 1);
	fake_go(&f);
	wait_stats(h, 3, 1, 1);
	ck_assert_uint_eq(lds_settled_upto(h), 4);
	fake_go(&f);
	ck_assert_int_eq(lds_wait_settled(h, 6, WAIT_MS), 0);
	ck_assert_int_eq(lds_wait_settled(h, 7, 0), -EINVAL);
	/* The repeated 3..4 was not counted twice. */
	wait_stats(h, 4, 1, 1);

	expect_event(h, LDS_EV_ACKED, 3, 4, 0, "", "");
	expect_event(h, LDS_EV_LOST, 1, 1, 0, "clusterB", "peer gateway restarted");
	expect_event(h, LDS_EV_ERROR, 6, 6, -EHOSTUNREACH, "", "no link to clusterC");
	expect_event(h, LDS_EV_ACKED, 2, 2, 0, "", "");
	expect_event(h, LDS_EV_ACKED, 3, 4, 0, "", "");
	expect_event(h, LDS_EV_ERROR, 0, 0, -EIO, "", "daemon draining");
	expect_event(h, LDS_EV_ACKED, 5, 5, 0, "", "");
	ck_assert_int_eq(lds_next_event(h, &ev), 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	/* Taking the LOST event told the daemon the application knows. */
	ck_assert_uint_eq(f.resumes, 1);
	ck_assert_str_eq(f.resume_peer, "clusterB");
	ck_assert_uint_eq(f.resume_count, 1);
}
END_TEST

/* Ranges settled one at a time, out of order, acks and losses mixed. */
static const struct {
	uint64_t first, last, settled_after;
} settle_steps[] = {
	{ 10, 12, 0 }, { 1, 1, 1 }, { 15, 20, 1 }, { 3, 4, 1 }, { 2, 2, 4 }, { 13, 14, 4 }, { 5, 9, 20 },
};
#define NSTEPS (sizeof(settle_steps) / sizeof(settle_steps[0]))

static void s_settle_order(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_read_sends(f, 20) < 0)
		return;
	for (size_t i = 0; i < NSTEPS; i++) {
		uint8_t type = i % 2 ? CP_LOST : CP_ACKED;

		if (fk_wait_go(f) < 0 ||
		    fk_range(f, type, settle_steps[i].first, settle_steps[i].last, "clusterB", "") < 0)
			return;
	}
	fk_bye(f);
}

START_TEST(t_settle_order)
{
	struct fake f = { 0 };
	uint64_t acked = 0, lost = 0;
	struct lds *h;

	fake_start(&f, s_settle_order);
	h = open_ok(&f, "cm");
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(lds_send(h, "clusterB/x", "", 0, NULL), 0);
	for (size_t i = 0; i < NSTEPS; i++) {
		uint64_t n = settle_steps[i].last - settle_steps[i].first + 1;

		if (i % 2)
			lost += n;
		else
			acked += n;
		fake_go(&f);
		wait_stats(h, acked, lost, 0);
		ck_assert_uint_eq(lds_settled_upto(h), settle_steps[i].settled_after);
	}
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* ---- TAKEN: what the application took --------------------------------- */

/* Reads TAKEN frames, after one that counted last, until one counts
 * want; counts never go back. */
static int fk_read_taken(struct fake *f, uint64_t last, uint64_t want)
{
	while (last < want) {
		struct fk_frame fr;
		int rc = fk_read_frame(f, &fr, CP_TAKEN);

		free(fr.body);
		if (rc < 0)
			return -1;
		if (fr.m.count <= last || fr.m.count > want)
			return FK_ERR(f, "TAKEN counts what was not taken, or goes back");
		last = fr.m.count;
	}
	return 0;
}

/* Three messages; TAKEN must reach 3 once the application took them,
 * then a copy of message 2 counts as taken at once. */
static void s_taken(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0)
		return;
	for (uint64_t id = 1; id <= 3; id++)
		if (fk_deliver(f, "clusterB/src", id, "m", 1) < 0)
			return;
	if (fk_read_taken(f, 0, 3) < 0 || fk_deliver(f, "clusterB/src", 2, "m", 1) < 0 || fk_read_taken(f, 3, 4) < 0)
		return;
	if (fk_deliver(f, "clusterB/src", 4, "four", 4) == 0 && fk_read_taken(f, 4, 5) == 0)
		fk_bye(f);
}

START_TEST(t_taken)
{
	struct fake f = { .takes = 1 };
	struct lds_stats st;
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_taken);
	h = open_ok(&f, "cm");
	for (uint64_t id = 1; id <= 3; id++) {
		ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
		ck_assert_uint_eq(m.id, id);
	}
	/* The copy of 2 is dropped; 4 comes after the daemon saw TAKEN 4. */
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 4);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.duplicates, 1);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

Suite *make_lds_send_suite(void)
{
	Suite *s = suite_create("lds_send");
	TCase *api = tcase_create("api");

	tcase_set_timeout(api, 60);
	tcase_add_test(api, t_send_bytes);
	tcase_add_test(api, t_big_no_deadlock);
	tcase_add_test(api, t_send_nb);
	tcase_add_test(api, t_recv_timeouts);
	tcase_add_test(api, t_zc_socket);
	tcase_add_test(api, t_outcomes);
	tcase_add_test(api, t_settle_order);
	tcase_add_test(api, t_taken);
	suite_add_tcase(s, api);
	return s;
}
