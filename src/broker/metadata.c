/* ApiVersions, Metadata (with topic auto-creation) and FindCoordinator. */
#include <stdio.h>
#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "kafka/api.h"
#include "kafka/errors.h"
#include "storage/plog.h"

#define AUTHORIZED_OPERATIONS_UNKNOWN INT32_MIN

static void fill_api_versions(struct api_versions_resp *resp, struct arena *a)
{
    int n;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    resp->keys = arena_calloc(a, (size_t)n, sizeof(*resp->keys));
    resp->n_keys = n;
    for (int i = 0; i < n; i++) {
        resp->keys[i].api_key = apis[i].key;
        resp->keys[i].min_version = apis[i].min_version;
        resp->keys[i].max_version = apis[i].max_version;
    }
}

void api_versions_reply_unsupported(struct request *req)
{
    /* KIP-511: a v0 body with UNSUPPORTED_VERSION and our key list, response header v0 */
    struct api_versions_resp resp = {.error_code = KERR_UNSUPPORTED_VERSION};
    fill_api_versions(&resp, req->arena);
    struct kreq_header h = req->hdr;
    h.api_version = 0;
    h.flexible = false;
    struct response r;
    response_begin(&r, &h);
    kmsg_encode_api_versions(&r.w, 0, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
}

int handle_api_versions(struct request *req)
{
    struct api_versions_req ar;
    if (kmsg_decode_api_versions(&req->body, req->hdr.api_version, req->arena, &ar) != 0)
        return -ERR_CORRUPT;
    struct api_versions_resp resp = {.error_code = KERR_NONE};
    fill_api_versions(&resp, req->arena);
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_api_versions(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

static void describe_topic(struct broker *b, struct topic *t, struct metadata_topic *mt,
                           struct arena *a)
{
    mt->error_code = KERR_NONE;
    mt->name = (struct kstr){t->name, (int32_t)strlen(t->name)};
    memcpy(mt->topic_id.b, t->id, sizeof(mt->topic_id.b));
    mt->is_internal = t->internal;
    mt->topic_authorized_operations = AUTHORIZED_OPERATIONS_UNKNOWN;
    mt->n_partitions = t->n_parts;
    mt->partitions = arena_calloc(a, (size_t)t->n_parts, sizeof(*mt->partitions));
    int32_t *self = arena_alloc(a, sizeof(int32_t));
    *self = b->cfg->node_id;
    for (int32_t i = 0; i < t->n_parts; i++) {
        struct metadata_partition *mp = &mt->partitions[i];
        mp->error_code = plog_fenced(t->parts[i]->log) ? KERR_KAFKA_STORAGE_ERROR : KERR_NONE;
        mp->partition_index = i;
        mp->leader_id = b->cfg->node_id;
        mp->leader_epoch = t->parts[i]->leader_epoch;
        mp->replica_nodes = self;
        mp->n_replica_nodes = 1;
        mp->isr_nodes = self;
        mp->n_isr_nodes = 1;
        mp->offline_replicas = NULL;
        mp->n_offline_replicas = 0;
    }
}

int handle_metadata(struct request *req)
{
    struct broker *b = req->b;
    struct metadata_req mr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_metadata(&req->body, v, req->arena, &mr) != 0)
        return -ERR_CORRUPT;
    for (int32_t i = 0; i < mr.n_topics; i++) /* v10+: asked for by id (unknown: "", invalid) */
        if (mr.topics[i].len < 0) {
            struct kstr name = topic_name_by_id(b, mr.topic_ids[i]);
            mr.topics[i] = name.len >= 0 ? name : (struct kstr){"", 0};
        }
    if (b->cluster)
        return cluster_metadata(req, &mr);
    struct arena *a = req->arena;
    struct metadata_resp resp = {0};
    struct metadata_broker *self = arena_calloc(a, 1, sizeof(*self));
    self->node_id = b->cfg->node_id;
    self->host = kstr_c(b->cfg->advertised_host);
    self->port = b->advertised_port;
    self->rack = KSTR_NULL;
    resp.brokers = self;
    resp.n_brokers = 1;
    resp.cluster_id = kstr_c(b->cluster_id);
    resp.controller_id = b->cfg->node_id;
    resp.cluster_authorized_operations = AUTHORIZED_OPERATIONS_UNKNOWN;

    bool all = mr.n_topics < 0 || (v == 0 && mr.n_topics == 0);
    if (all) {
        /* internal topics are listed only when asked for by name */
        resp.topics = arena_calloc(a, b->topics.len ? b->topics.len : 1, sizeof(*resp.topics));
        size_t it = 0;
        const char *k;
        void *val;
        while (strmap_next(&b->topics, &it, &k, &val)) {
            struct topic *t = val;
            if (t->internal)
                continue;
            describe_topic(b, t, &resp.topics[resp.n_topics++], a);
        }
    } else {
        resp.topics =
            arena_calloc(a, (size_t)(mr.n_topics ? mr.n_topics : 1), sizeof(*resp.topics));
        bool may_create = b->cfg->auto_create_topics && (v < 4 || mr.allow_auto_topic_creation);
        for (int32_t i = 0; i < mr.n_topics; i++) {
            struct metadata_topic *mt = &resp.topics[resp.n_topics++];
            struct kstr name = mr.topics[i];
            mt->name = name;
            mt->topic_authorized_operations = AUTHORIZED_OPERATIONS_UNKNOWN;
            struct topic *t = topic_find(b, name);
            char err[256];
            if (!t && may_create && name.len > 0 && topic_name_valid(name, err, sizeof(err)) &&
                !(name.len >= 2 && name.p[0] == '_' && name.p[1] == '_')) {
                if (topic_create(b, name, b->cfg->num_partitions, NULL, 0, err, sizeof(err)) == 0) {
                    t = topic_find(b, name);
                } else {
                    log_warn("topic_auto_create_failed", "topic=%.*s reason=\"%s\"", name.len,
                             name.p, err);
                }
            }
            if (t) {
                describe_topic(b, t, mt, a);
            } else if (name.len <= 0 || !topic_name_valid(name, err, sizeof(err))) {
                mt->error_code = KERR_INVALID_TOPIC_EXCEPTION;
            } else {
                mt->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            }
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_metadata(&r.w, v, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

/* DescribeCluster: the brokers and controller Metadata gives, without topics (KIP-700). Only
 * brokers are described: asking for controllers (v1 endpoint type 2) is UNSUPPORTED_ENDPOINT_TYPE,
 * as a Kafka broker answers it. */
int handle_describe_cluster(struct request *req)
{
    struct broker *b = req->b;
    struct describe_cluster_req dr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_describe_cluster(&req->body, v, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct describe_cluster_resp resp = {.error_message = KSTR_NULL,
                                         .endpoint_type = dr.endpoint_type,
                                         .cluster_id = kstr_c(""),
                                         .controller_id = -1,
                                         .cluster_authorized_operations =
                                             AUTHORIZED_OPERATIONS_UNKNOWN};
    if (dr.endpoint_type != KAFKA_ENDPOINT_BROKERS) {
        resp.error_code = KERR_UNSUPPORTED_ENDPOINT_TYPE;
        resp.error_message = kstr_c("Only brokers can be described by this endpoint.");
    } else if (b->cluster) {
        cluster_describe_cluster(req, &resp);
    } else {
        struct describe_cluster_broker *self = arena_calloc(req->arena, 1, sizeof(*self));
        *self = (struct describe_cluster_broker){b->cfg->node_id, kstr_c(b->cfg->advertised_host),
                                                 b->advertised_port, KSTR_NULL};
        resp.brokers = self;
        resp.n_brokers = 1;
        resp.cluster_id = kstr_c(b->cluster_id);
        resp.controller_id = b->cfg->node_id;
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_describe_cluster(&r.w, v, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

void find_coordinator_unavailable(struct find_coordinator_resp *resp, const char *why)
{
    resp->error_code = KERR_COORDINATOR_NOT_AVAILABLE;
    resp->error_message = kstr_c(why);
    resp->node_id = -1;
    resp->host = kstr_c("");
    resp->port = -1;
}

void find_coordinator_self(const struct broker *b, struct find_coordinator_resp *resp)
{
    resp->error_code = KERR_NONE;
    resp->node_id = b->cfg->node_id;
    resp->host = kstr_c(b->cfg->advertised_host);
    resp->port = b->advertised_port;
}

/* The coordinator of one key, in the single-key form of v0-3. */
static void find_one(struct request *req, int8_t key_type, struct kstr key,
                     struct find_coordinator_resp *resp)
{
    *resp = (struct find_coordinator_resp){.error_message = KSTR_NULL};
    if (key_type != KAFKA_COORDINATOR_GROUP)
        find_coordinator_unavailable(resp, "transactions are not supported");
    else if (req->b->cluster)
        cluster_find_coordinator(req, key, resp);
    else
        find_coordinator_self(req->b, resp);
}

int handle_find_coordinator(struct request *req)
{
    struct find_coordinator_req fr;
    if (kmsg_decode_find_coordinator(&req->body, req->hdr.api_version, req->arena, &fr) != 0)
        return -ERR_CORRUPT;
    struct find_coordinator_resp resp;
    if (req->hdr.api_version <= 3) {
        find_one(req, fr.key_type, fr.key, &resp);
    } else { /* v4+: one answer per key */
        resp = (struct find_coordinator_resp){.error_message = KSTR_NULL};
        int32_t n = fr.n_coordinator_keys;
        resp.coordinators =
            arena_calloc(req->arena, (size_t)(n ? n : 1), sizeof(*resp.coordinators));
        resp.n_coordinators = n;
        for (int32_t i = 0; i < n; i++) {
            struct find_coordinator_resp one;
            find_one(req, fr.key_type, fr.coordinator_keys[i], &one);
            resp.coordinators[i] =
                (struct find_coordinator_coordinator){.key = fr.coordinator_keys[i],
                                                      .node_id = one.node_id,
                                                      .host = one.host,
                                                      .port = one.port,
                                                      .error_code = one.error_code,
                                                      .error_message = one.error_message};
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_find_coordinator(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}
