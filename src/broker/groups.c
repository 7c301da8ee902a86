/* Consumer-group APIs: decode -> group coordinator (group/coordinator.h) -> encode, and the
 * coordinator's storage: its records go to __consumer_offsets through broker_internal_append
 * and are replayed from there at startup.
 *
 * JoinGroup, SyncGroup, OffsetCommit, DeleteGroups and OffsetDelete may be answered later: a
 * struct group_op keeps the reserved response slot and the request header until then. The
 * coordinator may also answer before the call returns, so an op is complete before it is handed
 * over and the handler does not touch it afterwards.
 *
 * __consumer_offsets is created on first need (cleanup.policy=compact, 100 MiB segments, as
 * Kafka does) with offsets.topic.num.partitions partitions; an existing topic keeps its count.
 *
 * The controller creates __consumer_offsets (at the first FindCoordinator, metadata.c) with
 * offsets.topic.replication.factor replicas (at most the live brokers); each partition is a Raft
 * group, and this broker coordinates the groups of the partitions it leads: at a new
 * leadership it waits until everything its log held is committed, replays the partition, and
 * serves; when leadership goes, the groups leave memory (clients get NOT_COORDINATOR and ask
 * FindCoordinator again). Records are proposed through Raft and answered at commit. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "group/coordinator.h"
#include "kafka/batch.h"
#include "kafka/compress.h"
#include "kafka/errors.h"
#include "kafka/msg_group.h"
#include "replication/host.h"
#include "replication/replica.h"
#include "storage/plog.h"

/* A request answered later. */
struct group_op {
    struct conn_slot *slot;
    struct kreq_header hdr; /* client_id nulled: it points into the frame */
    struct arena arena;     /* the response lives here */
    int waiting;            /* DeleteGroups: tombstone writes in flight, + 1 for the handler */
    union {
        struct offset_commit_resp commit;
        struct delete_groups_resp del;
        struct offset_delete_resp odel;
    } resp;
};

static struct group_op *op_new(struct request *req)
{
    struct group_op *op = mem_calloc(1, sizeof(*op));
    op->slot = conn_slot_reserve(req->conn);
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL;
    arena_init(&op->arena, 1024);
    return op;
}

static void op_free(struct group_op *op)
{
    arena_destroy(&op->arena);
    mem_free(op);
}

static struct kstr copy_str(struct arena *a, struct kstr s)
{
    if (s.len <= 0)
        return s;
    return (struct kstr){arena_strndup(a, s.p, (size_t)s.len), s.len};
}

static void send_now(struct request *req, void (*encode)(struct kwriter *, int16_t, const void *),
                     const void *resp)
{
    struct response r;
    response_begin(&r, &req->hdr);
    encode(&r.w, req->hdr.api_version, resp);
    response_send(&r, conn_slot_reserve(req->conn));
}

/* ---- JoinGroup / SyncGroup ---- */

static void join_done(void *waiter, const struct group_join_result *res)
{
    struct group_op *op = waiter;
    struct join_group_resp resp = {.error_code = res->error_code,
                                   .generation_id = res->generation_id,
                                   .protocol_type = res->protocol_type,
                                   .protocol_name = res->protocol_name,
                                   .leader = res->leader_id,
                                   .member_id = res->member_id,
                                   .n_members = res->n_members};
    resp.members = arena_calloc(&op->arena, (size_t)(res->n_members ? res->n_members : 1),
                                sizeof(*resp.members));
    for (int32_t i = 0; i < res->n_members; i++)
        resp.members[i] = (struct join_group_member){
            res->members[i].member_id, res->members[i].instance_id, res->members[i].metadata};
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_join_group(&r.w, op->hdr.api_version, &resp);
    response_send(&r, op->slot);
    op_free(op);
}

static void sync_done(void *waiter, const struct group_sync_result *res)
{
    struct group_op *op = waiter;
    struct sync_group_resp resp = {.error_code = res->error_code,
                                   .protocol_type = res->protocol_type,
                                   .protocol_name = res->protocol_name,
                                   .assignment = res->assignment};
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_sync_group(&r.w, op->hdr.api_version, &resp);
    response_send(&r, op->slot);
    op_free(op);
}

/* "/127.0.0.1" from "127.0.0.1:53412", as Kafka reports client hosts. */
static struct kstr client_host(struct request *req)
{
    const char *peer = conn_peer(req->conn);
    const char *colon = strrchr(peer, ':');
    size_t n = colon ? (size_t)(colon - peer) : strlen(peer);
    if (n >= 2 && peer[0] == '[' && peer[n - 1] == ']') {
        peer++;
        n -= 2;
    }
    char *s = arena_alloc(req->arena, n + 2);
    s[0] = '/';
    memcpy(s + 1, peer, n);
    s[n + 1] = '\0';
    return (struct kstr){s, (int32_t)(n + 1)};
}

int handle_join_group(struct request *req)
{
    struct join_group_req jr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_join_group(&req->body, v, req->arena, &jr) != 0)
        return -ERR_CORRUPT;
    struct group_join_req gr = {.member_id = jr.member_id,
                                .instance_id = jr.group_instance_id,
                                .client_id =
                                    req->hdr.client_id.len >= 0 ? req->hdr.client_id : kstr_c(""),
                                .client_host = client_host(req),
                                .protocol_type = jr.protocol_type,
                                .session_timeout_ms = jr.session_timeout_ms,
                                .rebalance_timeout_ms = jr.rebalance_timeout_ms,
                                .protocols = jr.protocols,
                                .n_protocols = jr.n_protocols,
                                .require_known_member_id = v >= 4};
    struct group_op *op = op_new(req);
    if (!authz_allows(req, ACL_OP_READ, ACL_RESOURCE_GROUP, jr.group_id)) {
        struct group_join_result res = {KERR_GROUP_AUTHORIZATION_FAILED, -1, KSTR_NULL,
                                        KSTR_NULL, kstr_c(""), kstr_c(""), NULL, 0};
        join_done(op, &res);
        return 0;
    }
    coordinator_join(req->b->groups, jr.group_id, &gr, op);
    return 0;
}

int handle_sync_group(struct request *req)
{
    struct sync_group_req sr;
    if (kmsg_decode_sync_group(&req->body, req->hdr.api_version, req->arena, &sr) != 0)
        return -ERR_CORRUPT;
    struct group_sync_req gr = {.member_id = sr.member_id,
                                .instance_id = sr.group_instance_id,
                                .generation_id = sr.generation_id,
                                .protocol_type = sr.protocol_type,
                                .protocol_name = sr.protocol_name,
                                .assignments = sr.assignments,
                                .n_assignments = sr.n_assignments};
    struct group_op *op = op_new(req);
    if (!authz_allows(req, ACL_OP_READ, ACL_RESOURCE_GROUP, sr.group_id)) {
        struct group_sync_result res = {.error_code = KERR_GROUP_AUTHORIZATION_FAILED,
                                        .protocol_type = KSTR_NULL,
                                        .protocol_name = KSTR_NULL};
        sync_done(op, &res);
        return 0;
    }
    coordinator_sync(req->b->groups, sr.group_id, &gr, op);
    return 0;
}

/* ---- Heartbeat / LeaveGroup ---- */

static void enc_heartbeat(struct kwriter *w, int16_t v, const void *p)
{
    kmsg_encode_heartbeat(w, v, p);
}

int handle_heartbeat(struct request *req)
{
    struct heartbeat_req hr;
    if (kmsg_decode_heartbeat(&req->body, req->hdr.api_version, req->arena, &hr) != 0)
        return -ERR_CORRUPT;
    struct heartbeat_resp resp = {0, KERR_GROUP_AUTHORIZATION_FAILED};
    if (authz_allows(req, ACL_OP_READ, ACL_RESOURCE_GROUP, hr.group_id))
        resp.error_code = coordinator_heartbeat(req->b->groups, &hr);
    send_now(req, enc_heartbeat, &resp);
    return 0;
}

static void enc_leave(struct kwriter *w, int16_t v, const void *p)
{
    kmsg_encode_leave_group(w, v, p);
}

int handle_leave_group(struct request *req)
{
    struct leave_group_req lr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_leave_group(&req->body, v, req->arena, &lr) != 0)
        return -ERR_CORRUPT;
    int16_t *errors =
        arena_calloc(req->arena, (size_t)(lr.n_members ? lr.n_members : 1), sizeof(*errors));
    struct leave_group_resp resp = {0};
    if (!authz_allows(req, ACL_OP_READ, ACL_RESOURCE_GROUP, lr.group_id)) {
        resp.error_code = KERR_GROUP_AUTHORIZATION_FAILED; /* no members, as Kafka answers */
        send_now(req, enc_leave, &resp);
        return 0;
    }
    resp.error_code =
        coordinator_leave(req->b->groups, lr.group_id, lr.members, lr.n_members, errors);
    resp.n_members = lr.n_members;
    resp.members =
        arena_calloc(req->arena, (size_t)(lr.n_members ? lr.n_members : 1), sizeof(*resp.members));
    for (int32_t i = 0; i < lr.n_members; i++)
        resp.members[i] = (struct leave_group_resp_member){
            lr.members[i].member_id, lr.members[i].group_instance_id, errors[i]};
    if (v <= 2 && resp.error_code == KERR_NONE && lr.n_members == 1)
        resp.error_code = errors[0]; /* one member: its error is the request's */
    send_now(req, enc_leave, &resp);
    return 0;
}

/* ---- OffsetCommit / OffsetFetch ---- */

static void commit_send(struct group_op *op)
{
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_offset_commit(&r.w, op->hdr.api_version, &op->resp.commit);
    response_send(&r, op->slot);
    op_free(op);
}

static void commit_done(void *arg)
{
    commit_send(arg);
}

int handle_offset_commit(struct request *req)
{
    struct offset_commit_req cr;
    if (kmsg_decode_offset_commit(&req->body, req->hdr.api_version, req->arena, &cr) != 0)
        return -ERR_CORRUPT;
    struct group_op *op = op_new(req);
    struct offset_commit_resp *resp = &op->resp.commit;
    resp->n_topics = cr.n_topics;
    resp->topics =
        arena_calloc(&op->arena, (size_t)(cr.n_topics ? cr.n_topics : 1), sizeof(*resp->topics));
    for (int32_t i = 0; i < cr.n_topics; i++) {
        struct offset_commit_resp_topic *t = &resp->topics[i];
        t->name = copy_str(&op->arena, cr.topics[i].name);
        t->n_partitions = cr.topics[i].n_partitions;
        t->partitions = arena_calloc(&op->arena, (size_t)(t->n_partitions ? t->n_partitions : 1),
                                     sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++)
            t->partitions[j].partition_index = cr.topics[i].partitions[j].partition_index;
    }
    if (!authz_on(req->b)) {
        if (!coordinator_commit(req->b->groups, &cr, resp, commit_done, op))
            commit_send(op);
        return 0;
    }
    /* READ on the group, then on each topic: the coordinator sees only the allowed topics (a
     * view whose topics share their partition arrays with the answer) */
    bool group_ok = authz_allows(req, ACL_OP_READ, ACL_RESOURCE_GROUP, cr.group_id);
    struct offset_commit_req sub = cr;
    struct offset_commit_resp view = *resp;
    sub.topics = arena_calloc(req->arena, (size_t)(cr.n_topics ? cr.n_topics : 1),
                              sizeof(*sub.topics));
    view.topics = arena_calloc(req->arena, (size_t)(cr.n_topics ? cr.n_topics : 1),
                               sizeof(*view.topics));
    sub.n_topics = view.n_topics = 0;
    for (int32_t i = 0; i < cr.n_topics; i++) {
        struct offset_commit_resp_topic *t = &resp->topics[i];
        int16_t ec = !group_ok ? KERR_GROUP_AUTHORIZATION_FAILED
                     : !authz_allows(req, ACL_OP_READ, ACL_RESOURCE_TOPIC, cr.topics[i].name)
                         ? KERR_TOPIC_AUTHORIZATION_FAILED
                         : KERR_NONE;
        for (int32_t j = 0; j < t->n_partitions; j++)
            t->partitions[j].error_code = ec;
        if (ec == KERR_NONE) {
            sub.topics[sub.n_topics++] = cr.topics[i];
            view.topics[view.n_topics++] = *t;
        }
    }
    if (!group_ok || !coordinator_commit(req->b->groups, &sub, &view, commit_done, op))
        commit_send(op);
    return 0;
}

static void enc_offset_fetch(struct kwriter *w, int16_t v, const void *p)
{
    kmsg_encode_offset_fetch(w, v, p);
}

/* OffsetFetch of one group as the principal may see it: with DESCRIBE on the group, the topics
 * it may DESCRIBE (asked for by name: the others' partitions TOPIC_AUTHORIZATION_FAILED; every
 * topic: the others left out); without it, GROUP_AUTHORIZATION_FAILED. */
static void fetch_offsets(struct request *req, const struct offset_fetch_req *fr,
                          struct offset_fetch_resp *resp)
{
    if (!authz_allows(req, ACL_OP_DESCRIBE, ACL_RESOURCE_GROUP, fr->group_id)) {
        *resp = (struct offset_fetch_resp){.error_code = KERR_GROUP_AUTHORIZATION_FAILED};
        if (fr->n_topics <= 0)
            return;
        resp->topics = arena_calloc(req->arena, (size_t)fr->n_topics, sizeof(*resp->topics));
        resp->n_topics = fr->n_topics;
        for (int32_t i = 0; i < fr->n_topics; i++) { /* v0-1 read the error here */
            const struct offset_fetch_req_topic *t = &fr->topics[i];
            struct offset_fetch_resp_topic *o = &resp->topics[i];
            o->name = t->name;
            o->n_partitions = t->n_partition_indexes;
            o->partitions = arena_calloc(req->arena, (size_t)(o->n_partitions ? o->n_partitions : 1),
                                         sizeof(*o->partitions));
            for (int32_t j = 0; j < o->n_partitions; j++)
                o->partitions[j] = (struct offset_fetch_resp_partition){
                    t->partition_indexes[j], -1, -1, KSTR_NULL, KERR_GROUP_AUTHORIZATION_FAILED};
        }
        return;
    }
    coordinator_fetch_offsets(req->b->groups, fr, req->arena, resp);
    if (!authz_on(req->b))
        return;
    int32_t kept = 0;
    for (int32_t i = 0; i < resp->n_topics; i++) {
        struct offset_fetch_resp_topic *o = &resp->topics[i];
        bool ok = fr->n_topics < 0
                      ? authz_allows_quiet(req, ACL_OP_DESCRIBE, ACL_RESOURCE_TOPIC, o->name)
                      : authz_allows(req, ACL_OP_DESCRIBE, ACL_RESOURCE_TOPIC, o->name);
        if (!ok && fr->n_topics < 0)
            continue;
        for (int32_t j = 0; !ok && j < o->n_partitions; j++)
            o->partitions[j] = (struct offset_fetch_resp_partition){
                o->partitions[j].partition_index, -1, -1, KSTR_NULL,
                KERR_TOPIC_AUTHORIZATION_FAILED};
        resp->topics[kept++] = *o;
    }
    resp->n_topics = kept;
}

int handle_offset_fetch(struct request *req)
{
    struct offset_fetch_req fr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_offset_fetch(&req->body, v, req->arena, &fr) != 0)
        return -ERR_CORRUPT;
    struct offset_fetch_resp resp;
    if (v >= 8) { /* several groups: each is asked as a v7 request for one group would be */
        resp = (struct offset_fetch_resp){0};
        resp.groups =
            arena_calloc(req->arena, (size_t)(fr.n_groups ? fr.n_groups : 1), sizeof(*resp.groups));
        resp.n_groups = fr.n_groups;
        for (int32_t i = 0; i < fr.n_groups; i++) {
            const struct offset_fetch_req_group *g = &fr.groups[i];
            struct offset_fetch_req one = {.group_id = g->group_id,
                                           .topics = g->topics,
                                           .n_topics = g->n_topics,
                                           .require_stable = fr.require_stable};
            struct offset_fetch_resp got;
            fetch_offsets(req, &one, &got);
            resp.groups[i] = (struct offset_fetch_resp_group){g->group_id, got.topics, got.n_topics,
                                                              got.error_code};
        }
        send_now(req, enc_offset_fetch, &resp);
        return 0;
    }
    fetch_offsets(req, &fr, &resp);
    if (v < 2 && resp.error_code != KERR_NONE) {
        /* no top-level error before v2: it is in every partition already */
        resp.error_code = KERR_NONE;
    }
    send_now(req, enc_offset_fetch, &resp);
    return 0;
}

/* ---- DescribeGroups / ListGroups ---- */

static void enc_describe(struct kwriter *w, int16_t v, const void *p)
{
    kmsg_encode_describe_groups(w, v, p);
}

int handle_describe_groups(struct request *req)
{
    struct describe_groups_req dr;
    if (kmsg_decode_describe_groups(&req->body, req->hdr.api_version, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct describe_groups_resp resp = {0};
    resp.n_groups = dr.n_groups;
    resp.groups =
        arena_calloc(req->arena, (size_t)(dr.n_groups ? dr.n_groups : 1), sizeof(*resp.groups));
    for (int32_t i = 0; i < dr.n_groups; i++) {
        if (authz_allows(req, ACL_OP_DESCRIBE, ACL_RESOURCE_GROUP, dr.groups[i])) {
            coordinator_describe(req->b->groups, dr.groups[i], req->arena, &resp.groups[i]);
            continue;
        }
        resp.groups[i] = (struct describe_groups_group){
            .error_code = KERR_GROUP_AUTHORIZATION_FAILED, .group_id = dr.groups[i],
            .group_state = kstr_c(""), .protocol_type = kstr_c(""), .protocol_data = kstr_c(""),
            .authorized_operations = INT32_MIN};
    }
    send_now(req, enc_describe, &resp);
    return 0;
}

static void enc_list(struct kwriter *w, int16_t v, const void *p)
{
    kmsg_encode_list_groups(w, v, p);
}

int handle_list_groups(struct request *req)
{
    struct list_groups_req lr;
    if (kmsg_decode_list_groups(&req->body, req->hdr.api_version, req->arena, &lr) != 0)
        return -ERR_CORRUPT;
    struct list_groups_resp resp;
    coordinator_list(req->b->groups, &lr, req->arena, &resp);
    /* DESCRIBE on the cluster lists every group; else only those the principal may DESCRIBE */
    if (authz_on(req->b) && !authz_allows_quiet(req, ACL_OP_DESCRIBE, ACL_RESOURCE_CLUSTER,
                                                kstr_c(ACL_CLUSTER_NAME))) {
        int32_t kept = 0;
        for (int32_t i = 0; i < resp.n_groups; i++)
            if (authz_allows_quiet(req, ACL_OP_DESCRIBE, ACL_RESOURCE_GROUP,
                                   resp.groups[i].group_id))
                resp.groups[kept++] = resp.groups[i];
        resp.n_groups = kept;
    }
    send_now(req, enc_list, &resp);
    return 0;
}

/* ---- DeleteGroups / OffsetDelete ---- */

static void delete_release(struct group_op *op)
{
    if (--op->waiting > 0)
        return;
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_delete_groups(&r.w, op->hdr.api_version, &op->resp.del);
    response_send(&r, op->slot);
    op_free(op);
}

static void delete_done(void *arg)
{
    delete_release(arg);
}

int handle_delete_groups(struct request *req)
{
    struct delete_groups_req dr;
    if (kmsg_decode_delete_groups(&req->body, req->hdr.api_version, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct group_op *op = op_new(req);
    struct delete_groups_resp *resp = &op->resp.del;
    resp->n_results = dr.n_groups_names;
    resp->results = arena_calloc(&op->arena, (size_t)(dr.n_groups_names ? dr.n_groups_names : 1),
                                 sizeof(*resp->results));
    op->waiting = 1; /* the handler's own hold: no answer before the loop ends */
    for (int32_t i = 0; i < dr.n_groups_names; i++) {
        resp->results[i].group_id = copy_str(&op->arena, dr.groups_names[i]);
        if (!authz_allows(req, ACL_OP_DELETE, ACL_RESOURCE_GROUP, dr.groups_names[i])) {
            resp->results[i].error_code = KERR_GROUP_AUTHORIZATION_FAILED;
            continue;
        }
        bool pending;
        op->waiting++;
        resp->results[i].error_code =
            coordinator_delete_group(req->b->groups, dr.groups_names[i], delete_done, op, &pending);
        if (!pending)
            op->waiting--;
    }
    delete_release(op);
    return 0;
}

static void odel_send(struct group_op *op)
{
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_offset_delete(&r.w, op->hdr.api_version, &op->resp.odel);
    response_send(&r, op->slot);
    op_free(op);
}

static void odel_done(void *arg)
{
    odel_send(arg);
}

int handle_offset_delete(struct request *req)
{
    struct offset_delete_req dr;
    if (kmsg_decode_offset_delete(&req->body, req->hdr.api_version, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct group_op *op = op_new(req);
    struct offset_delete_resp *resp = &op->resp.odel;
    resp->n_topics = dr.n_topics;
    resp->topics =
        arena_calloc(&op->arena, (size_t)(dr.n_topics ? dr.n_topics : 1), sizeof(*resp->topics));
    for (int32_t i = 0; i < dr.n_topics; i++) {
        struct offset_delete_resp_topic *t = &resp->topics[i];
        t->name = copy_str(&op->arena, dr.topics[i].name);
        t->n_partitions = dr.topics[i].n_partitions;
        t->partitions = arena_calloc(&op->arena, (size_t)(t->n_partitions ? t->n_partitions : 1),
                                     sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++)
            t->partitions[j].partition_index = dr.topics[i].partitions[j];
    }
    bool pending = false;
    /* DELETE on the group, then READ on each topic: the coordinator sees only the allowed
     * topics (a view sharing the answer's partition arrays) */
    struct offset_delete_req sub = dr;
    struct offset_delete_resp view = *resp;
    if (authz_on(req->b)) {
        sub.topics = arena_calloc(req->arena, (size_t)(dr.n_topics ? dr.n_topics : 1),
                                  sizeof(*sub.topics));
        view.topics = arena_calloc(req->arena, (size_t)(dr.n_topics ? dr.n_topics : 1),
                                   sizeof(*view.topics));
        sub.n_topics = view.n_topics = 0;
        for (int32_t i = 0; i < dr.n_topics; i++) {
            struct offset_delete_resp_topic *t = &resp->topics[i];
            if (authz_allows(req, ACL_OP_READ, ACL_RESOURCE_TOPIC, dr.topics[i].name)) {
                sub.topics[sub.n_topics++] = dr.topics[i];
                view.topics[view.n_topics++] = *t;
                continue;
            }
            for (int32_t j = 0; j < t->n_partitions; j++)
                t->partitions[j].error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
        }
    }
    if (!authz_allows(req, ACL_OP_DELETE, ACL_RESOURCE_GROUP, dr.group_id))
        resp->error_code = KERR_GROUP_AUTHORIZATION_FAILED;
    else
        resp->error_code =
            coordinator_delete_offsets(req->b->groups, &sub, &view, odel_done, op, &pending);
    if (resp->error_code != KERR_NONE) {
        for (int32_t i = 0; i < resp->n_topics; i++)
            resp->topics[i].n_partitions = 0; /* Kafka: no partitions with a group error */
        resp->n_topics = 0;
    }
    if (!pending)
        odel_send(op);
    return 0;
}

/* ---- the coordinator's storage ---- */

const struct topic_config_kv offsets_topic_overrides[OFFSETS_TOPIC_N_OVERRIDES] = {
    {"cleanup.policy", "compact"}, {"segment.bytes", "104857600"}};

/* The local topic of __consumer_offsets (its replicas here; the controller creates it, at the
 * first FindCoordinator: metadata.c), or NULL. */
static struct topic *offsets_topic(struct broker *b)
{
    return topic_find(b, kstr_c(OFFSETS_TOPIC));
}

static int io_append(void *ctx, int32_t partition, uint8_t *batch, size_t len,
                     void (*done)(void *arg, int rc, int64_t base_offset), void *arg)
{
    struct broker *b = ctx;
    if (b->stopping)
        return -ERR_CLOSED;
    struct topic *t = offsets_topic(b);
    if (!t)
        return -ERR_NOT_FOUND;
    if (partition < 0 || partition >= t->n_parts)
        return -ERR_INVALID;
    return broker_internal_append(b, t->parts[partition], batch, len, done, arg);
}

static bool io_partition_exists(void *ctx, struct kstr topic, int32_t partition)
{
    struct broker *b = ctx;
    return cluster_partition_exists(b->cluster, topic, partition); /* maybe no replica here */
}

struct replay {
    struct broker *b;
    int32_t partition;
};

static void replay_record(void *arg, const struct krecord *rec, int64_t offset)
{
    struct replay *rp = arg;
    (void)offset;
    coordinator_load_record(rp->b->groups, rp->partition, rec->key, rec->value);
}

static void group_join_done(void *waiter, const struct group_join_result *res)
{
    join_done(waiter, res);
}

static void group_sync_done(void *waiter, const struct group_sync_result *res)
{
    sync_done(waiter, res);
}

int groups_start(struct broker *b, char *err, size_t errcap)
{
    const struct broker_config *cfg = b->cfg;
    struct coordinator_config cc = {
        .group = {.min_session_timeout_ms = cfg->group_min_session_timeout_ms,
                  .max_session_timeout_ms = cfg->group_max_session_timeout_ms,
                  .initial_rebalance_delay_ms = cfg->group_initial_rebalance_delay_ms,
                  .max_size = cfg->group_max_size,
                  .max_metadata_bytes = cfg->group_max_metadata_bytes},
        .offsets_partitions = cfg->offsets_topic_num_partitions,
        .offsets_retention_ms = (int64_t)cfg->offsets_retention_minutes * 60000,
        .offsets_retention_check_ms = cfg->offsets_retention_check_interval_ms,
        .offset_metadata_max_bytes = cfg->offset_metadata_max_bytes,
        .max_groups = 100000,
        .cluster = true, /* partitions load as this broker comes to lead them */
    };
    struct coordinator_io io = {io_append, io_partition_exists, group_join_done, group_sync_done,
                                b};
    b->groups = coordinator_new(b->r, &cc, &io);
    (void)err;
    (void)errcap;
    return 0;
}

/* Replays __consumer_offsets-<index> into the coordinator once everything the log held when
 * this broker won its leadership is committed. */
static void offsets_load_if_ready(struct broker *b, struct partition *p, int64_t commit)
{
    if (!p->coord_loading || commit < p->coord_load_at)
        return;
    p->coord_loading = false;
    int64_t t0 = time_mono_ms();
    struct replay rp = {b, p->index};
    struct log_scan_stats scan = {0};
    int rc = partition_scan(p, plog_start_offset(p->log), plog_high_watermark(p->log),
                            replay_record, &rp, &scan);
    if (rc != 0) {
        /* stays loading: its groups get COORDINATOR_LOAD_IN_PROGRESS, never a partial state */
        log_error("groups_load_failed", "partition=%d error=\"%s\"", p->index, err_str(rc));
        return;
    }
    coordinator_load_end(b->groups, p->index);
    log_info("groups_loaded", "partition=%d groups=%zu batches=%d skipped=%d ms=%lld", p->index,
             coordinator_group_count(b->groups), scan.batches, scan.skipped,
             (long long)(time_mono_ms() - t0));
}

void groups_offsets_leader(struct broker *b, struct partition *p, bool leading)
{
    if (!b->groups)
        return;
    coordinator_set_partitions(b->groups, p->topic->n_parts);
    if (p->index >= coordinator_partitions(b->groups))
        return;
    p->coord_loading = false;
    if (!leading) {
        if (coordinator_owns(b->groups, p->index))
            coordinator_unload(b->groups, p->index);
        return;
    }
    coordinator_load_begin(b->groups, p->index);
    p->coord_loading = true;
    p->coord_load_at = plog_end_offset(p->log) - 1; /* -1: an empty log, nothing to wait for */
    struct host_group *g = p->group;
    struct replica_status st;
    replica_status(host_group_replica(g), &st);
    offsets_load_if_ready(b, p, st.commit);
}

void groups_offsets_commit(struct broker *b, struct partition *p, int64_t commit)
{
    if (b->groups)
        offsets_load_if_ready(b, p, commit);
}

void groups_stop(struct broker *b)
{
    if (!b->groups)
        return;
    coordinator_free(b->groups);
    b->groups = NULL;
}
