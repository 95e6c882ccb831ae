/* check_wire.c - unit tests of the wire codec (ldsd/wire.c) and CRC-32C. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/crc32c.h"
#include "ldsd/wire.h"
#include "suites.h"

/* ---- helpers --------------------------------------------------------- */

/* Bit-at-a-time CRC-32C: too slow for real use, simple enough to trust. */
static uint32_t ref_crc32c(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int i = 0; i < 8; i++)
			crc = (crc & 1) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return ~crc;
}

/* Deterministic filler so failures reproduce. */
static uint64_t rng_state;

static uint32_t rng(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rng();
}

static void be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void be32(uint8_t *p, uint32_t v)
{
	be16(p, (uint16_t)(v >> 16));
	be16(p + 2, (uint16_t)v);
}

static void be64(uint8_t *p, uint64_t v)
{
	be32(p, (uint32_t)(v >> 32));
	be32(p + 4, (uint32_t)v);
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A frame assembled by hand, CRC from the reference: lets tests craft
 * payloads the encoders refuse to produce. */
static size_t mkframe(uint8_t *buf, uint8_t type, const void *payload, uint32_t plen)
{
	be16(buf, WIRE_MAGIC);
	buf[2] = WIRE_VERSION;
	buf[3] = type;
	be32(buf + 4, plen);
	be32(buf + 8, 0);
	if (plen)
		memcpy(buf + WIRE_HDR_LEN, payload, plen);
	be32(buf + 8, ref_crc32c(0, buf, WIRE_HDR_LEN + plen));
	return WIRE_HDR_LEN + plen;
}

static void parse_whole(const uint8_t *buf, size_t n, struct wire_frame *f)
{
	size_t used = 0;

	ck_assert_int_eq(wire_frame_parse(buf, n, f, &used), 1);
	ck_assert_uint_eq(used, n);
	ck_assert_uint_eq(f->len, n - WIRE_HDR_LEN);
	ck_assert_ptr_eq(f->payload, buf + WIRE_HDR_LEN);
	ck_assert_uint_eq(f->version, WIRE_VERSION);
}

/* Runs the decoder for type on f, discarding the result. */
static int decode_as(int type, const struct wire_frame *f)
{
	struct wire_hello h;
	struct wire_challenge c;
	struct wire_auth a;
	struct wire_refuse_msg r;
	struct wire_ack k;
	uint64_t u64;
	uint16_t u16;
	const uint8_t *data;
	uint32_t len;

	switch (type) {
	case WIRE_HELLO: return wire_decode_hello(f, &h);
	case WIRE_CHALLENGE: return wire_decode_challenge(f, &c);
	case WIRE_AUTH: return wire_decode_auth(f, &a);
	case WIRE_REFUSE: return wire_decode_refuse(f, &r);
	case WIRE_ACK: return wire_decode_ack(f, &k);
	case WIRE_PING:
	case WIRE_PONG: return wire_decode_ping(f, &u64);
	case WIRE_BYE: return wire_decode_bye(f, &u16);
	case WIRE_DATA: return wire_decode_data(f, &u64, &data, &len);
	}
	/* READY has no decoder: its payload must simply be empty. */
	return f->len == 0 ? 0 : -EBADMSG;
}

static int decode_any(const struct wire_frame *f)
{
	return decode_as(f->type, f);
}

/* ---- sample frames ------------------------------------------------------ */

static const struct wire_hello s_hello = {
	.stream_idx = 3, .nstreams = 8, .max_msg = 64u << 20,
	.instance = 0x0123456789ABCDEFull,
	.nonce = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
		   17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32 },
	.encryption = WIRE_ENC_AEAD, .from = "paris-1", .to = "tokyo.dc_2",
};

static const struct wire_challenge s_challenge = {
	.max_msg = 1u << 20, .instance = 0xFEDCBA9876543210ull,
	.nonce = { [0] = 0xAA, [31] = 0x55 },
	.mac = { [0] = 0x11, [15] = 0x22, [31] = 0x33 },
	.encryption = WIRE_ENC_AEAD, .from = "tokyo.dc_2",
};

static const struct wire_auth s_auth = { .mac = { [0] = 0xDE, [31] = 0xAD } };

static const struct wire_refuse_msg s_refuse = {
	.code = WIRE_REFUSE_AUTH, .reason = "bad key for cluster paris-1",
};

static const struct wire_ack s_ack = {
	.recv_cum = 100, .window_end = 1100, .deliv_cum = 42,
	.nsack = 3, .ndeliv = 2,
	.sack = { { 102, 105 }, { 105, 106 }, { 200, UINT64_MAX } },
	.deliv = { { 44, 45 }, { 50, 60 } },
};

static const uint8_t s_block[] = "a block of bytes with a record inside";
#define S_SEQ 0x1122334455667788ull
#define S_PING 123456789012345ull

enum { S_HELLO, S_CHALLENGE, S_AUTH, S_READY, S_REFUSE, S_DATA, S_ACK,
       S_PING_F, S_PONG_F, S_BYE, NSAMPLES };

/* Encodes sample i; 0 if cap is too small, like the encoders. */
static size_t encode_sample(int i, uint8_t *buf, size_t cap)
{
	switch (i) {
	case S_HELLO: return wire_encode_hello(buf, cap, &s_hello);
	case S_CHALLENGE: return wire_encode_challenge(buf, cap, &s_challenge);
	case S_AUTH: return wire_encode_auth(buf, cap, &s_auth);
	case S_READY: return wire_encode_ready(buf, cap);
	case S_REFUSE: return wire_encode_refuse(buf, cap, &s_refuse);
	case S_DATA:
		if (cap < WIRE_DATA_HDR_LEN + sizeof(s_block))
			return 0;
		wire_encode_data_hdr(buf, S_SEQ, s_block, sizeof(s_block));
		memcpy(buf + WIRE_DATA_HDR_LEN, s_block, sizeof(s_block));
		return WIRE_DATA_HDR_LEN + sizeof(s_block);
	case S_ACK: return wire_encode_ack(buf, cap, &s_ack);
	case S_PING_F: return wire_encode_ping(buf, cap, WIRE_PING, S_PING);
	case S_PONG_F: return wire_encode_ping(buf, cap, WIRE_PONG, S_PING);
	case S_BYE: return wire_encode_bye(buf, cap, WIRE_REFUSE_SHUTDOWN);
	}
	return 0;
}

static size_t sample(int i, uint8_t *buf)
{
	size_t n = encode_sample(i, buf, 2048);

	ck_assert_uint_gt(n, 0);
	return n;
}

/* ---- CRC-32C ------------------------------------------------------------ */

START_TEST(crc_check_value)
{
	ck_assert_uint_eq(crc32c(0, "123456789", 9), 0xE3069283u);
	ck_assert_uint_eq(ref_crc32c(0, "123456789", 9), 0xE3069283u);
}
END_TEST

/* RFC 3720 appendix B.4 and other published values. */
START_TEST(crc_known_vectors)
{
	uint8_t b[32];
	const char *fox = "The quick brown fox jumps over the lazy dog";

	memset(b, 0, sizeof(b));
	ck_assert_uint_eq(crc32c(0, b, 32), 0x8A9136AAu);
	memset(b, 0xff, sizeof(b));
	ck_assert_uint_eq(crc32c(0, b, 32), 0x62A8AB43u);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	ck_assert_uint_eq(crc32c(0, b, 32), 0x46DD794Eu);
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)(31 - i);
	ck_assert_uint_eq(crc32c(0, b, 32), 0x113FDB5Cu);
	ck_assert_uint_eq(crc32c(0, fox, strlen(fox)), 0x22620404u);
	ck_assert_uint_eq(crc32c(0, "a", 1), 0xC1D04330u);
}
END_TEST

START_TEST(crc_empty)
{
	ck_assert_uint_eq(crc32c(0, "", 0), 0);
	ck_assert_uint_eq(crc32c(0xE3069283u, "x", 0), 0xE3069283u);
	ck_assert_uint_eq(crc32c(0xFFFFFFFFu, "x", 0), 0xFFFFFFFFu);
}
END_TEST

START_TEST(crc_continuation)
{
	enum { N = 70000 };
	uint8_t *b = malloc(N);
	uint32_t whole;

	rng_state = 1;
	fill_random(b, N);
	whole = crc32c(0, b, N);
	ck_assert_uint_eq(whole, ref_crc32c(0, b, N));
	for (size_t cut = 0; cut <= 64; cut++)
		ck_assert_uint_eq(crc32c(crc32c(0, b, cut), b + cut, N - cut), whole);
	for (int i = 0; i < 200; i++) {
		size_t c1 = rng() % N, c2 = c1 + rng() % (N - c1);
		uint32_t c = crc32c(0, b, c1);

		c = crc32c(c, b + c1, c2 - c1);
		ck_assert_uint_eq(crc32c(c, b + c2, N - c2), whole);
	}
	free(b);
}
END_TEST

/* Whichever implementation crc32c() picked must match the reference at
 * every length and alignment, including the tails around 8-byte words. */
START_TEST(crc_matches_reference)
{
	enum { MAXLEN = 4096 };
	uint8_t *b = malloc(MAXLEN + 16);

	rng_state = 2;
	fill_random(b, MAXLEN + 16);
	for (size_t len = 0; len <= 64; len++)
		for (size_t off = 0; off < 16; off++)
			ck_assert_uint_eq(crc32c(0, b + off, len), ref_crc32c(0, b + off, len));
	for (int i = 0; i < 3000; i++) {
		size_t len = rng() % (MAXLEN + 1), off = rng() % 16;
		uint32_t seed = rng(), want = ref_crc32c(seed, b + off, len);

		ck_assert_uint_eq(crc32c(seed, b + off, len), want);
		ck_assert_uint_eq(crc32c_instr(seed, b + off, len), want);
	}
	free(b);
}
END_TEST

/* Lengths around the block sizes where the interleaved paths start and end
 * (3 x 256 and 3 x 8192 bytes), so every joining step is exercised, and
 * around ISA-L's threshold (512) where the build has it. */
START_TEST(crc_long_buffers)
{
	static const size_t lens[] = {
		767, 768, 769, 775, 776, 1535, 1536, 1543, 2304, 24575, 24576,
		24577, 24583, 24576 + 768, 24576 + 775, 49152, 49152 + 1535,
		100000, 262144 + 13, 511, 512, 513,
	};
	size_t max = 262144 + 13 + 16;
	uint8_t *b = malloc(max);

	rng_state = 3;
	fill_random(b, max);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (size_t off = 0; off < 9; off++) {
			uint32_t seed = rng(), want = ref_crc32c(seed, b + off, lens[i]);

			ck_assert_msg(crc32c(seed, b + off, lens[i]) == want, "len %zu off %zu", lens[i], off);
			ck_assert_msg(crc32c_instr(seed, b + off, lens[i]) == want, "instruction: len %zu off %zu",
				      lens[i], off);
		}
	memset(b, 0, max);
	ck_assert_uint_eq(crc32c(0, b, 24576), ref_crc32c(0, b, 24576));
	free(b);
}
END_TEST

/* ---- names -------------------------------------------------------------- */

START_TEST(names)
{
	char n63[64], n64[65], ep[200];

	memset(n63, 'a', 63);
	n63[63] = '\0';
	memset(n64, 'b', 64);
	n64[64] = '\0';
	ck_assert_int_eq(wire_name_valid("a"), 1);
	ck_assert_int_eq(wire_name_valid("Paris-1.dc_2"), 1);
	ck_assert_int_eq(wire_name_valid("..."), 1);
	ck_assert_int_eq(wire_name_valid(n63), 1);
	ck_assert_int_eq(wire_name_valid(n64), 0);
	ck_assert_int_eq(wire_name_valid(""), 0);
	ck_assert_int_eq(wire_name_valid("a b"), 0);
	ck_assert_int_eq(wire_name_valid("a/b"), 0);
	ck_assert_int_eq(wire_name_valid("a\tb"), 0);
	ck_assert_int_eq(wire_name_valid("caf\xc3\xa9"), 0);
	ck_assert_int_eq(wire_name_valid("a:b"), 0);

	ck_assert_int_eq(wire_endpoint_valid("c/n"), 1);
	ck_assert_int_eq(wire_endpoint_valid("paris/job.42_x-y"), 1);
	ck_assert_int_eq(wire_endpoint_valid("c"), 0);
	ck_assert_int_eq(wire_endpoint_valid("c/"), 0);
	ck_assert_int_eq(wire_endpoint_valid("/n"), 0);
	ck_assert_int_eq(wire_endpoint_valid("/"), 0);
	ck_assert_int_eq(wire_endpoint_valid(""), 0);
	ck_assert_int_eq(wire_endpoint_valid("c/n/x"), 0);
	ck_assert_int_eq(wire_endpoint_valid("c/n x"), 0);
	ck_assert_int_eq(wire_endpoint_valid("c d/n"), 0);

	/* 63 + 1 + 63 = 127: the longest endpoint with two maximal names. */
	snprintf(ep, sizeof(ep), "%s/%s", n63, n63);
	ck_assert_int_eq(wire_endpoint_valid(ep), 1);
	/* The name part may exceed WIRE_NAME_MAX while the whole fits. */
	memset(ep, 'n', sizeof(ep));
	ep[0] = 'c';
	ep[1] = '/';
	ep[127] = '\0';
	ck_assert_int_eq(wire_endpoint_valid(ep), 1);
	ep[127] = 'n';
	ep[128] = '\0';
	ck_assert_int_eq(wire_endpoint_valid(ep), 0);
	/* The cluster part may not. */
	snprintf(ep, sizeof(ep), "%s/n", n64);
	ck_assert_int_eq(wire_endpoint_valid(ep), 0);
}
END_TEST

/* ---- frames ------------------------------------------------------------- */

START_TEST(type_names)
{
	static const char *const want[] = {
		NULL, "HELLO", "CHALLENGE", "AUTH", "READY", "REFUSE", "DATA",
		"ACK", "PING", "PONG", "BYE",
	};

	ck_assert_uint_eq(WIRE_TYPE_MAX, sizeof(want) / sizeof(want[0]));
	for (int t = 1; t < WIRE_TYPE_MAX; t++)
		ck_assert_str_eq(wire_type_names[t], want[t]);
	ck_assert_ptr_nonnull(wire_type_names[0]);
}
END_TEST

/* Byte-exact layout of a PING, as docs/protocol.md gives it. */
START_TEST(golden_ping)
{
	uint8_t want[20] = { 0x4C, 0x44, 0x03, WIRE_PING, 0, 0, 0, 8, 0, 0, 0, 0,
			     0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };
	uint8_t buf[64];

	be32(want + 8, ref_crc32c(0, want, sizeof(want)));
	ck_assert_uint_eq(wire_encode_ping(buf, sizeof(buf), WIRE_PING, 0x0102030405060708ull), 20);
	ck_assert_mem_eq(buf, want, 20);
}
END_TEST

START_TEST(golden_hello)
{
	uint8_t buf[256];
	size_t n = wire_encode_hello(buf, sizeof(buf), &s_hello);
	const uint8_t *p = buf + WIRE_HDR_LEN;
	uint32_t crc;

	ck_assert_uint_eq(n, WIRE_HDR_LEN + 2 + 2 + 4 + 8 + 32 + 1 + 1 + 7 + 1 + 10);
	ck_assert_uint_eq(rd32(buf + 4), n - WIRE_HDR_LEN);
	ck_assert_uint_eq(buf[3], WIRE_HELLO);
	ck_assert_mem_eq(p, "\x00\x03\x00\x08\x04\x00\x00\x00", 8);
	ck_assert_mem_eq(p + 8, "\x01\x23\x45\x67\x89\xAB\xCD\xEF", 8);
	ck_assert_mem_eq(p + 16, s_hello.nonce, 32);
	ck_assert_mem_eq(p + 48, "\x01\x07paris-1\x0atokyo.dc_2", 20);
	crc = rd32(buf + 8);
	be32(buf + 8, 0);
	ck_assert_uint_eq(crc, ref_crc32c(0, buf, n));
}
END_TEST

START_TEST(golden_ack)
{
	uint8_t buf[2048];
	size_t n = wire_encode_ack(buf, sizeof(buf), &s_ack);
	const uint8_t *p = buf + WIRE_HDR_LEN;
	uint8_t want[28 + 5 * 16];

	ck_assert_uint_eq(n, WIRE_HDR_LEN + sizeof(want));
	be64(want, 100);
	be64(want + 8, 1100);
	be64(want + 16, 42);
	be16(want + 24, 3);
	be16(want + 26, 2);
	be64(want + 28, 102); be64(want + 36, 105);
	be64(want + 44, 105); be64(want + 52, 106);
	be64(want + 60, 200); be64(want + 68, UINT64_MAX);
	be64(want + 76, 44); be64(want + 84, 45);
	be64(want + 92, 50); be64(want + 100, 60);
	ck_assert_mem_eq(p, want, sizeof(want));
}
END_TEST

START_TEST(roundtrip_hello)
{
	uint8_t buf[256];
	struct wire_frame f;
	struct wire_hello h;

	parse_whole(buf, sample(S_HELLO, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_HELLO);
	memset(&h, 0xEE, sizeof(h));
	ck_assert_int_eq(wire_decode_hello(&f, &h), 0);
	ck_assert_uint_eq(h.stream_idx, 3);
	ck_assert_uint_eq(h.nstreams, 8);
	ck_assert_uint_eq(h.max_msg, 64u << 20);
	ck_assert_uint_eq(h.instance, 0x0123456789ABCDEFull);
	ck_assert_mem_eq(h.nonce, s_hello.nonce, WIRE_NONCE_LEN);
	ck_assert_uint_eq(h.encryption, WIRE_ENC_AEAD);
	ck_assert_str_eq(h.from, "paris-1");
	ck_assert_str_eq(h.to, "tokyo.dc_2");
}
END_TEST

START_TEST(roundtrip_hello_max_names)
{
	uint8_t buf[512];
	struct wire_frame f;
	struct wire_hello h = s_hello, out;

	memset(h.from, 'F', WIRE_NAME_MAX);
	h.from[WIRE_NAME_MAX] = '\0';
	memset(h.to, 'T', WIRE_NAME_MAX);
	h.to[WIRE_NAME_MAX] = '\0';
	parse_whole(buf, wire_encode_hello(buf, sizeof(buf), &h), &f);
	ck_assert_int_eq(wire_decode_hello(&f, &out), 0);
	ck_assert_str_eq(out.from, h.from);
	ck_assert_str_eq(out.to, h.to);
}
END_TEST

START_TEST(roundtrip_challenge)
{
	uint8_t buf[256];
	struct wire_frame f;
	struct wire_challenge c;

	parse_whole(buf, sample(S_CHALLENGE, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_CHALLENGE);
	ck_assert_uint_eq(f.len, 4 + 8 + 32 + 32 + 1 + 1 + 10);
	memset(&c, 0xEE, sizeof(c));
	ck_assert_int_eq(wire_decode_challenge(&f, &c), 0);
	ck_assert_uint_eq(c.max_msg, 1u << 20);
	ck_assert_uint_eq(c.instance, 0xFEDCBA9876543210ull);
	ck_assert_mem_eq(c.nonce, s_challenge.nonce, WIRE_NONCE_LEN);
	ck_assert_mem_eq(c.mac, s_challenge.mac, WIRE_MAC_LEN);
	ck_assert_mem_eq(buf + WIRE_HDR_LEN + WIRE_CHALLENGE_MAC_OFF, s_challenge.mac, WIRE_MAC_LEN);
	ck_assert_uint_eq(c.encryption, WIRE_ENC_AEAD);
	ck_assert_str_eq(c.from, "tokyo.dc_2");
}
END_TEST

START_TEST(roundtrip_auth_ready)
{
	uint8_t buf[256];
	struct wire_frame f;
	struct wire_auth a;

	parse_whole(buf, sample(S_AUTH, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_AUTH);
	ck_assert_uint_eq(f.len, WIRE_MAC_LEN);
	ck_assert_int_eq(wire_decode_auth(&f, &a), 0);
	ck_assert_mem_eq(a.mac, s_auth.mac, WIRE_MAC_LEN);

	parse_whole(buf, sample(S_READY, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_READY);
	ck_assert_uint_eq(f.len, 0);
}
END_TEST

START_TEST(roundtrip_refuse)
{
	uint8_t buf[512];
	struct wire_frame f;
	struct wire_refuse_msg r = { .code = WIRE_REFUSE_VERSION }, out;

	parse_whole(buf, sample(S_REFUSE, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_REFUSE);
	ck_assert_uint_eq(f.len, 4 + strlen(s_refuse.reason));
	ck_assert_int_eq(wire_decode_refuse(&f, &out), 0);
	ck_assert_uint_eq(out.code, WIRE_REFUSE_AUTH);
	ck_assert_str_eq(out.reason, s_refuse.reason);

	/* Empty and maximal reasons. */
	parse_whole(buf, wire_encode_refuse(buf, sizeof(buf), &r), &f);
	ck_assert_uint_eq(f.len, 4);
	ck_assert_int_eq(wire_decode_refuse(&f, &out), 0);
	ck_assert_uint_eq(out.code, WIRE_REFUSE_VERSION);
	ck_assert_str_eq(out.reason, "");
	memset(r.reason, 'r', WIRE_REASON_MAX);
	r.reason[WIRE_REASON_MAX] = '\0';
	parse_whole(buf, wire_encode_refuse(buf, sizeof(buf), &r), &f);
	ck_assert_int_eq(wire_decode_refuse(&f, &out), 0);
	ck_assert_str_eq(out.reason, r.reason);
}
END_TEST

START_TEST(roundtrip_data)
{
	uint8_t buf[256];
	struct wire_frame f;
	uint64_t seq = 0;
	const uint8_t *data = NULL;
	uint32_t len = 0;

	parse_whole(buf, sample(S_DATA, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_DATA);
	ck_assert_int_eq(wire_decode_data(&f, &seq, &data, &len), 0);
	ck_assert_uint_eq(seq, S_SEQ);
	ck_assert_uint_eq(len, sizeof(s_block));
	ck_assert_ptr_eq(data, buf + WIRE_DATA_HDR_LEN);
	ck_assert_mem_eq(data, s_block, sizeof(s_block));
	ck_assert_mem_eq(buf + WIRE_HDR_LEN, "\x11\x22\x33\x44\x55\x66\x77\x88", 8);
}
END_TEST

/* The header CRC covers a payload it never copies: check against a frame
 * built in one piece by the reference. */
START_TEST(data_hdr_crc)
{
	enum { N = 100000 };
	uint8_t *frame = malloc(WIRE_DATA_HDR_LEN + N), *body = malloc(8 + N);
	uint8_t hdr[WIRE_DATA_HDR_LEN];

	rng_state = 4;
	fill_random(body + 8, N);
	be64(body, 7);
	mkframe(frame, WIRE_DATA, body, 8 + N);
	wire_encode_data_hdr(hdr, 7, body + 8, N);
	ck_assert_mem_eq(hdr, frame, WIRE_DATA_HDR_LEN);
	free(frame);
	free(body);
}
END_TEST

START_TEST(data_bad)
{
	uint8_t buf[64], p[16] = { 0 };
	struct wire_frame f;
	uint64_t seq;
	const uint8_t *data;
	uint32_t len;

	/* seq with no block: an empty block is not allowed. */
	parse_whole(buf, mkframe(buf, WIRE_DATA, p, 8), &f);
	ck_assert_int_eq(wire_decode_data(&f, &seq, &data, &len), -EBADMSG);
	parse_whole(buf, mkframe(buf, WIRE_DATA, p, 7), &f);
	ck_assert_int_eq(wire_decode_data(&f, &seq, &data, &len), -EBADMSG);
	parse_whole(buf, mkframe(buf, WIRE_DATA, p, 0), &f);
	ck_assert_int_eq(wire_decode_data(&f, &seq, &data, &len), -EBADMSG);
	parse_whole(buf, mkframe(buf, WIRE_DATA, p, 9), &f);
	ck_assert_int_eq(wire_decode_data(&f, &seq, &data, &len), 0);
	ck_assert_uint_eq(len, 1);
}
END_TEST

/* A DATA frame judged from its prefix before its block arrives, and its
 * CRC checked once the block is in place elsewhere. */
START_TEST(data_peek)
{
	enum { N = 5000 };
	uint8_t *frame = malloc(WIRE_DATA_HDR_LEN + N), hdr[WIRE_DATA_HDR_LEN];
	uint64_t seq = 0;
	uint32_t len = 0;
	int sealed = -1;

	rng_state = 5;
	fill_random(frame + WIRE_DATA_HDR_LEN, N);
	wire_encode_data_hdr(frame, 0x0102030405060708ull, frame + WIRE_DATA_HDR_LEN, N);
	ck_assert_int_eq(wire_peek_data(frame, &seq, &len, &sealed), 1);
	ck_assert_uint_eq(seq, 0x0102030405060708ull);
	ck_assert_uint_eq(len, N);
	ck_assert_int_eq(sealed, 0);
	ck_assert(wire_data_intact(frame, frame + WIRE_DATA_HDR_LEN, N));
	frame[WIRE_DATA_HDR_LEN + N / 2] ^= 0x10;
	ck_assert(!wire_data_intact(frame, frame + WIRE_DATA_HDR_LEN, N));
	ck_assert(!wire_data_intact(frame, frame + WIRE_DATA_HDR_LEN, N - 1));
	frame[WIRE_DATA_HDR_LEN + N / 2] ^= 0x10;
	/* Anything but a DATA frame of this version with a block of 1 to
	 * WIRE_MAX_BLOCK bytes is left to wire_frame_parse. */
	memcpy(hdr, frame, sizeof(hdr));
	hdr[0] ^= 1;
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 0);
	memcpy(hdr, frame, sizeof(hdr));
	hdr[2] = WIRE_VERSION + 1;
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 0);
	memcpy(hdr, frame, sizeof(hdr));
	hdr[3] = WIRE_ACK;
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 0);
	be32(hdr + 4, 8);
	hdr[3] = WIRE_DATA;
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 0);
	be32(hdr + 4, WIRE_MAX_BLOCK + 9);
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 0);
	be32(hdr + 4, WIRE_MAX_BLOCK + 8);
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 1);
	ck_assert_uint_eq(len, WIRE_MAX_BLOCK);
	/* A sealed block is followed by its tag, which the length counts. */
	wire_encode_sealed_hdr(hdr, WIRE_DATA, 8 + 100 + WIRE_TAG_LEN);
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 1);
	ck_assert_int_eq(sealed, 1);
	ck_assert_uint_eq(len, 100);
	wire_encode_sealed_hdr(hdr, WIRE_DATA, 8 + WIRE_TAG_LEN);
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 0);
	wire_encode_sealed_hdr(hdr, WIRE_DATA, WIRE_MAX_BLOCK + 9 + WIRE_TAG_LEN);
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 0);
	wire_encode_sealed_hdr(hdr, WIRE_ACK, 8 + 100 + WIRE_TAG_LEN);
	ck_assert_int_eq(wire_peek_data(hdr, &seq, &len, &sealed), 0);
	free(frame);
}
END_TEST

START_TEST(roundtrip_ack)
{
	uint8_t buf[2048];
	struct wire_frame f;
	struct wire_ack a;

	parse_whole(buf, sample(S_ACK, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_ACK);
	memset(&a, 0xEE, sizeof(a));
	ck_assert_int_eq(wire_decode_ack(&f, &a), 0);
	ck_assert_uint_eq(a.recv_cum, 100);
	ck_assert_uint_eq(a.window_end, 1100);
	ck_assert_uint_eq(a.deliv_cum, 42);
	ck_assert_uint_eq(a.nsack, 3);
	ck_assert_uint_eq(a.ndeliv, 2);
	ck_assert_mem_eq(a.sack, s_ack.sack, 3 * sizeof(struct wire_range));
	ck_assert_mem_eq(a.deliv, s_ack.deliv, 2 * sizeof(struct wire_range));
}
END_TEST

START_TEST(ack_full_and_empty)
{
	uint8_t buf[2048];
	struct wire_frame f;
	struct wire_ack a = { .recv_cum = 5, .window_end = 6 }, out;

	parse_whole(buf, wire_encode_ack(buf, sizeof(buf), &a), &f);
	ck_assert_uint_eq(f.len, 28);
	ck_assert_int_eq(wire_decode_ack(&f, &out), 0);
	ck_assert_uint_eq(out.nsack + out.ndeliv, 0);
	ck_assert_uint_eq(out.window_end, 6);

	a.nsack = a.ndeliv = WIRE_MAX_RANGES;
	for (uint64_t i = 0; i < WIRE_MAX_RANGES; i++) {
		a.sack[i] = (struct wire_range){ 10 + 3 * i, 11 + 3 * i };
		a.deliv[i] = (struct wire_range){ 1000 * i, 1000 * i + 999 };
	}
	parse_whole(buf, wire_encode_ack(buf, sizeof(buf), &a), &f);
	ck_assert_uint_eq(f.len, 28 + 2 * WIRE_MAX_RANGES * 16);
	ck_assert_int_eq(wire_decode_ack(&f, &out), 0);
	ck_assert_uint_eq(out.nsack, WIRE_MAX_RANGES);
	ck_assert_uint_eq(out.ndeliv, WIRE_MAX_RANGES);
	ck_assert_mem_eq(out.sack, a.sack, sizeof(a.sack));
	ck_assert_mem_eq(out.deliv, a.deliv, sizeof(a.deliv));
}
END_TEST

START_TEST(roundtrip_ping_pong_bye)
{
	uint8_t buf[64];
	struct wire_frame f;
	uint64_t t = 0;
	uint16_t reason = 0;

	parse_whole(buf, sample(S_PING_F, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_PING);
	ck_assert_int_eq(wire_decode_ping(&f, &t), 0);
	ck_assert_uint_eq(t, S_PING);
	parse_whole(buf, sample(S_PONG_F, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_PONG);
	t = 0;
	ck_assert_int_eq(wire_decode_ping(&f, &t), 0);
	ck_assert_uint_eq(t, S_PING);
	parse_whole(buf, sample(S_BYE, buf), &f);
	ck_assert_uint_eq(f.type, WIRE_BYE);
	ck_assert_uint_eq(f.len, 2);
	ck_assert_int_eq(wire_decode_bye(&f, &reason), 0);
	ck_assert_uint_eq(reason, WIRE_REFUSE_SHUTDOWN);
}
END_TEST

START_TEST(ping_bad)
{
	uint8_t buf[64], p[9] = { 0 };
	struct wire_frame f;
	uint64_t t;
	uint16_t r;

	ck_assert_uint_eq(wire_encode_ping(buf, sizeof(buf), WIRE_BYE, 1), 0);
	ck_assert_uint_eq(wire_encode_ping(buf, sizeof(buf), (enum wire_type)0, 1), 0);
	parse_whole(buf, mkframe(buf, WIRE_PING, p, 7), &f);
	ck_assert_int_eq(wire_decode_ping(&f, &t), -EBADMSG);
	parse_whole(buf, mkframe(buf, WIRE_PONG, p, 9), &f);
	ck_assert_int_eq(wire_decode_ping(&f, &t), -EBADMSG);
	parse_whole(buf, mkframe(buf, WIRE_BYE, p, 3), &f);
	ck_assert_int_eq(wire_decode_bye(&f, &r), -EBADMSG);
}
END_TEST

/* A decoder handed a frame of another type must refuse it, even when the
 * payload would suit it. */
START_TEST(decoder_wrong_type)
{
	uint8_t buf[2048];
	struct wire_frame f;

	parse_whole(buf, sample(_i, buf), &f);
	ck_assert_int_eq(decode_any(&f), 0);
	for (int t = 0; t < 256; t++) {
		int same = t == f.type ||
			   (t == WIRE_PING && f.type == WIRE_PONG) ||
			   (t == WIRE_PONG && f.type == WIRE_PING);
		struct wire_frame g = f;

		if (same || f.type == WIRE_READY)
			continue;
		g.type = (uint8_t)t;
		ck_assert_msg(decode_as(f.type, &g) == -EBADMSG, "decoder %u on type %d", f.type, t);
	}
}
END_TEST

START_TEST(stream_of_frames)
{
	uint8_t buf[8192];
	size_t off[NSAMPLES + 1], total = 0, used;
	struct wire_frame f;

	for (int i = 0; i < NSAMPLES; i++) {
		off[i] = total;
		total += sample(i, buf + total);
	}
	off[NSAMPLES] = total;
	for (int i = 0; i < NSAMPLES; i++) {
		ck_assert_int_eq(wire_frame_parse(buf + off[i], total - off[i], &f, &used), 1);
		ck_assert_uint_eq(used, off[i + 1] - off[i]);
		ck_assert_int_eq(decode_any(&f), 0);
	}
}
END_TEST

/* Every proper prefix of every frame asks for more bytes, with the right
 * count, and is read from an exactly-sized copy so that a read past len
 * shows under ASan. */
START_TEST(truncated_frames)
{
	uint8_t buf[2048];
	size_t n = sample(_i, buf);
	struct wire_frame f;

	for (size_t k = 0; k < n; k++) {
		uint8_t *p = malloc(k ? k : 1);
		size_t used = 0;

		memcpy(p, buf, k);
		ck_assert_int_eq(wire_frame_parse(p, k, &f, &used), 0);
		ck_assert_uint_eq(used, k < WIRE_HDR_LEN ? WIRE_HDR_LEN : n);
		free(p);
	}
}
END_TEST

/* Every shorter payload, and one with a byte added, re-framed with a valid
 * CRC: the decoder must see the damage. */
START_TEST(truncated_payloads)
{
	uint8_t buf[2048], fr[2048];
	size_t n = sample(_i, buf);
	size_t plen = n - WIRE_HDR_LEN;
	struct wire_frame f;

	/* A DATA payload cut after seq and one block byte is a shorter block. */
	if (_i == S_DATA)
		plen = 9;
	for (size_t k = 0; k < plen; k++) {
		parse_whole(fr, mkframe(fr, buf[3], buf + WIRE_HDR_LEN, (uint32_t)k), &f);
		ck_assert_msg(decode_any(&f) == -EBADMSG, "type %d payload %zu of %zu", _i, k, plen);
	}
	if (_i == S_DATA)
		return;
	buf[n] = 0;
	parse_whole(fr, mkframe(fr, buf[3], buf + WIRE_HDR_LEN, (uint32_t)plen + 1), &f);
	ck_assert_int_eq(decode_any(&f), -EBADMSG);
	buf[n] = 'x';
	parse_whole(fr, mkframe(fr, buf[3], buf + WIRE_HDR_LEN, (uint32_t)plen + 1), &f);
	ck_assert_int_eq(decode_any(&f), -EBADMSG);
}
END_TEST

/* Encoders given too little room return 0 and stay inside cap. */
START_TEST(encode_small_cap)
{
	uint8_t buf[2048];
	size_t n = sample(_i, buf);

	for (size_t cap = 0; cap < n; cap++) {
		uint8_t *p = malloc(cap ? cap : 1);

		ck_assert_uint_eq(encode_sample(_i, p, cap), 0);
		free(p);
	}
	ck_assert_uint_eq(encode_sample(_i, buf, n), n);
}
END_TEST

/* Flipping any single bit must be caught.  Bits of magic, version and
 * length are caught by their own checks before the CRC can be. */
START_TEST(bit_flips)
{
	uint8_t buf[2048];
	size_t n = sample(_i, buf);
	struct wire_frame f;

	for (size_t bit = 0; bit < 8 * n; bit++) {
		size_t used = 0;
		int rc, want;

		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		rc = wire_frame_parse(buf, n, &f, &used);
		if (bit < 16) {
			want = -EPROTO;
		} else if (bit < 24) {
			want = -EPROTONOSUPPORT;
		} else if (bit == 31) {
			/* The sealed flag: no CRC to check, the tag is checked
			 * when the frame is opened (link.c refuses a sealed
			 * frame on a stream without keys). */
			want = n - WIRE_HDR_LEN >= WIRE_TAG_LEN + (buf[3] == (WIRE_DATA | WIRE_SEALED) ? 8u : 0u) ? 1
												     : -EBADMSG;
		} else if (bit >= 32 && bit < 64) {
			uint32_t len = rd32(buf + 4);

			if (len > WIRE_MAX_PAYLOAD)
				want = -EMSGSIZE;
			else if (WIRE_HDR_LEN + len > n)
				want = 0;
			else
				want = -EBADMSG;
		} else {
			want = -EBADMSG;
		}
		ck_assert_msg(rc == want, "sample %d bit %zu: %d, want %d", _i, bit, rc, want);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	parse_whole(buf, n, &f);
}
END_TEST

START_TEST(oversized)
{
	uint8_t buf[WIRE_HDR_LEN];
	struct wire_frame f;
	size_t used = 0;

	mkframe(buf, WIRE_DATA, NULL, 0);
	be32(buf + 4, WIRE_MAX_PAYLOAD + 1);
	ck_assert_int_eq(wire_frame_parse(buf, sizeof(buf), &f, &used), -EMSGSIZE);
	be32(buf + 4, UINT32_MAX);
	ck_assert_int_eq(wire_frame_parse(buf, sizeof(buf), &f, &used), -EMSGSIZE);
	/* The largest allowed length just asks for the rest. */
	be32(buf + 4, WIRE_MAX_PAYLOAD);
	ck_assert_int_eq(wire_frame_parse(buf, sizeof(buf), &f, &used), 0);
	ck_assert_uint_eq(used, WIRE_HDR_LEN + WIRE_MAX_PAYLOAD);
}
END_TEST

START_TEST(bad_magic_version_type)
{
	uint8_t buf[64];
	struct wire_frame f;
	size_t used, n;

	n = sample(S_PING_F, buf);
	buf[0] = 'X';
	ck_assert_int_eq(wire_frame_parse(buf, n, &f, &used), -EPROTO);
	/* Checked as soon as the header is complete, before the payload. */
	ck_assert_int_eq(wire_frame_parse(buf, WIRE_HDR_LEN, &f, &used), -EPROTO);

	n = sample(S_PING_F, buf);
	buf[2] = 1;
	be32(buf + 8, 0);
	be32(buf + 8, ref_crc32c(0, buf, n));
	memset(&f, 0, sizeof(f));
	ck_assert_int_eq(wire_frame_parse(buf, n, &f, &used), -EPROTONOSUPPORT);
	ck_assert_uint_eq(f.version, 1);
	buf[2] = 0;
	ck_assert_int_eq(wire_frame_parse(buf, WIRE_HDR_LEN, &f, &used), -EPROTONOSUPPORT);
	ck_assert_uint_eq(f.version, 0);

	/* Unknown types with a valid CRC. */
	n = mkframe(buf, 0, "", 0);
	ck_assert_int_eq(wire_frame_parse(buf, n, &f, &used), -EINVAL);
	n = mkframe(buf, WIRE_TYPE_MAX, "", 0);
	ck_assert_int_eq(wire_frame_parse(buf, n, &f, &used), -EINVAL);
	n = mkframe(buf, 0x7F, "abc", 3);
	ck_assert_int_eq(wire_frame_parse(buf, n, &f, &used), -EINVAL);
	n = mkframe(buf, WIRE_TYPE_MAX - 1, "ab", 2);
	ck_assert_int_eq(wire_frame_parse(buf, n, &f, &used), 1);
}
END_TEST

/* A sealed frame's CRC field is not checked (its tag is, by seal.c); it
 * must be long enough for its tag, and no decoder takes it unopened. */
START_TEST(sealed_parse)
{
	uint8_t buf[256];
	struct wire_frame f;
	size_t used;

	memset(buf, 0xAB, sizeof(buf));
	wire_encode_sealed_hdr(buf, WIRE_PING, 8 + WIRE_TAG_LEN);
	ck_assert_uint_eq(buf[3], WIRE_PING | WIRE_SEALED);
	ck_assert_uint_eq(rd32(buf + 8), 0);
	be32(buf + 8, 0xDEADBEEF);
	ck_assert_int_eq(wire_frame_parse(buf, WIRE_HDR_LEN + 8 + WIRE_TAG_LEN, &f, &used), 1);
	ck_assert_uint_eq(used, WIRE_HDR_LEN + 8 + WIRE_TAG_LEN);
	ck_assert_uint_eq(f.type, WIRE_PING);
	ck_assert_uint_eq(f.sealed, 1);
	ck_assert_uint_eq(f.len, 8 + WIRE_TAG_LEN);
	f.len = 8;
	ck_assert_int_eq(wire_decode_ping(&f, &(uint64_t){ 0 }), -EBADMSG);
	f.sealed = 0;
	ck_assert_int_eq(wire_decode_ping(&f, &(uint64_t){ 0 }), 0);
	wire_encode_sealed_hdr(buf, WIRE_READY, WIRE_TAG_LEN - 1);
	ck_assert_int_eq(wire_frame_parse(buf, WIRE_HDR_LEN + WIRE_TAG_LEN, &f, &used), -EBADMSG);
	wire_encode_sealed_hdr(buf, WIRE_DATA, 8 + WIRE_TAG_LEN - 1);
	ck_assert_int_eq(wire_frame_parse(buf, sizeof(buf), &f, &used), -EBADMSG);
	wire_encode_sealed_hdr(buf, 0, WIRE_TAG_LEN);
	ck_assert_int_eq(wire_frame_parse(buf, sizeof(buf), &f, &used), -EINVAL);
	wire_encode_sealed_hdr(buf, WIRE_DATA, WIRE_MAX_PAYLOAD + 1);
	ck_assert_int_eq(wire_frame_parse(buf, sizeof(buf), &f, &used), -EMSGSIZE);
}
END_TEST

/* Encryption is 0 (none) or 1 (aead); anything else is malformed, and the
 * encoders refuse it. */
START_TEST(bad_encryption)
{
	uint8_t buf[256];
	struct wire_hello h = s_hello;
	struct wire_challenge c = s_challenge;
	struct wire_frame f;
	size_t n;

	n = wire_encode_hello(buf, sizeof(buf), &h);
	buf[WIRE_HDR_LEN + 48] = 2;
	be32(buf + 8, 0);
	be32(buf + 8, ref_crc32c(0, buf, n));
	parse_whole(buf, n, &f);
	ck_assert_int_eq(wire_decode_hello(&f, &h), -EBADMSG);
	n = wire_encode_challenge(buf, sizeof(buf), &c);
	buf[WIRE_HDR_LEN + WIRE_CHALLENGE_MAC_OFF + WIRE_MAC_LEN] = 0x80;
	be32(buf + 8, 0);
	be32(buf + 8, ref_crc32c(0, buf, n));
	parse_whole(buf, n, &f);
	ck_assert_int_eq(wire_decode_challenge(&f, &c), -EBADMSG);
	h = s_hello;
	h.encryption = 2;
	ck_assert_uint_eq(wire_encode_hello(buf, sizeof(buf), &h), 0);
	c = s_challenge;
	c.encryption = 2;
	ck_assert_uint_eq(wire_encode_challenge(buf, sizeof(buf), &c), 0);
}
END_TEST

/* HELLO payload by hand, with the two names given raw. */
static size_t hello_raw(uint8_t *buf, const char *from, size_t flen, const char *to, size_t tlen)
{
	uint8_t p[512];
	size_t n = 49;   /* up to the names; encryption "none" */

	memset(p, 0, n);
	p[n++] = (uint8_t)flen;
	memcpy(p + n, from, flen);
	n += flen;
	p[n++] = (uint8_t)tlen;
	memcpy(p + n, to, tlen);
	n += tlen;
	return mkframe(buf, WIRE_HELLO, p, (uint32_t)n);
}

START_TEST(bad_names)
{
	uint8_t buf[1024];
	struct wire_frame f;
	struct wire_hello h = s_hello;
	struct wire_challenge c = s_challenge;
	char big[WIRE_NAME_MAX + 1];

	memset(big, 'x', sizeof(big));
	parse_whole(buf, hello_raw(buf, "a", 1, "b", 1), &f);
	ck_assert_int_eq(wire_decode_hello(&f, &h), 0);
	parse_whole(buf, hello_raw(buf, "", 0, "b", 1), &f);
	ck_assert_int_eq(wire_decode_hello(&f, &h), -EBADMSG);
	parse_whole(buf, hello_raw(buf, "a", 1, "", 0), &f);
	ck_assert_int_eq(wire_decode_hello(&f, &h), -EBADMSG);
	parse_whole(buf, hello_raw(buf, "a b", 3, "b", 1), &f);
	ck_assert_int_eq(wire_decode_hello(&f, &h), -EBADMSG);
	parse_whole(buf, hello_raw(buf, "a", 1, "b\0c", 3), &f);
	ck_assert_int_eq(wire_decode_hello(&f, &h), -EBADMSG);
	parse_whole(buf, hello_raw(buf, "a/b", 3, "b", 1), &f);
	ck_assert_int_eq(wire_decode_hello(&f, &h), -EBADMSG);
	parse_whole(buf, hello_raw(buf, big, WIRE_NAME_MAX, "b", 1), &f);
	ck_assert_int_eq(wire_decode_hello(&f, &h), 0);
	ck_assert_uint_eq(strlen(h.from), WIRE_NAME_MAX);
	parse_whole(buf, hello_raw(buf, big, WIRE_NAME_MAX + 1, "b", 1), &f);
	ck_assert_int_eq(wire_decode_hello(&f, &h), -EBADMSG);

	h = s_hello;
	strcpy(h.to, "");
	ck_assert_uint_eq(wire_encode_hello(buf, sizeof(buf), &h), 0);
	strcpy(h.to, "x y");
	ck_assert_uint_eq(wire_encode_hello(buf, sizeof(buf), &h), 0);
	h = s_hello;
	memcpy(h.from, big, sizeof(big));   /* no NUL in the array */
	ck_assert_uint_eq(wire_encode_hello(buf, sizeof(buf), &h), 0);
	strcpy(c.from, "tab\there");
	ck_assert_uint_eq(wire_encode_challenge(buf, sizeof(buf), &c), 0);
}
END_TEST

START_TEST(bad_reason)
{
	uint8_t buf[1024], p[300];
	struct wire_frame f;
	struct wire_refuse_msg r = { .code = 1, .reason = "line\nbreak" };

	ck_assert_uint_eq(wire_encode_refuse(buf, sizeof(buf), &r), 0);
	memset(r.reason, 'x', sizeof(r.reason));   /* no NUL in the array */
	ck_assert_uint_eq(wire_encode_refuse(buf, sizeof(buf), &r), 0);

	memset(p, 'x', sizeof(p));
	be16(p, 1);
	be16(p + 2, 3);
	p[5] = '\0';
	parse_whole(buf, mkframe(buf, WIRE_REFUSE, p, 7), &f);
	ck_assert_int_eq(wire_decode_refuse(&f, &r), -EBADMSG);
	p[5] = 0x7f;
	parse_whole(buf, mkframe(buf, WIRE_REFUSE, p, 7), &f);
	ck_assert_int_eq(wire_decode_refuse(&f, &r), -EBADMSG);
	p[5] = 'y';
	parse_whole(buf, mkframe(buf, WIRE_REFUSE, p, 7), &f);
	ck_assert_int_eq(wire_decode_refuse(&f, &r), 0);
	ck_assert_str_eq(r.reason, "xyx");
	/* Longer than the struct can hold. */
	be16(p + 2, WIRE_REASON_MAX + 1);
	parse_whole(buf, mkframe(buf, WIRE_REFUSE, p, 4 + WIRE_REASON_MAX + 1), &f);
	ck_assert_int_eq(wire_decode_refuse(&f, &r), -EBADMSG);
	be16(p + 2, WIRE_REASON_MAX);
	parse_whole(buf, mkframe(buf, WIRE_REFUSE, p, 4 + WIRE_REASON_MAX), &f);
	ck_assert_int_eq(wire_decode_refuse(&f, &r), 0);
	ck_assert_uint_eq(strlen(r.reason), WIRE_REASON_MAX);
}
END_TEST

/* ACK payload by hand: counts as given, then the ranges as given. */
static size_t ack_raw(uint8_t *buf, uint16_t nsack, uint16_t ndeliv,
		      const struct wire_range *v, size_t nv)
{
	uint8_t p[28 + 80 * 16];

	memset(p, 0, 24);
	be64(p, 10);
	be64(p + 8, 20);
	be16(p + 24, nsack);
	be16(p + 26, ndeliv);
	for (size_t i = 0; i < nv; i++) {
		be64(p + 28 + 16 * i, v[i].start);
		be64(p + 36 + 16 * i, v[i].end);
	}
	return mkframe(buf, WIRE_ACK, p, (uint32_t)(28 + 16 * nv));
}

static int ack_check(uint16_t nsack, uint16_t ndeliv, const struct wire_range *v, size_t nv)
{
	uint8_t buf[4096];
	struct wire_frame f;
	struct wire_ack a;

	parse_whole(buf, ack_raw(buf, nsack, ndeliv, v, nv), &f);
	return wire_decode_ack(&f, &a);
}

START_TEST(bad_ranges)
{
	struct wire_range v[80];
	struct wire_ack a = s_ack;
	uint8_t buf[4096];

	for (uint64_t i = 0; i < 80; i++)
		v[i] = (struct wire_range){ 2 * i, 2 * i + 1 };
	ck_assert_int_eq(ack_check(32, 32, v, 64), 0);
	ck_assert_int_eq(ack_check(33, 0, v, 33), -EBADMSG);
	ck_assert_int_eq(ack_check(0, 33, v, 33), -EBADMSG);
	ck_assert_int_eq(ack_check(33, 33, v, 66), -EBADMSG);
	ck_assert_int_eq(ack_check(UINT16_MAX, 0, v, 80), -EBADMSG);

	/* Each list is checked on its own: deliv may restart below sack. */
	ck_assert_int_eq(ack_check(2, 1, (struct wire_range[]){ { 5, 6 }, { 7, 9 }, { 1, 2 } }, 3), 0);
	ck_assert_int_eq(ack_check(2, 0, (struct wire_range[]){ { 5, 6 }, { 6, 9 } }, 2), 0);
	ck_assert_int_eq(ack_check(1, 0, (struct wire_range[]){ { 5, 5 } }, 1), -EBADMSG);
	ck_assert_int_eq(ack_check(1, 0, (struct wire_range[]){ { 6, 5 } }, 1), -EBADMSG);
	ck_assert_int_eq(ack_check(2, 0, (struct wire_range[]){ { 7, 9 }, { 5, 6 } }, 2), -EBADMSG);
	ck_assert_int_eq(ack_check(2, 0, (struct wire_range[]){ { 5, 8 }, { 7, 9 } }, 2), -EBADMSG);
	ck_assert_int_eq(ack_check(2, 0, (struct wire_range[]){ { 5, 8 }, { 5, 9 } }, 2), -EBADMSG);
	ck_assert_int_eq(ack_check(0, 2, (struct wire_range[]){ { 5, 8 }, { 7, 9 } }, 2), -EBADMSG);
	ck_assert_int_eq(ack_check(0, 1, (struct wire_range[]){ { 9, 9 } }, 1), -EBADMSG);
	/* Counts that promise more ranges than there are bytes. */
	ck_assert_int_eq(ack_check(3, 0, v, 2), -EBADMSG);
	ck_assert_int_eq(ack_check(1, 0, v, 2), -EBADMSG);

	a.nsack = WIRE_MAX_RANGES + 1;
	ck_assert_uint_eq(wire_encode_ack(buf, sizeof(buf), &a), 0);
	a = s_ack;
	a.ndeliv = WIRE_MAX_RANGES + 1;
	ck_assert_uint_eq(wire_encode_ack(buf, sizeof(buf), &a), 0);
	a = s_ack;
	a.sack[1].start = 104;
	ck_assert_uint_eq(wire_encode_ack(buf, sizeof(buf), &a), 0);
	a = s_ack;
	a.deliv[0].end = a.deliv[0].start;
	ck_assert_uint_eq(wire_encode_ack(buf, sizeof(buf), &a), 0);
	a = s_ack;
	a.deliv[1] = (struct wire_range){ 40, 41 };
	ck_assert_uint_eq(wire_encode_ack(buf, sizeof(buf), &a), 0);
}
END_TEST

/* ---- records -------------------------------------------------------------- */

static const struct wire_record s_rec = {
	.len = 1234567, .msg_id = 0xA1B2C3D4E5F60718ull, .incarnation = 0x0102030405060708ull,
	.src = "paris/job-17", .dst = "tokyo/collector.main",
};

START_TEST(record_roundtrip)
{
	uint8_t buf[512];
	struct wire_record r;
	size_t n = wire_encode_record_hdr(buf, sizeof(buf), &s_rec);

	ck_assert_uint_eq(n, 24 + 12 + 20);
	ck_assert_uint_eq(wire_record_hdr_len(&s_rec), n);
	ck_assert_mem_eq(buf, "\xA5\x00\x0c\x14\x00\x12\xd6\x87\xA1\xB2\xC3\xD4\xE5\xF6\x07\x18"
			 "\x01\x02\x03\x04\x05\x06\x07\x08", 24);
	ck_assert_mem_eq(buf + 24, "paris/job-17tokyo/collector.main", 32);
	memset(&r, 0xEE, sizeof(r));
	ck_assert_int_eq(wire_decode_record_hdr(buf, n, &r), (int)n);
	ck_assert_uint_eq(r.len, 1234567);
	ck_assert_uint_eq(r.msg_id, 0xA1B2C3D4E5F60718ull);
	ck_assert_uint_eq(r.incarnation, 0x0102030405060708ull);
	ck_assert_str_eq(r.src, "paris/job-17");
	ck_assert_str_eq(r.dst, "tokyo/collector.main");
	/* Payload bytes after the header are not the decoder's business. */
	ck_assert_int_eq(wire_decode_record_hdr(buf, sizeof(buf), &r), (int)n);
}
END_TEST

START_TEST(record_limits)
{
	uint8_t buf[512];
	struct wire_record r = s_rec, out;
	size_t n;

	/* Longest cluster; then longest name, past WIRE_NAME_MAX. */
	memset(r.src, 'c', WIRE_NAME_MAX);
	r.src[WIRE_NAME_MAX] = '/';
	memset(r.src + WIRE_NAME_MAX + 1, 'n', WIRE_ENDPOINT_MAX - WIRE_NAME_MAX - 1);
	r.src[WIRE_ENDPOINT_MAX] = '\0';
	memset(r.dst, 'n', WIRE_ENDPOINT_MAX);
	memcpy(r.dst, "c/", 2);
	r.dst[WIRE_ENDPOINT_MAX] = '\0';
	r.len = WIRE_MAX_MSG;
	r.msg_id = 0;
	n = wire_encode_record_hdr(buf, sizeof(buf), &r);
	ck_assert_uint_eq(n, 24 + 2 * WIRE_ENDPOINT_MAX);
	ck_assert_int_eq(wire_decode_record_hdr(buf, n, &out), (int)n);
	ck_assert_str_eq(out.src, r.src);
	ck_assert_str_eq(out.dst, r.dst);
	ck_assert_uint_eq(out.len, WIRE_MAX_MSG);
	ck_assert_uint_eq(out.len, r.len);
	r.len = 0;
	n = wire_encode_record_hdr(buf, sizeof(buf), &r);
	ck_assert_int_eq(wire_decode_record_hdr(buf, n, &out), (int)n);
	ck_assert_uint_eq(out.len, 0);
}
END_TEST

START_TEST(record_truncated)
{
	uint8_t buf[512];
	struct wire_record r;
	size_t n = wire_encode_record_hdr(buf, sizeof(buf), &s_rec);

	for (size_t k = 0; k < n; k++) {
		uint8_t *p = malloc(k ? k : 1);

		memcpy(p, buf, k);
		ck_assert_msg(wire_decode_record_hdr(p, k, &r) == 0, "prefix %zu", k);
		free(p);
	}
}
END_TEST

/* A record header by hand, names given raw. */
static size_t rec_raw(uint8_t *buf, uint32_t len, const char *src, size_t slen,
		      const char *dst, size_t dlen)
{
	buf[0] = WIRE_REC_MAGIC;
	buf[1] = 0;
	buf[2] = (uint8_t)slen;
	buf[3] = (uint8_t)dlen;
	be32(buf + 4, len);
	be64(buf + 8, 99);
	be64(buf + 16, 7);
	memcpy(buf + 24, src, slen);
	memcpy(buf + 24 + slen, dst, dlen);
	return 24 + slen + dlen;
}

static int rec_check(uint32_t len, const char *src, size_t slen, const char *dst, size_t dlen)
{
	uint8_t buf[1024];
	struct wire_record r;
	size_t n = rec_raw(buf, len, src, slen, dst, dlen);

	return wire_decode_record_hdr(buf, n, &r);
}

START_TEST(record_bad)
{
	uint8_t buf[1024];
	struct wire_record r;
	char big[300];
	size_t n;

	memset(big, 'n', sizeof(big));
	big[0] = 'c';
	big[1] = '/';
	ck_assert_int_eq(rec_check(5, "a/b", 3, "c/d", 3), 30);
	ck_assert_int_eq(rec_check(WIRE_MAX_MSG + 1, "a/b", 3, "c/d", 3), -EBADMSG);
	ck_assert_int_eq(rec_check(UINT32_MAX, "a/b", 3, "c/d", 3), -EBADMSG);
	ck_assert_int_eq(rec_check(5, "ab", 2, "c/d", 3), -EBADMSG);
	ck_assert_int_eq(rec_check(5, "a/b", 3, "c/", 2), -EBADMSG);
	ck_assert_int_eq(rec_check(5, "/b", 2, "c/d", 3), -EBADMSG);
	ck_assert_int_eq(rec_check(5, "a/b", 3, "c/d/e", 5), -EBADMSG);
	ck_assert_int_eq(rec_check(5, "a/b c", 5, "c/d", 3), -EBADMSG);
	ck_assert_int_eq(rec_check(5, "a/b\0", 4, "c/d", 3), -EBADMSG);
	ck_assert_int_eq(rec_check(5, "a/b", 3, "", 0), -EBADMSG);
	ck_assert_int_eq(rec_check(5, big, WIRE_ENDPOINT_MAX, "c/d", 3), (int)(27 + WIRE_ENDPOINT_MAX));
	ck_assert_int_eq(rec_check(5, big, WIRE_ENDPOINT_MAX + 1, "c/d", 3), -EBADMSG);
	ck_assert_int_eq(rec_check(5, "c/d", 3, big, 255), -EBADMSG);

	/* Fixed fields are judged as soon as they arrive. */
	n = rec_raw(buf, 5, "a/b", 3, "c/d", 3);
	buf[0] = 0xA4;
	ck_assert_int_eq(wire_decode_record_hdr(buf, 1, &r), -EBADMSG);
	ck_assert_int_eq(wire_decode_record_hdr(buf, n, &r), -EBADMSG);
	buf[0] = WIRE_REC_MAGIC;
	buf[1] = 1;
	ck_assert_int_eq(wire_decode_record_hdr(buf, 2, &r), -EBADMSG);
	ck_assert_int_eq(wire_decode_record_hdr(buf, n, &r), -EBADMSG);
	buf[1] = 0;
	buf[2] = 0;
	ck_assert_int_eq(wire_decode_record_hdr(buf, 3, &r), -EBADMSG);
	buf[2] = WIRE_ENDPOINT_MAX + 1;
	ck_assert_int_eq(wire_decode_record_hdr(buf, 3, &r), -EBADMSG);
	buf[2] = 3;
	buf[3] = 0;
	ck_assert_int_eq(wire_decode_record_hdr(buf, 4, &r), -EBADMSG);
	buf[3] = 3;
	be32(buf + 4, WIRE_MAX_MSG + 1);
	ck_assert_int_eq(wire_decode_record_hdr(buf, 8, &r), -EBADMSG);
	ck_assert_int_eq(wire_decode_record_hdr(buf, 7, &r), 0);
}
END_TEST

START_TEST(record_encode_bad)
{
	uint8_t buf[512];
	struct wire_record r = s_rec;
	size_t n = wire_record_hdr_len(&s_rec);

	ck_assert_uint_eq(wire_encode_record_hdr(buf, n - 1, &r), 0);
	ck_assert_uint_eq(wire_encode_record_hdr(buf, n, &r), n);
	r.len = WIRE_MAX_MSG + 1;
	ck_assert_uint_eq(wire_encode_record_hdr(buf, sizeof(buf), &r), 0);
	r = s_rec;
	strcpy(r.src, "paris");
	ck_assert_uint_eq(wire_encode_record_hdr(buf, sizeof(buf), &r), 0);
	r = s_rec;
	strcpy(r.dst, "tokyo/a b");
	ck_assert_uint_eq(wire_encode_record_hdr(buf, sizeof(buf), &r), 0);
	r = s_rec;
	memset(r.dst, 'x', sizeof(r.dst));   /* no NUL in the array */
	r.dst[1] = '/';
	ck_assert_uint_eq(wire_encode_record_hdr(buf, sizeof(buf), &r), 0);
}
END_TEST

START_TEST(record_between)
{
	struct wire_record r = { .src = "paris/master", .dst = "tokyo/cm" };

	ck_assert(wire_record_between(&r, "paris", "tokyo"));
	ck_assert(!wire_record_between(&r, "tokyo", "paris"));
	/* a cluster name that is a prefix of another is not that cluster */
	ck_assert(!wire_record_between(&r, "par", "tokyo"));
	ck_assert(!wire_record_between(&r, "paris", "tok"));
	ck_assert(!wire_record_between(&r, "paris2", "tokyo"));
	strcpy(r.src, "lyon/master");
	ck_assert(!wire_record_between(&r, "paris", "tokyo"));
	ck_assert(wire_endpoint_in("lyon/a/b", "lyon"));
	ck_assert(!wire_endpoint_in("lyon", "lyon"));
}
END_TEST

Suite *make_wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *crc = tcase_create("crc32c");
	TCase *fr = tcase_create("frames");
	TCase *rec = tcase_create("records");

	tcase_add_test(crc, crc_check_value);
	tcase_add_test(crc, crc_known_vectors);
	tcase_add_test(crc, crc_empty);
	tcase_add_test(crc, crc_continuation);
	tcase_add_test(crc, crc_matches_reference);
	tcase_add_test(crc, crc_long_buffers);
	suite_add_tcase(s, crc);

	tcase_add_test(fr, names);
	tcase_add_test(fr, type_names);
	tcase_add_test(fr, golden_ping);
	tcase_add_test(fr, golden_hello);
	tcase_add_test(fr, golden_ack);
	tcase_add_test(fr, roundtrip_hello);
	tcase_add_test(fr, roundtrip_hello_max_names);
	tcase_add_test(fr, roundtrip_challenge);
	tcase_add_test(fr, roundtrip_auth_ready);
	tcase_add_test(fr, roundtrip_refuse);
	tcase_add_test(fr, roundtrip_data);
	tcase_add_test(fr, data_hdr_crc);
	tcase_add_test(fr, data_bad);
	tcase_add_test(fr, data_peek);
	tcase_add_test(fr, roundtrip_ack);
	tcase_add_test(fr, ack_full_and_empty);
	tcase_add_test(fr, roundtrip_ping_pong_bye);
	tcase_add_test(fr, ping_bad);
	tcase_add_loop_test(fr, decoder_wrong_type, 0, NSAMPLES);
	tcase_add_test(fr, stream_of_frames);
	tcase_add_loop_test(fr, truncated_frames, 0, NSAMPLES);
	tcase_add_loop_test(fr, truncated_payloads, 0, NSAMPLES);
	tcase_add_loop_test(fr, encode_small_cap, 0, NSAMPLES);
	tcase_add_loop_test(fr, bit_flips, 0, NSAMPLES);
	tcase_add_test(fr, oversized);
	tcase_add_test(fr, bad_magic_version_type);
	tcase_add_test(fr, bad_names);
	tcase_add_test(fr, sealed_parse);
	tcase_add_test(fr, bad_encryption);
	tcase_add_test(fr, bad_reason);
	tcase_add_test(fr, bad_ranges);
	suite_add_tcase(s, fr);

	tcase_add_test(rec, record_roundtrip);
	tcase_add_test(rec, record_limits);
	tcase_add_test(rec, record_truncated);
	tcase_add_test(rec, record_bad);
	tcase_add_test(rec, record_encode_bad);
	tcase_add_test(rec, record_between);
	suite_add_tcase(s, rec);
	return s;
}
