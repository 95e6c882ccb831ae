/*
 * check_mw_cache.c - the data cache between clusters: a block crosses
 * once and is named afterwards, the sub-master rebuilds every task byte
 * for byte, both sides stay within the budget (least recently used
 * out), and a recipe that lies is refused, never trusted.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/mw_cache.h"
#include "launcher/mw_proto.h"
#include "suites.h"

#define BLK 1000

static struct mw_cache_tx tx;
static struct mw_cache_rx rx;
static struct mw_buf recipe, task, out;
static char err[256];

static void teardown(void)
{
	mw_cache_tx_free(&tx);
	mw_cache_rx_free(&rx);
	free(recipe.data);
	free(task.data);
	free(out.data);
	recipe = task = out = (struct mw_buf){ 0 };
}

/* A task like matmul's: a 4-byte header, then blocks a and b, each
 * filled with bytes derived from its key. */
static void make_task(uint64_t a, uint64_t b, struct mw_block blk[2])
{
	unsigned char *p;

	task.len = 0;
	p = mw_buf_reserve(&task, 4 + 2 * BLK);
	ck_assert_ptr_nonnull(p);
	memcpy(p, "HDR!", 4);
	for (int i = 0; i < BLK; i++) {
		p[4 + i] = (unsigned char)(a * 31 + i);
		p[4 + BLK + i] = (unsigned char)(b * 31 + i);
	}
	task.len = 4 + 2 * BLK;
	blk[0] = (struct mw_block){ .key = a, .off = 4, .len = BLK };
	blk[1] = (struct mw_block){ .key = b, .off = 4 + BLK, .len = BLK };
}

/* Encodes the task, decodes it on the other side, checks the bytes;
 * returns the recipe's size. */
static size_t round_trip(uint64_t a, uint64_t b)
{
	struct mw_block blk[2];

	make_task(a, b, blk);
	recipe.len = out.len = 0;
	ck_assert_int_eq(mw_cache_encode(&tx, task.data, task.len, blk, 2, &recipe), 0);
	ck_assert_int_eq(mw_cache_decode(&rx, recipe.data, recipe.len, &out, err, sizeof(err)), 0);
	ck_assert_uint_eq(out.len, task.len);
	ck_assert(memcmp(out.data, task.data, task.len) == 0);
	ck_assert_uint_eq(tx.used, rx.used);
	ck_assert(tx.used <= tx.budget);
	return recipe.len;
}

START_TEST(blocks_cross_once)
{
	mw_cache_tx_init(&tx, 10 * BLK);
	mw_cache_rx_init(&rx, 10 * BLK);
	/* first time: header inline, both blocks stored */
	ck_assert_uint_eq(round_trip(1, 2), 3 * MW_SEG_LEN + 4 + 2 * BLK);
	/* block 1 again: named; block 3 new */
	ck_assert_uint_eq(round_trip(1, 3), 3 * MW_SEG_LEN + 4 + BLK);
	/* both known */
	ck_assert_uint_eq(round_trip(3, 2), 3 * MW_SEG_LEN + 4);
	ck_assert_uint_eq(tx.hits, 3);
	ck_assert_uint_eq(tx.saved, 3 * (BLK - MW_SEG_LEN));
}
END_TEST

START_TEST(tiny_blocks_save_nothing)
{
	/* a 4-byte block named again costs a 9-byte header: nothing saved */
	static const char t[] = "abcdTAIL";
	struct mw_block b = { .key = 7, .off = 0, .len = 4 };

	mw_cache_tx_init(&tx, 10 * BLK);
	mw_cache_rx_init(&rx, 10 * BLK);
	for (int i = 0; i < 2; i++) {
		recipe.len = out.len = 0;
		ck_assert_int_eq(mw_cache_encode(&tx, t, 8, &b, 1, &recipe), 0);
		ck_assert_int_eq(mw_cache_decode(&rx, recipe.data, recipe.len, &out, err, sizeof(err)), 0);
		ck_assert_uint_eq(out.len, 8);
		ck_assert(memcmp(out.data, t, 8) == 0);
	}
	ck_assert_uint_eq(tx.hits, 1);
	ck_assert_uint_eq(tx.saved, 0);
}
END_TEST

START_TEST(least_recently_used_out)
{
	/* room for three blocks */
	mw_cache_tx_init(&tx, 3 * BLK);
	mw_cache_rx_init(&rx, 3 * BLK);
	round_trip(1, 2);
	round_trip(3, 1);       /* 1 used again: 2 is the oldest */
	/* 4 evicts 2, 5 evicts 3; the remote frees them as told */
	round_trip(4, 5);
	ck_assert_uint_eq(tx.used, 3 * BLK);
	/* 1 is still there, 2 must cross again */
	ck_assert_uint_eq(round_trip(1, 2), 4 * MW_SEG_LEN + 4 + BLK);
	/* a block larger than the whole cache goes inline, uncached */
	mw_cache_tx_free(&tx);
	mw_cache_rx_free(&rx);
	mw_cache_tx_init(&tx, BLK / 2);
	mw_cache_rx_init(&rx, BLK / 2);
	ck_assert_uint_eq(round_trip(1, 2), 3 * MW_SEG_LEN + 4 + 2 * BLK);
	ck_assert_uint_eq(round_trip(1, 2), 3 * MW_SEG_LEN + 4 + 2 * BLK);
	ck_assert_uint_eq(tx.used, 0);
}
END_TEST

START_TEST(many_keys)
{
	/* enough keys to grow and rehash the mirror's table, evicting all
	 * the way; every task still rebuilds exactly */
	mw_cache_tx_init(&tx, 50 * BLK);
	mw_cache_rx_init(&rx, 50 * BLK);
	for (uint64_t i = 0; i < 600; i++)
		round_trip(i / 5 % 97, 1000 + (i * 7) % 113);
	ck_assert(tx.hits > 0);
	ck_assert_uint_eq(tx.used, rx.used);
}
END_TEST

START_TEST(bad_blocks_and_lying_recipes)
{
	struct mw_block blk[2];
	unsigned char seg[MW_SEG_LEN + 4];

	mw_cache_tx_init(&tx, 10 * BLK);
	mw_cache_rx_init(&rx, 10 * BLK);
	make_task(1, 2, blk);
	/* blocks out of order, or past the end */
	blk[1].off = 2;
	ck_assert_int_eq(mw_cache_encode(&tx, task.data, task.len, blk, 2, &recipe), -EINVAL);
	make_task(1, 2, blk);
	blk[1].len = BLK + 1;
	ck_assert_int_eq(mw_cache_encode(&tx, task.data, task.len, blk, 2, &recipe), -EINVAL);
	/* USE of a slot never stored */
	seg[0] = MW_SEG_USE;
	mw_put_le(seg + 1, 3, 4);
	mw_put_le(seg + 5, 4, 4);
	ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN, &out, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "slot 3"));
	/* STORE past the end of the recipe */
	seg[0] = MW_SEG_STORE;
	ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN + 2, &out, err, sizeof(err)), -EBADMSG);
	/* STORE into a slot the sender would not have chosen: slot 3 of none */
	ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN + 4, &out, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "a slot beyond the next new one (slot 3)"));
	/* STORE beyond the budget */
	mw_cache_rx_free(&rx);
	mw_cache_rx_init(&rx, 3);
	mw_put_le(seg + 1, 0, 4);
	ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN + 4, &out, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "more than the cache's 3 bytes"));
	/* slots 0 and 1 stored, 0 dropped: a new slot 2 is refused, 0 taken */
	mw_cache_rx_free(&rx);
	mw_cache_rx_init(&rx, 100);
	for (uint32_t s = 0; s < 2; s++) {
		seg[0] = MW_SEG_STORE;
		mw_put_le(seg + 1, s, 4);
		ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN + 4, &out, err, sizeof(err)), 0);
	}
	seg[0] = MW_SEG_DROP;
	mw_put_le(seg + 1, 0, 4);
	ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN, &out, err, sizeof(err)), 0);
	seg[0] = MW_SEG_STORE;
	mw_put_le(seg + 1, 2, 4);
	ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN + 4, &out, err, sizeof(err)), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(err, "a new slot while a lower one is free (slot 2)"));
	mw_put_le(seg + 1, 0, 4);
	ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN + 4, &out, err, sizeof(err)), 0);
	ck_assert_uint_eq(rx.live, 2);
	ck_assert_uint_le(rx.nslots, 4);
	mw_put_le(seg + 1, 3, 4);
	/* truncated header, unknown kind, DROP of nothing */
	ck_assert_int_eq(mw_cache_decode(&rx, seg, 5, &out, err, sizeof(err)), -EBADMSG);
	seg[0] = 9;
	ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN, &out, err, sizeof(err)), -EBADMSG);
	seg[0] = MW_SEG_DROP;
	ck_assert_int_eq(mw_cache_decode(&rx, seg, MW_SEG_LEN, &out, err, sizeof(err)), -EBADMSG);
}
END_TEST

Suite *make_mw_cache_suite(void)
{
	Suite *s = suite_create("mw_cache");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, blocks_cross_once);
	tcase_add_test(tc, tiny_blocks_save_nothing);
	tcase_add_test(tc, least_recently_used_out);
	tcase_add_test(tc, many_keys);
	tcase_add_test(tc, bad_blocks_and_lying_recipes);
	suite_add_tcase(s, tc);
	return s;
}
