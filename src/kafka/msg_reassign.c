/* AlterPartitionReassignments (key 45) v0 and ListPartitionReassignments (key 46) v0, both
 * flexible from v0 (AlterPartitionReassignmentsRequest/Response.json,
 * ListPartitionReassignmentsRequest/Response.json; KIP-455). A partition's Replicas of null in
 * AlterPartitionReassignments cancels the reassignment in progress (n_replicas -1 here). */
#include "kafka/msg_int.h"

int kmsg_decode_alter_reassignments(struct kreader *r, int16_t v, struct arena *a,
                                    struct alter_reassign_req *out)
{
    if (!kmsg_version_ok(KAPI_ALTER_PARTITION_REASSIGNMENTS, v))
        return -ERR_UNSUPPORTED;
    *out = (struct alter_reassign_req){0};
    out->timeout_ms = kr_i32(r);
    size_t part_min = 4 + kmsg_min_array(true) + kmsg_min_tags(true);
    size_t topic_min = kmsg_min_str(true) + kmsg_min_array(true) + kmsg_min_tags(true);
    int32_t n = kmsg_rd_array(r, true, topic_min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++) {
        struct alter_reassign_req_topic *t = &out->topics[i];
        t->name = kmsg_rd_str(r, true);
        int32_t np = kmsg_rd_array(r, true, part_min);
        t->partitions = kmsg_alloc(a, np, sizeof(*t->partitions));
        t->n_partitions = np;
        for (int32_t j = 0; j < np; j++) {
            struct alter_reassign_req_partition *p = &t->partitions[j];
            p->partition_index = kr_i32(r);
            p->replicas = kmsg_rd_i32s(r, true, a, true, &p->n_replicas); /* null: cancel */
            kr_tags(r, true);
        }
        kr_tags(r, true);
    }
    kr_tags(r, true);
    return kmsg_rd_done(r);
}

void kmsg_encode_alter_reassignments(struct kwriter *w, int16_t v,
                                     const struct alter_reassign_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_ALTER_PARTITION_REASSIGNMENTS, v));
    kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kmsg_wr_nstr(w, true, resp->error_message);
    kmsg_wr_array(w, true, resp->n_responses);
    for (int32_t i = 0; i < resp->n_responses; i++) {
        const struct alter_reassign_resp_topic *t = &resp->responses[i];
        kmsg_wr_str(w, true, t->name);
        kmsg_wr_array(w, true, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct alter_reassign_resp_partition *p = &t->partitions[j];
            kw_i32(w, p->partition_index);
            kw_error_code(w, p->error_code);
            kmsg_wr_nstr(w, true, p->error_message);
            kw_tags(w, true);
        }
        kw_tags(w, true);
    }
    kw_tags(w, true);
}

int kmsg_decode_list_reassignments(struct kreader *r, int16_t v, struct arena *a,
                                   struct list_reassign_req *out)
{
    if (!kmsg_version_ok(KAPI_LIST_PARTITION_REASSIGNMENTS, v))
        return -ERR_UNSUPPORTED;
    *out = (struct list_reassign_req){0};
    out->timeout_ms = kr_i32(r);
    size_t topic_min = kmsg_min_str(true) + kmsg_min_array(true) + kmsg_min_tags(true);
    int32_t n = kr_array(r, true, topic_min); /* null: every reassignment */
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++) {
        struct list_reassign_req_topic *t = &out->topics[i];
        t->name = kmsg_rd_str(r, true);
        t->partitions = kmsg_rd_i32s(r, true, a, false, &t->n_partitions);
        kr_tags(r, true);
    }
    kr_tags(r, true);
    return kmsg_rd_done(r);
}

void kmsg_encode_list_reassignments(struct kwriter *w, int16_t v,
                                    const struct list_reassign_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_LIST_PARTITION_REASSIGNMENTS, v));
    kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kmsg_wr_nstr(w, true, resp->error_message);
    kmsg_wr_array(w, true, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct list_reassign_resp_topic *t = &resp->topics[i];
        kmsg_wr_str(w, true, t->name);
        kmsg_wr_array(w, true, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct list_reassign_resp_partition *p = &t->partitions[j];
            kw_i32(w, p->partition_index);
            kmsg_wr_i32s(w, true, p->replicas, p->n_replicas);
            kmsg_wr_i32s(w, true, p->adding, p->n_adding);
            kmsg_wr_i32s(w, true, p->removing, p->n_removing);
            kw_tags(w, true);
        }
        kw_tags(w, true);
    }
    kw_tags(w, true);
}
