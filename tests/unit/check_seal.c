/* check_seal.c - the handshake transcript and MACs (auth.c), AES-256-GCM
 * (aesgcm.c) and sealed frames (seal.c, sealq.c). */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/aesgcm.h"
#include "ldsd/auth.h"
#include "ldsd/seal.h"
#include "ldsd/sealq.h"
#include "suites.h"

static const uint8_t psk[] = "check_seal: sixteen bytes or more";
#define PSK_LEN (sizeof(psk) - 1)

/* A HELLO and a CHALLENGE payload as the two sides send them. */
static size_t hello_payload(uint8_t *p, uint16_t idx, uint8_t enc)
{
	struct wire_hello h = { .stream_idx = idx, .nstreams = 4, .max_msg = 1u << 20, .instance = 7,
				.nonce = { 1, 2, 3 }, .encryption = enc, .from = "a", .to = "b" };
	uint8_t buf[256];
	size_t n = wire_encode_hello(buf, sizeof(buf), &h);

	ck_assert_uint_gt(n, WIRE_HDR_LEN);
	memcpy(p, buf + WIRE_HDR_LEN, n - WIRE_HDR_LEN);
	return n - WIRE_HDR_LEN;
}

static size_t challenge_payload(uint8_t *p, uint8_t mac0)
{
	struct wire_challenge c = { .max_msg = 1u << 20, .instance = 9, .nonce = { 4, 5, 6 }, .mac = { mac0 },
				    .encryption = WIRE_ENC_AEAD, .from = "b" };
	uint8_t buf[256];
	size_t n = wire_encode_challenge(buf, sizeof(buf), &c);

	ck_assert_uint_gt(n, WIRE_HDR_LEN);
	memcpy(p, buf + WIRE_HDR_LEN, n - WIRE_HDR_LEN);
	return n - WIRE_HDR_LEN;
}

static void transcript(uint16_t idx, uint8_t enc, uint8_t th[AUTH_TH_LEN])
{
	uint8_t h[256], c[256];
	size_t hn = hello_payload(h, idx, enc), cn = challenge_payload(c, 0);

	ck_assert_int_eq(auth_transcript(h, hn, c, cn, th), 0);
}

/* Every field of HELLO and CHALLENGE is in the transcript, except the
 * mac, which is computed over it. */
START_TEST(transcript_fields)
{
	uint8_t h[256], c[256], th[AUTH_TH_LEN], th2[AUTH_TH_LEN];
	size_t hn = hello_payload(h, 0, WIRE_ENC_AEAD), cn = challenge_payload(c, 0);

	ck_assert_int_eq(auth_transcript(h, hn, c, cn, th), 0);
	for (size_t i = 0; i < hn; i++) {
		h[i] ^= 1;
		ck_assert_int_eq(auth_transcript(h, hn, c, cn, th2), 0);
		ck_assert_msg(memcmp(th, th2, AUTH_TH_LEN) != 0, "HELLO byte %zu not in the transcript", i);
		h[i] ^= 1;
	}
	for (size_t i = 0; i < cn; i++) {
		int in_mac = i >= WIRE_CHALLENGE_MAC_OFF && i < WIRE_CHALLENGE_MAC_OFF + WIRE_MAC_LEN;

		c[i] ^= 1;
		ck_assert_int_eq(auth_transcript(h, hn, c, cn, th2), 0);
		ck_assert_msg((memcmp(th, th2, AUTH_TH_LEN) == 0) == in_mac, "CHALLENGE byte %zu", i);
		c[i] ^= 1;
	}
	/* Moving a byte from one message to the other changes it too. */
	ck_assert_int_eq(auth_transcript(h, hn - 1, c, cn, th2), 0);
	ck_assert_mem_ne(th, th2, AUTH_TH_LEN);
	ck_assert_int_eq(auth_transcript(h, hn, c, WIRE_CHALLENGE_MAC_OFF + WIRE_MAC_LEN - 1, th2), -EINVAL);
}
END_TEST

START_TEST(macs)
{
	uint8_t th[AUTH_TH_LEN], th2[AUTH_TH_LEN], ml[WIRE_MAC_LEN], mc[WIRE_MAC_LEN];

	transcript(0, WIRE_ENC_AEAD, th);
	transcript(0, WIRE_ENC_NONE, th2);
	ck_assert_int_eq(auth_mac(AUTH_LISTENER, psk, PSK_LEN, th, ml), 0);
	ck_assert_int_eq(auth_mac(AUTH_CONNECTOR, psk, PSK_LEN, th, mc), 0);
	ck_assert_mem_ne(ml, mc, WIRE_MAC_LEN);
	ck_assert(auth_verify(AUTH_LISTENER, psk, PSK_LEN, th, ml));
	ck_assert(auth_verify(AUTH_CONNECTOR, psk, PSK_LEN, th, mc));
	/* Neither side's MAC passes as the other's; a downgraded transcript
	 * or another key does not verify. */
	ck_assert(!auth_verify(AUTH_CONNECTOR, psk, PSK_LEN, th, ml));
	ck_assert(!auth_verify(AUTH_LISTENER, psk, PSK_LEN, th2, ml));
	ck_assert(!auth_verify(AUTH_LISTENER, psk, PSK_LEN - 1, th, ml));
}
END_TEST

static void unhex(const char *hex, uint8_t *out)
{
	for (size_t i = 0; hex[2 * i] != '\0'; i++)
		ck_assert_int_eq(sscanf(hex + 2 * i, "%2hhx", &out[i]), 1);
}

/* Test case 16 of McGrew and Viega's GCM specification (AES-256, 60 bytes,
 * 20 bytes of AAD), in both implementations, sealed into a copy and in
 * place, then opened. */
START_TEST(aesgcm_known_answer)
{
	uint8_t key[32], iv[12], aad[20], pt[60], ct[60], tag[16], out[60], t[16];

	unhex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", key);
	unhex("cafebabefacedbaddecaf888", iv);
	unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2", aad);
	unhex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
	      "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
	      pt);
	unhex("522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	      "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
	      ct);
	unhex("76fc6ece0f4e1768cddf8853bb2d551b", tag);
	for (int impl = AESGCM_FASTEST; impl <= AESGCM_OPENSSL; impl++) {
		struct aesgcm *g = aesgcm_new(key, impl);

		ck_assert_ptr_nonnull(g);
		ck_assert_int_eq(aesgcm_seal(g, iv, aad, sizeof(aad), pt, out, sizeof(pt), t), 0);
		ck_assert_msg(memcmp(out, ct, sizeof(ct)) == 0 && memcmp(t, tag, sizeof(tag)) == 0, "%s",
			      aesgcm_name(impl));
		memcpy(out, pt, sizeof(pt));
		ck_assert_int_eq(aesgcm_seal(g, iv, aad, sizeof(aad), out, out, sizeof(out), t), 0);
		ck_assert_mem_eq(out, ct, sizeof(ct));
		ck_assert_int_eq(aesgcm_open(g, iv, aad, sizeof(aad), out, sizeof(out), tag), 0);
		ck_assert_mem_eq(out, pt, sizeof(pt));
		aesgcm_free(g);
	}
#if defined(LDS_HAVE_IPSECMB) && defined(__x86_64__)
	/* Built with ipsec-mb on a CPU with AES-NI: the fast one is in use. */
	if (__builtin_cpu_supports("aes"))
		ck_assert_ptr_nonnull(strstr(aesgcm_name(AESGCM_FASTEST), "ipsec-mb"));
#endif
}
END_TEST

/*
 * The two implementations give the same bytes at every length up to past
 * two 64-byte strides (where vector code switches between full and
 * partial blocks), at frame sizes, with and without AAD; each opens what
 * the other sealed, and refuses it with one bit of the ciphertext, the AAD
 * or the tag flipped, or under another nonce.
 */
START_TEST(aesgcm_implementations_agree)
{
	static const size_t big[] = { 1500, 4095, 65536, 65536 + 13, 1u << 20 };
	static const size_t aads[] = { 0, 5, 13, 16, 21 };
	uint8_t key[AESGCM_KEY_LEN], iv[AESGCM_IV_LEN] = { 1 }, aad[21], *pt = malloc(1u << 20), *a = malloc(1u << 20),
		*b = malloc(1u << 20), ta[AESGCM_TAG_LEN], tb[AESGCM_TAG_LEN];
	struct aesgcm *fast, *ossl;
	uint64_t x = 0x243F6A8885A308D3ull;

	ck_assert(pt != NULL && a != NULL && b != NULL);
	for (size_t i = 0; i < (1u << 20); i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		pt[i] = (uint8_t)(x >> 56);
	}
	memcpy(key, pt + 7, sizeof(key));
	memcpy(aad, pt + 99, sizeof(aad));
	fast = aesgcm_new(key, AESGCM_FASTEST);
	ossl = aesgcm_new(key, AESGCM_OPENSSL);
	ck_assert(fast != NULL && ossl != NULL);
	for (size_t n = 0; n < 200 + sizeof(big) / sizeof(big[0]); n++) {
		size_t len = n < 200 ? n : big[n - 200], al = aads[n % 5];

		iv[11] = (uint8_t)n;
		ck_assert_int_eq(aesgcm_seal(fast, iv, aad, al, pt, a, len, ta), 0);
		ck_assert_int_eq(aesgcm_seal(ossl, iv, aad, al, pt, b, len, tb), 0);
		ck_assert_msg(memcmp(a, b, len) == 0 && memcmp(ta, tb, sizeof(ta)) == 0, "len %zu aad %zu", len, al);
		ck_assert_int_eq(aesgcm_open(ossl, iv, aad, al, a, len, ta), 0);
		ck_assert_int_eq(aesgcm_open(fast, iv, aad, al, b, len, tb), 0);
		ck_assert_msg(memcmp(a, pt, len) == 0 && memcmp(b, pt, len) == 0, "len %zu opened", len);
		for (int impl = 0; impl < 2; impl++) {
			struct aesgcm *g = impl ? ossl : fast;
			uint8_t *flip[] = { len > 0 ? a + len / 2 : NULL, al > 0 ? aad + al - 1 : NULL, ta + n % sizeof(ta) };

			for (int f = 0; f < 3; f++) {
				if (flip[f] == NULL)
					continue;
				ck_assert_int_eq(aesgcm_seal(fast, iv, aad, al, pt, a, len, ta), 0);
				*flip[f] ^= 0x10;
				ck_assert_msg(aesgcm_open(g, iv, aad, al, a, len, ta) == -EBADMSG, "%s len %zu flip %d",
					      aesgcm_name(impl), len, f);
				/* The AAD and tag are used again; the ciphertext is sealed anew. */
				*flip[f] ^= 0x10;
			}
			ck_assert_int_eq(aesgcm_seal(fast, iv, aad, al, pt, a, len, ta), 0);
			iv[0] ^= 1;
			ck_assert_int_eq(aesgcm_open(g, iv, aad, al, a, len, ta), -EBADMSG);
			iv[0] ^= 1;
		}
	}
	aesgcm_free(fast);
	aesgcm_free(ossl);
	free(pt);
	free(a);
	free(b);
}
END_TEST

/* The bytes read from several regions, each in place or not, seal as
 * they would in one piece, in both implementations, for every way of
 * cutting lengths around the cipher's 16-byte blocks. */
START_TEST(aesgcm_seal_iov_agrees)
{
	enum { LEN = 3 * 4096 + 77 };
	uint8_t key[AESGCM_KEY_LEN] = { 9 }, iv[AESGCM_IV_LEN] = { 3 }, aad[20] = { 1 }, pt[LEN], one[LEN], out[LEN],
		t1[AESGCM_TAG_LEN], t2[AESGCM_TAG_LEN];
	static const size_t cuts[][3] = { { 0, 0, 0 }, { 1, 2, 3 }, { 15, 16, 17 }, { 16, 32, 4096 },
					  { 4095, 4097, 8191 }, { 100, 100, 100 }, { LEN, LEN, LEN } };
	uint64_t x = 77;

	for (size_t i = 0; i < LEN; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		pt[i] = (uint8_t)(x >> 56);
	}
	for (int impl = 0; impl < 2; impl++) {
		struct aesgcm *g = aesgcm_new(key, impl ? AESGCM_OPENSSL : AESGCM_FASTEST);

		ck_assert_ptr_nonnull(g);
		ck_assert_int_eq(aesgcm_seal(g, iv, aad, sizeof(aad), pt, one, LEN, t1), 0);
		for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
			/* Regions [0,a) [a,b) [b,c) [c,LEN): the 2nd and 4th in
			 * place in out, the others read from pt. */
			size_t a = cuts[c][0], b = cuts[c][1], e = cuts[c][2];
			struct iovec in[4] = { { pt, a }, { out + a, b - a }, { pt + b, e - b }, { out + e, LEN - e } };

			memset(out, 0, sizeof(out));
			memcpy(out + a, pt + a, b - a);
			memcpy(out + e, pt + e, LEN - e);
			ck_assert_int_eq(aesgcm_seal_iov(g, iv, aad, sizeof(aad), in, 4, out, t2), 0);
			ck_assert_msg(memcmp(out, one, LEN) == 0 && memcmp(t1, t2, sizeof(t1)) == 0, "%s, cut %zu",
				      aesgcm_name(impl ? AESGCM_OPENSSL : AESGCM_FASTEST), c);
		}
		aesgcm_free(g);
	}
}
END_TEST

static void pair(struct seal *c, struct seal *l, const uint8_t th[AUTH_TH_LEN])
{
	ck_assert_int_eq(seal_init(c, AUTH_CONNECTOR, psk, PSK_LEN, th), 0);
	ck_assert_int_eq(seal_init(l, AUTH_LISTENER, psk, PSK_LEN, th), 0);
}

/* Seals a DATA frame of seq and text; returns its length. */
static size_t seal_text(struct seal_dir *d, uint64_t seq, const char *text, uint8_t *out)
{
	uint8_t be[8];

	for (int i = 0; i < 8; i++)
		be[i] = (uint8_t)(seq >> (56 - 8 * i));
	return seal_frame(d, WIRE_DATA, be, 8, (const uint8_t *)text, strlen(text), out);
}

static int open_whole(struct seal_dir *d, uint8_t *frame, size_t n, struct wire_frame *f)
{
	size_t used = 0;

	ck_assert_int_eq(wire_frame_parse(frame, n, f, &used), 1);
	ck_assert_uint_eq(used, n);
	return seal_open_frame(d, frame, f);
}

START_TEST(roundtrip)
{
	struct seal c = { 0 }, l = { 0 };
	uint8_t th[AUTH_TH_LEN], buf[256];
	const char *msg = "pay 100 EUR to alice";
	struct wire_frame f;
	size_t n;

	transcript(0, WIRE_ENC_AEAD, th);
	pair(&c, &l, th);
	n = seal_text(&c.tx, 42, msg, buf);
	ck_assert_uint_eq(n, WIRE_DATA_HDR_LEN + strlen(msg) + SEAL_OVERHEAD);
	ck_assert_uint_eq(buf[3], WIRE_DATA | WIRE_SEALED);
	/* The block is not in clear on the wire; the seq is. */
	ck_assert(memmem(buf, n, "alice", 5) == NULL);
	ck_assert_uint_eq(buf[WIRE_DATA_HDR_LEN - 1], 42);
	ck_assert_int_eq(open_whole(&l.rx, buf, n, &f), 0);
	ck_assert_uint_eq(f.sealed, 0);
	ck_assert_uint_eq(f.len, 8 + strlen(msg));
	ck_assert_mem_eq(f.payload + 8, msg, strlen(msg));
	/* And the other way, a control frame. */
	n = wire_encode_ping(buf + 100, 50, WIRE_PING, 12345);
	n = seal_frame(&l.tx, WIRE_PING, NULL, 0, buf + 100 + WIRE_HDR_LEN, n - WIRE_HDR_LEN, buf);
	ck_assert_uint_eq(n, WIRE_HDR_LEN + 8 + SEAL_OVERHEAD);
	ck_assert_int_eq(open_whole(&c.rx, buf, n, &f), 0);
	{
		uint64_t t = 0;

		ck_assert_int_eq(wire_decode_ping(&f, &t), 0);
		ck_assert_uint_eq(t, 12345);
	}
	seal_free(&c);
	seal_free(&l);
	ck_assert_ptr_null(c.tx.ctx);
}
END_TEST

/* A block sealed in place, partly read from elsewhere, is the frame
 * seal_frame makes of the same bytes (header, seq, ciphertext, tag), the
 * peer opens it, and seal_unseal_block gives the bytes back, once. */
START_TEST(block_in_place)
{
	struct seal c = { 0 }, c2 = { 0 }, l = { 0 };
	uint8_t th[AUTH_TH_LEN], frame[600], block[500], src[500], hdr[WIRE_DATA_HDR_LEN], tag[SEAL_OVERHEAD];
	struct iovec in[3] = { { block, 100 }, { src + 100, 250 }, { block + 350, 150 } };
	struct wire_frame f;
	uint64_t nonce = 99;
	uint8_t be[8] = { 0, 0, 0, 0, 0, 0, 0, 77 };
	size_t n;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 31 + 7);
	memcpy(block, src, sizeof(block));
	memset(block + 100, 0, 250); /* that region is read from src */
	transcript(0, WIRE_ENC_AEAD, th);
	pair(&c, &l, th);
	pair(&c2, &l, th);
	/* c2 has c's keys (same transcript): its frame is the reference. */
	n = seal_frame(&c2.tx, WIRE_DATA, be, 8, src, sizeof(src), frame);
	ck_assert_int_eq(seal_block(&c.tx, 77, in, 3, block, sizeof(block), hdr, tag, &nonce), 0);
	ck_assert_uint_eq(nonce, 0);
	ck_assert_uint_eq(c.tx.count, 1);
	ck_assert_uint_eq(n, sizeof(hdr) + sizeof(block) + sizeof(tag));
	ck_assert_mem_eq(frame, hdr, sizeof(hdr));
	ck_assert_mem_eq(frame + sizeof(hdr), block, sizeof(block));
	ck_assert_mem_eq(frame + sizeof(hdr) + sizeof(block), tag, sizeof(tag));
	ck_assert_int_eq(open_whole(&l.rx, frame, n, &f), 0);
	ck_assert_mem_eq(f.payload + 8, src, sizeof(src));
	/* Unsealed with the wrong counter it does not open; with its own it
	 * is the bytes again. */
	memcpy(frame, block, sizeof(block));
	ck_assert_int_eq(seal_unseal_block(&c.tx, 1, hdr, frame, sizeof(block), tag), -EBADMSG);
	ck_assert_int_eq(seal_unseal_block(&c.tx, nonce, hdr, block, sizeof(block), tag), 0);
	ck_assert_mem_eq(block, src, sizeof(src));
	/* Without keys nothing is touched. */
	ck_assert_int_eq(seal_block(&(struct seal_dir){ 0 }, 1, &(struct iovec){ src, 8 }, 1, block, 8, hdr, tag, &nonce),
			 -EKEYEXPIRED);
	ck_assert_mem_eq(block, src, 8);
	seal_free(&c);
	seal_free(&c2);
	seal_free(&l);
}
END_TEST

/* Any bit flipped anywhere in a sealed frame (header, seq, block, tag)
 * makes it fail to open. */
START_TEST(tamper)
{
	uint8_t th[AUTH_TH_LEN], orig[128], buf[128];
	size_t n;

	transcript(0, WIRE_ENC_AEAD, th);
	{
		struct seal c = { 0 }, l = { 0 };

		pair(&c, &l, th);
		n = seal_text(&c.tx, 7, "pay 100 EUR to alice", orig);
		seal_free(&c);
		seal_free(&l);
	}
	for (size_t bit = 0; bit < 8 * n; bit++) {
		struct seal c = { 0 }, l = { 0 };
		struct wire_frame f;
		size_t used = 0;
		int opened = 0;

		pair(&c, &l, th);
		memcpy(buf, orig, n);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		/* Not a whole frame, a frame in clear (which a keyed stream
		 * refuses), or one whose tag fails. */
		if (wire_frame_parse(buf, n, &f, &used) == 1 && f.sealed)
			opened = seal_open_frame(&l.rx, buf, &f) == 0;
		ck_assert_msg(!opened, "bit %zu flipped: opened", bit);
		seal_free(&c);
		seal_free(&l);
	}
}
END_TEST

/* The nonce is the frame count: a frame replayed, dropped or reordered
 * does not open, nor one from another stream (another transcript) or the
 * other direction. */
START_TEST(replay_reorder)
{
	struct seal c = { 0 }, l = { 0 }, c2 = { 0 }, l2 = { 0 };
	uint8_t th[AUTH_TH_LEN], th2[AUTH_TH_LEN], f0[128], f1[128], f2[128], copy[128], x[128];
	size_t n0, n1, n2, nx;
	struct wire_frame f;

	transcript(0, WIRE_ENC_AEAD, th);
	transcript(1, WIRE_ENC_AEAD, th2);
	pair(&c, &l, th);
	pair(&c2, &l2, th2);
	n0 = seal_text(&c.tx, 0, "first", f0);
	n1 = seal_text(&c.tx, 1, "second", f1);
	n2 = seal_text(&c.tx, 2, "third", f2);
	nx = seal_text(&c2.tx, 1, "second", x);
	/* Reordered: frame 1 first. */
	memcpy(copy, f1, n1);
	ck_assert_int_eq(open_whole(&l.rx, copy, n1, &f), -EBADMSG);
	ck_assert_uint_eq(l.rx.count, 0);
	ck_assert_int_eq(open_whole(&l.rx, f0, n0, &f), 0);
	/* Replayed: frame 0 again. */
	seal_free(&c);
	seal_free(&l);
	pair(&c, &l, th);
	n0 = seal_text(&c.tx, 0, "first", f0);
	memcpy(copy, f0, n0);
	ck_assert_int_eq(open_whole(&l.rx, f0, n0, &f), 0);
	ck_assert_int_eq(open_whole(&l.rx, copy, n0, &f), -EBADMSG);
	/* From the stream with index 1, at the right count: other keys. */
	seal_free(&c);
	seal_free(&l);
	pair(&c, &l, th);
	n0 = seal_text(&c.tx, 0, "first", f0);
	ck_assert_int_eq(open_whole(&l.rx, f0, n0, &f), 0);
	ck_assert_int_eq(open_whole(&l.rx, x, nx, &f), -EBADMSG);
	/* Reflected: the connector's own frame back to it. */
	memcpy(copy, f2, n2);
	ck_assert_int_eq(open_whole(&c.rx, copy, n2, &f), -EBADMSG);
	seal_free(&c);
	seal_free(&l);
	seal_free(&c2);
	seal_free(&l2);
}
END_TEST

/* The two directions have different keys, and so do two transcripts: the
 * same plaintext at the same count seals to different bytes. */
START_TEST(keys_differ)
{
	struct seal a = { 0 }, b = { 0 }, c = { 0 };
	uint8_t th[AUTH_TH_LEN], th2[AUTH_TH_LEN], fa[64], fb[64], fc[64];
	size_t na, nb, nc;

	transcript(0, WIRE_ENC_AEAD, th);
	transcript(0, WIRE_ENC_NONE, th2);
	ck_assert_mem_ne(th, th2, AUTH_TH_LEN);
	ck_assert_int_eq(seal_init(&a, AUTH_CONNECTOR, psk, PSK_LEN, th), 0);
	ck_assert_int_eq(seal_init(&b, AUTH_LISTENER, psk, PSK_LEN, th), 0);
	ck_assert_int_eq(seal_init(&c, AUTH_CONNECTOR, psk, PSK_LEN, th2), 0);
	na = seal_text(&a.tx, 0, "same", fa);
	nb = seal_text(&b.tx, 0, "same", fb);
	nc = seal_text(&c.tx, 0, "same", fc);
	ck_assert_uint_eq(na, nb);
	ck_assert_uint_eq(na, nc);
	ck_assert_mem_ne(fa + WIRE_DATA_HDR_LEN, fb + WIRE_DATA_HDR_LEN, na - WIRE_DATA_HDR_LEN);
	ck_assert_mem_ne(fa + WIRE_DATA_HDR_LEN, fc + WIRE_DATA_HDR_LEN, na - WIRE_DATA_HDR_LEN);
	seal_free(&a);
	seal_free(&b);
	seal_free(&c);
}
END_TEST

/* No keys, no sealing; a spent counter stops the direction. */
START_TEST(limits)
{
	struct seal c = { 0 }, l = { 0 };
	uint8_t th[AUTH_TH_LEN] = { 0 }, buf[128], tag[SEAL_OVERHEAD] = { 0 };

	ck_assert_uint_eq(seal_text(&c.tx, 0, "x", buf), 0);
	ck_assert_int_eq(seal_open(&c.rx, buf, WIRE_HDR_LEN, buf + WIRE_HDR_LEN, 1, tag), -EBADMSG);
	pair(&c, &l, th);
	c.tx.count = UINT64_MAX;
	ck_assert_uint_eq(seal_text(&c.tx, 0, "x", buf), 0);
	ck_assert_uint_eq(seal_frame(&l.tx, WIRE_DATA, NULL, 0, buf, WIRE_MAX_PAYLOAD, buf), 0);
	seal_free(&c);
	seal_free(&l);
}
END_TEST

/* Fixed while the transport holds some of it (a long path: pings and acks
 * always in flight): the held bytes stay where they are until given back,
 * what waits moves to the fixed buffer.  Before, the queue was fixed only
 * with nothing held, never on a 250 ms path, and took no batch there. */
START_TEST(queue_fix_held)
{
	struct sealq q = { 0 };
	uint8_t ping[64], pong[64], *before;
	size_t pn = wire_encode_ping(ping, sizeof(ping), WIRE_PING, 1);

	wire_encode_ping(pong, sizeof(pong), WIRE_PONG, 2);
	ck_assert_int_eq(sealq_put(&q, ping, pn, 1 << 20), 0);
	ck_assert_int_eq(sealq_put(&q, pong, pn, 1 << 20), 0);
	sealq_take(&q, pn);
	before = q.buf;
	ck_assert_int_eq(sealq_fix(&q, 1 << 20), 0);
	ck_assert_ptr_ne(q.buf, before);
	ck_assert_ptr_eq(q.old, before);
	ck_assert_mem_eq(before, ping, pn);                              /* held: not moved */
	ck_assert_uint_eq(sealq_pending(&q), pn);
	ck_assert_mem_eq(sealq_data(&q), pong, pn);
	ck_assert(sealq_fits(&q, (1 << 20) - pn));
	sealq_take(&q, pn);
	sealq_release(&q, pn);                                           /* the old one first */
	ck_assert_ptr_null(q.old);
	ck_assert_uint_eq(q.held, pn);
	sealq_release(&q, pn);
	ck_assert_uint_eq(q.held, 0);
	sealq_free(&q);
}
END_TEST

/* The queue holds frames in clear until it has keys, sealed after, in the
 * order queued, within its limit. */
START_TEST(queue)
{
	struct sealq q = { 0 };
	struct seal peer = { 0 };
	uint8_t th[AUTH_TH_LEN] = { 9 }, ping[64], block[1000];
	size_t pn = wire_encode_ping(ping, sizeof(ping), WIRE_PING, 1), off = 0;

	ck_assert_int_eq(sealq_put(&q, ping, pn, 1 << 20), 0);
	ck_assert_uint_eq(sealq_pending(&q), pn);
	ck_assert_mem_eq(sealq_data(&q), ping, pn);
	ck_assert_int_eq(seal_init(&q.seal, AUTH_CONNECTOR, psk, PSK_LEN, th), 0);
	ck_assert_int_eq(seal_init(&peer, AUTH_LISTENER, psk, PSK_LEN, th), 0);
	memset(block, 'b', sizeof(block));
	ck_assert_int_eq(sealq_put_data(&q, 5, block, sizeof(block)), 0);
	ck_assert_int_eq(sealq_put(&q, ping, pn, 1 << 20), 0);
	ck_assert_int_eq(sealq_put(&q, ping, pn, sealq_pending(&q) + pn), -ENOBUFS);
	ck_assert_uint_eq(sealq_pending(&q), pn + WIRE_DATA_HDR_LEN + sizeof(block) + pn + 2 * SEAL_OVERHEAD);
	sealq_sent(&q, pn);
	/* What is left opens in order: the block, then the PING. */
	{
		uint8_t *copy = malloc(sealq_pending(&q));
		size_t n = sealq_pending(&q), used;
		struct wire_frame f;

		memcpy(copy, sealq_data(&q), n);
		ck_assert_int_eq(wire_frame_parse(copy, n, &f, &used), 1);
		ck_assert_int_eq(seal_open_frame(&peer.rx, copy, &f), 0);
		ck_assert_uint_eq(f.type, WIRE_DATA);
		ck_assert_mem_eq(f.payload + 8, block, sizeof(block));
		off = used;
		ck_assert_int_eq(wire_frame_parse(copy + off, n - off, &f, &used), 1);
		ck_assert_int_eq(seal_open_frame(&peer.rx, copy + off, &f), 0);
		ck_assert_uint_eq(f.type, WIRE_PING);
		ck_assert_uint_eq(off + used, n);
		sealq_sent(&q, n);
		free(copy);
	}
	ck_assert_uint_eq(sealq_pending(&q), 0);
	sealq_free(&q);
	seal_free(&peer);
	ck_assert_ptr_null(q.buf);
}
END_TEST

/* A fixed queue used as a ring by a transport that holds what it was
 * given until it lets go, oldest first (stream_msg.c's use): frames of
 * random sizes are put, taken one by one and released in random turns.
 * Nothing held is overwritten, every frame opens in the order sealed with
 * its block intact, and the queue goes round many times (a linear queue
 * waited for every held byte before refilling). */
#define RING_CAP 8192
#define RING_HELD 64

static uint8_t ring_byte(uint64_t seq, size_t k)
{
	return (uint8_t)(seq * 31 + k * 7);
}

START_TEST(queue_ring)
{
	struct sealq q = { 0 };
	struct seal peer = { 0 };
	uint8_t th[AUTH_TH_LEN] = { 4 }, block[1500];
	struct {
		const uint8_t *at;
		uint8_t *copy;
		size_t n;
	} held[RING_HELD];
	uint64_t x = 88172645463325252ull, seq = 1, opened = 1;
	unsigned nheld = 0, first = 0, wraps = 0;

	ck_assert_int_eq(seal_init(&q.seal, AUTH_CONNECTOR, psk, PSK_LEN, th), 0);
	ck_assert_int_eq(seal_init(&peer, AUTH_LISTENER, psk, PSK_LEN, th), 0);
	ck_assert_int_eq(sealq_fix(&q, RING_CAP), 0);
	for (int step = 0; step < 30000; step++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (x % 3 == 0) {
			size_t len = 1 + (x >> 8) % sizeof(block);
			int wrapped = q.wrap != 0;

			if (!sealq_fits(&q, WIRE_DATA_HDR_LEN + len + SEAL_OVERHEAD))
				continue;
			for (size_t k = 0; k < len; k++)
				block[k] = ring_byte(seq, k);
			ck_assert_int_eq(sealq_put_data(&q, seq++, block, (uint32_t)len), 0);
			wraps += !wrapped && q.wrap;
		} else if (x % 3 == 1 && sealq_pending(&q) > 0 && nheld < RING_HELD) {
			const uint8_t *p = sealq_data(&q);
			size_t n = WIRE_HDR_LEN + ((size_t)p[4] << 24 | (size_t)p[5] << 16 | (size_t)p[6] << 8 | p[7]);
			unsigned i = (first + nheld++) % RING_HELD;

			ck_assert_uint_le(n, sealq_pending(&q));
			held[i].at = p;
			held[i].n = n;
			held[i].copy = malloc(n);
			ck_assert_ptr_nonnull(held[i].copy);
			memcpy(held[i].copy, p, n);
			sealq_take(&q, n);
		} else if (x % 3 == 2 && nheld > 0) {
			unsigned i = first;
			struct wire_frame f;
			size_t used;

			ck_assert_msg(memcmp(held[i].at, held[i].copy, held[i].n) == 0,
				      "frame %" PRIu64 " changed while held", opened);
			ck_assert_int_eq(wire_frame_parse(held[i].copy, held[i].n, &f, &used), 1);
			ck_assert_uint_eq(used, held[i].n);
			ck_assert_int_eq(seal_open_frame(&peer.rx, held[i].copy, &f), 0);
			ck_assert_uint_eq(f.type, WIRE_DATA);
			ck_assert_uint_gt(f.len, 8);
			for (size_t k = 0; k < 8; k++)
				block[k] = (uint8_t)(opened >> (56 - 8 * k));
			ck_assert_msg(memcmp(f.payload, block, 8) == 0, "frame %" PRIu64 " out of order", opened);
			for (size_t k = 0; k + 8 < f.len; k++)
				block[k] = ring_byte(opened, k);
			ck_assert_msg(memcmp(f.payload + 8, block, f.len - 8) == 0, "frame %" PRIu64 " altered", opened);
			opened++;
			sealq_release(&q, held[i].n);
			free(held[i].copy);
			first = (first + 1) % RING_HELD;
			nheld--;
		}
	}
	ck_assert_uint_gt(wraps, 100);
	ck_assert_uint_gt(opened, 3000);
	while (nheld-- > 0) {
		free(held[first].copy);
		first = (first + 1) % RING_HELD;
	}
	sealq_free(&q);
	seal_free(&peer);
}
END_TEST

Suite *make_seal_suite(void)
{
	Suite *s = suite_create("seal");
	TCase *tc = tcase_create("seal");

	tcase_add_test(tc, transcript_fields);
	tcase_add_test(tc, macs);
	tcase_add_test(tc, aesgcm_known_answer);
	tcase_add_test(tc, aesgcm_implementations_agree);
	tcase_add_test(tc, aesgcm_seal_iov_agrees);
	tcase_add_test(tc, block_in_place);
	tcase_add_test(tc, roundtrip);
	tcase_add_test(tc, tamper);
	tcase_add_test(tc, replay_reorder);
	tcase_add_test(tc, keys_differ);
	tcase_add_test(tc, limits);
	tcase_add_test(tc, queue);
	tcase_add_test(tc, queue_ring);
	tcase_add_test(tc, queue_fix_held);
	suite_add_tcase(s, tc);
	return s;
}
