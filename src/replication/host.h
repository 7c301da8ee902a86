/* The replica host: one per broker, it runs every local partition Raft group (replication/replica.h)
 * over one inter-broker transport (replication/transport.h) on the broker's reactor.
 *
 * Owns: the transport (created by host_new with its on_msg routed here), every replica (one
 * per group added), one reactor timer for the time of all groups and one for deferred flushes.
 * Borrows: the reactor, and each group's plog (opened by the owner before host_add_group and
 * closed by it after host_remove_group / host_free).
 *
 * Routing. A message from the transport goes to its group's replica (replica_step within the
 * transport callback, so the payloads it points to stay valid until the core's advance). A
 * message for a group this host does not run is dropped and counted (stats.unknown_group_drops):
 * a peer may learn of a group before we do. A replica's outgoing messages go to transport_send
 * with the group attached.
 *
 * Flushing. Whatever the replicas queue during one reactor iteration leaves at the end of it:
 * the first send arms a zero-delay timer, which runs after that iteration's fd events, and
 * calls transport_flush once; the tick timer flushes at its own end. So the heartbeats (and
 * heartbeat responses) of all groups to a peer leave as one frame per iteration.
 *
 * Time. One reactor timer for the whole host. Each group is kept in a min-heap keyed by
 * raft_next_deadline, rounded up to a multiple of tick_ms (so groups whose deadlines fall in
 * the same tick_ms slot are ticked together and their heartbeats share a frame), and only
 * groups whose slot has come are ticked. A group's deadline is read again at the end of every
 * iteration in which anything happened to it (an input from the host, a message it sent, a
 * commit); as a safety net no group waits longer than HOST_DEADLINE_MAX_MS between ticks,
 * except a leader alone in its group (no deadline at all: thousands of single-replica
 * partitions cost nothing while idle), which is ticked only before its next input.
 * The core's clock moves only with raft_tick and every timeout is measured from it, so each
 * input to a group (message, proposal, transfer) is preceded by a tick to the reactor's time;
 * otherwise a heartbeat would restart the election timer from a stale clock.
 *
 * Durability. The plogs' flushes complete through flusher_poll: the OWNER polls the flusher
 * on the reactor (watch flusher_fd, call flusher_poll, as broker.c does); each completion runs
 * the replica's flush callback inside flusher_poll, which reports durability to its core and
 * sends what that released (acks, commits) through the host; the deferred flush then sends it
 * at the end of that same iteration. The host never polls the flusher itself.
 *
 * Leadership. on_leader fires when the pair (this node leads?, leader id) of a group changes,
 * at the end of the iteration in which the change happened (after the replica finished its
 * ready), with the term. The callback may propose or transfer, but not remove the group.
 * A replica that failed (a storage error, replica.h) counts as leading nothing and following
 * no one (on_leader says so once), is no longer ticked, and stays until the owner removes it
 * (and re-adds it over a reopened plog once the disk is healthy).
 *
 * Everything on the reactor thread. */
#ifndef SP_RAFT_HOST_H
#define SP_RAFT_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/reactor.h"
#include "replication/replica.h"
#include "replication/transport.h"

#define HOST_DEADLINE_MAX_MS 1000 /* longest a group goes untouched by the tick timer */

struct host;
struct host_group;
struct plog;

/* A field left at 0 takes the default in its comment. */
struct host_options {
    int64_t tick_ms;             /* timer granularity: 10 */
    int64_t election_timeout_ms; /* raft base (drawn from [base, 2 * base)): 150 */
    int64_t heartbeat_ms;        /* 50 */
    bool no_pre_vote;            /* PreVote is on unless set */
    bool no_check_quorum;        /* CheckQuorum is on unless set */
    size_t msg_bytes_max;        /* entry bytes per APPEND: replica's default (1 MiB) */
    uint64_t seed;               /* mixed into every group's PRNG seed */
};

/* A leadership change of a group (see above). */
struct host_leader_change {
    bool leading;     /* this node is the leader now */
    int32_t leader;   /* the leader's id, RAFT_NONE if unknown */
    int64_t term;
    enum raft_role role;
};

typedef void (*host_leader_fn)(struct host_group *g, const struct host_leader_change *c,
                               void *data);
typedef void (*host_commit_fn)(struct host_group *g, int64_t commit, void *data);

struct host_group_callbacks {
    host_leader_fn on_leader; /* may be NULL */
    host_commit_fn on_commit; /* replica_commit_fn's contract; may be NULL */
    void *data;
};

/* Creates the host and its transport (tc->self_id is this node; on_msg is the host's).
 * Returns 0 and *out (release with host_free), -ERR_INVALID or transport_new's codes. */
int host_new(struct reactor *r, const struct transport_config *tc, const struct host_options *o,
             struct host **out);
/* Closes every replica (their plogs stay open: the owner closes them afterwards), frees the
 * transport and the timers. Not from inside a host or transport callback. */
void host_free(struct host *h);

/* Messages for groups this host does not run go to cb (with transport_msg_cb's contract)
 * instead of being dropped, while one is set (NULL: drop again). For a group driven outside the
 * host on the same transport, such as the controller's __cluster_metadata-0: its owner steps it
 * and flushes the transport itself. */
void host_set_foreign_cb(struct host *h, transport_msg_cb cb, void *data);

/* Opens a replica for the group (topic, partition) over log, bootstrap configuration voters
 * (n_voters of them; n_voters == 0: learn it from the log), and starts it ticking. The topic is
 * copied; cb may be NULL. Returns 0 and *out (may be NULL), -ERR_EXISTS (the group is already
 * here), -ERR_INVALID (bad name or voters), or replica_open's codes. */
int host_add_group(struct host *h, const char *topic, int32_t partition, struct plog *log,
                   const int32_t *voters, size_t n_voters, const struct host_group_callbacks *cb,
                   struct host_group **out);
/* Closes the group's replica (its plog stays open) and forgets the group. Not from inside the
 * group's own callbacks. */
void host_remove_group(struct host *h, struct host_group *g);
/* The group, or NULL. */
struct host_group *host_group_find(const struct host *h, const char *topic, int32_t partition);

/* Leader: replica_propose on the group (same contract and codes). */
int host_propose(struct host_group *g, uint8_t *batch, size_t len, int32_t record_count,
                 bool durable, int64_t *first, int64_t *last, int64_t *term);
/* replica_propose_members on the group (same codes). */
int host_propose_members(struct host_group *g, const int32_t *voters, size_t n,
                         const int32_t *learners, size_t n_learners);
/* replica_campaign on the group (same codes). */
int host_campaign(struct host_group *g);
/* replica_transfer_leader on the group (same codes). */
int host_transfer(struct host_group *g, int32_t to);
/* replica_compact on the group (same contract and codes): retention, DeleteRecords. */
int host_compact(struct host_group *g, int64_t new_start);
/* Asks every group this node leads to hand its leadership to the most up-to-date other voter
 * (graceful shutdown: keep running the reactor until host_leader_count() is 0 or a deadline).
 * Returns how many transfers were started. */
size_t host_transfer_all(struct host *h);

/* Sends whatever is queued now (the host does this by itself at the end of each iteration).
 * Not from inside a host callback. */
void host_flush(struct host *h);

/* The group's replica, for reads and for inputs the host does not wrap. An input made directly
 * on it must be preceded by replica_tick(rp, reactor now) (the core's clock moves only with
 * ticks; see host.c) and followed by host_touch(g), so its deadline and leadership are looked
 * at again. */
struct replica *host_group_replica(const struct host_group *g);
void host_touch(struct host_group *g);
const char *host_group_topic(const struct host_group *g);
int32_t host_group_partition(const struct host_group *g);

struct host_group_status {
    struct replica_status rs; /* role, leader, term, commit, followers' match... */
    bool leading;
};
void host_group_status(const struct host_group *g, struct host_group_status *out);

struct host_stats {
    size_t groups;
    size_t leaders;               /* groups this node leads */
    size_t failed_groups;         /* replicas failed by a storage error (replica_failed) */
    uint64_t unknown_group_drops; /* messages for groups not here */
    uint64_t invalid_msgs;        /* messages a replica refused (-ERR_INVALID) */
    uint64_t send_failures;       /* transport_send refused (peer down, cap, size, unknown) */
    uint64_t ticks;               /* tick timer firings */
    uint64_t group_ticks;         /* replica_tick calls */
    uint64_t flushes;             /* transport_flush calls */
};
void host_get_stats(const struct host *h, struct host_stats *out);
size_t host_leader_count(const struct host *h);

/* Iterates the groups: for (size_t it = 0; (g = host_next_group(h, &it));) — not while adding
 * or removing. */
struct host_group *host_next_group(const struct host *h, size_t *it);

struct transport *host_transport(const struct host *h);
int32_t host_node_id(const struct host *h);

#endif
