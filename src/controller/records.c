/* Encoding and decoding of __cluster_metadata records (controller/records.h). Stateless apart
 * from struct ctl_recs, a plain growable array. */
#include "controller/records.h"

#include <math.h>
#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "kafka/names.h"

#define REC_VERSION 0

bool ctl_topic_name_valid(const char *name, size_t len)
{
    return len <= CTL_NAME_MAX && ktopic_name_legal(name, len);
}

bool ctl_uuid_is_zero(struct kuuid u)
{
    static const struct kuuid zero;
    return memcmp(u.b, zero.b, sizeof(u.b)) == 0;
}

static bool broker_resource_valid(const char *s)
{
    size_t len = strlen(s);
    if (len == 0)
        return true; /* cluster-wide default */
    if (len > 10 || (len > 1 && s[0] == '0'))
        return false;
    int64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
    }
    return v <= INT32_MAX;
}

static bool partition_valid(const struct ctl_rec_partition *p)
{
    if (ctl_uuid_is_zero(p->topic_id) || p->partition < 0 || p->partition >= CTL_PARTITIONS_MAX)
        return false;
    if (p->leader_epoch < 0 || p->leader_epoch > CTL_EPOCH_MAX || p->n_replicas < 1 ||
        p->n_replicas > CTL_REPLICAS_MAX)
        return false;
    bool leader_found = p->leader == -1;
    for (int32_t i = 0; i < p->n_replicas; i++) {
        if (p->replicas[i] < 0)
            return false;
        for (int32_t j = 0; j < i; j++)
            if (p->replicas[j] == p->replicas[i])
                return false;
        if (p->replicas[i] == p->leader)
            leader_found = true;
    }
    if (p->n_target < 0 || p->n_target > CTL_REPLICAS_MAX)
        return false;
    bool same = p->n_target == p->n_replicas;
    for (int32_t i = 0; i < p->n_target; i++) {
        if (p->target[i] < 0)
            return false;
        for (int32_t j = 0; j < i; j++)
            if (p->target[j] == p->target[i])
                return false;
        bool in = false;
        for (int32_t j = 0; j < p->n_replicas; j++)
            in |= p->replicas[j] == p->target[i];
        same &= in;
    }
    return leader_found && (p->n_target == 0 || !same);
}

bool ctl_user_name_valid(const char *name, size_t len)
{
    if (len < 1 || len > CTL_USER_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
            return false;
    return true;
}

int ctl_scram_key_len(int8_t mechanism)
{
    return mechanism == CTL_SCRAM_SHA256 ? 32 : mechanism == CTL_SCRAM_SHA512 ? 64 : 0;
}

static bool user_valid(const struct ctl_rec_user *u)
{
    if (!ctl_user_name_valid(u->name, strlen(u->name)) || ctl_scram_key_len(u->mechanism) == 0)
        return false;
    if (u->deleted)
        return u->iterations == 0 && u->salt_len == 0 && u->key_len == 0;
    return u->iterations >= CTL_SCRAM_ITER_MIN && u->iterations <= CTL_SCRAM_ITER_MAX &&
           u->salt_len >= 1 && u->salt_len <= CTL_SALT_MAX &&
           u->key_len == ctl_scram_key_len(u->mechanism);
}

bool ctl_quota_key_known(const char *key)
{
    static const char *const keys[] = {"producer_byte_rate", "consumer_byte_rate",
                                       "request_percentage", "controller_mutation_rate"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strcmp(key, keys[i]))
            return true;
    return false;
}

static bool quota_part_valid(int8_t kind, const char *name)
{
    return kind == CTL_QUOTA_NAMED ? name[0] != '\0'
                                   : (kind == CTL_QUOTA_NONE || kind == CTL_QUOTA_DEFAULT) &&
                                         name[0] == '\0';
}

static bool quota_valid(const struct ctl_rec_quota *q)
{
    return (q->user_kind != CTL_QUOTA_NONE || q->client_kind != CTL_QUOTA_NONE) &&
           quota_part_valid(q->user_kind, q->user) &&
           quota_part_valid(q->client_kind, q->client) && ctl_quota_key_known(q->key) &&
           (q->deleted ? q->value == 0 : isfinite(q->value) && q->value > 0);
}

/* Resource types: Kafka's TOPIC..USER (2..7), and the schema registry's REGISTRY (100) and
 * SUBJECT (101) of security/acl.h. */
static bool acl_resource_type_valid(int8_t t)
{
    return (t >= 2 && t <= 7) || t == 100 || t == 101;
}

static bool acl_valid(const struct ctl_rec_acl *a)
{
    return acl_resource_type_valid(a->resource_type) &&
           (a->pattern_type == 3 || a->pattern_type == 4) && a->operation >= 2 &&
           a->operation <= 14 && (a->permission == 2 || a->permission == 3) &&
           a->resource_name[0] != '\0' && a->principal[0] != '\0' && a->host[0] != '\0';
}

bool ctl_rec_valid(const struct ctl_rec *r)
{
    switch (r->type) {
    case CTL_REC_REGISTER_BROKER:
        return r->broker.node_id >= 0 && r->broker.host[0] != '\0' && r->broker.port >= 1 &&
               r->broker.port <= 65535;
    case CTL_REC_BROKER_LIVENESS:
        return r->liveness.node_id >= 0;
    case CTL_REC_TOPIC:
        return ctl_topic_name_valid(r->topic.name, strlen(r->topic.name)) &&
               !ctl_uuid_is_zero(r->topic.id) && r->topic.n_partitions >= 1 &&
               r->topic.n_partitions <= CTL_PARTITIONS_MAX;
    case CTL_REC_PARTITION:
        return partition_valid(&r->partition);
    case CTL_REC_REMOVE_TOPIC:
        return !ctl_uuid_is_zero(r->remove_topic.id);
    case CTL_REC_CONFIG:
        if (r->config.key[0] == '\0' || (r->config.deleted && r->config.value[0] != '\0'))
            return false;
        if (r->config.resource_type == CTL_RESOURCE_TOPIC)
            return ctl_topic_name_valid(r->config.resource, strlen(r->config.resource));
        if (r->config.resource_type == CTL_RESOURCE_BROKER)
            return broker_resource_valid(r->config.resource);
        return false;
    case CTL_REC_PRODUCER_IDS:
        return r->pids.broker_id >= 0 && r->pids.first >= 0 && r->pids.size >= 1 &&
               r->pids.size <= CTL_PID_BLOCK_MAX && r->pids.first <= INT64_MAX - r->pids.size;
    case CTL_REC_VOTERS:
        if (r->voters.n < 1 || r->voters.n > CTL_VOTERS_MAX)
            return false;
        for (int32_t i = 0; i < r->voters.n; i++) {
            if (r->voters.ids[i] < 0)
                return false;
            for (int32_t j = 0; j < i; j++)
                if (r->voters.ids[j] == r->voters.ids[i])
                    return false;
        }
        return true;
    case CTL_REC_USER_SCRAM:
        return user_valid(&r->user);
    case CTL_REC_ACL:
        return acl_valid(&r->acl);
    case CTL_REC_QUOTA:
        return quota_valid(&r->quota);
    case CTL_REC_BROKER_ENDPOINT:
        return r->endpoint.node_id >= 0 && r->endpoint.listener[0] != '\0' &&
               r->endpoint.host[0] != '\0' && r->endpoint.port >= 1 && r->endpoint.port <= 65535;
    case CTL_REC_LEADERS:
        return r->leaders.node_id >= 0;
    }
    return false;
}

static void put_str(struct kwriter *w, const char *s)
{
    kw_str(w, false, kstr_c(s));
}

/* int16 length + bytes */
static void put_bytes(struct kwriter *w, const uint8_t *p, size_t n)
{
    kw_i16(w, (int16_t)n);
    kw_raw(w, p, n);
}

/* int16 length (0..max) + bytes into dst; *n gets the length. */
static void get_bytes(struct kreader *r, uint8_t *dst, size_t max, uint8_t *n)
{
    int16_t len = kr_i16(r);
    if (len < 0 || (size_t)len > max || (size_t)len > kr_left(r)) {
        r->err = true;
        return;
    }
    const uint8_t *p = kr_raw(r, (size_t)len);
    if (p)
        memcpy(dst, p, (size_t)len);
    *n = (uint8_t)len;
}

void ctl_rec_encode(struct kwriter *w, const struct ctl_rec *r)
{
    CHECK(ctl_rec_valid(r));
    kw_i16(w, (int16_t)r->type);
    kw_i16(w, r->type == CTL_REC_PARTITION && r->partition.n_target > 0 ? 1 : REC_VERSION);
    switch (r->type) {
    case CTL_REC_REGISTER_BROKER:
        kw_i32(w, r->broker.node_id);
        kw_uuid(w, r->broker.incarnation);
        put_str(w, r->broker.host);
        kw_i32(w, r->broker.port);
        put_str(w, r->broker.cluster_addr);
        break;
    case CTL_REC_BROKER_LIVENESS:
        kw_i32(w, r->liveness.node_id);
        kw_i8(w, r->liveness.fenced ? 1 : 0);
        break;
    case CTL_REC_TOPIC:
        put_str(w, r->topic.name);
        kw_uuid(w, r->topic.id);
        kw_i32(w, r->topic.n_partitions);
        break;
    case CTL_REC_PARTITION:
        kw_uuid(w, r->partition.topic_id);
        kw_i32(w, r->partition.partition);
        kw_i32(w, r->partition.leader);
        kw_i32(w, r->partition.leader_epoch);
        kw_i32(w, r->partition.n_replicas);
        for (int32_t i = 0; i < r->partition.n_replicas; i++)
            kw_i32(w, r->partition.replicas[i]);
        if (r->partition.n_target > 0) {
            kw_i32(w, r->partition.n_target);
            for (int32_t i = 0; i < r->partition.n_target; i++)
                kw_i32(w, r->partition.target[i]);
        }
        break;
    case CTL_REC_REMOVE_TOPIC:
        kw_uuid(w, r->remove_topic.id);
        break;
    case CTL_REC_CONFIG:
        kw_i8(w, r->config.resource_type);
        put_str(w, r->config.resource);
        put_str(w, r->config.key);
        kw_str(w, false, r->config.deleted ? KSTR_NULL : kstr_c(r->config.value));
        break;
    case CTL_REC_PRODUCER_IDS:
        kw_i32(w, r->pids.broker_id);
        kw_i64(w, r->pids.first);
        kw_i32(w, r->pids.size);
        break;
    case CTL_REC_VOTERS:
        kw_i32(w, r->voters.n);
        for (int32_t i = 0; i < r->voters.n; i++)
            kw_i32(w, r->voters.ids[i]);
        break;
    case CTL_REC_USER_SCRAM:
        put_str(w, r->user.name);
        kw_i8(w, r->user.mechanism);
        kw_i8(w, r->user.deleted ? 1 : 0);
        kw_i32(w, r->user.iterations);
        put_bytes(w, r->user.salt, r->user.salt_len);
        put_bytes(w, r->user.stored_key, r->user.key_len);
        put_bytes(w, r->user.server_key, r->user.key_len);
        break;
    case CTL_REC_ACL:
        kw_i8(w, r->acl.resource_type);
        put_str(w, r->acl.resource_name);
        kw_i8(w, r->acl.pattern_type);
        put_str(w, r->acl.principal);
        put_str(w, r->acl.host);
        kw_i8(w, r->acl.operation);
        kw_i8(w, r->acl.permission);
        kw_i8(w, r->acl.deleted ? 1 : 0);
        break;
    case CTL_REC_QUOTA:
        kw_i8(w, r->quota.user_kind);
        put_str(w, r->quota.user);
        kw_i8(w, r->quota.client_kind);
        put_str(w, r->quota.client);
        put_str(w, r->quota.key);
        kw_f64(w, r->quota.value);
        kw_i8(w, r->quota.deleted ? 1 : 0);
        break;
    case CTL_REC_LEADERS:
        kw_i32(w, r->leaders.node_id);
        kw_i8(w, r->leaders.back ? 1 : 0);
        break;
    case CTL_REC_BROKER_ENDPOINT:
        kw_i32(w, r->endpoint.node_id);
        put_str(w, r->endpoint.listener);
        put_str(w, r->endpoint.host);
        kw_i32(w, r->endpoint.port);
        break;
    }
}

/* Reads a boolean stored as an i8: 0 or 1, anything else refuses the record. */
static bool get_flag(struct kreader *r)
{
    int8_t f = kr_i8(r);
    if (f != 0 && f != 1)
        r->err = true;
    return f == 1;
}

/* Reads a non-null string of at most max bytes without NUL into dst (max + 1 bytes). */
static void get_str(struct kreader *r, char *dst, size_t max)
{
    struct kstr s = kr_str(r, false);
    if (!kr_ok(r))
        return;
    if (s.len < 0 || (size_t)s.len > max || memchr(s.p, '\0', (size_t)s.len) != NULL) {
        r->err = true;
        return;
    }
    memcpy(dst, s.p, (size_t)s.len);
    dst[s.len] = '\0';
}

static void decode_partition(struct kreader *r, struct ctl_rec_partition *p, int16_t version)
{
    p->topic_id = kr_uuid(r);
    p->partition = kr_i32(r);
    p->leader = kr_i32(r);
    p->leader_epoch = kr_i32(r);
    p->n_replicas = kr_i32(r);
    if (p->n_replicas < 1 || p->n_replicas > CTL_REPLICAS_MAX) {
        r->err = true;
        return;
    }
    for (int32_t i = 0; i < p->n_replicas; i++)
        p->replicas[i] = kr_i32(r);
    if (version == 0)
        return;
    p->n_target = kr_i32(r);
    if (p->n_target < 1 || p->n_target > CTL_REPLICAS_MAX) {
        r->err = true;
        return;
    }
    for (int32_t i = 0; i < p->n_target; i++)
        p->target[i] = kr_i32(r);
}

static void decode_config(struct kreader *r, struct ctl_rec_config *c)
{
    c->resource_type = kr_i8(r);
    get_str(r, c->resource, CTL_NAME_MAX);
    get_str(r, c->key, CTL_CONFIG_KEY_MAX);
    struct kstr v = kr_str(r, false);
    if (!kr_ok(r))
        return;
    if (v.len < 0) {
        c->deleted = true;
        return;
    }
    if ((size_t)v.len > CTL_CONFIG_VALUE_MAX || memchr(v.p, '\0', (size_t)v.len) != NULL) {
        r->err = true;
        return;
    }
    memcpy(c->value, v.p, (size_t)v.len);
    c->value[v.len] = '\0';
}

static void decode_body(struct kreader *r, struct ctl_rec *out, int16_t version)
{
    switch (out->type) {
    case CTL_REC_REGISTER_BROKER:
        out->broker.node_id = kr_i32(r);
        out->broker.incarnation = kr_uuid(r);
        get_str(r, out->broker.host, CTL_HOST_MAX);
        out->broker.port = kr_i32(r);
        get_str(r, out->broker.cluster_addr, CTL_ADDR_MAX);
        break;
    case CTL_REC_BROKER_LIVENESS: {
        out->liveness.node_id = kr_i32(r);
        out->liveness.fenced = get_flag(r);
        break;
    }
    case CTL_REC_TOPIC:
        get_str(r, out->topic.name, CTL_NAME_MAX);
        out->topic.id = kr_uuid(r);
        out->topic.n_partitions = kr_i32(r);
        break;
    case CTL_REC_PARTITION:
        decode_partition(r, &out->partition, version);
        break;
    case CTL_REC_REMOVE_TOPIC:
        out->remove_topic.id = kr_uuid(r);
        break;
    case CTL_REC_CONFIG:
        decode_config(r, &out->config);
        break;
    case CTL_REC_PRODUCER_IDS:
        out->pids.broker_id = kr_i32(r);
        out->pids.first = kr_i64(r);
        out->pids.size = kr_i32(r);
        break;
    case CTL_REC_USER_SCRAM: {
        get_str(r, out->user.name, CTL_USER_MAX);
        out->user.mechanism = kr_i8(r);
        out->user.deleted = get_flag(r);
        out->user.iterations = kr_i32(r);
        uint8_t k1 = 0, k2 = 0;
        get_bytes(r, out->user.salt, CTL_SALT_MAX, &out->user.salt_len);
        get_bytes(r, out->user.stored_key, CTL_KEY_MAX, &k1);
        get_bytes(r, out->user.server_key, CTL_KEY_MAX, &k2);
        if (k1 != k2)
            r->err = true;
        out->user.key_len = k1;
        break;
    }
    case CTL_REC_ACL: {
        out->acl.resource_type = kr_i8(r);
        get_str(r, out->acl.resource_name, CTL_ACL_NAME_MAX);
        out->acl.pattern_type = kr_i8(r);
        get_str(r, out->acl.principal, CTL_ACL_PRINCIPAL_MAX);
        get_str(r, out->acl.host, CTL_HOST_MAX);
        out->acl.operation = kr_i8(r);
        out->acl.permission = kr_i8(r);
        out->acl.deleted = get_flag(r);
        break;
    }
    case CTL_REC_QUOTA: {
        out->quota.user_kind = kr_i8(r);
        get_str(r, out->quota.user, CTL_USER_MAX);
        out->quota.client_kind = kr_i8(r);
        get_str(r, out->quota.client, CTL_CLIENT_ID_MAX);
        get_str(r, out->quota.key, CTL_QUOTA_KEY_MAX);
        out->quota.value = kr_f64(r);
        out->quota.deleted = get_flag(r);
        break;
    }
    case CTL_REC_LEADERS: {
        out->leaders.node_id = kr_i32(r);
        out->leaders.back = get_flag(r);
        break;
    }
    case CTL_REC_BROKER_ENDPOINT:
        out->endpoint.node_id = kr_i32(r);
        get_str(r, out->endpoint.listener, CTL_LISTENER_MAX);
        get_str(r, out->endpoint.host, CTL_HOST_MAX);
        out->endpoint.port = kr_i32(r);
        break;
    case CTL_REC_VOTERS:
        out->voters.n = kr_i32(r);
        if (out->voters.n < 1 || out->voters.n > CTL_VOTERS_MAX) {
            r->err = true; /* before anything is stored */
            break;
        }
        for (int32_t i = 0; i < out->voters.n; i++)
            out->voters.ids[i] = kr_i32(r);
        break;
    }
}

int ctl_rec_decode(const uint8_t *p, size_t len, struct ctl_rec *out)
{
    memset(out, 0, sizeof(*out));
    struct kreader r;
    kr_init(&r, p, len);
    int16_t type = kr_i16(&r);
    int16_t version = kr_i16(&r);
    if (!kr_ok(&r))
        return -ERR_CORRUPT;
    if (type < CTL_REC_REGISTER_BROKER || type > CTL_REC_LEADERS ||
        (version != REC_VERSION && !(type == CTL_REC_PARTITION && version == 1)))
        return -ERR_UNSUPPORTED;
    out->type = (enum ctl_rec_type)type;
    decode_body(&r, out, version);
    if (!kr_ok(&r) || kr_left(&r) != 0 || !ctl_rec_valid(out)) {
        memset(out, 0, sizeof(*out));
        return -ERR_CORRUPT;
    }
    return 0;
}

void ctl_recs_init(struct ctl_recs *l)
{
    memset(l, 0, sizeof(*l));
}

void ctl_recs_free(struct ctl_recs *l)
{
    mem_free(l->v);
    ctl_recs_init(l);
}

struct ctl_rec *ctl_recs_push(struct ctl_recs *l, enum ctl_rec_type type)
{
    MEM_GROW(l->v, l->cap, l->n + 1);
    struct ctl_rec *r = &l->v[l->n++];
    memset(r, 0, sizeof(*r));
    r->type = type;
    return r;
}

void ctl_recs_encode(const struct ctl_recs *l, struct iobuf *out)
{
    struct kwriter w = {out};
    for (size_t i = 0; i < l->n; i++) {
        size_t pos = kw_pos(&w);
        kw_i32(&w, 0);
        ctl_rec_encode(&w, &l->v[i]);
        kw_patch_i32(&w, pos, (int32_t)(kw_pos(&w) - pos - 4));
    }
}

int ctl_recs_decode(const uint8_t *p, size_t len, size_t max_records, struct ctl_recs *l)
{
    struct kreader r;
    kr_init(&r, p, len);
    size_t n = 0;
    while (kr_left(&r) > 0) {
        int32_t rec_len = kr_i32(&r);
        if (!kr_ok(&r) || rec_len < 0 || (size_t)rec_len > kr_left(&r))
            return -ERR_CORRUPT;
        if (n == max_records)
            return -ERR_TOO_LARGE;
        const uint8_t *rec = kr_raw(&r, (size_t)rec_len);
        struct ctl_rec tmp;
        int rc = ctl_rec_decode(rec, (size_t)rec_len, &tmp);
        if (rc != 0)
            return rc;
        *ctl_recs_push(l, tmp.type) = tmp;
        n++;
    }
    return kr_ok(&r) ? 0 : -ERR_CORRUPT;
}
