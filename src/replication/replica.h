/* A partition replica: the pure Raft core (raft/raft.h) bound to the partition's Kafka log
 * (storage/plog.h), as DESIGN.md §6 lays out. Raft index = Kafka offset, entry = record batch,
 * term = partitionLeaderEpoch (the plog's leader-epoch cache holds the term ranges).
 *
 * Entries as stored in the plog:
 *   DATA    the client's record batch, as proposed (base offset and epoch set by the log);
 *   NOOP    a record-less control batch (kbatch_build_empty_control);
 *   CONFIG  the same record-less control batch, plus a record in the side file
 *           `raft-conf-log` keyed by (offset, term) holding the raft_conf encoding
 *           (replication/conflog.h).
 * Every client skips control batches, and these carry no records at all. Hard state (term,
 * vote and a commit hint) lives in `raft-hard-state` (replication/hardstate.h).
 *
 * Visibility: the plog's high watermark (what consumers may read, the Kafka HW) is commit + 1
 * less the run of NOOP/CONFIG entries that ends the committed log, if any (it never moves back,
 * and never below the log start). Fetch leaves record-less batches out, so a consumer could never
 * read past such a tail: with the HW before it, a consumer there is at the end (lag 0), and once
 * data follows, a fetch from the HW returns the Raft entries together with that data. A group
 * whose only voter is this node writes no NOOP at all (raft.h), so a single node's partitions
 * hold data batches only.
 *
 * Durability: a follower, and the leader of several voters, sync every write at once (plog_flush).
 * The leader of a group whose only voter it is commits each proposal as its durability asks
 * (replica_propose's `durable`): one that asks is committed once synced (synced at once); one
 * that does not is committed as soon as it is written (raft_relaxed) and synced by the owner's
 * flush policy, unless a later proposal asks. Commit order is log order, so a proposal that does
 * not ask still waits for an earlier one that does. This is the single-node broker's contract:
 * acks=1 visible at once, acks=all visible and answered once durable.
 *
 * Driving: the owner feeds inputs (replica_tick, replica_step, replica_propose,
 * replica_propose_conf) and runs the plog's flusher (flusher_poll delivers its completions to
 * the replica through the plog's flush callback, which the replica owns while open). Each input
 * processes every resulting ready before it returns: log writes, hard state, messages (through
 * opt.send), the high watermark (HW = commit + 1) and opt.on_commit.
 *
 * Log start: only the replica moves it (replica_compact, and installs sent by a leader whose log
 * no longer holds what this follower needs: the plog restarts empty after the leader's point);
 * the term of the entry before it is kept in `raft-log-start` (replication/logstart.h).
 *
 * Failure: any storage error (a failed append, truncation, fsync, hard-state or side-file
 * write) fails the replica for good (replica_failed() != 0, event=replica_failed logged): it
 * stops feeding the core and sends nothing more, so it never acknowledges an entry or a vote
 * it does not have durably. The owner closes and, once the disk is healthy, reopens it.
 *
 * Threading: the reactor thread (the plog's); one replica per partition. */
#ifndef SP_RAFT_REPLICA_H
#define SP_RAFT_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raft/raft.h"

struct plog;
struct replica;

/* Outgoing message: m and every entry payload it points to are valid during the call only
 * (the transport encodes or copies them). APPEND entries are whole stored entries with the
 * payloads the core defines: DATA = the batch bytes as stored, NOOP = none, CONFIG = the
 * raft_conf encoding; m->last may have been lowered to bound the bytes. Must not call back
 * into the replica. */
typedef void (*replica_send_fn)(struct replica *rp, const struct raft_msg *m, void *data);
/* The commit index advanced to commit (HW = commit + 1): settle proposals with
 * replica_proposal_state. Called after the ready that moved it; may propose. */
typedef void (*replica_commit_fn)(struct replica *rp, int64_t commit, void *data);
/* A hard-state sync returned (from flusher_poll, not from an input of the owner's) and what it
 * allowed was processed: the core may have become leader, or have new deadlines, with no input
 * of the owner's to notice. Called after the ready loop; may feed inputs. */
typedef void (*replica_synced_fn)(struct replica *rp, void *data);

struct replica_options {
    struct raft_options raft;      /* id, timeouts, PreVote, CheckQuorum, seed */
    struct raft_conf bootstrap;    /* configuration at index -1 (empty: learn it from the log) */
    size_t msg_bytes_max;          /* entry bytes per APPEND (the first batch always goes) */
    replica_send_fn send;          /* required */
    replica_commit_fn on_commit;   /* may be NULL */
    replica_synced_fn on_synced;   /* may be NULL */
    void *data;                    /* passed to the callbacks */
};

/* Defaults: raft_options_default(id, seed), msg_bytes_max 1 MiB; bootstrap and callbacks
 * are the caller's to fill. */
void replica_options_default(struct replica_options *o, int32_t id, uint64_t seed);

/* Binds a replica to log (opened by the caller, who keeps ownership and closes it after
 * replica_close) and restores it: hard state from `raft-hard-state`, the log's range and term
 * ranges from the plog, configurations from the bootstrap and `raft-conf-log` (records above
 * the log end or whose term differs from the log's are dropped and the file rewritten), the
 * commit index from the commit hint (HW is reset to it: plog_restore_high_watermark).
 * Returns 0 and *out, -ERR_CORRUPT (a damaged hard-state file, or an inconsistent log),
 * -ERR_FENCED (the log is fenced), -ERR_INVALID (options) or -errno. */
int replica_open(struct plog *log, const struct replica_options *opt, int64_t now_ms,
                 struct replica **out);
/* Writes the latest commit hint (unless failed), unbinds from the log (its flush callback is
 * removed) and frees. The log stays open. */
void replica_close(struct replica *rp);
/* A replica that left its group for good (its broker is no longer one of the partition's
 * replicas): removes the Raft state in dir (hard state, configurations, log start), then empties
 * the log (plog_reset to 0), so that a replica opened there later starts as a new member that
 * learns everything from its leader. Call with no replica bound to the log. Returns 0 or the
 * first error (-errno, or plog_reset's); what was removed stays removed. */
int replica_discard(struct plog *log);

/* Time (monotonic ms). */
void replica_tick(struct replica *rp, int64_t now_ms);
/* A message from the network for this replica. APPEND entries are checked first (a DATA
 * payload must be one valid batch covering exactly [first, last], not a control batch; NOOP
 * carries nothing; CONFIG exactly one index) since they go to the log as they are.
 * Returns 0, -ERR_INVALID (ignored) or -ERR_FENCED (the replica failed). */
int replica_step(struct replica *rp, const struct raft_msg *m);

/* Leader: appends a client batch (len bytes, already validated by the produce path; not a
 * control batch) covering record_count offsets (== its lastOffsetDelta + 1). durable: the
 * proposer waits for it to be durable (acks=all; see "Durability" above). Called outside the
 * replica's own callbacks, the batch is written to the log in place before this returns (its
 * base offset and leader epoch rewritten in the caller's buffer, as plog_append does); from
 * inside one (on_commit) it is copied. Either way the caller's buffer is free on return. On
 * success *first, *last and *term (may be NULL) name the entry; its fate is then given by
 * replica_proposal_state. Returns 0, -ERR_NOT_LEADER (retriable, at the leader),
 * -ERR_INVALID, -ERR_FENCED. */
int replica_propose(struct replica *rp, uint8_t *batch, size_t len, int32_t record_count,
                    bool durable, int64_t *first, int64_t *last, int64_t *term);

enum replica_proposal {
    REPLICA_PENDING = 0, /* not decided yet (losing leadership decides nothing) */
    REPLICA_COMMITTED,   /* committed: acknowledge */
    REPLICA_LOST,        /* another entry committed in its place: retriable error */
};
/* The fate of the entry proposed as (last, term). Decided only once commit >= last: then the
 * entry is committed iff the log's term at last is still term. (Before that, even an entry
 * truncated here may come back from a later leader that holds it.) An index below the log
 * start counts as lost: its fate can no longer be read. */
enum replica_proposal replica_proposal_state(const struct replica *rp, int64_t last, int64_t term);

/* Leader: voter change (raft_propose_conf). Returns its codes, or -ERR_FENCED. */
int replica_propose_conf(struct replica *rp, const int32_t *voters, size_t n);
/* Leader: voters and learners (raft_propose_members). Returns its codes, or -ERR_FENCED. */
int replica_propose_members(struct replica *rp, const int32_t *voters, size_t n,
                            const int32_t *learners, size_t n_learners);
/* raft_campaign / raft_transfer_leader, with their codes (or -ERR_FENCED). */
int replica_campaign(struct replica *rp);
int replica_transfer_leader(struct replica *rp, int32_t to);

/* Moves the log start up to new_start (retention, DeleteRecords): clamped to what the core
 * allows (<= commit + 1, <= durable + 1) and rounded down to the start of an entry; nothing
 * happens when that is not above the current log start. Records the term of the entry before the
 * new start (`raft-log-start`), truncates the plog's prefix (plog_truncate_prefix: whole
 * segments below are deleted) and tells the core (raft_compact); a follower that later needs
 * entries below it is sent an install by the leader. Returns 0 (read plog_start_offset for the
 * result), -ERR_FENCED (failed replica) or -errno from the storage (the log start did not move;
 * the replica does not fail). */
int replica_compact(struct replica *rp, int64_t new_start);

/* 0, or the error that failed the replica (see above). */
int replica_failed(const struct replica *rp);
/* A hard-state write of this replica waits for its fdatasync (the flusher's) or for a slot: the
 * core holds its replies until it is durable. */
bool replica_hard_state_syncing(const struct replica *rp);
/* Hard-state syncs of this thread's replicas in flight now (at most 256, each holding a
 * descriptor; later writes wait for a slot). */
int replica_hard_state_syncs_in_flight(void);

/* Status for metrics and the admin API. */
struct replica_status {
    enum raft_role role;
    int32_t leader; /* RAFT_NONE if unknown */
    int64_t term;
    int32_t vote;
    int64_t commit;        /* HW - 1 */
    int64_t last;          /* LEO - 1 */
    int64_t durable;       /* last index reported durable to the core */
    struct raft_conf conf; /* in force */
    int32_t peers[2 * RAFT_VOTERS_MAX + RAFT_LEARNERS_MAX]; /* leader: the other members... */
    int64_t match[2 * RAFT_VOTERS_MAX + RAFT_LEARNERS_MAX]; /* ...and their durable match index */
    size_t n_peers;
    int failed; /* replica_failed() */
};
void replica_status(const struct replica *rp, struct replica_status *st);

/* The core (read-only accessors only) and the log, for tests and status. */
const struct raft *replica_raft(const struct replica *rp);
struct plog *replica_log(const struct replica *rp);

#endif
