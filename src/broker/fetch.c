/* Fetch: read committed batches (below HW) and send them as file ranges (sendfile), with
 * long-polling when less than min_bytes is available.
 *
 * States of a fetch: answered at once (enough data, an error, or max_wait_ms == 0), or PARKED
 * as a fetch_op watching its partitions until: enough bytes were appended (fetch_notify), the
 * wait expires (timer), a watched partition goes away (fetch_wake_all) — all three answer by
 * reading again — or its connection closes (fetch_cancel_session, no answer).
 *
 * Invariants:
 *  1. Consumers never see offsets at or above HW.
 *  2. The first batch of the first partition with data is returned whole even if larger than
 *     the limits (KIP-74); later partitions stay within the response's byte budget.
 *  3. A parked op's watches are linked into live partitions only; the op is freed exactly once,
 *     after unlinking all of them and stopping its timer.
 *  4. Every fileref taken by a read is released after the response is encoded. */
#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "broker/quotas.h"
#include "kafka/errors.h"
#include "storage/plog.h"

#define FETCH_MAX_WAIT_MS (5 * 60 * 1000)

struct fetch_op;

struct fetch_watch {
    struct list_node node; /* in partition->fetch_watchers */
    struct fetch_op *op;
};

struct fetch_op {
    struct broker *b;
    struct session *s;
    struct conn_slot *slot;
    struct kreq_header hdr;
    struct arena arena;      /* deep copy of the request, watches */
    struct fetch_req req;
    struct kstr client_id;   /* the request's (in arena), for quotas */
    size_t bytes_seen;       /* bytes appended to watched partitions since parking */
    struct reactor_timer timer;
    struct fetch_watch *watches;
    int n_watches;
    struct list_node session_node; /* in session->fetch_ops */
};

struct file_range {
    struct fileref *file;
    off_t pos;
    size_t len;
};

static void write_file_records(struct kwriter *w, void *data)
{
    struct file_range *fr = data;
    iobuf_append_file(w->b, fr->file, fr->pos, fr->len);
}

/* Reads every requested partition into resp (allocated from a). Returns the record bytes
 * gathered; *errors tells whether some partition has an error. denied (NULL: none) marks the
 * topics the principal may not READ: their partitions get TOPIC_AUTHORIZATION_FAILED, so a
 * request with one is answered at once and never parks. */
static size_t fetch_read(struct broker *b, const struct fetch_req *req, const bool *denied,
                         struct arena *a, struct fetch_resp *resp, bool *errors)
{
    *errors = false;
    memset(resp, 0, sizeof(*resp));
    resp->n_topics = req->n_topics > 0 ? req->n_topics : 0;
    resp->topics = arena_calloc(a, (size_t)resp->n_topics, sizeof(*resp->topics));
    int64_t max_total = req->max_bytes;
    if (max_total > b->cfg->fetch_max_bytes)
        max_total = b->cfg->fetch_max_bytes;
    size_t left = max_total > 0 ? (size_t)max_total : 0;
    size_t total = 0;
    bool have_data = false;
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct fetch_req_topic *rt = &req->topics[i];
        struct fetch_resp_topic *ot = &resp->topics[i];
        ot->topic = rt->topic;
        ot->topic_id = rt->topic_id;
        ot->n_partitions = rt->n_partitions > 0 ? rt->n_partitions : 0;
        ot->partitions = arena_calloc(a, (size_t)ot->n_partitions, sizeof(*ot->partitions));
        struct topic *t = topic_find(b, rt->topic);
        for (int32_t j = 0; j < ot->n_partitions; j++) {
            const struct fetch_req_partition *rp = &rt->partitions[j];
            struct fetch_resp_partition *op = &ot->partitions[j];
            op->partition_index = rp->partition;
            op->high_watermark = -1;
            op->last_stable_offset = -1;
            op->log_start_offset = -1;
            op->n_aborted = -1;
            op->preferred_read_replica = -1;
            op->records_len = 0;
            if (denied && denied[i]) {
                op->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
                *errors = true;
                continue;
            }
            if (!t || rp->partition < 0 || rp->partition >= t->n_parts) {
                /* v13+: a topic id that names no topic (handle_fetch found no name) */
                op->error_code = !t && rt->topic.len == 0 && !kuuid_is_zero(rt->topic_id)
                                     ? KERR_UNKNOWN_TOPIC_ID
                                     : KERR_UNKNOWN_TOPIC_OR_PARTITION;
                *errors = true;
                continue;
            }
            int16_t lec = partition_read_check(b, t->parts[rp->partition]);
            if (lec != KERR_NONE) {
                op->error_code = lec;
                *errors = true;
                continue;
            }
            struct plog *log = t->parts[rp->partition]->log;
            int64_t hw = plog_high_watermark(log);
            op->high_watermark = hw;
            op->last_stable_offset = hw;
            op->log_start_offset = plog_start_offset(log);
            op->n_aborted = 0;
            if (rp->fetch_offset < plog_start_offset(log) ||
                rp->fetch_offset > plog_end_offset(log)) {
                op->error_code = KERR_OFFSET_OUT_OF_RANGE;
                *errors = true;
                continue;
            }
            if (rp->fetch_offset >= hw || rp->partition_max_bytes <= 0)
                continue;
            size_t budget = MIN(left, (size_t)rp->partition_max_bytes);
            if (budget == 0 && have_data)
                continue;
            struct plog_read_result res;
            int rc = plog_read_records(log, rp->fetch_offset, hw, budget ? budget : 1, &res);
            if (rc != 0) {
                op->error_code = kafka_error_from_rc(rc);
                *errors = true;
                continue;
            }
            if (res.len == 0)
                continue;
            if (have_data && res.len > budget) {
                fileref_put(res.file); /* KIP-74 only favours the first partition with data */
                continue;
            }
            struct file_range *fr = arena_alloc(a, sizeof(*fr));
            fr->file = res.file;
            fr->pos = res.pos;
            fr->len = res.len;
            op->records_len = (int32_t)res.len;
            op->write_records = write_file_records;
            op->records_data = fr;
            have_data = true;
            total += res.len;
            left = left > res.len ? left - res.len : 0;
        }
    }
    return total;
}

static void release_reads(struct fetch_resp *resp)
{
    for (int32_t i = 0; i < resp->n_topics; i++) {
        for (int32_t j = 0; j < resp->topics[i].n_partitions; j++) {
            struct fetch_resp_partition *p = &resp->topics[i].partitions[j];
            if (p->records_data) {
                fileref_put(((struct file_range *)p->records_data)->file);
                p->records_data = NULL;
            }
        }
    }
}

/* Sends resp, held for the client's consumer_byte_rate quota when it is over it (bytes: the
 * records it carries; client_id: the request's). */
static void send_fetch(struct broker *b, struct session *s, struct kstr client_id,
                       struct conn_slot *slot, const struct kreq_header *hdr,
                       struct fetch_resp *resp, size_t bytes)
{
    resp->throttle_time_ms = quota_account_session(b, s, client_id, QUOTA_FETCH, bytes);
    struct response r;
    response_begin(&r, hdr);
    kmsg_encode_fetch(&r.w, hdr->api_version, resp);
    release_reads(resp);
    response_send_after(b, &r, slot, resp->throttle_time_ms);
}

static void op_unwatch(struct fetch_op *op)
{
    for (int i = 0; i < op->n_watches; i++)
        if (list_linked(&op->watches[i].node))
            list_remove(&op->watches[i].node);
}

static void op_free(struct fetch_op *op)
{
    op_unwatch(op);
    reactor_timer_stop(op->b->r, &op->timer);
    list_remove(&op->session_node);
    arena_destroy(&op->arena);
    mem_free(op);
}

/* Reads again and answers (timer expiry, enough data, or a partition going away). */
static void op_answer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct fetch_op *op = data;
    struct arena a;
    arena_init(&a, 4096);
    struct fetch_resp resp;
    bool errors;
    size_t bytes = fetch_read(op->b, &op->req, NULL, &a, &resp, &errors);
    send_fetch(op->b, op->s, op->client_id, op->slot, &op->hdr, &resp, bytes);
    arena_destroy(&a);
    op_free(op);
}

void fetch_notify(struct partition *p, size_t bytes)
{
    struct list_node *n;
    for (n = p->fetch_watchers.next; n != &p->fetch_watchers; n = n->next) {
        struct fetch_op *op = LIST_ENTRY(n, struct fetch_watch, node)->op;
        op->bytes_seen += bytes;
        /* answer on the next loop turn: coalesces the appends made in this one; the watches
         * stay linked until the answer (op_free) so this walk never sees a list change */
        if (op->bytes_seen >= (size_t)(op->req.min_bytes > 0 ? op->req.min_bytes : 1))
            reactor_timer_start(op->b->r, &op->timer, 0);
    }
}

void fetch_wake_all(struct partition *p)
{
    /* one node at a time: an op may watch p more than once */
    while (!list_empty(&p->fetch_watchers)) {
        struct list_node *n = p->fetch_watchers.next;
        struct fetch_op *op = LIST_ENTRY(n, struct fetch_watch, node)->op;
        list_remove(n);
        reactor_timer_start(op->b->r, &op->timer, 0);
    }
}

void fetch_cancel_session(struct session *s)
{
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &s->fetch_ops)
    {
        struct fetch_op *op = LIST_ENTRY(n, struct fetch_op, session_node);
        struct iobuf empty;
        iobuf_init(&empty);
        conn_slot_complete(op->slot, &empty);
        op_free(op);
    }
}

static struct kstr copy_kstr(struct arena *a, struct kstr s)
{
    if (s.len <= 0)
        return s;
    return (struct kstr){arena_strndup(a, s.p, (size_t)s.len), s.len};
}

static void copy_request(struct arena *a, const struct fetch_req *in, struct fetch_req *out)
{
    *out = *in;
    out->forgotten = NULL;
    out->n_forgotten = 0;
    out->rack_id = KSTR_NULL;
    out->topics = arena_calloc(a, (size_t)(in->n_topics > 0 ? in->n_topics : 0),
                               sizeof(*out->topics));
    for (int32_t i = 0; i < in->n_topics; i++) {
        out->topics[i] = in->topics[i];
        out->topics[i].topic = copy_kstr(a, in->topics[i].topic);
        size_t n = (size_t)(in->topics[i].n_partitions > 0 ? in->topics[i].n_partitions : 0);
        out->topics[i].partitions = arena_alloc(a, n * sizeof(*out->topics[i].partitions));
        if (n)
            memcpy(out->topics[i].partitions, in->topics[i].partitions,
                   n * sizeof(*out->topics[i].partitions));
    }
}

int handle_fetch(struct request *req)
{
    struct broker *b = req->b;
    struct fetch_req fr;
    if (kmsg_decode_fetch(&req->body, req->hdr.api_version, req->arena, &fr) != 0)
        return -ERR_CORRUPT;
    for (int32_t i = 0; i < fr.n_topics; i++) { /* v13+: topics by id */
        struct kstr name = topic_name_by_id(b, fr.topics[i].topic_id);
        if (name.len > 0)
            fr.topics[i].topic = name;
    }
    bool *denied = NULL;
    for (int32_t i = 0; authz_on(b) && i < fr.n_topics; i++) {
        if (fr.topics[i].topic.len <= 0 || /* an unknown topic id: UNKNOWN_TOPIC_ID */
            authz_allows(req, ACL_OP_READ, ACL_RESOURCE_TOPIC, fr.topics[i].topic))
            continue;
        if (!denied)
            denied = arena_calloc(req->arena, (size_t)fr.n_topics, sizeof(*denied));
        denied[i] = true;
    }
    struct conn_slot *slot = conn_slot_reserve(req->conn);
    struct fetch_resp resp;
    bool errors;
    size_t bytes = fetch_read(b, &fr, denied, req->arena, &resp, &errors);
    int32_t min_bytes = fr.min_bytes > 0 ? fr.min_bytes : 1;
    if (errors || bytes >= (size_t)min_bytes || fr.max_wait_ms <= 0 || b->stopping) {
        send_fetch(b, req->s, req->hdr.client_id, slot, &req->hdr, &resp, bytes);
        return 0;
    }
    release_reads(&resp);

    /* park until data arrives or max_wait_ms passes */
    struct fetch_op *op = mem_calloc(1, sizeof(*op));
    op->b = b;
    op->s = req->s;
    op->slot = slot;
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL;
    arena_init(&op->arena, 4096);
    struct kstr cid = req->hdr.client_id;
    op->client_id = cid.len > 0 ? (struct kstr){arena_strndup(&op->arena, cid.p, (size_t)cid.len),
                                                cid.len}
                                : KSTR_NULL;
    copy_request(&op->arena, &fr, &op->req);
    op->bytes_seen = bytes;
    reactor_timer_init(&op->timer, op_answer, op);
    list_push_back(&req->s->fetch_ops, &op->session_node);
    int total = 0;
    for (int32_t i = 0; i < fr.n_topics; i++)
        total += fr.topics[i].n_partitions > 0 ? fr.topics[i].n_partitions : 0;
    op->watches = arena_calloc(&op->arena, (size_t)total, sizeof(*op->watches));
    for (int32_t i = 0; i < fr.n_topics; i++) {
        for (int32_t j = 0; j < fr.topics[i].n_partitions; j++) {
            struct partition *p =
                partition_find(b, fr.topics[i].topic, fr.topics[i].partitions[j].partition);
            if (!p)
                continue;
            struct fetch_watch *w = &op->watches[op->n_watches++];
            w->op = op;
            list_push_back(&p->fetch_watchers, &w->node);
        }
    }
    int64_t wait = fr.max_wait_ms < FETCH_MAX_WAIT_MS ? fr.max_wait_ms : FETCH_MAX_WAIT_MS;
    reactor_timer_start(b->r, &op->timer, wait);
    return 0;
}
