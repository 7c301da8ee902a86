#include "base/varint.h"

size_t uvarint64_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

size_t uvarint32_put(uint8_t *p, uint32_t v)
{
    return uvarint64_put(p, v);
}

static size_t uget(const uint8_t *p, const uint8_t *end, uint64_t *v, size_t max_bytes,
                   unsigned bits)
{
    uint64_t r = 0;
    for (size_t i = 0; i < max_bytes; i++) {
        if (p + i >= end)
            return 0;
        uint64_t b = p[i];
        unsigned shift = (unsigned)(7 * i);
        if (shift + 7 > bits && (b & 0x7f) >> (bits - shift) != 0)
            return 0; /* value does not fit the type */
        r |= (b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return i + 1;
        }
    }
    return 0; /* too long */
}

size_t uvarint32_get(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
    uint64_t r;
    size_t n = uget(p, end, &r, VARINT32_MAX_BYTES, 32);
    if (n)
        *v = (uint32_t)r;
    return n;
}

size_t uvarint64_get(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    return uget(p, end, v, VARINT64_MAX_BYTES, 64);
}

size_t uvarint32_size(uint32_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

size_t varint32_put(uint8_t *p, int32_t v)
{
    return uvarint64_put(p, zigzag32_encode(v));
}

size_t varint64_put(uint8_t *p, int64_t v)
{
    return uvarint64_put(p, zigzag64_encode(v));
}

size_t varint32_get(const uint8_t *p, const uint8_t *end, int32_t *v)
{
    uint32_t u;
    size_t n = uvarint32_get(p, end, &u);
    if (n)
        *v = zigzag32_decode(u);
    return n;
}

size_t varint64_get(const uint8_t *p, const uint8_t *end, int64_t *v)
{
    uint64_t u;
    size_t n = uvarint64_get(p, end, &u);
    if (n)
        *v = zigzag64_decode(u);
    return n;
}

size_t varint32_size(int32_t v)
{
    return uvarint32_size(zigzag32_encode(v));
}

size_t varint64_size(int64_t v)
{
    uint64_t u = zigzag64_encode(v);
    size_t n = 1;
    while (u >= 0x80) {
        u >>= 7;
        n++;
    }
    return n;
}
