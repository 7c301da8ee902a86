/* Hostile input: truncation, absurd counts, garbage compact lengths. Every decode here must
 * fail with -ERR_CORRUPT, read nothing out of bounds (each input sits in a heap buffer of
 * exactly its size, so ASan sees a one-byte over-read) and allocate nothing large. */
#include "base/check.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/api.h"
#include "kmsg_testenc.h"
#include "test.h"

/* Decodes header + body of a complete request held in exactly len heap bytes. */
static int decode_request(const uint8_t *src, size_t len, struct arena *a)
{
    uint8_t *buf = mem_dup(src, len);
    struct kreader r;
    kr_init(&r, buf, len);
    struct kreq_header h;
    int rc = kmsg_decode_header(&r, &h);
    if (rc == 0) {
        union kmsg_any_req q;
        rc = tdecode_req(&r, h.api_key, h.api_version, a, &q);
    }
    mem_free(buf);
    return rc;
}

static void every_prefix_fails(int16_t key, int16_t v, int variant)
{
    size_t len;
    uint8_t *full = tbuild_request(key, v, variant, &len);
    struct arena a;
    arena_init(&a, 0);
    if (decode_request(full, len, &a) != 0)
        test_fail(__FILE__, __LINE__, "%s v%d: the whole request does not decode",
                  kafka_api_name(key), v);
    for (size_t n = 0; n < len; n++) {
        arena_reset(&a);
        int rc = decode_request(full, n, &a);
        if (rc != -ERR_CORRUPT)
            test_fail(__FILE__, __LINE__, "%s v%d variant %d: prefix %zu/%zu gives %d",
                      kafka_api_name(key), v, variant, n, len, rc);
    }
    arena_destroy(&a);
    mem_free(full);
}

TEST(kmsg_every_strict_prefix_of_every_request_is_corrupt)
{
    int n;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    for (int i = 0; i < n; i++)
        for (int16_t v = apis[i].min_version; v <= apis[i].max_version; v++)
            for (int var = 0; var < TSAMPLE_VARIANTS; var++) {
                every_prefix_fails(apis[i].key, v, var);
                tenc_unknown_tags = true;
                every_prefix_fails(apis[i].key, v, var);
                tenc_unknown_tags = false;
            }
}

/* Encodes the body of sample (key, v, variant 0) with the corruption hook set. */
static uint8_t *corrupted_body(int16_t key, int16_t v, int mode, int at, size_t *len, int *fields)
{
    struct arena a;
    arena_init(&a, 0);
    union kmsg_any_req q;
    tsample_req(key, v, 0, &a, &q);
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    tenc_corrupt = (struct tcorrupt){mode, at, 0};
    tenc_req(&w, key, v, &q);
    *fields = tenc_corrupt.seen;
    tenc_corrupt = (struct tcorrupt){0};
    uint8_t *out = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    arena_destroy(&a);
    return out;
}

static size_t decode_body(int16_t key, int16_t v, const uint8_t *src, size_t len, int *rc)
{
    uint8_t *buf = mem_dup(src, len);
    struct arena a;
    arena_init(&a, 0);
    struct kreader r;
    kr_init(&r, buf, len);
    union kmsg_any_req q;
    *rc = tdecode_req(&r, key, v, &a, &q);
    size_t allocated = a.allocated;
    arena_destroy(&a);
    mem_free(buf);
    return allocated;
}

/* Corrupts, one at a time, every length and count field of every sample request. */
static void each_length_field_corrupted(int mode)
{
    int n, tried = 0;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    for (int i = 0; i < n; i++) {
        for (int16_t v = apis[i].min_version; v <= apis[i].max_version; v++) {
            int16_t key = apis[i].key;
            if (mode == TC_VARINT_OVERFLOW && !kafka_api_flexible(key, v))
                continue;
            size_t len;
            int fields, rc;
            uint8_t *good = corrupted_body(key, v, TC_NONE, 0, &len, &fields);
            size_t good_alloc = decode_body(key, v, good, len, &rc);
            ASSERT_EQ(rc, 0);
            mem_free(good);
            for (int at = 0; at < fields; at++) {
                int unused;
                uint8_t *bad = corrupted_body(key, v, mode, at, &len, &unused);
                size_t bad_alloc = decode_body(key, v, bad, len, &rc);
                if (rc != -ERR_CORRUPT)
                    test_fail(__FILE__, __LINE__, "%s v%d: field %d corrupted gives %d",
                              kafka_api_name(key), v, at, rc);
                /* A rejected count allocates nothing: at most what the valid message needed
                 * before that point. */
                ASSERT_CMP(bad_alloc, <=, good_alloc);
                mem_free(bad);
                tried++;
            }
        }
    }
    ASSERT_CMP(tried, >=, mode == TC_HUGE ? 200 : 6);
}

TEST(kmsg_huge_counts_and_lengths_fail_without_allocating)
{
    each_length_field_corrupted(TC_HUGE);
}

TEST(kmsg_compact_lengths_that_overflow_uvarint_fail)
{
    each_length_field_corrupted(TC_VARINT_OVERFLOW);
}

static bool first_field_is_array(int16_t key)
{
    switch (key) {
    case KAPI_METADATA:
    case KAPI_CREATE_TOPICS:
    case KAPI_DELETE_TOPICS:
    case KAPI_CREATE_PARTITIONS:
    case KAPI_DESCRIBE_CONFIGS:
    case KAPI_ALTER_CONFIGS:
    case KAPI_DELETE_RECORDS:
    case KAPI_DESCRIBE_GROUPS:
    case KAPI_DELETE_GROUPS:
    case KAPI_INCREMENTAL_ALTER_CONFIGS:
    case KAPI_DESCRIBE_LOG_DIRS:
        return true;
    default:
        return false; /* a string, an integer, or nothing (ListGroups before v4) */
    }
}

/* 2^31-1 topics followed by a megabyte of zeros: the count is bounded by the bytes left times
 * the smallest topic, so nothing is allocated. */
TEST(kmsg_count_2_31_with_a_large_body_does_not_allocate)
{
    size_t len = 1 << 20;
    uint8_t *buf = mem_calloc(1, len);
    buf[0] = 0x7f;
    buf[1] = buf[2] = buf[3] = 0xff;
    struct arena a;
    arena_init(&a, 0);
    int n;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    for (int i = 0; i < n; i++) {
        int16_t key = apis[i].key, v = apis[i].max_version;
        if (!first_field_is_array(key))
            continue;
        while (v > apis[i].min_version && kafka_api_flexible(key, v))
            v--; /* the highest version with an int32 count */
        if (kafka_api_flexible(key, v))
            continue;
        struct kreader r;
        kr_init(&r, buf, len);
        union kmsg_any_req q;
        ASSERT_EQ(tdecode_req(&r, key, v, &a, &q), -ERR_CORRUPT);
        ASSERT_CMP(a.allocated, <, 4096);
        arena_reset(&a);
    }
    /* Produce v7: transactional_id null, acks, timeout, then the count */
    static const uint8_t head[] = {0xff, 0xff, 0, 1, 0, 0, 0, 5, 0x7f, 0xff, 0xff, 0xff};
    memcpy(buf, head, sizeof(head));
    struct kreader r;
    kr_init(&r, buf, len);
    union kmsg_any_req q;
    ASSERT_EQ(tdecode_req(&r, KAPI_PRODUCE, 7, &a, &q), -ERR_CORRUPT);
    ASSERT_CMP(a.allocated, <, 4096);
    arena_destroy(&a);
    mem_free(buf);
}

/* The wire primitives the decoders rely on. */
TEST(kmsg_wire_rejects_garbage_compact_lengths)
{
    struct kreader r;
    /* a uvarint longer than 5 bytes, and one whose fifth byte overflows 32 bits */
    static const uint8_t too_long[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    static const uint8_t overflow[] = {0xff, 0xff, 0xff, 0xff, 0x10};
    static const uint8_t unterminated[] = {0x80, 0x80};
    const uint8_t *bad[] = {too_long, overflow, unterminated};
    size_t bad_len[] = {sizeof(too_long), sizeof(overflow), sizeof(unterminated)};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        kr_init(&r, bad[i], bad_len[i]);
        (void)kr_str(&r, true);
        ASSERT(!kr_ok(&r));
        kr_init(&r, bad[i], bad_len[i]);
        ASSERT_EQ(kr_array(&r, true, 1), -1);
        ASSERT(!kr_ok(&r));
        kr_init(&r, bad[i], bad_len[i]);
        kr_tags(&r, true);
        ASSERT(!kr_ok(&r));
    }
    /* lengths beyond the end */
    static const uint8_t str_past[] = {0x05, 'a', 'b'}; /* compact: 4 bytes, 2 left */
    kr_init(&r, str_past, sizeof(str_past));
    (void)kr_str(&r, true);
    ASSERT(!kr_ok(&r));
    static const uint8_t bytes_past[] = {0x00, 0x00, 0x00, 0x03, 'a'};
    kr_init(&r, bytes_past, sizeof(bytes_past));
    (void)kr_bytes(&r, false);
    ASSERT(!kr_ok(&r));
    static const uint8_t str_neg[] = {0xff, 0xfe}; /* int16 length -2 */
    kr_init(&r, str_neg, sizeof(str_neg));
    (void)kr_str(&r, false);
    ASSERT(!kr_ok(&r));
    static const uint8_t arr_neg[] = {0xff, 0xff, 0xff, 0xfe}; /* int32 count -2 */
    kr_init(&r, arr_neg, sizeof(arr_neg));
    ASSERT_EQ(kr_array(&r, false, 1), -1);
    ASSERT(!kr_ok(&r));
    /* compact count 0xffffffff - 1 = 2^32-2 does not fit an int32 */
    static const uint8_t arr_big[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    kr_init(&r, arr_big, sizeof(arr_big));
    ASSERT_EQ(kr_array(&r, true, 1), -1);
    ASSERT(!kr_ok(&r));
    /* tagged fields: a size past the end, a count past what could fit */
    static const uint8_t tag_past[] = {0x01, 0x00, 0x09, 'x'};
    kr_init(&r, tag_past, sizeof(tag_past));
    kr_tags(&r, true);
    ASSERT(!kr_ok(&r));
    static const uint8_t tag_many[] = {0x7f, 0x00, 0x00};
    kr_init(&r, tag_many, sizeof(tag_many));
    kr_tags(&r, true);
    ASSERT(!kr_ok(&r));
}

/* Nulls where the schema forbids them. */
TEST(kmsg_nulls_in_non_nullable_fields_are_corrupt)
{
    struct arena a;
    arena_init(&a, 0);
    union kmsg_any_req q;
    struct kreader r;
    /* DeleteTopics v4: compact array with one null name */
    static const uint8_t dt[] = {0x02, 0x00, 0, 0, 0, 1, 0x00};
    kr_init(&r, dt, sizeof(dt));
    ASSERT_EQ(tdecode_req(&r, KAPI_DELETE_TOPICS, 4, &a, &q), -ERR_CORRUPT);
    /* DeleteTopics v4: a null array */
    static const uint8_t dt_null[] = {0x00, 0, 0, 0, 1, 0x00};
    kr_init(&r, dt_null, sizeof(dt_null));
    ASSERT_EQ(tdecode_req(&r, KAPI_DELETE_TOPICS, 4, &a, &q), -ERR_CORRUPT);
    /* FindCoordinator v3: null key */
    static const uint8_t fc[] = {0x00, 0x00, 0x00};
    kr_init(&r, fc, sizeof(fc));
    ASSERT_EQ(tdecode_req(&r, KAPI_FIND_COORDINATOR, 3, &a, &q), -ERR_CORRUPT);
    /* Produce v3: null topic name */
    static const uint8_t pr[] = {0xff, 0xff, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 0, 0, 0, 0};
    kr_init(&r, pr, sizeof(pr));
    ASSERT_EQ(tdecode_req(&r, KAPI_PRODUCE, 3, &a, &q), -ERR_CORRUPT);
    /* ...but a null transactional id and null records are fine */
    static const uint8_t pr_ok[] = {0xff, 0xff, 0, 1, 0, 0, 0, 1, 0, 0,    0,    1,    0,   1,
                                    't',  0,    0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
    kr_init(&r, pr_ok, sizeof(pr_ok));
    ASSERT_EQ(tdecode_req(&r, KAPI_PRODUCE, 3, &a, &q), 0);
    ASSERT_EQ(q.produce.topics[0].partitions[0].records.len, -1);
    /* Fetch v11: null rack_id */
    static const uint8_t fe[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 0,    0,    1,
                                 0,    0,    0,    1,    0, 0, 0, 0, 0, 0xff, 0xff, 0xff,
                                 0xff, 0,    0,    0,    0, 0, 0, 0, 0, 0xff, 0xff};
    kr_init(&r, fe, sizeof(fe));
    ASSERT_EQ(tdecode_req(&r, KAPI_FETCH, 11, &a, &q), -ERR_CORRUPT);
    uint8_t fe_ok[sizeof(fe)];
    memcpy(fe_ok, fe, sizeof(fe));
    fe_ok[sizeof(fe) - 2] = fe_ok[sizeof(fe) - 1] = 0; /* rack_id "" */
    kr_init(&r, fe_ok, sizeof(fe_ok));
    ASSERT_EQ(tdecode_req(&r, KAPI_FETCH, 11, &a, &q), 0);
    ASSERT_EQ(q.fetch.rack_id.len, 0);
    arena_destroy(&a);
}
