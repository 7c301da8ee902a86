/* Golden bytes for the versions newer clients use (@platformatic/kafka 1.x picks the highest one
 * it implements): Metadata v10-12, Produce v8-9, Fetch v12-13, ListOffsets v6-7,
 * FindCoordinator v4, CreateTopics v5-7, DeleteTopics v5-6, JoinGroup v8-9, LeaveGroup v5,
 * OffsetCommit v9, OffsetFetch v8, DescribeGroups v5, InitProducerId v5 and ApiVersions v4; and
 * ElectLeaders v0-2.
 *
 * As in kmsg_golden_test.c, every byte is spelled out by hand from Kafka's JSON message
 * definitions (compact strings and arrays are uvarint N+1, 0 = null; every structure of a
 * flexible version ends with a tagged-field section, here empty); requests are what the client
 * writes (field by field as @platformatic/kafka's dist/apis/<group>/<name>-v<N>.js appends
 * them), responses what kmsg_encode_* must produce. */
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/api.h"
#include "kafka/errors.h"
#include "kafka/msg.h"
#include "kafka/msg_group.h"
#include "kafka/msg_producer.h"
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
/* 16 bytes s, s+1, ..., s+15: a topic id */
#define UUID_SEQ(s)                                                                                \
    (s), (s) + 1, (s) + 2, (s) + 3, (s) + 4, (s) + 5, (s) + 6, (s) + 7, (s) + 8, (s) + 9,          \
        (s) + 10, (s) + 11, (s) + 12, (s) + 13, (s) + 14, (s) + 15
#define UUID_ZERO 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0

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

static struct kuuid uuid_seq(uint8_t s)
{
    struct kuuid u;
    for (int i = 0; i < 16; i++)
        u.b[i] = (uint8_t)(s + i);
    return u;
}

static void expect_uuid(struct kuuid u, uint8_t seq)
{
    struct kuuid want = uuid_seq(seq);
    ASSERT_MEMEQ(u.b, want.b, 16);
}

/* Decodes exactly the bytes given (nothing may be left over). */
#define DECODES(fn, bytes, v, out)                                                                 \
    do {                                                                                           \
        struct kreader r_;                                                                         \
        kr_init(&r_, bytes, sizeof(bytes));                                                        \
        ASSERT_EQ(fn(&r_, v, &a, out), 0);                                                         \
        ASSERT_EQ(kr_left(&r_), 0);                                                                \
    } while (0)

/* ---- ApiVersions v4 ---- */

TEST(kmsg_golden_new_api_versions_v4)
{
    struct arena a;
    arena_init(&a, 0);
    /* what platformatic sends: client software name and version, then tags */
    static const uint8_t req[] = {0x0a, 'p', 'l', 'a', 't', 'f', 'o', 'r', 'm', 'i', 0x04, '1',
                                  '.', '0', TAGS0};
    struct api_versions_req q;
    DECODES(kmsg_decode_api_versions, req, 4, &q);
    expect_str(q.client_software_name, "platformi");
    expect_str(q.client_software_version, "1.0");

    struct api_versions_key keys[] = {{3, 0, 12}};
    struct api_versions_resp resp = {0, keys, 1, 0};
    static const uint8_t want[] = {I16(0), 0x02, I16(3), I16(0), I16(12), TAGS0, I32(0), TAGS0};
    ENCODES_TO(kmsg_encode_api_versions(w, 4, &resp), want);
    arena_destroy(&a);
}

/* ---- Metadata v10-12 ---- */

TEST(kmsg_golden_new_metadata_v12_request)
{
    struct arena a;
    arena_init(&a, 0);
    struct metadata_req q;
    /* platformatic's listTopics: a null topic array (all), no auto-creation */
    static const uint8_t all[] = {0x00, I8(0), I8(0), TAGS0};
    DECODES(kmsg_decode_metadata, all, 12, &q);
    ASSERT_EQ(q.n_topics, -1);
    ASSERT(!q.allow_auto_topic_creation);

    /* one topic by name (zero id), one by id (null name) */
    static const uint8_t two[] = {
        0x03,                                   /* topics: 2 */
        UUID_ZERO, 0x02, 't', TAGS0,            /* topic_id, name "t" */
        UUID_SEQ(0x10), 0x00, TAGS0,            /* topic_id, name null */
        I8(1), I8(1), TAGS0,                    /* allow_auto_topic_creation, topic ops */
    };
    DECODES(kmsg_decode_metadata, two, 12, &q);
    ASSERT_EQ(q.n_topics, 2);
    expect_str(q.topics[0], "t");
    ASSERT(kuuid_is_zero(q.topic_ids[0]));
    expect_str(q.topics[1], NULL);
    expect_uuid(q.topic_ids[1], 0x10);
    ASSERT(q.allow_auto_topic_creation);
    ASSERT(!q.include_cluster_authorized_operations); /* not in v11+ */
    ASSERT(q.include_topic_authorized_operations);

    /* v10 still has IncludeClusterAuthorizedOperations */
    static const uint8_t v10[] = {0x01, I8(0), I8(1), I8(0), TAGS0};
    DECODES(kmsg_decode_metadata, v10, 10, &q);
    ASSERT_EQ(q.n_topics, 0);
    ASSERT(q.include_cluster_authorized_operations);

    /* a null name is refused before v10 */
    static const uint8_t v9_null[] = {0x02, 0x00, TAGS0, I8(1), I8(0), I8(0), TAGS0};
    struct kreader r;
    kr_init(&r, v9_null, sizeof(v9_null));
    ASSERT_EQ(kmsg_decode_metadata(&r, 9, &a, &q), -ERR_CORRUPT);
    arena_destroy(&a);
}

TEST(kmsg_golden_new_metadata_v10_and_v12_responses)
{
    static int32_t reps[] = {1};
    struct metadata_broker b = {1, kstr_c("h"), 9092, KSTR_NULL};
    struct metadata_partition p = {.partition_index = 0,
                                   .leader_id = 1,
                                   .leader_epoch = 2,
                                   .replica_nodes = reps,
                                   .n_replica_nodes = 1,
                                   .isr_nodes = reps,
                                   .n_isr_nodes = 1};
    struct metadata_topic t = {.name = kstr_c("t"),
                               .topic_id = uuid_seq(0x20),
                               .partitions = &p,
                               .n_partitions = 1,
                               .topic_authorized_operations = INT32_MIN};
    struct metadata_resp resp = {.brokers = &b,
                                 .n_brokers = 1,
                                 .cluster_id = kstr_c("c"),
                                 .controller_id = 1,
                                 .topics = &t,
                                 .n_topics = 1,
                                 .cluster_authorized_operations = INT32_MIN};
    static const uint8_t want12[] = {
        I32(0),                                     /* throttle_time_ms */
        0x02,                                       /* brokers: 1 */
        I32(1), 0x02, 'h', I32(9092), 0x00, TAGS0,  /* node_id, host, port, rack null */
        0x02, 'c',                                  /* cluster_id */
        I32(1),                                     /* controller_id */
        0x02,                                       /* topics: 1 */
        I16(0), 0x02, 't', UUID_SEQ(0x20), I8(0),   /* error, name, topic_id, is_internal */
        0x02,                                       /* partitions: 1 */
        I16(0), I32(0), I32(1), I32(2),             /* error, index, leader, leader_epoch */
        0x02, I32(1), 0x02, I32(1), 0x01,           /* replicas, isr, offline (empty) */
        TAGS0,
        I32(INT32_MIN),                             /* topic_authorized_operations */
        TAGS0,
        TAGS0,                                      /* no cluster ops from v11 */
    };
    ENCODES_TO(kmsg_encode_metadata(w, 12, &resp), want12);

    /* v10: the same with ClusterAuthorizedOperations before the last tags */
    static const uint8_t want10[] = {
        I32(0), 0x02, I32(1), 0x02, 'h', I32(9092), 0x00, TAGS0, 0x02, 'c', I32(1), 0x02,
        I16(0), 0x02, 't', UUID_SEQ(0x20), I8(0), 0x02, I16(0), I32(0), I32(1), I32(2),
        0x02, I32(1), 0x02, I32(1), 0x01, TAGS0, I32(INT32_MIN), TAGS0,
        I32(INT32_MIN), TAGS0,
    };
    ENCODES_TO(kmsg_encode_metadata(w, 10, &resp), want10);

    /* v12: an unknown id is answered with a null name */
    t = (struct metadata_topic){.error_code = KERR_UNKNOWN_TOPIC_ID,
                                .name = KSTR_NULL,
                                .topic_id = uuid_seq(0x30),
                                .topic_authorized_operations = INT32_MIN};
    resp.n_brokers = 0;
    static const uint8_t unknown[] = {
        I32(0), 0x01, 0x02, 'c', I32(1), 0x02,
        I16(100), 0x00, UUID_SEQ(0x30), I8(0), 0x01, I32(INT32_MIN), TAGS0, TAGS0,
    };
    ENCODES_TO(kmsg_encode_metadata(w, 12, &resp), unknown);
}

/* ---- Produce v8-9 ---- */

TEST(kmsg_golden_new_produce_v9)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t batch[] = {1, 2, 3};
    /* platformatic: transactional_id null, acks -1, timeout, one topic, one partition */
    static const uint8_t req[] = {
        0x00, I16(-1), I32(30000),
        0x02, 0x02, 't',              /* topics: 1, name "t" */
        0x02, I32(0), 0x04, 1, 2, 3,  /* partitions: 1, index 0, records (compact bytes) */
        TAGS0, TAGS0, TAGS0,
    };
    struct produce_req q;
    DECODES(kmsg_decode_produce, req, 9, &q);
    expect_str(q.transactional_id, NULL);
    ASSERT_EQ(q.acks, -1);
    ASSERT_EQ(q.topics[0].partitions[0].records.len, 3);
    ASSERT_MEMEQ(q.topics[0].partitions[0].records.p, batch, 3);

    struct produce_record_error re = {2, kstr_c("x")};
    struct produce_resp_partition p = {.index = 0,
                                       .base_offset = 7,
                                       .log_append_time_ms = -1,
                                       .log_start_offset = 0,
                                       .error_message = KSTR_NULL};
    struct produce_resp_topic t = {kstr_c("t"), &p, 1};
    struct produce_resp resp = {&t, 1, 0};
    static const uint8_t want9[] = {
        0x02, 0x02, 't', 0x02,
        I32(0), I16(0), I64(7), I64(-1), I64(0),  /* index, error, base, append time, start */
        0x01, 0x00,                               /* record_errors: 0, error_message: null */
        TAGS0, TAGS0,
        I32(0), TAGS0,                            /* throttle_time_ms */
    };
    ENCODES_TO(kmsg_encode_produce(w, 9, &resp), want9);

    p.error_code = KERR_INVALID_RECORD;
    p.record_errors = &re;
    p.n_record_errors = 1;
    p.error_message = kstr_c("bad");
    static const uint8_t want8[] = {
        I32(1), I16(1), 't', I32(1),
        I32(0), I16(87), I64(7), I64(-1), I64(0),
        I32(1), I32(2), I16(1), 'x',              /* record_errors: batch 2, "x" */
        I16(3), 'b', 'a', 'd',                    /* error_message */
        I32(0),
    };
    ENCODES_TO(kmsg_encode_produce(w, 8, &resp), want8);
    arena_destroy(&a);
}

/* ---- Fetch v12-13 ---- */

TEST(kmsg_golden_new_fetch_v13_request_and_response)
{
    struct arena a;
    arena_init(&a, 0);
    /* platformatic's fetch-v13: replica -1, wait, min, max, isolation, session 0, epoch 0 */
    static const uint8_t req[] = {
        I32(-1), I32(500), I32(1), I32(1048576), I8(0), I32(0), I32(0),
        0x02, UUID_SEQ(0x40),                     /* topics: 1, topic_id */
        0x02,                                     /* partitions: 1 */
        I32(3), I32(-1), I64(42), I32(-1),        /* partition, leader epoch, offset, last epoch */
        I64(-1), I32(65536), TAGS0,               /* log_start_offset, partition_max_bytes */
        TAGS0,
        0x02, UUID_SEQ(0x50), 0x02, I32(1), TAGS0, /* forgotten: one topic id, partition 1 */
        0x01,                                     /* rack_id "" */
        TAGS0,
    };
    struct fetch_req q;
    DECODES(kmsg_decode_fetch, req, 13, &q);
    ASSERT_EQ(q.n_topics, 1);
    expect_str(q.topics[0].topic, ""); /* for the broker to fill in from the id */
    expect_uuid(q.topics[0].topic_id, 0x40);
    ASSERT_EQ(q.topics[0].partitions[0].partition, 3);
    ASSERT_EQ(q.topics[0].partitions[0].fetch_offset, 42);
    ASSERT_EQ(q.topics[0].partitions[0].last_fetched_epoch, -1);
    ASSERT_EQ(q.topics[0].partitions[0].partition_max_bytes, 65536);
    ASSERT_EQ(q.n_forgotten, 1);
    expect_uuid(q.forgotten[0].topic_id, 0x50);
    expect_str(q.rack_id, "");

    /* v12: names, with LastFetchedEpoch after the fetch offset */
    static const uint8_t req12[] = {
        I32(-1), I32(0), I32(1), I32(100), I8(1), I32(0), I32(-1),
        0x02, 0x02, 'x', 0x02,
        I32(0), I32(5), I64(10), I32(4), I64(0), I32(1000), TAGS0,
        TAGS0, 0x01, 0x01, TAGS0,
    };
    DECODES(kmsg_decode_fetch, req12, 12, &q);
    expect_str(q.topics[0].topic, "x");
    ASSERT(kuuid_is_zero(q.topics[0].topic_id));
    ASSERT_EQ(q.topics[0].partitions[0].current_leader_epoch, 5);
    ASSERT_EQ(q.topics[0].partitions[0].last_fetched_epoch, 4);
    ASSERT_EQ(q.isolation_level, 1);

    struct fetch_resp_partition p = {.partition_index = 3,
                                     .error_code = KERR_UNKNOWN_TOPIC_ID,
                                     .high_watermark = -1,
                                     .last_stable_offset = -1,
                                     .log_start_offset = -1,
                                     .n_aborted = -1,
                                     .preferred_read_replica = -1,
                                     .records_len = 0};
    struct fetch_resp_topic t = {.topic = kstr_c(""), .topic_id = uuid_seq(0x40),
                                 .partitions = &p, .n_partitions = 1};
    struct fetch_resp resp = {.topics = &t, .n_topics = 1};
    static const uint8_t want[] = {
        I32(0), I16(0), I32(0),                  /* throttle, error, session_id */
        0x02, UUID_SEQ(0x40), 0x02,              /* responses: 1, topic_id, partitions: 1 */
        I32(3), I16(100), I64(-1), I64(-1), I64(-1),
        0x00,                                    /* aborted_transactions: null */
        I32(-1),                                 /* preferred_read_replica */
        0x01,                                    /* records: empty (compact length 0) */
        TAGS0, TAGS0, TAGS0,
    };
    ENCODES_TO(kmsg_encode_fetch(w, 13, &resp), want);
    arena_destroy(&a);
}

/* ---- ListOffsets v7 ---- */

TEST(kmsg_golden_new_list_offsets_v7)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t req[] = {
        I32(-1), I8(0), 0x02, 0x02, 't', 0x02,
        I32(0), I32(-1), I64(-3), TAGS0,          /* partition, leader epoch, MAX_TIMESTAMP */
        TAGS0, TAGS0,
    };
    struct list_offsets_req q;
    DECODES(kmsg_decode_list_offsets, req, 7, &q);
    ASSERT_EQ(q.topics[0].partitions[0].timestamp, KAFKA_OFFSET_MAX_TIMESTAMP);

    struct list_offsets_resp_partition p = {0, 0, 999, 1, 3};
    struct list_offsets_resp_topic t = {kstr_c("t"), &p, 1};
    struct list_offsets_resp resp = {0, &t, 1};
    static const uint8_t want[] = {
        I32(0), 0x02, 0x02, 't', 0x02,
        I32(0), I16(0), I64(999), I64(1), I32(3), TAGS0,
        TAGS0, TAGS0,
    };
    ENCODES_TO(kmsg_encode_list_offsets(w, 7, &resp), want);
    arena_destroy(&a);
}

/* ---- FindCoordinator v4 ---- */

TEST(kmsg_golden_new_find_coordinator_v4)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t req[] = {I8(0), 0x03, 0x02, 'a', 0x03, 'b', 'b', TAGS0};
    struct find_coordinator_req q;
    DECODES(kmsg_decode_find_coordinator, req, 4, &q);
    ASSERT_EQ(q.key_type, 0);
    ASSERT_EQ(q.n_coordinator_keys, 2);
    expect_str(q.coordinator_keys[0], "a");
    expect_str(q.coordinator_keys[1], "bb");
    expect_str(q.key, "");

    struct find_coordinator_coordinator c[2] = {
        {kstr_c("a"), 1, kstr_c("h"), 9092, 0, KSTR_NULL},
        {kstr_c("bb"), -1, kstr_c(""), -1, KERR_COORDINATOR_NOT_AVAILABLE, kstr_c("no")}};
    struct find_coordinator_resp resp = {
        .error_message = KSTR_NULL, .host = kstr_c(""), .coordinators = c, .n_coordinators = 2};
    static const uint8_t want[] = {
        I32(0), 0x03,                                          /* throttle, coordinators: 2 */
        0x02, 'a', I32(1), 0x02, 'h', I32(9092), I16(0), 0x00, TAGS0,
        0x03, 'b', 'b', I32(-1), 0x01, I32(-1), I16(15), 0x03, 'n', 'o', TAGS0,
        TAGS0,
    };
    ENCODES_TO(kmsg_encode_find_coordinator(w, 4, &resp), want);

    /* v4 has no single Key: a v3-shaped body is refused */
    static const uint8_t v3body[] = {0x02, 'a', I8(0), TAGS0};
    struct kreader r;
    kr_init(&r, v3body, sizeof(v3body));
    ASSERT_EQ(kmsg_decode_find_coordinator(&r, 4, &a, &q), -ERR_CORRUPT);
    arena_destroy(&a);
}

/* ---- CreateTopics v5-7, DeleteTopics v5-6 ---- */

TEST(kmsg_golden_new_create_topics_v7_response)
{
    struct create_topics_resp_topic t = {.name = kstr_c("t"),
                                         .topic_id = uuid_seq(0x60),
                                         .error_message = KSTR_NULL,
                                         .num_partitions = 3,
                                         .replication_factor = 1,
                                         .n_configs = -1};
    struct create_topics_resp resp = {0, &t, 1};
    static const uint8_t want7[] = {
        I32(0), 0x02,
        0x02, 't', UUID_SEQ(0x60), I16(0), 0x00,  /* name, topic_id, error, message null */
        I32(3), I16(1), 0x00,                     /* num_partitions, rf, configs null */
        TAGS0, TAGS0,
    };
    ENCODES_TO(kmsg_encode_create_topics(w, 7, &resp), want7);
    static const uint8_t want5[] = {
        I32(0), 0x02, 0x02, 't', I16(0), 0x00, I32(3), I16(1), 0x00, TAGS0, TAGS0,
    };
    ENCODES_TO(kmsg_encode_create_topics(w, 5, &resp), want5);

    struct create_topics_resp_config c = {kstr_c("k"), KSTR_NULL, true, 5, false};
    t.configs = &c;
    t.n_configs = 1;
    static const uint8_t with_config[] = {
        I32(0), 0x02, 0x02, 't', I16(0), 0x00, I32(3), I16(1),
        0x02, 0x02, 'k', 0x00, I8(1), I8(5), I8(0), TAGS0, /* name, value null, ro, source, sens */
        TAGS0, TAGS0,
    };
    ENCODES_TO(kmsg_encode_create_topics(w, 6, &resp), with_config);
}

TEST(kmsg_golden_new_delete_topics_v6)
{
    struct arena a;
    arena_init(&a, 0);
    /* platformatic: each topic by name, with a zero id */
    static const uint8_t req[] = {
        0x03,
        0x02, 'a', UUID_ZERO, TAGS0,
        0x00, UUID_SEQ(0x70), TAGS0,              /* by id: null name */
        I32(5000), TAGS0,
    };
    struct delete_topics_req q;
    DECODES(kmsg_decode_delete_topics, req, 6, &q);
    ASSERT_EQ(q.n_topic_names, 2);
    expect_str(q.topic_names[0], "a");
    ASSERT(kuuid_is_zero(q.topic_ids[0]));
    expect_str(q.topic_names[1], NULL);
    expect_uuid(q.topic_ids[1], 0x70);
    ASSERT_EQ(q.timeout_ms, 5000);

    struct delete_topics_resp_topic res[2] = {
        {kstr_c("a"), uuid_seq(0x01), 0, KSTR_NULL},
        {KSTR_NULL, uuid_seq(0x70), KERR_UNKNOWN_TOPIC_ID, KSTR_NULL}};
    struct delete_topics_resp resp = {0, res, 2};
    static const uint8_t want6[] = {
        I32(0), 0x03,
        0x02, 'a', UUID_SEQ(0x01), I16(0), 0x00, TAGS0,
        0x00, UUID_SEQ(0x70), I16(100), 0x00, TAGS0,
        TAGS0,
    };
    ENCODES_TO(kmsg_encode_delete_topics(w, 6, &resp), want6);
    res[1] = (struct delete_topics_resp_topic){kstr_c("b"), uuid_seq(0), 3, kstr_c("gone")};
    static const uint8_t want5[] = {
        I32(0), 0x03,
        0x02, 'a', I16(0), 0x00, TAGS0,
        0x02, 'b', I16(3), 0x05, 'g', 'o', 'n', 'e', TAGS0,
        TAGS0,
    };
    ENCODES_TO(kmsg_encode_delete_topics(w, 5, &resp), want5);
    arena_destroy(&a);
}

/* ---- consumer groups ---- */

TEST(kmsg_golden_new_join_group_v9_and_leave_group_v5)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t join[] = {
        0x02, 'g', I32(10000), I32(60000), 0x01, 0x00, /* group, session, rebalance, member "", no instance */
        0x09, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r',   /* protocol_type */
        0x02, 0x03, 'r', 'r', 0x02, 'm', TAGS0,          /* protocols: "rr", metadata "m" */
        0x03, 'h', 'i',                                  /* reason (v8+) */
        TAGS0,
    };
    struct join_group_req jq;
    DECODES(kmsg_decode_join_group, join, 9, &jq);
    expect_str(jq.member_id, "");
    expect_str(jq.group_instance_id, NULL);
    expect_str(jq.reason, "hi");
    ASSERT_EQ(jq.n_protocols, 1);

    struct join_group_resp resp = {.error_code = 0,
                                   .generation_id = 1,
                                   .protocol_type = kstr_c("consumer"),
                                   .protocol_name = kstr_c("rr"),
                                   .leader = kstr_c("m1"),
                                   .skip_assignment = false,
                                   .member_id = kstr_c("m1")};
    static const uint8_t want[] = {
        I32(0), I16(0), I32(1),
        0x09, 'c', 'o', 'n', 's', 'u', 'm', 'e', 'r', 0x03, 'r', 'r',
        0x03, 'm', '1',                         /* leader */
        I8(0),                                  /* skip_assignment (v9+) */
        0x03, 'm', '1', 0x01,                   /* member_id, members: 0 */
        TAGS0,
    };
    ENCODES_TO(kmsg_encode_join_group(w, 9, &resp), want);

    static const uint8_t leave[] = {
        0x02, 'g', 0x02,
        0x03, 'm', '1', 0x00, 0x04, 'b', 'y', 'e', TAGS0, /* member, no instance, reason */
        TAGS0,
    };
    struct leave_group_req lq;
    DECODES(kmsg_decode_leave_group, leave, 5, &lq);
    ASSERT_EQ(lq.n_members, 1);
    expect_str(lq.members[0].member_id, "m1");
    expect_str(lq.members[0].reason, "bye");
    arena_destroy(&a);
}

TEST(kmsg_golden_new_offset_fetch_v8)
{
    struct arena a;
    arena_init(&a, 0);
    /* platformatic's offset-fetch-v8: groups, each with topics (null: all), require_stable */
    static const uint8_t req[] = {
        0x03,
        0x03, 'g', '1', 0x02, 0x02, 't', 0x03, I32(0), I32(1), TAGS0, TAGS0,
        0x03, 'g', '2', 0x00, TAGS0,              /* topics null */
        I8(1), TAGS0,
    };
    struct offset_fetch_req q;
    DECODES(kmsg_decode_offset_fetch, req, 8, &q);
    ASSERT_EQ(q.n_groups, 2);
    expect_str(q.groups[0].group_id, "g1");
    ASSERT_EQ(q.groups[0].n_topics, 1);
    ASSERT_EQ(q.groups[0].topics[0].n_partition_indexes, 2);
    ASSERT_EQ(q.groups[0].topics[0].partition_indexes[1], 1);
    expect_str(q.groups[1].group_id, "g2");
    ASSERT_EQ(q.groups[1].n_topics, -1);
    ASSERT(q.require_stable);

    struct offset_fetch_resp_partition p = {1, 42, -1, KSTR_NULL, 0};
    struct offset_fetch_resp_topic t = {kstr_c("t"), &p, 1};
    struct offset_fetch_resp_group g[2] = {{kstr_c("g1"), &t, 1, 0},
                                           {kstr_c("g2"), NULL, 0, KERR_NOT_COORDINATOR}};
    struct offset_fetch_resp resp = {.groups = g, .n_groups = 2};
    static const uint8_t want[] = {
        I32(0), 0x03,
        0x03, 'g', '1', 0x02, 0x02, 't', 0x02,
        I32(1), I64(42), I32(-1), 0x00, I16(0), TAGS0, /* index, offset, epoch, metadata null */
        TAGS0, I16(0), TAGS0,
        0x03, 'g', '2', 0x01, I16(16), TAGS0,
        TAGS0,
    };
    ENCODES_TO(kmsg_encode_offset_fetch(w, 8, &resp), want);
    arena_destroy(&a);
}

TEST(kmsg_golden_new_offset_commit_v9_describe_groups_v5)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t commit[] = {
        0x02, 'g', I32(3), 0x02, 'm', 0x00,   /* group, generation, member, no instance */
        0x02, 0x02, 't', 0x02,
        I32(0), I64(10), I32(-1), 0x01, TAGS0, /* partition, offset, leader epoch, metadata "" */
        TAGS0, TAGS0,
    };
    struct offset_commit_req q;
    DECODES(kmsg_decode_offset_commit, commit, 9, &q);
    ASSERT_EQ(q.generation_id, 3);
    ASSERT_EQ(q.topics[0].partitions[0].committed_offset, 10);
    expect_str(q.topics[0].partitions[0].committed_metadata, "");

    static const uint8_t describe[] = {0x02, 0x02, 'g', I8(0), TAGS0};
    struct describe_groups_req dq;
    DECODES(kmsg_decode_describe_groups, describe, 5, &dq);
    ASSERT_EQ(dq.n_groups, 1);
    expect_str(dq.groups[0], "g");

    struct describe_groups_group g = {.group_id = kstr_c("g"),
                                      .group_state = kstr_c("Empty"),
                                      .protocol_type = kstr_c(""),
                                      .protocol_data = kstr_c(""),
                                      .authorized_operations = INT32_MIN};
    struct describe_groups_resp resp = {0, &g, 1};
    static const uint8_t want[] = {
        I32(0), 0x02,
        I16(0), 0x02, 'g', 0x06, 'E', 'm', 'p', 't', 'y', 0x01, 0x01, /* ..., type, data "" */
        0x01, I32(INT32_MIN), TAGS0,                                   /* members: 0, ops */
        TAGS0,
    };
    ENCODES_TO(kmsg_encode_describe_groups(w, 5, &resp), want);
    arena_destroy(&a);
}

TEST(kmsg_golden_new_init_producer_id_v5)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t req[] = {0x00, I32(60000), I64(-1), I16(-1), TAGS0};
    struct init_producer_id_req q;
    DECODES(kmsg_decode_init_producer_id, req, 5, &q);
    expect_str(q.transactional_id, NULL);
    ASSERT_EQ(q.producer_id, -1);
    struct init_producer_id_resp resp = {0, 0, 1000, 0};
    static const uint8_t want[] = {I32(0), I16(0), I64(1000), I16(0), TAGS0};
    ENCODES_TO(kmsg_encode_init_producer_id(w, 5, &resp), want);
    arena_destroy(&a);
}

/* ---- OffsetCommit v0-1 and OffsetFetch v0 (sarama 1.2x) ---- */

TEST(kmsg_golden_new_offset_commit_v0_v1_offset_fetch_v0)
{
    struct arena a;
    arena_init(&a, 0);
    /* sarama's OffsetCommitRequest v1 (Consumer.Offsets.Retention 0): a timestamp per partition,
     * ReceiveTime (-1) */
    static const uint8_t v1[] = {
        I16(1), 'g', I32(7), I16(2), 'm', '1',     /* group, generation, member */
        I32(1), I16(1), 't', I32(1),               /* topics: 1, name, partitions: 1 */
        I32(2), I64(42), I64(-1), I16(0),          /* index, offset, commit_timestamp, metadata "" */
    };
    struct offset_commit_req q;
    DECODES(kmsg_decode_offset_commit, v1, 1, &q);
    expect_str(q.group_id, "g");
    ASSERT_EQ(q.generation_id, 7);
    expect_str(q.member_id, "m1");
    ASSERT_EQ(q.retention_time_ms, -1);
    ASSERT_EQ(q.topics[0].partitions[0].partition_index, 2);
    ASSERT_EQ(q.topics[0].partitions[0].committed_offset, 42);
    ASSERT_EQ(q.topics[0].partitions[0].commit_timestamp, -1);
    ASSERT_EQ(q.topics[0].partitions[0].committed_leader_epoch, -1);
    expect_str(q.topics[0].partitions[0].committed_metadata, "");

    /* v0: no generation, member or timestamp: a commit outside any generation */
    static const uint8_t v0[] = {
        I16(1), 'g', I32(1), I16(1), 't', I32(1),
        I32(0), I64(9), I16(-1),                   /* index, offset, metadata null */
    };
    DECODES(kmsg_decode_offset_commit, v0, 0, &q);
    ASSERT_EQ(q.generation_id, -1);
    expect_str(q.member_id, "");
    ASSERT_EQ(q.topics[0].partitions[0].committed_offset, 9);
    ASSERT_EQ(q.topics[0].partitions[0].commit_timestamp, -1);
    expect_str(q.topics[0].partitions[0].committed_metadata, NULL);
    /* a v1 body read as v0 leaves bytes over (or runs short): not silently accepted */
    struct kreader r;
    kr_init(&r, v1, sizeof(v1));
    ASSERT(kmsg_decode_offset_commit(&r, 0, &a, &q) != 0 || kr_left(&r) != 0);

    struct offset_commit_resp_partition cp = {2, 0};
    struct offset_commit_resp_topic ct = {kstr_c("t"), &cp, 1};
    struct offset_commit_resp cresp = {5, &ct, 1};
    static const uint8_t cwant[] = {I32(1), I16(1), 't', I32(1), I32(2), I16(0)}; /* no throttle */
    ENCODES_TO(kmsg_encode_offset_commit(w, 0, &cresp), cwant);
    ENCODES_TO(kmsg_encode_offset_commit(w, 1, &cresp), cwant);

    /* OffsetFetch v0: what v1 reads; no top-level error in the answer */
    static const uint8_t f0[] = {I16(1), 'g', I32(1), I16(1), 't', I32(2), I32(0), I32(1)};
    struct offset_fetch_req fq;
    DECODES(kmsg_decode_offset_fetch, f0, 0, &fq);
    expect_str(fq.group_id, "g");
    ASSERT_EQ(fq.n_topics, 1);
    ASSERT_EQ(fq.topics[0].n_partition_indexes, 2);
    struct offset_fetch_resp_partition fp = {1, 42, -1, kstr_c(""), 0};
    struct offset_fetch_resp_topic ft = {kstr_c("t"), &fp, 1};
    struct offset_fetch_resp fresp = {.topics = &ft, .n_topics = 1, .error_code = 0};
    static const uint8_t fwant[] = {I32(1), I16(1), 't', I32(1), I32(1), I64(42), I16(0), I16(0)};
    ENCODES_TO(kmsg_encode_offset_fetch(w, 0, &fresp), fwant);
    arena_destroy(&a);
}

/* ---- IncrementalAlterConfigs v0-1, DescribeCluster v0-1, DescribeLogDirs v1-4,
 * OffsetForLeaderEpoch v0-4 ---- */

TEST(kmsg_golden_new_incremental_alter_configs)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t v1[] = {
        0x02, I8(2), 0x02, 't',                     /* resources: 1, type topic, name "t" */
        0x03,                                       /* configs: 2 */
        0x02, 'k', I8(2), 0x02, 'v', TAGS0,         /* name, APPEND, value "v" */
        0x02, 'j', I8(1), 0x00, TAGS0,              /* name, DELETE, value null */
        TAGS0,
        I8(1), TAGS0,                               /* validate_only */
    };
    struct incremental_alter_configs_req q;
    DECODES(kmsg_decode_incremental_alter_configs, v1, 1, &q);
    ASSERT_EQ(q.n_resources, 1);
    ASSERT_EQ(q.resources[0].resource_type, 2);
    ASSERT_EQ(q.resources[0].n_configs, 2);
    ASSERT_EQ(q.resources[0].configs[0].config_operation, KAFKA_CONFIG_OP_APPEND);
    expect_str(q.resources[0].configs[0].value, "v");
    ASSERT_EQ(q.resources[0].configs[1].config_operation, KAFKA_CONFIG_OP_DELETE);
    expect_str(q.resources[0].configs[1].value, NULL);
    ASSERT(q.validate_only);
    static const uint8_t v0[] = {I32(1), I8(2), I16(1), 't', I32(1), I16(1), 'k', I8(0), I16(1),
                                 'v', I8(0)};
    DECODES(kmsg_decode_incremental_alter_configs, v0, 0, &q);
    ASSERT_EQ(q.resources[0].configs[0].config_operation, KAFKA_CONFIG_OP_SET);
    ASSERT(!q.validate_only);

    struct alter_configs_resp_resource res = {40, kstr_c("no"), 2, kstr_c("t")};
    struct alter_configs_resp resp = {0, &res, 1};
    static const uint8_t want1[] = {I32(0), 0x02, I16(40), 0x03, 'n', 'o', I8(2), 0x02, 't',
                                    TAGS0, TAGS0};
    ENCODES_TO(kmsg_encode_incremental_alter_configs(w, 1, &resp), want1);
    static const uint8_t want0[] = {I32(0), I32(1), I16(40), I16(2), 'n', 'o', I8(2), I16(1), 't'};
    ENCODES_TO(kmsg_encode_incremental_alter_configs(w, 0, &resp), want0);
    arena_destroy(&a);
}

TEST(kmsg_golden_new_describe_cluster)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t v1[] = {I8(0), I8(1), TAGS0}; /* no cluster ops, endpoint brokers */
    struct describe_cluster_req q;
    DECODES(kmsg_decode_describe_cluster, v1, 1, &q);
    ASSERT(!q.include_cluster_authorized_operations);
    ASSERT_EQ(q.endpoint_type, KAFKA_ENDPOINT_BROKERS);
    static const uint8_t v0[] = {I8(1), TAGS0}; /* flexible from v0 */
    DECODES(kmsg_decode_describe_cluster, v0, 0, &q);
    ASSERT(q.include_cluster_authorized_operations);
    ASSERT_EQ(q.endpoint_type, KAFKA_ENDPOINT_BROKERS);

    struct describe_cluster_broker b = {1, kstr_c("h"), 9092, KSTR_NULL};
    struct describe_cluster_resp resp = {.error_message = KSTR_NULL,
                                         .endpoint_type = 1,
                                         .cluster_id = kstr_c("c"),
                                         .controller_id = 1,
                                         .brokers = &b,
                                         .n_brokers = 1,
                                         .cluster_authorized_operations = INT32_MIN};
    static const uint8_t want1[] = {
        I32(0), I16(0), 0x00, I8(1),                  /* throttle, error, message null, endpoint */
        0x02, 'c', I32(1),                            /* cluster_id, controller_id */
        0x02, I32(1), 0x02, 'h', I32(9092), 0x00, TAGS0, /* brokers: 1 (rack null) */
        I32(INT32_MIN), TAGS0,
    };
    ENCODES_TO(kmsg_encode_describe_cluster(w, 1, &resp), want1);
    static const uint8_t want0[] = {
        I32(0), I16(0), 0x00, 0x02, 'c', I32(1),
        0x02, I32(1), 0x02, 'h', I32(9092), 0x00, TAGS0, I32(INT32_MIN), TAGS0,
    };
    ENCODES_TO(kmsg_encode_describe_cluster(w, 0, &resp), want0);
    arena_destroy(&a);
}

TEST(kmsg_golden_new_describe_log_dirs)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t v4[] = {0x02, 0x02, 't', 0x03, I32(0), I32(2), TAGS0, TAGS0};
    struct describe_log_dirs_req q;
    DECODES(kmsg_decode_describe_log_dirs, v4, 4, &q);
    ASSERT_EQ(q.n_topics, 1);
    ASSERT_EQ(q.topics[0].n_partitions, 2);
    ASSERT_EQ(q.topics[0].partitions[1], 2);
    static const uint8_t all[] = {0x00, TAGS0};
    DECODES(kmsg_decode_describe_log_dirs, all, 2, &q);
    ASSERT_EQ(q.n_topics, -1);
    static const uint8_t all1[] = {I32(-1)};
    DECODES(kmsg_decode_describe_log_dirs, all1, 1, &q);
    ASSERT_EQ(q.n_topics, -1);

    struct describe_log_dirs_partition p = {2, 1000, 0, false};
    struct describe_log_dirs_topic t = {kstr_c("t"), &p, 1};
    struct describe_log_dirs_result res = {0, kstr_c("/d"), &t, 1, 5000, 4000};
    struct describe_log_dirs_resp resp = {0, 0, &res, 1};
    static const uint8_t want4[] = {
        I32(0), I16(0), 0x02,                       /* throttle, error (v3+), results: 1 */
        I16(0), 0x03, '/', 'd', 0x02,               /* error, log_dir, topics: 1 */
        0x02, 't', 0x02, I32(2), I64(1000), I64(0), I8(0), TAGS0, TAGS0,
        I64(5000), I64(4000), TAGS0,                /* total_bytes, usable_bytes (v4) */
        TAGS0,
    };
    ENCODES_TO(kmsg_encode_describe_log_dirs(w, 4, &resp), want4);
    static const uint8_t want1[] = {
        I32(0), I32(1), I16(0), I16(2), '/', 'd', I32(1),
        I16(1), 't', I32(1), I32(2), I64(1000), I64(0), I8(0),
    };
    ENCODES_TO(kmsg_encode_describe_log_dirs(w, 1, &resp), want1);
    arena_destroy(&a);
}

TEST(kmsg_golden_new_offset_for_leader_epoch)
{
    struct arena a;
    arena_init(&a, 0);
    /* platformatic's offset-for-leader-epoch-v4: replica -1, then topics */
    static const uint8_t v4[] = {
        I32(-1), 0x02, 0x02, 't', 0x02,
        I32(0), I32(5), I32(3), TAGS0,              /* partition, current epoch, epoch asked */
        TAGS0, TAGS0,
    };
    struct offset_for_leader_epoch_req q;
    DECODES(kmsg_decode_offset_for_leader_epoch, v4, 4, &q);
    ASSERT_EQ(q.replica_id, -1);
    ASSERT_EQ(q.topics[0].partitions[0].current_leader_epoch, 5);
    ASSERT_EQ(q.topics[0].partitions[0].leader_epoch, 3);
    static const uint8_t v0[] = {I32(1), I16(1), 't', I32(1), I32(0), I32(3)};
    DECODES(kmsg_decode_offset_for_leader_epoch, v0, 0, &q);
    ASSERT_EQ(q.replica_id, -2);
    ASSERT_EQ(q.topics[0].partitions[0].current_leader_epoch, -1);
    ASSERT_EQ(q.topics[0].partitions[0].leader_epoch, 3);

    struct offset_for_leader_epoch_resp_partition p = {0, 0, 3, 120};
    struct offset_for_leader_epoch_resp_topic t = {kstr_c("t"), &p, 1};
    struct offset_for_leader_epoch_resp resp = {0, &t, 1};
    static const uint8_t want4[] = {
        I32(0), 0x02, 0x02, 't', 0x02,
        I16(0), I32(0), I32(3), I64(120), TAGS0,    /* error, partition, leader_epoch, end */
        TAGS0, TAGS0,
    };
    ENCODES_TO(kmsg_encode_offset_for_leader_epoch(w, 4, &resp), want4);
    static const uint8_t want0[] = {I32(1), I16(1), 't', I32(1), I16(0), I32(0), I64(120)};
    ENCODES_TO(kmsg_encode_offset_for_leader_epoch(w, 0, &resp), want0);
    arena_destroy(&a);
}

/* ---- DescribeConfigs v3-4 ---- */

TEST(kmsg_golden_new_describe_configs_v4)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t v4[] = {
        0x02, I8(2), 0x02, 't', 0x00, TAGS0,        /* resources: topic "t", every key (null) */
        I8(0), I8(1), TAGS0,                        /* include_synonyms, include_documentation */
    };
    struct describe_configs_req q;
    DECODES(kmsg_decode_describe_configs, v4, 4, &q);
    ASSERT_EQ(q.resources[0].n_configuration_keys, -1);
    ASSERT(!q.include_synonyms);
    ASSERT(q.include_documentation);

    struct describe_configs_entry c = {.name = kstr_c("k"),
                                       .value = kstr_c("v"),
                                       .config_source = KAFKA_CONFIG_SOURCE_DEFAULT,
                                       .config_type = KAFKA_CONFIG_TYPE_LONG,
                                       .documentation = KSTR_NULL};
    struct describe_configs_result res = {0, KSTR_NULL, 2, kstr_c("t"), &c, 1};
    struct describe_configs_resp resp = {0, &res, 1};
    static const uint8_t want4[] = {
        I32(0), 0x02, I16(0), 0x00, I8(2), 0x02, 't', 0x02,
        0x02, 'k', 0x02, 'v', I8(0), I8(5), I8(0),  /* name, value, read_only, source, sensitive */
        0x01, I8(5), 0x00, TAGS0,                   /* synonyms: 0, config_type LONG, doc null */
        TAGS0, TAGS0,
    };
    ENCODES_TO(kmsg_encode_describe_configs(w, 4, &resp), want4);
    static const uint8_t want3[] = {
        I32(0), I32(1), I16(0), I16(-1), I8(2), I16(1), 't', I32(1),
        I16(1), 'k', I16(1), 'v', I8(0), I8(5), I8(0), I32(0), I8(5), I16(-1),
    };
    ENCODES_TO(kmsg_encode_describe_configs(w, 3, &resp), want3);
    arena_destroy(&a);
}

/* ---- ElectLeaders v0-2 (KIP-460; flexible from v2) ---- */

TEST(kmsg_golden_new_elect_leaders)
{
    struct arena a;
    arena_init(&a, 0);
    static const uint8_t v2[] = {
        I8(0),                                      /* election type PREFERRED */
        0x02, 0x02, 't', 0x03, I32(0), I32(2), TAGS0, /* topic "t": partitions 0, 2 */
        I32(30000), TAGS0,                          /* timeout_ms */
    };
    struct elect_leaders_req q;
    DECODES(kmsg_decode_elect_leaders, v2, 2, &q);
    ASSERT_EQ(q.election_type, KAFKA_ELECTION_PREFERRED);
    ASSERT_EQ(q.n_topics, 1);
    expect_str(q.topics[0].topic, "t");
    ASSERT_EQ(q.topics[0].n_partitions, 2);
    ASSERT_EQ(q.topics[0].partitions[1], 2);
    ASSERT_EQ(q.timeout_ms, 30000);
    static const uint8_t v2_all[] = {I8(1), 0x00, I32(5), TAGS0}; /* UNCLEAN, null: every one */
    DECODES(kmsg_decode_elect_leaders, v2_all, 2, &q);
    ASSERT_EQ(q.election_type, KAFKA_ELECTION_UNCLEAN);
    ASSERT_EQ(q.n_topics, -1);
    static const uint8_t v1[] = {I8(1), I32(1), I16(1), 't', I32(1), I32(7), I32(100)};
    DECODES(kmsg_decode_elect_leaders, v1, 1, &q);
    ASSERT_EQ(q.election_type, KAFKA_ELECTION_UNCLEAN);
    ASSERT_EQ(q.topics[0].partitions[0], 7);
    static const uint8_t v0[] = {I32(-1), I32(60000)}; /* no type field: PREFERRED */
    DECODES(kmsg_decode_elect_leaders, v0, 0, &q);
    ASSERT_EQ(q.election_type, KAFKA_ELECTION_PREFERRED);
    ASSERT_EQ(q.n_topics, -1);
    ASSERT_EQ(q.timeout_ms, 60000);
    /* a null partition list is corrupt (only the topic list may be null) */
    static const uint8_t bad[] = {I8(0), 0x02, 0x02, 't', 0x00, TAGS0, I32(1), TAGS0};
    struct kreader r;
    kr_init(&r, bad, sizeof(bad));
    ASSERT_EQ(kmsg_decode_elect_leaders(&r, 2, &a, &q), -ERR_CORRUPT);

    struct elect_leaders_resp_partition ps[] = {{0, 0, KSTR_NULL}, {2, 84, kstr_c("n")}};
    struct elect_leaders_resp_topic t = {kstr_c("t"), ps, 2};
    struct elect_leaders_resp resp = {.throttle_time_ms = 0, .error_code = 0, .results = &t,
                                      .n_results = 1};
    static const uint8_t want2[] = {
        I32(0), I16(0),                             /* throttle, top-level error */
        0x02, 0x02, 't', 0x03,                      /* results: "t", 2 partitions */
        I32(0), I16(0), 0x00, TAGS0,                /* 0: NONE, message null */
        I32(2), I16(84), 0x02, 'n', TAGS0,          /* 2: ELECTION_NOT_NEEDED, "n" */
        TAGS0, TAGS0,
    };
    ENCODES_TO(kmsg_encode_elect_leaders(w, 2, &resp), want2);
    static const uint8_t want1[] = {
        I32(0), I16(0), I32(1), I16(1), 't', I32(2),
        I32(0), I16(0), I16(-1), I32(2), I16(84), I16(1), 'n',
    };
    ENCODES_TO(kmsg_encode_elect_leaders(w, 1, &resp), want1);
    static const uint8_t want0[] = { /* no top-level error */
        I32(0), I32(1), I16(1), 't', I32(2),
        I32(0), I16(0), I16(-1), I32(2), I16(84), I16(1), 'n',
    };
    ENCODES_TO(kmsg_encode_elect_leaders(w, 0, &resp), want0);
    arena_destroy(&a);
}
