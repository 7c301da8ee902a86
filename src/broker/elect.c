/* ElectLeaders: the asking broker's requests and the leader side's transfers (see elect.h).
 *
 * State: struct elect (b->elect), made by the first request or ELECT frame, freed by
 * elect_stop:
 *   ops    ElectLeaders requests in flight (struct elect_op): the parked response slot, the
 *          response being filled in, one struct elect_item per partition to ask, the deadline;
 *   waits  transfers this broker started as a partition's leader (struct elect_wait), each for
 *          one item of a local op or for a remote asker (its node and request id);
 *   timer  every ELECT_POLL_MS while ops or waits exist.
 *
 * Item states, and what moves them:
 *   ROUTE    to be asked at retry_ms (item_route: -> ASKED or DONE; ROUTE again, later, when no
 *            leader is known or the broker to ask cannot be sent to)
 *   ASKED    an answer awaited: from this broker's leader side (at once, or a local wait), or
 *            from another broker, whose ELECT request has id request_id (elect_deliver); the
 *            answer (item_answer) -> DONE, CONFIRM, or ROUTE (NOT_LEADER_OR_FOLLOWER: ask the
 *            leader it names, or again later)
 *   CONFIRM  NONE got; until this broker's own replica sees the preferred replica lead
 *            (op_tick -> DONE)
 *   DONE     its response entry (out) holds the result
 * At the deadline every item not DONE takes its result from its state (op_finish).
 *
 * Invariants:
 *  1. an op is answered and freed exactly once (op_answer), when no item is pending (op_check)
 *     or at its deadline (op_finish); before it is freed every wait pointing to one of its items
 *     is freed, and its request ids name nothing any more (a late answer is dropped);
 *  2. item_* functions change items and op->pending only; an op is answered by op_check or
 *     op_finish after the code walking its items or the waits is done with them, so no walk
 *     meets a freed op or wait;
 *  3. a request id is op seq << 32 | item index << 8 | attempt: one item and one asking of it;
 *  4. the timer runs while ops or waits exist (arm after each change that adds one, re-armed at
 *     the end of each tick). */
#include "broker/elect.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "base/check.h"
#include "base/errors.h"
#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/strmap.h"
#include "base/time.h"
#include "broker/authz.h"
#include "broker/cluster.h"
#include "broker/cluster_configs.h"
#include "broker/elect_rpc.h"
#include "broker/internal.h"
#include "controller/image.h"
#include "kafka/errors.h"
#include "raft/conf.h"
#include "raft/raft.h"
#include "replication/host.h"
#include "replication/replica.h"
#include "replication/rpc.h"
#include "replication/transport.h"

#define TRANSFER_TRIES 3 /* transfers started per wait: each refuses writes while it runs */

enum item_state { ITEM_ROUTE, ITEM_ASKED, ITEM_CONFIRM, ITEM_DONE };

struct elect;
struct elect_op;

struct elect_item {
    struct elect_op *op;
    struct elect_leaders_resp_partition *out; /* its entry in op->resp */
    const char *topic;                        /* in op->arena */
    int32_t partition;
    enum item_state state;
    int32_t pref;        /* the preferred replica, as last routed */
    int32_t hint;        /* ROUTE: the broker to ask (a NOT_LEADER_OR_FOLLOWER answer), -1 */
    int32_t asked;       /* the broker asked last, -1: none yet */
    int hops;            /* hints followed */
    uint8_t attempt;     /* askings so far (request ids) */
    uint64_t request_id; /* ASKED another broker: the id of the answer awaited; else 0 */
    int64_t retry_ms;    /* ROUTE: when to ask */
    bool leaderless;     /* ROUTE: no leader known at the last try */
    bool unreachable;    /* ROUTE: the broker to ask could not be sent to at the last try */
    bool transferring;   /* ASKED: the leader said it started the transfer (local waits) */
};

struct elect_op {
    struct list_node node; /* in elect.ops */
    struct elect *e;
    uint32_t seq;
    struct conn_slot *slot;
    struct kreq_header hdr;
    struct arena arena;
    struct elect_leaders_resp resp;
    bool all; /* topic_partitions was null: NOT_NEEDED results are left out */
    int8_t type;
    int32_t timeout_ms;
    int64_t start_ms;
    int64_t deadline_ms;
    struct elect_item *items;
    size_t n_items;
    size_t pending; /* items not DONE */
};

/* Where a leader-side result goes: a local item, or a remote asker's request. */
struct elect_reply {
    struct elect_item *item; /* NULL: remote */
    int32_t from;
    uint64_t request_id;
};

struct elect_wait {
    struct list_node node; /* in elect.waits */
    char *topic;           /* owned */
    int32_t partition;
    int32_t to;         /* the preferred replica the leadership goes to */
    int tries;          /* transfers started */
    int32_t timeout_ms; /* as asked, for messages */
    int64_t deadline_ms;
    struct elect_reply reply;
};

struct elect {
    struct broker *b;
    struct list_node ops;
    struct list_node waits;
    size_t n_waits;
    uint32_t next_seq;
    struct reactor_timer timer;
};

static void on_timer(struct reactor *r, struct reactor_timer *t, void *data);
static void item_answer(struct elect_item *it, const struct elect_rpc_answer *a);

static struct elect *elect_get(struct broker *b)
{
    if (!b->elect) {
        struct elect *e = mem_calloc(1, sizeof(*e));
        e->b = b;
        list_init(&e->ops);
        list_init(&e->waits);
        reactor_timer_init(&e->timer, on_timer, e);
        b->elect = e;
    }
    return b->elect;
}

static void arm(struct elect *e)
{
    if (!reactor_timer_active(&e->timer) && (!list_empty(&e->ops) || !list_empty(&e->waits)))
        reactor_timer_start(e->b->r, &e->timer, ELECT_POLL_MS);
}

static struct transport *transport_of(const struct elect *e)
{
    return host_transport(cluster_host(e->b->cluster));
}

static const char *type_name(int8_t type)
{
    return type == KAFKA_ELECTION_UNCLEAN     ? "UNCLEAN"
           : type == KAFKA_ELECTION_PREFERRED ? "PREFERRED"
                                              : "UNKNOWN";
}

__attribute__((format(printf, 4, 5))) static void
answer_set(struct elect_rpc_answer *a, int16_t error, int32_t leader, const char *fmt, ...)
{
    a->error = error;
    a->leader = leader;
    a->message[0] = '\0';
    if (!fmt)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof(a->message), fmt, ap);
    va_end(ap);
}

static void unclean_refused(struct elect_rpc_answer *a, const char *topic, int32_t partition)
{
    answer_set(a, KERR_ELIGIBLE_LEADERS_NOT_AVAILABLE, -1,
               "%s-%" PRId32 " has no leader, and none can be elected uncleanly: a partition is "
               "a Raft group, whose leader needs the votes of a majority of its replicas and "
               "holds every committed record; it gets one as soon as a majority is live",
               topic, partition);
}

/* ---- leader side ---- */

static void reply_send(struct elect *e, const struct elect_reply *r,
                       const struct elect_rpc_answer *a)
{
    if (r->item) {
        item_answer(r->item, a);
        return;
    }
    uint8_t buf[ELECT_RPC_ANSWER_MAX];
    size_t n = elect_rpc_answer_encode(a, buf);
    int rc = transport_send_controller(transport_of(e), r->from, RPC_BROKER_RESPONSE, r->request_id,
                                       buf, n);
    if (rc != 0)
        log_info("elect_answer_dropped", "to=%" PRId32 " error=%s err=\"%s\"", r->from,
                 kafka_error_name(a->error), err_str(rc));
}

/* Whether p's preferred replica may take the leadership from this broker now (gs: its replica
 * leads); if not, *a holds the result that says why. */
static bool preferred_ready(struct elect *e, const char *topic, int32_t partition,
                            const struct ctl_partition *p, const struct host_group_status *gs,
                            struct elect_rpc_answer *a)
{
    struct broker *b = e->b;
    int32_t self = b->cfg->node_id, pref = p->replicas[0];
    int64_t match;
    enum cluster_preferred st =
        cluster_preferred_state(cluster_image(b->cluster), p, self, &gs->rs, gs->rs.commit, &match);
    if (st == CLUSTER_PREFERRED_READY &&
        !raft_conf_side_has(gs->rs.conf.voters, gs->rs.conf.n_voters, pref))
        st = CLUSTER_PREFERRED_NOT_PEER; /* a learner, or only in the old side of a change */
    switch (st) {
    case CLUSTER_PREFERRED_SELF:
        answer_set(a, KERR_ELECTION_NOT_NEEDED, self, NULL);
        return false;
    case CLUSTER_PREFERRED_NOT_LIVE:
        answer_set(a, KERR_PREFERRED_LEADER_NOT_AVAILABLE, self,
                   "The preferred replica of %s-%" PRId32 ", broker %" PRId32
                   ", is not live (not registered, or fenced)",
                   topic, partition, pref);
        return false;
    case CLUSTER_PREFERRED_NOT_PEER:
        answer_set(a, KERR_PREFERRED_LEADER_NOT_AVAILABLE, self,
                   "The preferred replica of %s-%" PRId32 ", broker %" PRId32
                   ", is not a voter of its Raft group",
                   topic, partition, pref);
        return false;
    case CLUSTER_PREFERRED_BEHIND:
        if (match < 0)
            answer_set(a, KERR_PREFERRED_LEADER_NOT_AVAILABLE, self,
                       "The preferred replica of %s-%" PRId32 ", broker %" PRId32
                       ", has not caught up: it has not acknowledged any offset to this leader"
                       " yet (committed: below %" PRId64 ")",
                       topic, partition, pref, gs->rs.commit + 1);
        else
            answer_set(a, KERR_PREFERRED_LEADER_NOT_AVAILABLE, self,
                       "The preferred replica of %s-%" PRId32 ", broker %" PRId32
                       ", has not caught up: it has offsets below %" PRId64
                       ", the leader has committed those below %" PRId64,
                       topic, partition, pref, match + 1, gs->rs.commit + 1);
        return false;
    case CLUSTER_PREFERRED_READY:
        return true;
    }
    return false;
}

/* Starts (or starts again) the transfer of (g: topic-partition) to `to`; 0 or a negative code,
 * logged either way. */
static int start_transfer(struct elect *e, struct host_group *g, const struct host_group_status *gs,
                          int32_t to, int tries)
{
    int rc = host_transfer(g, to);
    log_info("elect_preferred",
             "topic=%s partition=%" PRId32 " from=%" PRId32 " to=%" PRId32 " term=%" PRId64
             " commit=%" PRId64 " try=%d rc=%d",
             host_group_topic(g), host_group_partition(g), e->b->cfg->node_id, to, gs->rs.term,
             gs->rs.commit, tries, rc);
    return rc;
}

/* The leader side for one partition (see elect.h): a result in reply at once, or a wait. */
static void elect_lead(struct elect *e, int8_t type, const char *topic, int32_t partition,
                       int32_t timeout_ms, struct elect_reply reply)
{
    struct broker *b = e->b;
    int32_t self = b->cfg->node_id;
    struct elect_rpc_answer a;
    const struct ctl_topic *t = ctl_image_topic(cluster_image(b->cluster), topic);
    struct host_group *g = cluster_group(b->cluster, topic, partition);
    struct host_group_status gs;
    if (!t || partition >= t->n_partitions) {
        answer_set(&a, KERR_UNKNOWN_TOPIC_OR_PARTITION, -1, "No such partition as %s-%" PRId32,
                   topic, partition);
        goto out;
    }
    if (!g) {
        answer_set(&a, KERR_NOT_LEADER_OR_FOLLOWER, -1,
                   "Broker %" PRId32 " has no replica of %s-%" PRId32, self, topic, partition);
        goto out;
    }
    host_group_status(g, &gs);
    int32_t leader = gs.rs.failed || gs.rs.leader == RAFT_NONE ? -1 : gs.rs.leader;
    if (type == KAFKA_ELECTION_UNCLEAN) {
        if (leader >= 0)
            answer_set(&a, KERR_ELECTION_NOT_NEEDED, leader, NULL);
        else
            unclean_refused(&a, topic, partition);
        goto out;
    }
    if (!gs.leading || gs.rs.failed) {
        answer_set(&a, KERR_NOT_LEADER_OR_FOLLOWER, leader,
                   "Broker %" PRId32 " does not lead %s-%" PRId32, self, topic, partition);
        goto out;
    }
    const struct ctl_partition *p = &t->parts[partition];
    if (!preferred_ready(e, topic, partition, p, &gs, &a))
        goto out;
    if (e->n_waits >= ELECT_WAITS_MAX) {
        answer_set(&a, KERR_REQUEST_TIMED_OUT, self,
                   "Too many leader elections in progress on broker %" PRId32 "; retry", self);
        goto out;
    }
    int rc = start_transfer(e, g, &gs, p->replicas[0], 1);
    if (rc != 0) {
        answer_set(&a, KERR_PREFERRED_LEADER_NOT_AVAILABLE, self,
                   "The transfer of %s-%" PRId32 " to broker %" PRId32 " did not start: %s", topic,
                   partition, p->replicas[0], err_str(rc));
        goto out;
    }
    struct elect_wait *w = mem_calloc(1, sizeof(*w));
    *w = (struct elect_wait){.topic = mem_strdup(topic),
                             .partition = partition,
                             .to = p->replicas[0],
                             .tries = 1,
                             .timeout_ms = timeout_ms,
                             .deadline_ms = time_mono_ms() + timeout_ms,
                             .reply = reply};
    list_push_back(&e->waits, &w->node);
    e->n_waits++;
    if (reply.item)
        reply.item->transferring = true;
    arm(e);
    return;
out:
    reply_send(e, &reply, &a);
}

/* Whether wait w has its result (into *a): see elect.h, "Leader side". */
static bool wait_poll(struct elect *e, struct elect_wait *w, int64_t now,
                      struct elect_rpc_answer *a)
{
    struct broker *b = e->b;
    int32_t self = b->cfg->node_id;
    struct host_group *g = cluster_group(b->cluster, w->topic, w->partition);
    if (!g) {
        answer_set(a, KERR_NOT_LEADER_OR_FOLLOWER, -1,
                   "Broker %" PRId32 " no longer has a replica of %s-%" PRId32, self, w->topic,
                   w->partition);
        return true;
    }
    struct host_group_status gs;
    host_group_status(g, &gs);
    if (!gs.rs.failed && gs.rs.leader == w->to) {
        answer_set(a, KERR_NONE, w->to, NULL);
        return true;
    }
    if (gs.leading && !gs.rs.failed) {
        if (raft_transferee(replica_raft(host_group_replica(g))) != RAFT_NONE)
            goto running;
        /* the transfer gave up (an election timeout): again, while it may still succeed */
        const struct ctl_topic *t = ctl_image_topic(cluster_image(b->cluster), w->topic);
        if (!t || w->partition >= t->n_partitions) {
            answer_set(a, KERR_UNKNOWN_TOPIC_OR_PARTITION, -1, "No such partition as %s-%" PRId32,
                       w->topic, w->partition);
            return true;
        }
        const struct ctl_partition *p = &t->parts[w->partition];
        if (!preferred_ready(e, w->topic, w->partition, p, &gs, a))
            return true;
        if (p->replicas[0] != w->to || w->tries >= TRANSFER_TRIES) {
            answer_set(a, KERR_PREFERRED_LEADER_NOT_AVAILABLE, self,
                       "Broker %" PRId32 " did not take the leadership of %s-%" PRId32
                       " (%d transfers gave up)",
                       w->to, w->topic, w->partition, w->tries);
            return true;
        }
        int rc = start_transfer(e, g, &gs, w->to, ++w->tries);
        if (rc != 0) {
            answer_set(a, KERR_PREFERRED_LEADER_NOT_AVAILABLE, self,
                       "The transfer of %s-%" PRId32 " to broker %" PRId32 " did not start: %s",
                       w->topic, w->partition, w->to, err_str(rc));
            return true;
        }
    } else if (!gs.rs.failed && gs.rs.leader != RAFT_NONE) {
        answer_set(a, KERR_NOT_LEADER_OR_FOLLOWER, gs.rs.leader,
                   "Broker %" PRId32 " leads %s-%" PRId32 " now, not broker %" PRId32, gs.rs.leader,
                   w->topic, w->partition, w->to);
        return true;
    }
running:
    if (now < w->deadline_ms)
        return false; /* the transfer runs, or the election it started does */
    answer_set(a, KERR_REQUEST_TIMED_OUT, self,
               "The leadership of %s-%" PRId32 " did not move to broker %" PRId32 " within %" PRId32
               " ms; it may still",
               w->topic, w->partition, w->to, w->timeout_ms);
    return true;
}

static void wait_free(struct elect *e, struct elect_wait *w)
{
    list_remove(&w->node);
    e->n_waits--;
    mem_free(w->topic);
    mem_free(w);
}

static void on_request(struct elect *e, int32_t from, uint64_t id, const uint8_t *body, size_t len)
{
    struct elect_rpc_req q;
    struct elect_reply reply = {NULL, from, id};
    if (elect_rpc_req_decode(body, len, &q) != 0) {
        log_warn("elect_request_bad", "from=%" PRId32 " bytes=%zu", from, len);
        struct elect_rpc_answer a;
        answer_set(&a, KERR_INVALID_REQUEST, -1, "Malformed ELECT request");
        reply_send(e, &reply, &a);
        return;
    }
    elect_lead(e, q.type, q.topic, q.partition, MIN(q.timeout_ms, ELECT_TIMEOUT_MAX_MS), reply);
}

/* ---- asking side ---- */

static struct kstr arena_kstr(struct arena *a, const char *s)
{
    size_t n = strlen(s);
    return (struct kstr){arena_strndup(a, s, n), (int32_t)n};
}

static void out_set(struct elect_op *op, struct elect_leaders_resp_partition *out, int16_t error,
                    const char *msg)
{
    out->error_code = error;
    out->error_message = msg && msg[0] ? arena_kstr(&op->arena, msg) : KSTR_NULL;
}

static void item_done(struct elect_item *it, int16_t error, const char *msg)
{
    CHECK(it->state != ITEM_DONE);
    it->state = ITEM_DONE;
    it->request_id = 0;
    out_set(it->op, it->out, error, msg);
    it->op->pending--;
}

static uint64_t item_id(const struct elect_item *it)
{
    uint64_t index = (uint64_t)(it - it->op->items);
    return (uint64_t)it->op->seq << 32 | index << 8 | it->attempt;
}

/* This broker's replica of the item's partition: its view of the leader (-1: none); false when
 * there is no usable replica here. */
static bool local_leader(const struct elect_item *it, int32_t *leader)
{
    struct host_group *g = cluster_group(it->op->e->b->cluster, it->topic, it->partition);
    if (!g)
        return false;
    struct host_group_status gs;
    host_group_status(g, &gs);
    if (gs.rs.failed)
        return false;
    *leader = gs.rs.leader == RAFT_NONE ? -1 : gs.rs.leader;
    return true;
}

static void item_later(struct elect_item *it, int64_t now, bool leaderless, bool unreachable)
{
    it->state = ITEM_ROUTE;
    it->leaderless = leaderless;
    it->unreachable = unreachable;
    it->retry_ms = now + ELECT_RETRY_MS;
}

/* Picks the broker to ask and asks it (see elect.h, steps 2 and 3). */
static void item_route(struct elect_item *it, int64_t now)
{
    struct elect_op *op = it->op;
    struct elect *e = op->e;
    struct broker *b = e->b;
    int32_t self = b->cfg->node_id;
    const struct ctl_image *img = cluster_image(b->cluster);
    const struct ctl_topic *t = ctl_image_topic(img, it->topic);
    char msg[ELECT_RPC_MESSAGE_MAX + 1];
    if (!t || it->partition >= t->n_partitions) {
        snprintf(msg, sizeof(msg), "No such partition as %s-%" PRId32, it->topic, it->partition);
        return item_done(it, KERR_UNKNOWN_TOPIC_OR_PARTITION, msg);
    }
    const struct ctl_partition *p = &t->parts[it->partition];
    it->pref = p->replicas[0];
    int32_t to = it->hint, leader = -1;
    it->hint = -1;
    if (to < 0 && local_leader(it, &leader)) {
        if (leader < 0 && op->type == KAFKA_ELECTION_UNCLEAN) {
            struct elect_rpc_answer a;
            unclean_refused(&a, it->topic, it->partition);
            return item_done(it, a.error, a.message);
        }
        if (leader < 0)
            return item_later(it, now, true, false);
        if (op->type == KAFKA_ELECTION_UNCLEAN || leader == it->pref)
            return item_done(it, KERR_ELECTION_NOT_NEEDED, NULL); /* as this replica sees it */
        to = leader;
    }
    for (int32_t i = 0; to < 0 && i < p->n_replicas; i++) /* the preferred replica first */
        if (ctl_image_broker_live(img, p->replicas[i]))
            to = p->replicas[i];
    if (to < 0) {
        if (op->type == KAFKA_ELECTION_UNCLEAN) {
            struct elect_rpc_answer a;
            unclean_refused(&a, it->topic, it->partition);
            return item_done(it, a.error, a.message);
        }
        return item_later(it, now, true, false);
    }
    it->asked = to;
    it->attempt++;
    it->state = ITEM_ASKED;
    it->transferring = false;
    int32_t left = (int32_t)MAX(0, op->deadline_ms - now - ELECT_SLACK_MS);
    if (to == self)
        return elect_lead(e, op->type, it->topic, it->partition, left,
                          (struct elect_reply){it, -1, 0});
    struct elect_rpc_req q = {.type = op->type, .timeout_ms = left, .partition = it->partition};
    snprintf(q.topic, sizeof(q.topic), "%s", it->topic);
    uint8_t buf[ELECT_RPC_REQ_MAX];
    size_t n = elect_rpc_req_encode(&q, buf);
    uint64_t id = item_id(it);
    int rc = transport_send_controller(transport_of(e), to, RPC_BROKER_REQUEST, id, buf, n);
    if (rc != 0)
        return item_later(it, now, false, true);
    it->request_id = id;
}

/* A result from the leader side (local or remote) for an ASKED item. */
static void item_answer(struct elect_item *it, const struct elect_rpc_answer *a)
{
    CHECK(it->state == ITEM_ASKED);
    it->request_id = 0;
    if (a->error == KERR_NOT_LEADER_OR_FOLLOWER) {
        bool follow = a->leader >= 0 && a->leader != it->asked && it->hops < ELECT_HOPS_MAX;
        int64_t now = time_mono_ms();
        item_later(it, now, a->leader < 0, false);
        if (follow) { /* at the next tick: never from inside the leader side's reply */
            it->hops++;
            it->hint = a->leader;
            it->retry_ms = now;
        }
        return;
    }
    int32_t leader;
    if (a->error == KERR_NONE && local_leader(it, &leader) && leader != it->pref) {
        it->state = ITEM_CONFIRM; /* this broker's replica has not seen the new leader yet */
        return;
    }
    item_done(it, a->error, a->message);
}

/* At the deadline: the result of an item still pending, from its state. */
static void item_expire(struct elect_item *it)
{
    struct elect_op *op = it->op;
    char msg[ELECT_RPC_MESSAGE_MAX + 1];
    switch (it->state) {
    case ITEM_CONFIRM:
        return item_done(it, KERR_NONE, NULL); /* it happened; this replica has not heard yet */
    case ITEM_ROUTE:
        if (it->leaderless) {
            snprintf(msg, sizeof(msg),
                     "%s-%" PRId32 " had no leader for %" PRId32
                     " ms (an election under way, or a majority of its replicas down)",
                     it->topic, it->partition, op->timeout_ms);
            return item_done(it, KERR_PREFERRED_LEADER_NOT_AVAILABLE, msg);
        }
        if (it->unreachable) {
            snprintf(msg, sizeof(msg),
                     "Broker %" PRId32 ", which leads %s-%" PRId32
                     " or knows who does, could not be reached within %" PRId32 " ms",
                     it->asked, it->topic, it->partition, op->timeout_ms);
            return item_done(it, KERR_REQUEST_TIMED_OUT, msg);
        }
        break;
    case ITEM_ASKED:
        snprintf(msg, sizeof(msg),
                 "No result from broker %" PRId32 " for %s-%" PRId32 " within %" PRId32 " ms%s",
                 it->asked, it->topic, it->partition, op->timeout_ms,
                 it->transferring ? "; the leadership may still move" : "");
        return item_done(it, KERR_REQUEST_TIMED_OUT, msg);
    case ITEM_DONE:
        return;
    }
    snprintf(msg, sizeof(msg), "The leader of %s-%" PRId32 " was not found within %" PRId32 " ms",
             it->topic, it->partition, op->timeout_ms);
    item_done(it, KERR_REQUEST_TIMED_OUT, msg);
}

/* Leaves out NOT_NEEDED results, and topics left empty (topic_partitions null, as Kafka). */
static void compact_all(struct elect_leaders_resp *resp)
{
    int32_t nt = 0;
    for (int32_t i = 0; i < resp->n_results; i++) {
        struct elect_leaders_resp_topic *t = &resp->results[i];
        int32_t np = 0;
        for (int32_t j = 0; j < t->n_partitions; j++)
            if (t->partitions[j].error_code != KERR_ELECTION_NOT_NEEDED)
                t->partitions[np++] = t->partitions[j];
        t->n_partitions = np;
        if (np > 0)
            resp->results[nt++] = *t;
    }
    resp->n_results = nt;
}

static void op_answer(struct elect_op *op)
{
    struct elect *e = op->e;
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &e->waits)
    {
        struct elect_wait *w = LIST_ENTRY(n, struct elect_wait, node);
        if (w->reply.item && w->reply.item->op == op)
            wait_free(e, w); /* the transfer goes on; nobody waits for its result */
    }
    size_t total = 0, elected = 0, not_needed = 0;
    for (int32_t i = 0; i < op->resp.n_results; i++)
        for (int32_t j = 0; j < op->resp.results[i].n_partitions; j++) {
            int16_t ec = op->resp.results[i].partitions[j].error_code;
            total++;
            elected += ec == KERR_NONE;
            not_needed += ec == KERR_ELECTION_NOT_NEEDED;
        }
    if (op->all)
        compact_all(&op->resp);
    struct response r;
    response_begin(&r, &op->hdr);
    kmsg_encode_elect_leaders(&r.w, op->hdr.api_version, &op->resp);
    response_send(&r, op->slot);
    log_info("elect_leaders",
             "type=%s all=%d partitions=%zu elected=%zu not_needed=%zu failed=%zu error=%s "
             "ms=%" PRId64,
             type_name(op->type), op->all ? 1 : 0, total, elected, not_needed,
             total - elected - not_needed, kafka_error_name(op->resp.error_code),
             time_mono_ms() - op->start_ms);
    list_remove(&op->node);
    arena_destroy(&op->arena);
    mem_free(op);
}

static void op_check(struct elect_op *op)
{
    if (op->pending == 0)
        op_answer(op);
}

static void op_finish(struct elect_op *op)
{
    for (size_t i = 0; i < op->n_items; i++)
        item_expire(&op->items[i]);
    op_answer(op);
}

static void op_tick(struct elect_op *op, int64_t now)
{
    for (size_t i = 0; i < op->n_items; i++) {
        struct elect_item *it = &op->items[i];
        int32_t leader;
        if (it->state == ITEM_ROUTE && now >= it->retry_ms && now < op->deadline_ms)
            item_route(it, now);
        else if (it->state == ITEM_CONFIRM && (!local_leader(it, &leader) || leader == it->pref))
            item_done(it, KERR_NONE, NULL);
    }
    if (now >= op->deadline_ms)
        op_finish(op);
    else
        op_check(op);
}

static void on_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct elect *e = data;
    (void)r;
    (void)t;
    int64_t now = time_mono_ms();
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &e->waits)
    {
        struct elect_wait *w = LIST_ENTRY(n, struct elect_wait, node);
        struct elect_rpc_answer a;
        if (!wait_poll(e, w, now, &a))
            continue;
        struct elect_reply reply = w->reply;
        wait_free(e, w);
        reply_send(e, &reply, &a); /* a local item's state only (invariant 2) */
    }
    LIST_FOREACH_SAFE(n, tmp, &e->ops)
    op_tick(LIST_ENTRY(n, struct elect_op, node), now);
    arm(e);
}

static void on_answer(struct elect *e, int32_t from, uint64_t id, const uint8_t *body, size_t len)
{
    struct elect_rpc_answer a;
    if (elect_rpc_answer_decode(body, len, &a) != 0) {
        log_warn("elect_answer_bad", "from=%" PRId32 " bytes=%zu", from, len);
        return;
    }
    uint32_t seq = (uint32_t)(id >> 32);
    size_t index = (size_t)(id >> 8) & 0xffffff;
    struct list_node *n;
    for (n = e->ops.next; n != &e->ops; n = n->next) {
        struct elect_op *op = LIST_ENTRY(n, struct elect_op, node);
        if (op->seq != seq)
            continue;
        struct elect_item *it = index < op->n_items ? &op->items[index] : NULL;
        if (!it || it->state != ITEM_ASKED || it->request_id != id || it->asked != from)
            return; /* an answer to an asking that is over */
        item_answer(it, &a);
        op_check(op);
        return;
    }
}

void elect_deliver(struct broker *b, int32_t from, uint8_t type, uint64_t request_id,
                   const uint8_t *body, size_t len)
{
    if (!b->cluster)
        return;
    struct elect *e = elect_get(b);
    if (type == RPC_BROKER_REQUEST)
        on_request(e, from, request_id, body, len);
    else if (type == RPC_BROKER_RESPONSE)
        on_answer(e, from, request_id, body, len);
    arm(e);
}

/* ---- the request ---- */

static struct elect_item *item_new(struct elect_op *op, struct elect_leaders_resp_partition *out,
                                   const char *topic, int32_t partition)
{
    struct elect_item *it = &op->items[op->n_items++];
    *it = (struct elect_item){.op = op,
                              .out = out,
                              .topic = topic,
                              .partition = partition,
                              .state = ITEM_ROUTE,
                              .pref = -1,
                              .hint = -1,
                              .asked = -1};
    op->pending++;
    return it;
}

/* The response entries and items of a request naming its partitions (top: a refusal of the
 * whole request, given to every partition). */
static void build_listed(struct elect_op *op, const struct elect_leaders_req *er, int16_t top,
                         const char *top_msg)
{
    struct arena *a = &op->arena;
    const struct ctl_image *img = cluster_image(op->e->b->cluster);
    size_t total = 0;
    for (int32_t i = 0; i < er->n_topics; i++)
        total += (size_t)er->topics[i].n_partitions;
    size_t cap = top == KERR_NONE ? MIN(total, (size_t)ELECT_ITEMS_MAX) : 0;
    op->items = arena_calloc(a, cap ? cap : 1, sizeof(*op->items));
    op->resp.n_results = er->n_topics;
    op->resp.results =
        arena_calloc(a, (size_t)(er->n_topics > 0 ? er->n_topics : 1), sizeof(*op->resp.results));
    struct strmap seen; /* "topic\0" + partition bytes: partitions named twice */
    strmap_init(&seen);
    char msg[ELECT_RPC_MESSAGE_MAX + 1];
    for (int32_t i = 0; i < er->n_topics; i++) {
        const struct elect_leaders_req_topic *t = &er->topics[i];
        struct elect_leaders_resp_topic *ot = &op->resp.results[i];
        size_t tlen = (size_t)(t->topic.len > 0 ? t->topic.len : 0);
        char *name = arena_strndup(a, t->topic.p ? t->topic.p : "", tlen);
        ot->topic = (struct kstr){name, (int32_t)tlen};
        ot->n_partitions = t->n_partitions;
        ot->partitions = arena_calloc(a, (size_t)(t->n_partitions > 0 ? t->n_partitions : 1),
                                      sizeof(*ot->partitions));
        bool named = tlen > 0 && tlen <= CTL_NAME_MAX && !memchr(name, 0, tlen);
        const struct ctl_topic *ct = named ? ctl_image_topic(img, name) : NULL;
        for (int32_t j = 0; j < t->n_partitions; j++) {
            int32_t pi = t->partitions[j];
            struct elect_leaders_resp_partition *o = &ot->partitions[j];
            o->partition_id = pi;
            if (top != KERR_NONE) {
                out_set(op, o, top, top_msg);
                continue;
            }
            char key[CTL_NAME_MAX + 1 + 4];
            size_t klen = 0;
            if (named) {
                memcpy(key, name, tlen + 1);
                memcpy(key + tlen + 1, &pi, 4);
                klen = tlen + 5;
            }
            if (klen && strmap_get(&seen, key, klen)) {
                out_set(op, o, KERR_INVALID_REQUEST, "Duplicate partition in the request");
                continue;
            }
            if (klen)
                strmap_put(&seen, key, klen, o);
            if (!ct) {
                snprintf(msg, sizeof(msg), "No such topic as %.*s", (int)MIN(tlen, 200), name);
                out_set(op, o, KERR_UNKNOWN_TOPIC_OR_PARTITION, msg);
            } else if (pi < 0 || pi >= ct->n_partitions) {
                snprintf(msg, sizeof(msg), "No such partition as %s-%" PRId32, name, pi);
                out_set(op, o, KERR_UNKNOWN_TOPIC_OR_PARTITION, msg);
            } else if (op->n_items == cap) {
                snprintf(msg, sizeof(msg), "More than %d partitions in one request",
                         ELECT_ITEMS_MAX);
                out_set(op, o, KERR_INVALID_REQUEST, msg);
            } else {
                item_new(op, o, name, pi);
            }
        }
    }
    strmap_destroy(&seen);
}

/* Every partition of the image (topic_partitions null); nothing when refused (top). */
static void build_all(struct elect_op *op, int16_t top)
{
    struct arena *a = &op->arena;
    const struct ctl_image *img = cluster_image(op->e->b->cluster);
    size_t total = 0;
    for (size_t i = 0; top == KERR_NONE && i < img->n_topics; i++)
        total += (size_t)img->topics[i]->n_partitions;
    size_t cap = MIN(total, (size_t)ELECT_ITEMS_MAX);
    op->items = arena_calloc(a, cap ? cap : 1, sizeof(*op->items));
    size_t nt = top == KERR_NONE ? img->n_topics : 0;
    op->resp.results = arena_calloc(a, nt ? nt : 1, sizeof(*op->resp.results));
    op->resp.n_results = (int32_t)nt;
    for (size_t i = 0; i < nt; i++) {
        const struct ctl_topic *t = img->topics[i];
        struct elect_leaders_resp_topic *ot = &op->resp.results[i];
        ot->topic = arena_kstr(a, t->name);
        ot->n_partitions = t->n_partitions;
        ot->partitions = arena_calloc(a, (size_t)(t->n_partitions > 0 ? t->n_partitions : 1),
                                      sizeof(*ot->partitions));
        for (int32_t pi = 0; pi < t->n_partitions; pi++) {
            struct elect_leaders_resp_partition *o = &ot->partitions[pi];
            o->partition_id = pi;
            if (op->n_items < cap)
                item_new(op, o, ot->topic.p, pi);
            else
                out_set(op, o, KERR_INVALID_REQUEST, "Too many partitions for one request");
        }
    }
}

int handle_elect_leaders(struct request *req)
{
    struct broker *b = req->b;
    struct elect_leaders_req er;
    if (kmsg_decode_elect_leaders(&req->body, req->hdr.api_version, req->arena, &er) != 0)
        return -ERR_CORRUPT;
    struct elect *e = elect_get(b);
    struct elect_op *op = mem_calloc(1, sizeof(*op));
    op->e = e;
    op->seq = ++e->next_seq;
    op->slot = conn_slot_reserve(req->conn);
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL; /* points into the frame */
    arena_init(&op->arena, 4096);
    op->all = er.n_topics < 0;
    op->type = er.election_type;
    op->timeout_ms = MIN(MAX(er.timeout_ms, 0), ELECT_TIMEOUT_MAX_MS);
    op->start_ms = time_mono_ms();
    op->deadline_ms = op->start_ms + op->timeout_ms;
    list_push_back(&e->ops, &op->node);

    int16_t top = KERR_NONE;
    char top_msg[64] = "";
    if (!authz_allows_cluster(req, ACL_OP_ALTER)) {
        top = KERR_CLUSTER_AUTHORIZATION_FAILED;
    } else if (op->type != KAFKA_ELECTION_PREFERRED && op->type != KAFKA_ELECTION_UNCLEAN) {
        top = KERR_INVALID_REQUEST;
        snprintf(top_msg, sizeof(top_msg), "Unknown election type %d", op->type);
    }
    op->resp.error_code = top;
    if (op->all)
        build_all(op, top);
    else
        build_listed(op, &er, top, top_msg);
    int64_t now = time_mono_ms();
    for (size_t i = 0; i < op->n_items; i++)
        if (op->items[i].state == ITEM_ROUTE)
            item_route(&op->items[i], now);
    op_check(op);
    arm(e);
    return 0;
}

void elect_stop(struct broker *b)
{
    struct elect *e = b->elect;
    if (!e)
        return;
    while (!list_empty(&e->ops))
        op_finish(LIST_ENTRY(e->ops.next, struct elect_op, node));
    while (!list_empty(&e->waits)) {
        struct elect_wait *w = LIST_ENTRY(e->waits.next, struct elect_wait, node);
        struct elect_reply reply = w->reply;
        struct elect_rpc_answer a;
        answer_set(&a, KERR_REQUEST_TIMED_OUT, -1, "Broker %" PRId32 " is shutting down",
                   b->cfg->node_id);
        wait_free(e, w);
        if (!reply.item)
            reply_send(e, &reply, &a);
    }
    reactor_timer_stop(b->r, &e->timer);
    mem_free(e);
    b->elect = NULL;
}
