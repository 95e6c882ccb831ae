/*
 * check_rdma_chunk.c - the RDMA transport's wire header and private data
 * (rdx_proto.c) with bad input, and messages cut into chunks and put
 * back together (rdx_chunk.c): random sizes over several iovecs arrive
 * byte for byte; chunks out of place are refused.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "transports/rdma/rdx_chunk.h"
#include "transports/rdma/rdx_proto.h"

#define MAXMSG (1u << 20)

static int decode(struct rp_hdr h, size_t got, struct rp_hdr *out)
{
	uint8_t buf[RP_HDR_LEN];

	rp_hdr_encode(&h, buf);
	return rp_hdr_decode(buf, got, MAXMSG, out);
}

/* Headers round-trip; every field that disagrees with the message or the
 * receiver's limits is refused. */
START_TEST(test_hdr)
{
	struct rp_hdr h = { .type = RP_DATA, .flags = RP_F_FIRST, .credits = 65535, .len = 100, .total = 5000 }, o;
	uint8_t buf[RP_HDR_LEN];

	ck_assert_int_eq(decode(h, RP_HDR_LEN + 100, &o), 0);
	ck_assert(o.type == RP_DATA && o.flags == RP_F_FIRST && o.credits == 65535 && o.len == 100 && o.total == 5000);
	rp_hdr_encode(&h, buf);
	ck_assert_uint_eq(buf[2], 0xff);   /* big-endian */
	ck_assert_uint_eq(buf[7], 100);
	ck_assert_int_eq(rp_hdr_decode(buf, RP_HDR_LEN - 1, MAXMSG, &o), -EBADMSG);   /* short */
	ck_assert_int_eq(decode(h, RP_HDR_LEN + 99, &o), -EBADMSG);    /* length disagrees with the completion */
	ck_assert_int_eq(decode(h, RP_HDR_LEN + 101, &o), -EBADMSG);
	h.total = MAXMSG + 1;
	ck_assert_int_eq(decode(h, RP_HDR_LEN + 100, &o), -EBADMSG);   /* over the receiver's max */
	h.total = 99;
	ck_assert_int_eq(decode(h, RP_HDR_LEN + 100, &o), -EBADMSG);   /* a chunk over its total */
	h = (struct rp_hdr){ .type = RP_DATA, .flags = RP_F_FIRST | RP_F_LAST, .len = 100, .total = 200 };
	ck_assert_int_eq(decode(h, RP_HDR_LEN + 100, &o), -EBADMSG);   /* one chunk short of its message */
	h = (struct rp_hdr){ .type = RP_DATA, .flags = 0x04, .len = 1, .total = 1 };
	ck_assert_int_eq(decode(h, RP_HDR_LEN + 1, &o), -EBADMSG);     /* unknown flag */
	h = (struct rp_hdr){ .type = RP_DATA, .flags = RP_F_LAST, .len = 0, .total = 10 };
	ck_assert_int_eq(decode(h, RP_HDR_LEN, &o), -EBADMSG);         /* empty chunk */
	h = (struct rp_hdr){ .type = 9, .len = 0 };
	ck_assert_int_eq(decode(h, RP_HDR_LEN, &o), -EBADMSG);         /* unknown type */
	h = (struct rp_hdr){ .type = RP_CREDIT, .credits = 7, .total = 0xfedcba98 };   /* a write grant */
	ck_assert_int_eq(decode(h, RP_HDR_LEN, &o), 0);
	ck_assert(o.credits == 7 && o.total == 0xfedcba98);
	h.len = 1;
	ck_assert_int_eq(decode(h, RP_HDR_LEN + 1, &o), -EBADMSG);     /* credits with a payload */
	h = (struct rp_hdr){ .type = RP_CREDIT, .flags = RP_F_LAST };
	ck_assert_int_eq(decode(h, RP_HDR_LEN, &o), -EBADMSG);
}
END_TEST

/* Private data: round trip, with a write ring and without; other magic or
 * version, a short one, sizes and rings out of range refused. */
START_TEST(test_priv)
{
	struct rp_priv p = { .buf_size = 65536, .depth = 32, .ring_addr = 0x7f0123456000ull, .ring_rkey = 0xabcdef01,
			     .ring_size = 4u << 20 }, o;
	uint8_t buf[RP_PRIV_LEN + 8] = { 0 };
	const struct rp_priv bad_rings[] = {
		{ .ring_size = RP_MIN_RING - RP_RING_PAGE },
		{ .ring_size = RP_MAX_RING + RP_RING_PAGE },
		{ .ring_size = RP_MIN_RING + 256 },          /* not whole pages */
		{ .ring_size = 0, .ring_addr = 4096 },       /* no ring, but an address */
		{ .ring_size = 0, .ring_rkey = 1 },
	};

	rp_priv_encode(&p, buf);
	ck_assert_int_eq(rp_priv_decode(buf, sizeof(buf), &o), 0);   /* the CM may pad it */
	ck_assert(o.buf_size == 65536 && o.depth == 32);
	ck_assert(o.ring_addr == 0x7f0123456000ull && o.ring_rkey == 0xabcdef01 && o.ring_size == 4u << 20);
	for (size_t i = 0; i < sizeof(bad_rings) / sizeof(bad_rings[0]); i++) {
		struct rp_priv b = bad_rings[i];

		b.buf_size = 65536;
		b.depth = 32;
		rp_priv_encode(&b, buf);
		ck_assert_msg(rp_priv_decode(buf, RP_PRIV_LEN, &o) == -EBADMSG, "ring %zu accepted", i);
	}
	p = (struct rp_priv){ .buf_size = 65536, .depth = 32 };   /* no ring: no writes to this side */
	rp_priv_encode(&p, buf);
	ck_assert_int_eq(rp_priv_decode(buf, RP_PRIV_LEN, &o), 0);
	ck_assert_uint_eq(o.ring_size, 0);
	/* A version 1 peer's 12 bytes, padded by the CM, is another version. */
	buf[4] = 1;
	ck_assert_int_eq(rp_priv_decode(buf, RP_PRIV_LEN, &o), -EPROTO);
	buf[4] = RP_VERSION;
	ck_assert_int_eq(rp_priv_decode(buf, RP_PRIV_LEN - 1, &o), -EBADMSG);
	ck_assert_int_eq(rp_priv_decode(NULL, 0, &o), -EBADMSG);
	buf[4] = RP_VERSION + 1;
	ck_assert_int_eq(rp_priv_decode(buf, RP_PRIV_LEN, &o), -EPROTO);
	buf[4] = RP_VERSION;
	buf[0] ^= 1;
	ck_assert_int_eq(rp_priv_decode(buf, RP_PRIV_LEN, &o), -EPROTO);
	p.depth = RP_MIN_DEPTH - 1;
	rp_priv_encode(&p, buf);
	ck_assert_int_eq(rp_priv_decode(buf, RP_PRIV_LEN, &o), -EBADMSG);
	p = (struct rp_priv){ .buf_size = RP_MIN_BUF - 1, .depth = 8 };
	rp_priv_encode(&p, buf);
	ck_assert_int_eq(rp_priv_decode(buf, RP_PRIV_LEN, &o), -EBADMSG);
	p = (struct rp_priv){ .buf_size = RP_MAX_BUF + 1, .depth = 8 };
	rp_priv_encode(&p, buf);
	ck_assert_int_eq(rp_priv_decode(buf, RP_PRIV_LEN, &o), -EBADMSG);
}
END_TEST

/* Sends a message of n bytes, in `parts` iovecs (some registered), as
 * chunks of at most room bytes through the header codec into a
 * reassembler; returns what came out (the caller frees it). */
static uint8_t *roundtrip(const uint8_t *msg, size_t n, int parts, size_t room, int *chunks, int *zero_copy,
			  size_t *outlen)
{
	struct iovec iov[RDMA_CHUNK_IOV];
	void *desc[RDMA_CHUNK_IOV];
	struct rdx_chunker k;
	struct rdx_reasm r = { 0 };
	struct rdx_chunk c;
	uint8_t *wire = malloc(RP_HDR_LEN + room), *out = NULL, *whole = NULL;
	size_t at = 0;

	for (int i = 0; i < parts; i++) {
		size_t len = i == parts - 1 ? n - at : (n - at) / (size_t)(parts - i);

		iov[i] = (struct iovec){ .iov_base = (void *)(msg + at), .iov_len = len };
		desc[i] = i % 2 ? NULL : (void *)&desc[i];
		at += len;
	}
	ck_assert_int_eq(rdx_chunker_start(&k, iov, parts, desc, (void *)msg, MAXMSG), 0);
	*chunks = *zero_copy = 0;
	while (rdx_chunker_next(&k, room, &c) == 0) {
		struct rp_hdr h = { .type = RP_DATA, .flags = c.flags, .len = (uint32_t)c.len, .total = (uint32_t)k.total }, d;
		size_t seglen = 0;
		int w;

		ck_assert_uint_le(c.len, room);
		for (int i = 0; i < c.nseg; i++)
			seglen += c.seg[i].len;
		ck_assert_uint_eq(seglen, c.len);
		*zero_copy += c.registered;
		rp_hdr_encode(&h, wire);
		rdx_chunk_copy(&c, wire + RP_HDR_LEN);
		rdx_chunker_advance(&k, &c);
		(*chunks)++;
		ck_assert_int_eq(rp_hdr_decode(wire, RP_HDR_LEN + c.len, MAXMSG, &d), 0);
		w = rdx_reasm_whole(&r, &d);
		ck_assert_int_ge(w, 0);
		if (w == 1) {
			whole = malloc(d.len);
			memcpy(whole, wire + RP_HDR_LEN, d.len);
			*outlen = d.len;
			continue;
		}
		w = rdx_reasm_add(&r, &d, wire + RP_HDR_LEN, &out, outlen);
		ck_assert_int_eq(w, (d.flags & RP_F_LAST) ? 1 : 0);
	}
	ck_assert(!rdx_chunker_busy(&k));
	ck_assert_ptr_eq(k.ctx, msg);
	free(wire);
	rdx_reasm_fini(&r);
	return whole ? whole : out;
}

/* Random sizes and splits arrive byte for byte, in ceil(n / room) chunks,
 * the first flagged first and the last last. */
START_TEST(test_chunk_roundtrip)
{
	unsigned seed = 11;
	uint8_t *msg = malloc(MAXMSG);

	for (size_t i = 0; i < MAXMSG; i++)
		msg[i] = (uint8_t)rand_r(&seed);
	for (int t = 0; t < 300; t++) {
		size_t n = 1 + (size_t)rand_r(&seed) % (t < 100 ? 3000 : MAXMSG);
		int parts = 1 + rand_r(&seed) % RDMA_CHUNK_IOV;
		size_t room = 1 + (size_t)rand_r(&seed) % 70000, got = 0;
		int chunks, zc;
		uint8_t *out;

		if ((size_t)parts > n)
			parts = (int)n;
		out = roundtrip(msg, n, parts, room, &chunks, &zc, &got);
		ck_assert_ptr_nonnull(out);
		ck_assert_uint_eq(got, n);
		ck_assert_int_eq(memcmp(out, msg, n), 0);
		ck_assert_int_eq(chunks, (int)((n + room - 1) / room));
		ck_assert_int_le(zc, chunks);
		free(out);
	}
	free(msg);
}
END_TEST

/* Messages the chunker refuses: empty, over the max, too many iovecs; a
 * chunk lying in the registered first iovec is registered, one reaching
 * into an unregistered one is not. */
START_TEST(test_chunker_limits)
{
	static uint8_t a[100], b[100];
	struct iovec iov[RDMA_CHUNK_IOV + 1];
	void *desc[2] = { a, NULL };
	struct rdx_chunker k;
	struct rdx_chunk c;

	for (int i = 0; i <= RDMA_CHUNK_IOV; i++)
		iov[i] = (struct iovec){ .iov_base = a, .iov_len = 1 };
	ck_assert_int_eq(rdx_chunker_start(&k, iov, RDMA_CHUNK_IOV + 1, NULL, NULL, MAXMSG), -EINVAL);
	ck_assert_int_eq(rdx_chunker_start(&k, iov, 0, NULL, NULL, MAXMSG), -EINVAL);
	iov[0].iov_len = 0;
	ck_assert_int_eq(rdx_chunker_start(&k, iov, 1, NULL, NULL, MAXMSG), -EMSGSIZE);
	iov[0] = (struct iovec){ .iov_base = a, .iov_len = 100 };
	iov[1] = (struct iovec){ .iov_base = b, .iov_len = 100 };
	ck_assert_int_eq(rdx_chunker_start(&k, iov, 2, NULL, NULL, 199), -EMSGSIZE);
	ck_assert_int_eq(rdx_chunker_start(&k, iov, 2, desc, NULL, 200), 0);
	ck_assert_int_eq(rdx_chunker_next(&k, 60, &c), 0);
	ck_assert(c.registered && c.nseg == 1 && c.flags == RP_F_FIRST);
	rdx_chunker_advance(&k, &c);
	ck_assert_int_eq(rdx_chunker_next(&k, 60, &c), 0);
	ck_assert(!c.registered && c.nseg == 2 && c.flags == 0);
	ck_assert(c.seg[0].base == a + 60 && c.seg[0].len == 40 && c.seg[1].base == b && c.seg[1].len == 20);
	rdx_chunker_advance(&k, &c);
	ck_assert_int_eq(rdx_chunker_next(&k, 1000, &c), 0);
	ck_assert(c.flags == RP_F_LAST && c.len == 80);
	rdx_chunker_advance(&k, &c);
	ck_assert_int_eq(rdx_chunker_next(&k, 1000, &c), -ENOENT);
}
END_TEST

/* Chunks out of place: a later chunk with no first, a first during a
 * message, a whole message during one, another total, too many bytes, a
 * last chunk short of the total, a middle one that reaches it. */
START_TEST(test_reasm_refusals)
{
	static const uint8_t p[10];
	struct rdx_reasm r = { 0 };
	uint8_t *m;
	size_t n;
	struct rp_hdr first = { .type = RP_DATA, .flags = RP_F_FIRST, .len = 4, .total = 10 };
	struct rp_hdr mid = { .type = RP_DATA, .flags = 0, .len = 4, .total = 10 };
	struct rp_hdr last = { .type = RP_DATA, .flags = RP_F_LAST, .len = 2, .total = 10 };
	struct rp_hdr whole = { .type = RP_DATA, .flags = RP_F_FIRST | RP_F_LAST, .len = 3, .total = 3 };

	ck_assert_int_eq(rdx_reasm_add(&r, &mid, p, &m, &n), -EBADMSG);
	ck_assert_int_eq(rdx_reasm_add(&r, &last, p, &m, &n), -EBADMSG);
	ck_assert_int_eq(rdx_reasm_whole(&r, &whole), 1);
	ck_assert_int_eq(rdx_reasm_add(&r, &first, p, &m, &n), 0);
	ck_assert_int_eq(rdx_reasm_whole(&r, &whole), -EBADMSG);
	ck_assert_int_eq(rdx_reasm_add(&r, &first, p, &m, &n), -EBADMSG);
	mid.total = 11;
	ck_assert_int_eq(rdx_reasm_add(&r, &mid, p, &m, &n), -EBADMSG);
	mid.total = 10;
	ck_assert_int_eq(rdx_reasm_add(&r, &mid, p, &m, &n), 0);
	ck_assert_int_eq(rdx_reasm_add(&r, &last, p, &m, &n), 1);   /* 4 + 4 + 2 */
	ck_assert_uint_eq(n, 10);
	free(m);
	ck_assert_int_eq(rdx_reasm_add(&r, &first, p, &m, &n), 0);
	ck_assert_int_eq(rdx_reasm_add(&r, &last, p, &m, &n), -EBADMSG);   /* 4 + 2: short of 10 */
	rdx_reasm_fini(&r);
	ck_assert_int_eq(rdx_reasm_add(&r, &first, p, &m, &n), 0);
	mid.len = 6;
	ck_assert_int_eq(rdx_reasm_add(&r, &mid, p, &m, &n), -EBADMSG);   /* reaches the total, not last */
	rdx_reasm_fini(&r);
	ck_assert_int_eq(rdx_reasm_add(&r, &first, p, &m, &n), 0);
	mid.len = 7;
	ck_assert_int_eq(rdx_reasm_add(&r, &mid, p, &m, &n), -EBADMSG);   /* past the total */
	rdx_reasm_fini(&r);
	ck_assert_int_eq(rdx_reasm_add(&r, &first, p, &m, &n), 0);
	last.len = 6;
	ck_assert_int_eq(rdx_reasm_add(&r, &last, p, &m, &n), 1);
	ck_assert_uint_eq(n, 10);
	ck_assert_ptr_null(r.buf);
	free(m);
}
END_TEST

Suite *make_rdma_chunk_suite(void)
{
	Suite *s = suite_create("rdma_chunk");
	TCase *tc = tcase_create("chunk");

	tcase_add_test(tc, test_hdr);
	tcase_add_test(tc, test_priv);
	tcase_add_test(tc, test_chunk_roundtrip);
	tcase_add_test(tc, test_chunker_limits);
	tcase_add_test(tc, test_reasm_refusals);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}
