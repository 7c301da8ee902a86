/* Cluster mode: CreateTopics, DeleteTopics, CreatePartitions and AlterConfigs go to the
 * controller.
 *
 * Each topic of a request is checked here as far as the broker can (name, counts, configs,
 * defaults resolved from this broker's config), then submitted as one controller command
 * (ctl_runtime_submit through cluster_submit). AlterConfigs of a topic becomes one
 * CTL_REQ_ALTER_CONFIGS that sets the keys given and deletes the others the image holds
 * (cluster_configs.h: AlterConfigs replaces the whole set). The request is answered once every
 * command has its outcome: an admin_op holds the response slot, a copy of the header and the
 * response (strings copied into its own arena) until its pending count reaches zero.
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

#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "broker/cluster.h"
#include "broker/cluster_configs.h"
#include "broker/internal.h"
#include "controller/request.h"
#include "kafka/errors.h"

#define ERRMSG_MAX 300

struct admin_op;

struct admin_item {
    struct admin_op *op;
    int32_t index;
};

struct admin_op {
    struct broker *b;
    struct conn_slot *slot;
    struct kreq_header hdr;
    struct arena arena;
    int pending;
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
        op->items[i] = (struct admin_item){op, i};
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
    case KAPI_INCREMENTAL_ALTER_CONFIGS: /* admin.c turned it into an AlterConfigs */
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
        if (a->error != KERR_NONE)
            o->error_message = copy_msg(&op->arena, why ? why : kafka_error_name(a->error));
        break;
    }
    }
    op_release(op);
}

/* Checks one topic of a CreateTopics request and fills the command (strings in a). */
static int16_t create_check(struct broker *b, struct arena *a,
                            const struct create_topics_req_topic *t, struct ctl_request *cmd,
                            char *err, size_t errcap)
{
    if (!topic_name_valid(t->name, err, errcap))
        return KERR_INVALID_TOPIC_EXCEPTION;
    if (t->n_assignments > 0) {
        snprintf(err, errcap,
                 "Replica assignments are not supported in cluster mode yet; give "
                 "numPartitions and replicationFactor.");
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
    return KERR_NONE;
}

int cluster_create_topics(struct request *req, const struct create_topics_req *cr)
{
    struct broker *b = req->b;
    int32_t n = cr->n_topics > 0 ? cr->n_topics : 0;
    struct admin_op *op = op_new(req, n);
    struct create_topics_resp *resp = &op->resp.create;
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
        if (kstr_dup_before(&cr->topics[0].name, i, sizeof(cr->topics[0]))) {
            o->error_code = KERR_INVALID_REQUEST;
            snprintf(err, sizeof(err), "Topic appears more than once in the request.");
        } else {
            o->error_code = create_check(b, req->arena, t, &cmd, err, sizeof(err));
        }
        if (o->error_code != KERR_NONE) {
            o->error_message = copy_msg(&op->arena, err);
            continue;
        }
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

int cluster_delete_topics(struct request *req, const struct delete_topics_req *dr)
{
    struct broker *b = req->b;
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
        if (!b->cfg->delete_topic_enable) {
            o->error_code = KERR_TOPIC_DELETION_DISABLED;
            continue;
        }
        if (name.len <= 0 || name.len > TOPIC_NAME_MAX) {
            o->error_code = name.len < 0 ? KERR_UNKNOWN_TOPIC_ID : KERR_UNKNOWN_TOPIC_OR_PARTITION;
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

int cluster_create_partitions(struct request *req, const struct create_partitions_req *cr)
{
    struct broker *b = req->b;
    int32_t n = cr->n_topics > 0 ? cr->n_topics : 0;
    struct admin_op *op = op_new(req, n);
    struct create_partitions_resp *resp = &op->resp.grow;
    resp->n_results = n;
    resp->results = arena_calloc(&op->arena, (size_t)(n ? n : 1), sizeof(*resp->results));
    for (int32_t i = 0; i < n; i++) {
        const struct create_partitions_req_topic *t = &cr->topics[i];
        struct create_partitions_resp_result *o = &resp->results[i];
        o->name = copy_str(&op->arena, t->name);
        o->error_message = KSTR_NULL;
        const char *err = NULL;
        if (kstr_dup_before(&cr->topics[0].name, i, sizeof(cr->topics[0]))) {
            o->error_code = KERR_INVALID_REQUEST;
            err = "Duplicate topic in the request.";
        } else if (t->n_assignments >= 0) {
            o->error_code = KERR_INVALID_REPLICA_ASSIGNMENT;
            err = "Replica assignments are not supported in cluster mode yet.";
        } else if (t->name.len <= 0 || t->name.len > TOPIC_NAME_MAX) {
            o->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            err = "The topic does not exist.";
        }
        if (err) {
            o->error_message = copy_msg(&op->arena, err);
            continue;
        }
        if (cr->validate_only)
            continue;
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
    struct kstr name = rr->resource_name;
    const struct ctl_topic *t = NULL;
    const struct ctl_image *img = cluster_image(b->cluster);
    if (name.len > 0 && name.len <= TOPIC_NAME_MAX && !memchr(name.p, '\0', (size_t)name.len))
        t = ctl_image_topic(img, arena_strndup(a, name.p, (size_t)name.len));
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

int cluster_alter_configs(struct request *req, const struct alter_configs_req *ar)
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
        o->error_code = admin_alter_resource_check(rr->resource_type, err, sizeof(err));
        if (rr->error_code != KERR_NONE) { /* IncrementalAlterConfigs: its operations failed */
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
