/*
 * check_wanemu_path.c - one direction of wanemu's emulated link
 * (tools/wanemu/path.c) on made-up times: where random loss acts.  After
 * the bottleneck queue (loss_at=wire, the default) a lost packet used the
 * link's time, so the bytes forwarded fall short of the rate by the loss;
 * before it (loss_at=enqueue, netem's order) they equal the rate.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "tools/wanemu/wanemu.h"

#define MS 1000000ull
#define T0 (1000 * MS)
#define IP_LEN 1000
#define NPKTS 1000

/* A UDP datagram of IP_LEN bytes behind a zeroed vnet header. */
static void make_pkt(unsigned char *p)
{
	memset(p, 0, WE_VNET_LEN + IP_LEN);
	p[WE_VNET_LEN] = 0x45;
	p[WE_VNET_LEN + 2] = IP_LEN >> 8;
	p[WE_VNET_LEN + 3] = IP_LEN & 0xff;
	p[WE_VNET_LEN + 8] = 64;
	p[WE_VNET_LEN + 9] = 17;
}

/* NPKTS packets arrive at once at a 8 Mbit/s bottleneck (1 ms each) with
 * room for all of them and 5 % loss; returns what the direction forwarded
 * in the first 500 ms and leaves its counters in *st. */
static uint64_t forwarded_in_500ms(const char *spec, struct dir_stats *st)
{
	static struct dir d;
	unsigned char pkt[WE_VNET_LEN + IP_LEN];
	char err[256];
	struct pkt *p;

	memset(&d, 0, sizeof(d));
	dirconf_init(&d.conf);
	ck_assert_msg(spec_apply(&d.conf, spec, err, sizeof(err)) == 0, "%s: %s", spec, err);
	path_init(&d, 7, T0);
	make_pkt(pkt);
	for (int i = 0; i < NPKTS; i++)
		ck_assert_int_eq(path_input(&d, pkt, sizeof(pkt), T0), 0);
	while ((p = path_pop_due(&d, T0 + 500 * MS)) != NULL) {
		path_delivered(&d, p, 1);
		free(p);
	}
	*st = d.st;
	path_flush(&d);
	return d.st.fwd_bytes;
}

START_TEST(test_loss_at_wire)
{
	struct dir_stats st;
	uint64_t fwd = forwarded_in_500ms("rate=8mbit,queue=2m,loss=5%", &st);

	/* 5 % of 1000: the binomial 99.9 % interval is 29..74. */
	ck_assert_uint_ge(st.drop_loss, 29);
	ck_assert_uint_le(st.drop_loss, 74);
	ck_assert_uint_eq(st.drop_queue, 0);
	/* 500 of the link's 1 ms slots passed; the lost ones among them
	 * carried nothing. */
	ck_assert_uint_le(fwd, 500ull * IP_LEN * 97 / 100);
	ck_assert_uint_ge(fwd, 500ull * IP_LEN * 90 / 100);
}
END_TEST

START_TEST(test_loss_at_enqueue)
{
	struct dir_stats st;
	uint64_t fwd = forwarded_in_500ms("rate=8mbit,queue=2m,loss=5%,loss_at=enqueue", &st);

	ck_assert_uint_ge(st.drop_loss, 29);
	ck_assert_uint_le(st.drop_loss, 74);
	/* The lost packets never queued: every slot carried one. */
	ck_assert_uint_eq(fwd, 500ull * IP_LEN);
	ck_assert_uint_eq(st.fwd_pkts, 500);
	/* Gilbert-Elliott loss acts there too. */
	fwd = forwarded_in_500ms("rate=8mbit,queue=2m,ge_p=1%,ge_r=20%,loss_at=enqueue", &st);
	ck_assert_uint_gt(st.drop_loss, 0);
	ck_assert_uint_eq(fwd, 500ull * IP_LEN);
}
END_TEST

/* The key parses, prints back where it is not the default, and refuses
 * other values with the value quoted. */
START_TEST(test_loss_at_spec)
{
	struct dirconf c;
	char err[256], out[256];
	FILE *f;

	dirconf_init(&c);
	ck_assert_int_eq(c.loss_enqueue, 0);
	ck_assert_int_eq(spec_apply(&c, "loss=1%,loss_at=enqueue", err, sizeof(err)), 0);
	ck_assert_int_eq(c.loss_enqueue, 1);
	f = fmemopen(out, sizeof(out), "w");
	ck_assert_ptr_nonnull(f);
	spec_print(f, &c);
	fclose(f);
	ck_assert_str_eq(out, "loss=1%,loss_at=enqueue");
	ck_assert_int_eq(spec_apply(&c, "loss_at=wire", err, sizeof(err)), 0);
	ck_assert_int_eq(c.loss_enqueue, 0);
	ck_assert_int_eq(spec_apply(&c, "loss_at=queue", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "bad value 'queue' for loss_at");
	ck_assert_int_eq(c.loss_enqueue, 0);
}
END_TEST

Suite *make_wanemu_path_suite(void)
{
	Suite *s = suite_create("wanemu_path");
	TCase *tc = tcase_create("wanemu_path");

	tcase_add_test(tc, test_loss_at_wire);
	tcase_add_test(tc, test_loss_at_enqueue);
	tcase_add_test(tc, test_loss_at_spec);
	suite_add_tcase(s, tc);
	return s;
}
