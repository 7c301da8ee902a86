/* Records of __cluster_metadata (controller/records.h): round trips, and refusal of truncated,
 * bit-flipped, oversized and unknown input. */
#include "base/errors.h"
#include "base/mem.h"
#include "controller/records.h"
#include "controller_util.h"
#include "test.h"

/* One valid record of each type. */
static size_t sample_records(struct ctl_rec *v)
{
    size_t n = 0;
    struct ctl_rec *r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_REGISTER_BROKER;
    r->broker.node_id = 3;
    r->broker.incarnation = ctu_uuid(77);
    strcpy(r->broker.host, "broker-3.example");
    r->broker.port = 9092;
    strcpy(r->broker.cluster_addr, "10.0.0.3:9093");

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_BROKER_LIVENESS;
    r->liveness.node_id = 3;
    r->liveness.fenced = true;

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_TOPIC;
    strcpy(r->topic.name, "orders.v2_x-y");
    r->topic.id = ctu_uuid(5);
    r->topic.n_partitions = 12;

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_PARTITION;
    r->partition.topic_id = ctu_uuid(5);
    r->partition.partition = 11;
    r->partition.leader = 2;
    r->partition.leader_epoch = 7;
    r->partition.n_replicas = 3;
    r->partition.replicas[0] = 1;
    r->partition.replicas[1] = 2;
    r->partition.replicas[2] = 3;

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_REMOVE_TOPIC;
    r->remove_topic.id = ctu_uuid(5);

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_CONFIG;
    r->config.resource_type = CTL_RESOURCE_TOPIC;
    strcpy(r->config.resource, "orders");
    strcpy(r->config.key, "retention.ms");
    strcpy(r->config.value, "86400000");

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_CONFIG;
    r->config.resource_type = CTL_RESOURCE_BROKER;
    strcpy(r->config.resource, "");
    strcpy(r->config.key, "log.retention.ms");
    r->config.deleted = true;

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_PRODUCER_IDS;
    r->pids.broker_id = 2;
    r->pids.first = 5000;
    r->pids.size = 1000;

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_VOTERS;
    r->voters.n = 3;
    r->voters.ids[0] = 1;
    r->voters.ids[1] = 4;
    r->voters.ids[2] = 2;

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_USER_SCRAM;
    strcpy(r->user.name, "alice@example, =x");
    r->user.mechanism = CTL_SCRAM_SHA512;
    r->user.iterations = 8192;
    r->user.salt_len = 24;
    r->user.key_len = 64;
    for (int i = 0; i < 64; i++) {
        r->user.salt[i % 24] = (uint8_t)(i * 7);
        r->user.stored_key[i] = (uint8_t)(i + 1);
        r->user.server_key[i] = (uint8_t)(255 - i);
    }

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_ACL;
    r->acl = (struct ctl_rec_acl){.resource_type = 2, .pattern_type = 4, .operation = 4,
                                  .permission = 3};
    strcpy(r->acl.resource_name, "orders-");
    strcpy(r->acl.principal, "User:alice");
    strcpy(r->acl.host, "*");

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_BROKER_ENDPOINT;
    r->endpoint.node_id = 3;
    strcpy(r->endpoint.listener, "SASL");
    strcpy(r->endpoint.host, "broker-3.example");
    r->endpoint.port = 9094;

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_QUOTA;
    r->quota.user_kind = CTL_QUOTA_NAMED;
    strcpy(r->quota.user, "alice");
    r->quota.client_kind = CTL_QUOTA_DEFAULT;
    strcpy(r->quota.key, "producer_byte_rate");
    r->quota.value = 1048576.0;

    r = &v[n++];
    memset(r, 0, sizeof(*r));
    r->type = CTL_REC_LEADERS;
    r->leaders.node_id = 4;
    r->leaders.back = true;
    return n;
}

/* The first sample of that type (v holds n samples). */
static struct ctl_rec sample_of(const struct ctl_rec *v, size_t n, enum ctl_rec_type type)
{
    size_t i = 0;
    while (i < n && v[i].type != type)
        i++;
    ASSERT(i < n);
    return v[i];
}

TEST(controller_records_roundtrip_every_type)
{
    struct ctl_rec v[16];
    size_t n = sample_records(v);
    ASSERT_EQ(n, 14);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint8_t *p = ctu_encode(&v[i], &len);
        struct ctl_rec d;
        ASSERT_EQ(ctl_rec_decode(p, len, &d), 0);
        ASSERT_EQ(d.type, v[i].type);
        ASSERT_MEMEQ(&d, &v[i], sizeof(d)); /* both zero-filled where unused */
        mem_free(p);
    }
}

TEST(controller_records_partition_encoding_is_exact)
{
    struct ctl_rec v[16];
    sample_records(v);
    size_t len;
    uint8_t *p = ctu_encode(&v[3], &len);
    /* type, version, uuid, partition, leader, epoch, count, 3 replicas */
    ASSERT_EQ(len, 2 + 2 + 16 + 4 + 4 + 4 + 4 + 3 * 4);
    ASSERT_EQ(p[0], 0);
    ASSERT_EQ(p[1], CTL_REC_PARTITION);
    ASSERT_EQ(p[2], 0);
    ASSERT_EQ(p[3], 0);
    ASSERT_EQ(p[4], 0xAB);
    ASSERT_EQ(p[len - 1], 3);
    mem_free(p);
}

TEST(controller_records_every_truncation_is_refused)
{
    struct ctl_rec v[16];
    size_t n = sample_records(v);
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint8_t *p = ctu_encode(&v[i], &len);
        for (size_t cut = 0; cut < len; cut++) {
            struct ctl_rec d;
            int rc = ctl_rec_decode(p, cut, &d);
            ASSERT_NE(rc, 0);
            ASSERT_EQ(d.type, 0); /* zeroed on error */
        }
        mem_free(p);
    }
}

TEST(controller_records_trailing_bytes_are_refused)
{
    struct ctl_rec v[16];
    sample_records(v);
    size_t len;
    uint8_t *p = ctu_encode(&v[0], &len);
    uint8_t *q = mem_alloc(len + 1);
    memcpy(q, p, len);
    q[len] = 0;
    struct ctl_rec d;
    ASSERT_EQ(ctl_rec_decode(q, len + 1, &d), -ERR_CORRUPT);
    mem_free(q);
    mem_free(p);
}

/* Every single-bit flip either is refused or decodes into a record that is valid and encodes
 * back to exactly the flipped bytes (no silent normalisation, no crash). */
TEST(controller_records_bit_flips_refused_or_exact)
{
    struct ctl_rec v[16];
    size_t n = sample_records(v);
    size_t refused = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        uint8_t *p = ctu_encode(&v[i], &len);
        for (size_t bit = 0; bit < len * 8; bit++) {
            p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            struct ctl_rec d;
            int rc = ctl_rec_decode(p, len, &d);
            total++;
            if (rc != 0) {
                refused++;
            } else {
                ASSERT(ctl_rec_valid(&d));
                size_t len2;
                uint8_t *p2 = ctu_encode(&d, &len2);
                ASSERT_EQ(len2, len);
                ASSERT_MEMEQ(p2, p, len);
                mem_free(p2);
            }
            p[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        }
        mem_free(p);
    }
    ASSERT_CMP(refused, >, total / 10);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

TEST(controller_records_unknown_type_or_version_unsupported)
{
    struct ctl_rec v[16];
    sample_records(v);
    size_t len;
    uint8_t *p = ctu_encode(&v[1], &len);
    struct ctl_rec d;
    put16(p + 2, 1); /* version 1 */
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_UNSUPPORTED);
    put16(p + 2, 0);
    put16(p, 99);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_UNSUPPORTED);
    put16(p, 0);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_UNSUPPORTED);
    put16(p, CTL_REC_BROKER_LIVENESS);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), 0);
    mem_free(p);
}

TEST(controller_records_oversized_counts_and_strings_refused)
{
    struct ctl_rec v[16];
    sample_records(v);
    size_t len;
    struct ctl_rec d;
    /* replica count: 17 (> CTL_REPLICAS_MAX), huge, negative */
    uint8_t *p = ctu_encode(&v[3], &len);
    size_t count_at = 2 + 2 + 16 + 4 + 4 + 4;
    put32(p + count_at, CTL_REPLICAS_MAX + 1);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    put32(p + count_at, 0x7fffffff);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    put32(p + count_at, 0xffffffff);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    put32(p + count_at, 0);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    mem_free(p);

    /* a host string whose length runs past the end, and one over CTL_HOST_MAX bytes */
    p = ctu_encode(&v[0], &len);
    size_t host_at = 2 + 2 + 4 + 16;
    put16(p + host_at, 0x7fff);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    mem_free(p);
    uint8_t big[2 + 2 + 4 + 16 + 2 + 300 + 4 + 2];
    memset(big, 'a', sizeof(big));
    put16(big, CTL_REC_REGISTER_BROKER);
    put16(big + 2, 0);
    put32(big + 4, 1);
    put16(big + host_at, 300);
    put32(big + host_at + 2 + 300, 9092);
    put16(big + host_at + 2 + 300 + 4, 0);
    ASSERT_EQ(ctl_rec_decode(big, sizeof(big), &d), -ERR_CORRUPT);
    put16(big + host_at, 255); /* at the limit, with the rest shifted: still must parse */
    put32(big + host_at + 2 + 255, 9092);
    put16(big + host_at + 2 + 255 + 4, 0);
    ASSERT_EQ(ctl_rec_decode(big, host_at + 2 + 255 + 4 + 2, &d), 0);
    ASSERT_EQ(strlen(d.broker.host), 255);
}

TEST(controller_records_inconsistent_content_refused)
{
    struct ctl_rec v[16];
    sample_records(v);
    struct ctl_rec d;
    size_t len;
    /* leader not among the replicas */
    struct ctl_rec r = v[3];
    r.partition.leader = 9;
    ASSERT(!ctl_rec_valid(&r));
    r.partition.leader = -1;
    ASSERT(ctl_rec_valid(&r));
    r.partition.replicas[2] = 1; /* duplicate replica */
    ASSERT(!ctl_rec_valid(&r));
    /* byte-level: duplicate replica in an encoded record */
    uint8_t *p = ctu_encode(&v[3], &len);
    put32(p + len - 4, 1);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    mem_free(p);
    /* a NUL inside a topic name, and invalid names */
    p = ctu_encode(&v[2], &len);
    p[2 + 2 + 2 + 1] = '\0';
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    p[2 + 2 + 2 + 1] = '/';
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    mem_free(p);
    /* liveness flag other than 0/1 */
    p = ctu_encode(&v[1], &len);
    p[len - 1] = 2;
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    mem_free(p);
    /* LEADERS: exactly node_id i32 + back i8; back other than 0/1, a negative node */
    p = ctu_encode(&v[13], &len);
    ASSERT_EQ(len, 2 + 2 + 4 + 1);
    p[len - 1] = 2;
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    p[len - 1] = 0;
    ASSERT_EQ(ctl_rec_decode(p, len, &d), 0);
    ASSERT(!d.leaders.back);
    put32(p + 4, (uint32_t)-1);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    mem_free(p);
    /* producer-id block that would overflow */
    r = v[7];
    r.pids.first = INT64_MAX - 10;
    ASSERT(!ctl_rec_valid(&r));
    r.pids.first = 0;
    r.pids.size = 0;
    ASSERT(!ctl_rec_valid(&r));
    /* config: unknown resource type, bad broker resource */
    r = v[6];
    r.config.resource_type = 3;
    ASSERT(!ctl_rec_valid(&r));
    r.config.resource_type = CTL_RESOURCE_BROKER;
    strcpy(r.config.resource, "007");
    ASSERT(!ctl_rec_valid(&r));
    strcpy(r.config.resource, "7");
    ASSERT(ctl_rec_valid(&r));
    strcpy(r.config.resource, "2147483648");
    ASSERT(!ctl_rec_valid(&r));
}

TEST(controller_records_topic_name_rules)
{
    ASSERT(ctl_topic_name_valid("a", 1));
    ASSERT(ctl_topic_name_valid("A-z_0.9", 7));
    ASSERT(!ctl_topic_name_valid("", 0));
    ASSERT(!ctl_topic_name_valid(".", 1));
    ASSERT(!ctl_topic_name_valid("..", 2));
    ASSERT(ctl_topic_name_valid("...", 3));
    ASSERT(!ctl_topic_name_valid("a b", 3));
    ASSERT(!ctl_topic_name_valid("a/b", 3));
    char name[251];
    memset(name, 'x', sizeof(name));
    ASSERT(ctl_topic_name_valid(name, 249));
    ASSERT(!ctl_topic_name_valid(name, 250));
}

TEST(controller_records_list_roundtrip_and_limits)
{
    struct ctl_rec v[16];
    size_t n = sample_records(v);
    struct ctl_recs l;
    ctl_recs_init(&l);
    for (size_t i = 0; i < n; i++)
        *ctl_recs_push(&l, v[i].type) = v[i];
    struct iobuf b;
    iobuf_init(&b);
    ctl_recs_encode(&l, &b);
    size_t len;
    uint8_t *p = iobuf_flatten(&b, &len);
    struct ctl_recs d;
    ctl_recs_init(&d);
    ASSERT_EQ(ctl_recs_decode(p, len, 100, &d), 0);
    ASSERT_EQ(d.n, n);
    ASSERT_MEMEQ(d.v, l.v, n * sizeof(l.v[0]));
    ctl_recs_free(&d);
    ASSERT_EQ(ctl_recs_decode(p, len, n - 1, &d), -ERR_TOO_LARGE);
    ASSERT_EQ(d.n, n - 1);
    ctl_recs_free(&d);
    ASSERT_EQ(ctl_recs_decode(p, len - 1, 100, &d), -ERR_CORRUPT);
    ctl_recs_free(&d);
    put32(p, 0x7fffffff); /* a frame length past the end */
    ASSERT_EQ(ctl_recs_decode(p, len, 100, &d), -ERR_CORRUPT);
    ASSERT_EQ(d.n, 0);
    ctl_recs_free(&d);
    mem_free(p);
    iobuf_destroy(&b);
    ctl_recs_free(&l);
}

TEST(controller_records_voters_bounds_and_duplicates_refused)
{
    struct ctl_rec v[16];
    size_t n = sample_records(v);
    struct ctl_rec r = sample_of(v, n, CTL_REC_VOTERS), d;
    ASSERT_EQ(r.type, CTL_REC_VOTERS);
    size_t len;
    uint8_t *p = ctu_encode(&r, &len);
    ASSERT_EQ(len, 2 + 2 + 4 + 3 * 4); /* type, version, n, ids */
    put32(p + 4, 0);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    put32(p + 4, CTL_VOTERS_MAX + 1);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    put32(p + 4, 0x7fffffff);
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    put32(p + 4, 3);
    put32(p + 8 + 4, 1); /* a duplicate id */
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    put32(p + 8 + 4, 0xffffffff); /* a negative one */
    ASSERT_EQ(ctl_rec_decode(p, len, &d), -ERR_CORRUPT);
    mem_free(p);
    /* the image keeps the latest set, and its snapshot carries it */
    struct ctl_image img;
    ctl_image_init(&img);
    ASSERT_EQ(ctl_image_apply(&img, &r), 0);
    r.voters.n = 1;
    ASSERT_EQ(ctl_image_apply(&img, &r), 0);
    struct ctl_image copy;
    ctl_image_init(&copy);
    ctl_image_copy(&copy, &img);
    ASSERT_EQ(copy.voters.n, 1);
    ASSERT_EQ(copy.voters.ids[0], 1);
    ctl_image_free(&copy);
    ctl_image_free(&img);
}

TEST(controller_records_user_scram_rules)
{
    struct ctl_rec v[16];
    size_t n = sample_records(v);
    struct ctl_rec r = sample_of(v, n, CTL_REC_USER_SCRAM);
    ASSERT_EQ(r.type, CTL_REC_USER_SCRAM);
    ASSERT(ctl_rec_valid(&r));
    struct ctl_rec bad = r;
    bad.user.key_len = 32; /* SHA-512 keys are 64 bytes */
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    bad.user.iterations = 4095;
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    bad.user.iterations = 16385;
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    bad.user.mechanism = 3;
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    bad.user.salt_len = 0;
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    strcpy(bad.user.name, "tab\there");
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    bad.user.name[0] = '\0';
    ASSERT(!ctl_rec_valid(&bad));
    struct ctl_rec del = {.type = CTL_REC_USER_SCRAM};
    strcpy(del.user.name, r.user.name);
    del.user.mechanism = r.user.mechanism;
    del.user.deleted = true;
    ASSERT(ctl_rec_valid(&del));
    del.user.iterations = 4096; /* a deletion carries no credential */
    ASSERT(!ctl_rec_valid(&del));
    del.user.iterations = 0;
    /* stored and server keys of different lengths do not decode */
    size_t len;
    uint8_t *p = ctu_encode(&r, &len);
    size_t key2 = len - 2 - 64; /* the server key's length field */
    p[key2] = 0;
    p[key2 + 1] = 32;
    struct ctl_rec d;
    ASSERT_EQ(ctl_rec_decode(p, key2 + 2 + 32, &d), -ERR_CORRUPT);
    mem_free(p);
    /* the image: set, replace, delete (a delete of none is a no-op), kept in the snapshot */
    struct ctl_image img;
    ctl_image_init(&img);
    ASSERT_EQ(ctl_image_apply(&img, &r), 0);
    struct ctl_rec r256 = r;
    r256.user.mechanism = CTL_SCRAM_SHA256;
    r256.user.key_len = 32;
    ASSERT_EQ(ctl_image_apply(&img, &r256), 0);
    ASSERT_EQ(img.n_users, 2);
    ASSERT(ctl_image_user(&img, r.user.name, CTL_SCRAM_SHA512) != NULL);
    ASSERT_EQ(ctl_image_user(&img, r.user.name, CTL_SCRAM_SHA256)->key_len, 32);
    ASSERT(ctl_image_user(&img, "bob", CTL_SCRAM_SHA256) == NULL);
    r.user.iterations = 16384;
    ASSERT_EQ(ctl_image_apply(&img, &r), 0);
    ASSERT_EQ(img.n_users, 2);
    ASSERT_EQ(ctl_image_user(&img, r.user.name, CTL_SCRAM_SHA512)->iterations, 16384);
    struct ctl_image copy;
    ctl_image_init(&copy);
    ctl_image_copy(&copy, &img);
    ASSERT_EQ(copy.n_users, 2);
    ASSERT_MEMEQ(ctl_image_user(&copy, r.user.name, CTL_SCRAM_SHA512)->stored_key,
                 r.user.stored_key, 64);
    ctl_image_free(&copy);
    ASSERT_EQ(ctl_image_apply(&img, &del), 0);
    ASSERT_EQ(img.n_users, 1);
    ASSERT_EQ(ctl_image_apply(&img, &del), 0);
    ASSERT_EQ(img.n_users, 1);
    ctl_image_free(&img);
}

TEST(controller_records_acl_rules_and_image)
{
    struct ctl_rec v[16];
    size_t n = sample_records(v);
    struct ctl_rec r = sample_of(v, n, CTL_REC_ACL);
    ASSERT_EQ(r.type, CTL_REC_ACL);
    ASSERT(ctl_rec_valid(&r));
    struct ctl_rec bad = r;
    bad.acl.resource_type = 1; /* ANY: a filter's, never a binding's */
    ASSERT(!ctl_rec_valid(&bad));
    bad.acl.resource_type = 100; /* the schema registry's REGISTRY and SUBJECT */
    ASSERT(ctl_rec_valid(&bad));
    bad.acl.resource_type = 101;
    ASSERT(ctl_rec_valid(&bad));
    bad.acl.resource_type = 8; /* past Kafka's, not ours */
    ASSERT(!ctl_rec_valid(&bad));
    bad.acl.resource_type = 102;
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    bad.acl.pattern_type = 2; /* MATCH */
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    bad.acl.operation = 1; /* ANY */
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    bad.acl.permission = 1;
    ASSERT(!ctl_rec_valid(&bad));
    bad = r;
    bad.acl.host[0] = '\0';
    ASSERT(!ctl_rec_valid(&bad));
    struct ctl_image img;
    ctl_image_init(&img);
    ASSERT_EQ(ctl_image_apply(&img, &r), 0);
    ASSERT_EQ(ctl_image_apply(&img, &r), 0); /* twice: one binding */
    ASSERT_EQ(img.n_acls, 1);
    struct ctl_rec deny = r;
    deny.acl.permission = 2;
    ASSERT_EQ(ctl_image_apply(&img, &deny), 0);
    ASSERT_EQ(img.n_acls, 2);
    struct ctl_image copy;
    ctl_image_init(&copy);
    ctl_image_copy(&copy, &img);
    ASSERT_EQ(copy.n_acls, 2);
    ctl_image_free(&copy);
    r.acl.deleted = true;
    ASSERT_EQ(ctl_image_apply(&img, &r), 0);
    ASSERT_EQ(img.n_acls, 1);
    ASSERT_EQ(img.acls[0].permission, 2);
    ASSERT_EQ(ctl_image_apply(&img, &r), 0); /* a removal of none */
    ASSERT_EQ(img.n_acls, 1);
    ctl_image_free(&img);
}

/* QUOTA: an entity of user and/or client-id (named or default), one of Kafka's keys, a finite
 * positive value (0 when deleted); anything else is refused whole. The image keeps one value
 * per entity and key, sorted, replaced by a new value and dropped by a deletion; its snapshot
 * rebuilds them. */
TEST(controller_records_quota_rules_and_image)
{
    struct ctl_rec v[16];
    size_t n = sample_records(v);
    struct ctl_rec r = sample_of(v, n, CTL_REC_QUOTA), bad;
    ASSERT_EQ(r.type, CTL_REC_QUOTA);
    ASSERT(ctl_rec_valid(&r));
    bad = r;
    bad.quota.user_kind = bad.quota.client_kind = CTL_QUOTA_NONE;
    bad.quota.user[0] = 0;
    ASSERT(!ctl_rec_valid(&bad)); /* no entity */
    bad = r;
    bad.quota.user[0] = 0;
    ASSERT(!ctl_rec_valid(&bad)); /* named without a name */
    bad = r;
    strcpy(bad.quota.client, "x");
    ASSERT(!ctl_rec_valid(&bad)); /* a default with a name */
    bad = r;
    strcpy(bad.quota.key, "bytes_per_fortnight");
    ASSERT(!ctl_rec_valid(&bad));
    double values[] = {0, -1, 1.0 / 0.0, 0.0 / 0.0};
    for (size_t i = 0; i < 4; i++) {
        bad = r;
        bad.quota.value = values[i];
        ASSERT(!ctl_rec_valid(&bad));
    }
    bad = r;
    bad.quota.deleted = true;
    ASSERT(!ctl_rec_valid(&bad)); /* a deletion carries no value */
    bad.quota.value = 0;
    ASSERT(ctl_rec_valid(&bad));

    struct ctl_image img;
    ctl_image_init(&img);
    ASSERT_EQ(ctl_image_apply(&img, &r), 0);
    struct ctl_rec other = r;
    other.quota.user_kind = CTL_QUOTA_DEFAULT;
    other.quota.user[0] = 0;
    other.quota.value = 5;
    ASSERT_EQ(ctl_image_apply(&img, &other), 0);
    struct ctl_rec again = r;
    again.quota.value = 7;
    ASSERT_EQ(ctl_image_apply(&img, &again), 0);
    ASSERT_EQ(img.n_quotas, 2);
    ASSERT(img.quotas[0].value == 7); /* named (1) sorts before default (2); replaced */
    ASSERT(img.quotas[1].value == 5);
    ctl_image_check(&img);
    struct ctl_recs snap;
    ctl_recs_init(&snap);
    ctl_image_snapshot(&img, &snap);
    struct ctl_image copy;
    ctl_image_init(&copy);
    ASSERT_EQ(ctl_image_apply_all(&copy, &snap), 0);
    ASSERT_EQ(copy.n_quotas, 2);
    ASSERT_MEMEQ(copy.quotas, img.quotas, 2 * sizeof(img.quotas[0]));
    ASSERT_EQ(ctl_image_apply(&img, &bad), 0); /* the deletion */
    ASSERT_EQ(img.n_quotas, 1);
    ASSERT_EQ(img.quotas[0].user_kind, CTL_QUOTA_DEFAULT);
    ctl_recs_free(&snap);
    ctl_image_free(&copy);
    ctl_image_free(&img);
}
