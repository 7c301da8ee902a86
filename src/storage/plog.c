/* The partition log: an ordered set of segments plus the positions and checkpoints that make
 * it a Raft log (storage/plog.h).
 *
 * Owns: the segment array (oldest first, the last one active), the partition directory fd,
 * the leader-epoch cache, the read-position hints, and one flush_req for the flusher.
 *
 * Invariants (plog_check):
 *   1. At least one segment; bases strictly increase; every segment but the last is sealed.
 *   2. segs[0]->base <= log_start <= hw <= leo = last segment's end; durable <= leo.
 *   3. size_bytes is the sum of segment sizes.
 *   4. Dirty segments (written since last handed to a sync) form a suffix of the array.
 *   5. Every read hint names a live segment and a batch start in it (hints are dropped whenever
 *      segments are truncated or deleted).
 *   6. Once fenced, never unfenced; no write reaches a segment file after fencing.
 *   7. The recovery point on disk never exceeds what fdatasync has covered (it is lowered and
 *      synced before any truncated range can be rewritten).
 *   8. Every sealed segment ends where the next begins (compaction may leave a gap after its
 *      last batch: the gap belongs to it).
 *   9. At most one segment is `swapping` (swap_pending), and only while a clean job is in
 *      flight (clean_job); it is neither deleted nor has index files written meanwhile.
 *  10. The recovery point on disk never exceeds the start of an epoch missing from the durable
 *      leader-epoch checkpoint: recovery trusts the checkpoint below the recovery point's
 *      segment and derives the epochs from the batches from there on.
 *
 * Leader-epoch checkpoint: the first append of a new epoch only changes memory. Without a
 * flusher the next sync stores it. With one, it is stored only once the recovery point is due
 * to pass the new epoch (flush_done then asks for a sync that carries it: the flusher stores it
 * after the data, off the reactor, at most once per PLOG_RP_INTERVAL_MS), so a burst of new
 * leaders (thousands of partitions created or started at once) costs the flusher nothing more;
 * until it completes the recovery point stays below the new epoch. Stores
 * on the reactor (truncation, raised epochs, close) first quiesce the flusher's request.
 *
 * Small state in the node's store: with cfg.kv (storage/kvstore.h) the recovery point and the
 * leader-epoch checkpoint are values in the store under the directory's base name instead of
 * files (read from the files only when the store has none: a directory an older release wrote).
 * The store keeps the order of puts across a crash, so the checkpoint, put before a recovery
 * point that passes its epochs, needs no sync of its own (invariant 10), and the flusher stores
 * no checkpoint; a "synced" write is a put followed by kv_sync. A directory made anew purges
 * the store's values under its name first, durably (an old incarnation's: plog_destroy drops
 * them unsynced).
 *
 * Recovery point: `recovery-point` holds an offset below which every segment, its index files
 * and the directory entries were fdatasync'ed. It is a fixed-size record with a CRC, rewritten
 * in place by one pwrite (no temp file or rename: those cost the reactor most of its time when
 * thousands of partitions flush at once): without fsync after a successful flush at most every
 * PLOG_RP_INTERVAL_MS (a stale value only costs scanning, a torn one fails its CRC and costs a
 * full validation), likewise when raised after recovery, and with fdatasync at close and when
 * lowered. Older releases' plain decimal files are read too. An unclean open validates from the
 * segment holding it. A clean open additionally requires it to equal the LEO found by the tail
 * check, so a log whose close could not sync (or that was fenced) is validated even when the broker
 * says "clean".
 *
 * A restart's open comes in two halves (plog_open_unsynced, then plog_open_finish_many or, for
 * plog_open, finish_open): in between (`opening`) the log is read only, no flusher is attached,
 * durable stays below what recovery kept and the recovery point on disk is not moved; the
 * finish makes it all durable (one syncfs for many logs, or the log's own fdatasyncs) before it
 * raises the recovery point (invariant 7).
 *
 * Read hints: reads by sequential consumers start where the previous read ended; the end of
 * each read (offset -> position) is remembered in a few slots (allocated at the first read: a
 * log nobody reads, as most are for a while after a restart, carries none), plus the start of
 * the last append, so a sequential read starts with no search and, when it takes the rest of the
 * segment, without reading a single header. Otherwise the sparse index narrows the search
 * to about one index interval, read with one pread. A hint says "the first batch at or after
 * this offset starts here": below clean_gaps_below the batch may start later (a compaction
 * gap); above it, offsets are contiguous and the batch must start exactly there.
 *
 * Compaction: the cleaner (storage/cleaner.h) reads sealed segments on its own thread through
 * references; this file only hands it a snapshot (plog_clean_prepare), swaps finished
 * segments in (plog_clean_commit) and keeps the cleaner checkpoint's values in memory.
 *
 * Index memory: the active segment's indexes live in memory; sealed segments load theirs on
 * demand and at most PLOG_LOADED_INDEXES of them stay loaded (least recently used goes). */
#include "storage/plog.h"

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
#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "kafka/batch.h"
#include "storage/cleaner.h"
#include "storage/epoch_cache.h"
#include "storage/fdcache.h"
#include "storage/flusher.h"
#include "storage/io.h"
#include "storage/kvstore.h"
#include "storage/segment.h"

#define PLOG_READ_HINTS 8
#define PLOG_TIMESTAMP_MAX_DECOMPRESSED (64u << 20) /* one batch's records, ListOffsets by time */
#define PLOG_LOADED_INDEXES 4
#define PLOG_RP_INTERVAL_MS 5000
#define PLOG_DEFAULT_SEGMENT_BYTES (1LL << 30)
#define PLOG_DEFAULT_INDEX_INTERVAL 4096
#define RECOVERY_POINT_FILE "recovery-point"
#define LOG_START_FILE "log-start-offset"
#define LOG_RESET_FILE "log-reset"

struct read_hint {
    int64_t offset;      /* the first batch at or after this offset..., -1 if empty */
    int64_t pos;         /* ...starts at this file position */
    int64_t seg_base;    /* in this segment */
    struct batch_info b; /* the whole header when known (b.size > 0): no read needed */
    bool exact;          /* that batch starts exactly at offset */
};

/* A batch header an open read (plog_open_head). */
struct open_head {
    int64_t offset;
    bool found; /* a batch starts there (else none does) */
    uint8_t hdr[KBATCH_HEADER_SIZE];
};

struct plog {
    char *dir;               /* also the owner of this log's entries in the file cache */
    struct fdcache *files;   /* the broker's open-file cache, or NULL: files stay open */
    struct fdcache_entry dir_fe; /* the partition directory (fd for *at() calls and fsync) */
    struct plog_config cfg;
    struct segment **segs; /* oldest first; the last is active */
    size_t n_segs;
    size_t cap_segs;
    int64_t log_start;
    int64_t hw;
    int64_t durable;
    int64_t size_bytes;
    struct epoch_cache epochs;
    bool epochs_dirty;         /* memory differs from the checkpoint (stored at close) */
    uint64_t epochs_version;   /* bumped at every change of epochs in memory */
    uint64_t epochs_submitted; /* version last handed to the flusher with a sync */
    int64_t epoch_unsynced;    /* start of the first epoch the durable checkpoint may lack, or
                                  INT64_MAX: the recovery point never passes it (invariant 10) */
    bool epochs_wanted;        /* the recovery point waits for the checkpoint: store it with
                                  the next sync */
    bool fenced;
    bool dir_dirty;         /* a file was created/deleted since the last handover */
    struct fileref **extra; /* sealed index files awaiting their first sync */
    size_t n_extra;
    size_t cap_extra;
    uint64_t gen; /* bumped by suffix truncation: older sync targets are stale */
    struct read_hint *hints;      /* PLOG_READ_HINTS of them, or NULL until the first read
                                     remembered (most of a restart's logs are not read soon) */
    unsigned hint_next;           /* round-robin victim */
    struct read_hint append_hint; /* start of the last appended batch */
    uint64_t tick;                /* LRU clock for loaded sealed indexes */
    int64_t rp;                   /* recovery point last written */
    bool opening;                 /* plog_open_unsynced returned, not yet finished */
    struct io_dir_list names;     /* the directory as the open listed it, while names_kept */
    bool names_kept;              /* until plog_forget_open_listing */
    /* the first batch header of each of the last PLOG_OPEN_HEADS leader epochs, read by the
     * open (read_open_heads) for the first replica's restore, while names_kept and the log is
     * as the open left it (heads_gen, heads_leo); owned, freed with the open's listing (a
     * restart holds them for one moment, every partition for its whole life otherwise) */
    struct open_head *heads;
    size_t n_heads;
    uint64_t heads_gen;
    int64_t heads_leo;
    struct kvstore *kv;           /* the recovery point and epochs live there, or NULL: files */
    const char *kv_dir;           /* their key there: the directory's base name (in dir) */
    bool open_fresh;              /* while opening: the log was created by this open */
    int64_t open_rp;              /* while opening: the recovery point read from disk */
    struct flusher *open_fl;      /* while opening: the flusher to attach to at the finish */
    int64_t rp_written_ms;        /* monotonic time of that write */
    plog_flush_cb cb;
    void *cb_data;
    struct plog_hooks hooks; /* derived-state hooks (plog_set_hooks); zeroed: none */
    struct flush_req req;
    struct flush_req side_req; /* plog_sync_side_file: one side file's sync at a time */
    bool side_busy;            /* that sync is in flight */
    plog_side_cb side_cb;
    void *side_data;
    int64_t clean_first_dirty;   /* cleaner checkpoint: offsets below were compacted */
    int64_t clean_gaps_below;    /* offsets below may have gaps (the cleaner rewrote them) */
    int64_t clean_horizon_ms;    /* earliest delete horizon of a kept tombstone, -1 none */
    bool clean_disabled;         /* a corrupt batch stopped cleaning (until restart) */
    bool swap_pending;           /* a segment is swapping (invariant 9) */
    struct clean_job *clean_job; /* pass in flight, or NULL */
};

/* A reference to the partition directory (the caller puts it), opened again if the cache
 * closed it. */
static int dir_ref(struct plog *log, struct fileref **out)
{
    return fdcache_open(log->files, &log->dir_fe, log->dir, NULL, O_RDONLY | O_DIRECTORY, out);
}

/* The directory's descriptor without a reference, or -errno: files of this partition opened
 * meanwhile never close it (storage/fdcache.h), so it is valid for the rest of the operation. */
static int dirfd_of(struct plog *log)
{
    struct fileref *f;
    int rc = dir_ref(log, &f);
    if (rc != 0)
        return rc;
    int fd = f->fd;
    fileref_put(f); /* the cache (or the log) keeps its own */
    return fd;
}

/* The same for a segment's file. */
static int seg_fd(const struct segment *seg)
{
    struct fileref *f;
    int rc = segment_file(seg, &f);
    if (rc != 0)
        return rc;
    int fd = f->fd;
    fileref_put(f);
    return fd;
}

/* Puts a segment just created or opened by this log under the log's cache. */
static struct segment *attach(struct plog *log, struct segment *seg)
{
    segment_attach(seg, log->files, log->dir);
    return seg;
}

static struct segment *active(const struct plog *log)
{
    return log->segs[log->n_segs - 1];
}

static int64_t leo(const struct plog *log)
{
    return active(log)->end;
}

__attribute__((unused)) static void plog_check(const struct plog *log)
{
    CHECK(log->n_segs >= 1);
    int64_t size = 0;
    bool clean_seen = false;
    int swapping = 0;
    for (size_t i = log->n_segs; i-- > 0;) {
        const struct segment *s = log->segs[i];
        CHECK(s->end >= s->base);
        if (i + 1 < log->n_segs)
            CHECK(s->base < log->segs[i + 1]->base && s->sealed &&
                  s->end == log->segs[i + 1]->base);
        swapping += s->swapping;
        if (!s->dirty)
            clean_seen = true;
        else
            CHECK(!clean_seen);
        size += s->size;
    }
    CHECK(size == log->size_bytes);
    CHECK(swapping == log->swap_pending && (!swapping || log->clean_job || log->fenced));
    CHECK(log->segs[0]->base <= log->log_start);
    CHECK(log->log_start <= log->hw && log->hw <= leo(log));
    CHECK(log->durable <= leo(log));
}

static void sanitize_config(struct plog_config *c)
{
    if (c->segment_bytes <= 0)
        c->segment_bytes = PLOG_DEFAULT_SEGMENT_BYTES;
    c->segment_bytes = MIN(c->segment_bytes, (int64_t)INT32_MAX);
    if (c->index_interval_bytes <= 0)
        c->index_interval_bytes = PLOG_DEFAULT_INDEX_INTERVAL;
}

static void fence(struct plog *log, const char *op, int rc)
{
    if (log->fenced)
        return;
    log->fenced = true;
    log_error("partition_fenced", "dir=%s op=%s error=\"%s\"", log->dir, op, err_str(rc));
}

static void read_hints_clear(struct plog *log)
{
    for (size_t i = 0; log->hints && i < PLOG_READ_HINTS; i++)
        log->hints[i].offset = -1;
}

static void hints_clear(struct plog *log)
{
    read_hints_clear(log);
    log->append_hint.offset = -1;
}

/* The epochs in memory changed: the checkpoint is stored at the next sync or at close. */
static void epochs_changed(struct plog *log)
{
    log->epochs_dirty = true;
    log->epochs_version++;
}

/* The checkpoint now on disk (synced) holds the epochs of version v. */
static void epochs_stored(struct plog *log, uint64_t v)
{
    if (v != log->epochs_version)
        return;
    log->epochs_dirty = false;
    log->epoch_unsynced = INT64_MAX;
    log->epochs_wanted = false;
}

/* Whether this open may not write to the store: it runs on a thread other than the store's
 * owner (plog_config.kv_read_only), and fails with -EAGAIN before it would. The writes below
 * check that it did. */
static bool kv_refused(const struct plog *log)
{
    return log->kv && log->cfg.kv_read_only;
}

/* The directory's key in the store: its last path component. */
static const char *base_name(const char *dir)
{
    const char *slash = strrchr(dir, '/');
    return slash ? slash + 1 : dir;
}

/* Whether the open's listing has name. */
static bool listed(const struct plog *log, const char *name)
{
    return io_dir_list_has(&log->names, name);
}

/* Writes the checkpoint where the log keeps it: into the store (synced if asked: then also
 * everything put before it), else the file (temp file and rename; synced if asked). */
static int epochs_write(struct plog *log, const struct epoch_cache *c, bool sync)
{
    if (log->kv) {
        CHECK(!kv_refused(log));
        size_t len;
        char *buf = epoch_cache_encode(c, &len);
        int rc = kv_put(log->kv, log->kv_dir, EPOCH_CACHE_FILE, buf, len);
        mem_free(buf);
        return sync ? kv_sync(log->kv) : rc;
    }
    int dfd = dirfd_of(log);
    return dfd < 0 ? dfd : epoch_cache_store(c, dfd, sync);
}

/* Reads the checkpoint: the store's, else (a directory an older release wrote) the file. */
static int epochs_read(struct plog *log, int dfd)
{
    const void *val;
    size_t len;
    if (log->kv && kv_peek(log->kv, log->kv_dir, EPOCH_CACHE_FILE, &val, &len) == 0)
        return epoch_cache_decode(&log->epochs, val, len);
    return listed(log, EPOCH_CACHE_FILE) ? epoch_cache_load(&log->epochs, dfd) : -ENOENT;
}

/* After recovery, with the store: the epochs the batches showed (validation derives those of
 * the segments it read) are put, unsynced, where they differ from the store's checkpoint, so
 * that the recovery point raised next is never there without them (invariant 10 by the store's
 * prefix rule, storage/kvstore.h). */
static void epochs_put_if_changed(struct plog *log)
{
    size_t len, old_len;
    const void *old;
    char *buf = epoch_cache_encode(&log->epochs, &len);
    bool same = kv_peek(log->kv, log->kv_dir, EPOCH_CACHE_FILE, &old, &old_len) == 0 &&
                old_len == len && memcmp(old, buf, len) == 0;
    if (same || kv_put(log->kv, log->kv_dir, EPOCH_CACHE_FILE, buf, len) == 0)
        epochs_stored(log, log->epochs_version);
    mem_free(buf);
}

/* Stores the checkpoint from the reactor thread, after any store of the flusher's. */
static int store_epochs_now(struct plog *log)
{
    if (log->req.fl)
        flusher_quiesce(log->req.fl, &log->req);
    int rc = epochs_write(log, &log->epochs, true);
    if (rc == 0)
        epochs_stored(log, log->epochs_version);
    return rc;
}

/* A copy of the epochs for the flusher to store, if they changed since the last one handed. */
static struct epoch_cache *epochs_snapshot(struct plog *log)
{
    if (!log->epochs_wanted || !log->epochs_dirty || log->epochs_submitted == log->epochs_version)
        return NULL;
    struct epoch_cache *c = mem_calloc(1, sizeof(*c));
    epoch_cache_init(c);
    for (size_t i = 0; i < log->epochs.n; i++)
        epoch_cache_assign(c, log->epochs.e[i].epoch, log->epochs.e[i].start);
    log->epochs_submitted = log->epochs_version;
    return c;
}

/* Whether the batch after offset may start later than offset (a compaction gap). */
static bool gap_possible(const struct plog *log, int64_t offset)
{
    return offset < log->clean_gaps_below;
}

/* ---- small offset files ---- */

static int parse_offset(const char *buf, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || end == buf || v < 0 || (*end != '\n' && *end != 0) || (*end && end[1] != 0))
        return -ERR_CORRUPT;
    *out = v;
    return 0;
}

static int read_offset_file(int dirfd, const char *name, int64_t *out)
{
    char buf[32];
    ssize_t n = io_read_small_file(dirfd, name, buf, sizeof(buf) - 1);
    if (n < 0)
        return n == -ERR_TOO_LARGE ? -ERR_CORRUPT : (int)n;
    buf[n] = 0;
    return parse_offset(buf, out);
}

static int write_offset_file(int dirfd, const char *name, int64_t v, bool sync)
{
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "%" PRId64 "\n", v);
    return io_write_file_atomic(dirfd, name, buf, (size_t)n, sync);
}

/* The recovery point is rewritten in place (storage/plog.h "Recovery point"): a fixed-size
 * record, the offset in RP_DIGITS decimal digits, a space, the CRC-32C of those digits in hex
 * and a newline, so a torn write is detected rather than believed. */
#define RP_DIGITS 20
#define RP_RECORD_LEN (RP_DIGITS + 1 + 8 + 1)

static void rp_format(char out[RP_RECORD_LEN + 1], int64_t v)
{
    snprintf(out, RP_RECORD_LEN + 1, "%0*" PRId64, RP_DIGITS, v);
    uint32_t crc = crc32c(0, out, RP_DIGITS);
    snprintf(out + RP_DIGITS, RP_RECORD_LEN + 1 - RP_DIGITS, " %08" PRIx32 "\n", crc);
}

/* Reads the recovery point: the fixed-size record, or the plain decimal line of older
 * releases (written whole by temp + rename). */
static int read_recovery_point(int dirfd, int64_t *out)
{
    char buf[RP_RECORD_LEN + 2];
    ssize_t n = io_read_small_file(dirfd, RECOVERY_POINT_FILE, buf, sizeof(buf) - 1);
    if (n < 0)
        return n == -ERR_TOO_LARGE ? -ERR_CORRUPT : (int)n;
    buf[n] = 0;
    if (n != RP_RECORD_LEN)
        return parse_offset(buf, out); /* the older layout */
    char want[RP_RECORD_LEN + 1];
    int64_t v;
    buf[RP_DIGITS] = 0;
    if (parse_offset(buf, &v) != 0)
        return -ERR_CORRUPT;
    rp_format(want, v);
    buf[RP_DIGITS] = ' ';
    if (memcmp(want, buf, RP_RECORD_LEN) != 0)
        return -ERR_CORRUPT;
    *out = v;
    return 0;
}

/* Overwrites the record in place (one pwrite: no temp file, no rename), creating the file if
 * it is missing; with sync, fdatasyncs it (and the directory when it was created). */
static int store_recovery_point(int dirfd, int64_t v, bool sync)
{
    char rec[RP_RECORD_LEN + 1];
    rp_format(rec, v);
    bool created = false;
    int fd = openat(dirfd, RECOVERY_POINT_FILE, O_WRONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        fd = io_create(dirfd, RECOVERY_POINT_FILE, O_WRONLY | O_CLOEXEC, 0644);
        created = fd >= 0;
    } else if (fd < 0) {
        fd = -errno;
    }
    if (fd < 0)
        return fd;
    int rc = io_pwrite_all(fd, rec, RP_RECORD_LEN, 0, NULL);
    if (rc == 0 && sync)
        rc = io_fdatasync(fd);
    close(fd);
    if (rc == 0 && sync && created)
        rc = io_fsync_dir(dirfd);
    return rc;
}

/* The recovery point where the log keeps it: into the store (8 bytes, big-endian; synced if
 * asked), else the file. */
static int rp_write(struct plog *log, int64_t rp, bool sync)
{
    if (log->kv) {
        CHECK(!kv_refused(log));
        uint8_t b[8];
        be_put64(b, (uint64_t)rp);
        int rc = kv_put(log->kv, log->kv_dir, RECOVERY_POINT_FILE, b, sizeof(b));
        return sync ? kv_sync(log->kv) : rc;
    }
    int dfd = dirfd_of(log);
    return dfd < 0 ? dfd : store_recovery_point(dfd, rp, sync);
}

/* The store's recovery point, else (a directory an older release wrote) the file's. */
static int rp_read(struct plog *log, int dfd, int64_t *out)
{
    uint8_t b[8];
    ssize_t n = log->kv ? kv_get(log->kv, log->kv_dir, RECOVERY_POINT_FILE, b, sizeof(b)) : -ENOENT;
    if (n == -ENOENT)
        return listed(log, RECOVERY_POINT_FILE) ? read_recovery_point(dfd, out) : -ENOENT;
    int64_t v = n == (ssize_t)sizeof(b) ? (int64_t)be_get64(b) : -1;
    if (v < 0)
        return -ERR_CORRUPT;
    *out = v;
    return 0;
}

static void write_recovery_point(struct plog *log, int64_t rp, bool sync)
{
    int rc = rp_write(log, rp, sync);
    if (rc != 0) {
        log_warn("recovery_point_write_failed", "dir=%s error=\"%s\"", log->dir, err_str(rc));
        return;
    }
    log->rp = rp;
    log->rp_written_ms = time_mono_ms();
}

/* ---- segment array ---- */

static void push_segment(struct plog *log, struct segment *seg)
{
    MEM_GROW(log->segs, log->cap_segs, log->n_segs + 1);
    log->segs[log->n_segs++] = seg;
    log->size_bytes += seg->size;
}

/* Removes segs[i] from the array and deletes its files. */
static void drop_segment(struct plog *log, size_t i, const char *reason)
{
    struct segment *seg = log->segs[i];
    CHECK(!seg->swapping);
    log_info("segment_deleted", "dir=%s base_offset=%" PRId64 " bytes=%" PRId64 " reason=%s",
             log->dir, seg->base, seg->size, reason);
    int dfd = dirfd_of(log);
    int rc = dfd < 0 ? dfd : segment_remove_files(dfd, seg->base);
    if (rc != 0)
        log_warn("segment_unlink_failed", "dir=%s base_offset=%" PRId64 " error=\"%s\"", log->dir,
                 seg->base, err_str(rc));
    log->size_bytes -= seg->size;
    segment_free(seg);
    memmove(log->segs + i, log->segs + i + 1, (log->n_segs - i - 1) * sizeof(*log->segs));
    log->n_segs--;
    log->dir_dirty = true;
    hints_clear(log);
}

/* Index of the segment that holds offset: the last with base <= offset (0 if none). */
static size_t find_segment(const struct plog *log, int64_t offset)
{
    if (offset >= active(log)->base)
        return log->n_segs - 1;
    size_t lo = 0, hi = log->n_segs;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (log->segs[mid]->base <= offset)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static void add_extra(struct plog *log, struct fileref **files, int n)
{
    MEM_GROW(log->extra, log->cap_extra, log->n_extra + (size_t)n);
    for (int i = 0; i < n; i++)
        log->extra[log->n_extra++] = files[i];
}

static void seal_segment(struct plog *log, struct segment *seg)
{
    struct fileref *files[2];
    int n = 0;
    int dfd = dirfd_of(log);
    int rc = dfd < 0 ? dfd : segment_seal(seg, dfd, files, &n);
    if (rc != 0)
        log_warn("index_write_failed", "dir=%s base_offset=%" PRId64 " error=\"%s\"", log->dir,
                 seg->base, err_str(rc));
    add_extra(log, files, n);
    if (n > 0)
        log->dir_dirty = true;
}

/* Keeps at most PLOG_LOADED_INDEXES sealed segments' indexes in memory. */
static void evict_indexes(struct plog *log)
{
    for (;;) {
        size_t loaded = 0;
        struct segment *lru = NULL;
        for (size_t i = 0; i + 1 < log->n_segs; i++) {
            struct segment *s = log->segs[i];
            if (!s->index_loaded || s->swapping) /* a swapping one has no index files yet */
                continue;
            loaded++;
            if (!lru || s->index_tick < lru->index_tick)
                lru = s;
        }
        if (loaded <= PLOG_LOADED_INDEXES)
            return;
        segment_unload_index(lru);
    }
}

static int load_index(struct plog *log, struct segment *seg)
{
    seg->index_tick = ++log->tick;
    if (seg->index_loaded)
        return 0;
    int dfd = dirfd_of(log);
    int rc = dfd < 0 ? dfd : segment_load_index(seg, dfd, log->cfg.index_interval_bytes);
    if (rc == 1)
        log_warn("index_rebuilt", "dir=%s base_offset=%" PRId64, log->dir, seg->base);
    if (rc < 0)
        return rc;
    evict_indexes(log);
    return 0;
}

/* An index entry or hint did not point at the batch it named: rebuild from the log (and
 * rewrite the files of a sealed segment). */
static int repair_index(struct plog *log, struct segment *seg, int64_t offset)
{
    log_warn("index_corrupt", "dir=%s base_offset=%" PRId64 " offset=%" PRId64, log->dir, seg->base,
             offset);
    hints_clear(log);
    int64_t end = seg->end;
    int rc = segment_rebuild_index(seg, log->cfg.index_interval_bytes);
    if (rc != 0)
        return rc;
    if (seg->sealed) {
        seg->end = MAX(seg->end, end);
        if (!seg->swapping) /* the cleaner writes its index files */
            seal_segment(log, seg);
    }
    return 0;
}

/* ---- syncing ---- */

/* Collects references to everything not yet handed to a sync. A dirty segment whose file
 * cannot be opened again (-errno) stays dirty: its bytes cannot be made durable. */
static int collect_dirty(struct plog *log, struct fileref ***files, size_t *n, size_t *cap)
{
    int rc = 0;
    for (size_t i = log->n_segs; i-- > 0;) {
        struct segment *s = log->segs[i];
        if (!s->dirty)
            break;
        struct fileref *f;
        rc = segment_file(s, &f);
        if (rc != 0)
            break;
        MEM_GROW(*files, *cap, *n + 1);
        (*files)[(*n)++] = f;
        s->dirty = false;
    }
    if (log->n_extra > 0) {
        MEM_GROW(*files, *cap, *n + log->n_extra);
        memcpy(*files + *n, log->extra, log->n_extra * sizeof(**files));
        *n += log->n_extra;
        log->n_extra = 0;
    }
    return rc;
}

/* Syncs files (dropping the references) and the directory inline. */
static int sync_inline(struct plog *log, struct fileref **files, size_t n, bool dir)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0)
            rc = io_fdatasync(files[i]->fd);
        fileref_put(files[i]);
    }
    if (rc == 0 && dir) {
        int dfd = dirfd_of(log);
        rc = dfd < 0 ? dfd : io_fsync_dir(dfd);
    }
    return rc;
}

/* Syncs everything outstanding, including what a detached flush request still held. */
static int sync_all_inline(struct plog *log)
{
    struct fileref **files = log->req.files;
    size_t n = log->req.n_files, cap = log->req.cap_files;
    log->req.files = NULL;
    log->req.n_files = log->req.cap_files = 0;
    bool dir = log->dir_dirty || log->req.dir;
    fileref_put(log->req.dir);
    log->req.dir = NULL;
    int crc = collect_dirty(log, &files, &n, &cap);
    log->dir_dirty = false;
    int rc = sync_inline(log, files, n, dir);
    mem_free(files);
    return rc != 0 ? rc : crc;
}

static void flush_done(struct flush_req *req, int64_t target, uint64_t gen, uint64_t epochs_version,
                       int rc, bool notify)
{
    struct plog *log = (struct plog *)((char *)req - offsetof(struct plog, req));
    if (rc != 0) {
        fence(log, "fdatasync", rc);
    } else if (!log->fenced) {
        /* a stored checkpoint counts even after a truncation if the epochs are the same */
        if (epochs_version)
            epochs_stored(log, epochs_version);
    }
    if (rc == 0 && !log->fenced && gen == log->gen) {
        int64_t d = MIN(target, leo(log));
        if (d > log->durable)
            log->durable = d;
        bool due = time_mono_ms() - log->rp_written_ms >= PLOG_RP_INTERVAL_MS;
        /* in the store, a checkpoint put before the recovery point is there whenever the
         * recovery point is (kvstore.h): no sync of its own needed (invariant 10) */
        if (due && log->kv && log->epoch_unsynced < log->durable &&
            epochs_write(log, &log->epochs, false) == 0)
            epochs_stored(log, log->epochs_version);
        int64_t rp = MIN(log->durable, log->epoch_unsynced);
        if (rp > log->rp && due)
            write_recovery_point(log, rp, false);
        if (due && rp < log->durable && !log->epochs_wanted && log->req.fl) {
            log->epochs_wanted = true; /* a sync that stores the checkpoint */
            plog_flush(log);
        }
    }
    if (notify && log->cb)
        log->cb(log, log->durable, rc, log->cb_data);
}

void plog_set_flush_cb(struct plog *log, plog_flush_cb cb, void *data)
{
    log->cb = cb;
    log->cb_data = data;
}

void plog_flush(struct plog *log)
{
    if (log->fenced)
        return;
    struct fileref **files = NULL, *dref = NULL;
    size_t n = 0, cap = 0;
    int rc = collect_dirty(log, &files, &n, &cap);
    bool dir = log->dir_dirty;
    if (rc == 0 && dir)
        rc = dir_ref(log, &dref);
    struct epoch_cache *epochs = rc == 0 && log->req.fl && !log->kv ? epochs_snapshot(log) : NULL;
    if (rc == 0 && epochs && !dref)
        rc = dir_ref(log, &dref);
    if (rc != 0) {
        /* what cannot be synced fences the log, as a failed fdatasync would */
        for (size_t i = 0; i < n; i++)
            fileref_put(files[i]);
        mem_free(files);
        if (epochs) {
            epoch_cache_free(epochs);
            mem_free(epochs);
        }
        flush_done(&log->req, leo(log), log->gen, 0, rc, true);
        return;
    }
    log->dir_dirty = false;
    if (log->req.fl) {
        flusher_submit(log->req.fl, &log->req, files, n, dref, epochs, log->epochs_submitted,
                       leo(log), log->gen);
        mem_free(files);
        return;
    }
    fileref_put(dref);
    rc = sync_inline(log, files, n, dir);
    mem_free(files);
    if (rc == 0 && log->epochs_dirty)
        rc = store_epochs_now(log);
    flush_done(&log->req, leo(log), log->gen, 0, rc, true);
}

static void side_done(struct flush_req *req, int64_t target, uint64_t gen, uint64_t epochs_version,
                      int rc, bool notify)
{
    struct plog *log = (struct plog *)((char *)req - offsetof(struct plog, side_req));
    (void)target;
    (void)gen;
    (void)epochs_version;
    plog_side_cb cb = log->side_cb;
    void *data = log->side_data;
    log->side_busy = false;
    log->side_cb = NULL;
    log->side_data = NULL;
    if (notify && cb)
        cb(log, rc, data);
}

int plog_sync_side_file(struct plog *log, struct fileref *f, plog_side_cb cb, void *data)
{
    if (!log->side_req.fl) {
        int rc = io_fdatasync(f->fd);
        fileref_put(f);
        return rc;
    }
    CHECK(!log->side_busy && cb);
    log->side_busy = true;
    log->side_cb = cb;
    log->side_data = data;
    flusher_submit(log->side_req.fl, &log->side_req, &f, 1, NULL, NULL, 0, 0, 0);
    return PLOG_SIDE_QUEUED;
}

void plog_side_cancel(struct plog *log)
{
    if (!log->side_busy)
        return;
    /* waits out a running sync and drops its completion (side_done without notice), so the
     * next side sync, perhaps a new owner's, is never answered by this one's */
    struct flusher *fl = log->side_req.fl;
    CHECK(fl != NULL); /* side_busy: a side sync was handed to the flusher */
    flusher_detach(fl, &log->side_req);
    for (size_t i = 0; i < log->side_req.n_files; i++)
        fileref_put(log->side_req.files[i]);
    log->side_req.n_files = 0;
    log->side_busy = false;
    log->side_cb = NULL;
    log->side_data = NULL;
    flusher_attach(fl, &log->side_req);
}

/* A barrier in flight: its own request (not the log's, which it may outlive) and the
 * directory's reference it syncs the filesystem through. */
struct fs_barrier {
    struct flush_req req; /* first: barrier_done gets it */
    struct flusher *fl;
    struct kvstore *kv; /* a barrier of the store: the fdatasync of its file covers kv_seq */
    uint64_t kv_seq;
    plog_barrier_cb cb;
    void *data;
};

/* Nobody detaches a barrier, so it is always notified, once. */
static void barrier_done(struct flush_req *req, int64_t target, uint64_t gen,
                         uint64_t epochs_version, int rc, bool notify)
{
    (void)target, (void)gen, (void)epochs_version;
    struct fs_barrier *b = (struct fs_barrier *)req;
    CHECK(notify);
    flusher_release(b->fl, req);
    if (b->kv)
        kv_sync_end(b->kv, b->kv_seq, rc);
    b->cb(rc, b->data);
    for (size_t i = 0; i < req->n_files; i++)
        fileref_put(req->files[i]);
    mem_free(req->files);
    mem_free(b);
}

bool plog_fs_barrier_available(const struct plog *log)
{
    return log->side_req.fl && (log->kv || io_syncfs_reports_errors());
}

int plog_fs_barrier(struct plog *log, plog_barrier_cb cb, void *data)
{
    if (!plog_fs_barrier_available(log))
        return -ENOTSUP;
    /* with the store, what the barrier must make durable is in its file: one fdatasync */
    struct fileref *dir;
    uint64_t seq = 0;
    int rc = log->kv ? kv_sync_begin(log->kv, &dir, &seq) : dir_ref(log, &dir);
    if (rc != 0)
        return rc;
    struct fs_barrier *b = mem_calloc(1, sizeof(*b));
    b->req.done = barrier_done;
    b->req.syncfs = !log->kv;
    b->kv = log->kv;
    b->kv_seq = seq;
    b->fl = log->side_req.fl;
    b->cb = cb;
    b->data = data;
    flusher_attach(log->side_req.fl, &b->req);
    flusher_submit(log->side_req.fl, &b->req, &dir, 1, NULL, NULL, 0, 0, 0);
    return PLOG_SIDE_QUEUED;
}

/* ---- open / recovery ---- */

static bool parse_segment_name(const char *name, int64_t *base)
{
    if (strlen(name) != 24 || strcmp(name + 20, ".log") != 0)
        return false;
    return segment_name_offset(name, base);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Lists the directory again into log->names (after the open's own listing, files were created
 * or removed). */
static int relist(struct plog *log)
{
    int dfd = dirfd_of(log);
    if (dfd < 0)
        return dfd;
    if (lseek(dfd, 0, SEEK_SET) < 0)
        return -errno;
    return io_dir_list_read(&log->names, dfd);
}

/* Segment bases (sorted) of log->names; removes temp files and indexes without a log. */
static int list_dir(struct plog *log, int64_t **bases, size_t *n)
{
    size_t cap = 0;
    *bases = NULL;
    *n = 0;
    char **orphans = NULL;
    size_t n_orphans = 0, cap_orphans = 0;
    size_t pos = 0;
    for (const char *name; (name = io_dir_list_next(&log->names, &pos)) != NULL;) {
        int64_t base;
        if (parse_segment_name(name, &base)) {
            MEM_GROW(*bases, cap, *n + 1);
            (*bases)[(*n)++] = base;
        } else if (io_has_suffix(name, ".tmp") || io_has_suffix(name, ".index") ||
                   io_has_suffix(name, ".timeindex")) {
            MEM_GROW(orphans, cap_orphans, n_orphans + 1);
            orphans[n_orphans++] = mem_strdup(name);
        }
    }
    if (*n > 1)
        qsort(*bases, *n, sizeof(**bases), cmp_i64);
    for (size_t i = 0; i < n_orphans; i++) {
        bool keep = false;
        if (!io_has_suffix(orphans[i], ".tmp")) {
            char logname[SEGMENT_NAME_MAX];
            size_t stem = strcspn(orphans[i], ".");
            snprintf(logname, sizeof(logname), "%.*s.log", (int)stem, orphans[i]);
            int64_t base;
            keep = parse_segment_name(logname, &base) && *n > 0 &&
                   bsearch(&base, *bases, *n, sizeof(**bases), cmp_i64) != NULL;
        }
        if (!keep) {
            io_unlink(dirfd_of(log), orphans[i]);
            log->dir_dirty = true;
        }
        mem_free(orphans[i]);
    }
    mem_free(orphans);
    return 0;
}

/* Rebuilds the epoch cache from batch headers of segs[0..upto). */
static int rebuild_epochs(struct plog *log, size_t upto)
{
    epoch_cache_free(&log->epochs);
    for (size_t i = 0; i < upto; i++) {
        struct segment *seg = log->segs[i];
        int fd = seg_fd(seg);
        if (fd < 0)
            return fd;
        uint8_t buf[SEGMENT_SCAN_BUF];
        struct batch_scanner s;
        scanner_init(&s, fd, 0, seg->size, buf, sizeof(buf));
        for (;;) {
            struct batch_info b;
            const char *why;
            int rc = scanner_next(&s, &b, &why);
            if (rc == -ERR_SHORT || rc == -ERR_CORRUPT)
                break; /* a damaged tail is validation's business */
            if (rc < 0)
                return rc;
            if (rc == 0)
                break;
            epoch_cache_assign(&log->epochs, b.epoch, b.base);
        }
    }
    epochs_changed(log);
    return 0;
}

/* Deletes every segment after i (recovery found the log ends in segment i). */
static void drop_after(struct plog *log, size_t i, struct plog_recovery *rec, const char *reason)
{
    while (log->n_segs > i + 1) {
        struct segment *seg = log->segs[log->n_segs - 1];
        rec->truncated_bytes += seg->size;
        drop_segment(log, log->n_segs - 1, reason);
    }
}

/* Validates segments from index `from` on, truncating at the first invalid byte. rp is the
 * recovery point (-1 if unknown): a segment that ends at or below it, uncut, was wholly
 * fdatasync'ed before the crash and need not be synced again (an idle partition's restart then
 * costs no log sync). */
static int validate_from(struct plog *log, size_t from, int64_t rp, struct plog_recovery *rec)
{
    epoch_cache_truncate_end(&log->epochs, log->segs[from]->base);
    int32_t epoch = epoch_cache_last_epoch(&log->epochs);
    for (size_t i = from; i < log->n_segs; i++) {
        struct segment *seg = log->segs[i];
        struct segment *prev = i > from ? log->segs[i - 1] : NULL;
        if (prev && seg->base > prev->end && seg->base <= log->clean_gaps_below) {
            prev->end = seg->base; /* the cleaner removed prev's last batches */
        } else if (prev && seg->base != prev->end) {
            log_warn("log_truncated",
                     "dir=%s offset=%" PRId64 " bytes=0 reason=segment_gap next_base=%" PRId64,
                     log->dir, log->segs[i - 1]->end, seg->base);
            if (rec->truncated_at < 0)
                rec->truncated_at = log->segs[i - 1]->end;
            drop_after(log, i - 1, rec, "recovery");
            break;
        }
        int64_t before = seg->size;
        struct segment_recovery sr;
        int rc = segment_recover(seg, log->cfg.index_interval_bytes, &epoch, &log->epochs, &sr);
        if (rc != 0)
            return rc;
        log->size_bytes -= before - seg->size;
        rec->segments_validated++;
        if (sr.cut_offset >= 0 || rp < 0 || seg->end > rp)
            seg->dirty = true; /* its bytes may still be only in the page cache */
        if (sr.cut_offset >= 0) {
            log_warn("log_truncated", "dir=%s offset=%" PRId64 " bytes=%" PRId64 " reason=%s",
                     log->dir, sr.cut_offset, sr.cut_bytes, sr.reason);
            rec->truncated_bytes += sr.cut_bytes;
            rec->truncated_at = sr.cut_offset;
            drop_after(log, i, rec, "recovery");
        }
        if (i + 1 < log->n_segs)
            seal_segment(log, seg);
        else
            seg->sealed = false;
    }
    return 0;
}

/* Replaces every segment with an empty one starting at start (the whole log lies below it). */
static int restart_at(struct plog *log, int64_t start)
{
    struct segment *seg;
    int dfd = dirfd_of(log);
    int rc = dfd < 0 ? dfd : segment_create(dfd, start, &seg);
    if (rc != 0)
        return rc;
    attach(log, seg);
    while (log->n_segs > 0)
        drop_segment(log, log->n_segs - 1, "log_start_offset");
    push_segment(log, seg);
    log->dir_dirty = true;
    epoch_cache_truncate_end(&log->epochs, start);
    epochs_changed(log);
    return 0;
}

static int open_segments(struct plog *log, int64_t ls_file)
{
    int64_t *bases = NULL;
    size_t n = 0;
    int rc = list_dir(log, &bases, &n);
    if (rc != 0)
        return rc;
    size_t first = 0;
    /* segments wholly below a persisted log start are garbage from before a crash */
    while (ls_file >= 0 && first + 1 < n && bases[first + 1] <= ls_file) {
        segment_remove_files(dirfd_of(log), bases[first]);
        log->dir_dirty = true;
        first++;
    }
    for (size_t i = first; i < n && rc == 0; i++) {
        struct segment *seg;
        rc = segment_open(dirfd_of(log), bases[i], &seg);
        if (rc == 0)
            push_segment(log, attach(log, seg));
    }
    mem_free(bases);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i + 1 < log->n_segs; i++) {
        log->segs[i]->end = log->segs[i + 1]->base;
        log->segs[i]->sealed = true;
    }
    for (size_t i = 0; i < log->n_segs; i++)
        log->segs[i]->gaps_below = log->clean_gaps_below;
    return 0;
}

static void load_clean_checkpoint(struct plog *log)
{
    struct clean_checkpoint ck;
    int rc =
        listed(log, CLEANER_CHECKPOINT_FILE) ? clean_checkpoint_read(dirfd_of(log), &ck) : -ENOENT;
    if (rc == 0) {
        log->clean_first_dirty = ck.first_dirty;
        log->clean_gaps_below = ck.gaps_below;
        log->clean_horizon_ms = ck.horizon_ms;
        return;
    }
    log->clean_first_dirty = 0;
    log->clean_gaps_below = -1;
    log->clean_horizon_ms = -1;
    if (rc == -ENOENT)
        return;
    /* the log may be compacted but we cannot tell how far: accept its gaps rather than cut
     * it, and clean it again from the start */
    log_warn("checkpoint_invalid", "dir=%s file=" CLEANER_CHECKPOINT_FILE " error=\"%s\"", log->dir,
             err_str(rc));
    log->clean_gaps_below = INT64_MAX;
}

/* Trusted sealed segments segs[0..upto): only their largest timestamp is needed now. */
static int load_trusted(struct plog *log, size_t upto)
{
    for (size_t i = 0; i < upto; i++) {
        int rc = segment_load_meta(log->segs[i], dirfd_of(log), log->cfg.index_interval_bytes);
        if (rc == 1)
            log_warn("index_rebuilt", "dir=%s base_offset=%" PRId64, log->dir, log->segs[i]->base);
        if (rc < 0)
            return rc;
    }
    evict_indexes(log);
    return 0;
}

static int recover(struct plog *log, bool clean, int64_t rp, bool fresh, struct plog_recovery *rec)
{
    int rc;
    if (fresh)
        return 0;
    struct segment *last = active(log);
    if (clean) {
        rc = segment_load_tail(last, dirfd_of(log), log->cfg.index_interval_bytes);
        if (rc == 0 && rp == last->end)
            return load_trusted(log, log->n_segs - 1);
        log_warn("clean_open_fallback", "dir=%s reason=%s", log->dir,
                 rc != 0 ? "tail_check_failed" : "recovery_point_mismatch");
        segment_unload_index(last);
        last->end = last->base;
    }
    size_t from = rp >= 0 ? find_segment(log, rp) : 0;
    rc = load_trusted(log, from);
    if (rc == 0)
        rc = validate_from(log, from, rp, rec);
    return rc;
}

/* The on-disk part of a reset to offset (see plog_reset), once the marker `log-reset` is
 * durable: removes every segment file, empties the leader-epoch checkpoint, drops the cleaner
 * checkpoint, records offset as log start and recovery point, and finally removes the marker.
 * Idempotent: a crash anywhere in here repeats it at the next open. The new empty segment is
 * the caller's (open creates it at the persisted log start). */
static int reset_dir(struct plog *log, int64_t offset)
{
    int dfd = dirfd_of(log);
    int64_t *bases = NULL;
    size_t n = 0;
    int rc = relist(log);
    if (rc == 0)
        rc = list_dir(log, &bases, &n);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = segment_remove_files(dfd, bases[i]);
    mem_free(bases);
    if (rc == 0) {
        struct epoch_cache empty;
        epoch_cache_init(&empty);
        rc = epochs_write(log, &empty, true);
        epoch_cache_free(&empty);
    }
    if (rc == 0)
        rc = io_unlink(dfd, CLEANER_CHECKPOINT_FILE);
    if (rc == 0)
        rc = write_offset_file(dfd, LOG_START_FILE, offset, true);
    if (rc == 0)
        rc = rp_write(log, offset, true);
    if (rc == 0)
        rc = io_fsync_dir(dfd);
    if (rc == 0)
        rc = io_unlink(dfd, LOG_RESET_FILE);
    if (rc == 0)
        rc = io_fsync_dir(dfd);
    return rc;
}

/* After a syncfs made them durable: the files the log would have synced itself, let go (their
 * descriptors: a stop of fifty thousand logs must not hold two each at once). */
static void drop_sync_refs(struct plog *log)
{
    for (size_t i = 0; i < log->req.n_files; i++)
        fileref_put(log->req.files[i]);
    log->req.n_files = 0;
    fileref_put(log->req.dir);
    log->req.dir = NULL;
    for (size_t i = 0; i < log->n_extra; i++)
        fileref_put(log->extra[i]);
    log->n_extra = 0;
    log->dir_dirty = false;
}

/* A descriptor of log's filesystem for io_syncfs (a dup: the file cache may close the
 * directory's meanwhile) with its stat in *st, or -1 (fenced, or the directory unusable). */
static int fs_fd(struct plog *log, struct stat *st)
{
    int dfd = log->fenced ? -1 : dirfd_of(log);
    return dfd >= 0 && fstat(dfd, st) == 0 ? fcntl(dfd, F_DUPFD_CLOEXEC, 0) : -1;
}

/* Whether log's directory is on the filesystem st0 describes (a syncfs there covers it). */
static bool on_fs(struct plog *log, const struct stat *st0)
{
    struct stat st;
    int dfd = log->fenced ? -1 : dirfd_of(log);
    return dfd >= 0 && fstat(dfd, &st) == 0 && st.st_dev == st0->st_dev;
}

/* What recovery left unsynced: a validated or cut segment, new index files, the directory. */
static bool open_wants_sync(const struct plog *log)
{
    return active(log)->dirty || log->n_extra > 0 || log->dir_dirty || log->req.n_files > 0 ||
           log->req.dir;
}

/* The second half of an open: what recovery kept made durable (synced: by a syncfs of the
 * log's filesystem that began after the first half, else by the log's own syncs), then the
 * recovery point, and the flusher. Returns 0 or -errno (the log is then fenced, and
 * event=partition_open_failed logged). */
static int finish_open(struct plog *log, bool synced)
{
    CHECK(log->opening);
    plog_drop_open_window(log);
    int rc = 0;
    if (synced) {
        for (size_t i = 0; i < log->n_segs; i++)
            log->segs[i]->dirty = false;
        drop_sync_refs(log);
    } else {
        rc = sync_all_inline(log);
    }
    if (rc != 0) {
        fence(log, "fdatasync", rc);
        log_error("partition_open_failed", "dir=%s error=\"%s\"", log->dir, err_str(rc));
        return rc;
    }
    log->opening = false;
    log->durable = leo(log);
    if (log->kv && !log->open_fresh)
        epochs_put_if_changed(log);
    /* Raised, the record needs no sync of its own (everything below it is durable now, and a
     * record lost or torn in a crash only means validating more, as after a flush's store);
     * one fdatasync per partition here, one after another on the reactor, was most of a
     * restart after kill -9 at tens of thousands of partitions. Lowered (a checkpoint lost
     * under it), it is synced: invariants 7 and 10. */
    int64_t rp = log->open_rp, rp_to = MIN(leo(log), log->epoch_unsynced);
    if (!log->open_fresh && rp != rp_to)
        write_recovery_point(log, rp_to, rp_to < rp);
    else if (!log->open_fresh)
        log->rp = rp;
    if (log->open_fl) {
        flusher_attach(log->open_fl, &log->req);
        log->side_req.done = side_done;
        flusher_attach(log->open_fl, &log->side_req);
        log->open_fl = NULL;
    }
    DCHECK((plog_check(log), true));
    return 0;
}

int plog_open(const char *dir, const struct plog_config *cfg, struct flusher *fl,
              struct fdcache *files, bool clean, struct plog **out, struct plog_recovery *rec)
{
    struct plog *log;
    int rc = plog_open_unsynced(dir, cfg, fl, files, clean, &log, rec);
    if (rc != 0)
        return rc;
    rc = finish_open(log, false);
    if (rc != 0) {
        plog_close(log);
        return rc;
    }
    *out = log;
    return 0;
}

int plog_open_finish_many(struct plog **logs, size_t n)
{
    /* the filesystem of the first log that wants a sync; the others on it share its syncfs */
    bool *wants = mem_calloc(n ? n : 1, sizeof(*wants));
    size_t wanting = 0;
    for (size_t i = 0; i < n; i++)
        wanting += wants[i] = open_wants_sync(logs[i]);
    int fsfd = -1;
    struct stat st0;
    for (size_t i = 0; fsfd < 0 && wanting >= 2 && io_syncfs_reports_errors() && i < n; i++)
        if (wants[i])
            fsfd = fs_fd(logs[i], &st0);
    int src = fsfd >= 0 ? io_syncfs(fsfd) : -1;
    if (fsfd >= 0 && src != 0)
        log_warn("open_syncfs_failed", "logs=%zu error=\"%s\" note=\"each log syncs its own\"",
                 wanting, err_str(src));
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = finish_open(logs[i], !wants[i] || (src == 0 && on_fs(logs[i], &st0)));
        if (first == 0)
            first = rc;
    }
    if (fsfd >= 0)
        close(fsfd);
    mem_free(wants);
    return first;
}

static int locate(struct plog *log, struct segment *seg, int64_t offset, struct batch_info *b,
                  int *hint_slot);

/* The first min(cap, KBATCH_HEADER_SIZE) bytes of the batch starting at offset off into buf:
 * their count, 0 when no batch starts there, or -errno / -ERR_CORRUPT. */
static ssize_t read_head(struct plog *log, int64_t off, void *buf, size_t cap)
{
    if (off < log->log_start || off >= leo(log))
        return 0;
    struct segment *seg = log->segs[find_segment(log, off)];
    if (off < seg->base || off >= seg->end)
        return 0;
    struct batch_info b;
    int slot;
    int rc = locate(log, seg, off, &b, &slot);
    if (rc <= 0 || b.base != off)
        return rc < 0 ? rc : 0;
    return segment_read_at(seg, b.pos, buf, MIN(cap, (size_t)KBATCH_HEADER_SIZE));
}

/* Reads the first batch of each of the last PLOG_OPEN_HEADS epochs while the open has the files
 * (on the opener's thread: a restart's replicas open one after another on the reactor, and
 * there each of these reads was a file to open again). Best effort: a failed read keeps only
 * the heads before it, and the reader reads the rest itself. */
static void read_open_heads(struct plog *log)
{
    mem_free(log->heads);
    log->n_heads = 0;
    log->heads = mem_alloc(PLOG_OPEN_HEADS * sizeof(*log->heads));
    for (size_t i = log->epochs.n; i-- > 0 && log->n_heads < PLOG_OPEN_HEADS;) {
        int64_t start = log->epochs.e[i].start;
        struct open_head *h = &log->heads[log->n_heads];
        ssize_t n = start < log->log_start ? -1 : read_head(log, start, h->hdr, sizeof(h->hdr));
        if (n < 0 || (n > 0 && n != (ssize_t)sizeof(h->hdr)))
            break;
        h->offset = start;
        h->found = n > 0;
        log->n_heads++;
    }
    if (log->n_heads == 0) {
        mem_free(log->heads);
        log->heads = NULL;
    }
    log->heads_gen = log->gen;
    log->heads_leo = leo(log);
}

int plog_open_unsynced(const char *dir, const struct plog_config *cfg, struct flusher *fl,
                       struct fdcache *files, bool clean, struct plog **out,
                       struct plog_recovery *rec)
{
    struct plog_recovery rec_local;
    if (!rec)
        rec = &rec_local;
    *rec = (struct plog_recovery){.truncated_at = -1};
    int dfd = io_open_noatime(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY);
    if (dfd == -ENOENT) {
        /* a new directory: what the store holds under its name is an old incarnation's (a
         * deleted partition's), and must be gone for good before the new one writes any */
        const char *base = base_name(dir);
        if (cfg->kv && kv_has_dir(cfg->kv, base)) {
            if (cfg->kv_read_only)
                return -EAGAIN;
            int krc = kv_del_dir(cfg->kv, base);
            krc = krc == 0 ? kv_sync(cfg->kv) : krc;
            if (krc != 0)
                return krc;
        }
        if (mkdir(dir, 0755) != 0 && errno != EEXIST)
            return -errno;
        dfd = io_open_noatime(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY);
    }
    if (dfd < 0)
        return dfd;
    struct plog *log = mem_calloc(1, sizeof(*log));
    log->dir = mem_strdup(dir);
    log->kv = cfg->kv;
    log->kv_dir = base_name(log->dir);
    log->files = files;
    log->dir_fe.owner = log->dir;
    fdcache_adopt(files, &log->dir_fe, fileref_new(dfd));
    log->cfg = *cfg;
    sanitize_config(&log->cfg);
    log->req.done = flush_done;
    log->rp = -1;
    log->epoch_unsynced = INT64_MAX;
    hints_clear(log);
    epoch_cache_init(&log->epochs);

    /* one listing serves every question about the directory's files below (and the producer
     * snapshots' owner: plog_open_names) instead of a probe or a readdir each */
    int rc = io_dir_list_read(&log->names, dfd);
    if (rc != 0)
        goto out_close;
    log->names_kept = true;
    int64_t ls_file = -1, rp = -1;
    int r = listed(log, LOG_START_FILE) ? read_offset_file(dfd, LOG_START_FILE, &ls_file) : -ENOENT;
    if (r != 0 && r != -ENOENT)
        log_warn("checkpoint_invalid", "dir=%s file=" LOG_START_FILE " error=\"%s\"", dir,
                 err_str(r));
    if (r != 0)
        ls_file = -1;
    r = rp_read(log, dfd, &rp);
    if (r != 0 && r != -ENOENT)
        log_warn("checkpoint_invalid", "dir=%s file=" RECOVERY_POINT_FILE " error=\"%s\"", dir,
                 err_str(r));
    if (r != 0)
        rp = -1;
    int ec_rc = epochs_read(log, dfd);
    if (ec_rc != 0 && ec_rc != -ENOENT)
        log_warn("checkpoint_invalid", "dir=%s file=" EPOCH_CACHE_FILE " error=\"%s\"", dir,
                 err_str(ec_rc));

    /* an interrupted compaction swap is finished (or undone) before segments are listed */
    rc = cleaner_recover_dir(dfd, dir, &log->names);
    if (rc > 0)
        rc = relist(log);
    if (rc != 0)
        goto out_close;
    int64_t reset_to = -1;
    r = listed(log, LOG_RESET_FILE) ? read_offset_file(dfd, LOG_RESET_FILE, &reset_to) : -ENOENT;
    if (r == 0 && kv_refused(log)) {
        rc = -EAGAIN; /* finishing the reset writes to the store */
        goto out_close;
    }
    if (r == 0) {
        /* a plog_reset passed its commit point but did not finish: finish it */
        log_warn("log_reset_resumed", "dir=%s offset=%" PRId64, dir, reset_to);
        rc = reset_dir(log, reset_to);
        if (rc == 0)
            rc = relist(log);
        if (rc != 0)
            goto out_close;
        ls_file = reset_to;
        rp = reset_to;
        epoch_cache_free(&log->epochs);
        epoch_cache_init(&log->epochs);
        ec_rc = 0;
    } else if (r != -ENOENT) {
        /* written synced before its rename, so damaged on disk: whether the reset committed
         * (and how far it got) is unknown, and guessing could open a mix of two logs */
        rc = r;
        goto out_close;
    }
    load_clean_checkpoint(log);
    rc = open_segments(log, ls_file);
    if (rc != 0)
        goto out_close;
    bool fresh = log->n_segs == 0;
    if (fresh && kv_refused(log)) {
        rc = -EAGAIN; /* a fresh log's recovery point goes to the store */
        goto out_close;
    }
    if (fresh) {
        struct segment *seg;
        rc = segment_create(dfd, MAX(ls_file, 0), &seg);
        if (rc != 0)
            goto out_close;
        push_segment(log, attach(log, seg));
        log->dir_dirty = true;
    }
    rec->segments = (int)log->n_segs;
    if (ec_rc != 0 && !fresh) {
        /* the checkpoint is lost: the batches themselves carry the epochs */
        size_t upto = clean ? log->n_segs : (rp >= 0 ? find_segment(log, rp) : 0);
        rc = rebuild_epochs(log, upto);
        if (rc != 0)
            goto out_close;
    }
    rc = recover(log, clean, rp, fresh, rec);
    if (rc != 0)
        goto out_close;

    log->log_start = MAX(log->segs[0]->base, ls_file);
    if (log->log_start > leo(log) && kv_refused(log)) {
        rc = -EAGAIN; /* a restart's checkpoint is stored at once */
        goto out_close;
    }
    if (log->log_start > leo(log)) {
        log_warn("log_truncated",
                 "dir=%s offset=%" PRId64 " bytes=%" PRId64 " reason=log_end_below_log_start", dir,
                 leo(log), log->size_bytes);
        rc = restart_at(log, log->log_start);
        if (rc != 0)
            goto out_close;
    }
    if (epoch_cache_truncate_end(&log->epochs, leo(log)))
        epochs_changed(log);
    if (epoch_cache_truncate_start(&log->epochs, log->log_start))
        epochs_changed(log);
    log->clean_first_dirty = MIN(log->clean_first_dirty, leo(log));
    /* a fresh log has nothing the checkpoint could tell: its first sync after an append
     * stores one (and without it, recovery reads the epochs from the batches). Nor does a
     * log that was never given one (killed before its first lazy store): the epochs just
     * read from its batches are stored lazily as an append's are, the recovery point kept
     * below them meanwhile (invariant 10); storing them here, synced, one partition after
     * another, was most of a restart after kill -9 at thousands of new partitions. A stored
     * checkpoint that recovery changed is rewritten now: on disk it names epochs past the
     * log, or is damaged. */
    if (ec_rc == -ENOENT && !fresh) {
        epochs_changed(log); /* rebuild_epochs read them from the batches */
        if (log->epochs.n > 0)
            log->epoch_unsynced = MIN(log->epoch_unsynced, log->epochs.e[0].start);
    } else if (log->epochs_dirty) {
        rc = kv_refused(log) ? -EAGAIN : store_epochs_now(log);
        if (rc != 0)
            goto out_close;
    }
    /* a fresh log's recovery point needs no sync of its own: the directory's below covers
     * its entry, and a lost or torn record only means validating an empty log */
    if (fresh)
        write_recovery_point(log, leo(log), false);
    /* whatever recovery touched (or a previous run left unsynced) is made durable by the
     * finish (finish_open), so that durable == LEO is true and the recovery point can say so;
     * until then reads see it all (HW = LEO) and nothing else may touch the log */
    log->hw = leo(log);
    log->opening = true;
    log->open_fresh = fresh;
    log->open_rp = rp;
    log->open_fl = fl;
    if (active(log)->size > 0)
        active(log)->first_append_ms = time_wall_ms();
    /* one line per partition that lost something; the intact ones are summed up in the
     * broker's start line (a restart after kill -9 validates every partition's tail) */
    if (rec->segments_validated > 0 || rec->truncated_bytes > 0)
        log_emit(rec->truncated_bytes > 0 ? LOG_INFO : LOG_DEBUG, "log_recovered",
                 "dir=%s segments=%d validated=%d truncated_bytes=%" PRId64 " log_end=%" PRId64,
                 dir, rec->segments, rec->segments_validated, rec->truncated_bytes, leo(log));
    if (log->names_kept)
        read_open_heads(log);
    log->cfg.kv_read_only = false; /* only the open itself is on another thread */
    *out = log;
    return 0;

out_close:
    if (!(rc == -EAGAIN && kv_refused(log)))
        log_error("partition_open_failed", "dir=%s error=\"%s\"", dir, err_str(rc));
    log->fenced = true; /* nothing to flush at close */
    plog_close(log);
    return rc;
}

/* ---- close ---- */

static void free_log(struct plog *log)
{
    for (size_t i = 0; i < log->n_segs; i++)
        segment_free(log->segs[i]);
    mem_free(log->segs);
    for (size_t i = 0; i < log->n_extra; i++)
        fileref_put(log->extra[i]);
    mem_free(log->extra);
    for (size_t i = 0; i < log->req.n_files; i++)
        fileref_put(log->req.files[i]);
    mem_free(log->req.files);
    for (size_t i = 0; i < log->side_req.n_files; i++)
        fileref_put(log->side_req.files[i]);
    mem_free(log->side_req.files);
    fileref_put(log->req.dir);
    if (log->req.epochs) {
        epoch_cache_free(log->req.epochs);
        mem_free(log->req.epochs);
    }
    epoch_cache_free(&log->epochs);
    fdcache_forget(&log->dir_fe);
    io_dir_list_free(&log->names);
    mem_free(log->heads);
    mem_free(log->hints);
    mem_free(log->dir);
    mem_free(log);
}

/* Before a log goes: its clean job abandoned, and both flush requests detached from the
 * flusher (a sync running waited out, its completion dropped). */
static void detach_all(struct plog *log)
{
    if (log->clean_job)
        clean_job_abandon(log->clean_job);
    if (log->req.fl)
        flusher_detach(log->req.fl, &log->req);
    if (log->side_req.fl)
        flusher_detach(log->side_req.fl, &log->side_req);
}

void plog_close(struct plog *log)
{
    if (!log)
        return;
    detach_all(log);
    if (!log->fenced) {
        seal_segment(log, active(log));
        int rc = sync_all_inline(log);
        if (rc == 0 && log->epochs_dirty)
            rc = store_epochs_now(log);
        if (rc == 0)
            write_recovery_point(log, leo(log), true);
        else
            log_error("partition_close_sync_failed", "dir=%s error=\"%s\"", log->dir, err_str(rc));
    }
    free_log(log);
}

#define PLOG_CLOSE_CHUNK 1024 /* logs sealed between two syncfs calls of plog_close_many */

bool plog_close_many_syncs_fs(size_t n)
{
    return n >= 2 && io_syncfs_reports_errors();
}

/* The first half of a batched close: the log's closing writes, unsynced. 0 or -errno (then the
 * log is closed the slow way). */
static int close_writes(struct plog *log)
{
    detach_all(log);
    if (log->fenced)
        return 0;
    seal_segment(log, active(log));
    return log->epochs_dirty ? epochs_write(log, &log->epochs, false) : 0;
}

void plog_close_many(struct plog **logs, size_t n)
{
    int fsfd = -1;
    struct stat st0;
    for (size_t i = 0; fsfd < 0 && plog_close_many_syncs_fs(n) && i < n; i++)
        fsfd = fs_fd(logs[i], &st0);
    if (fsfd < 0) {
        for (size_t i = 0; i < n; i++)
            plog_close(logs[i]);
        return;
    }
    /* which logs take the fast way: on fsfd's filesystem, their writes made and synced; in
     * chunks, since a sealed log holds its new index files open until they are synced */
    bool *fast = mem_calloc(n, sizeof(*fast));
    size_t n_rp = 0;
    for (size_t c0 = 0; c0 < n; c0 += PLOG_CLOSE_CHUNK) {
        size_t c1 = MIN(n, c0 + PLOG_CLOSE_CHUNK);
        for (size_t i = c0; i < c1; i++) {
            struct plog *log = logs[i];
            fast[i] = on_fs(log, &st0);
            if (fast[i] && close_writes(log) != 0)
                fast[i] = false;
        }
        int rc = io_syncfs(fsfd);
        if (rc != 0)
            log_warn("close_syncfs_failed", "logs=%zu error=\"%s\" note=\"each log syncs its own\"",
                     c1 - c0, err_str(rc));
        for (size_t i = c0; i < c1; i++) {
            struct plog *log = logs[i];
            if (!fast[i] || rc != 0) {
                fast[i] = false;
                if (!log->fenced)
                    plog_close(log); /* what is left of it: the syncs, the recovery point */
                else
                    free_log(log);
                logs[i] = NULL;
                continue;
            }
            drop_sync_refs(log);
            if (log->epochs_dirty)
                epochs_stored(log, log->epochs_version);
            write_recovery_point(log, leo(log), false);
            n_rp++;
        }
    }
    int rc2 = n_rp > 0 ? io_syncfs(fsfd) : 0;
    if (rc2 != 0)
        log_warn("close_syncfs_failed",
                 "logs=%zu error=\"%s\" note=\"recovery points synced one by one\"", n_rp,
                 err_str(rc2));
    for (size_t i = 0; i < n; i++) {
        if (!fast[i])
            continue;
        if (rc2 != 0)
            write_recovery_point(logs[i], leo(logs[i]), true);
        free_log(logs[i]);
    }
    mem_free(fast);
    close(fsfd);
}

int plog_destroy(struct plog *log)
{
    detach_all(log);
    /* not synced: a directory made anew under this name purges the store first, durably */
    if (log->kv)
        (void)kv_del_dir(log->kv, log->kv_dir);
    char *dir = mem_strdup(log->dir);
    free_log(log);
    int rc = io_remove_tree(AT_FDCWD, dir);
    if (rc != 0)
        log_warn("partition_remove_failed", "dir=%s error=\"%s\"", dir, err_str(rc));
    mem_free(dir);
    return rc;
}

/* ---- accessors ---- */

void plog_set_config(struct plog *log, const struct plog_config *cfg)
{
    log->cfg = *cfg;
    log->cfg.kv = log->kv;
    log->cfg.kv_read_only = false; /* an open log belongs to the store's owner */
    sanitize_config(&log->cfg);
}

const char *plog_dir(const struct plog *log)
{
    return log->dir;
}

void plog_use_file_cache(struct plog *log, struct fdcache *files)
{
    CHECK(!log->files && !log->dir_fe.cache);
    log->files = files;
    struct fileref *d = log->dir_fe.file;
    log->dir_fe.file = NULL;
    if (d)
        fdcache_adopt(files, &log->dir_fe, d);
    for (size_t i = 0; i < log->n_segs; i++) {
        struct segment *seg = log->segs[i];
        CHECK(!seg->fc);
        seg->fc = files;
        struct fileref *f = seg->fe.file;
        seg->fe.file = NULL;
        if (f)
            fdcache_adopt(files, &seg->fe, f);
    }
}

void plog_drop_files(struct plog *log)
{
    CHECK(!log->files);
    fileref_put(log->dir_fe.file);
    log->dir_fe.file = NULL;
    for (size_t i = 0; i < log->n_segs; i++) {
        fileref_put(log->segs[i]->fe.file);
        log->segs[i]->fe.file = NULL;
    }
}

size_t plog_open_files(const struct plog *log)
{
    size_t n = log->dir_fe.file != NULL;
    for (size_t i = 0; i < log->n_segs; i++)
        n += log->segs[i]->fe.file != NULL;
    return n + log->n_extra;
}

struct kvstore *plog_kv(const struct plog *log)
{
    return log->kv;
}

const char *plog_kv_dir(const struct plog *log)
{
    return log->kv_dir;
}

const struct io_dir_list *plog_open_names(const struct plog *log)
{
    return log->opening ? &log->names : NULL;
}

int plog_listed_at_open(const struct plog *log, const char *name)
{
    return !log->names_kept ? -1 : listed(log, name);
}

void plog_forget_open_listing(struct plog *log)
{
    io_dir_list_free(&log->names);
    log->names_kept = false;
    mem_free(log->heads);
    log->heads = NULL;
    log->n_heads = 0;
    plog_drop_open_window(log);
}

ssize_t plog_open_head(const struct plog *log, int64_t offset, void *buf, size_t cap)
{
    if (!log->names_kept || log->gen != log->heads_gen || leo(log) != log->heads_leo)
        return -ENOENT;
    for (size_t i = 0; i < log->n_heads; i++) {
        const struct open_head *h = &log->heads[i];
        if (h->offset != offset)
            continue;
        if (!h->found)
            return 0;
        size_t n = MIN(cap, sizeof(h->hdr));
        memcpy(buf, h->hdr, n);
        return (ssize_t)n;
    }
    return -ENOENT;
}

ssize_t plog_read_head(struct plog *log, int64_t offset, void *buf, size_t cap)
{
    ssize_t n = plog_open_head(log, offset, buf, cap);
    return n != -ENOENT ? n : read_head(log, offset, buf, cap);
}

void plog_drop_open_window(struct plog *log)
{
    if (log->n_segs > 0)
        segment_window_drop(active(log));
}

int plog_dirfd(struct plog *log)
{
    return dirfd_of(log);
}
int64_t plog_start_offset(const struct plog *log)
{
    return log->log_start;
}
int64_t plog_end_offset(const struct plog *log)
{
    return leo(log);
}
int64_t plog_high_watermark(const struct plog *log)
{
    return log->hw;
}
int64_t plog_durable_offset(const struct plog *log)
{
    return log->durable;
}
int64_t plog_size_bytes(const struct plog *log)
{
    return log->size_bytes;
}
int plog_segment_count(const struct plog *log)
{
    return (int)log->n_segs;
}
bool plog_fenced(const struct plog *log)
{
    return log->fenced;
}

void plog_set_high_watermark(struct plog *log, int64_t hw)
{
    hw = MAX(hw, log->log_start);
    hw = MIN(hw, leo(log));
    if (hw > log->hw)
        log->hw = hw;
}

int32_t plog_last_epoch(const struct plog *log)
{
    return epoch_cache_last_epoch(&log->epochs);
}

int64_t plog_epoch_end_offset(const struct plog *log, int32_t epoch)
{
    return epoch_cache_end_offset(&log->epochs, epoch, leo(log));
}

size_t plog_epoch_count(const struct plog *log)
{
    return log->epochs.n;
}

void plog_epoch_at(const struct plog *log, size_t i, int32_t *epoch, int64_t *start)
{
    CHECK(i < log->epochs.n);
    *epoch = log->epochs.e[i].epoch;
    *start = log->epochs.e[i].start;
}

void plog_restore_high_watermark(struct plog *log, int64_t hw)
{
    hw = MAX(hw, log->log_start);
    log->hw = MIN(hw, leo(log));
}

/* ---- append ---- */

/* Seals the active segment and starts a new one at LEO. */
static int roll(struct plog *log)
{
    struct segment *seg;
    int dfd = dirfd_of(log);
    int rc = dfd < 0 ? dfd : segment_create(dfd, leo(log), &seg);
    if (rc != 0)
        return rc;
    attach(log, seg);
    struct segment *old = active(log);
    seal_segment(log, old);
    push_segment(log, seg);
    log->dir_dirty = true;
    old->index_tick = ++log->tick;
    evict_indexes(log);
    log_debug("segment_rolled", "dir=%s base_offset=%" PRId64, log->dir, seg->base);
    if (log->hooks.rolled)
        log->hooks.rolled(log, seg->base, log->hooks.data);
    /* flush the sealed segment in the background (as Kafka does at roll): it lets the
     * recovery point advance even when no producer asks for durability */
    if (log->req.fl)
        plog_flush(log);
    return 0;
}

static bool should_roll(const struct plog *log, size_t len, int64_t last_offset, int64_t now_ms)
{
    const struct segment *a = active(log);
    if (a->size == 0)
        return false;
    if (a->size + (int64_t)len > log->cfg.segment_bytes)
        return true;
    if (last_offset - a->base > SEGMENT_REL_MAX)
        return true;
    return log->cfg.segment_ms >= 0 && a->first_append_ms >= 0 &&
           now_ms - a->first_append_ms > log->cfg.segment_ms;
}

int plog_append(struct plog *log, uint8_t *batch, size_t len, int32_t epoch, int64_t now_ms,
                int64_t *base_offset)
{
    DCHECK((plog_check(log), true));
    if (log->fenced)
        return -ERR_FENCED;
    CHECK(len >= KBATCH_HEADER_SIZE && len <= INT32_MAX);
    CHECK((int64_t)(int32_t)be_get32(batch + KBATCH_OFF_LENGTH) + KBATCH_LOG_OVERHEAD ==
          (int64_t)len);
    int32_t delta = (int32_t)be_get32(batch + 23);
    CHECK(delta >= 0);
    int32_t last_epoch = epoch_cache_last_epoch(&log->epochs);
    CHECK(epoch >= last_epoch);
    int64_t base = leo(log);
    int rc;
    if (should_roll(log, len, base + delta, now_ms)) {
        rc = roll(log);
        if (rc != 0)
            goto out_error;
    }
    bool new_epoch = epoch_cache_assign(&log->epochs, epoch, base);
    if (new_epoch) {
        /* stored with the next sync (invariant 10 keeps the recovery point below it) */
        epochs_changed(log);
        log->epoch_unsynced = MIN(log->epoch_unsynced, base);
    }
    kbatch_set_base_offset(batch, base);
    kbatch_set_leader_epoch(batch, epoch);
    struct segment *a = active(log);
    struct batch_info b = {
        .pos = a->size,
        .base = base,
        .last = base + delta,
        .size = (int64_t)len,
        .max_ts = (int64_t)((uint64_t)be_get32(batch + KBATCH_OFF_MAX_TIMESTAMP) << 32 |
                            be_get32(batch + KBATCH_OFF_MAX_TIMESTAMP + 4)),
        .epoch = epoch,
        .records = (int32_t)be_get32(batch + KBATCH_OFF_RECORDS_COUNT),
    };
    rc = segment_append(a, batch, len, &b, log->cfg.index_interval_bytes);
    if (rc != 0) {
        if (new_epoch)
            epoch_cache_truncate_end(&log->epochs, base); /* version stays bumped: harmless */
        goto out_error;
    }
    if (a->first_append_ms < 0)
        a->first_append_ms = now_ms;
    log->size_bytes += (int64_t)len;
    log->append_hint = (struct read_hint){base, b.pos, a->base, b, true};
    *base_offset = base;
    if (log->hooks.appended)
        log->hooks.appended(log, batch, len, log->hooks.data);
    DCHECK((plog_check(log), true));
    return 0;

out_error:
    if (rc != -ENOSPC)
        fence(log, "append", rc);
    return rc;
}

int plog_maybe_roll(struct plog *log, int64_t now_ms)
{
    if (log->fenced)
        return -ERR_FENCED;
    const struct segment *a = active(log);
    if (a->size == 0 || log->cfg.segment_ms < 0 || a->first_append_ms < 0 ||
        now_ms - a->first_append_ms <= log->cfg.segment_ms)
        return 0;
    return roll(log);
}

/* ---- read ---- */

/* Finds the batch holding offset (or the next one) in seg, starting from the best known
 * position: a read hint, the append hint or the sparse index. A hint or index entry that does
 * not check out is dropped (index rebuilt) and the search repeated from the segment start. */
static int locate(struct plog *log, struct segment *seg, int64_t offset, struct batch_info *b,
                  int *hint_slot)
{
    CHECK(offset >= seg->base);
    int64_t from_pos = 0, from_off = -1;
    bool exact = true;
    const struct read_hint *best = NULL;
    *hint_slot = -1;
    for (int i = 0; log->hints && i < PLOG_READ_HINTS; i++) {
        const struct read_hint *h = &log->hints[i];
        if (h->offset >= 0 && h->seg_base == seg->base && h->offset <= offset &&
            h->offset > from_off) {
            from_pos = h->pos;
            from_off = h->offset;
            exact = h->exact;
            best = h;
            *hint_slot = i;
        }
    }
    const struct read_hint *ah = &log->append_hint;
    if (ah->offset >= 0 && ah->seg_base == seg->base && ah->offset <= offset &&
        ah->offset > from_off) {
        from_pos = ah->pos;
        from_off = ah->offset;
        exact = ah->exact;
        best = ah;
        *hint_slot = -1;
    }
    if (best && best->b.size > 0 && best->b.last >= offset) {
        *b = best->b; /* the sequential case: no I/O at all */
        return 1;
    }
    if (from_off != offset) {
        int rc = load_index(log, seg);
        if (rc != 0)
            return rc;
        struct oindex_entry e;
        if (offset - seg->base <= (int64_t)UINT32_MAX &&
            oindex_floor(&seg->oidx, (uint32_t)(offset - seg->base), &e) &&
            seg->base + e.rel > from_off) {
            from_pos = e.pos;
            from_off = seg->base + e.rel;
            exact = true;
            *hint_slot = -1;
        }
    }
    int rc = segment_find(seg, from_pos, from_off, exact, offset, b);
    if (rc != -ERR_CORRUPT || from_pos == 0)
        return rc;
    *hint_slot = -1;
    rc = repair_index(log, seg, offset);
    if (rc != 0)
        return rc;
    return segment_find(seg, 0, -1, true, offset, b);
}

static void remember_read(struct plog *log, int slot, int64_t offset, int64_t pos, int64_t seg_base,
                          const struct batch_info *b)
{
    if (!log->hints) {
        log->hints = mem_alloc(PLOG_READ_HINTS * sizeof(*log->hints));
        read_hints_clear(log); /* not the append hint */
    }
    if (slot < 0)
        slot = (int)(log->hint_next++ % PLOG_READ_HINTS);
    struct read_hint *h = &log->hints[slot];
    *h = (struct read_hint){offset, pos, seg_base, {0}, !gap_possible(log, offset)};
    if (b && b->size > 0 && b->pos == pos && b->base >= offset) {
        h->b = *b;
        h->exact = b->base == offset;
    }
}

/* From a record-less batch *b, finds the next batch of seg holding records: 1 (*b is it), 0
 * (none before the segment's end), 2 (none below max_offset), or -errno / -ERR_CORRUPT. */
static int skip_empty(struct segment *seg, int64_t max_offset, struct batch_info *b)
{
    uint8_t buf[SEGMENT_SCAN_BUF];
    struct batch_scanner s;
    int fd = seg_fd(seg);
    if (fd < 0)
        return fd;
    scanner_init_seg(&s, fd, seg, b->pos + b->size, buf, sizeof(buf));
    for (;;) {
        struct batch_info nb;
        const char *why;
        int rc = scanner_next(&s, &nb, &why);
        if (rc <= 0)
            return rc == -ERR_SHORT ? -ERR_CORRUPT : rc;
        if (nb.last >= max_offset)
            return 2;
        if (nb.records != 0) {
            *b = nb;
            return 1;
        }
    }
}

static int read_range(struct plog *log, int64_t offset, int64_t max_offset, size_t max_bytes,
                      bool skip, struct plog_read_result *out)
{
    *out = (struct plog_read_result){.first_offset = offset, .next_offset = offset};
    if (offset < log->log_start || offset > leo(log))
        return -ERR_OUT_OF_RANGE;
    if (offset == leo(log) || offset >= max_offset)
        return 0;
    for (size_t i = find_segment(log, offset); i < log->n_segs; i++) {
        struct segment *seg = log->segs[i];
        if (offset >= seg->end)
            continue;
        struct batch_info b;
        int slot;
        /* past a gap at the end of the previous segment the search starts at this one's base */
        int rc = locate(log, seg, MAX(offset, seg->base), &b, &slot);
        if (rc < 0)
            return rc;
        if (rc == 0)
            continue;
        if (b.last >= max_offset)
            return 0;
        if (skip && b.records == 0) {
            rc = skip_empty(seg, max_offset, &b);
            if (rc < 0)
                return rc;
            if (rc == 0)
                continue; /* only record-less batches left here: on to the next segment */
            if (rc == 2)
                return 0;
            slot = -1;
        }
        if (!seg->index_loaded && (uint64_t)(seg->size - b.pos) > max_bytes) {
            rc = load_index(log, seg);
            if (rc != 0)
                return rc;
        }
        size_t len;
        int64_t next;
        struct batch_info stop;
        rc = segment_extend(seg, &b, max_offset, max_bytes, &len, &next, &stop);
        if (rc == -ERR_CORRUPT && seg->index_loaded) {
            rc = repair_index(log, seg, b.base);
            if (rc == 0)
                rc = segment_extend(seg, &b, max_offset, max_bytes, &len, &next, &stop);
        }
        if (rc != 0)
            return rc;
        rc = segment_file(seg, &out->file);
        if (rc != 0)
            return rc;
        out->pos = (off_t)b.pos;
        out->len = len;
        out->first_offset = b.base;
        out->next_offset = next;
        if (b.pos + (int64_t)len < seg->size)
            remember_read(log, slot, next, b.pos + (int64_t)len, seg->base, &stop);
        else if (i + 1 < log->n_segs)
            remember_read(log, slot, log->segs[i + 1]->base, 0, log->segs[i + 1]->base, NULL);
        return 0;
    }
    return 0;
}

int plog_read(struct plog *log, int64_t offset, int64_t max_offset, size_t max_bytes,
              struct plog_read_result *out)
{
    return read_range(log, offset, max_offset, max_bytes, false, out);
}

int plog_read_records(struct plog *log, int64_t offset, int64_t max_offset, size_t max_bytes,
                      struct plog_read_result *out)
{
    return read_range(log, offset, max_offset, max_bytes, true, out);
}

/* ---- timestamps ---- */

/* Within batch b of seg: the first record with timestamp >= ts at or above log start (1), none
 * (0), or < 0. */
static int batch_find_timestamp(struct plog *log, struct segment *seg, const struct batch_info *b,
                                int64_t ts, int64_t *offset, int64_t *record_ts)
{
    uint8_t *buf = mem_alloc((size_t)b->size);
    int rc = segment_read_batch(seg, b, buf);
    if (rc == 0)
        rc = kbatch_find_timestamp(buf, (size_t)b->size, ts, log->log_start,
                                   PLOG_TIMESTAMP_MAX_DECOMPRESSED, offset, record_ts);
    mem_free(buf);
    if (rc == -ERR_TOO_LARGE) { /* not worth 64 MiB: the batch stands for its records */
        *offset = MAX(b->base, log->log_start);
        *record_ts = b->max_ts;
        rc = 1;
    }
    return rc;
}

int plog_offset_for_timestamp(struct plog *log, int64_t ts, int64_t *offset, int64_t *record_ts)
{
    *offset = -1;
    *record_ts = -1;
    for (size_t i = 0; i < log->n_segs; i++) {
        struct segment *seg = log->segs[i];
        if (seg->max_ts < ts || seg->end <= log->log_start)
            continue;
        int rc = load_index(log, seg);
        if (rc != 0)
            return rc;
        int64_t from_pos = 0;
        struct tindex_entry te;
        struct oindex_entry oe;
        if (tindex_floor_below(&seg->tidx, ts, &te) && oindex_floor(&seg->oidx, te.rel, &oe))
            from_pos = oe.pos;
        struct batch_info b;
        rc = segment_find_timestamp(seg, from_pos, ts, log->log_start, &b);
        if (rc == -ERR_CORRUPT && from_pos > 0) {
            rc = repair_index(log, seg, seg->base);
            if (rc == 0)
                rc = segment_find_timestamp(seg, 0, ts, log->log_start, &b);
        }
        /* a batch reaches ts: its first record that does, or the next batch's */
        while (rc == 1) {
            rc = batch_find_timestamp(log, seg, &b, ts, offset, record_ts);
            if (rc == 1)
                return 0;
            if (rc == 0)
                rc = segment_find_timestamp(seg, b.pos + b.size, ts, log->log_start, &b);
        }
        if (rc < 0) {
            *offset = -1;
            *record_ts = -1;
            return rc;
        }
    }
    return 0;
}

int plog_offset_for_max_timestamp(struct plog *log, int64_t *offset, int64_t *record_ts)
{
    int64_t max_ts = -1;
    for (size_t i = 0; i < log->n_segs; i++)
        if (log->segs[i]->end > log->log_start && log->segs[i]->max_ts > max_ts)
            max_ts = log->segs[i]->max_ts;
    if (max_ts < 0) {
        *offset = -1;
        *record_ts = -1;
        return 0;
    }
    return plog_offset_for_timestamp(log, max_ts, offset, record_ts);
}

/* ---- truncation ---- */

int plog_truncate_suffix(struct plog *log, int64_t offset)
{
    DCHECK((plog_check(log), true));
    CHECK(offset >= log->hw && offset >= log->log_start);
    if (offset >= leo(log))
        return 0;
    if (log->fenced)
        return -ERR_FENCED;
    /* rare (Raft conflicts): stop a compaction pass rather than reason about one in flight */
    if (log->clean_job)
        clean_job_abandon(log->clean_job);
    size_t i = find_segment(log, offset);
    struct segment *seg = log->segs[i];
    struct batch_info b;
    int slot;
    int rc = load_index(log, seg);
    if (rc == 0)
        rc = locate(log, seg, offset, &b, &slot);
    if (rc < 0) {
        fence(log, "truncate", rc);
        return rc;
    }
    hints_clear(log);
    log->gen++;
    if (rc == 1 && b.pos == 0 && i > 0) {
        /* the cut falls on a segment boundary: the previous segment becomes active again */
        drop_after(log, i - 1, &(struct plog_recovery){0}, "truncate_suffix");
        seg = active(log);
        rc = load_index(log, seg);
        if (rc != 0) {
            fence(log, "truncate", rc);
            return rc;
        }
        seg->sealed = false;
        seg->dirty = true;
        seg->first_append_ms = seg->size > 0 ? time_wall_ms() : -1;
    } else {
        drop_after(log, i, &(struct plog_recovery){0}, "truncate_suffix");
        if (rc == 1) {
            int64_t before = seg->size;
            rc = segment_truncate(seg, &b, MIN(b.base, offset), log->cfg.index_interval_bytes);
            log->size_bytes -= before - seg->size;
            if (rc != 0) {
                fence(log, "truncate", rc);
                return rc;
            }
        }
        seg->sealed = false;
        if (seg->size == 0)
            seg->first_append_ms = -1;
    }
    log->hw = MIN(log->hw, leo(log));
    log->durable = MIN(log->durable, leo(log));
    if (epoch_cache_truncate_end(&log->epochs, leo(log))) {
        epochs_changed(log);
        rc = store_epochs_now(log);
        if (rc != 0) {
            fence(log, "epoch_checkpoint", rc);
            return rc;
        }
    }
    if (log->rp > leo(log)) {
        /* invariant 7: the truncated range will be rewritten before it is synced again */
        rc = rp_write(log, leo(log), true);
        if (rc != 0) {
            fence(log, "recovery_point", rc);
            return rc;
        }
        log->rp = leo(log);
    }
    log_info("log_truncated_suffix", "dir=%s offset=%" PRId64 " log_end=%" PRId64, log->dir, offset,
             leo(log));
    if (log->hooks.truncated)
        log->hooks.truncated(log, leo(log), log->hooks.data);
    DCHECK((plog_check(log), true));
    return 0;
}

/* Deletes the segments wholly below log start (one with a swap pending waits). */
static bool drop_below_start(struct plog *log)
{
    bool deleted = false;
    while (log->n_segs > 1 && log->segs[1]->base <= log->log_start && !log->segs[0]->swapping) {
        drop_segment(log, 0, "log_start_offset");
        deleted = true;
    }
    return deleted;
}

/* Drops log-start bookkeeping after segments were deleted from the front. */
static void after_front_delete(struct plog *log)
{
    log->log_start = MAX(log->log_start, log->segs[0]->base);
    log->hw = MAX(log->hw, log->log_start);
    if (epoch_cache_truncate_start(&log->epochs, log->log_start))
        epochs_changed(log);
    /* deletions are rare: make them durable now rather than resurrect segments after a crash */
    int rc = io_fsync_dir(dirfd_of(log));
    if (rc != 0)
        log_warn("dir_fsync_failed", "dir=%s error=\"%s\"", log->dir, err_str(rc));
}

int plog_truncate_prefix(struct plog *log, int64_t new_start)
{
    DCHECK((plog_check(log), true));
    CHECK(new_start <= log->hw);
    if (new_start <= log->log_start)
        return 0;
    int rc = write_offset_file(dirfd_of(log), LOG_START_FILE, new_start, true);
    if (rc != 0)
        return rc;
    log->log_start = new_start;
    bool deleted = drop_below_start(log);
    if (epoch_cache_truncate_start(&log->epochs, log->log_start))
        epochs_changed(log);
    if (deleted)
        after_front_delete(log);
    DCHECK((plog_check(log), true));
    return 0;
}

static int64_t segment_age_ts(const struct plog *log, const struct segment *seg)
{
    if (seg->max_ts >= 0)
        return seg->max_ts;
    /* no timestamps in the batches: fall back to the file's modification time */
    struct stat st;
    int fd = seg_fd(seg);
    if (fd < 0 || fstat(fd, &st) != 0)
        return INT64_MAX;
    return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

int plog_apply_retention(struct plog *log, int64_t now_ms)
{
    DCHECK((plog_check(log), true));
    int deleted = 0;
    if (log->swap_pending)
        return 0; /* invariant 9; the next call will do */
    /* only whole sealed segments, and only those below HW (Raft may still need the rest) */
    while (log->cfg.retention_ms >= 0 && log->n_segs > 1 && log->segs[1]->base <= log->hw &&
           segment_age_ts(log, log->segs[0]) < now_ms - log->cfg.retention_ms) {
        drop_segment(log, 0, "retention_ms");
        deleted++;
    }
    while (log->cfg.retention_bytes >= 0 && log->n_segs > 1 && log->segs[1]->base <= log->hw &&
           log->size_bytes - log->segs[0]->size >= log->cfg.retention_bytes) {
        drop_segment(log, 0, "retention_bytes");
        deleted++;
    }
    if (deleted)
        after_front_delete(log);
    DCHECK((plog_check(log), true));
    return deleted;
}

int64_t plog_retention_start(const struct plog *log, int64_t now_ms)
{
    DCHECK((plog_check(log), true));
    if (log->swap_pending)
        return log->log_start;
    /* the same walk as plog_apply_retention, without deleting */
    size_t i = 0;
    int64_t size = log->size_bytes;
    while (log->cfg.retention_ms >= 0 && i + 1 < log->n_segs && log->segs[i + 1]->base <= log->hw &&
           segment_age_ts(log, log->segs[i]) < now_ms - log->cfg.retention_ms) {
        size -= log->segs[i]->size;
        i++;
    }
    while (log->cfg.retention_bytes >= 0 && i + 1 < log->n_segs &&
           log->segs[i + 1]->base <= log->hw &&
           size - log->segs[i]->size >= log->cfg.retention_bytes) {
        size -= log->segs[i]->size;
        i++;
    }
    return i == 0 ? log->log_start : MAX(log->log_start, log->segs[i]->base);
}

int plog_reset(struct plog *log, int64_t offset)
{
    DCHECK((plog_check(log), true));
    CHECK(offset >= 0);
    if (log->fenced)
        return -ERR_FENCED;
    if (log->clean_job)
        clean_job_abandon(log->clean_job);
    if (log->req.fl)
        flusher_quiesce(log->req.fl, &log->req); /* no checkpoint store of its overtakes ours */
    int dfd = dirfd_of(log);
    /* the commit point: once the marker is durable, the reset happens (open finishes it) */
    int rc = write_offset_file(dfd, LOG_RESET_FILE, offset, true);
    if (rc != 0)
        return rc;
    rc = reset_dir(log, offset);
    plog_forget_open_listing(log); /* stale, and only an open needs one */
    struct segment *seg = NULL;
    if (rc == 0)
        rc = segment_create(dfd, offset, &seg);
    if (rc == 0)
        rc = io_fsync_dir(dfd);
    if (seg)
        attach(log, seg);
    if (rc != 0) {
        if (seg)
            segment_free(seg);
        fence(log, "reset", rc); /* the next open finishes the reset */
        return rc;
    }
    /* memory: the files are gone already (the flusher may still hold references) */
    for (size_t i = 0; i < log->n_segs; i++)
        segment_free(log->segs[i]);
    log->n_segs = 0;
    log->size_bytes = 0;
    push_segment(log, seg);
    hints_clear(log);
    log->gen++; /* syncs in flight name old offsets */
    log->dir_dirty = false;
    log->log_start = log->hw = log->durable = log->rp = offset;
    log->rp_written_ms = time_mono_ms();
    epoch_cache_free(&log->epochs);
    epoch_cache_init(&log->epochs);
    log->epochs_version++;
    epochs_stored(log, log->epochs_version); /* reset_dir stored the empty checkpoint */
    log->clean_first_dirty = 0;
    log->clean_gaps_below = -1;
    log->clean_horizon_ms = -1;
    log_info("log_reset", "dir=%s offset=%" PRId64, log->dir, offset);
    if (log->hooks.reset)
        log->hooks.reset(log, offset, log->hooks.data);
    else if (log->hooks.truncated)
        log->hooks.truncated(log, offset, log->hooks.data);
    DCHECK((plog_check(log), true));
    return 0;
}

/* ---- derived state: hooks and header scans ---- */

void plog_set_hooks(struct plog *log, const struct plog_hooks *hooks)
{
    log->hooks = hooks ? *hooks : (struct plog_hooks){0};
}

/* Collects the file positions of the batches of seg whose epoch is below floor. */
static int low_epoch_positions(const struct segment *seg, int32_t floor, int64_t **pos,
                               size_t *n, size_t *cap)
{
    int fd = seg_fd(seg);
    if (fd < 0)
        return fd;
    uint8_t buf[SEGMENT_SCAN_BUF];
    struct batch_scanner sc;
    scanner_init(&sc, fd, 0, seg->size, buf, sizeof(buf));
    for (;;) {
        struct batch_info b;
        const char *why;
        int rc = scanner_next(&sc, &b, &why);
        if (rc < 0)
            return rc == -ERR_SHORT ? -ERR_CORRUPT : rc;
        if (rc == 0)
            return 0;
        if (b.epoch < floor) {
            MEM_GROW(*pos, *cap, *n + 1);
            (*pos)[(*n)++] = b.pos;
        }
    }
}

int plog_raise_epochs(struct plog *log, int32_t floor)
{
    if (log->fenced)
        return -ERR_FENCED;
    if (floor < 0)
        return -ERR_INVALID;
    int rc = 0;
    uint8_t be[4];
    be_put32(be, (uint32_t)floor);
    /* last segment first, last batch first: a crash at any point leaves epochs that never
     * decrease along the log (the untouched low ones before the raised ones), which recovery
     * accepts, and running this again finishes the job */
    size_t raised = 0;
    for (size_t i = log->n_segs; i-- > 0 && rc == 0;) {
        struct segment *seg = log->segs[i];
        int64_t *pos = NULL;
        size_t n = 0, cap = 0;
        rc = low_epoch_positions(seg, floor, &pos, &n, &cap);
        int fd = rc == 0 && n > 0 ? seg_fd(seg) : 0;
        if (fd < 0)
            rc = fd;
        for (size_t k = n; k-- > 0 && rc == 0;)
            rc = io_pwrite_all(fd, be, sizeof(be), pos[k] + KBATCH_OFF_LEADER_EPOCH, NULL);
        if (rc == 0 && n > 0)
            rc = io_fdatasync(fd);
        raised += n;
        mem_free(pos);
    }
    if (rc != 0) {
        fence(log, "raise_epochs", rc);
        return rc;
    }
    if (raised == 0)
        return 0;
    rc = rebuild_epochs(log, log->n_segs);
    if (rc == 0)
        rc = store_epochs_now(log);
    if (rc != 0)
        fence(log, "raise_epochs", rc);
    log_info("log_epochs_raised", "dir=%s batches=%zu epoch=%" PRId32, log->dir, raised, floor);
    return rc;
}

int plog_scan_headers(struct plog *log, int64_t from, plog_header_fn fn, void *data)
{
    from = MAX(from, log->log_start);
    if (from >= leo(log))
        return 0;
    uint8_t buf[SEGMENT_SCAN_BUF]; /* as segment.c's scans: a heap block each was a restart's
                                    * largest allocation cost */
    int rc = 0;
    for (size_t i = find_segment(log, from); i < log->n_segs && rc == 0; i++) {
        struct segment *seg = log->segs[i];
        if (seg->size == 0 || seg->end <= from)
            continue;
        int64_t pos = 0;
        if (from > seg->base) {
            struct batch_info b;
            int slot;
            int found = locate(log, seg, from, &b, &slot);
            if (found < 0) {
                rc = found;
                break;
            }
            if (found == 0)
                continue;
            pos = b.pos;
        }
        int fd = seg_fd(seg);
        if (fd < 0) {
            rc = fd;
            break;
        }
        struct batch_scanner s;
        scanner_init_seg(&s, fd, seg, pos, buf, SEGMENT_SCAN_BUF);
        for (;;) {
            struct batch_info b;
            const char *why;
            rc = scanner_next(&s, &b, &why);
            if (rc <= 0)
                break;
            /* the header just read is still in the scanner's buffer */
            rc = fn(s.data + (b.pos - s.buf_pos), b.size, data);
            if (rc != 0)
                break;
        }
        if (rc == -ERR_SHORT)
            rc = -ERR_CORRUPT;
    }
    return rc;
}

/* ---- compaction (storage/cleaner.h) ---- */

int64_t plog_cleaned_offset(const struct plog *log)
{
    return MAX(log->clean_first_dirty, log->log_start);
}

/* Number of leading segments the cleaner may rewrite now. */
static size_t cleanable_prefix(const struct plog *log, int64_t now_ms)
{
    int64_t lag = log->cfg.min_compaction_lag_ms;
    size_t i = 0;
    for (; i + 1 < log->n_segs; i++) {
        const struct segment *s = log->segs[i];
        /* dirty: not yet handed to a sync; HW: Raft may still truncate above it */
        if (s->dirty || s->swapping || s->end > log->hw)
            break;
        /* min.compaction.lag.ms against the newest record; a segment without timestamps
         * (emptied by an earlier clean) holds nothing to protect */
        if (lag > 0 && s->max_ts >= 0 && s->max_ts > now_ms - lag)
            break;
    }
    return i;
}

bool plog_clean_candidate(struct plog *log, int64_t now_ms, bool force, double *score)
{
    *score = 0;
    if (!log->cfg.compact || log->fenced || log->clean_disabled || log->clean_job)
        return false;
    size_t u = cleanable_prefix(log, now_ms);
    if (u == 0)
        return false;
    if (force) {
        *score = 1;
        return true;
    }
    int64_t first_dirty = MAX(log->clean_first_dirty, log->segs[0]->base);
    int64_t clean = 0, dirty = 0;
    for (size_t i = 0; i < u; i++) {
        if (log->segs[i]->end <= first_dirty)
            clean += log->segs[i]->size;
        else
            dirty += log->segs[i]->size;
    }
    if (clean + dirty > 0)
        *score = (double)dirty / (double)(clean + dirty);
    if (dirty > 0 && *score > log->cfg.min_cleanable_dirty_ratio)
        return true;
    return log->clean_horizon_ms >= 0 && now_ms >= log->clean_horizon_ms;
}

int plog_clean_prepare(struct plog *log, int64_t now_ms, struct clean_job *job)
{
    CHECK(!log->clean_job);
    size_t u = cleanable_prefix(log, now_ms);
    if (u == 0)
        return 1;
    job->log = log;
    struct fileref *dref;
    int rc = dir_ref(log, &dref);
    if (rc != 0)
        return rc;
    struct clean_seg *segs = mem_calloc(u, sizeof(*segs));
    for (size_t i = 0; i < u && rc == 0; i++) {
        const struct segment *s = log->segs[i];
        segs[i] = (struct clean_seg){s->base, s->end, s->size, NULL, s->id};
        rc = segment_file(s, &segs[i].file);
    }
    if (rc != 0) {
        for (size_t i = 0; i < u; i++)
            fileref_put(segs[i].file);
        mem_free(segs);
        fileref_put(dref);
        return rc;
    }
    job->dir = mem_strdup(log->dir);
    job->dirref = dref;
    job->segs = segs;
    job->n_segs = u;
    job->first_dirty = MAX(log->clean_first_dirty, log->segs[0]->base);
    job->log_end = leo(log);
    job->ckpt = (struct clean_checkpoint){log->clean_first_dirty, log->clean_gaps_below,
                                          log->clean_horizon_ms};
    job->now_ms = now_ms;
    job->delete_retention_ms = log->cfg.delete_retention_ms;
    job->segment_bytes = log->cfg.segment_bytes;
    job->index_interval = log->cfg.index_interval_bytes;
    log->clean_job = job;
    return 0;
}

int plog_clean_commit(struct plog *log, struct clean_job *job)
{
    DCHECK((plog_check(log), true));
    CHECK(log->clean_job == job && job->out && !log->swap_pending);
    const struct clean_group *g = &job->groups[job->cur];
    const struct clean_seg *old = job->segs + g->first;
    if (log->fenced)
        return -ERR_FENCED;
    /* the group must be exactly what the pass read (segment ids are never reused) */
    size_t i = find_segment(log, g->base);
    if (log->segs[i]->base != g->base || i + g->n >= log->n_segs)
        return -ERR_CLOSED;
    for (size_t k = 0; k < g->n; k++) {
        const struct segment *s = log->segs[i + k];
        if (s->id != old[k].id || !s->sealed || s->dirty || s->swapping ||
            s->size != old[k].size || s->end != old[k].end)
            return -ERR_CLOSED;
    }
    if (log->segs[i + g->n]->base != g->end || g->end > log->hw)
        return -ERR_CLOSED;
    int rc = io_rename(dirfd_of(log), job->cleaned_name, job->swap_name);
    if (rc != 0)
        return rc;
    /* committed (once the rename is durable): from here on the new segment is the log */
    struct segment *seg = attach(log, job->out);
    job->out = NULL;
    seg->sealed = true;
    seg->swapping = true;
    seg->dirty = false;
    seg->end = g->end;
    log->clean_gaps_below = MAX(log->clean_gaps_below, g->end);
    seg->gaps_below = log->clean_gaps_below;
    int64_t before = 0;
    for (size_t k = 0; k < g->n; k++) {
        before += log->segs[i + k]->size;
        segment_free(log->segs[i + k]);
    }
    memmove(log->segs + i + 1, log->segs + i + g->n, (log->n_segs - i - g->n) * sizeof(*log->segs));
    log->n_segs -= g->n - 1;
    log->segs[i] = seg;
    log->size_bytes += seg->size - before;
    seg->index_tick = ++log->tick;
    log->swap_pending = true;
    hints_clear(log);
    DCHECK((plog_check(log), true));
    return 0;
}

void plog_clean_swapped(struct plog *log, int64_t base)
{
    size_t i = find_segment(log, base);
    struct segment *seg = log->segs[i];
    CHECK(seg->base == base && seg->swapping);
    seg->swapping = false;
    log->swap_pending = false;
    /* what truncate_prefix could not delete while the swap was pending */
    if (drop_below_start(log))
        after_front_delete(log);
    evict_indexes(log);
    DCHECK((plog_check(log), true));
}

void plog_clean_finished(struct plog *log, struct clean_job *job)
{
    CHECK(log->clean_job == job);
    log->clean_job = NULL;
    if (job->rc == 0) {
        log->clean_first_dirty = MAX(log->clean_first_dirty, job->map_end);
        log->clean_horizon_ms = job->horizon_ms;
    } else if (job->rc == -ERR_CORRUPT || job->rc == -ERR_UNSUPPORTED ||
               job->rc == -ERR_TOO_LARGE || job->rc == -ERR_LIMIT) {
        log->clean_disabled = true;
        log_error("cleaner_disabled", "dir=%s offset=%" PRId64 " reason=%s error=\"%s\"", log->dir,
                  job->bad_offset, job->why ? job->why : "unknown", err_str(job->rc));
    }
    if (job->fence)
        fence(log, "cleaner_swap", job->rc);
}
