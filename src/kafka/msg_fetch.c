/* Fetch (key 1), versions 4-13 (FetchRequest/Response.json; flexible from v12; v12 adds each
 * partition's LastFetchedEpoch; v13 names topics by id instead of by name, in the request, its
 * forgotten topics and the response).
 *
 * Response records are not held in the struct: the encoder writes the length prefix and lets
 * the partition's write_records callback append exactly that many bytes (file ranges, so the
 * log goes to the socket with sendfile). The count is CHECKed: a callback that appends a
 * different number of bytes would desynchronise every later field of the response. */
#include "kafka/msg_int.h"

static void decode_partition(struct kreader *r, int16_t v, bool flex, struct fetch_req_partition *p)
{
    p->partition = kr_i32(r);
    p->current_leader_epoch = v >= 9 ? kr_i32(r) : -1;
    p->fetch_offset = kr_i64(r);
    p->last_fetched_epoch = v >= 12 ? kr_i32(r) : -1;
    p->log_start_offset = v >= 5 ? kr_i64(r) : -1;
    p->partition_max_bytes = kr_i32(r);
    kr_tags(r, flex);
}

static void decode_topic(struct kreader *r, int16_t v, bool flex, struct arena *a,
                         struct fetch_req_topic *t)
{
    if (v >= 13) {
        t->topic = (struct kstr){"", 0};
        t->topic_id = kr_uuid(r);
    } else {
        t->topic = kmsg_rd_str(r, flex);
    }
    size_t part_min =
        4 + (v >= 9 ? 4 : 0) + 8 + (v >= 12 ? 4 : 0) + (v >= 5 ? 8 : 0) + 4 + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, part_min);
    t->partitions = kmsg_alloc(a, n, sizeof(*t->partitions));
    t->n_partitions = n;
    for (int32_t i = 0; i < n; i++)
        decode_partition(r, v, flex, &t->partitions[i]);
    kr_tags(r, flex);
}

static void decode_forgotten(struct kreader *r, int16_t v, bool flex, struct arena *a,
                             struct fetch_req_forgotten *f)
{
    if (v >= 13) {
        f->topic = (struct kstr){"", 0};
        f->topic_id = kr_uuid(r);
    } else {
        f->topic = kmsg_rd_str(r, flex);
    }
    f->partitions = kmsg_rd_i32s(r, flex, a, false, &f->n_partitions);
    kr_tags(r, flex);
}

int kmsg_decode_fetch(struct kreader *r, int16_t v, struct arena *a, struct fetch_req *out)
{
    if (!kmsg_version_ok(KAPI_FETCH, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_FETCH, v);
    *out = (struct fetch_req){
        .max_bytes = INT32_MAX,
        .session_epoch = -1,
        .rack_id = {"", 0},
    };
    out->replica_id = kr_i32(r);
    out->max_wait_ms = kr_i32(r);
    out->min_bytes = kr_i32(r);
    if (v >= 3)
        out->max_bytes = kr_i32(r);
    if (v >= 4)
        out->isolation_level = kr_i8(r);
    if (v >= 7) {
        out->session_id = kr_i32(r);
        out->session_epoch = kr_i32(r);
    }
    size_t topic_min =
        (v >= 13 ? 16 : kmsg_min_str(flex)) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, topic_min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++)
        decode_topic(r, v, flex, a, &out->topics[i]);
    if (v >= 7) {
        int32_t nf = kmsg_rd_array(r, flex, topic_min);
        out->forgotten = kmsg_alloc(a, nf, sizeof(*out->forgotten));
        out->n_forgotten = nf;
        for (int32_t i = 0; i < nf; i++)
            decode_forgotten(r, v, flex, a, &out->forgotten[i]);
    }
    if (v >= 11)
        out->rack_id = kmsg_rd_str(r, flex);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

static void encode_records(struct kwriter *w, bool flex, const struct fetch_resp_partition *p)
{
    CHECK(p->records_len >= -1);
    if (flex)
        kw_uvarint(w, (uint32_t)p->records_len + 1);
    else
        kw_i32(w, p->records_len);
    if (p->records_len <= 0)
        return;
    CHECK(p->write_records != NULL);
    size_t start = kw_pos(w);
    p->write_records(w, p->records_data);
    CHECK(kw_pos(w) - start == (size_t)p->records_len);
}

static void encode_partition(struct kwriter *w, int16_t v, bool flex,
                             const struct fetch_resp_partition *p)
{
    kw_i32(w, p->partition_index);
    kw_error_code(w, p->error_code);
    kw_i64(w, p->high_watermark);
    if (v >= 4)
        kw_i64(w, p->last_stable_offset);
    if (v >= 5)
        kw_i64(w, p->log_start_offset);
    if (v >= 4) {
        CHECK(p->n_aborted >= -1);
        kw_array(w, flex, p->n_aborted); /* nullable */
        for (int32_t i = 0; i < p->n_aborted; i++) {
            kw_i64(w, p->aborted[i].producer_id);
            kw_i64(w, p->aborted[i].first_offset);
            kw_tags(w, flex);
        }
    }
    if (v >= 11)
        kw_i32(w, p->preferred_read_replica);
    encode_records(w, flex, p);
    kw_tags(w, flex);
}

void kmsg_encode_fetch(struct kwriter *w, int16_t v, const struct fetch_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_FETCH, v));
    bool flex = kafka_api_flexible(KAPI_FETCH, v);
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    if (v >= 7) {
        kw_error_code(w, resp->error_code);
        kw_i32(w, resp->session_id);
    }
    kmsg_wr_array(w, flex, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct fetch_resp_topic *t = &resp->topics[i];
        if (v >= 13)
            kw_uuid(w, t->topic_id);
        else
            kmsg_wr_str(w, flex, t->topic);
        kmsg_wr_array(w, flex, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++)
            encode_partition(w, v, flex, &t->partitions[j]);
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}
