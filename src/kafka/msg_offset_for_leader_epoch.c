/* OffsetForLeaderEpoch (key 23), versions 0-4 (OffsetForLeaderEpochRequest/Response.json; v1
 * answers the leader epoch found, v2 adds CurrentLeaderEpoch and ThrottleTimeMs, v3 ReplicaId,
 * v4 is the first flexible version). */
#include "kafka/msg_int.h"

static void decode_topic(struct kreader *r, int16_t v, bool flex, struct arena *a,
                         struct offset_for_leader_epoch_req_topic *t)
{
    t->topic = kmsg_rd_str(r, flex);
    size_t part_min = 4 + (v >= 2 ? 4 : 0) + 4 + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, part_min);
    t->partitions = kmsg_alloc(a, n, sizeof(*t->partitions));
    t->n_partitions = n;
    for (int32_t i = 0; i < n; i++) {
        struct offset_for_leader_epoch_req_partition *p = &t->partitions[i];
        p->partition = kr_i32(r);
        p->current_leader_epoch = v >= 2 ? kr_i32(r) : -1;
        p->leader_epoch = kr_i32(r);
        kr_tags(r, flex);
    }
    kr_tags(r, flex);
}

int kmsg_decode_offset_for_leader_epoch(struct kreader *r, int16_t v, struct arena *a,
                                        struct offset_for_leader_epoch_req *out)
{
    if (!kmsg_version_ok(KAPI_OFFSET_FOR_LEADER_EPOCH, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_OFFSET_FOR_LEADER_EPOCH, v);
    *out = (struct offset_for_leader_epoch_req){.replica_id = -2};
    if (v >= 3)
        out->replica_id = kr_i32(r);
    size_t topic_min = kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, topic_min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++)
        decode_topic(r, v, flex, a, &out->topics[i]);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_offset_for_leader_epoch(struct kwriter *w, int16_t v,
                                         const struct offset_for_leader_epoch_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_OFFSET_FOR_LEADER_EPOCH, v));
    bool flex = kafka_api_flexible(KAPI_OFFSET_FOR_LEADER_EPOCH, v);
    if (v >= 2)
        kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct offset_for_leader_epoch_resp_topic *t = &resp->topics[i];
        kmsg_wr_str(w, flex, t->topic);
        kmsg_wr_array(w, flex, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct offset_for_leader_epoch_resp_partition *p = &t->partitions[j];
            kw_error_code(w, p->error_code);
            kw_i32(w, p->partition);
            if (v >= 1)
                kw_i32(w, p->leader_epoch);
            kw_i64(w, p->end_offset);
            kw_tags(w, flex);
        }
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}
