/*
 * check_config.c - config_load(): defaults, every error naming file, line and
 * setting, key files, size suffixes, config_print() round trip.
 *
 * Each test runs in a fresh mkdtemp directory holding a valid key file
 * "k.key"; most files are made by conf() from one valid layout with one
 * setting replaced, so that the expected line of an error is known.
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "ldsd/config.h"
#include "suites.h"
#include "transports/tcp_conf.h"

#define KEY "0123456789abcdef0123456789abcdef"   /* 32 bytes */

static char dir[PATH_MAX];
static char conf_path[PATH_MAX + 16];
static char err[512];
static struct config cfg;

static void write_file(const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, mode), 0);
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "%s/lds-config-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(conf_path, sizeof(conf_path), "%s/t.conf", dir);
	write_file("k.key", KEY "\n", 0600);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void teardown(void)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int load(const char *text)
{
	write_file("t.conf", text, 0644);
	return config_load(conf_path, &cfg, err, sizeof(err));
}

static void expect_ok(const char *text)
{
	ck_assert_msg(load(text) == 0, "rejected: %s\n%s", err, text);
}

/* err is one line "DIR/t.conf:LINE: SETTING: ..." holding msg. */
static void expect_error(const char *text, int line, const char *setting, const char *msg)
{
	char want[256];

	ck_assert_msg(load(text) == -1, "accepted:\n%s", text);
	ck_assert_msg(strncmp(err, conf_path, strlen(conf_path)) == 0, "no file name in \"%s\"", err);
	snprintf(want, sizeof(want), "t.conf:%d: %s: ", line, setting);
	ck_assert_msg(strstr(err, want) != NULL, "\"%s\" lacks \"%s\"", err, want);
	ck_assert_msg(strstr(err, msg) != NULL, "\"%s\" lacks \"%s\"", err, msg);
	ck_assert_msg(strchr(err, '\n') == NULL, "\"%s\" is not one line", err);
}

/*
 * A valid file, line by line:
 *   1  root_line
 *   2  cluster = "clusterA";
 *   3  peers = ( {
 *   4    peer_line
 *   5    cluster = "clusterB";
 *   6    address = "192.0.2.10";
 *   7    port = 7100;
 *   8    role = "connect";
 *   9    key_file = "k.key";
 *  10  } );
 * A default line whose setting is named root_name or peer_name is left
 * blank, so root_line or peer_line replaces it and no line moves.
 */
enum { ROOT_LINE = 1, PEER_GROUP_LINE = 3, PEER_LINE = 4 };

static const char *conf(const char *root_name, const char *root_line, const char *peer_name, const char *peer_line)
{
	static const char *const root[][2] = { { "cluster", "cluster = \"clusterA\";" } };
	static const char *const peer[][2] = {
		{ "cluster", "cluster = \"clusterB\";" },
		{ "address", "address = \"192.0.2.10\";" },
		{ "port", "port = 7100;" },
		{ "role", "role = \"connect\";" },
		{ "key_file", "key_file = \"k.key\";" },
	};
	static char text[4096];
	size_t n = 0;

#define ADD(...) (n += (size_t)snprintf(text + n, sizeof(text) - n, __VA_ARGS__))
	ADD("%s\n", root_line ? root_line : "");
	for (size_t i = 0; i < sizeof(root) / sizeof(root[0]); i++)
		ADD("%s\n", root_name && strcmp(root_name, root[i][0]) == 0 ? "" : root[i][1]);
	ADD("peers = ( {\n  %s\n", peer_line ? peer_line : "");
	for (size_t i = 0; i < sizeof(peer) / sizeof(peer[0]); i++)
		ADD("  %s\n", peer_name && strcmp(peer_name, peer[i][0]) == 0 ? "" : peer[i][1]);
	ADD("} );\n");
#undef ADD
	ck_assert_uint_lt(n, sizeof(text));
	return text;
}

static const char *peer_conf(const char *name, const char *line)
{
	return conf(NULL, NULL, name, line);
}

static const char *root_conf(const char *name, const char *line)
{
	return conf(name, line, NULL, NULL);
}

/* ---- valid files ---------------------------------------------------------- */

START_TEST(test_defaults)
{
	const struct config_peer *p = &cfg.peers[0];

	expect_ok(conf(NULL, NULL, NULL, NULL));
	ck_assert_str_eq(cfg.file, conf_path);
	ck_assert_str_eq(cfg.cluster, "clusterA");
	ck_assert_str_eq(cfg.log_level, "info");
	ck_assert_int_eq(cfg.allow_faults, 0);
	ck_assert_double_eq(cfg.drain_timeout, 10.0);
	ck_assert_str_eq(cfg.client_socket, "/run/lds/ldsd.sock");
	ck_assert_str_eq(cfg.client_tcp, "");
	ck_assert_str_eq(cfg.control_socket, "/run/lds/ldsd.ctl");
	ck_assert_uint_eq(cfg.npeers, 1);
	ck_assert_str_eq(p->cluster, "clusterB");
	ck_assert_str_eq(p->address, "192.0.2.10");
	ck_assert_uint_eq(p->port, 7100);
	ck_assert_int_eq(p->role, CONFIG_ROLE_CONNECT);
	ck_assert_str_eq(p->transport, "tcp");
	ck_assert_uint_eq(p->streams, 4);
	ck_assert_uint_eq(p->block_size, 65536);
	ck_assert_uint_eq(p->send_memory, 128u << 20);
	ck_assert_uint_eq(p->recv_memory, 128u << 20);
	ck_assert_uint_eq(TCP_CONF(p)->buffer, 0);
	ck_assert_double_eq(p->inactivity_timeout, 30.0);
	ck_assert_double_eq(p->keepalive, 7.5);
	ck_assert_double_eq(p->reconnect_min, 0.05);
	ck_assert_double_eq(p->reconnect_max, 1.0);
	ck_assert_double_eq(p->connect_timeout, 10.0);
	ck_assert_uint_eq(p->key_len, strlen(KEY));
	ck_assert_mem_eq(p->key, KEY, strlen(KEY));
	ck_assert_int_eq(p->line, PEER_GROUP_LINE);
}
END_TEST

static const char full[] =
	"# every setting, none at its default\n"
	"cluster = \"site-1.a_b\";\n"
	"log_level = \"debug\";\n"
	"allow_faults = true;\n"
	"drain_timeout = 2.5;\n"
	"clients = {\n"
	"  socket = \"/tmp/x/a.sock\"; tcp = \"127.0.0.1:7001\"; tcp_key_file = \"k.key\"; rdma = \"10.2.0.1:7002\";\n"
	"  socket_owner = \"root\"; socket_group = \"root\"; socket_mode = \"0660\";\n"
	"};\n"
	"control_socket = \"/tmp/x/control\";\n"
	"peers = (\n"
	"  { cluster = \"B\"; address = \"0.0.0.0\"; port = 65535; role = \"listen\";\n"
	"    transport = \"tcp\"; streams = 64; block_size = 16777216;\n"
	"    send_memory = 67108864; recv_memory = \"1GiB\";\n"
	"    inactivity_timeout = 60; keepalive = 59.5; reconnect_min = 1;\n"
	"    reconnect_max = 1; connect_timeout = 0.25; key_file = \"k.key\"; },\n"
	"  { cluster = \"C\"; address = \"c.example\"; port = 1; role = \"connect\";\n"
	"    key_file = \"k.key\"; block_size = 512; send_memory = 2048; recv_memory = \"2k\";\n"
	"    streams = 1; transport = \"tcp\"; inactivity_timeout = 0.5; }\n"
	");\n";

START_TEST(test_full)
{
	const struct config_peer *b, *c;
	char key_path[PATH_MAX + 16], real[PATH_MAX];

	expect_ok(full);
	ck_assert_str_eq(cfg.cluster, "site-1.a_b");
	ck_assert_str_eq(cfg.log_level, "debug");
	ck_assert_int_eq(cfg.allow_faults, 1);
	ck_assert_double_eq(cfg.drain_timeout, 2.5);
	ck_assert_str_eq(cfg.client_socket, "/tmp/x/a.sock");
	ck_assert_str_eq(cfg.client_tcp, "127.0.0.1:7001");
	ck_assert_str_eq(cfg.client_rdma, "10.2.0.1:7002");
	ck_assert_int_eq(cfg.client_rdma_line, 7);
	ck_assert_uint_eq(cfg.clients.tcp_key_len, strlen(KEY));
	ck_assert_mem_eq(cfg.clients.tcp_key, KEY, strlen(KEY));
	ck_assert_int_eq(cfg.clients.tcp_key_file[0], '/');
	ck_assert_uint_eq(cfg.clients.socket_perm, 0660);
	ck_assert_int_eq((int)cfg.clients.socket_uid, 0);
	ck_assert_int_eq((int)cfg.clients.socket_gid, 0);
	ck_assert_str_eq(cfg.control_socket, "/tmp/x/control");
	ck_assert_uint_eq(cfg.npeers, 2);

	b = config_peer_find(&cfg, "B");
	c = config_peer_find(&cfg, "C");
	ck_assert_ptr_eq(b, &cfg.peers[0]);
	ck_assert_ptr_eq(c, &cfg.peers[1]);
	ck_assert_ptr_null(config_peer_find(&cfg, "D"));
	ck_assert_ptr_null(config_peer_find(&cfg, "site-1.a_b"));

	ck_assert_str_eq(b->address, "0.0.0.0");
	ck_assert_uint_eq(b->port, 65535);
	ck_assert_int_eq(b->role, CONFIG_ROLE_LISTEN);
	ck_assert_str_eq(b->transport, "tcp");
	ck_assert_uint_eq(b->streams, 64);
	ck_assert_uint_eq(b->block_size, 16u << 20);
	ck_assert_uint_eq(b->send_memory, 64u << 20);
	ck_assert_uint_eq(b->recv_memory, 1u << 30);
	ck_assert_double_eq(b->inactivity_timeout, 60.0);
	ck_assert_double_eq(b->keepalive, 59.5);
	ck_assert_double_eq(b->reconnect_min, 1.0);
	ck_assert_double_eq(b->reconnect_max, 1.0);
	ck_assert_double_eq(b->connect_timeout, 0.25);
	ck_assert_int_eq(b->line, 12);

	/* A relative key_file is relative to the file's directory, made absolute. */
	ck_assert_ptr_nonnull(realpath(dir, real));
	snprintf(key_path, sizeof(key_path), "%s/k.key", real);
	ck_assert_str_eq(b->key_file, key_path);

	ck_assert_str_eq(c->transport, "tcp");
	ck_assert_int_eq(c->role, CONFIG_ROLE_CONNECT);
	ck_assert_uint_eq(c->block_size, 512);
	ck_assert_uint_eq(c->send_memory, 2048);
	ck_assert_uint_eq(c->recv_memory, 2048);
	ck_assert_double_eq(c->keepalive, 0.125);
	ck_assert_int_eq(c->line, 17);
}
END_TEST

START_TEST(test_control_socket_default)
{
	expect_ok(root_conf(NULL, "clients = { socket = \"/x/y.sock\"; };"));
	ck_assert_str_eq(cfg.control_socket, "/x/y.ctl");
	expect_ok(root_conf(NULL, "clients = { socket = \"/x/y\"; };"));
	ck_assert_str_eq(cfg.control_socket, "/x/y.ctl");
	expect_ok(root_conf(NULL, "clients = { };"));
	ck_assert_str_eq(cfg.client_socket, "/run/lds/ldsd.sock");
}
END_TEST

START_TEST(test_no_peers)
{
	expect_ok("cluster = \"lonely\";\n");
	ck_assert_uint_eq(cfg.npeers, 0);
	expect_ok("cluster = \"lonely\";\npeers = ();\n");
	ck_assert_uint_eq(cfg.npeers, 0);
}
END_TEST

/* libconfig tells 30 from 30.0; both are seconds. */
START_TEST(test_int_or_float)
{
	static const char *const forms[] = { "30", "30.0", "3e1", "30L" };

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		char line[64];

		snprintf(line, sizeof(line), "inactivity_timeout = %s;", forms[i]);
		expect_ok(peer_conf(NULL, line));
		ck_assert_double_eq(cfg.peers[0].inactivity_timeout, 30.0);
		ck_assert_double_eq(cfg.peers[0].keepalive, 7.5);
		snprintf(line, sizeof(line), "drain_timeout = %s;", forms[i]);
		expect_ok(root_conf(NULL, line));
		ck_assert_double_eq(cfg.drain_timeout, 30.0);
	}
	expect_ok(peer_conf(NULL, "send_memory = 8589934592L;"));
	ck_assert_uint_eq(cfg.peers[0].send_memory, 8ull << 30);
}
END_TEST

/* ---- sizes -------------------------------------------------------------------- */

static const struct { const char *text; unsigned long long bytes; } sizes[] = {
	{ "262144", 256u << 10 },
	{ "0x100000", 1u << 20 },
	{ "\"262144\"", 256u << 10 },
	{ "\"512k\"", 512u << 10 },
	{ "\"512K\"", 512u << 10 },
	{ "\"512KiB\"", 512u << 10 },
	{ "\"64M\"", 64u << 20 },
	{ "\"64m\"", 64u << 20 },
	{ "\"64MiB\"", 64u << 20 },
	{ "\"1G\"", 1u << 30 },
	{ "\"1GiB\"", 1u << 30 },
	{ "\"3g\"", 3ull << 30 },
	{ "\"1T\"", 1ull << 40 },
};

/* Sizes up to the machine's memory are taken; larger ones are refused. */
START_TEST(test_size_ok)
{
	unsigned long long v;
	char line[64], bare[32];

	if (sizes[_i].text[0] == '"') {
		snprintf(bare, sizeof(bare), "%.*s", (int)strcspn(sizes[_i].text + 1, "\""), sizes[_i].text + 1);
		ck_assert_int_eq(config_parse_size(bare, &v), 0);
		ck_assert_uint_eq(v, sizes[_i].bytes);
	}
	snprintf(line, sizeof(line), "send_memory = %s;", sizes[_i].text);
	if (sizes[_i].bytes > config_mem_max(NULL)) {
		expect_error(peer_conf(NULL, line), PEER_LINE, "peers.[0].send_memory", "too large: must be 2048..");
		return;
	}
	expect_ok(peer_conf(NULL, line));
	ck_assert_uint_eq(cfg.peers[0].send_memory, sizes[_i].bytes);
}
END_TEST

static const char *const bad_sizes[] = {
	"\"64MB\"", "\"64 M\"", "\" 64M\"", "\"1.5G\"", "\"-1M\"", "\"+1M\"", "\"M\"",
	"\"64Mi\"", "\"64MiBs\"", "\"64X\"", "\"\"", "\"99999999999999999999X\"",
};

START_TEST(test_size_bad)
{
	char line[64];

	snprintf(line, sizeof(line), "recv_memory = %s;", bad_sizes[_i]);
	expect_error(peer_conf(NULL, line), PEER_LINE, "peers.[0].recv_memory", "is not a byte count");
}
END_TEST

/* config_parse_size tells a size beyond 64 bits from no size at all. */
START_TEST(test_parse_size_errors)
{
	static const char *const range[] = { "99999999999999999999", "18446744073709551616", "16777216T",
					     "99999999999999999999k" };
	static const char *const inval[] = { "", "k", "64MB", "-1", "0x10", "1 k" };
	unsigned long long v;

	for (size_t i = 0; i < sizeof(range) / sizeof(range[0]); i++) {
		errno = 0;
		ck_assert_int_eq(config_parse_size(range[i], &v), -1);
		ck_assert_msg(errno == ERANGE, "%s: errno %d", range[i], errno);
	}
	for (size_t i = 0; i < sizeof(inval) / sizeof(inval[0]); i++) {
		errno = 0;
		ck_assert_int_eq(config_parse_size(inval[i], &v), -1);
		ck_assert_msg(errno == EINVAL, "\"%s\": errno %d", inval[i], errno);
	}
	ck_assert_int_eq(config_parse_size("18446744073709551615", &v), 0);
	ck_assert_uint_eq(v, ULLONG_MAX);
	ck_assert_int_eq(config_parse_size("16777215T", &v), 0);
	ck_assert_uint_eq(v, 16777215ull << 40);
}
END_TEST

START_TEST(test_block_size_suffix)
{
	expect_ok(peer_conf(NULL, "block_size = \"1M\";"));
	ck_assert_uint_eq(cfg.peers[0].block_size, 1u << 20);
}
END_TEST

/* ---- one bad setting at a time ------------------------------------------------ */

struct bad {
	const char *name;      /* default line to drop, if any */
	const char *line;      /* what goes in its place; NULL: nothing */
	const char *setting;   /* expected in the message */
	const char *msg;
};

#define L_86400 "too large: must be more than 0 and at most 86400 seconds "
#define L_3600 "too large: must be more than 0 and at most 3600 seconds "
#define S_3600 "too small: must be more than 0 and at most 3600 seconds "

/* With line NULL the setting is missing: the error is at its group's line. */
static const struct bad bad_peer[] = {
	{ "cluster", NULL, "peers.[0].cluster", "required setting missing" },
	{ "address", NULL, "peers.[0].address", "required setting missing" },
	{ "port", NULL, "peers.[0].port", "required setting missing" },
	{ "role", NULL, "peers.[0].role", "required setting missing" },
	{ "key_file", NULL, "peers.[0].key_file", "required setting missing" },

	{ "cluster", "cluster = \"bad name\";", "peers.[0].cluster", "not a valid cluster name" },
	{ "cluster", "cluster = \"\";", "peers.[0].cluster", "must not be empty" },
	{ "cluster", "cluster = 7;", "peers.[0].cluster", "must be a string" },
	{ "cluster", "cluster = \"a234567890123456789012345678901234567890123456789012345678901234\";",
	  "peers.[0].cluster", "too long" },
	{ "address", "address = \"\";", "peers.[0].address", "must not be empty" },
	{ "port", "port = 0;", "peers.[0].port", "too small: must be 1..65535 (got 0)" },
	{ "port", "port = 65536;", "peers.[0].port", "too large: must be 1..65535 (got 65536)" },
	{ "port", "port = -1;", "peers.[0].port", "too small: must be 1..65535 (got -1)" },
	{ "port", "port = \"7100\";", "peers.[0].port", "must be an integer" },
	{ "role", "role = \"server\";", "peers.[0].role", "must be one of \"connect\", \"listen\"" },
	{ "role", "role = 1;", "peers.[0].role", "must be a string" },
	{ "key_file", "key_file = \"\";", "peers.[0].key_file", "must not be empty" },
	{ NULL, "transport = \"sctp\";", "peers.[0].transport", "transport \"sctp\" is not built in; available: tcp" },
	{ NULL, "transport = 7;", "peers.[0].transport", "must be a string (got an integer)" },
	{ NULL, "congestion = \"nosuchcc\";", "peers.[0].congestion",
	  "\"nosuchcc\" is not available in this kernel (available: " },
	{ NULL, "congestion = \"nosuchcc\";", "peers.[0].congestion", "(modprobe tcp_nosuchcc)" },
	{ NULL, "congestion = \"\";", "peers.[0].congestion", "must not be empty" },
	{ NULL, "congestion = 1;", "peers.[0].congestion", "must be a string (got an integer)" },
	{ NULL, "congestion = \"a-very-long-name\";", "peers.[0].congestion", "too long: at most 15 bytes" },
	{ NULL, "streams = 0;", "peers.[0].streams", "too small: must be 1..64 or \"auto\" (got 0)" },
	{ NULL, "streams = 65;", "peers.[0].streams", "too large: must be 1..64 or \"auto\" (got 65)" },
	{ NULL, "streams = 4.0;", "peers.[0].streams", "must be an integer or \"auto\" (got a float)" },
	{ NULL, "streams = \"4\";", "peers.[0].streams", "must be an integer or \"auto\" (got a string)" },
	{ NULL, "streams = \"Auto\";", "peers.[0].streams", "must be an integer or \"auto\"" },
	{ NULL, "streams_max = 65;", "peers.[0].streams_max", "must be 1..64 (got 65)" },
	{ NULL, "streams_min = 0;", "peers.[0].streams_min", "must be 1..64 (got 0)" },
	{ NULL, "streams_min = 9; streams_max = 8;", "peers.[0].streams_min", "streams_min (9) must not exceed streams_max (8)" },
	{ NULL, "block_size = 511;", "peers.[0].block_size", "must be 512..16777216 (got 511)" },
	{ NULL, "block_size = 16777217;", "peers.[0].block_size", "must be 512..16777216" },
	{ NULL, "block_size = \"17M\";", "peers.[0].block_size", "must be 512..16777216" },
	{ NULL, "send_memory = 1000;", "peers.[0].send_memory", "too small: must be 2048.." },
	{ NULL, "send_memory = 262143;", "peers.[0].send_memory", "at least 4 * block_size (262144)" },
	{ NULL, "send_memory = 1.5;", "peers.[0].send_memory", "must be an integer or a size string" },
	{ NULL, "recv_memory = 1000;", "peers.[0].recv_memory", "too small: must be 2048.." },
	{ NULL, "recv_memory = \"255k\";", "peers.[0].recv_memory", "at least 4 * block_size (262144)" },
	{ NULL, "tcp_buffer = -1;", "peers.[0].tcp_buffer", "too small: must be 0..1073741823 (got -1)" },
	{ NULL, "tcp_buffer = \"1G\";", "peers.[0].tcp_buffer", "too large: must be 0..1073741823 (got \"1G\" = 1073741824)" },
	{ NULL, "tcp_buffer = 1.5;", "peers.[0].tcp_buffer", "must be an integer or a size string" },
	{ NULL, "inactivity_timeout = 0;", "peers.[0].inactivity_timeout", "too small: must be more than 0 and at most 86400 seconds (got 0)" },
	{ NULL, "inactivity_timeout = -1.5;", "peers.[0].inactivity_timeout", "too small: must be more than 0 and at most 86400 seconds (got -1.5)" },
	{ NULL, "inactivity_timeout = \"30\";", "peers.[0].inactivity_timeout", "must be a number of seconds" },
	{ NULL, "inactivity_timeout = 1e999;", "peers.[0].inactivity_timeout", "too large: must be more than 0 and at most 86400 seconds (got 1e999)" },
	{ NULL, "keepalive = 0;", "peers.[0].keepalive", "too small: must be more than 0" },
	{ NULL, "keepalive = 30;", "peers.[0].keepalive", "less than inactivity_timeout (30)" },
	{ NULL, "inactivity_timeout = 0.04;  keepalive = 0.04;", "peers.[0].keepalive", "less than inactivity_timeout" },
	{ NULL, "reconnect_min = 0;", "peers.[0].reconnect_min", "too small: must be more than 0 and at most 3600 seconds (got 0)" },
	{ NULL, "reconnect_max = -1;", "peers.[0].reconnect_max", "too small: must be more than 0 and at most 3600 seconds (got -1)" },
	{ NULL, "reconnect_max = 0.01;", "peers.[0].reconnect_max", "at least reconnect_min (0.05)" },
	/* Only reconnect_min is in the file, so it is the one named. */
	{ NULL, "reconnect_min = 2;", "peers.[0].reconnect_min", "reconnect_max (1) must be at least reconnect_min (2)" },
	{ NULL, "connect_timeout = 0;", "peers.[0].connect_timeout", "too small: must be more than 0 and at most 3600 seconds (got 0)" },
	{ NULL, "connect_timeout = true;", "peers.[0].connect_timeout", "must be a number of seconds (got a boolean)" },
	/* Numbers checked as written, before any conversion: libconfig 1.5
	 * reads 4294974396 as 7100, 99999999999999999999 as -1 and its
	 * negative as 0; 1e300 seconds overflowed the conversion to ns. */
	{ "port", "port = 99999999999999999999;", "peers.[0].port", "too large: must be 1..65535 (got 99999999999999999999)" },
	{ "port", "port = 18446744073709551616;", "peers.[0].port", "too large: must be 1..65535 (got 18446744073709551616)" },
	{ "port", "port = -99999999999999999999;", "peers.[0].port", "too small: must be 1..65535 (got -99999999999999999999)" },
	{ "port", "port = 4294974396;", "peers.[0].port", "too large: must be 1..65535 (got 4294974396)" },
	{ "port", "port = 0x10000000000001BBC;", "peers.[0].port", "too large: must be 1..65535 (got 0x10000000000001BBC)" },
	{ "port", "port = 65536L;", "peers.[0].port", "too large: must be 1..65535 (got 65536L)" },
	{ "port", "port = 123456789012345678901234567890123456789012345678901234567890;", "peers.[0].port",
	  "too large: must be 1..65535 (got 123456789012345678901234567890123456...)" },
	{ NULL, "streams = 99999999999999999999L;", "peers.[0].streams",
	  "too large: must be 1..64 or \"auto\" (got 99999999999999999999L)" },
	{ NULL, "block_size = 4294967808;", "peers.[0].block_size", "too large: must be 512..16777216 (got 4294967808)" },
	{ NULL, "tcp_buffer = 99999999999999999999;", "peers.[0].tcp_buffer",
	  "too large: must be 0..1073741823 (got 99999999999999999999)" },
	{ NULL, "recv_memory = \"8T\";", "peers.[0].recv_memory", "(got \"8T\" = 8796093022208); the upper bound is this " },
	{ NULL, "recv_memory = \"8T\";", "peers.[0].recv_memory", "too large: must be 2048.." },
	{ NULL, "send_memory = \"8T\";", "peers.[0].send_memory", "(got \"8T\" = 8796093022208); the upper bound is this " },
	{ NULL, "recv_memory = \"99999999999999999999\";", "peers.[0].recv_memory", "(got \"99999999999999999999\")" },
	{ NULL, "send_memory = \"99999999999T\";", "peers.[0].send_memory", "too large: must be 2048.." },
	{ NULL, "inactivity_timeout = 1e300;", "peers.[0].inactivity_timeout", L_86400 "(got 1e300)" },
	{ NULL, "keepalive = 1e300;", "peers.[0].keepalive", L_86400 "(got 1e300)" },
	{ NULL, "reconnect_min = 1e300;", "peers.[0].reconnect_min", L_3600 "(got 1e300)" },
	{ NULL, "reconnect_max = 1e300;", "peers.[0].reconnect_max", L_3600 "(got 1e300)" },
	{ NULL, "connect_timeout = 1e300;", "peers.[0].connect_timeout", L_3600 "(got 1e300)" },
	{ NULL, "connect_timeout = 3600.5;", "peers.[0].connect_timeout", L_3600 "(got 3600.5)" },
	{ NULL, "connect_timeout = 99999999999999999999;", "peers.[0].connect_timeout", L_3600 "(got 99999999999999999999)" },
	{ NULL, "reconnect_max = 1e999;", "peers.[0].reconnect_max", L_3600 "(got 1e999)" },
	{ NULL, "reconnect_max = -1e999;", "peers.[0].reconnect_max", S_3600 "(got -1e999)" },
	{ NULL, "reconnect_max = -99999999999999999999;", "peers.[0].reconnect_max", S_3600 "(got -99999999999999999999)" },
	{ NULL, "connect_timeout = -0.0;", "peers.[0].connect_timeout", S_3600 "(got -0.0)" },
	{ NULL, "connect_timeout = 1e-400;", "peers.[0].connect_timeout", S_3600 "(got 1e-400)" },
	{ NULL, "stream = 4;", "peers.[0].stream", "unknown setting; did you mean \"streams\"?" },
	{ NULL, "BlockSize = 10000;", "peers.[0].BlockSize", "unknown setting; did you mean \"block_size\"?" },
	{ NULL, "keepalvie = 5;", "peers.[0].keepalvie", "did you mean \"keepalive\"?" },
	{ NULL, "colour = \"red\";", "peers.[0].colour", "unknown setting" },
	{ NULL, "log_level = \"info\";", "peers.[0].log_level", "unknown setting" },
	{ "key_file", "key_file = \"nokey.key\";", "peers.[0].key_file", "No such file or directory" },
	{ "key_file", "key_file = \"/\";", "peers.[0].key_file", "/ is not a regular file" },
};

START_TEST(test_bad_peer)
{
	const struct bad *b = &bad_peer[_i];

	expect_error(peer_conf(b->name, b->line), b->line ? PEER_LINE : PEER_GROUP_LINE, b->setting, b->msg);
}
END_TEST

static const struct bad bad_root[] = {
	{ "cluster", NULL, "cluster", "required setting missing" },
	{ "cluster", "cluster = \"a/b\";", "cluster", "not a valid cluster name" },
	{ "cluster", "cluster = \"clusterB\";", "peers.[0].cluster", "own name" },
	{ NULL, "log_level = \"loud\";", "log_level", "must be one of \"error\", \"warn\", \"info\", \"debug\" (got \"loud\")" },
	{ NULL, "allow_faults = 1;", "allow_faults", "must be true or false (got an integer)" },
	{ NULL, "drain_timeout = 0;", "drain_timeout", "too small: must be more than 0 and at most 86400 seconds (got 0)" },
	{ NULL, "drain_timeout = 1e300;", "drain_timeout", L_86400 "(got 1e300)" },
	{ NULL, "drain_timeout = 86400.001;", "drain_timeout", L_86400 "(got 86400.001)" },
	{ NULL, "drain_timeout = 99999999999999999999;", "drain_timeout", L_86400 "(got 99999999999999999999)" },
	{ NULL, "clients = 1;", "clients", "must be a group" },
	{ NULL, "clients = { socket = \"\"; };", "clients.socket", "must not be empty" },
	{ NULL, "clients = { socket = \"/run/lds/a-socket-path-longer-than-a-sockaddr_un-can-hold-is-an-error-"
		"here-and-not-at-start-up-really-and-more.sock\"; };", "clients.socket", "too long: at most 107 bytes" },
	{ NULL, "clients = { socket = \"/run/lds/a-socket-path-that-fits-but-leaves-no-room-for-the-control-"
		"socket-path-to-be-derived-from-it-ok\"; };", "clients.socket", "set control_socket" },
	{ NULL, "clients = { tcp = \"localhost\"; };", "clients.tcp", "must be \"host:port\"" },
	{ NULL, "clients = { tcp = \"localhost:0\"; };", "clients.tcp", "must be \"host:port\"" },
	{ NULL, "clients = { tcp = \":7001\"; };", "clients.tcp", "must be \"host:port\"" },
	{ NULL, "clients = { sockt = \"/x.sock\"; };", "clients.sockt", "did you mean \"socket\"?" },
	{ NULL, "clients = { tcp = \"127.0.0.1:7001\"; };", "clients.tcp", "needs clients.tcp_key_file" },
	{ NULL, "clients = { tcp_key_file = \"k.key\"; };", "clients.tcp_key_file", "neither clients.tcp nor clients.rdma" },
	{ NULL, "clients = { rdma = \"10.2.0.1:7002\"; };", "clients.rdma", "needs clients.tcp_key_file" },
	{ NULL, "clients = { rdma = \"10.2.0.1\"; };", "clients.rdma", "must be \"host:port\"" },
	{ NULL, "clients = { rdma = \"10.2.0.1:70000\"; };", "clients.rdma", "must be \"host:port\"" },
	{ NULL, "clients = { tcp = \"127.0.0.1:7001\"; tcp_key_file = \"none.key\"; };", "clients.tcp_key_file",
	  "none.key: No such file" },
	{ NULL, "clients = { socket_mode = \"0999\"; };", "clients.socket_mode", "not an octal mode" },
	{ NULL, "clients = { socket_mode = \"rw-rw\"; };", "clients.socket_mode", "not an octal mode" },
	{ NULL, "clients = { socket_mode = \"01777\"; };", "clients.socket_mode", "not an octal mode" },
	{ NULL, "clients = { socket_mode = \"0466\"; };", "clients.socket_mode", "denies the owner write access" },
	{ NULL, "clients = { socket_owner = \"no-such-user-x\"; };", "clients.socket_owner", "no such user" },
	{ NULL, "clients = { socket_group = \"no-such-group-x\"; };", "clients.socket_group", "no such group" },
	{ NULL, "control_socket = \"/run/lds/ldsd.sock\";", "control_socket", "must differ from clients.socket" },
	{ NULL, "colour = 1;", "colour", "unknown setting" },
	{ NULL, "streams = 4;", "streams", "unknown setting" },
	{ NULL, "peers2 = ();", "peers2", "did you mean \"peers\"?" },
	{ NULL, "handshake = { timeout = 0; };", "handshake.timeout", "too small: must be more than 0" },
	{ NULL, "handshake = { max_unauth = 0; };", "handshake.max_unauth", "1..4096" },
	{ NULL, "handshake = { max_unauth = 10; early_drop = 11; };", "handshake.early_drop",
	  "early_drop (11) must not exceed max_unauth (10)" },
	{ NULL, "handshake = { max_unauth = 10; max_per_source = 11; };", "handshake.max_per_source",
	  "max_per_source (11) must not exceed max_unauth (10)" },
};

START_TEST(test_bad_root)
{
	const struct bad *b = &bad_root[_i];
	/* Missing root settings are reported at line 1 too; a peer's own-name
	 * error is at that peer's cluster line. */
	int line = strncmp(b->setting, "peers.", 6) == 0 ? PEER_LINE + 1 : ROOT_LINE;

	expect_error(root_conf(b->name, b->line), line, b->setting, b->msg);
}
END_TEST

/* early_drop and max_per_source not in the file follow max_unauth. */
START_TEST(test_handshake)
{
	expect_ok(root_conf(NULL, NULL));
	ck_assert(cfg.handshake.timeout == 10.0);
	ck_assert_uint_eq(cfg.handshake.max_unauth, 256);
	ck_assert_uint_eq(cfg.handshake.early_drop, 128);
	ck_assert_uint_eq(cfg.handshake.max_per_source, 64);
	ck_assert_uint_eq(cfg.handshake.max_failures, 60);
	expect_ok(root_conf(NULL, "handshake = { max_unauth = 40; timeout = 2.5; };"));
	ck_assert(cfg.handshake.timeout == 2.5);
	ck_assert_uint_eq(cfg.handshake.early_drop, 20);
	ck_assert_uint_eq(cfg.handshake.max_per_source, 40);
}
END_TEST

START_TEST(test_peers_not_list)
{
	expect_error("cluster = \"a\";\npeers = { cluster = \"b\"; };\n", 2, "peers", "must be a list of groups");
	expect_error("cluster = \"a\";\npeers = ( 1 );\n", 2, "peers.[0]", "must be a group");
}
END_TEST

START_TEST(test_syntax_error)
{
	ck_assert_int_eq(load("cluster = \"a\";\n\npeers = ( { streams = ; } );\n"), -1);
	ck_assert_msg(strncmp(err, conf_path, strlen(conf_path)) == 0, "%s", err);
	ck_assert_msg(strstr(err, "t.conf:3: ") != NULL, "%s", err);
	ck_assert_msg(strstr(err, "syntax error") != NULL, "%s", err);

	/* libconfig itself rejects a setting given twice. */
	ck_assert_int_eq(load("cluster = \"a\";\ncluster = \"b\";\n"), -1);
	ck_assert_msg(strstr(err, "t.conf:2: ") != NULL, "%s", err);
}
END_TEST

START_TEST(test_no_file)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/none.conf", dir);
	ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), -1);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "%s", err);
	ck_assert_msg(strstr(err, "No such file or directory") != NULL, "%s", err);
	ck_assert_int_eq(config_load(dir, &cfg, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "is a directory") != NULL, "%s", err);
}
END_TEST

/* ---- peers as a set ------------------------------------------------------------ */

#define PEER(name, line) "  { cluster = \"" name "\"; address = \"h\"; port = 1; role = \"listen\"; key_file = \"k.key\"; }" line

START_TEST(test_duplicate_peer)
{
	expect_error("cluster = \"A\";\npeers = (\n" PEER("B", ",\n") PEER("C", ",\n") PEER("B", "\n") ");\n",
		     5, "peers.[2].cluster", "\"B\" is already peers.[0] (line 3)");
}
END_TEST

START_TEST(test_own_name_peer)
{
	/* cluster after peers: the check needs the whole file. */
	expect_error("peers = (\n" PEER("B", ",\n") PEER("A", "\n") ");\ncluster = \"A\";\n",
		     3, "peers.[1].cluster", "this cluster's own name");
}
END_TEST

START_TEST(test_too_many_peers)
{
	static char text[CONFIG_MAX_PEERS * 128 + 256];
	size_t n = 0;

	n += (size_t)snprintf(text + n, sizeof(text) - n, "cluster = \"A\";\npeers = (\n");
	for (int i = 0; i <= CONFIG_MAX_PEERS; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s{ cluster = \"p%d\"; address = \"h\"; port = 1;"
				      " role = \"listen\"; key_file = \"k.key\"; }\n", i ? "," : "", i);
	snprintf(text + n, sizeof(text) - n, ");\n");
	expect_error(text, 2, "peers", "at most 64 peers (got 65)");

	/* Exactly CONFIG_MAX_PEERS is fine. */
	*strrchr(text, ',') = '\0';
	strcat(text, ");\n");
	expect_ok(text);
	ck_assert_uint_eq(cfg.npeers, CONFIG_MAX_PEERS);
}
END_TEST

/* ---- key files ------------------------------------------------------------------ */

START_TEST(test_key_mode)
{
	write_file("k.key", KEY "\n", 0644);
	expect_error(peer_conf(NULL, NULL), 9, "peers.[0].key_file", "(mode 0644): chmod 600 ");
	write_file("k.key", KEY "\n", 0620);
	expect_error(peer_conf(NULL, NULL), 9, "peers.[0].key_file", "chmod 600");
	write_file("k.key", KEY "\n", 0400);
	expect_ok(peer_conf(NULL, NULL));
}
END_TEST

START_TEST(test_key_unreadable)
{
	if (geteuid() == 0)
		return;   /* root reads anything */
	write_file("k.key", KEY "\n", 0200);
	expect_error(peer_conf(NULL, NULL), 9, "peers.[0].key_file", "Permission denied");
}
END_TEST

START_TEST(test_key_length)
{
	static char big[CONFIG_KEY_MAX + 2];

	write_file("k.key", "short\n", 0600);
	expect_error(peer_conf(NULL, NULL), 9, "peers.[0].key_file", "holds 5 bytes of key; it must hold 16..1024");
	write_file("k.key", "", 0600);
	expect_error(peer_conf(NULL, NULL), 9, "peers.[0].key_file", "holds 0 bytes");

	/* One trailing newline is not part of the key; a second one is. */
	write_file("k.key", "0123456789abcdef\n", 0600);
	expect_ok(peer_conf(NULL, NULL));
	ck_assert_uint_eq(cfg.peers[0].key_len, 16);
	write_file("k.key", "0123456789abcde\n\n", 0600);
	expect_ok(peer_conf(NULL, NULL));
	ck_assert_uint_eq(cfg.peers[0].key_len, 16);
	ck_assert_int_eq(cfg.peers[0].key[15], '\n');
	write_file("k.key", "0123456789abcde", 0600);
	expect_error(peer_conf(NULL, NULL), 9, "peers.[0].key_file", "holds 15 bytes");

	memset(big, 'x', CONFIG_KEY_MAX);
	big[CONFIG_KEY_MAX] = '\n';
	write_file("k.key", big, 0600);
	expect_ok(peer_conf(NULL, NULL));
	ck_assert_uint_eq(cfg.peers[0].key_len, CONFIG_KEY_MAX);
	big[CONFIG_KEY_MAX] = 'x';
	write_file("k.key", big, 0600);
	expect_error(peer_conf(NULL, NULL), 9, "peers.[0].key_file", "more than 1024 bytes");
}
END_TEST

START_TEST(test_key_relative_to_config)
{
	char line[PATH_MAX + 64];

	/* Not the working directory: the config file's. */
	ck_assert_int_eq(chdir("/"), 0);
	expect_ok(peer_conf(NULL, NULL));
	ck_assert_mem_eq(cfg.peers[0].key, KEY, strlen(KEY));

	ck_assert_int_eq(mkdir(strcat(strcpy(line, dir), "/keys"), 0700), 0);
	write_file("keys/other.key", "fedcba9876543210\n", 0600);
	expect_ok(peer_conf("key_file", "key_file = \"keys/other.key\";"));
	ck_assert_mem_eq(cfg.peers[0].key, "fedcba9876543210", 16);

	/* An absolute one is kept as it is. */
	snprintf(line, sizeof(line), "%s/keys/other.key", dir);
	ck_assert_str_eq(cfg.peers[0].key_file + strlen(cfg.peers[0].key_file) - strlen("/keys/other.key"),
			 "/keys/other.key");
	{
		char text[PATH_MAX + 128];

		snprintf(text, sizeof(text), "key_file = \"%s\";", line);
		expect_ok(peer_conf("key_file", text));
	}
	ck_assert_str_eq(cfg.peers[0].key_file, line);
}
END_TEST

/* ---- printing ------------------------------------------------------------------- */

static char *print_to_string(const struct config *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	ck_assert_ptr_nonnull(f);
	config_print(c, f);
	ck_assert_int_eq(fclose(f), 0);
	return text;
}

static struct config again;

/* printed, config_print's output, loads into again and prints the same. */
static void reload(const char *printed)
{
	char path[PATH_MAX + 16];
	char *second;

	write_file("printed.conf", printed, 0600);
	snprintf(path, sizeof(path), "%s/printed.conf", dir);
	ck_assert_msg(config_load(path, &again, err, sizeof(err)) == 0, "%s\n%s", err, printed);
	second = print_to_string(&again);
	/* Equal but for the first line, which names the file. */
	ck_assert_str_eq(strchr(printed, '\n'), strchr(second, '\n'));
	free(second);
}

/* config_print's output is a config file that loads to the same settings. */
START_TEST(test_print_round_trip)
{
	char *first;

	write_file("k.key", "s3cr3t-k3y-material-that-must-not-leak\n", 0600);
	expect_ok(full);
	first = print_to_string(&cfg);
	ck_assert_msg(strstr(first, "s3cr3t") == NULL, "key printed:\n%s", first);
	ck_assert_msg(strstr(first, "key_file = \"/") != NULL, "%s", first);
	ck_assert_msg(strstr(first, "recv_memory = 1073741824;") != NULL, "%s", first);
	ck_assert_msg(strstr(first, "inactivity_timeout = 60.0;") != NULL, "%s", first);
	reload(first);
	ck_assert_mem_eq(again.peers[1].key, cfg.peers[1].key, cfg.peers[1].key_len);
	free(first);

	/* "auto" survives printing. */
	expect_ok(peer_conf(NULL, "streams = \"auto\"; streams_max = 8;"));
	ck_assert_uint_eq(cfg.peers[0].streams, 0);
	ck_assert_uint_eq(cfg.peers[0].streams_min, 1);
	ck_assert_uint_eq(cfg.peers[0].streams_max, 8);
	first = print_to_string(&cfg);
	ck_assert_msg(strstr(first, "streams = \"auto\";") != NULL, "%s", first);
	ck_assert_msg(strstr(first, "streams_max = 8;") != NULL, "%s", first);
	free(first);

	/* Defaults are printed too, and sizes past 2^31 carry libconfig's L. */
	expect_ok(peer_conf(NULL, "send_memory = \"4G\";"));
	first = print_to_string(&cfg);
	ck_assert_msg(strstr(first, "send_memory = 4294967296L;") != NULL, "%s", first);
	ck_assert_msg(strstr(first, "keepalive = 7.5;") != NULL, "%s", first);
	ck_assert_msg(strstr(first, "reconnect_min = 0.05;") != NULL, "%s", first);
	ck_assert_msg(strstr(first, "control_socket = \"/run/lds/ldsd.ctl\";") != NULL, "%s", first);
	ck_assert_msg(strstr(first, "tcp =") == NULL, "unset clients.tcp printed:\n%s", first);
	free(first);
}
END_TEST

/* The kernel's list, as config.c reads it. */
static void proc_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(buf, (int)len, f));
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* name is one of the space-separated words of list ("bbr" is not "bbr2"). */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return 1;
	return 0;
}

/* Default: bbr where the kernel has it, else the kernel's own default;
 * any listed algorithm is taken and printed back. */
START_TEST(test_congestion)
{
	char avail[256], want[64], *first;

	proc_line("/proc/sys/net/ipv4/tcp_available_congestion_control", avail, sizeof(avail));
	if (listed(avail, "bbr"))
		snprintf(want, sizeof(want), "bbr");
	else
		proc_line("/proc/sys/net/ipv4/tcp_congestion_control", want, sizeof(want));
	expect_ok(peer_conf(NULL, NULL));
	ck_assert_str_eq(TCP_CONF(&cfg.peers[0])->congestion, want);
	/* Every kernel lists reno: it is built in. */
	ck_assert_msg(listed(avail, "reno"), "%s", avail);
	ck_assert(!listed("bbr2 cubic", "bbr") && listed("reno bbr", "bbr") && listed("bbr", "bbr"));
	expect_ok(peer_conf(NULL, "congestion = \"reno\";"));
	ck_assert_str_eq(TCP_CONF(&cfg.peers[0])->congestion, "reno");
	first = print_to_string(&cfg);
	ck_assert_msg(strstr(first, "congestion = \"reno\";") != NULL, "%s", first);
	free(first);
}
END_TEST

/* tcp_buffer: up to this kernel's smaller of wmem_max and rmem_max, which
 * setsockopt would silently cap it at; 0 (the default) leaves autotuning
 * on and is not printed as anything else. */
START_TEST(test_tcp_buffer)
{
	char w[64], r[64], line[128], msg[128], *text;
	unsigned long long wv, rv;
	size_t cap;

	proc_line("/proc/sys/net/core/wmem_max", w, sizeof(w));
	proc_line("/proc/sys/net/core/rmem_max", r, sizeof(r));
	wv = strtoull(w, NULL, 10);
	rv = strtoull(r, NULL, 10);
	cap = wv < rv ? wv : rv;
	ck_assert_uint_gt(cap, 0);

	snprintf(line, sizeof(line), "tcp_buffer = %zu;", cap);
	expect_ok(peer_conf(NULL, line));
	ck_assert_uint_eq(TCP_CONF(&cfg.peers[0])->buffer, cap);
	text = print_to_string(&cfg);
	ck_assert_msg(strstr(text, line) != NULL, "%s", text);
	free(text);

	snprintf(line, sizeof(line), "tcp_buffer = %zu;", cap + 1);
	snprintf(msg, sizeof(msg), "tcp_buffer (%zu) exceeds this kernel's limit (%zu, ", cap + 1, cap);
	expect_error(peer_conf(NULL, line), PEER_LINE, "peers.[0].tcp_buffer", msg);
	expect_error(peer_conf(NULL, line), PEER_LINE, "peers.[0].tcp_buffer", "raise both with sysctl");
}
END_TEST

START_TEST(test_small_err_buffer)
{
	char small[8];

	write_file("t.conf", "colour = 1;\n", 0600);
	ck_assert_int_eq(config_load(conf_path, &cfg, small, sizeof(small)), -1);
	ck_assert_uint_eq(strlen(small), sizeof(small) - 1);
	ck_assert_int_eq(config_load(conf_path, &cfg, NULL, 0), -1);
}
END_TEST

/* ---- the exec group ------------------------------------------------------------ */

/* A user this process may run jobs as: not root, and, when we are not
 * root, ourselves. */
static const char *job_user(void)
{
	return geteuid() == 0 ? "nobody" : getpwuid(geteuid())->pw_name;
}

/* The exec group on line 1 of conf(), from a format with one %s, the user. */
static const char *exec_conf(const char *fmt)
{
	static char line[1024];

	snprintf(line, sizeof(line), fmt, job_user());
	return root_conf(NULL, line);
}

#define PROGS "programs = [ \"/usr/bin/id\" ]; "
#define ALLOW "allow_clusters = [ \"clusterB\" ]; "
#define USER "user = \"%s\"; "

START_TEST(test_exec_defaults)
{
	char real[PATH_MAX];

	expect_ok(root_conf(NULL, NULL));
	ck_assert_int_eq(cfg.exec.enabled, 0);
	expect_ok(exec_conf("exec = { " ALLOW USER "programs = [ \"/usr/bin/id\", \"/bin/true\" ]; };"));
	ck_assert_int_eq(cfg.exec.enabled, 1);
	ck_assert_uint_eq(cfg.exec.nallow, 1);
	ck_assert_str_eq(cfg.exec.allow[0], "clusterB");
	ck_assert_uint_eq(cfg.exec.nprograms, 2);
	ck_assert_ptr_nonnull(realpath("/bin/true", real));
	ck_assert_str_eq(cfg.exec.programs[1], real);   /* resolved */
	ck_assert_str_eq(cfg.exec.mpirun, "/usr/bin/mpirun");
	ck_assert_uint_eq(cfg.exec.nmpirun_args, 1);
	ck_assert_str_eq(cfg.exec.mpirun_args[0], "--oversubscribe");
	ck_assert_uint_eq(cfg.exec.uid, getpwnam(job_user())->pw_uid);
	ck_assert_uint_eq(cfg.exec.gid, getpwnam(job_user())->pw_gid);
	ck_assert_uint_eq(cfg.exec.max_jobs, 4);
	ck_assert_uint_eq(cfg.exec.max_ranks, 64);
	ck_assert(cfg.exec.max_time == 86400.0);
	ck_assert_str_eq(cfg.exec.workdir, "/tmp");
	ck_assert_int_eq(cfg.exec.allow_root, 0);
	expect_ok(exec_conf("exec = { " ALLOW PROGS USER "mpirun_args = [ ]; max_ranks = 4096; };"));
	ck_assert_uint_eq(cfg.exec.nmpirun_args, 0);
	ck_assert_uint_eq(cfg.exec.max_ranks, 4096);
}
END_TEST

static const struct bad bad_exec[] = {
	{ NULL, "exec = 1;", "exec", "must be a group" },
	{ NULL, "exec = { " PROGS USER "};", "exec.allow_clusters", "required with programs" },
	{ NULL, "exec = { " ALLOW USER "};", "exec.programs", "required with allow_clusters" },
	{ NULL, "exec = { " USER "};", "exec.rules", "required: who may start which jobs" },
	{ NULL, "exec = { " ALLOW PROGS "};", "exec.user", "required setting missing" },
	{ NULL, "exec = { allow_clusters = [ ]; " PROGS USER "};", "exec.allow_clusters", "required with programs" },
	{ NULL, "exec = { " USER "rules = { cluster = \"clusterB\"; }; };", "exec.rules", "must be a list of groups" },
	{ NULL, "exec = { " USER "rules = ( { cluster = \"clusterB\"; program = \"/usr/bin/id\"; } ); };",
	  "exec.rules.[0].users", "required setting missing" },
	{ NULL, "exec = { " USER "rules = ( { cluster = \"clusterZ\"; users = [ \"*\" ]; program = \"/usr/bin/id\"; } ); };",
	  "exec.rules.[0].cluster", "\"clusterZ\" is not one of this gateway's peers" },
	{ NULL, "exec = { " USER "rules = ( { cluster = \"clusterB\"; users = [ \"a b\" ]; program = \"/usr/bin/id\"; } ); };",
	  "exec.rules.[0].users.[0]", "\"a b\" is not a user name" },
	{ NULL, "exec = { " USER "rules = ( { cluster = \"clusterB\"; users = [ \"*\" ]; program = \"/usr/bin/id\"; "
	  "args = [ \"**\", \"x\" ]; } ); };", "exec.rules.[0].args.[0]", "must be the last pattern" },
	{ NULL, "exec = { " USER "rules = ( { cluster = \"clusterB\"; users = [ \"*\" ]; program = \"/etc/passwd\"; } ); };",
	  "exec.rules.[0].program", "/etc/passwd is not an executable file" },
	{ NULL, "exec = { " ALLOW PROGS USER "trampoline = \"/no/ldsd-exec\"; };", "exec.trampoline",
	  "No such file or directory" },
	{ NULL, "exec = { allow_clusters = [ \"clusterZ\" ]; " PROGS USER "};", "exec.allow_clusters.[0]",
	  "\"clusterZ\" is not one of this gateway's peers" },
	{ NULL, "exec = { allow_clusters = [ \"a/b\" ]; " PROGS USER "};", "exec.allow_clusters.[0]",
	  "not a valid cluster name" },
	{ NULL, "exec = { " ALLOW "programs = \"/usr/bin/id\"; " USER "};", "exec.programs", "must be a list of strings" },
	{ NULL, "exec = { " ALLOW "programs = [ 1 ]; " USER "};", "exec.programs.[0]", "must be a string (got an integer)" },
	{ NULL, "exec = { " ALLOW "programs = [ \"id\" ]; " USER "};", "exec.programs.[0]", "\"id\" is not an absolute path" },
	{ NULL, "exec = { " ALLOW "programs = [ \"/usr/bin/id\", \"/no/such/prog\" ]; " USER "};", "exec.programs.[1]",
	  "/no/such/prog: No such file or directory" },
	{ NULL, "exec = { " ALLOW "programs = [ \"/etc/passwd\" ]; " USER "};", "exec.programs.[0]",
	  "/etc/passwd is not an executable file" },
	{ NULL, "exec = { " ALLOW PROGS "user = \"no-such-user-lds\"; };", "exec.user", "no such user \"no-such-user-lds\"" },
	{ NULL, "exec = { " ALLOW PROGS USER "group = \"no-such-group-lds\"; };", "exec.group",
	  "no such group \"no-such-group-lds\"" },
	{ NULL, "exec = { " ALLOW PROGS "user = \"root\"; };", "exec.user",
	  "jobs would run as user \"root\" (id 0): name an unprivileged one, or set allow_root = true" },
	{ NULL, "exec = { " ALLOW PROGS USER "mpirun = \"mpirun\"; };", "exec.mpirun", "mpirun: not an absolute path" },
	{ NULL, "exec = { " ALLOW PROGS USER "mpirun = \"/no/mpirun\"; };", "exec.mpirun", "No such file or directory" },
	{ NULL, "exec = { " ALLOW PROGS USER "workdir = \"/etc/passwd\"; };", "exec.workdir", "is not a directory" },
	{ NULL, "exec = { " ALLOW PROGS USER "workdir = \"tmp\"; };", "exec.workdir", "is not an absolute path" },
	{ NULL, "exec = { " ALLOW PROGS USER "max_ranks = 0; };", "exec.max_ranks", "too small: must be 1..4096 (got 0)" },
	{ NULL, "exec = { " ALLOW PROGS USER "max_jobs = 2000; };", "exec.max_jobs", "too large: must be 1..1024 (got 2000)" },
	{ NULL, "exec = { " ALLOW PROGS USER "max_time = 0; };", "exec.max_time", "too small: must be more than 0 and at most 31536000 seconds (got 0)" },
	{ NULL, "exec = { " ALLOW PROGS USER "max_time = 1e300; };", "exec.max_time",
	  "too large: must be more than 0 and at most 31536000 seconds (got 1e300)" },
	{ NULL, "exec = { " ALLOW PROGS USER "max_jobs = 99999999999999999999; };", "exec.max_jobs",
	  "too large: must be 1..1024 (got 99999999999999999999)" },
	{ NULL, "exec = { " ALLOW PROGS USER "max_ranks = 4294967297; };", "exec.max_ranks",
	  "too large: must be 1..4096 (got 4294967297)" },
	{ NULL, "exec = { " ALLOW PROGS USER "programz = 1; };", "exec.programz", "did you mean \"programs\"?" },
	{ NULL, "exec = { " ALLOW PROGS USER "mpirun_args = [ \"\" ]; };", "exec.mpirun_args.[0]", "must not be empty" },
};

START_TEST(test_bad_exec)
{
	expect_error(exec_conf(bad_exec[_i].line), ROOT_LINE, bad_exec[_i].setting, bad_exec[_i].msg);
}
END_TEST

/* Anyone who may change an allowed program could run anything. */
START_TEST(test_exec_program_writable)
{
	char line[PATH_MAX + 256];

	write_file("w.sh", "#!/bin/sh\n", 0775);
	snprintf(line, sizeof(line), "exec = { " ALLOW "programs = [ \"%s/w.sh\" ]; user = \"%s\"; };", dir,
		 job_user());
	expect_error(root_conf(NULL, line), ROOT_LINE, "exec.programs.[0]", "is writable by group or others (mode 0775)");
	write_file("w.sh", "#!/bin/sh\n", 0755);
	expect_ok(root_conf(NULL, line));
}
END_TEST

/* A daemon that is not root can start jobs only as itself.  Checked by
 * becoming nobody in this forked test, when we are root. */
START_TEST(test_exec_not_root)
{
	const struct passwd *pw = getpwnam("nobody");
	char key[PATH_MAX + 16];

	if (geteuid() != 0 || pw == NULL || (getenv("CK_FORK") && strcmp(getenv("CK_FORK"), "no") == 0))
		return;
	snprintf(key, sizeof(key), "%s/k.key", dir);
	ck_assert_int_eq(chown(dir, pw->pw_uid, pw->pw_gid), 0);
	ck_assert_int_eq(chown(key, pw->pw_uid, pw->pw_gid), 0);
	ck_assert_int_eq(setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid), 0);
	ck_assert_int_eq(setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid), 0);
	expect_error(root_conf(NULL, "exec = { " ALLOW PROGS "user = \"root\"; allow_root = true; };"), ROOT_LINE,
		     "exec.user", "can start jobs only as itself, not as \"root\" (uid 0): run ldsd as root");
	expect_ok(root_conf(NULL, "exec = { " ALLOW PROGS "user = \"nobody\"; };"));
}
END_TEST

START_TEST(test_exec_print_round_trip)
{
	char *first;

	expect_ok(exec_conf("exec = { " ALLOW PROGS USER "mpirun_args = [ \"--mca\", \"btl\", \"self,tcp\" ]; "
			    "max_jobs = 2; };"));
	first = print_to_string(&cfg);
	ck_assert_msg(strstr(first, "mpirun_args = [ \"--mca\", \"btl\", \"self,tcp\" ];") != NULL, "%s", first);
	reload(first);
	ck_assert_uint_eq(again.exec.max_jobs, 2);
	free(first);
	/* Rules: per cluster and user, with argument patterns. */
	expect_ok(exec_conf("exec = { " USER "rules = ( { cluster = \"clusterB\"; users = [ \"alice\", \"bob\" ]; "
			    "program = \"/usr/bin/id\"; args = [ \"-u\", \"**\" ]; }, { cluster = \"clusterB\"; "
			    "users = [ \"*\" ]; program = \"/bin/true\"; } ); };"));
	ck_assert_uint_eq(cfg.exec.nrules, 2);
	ck_assert_uint_eq(cfg.exec.nallow, 0);
	ck_assert_str_eq(cfg.exec.rules[0].users[1], "bob");
	ck_assert_uint_eq(cfg.exec.rules[0].nargs, 2);
	ck_assert_uint_eq(cfg.exec.rules[1].nargs, 0);
	first = print_to_string(&cfg);
	ck_assert_msg(strstr(first, "args = [ \"-u\", \"**\" ];") != NULL, "%s", first);
	reload(first);
	ck_assert_uint_eq(again.exec.nrules, 2);
	ck_assert_str_eq(again.exec.rules[0].args[1], "**");
	ck_assert_str_eq(again.exec.rules[1].users[0], "*");
	ck_assert_uint_eq(again.exec.rules[1].nargs, 0);
	free(first);
	/* Without an exec group none is printed. */
	expect_ok(root_conf(NULL, NULL));
	first = print_to_string(&cfg);
	ck_assert_msg(strstr(first, "exec") == NULL, "%s", first);
	free(first);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---- ranges ------------------------------------------------------------------- */

/* Every bound itself is taken. */
START_TEST(test_range_limits)
{
	const struct config_peer *p = &cfg.peers[0];

	expect_ok(peer_conf(NULL, "connect_timeout = 3600; reconnect_min = 3600.0; reconnect_max = 3600; "
				  "inactivity_timeout = 86400; keepalive = 86399.5;"));
	ck_assert_double_eq(p->connect_timeout, 3600.0);
	ck_assert_double_eq(p->reconnect_min, 3600.0);
	ck_assert_double_eq(p->reconnect_max, 3600.0);
	ck_assert_double_eq(p->inactivity_timeout, 86400.0);
	ck_assert_double_eq(p->keepalive, 86399.5);
	expect_ok(peer_conf("port", "port = 65535L; streams = 0x40; block_size = 16777216;"));
	ck_assert_uint_eq(p->port, 65535);
	ck_assert_uint_eq(p->streams, 64);
	ck_assert_uint_eq(p->block_size, 16u << 20);
	expect_ok(root_conf(NULL, "drain_timeout = 86400;"));
	ck_assert_double_eq(cfg.drain_timeout, 86400.0);
	expect_ok(exec_conf("exec = { " ALLOW PROGS USER "max_time = 31536000; max_jobs = 1024; max_ranks = 4096; };"));
	ck_assert_double_eq(cfg.exec.max_time, 31536000.0);
	ck_assert_uint_eq(cfg.exec.max_jobs, 1024);
	ck_assert_uint_eq(cfg.exec.max_ranks, 4096);
}
END_TEST

/* Sizes up to the machine's memory, exactly. */
START_TEST(test_range_memory)
{
	size_t mem = config_mem_max(NULL);
	char line[64];

	ck_assert_uint_gt(mem, 4 * 65536);
	snprintf(line, sizeof(line), "send_memory = %zuL;", mem);
	expect_ok(peer_conf(NULL, line));
	ck_assert_uint_eq(cfg.peers[0].send_memory, mem);
	snprintf(line, sizeof(line), "recv_memory = %zuL;", mem + 1);
	expect_error(peer_conf(NULL, line), PEER_LINE, "peers.[0].recv_memory", "the upper bound is this ");
	/* libconfig 1.5 keeps the low 32 bits of a number past 2^31 - 1 without
	 * L (2147483648 reads as -2147483648): it is read as written instead. */
	if (mem >= 1ull << 31) {
		expect_ok(peer_conf(NULL, "send_memory = 2147483648;"));
		ck_assert_uint_eq(cfg.peers[0].send_memory, 1ull << 31);
	}
}
END_TEST

/* The limit is RLIMIT_AS where that is below physical memory. */
START_TEST(test_mem_max_rlimit)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	const char *what = NULL, *low_what = NULL;
	struct rlimit old, low;
	size_t mem, low_mem;
	int set, restored;

	ck_assert_int_eq(getrlimit(RLIMIT_AS, &old), 0);
	mem = config_mem_max(&what);
	if (old.rlim_cur == RLIM_INFINITY) {
		ck_assert_uint_eq(mem, (size_t)pages * (size_t)page);
		ck_assert_str_eq(what, "this machine's physical memory");
	}
	/* Nothing may allocate while the limit is low (ASan maps memory). */
	low = old;
	low.rlim_cur = mem / 2;
	set = setrlimit(RLIMIT_AS, &low);
	low_mem = config_mem_max(&low_what);
	restored = setrlimit(RLIMIT_AS, &old);
	ck_assert_int_eq(set, 0);
	ck_assert_int_eq(restored, 0);
	ck_assert_uint_eq(low_mem, mem / 2);
	ck_assert_str_eq(low_what, "this process's address-space limit (RLIMIT_AS, ulimit -v)");
}
END_TEST

/* The text is found on the setting's line or after it, and a comment that
 * names the setting is not taken for it. */
START_TEST(test_range_source_text)
{
	expect_ok(peer_conf("port", "port = 7100; # port = 99999999999999999999;"));
	ck_assert_uint_eq(cfg.peers[0].port, 7100);
	expect_error(peer_conf("port", "port = 99999999999999999999; # port = 7100;"), PEER_LINE, "peers.[0].port",
		     "(got 99999999999999999999)");
	expect_error(peer_conf("port", "port =\n 99999999999999999999;"), PEER_LINE, "peers.[0].port",
		     "too large: must be 1..65535 (got 99999999999999999999)");
	expect_error(peer_conf("port", "streams = 2; port : 99999999999999999999; block_size = 512;"), PEER_LINE,
		     "peers.[0].port", "(got 99999999999999999999)");
	/* In an @include file, that file's line. */
	write_file("inc.conf", "\ndrain_timeout = 1e300;\n", 0644);
	ck_assert_int_eq(load(root_conf(NULL, "@include \"inc.conf\"")), -1);
	ck_assert_msg(strstr(err, "/inc.conf:2: drain_timeout: too large: must be more than 0 and at most 86400 seconds "
				  "(got 1e300)") != NULL, "%s", err);
}
END_TEST

/* libconfig has no NaN and no infinity but 1e999 (tested above). */
START_TEST(test_range_nan)
{
	ck_assert_int_eq(load(root_conf(NULL, "drain_timeout = nan;")), -1);
	ck_assert_msg(strstr(err, "t.conf:1: syntax error") != NULL, "%s", err);
	ck_assert_int_eq(load(root_conf(NULL, "drain_timeout = inf;")), -1);
	ck_assert_msg(strstr(err, "t.conf:1: syntax error") != NULL, "%s", err);
}
END_TEST

Suite *make_config_suite(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_full);
	tcase_add_test(tc, test_control_socket_default);
	tcase_add_test(tc, test_no_peers);
	tcase_add_test(tc, test_int_or_float);
	tcase_add_loop_test(tc, test_size_ok, 0, N(sizes));
	tcase_add_loop_test(tc, test_size_bad, 0, N(bad_sizes));
	tcase_add_test(tc, test_block_size_suffix);
	tcase_add_loop_test(tc, test_bad_peer, 0, N(bad_peer));
	tcase_add_loop_test(tc, test_bad_root, 0, N(bad_root));
	tcase_add_test(tc, test_handshake);
	tcase_add_test(tc, test_peers_not_list);
	tcase_add_test(tc, test_syntax_error);
	tcase_add_test(tc, test_no_file);
	tcase_add_test(tc, test_duplicate_peer);
	tcase_add_test(tc, test_own_name_peer);
	tcase_add_test(tc, test_too_many_peers);
	tcase_add_test(tc, test_key_mode);
	tcase_add_test(tc, test_key_unreadable);
	tcase_add_test(tc, test_key_length);
	tcase_add_test(tc, test_key_relative_to_config);
	tcase_add_test(tc, test_print_round_trip);
	tcase_add_test(tc, test_small_err_buffer);
	tcase_add_test(tc, test_exec_defaults);
	tcase_add_loop_test(tc, test_bad_exec, 0, N(bad_exec));
	tcase_add_test(tc, test_exec_program_writable);
	tcase_add_test(tc, test_exec_not_root);
	tcase_add_test(tc, test_exec_print_round_trip);
	tcase_add_test(tc, test_congestion);
	tcase_add_test(tc, test_tcp_buffer);
	tcase_add_test(tc, test_parse_size_errors);
	tcase_add_test(tc, test_range_limits);
	tcase_add_test(tc, test_range_memory);
	tcase_add_test(tc, test_mem_max_rlimit);
	tcase_add_test(tc, test_range_source_text);
	tcase_add_test(tc, test_range_nan);
	suite_add_tcase(s, tc);
	return s;
}
