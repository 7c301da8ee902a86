/* The Raft consensus core: a pure state machine, in the shape of etcd-raft (DESIGN.md §6).
 *
 * It does no I/O, reads no clock and draws no randomness of its own. Inputs: raft_tick (the
 * time), raft_step (a received message), raft_propose* (client writes), raft_persisted (the
 * storage adapter's durability notices), raft_transfer_leader, raft_compact. Output: a ready
 * (struct raft_ready) collected with raft_ready() and acknowledged with raft_advance().
 * The same core runs every partition, the controller, and the deterministic simulator
 * (tests/sim). One core = one group member; single-threaded (the reactor that owns it).
 *
 * ## The log model
 * A partition's Raft log IS its Kafka log: Raft index = Kafka offset (so the first index is 0,
 * and index -1 with term 0 stands for the empty prefix), an entry is a record batch covering the
 * offsets [first, last], and its term is the batch's partitionLeaderEpoch. The core holds no
 * entries: it keeps term ranges (the leader-epoch cache, see raft/termlog.h), where the log
 * starts and ends, the durable end, the commit index and the configurations found in the log.
 * Payload bytes are opaque to the core and owned by the adapter: they travel through the core
 * by reference (struct raft_entry.payload) but are never copied or kept by it. The one
 * exception: the core decodes config-change entries itself (raft/conf.h encoding).
 * Entry kinds: DATA (client batches), NOOP (a new leader's first entry: an empty control batch
 * that clients skip) and CONFIG (a voter change; the adapter keeps its payload in a side file
 * keyed by index, since the Kafka batch carries no records).
 *
 * ## A group of one voter
 * A node that is its group's only voter (a simple configuration {self}) is its own majority,
 * and no other log can hold entries that conflict with its own. The core uses that, so a
 * single-node broker runs the same code as a cluster without paying for it:
 *   - as a follower it campaigns at once (no election timeout; PreVote passes at once);
 *   - as a new leader it appends no no-op: every durable entry of its log commits as it stands,
 *     whatever its term (§5.4.2's rule guards against other logs, of which there are none);
 *   - it may commit entries before they are durable, up to what the adapter names with
 *     raft_relaxed (a single node's acks=0/1 writes, visible at once as they are in Kafka);
 *     the commit index it sends to other members (followers of a group that is growing) never
 *     runs ahead of its durable copy, and it changes voters only once its commit is durable.
 * A crash may lose relaxed entries that were committed: that is the promise acks=1 makes.
 *
 * ## The ready / advance contract
 *   1. After any input, if raft_has_ready(), call raft_ready(r, &rd). Until raft_advance(r, &rd)
 *      no other raft_* call but the read-only accessors is allowed (CHECK).
 *   2. rd.hard_state (term, vote): if rd.hard_state_changed, make it durable (fsync; the
 *      adapter may batch it with other groups' writes) and then report it with
 *      raft_persisted_hard_state(term, vote). Term and vote are durable before answering:
 *      until that report the core holds back every reply it makes (vote grants, append and
 *      heartbeat answers) and does not count its own vote as a candidate; requests (votes
 *      asked for, appends, heartbeats) leave at once, as in etcd-raft, which keeps the window
 *      in which candidates collide small. A reply in rd.msgs is therefore never premature, and
 *      the adapter needs no ordering of its own between fsyncs and sends.
 *   3. Log writes, applied in order: rd.install (discard the whole log; it now restarts at
 *      rd.install_index + 1, after an entry of term rd.install_term, under rd.install_conf),
 *      then rd.truncate_from (>= 0: discard every entry from that index on; it always starts an
 *      entry), then append rd.entries. The payload pointers of rd.entries point either into a
 *      buffer passed to raft_propose (the caller keeps it alive until raft_advance) or into the
 *      entries of a message passed to raft_step (the caller keeps the message's payloads alive
 *      until raft_advance). The writes need not be durable at raft_advance: durability is
 *      reported later, by raft_persisted(index, term), and the core never assumes an entry is
 *      durable before that notice.
 *   4. rd.msgs: send them, in any order (losing some is fine), after applying the log writes
 *      of 3 to the adapter's log (not necessarily durably). For a
 *      RAFT_MSG_APPEND the core fills prev (index, log_term), commit and the range it wants
 *      sent, [index + 1, last]; the adapter attaches the entries of that range from its log
 *      (whole entries; it may send only a prefix of the range to bound the message size, and
 *      then lowers m->last to match). Heartbeats are ordinary messages (RAFT_MSG_HEARTBEAT):
 *      the transport may coalesce the heartbeats of many groups between two brokers.
 *      Pipelining (etcd-raft's probe/replicate): a leader first probes a follower with one
 *      append at a time; once one is acknowledged it replicates, sending each new range as
 *      soon as it exists, without waiting for answers, up to RAFT_INFLIGHT_MAX appends with
 *      entries in flight (a ready holds at most one of them per follower). It falls back to
 *      probing on a reject. A window without progress for a heartbeat interval is not re-sent
 *      (the follower may just be slow to fsync): each heartbeat then also sends an empty
 *      append at the window's end, which the follower acknowledges once durable or rejects
 *      if something was lost. Its next append continues right after the m->last the adapter
 *      left in the ready's message, which the core reads back in raft_advance.
 *   5. rd.commit: every index <= commit is committed (the Kafka high watermark is commit + 1);
 *      apply up to it. It never decreases while the core lives.
 *   6. raft_advance(r, &rd) releases the ready (its arrays belong to the core). It may leave
 *      a new ready behind (appends of entries proposed meanwhile): check raft_has_ready again.
 *
 * ## Storage contract (the adapter)
 *   - raft_persisted_hard_state(r, term, vote): the hard state of a ready is durable (contract
 *     2). Reports of an older term/vote are ignored.
 *   - raft_persisted(r, index, term): every write handed out so far up to and including the one
 *     that wrote `index` is durable, and the entry at `index` has term `term` (index may be
 *     install_index after an install). Stale notices (the index was truncated meanwhile) are
 *     recognised by the term and ignored. A follower acknowledges entries to the leader only
 *     once they are durable; a leader counts its own copy towards a commit only once durable.
 *   - A restarted node is rebuilt with raft_new() from struct raft_restore: hard state, the
 *     log's start/last and term ranges (leader-epoch checkpoint), the term of the entry before
 *     the log start, and the configurations: the one in force just before the log start
 *     (e.g. the bootstrap configuration at index -1) followed by every config entry in the log.
 *     Everything given there is taken as durable.
 *   - raft_compact(r, index): the adapter deleted every entry below index (retention); index <=
 *     commit + 1 and <= durable + 1. A follower that needs entries the leader no longer has gets
 *     RAFT_MSG_INSTALL: it discards its log and restarts it after the leader's point (Kafka: a
 *     replica that fell below the leader's log start truncates fully). State that lives outside
 *     the log (the controller's metadata image) must then be fetched by the adapter.
 *
 * ## Messages
 * Bytes from the network are never trusted: raft_step validates every field against the core's
 * state and returns -ERR_INVALID (ignoring the message) for anything malformed or out of range.
 * Replies that promise durability (append acknowledgements, granted votes) are only produced
 * once what they promise is durable, per the rules above; every reply also waits for the term
 * it carries to be durable.
 */
#ifndef SP_RAFT_RAFT_H
#define SP_RAFT_RAFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raft/conf.h"

#define RAFT_TERM_MAX INT32_MAX        /* terms are Kafka leader epochs */
#define RAFT_MSG_ENTRIES_MAX (1 << 16) /* entries one APPEND may carry */
/* Appends carrying entries a leader keeps in flight to one follower once it replicates to it
 * (see contract 4): with the adapter's bound on one append's size, this bounds the bytes
 * in flight per follower. */
#define RAFT_INFLIGHT_MAX 8

struct raft;

enum raft_role {
    RAFT_FOLLOWER = 0,
    RAFT_PRECANDIDATE,
    RAFT_CANDIDATE,
    RAFT_LEADER,
};

enum raft_entry_kind {
    RAFT_ENTRY_DATA = 1,   /* a client batch */
    RAFT_ENTRY_NOOP = 2,   /* a new leader's first entry (empty control batch) */
    RAFT_ENTRY_CONFIG = 3, /* a voter change: payload is a raft_conf encoding; first == last */
};

struct raft_entry {
    int64_t first;          /* first index (Kafka base offset) */
    int64_t last;           /* last index (base offset + last offset delta) */
    int64_t term;           /* the batch's partitionLeaderEpoch */
    uint8_t kind;           /* enum raft_entry_kind */
    const uint8_t *payload; /* opaque to the core (CONFIG: decoded); not owned */
    size_t len;             /* payload bytes */
};

enum raft_msg_type {
    /* leader -> follower: index/log_term = the entry before the range (prev), commit, entries
     * [index + 1, last] (attached by the adapter). With no entries it still checks matching. */
    RAFT_MSG_APPEND = 1,
    /* follower -> leader. Success: index = last index the follower holds durably and knows to
     * match the leader. Reject: index = the rejected prev index, last/log_term = hint: the
     * follower's last index j <= prev whose term (log_term) is <= the prev term. */
    RAFT_MSG_APPEND_RESP,
    RAFT_MSG_HEARTBEAT,      /* leader -> follower: commit (min(follower's match, commit)) */
    RAFT_MSG_HEARTBEAT_RESP, /* follower -> leader */
    /* candidate -> voter: term = the term asked for, index/log_term = candidate's last entry;
     * transfer: campaign for a leadership transfer (voters then ignore their leader lease). */
    RAFT_MSG_PREVOTE,
    RAFT_MSG_PREVOTE_RESP, /* reject; term = request's term if granted, else the voter's */
    RAFT_MSG_VOTE,
    RAFT_MSG_VOTE_RESP,
    RAFT_MSG_TIMEOUT_NOW, /* leader -> transferee: campaign now */
    /* leader -> follower whose next entry the leader no longer has: discard your log, it
     * restarts after index (term log_term) under conf. Answered with APPEND_RESP. */
    RAFT_MSG_INSTALL,
    RAFT_MSG_TYPE_END_,
};

struct raft_msg {
    uint8_t type;               /* enum raft_msg_type */
    bool reject;                /* *_RESP: refused */
    bool transfer;              /* PREVOTE/VOTE: leadership transfer campaign */
    int32_t from;               /* sender id */
    int32_t to;                 /* receiver id */
    int64_t term;               /* sender's term (see the types above for the vote replies) */
    int64_t index;              /* see the types above */
    int64_t log_term;           /* see the types above */
    int64_t commit;             /* APPEND, HEARTBEAT: leader's commit index */
    int64_t last;               /* APPEND: range end; APPEND_RESP reject: hint index */
    struct raft_entry *entries; /* APPEND: [index + 1, last], contiguous (see contract 4) */
    size_t n_entries;           /* <= RAFT_MSG_ENTRIES_MAX */
    struct raft_conf conf;      /* INSTALL: configuration in force at index */
};

struct raft_options {
    int32_t id;                  /* this node (>= 0) */
    int64_t election_timeout_ms; /* base; each timeout is drawn from [base, 2 * base): 150 */
    int64_t heartbeat_ms;        /* leader heartbeat interval: 50 */
    bool pre_vote;               /* PreVote phase before real elections */
    bool check_quorum;           /* leaders step down without a recent quorum; leases */
    uint64_t seed;               /* PRNG seed for election timeouts (deterministic runs) */
};

/* Sets the defaults above for node id. */
void raft_options_default(struct raft_options *o, int32_t id, uint64_t seed);

/* A configuration found at an index (index -1: bootstrap, before any entry). */
struct raft_conf_at {
    int64_t index;
    struct raft_conf conf;
};

/* A term range of the log: every index from first up to the next range's first has term. */
struct raft_term_start {
    int64_t term;
    int64_t first;
};

/* What a node restarts from (all of it durable). */
struct raft_restore {
    int64_t term;                        /* hard state */
    int32_t vote;                        /* hard state; RAFT_NONE */
    int64_t log_start;                   /* first index held */
    int64_t log_last;                    /* last index held (log_start - 1: empty) */
    int64_t prev_term;                   /* term of log_start - 1 (0 if log_start == 0) */
    const struct raft_term_start *terms; /* ascending; terms[0].first == log_start if any */
    size_t n_terms;
    const struct raft_conf_at *confs; /* ascending; confs[0].index < log_start; rest in log */
    size_t n_confs;                   /* >= 1 */
    int64_t commit;                   /* a known committed index (e.g. HW - 1), or -1 */
};

/* Creates a core from restored state at time now_ms. Returns 0 and *out (release with
 * raft_free), or -ERR_CORRUPT when st is inconsistent (it comes from disk), -ERR_INVALID for
 * bad options. A term below the last log term is raised to it (hard state not yet durable
 * when the entries were). Starts as a follower with no leader. */
int raft_new(const struct raft_options *opt, const struct raft_restore *st, int64_t now_ms,
             struct raft **out);
void raft_free(struct raft *r);

/* Advances the clock (ms, monotonic; earlier values are ignored): election timeouts,
 * heartbeats, CheckQuorum, leadership-transfer timeout, append re-sends. */
void raft_tick(struct raft *r, int64_t now_ms);
/* The earliest time at which raft_tick has work to do, INT64_MAX if none (a leader that is the
 * only member of its group: no heartbeats, no quorum to check). Any input may move it, so read
 * it again after each; ticking earlier or more often is harmless. Lets an adapter running thousands
 * of groups keep them in a timer wheel instead of ticking each one. But the core's clock moves only
 * with raft_tick, and every timeout restarts from it: a driver that ticks only at deadlines must
 * tick a group to the current time before feeding it any other input (a heartbeat would otherwise
 * restart the election timer from a stale clock, and followers would campaign under a live leader).
 * replication/host.c does this. */
int64_t raft_next_deadline(const struct raft *r);

/* Feeds a received message. Returns 0, or -ERR_INVALID if it was malformed, not for this node
 * or otherwise unusable (then it had no effect). The message's entry payloads must stay valid
 * until the next raft_advance. */
int raft_step(struct raft *r, const struct raft_msg *m);

/* Leader: appends a data entry covering n_indexes offsets (the batch's record count, >= 1)
 * with payload (kept alive by the caller until raft_advance). On success *first, *last get its
 * index range and *term its term (each may be NULL). Returns 0, -ERR_NOT_LEADER (not leader,
 * or a leadership transfer or removal is under way: retry at the leader), -ERR_INVALID.
 * The proposal's fate is decided once commit >= last: committed iff raft_term_at(last) ==
 * term then, lost otherwise (or when last fell below the log start). Nothing decides it
 * earlier: neither losing leadership nor a local truncation of the entry (a later leader that
 * holds it may still commit it), so a client must get a retriable error
 * (NOT_LEADER_OR_FOLLOWER), never a definite failure, until then. */
int raft_propose(struct raft *r, int64_t n_indexes, const uint8_t *payload, size_t len,
                 int64_t *first, int64_t *last, int64_t *term);

/* Leader: starts changing the voters to voters[0..n) by joint consensus: appends C_old,new;
 * once that commits the core appends C_new by itself; a leader not in C_new steps down once
 * C_new commits (handing leadership to an up-to-date voter of C_new). Returns 0,
 * -ERR_NOT_LEADER, -ERR_BUSY (a change is still in progress, this leader has not yet committed
 * an entry of its term, or, as a sole voter, its commit is not durable yet), -ERR_INVALID (bad
 * or unchanged voter set). */
int raft_propose_conf(struct raft *r, const int32_t *voters, size_t n);
/* Leader: as raft_propose_conf, and the learners become learners[0..n_learners): members that
 * receive the log but do not vote (raft/conf.h). A change of learners alone is one simple
 * configuration entry (no majority changes); a change of voters goes through C_old,new, which
 * carries the new learners already. Promoting a learner is naming it among the voters (and no
 * longer among the learners); a voter cannot become a learner in one step (-ERR_INVALID).
 * raft_propose_conf keeps the current learners but those it makes voters. Same returns. */
int raft_propose_members(struct raft *r, const int32_t *voters, size_t n,
                         const int32_t *learners, size_t n_learners);

/* Leader: hands leadership to `to` (RAFT_NONE: the most up-to-date other voter) by bringing
 * it up to date and sending it TimeoutNow; proposals are refused meanwhile. Gives up after an
 * election timeout. Returns 0, -ERR_NOT_LEADER, -ERR_INVALID (not a voter, or self). */
int raft_transfer_leader(struct raft *r, int32_t to);

/* Follower/candidate: start an election now (PreVote first when enabled), as if the election
 * timeout had fired. Returns 0 or -ERR_INVALID (leader, or not a voter). */
int raft_campaign(struct raft *r);

/* Storage adapter: see the storage contract above. */
void raft_persisted(struct raft *r, int64_t index, int64_t term);
/* Leader that is its group's sole voter (see "A group of one voter"): entries up to index may
 * commit before they are durable. The adapter names the end of the prefix of its log whose
 * entries do not ask for durability (it stops before the first entry that does and is not yet
 * durable). Ignored unless this node leads a group whose only voter it is; never lowers; reset
 * when leadership ends. */
void raft_relaxed(struct raft *r, int64_t index);
/* Storage adapter: the log writes of the last ready stopped at index `from` (a full disk: the
 * entry there and every later one of that ready are not stored, nothing of them was sent).
 * Call right after that ready's raft_advance. A leader steps down (a sole voter campaigns again
 * at once); the log is cut back to from - 1. Returns 0, or -ERR_INVALID if from is at or below
 * the commit index or outside the log (the write error must then fail the group instead). */
int raft_write_failed(struct raft *r, int64_t from);
void raft_persisted_hard_state(struct raft *r, int64_t term, int32_t vote);

/* Storage adapter: entries below index are gone (see above). Returns 0 or -ERR_INVALID. */
int raft_compact(struct raft *r, int64_t index);

struct raft_ready {
    /* Soft state (always filled). */
    enum raft_role role;
    int32_t leader; /* RAFT_NONE if unknown */
    int64_t term;
    bool soft_state_changed; /* role, leader or term differ from the previous ready */
    /* Hard state: contract 2 (report it with raft_persisted_hard_state once durable). */
    bool hard_state_changed;
    int64_t hs_term;
    int32_t hs_vote;
    /* Log writes, in this order: contract 3. */
    bool install;
    int64_t install_index;
    int64_t install_term;
    struct raft_conf install_conf;
    int64_t truncate_from; /* -1: none */
    const struct raft_entry *entries;
    size_t n_entries;
    /* Messages: contract 4, all sendable now (the adapter fills APPEND entries and may lower
     * m->last). */
    struct raft_msg *msgs;
    size_t n_msgs;
    /* Commit: contract 5. */
    int64_t commit;
    bool commit_changed;
    /* The configuration in force (the latest in the log) changed. */
    bool conf_changed;
};

bool raft_has_ready(const struct raft *r);
void raft_ready(struct raft *r, struct raft_ready *rd);
void raft_advance(struct raft *r, struct raft_ready *rd);

/* Read-only accessors. */
int32_t raft_id(const struct raft *r);
enum raft_role raft_role(const struct raft *r);
const char *raft_role_name(enum raft_role role);
int64_t raft_term(const struct raft *r);
int32_t raft_vote(const struct raft *r);
int32_t raft_leader(const struct raft *r);
int64_t raft_commit(const struct raft *r);
int64_t raft_log_start(const struct raft *r);
int64_t raft_last_index(const struct raft *r);
int64_t raft_durable_index(const struct raft *r);
/* Term of index i, or -1 if unknown (outside [log_start - 1, last]). */
int64_t raft_term_at(const struct raft *r, int64_t i);
/* The configuration in force: the latest one in the log, committed or not. */
const struct raft_conf *raft_conf(const struct raft *r);
/* Index of that configuration's entry (-1 for bootstrap). */
int64_t raft_conf_index(const struct raft *r);
/* Leader: the follower's acknowledged durable match index (-1 if unknown or not a peer). */
int64_t raft_match_index(const struct raft *r, int32_t peer);
/* Leader: a transfer target, or RAFT_NONE. */
int32_t raft_transferee(const struct raft *r);

/* Checks every invariant listed in raft.c (aborts on a violation). Called under DCHECK at
 * the entry and exit of the public functions; the simulator calls it after every event. */
void raft_check(const struct raft *r);

#endif
