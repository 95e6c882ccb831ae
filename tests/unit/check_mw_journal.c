/*
 * check_mw_journal.c - the journal of joined results: written records
 * replay in order with their bytes, a torn tail is cut off and reported,
 * a journal of another problem or a corrupt header is refused.
 */
#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "launcher/mw_journal.h"
#include "suites.h"

#define FP 0x0123456789abcdefull   /* a job's fingerprint */

static char path[PATH_MAX];
static char err[512];
static uint64_t got_ids[16];
static char got_data[16][32];
static int ngot;

static void setup(void)
{
	int fd;

	snprintf(path, sizeof(path), "%s/mw-journal-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ngot = 0;
}

static void teardown(void)
{
	unlink(path);
}

static int collect(void *arg, uint64_t id, const void *data, size_t len)
{
	(void)arg;
	ck_assert_int_lt(ngot, 16);
	ck_assert_uint_lt(len, 32);
	got_ids[ngot] = id;
	memcpy(got_data[ngot], data, len);
	got_data[ngot][len] = '\0';
	ngot++;
	return 0;
}

static int refuse(void *arg, uint64_t id, const void *data, size_t len)
{
	(void)arg, (void)id, (void)data, (void)len;
	return -1;
}

static void write_three(void)
{
	struct mw_journal j;

	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP, false, false, collect, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(mw_journal_append(&j, 4, "four", 4), 0);
	ck_assert_int_eq(mw_journal_append(&j, 0, "", 0), 0);
	ck_assert_int_eq(mw_journal_append(&j, 9, "nine!", 5), 0);
	ck_assert_uint_eq(j.records, 3);
	mw_journal_close(&j);
}

START_TEST(round_trip)
{
	struct mw_journal j;

	write_three();
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP, true, false, collect, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(ngot, 3);
	ck_assert_uint_eq(got_ids[0], 4);
	ck_assert_str_eq(got_data[0], "four");
	ck_assert_uint_eq(got_ids[1], 0);
	ck_assert_str_eq(got_data[1], "");
	ck_assert_uint_eq(got_ids[2], 9);
	ck_assert_str_eq(got_data[2], "nine!");
	ck_assert_uint_eq(j.torn, 0);
	/* appending after a resume continues the same file */
	ck_assert_int_eq(mw_journal_append(&j, 5, "five", 4), 0);
	mw_journal_close(&j);
	ngot = 0;
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP, true, false, collect, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(ngot, 4);
	ck_assert_str_eq(got_data[3], "five");
	mw_journal_close(&j);
}
END_TEST

START_TEST(torn_tail)
{
	struct mw_journal j;
	struct stat st;

	write_three();
	ck_assert_int_eq(stat(path, &st), 0);
	/* a crash in the middle of the last record */
	ck_assert_int_eq(truncate(path, st.st_size - 2), 0);
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP, true, false, collect, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(ngot, 2);
	ck_assert_uint_eq(j.torn, 16 + 5 - 2);
	mw_journal_close(&j);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_size, 32 + 16 + 4 + 16);
}
END_TEST

START_TEST(corrupt_record)
{
	struct mw_journal j;
	int fd;

	write_three();
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	/* flip a byte of the second record's header: it and all after go */
	ck_assert_int_eq(pwrite(fd, "\xff", 1, 32 + 16 + 4 + 3), 1);
	close(fd);
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP, true, false, collect, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(ngot, 1);
	ck_assert_uint_gt(j.torn, 0);
	mw_journal_close(&j);
}
END_TEST

START_TEST(refusals)
{
	struct mw_journal j;
	int fd;

	write_three();
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 11, FP, true, false, collect, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "another problem"));
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_int_eq(mw_journal_open(&j, path, "other", 10, FP, true, false, collect, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "another problem"));
	/* Same application and task count, another job (other arguments). */
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP + 1, true, false, collect, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "another job: its arguments or inputs differ"));
	ck_assert_int_eq(ngot, 0);
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP, true, false, refuse, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "refused"));
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "X", 1, 0), 1);
	close(fd);
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP, true, false, collect, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "bad header"));
	unlink(path);
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP, true, false, collect, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "nothing to resume"));
}
END_TEST

/* A journal of the first format (no fingerprint) is refused, not misread. */
START_TEST(old_format)
{
	struct mw_journal j;
	int fd;

	write_three();
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, "MWJRNL1", 8, 0), 8);
	close(fd);
	ck_assert_int_eq(mw_journal_open(&j, path, "app", 10, FP, true, false, collect, NULL, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "older libmw"));
}
END_TEST

/* The arguments' hash: argv[0] does not count, argument boundaries do,
 * and the application's value changes the fingerprint. */
START_TEST(fingerprints)
{
	char *a[] = { "/x/app", "-n", "8", NULL }, *b[] = { "./app", "-n", "8", NULL };
	char *c[] = { "app", "ab", "c", NULL }, *d[] = { "app", "a", "bc", NULL }, *e[] = { "app", "-n", "9", NULL };

	ck_assert(mw_journal_args(3, a) == mw_journal_args(3, b));
	ck_assert(mw_journal_args(3, c) != mw_journal_args(3, d));
	ck_assert(mw_journal_args(3, a) != mw_journal_args(3, e));
	ck_assert(mw_journal_fingerprint(mw_journal_args(3, a), 0) != mw_journal_fingerprint(mw_journal_args(3, a), 1));
	ck_assert(mw_journal_fingerprint(7, 42) == mw_journal_fingerprint(7, 42));
}
END_TEST

Suite *make_mw_journal_suite(void)
{
	Suite *s = suite_create("mw_journal");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, torn_tail);
	tcase_add_test(tc, corrupt_record);
	tcase_add_test(tc, refusals);
	tcase_add_test(tc, old_format);
	tcase_add_test(tc, fingerprints);
	suite_add_tcase(s, tc);
	return s;
}
