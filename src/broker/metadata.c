/* ApiVersions, Metadata (with topic auto-creation) and FindCoordinator.
 *
 * Metadata lists every registered, unfenced broker (and this one) with the client address it
 * registered, and every topic of the committed metadata image. A partition's leader is the Raft
 * leader this broker's replica knows (none yet: -1, LEADER_NOT_AVAILABLE) with its Raft term as
 * leader epoch (known none for over a second, as when this node is cut off: another replica as
 * a hint, epoch -1, cluster_leader_hint); a broker without a replica of the partition gives the
 * image's leader and epoch (the preferred replica: the image does not follow Raft elections, so
 * that may be stale; the client then gets NOT_LEADER_OR_FOLLOWER and asks again). Replicas are
 * the image's. The ISR, at the leader, is the leader and every follower whose durable match
 * index has reached the commit index; elsewhere every replica. Internal topics are listed, with
 * is_internal, as Kafka does (clients decide whether to show them). Unknown topics asked for by
 * name are created through the controller when auto.create.topics.enable allows it; such a
 * request is answered once they have leaders (bounded: LEADER_NOT_AVAILABLE, retriable, after
 * METADATA_CREATE_WAIT_MS). Everything else is read at request time. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "controller/commands.h"
#include "controller/image.h"
#include "group/records.h"
#include "kafka/api.h"
#include "kafka/errors.h"
#include "replication/host.h"
#include "replication/replica.h"
#include "replication/transport.h"

#define AUTHORIZED_OPERATIONS_UNKNOWN INT32_MIN
#define METADATA_CREATE_WAIT_MS 2000 /* longest a Metadata answer waits for topics it created */
#define METADATA_CREATE_POLL_MS 2    /* how often it looks */

static void fill_api_versions(struct api_versions_resp *resp, struct arena *a)
{
    int n;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    resp->keys = arena_calloc(a, (size_t)n, sizeof(*resp->keys));
    resp->n_keys = n;
    for (int i = 0; i < n; i++) {
        resp->keys[i].api_key = apis[i].key;
        resp->keys[i].min_version = apis[i].min_version;
        resp->keys[i].max_version = apis[i].max_version;
    }
}

void api_versions_reply_unsupported(struct request *req)
{
    /* KIP-511: a v0 body with UNSUPPORTED_VERSION and our key list, response header v0 */
    struct api_versions_resp resp = {.error_code = KERR_UNSUPPORTED_VERSION};
    fill_api_versions(&resp, req->arena);
    struct kreq_header h = req->hdr;
    h.api_version = 0;
    h.flexible = false;
    struct response r;
    response_begin(&r, &h);
    kmsg_encode_api_versions(&r.w, 0, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
}

int handle_api_versions(struct request *req)
{
    struct api_versions_req ar;
    if (kmsg_decode_api_versions(&req->body, req->hdr.api_version, req->arena, &ar) != 0)
        return -ERR_CORRUPT;
    struct api_versions_resp resp = {.error_code = KERR_NONE};
    fill_api_versions(&resp, req->arena);
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_api_versions(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

/* The leader, leader epoch and leadership of partition p as Metadata gives them: the local
 * replica's view when this broker hosts one (st, its status), else the image's. */
static void leader_of(const struct ctl_partition *p, const struct host_group_status *st,
                      int32_t *leader, int32_t *epoch, bool *leading)
{
    *leader = p->leader;
    *epoch = p->leader_epoch;
    *leading = false;
    if (st) {
        /* a local replica knows better than the image (which names the preferred replica
         * and is not told of Raft elections): no Raft leader known here = none yet */
        *leader = st->rs.leader != RAFT_NONE && !st->rs.failed ? st->rs.leader : -1;
        *epoch = st->rs.term > INT32_MAX ? INT32_MAX : (int32_t)st->rs.term;
        *leading = st->leading && !st->rs.failed;
    }
}

bool cluster_partition_leader(const struct cluster *c, const char *topic, int32_t partition,
                              int32_t *leader, int32_t *epoch, bool *leading)
{
    *leader = -1;
    *epoch = -1;
    *leading = false;
    const struct ctl_image *img = cluster_image(c);
    const struct ctl_topic *t = ctl_image_topic(img, topic);
    if (!t || partition < 0 || partition >= t->n_partitions)
        return false;
    struct host_group *g = cluster_group(c, topic, partition);
    struct host_group_status st;
    if (g)
        host_group_status(g, &st);
    leader_of(&t->parts[partition], g ? &st : NULL, leader, epoch, leading);
    return true;
}

/* One topic's entry: each partition's local replica is looked up once and its status built
 * once (at 50,000 partitions a Metadata of everything took the reactor 35-38 ms, most of it in
 * three lookups and two statuses per partition). */
static void describe(struct broker *b, const struct ctl_topic *t, struct metadata_topic *mt,
                     struct arena *a)
{
    const struct cluster *c = b->cluster;
    mt->error_code = KERR_NONE;
    mt->name = kstr_c(arena_strndup(a, t->name, strlen(t->name)));
    mt->is_internal = topic_name_internal(t->name);
    mt->topic_id = t->id;
    mt->topic_authorized_operations = AUTHORIZED_OPERATIONS_UNKNOWN;
    mt->n_partitions = t->n_partitions;
    mt->partitions =
        arena_calloc(a, (size_t)(t->n_partitions ? t->n_partitions : 1), sizeof(*mt->partitions));
    for (int32_t i = 0; i < t->n_partitions; i++) {
        const struct ctl_partition *p = &t->parts[i];
        struct metadata_partition *mp = &mt->partitions[i];
        struct host_group *g = cluster_group(c, t->name, i);
        struct host_group_status st;
        if (g)
            host_group_status(g, &st);
        bool leading;
        leader_of(p, g ? &st : NULL, &mp->leader_id, &mp->leader_epoch, &leading);
        if (group_serves_failed(b, g)) {
            /* its only replica failed on a disk error: reads of what it committed go on here,
             * writes get KAFKA_STORAGE_ERROR */
            mp->leader_id = b->cfg->node_id;
            mp->error_code = KERR_KAFKA_STORAGE_ERROR;
        } else if (mp->leader_id < 0) {
            int32_t hint = cluster_leader_hint(c, t->name, i);
            if (hint >= 0) {
                mp->leader_id = hint;
                mp->leader_epoch = -1;
            }
        }
        if (mp->error_code == KERR_NONE && mp->leader_id < 0)
            mp->error_code = KERR_LEADER_NOT_AVAILABLE;
        mp->partition_index = i;
        /* replicas: the current ones, then (during a reassignment) those being added, as
         * Kafka lists them; in sync: the current ones (the leader below says better) */
        int32_t *reps = arena_calloc(a, (size_t)(p->n_replicas + p->n_target + 1), sizeof(*reps));
        memcpy(reps, p->replicas, (size_t)p->n_replicas * sizeof(*reps));
        int32_t n_reps = p->n_replicas;
        for (int32_t k = 0; k < p->n_target; k++)
            if (!ctl_partition_has_replica(p, p->target[k]))
                reps[n_reps++] = p->target[k];
        mp->replica_nodes = reps;
        mp->n_replica_nodes = n_reps;
        mp->isr_nodes = reps;
        mp->n_isr_nodes = p->n_replicas;
        if (leading) {
            /* the leader knows its followers' durable match index: in sync = has everything
             * committed (the leader itself always is) */
            int32_t *isr = arena_calloc(a, (size_t)n_reps, sizeof(*isr));
            int32_t n = 0;
            for (int32_t r = 0; r < n_reps; r++) {
                bool in = reps[r] == st.rs.leader;
                for (size_t k = 0; k < st.rs.n_peers && !in; k++)
                    in = st.rs.peers[k] == reps[r] && st.rs.match[k] >= st.rs.commit;
                if (in)
                    isr[n++] = reps[r];
            }
            mp->isr_nodes = isr;
            mp->n_isr_nodes = n;
        }
        mp->offline_replicas = NULL;
        mp->n_offline_replicas = 0;
    }
}

static void auto_create_done(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    (void)rt;
    (void)a;
    (void)data;
}

bool cluster_partition_exists(const struct cluster *c, struct kstr topic, int32_t partition)
{
    char name[TOPIC_NAME_MAX + 1];
    if (topic.len <= 0 || topic.len > TOPIC_NAME_MAX)
        return false;
    memcpy(name, topic.p, (size_t)topic.len);
    name[topic.len] = '\0';
    const struct ctl_topic *t = ctl_image_topic(cluster_image(c), name);
    return t && partition >= 0 && partition < t->n_partitions;
}

/* The name of the listener the request came in on. */
static const char *client_listener(const struct request *req)
{
    return req->b->cfg->listeners[conn_endpoint(req->conn)].name;
}

/* FindCoordinator for a group: the broker leading the group's partition of __consumer_offsets
 * (whose broker coordinates the group: groups.c follows that leadership);
 * COORDINATOR_NOT_AVAILABLE while it has no reachable leader, and while the topic does not
 * exist (its creation is then asked of the controller, with offsets.topic.num.partitions and
 * offsets.topic.replication.factor, at most the brokers registered). */
static void group_coordinator(struct request *req, struct kstr group,
                              struct find_coordinator_resp *resp)
{
    struct broker *b = req->b;
    struct cluster *c = b->cluster;
    const struct ctl_image *img = cluster_image(c);
    const struct ctl_topic *t = ctl_image_topic(img, OFFSETS_TOPIC);
    if (!t) {
        struct ctl_config_entry cfgs[OFFSETS_TOPIC_N_OVERRIDES];
        for (size_t i = 0; i < OFFSETS_TOPIC_N_OVERRIDES; i++)
            cfgs[i] = (struct ctl_config_entry){offsets_topic_overrides[i].key,
                                                offsets_topic_overrides[i].value};
        /* as many replicas as asked, or as there are brokers now (a single node: one; the
         * factor grows with the cluster, as any topic's does) */
        int32_t live = 0;
        for (size_t i = 0; i < img->n_brokers; i++)
            live += !img->brokers[i].fenced;
        int32_t rf = b->cfg->offsets_topic_replication_factor;
        if (live > 0 && rf > live)
            rf = live;
        struct ctl_request cmd = {.type = CTL_REQ_CREATE_TOPIC,
                                  .name = OFFSETS_TOPIC,
                                  .n_partitions = b->cfg->offsets_topic_num_partitions,
                                  .rf = rf,
                                  .configs = cfgs,
                                  .n_configs = OFFSETS_TOPIC_N_OVERRIDES};
        cluster_submit(c, &cmd, auto_create_done, NULL);
        find_coordinator_unavailable(resp, "the offsets topic is being created");
        return;
    }
    int32_t p = grec_partition_for(group, t->n_partitions);
    int32_t leader, epoch;
    bool leading;
    cluster_partition_leader(c, OFFSETS_TOPIC, p, &leader, &epoch, &leading);
    if (leading) {
        find_coordinator_self(req, resp);
        return;
    }
    const struct ctl_broker *br = leader >= 0 ? ctl_image_broker(img, leader) : NULL;
    if (!br || br->fenced) {
        find_coordinator_unavailable(resp, "the group's offsets partition has no leader now");
        return;
    }
    /* Our link to that leader is down: it is most likely gone and about to be replaced (our
     * replica stops hearing it too). Naming it would send the client to a dead broker and
     * librdkafka waits about a second before asking again; a retriable error makes it ask
     * again at once (measured: 2.1 s -> a few hundred ms to find the new coordinator). */
    struct transport_peer_stats ps;
    if (transport_peer_stats(host_transport(cluster_host(c)), leader, &ps) == 0 && !ps.connected) {
        find_coordinator_unavailable(resp, "the group's coordinator is not reachable from here");
        return;
    }
    const char *host;
    int32_t port;
    ctl_broker_endpoint(br, client_listener(req), &host, &port);
    if (!host) {
        find_coordinator_unavailable(resp, "the group's coordinator has no listener of this name");
        return;
    }
    resp->error_code = KERR_NONE;
    resp->node_id = br->id;
    resp->host = kstr_c(arena_strndup(req->arena, host, strlen(host)));
    resp->port = port;
}

/* A Metadata request that asked for topics it created: answered once they have leaders. */
struct metadata_op {
    struct broker *b;
    struct conn_slot *slot;
    struct kstr self_host; /* this broker's address for the client's listener (in arena) */
    int32_t self_port;
    const char *listener; /* the client's listener's name (the config's) */
    struct kreq_header hdr;
    struct metadata_req mr; /* names copied into arena */
    bool *denied;           /* per name of mr (in arena; NULL: none) */
    struct arena arena;
    int64_t deadline_ms;
    struct reactor_timer timer;
};

/* The brokers Metadata and DescribeCluster list (strings in a): the registered, unfenced ones
 * with their address on the listener the client is on (listener; one registered with
 * endpoints but none of that name is left out, as Kafka leaves it out), and this one always,
 * with the address of the client's listener (self_host:self_port). Returns how many. */
static int32_t listed_brokers(const struct broker *b, struct arena *a, const char *listener,
                              struct kstr self_host, int32_t self_port,
                              struct metadata_broker **out)
{
    const struct ctl_image *img = cluster_image(b->cluster);
    struct metadata_broker *list = arena_calloc(a, img->n_brokers + 1, sizeof(*list));
    int32_t n = 0;
    bool self_listed = false;
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct ctl_broker *br = &img->brokers[i];
        if (br->fenced && br->id != b->cfg->node_id)
            continue;
        const char *host;
        int32_t port;
        ctl_broker_endpoint(br, listener, &host, &port);
        if (!host && br->id != b->cfg->node_id)
            continue;
        struct metadata_broker *mb = &list[n++];
        mb->node_id = br->id;
        mb->host = host ? kstr_c(arena_strndup(a, host, strlen(host))) : self_host;
        mb->port = host ? port : self_port;
        mb->rack = KSTR_NULL;
        if (br->id == b->cfg->node_id) { /* this broker: the client's listener's address */
            mb->host = self_host;
            mb->port = self_port;
        }
        self_listed |= br->id == b->cfg->node_id;
    }
    if (!self_listed)
        list[n++] = (struct metadata_broker){
            .node_id = b->cfg->node_id, .host = self_host, .port = self_port, .rack = KSTR_NULL};
    *out = list;
    return n;
}

/* The controller id Metadata and DescribeCluster report. Clients send their controller
 * requests (CreateTopics, AlterConfigs...) there, and every broker forwards those to the
 * metadata quorum's leader, waiting out a change of leader (controller/runtime.h), so, as
 * Kafka's KRaft brokers report a live broker rather than the quorum leader (KIP-590), this
 * names the broker answering while it is live: one the client reaches, not a leader that may
 * have died since (librdkafka waits for "its" controller until its request times out). A
 * broker that is not live names the leader it knows (-1: none). */
static int32_t advertised_controller(const struct broker *b)
{
    if (cluster_live(b->cluster))
        return b->cfg->node_id;
    int32_t ctl = cluster_controller_leader(b->cluster);
    return ctl == RAFT_NONE ? -1 : ctl;
}

/* Builds the Metadata answer for mr from the image now (strings in a) and sends it to slot.
 * may_create: a name the image lacks is being created (LEADER_NOT_AVAILABLE, retriable), not
 * unknown. denied (NULL: nothing is) says what the principal may not see: for a request of
 * every topic, per topic of the image (left out of the answer); else per name of mr
 * (TOPIC_AUTHORIZATION_FAILED, whether the topic exists or not, as Kafka answers). */
static void metadata_answer(struct broker *b, const struct kreq_header *hdr,
                            const struct metadata_req *mr, const bool *denied, struct arena *a,
                            bool may_create, const char *listener, struct kstr self_host,
                            int32_t self_port, struct conn_slot *slot)
{
    const struct cluster *c = b->cluster;
    const struct ctl_image *img = cluster_image(c);
    int16_t v = hdr->api_version;
    struct metadata_resp resp = {0};

    resp.n_brokers = listed_brokers(b, a, listener, self_host, self_port, &resp.brokers);
    resp.cluster_id = kstr_c(cluster_id(c));
    resp.controller_id = advertised_controller(b);
    resp.cluster_authorized_operations = AUTHORIZED_OPERATIONS_UNKNOWN;

    bool all = mr->n_topics < 0 || (v == 0 && mr->n_topics == 0);
    if (all) {
        resp.topics = arena_calloc(a, img->n_topics ? img->n_topics : 1, sizeof(*resp.topics));
        for (size_t i = 0; i < img->n_topics; i++)
            if (!denied || !denied[i])
                describe(b, img->topics[i], &resp.topics[resp.n_topics++], a);
    } else {
        resp.topics =
            arena_calloc(a, (size_t)(mr->n_topics ? mr->n_topics : 1), sizeof(*resp.topics));
        for (int32_t i = 0; i < mr->n_topics; i++) {
            struct metadata_topic *mt = &resp.topics[resp.n_topics++];
            struct kstr name = mr->topics[i];
            mt->name = name;
            mt->topic_authorized_operations = AUTHORIZED_OPERATIONS_UNKNOWN;
            char err[256];
            if (name.len <= 0 || !topic_name_valid(name, err, sizeof(err))) {
                mt->error_code = KERR_INVALID_TOPIC_EXCEPTION;
                continue;
            }
            if (denied && denied[i]) {
                mt->error_code = KERR_TOPIC_AUTHORIZATION_FAILED;
                continue;
            }
            const struct ctl_topic *t =
                ctl_image_topic(img, arena_strndup(a, name.p, (size_t)name.len));
            if (t)
                describe(b, t, mt, a);
            else /* being created: retriable */
                mt->error_code =
                    may_create ? KERR_LEADER_NOT_AVAILABLE : KERR_UNKNOWN_TOPIC_OR_PARTITION;
        }
    }
    struct response r;
    response_begin(&r, hdr);
    kmsg_encode_metadata(&r.w, v, &resp);
    response_send(&r, slot);
}

/* Whether every name of mr that names no internal topic is in the image with a leader for each
 * partition (what a client needs to produce at once). */
static bool created_and_led(const struct broker *b, const struct metadata_req *mr, struct arena *a)
{
    const struct ctl_image *img = cluster_image(b->cluster);
    for (int32_t i = 0; i < mr->n_topics; i++) {
        struct kstr name = mr->topics[i];
        char err[256];
        if (name.len <= 0 || !topic_name_valid(name, err, sizeof(err)))
            continue;
        const struct ctl_topic *t =
            ctl_image_topic(img, arena_strndup(a, name.p, (size_t)name.len));
        if (!t)
            return false;
        for (int32_t p = 0; p < t->n_partitions; p++) {
            /* a replica of ours must run and know its leader (the image names the preferred
             * replica before any replica runs) */
            if (ctl_partition_has_replica(&t->parts[p], b->cfg->node_id) &&
                !cluster_group(b->cluster, t->name, p))
                return false;
            int32_t leader, epoch;
            bool leading;
            cluster_partition_leader(b->cluster, t->name, p, &leader, &epoch, &leading);
            if (leader < 0)
                return false;
        }
    }
    return true;
}

static void metadata_op_free(struct metadata_op *op)
{
    reactor_timer_stop(op->b->r, &op->timer);
    arena_destroy(&op->arena);
    mem_free(op);
}

static void metadata_op_tick(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct metadata_op *op = data;
    if (!op->b->stopping && !created_and_led(op->b, &op->mr, &op->arena) &&
        time_mono_ms() < op->deadline_ms) {
        reactor_timer_start(r, t, METADATA_CREATE_POLL_MS);
        return;
    }
    metadata_answer(op->b, &op->hdr, &op->mr, op->denied, &op->arena, true, op->listener,
                    op->self_host, op->self_port, op->slot);
    metadata_op_free(op);
}

/* Asks the controller to create the topics mr names that the image lacks (num.partitions,
 * default.replication.factor); names starting with "__" are never created, nor the denied ones.
 * Returns how many. */
static int auto_create(struct broker *b, const struct metadata_req *mr, const bool *denied,
                       struct arena *a)
{
    const struct ctl_image *img = cluster_image(b->cluster);
    int n = 0;
    for (int32_t i = 0; i < mr->n_topics; i++) {
        struct kstr name = mr->topics[i];
        char err[256];
        if ((denied && denied[i]) || name.len <= 0 || !topic_name_valid(name, err, sizeof(err)) ||
            (name.len >= 2 && name.p[0] == '_' && name.p[1] == '_'))
            continue;
        char *cname = arena_strndup(a, name.p, (size_t)name.len);
        if (ctl_image_topic(img, cname))
            continue;
        struct ctl_request cmd = {.type = CTL_REQ_CREATE_TOPIC,
                                  .name = cname,
                                  .n_partitions = b->cfg->num_partitions,
                                  .rf = b->cfg->default_replication_factor};
        cluster_submit(b->cluster, &cmd, auto_create_done, NULL);
        n++;
    }
    return n;
}

/* What the principal may not see (metadata_answer's denied; NULL with the authorizer off):
 * the topics it may not DESCRIBE, and the missing topics it may not create (CREATE on the
 * cluster or the topic) when the request would create them. */
static bool *metadata_denied(struct request *req, const struct metadata_req *mr, bool all,
                             bool may_create)
{
    if (!authz_on(req->b))
        return NULL;
    const struct ctl_image *img = cluster_image(req->b->cluster);
    size_t n = all ? img->n_topics : (size_t)mr->n_topics;
    bool *denied = arena_calloc(req->arena, n ? n : 1, sizeof(*denied));
    for (size_t i = 0; i < n; i++) {
        struct kstr name = all ? kstr_c(img->topics[i]->name) : mr->topics[i];
        if (all) { /* a listing: left out quietly */
            denied[i] = !authz_allows_quiet(req, ACL_OP_DESCRIBE, ACL_RESOURCE_TOPIC, name);
            continue;
        }
        if (name.len <= 0)
            continue;
        denied[i] = !authz_allows(req, ACL_OP_DESCRIBE, ACL_RESOURCE_TOPIC, name);
        if (denied[i] || !may_create ||
            ctl_image_topic(img, arena_strndup(req->arena, name.p, (size_t)name.len)))
            continue;
        denied[i] = !authz_allows_quiet(req, ACL_OP_CREATE, ACL_RESOURCE_CLUSTER,
                                        kstr_c(ACL_CLUSTER_NAME)) &&
                    !authz_allows(req, ACL_OP_CREATE, ACL_RESOURCE_TOPIC, name);
    }
    return denied;
}

int handle_metadata(struct request *req)
{
    struct broker *b = req->b;
    struct metadata_req mr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_metadata(&req->body, v, req->arena, &mr) != 0)
        return -ERR_CORRUPT;
    for (int32_t i = 0; i < mr.n_topics; i++) /* v10+: asked for by id (unknown: "", invalid) */
        if (mr.topics[i].len < 0) {
            struct kstr name = topic_name_by_id(b, mr.topic_ids[i]);
            mr.topics[i] = name.len >= 0 ? name : (struct kstr){"", 0};
        }
    bool all = mr.n_topics < 0 || (v == 0 && mr.n_topics == 0);
    bool may_create = !all && b->cfg->auto_create_topics && (v < 4 || mr.allow_auto_topic_creation);
    bool *denied = metadata_denied(req, &mr, all, may_create);
    struct conn_slot *slot = conn_slot_reserve(req->conn);
    struct kstr self_host;
    int32_t self_port;
    broker_advertised(b, req->conn, &self_host, &self_port);
    if (!may_create || auto_create(b, &mr, denied, req->arena) == 0) {
        metadata_answer(b, &req->hdr, &mr, denied, req->arena, may_create, client_listener(req),
                        self_host, self_port, slot);
        return 0;
    }
    /* New topics: answer once they have leaders (a single node: a few ms), as a topic created
     * by its first Metadata request always could be produced to at once; LEADER_NOT_AVAILABLE
     * (retriable) for those still without one after METADATA_CREATE_WAIT_MS. */
    struct metadata_op *op = mem_calloc(1, sizeof(*op));
    op->b = b;
    op->slot = slot;
    op->hdr = req->hdr;
    op->hdr.client_id = KSTR_NULL; /* points into the frame */
    arena_init(&op->arena, 1024);
    op->self_host =
        (struct kstr){arena_strndup(&op->arena, self_host.p, (size_t)self_host.len), self_host.len};
    op->self_port = self_port;
    op->listener = client_listener(req);
    op->mr = mr;
    op->mr.topics = arena_calloc(&op->arena, (size_t)mr.n_topics, sizeof(*op->mr.topics));
    for (int32_t i = 0; i < mr.n_topics; i++) {
        struct kstr n = mr.topics[i];
        op->mr.topics[i] =
            n.len < 0 ? n : (struct kstr){arena_strndup(&op->arena, n.p, (size_t)n.len), n.len};
    }
    if (denied) {
        op->denied = arena_calloc(&op->arena, (size_t)mr.n_topics, sizeof(*op->denied));
        memcpy(op->denied, denied, (size_t)mr.n_topics * sizeof(*denied));
    }
    op->deadline_ms = time_mono_ms() + METADATA_CREATE_WAIT_MS;
    reactor_timer_init(&op->timer, metadata_op_tick, op);
    reactor_timer_start(b->r, &op->timer, METADATA_CREATE_POLL_MS);
    return 0;
}

/* DescribeCluster: the brokers and controller Metadata gives, without topics (KIP-700). Only
 * brokers are described: asking for controllers (v1 endpoint type 2) is UNSUPPORTED_ENDPOINT_TYPE,
 * as a Kafka broker answers it. */
int handle_describe_cluster(struct request *req)
{
    struct broker *b = req->b;
    struct describe_cluster_req dr;
    int16_t v = req->hdr.api_version;
    if (kmsg_decode_describe_cluster(&req->body, v, req->arena, &dr) != 0)
        return -ERR_CORRUPT;
    struct describe_cluster_resp resp = {.error_message = KSTR_NULL,
                                         .endpoint_type = dr.endpoint_type,
                                         .cluster_id = kstr_c(""),
                                         .controller_id = -1,
                                         .cluster_authorized_operations =
                                             AUTHORIZED_OPERATIONS_UNKNOWN};
    if (dr.endpoint_type != KAFKA_ENDPOINT_BROKERS) {
        resp.error_code = KERR_UNSUPPORTED_ENDPOINT_TYPE;
        resp.error_message = kstr_c("Only brokers can be described by this endpoint.");
    } else {
        struct kstr self_host;
        int32_t self_port;
        broker_advertised(b, req->conn, &self_host, &self_port);
        struct metadata_broker *list;
        int32_t n = listed_brokers(b, req->arena, client_listener(req), self_host, self_port,
                                   &list);
        resp.brokers = arena_calloc(req->arena, (size_t)(n ? n : 1), sizeof(*resp.brokers));
        for (int32_t i = 0; i < n; i++)
            resp.brokers[i] = (struct describe_cluster_broker){list[i].node_id, list[i].host,
                                                               list[i].port, list[i].rack};
        resp.n_brokers = n;
        resp.cluster_id = kstr_c(cluster_id(b->cluster));
        resp.controller_id = advertised_controller(b);
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_describe_cluster(&r.w, v, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}

void find_coordinator_unavailable(struct find_coordinator_resp *resp, const char *why)
{
    resp->error_code = KERR_COORDINATOR_NOT_AVAILABLE;
    resp->error_message = kstr_c(why);
    resp->node_id = -1;
    resp->host = kstr_c("");
    resp->port = -1;
}

void find_coordinator_self(const struct request *req, struct find_coordinator_resp *resp)
{
    resp->error_code = KERR_NONE;
    resp->node_id = req->b->cfg->node_id;
    broker_advertised(req->b, req->conn, &resp->host, &resp->port);
}

/* The coordinator of one key, in the single-key form of v0-3. */
static void find_one(struct request *req, int8_t key_type, struct kstr key,
                     struct find_coordinator_resp *resp)
{
    *resp = (struct find_coordinator_resp){.error_message = KSTR_NULL};
    bool group = key_type == KAFKA_COORDINATOR_GROUP;
    if (!authz_allows(req, ACL_OP_DESCRIBE,
                      group ? ACL_RESOURCE_GROUP : ACL_RESOURCE_TRANSACTIONAL_ID, key)) {
        find_coordinator_unavailable(resp, NULL);
        resp->error_code = group ? KERR_GROUP_AUTHORIZATION_FAILED
                                 : KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        resp->error_message = KSTR_NULL;
    } else if (!group) {
        find_coordinator_unavailable(resp, "transactions are not supported");
    } else {
        group_coordinator(req, key, resp);
    }
}

int handle_find_coordinator(struct request *req)
{
    struct find_coordinator_req fr;
    if (kmsg_decode_find_coordinator(&req->body, req->hdr.api_version, req->arena, &fr) != 0)
        return -ERR_CORRUPT;
    struct find_coordinator_resp resp;
    if (req->hdr.api_version <= 3) {
        find_one(req, fr.key_type, fr.key, &resp);
    } else { /* v4+: one answer per key */
        resp = (struct find_coordinator_resp){.error_message = KSTR_NULL};
        int32_t n = fr.n_coordinator_keys;
        resp.coordinators =
            arena_calloc(req->arena, (size_t)(n ? n : 1), sizeof(*resp.coordinators));
        resp.n_coordinators = n;
        for (int32_t i = 0; i < n; i++) {
            struct find_coordinator_resp one;
            find_one(req, fr.key_type, fr.coordinator_keys[i], &one);
            resp.coordinators[i] =
                (struct find_coordinator_coordinator){.key = fr.coordinator_keys[i],
                                                      .node_id = one.node_id,
                                                      .host = one.host,
                                                      .port = one.port,
                                                      .error_code = one.error_code,
                                                      .error_message = one.error_message};
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_find_coordinator(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}
