/* The group coordinator: every group this broker coordinates, their timers, and their durable
 * state as records of __consumer_offsets (group/records.h).
 *
 * The coordinator owns the groups (group/group.h) and one reactor timer per group, armed at
 * group_next_deadline. It does no storage I/O itself: the broker appends batches for it
 * (io->append) and feeds it the records of __consumer_offsets at startup
 * (coordinator_load_*). OffsetCommit, DeleteGroups and OffsetDelete are answered only once
 * their records are durable; group metadata records are written behind the state change (a
 * crash in between loses at most the latest generation's record: members then rejoin).
 *
 * Group g lives in partition grec_partition_for(g, n) of __consumer_offsets. While a partition
 * loads, requests for its groups get COORDINATOR_LOAD_IN_PROGRESS. With cfg.cluster false (unit
 * tests) every partition is owned from the start; the broker sets it, and then none is until the
 * broker, leading that partition's Raft group, replays it (load_begin ... load_end), and it
 * stops being so at coordinator_unload (leadership lost): requests for groups of a partition
 * that is not ours get NOT_COORDINATOR, and clients look for the coordinator again.
 *
 * Limits: group.max.size members per group, group.max.metadata.bytes per member's protocols
 * and per assignment, offset.metadata.max.bytes per committed metadata string, and at most
 * max_groups groups (new groups beyond it get COORDINATOR_NOT_AVAILABLE). Offsets exist only
 * for partitions that exist, so max.partitions bounds them per group.
 *
 * All on the reactor thread. */
#ifndef SP_GROUP_COORDINATOR_H
#define SP_GROUP_COORDINATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "group/group.h"
#include "kafka/msg_group.h"
#include "net/reactor.h"

struct coordinator;

struct coordinator_io {
    /* Appends batch (len bytes, a valid uncompressed record batch, rewritten in place) to
     * partition `partition` of __consumer_offsets, creating the topic if needed. Returns 0 and
     * later calls done(arg, rc) once durable (rc 0) or failed; or returns < 0 and never calls
     * done. done may run before append returns. */
    int (*append)(void *ctx, int32_t partition, uint8_t *batch, size_t len,
                  void (*done)(void *arg, int rc, int64_t base_offset), void *arg);
    /* Whether topic-partition exists (offsets are committed only for those). */
    bool (*partition_exists)(void *ctx, struct kstr topic, int32_t partition);
    /* Answers of JoinGroup and SyncGroup (see group.h). */
    void (*join_done)(void *waiter, const struct group_join_result *res);
    void (*sync_done)(void *waiter, const struct group_sync_result *res);
    void *ctx;
};

struct coordinator_config {
    struct group_config group;
    int32_t offsets_partitions;         /* offsets.topic.num.partitions */
    int64_t offsets_retention_ms;       /* offsets.retention.minutes, in ms */
    int64_t offsets_retention_check_ms; /* offsets.retention.check.interval.ms */
    int32_t offset_metadata_max_bytes;  /* offset.metadata.max.bytes */
    int32_t max_groups;
    bool cluster; /* partitions start not ours (see above) */
};

/* cfg and io are copied. The expiry timer starts at once. */
struct coordinator *coordinator_new(struct reactor *r, const struct coordinator_config *cfg,
                                    const struct coordinator_io *io);
/* Frees every group, answering waiting JoinGroup/SyncGroup requests with NOT_COORDINATOR.
 * Appends still in flight must have completed (the broker closes its logs first). */
void coordinator_free(struct coordinator *c);

/* The partition count of __consumer_offsets when the topic already exists with another count
 * than configured (the existing one wins: group placement must not move). Changing it unloads
 * every partition first. */
void coordinator_set_partitions(struct coordinator *c, int32_t n);
int32_t coordinator_partitions(const struct coordinator *c);
int32_t coordinator_partition_for(const struct coordinator *c, struct kstr group_id);

/* Replay of partition p: begin, every record in log order (value.len -1: tombstone), end.
 * Records that do not decode are skipped and counted. load_begin drops what p held before. */
void coordinator_load_begin(struct coordinator *c, int32_t p);
void coordinator_load_record(struct coordinator *c, int32_t p, struct kbytes key,
                             struct kbytes value);
void coordinator_load_end(struct coordinator *c, int32_t p);
/* Partition p is no longer ours: its groups are dropped from memory (waiting JoinGroup and
 * SyncGroup answered NOT_COORDINATOR; appends in flight complete without touching memory and
 * answer NOT_COORDINATOR if they fail). */
void coordinator_unload(struct coordinator *c, int32_t p);
/* Whether p is loaded or loading here. */
bool coordinator_owns(const struct coordinator *c, int32_t p);

/* ---- requests (errors as group.h documents, plus INVALID_GROUP_ID for an empty group id,
 * COORDINATOR_LOAD_IN_PROGRESS while its partition loads) ---- */

void coordinator_join(struct coordinator *c, struct kstr group_id, const struct group_join_req *req,
                      void *waiter);
void coordinator_sync(struct coordinator *c, struct kstr group_id, const struct group_sync_req *req,
                      void *waiter);
int16_t coordinator_heartbeat(struct coordinator *c, const struct heartbeat_req *req);
/* Each member leaves; errors[i] gets its result. Returns the request-level error. */
int16_t coordinator_leave(struct coordinator *c, struct kstr group_id,
                          const struct leave_group_member *members, int32_t n, int16_t *errors);

/* OffsetCommit. resp must have the request's shape (topics and partitions in request order,
 * error codes 0); its error codes are filled. Returns false when the answer is complete now, or
 * true when done(arg) will be called once the records are durable (error codes final then;
 * resp must stay valid until then). */
bool coordinator_commit(struct coordinator *c, const struct offset_commit_req *req,
                        struct offset_commit_resp *resp, void (*done)(void *arg), void *arg);
/* OffsetFetch: fills resp from arena memory (strings may point into the coordinator's state:
 * encode before the next coordinator call). */
void coordinator_fetch_offsets(struct coordinator *c, const struct offset_fetch_req *req,
                               struct arena *a, struct offset_fetch_resp *resp);
void coordinator_describe(struct coordinator *c, struct kstr group_id, struct arena *a,
                          struct describe_groups_group *out);
void coordinator_list(struct coordinator *c, const struct list_groups_req *req, struct arena *a,
                      struct list_groups_resp *resp);
/* DeleteGroups of one group: returns its error code; *pending says done(arg) will run once the
 * tombstones are durable (the group is gone from memory at once). */
int16_t coordinator_delete_group(struct coordinator *c, struct kstr group_id,
                                 void (*done)(void *arg), void *arg, bool *pending);
/* OffsetDelete: resp must have the request's shape; returns the top-level error; *pending as
 * above. */
int16_t coordinator_delete_offsets(struct coordinator *c, const struct offset_delete_req *req,
                                   struct offset_delete_resp *resp, void (*done)(void *arg),
                                   void *arg, bool *pending);

/* Expires the offsets of Empty groups older than offsets.retention (max of commit time and
 * the time the group became Empty), then removes Empty groups left without offsets (writing
 * tombstones). Runs every offsets.retention.check.interval.ms; exposed for tests. */
void coordinator_expire(struct coordinator *c, int64_t wall_ms);

/* The topic was deleted: removes its committed offsets from every group (tombstones), as
 * Kafka does, so a topic created again under the name starts without them; an Empty group
 * left without offsets is removed. Groups whose coordinator partition is still loading keep
 * theirs (the topic is gone before any client could see them, and their next expiry or a
 * later deletion of a topic of that name removes them). */
void coordinator_forget_topic(struct coordinator *c, const char *topic);

/* The group, or NULL (tests, metrics). */
struct group *coordinator_find(struct coordinator *c, struct kstr group_id);
size_t coordinator_group_count(const struct coordinator *c);

#endif
