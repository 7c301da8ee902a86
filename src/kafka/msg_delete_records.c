/* DeleteRecords (key 21), versions 0-2 (DeleteRecordsRequest/Response.json; flexible from v2). */
#include "kafka/msg_int.h"

static void decode_topic(struct kreader *r, bool flex, struct arena *a,
                         struct delete_records_req_topic *t)
{
    t->name = kmsg_rd_str(r, flex);
    int32_t n = kmsg_rd_array(r, flex, 4 + 8 + kmsg_min_tags(flex));
    t->partitions = kmsg_alloc(a, n, sizeof(*t->partitions));
    t->n_partitions = n;
    for (int32_t i = 0; i < n; i++) {
        t->partitions[i].partition_index = kr_i32(r);
        t->partitions[i].offset = kr_i64(r);
        kr_tags(r, flex);
    }
    kr_tags(r, flex);
}

int kmsg_decode_delete_records(struct kreader *r, int16_t v, struct arena *a,
                               struct delete_records_req *out)
{
    if (!kmsg_version_ok(KAPI_DELETE_RECORDS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_DELETE_RECORDS, v);
    *out = (struct delete_records_req){0};
    size_t topic_min = kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, topic_min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++)
        decode_topic(r, flex, a, &out->topics[i]);
    out->timeout_ms = kr_i32(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_delete_records(struct kwriter *w, int16_t v,
                                const struct delete_records_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DELETE_RECORDS, v));
    bool flex = kafka_api_flexible(KAPI_DELETE_RECORDS, v);
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct delete_records_resp_topic *t = &resp->topics[i];
        kmsg_wr_str(w, flex, t->name);
        kmsg_wr_array(w, flex, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct delete_records_resp_partition *p = &t->partitions[j];
            kw_i32(w, p->partition_index);
            kw_i64(w, p->low_watermark);
            kw_error_code(w, p->error_code);
            kw_tags(w, flex);
        }
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}
