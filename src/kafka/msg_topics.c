/* Topic administration: CreateTopics (key 19) v2-7 (flexible from v5, which also answers with
 * each topic's partition count, replication factor and configs; v7 adds its id), DeleteTopics
 * (key 20) v1-6 (flexible from v4; v5 adds an error message; v6 names topics by name or by id)
 * and CreatePartitions (key 37) v0-1 (CreateTopics*.json, DeleteTopics*.json,
 * CreatePartitions*.json). */
#include "kafka/msg_int.h"

/* ---- CreateTopics ---- */

static void decode_assignment(struct kreader *r, bool flex, struct arena *a,
                              struct create_topics_assignment *as)
{
    as->partition_index = kr_i32(r);
    as->broker_ids = kmsg_rd_i32s(r, flex, a, false, &as->n_broker_ids);
    kr_tags(r, flex);
}

static void decode_creatable_topic(struct kreader *r, bool flex, struct arena *a,
                                   struct create_topics_req_topic *t)
{
    t->name = kmsg_rd_str(r, flex);
    t->num_partitions = kr_i32(r);
    t->replication_factor = kr_i16(r);
    size_t assign_min = 4 + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, assign_min);
    t->assignments = kmsg_alloc(a, n, sizeof(*t->assignments));
    t->n_assignments = n;
    for (int32_t i = 0; i < n; i++)
        decode_assignment(r, flex, a, &t->assignments[i]);
    size_t config_min = 2 * kmsg_min_str(flex) + kmsg_min_tags(flex);
    n = kmsg_rd_array(r, flex, config_min);
    t->configs = kmsg_alloc(a, n, sizeof(*t->configs));
    t->n_configs = n;
    for (int32_t i = 0; i < n; i++) {
        t->configs[i].name = kmsg_rd_str(r, flex);
        t->configs[i].value = kr_str(r, flex); /* nullable */
        kr_tags(r, flex);
    }
    kr_tags(r, flex);
}

int kmsg_decode_create_topics(struct kreader *r, int16_t v, struct arena *a,
                              struct create_topics_req *out)
{
    if (!kmsg_version_ok(KAPI_CREATE_TOPICS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_CREATE_TOPICS, v);
    *out = (struct create_topics_req){0};
    size_t topic_min = kmsg_min_str(flex) + 4 + 2 + 2 * kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, topic_min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++)
        decode_creatable_topic(r, flex, a, &out->topics[i]);
    out->timeout_ms = kr_i32(r);
    if (v >= 1)
        out->validate_only = kr_bool(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_create_topics(struct kwriter *w, int16_t v, const struct create_topics_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_CREATE_TOPICS, v));
    bool flex = kafka_api_flexible(KAPI_CREATE_TOPICS, v);
    if (v >= 2)
        kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct create_topics_resp_topic *t = &resp->topics[i];
        kmsg_wr_str(w, flex, t->name);
        if (v >= 7)
            kw_uuid(w, t->topic_id);
        kw_error_code(w, t->error_code);
        if (v >= 1)
            kmsg_wr_nstr(w, flex, t->error_message); /* nullable */
        if (v >= 5) {
            kw_i32(w, t->num_partitions);
            kw_i16(w, t->replication_factor);
            CHECK(t->n_configs >= -1);
            kw_array(w, flex, t->n_configs); /* nullable */
            for (int32_t j = 0; j < t->n_configs; j++) {
                const struct create_topics_resp_config *c = &t->configs[j];
                kmsg_wr_str(w, flex, c->name);
                kmsg_wr_nstr(w, flex, c->value);
                kw_bool(w, c->read_only);
                kw_i8(w, c->config_source);
                kw_bool(w, c->is_sensitive);
                kw_tags(w, flex);
            }
        }
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}

/* ---- DeleteTopics ---- */

int kmsg_decode_delete_topics(struct kreader *r, int16_t v, struct arena *a,
                              struct delete_topics_req *out)
{
    if (!kmsg_version_ok(KAPI_DELETE_TOPICS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_DELETE_TOPICS, v);
    *out = (struct delete_topics_req){0};
    if (v >= 6) {
        int32_t n = kmsg_rd_array(r, flex, kmsg_min_str(flex) + 16 + kmsg_min_tags(flex));
        out->topic_names = kmsg_alloc(a, n, sizeof(*out->topic_names));
        out->topic_ids = kmsg_alloc(a, n, sizeof(*out->topic_ids));
        out->n_topic_names = n;
        for (int32_t i = 0; i < n; i++) {
            out->topic_names[i] = kr_str(r, flex); /* nullable */
            out->topic_ids[i] = kr_uuid(r);
            kr_tags(r, flex);
        }
    } else {
        out->topic_names = kmsg_rd_strs(r, flex, a, false, &out->n_topic_names);
    }
    out->timeout_ms = kr_i32(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_delete_topics(struct kwriter *w, int16_t v, const struct delete_topics_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DELETE_TOPICS, v));
    bool flex = kafka_api_flexible(KAPI_DELETE_TOPICS, v);
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_responses);
    for (int32_t i = 0; i < resp->n_responses; i++) {
        const struct delete_topics_resp_topic *t = &resp->responses[i];
        if (v >= 6) {
            kmsg_wr_nstr(w, flex, t->name);
            kw_uuid(w, t->topic_id);
        } else {
            kmsg_wr_str(w, flex, t->name);
        }
        kw_error_code(w, t->error_code);
        if (v >= 5)
            kmsg_wr_nstr(w, flex, t->error_message); /* nullable */
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}

/* ---- CreatePartitions ---- */

static void decode_partitions_topic(struct kreader *r, bool flex, struct arena *a,
                                    struct create_partitions_req_topic *t)
{
    t->name = kmsg_rd_str(r, flex);
    t->count = kr_i32(r);
    int32_t n = kr_array(r, flex, kmsg_min_array(flex) + kmsg_min_tags(flex)); /* nullable */
    t->assignments = kmsg_alloc(a, n, sizeof(*t->assignments));
    t->n_assignments = n;
    for (int32_t i = 0; i < n; i++) {
        struct create_partitions_assignment *as = &t->assignments[i];
        as->broker_ids = kmsg_rd_i32s(r, flex, a, false, &as->n_broker_ids);
        kr_tags(r, flex);
    }
    kr_tags(r, flex);
}

int kmsg_decode_create_partitions(struct kreader *r, int16_t v, struct arena *a,
                                  struct create_partitions_req *out)
{
    if (!kmsg_version_ok(KAPI_CREATE_PARTITIONS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_CREATE_PARTITIONS, v);
    *out = (struct create_partitions_req){0};
    size_t topic_min = kmsg_min_str(flex) + 4 + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, topic_min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++)
        decode_partitions_topic(r, flex, a, &out->topics[i]);
    out->timeout_ms = kr_i32(r);
    out->validate_only = kr_bool(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_create_partitions(struct kwriter *w, int16_t v,
                                   const struct create_partitions_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_CREATE_PARTITIONS, v));
    bool flex = kafka_api_flexible(KAPI_CREATE_PARTITIONS, v);
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_results);
    for (int32_t i = 0; i < resp->n_results; i++) {
        const struct create_partitions_resp_result *res = &resp->results[i];
        kmsg_wr_str(w, flex, res->name);
        kw_error_code(w, res->error_code);
        kmsg_wr_nstr(w, flex, res->error_message); /* nullable */
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}
