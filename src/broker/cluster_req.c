/* Cluster mode: Metadata from the metadata image, and where a partition's leader is.
 *
 * Metadata lists every registered, unfenced broker (and this one) with the client address it
 * registered, and every topic of the committed image. A partition's leader is the Raft leader
 * this broker's replica knows (none yet: -1, LEADER_NOT_AVAILABLE) with its Raft term as leader
 * epoch (known none for over a second, as when this node is cut off: another replica as a hint,
 * epoch -1, cluster_leader_hint); a broker without a replica of the partition gives the image's
 * leader and epoch (the preferred replica: the image does not follow Raft elections yet, so that
 * may be stale; the client then gets NOT_LEADER_OR_FOLLOWER and asks again). Replicas are the
 * image's. The ISR, at the leader, is the leader and every follower whose durable match index has
 * reached the commit index; elsewhere every replica. Unknown topics asked for by name are created
 * through the controller when auto.create.topics.enable allows it, and answered
 * LEADER_NOT_AVAILABLE (retriable) meanwhile. Stateless: everything is read at request time. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/errors.h"
#include "base/log.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "controller/commands.h"
#include "controller/image.h"
#include "group/records.h"
#include "kafka/errors.h"
#include "replication/host.h"
#include "replication/replica.h"
#include "replication/transport.h"

#define AUTHORIZED_OPERATIONS_UNKNOWN INT32_MIN

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
    *leader = t->parts[partition].leader;
    *epoch = t->parts[partition].leader_epoch;
    struct host_group *g = cluster_group(c, topic, partition);
    if (g) {
        struct host_group_status st;
        host_group_status(g, &st);
        /* a local replica knows better than the image (which names the preferred replica
         * and is not told of Raft elections): no Raft leader known here = none yet */
        *leader = st.rs.leader != RAFT_NONE && !st.rs.failed ? st.rs.leader : -1;
        *epoch = st.rs.term > INT32_MAX ? INT32_MAX : (int32_t)st.rs.term;
        *leading = st.leading && !st.rs.failed;
    }
    return true;
}

static void describe(const struct cluster *c, const struct ctl_topic *t, struct metadata_topic *mt,
                     struct arena *a)
{
    mt->error_code = KERR_NONE;
    mt->name = kstr_c(arena_strndup(a, t->name, strlen(t->name)));
    mt->topic_id = t->id;
    mt->is_internal = !strcmp(t->name, OFFSETS_TOPIC);
    mt->topic_authorized_operations = AUTHORIZED_OPERATIONS_UNKNOWN;
    mt->n_partitions = t->n_partitions;
    mt->partitions =
        arena_calloc(a, (size_t)(t->n_partitions ? t->n_partitions : 1), sizeof(*mt->partitions));
    for (int32_t i = 0; i < t->n_partitions; i++) {
        const struct ctl_partition *p = &t->parts[i];
        struct metadata_partition *mp = &mt->partitions[i];
        bool leading;
        cluster_partition_leader(c, t->name, i, &mp->leader_id, &mp->leader_epoch, &leading);
        if (mp->leader_id < 0) {
            int32_t hint = cluster_leader_hint(c, t->name, i);
            if (hint >= 0) {
                mp->leader_id = hint;
                mp->leader_epoch = -1;
            }
        }
        mp->error_code = mp->leader_id < 0 ? KERR_LEADER_NOT_AVAILABLE : KERR_NONE;
        mp->partition_index = i;
        int32_t *reps = arena_calloc(a, (size_t)(p->n_replicas ? p->n_replicas : 1), sizeof(*reps));
        memcpy(reps, p->replicas, (size_t)p->n_replicas * sizeof(*reps));
        mp->replica_nodes = reps;
        mp->n_replica_nodes = p->n_replicas;
        mp->isr_nodes = reps;
        mp->n_isr_nodes = p->n_replicas;
        struct host_group *g = leading ? cluster_group(c, t->name, i) : NULL;
        if (g) {
            /* the leader knows its followers' durable match index: in sync = has everything
             * committed (the leader itself always is) */
            struct host_group_status st;
            host_group_status(g, &st);
            int32_t *isr = arena_calloc(a, (size_t)p->n_replicas, sizeof(*isr));
            int32_t n = 0;
            for (int32_t r = 0; r < p->n_replicas; r++) {
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

void cluster_find_coordinator(struct request *req, struct kstr group,
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
        struct ctl_request cmd = {.type = CTL_REQ_CREATE_TOPIC,
                                  .name = OFFSETS_TOPIC,
                                  .n_partitions = b->cfg->offsets_topic_num_partitions,
                                  .rf = b->cfg->offsets_topic_replication_factor,
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
        find_coordinator_self(b, resp);
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
    resp->error_code = KERR_NONE;
    resp->node_id = br->id;
    resp->host = kstr_c(arena_strndup(req->arena, br->host, strlen(br->host)));
    resp->port = br->port;
}

void cluster_describe_cluster(struct request *req, struct describe_cluster_resp *resp)
{
    struct broker *b = req->b;
    const struct ctl_image *img = cluster_image(b->cluster);
    struct arena *a = req->arena;
    resp->brokers = arena_calloc(a, img->n_brokers + 1, sizeof(*resp->brokers));
    bool self_listed = false;
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct ctl_broker *br = &img->brokers[i];
        if (br->fenced && br->id != b->cfg->node_id)
            continue;
        resp->brokers[resp->n_brokers++] = (struct describe_cluster_broker){
            br->id, kstr_c(arena_strndup(a, br->host, strlen(br->host))), br->port, KSTR_NULL};
        self_listed |= br->id == b->cfg->node_id;
    }
    if (!self_listed)
        resp->brokers[resp->n_brokers++] = (struct describe_cluster_broker){
            b->cfg->node_id, kstr_c(b->cfg->advertised_host), b->advertised_port, KSTR_NULL};
    resp->cluster_id = kstr_c(cluster_id(b->cluster));
    int32_t ctl = cluster_controller_leader(b->cluster);
    resp->controller_id = ctl == RAFT_NONE ? -1 : ctl;
}

int cluster_metadata(struct request *req, const struct metadata_req *mr)
{
    struct broker *b = req->b;
    const struct cluster *c = b->cluster;
    const struct ctl_image *img = cluster_image(c);
    int16_t v = req->hdr.api_version;
    struct arena *a = req->arena;
    struct metadata_resp resp = {0};

    resp.brokers = arena_calloc(a, img->n_brokers + 1, sizeof(*resp.brokers));
    bool self_listed = false;
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct ctl_broker *br = &img->brokers[i];
        if (br->fenced && br->id != b->cfg->node_id)
            continue;
        struct metadata_broker *mb = &resp.brokers[resp.n_brokers++];
        mb->node_id = br->id;
        mb->host = kstr_c(arena_strndup(a, br->host, strlen(br->host)));
        mb->port = br->port;
        mb->rack = KSTR_NULL;
        self_listed |= br->id == b->cfg->node_id;
    }
    if (!self_listed) {
        struct metadata_broker *mb = &resp.brokers[resp.n_brokers++];
        mb->node_id = b->cfg->node_id;
        mb->host = kstr_c(b->cfg->advertised_host);
        mb->port = b->advertised_port;
        mb->rack = KSTR_NULL;
    }
    resp.cluster_id = kstr_c(cluster_id(c));
    int32_t ctl = cluster_controller_leader(c);
    resp.controller_id = ctl == RAFT_NONE ? -1 : ctl;
    resp.cluster_authorized_operations = AUTHORIZED_OPERATIONS_UNKNOWN;

    bool all = mr->n_topics < 0 || (v == 0 && mr->n_topics == 0);
    if (all) {
        resp.topics = arena_calloc(a, img->n_topics ? img->n_topics : 1, sizeof(*resp.topics));
        for (size_t i = 0; i < img->n_topics; i++)
            describe(c, img->topics[i], &resp.topics[resp.n_topics++], a);
    } else {
        resp.topics =
            arena_calloc(a, (size_t)(mr->n_topics ? mr->n_topics : 1), sizeof(*resp.topics));
        bool may_create = b->cfg->auto_create_topics && (v < 4 || mr->allow_auto_topic_creation);
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
            char *cname = arena_strndup(a, name.p, (size_t)name.len);
            const struct ctl_topic *t = ctl_image_topic(img, cname);
            if (t) {
                describe(c, t, mt, a);
                continue;
            }
            mt->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            if (may_create && !(name.len >= 2 && name.p[0] == '_' && name.p[1] == '_')) {
                struct ctl_request cmd = {.type = CTL_REQ_CREATE_TOPIC,
                                          .name = cname,
                                          .n_partitions = b->cfg->num_partitions,
                                          .rf = b->cfg->default_replication_factor};
                cluster_submit(b->cluster, &cmd, auto_create_done, NULL);
                mt->error_code = KERR_LEADER_NOT_AVAILABLE;
            }
        }
    }
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_metadata(&r.w, v, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}
