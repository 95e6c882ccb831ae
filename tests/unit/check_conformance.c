/*
 * check_conformance.c - the same transport-level promises checked over
 * every registered transport (the built-in ones and the tests' samples,
 * tp_mem.c), in the manner of libfabric's fabtests, by one run of
 * tp_harness.h each: connect; byte-stream kinds' bytes of random sizes
 * arrive whole and in order (CRC-32C on both sides); message kinds'
 * messages of random sizes up to their max_msg (at most 64 KiB), from a
 * window of 8 buffers each rewritten right after its sent upcall, which
 * must come once per message, in send order, arrive with their lengths
 * and bytes; the sender closes only once every message is reported sent;
 * a close from either side ends the other's stream, and every close
 * brings one closed upcall, after the upcall it was made in, even when
 * made inside one.  The link-level half (blocks, loss, reconnects,
 * restarts) is check_link.c.
 */
#include <check.h>
#include <stdio.h>

#include "suites.h"
#include "tp_harness.h"
#include "tp_mem.h"

/* Kind i, 96 messages (about 3 MiB, as many bytes as a stream kind sends). */
static void start(int i)
{
	const struct lds_transport_ops *ops = transport_at((size_t)i);
	struct tp_run_params p = { .ops = ops, .nmsg = 96 };

	ck_assert_ptr_nonnull(ops);
	p.max_len = ops->caps.max_msg < 65536 ? ops->caps.max_msg : 65536;
	tp_run_start(&p);
}

/* Random sizes arrive whole and in order; the sender's close ends the
 * receiver's stream; each conn gets one closed upcall, never inside
 * another. */
START_TEST(test_stream)
{
	start(_i);
	tp_run_connect(tp_run.port);
	tp_run_loop();
	tp_run_check_delivery();
	tp_run_finish();
}
END_TEST

/* A conn closed inside its own readable upcall: nothing more is read from
 * it, its peer sees the end, and its closed upcall comes once, after. */
START_TEST(test_close_in_upcall)
{
	start(_i);
	tp_run_close_in_upcall();
	tp_run_finish();
}
END_TEST

Suite *make_conformance_suite(void)
{
	Suite *s = suite_create("conformance");
	TCase *tc = tcase_create("transport");
	int n = 0;

	/* Registered in the suite's process, which each test's inherits. */
	if ((transport_find(mem_transport_ops.name) == NULL && transport_register(&mem_transport_ops) < 0) ||
	    (transport_find(memmsg_transport_ops.name) == NULL && transport_register(&memmsg_transport_ops) < 0))
		fprintf(stderr, "conformance: cannot register the sample transports\n");
	while (transport_at((size_t)n) != NULL)
		n++;
	tcase_set_timeout(tc, 30);
	for (int i = 0; i < n; i++) {
		const struct lds_transport_ops *o = transport_at((size_t)i);
		char why[256];

		/* Check has no "skipped": a kind whose hardware is absent (RDMA
		 * here) is left out, saying so. */
		if (o->probe && o->probe(why, sizeof(why)) < 0) {
			fprintf(stderr, "conformance: %s: skipped: %s\n", o->name, why);
			continue;
		}
		tcase_add_loop_test(tc, test_stream, i, i + 1);
		tcase_add_loop_test(tc, test_close_in_upcall, i, i + 1);
	}
	suite_add_tcase(s, tc);
	return s;
}
