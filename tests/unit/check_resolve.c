/* check_resolve.c - name lookups off the event loop (ldsd/resolve.c) and
 * the choice of address for each connection attempt (ldsd/dial.c). */
#include <check.h>
#include <netdb.h>
#include <string.h>

#include "ldsd/clock.h"
#include "ldsd/dial.h"
#include "ldsd/evloop.h"
#include "ldsd/resolve.h"
#include "suites.h"

static struct resolve_addr addr(int family, const char *host)
{
	struct resolve_addr a = { .family = family };

	snprintf(a.host, sizeof(a.host), "%s", host);
	snprintf(a.text, sizeof(a.text), family == AF_INET6 ? "[%s]:7000" : "%s:7000", host);
	return a;
}

/* RFC 8305 section 4: families interleaved, IPv6 first, each family's
 * order kept. */
START_TEST(t_order_interleaves)
{
	struct resolve_addr a[5] = { addr(AF_INET, "192.0.2.1"), addr(AF_INET, "192.0.2.2"),
				     addr(AF_INET, "192.0.2.3"), addr(AF_INET6, "2001:db8::1"),
				     addr(AF_INET6, "2001:db8::2") };
	const char *want[5] = { "2001:db8::1", "192.0.2.1", "2001:db8::2", "192.0.2.2", "192.0.2.3" };

	resolve_order(a, 5);
	for (int i = 0; i < 5; i++)
		ck_assert_str_eq(a[i].host, want[i]);
}
END_TEST

START_TEST(t_unbracket)
{
	char out[64];

	ck_assert_int_eq(resolve_unbracket("[::1]", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "::1");
	ck_assert_int_eq(resolve_unbracket("gw.example.org", out, sizeof(out)), 0);
	ck_assert_str_eq(out, "gw.example.org");
	ck_assert_int_eq(resolve_unbracket("[::1", out, sizeof(out)), -1);
	ck_assert_int_eq(resolve_unbracket("::1]", out, sizeof(out)), -1);
	ck_assert_int_eq(resolve_unbracket("[]", out, sizeof(out)), -1);
}
END_TEST

START_TEST(t_numeric)
{
	struct resolve_result r;

	ck_assert_int_eq(resolve_numeric("[::1]", 7001, &r), 0);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_str_eq(r.addrs[0].text, "[::1]:7001");
	ck_assert_int_eq(resolve_numeric("127.0.0.1", 7001, &r), 0);
	ck_assert_str_eq(r.addrs[0].text, "127.0.0.1:7001");
	ck_assert_int_eq(resolve_numeric("localhost", 7001, &r), -1);
}
END_TEST

/* The resolver's error, not errno's. */
START_TEST(t_strerror)
{
	struct resolve_result r = { .gai_err = EAI_NONAME };

	ck_assert_str_eq(resolve_strerror(&r), gai_strerror(EAI_NONAME));
}
END_TEST

struct got {
	struct evloop *ev;
	int calls;
	struct resolve_result r;
};

static void on_result(void *arg, const struct resolve_result *r)
{
	struct got *g = arg;

	g->calls++;
	g->r = *r;
	evloop_stop(g->ev);
}

static void on_timeout(uint64_t now, void *arg)
{
	evloop_stop(arg);
}

/* The answer comes from the loop, not from resolver_start; a cancelled
 * request never calls back. */
START_TEST(t_async_lookup)
{
	struct evloop *ev = evloop_new();
	struct resolver *rs = resolver_new(ev);
	struct got g = { .ev = ev }, cancelled = { .ev = ev };
	struct resolve_req *req;

	ck_assert_ptr_nonnull(rs);
	req = resolver_start(rs, "127.0.0.1", 7001, on_result, &cancelled);
	ck_assert_ptr_nonnull(req);
	resolve_cancel(req);
	ck_assert_ptr_nonnull(resolver_start(rs, "localhost", 7001, on_result, &g));
	ck_assert_int_eq(g.calls, 0);
	ck_assert_int_gt(evloop_tick_add(ev, 5000, on_timeout, ev), 0);
	ck_assert_int_eq(evloop_run(ev), 0);
	ck_assert_int_eq(g.calls, 1);
	ck_assert_int_eq(cancelled.calls, 0);
	ck_assert_int_eq(g.r.gai_err, 0);
	ck_assert_uint_ge(g.r.n, 1);
	/* A lookup still running when the resolver goes frees itself. */
	ck_assert_ptr_nonnull(resolver_start(rs, "localhost", 7001, on_result, &g));
	resolver_free(rs);
	evloop_free(ev);
}
END_TEST

static void no_ready(void *arg)
{
	ck_abort_msg("a numeric address needs no lookup");
}

/* Two addresses: a failure passes the turn to the other at once; when
 * both failed the round is over (back-off), and the next round starts
 * with the address that last connected. */
START_TEST(t_dial_rounds)
{
	struct dial d;
	struct resolve_addr a;
	uint64_t now = clock_now_ns();

	dial_init(&d, NULL, "clusterB", "::1", 7000, no_ready, NULL);
	ck_assert(d.numeric);
	d.addrs[1] = addr(AF_INET, "127.0.0.1");
	d.n = 2;
	ck_assert_int_eq(dial_pick(&d, now, &a), 1);
	ck_assert_str_eq(a.text, "[::1]:7000");
	ck_assert_int_eq(dial_failed(&d, a.text, "Connection refused", now), 1);
	ck_assert_int_eq(dial_pick(&d, now, &a), 1);
	ck_assert_str_eq(a.text, "127.0.0.1:7000");
	/* Another slot's attempt to the first address fails late: no change. */
	ck_assert_int_eq(dial_failed(&d, "[::1]:7000", "Connection refused", now), 1);
	ck_assert_int_eq(dial_failed(&d, a.text, "Connection refused", now), 0);
	ck_assert_int_eq(dial_pick(&d, now, &a), 1);
	ck_assert_str_eq(a.text, "[::1]:7000");
	ck_assert_int_eq(dial_failed(&d, a.text, "Connection refused", now), 1);
	ck_assert_int_eq(dial_pick(&d, now, &a), 1);
	dial_up(&d, a.text);
	ck_assert_int_eq(dial_pick(&d, now, &a), 1);
	ck_assert_str_eq(a.text, "127.0.0.1:7000");
	dial_fini(&d);
}
END_TEST

Suite *make_resolve_suite(void)
{
	Suite *s = suite_create("resolve");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, t_order_interleaves);
	tcase_add_test(tc, t_unbracket);
	tcase_add_test(tc, t_numeric);
	tcase_add_test(tc, t_strerror);
	tcase_add_test(tc, t_async_lookup);
	tcase_add_test(tc, t_dial_rounds);
	suite_add_tcase(s, tc);
	return s;
}
