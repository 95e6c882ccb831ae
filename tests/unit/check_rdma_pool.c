/*
 * check_rdma_pool.c - the RDMA transport's registered slabs
 * (transports/rdma/rdx_pool.c): every buffer taken once until given
 * back, exhaustion, alignment, a slab of whole pages of its own, and
 * give-backs of what was never taken refused.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suites.h"
#include "transports/rdma/rdx_pool.h"

/* All buffers taken once each, distinct, aligned, inside the slab, not
 * overlapping; then none; every one given back; then all again. */
START_TEST(test_take_all)
{
	struct rdx_pool p;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t seen[100] = { 0 };

	ck_assert_int_eq(rdx_pool_init(&p, 100, 1000), 0);
	ck_assert_uint_eq(p.stride, 1024);
	ck_assert_uint_eq((uintptr_t)p.base % page, 0);
	ck_assert_uint_eq(p.len % page, 0);
	ck_assert_uint_ge(p.len, 100 * 1024);
	for (int k = 0; k < 100; k++) {
		int64_t i = rdx_pool_take(&p);
		uint8_t *b;

		ck_assert_int_ge(i, 0);
		ck_assert_int_lt(i, 100);
		ck_assert_int_eq(seen[i], 0);
		seen[i] = 1;
		b = rdx_pool_buf(&p, (uint32_t)i);
		ck_assert_uint_eq((uintptr_t)b % RDMA_POOL_ALIGN, 0);
		ck_assert(b >= p.base && b + p.size <= p.base + p.len);
		ck_assert_int_eq(rdx_pool_index(&p, b), i);
		memset(b, (int)i, p.size);   /* ASan: each buffer is its own memory */
	}
	ck_assert_uint_eq(p.nfree, 0);
	ck_assert_int_eq(rdx_pool_take(&p), -1);
	for (uint32_t i = 0; i < 100; i++) {
		ck_assert_uint_eq(rdx_pool_buf(&p, i)[p.size - 1], i);   /* no neighbour wrote over it */
		ck_assert_int_eq(rdx_pool_give(&p, i), 0);
	}
	ck_assert_uint_eq(p.nfree, 100);
	for (int k = 0; k < 100; k++)
		ck_assert_int_ge(rdx_pool_take(&p), 0);
	ck_assert_int_eq(rdx_pool_take(&p), -1);
	rdx_pool_fini(&p);
	ck_assert_ptr_null(p.base);
	rdx_pool_fini(&p);   /* twice, or on a zeroed pool: harmless */
}
END_TEST

/* Give-backs that would break the accounting are refused, nothing moved:
 * twice the same buffer, one never taken, an index past the end; and a
 * pointer into a buffer's middle or outside the slab is no buffer. */
START_TEST(test_refusals)
{
	struct rdx_pool p;
	int64_t a, b;

	ck_assert_int_eq(rdx_pool_init(&p, 4, 64), 0);
	a = rdx_pool_take(&p);
	b = rdx_pool_take(&p);
	ck_assert_int_eq(rdx_pool_give(&p, (uint32_t)a), 0);
	ck_assert_int_eq(rdx_pool_give(&p, (uint32_t)a), -EINVAL);
	ck_assert_int_eq(rdx_pool_give(&p, 3), -EINVAL);
	ck_assert_int_eq(rdx_pool_give(&p, 4), -EINVAL);
	ck_assert_uint_eq(p.nfree, 3);
	ck_assert_int_eq(rdx_pool_index(&p, rdx_pool_buf(&p, (uint32_t)b) + 1), -1);
	ck_assert_int_eq(rdx_pool_index(&p, p.base + 4 * p.stride), -1);
	ck_assert_int_eq(rdx_pool_index(&p, p.base - 1), -1);
	rdx_pool_fini(&p);
	ck_assert_int_eq(rdx_pool_init(&p, 0, 64), -EINVAL);
	ck_assert_int_eq(rdx_pool_init(&p, 4, 0), -EINVAL);
	ck_assert_int_eq(rdx_pool_init(&p, UINT32_MAX, SIZE_MAX / 4), -EINVAL);
}
END_TEST

/* Random takes and gives: free + taken is always every buffer. */
START_TEST(test_accounting)
{
	struct rdx_pool p;
	int64_t held[32];
	int nheld = 0;
	unsigned seed = 7;

	ck_assert_int_eq(rdx_pool_init(&p, 32, 200), 0);
	for (int step = 0; step < 20000; step++) {
		if (rand_r(&seed) % 2 && nheld < 32) {
			held[nheld] = rdx_pool_take(&p);
			ck_assert_int_ge(held[nheld], 0);
			nheld++;
		} else if (nheld > 0) {
			int k = rand_r(&seed) % nheld;

			ck_assert_int_eq(rdx_pool_give(&p, (uint32_t)held[k]), 0);
			held[k] = held[--nheld];
		}
		ck_assert_uint_eq(p.nfree + (unsigned)nheld, 32);
	}
	rdx_pool_fini(&p);
}
END_TEST

Suite *make_rdma_pool_suite(void)
{
	Suite *s = suite_create("rdma_pool");
	TCase *tc = tcase_create("pool");

	tcase_add_test(tc, test_take_all);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_accounting);
	suite_add_tcase(s, tc);
	return s;
}
