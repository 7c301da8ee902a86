/* Controller request and answer codec (layout and contracts in controller/request.h).
 *
 * A decoded request owns one allocation: its config array followed by a string arena. Every
 * string of the body takes 2 + n bytes there and n + 1 in the arena, so an arena of len + 1
 * bytes always suffices, and the config count is bounded by its bytes (4 per entry at least)
 * before the array is allocated. */
#include "controller/request.h"

#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"

static bool str_ok(const char *s, bool nullable)
{
    return s ? strlen(s) <= CTL_REQ_STRING_MAX : nullable;
}

static bool configs_ok(const struct ctl_request *req)
{
    if (req->n_configs > CTL_REQ_CONFIGS_MAX || (req->n_configs > 0 && !req->configs))
        return false;
    for (size_t i = 0; i < req->n_configs; i++)
        if (!str_ok(req->configs[i].key, false) || !str_ok(req->configs[i].value, true))
            return false;
    return true;
}

bool ctl_request_well_formed(const struct ctl_request *req)
{
    switch (req->type) {
    case CTL_REQ_CREATE_TOPIC:
    case CTL_REQ_ALTER_CONFIGS:
        return str_ok(req->name, false) && configs_ok(req);
    case CTL_REQ_DELETE_TOPIC:
    case CTL_REQ_CREATE_PARTITIONS:
        return str_ok(req->name, false);
    case CTL_REQ_REGISTER_BROKER:
        if (req->reg.n_endpoints < 0 || req->reg.n_endpoints > CTL_ENDPOINTS_MAX)
            return false;
        for (int32_t k = 0; k < req->reg.n_endpoints; k++)
            if (!str_ok(req->reg.endpoints[k].listener, false) ||
                !str_ok(req->reg.endpoints[k].host, false))
                return false;
        return str_ok(req->reg.host, false) && str_ok(req->reg.cluster_addr, false);
    case CTL_REQ_HEARTBEAT:
        return true;
    case CTL_REQ_ALLOC_PIDS:
        return req->pid_floor >= 0;
    case CTL_REQ_REASSIGN:
        return str_ok(req->name, false) && req->n_replicas >= 0 &&
               req->n_replicas <= CTL_REPLICAS_MAX;
    case CTL_REQ_PARTITION_REPLICAS:
        return req->n_replicas >= 1 && req->n_replicas <= CTL_REPLICAS_MAX;
    case CTL_REQ_VOTERS:
        return req->voter >= 0;
    case CTL_REQ_ACL:
        return memchr(req->acl.resource_name, '\0', sizeof(req->acl.resource_name)) &&
               memchr(req->acl.principal, '\0', sizeof(req->acl.principal)) &&
               memchr(req->acl.host, '\0', sizeof(req->acl.host));
    case CTL_REQ_QUOTA: {
        struct ctl_rec r = {.type = CTL_REC_QUOTA, .quota = req->quota};
        return memchr(req->quota.user, '\0', sizeof(req->quota.user)) &&
               memchr(req->quota.client, '\0', sizeof(req->quota.client)) &&
               memchr(req->quota.key, '\0', sizeof(req->quota.key)) && ctl_rec_valid(&r);
    }
    case CTL_REQ_USER_SCRAM:
        return memchr(req->user.name, '\0', sizeof(req->user.name)) != NULL &&
               req->user.salt_len <= CTL_SALT_MAX && req->user.key_len <= CTL_KEY_MAX;
    default:
        return false;
    }
}

static void put_str(struct kwriter *w, const char *s)
{
    kw_cstr(w, false, s);
}

static void put_configs(struct kwriter *w, const struct ctl_request *req)
{
    kw_i32(w, (int32_t)req->n_configs);
    for (size_t i = 0; i < req->n_configs; i++) {
        put_str(w, req->configs[i].key);
        put_str(w, req->configs[i].value);
    }
}

void ctl_request_encode(const struct ctl_request *req, struct iobuf *out)
{
    struct kwriter w = {out};
    CHECK(ctl_request_well_formed(req));
    kw_i8(&w, (int8_t)req->type);
    switch (req->type) {
    case CTL_REQ_CREATE_TOPIC:
        put_str(&w, req->name);
        kw_i32(&w, req->n_partitions);
        kw_i32(&w, req->rf);
        put_configs(&w, req);
        break;
    case CTL_REQ_DELETE_TOPIC:
        put_str(&w, req->name);
        break;
    case CTL_REQ_CREATE_PARTITIONS:
        put_str(&w, req->name);
        kw_i32(&w, req->n_partitions);
        break;
    case CTL_REQ_ALTER_CONFIGS:
        kw_i8(&w, req->resource_type);
        put_str(&w, req->name);
        put_configs(&w, req);
        break;
    case CTL_REQ_REGISTER_BROKER:
        kw_i32(&w, req->reg.node_id);
        kw_uuid(&w, req->reg.incarnation);
        put_str(&w, req->reg.host);
        kw_i32(&w, req->reg.port);
        put_str(&w, req->reg.cluster_addr);
        kw_i32(&w, req->reg.n_endpoints);
        for (int32_t k = 0; k < req->reg.n_endpoints; k++) {
            put_str(&w, req->reg.endpoints[k].listener);
            put_str(&w, req->reg.endpoints[k].host);
            kw_i32(&w, req->reg.endpoints[k].port);
        }
        break;
    case CTL_REQ_HEARTBEAT:
        kw_i32(&w, req->reg.node_id);
        kw_uuid(&w, req->reg.incarnation);
        kw_i8(&w, req->caught_up ? 1 : 0);
        break;
    case CTL_REQ_ALLOC_PIDS:
        kw_i32(&w, req->reg.node_id);
        kw_uuid(&w, req->reg.incarnation);
        kw_i64(&w, req->pid_floor);
        break;
    case CTL_REQ_REASSIGN:
    case CTL_REQ_PARTITION_REPLICAS:
        if (req->type == CTL_REQ_REASSIGN)
            put_str(&w, req->name);
        else
            kw_uuid(&w, req->topic_id);
        kw_i32(&w, req->partition);
        kw_i32(&w, req->n_replicas);
        for (int32_t i = 0; i < req->n_replicas; i++)
            kw_i32(&w, req->replicas[i]);
        break;
    case CTL_REQ_VOTERS:
        kw_i8(&w, req->voter_add ? 1 : 0);
        kw_i32(&w, req->voter);
        break;
    case CTL_REQ_ACL:
        kw_i8(&w, req->acl.resource_type);
        put_str(&w, req->acl.resource_name);
        kw_i8(&w, req->acl.pattern_type);
        put_str(&w, req->acl.principal);
        put_str(&w, req->acl.host);
        kw_i8(&w, req->acl.operation);
        kw_i8(&w, req->acl.permission);
        kw_i8(&w, req->acl.deleted ? 1 : 0);
        break;
    case CTL_REQ_QUOTA: { /* the QUOTA record's encoding */
        struct ctl_rec r = {.type = CTL_REC_QUOTA, .quota = req->quota};
        ctl_rec_encode(&w, &r);
        break;
    }
    case CTL_REQ_USER_SCRAM:
        put_str(&w, req->user.name);
        kw_i8(&w, req->user.mechanism);
        kw_i8(&w, req->user.deleted ? 1 : 0);
        kw_i32(&w, req->user.iterations);
        kw_i16(&w, req->user.salt_len);
        kw_raw(&w, req->user.salt, req->user.salt_len);
        for (int k = 0; k < 2; k++) {
            kw_i16(&w, req->user.key_len);
            kw_raw(&w, k ? req->user.server_key : req->user.stored_key, req->user.key_len);
        }
        break;
    }
}

/* Decoding state: the reader and the arena strings are copied into. */
struct dec {
    struct kreader r;
    char *arena;
    size_t used;
    size_t cap;
    bool bad;
};

/* A string (NULL for null when nullable), copied NUL-terminated into the arena. */
static const char *get_str(struct dec *d, bool nullable)
{
    struct kstr s = kr_str(&d->r, false);
    if (!kr_ok(&d->r) || d->bad) {
        d->bad = true;
        return NULL;
    }
    if (s.len < 0) {
        if (!nullable)
            d->bad = true;
        return NULL;
    }
    if (memchr(s.p, 0, (size_t)s.len) || d->used + (size_t)s.len + 1 > d->cap) {
        d->bad = true;
        return NULL;
    }
    char *at = d->arena + d->used;
    memcpy(at, s.p, (size_t)s.len);
    at[s.len] = 0;
    d->used += (size_t)s.len + 1;
    return at;
}

static void get_configs(struct dec *d, struct ctl_config_entry *v, size_t max,
                        struct ctl_request *out)
{
    int32_t n = kr_i32(&d->r);
    if (!kr_ok(&d->r) || n < 0 || (size_t)n > max) {
        d->bad = true;
        return;
    }
    for (int32_t i = 0; i < n && !d->bad; i++) {
        v[i].key = get_str(d, false);
        v[i].value = get_str(d, true);
    }
    out->configs = v;
    out->n_configs = (size_t)n;
}

int ctl_request_decode(const uint8_t *p, size_t len, struct ctl_request *out)
{
    memset(out, 0, sizeof(*out));
    /* Each config takes at least 4 bytes (two string lengths). */
    size_t max_configs = MIN((size_t)CTL_REQ_CONFIGS_MAX, len / 4);
    size_t cv_bytes = max_configs * sizeof(struct ctl_config_entry);
    size_t head = cv_bytes + CTL_ENDPOINTS_MAX * sizeof(struct ctl_reg_endpoint);
    uint8_t *own = mem_alloc(head + len + 1);
    struct dec d = {.arena = (char *)own + head, .cap = len + 1};
    struct ctl_config_entry *cv = (struct ctl_config_entry *)(void *)own;
    struct ctl_reg_endpoint *ev = (struct ctl_reg_endpoint *)(void *)(own + cv_bytes);
    kr_init(&d.r, p, len);
    out->type = (uint8_t)kr_i8(&d.r);
    switch (out->type) {
    case CTL_REQ_CREATE_TOPIC:
        out->name = get_str(&d, false);
        out->n_partitions = kr_i32(&d.r);
        out->rf = kr_i32(&d.r);
        get_configs(&d, cv, max_configs, out);
        break;
    case CTL_REQ_DELETE_TOPIC:
        out->name = get_str(&d, false);
        break;
    case CTL_REQ_CREATE_PARTITIONS:
        out->name = get_str(&d, false);
        out->n_partitions = kr_i32(&d.r);
        break;
    case CTL_REQ_ALTER_CONFIGS:
        out->resource_type = kr_i8(&d.r);
        out->name = get_str(&d, false);
        get_configs(&d, cv, max_configs, out);
        break;
    case CTL_REQ_REGISTER_BROKER:
        out->reg.node_id = kr_i32(&d.r);
        out->reg.incarnation = kr_uuid(&d.r);
        out->reg.host = get_str(&d, false);
        out->reg.port = kr_i32(&d.r);
        out->reg.cluster_addr = get_str(&d, false);
        out->reg.n_endpoints = kr_i32(&d.r);
        if (!kr_ok(&d.r) || out->reg.n_endpoints < 0 || out->reg.n_endpoints > CTL_ENDPOINTS_MAX) {
            d.bad = true;
            break;
        }
        for (int32_t k = 0; k < out->reg.n_endpoints && !d.bad; k++) {
            ev[k].listener = get_str(&d, false);
            ev[k].host = get_str(&d, false);
            ev[k].port = kr_i32(&d.r);
        }
        out->reg.endpoints = ev;
        break;
    case CTL_REQ_HEARTBEAT: {
        out->reg.node_id = kr_i32(&d.r);
        out->reg.incarnation = kr_uuid(&d.r);
        int8_t c = kr_i8(&d.r);
        if (c != 0 && c != 1)
            d.bad = true;
        out->caught_up = c == 1;
        break;
    }
    case CTL_REQ_ALLOC_PIDS:
        out->reg.node_id = kr_i32(&d.r);
        out->reg.incarnation = kr_uuid(&d.r);
        out->pid_floor = kr_i64(&d.r);
        if (out->pid_floor < 0)
            d.bad = true;
        break;
    case CTL_REQ_REASSIGN:
    case CTL_REQ_PARTITION_REPLICAS:
        if (out->type == CTL_REQ_REASSIGN)
            out->name = get_str(&d, false);
        else
            out->topic_id = kr_uuid(&d.r);
        out->partition = kr_i32(&d.r);
        out->n_replicas = kr_i32(&d.r);
        if (!kr_ok(&d.r) || out->n_replicas < (out->type == CTL_REQ_REASSIGN ? 0 : 1) ||
            out->n_replicas > CTL_REPLICAS_MAX) {
            d.bad = true;
            break;
        }
        for (int32_t i = 0; i < out->n_replicas; i++)
            out->replicas[i] = kr_i32(&d.r);
        break;
    case CTL_REQ_QUOTA: {
        struct ctl_rec r;
        size_t left = kr_left(&d.r);
        const uint8_t *raw = kr_raw(&d.r, left);
        if (!raw || ctl_rec_decode(raw, left, &r) != 0 || r.type != CTL_REC_QUOTA) {
            d.bad = true;
            break;
        }
        out->quota = r.quota;
        break;
    }
    case CTL_REQ_ACL: {
        struct ctl_rec_acl *a = &out->acl;
        a->resource_type = kr_i8(&d.r);
        const char *name = get_str(&d, false);
        a->pattern_type = kr_i8(&d.r);
        const char *principal = get_str(&d, false);
        const char *host = get_str(&d, false);
        a->operation = kr_i8(&d.r);
        a->permission = kr_i8(&d.r);
        int8_t del = kr_i8(&d.r);
        a->deleted = del == 1;
        if (!name || !principal || !host || strlen(name) > CTL_ACL_NAME_MAX ||
            strlen(principal) > CTL_ACL_PRINCIPAL_MAX || strlen(host) > CTL_HOST_MAX ||
            (del != 0 && del != 1)) {
            d.bad = true;
            break;
        }
        memcpy(a->resource_name, name, strlen(name) + 1);
        memcpy(a->principal, principal, strlen(principal) + 1);
        memcpy(a->host, host, strlen(host) + 1);
        break;
    }
    case CTL_REQ_USER_SCRAM: {
        const char *name = get_str(&d, false);
        if (!name || strlen(name) > CTL_USER_MAX) {
            d.bad = true;
            break;
        }
        memcpy(out->user.name, name, strlen(name) + 1);
        out->user.mechanism = kr_i8(&d.r);
        int8_t del = kr_i8(&d.r);
        out->user.deleted = del == 1;
        out->user.iterations = kr_i32(&d.r);
        if (del != 0 && del != 1)
            d.bad = true;
        uint8_t *dst[3] = {out->user.salt, out->user.stored_key, out->user.server_key};
        size_t max[3] = {CTL_SALT_MAX, CTL_KEY_MAX, CTL_KEY_MAX};
        int16_t lens[3];
        for (int k = 0; k < 3 && !d.bad; k++) {
            lens[k] = kr_i16(&d.r);
            const uint8_t *src = lens[k] >= 0 && (size_t)lens[k] <= max[k]
                                     ? kr_raw(&d.r, (size_t)lens[k])
                                     : NULL;
            if (!src) {
                d.bad = true;
                break;
            }
            memcpy(dst[k], src, (size_t)lens[k]);
        }
        if (!d.bad && lens[1] != lens[2])
            d.bad = true;
        if (!d.bad) {
            out->user.salt_len = (uint8_t)lens[0];
            out->user.key_len = (uint8_t)lens[1];
        }
        break;
    }
    case CTL_REQ_VOTERS: {
        int8_t add = kr_i8(&d.r);
        out->voter_add = add == 1;
        out->voter = kr_i32(&d.r);
        if ((add != 0 && add != 1) || out->voter < 0)
            d.bad = true;
        break;
    }
    default:
        d.bad = true;
    }
    if (d.bad || !kr_ok(&d.r) || kr_left(&d.r) != 0) {
        mem_free(own);
        memset(out, 0, sizeof(*out));
        return -ERR_CORRUPT;
    }
    out->owned_ = own;
    return 0;
}

void ctl_request_free(struct ctl_request *req)
{
    mem_free(req->owned_);
    memset(req, 0, sizeof(*req));
}

static void be_put(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static uint64_t be_get(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v = (v << 8) | p[i];
    return v;
}

void ctl_answer_encode(const struct ctl_answer *a, uint8_t buf[CTL_ANSWER_BYTES])
{
    be_put(buf, (uint16_t)a->error, 2);
    memcpy(buf + 2, a->topic_id.b, 16);
    be_put(buf + 18, (uint64_t)a->pid_first, 8);
    be_put(buf + 26, (uint32_t)a->pid_size, 4);
}

int ctl_answer_decode(const uint8_t *p, size_t len, struct ctl_answer *out)
{
    memset(out, 0, sizeof(*out));
    if (len != CTL_ANSWER_BYTES)
        return -ERR_CORRUPT;
    out->error = (int16_t)be_get(p, 2);
    memcpy(out->topic_id.b, p + 2, 16);
    out->pid_first = (int64_t)be_get(p + 18, 8);
    out->pid_size = (int32_t)be_get(p + 26, 4);
    return 0;
}

const char *ctl_req_type_name(uint8_t type)
{
    switch (type) {
    case CTL_REQ_CREATE_TOPIC:
        return "create_topic";
    case CTL_REQ_DELETE_TOPIC:
        return "delete_topic";
    case CTL_REQ_CREATE_PARTITIONS:
        return "create_partitions";
    case CTL_REQ_ALTER_CONFIGS:
        return "alter_configs";
    case CTL_REQ_REGISTER_BROKER:
        return "register_broker";
    case CTL_REQ_HEARTBEAT:
        return "heartbeat";
    case CTL_REQ_ALLOC_PIDS:
        return "alloc_pids";
    case CTL_REQ_REASSIGN:
        return "reassign";
    case CTL_REQ_PARTITION_REPLICAS:
        return "partition_replicas";
    case CTL_REQ_VOTERS:
        return "voters";
    case CTL_REQ_USER_SCRAM:
        return "user_scram";
    case CTL_REQ_ACL:
        return "acl";
    case CTL_REQ_QUOTA:
        return "quota";
    default:
        return "unknown";
    }
}
