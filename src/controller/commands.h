/* Admin and broker-lifecycle commands: what the controller leader validates and turns into
 * __cluster_metadata records.
 *
 * Every command is a pure function of the image (plus, for broker sessions, the leader's
 * struct ctl_sessions and the time passed in): it returns a Kafka error code (kafka/errors.h)
 * and, on KERR_NONE only, appends the records to write to *out (possibly none, e.g. a repeated
 * registration). On an error nothing is appended.
 *
 * Contract with the caller (the controller leader):
 *   - img must include every record the leader has appended so far, committed or not: apply a
 *     command's records to it before validating the next command. Otherwise two commands could
 *     both pass (two creates of one name) or produce overlapping producer-id blocks.
 *   - If the leader loses leadership, it rebuilds img from the committed log; uncommitted
 *     records may be lost, so their effects must not be reported as done before commit.
 *   - Random inputs (topic ids) come from the caller, which keeps these functions deterministic.
 */
#ifndef SP_CONTROLLER_COMMANDS_H
#define SP_CONTROLLER_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/image.h"
#include "controller/records.h"

#define CTL_PID_BLOCK_SIZE 1000

/* Validates one config: value is NULL for a deletion. Returns KERR_NONE, or the error to send
 * (usually KERR_INVALID_CONFIG). */
typedef int16_t (*ctl_config_check_fn)(int8_t resource_type, const char *key, const char *value,
                                       void *data);

struct ctl_config_entry {
    const char *key;
    const char *value; /* NULL: delete (alter only) */
};

struct ctl_create_topic {
    const char *name;
    struct kuuid id; /* fresh random id from the caller; zero or taken -> error */
    int32_t n_partitions;
    int32_t rf; /* replication factor, defaults resolved by the caller */
    const struct ctl_config_entry *configs;
    size_t n_configs;
};

/* Errors: INVALID_TOPIC_EXCEPTION (name rules, or it collides with an existing name once '.'
 * and '_' are taken as equal, as Kafka's metric names do), TOPIC_ALREADY_EXISTS,
 * INVALID_PARTITIONS (< 1 or > CTL_PARTITIONS_MAX), INVALID_REPLICATION_FACTOR (< 1, >
 * CTL_REPLICAS_MAX or > live brokers), INVALID_REQUEST (duplicate config key, zero or taken
 * topic id), INVALID_CONFIG (key/value too long or empty key), or check's error. check may be
 * NULL (accept all). Records: TOPIC, one PARTITION per partition (leader = preferred, epoch 0),
 * one CONFIG per entry. */
int16_t ctl_cmd_create_topic(const struct ctl_image *img, const struct ctl_create_topic *req,
                             ctl_config_check_fn check, void *data, struct ctl_recs *out);

/* Errors: UNKNOWN_TOPIC_OR_PARTITION. Records: REMOVE_TOPIC (which also drops its configs). */
int16_t ctl_cmd_delete_topic(const struct ctl_image *img, const char *name, struct ctl_recs *out);

/* Grows the topic to n_total partitions, with the replication factor of its partition 0.
 * Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS (n_total not above the current count,
 * or above CTL_PARTITIONS_MAX), INVALID_REPLICATION_FACTOR (fewer live brokers than the factor).
 * Records: TOPIC (new count), one PARTITION per new partition. */
int16_t ctl_cmd_create_partitions(const struct ctl_image *img, const char *name, int32_t n_total,
                                  struct ctl_recs *out);

/* Reassigns one partition (AlterPartitionReassignments) to target[0..n), n >= 1, which replaces
 * a reassignment in progress; n == 0 cancels the one in progress. The partition's Raft leader
 * carries it out (broker/cluster.c: the new replicas catch up as learners, then a joint
 * consensus change makes them voters, and the replicas the target leaves out stop being voters
 * in that same change) and reports the outcome (ctl_cmd_partition_replicas).
 * Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_REPLICA_ASSIGNMENT (duplicate or negative id, an
 * unregistered broker, more than CTL_REPLICAS_MAX), NO_REASSIGNMENT_IN_PROGRESS
 * (cancel with none). Records: one PARTITION (leader, epoch and replicas kept; the target set or
 * cleared), none when the target is the replicas already and nothing is in progress. */
int16_t ctl_cmd_reassign(const struct ctl_image *img, const char *name, int32_t partition,
                         const int32_t *target, int32_t n, struct ctl_recs *out);

/* A partition's Raft leader reports the voters its group has committed (voters[0..n)). When they
 * are the target's, the reassignment ends: replicas = target (its order), target cleared; other
 * changes keep the replicas that stay in order, then the new ones. The leader stays if it is a
 * replica still, else replicas[0] with epoch + 1. Errors: UNKNOWN_TOPIC_OR_PARTITION (by id: a
 * report about a deleted topic), INVALID_REPLICA_ASSIGNMENT (bad list, or one that leaves a
 * current replica out while that is no reassignment's end: removals are not done yet). Records:
 * one PARTITION, none when nothing changes. */
int16_t ctl_cmd_partition_replicas(const struct ctl_image *img, struct kuuid topic_id,
                                   int32_t partition, const int32_t *voters, int32_t n,
                                   struct ctl_recs *out);

/* `cluster voters add|remove NODE` (Kafka's AddRaftVoter / RemoveRaftVoter): changes the voters
 * the metadata quorum is to have. The base is the image's voters to be, or, before any VOTERS
 * record, current[0..n_current) (the quorum's configuration now). The quorum's Raft leader then
 * moves its configuration there (controller/runtime.c "Voter changes"). Errors: BROKER_NOT_AVAILABLE
 * (add: not a registered broker), DUPLICATE_VOTER (add: a voter already), VOTER_NOT_FOUND
 * (remove: not a voter), INVALID_REQUEST (remove of the last voter; add past CTL_VOTERS_MAX).
 * Records: one VOTERS, none when base already is what is asked (an add or remove repeated). */
/* Sets or deletes one SCRAM credential (`streampulse user`, AlterUserScramCredentials). Errors:
 * UNACCEPTABLE_CREDENTIAL (a bad name, iteration count, salt or key), UNSUPPORTED_SASL_MECHANISM,
 * RESOURCE_NOT_FOUND (deleting a credential that does not exist). Records: one USER_SCRAM. */
int16_t ctl_cmd_user(const struct ctl_image *img, const struct ctl_rec_user *u,
                     struct ctl_recs *out);

/* Adds or removes one ACL binding (CreateAcls, DeleteAcls). Errors: INVALID_REQUEST (a binding
 * the ACL record refuses). Records: one ACL, none when the image already is as asked. */
int16_t ctl_cmd_acl(const struct ctl_image *img, const struct ctl_rec_acl *a,
                    struct ctl_recs *out);

/* Sets or removes one client quota (AlterClientQuotas). Errors: INVALID_REQUEST (a quota the
 * QUOTA record refuses). Records: one QUOTA, none when the image already is as asked. */
int16_t ctl_cmd_quota(const struct ctl_image *img, const struct ctl_rec_quota *q,
                      struct ctl_recs *out);

int16_t ctl_cmd_voters(const struct ctl_image *img, bool add, int32_t node,
                       const int32_t *current, size_t n_current, bool *unchanged,
                       struct ctl_recs *out);

/* Incremental alter: each op sets (value) or deletes (NULL) one key of the resource
 * (CTL_RESOURCE_TOPIC: an existing topic's name; CTL_RESOURCE_BROKER: "" for the cluster
 * default or a broker id in decimal). Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST (bad
 * resource, duplicate key), INVALID_CONFIG (key/value too long, empty key), or check's error.
 * Records: one CONFIG per op. */
int16_t ctl_cmd_alter_configs(const struct ctl_image *img, int8_t resource_type,
                              const char *resource, const struct ctl_config_entry *ops,
                              size_t n_ops, ctl_config_check_fn check, void *data,
                              struct ctl_recs *out);

/* The leader's view of broker sessions: when each broker last heartbeated. Soft state: a new
 * leader starts empty and gives every broker a full session timeout from its first
 * ctl_cmd_fence_expired call. */
struct ctl_session {
    int32_t id;
    int64_t last_ms;
};
struct ctl_sessions {
    struct ctl_session *v; /* sorted by id, owned */
    size_t n;
    size_t cap;
};
void ctl_sessions_init(struct ctl_sessions *s);
void ctl_sessions_free(struct ctl_sessions *s);

/* One client listener of a registering broker: its name and advertised address. */
struct ctl_reg_endpoint {
    const char *listener;
    const char *host;
    int32_t port;
};

struct ctl_broker_reg {
    int32_t node_id;
    struct kuuid incarnation;
    const char *host;
    int32_t port;
    const char *cluster_addr; /* "" if none */
    const struct ctl_reg_endpoint *endpoints; /* its client listeners (may be none) */
    int32_t n_endpoints;
};

/* A broker (re)starting. The same incarnation again is a retry: KERR_NONE, no records. A new
 * incarnation replaces the old registration; the broker is fenced until its heartbeat says it
 * has caught up, so partitions it leads get a new leader (epoch + 1). Errors: INVALID_REQUEST
 * (node id < 0, empty or long host, port outside 1..65535, long cluster address, an endpoint
 * with an empty or long name or host, a bad port, a name twice, more than CTL_ENDPOINTS_MAX).
 * Records: REGISTER_BROKER, a BROKER_ENDPOINT per endpoint, then (the old incarnation was
 * live and led a partition) LEADERS off it. Starts the broker's session at now_ms. */
int16_t ctl_cmd_register_broker(const struct ctl_image *img, struct ctl_sessions *s,
                                const struct ctl_broker_reg *reg, int64_t now_ms,
                                struct ctl_recs *out);

/* A heartbeat: renews the session. A fenced broker that has caught_up with the metadata log
 * is unfenced, and partitions without a leader that it replicates get one (the first replica
 * in order that is live or is this broker; epoch + 1). Errors: STALE_BROKER_EPOCH (unknown
 * broker or another incarnation). Records: BROKER_LIVENESS, then (a partition gets a leader)
 * LEADERS back to it. */
int16_t ctl_cmd_heartbeat(const struct ctl_image *img, struct ctl_sessions *s, int32_t node_id,
                          struct kuuid incarnation, bool caught_up, int64_t now_ms,
                          struct ctl_recs *out);

/* Fences the given unfenced brokers (ids, distinct) and moves the leadership of the partitions
 * they lead to the first live replica not being fenced (or to none, -1), epoch + 1. Ids that
 * are unknown or already fenced are skipped. Records: a BROKER_LIVENESS per broker fenced, then
 * LEADERS off each of them that leads a partition. Always KERR_NONE. */
int16_t ctl_cmd_fence_brokers(const struct ctl_image *img, const int32_t *ids, size_t n_ids,
                              struct ctl_recs *out);

/* Fences every unfenced broker whose last heartbeat is session_timeout_ms or more before
 * now_ms (brokers without a session get one starting now). Always KERR_NONE. */
int16_t ctl_cmd_fence_expired(const struct ctl_image *img, struct ctl_sessions *s, int64_t now_ms,
                              int64_t session_timeout_ms, struct ctl_recs *out);

/* The next CTL_PID_BLOCK_SIZE producer ids for a broker. Blocks follow the image's last block,
 * so they never overlap, across leader changes too, and start at or above floor (the broker's:
 * ids its partitions' producer state already holds, e.g. from a data directory a single-node
 * release wrote). Errors: STALE_BROKER_EPOCH (unknown broker or other incarnation),
 * UNKNOWN_SERVER_ERROR (id space exhausted). Records: PRODUCER_IDS. */
int16_t ctl_cmd_alloc_producer_ids(const struct ctl_image *img, int32_t broker_id,
                                   struct kuuid incarnation, int64_t floor, struct ctl_recs *out);

#endif
