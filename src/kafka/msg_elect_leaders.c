/* ElectLeaders (key 43), versions 0-2 (ElectLeadersRequest/Response.json; KIP-460: v1 adds the
 * election type and the top-level error code; flexible from v2). TopicPartitions is nullable in
 * every version: null asks for every partition. */
#include "kafka/msg_int.h"

int kmsg_decode_elect_leaders(struct kreader *r, int16_t v, struct arena *a,
                              struct elect_leaders_req *out)
{
    if (!kmsg_version_ok(KAPI_ELECT_LEADERS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_ELECT_LEADERS, v);
    *out = (struct elect_leaders_req){.election_type = KAFKA_ELECTION_PREFERRED};
    if (v >= 1)
        out->election_type = kr_i8(r);
    size_t topic_min = kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kr_array(r, flex, topic_min); /* null: every partition */
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++) {
        struct elect_leaders_req_topic *t = &out->topics[i];
        t->topic = kmsg_rd_str(r, flex);
        t->partitions = kmsg_rd_i32s(r, flex, a, false, &t->n_partitions);
        kr_tags(r, flex);
    }
    out->timeout_ms = kr_i32(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_elect_leaders(struct kwriter *w, int16_t v, const struct elect_leaders_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_ELECT_LEADERS, v));
    bool flex = kafka_api_flexible(KAPI_ELECT_LEADERS, v);
    kw_i32(w, resp->throttle_time_ms);
    if (v >= 1)
        kw_error_code(w, resp->error_code);
    kmsg_wr_array(w, flex, resp->n_results);
    for (int32_t i = 0; i < resp->n_results; i++) {
        const struct elect_leaders_resp_topic *t = &resp->results[i];
        kmsg_wr_str(w, flex, t->topic);
        kmsg_wr_array(w, flex, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct elect_leaders_resp_partition *p = &t->partitions[j];
            kw_i32(w, p->partition_id);
            kw_error_code(w, p->error_code);
            kmsg_wr_nstr(w, flex, p->error_message);
            kw_tags(w, flex);
        }
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}
