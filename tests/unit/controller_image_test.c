/* The metadata image (controller/image.h): apply, queries, refusals, snapshot round trip. */
#include "base/errors.h"
#include "base/mem.h"
#include "controller/image.h"
#include "controller_util.h"
#include "test.h"

static void reg(struct ctl_image *img, int32_t id, bool live)
{
    struct ctl_rec r = {.type = CTL_REC_REGISTER_BROKER};
    r.broker.node_id = id;
    r.broker.incarnation = ctu_uuid(1000 + (uint32_t)id);
    snprintf(r.broker.host, sizeof(r.broker.host), "b%d", id);
    r.broker.port = 9000 + id;
    snprintf(r.broker.cluster_addr, sizeof(r.broker.cluster_addr), "b%d:9100", id);
    ASSERT_EQ(ctl_image_apply(img, &r), 0);
    if (live) {
        struct ctl_rec l = {.type = CTL_REC_BROKER_LIVENESS};
        l.liveness.node_id = id;
        ASSERT_EQ(ctl_image_apply(img, &l), 0);
    }
}

static int topic(struct ctl_image *img, const char *name, uint32_t id, int32_t n)
{
    struct ctl_rec r = {.type = CTL_REC_TOPIC};
    strcpy(r.topic.name, name);
    r.topic.id = ctu_uuid(id);
    r.topic.n_partitions = n;
    return ctl_image_apply(img, &r);
}

static int part(struct ctl_image *img, uint32_t id, int32_t p, int32_t leader, int32_t epoch,
                int32_t a, int32_t b)
{
    struct ctl_rec r = {.type = CTL_REC_PARTITION};
    r.partition.topic_id = ctu_uuid(id);
    r.partition.partition = p;
    r.partition.leader = leader;
    r.partition.leader_epoch = epoch;
    r.partition.n_replicas = 2;
    r.partition.replicas[0] = a;
    r.partition.replicas[1] = b;
    return ctl_image_apply(img, &r);
}

static int config(struct ctl_image *img, int8_t type, const char *res, const char *key,
                  const char *value)
{
    struct ctl_rec r = {.type = CTL_REC_CONFIG};
    r.config.resource_type = type;
    strcpy(r.config.resource, res);
    strcpy(r.config.key, key);
    if (value)
        strcpy(r.config.value, value);
    r.config.deleted = value == NULL;
    return ctl_image_apply(img, &r);
}

static int pids(struct ctl_image *img, int64_t first, int32_t size)
{
    struct ctl_rec r = {.type = CTL_REC_PRODUCER_IDS};
    r.pids.broker_id = 1;
    r.pids.first = first;
    r.pids.size = size;
    return ctl_image_apply(img, &r);
}

/* Brokers 1..3 (3 fenced), topics "a" (2 partitions) and "b" (1), some configs, a pid block. */
static void build(struct ctl_image *img)
{
    ctl_image_init(img);
    reg(img, 2, true);
    reg(img, 1, true);
    reg(img, 3, false);
    ASSERT_EQ(topic(img, "b", 20, 1), 0);
    ASSERT_EQ(topic(img, "a", 10, 2), 0);
    ASSERT_EQ(part(img, 10, 0, 1, 0, 1, 2), 0);
    ASSERT_EQ(part(img, 10, 1, 2, 0, 2, 3), 0);
    ASSERT_EQ(part(img, 20, 0, -1, 4, 3, 1), 0);
    ASSERT_EQ(config(img, CTL_RESOURCE_TOPIC, "a", "retention.ms", "1000"), 0);
    ASSERT_EQ(config(img, CTL_RESOURCE_TOPIC, "a", "cleanup.policy", "compact"), 0);
    ASSERT_EQ(config(img, CTL_RESOURCE_TOPIC, "b", "retention.ms", "5"), 0);
    ASSERT_EQ(config(img, CTL_RESOURCE_BROKER, "", "log.retention.ms", "7"), 0);
    ASSERT_EQ(pids(img, 0, 1000), 0);
    ASSERT_EQ(pids(img, 1000, 1000), 0);
}

TEST(controller_image_apply_and_query)
{
    struct ctl_image img;
    build(&img);
    ASSERT_EQ(img.n_brokers, 3);
    ASSERT_EQ(img.brokers[0].id, 1);
    ASSERT_EQ(img.brokers[2].id, 3);
    ASSERT_STREQ(ctl_image_broker(&img, 2)->host, "b2");
    ASSERT_EQ(ctl_image_broker(&img, 2)->port, 9002);
    ASSERT_STREQ(ctl_image_broker(&img, 2)->cluster_addr, "b2:9100");
    ASSERT(ctl_image_broker(&img, 4) == NULL);
    ASSERT(ctl_image_broker_live(&img, 1));
    ASSERT(!ctl_image_broker_live(&img, 3));
    ASSERT_EQ(ctl_image_live_brokers(&img), 2);

    const struct ctl_topic *a = ctl_image_topic(&img, "a");
    ASSERT(a != NULL);
    ASSERT(ctl_image_topic_by_id(&img, ctu_uuid(10)) == a);
    ASSERT(ctl_image_topic(&img, "c") == NULL);
    ASSERT_STREQ(img.topics[0]->name, "a"); /* sorted by name */
    const struct ctl_partition *p = ctl_image_partition(&img, ctu_uuid(10), 1);
    ASSERT_EQ(p->leader, 2);
    ASSERT_EQ(p->n_replicas, 2);
    ASSERT(ctl_partition_has_replica(p, 3));
    ASSERT(!ctl_partition_has_replica(p, 1));
    ASSERT(ctl_image_partition(&img, ctu_uuid(10), 2) == NULL);
    ASSERT(ctl_image_partition(&img, ctu_uuid(99), 0) == NULL);

    ASSERT_STREQ(ctl_image_config(&img, CTL_RESOURCE_TOPIC, "a", "retention.ms"), "1000");
    ASSERT(ctl_image_config(&img, CTL_RESOURCE_TOPIC, "a", "segment.ms") == NULL);
    ASSERT_STREQ(ctl_image_config(&img, CTL_RESOURCE_BROKER, "", "log.retention.ms"), "7");
    const struct ctl_config *first;
    ASSERT_EQ(ctl_image_configs_of(&img, CTL_RESOURCE_TOPIC, "a", &first), 2);
    ASSERT_STREQ(first[0].key, "cleanup.policy");
    ASSERT_STREQ(first[1].key, "retention.ms");
    ASSERT_EQ(ctl_image_configs_of(&img, CTL_RESOURCE_TOPIC, "zz", &first), 0);
    ASSERT_EQ(ctl_image_pid_next(&img), 2000);
    ASSERT_EQ(img.records_applied, 16);
    ctl_image_free(&img);
}

TEST(controller_image_changes_replace_and_delete)
{
    struct ctl_image img;
    build(&img);
    /* a config update and a delete */
    ASSERT_EQ(config(&img, CTL_RESOURCE_TOPIC, "a", "retention.ms", "2000"), 0);
    ASSERT_STREQ(ctl_image_config(&img, CTL_RESOURCE_TOPIC, "a", "retention.ms"), "2000");
    ASSERT_EQ(config(&img, CTL_RESOURCE_TOPIC, "a", "retention.ms", NULL), 0);
    ASSERT(ctl_image_config(&img, CTL_RESOURCE_TOPIC, "a", "retention.ms") == NULL);
    ASSERT_EQ(config(&img, CTL_RESOURCE_TOPIC, "a", "never.set", NULL), 0);
    /* a partition change: new leader, higher epoch */
    ASSERT_EQ(part(&img, 10, 0, 2, 1, 1, 2), 0);
    ASSERT_EQ(ctl_image_partition(&img, ctu_uuid(10), 0)->leader, 2);
    /* growing a topic: new partitions are unassigned */
    ASSERT_EQ(topic(&img, "a", 10, 4), 0);
    const struct ctl_partition *p = ctl_image_partition(&img, ctu_uuid(10), 3);
    ASSERT_EQ(p->n_replicas, 0);
    ASSERT_EQ(p->leader, -1);
    ASSERT_EQ(ctl_image_partition(&img, ctu_uuid(10), 1)->leader, 2); /* kept */
    /* re-registration: new incarnation, fenced again */
    reg(&img, 1, false);
    ASSERT(!ctl_image_broker_live(&img, 1));
    /* remove topic "a": its configs go, "b"'s stay */
    struct ctl_rec r = {.type = CTL_REC_REMOVE_TOPIC};
    r.remove_topic.id = ctu_uuid(10);
    ASSERT_EQ(ctl_image_apply(&img, &r), 0);
    ASSERT(ctl_image_topic(&img, "a") == NULL);
    const struct ctl_config *first;
    ASSERT_EQ(ctl_image_configs_of(&img, CTL_RESOURCE_TOPIC, "a", &first), 0);
    ASSERT_STREQ(ctl_image_config(&img, CTL_RESOURCE_TOPIC, "b", "retention.ms"), "5");
    ASSERT_EQ(img.n_configs, 2);
    /* the name can be reused with a new id */
    ASSERT_EQ(topic(&img, "a", 11, 1), 0);
    ASSERT(ctl_image_topic_by_id(&img, ctu_uuid(10)) == NULL);
    ctl_image_free(&img);
}

static void assert_refused_unchanged(struct ctl_image *img, int rc, const uint8_t *before,
                                     size_t before_len)
{
    ASSERT_EQ(rc, -ERR_INVALID);
    size_t len;
    uint8_t *now = ctu_snapshot(img, &len);
    ASSERT_EQ(len, before_len);
    ASSERT_MEMEQ(now, before, len);
    mem_free(now);
}

TEST(controller_image_refuses_inconsistent_records)
{
    struct ctl_image img;
    build(&img);
    size_t len;
    uint8_t *before = ctu_snapshot(&img, &len);
    uint64_t applied = img.records_applied;
    assert_refused_unchanged(&img, topic(&img, "a", 11, 2), before, len);       /* name, other id */
    assert_refused_unchanged(&img, topic(&img, "c", 10, 2), before, len);       /* id, other name */
    assert_refused_unchanged(&img, topic(&img, "a", 10, 1), before, len);       /* shrink */
    assert_refused_unchanged(&img, part(&img, 99, 0, 1, 0, 1, 2), before, len); /* no topic */
    assert_refused_unchanged(&img, part(&img, 10, 2, 1, 0, 1, 2), before, len); /* beyond count */
    assert_refused_unchanged(&img, part(&img, 20, 0, 1, 3, 3, 1), before, len); /* epoch down */
    assert_refused_unchanged(&img, config(&img, CTL_RESOURCE_TOPIC, "zz", "k", "v"), before, len);
    assert_refused_unchanged(&img, pids(&img, 1999, 10), before, len); /* overlaps */
    struct ctl_rec r = {.type = CTL_REC_BROKER_LIVENESS};
    r.liveness.node_id = 42;
    assert_refused_unchanged(&img, ctl_image_apply(&img, &r), before, len);
    r = (struct ctl_rec){.type = CTL_REC_REMOVE_TOPIC};
    r.remove_topic.id = ctu_uuid(99);
    assert_refused_unchanged(&img, ctl_image_apply(&img, &r), before, len);
    r = (struct ctl_rec){.type = CTL_REC_PARTITION}; /* invalid record: no replicas */
    r.partition.topic_id = ctu_uuid(10);
    assert_refused_unchanged(&img, ctl_image_apply(&img, &r), before, len);
    ASSERT_EQ(img.records_applied, applied);
    /* a gap above the last block is fine */
    ASSERT_EQ(pids(&img, 5000, 10), 0);
    ASSERT_EQ(ctl_image_pid_next(&img), 5010);
    mem_free(before);
    ctl_image_free(&img);
}

TEST(controller_image_snapshot_roundtrip_is_identical)
{
    struct ctl_image img;
    build(&img);
    ASSERT_EQ(topic(&img, "a", 10, 3), 0); /* leaves partition 2 unassigned */
    struct ctl_recs snap;
    ctl_recs_init(&snap);
    ctl_image_snapshot(&img, &snap);
    /* brokers first, in id order; the fenced one has no liveness record */
    ASSERT_EQ(snap.v[0].type, CTL_REC_REGISTER_BROKER);
    ASSERT_EQ(snap.v[0].broker.node_id, 1);
    ASSERT_EQ(snap.v[1].type, CTL_REC_BROKER_LIVENESS);
    ASSERT_EQ(snap.v[5].type, CTL_REC_TOPIC);
    ASSERT_EQ(snap.v[snap.n - 1].type, CTL_REC_PRODUCER_IDS);

    /* through bytes, into a fresh image */
    struct iobuf b;
    iobuf_init(&b);
    ctl_recs_encode(&snap, &b);
    size_t len;
    uint8_t *bytes = iobuf_flatten(&b, &len);
    struct ctl_recs back;
    ctl_recs_init(&back);
    ASSERT_EQ(ctl_recs_decode(bytes, len, 1000, &back), 0);
    struct ctl_image copy;
    ctl_image_init(&copy);
    ASSERT_EQ(ctl_image_apply_all(&copy, &back), 0);

    size_t l1, l2;
    uint8_t *s1 = ctu_snapshot(&img, &l1);
    uint8_t *s2 = ctu_snapshot(&copy, &l2);
    ASSERT_EQ(l1, l2);
    ASSERT_MEMEQ(s1, s2, l1);
    ASSERT_EQ(l1, len);
    ASSERT_MEMEQ(s1, bytes, len);
    /* and the content, not just the bytes */
    ASSERT_EQ(ctl_image_pid_next(&copy), 2000);
    ASSERT(!ctl_image_broker_live(&copy, 3));
    ASSERT_EQ(ctl_image_partition(&copy, ctu_uuid(20), 0)->leader_epoch, 4);
    ASSERT_EQ(ctl_image_partition(&copy, ctu_uuid(10), 2)->n_replicas, 0);
    ASSERT_STREQ(ctl_image_config(&copy, CTL_RESOURCE_TOPIC, "a", "cleanup.policy"), "compact");
    ASSERT(memcmp(ctl_image_broker(&copy, 2)->incarnation.b, ctu_uuid(1002).b, 16) == 0);

    /* a change makes the snapshots differ */
    ASSERT_EQ(part(&copy, 10, 0, 2, 1, 1, 2), 0);
    uint8_t *s3 = ctu_snapshot(&copy, &l2);
    ASSERT(l1 != l2 || memcmp(s1, s3, l1) != 0);
    mem_free(s3);
    mem_free(s1);
    mem_free(s2);
    mem_free(bytes);
    iobuf_destroy(&b);
    ctl_recs_free(&back);
    ctl_recs_free(&snap);
    ctl_image_free(&copy);
    ctl_image_free(&img);
}

TEST(controller_image_empty_snapshot_is_empty)
{
    struct ctl_image img;
    ctl_image_init(&img);
    size_t len;
    uint8_t *s = ctu_snapshot(&img, &len);
    ASSERT_EQ(len, 0);
    ASSERT_EQ(ctl_image_pid_next(&img), 0);
    mem_free(s);
    ctl_image_free(&img);
}

struct seen {
    char log[512];
};

static void seen_cb(enum ctl_local_change what, const struct ctl_topic *t, int32_t partition,
                    const struct ctl_partition *p, void *data)
{
    struct seen *s = data;
    static const char *names[] = {"create", "remove", "change"};
    size_t n = strlen(s->log);
    snprintf(s->log + n, sizeof(s->log) - n, "%s %s-%d e%d;", names[what], t->name, partition,
             p->leader_epoch);
}

TEST(controller_image_copy_and_diff_local)
{
    struct ctl_image before, after;
    build(&before);
    ctl_image_init(&after);
    ctl_image_copy(&after, &before);
    size_t l1, l2;
    uint8_t *s1 = ctu_snapshot(&before, &l1);
    uint8_t *s2 = ctu_snapshot(&after, &l2);
    ASSERT_EQ(l1, l2);
    ASSERT_MEMEQ(s1, s2, l1);
    ASSERT_EQ(after.records_applied, before.records_applied);
    mem_free(s2);
    struct seen s = {""};
    ctl_image_diff_local(&before, &after, 2, seen_cb, &s);
    ASSERT_STREQ(s.log, ""); /* nothing changed */

    /* broker 2: a-0 {1,2} gets a new leader, a-1 {2,3} moves to {3,1}, b-0 {3,1} untouched,
     * "b" is deleted and re-created under a new id with broker 2, a grows a partition on 2 */
    ASSERT_EQ(part(&after, 10, 0, 2, 1, 1, 2), 0);
    ASSERT_EQ(part(&after, 10, 1, 3, 1, 3, 1), 0);
    struct ctl_rec r = {.type = CTL_REC_REMOVE_TOPIC};
    r.remove_topic.id = ctu_uuid(20);
    ASSERT_EQ(ctl_image_apply(&after, &r), 0);
    ASSERT_EQ(topic(&after, "b", 21, 1), 0);
    ASSERT_EQ(part(&after, 21, 0, 2, 0, 2, 3), 0);
    ASSERT_EQ(topic(&after, "a", 10, 3), 0);
    ASSERT_EQ(part(&after, 10, 2, 1, 0, 1, 2), 0);
    ctl_image_diff_local(&before, &after, 2, seen_cb, &s);
    ASSERT_STREQ(s.log, "remove a-1 e0;create a-2 e0;change a-0 e1;create b-0 e0;");
    /* broker 3 lost b-0 of the old "b" and a-1 changed, b-0 of the new one is created */
    s.log[0] = '\0';
    ctl_image_diff_local(&before, &after, 3, seen_cb, &s);
    ASSERT_STREQ(s.log, "remove b-0 e4;change a-1 e1;create b-0 e0;");
    /* the copy shares nothing: before is as it was */
    s2 = ctu_snapshot(&before, &l2);
    ASSERT_EQ(l1, l2);
    ASSERT_MEMEQ(s1, s2, l1);
    mem_free(s1);
    mem_free(s2);
    ctl_image_free(&after);
    ctl_image_free(&before);
}
