/*
 * gcm_speed - the cipher of sealed frames (issue 21): checks that the
 * implementation ldsd uses (ipsec-mb where built with it) and OpenSSL
 * seal to the same bytes and open each other's frames, then measures
 * both side by side in GB/s, sealing alone and sealing then opening (a
 * frame through both gateways), at frame sizes (a UDP datagram to 1 MiB).
 * Exit 1 on a mismatch.  Not a unit test: its figures go to
 * docs/BENCHMARKS.md.
 *
 *   gcm_speed [SECONDS per measure, default 0.3]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/aesgcm.h"
#include "ldsd/clock.h"
#include "ldsd/wire.h"

#define BUF (1u << 20)

/* GB/s of sealing len bytes with g (open 0), or of sealing and opening
 * them again (a frame through both gateways), for at least secs; the
 * frame's header is the AAD, as in seal.c. */
static double speed(struct aesgcm *g, int open, uint8_t *buf, size_t len, double secs)
{
	uint8_t iv[AESGCM_IV_LEN] = { 0 }, aad[WIRE_DATA_HDR_LEN] = { 0 }, tag[AESGCM_TAG_LEN];
	uint64_t t0 = clock_now_ns(), bytes = 0, ns;

	do {
		for (int i = 0; i < 16; i++) {
			iv[11] = (uint8_t)i;
			if (aesgcm_seal(g, iv, aad, sizeof(aad), buf, buf, len, tag) < 0 ||
			    (open && aesgcm_open(g, iv, aad, sizeof(aad), buf, len, tag) < 0))
				return -1;
			bytes += len;
		}
		ns = clock_now_ns() - t0;
	} while (ns < (uint64_t)(secs * 1e9));
	return (double)bytes / (double)ns;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 1400, 4096, 16384, 65536, BUF };
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	uint8_t key[AESGCM_KEY_LEN], iv[AESGCM_IV_LEN] = { 7 }, ta[AESGCM_TAG_LEN], tb[AESGCM_TAG_LEN];
	uint8_t *buf = malloc(BUF), *a = malloc(BUF), *b = malloc(BUF);
	struct aesgcm *fast, *ossl;

	if (buf == NULL || a == NULL || b == NULL || secs <= 0 || secs > 60) {
		fprintf(stderr, "usage: gcm_speed [SECONDS per measure, 0 to 60]\n");
		return 2;
	}
	for (size_t i = 0; i < BUF; i++)
		buf[i] = (uint8_t)(i * 2654435761u >> 13);
	memcpy(key, buf + 5, sizeof(key));
	fast = aesgcm_new(key, AESGCM_FASTEST);
	ossl = aesgcm_new(key, AESGCM_OPENSSL);
	if (fast == NULL || ossl == NULL) {
		fprintf(stderr, "gcm_speed: cannot key AES-256-GCM (out of memory, or the library failed)\n");
		return 1;
	}
	for (size_t len = 0; len < 4096; len += 1 + len / 7) {
		iv[11] = (uint8_t)len;
		if (aesgcm_seal(fast, iv, buf, len % 29, buf, a, len, ta) < 0 ||
		    aesgcm_seal(ossl, iv, buf, len % 29, buf, b, len, tb) < 0 || memcmp(a, b, len) != 0 ||
		    memcmp(ta, tb, sizeof(ta)) != 0 || aesgcm_open(ossl, iv, buf, len % 29, a, len, ta) < 0 ||
		    memcmp(a, buf, len) != 0) {
			fprintf(stderr, "gcm_speed: %s and %s differ at %zu bytes\n", aesgcm_name(AESGCM_FASTEST),
				aesgcm_name(AESGCM_OPENSSL), len);
			return 1;
		}
	}
	printf("gcm_speed: ldsd seals with %s; it and %s agree\n", aesgcm_name(AESGCM_FASTEST),
	       aesgcm_name(AESGCM_OPENSSL));
	printf("| bytes | seal: %s (GB/s) | %s | ratio | seal and open: %s | %s | ratio |\n"
	       "|---|---|---|---|---|---|---|\n",
	       aesgcm_name(AESGCM_FASTEST), aesgcm_name(AESGCM_OPENSSL), aesgcm_name(AESGCM_FASTEST),
	       aesgcm_name(AESGCM_OPENSSL));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double sf = speed(fast, 0, a, sizes[i], secs), so = speed(ossl, 0, a, sizes[i], secs);
		double of = speed(fast, 1, a, sizes[i], secs), oo = speed(ossl, 1, a, sizes[i], secs);

		if (sf < 0 || so < 0 || of < 0 || oo < 0) {
			fprintf(stderr, "gcm_speed: a seal or open failed at %zu bytes\n", sizes[i]);
			return 1;
		}
		printf("| %zu | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", sizes[i], sf, so, sf / so, of, oo, of / oo);
	}
	aesgcm_free(fast);
	aesgcm_free(ossl);
	free(buf);
	free(a);
	free(b);
	return 0;
}
