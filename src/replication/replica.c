/* A partition replica: the Raft core bound to the partition's plog (replication/replica.h).
 *
 * Owns: the core (struct raft), the configuration side file (conflog), the hard state last
 * written, a directory fd, and buffers: the log-write scratch batch, copies of proposals until
 * the ready that writes them is advanced, and the entries of the APPEND being sent.
 * Borrows: the plog (opened and closed by the owner); while open, the plog's flush callback is
 * the replica's.
 *
 * Invariants (replica_check):
 *   1. Outside process(), the plog holds exactly the core's log: LEO == raft_last_index + 1,
 *      log start == raft_log_start, and the plog's epoch at every index is the core's term.
 *   2. durable_reported <= plog durable offset - 1: the core never hears of durability the plog
 *      does not have. Once failed, nothing more is reported at all.
 *   3. Every conflog record at or above the log start names a CONFIG entry of the log (its
 *      index below LEO and its term the log's term there).
 *   4. HW == commit + 1 (clamped by the plog to [log start, LEO]).
 *   5. hs_queued implies hs_syncing or hs_waiting, and hs_waiting excludes hs_syncing: at most
 *      one hard-state write is not yet durable, so the file's other slot always holds a durable
 *      state (replication/hardstate.h).
 *   6. At most HS_SYNCS_MAX hard-state syncs are in flight per thread (each holds the file's
 *      descriptor until its fdatasync returns: fifty thousand groups campaigning at a restart
 *      must not take fifty thousand descriptors). Further writes go, where the filesystem takes
 *      barriers, into the thread's barrier batch (hs_syncing, linked on hs_batch, no
 *      descriptor: one syncfs makes the whole batch durable), else wait, in order, for a slot.
 *      A log whose small state is in the node's kvstore (plog_kv) keeps the hard state there:
 *      its writes take no slot and always go into the store's batch (one fdatasync of the
 *      store's file). A replica is on a batch list exactly when hs_syncing without a slot.
 *
 * States: open (replica_open) -> failed (fail(): any storage error; terminal, inputs refused)
 * -> closed (replica_close). Within open, process() runs one ready at a time: ready_taken
 * between raft_ready and raft_advance (no input may reach the core then).
 *
 * Copies: a proposal is copied once (the caller's buffer does not live until the ready is
 * written); that copy is appended in place (plog_append gives it its offset and epoch) and
 * sent on to followers as it is when their append starts with it (fill_from_ready); other
 * ranges are read back from the log (fill_append), and entries from a leader's message are
 * copied into the scratch batch before appending.
 *
 * Durability: appended entries become durable through the plog's flusher; the flush callback
 * reports raft_persisted(durable - 1, term there). Hard state is written inside process() and
 * its fdatasync handed to the flusher (plog_sync_side_file), which runs the syncs of many groups
 * in parallel, or, in the node's kvstore, put there and synced with the store's next batch;
 * the core hears of it (raft_persisted_hard_state) when the sync returned, and holds its
 * replies and its own vote until then (raft.h contract 2). The first store of a group in a
 * file lays the file out whole, synchronously. A hard state in the store takes precedence over
 * the file (a directory an older release wrote keeps its file, read until the first store). A
 * CONFIG entry's side record is fdatasync'ed before its control batch is appended, so whatever the
 * log keeps after a crash has its configuration.
 *
 * Log start (invariant 1 holds across it): the replica alone moves the plog's log start, in two
 * ways. replica_compact (retention, DeleteRecords) truncates a prefix of whole entries, committed
 * and durable, then tells the core (raft_compact). An install (rd.install: the leader no longer
 * has what this follower needs) restarts the plog empty after the install point (plog_reset)
 * and records the configuration there in the conflog. Before either moves the plog, the term
 * of the entry before the new log start (and, for an install, the configuration there) is
 * written durably to `raft-log-start` (replication/logstart.h), which keeps the old point too, so a
 * crash at any step restores the right prev term. A log start moved by anything else (an older
 * version's retention) has no recorded point: its prev term is taken from the first term range
 * (exact unless that range began exactly at the log start). */
#include "replication/replica.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/list.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "kafka/batch.h"
#include "replication/conflog.h"
#include "replication/hardstate.h"
#include "replication/logstart.h"
#include "storage/io.h"
#include "storage/kvstore.h"
#include "storage/plog.h"

#define REPLICA_MSG_BYTES_DEFAULT (1 << 20)
#define REPLICA_PROCESS_MAX 10000 /* readies per input: a bound, never reached in practice */

struct strict_span {
    int64_t first;
    int64_t last;
};

struct replica {
    struct plog *log; /* borrowed */
    struct replica_options opt;
    struct raft *r;
    struct conflog cl;              /* CONFIG entries' configurations */
    struct raft_hard_state hs;      /* as last written (durable unless hs_syncing) */
    bool hs_syncing;                /* hs is written, its fdatasync or barrier is in flight */
    bool hs_queued;                 /* hs_next waits for that sync, or for a slot (hs_waiting) */
    bool hs_waiting;                /* on the thread's FIFO of writes waiting for a slot */
    struct replica *hs_wait_next;
    struct list_node hs_batch;      /* hs_syncing without a slot: on a barrier batch (inv. 6) */
    struct raft_hard_state hs_next; /* term and vote of the newest ready, commit its commit */
    struct raft_log_start *ls;      /* `raft-log-start` as last written (or loaded), or NULL
                                     * while there is no such file (most logs: 232 bytes each) */
    int failed;                     /* 0, or the error that failed the replica */
    bool busy;                      /* inside process() */
    bool ready_taken;               /* between raft_ready and raft_advance */
    int64_t durable_reported;       /* last index reported with raft_persisted */
    int64_t commit;                 /* last commit applied (HW - 1) */
    uint8_t *scratch;               /* batch being appended (plog_append writes into it) */
    size_t scratch_cap;
    uint8_t **props; /* proposal copies, freed after the ready that wrote them */
    size_t n_props;
    size_t cap_props;
    uint8_t *inplace; /* the caller's proposal being written in place (replica_propose) */
    struct strict_span *strict; /* proposals that asked for durability and are not yet
                                 * durable, ascending (a sole voter commits the rest unsynced) */
    size_t n_strict;
    size_t cap_strict;
    bool flush_wanted; /* a proposal since the last log write asks for durability */
    int64_t nospace_from;  /* the current ready's writes stopped here on a full disk, or -1 */
    int64_t nospace_min;   /* the lowest such index since replica_propose began, or MAX */
    int64_t nospace_logged_ms; /* the last replica_write_refused warning */
    int64_t visible;   /* the Kafka high watermark (see "Visibility") */
    int64_t *raft_offs; /* offsets of NOOP and CONFIG entries at or above visible, ascending */
    size_t n_raft_offs;
    size_t cap_raft_offs;
    uint8_t *msgbuf; /* batches of the APPEND being sent */
    size_t msgbuf_cap;
    uint8_t *confbuf; /* CONFIG payloads of the APPEND being sent */
    size_t confbuf_cap;
    struct raft_entry *ents; /* entries of the APPEND being sent */
    size_t ents_cap;
};

void replica_options_default(struct replica_options *o, int32_t id, uint64_t seed)
{
    memset(o, 0, sizeof(*o));
    raft_options_default(&o->raft, id, seed);
    o->msg_bytes_max = REPLICA_MSG_BYTES_DEFAULT;
}

/* ---- the log's terms ---- */

/* The point of `raft-log-start` at index, or NULL. */
static const struct raft_log_point *log_start_point(const struct replica *rp, int64_t index)
{
    return rp->ls ? raft_log_start_find(rp->ls, index) : NULL;
}

/* Term of the entry before the log start: recorded in `raft-log-start` when this replica moved
 * the log start; for a log start moved otherwise (an older version's retention), taken from the
 * first term range (exact unless that range began exactly at the log start). */
static int64_t prev_term_of(const struct replica *rp)
{
    const struct plog *log = rp->log;
    int64_t start = plog_start_offset(log);
    if (start == 0)
        return 0;
    const struct raft_log_point *pt = log_start_point(rp, start - 1);
    if (pt)
        return pt->term;
    if (plog_epoch_count(log) == 0)
        return 0;
    int32_t epoch;
    int64_t first;
    plog_epoch_at(log, 0, &epoch, &first);
    return epoch;
}

/* Term of offset i in the plog (i in [log start - 1, LEO - 1]), -1 outside. */
static int64_t log_term_at(const struct replica *rp, int64_t i)
{
    const struct plog *log = rp->log;
    if (i < plog_start_offset(log) - 1 || i >= plog_end_offset(log))
        return -1;
    if (i == plog_start_offset(log) - 1)
        return prev_term_of(rp);
    int64_t term = -1;
    for (size_t k = plog_epoch_count(log); k-- > 0;) {
        int32_t epoch;
        int64_t start;
        plog_epoch_at(log, k, &epoch, &start);
        if (start <= i) {
            term = epoch;
            break;
        }
    }
    return term;
}

__attribute__((unused)) static void replica_check(const struct replica *rp)
{
    CHECK(!rp->hs_queued || rp->hs_syncing || rp->hs_waiting);
    CHECK(!(rp->hs_waiting && rp->hs_syncing) && (!rp->hs_waiting || rp->hs_queued));
    if (rp->failed)
        return;
    CHECK(plog_end_offset(rp->log) == raft_last_index(rp->r) + 1);
    CHECK(plog_start_offset(rp->log) == raft_log_start(rp->r));
    CHECK(rp->durable_reported <= plog_durable_offset(rp->log) - 1);
    CHECK(log_term_at(rp, raft_last_index(rp->r)) == raft_term_at(rp->r, raft_last_index(rp->r)));
    for (size_t i = 0; i < rp->cl.n; i++) {
        const struct conflog_rec *c = &rp->cl.r[i];
        if (c->index >= plog_start_offset(rp->log))
            CHECK(c->index < plog_end_offset(rp->log) && log_term_at(rp, c->index) == c->term);
    }
    CHECK(rp->visible <= MAX(rp->commit + 1, plog_start_offset(rp->log)));
    CHECK(plog_high_watermark(rp->log) ==
          MIN(MAX(rp->visible, plog_start_offset(rp->log)), plog_end_offset(rp->log)));
    for (size_t i = 0; i < rp->n_raft_offs; i++)
        CHECK(rp->raft_offs[i] >= rp->visible && rp->raft_offs[i] < plog_end_offset(rp->log) &&
              (i == 0 || rp->raft_offs[i - 1] < rp->raft_offs[i]));
}

/* ---- failure ---- */

static void fail(struct replica *rp, const char *op, int rc)
{
    if (rp->failed)
        return;
    rp->failed = rc ? rc : -ERR_FENCED;
    log_error("replica_failed",
              "dir=%s id=%" PRId32 " op=%s error=\"%s\" term=%" PRId64 " commit=%" PRId64
              " note=\"stopped: no more acknowledgements or votes until reopened\"",
              plog_dir(rp->log), raft_id(rp->r), op, err_str(rc), raft_term(rp->r), rp->commit);
}

/* A full disk: the write was cut off again (storage/plog.h), nothing is fenced, and the group
 * goes on once space is free. Logged at most once a second per replica. */
static void nospace_warn(struct replica *rp, const char *op)
{
    int64_t now = time_mono_ms();
    if (now - rp->nospace_logged_ms < 1000)
        return;
    rp->nospace_logged_ms = now;
    log_warn("replica_write_refused", "dir=%s op=%s reason=\"disk full\"", plog_dir(rp->log), op);
}

/* ---- durability reports ---- */

/* This node leads a group whose only voter it is (raft.h "A group of one voter"). */
static bool sole_leader(const struct replica *rp)
{
    const struct raft_conf *c = raft_conf(rp->r);
    return raft_role(rp->r) == RAFT_LEADER && c->n_old == 0 && c->n_voters == 1 &&
           c->voters[0] == raft_id(rp->r);
}

static void report_durable(struct replica *rp)
{
    if (rp->failed || rp->ready_taken || plog_fenced(rp->log))
        return;
    int64_t d = plog_durable_offset(rp->log) - 1;
    if (d > rp->durable_reported) {
        raft_persisted(rp->r, d, log_term_at(rp, d));
        rp->durable_reported = d;
    }
    /* what a sole voter may commit unsynced: up to the first proposal that waits for
     * durability and does not have it yet */
    size_t k = 0;
    while (k < rp->n_strict && rp->strict[k].last <= rp->durable_reported)
        k++;
    if (k > 0) {
        memmove(rp->strict, rp->strict + k, (rp->n_strict - k) * sizeof(*rp->strict));
        rp->n_strict -= k;
    }
    if (!sole_leader(rp))
        return;
    raft_relaxed(rp->r, rp->n_strict > 0 ? rp->strict[0].first - 1 : raft_last_index(rp->r));
}

static void process(struct replica *rp);

static void flush_done_cb(struct plog *log, int64_t durable_offset, int rc, void *data)
{
    struct replica *rp = data;
    (void)log;
    (void)durable_offset;
    if (rc != 0) {
        fail(rp, "fdatasync", rc);
        return;
    }
    if (!rp->busy)
        process(rp);
}

/* ---- applying a ready (contract 3) ---- */

/* The state to write for term, vote and commit: the hint must be committed and durable here, so
 * a crash cannot leave it above the log, and never lower than the last one written. */
static struct raft_hard_state hard_state_of(const struct replica *rp, int64_t term, int32_t vote,
                                            int64_t commit)
{
    int64_t hint = MIN(commit, plog_durable_offset(rp->log) - 1);
    hint = MAX(hint, rp->hs.commit);
    return (struct raft_hard_state){.term = term, .vote = vote, .commit = hint};
}

/* Synchronous store (open and close paths). In the node's store, a close's (a later commit
 * hint, the same term and vote) is only put: the store is synced when the broker stops, and a
 * hint lost is only a later start of the high watermark. */
static int write_hard_state(struct replica *rp, int64_t term, int32_t vote, int64_t commit)
{
    struct raft_hard_state hs = hard_state_of(rp, term, vote, commit);
    struct kvstore *kv = plog_kv(rp->log);
    int rc;
    if (kv) {
        uint8_t rec[RAFT_HARD_STATE_SIZE];
        raft_hard_state_encode(&hs, rec);
        rc = kv_put(kv, plog_kv_dir(rp->log), RAFT_HARD_STATE_FILE, rec, sizeof(rec));
    } else {
        rc = raft_hard_state_store(plog_dirfd(rp->log), &hs);
    }
    if (rc == 0)
        rp->hs = hs;
    return rc;
}

#define HS_SYNCS_MAX 256 /* hard-state syncs in flight per thread (invariant 6) */

/* The replicas of this thread (the broker's reactor) share the slots. */
static _Thread_local int hs_in_flight;
static _Thread_local struct replica *hs_wait_head, *hs_wait_tail;

static void hard_state_synced(struct plog *log, int rc, void *data);

static void hs_wait_push(struct replica *rp)
{
    rp->hs_waiting = true;
    rp->hs_wait_next = NULL;
    if (hs_wait_tail)
        hs_wait_tail->hs_wait_next = rp;
    else
        hs_wait_head = rp;
    hs_wait_tail = rp;
}

static void hs_wait_remove(struct replica *rp)
{
    struct replica **pp = &hs_wait_head, *prev = NULL;
    while (*pp && *pp != rp) {
        prev = *pp;
        pp = &(*pp)->hs_wait_next;
    }
    if (!*pp)
        return;
    *pp = rp->hs_wait_next;
    if (hs_wait_tail == rp)
        hs_wait_tail = prev;
    rp->hs_waiting = false;
    rp->hs_wait_next = NULL;
}

/* Writes beyond the slots, where the log's filesystem takes barriers (plog_fs_barrier): each is
 * written in place at once and its descriptor closed, and a batch of them is made durable by
 * one syncfs (a restart's fifty thousand campaigns: one device flush for thousands of groups,
 * where sixteen fdatasyncs at a time were the bound). One barrier is in flight per thread; the
 * writes made meanwhile form the next batch, which goes when it returns. A batch holds only
 * writes to the filesystem of its first (fs.dev); a write to another waits for a slot.
 *
 * A log that keeps its small state in the node's store (plog_kv) keeps the hard state there
 * too: every write goes into the store's batch (kvb), whose barrier is one fdatasync of the
 * store's file, and needs no slot. */
struct hs_batch {
    struct list_node next;   /* the next batch (use batch_lists) */
    struct list_node flying; /* the barrier's batch in flight */
    dev_t dev;               /* fs: the filesystem of the next batch */
    bool busy;               /* in flight, or its batch being reported */
};
static _Thread_local struct hs_batch hs_fs, hs_kv;

/* The thread's lists, initialised on first use (a thread-local's address is no constant). */
static void batch_lists(void)
{
    if (!hs_fs.next.next) {
        list_init(&hs_fs.next);
        list_init(&hs_fs.flying);
        list_init(&hs_kv.next);
        list_init(&hs_kv.flying);
    }
}

static void barrier_done(int rc, void *data);

/* Sends the next batch's barrier through the log of its first write. Returns 0 or -errno (the
 * batch then stays where it was). */
static int barrier_go(struct hs_batch *hb)
{
    struct replica *first = LIST_ENTRY(hb->next.next, struct replica, hs_batch);
    int rc = plog_fs_barrier(first->log, barrier_done, hb);
    if (rc != PLOG_SIDE_QUEUED)
        return rc < 0 ? rc : -ERR_INVALID;
    hb->busy = true;
    /* the whole batch moves to the flying list */
    hb->flying.next = hb->next.next;
    hb->flying.prev = hb->next.prev;
    hb->flying.next->prev = hb->flying.prev->next = &hb->flying;
    list_init(&hb->next);
    return 0;
}

/* Fails every write of the next batch (its barrier could not be sent). */
static void batch_fail(struct hs_batch *hb, int rc)
{
    struct list_node *n, *tmp;
    LIST_FOREACH_SAFE(n, tmp, &hb->next)
    {
        struct replica *rp = LIST_ENTRY(n, struct replica, hs_batch);
        list_remove(n);
        rp->hs_syncing = false;
        rp->hs_queued = false;
        fail(rp, "hard_state", rc);
    }
}

/* hs, written, joins hb's next batch, which goes at once if no barrier of hb is in flight. */
static int batch_join(struct hs_batch *hb, struct replica *rp, const struct raft_hard_state *hs)
{
    rp->hs = *hs;
    rp->hs_syncing = true;
    list_push_back(&hb->next, &rp->hs_batch);
    if (hb->busy)
        return 0;
    int rc = barrier_go(hb);
    if (rc != 0) { /* only this write is in the batch: nothing was in flight */
        list_remove(&rp->hs_batch);
        rp->hs_syncing = false;
    }
    return rc;
}

/* Writes hs for the next barrier. Returns 0, 1 when this write cannot go that way (no barriers
 * on this filesystem, another filesystem's batch is forming, or the file needs its first
 * layout: the caller waits for a slot), or -errno. */
static int batch_store(struct replica *rp, const struct raft_hard_state *hs)
{
    batch_lists();
    int dfd = plog_dirfd(rp->log);
    struct stat st;
    if (!plog_fs_barrier_available(rp->log) || dfd < 0 || fstat(dfd, &st) != 0 ||
        (!list_empty(&hs_fs.next) && st.st_dev != hs_fs.dev))
        return 1;
    int fd = -1;
    int rc = raft_hard_state_write(dfd, hs, &fd);
    if (rc != 0)
        return rc;
    close(fd);
    hs_fs.dev = st.st_dev;
    return batch_join(&hs_fs, rp, hs);
}

/* The hard state of a log whose small state is in the node's store: put there, and made
 * durable by the store's next barrier (or at once, without a flusher). One write at a time,
 * as with the file: a newer state waits in hs_next until the sync returns. */
static int store_hard_state_kv(struct replica *rp, int64_t term, int32_t vote, int64_t commit,
                               bool *durable)
{
    *durable = false;
    if (rp->hs_syncing) {
        rp->hs_next = (struct raft_hard_state){.term = term, .vote = vote, .commit = commit};
        rp->hs_queued = true;
        return 0;
    }
    struct kvstore *kv = plog_kv(rp->log);
    struct raft_hard_state hs = hard_state_of(rp, term, vote, commit);
    uint8_t rec[RAFT_HARD_STATE_SIZE];
    raft_hard_state_encode(&hs, rec);
    /* a failed write of the store's buffer is its next sync's to repair: the value is put */
    int rc = kv_put(kv, plog_kv_dir(rp->log), RAFT_HARD_STATE_FILE, rec, sizeof(rec));
    if (rc == -ERR_INVALID)
        return rc;
    if (!plog_fs_barrier_available(rp->log)) {
        rc = kv_sync(kv);
        if (rc == 0) {
            rp->hs = hs;
            *durable = true;
        }
        return rc;
    }
    batch_lists();
    return batch_join(&hs_kv, rp, &hs);
}

/* A ready's hard state: written now and synced by the flusher, so that the groups of a whole
 * broker changing term at once (a restart: every sole voter campaigns) sync in parallel. One
 * sync at a time (hardstate.h): a state that comes while one is in flight waits in hs_next,
 * the newest replacing an older one (the core holds its replies until it hears of the state it
 * is in, and ignores reports of older ones); so does one that finds every slot taken
 * (invariant 6). Returns 0 with *durable set when the state is durable already (the first
 * store, or no flusher), 0 with it clear when a report follows from hard_state_synced, or
 * -errno. */
static int store_hard_state(struct replica *rp, int64_t term, int32_t vote, int64_t commit,
                            bool *durable)
{
    if (plog_kv(rp->log))
        return store_hard_state_kv(rp, term, vote, commit, durable);
    *durable = false;
    if (!rp->hs_syncing && !rp->hs_waiting && hs_in_flight >= HS_SYNCS_MAX) {
        struct raft_hard_state hs = hard_state_of(rp, term, vote, commit);
        int rc = batch_store(rp, &hs);
        if (rc <= 0)
            return rc;
    }
    if (rp->hs_syncing || rp->hs_waiting || hs_in_flight >= HS_SYNCS_MAX) {
        rp->hs_next = (struct raft_hard_state){.term = term, .vote = vote, .commit = commit};
        rp->hs_queued = true;
        if (!rp->hs_syncing && !rp->hs_waiting)
            hs_wait_push(rp);
        return 0;
    }
    struct raft_hard_state hs = hard_state_of(rp, term, vote, commit);
    int fd = -1;
    int rc = raft_hard_state_write(plog_dirfd(rp->log), &hs, &fd);
    if (rc == 1) {
        rc = raft_hard_state_store(plog_dirfd(rp->log), &hs);
        if (rc == 0) {
            rp->hs = hs;
            *durable = true;
        }
        return rc;
    }
    if (rc != 0)
        return rc;
    rp->hs = hs;
    rc = plog_sync_side_file(rp->log, fileref_new(fd), hard_state_synced, rp);
    if (rc == PLOG_SIDE_QUEUED) {
        rp->hs_syncing = true;
        hs_in_flight++;
        return 0;
    }
    *durable = rc == 0;
    return rc;
}

/* Stores the state that waited in hs_next, if it may go now. */
static void store_next(struct replica *rp)
{
    while (rp->hs_queued && !rp->hs_syncing && !rp->hs_waiting && !rp->failed) {
        rp->hs_queued = false;
        bool durable;
        struct raft_hard_state n = rp->hs_next;
        int rc = store_hard_state(rp, n.term, n.vote, n.commit, &durable);
        if (rc == -ENOSPC)
            nospace_warn(rp, "hard_state"); /* as in process(): never reported, nothing lost */
        else if (rc != 0)
            fail(rp, "hard_state", rc);
        else if (durable)
            raft_persisted_hard_state(rp->r, n.term, n.vote);
    }
}

/* Slots freed: the writes that waited for one go, oldest first. */
static void wake_waiters(void)
{
    while (hs_in_flight < HS_SYNCS_MAX && hs_wait_head) {
        struct replica *rp = hs_wait_head;
        hs_wait_remove(rp);
        store_next(rp);
        if (!rp->busy && !rp->ready_taken)
            process(rp);
    }
}

/* Reports a durable hard state to the core and stores the one that waited. */
static void hard_state_synced(struct plog *log, int rc, void *data)
{
    struct replica *rp = data;
    (void)log;
    CHECK(rp->hs_syncing && !rp->busy);
    rp->hs_syncing = false;
    hs_in_flight--;
    if (rc != 0)
        fail(rp, "hard_state", rc);
    if (rp->failed) {
        rp->hs_queued = false;
    } else {
        raft_persisted_hard_state(rp->r, rp->hs.term, rp->hs.vote);
        store_next(rp);
        process(rp);
        if (rp->opt.on_synced && !rp->failed)
            rp->opt.on_synced(rp, rp->opt.data);
    }
    wake_waiters();
}

/* A barrier returned: its batch is durable (or lost), and the next goes. */
static void barrier_done(int rc, void *data)
{
    struct hs_batch *hb = data;
    CHECK(hb->busy);
    /* from the head each time: a callback of process() may close other replicas of the batch */
    while (!list_empty(&hb->flying)) {
        struct list_node *n = hb->flying.next;
        struct replica *rp = LIST_ENTRY(n, struct replica, hs_batch);
        CHECK(rp->hs_syncing && !rp->busy);
        list_remove(n);
        rp->hs_syncing = false;
        if (rc != 0)
            fail(rp, "hard_state", rc);
        if (rp->failed) {
            rp->hs_queued = false;
            continue;
        }
        raft_persisted_hard_state(rp->r, rp->hs.term, rp->hs.vote);
        store_next(rp); /* joins the next batch, which goes below */
        process(rp);
        if (rp->opt.on_synced && !rp->failed)
            rp->opt.on_synced(rp, rp->opt.data);
    }
    hb->busy = false;
    if (!list_empty(&hb->next)) {
        int grc = barrier_go(hb);
        if (grc != 0)
            batch_fail(hb, grc);
    }
}

int replica_hard_state_syncs_in_flight(void)
{
    return hs_in_flight;
}

/* ---- visibility: the Kafka high watermark ---- */

static void raft_off_push(struct replica *rp, int64_t off)
{
    CHECK(rp->n_raft_offs == 0 || rp->raft_offs[rp->n_raft_offs - 1] < off);
    MEM_GROW(rp->raft_offs, rp->cap_raft_offs, rp->n_raft_offs + 1);
    rp->raft_offs[rp->n_raft_offs++] = off;
}

/* Forgets the Raft entries at and above from (a truncation or an install). */
static void raft_offs_truncate(struct replica *rp, int64_t from)
{
    while (rp->n_raft_offs > 0 && rp->raft_offs[rp->n_raft_offs - 1] >= from)
        rp->n_raft_offs--;
}

/* The high watermark for commit: commit + 1, less the run of Raft entries (NOOP, CONFIG) that
 * ends the committed log, if any; never below what it was, nor below the log start. Raft entries
 * carry no records and Fetch leaves them out, so a consumer could never read past a tail made of
 * them; with the high watermark before them it is at the end, with lag 0, and once data follows
 * them a fetch from the high watermark returns them together with that data. */
static int64_t visible_for(struct replica *rp, int64_t commit)
{
    int64_t v = commit + 1;
    size_t k = rp->n_raft_offs;
    while (k > 0 && rp->raft_offs[k - 1] >= v)
        k--;
    while (k > 0 && rp->raft_offs[k - 1] == v - 1) {
        v--;
        k--;
    }
    return MAX(MAX(v, rp->visible), plog_start_offset(rp->log));
}

/* Moves the high watermark to commit's (visible_for) and drops what lies below it. */
static void set_visible(struct replica *rp, int64_t commit)
{
    rp->visible = visible_for(rp, commit);
    size_t drop = 0;
    while (drop < rp->n_raft_offs && rp->raft_offs[drop] < rp->visible)
        drop++;
    if (drop > 0) {
        memmove(rp->raft_offs, rp->raft_offs + drop,
                (rp->n_raft_offs - drop) * sizeof(*rp->raft_offs));
        rp->n_raft_offs -= drop;
    }
    plog_set_high_watermark(rp->log, rp->visible);
}

static uint8_t *scratch(struct replica *rp, size_t len)
{
    MEM_GROW(rp->scratch, rp->scratch_cap, len);
    return rp->scratch;
}

/* The proposal copy payload points at, if it is one of ours (ours to rewrite in place). */
static uint8_t *own_prop(const struct replica *rp, const uint8_t *payload)
{
    if (rp->inplace && rp->inplace == payload)
        return rp->inplace;
    for (size_t i = rp->n_props; i-- > 0;)
        if (rp->props[i] == payload)
            return rp->props[i];
    return NULL;
}

static int append_entry(struct replica *rp, const struct raft_entry *e)
{
    int64_t leo = plog_end_offset(rp->log);
    if (e->first != leo) {
        log_error("replica_log_mismatch", "dir=%s first=%" PRId64 " log_end=%" PRId64,
                  plog_dir(rp->log), e->first, leo);
        CHECK(e->first == leo); /* the core and the log disagree: a bug */
    }
    uint8_t *b;
    size_t len;
    if (e->kind == RAFT_ENTRY_DATA) {
        /* plog_append rewrites base offset and epoch in place: a proposal copy of ours takes
         * them itself (it is then the bytes of the log, which fill_from_ready sends on);
         * another payload (a leader's message, borrowed) is copied first */
        len = e->len;
        b = own_prop(rp, e->payload);
        if (!b) {
            b = scratch(rp, len);
            memcpy(b, e->payload, len);
        }
    } else {
        if (e->kind == RAFT_ENTRY_CONFIG) {
            struct raft_conf c;
            CHECK(raft_conf_decode(&c, e->payload, e->len) == 0); /* the core decoded it */
            int rc = conflog_append(&rp->cl, plog_dirfd(rp->log), e->first, e->term, &c);
            if (rc != 0)
                return rc;
        }
        len = KBATCH_HEADER_SIZE;
        b = scratch(rp, len);
        kbatch_build_empty_control(b);
    }
    int64_t base = -1;
    int rc = plog_append(rp->log, b, len, (int32_t)e->term, time_wall_ms(), &base);
    if (rc != 0)
        return rc;
    CHECK(base == e->first && plog_end_offset(rp->log) == e->last + 1);
    if (e->kind != RAFT_ENTRY_DATA)
        raft_off_push(rp, e->first);
    return 0;
}

/* Records durably that the log start moves to index + 1 (the entry at index has term, and conf,
 * if not NULL, is in force there), keeping the current point too: see replication/logstart.h. Done
 * before the plog moves, so the file names the log start whether or not the move happens. */
static int record_log_start(struct replica *rp, int64_t index, int64_t term,
                            const struct raft_conf *conf)
{
    if (index < 0 || term < 1 || term > RAFT_TERM_MAX)
        return -ERR_CORRUPT;
    struct raft_log_start ls = {0};
    int64_t start = plog_start_offset(rp->log);
    if (start > 0 && start - 1 != index) {
        const struct raft_log_point *cur = log_start_point(rp, start - 1);
        ls.p[ls.n++] =
            cur ? *cur : (struct raft_log_point){.index = start - 1, .term = prev_term_of(rp)};
        if (ls.p[0].term < 1)
            ls.n = 0; /* an unknown term (a log started by an older version): nothing to keep */
    }
    ls.p[ls.n++] = (struct raft_log_point){.index = index, .term = term, .has_conf = conf != NULL};
    if (conf)
        ls.p[ls.n - 1].conf = *conf;
    int rc = raft_log_start_store(plog_dirfd(rp->log), &ls);
    if (rc == 0) {
        if (!rp->ls)
            rp->ls = mem_alloc(sizeof(*rp->ls));
        *rp->ls = ls;
    }
    return rc;
}

/* rd->install: the log restarts empty after install_index (contract 3). */
static int install(struct replica *rp, const struct raft_ready *rd)
{
    int64_t at = rd->install_index;
    char cbuf[96];
    log_info("replica_install",
             "dir=%s index=%" PRId64 " term=%" PRId64 " conf=%s old_log_start=%" PRId64
             " old_log_end=%" PRId64,
             plog_dir(rp->log), at, rd->install_term,
             raft_conf_format(&rd->install_conf, cbuf, sizeof(cbuf)), plog_start_offset(rp->log),
             plog_end_offset(rp->log));
    int rc = record_log_start(rp, at, rd->install_term, &rd->install_conf);
    if (rc == 0)
        rc = plog_reset(rp->log, at + 1);
    if (rc != 0)
        return rc;
    /* the old log's configurations are gone; the one at the install point is kept here too
     * (restore takes the last record below the log start) */
    rc = conflog_truncate(&rp->cl, plog_dirfd(rp->log), 0);
    if (rc == 0)
        rc = conflog_append(&rp->cl, plog_dirfd(rp->log), at, rd->install_term, &rd->install_conf);
    /* the empty log is durable at once: the next report_durable says so for `at` */
    rp->durable_reported = at - 1;
    rp->n_raft_offs = 0;
    rp->visible = MAX(rp->visible, at + 1);
    return rc;
}

static int apply_log_writes(struct replica *rp, const struct raft_ready *rd)
{
    int rc;
    if (rd->install) {
        rc = install(rp, rd);
        if (rc != 0)
            return rc;
    }
    if (rd->truncate_from >= 0) {
        int64_t leo = plog_end_offset(rp->log);
        rc = plog_truncate_suffix(rp->log, rd->truncate_from);
        if (rc != 0)
            return rc;
        CHECK(plog_end_offset(rp->log) == MIN(rd->truncate_from, leo)); /* it starts an entry */
        rp->durable_reported = MIN(rp->durable_reported, plog_end_offset(rp->log) - 1);
        raft_offs_truncate(rp, rd->truncate_from);
        rc = conflog_truncate(&rp->cl, plog_dirfd(rp->log), rd->truncate_from);
        if (rc != 0)
            return rc;
    }
    bool sync = rp->flush_wanted || !sole_leader(rp);
    for (size_t i = 0; i < rd->n_entries; i++) {
        rc = append_entry(rp, &rd->entries[i]);
        if (rc == -ENOSPC)
            rp->nospace_from = rd->entries[i].first;
        if (rc != 0)
            return rc;
        sync |= rd->entries[i].kind != RAFT_ENTRY_DATA;
    }
    /* A sole voter's entries that nobody waits to see durable (acks=0/1 writes) are synced by
     * the owner's flush policy (log.flush.interval.*, segment rolls), as a single node's
     * always were; everything else is synced at once. */
    if (rd->n_entries > 0 && sync) {
        plog_flush(rp->log);
        rp->flush_wanted = false;
    }
    return 0;
}

/* ---- messages out (contract 4) ---- */

/* Reads the whole batches of [from, to] (at most about msg_bytes_max) into msgbuf. Returns
 * the bytes read, or -errno / -ERR_* (the message is then dropped). */
static ssize_t read_range(struct replica *rp, int64_t from, int64_t to)
{
    size_t used = 0;
    int64_t off = from;
    while (off <= to && (used == 0 || used < rp->opt.msg_bytes_max)) {
        struct plog_read_result res;
        size_t budget = used < rp->opt.msg_bytes_max ? rp->opt.msg_bytes_max - used : 1;
        int rc = plog_read(rp->log, off, to + 1, budget, &res);
        if (rc != 0)
            return rc;
        if (res.len == 0)
            break;
        if (res.first_offset != off) { /* a gap: a Raft log has none */
            fileref_put(res.file);
            return -ERR_CORRUPT;
        }
        MEM_GROW(rp->msgbuf, rp->msgbuf_cap, used + res.len);
        ssize_t n = io_pread_full(res.file->fd, rp->msgbuf + used, res.len, res.pos);
        fileref_put(res.file);
        if (n < 0)
            return n;
        if ((size_t)n != res.len)
            return -ERR_CORRUPT;
        used += res.len;
        off = res.next_offset;
    }
    return (ssize_t)used;
}

/* Attaches the entries [m->index + 1, m->last] (a prefix of them when bounded) to m.
 * Returns false if the message must be dropped. */
static bool fill_append(struct replica *rp, struct raft_msg *m)
{
    m->entries = NULL;
    m->n_entries = 0;
    if (m->last <= m->index)
        return true;
    ssize_t got = read_range(rp, m->index + 1, m->last);
    if (got <= 0) {
        log_warn("replica_append_read_failed", "dir=%s from=%" PRId64 " error=\"%s\"",
                 plog_dir(rp->log), m->index + 1, err_str(got < 0 ? (int)got : -ERR_SHORT));
        return false;
    }
    size_t pos = 0, n = 0, n_conf = 0;
    int64_t expect = m->index + 1;
    while (pos < (size_t)got && n < RAFT_MSG_ENTRIES_MAX) {
        struct kbatch_header h;
        if ((size_t)got - pos < KBATCH_HEADER_SIZE)
            return false;
        kbatch_parse_header(rp->msgbuf + pos, &h);
        size_t size = kbatch_size(&h);
        if (h.batch_length < 0 || size > (size_t)got - pos || h.base_offset != expect ||
            h.last_offset_delta < 0 || kbatch_last_offset(&h) > m->last)
            return false;
        MEM_GROW(rp->ents, rp->ents_cap, n + 1);
        struct raft_entry *e = &rp->ents[n++];
        *e = (struct raft_entry){.first = h.base_offset,
                                 .last = kbatch_last_offset(&h),
                                 .term = h.partition_leader_epoch,
                                 .kind = RAFT_ENTRY_DATA,
                                 .payload = rp->msgbuf + pos,
                                 .len = size};
        if (kbatch_is_control(&h) && h.records_count == 0) {
            long k = conflog_find(&rp->cl, e->first);
            bool conf = k >= 0 && rp->cl.r[k].index == e->first && rp->cl.r[k].term == e->term;
            e->kind = conf ? RAFT_ENTRY_CONFIG : RAFT_ENTRY_NOOP;
            e->payload = NULL;
            e->len = 0;
            n_conf += conf;
        }
        expect = e->last + 1;
        pos += size;
    }
    /* CONFIG payloads: the raft_conf encodings, from the side file's records */
    MEM_GROW(rp->confbuf, rp->confbuf_cap, n_conf * RAFT_CONF_ENCODED_MAX + 1);
    uint8_t *cp = rp->confbuf;
    for (size_t i = 0; i < n; i++) {
        struct raft_entry *e = &rp->ents[i];
        if (e->kind != RAFT_ENTRY_CONFIG)
            continue;
        e->payload = cp;
        e->len = raft_conf_encode(&rp->cl.r[conflog_find(&rp->cl, e->first)].conf, cp);
        cp += e->len;
    }
    m->entries = rp->ents;
    m->n_entries = n;
    m->last = rp->ents[n - 1].last;
    return true;
}

/* Attaches a prefix of [m->index + 1, m->last] from this ready's own entries when they start
 * the range and are all proposals of ours, already written (append_entry gave them their
 * offsets and epoch in place): a leader sending what it has just proposed need not read it
 * back from its log once per follower. Returns false to fall back to fill_append. */
static bool fill_from_ready(struct replica *rp, const struct raft_ready *rd, struct raft_msg *m)
{
    size_t i = 0;
    while (i < rd->n_entries && rd->entries[i].first < m->index + 1)
        i++;
    if (m->last <= m->index || i == rd->n_entries || rd->entries[i].first != m->index + 1)
        return false;
    size_t n = 0, bytes = 0;
    for (size_t j = i; j < rd->n_entries && rd->entries[j].last <= m->last; j++) {
        const struct raft_entry *e = &rd->entries[j];
        if (e->kind != RAFT_ENTRY_DATA || !own_prop(rp, e->payload))
            return false;
        if (n == RAFT_MSG_ENTRIES_MAX || (n > 0 && bytes + e->len > rp->opt.msg_bytes_max))
            break;
        n++;
        bytes += e->len;
    }
    if (n == 0)
        return false;
    MEM_GROW(rp->ents, rp->ents_cap, n);
    memcpy(rp->ents, rd->entries + i, n * sizeof(*rp->ents));
    m->entries = rp->ents;
    m->n_entries = n;
    m->last = rp->ents[n - 1].last;
    return true;
}

static void send_msgs(struct replica *rp, const struct raft_ready *rd)
{
    for (size_t i = 0; i < rd->n_msgs; i++) {
        struct raft_msg *m = &rd->msgs[i];
        if (m->type == RAFT_MSG_APPEND && !fill_from_ready(rp, rd, m) && !fill_append(rp, m))
            continue;
        rp->opt.send(rp, m, rp->opt.data);
    }
}

/* ---- the ready loop ---- */

static void free_props(struct replica *rp, size_t n)
{
    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        mem_free(rp->props[i]);
    memmove(rp->props, rp->props + n, (rp->n_props - n) * sizeof(*rp->props));
    rp->n_props -= n;
}

static void process(struct replica *rp)
{
    if (rp->busy)
        return; /* the running loop picks the new work up */
    rp->busy = true;
    for (int guard = 0; !rp->failed; guard++) {
        CHECK(guard < REPLICA_PROCESS_MAX);
        report_durable(rp);
        if (!raft_has_ready(rp->r))
            break;
        struct raft_ready rd;
        size_t props_in = rp->n_props;
        raft_ready(rp->r, &rd);
        rp->ready_taken = true;
        int rc = 0;
        bool hs_written = false;
        if (rd.hard_state_changed) {
            rc = store_hard_state(rp, rd.hs_term, rd.hs_vote, rd.commit, &hs_written);
            if (rc == -ENOSPC) {
                /* never reported durable: the core holds its replies and its own vote, and
                 * campaigns again later; nothing is lost */
                nospace_warn(rp, "hard_state");
                rc = 0;
            } else if (rc != 0) {
                fail(rp, "hard_state", rc);
            }
        }
        rp->nospace_from = -1;
        if (rc == 0) {
            rc = apply_log_writes(rp, &rd);
            if (rc == -ENOSPC)
                nospace_warn(rp, "log_write"); /* raft_write_failed below */
            else if (rc != 0)
                fail(rp, "log_write", rc);
        }
        bool commit_moved = false;
        if (rc == 0 || rc == -ENOSPC) { /* what was written goes out; the rest never existed */
            send_msgs(rp, &rd);
            if (rd.commit > rp->commit) {
                rp->commit = rd.commit;
                set_visible(rp, rd.commit);
                commit_moved = true;
            }
        }
        raft_advance(rp->r, &rd);
        rp->ready_taken = false;
        free_props(rp, props_in);
        if (rp->nospace_from >= 0) {
            rp->nospace_min = MIN(rp->nospace_min, rp->nospace_from);
            if (raft_write_failed(rp->r, rp->nospace_from) != 0)
                fail(rp, "log_write", -ENOSPC); /* would cut committed entries */
        }
        if (rp->failed)
            break;
        if (hs_written)
            raft_persisted_hard_state(rp->r, rd.hs_term, rd.hs_vote);
        if (commit_moved && rp->opt.on_commit)
            rp->opt.on_commit(rp, rp->commit, rp->opt.data);
    }
    rp->busy = false;
    DCHECK((replica_check(rp), true));
}

/* ---- open / close ---- */

/* Drops side records the log no longer backs (invariant 3); rewrites the file if any went. */
static int reconcile_confs(struct replica *rp, bool torn)
{
    size_t kept = 0;
    int64_t start = plog_start_offset(rp->log);
    for (size_t i = 0; i < rp->cl.n; i++) {
        const struct conflog_rec *c = &rp->cl.r[i];
        if (c->index >= start && log_term_at(rp, c->index) != c->term) {
            log_info("raft_conf_dropped", "dir=%s index=%" PRId64 " term=%" PRId64,
                     plog_dir(rp->log), c->index, c->term);
            continue;
        }
        rp->cl.r[kept++] = *c;
    }
    bool changed = kept != rp->cl.n;
    rp->cl.n = kept;
    return changed || torn ? conflog_rewrite(&rp->cl, plog_dirfd(rp->log)) : 0;
}

/* Whether the batch at offset off is a Raft entry (a record-less control batch: NOOP or CONFIG).
 * *out false if no batch starts there. */
static int raft_entry_at(struct replica *rp, int64_t off, bool *out)
{
    *out = false;
    uint8_t hdr[KBATCH_HEADER_SIZE];
    ssize_t n = plog_read_head(rp->log, off, hdr, sizeof(hdr)); /* mostly what the open read */
    if (n < 0)
        return (int)n;
    if (n == (ssize_t)sizeof(hdr)) {
        struct kbatch_header h;
        kbatch_parse_header(hdr, &h);
        *out = kbatch_is_control(&h) && h.records_count == 0;
    }
    return 0;
}

/* Rebuilds raft_offs and visible at open: the Raft entries at or above the run that ends the
 * committed log, and above the commit. A NOOP is always the first entry of its term (a new
 * leader's), a CONFIG entry has a record in the side file: so only term starts (one header read
 * each) and side-file records need looking at, and only the few above the commit hint. */
static int restore_visibility(struct replica *rp)
{
    const struct plog *log = rp->log;
    int64_t start = plog_start_offset(log);
    size_t n_terms = plog_epoch_count(log);
    int64_t *cand = mem_calloc(n_terms + rp->cl.n + 1, sizeof(*cand));
    size_t n = 0;
    int rc = 0;
    /* candidates, descending: term starts and CONFIG entries from the top down to the first
     * offset at or below the commit that is not a Raft entry */
    size_t ti = n_terms, ci = rp->cl.n;
    int64_t run = rp->commit + 1; /* the committed tail's Raft run starts here */
    while (rc == 0) {
        int64_t t = -1, c = -1;
        if (ti > 0) {
            int32_t epoch;
            plog_epoch_at(log, ti - 1, &epoch, &t);
        }
        if (ci > 0)
            c = rp->cl.r[ci - 1].index;
        int64_t off = MAX(t, c);
        if (off < start)
            break;
        if (off <= rp->commit && off != run - 1)
            break; /* below the run whatever it is: no need to read it */
        bool raft = off == c;
        if (off == t)
            ti--;
        if (off == c)
            ci--;
        if (!raft)
            rc = raft_entry_at(rp, off, &raft);
        if (rc != 0)
            break;
        if (off <= rp->commit) {
            if (!raft || off != run - 1)
                break; /* below the run: nothing more to keep */
            run = off;
        }
        if (raft)
            cand[n++] = off;
    }
    if (rc == 0) {
        rp->n_raft_offs = 0;
        for (size_t i = n; i-- > 0;)
            raft_off_push(rp, cand[i]);
        rp->visible = MAX(run, start);
    }
    mem_free(cand);
    return rc;
}

static int restore(struct replica *rp, int64_t now_ms)
{
    struct plog *log = rp->log;
    int64_t start = plog_start_offset(log), last = plog_end_offset(log) - 1;
    size_t n_terms = plog_epoch_count(log);
    struct raft_term_start *terms = mem_calloc(n_terms + 1, sizeof(*terms));
    for (size_t i = 0; i < n_terms; i++) {
        int32_t epoch;
        plog_epoch_at(log, i, &epoch, &terms[i].first);
        terms[i].term = epoch;
    }
    struct raft_conf_at *confs = mem_calloc(rp->cl.n + 1, sizeof(*confs));
    size_t n_confs = 1;
    confs[0] = (struct raft_conf_at){.index = -1, .conf = rp->opt.bootstrap};
    for (size_t i = 0; i < rp->cl.n; i++) {
        const struct conflog_rec *c = &rp->cl.r[i];
        if (c->index < start)
            confs[0] = (struct raft_conf_at){.index = c->index, .conf = c->conf};
        else
            confs[n_confs++] = (struct raft_conf_at){.index = c->index, .conf = c->conf};
    }
    /* an install records the configuration at its point; the side file has it too, unless a
     * crash came between the two */
    const struct raft_log_point *pt = start > 0 ? log_start_point(rp, start - 1) : NULL;
    if (pt && pt->has_conf && pt->index >= confs[0].index)
        confs[0] = (struct raft_conf_at){.index = pt->index, .conf = pt->conf};
    int64_t commit = MAX(MIN(rp->hs.commit, last), start - 1);
    /* A sole voter (in the configuration in force, the core's test) is its own majority: every
     * durable entry of its log is committed (raft.c become_leader), and the open synced the whole
     * log. It never writes a commit hint, so without this each restart would start its high
     * watermark from nothing and restore_visibility would read a batch header at every term
     * start, a cost that grew with every restart. */
    const struct raft_conf *in_force = &confs[n_confs - 1].conf;
    if (in_force->n_old == 0 && in_force->n_voters == 1 && in_force->voters[0] == rp->opt.raft.id)
        commit = MAX(commit, MIN(last, plog_durable_offset(log) - 1));
    struct raft_restore st = {.term = rp->hs.term,
                              .vote = rp->hs.vote,
                              .log_start = start,
                              .log_last = last,
                              .prev_term = prev_term_of(rp),
                              .terms = terms,
                              .n_terms = n_terms,
                              .confs = confs,
                              .n_confs = n_confs,
                              .commit = commit};
    int rc = raft_new(&rp->opt.raft, &st, now_ms, &rp->r);
    mem_free(confs);
    mem_free(terms);
    if (rc != 0)
        return rc;
    rp->commit = commit;
    rc = restore_visibility(rp);
    if (rc != 0) {
        raft_free(rp->r);
        return rc;
    }
    plog_restore_high_watermark(log, rp->visible);
    rp->durable_reported = plog_durable_offset(log) - 1; /* open synced everything */
    log_debug("replica_opened",
              "dir=%s id=%" PRId32 " term=%" PRId64 " vote=%" PRId32 " log_start=%" PRId64
              " log_end=%" PRId64 " commit=%" PRId64 " confs=%zu",
              plog_dir(log), rp->opt.raft.id, rp->hs.term, rp->hs.vote, start, last + 1, commit,
              n_confs);
    return 0;
}

/* The hard state: the node's store's, else (no store, or a directory an older release wrote)
 * the file's. */
static int hard_state_load(struct replica *rp, int dfd)
{
    struct kvstore *kv = plog_kv(rp->log);
    const void *val;
    size_t len;
    if (kv && kv_peek(kv, plog_kv_dir(rp->log), RAFT_HARD_STATE_FILE, &val, &len) == 0)
        return raft_hard_state_decode(val, len, &rp->hs);
    return dfd < 0 ? dfd : raft_hard_state_load(dfd, &rp->hs);
}

int replica_open(struct plog *log, const struct replica_options *opt, int64_t now_ms,
                 struct replica **out)
{
    if (!opt->send || opt->msg_bytes_max == 0 || !raft_conf_valid(&opt->bootstrap))
        return -ERR_INVALID;
    if (plog_fenced(log))
        return -ERR_FENCED;
    /* which side files there are: the log's listing at its open tells, for the first replica
     * opened on it (a restart's); -1 when unknown */
    int has_ls = plog_listed_at_open(log, RAFT_LOG_START_FILE);
    int has_cl = plog_listed_at_open(log, RAFT_CONF_LOG_FILE);
    struct kvstore *kv = plog_kv(log);
    const void *hsv;
    size_t hsl;
    bool hs_in_kv = kv && kv_peek(kv, plog_kv_dir(log), RAFT_HARD_STATE_FILE, &hsv, &hsl) == 0;
    /* the directory stays the plog's (its open-file cache may close it between uses), and is
     * not even opened when there is no file to read */
    bool files = !hs_in_kv || has_ls != 0 || has_cl != 0;
    int dfd = files ? plog_dirfd(log) : -1;
    if (files && dfd < 0)
        return dfd;
    struct replica *rp = mem_calloc(1, sizeof(*rp));
    list_init(&rp->hs_batch);
    rp->log = log;
    rp->opt = *opt;
    rp->nospace_from = -1;
    rp->nospace_min = INT64_MAX;
    bool torn = false;
    int rc = hard_state_load(rp, dfd);
    if (rc != 0) {
        log_error("raft_hard_state_unreadable", "dir=%s error=\"%s\"", plog_dir(log), err_str(rc));
        goto out_free;
    }
    if (has_ls != 0) {
        rp->ls = mem_alloc(sizeof(*rp->ls));
        rc = raft_log_start_load(dfd, rp->ls);
        if (rc == 0 && rp->ls->n == 0) { /* no file after all */
            mem_free(rp->ls);
            rp->ls = NULL;
        }
    }
    if (rc != 0) {
        log_error("raft_log_start_unreadable", "dir=%s error=\"%s\"", plog_dir(log), err_str(rc));
        goto out_free;
    }
    rc = has_cl == 0 ? conflog_load_none(&rp->cl) : conflog_load(&rp->cl, dfd, &torn);
    if (rc == 0)
        rc = reconcile_confs(rp, torn);
    if (rc == 0)
        rc = restore(rp, now_ms);
    if (rc != 0)
        goto out_free_conflog;
    plog_forget_open_listing(log); /* after restore: it read the open's batch heads */
    plog_set_flush_cb(log, flush_done_cb, rp);
    *out = rp;
    process(rp);
    return 0;

out_free_conflog:
    conflog_free(&rp->cl);
out_free:
    plog_forget_open_listing(log);
    mem_free(rp->ls);
    mem_free(rp);
    return rc;
}

void replica_close(struct replica *rp)
{
    if (!rp)
        return;
    CHECK(!rp->busy);
    /* the commit hint restores the high watermark after a restart; a sole voter commits its
     * whole log again as soon as it leads, so it spares the sync (a clean stop of a single node
     * with many partitions) */
    const struct raft_conf *c = raft_conf(rp->r);
    bool sole = c->n_old == 0 && c->n_voters == 1 && c->voters[0] == raft_id(rp->r);
    if (!rp->failed && rp->commit > rp->hs.commit && !sole)
        (void)write_hard_state(rp, rp->hs.term, rp->hs.vote, rp->commit); /* syncs an in-flight
                                                                             write too */
    plog_set_flush_cb(rp->log, NULL, NULL);
    plog_side_cancel(rp->log);
    bool batched = list_linked(&rp->hs_batch);
    if (batched)
        list_remove(&rp->hs_batch); /* its barrier, if in flight, reports the others */
    bool freed = rp->hs_syncing && !batched;
    if (freed)
        hs_in_flight--;
    rp->hs_syncing = false;
    hs_wait_remove(rp);
    raft_free(rp->r);
    conflog_free(&rp->cl);
    free_props(rp, rp->n_props);
    mem_free(rp->props);
    mem_free(rp->strict);
    mem_free(rp->raft_offs);
    mem_free(rp->scratch);
    mem_free(rp->msgbuf);
    mem_free(rp->confbuf);
    mem_free(rp->ents);
    mem_free(rp->ls);
    mem_free(rp);
    if (freed)
        wake_waiters();
}

/* ---- inputs ---- */

void replica_tick(struct replica *rp, int64_t now_ms)
{
    DCHECK((replica_check(rp), true));
    CHECK(!rp->ready_taken);
    if (rp->failed)
        return;
    raft_tick(rp->r, now_ms);
    process(rp);
}

static bool data_batch_ok(const struct raft_entry *e)
{
    if (e->len < KBATCH_HEADER_SIZE || e->len > INT32_MAX || !e->payload)
        return false;
    struct kbatch_header h;
    kbatch_parse_header(e->payload, &h);
    return !kbatch_is_control(&h) && h.last_offset_delta == e->last - e->first &&
           kbatch_validate(e->payload, e->len, false, false, 0) == 0;
}

int replica_step(struct replica *rp, const struct raft_msg *m)
{
    DCHECK((replica_check(rp), true));
    CHECK(!rp->ready_taken);
    if (rp->failed)
        return -ERR_FENCED;
    if (m->type == RAFT_MSG_APPEND) {
        if (m->n_entries > RAFT_MSG_ENTRIES_MAX || (m->n_entries > 0 && !m->entries))
            return -ERR_INVALID;
        for (size_t i = 0; i < m->n_entries; i++) {
            const struct raft_entry *e = &m->entries[i];
            bool ok = e->first <= e->last;
            if (ok && e->kind == RAFT_ENTRY_DATA)
                ok = data_batch_ok(e);
            else if (ok && e->kind == RAFT_ENTRY_NOOP)
                ok = e->first == e->last && e->len == 0;
            else if (ok && e->kind == RAFT_ENTRY_CONFIG)
                ok = e->first == e->last;
            if (!ok)
                return -ERR_INVALID; /* the core checks the rest (ranges, terms, configs) */
        }
    }
    int rc = raft_step(rp->r, m);
    process(rp);
    return rc;
}

int replica_propose(struct replica *rp, uint8_t *batch, size_t len, int32_t record_count,
                    bool durable, int64_t *first, int64_t *last, int64_t *term)
{
    DCHECK((replica_check(rp), true));
    CHECK(!rp->ready_taken);
    if (rp->failed)
        return -ERR_FENCED;
    if (len < KBATCH_HEADER_SIZE || len > INT32_MAX || record_count < 1)
        return -ERR_INVALID;
    struct kbatch_header h;
    kbatch_parse_header(batch, &h);
    if (kbatch_size(&h) != len || h.batch_length < 0 || h.magic != KBATCH_MAGIC ||
        kbatch_is_control(&h) || h.last_offset_delta != record_count - 1)
        return -ERR_INVALID;
    /* The core keeps the payload pointer until the ready that writes it is advanced. Outside
     * process() that ready is written before this returns: the caller's bytes are appended in
     * place. From inside it (a proposal from on_commit) the ready may come after: a copy lives
     * until then. */
    bool now = !rp->busy;
    uint8_t *payload = now ? batch : mem_dup(batch, len);
    int64_t f, l;
    int rc = raft_propose(rp->r, record_count, payload, len, &f, &l, term);
    if (rc != 0) {
        if (!now)
            mem_free(payload);
        return rc;
    }
    if (first)
        *first = f;
    if (last)
        *last = l;
    if (durable) {
        MEM_GROW(rp->strict, rp->cap_strict, rp->n_strict + 1);
        rp->strict[rp->n_strict++] = (struct strict_span){f, l};
        rp->flush_wanted = true;
    }
    if (now) {
        rp->inplace = payload;
        rp->nospace_min = INT64_MAX;
        process(rp);
        rp->inplace = NULL;
        if (rp->nospace_min <= f)
            return -ENOSPC; /* not written: the disk is full (the leader stepped down) */
    } else {
        MEM_GROW(rp->props, rp->cap_props, rp->n_props + 1);
        rp->props[rp->n_props++] = payload;
    }
    return 0;
}

enum replica_proposal replica_proposal_state(const struct replica *rp, int64_t last, int64_t term)
{
    if (raft_commit(rp->r) < last)
        return REPLICA_PENDING;
    return raft_term_at(rp->r, last) == term ? REPLICA_COMMITTED : REPLICA_LOST;
}

int replica_propose_conf(struct replica *rp, const int32_t *voters, size_t n)
{
    CHECK(!rp->ready_taken);
    if (rp->failed)
        return -ERR_FENCED;
    int rc = raft_propose_conf(rp->r, voters, n);
    process(rp);
    return rc;
}

int replica_propose_members(struct replica *rp, const int32_t *voters, size_t n,
                            const int32_t *learners, size_t n_learners)
{
    CHECK(!rp->ready_taken);
    if (rp->failed)
        return -ERR_FENCED;
    int rc = raft_propose_members(rp->r, voters, n, learners, n_learners);
    process(rp);
    return rc;
}

int replica_campaign(struct replica *rp)
{
    CHECK(!rp->ready_taken);
    if (rp->failed)
        return -ERR_FENCED;
    int rc = raft_campaign(rp->r);
    process(rp);
    return rc;
}

int replica_transfer_leader(struct replica *rp, int32_t to)
{
    CHECK(!rp->ready_taken);
    if (rp->failed)
        return -ERR_FENCED;
    int rc = raft_transfer_leader(rp->r, to);
    process(rp);
    return rc;
}

int replica_compact(struct replica *rp, int64_t new_start)
{
    DCHECK((replica_check(rp), true));
    CHECK(!rp->ready_taken);
    if (rp->failed)
        return -ERR_FENCED;
    struct plog *log = rp->log;
    int64_t start = raft_log_start(rp->r);
    int64_t to = MIN(new_start, MIN(raft_commit(rp->r), raft_durable_index(rp->r)) + 1);
    if (to <= start)
        return 0;
    if (to < plog_end_offset(log)) {
        /* whole entries only: round down to the start of the batch holding `to` */
        struct plog_read_result res;
        int rc = plog_read(log, to, plog_end_offset(log), 1, &res);
        if (rc != 0)
            return rc;
        if (res.len > 0) {
            to = MIN(to, res.first_offset);
            fileref_put(res.file);
        }
        if (to <= start)
            return 0;
    }
    int64_t term = log_term_at(rp, to - 1);
    int rc = record_log_start(rp, to - 1, term, NULL);
    if (rc == 0)
        rc = plog_truncate_prefix(log, to);
    if (rc != 0) {
        log_warn("replica_compact_failed", "dir=%s log_start=%" PRId64 " error=\"%s\"",
                 plog_dir(log), to, err_str(rc));
        return rc;
    }
    CHECK(raft_compact(rp->r, to) == 0);
    set_visible(rp, rp->commit); /* not below the new log start */
    log_info("replica_compacted", "dir=%s log_start=%" PRId64 " prev_term=%" PRId64 " segments=%d",
             plog_dir(log), to, term, plog_segment_count(log));
    process(rp);
    DCHECK((replica_check(rp), true));
    return 0;
}

/* ---- status ---- */

bool replica_hard_state_syncing(const struct replica *rp)
{
    return rp->hs_syncing || rp->hs_waiting;
}

int replica_failed(const struct replica *rp)
{
    return rp->failed;
}

static void add_peer(const struct replica *rp, struct replica_status *st, int32_t id)
{
    if (id == raft_id(rp->r))
        return;
    for (size_t i = 0; i < st->n_peers; i++)
        if (st->peers[i] == id)
            return;
    st->peers[st->n_peers] = id;
    st->match[st->n_peers++] = raft_match_index(rp->r, id);
}

void replica_status(const struct replica *rp, struct replica_status *st)
{
    memset(st, 0, sizeof(*st));
    st->role = raft_role(rp->r);
    st->leader = raft_leader(rp->r);
    st->term = raft_term(rp->r);
    st->vote = raft_vote(rp->r);
    st->commit = raft_commit(rp->r);
    st->last = raft_last_index(rp->r);
    st->durable = rp->durable_reported;
    st->conf = *raft_conf(rp->r);
    for (size_t i = 0; i < st->conf.n_voters; i++)
        add_peer(rp, st, st->conf.voters[i]);
    for (size_t i = 0; i < st->conf.n_old; i++)
        add_peer(rp, st, st->conf.old[i]);
    for (size_t i = 0; i < st->conf.n_learners; i++)
        add_peer(rp, st, st->conf.learners[i]);
    st->failed = rp->failed;
}

const struct raft *replica_raft(const struct replica *rp)
{
    return rp->r;
}

struct plog *replica_log(const struct replica *rp)
{
    return rp->log;
}

int replica_discard(struct plog *log)
{
    plog_forget_open_listing(log); /* the side files change here */
    int dfd = open(plog_dir(log), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    static const char *const files[] = {RAFT_HARD_STATE_FILE, RAFT_CONF_LOG_FILE,
                                        RAFT_LOG_START_FILE};
    int rc = 0;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]) && rc == 0; i++)
        rc = io_unlink(dfd, files[i]);
    if (rc == 0)
        rc = io_fsync_dir(dfd);
    close(dfd);
    struct kvstore *kv = plog_kv(log);
    if (rc == 0 && kv) {
        rc = kv_del(kv, plog_kv_dir(log), RAFT_HARD_STATE_FILE);
        rc = rc == 0 ? kv_sync(kv) : rc;
    }
    return rc != 0 ? rc : plog_reset(log, 0);
}
