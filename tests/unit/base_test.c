#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/check.h"
#include "base/crc32c.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/strmap.h"
#include "base/varint.h"
#include "test.h"

/* Published vectors: RFC 3720 appendix B.4 and the common "123456789" check value. */
static void crc_vectors(uint32_t (*fn)(uint32_t, const void *, size_t))
{
    uint8_t buf[32];
    memset(buf, 0, 32);
    ASSERT_UEQ(fn(0, buf, 32), 0x8a9136aa);
    memset(buf, 0xff, 32);
    ASSERT_UEQ(fn(0, buf, 32), 0x62a8ab43);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    ASSERT_UEQ(fn(0, buf, 32), 0x46dd794e);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    ASSERT_UEQ(fn(0, buf, 32), 0x113fdb5c);
    ASSERT_UEQ(fn(0, "123456789", 9), 0xe3069283);
    /* continuation equals one pass */
    ASSERT_UEQ(fn(fn(0, "1234", 4), "56789", 5), 0xe3069283);
}

TEST(crc32c_sw_matches_published_vectors)
{
    crc_vectors(crc32c_sw);
}

TEST(crc32c_hw_matches_published_vectors)
{
    if (!crc32c_hw_available())
        return;
    crc_vectors(crc32c_hw);
}

TEST(crc32c_hw_and_sw_agree_on_unaligned_lengths)
{
    uint8_t buf[1000];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    for (size_t off = 0; off < 9; off++)
        for (size_t len = 0; len < 200; len += 7)
            ASSERT_UEQ(crc32c(0, buf + off, len), crc32c_sw(0, buf + off, len));
}

TEST(crc32c_hw_three_way_agrees_with_sw_on_long_inputs)
{
    if (!crc32c_hw_available())
        return;
    size_t n = 3 * 8192 * 2 + 3 * 256 * 3 + 77;
    uint8_t *buf = mem_alloc(n + 8);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n + 8; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = (uint8_t)x;
    }
    /* lengths around every block boundary, offsets for alignment, and continuation */
    size_t lens[] = {767, 768, 769, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 1, 3 * 8192 + 768, n};
    for (size_t off = 0; off < 3; off++)
        for (size_t i = 0; i < ARRAY_LEN(lens); i++)
            ASSERT_UEQ(crc32c_hw(0, buf + off, lens[i]), crc32c_sw(0, buf + off, lens[i]));
    uint32_t part = crc32c_hw(0, buf, 30000);
    ASSERT_UEQ(crc32c_hw(part, buf + 30000, n - 30000), crc32c_sw(0, buf, n));
    mem_free(buf);
}

TEST(varint_roundtrip_and_bounds)
{
    uint8_t b[16];
    int64_t vals[] = {0, 1, -1, 63, -64, 64, 300, -300, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
    for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
        size_t n = varint64_put(b, vals[i]);
        ASSERT_EQ(n, varint64_size(vals[i]));
        int64_t v;
        ASSERT_EQ(varint64_get(b, b + n, &v), n);
        ASSERT_EQ(v, vals[i]);
        ASSERT_EQ(varint64_get(b, b + n - 1, &v), 0); /* short input */
    }
    /* zigzag examples from the protobuf spec */
    ASSERT_UEQ(zigzag32_encode(-1), 1);
    ASSERT_UEQ(zigzag32_encode(1), 2);
    ASSERT_UEQ(zigzag32_encode(-2), 3);
    ASSERT_UEQ(zigzag32_encode(INT32_MIN), 0xffffffffu);
    /* unsigned: 300 = ac 02 */
    ASSERT_EQ(uvarint32_put(b, 300), 2);
    ASSERT_UEQ(b[0], 0xac);
    ASSERT_UEQ(b[1], 0x02);
    uint32_t u;
    /* six-byte encodings and values over 32 bits are refused for 32-bit reads */
    uint8_t too_long[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    ASSERT_EQ(uvarint32_get(too_long, too_long + 6, &u), 0);
    uint8_t too_big[] = {0xff, 0xff, 0xff, 0xff, 0x1f};
    ASSERT_EQ(uvarint32_get(too_big, too_big + 5, &u), 0);
    uint8_t max32[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    ASSERT_EQ(uvarint32_get(max32, max32 + 5, &u), 5);
    ASSERT_UEQ(u, 0xffffffffu);
    int32_t s;
    ASSERT_EQ(varint32_get(max32, max32 + 5, &s), 5);
    ASSERT_EQ(s, INT32_MIN);
}

TEST(arena_alignment_and_reset)
{
    struct arena a;
    arena_init(&a, 64);
    for (int i = 0; i < 100; i++) {
        uint8_t *p = arena_alloc(&a, (size_t)i + 1);
        ASSERT_EQ((uintptr_t)p % 16, 0);
        memset(p, 0xab, (size_t)i + 1);
    }
    char *s = arena_strndup(&a, "hello world", 5);
    ASSERT_STREQ(s, "hello");
    arena_reset(&a);
    ASSERT_EQ(a.allocated, 0);
    ASSERT(arena_alloc(&a, 10) != NULL);
    arena_destroy(&a);
}

TEST(iobuf_memory_file_patch_consume)
{
    char path[300];
    snprintf(path, sizeof(path), "%s/f", test_tmpdir());
    int fd = open(path, O_CREAT | O_RDWR, 0644);
    ASSERT(fd >= 0);
    ASSERT_EQ(write(fd, "0123456789", 10), 10);
    struct fileref *f = fileref_new(fd);

    struct iobuf b;
    iobuf_init(&b);
    iobuf_append(&b, "XXXX", 4);
    iobuf_append_file(&b, f, 2, 5);
    for (int i = 0; i < 3000; i++)
        iobuf_append(&b, "ab", 2); /* forces growth of a new tail chunk */
    iobuf_patch(&b, 0, "head", 4);
    ASSERT_EQ(iobuf_total(&b), 4 + 5 + 6000);
    fileref_put(f); /* the iobuf keeps its own reference */

    size_t len;
    uint8_t *flat = iobuf_flatten(&b, &len);
    ASSERT_EQ(len, 6009);
    ASSERT_MEMEQ(flat, "head23456ab", 11);
    mem_free(flat);

    iobuf_consume(&b, 6);
    flat = iobuf_flatten(&b, &len);
    ASSERT_EQ(len, 6003);
    ASSERT_MEMEQ(flat, "456abab", 7);
    mem_free(flat);
    iobuf_consume(&b, iobuf_pending(&b));
    ASSERT_EQ(iobuf_pending(&b), 0);
    iobuf_destroy(&b);
}

TEST(strmap_put_get_delete_many)
{
    struct strmap m;
    strmap_init(&m);
    char key[32];
    for (intptr_t i = 0; i < 5000; i++) {
        int n = snprintf(key, sizeof(key), "topic-%ld", (long)i);
        ASSERT(strmap_put(&m, key, (size_t)n, (void *)(i + 1)) == NULL);
    }
    for (intptr_t i = 0; i < 5000; i += 2) {
        int n = snprintf(key, sizeof(key), "topic-%ld", (long)i);
        ASSERT_EQ((intptr_t)strmap_del(&m, key, (size_t)n), i + 1);
    }
    ASSERT_EQ(m.len, 2500);
    for (intptr_t i = 0; i < 5000; i++) {
        int n = snprintf(key, sizeof(key), "topic-%ld", (long)i);
        void *v = strmap_get(&m, key, (size_t)n);
        ASSERT_EQ((intptr_t)v, i % 2 ? i + 1 : 0);
    }
    size_t it = 0, count = 0;
    const char *k;
    void *v;
    while (strmap_next(&m, &it, &k, &v))
        count++;
    ASSERT_EQ(count, 2500);
    strmap_destroy(&m);
}

TEST(errors_have_text)
{
    ASSERT_STREQ(err_str(-ERR_CORRUPT), "corrupt data");
    ASSERT_STREQ(err_str(-ENOENT), "No such file or directory");
    char buf[32];
    ASSERT_STREQ(log_quote(buf, sizeof(buf), "a \"b\"\n", 6), "\"a \\\"b\\\"\\x0a\"");
}

TEST(mem_grow_starts_where_asked_then_doubles)
{
    int64_t *a = NULL;
    size_t cap = 0;
    MEM_GROW_FROM(a, cap, 1, 2);
    ASSERT_EQ(cap, 2);
    a[0] = 7;
    a[1] = 8;
    MEM_GROW_FROM(a, cap, 2, 2); /* room already: unchanged */
    ASSERT_EQ(cap, 2);
    MEM_GROW_FROM(a, cap, 3, 2);
    ASSERT_EQ(cap, 4);
    ASSERT_EQ(a[0] + a[1], 15); /* kept across the growth */
    MEM_GROW_FROM(a, cap, 9, 2);
    ASSERT_EQ(cap, 16);
    mem_free(a);
    a = NULL;
    cap = 0;
    MEM_GROW(a, cap, 1); /* the default start */
    ASSERT_EQ(cap, 8);
    MEM_GROW(a, cap, 20);
    ASSERT_EQ(cap, 32);
    mem_free(a);
}
