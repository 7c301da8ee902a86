/* Cluster mode of the broker (controller.quorum.voters set): the inter-broker transport, the
 * controller (the metadata Raft group __cluster_metadata-0, controller/runtime.h) and the
 * replica host (raft/host.h) that runs a Raft group for every local partition replica.
 *
 * Started by broker_start after the topics are loaded and stopped by broker_stop before they
 * close. Without voters none of this exists (b->cluster == NULL) and the broker is the
 * single-node one.
 *
 * What it does:
 *   - one transport on this node's cluster address (cfg->cluster_host:port), owned by the host;
 *     the controller group's Raft messages reach ctl_runtime_step through the host's foreign
 *     callback, controller frames reach ctl_runtime_deliver;
 *   - registers this broker (node id, advertised client address, cluster address) with the
 *     controller, retrying until it is accepted, then heartbeats; a heartbeat refused as
 *     STALE_BROKER_EPOCH registers again;
 *   - keeps the local replicas equal to the committed image: for every partition whose
 *     replicas include this node, the topic exists locally (topics.c, same partition count)
 *     and a host group runs over the partition's plog with voters = its replicas; a group whose
 *     topic left the image (or was created again under a new id) is removed and the local
 *     topic deleted. This reconciliation runs on the cluster timer after on_image_change
 *     marked the image changed (never inside the controller's or the transport's callbacks),
 *     and once at start (the image replayed at open is reconciled like a change).
 *
 * Not yet (issue 5): the request paths (Metadata, Produce, Fetch... in cluster mode), topic
 * configs from the image, brokers that are not voters (the controller runtime needs this node
 * among the voters: refused at start). */
#ifndef SP_BROKER_CLUSTER_H
#define SP_BROKER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct broker;
struct cluster;
struct host;
struct host_group;

/* Starts cluster mode for b (b->cfg->n_voters > 0, CHECK). Returns 0 and sets b->cluster, or
 * a negative code with a message in err. */
int cluster_start(struct broker *b, char *err, size_t errcap);
/* Closes the controller and the host (every replica; the plogs stay open for topics.c to close).
 * No-op when b->cluster is NULL. */
void cluster_stop(struct broker *b);

/* Queries (b->cluster non-NULL). */
struct host *cluster_host(const struct cluster *c);
/* The host group of a local replica, or NULL. */
struct host_group *cluster_group(const struct cluster *c, const char *topic, int32_t partition);
bool cluster_registered(const struct cluster *c);
int32_t cluster_controller_leader(const struct cluster *c); /* RAFT_NONE if unknown */
int cluster_port(const struct cluster *c);                   /* the bound cluster port */

#endif
