/* ListOffsets (key 2), versions 1-7 (ListOffsetsRequest/Response.json; flexible from v6; v7
 * only allows the MAX_TIMESTAMP query, -3). v0 (MaxNumOffsets, OldStyleOffsets) is outside our
 * range. */
#include "kafka/msg_int.h"

static void decode_topic(struct kreader *r, int16_t v, bool flex, struct arena *a,
                         struct list_offsets_req_topic *t)
{
    t->name = kmsg_rd_str(r, flex);
    size_t part_min = 4 + (v >= 4 ? 4 : 0) + 8 + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, part_min);
    t->partitions = kmsg_alloc(a, n, sizeof(*t->partitions));
    t->n_partitions = n;
    for (int32_t i = 0; i < n; i++) {
        struct list_offsets_req_partition *p = &t->partitions[i];
        p->partition_index = kr_i32(r);
        p->current_leader_epoch = v >= 4 ? kr_i32(r) : -1;
        p->timestamp = kr_i64(r);
        kr_tags(r, flex);
    }
    kr_tags(r, flex);
}

int kmsg_decode_list_offsets(struct kreader *r, int16_t v, struct arena *a,
                             struct list_offsets_req *out)
{
    if (!kmsg_version_ok(KAPI_LIST_OFFSETS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_LIST_OFFSETS, v);
    *out = (struct list_offsets_req){0};
    out->replica_id = kr_i32(r);
    if (v >= 2)
        out->isolation_level = kr_i8(r);
    size_t topic_min = kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, topic_min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++)
        decode_topic(r, v, flex, a, &out->topics[i]);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_list_offsets(struct kwriter *w, int16_t v, const struct list_offsets_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_LIST_OFFSETS, v));
    bool flex = kafka_api_flexible(KAPI_LIST_OFFSETS, v);
    if (v >= 2)
        kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct list_offsets_resp_topic *t = &resp->topics[i];
        kmsg_wr_str(w, flex, t->name);
        kmsg_wr_array(w, flex, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct list_offsets_resp_partition *p = &t->partitions[j];
            kw_i32(w, p->partition_index);
            kw_error_code(w, p->error_code);
            kw_i64(w, p->timestamp);
            kw_i64(w, p->offset);
            if (v >= 4)
                kw_i32(w, p->leader_epoch);
            kw_tags(w, flex);
        }
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}
