/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of every LDS wire frame.
 *
 * Uses Intel ISA-L's crc32_iscsi for 512 bytes and more where the build
 * found it (libisal-dev), and below that, or without it, the CPU's
 * CRC-32C instruction when it has one (x86-64 SSE4.2, ARMv8 CRC32; checked
 * once at run time) in three interleaved chains, and slice-by-8 tables
 * otherwise; all give identical results.
 */
#ifndef LDS_CRC32C_H
#define LDS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: crc32c(crc32c(0, a, n), b, m) == crc32c(0, a||b, n+m).
 * Start with crc = 0.  crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

/* The same with the tables whatever the CPU has: for the tests and the
 * benchmark that hold the instruction's path to it. */
uint32_t crc32c_table(uint32_t crc, const void *buf, size_t len);

/* The same without ISA-L: the instruction's chains, or the tables where
 * the CPU has none.  For the tests and the benchmark. */
uint32_t crc32c_instr(uint32_t crc, const void *buf, size_t len);

/* Which one crc32c() uses here, in words ("ISA-L crc32_iscsi (x86-64
 * crc32, 3-way under 512 bytes)", ...), and which one crc32c_instr(). */
const char *crc32c_impl(void);
const char *crc32c_instr_impl(void);

#endif
