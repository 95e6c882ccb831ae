/*
 * crc32c.c - CRC-32C (Castagnoli); see crc32c.h.
 *
 * Implementations with identical results: Intel ISA-L's crc32_iscsi for
 * 512 bytes and more where the build has it (LDS_HAVE_ISAL: AVX-512
 * carry-less multiplication folds 64 bytes a step, twice the speed of the
 * instruction below on x86-64), the CPU's CRC-32C instruction (x86-64
 * SSE4.2 crc32, ARMv8 crc32c*) where it has one, and slice-by-8 tables
 * otherwise.  Internally they work on the raw CRC register (no pre/post
 * inversion); crc32c() does the inversions, which is what makes the
 * returned value directly continuable.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(LDS_HAVE_ISAL)
#include <isa-l/crc.h>
#endif

#include "crc32c.h"

/* The instruction, 8 bytes and 1 byte at a time, where there is one. */
#if defined(__x86_64__)
#include <nmmintrin.h>
#define HW_NAME "x86-64 crc32, 3-way"
#define HW_TARGET __attribute__((target("sse4.2")))
#define HW_U64(c, v) ((uint32_t)_mm_crc32_u64((c), (v)))
#define HW_U8(c, b) _mm_crc32_u8((c), (b))
#elif defined(__aarch64__)
#include <arm_acle.h>
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1u << 7)   /* asm/hwcap.h */
#endif
#define HW_NAME "arm64 crc32c, 3-way"
#define HW_TARGET __attribute__((target("+crc")))
#define HW_U64(c, v) __crc32cd((c), (v))
#define HW_U8(c, b) __crc32cb((c), (b))
#endif

#define POLY 0x82F63B78u   /* reflected Castagnoli polynomial */

static uint32_t slice_table[8][256];

static uint32_t load_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t crc_table(uint32_t crc, const uint8_t *p, size_t len)
{
	uint32_t (*t)[256] = slice_table;

	while (len && ((uintptr_t)p & 7)) {
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
		len--;
	}
	while (len >= 8) {
		uint32_t lo = crc ^ load_le32(p), hi = load_le32(p + 4);

		crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^
		      t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
		      t[3][hi & 0xff] ^ t[2][(hi >> 8) & 0xff] ^
		      t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
	return crc;
}

static void build_slice_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int b = 0; b < 8; b++)
			c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
		slice_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			slice_table[k][i] = (slice_table[k - 1][i] >> 8) ^
					    slice_table[0][slice_table[k - 1][i] & 0xff];
}

/* The instruction's path where the CPU has one, else the tables; and
 * what crc32c() uses: that, or ISA-L in front of it. */
static uint32_t (*crc_instr)(uint32_t, const uint8_t *, size_t) = crc_table;
static const char *crc_instr_name = "table, slice-by-8";
static uint32_t (*crc_impl)(uint32_t, const uint8_t *, size_t) = crc_table;
static char crc_impl_name[80];

#if defined(HW_NAME)
/*
 * The hardware path splits big buffers into three interleaved chains,
 * because the crc32 instruction has a latency of three cycles but a
 * throughput of one (on x86-64 and on the big ARMv8 cores alike): three
 * independent chains keep the unit busy.  The
 * chains are then joined by shifting each earlier register over the bytes
 * that followed it, which tables turn into four lookups.
 */
static uint32_t shift_long[4][256], shift_short[4][256], shift_tail[4][256];

/* Block sizes, largest first, with the shift over each.  The 64-byte
 * blocks keep a packet's tail in three chains (a 1472-byte datagram has
 * 704 bytes after its 256-byte blocks). */
static const struct {
	size_t n;
	uint32_t (*shift)[256];
} hw_blocks[] = {
	{ 8192, shift_long },
	{ 256, shift_short },
	{ 64, shift_tail },
};
#define HW_NBLOCKS (sizeof(hw_blocks) / sizeof(hw_blocks[0]))

/* a * b modulo the polynomial, both in reflected bit order (x^0 is bit 31). */
static uint32_t mult_mod_poly(uint32_t a, uint32_t b)
{
	uint32_t m = 1u << 31, p = 0;

	for (;;) {
		if (a & m) {
			p ^= b;
			if ((a & (m - 1)) == 0)
				break;
		}
		m >>= 1;
		b = (b & 1) ? (b >> 1) ^ POLY : b >> 1;
	}
	return p;
}

/* x^(8n) modulo the polynomial: the operator that appends n zero bytes. */
static uint32_t zeros_operator(size_t n)
{
	uint32_t r = 1u << 31;

	while (n--)
		r = (r >> 8) ^ slice_table[0][r & 0xff];
	return r;
}

/* Multiplication by op is linear, so it splits into one table per byte. */
static void build_shift_table(uint32_t table[4][256], uint32_t op)
{
	for (unsigned k = 0; k < 4; k++)
		for (uint32_t i = 0; i < 256; i++)
			table[k][i] = mult_mod_poly(op, i << (8 * k));
}

static uint32_t shift_reg(uint32_t table[4][256], uint32_t crc)
{
	return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^
	       table[2][(crc >> 16) & 0xff] ^ table[3][crc >> 24];
}

static uint64_t load_u64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Three chains over consecutive blocks of n bytes (a multiple of 8). */
HW_TARGET
static uint32_t crc_hw_3way(uint32_t crc, const uint8_t *p, size_t n,
			    uint32_t shift[4][256])
{
	uint32_t c0 = crc, c1 = 0, c2 = 0;
	const uint8_t *end = p + n;

	do {
		c0 = HW_U64(c0, load_u64(p));
		c1 = HW_U64(c1, load_u64(p + n));
		c2 = HW_U64(c2, load_u64(p + 2 * n));
		p += 8;
	} while (p < end);
	crc = shift_reg(shift, c0) ^ c1;
	return shift_reg(shift, crc) ^ c2;
}

HW_TARGET
static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		crc = HW_U8(crc, *p++);
		len--;
	}
	for (size_t b = 0; b < HW_NBLOCKS; b++) {
		size_t n = hw_blocks[b].n;

		while (len >= 3 * n) {
			crc = crc_hw_3way(crc, p, n, hw_blocks[b].shift);
			p += 3 * n;
			len -= 3 * n;
		}
	}
	while (len >= 8) {
		crc = HW_U64(crc, load_u64(p));
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = HW_U8(crc, *p++);
	return crc;
}

static int cpu_has_crc(void)
{
#if defined(__x86_64__)
	/* Constructors may run before libgcc has identified the CPU. */
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2");
#else
	return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

static void select_hw(void)
{
	if (!cpu_has_crc())
		return;
	for (size_t b = 0; b < HW_NBLOCKS; b++)
		build_shift_table(hw_blocks[b].shift, zeros_operator(hw_blocks[b].n));
	crc_instr = crc_hw;
	crc_instr_name = HW_NAME;
}
#endif

#if defined(LDS_HAVE_ISAL)
/* Below 512 bytes ISA-L's setup costs what its folding saves (256 and 384
 * bytes ran at 0.9-1.0 times the instruction's speed, 512 at 1.5:
 * build/bench/crc_speed, BENCHMARKS.md "CRC-32C at memory speed"). */
#define ISAL_MIN 512

static uint32_t crc_isal(uint32_t crc, const uint8_t *p, size_t len)
{
	if (len < ISAL_MIN)
		return crc_instr(crc, p, len);
	/* Its length is an int; it takes and returns the raw register. */
	while (len > 0) {
		int n = len > INT_MAX ? INT_MAX : (int)len;

		crc = crc32_iscsi((unsigned char *)(uintptr_t)p, n, crc);
		p += n;
		len -= (size_t)n;
	}
	return crc;
}
#endif

/* Runs before main() so that crc32c() needs no locking or lazy checks. */
__attribute__((constructor))
static void crc32c_init(void)
{
	build_slice_table();
#if defined(HW_NAME)
	select_hw();
#endif
#if defined(LDS_HAVE_ISAL)
	crc_impl = crc_isal;
	snprintf(crc_impl_name, sizeof(crc_impl_name), "ISA-L crc32_iscsi (%s under %d bytes)", crc_instr_name,
		 ISAL_MIN);
#else
	crc_impl = crc_instr;
	snprintf(crc_impl_name, sizeof(crc_impl_name), "%s", crc_instr_name);
#endif
}

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
	return ~crc_impl(~crc, buf, len);
}

uint32_t crc32c_instr(uint32_t crc, const void *buf, size_t len)
{
	return ~crc_instr(~crc, buf, len);
}

uint32_t crc32c_table(uint32_t crc, const void *buf, size_t len)
{
	return ~crc_table(~crc, buf, len);
}

const char *crc32c_impl(void)
{
	return crc_impl_name;
}

const char *crc32c_instr_impl(void)
{
	return crc_instr_name;
}
