/* preferred-leader balancing (see cluster_configs.h).
 *
 * Stateless: each pass (cluster.c's timer, every leader.imbalance.check.interval.seconds when
 * auto.leader.rebalance.enable) looks at the groups this node leads now and starts a Raft
 * leadership transfer (raft_transfer_leader: proposals are refused while it runs, it gives up
 * after an election timeout) for each whose preferred replica is live and caught up. A transfer
 * that fails is simply tried again at the next pass. */
#include <inttypes.h>

#include "base/log.h"
#include "broker/cluster.h"
#include "broker/cluster_configs.h"
#include "broker/internal.h"
#include "replication/host.h"
#include "replication/replica.h"

enum cluster_preferred cluster_preferred_state(const struct ctl_image *img,
                                               const struct ctl_partition *p, int32_t self,
                                               const struct replica_status *st,
                                               int64_t caught_up, int64_t *match)
{
    int64_t m = -1;
    enum cluster_preferred v = CLUSTER_PREFERRED_NOT_PEER;
    int32_t pref = p->replicas[0];
    if (pref == self)
        v = CLUSTER_PREFERRED_SELF;
    else if (!ctl_image_broker_live(img, pref))
        v = CLUSTER_PREFERRED_NOT_LIVE;
    for (size_t i = 0; v == CLUSTER_PREFERRED_NOT_PEER && i < st->n_peers; i++) {
        if (st->peers[i] != pref)
            continue;
        m = st->match[i];
        v = m >= caught_up ? CLUSTER_PREFERRED_READY : CLUSTER_PREFERRED_BEHIND;
    }
    if (match)
        *match = m;
    return v;
}

int32_t cluster_balance_target(const struct ctl_image *img, const struct ctl_partition *p,
                               int32_t self, const struct replica_status *st)
{
    if (p->n_replicas < 2 || st->role != RAFT_LEADER)
        return -1;
    bool ready =
        cluster_preferred_state(img, p, self, st, st->last, NULL) == CLUSTER_PREFERRED_READY;
    return ready ? p->replicas[0] : -1;
}

size_t cluster_balance(struct broker *b)
{
    struct cluster *c = b->cluster;
    const struct ctl_image *img = cluster_image(c);
    struct host *h = cluster_host(c);
    int32_t self = b->cfg->node_id;
    size_t started = 0;
    struct host_group *g;
    for (size_t it = 0; (g = host_next_group(h, &it));) {
        struct host_group_status gs;
        host_group_status(g, &gs);
        if (!gs.leading)
            continue;
        const char *topic = host_group_topic(g);
        int32_t part = host_group_partition(g);
        const struct ctl_topic *t = ctl_image_topic(img, topic);
        if (!t || part < 0 || part >= t->n_partitions)
            continue;
        int32_t to = cluster_balance_target(img, &t->parts[part], self, &gs.rs);
        if (to < 0)
            continue;
        int rc = host_transfer(g, to);
        log_info("leader_rebalance",
                 "topic=%s partition=%" PRId32 " from=%" PRId32 " to=%" PRId32 " term=%" PRId64
                 " last=%" PRId64 " rc=%d",
                 topic, part, self, to, gs.rs.term, gs.rs.last, rc);
        started += rc == 0;
    }
    return started;
}
