/* Varints as Kafka uses them.
 *
 * Unsigned varints (LEB128) frame the flexible protocol's compact strings, arrays and tagged
 * fields; they are at most 5 bytes for 32-bit values. Records inside a batch use zigzag-encoded
 * signed varints (varint, 32-bit, at most 5 bytes) and varlongs (64-bit, at most 10 bytes).
 *
 * Decoders take [p, end) and return the number of bytes consumed, or 0 if the input is short or
 * the encoding is longer than the type allows. They never read past end. */
#ifndef SP_BASE_VARINT_H
#define SP_BASE_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define VARINT32_MAX_BYTES 5
#define VARINT64_MAX_BYTES 10

static inline uint32_t zigzag32_encode(int32_t v)
{
    return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}
static inline int32_t zigzag32_decode(uint32_t v)
{
    return (int32_t)(v >> 1) ^ -(int32_t)(v & 1);
}
static inline uint64_t zigzag64_encode(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int64_t zigzag64_decode(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

size_t uvarint32_put(uint8_t *p, uint32_t v);
size_t uvarint64_put(uint8_t *p, uint64_t v);
size_t uvarint32_get(const uint8_t *p, const uint8_t *end, uint32_t *v);
size_t uvarint64_get(const uint8_t *p, const uint8_t *end, uint64_t *v);
size_t uvarint32_size(uint32_t v);

/* Zigzag forms used inside records. */
size_t varint32_put(uint8_t *p, int32_t v);
size_t varint64_put(uint8_t *p, int64_t v);
size_t varint32_get(const uint8_t *p, const uint8_t *end, int32_t *v);
size_t varint64_get(const uint8_t *p, const uint8_t *end, int64_t *v);
size_t varint32_size(int32_t v);
size_t varint64_size(int64_t v);

#endif
