/*
 * check_transport.c - the transport registry and transport-owned settings:
 * an ops table of another size is refused, a sample transport (tp_mem.c)
 * is one registration away from ldsd.conf, its settings are parsed,
 * checked and printed by the config code, another transport's setting or a
 * transport not built in is refused with FILE:LINE: SETTING, and so is a
 * block_size whose DATA frame a message transport cannot carry.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "ldsd/config.h"
#include "suites.h"
#include "tp_mem.h"
#include "transports/tcp_conf.h"
#include "transports/tcp_zc.h"

static char tdir[PATH_MAX];
static char tpath[PATH_MAX + 16];
static char terr[1024];
static struct config tcfg;

/* name in the test's directory holds text, with that mode. */
static void put(const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tdir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(close(fd), 0);
}

static void tp_setup(void)
{
	snprintf(tdir, sizeof(tdir), "%s/lds-tp-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(tdir));
	snprintf(tpath, sizeof(tpath), "%s/t.conf", tdir);
	put("k.key", "0123456789abcdef0123456789abcdef\n", 0600);
	ck_assert_int_eq(transport_register(&mem_transport_ops), 0);
}

static void tp_teardown(void)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/k.key", tdir);
	unlink(path);
	unlink(tpath);
	rmdir(tdir);
}

/* A file whose line 5 is line, inside the one peer's group. */
static int load_peer(const char *line)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "cluster = \"A\";\n"
		 "peers = (\n"
		 "  { cluster = \"B\"; address = \"127.0.0.1\"; port = 7000; role = \"connect\";\n"
		 "    key_file = \"k.key\";\n"
		 "    %s\n"
		 "  }\n"
		 ");\n", line);
	put("t.conf", text, 0644);
	return config_load(tpath, &tcfg, terr, sizeof(terr));
}

/* Refused at line 5, naming setting, with msg. */
static void refused(const char *line, const char *setting, const char *msg)
{
	char want[256];

	ck_assert_msg(load_peer(line) < 0, "accepted: %s", line);
	snprintf(want, sizeof(want), "t.conf:5: peers.[0].%s: %s", setting, msg);
	ck_assert_msg(strstr(terr, want) != NULL, "\"%s\" lacks \"%s\"", terr, want);
}

static char *printed(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	config_print(&tcfg, f);
	fclose(f);
	return buf;
}

/* The core drives only tables of its own interface's size, complete. */
START_TEST(test_size_refused)
{
	struct lds_transport_ops o = mem_transport_ops;

	o.name = "mem2";
	o.size = LDS_TP_OPS_SIZE - sizeof(void *);
	ck_assert_int_eq(transport_register(&o), -EINVAL);
	o.size = LDS_TP_OPS_SIZE + sizeof(void *);
	ck_assert_int_eq(transport_register(&o), -EINVAL);
	o.size = 0;
	ck_assert_int_eq(transport_register(&o), -EINVAL);
	o.size = LDS_TP_OPS_SIZE;
	o.send = NULL;
	ck_assert_int_eq(transport_register(&o), -EINVAL);
	o.send = mem_transport_ops.send;
	/* One mode, with its ops: messages need send_msg and a size. */
	o.caps.flags |= LDS_TP_CAP_MESSAGE;
	ck_assert_int_eq(transport_register(&o), -EINVAL);
	o.caps.flags &= ~LDS_TP_CAP_STREAM;
	ck_assert_int_eq(transport_register(&o), -EINVAL);
	o.caps.flags = mem_transport_ops.caps.flags | LDS_TP_CAP_REGMEM;
	ck_assert_int_eq(transport_register(&o), -EINVAL);
	o.caps.flags = mem_transport_ops.caps.flags;
	o.conf_size = LDS_TP_CONF_MAX + 1;
	ck_assert_int_eq(transport_register(&o), -EINVAL);
	ck_assert_ptr_null(transport_find("mem2"));
	ck_assert_int_eq(transport_register(&mem_transport_ops), -EEXIST);
	o.conf_size = mem_transport_ops.conf_size;
	ck_assert_int_eq(transport_register(&o), 0);
	ck_assert_ptr_eq(transport_find("mem2"), &o);
}
END_TEST

/* Names come from the table, the built-in ones first (tcp, then those
 * this build has: rdma where rdma-core is installed). */
START_TEST(test_registry)
{
	size_t n = 0;
	const char *names = transport_names();

	while (transport_at(n + 1) != NULL)
		n++;
	ck_assert_str_eq(transport_at(0)->name, "tcp");
	ck_assert_ptr_eq(transport_at(n), &mem_transport_ops);
	ck_assert_msg(strncmp(names, "tcp, ", 5) == 0 && strcmp(names + strlen(names) - 5, ", mem") == 0, "%s", names);
	ck_assert_ptr_eq(transport_find("mem"), &mem_transport_ops);
	ck_assert_ptr_null(transport_find("quic"));
	ck_assert_str_eq(transport_at(1)->name, "udp");
	ck_assert(transport_find("udp")->caps.flags & LDS_TP_CAP_MESSAGE);
	ck_assert(transport_find("tcp")->caps.flags & LDS_TP_CAP_STREAM);
	ck_assert(!(transport_find("tcp")->caps.flags & LDS_TP_CAP_INTEGRITY));
}
END_TEST

/* A registered transport's settings: defaults, parsed, printed back, and
 * nothing of TCP's. */
START_TEST(test_mem_settings)
{
	char *out;
	size_t window;

	ck_assert_msg(load_peer("transport = \"mem\";") == 0, "%s", terr);
	memcpy(&window, tcfg.peers[0].tp_conf, sizeof(window));
	ck_assert_uint_eq(window, 64u << 10);
	ck_assert_msg(load_peer("transport = \"mem\"; mem_window = \"128k\";") == 0, "%s", terr);
	memcpy(&window, tcfg.peers[0].tp_conf, sizeof(window));
	ck_assert_uint_eq(window, 128u << 10);
	out = printed();
	ck_assert_msg(strstr(out, "transport = \"mem\";") && strstr(out, "mem_window = 131072;"), "%s", out);
	ck_assert_msg(strstr(out, "congestion") == NULL && strstr(out, "tcp_buffer") == NULL, "%s", out);
	free(out);
}
END_TEST

/* Every refusal names the file, line and setting. */
START_TEST(test_refusals)
{
	char avail[300];

	snprintf(avail, sizeof(avail), "transport \"quic\" is not built in; available: %s", transport_names());
	refused("transport = \"quic\";", "transport", avail);
	refused("transport = \"mem\"; congestion = \"reno\";", "congestion",
		"a setting of transport \"tcp\", not of this peer's transport \"mem\"");
	refused("transport = \"mem\"; tcp_buffer = 0;", "tcp_buffer",
		"a setting of transport \"tcp\", not of this peer's transport \"mem\"");
	refused("mem_window = \"128k\";", "mem_window",
		"a setting of transport \"mem\", not of this peer's transport \"tcp\"");
	refused("transport = \"mem\"; mem_windwo = 4096;", "mem_windwo", "unknown setting; did you mean \"mem_window\"?");
	refused("transport = \"mem\"; mem_window = 100;", "mem_window", "too small: must be 1024..67108864 (got 100)");
	refused("transport = \"mem\"; mem_window = \"1k5\";", "mem_window", "\"1k5\" is not a byte count");
	/* The transport's own check, blaming its setting. */
	refused("transport = \"mem\"; mem_window = 1500;", "mem_window", "must be a multiple of 1024 (got 1500)");
}
END_TEST

static int nomsg_send(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx)
{
	(void)c, (void)iov, (void)iovcnt, (void)desc, (void)ctx;
	return -ENOTCONN;
}

static int nomsg_recv(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	(void)c, (void)m;
	return -ENOTCONN;
}

static void nomsg_done(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	(void)c, (void)m;
}

/* Links need reliable, ordered delivery, of bytes or of messages: a kind
 * without it (datagrams) is refused at --check time, not at start. */
START_TEST(test_caps_refused)
{
	struct lds_transport_ops o = mem_transport_ops;

	o.name = "memdgram";
	o.caps.flags = LDS_TP_CAP_MESSAGE | LDS_TP_CAP_RELIABLE;
	o.caps.max_msg = 9000;
	o.send = NULL, o.push = NULL, o.recv = NULL, o.pending = NULL;
	o.send_msg = nomsg_send, o.recv_msg = nomsg_recv, o.msg_done = nomsg_done;
	ck_assert_int_eq(transport_register(&o), 0);
	ck_assert(!config_transport_usable(&o));
	ck_assert(config_transport_usable(&mem_transport_ops));
	refused("transport = \"memdgram\";", "transport",
		"transport \"memdgram\" cannot carry links: they need reliable, ordered delivery (a byte stream or "
		"messages)");
}
END_TEST

/* A message transport carries whole frames: a block whose DATA frame
 * (sealed: with its tag) exceeds max_msg is refused, naming block_size
 * and both sizes; one byte less fits. */
START_TEST(test_max_msg_refused)
{
	const size_t max = memmsg_transport_ops.caps.max_msg;
	char line[128], msg[256];

	ck_assert_int_eq(transport_register(&memmsg_transport_ops), 0);
	snprintf(line, sizeof(line), "transport = \"memmsg\"; block_size = %zu;", max);
	snprintf(msg, sizeof(msg), "a block of %zu bytes makes DATA frames of %zu bytes sealed, larger than transport "
		 "\"memmsg\" carries in one message (max_msg %zu); make block_size at most %zu", max,
		 max + WIRE_DATA_HDR_LEN + WIRE_TAG_LEN, max, max - WIRE_DATA_HDR_LEN - WIRE_TAG_LEN);
	refused(line, "block_size", msg);
	snprintf(line, sizeof(line), "transport = \"memmsg\"; encryption = \"none\"; block_size = %zu;",
		 max - WIRE_DATA_HDR_LEN + 1);
	snprintf(msg, sizeof(msg), "a block of %zu bytes makes DATA frames of %zu bytes, larger than transport "
		 "\"memmsg\" carries in one message (max_msg %zu); make block_size at most %zu",
		 max - WIRE_DATA_HDR_LEN + 1, max + 1, max, max - WIRE_DATA_HDR_LEN);
	refused(line, "block_size", msg);
	snprintf(line, sizeof(line), "transport = \"memmsg\"; block_size = %zu;", max - WIRE_DATA_HDR_LEN - WIRE_TAG_LEN);
	ck_assert_msg(load_peer(line) == 0, "%s", terr);
	snprintf(line, sizeof(line), "transport = \"memmsg\"; encryption = \"none\"; block_size = %zu;",
		 max - WIRE_DATA_HDR_LEN);
	ck_assert_msg(load_peer(line) == 0, "%s", terr);
	/* Byte streams have no such bound. */
	ck_assert_msg(load_peer("transport = \"mem\"; block_size = \"16M\"; send_memory = \"64M\"; "
				"recv_memory = \"64M\";") == 0, "%s", terr);
}
END_TEST

/* A transport writes its own status keys: TCP its congestion control and
 * buffer, the sample its window. */
START_TEST(test_status_keys)
{
	const struct lds_transport_ops *tcp = transport_find("tcp");
	char *buf = NULL, words[64];
	size_t len = 0;
	FILE *f;

	ck_assert_msg(load_peer("congestion = \"reno\"; tcp_buffer = 65536;") == 0, "%s", terr);
	ck_assert_str_eq(TCP_CONF(&tcfg.peers[0])->congestion, "reno");
	f = open_memstream(&buf, &len);
	tcp->status(tcfg.peers[0].tp_conf, f);
	mem_transport_ops.status(tcfg.peers[0].tp_conf, f);
	fclose(f);
	ck_assert_str_eq(tcp->describe(tcfg.peers[0].tp_conf, words, sizeof(words)), "reno");
	ck_assert_msg(strncmp(buf, ",\"congestion\":\"reno\",\"tcp_buffer\":65536,\"zerocopy\":false,"
			   "\"zerocopy_min\":16384,\"mem_window\":", 91) == 0, "%s", buf);
	free(buf);
}
END_TEST

/* A program without a file sets a transport's setting by name, with the
 * same rules and checks. */
START_TEST(test_peer_set)
{
	struct config_peer p;

	config_peer_defaults(&p);
	ck_assert_int_eq(config_peer_set(&p, "congestion", "reno", terr, sizeof(terr)), 0);
	ck_assert_str_eq(TCP_CONF(&p)->congestion, "reno");
	ck_assert_int_eq(config_peer_set(&p, "tcp_buffer", "64k", terr, sizeof(terr)), 0);
	ck_assert_uint_eq(TCP_CONF(&p)->buffer, 65536);
	ck_assert_int_eq(config_peer_set(&p, "tcp_buffer", "2G", terr, sizeof(terr)), -1);
	ck_assert_msg(strncmp(terr, "tcp_buffer: too large: must be 0..", 34) == 0, "%s", terr);
	ck_assert_int_eq(config_peer_set(&p, "congestion", "nosuchcc", terr, sizeof(terr)), -1);
	ck_assert_msg(strstr(terr, "congestion: \"nosuchcc\" is not available in this kernel") == terr, "%s", terr);
	ck_assert_str_eq(TCP_CONF(&p)->congestion, "reno");
	ck_assert_int_eq(config_peer_set(&p, "streams", "4", terr, sizeof(terr)), -1);
	ck_assert_str_eq(terr, "streams: not a setting of transport \"tcp\"");
	ck_assert_int_eq(config_peer_set(&p, "mem_window", "4096", terr, sizeof(terr)), -1);
	ck_assert_str_eq(terr, "mem_window: not a setting of transport \"tcp\"");
	ck_assert_uint_eq(TCP_CONF(&p)->buffer, 65536);
	ck_assert_int_eq(config_peer_set(&p, "tcp_buffer", "0", terr, sizeof(terr)), 0);
	ck_assert_uint_eq(TCP_CONF(&p)->buffer, 0);
}
END_TEST

/* MSG_ZEROCOPY over a loopback TCP pair (transports/tcp_zc.c): large
 * sends go zero-copy and are held, small ones are copied and held only
 * behind a held one, every completion is read (on loopback the kernel
 * copies each: counted), and held sends come back oldest first with the
 * bytes each took; the receiver gets every byte. */
START_TEST(test_tcp_zc)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), w = socket(AF_INET, SOCK_STREAM, 0), r;
	static uint8_t buf[65536], sink[1 << 20];
	size_t want[16], nw = 0, got = 0, total = 0;
	struct tcp_zc z = { 0 };
	int held;

	ck_assert_int_eq(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&a, &al), 0);
	ck_assert_int_eq(connect(w, (struct sockaddr *)&a, sizeof(a)), 0);
	r = accept(l, NULL, NULL);
	ck_assert_int_ge(r, 0);
	ck_assert_int_eq(tcp_zc_enable(&z, w, 16384), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7);
	/* A small send with nothing held: copied, not held. */
	ck_assert_int_eq(tcp_zc_sendmsg(&z, w, &(struct msghdr){ .msg_iov = &(struct iovec){ buf, 100 }, .msg_iovlen = 1 },
				       0, &held), 100);
	ck_assert_int_eq(held, 0);
	total += 100;
	for (int k = 0; k < 8; k++) {
		size_t len = k % 2 ? 1000 : sizeof(buf);
		ssize_t n = tcp_zc_sendmsg(&z, w, &(struct msghdr){ .msg_iov = &(struct iovec){ buf, len }, .msg_iovlen = 1 },
					   0, &held);

		ck_assert_int_eq(n, (ssize_t)len);
		ck_assert_int_eq(held, 1);
		want[nw++] = len;
		total += len;
	}
	ck_assert_uint_eq(z.sends, 4);
	ck_assert_uint_eq(z.n, 8);
	/* On loopback a send completes once the receiver has it: read it all,
	 * then wait (2 s at most) for every completion. */
	while (got < total) {
		ssize_t n = recv(r, sink, sizeof(sink), 0);

		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	for (int t = 0; t < 200 && z.completed < z.sends; t++) {
		poll(&(struct pollfd){ .fd = w, .events = 0 }, 1, 10);
		tcp_zc_drain(&z, w);
	}
	ck_assert_uint_eq(z.completed, 4);
	ck_assert_uint_eq(z.copied, 4);
	for (size_t i = 0; i < nw; i++)
		ck_assert_uint_eq(tcp_zc_release(&z), want[i]);
	ck_assert_uint_eq(tcp_zc_release(&z), 0);
	ck_assert_uint_eq(z.n, 0);
	tcp_zc_free(&z);
	close(w);
	close(r);
	close(l);
}
END_TEST

Suite *make_transport_suite(void)
{
	Suite *s = suite_create("transport");
	TCase *tc = tcase_create("registry");

	tcase_add_checked_fixture(tc, tp_setup, tp_teardown);
	tcase_add_test(tc, test_size_refused);
	tcase_add_test(tc, test_registry);
	tcase_add_test(tc, test_mem_settings);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_caps_refused);
	tcase_add_test(tc, test_max_msg_refused);
	tcase_add_test(tc, test_status_keys);
	tcase_add_test(tc, test_peer_set);
	tcase_add_test(tc, test_tcp_zc);
	suite_add_tcase(s, tc);
	return s;
}
