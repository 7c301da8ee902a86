/* transport, controller runtime, replica host (see cluster.h).
 *
 * State: one struct cluster per broker, on the reactor thread.
 *   - registration: UNREGISTERED (a REGISTER_BROKER submit in flight or due at next_try_ms)
 *     -> REGISTERED (heartbeats every HEARTBEAT_MS; a heartbeat answered STALE_BROKER_EPOCH
 *     goes back to UNREGISTERED). At most one registration or heartbeat is in flight at a time
 *     (in_flight), so their answers never race each other.
 *   - producer ids: the allocator's source (cluster_pid_source_new) asks the controller for a
 *     block (ALLOC_PIDS, at most one in flight: pid_in_flight) and answers -EAGAIN until the
 *     grant is here (pid_ready); grants are checked (ids >= 0, above every block supplied)
 *     since they come over the network.
 *   - image_dirty: set by on_image_change (and at start), cleared by reconcile().
 *   - groups: the host groups this broker runs, each with the id of the topic it was added for.
 *   - next_balance_ms: when the next preferred-leader pass runs (cluster_balance.c; 0 until
 *     registered with auto.leader.rebalance.enable).
 *
 * Invariants:
 *  1. Every host group's plog belongs to a live local partition (topics.c): a group is
 *     removed before its topic is deleted, and cluster_stop closes the host before topics.c
 *     closes the logs.
 *  2. Nothing here runs inside a controller or transport callback except setting flags and
 *     stepping the controller: topics and groups change on the cluster timer only.
 *  3. The controller's Raft messages and frames leave through the shared transport; the timer
 *     flushes it every tick (TICK_MS), so a message waits at most one tick. */
#include "broker/cluster.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "base/check.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/siphash.h"
#include "base/strmap.h"
#include "base/time.h"
#include "broker/authz.h"
#include "broker/cluster_configs.h"
#include "broker/elect.h"
#include "broker/topic_ready.h"
#include "broker/internal.h"
#include "broker/schemas.h"
#include "broker/producer_ids.h"
#include "broker/producers.h"
#include "broker/quorum_state.h"
#include "controller/image.h"
#include "controller/mfetch.h"
#include "controller/request.h"
#include "controller/runtime.h"
#include "kafka/errors.h"
#include "replication/discover.h"
#include "replication/host.h"
#include "replication/replica.h"
#include "replication/rpc.h"
#include "replication/transport.h"
#include "security/peer_auth.h"
#include "storage/catalog.h"
#include "storage/plog.h"

#define TICK_MS 10
#define HEARTBEAT_MS 500
#define REGISTER_RETRY_MS 200
#define MOVE_TICK_MS 100
/* How long after its start the replicas it reopened report at debug until they know a leader */
#define START_QUIET_MS 30000
/* A learner is caught up (and promoted) once its match is within this many offsets of the
 * leader's commit: writes keep flowing during a move, so "equal" may never hold. */
#define MOVE_CATCH_UP_SLACK 10000

struct cgroup {
    char *topic; /* owned */
    int32_t partition;
    struct kuuid topic_id;
    struct host_group *g;
    int64_t leaderless_since; /* time_mono_ms since the replica knows no leader, or -1 */
    bool start_quiet; /* reopened at start, no leader known yet: its reports go to debug */
};

struct cluster {
    struct broker *b;
    struct peer_secret secret; /* cluster.secret.file (len 0: none); wiped by cluster_stop */
    struct host *host;
    struct ctl_runtime *ctl;
    struct reactor_timer timer;
    struct kuuid incarnation;
    char cluster_addr[BROKER_HOST_MAX + 16];
    char id[32]; /* quorum_id(): the transport's and Metadata's cluster id */
    /* the metadata quorum's voters with their cluster addresses (a standalone node: itself at
     * its bound port): what a joining node is told (describe_quorum) */
    struct broker_voter voters[BROKER_VOTERS_MAX];
    size_t n_voters;
    bool registered;
    bool in_flight; /* a command of ours awaits its answer */
    bool closing;
    int64_t next_try_ms; /* next registration or heartbeat */
    bool image_dirty;
    int64_t reconciled_ms;      /* when reconcile() last returned (time_mono_ms), 0 never */
    bool pid_in_flight;         /* an ALLOC_PIDS command awaits its answer */
    struct pid_block pid_ready; /* granted, not yet taken by the allocator (count 0: none) */
    int64_t pid_supplied_end;   /* end of the last block handed to the allocator */
    struct cgroup *groups;
    size_t n_groups;
    size_t cap_groups;
    /* group_key() -> index in groups + 1 (a linear search made creation quadratic) */
    struct strmap group_index;
    int64_t next_balance_ms; /* next preferred-leader pass (cluster_balance.c), 0: not set */
    bool moving;             /* a local partition has a reassignment in progress (moves_tick) */
    int64_t next_move_ms;
    bool move_in_flight;     /* a PARTITION_REPLICAS report awaits its answer */
    bool quorum_dirty;       /* the image's voters to be changed: rewrite quorum.state */
    char meta_dir[BROKER_PATH_MAX + 32];
    /* replicas reopened at start that know no leader yet (cgroup.start_quiet), those that know
     * one (at their open or since), how many of those lead here, and when the start began
     * (time_mono_ms) */
    size_t start_pending;
    size_t start_led;
    size_t start_leading;
    int64_t started_ms;
};

/* ---- transport <-> controller ---- */

static bool is_controller_group(const struct rpc_group *g)
{
    return g->partition == 0 && g->topic_len == strlen(RPC_CONTROLLER_TOPIC) &&
           memcmp(g->topic, RPC_CONTROLLER_TOPIC, g->topic_len) == 0;
}

static void on_foreign_msg(int32_t from, const struct rpc_group *g, const struct raft_msg *m,
                           void *data)
{
    struct cluster *c = data;
    (void)from;
    if (c->ctl && is_controller_group(g))
        (void)ctl_runtime_step(c->ctl, m); /* bad messages are the runtime's to refuse */
}

static void learn_fetcher(struct cluster *c, int32_t from, const uint8_t *body, size_t len);

static void on_controller_frame(int32_t from, uint8_t type, uint64_t request_id,
                                const uint8_t *body, size_t len, void *data)
{
    struct cluster *c = data;
    if ((type == RPC_BROKER_REQUEST || type == RPC_BROKER_RESPONSE) && len > 0 &&
        (body[0] == SCHEMAS_RPC_KIND || body[0] == SCHEMAS_FOLLOW_KIND))
        return schemas_deliver(c->b, from, type, request_id, body, len);
    if (type == RPC_BROKER_REQUEST || type == RPC_BROKER_RESPONSE)
        return elect_deliver(c->b, from, type, request_id, body, len);
    if (type == RPC_METADATA_FETCH)
        learn_fetcher(c, from, body, len);
    if (c->ctl)
        ctl_runtime_deliver(c->ctl, from, type, request_id, body, len);
}

static void send_raft(struct ctl_runtime *rt, const struct raft_msg *m, void *data)
{
    struct cluster *c = data;
    (void)rt;
    struct rpc_group g = {RPC_CONTROLLER_TOPIC, strlen(RPC_CONTROLLER_TOPIC), 0};
    (void)transport_send(host_transport(c->host), m->to, &g, m); /* Raft tolerates loss */
}

static int send_frame(struct ctl_runtime *rt, int32_t to, uint8_t type, uint64_t request_id,
                      const uint8_t *body, size_t len, void *data)
{
    struct cluster *c = data;
    (void)rt;
    return transport_send_controller(host_transport(c->host), to, type, request_id, body, len);
}

static void on_image_change(struct ctl_runtime *rt, const struct ctl_image *before,
                            const struct ctl_image *after, void *data)
{
    struct cluster *c = data;
    (void)rt;
    if (before->voters.n != after->voters.n ||
        memcmp(before->voters.ids, after->voters.ids,
               (size_t)after->voters.n * sizeof(after->voters.ids[0])) != 0)
        c->quorum_dirty = true;
    c->image_dirty = true;
    authz_image_changed(c->b);
    /* reconcile at the next iteration rather than the next tick: a topic just created takes
     * writes as soon as its local replicas run */
    reactor_timer_start(c->b->r, &c->timer, 0);
}

/* ---- registration and heartbeats ---- */

static void command_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data);

static void submit_own(struct cluster *c, bool heartbeat)
{
    const struct broker_config *cfg = c->b->cfg;
    struct ctl_request req = {.type = heartbeat ? CTL_REQ_HEARTBEAT : CTL_REQ_REGISTER_BROKER};
    req.reg.node_id = cfg->node_id;
    req.reg.incarnation = c->incarnation;
    req.reg.host = cfg->advertised_host;
    req.reg.port = c->b->advertised_port;
    req.reg.cluster_addr = c->cluster_addr;
    struct ctl_reg_endpoint eps[BROKER_LISTENERS_MAX];
    for (int i = 0; i < cfg->n_listeners && i < CTL_ENDPOINTS_MAX; i++) {
        const struct broker_listener *l = &cfg->listeners[i];
        eps[i] = (struct ctl_reg_endpoint){
            l->name, l->advertised_host,
            l->advertised_port > 0 ? l->advertised_port : listener_endpoint_port(c->b->lis, i)};
        req.reg.n_endpoints = i + 1;
    }
    req.reg.endpoints = eps;
    /* caught up: this node knows a controller leader and has applied what it committed */
    req.caught_up = ctl_runtime_caught_up(c->ctl);
    c->in_flight = true;
    ctl_runtime_submit(c->ctl, &req, command_done, c);
}

static void command_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct cluster *c = data;
    (void)rt;
    c->in_flight = false;
    if (c->closing)
        return;
    int64_t now = time_mono_ms();
    if (!c->registered) {
        if (a->error == KERR_NONE) {
            c->registered = true;
            log_info("cluster_registered", "node=%" PRId32 " controller=%" PRId32,
                     c->b->cfg->node_id, ctl_runtime_leader(c->ctl));
            c->next_try_ms = now;            /* heartbeat at once: unfences when caught up */
            broker_producers_prefetch(c->b); /* the first InitProducerId finds a block */
        } else {
            c->next_try_ms = now + REGISTER_RETRY_MS;
        }
        return;
    }
    if (a->error == KERR_STALE_BROKER_EPOCH) {
        log_warn("cluster_registration_lost", "node=%" PRId32 " action=register",
                 c->b->cfg->node_id);
        c->registered = false;
        c->next_try_ms = now;
        return;
    }
    /* other errors (no controller, timeout) are retried by the next heartbeat */
    c->next_try_ms = now + HEARTBEAT_MS;
}

/* ---- local replicas ---- */

static struct partition *group_partition(struct cluster *c, struct host_group *g)
{
    const char *topic = host_group_topic(g);
    return partition_find(c->b, (struct kstr){topic, (int32_t)strlen(topic)},
                          host_group_partition(g));
}

static bool is_offsets_topic(const struct partition *p)
{
    return !strcmp(p->topic->name, OFFSETS_TOPIC);
}

static bool is_schemas_partition(const struct partition *p)
{
    return p->index == 0 && !strcmp(p->topic->name, SCHEMAS_TOPIC);
}

static void on_commit(struct host_group *g, int64_t commit, void *data)
{
    struct cluster *c = data;
    struct partition *p = group_partition(c, g);
    if (!p)
        return;
    produce_raft_commit(p, host_group_replica(g), commit);
    if (is_offsets_topic(p))
        groups_offsets_commit(c->b, p, commit);
    else if (is_schemas_partition(p))
        schemas_commit(c->b, p, commit);
}

int partition_truncate_prefix(struct broker *b, struct partition *p, int64_t new_start)
{
    (void)b;
    return p->group ? host_compact(p->group, new_start) : -ERR_NOT_LEADER;
}

void partition_apply_retention(struct broker *b, struct partition *p, int64_t now_ms)
{
    (void)b;
    struct host_group *g = p->group;
    if (!g)
        return; /* its Raft group is not running (yet, or any more): the plog is Raft's */
    int64_t to = plog_retention_start(p->log, now_ms);
    if (to > plog_start_offset(p->log))
        (void)host_compact(g, to); /* a failure is logged; the next timer tries again */
}

/* The local replica g has failed (a disk error) and this node is its group's only voter: nobody
 * else holds the partition's data, so its committed part is still read here. */
static bool failed_sole_replica(const struct host_group *g, int32_t self)
{
    if (!replica_failed(host_group_replica(g)))
        return false; /* the common case, without building a status */
    struct host_group_status st;
    host_group_status(g, &st);
    const struct raft_conf *c = &st.rs.conf;
    return c->n_old == 0 && c->n_voters == 1 && c->voters[0] == self;
}

int16_t partition_read_check(struct broker *b, struct partition *p)
{
    if (!p->group)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    if (failed_sole_replica(p->group, b->cfg->node_id))
        return KERR_NONE;
    return partition_leader_check(b, p);
}

bool group_serves_failed(struct broker *b, const struct host_group *g)
{
    return g && failed_sole_replica(g, b->cfg->node_id);
}

int16_t partition_leader_check(struct broker *b, struct partition *p)
{
    (void)b;
    if (!p->group)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    const struct replica *rp = host_group_replica(p->group);
    if (replica_failed(rp) || plog_fenced(p->log))
        return KERR_KAFKA_STORAGE_ERROR; /* this replica stopped on a disk error */
    return raft_role(replica_raft(rp)) == RAFT_LEADER ? KERR_NONE : KERR_NOT_LEADER_OR_FOLLOWER;
}

/* The index key of a group: the topic's bytes and the big-endian partition (two keys of equal
 * length have topics of equal length, so it is unambiguous). Returns its length. */
static size_t group_key(char out[TOPIC_NAME_MAX + 4], const char *topic, int32_t partition)
{
    size_t n = strnlen(topic, TOPIC_NAME_MAX);
    memcpy(out, topic, n);
    be_put32((uint8_t *)out + n, (uint32_t)partition);
    return n + 4;
}

static void group_index_set(struct cluster *c, size_t i)
{
    char key[TOPIC_NAME_MAX + 4];
    size_t n = group_key(key, c->groups[i].topic, c->groups[i].partition);
    strmap_put(&c->group_index, key, n, (void *)(uintptr_t)(i + 1));
}

static struct cgroup *cgroup_find(const struct cluster *c, const char *topic, int32_t partition)
{
    char key[TOPIC_NAME_MAX + 4];
    size_t n = group_key(key, topic, partition);
    uintptr_t v = (uintptr_t)strmap_get(&c->group_index, key, n);
    return v ? &c->groups[v - 1] : NULL;
}

/* The replicas a start reopened have all reported a leader, or START_QUIET_MS went by: one line
 * for all of them (at 50,000 partitions a line each was 6 MB of log and a write each). */
static void start_reports_done(struct cluster *c)
{
    log_info("cluster_replicas_led",
             "replicas_led=%zu leading=%zu without_leader=%zu ms=%" PRId64,
             c->start_led, c->start_leading, c->start_pending,
             time_mono_ms() - c->started_ms);
    for (size_t i = 0; i < c->n_groups; i++)
        c->groups[i].start_quiet = false;
    c->start_pending = 0;
}

/* Leadership of a local replica changed: waits of the old term can no longer be settled here
 * (NOT_LEADER_OR_FOLLOWER, retriable). (Its producer state needs nothing: every replica's table
 * follows every batch its log takes, broker/producers.h.) A replica reopened at start reports
 * at debug until it knows a leader (start_reports_done sums them up). */
static void on_leader(struct host_group *g, const struct host_leader_change *ch, void *data)
{
    struct cluster *c = data;
    const char *topic = host_group_topic(g);
    int32_t index = host_group_partition(g);
    struct partition *p = group_partition(c, g);
    if (p && ch->term <= INT32_MAX && ch->term > p->leader_epoch)
        p->leader_epoch = (int32_t)ch->term;
    if (p) {
        produce_fail_waiters_but(p, ch->leading ? ch->term : -1, KERR_NOT_LEADER_OR_FOLLOWER);
        fetch_wake_all(p);
        if (is_offsets_topic(p)) /* the group coordinator moves with the leadership */
            groups_offsets_leader(c->b, p, ch->leading);
        else if (is_schemas_partition(p)) /* so does the registry's writer */
            schemas_leader(c->b, p, ch->leading);
    }
    struct cgroup *cg = cgroup_find(c, topic, index);
    if (cg)
        cg->leaderless_since = ch->leader == RAFT_NONE ? time_mono_ms() : -1;
    bool quiet = cg && cg->start_quiet;
    log_emit(quiet ? LOG_DEBUG : LOG_INFO, "cluster_partition_leader",
             "topic=%s partition=%" PRId32 " leader=%" PRId32 " term=%" PRId64 " leading=%d", topic,
             index, ch->leader, ch->term, ch->leading ? 1 : 0);
    if (quiet && ch->leader != RAFT_NONE) {
        cg->start_quiet = false;
        c->start_led++;
        c->start_leading += ch->leading;
        if (--c->start_pending == 0)
            start_reports_done(c);
    }
}

static void group_remove_at(struct cluster *c, size_t i)
{
    struct cgroup *cg = &c->groups[i];
    struct partition *p = group_partition(c, cg->g);
    if (p && is_offsets_topic(p))
        groups_offsets_leader(c->b, p, false);
    if (p)
        p->group = NULL;
    host_remove_group(c->host, cg->g);
    if (cg->start_quiet)
        c->start_pending--;
    log_info("cluster_replica_removed", "topic=%s partition=%" PRId32, cg->topic, cg->partition);
    char key[TOPIC_NAME_MAX + 4];
    strmap_del(&c->group_index, key, group_key(key, cg->topic, cg->partition));
    mem_free(cg->topic);
    c->groups[i] = c->groups[--c->n_groups];
    if (i < c->n_groups)
        group_index_set(c, i);
}

/* The local topic for image topic t (matched by name), created or grown as needed. NULL on
 * failure (logged; retried at the next change). A topic deleted and created again while this
 * broker was down keeps its old local data: not handled yet. */
static struct topic *local_topic(struct cluster *c, const struct ctl_topic *t)
{
    struct broker *b = c->b;
    struct kstr name = {t->name, (int32_t)strlen(t->name)};
    struct topic *lt = topic_find(b, name);
    char err[256];
    if (!lt) {
        /* the image's configs now (later changes: cluster_configs_apply) */
        const struct ctl_config *cf;
        size_t n_cf =
            ctl_image_configs_of(ctl_runtime_image(c->ctl), CTL_RESOURCE_TOPIC, t->name, &cf);
        struct topic_config_kv *kv = mem_calloc(n_cf ? n_cf : 1, sizeof(*kv));
        for (size_t i = 0; i < n_cf; i++)
            kv[i] = (struct topic_config_kv){cf[i].key, cf[i].value};
        int rc = topic_create(b, name, t->id.b, t->n_partitions, kv, (int)n_cf, err, sizeof(err));
        mem_free(kv);
        if (rc != 0 && n_cf > 0) { /* never lose the replica over a config this node refuses */
            log_warn("cluster_topic_configs_refused", "topic=%s error=\"%s\" action=defaults",
                     t->name, err);
            rc = topic_create(b, name, t->id.b, t->n_partitions, NULL, 0, err, sizeof(err));
        }
        if (rc != 0) {
            log_error("cluster_topic_create_failed", "topic=%s error=\"%s\"", t->name, err);
            return NULL;
        }
        lt = topic_find(b, name);
        CHECK(lt != NULL);
    } else if (memcmp(lt->id, t->id.b, sizeof(lt->id)) != 0 &&
               topic_set_id(b, lt, t->id.b) != 0) { /* a catalog of an older release */
        log_warn("cluster_topic_id_not_saved", "topic=%s", t->name);
    }
    if (lt->n_parts < t->n_partitions) {
        if (topic_add_partitions(b, lt, t->n_partitions, err, sizeof(err)) != 0) {
            log_error("cluster_partitions_create_failed", "topic=%s error=\"%s\"", t->name, err);
            return NULL;
        }
    }
    return lt;
}

static void reconcile(struct cluster *c)
{
    const struct ctl_image *img = ctl_runtime_image(c->ctl);
    int32_t self = c->b->cfg->node_id;
    c->image_dirty = false;
    /* removals first: groups whose topic or replica left the image; the local topic goes
     * with its last group when the image no longer has it (or has another topic of that name).
     * Local topics this run never attached are left alone: an image replayed from a metadata
     * log that is behind may not list them yet. */
    for (size_t i = c->n_groups; i-- > 0;) {
        struct cgroup *cg = &c->groups[i];
        const struct ctl_topic *t = ctl_image_topic(img, cg->topic);
        bool same = t && !memcmp(t->id.b, cg->topic_id.b, 16);
        if (same && cg->partition < t->n_partitions &&
            ctl_partition_has_member(&t->parts[cg->partition], self))
            continue;
        char name[TOPIC_NAME_MAX + 1];
        snprintf(name, sizeof(name), "%s", cg->topic);
        struct partition *lp = group_partition(c, cg->g);
        int32_t pi = cg->partition;
        group_remove_at(c, i);
        if (same) { /* only this replica moved away (a reassignment ended without it) */
            int rc = lp ? replica_discard(lp->log) : 0;
            if (rc != 0)
                log_error("cluster_replica_discard_failed",
                          "topic=%s partition=%" PRId32 " error=\"%s\"", name, pi, err_str(rc));
            else
                log_info("cluster_replica_discarded", "topic=%s partition=%" PRId32, name, pi);
            continue;
        }
        bool last = true;
        for (size_t j = 0; j < c->n_groups; j++)
            last &= strcmp(c->groups[j].topic, name) != 0;
        struct topic *lt = topic_find(c->b, (struct kstr){name, (int32_t)strlen(name)});
        if (last && lt) {
            log_info("cluster_topic_removed", "topic=%s", name);
            topic_delete(c->b, lt);
        }
    }
    /* creations */
    size_t n_reopened = 0;
    int64_t t0 = time_mono_ms();
    for (size_t ti = 0; ti < img->n_topics; ti++) {
        const struct ctl_topic *t = img->topics[ti];
        struct topic *lt = NULL;
        for (int32_t pi = 0; pi < t->n_partitions; pi++) {
            const struct ctl_partition *p = &t->parts[pi];
            if (!ctl_partition_has_member(p, self) || cgroup_find(c, t->name, pi))
                continue;
            if (!lt && !(lt = local_topic(c, t)))
                break;
            struct partition *lp = lt->parts[pi];
            struct host_group_callbacks cb = {
                .on_leader = on_leader, .on_commit = on_commit, .data = c};
            struct host_group *g;
            /* a replica the partition is being reassigned to joins with no configuration: it
             * learns it from the leader, which adds it as a learner (moves_tick), and it can
             * never stand for election on its own */
            bool joining = !ctl_partition_has_replica(p, self);
            int rc = host_add_group(c->host, t->name, pi, lp->log, joining ? NULL : p->replicas,
                                    joining ? 0 : (size_t)p->n_replicas, &cb, &g);
            if (rc != 0) {
                log_error("cluster_replica_open_failed",
                          "topic=%s partition=%" PRId32 " error=\"%s\"", t->name, pi, err_str(rc));
                continue;
            }
            lp->group = g;
            if (c->n_groups == c->cap_groups) {
                c->cap_groups = c->cap_groups ? 2 * c->cap_groups : 16;
                c->groups = mem_realloc(c->groups, c->cap_groups * sizeof(*c->groups));
            }
            c->groups[c->n_groups++] =
                (struct cgroup){mem_strdup(t->name), pi, t->id, g, time_mono_ms(), false};
            group_index_set(c, c->n_groups - 1);
            /* a new partition: its preferred replica stands at once rather than after an
             * election timeout, so the topic takes writes right after CreateTopics (as in
             * Kafka, where the controller names the leader); a replica that was not created
             * yet elsewhere only delays the election to the usual timeout */
            struct replica_status rst;
            replica_status(host_group_replica(g), &rst);
            /* one line per replica added (the replica's own replica_opened is at debug); those
             * a start reopens are at debug too, summed up below (fifty thousand partitions
             * restart in seconds, and a line each was a tenth of it) */
            bool reopened = !c->registered && (rst.term > 0 || rst.last >= 0);
            n_reopened += reopened;
            if (reopened && rst.leader == RAFT_NONE) {
                c->groups[c->n_groups - 1].start_quiet = true;
                c->start_pending++;
            } else if (reopened) {
                c->start_led++;
                c->start_leading += rst.leader == c->b->cfg->node_id;
            }
            log_emit(reopened ? LOG_DEBUG : LOG_INFO, "cluster_replica_added",
                     "topic=%s partition=%" PRId32 " replicas=%" PRId32 " joining=%d term=%" PRId64
                     " vote=%" PRId32 " log_start=%" PRId64 " log_end=%" PRId64 " commit=%" PRId64,
                     t->name, pi, p->n_replicas, joining ? 1 : 0, rst.term, rst.vote,
                     plog_start_offset(lp->log), rst.last + 1, rst.commit);
            if (p->replicas[0] == self && rst.term == 0 && rst.last < 0)
                (void)host_campaign(g);
        }
    }
    if (n_reopened > 0)
        log_info("cluster_replicas_reopened", "replicas=%zu ms=%" PRId64, n_reopened,
                 time_mono_ms() - t0);
    c->moving = false;
    for (size_t i = 0; i < c->n_groups && !c->moving; i++) {
        const struct ctl_partition *p =
            ctl_image_partition(img, c->groups[i].topic_id, c->groups[i].partition);
        c->moving = p && p->n_target > 0;
    }
    c->reconciled_ms = time_mono_ms();
}

/* ---- reassignments (AlterPartitionReassignments), carried out by each partition's leader ----
 * The image gives a partition a target; the leader of its Raft group adds the target's new
 * replicas as learners (they copy the log without counting for commits), promotes them through
 * joint consensus once each is within MOVE_CATCH_UP_SLACK of the commit index, and reports the
 * committed voters to the controller, which ends the reassignment (ctl_cmd_partition_replicas).
 * Every step is retried on the next pass until the image shows it done, so a leader change or a
 * lost report only delays it. */

static bool in_ids(const int32_t *ids, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return true;
    return false;
}

static void report_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct cluster *c = data;
    (void)rt;
    c->move_in_flight = false;
    if (a->error != KERR_NONE && !c->closing)
        log_info("cluster_move_report_refused", "error=%s", kafka_error_name(a->error));
}

static void move_one(struct cluster *c, const struct cgroup *cg, const struct ctl_partition *p)
{
    const struct raft *r = replica_raft(host_group_replica(cg->g));
    const struct raft_conf *conf = raft_conf(r);
    if (raft_role(r) != RAFT_LEADER || replica_failed(host_group_replica(cg->g)) ||
        raft_conf_is_joint(conf) || raft_conf_index(r) > raft_commit(r))
        return; /* not ours to drive, or a change is still on its way */
    int32_t add[RAFT_LEARNERS_MAX];
    size_t n_add = 0;
    for (int32_t i = 0; i < p->n_target; i++)
        if (!in_ids(conf->voters, conf->n_voters, p->target[i]) && n_add < RAFT_LEARNERS_MAX)
            add[n_add++] = p->target[i];
    bool extra = false; /* a voter the target leaves out */
    for (size_t i = 0; i < conf->n_voters; i++)
        extra |= !in_ids(p->target, (size_t)p->n_target, conf->voters[i]);
    if (n_add == 0 && extra) { /* only removals: one joint change to the target */
        int rc = host_propose_members(cg->g, p->target, (size_t)p->n_target, NULL, 0);
        if (rc == 0)
            log_info("cluster_move_shrink", "topic=%s partition=%" PRId32 " voters=%" PRId32,
                     cg->topic, cg->partition, p->n_target);
        return;
    }
    if (n_add == 0) { /* the voters are the target's: tell the controller */
        if (c->move_in_flight || conf->n_learners > 0) {
            if (conf->n_learners > 0)
                (void)host_propose_members(cg->g, conf->voters, conf->n_voters, NULL, 0);
            return;
        }
        struct ctl_request req = {.type = CTL_REQ_PARTITION_REPLICAS,
                                  .topic_id = cg->topic_id,
                                  .partition = cg->partition,
                                  .n_replicas = conf->n_voters};
        memcpy(req.replicas, conf->voters, conf->n_voters * sizeof(conf->voters[0]));
        c->move_in_flight = true;
        log_info("cluster_move_done", "topic=%s partition=%" PRId32 " replicas=%zu", cg->topic,
                 cg->partition, (size_t)conf->n_voters);
        ctl_runtime_submit(c->ctl, &req, report_done, c);
        return;
    }
    bool learners_match = conf->n_learners == n_add;
    for (size_t i = 0; i < n_add && learners_match; i++)
        learners_match = in_ids(conf->learners, conf->n_learners, add[i]);
    if (!learners_match) {
        int rc = host_propose_members(cg->g, conf->voters, conf->n_voters, add, n_add);
        if (rc == 0)
            log_info("cluster_move_learners", "topic=%s partition=%" PRId32 " learners=%zu",
                     cg->topic, cg->partition, n_add);
        return;
    }
    int64_t commit = raft_commit(r);
    for (size_t i = 0; i < n_add; i++) {
        int64_t m = raft_match_index(r, add[i]);
        if (m < 0 || m < commit - MOVE_CATCH_UP_SLACK)
            return; /* still catching up */
    }
    int32_t voters[RAFT_VOTERS_MAX];
    size_t n = 0;
    for (int32_t i = 0; i < p->n_target && n < RAFT_VOTERS_MAX; i++)
        voters[n++] = p->target[i];
    int rc = host_propose_members(cg->g, voters, n, NULL, 0);
    if (rc == 0)
        log_info("cluster_move_promote", "topic=%s partition=%" PRId32 " voters=%zu", cg->topic,
                 cg->partition, n);
}

static void moves_tick(struct cluster *c, int64_t now)
{
    if (!c->moving || now < c->next_move_ms)
        return;
    c->next_move_ms = now + MOVE_TICK_MS;
    const struct ctl_image *img = ctl_runtime_image(c->ctl);
    for (size_t i = 0; i < c->n_groups; i++) {
        const struct ctl_partition *p =
            ctl_image_partition(img, c->groups[i].topic_id, c->groups[i].partition);
        if (p && p->n_target > 0)
            move_one(c, &c->groups[i], p);
    }
}

/* ---- producer-id blocks from the controller ---- */

struct ctl_pid_source {
    struct pid_source base;
    struct broker *b;
    int64_t floor; /* blocks start at or above this (cluster_pid_source_new) */
};

static void pid_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct cluster *c = data;
    (void)rt;
    c->pid_in_flight = false;
    if (c->closing)
        return;
    if (a->error != KERR_NONE) {
        log_info("producer_ids_refused", "error=%s", kafka_error_name(a->error));
        return;
    }
    if (a->pid_size <= 0 || a->pid_first < c->pid_supplied_end ||
        a->pid_first > INT64_MAX - a->pid_size) {
        log_warn("producer_ids_bad_grant",
                 "first=%" PRId64 " size=%" PRId32 " supplied_end=%" PRId64, a->pid_first,
                 a->pid_size, c->pid_supplied_end);
        return;
    }
    c->pid_ready = (struct pid_block){a->pid_first, a->pid_size};
}

static int cps_next_block(struct pid_source *src, struct pid_block *out)
{
    const struct ctl_pid_source *cps = (const struct ctl_pid_source *)src;
    struct cluster *c = cps->b->cluster;
    if (!c)
        return -EAGAIN;
    if (c->pid_ready.count > 0) {
        *out = c->pid_ready;
        c->pid_supplied_end = out->first + out->count;
        c->pid_ready = (struct pid_block){0};
        return 0;
    }
    if (!c->pid_in_flight && c->registered) {
        struct ctl_request req = {.type = CTL_REQ_ALLOC_PIDS, .pid_floor = cps->floor};
        req.reg.node_id = c->b->cfg->node_id;
        req.reg.incarnation = c->incarnation;
        c->pid_in_flight = true;
        ctl_runtime_submit(c->ctl, &req, pid_done, c);
    }
    return -EAGAIN;
}

static int64_t cps_issued_end(const struct pid_source *src)
{
    const struct ctl_pid_source *cps = (const struct ctl_pid_source *)src;
    const struct cluster *c = cps->b->cluster;
    int64_t end = c ? MAX(ctl_image_pid_next(ctl_runtime_image(c->ctl)), c->pid_supplied_end) : 0;
    return MAX(end, cps->floor);
}

static void cps_destroy(struct pid_source *src)
{
    mem_free(src);
}

struct pid_source *cluster_pid_source_new(struct broker *b, int64_t floor)
{
    struct ctl_pid_source *s = mem_calloc(1, sizeof(*s));
    s->base = (struct pid_source){cps_next_block, cps_issued_end, cps_destroy};
    s->b = b;
    s->floor = floor > 0 ? floor : 0;
    return &s->base;
}

/* ---- peers beyond the voters (brokers that are not voters: observers) ----
 * The voters are the transport's peers from the start (their config entries are how they are
 * reached and are never replaced). Every other broker becomes a peer when this node learns its
 * cluster address: from its registration in the image (sync_peers, before each reconcile) or,
 * at a voter, from its metadata fetch (learn_fetcher: the answer must reach it before its
 * registration commits). */

static bool is_voter(const struct cluster *c, int32_t id)
{
    const struct broker_config *cfg = c->b->cfg;
    for (int i = 0; i < cfg->n_voters; i++)
        if (cfg->voters[i].id == id)
            return true;
    return false;
}

static void add_peer(struct cluster *c, int32_t id, const char *host, int port)
{
    if (id == c->b->cfg->node_id || is_voter(c, id))
        return;
    int rc = transport_add_peer(host_transport(c->host), id, host, port);
    if (rc < 0)
        log_warn("cluster_peer_refused", "peer=%" PRId32 " addr=%s:%d err=\"%s\"", id, host, port,
                 err_str(rc));
}

static void sync_peers(struct cluster *c)
{
    const struct ctl_image *img = ctl_runtime_image(c->ctl);
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct ctl_broker *br = &img->brokers[i];
        char host[CTL_ADDR_MAX + 1];
        int port;
        if (br->cluster_addr[0] && quorum_split_addr(br->cluster_addr, host, sizeof(host), &port))
            add_peer(c, br->id, host, port);
    }
}

static void learn_fetcher(struct cluster *c, int32_t from, const uint8_t *body, size_t len)
{
    struct ctl_mfetch_req req;
    if (ctl_mfetch_req_decode(body, len, &req) == 0) /* a bad one: the runtime logs it */
        add_peer(c, from, req.host, req.port);
}

static int write_quorum_state(struct cluster *c, bool voter);

/* ---- timer ---- */

/* Preferred-leader balancing (cluster_balance.c) every leader.imbalance.check.interval.seconds
 * once registered, when auto.leader.rebalance.enable. */
static void balance_tick(struct cluster *c, int64_t now)
{
    const struct broker_config *cfg = c->b->cfg;
    if (!cfg->auto_leader_rebalance_enable || !c->registered)
        return;
    if (c->next_balance_ms != 0 && now >= c->next_balance_ms)
        (void)cluster_balance(c->b);
    if (c->next_balance_ms == 0 || now >= c->next_balance_ms)
        c->next_balance_ms = now + (int64_t)cfg->leader_imbalance_check_interval_s * 1000;
}

static void on_timer(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct cluster *c = data;
    int64_t now = time_mono_ms();
    ctl_runtime_tick(c->ctl, now);
    if (!c->in_flight && now >= c->next_try_ms) {
        c->next_try_ms = now + (c->registered ? HEARTBEAT_MS : REGISTER_RETRY_MS);
        submit_own(c, c->registered);
    }
    if (c->quorum_dirty && c->b->cfg->n_voters == 0) {
        c->quorum_dirty = false;
        (void)write_quorum_state(c, !ctl_runtime_is_observer(c->ctl));
    }
    if (c->image_dirty) {
        sync_peers(c);
        reconcile(c);
        (void)cluster_configs_apply(c->b); /* topic configs of the image (cluster_configs.c) */
        schemas_image_changed(c->b);       /* a registry without a replica follows _schemas */
    }
    if (c->start_pending > 0 && now - c->started_ms >= START_QUIET_MS)
        start_reports_done(c); /* some never heard of a leader: their reports are info again */
    balance_tick(c, now);
    moves_tick(c, now);
    transport_flush(host_transport(c->host));
    reactor_timer_start(r, t, TICK_MS);
}

/* ---- lifecycle ---- */

/* The transport's cluster id: the same on every node of one quorum, derived from the voters. */
static void quorum_id(const struct broker_config *cfg, char *out, size_t cap)
{
    char canon[BROKER_VOTERS_MAX * (BROKER_HOST_MAX + 24)];
    size_t n = 0;
    for (int i = 0; i < cfg->n_voters; i++)
        n += (size_t)snprintf(canon + n, sizeof(canon) - n, "%" PRId32 "@%s:%d,", cfg->voters[i].id,
                              cfg->voters[i].host, cfg->voters[i].port);
    static const uint8_t key[SIPHASH_KEY_SIZE] = "streampulse-qrm";
    snprintf(out, cap, "sp-%016" PRIx64, siphash64(key, canon, n));
}

/* Voter id's cluster address: its registration's, else the one this node started with. */
static bool voter_addr(const struct cluster *c, int32_t id, struct broker_voter *out)
{
    out->id = id;
    const struct ctl_broker *br = ctl_image_broker(ctl_runtime_image(c->ctl), id);
    if (id == c->b->cfg->node_id && quorum_split_addr(c->cluster_addr, out->host,
                                                      sizeof(out->host), &out->port))
        return true;
    if (br && br->cluster_addr[0] &&
        quorum_split_addr(br->cluster_addr, out->host, sizeof(out->host), &out->port))
        return true;
    for (size_t i = 0; i < c->n_voters; i++) {
        if (c->voters[i].id == id) {
            *out = c->voters[i];
            return true;
        }
    }
    return false;
}

/* The quorum's voters as this node knows them, with addresses (those without one left out). */
static size_t current_voters(const struct cluster *c, struct broker_voter *out)
{
    int32_t ids[BROKER_VOTERS_MAX];
    size_t n = ctl_runtime_voters(c->ctl, ids, BROKER_VOTERS_MAX), k = 0;
    for (size_t i = 0; i < n; i++)
        if (voter_addr(c, ids[i], &out[k]))
            k++;
    return k;
}

/* The answer to a joining node's QUORUM_DESCRIBE (replication/transport.h). */
static int describe_quorum(struct rpc_quorum_info *out, void *data)
{
    const struct cluster *c = data;
    memset(out, 0, sizeof(*out));
    struct broker_voter v[BROKER_VOTERS_MAX];
    size_t n = c->ctl ? current_voters(c, v) : 0;
    if (n == 0)
        return -ERR_NOT_FOUND;
    snprintf(out->cluster_id, sizeof(out->cluster_id), "%s", c->id);
    int32_t leader = ctl_runtime_leader(c->ctl);
    out->leader = leader >= 0 ? leader : -1;
    out->n_voters = n;
    for (size_t i = 0; i < n; i++) {
        out->voters[i].id = v[i].id;
        snprintf(out->voters[i].host, sizeof(out->voters[i].host), "%s", v[i].host);
        out->voters[i].port = v[i].port;
    }
    return 0;
}

/* Rewrites quorum.state with the voters to be (those named by the image, else the current
 * ones); voter: whether this node counts among them from now on. */
static int write_quorum_state(struct cluster *c, bool voter)
{
    const struct ctl_image *img = ctl_runtime_image(c->ctl);
    struct quorum_state st = {0};
    snprintf(st.cluster_id, sizeof(st.cluster_id), "%s", c->id);
    if (img->voters.n > 0) {
        for (int32_t i = 0; i < img->voters.n; i++)
            if (voter_addr(c, img->voters.ids[i], &st.voters[st.n_voters]))
                st.n_voters++;
    } else {
        st.n_voters = current_voters(c, st.voters);
    }
    if (st.n_voters == 0)
        return -ERR_NOT_FOUND;
    int rc = quorum_state_write(c->b->cfg->log_dirs, &st);
    if (rc != 0)
        log_warn("cluster_quorum_state_not_written", "dir=%s err=\"%s\"", c->b->cfg->log_dirs,
                 err_str(rc));
    else
        log_info("cluster_quorum_state", "node=%" PRId32 " voters=%zu role=%s",
                 c->b->cfg->node_id, st.n_voters, voter ? "voter" : "observer");
    return rc;
}

static int on_member_change(struct ctl_runtime *rt, bool voter, void *data)
{
    (void)rt;
    return write_quorum_state(data, voter);
}

/* controller.quorum.bootstrap.servers: asks them which cluster this node joins (blocking,
 * before the reactor runs; replication/discover.h). Fills voters[] and id, or fails with why. */
static int bootstrap(const struct broker_config *cfg, const struct peer_secret *secret,
                     struct broker_voter *voters, size_t *n_voters, char *id, size_t idcap,
                     char *err, size_t errcap)
{
    struct discover_server servers[BROKER_VOTERS_MAX];
    for (int i = 0; i < cfg->n_bootstrap; i++)
        servers[i] = (struct discover_server){cfg->bootstrap[i].host, cfg->bootstrap[i].port};
    struct rpc_quorum_info info;
    char why[512];
    int rc = discover_quorum(servers, (size_t)cfg->n_bootstrap, cfg->node_id, secret,
                             cfg->cluster_dial_tls, cfg->quorum_bootstrap_timeout_ms, &info, why,
                             sizeof(why));
    if (rc != 0) {
        snprintf(err, errcap, "no answer from controller.quorum.bootstrap.servers=%s within %lld "
                 "ms (controller.quorum.bootstrap.timeout.ms): %s", cfg->quorum_bootstrap,
                 (long long)cfg->quorum_bootstrap_timeout_ms, why);
        return rc;
    }
    if (strlen(info.cluster_id) >= idcap) {
        snprintf(err, errcap, "the bootstrap servers' cluster id '%.64s' is longer than %zu bytes",
                 info.cluster_id, idcap - 1);
        return -ERR_INVALID;
    }
    for (size_t i = 0; i < info.n_voters; i++) {
        const struct rpc_quorum_voter *v = &info.voters[i];
        if (v->id == cfg->node_id) { /* a voter runs with controller.quorum.voters */
            snprintf(err, errcap, "node.id=%" PRId32 " is already voter %" PRId32 " (at %s:%d) "
                     "of the cluster the bootstrap servers belong to: give this node a node.id "
                     "of its own", cfg->node_id, v->id, v->host, v->port);
            return -ERR_INVALID;
        }
        if (strlen(v->host) >= sizeof(voters[i].host)) {
            snprintf(err, errcap, "voter %" PRId32 "'s host is too long", v->id);
            return -ERR_INVALID;
        }
        voters[i].id = v->id;
        snprintf(voters[i].host, sizeof(voters[i].host), "%s", v->host);
        voters[i].port = v->port;
    }
    *n_voters = info.n_voters;
    size_t idlen = strlen(info.cluster_id); /* < idcap: checked above */
    memcpy(id, info.cluster_id, idlen + 1);
    log_info("cluster_bootstrapped", "node=%" PRId32 " cluster=%s voters=%zu leader=%" PRId32,
             cfg->node_id, id, info.n_voters, info.leader);
    return 0;
}

int cluster_start(struct broker *b, char *err, size_t errcap)
{
    const struct broker_config *cfg = b->cfg;
    bool voter = false;
    struct transport_peer_config peers[BROKER_VOTERS_MAX];
    struct ctl_voter voters[BROKER_VOTERS_MAX];
    struct cluster *c = mem_calloc(1, sizeof(*c));
    strmap_init(&c->group_index);
    c->b = b;
    c->started_ms = time_mono_ms();
    if (cfg->cluster_secret_file[0] != '\0') {
        char why[BROKER_PATH_MAX + 128];
        if (peer_auth_load(cfg->cluster_secret_file, &c->secret, why, sizeof(why)) != 0) {
            snprintf(err, errcap, "cluster.secret.file: %s", why);
            mem_free(c);
            return -ERR_INVALID;
        }
    }
    snprintf(c->meta_dir, sizeof(c->meta_dir), "%s/%s", cfg->log_dirs, CLUSTER_METADATA_DIR);
    /* Without controller.quorum.voters the quorum is dynamic. Where this node stands, first
     * match wins: it has a metadata log (a standalone node, grown or not, or one that became
     * a voter: it opens as a voter, the log's configuration deciding); it kept quorum.state (an
     * observer that joined before, or a voter since removed: it observes those voters); it has
     * bootstrap servers (it asks them); else it is a new standalone node. */
    bool dynamic = cfg->n_voters == 0, have_log = false, have_state = false;
    struct quorum_state st;
    if (dynamic) {
        struct stat sb;
        have_log = stat(c->meta_dir, &sb) == 0 && S_ISDIR(sb.st_mode);
        int rc = quorum_state_read(cfg->log_dirs, &st, err, errcap);
        if (rc != 0 && rc != -ENOENT) {
            mem_free(c);
            return rc;
        }
        have_state = rc == 0;
    }
    if (dynamic && have_log && !have_state && ctl_runtime_dir_joined(c->meta_dir)) {
        snprintf(err, errcap, "%s holds the metadata log of a node that joined a cluster, but "
                 "%s/%s, which names that cluster, is missing: restore it", c->meta_dir,
                 cfg->log_dirs, QUORUM_STATE_FILE);
        mem_free(c);
        return -ERR_CORRUPT;
    }
    if (have_state) {
        for (size_t i = 0; i < st.n_voters; i++)
            c->voters[i] = st.voters[i];
        c->n_voters = st.n_voters;
        snprintf(c->id, sizeof(c->id), "%s", st.cluster_id);
    } else if (dynamic && !have_log && cfg->n_bootstrap > 0) {
        int rc = bootstrap(cfg, &c->secret, c->voters, &c->n_voters, c->id, sizeof(c->id), err,
                           errcap);
        if (rc != 0) {
            mem_free(c);
            return rc;
        }
        st = (struct quorum_state){.n_voters = c->n_voters};
        snprintf(st.cluster_id, sizeof(st.cluster_id), "%s", c->id);
        memcpy(st.voters, c->voters, c->n_voters * sizeof(c->voters[0]));
        rc = quorum_state_write(cfg->log_dirs, &st);
        if (rc != 0) {
            snprintf(err, errcap, "cannot write %s/%s: %s", cfg->log_dirs, QUORUM_STATE_FILE,
                     err_str(rc));
            mem_free(c);
            return rc;
        }
        have_state = true;
    } else {
        for (int i = 0; i < cfg->n_voters; i++)
            c->voters[i] = cfg->voters[i];
        c->n_voters = (size_t)cfg->n_voters;
    }
    size_t n_voters = c->n_voters;
    for (size_t i = 0; i < n_voters; i++) {
        const struct broker_voter *v = &c->voters[i];
        peers[i] = (struct transport_peer_config){v->id, v->host, v->port};
        voters[i] = (struct ctl_voter){v->id, v->host, v->port};
        voter |= v->id == cfg->node_id;
    }
    bool standalone = n_voters == 0;
    size_t n_peers = n_voters;
    if (standalone || (dynamic && have_log)) {
        /* standalone: the only voter of its own quorum (config.h), nobody to dial. A dynamic
         * node with a metadata log opens it with itself as the bootstrap configuration (what
         * it had as a standalone node; one that became a voter by a voter change ignores it,
         * ctl_runtime_open): the log's configuration entries say who votes now. */
        voters[0] = (struct ctl_voter){cfg->node_id, cfg->cluster_host, cfg->cluster_port};
        n_voters = 1;
        voter = true;
    }
    if (!voter && cfg->cluster_port <= 0) { /* config_load refuses this first */
        snprintf(err, errcap,
                 "node.id=%" PRId32 " is not in controller.quorum.voters: set "
                 "cluster.listener (its inter-broker host:port)",
                 cfg->node_id);
        mem_free(c);
        return -ERR_INVALID;
    }
    if (!voter && (!strcmp(cfg->cluster_host, "0.0.0.0") || !strcmp(cfg->cluster_host, "::") ||
                   !cfg->cluster_host[0])) {
        /* its address is what the other brokers dial (sent with its fetches and registration) */
        snprintf(err, errcap,
                 "node.id=%" PRId32 " is not a voter: its cluster.listener must be an address "
                 "the other brokers can dial, not '%s'",
                 cfg->node_id, cfg->cluster_host);
        mem_free(c);
        return -ERR_INVALID;
    }
    if (getrandom(c->incarnation.b, sizeof(c->incarnation.b), 0) !=
        (ssize_t)sizeof(c->incarnation.b)) {
        uint64_t x = (uint64_t)time_mono_ns() ^ ((uint64_t)cfg->node_id << 32);
        memcpy(c->incarnation.b, &x, sizeof(x));
    }
    /* the cluster id: a standalone node's is the one it drew for its data directory
     * (meta.properties); a static quorum's is derived from its voters, so that every node of it
     * agrees without being told */
    if (standalone && !have_state)
        snprintf(c->id, sizeof(c->id), "%s", b->cluster_id);
    else if (!dynamic)
        quorum_id(cfg, c->id, sizeof(c->id));
    /* else: the id quorum.state holds or the bootstrap servers gave */
    const char *qid = c->id;
    struct transport_config tc = {
        .self_id = cfg->node_id,
        .cluster_id = qid,
        .listen_host = cfg->cluster_host,
        .listen_port = cfg->cluster_port,
        .peers = peers,
        .n_peers = n_peers,
        .seed = c->incarnation.b[0] | (uint64_t)c->incarnation.b[1] << 8,
        .accept_any_node = true, /* brokers that are not voters: their HELLO comes first */
        .secret = &c->secret,
        .tls_server = cfg->cluster_tls, /* cluster.ssl.*: both or neither (server/) */
        .tls_client = cfg->cluster_dial_tls,
    };
    struct host_options ho = {.seed = tc.seed};
    int rc = host_new(b->r, &tc, &ho, &c->host);
    if (rc != 0) {
        snprintf(err, errcap, "cannot listen on the cluster address %s:%d: %s", cfg->cluster_host,
                 cfg->cluster_port, err_str(rc));
        mem_free(c);
        return rc;
    }
    /* the address registered with the controller: the port bound (cluster.listener may ask for
     * any free one) */
    snprintf(c->cluster_addr, sizeof(c->cluster_addr), "%s:%d", cfg->cluster_host,
             transport_port(host_transport(c->host)));
    host_set_foreign_cb(c->host, on_foreign_msg, c);
    transport_set_controller_cb(host_transport(c->host), on_controller_frame, c);
    if (standalone) { /* itself, where it listens, is its quorum (until voters are added) */
        c->voters[0].id = cfg->node_id;
        snprintf(c->voters[0].host, sizeof(c->voters[0].host), "%s", cfg->cluster_host);
        c->voters[0].port = transport_port(host_transport(c->host));
        c->n_voters = 1;
    }
    transport_set_describe_cb(host_transport(c->host), describe_quorum, c);

    const char *dir = c->meta_dir;
    struct ctl_runtime_options o;
    ctl_runtime_options_default(&o);
    o.flusher = b->fl;
    o.send_raft = send_raft;
    o.send_frame = send_frame;
    o.on_image_change = on_image_change;
    o.config_check = cluster_config_check; /* topic configs as admin_check_configs checks them */
    o.data = c;
    o.seed = tc.seed;
    if (dynamic) { /* voters may be added and removed (runtime.h "Voter changes") */
        o.meta_dir = c->meta_dir;
        o.host = cfg->cluster_host;
        o.port = transport_port(host_transport(c->host));
        o.on_member_change = on_member_change;
    }
    if (voter)
        rc = ctl_runtime_open(dir, cfg->node_id, voters, n_voters, &o, time_mono_ms(), &c->ctl);
    else /* an observer of the metadata log: it keeps no metadata log on disk */
        rc = ctl_runtime_open_observer(cfg->node_id, voters, n_voters, cfg->cluster_host,
                                       cfg->cluster_port, &o, time_mono_ms(), &c->ctl);
    if (rc != 0) {
        snprintf(err, errcap, "cannot open the metadata log %s: %s", dir, err_str(rc));
        host_free(c->host);
        mem_free(c);
        return rc;
    }
    c->image_dirty = true; /* the replayed image: attach the local replicas */
    reactor_timer_init(&c->timer, on_timer, c);
    reactor_timer_start(b->r, &c->timer, 0);
    b->cluster = c;
    log_info("cluster_started", "node=%" PRId32 " cluster_addr=%s voters=%zu quorum=%s role=%s",
             cfg->node_id, c->cluster_addr, n_voters, qid,
             standalone ? "standalone"
             : voter    ? "voter"
                        : "observer");
    return 0;
}

void cluster_handover(struct broker *b, int64_t max_ms)
{
    struct cluster *c = b->cluster;
    if (!c)
        return;
    int64_t start = time_mono_ms();
    size_t started = host_transfer_all(c->host);
    /* The reactor runs on (clients, transport, flusher) so the transfers complete and the
     * requests answered meanwhile (NOT_LEADER_OR_FOLLOWER once the transfer is under way, acks
     * for what commits) go out. Bounded: a transfer whose target does not answer gives up. */
    while (started > 0 && host_leader_count(c->host) > 0 && time_mono_ms() - start < max_ms)
        reactor_run_once(b->r, 10);
    log_info("cluster_handover", "node=%" PRId32 " transfers=%zu still_leading=%zu ms=%" PRId64,
             b->cfg->node_id, started, host_leader_count(c->host), time_mono_ms() - start);
}

void cluster_stop(struct broker *b)
{
    struct cluster *c = b->cluster;
    if (!c)
        return;
    elect_stop(b); /* ElectLeaders in flight answered, while the transport still runs */
    topic_ready_stop(b); /* created topics waiting for leaders: answered now */
    c->closing = true;
    memset(&c->secret, 0, sizeof(c->secret)); /* the transport holds its own copy */
    reactor_timer_stop(b->r, &c->timer);
    ctl_runtime_close(c->ctl); /* answers our pending command (ignored: closing) */
    c->ctl = NULL;
    transport_flush(host_transport(c->host));
    for (size_t i = 0; i < c->n_groups; i++) {
        struct partition *p = group_partition(c, c->groups[i].g);
        if (p)
            p->group = NULL;
    }
    host_free(c->host); /* closes every replica; topics.c closes the plogs */
    for (size_t i = 0; i < c->n_groups; i++)
        mem_free(c->groups[i].topic);
    mem_free(c->groups);
    strmap_destroy(&c->group_index);
    mem_free(c);
    b->cluster = NULL;
}

void cluster_submit(struct cluster *c, const struct ctl_request *req, ctl_done_fn done, void *data)
{
    ctl_runtime_submit(c->ctl, req, done, data);
}

const struct ctl_image *cluster_image(const struct cluster *c)
{
    return ctl_runtime_image(c->ctl);
}

struct host *cluster_host(const struct cluster *c)
{
    return c->host;
}

struct host_group *cluster_group(const struct cluster *c, const char *topic, int32_t partition)
{
    return host_group_find(c->host, topic, partition);
}

const char *cluster_id(const struct cluster *c)
{
    return c->id;
}

bool cluster_registered(const struct cluster *c)
{
    return c->registered;
}

bool cluster_live(const struct cluster *c)
{
    return c->registered && ctl_image_broker_live(ctl_runtime_image(c->ctl), c->b->cfg->node_id);
}

int cluster_await_live(struct broker *b, int64_t max_ms)
{
    struct cluster *c = b->cluster;
    int64_t start = time_mono_ms();
    /* also the first producer-id block, asked for at registration. The bound is on the
     * controller's answer, not on this node's own work: the registration is answered after
     * the first reconcile, which opens every replica of the node, and at tens of thousands of
     * partitions on a cold page cache that alone took longer than the bound */
    while ((!cluster_live(c) || c->pid_in_flight) &&
           time_mono_ms() - MAX(start, c->reconciled_ms) < max_ms)
        reactor_run_once(b->r, 5);
    if (cluster_live(c))
        return 0;
    log_error("cluster_not_live", "node=%" PRId32 " registered=%d ms=%" PRId64, b->cfg->node_id,
              c->registered ? 1 : 0, time_mono_ms() - start);
    return -ERR_TIMEOUT;
}

int32_t cluster_controller_leader(const struct cluster *c)
{
    return ctl_runtime_leader(c->ctl);
}

size_t cluster_controller_voters(const struct cluster *c, int32_t *ids, size_t cap)
{
    return ctl_runtime_voters(c->ctl, ids, cap);
}

int64_t cluster_controller_term(const struct cluster *c)
{
    return ctl_runtime_term(c->ctl);
}

int cluster_port(const struct cluster *c)
{
    return transport_port(host_transport(c->host));
}

int32_t cluster_leader_hint(const struct cluster *c, const char *topic, int32_t partition)
{
    const struct cgroup *cg = cgroup_find(c, topic, partition);
    const struct ctl_topic *t = ctl_image_topic(cluster_image(c), topic);
    if (!cg || cg->leaderless_since < 0 || !t || partition < 0 || partition >= t->n_partitions)
        return -1;
    int64_t now = time_mono_ms();
    if (now - cg->leaderless_since < CLUSTER_LEADER_HINT_AFTER_MS)
        return -1;
    const struct ctl_partition *p = &t->parts[partition];
    int32_t self = c->b->cfg->node_id;
    int32_t others = 0;
    for (int32_t i = 0; i < p->n_replicas; i++)
        others += p->replicas[i] != self;
    if (others == 0)
        return -1;
    /* a different one each second: a hint that names a dead node is not followed forever */
    int32_t k = (int32_t)((now / 1000) % others);
    for (int32_t i = 0; i < p->n_replicas; i++)
        if (p->replicas[i] != self && k-- == 0)
            return p->replicas[i];
    return -1;
}
