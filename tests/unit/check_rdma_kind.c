/*
 * check_rdma_kind.c - the rdma kind as the core sees it (transports/rdma):
 * registered with honest capabilities, its settings parsed, checked and
 * printed by the config code; where no RDMA device exists (this project's
 * machines), init says -ENODEV with fork protection already on, probe
 * says why in the words ldsd logs, and a daemon whose peers use tcp and
 * rdma gets its tcp link only.  Built without rdma-core, the suite says
 * it is skipped.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"

#ifdef LDS_HAVE_RDMA
#include <infiniband/verbs.h>

#include "ldsd/config.h"
#include "ldsd/daemon.h"
#include "ldsd/evloop.h"
#include "ldsd/link.h"
#include "ldsd/tphost.h"
#include "transports/rdma/rdx_conf.h"
#include "transports/rdma/rdx_relay.h"

#define NODEV "no RDMA device found (ibv_get_device_list returned none); use transport tcp"

static char dir[PATH_MAX], path[PATH_MAX + 16], err[1024];
static struct config cfg;

static void setup(void)
{
	char key[PATH_MAX + 16];
	int fd;

	snprintf(dir, sizeof(dir), "%s/lds-rdma-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.conf", dir);
	snprintf(key, sizeof(key), "%s/k.key", dir);
	fd = open(key, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "0123456789abcdef0123456789abcdef\n", 33), 33);
	close(fd);
}

static void teardown(void)
{
	char key[PATH_MAX + 16];

	snprintf(key, sizeof(key), "%s/k.key", dir);
	unlink(key);
	unlink(path);
	rmdir(dir);
}

/* A file with a tcp peer B and, at line 5, a peer C with these settings. */
static int load(const char *rdma_line)
{
	FILE *f = fopen(path, "we");

	ck_assert_ptr_nonnull(f);
	fprintf(f, "cluster = \"A\";\n"
		   "peers = (\n"
		   "  { cluster = \"B\"; address = \"127.0.0.1\"; port = 7000; role = \"connect\"; key_file = \"k.key\"; },\n"
		   "  { cluster = \"C\"; address = \"127.0.0.1\"; port = 7001; role = \"connect\"; key_file = \"k.key\";\n"
		   "    transport = \"rdma\"; %s }\n"
		   ");\n", rdma_line);
	fclose(f);
	return config_load(path, &cfg, err, sizeof(err));
}

static int no_device(void)
{
	char why[256];

	return transport_find("rdma")->probe(why, sizeof(why)) == -ENODEV;
}

/* A message kind, ordered and reliable, wanting registered memory, and
 * not claiming fork safety (its buffers are pinned). */
START_TEST(test_caps)
{
	const struct lds_transport_ops *o = transport_find("rdma");

	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(o->caps.flags, LDS_TP_CAP_MESSAGE | LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE | LDS_TP_CAP_REGMEM);
	ck_assert_uint_ge(o->caps.max_msg, 16u << 20);
	ck_assert(config_transport_usable(o));
	ck_assert_ptr_nonnull(o->probe);
}
END_TEST

/* Settings: defaults, values read and printed back, ranges and the
 * pinned-memory check refused with file:line and setting. */
START_TEST(test_settings)
{
	const struct rdx_conf *rc;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_msg(load("") == 0, "%s", err);
	rc = (const struct rdx_conf *)(const void *)cfg.peers[1].tp_conf;
	ck_assert_uint_eq(rc->buffer_size, RDMA_DEF_BUFFER_SIZE);
	ck_assert_uint_eq(rc->buffers, RDMA_DEF_BUFFERS);
	ck_assert_uint_eq(rc->inline_max, RDMA_DEF_INLINE);
	ck_assert_uint_eq(rc->write_ring, RDMA_DEF_WRITE_RING);
	ck_assert_uint_eq(rc->write_threshold, RDMA_DEF_WRITE_THRESHOLD);
	ck_assert_msg(load("rdma_buffer_size = \"8k\"; rdma_buffers = 100; rdma_inline = 0; rdma_write_ring = \"1M\"; "
			   "rdma_write_threshold = \"8k\";") == 0, "%s", err);
	ck_assert_uint_eq(rc->buffer_size, 8192);
	ck_assert_uint_eq(rc->buffers, 100);
	ck_assert_uint_eq(rc->inline_max, 0);
	ck_assert_uint_eq(rc->write_ring, 1u << 20);
	ck_assert_uint_eq(rc->write_threshold, 8192);
	f = open_memstream(&buf, &len);
	config_print(&cfg, f);
	fclose(f);
	ck_assert_msg(strstr(buf, "rdma_buffer_size = 8192;") && strstr(buf, "rdma_buffers = 100;") &&
		      strstr(buf, "rdma_inline = 0;") && strstr(buf, "rdma_write_ring = 1048576;") &&
		      strstr(buf, "rdma_write_threshold = 8192;"), "%s", buf);
	free(buf);
	ck_assert_msg(load("rdma_write_ring = 0;") == 0, "%s", err);   /* no writes to this side */
	ck_assert_uint_eq(rc->write_ring, 0);
	ck_assert_int_lt(load("rdma_write_ring = \"32k\";"), 0);
	ck_assert_msg(strstr(err, "t.conf:5: peers.[1].rdma_write_ring:") && strstr(err, "multiple of 4096"), "%s", err);
	ck_assert_int_lt(load("rdma_write_ring = 100000;"), 0);      /* not whole pages */
	ck_assert_msg(strstr(err, "t.conf:5: peers.[1].rdma_write_ring:"), "%s", err);
	ck_assert_int_lt(load("rdma_write_ring = \"32M\";"), 0);
	ck_assert_msg(strstr(err, "t.conf:5: peers.[1].rdma_write_ring:"), "%s", err);
	ck_assert_int_lt(load("rdma_write_threshold = 100;"), 0);
	ck_assert_msg(strstr(err, "t.conf:5: peers.[1].rdma_write_threshold:"), "%s", err);
	ck_assert_int_lt(load("rdma_buffers = 3;"), 0);
	ck_assert_msg(strstr(err, "t.conf:5: peers.[1].rdma_buffers:"), "%s", err);
	ck_assert_int_lt(load("rdma_buffer_size = 512;"), 0);
	ck_assert_msg(strstr(err, "t.conf:5: peers.[1].rdma_buffer_size:"), "%s", err);
	ck_assert_int_lt(load("rdma_inline = 4096;"), 0);
	ck_assert_msg(strstr(err, "t.conf:5: peers.[1].rdma_inline:"), "%s", err);
	ck_assert_int_lt(load("rdma_buffer_size = \"16M\"; rdma_buffers = 100;"), 0);
	ck_assert_msg(strstr(err, "t.conf:5: peers.[1].rdma_buffers:") && strstr(err, "more than 1 GiB"), "%s", err);
	ck_assert_int_lt(load("tcp_buffer = 65536;"), 0);
	ck_assert_msg(strstr(err, "t.conf:5: peers.[1].tcp_buffer:"), "%s", err);
}
END_TEST

/* Conns that carry relays (the client path) have no write ring, since
 * relays never write; the rest are the kind's defaults.  A kind without
 * the setting keeps its defaults. */
START_TEST(test_relay_conf)
{
	uint8_t conf[LDS_TP_CONF_MAX], def[LDS_TP_CONF_MAX] = { 0 };
	const struct rdx_conf *rc = rdx_relay_conf(transport_find("rdma"), conf);
	const struct lds_transport_ops *tcp = transport_find("tcp");

	ck_assert_ptr_eq(rc, (const void *)conf);
	ck_assert_uint_eq(rc->write_ring, 0);
	ck_assert_uint_eq(rc->buffers, RDMA_DEF_BUFFERS);
	ck_assert_uint_eq(rc->buffer_size, RDMA_DEF_BUFFER_SIZE);
	ck_assert_uint_eq(rc->write_threshold, RDMA_DEF_WRITE_THRESHOLD);
	if (tcp->conf_defaults)
		tcp->conf_defaults(def);
	ck_assert_int_eq(memcmp(rdx_relay_conf(tcp, conf), def, sizeof(def)), 0);
}
END_TEST

static void nop_connected(struct lds_tp_conn *c, int e, void *ud) { (void)c, (void)e, (void)ud; }

/* No device: -ENODEV and no instance, the reason in ldsd's words, and
 * ibv_fork_init already called (registered memory would be kept from a
 * forked child). */
START_TEST(test_nodev)
{
	const struct lds_transport_ops *o = transport_find("rdma");
	const struct lds_tp_upcalls up = { .connected = nop_connected };
	struct lds_transport *tp = NULL;
	struct lds_tp_host host;
	struct evloop *ev;
	char why[256];

	if (!no_device()) {
		fprintf(stderr, "rdma_kind: test_nodev: skipped: this machine has an RDMA device\n");
		return;
	}
	ev = evloop_new();
	ck_assert_ptr_nonnull(ev);
	tphost_init(&host, ev);
	ck_assert_int_eq(o->init(&tp, &host, &up), -ENODEV);
	ck_assert_ptr_null(tp);
	ck_assert_int_eq(o->probe(why, sizeof(why)), -ENODEV);
	ck_assert_str_eq(why, NODEV);
	ck_assert_int_ne(ibv_is_fork_initialized(), IBV_FORK_DISABLED);
	evloop_free(ev);
}
END_TEST

/* A daemon with a tcp peer and an rdma peer on a machine without a
 * device: the tcp peer's link, and no other; daemon_init succeeds. */
START_TEST(test_daemon_skips_peer)
{
	struct daemon d = { 0 };

	if (!no_device()) {
		fprintf(stderr, "rdma_kind: test_daemon_skips_peer: skipped: this machine has an RDMA device\n");
		return;
	}
	ck_assert_msg(load("") == 0, "%s", err);
	ck_assert_int_eq(daemon_init(&d, &cfg), 0);
	ck_assert_uint_eq(d.nlinks, 1);
	ck_assert_str_eq(link_name(d.links[0]), "B");
	ck_assert_uint_eq(d.ntransports, 1);
	daemon_fini(&d);
}
END_TEST

Suite *make_rdma_kind_suite(void)
{
	Suite *s = suite_create("rdma_kind");
	TCase *tc = tcase_create("kind");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_caps);
	tcase_add_test(tc, test_settings);
	tcase_add_test(tc, test_relay_conf);
	tcase_add_test(tc, test_nodev);
	tcase_add_test(tc, test_daemon_skips_peer);
	suite_add_tcase(s, tc);
	return s;
}
#else
Suite *make_rdma_kind_suite(void)
{
	fprintf(stderr, "rdma_kind: skipped: built without rdma-core (no rdma transport)\n");
	return suite_create("rdma_kind");
}
#endif
