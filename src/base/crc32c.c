#include "base/crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

#define POLY 0x82f63b78u /* reflected Castagnoli polynomial */

static uint32_t table[8][256];
static int table_ready;
static int hw_state; /* 0 unknown, 1 yes, -1 no */

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ POLY : c >> 1;
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

uint32_t crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
        table_init();
    const uint8_t *p = buf;
    crc = ~crc;
    while (len && ((uintptr_t)p & 7)) {
        crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
        len--;
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= crc; /* little-endian hosts only; the table path is also the fallback on others */
        crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
              table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^
              table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

#if defined(__x86_64__)
/* The crc32 instruction has a latency of three cycles but issues every cycle, so one stream
 * uses a third of it. Long inputs run three streams over adjacent blocks at once and combine
 * them: the CRC register is linear, so continuing stream A over a block of n zero bytes
 * ("shifting" it) and XORing the register of stream B (started from 0) gives the register of
 * A followed by B. Shifting by a fixed n is a linear map of 32 bits, tabulated per byte. */
#define CRC_LONG 8192
#define CRC_SHORT 256

static uint32_t shift_long[4][256];
static uint32_t shift_short[4][256];
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2"))) static uint32_t zeros_hw(uint32_t c, size_t n)
{
    uint64_t r = c;
    for (size_t i = 0; i < n / 8; i++)
        r = _mm_crc32_u64(r, 0);
    return (uint32_t)r;
}

static void shift_table(uint32_t tab[4][256], size_t n)
{
    uint32_t basis[32];
    for (int j = 0; j < 32; j++)
        basis[j] = zeros_hw(1u << j, n);
    for (int k = 0; k < 4; k++)
        for (uint32_t b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int i = 0; i < 8; i++)
                if (b & (1u << i))
                    v ^= basis[8 * k + i];
            tab[k][b] = v;
        }
}

static void shift_init(void)
{
    shift_table(shift_long, CRC_LONG);
    shift_table(shift_short, CRC_SHORT);
}

static inline uint32_t shift(uint32_t tab[4][256], uint32_t c)
{
    return tab[0][c & 0xff] ^ tab[1][(c >> 8) & 0xff] ^ tab[2][(c >> 16) & 0xff] ^ tab[3][c >> 24];
}

/* Three streams over blocks of `block` bytes while 3 * block bytes remain. */
__attribute__((target("sse4.2"))) static inline uint64_t
three_way(uint64_t c, const uint8_t **pp, size_t *lenp, size_t block, uint32_t tab[4][256])
{
    const uint8_t *p = *pp;
    size_t len = *lenp;
    while (len >= 3 * block) {
        uint64_t c0 = c, c1 = 0, c2 = 0;
        for (size_t i = 0; i < block; i += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + i, 8);
            memcpy(&w1, p + block + i, 8);
            memcpy(&w2, p + 2 * block + i, 8);
            c0 = _mm_crc32_u64(c0, w0);
            c1 = _mm_crc32_u64(c1, w1);
            c2 = _mm_crc32_u64(c2, w2);
        }
        c = shift(tab, (uint32_t)c0) ^ (uint32_t)c1;
        c = shift(tab, (uint32_t)c) ^ (uint32_t)c2;
        p += 3 * block;
        len -= 3 * block;
    }
    *pp = p;
    *lenp = len;
    return c;
}

__attribute__((target("sse4.2"))) uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint64_t c = ~crc;
    while (len && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8((uint32_t)c, *p++);
        len--;
    }
    if (len >= 3 * CRC_SHORT) {
        pthread_once(&shift_once, shift_init);
        c = three_way(c, &p, &len, CRC_LONG, shift_long);
        c = three_way(c, &p, &len, CRC_SHORT, shift_short);
    }
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = _mm_crc32_u64(c, w);
        p += 8;
        len -= 8;
    }
    while (len--)
        c = _mm_crc32_u8((uint32_t)c, *p++);
    return ~(uint32_t)c;
}

bool crc32c_hw_available(void)
{
    if (hw_state == 0)
        hw_state = __builtin_cpu_supports("sse4.2") ? 1 : -1;
    return hw_state > 0;
}
#else
uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    return crc32c_sw(crc, buf, len);
}

bool crc32c_hw_available(void)
{
    return false;
}
#endif

uint32_t crc32c(uint32_t crc, const void *buf, size_t len)
{
    if (crc32c_hw_available())
        return crc32c_hw(crc, buf, len);
    return crc32c_sw(crc, buf, len);
}
