/* The __consumer_offsets record codec (golden bytes from Kafka's record JSON definitions, hostile
 * bytes) and the coordinator on a fake log: commits answered only once durable, replay rebuilds
 * groups and offsets, tombstones, load-in-progress, expiry, Java's String.hashCode placement. */
#include <string.h>

#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "group/coordinator.h"
#include "group/records.h"
#include "kafka/batch.h"
#include "kafka/errors.h"
#include "net/reactor.h"
#include "test.h"

/* clang-format off */
#define I16(x) (uint8_t)(((uint16_t)(x) >> 8) & 0xff), (uint8_t)((uint16_t)(x) & 0xff)
#define I32(x)                                                                                     \
    (uint8_t)(((uint32_t)(x) >> 24) & 0xff), (uint8_t)(((uint32_t)(x) >> 16) & 0xff),              \
        (uint8_t)(((uint32_t)(x) >> 8) & 0xff), (uint8_t)((uint32_t)(x) & 0xff)
#define I64(x) I32((uint64_t)(x) >> 32), I32((uint64_t)(x) & 0xffffffffu)

static uint8_t *flat(struct iobuf *b, size_t *len)
{
    uint8_t *p = iobuf_flatten(b, len);
    iobuf_destroy(b);
    return p;
}

TEST(grec_offset_key_and_value_golden)
{
    static const uint8_t key[] = {I16(1), I16(1), 'g', I16(1), 't', I32(7)};
    static const uint8_t val[] = {I16(3), I64(42), I32(5), I16(2), 'm', 'd', I64(1700000000000)};
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    grec_encode_offset_key(&w, kstr_c("g"), kstr_c("t"), 7);
    size_t len;
    uint8_t *got = flat(&b, &len);
    ASSERT_EQ(len, sizeof(key));
    ASSERT_MEMEQ(got, key, len);
    mem_free(got);
    iobuf_init(&b);
    struct grec_offset_value v = {42, 5, kstr_c("md"), 1700000000000};
    grec_encode_offset_value(&w, &v);
    got = flat(&b, &len);
    ASSERT_EQ(len, sizeof(val));
    ASSERT_MEMEQ(got, val, len);
    mem_free(got);

    struct grec_key k;
    ASSERT_EQ(grec_decode_key(key, sizeof(key), &k), 0);
    ASSERT_EQ(k.version, 1);
    ASSERT(kstr_eq(k.group, "g") && kstr_eq(k.topic, "t"));
    ASSERT_EQ(k.partition, 7);
    struct grec_offset_value d;
    ASSERT_EQ(grec_decode_offset_value(val, sizeof(val), &d), 0);
    ASSERT_EQ(d.offset, 42);
    ASSERT_EQ(d.leader_epoch, 5);
    ASSERT(kstr_eq(d.metadata, "md"));
    /* v1 (Kafka 0.10-2.0): no leader epoch, an expire timestamp after the commit timestamp */
    static const uint8_t v1[] = {I16(1), I64(9), I16(0), I64(100), I64(200)};
    ASSERT_EQ(grec_decode_offset_value(v1, sizeof(v1), &d), 0);
    ASSERT_EQ(d.offset, 9);
    ASSERT_EQ(d.leader_epoch, -1);
    ASSERT_EQ(d.commit_ts_ms, 100);
    /* v4: flexible */
    static const uint8_t v4[] = {I16(4), I64(9), I32(-1), 0x01, I64(100), 0x00};
    ASSERT_EQ(grec_decode_offset_value(v4, sizeof(v4), &d), 0);
    ASSERT_EQ(d.metadata.len, 0);
    /* the group key, v2 */
    static const uint8_t gk[] = {I16(2), I16(3), 'a', 'b', 'c'};
    ASSERT_EQ(grec_decode_key(gk, sizeof(gk), &k), 0);
    ASSERT_EQ(k.version, 2);
    ASSERT(kstr_eq(k.group, "abc"));
}

TEST(grec_group_value_golden_v3)
{
    static const uint8_t val[] = {
        I16(3),
        I16(8), 'c','o','n','s','u','m','e','r',
        I32(4),                       /* generation */
        I16(5), 'r','a','n','g','e',  /* protocol */
        I16(2), 'm','1',              /* leader */
        I64(1234),                    /* currentStateTimestamp */
        I32(1),                       /* members */
        I16(2), 'm','1',
        I16(-1),                      /*   groupInstanceId */
        I16(1), 'c',
        I16(2), '/','h',
        I32(30000), I32(10000),
        I32(1), 'S',
        I32(2), 'A','1',
    };
    struct arena a;
    arena_init(&a, 0);
    struct group_restore r;
    ASSERT_EQ(grec_decode_group_value(val, sizeof(val), &a, &r), 0);
    ASSERT(kstr_eq(r.protocol_type, "consumer"));
    ASSERT_EQ(r.generation, 4);
    ASSERT(kstr_eq(r.protocol_name, "range"));
    ASSERT(kstr_eq(r.leader_id, "m1"));
    ASSERT_EQ(r.state_ts_wall_ms, 1234);
    ASSERT_EQ(r.n_members, 1);
    ASSERT_EQ(r.members[0].instance_id.len, -1);
    ASSERT_EQ(r.members[0].rebalance_timeout_ms, 30000);
    ASSERT_EQ(r.members[0].assignment.len, 2);

    /* the encoder writes the same bytes for the same group */
    static const struct group_config cfg = {1, 60000, 0, 10, 1000};
    static const struct group_hooks hooks = {NULL, NULL, NULL, NULL};
    struct group *g = group_new(kstr_c("g"), &cfg, &hooks, 0);
    group_restore(g, &r, 0);
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    grec_encode_group_value(&w, g);
    size_t len;
    uint8_t *got = flat(&b, &len);
    ASSERT_EQ(len, sizeof(val));
    ASSERT_MEMEQ(got, val, len);
    mem_free(got);
    group_free(g, 0);

    /* every strict prefix is corrupt; an unknown version is unsupported */
    for (size_t n = 0; n < sizeof(val); n++) {
        uint8_t *p = mem_dup(val, n ? n : 1);
        int rc = grec_decode_group_value(p, n, &a, &r);
        mem_free(p);
        ASSERT_EQ(rc, -ERR_CORRUPT);
    }
    static const uint8_t v9[] = {I16(9), 0, 0};
    ASSERT_EQ(grec_decode_group_value(v9, sizeof(v9), &a, &r), -ERR_UNSUPPORTED);
    /* an absurd member count fails before allocating */
    uint8_t huge[sizeof(val)];
    memcpy(huge, val, sizeof(val));
    size_t count_at = 2 + 10 + 4 + 7 + 4 + 8;
    huge[count_at] = 0x7f;
    arena_reset(&a);
    ASSERT_EQ(grec_decode_group_value(huge, sizeof(huge), &a, &r), -ERR_CORRUPT);
    ASSERT_CMP(a.allocated, <, 1024);
    arena_destroy(&a);
}

TEST(grec_keys_reject_garbage)
{
    struct grec_key k;
    static const uint8_t trailing[] = {I16(2), I16(1), 'g', 0};
    ASSERT_EQ(grec_decode_key(trailing, sizeof(trailing), &k), -ERR_CORRUPT);
    static const uint8_t v3[] = {I16(3), I16(1), 'g'}; /* KIP-848 record types: skipped */
    ASSERT_EQ(grec_decode_key(v3, sizeof(v3), &k), -ERR_UNSUPPORTED);
    static const uint8_t nulltopic[] = {I16(1), I16(1), 'g', I16(-1), I32(0)};
    ASSERT_EQ(grec_decode_key(nulltopic, sizeof(nulltopic), &k), -ERR_CORRUPT);
    static const uint8_t longstr[] = {I16(0), I16(100), 'g'};
    ASSERT_EQ(grec_decode_key(longstr, sizeof(longstr), &k), -ERR_CORRUPT);
    ASSERT_EQ(grec_decode_key(longstr, 1, &k), -ERR_CORRUPT);
}
/* clang-format on */

TEST(grec_partition_for_matches_java_string_hashcode)
{
    /* values computed with Java's String.hashCode */
    ASSERT_EQ(grec_java_hash(kstr_c("")), 0);
    ASSERT_EQ(grec_java_hash(kstr_c("a")), 97);
    ASSERT_EQ(grec_java_hash(kstr_c("hello")), 99162322);
    ASSERT_EQ(grec_java_hash(kstr_c("my-group")), -1906497762);
    ASSERT_EQ(grec_java_hash(kstr_c("Aa")), grec_java_hash(kstr_c("BB"))); /* a famous clash */
    /* non-ASCII: "é" is one UTF-16 unit (0xE9); U+1F600 is a surrogate pair */
    ASSERT_EQ(grec_java_hash(kstr_c("\xc3\xa9")), 0xE9);
    ASSERT_EQ(grec_java_hash(kstr_c("\xf0\x9f\x98\x80")), 31 * 0xD83D + 0xDE00);
    /* "polygenelubricants".hashCode() == Integer.MIN_VALUE: Kafka's abs maps it to 0 */
    ASSERT_EQ(grec_java_hash(kstr_c("polygenelubricants")), INT32_MIN);
    ASSERT_EQ(grec_partition_for(kstr_c("polygenelubricants"), 16), 0);
    ASSERT_EQ(grec_partition_for(kstr_c("my-group"), 50), 1906497762 % 50);
    int32_t h = grec_java_hash(kstr_c("consumer-group-1"));
    ASSERT_EQ(grec_partition_for(kstr_c("consumer-group-1"), 16), (h < 0 ? -h : h) % 16);
}

/* ---- the coordinator on a fake log ---- */

struct fake_append {
    int32_t partition;
    uint8_t *batch;
    size_t len;
    void (*done)(void *arg, int rc, int64_t base);
    void *arg;
};

static struct fake_append appends[64];
static int n_appends;
static int commits_done;

static int fake_append(void *ctx, int32_t p, uint8_t *batch, size_t len,
                       void (*done)(void *, int, int64_t), void *arg)
{
    ASSERT(n_appends < 64);
    ASSERT_EQ(kbatch_validate(batch, len, true, true, 1 << 20), 0);
    appends[n_appends++] = (struct fake_append){p, mem_dup(batch, len), len, done, arg};
    return 0;
}

static bool fake_exists(void *ctx, struct kstr topic, int32_t p)
{
    return (kstr_eq(topic, "t") || kstr_eq(topic, "u")) && p >= 0 && p < 4;
}

static void nop_join(void *w, const struct group_join_result *r)
{
    *(int16_t *)w = r->error_code;
}

static void nop_sync(void *w, const struct group_sync_result *r)
{
    *(int16_t *)w = r->error_code;
}

static void on_commit_done(void *arg)
{
    commits_done++;
}

static struct coordinator *mk_coord_mode(struct reactor **r, bool cluster)
{
    *r = reactor_new();
    ASSERT(*r);
    struct coordinator_config cfg = {
        .group = {1000, 60000, 0, 100, 1 << 20},
        .offsets_partitions = 4,
        .offsets_retention_ms = 60000,
        .offsets_retention_check_ms = 600000,
        .offset_metadata_max_bytes = 10,
        .max_groups = 100,
        .cluster = cluster,
    };
    struct coordinator_io io = {fake_append, fake_exists, nop_join, nop_sync, NULL};
    n_appends = 0;
    commits_done = 0;
    return coordinator_new(*r, &cfg, &io);
}

static struct coordinator *mk_coord(struct reactor **r)
{
    return mk_coord_mode(r, false);
}

/* Completes the fake appends in order (rc for all). */
static void complete_appends(int rc)
{
    for (int i = 0; i < n_appends; i++) {
        appends[i].done(appends[i].arg, rc, 0);
    }
}

static void free_appends(void)
{
    for (int i = 0; i < n_appends; i++)
        mem_free(appends[i].batch);
    n_appends = 0;
}

static struct offset_commit_req commit_req(struct arena *a, const char *group, int64_t off,
                                           const char *md)
{
    struct offset_commit_req q = {.group_id = kstr_c(group),
                                  .generation_id = -1,
                                  .member_id = kstr_c(""),
                                  .group_instance_id = KSTR_NULL,
                                  .retention_time_ms = -1,
                                  .n_topics = 1};
    q.topics = arena_calloc(a, 1, sizeof(*q.topics));
    q.topics[0].name = kstr_c("t");
    q.topics[0].n_partitions = 2;
    q.topics[0].partitions = arena_calloc(a, 2, sizeof(*q.topics[0].partitions));
    q.topics[0].partitions[0] = (struct offset_commit_req_partition){1, off, -1, kstr_c(md), -1};
    q.topics[0].partitions[1] = (struct offset_commit_req_partition){9, off, -1, KSTR_NULL, -1};
    return q;
}

static struct offset_commit_resp commit_resp(struct arena *a)
{
    struct offset_commit_resp r = {.n_topics = 1};
    r.topics = arena_calloc(a, 1, sizeof(*r.topics));
    r.topics[0].n_partitions = 2;
    r.topics[0].partitions = arena_calloc(a, 2, sizeof(*r.topics[0].partitions));
    return r;
}

static int64_t fetched(struct coordinator *c, struct arena *a, const char *group, int32_t p)
{
    struct offset_fetch_req_topic t = {kstr_c("t"), &p, 1};
    struct offset_fetch_req q = {.group_id = kstr_c(group), .topics = &t, .n_topics = 1};
    struct offset_fetch_resp resp;
    coordinator_fetch_offsets(c, &q, a, &resp);
    ASSERT_EQ(resp.error_code, 0);
    return resp.topics[0].partitions[0].committed_offset;
}

TEST(coordinator_commit_is_answered_once_durable_and_replays)
{
    struct reactor *r;
    struct coordinator *c = mk_coord(&r);
    struct arena a;
    arena_init(&a, 0);
    struct offset_commit_req q = commit_req(&a, "g", 42, "ok");
    struct offset_commit_resp resp = commit_resp(&a);
    ASSERT(coordinator_commit(c, &q, &resp, on_commit_done, NULL));
    ASSERT_EQ(commits_done, 0);
    ASSERT_EQ(resp.topics[0].partitions[1].error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ASSERT_EQ(n_appends, 1);
    ASSERT_EQ(appends[0].partition, coordinator_partition_for(c, kstr_c("g")));
    ASSERT_EQ(fetched(c, &a, "g", 1), -1); /* not visible before it is durable */
    complete_appends(0);
    ASSERT_EQ(commits_done, 1);
    ASSERT_EQ(resp.topics[0].partitions[0].error_code, KERR_NONE);
    ASSERT_EQ(fetched(c, &a, "g", 1), 42);

    /* metadata over offset.metadata.max.bytes: refused per partition, nothing written */
    struct offset_commit_req q2 = commit_req(&a, "g", 43, "far-too-long-metadata");
    q2.topics[0].n_partitions = 1;
    struct offset_commit_resp resp2 = commit_resp(&a);
    resp2.topics[0].n_partitions = 1;
    free_appends();
    ASSERT(!coordinator_commit(c, &q2, &resp2, on_commit_done, NULL));
    ASSERT_EQ(resp2.topics[0].partitions[0].error_code, KERR_OFFSET_METADATA_TOO_LARGE);
    ASSERT_EQ(n_appends, 0);

    /* a failed write: COORDINATOR_NOT_AVAILABLE, the offset unchanged */
    struct offset_commit_req q3 = commit_req(&a, "g", 44, "");
    struct offset_commit_resp resp3 = commit_resp(&a);
    ASSERT(coordinator_commit(c, &q3, &resp3, on_commit_done, NULL));
    complete_appends(-ERR_FENCED);
    ASSERT_EQ(resp3.topics[0].partitions[0].error_code, KERR_COORDINATOR_NOT_AVAILABLE);
    ASSERT_EQ(fetched(c, &a, "g", 1), 42);

    /* a non-admin commit to an unknown group: ILLEGAL_GENERATION */
    struct offset_commit_req q4 = commit_req(&a, "other", 1, "");
    q4.generation_id = 3;
    q4.member_id = kstr_c("m");
    struct offset_commit_resp resp4 = commit_resp(&a);
    free_appends();
    ASSERT(!coordinator_commit(c, &q4, &resp4, on_commit_done, NULL));
    ASSERT_EQ(resp4.topics[0].partitions[0].error_code, KERR_ILLEGAL_GENERATION);
    ASSERT(!coordinator_find(c, kstr_c("other"))); /* nothing left behind */

    coordinator_free(c);
    reactor_free(r);
    arena_destroy(&a);
    free_appends();
}

/* Feeds every record of the fake log's batches to a new coordinator. */
static void replay_into(struct coordinator *c)
{
    for (int p = 0; p < 4; p++)
        coordinator_load_begin(c, p);
    for (int i = 0; i < n_appends; i++) {
        struct kbatch_header h;
        kbatch_parse_header(appends[i].batch, &h);
        struct krecord_iter it;
        krecord_iter_init(&it, appends[i].batch + KBATCH_HEADER_SIZE,
                          appends[i].len - KBATCH_HEADER_SIZE, h.records_count);
        struct krecord rec;
        while (krecord_iter_next(&it, &rec) == 1)
            coordinator_load_record(c, appends[i].partition, rec.key, rec.value);
    }
    for (int p = 0; p < 4; p++)
        coordinator_load_end(c, p);
}

TEST(coordinator_replay_rebuilds_groups_offsets_and_deletions)
{
    struct reactor *r;
    struct coordinator *c = mk_coord(&r);
    struct arena a;
    arena_init(&a, 0);
    /* a stable one-member group with an offset, and a group deleted after commits */
    int16_t jerr = -1, serr = -1;
    struct join_group_protocol proto = {kstr_c("range"), {(const uint8_t *)"sub", 3}};
    struct group_join_req jr = {.member_id = kstr_c(""),
                                .instance_id = KSTR_NULL,
                                .client_id = kstr_c("cl"),
                                .client_host = kstr_c("/h"),
                                .protocol_type = kstr_c("consumer"),
                                .session_timeout_ms = 10000,
                                .rebalance_timeout_ms = 10000,
                                .protocols = &proto,
                                .n_protocols = 1};
    coordinator_join(c, kstr_c("live"), &jr, &jerr);
    ASSERT_EQ(jerr, 0);
    struct group *g = coordinator_find(c, kstr_c("live"));
    char member[128];
    strcpy(member, g->members[0]->member_id);
    struct sync_group_assignment as = {kstr_c(member), {(const uint8_t *)"A", 1}};
    struct group_sync_req sr = {kstr_c(member), KSTR_NULL, 1, KSTR_NULL, KSTR_NULL, &as, 1};
    coordinator_sync(c, kstr_c("live"), &sr, &serr);
    ASSERT_EQ(serr, 0);
    struct offset_commit_req q = commit_req(&a, "gone", 7, "");
    struct offset_commit_resp resp = commit_resp(&a);
    coordinator_commit(c, &q, &resp, on_commit_done, NULL);
    complete_appends(0); /* applies the commit; the group record needs no completion */
    bool pending;
    ASSERT_EQ(coordinator_delete_group(c, kstr_c("gone"), on_commit_done, NULL, &pending), 0);
    ASSERT(pending);
    ASSERT(!coordinator_find(c, kstr_c("gone")));
    ASSERT_EQ(coordinator_delete_group(c, kstr_c("live"), NULL, NULL, &pending),
              KERR_NON_EMPTY_GROUP);

    struct reactor *r2;
    int saved = n_appends;
    struct coordinator *c2 = mk_coord(&r2);
    n_appends = saved;
    replay_into(c2);
    struct group *g2 = coordinator_find(c2, kstr_c("live"));
    ASSERT(g2);
    ASSERT_EQ(g2->state, GROUP_STABLE);
    ASSERT_EQ(g2->generation, 1);
    ASSERT_STREQ(g2->members[0]->member_id, member);
    ASSERT_EQ(g2->members[0]->assignment_len, 1);
    ASSERT(!coordinator_find(c2, kstr_c("gone"))); /* tombstoned */
    ASSERT_EQ(coordinator_heartbeat(
                  c2, &(struct heartbeat_req){kstr_c("live"), 1, kstr_c(member), KSTR_NULL}),
              KERR_NONE);
    coordinator_free(c2);
    reactor_free(r2);
    coordinator_free(c);
    reactor_free(r);
    arena_destroy(&a);
    free_appends();
}

TEST(coordinator_refuses_while_loading_and_skips_garbage_records)
{
    struct reactor *r;
    struct coordinator *c = mk_coord(&r);
    int32_t p = coordinator_partition_for(c, kstr_c("g"));
    coordinator_load_begin(c, p);
    struct heartbeat_req hb = {kstr_c("g"), 1, kstr_c("m"), KSTR_NULL};
    ASSERT_EQ(coordinator_heartbeat(c, &hb), KERR_COORDINATOR_LOAD_IN_PROGRESS);
    int16_t jerr = -1;
    struct group_join_req jr = {.member_id = kstr_c(""),
                                .instance_id = KSTR_NULL,
                                .protocol_type = kstr_c("consumer"),
                                .session_timeout_ms = 10000};
    coordinator_join(c, kstr_c("g"), &jr, &jerr);
    ASSERT_EQ(jerr, KERR_COORDINATOR_LOAD_IN_PROGRESS);
    /* garbage keys and values are skipped, not trusted */
    static const uint8_t junk[] = {0xff, 0xff, 1, 2, 3};
    coordinator_load_record(c, p, (struct kbytes){junk, 5}, (struct kbytes){junk, 5});
    static const uint8_t okey[] = {0, 1, 0, 1, 'g', 0, 1, 't', 0, 0, 0, 1};
    coordinator_load_record(c, p, (struct kbytes){okey, sizeof(okey)}, (struct kbytes){junk, 5});
    coordinator_load_record(c, p, (struct kbytes){NULL, -1}, (struct kbytes){junk, 5});
    coordinator_load_end(c, p);
    ASSERT_EQ(coordinator_group_count(c), 0);
    ASSERT_EQ(coordinator_heartbeat(c, &hb), KERR_UNKNOWN_MEMBER_ID);
    struct describe_groups_group d;
    struct arena a;
    arena_init(&a, 0);
    coordinator_describe(c, kstr_c(""), &a, &d);
    ASSERT_EQ(d.error_code, KERR_INVALID_GROUP_ID);
    coordinator_describe(c, kstr_c("nope"), &a, &d);
    ASSERT_EQ(d.error_code, KERR_NONE);
    ASSERT(kstr_eq(d.group_state, "Dead"));
    arena_destroy(&a);
    coordinator_free(c);
    reactor_free(r);
    free_appends();
}

/* Cluster mode: a partition is served only between load_end and unload (the broker follows its
 * Raft leadership); a commit whose append completes after the unload changes nothing here and,
 * failing, sends the client to the new coordinator. */
TEST(coordinator_in_cluster_mode_serves_only_partitions_it_leads)
{
    struct reactor *r;
    struct coordinator *c = mk_coord_mode(&r, true);
    struct arena a;
    arena_init(&a, 0);
    int32_t p = coordinator_partition_for(c, kstr_c("g"));
    struct heartbeat_req hb = {kstr_c("g"), 1, kstr_c("m"), KSTR_NULL};
    ASSERT(!coordinator_owns(c, p));
    ASSERT_EQ(coordinator_heartbeat(c, &hb), KERR_NOT_COORDINATOR);
    struct offset_commit_req q = commit_req(&a, "g", 5, "");
    struct offset_commit_resp resp = commit_resp(&a);
    ASSERT(!coordinator_commit(c, &q, &resp, on_commit_done, NULL));
    ASSERT_EQ(resp.topics[0].partitions[0].error_code, KERR_NOT_COORDINATOR);
    ASSERT_EQ(n_appends, 0);

    coordinator_load_begin(c, p); /* won the leadership: replaying */
    ASSERT(coordinator_owns(c, p));
    ASSERT_EQ(coordinator_heartbeat(c, &hb), KERR_COORDINATOR_LOAD_IN_PROGRESS);
    coordinator_load_end(c, p);
    resp = commit_resp(&a);
    ASSERT(coordinator_commit(c, &q, &resp, on_commit_done, NULL));
    complete_appends(0);
    ASSERT_EQ(resp.topics[0].partitions[0].error_code, KERR_NONE);
    ASSERT_EQ(fetched(c, &a, "g", 1), 5);
    free_appends();

    /* a commit in flight when the leadership goes: not applied; its failure = NOT_COORDINATOR */
    struct offset_commit_req q2 = commit_req(&a, "g", 6, "");
    struct offset_commit_resp resp2 = commit_resp(&a);
    ASSERT(coordinator_commit(c, &q2, &resp2, on_commit_done, NULL));
    coordinator_unload(c, p);
    ASSERT(!coordinator_owns(c, p));
    ASSERT(!coordinator_find(c, kstr_c("g")));
    ASSERT_EQ(coordinator_group_count(c), 0);
    complete_appends(-ERR_FENCED);
    ASSERT_EQ(resp2.topics[0].partitions[0].error_code, KERR_NOT_COORDINATOR);
    free_appends();
    struct offset_commit_resp resp3 = commit_resp(&a);
    ASSERT(!coordinator_commit(c, &q2, &resp3, on_commit_done, NULL));
    ASSERT_EQ(resp3.topics[0].partitions[0].error_code, KERR_NOT_COORDINATOR);

    /* leading again: the replay starts from nothing (no group left from the first time) */
    coordinator_load_begin(c, p);
    ASSERT_EQ(coordinator_group_count(c), 0);
    coordinator_load_end(c, p);
    ASSERT_EQ(fetched(c, &a, "g", 1), -1);
    /* another partition of the topic was never ours */
    ASSERT(!coordinator_owns(c, (p + 1) % 4));
    /* a new partition count unloads everything */
    coordinator_set_partitions(c, 8);
    for (int32_t i = 0; i < 8; i++)
        ASSERT(!coordinator_owns(c, i));
    arena_destroy(&a);
    coordinator_free(c);
    reactor_free(r);
    free_appends();
}

TEST(coordinator_expires_offsets_of_empty_groups_only)
{
    struct reactor *r;
    struct coordinator *c = mk_coord(&r);
    struct arena a;
    arena_init(&a, 0);
    struct offset_commit_req q = commit_req(&a, "idle", 5, "");
    struct offset_commit_resp resp = commit_resp(&a);
    coordinator_commit(c, &q, &resp, on_commit_done, NULL);
    complete_appends(0);
    free_appends();
    struct group *g = coordinator_find(c, kstr_c("idle"));
    ASSERT(g);
    int64_t ts = group_offset_get(g, kstr_c("t"), 1)->commit_ts_ms;
    coordinator_expire(c, ts + 59999);
    ASSERT(coordinator_find(c, kstr_c("idle")));
    ASSERT_EQ(n_appends, 0);
    coordinator_expire(c, ts + 60000 + 5000); /* past the retention (60 s here) */
    ASSERT(!coordinator_find(c, kstr_c("idle")));
    ASSERT_EQ(n_appends, 1); /* tombstones: the offset and the group */
    struct kbatch_header h;
    kbatch_parse_header(appends[0].batch, &h);
    ASSERT_EQ(h.records_count, 2);
    coordinator_free(c);
    reactor_free(r);
    arena_destroy(&a);
    free_appends();
}

TEST(coordinator_forgets_offsets_of_a_deleted_topic)
{
    struct reactor *r;
    struct coordinator *c = mk_coord(&r);
    struct arena a;
    arena_init(&a, 0);
    /* group "both": offsets of t and u; group "only": offsets of t */
    struct offset_commit_req q = commit_req(&a, "both", 5, "");
    struct offset_commit_resp resp = commit_resp(&a);
    coordinator_commit(c, &q, &resp, on_commit_done, NULL);
    q.topics[0].name = kstr_c("u");
    coordinator_commit(c, &q, &resp, on_commit_done, NULL);
    q = commit_req(&a, "only", 7, "");
    coordinator_commit(c, &q, &resp, on_commit_done, NULL);
    complete_appends(0);
    free_appends();
    coordinator_forget_topic(c, "v"); /* no group has offsets of v: nothing is written */
    ASSERT_EQ(n_appends, 0);
    coordinator_forget_topic(c, "t");
    struct group *g = coordinator_find(c, kstr_c("both"));
    ASSERT(g);
    ASSERT(!group_offset_get(g, kstr_c("t"), 1));
    ASSERT(group_offset_get(g, kstr_c("u"), 1));  /* (partition 9 of the request does not exist) */
    ASSERT(!coordinator_find(c, kstr_c("only"))); /* Empty and without offsets: removed */
    ASSERT_EQ(n_appends, 2);
    int32_t recs = 0;
    for (int i = 0; i < n_appends; i++) {
        struct kbatch_header h;
        kbatch_parse_header(appends[i].batch, &h);
        recs += h.records_count;
    }
    ASSERT_EQ(recs, 1 + 2); /* "both": t/1's tombstone; "only": t/1's and the group's */
    coordinator_free(c);
    reactor_free(r);
    arena_destroy(&a);
    free_appends();
}

TEST(coordinator_lists_by_state_and_deletes_offsets_unless_subscribed)
{
    struct reactor *r;
    struct coordinator *c = mk_coord(&r);
    struct arena a;
    arena_init(&a, 0);
    /* "idle": offsets only (Empty); "busy": a member subscribed to topic t */
    struct offset_commit_req q = commit_req(&a, "idle", 5, "");
    struct offset_commit_resp resp = commit_resp(&a);
    coordinator_commit(c, &q, &resp, on_commit_done, NULL);
    complete_appends(0);
    free_appends();
    static const uint8_t sub[] = {0, 0, 0, 0, 0, 1, 0, 1, 't', 0xff, 0xff, 0xff, 0xff};
    struct join_group_protocol proto = {kstr_c("range"), {sub, sizeof(sub)}};
    struct group_join_req jr = {.member_id = kstr_c(""),
                                .instance_id = KSTR_NULL,
                                .client_id = kstr_c("cl"),
                                .client_host = kstr_c("/h"),
                                .protocol_type = kstr_c("consumer"),
                                .session_timeout_ms = 10000,
                                .protocols = &proto,
                                .n_protocols = 1};
    int16_t jerr = -1;
    coordinator_join(c, kstr_c("busy"), &jr, &jerr);
    ASSERT_EQ(jerr, 0);

    struct kstr states[1] = {kstr_c("empty")};
    struct list_groups_req lq = {states, 1};
    struct list_groups_resp lr;
    coordinator_list(c, &lq, &a, &lr);
    ASSERT_EQ(lr.n_groups, 1);
    ASSERT(kstr_eq(lr.groups[0].group_id, "idle"));
    lq.n_states_filter = 0;
    coordinator_list(c, &lq, &a, &lr);
    ASSERT_EQ(lr.n_groups, 2);

    int32_t parts[2] = {1, 7};
    struct offset_delete_req_topic dt = {kstr_c("t"), parts, 2};
    struct offset_delete_req dq = {kstr_c("busy"), &dt, 1};
    struct offset_delete_resp_partition rp[2] = {{1, -1}, {7, -1}};
    struct offset_delete_resp_topic rt = {kstr_c("t"), rp, 2};
    struct offset_delete_resp dr = {0, 0, &rt, 1};
    bool pending;
    ASSERT_EQ(coordinator_delete_offsets(c, &dq, &dr, NULL, NULL, &pending), KERR_NONE);
    ASSERT_EQ(rp[0].error_code, KERR_GROUP_SUBSCRIBED_TO_TOPIC);
    ASSERT(!pending);
    dq.group_id = kstr_c("idle");
    ASSERT_EQ(coordinator_delete_offsets(c, &dq, &dr, on_commit_done, NULL, &pending), KERR_NONE);
    ASSERT_EQ(rp[0].error_code, KERR_NONE);
    ASSERT_EQ(rp[1].error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ASSERT(pending);
    ASSERT_EQ(fetched(c, &a, "idle", 1), -1);
    dq.group_id = kstr_c("never");
    ASSERT_EQ(coordinator_delete_offsets(c, &dq, &dr, NULL, NULL, &pending),
              KERR_GROUP_ID_NOT_FOUND);
    complete_appends(0);
    coordinator_free(c);
    reactor_free(r);
    arena_destroy(&a);
    free_appends();
}
