/* ListOffsets (earliest, latest, max timestamp, by timestamp), DeleteRecords and
 * OffsetForLeaderEpoch. */
#include <string.h>

#include "base/errors.h"
#include "base/log.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "kafka/errors.h"
#include "storage/plog.h"

/* A request's current leader epoch (-1: not given) against the partition's, as Kafka checks
 * it: newer than ours UNKNOWN_LEADER_EPOCH (we are behind), older FENCED_LEADER_EPOCH. */
static int16_t epoch_check(const struct partition *p, int32_t current_leader_epoch)
{
    if (current_leader_epoch >= 0 && current_leader_epoch > p->leader_epoch)
        return KERR_UNKNOWN_LEADER_EPOCH;
    if (current_leader_epoch >= 0 && current_leader_epoch < p->leader_epoch)
        return KERR_FENCED_LEADER_EPOCH;
    return KERR_NONE;
}

int handle_list_offsets(struct request *req)
{
    struct broker *b = req->b;
    struct list_offsets_req lr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_list_offsets(&req->body, v, req->arena, &lr) != 0)
        return -ERR_CORRUPT;
    struct arena *a = req->arena;
    struct list_offsets_resp resp = {0};
    resp.n_topics = lr.n_topics > 0 ? lr.n_topics : 0;
    resp.topics = arena_calloc(a, (size_t)resp.n_topics, sizeof(*resp.topics));
    for (int32_t i = 0; i < resp.n_topics; i++) {
        const struct list_offsets_req_topic *rt = &lr.topics[i];
        struct list_offsets_resp_topic *ot = &resp.topics[i];
        ot->name = rt->name;
        ot->n_partitions = rt->n_partitions > 0 ? rt->n_partitions : 0;
        ot->partitions = arena_calloc(a, (size_t)ot->n_partitions, sizeof(*ot->partitions));
        bool denied = !authz_allows(req, ACL_OP_DESCRIBE, ACL_RESOURCE_TOPIC, rt->name);
        for (int32_t j = 0; j < ot->n_partitions; j++) {
            const struct list_offsets_req_partition *rp = &rt->partitions[j];
            struct list_offsets_resp_partition *op = &ot->partitions[j];
            op->partition_index = rp->partition_index;
            op->timestamp = -1;
            op->offset = -1;
            op->leader_epoch = -1;
            struct partition *p = partition_find(b, rt->name, rp->partition_index);
            if (denied) {
                op->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            if (!p) {
                op->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            int16_t lec = partition_read_check(b, p);
            if (lec != KERR_NONE) {
                op->error_code = lec;
                continue;
            }
            op->error_code = epoch_check(p, rp->current_leader_epoch);
            if (op->error_code != KERR_NONE)
                continue;
            op->leader_epoch = p->leader_epoch;
            if (rp->timestamp == KAFKA_OFFSET_EARLIEST) {
                op->offset = plog_start_offset(p->log);
            } else if (rp->timestamp == KAFKA_OFFSET_LATEST) {
                op->offset = plog_high_watermark(p->log); /* == LSO: no transactions */
            } else if (rp->timestamp < 0 && rp->timestamp != KAFKA_OFFSET_MAX_TIMESTAMP) {
                op->error_code = KERR_INVALID_REQUEST;
            } else { /* the first record at or after the time, or the latest record (-3) */
                int64_t off, ts;
                int rc = rp->timestamp == KAFKA_OFFSET_MAX_TIMESTAMP
                             ? plog_offset_for_max_timestamp(p->log, &off, &ts)
                             : plog_offset_for_timestamp(p->log, rp->timestamp, &off, &ts);
                if (rc != 0) {
                    op->error_code = kafka_error_from_rc(rc);
                } else if (off >= 0 && off < plog_high_watermark(p->log)) {
                    op->offset = off;
                    op->timestamp = ts;
                }
            }
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_list_offsets(&r.w, v, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

int handle_delete_records(struct request *req)
{
    struct broker *b = req->b;
    struct delete_records_req dr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_delete_records(&req->body, v, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct arena *a = req->arena;
    struct delete_records_resp resp = {0};
    resp.n_topics = dr.n_topics > 0 ? dr.n_topics : 0;
    resp.topics = arena_calloc(a, (size_t)resp.n_topics, sizeof(*resp.topics));
    for (int32_t i = 0; i < resp.n_topics; i++) {
        const struct delete_records_req_topic *rt = &dr.topics[i];
        struct delete_records_resp_topic *ot = &resp.topics[i];
        ot->name = rt->name;
        ot->n_partitions = rt->n_partitions > 0 ? rt->n_partitions : 0;
        ot->partitions = arena_calloc(a, (size_t)ot->n_partitions, sizeof(*ot->partitions));
        bool denied = !authz_allows(req, ACL_OP_DELETE, ACL_RESOURCE_TOPIC, rt->name);
        for (int32_t j = 0; j < ot->n_partitions; j++) {
            const struct delete_records_req_partition *rp = &rt->partitions[j];
            struct delete_records_resp_partition *op = &ot->partitions[j];
            op->partition_index = rp->partition_index;
            op->low_watermark = -1;
            struct partition *p = partition_find(b, rt->name, rp->partition_index);
            if (denied) {
                op->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            if (!p) {
                op->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            int16_t lec = partition_leader_check(b, p);
            if (lec != KERR_NONE) {
                op->error_code = lec;
                continue;
            }
            int64_t hw = plog_high_watermark(p->log);
            int64_t target = rp->offset == -1 ? hw : rp->offset;
            if (target < 0 || target > hw) {
                op->error_code = KERR_OFFSET_OUT_OF_RANGE;
                op->low_watermark = plog_start_offset(p->log);
                continue;
            }
            if (target > plog_start_offset(p->log)) {
                int rc = partition_truncate_prefix(b, p, target);
                if (rc != 0) {
                    op->error_code = KERR_KAFKA_STORAGE_ERROR;
                    log_error("delete_records_failed", "topic=%s partition=%d error=\"%s\"",
                              p->topic->name, p->index, err_str(rc));
                    continue;
                }
                log_info("records_deleted", "topic=%s partition=%d log_start_offset=%lld",
                         p->topic->name, p->index, (long long)plog_start_offset(p->log));
            }
            op->low_watermark = plog_start_offset(p->log);
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_delete_records(&r.w, v, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

/* Kafka's answer for epoch e from a leader-epoch cache (LeaderEpochFileCache.endOffsetFor):
 * the latest epoch itself ends at LEO; an epoch below the first ends where the first starts;
 * any other ends where the next larger epoch starts, reported as the largest epoch <= e; an
 * epoch above the latest, or any epoch of an empty cache, is undefined (-1, -1). */
static void epoch_end(const struct plog *log, int32_t e, int32_t *epoch, int64_t *end)
{
    *epoch = -1;
    *end = -1;
    size_t n = plog_epoch_count(log);
    if (n == 0 || e < 0)
        return;
    int32_t last;
    int64_t last_start;
    plog_epoch_at(log, n - 1, &last, &last_start);
    if (e == last) {
        *epoch = e;
        *end = plog_end_offset(log);
        return;
    }
    if (e > last)
        return;
    int32_t floor = e; /* below the first: the epoch asked for, as Kafka reports it */
    for (size_t i = 0; i < n; i++) {
        int32_t ep;
        int64_t start;
        plog_epoch_at(log, i, &ep, &start);
        if (ep > e) {
            *epoch = floor;
            *end = start;
            return;
        }
        floor = ep;
    }
}

/* OffsetForLeaderEpoch (KIP-101, KIP-320): where each epoch (Raft term) asked for ends in the
 * leader's log, from the plog's leader-epoch cache; the current leader epoch, when given, is
 * checked as ListOffsets checks it. */
int handle_offset_for_leader_epoch(struct request *req)
{
    struct broker *b = req->b;
    struct offset_for_leader_epoch_req er;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_offset_for_leader_epoch(&req->body, v, req->arena, &er) != 0)
        return -ERR_CORRUPT;
    struct arena *a = req->arena;
    struct offset_for_leader_epoch_resp resp = {0};
    resp.n_topics = er.n_topics;
    resp.topics = arena_calloc(a, (size_t)(er.n_topics ? er.n_topics : 1), sizeof(*resp.topics));
    for (int32_t i = 0; i < er.n_topics; i++) {
        const struct offset_for_leader_epoch_req_topic *rt = &er.topics[i];
        struct offset_for_leader_epoch_resp_topic *ot = &resp.topics[i];
        ot->topic = rt->topic;
        ot->n_partitions = rt->n_partitions;
        ot->partitions = arena_calloc(a, (size_t)(rt->n_partitions ? rt->n_partitions : 1),
                                      sizeof(*ot->partitions));
        bool denied = !authz_allows(req, ACL_OP_DESCRIBE, ACL_RESOURCE_TOPIC, rt->topic);
        for (int32_t j = 0; j < rt->n_partitions; j++) {
            const struct offset_for_leader_epoch_req_partition *rp = &rt->partitions[j];
            struct offset_for_leader_epoch_resp_partition *op = &ot->partitions[j];
            *op = (struct offset_for_leader_epoch_resp_partition){
                .partition = rp->partition, .leader_epoch = -1, .end_offset = -1};
            struct partition *p = partition_find(b, rt->topic, rp->partition);
            if (denied) {
                op->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            if (!p) {
                op->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
                continue;
            }
            int16_t lec = partition_leader_check(b, p);
            if (lec != KERR_NONE) {
                op->error_code = lec;
                continue;
            }
            op->error_code = epoch_check(p, rp->current_leader_epoch);
            if (op->error_code != KERR_NONE)
                continue;
            epoch_end(p->log, rp->leader_epoch, &op->leader_epoch, &op->end_offset);
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_offset_for_leader_epoch(&r.w, v, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}
