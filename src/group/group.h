/* One consumer group under the classic group protocol: members, generations, the rebalance
 * state machine, and the group's committed offsets. A pure state machine: no I/O, no clock of
 * its own. Inputs are requests and the monotonic time `now` (ms); outputs are answers given
 * through the hooks (at once or later), "persist me" notices (hooks->store), and the next
 * deadline (group_next_deadline) at which the owner must call group_tick. group/coordinator.c
 * owns the timers and the persistence; tests drive a group with a fake clock.
 *
 * Waiters: group_join and group_sync take an opaque `waiter` (the caller's pending response).
 * Every waiter handed in is answered exactly once through hooks->join_done / hooks->sync_done,
 * possibly before the call returns, at the latest by group_free. Pointers in a result are valid
 * only during the callback. Callbacks must not call back into the group.
 *
 * Struct fields are readable by the coordinator (describe, persistence); they change only
 * through the functions here. */
#ifndef SP_GROUP_GROUP_H
#define SP_GROUP_GROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "base/strmap.h"
#include "kafka/msg_group.h"
#include "kafka/wire.h"

enum group_state {
    GROUP_EMPTY,
    GROUP_PREPARING_REBALANCE,
    GROUP_COMPLETING_REBALANCE,
    GROUP_STABLE,
    GROUP_DEAD,
};

/* "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead" (Kafka's names). */
const char *group_state_name(enum group_state s);
/* Case-insensitive parse of a state name (ListGroups filter); false if unknown. */
bool group_state_parse(struct kstr name, enum group_state *out);

struct group_config {
    int32_t min_session_timeout_ms;     /* group.min.session.timeout.ms */
    int32_t max_session_timeout_ms;     /* group.max.session.timeout.ms */
    int32_t initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms */
    int32_t max_size;                   /* group.max.size: members + members awaiting an id */
    int32_t max_metadata_bytes;         /* group.max.metadata.bytes: one member's protocols
                                           (names + metadata), and one assignment */
};

struct group_protocol {
    char *name;        /* owned */
    uint8_t *metadata; /* owned; NULL when empty */
    int32_t metadata_len;
};

struct group_member {
    char *member_id;         /* owned */
    char *instance_id;       /* owned; NULL for a dynamic member */
    char *client_id;         /* owned */
    char *client_host;       /* owned */
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms;
    struct group_protocol *protocols; /* owned, in the member's order of preference */
    int32_t n_protocols;
    uint8_t *assignment;     /* owned; NULL when empty */
    int32_t assignment_len;
    void *join_waiter;       /* non-NULL while its JoinGroup awaits the rebalance */
    void *sync_waiter;       /* non-NULL while its SyncGroup awaits the leader */
    int64_t session_deadline_ms; /* evicted at this time unless awaiting join or sync */
};

struct group_pending {
    char *member_id;      /* owned: an id handed out with MEMBER_ID_REQUIRED */
    int64_t deadline_ms;  /* forgotten after this unless it joins */
};

/* A committed offset. */
struct group_offset {
    char *topic;          /* owned */
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch; /* -1 if unknown */
    char *metadata;       /* owned, never NULL ("" when the client sent null) */
    int64_t commit_ts_ms; /* wall clock */
};

struct group;

struct group_join_member_view {
    struct kstr member_id;
    struct kstr instance_id; /* null for dynamic members */
    struct kbytes metadata;  /* the member's metadata for the selected protocol */
};

struct group_join_result {
    int16_t error_code;
    int32_t generation_id;     /* -1 on error */
    struct kstr protocol_type; /* null when none */
    struct kstr protocol_name; /* null when none */
    struct kstr leader_id;     /* "" when none */
    struct kstr member_id;     /* the member's id ("" when none) */
    const struct group_join_member_view *members; /* the leader only: every member */
    int32_t n_members;
};

struct group_sync_result {
    int16_t error_code;
    struct kstr protocol_type; /* null when none */
    struct kstr protocol_name; /* null when none */
    struct kbytes assignment;  /* empty on error */
};

struct group_hooks {
    void (*join_done)(void *waiter, const struct group_join_result *res);
    void (*sync_done)(void *waiter, const struct group_sync_result *res);
    /* The group reached a state that is persisted (a generation got its assignment, the group
     * became empty, a static member was replaced): write its metadata record. Optional. */
    void (*store)(void *env, struct group *g);
    void *env;
};

struct group {
    char *id;                     /* owned */
    enum group_state state;
    int32_t generation;
    char *protocol_type;          /* owned; NULL until the first member joins */
    char *protocol_name;          /* owned; the selected protocol, NULL when none */
    char *leader_id;              /* owned; NULL when none */
    struct group_member **members; /* owned, n_members entries */
    int32_t n_members;
    int32_t cap_members;
    struct group_pending *pending; /* owned, n_pending entries */
    int32_t n_pending;
    int32_t cap_pending;
    int64_t rebalance_deadline_ms;  /* PreparingRebalance / CompletingRebalance: give up then */
    int64_t initial_delay_until_ms; /* PreparingRebalance from Empty: wait for more members */
    int64_t state_ts_wall_ms;       /* wall clock of the last state change (records, expiry) */
    struct strmap offsets;          /* "topic\0<partition>" -> struct group_offset * */
    const struct group_config *cfg; /* borrowed */
    const struct group_hooks *hooks; /* borrowed */
    uint64_t id_seq;                /* member ids handed out */
};

/* A new Empty group (generation 0, no members, no offsets). cfg and hooks are borrowed and
 * must outlive the group. */
struct group *group_new(struct kstr id, const struct group_config *cfg,
                        const struct group_hooks *hooks, int64_t wall_ms);
/* Answers every waiter still held (error_code), frees members and offsets. */
void group_free(struct group *g, int16_t error_code);

struct group_join_req {
    struct kstr member_id;   /* "" for a member without an id yet */
    struct kstr instance_id; /* null for a dynamic member */
    struct kstr client_id;
    struct kstr client_host;
    struct kstr protocol_type;
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms; /* -1: the session timeout */
    const struct join_group_protocol *protocols;
    int32_t n_protocols;
    bool require_known_member_id; /* JoinGroup v4+: hand out an id with MEMBER_ID_REQUIRED */
};

/* JoinGroup. Errors: INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL, MEMBER_ID_REQUIRED,
 * UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED, INVALID_REQUEST (metadata over
 * group.max.metadata.bytes), COORDINATOR_NOT_AVAILABLE (Dead group). wall_ms stamps state
 * changes. */
void group_join(struct group *g, const struct group_join_req *req, int64_t now, int64_t wall_ms,
                void *waiter);

struct group_sync_req {
    struct kstr member_id;
    struct kstr instance_id;   /* nullable */
    int32_t generation_id;
    struct kstr protocol_type; /* nullable (SyncGroup v5+ sends them) */
    struct kstr protocol_name; /* nullable */
    const struct sync_group_assignment *assignments; /* the leader's */
    int32_t n_assignments;
};

/* SyncGroup. Errors: UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION,
 * INCONSISTENT_GROUP_PROTOCOL, REBALANCE_IN_PROGRESS, INVALID_REQUEST (assignment too large),
 * COORDINATOR_NOT_AVAILABLE. */
void group_sync(struct group *g, const struct group_sync_req *req, int64_t now, int64_t wall_ms,
                void *waiter);

/* Heartbeat: NONE, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, ILLEGAL_GENERATION,
 * REBALANCE_IN_PROGRESS or COORDINATOR_NOT_AVAILABLE. */
int16_t group_heartbeat(struct group *g, struct kstr member_id, struct kstr instance_id,
                        int32_t generation_id, int64_t now);

/* LeaveGroup of one member (by member id, or by instance id with member id "" or matching):
 * NONE, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID or COORDINATOR_NOT_AVAILABLE. */
int16_t group_leave(struct group *g, struct kstr member_id, struct kstr instance_id, int64_t now,
                    int64_t wall_ms);

/* Whether an OffsetCommit from (member, generation) may be applied now: NONE,
 * COORDINATOR_NOT_AVAILABLE, FENCED_INSTANCE_ID, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or
 * REBALANCE_IN_PROGRESS. A generation < 0 with member "" is an admin commit, allowed only while
 * the group is Empty. A valid member's commit counts as a heartbeat. */
int16_t group_commit_allowed(struct group *g, struct kstr member_id, struct kstr instance_id,
                             int32_t generation_id, int64_t now);

/* Runs what is due at now: evicts members and pending ids past their session, completes or
 * abandons a rebalance whose deadline passed. */
void group_tick(struct group *g, int64_t now, int64_t wall_ms);
/* The earliest time group_tick has something to do; INT64_MAX if nothing. */
int64_t group_next_deadline(const struct group *g);

/* Marks the group Dead (deleted or expired), forgetting ids handed out with MEMBER_ID_REQUIRED.
 * Only for a group without members (CHECKed). */
void group_mark_dead(struct group *g);

/* ---- committed offsets ---- */

/* Inserts or replaces the offset of (topic, partition). */
void group_offset_put(struct group *g, struct kstr topic, int32_t partition, int64_t offset,
                      int32_t leader_epoch, struct kstr metadata, int64_t commit_ts_ms);
/* Removes it; returns whether it existed. */
bool group_offset_del(struct group *g, struct kstr topic, int32_t partition);
const struct group_offset *group_offset_get(const struct group *g, struct kstr topic,
                                            int32_t partition);
static inline int32_t group_offset_count(const struct group *g)
{
    return (int32_t)g->offsets.len;
}
/* Iterates: for (size_t it = 0; (o = group_offset_next(g, &it));) */
const struct group_offset *group_offset_next(const struct group *g, size_t *it);

/* Whether a member of this (consumer-protocol) group subscribes to topic: parses the members'
 * ConsumerProtocolSubscription of the selected protocol. */
bool group_subscribes(const struct group *g, struct kstr topic);

/* ---- restoring from the log ---- */

struct group_restore_member {
    struct kstr member_id;
    struct kstr instance_id; /* nullable */
    struct kstr client_id;
    struct kstr client_host;
    int32_t rebalance_timeout_ms;
    int32_t session_timeout_ms;
    struct kbytes subscription;
    struct kbytes assignment;
};

struct group_restore {
    struct kstr protocol_type;
    int32_t generation;
    struct kstr protocol_name; /* nullable */
    struct kstr leader_id;     /* nullable */
    int64_t state_ts_wall_ms;
    const struct group_restore_member *members;
    int32_t n_members;
};

/* Replaces the group's membership with a stored one (replay of a GroupMetadata record): Stable
 * with those members (sessions restarted at now) or Empty. Waiters held are answered with
 * REBALANCE_IN_PROGRESS (there are none while a coordinator loads). Offsets are untouched. */
void group_restore(struct group *g, const struct group_restore *r, int64_t now);

/* Invariant checker (DCHECKed at the entry and exit of the functions above). */
void group_check(const struct group *g);

#endif
