/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of every LDS wire frame.
 *
 * Uses the SSE4.2 crc32 instruction when the CPU has it (checked once at
 * run time) and a table otherwise; both give identical results.
 */
#ifndef LDS_CRC32C_H
#define LDS_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: crc32c(crc32c(0, a, n), b, m) == crc32c(0, a||b, n+m).
 * Start with crc = 0.  crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t crc32c(uint32_t crc, const void *buf, size_t len);

#endif
