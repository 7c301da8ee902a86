/* Produce (key 0), versions 0-9 (ProduceRequest/Response.json; flexible from v9; v8 adds
 * per-batch RecordErrors and an ErrorMessage to each partition's answer).
 *
 * The records of each partition stay a slice of the request buffer: the broker validates and
 * writes those bytes as they are. v0-2 decode (the layout only lacks transactional_id) so the
 * broker can answer them with UNSUPPORTED_VERSION per partition. */
#include "kafka/msg_int.h"

static void decode_partition(struct kreader *r, bool flex, struct produce_req_partition *p)
{
    p->index = kr_i32(r);
    p->records = kr_bytes(r, flex); /* nullable */
    kr_tags(r, flex);
}

static void decode_topic(struct kreader *r, bool flex, struct arena *a, struct produce_req_topic *t)
{
    t->name = kmsg_rd_str(r, flex);
    size_t part_min = 4 + kmsg_min_bytes(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, part_min);
    t->partitions = kmsg_alloc(a, n, sizeof(*t->partitions));
    t->n_partitions = n;
    for (int32_t i = 0; i < n; i++)
        decode_partition(r, flex, &t->partitions[i]);
    kr_tags(r, flex);
}

int kmsg_decode_produce(struct kreader *r, int16_t v, struct arena *a, struct produce_req *out)
{
    if (!kmsg_version_ok(KAPI_PRODUCE, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_PRODUCE, v);
    *out = (struct produce_req){.transactional_id = KSTR_NULL};
    if (v >= 3)
        out->transactional_id = kr_str(r, flex); /* nullable */
    out->acks = kr_i16(r);
    out->timeout_ms = kr_i32(r);
    size_t topic_min = kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, topic_min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++)
        decode_topic(r, flex, a, &out->topics[i]);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_produce(struct kwriter *w, int16_t v, const struct produce_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_PRODUCE, v));
    bool flex = kafka_api_flexible(KAPI_PRODUCE, v);
    kmsg_wr_array(w, flex, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct produce_resp_topic *t = &resp->topics[i];
        kmsg_wr_str(w, flex, t->name);
        kmsg_wr_array(w, flex, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct produce_resp_partition *p = &t->partitions[j];
            kw_i32(w, p->index);
            kw_error_code(w, p->error_code);
            kw_i64(w, p->base_offset);
            if (v >= 2)
                kw_i64(w, p->log_append_time_ms);
            if (v >= 5)
                kw_i64(w, p->log_start_offset);
            if (v >= 8) {
                kmsg_wr_array(w, flex, p->n_record_errors);
                for (int32_t k = 0; k < p->n_record_errors; k++) {
                    kw_i32(w, p->record_errors[k].batch_index);
                    kmsg_wr_nstr(w, flex, p->record_errors[k].batch_index_error_message);
                    kw_tags(w, flex);
                }
                kmsg_wr_nstr(w, flex, p->error_message);
            }
            kw_tags(w, flex);
        }
        kw_tags(w, flex);
    }
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    kw_tags(w, flex);
}
