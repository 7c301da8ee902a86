/* SipHash-2-4, written from the paper's description (2 compression rounds per 8-byte word, 4
 * finalization rounds; the 128-bit variant xors 0xee into v1 at setup and into v2 before the
 * first finalization, then 0xdd into v1 before the second). */
#include "base/siphash.h"

#include <stdbool.h>
#include <string.h>

static inline uint64_t rotl(uint64_t x, int b)
{
    return (x << b) | (x >> (64 - b));
}

static inline uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

struct sip {
    uint64_t v0, v1, v2, v3;
};

static inline void rounds(struct sip *s, int n)
{
    for (int i = 0; i < n; i++) {
        s->v0 += s->v1;
        s->v1 = rotl(s->v1, 13);
        s->v1 ^= s->v0;
        s->v0 = rotl(s->v0, 32);
        s->v2 += s->v3;
        s->v3 = rotl(s->v3, 16);
        s->v3 ^= s->v2;
        s->v0 += s->v3;
        s->v3 = rotl(s->v3, 21);
        s->v3 ^= s->v0;
        s->v2 += s->v1;
        s->v1 = rotl(s->v1, 17);
        s->v1 ^= s->v2;
        s->v2 = rotl(s->v2, 32);
    }
}

/* Initialises and absorbs the whole message (all words and the length-tagged last word). */
static void absorb(struct sip *s, const uint8_t key[SIPHASH_KEY_SIZE], const uint8_t *p,
                   size_t len, bool wide)
{
    uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    s->v0 = k0 ^ 0x736f6d6570736575ULL;
    s->v1 = k1 ^ 0x646f72616e646f6dULL;
    s->v2 = k0 ^ 0x6c7967656e657261ULL;
    s->v3 = k1 ^ 0x7465646279746573ULL;
    if (wide)
        s->v1 ^= 0xee;
    size_t words = len / 8;
    for (size_t i = 0; i < words; i++) {
        uint64_t m = load_le64(p + 8 * i);
        s->v3 ^= m;
        rounds(s, 2);
        s->v0 ^= m;
    }
    uint8_t tail[8] = {0};
    memcpy(tail, p + 8 * words, len % 8);
    uint64_t b = load_le64(tail) | (uint64_t)(len & 0xff) << 56;
    s->v3 ^= b;
    rounds(s, 2);
    s->v0 ^= b;
}

uint64_t siphash64(const uint8_t key[SIPHASH_KEY_SIZE], const void *data, size_t len)
{
    struct sip s;
    absorb(&s, key, data, len, false);
    s.v2 ^= 0xff;
    rounds(&s, 4);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

void siphash128(const uint8_t key[SIPHASH_KEY_SIZE], const void *data, size_t len,
                uint64_t out[2])
{
    struct sip s;
    absorb(&s, key, data, len, true);
    s.v2 ^= 0xee;
    rounds(&s, 4);
    out[0] = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
    s.v1 ^= 0xdd;
    rounds(&s, 4);
    out[1] = s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}
