/*
 * check_ldsbench.c - ldsbench's message checks catch what a broken link
 * would do to data (a flipped bit, blocks swapped inside a message, a
 * block of another message, a short message), and its status reader
 * takes ldsd's status apart (and refuses what is not JSON).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/jsonr.h"
#include "tools/ldsbench/ldsbench.h"
#include "suites.h"

#define SIZE (100u << 10)

static struct msg_pattern pat;
static uint8_t *a, *b;
static char why[256];

static void setup(void)
{
	ck_assert_int_eq(msg_pattern_init(&pat, SIZE), 0);
	a = malloc(SIZE);
	b = malloc(SIZE);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	msg_build_data(&pat, 3, 7, a);
	msg_build_data(&pat, 3, 8, b);
}

static void teardown(void)
{
	msg_pattern_free(&pat);
	free(a);
	free(b);
}

/* 0 if buf passes as what its header says. */
static int check(const uint8_t *buf, size_t len)
{
	struct msg_hdr h;

	ck_assert_int_eq(msg_parse(buf, len, &h, why, sizeof(why)), 0);
	return msg_check_data(buf, len, &h, why, sizeof(why));
}

START_TEST(test_intact)
{
	struct msg_hdr h;

	ck_assert_int_eq(check(a, SIZE), 0);
	ck_assert_int_eq(msg_parse(a, SIZE, &h, why, sizeof(why)), 0);
	ck_assert_int_eq(h.kind, MSG_DATA);
	ck_assert_uint_eq(h.run, 3);
	ck_assert_uint_eq(h.seq, 7);
	/* Two messages differ: the body carries its number. */
	ck_assert_int_ne(memcmp(a + MSG_HDR, b + MSG_HDR, SIZE - MSG_HDR), 0);
}
END_TEST

START_TEST(test_bit_flip)
{
	a[SIZE / 2] ^= 0x10;
	ck_assert_int_eq(check(a, SIZE), -1);
	ck_assert_msg(strstr(why, "CRC-32C") != NULL, "%s", why);
}
END_TEST

/* Two 64 KiB blocks of one message arrive in the wrong order. */
START_TEST(test_swapped_blocks)
{
	uint8_t *m = malloc(3 * 65536), *tmp = malloc(65536);
	struct msg_pattern big;

	ck_assert_int_eq(msg_pattern_init(&big, 3 * 65536), 0);
	msg_build_data(&big, 1, 1, m);
	memcpy(tmp, m + 65536, 65536);
	memcpy(m + 65536, m + 2 * 65536, 65536);
	memcpy(m + 2 * 65536, tmp, 65536);
	ck_assert_int_eq(check(m, 3 * 65536), -1);
	msg_pattern_free(&big);
	free(m);
	free(tmp);
}
END_TEST

/* A block of message 8 where message 7 should be. */
START_TEST(test_foreign_block)
{
	memcpy(a + 65536, b + 65536, 4096);
	ck_assert_int_eq(check(a, SIZE), -1);
	ck_assert_msg(strstr(why, "belong to message 8") != NULL, "%s", why);
}
END_TEST

START_TEST(test_short)
{
	ck_assert_int_eq(check(a, SIZE - 1), -1);
	ck_assert_msg(strstr(why, "header says") != NULL, "%s", why);
	ck_assert_int_eq(msg_parse(a, MSG_HDR - 1, &(struct msg_hdr){ 0 }, why, sizeof(why)), -1);
	a[0] ^= 1;
	ck_assert_int_eq(msg_parse(a, SIZE, &(struct msg_hdr){ 0 }, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "not ldsbench's") != NULL, "%s", why);
}
END_TEST

START_TEST(test_control_round_trip)
{
	struct msg_hdr h = { .kind = MSG_REPORT, .run = 9, .seq = 1, .a = 1ull << 40, .b = 123, .errors = 2 }, g;
	uint8_t buf[MSG_HDR];

	msg_build(&h, buf);
	ck_assert_int_eq(msg_parse(buf, sizeof(buf), &g, why, sizeof(why)), 0);
	ck_assert_int_eq(g.kind, MSG_REPORT);
	ck_assert_uint_eq(g.run, 9);
	ck_assert_uint_eq(g.a, 1ull << 40);
	ck_assert_uint_eq(g.b, 123);
	ck_assert_uint_eq(g.errors, 2);
}
END_TEST

/* -R and --bidir: a START carries the run asked back; a short START
 * (from before them) asks for nothing. */
START_TEST(test_start_round_trip)
{
	struct msg_start st = { .size = 65536, .flags = MSG_F_REVERSE | MSG_F_LAST, .seconds = 12.5,
				.interval = 0.25, .omit = 2, .wait = 30 }, got;
	struct msg_hdr h;
	uint8_t buf[MSG_START_LEN];

	msg_build_start(4, &st, buf);
	ck_assert_int_eq(msg_parse(buf, sizeof(buf), &h, why, sizeof(why)), 0);
	ck_assert_int_eq(h.kind, MSG_START);
	ck_assert_uint_eq(h.run, 4);
	msg_parse_start(buf, sizeof(buf), &h, &got);
	ck_assert_uint_eq(got.size, 65536);
	ck_assert_uint_eq(got.flags, MSG_F_REVERSE | MSG_F_LAST);
	ck_assert_double_eq_tol(got.seconds, 12.5, 1e-9);
	ck_assert_double_eq_tol(got.interval, 0.25, 1e-9);
	ck_assert_double_eq_tol(got.omit, 2, 1e-9);
	ck_assert_double_eq_tol(got.wait, 30, 1e-9);
	msg_parse_start(buf, MSG_HDR, &h, &got);
	ck_assert_uint_eq(got.flags, 0);
	ck_assert_uint_eq(got.size, 65536);
}
END_TEST

static const char status[] =
	"{\"cluster\":\"clusterA\",\"links\":[{\"peer\":\"clusterC\",\"streams\":1},"
	"{\"peer\":\"clusterB\",\"address\":\"10.0.0.2\",\"congestion\":\"cubic\",\"streams\":8,"
	"\"streams_auto\":true,\"streams_up\":7,\"srtt_ms\":250.5,\"transport_rtt_ms\":101.25,\"reconnects\":3,"
	"\"sent\":{\"bytes\":1,\"blocks_resent\":42},\"failures\":[{\"stream\":2,\"down_at\":100.5,"
	"\"up_at\":101.25,\"resent_at\":101.5,\"outage_s\":0.75,\"blocks_resent\":5,\"reason\":\"link \\\"x\\\" silent\\u0021\"}],"
	"\"failures_total\":1,\"last_error\":\"\"}],\"clients\":{\"endpoints\":[]}}";

START_TEST(test_linkstat)
{
	struct linkstat st;
	char err[128];

	ck_assert_int_eq(linkstat_parse(status, "clusterB", &st, err, sizeof(err)), 0);
	ck_assert_int_eq(st.valid, 1);
	ck_assert_str_eq(st.congestion, "cubic");
	ck_assert_uint_eq(st.streams, 8);
	ck_assert_uint_eq(st.streams_up, 7);
	ck_assert_int_eq(st.streams_auto, 1);
	ck_assert_uint_eq(st.blocks_resent, 42);
	ck_assert_uint_eq(st.reconnects, 3);
	ck_assert_double_eq(st.rtt_ms, 101.25);
	ck_assert_uint_eq(st.nfail, 1);
	ck_assert_int_eq(st.fail[0].stream, 2);
	ck_assert_double_eq(st.fail[0].up_at, 101.25);
	ck_assert_uint_eq(st.fail[0].blocks, 5);
	ck_assert_str_eq(st.fail[0].reason, "link \"x\" silent!");
	ck_assert_int_eq(linkstat_parse(status, "clusterD", &st, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "no link to cluster \"clusterD\"") != NULL, "%s", err);
}
END_TEST

static const char *const not_json[] = {
	"", "{", "{\"a\":}", "{\"a\" 1}", "[1,2", "{\"a\":1}x", "\"open", "{\"a\":tru}", "[1,,2]", "{\"\\q\":1}",
};

START_TEST(test_not_json)
{
	char err[128];
	struct linkstat st;

	ck_assert_ptr_null(jsonr_parse(not_json[_i], err, sizeof(err)));
	ck_assert_msg(strstr(err, "offset ") == err, "%s", err);
	ck_assert_int_eq(linkstat_parse(not_json[_i], "clusterB", &st, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "not JSON") != NULL, "%s", err);
}
END_TEST

START_TEST(test_json_values)
{
	char err[128];
	struct jsonr *v = jsonr_parse(" {\"n\": -1.5e2, \"t\": true, \"z\": null, \"a\": [1, [2], {}], \"s\": \"\\t\"} ",
				      err, sizeof(err));

	ck_assert_ptr_nonnull(v);
	ck_assert_double_eq(jsonr_num(jsonr_get(v, "n"), 0), -150);
	ck_assert_double_eq(jsonr_num(jsonr_get(v, "t"), 0), 1);
	ck_assert_int_eq(jsonr_get(v, "z")->type, JSONR_NULL);
	ck_assert_uint_eq(jsonr_get(v, "a")->n, 3);
	ck_assert_str_eq(jsonr_str(jsonr_get(v, "s")), "\t");
	ck_assert_ptr_null(jsonr_get(v, "missing"));
	ck_assert_double_eq(jsonr_num(jsonr_get(v, "s"), 7), 7);
	jsonr_free(v);
}
END_TEST

Suite *make_ldsbench_suite(void)
{
	Suite *s = suite_create("ldsbench");
	TCase *tc = tcase_create("ldsbench");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_intact);
	tcase_add_test(tc, test_bit_flip);
	tcase_add_test(tc, test_swapped_blocks);
	tcase_add_test(tc, test_foreign_block);
	tcase_add_test(tc, test_short);
	tcase_add_test(tc, test_control_round_trip);
	tcase_add_test(tc, test_start_round_trip);
	tcase_add_test(tc, test_linkstat);
	tcase_add_loop_test(tc, test_not_json, 0, (int)(sizeof(not_json) / sizeof(not_json[0])));
	tcase_add_test(tc, test_json_values);
	suite_add_tcase(s, tc);
	return s;
}
