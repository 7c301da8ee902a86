/* InitProducerId golden bytes, spelled out by hand from InitProducerIdRequest/Response.json
 * (the round-trip, prefix and tagged-field tests cover it through kmsg_testenc.c). */
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/api.h"
#include "kafka/msg_producer.h"
#include "test.h"

/* clang-format off */
#define I16(x) (uint8_t)(((uint16_t)(x) >> 8) & 0xff), (uint8_t)((uint16_t)(x) & 0xff)
#define I32(x)                                                                                     \
    (uint8_t)(((uint32_t)(x) >> 24) & 0xff), (uint8_t)(((uint32_t)(x) >> 16) & 0xff),              \
        (uint8_t)(((uint32_t)(x) >> 8) & 0xff), (uint8_t)((uint32_t)(x) & 0xff)
#define I64(x) I32((uint64_t)(x) >> 32), I32((uint64_t)(x) & 0xffffffffu)
/* clang-format on */

static void encodes_to(int16_t v, const struct init_producer_id_resp *resp, const uint8_t *want,
                       size_t want_len)
{
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    kmsg_encode_init_producer_id(&w, v, resp);
    size_t len;
    uint8_t *got = iobuf_flatten(&b, &len);
    ASSERT_EQ(len, want_len);
    ASSERT_MEMEQ(got, want, len);
    mem_free(got);
    iobuf_destroy(&b);
}

TEST(kmsg_init_producer_id_is_advertised_from_v0)
{
    const struct kafka_api_info *a = kafka_api_find(KAPI_INIT_PRODUCER_ID);
    ASSERT(a != NULL);
    ASSERT_EQ(a->key, 22);
    ASSERT_EQ(a->min_version, 0); /* librdkafka 2.0.2 enables idempotence only then */
    ASSERT_EQ(a->max_version, 5);
    ASSERT(!kafka_api_flexible(KAPI_INIT_PRODUCER_ID, 1));
    ASSERT(kafka_api_flexible(KAPI_INIT_PRODUCER_ID, 2));
}

TEST(kmsg_init_producer_id_golden_requests)
{
    struct arena a;
    arena_init(&a, 0);
    struct kreader r;
    struct init_producer_id_req q;

    /* v0: TransactionalId null (int16 -1), TransactionTimeoutMs */
    static const uint8_t v0[] = {I16(-1), I32(-1)};
    kr_init(&r, v0, sizeof(v0));
    ASSERT_EQ(kmsg_decode_init_producer_id(&r, 0, &a, &q), 0);
    ASSERT_EQ(q.transactional_id.len, -1);
    ASSERT_EQ(q.transaction_timeout_ms, -1);
    ASSERT_EQ(q.producer_id, -1); /* defaults of the v3+ fields */
    ASSERT_EQ(q.producer_epoch, -1);
    ASSERT_EQ(kr_left(&r), 0);

    /* v4 (flexible): compact nullable string "tx" (len+1), timeout, ProducerId, ProducerEpoch,
     * then a tagged-field section with one unknown field (tag 7, 2 bytes) */
    /* clang-format off */
    static const uint8_t v4[] = {0x03, 't', 'x', I32(60000), I64(1234567890123LL), I16(9),
                                 0x01, 0x07, 0x02, 0xaa, 0xbb};
    /* clang-format on */
    kr_init(&r, v4, sizeof(v4));
    ASSERT_EQ(kmsg_decode_init_producer_id(&r, 4, &a, &q), 0);
    ASSERT(kstr_eq(q.transactional_id, "tx"));
    ASSERT_EQ(q.transaction_timeout_ms, 60000);
    ASSERT_EQ(q.producer_id, 1234567890123LL);
    ASSERT_EQ(q.producer_epoch, 9);
    ASSERT_EQ(kr_left(&r), 0);

    /* v2 (flexible, no producer fields): compact null string is 0 */
    static const uint8_t v2[] = {0x00, I32(100), 0x00};
    kr_init(&r, v2, sizeof(v2));
    ASSERT_EQ(kmsg_decode_init_producer_id(&r, 2, &a, &q), 0);
    ASSERT_EQ(q.transactional_id.len, -1);
    ASSERT_EQ(q.producer_id, -1);
    ASSERT_EQ(kr_left(&r), 0);

    /* v3 cut before ProducerEpoch */
    static const uint8_t cut[] = {0x00, I32(100), I64(5)};
    kr_init(&r, cut, sizeof(cut));
    ASSERT_EQ(kmsg_decode_init_producer_id(&r, 3, &a, &q), -ERR_CORRUPT);
    /* out of range */
    kr_init(&r, v0, sizeof(v0));
    ASSERT_EQ(kmsg_decode_init_producer_id(&r, 6, &a, &q), -ERR_UNSUPPORTED);
    arena_destroy(&a);
}

TEST(kmsg_init_producer_id_golden_responses)
{
    struct init_producer_id_resp resp = {0, 0, 1001, 3};
    static const uint8_t v1[] = {I32(0), I16(0), I64(1001), I16(3)};
    encodes_to(0, &resp, v1, sizeof(v1));
    encodes_to(1, &resp, v1, sizeof(v1));
    static const uint8_t v2[] = {I32(0), I16(0), I64(1001), I16(3), 0x00};
    encodes_to(2, &resp, v2, sizeof(v2));
    encodes_to(4, &resp, v2, sizeof(v2));
    struct init_producer_id_resp err = {0, 16, -1, -1};
    static const uint8_t e3[] = {I32(0), I16(16), I64(-1), I16(-1), 0x00};
    encodes_to(3, &err, e3, sizeof(e3));
}
