/* Idempotent producers in the broker (broker/producers.h): InitProducerId and the partition
 * producer state with its snapshot files.
 *
 * Owns, per partition: the table (broker/producer_state.h) and the sorted offsets of the
 * `<offset %020d>.snapshot` files in the partition directory (opened only while snapshots are
 * read or written: a partition costs no extra file descriptor). Per broker: the id allocator
 * and the expiry timer.
 *
 * Invariants:
 *   1. The table holds every tracked batch below the log's LEO (unless broken): it was loaded
 *      from a snapshot at some offset X <= LEO and every batch header in [max(X, log start),
 *      LEO) was replayed into it, and each append since was recorded.
 *   2. No snapshot file above LEO survives a rebuild, and its deletion is durable (directory
 *      fsync) before new batches can land at those offsets: a stale snapshot must never be
 *      loaded for a log that was rewritten below it.
 *   3. snaps[] lists exactly the snapshot files this module knows of, ascending; at most
 *      SNAPSHOTS_KEPT stay after a write.
 *   4. While pending (a restart's open left the table for its first use), the table is empty,
 *      no snapshot file is above open_leo, and no batch at or above open_leo is tracked
 *      (open_leo is the newest snapshot's offset, or the log start): the state is that
 *      snapshot, or none, which the first use reads (a tracked batch to judge or appended, a
 *      roll, a truncation, a reset, the accessors below). The open checks the headers after
 *      the snapshot (the open's window holds them: no read) and loads at once if one is
 *      tracked. A restart of many partitions reads no snapshot file then. While pending, the
 *      broker's producer-id floor (broker_producers_start) does not see the table: the ids it
 *      holds were granted by the controller (in the metadata log) or by the legacy block file.
 *
 * Snapshot writes at roll are not fsynced (the reactor must not wait on the disk for a
 * convenience file): after a power cut a snapshot may be missing or torn, which costs only a
 * longer scan (the CRC rejects a torn one; invariant 2 covers one that survived while the log
 * below it was lost). The closing snapshot is fsynced. */
#include "broker/producers.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/authz.h"
#include "broker/internal.h"
#include "broker/producer_ids.h"
#include "broker/producer_state.h"
#include "kafka/batch.h"
#include "kafka/errors.h"
#include "kafka/msg_producer.h"
#include "storage/catalog.h"
#include "storage/io.h"
#include "storage/plog.h"
#include "storage/segment.h"

#define SNAPSHOT_SUFFIX ".snapshot"
#define SNAPSHOT_NAME_MAX 40
#define EXPIRY_CHECK_MAX_MS 600000 /* Kafka's producer.id.expiration.check.interval.ms */
#define EXPIRY_CHECK_MIN_MS 1000

struct partition_producers {
    struct partition *p;
    struct pstate *table;
    int dirfd;      /* the partition directory while in use (dir_open), else -1 */
    int64_t *snaps; /* offsets of the snapshot files, ascending */
    size_t n_snaps;
    size_t cap_snaps;
    bool broken; /* the last rebuild failed: the table is empty and must not be trusted */
    bool pending;     /* invariant 4: not loaded yet */
    int64_t open_leo; /* while pending: the LEO the open found */
    struct producers_stats last; /* of the last rebuild */
};

struct broker_producers {
    struct broker *b;
    struct pid_allocator *ids;
    struct reactor_timer expiry_timer;
    int64_t expiry_interval_ms;
};

/* Invariant 3. */
__attribute__((unused)) static void producers_check(const struct partition_producers *pp)
{
    for (size_t i = 1; i < pp->n_snaps; i++)
        CHECK(pp->snaps[i - 1] < pp->snaps[i]);
}

/* ---- snapshot files ---- */

static void snap_name(char *buf, size_t cap, int64_t offset)
{
    segment_file_name(buf, cap, offset, SNAPSHOT_SUFFIX);
}

static bool parse_snap_name(const char *name, int64_t *offset)
{
    if (strlen(name) != 20 + strlen(SNAPSHOT_SUFFIX) || strcmp(name + 20, SNAPSHOT_SUFFIX) != 0)
        return false;
    return segment_name_offset(name, offset);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* snaps[] from the names of the partition directory. */
static void snapshots_from(struct partition_producers *pp, const struct io_dir_list *names)
{
    pp->n_snaps = 0;
    size_t pos = 0;
    for (const char *name; (name = io_dir_list_next(names, &pos)) != NULL;) {
        int64_t off;
        if (!parse_snap_name(name, &off))
            continue;
        MEM_GROW(pp->snaps, pp->cap_snaps, pp->n_snaps + 1);
        pp->snaps[pp->n_snaps++] = off;
    }
    if (pp->n_snaps > 1)
        qsort(pp->snaps, pp->n_snaps, sizeof(*pp->snaps), cmp_i64);
}

/* snaps[] from a listing of the open directory (pp->dirfd, fresh from dir_open). */
static int list_snapshots(struct partition_producers *pp)
{
    struct io_dir_list names = {0};
    int rc = io_dir_list_read(&names, pp->dirfd);
    if (rc == 0)
        snapshots_from(pp, &names);
    io_dir_list_free(&names);
    return rc;
}

static const char *dir_of(const struct partition_producers *pp)
{
    return plog_dir(pp->p->log);
}

static int dir_open(struct partition_producers *pp)
{
    CHECK(pp->dirfd < 0);
    pp->dirfd = io_open_noatime(AT_FDCWD, dir_of(pp), O_RDONLY | O_DIRECTORY);
    if (pp->dirfd >= 0)
        return 0;
    int rc = pp->dirfd;
    pp->dirfd = -1;
    log_warn("producer_snapshot_dir_unavailable", "dir=%s error=\"%s\"", dir_of(pp), err_str(rc));
    return rc;
}

static void dir_close(struct partition_producers *pp)
{
    if (pp->dirfd >= 0)
        close(pp->dirfd);
    pp->dirfd = -1;
}

static void remove_snapshot_at(struct partition_producers *pp, size_t i)
{
    char name[SNAPSHOT_NAME_MAX];
    snap_name(name, sizeof(name), pp->snaps[i]);
    int rc = io_unlink(pp->dirfd, name);
    if (rc != 0)
        log_warn("producer_snapshot_unlink_failed", "dir=%s file=%s error=\"%s\"", dir_of(pp), name,
                 err_str(rc));
    memmove(pp->snaps + i, pp->snaps + i + 1, (pp->n_snaps - i - 1) * sizeof(*pp->snaps));
    pp->n_snaps--;
}

/* Invariant 2: deletes the snapshots above leo, durably. */
static int drop_snapshots_above(struct partition_producers *pp, int64_t leo)
{
    bool dropped = false;
    while (pp->n_snaps > 0 && pp->snaps[pp->n_snaps - 1] > leo) {
        remove_snapshot_at(pp, pp->n_snaps - 1);
        dropped = true;
    }
    return dropped ? io_fsync_dir(pp->dirfd) : 0;
}

#define SNAPSHOT_SMALL_READ 4096

/* A snapshot too large for load_snapshot's first read, whole into a mem_alloc'd *buf. */
static int read_big_snapshot(int dirfd, const char *name, uint8_t **buf, size_t *len)
{
    int fd = io_open_noatime(dirfd, name, O_RDONLY);
    if (fd < 0)
        return fd;
    struct stat st;
    size_t max = PSTATE_HEADER_BYTES + (size_t)PSTATE_SNAPSHOT_MAX_ENTRIES * PSTATE_ENTRY_BYTES + 4;
    int rc = fstat(fd, &st) != 0 ? -errno : 0;
    if (rc == 0 && (st.st_size < 0 || (uint64_t)st.st_size > max))
        rc = -ERR_CORRUPT;
    if (rc == 0) {
        *len = (size_t)st.st_size;
        *buf = mem_alloc(*len ? *len : 1);
        ssize_t got = io_pread_full(fd, *buf, *len, 0);
        rc = got < 0 ? (int)got : (size_t)got != *len ? -ERR_CORRUPT : 0;
    }
    close(fd);
    return rc;
}

static int load_snapshot(struct partition_producers *pp, int64_t offset, int64_t now_ms)
{
    char name[SNAPSHOT_NAME_MAX];
    snap_name(name, sizeof(name), offset);
    /* most snapshots are small: one read into the stack, without asking the size first */
    uint8_t small[SNAPSHOT_SMALL_READ];
    uint8_t *buf = small;
    ssize_t got = io_read_small_file(pp->dirfd, name, small, sizeof(small));
    size_t len = got < 0 ? 0 : (size_t)got;
    int rc = got == -ERR_TOO_LARGE ? read_big_snapshot(pp->dirfd, name, &buf, &len)
                                   : got < 0 ? (int)got : 0;
    int64_t snap_offset = -1;
    if (rc == 0)
        rc = pstate_decode(pp->table, buf, len, now_ms, &snap_offset);
    if (rc == 0 && snap_offset != offset) {
        pstate_clear(pp->table);
        rc = -ERR_CORRUPT; /* a file renamed by hand, or not ours */
    }
    if (buf != small)
        mem_free(buf);
    return rc;
}

/* Writes the table as the snapshot at offset; keeps the newest SNAPSHOTS_KEPT. */
static void write_snapshot(struct partition_producers *pp, int64_t offset, bool sync)
{
    char name[SNAPSHOT_NAME_MAX];
    snap_name(name, sizeof(name), offset);
    size_t len;
    uint8_t *buf = pstate_encode(pp->table, offset, time_wall_ms(), &len);
    int rc = io_write_file_atomic(pp->dirfd, name, buf, len, sync);
    mem_free(buf);
    if (rc != 0) {
        log_warn("producer_snapshot_write_failed", "dir=%s file=%s error=\"%s\"", dir_of(pp), name,
                 err_str(rc));
        return;
    }
    size_t i = pp->n_snaps;
    while (i > 0 && pp->snaps[i - 1] > offset)
        i--;
    if (i == 0 || pp->snaps[i - 1] != offset) {
        MEM_GROW(pp->snaps, pp->cap_snaps, pp->n_snaps + 1);
        memmove(pp->snaps + i + 1, pp->snaps + i, (pp->n_snaps - i) * sizeof(*pp->snaps));
        pp->snaps[i] = offset;
        pp->n_snaps++;
    }
    while (pp->n_snaps > SNAPSHOTS_KEPT)
        remove_snapshot_at(pp, 0);
    DCHECK((producers_check(pp), true));
    log_debug("producer_snapshot_written", "dir=%s offset=%" PRId64 " producers=%zu bytes=%zu",
              dir_of(pp), offset, pstate_count(pp->table), len);
}

/* ---- rebuilding from the log ---- */

struct replay {
    struct pstate *table;
    int64_t now_ms;
    int64_t batches; /* tracked batches replayed */
    int64_t until;   /* the scan stops at the first batch at or above this */
};

#define REPLAY_DONE 1 /* replay_header's "stop here", not an error */

/* Whether the table records a batch with this header: batches written before the broker
 * checked producers may carry anything. */
static bool tracked(const struct kbatch_header *h)
{
    return pstate_tracks(h) && h->producer_epoch >= 0 && h->base_sequence >= 0;
}

static int replay_header(const uint8_t *hdr, int64_t size, void *data)
{
    struct replay *r = data;
    struct kbatch_header h;
    kbatch_parse_header(hdr, &h);
    if (h.base_offset >= r->until)
        return REPLAY_DONE;
    if (!tracked(&h))
        return 0;
    struct pstate_batch b;
    pstate_batch_of(&h, h.base_offset, &b);
    pstate_update(r->table, h.producer_id, h.producer_epoch, &b, r->now_ms);
    r->batches++;
    return 0;
}

/* Invariant 1, from scratch: newest valid snapshot at or below LEO, then the log after it (up
 * to open_leo while pending: invariant 4 says nothing at or above it is tracked, and a
 * truncation since, which rebuilds at once, leaves that so). */
static int rebuild(struct partition_producers *pp)
{
    struct plog *log = pp->p->log;
    int64_t t0 = time_mono_ms(), now = time_wall_ms();
    int64_t leo = plog_end_offset(log);
    int64_t until = pp->pending ? MIN(pp->open_leo, leo) : leo;
    int rc = 0;
    pstate_clear(pp->table);
    pp->pending = false;
    pp->broken = true;
    /* at a restart the log's own listing tells which snapshots there are: a partition without
     * any (most) needs its directory for nothing */
    const struct io_dir_list *names = plog_open_names(log);
    if (names)
        snapshots_from(pp, names);
    /* with the open's listing, the open has the directory: its descriptor serves the snapshot
     * files below (plog_dirfd: valid until the log's files are used again, by the scan) */
    bool borrowed = false;
    if (names && pp->n_snaps > 0) {
        pp->dirfd = plog_dirfd(log);
        borrowed = pp->dirfd >= 0;
        if (!borrowed)
            pp->dirfd = -1;
    }
    if (!borrowed && (!names || pp->n_snaps > 0))
        rc = dir_open(pp);
    if (rc == 0 && !names)
        rc = list_snapshots(pp);
    if (rc == 0)
        rc = drop_snapshots_above(pp, leo);
    int64_t from = -1;
    int invalid = 0;
    while (rc == 0 && pp->n_snaps > 0) {
        int64_t off = pp->snaps[pp->n_snaps - 1];
        int lrc = load_snapshot(pp, off, now);
        if (lrc == 0) {
            from = off;
            break;
        }
        log_warn("producer_snapshot_invalid", "dir=%s offset=%" PRId64 " error=\"%s\" action=%s",
                 dir_of(pp), off, err_str(lrc), pp->n_snaps > 1 ? "use_previous" : "scan_log");
        remove_snapshot_at(pp, pp->n_snaps - 1);
        invalid++;
    }
    if (borrowed)
        pp->dirfd = -1;
    else
        dir_close(pp);
    int64_t snap = from;
    from = MAX(from, plog_start_offset(log));
    struct replay r = {pp->table, now, 0, until};
    if (rc == 0 && from < until)
        rc = plog_scan_headers(log, from, replay_header, &r);
    if (rc == REPLAY_DONE)
        rc = 0;
    if (rc != 0) {
        pstate_clear(pp->table);
        log_error("producer_state_rebuild_failed",
                  "dir=%s error=\"%s\" action=refuse_idempotent_produce", dir_of(pp), err_str(rc));
        return rc;
    }
    pp->broken = false;
    pp->last = (struct producers_stats){snap, from, r.batches, invalid, 0, false};
    /* a line where there were producers' batches to replay or snapshots to drop: not for each
     * partition of a restart whose tail held none */
    if (r.batches > 0 || invalid > 0 || from < until)
        log_emit(r.batches > 0 || invalid > 0 ? LOG_INFO : LOG_DEBUG, "producer_state_loaded",
                 "dir=%s snapshot_offset=%" PRId64 " scanned_from=%" PRId64 " scanned_to=%" PRId64
                 " log_end=%" PRId64 " batches_replayed=%" PRId64 " producers=%zu"
                 " invalid_snapshots=%d ms=%" PRId64,
                 dir_of(pp), snap, from, until, leo, r.batches, pstate_count(pp->table), invalid,
                 time_mono_ms() - t0);
    return 0;
}

/* Invariant 4: the table as the first use needs it. 0, or the rebuild's error (the state is
 * then broken, as after any failed rebuild). */
static int load(struct partition_producers *pp)
{
    return pp->pending ? rebuild(pp) : 0;
}

static int find_tracked(const uint8_t *hdr, int64_t size, void *data)
{
    (void)size;
    (void)data;
    struct kbatch_header h;
    kbatch_parse_header(hdr, &h);
    return tracked(&h) ? REPLAY_DONE : 0;
}

/* At a restart (the open's listing at hand) the load waits for the table's first use
 * (invariant 4) unless a snapshot above LEO must go first (invariant 2: a power cut lost the
 * log's tail below it) or a tracked batch follows the newest snapshot. */
static void open_state(struct partition_producers *pp)
{
    struct plog *log = pp->p->log;
    const struct io_dir_list *names = plog_open_names(log);
    if (!names) {
        (void)rebuild(pp);
        return;
    }
    int64_t leo = plog_end_offset(log);
    snapshots_from(pp, names);
    int64_t snap = pp->n_snaps > 0 ? pp->snaps[pp->n_snaps - 1] : -1;
    int64_t from = MAX(snap, plog_start_offset(log));
    if (snap > leo || (from < leo && plog_scan_headers(log, from, find_tracked, NULL) != 0)) {
        (void)rebuild(pp); /* a tracked batch (REPLAY_DONE), or an error rebuild meets too */
        return;
    }
    pp->pending = true;
    pp->open_leo = from;
    pp->broken = false;
}

/* ---- plog hooks ---- */

static void on_rolled(struct plog *log, int64_t offset, void *data)
{
    struct partition_producers *pp = data;
    (void)load(pp); /* the snapshot must describe the log below offset */
    if (!pp->broken && dir_open(pp) == 0) {
        write_snapshot(pp, offset, false);
        dir_close(pp);
    }
}

/* Every batch the log takes, a client's at the leader or one a Raft follower copies: the table
 * (and the snapshots written from it at rolls) then describes the whole log on every replica,
 * so a replica that becomes leader has it already. */
static void on_appended(struct plog *log, const uint8_t *batch, size_t len, void *data)
{
    struct partition_producers *pp = data;
    (void)log;
    (void)len;
    if (pp->pending) {
        struct kbatch_header h;
        kbatch_parse_header(batch, &h);
        if (tracked(&h))
            (void)rebuild(pp); /* the snapshot; this batch after it */
        if (pp->pending || pp->broken)
            return; /* nothing to record yet (invariant 4), or nowhere to record it */
    }
    struct replay r = {pp->table, time_wall_ms(), 0, INT64_MAX};
    (void)replay_header(batch, 0, &r);
}

static void on_truncated(struct plog *log, int64_t leo, void *data)
{
    (void)rebuild(data);
}

/* The log restarted empty (a Raft install): no snapshot describes it any more. */
static void on_reset(struct plog *log, int64_t offset, void *data)
{
    struct partition_producers *pp = data;
    (void)log;
    (void)offset;
    if (dir_open(pp) == 0) {
        if (list_snapshots(pp) == 0 && pp->n_snaps > 0) {
            while (pp->n_snaps > 0)
                remove_snapshot_at(pp, pp->n_snaps - 1);
            (void)io_fsync_dir(pp->dirfd);
        }
        dir_close(pp);
    }
    (void)rebuild(pp);
}

/* ---- partition lifecycle ---- */

static struct pstate_limits limits_of(const struct broker_config *cfg)
{
    return (struct pstate_limits){cfg->producer_state_max_producers,
                                  cfg->producer_id_expiration_ms};
}

void partition_producers_open(struct broker *b, struct partition *p)
{
    struct partition_producers *pp = mem_calloc(1, sizeof(*pp));
    struct pstate_limits lim = limits_of(b->cfg);
    pp->p = p;
    pp->table = pstate_new(&lim);
    pp->dirfd = -1;
    p->producers = pp;
    open_state(pp);
    plog_set_hooks(p->log, &(struct plog_hooks){.rolled = on_rolled,
                                                .truncated = on_truncated,
                                                .data = pp,
                                                .reset = on_reset,
                                                .appended = on_appended});
}

void partition_producers_close(struct partition *p, bool destroy, bool sync)
{
    struct partition_producers *pp = p->producers;
    if (!pp)
        return;
    plog_set_hooks(p->log, NULL);
    int64_t leo = plog_end_offset(p->log);
    bool current = pp->n_snaps > 0 && pp->snaps[pp->n_snaps - 1] == leo;
    /* a pending table writes nothing: its snapshot and the untracked batches after it are the
     * state the next open finds (invariant 4), at most a segment of them (a roll loads) */
    if (!destroy && !pp->broken && !pp->pending && !current && !plog_fenced(p->log) &&
        dir_open(pp) == 0) {
        write_snapshot(pp, leo, sync);
        dir_close(pp);
    }
    mem_free(pp->snaps);
    pstate_free(pp->table);
    mem_free(pp);
    p->producers = NULL;
}

struct pstate *partition_producers_table(struct partition *p)
{
    (void)load(p->producers);
    return p->producers->table;
}

bool partition_producers_pending(const struct partition *p)
{
    return p->producers->pending;
}

void partition_producers_stats(struct partition *p, struct producers_stats *out)
{
    struct partition_producers *pp = p->producers;
    (void)load(pp);
    *out = pp->last;
    out->snapshots = (int)pp->n_snaps;
    out->broken = pp->broken;
}

/* ---- the produce path ---- */

int16_t producers_before_append(struct partition *p, const struct kbatch_header *h, int64_t now_ms,
                                struct produce_resp_partition *out, bool *duplicate)
{
    *duplicate = false;
    if (!pstate_tracks(h))
        return KERR_NONE;
    if (h->producer_epoch < 0 || h->base_sequence < 0)
        return KERR_INVALID_RECORD; /* as Kafka's LogValidator: a producer id needs both */
    struct partition_producers *pp = p->producers;
    if ((pp->pending || pp->broken) && rebuild(pp) != 0)
        return KERR_KAFKA_STORAGE_ERROR;
    struct pstate_batch dup;
    int32_t last_seq = pstate_last_seq(h->base_sequence, h->last_offset_delta);
    enum pstate_verdict v = pstate_check(pp->table, h->producer_id, h->producer_epoch,
                                         h->base_sequence, last_seq, now_ms, &dup);
    switch (v) {
    case PSTATE_APPEND:
        return KERR_NONE;
    case PSTATE_DUPLICATE:
        *duplicate = true;
        out->base_offset = dup.first_offset;
        out->log_append_time_ms = p->topic->cfg.log_append_time ? dup.timestamp : -1;
        out->log_start_offset = plog_start_offset(p->log);
        log_debug("produce_duplicate",
                  "topic=%s partition=%d producer_id=%" PRId64 " epoch=%d seq=%d..%d "
                  "offset=%" PRId64,
                  p->topic->name, p->index, h->producer_id, h->producer_epoch, h->base_sequence,
                  last_seq, dup.first_offset);
        return KERR_NONE;
    case PSTATE_OUT_OF_ORDER:
    case PSTATE_STALE_EPOCH:
        break;
    }
    int16_t cur_epoch = -1;
    struct pstate_batch kept[PSTATE_BATCHES];
    int n = 0;
    pstate_get(pp->table, h->producer_id, &cur_epoch, kept, &n, NULL);
    log_info("produce_rejected",
             "topic=%s partition=%d producer_id=%" PRId64 " epoch=%d seq=%d..%d reason=%s "
             "current_epoch=%d last_seq=%d",
             p->topic->name, p->index, h->producer_id, h->producer_epoch, h->base_sequence,
             last_seq, v == PSTATE_STALE_EPOCH ? "stale_epoch" : "out_of_order_sequence", cur_epoch,
             n > 0 ? kept[n - 1].last_seq : -1);
    return v == PSTATE_STALE_EPOCH ? KERR_INVALID_PRODUCER_EPOCH
                                   : KERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
}


/* ---- broker level: ids and expiry ---- */

static void expiry_tick(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct broker_producers *bp = data;
    int64_t now = time_wall_ms();
    int expired = 0;
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&bp->b->topics, &it, &k, &v)) {
        struct topic *tp = v;
        for (int32_t i = 0; i < tp->n_parts; i++)
            if (tp->parts[i]->producers)
                expired += pstate_expire(tp->parts[i]->producers->table, now);
    }
    if (expired > 0)
        log_info("producers_expired", "count=%d", expired);
    reactor_timer_start(r, t, bp->expiry_interval_ms);
}

void broker_producers_prefetch(struct broker *b)
{
    if (b->producers)
        pid_allocator_prefetch(b->producers->ids);
}

int broker_producers_start(struct broker *b, char *err, size_t errcap)
{
    int64_t floor = 0;
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&b->topics, &it, &k, &v)) {
        struct topic *tp = v;
        for (int32_t i = 0; i < tp->n_parts; i++)
            if (tp->parts[i]->producers)
                floor = MAX(floor, pstate_max_pid(tp->parts[i]->producers->table) + 1);
    }
    /* A data directory a single-node release wrote has its block file: no id below its next
     * block start may come again (the local source reads it as it always did). */
    struct pid_source *legacy;
    int rc = pid_local_source_open(catalog_dir(b->cat), floor, &legacy, err, errcap);
    if (rc != 0)
        return rc;
    floor = legacy->issued_end(legacy);
    legacy->destroy(legacy);
    struct pid_source *src = cluster_pid_source_new(b, floor); /* blocks from the controller */
    struct broker_producers *bp = mem_calloc(1, sizeof(*bp));
    bp->b = b;
    bp->ids = pid_allocator_new(src);
    /* lookups ignore expired producers at once: the sweep only frees their memory */
    bp->expiry_interval_ms =
        MAX(MIN(b->cfg->producer_id_expiration_ms, EXPIRY_CHECK_MAX_MS), EXPIRY_CHECK_MIN_MS);
    reactor_timer_init(&bp->expiry_timer, expiry_tick, bp);
    reactor_timer_start(b->r, &bp->expiry_timer, bp->expiry_interval_ms);
    b->producers = bp;
    return 0;
}

void broker_producers_stop(struct broker *b)
{
    struct broker_producers *bp = b->producers;
    if (!bp)
        return;
    reactor_timer_stop(b->r, &bp->expiry_timer);
    pid_allocator_free(bp->ids);
    mem_free(bp);
    b->producers = NULL;
}

/* ---- InitProducerId ---- */

/* Kafka answers a null transactional id with a fresh id at epoch 0 (the producer id and epoch
 * in the request are ignored). We do that too, except that a v3+ re-init with an id we handed
 * out and its current epoch bumps the epoch (KIP-360), keeping the id, unless the epoch is
 * exhausted (>= INT16_MAX - 1: a fresh id, as Kafka rotates). Without a transaction coordinator
 * on this broker, a transactional id is NOT_COORDINATOR (FindCoordinator for transactions
 * answers COORDINATOR_NOT_AVAILABLE, so clients never get this far); an empty one is
 * INVALID_REQUEST, as Kafka's coordinator says. */
static int16_t init_producer_id(struct broker *b, const struct init_producer_id_req *q,
                                int64_t *pid, int16_t *epoch)
{
    if (q->transactional_id.len == 0)
        return KERR_INVALID_REQUEST;
    if (q->transactional_id.len > 0)
        return KERR_NOT_COORDINATOR;
    if ((q->producer_id == -1) != (q->producer_epoch == -1))
        return KERR_INVALID_REQUEST;
    struct broker_producers *bp = b->producers;
    if (q->producer_id >= 0 && q->producer_epoch >= 0 && q->producer_epoch < INT16_MAX - 1 &&
        pid_allocator_issued(bp->ids, q->producer_id)) {
        *pid = q->producer_id;
        *epoch = (int16_t)(q->producer_epoch + 1);
        return KERR_NONE;
    }
    int rc = pid_allocator_next(bp->ids, pid);
    if (rc != 0) {
        log_warn("producer_id_unavailable", "error=\"%s\"", err_str(rc));
        return KERR_COORDINATOR_LOAD_IN_PROGRESS; /* retriable for every client */
    }
    *epoch = 0;
    return KERR_NONE;
}

int handle_init_producer_id(struct request *req)
{
    struct init_producer_id_req q;
    if (kmsg_decode_init_producer_id(&req->body, req->hdr.api_version, req->arena, &q) != 0)
        return -ERR_CORRUPT;
    struct init_producer_id_resp resp = {.producer_id = -1, .producer_epoch = -1};
    /* Kafka's checks: WRITE on a transactional id; without one IDEMPOTENT_WRITE on the
     * cluster, or WRITE on some topic */
    if (q.transactional_id.len > 0)
        resp.error_code =
            authz_allows(req, ACL_OP_WRITE, ACL_RESOURCE_TRANSACTIONAL_ID, q.transactional_id)
                ? KERR_NONE
                : KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
    else if (q.transactional_id.len < 0 && authz_on(req->b) &&
             !authz_allows_quiet(req, ACL_OP_IDEMPOTENT_WRITE, ACL_RESOURCE_CLUSTER,
                                 kstr_c(ACL_CLUSTER_NAME)) &&
             !authz_allows_some_topic(req, ACL_OP_WRITE))
        resp.error_code = KERR_CLUSTER_AUTHORIZATION_FAILED;
    if (resp.error_code == KERR_NONE)
        resp.error_code = init_producer_id(req->b, &q, &resp.producer_id, &resp.producer_epoch);
    if (resp.error_code != KERR_NONE) {
        resp.producer_id = -1;
        resp.producer_epoch = -1;
    }
    log_debug("init_producer_id",
              "peer=%s producer_id=%" PRId64 " epoch=%d error=%d requested_id=%" PRId64
              " requested_epoch=%d",
              conn_peer(req->conn), resp.producer_id, resp.producer_epoch, resp.error_code,
              q.producer_id, q.producer_epoch);
    struct response r;
    response_begin(&r, &req->hdr);
    kmsg_encode_init_producer_id(&r.w, req->hdr.api_version, &resp);
    response_send(&r, conn_slot_reserve(req->conn));
    return 0;
}
