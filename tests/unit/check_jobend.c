/* check_jobend.c - ended jobs' tags (ldsd/jobmark.c) and what their end
 * drops from the endpoint table (ldsd/jobend.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/jobend.h"
#include "suites.h"

#define S 1000000000ull

static int link_a;

static struct rb_msg *msg(uint32_t len)
{
	struct rb_msg *m = calloc(1, sizeof(*m));

	ck_assert_ptr_nonnull(m);
	m->rec.len = len;
	m->origin = &link_a;
	m->data = malloc(len ? len : 1);
	return m;
}

static int ndropped;   /* EP_DROP_ENDED */

static void on_drop(void *arg, struct endpoint *e, struct rb_msg *m, enum ep_drop why)
{
	(void)arg;
	(void)e;
	ndropped += why == EP_DROP_ENDED;
	rb_msg_free(m);
}

START_TEST(t_tags)
{
	ck_assert(jobmark_tag_valid("0123456789abcdef"));
	ck_assert(jobmark_tag_valid("ABCDefgh"));
	ck_assert(!jobmark_tag_valid("0123456"));                               /* too short */
	ck_assert(!jobmark_tag_valid("0123456789abcdef0123456789abcdef0"));     /* too long */
	ck_assert(!jobmark_tag_valid("0123456789-bcdef"));
	ck_assert(!jobmark_tag_valid(""));
	ck_assert(jobmark_endpoint_of("A/cm-B-0123456789abcdef", "0123456789abcdef"));
	ck_assert(jobmark_endpoint_of("A/x-0123456789abcdef", "0123456789abcdef"));
	ck_assert(!jobmark_endpoint_of("A/-0123456789abcdef", "0123456789abcdef"));   /* nothing before the dash */
	ck_assert(!jobmark_endpoint_of("A/x0123456789abcdef", "0123456789abcdef"));
	ck_assert(!jobmark_endpoint_of("A/x-10123456789abcdef", "0123456789abcdef"));
	ck_assert(!jobmark_endpoint_of("A/x-0123456789abcde", "0123456789abcdef"));
	ck_assert(!jobmark_endpoint_of("0123456789abcdef", "0123456789abcdef"));
}
END_TEST

/* Marks are bounded: the oldest goes first; and they expire. */
START_TEST(t_marks)
{
	static struct jobmarks jm;
	char tag[32], name[64];

	memset(&jm, 0, sizeof(jm));
	for (unsigned i = 0; i <= JOBMARK_MAX; i++) {
		snprintf(tag, sizeof(tag), "tag%08u", i);
		jobmarks_add(&jm, tag, 10 * S + i);
	}
	ck_assert(!jobmarks_has(&jm, "A/cm-tag00000000"));
	ck_assert(jobmarks_has(&jm, "A/cm-tag00000001"));
	snprintf(name, sizeof(name), "A/cm-tag%08u", JOBMARK_MAX);
	ck_assert(jobmarks_has(&jm, name));
	ck_assert(!jobmarks_has(&jm, "A/cm"));
	jobmarks_expire(&jm, 10 * S + 1);
	ck_assert(!jobmarks_has(&jm, "A/cm-tag00000001"));
	ck_assert(jobmarks_has(&jm, "A/cm-tag00000002"));
	/* Marking a tag again renews it in place. */
	jobmarks_add(&jm, "tag00000002", 100 * S);
	jobmarks_expire(&jm, 50 * S);
	ck_assert(jobmarks_has(&jm, "A/cm-tag00000002"));
	ck_assert(!jobmarks_has(&jm, "A/cm-tag00000003"));
}
END_TEST

START_TEST(t_recent)
{
	static struct jobrecent jr;
	char req[64];

	memset(&jr, 0, sizeof(jr));
	jobrecent_add(&jr, "A/auto-1", 7);
	ck_assert(jobrecent_has(&jr, "A/auto-1", 7));
	ck_assert(!jobrecent_has(&jr, "A/auto-1", 8));
	ck_assert(!jobrecent_has(&jr, "A/auto-2", 7));
	for (unsigned i = 0; i < JOBMARK_RECENT; i++) {
		snprintf(req, sizeof(req), "B/auto-%u", i);
		jobrecent_add(&jr, req, i);
	}
	ck_assert(!jobrecent_has(&jr, "A/auto-1", 7));
	ck_assert(jobrecent_has(&jr, "B/auto-0", 0));
}
END_TEST

/* Ending a tag: refused while another uid owns one of its endpoints;
 * then what its endpoints without a process hold is dropped, an open one
 * keeps its queue, and later messages for them are refused (ENDED). */
START_TEST(t_end)
{
	struct eptab t;
	struct endpoint *a, *b, *other, *open;
	char why[160];
	int client;

	ck_assert_int_eq(eptab_init(&t, 60 * S, 60 * S), 0);
	ck_assert_int_eq(eptab_pool(&t, &link_a, 1 << 20), 0);
	a = eptab_get(&t, "A/cm-B-0123456789abcdef", 0);
	b = eptab_get(&t, "A/cm-0123456789abcdef", 0);
	other = eptab_get(&t, "A/cm-0123456789abcdee", 0);
	open = eptab_get(&t, "A/w-0123456789abcdef", 0);
	for (int i = 0; i < 3; i++) {
		eptab_enqueue(&t, a, msg(10), 0);
		eptab_enqueue(&t, other, msg(10), 0);
	}
	eptab_enqueue(&t, b, msg(10), 0);
	eptab_attach(&t, open, (struct client *)&client, 0);
	eptab_enqueue(&t, open, msg(10), 0);
	a->owned = 1;
	a->owner = 1000;
	ndropped = 0;
	ck_assert_int_eq(jobend_end(&t, "0123456789abcdef", 1001, S, on_drop, NULL, why, sizeof(why)), -EPERM);
	ck_assert_str_eq(why, "endpoint A/cm-B-0123456789abcdef of job 0123456789abcdef belongs to uid 1000");
	ck_assert_int_eq(jobend_end(&t, "short", 1000, S, on_drop, NULL, why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(ndropped, 0);
	ck_assert_uint_eq(a->queued, 3);
	ck_assert_int_eq(jobend_end(&t, "0123456789abcdef", 1000, S, on_drop, NULL, why, sizeof(why)), 4);
	ck_assert_int_eq(ndropped, 4);
	ck_assert_uint_eq(a->queued, 0);
	ck_assert_uint_eq(other->queued, 3);
	ck_assert_uint_eq(open->queued, 1);
	/* b was never opened: forgotten once empty. */
	ck_assert_ptr_null(eptab_find(&t, "A/cm-0123456789abcdef"));
	struct rb_msg *late = msg(10);
	ck_assert_int_eq(eptab_admit(&t, a, late), EP_DROP_ENDED);
	ck_assert_int_eq(eptab_admit(&t, open, late), EP_DROP_NONE);
	ck_assert_int_eq(eptab_admit(&t, other, late), EP_DROP_NONE);
	/* After undelivered_ttl the mark is gone: late messages wait again. */
	eptab_expire(&t, 62 * S, on_drop, NULL);
	ck_assert_int_eq(ndropped, 4);
	ck_assert_int_eq(eptab_admit(&t, eptab_get(&t, "A/cm-0123456789abcdef", 62 * S), late), EP_DROP_NONE);
	rb_msg_free(late);
	eptab_free(&t);
}
END_TEST

Suite *make_jobend_suite(void)
{
	Suite *s = suite_create("jobend");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, t_tags);
	tcase_add_test(tc, t_marks);
	tcase_add_test(tc, t_recent);
	tcase_add_test(tc, t_end);
	suite_add_tcase(s, tc);
	return s;
}
