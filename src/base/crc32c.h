/* CRC-32C (Castagnoli), as Kafka record batches use it.
 *
 * crc32c(0, buf, len) is the checksum of buf; crc32c(crc32c(0, a, n), b, m) continues it over b.
 * Uses the SSE4.2 crc32 instruction when the CPU has it, a slicing-by-8 table otherwise; both are
 * checked against published vectors in tests/unit/base_test.c. */
#ifndef SP_BASE_CRC32C_H
#define SP_BASE_CRC32C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(uint32_t crc, const void *buf, size_t len);
uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len); /* portable path */
uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len); /* only if crc32c_hw_available() */
bool crc32c_hw_available(void);

#endif
