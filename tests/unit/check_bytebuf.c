/* check_bytebuf.c - the codecs' bounds-checked cursors (ldsd/bytebuf.h). */
#include <errno.h>
#include <string.h>

#include "ldsd/bytebuf.h"
#include "suites.h"

START_TEST(t_write_then_read_back)
{
	static const uint8_t want[] = { 0xab, 0x12, 0x34, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8,
					0x00, 0x0a, 0x0b, 0x0c, 0x00, 0x03, 'a', 'b', 'c', 'x', 'y' };
	uint8_t buf[sizeof(want)], got[2];
	struct bb_wr w;
	struct bb_rd r;
	const uint8_t *s;
	size_t n;

	bb_wr_init(&w, buf, sizeof(buf));
	bb_wr_u8(&w, 0xab);
	bb_wr_be16(&w, 0x1234);
	bb_wr_be32(&w, 0xdeadbeef);
	bb_wr_be64(&w, 0x0102030405060708ull);
	bb_wr_be(&w, 0x0a0b0c, 4);
	bb_wr_str(&w, 2, "abc", 3);
	bb_wr_bytes(&w, "xy", 2);
	ck_assert_int_eq(w.bad, 0);
	ck_assert_uint_eq(w.len, sizeof(want));
	ck_assert_mem_eq(buf, want, sizeof(want));

	bb_rd_init(&r, buf, sizeof(buf));
	ck_assert_uint_eq(bb_rd_u8(&r), 0xab);
	ck_assert_uint_eq(bb_rd_be16(&r), 0x1234);
	ck_assert_uint_eq(bb_rd_be32(&r), 0xdeadbeef);
	ck_assert_uint_eq(bb_rd_be64(&r), 0x0102030405060708ull);
	ck_assert_uint_eq(bb_rd_be(&r, 4), 0x0a0b0c);
	s = bb_rd_str(&r, 2, 3, &n);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(n, 3);
	ck_assert_mem_eq(s, "abc", 3);
	ck_assert_int_eq(bb_rd_end(&r), -EBADMSG);  /* "xy" is left */
	bb_rd_copy(&r, got, 2);
	ck_assert_mem_eq(got, "xy", 2);
	ck_assert_int_eq(bb_rd_end(&r), 0);
	ck_assert_uint_eq(bb_get_be16(buf + 1), 0x1234);
	ck_assert_uint_eq(bb_get_be64(buf + 7), 0x0102030405060708ull);
}
END_TEST

/* A read past the end gives 0 and leaves the cursor where it was, and
 * every later read fails too, even one that would fit. */
START_TEST(t_read_overrun_is_sticky)
{
	static const uint8_t in[] = { 1, 2, 3 };
	uint8_t dst[4] = { 9, 9, 9, 9 };
	struct bb_rd r;
	size_t n;

	bb_rd_init(&r, in, sizeof(in));
	ck_assert_uint_eq(bb_rd_be32(&r), 0);
	ck_assert_int_eq(r.bad, 1);
	ck_assert_uint_eq(r.left, 3);
	ck_assert_uint_eq(bb_rd_u8(&r), 0);
	ck_assert_ptr_null(bb_rd_take(&r, 0));
	bb_rd_copy(&r, dst, 1);
	ck_assert_uint_eq(dst[0], 9);
	ck_assert_int_eq(bb_rd_end(&r), -EBADMSG);

	/* A length over max is refused before its bytes are looked at. */
	bb_rd_init(&r, in, sizeof(in));
	ck_assert_ptr_null(bb_rd_str(&r, 1, 0, &n));
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(r.bad, 1);
	/* A length within max whose bytes are not there. */
	bb_rd_init(&r, in, sizeof(in));
	ck_assert_ptr_null(bb_rd_str(&r, 2, 1000, &n));
	ck_assert_uint_eq(n, 0x0102);
	ck_assert_int_eq(bb_rd_end(&r), -EBADMSG);
}
END_TEST

START_TEST(t_write_overflow_is_sticky)
{
	uint8_t buf[5] = { 0 };
	struct bb_wr w;

	bb_wr_init(&w, buf, sizeof(buf));
	bb_wr_be32(&w, 0x01020304);
	bb_wr_be16(&w, 0xffff);
	ck_assert_int_eq(w.bad, 1);
	ck_assert_uint_eq(w.len, 4);
	bb_wr_u8(&w, 0xee);     /* would fit, but the writer is bad */
	ck_assert_uint_eq(w.len, 4);
	ck_assert_uint_eq(buf[4], 0);
	ck_assert_ptr_null(bb_wr_reserve(&w, 0));
}
END_TEST

/* With no buffer the writer counts what it would write. */
START_TEST(t_counting_writer)
{
	static const uint8_t big[1000];
	struct bb_wr w;

	bb_wr_init(&w, NULL, 0);
	bb_wr_be64(&w, 1);
	bb_wr_str(&w, 1, "", 0);
	bb_wr_bytes(&w, big, sizeof(big));
	ck_assert_ptr_null(bb_wr_reserve(&w, 3));
	ck_assert_int_eq(w.bad, 0);
	ck_assert_uint_eq(w.len, 8 + 1 + 1000 + 3);
}
END_TEST

/* reserve hands out room for a field written later, like a header. */
START_TEST(t_reserve_then_fill)
{
	uint8_t buf[6];
	struct bb_wr w;
	uint8_t *hdr;

	bb_wr_init(&w, buf, sizeof(buf));
	hdr = bb_wr_reserve(&w, 2);
	ck_assert_ptr_eq(hdr, buf);
	bb_wr_be32(&w, 7);
	bb_put_be16(hdr, (uint16_t)(w.len - 2));
	ck_assert_int_eq(w.bad, 0);
	ck_assert_uint_eq(bb_get_be16(buf), 4);
	ck_assert_uint_eq(bb_get_be32(buf + 2), 7);
}
END_TEST

Suite *make_bytebuf_suite(void)
{
	Suite *s = suite_create("bytebuf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, t_write_then_read_back);
	tcase_add_test(tc, t_read_overrun_is_sticky);
	tcase_add_test(tc, t_write_overflow_is_sticky);
	tcase_add_test(tc, t_counting_writer);
	tcase_add_test(tc, t_reserve_then_fill);
	suite_add_tcase(s, tc);
	return s;
}
