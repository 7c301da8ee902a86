/* Record-section compression: round trips, the xerial snappy framing Java producers write, the
 * output cap, broken input, and deep validation of compressed batches. */
#include <snappy-c.h>

#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/batch.h"
#include "kafka/compress.h"
#include "test.h"

static const int codecs[] = {KCOMPRESSION_GZIP, KCOMPRESSION_SNAPPY, KCOMPRESSION_LZ4,
                             KCOMPRESSION_ZSTD};
#define N_CODECS (int)(sizeof(codecs) / sizeof(codecs[0]))

static uint8_t *random_bytes(size_t n, uint64_t seed)
{
    uint8_t *p = mem_alloc(n);
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)(x >> 24);
    }
    return p;
}

static uint8_t *text_bytes(size_t n)
{
    static const char line[] = "{\"user\":42,\"event\":\"page_view\",\"path\":\"/index.html\"}\n";
    uint8_t *p = mem_alloc(n);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)line[i % (sizeof(line) - 1)];
    return p;
}

static void roundtrip(int codec, const uint8_t *in, size_t len)
{
    uint8_t *c = NULL, *d = NULL;
    size_t clen = 0, dlen = 0;
    int rc = kcompress_compress(codec, in, len, &c, &clen);
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "%s: compress %zu bytes: %d", kcompress_name(codec), len, rc);
    rc = kcompress_decompress(codec, c, clen, len, &d, &dlen);
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "%s: decompress %zu bytes: %d", kcompress_name(codec), len,
                  rc);
    ASSERT_EQ(dlen, len);
    if (len)
        ASSERT_MEMEQ(d, in, len);
    mem_free(d);
    /* one byte less room than needed */
    if (len > 0) {
        d = NULL;
        ASSERT_EQ(kcompress_decompress(codec, c, clen, len - 1, &d, &dlen), -ERR_TOO_LARGE);
        ASSERT(d == NULL);
    }
    mem_free(c);
}

TEST(kmsg_compress_roundtrip_every_codec_and_size)
{
    size_t big = 100 * 1024;
    uint8_t *noise = random_bytes(big, 7);
    uint8_t *text = text_bytes(big);
    static const uint8_t one = 'x';
    for (int i = 0; i < N_CODECS; i++) {
        roundtrip(codecs[i], NULL, 0);
        roundtrip(codecs[i], &one, 1);
        roundtrip(codecs[i], noise, big);
        roundtrip(codecs[i], text, big);
        roundtrip(codecs[i], noise, 65536 + 3); /* crosses lz4/xerial block sizes */
    }
    roundtrip(KCOMPRESSION_NONE, text, big);
    mem_free(noise);
    mem_free(text);
}

TEST(kmsg_compress_compressible_input_shrinks)
{
    size_t big = 100 * 1024;
    uint8_t *text = text_bytes(big);
    for (int i = 0; i < N_CODECS; i++) {
        uint8_t *c;
        size_t clen;
        ASSERT_EQ(kcompress_compress(codecs[i], text, big, &c, &clen), 0);
        ASSERT_CMP(clen, <, big / 4);
        mem_free(c);
    }
    mem_free(text);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A xerial stream as Java's SnappyOutputStream writes it, built here with libsnappy directly. */
static uint8_t *xerial(const uint8_t *in, size_t len, size_t block, size_t *out_len)
{
    size_t cap = 16 + (len / block + 1) * (4 + snappy_max_compressed_length(block));
    uint8_t *out = mem_alloc(cap);
    static const uint8_t magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    memcpy(out, magic, 8);
    put_be32(out + 8, 1);
    put_be32(out + 12, 1);
    size_t pos = 16;
    for (size_t off = 0; off < len; off += block) {
        size_t n = len - off < block ? len - off : block;
        size_t clen = cap - pos - 4;
        ASSERT_EQ(snappy_compress((const char *)in + off, n, (char *)out + pos + 4, &clen),
                  SNAPPY_OK);
        put_be32(out + pos, (uint32_t)clen);
        pos += 4 + clen;
    }
    *out_len = pos;
    return out;
}

TEST(kmsg_compress_snappy_reads_xerial_and_raw)
{
    size_t len = 70000;
    uint8_t *text = text_bytes(len);
    size_t xlen;
    uint8_t *x = xerial(text, len, 32768, &xlen);
    uint8_t *d;
    size_t dlen;
    ASSERT_EQ(kcompress_decompress(KCOMPRESSION_SNAPPY, x, xlen, len, &d, &dlen), 0);
    ASSERT_EQ(dlen, len);
    ASSERT_MEMEQ(d, text, len);
    mem_free(d);
    ASSERT_EQ(kcompress_decompress(KCOMPRESSION_SNAPPY, x, xlen, len - 1, &d, &dlen),
              -ERR_TOO_LARGE);
    /* cut inside the last block, and inside a block length */
    ASSERT_EQ(kcompress_decompress(KCOMPRESSION_SNAPPY, x, xlen - 1, len, &d, &dlen), -ERR_CORRUPT);
    ASSERT_EQ(kcompress_decompress(KCOMPRESSION_SNAPPY, x, 18, len, &d, &dlen), -ERR_CORRUPT);
    /* a block length beyond the end */
    put_be32(x + 16, 0x7fffffff);
    ASSERT_EQ(kcompress_decompress(KCOMPRESSION_SNAPPY, x, xlen, len, &d, &dlen), -ERR_CORRUPT);
    mem_free(x);

    /* what our compressor writes is xerial too */
    uint8_t *c;
    size_t clen;
    ASSERT_EQ(kcompress_compress(KCOMPRESSION_SNAPPY, text, len, &c, &clen), 0);
    ASSERT_EQ(c[0], 0x82);
    ASSERT_MEMEQ(c + 1, "SNAPPY", 6);
    mem_free(c);

    /* raw snappy, as librdkafka and kafka-python may send */
    size_t rlen = snappy_max_compressed_length(len);
    uint8_t *raw = mem_alloc(rlen);
    ASSERT_EQ(snappy_compress((const char *)text, len, (char *)raw, &rlen), SNAPPY_OK);
    ASSERT_EQ(kcompress_decompress(KCOMPRESSION_SNAPPY, raw, rlen, len, &d, &dlen), 0);
    ASSERT_EQ(dlen, len);
    ASSERT_MEMEQ(d, text, len);
    mem_free(d);
    /* the declared length alone is checked against the cap, before allocating */
    ASSERT_EQ(kcompress_decompress(KCOMPRESSION_SNAPPY, raw, rlen, 1000, &d, &dlen),
              -ERR_TOO_LARGE);
    mem_free(raw);
    mem_free(text);
}

TEST_T(kmsg_compress_output_cap_stops_a_bomb, 60)
{
    size_t len = 10 << 20;
    uint8_t *zeros = mem_calloc(1, len);
    for (int i = 0; i < N_CODECS; i++) {
        uint8_t *c, *d = NULL;
        size_t clen, dlen;
        ASSERT_EQ(kcompress_compress(codecs[i], zeros, len, &c, &clen), 0);
        ASSERT_CMP(clen, <, len / 10);
        int rc = kcompress_decompress(codecs[i], c, clen, 1 << 20, &d, &dlen);
        if (rc != -ERR_TOO_LARGE)
            test_fail(__FILE__, __LINE__, "%s: %d", kcompress_name(codecs[i]), rc);
        ASSERT(d == NULL);
        /* and with room enough it all comes back */
        ASSERT_EQ(kcompress_decompress(codecs[i], c, clen, len, &d, &dlen), 0);
        ASSERT_EQ(dlen, len);
        ASSERT_MEMEQ(d, zeros, len);
        mem_free(d);
        mem_free(c);
    }
    mem_free(zeros);
}

TEST(kmsg_compress_truncated_and_garbage_input_fail)
{
    size_t len = 5000;
    uint8_t *text = text_bytes(len);
    uint8_t *noise = random_bytes(512, 99);
    for (int i = 0; i < N_CODECS; i++) {
        int codec = codecs[i];
        uint8_t *c, *d;
        size_t clen, dlen;
        ASSERT_EQ(kcompress_compress(codec, text, len, &c, &clen), 0);
        /* every strict prefix; xerial has no end marker, so a cut between blocks would be a
         * shorter valid stream: this input is a single block */
        for (size_t n = 0; n < clen; n++) {
            uint8_t *cut = mem_dup(c, n);
            d = NULL;
            int rc = kcompress_decompress(codec, cut, n, len, &d, &dlen);
            if (rc == 0 && codec == KCOMPRESSION_SNAPPY && n == 16) {
                ASSERT_EQ(dlen, 0); /* the bare xerial header: an empty stream */
                mem_free(d);
            } else if (rc != -ERR_CORRUPT &&
                       !(codec == KCOMPRESSION_SNAPPY && rc == -ERR_TOO_LARGE)) {
                /* (a cut xerial header reads as raw snappy declaring a huge length) */
                test_fail(__FILE__, __LINE__, "%s: prefix %zu/%zu gives %d", kcompress_name(codec),
                          n, clen, rc);
            }
            mem_free(cut);
        }
        /* trailing garbage after a complete stream */
        uint8_t *longer = mem_alloc(clen + 3);
        memcpy(longer, c, clen);
        memcpy(longer + clen, "\x01\x02\x03", 3);
        ASSERT_NE(kcompress_decompress(codec, longer, clen + 3, len, &d, &dlen), 0);
        mem_free(longer);
        /* a flipped byte in the middle */
        c[clen / 2] ^= 0x55;
        d = NULL;
        int rc = kcompress_decompress(codec, c, clen, len, &d, &dlen);
        if (rc == 0) { /* some codecs carry no checksum: then at least the output differs */
            ASSERT(dlen != len || memcmp(d, text, len) != 0);
            mem_free(d);
        }
        mem_free(c);
        /* noise */
        ASSERT_NE(kcompress_decompress(codec, noise, 512, 1 << 20, &d, &dlen), 0);
    }
    uint8_t *d;
    size_t dlen;
    ASSERT_EQ(kcompress_decompress(9, text, len, len, &d, &dlen), -ERR_UNSUPPORTED);
    ASSERT_EQ(kcompress_compress(9, text, len, &d, &dlen), -ERR_UNSUPPORTED);
    mem_free(noise);
    mem_free(text);
}

TEST(kmsg_compress_gzip_accepts_concatenated_members)
{
    uint8_t *a, *b, *d;
    size_t alen, blen, dlen;
    ASSERT_EQ(kcompress_compress(KCOMPRESSION_GZIP, (const uint8_t *)"hello ", 6, &a, &alen), 0);
    ASSERT_EQ(kcompress_compress(KCOMPRESSION_GZIP, (const uint8_t *)"world", 5, &b, &blen), 0);
    uint8_t *ab = mem_alloc(alen + blen);
    memcpy(ab, a, alen);
    memcpy(ab + alen, b, blen);
    ASSERT_EQ(kcompress_decompress(KCOMPRESSION_GZIP, ab, alen + blen, 100, &d, &dlen), 0);
    ASSERT_EQ(dlen, 11);
    ASSERT_MEMEQ(d, "hello world", 11);
    mem_free(d);
    ASSERT_EQ(kcompress_decompress(KCOMPRESSION_GZIP, ab, alen + blen, 10, &d, &dlen),
              -ERR_TOO_LARGE);
    mem_free(ab);
    mem_free(a);
    mem_free(b);
}

TEST(kmsg_compress_names)
{
    ASSERT_STREQ(kcompress_name(KCOMPRESSION_NONE), "none");
    ASSERT_STREQ(kcompress_name(KCOMPRESSION_GZIP), "gzip");
    ASSERT_STREQ(kcompress_name(KCOMPRESSION_SNAPPY), "snappy");
    ASSERT_STREQ(kcompress_name(KCOMPRESSION_LZ4), "lz4");
    ASSERT_STREQ(kcompress_name(KCOMPRESSION_ZSTD), "zstd");
    ASSERT_STREQ(kcompress_name(5), "unknown");
    ASSERT_STREQ(kcompress_name(-1), "unknown");
}

/* ---- compressed batches ---- */

static void be32_set(uint8_t *p, int32_t v)
{
    put_be32(p, (uint32_t)v);
}

/* kbatch_build's batch with its records section compressed by codec; *len set. */
static uint8_t *compressed_batch(int codec, int32_t count, size_t *len)
{
    struct kbytes keys[8], values[8];
    static const char *const vals[] = {"alpha", "", "gamma gamma gamma", "delta", "e", "f",
                                       "g",     "h"};
    for (int32_t i = 0; i < count; i++) {
        keys[i] = i % 2 ? (struct kbytes){NULL, -1} : (struct kbytes){(const uint8_t *)"k", 1};
        values[i] = (struct kbytes){(const uint8_t *)vals[i], (int32_t)strlen(vals[i])};
    }
    struct iobuf b;
    iobuf_init(&b);
    kbatch_build(&b, 1700000000000LL, keys, values, count);
    size_t plain_len;
    uint8_t *plain = iobuf_flatten(&b, &plain_len);
    iobuf_destroy(&b);
    ASSERT_EQ(kbatch_validate(plain, plain_len, true, true, 1 << 20), 0);

    uint8_t *c;
    size_t clen;
    ASSERT_EQ(kcompress_compress(codec, plain + KBATCH_HEADER_SIZE, plain_len - KBATCH_HEADER_SIZE,
                                 &c, &clen),
              0);
    *len = KBATCH_HEADER_SIZE + clen;
    uint8_t *batch = mem_alloc(*len);
    memcpy(batch, plain, KBATCH_HEADER_SIZE);
    memcpy(batch + KBATCH_HEADER_SIZE, c, clen);
    be32_set(batch + KBATCH_OFF_LENGTH, (int32_t)(*len - KBATCH_LOG_OVERHEAD));
    batch[KBATCH_OFF_ATTRIBUTES + 1] =
        (uint8_t)((batch[KBATCH_OFF_ATTRIBUTES + 1] & ~KBATCH_ATTR_COMPRESSION_MASK) | codec);
    kbatch_update_crc(batch, *len);
    mem_free(c);
    mem_free(plain);
    return batch;
}

TEST(kmsg_batch_validate_deep_accepts_compressed_batches_and_catches_bad_counts)
{
    for (int i = 0; i < N_CODECS; i++) {
        int codec = codecs[i];
        size_t len;
        uint8_t *batch = compressed_batch(codec, 5, &len);
        struct kbatch_header h;
        kbatch_parse_header(batch, &h);
        ASSERT_EQ(kbatch_compression(&h), codec);
        ASSERT_EQ(kbatch_validate(batch, len, true, true, 1 << 20), 0);

        /* the records decompress to more than the cap allows */
        ASSERT_EQ(kbatch_validate(batch, len, true, true, 16), -ERR_TOO_LARGE);

        /* one record fewer than the section holds: only the deep check can tell */
        be32_set(batch + 57, 4);
        kbatch_update_crc(batch, len);
        ASSERT_EQ(kbatch_validate(batch, len, false, false, 1 << 20), 0);
        ASSERT_NE(kbatch_validate(batch, len, true, false, 1 << 20), 0);

        /* one record more */
        be32_set(batch + 57, 6);
        kbatch_update_crc(batch, len);
        ASSERT_NE(kbatch_validate(batch, len, true, false, 1 << 20), 0);
        ASSERT_NE(kbatch_validate(batch, len, true, true, 1 << 20), 0);

        /* a damaged compressed section under a recomputed CRC (its first bytes: codecs
         * without checksums would decode a flipped literal into other, well-formed records) */
        be32_set(batch + 57, 5);
        batch[KBATCH_HEADER_SIZE] ^= 0xff;
        batch[KBATCH_HEADER_SIZE + 1] ^= 0xff;
        kbatch_update_crc(batch, len);
        ASSERT_NE(kbatch_validate(batch, len, true, true, 1 << 20), 0);
        mem_free(batch);
    }
}

TEST(kmsg_batch_validate_strict_count_does_not_overflow)
{
    size_t len;
    uint8_t *batch = compressed_batch(KCOMPRESSION_NONE, 3, &len);
    be32_set(batch + 23, INT32_MAX); /* lastOffsetDelta */
    kbatch_update_crc(batch, len);
    ASSERT_EQ(kbatch_validate(batch, len, false, true, 1 << 20), -ERR_INVALID);
    ASSERT_EQ(kbatch_validate(batch, len, false, false, 1 << 20), 0);
    mem_free(batch);
}

/* compression.type: a batch in any codec recompressed to any other (none included) keeps every
 * header field but the codec bits, batchLength and CRC, validates deeply, and holds the same
 * records section once decompressed; an unknown target codec and a section bigger than the cap
 * are refused. */
TEST(kmsg_batch_recompress_between_every_codec)
{
    static const int all[] = {KCOMPRESSION_NONE, KCOMPRESSION_GZIP, KCOMPRESSION_SNAPPY,
                              KCOMPRESSION_LZ4, KCOMPRESSION_ZSTD};
    size_t plain_len;
    uint8_t *plain = compressed_batch(KCOMPRESSION_GZIP, 5, &plain_len);
    uint8_t *ref;
    size_t ref_len;
    ASSERT_EQ(kbatch_recompress(plain, plain_len, KCOMPRESSION_NONE, 1 << 20, &ref, &ref_len), 0);
    mem_free(plain);
    for (size_t f = 0; f < 5; f++) {
        uint8_t *from;
        size_t from_len;
        ASSERT_EQ(kbatch_recompress(ref, ref_len, all[f], 1 << 20, &from, &from_len), 0);
        for (size_t t = 0; t < 5; t++) {
            uint8_t *to;
            size_t to_len;
            ASSERT_EQ(kbatch_recompress(from, from_len, all[t], 1 << 20, &to, &to_len), 0);
            ASSERT_EQ(kbatch_validate(to, to_len, true, true, 1 << 20), 0);
            struct kbatch_header a, b;
            kbatch_parse_header(ref, &a);
            kbatch_parse_header(to, &b);
            ASSERT_EQ(kbatch_compression(&b), all[t]);
            ASSERT_EQ(b.batch_length, (int32_t)(to_len - KBATCH_LOG_OVERHEAD));
            /* everything after the attributes up to the records is the original's */
            ASSERT_MEMEQ(to + KBATCH_OFF_ATTRIBUTES + 2, ref + KBATCH_OFF_ATTRIBUTES + 2,
                         KBATCH_HEADER_SIZE - KBATCH_OFF_ATTRIBUTES - 2);
            ASSERT_MEMEQ(to, ref, KBATCH_OFF_LENGTH); /* base offset */
            ASSERT_EQ(a.records_count, b.records_count);
            uint8_t *back;
            size_t back_len;
            ASSERT_EQ(kbatch_recompress(to, to_len, KCOMPRESSION_NONE, 1 << 20, &back, &back_len), 0);
            ASSERT_EQ(back_len, ref_len);
            ASSERT_MEMEQ(back, ref, ref_len);
            mem_free(back);
            mem_free(to);
        }
        mem_free(from);
    }
    uint8_t *x;
    size_t xl;
    ASSERT_EQ(kbatch_recompress(ref, ref_len, 5, 1 << 20, &x, &xl), -ERR_UNSUPPORTED);
    uint8_t *z;
    size_t zl;
    ASSERT_EQ(kbatch_recompress(ref, ref_len, KCOMPRESSION_ZSTD, 1 << 20, &z, &zl), 0);
    ASSERT_EQ(kbatch_recompress(z, zl, KCOMPRESSION_LZ4, 8, &x, &xl), -ERR_TOO_LARGE);
    mem_free(z);
    mem_free(ref);
}
