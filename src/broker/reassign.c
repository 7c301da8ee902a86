/* AlterPartitionReassignments and ListPartitionReassignments (KIP-455), on the one path.
 *
 * AlterPartitionReassignments: each partition of the request is checked against the metadata
 * image and submitted as one REASSIGN controller command (ctl_cmd_reassign); the answer comes
 * once every command is answered, each partition with its own error. The reassignment itself
 * runs afterwards: the partition's Raft leader adds the new replicas as learners, promotes them
 * once caught up, and reports the committed voters (broker/cluster.c "reassignments"), so the
 * API answers when the reassignment is recorded, as Kafka's does, not when it is done.
 * ListPartitionReassignments answers from the image: every partition with a target. So that a
 * client that lists right after altering (through the same broker) sees its reassignment, the
 * answer to AlterPartitionReassignments waits (at most VISIBLE_WAIT_MS) until this broker's
 * image shows each accepted target: a broker that is not the controller applies the metadata
 * log a fetch behind it (controller/runtime.h "Observers").
 *
 * State: one struct reassign_op per AlterPartitionReassignments request in flight, freed once
 * its last command is answered (pending reaches 0) and the targets are visible here. */
#include <stdio.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "broker/cluster.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "controller/image.h"
#include "controller/request.h"
#include "base/time.h"
#include "kafka/errors.h"
#include "net/reactor.h"

#define VISIBLE_WAIT_MS 2000
#define VISIBLE_POLL_MS 10

struct reassign_op;
struct reassign_item {
    struct reassign_op *op;
    struct alter_reassign_resp_partition *out;
    const char *topic; /* in op->arena */
    int32_t n_target;  /* 0: a cancel */
    int32_t target[CTL_REPLICAS_MAX];
    struct reassign_item *next; /* the op's items, for the visibility check */
};
struct reassign_op {
    struct broker *b;
    struct conn_slot *slot;
    struct kreq_header hdr;
    struct arena arena;
    int pending;
    struct alter_reassign_resp resp;
    struct reassign_item *items;
    struct reactor_timer timer;
    int64_t deadline_ms;
};

static struct kstr arena_kstr(struct arena *a, const char *s, size_t n)
{
    return (struct kstr){arena_strndup(a, s, n), (int32_t)n};
}

/* Whether this broker's image shows every accepted change of op. */
static bool visible(const struct reassign_op *op)
{
    const struct ctl_image *img = cluster_image(op->b->cluster);
    for (const struct reassign_item *it = op->items; it; it = it->next) {
        if (it->out->error_code != KERR_NONE)
            continue;
        const struct ctl_topic *t = ctl_image_topic(img, it->topic);
        if (!t || it->out->partition_index >= t->n_partitions)
            continue; /* deleted meanwhile: nothing to wait for */
        const struct ctl_partition *p = &t->parts[it->out->partition_index];
        bool shown = it->n_target == 0
                         ? p->n_target == 0
                         : ctl_ids_same_set(p->target, p->n_target, it->target, it->n_target) ||
                               (p->n_target == 0 &&
                                ctl_ids_same_set(p->replicas, p->n_replicas, it->target, it->n_target));
        if (!shown)
            return false;
    }
    return true;
}

static void answer(struct reassign_op *op)
{
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_alter_reassignments(&r.w, op->hdr.api_version, &op->resp);
    response_send(&r, op->slot);
    arena_destroy(&op->arena);
    mem_free(op);
}

static void on_visible_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct reassign_op *op = data;
    if (visible(op) || time_mono_ms() >= op->deadline_ms)
        return answer(op);
    reactor_timer_start(r, t, VISIBLE_POLL_MS);
}

static void op_release(struct reassign_op *op)
{
    if (--op->pending > 0)
        return;
    if (visible(op))
        return answer(op);
    op->deadline_ms = time_mono_ms() + VISIBLE_WAIT_MS;
    reactor_timer_init(&op->timer, on_visible_timer, op);
    reactor_timer_start(op->b->r, &op->timer, VISIBLE_POLL_MS);
}

static const char *error_text(int16_t ec)
{
    switch (ec) {
    case KERR_UNKNOWN_TOPIC_OR_PARTITION:
        return "The topic or partition does not exist.";
    case KERR_INVALID_REPLICA_ASSIGNMENT:
        return "Invalid replica assignment: replicas must be distinct registered brokers, at most "
               "16.";
    case KERR_NO_REASSIGNMENT_IN_PROGRESS:
        return "No reassignment is in progress for this partition.";
    case KERR_NOT_CONTROLLER:
        return "No controller available now; retry.";
    case KERR_REQUEST_TIMED_OUT:
        return "The controller did not answer in time; retry.";
    default:
        return kafka_error_name(ec);
    }
}

static void set_error(struct arena *a, struct alter_reassign_resp_partition *o, int16_t ec)
{
    o->error_code = ec;
    if (ec != KERR_NONE) {
        const char *t = error_text(ec);
        o->error_message = arena_kstr(a, t, strlen(t));
    }
}

static void on_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct reassign_item *it = data;
    (void)rt;
    set_error(&it->op->arena, it->out, a->error);
    op_release(it->op);
}

int handle_alter_partition_reassignments(struct request *req)
{
    struct broker *b = req->b;
    struct alter_reassign_req ar;
    if (kmsg_decode_alter_reassignments(&req->body, req->hdr.api_version, req->arena, &ar) != 0)
        return -ERR_CORRUPT;
    struct reassign_op *op = mem_calloc(1, sizeof(*op));
    op->b = b;
    op->slot = conn_slot_reserve(req->conn);
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL; /* points into the frame */
    arena_init(&op->arena, 1024);
    op->pending = 1;
    struct alter_reassign_resp *resp = &op->resp;
    resp->error_message = KSTR_NULL;
    resp->n_responses = ar.n_topics;
    resp->responses =
        arena_calloc(&op->arena, (size_t)(ar.n_topics > 0 ? ar.n_topics : 1), sizeof(*resp->responses));
    const struct ctl_image *img = cluster_image(b->cluster);
    if (!authz_allows_cluster(req, ACL_OP_ALTER)) {
        resp->error_code = KERR_CLUSTER_AUTHORIZATION_FAILED;
        resp->error_message = kstr_c("AlterPartitionReassignments needs Alter on the cluster");
        resp->n_responses = ar.n_topics = 0;
    }
    for (int32_t i = 0; i < ar.n_topics; i++) {
        const struct alter_reassign_req_topic *t = &ar.topics[i];
        struct alter_reassign_resp_topic *ot = &resp->responses[i];
        ot->name = arena_kstr(&op->arena, t->name.p ? t->name.p : "", (size_t)t->name.len);
        ot->n_partitions = t->n_partitions;
        ot->partitions = arena_calloc(&op->arena, (size_t)(t->n_partitions ? t->n_partitions : 1),
                                      sizeof(*ot->partitions));
        char *name = arena_strndup(req->arena, t->name.p ? t->name.p : "", (size_t)t->name.len);
        bool dup = kstr_dup_before(&ar.topics[0].name, i, sizeof(ar.topics[0]));
        const struct ctl_topic *ct = t->name.len > 0 && !memchr(name, 0, (size_t)t->name.len)
                                         ? ctl_image_topic(img, name)
                                         : NULL;
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct alter_reassign_req_partition *p = &t->partitions[j];
            struct alter_reassign_resp_partition *o = &ot->partitions[j];
            o->partition_index = p->partition_index;
            o->error_message = KSTR_NULL;
            bool pdup = false;
            for (int32_t k = 0; k < j; k++)
                pdup |= t->partitions[k].partition_index == p->partition_index;
            if (dup || pdup) {
                o->error_code = KERR_INVALID_REQUEST;
                o->error_message = arena_kstr(&op->arena, "Duplicate partition in the request.", 35);
                continue;
            }
            if (!ct || p->partition_index < 0 || p->partition_index >= ct->n_partitions) {
                set_error(&op->arena, o, KERR_UNKNOWN_TOPIC_OR_PARTITION);
                continue;
            }
            if (p->n_replicas == 0 || p->n_replicas > CTL_REPLICAS_MAX) {
                set_error(&op->arena, o, KERR_INVALID_REPLICA_ASSIGNMENT);
                continue;
            }
            struct ctl_request cmd = {.type = CTL_REQ_REASSIGN,
                                      .name = name,
                                      .partition = p->partition_index,
                                      .n_replicas = p->n_replicas < 0 ? 0 : p->n_replicas};
            if (p->n_replicas > 0)
                memcpy(cmd.replicas, p->replicas, (size_t)p->n_replicas * sizeof(int32_t));
            struct reassign_item *it = arena_calloc(&op->arena, 1, sizeof(*it));
            *it = (struct reassign_item){.op = op, .out = o, .n_target = cmd.n_replicas,
                                         .next = op->items};
            it->topic = arena_strndup(&op->arena, name, strlen(name));
            memcpy(it->target, cmd.replicas, sizeof(it->target));
            op->items = it;
            op->pending++;
            cluster_submit(b->cluster, &cmd, on_done, it);
        }
    }
    op_release(op);
    return 0;
}

/* Whether ListPartitionReassignments asked about partition pi of topic name (NULL topics: all). */
static bool listed(const struct list_reassign_req *lr, const char *name, int32_t pi)
{
    if (lr->n_topics < 0)
        return true;
    for (int32_t i = 0; i < lr->n_topics; i++) {
        const struct list_reassign_req_topic *t = &lr->topics[i];
        if ((size_t)t->name.len != strlen(name) || memcmp(t->name.p, name, strlen(name)) != 0)
            continue;
        for (int32_t j = 0; j < t->n_partitions; j++)
            if (t->partitions[j] == pi)
                return true;
    }
    return false;
}

int handle_list_partition_reassignments(struct request *req)
{
    struct broker *b = req->b;
    struct list_reassign_req lr;
    if (kmsg_decode_list_reassignments(&req->body, req->hdr.api_version, req->arena, &lr) != 0)
        return -ERR_CORRUPT;
    struct arena *a = req->arena;
    const struct ctl_image *img = cluster_image(b->cluster);
    struct list_reassign_resp resp = {.error_message = KSTR_NULL};
    resp.topics = arena_calloc(a, img->n_topics ? img->n_topics : 1, sizeof(*resp.topics));
    bool allowed = authz_allows_cluster(req, ACL_OP_DESCRIBE);
    if (!allowed) {
        resp.error_code = KERR_CLUSTER_AUTHORIZATION_FAILED;
        resp.error_message = kstr_c("ListPartitionReassignments needs Describe on the cluster");
    }
    for (size_t i = 0; allowed && i < img->n_topics; i++) {
        const struct ctl_topic *t = img->topics[i];
        struct list_reassign_resp_topic *ot = &resp.topics[resp.n_topics];
        for (int32_t pi = 0; pi < t->n_partitions; pi++) {
            const struct ctl_partition *p = &t->parts[pi];
            if (p->n_target == 0 || !listed(&lr, t->name, pi))
                continue;
            if (!ot->partitions) {
                ot->name = kstr_c(t->name);
                ot->partitions =
                    arena_calloc(a, (size_t)t->n_partitions, sizeof(*ot->partitions));
                resp.n_topics++;
            }
            struct list_reassign_resp_partition *op = &ot->partitions[ot->n_partitions++];
            op->partition_index = pi;
            /* Kafka's view: replicas = current + adding; adding = target - current;
             * removing = current - target */
            op->replicas = arena_calloc(a, 2 * CTL_REPLICAS_MAX, sizeof(int32_t));
            op->adding = arena_calloc(a, CTL_REPLICAS_MAX, sizeof(int32_t));
            op->removing = arena_calloc(a, CTL_REPLICAS_MAX, sizeof(int32_t));
            for (int32_t k = 0; k < p->n_replicas; k++) {
                op->replicas[op->n_replicas++] = p->replicas[k];
                if (!ctl_partition_has_target(p, p->replicas[k]))
                    op->removing[op->n_removing++] = p->replicas[k];
            }
            for (int32_t k = 0; k < p->n_target; k++)
                if (!ctl_partition_has_replica(p, p->target[k])) {
                    op->replicas[op->n_replicas++] = p->target[k];
                    op->adding[op->n_adding++] = p->target[k];
                }
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_list_reassignments(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}
