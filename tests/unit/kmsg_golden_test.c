/* Golden bytes: each expected byte sequence is spelled out by hand from Kafka's JSON message
 * definitions (field order, versions, nullable/compact forms), not produced by the code under
 * test. Responses: kmsg_encode_* must produce exactly these bytes. Requests: kmsg_decode_* must
 * read these bytes into the expected fields. */
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/api.h"
#include "kafka/msg.h"
#include "test.h"

/* The byte arrays below are laid out by field, one schema field per comment. */
/* clang-format off */

#define I8(x) (uint8_t)(x)
#define I16(x) (uint8_t)(((uint16_t)(x) >> 8) & 0xff), (uint8_t)((uint16_t)(x) & 0xff)
#define I32(x)                                                                                     \
    (uint8_t)(((uint32_t)(x) >> 24) & 0xff), (uint8_t)(((uint32_t)(x) >> 16) & 0xff),              \
        (uint8_t)(((uint32_t)(x) >> 8) & 0xff), (uint8_t)((uint32_t)(x) & 0xff)
#define I64(x) I32((uint64_t)(x) >> 32), I32((uint64_t)(x) & 0xffffffffu)
#define TAGS0 0x00 /* empty tagged-field section */

/* Runs an encoder into a fresh buffer and compares with want. */
#define ENCODES_TO(call, want)                                                                     \
    do {                                                                                           \
        struct iobuf b_;                                                                           \
        iobuf_init(&b_);                                                                           \
        struct kwriter w_ = {&b_};                                                                 \
        struct kwriter *w = &w_;                                                                   \
        call;                                                                                      \
        size_t len_;                                                                               \
        uint8_t *got_ = iobuf_flatten(&b_, &len_);                                                 \
        expect_bytes(__LINE__, got_, len_, want, sizeof(want));                                    \
        mem_free(got_);                                                                            \
        iobuf_destroy(&b_);                                                                        \
    } while (0)

static void expect_bytes(int line, const uint8_t *got, size_t got_len, const uint8_t *want,
                         size_t want_len)
{
    size_t n = got_len < want_len ? got_len : want_len;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i])
            test_fail(__FILE__, line, "byte %zu: got 0x%02x, want 0x%02x", i, got[i], want[i]);
    if (got_len != want_len)
        test_fail(__FILE__, line, "length: got %zu, want %zu", got_len, want_len);
}

static void expect_str(struct kstr s, const char *want)
{
    if (!want) {
        ASSERT_EQ(s.len, -1);
        return;
    }
    ASSERT(kstr_eq(s, want));
}

/* ---- request header ---- */

TEST(kmsg_golden_request_header_v1_and_v2)
{
    /* ApiVersions v0: header v1, client_id "kcat" */
    static const uint8_t v1[] = {I16(18), I16(0), I32(7), I16(4), 'k', 'c', 'a', 't'};
    struct kreader r;
    struct kreq_header h;
    kr_init(&r, v1, sizeof(v1));
    ASSERT_EQ(kmsg_decode_header(&r, &h), 0);
    ASSERT_EQ(h.api_key, 18);
    ASSERT_EQ(h.api_version, 0);
    ASSERT_EQ(h.correlation_id, 7);
    expect_str(h.client_id, "kcat");
    ASSERT(!h.flexible);
    ASSERT_EQ(kr_left(&r), 0);

    /* FindCoordinator v3: header v2, null client_id (int16 -1, not compact), then tags with one
     * unknown field */
    static const uint8_t v2[] = {I16(10), I16(3), I32(-2), I16(-1), 0x01, 0x05, 0x02, 'h', 'i',
                                 0xee};
    kr_init(&r, v2, sizeof(v2));
    ASSERT_EQ(kmsg_decode_header(&r, &h), 0);
    ASSERT_EQ(h.api_key, 10);
    ASSERT_EQ(h.api_version, 3);
    ASSERT_EQ(h.correlation_id, -2);
    expect_str(h.client_id, NULL);
    ASSERT(h.flexible);
    ASSERT_EQ(kr_left(&r), 1); /* the body starts after the tags */

    /* ApiVersions v5 (above our range): read as v1 so the broker can answer with a v0 body;
     * the client's tag byte stays in the unread body. v4, in range, is header v2. */
    static const uint8_t v5[] = {I16(18), I16(5), I32(1), I16(1), 'x', TAGS0};
    kr_init(&r, v5, sizeof(v5));
    ASSERT_EQ(kmsg_decode_header(&r, &h), 0);
    ASSERT(!h.flexible);
    ASSERT_EQ(kr_left(&r), 1);
    static const uint8_t v4[] = {I16(18), I16(4), I32(1), I16(1), 'x', TAGS0};
    kr_init(&r, v4, sizeof(v4));
    ASSERT_EQ(kmsg_decode_header(&r, &h), 0);
    ASSERT(h.flexible);
    ASSERT_EQ(kr_left(&r), 0);

    /* An unknown key is read as v1 as well. */
    static const uint8_t unk[] = {I16(1000), I16(12), I32(1), I16(0)};
    kr_init(&r, unk, sizeof(unk));
    ASSERT_EQ(kmsg_decode_header(&r, &h), 0);
    ASSERT_EQ(h.api_key, 1000);
    ASSERT(!h.flexible);

    /* Metadata v13 is out of our range but flexible per its schema: header v2. */
    static const uint8_t md12[] = {I16(3), I16(13), I32(1), I16(0), TAGS0};
    kr_init(&r, md12, sizeof(md12));
    ASSERT_EQ(kmsg_decode_header(&r, &h), 0);
    ASSERT(h.flexible);
    ASSERT_EQ(kr_left(&r), 0);
}

TEST(kmsg_golden_response_header_v0_v1_and_api_versions_exception)
{
    struct kreq_header h = {.api_key = 20, .api_version = 4, .correlation_id = 0x01020304,
                            .flexible = true};
    static const uint8_t v1[] = {I32(0x01020304), TAGS0};
    ENCODES_TO(kmsg_encode_resp_header(w, &h), v1);

    h.api_version = 3;
    h.flexible = false;
    static const uint8_t v0[] = {I32(0x01020304)};
    ENCODES_TO(kmsg_encode_resp_header(w, &h), v0);

    /* ApiVersions v3 is a flexible request, but its response header is v0. */
    h = (struct kreq_header){.api_key = 18, .api_version = 3, .correlation_id = 9, .flexible = true};
    static const uint8_t av[] = {I32(9)};
    ENCODES_TO(kmsg_encode_resp_header(w, &h), av);
}

/* ---- ApiVersions ---- */

static const struct api_versions_key av_keys[] = {{0, 0, 7}, {18, 0, 3}};

TEST(kmsg_golden_api_versions_v0)
{
    struct arena a;
    arena_init(&a, 0);
    struct api_versions_req q;
    struct kreader r;
    kr_init(&r, "", 0); /* v0 body is empty */
    ASSERT_EQ(kmsg_decode_api_versions(&r, 0, &a, &q), 0);
    ASSERT_EQ(q.client_software_name.len, -1);

    struct api_versions_resp resp = {0, (struct api_versions_key *)av_keys, 2, 77};
    static const uint8_t want[] = {
        I16(0),                    /* error_code */
        I32(2),                    /* api_keys */
        I16(0),  I16(0), I16(7),   /* Produce 0-7 */
        I16(18), I16(0), I16(3),   /* ApiVersions 0-3 */
                                   /* no throttle_time_ms in v0 */
    };
    ENCODES_TO(kmsg_encode_api_versions(w, 0, &resp), want);

    /* The KIP-511 answer: error 35 in a v0 body. */
    resp.error_code = 35;
    static const uint8_t unsupported[] = {I16(35), I32(2), I16(0),  I16(0),
                                          I16(7),  I16(18), I16(0), I16(3)};
    ENCODES_TO(kmsg_encode_api_versions(w, 0, &resp), unsupported);
    arena_destroy(&a);
}

TEST(kmsg_golden_api_versions_v3)
{
    /* What librdkafka 2.0.2 sends: compact strings, then tags. */
    static const uint8_t req[] = {
        0x0b, 'l', 'i', 'b', 'r', 'd', 'k', 'a', 'f', 'k', 'a', /* client_software_name */
        0x06, '2', '.', '0', '.', '2',                          /* client_software_version */
        TAGS0,
    };
    struct arena a;
    arena_init(&a, 0);
    struct api_versions_req q;
    struct kreader r;
    kr_init(&r, req, sizeof(req));
    ASSERT_EQ(kmsg_decode_api_versions(&r, 3, &a, &q), 0);
    expect_str(q.client_software_name, "librdkafka");
    expect_str(q.client_software_version, "2.0.2");
    ASSERT_EQ(kr_left(&r), 0);

    struct api_versions_resp resp = {0, (struct api_versions_key *)av_keys, 2, 77};
    static const uint8_t want[] = {
        I16(0),                          /* error_code */
        0x03,                            /* compact array: 2 + 1 */
        I16(0),  I16(0), I16(7), TAGS0,  /* Produce 0-7 */
        I16(18), I16(0), I16(3), TAGS0,  /* ApiVersions 0-3 */
        I32(77),                         /* throttle_time_ms */
        TAGS0,                           /* no SupportedFeatures etc. */
    };
    ENCODES_TO(kmsg_encode_api_versions(w, 3, &resp), want);
    arena_destroy(&a);
}

/* ---- Metadata responses ---- */

static int32_t md_replicas[] = {1, 2};
static int32_t md_isr[] = {1};
static int32_t md_offline[] = {2};

static struct metadata_resp md_sample(struct metadata_broker *brokers, struct metadata_topic *t,
                                      struct metadata_partition *p)
{
    brokers[0] = (struct metadata_broker){1, kstr_c("h1"), 9092, kstr_c("r")};
    *p = (struct metadata_partition){.error_code = 0,
                                     .partition_index = 0,
                                     .leader_id = 1,
                                     .leader_epoch = 5,
                                     .replica_nodes = md_replicas,
                                     .n_replica_nodes = 2,
                                     .isr_nodes = md_isr,
                                     .n_isr_nodes = 1,
                                     .offline_replicas = md_offline,
                                     .n_offline_replicas = 1};
    *t = (struct metadata_topic){.error_code = 0,
                                 .name = kstr_c("t"),
                                 .is_internal = false,
                                 .partitions = p,
                                 .n_partitions = 1,
                                 .topic_authorized_operations = 0x0f};
    return (struct metadata_resp){.throttle_time_ms = 3,
                                  .brokers = brokers,
                                  .n_brokers = 1,
                                  .cluster_id = kstr_c("c"),
                                  .controller_id = 1,
                                  .topics = t,
                                  .n_topics = 1,
                                  .cluster_authorized_operations = INT32_MIN};
}

TEST(kmsg_golden_metadata_v0_response)
{
    struct metadata_broker b[1];
    struct metadata_topic t;
    struct metadata_partition p;
    struct metadata_resp resp = md_sample(b, &t, &p);
    static const uint8_t want[] = {
        I32(1),                                   /* brokers */
        I32(1), I16(2), 'h', '1', I32(9092),      /* node_id, host, port */
        I32(1),                                   /* topics */
        I16(0), I16(1), 't',                      /* error_code, name */
        I32(1),                                   /* partitions */
        I16(0), I32(0), I32(1),                   /* error_code, partition_index, leader_id */
        I32(2), I32(1), I32(2),                   /* replica_nodes */
        I32(1), I32(1),                           /* isr_nodes */
    };
    ENCODES_TO(kmsg_encode_metadata(w, 0, &resp), want);
}

TEST(kmsg_golden_metadata_v1_response)
{
    struct metadata_broker b[1];
    struct metadata_topic t;
    struct metadata_partition p;
    struct metadata_resp resp = md_sample(b, &t, &p);
    t.is_internal = true;
    static const uint8_t want[] = {
        I32(1),                                        /* brokers */
        I32(1), I16(2), 'h', '1', I32(9092), I16(1), 'r', /* ..., rack (v1+) */
        I32(1),                                        /* controller_id (v1+) */
        I32(1),                                        /* topics */
        I16(0), I16(1), 't', I8(1),                    /* error_code, name, is_internal (v1+) */
        I32(1),                                        /* partitions */
        I16(0), I32(0), I32(1),
        I32(2), I32(1), I32(2),
        I32(1), I32(1),
    };
    ENCODES_TO(kmsg_encode_metadata(w, 1, &resp), want);

    /* a null rack */
    b[0].rack = KSTR_NULL;
    static const uint8_t want_null_rack[] = {
        I32(1), I32(1), I16(2), 'h', '1', I32(9092), I16(-1),
        I32(1), I32(1), I16(0), I16(1), 't', I8(1), I32(1),
        I16(0), I32(0), I32(1), I32(2), I32(1), I32(2), I32(1), I32(1),
    };
    ENCODES_TO(kmsg_encode_metadata(w, 1, &resp), want_null_rack);
}

TEST(kmsg_golden_metadata_v8_response)
{
    struct metadata_broker b[1];
    struct metadata_topic t;
    struct metadata_partition p;
    struct metadata_resp resp = md_sample(b, &t, &p);
    static const uint8_t want[] = {
        I32(3),                                        /* throttle_time_ms (v3+) */
        I32(1),                                        /* brokers */
        I32(1), I16(2), 'h', '1', I32(9092), I16(1), 'r',
        I16(1), 'c',                                   /* cluster_id (v2+) */
        I32(1),                                        /* controller_id */
        I32(1),                                        /* topics */
        I16(0), I16(1), 't', I8(0),
        I32(1),                                        /* partitions */
        I16(0), I32(0), I32(1), I32(5),                /* ..., leader_epoch (v7+) */
        I32(2), I32(1), I32(2),                        /* replica_nodes */
        I32(1), I32(1),                                /* isr_nodes */
        I32(1), I32(2),                                /* offline_replicas (v5+) */
        I32(0x0f),                                     /* topic_authorized_operations (v8+) */
        I32(INT32_MIN),                                /* cluster_authorized_operations (v8) */
    };
    ENCODES_TO(kmsg_encode_metadata(w, 8, &resp), want);
}

TEST(kmsg_golden_metadata_requests)
{
    struct arena a;
    arena_init(&a, 0);
    struct metadata_req q;
    struct kreader r;

    /* v0: an empty array means all topics */
    static const uint8_t v0_all[] = {I32(0)};
    kr_init(&r, v0_all, sizeof(v0_all));
    ASSERT_EQ(kmsg_decode_metadata(&r, 0, &a, &q), 0);
    ASSERT_EQ(q.n_topics, -1);
    ASSERT(q.allow_auto_topic_creation);

    /* v1: null means all, empty means none */
    static const uint8_t v1_all[] = {I32(-1)};
    kr_init(&r, v1_all, sizeof(v1_all));
    ASSERT_EQ(kmsg_decode_metadata(&r, 1, &a, &q), 0);
    ASSERT_EQ(q.n_topics, -1);
    static const uint8_t v1_none[] = {I32(0)};
    kr_init(&r, v1_none, sizeof(v1_none));
    ASSERT_EQ(kmsg_decode_metadata(&r, 1, &a, &q), 0);
    ASSERT_EQ(q.n_topics, 0);

    /* v0 forbids null */
    kr_init(&r, v1_all, sizeof(v1_all));
    ASSERT_EQ(kmsg_decode_metadata(&r, 0, &a, &q), -ERR_CORRUPT);

    /* v8 */
    static const uint8_t v8[] = {I32(1), I16(3), 'a', 'b', 'c', I8(0), I8(1), I8(0)};
    kr_init(&r, v8, sizeof(v8));
    ASSERT_EQ(kmsg_decode_metadata(&r, 8, &a, &q), 0);
    ASSERT_EQ(q.n_topics, 1);
    expect_str(q.topics[0], "abc");
    ASSERT(!q.allow_auto_topic_creation);
    ASSERT(q.include_cluster_authorized_operations);
    ASSERT(!q.include_topic_authorized_operations);
    arena_destroy(&a);
}

/* ---- Produce requests ---- */

TEST(kmsg_golden_produce_v3_and_v7_requests)
{
    static const uint8_t req[] = {
        I16(-1),                  /* transactional_id: null */
        I16(-1),                  /* acks */
        I32(1500),                /* timeout_ms */
        I32(1),                   /* topic_data */
        I16(2), 't', '1',         /* name */
        I32(2),                   /* partition_data */
        I32(0), I32(4), 0xde, 0xad, 0xbe, 0xef, /* index, records */
        I32(5), I32(-1),          /* index, records: null */
    };
    for (int16_t v = 3; v <= 7; v += 4) {
        struct arena a;
        arena_init(&a, 0);
        struct produce_req q;
        struct kreader r;
        kr_init(&r, req, sizeof(req));
        ASSERT_EQ(kmsg_decode_produce(&r, v, &a, &q), 0);
        ASSERT_EQ(kr_left(&r), 0);
        ASSERT_EQ(q.transactional_id.len, -1);
        ASSERT_EQ(q.acks, -1);
        ASSERT_EQ(q.timeout_ms, 1500);
        ASSERT_EQ(q.n_topics, 1);
        expect_str(q.topics[0].name, "t1");
        ASSERT_EQ(q.topics[0].n_partitions, 2);
        ASSERT_EQ(q.topics[0].partitions[0].index, 0);
        ASSERT_EQ(q.topics[0].partitions[0].records.len, 4);
        ASSERT(q.topics[0].partitions[0].records.p == req + 28); /* a slice, not a copy */
        ASSERT_EQ(q.topics[0].partitions[1].index, 5);
        ASSERT_EQ(q.topics[0].partitions[1].records.len, -1);
        arena_destroy(&a);
    }

    /* with a transactional id */
    static const uint8_t txn[] = {I16(2), 'i', 'd', I16(1), I32(0), I32(0)};
    struct arena a;
    arena_init(&a, 0);
    struct produce_req q;
    struct kreader r;
    kr_init(&r, txn, sizeof(txn));
    ASSERT_EQ(kmsg_decode_produce(&r, 7, &a, &q), 0);
    expect_str(q.transactional_id, "id");
    ASSERT_EQ(q.acks, 1);
    ASSERT_EQ(q.n_topics, 0);
    arena_destroy(&a);
}

TEST(kmsg_golden_produce_v3_and_v7_responses)
{
    struct produce_resp_partition p = {.index = 2,
                                       .base_offset = 100,
                                       .log_append_time_ms = -1,
                                       .log_start_offset = 7,
                                       .error_message = KSTR_NULL};
    struct produce_resp_topic t = {kstr_c("t"), &p, 1};
    struct produce_resp resp = {&t, 1, 11};
    static const uint8_t v3[] = {
        I32(1), I16(1), 't', I32(1),
        I32(2), I16(0), I64(100), I64(-1), /* index, error, base_offset, log_append_time */
        I32(11),                           /* throttle_time_ms */
    };
    ENCODES_TO(kmsg_encode_produce(w, 3, &resp), v3);
    static const uint8_t v7[] = {
        I32(1), I16(1), 't', I32(1),
        I32(2), I16(0), I64(100), I64(-1), I64(7), /* ..., log_start_offset (v5+) */
        I32(11),
    };
    ENCODES_TO(kmsg_encode_produce(w, 7, &resp), v7);
}

/* ---- Fetch responses ---- */

static const uint8_t fetch_records[] = {0x00, 0x01, 0x02, 0x03, 0x04};

static void write_five(struct kwriter *w, void *data)
{
    kw_raw(w, data, sizeof(fetch_records));
}

TEST(kmsg_golden_fetch_v4_response_with_records)
{
    struct fetch_aborted_txn ab = {77, 3};
    struct fetch_resp_partition p = {.partition_index = 1,
                                     .error_code = 0,
                                     .high_watermark = 10,
                                     .last_stable_offset = 9,
                                     .log_start_offset = 2,
                                     .aborted = &ab,
                                     .n_aborted = 1,
                                     .preferred_read_replica = -1,
                                     .records_len = sizeof(fetch_records),
                                     .write_records = write_five,
                                     .records_data = (void *)fetch_records};
    struct fetch_resp_topic t = {.topic = kstr_c("t"), .partitions = &p, .n_partitions = 1};
    struct fetch_resp resp = {.throttle_time_ms = 4, .topics = &t, .n_topics = 1};
    static const uint8_t want[] = {
        I32(4),                             /* throttle_time_ms */
        I32(1), I16(1), 't',                /* responses, topic */
        I32(1),                             /* partitions */
        I32(1), I16(0), I64(10), I64(9),    /* index, error, high_watermark, last_stable_offset */
        I32(1), I64(77), I64(3),            /* aborted_transactions */
        I32(5), 0x00, 0x01, 0x02, 0x03, 0x04, /* records */
    };
    ENCODES_TO(kmsg_encode_fetch(w, 4, &resp), want);

    /* null aborted list, null records */
    p.n_aborted = -1;
    p.records_len = -1;
    p.write_records = NULL;
    static const uint8_t want_nulls[] = {I32(4), I32(1), I16(1), 't', I32(1), I32(1), I16(0),
                                         I64(10), I64(9), I32(-1), I32(-1)};
    ENCODES_TO(kmsg_encode_fetch(w, 4, &resp), want_nulls);
}

TEST(kmsg_golden_fetch_v11_response_with_records)
{
    struct fetch_resp_partition p = {.partition_index = 0,
                                     .error_code = 0,
                                     .high_watermark = 6,
                                     .last_stable_offset = 6,
                                     .log_start_offset = 0,
                                     .aborted = NULL,
                                     .n_aborted = 0,
                                     .preferred_read_replica = -1,
                                     .records_len = sizeof(fetch_records),
                                     .write_records = write_five,
                                     .records_data = (void *)fetch_records};
    struct fetch_resp_topic t = {.topic = kstr_c("ab"), .partitions = &p, .n_partitions = 1};
    struct fetch_resp resp = {.throttle_time_ms = 0, .error_code = 0, .session_id = 0,
                              .topics = &t, .n_topics = 1};
    static const uint8_t want[] = {
        I32(0),                             /* throttle_time_ms */
        I16(0), I32(0),                     /* error_code, session_id (v7+) */
        I32(1), I16(2), 'a', 'b',           /* responses, topic */
        I32(1),                             /* partitions */
        I32(0), I16(0), I64(6), I64(6),     /* index, error, high_watermark, last_stable_offset */
        I64(0),                             /* log_start_offset (v5+) */
        I32(0),                             /* aborted_transactions: empty */
        I32(-1),                            /* preferred_read_replica (v11+) */
        I32(5), 0x00, 0x01, 0x02, 0x03, 0x04, /* records */
    };
    ENCODES_TO(kmsg_encode_fetch(w, 11, &resp), want);
}

/* ---- DeleteTopics v4 (flexible) ---- */

TEST(kmsg_golden_delete_topics_v4)
{
    static const uint8_t req[] = {
        0x03,                  /* compact array: 2 + 1 */
        0x02, 'a',             /* compact string */
        0x03, 'b', 'c',
        I32(30000),            /* timeout_ms */
        TAGS0,
    };
    struct arena a;
    arena_init(&a, 0);
    struct delete_topics_req q;
    struct kreader r;
    kr_init(&r, req, sizeof(req));
    ASSERT_EQ(kmsg_decode_delete_topics(&r, 4, &a, &q), 0);
    ASSERT_EQ(kr_left(&r), 0);
    ASSERT_EQ(q.n_topic_names, 2);
    expect_str(q.topic_names[0], "a");
    expect_str(q.topic_names[1], "bc");
    ASSERT_EQ(q.timeout_ms, 30000);

    /* the same in v1 */
    static const uint8_t req1[] = {I32(2), I16(1), 'a', I16(2), 'b', 'c', I32(30000)};
    kr_init(&r, req1, sizeof(req1));
    ASSERT_EQ(kmsg_decode_delete_topics(&r, 1, &a, &q), 0);
    ASSERT_EQ(q.n_topic_names, 2);
    expect_str(q.topic_names[1], "bc");

    struct delete_topics_resp_topic res[] = {{.name = kstr_c("a"), .error_message = KSTR_NULL},
                                             {.name = kstr_c("bc"), .error_code = 3}};
    struct delete_topics_resp resp = {5, res, 2};
    static const uint8_t want[] = {
        I32(5),                      /* throttle_time_ms */
        0x03,                        /* compact array */
        0x02, 'a', I16(0), TAGS0,    /* name, error_code, tags */
        0x03, 'b', 'c', I16(3), TAGS0,
        TAGS0,
    };
    ENCODES_TO(kmsg_encode_delete_topics(w, 4, &resp), want);
    static const uint8_t want1[] = {I32(5), I32(2), I16(1), 'a', I16(0), I16(2), 'b', 'c', I16(3)};
    ENCODES_TO(kmsg_encode_delete_topics(w, 1, &resp), want1);
    arena_destroy(&a);
}

/* ---- FindCoordinator v3 (flexible) ---- */

TEST(kmsg_golden_find_coordinator_v3)
{
    static const uint8_t req[] = {0x04, 'g', 'r', 'p', I8(0), TAGS0};
    struct arena a;
    arena_init(&a, 0);
    struct find_coordinator_req q;
    struct kreader r;
    kr_init(&r, req, sizeof(req));
    ASSERT_EQ(kmsg_decode_find_coordinator(&r, 3, &a, &q), 0);
    expect_str(q.key, "grp");
    ASSERT_EQ(q.key_type, 0);
    ASSERT_EQ(kr_left(&r), 0);

    /* v0: just the key */
    static const uint8_t req0[] = {I16(3), 'g', 'r', 'p'};
    kr_init(&r, req0, sizeof(req0));
    ASSERT_EQ(kmsg_decode_find_coordinator(&r, 0, &a, &q), 0);
    expect_str(q.key, "grp");

    struct find_coordinator_resp resp = {
        .error_message = KSTR_NULL, .node_id = 1, .host = kstr_c("h"), .port = 9092};
    static const uint8_t want[] = {
        I32(0),        /* throttle_time_ms */
        I16(0),        /* error_code */
        0x00,          /* error_message: compact null */
        I32(1),        /* node_id */
        0x02, 'h',     /* host */
        I32(9092),     /* port */
        TAGS0,
    };
    ENCODES_TO(kmsg_encode_find_coordinator(w, 3, &resp), want);
    static const uint8_t want0[] = {I16(0), I32(1), I16(1), 'h', I32(9092)};
    ENCODES_TO(kmsg_encode_find_coordinator(w, 0, &resp), want0);
    resp.error_message = kstr_c("no");
    static const uint8_t want1[] = {I32(0), I16(0), I16(2), 'n', 'o', I32(1), I16(1), 'h',
                                    I32(9092)};
    ENCODES_TO(kmsg_encode_find_coordinator(w, 1, &resp), want1);
    arena_destroy(&a);
}

/* ---- the other APIs, one version each ---- */

TEST(kmsg_golden_list_offsets_v1_and_v5)
{
    static const uint8_t req1[] = {I32(-1), I32(1), I16(1), 't', I32(1), I32(0), I64(-2)};
    struct arena a;
    arena_init(&a, 0);
    struct list_offsets_req q;
    struct kreader r;
    kr_init(&r, req1, sizeof(req1));
    ASSERT_EQ(kmsg_decode_list_offsets(&r, 1, &a, &q), 0);
    ASSERT_EQ(q.replica_id, -1);
    ASSERT_EQ(q.isolation_level, 0);
    ASSERT_EQ(q.topics[0].partitions[0].timestamp, KAFKA_OFFSET_EARLIEST);
    ASSERT_EQ(q.topics[0].partitions[0].current_leader_epoch, -1);

    static const uint8_t req5[] = {I32(-1), I8(1), I32(1), I16(1), 't', I32(1), I32(0), I32(4),
                                   I64(-1)};
    kr_init(&r, req5, sizeof(req5));
    ASSERT_EQ(kmsg_decode_list_offsets(&r, 5, &a, &q), 0);
    ASSERT_EQ(q.isolation_level, 1);
    ASSERT_EQ(q.topics[0].partitions[0].current_leader_epoch, 4);
    ASSERT_EQ(q.topics[0].partitions[0].timestamp, KAFKA_OFFSET_LATEST);

    struct list_offsets_resp_partition p = {0, 0, -1, 42, 4};
    struct list_offsets_resp_topic t = {kstr_c("t"), &p, 1};
    struct list_offsets_resp resp = {6, &t, 1};
    static const uint8_t want1[] = {I32(1), I16(1), 't', I32(1), I32(0), I16(0), I64(-1), I64(42)};
    ENCODES_TO(kmsg_encode_list_offsets(w, 1, &resp), want1);
    static const uint8_t want5[] = {I32(6),  I32(1),  I16(1),  't',   I32(1), I32(0),
                                    I16(0),  I64(-1), I64(42), I32(4)};
    ENCODES_TO(kmsg_encode_list_offsets(w, 5, &resp), want5);
    arena_destroy(&a);
}

TEST(kmsg_golden_describe_configs_v0_and_v1_responses)
{
    struct describe_configs_synonym syn = {kstr_c("s"), KSTR_NULL, 5};
    struct describe_configs_entry c = {kstr_c("k"), kstr_c("v"), true, true, 1, false, &syn, 1,
                                       KAFKA_CONFIG_TYPE_STRING, KSTR_NULL};
    struct describe_configs_result res = {0, KSTR_NULL, 2, kstr_c("t"), &c, 1};
    struct describe_configs_resp resp = {0, &res, 1};
    static const uint8_t v0[] = {
        I32(0), I32(1),
        I16(0), I16(-1), I8(2), I16(1), 't',       /* error, message, type, name */
        I32(1),
        I16(1), 'k', I16(1), 'v', I8(1), I8(1), I8(0), /* name, value, read_only, is_default, sensitive */
    };
    ENCODES_TO(kmsg_encode_describe_configs(w, 0, &resp), v0);
    static const uint8_t v1[] = {
        I32(0), I32(1),
        I16(0), I16(-1), I8(2), I16(1), 't',
        I32(1),
        I16(1), 'k', I16(1), 'v', I8(1), I8(1), I8(0), /* name, value, read_only, source, sensitive */
        I32(1), I16(1), 's', I16(-1), I8(5),           /* synonyms */
    };
    ENCODES_TO(kmsg_encode_describe_configs(w, 1, &resp), v1);
}
/* clang-format on */
