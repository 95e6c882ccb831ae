/*
 * check_lds.c - liblds (libclient/lds.c, ldsio.c) against a fake ldsd
 * (fakeldsd.h): opening and closing a handle, the key check of TCP
 * clients, a daemon that sends what no daemon may.  check_lds_send.c and
 * check_lds_reconnect.c hold the rest of the API's tests.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fakeldsd.h"
#include "suites.h"

/* ---- opening and closing ---------------------------------------------- */

static void s_welcome_bye(struct fake *f)
{
	if (fk_welcome(f, "clusterA") == 0)
		fk_bye(f);
}

START_TEST(t_open_close)
{
	struct fake f = { .max_msg = 1u << 20 };
	struct lds *h;

	fake_start(&f, s_welcome_bye);
	h = open_ok(&f, "cm");
	ck_assert_str_eq(lds_name(h), "clusterA/cm");
	ck_assert_str_eq(lds_cluster(h), "clusterA");
	ck_assert_uint_eq(lds_max_msg(h), 1u << 20);
	ck_assert_int_ge(lds_fd(h), 0);
	ck_assert_uint_eq(lds_settled_upto(h), 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	ck_assert_str_eq(f.hello_name, "cm");
}
END_TEST

START_TEST(t_open_tcp_daemon_picks_name)
{
	struct fake f = { .tcp = 1 };
	struct lds *h;

	fake_start(&f, s_welcome_bye);
	h = open_ok(&f, NULL);
	ck_assert_str_eq(lds_name(h), "clusterA/auto-1");
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	ck_assert_str_eq(f.hello_name, "");
}
END_TEST

/* lds_peer: the question goes out once no message is half written; an
 * answer about another cluster and a delivery in between are not the
 * answer, and the delivery is still received. */
static void s_peer(struct fake *f)
{
	struct cp_msg other = { .type = CP_PEER, .state = CP_PEER_UP }, ans = { .type = CP_PEER, .state = CP_PEER_DOWN,
										 .seconds = 42 };
	struct fk_frame fr;

	if (fk_welcome(f, "clusterA") < 0 || fk_read_frame(f, &fr, CP_PEERQ) < 0)
		return;
	free(fr.body);
	if (strcmp(fr.m.name, "clusterB") != 0) {
		FK_ERR(f, "PEERQ for another cluster");
		return;
	}
	strcpy(other.name, "clusterC");
	strcpy(ans.name, "clusterB");
	strcpy(ans.text, "auth-sent: refused: authentication failed");
	if (fk_send(f, &other) == 0 && fk_deliver(f, "clusterB/x", 1, "hi", 2) == 0 && fk_send(f, &ans) == 0)
		fk_bye(f);
}

START_TEST(t_peer)
{
	struct fake f = { .max_msg = 1u << 20 };
	struct lds_peer p;
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_peer);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_peer(h, "not/a cluster", &p, WAIT_MS), -EINVAL);
	ck_assert_int_eq(lds_peer(h, "clusterB", &p, WAIT_MS), 0);
	ck_assert_int_eq(p.state, LDS_PEER_DOWN);
	ck_assert_uint_eq(p.down_s, 42);
	ck_assert_str_eq(p.why, "auth-sent: refused: authentication failed");
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.len, 2);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* The client goes away: the end of its stream, within IO_TIMEOUT_S. */
static void s_eof(struct fake *f)
{
	if (fk_accept(f) == 0)
		fk_eof(f);
}

/* ldsd refuses the key: the client's PROOF is answered with EACCES. */
static void s_refuse_key(struct fake *f)
{
	struct cp_msg ch = { 0 };
	struct fk_frame fr = { 0 };

	if (fk_accept(f) < 0 || fk_challenge(f, &ch) < 0)
		return;
	if (fk_read_frame(f, &fr, CP_PROOF) == 0)
		fk_error(f, 0, EACCES, "wrong key");
	free(fr.body);
}

START_TEST(t_open_tcp_key)
{
	struct fake f = { .tcp = 1, .tcp_raw = 1 };
	int err = 0;

	/* No LDS_KEY_FILE: refused before a byte is read. */
	fake_start(&f, s_eof);
	ck_assert_int_eq(unsetenv("LDS_KEY_FILE"), 0);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -ENOKEY);
	ck_assert_ptr_nonnull(strstr(lds_strerror(err), "LDS_KEY_FILE"));
	fake_stop(&f);

	/* A key file others may read is no key. */
	f = (struct fake){ .tcp = 1, .tcp_raw = 1 };
	fake_start(&f, s_eof);
	ck_assert_int_eq(chmod(f.key_file, 0644), 0);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -ENOKEY);
	fake_stop(&f);

	/* ldsd refuses the key. */
	f = (struct fake){ .tcp = 1, .tcp_raw = 1 };
	fake_start(&f, s_refuse_key);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EKEYREJECTED);
	fake_stop(&f);

	/* Something that is not ldsd, without the key: its PROOF is refused
	 * and nothing - no HELLO, no message - goes to it. */
	f = (struct fake){ .tcp = 1, .impostor = 1 };
	fake_start(&f, s_eof);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EKEYREJECTED);
	fake_stop(&f);
}
END_TEST

START_TEST(t_open_socket_from_env)
{
	struct fake f = { 0 };
	struct lds *h;

	fake_start(&f, s_welcome_bye);
	ck_assert_int_eq(setenv(LDS_SOCKET_ENV, f.path, 1), 0);
	h = lds_open(NULL, "cm", WAIT_MS, NULL);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	ck_assert_str_eq(lds_socket_path(NULL), f.path);
	ck_assert_str_eq(lds_socket_path(""), f.path);
	ck_assert_str_eq(lds_socket_path("/x/given.sock"), "/x/given.sock");
	ck_assert_int_eq(setenv(LDS_SOCKET_ENV, "", 1), 0);
	ck_assert_str_eq(lds_socket_path(NULL), LDS_DEFAULT_SOCKET);
	ck_assert_int_eq(unsetenv(LDS_SOCKET_ENV), 0);
	ck_assert_str_eq(lds_socket_path(NULL), LDS_DEFAULT_SOCKET);
}
END_TEST

static void s_name_taken(struct fake *f)
{
	struct fk_frame fr = { 0 };

	if (fk_accept(f) == 0 && fk_read_frame(f, &fr, CP_HELLO) == 0)
		fk_error(f, 0, EADDRINUSE, "endpoint clusterA/cm is taken");
	free(fr.body);
}

START_TEST(t_open_name_taken)
{
	struct fake f = { 0 };
	int err = 0;

	fake_start(&f, s_name_taken);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EADDRINUSE);
	fake_stop(&f);
}
END_TEST

static void s_silent(struct fake *f)
{
	struct fk_frame fr = { 0 };

	if (fk_accept(f) == 0 && fk_read_frame(f, &fr, CP_HELLO) == 0)
		fk_wait_go(f);
	free(fr.body);
}

START_TEST(t_open_errors)
{
	struct fake f = { 0 };
	int64_t t0;
	int err = 0;

	fake_start(&f, s_silent);
	t0 = now_ms();
	ck_assert_ptr_null(lds_open(f.path, "cm", 200, &err));
	ck_assert_int_eq(err, -ETIMEDOUT);
	ck_assert_int_ge(now_ms() - t0, 190);
	fake_go(&f);
	fake_stop(&f);

	ck_assert_ptr_null(lds_open("/nonexistent/ldsd.sock", "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -ENOENT);
	ck_assert_ptr_null(lds_open("/tmp/ldsd.sock", "two words", WAIT_MS, &err));
	ck_assert_int_eq(err, -EINVAL);
	/* The daemon adds the cluster; a name must not carry one. */
	ck_assert_ptr_null(lds_open("/tmp/ldsd.sock", "clusterA/cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_ptr_null(lds_open("tcp:nonsense", "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EINVAL);
}
END_TEST

/* ---- a daemon that misbehaves ----------------------------------------- */

static void s_oversize(struct fake *f)
{
	uint8_t hb[CP_HDR_LEN];

	cp_hdr_write(hb, CP_DELIVER, CP_MAX_BODY);
	hb[3]++; /* CP_MAX_BODY + 1 */
	if (fk_welcome(f, "clusterA") == 0 && fk_write_all(f, hb, sizeof(hb)) == 0)
		fk_wait_go(f);
}

/* Only a DELIVER may be larger than liblds's input buffer. */
static void s_big_ctl(struct fake *f)
{
	uint8_t hb[CP_HDR_LEN];

	cp_hdr_write(hb, CP_ACKED, 100000);
	if (fk_welcome(f, "clusterA") == 0 && fk_write_all(f, hb, sizeof(hb)) == 0)
		fk_wait_go(f);
}

START_TEST(t_big_control_frame)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_big_ctl);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), -EPROTO);
	fake_go(&f);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

START_TEST(t_oversize_frame)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_oversize);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), -EPROTO);
	ck_assert_int_eq(lds_recv(h, &m, 0), -EPROTO);
	ck_assert_int_eq(lds_send(h, "x", "a", 1, NULL), -EPROTO);
	fake_go(&f);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

START_TEST(t_strerror)
{
	ck_assert_str_ne(lds_strerror(-EADDRINUSE), strerror(EADDRINUSE));
	ck_assert_ptr_nonnull(strstr(lds_strerror(-ECONNRESET), "lds_reconnect"));
	ck_assert_str_eq(lds_strerror(-ENOENT), strerror(ENOENT));
	ck_assert_str_eq(lds_strerror(-EHOSTUNREACH), lds_strerror(EHOSTUNREACH));
}
END_TEST

Suite *make_lds_suite(void)
{
	Suite *s = suite_create("lds");
	TCase *api = tcase_create("api");

	tcase_set_timeout(api, 60);
	tcase_add_test(api, t_open_close);
	tcase_add_test(api, t_peer);
	tcase_add_test(api, t_open_tcp_daemon_picks_name);
	tcase_add_test(api, t_open_tcp_key);
	tcase_add_test(api, t_open_socket_from_env);
	tcase_add_test(api, t_open_name_taken);
	tcase_add_test(api, t_open_errors);
	tcase_add_test(api, t_oversize_frame);
	tcase_add_test(api, t_big_control_frame);
	tcase_add_test(api, t_strerror);
	suite_add_tcase(s, api);
	return s;
}
