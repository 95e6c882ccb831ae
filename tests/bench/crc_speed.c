/*
 * crc_speed - CRC-32C at memory speed (issue 21): checks that crc32c(),
 * with the instruction this CPU has, gives what the tables give on
 * random buffers of every alignment and many lengths, then measures both
 * in GB/s at frame sizes (64 B, 1500 B, 64 KiB, 1 MiB).  Exit 1 on a
 * mismatch.  Not a unit test: its figures go to docs/BENCHMARKS.md.
 *
 *   crc_speed [SECONDS per measure, default 0.3]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/clock.h"
#include "ldsd/crc32c.h"

#define BUF (1u << 20)

static uint64_t xs = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	xs ^= xs << 13;
	xs ^= xs >> 7;
	xs ^= xs << 17;
	return xs;
}

/* GB/s of f over len-byte buffers, for at least secs. */
static double speed(uint32_t (*f)(uint32_t, const void *, size_t), const uint8_t *buf, size_t len, double secs)
{
	uint64_t t0 = clock_now_ns(), bytes = 0, ns;
	volatile uint32_t sink = 0;

	do {
		for (int i = 0; i < 64; i++) {
			sink = f(sink, buf, len);
			bytes += len;
		}
		ns = clock_now_ns() - t0;
	} while (ns < (uint64_t)(secs * 1e9));
	return (double)bytes / (double)ns;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64, 1500, 65536, BUF };
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	uint8_t *buf = malloc(BUF + 8);

	if (buf == NULL || secs <= 0 || secs > 60) {
		fprintf(stderr, "usage: crc_speed [SECONDS per measure, 0 to 60]\n");
		return 2;
	}
	for (size_t i = 0; i < BUF + 8; i++)
		buf[i] = (uint8_t)rnd();
	for (int k = 0; k < 20000; k++) {
		size_t off = rnd() % 8, len = k < 4096 ? (size_t)k : rnd() % (200000 + 1);
		uint32_t seed = (uint32_t)rnd();

		if (crc32c(seed, buf + off, len) != crc32c_table(seed, buf + off, len)) {
			fprintf(stderr, "crc_speed: %s and the tables differ at offset %zu, %zu bytes\n", crc32c_impl(),
				off, len);
			return 1;
		}
	}
	printf("crc_speed: crc32c() uses %s; it agrees with the tables on 20000 buffers\n", crc32c_impl());
	printf("| bytes | %s (GB/s) | tables (GB/s) | ratio |\n|---|---|---|---|\n", crc32c_impl());
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double hw = speed(crc32c, buf, sizes[i], secs), sw = speed(crc32c_table, buf, sizes[i], secs);

		printf("| %zu | %.2f | %.2f | %.1f |\n", sizes[i], hw, sw, hw / sw);
	}
	free(buf);
	return 0;
}
