/* Consumer-group messages: golden bytes spelled out by hand from Kafka's JSON message
 * definitions, and the field-by-field comparisons kmsg_roundtrip_test.c uses for these APIs
 * (their round trips, prefixes and absurd counts run with every other API through
 * kmsg_testenc.c). */
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/api.h"
#include "kafka/msg_group.h"
#include "kmsg_testenc.h"
#include "test.h"

/* clang-format off */
#define I8(x) (uint8_t)(x)
#define I16(x) (uint8_t)(((uint16_t)(x) >> 8) & 0xff), (uint8_t)((uint16_t)(x) & 0xff)
#define I32(x)                                                                                     \
    (uint8_t)(((uint32_t)(x) >> 24) & 0xff), (uint8_t)(((uint32_t)(x) >> 16) & 0xff),              \
        (uint8_t)(((uint32_t)(x) >> 8) & 0xff), (uint8_t)((uint32_t)(x) & 0xff)
#define I64(x) I32((uint64_t)(x) >> 32), I32((uint64_t)(x) & 0xffffffffu)

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
    if (!kstr_eq(s, want))
        test_fail(__FILE__, __LINE__, "got \"%.*s\" (len %d), want \"%s\"", s.len > 0 ? s.len : 0,
                  s.p ? s.p : "", s.len, want);
}

#define S(s) kstr_c(s)

TEST(kmsg_golden_join_group_v0_request)
{
    static const uint8_t in[] = {
        I16(2), 'g', '1',                 /* group_id */
        I32(10000),                       /* session_timeout_ms */
        I16(0),                           /* member_id "" */
        I16(8), 'c','o','n','s','u','m','e','r', /* protocol_type */
        I32(1),                           /* protocols */
        I16(5), 'r','a','n','g','e',      /*   name */
        I32(3), 0, 1, 2,                  /*   metadata */
    };
    struct arena a;
    arena_init(&a, 0);
    struct kreader r;
    kr_init(&r, in, sizeof(in));
    struct join_group_req q;
    ASSERT_EQ(kmsg_decode_join_group(&r, 0, &a, &q), 0);
    ASSERT_EQ(kr_left(&r), 0);
    expect_str(q.group_id, "g1");
    ASSERT_EQ(q.session_timeout_ms, 10000);
    ASSERT_EQ(q.rebalance_timeout_ms, -1); /* absent in v0 */
    expect_str(q.member_id, "");
    expect_str(q.group_instance_id, NULL);
    expect_str(q.protocol_type, "consumer");
    ASSERT_EQ(q.n_protocols, 1);
    expect_str(q.protocols[0].name, "range");
    ASSERT_EQ(q.protocols[0].metadata.len, 3);
    ASSERT_EQ(q.protocols[0].metadata.p[2], 2);
    arena_destroy(&a);
}

TEST(kmsg_golden_join_group_v6_request_flexible)
{
    static const uint8_t in[] = {
        0x03, 'g', '1',                   /* group_id: compact, len 2 */
        I32(6000),                        /* session_timeout_ms */
        I32(30000),                       /* rebalance_timeout_ms */
        0x02, 'm',                        /* member_id "m" */
        0x00,                             /* group_instance_id null */
        0x09, 'c','o','n','s','u','m','e','r',
        0x02,                             /* protocols: 1 */
        0x0b, 'r','o','u','n','d','r','o','b','i','n',
        0x01,                             /*   metadata: empty */
        0x00,                             /*   tags */
        0x00,                             /* tags */
    };
    struct arena a;
    arena_init(&a, 0);
    struct kreader r;
    kr_init(&r, in, sizeof(in));
    struct join_group_req q;
    ASSERT_EQ(kmsg_decode_join_group(&r, 6, &a, &q), 0);
    ASSERT_EQ(kr_left(&r), 0);
    ASSERT_EQ(q.session_timeout_ms, 6000);
    ASSERT_EQ(q.rebalance_timeout_ms, 30000);
    expect_str(q.member_id, "m");
    expect_str(q.group_instance_id, NULL);
    expect_str(q.protocols[0].name, "roundrobin");
    ASSERT_EQ(q.protocols[0].metadata.len, 0);
    /* a null protocol metadata (compact 0) is corrupt: the field is not nullable */
    uint8_t bad[sizeof(in)];
    memcpy(bad, in, sizeof(in));
    bad[sizeof(in) - 3] = 0x00;
    kr_init(&r, bad, sizeof(bad));
    ASSERT_EQ(kmsg_decode_join_group(&r, 6, &a, &q), -ERR_CORRUPT);
    arena_destroy(&a);
}

TEST(kmsg_golden_join_group_responses)
{
    struct join_group_member m[1] = {{S("m-1"), S("i"), {(const uint8_t *)"\x07", 1}}};
    struct join_group_resp resp = {.throttle_time_ms = 0, .error_code = 0, .generation_id = 4,
                                   .protocol_type = S("consumer"), .protocol_name = KSTR_NULL,
                                   .leader = S("m-1"), .member_id = S("m-1"), .members = m,
                                   .n_members = 1};
    /* v5: protocol_name null is written as "" (not nullable before v7); no protocol_type */
    static const uint8_t v5[] = {
        I32(0), I16(0), I32(4),
        I16(0),                           /* protocol_name "" */
        I16(3), 'm','-','1',              /* leader */
        I16(3), 'm','-','1',              /* member_id */
        I32(1),                           /* members */
        I16(3), 'm','-','1',
        I16(1), 'i',                      /*   group_instance_id (v5+) */
        I32(1), 7,                        /*   metadata */
    };
    ENCODES_TO(kmsg_encode_join_group(w, 5, &resp), v5);
    /* v7: flexible, protocol_type and a null protocol_name */
    static const uint8_t v7[] = {
        I32(0), I16(0), I32(4),
        0x09, 'c','o','n','s','u','m','e','r', /* protocol_type */
        0x00,                             /* protocol_name null */
        0x04, 'm','-','1',
        0x04, 'm','-','1',
        0x02,
        0x04, 'm','-','1',
        0x02, 'i',
        0x02, 7,
        0x00,                             /* member tags */
        0x00,                             /* tags */
    };
    ENCODES_TO(kmsg_encode_join_group(w, 7, &resp), v7);
    /* v0: no throttle time */
    resp.members = NULL;
    resp.n_members = 0;
    resp.error_code = 79;
    static const uint8_t v0[] = {I16(79), I32(4), I16(0), I16(3), 'm','-','1', I16(3), 'm','-','1',
                                 I32(0)};
    ENCODES_TO(kmsg_encode_join_group(w, 0, &resp), v0);
}

TEST(kmsg_golden_sync_heartbeat_leave)
{
    struct sync_group_resp sr = {1, 0, S("consumer"), S("range"), {(const uint8_t *)"ab", 2}};
    static const uint8_t s5[] = {I32(1), I16(0), 0x09, 'c','o','n','s','u','m','e','r',
                                 0x06, 'r','a','n','g','e', 0x03, 'a', 'b', 0x00};
    ENCODES_TO(kmsg_encode_sync_group(w, 5, &sr), s5);
    static const uint8_t s0[] = {I16(0), I32(2), 'a', 'b'};
    ENCODES_TO(kmsg_encode_sync_group(w, 0, &sr), s0);

    struct heartbeat_resp hr = {0, 27};
    static const uint8_t h4[] = {I32(0), I16(27), 0x00};
    ENCODES_TO(kmsg_encode_heartbeat(w, 4, &hr), h4);
    static const uint8_t h0[] = {I16(27)};
    ENCODES_TO(kmsg_encode_heartbeat(w, 0, &hr), h0);

    /* LeaveGroup v3 request: two members, one by instance id */
    static const uint8_t l3[] = {I16(1), 'g', I32(2), I16(1), 'm', I16(-1), I16(0), I16(2), 'i', '2'};
    struct arena a;
    arena_init(&a, 0);
    struct kreader r;
    kr_init(&r, l3, sizeof(l3));
    struct leave_group_req lq;
    ASSERT_EQ(kmsg_decode_leave_group(&r, 3, &a, &lq), 0);
    ASSERT_EQ(lq.n_members, 2);
    expect_str(lq.members[0].member_id, "m");
    expect_str(lq.members[0].group_instance_id, NULL);
    expect_str(lq.members[1].member_id, "");
    expect_str(lq.members[1].group_instance_id, "i2");
    /* v1: a single member id */
    static const uint8_t l1[] = {I16(1), 'g', I16(2), 'm', 'x'};
    kr_init(&r, l1, sizeof(l1));
    ASSERT_EQ(kmsg_decode_leave_group(&r, 1, &a, &lq), 0);
    ASSERT_EQ(lq.n_members, 1);
    expect_str(lq.members[0].member_id, "mx");
    arena_destroy(&a);

    struct leave_group_resp_member lm[1] = {{S("m"), KSTR_NULL, 25}};
    struct leave_group_resp lr = {0, 0, lm, 1};
    static const uint8_t lr4[] = {I32(0), I16(0), 0x02, 0x02, 'm', 0x00, I16(25), 0x00, 0x00};
    ENCODES_TO(kmsg_encode_leave_group(w, 4, &lr), lr4);
    static const uint8_t lr2[] = {I32(0), I16(0)};
    ENCODES_TO(kmsg_encode_leave_group(w, 2, &lr), lr2);
}

TEST(kmsg_golden_offset_commit_and_fetch)
{
    /* OffsetCommit v2 (kafka-python): retention_time_ms present, no leader epoch */
    static const uint8_t c2[] = {
        I16(1), 'g', I32(3), I16(1), 'm', I64(-1),
        I32(1), I16(1), 't', I32(1), I32(2), I64(99), I16(-1),
    };
    struct arena a;
    arena_init(&a, 0);
    struct kreader r;
    kr_init(&r, c2, sizeof(c2));
    struct offset_commit_req cq;
    ASSERT_EQ(kmsg_decode_offset_commit(&r, 2, &a, &cq), 0);
    ASSERT_EQ(kr_left(&r), 0);
    ASSERT_EQ(cq.generation_id, 3);
    ASSERT_EQ(cq.retention_time_ms, -1);
    ASSERT_EQ(cq.topics[0].partitions[0].partition_index, 2);
    ASSERT_EQ(cq.topics[0].partitions[0].committed_offset, 99);
    ASSERT_EQ(cq.topics[0].partitions[0].committed_leader_epoch, -1);
    expect_str(cq.topics[0].partitions[0].committed_metadata, NULL);
    /* v8: flexible, instance id, leader epoch */
    static const uint8_t c8[] = {
        0x02, 'g', I32(3), 0x02, 'm', 0x03, 'i', '1',
        0x02, 0x02, 't', 0x02, I32(0), I64(5), I32(7), 0x01, 0x00, 0x00, 0x00,
    };
    kr_init(&r, c8, sizeof(c8));
    ASSERT_EQ(kmsg_decode_offset_commit(&r, 8, &a, &cq), 0);
    ASSERT_EQ(kr_left(&r), 0);
    expect_str(cq.group_instance_id, "i1");
    ASSERT_EQ(cq.topics[0].partitions[0].committed_leader_epoch, 7);
    expect_str(cq.topics[0].partitions[0].committed_metadata, "");

    /* OffsetFetch v7: null topics (all), require_stable */
    static const uint8_t f7[] = {0x02, 'g', 0x00, 0x01, 0x00};
    struct offset_fetch_req fq;
    kr_init(&r, f7, sizeof(f7));
    ASSERT_EQ(kmsg_decode_offset_fetch(&r, 7, &a, &fq), 0);
    ASSERT_EQ(fq.n_topics, -1);
    ASSERT(fq.require_stable);
    /* v1: a null topic array is corrupt (nullable only from v2) */
    static const uint8_t f1[] = {I16(1), 'g', I32(-1)};
    kr_init(&r, f1, sizeof(f1));
    ASSERT_EQ(kmsg_decode_offset_fetch(&r, 1, &a, &fq), -ERR_CORRUPT);
    arena_destroy(&a);

    struct offset_fetch_resp_partition fp[1] = {{3, 42, 1, S(""), 0}};
    struct offset_fetch_resp_topic ft[1] = {{S("t"), fp, 1}};
    struct offset_fetch_resp fr = {.topics = ft, .n_topics = 1};
    static const uint8_t fr5[] = {I32(0), I32(1), I16(1), 't', I32(1), I32(3), I64(42), I32(1),
                                  I16(0), I16(0), I16(0)};
    ENCODES_TO(kmsg_encode_offset_fetch(w, 5, &fr), fr5);
    static const uint8_t fr1[] = {I32(1), I16(1), 't', I32(1), I32(3), I64(42), I16(0), I16(0)};
    ENCODES_TO(kmsg_encode_offset_fetch(w, 1, &fr), fr1);
}

TEST(kmsg_golden_list_describe_delete)
{
    /* ListGroups v4: states filter */
    static const uint8_t l4[] = {0x02, 0x07, 'S', 't', 'a', 'b', 'l', 'e', 0x00};
    struct arena a;
    arena_init(&a, 0);
    struct kreader r;
    kr_init(&r, l4, sizeof(l4));
    struct list_groups_req lq;
    ASSERT_EQ(kmsg_decode_list_groups(&r, 4, &a, &lq), 0);
    ASSERT_EQ(lq.n_states_filter, 1);
    expect_str(lq.states_filter[0], "Stable");
    static const uint8_t l0[] = {0};
    kr_init(&r, l0, 0);
    ASSERT_EQ(kmsg_decode_list_groups(&r, 0, &a, &lq), 0);
    ASSERT_EQ(lq.n_states_filter, 0);
    arena_destroy(&a);

    struct list_groups_group lg[1] = {{S("g"), S("consumer"), S("Empty")}};
    struct list_groups_resp lr = {0, 0, lg, 1};
    static const uint8_t lr4[] = {I32(0), I16(0), 0x02, 0x02, 'g', 0x09, 'c','o','n','s','u','m',
                                  'e','r', 0x06, 'E','m','p','t','y', 0x00, 0x00};
    ENCODES_TO(kmsg_encode_list_groups(w, 4, &lr), lr4);
    static const uint8_t lr0[] = {I16(0), I32(1), I16(1), 'g', I16(8), 'c','o','n','s','u','m',
                                  'e','r'};
    ENCODES_TO(kmsg_encode_list_groups(w, 0, &lr), lr0);

    struct describe_groups_member dm[1] = {{S("m"), KSTR_NULL, S("c"), S("/h"),
                                            {(const uint8_t *)"x", 1}, {(const uint8_t *)"", 0}}};
    struct describe_groups_group dg[1] = {{0, S("g"), S("Stable"), S("consumer"), S("range"), dm, 1,
                                           KAFKA_AUTHORIZED_OPERATIONS_OMITTED}};
    struct describe_groups_resp dr = {0, dg, 1};
    static const uint8_t dr4[] = {
        I32(0), I32(1), I16(0), I16(1), 'g', I16(6), 'S','t','a','b','l','e',
        I16(8), 'c','o','n','s','u','m','e','r', I16(5), 'r','a','n','g','e',
        I32(1), I16(1), 'm', I16(-1), I16(1), 'c', I16(2), '/', 'h', I32(1), 'x', I32(0),
        I32(INT32_MIN),
    };
    ENCODES_TO(kmsg_encode_describe_groups(w, 4, &dr), dr4);

    struct delete_groups_result res[1] = {{S("g"), 68}};
    struct delete_groups_resp del = {0, res, 1};
    static const uint8_t d2[] = {I32(0), 0x02, 0x02, 'g', I16(68), 0x00, 0x00};
    ENCODES_TO(kmsg_encode_delete_groups(w, 2, &del), d2);

    struct offset_delete_resp_partition op[1] = {{0, 86}};
    struct offset_delete_resp_topic ot[1] = {{S("t"), op, 1}};
    struct offset_delete_resp od = {0, 0, ot, 1};
    static const uint8_t o0[] = {I16(0), I32(0), I32(1), I16(1), 't', I32(1), I32(0), I16(86)};
    ENCODES_TO(kmsg_encode_offset_delete(w, 0, &od), o0);
}
/* clang-format on */

/* ---- comparisons for kmsg_roundtrip_test.c ---- */

static void str_eq(struct kstr x, struct kstr y)
{
    ASSERT_EQ(x.len, y.len);
    if (x.len > 0)
        ASSERT_MEMEQ(x.p, y.p, (size_t)x.len);
}

static void bytes_eq(struct kbytes x, struct kbytes y)
{
    ASSERT_EQ(x.len, y.len);
    if (x.len > 0)
        ASSERT_MEMEQ(x.p, y.p, (size_t)x.len);
}

static void i32s_eq(const int32_t *x, int32_t nx, const int32_t *y, int32_t ny)
{
    ASSERT_EQ(nx, ny);
    for (int32_t i = 0; i < nx; i++)
        ASSERT_EQ(x[i], y[i]);
}

static void join_req_eq(const struct join_group_req *a, const struct join_group_req *b)
{
    str_eq(a->group_id, b->group_id);
    ASSERT_EQ(a->session_timeout_ms, b->session_timeout_ms);
    ASSERT_EQ(a->rebalance_timeout_ms, b->rebalance_timeout_ms);
    str_eq(a->member_id, b->member_id);
    str_eq(a->group_instance_id, b->group_instance_id);
    str_eq(a->protocol_type, b->protocol_type);
    ASSERT_EQ(a->n_protocols, b->n_protocols);
    for (int32_t i = 0; i < a->n_protocols; i++) {
        str_eq(a->protocols[i].name, b->protocols[i].name);
        bytes_eq(a->protocols[i].metadata, b->protocols[i].metadata);
    }
    str_eq(a->reason, b->reason);
}

static void sync_req_eq(const struct sync_group_req *a, const struct sync_group_req *b)
{
    str_eq(a->group_id, b->group_id);
    ASSERT_EQ(a->generation_id, b->generation_id);
    str_eq(a->member_id, b->member_id);
    str_eq(a->group_instance_id, b->group_instance_id);
    str_eq(a->protocol_type, b->protocol_type);
    str_eq(a->protocol_name, b->protocol_name);
    ASSERT_EQ(a->n_assignments, b->n_assignments);
    for (int32_t i = 0; i < a->n_assignments; i++) {
        str_eq(a->assignments[i].member_id, b->assignments[i].member_id);
        bytes_eq(a->assignments[i].assignment, b->assignments[i].assignment);
    }
}

static void commit_req_eq(const struct offset_commit_req *a, const struct offset_commit_req *b)
{
    str_eq(a->group_id, b->group_id);
    ASSERT_EQ(a->generation_id, b->generation_id);
    str_eq(a->member_id, b->member_id);
    str_eq(a->group_instance_id, b->group_instance_id);
    ASSERT_EQ(a->retention_time_ms, b->retention_time_ms);
    ASSERT_EQ(a->n_topics, b->n_topics);
    for (int32_t i = 0; i < a->n_topics; i++) {
        str_eq(a->topics[i].name, b->topics[i].name);
        ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
        for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
            const struct offset_commit_req_partition *p = &a->topics[i].partitions[j];
            const struct offset_commit_req_partition *q = &b->topics[i].partitions[j];
            ASSERT_EQ(p->partition_index, q->partition_index);
            ASSERT_EQ(p->committed_offset, q->committed_offset);
            ASSERT_EQ(p->committed_leader_epoch, q->committed_leader_epoch);
            ASSERT_EQ(p->commit_timestamp, q->commit_timestamp);
            str_eq(p->committed_metadata, q->committed_metadata);
        }
    }
}

static void fetch_topics_eq(const struct offset_fetch_req_topic *x, int32_t nx,
                            const struct offset_fetch_req_topic *y, int32_t ny)
{
    ASSERT_EQ(nx, ny);
    for (int32_t i = 0; i < nx; i++) {
        str_eq(x[i].name, y[i].name);
        i32s_eq(x[i].partition_indexes, x[i].n_partition_indexes, y[i].partition_indexes,
                y[i].n_partition_indexes);
    }
}

void tgroup_req_eq(int16_t key, const union kmsg_any_req *x, const union kmsg_any_req *y)
{
    switch (key) {
    case KAPI_JOIN_GROUP:
        join_req_eq(&x->join_group, &y->join_group);
        break;
    case KAPI_SYNC_GROUP:
        sync_req_eq(&x->sync_group, &y->sync_group);
        break;
    case KAPI_HEARTBEAT:
        str_eq(x->heartbeat.group_id, y->heartbeat.group_id);
        ASSERT_EQ(x->heartbeat.generation_id, y->heartbeat.generation_id);
        str_eq(x->heartbeat.member_id, y->heartbeat.member_id);
        str_eq(x->heartbeat.group_instance_id, y->heartbeat.group_instance_id);
        break;
    case KAPI_LEAVE_GROUP:
        str_eq(x->leave_group.group_id, y->leave_group.group_id);
        ASSERT_EQ(x->leave_group.n_members, y->leave_group.n_members);
        for (int32_t i = 0; i < x->leave_group.n_members; i++) {
            str_eq(x->leave_group.members[i].member_id, y->leave_group.members[i].member_id);
            str_eq(x->leave_group.members[i].group_instance_id,
                   y->leave_group.members[i].group_instance_id);
            str_eq(x->leave_group.members[i].reason, y->leave_group.members[i].reason);
        }
        break;
    case KAPI_OFFSET_COMMIT:
        commit_req_eq(&x->offset_commit, &y->offset_commit);
        break;
    case KAPI_OFFSET_FETCH:
        str_eq(x->offset_fetch.group_id, y->offset_fetch.group_id);
        fetch_topics_eq(x->offset_fetch.topics, x->offset_fetch.n_topics, y->offset_fetch.topics,
                        y->offset_fetch.n_topics);
        ASSERT_EQ(x->offset_fetch.n_groups, y->offset_fetch.n_groups);
        for (int32_t i = 0; i < x->offset_fetch.n_groups; i++) {
            const struct offset_fetch_req_group *g = &x->offset_fetch.groups[i];
            const struct offset_fetch_req_group *h = &y->offset_fetch.groups[i];
            str_eq(g->group_id, h->group_id);
            fetch_topics_eq(g->topics, g->n_topics, h->topics, h->n_topics);
        }
        ASSERT_EQ(x->offset_fetch.require_stable, y->offset_fetch.require_stable);
        break;
    case KAPI_DESCRIBE_GROUPS:
        ASSERT_EQ(x->describe_groups.n_groups, y->describe_groups.n_groups);
        for (int32_t i = 0; i < x->describe_groups.n_groups; i++)
            str_eq(x->describe_groups.groups[i], y->describe_groups.groups[i]);
        ASSERT_EQ(x->describe_groups.include_authorized_operations,
                  y->describe_groups.include_authorized_operations);
        break;
    case KAPI_LIST_GROUPS:
        ASSERT_EQ(x->list_groups.n_states_filter, y->list_groups.n_states_filter);
        for (int32_t i = 0; i < x->list_groups.n_states_filter; i++)
            str_eq(x->list_groups.states_filter[i], y->list_groups.states_filter[i]);
        break;
    case KAPI_DELETE_GROUPS:
        ASSERT_EQ(x->delete_groups.n_groups_names, y->delete_groups.n_groups_names);
        for (int32_t i = 0; i < x->delete_groups.n_groups_names; i++)
            str_eq(x->delete_groups.groups_names[i], y->delete_groups.groups_names[i]);
        break;
    case KAPI_OFFSET_DELETE:
        str_eq(x->offset_delete.group_id, y->offset_delete.group_id);
        ASSERT_EQ(x->offset_delete.n_topics, y->offset_delete.n_topics);
        for (int32_t i = 0; i < x->offset_delete.n_topics; i++) {
            str_eq(x->offset_delete.topics[i].name, y->offset_delete.topics[i].name);
            i32s_eq(x->offset_delete.topics[i].partitions, x->offset_delete.topics[i].n_partitions,
                    y->offset_delete.topics[i].partitions, y->offset_delete.topics[i].n_partitions);
        }
        break;
    default:
        ASSERT(!"unknown key");
    }
}

static void describe_resp_eq(const struct describe_groups_resp *a,
                             const struct describe_groups_resp *b)
{
    ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
    ASSERT_EQ(a->n_groups, b->n_groups);
    for (int32_t i = 0; i < a->n_groups; i++) {
        const struct describe_groups_group *g = &a->groups[i], *h = &b->groups[i];
        ASSERT_EQ(g->error_code, h->error_code);
        str_eq(g->group_id, h->group_id);
        str_eq(g->group_state, h->group_state);
        str_eq(g->protocol_type, h->protocol_type);
        str_eq(g->protocol_data, h->protocol_data);
        ASSERT_EQ(g->authorized_operations, h->authorized_operations);
        ASSERT_EQ(g->n_members, h->n_members);
        for (int32_t j = 0; j < g->n_members; j++) {
            str_eq(g->members[j].member_id, h->members[j].member_id);
            str_eq(g->members[j].group_instance_id, h->members[j].group_instance_id);
            str_eq(g->members[j].client_id, h->members[j].client_id);
            str_eq(g->members[j].client_host, h->members[j].client_host);
            bytes_eq(g->members[j].member_metadata, h->members[j].member_metadata);
            bytes_eq(g->members[j].member_assignment, h->members[j].member_assignment);
        }
    }
}

static void fetch_resp_topics_eq(const struct offset_fetch_resp_topic *x, int32_t nx,
                                 const struct offset_fetch_resp_topic *y, int32_t ny)
{
    ASSERT_EQ(nx, ny);
    for (int32_t i = 0; i < nx; i++) {
        str_eq(x[i].name, y[i].name);
        ASSERT_EQ(x[i].n_partitions, y[i].n_partitions);
        for (int32_t j = 0; j < x[i].n_partitions; j++) {
            const struct offset_fetch_resp_partition *p = &x[i].partitions[j];
            const struct offset_fetch_resp_partition *q = &y[i].partitions[j];
            ASSERT_EQ(p->partition_index, q->partition_index);
            ASSERT_EQ(p->committed_offset, q->committed_offset);
            ASSERT_EQ(p->committed_leader_epoch, q->committed_leader_epoch);
            str_eq(p->metadata, q->metadata);
            ASSERT_EQ(p->error_code, q->error_code);
        }
    }
}

static void fetch_resp_eq(const struct offset_fetch_resp *a, const struct offset_fetch_resp *b)
{
    ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
    ASSERT_EQ(a->error_code, b->error_code);
    fetch_resp_topics_eq(a->topics, a->n_topics, b->topics, b->n_topics);
    ASSERT_EQ(a->n_groups, b->n_groups);
    for (int32_t i = 0; i < a->n_groups; i++) {
        str_eq(a->groups[i].group_id, b->groups[i].group_id);
        fetch_resp_topics_eq(a->groups[i].topics, a->groups[i].n_topics, b->groups[i].topics,
                             b->groups[i].n_topics);
        ASSERT_EQ(a->groups[i].error_code, b->groups[i].error_code);
    }
}

void tgroup_resp_eq(int16_t key, const union kmsg_any_resp *x, const union kmsg_any_resp *y)
{
    switch (key) {
    case KAPI_JOIN_GROUP: {
        const struct join_group_resp *a = &x->join_group, *b = &y->join_group;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        ASSERT_EQ(a->generation_id, b->generation_id);
        str_eq(a->protocol_type, b->protocol_type);
        str_eq(a->protocol_name, b->protocol_name);
        str_eq(a->leader, b->leader);
        ASSERT_EQ(a->skip_assignment, b->skip_assignment);
        str_eq(a->member_id, b->member_id);
        ASSERT_EQ(a->n_members, b->n_members);
        for (int32_t i = 0; i < a->n_members; i++) {
            str_eq(a->members[i].member_id, b->members[i].member_id);
            str_eq(a->members[i].group_instance_id, b->members[i].group_instance_id);
            bytes_eq(a->members[i].metadata, b->members[i].metadata);
        }
        break;
    }
    case KAPI_SYNC_GROUP:
        ASSERT_EQ(x->sync_group.throttle_time_ms, y->sync_group.throttle_time_ms);
        ASSERT_EQ(x->sync_group.error_code, y->sync_group.error_code);
        str_eq(x->sync_group.protocol_type, y->sync_group.protocol_type);
        str_eq(x->sync_group.protocol_name, y->sync_group.protocol_name);
        bytes_eq(x->sync_group.assignment, y->sync_group.assignment);
        break;
    case KAPI_HEARTBEAT:
        ASSERT_EQ(x->heartbeat.throttle_time_ms, y->heartbeat.throttle_time_ms);
        ASSERT_EQ(x->heartbeat.error_code, y->heartbeat.error_code);
        break;
    case KAPI_LEAVE_GROUP:
        ASSERT_EQ(x->leave_group.throttle_time_ms, y->leave_group.throttle_time_ms);
        ASSERT_EQ(x->leave_group.error_code, y->leave_group.error_code);
        ASSERT_EQ(x->leave_group.n_members, y->leave_group.n_members);
        for (int32_t i = 0; i < x->leave_group.n_members; i++) {
            str_eq(x->leave_group.members[i].member_id, y->leave_group.members[i].member_id);
            str_eq(x->leave_group.members[i].group_instance_id,
                   y->leave_group.members[i].group_instance_id);
            ASSERT_EQ(x->leave_group.members[i].error_code, y->leave_group.members[i].error_code);
        }
        break;
    case KAPI_OFFSET_COMMIT:
        ASSERT_EQ(x->offset_commit.throttle_time_ms, y->offset_commit.throttle_time_ms);
        ASSERT_EQ(x->offset_commit.n_topics, y->offset_commit.n_topics);
        for (int32_t i = 0; i < x->offset_commit.n_topics; i++) {
            const struct offset_commit_resp_topic *t = &x->offset_commit.topics[i];
            const struct offset_commit_resp_topic *u = &y->offset_commit.topics[i];
            str_eq(t->name, u->name);
            ASSERT_EQ(t->n_partitions, u->n_partitions);
            for (int32_t j = 0; j < t->n_partitions; j++) {
                ASSERT_EQ(t->partitions[j].partition_index, u->partitions[j].partition_index);
                ASSERT_EQ(t->partitions[j].error_code, u->partitions[j].error_code);
            }
        }
        break;
    case KAPI_OFFSET_FETCH:
        fetch_resp_eq(&x->offset_fetch, &y->offset_fetch);
        break;
    case KAPI_DESCRIBE_GROUPS:
        describe_resp_eq(&x->describe_groups, &y->describe_groups);
        break;
    case KAPI_LIST_GROUPS:
        ASSERT_EQ(x->list_groups.throttle_time_ms, y->list_groups.throttle_time_ms);
        ASSERT_EQ(x->list_groups.error_code, y->list_groups.error_code);
        ASSERT_EQ(x->list_groups.n_groups, y->list_groups.n_groups);
        for (int32_t i = 0; i < x->list_groups.n_groups; i++) {
            str_eq(x->list_groups.groups[i].group_id, y->list_groups.groups[i].group_id);
            str_eq(x->list_groups.groups[i].protocol_type, y->list_groups.groups[i].protocol_type);
            str_eq(x->list_groups.groups[i].group_state, y->list_groups.groups[i].group_state);
        }
        break;
    case KAPI_DELETE_GROUPS:
        ASSERT_EQ(x->delete_groups.throttle_time_ms, y->delete_groups.throttle_time_ms);
        ASSERT_EQ(x->delete_groups.n_results, y->delete_groups.n_results);
        for (int32_t i = 0; i < x->delete_groups.n_results; i++) {
            str_eq(x->delete_groups.results[i].group_id, y->delete_groups.results[i].group_id);
            ASSERT_EQ(x->delete_groups.results[i].error_code,
                      y->delete_groups.results[i].error_code);
        }
        break;
    case KAPI_OFFSET_DELETE:
        ASSERT_EQ(x->offset_delete.error_code, y->offset_delete.error_code);
        ASSERT_EQ(x->offset_delete.throttle_time_ms, y->offset_delete.throttle_time_ms);
        ASSERT_EQ(x->offset_delete.n_topics, y->offset_delete.n_topics);
        for (int32_t i = 0; i < x->offset_delete.n_topics; i++) {
            const struct offset_delete_resp_topic *t = &x->offset_delete.topics[i];
            const struct offset_delete_resp_topic *u = &y->offset_delete.topics[i];
            str_eq(t->name, u->name);
            ASSERT_EQ(t->n_partitions, u->n_partitions);
            for (int32_t j = 0; j < t->n_partitions; j++) {
                ASSERT_EQ(t->partitions[j].partition_index, u->partitions[j].partition_index);
                ASSERT_EQ(t->partitions[j].error_code, u->partitions[j].error_code);
            }
        }
        break;
    default:
        ASSERT(!"unknown key");
    }
}
