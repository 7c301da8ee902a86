/* Big-endian (network order) loads and stores of fixed-width integers at unaligned addresses.
 * The on-disk formats (indexes, snapshots, checkpoints) and Kafka's wire format are
 * big-endian. The caller guarantees the bytes are there. */
#ifndef SP_BASE_ENDIAN_H
#define SP_BASE_ENDIAN_H

#include <stdint.h>

static inline uint16_t be_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t be_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t be_get64(const uint8_t *p)
{
    return (uint64_t)be_get32(p) << 32 | be_get32(p + 4);
}
static inline void be_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void be_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
static inline void be_put64(uint8_t *p, uint64_t v)
{
    be_put32(p, (uint32_t)(v >> 32));
    be_put32(p + 4, (uint32_t)v);
}

#endif
