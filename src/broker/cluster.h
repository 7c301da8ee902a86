/* The replicated half of every broker: the inter-broker transport, the
 * controller (the metadata Raft group __cluster_metadata-0, controller/runtime.h) and the
 * replica host (replication/host.h) that runs a Raft group for every local partition replica.
 *
 * Started by broker_start after the topics are loaded and stopped by broker_stop before they
 * close. Every broker runs it: with controller.quorum.voters it joins that static quorum;
 * without, it is the only voter of a quorum of its own (a single node), on the same code.
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
 * Requests: CreateTopics, DeleteTopics and CreatePartitions go to the controller
 * (cluster_admin.c); Metadata is answered from the image (cluster_req.c); Produce, Fetch and
 * ListOffsets are served by the partition's Raft leader only (produce.c, fetch.c, offsets.c);
 * producer ids come from the controller (cluster_pid_source_new); FindCoordinator names the
 * Raft leader of the group's __consumer_offsets partition (cluster_req.c), whose broker
 * coordinates the group (groups.c: the coordinator follows that leadership).
 *
 * Topic configs live in the metadata log: AlterConfigs goes to the controller, DescribeConfigs
 * answers from the image, and every broker applies the image's configs to its local topics
 * after each change; each partition's leader hands the leadership to the preferred replica
 * when it is live and caught up (cluster_configs.h).
 *
 * Brokers that are not voters (node.id not in controller.quorum.voters; cluster.listener is
 * then required and must be an address the other brokers can dial) observe the metadata log:
 * their runtime is ctl_runtime_open_observer's (it fetches committed metadata from the
 * controller leader, keeps the image in memory only and forwards commands), and they are full
 * replicas of partitions like any broker. The transport accepts any node of the cluster (same
 * cluster id) and adds every registered broker as a peer (voters keep their config entries).
 *
 * Log start: retention (every replica on its own timer) and DeleteRecords (at the leader) move a
 * local replica's log start through its Raft replica (partition_apply_retention,
 * partition_truncate_prefix: replica_compact), never behind the core's back; a replica below
 * its leader's log start is installed (replication/replica.h).
 *
 * Not yet (issue 5): followers do not learn the leader's log start (Kafka's fetch carries it, so
 * a DeleteRecords reaches every replica there; here only retention runs everywhere). */
#ifndef SP_BROKER_CLUSTER_H
#define SP_BROKER_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/runtime.h"

/* The metadata log's directory under log.dirs. */
#define CLUSTER_METADATA_DIR "__cluster_metadata-0"

struct broker;
struct cluster;
struct create_partitions_req;
struct create_topics_req;
struct delete_topics_req;
struct host;
struct host_group;
struct metadata_req;
struct pid_source;
struct request;

/* Starts the cluster side of b: the transport, the controller (a voter of the static quorum, an
 * observer of it, or the only voter of its own quorum when standalone: b->cfg->n_voters == 0)
 * and the replica host. Returns 0 and sets b->cluster, or a negative code with a message in
 * err. */
int cluster_start(struct broker *b, char *err, size_t errcap);
/* Closes the controller and the host (every replica; the plogs stay open for topics.c to close).
 * No-op when b->cluster is NULL. */
void cluster_stop(struct broker *b);

/* Runs a controller command (ctl_runtime_submit's contract: done exactly once). */
void cluster_submit(struct cluster *c, const struct ctl_request *req, ctl_done_fn done, void *data);

/* Whether the image has this topic-partition. */
bool cluster_partition_exists(const struct cluster *c, struct kstr topic, int32_t partition);
/* The partition's leader and leader epoch (Raft's as this broker's replica knows them, -1 when
 * it knows no leader; without a local replica the image's) and whether this broker leads it now.
 * Returns false (outputs -1, false) when the image has no such partition. */
bool cluster_partition_leader(const struct cluster *c, const char *topic, int32_t partition,
                              int32_t *leader, int32_t *epoch, bool *leading);

/* The broker's producer-id block source (broker/producer_ids.h): blocks granted by the
 * controller (ALLOC_PIDS, recorded in the metadata log), so ids never collide across brokers,
 * each starting at or above floor (ids the local partitions' producer state holds already, and
 * a single-node release's local block file). Created before cluster_start: -EAGAIN until the
 * cluster runs, this broker is registered and a grant has arrived (InitProducerId then answers a
 * retriable error). */
struct pid_source *cluster_pid_source_new(struct broker *b, int64_t floor);

/* Queries (b->cluster non-NULL). */
const struct ctl_image *cluster_image(const struct cluster *c);
struct host *cluster_host(const struct cluster *c);
/* The host group of a local replica, or NULL. */
struct host_group *cluster_group(const struct cluster *c, const char *topic, int32_t partition);
bool cluster_registered(const struct cluster *c);
/* Registered, and the image has this broker unfenced: it may lead partitions and host new ones. */
bool cluster_live(const struct cluster *c);
/* Runs the reactor until this broker is live (cluster_live) and holds its first producer-id
 * block, or max_ms passed: a standalone node elects itself, registers and is unfenced within a
 * few ms, and waiting for that at startup means a client's first CreateTopics finds a broker to
 * place the topic on and its first InitProducerId an id. max_ms counts from the start or from
 * the end of the last reconcile, whichever is later (opening the node's replicas is not the
 * controller being slow). Returns 0, or -ERR_TIMEOUT (logged).
 * Not from inside a reactor callback. */
int cluster_await_live(struct broker *b, int64_t max_ms);
/* The cluster id: the same on every node of one quorum (derived from the voters). */
const char *cluster_id(const struct cluster *c);
int32_t cluster_controller_leader(const struct cluster *c); /* RAFT_NONE if unknown */
int64_t cluster_controller_term(const struct cluster *c);   /* this node's metadata-group term */
/* The metadata quorum's voters as this node knows them (ctl_runtime_voters) into ids[0..cap). */
size_t cluster_controller_voters(const struct cluster *c, int32_t *ids, size_t cap);
int cluster_port(const struct cluster *c);                  /* the bound cluster port */

/* Status (cluster_status.c), for the admin listener; reactor thread. */
struct strbuf;
/* GET /v1/cluster: {"node_id", "mode": "cluster", cluster_id, registered, controller {leader (-1 unknown), term}, brokers
 * [{id, host, port, cluster_address, fenced}] from the image, and partitions [{topic,
 * partition, replicas, leader (-1 unknown), term, role ("failed" for a failed replica),
 * commit_index, high_watermark, log_end_offset, durable_index, followers}] for every local
 * replica sorted by (topic, partition); followers is filled on the leader only:
 * [{id, match_index (-1 unknown), lag (null while unknown)}]. No trailing newline. */
void cluster_status_json(struct broker *b, struct strbuf *out);
/* The cluster metric families: streampulse_controller_leader,
 * streampulse_raft_{term,role,commit_index,leader}{topic,partition},
 * streampulse_raft_follower_lag{topic,partition,follower} (leader only),
 * streampulse_transport_{peer_connected,sent_bytes_total,received_bytes_total,
 * dropped_messages_total,reconnects_total}{peer}. */
void cluster_metrics_write(struct broker *b, struct strbuf *out);

/* Graceful shutdown (broker_stop, before anything closes): every partition this node leads is
 * handed to its most up-to-date other voter (host_transfer_all), and the reactor runs until
 * this node leads none or max_ms passed, so producers see a leader change without an election
 * timeout. No-op when b->cluster is NULL. Not from inside a reactor callback. */
void cluster_handover(struct broker *b, int64_t max_ms);

/* Where to send a client when this broker's replica of the partition has known no leader for
 * CLUSTER_LEADER_HINT_AFTER_MS (this node is probably cut off from the others): another replica
 * of the image, a different one each second; -1 otherwise (a leader is known, the election is
 * recent, or there is no local replica). Metadata names it as leader with leader epoch -1, so a
 * client stuck asking a cut-off broker goes to a node that knows (and that answers
 * NOT_LEADER_OR_FOLLOWER with better metadata if it does not lead). */
#define CLUSTER_LEADER_HINT_AFTER_MS 1000
int32_t cluster_leader_hint(const struct cluster *c, const char *topic, int32_t partition);

#endif
