/* Produce: validate each partition's record batch, propose it to the partition's Raft group,
 * answer by acks.
 *
 * Every partition is a Raft group (replication/replica.h); this broker must lead it. acks=0: no
 * response (the connection is closed if a partition failed, as Kafka does, so the client
 * notices). acks=1: answered once the batch is in the leader's log. acks=-1 (all): answered
 * once the batch is committed, which needs it durable on a majority of the voters: for a group
 * whose only voter is this node, durable here (fdatasync by the flusher, asked for at once).
 *
 * Visibility (the high watermark, the replica's): a group of one voter commits acks=0/1 data at
 * once (visible at once, synced by the flush policy: log.flush.interval.*, flush.ms/messages),
 * and acks=all data once durable, so consumers never see a write that a crash could still take
 * back when its producer asked for durability. (Redpanda does the same: visibility is bounded
 * by the first unflushed acks=all batch.) A group of several voters commits on a durable
 * majority, whatever the acks.
 *
 * A produce_op holds an acks=all request until every partition's wait is settled by the commit
 * (produce_raft_commit), failed (storage error, partition deleted, leadership lost) or timed
 * out (timeout_ms -> REQUEST_TIMED_OUT).
 *
 * Invariants:
 *  1. A partition's acks_waiters are in increasing end_offset order (proposals are sequential),
 *     so a commit settles a prefix of them.
 *  2. op->pending == number of op->waits still linked; the response goes out exactly once,
 *     when it reaches zero, and the op is freed then.
 *  3. Batches are written as received except baseOffset, partitionLeaderEpoch and, for
 *     LogAppendTime topics, maxTimestamp + the timestamp-type bit (then the CRC is recomputed). */
#include <errno.h>
#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "broker/schemas.h"
#include "broker/quotas.h"
#include "broker/producers.h"
#include "kafka/batch.h"
#include "kafka/errors.h"
#include "replication/host.h"
#include "replication/replica.h"
#include "storage/plog.h"

/* Smallest cap on a decompressed records section while validating a compressed batch (the cap
 * is 64 x max.message.bytes when that is larger): bounds what a decompression bomb costs. */
#define DECOMPRESSED_MIN_CAP (64u << 20)

struct produce_op;

struct acks_wait {
    struct list_node node; /* in partition->acks_waiters */
    int64_t base_offset;   /* first offset of the batch: HW stops here */
    int64_t end_offset;    /* durable offset that satisfies this wait */
    /* called once, after unlinking, with KERR_NONE or the failure */
    void (*done)(struct acks_wait *w, int16_t error_code);
    struct produce_op *op;                 /* produce waits: the request */
    struct produce_resp_partition *result; /* produce waits: where the outcome goes */
    int64_t raft_last;                     /* the entry proposed (last, term); */
    int64_t raft_term;                     /* term -1: any outcome of commit >= last is fine */
};

struct produce_op {
    struct broker *b;
    struct conn_slot *slot;
    struct kreq_header hdr;
    struct arena arena; /* the response and the waits live here */
    struct produce_resp resp;
    struct acks_wait *waits; /* n_waits entries, linked while pending */
    int n_waits;
    int pending;
    struct reactor_timer timer;
};

static void op_send_and_free(struct produce_op *op)
{
    struct response resp;
    response_begin(&resp, &op->hdr);
    kmsg_encode_produce(&resp.w, op->hdr.api_version, &op->resp);
    response_send_after(op->b, &resp, op->slot, op->resp.throttle_time_ms);
    reactor_timer_stop(op->b->r, &op->timer);
    arena_destroy(&op->arena);
    mem_free(op);
}

static void wait_done(struct acks_wait *w, int16_t error_code)
{
    list_remove(&w->node);
    w->done(w, error_code);
}

static void produce_wait_done(struct acks_wait *w, int16_t error_code)
{
    if (error_code != KERR_NONE && w->result->error_code == KERR_NONE) {
        w->result->error_code = error_code;
        w->result->base_offset = -1;
    }
    struct produce_op *op = w->op;
    if (--op->pending == 0)
        op_send_and_free(op);
}

static void op_timeout(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct produce_op *op = data;
    int n = op->n_waits;
    for (int i = 0; i < n; i++) {
        struct acks_wait *w = &op->waits[i];
        if (!list_linked(&w->node))
            continue;
        bool last = op->pending == 1;
        wait_done(w, KERR_REQUEST_TIMED_OUT);
        if (last)
            return; /* op freed */
    }
}

void produce_raft_commit(struct partition *p, const struct replica *rp, int64_t commit)
{
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &p->acks_waiters)
    {
        struct acks_wait *w = LIST_ENTRY(n, struct acks_wait, node);
        if (w->end_offset - 1 > commit)
            break;
        int16_t ec = KERR_NONE;
        if (w->raft_term >= 0 &&
            replica_proposal_state(rp, w->raft_last, w->raft_term) != REPLICA_COMMITTED)
            ec = KERR_NOT_LEADER_OR_FOLLOWER; /* another entry committed in its place */
        wait_done(w, ec);
    }
    /* the bytes proposed since everything was visible bound what became so: fine for min_bytes */
    size_t bytes = p->hidden_bytes > 0 ? p->hidden_bytes : 1;
    if (commit + 1 >= plog_end_offset(p->log))
        p->hidden_bytes = 0;
    fetch_notify(p, bytes);
}

void produce_fail_waiters(struct partition *p, int16_t error_code)
{
    produce_fail_waiters_but(p, -1, error_code);
}

void produce_fail_waiters_but(struct partition *p, int64_t term, int16_t error_code)
{
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &p->acks_waiters)
    {
        struct acks_wait *w = LIST_ENTRY(n, struct acks_wait, node);
        if (term < 0 || w->raft_term != term)
            wait_done(w, error_code);
    }
}

static int16_t append_batch(struct request *req, struct partition *p, struct kbytes records,
                            int16_t version, int16_t acks, struct produce_resp_partition *out,
                            bool *duplicate, int64_t *raft_last, int64_t *raft_term,
                            uint8_t **owned);

/* compression.type other than producer: the batch in the topic's codec (*batch and *len
 * replaced by a buffer the caller frees through *owned). Returns a Kafka error code. */
static int16_t recompress(struct broker *b, const struct topic_config *tc, uint8_t **batch,
                          size_t *len, size_t cap, uint8_t **owned)
{
    uint8_t *nb;
    size_t nlen;
    int rc = kbatch_recompress(*batch, *len, tc->compression, cap, &nb, &nlen);
    if (rc == -ERR_TOO_LARGE)
        return KERR_INVALID_RECORD;
    if (rc != 0)
        return kafka_error_from_rc(rc);
    b->recompressed_batches++;
    b->recompressed_bytes_in += *len;
    b->recompressed_bytes_out += nlen;
    if (nlen > (size_t)tc->max_message_bytes) {
        mem_free(nb);
        return KERR_MESSAGE_TOO_LARGE;
    }
    *batch = *owned = nb;
    *len = nlen;
    return KERR_NONE;
}

/* Validates and appends one partition's batch. Returns a Kafka error code; *duplicate tells
 * that the batch was an idempotent producer's resend, answered with the original's offsets
 * and not appended. */
static int16_t append_one(struct request *req, struct partition *p, struct kbytes records,
                          int16_t version, int16_t acks, struct produce_resp_partition *out,
                          bool *duplicate, int64_t *raft_last, int64_t *raft_term)
{
    uint8_t *owned = NULL; /* the batch recompressed (compression.type), else NULL */
    int16_t ec = append_batch(req, p, records, version, acks, out, duplicate, raft_last,
                              raft_term, &owned);
    mem_free(owned);
    return ec;
}

static int16_t append_batch(struct request *req, struct partition *p, struct kbytes records,
                            int16_t version, int16_t acks, struct produce_resp_partition *out,
                            bool *duplicate, int64_t *raft_last, int64_t *raft_term,
                            uint8_t **owned)
{
    *duplicate = false;
    struct broker *b = req->b;
    const struct topic_config *tc = &p->topic->cfg;
    int16_t lec = partition_leader_check(b, p);
    if (lec != KERR_NONE)
        return lec;
    if (records.len < KBATCH_HEADER_SIZE)
        return KERR_CORRUPT_MESSAGE;
    uint8_t *batch = (uint8_t *)records.p; /* the frame is ours to rewrite in place */
    size_t len = (size_t)records.len;
    int64_t base;
    int32_t blen;
    kbatch_peek(batch, &base, &blen);
    if (blen < 0 || (size_t)blen + KBATCH_LOG_OVERHEAD > len)
        return KERR_CORRUPT_MESSAGE;
    if ((size_t)blen + KBATCH_LOG_OVERHEAD < len)
        return KERR_INVALID_RECORD; /* v3+: exactly one batch per partition */
    if (len > (size_t)tc->max_message_bytes)
        return KERR_MESSAGE_TOO_LARGE;
    struct kbatch_header h;
    kbatch_parse_header(batch, &h);
    if (h.magic != KBATCH_MAGIC)
        return KERR_INVALID_RECORD;
    if (h.attributes & (KBATCH_ATTR_CONTROL | KBATCH_ATTR_TRANSACTIONAL))
        return KERR_INVALID_RECORD; /* no transactions; control batches are the broker's */
    if (kbatch_compression(&h) == KCOMPRESSION_ZSTD && version < 7)
        return KERR_UNSUPPORTED_COMPRESSION_TYPE;
    size_t cap = (size_t)tc->max_message_bytes * 64;
    if (cap < DECOMPRESSED_MIN_CAP)
        cap = DECOMPRESSED_MIN_CAP;
    int rc = kbatch_validate(batch, len, true, true, cap);
    if (rc == -ERR_TOO_LARGE)
        return KERR_INVALID_RECORD;
    if (rc != 0)
        return kafka_error_from_rc(rc);
    if (plog_fenced(p->log))
        return KERR_KAFKA_STORAGE_ERROR;
    if (tc->key_schema_validation || tc->value_schema_validation) {
        char why[300];
        if (!schemas_validate_batch(b, p->topic->name, batch, len, tc->key_schema_validation,
                                    tc->value_schema_validation, why, sizeof why)) {
            out->error_message = kstr_c(arena_strndup(req->arena, why, strlen(why)));
            return KERR_INVALID_RECORD;
        }
    }
    if (tc->compression != TOPIC_COMPRESSION_PRODUCER &&
        kbatch_compression(&h) != tc->compression) {
        int16_t rec = recompress(b, tc, &batch, &len, cap, owned);
        if (rec != KERR_NONE)
            return rec;
        kbatch_parse_header(batch, &h);
    }

    int64_t now = time_wall_ms();
    out->log_append_time_ms = -1;
    int16_t ec = producers_before_append(p, &h, now, out, duplicate);
    if (ec != KERR_NONE || *duplicate)
        return ec;
    if (tc->log_append_time) {
        uint8_t *ts = batch + KBATCH_OFF_MAX_TIMESTAMP;
        for (int i = 0; i < 8; i++)
            ts[i] = (uint8_t)((uint64_t)now >> (56 - 8 * i));
        batch[KBATCH_OFF_ATTRIBUTES + 1] |= KBATCH_ATTR_LOG_APPEND_TIME;
        kbatch_update_crc(batch, len);
        out->log_append_time_ms = now;
    }
    int64_t first;
    struct host_group *g = p->group;
    if (!g)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    rc = host_propose(g, batch, len, h.last_offset_delta + 1, acks == -1, &first, raft_last,
                      raft_term);
    if (rc == -ERR_NOT_LEADER)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    if (rc == -ERR_INVALID)
        return KERR_INVALID_RECORD;
    if (rc != 0) {
        if (rc == -ENOSPC)
            log_warn("produce_refused", "topic=%s partition=%d reason=\"disk full\"",
                     p->topic->name, p->index);
        else
            log_error("append_failed", "topic=%s partition=%d error=\"%s\"", p->topic->name,
                      p->index, err_str(rc));
        return KERR_KAFKA_STORAGE_ERROR;
    }
    out->base_offset = first;
    out->log_start_offset = plog_start_offset(p->log);
    p->records_in += (uint64_t)h.records_count;
    p->bytes_in += len;
    p->hidden_bytes += len;
    if (acks != -1)
        flush_policy_appended(p, h.records_count);
    return KERR_NONE;
}

int handle_produce(struct request *req)
{
    struct broker *b = req->b;
    struct produce_req pr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_produce(&req->body, v, req->arena, &pr) != 0)
        return -ERR_CORRUPT;

    int16_t acks = pr.acks;
    struct produce_op *op = NULL;
    struct arena *ra = req->arena;
    if (acks == -1) {
        op = mem_calloc(1, sizeof(*op));
        op->b = b;
        op->hdr = req->hdr;
        op->hdr.client_id = KSTR_NULL; /* points into the frame */
        arena_init(&op->arena, 4096);
        reactor_timer_init(&op->timer, op_timeout, op);
        ra = &op->arena;
    }

    int total_parts = 0;
    for (int32_t i = 0; i < pr.n_topics; i++)
        total_parts += pr.topics[i].n_partitions > 0 ? pr.topics[i].n_partitions : 0;
    struct produce_resp *resp = op ? &op->resp : arena_calloc(ra, 1, sizeof(*resp));
    resp->n_topics = pr.n_topics > 0 ? pr.n_topics : 0;
    resp->topics = arena_calloc(ra, (size_t)resp->n_topics, sizeof(*resp->topics));
    if (op)
        op->waits = arena_calloc(ra, (size_t)total_parts, sizeof(*op->waits));

    bool any_error = false;
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct produce_req_topic *rt = &pr.topics[i];
        struct produce_resp_topic *ot = &resp->topics[i];
        ot->name = rt->name;
        if (op && rt->name.len > 0)
            ot->name =
                (struct kstr){arena_strndup(ra, rt->name.p, (size_t)rt->name.len), rt->name.len};
        ot->n_partitions = rt->n_partitions > 0 ? rt->n_partitions : 0;
        ot->partitions = arena_calloc(ra, (size_t)ot->n_partitions, sizeof(*ot->partitions));
        struct topic *t = topic_find(b, rt->name);
        bool denied = !authz_allows(req, ACL_OP_WRITE, ACL_RESOURCE_TOPIC, rt->name);
        for (int32_t j = 0; j < ot->n_partitions; j++) {
            const struct produce_req_partition *rp = &rt->partitions[j];
            struct produce_resp_partition *out = &ot->partitions[j];
            out->index = rp->index;
            out->base_offset = -1;
            out->log_append_time_ms = -1;
            out->log_start_offset = -1;
            out->error_message = KSTR_NULL;
            int16_t ec;
            bool dup = false;
            int64_t raft_last = -1, raft_term = -1;
            struct partition *p = NULL;
            if (v < 3)
                ec = KERR_UNSUPPORTED_VERSION;
            else if (pr.transactional_id.len >= 0)
                ec = KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
            else if (acks != 0 && acks != 1 && acks != -1)
                ec = KERR_INVALID_REQUIRED_ACKS;
            else if (denied)
                ec = KERR_TOPIC_AUTHORIZATION_FAILED;
            else if (!t || rp->index < 0 || rp->index >= t->n_parts)
                ec = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            else if (t->internal)
                ec = KERR_INVALID_TOPIC_EXCEPTION; /* only the broker writes __consumer_offsets */
            else
                ec = append_one(req, p = t->parts[rp->index], rp->records, v, acks, out, &dup,
                                &raft_last, &raft_term);
            out->error_code = ec;
            if (out->error_message.len > 0 && ra != req->arena) /* outlive the request */
                out->error_message = (struct kstr){
                    arena_strndup(ra, out->error_message.p, (size_t)out->error_message.len),
                    out->error_message.len};
            if (ec != KERR_NONE) {
                any_error = true;
                out->base_offset = -1;
                continue;
            }
            if (op) {
                /* the replica makes the entry durable; its commit settles the wait */
                const struct replica *rpl = host_group_replica(p->group);
                int64_t commit = raft_commit(replica_raft(rpl));
                int64_t last = dup ? plog_end_offset(p->log) - 1 : raft_last;
                if (last <= commit) { /* decided already (a duplicate of a committed batch) */
                    if (!dup &&
                        replica_proposal_state(rpl, raft_last, raft_term) != REPLICA_COMMITTED) {
                        out->error_code = KERR_NOT_LEADER_OR_FOLLOWER;
                        out->base_offset = -1;
                    }
                    continue;
                }
                struct acks_wait *w = &op->waits[op->n_waits++];
                w->op = op;
                w->done = produce_wait_done;
                w->end_offset = last + 1;
                w->base_offset = dup ? w->end_offset : out->base_offset;
                w->result = out;
                w->raft_last = last;
                w->raft_term = dup ? -1 : raft_term; /* a duplicate: what precedes it commits */
                list_push_back(&p->acks_waiters, &w->node);
                op->pending++;
                p->unflushed_records = 0; /* the sync it asks for covers acks=0/1 data too */
                p->last_flush_ms = time_mono_ms();
            }
        }
    }

    if (acks == 0) {
        if (any_error)
            conn_close(req->conn);
        return 0;
    }
    uint64_t bytes = 0; /* what producer_byte_rate counts: the batches sent */
    for (int32_t i = 0; i < pr.n_topics; i++)
        for (int32_t j = 0; j < pr.topics[i].n_partitions; j++)
            bytes += pr.topics[i].partitions[j].records.len > 0
                         ? (uint64_t)pr.topics[i].partitions[j].records.len
                         : 0;
    resp->throttle_time_ms = quota_account(req, QUOTA_PRODUCE, bytes);
    struct conn_slot *slot = conn_slot_reserve(req->conn);
    if (!op) {
        struct response r;
        response_begin(&r, &req->hdr);
        kmsg_encode_produce(&r.w, v, resp);
        response_send_after(b, &r, slot, resp->throttle_time_ms);
        return 0;
    }
    op->slot = slot;
    if (op->pending == 0) {
        op_send_and_free(op);
        return 0;
    }
    reactor_timer_start(b->r, &op->timer, pr.timeout_ms > 0 ? pr.timeout_ms : 0);
    return 0;
}

/* ---- flush policy for acks=0/1 data: flush.messages and flush.ms ---- */

void flush_policy_appended(struct partition *p, int64_t n)
{
    p->unflushed_records += n;
    if (p->unflushed_records >= p->topic->cfg.flush_messages) {
        p->unflushed_records = 0;
        p->last_flush_ms = time_mono_ms();
        plog_flush(p->log);
    }
}

void flush_policy_tick(struct broker *b)
{
    int64_t now = time_mono_ms();
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&b->topics, &it, &k, &v)) {
        struct topic *t = v;
        for (int32_t i = 0; i < t->n_parts; i++) {
            struct partition *p = t->parts[i];
            if (p->unflushed_records > 0 && now - p->last_flush_ms >= t->cfg.flush_ms) {
                p->unflushed_records = 0;
                p->last_flush_ms = now;
                plog_flush(p->log);
            }
        }
    }
}

/* ---- appends made by the broker itself (group metadata, committed offsets) ---- */

struct internal_wait {
    struct acks_wait w;
    int64_t base_offset;
    internal_append_cb cb;
    void *arg;
};

static void internal_wait_done(struct acks_wait *w, int16_t error_code)
{
    struct internal_wait *iw = (struct internal_wait *)w;
    iw->cb(iw->arg, error_code == KERR_NONE ? 0 : -ERR_FENCED, iw->base_offset);
    mem_free(iw);
}

int broker_internal_append(struct broker *b, struct partition *p, uint8_t *batch, size_t len,
                           internal_append_cb cb, void *arg)
{
    int64_t first, raft_last = -1, raft_term = -1;
    struct kbatch_header h; /* appending rewrites only the base offset and epoch */
    kbatch_parse_header(batch, &h);
    if (partition_leader_check(b, p) != KERR_NONE) /* also: no local Raft group */
        return -ERR_NOT_LEADER;
    int rc = host_propose(p->group, batch, len, h.last_offset_delta + 1, true, &first, &raft_last,
                          &raft_term);
    if (rc != 0)
        return rc;
    p->records_in += (uint64_t)h.records_count;
    p->bytes_in += len;
    p->hidden_bytes += len;
    struct internal_wait *iw = mem_calloc(1, sizeof(*iw));
    iw->w.base_offset = first;
    iw->w.end_offset = raft_last + 1;
    iw->w.raft_last = raft_last;
    iw->w.raft_term = raft_term;
    iw->w.done = internal_wait_done;
    iw->base_offset = first;
    iw->cb = cb;
    iw->arg = arg;
    list_push_back(&p->acks_waiters, &iw->w.node);
    return 0; /* the replica makes it durable; its commit settles the wait */
}
