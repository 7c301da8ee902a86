/* The schema registry service (see schemas.h): the store that follows `_schemas`-0 (through a
 * local replica, or through the leader), the queue of requests, the one write in flight, the
 * requests forwarded to and from the leader, and the follow requests it holds as leader.
 *
 * Owns: b->schemas (created at the first request, the first `_schemas` event, or the first
 * image with `_schemas` and no replica here), its store, every op (struct sr_op) until it is
 * answered, the held follow requests, one timer.
 *
 * Invariants:
 *  1. applied_next is the offset after the last `_schemas`-0 record applied to the store; it
 *     only grows while the local replica lives (a replica removed or truncated below it, which
 *     Raft only does to uncommitted entries, never to applied ones, rebuilds the store from
 *     the log start: reset()).
 *  2. At most one op is WRITING: its records were appended by this broker as leader and it is
 *     answered once they are committed and applied (applied_next >= its end offset), or failed
 *     when the append fails or the leadership moves.
 *  3. A write is evaluated only when no other is WRITING and the store holds every record the
 *     leader's log held when it won (the commit index reached lead_ready_at and the store
 *     applied up to the high watermark), so ids and versions given out follow every earlier
 *     write.
 *  4. Every op is in exactly one of: the queue (QUEUED), sr->writing (WRITING), the forwarded
 *     list (FORWARDED); each is answered exactly once, at the latest at its deadline or at
 *     schemas_stop().
 *  5. Following through the leader: a broker with no replica of `_schemas`-0 (or one whose HW
 *     is below applied_next, a replica still copying the log) feeds its store from the leader
 *     with follow requests (broker/schemas_rpc.h) from applied_next, at most two in flight: a
 *     long poll the leader holds until its HW passes `from` (FOLLOW_WAIT_MS at most), and a
 *     sync (no wait) when a read waits or the last answer left the store behind. Records are
 *     applied in offset order, those below applied_next skipped (answers may overlap). A read
 *     here is answered once an answer to a request sent after it arrived left the store at
 *     the leader's HW (follow_done >= its need_gen), so it sees every write acknowledged
 *     before it arrived, as a read at the leader would. Only a leader that has committed an
 *     entry of its term answers (its HW then covers every committed record); a HW below
 *     applied_next means another log (the topic re-created): the store is rebuilt from 0.
 *
 * Op states and transitions:
 *   QUEUED    --dispatch: a read, store ready--> answered
 *   QUEUED    --dispatch: a write, leading and ready: no records--> answered
 *   QUEUED    --dispatch: a write, leading and ready: records appended--> WRITING
 *   QUEUED    --dispatch: a write, someone else leads (or no local replica)--> FORWARDED
 *   QUEUED    --dispatch: a read, following, an answer caught up after it--> answered
 *   WRITING   --committed and applied--> answered;  --append failed--> answered (50001)
 *   FORWARDED --answer from the leader--> answered (relayed)
 *   any       --deadline--> answered (50002, or 50003 for a forward)
 *
 * Authorization (registry/rest_authz.h; a request with its authz hook, from this broker's
 * listener): a route that needs one resource is decided in schemas_handle, before the op is
 * queued or forwarded, so the broker the client talks to decides; the op then carries no hook.
 * Listings and schema ids are decided against the store when the op is evaluated here (the hook
 * stays on it): reads are never forwarded, every broker has a store (invariant 5). Requests
 * forwarded to us carry no hook: their asker decided. */
#include "broker/schemas.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/iobuf.h"
#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/prom.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/config.h"
#include "broker/internal.h"
#include "broker/schemas_rpc.h"
#include "controller/image.h"
#include "kafka/batch.h"
#include "registry/rest.h"
#include "registry/rest_authz.h"
#include "registry/store.h"
#include "replication/host.h"
#include "replication/replica.h"
#include "replication/rpc.h"
#include "replication/transport.h"
#include "storage/plog.h"

#define TICK_MS 100
#define CREATE_RETRY_MS 1000
#define FOLLOW_WAIT_MS 5000 /* a long poll held by the leader while it has nothing new */
#define FOLLOW_LOST_MS 2000 /* beyond its wait, a follow request without answer is forgotten */
#define FOLLOW_HELD_MAX 256 /* long polls a leader holds; more are answered at once */
#define MISDIRECTED 421 /* a forwarded request's answer: "I do not lead _schemas" (never sent
                           to a client: the asker forwards it again) */

enum op_state { OP_QUEUED, OP_WRITING, OP_FORWARDED };

struct sr_op {
    struct list_node node;
    struct schemas_req req;
    enum op_state state;
    int64_t deadline_ms;
    schemas_done_fn done; /* local caller; NULL for a request forwarded to us */
    void *arg;
    int32_t from;          /* forwarded to us: the asking broker, and its request id */
    uint64_t from_id;
    struct reg_result res; /* WRITING: the answer to send once committed */
    int64_t end_offset;    /* WRITING: the offset after its records */
    uint64_t write_seq;    /* WRITING: which append is its own */
    int32_t fwd_to;        /* FORWARDED: the leader asked, and our request id */
    uint64_t fwd_id;
    uint64_t need_gen; /* a read while following: the first follow request it waits for */
};

/* A follow request in flight (see "following through the leader"). */
struct follow_slot {
    bool busy;
    int32_t to;
    uint64_t id;  /* its request id */
    uint64_t gen; /* 1, 2, ... in the order sent */
    int64_t sent_ms;
    int32_t wait_ms;
};

/* Leader: a follow request held until the log grows past its `from`, or its deadline. */
struct held_follow {
    struct list_node node;
    int32_t from_broker;
    uint64_t id;
    int64_t from;
    int64_t deadline_ms;
};

struct schemas {
    struct broker *b;
    struct reg_store st;
    int64_t applied_next;   /* invariant 1 */
    bool leading;           /* this broker's replica of _schemas-0 leads */
    int64_t lead_ready_at;  /* invariant 3: the log's last offset when it won */
    struct list_node queue; /* QUEUED ops, in arrival order */
    struct sr_op *writing;  /* invariant 2 */
    struct list_node forwarded;
    size_t n_ops;
    uint64_t next_fwd_id;
    uint64_t write_seq; /* appends made */
    int64_t create_asked_ms; /* the last time the topic's creation was asked, or 0 */
    struct reactor_timer timer;
    /* following through the leader (invariant 5) */
    struct follow_slot poll, sync;
    uint64_t follow_gen;  /* follow requests sent */
    uint64_t follow_done; /* the latest one whose answer left the store at the leader's HW */
    uint64_t need_max;    /* the largest need_gen of a waiting read */
    int64_t follow_hw;    /* the leader's HW in the latest answer */
    uint64_t follow_answers;
    int64_t follow_pause_until; /* after a refusal: no follow request before (ms) */
    /* the leader as a broker that does not lead told us (a broker without a replica only
     * knows the image's preferred replica, which Raft elections do not move), or -1 */
    int32_t leader_hint;
    /* leading: follow requests held, and the buffer answers are read into */
    struct list_node held;
    size_t n_held;
    struct log_read_buf rbuf;
};

static void dispatch_all(struct schemas *sr);

/* ---- answers ---- */

static void send_remote(struct schemas *sr, int32_t to, uint64_t id, const struct reg_result *res)
{
    struct cluster *c = sr->b->cluster;
    if (!c)
        return;
    bool raw = res->content_type && strncmp(res->content_type, REG_CONTENT_TYPE,
                                            strlen(REG_CONTENT_TYPE)) != 0;
    struct iobuf out;
    iobuf_init(&out);
    schemas_rpc_answer_encode(&out, res->status, raw, res->body.p ? res->body.p : "",
                              res->body.len);
    size_t len;
    uint8_t *body = iobuf_flatten(&out, &len);
    iobuf_destroy(&out);
    (void)transport_send_controller(host_transport(cluster_host(c)), to, RPC_BROKER_RESPONSE, id,
                                    body, len); /* a lost answer times out at the asker */
    mem_free(body);
}

static void op_free(struct schemas *sr, struct sr_op *op)
{
    if (list_linked(&op->node))
        list_remove(&op->node);
    if (sr->writing == op)
        sr->writing = NULL;
    reg_result_free(&op->res);
    schemas_req_free(&op->req);
    sr->n_ops--;
    mem_free(op);
}

static void op_answer(struct schemas *sr, struct sr_op *op, const struct reg_result *res)
{
    if (op->done)
        op->done(op->arg, res);
    else
        send_remote(sr, op->from, op->from_id, res);
    op_free(sr, op);
}

static void op_fail(struct schemas *sr, struct sr_op *op, int code, const char *msg)
{
    struct reg_result res;
    reg_result_init(&res);
    reg_rest_error(&res, code, "%s", msg);
    op_answer(sr, op, &res);
    reg_result_free(&res);
}

/* ---- the store follows _schemas-0 ---- */

static struct partition *local_partition(struct schemas *sr)
{
    struct partition *p = partition_find(sr->b, kstr_c(SCHEMAS_TOPIC), 0);
    return p && p->group ? p : NULL;
}

/* The Raft commit index of the local replica (the high watermark leaves out Raft's own
 * entries at the end of the log, so it can stay below a new leader's first entry). */
static int64_t local_commit(struct partition *p)
{
    struct replica_status st;
    replica_status(host_group_replica(p->group), &st);
    return st.commit;
}

static void apply_record(void *arg, const struct krecord *rec, int64_t offset)
{
    struct schemas *sr = arg;
    (void)offset;
    if (rec->key.len < 0)
        return; /* not a registry record: skipped, as Confluent does */
    int rc = reg_store_apply(&sr->st, (const char *)rec->key.p, (size_t)rec->key.len,
                             rec->value.len < 0 ? NULL : (const char *)rec->value.p,
                             rec->value.len < 0 ? 0 : (size_t)rec->value.len);
    if (rc != 0)
        log_debug("schemas_record_skipped", "offset=%" PRId64, offset);
}

static void reset(struct schemas *sr)
{
    reg_store_destroy(&sr->st);
    reg_store_init(&sr->st);
    sr->applied_next = 0;
}

/* Whether the store is fed through the leader rather than a local replica (invariant 5). */
static bool following(struct schemas *sr)
{
    const struct ctl_image *img = sr->b->cluster ? cluster_image(sr->b->cluster) : NULL;
    if (!img || !ctl_image_topic(img, SCHEMAS_TOPIC))
        return false;
    struct partition *p = local_partition(sr);
    return !p || plog_high_watermark(p->log) < sr->applied_next;
}

/* Applies what the local replica committed since the last call. */
static void catch_up(struct schemas *sr)
{
    struct partition *p = local_partition(sr);
    if (!p)
        return;
    int64_t hw = plog_high_watermark(p->log);
    if (plog_start_offset(p->log) > sr->applied_next)
        reset(sr); /* the log is not the one the store followed (its start moved past it) */
    if (hw <= sr->applied_next)
        return; /* nothing new, or a replica behind the store: followed through the leader */
    struct log_scan_stats scan = {0};
    int rc = partition_scan(p, sr->applied_next, hw, apply_record, sr, &scan);
    if (scan.next > sr->applied_next)
        sr->applied_next = scan.next;
    if (rc != 0)
        log_error("schemas_read_failed", "offset=%" PRId64 " error=\"%s\"", sr->applied_next,
                  err_str(rc));
}

static void follow_drive(struct schemas *sr);

/* The `_schemas` leader as this broker knows it: its local replica's Raft leader; without a
 * replica, the leader another broker named (leader_hint), else the image's. -1 if none. */
static int32_t leader_of(struct schemas *sr, bool *leading)
{
    int32_t leader, epoch;
    cluster_partition_leader(sr->b->cluster, SCHEMAS_TOPIC, 0, &leader, &epoch, leading);
    if (!local_partition(sr) && sr->leader_hint >= 0)
        leader = sr->leader_hint;
    return leader;
}

/* What a broker that does not lead said of the leader (-1: it knows none). */
static void learn_leader(struct schemas *sr, int32_t from, int32_t leader)
{
    if (leader == sr->b->cfg->node_id || leader == from)
        leader = -1;
    if (leader != sr->leader_hint)
        log_debug("schemas_leader_hint", "from=%" PRId32 " leader=%" PRId32, from, leader);
    sr->leader_hint = leader;
}

/* Whether op (a read) may be answered here: the store has applied what the local replica had
 * committed, or, following through the leader, an answer to a request sent after op arrived
 * left it at the leader's high watermark; or the registry has no topic yet. */
static bool store_ready(struct schemas *sr, struct sr_op *op)
{
    const struct ctl_image *img = sr->b->cluster ? cluster_image(sr->b->cluster) : NULL;
    if (!img || !ctl_image_topic(img, SCHEMAS_TOPIC))
        return true; /* nothing registered anywhere */
    catch_up(sr);
    struct partition *p = local_partition(sr);
    if (following(sr)) {
        if (reg_rest_is_write(&op->req.req))
            return false; /* forwarded: this store is not the one that evaluates it */
        if (!op->need_gen) {
            op->need_gen = sr->follow_gen + 1;
            if (op->need_gen > sr->need_max)
                sr->need_max = op->need_gen;
            follow_drive(sr);
        }
        return sr->follow_done >= op->need_gen;
    }
    bool leading;
    int32_t leader = leader_of(sr, &leading);
    /* a replica that knows no leader may be far behind: it has not heard the current term */
    return leader >= 0 && sr->applied_next >= plog_high_watermark(p->log);
}

/* ---- writes ---- */

static void schemas_topic_create_done(struct ctl_runtime *rt, const struct ctl_answer *a,
                                      void *data)
{
    (void)rt;
    (void)data;
    if (a->error)
        log_warn("schemas_topic_create_failed", "error=%d", a->error);
}

static void ask_topic(struct schemas *sr)
{
    int64_t now = time_mono_ms();
    if (sr->create_asked_ms && now - sr->create_asked_ms < CREATE_RETRY_MS)
        return;
    sr->create_asked_ms = now;
    const struct ctl_image *img = cluster_image(sr->b->cluster);
    int32_t live = 0;
    for (size_t i = 0; i < img->n_brokers; i++)
        live += !img->brokers[i].fenced;
    int32_t rf = sr->b->cfg->registry_replication_factor;
    if (live > 0 && rf > live)
        rf = live;
    static const struct ctl_config_entry cfgs[] = {{"cleanup.policy", "compact"}};
    struct ctl_request cmd = {.type = CTL_REQ_CREATE_TOPIC,
                              .name = SCHEMAS_TOPIC,
                              .n_partitions = 1,
                              .rf = rf < 1 ? 1 : rf,
                              .configs = cfgs,
                              .n_configs = 1};
    log_info("schemas_topic_create", "replication_factor=%d", cmd.rf);
    cluster_submit(sr->b->cluster, &cmd, schemas_topic_create_done, NULL);
}

/* One append in flight: which op's it is (an op failed meanwhile is not the one writing). */
struct append_token {
    struct broker *b;
    uint64_t seq;
};

static void append_done(void *arg, int rc, int64_t base_offset)
{
    struct append_token tok = *(struct append_token *)arg;
    mem_free(arg);
    struct schemas *sr = tok.b->schemas;
    struct sr_op *op = sr ? sr->writing : NULL;
    if (!op || op->write_seq != tok.seq)
        return; /* answered already (leadership moved, deadline, stop) */
    if (rc != 0) {
        log_warn("schemas_write_failed", "error=\"%s\"", err_str(rc));
        op_fail(sr, op, 50001, "Error in the backend data store: the write was not committed "
                "(the _schemas leadership moved); it may or may not have been applied");
    } else {
        op->end_offset = base_offset + (int64_t)op->res.n_writes;
        catch_up(sr);
        if (sr->applied_next >= op->end_offset)
            op_answer(sr, op, &op->res);
    }
    dispatch_all(sr);
}

/* Appends op's records as one batch. 0, or a negative code (nothing appended). */
static int append_writes(struct schemas *sr, struct sr_op *op, struct partition *p)
{
    size_t n = op->res.n_writes;
    struct kbytes *keys = mem_calloc(n, sizeof(*keys));
    struct kbytes *values = mem_calloc(n, sizeof(*values));
    for (size_t i = 0; i < n; i++) {
        const struct reg_write *w = &op->res.writes[i];
        keys[i] = (struct kbytes){(const uint8_t *)w->key.p, (int32_t)w->key.len};
        values[i] = w->tombstone ? (struct kbytes){NULL, -1}
                                 : (struct kbytes){(const uint8_t *)w->value.p,
                                                   (int32_t)w->value.len};
    }
    struct iobuf out;
    iobuf_init(&out);
    kbatch_build(&out, time_wall_ms(), keys, values, (int32_t)n);
    size_t len;
    uint8_t *batch = iobuf_flatten(&out, &len);
    iobuf_destroy(&out);
    mem_free(keys);
    mem_free(values);
    sr->writing = op;
    op->state = OP_WRITING;
    op->write_seq = ++sr->write_seq;
    struct append_token *tok = mem_alloc(sizeof(*tok));
    *tok = (struct append_token){sr->b, op->write_seq};
    int rc = broker_internal_append(sr->b, p, batch, len, append_done, tok);
    mem_free(batch);
    if (rc != 0) {
        mem_free(tok); /* not called back when refused at once */
        sr->writing = NULL;
        op->state = OP_QUEUED;
    }
    return rc;
}

/* ---- forwarding ---- */

static void forward(struct schemas *sr, struct sr_op *op, int32_t leader)
{
    struct iobuf out;
    iobuf_init(&out);
    schemas_rpc_req_encode(&out, &op->req.req);
    size_t len;
    uint8_t *body = iobuf_flatten(&out, &len);
    iobuf_destroy(&out);
    op->fwd_to = leader;
    op->fwd_id = ++sr->next_fwd_id;
    int rc = transport_send_controller(host_transport(cluster_host(sr->b->cluster)), leader,
                                       RPC_BROKER_REQUEST, op->fwd_id, body, len);
    mem_free(body);
    if (rc != 0) {
        if (leader == sr->leader_hint)
            learn_leader(sr, -1, -1); /* a hint we cannot reach is not followed */
        return; /* stays queued: tried again at the next tick */
    }
    log_debug("schemas_forwarded", "to=%" PRId32 " id=%" PRIu64, leader, op->fwd_id);
    list_remove(&op->node);
    op->state = OP_FORWARDED;
    list_push_back(&sr->forwarded, &op->node);
}

/* ---- following through the leader ---- */

static int send_frame(struct schemas *sr, int32_t to, uint8_t type, uint64_t id, struct iobuf *out)
{
    size_t len;
    uint8_t *body = iobuf_flatten(out, &len);
    iobuf_destroy(out);
    int rc = transport_send_controller(host_transport(cluster_host(sr->b->cluster)), to, type, id,
                                       body, len);
    mem_free(body);
    return rc;
}

/* Whether this broker may answer follow requests: it leads, and has committed an entry of its
 * term, so its HW covers every record committed before (invariant 3's lead_ready_at). */
static bool follow_servable(struct schemas *sr, struct partition **pp)
{
    struct partition *p = local_partition(sr);
    *pp = p;
    return p && sr->leading && local_commit(p) >= sr->lead_ready_at;
}

/* Answers one follow request: with the batches from `from` below the HW when servable (a
 * leader), else "not the leader", naming the one this broker knows. */
static void follow_answer(struct schemas *sr, int32_t to, uint64_t id, int64_t from)
{
    struct partition *p;
    bool leading;
    struct schemas_follow_answer a = {
        .error = SCHEMAS_FOLLOW_NOT_LEADER, .leader = leader_of(sr, &leading), .from = from};
    if (follow_servable(sr, &p)) {
        a.high_watermark = plog_high_watermark(p->log);
        int rc = from <= a.high_watermark ? partition_read_batches(p, from, a.high_watermark,
                                                                   SCHEMAS_FOLLOW_BYTES, &sr->rbuf)
                                          : 0;
        if (from > a.high_watermark)
            sr->rbuf.len = 0, sr->rbuf.next = from; /* the asker followed another log */
        if (rc != 0)
            log_warn("schemas_follow_read_failed", "from=%" PRId64 " error=\"%s\"", from,
                     err_str(rc));
        else if (sr->rbuf.len > RPC_CONTROLLER_BODY_MAX - 64)
            log_error("schemas_follow_batch_too_large", "from=%" PRId64 " bytes=%zu", from,
                      sr->rbuf.len);
        else {
            a.error = SCHEMAS_FOLLOW_OK;
            a.next = sr->rbuf.len ? sr->rbuf.next : from;
            a.batches = sr->rbuf.p;
            a.batches_len = sr->rbuf.len;
        }
    }
    struct iobuf out;
    iobuf_init(&out);
    schemas_rpc_follow_answer_encode(&out, &a);
    (void)send_frame(sr, to, RPC_BROKER_RESPONSE, id, &out); /* a lost one times out there */
}

static void follow_serve(struct schemas *sr, int32_t from_broker, uint64_t id,
                         const struct schemas_follow_req *q)
{
    struct partition *p;
    if (follow_servable(sr, &p) && q->wait_ms > 0 && q->from == plog_high_watermark(p->log) &&
        sr->n_held < FOLLOW_HELD_MAX) {
        struct held_follow *h = mem_calloc(1, sizeof(*h));
        *h = (struct held_follow){.from_broker = from_broker,
                                  .id = id,
                                  .from = q->from,
                                  .deadline_ms = time_mono_ms() + q->wait_ms};
        list_push_back(&sr->held, &h->node);
        sr->n_held++;
        return;
    }
    follow_answer(sr, from_broker, id, q->from);
}

/* Leader: answers the held requests the log grew past, those due, or all (no longer
 * servable). */
static void follow_release(struct schemas *sr, bool all)
{
    struct partition *p;
    bool servable = follow_servable(sr, &p);
    int64_t hw = servable ? plog_high_watermark(p->log) : 0;
    int64_t now = time_mono_ms();
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &sr->held)
    {
        struct held_follow *h = LIST_ENTRY(n, struct held_follow, node);
        if (!all && servable && hw <= h->from && now < h->deadline_ms)
            continue;
        list_remove(&h->node);
        sr->n_held--;
        if (!sr->b->stopping)
            follow_answer(sr, h->from_broker, h->id, h->from);
        mem_free(h);
    }
}

static void follow_send(struct schemas *sr, struct follow_slot *slot, int32_t leader,
                        int32_t wait_ms)
{
    struct iobuf out;
    iobuf_init(&out);
    struct schemas_follow_req q = {.from = sr->applied_next, .wait_ms = wait_ms};
    schemas_rpc_follow_req_encode(&out, &q);
    uint64_t id = ++sr->next_fwd_id;
    if (send_frame(sr, leader, RPC_BROKER_REQUEST, id, &out) != 0) {
        if (leader == sr->leader_hint)
            learn_leader(sr, -1, -1); /* a hint we cannot reach is not followed */
        sr->follow_pause_until = time_mono_ms() + TICK_MS;
        return; /* not connected: tried again at the next tick */
    }
    *slot = (struct follow_slot){.busy = true,
                                 .to = leader,
                                 .id = id,
                                 .gen = ++sr->follow_gen,
                                 .sent_ms = time_mono_ms(),
                                 .wait_ms = wait_ms};
}

/* Keeps the requests going while following: a sync (no wait) when a read waits for one sent
 * after it or the last answer left the store behind, else a long poll. A request to a broker
 * that no longer leads, or unanswered too long, is forgotten. */
static void follow_drive(struct schemas *sr)
{
    if (sr->b->stopping || !sr->b->cluster || !following(sr))
        return;
    bool leading;
    int32_t leader = leader_of(sr, &leading);
    int64_t now = time_mono_ms();
    struct follow_slot *slots[] = {&sr->poll, &sr->sync};
    for (size_t i = 0; i < 2; i++) {
        struct follow_slot *sl = slots[i];
        bool lost = sl->busy && now - sl->sent_ms > sl->wait_ms + FOLLOW_LOST_MS;
        if (lost && sl->to == sr->leader_hint)
            learn_leader(sr, -1, -1); /* a hint that does not answer is not followed */
        if (sl->busy && (lost || sl->to != leader))
            sl->busy = false; /* its answer, if it comes, is ignored */
    }
    if (leader < 0 || leader == sr->b->cfg->node_id || now < sr->follow_pause_until)
        return;
    bool behind = sr->follow_hw > sr->applied_next;
    if (!sr->sync.busy && (behind || sr->need_max > sr->follow_gen))
        follow_send(sr, &sr->sync, leader, 0);
    if (!sr->poll.busy && !behind)
        follow_send(sr, &sr->poll, leader, FOLLOW_WAIT_MS);
}

/* Applies a record from the leader unless the store has it already (two answers may cover
 * the same offsets). */
static void apply_followed(void *arg, const struct krecord *rec, int64_t offset)
{
    struct schemas *sr = arg;
    if (offset >= sr->applied_next)
        apply_record(sr, rec, offset);
}

static void follow_answered(struct schemas *sr, int32_t from, uint64_t id,
                            const struct schemas_follow_answer *a)
{
    struct follow_slot *slot = NULL;
    if (sr->poll.busy && sr->poll.id == id && sr->poll.to == from)
        slot = &sr->poll;
    else if (sr->sync.busy && sr->sync.id == id && sr->sync.to == from)
        slot = &sr->sync;
    if (!slot)
        return; /* forgotten (see follow_drive) */
    slot->busy = false;
    if (a->error != SCHEMAS_FOLLOW_OK) {
        /* not the leader (or not ready to serve yet): whoever it names, at the next tick */
        learn_leader(sr, from, a->leader);
        sr->follow_pause_until = time_mono_ms() + TICK_MS;
        return;
    }
    if (!following(sr))
        return; /* fed by the local replica now */
    sr->follow_answers++;
    if (a->high_watermark < sr->applied_next) {
        /* the leader's log holds less than the store applied: not the log it followed (Raft
         * never loses what it committed, and a servable leader's HW covers it) */
        log_warn("schemas_store_rebuilt", "applied_next=%" PRId64 " leader_hw=%" PRId64,
                 sr->applied_next, a->high_watermark);
        reset(sr);
        sr->follow_hw = a->high_watermark;
        return;
    }
    if (a->from > sr->applied_next)
        return; /* asked before a rebuild: it does not start where the store is */
    if (a->batches_len) {
        struct log_scan_stats st = {0};
        log_scan_buffer(a->batches, a->batches_len, apply_followed, sr, &st);
    }
    if (a->next > sr->applied_next)
        sr->applied_next = a->next;
    if (a->high_watermark > sr->follow_hw)
        sr->follow_hw = a->high_watermark; /* a leader's HW only grows (the rebuild aside) */
    if (sr->applied_next >= a->high_watermark && slot->gen > sr->follow_done)
        sr->follow_done = slot->gen;
}

/* ---- dispatch ---- */

/* Tries to move op on (see the states above). Returns false if it must wait. */
static bool dispatch(struct schemas *sr, struct sr_op *op)
{
    const struct reg_rest_req *req = &op->req.req;
    if (sr->b->stopping)
        return false; /* answered by schemas_stop() */
    bool ready = store_ready(sr, op);
    if (!reg_rest_is_write(req) && ready) {
        struct reg_result res;
        reg_result_init(&res);
        reg_rest_handle(&sr->st, req, &res);
        op_answer(sr, op, &res);
        reg_result_free(&res);
        return true;
    }
    struct cluster *c = sr->b->cluster;
    if (!c)
        return false;
    const struct ctl_image *img = cluster_image(c);
    if (!ctl_image_topic(img, SCHEMAS_TOPIC)) {
        ask_topic(sr); /* only writes get here: reads were answered above */
        return false;
    }
    bool leading;
    int32_t leader = leader_of(sr, &leading);
    struct partition *p = local_partition(sr);
    if (leading && p) {
        if (!ready || sr->writing || local_commit(p) < sr->lead_ready_at)
            return false;
        struct reg_result res;
        reg_result_init(&res);
        reg_rest_handle(&sr->st, req, &res);
        if (res.n_writes == 0) {
            op_answer(sr, op, &res);
            reg_result_free(&res);
            return true;
        }
        op->res = res;
        list_remove(&op->node);
        if (append_writes(sr, op, p) != 0) {
            reg_result_free(&op->res);
            reg_result_init(&op->res);
            list_push_back(&sr->queue, &op->node);
            return false;
        }
        return true;
    }
    if (!op->done) {
        /* forwarded to us, and we do not lead: the asker forwards again to whoever does */
        if (leader >= 0 && leader != sr->b->cfg->node_id) {
            struct reg_result res;
            reg_result_init(&res);
            res.status = MISDIRECTED; /* the asker asks again, whoever leads then */
            strbuf_printf(&res.body, "%" PRId32, leader);
            op_answer(sr, op, &res);
            reg_result_free(&res);
            return true;
        }
        return false;
    }
    if (leader >= 0 && leader != sr->b->cfg->node_id && reg_rest_is_write(req)) {
        forward(sr, op, leader);
        return op->state == OP_FORWARDED;
    }
    return false;
}

static void dispatch_all(struct schemas *sr)
{
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &sr->queue)
    {
        struct sr_op *op = LIST_ENTRY(n, struct sr_op, node);
        if (!dispatch(sr, op) && reg_rest_is_write(&op->req.req))
            break; /* writes keep their order */
    }
}

static void arm(struct schemas *sr)
{
    if (sr->n_ops > 0 || sr->n_held > 0 || following(sr))
        reactor_timer_start(sr->b->r, &sr->timer, TICK_MS);
    else
        reactor_timer_stop(sr->b->r, &sr->timer);
}

static void expire(struct schemas *sr, struct list_node *list, int64_t now, int code,
                   const char *msg)
{
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, list)
    {
        struct sr_op *op = LIST_ENTRY(n, struct sr_op, node);
        if (now >= op->deadline_ms)
            op_fail(sr, op, code, msg);
    }
}

static void tick(struct reactor *r, struct reactor_timer *t, void *data)
{
    (void)r;
    (void)t;
    struct schemas *sr = data;
    int64_t now = time_mono_ms();
    expire(sr, &sr->queue, now, 50002, "Operation timed out: the schema registry's store has "
           "no leader or is not ready");
    expire(sr, &sr->forwarded, now, 50003, "Error while forwarding the request to the leader");
    if (sr->writing && now >= sr->writing->deadline_ms)
        op_fail(sr, sr->writing, 50002, "Operation timed out: the write was not committed in "
                "time; it may or may not have been applied");
    follow_release(sr, false);
    follow_drive(sr);
    dispatch_all(sr);
    arm(sr);
}

static struct schemas *schemas_get(struct broker *b)
{
    if (!b->schemas) {
        struct schemas *sr = mem_calloc(1, sizeof(*sr));
        sr->b = b;
        reg_store_init(&sr->st);
        sr->lead_ready_at = -1;
        sr->leader_hint = -1;
        list_init(&sr->queue);
        list_init(&sr->forwarded);
        list_init(&sr->held);
        reactor_timer_init(&sr->timer, tick, sr);
        b->schemas = sr;
    }
    return b->schemas;
}

static struct sr_op *op_new(struct schemas *sr, const struct reg_rest_req *req)
{
    struct sr_op *op = mem_calloc(1, sizeof(*op));
    schemas_req_copy(&op->req, req);
    reg_result_init(&op->res);
    op->deadline_ms = time_mono_ms() + SCHEMAS_TIMEOUT_MS;
    list_init(&op->node);
    sr->n_ops++;
    return op;
}

static bool admit(struct schemas *sr, struct sr_op *op)
{
    if (sr->n_ops > SCHEMAS_OPS_MAX) {
        op_fail(sr, op, 50002, "Operation timed out: too many schema registry requests are "
                "waiting");
        return false;
    }
    list_push_back(&sr->queue, &op->node);
    /* a read may go at once; a write waits behind those queued before it */
    bool first_write = true;
    struct list_node *n;
    for (n = sr->queue.next; n != &op->node; n = n->next)
        if (reg_rest_is_write(&LIST_ENTRY(n, struct sr_op, node)->req.req))
            first_write = false;
    if (!reg_rest_is_write(&op->req.req) || first_write)
        dispatch(sr, op);
    arm(sr);
    return true;
}

/* A route that needs one resource, decided now (see the authorization note above): true if the
 * op may go on (its hook kept only if the store must decide more), else answered 403. */
static bool authorize_early(struct schemas *sr, struct sr_op *op, const struct reg_rest_req *req)
{
    if (!req->authz)
        return true;
    struct reg_need nd;
    reg_authz_need(req, &nd);
    if (nd.kind == REG_NEED_OPEN)
        return true;
    if (nd.kind != REG_NEED_RESOURCE) {
        op->req.req.authz = req->authz;
        return true;
    }
    struct reg_result res;
    reg_result_init(&res);
    bool ok = reg_authz_check(&sr->st, req, &res);
    if (!ok)
        op_answer(sr, op, &res);
    reg_result_free(&res);
    return ok;
}

void schemas_handle(struct broker *b, const struct reg_rest_req *req, schemas_done_fn done,
                    void *arg)
{
    struct schemas *sr = schemas_get(b);
    struct sr_op *op = op_new(sr, req);
    op->done = done;
    op->arg = arg;
    if (authorize_early(sr, op, req))
        admit(sr, op);
}

bool schemas_subject_uses(struct broker *b, const char *subject, int32_t id)
{
    struct schemas *sr = schemas_get(b);
    catch_up(sr);
    const struct reg_subject *s = reg_store_subject(&sr->st, subject);
    for (size_t i = 0; s && i < s->n; i++)
        if (s->v[i].id == id && !s->v[i].deleted)
            return true;
    return false;
}

void schemas_metrics_write(struct broker *b, struct strbuf *out)
{
    struct schemas *sr = b->schemas;
    size_t subjects = 0;
    if (sr) {
        size_t it = 0;
        const char *k;
        void *v;
        while (strmap_next(&sr->st.subjects, &it, &k, &v))
            subjects += reg_subject_live(v) > 0;
    }
    static const struct {
        const char *name, *help;
        enum prom_type type;
    } fams[] = {
        {"streampulse_schema_registry_subjects",
         "Subjects with a live version, as this broker's "
         "store knows them.",
         PROM_GAUGE},
        {"streampulse_schema_registry_schemas", "Schema ids in this broker's store.", PROM_GAUGE},
        {"streampulse_schema_registry_records_applied_total",
         "_schemas records applied to the "
         "store.",
         PROM_COUNTER},
        {"streampulse_schema_registry_records_skipped_total",
         "_schemas records the store did not "
         "understand (skipped).",
         PROM_COUNTER},
        {"streampulse_schema_registry_waiting_requests",
         "REST requests waiting: for a commit, "
         "the leader, or the store to catch up.",
         PROM_GAUGE},
        {"streampulse_schema_registry_following",
         "1 while this broker's store is fed through "
         "the _schemas leader (no local replica, or one behind the store).",
         PROM_GAUGE},
        {"streampulse_schema_registry_follow_answers_total",
         "Answers from the _schemas leader "
         "applied to this broker's store.",
         PROM_COUNTER},
    };
    uint64_t vals[] = {subjects,
                       sr ? sr->st.n_ids : 0,
                       sr ? sr->st.applied : 0,
                       sr ? sr->st.skipped : 0,
                       sr ? sr->n_ops : 0,
                       sr && following(sr),
                       sr ? sr->follow_answers : 0};
    for (size_t i = 0; i < sizeof fams / sizeof fams[0]; i++) {
        prom_family(out, fams[i].name, fams[i].type, fams[i].help);
        prom_sample_u64(out, fams[i].name, NULL, 0, vals[i]);
    }
}

/* ---- hooks from cluster.c ---- */

void schemas_commit(struct broker *b, struct partition *p, int64_t commit)
{
    (void)p;
    (void)commit;
    struct schemas *sr = schemas_get(b);
    catch_up(sr);
    if (sr->writing && sr->writing->end_offset > 0 && sr->applied_next >= sr->writing->end_offset)
        op_answer(sr, sr->writing, &sr->writing->res);
    follow_release(sr, false);
    dispatch_all(sr);
    arm(sr);
}

void schemas_leader(struct broker *b, struct partition *p, bool leading)
{
    struct schemas *sr = schemas_get(b);
    sr->leading = leading;
    sr->lead_ready_at = leading ? plog_end_offset(p->log) - 1 : -1;
    if (!leading && sr->writing)
        op_fail(sr, sr->writing, 50001, "Error in the backend data store: the _schemas "
                "leadership moved before the write was committed; it may or may not have been "
                "applied");
    if (!leading)
        follow_release(sr, true); /* answered "not the leader": they ask the new one */
    follow_drive(sr);
    dispatch_all(sr);
    arm(sr);
}

void schemas_image_changed(struct broker *b)
{
    if (!b->schemas) {
        const struct ctl_image *img = b->cluster ? cluster_image(b->cluster) : NULL;
        if (!img || !ctl_image_topic(img, SCHEMAS_TOPIC) ||
            partition_find(b, kstr_c(SCHEMAS_TOPIC), 0))
            return; /* a replica here creates the service at its first event */
    }
    struct schemas *sr = schemas_get(b);
    follow_drive(sr);
    arm(sr);
}

void schemas_deliver(struct broker *b, int32_t from, uint8_t type, uint64_t request_id,
                     const uint8_t *body, size_t len)
{
    struct schemas *sr = schemas_get(b);
    if (body[0] == SCHEMAS_FOLLOW_KIND) {
        if (type == RPC_BROKER_REQUEST) {
            struct schemas_follow_req q;
            if (schemas_rpc_follow_req_decode(body, len, &q) != 0)
                log_warn("schemas_request_bad", "from=%" PRId32 " bytes=%zu", from, len);
            else
                follow_serve(sr, from, request_id, &q);
        } else {
            struct schemas_follow_answer a;
            if (schemas_rpc_follow_answer_decode(body, len, &a) != 0)
                log_warn("schemas_answer_bad", "from=%" PRId32 " bytes=%zu", from, len);
            else
                follow_answered(sr, from, request_id, &a);
            follow_drive(sr);
            dispatch_all(sr);
        }
        arm(sr);
        return;
    }
    if (type == RPC_BROKER_REQUEST) {
        struct schemas_req q;
        if (schemas_rpc_req_decode(body, len, &q) != 0) {
            log_warn("schemas_request_bad", "from=%" PRId32 " bytes=%zu", from, len);
            struct reg_result res;
            reg_result_init(&res);
            reg_rest_error(&res, 50003, "Malformed forwarded request");
            send_remote(sr, from, request_id, &res);
            reg_result_free(&res);
            return;
        }
        struct sr_op *op = op_new(sr, &q.req);
        schemas_req_free(&q);
        op->from = from;
        op->from_id = request_id;
        admit(sr, op);
        return;
    }
    int status;
    bool raw;
    const char *text;
    size_t tlen;
    if (schemas_rpc_answer_decode(body, len, &status, &raw, &text, &tlen) != 0)
        return; /* the op times out */
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &sr->forwarded)
    {
        struct sr_op *op = LIST_ENTRY(n, struct sr_op, node);
        if (op->fwd_id != request_id || op->fwd_to != from)
            continue;
        if (status == MISDIRECTED) { /* back in the queue (first: it was asked first) */
            char num[12] = "";
            if (tlen > 0 && tlen < sizeof num)
                memcpy(num, text, tlen);
            char *end;
            long named = strtol(num, &end, 10);
            learn_leader(sr, from,
                         *num && !*end && named >= 0 && named <= INT32_MAX ? (int32_t)named : -1);
            list_remove(&op->node);
            op->state = OP_QUEUED;
            list_insert_before(sr->queue.next, &op->node);
            break;
        }
        struct reg_result res;
        reg_result_init(&res);
        res.status = status;
        res.content_type = raw ? "text/plain; charset=utf-8" : REG_CONTENT_TYPE;
        strbuf_append(&res.body, text, tlen);
        op_answer(sr, op, &res);
        reg_result_free(&res);
        break;
    }
    arm(sr);
}

void schemas_stop(struct broker *b)
{
    struct schemas *sr = b->schemas;
    if (!sr)
        return;
    reactor_timer_stop(b->r, &sr->timer);
    while (!list_empty(&sr->queue))
        op_fail(sr, LIST_ENTRY(sr->queue.next, struct sr_op, node), 50003,
                "The broker is shutting down");
    while (!list_empty(&sr->forwarded))
        op_fail(sr, LIST_ENTRY(sr->forwarded.next, struct sr_op, node), 50003,
                "The broker is shutting down");
    if (sr->writing)
        op_fail(sr, sr->writing, 50003, "The broker is shutting down");
    follow_release(sr, true); /* b->stopping: dropped unanswered (the askers time out) */
    mem_free(sr->rbuf.p);
    reg_store_destroy(&sr->st);
    mem_free(sr);
    b->schemas = NULL;
}
