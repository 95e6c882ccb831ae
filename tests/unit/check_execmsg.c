/* check_execmsg.c - exec service messages (ldsd/execmsg.c): round trips,
 * every truncation and trailing byte refused, limits, hostile strings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/execmsg.h"
#include "suites.h"

static const char *args0[] = { "-n", "256", "" };
static const char *env0[] = { "MWL_ROLE=submaster", "MWL_RANK=0" };
static const char *env1[] = { "MWL_ROLE=cm" };

/* A START with two ranks, two files and every string field set. */
static void sample_start(struct exec_msg *m, struct exec_rank ranks[2])
{
	memset(m, 0, sizeof(*m));
	m->type = EXEC_START;
	m->job = 0xA1B2C3D4u;
	m->start.uid = 1000;
	m->start.user = "alice";
	m->start.timeout = 3600;
	m->start.lease = 90;
	m->start.hosts = "b01,b02:4";
	m->start.hostfile = "";
	m->start.collect = "report.json";
	m->start.files[0] = (struct exec_file){ "mw.conf", (const uint8_t *)"A = 1;\n", 7 };
	m->start.files[1] = (struct exec_file){ "empty", NULL, 0 };
	m->start.nfiles = 2;
	ranks[0] = (struct exec_rank){ "/opt/app/mw_matmul", args0, 3, env0, 2 };
	ranks[1] = (struct exec_rank){ "/opt/app/mw_matmul", NULL, 0, env1, 1 };
	m->start.ranks = ranks;
	m->start.nranks = 2;
}

static uint8_t *encode(const struct exec_msg *m, size_t *len)
{
	size_t n = exec_encode(m, NULL, 0);
	uint8_t *buf;

	ck_assert_uint_gt(n, 0);
	buf = malloc(n);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(exec_encode(m, buf, n), n);
	ck_assert_uint_eq(exec_encode(m, buf, n - 1), 0);  /* one byte short */
	*len = n;
	return buf;
}

START_TEST(test_start_round_trip)
{
	struct exec_rank ranks[2];
	struct exec_msg m, d;
	size_t n;
	uint8_t *buf;

	sample_start(&m, ranks);
	buf = encode(&m, &n);
	ck_assert_int_eq(exec_decode(buf, n, &d), 0);
	/* File data points into the message... */
	ck_assert_uint_eq(d.start.files[0].len, 7);
	ck_assert_int_eq(memcmp(d.start.files[0].data, "A = 1;\n", 7), 0);
	/* ...the decoded strings live in the arena, not in buf. */
	memset(buf, 0xEE, n);
	free(buf);
	ck_assert_uint_eq(d.type, EXEC_START);
	ck_assert_uint_eq(d.job, 0xA1B2C3D4u);
	ck_assert_uint_eq(d.start.uid, 1000);
	ck_assert_str_eq(d.start.user, "alice");
	ck_assert_uint_eq(d.start.timeout, 3600);
	ck_assert_uint_eq(d.start.lease, 90);
	ck_assert_str_eq(d.start.hosts, "b01,b02:4");
	ck_assert_str_eq(d.start.hostfile, "");
	ck_assert_str_eq(d.start.collect, "report.json");
	ck_assert_uint_eq(d.start.nfiles, 2);
	ck_assert_str_eq(d.start.files[0].name, "mw.conf");
	ck_assert_uint_eq(d.start.files[1].len, 0);
	ck_assert_uint_eq(d.start.nranks, 2);
	ck_assert_str_eq(d.start.ranks[0].program, "/opt/app/mw_matmul");
	ck_assert_uint_eq(d.start.ranks[0].nargs, 3);
	ck_assert_str_eq(d.start.ranks[0].args[1], "256");
	ck_assert_str_eq(d.start.ranks[0].args[2], "");
	ck_assert_uint_eq(d.start.ranks[0].nenv, 2);
	ck_assert_str_eq(d.start.ranks[0].env[0], "MWL_ROLE=submaster");
	ck_assert_uint_eq(d.start.ranks[1].nargs, 0);
	ck_assert_str_eq(d.start.ranks[1].env[0], "MWL_ROLE=cm");
	exec_msg_free(&d);
}
END_TEST

/* Every other type, each with its fields set. */
static void sample_other(int i, struct exec_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->job = (uint32_t)i + 7;
	switch (i) {
	case 0: m->type = EXEC_STOP; strcpy(m->text, "interrupted"); break;
	case 1: m->type = EXEC_STARTED; strcpy(m->text, "pid 77 as nobody"); break;
	case 2: m->type = EXEC_OUTPUT; m->stream = EXEC_STDERR; m->data = (const uint8_t *)"x\n\0y"; m->len = 4; break;
	case 3: m->type = EXEC_EXIT; m->status = -9; strcpy(m->text, "killed by signal 9"); break;
	case 4: m->type = EXEC_REFUSED; m->err = EACCES; strcpy(m->text, "not on the allow-list"); break;
	case 5: m->type = EXEC_END; strcpy(m->text, "0123456789abcdef"); break;
	default: m->type = EXEC_OUTPUT; m->stream = EXEC_COLLECTED; m->data = (const uint8_t *)"{}"; m->len = 2; break;
	}
}

START_TEST(test_other_round_trip)
{
	struct exec_msg m, d;
	size_t n;
	uint8_t *buf;

	sample_other(_i, &m);
	buf = encode(&m, &n);
	ck_assert_int_eq(exec_decode(buf, n, &d), 0);
	ck_assert_uint_eq(d.type, m.type);
	ck_assert_uint_eq(d.job, m.job);
	ck_assert_str_eq(d.text, m.text);
	ck_assert_int_eq(d.status, m.status);
	ck_assert_int_eq(d.err, m.err);
	ck_assert_uint_eq(d.stream, m.stream);
	ck_assert_uint_eq(d.len, m.len);
	if (m.len)
		ck_assert_int_eq(memcmp(d.data, m.data, m.len), 0);
	exec_msg_free(&d);
	free(buf);
}
END_TEST

/* Every proper prefix and every extension by one byte is malformed,
 * but for OUTPUT, whose data is the rest of the message. */
START_TEST(test_truncated_and_trailing)
{
	struct exec_rank ranks[2];
	struct exec_msg m, d;
	size_t n;
	uint8_t *buf, *big;

	if (_i == 7)
		sample_start(&m, ranks);
	else
		sample_other(_i, &m);
	buf = encode(&m, &n);
	for (size_t k = 0; k < n; k++) {
		uint8_t *cut = malloc(k ? k : 1);

		memcpy(cut, buf, k);
		/* OUTPUT's data is the rest of the message: a prefix holding
		 * at least one byte of it is a shorter OUTPUT. */
		if (m.type == EXEC_OUTPUT && k >= 8)
			ck_assert(exec_decode(cut, k, &d) == 0 && d.len == k - 7);
		else
			ck_assert_msg(exec_decode(cut, k, &d) == -EBADMSG, "prefix of %zu of %zu bytes accepted", k, n);
		free(cut);
	}
	big = malloc(n + 1);
	memcpy(big, buf, n);
	big[n] = 'x';
	if (m.type == EXEC_OUTPUT) {
		ck_assert_int_eq(exec_decode(big, n + 1, &d), 0);
		ck_assert_uint_eq(d.len, m.len + 1);
	} else {
		ck_assert_int_eq(exec_decode(big, n + 1, &d), -EBADMSG);
	}
	free(big);
	free(buf);
}
END_TEST

START_TEST(test_bad_version_and_type)
{
	struct exec_msg m, d;
	size_t n;
	uint8_t *buf;

	sample_other(0, &m);
	buf = encode(&m, &n);
	buf[0] = 1;   /* version 1: START without its requester */
	ck_assert_int_eq(exec_decode(buf, n, &d), -EPROTONOSUPPORT);
	buf[0] = EXEC_VERSION;
	buf[1] = EXEC_TYPE_MAX;
	ck_assert_int_eq(exec_decode(buf, n, &d), -EBADMSG);
	buf[1] = 0;
	ck_assert_int_eq(exec_decode(buf, n, &d), -EBADMSG);
	free(buf);
}
END_TEST

/* The encoder refuses what the decoder would refuse. */
START_TEST(test_encode_refuses)
{
	struct exec_rank ranks[2];
	struct exec_msg m;
	static const char *nl[] = { "MWL_X=a\nb" };
	char big[EXEC_MAX_STR + 2];

	sample_start(&m, ranks);
	m.start.collect = "../etc/passwd";
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	sample_start(&m, ranks);
	m.start.files[0].name = ".hidden";
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	sample_start(&m, ranks);
	ranks[1].env = nl;
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	sample_start(&m, ranks);
	ranks[0].program = "";
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	sample_start(&m, ranks);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	m.start.hosts = big;
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	sample_start(&m, ranks);
	m.start.nranks = 0;
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	sample_other(2, &m);
	m.len = EXEC_MAX_CHUNK + 1;
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	sample_other(4, &m);
	m.err = 0;
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
}
END_TEST

#define REQ (6 + 4 + 1 + 5 + 4)   /* header, uid, user "alice", timeout */

/* Hand-made hostile STARTs: counts beyond the limits or the bytes there,
 * a NUL or control character inside a string, a bad file name. */
START_TEST(test_hostile_start)
{
	struct exec_rank ranks[2];
	struct exec_msg m, d;
	size_t n, at;
	uint8_t *buf;

	sample_start(&m, ranks);
	buf = encode(&m, &n);
	/* hosts' first byte: after the 6-byte header, uid, user, timeout,
	 * lease, hosts' length. */
	at = REQ + 4 + 2;
	buf[at] = '\0';
	ck_assert_int_eq(exec_decode(buf, n, &d), -EBADMSG);
	buf[at] = '\n';
	ck_assert_int_eq(exec_decode(buf, n, &d), -EBADMSG);
	buf[at] = 'b';
	ck_assert_int_eq(exec_decode(buf, n, &d), 0);
	exec_msg_free(&d);
	/* hosts' length claims far more than the message holds. */
	buf[REQ + 4] = 0xFF;
	ck_assert_int_eq(exec_decode(buf, n, &d), -EBADMSG);
	free(buf);

	sample_start(&m, ranks);
	m.start.collect = "";
	m.start.nfiles = 0;
	buf = encode(&m, &n);
	/* nranks sits right after an empty collect and nfiles 0. */
	at = REQ + 4 + 2 + strlen("b01,b02:4") + 2 + 1 + 1;
	ck_assert_uint_eq(buf[at], 0);
	ck_assert_uint_eq(buf[at + 1], 2);
	buf[at + 1] = 0;
	ck_assert_int_eq(exec_decode(buf, n, &d), -EBADMSG);
	buf[at] = 0xFF;
	buf[at + 1] = 0xFF;
	ck_assert_int_eq(exec_decode(buf, n, &d), -EBADMSG);
	free(buf);
}
END_TEST

/* The requester, read by the requesting gateway without a full decode;
 * a user name that is not one is refused both ways. */
START_TEST(test_requester)
{
	struct exec_rank ranks[2];
	struct exec_msg m, d;
	char user[EXEC_USER_MAX + 1];
	uint32_t uid = 0;
	size_t n;
	uint8_t *buf;

	sample_start(&m, ranks);
	buf = encode(&m, &n);
	ck_assert_int_eq(exec_peek_requester(buf, n, &uid, user), 1);
	ck_assert_uint_eq(uid, 1000);
	ck_assert_str_eq(user, "alice");
	ck_assert_int_eq(exec_peek_requester(buf, 12, &uid, user), -EBADMSG);
	buf[11] = ' ';   /* "alice" -> "a ice" */
	ck_assert_int_eq(exec_peek_requester(buf, n, &uid, user), -EBADMSG);
	ck_assert_int_eq(exec_decode(buf, n, &d), -EBADMSG);
	buf[11] = '\0';
	ck_assert_int_eq(exec_peek_requester(buf, n, &uid, user), -EBADMSG);
	buf[0] = 1;
	ck_assert_int_eq(exec_peek_requester(buf, n, &uid, user), -EPROTONOSUPPORT);
	free(buf);
	sample_other(0, &m);
	buf = encode(&m, &n);
	ck_assert_int_eq(exec_peek_requester(buf, n, &uid, user), 0);
	free(buf);
	sample_start(&m, ranks);
	m.start.user = "-rf";
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	m.start.user = "";
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	m.start.user = "abcdefghijklmnopqrstuvwxyz0123456";   /* 33 */
	ck_assert_uint_eq(exec_encode(&m, NULL, 0), 0);
	ck_assert(exec_user_name_valid("svc.lds_2-a"));
}
END_TEST

START_TEST(test_file_names)
{
	ck_assert(exec_file_name_valid("mw.conf"));
	ck_assert(exec_file_name_valid("report-1_a.json"));
	ck_assert(!exec_file_name_valid(""));
	ck_assert(!exec_file_name_valid("."));
	ck_assert(!exec_file_name_valid(".."));
	ck_assert(!exec_file_name_valid(".profile"));
	ck_assert(!exec_file_name_valid("a/b"));
	ck_assert(!exec_file_name_valid("a b"));
	ck_assert(exec_file_name_valid("0123456789012345678901234567890123456789012345678901234567890123"));
	ck_assert(!exec_file_name_valid("01234567890123456789012345678901234567890123456789012345678901234"));
}
END_TEST

Suite *make_execmsg_suite(void)
{
	Suite *s = suite_create("execmsg");
	TCase *tc = tcase_create("codec");

	tcase_add_test(tc, test_start_round_trip);
	tcase_add_loop_test(tc, test_other_round_trip, 0, 7);
	tcase_add_loop_test(tc, test_truncated_and_trailing, 0, 8);
	tcase_add_test(tc, test_bad_version_and_type);
	tcase_add_test(tc, test_encode_refuses);
	tcase_add_test(tc, test_hostile_start);
	tcase_add_test(tc, test_requester);
	tcase_add_test(tc, test_file_names);
	suite_add_tcase(s, tc);
	return s;
}
