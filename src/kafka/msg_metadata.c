/* Metadata (key 3), versions 0-12 (MetadataRequest/Response.json; flexible from v9).
 *
 * "All topics" is an empty array in v0 and a null array from v1; the decoder reports both as
 * n_topics == -1 so the broker need not know which version said it. From v10 each requested
 * topic carries an id beside its name, and the name may be null (asked for by id); responses
 * carry each topic's id from v10. */
#include "kafka/msg_int.h"

int kmsg_decode_metadata(struct kreader *r, int16_t v, struct arena *a, struct metadata_req *out)
{
    if (!kmsg_version_ok(KAPI_METADATA, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_METADATA, v);
    *out = (struct metadata_req){.allow_auto_topic_creation = true};

    size_t topic_min = (v >= 10 ? 16 : 0) + kmsg_min_str(flex) + kmsg_min_tags(flex);
    int32_t n = v >= 1 ? kr_array(r, flex, topic_min) : kmsg_rd_array(r, flex, topic_min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    if (v >= 10)
        out->topic_ids = kmsg_alloc(a, n, sizeof(*out->topic_ids));
    for (int32_t i = 0; i < n; i++) {
        if (v >= 10) {
            out->topic_ids[i] = kr_uuid(r);
            out->topics[i] = kr_str(r, flex); /* nullable from v10 */
        } else {
            out->topics[i] = kmsg_rd_str(r, flex);
        }
        kr_tags(r, flex);
    }
    out->n_topics = (v == 0 && n == 0) ? -1 : n;
    if (v >= 4)
        out->allow_auto_topic_creation = kr_bool(r);
    if (v >= 8 && v <= 10)
        out->include_cluster_authorized_operations = kr_bool(r);
    if (v >= 8)
        out->include_topic_authorized_operations = kr_bool(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

static void encode_partition(struct kwriter *w, int16_t v, bool flex,
                             const struct metadata_partition *p)
{
    kw_error_code(w, p->error_code);
    kw_i32(w, p->partition_index);
    kw_i32(w, p->leader_id);
    if (v >= 7)
        kw_i32(w, p->leader_epoch);
    kmsg_wr_i32s(w, flex, p->replica_nodes, p->n_replica_nodes);
    kmsg_wr_i32s(w, flex, p->isr_nodes, p->n_isr_nodes);
    if (v >= 5)
        kmsg_wr_i32s(w, flex, p->offline_replicas, p->n_offline_replicas);
    kw_tags(w, flex);
}

static void encode_topic(struct kwriter *w, int16_t v, bool flex, const struct metadata_topic *t)
{
    kw_error_code(w, t->error_code);
    if (v >= 12)
        kmsg_wr_nstr(w, flex, t->name);
    else
        kmsg_wr_str(w, flex, t->name);
    if (v >= 10)
        kw_uuid(w, t->topic_id);
    if (v >= 1)
        kw_bool(w, t->is_internal);
    kmsg_wr_array(w, flex, t->n_partitions);
    for (int32_t i = 0; i < t->n_partitions; i++)
        encode_partition(w, v, flex, &t->partitions[i]);
    if (v >= 8)
        kw_i32(w, t->topic_authorized_operations);
    kw_tags(w, flex);
}

void kmsg_encode_metadata(struct kwriter *w, int16_t v, const struct metadata_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_METADATA, v));
    bool flex = kafka_api_flexible(KAPI_METADATA, v);
    if (v >= 3)
        kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_brokers);
    for (int32_t i = 0; i < resp->n_brokers; i++) {
        const struct metadata_broker *b = &resp->brokers[i];
        kw_i32(w, b->node_id);
        kmsg_wr_str(w, flex, b->host);
        kw_i32(w, b->port);
        if (v >= 1)
            kmsg_wr_nstr(w, flex, b->rack);
        kw_tags(w, flex);
    }
    if (v >= 2)
        kmsg_wr_nstr(w, flex, resp->cluster_id);
    if (v >= 1)
        kw_i32(w, resp->controller_id);
    kmsg_wr_array(w, flex, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++)
        encode_topic(w, v, flex, &resp->topics[i]);
    if (v >= 8 && v <= 10)
        kw_i32(w, resp->cluster_authorized_operations);
    kw_tags(w, flex);
}
