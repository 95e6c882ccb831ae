/*
 * check_linkturn.c - which blocks ahead of their turn wait in their conn,
 * and when their streams are let go (ldsd/linkturn.c), on a link and
 * streams made by hand whose transport only answers want_read and query.
 * The byte stream's side of it (stream_bytes.c) is what t_turn.sh and
 * tests/wan/t_lds_impaired.sh see through real sockets.
 */
#include <check.h>
#include <string.h>

#include "ldsd/link_int.h"
#include "suites.h"

#define MS 1000000ull

static struct link l;
static struct stream st[3];
static int reading[3];          /* what want_read last said, per stream */
static uint32_t path_rtt_us;

static int stream_no(struct lds_tp_conn *c)
{
	return (int)((int *)c - reading);
}

static void fake_want_read(struct lds_tp_conn *c, int on)
{
	reading[stream_no(c)] = on;
}

static int fake_query(struct lds_tp_conn *c, struct lds_tp_info *info)
{
	(void)c;
	memset(info, 0, sizeof(*info));
	info->min_rtt_us = path_rtt_us;
	return 0;
}

static const struct lds_transport_ops fake_ops = {
	.name = "fake",
	.want_read = fake_want_read,
	.query = fake_query,
};

static void setup(void)
{
	memset(&l, 0, sizeof(l));
	memset(st, 0, sizeof(st));
	for (int i = 0; i < 3; i++) {
		st[i].st = ST_UP;
		st[i].ops = &fake_ops;
		st[i].conn = (struct lds_tp_conn *)&reading[i];
		st[i].idx = i;
		st[i].link = &l;
		l.streams[i] = &st[i];
		reading[i] = 1;
	}
	l.nstreams = 3;
	l.rb.recv_cum = 10;
	path_rtt_us = 50;
}

/* What stream_bytes.c does when wait_turn says 1, at now. */
static void park(int i, uint64_t seq, uint64_t now)
{
	ck_assert_int_eq(linkturn_wait(&l, seq), 1);
	stream_park(&st[i], seq);
	ck_assert_int_eq(reading[i], 0);
	st[i].rx_wait_ns = now;
}

/* On a short path a block ahead of its turn waits, and its stream is let
 * go once the blocks before it came; the block expected never waits. */
START_TEST(t_turn_comes)
{
	linkturn_tick(&l, 1 * MS);
	ck_assert_int_eq(linkturn_wait(&l, 10), 0);
	park(1, 13, 1 * MS);
	ck_assert_uint_eq(l.blocks_parked, 1);
	linkturn_release(&l);
	ck_assert_int_eq(st[1].parked, STREAM_PARKED);
	ck_assert_int_eq(reading[1], 0);
	l.rb.recv_cum = 12;
	linkturn_release(&l);
	ck_assert_int_eq(reading[1], 0);
	l.rb.recv_cum = 13;
	linkturn_release(&l);
	ck_assert_int_eq(st[1].parked, STREAM_RELEASED);
	ck_assert_int_eq(reading[1], 1);
}
END_TEST

/* Over a WAN no block waits, and one parked while the path looked short
 * is let go at the tick that finds it long. */
START_TEST(t_long_path)
{
	linkturn_tick(&l, 1 * MS);
	park(0, 12, 1 * MS);
	path_rtt_us = 5000;
	linkturn_tick(&l, 2 * MS);
	ck_assert_int_eq(reading[0], 1);
	ck_assert_int_eq(linkturn_wait(&l, 14), 0);
	path_rtt_us = 0;
	linkturn_tick(&l, 3 * MS);
	ck_assert_int_eq(linkturn_wait(&l, 14), 0);
}
END_TEST

/* A block that waited 20 ms lets every parked stream go, and none parks
 * again until the highest block seen then is the one expected. */
START_TEST(t_waited_too_long)
{
	linkturn_tick(&l, 1 * MS);
	l.rb.held_end = 12;
	park(1, 13, 1 * MS);
	park(2, 17, 5 * MS);
	linkturn_tick(&l, 20 * MS);
	ck_assert_int_eq(reading[1] + reading[2], 0);
	linkturn_tick(&l, 22 * MS);
	ck_assert_int_eq(reading[1], 1);
	ck_assert_int_eq(reading[2], 1);
	ck_assert_int_eq(linkturn_wait(&l, 20), 0);
	l.rb.recv_cum = 17;
	ck_assert_int_eq(linkturn_wait(&l, 20), 0);
	l.rb.recv_cum = 18;
	ck_assert_int_eq(linkturn_wait(&l, 20), 1);
}
END_TEST

/* With no stream left running (the others parked, one stalled), all go:
 * the block expected may lie behind a parked one. */
START_TEST(t_none_running)
{
	linkturn_tick(&l, 1 * MS);
	park(0, 20, 1 * MS);
	park(1, 15, 1 * MS);
	linkturn_release(&l);
	ck_assert_int_eq(reading[0] + reading[1], 0);
	st[2].stalled = 1;
	linkturn_release(&l);
	ck_assert_int_eq(reading[0], 1);
	ck_assert_int_eq(reading[1], 1);
	ck_assert_int_eq(linkturn_wait(&l, 25), 0);
}
END_TEST

/* A stream that breaks lets the parked ones go: its blocks come again
 * behind theirs. */
START_TEST(t_stream_broke)
{
	linkturn_tick(&l, 1 * MS);
	park(2, 30, 1 * MS);
	l.streams[0] = NULL;
	linkturn_stop(&l);
	ck_assert_int_eq(st[2].parked, STREAM_RELEASED);
	ck_assert_int_eq(reading[2], 1);
	l.rb.recv_cum = 30;
	ck_assert_int_eq(linkturn_wait(&l, 33), 0);
	l.rb.recv_cum = 31;
	ck_assert_int_eq(linkturn_wait(&l, 33), 1);
}
END_TEST

Suite *make_linkturn_suite(void)
{
	Suite *s = suite_create("linkturn");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, t_turn_comes);
	tcase_add_test(tc, t_long_path);
	tcase_add_test(tc, t_waited_too_long);
	tcase_add_test(tc, t_none_running);
	tcase_add_test(tc, t_stream_broke);
	suite_add_tcase(s, tc);
	return s;
}
