/* Cluster status views for the admin listener (see cluster.h, "Status"): GET /v1/cluster and the
 * cluster metric families of /metrics.
 *
 * Stateless: every call reads the cluster's current state on the reactor thread (the admin
 * listener runs there) and writes it out; nothing is cached. Local replicas are listed sorted
 * by (topic, partition) so successive answers are comparable; brokers come in the image's
 * order (by id).
 *
 * Follower progress comes from the leader's replica_status: match is the follower's durable
 * match index (-1 unknown) and lag = the leader's last index - match (records the follower
 * still lacks; null while the match is unknown). Followers know no progress of their peers and
 * report none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "base/mem.h"
#include "base/prom.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "replication/host.h"
#include "raft/raft.h"
#include "replication/replica.h"
#include "replication/transport.h"

static int group_cmp(const void *x, const void *y)
{
    const struct host_group *a = *(const struct host_group *const *)x;
    const struct host_group *b = *(const struct host_group *const *)y;
    int c = strcmp(host_group_topic(a), host_group_topic(b));
    if (c != 0)
        return c;
    int32_t pa = host_group_partition(a), pb = host_group_partition(b);
    return (pa > pb) - (pa < pb);
}

/* The local replicas' groups, sorted; *n set. Free with mem_free. */
static struct host_group **sorted_groups(const struct cluster *c, size_t *n)
{
    struct host *h = cluster_host(c);
    size_t cnt = 0;
    struct host_group *g;
    for (size_t it = 0; (g = host_next_group(h, &it));)
        cnt++;
    struct host_group **gs = mem_calloc(cnt > 0 ? cnt : 1, sizeof(*gs));
    size_t i = 0;
    for (size_t it = 0; i < cnt && (g = host_next_group(h, &it));)
        gs[i++] = g;
    qsort(gs, i, sizeof(*gs), group_cmp);
    *n = i;
    return gs;
}

/* The image's replica list of a partition, or NULL. */
static const struct ctl_partition *image_partition(const struct cluster *c, const char *topic,
                                                   int32_t partition)
{
    const struct ctl_topic *t = ctl_image_topic(cluster_image(c), topic);
    if (!t || partition < 0 || partition >= t->n_partitions)
        return NULL;
    return &t->parts[partition];
}

static void json_partition(struct json *j, const struct cluster *c, const struct host_group *g)
{
    struct host_group_status hs;
    host_group_status(g, &hs);
    const struct replica_status *rs = &hs.rs;
    json_obj_begin(j);
    json_key(j, "topic");
    json_cstr(j, host_group_topic(g));
    json_key(j, "partition");
    json_i64(j, host_group_partition(g));
    json_key(j, "replicas");
    json_arr_begin(j);
    const struct ctl_partition *ip =
        image_partition(c, host_group_topic(g), host_group_partition(g));
    if (ip) {
        for (int32_t k = 0; k < ip->n_replicas; k++)
            json_i64(j, ip->replicas[k]);
    } else {
        for (uint8_t k = 0; k < rs->conf.n_voters; k++)
            json_i64(j, rs->conf.voters[k]);
    }
    json_arr_end(j);
    json_key(j, "leader");
    json_i64(j, rs->failed || rs->leader == RAFT_NONE ? -1 : rs->leader);
    json_key(j, "term");
    json_i64(j, rs->term);
    json_key(j, "role");
    json_cstr(j, rs->failed ? "failed" : raft_role_name(rs->role));
    json_key(j, "commit_index");
    json_i64(j, rs->commit);
    json_key(j, "high_watermark");
    json_i64(j, rs->commit + 1);
    json_key(j, "log_end_offset");
    json_i64(j, rs->last + 1);
    json_key(j, "durable_index");
    json_i64(j, rs->durable);
    json_key(j, "followers");
    json_arr_begin(j);
    if (!rs->failed && rs->role == RAFT_LEADER) {
        for (size_t k = 0; k < rs->n_peers; k++) {
            json_obj_begin(j);
            json_key(j, "id");
            json_i64(j, rs->peers[k]);
            json_key(j, "match_index");
            json_i64(j, rs->match[k]);
            json_key(j, "lag");
            if (rs->match[k] < 0)
                json_null(j);
            else
                json_i64(j, rs->last > rs->match[k] ? rs->last - rs->match[k] : 0);
            json_obj_end(j);
        }
    }
    json_arr_end(j);
    json_obj_end(j);
}

void cluster_status_json(struct broker *b, struct strbuf *out)
{
    struct json j;
    json_init(&j, out);
    json_obj_begin(&j);
    json_key(&j, "node_id");
    json_i64(&j, b->cfg->node_id);
    if (!b->cluster) { /* stopping */
        json_obj_end(&j);
        return;
    }
    const struct cluster *c = b->cluster;
    json_key(&j, "mode");
    json_cstr(&j, "cluster");
    json_key(&j, "cluster_id");
    json_cstr(&j, cluster_id(c));
    json_key(&j, "registered");
    json_bool(&j, cluster_registered(c));
    json_key(&j, "controller");
    json_obj_begin(&j);
    int32_t ctl_leader = cluster_controller_leader(c);
    json_key(&j, "leader");
    json_i64(&j, ctl_leader == RAFT_NONE ? -1 : ctl_leader);
    json_key(&j, "term");
    json_i64(&j, cluster_controller_term(c));
    json_key(&j, "voters");
    json_arr_begin(&j);
    int32_t voters[BROKER_VOTERS_MAX];
    size_t nv = cluster_controller_voters(c, voters, BROKER_VOTERS_MAX);
    for (size_t i = 0; i < nv; i++)
        json_i64(&j, voters[i]);
    json_arr_end(&j);
    json_obj_end(&j);

    const struct ctl_image *img = cluster_image(c);
    json_key(&j, "brokers");
    json_arr_begin(&j);
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct ctl_broker *br = &img->brokers[i];
        json_obj_begin(&j);
        json_key(&j, "id");
        json_i64(&j, br->id);
        json_key(&j, "host");
        json_cstr(&j, br->host);
        json_key(&j, "port");
        json_i64(&j, br->port);
        json_key(&j, "cluster_address");
        json_cstr(&j, br->cluster_addr);
        json_key(&j, "fenced");
        json_bool(&j, br->fenced);
        json_obj_end(&j);
    }
    json_arr_end(&j);

    size_t n;
    struct host_group **gs = sorted_groups(c, &n);
    json_key(&j, "partitions");
    json_arr_begin(&j);
    for (size_t i = 0; i < n; i++)
        json_partition(&j, c, gs[i]);
    json_arr_end(&j);
    mem_free(gs);
    json_obj_end(&j);
}

void cluster_metrics_write(struct broker *b, struct strbuf *out)
{
    if (!b->cluster)
        return;
    const struct cluster *c = b->cluster;
    int32_t ctl_leader = cluster_controller_leader(c);
    prom_family(out, "streampulse_controller_leader", PROM_GAUGE,
                "Node id of the controller quorum's leader as this node knows it (-1 unknown).");
    prom_sample_i64(out, "streampulse_controller_leader", NULL, 0,
                    ctl_leader == RAFT_NONE ? -1 : ctl_leader);
    prom_family(out, "streampulse_controller_term", PROM_GAUGE,
                "Term of the controller quorum (the metadata Raft group) at this node.");
    prom_sample_i64(out, "streampulse_controller_term", NULL, 0, cluster_controller_term(c));

    size_t n;
    struct host_group **gs = sorted_groups(c, &n);
    struct replica_status *st = mem_calloc(n > 0 ? n : 1, sizeof(*st));
    for (size_t i = 0; i < n; i++) {
        struct host_group_status hs;
        host_group_status(gs[i], &hs);
        st[i] = hs.rs;
    }
    static const char *const names[] = {"streampulse_raft_term", "streampulse_raft_role",
                                        "streampulse_raft_commit_index", "streampulse_raft_leader"};
    static const char *const helps[] = {
        "Raft term of the partition's replica on this node.",
        "Role of the partition's replica on this node: 0 follower, 1 pre-candidate, 2 candidate, "
        "3 leader, -1 failed (storage error).",
        "Highest log index the partition's replica knows committed (high watermark - 1).",
        "Node id of the partition's Raft leader as this replica knows it (-1 unknown)."};
    for (int f = 0; f < 4; f++) {
        prom_family(out, names[f], PROM_GAUGE, helps[f]);
        for (size_t i = 0; i < n; i++) {
            char idx[16];
            snprintf(idx, sizeof(idx), "%d", (int)host_group_partition(gs[i]));
            struct prom_label l[] = {prom_label("topic", host_group_topic(gs[i])),
                                     prom_label("partition", idx)};
            int64_t v = 0;
            switch (f) {
            case 0:
                v = st[i].term;
                break;
            case 1:
                v = st[i].failed ? -1 : (int64_t)st[i].role;
                break;
            case 2:
                v = st[i].commit;
                break;
            default:
                v = st[i].failed || st[i].leader == RAFT_NONE ? -1 : st[i].leader;
                break;
            }
            prom_sample_i64(out, names[f], l, 2, v);
        }
    }
    const char *lag = "streampulse_raft_follower_lag";
    prom_family(out, lag, PROM_GAUGE,
                "On the partition's leader: entries a follower lacks (leader's last index - its "
                "durable match index); no sample while its match is unknown.");
    for (size_t i = 0; i < n; i++) {
        if (st[i].failed || st[i].role != RAFT_LEADER)
            continue;
        char idx[16];
        snprintf(idx, sizeof(idx), "%d", (int)host_group_partition(gs[i]));
        for (size_t k = 0; k < st[i].n_peers; k++) {
            if (st[i].match[k] < 0)
                continue;
            char peer[16];
            snprintf(peer, sizeof(peer), "%d", (int)st[i].peers[k]);
            struct prom_label l[] = {prom_label("topic", host_group_topic(gs[i])),
                                     prom_label("partition", idx), prom_label("follower", peer)};
            int64_t d = st[i].last - st[i].match[k];
            prom_sample_i64(out, lag, l, 3, d > 0 ? d : 0);
        }
    }
    mem_free(st);
    mem_free(gs);

    /* The transport's view of every other voter. */
    struct transport *t = host_transport(cluster_host(c));
    static const char *const tnames[] = {
        "streampulse_transport_peer_connected", "streampulse_transport_sent_bytes_total",
        "streampulse_transport_received_bytes_total",
        "streampulse_transport_dropped_messages_total", "streampulse_transport_reconnects_total"};
    static const char *const thelps[] = {
        "1 while the outbound inter-broker connection to the peer is up.",
        "Bytes of Raft frames sent to the peer.", "Bytes of Raft frames received from the peer.",
        "Raft messages to the peer dropped (peer down, queue cap, size).",
        "Outbound connections to the peer established again after the first."};
    static const enum prom_type ttypes[] = {PROM_GAUGE, PROM_COUNTER, PROM_COUNTER, PROM_COUNTER,
                                            PROM_COUNTER};
    for (int f = 0; f < 5; f++) {
        prom_family(out, tnames[f], ttypes[f], thelps[f]);
        for (int v = 0; v < b->cfg->n_voters; v++) {
            int32_t id = b->cfg->voters[v].id;
            struct transport_peer_stats ps;
            if (id == b->cfg->node_id || transport_peer_stats(t, id, &ps) != 0)
                continue;
            char peer[16];
            snprintf(peer, sizeof(peer), "%d", (int)id);
            struct prom_label l = prom_label("peer", peer);
            uint64_t val = f == 0   ? (ps.connected ? 1 : 0)
                           : f == 1 ? ps.bytes_sent
                           : f == 2 ? ps.bytes_received
                           : f == 3 ? ps.drops
                                    : ps.reconnects;
            prom_sample_u64(out, tnames[f], &l, 1, val);
        }
    }
    /* Refusals of the transport's handshakes (cluster.ssl.*, cluster.secret.file). */
    struct transport_stats ts;
    transport_get_stats(t, &ts);
    const char *tf = "streampulse_transport_tls_failures_total";
    prom_family(out, tf, PROM_COUNTER,
                "Inter-broker connections ended by TLS (cluster.ssl.*): inbound, closed at the "
                "handshake (a plaintext peer, no client certificate or one the cluster's CA did "
                "not sign, a timeout); outbound, attempts whose handshake or session failed.");
    struct prom_label in = prom_label("direction", "inbound");
    struct prom_label outb = prom_label("direction", "outbound");
    prom_sample_u64(out, tf, &in, 1, ts.tls_failures_in);
    prom_sample_u64(out, tf, &outb, 1, ts.tls_failures_out);
    const char *af = "streampulse_transport_auth_failures_total";
    prom_family(out, af, PROM_COUNTER,
                "Inter-broker handshakes without a good proof of cluster.secret.file, either "
                "way.");
    prom_sample_u64(out, af, NULL, 0, ts.auth_failures);
}
