/* Controller commands (controller/commands.h): each command's errors and records, broker
 * sessions, fencing and leader re-election, producer-id blocks. */
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "controller/commands.h"
#include "controller/placement.h"
#include "controller_util.h"
#include "kafka/errors.h"
#include "test.h"

struct env {
    struct ctl_image img;
    struct ctl_sessions s;
    struct ctl_recs out;
};

static void env_init(struct env *e)
{
    ctl_image_init(&e->img);
    ctl_sessions_init(&e->s);
    ctl_recs_init(&e->out);
}

static void env_free(struct env *e)
{
    ctl_image_free(&e->img);
    ctl_sessions_free(&e->s);
    ctl_recs_free(&e->out);
}

/* Applies what the last command produced and clears it. */
static void commit(struct env *e)
{
    ASSERT_EQ(ctl_image_apply_all(&e->img, &e->out), 0);
    e->out.n = 0;
}

static struct kuuid inc(int32_t id)
{
    return ctu_uuid(5000 + (uint32_t)id);
}

static void add_broker(struct env *e, int32_t id, int64_t now)
{
    struct ctl_broker_reg reg = {id, inc(id), "localhost", 9092, "localhost:9093", NULL, 0};
    ASSERT_EQ(ctl_cmd_register_broker(&e->img, &e->s, &reg, now, &e->out), KERR_NONE);
    commit(e);
    ASSERT_EQ(ctl_cmd_heartbeat(&e->img, &e->s, id, inc(id), true, now, &e->out), KERR_NONE);
    commit(e);
    ASSERT(ctl_image_broker_live(&e->img, id));
}

static int16_t create(struct env *e, const char *name, uint32_t id, int32_t n, int32_t rf)
{
    struct ctl_create_topic req = {name, ctu_uuid(id), n, rf, NULL, 0};
    return ctl_cmd_create_topic(&e->img, &req, NULL, NULL, &e->out);
}

TEST(controller_cmd_create_topic_records)
{
    struct env e;
    env_init(&e);
    for (int32_t id = 1; id <= 3; id++)
        add_broker(&e, id, 0);
    struct ctl_config_entry cfg[] = {{"retention.ms", "100"}, {"cleanup.policy", "compact"}};
    struct ctl_create_topic req = {"orders", ctu_uuid(1), 6, 2, cfg, 2};
    ASSERT_EQ(ctl_cmd_create_topic(&e.img, &req, NULL, NULL, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1 + 6 + 2);
    ASSERT_EQ(e.out.v[0].type, CTL_REC_TOPIC);
    ASSERT_EQ(e.out.v[0].topic.n_partitions, 6);
    for (int p = 0; p < 6; p++) {
        const struct ctl_rec_partition *r = &e.out.v[1 + p].partition;
        ASSERT_EQ(e.out.v[1 + p].type, CTL_REC_PARTITION);
        ASSERT_EQ(r->partition, p);
        ASSERT_EQ(r->n_replicas, 2);
        ASSERT_NE(r->replicas[0], r->replicas[1]);
        ASSERT_EQ(r->leader, r->replicas[0]);
        ASSERT_EQ(r->leader_epoch, 0);
    }
    ASSERT_EQ(e.out.v[7].type, CTL_REC_CONFIG);
    commit(&e);
    const struct ctl_topic *t = ctl_image_topic(&e.img, "orders");
    ASSERT(t != NULL);
    ASSERT_STREQ(ctl_image_config(&e.img, CTL_RESOURCE_TOPIC, "orders", "retention.ms"), "100");
    /* 6 partitions x 2 replicas on 3 brokers: 4 each, 2 preferred leaderships each */
    int replicas[4] = {0}, leaders[4] = {0};
    for (int p = 0; p < 6; p++) {
        for (int r = 0; r < 2; r++)
            replicas[t->parts[p].replicas[r]]++;
        leaders[t->parts[p].replicas[0]]++;
    }
    for (int b = 1; b <= 3; b++) {
        ASSERT_EQ(replicas[b], 4);
        ASSERT_EQ(leaders[b], 2);
    }
    env_free(&e);
}

static int16_t reject_segment_ms(int8_t type, const char *key, const char *value, void *data)
{
    (*(int *)data)++;
    return strcmp(key, "segment.ms") == 0 ? KERR_INVALID_CONFIG : KERR_NONE;
}

TEST(controller_cmd_create_topic_errors)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    add_broker(&e, 2, 0);
    ASSERT_EQ(create(&e, "", 1, 1, 1), KERR_INVALID_TOPIC_EXCEPTION);
    ASSERT_EQ(create(&e, ".", 1, 1, 1), KERR_INVALID_TOPIC_EXCEPTION);
    ASSERT_EQ(create(&e, "..", 1, 1, 1), KERR_INVALID_TOPIC_EXCEPTION);
    ASSERT_EQ(create(&e, "a b", 1, 1, 1), KERR_INVALID_TOPIC_EXCEPTION);
    char long_name[251];
    memset(long_name, 'x', 250);
    long_name[250] = '\0';
    ASSERT_EQ(create(&e, long_name, 1, 1, 1), KERR_INVALID_TOPIC_EXCEPTION);
    long_name[249] = '\0';
    ASSERT_EQ(create(&e, long_name, 1, 1, 1), KERR_NONE);
    e.out.n = 0;
    ASSERT_EQ(create(&e, "t", 1, 0, 1), KERR_INVALID_PARTITIONS);
    ASSERT_EQ(create(&e, "t", 1, -1, 1), KERR_INVALID_PARTITIONS);
    ASSERT_EQ(create(&e, "t", 1, CTL_PARTITIONS_MAX + 1, 1), KERR_INVALID_PARTITIONS);
    ASSERT_EQ(create(&e, "t", 1, 1, 0), KERR_INVALID_REPLICATION_FACTOR);
    ASSERT_EQ(create(&e, "t", 1, 1, 3), KERR_INVALID_REPLICATION_FACTOR); /* 2 live */
    struct ctl_create_topic zero_id = {"t", {{0}}, 1, 1, NULL, 0};
    ASSERT_EQ(ctl_cmd_create_topic(&e.img, &zero_id, NULL, NULL, &e.out), KERR_INVALID_REQUEST);
    ASSERT_EQ(e.out.n, 0);
    ASSERT_EQ(create(&e, "my.topic", 1, 1, 2), KERR_NONE);
    commit(&e);
    ASSERT_EQ(create(&e, "my.topic", 2, 1, 1), KERR_TOPIC_ALREADY_EXISTS);
    ASSERT_EQ(create(&e, "my_topic", 2, 1, 1), KERR_INVALID_TOPIC_EXCEPTION); /* collides */
    ASSERT_EQ(create(&e, "other", 1, 1, 1), KERR_INVALID_REQUEST);            /* id taken */
    /* a fenced broker does not count */
    int32_t two = 2;
    ctl_cmd_fence_brokers(&e.img, &two, 1, &e.out);
    commit(&e);
    ASSERT_EQ(create(&e, "t", 3, 1, 2), KERR_INVALID_REPLICATION_FACTOR);
    /* configs: duplicate, empty key, oversized value, the caller's rule */
    int calls = 0;
    struct ctl_config_entry dup[] = {{"a", "1"}, {"a", "2"}};
    struct ctl_create_topic req = {"t", ctu_uuid(3), 1, 1, dup, 2};
    ASSERT_EQ(ctl_cmd_create_topic(&e.img, &req, reject_segment_ms, &calls, &e.out),
              KERR_INVALID_REQUEST);
    struct ctl_config_entry empty[] = {{"", "1"}};
    req.configs = empty;
    req.n_configs = 1;
    ASSERT_EQ(ctl_cmd_create_topic(&e.img, &req, reject_segment_ms, &calls, &e.out),
              KERR_INVALID_CONFIG);
    char big[CTL_CONFIG_VALUE_MAX + 2];
    memset(big, 'v', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    struct ctl_config_entry large[] = {{"k", big}};
    req.configs = large;
    ASSERT_EQ(ctl_cmd_create_topic(&e.img, &req, reject_segment_ms, &calls, &e.out),
              KERR_INVALID_CONFIG);
    struct ctl_config_entry nullv[] = {{"k", NULL}};
    req.configs = nullv;
    ASSERT_EQ(ctl_cmd_create_topic(&e.img, &req, reject_segment_ms, &calls, &e.out),
              KERR_INVALID_CONFIG);
    ASSERT_EQ(calls, 0);
    struct ctl_config_entry bad[] = {{"retention.ms", "1"}, {"segment.ms", "x"}};
    req.configs = bad;
    req.n_configs = 2;
    ASSERT_EQ(ctl_cmd_create_topic(&e.img, &req, reject_segment_ms, &calls, &e.out),
              KERR_INVALID_CONFIG);
    ASSERT_EQ(calls, 2);
    ASSERT_EQ(e.out.n, 0);
    req.n_configs = 1;
    ASSERT_EQ(ctl_cmd_create_topic(&e.img, &req, reject_segment_ms, &calls, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 3);
    env_free(&e);
}

TEST(controller_cmd_delete_topic)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    ASSERT_EQ(ctl_cmd_delete_topic(&e.img, "t", &e.out), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ASSERT_EQ(create(&e, "t", 7, 2, 1), KERR_NONE);
    commit(&e);
    ASSERT_EQ(ctl_cmd_delete_topic(&e.img, "t", &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    ASSERT_EQ(e.out.v[0].type, CTL_REC_REMOVE_TOPIC);
    ASSERT_MEMEQ(e.out.v[0].remove_topic.id.b, ctu_uuid(7).b, 16);
    commit(&e);
    ASSERT(ctl_image_topic(&e.img, "t") == NULL);
    ASSERT_EQ(ctl_cmd_delete_topic(&e.img, "t", &e.out), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    env_free(&e);
}

TEST(controller_cmd_create_partitions_only_increase)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    add_broker(&e, 2, 0);
    ASSERT_EQ(ctl_cmd_create_partitions(&e.img, "t", 3, &e.out), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ASSERT_EQ(create(&e, "t", 7, 2, 2), KERR_NONE);
    commit(&e);
    ASSERT_EQ(ctl_cmd_create_partitions(&e.img, "t", 2, &e.out), KERR_INVALID_PARTITIONS);
    ASSERT_EQ(ctl_cmd_create_partitions(&e.img, "t", 1, &e.out), KERR_INVALID_PARTITIONS);
    ASSERT_EQ(ctl_cmd_create_partitions(&e.img, "t", CTL_PARTITIONS_MAX + 1, &e.out),
              KERR_INVALID_PARTITIONS);
    ASSERT_EQ(e.out.n, 0);
    ASSERT_EQ(ctl_cmd_create_partitions(&e.img, "t", 5, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1 + 3);
    ASSERT_EQ(e.out.v[0].topic.n_partitions, 5);
    ASSERT_EQ(e.out.v[1].partition.partition, 2);
    ASSERT_EQ(e.out.v[3].partition.partition, 4);
    ASSERT_EQ(e.out.v[3].partition.n_replicas, 2);
    commit(&e);
    const struct ctl_topic *t = ctl_image_topic(&e.img, "t");
    ASSERT_EQ(t->n_partitions, 5);
    for (int p = 0; p < 5; p++)
        ASSERT_EQ(t->parts[p].n_replicas, 2);
    /* with one broker fenced, rf 2 cannot be placed */
    int32_t two = 2;
    ctl_cmd_fence_brokers(&e.img, &two, 1, &e.out);
    commit(&e);
    ASSERT_EQ(ctl_cmd_create_partitions(&e.img, "t", 6, &e.out), KERR_INVALID_REPLICATION_FACTOR);
    env_free(&e);
}

TEST(controller_cmd_alter_configs)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    struct ctl_config_entry set[] = {{"retention.ms", "5"}};
    ASSERT_EQ(ctl_cmd_alter_configs(&e.img, CTL_RESOURCE_TOPIC, "t", set, 1, NULL, NULL, &e.out),
              KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ASSERT_EQ(create(&e, "t", 7, 1, 1), KERR_NONE);
    commit(&e);
    ASSERT_EQ(ctl_cmd_alter_configs(&e.img, CTL_RESOURCE_TOPIC, "t", set, 1, NULL, NULL, &e.out),
              KERR_NONE);
    commit(&e);
    ASSERT_STREQ(ctl_image_config(&e.img, CTL_RESOURCE_TOPIC, "t", "retention.ms"), "5");
    struct ctl_config_entry del[] = {{"retention.ms", NULL}, {"segment.ms", "10"}};
    ASSERT_EQ(ctl_cmd_alter_configs(&e.img, CTL_RESOURCE_TOPIC, "t", del, 2, NULL, NULL, &e.out),
              KERR_NONE);
    commit(&e);
    ASSERT(ctl_image_config(&e.img, CTL_RESOURCE_TOPIC, "t", "retention.ms") == NULL);
    ASSERT_STREQ(ctl_image_config(&e.img, CTL_RESOURCE_TOPIC, "t", "segment.ms"), "10");
    /* broker resources */
    ASSERT_EQ(ctl_cmd_alter_configs(&e.img, CTL_RESOURCE_BROKER, "", set, 1, NULL, NULL, &e.out),
              KERR_NONE);
    ASSERT_EQ(ctl_cmd_alter_configs(&e.img, CTL_RESOURCE_BROKER, "1", set, 1, NULL, NULL, &e.out),
              KERR_NONE);
    commit(&e);
    ASSERT_STREQ(ctl_image_config(&e.img, CTL_RESOURCE_BROKER, "1", "retention.ms"), "5");
    ASSERT_EQ(ctl_cmd_alter_configs(&e.img, CTL_RESOURCE_BROKER, "x", set, 1, NULL, NULL, &e.out),
              KERR_INVALID_REQUEST);
    ASSERT_EQ(ctl_cmd_alter_configs(&e.img, 3, "t", set, 1, NULL, NULL, &e.out),
              KERR_INVALID_REQUEST);
    struct ctl_config_entry dup[] = {{"a", "1"}, {"a", NULL}};
    ASSERT_EQ(ctl_cmd_alter_configs(&e.img, CTL_RESOURCE_TOPIC, "t", dup, 2, NULL, NULL, &e.out),
              KERR_INVALID_REQUEST);
    int calls = 0;
    struct ctl_config_entry bad[] = {{"segment.ms", NULL}};
    ASSERT_EQ(ctl_cmd_alter_configs(&e.img, CTL_RESOURCE_TOPIC, "t", bad, 1, reject_segment_ms,
                                    &calls, &e.out),
              KERR_INVALID_CONFIG);
    ASSERT_EQ(calls, 1);
    ASSERT_EQ(e.out.n, 0);
    env_free(&e);
}

/* A broker's client listeners: one BROKER_ENDPOINT per listener after its REGISTER_BROKER;
 * Metadata's lookup by listener name; snapshots keep them; a new registration replaces them. */
TEST(controller_cmd_register_endpoints)
{
    struct env e;
    env_init(&e);
    struct ctl_reg_endpoint eps[] = {{"PLAINTEXT", "h1", 9092}, {"SASL", "h1.example", 9094}};
    struct ctl_broker_reg reg = {1, inc(1), "h1", 9092, "h1:9093", eps, 2};
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &reg, 0, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 3);
    ASSERT_EQ(e.out.v[1].type, CTL_REC_BROKER_ENDPOINT);
    ASSERT_STREQ(e.out.v[2].endpoint.listener, "SASL");
    commit(&e);
    const struct ctl_broker *br = ctl_image_broker(&e.img, 1);
    const char *host;
    int32_t port;
    ctl_broker_endpoint(br, "SASL", &host, &port);
    ASSERT_STREQ(host, "h1.example");
    ASSERT_EQ(port, 9094);
    ctl_broker_endpoint(br, "PLAINTEXT", &host, &port);
    ASSERT_STREQ(host, "h1");
    ASSERT_EQ(port, 9092);
    ctl_broker_endpoint(br, "OTHER", &host, &port);
    ASSERT(host == NULL && port == -1);
    /* the snapshot rebuilds them */
    struct ctl_recs snap;
    ctl_recs_init(&snap);
    ctl_image_snapshot(&e.img, &snap);
    struct ctl_image other;
    ctl_image_init(&other);
    ASSERT_EQ(ctl_image_apply_all(&other, &snap), 0);
    ctl_broker_endpoint(ctl_image_broker(&other, 1), "SASL", &host, &port);
    ASSERT_STREQ(host, "h1.example");
    ctl_image_check(&other);
    ctl_image_free(&other);
    ctl_recs_free(&snap);
    /* a restart with one listener: the other is gone */
    struct ctl_broker_reg again = {1, inc(2), "h1", 9092, "h1:9093", eps, 1};
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &again, 5, &e.out), KERR_NONE);
    commit(&e);
    ctl_broker_endpoint(ctl_image_broker(&e.img, 1), "SASL", &host, &port);
    ASSERT(host == NULL);
    /* refused: a name twice, an empty name, a bad port, too many */
    struct ctl_reg_endpoint dup[] = {{"A", "h", 1}, {"A", "h", 2}};
    struct ctl_broker_reg bad = {1, inc(3), "h1", 9092, "", dup, 2};
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &bad, 0, &e.out), KERR_INVALID_REQUEST);
    struct ctl_reg_endpoint empty[] = {{"", "h", 1}}, port0[] = {{"A", "h", 0}};
    bad.endpoints = empty;
    bad.n_endpoints = 1;
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &bad, 0, &e.out), KERR_INVALID_REQUEST);
    bad.endpoints = port0;
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &bad, 0, &e.out), KERR_INVALID_REQUEST);
    bad.endpoints = eps;
    bad.n_endpoints = CTL_ENDPOINTS_MAX + 1;
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &bad, 0, &e.out), KERR_INVALID_REQUEST);
    ASSERT_EQ(e.out.n, 0);
    /* an endpoint of an unregistered broker is refused by the image */
    struct ctl_rec orphan = {.type = CTL_REC_BROKER_ENDPOINT};
    orphan.endpoint.node_id = 7;
    strcpy(orphan.endpoint.listener, "A");
    strcpy(orphan.endpoint.host, "h");
    orphan.endpoint.port = 1;
    ASSERT_EQ(ctl_image_apply(&e.img, &orphan), -ERR_INVALID);
    env_free(&e);
}

TEST(controller_cmd_register_and_heartbeat)
{
    struct env e;
    env_init(&e);
    struct ctl_broker_reg reg = {1, inc(1), "h1", 9092, "h1:9093", NULL, 0};
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &reg, 0, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    commit(&e);
    ASSERT(!ctl_image_broker_live(&e.img, 1)); /* fenced until caught up */
    /* a retry changes nothing */
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &reg, 5, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0);
    /* invalid registrations */
    struct ctl_broker_reg bad = reg;
    bad.port = 0;
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &bad, 0, &e.out), KERR_INVALID_REQUEST);
    bad = reg;
    bad.host = "";
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &bad, 0, &e.out), KERR_INVALID_REQUEST);
    bad = reg;
    bad.node_id = -1;
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &bad, 0, &e.out), KERR_INVALID_REQUEST);
    /* heartbeats: unknown broker, wrong incarnation, not caught up, caught up */
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, 2, inc(2), true, 10, &e.out),
              KERR_STALE_BROKER_EPOCH);
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, 1, inc(9), true, 10, &e.out),
              KERR_STALE_BROKER_EPOCH);
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, 1, inc(1), false, 10, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0);
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, 1, inc(1), true, 10, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    ASSERT_EQ(e.out.v[0].type, CTL_REC_BROKER_LIVENESS);
    ASSERT(!e.out.v[0].liveness.fenced);
    commit(&e);
    ASSERT(ctl_image_broker_live(&e.img, 1));
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, 1, inc(1), true, 20, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0);
    env_free(&e);
}

/* Partition 0 of "t" on replicas {1,2,3}, led by its preferred leader. */
static const struct ctl_partition *p0(struct env *e)
{
    return &ctl_image_topic(&e->img, "t")->parts[0];
}

TEST(controller_cmd_fence_after_session_timeout_moves_leaders)
{
    struct env e;
    env_init(&e);
    for (int32_t id = 1; id <= 3; id++)
        add_broker(&e, id, 0);
    ASSERT_EQ(create(&e, "t", 7, 3, 3), KERR_NONE);
    commit(&e);
    int32_t leader = p0(&e)->leader;
    ASSERT_EQ(leader, p0(&e)->replicas[0]);
    /* everyone heartbeats at 100 except the leader of partition 0 */
    for (int32_t id = 1; id <= 3; id++)
        if (id != leader)
            ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, id, inc(id), true, 100, &e.out), KERR_NONE);
    ASSERT_EQ(ctl_cmd_fence_expired(&e.img, &e.s, 99, 100, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0); /* 99 ms since its last heartbeat: still in time */
    ASSERT_EQ(ctl_cmd_fence_expired(&e.img, &e.s, 100, 100, &e.out), KERR_NONE);
    ASSERT(e.out.n >= 2);
    ASSERT_EQ(e.out.v[0].type, CTL_REC_BROKER_LIVENESS);
    ASSERT_EQ(e.out.v[0].liveness.node_id, leader);
    ASSERT(e.out.v[0].liveness.fenced);
    commit(&e);
    ASSERT(!ctl_image_broker_live(&e.img, leader));
    ASSERT_NE(p0(&e)->leader, leader);
    ASSERT_EQ(p0(&e)->leader, p0(&e)->replicas[1]); /* the next replica in order */
    ASSERT_EQ(p0(&e)->leader_epoch, 1);
    /* nobody else leads anything on the fenced broker */
    const struct ctl_topic *t = ctl_image_topic(&e.img, "t");
    for (int p = 0; p < 3; p++)
        ASSERT_NE(t->parts[p].leader, leader);
    /* fencing again does nothing */
    ASSERT_EQ(ctl_cmd_fence_expired(&e.img, &e.s, 150, 100, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0);
    env_free(&e);
}

TEST(controller_cmd_fence_all_then_unfence_elects)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    add_broker(&e, 2, 0);
    ASSERT_EQ(create(&e, "t", 7, 1, 2), KERR_NONE);
    commit(&e);
    /* both time out together: no live replica is left */
    ASSERT_EQ(ctl_cmd_fence_expired(&e.img, &e.s, 1000, 100, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 3); /* two liveness, LEADERS off the one that led */
    ASSERT_EQ(e.out.v[2].type, CTL_REC_LEADERS);
    commit(&e);
    ASSERT_EQ(p0(&e)->leader, -1);
    ASSERT_EQ(p0(&e)->leader_epoch, 1);
    /* the second replica comes back first: it leads */
    int32_t second = p0(&e)->replicas[1];
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, second, inc(second), true, 1001, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 2);
    commit(&e);
    ASSERT_EQ(p0(&e)->leader, second);
    ASSERT_EQ(p0(&e)->leader_epoch, 2);
    env_free(&e);
}

TEST(controller_cmd_new_leader_gives_a_full_session)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    struct ctl_sessions fresh; /* a new controller leader knows no heartbeats */
    ctl_sessions_init(&fresh);
    ASSERT_EQ(ctl_cmd_fence_expired(&e.img, &fresh, 5000, 100, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0);
    ASSERT_EQ(ctl_cmd_fence_expired(&e.img, &fresh, 5099, 100, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0);
    ASSERT_EQ(ctl_cmd_fence_expired(&e.img, &fresh, 5100, 100, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    ctl_sessions_free(&fresh);
    env_free(&e);
}

TEST(controller_cmd_reregistration_moves_leadership)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    add_broker(&e, 2, 0);
    ASSERT_EQ(create(&e, "t", 7, 1, 2), KERR_NONE);
    commit(&e);
    int32_t leader = p0(&e)->leader;
    struct ctl_broker_reg reg = {leader, ctu_uuid(99), "new", 9092, "", NULL, 0};
    ASSERT_EQ(ctl_cmd_register_broker(&e.img, &e.s, &reg, 10, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 2);
    commit(&e);
    ASSERT(!ctl_image_broker_live(&e.img, leader));
    ASSERT_STREQ(ctl_image_broker(&e.img, leader)->host, "new");
    ASSERT_EQ(p0(&e)->leader, p0(&e)->replicas[1]);
    ASSERT_EQ(p0(&e)->leader_epoch, 1);
    /* the old incarnation is now stale */
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, leader, inc(leader), true, 11, &e.out),
              KERR_STALE_BROKER_EPOCH);
    env_free(&e);
}

/* The leaders fencing gives, worked out partition by partition from the image before it: the
 * first replica in order that is live and not being fenced, epoch + 1, for each partition a
 * fenced broker leads (what the controller wrote as a PARTITION record each before LEADERS). */
static void expect_fenced(const struct ctl_image *before, const int32_t *ids, size_t n_ids,
                          int32_t *leader, int32_t *epoch, size_t n)
{
    const struct ctl_topic *t = ctl_image_topic(before, "t");
    ASSERT_EQ((size_t)t->n_partitions, n);
    for (size_t p = 0; p < n; p++) {
        const struct ctl_partition *part = &t->parts[p];
        leader[p] = part->leader;
        epoch[p] = part->leader_epoch;
        bool fenced = false;
        for (size_t i = 0; i < n_ids; i++)
            fenced |= part->leader == ids[i];
        if (!fenced)
            continue;
        leader[p] = ctl_elect_leader(before, part, ids, n_ids);
        epoch[p]++;
    }
}

/* One LEADERS record per broker moves all its partitions, to where a record per partition
 * computed from the image before would have: two brokers fenced together, then one back. */
TEST(controller_cmd_leaders_records_move_every_partition_at_once)
{
    struct env e;
    env_init(&e);
    for (int32_t id = 1; id <= 4; id++)
        add_broker(&e, id, 0);
    enum { N = 600 };
    ASSERT_EQ(create(&e, "t", 7, N, 3), KERR_NONE);
    commit(&e);
    int32_t ids[2] = {2, 3}, leader[N], epoch[N];
    expect_fenced(&e.img, ids, 2, leader, epoch, N);
    ASSERT_EQ(ctl_cmd_fence_brokers(&e.img, ids, 2, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 4); /* two liveness, one LEADERS each (not one record per partition) */
    for (size_t i = 2; i < 4; i++) {
        ASSERT_EQ(e.out.v[i].type, CTL_REC_LEADERS);
        ASSERT_EQ(e.out.v[i].leaders.node_id, ids[i - 2]);
        ASSERT(!e.out.v[i].leaders.back);
    }
    commit(&e);
    const struct ctl_topic *t = ctl_image_topic(&e.img, "t");
    size_t moved = 0;
    for (size_t p = 0; p < N; p++) {
        ASSERT_EQ(t->parts[p].leader, leader[p]);
        ASSERT_EQ(t->parts[p].leader_epoch, epoch[p]);
        moved += epoch[p] == 1;
    }
    ASSERT(moved >= N / 3); /* about half the partitions were led by 2 or 3 */
    /* then 1 and 4 too: no partition has a live replica left; 3 comes back */
    int32_t rest[2] = {1, 4};
    ASSERT_EQ(ctl_cmd_fence_brokers(&e.img, rest, 2, &e.out), KERR_NONE);
    commit(&e);
    t = ctl_image_topic(&e.img, "t");
    for (size_t p = 0; p < N; p++)
        ASSERT_EQ(t->parts[p].leader, -1);
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, 3, ctu_uuid(1), true, 1, &e.out),
              KERR_STALE_BROKER_EPOCH);
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, 3, inc(3), true, 1, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 2);
    ASSERT_EQ(e.out.v[1].type, CTL_REC_LEADERS);
    ASSERT(e.out.v[1].leaders.back);
    int32_t before[N];
    for (size_t p = 0; p < N; p++)
        before[p] = t->parts[p].leader_epoch;
    commit(&e);
    t = ctl_image_topic(&e.img, "t");
    for (size_t p = 0; p < N; p++) {
        bool has3 = ctl_partition_has_replica(&t->parts[p], 3);
        ASSERT_EQ(t->parts[p].leader, has3 ? 3 : -1);
        ASSERT_EQ(t->parts[p].leader_epoch, before[p] + (has3 ? 1 : 0));
    }
    /* a broker that leads nothing is fenced with no LEADERS record */
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, 1, inc(1), true, 2, &e.out), KERR_NONE);
    commit(&e); /* 1 back: the partitions 3 does not replicate have 1 (RF 3 of 4) */
    ASSERT_EQ(ctl_cmd_heartbeat(&e.img, &e.s, 2, inc(2), true, 2, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1); /* every partition has a leader already */
    commit(&e);
    ASSERT_EQ(ctl_cmd_fence_brokers(&e.img, &ids[0], 1, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    ASSERT_EQ(e.out.v[0].type, CTL_REC_BROKER_LIVENESS);
    env_free(&e);
}

/* LEADERS applies only to a registered broker; at the epoch limit a partition is left alone. */
TEST(controller_cmd_leaders_record_bounds)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    ASSERT_EQ(create(&e, "t", 7, 2, 1), KERR_NONE);
    commit(&e);
    struct ctl_rec r = {.type = CTL_REC_LEADERS, .leaders = {.node_id = 9, .back = false}};
    ASSERT_EQ(ctl_image_apply(&e.img, &r), -ERR_INVALID);
    struct ctl_rec forge = {.type = CTL_REC_PARTITION};
    forge.partition = (struct ctl_rec_partition){.topic_id = ctu_uuid(7), .partition = 1,
                                                 .leader = 1, .leader_epoch = CTL_EPOCH_MAX,
                                                 .n_replicas = 1, .replicas = {1}};
    ASSERT_EQ(ctl_image_apply(&e.img, &forge), 0);
    r.leaders.node_id = 1;
    ASSERT_EQ(ctl_image_apply(&e.img, &r), 0);
    ASSERT_EQ(p0(&e)->leader, -1);
    ASSERT_EQ(p0(&e)->leader_epoch, 1);
    const struct ctl_partition *p1 = &ctl_image_topic(&e.img, "t")->parts[1];
    ASSERT_EQ(p1->leader, 1);
    ASSERT_EQ(p1->leader_epoch, CTL_EPOCH_MAX);
    env_free(&e);
}

TEST(controller_cmd_producer_id_blocks_never_overlap)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    add_broker(&e, 2, 0);
    ASSERT_EQ(ctl_cmd_alloc_producer_ids(&e.img, 3, inc(3), 0, &e.out), KERR_STALE_BROKER_EPOCH);
    ASSERT_EQ(ctl_cmd_alloc_producer_ids(&e.img, 1, inc(2), 0, &e.out), KERR_STALE_BROKER_EPOCH);
    ASSERT_EQ(ctl_cmd_alloc_producer_ids(&e.img, 1, inc(1), 0, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.v[0].pids.first, 0);
    ASSERT_EQ(e.out.v[0].pids.size, CTL_PID_BLOCK_SIZE);
    commit(&e);
    ASSERT_EQ(ctl_cmd_alloc_producer_ids(&e.img, 2, inc(2), 0, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.v[0].pids.first, CTL_PID_BLOCK_SIZE);
    commit(&e);
    /* a new leader rebuilds from a snapshot and continues after the last block */
    struct ctl_recs snap;
    ctl_recs_init(&snap);
    ctl_image_snapshot(&e.img, &snap);
    struct ctl_image other;
    ctl_image_init(&other);
    ASSERT_EQ(ctl_image_apply_all(&other, &snap), 0);
    ASSERT_EQ(ctl_cmd_alloc_producer_ids(&other, 1, inc(1), 0, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.v[0].pids.first, 2 * CTL_PID_BLOCK_SIZE);
    /* exhaustion */
    struct ctl_rec last = {.type = CTL_REC_PRODUCER_IDS};
    last.pids.broker_id = 1;
    last.pids.first = INT64_MAX - 500;
    last.pids.size = 500;
    ASSERT_EQ(ctl_image_apply(&other, &last), 0);
    e.out.n = 0;
    ASSERT_EQ(ctl_cmd_alloc_producer_ids(&other, 1, inc(1), 0, &e.out), KERR_UNKNOWN_SERVER_ERROR);
    ASSERT_EQ(e.out.n, 0);
    ctl_image_free(&other);
    ctl_recs_free(&snap);
    env_free(&e);
}

TEST(controller_placement_elect_and_place_basics)
{
    struct env e;
    env_init(&e);
    int32_t rows[8];
    ASSERT_EQ(ctl_place(&e.img, 1, 1, rows), -ERR_INVALID); /* no live broker */
    add_broker(&e, 5, 0);
    add_broker(&e, 3, 0);
    ASSERT_EQ(ctl_place(&e.img, 2, 3, rows), -ERR_INVALID);
    ASSERT_EQ(ctl_place(&e.img, 4, 2, rows), 0);
    for (int p = 0; p < 4; p++)
        ASSERT_NE(rows[2 * p], rows[2 * p + 1]);
    ASSERT_EQ(rows[0], 3); /* ties go to the lower id */
    ASSERT_EQ(rows[2], 5); /* then the leadership alternates */
    struct ctl_partition part = {
        .leader = 3, .leader_epoch = 0, .n_replicas = 2, .replicas = {3, 5}};
    ASSERT_EQ(ctl_elect_leader(&e.img, &part, NULL, 0), 3);
    int32_t ex = 3;
    ASSERT_EQ(ctl_elect_leader(&e.img, &part, &ex, 1), 5);
    int32_t both[] = {3, 5};
    ASSERT_EQ(ctl_elect_leader(&e.img, &part, both, 2), -1);
    env_free(&e);
}

/* A forged log can hold the largest epoch: fencing then leaves the partition alone instead of
 * overflowing (and the epoch above it is refused). */
TEST(controller_cmd_epoch_limit_never_overflows)
{
    struct env e;
    env_init(&e);
    add_broker(&e, 1, 0);
    add_broker(&e, 2, 0);
    ASSERT_EQ(create(&e, "t", 7, 1, 2), KERR_NONE);
    commit(&e);
    struct ctl_rec r = {.type = CTL_REC_PARTITION};
    r.partition.topic_id = ctu_uuid(7);
    r.partition.leader = p0(&e)->leader;
    r.partition.n_replicas = 2;
    memcpy(r.partition.replicas, p0(&e)->replicas, sizeof(r.partition.replicas));
    r.partition.leader_epoch = INT32_MAX;
    ASSERT(!ctl_rec_valid(&r));
    r.partition.leader_epoch = CTL_EPOCH_MAX;
    ASSERT_EQ(ctl_image_apply(&e.img, &r), 0);
    int32_t leader = p0(&e)->leader;
    ASSERT_EQ(ctl_cmd_fence_brokers(&e.img, &leader, 1, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1); /* the liveness record only */
    commit(&e);
    ASSERT_EQ(p0(&e)->leader_epoch, CTL_EPOCH_MAX);
    env_free(&e);
}

/* A reassignment (AlterPartitionReassignments) records a target beside the replicas; a leader
 * change keeps it; the leader's report of its committed voters ends it with the target's order.
 * Refusals: unknown topic or partition, duplicate or unregistered brokers, a replica left out,
 * a cancel of nothing; a target equal to the replicas records nothing. The PARTITION record with
 * a target goes out at version 1 and decodes back whole. */
TEST(controller_cmd_reassign_and_report)
{
    struct env e;
    env_init(&e);
    for (int32_t id = 1; id <= 3; id++)
        add_broker(&e, id, 0);
    ASSERT_EQ(create(&e, "t", 9, 2, 1), KERR_NONE);
    commit(&e);
    const struct ctl_topic *t = ctl_image_topic(&e.img, "t");
    int32_t r0 = t->parts[0].replicas[0];
    int32_t all[3] = {r0, r0 % 3 + 1, (r0 + 1) % 3 + 1};
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "nosuch", 0, all, 3, &e.out), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 2, all, 3, &e.out), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 0, (int32_t[]){r0, r0}, 2, &e.out),
              KERR_INVALID_REPLICA_ASSIGNMENT);
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 0, (int32_t[]){r0, 9}, 2, &e.out),
              KERR_INVALID_REPLICA_ASSIGNMENT);
    /* a target that leaves r0 out moves the partition off it */
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 0, (int32_t[]){all[1]}, 1, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    ASSERT_EQ(e.out.v[0].partition.n_target, 1);
    ASSERT_EQ(e.out.v[0].partition.target[0], all[1]);
    e.out.n = 0; /* not applied */
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 0, NULL, 0, &e.out), KERR_NO_REASSIGNMENT_IN_PROGRESS);
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 0, (int32_t[]){r0}, 1, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0); /* already so */
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 0, all, 3, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    /* the record goes out at version 1, and back */
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    ctl_rec_encode(&w, &e.out.v[0]);
    size_t len;
    uint8_t *bytes = iobuf_flatten(&b, &len);
    iobuf_destroy(&b);
    ASSERT_EQ(bytes[3], 1);
    struct ctl_rec back;
    ASSERT_EQ(ctl_rec_decode(bytes, len, &back), 0);
    ASSERT_EQ(back.partition.n_target, 3);
    ASSERT_EQ(back.partition.target[2], all[2]);
    bytes[3] = 0; /* version 0 has no target: the bytes left over make it corrupt */
    ASSERT_EQ(ctl_rec_decode(bytes, len, &back), -ERR_CORRUPT);
    mem_free(bytes);
    commit(&e);
    const struct ctl_partition *p = &ctl_image_topic(&e.img, "t")->parts[0];
    ASSERT_EQ(p->n_replicas, 1);
    ASSERT_EQ(p->n_target, 3);
    ASSERT(ctl_partition_has_member(p, all[2]) && !ctl_partition_has_replica(p, all[2]));
    /* a leader change (fencing the leader) keeps the target */
    ASSERT_EQ(ctl_cmd_fence_brokers(&e.img, &r0, 1, &e.out), KERR_NONE);
    commit(&e);
    p = &ctl_image_topic(&e.img, "t")->parts[0];
    ASSERT_EQ(p->n_target, 3);
    /* reports: part of the way keeps the target; all of it ends the reassignment */
    struct kuuid id = ctl_image_topic(&e.img, "t")->id;
    ASSERT_EQ(ctl_cmd_partition_replicas(&e.img, id, 0, (int32_t[]){all[1], r0}, 2, &e.out),
              KERR_NONE);
    commit(&e);
    p = &ctl_image_topic(&e.img, "t")->parts[0];
    ASSERT_EQ(p->n_replicas, 2);
    ASSERT_EQ(p->replicas[0], r0); /* the replica that stays keeps its place */
    ASSERT_EQ(p->n_target, 3);
    ASSERT_EQ(ctl_cmd_partition_replicas(&e.img, id, 0, (int32_t[]){all[2], all[1], r0}, 3,
                                         &e.out),
              KERR_NONE);
    commit(&e);
    p = &ctl_image_topic(&e.img, "t")->parts[0];
    ASSERT_EQ(p->n_target, 0);
    ASSERT_EQ(p->n_replicas, 3);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(p->replicas[i], all[i]); /* the target's order */
    ASSERT_EQ(ctl_cmd_partition_replicas(&e.img, id, 0, all, 3, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0); /* nothing changes */
    ASSERT_EQ(ctl_cmd_partition_replicas(&e.img, ctu_uuid(4242), 0, all, 3, &e.out),
              KERR_UNKNOWN_TOPIC_OR_PARTITION);
    ASSERT_EQ(ctl_cmd_partition_replicas(&e.img, id, 0, (int32_t[]){all[1], all[2]}, 2, &e.out),
              KERR_INVALID_REPLICA_ASSIGNMENT); /* a shrink: not a report of ours */
    ASSERT_EQ(e.out.n, 0);
    /* a cancel clears a target */
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 1, all, 3, &e.out), KERR_NONE);
    commit(&e);
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 1, NULL, 0, &e.out), KERR_NONE);
    commit(&e);
    ASSERT_EQ(ctl_image_topic(&e.img, "t")->parts[1].n_target, 0);
    /* a shrink: the report of the target's voters ends it, the leader moving if it left */
    ASSERT_EQ(ctl_cmd_reassign(&e.img, "t", 0, (int32_t[]){all[1], all[2]}, 2, &e.out), KERR_NONE);
    commit(&e);
    p = &ctl_image_topic(&e.img, "t")->parts[0];
    int32_t epoch = p->leader_epoch;
    bool leader_left = p->leader == all[0];
    ASSERT_EQ(ctl_cmd_partition_replicas(&e.img, id, 0, (int32_t[]){all[2], all[1]}, 2, &e.out),
              KERR_NONE);
    commit(&e);
    p = &ctl_image_topic(&e.img, "t")->parts[0];
    ASSERT_EQ(p->n_target, 0);
    ASSERT_EQ(p->n_replicas, 2);
    ASSERT(!ctl_partition_has_member(p, all[0]));
    ASSERT(p->leader == -1 || ctl_partition_has_replica(p, p->leader));
    if (leader_left)
        ASSERT_EQ(p->leader_epoch, epoch + 1);
    ctl_image_check(&e.img);
    env_free(&e);
}

TEST(controller_cmd_voters_add_remove_and_refusals)
{
    struct env e;
    env_init(&e);
    for (int32_t id = 1; id <= 3; id++)
        add_broker(&e, id, 0);
    int32_t now1[] = {1};
    bool same;
    /* before any VOTERS record the base is the quorum's configuration now */
    ASSERT_EQ(ctl_cmd_voters(&e.img, true, 1, now1, 1, &same, &e.out), KERR_DUPLICATE_VOTER);
    ASSERT_EQ(ctl_cmd_voters(&e.img, false, 2, now1, 1, &same, &e.out), KERR_VOTER_NOT_FOUND);
    ASSERT_EQ(ctl_cmd_voters(&e.img, false, 1, now1, 1, &same, &e.out), KERR_INVALID_REQUEST);
    ASSERT_EQ(ctl_cmd_voters(&e.img, true, 9, now1, 1, &same, &e.out), KERR_BROKER_NOT_AVAILABLE);
    ASSERT_EQ(e.out.n, 0);
    ASSERT_EQ(ctl_cmd_voters(&e.img, true, 2, now1, 1, &same, &e.out), KERR_NONE);
    ASSERT(!same);
    ASSERT_EQ(e.out.n, 1);
    ASSERT_EQ(e.out.v[0].type, CTL_REC_VOTERS);
    commit(&e);
    ASSERT_EQ(e.img.voters.n, 2);
    ASSERT_EQ(e.img.voters.ids[0], 1);
    ASSERT_EQ(e.img.voters.ids[1], 2);
    /* asked again while the quorum is still {1}: no record, the caller waits */
    ASSERT_EQ(ctl_cmd_voters(&e.img, true, 2, now1, 1, &same, &e.out), KERR_NONE);
    ASSERT(same);
    ASSERT_EQ(e.out.n, 0);
    /* the base is now the image's set, whatever the configuration says */
    ASSERT_EQ(ctl_cmd_voters(&e.img, true, 3, now1, 1, &same, &e.out), KERR_NONE);
    commit(&e);
    ASSERT_EQ(e.img.voters.n, 3);
    int32_t now3[] = {1, 2, 3};
    ASSERT_EQ(ctl_cmd_voters(&e.img, false, 1, now3, 3, &same, &e.out), KERR_NONE);
    commit(&e);
    ASSERT_EQ(e.img.voters.n, 2);
    ASSERT_EQ(e.img.voters.ids[0], 2);
    ASSERT_EQ(e.img.voters.ids[1], 3);
    /* removal asked again: waits while the configuration still has it, else not found */
    ASSERT_EQ(ctl_cmd_voters(&e.img, false, 1, now3, 3, &same, &e.out), KERR_NONE);
    ASSERT(same);
    int32_t now23[] = {2, 3};
    ASSERT_EQ(ctl_cmd_voters(&e.img, false, 1, now23, 2, &same, &e.out), KERR_VOTER_NOT_FOUND);
    ASSERT_EQ(e.out.n, 0);
    env_free(&e);
}

TEST(controller_cmd_user_scram_set_and_delete)
{
    struct env e;
    env_init(&e);
    struct ctl_rec_user u = {.mechanism = CTL_SCRAM_SHA256, .iterations = 4096, .salt_len = 16,
                             .key_len = 32};
    strcpy(u.name, "alice");
    ASSERT_EQ(ctl_cmd_user(&e.img, &u, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    commit(&e);
    ASSERT(ctl_image_user(&e.img, "alice", CTL_SCRAM_SHA256) != NULL);
    struct ctl_rec_user bad = u;
    bad.mechanism = 9;
    ASSERT_EQ(ctl_cmd_user(&e.img, &bad, &e.out), KERR_UNSUPPORTED_SASL_MECHANISM);
    bad = u;
    bad.iterations = 100;
    ASSERT_EQ(ctl_cmd_user(&e.img, &bad, &e.out), KERR_UNACCEPTABLE_CREDENTIAL);
    bad = u;
    bad.key_len = 64;
    ASSERT_EQ(ctl_cmd_user(&e.img, &bad, &e.out), KERR_UNACCEPTABLE_CREDENTIAL);
    ASSERT_EQ(e.out.n, 0);
    struct ctl_rec_user del = {.mechanism = CTL_SCRAM_SHA512, .deleted = true};
    strcpy(del.name, "alice");
    ASSERT_EQ(ctl_cmd_user(&e.img, &del, &e.out), KERR_RESOURCE_NOT_FOUND); /* no SHA-512 one */
    del.mechanism = CTL_SCRAM_SHA256;
    ASSERT_EQ(ctl_cmd_user(&e.img, &del, &e.out), KERR_NONE);
    commit(&e);
    ASSERT(ctl_image_user(&e.img, "alice", CTL_SCRAM_SHA256) == NULL);
    env_free(&e);
}

TEST(controller_cmd_acl_add_and_remove)
{
    struct env e;
    env_init(&e);
    struct ctl_rec_acl a = {.resource_type = 3, .pattern_type = 3, .operation = 3, .permission = 3};
    strcpy(a.resource_name, "g1");
    strcpy(a.principal, "User:bob");
    strcpy(a.host, "*");
    ASSERT_EQ(ctl_cmd_acl(&e.img, &a, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    commit(&e);
    ASSERT_EQ(ctl_cmd_acl(&e.img, &a, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0); /* there already */
    struct ctl_rec_acl bad = a;
    bad.operation = 99;
    ASSERT_EQ(ctl_cmd_acl(&e.img, &bad, &e.out), KERR_INVALID_REQUEST);
    a.deleted = true;
    ASSERT_EQ(ctl_cmd_acl(&e.img, &a, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 1);
    commit(&e);
    ASSERT_EQ(e.img.n_acls, 0);
    ASSERT_EQ(ctl_cmd_acl(&e.img, &a, &e.out), KERR_NONE);
    ASSERT_EQ(e.out.n, 0); /* gone already */
    env_free(&e);
}
