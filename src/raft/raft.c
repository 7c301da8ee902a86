/* The Raft core (contract in raft.h).
 *
 * Owns one member's consensus state: term and vote, role, the log's shape (raft/termlog.h: no
 * entries, only where the log starts and ends and the term of each index), the durable end,
 * the commit index, the configurations found in the log, and, while leading or campaigning,
 * one struct peer per voter. Produces messages and log writes into a ready.
 *
 * Roles, and the function performing each transition:
 *   follower     -> precandidate  campaign()          election timeout, PreVote on
 *   follower     -> candidate     become_candidate()  election timeout (PreVote off); TimeoutNow
 *   precandidate -> candidate     become_candidate()  PreVote majority (of each side if joint)
 *   candidate    -> leader        become_leader()     vote majority, own term and vote durable
 *   any          -> follower      become_follower()   higher term; a leader of our term; vote
 *                                                     lost; CheckQuorum failure; removed by C_new
 *   (pre)candidate -> (pre)candidate  campaign()      another election timeout
 *
 * Invariants (raft_check):
 *   1. the termlog invariants hold; stored_last <= last and base_last <= last.
 *   2. start - 1 <= commit <= last; start - 2 <= durable <= last (start - 2: even the log's
 *      starting point is not yet durable, after an install); durable <= stored_last.
 *   3. last_term <= term <= RAFT_TERM_MAX.
 *   4. role == LEADER iff leader == id; a leader's or candidate's vote is its own id.
 *   5. confs: n_confs >= 1, indexes strictly ascending, confs[0].index <= commit, every later
 *      one in (commit, last]; every configuration valid; conf(r) is the last one.
 *   6. peers: exactly the ids of conf(r) (both sides and its learners), each once.
 *   7. leader: for each peer, -1 <= match < next <= last + 1 (match of self unused: a leader's
 *      own durable copy counts through `durable`); a probing peer has no infl; a replicating
 *      one has at most RAFT_INFLIGHT_MAX, ascending in (match, next), and inflight_ms >= 0
 *      iff it has any.
 *   8. follower: matched_hi <= last; ack_wait <= matched_hi.
 *   9. pending writes: wr entries are contiguous from base_last + 1 to last, with terms.
 *  10. a leader's term and vote are durable (hs_durable): a node never leads a term it could
 *      forget in a crash (it would lead it twice, with two logs: see become_leader).
 *  11. replies wait in `held` only while the hard state is not durable.
 *  12. relaxed is -1 unless this node leads; then relaxed <= last.
 *
 * Why indexes named in messages always end entries (so that the adapter's batch-granular log
 * never has to cut a batch): a term's entries are laid out by that term's single leader, whose
 * log only grows while it leads; hence two logs holding index i with the same term hold the
 * same entry around i. Probe points are a leader's last index, an acknowledged match, the end
 * of a term range, or a follower's hint whose term the leader has at that index: all entry ends.
 */
#include "raft/raft.h"

#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "raft/termlog.h"

#define PEERS_MAX (2 * RAFT_VOTERS_MAX + RAFT_LEARNERS_MAX)

/* Leader's replication to one peer, as in etcd-raft: probing (one append in flight, `next`
 * moves only on an answer) until an append is acknowledged, then replicating (`next` moves on
 * when an append leaves; up to RAFT_INFLIGHT_MAX appends carrying entries in flight, each
 * remembered by its last index); back to probing on a reject. A window that makes no
 * progress for a heartbeat interval is checked with an empty append (send_check). */
struct peer {
    int32_t id;
    int64_t match;       /* leader: durable match the peer acknowledged (-1: none yet) */
    int64_t next;        /* leader: first index of the next append to it */
    int64_t inflight_ms; /* leader: probing: when the outstanding append was sent; replicating:
                          * when the window last made progress; -1: nothing in flight */
    bool replicate;      /* leader: replicating (else probing) */
    size_t n_infl;       /* leader, replicating: appends in flight */
    int64_t infl[RAFT_INFLIGHT_MAX]; /* ... their last indexes, ascending */
    size_t ready_slot;   /* replicating: r->msgs slot of this ready's append with entries to
                          * the peer (SIZE_MAX: none); at most one per ready, see raft_advance */
    int64_t commit_sent; /* leader: highest commit index sent in an append */
    bool active;         /* leader: heard from since the last CheckQuorum */
    int8_t vote;         /* candidate: 0 unknown, 1 granted, -1 refused */
};

struct raft {
    struct raft_options opt;
    uint64_t rng;   /* splitmix64 state */
    int64_t now_ms; /* latest raft_tick */

    enum raft_role role;
    int64_t term;
    int32_t vote;
    int32_t leader;

    struct termlog log;
    int64_t stored_last; /* storage's last index once the handed-out writes are applied */
    int64_t base_last;   /* ... once the pending install/truncation is applied too */
    int64_t durable;     /* every index in [start, durable] is durable */
    int64_t relaxed;     /* sole-voter leader: entries up to here may commit before durable
                          * (raft_relaxed); -1 otherwise */
    int64_t commit;

    struct raft_conf_at *confs; /* ascending by index; the last is in force */
    size_t n_confs;
    size_t cap_confs;

    struct peer *peers; /* the members of conf(r) (voters and learners), self included */
    size_t n_peers;
    size_t cap_peers; /* 1 for a group of one, else PEERS_MAX (grown once: a single-replica
                         partition does not carry room for 21 peers) */

    int64_t election_deadline_ms;  /* follower, candidates */
    int64_t heartbeat_deadline_ms; /* leader */
    int64_t quorum_deadline_ms;    /* leader: next CheckQuorum */
    int64_t heard_leader_ms;       /* follower: last message from the current leader */
    int32_t transferee;            /* leader: transfer target, RAFT_NONE */
    int64_t transfer_deadline_ms;

    /* PreVote grants are exclusive for an election timeout (see prevote_locked). */
    int32_t prevote_for;      /* whom we pre-voted for (ourselves while pre-campaigning) */
    int64_t prevote_term;     /* ... for this term */
    int64_t prevote_until_ms; /* ... until then */
    int64_t prevote_log_term; /* ... whose last entry had this term */
    int64_t prevote_log_last; /* ... and this index */

    int64_t matched_hi; /* follower: highest index known to match this term's leader */
    int64_t ack_wait;   /* follower: an acknowledgement is owed once durable >= this; -1 */

    /* The ready being accumulated. */
    struct raft_msg *msgs;
    size_t n_msgs;
    size_t cap_msgs;
    struct raft_entry *wr; /* entries to append, after the install and the truncation */
    size_t n_wr;
    size_t cap_wr;
    int64_t wr_truncate; /* -1: none */
    bool wr_install;
    int64_t install_index;
    int64_t install_term;
    struct raft_conf install_conf;
    uint8_t **bufs; /* payloads of entries the core made (configs), freed at advance */
    size_t n_bufs;
    size_t cap_bufs;
    bool hs_dirty;         /* term/vote changed since the last ready */
    bool hs_durable;       /* the adapter reported the current term/vote durable */
    struct raft_msg *held; /* replies waiting for the hard state to be durable */
    size_t n_held;
    size_t cap_held;
    bool conf_dirty;
    /* What the previous ready reported. */
    enum raft_role rep_role;
    int32_t rep_leader;
    int64_t rep_term;
    int64_t rep_commit;
    bool in_ready;
};

/* ---- small helpers ---------------------------------------------------------------------- */

static uint64_t rand_u64(struct raft *r)
{
    uint64_t z = (r->rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static bool sole_voter(const struct raft *r);

/* A follower that is its group's sole voter campaigns at once: nobody else could lead, so
 * waiting out an election timeout would only delay its first write. */
static void reset_election_deadline(struct raft *r)
{
    int64_t base = r->opt.election_timeout_ms;
    uint64_t jitter = rand_u64(r) % (uint64_t)base;
    if (r->role == RAFT_FOLLOWER && sole_voter(r))
        r->election_deadline_ms = r->now_ms;
    else
        r->election_deadline_ms = r->now_ms + base + (int64_t)jitter;
}

static const struct raft_conf *conf(const struct raft *r)
{
    return &r->confs[r->n_confs - 1].conf;
}

static bool promotable(const struct raft *r)
{
    return raft_conf_has(conf(r), r->opt.id);
}

/* Whether this node may stand for election: it votes in the configuration in force, or in the
 * one before it while that one (the latest in its log) is not committed yet. The second case is
 * a member that already holds a C_new that removes it: when C_old,new had two voters and the
 * leader lost its own copy of C_new in a crash, the remaining candidate (in C_old,new) needs this
 * member's vote and cannot get it, its log being shorter; this member, whose log is the most up
 * to date, must then lead (counting votes in its C_new) until C_new commits, and hand over then,
 * as a leader removed by C_new does (after_commit_leader). */
static bool may_campaign(const struct raft *r)
{
    if (promotable(r))
        return true;
    return r->n_confs >= 2 && r->confs[r->n_confs - 1].index > r->commit &&
           raft_conf_has(&r->confs[r->n_confs - 2].conf, r->opt.id);
}

/* This node is the group's only voter (a simple configuration of one): it is its own majority,
 * so no other log can hold entries that conflict with its own. */
static bool sole_voter(const struct raft *r)
{
    const struct raft_conf *c = conf(r);
    return c->n_old == 0 && c->n_voters == 1 && c->voters[0] == r->opt.id;
}

/* The commit index peers are told: a sole voter's commit may run ahead of its durable copy
 * (raft_relaxed); what it tells others never does, so no peer holds as committed an entry the
 * voter could still lose in a crash. */
static int64_t commit_for_peers(const struct raft *r)
{
    return r->relaxed >= 0 ? MIN(r->commit, MAX(r->durable, r->log.start - 1)) : r->commit;
}

static struct peer *peer_find(struct raft *r, int32_t id)
{
    for (size_t i = 0; i < r->n_peers; i++)
        if (r->peers[i].id == id)
            return &r->peers[i];
    return NULL;
}

static int64_t last_term(const struct raft *r)
{
    return termlog_last_term(&r->log);
}

static bool in_lease(const struct raft *r)
{
    if (!r->opt.check_quorum || r->leader == RAFT_NONE)
        return false;
    return r->role == RAFT_LEADER || r->now_ms - r->heard_leader_ms < r->opt.election_timeout_ms;
}

static bool is_reply(uint8_t type)
{
    return type == RAFT_MSG_APPEND_RESP || type == RAFT_MSG_HEARTBEAT_RESP ||
           type == RAFT_MSG_VOTE_RESP || type == RAFT_MSG_PREVOTE_RESP;
}

/* A new outgoing message. Replies wait (in `held`) until the term and vote they were made
 * under are durable: nothing is answered on the strength of state a crash could undo. */
static struct raft_msg *msg_new(struct raft *r, uint8_t type, int32_t to)
{
    struct raft_msg *m;
    if (is_reply(type) && !r->hs_durable) {
        MEM_GROW(r->held, r->cap_held, r->n_held + 1);
        m = &r->held[r->n_held++];
    } else {
        MEM_GROW(r->msgs, r->cap_msgs, r->n_msgs + 1);
        m = &r->msgs[r->n_msgs++];
    }
    memset(m, 0, sizeof(*m));
    m->type = type;
    m->from = r->opt.id;
    m->to = to;
    m->term = r->term;
    m->index = -1;
    m->commit = -1;
    m->last = -1;
    return m;
}

/* Rebuilds peers for the configuration in force, keeping the progress of those who stay. */
static void hs_changed(struct raft *r)
{
    r->hs_dirty = true;
    r->hs_durable = false;
}

static struct peer peer_new(const struct raft *r, int32_t id)
{
    return (struct peer){.id = id,
                         .match = -1,
                         .next = r->log.last + 1,
                         .inflight_ms = -1,
                         .commit_sent = -1,
                         .ready_slot = SIZE_MAX};
}

/* Back to probing from index next (nothing in flight). */
static void peer_probe(struct peer *p, int64_t next)
{
    p->replicate = false;
    p->n_infl = 0;
    p->ready_slot = SIZE_MAX;
    p->inflight_ms = -1;
    p->next = next;
}

static void rebuild_peers(struct raft *r)
{
    struct peer old[PEERS_MAX];
    size_t n_old = r->n_peers;
    if (n_old > 0)
        memcpy(old, r->peers, n_old * sizeof(*old));
    r->n_peers = 0;
    const struct raft_conf *c = conf(r);
    const int32_t *sides[3] = {c->voters, c->old, c->learners};
    size_t ns[3] = {c->n_voters, c->n_old, c->n_learners};
    size_t want = MAX(ns[0] + ns[1] + ns[2], (size_t)1); /* at least the distinct ids */
    if (want > r->cap_peers) {
        /* the old array's progress is in `old`; callers find peers again after a rebuild */
        mem_free(r->peers);
        r->cap_peers = want == 1 ? 1 : PEERS_MAX;
        r->peers = mem_calloc(r->cap_peers, sizeof(*r->peers));
    }
    for (int s = 0; s < 3; s++) {
        for (size_t i = 0; i < ns[s]; i++) {
            int32_t id = sides[s][i];
            if (peer_find(r, id))
                continue;
            struct peer *p = &r->peers[r->n_peers++];
            *p = peer_new(r, id);
            for (size_t k = 0; k < n_old; k++)
                if (old[k].id == id)
                    *p = old[k];
        }
    }
}

static void conf_push(struct raft *r, int64_t index, const struct raft_conf *c)
{
    MEM_GROW(r->confs, r->cap_confs, r->n_confs + 1);
    r->confs[r->n_confs++] = (struct raft_conf_at){.index = index, .conf = *c};
    r->conf_dirty = true;
    rebuild_peers(r);
}

/* Drops configurations superseded by a committed one (invariant 5). */
static void confs_prune(struct raft *r)
{
    size_t k = 0;
    while (k + 1 < r->n_confs && r->confs[k + 1].index <= r->commit)
        k++;
    if (k == 0)
        return;
    memmove(r->confs, r->confs + k, (r->n_confs - k) * sizeof(*r->confs));
    r->n_confs -= k;
}

/* ---- quorums ----------------------------------------------------------------------------- */

static int64_t peer_match(const struct raft *r, int32_t id)
{
    if (id == r->opt.id)
        return r->relaxed >= 0 && sole_voter(r) ? MAX(r->durable, r->relaxed) : r->durable;
    for (size_t i = 0; i < r->n_peers; i++)
        if (r->peers[i].id == id)
            return r->peers[i].match;
    return -1;
}

/* The highest index durable on a majority of ids (INT64_MAX for an empty side). */
static int64_t side_match(const struct raft *r, const int32_t *ids, size_t n)
{
    if (n == 0)
        return INT64_MAX;
    int64_t m[RAFT_VOTERS_MAX];
    for (size_t i = 0; i < n; i++) {
        int64_t v = peer_match(r, ids[i]);
        size_t j = i;
        for (; j > 0 && m[j - 1] < v; j--) /* insertion sort, descending */
            m[j] = m[j - 1];
        m[j] = v;
    }
    return m[n / 2];
}

static int64_t quorum_match(const struct raft *r)
{
    const struct raft_conf *c = conf(r);
    return MIN(side_match(r, c->voters, c->n_voters), side_match(r, c->old, c->n_old));
}

enum vote_result { VOTE_PENDING, VOTE_WON, VOTE_LOST };

static enum vote_result side_tally(struct raft *r, const int32_t *ids, size_t n)
{
    if (n == 0)
        return VOTE_WON;
    size_t yes = 0, no = 0;
    for (size_t i = 0; i < n; i++) {
        struct peer *p = peer_find(r, ids[i]);
        if (p && p->vote > 0)
            yes++;
        else if (p && p->vote < 0)
            no++;
    }
    size_t q = n / 2 + 1;
    if (yes >= q)
        return VOTE_WON;
    if (no > n - q)
        return VOTE_LOST;
    return VOTE_PENDING;
}

static enum vote_result tally(struct raft *r)
{
    const struct raft_conf *c = conf(r);
    enum vote_result a = side_tally(r, c->voters, c->n_voters);
    enum vote_result b = side_tally(r, c->old, c->n_old);
    if (a == VOTE_LOST || b == VOTE_LOST)
        return VOTE_LOST;
    if (a == VOTE_WON && b == VOTE_WON)
        return VOTE_WON;
    return VOTE_PENDING;
}

static bool side_active(struct raft *r, const int32_t *ids, size_t n)
{
    size_t act = 0;
    for (size_t i = 0; i < n; i++) {
        struct peer *p = peer_find(r, ids[i]);
        if (ids[i] == r->opt.id || (p && p->active))
            act++;
    }
    return n == 0 || act >= n / 2 + 1;
}

static bool quorum_active(struct raft *r)
{
    const struct raft_conf *c = conf(r);
    return side_active(r, c->voters, c->n_voters) && side_active(r, c->old, c->n_old);
}

/* ---- log writes ---------------------------------------------------------------------------- */

/* Appends one entry to the log and to the pending writes (payload not owned). */
static void log_append(struct raft *r, const struct raft_entry *e, const struct raft_conf *c)
{
    termlog_append(&r->log, e->first, e->last, e->term);
    MEM_GROW(r->wr, r->cap_wr, r->n_wr + 1);
    r->wr[r->n_wr++] = *e;
    if (e->kind == RAFT_ENTRY_CONFIG)
        conf_push(r, e->last, c);
}

/* Whether `from` is a point where the storage can cut the log: above commit, within the log,
 * and not inside an entry still pending in this ready. */
static bool truncate_ok(const struct raft *r, int64_t from)
{
    if (from <= r->commit || from > r->log.last)
        return false;
    if (from <= r->base_last + 1)
        return true;
    for (size_t i = 0; i < r->n_wr; i++)
        if (r->wr[i].first == from)
            return true;
    return false;
}

static void log_truncate(struct raft *r, int64_t from)
{
    CHECK(truncate_ok(r, from));
    termlog_truncate(&r->log, from);
    if (from <= r->base_last) {
        r->wr_truncate = r->wr_truncate < 0 ? from : MIN(r->wr_truncate, from);
        r->base_last = from - 1;
        r->n_wr = 0;
    } else {
        while (r->n_wr > 0 && r->wr[r->n_wr - 1].first >= from)
            r->n_wr--;
    }
    r->stored_last = MIN(r->stored_last, from - 1);
    r->durable = MIN(r->durable, from - 1);
    r->matched_hi = MIN(r->matched_hi, from - 1);
    if (r->ack_wait >= from)
        r->ack_wait = -1;
    bool changed = false;
    while (r->n_confs > 1 && r->confs[r->n_confs - 1].index >= from) {
        r->n_confs--;
        changed = true;
    }
    if (changed) {
        r->conf_dirty = true;
        rebuild_peers(r);
    }
}

/* Follower: replace the whole log by an empty one after index (term) under c. */
static void log_install(struct raft *r, int64_t index, int64_t term, const struct raft_conf *c)
{
    termlog_reset(&r->log, index + 1, term);
    r->wr_install = true;
    r->install_index = index;
    r->install_term = term;
    r->install_conf = *c;
    r->wr_truncate = -1;
    r->n_wr = 0;
    r->base_last = index;
    r->stored_last = index;
    r->durable = index - 1;
    r->n_confs = 0;
    conf_push(r, index, c);
    if (index > r->commit)
        r->commit = index;
}

static const uint8_t *buf_keep(struct raft *r, const uint8_t *p, size_t len)
{
    MEM_GROW(r->bufs, r->cap_bufs, r->n_bufs + 1);
    uint8_t *b = mem_dup(p, len ? len : 1);
    r->bufs[r->n_bufs++] = b;
    return b;
}

/* ---- sending ------------------------------------------------------------------------------- */

static void send_install(struct raft *r, struct peer *p)
{
    /* The install point must be committed and its configuration known: confs[0] is in force
     * at every index from its own up to the next configuration's. */
    int64_t at = MAX(r->log.start - 1, r->confs[0].index);
    if (at > r->commit || r->confs[0].index > r->commit)
        return; /* a fresh leader: retried once it has committed (heartbeat responses) */
    struct raft_msg *m = msg_new(r, RAFT_MSG_INSTALL, p->id);
    m->index = at;
    m->log_term = termlog_term_at(&r->log, at);
    m->commit = commit_for_peers(r);
    m->conf = r->confs[0].conf;
    peer_probe(p, at + 1);
    p->inflight_ms = r->now_ms;
}

static void send_append(struct raft *r, struct peer *p)
{
    if (p->next - 1 < r->log.start - 1) {
        send_install(r, p);
        return;
    }
    struct raft_msg *m = msg_new(r, RAFT_MSG_APPEND, p->id);
    m->index = p->next - 1;
    m->log_term = termlog_term_at(&r->log, m->index);
    m->commit = commit_for_peers(r);
    m->last = r->log.last;
    p->commit_sent = MAX(p->commit_sent, m->commit);
    /* Only appends that carry entries occupy an in-flight slot: an empty one (the commit
     * index, or a probe at our last index) must not delay the next batch of entries. */
    if (p->next > r->log.last)
        return;
    if (!p->replicate) {
        p->inflight_ms = r->now_ms;
        return;
    }
    CHECK(p->n_infl < RAFT_INFLIGHT_MAX);
    p->infl[p->n_infl++] = r->log.last;
    if (p->inflight_ms < 0)
        p->inflight_ms = r->now_ms;
    p->next = r->log.last + 1;
    p->ready_slot = (size_t)(m - r->msgs);
}

/* An empty append at a replicating peer's next - 1 (see bcast_heartbeat). */
static void send_check(struct raft *r, struct peer *p)
{
    if (p->next - 1 < r->log.start - 1) {
        peer_probe(p, p->match + 1); /* compacted meanwhile: an install */
        return;
    }
    struct raft_msg *m = msg_new(r, RAFT_MSG_APPEND, p->id);
    m->index = p->next - 1;
    m->log_term = termlog_term_at(&r->log, m->index);
    m->commit = commit_for_peers(r);
    m->last = m->index;
    p->commit_sent = MAX(p->commit_sent, m->commit);
}

/* Sends to p if it has something to learn and room: probing, nothing in flight; replicating,
 * a free slot in the window and no append with entries to it in this ready yet. */
static void maybe_send_append(struct raft *r, struct peer *p)
{
    if (p->id == r->opt.id)
        return;
    if (p->replicate ? p->n_infl >= RAFT_INFLIGHT_MAX || p->ready_slot != SIZE_MAX
                     : p->inflight_ms >= 0)
        return;
    if (p->next <= r->log.last || p->commit_sent < commit_for_peers(r))
        send_append(r, p);
}

static void bcast_append(struct raft *r)
{
    for (size_t i = 0; i < r->n_peers; i++)
        maybe_send_append(r, &r->peers[i]);
}

static void bcast_heartbeat(struct raft *r)
{
    for (size_t i = 0; i < r->n_peers; i++) {
        struct peer *p = &r->peers[i];
        if (p->id == r->opt.id)
            continue;
        struct raft_msg *m = msg_new(r, RAFT_MSG_HEARTBEAT, p->id);
        m->commit = MIN(p->match, commit_for_peers(r));
        /* Probing, an append that got no answer for a heartbeat interval is presumed lost. */
        if (!p->replicate && p->inflight_ms >= 0 &&
            r->now_ms - p->inflight_ms >= r->opt.heartbeat_ms)
            p->inflight_ms = -1;
        /* Replicating, a window that made no progress for a heartbeat interval may only wait
         * for the follower's fsync (often slower than that): re-sending its entries would
         * just load the follower. An empty append at the window's end tells: it is
         * acknowledged once durable if every append arrived, rejected (back to probing from
         * the hint) if one was lost. */
        if (p->replicate && p->inflight_ms >= 0 &&
            r->now_ms - p->inflight_ms >= r->opt.heartbeat_ms)
            send_check(r, p);
        maybe_send_append(r, p);
    }
}

static void send_timeout_now(struct raft *r, int32_t to)
{
    msg_new(r, RAFT_MSG_TIMEOUT_NOW, to);
}

/* The voter of conf(r).voters (not self) with the highest match; RAFT_NONE if none. */
static int32_t best_voter(struct raft *r)
{
    const struct raft_conf *c = conf(r);
    int32_t best = RAFT_NONE;
    int64_t best_match = -2;
    for (size_t i = 0; i < c->n_voters; i++) {
        int32_t id = c->voters[i];
        if (id == r->opt.id)
            continue;
        struct peer *p = peer_find(r, id);
        if (p && p->match > best_match) {
            best = id;
            best_match = p->match;
        }
    }
    return best;
}

/* ---- role transitions ---------------------------------------------------------------------- */

static void become_follower(struct raft *r, int64_t term, int32_t leader)
{
    if (term > r->term) {
        r->term = term;
        r->vote = RAFT_NONE;
        hs_changed(r);
        r->matched_hi = -1;
        r->ack_wait = -1;
    }
    if (r->role != RAFT_FOLLOWER) {
        r->matched_hi = -1;
        r->ack_wait = -1;
    }
    r->role = RAFT_FOLLOWER;
    r->leader = leader;
    r->transferee = RAFT_NONE;
    r->relaxed = -1;
    if (leader != RAFT_NONE)
        r->heard_leader_ms = r->now_ms;
    reset_election_deadline(r);
}

static void become_leader(struct raft *r);
static void maybe_commit(struct raft *r);

static void request_votes(struct raft *r, uint8_t type, int64_t term, bool transfer)
{
    /* Our own vote counts once durable (a PreVote changes nothing, so it counts at once). */
    bool self = type == RAFT_MSG_PREVOTE || r->hs_durable;
    for (size_t i = 0; i < r->n_peers; i++) {
        struct peer *p = &r->peers[i];
        p->vote = p->id == r->opt.id && self ? 1 : 0;
    }
    for (size_t i = 0; i < r->n_peers; i++) {
        if (r->peers[i].id == r->opt.id)
            continue;
        struct raft_msg *m = msg_new(r, type, r->peers[i].id);
        m->term = term;
        m->index = r->log.last;
        m->log_term = last_term(r);
        m->transfer = transfer;
    }
}

static void become_candidate(struct raft *r, bool transfer)
{
    CHECK(r->role != RAFT_LEADER);
    if (r->term >= RAFT_TERM_MAX)
        return;
    r->term++;
    r->vote = r->opt.id;
    hs_changed(r);
    r->role = RAFT_CANDIDATE;
    r->leader = RAFT_NONE;
    r->matched_hi = -1;
    r->ack_wait = -1;
    reset_election_deadline(r);
    request_votes(r, RAFT_MSG_VOTE, r->term, transfer);
    /* Won already only as a single voter, whose own vote waits for durability anyway. */
}

/* Whether a PreVote for `term` was promised, a short while ago, to someone other than `id`
 * whose log is at least as up to date as id's (log_term, last). Pre-votes are not part of
 * Raft's safety argument, so this only shapes timing: two equally good candidates whose timers
 * fire close together cannot both pass PreVote (each voter promises one), so they no longer go
 * on to split the real vote; a better log always overrides a promise, so promises converge on
 * a candidate that can win. A promise lasts a third of the base election timeout: long enough
 * for its holder's PreVote round and vote requests, short enough not to hold up the next
 * candidate when the holder failed or died. */
static bool prevote_locked(const struct raft *r, int64_t term, int32_t id, int64_t log_term,
                           int64_t last)
{
    if (r->prevote_for == RAFT_NONE || r->prevote_for == id || r->prevote_term != term ||
        r->now_ms >= r->prevote_until_ms)
        return false;
    bool better = log_term > r->prevote_log_term ||
                  (log_term == r->prevote_log_term && last > r->prevote_log_last);
    return !better;
}

static void prevote_promise(struct raft *r, int64_t term, int32_t id, int64_t log_term,
                            int64_t last)
{
    r->prevote_for = id;
    r->prevote_term = term;
    r->prevote_until_ms = r->now_ms + r->opt.election_timeout_ms / 3;
    r->prevote_log_term = log_term;
    r->prevote_log_last = last;
}

static void campaign(struct raft *r, bool transfer)
{
    if (!r->opt.pre_vote || transfer) {
        become_candidate(r, transfer);
        return;
    }
    if (r->term >= RAFT_TERM_MAX)
        return;
    if (prevote_locked(r, r->term + 1, r->opt.id, last_term(r), r->log.last)) {
        /* We promised someone as good as us: give them until the promise runs out. */
        uint64_t jitter = rand_u64(r) % (uint64_t)(r->opt.election_timeout_ms / 4 + 1);
        r->election_deadline_ms = r->prevote_until_ms + (int64_t)jitter;
        return;
    }
    prevote_promise(r, r->term + 1, r->opt.id, last_term(r), r->log.last);
    r->role = RAFT_PRECANDIDATE;
    r->leader = RAFT_NONE;
    r->matched_hi = -1;
    r->ack_wait = -1;
    reset_election_deadline(r);
    request_votes(r, RAFT_MSG_PREVOTE, r->term + 1, false);
    if (tally(r) == VOTE_WON)
        become_candidate(r, false);
}

/* A node leads term T only once T and its own vote are durable: otherwise a crash could bring
 * it back below T, campaigning for T again; voters that granted it T grant a repeat request, so
 * it would lead T twice, with two different logs under one term. */
static void become_leader(struct raft *r)
{
    CHECK(r->role == RAFT_CANDIDATE && r->hs_durable);
    r->role = RAFT_LEADER;
    r->leader = r->opt.id;
    r->transferee = RAFT_NONE;
    for (size_t i = 0; i < r->n_peers; i++) {
        struct peer *p = &r->peers[i];
        *p = peer_new(r, p->id);
    }
    r->heartbeat_deadline_ms = r->now_ms + r->opt.heartbeat_ms;
    r->quorum_deadline_ms = r->now_ms + r->opt.election_timeout_ms;
    r->relaxed = -1;
    if (sole_voter(r)) {
        /* Its own majority: every durable entry of its log is committed as it stands (no other
         * log can hold a conflicting one), so no no-op is needed to commit earlier terms, and
         * a single node's partitions never carry one. */
        maybe_commit(r);
        return;
    }
    /* The no-op: entries of earlier terms commit only under an entry of ours (§5.4.2). */
    struct raft_entry e = {.first = r->log.last + 1,
                           .last = r->log.last + 1,
                           .term = r->term,
                           .kind = RAFT_ENTRY_NOOP};
    log_append(r, &e, NULL);
    bcast_append(r);
}

/* ---- commit -------------------------------------------------------------------------------- */

/* Leader: appends a configuration entry for c and sends it. */
static void append_conf(struct raft *r, const struct raft_conf *c)
{
    uint8_t enc[RAFT_CONF_ENCODED_MAX];
    size_t len = raft_conf_encode(c, enc);
    struct raft_entry e = {.first = r->log.last + 1,
                           .last = r->log.last + 1,
                           .term = r->term,
                           .kind = RAFT_ENTRY_CONFIG,
                           .payload = buf_keep(r, enc, len),
                           .len = len};
    log_append(r, &e, c);
    bcast_append(r);
}

static void after_commit_leader(struct raft *r)
{
    const struct raft_conf *c = conf(r);
    if (r->confs[r->n_confs - 1].index > r->commit)
        return;
    if (raft_conf_is_joint(c)) {
        /* C_old,new committed: move on to C_new (its learners stay learners). */
        struct raft_conf next = {.n_voters = c->n_voters, .n_learners = c->n_learners};
        memcpy(next.voters, c->voters, sizeof(next.voters));
        memcpy(next.learners, c->learners, sizeof(next.learners));
        append_conf(r, &next);
    } else if (!raft_conf_has(c, r->opt.id)) {
        /* Removed by a committed C_new: hand over to the most up-to-date voter and leave. */
        int32_t to = best_voter(r);
        struct peer *p = to == RAFT_NONE ? NULL : peer_find(r, to);
        if (p && p->match == r->log.last)
            send_timeout_now(r, to);
        become_follower(r, r->term, RAFT_NONE);
    }
}

static void set_commit(struct raft *r, int64_t c)
{
    CHECK(c <= r->log.last);
    if (c <= r->commit)
        return;
    r->commit = c;
    confs_prune(r);
}

/* A leader commits what a majority holds durably, and (§5.4.2) only by counting entries of its
 * own term; a sole voter commits any entry it holds (see become_leader). */
static void maybe_commit(struct raft *r)
{
    int64_t q = quorum_match(r);
    if (q == INT64_MAX || q <= r->commit)
        return;
    q = MIN(q, r->log.last);
    if (q <= r->commit || (!sole_voter(r) && termlog_term_at(&r->log, q) != r->term))
        return;
    set_commit(r, q);
    after_commit_leader(r);
    if (r->role == RAFT_LEADER)
        bcast_append(r);
}

/* ---- message validation -------------------------------------------------------------------- */

static bool index_ok(int64_t i)
{
    return i >= -1 && i <= TERMLOG_INDEX_MAX;
}

static bool term_ok(int64_t t)
{
    return t >= 0 && t <= RAFT_TERM_MAX;
}

static bool entries_ok(const struct raft_msg *m)
{
    if (m->n_entries > RAFT_MSG_ENTRIES_MAX || (m->n_entries > 0 && !m->entries))
        return false;
    int64_t next = m->index + 1, term = m->log_term;
    for (size_t k = 0; k < m->n_entries; k++) {
        const struct raft_entry *e = &m->entries[k];
        if (e->first != next || e->last < e->first || e->last > TERMLOG_INDEX_MAX)
            return false;
        if (e->term < 1 || e->term < term || e->term > m->term)
            return false;
        if (e->len > 0 && !e->payload)
            return false;
        if (e->kind == RAFT_ENTRY_CONFIG) {
            struct raft_conf c;
            if (e->first != e->last || raft_conf_decode(&c, e->payload, e->len) != 0)
                return false;
        } else if (e->kind != RAFT_ENTRY_DATA && e->kind != RAFT_ENTRY_NOOP) {
            return false;
        }
        next = e->last + 1;
        term = e->term;
    }
    return true;
}

static bool msg_ok(const struct raft *r, const struct raft_msg *m)
{
    if (m->type < RAFT_MSG_APPEND || m->type >= RAFT_MSG_TYPE_END_)
        return false;
    if (m->to != r->opt.id || m->from < 0 || m->from == r->opt.id || !term_ok(m->term))
        return false;
    switch (m->type) {
    case RAFT_MSG_APPEND:
        return index_ok(m->index) && term_ok(m->log_term) && m->log_term <= m->term &&
               index_ok(m->commit) && entries_ok(m);
    case RAFT_MSG_APPEND_RESP:
        if (!index_ok(m->index))
            return false;
        return !m->reject || (index_ok(m->last) && m->last <= m->index && term_ok(m->log_term));
    case RAFT_MSG_HEARTBEAT:
        return index_ok(m->commit);
    case RAFT_MSG_PREVOTE:
    case RAFT_MSG_VOTE:
        return m->term >= 1 && index_ok(m->index) && term_ok(m->log_term) && m->log_term <= m->term;
    case RAFT_MSG_INSTALL:
        return index_ok(m->index) && term_ok(m->log_term) && m->log_term <= m->term &&
               (m->index == -1) == (m->log_term == 0) && raft_conf_valid(&m->conf);
    default:
        return true;
    }
}

/* ---- follower handlers --------------------------------------------------------------------- */

/* Acknowledges what is durable and matches the leader. A leader pipelining appends keeps the
 * follower's owed point (ack_wait) moving ahead of each fsync, so every durability step is
 * acknowledged at once, not only the one that reaches ack_wait. */
static void send_ack(struct raft *r)
{
    struct raft_msg *m = msg_new(r, RAFT_MSG_APPEND_RESP, r->leader);
    m->index = MIN(r->durable, r->matched_hi);
    if (r->durable >= r->ack_wait)
        r->ack_wait = -1;
}

/* Owe the leader an acknowledgement up to `upto`: now if durable already, else once it is.
 * Committed entries match every leader's log, so the acknowledgement may reach commit. */
static void ack_when_durable(struct raft *r, int64_t upto)
{
    r->matched_hi = MAX(r->matched_hi, MAX(upto, r->commit));
    if (r->durable >= upto)
        send_ack(r);
    else
        r->ack_wait = MAX(r->ack_wait, upto);
}

static void reject_append(struct raft *r, const struct raft_msg *m)
{
    int64_t i = MIN(m->index, r->log.last);
    int64_t j = termlog_find_le(&r->log, i, m->log_term);
    struct raft_msg *out = msg_new(r, RAFT_MSG_APPEND_RESP, m->from);
    out->reject = true;
    out->index = m->index;
    out->last = j;
    out->log_term = termlog_term_at(&r->log, j);
}

static int handle_append(struct raft *r, const struct raft_msg *m)
{
    int64_t prev = m->index;
    bool matched =
        prev <= r->commit || (prev <= r->log.last && termlog_term_at(&r->log, prev) == m->log_term);
    if (!matched) {
        reject_append(r, m);
        return 0;
    }
    /* Plan the writes without changing anything, so a bad message has no effect. */
    size_t k = 0;
    int64_t trunc = -1;
    for (; k < m->n_entries; k++) {
        const struct raft_entry *e = &m->entries[k];
        if (e->last <= r->commit)
            continue; /* committed here already: identical */
        if (e->first <= r->commit)
            return -ERR_INVALID; /* straddles our commit: cannot be a real entry */
        if (e->first > r->log.last)
            break;
        if (e->last <= r->log.last && termlog_term_at(&r->log, e->first) == e->term &&
            termlog_term_at(&r->log, e->last) == e->term)
            continue; /* present */
        trunc = e->first;
        break;
    }
    if (k < m->n_entries) {
        if (trunc >= 0 && !truncate_ok(r, trunc))
            return -ERR_INVALID;
        int64_t before = trunc >= 0 ? termlog_term_at(&r->log, trunc - 1) : last_term(r);
        if (m->entries[k].term < before)
            return -ERR_INVALID; /* terms would go backwards */
    }
    if (trunc >= 0)
        log_truncate(r, trunc);
    for (; k < m->n_entries; k++) {
        const struct raft_entry *e = &m->entries[k];
        struct raft_conf c;
        if (e->kind == RAFT_ENTRY_CONFIG)
            CHECK(raft_conf_decode(&c, e->payload, e->len) == 0); /* entries_ok decoded it */
        log_append(r, e, &c);
    }
    int64_t msg_last = m->n_entries ? m->entries[m->n_entries - 1].last : prev;
    set_commit(r, MIN(m->commit, msg_last));
    ack_when_durable(r, msg_last);
    return 0;
}

static void handle_heartbeat(struct raft *r, const struct raft_msg *m)
{
    set_commit(r, MIN(m->commit, r->log.last));
    msg_new(r, RAFT_MSG_HEARTBEAT_RESP, m->from);
}

static void handle_install(struct raft *r, const struct raft_msg *m)
{
    int64_t at = m->index;
    if (at <= r->commit || termlog_term_at(&r->log, at) == m->log_term) {
        /* Our log already holds the leader's prefix up to `at`: keep it. */
        set_commit(r, at);
        ack_when_durable(r, at);
        return;
    }
    log_install(r, at, m->log_term, &m->conf);
    r->matched_hi = at;
    ack_when_durable(r, at);
}

/* Only this term's leader sends TimeoutNow (its term equals ours here), so a follower that has
 * not heard from it yet in this term (it just restarted) follows the request too: otherwise a
 * transfer to a freshly restarted, caught-up follower would silently time out. */
static void handle_timeout_now(struct raft *r, const struct raft_msg *m)
{
    if ((m->from == r->leader || r->leader == RAFT_NONE) && promotable(r))
        campaign(r, true);
}

/* ---- leader handlers ----------------------------------------------------------------------- */

static int handle_append_resp(struct raft *r, struct peer *p, const struct raft_msg *m)
{
    if (m->index > r->log.last)
        return -ERR_INVALID;
    p->active = true;
    if (m->reject) {
        /* Probing, only the answer to the outstanding probe counts; replicating, any reject
         * above the match (one of the window's appends did not fit) sends us back to probing
         * from the rejected point. */
        if (p->replicate ? m->index <= p->match || m->index >= p->next : m->index != p->next - 1)
            return 0; /* answers an older append */
        int64_t j = m->last;
        if (j >= r->log.start - 1)
            j = termlog_find_le_boundary(&r->log, j, m->log_term);
        int64_t next = MIN(j + 1, m->index);
        peer_probe(p, MAX(next, p->match + 1));
        send_append(r, p);
        return 0;
    }
    bool advanced = m->index > p->match;
    if (advanced)
        p->match = m->index;
    if (p->replicate) {
        size_t k = 0;
        while (k < p->n_infl && p->infl[k] <= m->index)
            k++;
        memmove(p->infl, p->infl + k, (p->n_infl - k) * sizeof(p->infl[0]));
        p->n_infl -= k;
        if (m->index >= p->next)
            p->next = m->index + 1;
        if (p->n_infl == 0)
            p->inflight_ms = -1;
        else if (advanced)
            p->inflight_ms = r->now_ms;
    } else if (m->index >= p->next - 1) {
        p->next = m->index + 1;
        p->inflight_ms = -1;
        p->replicate = true; /* the follower's log matches ours up to next - 1 */
    }
    if (advanced)
        maybe_commit(r);
    if (r->role != RAFT_LEADER)
        return 0;
    /* a commit may have changed the configuration, and rebuild_peers the peers array */
    p = peer_find(r, m->from);
    if (!p)
        return 0; /* removed by the C_new just appended */
    if (p->id == r->transferee && p->match == r->log.last)
        send_timeout_now(r, p->id);
    maybe_send_append(r, p);
    return 0;
}

static void handle_heartbeat_resp(struct raft *r, struct peer *p)
{
    p->active = true;
    if (p->match < r->log.last && !p->replicate && p->inflight_ms < 0 && p->next > r->log.last) {
        /* Behind, but we hold nothing to send it: a new member (its next starts past our
         * log) whose first appends were lost, on an idle group whose commit index no longer
         * moves. A probe at our last index makes it say where its log ends. */
        send_append(r, p);
        return;
    }
    if (p->match < r->log.last || p->commit_sent < r->commit)
        maybe_send_append(r, p);
}

/* ---- votes --------------------------------------------------------------------------------- */

static void handle_vote_request(struct raft *r, const struct raft_msg *m)
{
    bool pre = m->type == RAFT_MSG_PREVOTE;
    bool can = (pre && m->term > r->term) || r->vote == m->from ||
               (r->vote == RAFT_NONE && r->leader == RAFT_NONE);
    int64_t lt = last_term(r);
    bool up_to_date = m->log_term > lt || (m->log_term == lt && m->index >= r->log.last);
    bool grant =
        can && up_to_date && !(pre && prevote_locked(r, m->term, m->from, m->log_term, m->index));
    if (grant && pre)
        prevote_promise(r, m->term, m->from, m->log_term, m->index);
    if (grant && !pre && r->vote != m->from) {
        r->vote = m->from; /* recorded first: the grant then waits until it is durable */
        hs_changed(r);
    }
    if (grant && !pre)
        reset_election_deadline(r);
    struct raft_msg *out = msg_new(r, pre ? RAFT_MSG_PREVOTE_RESP : RAFT_MSG_VOTE_RESP, m->from);
    if (grant)
        out->term = m->term;
    else
        out->reject = true;
}

static void handle_vote_resp(struct raft *r, const struct raft_msg *m)
{
    bool mine =
        r->role == RAFT_PRECANDIDATE
            ? m->type == RAFT_MSG_PREVOTE_RESP && m->term == (m->reject ? r->term : r->term + 1)
            : r->role == RAFT_CANDIDATE && m->type == RAFT_MSG_VOTE_RESP && m->term == r->term;
    struct peer *p = peer_find(r, m->from);
    if (!mine || !p)
        return;
    p->vote = m->reject ? -1 : 1;
    switch (tally(r)) {
    case VOTE_WON:
        if (r->role == RAFT_PRECANDIDATE)
            become_candidate(r, false);
        else if (r->hs_durable)
            become_leader(r); /* else once our term and vote are durable */
        break;
    case VOTE_LOST:
        if (r->prevote_for == r->opt.id)
            r->prevote_for = RAFT_NONE; /* we lost: stop refusing others' pre-votes */
        become_follower(r, r->term, RAFT_NONE);
        break;
    case VOTE_PENDING:
        break;
    }
}

/* ---- step ---------------------------------------------------------------------------------- */

static bool from_leader_type(uint8_t t)
{
    return t == RAFT_MSG_APPEND || t == RAFT_MSG_HEARTBEAT || t == RAFT_MSG_INSTALL ||
           t == RAFT_MSG_TIMEOUT_NOW;
}

/* Term rules common to all roles. Returns false if the message is done with. */
static bool step_term(struct raft *r, const struct raft_msg *m)
{
    bool vote_req = m->type == RAFT_MSG_VOTE || m->type == RAFT_MSG_PREVOTE;
    if (m->term > r->term) {
        if (vote_req && !m->transfer && in_lease(r))
            return false; /* we hear from a leader: don't let a disruptive node depose it */
        if (m->type == RAFT_MSG_PREVOTE || (m->type == RAFT_MSG_PREVOTE_RESP && !m->reject))
            return true; /* PreVote never changes terms */
        become_follower(r, m->term, from_leader_type(m->type) ? m->from : RAFT_NONE);
        return true;
    }
    if (m->term < r->term) {
        if ((r->opt.check_quorum || r->opt.pre_vote) &&
            (m->type == RAFT_MSG_APPEND || m->type == RAFT_MSG_HEARTBEAT ||
             m->type == RAFT_MSG_INSTALL)) {
            /* A deposed leader that cannot learn our term otherwise (we may not answer its
             * votes): tell it. */
            msg_new(r, RAFT_MSG_HEARTBEAT_RESP, m->from);
        } else if (m->type == RAFT_MSG_PREVOTE) {
            struct raft_msg *out = msg_new(r, RAFT_MSG_PREVOTE_RESP, m->from);
            out->reject = true;
        }
        return false;
    }
    return true;
}

static int step_follower(struct raft *r, const struct raft_msg *m)
{
    if (!from_leader_type(m->type))
        return 0;
    if (r->leader != RAFT_NONE && r->leader != m->from)
        return -ERR_INVALID; /* a second leader in one term */
    if (m->type == RAFT_MSG_TIMEOUT_NOW) {
        handle_timeout_now(r, m);
        return 0;
    }
    r->leader = m->from;
    r->heard_leader_ms = r->now_ms;
    reset_election_deadline(r);
    switch (m->type) {
    case RAFT_MSG_APPEND:
        return handle_append(r, m);
    case RAFT_MSG_HEARTBEAT:
        handle_heartbeat(r, m);
        return 0;
    default:
        handle_install(r, m);
        return 0;
    }
}

static int step_leader(struct raft *r, const struct raft_msg *m)
{
    struct peer *p = peer_find(r, m->from);
    if (!p)
        return 0;
    switch (m->type) {
    case RAFT_MSG_APPEND_RESP:
        return handle_append_resp(r, p, m);
    case RAFT_MSG_HEARTBEAT_RESP:
        handle_heartbeat_resp(r, p);
        return 0;
    case RAFT_MSG_APPEND:
    case RAFT_MSG_HEARTBEAT:
    case RAFT_MSG_INSTALL:
        return -ERR_INVALID; /* a second leader in our term */
    default:
        return 0;
    }
}

int raft_step(struct raft *r, const struct raft_msg *m)
{
    CHECK(!r->in_ready);
    if (!m || !msg_ok(r, m))
        return -ERR_INVALID;
    DCHECK((raft_check(r), true));
    int rc = 0;
    if (step_term(r, m)) {
        if (m->type == RAFT_MSG_VOTE || m->type == RAFT_MSG_PREVOTE) {
            handle_vote_request(r, m);
        } else if (r->role == RAFT_LEADER) {
            rc = step_leader(r, m);
        } else if (r->role == RAFT_FOLLOWER) {
            rc = step_follower(r, m);
        } else if (from_leader_type(m->type) && m->type != RAFT_MSG_TIMEOUT_NOW) {
            /* A candidate learns of this term's leader. */
            become_follower(r, r->term, m->from);
            rc = step_follower(r, m);
        } else {
            handle_vote_resp(r, m);
        }
    }
    DCHECK((raft_check(r), true));
    return rc;
}

/* ---- other inputs -------------------------------------------------------------------------- */

void raft_tick(struct raft *r, int64_t now_ms)
{
    CHECK(!r->in_ready);
    if (now_ms > r->now_ms)
        r->now_ms = now_ms;
    if (r->role != RAFT_LEADER) {
        if (r->now_ms >= r->election_deadline_ms) {
            /* A sole voter's candidacy waits for nothing but its own vote to be durable: a new
             * term would only wait for one more store. (Campaigning again at each timeout, the
             * fifty thousand groups of a restart, their stores queued, went through hundreds of
             * terms each before one store came back in time.) */
            if (r->role == RAFT_CANDIDATE && !r->hs_durable && sole_voter(r))
                reset_election_deadline(r);
            else if (may_campaign(r))
                campaign(r, false);
            else
                reset_election_deadline(r);
        }
        return;
    }
    if (r->transferee != RAFT_NONE && r->now_ms >= r->transfer_deadline_ms)
        r->transferee = RAFT_NONE;
    if (r->now_ms >= r->quorum_deadline_ms) {
        r->quorum_deadline_ms = r->now_ms + r->opt.election_timeout_ms;
        if (r->opt.check_quorum && !quorum_active(r)) {
            become_follower(r, r->term, RAFT_NONE);
            return;
        }
        for (size_t i = 0; i < r->n_peers; i++)
            r->peers[i].active = false;
    }
    if (r->now_ms >= r->heartbeat_deadline_ms) {
        r->heartbeat_deadline_ms = r->now_ms + r->opt.heartbeat_ms;
        bcast_heartbeat(r);
    }
}

int64_t raft_next_deadline(const struct raft *r)
{
    if (r->role != RAFT_LEADER)
        return r->election_deadline_ms;
    /* alone in its group: no one to send heartbeats to, its own quorum is always there */
    if (sole_voter(r) && conf(r)->n_learners == 0 && r->transferee == RAFT_NONE)
        return INT64_MAX;
    int64_t d = MIN(r->heartbeat_deadline_ms, r->quorum_deadline_ms);
    return r->transferee != RAFT_NONE ? MIN(d, r->transfer_deadline_ms) : d;
}

int raft_propose(struct raft *r, int64_t n_indexes, const uint8_t *payload, size_t len,
                 int64_t *first, int64_t *last, int64_t *term)
{
    CHECK(!r->in_ready);
    if (r->role != RAFT_LEADER || r->transferee != RAFT_NONE || !promotable(r))
        return -ERR_NOT_LEADER;
    if (n_indexes < 1 || n_indexes > INT32_MAX || (len > 0 && !payload) ||
        r->log.last > TERMLOG_INDEX_MAX - n_indexes)
        return -ERR_INVALID;
    struct raft_entry e = {.first = r->log.last + 1,
                           .last = r->log.last + n_indexes,
                           .term = r->term,
                           .kind = RAFT_ENTRY_DATA,
                           .payload = payload,
                           .len = len};
    log_append(r, &e, NULL);
    if (first)
        *first = e.first;
    if (last)
        *last = e.last;
    if (term)
        *term = e.term;
    bcast_append(r);
    return 0;
}

int raft_propose_members(struct raft *r, const int32_t *voters, size_t n,
                         const int32_t *learners, size_t n_learners)
{
    CHECK(!r->in_ready);
    if (r->role != RAFT_LEADER || r->transferee != RAFT_NONE || !promotable(r))
        return -ERR_NOT_LEADER;
    const struct raft_conf *cur = conf(r);
    if (raft_conf_is_joint(cur) || r->confs[r->n_confs - 1].index > r->commit)
        return -ERR_BUSY;
    /* A sole voter may change members once what it committed is durable (the new members must
     * never learn of an entry it could lose); it needs no entry of its own term: it has no
     * uncommitted entries of earlier terms, and nobody else could hold another config. */
    if (sole_voter(r) ? r->durable < r->commit : termlog_term_at(&r->log, r->commit) != r->term)
        return -ERR_BUSY;
    if (n < 1 || n > RAFT_VOTERS_MAX || !voters || n_learners > RAFT_LEARNERS_MAX ||
        (n_learners && !learners))
        return -ERR_INVALID;
    struct raft_conf target = {.n_voters = (uint8_t)n, .n_learners = (uint8_t)n_learners};
    memcpy(target.voters, voters, n * sizeof(*voters));
    if (n_learners)
        memcpy(target.learners, learners, n_learners * sizeof(*learners));
    if (!raft_conf_valid(&target) || raft_conf_equal(&target, cur))
        return -ERR_INVALID;
    struct raft_conf same_voters = {.n_voters = cur->n_voters};
    memcpy(same_voters.voters, cur->voters, sizeof(same_voters.voters));
    struct raft_conf target_voters = {.n_voters = (uint8_t)n};
    memcpy(target_voters.voters, voters, n * sizeof(*voters));
    if (raft_conf_equal(&same_voters, &target_voters)) {
        /* Only learners change: every majority stays what it was, so no joint step. */
        append_conf(r, &target);
        return 0;
    }
    /* A voter becomes a learner only by leaving first: while joint it would be in C_old and a
     * learner at once. */
    for (size_t i = 0; i < n_learners; i++)
        if (raft_conf_has(cur, learners[i]))
            return -ERR_INVALID;
    struct raft_conf joint = target;
    joint.n_old = cur->n_voters;
    memcpy(joint.old, cur->voters, sizeof(joint.old));
    if (!raft_conf_valid(&joint))
        return -ERR_INVALID;
    append_conf(r, &joint);
    return 0;
}

int raft_propose_conf(struct raft *r, const int32_t *voters, size_t n)
{
    /* the learners stay, but for those the change makes voters */
    const struct raft_conf *cur = conf(r);
    int32_t keep[RAFT_LEARNERS_MAX];
    size_t nk = 0;
    for (size_t i = 0; i < cur->n_learners; i++)
        if (!voters || !raft_conf_side_has(voters, n, cur->learners[i]))
            keep[nk++] = cur->learners[i];
    return raft_propose_members(r, voters, n, keep, nk);
}

int raft_transfer_leader(struct raft *r, int32_t to)
{
    CHECK(!r->in_ready);
    if (r->role != RAFT_LEADER)
        return -ERR_NOT_LEADER;
    if (to == RAFT_NONE)
        to = best_voter(r);
    const struct raft_conf *c = conf(r);
    if (to == RAFT_NONE || to == r->opt.id || !raft_conf_side_has(c->voters, c->n_voters, to))
        return -ERR_INVALID;
    struct peer *p = peer_find(r, to);
    r->transferee = to;
    r->transfer_deadline_ms = r->now_ms + r->opt.election_timeout_ms;
    if (p->match == r->log.last) {
        send_timeout_now(r, to);
        return 0;
    }
    /* Catch it up from what it acknowledged, without waiting for a replicating window to
     * time out: the transfer gives up after an election timeout. */
    if (p->replicate)
        peer_probe(p, p->match + 1);
    maybe_send_append(r, p);
    return 0;
}

int raft_campaign(struct raft *r)
{
    CHECK(!r->in_ready);
    if (r->role == RAFT_LEADER || !may_campaign(r))
        return -ERR_INVALID;
    campaign(r, false);
    return 0;
}

void raft_persisted(struct raft *r, int64_t index, int64_t term)
{
    CHECK(!r->in_ready);
    if (index <= r->durable || index > r->stored_last)
        return;
    if (termlog_term_at(&r->log, index) != term)
        return; /* stale: that entry was truncated meanwhile */
    r->durable = index;
    if (r->role == RAFT_LEADER)
        maybe_commit(r);
    else if (r->role == RAFT_FOLLOWER && r->ack_wait >= 0 && r->leader != RAFT_NONE)
        send_ack(r);
}

void raft_relaxed(struct raft *r, int64_t index)
{
    CHECK(!r->in_ready);
    /* only what the storage holds: an entry still to be written may yet fail to be */
    index = MIN(index, r->stored_last);
    if (r->role != RAFT_LEADER || !sole_voter(r) || index <= r->relaxed)
        return;
    r->relaxed = index;
    maybe_commit(r);
}

int raft_write_failed(struct raft *r, int64_t from)
{
    CHECK(!r->in_ready);
    if (from <= r->commit || from > r->log.last || from < r->log.start)
        return -ERR_INVALID;
    if (r->role == RAFT_LEADER)
        become_follower(r, r->term, RAFT_NONE);
    log_truncate(r, from); /* the storage has nothing from there on: its truncation is a no-op */
    return 0;
}

void raft_persisted_hard_state(struct raft *r, int64_t term, int32_t vote)
{
    CHECK(!r->in_ready);
    if (r->hs_durable || term != r->term || vote != r->vote)
        return; /* an older hard state: ours is still on its way */
    r->hs_durable = true;
    if (r->n_held > 0) {
        MEM_GROW(r->msgs, r->cap_msgs, r->n_msgs + r->n_held);
        memcpy(r->msgs + r->n_msgs, r->held, r->n_held * sizeof(*r->held));
        r->n_msgs += r->n_held;
        r->n_held = 0;
    }
    struct peer *self = peer_find(r, r->opt.id);
    if (r->role == RAFT_CANDIDATE && self) {
        self->vote = 1;
        switch (tally(r)) {
        case VOTE_WON:
            become_leader(r);
            break;
        case VOTE_LOST:
            become_follower(r, r->term, RAFT_NONE);
            break;
        case VOTE_PENDING:
            break;
        }
    }
}

int raft_compact(struct raft *r, int64_t index)
{
    CHECK(!r->in_ready);
    if (index <= r->log.start || index > r->commit + 1 || index > r->durable + 1)
        return -ERR_INVALID;
    termlog_compact(&r->log, index);
    return 0;
}

/* ---- ready --------------------------------------------------------------------------------- */

bool raft_has_ready(const struct raft *r)
{
    return r->n_msgs || r->n_wr || r->wr_truncate >= 0 || r->wr_install || r->hs_dirty ||
           r->conf_dirty || r->commit != r->rep_commit || r->role != r->rep_role ||
           r->leader != r->rep_leader || r->term != r->rep_term;
}

void raft_ready(struct raft *r, struct raft_ready *rd)
{
    CHECK(!r->in_ready);
    memset(rd, 0, sizeof(*rd));
    rd->role = r->role;
    rd->leader = r->leader;
    rd->term = r->term;
    rd->soft_state_changed =
        r->role != r->rep_role || r->leader != r->rep_leader || r->term != r->rep_term;
    rd->hard_state_changed = r->hs_dirty;
    rd->hs_term = r->term;
    rd->hs_vote = r->vote;
    rd->install = r->wr_install;
    rd->install_index = r->install_index;
    rd->install_term = r->install_term;
    rd->install_conf = r->install_conf;
    rd->truncate_from = r->wr_truncate;
    rd->entries = r->wr;
    rd->n_entries = r->n_wr;
    rd->msgs = r->msgs;
    rd->n_msgs = r->n_msgs;
    rd->commit = r->commit;
    rd->commit_changed = r->commit != r->rep_commit;
    rd->conf_changed = r->conf_dirty;
    r->in_ready = true;
}

void raft_advance(struct raft *r, struct raft_ready *rd)
{
    CHECK(r->in_ready);
    /* The adapter may have sent only a prefix of an append (contract 4: it lowered m->last);
     * a replicating peer then continues right after that prefix. */
    bool resend = false;
    for (size_t i = 0; i < r->n_peers; i++) {
        struct peer *p = &r->peers[i];
        size_t slot = p->ready_slot;
        if (slot == SIZE_MAX)
            continue;
        p->ready_slot = SIZE_MAX;
        CHECK(slot < rd->n_msgs && rd->msgs == r->msgs);
        const struct raft_msg *m = &rd->msgs[slot];
        CHECK(m->type == RAFT_MSG_APPEND && m->to == p->id && p->replicate && p->n_infl > 0);
        if (m->last < p->infl[p->n_infl - 1] && m->last > m->index &&
            p->infl[p->n_infl - 1] == p->next - 1) {
            p->infl[p->n_infl - 1] = m->last;
            p->next = m->last + 1;
        }
        resend = true;
    }
    r->in_ready = false;
    r->rep_role = r->role;
    r->rep_leader = r->leader;
    r->rep_term = r->term;
    r->rep_commit = r->commit;
    r->hs_dirty = false;
    r->conf_dirty = false;
    r->wr_install = false;
    r->wr_truncate = -1;
    r->n_wr = 0;
    r->n_msgs = 0;
    r->stored_last = r->log.last;
    r->base_last = r->log.last;
    for (size_t i = 0; i < r->n_bufs; i++)
        mem_free(r->bufs[i]);
    r->n_bufs = 0;
    if (r->cap_msgs > 256) { /* don't keep a burst's worth of memory in every group */
        mem_free(r->msgs);
        r->msgs = NULL;
        r->cap_msgs = 0;
    }
    /* Entries proposed during the ready go out now, in the next ready. */
    if (resend && r->role == RAFT_LEADER)
        bcast_append(r);
    DCHECK((raft_check(r), true));
}

/* ---- construction -------------------------------------------------------------------------- */

void raft_options_default(struct raft_options *o, int32_t id, uint64_t seed)
{
    *o = (struct raft_options){.id = id,
                               .election_timeout_ms = 150,
                               .heartbeat_ms = 50,
                               .pre_vote = true,
                               .check_quorum = true,
                               .seed = seed};
}

static bool restore_ok(const struct raft_restore *st)
{
    if (!term_ok(st->term) || st->vote < RAFT_NONE || st->log_start < 0 ||
        st->log_start > TERMLOG_INDEX_MAX || st->log_last < st->log_start - 1 ||
        st->log_last > TERMLOG_INDEX_MAX || !term_ok(st->prev_term) ||
        (st->log_start == 0 && st->prev_term != 0) || !index_ok(st->commit))
        return false;
    bool empty = st->log_last == st->log_start - 1;
    if (empty != (st->n_terms == 0) || (st->n_terms && !st->terms))
        return false;
    for (size_t i = 0; i < st->n_terms; i++) {
        const struct raft_term_start *t = &st->terms[i];
        if (t->term < 1 || !term_ok(t->term) || t->first > st->log_last)
            return false;
        if (i == 0 && (t->first != st->log_start || t->term < st->prev_term))
            return false;
        if (i > 0 && (t->first <= st->terms[i - 1].first || t->term <= st->terms[i - 1].term))
            return false;
    }
    if (st->n_confs < 1 || !st->confs || st->confs[0].index >= st->log_start ||
        st->confs[0].index < -1)
        return false;
    for (size_t i = 0; i < st->n_confs; i++) {
        if (!raft_conf_valid(&st->confs[i].conf))
            return false;
        if (i > 0 && (st->confs[i].index <= st->confs[i - 1].index ||
                      st->confs[i].index < st->log_start || st->confs[i].index > st->log_last))
            return false;
    }
    return true;
}

int raft_new(const struct raft_options *opt, const struct raft_restore *st, int64_t now_ms,
             struct raft **out)
{
    if (opt->id < 0 || opt->election_timeout_ms < 1 || opt->heartbeat_ms < 1)
        return -ERR_INVALID;
    if (!restore_ok(st))
        return -ERR_CORRUPT;
    struct raft *r = mem_calloc(1, sizeof(*r));
    r->opt = *opt;
    r->rng = opt->seed;
    r->now_ms = now_ms;
    r->role = RAFT_FOLLOWER;
    r->term = st->term;
    r->vote = st->vote;
    r->leader = RAFT_NONE;
    termlog_init(&r->log, st->log_start, st->prev_term);
    for (size_t i = 0; i < st->n_terms; i++) {
        int64_t end = i + 1 < st->n_terms ? st->terms[i + 1].first - 1 : st->log_last;
        termlog_append(&r->log, st->terms[i].first, end, st->terms[i].term);
    }
    r->hs_durable = true;
    if (r->term < last_term(r)) {
        r->term = last_term(r);
        r->vote = RAFT_NONE;
        hs_changed(r);
    }
    r->stored_last = r->base_last = r->durable = r->log.last;
    r->relaxed = -1;
    r->commit = MIN(MAX(st->commit, r->log.start - 1), r->log.last);
    r->confs = mem_alloc(st->n_confs * sizeof(*r->confs));
    memcpy(r->confs, st->confs, st->n_confs * sizeof(*r->confs));
    r->n_confs = r->cap_confs = st->n_confs;
    confs_prune(r);
    rebuild_peers(r);
    r->heard_leader_ms = INT64_MIN / 2;
    r->transferee = RAFT_NONE;
    r->prevote_for = RAFT_NONE;
    r->matched_hi = -1;
    r->ack_wait = -1;
    r->wr_truncate = -1;
    r->rep_role = RAFT_FOLLOWER;
    r->rep_leader = RAFT_NONE;
    r->rep_term = r->term;
    r->rep_commit = r->commit;
    reset_election_deadline(r);
    raft_check(r);
    *out = r;
    return 0;
}

void raft_free(struct raft *r)
{
    if (!r)
        return;
    termlog_free(&r->log);
    mem_free(r->peers);
    for (size_t i = 0; i < r->n_bufs; i++)
        mem_free(r->bufs[i]);
    mem_free(r->bufs);
    mem_free(r->confs);
    mem_free(r->msgs);
    mem_free(r->held);
    mem_free(r->wr);
    mem_free(r);
}

/* ---- accessors and the invariant checker ----------------------------------------------------- */

int32_t raft_id(const struct raft *r)
{
    return r->opt.id;
}

enum raft_role raft_role(const struct raft *r)
{
    return r->role;
}

const char *raft_role_name(enum raft_role role)
{
    switch (role) {
    case RAFT_FOLLOWER:
        return "follower";
    case RAFT_PRECANDIDATE:
        return "precandidate";
    case RAFT_CANDIDATE:
        return "candidate";
    case RAFT_LEADER:
        return "leader";
    }
    return "?";
}

int64_t raft_term(const struct raft *r)
{
    return r->term;
}

int32_t raft_vote(const struct raft *r)
{
    return r->vote;
}

int32_t raft_leader(const struct raft *r)
{
    return r->leader;
}

int64_t raft_commit(const struct raft *r)
{
    return r->commit;
}

int64_t raft_log_start(const struct raft *r)
{
    return r->log.start;
}

int64_t raft_last_index(const struct raft *r)
{
    return r->log.last;
}

int64_t raft_durable_index(const struct raft *r)
{
    return r->durable;
}

int64_t raft_term_at(const struct raft *r, int64_t i)
{
    return termlog_term_at(&r->log, i);
}

const struct raft_conf *raft_conf(const struct raft *r)
{
    return conf(r);
}

int64_t raft_conf_index(const struct raft *r)
{
    return r->confs[r->n_confs - 1].index;
}

int64_t raft_match_index(const struct raft *r, int32_t peer)
{
    if (r->role != RAFT_LEADER)
        return -1;
    return peer_match(r, peer);
}

int32_t raft_transferee(const struct raft *r)
{
    return r->transferee;
}

void raft_check(const struct raft *r)
{
    const struct termlog *l = &r->log;
    CHECK(termlog_check(l));
    CHECK(r->stored_last <= l->last && r->base_last <= l->last);
    CHECK(r->commit >= l->start - 1 && r->commit <= l->last);
    CHECK(r->durable >= l->start - 2 && r->durable <= l->last && r->durable <= r->stored_last);
    CHECK(r->term >= termlog_last_term(l) && r->term <= RAFT_TERM_MAX);
    CHECK((r->role == RAFT_LEADER) == (r->leader == r->opt.id));
    if (r->role == RAFT_LEADER || r->role == RAFT_CANDIDATE)
        CHECK(r->vote == r->opt.id);
    CHECK(r->n_confs >= 1 && r->confs[0].index <= r->commit);
    for (size_t i = 0; i < r->n_confs; i++) {
        CHECK(raft_conf_valid(&r->confs[i].conf));
        if (i > 0)
            CHECK(r->confs[i].index > r->commit && r->confs[i].index <= l->last &&
                  r->confs[i].index > r->confs[i - 1].index);
    }
    const struct raft_conf *c = conf(r);
    size_t members = c->n_learners;
    for (size_t i = 0; i < c->n_voters; i++)
        members++;
    for (size_t i = 0; i < c->n_old; i++)
        if (!raft_conf_side_has(c->voters, c->n_voters, c->old[i]))
            members++;
    CHECK(r->n_peers == members);
    for (size_t i = 0; i < r->n_peers; i++) {
        const struct peer *p = &r->peers[i];
        CHECK(raft_conf_has_member(c, p->id));
        for (size_t j = 0; j < i; j++)
            CHECK(r->peers[j].id != p->id);
        if (r->role != RAFT_LEADER || p->id == r->opt.id)
            continue;
        CHECK(p->match >= -1 && p->match < p->next && p->next <= l->last + 1);
        CHECK(p->n_infl <= RAFT_INFLIGHT_MAX && (p->replicate || p->n_infl == 0));
        CHECK(!p->replicate || (p->n_infl == 0) == (p->inflight_ms < 0));
        for (size_t k = 0; k < p->n_infl; k++)
            CHECK(p->infl[k] > p->match && p->infl[k] < p->next &&
                  (k == 0 || p->infl[k] > p->infl[k - 1]));
    }
    CHECK(r->matched_hi <= l->last && r->ack_wait <= MAX(r->matched_hi, -1));
    CHECK(!r->hs_durable || r->n_held == 0);
    CHECK(r->relaxed == -1 || (r->role == RAFT_LEADER && r->relaxed <= r->log.last));
    CHECK(r->role != RAFT_LEADER || r->hs_durable);
    for (size_t i = 0; i < r->n_held; i++)
        CHECK(is_reply(r->held[i].type));
    int64_t next = r->base_last + 1;
    for (size_t i = 0; i < r->n_wr; i++) {
        CHECK(r->wr[i].first == next && r->wr[i].last >= r->wr[i].first);
        CHECK(termlog_term_at(l, r->wr[i].last) == r->wr[i].term);
        next = r->wr[i].last + 1;
    }
    CHECK(r->n_wr == 0 || next == l->last + 1);
}
