/*
 * crc_speed - CRC-32C at memory speed (issue 21): checks that crc32c()
 * (ISA-L where built with it) and crc32c_instr() (the instruction this CPU
 * has) give what the tables give on random buffers of every alignment and
 * many lengths, then measures the three side by side in GB/s at frame
 * sizes (64 B to 1 MiB).  Exit 1 on a mismatch.  Not a unit test: its
 * figures go to docs/BENCHMARKS.md.
 *
 *   crc_speed [SECONDS per measure, default 0.3]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/clock.h"
#include "ldsd/crc32c.h"
#if defined(LDS_HAVE_ISAL)
#include <isa-l/crc.h>

/* ISA-L alone, below the length where crc32c() starts to use it: what
 * sets that threshold (ldsd/crc32c.c, ISAL_MIN). */
static uint32_t isal_alone(uint32_t crc, const void *buf, size_t len)
{
	return ~crc32_iscsi((unsigned char *)(uintptr_t)buf, (int)len, ~crc);
}
#endif

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
	static const size_t sizes[] = { 64, 512, 1500, 4096, 65536, BUF };
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
		uint32_t seed = (uint32_t)rnd(), want = crc32c_table(seed, buf + off, len);

		if (crc32c(seed, buf + off, len) != want || crc32c_instr(seed, buf + off, len) != want) {
			fprintf(stderr, "crc_speed: %s or %s and the tables differ at offset %zu, %zu bytes\n",
				crc32c_impl(), crc32c_instr_impl(), off, len);
			return 1;
		}
	}
	printf("crc_speed: crc32c() uses %s; it and %s agree with the tables on 20000 buffers\n", crc32c_impl(),
	       crc32c_instr_impl());
	printf("| bytes | crc32c(): %s (GB/s) | %s | tables | crc32c() / %s |\n|---|---|---|---|---|\n",
	       crc32c_impl(), crc32c_instr_impl(), crc32c_instr_impl());
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		double c = speed(crc32c, buf, sizes[i], secs), hw = speed(crc32c_instr, buf, sizes[i], secs);
		double sw = speed(crc32c_table, buf, sizes[i], secs);

		printf("| %zu | %.2f | %.2f | %.2f | %.2f |\n", sizes[i], c, hw, sw, c / hw);
	}
#if defined(LDS_HAVE_ISAL)
	printf("crc_speed: ISA-L alone, GB/s (against %s):", crc32c_instr_impl());
	for (size_t len = 256; len <= 512; len += 128)
		printf(" %zu bytes %.2f (%.2f)", len, speed(isal_alone, buf, len, secs), speed(crc32c_instr, buf, len, secs));
	printf("\n");
#endif
	free(buf);
	return 0;
}
