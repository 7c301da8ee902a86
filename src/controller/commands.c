/* Admin and broker-lifecycle commands (controller/commands.h).
 *
 * Owns only struct ctl_sessions (the leader's heartbeat times, sorted by broker id); every
 * command reads the image and appends records, and validates everything before appending the
 * first record, so an error leaves *out as it was.
 */
#include "controller/commands.h"

#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "controller/placement.h"
#include "kafka/errors.h"

/* ---- sessions ---- */

void ctl_sessions_init(struct ctl_sessions *s)
{
    memset(s, 0, sizeof(*s));
}

void ctl_sessions_free(struct ctl_sessions *s)
{
    mem_free(s->v);
    ctl_sessions_init(s);
}

static struct ctl_session *session_get(struct ctl_sessions *s, int32_t id, int64_t now_ms)
{
    size_t i = 0;
    while (i < s->n && s->v[i].id < id)
        i++;
    if (i < s->n && s->v[i].id == id)
        return &s->v[i];
    MEM_GROW(s->v, s->cap, s->n + 1);
    memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(s->v[0]));
    s->n++;
    s->v[i] = (struct ctl_session){id, now_ms};
    return &s->v[i];
}

/* ---- helpers ---- */

static void push_partition(struct ctl_recs *out, const struct ctl_topic *t, int32_t p,
                           const struct ctl_partition *part, int32_t leader, int32_t epoch)
{
    struct ctl_rec *r = ctl_recs_push(out, CTL_REC_PARTITION);
    r->partition.topic_id = t->id;
    r->partition.partition = p;
    r->partition.leader = leader;
    r->partition.leader_epoch = epoch;
    r->partition.n_replicas = part->n_replicas;
    memcpy(r->partition.replicas, part->replicas, sizeof(part->replicas));
    r->partition.n_target = part->n_target; /* a leader change keeps a reassignment going */
    memcpy(r->partition.target, part->target, sizeof(part->target));
}

/* ids[0..n) are distinct, >= 0 and n in 1..CTL_REPLICAS_MAX. */
static bool ids_ok(const int32_t *ids, int32_t n)
{
    if (n < 1 || n > CTL_REPLICAS_MAX || !ids)
        return false;
    for (int32_t i = 0; i < n; i++) {
        if (ids[i] < 0)
            return false;
        for (int32_t j = 0; j < i; j++)
            if (ids[j] == ids[i])
                return false;
    }
    return true;
}

int16_t ctl_cmd_reassign(const struct ctl_image *img, const char *name, int32_t partition,
                         const int32_t *target, int32_t n, struct ctl_recs *out)
{
    const struct ctl_topic *t = name ? ctl_image_topic(img, name) : NULL;
    if (t == NULL || partition < 0 || partition >= t->n_partitions ||
        t->parts[partition].n_replicas == 0)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    const struct ctl_partition *p = &t->parts[partition];
    struct ctl_partition next = *p;
    if (n == 0) { /* cancel */
        if (p->n_target == 0)
            return KERR_NO_REASSIGNMENT_IN_PROGRESS;
        next.n_target = 0;
    } else {
        if (!ids_ok(target, n))
            return KERR_INVALID_REPLICA_ASSIGNMENT;
        for (int32_t i = 0; i < n; i++)
            if (ctl_image_broker(img, target[i]) == NULL)
                return KERR_INVALID_REPLICA_ASSIGNMENT;
        if (ctl_ids_same_set(target, n, p->replicas, p->n_replicas)) {
            if (p->n_target == 0)
                return KERR_NONE; /* nothing to do */
            next.n_target = 0;
        } else {
            next.n_target = n;
            memcpy(next.target, target, (size_t)n * sizeof(*target));
        }
    }
    push_partition(out, t, partition, &next, p->leader, p->leader_epoch);
    return KERR_NONE;
}

int16_t ctl_cmd_partition_replicas(const struct ctl_image *img, struct kuuid topic_id,
                                   int32_t partition, const int32_t *voters, int32_t n,
                                   struct ctl_recs *out)
{
    const struct ctl_topic *t = ctl_image_topic_by_id(img, topic_id);
    if (t == NULL || partition < 0 || partition >= t->n_partitions ||
        t->parts[partition].n_replicas == 0)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (!ids_ok(voters, n))
        return KERR_INVALID_REPLICA_ASSIGNMENT;
    const struct ctl_partition *p = &t->parts[partition];
    struct ctl_partition next = *p;
    if (p->n_target > 0 && ctl_ids_same_set(voters, n, p->target, p->n_target)) {
        next.n_replicas = p->n_target; /* the reassignment is done: the target's order */
        memcpy(next.replicas, p->target, sizeof(p->target));
        next.n_target = 0;
    } else if (ctl_ids_same_set(voters, n, p->replicas, p->n_replicas)) {
        return KERR_NONE; /* unchanged */
    } else { /* part of the way: the replicas that stay keep their order, new ones follow */
        for (int32_t i = 0; i < p->n_replicas; i++) {
            bool kept = false;
            for (int32_t j = 0; j < n; j++)
                kept |= voters[j] == p->replicas[i];
            if (!kept) /* removals are not done yet: such a report is not ours (commands.h) */
                return KERR_INVALID_REPLICA_ASSIGNMENT;
        }
        int32_t k = 0;
        for (int32_t i = 0; i < p->n_replicas; i++)
            for (int32_t j = 0; j < n; j++)
                if (voters[j] == p->replicas[i])
                    next.replicas[k++] = p->replicas[i];
        for (int32_t j = 0; j < n; j++) {
            bool had = false;
            for (int32_t i = 0; i < p->n_replicas; i++)
                had |= voters[j] == p->replicas[i];
            if (!had)
                next.replicas[k++] = voters[j];
        }
        next.n_replicas = k;
        if (next.n_target > 0 && ctl_ids_same_set(next.target, next.n_target, next.replicas, k))
            next.n_target = 0;
    }
    int32_t leader = p->leader, epoch = p->leader_epoch;
    if (leader != -1 && !ctl_partition_has_replica(&next, leader)) {
        leader = next.replicas[0];
        epoch = epoch < CTL_EPOCH_MAX ? epoch + 1 : epoch;
    }
    push_partition(out, t, partition, &next, leader, epoch);
    return KERR_NONE;
}

int16_t ctl_cmd_voters(const struct ctl_image *img, bool add, int32_t node,
                       const int32_t *current, size_t n_current, bool *unchanged,
                       struct ctl_recs *out)
{
    int32_t base[CTL_VOTERS_MAX];
    size_t n = 0;
    *unchanged = false;
    if (img->voters.n > 0) {
        n = (size_t)img->voters.n;
        memcpy(base, img->voters.ids, n * sizeof(base[0]));
    } else {
        for (size_t i = 0; i < n_current && n < CTL_VOTERS_MAX; i++)
            base[n++] = current[i];
    }
    bool in = false;
    for (size_t i = 0; i < n; i++)
        in |= base[i] == node;
    if (add && in) {
        *unchanged = true; /* asked again (a retry): the caller waits for the same end */
        return img->voters.n > 0 ? KERR_NONE : KERR_DUPLICATE_VOTER;
    }
    if (!add && !in) {
        *unchanged = true;
        bool now = false; /* removal asked again while the quorum still has it: wait */
        for (size_t i = 0; i < n_current; i++)
            now |= current[i] == node;
        return img->voters.n > 0 && now ? KERR_NONE : KERR_VOTER_NOT_FOUND;
    }
    struct ctl_rec_voters next = {0};
    if (add) {
        const struct ctl_broker *br = ctl_image_broker(img, node);
        if (node < 0 || br == NULL || br->cluster_addr[0] == '\0')
            return KERR_BROKER_NOT_AVAILABLE;
        if (n >= CTL_VOTERS_MAX)
            return KERR_INVALID_REQUEST;
        memcpy(next.ids, base, n * sizeof(base[0]));
        next.ids[n] = node;
        next.n = (int32_t)n + 1;
    } else {
        if (n <= 1)
            return KERR_INVALID_REQUEST; /* the quorum's last voter */
        for (size_t i = 0; i < n; i++)
            if (base[i] != node)
                next.ids[next.n++] = base[i];
    }
    struct ctl_rec *r = ctl_recs_push(out, CTL_REC_VOTERS);
    r->voters = next;
    return KERR_NONE;
}

static void push_new_partitions(struct ctl_recs *out, struct kuuid id, int32_t first, int32_t n,
                                int32_t rf, const int32_t *rows)
{
    for (int32_t p = 0; p < n; p++) {
        struct ctl_rec *r = ctl_recs_push(out, CTL_REC_PARTITION);
        r->partition.topic_id = id;
        r->partition.partition = first + p;
        r->partition.n_replicas = rf;
        memcpy(r->partition.replicas, &rows[(size_t)p * (size_t)rf], (size_t)rf * sizeof(int32_t));
        r->partition.leader = r->partition.replicas[0];
        r->partition.leader_epoch = 0;
    }
}

static bool in_ids(const int32_t *ids, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

/* Checks config entries: key and value lengths, duplicates, then the caller's rule. */
static int16_t configs_check(int8_t type, const struct ctl_config_entry *e, size_t n,
                             bool allow_delete, ctl_config_check_fn check, void *data)
{
    for (size_t i = 0; i < n; i++) {
        size_t klen = e[i].key ? strlen(e[i].key) : 0;
        if (klen == 0 || klen > CTL_CONFIG_KEY_MAX)
            return KERR_INVALID_CONFIG;
        if (e[i].value == NULL && !allow_delete)
            return KERR_INVALID_CONFIG;
        if (e[i].value != NULL && strlen(e[i].value) > CTL_CONFIG_VALUE_MAX)
            return KERR_INVALID_CONFIG;
        for (size_t j = 0; j < i; j++)
            if (strcmp(e[j].key, e[i].key) == 0)
                return KERR_INVALID_REQUEST;
    }
    for (size_t i = 0; check != NULL && i < n; i++) {
        int16_t err = check(type, e[i].key, e[i].value, data);
        if (err != KERR_NONE)
            return err;
    }
    return KERR_NONE;
}

static void push_configs(struct ctl_recs *out, int8_t type, const char *resource,
                         const struct ctl_config_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct ctl_rec *r = ctl_recs_push(out, CTL_REC_CONFIG);
        r->config.resource_type = type;
        strcpy(r->config.resource, resource);
        strcpy(r->config.key, e[i].key);
        r->config.deleted = e[i].value == NULL;
        if (e[i].value != NULL)
            strcpy(r->config.value, e[i].value);
    }
}

/* Kafka refuses a name that equals an existing one once '.' and '_' are taken as equal. */
static bool names_collide(const char *a, const char *b)
{
    for (; *a != '\0' && *b != '\0'; a++, b++) {
        char x = *a == '.' ? '_' : *a, y = *b == '.' ? '_' : *b;
        if (x != y)
            return false;
    }
    return *a == *b;
}

/* ---- topics ---- */

static int16_t create_topic_check(const struct ctl_image *img, const struct ctl_create_topic *req)
{
    size_t len = req->name ? strlen(req->name) : 0;
    if (!ctl_topic_name_valid(req->name, len))
        return KERR_INVALID_TOPIC_EXCEPTION;
    if (ctl_image_topic(img, req->name) != NULL)
        return KERR_TOPIC_ALREADY_EXISTS;
    for (size_t i = 0; i < img->n_topics; i++)
        if (names_collide(img->topics[i]->name, req->name))
            return KERR_INVALID_TOPIC_EXCEPTION;
    if (req->n_partitions < 1 || req->n_partitions > CTL_PARTITIONS_MAX)
        return KERR_INVALID_PARTITIONS;
    if (req->rf < 1 || req->rf > CTL_REPLICAS_MAX || (size_t)req->rf > ctl_image_live_brokers(img))
        return KERR_INVALID_REPLICATION_FACTOR;
    if (ctl_uuid_is_zero(req->id) || ctl_image_topic_by_id(img, req->id) != NULL)
        return KERR_INVALID_REQUEST;
    return KERR_NONE;
}

int16_t ctl_cmd_create_topic(const struct ctl_image *img, const struct ctl_create_topic *req,
                             ctl_config_check_fn check, void *data, struct ctl_recs *out)
{
    int16_t err = create_topic_check(img, req);
    if (err == KERR_NONE)
        err = configs_check(CTL_RESOURCE_TOPIC, req->configs, req->n_configs, false, check, data);
    if (err != KERR_NONE)
        return err;
    int32_t *rows = mem_alloc((size_t)req->n_partitions * (size_t)req->rf * sizeof(int32_t));
    CHECK(ctl_place(img, req->n_partitions, req->rf, rows) == 0);
    struct ctl_rec *r = ctl_recs_push(out, CTL_REC_TOPIC);
    strcpy(r->topic.name, req->name);
    r->topic.id = req->id;
    r->topic.n_partitions = req->n_partitions;
    push_new_partitions(out, req->id, 0, req->n_partitions, req->rf, rows);
    push_configs(out, CTL_RESOURCE_TOPIC, req->name, req->configs, req->n_configs);
    mem_free(rows);
    return KERR_NONE;
}

int16_t ctl_cmd_delete_topic(const struct ctl_image *img, const char *name, struct ctl_recs *out)
{
    const struct ctl_topic *t = name ? ctl_image_topic(img, name) : NULL;
    if (t == NULL)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    ctl_recs_push(out, CTL_REC_REMOVE_TOPIC)->remove_topic.id = t->id;
    return KERR_NONE;
}

int16_t ctl_cmd_create_partitions(const struct ctl_image *img, const char *name, int32_t n_total,
                                  struct ctl_recs *out)
{
    const struct ctl_topic *t = name ? ctl_image_topic(img, name) : NULL;
    if (t == NULL)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (n_total <= t->n_partitions || n_total > CTL_PARTITIONS_MAX)
        return KERR_INVALID_PARTITIONS;
    int32_t rf = t->parts[0].n_replicas;
    if (rf < 1 || (size_t)rf > ctl_image_live_brokers(img))
        return KERR_INVALID_REPLICATION_FACTOR;
    int32_t n_new = n_total - t->n_partitions;
    int32_t *rows = mem_alloc((size_t)n_new * (size_t)rf * sizeof(int32_t));
    CHECK(ctl_place(img, n_new, rf, rows) == 0);
    struct ctl_rec *r = ctl_recs_push(out, CTL_REC_TOPIC);
    memcpy(r->topic.name, t->name, sizeof(t->name));
    r->topic.id = t->id;
    r->topic.n_partitions = n_total;
    push_new_partitions(out, t->id, t->n_partitions, n_new, rf, rows);
    mem_free(rows);
    return KERR_NONE;
}

int16_t ctl_cmd_alter_configs(const struct ctl_image *img, int8_t resource_type,
                              const char *resource, const struct ctl_config_entry *ops,
                              size_t n_ops, ctl_config_check_fn check, void *data,
                              struct ctl_recs *out)
{
    if (resource == NULL ||
        (resource_type != CTL_RESOURCE_TOPIC && resource_type != CTL_RESOURCE_BROKER))
        return KERR_INVALID_REQUEST;
    if (resource_type == CTL_RESOURCE_TOPIC && ctl_image_topic(img, resource) == NULL)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (resource_type == CTL_RESOURCE_BROKER) {
        /* Let the record validator judge the broker resource form. */
        struct ctl_rec probe = {.type = CTL_REC_CONFIG};
        probe.config.resource_type = CTL_RESOURCE_BROKER;
        probe.config.key[0] = 'k';
        if (strlen(resource) > CTL_NAME_MAX)
            return KERR_INVALID_REQUEST;
        strcpy(probe.config.resource, resource);
        if (!ctl_rec_valid(&probe))
            return KERR_INVALID_REQUEST;
    }
    int16_t err = configs_check(resource_type, ops, n_ops, true, check, data);
    if (err != KERR_NONE)
        return err;
    push_configs(out, resource_type, resource, ops, n_ops);
    return KERR_NONE;
}

/* ---- brokers ---- */

static bool uuid_eq(struct kuuid a, struct kuuid b)
{
    return memcmp(a.b, b.b, sizeof(a.b)) == 0;
}

/* A LEADERS record for node (records.h) when it would change a partition of img: one record,
 * however many partitions it moves, applied by the image's own rule. */
static void push_leaders(const struct ctl_image *img, int32_t node, bool back, struct ctl_recs *out)
{
    for (size_t i = 0; i < img->n_topics; i++) {
        const struct ctl_topic *t = img->topics[i];
        for (int32_t p = 0; p < t->n_partitions; p++) {
            int32_t leader;
            if (ctl_image_leader_change(img, &t->parts[p], node, back, &leader)) {
                struct ctl_rec *r = ctl_recs_push(out, CTL_REC_LEADERS);
                r->leaders.node_id = node;
                r->leaders.back = back;
                return;
            }
        }
    }
}

static bool endpoints_valid(const struct ctl_broker_reg *reg)
{
    if (reg->n_endpoints < 0 || reg->n_endpoints > CTL_ENDPOINTS_MAX)
        return false;
    for (int32_t k = 0; k < reg->n_endpoints; k++) {
        const struct ctl_reg_endpoint *e = &reg->endpoints[k];
        size_t ln = e->listener ? strlen(e->listener) : 0, hn = e->host ? strlen(e->host) : 0;
        if (ln == 0 || ln > CTL_LISTENER_MAX || hn == 0 || hn > CTL_HOST_MAX || e->port < 1 ||
            e->port > 65535)
            return false;
        for (int32_t j = 0; j < k; j++)
            if (!strcmp(reg->endpoints[j].listener, e->listener))
                return false;
    }
    return true;
}

int16_t ctl_cmd_register_broker(const struct ctl_image *img, struct ctl_sessions *s,
                                const struct ctl_broker_reg *reg, int64_t now_ms,
                                struct ctl_recs *out)
{
    size_t host_len = reg->host ? strlen(reg->host) : 0;
    size_t addr_len = reg->cluster_addr ? strlen(reg->cluster_addr) : 0;
    if (reg->node_id < 0 || host_len == 0 || host_len > CTL_HOST_MAX || reg->port < 1 ||
        reg->port > 65535 || addr_len > CTL_ADDR_MAX || !endpoints_valid(reg))
        return KERR_INVALID_REQUEST;
    session_get(s, reg->node_id, now_ms)->last_ms = now_ms;
    const struct ctl_broker *b = ctl_image_broker(img, reg->node_id);
    if (b != NULL && uuid_eq(b->incarnation, reg->incarnation))
        return KERR_NONE; /* a retry */
    struct ctl_rec *r = ctl_recs_push(out, CTL_REC_REGISTER_BROKER);
    r->broker.node_id = reg->node_id;
    r->broker.incarnation = reg->incarnation;
    strcpy(r->broker.host, reg->host);
    r->broker.port = reg->port;
    if (reg->cluster_addr != NULL)
        strcpy(r->broker.cluster_addr, reg->cluster_addr);
    for (int32_t k = 0; k < reg->n_endpoints; k++) {
        struct ctl_rec *e = ctl_recs_push(out, CTL_REC_BROKER_ENDPOINT);
        e->endpoint.node_id = reg->node_id;
        strcpy(e->endpoint.listener, reg->endpoints[k].listener);
        strcpy(e->endpoint.host, reg->endpoints[k].host);
        e->endpoint.port = reg->endpoints[k].port;
    }
    if (b != NULL && !b->fenced) /* its old incarnation's leaderships end */
        push_leaders(img, reg->node_id, false, out);
    return KERR_NONE;
}

int16_t ctl_cmd_heartbeat(const struct ctl_image *img, struct ctl_sessions *s, int32_t node_id,
                          struct kuuid incarnation, bool caught_up, int64_t now_ms,
                          struct ctl_recs *out)
{
    const struct ctl_broker *b = ctl_image_broker(img, node_id);
    if (b == NULL || !uuid_eq(b->incarnation, incarnation))
        return KERR_STALE_BROKER_EPOCH;
    session_get(s, node_id, now_ms)->last_ms = now_ms;
    if (!b->fenced || !caught_up)
        return KERR_NONE;
    struct ctl_rec *r = ctl_recs_push(out, CTL_REC_BROKER_LIVENESS);
    r->liveness.node_id = node_id;
    r->liveness.fenced = false;
    push_leaders(img, node_id, true, out);
    return KERR_NONE;
}

int16_t ctl_cmd_fence_brokers(const struct ctl_image *img, const int32_t *ids, size_t n_ids,
                              struct ctl_recs *out)
{
    int32_t *live = mem_alloc((n_ids + 1) * sizeof(int32_t));
    size_t n = 0;
    for (size_t i = 0; i < n_ids; i++)
        if (ctl_image_broker_live(img, ids[i]) && !in_ids(live, n, ids[i]))
            live[n++] = ids[i];
    for (size_t i = 0; i < n; i++) {
        struct ctl_rec *r = ctl_recs_push(out, CTL_REC_BROKER_LIVENESS);
        r->liveness.node_id = live[i];
        r->liveness.fenced = true;
    }
    /* each LEADERS record meets the image with every broker of ids fenced (the LIVENESS
     * records come first), so none of them is given another's partitions */
    for (size_t i = 0; i < n; i++)
        push_leaders(img, live[i], false, out);
    mem_free(live);
    return KERR_NONE;
}

int16_t ctl_cmd_fence_expired(const struct ctl_image *img, struct ctl_sessions *s, int64_t now_ms,
                              int64_t session_timeout_ms, struct ctl_recs *out)
{
    int32_t *expired = mem_alloc((img->n_brokers + 1) * sizeof(int32_t));
    size_t n = 0;
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct ctl_broker *b = &img->brokers[i];
        if (b->fenced)
            continue;
        const struct ctl_session *sess = session_get(s, b->id, now_ms);
        if (now_ms - sess->last_ms >= session_timeout_ms)
            expired[n++] = b->id;
    }
    ctl_cmd_fence_brokers(img, expired, n, out);
    mem_free(expired);
    return KERR_NONE;
}

int16_t ctl_cmd_alloc_producer_ids(const struct ctl_image *img, int32_t broker_id,
                                   struct kuuid incarnation, int64_t floor, struct ctl_recs *out)
{
    const struct ctl_broker *b = ctl_image_broker(img, broker_id);
    if (b == NULL || !uuid_eq(b->incarnation, incarnation))
        return KERR_STALE_BROKER_EPOCH;
    int64_t first = ctl_image_pid_next(img);
    if (floor > first)
        first = floor;
    if (first > INT64_MAX - CTL_PID_BLOCK_SIZE)
        return KERR_UNKNOWN_SERVER_ERROR;
    struct ctl_rec *r = ctl_recs_push(out, CTL_REC_PRODUCER_IDS);
    r->pids.broker_id = broker_id;
    r->pids.first = first;
    r->pids.size = CTL_PID_BLOCK_SIZE;
    return KERR_NONE;
}

int16_t ctl_cmd_quota(const struct ctl_image *img, const struct ctl_rec_quota *q,
                      struct ctl_recs *out)
{
    struct ctl_rec r = {.type = CTL_REC_QUOTA, .quota = *q};
    r.quota.user[CTL_USER_MAX] = '\0';
    r.quota.client[CTL_CLIENT_ID_MAX] = '\0';
    r.quota.key[CTL_QUOTA_KEY_MAX] = '\0';
    if (!ctl_rec_valid(&r))
        return KERR_INVALID_REQUEST;
    const struct ctl_rec_quota *there = NULL;
    for (size_t i = 0; i < img->n_quotas && !there; i++)
        if (ctl_quota_cmp(&img->quotas[i], &r.quota) == 0)
            there = &img->quotas[i];
    if (q->deleted ? !there : there && there->value == q->value)
        return KERR_NONE; /* already as asked */
    *ctl_recs_push(out, CTL_REC_QUOTA) = r;
    return KERR_NONE;
}

int16_t ctl_cmd_user(const struct ctl_image *img, const struct ctl_rec_user *u,
                     struct ctl_recs *out)
{
    if (ctl_scram_key_len(u->mechanism) == 0)
        return KERR_UNSUPPORTED_SASL_MECHANISM;
    struct ctl_rec r = {.type = CTL_REC_USER_SCRAM, .user = *u};
    r.user.name[CTL_USER_MAX] = '\0';
    if (!ctl_rec_valid(&r))
        return KERR_UNACCEPTABLE_CREDENTIAL;
    if (u->deleted && !ctl_image_user(img, u->name, u->mechanism))
        return KERR_RESOURCE_NOT_FOUND;
    *ctl_recs_push(out, CTL_REC_USER_SCRAM) = r;
    return KERR_NONE;
}

int16_t ctl_cmd_acl(const struct ctl_image *img, const struct ctl_rec_acl *a,
                    struct ctl_recs *out)
{
    struct ctl_rec r = {.type = CTL_REC_ACL, .acl = *a};
    r.acl.resource_name[CTL_ACL_NAME_MAX] = '\0';
    r.acl.principal[CTL_ACL_PRINCIPAL_MAX] = '\0';
    r.acl.host[CTL_HOST_MAX] = '\0';
    if (!ctl_rec_valid(&r))
        return KERR_INVALID_REQUEST;
    bool there = false;
    for (size_t i = 0; i < img->n_acls && !there; i++)
        there = ctl_acl_cmp(&img->acls[i], &r.acl) == 0;
    if (there != a->deleted)
        return KERR_NONE; /* already as asked */
    *ctl_recs_push(out, CTL_REC_ACL) = r;
    return KERR_NONE;
}
