/* Topic administration: CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs and
 * IncrementalAlterConfigs, which the controller carries out (the metadata log,
 * controller/commands.h), and DescribeConfigs and DescribeLogDirs, answered on any broker (from
 * the metadata image, and from the local logs). Error codes and messages follow Kafka's, so
 * admin clients show familiar text.
 *
 * Each topic of a request is checked here as far as the broker can (name, counts, configs,
 * defaults resolved from this broker's config, what the image already holds, max.partitions),
 * then submitted as one controller command (ctl_runtime_submit through cluster_submit).
 * AlterConfigs of a topic becomes one CTL_REQ_ALTER_CONFIGS that sets the keys given and
 * deletes the others the image holds (cluster_configs.h: AlterConfigs replaces the whole set);
 * IncrementalAlterConfigs becomes the AlterConfigs that sets the whole resulting set.
 * The request is answered once every command has its outcome: an admin_op holds the response
 * slot, a copy of the header and the response (strings copied into its own arena) until its
 * pending count reaches zero. Every broker then applies the image (broker/cluster.c reconcile:
 * local replicas created or removed, configs applied).
 *
 * Invariants:
 *  1. op->pending == commands submitted and not yet answered + 1 while submitting (the extra
 *     reference keeps answers given during ctl_runtime_submit from sending early); the response
 *     goes out exactly once, when it reaches zero, and the op is freed then.
 *  2. The controller answers every command exactly once (at close: NOT_CONTROLLER), so no op
 *     outlives the cluster; a slot outlives its connection (net/conn.h). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "broker/cluster.h"
#include "broker/cluster_configs.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "broker/topic_ready.h"
#include "controller/request.h"
#include "kafka/errors.h"
#include "storage/plog.h"

#define ERRMSG_MAX 300

bool kstr_dup_before(const struct kstr *names, int32_t i, size_t stride)
{
    const struct kstr *cur = (const struct kstr *)((const char *)names + (size_t)i * stride);
    for (int32_t j = 0; j < i; j++) {
        const struct kstr *o = (const struct kstr *)((const char *)names + (size_t)j * stride);
        if (o->len == cur->len && o->len >= 0 && memcmp(o->p, cur->p, (size_t)o->len) == 0)
            return true;
    }
    return false;
}

int16_t admin_check_configs(struct arena *a, const struct config_entry *cfgs, int32_t n,
                            struct topic_config_kv **out, char *err, size_t errcap)
{
    struct topic_config_kv *kvs = arena_calloc(a, (size_t)(n > 0 ? n : 1), sizeof(*kvs));
    for (int32_t i = 0; i < n; i++) {
        const struct config_entry *c = &cfgs[i];
        if (c->name.len <= 0) {
            snprintf(err, errcap, "Config name is empty");
            return KERR_INVALID_CONFIG;
        }
        if (!topic_config_validate(c->name.p, (size_t)c->name.len, c->value.p,
                                   c->value.len >= 0 ? (size_t)c->value.len : 0, err, errcap))
            return KERR_INVALID_CONFIG;
        kvs[i].key = arena_strndup(a, c->name.p, (size_t)c->name.len);
        kvs[i].value =
            c->value.len >= 0 ? arena_strndup(a, c->value.p, (size_t)c->value.len) : NULL;
    }
    *out = kvs;
    return KERR_NONE;
}

struct admin_op;

struct admin_item {
    struct admin_op *op;
    int32_t index;
    int32_t first_new; /* CreatePartitions: the topic's partition count when asked */
    int32_t count;     /* ... and the count asked for */
};

struct admin_op {
    struct broker *b;
    struct conn_slot *slot;
    struct kreq_header hdr;
    struct arena arena;
    int pending;
    int32_t timeout_ms; /* CreateTopics, CreatePartitions: longest wait for leaders */
    struct admin_item *items;
    union {
        struct create_topics_resp create;
        struct delete_topics_resp del;
        struct create_partitions_resp grow;
        struct alter_configs_resp alter;
    } resp;
};

static struct admin_op *op_new(struct request *req, int32_t n)
{
    struct admin_op *op = mem_calloc(1, sizeof(*op));
    op->b = req->b;
    op->slot = conn_slot_reserve(req->conn);
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL; /* points into the frame */
    arena_init(&op->arena, 4096);
    op->items = arena_calloc(&op->arena, (size_t)(n > 0 ? n : 1), sizeof(*op->items));
    for (int32_t i = 0; i < n; i++)
        op->items[i] = (struct admin_item){.op = op, .index = i};
    op->pending = 1;
    return op;
}

static struct kstr copy_str(struct arena *a, struct kstr s)
{
    if (s.len < 0)
        return KSTR_NULL;
    return (struct kstr){arena_strndup(a, s.p ? s.p : "", (size_t)s.len), s.len};
}

static struct kstr copy_msg(struct arena *a, const char *msg)
{
    size_t n = strlen(msg);
    return (struct kstr){arena_strndup(a, msg, n), (int32_t)n};
}

static void op_release(struct admin_op *op)
{
    if (--op->pending > 0)
        return;
    struct response r;
    response_begin(&r, &op->hdr);
    int16_t v = op->hdr.api_version;
    switch (op->hdr.api_key) {
    case KAPI_CREATE_TOPICS:
        kmsg_encode_create_topics(&r.w, v, &op->resp.create);
        break;
    case KAPI_DELETE_TOPICS:
        kmsg_encode_delete_topics(&r.w, v, &op->resp.del);
        break;
    case KAPI_ALTER_CONFIGS:
        kmsg_encode_alter_configs(&r.w, v, &op->resp.alter);
        break;
    case KAPI_INCREMENTAL_ALTER_CONFIGS: /* turned into an AlterConfigs (alter_configs) */
        kmsg_encode_incremental_alter_configs(&r.w, v, &op->resp.alter);
        break;
    default:
        kmsg_encode_create_partitions(&r.w, v, &op->resp.grow);
        break;
    }
    response_send(&r, op->slot);
    arena_destroy(&op->arena);
    mem_free(op);
}

static const char *controller_error_text(int16_t ec)
{
    switch (ec) {
    case KERR_NOT_CONTROLLER:
        return "No controller available now; retry.";
    case KERR_REQUEST_TIMED_OUT:
        return "The controller did not answer in time; retry.";
    default:
        return NULL;
    }
}

static void item_ready(void *data)
{
    struct admin_item *it = data;
    op_release(it->op);
}

static void on_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct admin_item *it = data;
    struct admin_op *op = it->op;
    (void)rt;
    const char *why = controller_error_text(a->error);
    switch (op->hdr.api_key) {
    case KAPI_CREATE_TOPICS: {
        struct create_topics_resp_topic *o = &op->resp.create.topics[it->index];
        o->error_code = a->error;
        o->topic_id = a->topic_id;
        if (a->error == KERR_TOPIC_ALREADY_EXISTS)
            why = "Topic already exists.";
        if (a->error != KERR_NONE) {
            o->error_message = copy_msg(&op->arena, why ? why : kafka_error_name(a->error));
            o->num_partitions = -1;
            o->replication_factor = -1;
        } else { /* answered once its partitions are served here (topic_ready.h) */
            topic_ready_wait(op->b, o->name.p, 0, o->num_partitions, op->timeout_ms, item_ready,
                             it);
            return;
        }
        break;
    }
    case KAPI_DELETE_TOPICS:
        op->resp.del.responses[it->index].error_code = a->error;
        break;
    case KAPI_ALTER_CONFIGS:
    case KAPI_INCREMENTAL_ALTER_CONFIGS: {
        struct alter_configs_resp_resource *o = &op->resp.alter.responses[it->index];
        o->error_code = a->error;
        if (a->error == KERR_UNKNOWN_TOPIC_OR_PARTITION)
            why = "Topic does not exist";
        if (a->error != KERR_NONE)
            o->error_message = copy_msg(&op->arena, why ? why : kafka_error_name(a->error));
        break;
    }
    default: {
        struct create_partitions_resp_result *o = &op->resp.grow.results[it->index];
        o->error_code = a->error;
        if (a->error != KERR_NONE) {
            o->error_message = copy_msg(&op->arena, why ? why : kafka_error_name(a->error));
        } else { /* as a created topic: once the new partitions are served here */
            topic_ready_wait(op->b, o->name.p, it->first_new, it->count, op->timeout_ms, item_ready,
                             it);
            return;
        }
        break;
    }
    }
    op_release(op);
}

/* Partitions in the image, all topics: what max.partitions caps (every broker may come to
 * host any of them). */
static int64_t image_partitions(const struct ctl_image *img)
{
    int64_t n = 0;
    for (size_t i = 0; i < img->n_topics; i++)
        n += img->topics[i]->n_partitions;
    return n;
}

/* The image's topic of this name, or NULL (also for names no topic can have). */
static const struct ctl_topic *image_topic(const struct ctl_image *img, struct arena *a,
                                           struct kstr name)
{
    if (name.len <= 0 || name.len > TOPIC_NAME_MAX || memchr(name.p, '\0', (size_t)name.len))
        return NULL;
    return ctl_image_topic(img, arena_strndup(a, name.p, (size_t)name.len));
}

/* Checks one topic of a CreateTopics request and fills the command (strings in a). *parts gets
 * its partition count (for the request's max.partitions tally). */
static int16_t create_check(struct broker *b, struct arena *a,
                            const struct create_topics_req_topic *t, int64_t partitions_before,
                            struct ctl_request *cmd, int32_t *parts_out, char *err, size_t errcap)
{
    if (!topic_name_valid(t->name, err, errcap))
        return KERR_INVALID_TOPIC_EXCEPTION;
    if (image_topic(cluster_image(b->cluster), a, t->name)) {
        snprintf(err, errcap, "Topic '%.*s' already exists.", t->name.len, t->name.p);
        return KERR_TOPIC_ALREADY_EXISTS;
    }
    if (t->n_assignments > 0) {
        snprintf(err, errcap,
                 "Replica assignments are not supported yet; give numPartitions and "
                 "replicationFactor.");
        return KERR_INVALID_REPLICA_ASSIGNMENT;
    }
    int32_t parts = t->num_partitions == -1 ? b->cfg->num_partitions : t->num_partitions;
    int32_t rf =
        t->replication_factor == -1 ? b->cfg->default_replication_factor : t->replication_factor;
    if (parts <= 0) {
        snprintf(err, errcap, "Number of partitions must be larger than 0.");
        return KERR_INVALID_PARTITIONS;
    }
    if (rf <= 0) {
        snprintf(err, errcap, "Replication factor must be larger than 0.");
        return KERR_INVALID_REPLICATION_FACTOR;
    }
    if (partitions_before + (int64_t)parts > b->cfg->max_partitions) {
        snprintf(err, errcap,
                 "Creating %d partitions would exceed the broker's limit of %d "
                 "partitions (max.partitions)",
                 parts, b->cfg->max_partitions);
        return KERR_INVALID_PARTITIONS;
    }
    struct ctl_config_entry *cfgs =
        arena_calloc(a, (size_t)(t->n_configs > 0 ? t->n_configs : 1), sizeof(*cfgs));
    size_t k = 0;
    for (int32_t i = 0; i < t->n_configs; i++) {
        const struct config_entry *c = &t->configs[i];
        if (c->name.len <= 0) {
            snprintf(err, errcap, "Config name is empty");
            return KERR_INVALID_CONFIG;
        }
        if (!topic_config_validate(c->name.p, (size_t)c->name.len, c->value.p,
                                   c->value.len >= 0 ? (size_t)c->value.len : 0, err, errcap))
            return KERR_INVALID_CONFIG;
        if (c->value.len < 0)
            continue; /* null: the default, i.e. no override */
        cfgs[k].key = arena_strndup(a, c->name.p, (size_t)c->name.len);
        cfgs[k++].value = arena_strndup(a, c->value.p, (size_t)c->value.len);
    }
    *cmd = (struct ctl_request){
        .type = CTL_REQ_CREATE_TOPIC,
        .name = arena_strndup(a, t->name.p, (size_t)t->name.len),
        .n_partitions = parts,
        .rf = rf,
        .configs = cfgs,
        .n_configs = k,
    };
    *parts_out = parts;
    return KERR_NONE;
}

int handle_create_topics(struct request *req)
{
    struct broker *b = req->b;
    struct create_topics_req crq;
    if (kmsg_decode_create_topics(&req->body, req->hdr.api_version, req->arena, &crq) != 0)
        return -ERR_CORRUPT;
    const struct create_topics_req *cr = &crq;
    int64_t partitions = image_partitions(cluster_image(b->cluster));
    int32_t n = cr->n_topics > 0 ? cr->n_topics : 0;
    struct admin_op *op = op_new(req, n);
    op->timeout_ms = cr->timeout_ms;
    struct create_topics_resp *resp = &op->resp.create;
    /* CREATE on the cluster allows every topic; else each topic's own */
    bool may_create = authz_allows_quiet(req, ACL_OP_CREATE, ACL_RESOURCE_CLUSTER,
                                         kstr_c(ACL_CLUSTER_NAME));
    resp->n_topics = n;
    resp->topics = arena_calloc(&op->arena, (size_t)(n ? n : 1), sizeof(*resp->topics));
    for (int32_t i = 0; i < n; i++) {
        const struct create_topics_req_topic *t = &cr->topics[i];
        struct create_topics_resp_topic *o = &resp->topics[i];
        o->name = copy_str(&op->arena, t->name);
        o->error_message = KSTR_NULL;
        o->num_partitions = -1; /* v5+: what was created; configs are not listed (null) */
        o->replication_factor = -1;
        o->n_configs = -1;
        char err[ERRMSG_MAX] = "";
        struct ctl_request cmd;
        int32_t parts = 0;
        if (kstr_dup_before(&cr->topics[0].name, i, sizeof(cr->topics[0]))) {
            o->error_code = KERR_INVALID_REQUEST;
            snprintf(err, sizeof(err), "Topic '%.*s' appears more than once in the request.",
                     t->name.len > 0 ? t->name.len : 0, t->name.p);
        } else if (!may_create &&
                   !authz_allows(req, ACL_OP_CREATE, ACL_RESOURCE_TOPIC, t->name)) {
            o->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
            snprintf(err, sizeof(err), "Authorization failed.");
        } else {
            o->error_code =
                create_check(b, req->arena, t, partitions, &cmd, &parts, err, sizeof(err));
        }
        if (o->error_code != KERR_NONE) {
            o->error_message = copy_msg(&op->arena, err);
            log_info("topic_create_refused", "topic=%.*s error=%s reason=\"%s\"",
                     t->name.len > 0 ? (t->name.len > 249 ? 249 : t->name.len) : 0, t->name.p,
                     kafka_error_name(o->error_code), err);
            continue;
        }
        partitions += parts;
        o->num_partitions = cmd.n_partitions;
        o->replication_factor = (int16_t)cmd.rf;
        if (cr->validate_only)
            continue;
        op->pending++;
        cluster_submit(b->cluster, &cmd, on_done, &op->items[i]);
    }
    op_release(op);
    return 0;
}

int handle_delete_topics(struct request *req)
{
    struct broker *b = req->b;
    struct delete_topics_req drq;
    if (kmsg_decode_delete_topics(&req->body, req->hdr.api_version, req->arena, &drq) != 0)
        return -ERR_CORRUPT;
    for (int32_t i = 0; i < drq.n_topic_names; i++) /* v6+: named by id (unknown: null) */
        if (drq.topic_names[i].len < 0)
            drq.topic_names[i] = topic_name_by_id(b, drq.topic_ids[i]);
    const struct delete_topics_req *dr = &drq;
    int32_t n = dr->n_topic_names > 0 ? dr->n_topic_names : 0;
    struct admin_op *op = op_new(req, n);
    struct delete_topics_resp *resp = &op->resp.del;
    resp->n_responses = n;
    resp->responses = arena_calloc(&op->arena, (size_t)(n ? n : 1), sizeof(*resp->responses));
    for (int32_t i = 0; i < n; i++) {
        struct delete_topics_resp_topic *o = &resp->responses[i];
        struct kstr name = dr->topic_names[i];
        o->name = copy_str(&op->arena, name);
        o->error_message = KSTR_NULL;
        if (dr->topic_ids)
            o->topic_id = dr->topic_ids[i];
        if (name.len >= 0 && !authz_allows(req, ACL_OP_DELETE, ACL_RESOURCE_TOPIC, name)) {
            o->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
            continue;
        }
        if (!b->cfg->delete_topic_enable) {
            o->error_code = KERR_TOPIC_DELETION_DISABLED;
            continue;
        }
        const struct ctl_topic *ct = image_topic(cluster_image(b->cluster), req->arena, name);
        if (!ct) {
            o->error_code = name.len < 0 ? KERR_UNKNOWN_TOPIC_ID : KERR_UNKNOWN_TOPIC_OR_PARTITION;
            continue;
        }
        o->topic_id = ct->id;
        if (topic_name_internal(ct->name)) {
            o->error_code = KERR_INVALID_REQUEST; /* the broker's own (__consumer_offsets...) */
            continue;
        }
        struct ctl_request cmd = {.type = CTL_REQ_DELETE_TOPIC,
                                  .name = arena_strndup(req->arena, name.p, (size_t)name.len)};
        op->pending++;
        cluster_submit(b->cluster, &cmd, on_done, &op->items[i]);
    }
    op_release(op);
    return 0;
}

/* Checks one topic of a CreatePartitions request against the image. */
static int16_t grow_check(struct broker *b, struct arena *a,
                          const struct create_partitions_req_topic *t, int64_t partitions_before,
                          int32_t *added, char *err, size_t errcap)
{
    const struct ctl_topic *top = image_topic(cluster_image(b->cluster), a, t->name);
    if (!top) {
        snprintf(err, errcap, "The topic '%.*s' does not exist.",
                 t->name.len > 0 ? (t->name.len > 249 ? 249 : t->name.len) : 0, t->name.p);
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    if (t->count < top->n_partitions) {
        snprintf(err, errcap,
                 "Topic currently has %d partitions, which is higher than the requested %d.",
                 top->n_partitions, t->count);
        return KERR_INVALID_PARTITIONS;
    }
    if (t->count == top->n_partitions) {
        snprintf(err, errcap, "Topic already has %d partitions.", top->n_partitions);
        return KERR_INVALID_PARTITIONS;
    }
    if (partitions_before + (int64_t)(t->count - top->n_partitions) > b->cfg->max_partitions) {
        snprintf(err, errcap,
                 "Adding %d partitions would exceed the broker's limit of %d partitions "
                 "(max.partitions)",
                 t->count - top->n_partitions, b->cfg->max_partitions);
        return KERR_INVALID_PARTITIONS;
    }
    if (t->n_assignments >= 0) {
        snprintf(err, errcap, "Replica assignments are not supported yet.");
        return KERR_INVALID_REPLICA_ASSIGNMENT;
    }
    *added = t->count - top->n_partitions;
    return KERR_NONE;
}

int handle_create_partitions(struct request *req)
{
    struct broker *b = req->b;
    struct create_partitions_req crq;
    if (kmsg_decode_create_partitions(&req->body, req->hdr.api_version, req->arena, &crq) != 0)
        return -ERR_CORRUPT;
    const struct create_partitions_req *cr = &crq;
    int64_t partitions = image_partitions(cluster_image(b->cluster));
    int32_t n = cr->n_topics > 0 ? cr->n_topics : 0;
    struct admin_op *op = op_new(req, n);
    op->timeout_ms = cr->timeout_ms;
    struct create_partitions_resp *resp = &op->resp.grow;
    resp->n_results = n;
    resp->results = arena_calloc(&op->arena, (size_t)(n ? n : 1), sizeof(*resp->results));
    for (int32_t i = 0; i < n; i++) {
        const struct create_partitions_req_topic *t = &cr->topics[i];
        struct create_partitions_resp_result *o = &resp->results[i];
        o->name = copy_str(&op->arena, t->name);
        o->error_message = KSTR_NULL;
        char err[ERRMSG_MAX] = "";
        int32_t added = 0;
        if (kstr_dup_before(&cr->topics[0].name, i, sizeof(cr->topics[0]))) {
            o->error_code = KERR_INVALID_REQUEST;
            snprintf(err, sizeof(err), "Duplicate topic in the request.");
        } else if (!authz_allows(req, ACL_OP_ALTER, ACL_RESOURCE_TOPIC, t->name)) {
            o->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
            snprintf(err, sizeof(err), "Authorization failed.");
        } else {
            o->error_code = grow_check(b, req->arena, t, partitions, &added, err, sizeof(err));
        }
        if (o->error_code != KERR_NONE) {
            o->error_message = copy_msg(&op->arena, err);
            continue;
        }
        partitions += added;
        if (cr->validate_only)
            continue;
        op->items[i].first_new = t->count - added;
        op->items[i].count = t->count;
        struct ctl_request cmd = {.type = CTL_REQ_CREATE_PARTITIONS,
                                  .name = arena_strndup(req->arena, t->name.p, (size_t)t->name.len),
                                  .n_partitions = t->count};
        op->pending++;
        cluster_submit(b->cluster, &cmd, on_done, &op->items[i]);
    }
    op_release(op);
    return 0;
}

/* Checks one topic resource of an AlterConfigs request against the image and fills the
 * command (strings in a). */
static int16_t alter_check(struct broker *b, struct arena *a,
                           const struct alter_configs_req_resource *rr, struct ctl_request *cmd,
                           char *err, size_t errcap)
{
    const struct ctl_image *img = cluster_image(b->cluster);
    const struct ctl_topic *t = image_topic(img, a, rr->resource_name);
    if (!t) {
        snprintf(err, errcap, "Topic does not exist");
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    struct topic_config_kv *kvs;
    int16_t ec = admin_check_configs(a, rr->configs, rr->n_configs, &kvs, err, errcap);
    if (ec != KERR_NONE)
        return ec;
    /* the new set: the keys given a value (a null value means the default: no override) */
    size_t n_want = 0;
    for (int32_t i = 0; i < rr->n_configs; i++) {
        if (kstr_dup_before(&rr->configs[0].name, i, sizeof(rr->configs[0]))) {
            snprintf(err, errcap, "Config %s appears more than once in the request.", kvs[i].key);
            return KERR_INVALID_REQUEST;
        }
        if (kvs[i].value)
            kvs[n_want++] = kvs[i];
    }
    const struct ctl_config *cur;
    size_t n_cur = ctl_image_configs_of(img, CTL_RESOURCE_TOPIC, t->name, &cur);
    struct ctl_config_entry *ops = arena_calloc(a, n_cur + n_want + 1, sizeof(*ops));
    size_t n_ops = cluster_configs_replace_ops(cur, n_cur, kvs, n_want, ops);
    /* the image's strings change with the next apply: the command gets copies */
    for (size_t i = 0; i < n_ops; i++)
        ops[i].key = arena_strndup(a, ops[i].key, strlen(ops[i].key));
    *cmd = (struct ctl_request){
        .type = CTL_REQ_ALTER_CONFIGS,
        .name = arena_strndup(a, t->name, strlen(t->name)),
        .resource_type = CTL_RESOURCE_TOPIC,
        .configs = ops,
        .n_configs = n_ops,
    };
    return KERR_NONE;
}

/* Whether the principal may do op (DESCRIBE_CONFIGS or ALTER_CONFIGS) on a config resource:
 * a topic's on the topic, a broker's on the cluster. Kafka's error when not. */
static int16_t config_authz(struct request *req, int8_t resource_type, struct kstr name,
                            enum acl_operation op)
{
    if (resource_type == KAFKA_RESOURCE_TOPIC)
        return authz_allows(req, op, ACL_RESOURCE_TOPIC, name) ? KERR_NONE
                                                               : KERR_TOPIC_AUTHORIZATION_FAILED;
    return authz_allows_cluster(req, op) ? KERR_NONE : KERR_CLUSTER_AUTHORIZATION_FAILED;
}

/* AlterConfigs, and the AlterConfigs an IncrementalAlterConfigs request becomes (answered in
 * the request's own API and version, op_release). */
static int alter_configs(struct request *req, const struct alter_configs_req *ar)
{
    struct broker *b = req->b;
    int32_t n = ar->n_resources > 0 ? ar->n_resources : 0;
    struct admin_op *op = op_new(req, n);
    struct alter_configs_resp *resp = &op->resp.alter;
    resp->n_responses = n;
    resp->responses = arena_calloc(&op->arena, (size_t)(n ? n : 1), sizeof(*resp->responses));
    for (int32_t i = 0; i < n; i++) {
        const struct alter_configs_req_resource *rr = &ar->resources[i];
        struct alter_configs_resp_resource *o = &resp->responses[i];
        o->resource_type = rr->resource_type;
        o->resource_name = copy_str(&op->arena, rr->resource_name);
        o->error_message = KSTR_NULL;
        char err[ERRMSG_MAX] = "";
        struct ctl_request cmd;
        o->error_code = config_authz(req, rr->resource_type, rr->resource_name,
                                     ACL_OP_ALTER_CONFIGS);
        if (o->error_code != KERR_NONE)
            snprintf(err, sizeof(err), "Authorization failed.");
        else
            o->error_code = admin_alter_resource_check(rr->resource_type, err, sizeof(err));
        if (o->error_code == KERR_NONE && rr->error_code != KERR_NONE) { /* IncrementalAlterConfigs: its operations failed */
            o->error_code = rr->error_code;
            snprintf(err, sizeof(err), "%.*s", rr->error_message.len, rr->error_message.p);
        }
        if (o->error_code == KERR_NONE)
            o->error_code = alter_check(b, req->arena, rr, &cmd, err, sizeof(err));
        if (o->error_code != KERR_NONE) {
            o->error_message = copy_msg(&op->arena, err);
            continue;
        }
        if (ar->validate_only)
            continue;
        op->pending++;
        cluster_submit(b->cluster, &cmd, on_done, &op->items[i]);
    }
    op_release(op);
    return 0;
}

int handle_alter_configs(struct request *req)
{
    struct alter_configs_req ar;
    if (kmsg_decode_alter_configs(&req->body, req->hdr.api_version, req->arena, &ar) != 0)
        return -ERR_CORRUPT;
    return alter_configs(req, &ar);
}

/* ---- DescribeConfigs ---- */

static const struct broker_config_entry *broker_entry(const struct broker *b, const char *name)
{
    for (int i = 0; name && i < b->cfg->n_entries; i++)
        if (strcmp(b->cfg->entries[i].name, name) == 0)
            return &b->cfg->entries[i];
    return NULL;
}

static const char *override_of(const struct topic_config_kv *ovs, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (strcmp(ovs[i].key, key) == 0)
            return ovs[i].value;
    return NULL;
}

static bool key_requested(const struct describe_configs_req_resource *rr, const char *name)
{
    if (rr->n_configuration_keys < 0)
        return true;
    for (int32_t i = 0; i < rr->n_configuration_keys; i++)
        if (kstr_eq(rr->configuration_keys[i], name))
            return true;
    return false;
}

/* A topic's configs: its overrides ovs[0..n_ovs) and its effective config tc. */
static void describe_topic_configs(struct broker *b, struct arena *a,
                                   const struct topic_config_kv *ovs, int n_ovs,
                                   const struct topic_config *tc,
                                   const struct describe_configs_req_resource *rr, bool synonyms,
                                   struct describe_configs_result *res)
{
    int nk = topic_config_key_count();
    res->configs = arena_calloc(a, (size_t)nk, sizeof(*res->configs));
    for (int i = 0; i < nk; i++) {
        const char *name = topic_config_key_name(i);
        if (!key_requested(rr, name))
            continue;
        struct describe_configs_entry *e = &res->configs[res->n_configs++];
        const char *ov = override_of(ovs, n_ovs, name);
        const struct broker_config_entry *be = broker_entry(b, topic_config_broker_key(i));
        char buf[64];
        topic_config_value_text(tc, i, buf, sizeof(buf));
        e->name = kstr_c(name);
        e->value = copy_msg(a, ov ? ov : buf);
        e->read_only = false;
        e->is_sensitive = false;
        e->config_type = topic_config_type(i);
        e->documentation = KSTR_NULL;
        if (ov)
            e->config_source = KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC;
        else if (be && !be->is_default)
            e->config_source = KAFKA_CONFIG_SOURCE_STATIC_BROKER;
        else
            e->config_source = KAFKA_CONFIG_SOURCE_DEFAULT;
        e->is_default = e->config_source == KAFKA_CONFIG_SOURCE_DEFAULT;
        if (!synonyms)
            continue;
        e->synonyms = arena_calloc(a, 2, sizeof(*e->synonyms));
        if (ov)
            e->synonyms[e->n_synonyms++] = (struct describe_configs_synonym){
                kstr_c(name), copy_msg(a, ov), KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC};
        if (be)
            e->synonyms[e->n_synonyms++] = (struct describe_configs_synonym){
                kstr_c(be->name), kstr_c(be->value),
                be->is_default ? KAFKA_CONFIG_SOURCE_DEFAULT : KAFKA_CONFIG_SOURCE_STATIC_BROKER};
    }
}

static void describe_broker_configs(struct broker *b, struct arena *a,
                                    const struct describe_configs_req_resource *rr,
                                    struct describe_configs_result *res)
{
    res->configs = arena_calloc(a, (size_t)b->cfg->n_entries, sizeof(*res->configs));
    for (int i = 0; i < b->cfg->n_entries; i++) {
        const struct broker_config_entry *be = &b->cfg->entries[i];
        if (!key_requested(rr, be->name))
            continue;
        struct describe_configs_entry *e = &res->configs[res->n_configs++];
        e->name = kstr_c(be->name);
        e->value = be->sensitive ? KSTR_NULL : kstr_c(be->value);
        e->read_only = true;
        e->is_sensitive = be->sensitive;
        e->config_source =
            be->is_default ? KAFKA_CONFIG_SOURCE_DEFAULT : KAFKA_CONFIG_SOURCE_STATIC_BROKER;
        e->is_default = be->is_default;
    }
}

static bool is_this_broker(const struct broker *b, struct kstr name)
{
    if (name.len == 0)
        return true;
    char id[16];
    snprintf(id, sizeof(id), "%" PRId32, b->cfg->node_id);
    return kstr_eq(name, id);
}

int handle_describe_configs(struct request *req)
{
    struct broker *b = req->b;
    struct describe_configs_req dr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_describe_configs(&req->body, v, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct arena *a = req->arena;
    struct describe_configs_resp resp = {0};
    resp.n_results = dr.n_resources > 0 ? dr.n_resources : 0;
    resp.results = arena_calloc(a, (size_t)resp.n_results, sizeof(*resp.results));
    for (int32_t i = 0; i < resp.n_results; i++) {
        const struct describe_configs_req_resource *rr = &dr.resources[i];
        struct describe_configs_result *res = &resp.results[i];
        res->resource_type = rr->resource_type;
        res->resource_name = rr->resource_name;
        res->error_message = KSTR_NULL;
        if ((rr->resource_type == KAFKA_RESOURCE_TOPIC ||
             rr->resource_type == KAFKA_RESOURCE_BROKER) &&
            (res->error_code = config_authz(req, rr->resource_type, rr->resource_name,
                                            ACL_OP_DESCRIBE_CONFIGS)) != KERR_NONE) {
            res->error_message = kstr_c("Authorization failed.");
            continue;
        }
        if (rr->resource_type == KAFKA_RESOURCE_TOPIC) {
            /* the image's configs, on any broker */
            const struct ctl_image *img = cluster_image(b->cluster);
            const struct ctl_topic *ct = image_topic(img, a, rr->resource_name);
            if (!ct) {
                res->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
                res->error_message = kstr_c("Topic does not exist");
                continue;
            }
            int cap = topic_config_key_count();
            struct topic_config_kv *ovs = arena_calloc(a, (size_t)cap, sizeof(*ovs));
            int n_ovs = cluster_image_overrides(img, ct->name, ovs, cap, NULL);
            struct topic_config tc;
            topic_config_resolve(&tc, b->cfg, ovs, n_ovs);
            describe_topic_configs(b, a, ovs, n_ovs, &tc, rr, v >= 1 && dr.include_synonyms, res);
        } else if (rr->resource_type == KAFKA_RESOURCE_BROKER) {
            if (!is_this_broker(b, rr->resource_name)) {
                res->error_code = KERR_INVALID_REQUEST;
                res->error_message = kstr_c("Unknown broker id");
                continue;
            }
            describe_broker_configs(b, a, rr, res);
        } else {
            res->error_code = KERR_INVALID_REQUEST;
            res->error_message = kstr_c("Unsupported resource type");
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_describe_configs(&r.w, v, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

int16_t admin_alter_resource_check(int8_t resource_type, char *err, size_t errcap)
{
    if (resource_type == KAFKA_RESOURCE_BROKER) {
        snprintf(err, errcap,
                 "Broker configuration is static: set it in the config file or "
                 "with --set and restart");
        return KERR_INVALID_REQUEST;
    }
    if (resource_type != KAFKA_RESOURCE_TOPIC) {
        snprintf(err, errcap, "Unsupported resource type");
        return KERR_INVALID_REQUEST;
    }
    return KERR_NONE;
}

/* ---- IncrementalAlterConfigs ---- */

/* A topic's overrides now (the image's, which every broker applies), in a; -1 when there is no
 * such topic. */
static int current_overrides(struct broker *b, struct arena *a, struct kstr name,
                             const struct topic_config_kv **out)
{
    const struct ctl_image *img = cluster_image(b->cluster);
    const struct ctl_topic *ct = image_topic(img, a, name);
    if (!ct)
        return -1;
    int cap = topic_config_key_count();
    struct topic_config_kv *kvs = arena_calloc(a, (size_t)cap, sizeof(*kvs));
    *out = kvs;
    return cluster_image_overrides(img, ct->name, kvs, cap, NULL);
}

/* Splits s (modified) into its comma-separated items, spaces around them dropped, empty ones
 * left out; items has room for strlen(s) / 2 + 1. Returns how many. */
static int split_list(char *s, char **items)
{
    int n = 0;
    char *save = NULL;
    for (char *it = strtok_r(s, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        while (*it == ' ')
            it++;
        size_t len = strlen(it);
        while (len && it[len - 1] == ' ')
            it[--len] = '\0';
        if (len)
            items[n++] = it;
    }
    return n;
}

static bool has_item(char *const *items, int n, const char *x)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(items[i], x))
            return true;
    return false;
}

/* A list config's value cur with the items of `by` appended (those not there yet) or taken out
 * (SUBTRACT), as Kafka computes it: the result, in a. */
static char *list_op(struct arena *a, const char *cur, struct kstr by, bool append)
{
    char *c = arena_strndup(a, cur, strlen(cur));
    char *x = arena_strndup(a, by.p, (size_t)by.len);
    char **have = arena_calloc(a, strlen(c) / 2 + 1, sizeof(*have));
    char **give = arena_calloc(a, strlen(x) / 2 + 1, sizeof(*give));
    int n_have = split_list(c, have), n_give = split_list(x, give);
    char *out = arena_calloc(a, 1, strlen(cur) + (size_t)by.len + 2);
    char **kept = arena_calloc(a, (size_t)(n_have + n_give) + 1, sizeof(*kept));
    int n_kept = 0;
    for (int i = 0; i < n_have; i++)
        if ((append || !has_item(give, n_give, have[i])) && !has_item(kept, n_kept, have[i]))
            kept[n_kept++] = have[i];
    for (int i = 0; append && i < n_give; i++)
        if (!has_item(kept, n_kept, give[i]))
            kept[n_kept++] = give[i];
    for (int i = 0; i < n_kept; i++) {
        if (i)
            strcat(out, ",");
        strcat(out, kept[i]);
    }
    return out;
}

/* The overrides a topic's IncrementalAlterConfigs operations leave, by Kafka's rules: SET gives
 * a key its value, DELETE drops its override (the default applies), APPEND and SUBTRACT add
 * items to or take them from a list config's value (its override, else its default). The result
 * is the whole new set, as AlterConfigs entries in a (*out, *n_out). Returns KERR_NONE, or
 * INVALID_REQUEST (a key twice, a null value, an unknown operation) or INVALID_CONFIG (a key that
 * is no topic config; APPEND or SUBTRACT on one that is no list) with the reason in err. Values
 * are checked later, by AlterConfigs. Linear in the operations: keys are known ones, at most
 * topic_config_key_count() of them in the set. */
static int16_t apply_ops(struct broker *b, struct arena *a, const struct topic_config_kv *cur,
                         int n_cur, const struct incremental_alter_configs_req_resource *rr,
                         struct config_entry **out, int32_t *n_out, char *err, size_t errcap)
{
    int n_keys = topic_config_key_count();
    struct kstr *value = arena_calloc(a, (size_t)n_keys, sizeof(*value)); /* by key index */
    bool *has = arena_calloc(a, (size_t)n_keys, sizeof(*has));
    bool *touched = arena_calloc(a, (size_t)n_keys, sizeof(*touched));
    for (int i = 0; i < n_cur; i++) {
        int k = topic_config_key_index(cur[i].key, strlen(cur[i].key));
        if (k >= 0 && cur[i].value) {
            has[k] = true;
            value[k] = kstr_c(cur[i].value);
        }
    }
    struct topic_config defaults;
    topic_config_resolve(&defaults, b->cfg, NULL, 0);
    for (int32_t i = 0; i < rr->n_configs; i++) {
        const struct incremental_alter_config *c = &rr->configs[i];
        int k = c->name.len > 0 ? topic_config_key_index(c->name.p, (size_t)c->name.len) : -1;
        int8_t op = c->config_operation;
        if (k < 0) {
            snprintf(err, errcap, "Unknown topic config name: %.*s",
                     c->name.len > 200 ? 200 : (c->name.len > 0 ? c->name.len : 0), c->name.p);
            return KERR_INVALID_CONFIG;
        }
        if (touched[k]) {
            snprintf(err, errcap, "Error due to duplicate config keys");
            return KERR_INVALID_REQUEST;
        }
        touched[k] = true;
        if (op < KAFKA_CONFIG_OP_SET || op > KAFKA_CONFIG_OP_SUBTRACT) {
            snprintf(err, errcap, "Unknown config operation %d", op);
            return KERR_INVALID_REQUEST;
        }
        const char *name = topic_config_key_name(k);
        if (op != KAFKA_CONFIG_OP_DELETE && c->value.len < 0) {
            snprintf(err, errcap, "Null value not supported for : %s", name);
            return KERR_INVALID_REQUEST;
        }
        if (op == KAFKA_CONFIG_OP_SET) {
            has[k] = true;
            value[k] = c->value;
        } else if (op == KAFKA_CONFIG_OP_DELETE) {
            has[k] = false;
        } else if (!topic_config_is_list(k)) {
            snprintf(err, errcap, "Config value %s is not allowed for config key: %s",
                     op == KAFKA_CONFIG_OP_APPEND ? "append" : "subtract", name);
            return KERR_INVALID_CONFIG;
        } else if (c->value.len > 255) { /* what topic_config_validate allows */
            snprintf(err, errcap, "Value of configuration %s is too long", name);
            return KERR_INVALID_CONFIG;
        } else {
            char dflt[256];
            topic_config_value_text(&defaults, k, dflt, sizeof(dflt));
            const char *now = has[k] ? arena_strndup(a, value[k].p, (size_t)value[k].len) : dflt;
            value[k] = kstr_c(list_op(a, now, c->value, op == KAFKA_CONFIG_OP_APPEND));
            has[k] = true;
        }
    }
    struct config_entry *set = arena_calloc(a, (size_t)n_keys, sizeof(*set));
    int32_t n = 0;
    for (int k = 0; k < n_keys; k++)
        if (has[k])
            set[n++] = (struct config_entry){kstr_c(topic_config_key_name(k)), value[k]};
    *out = set;
    *n_out = n;
    return KERR_NONE;
}

int handle_incremental_alter_configs(struct request *req)
{
    struct incremental_alter_configs_req ir;
    struct arena *a = req->arena;
    if (kmsg_decode_incremental_alter_configs(&req->body, req->hdr.api_version, a, &ir) != 0)
        return -ERR_CORRUPT;
    struct alter_configs_req ar = {.validate_only = ir.validate_only};
    ar.n_resources = ir.n_resources;
    ar.resources =
        arena_calloc(a, (size_t)(ir.n_resources ? ir.n_resources : 1), sizeof(*ar.resources));
    for (int32_t i = 0; i < ir.n_resources; i++) {
        const struct incremental_alter_configs_req_resource *rr = &ir.resources[i];
        struct alter_configs_req_resource *o = &ar.resources[i];
        *o = (struct alter_configs_req_resource){.resource_type = rr->resource_type,
                                                 .resource_name = rr->resource_name};
        const struct topic_config_kv *cur = NULL;
        int n_cur;
        if (rr->resource_type != KAFKA_RESOURCE_TOPIC ||
            (n_cur = current_overrides(req->b, a, rr->resource_name, &cur)) < 0)
            continue; /* AlterConfigs answers it: not a topic, or no such topic */
        char err[ERRMSG_MAX] = "";
        o->error_code =
            apply_ops(req->b, a, cur, n_cur, rr, &o->configs, &o->n_configs, err, sizeof(err));
        if (o->error_code != KERR_NONE)
            o->error_message = copy_msg(a, err);
    }
    return alter_configs(req, &ar);
}

/* ---- DescribeLogDirs ---- */

/* Describes partition p (its whole log is in the one log directory; never a future replica). */
static void describe_log_dir_partition(struct partition *p, struct describe_log_dirs_partition *o)
{
    int64_t lag = plog_high_watermark(p->log) - plog_end_offset(p->log); /* Kafka: HW - LEO */
    *o = (struct describe_log_dirs_partition){p->index, plog_size_bytes(p->log), lag > 0 ? lag : 0,
                                              false};
}

/* DescribeLogDirs: the one directory of log.dirs, with this broker's replicas in it (every
 * topic, or those asked for; partitions it does not hold are left out, as Kafka does). */
int handle_describe_log_dirs(struct request *req)
{
    struct broker *b = req->b;
    struct arena *a = req->arena;
    struct describe_log_dirs_req dr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_describe_log_dirs(&req->body, v, a, &dr) != 0)
        return -ERR_CORRUPT;
    if (!authz_allows_cluster(req, ACL_OP_DESCRIBE)) { /* v3+: the error; before: no dirs */
        struct describe_log_dirs_resp resp = {.error_code = KERR_CLUSTER_AUTHORIZATION_FAILED};
        struct response r;
        response_begin(&r, &req->hdr);
        kmsg_encode_describe_log_dirs(&r.w, v, &resp);
        response_send(&r, conn_slot_reserve(req->conn));
        return 0;
    }
    struct describe_log_dirs_result *res = arena_calloc(a, 1, sizeof(*res));
    res->log_dir = kstr_c(b->cfg->log_dirs);
    res->total_bytes = res->usable_bytes = -1;
    struct statvfs st;
    if (statvfs(b->cfg->log_dirs, &st) == 0) {
        res->total_bytes = (int64_t)st.f_blocks * (int64_t)st.f_frsize;
        res->usable_bytes = (int64_t)st.f_bavail * (int64_t)st.f_frsize;
    }
    size_t n_topics = dr.n_topics < 0 ? b->topics.len : (size_t)dr.n_topics;
    res->topics = arena_calloc(a, n_topics ? n_topics : 1, sizeof(*res->topics));
    if (dr.n_topics < 0) {
        size_t it = 0;
        const char *k;
        void *val;
        while (strmap_next(&b->topics, &it, &k, &val)) {
            struct topic *t = val;
            struct describe_log_dirs_topic *o = &res->topics[res->n_topics++];
            o->name = kstr_c(t->name);
            o->partitions =
                arena_calloc(a, (size_t)(t->n_parts ? t->n_parts : 1), sizeof(*o->partitions));
            for (int32_t i = 0; i < t->n_parts; i++)
                describe_log_dir_partition(t->parts[i], &o->partitions[o->n_partitions++]);
        }
    } else {
        /* each topic once, each partition once (a set, as Kafka takes it): linear in the
         * request, however many repeats it holds */
        struct strmap listed; /* topic name -> 1 + its index in res->topics */
        strmap_init(&listed);
        bool **seen_of = arena_calloc(a, n_topics ? n_topics : 1, sizeof(*seen_of));
        for (int32_t i = 0; i < dr.n_topics; i++) {
            const struct describe_log_dirs_req_topic *rt = &dr.topics[i];
            struct topic *t = topic_find(b, rt->topic);
            if (!t)
                continue;
            uintptr_t at = (uintptr_t)strmap_get(&listed, t->name, strlen(t->name));
            if (!at) {
                struct describe_log_dirs_topic *o = &res->topics[res->n_topics++];
                o->name = kstr_c(t->name);
                o->partitions =
                    arena_calloc(a, (size_t)(t->n_parts ? t->n_parts : 1), sizeof(*o->partitions));
                seen_of[res->n_topics - 1] =
                    arena_calloc(a, (size_t)(t->n_parts ? t->n_parts : 1), sizeof(bool));
                at = (uintptr_t)res->n_topics;
                strmap_put(&listed, t->name, strlen(t->name), (void *)at);
            }
            struct describe_log_dirs_topic *o = &res->topics[at - 1];
            bool *seen = seen_of[at - 1];
            for (int32_t j = 0; j < rt->n_partitions; j++) {
                int32_t pi = rt->partitions[j];
                if (pi < 0 || pi >= t->n_parts || seen[pi])
                    continue;
                seen[pi] = true;
                describe_log_dir_partition(t->parts[pi], &o->partitions[o->n_partitions++]);
            }
        }
        strmap_destroy(&listed);
    }
    struct describe_log_dirs_resp resp = {.results = res, .n_results = 1};
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_describe_log_dirs(&r.w, v, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}
