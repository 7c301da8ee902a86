/* Cluster-mode topic configs and preferred-leader balancing: the pure parts of
 * broker/cluster_configs.h (replace ops, override comparison, the image's overrides, the
 * controller's config check, the balancing target and where the preferred replica stands). */
#include <stdio.h>
#include <string.h>

#include "broker/cluster_configs.h"
#include "controller_util.h"
#include "kafka/errors.h"
#include "replication/replica.h"
#include "server/config.h"
#include "test.h"

static void reg(struct ctl_image *img, int32_t id, bool live)
{
    struct ctl_rec r = {.type = CTL_REC_REGISTER_BROKER};
    r.broker.node_id = id;
    r.broker.incarnation = ctu_uuid(1000 + (uint32_t)id);
    snprintf(r.broker.host, sizeof(r.broker.host), "b%d", id);
    r.broker.port = 9000 + id;
    ASSERT_EQ(ctl_image_apply(img, &r), 0);
    struct ctl_rec l = {.type = CTL_REC_BROKER_LIVENESS};
    l.liveness.node_id = id;
    l.liveness.fenced = !live;
    ASSERT_EQ(ctl_image_apply(img, &l), 0);
}

static void topic3(struct ctl_image *img, const char *name, uint32_t id, int32_t a, int32_t b,
                   int32_t c)
{
    struct ctl_rec r = {.type = CTL_REC_TOPIC};
    strcpy(r.topic.name, name);
    r.topic.id = ctu_uuid(id);
    r.topic.n_partitions = 1;
    ASSERT_EQ(ctl_image_apply(img, &r), 0);
    struct ctl_rec p = {.type = CTL_REC_PARTITION};
    p.partition.topic_id = ctu_uuid(id);
    p.partition.leader = a;
    p.partition.n_replicas = 3;
    p.partition.replicas[0] = a;
    p.partition.replicas[1] = b;
    p.partition.replicas[2] = c;
    ASSERT_EQ(ctl_image_apply(img, &p), 0);
}

static void config(struct ctl_image *img, const char *res, const char *key, const char *value)
{
    struct ctl_rec r = {.type = CTL_REC_CONFIG};
    r.config.resource_type = CTL_RESOURCE_TOPIC;
    strcpy(r.config.resource, res);
    strcpy(r.config.key, key);
    strcpy(r.config.value, value);
    ASSERT_EQ(ctl_image_apply(img, &r), 0);
}

static const struct ctl_config_entry *op_of(const struct ctl_config_entry *ops, size_t n,
                                            const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(ops[i].key, key) == 0)
            return &ops[i];
    return NULL;
}

TEST(cluster_configs_replace_ops_set_given_delete_others)
{
    struct ctl_config cur[3] = {
        {CTL_RESOURCE_TOPIC, "t", "cleanup.policy", "compact"},
        {CTL_RESOURCE_TOPIC, "t", "retention.ms", "1000"},
        {CTL_RESOURCE_TOPIC, "t", "segment.bytes", "2048"},
    };
    struct topic_config_kv want[2] = {{"retention.ms", "5000"}, {"max.message.bytes", "100"}};
    struct ctl_config_entry ops[5];
    size_t n = cluster_configs_replace_ops(cur, 3, want, 2, ops);
    ASSERT_EQ(n, 4);
    /* the keys given first, in request order, then the deletions in the image's order */
    ASSERT(strcmp(ops[0].key, "retention.ms") == 0 && strcmp(ops[0].value, "5000") == 0);
    ASSERT(strcmp(ops[1].key, "max.message.bytes") == 0 && strcmp(ops[1].value, "100") == 0);
    ASSERT(strcmp(ops[2].key, "cleanup.policy") == 0 && ops[2].value == NULL);
    ASSERT(strcmp(ops[3].key, "segment.bytes") == 0 && ops[3].value == NULL);
    ASSERT(op_of(ops, n, "retention.ms")->value != NULL); /* kept key: set, never deleted */

    /* nothing given: every current key deleted; nothing current: only sets; both empty: none */
    n = cluster_configs_replace_ops(cur, 3, NULL, 0, ops);
    ASSERT_EQ(n, 3);
    for (size_t i = 0; i < n; i++)
        ASSERT(ops[i].value == NULL);
    n = cluster_configs_replace_ops(NULL, 0, want, 2, ops);
    ASSERT_EQ(n, 2);
    ASSERT(ops[0].value != NULL && ops[1].value != NULL);
    ASSERT_EQ(cluster_configs_replace_ops(NULL, 0, NULL, 0, ops), 0);
}

TEST(cluster_configs_overrides_same_ignores_order_only)
{
    struct topic_config_kv a[2] = {{"retention.ms", "1"}, {"cleanup.policy", "compact"}};
    struct topic_config_kv b[2] = {{"cleanup.policy", "compact"}, {"retention.ms", "1"}};
    struct topic_config_kv c[2] = {{"cleanup.policy", "compact"}, {"retention.ms", "2"}};
    struct topic_config_kv d[2] = {{"cleanup.policy", "compact"}, {"segment.ms", "1"}};
    struct topic_config_kv e[2] = {{"cleanup.policy", "compact"}, {"retention.ms", NULL}};
    ASSERT(cluster_overrides_same(a, 2, b, 2));
    ASSERT(cluster_overrides_same(a, 2, a, 2));
    ASSERT(!cluster_overrides_same(a, 2, c, 2)); /* another value */
    ASSERT(!cluster_overrides_same(a, 2, d, 2)); /* another key */
    ASSERT(!cluster_overrides_same(a, 2, b, 1)); /* fewer */
    ASSERT(!cluster_overrides_same(a, 2, e, 2)); /* NULL only equals NULL */
    ASSERT(!cluster_overrides_same(e, 2, a, 2));
    ASSERT(cluster_overrides_same(e, 2, e, 2));
    ASSERT(cluster_overrides_same(NULL, 0, NULL, 0));
}

TEST(cluster_configs_image_overrides_valid_ones_of_that_topic)
{
    struct ctl_image img;
    ctl_image_init(&img);
    topic3(&img, "t", 1, 1, 2, 3);
    topic3(&img, "u", 2, 1, 2, 3);
    config(&img, "t", "retention.ms", "3600000");
    config(&img, "t", "segment.bytes", "1"); /* below the minimum (14) */
    config(&img, "t", "no.such.key", "x");   /* unknown */
    config(&img, "t", "cleanup.policy", "compact");
    config(&img, "u", "retention.bytes", "100"); /* another topic */
    struct topic_config_kv kv[8];
    int refused = -1;
    int n = cluster_image_overrides(&img, "t", kv, 8, &refused);
    ASSERT_EQ(n, 2);
    ASSERT_EQ(refused, 2);
    struct topic_config_kv want[2] = {{"cleanup.policy", "compact"}, {"retention.ms", "3600000"}};
    ASSERT(cluster_overrides_same(kv, n, want, 2));
    /* room for one: the rest counts as refused, never written past cap */
    n = cluster_image_overrides(&img, "t", kv, 1, &refused);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(refused, 3);
    ASSERT_EQ(cluster_image_overrides(&img, "none", kv, 8, NULL), 0);
    ctl_image_free(&img);
}

TEST(cluster_configs_controller_check)
{
    ASSERT_EQ(cluster_config_check(CTL_RESOURCE_TOPIC, "retention.ms", "1000", NULL), KERR_NONE);
    ASSERT_EQ(cluster_config_check(CTL_RESOURCE_TOPIC, "cleanup.policy", "compact,delete", NULL),
              KERR_NONE);
    ASSERT_EQ(cluster_config_check(CTL_RESOURCE_TOPIC, "segment.bytes", "1", NULL),
              KERR_INVALID_CONFIG);
    ASSERT_EQ(cluster_config_check(CTL_RESOURCE_TOPIC, "cleanup.policy", "shred", NULL),
              KERR_INVALID_CONFIG);
    ASSERT_EQ(cluster_config_check(CTL_RESOURCE_TOPIC, "no.such.key", "1", NULL),
              KERR_INVALID_CONFIG);
    /* deleting is always allowed, even a key this version does not know */
    ASSERT_EQ(cluster_config_check(CTL_RESOURCE_TOPIC, "no.such.key", NULL, NULL), KERR_NONE);
    ASSERT_EQ(cluster_config_check(CTL_RESOURCE_BROKER, "log.retention.ms", "1", NULL),
              KERR_INVALID_REQUEST);
}

/* Leader 1 of a partition with replicas {pref, 1, other}: status with both followers. */
static struct replica_status leader_status(int64_t last, int32_t p1, int64_t m1, int32_t p2,
                                           int64_t m2)
{
    struct replica_status st;
    memset(&st, 0, sizeof(st));
    st.role = RAFT_LEADER;
    st.leader = 1;
    st.last = last;
    st.commit = last;
    st.peers[0] = p1;
    st.match[0] = m1;
    st.peers[1] = p2;
    st.match[1] = m2;
    st.n_peers = 2;
    return st;
}

TEST(cluster_balance_target_preferred_live_and_caught_up)
{
    struct ctl_image img;
    ctl_image_init(&img);
    reg(&img, 1, true);
    reg(&img, 2, true);
    reg(&img, 3, true);
    topic3(&img, "t", 1, 2, 1, 3); /* preferred: 2 */
    const struct ctl_partition *p = &ctl_image_topic(&img, "t")->parts[0];

    struct replica_status st = leader_status(100, 2, 100, 3, 40);
    ASSERT_EQ(cluster_balance_target(&img, p, 1, &st), 2);
    /* behind by one entry, or unknown: not yet */
    st = leader_status(100, 2, 99, 3, 100);
    ASSERT_EQ(cluster_balance_target(&img, p, 1, &st), -1);
    st = leader_status(100, 2, -1, 3, 100);
    ASSERT_EQ(cluster_balance_target(&img, p, 1, &st), -1);
    /* the preferred replica is not among the group's peers */
    st = leader_status(100, 4, 100, 3, 100);
    ASSERT_EQ(cluster_balance_target(&img, p, 1, &st), -1);
    /* not leading */
    st = leader_status(100, 2, 100, 3, 100);
    st.role = RAFT_FOLLOWER;
    ASSERT_EQ(cluster_balance_target(&img, p, 1, &st), -1);
    /* this node is the preferred replica */
    st = leader_status(100, 1, 100, 3, 100);
    ASSERT_EQ(cluster_balance_target(&img, p, 2, &st), -1);

    /* the preferred broker fenced, then unfenced again */
    struct ctl_rec l = {.type = CTL_REC_BROKER_LIVENESS};
    l.liveness.node_id = 2;
    l.liveness.fenced = true;
    ASSERT_EQ(ctl_image_apply(&img, &l), 0);
    p = &ctl_image_topic(&img, "t")->parts[0];
    st = leader_status(100, 2, 100, 3, 100);
    ASSERT_EQ(cluster_balance_target(&img, p, 1, &st), -1);
    l.liveness.fenced = false;
    ASSERT_EQ(ctl_image_apply(&img, &l), 0);
    p = &ctl_image_topic(&img, "t")->parts[0];
    ASSERT_EQ(cluster_balance_target(&img, p, 1, &st), 2);
    ctl_image_free(&img);
}

TEST(cluster_balance_target_unregistered_or_single_replica)
{
    struct ctl_image img;
    ctl_image_init(&img);
    reg(&img, 1, true);
    reg(&img, 3, true);
    topic3(&img, "t", 1, 2, 1, 3); /* preferred 2 never registered */
    const struct ctl_partition *p = &ctl_image_topic(&img, "t")->parts[0];
    struct replica_status st = leader_status(10, 2, 10, 3, 10);
    ASSERT_EQ(cluster_balance_target(&img, p, 1, &st), -1);

    struct ctl_partition one = {.leader = 1, .leader_epoch = 0, .n_replicas = 1, .replicas = {1}};
    ASSERT_EQ(cluster_balance_target(&img, &one, 1, &st), -1);
    ctl_image_free(&img);
}

TEST(cluster_preferred_state_says_why_not)
{
    struct ctl_image img;
    ctl_image_init(&img);
    reg(&img, 1, true);
    reg(&img, 2, true);
    reg(&img, 3, true);
    topic3(&img, "t", 1, 2, 1, 3); /* preferred: 2 */
    const struct ctl_partition *p = &ctl_image_topic(&img, "t")->parts[0];
    int64_t m = 7;

    /* caught up is what the caller says: the commit index (ElectLeaders) or the last index */
    struct replica_status st = leader_status(100, 2, 90, 3, 100);
    st.commit = 90;
    ASSERT_EQ(cluster_preferred_state(&img, p, 1, &st, st.commit, &m), CLUSTER_PREFERRED_READY);
    ASSERT_EQ(m, 90);
    ASSERT_EQ(cluster_preferred_state(&img, p, 1, &st, st.last, &m), CLUSTER_PREFERRED_BEHIND);
    st = leader_status(100, 2, -1, 3, 100); /* match unknown */
    ASSERT_EQ(cluster_preferred_state(&img, p, 1, &st, st.commit, &m), CLUSTER_PREFERRED_BEHIND);
    ASSERT_EQ(m, -1);
    /* an empty log: nothing to catch up with */
    st = leader_status(-1, 2, -1, 3, -1);
    ASSERT_EQ(cluster_preferred_state(&img, p, 1, &st, st.commit, NULL), CLUSTER_PREFERRED_READY);
    st = leader_status(100, 4, 100, 3, 100);
    ASSERT_EQ(cluster_preferred_state(&img, p, 1, &st, st.commit, &m), CLUSTER_PREFERRED_NOT_PEER);
    ASSERT_EQ(m, -1);
    ASSERT_EQ(cluster_preferred_state(&img, p, 2, &st, st.commit, NULL), CLUSTER_PREFERRED_SELF);

    struct ctl_rec l = {.type = CTL_REC_BROKER_LIVENESS};
    l.liveness.node_id = 2;
    l.liveness.fenced = true;
    ASSERT_EQ(ctl_image_apply(&img, &l), 0);
    p = &ctl_image_topic(&img, "t")->parts[0];
    st = leader_status(100, 2, 100, 3, 100);
    ASSERT_EQ(cluster_preferred_state(&img, p, 1, &st, st.commit, NULL),
              CLUSTER_PREFERRED_NOT_LIVE);
    ctl_image_free(&img);
}

TEST(cluster_balance_config_keys)
{
    struct broker_config c;
    char err[512];
    ASSERT_EQ(config_load(&c, NULL, NULL, 0, err, sizeof(err)), 0);
    ASSERT(c.auto_leader_rebalance_enable);
    ASSERT_EQ(c.leader_imbalance_check_interval_s, 300);
    config_free(&c);
    char *sets[] = {"auto.leader.rebalance.enable=false",
                    "leader.imbalance.check.interval.seconds=1"};
    ASSERT_EQ(config_load(&c, NULL, sets, 2, err, sizeof(err)), 0);
    ASSERT(!c.auto_leader_rebalance_enable);
    ASSERT_EQ(c.leader_imbalance_check_interval_s, 1);
    config_free(&c);
    char *bad[] = {"leader.imbalance.check.interval.seconds=0"};
    ASSERT_EQ(config_load(&c, NULL, bad, 1, err, sizeof(err)), -1);
    ASSERT(strstr(err, "leader.imbalance.check.interval.seconds") != NULL);
}
