/* The log cleaner's threads, passes and swap protocol (storage/cleaner.h).
 *
 * Owns: the cleaner threads, a FIFO of jobs waiting for a thread, a FIFO of completions for
 * the reactor (with the eventfd that signals them), the registry of live jobs, the offers of
 * the current dispatch round and the statistics.
 *
 * A job (one pass over one log) moves through phases; the thread runs the *_step functions,
 * the reactor everything else:
 *   BUILD  --step_build-->   COMMIT (a group's .cleaned file is ready) or DONE
 *   COMMIT --commit (R1)-->  SWAP, or DONE when the log changed under the pass
 *   SWAP   --step_swap-->    COMMIT (next group) or DONE
 *   DONE   --finish_job-->   freed (the plog is told, the pass logged)
 * step_swap also reports "group swapped" (R2) as soon as the files are in place.
 *
 * Invariants:
 *   1. A job is in at most one of: the thread queue (queued), a thread (running), the
 *      completion FIFO (one STEP entry; SWAPPED entries may precede it), or the reactor's hands.
 *   2. A thread touches only the job's own state, the files it names and the references it
 *      holds; never the plog.
 *   3. clean_job_abandon waits out `running` and removes the job's queue and completion
 *      entries, so no freed job or log is ever reached from a queue.
 *   4. The thread never holds the mutex while working. */
#include "storage/cleaner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "base/check.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "kafka/batch.h"
#include "storage/compact.h"
#include "storage/io.h"
#include "storage/plog.h"
#include "storage/segment.h"

#define READ_CHUNK (1u << 20)     /* segment bytes read at once */
#define WRITE_CHUNK (1u << 20)    /* output bytes buffered before a write */
#define PIDS_MAP_BYTES (4u << 20) /* producer ids of one pass (~130k) */
#define BATCH_MAX (128 << 20)     /* larger batches stop the pass (memory bound) */
#define SWAP_NAME_LEN 46          /* "%020lld-%020lld.swap" */

enum completion_kind {
    EV_STEP,    /* a step ended: the job's phase says what is next */
    EV_SWAPPED, /* the files of the swap at base are in place (R2) */
};

struct completion {
    struct clean_job *job;
    enum completion_kind kind;
    int64_t base;
};

struct offer {
    struct plog *log;
    double score;
    int64_t now_ms;
};

struct cleaner {
    pthread_t *threads;
    int n_threads;
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* threads wait for work */
    pthread_cond_t idle_cv; /* abandon waits for a running job */
    struct clean_job *head; /* thread queue */
    struct clean_job *tail;
    struct completion *done; /* FIFO for the reactor */
    size_t n_done;
    size_t cap_done;
    struct clean_job *jobs; /* registry (reactor thread only) */
    int n_jobs;
    struct offer *offers; /* this dispatch round (reactor thread only) */
    size_t n_offers;
    size_t cap_offers;
    size_t map_bytes; /* per job */
    int64_t io_rate;
    bool keep_batches; /* cleaner_config's */
    int efd;
    bool stop;
    struct cleaner_stats stats; /* reactor thread only */
};

static void lock(struct cleaner *cl)
{
    CHECK(pthread_mutex_lock(&cl->mu) == 0);
}
static void unlock(struct cleaner *cl)
{
    CHECK(pthread_mutex_unlock(&cl->mu) == 0);
}

static bool cancelled(const struct clean_job *j)
{
    return __atomic_load_n(&j->cancel, __ATOMIC_ACQUIRE) != 0;
}

/* ---- checkpoint ---- */

int clean_checkpoint_read(int dirfd, struct clean_checkpoint *out)
{
    char buf[128];
    ssize_t n = io_read_small_file(dirfd, CLEANER_CHECKPOINT_FILE, buf, sizeof(buf) - 1);
    if (n < 0)
        return n == -ERR_TOO_LARGE ? -ERR_CORRUPT : (int)n;
    buf[n] = 0;
    long long v[4];
    char *p = buf, *end;
    for (int i = 0; i < 4; i++) {
        errno = 0;
        v[i] = strtoll(p, &end, 10);
        if (errno || end == p || (*end != ' ' && *end != '\n'))
            return -ERR_CORRUPT;
        p = end + 1;
    }
    if (*end != '\n' || *p != 0 || v[0] != 1 || v[1] < 0 || v[2] < -1 || v[3] < -1)
        return -ERR_CORRUPT;
    *out = (struct clean_checkpoint){v[1], v[2], v[3]};
    return 0;
}

int clean_checkpoint_write(int dirfd, const struct clean_checkpoint *c, bool sync)
{
    char buf[128];
    int n = snprintf(buf, sizeof(buf), "1 %" PRId64 " %" PRId64 " %" PRId64 "\n", c->first_dirty,
                     c->gaps_below, c->horizon_ms);
    return io_write_file_atomic(dirfd, CLEANER_CHECKPOINT_FILE, buf, (size_t)n, sync);
}

/* ---- recovery of interrupted swaps ---- */

/* "X-E.swap" -> X, E. */
static bool parse_swap_name(const char *name, int64_t *base, int64_t *end)
{
    return strlen(name) == SWAP_NAME_LEN && name[20] == '-' && !strcmp(name + 41, ".swap") &&
           segment_name_offset(name, base) && segment_name_offset(name + 21, end) && *base < *end;
}

struct swap_file {
    int64_t base;
    int64_t end;
};

static int cmp_swap(const void *a, const void *b)
{
    const struct swap_file *x = a, *y = b;
    return x->base < y->base ? -1 : x->base > y->base;
}

int cleaner_recover_dir(int dirfd, const char *dir, const struct io_dir_list *names)
{
    struct swap_file *swaps = NULL;
    size_t n_swaps = 0, cap_swaps = 0;
    int64_t *bases = NULL;
    size_t n_bases = 0, cap_bases = 0;
    int rc = 0;
    bool changed = false;
    size_t pos = 0;
    for (const char *name; (name = io_dir_list_next(names, &pos)) != NULL;) {
        struct swap_file sw;
        int64_t base;
        if (io_has_suffix(name, ".cleaned")) {
            /* an uncommitted pass: the old segments are the log */
            int r = io_unlink(dirfd, name);
            if (r != 0 && rc == 0)
                rc = r;
            changed = true;
            log_info("cleaner_output_discarded", "dir=%s file=%s", dir, name);
        } else if (parse_swap_name(name, &sw.base, &sw.end)) {
            MEM_GROW(swaps, cap_swaps, n_swaps + 1);
            swaps[n_swaps++] = sw;
        } else if (strlen(name) == 24 && !strcmp(name + 20, ".log") &&
                   segment_name_offset(name, &base)) {
            MEM_GROW(bases, cap_bases, n_bases + 1);
            bases[n_bases++] = base;
        }
    }
    changed |= n_swaps > 0;
    if (n_swaps > 1)
        qsort(swaps, n_swaps, sizeof(*swaps), cmp_swap);
    for (size_t i = 0; i < n_swaps && rc == 0; i++) {
        const struct swap_file *sw = &swaps[i];
        /* committed: whatever is left of the old segments in [base, end) goes first */
        int removed = 0;
        for (size_t k = 0; k < n_bases && rc == 0; k++) {
            if (bases[k] >= sw->base && bases[k] < sw->end) {
                rc = segment_remove_files(dirfd, bases[k]);
                removed++;
            }
        }
        if (rc == 0)
            rc = io_fsync_dir(dirfd);
        char from[SWAP_NAME_LEN + 1], to[SEGMENT_NAME_MAX];
        snprintf(from, sizeof(from), "%020" PRId64 "-%020" PRId64 ".swap", sw->base, sw->end);
        segment_file_name(to, sizeof(to), sw->base, ".log");
        if (rc == 0)
            rc = io_rename(dirfd, from, to);
        if (rc == 0)
            rc = io_fsync_dir(dirfd);
        if (rc == 0)
            log_info("cleaner_swap_completed",
                     "dir=%s base_offset=%" PRId64 " end_offset=%" PRId64 " old_segments=%d", dir,
                     sw->base, sw->end, removed);
    }
    if (rc != 0)
        log_error("cleaner_recovery_failed", "dir=%s error=\"%s\"", dir, err_str(rc));
    mem_free(swaps);
    mem_free(bases);
    return rc != 0 ? rc : changed;
}

/* ---- reading segments ---- */

/* Reads the batches of one old segment in order, checking what the cleaner relies on: whole
 * batches inside the file, magic 2, offsets increasing and inside [base, end). */
struct seg_reader {
    struct clean_job *j;
    const struct clean_seg *seg;
    int64_t pos;       /* next batch */
    int64_t prev_last; /* last offset of the previous batch */
    int64_t buf_pos;   /* file position of j->buf[0] */
    size_t buf_len;
};

static void reader_init(struct seg_reader *r, struct clean_job *j, const struct clean_seg *seg)
{
    *r = (struct seg_reader){j, seg, 0, seg->base - 1, 0, 0};
}

/* Makes [pos, pos + n) available in the job's buffer. */
static int reader_fill(struct seg_reader *r, int64_t pos, size_t n)
{
    struct clean_job *j = r->j;
    if (pos >= r->buf_pos && pos + (int64_t)n <= r->buf_pos + (int64_t)r->buf_len)
        return 0;
    size_t want = MAX(n, (size_t)READ_CHUNK);
    want = (size_t)MIN((int64_t)want, r->seg->size - pos);
    if (want < n)
        return -ERR_CORRUPT;
    if (want > j->buf_cap) {
        mem_free(j->buf);
        j->buf = mem_alloc(want);
        j->buf_cap = want;
    }
    ssize_t got = io_pread_full(r->seg->file->fd, j->buf, want, pos);
    if (got < 0)
        return (int)got;
    r->buf_pos = pos;
    r->buf_len = (size_t)got;
    return (size_t)got < n ? -ERR_CORRUPT : 0;
}

/* 1 with *p / *len (valid until the next call), 0 at the end, -ERR_CORRUPT (j->why) or -errno. */
static int reader_next(struct seg_reader *r, const uint8_t **p, size_t *len)
{
    struct clean_job *j = r->j;
    const struct clean_seg *seg = r->seg;
    if (r->pos >= seg->size)
        return 0;
    j->bad_offset = r->prev_last + 1;
    if (seg->size - r->pos < KBATCH_HEADER_SIZE) {
        j->why = "partial_header";
        return -ERR_CORRUPT;
    }
    int rc = reader_fill(r, r->pos, KBATCH_HEADER_SIZE);
    if (rc != 0) {
        j->why = "read_failed";
        return rc;
    }
    const uint8_t *h = j->buf + (r->pos - r->buf_pos);
    int64_t base;
    int32_t blen;
    kbatch_peek(h, &base, &blen);
    int64_t size = (int64_t)blen + KBATCH_LOG_OVERHEAD;
    if (blen < KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD || size > seg->size - r->pos) {
        j->why = "bad_batch_length";
        return -ERR_CORRUPT;
    }
    if (size > BATCH_MAX) {
        j->why = "batch_too_large_for_cleaner";
        return -ERR_TOO_LARGE;
    }
    struct kbatch_header hd;
    kbatch_parse_header(h, &hd);
    if (hd.magic != KBATCH_MAGIC || hd.last_offset_delta < 0 || base <= r->prev_last ||
        base > seg->end - 1 - hd.last_offset_delta) {
        j->why = "bad_batch_header";
        j->bad_offset = base;
        return -ERR_CORRUPT;
    }
    rc = reader_fill(r, r->pos, (size_t)size);
    if (rc != 0) {
        j->why = "read_failed";
        return rc;
    }
    *p = j->buf + (r->pos - r->buf_pos);
    *len = (size_t)size;
    j->bad_offset = base;
    r->pos += size;
    r->prev_last = base + hd.last_offset_delta;
    return 1;
}

/* Honours log.cleaner.io.max.bytes.per.second (bytes read plus bytes written, since the pass
 * began) and cancellation. */
static int throttle(struct clean_job *j, size_t bytes)
{
    if (cancelled(j))
        return -ERR_CLOSED;
    if (j->io_rate <= 0)
        return 0;
    j->throttle_bytes += (int64_t)bytes;
    for (;;) {
        int64_t elapsed_ns = time_mono_ns() - j->start_ns;
        int64_t due_ns = (int64_t)((double)j->throttle_bytes * 1e9 / (double)j->io_rate);
        if (due_ns <= elapsed_ns)
            return 0;
        int64_t ns = MIN(due_ns - elapsed_ns, (int64_t)10000000);
        struct timespec ts = {0, (long)ns};
        nanosleep(&ts, NULL);
        if (cancelled(j))
            return -ERR_CLOSED;
    }
}

/* ---- step 1: producers and the key map ---- */

static int map_key(void *arg, int64_t offset, const uint8_t *key, size_t len)
{
    keymap_put(arg, key, len, offset);
    return 0;
}

static void note_producer(struct clean_job *j, const struct kbatch_header *h)
{
    if (h->producer_id < 0 || kbatch_is_control(h) || j->pids_full)
        return;
    int64_t pid = h->producer_id;
    if (keymap_get(&j->pids, &pid, sizeof(pid)) < 0 && keymap_room(&j->pids) == 0) {
        j->pids_full = true;
        return;
    }
    keymap_put(&j->pids, &pid, sizeof(pid), h->base_offset);
}

/* Maps the keys of one batch of the dirty range. Returns 0, 1 when the map is full (the
 * mapped range ends before this batch), or a negative code. */
static int map_batch(struct clean_job *j, const uint8_t *p, size_t len,
                     const struct kbatch_header *h)
{
    if (kbatch_is_control(h) || (h->attributes & KBATCH_ATTR_TRANSACTIONAL)) {
        int rc = kbatch_validate(p, len, false, false, 0);
        if (rc != 0)
            j->why = "corrupt_batch";
        return rc != 0 ? -ERR_CORRUPT : 0;
    }
    if (h->records_count < 0 || (size_t)h->records_count > keymap_room(&j->map)) {
        if (j->map.n > 0)
            return 1;
        j->why = "dedupe_buffer_too_small";
        return -ERR_LIMIT;
    }
    struct cbatch cb;
    int rc = cbatch_decode(&cb, p, len, COMPACT_MAX_DECOMPRESSED);
    if (rc == 0)
        rc = cbatch_each_key(&cb, map_key, &j->map);
    cbatch_free(&cb);
    if (rc != 0)
        j->why = "corrupt_batch";
    return rc;
}

/* One read over the cleanable prefix: every producer's last batch, and the key map of the
 * dirty range (until the map is full). Sets map_end. */
static int build_map(struct clean_job *j)
{
    bool full = false;
    j->map_end = MAX(j->first_dirty, j->segs[0].base);
    for (size_t i = 0; i < j->n_segs; i++) {
        struct seg_reader r;
        reader_init(&r, j, &j->segs[i]);
        const uint8_t *p;
        size_t len;
        int rc;
        while ((rc = reader_next(&r, &p, &len)) == 1) {
            struct kbatch_header h;
            kbatch_parse_header(p, &h);
            note_producer(j, &h);
            int64_t last = kbatch_last_offset(&h);
            if (!full && last >= j->first_dirty) {
                rc = map_batch(j, p, len, &h);
                if (rc < 0)
                    return rc;
                if (rc == 1)
                    full = true;
                else
                    j->map_end = last + 1;
            }
            rc = throttle(j, len);
            if (rc != 0)
                return rc;
        }
        if (rc < 0)
            return rc;
        /* a segment's tail gap belongs to the mapped range once all its batches are */
        if (!full && j->segs[i].end > j->first_dirty)
            j->map_end = MAX(j->map_end, j->segs[i].end);
    }
    j->st.map_full = full;
    j->st.keys = (int64_t)j->map.n;
    return 0;
}

/* Groups the segments to rewrite: all those starting below map_end. */
static void plan_groups(struct clean_job *j)
{
    size_t k = 0;
    while (k < j->n_segs && j->segs[k].base < j->map_end)
        k++;
    j->groups = mem_calloc(k ? k : 1, sizeof(*j->groups));
    int64_t bytes = 0;
    for (size_t i = 0; i < k; i++) {
        const struct clean_seg *s = &j->segs[i];
        struct clean_group *g = j->n_groups ? &j->groups[j->n_groups - 1] : NULL;
        if (g && bytes + s->size <= j->segment_bytes && s->end - g->base <= SEGMENT_REL_MAX) {
            g->n++;
            g->end = s->end;
            bytes += s->size;
            continue;
        }
        j->groups[j->n_groups++] = (struct clean_group){i, 1, s->base, s->end};
        bytes = s->size;
    }
}

/* ---- step 2: rewriting a group (C1) ---- */

struct out_writer {
    struct segment *seg;
    uint8_t *buf;
    size_t len;
    int64_t file_pos; /* where buf goes */
    size_t cap;       /* of buf (<= WRITE_CHUNK) */
};

static int out_flush(struct out_writer *w)
{
    if (w->len == 0)
        return 0;
    int rc = io_pwrite_all(w->seg->fe.file->fd, w->buf, w->len, (off_t)w->file_pos, NULL);
    w->file_pos += (int64_t)w->len;
    w->len = 0;
    return rc;
}

static int out_append(struct clean_job *j, struct out_writer *w, const uint8_t *p, size_t len)
{
    struct kbatch_header h;
    kbatch_parse_header(p, &h);
    struct batch_info b = {
        .pos = w->seg->size,
        .base = h.base_offset,
        .last = kbatch_last_offset(&h),
        .size = (int64_t)len,
        .max_ts = (int64_t)be_get64(p + KBATCH_OFF_MAX_TIMESTAMP),
        .epoch = h.partition_leader_epoch,
        .records = h.records_count,
    };
    if (w->len + len > w->cap) {
        int rc = out_flush(w);
        if (rc != 0)
            return rc;
    }
    if (len > w->cap) {
        int rc = io_pwrite_all(w->seg->fe.file->fd, p, len, (off_t)w->file_pos, NULL);
        if (rc != 0)
            return rc;
        w->file_pos += (int64_t)len;
    } else {
        memcpy(w->buf + w->len, p, len);
        w->len += len;
    }
    segment_note_batch(w->seg, &b, j->index_interval);
    return 0;
}

/* Whether the batch holds its producer's last sequence among the batches this pass saw. */
static bool producer_last(const struct clean_job *j, const struct kbatch_header *h)
{
    if (h->producer_id < 0)
        return false;
    if (j->pids_full)
        return true;
    int64_t pid = h->producer_id;
    return keymap_get(&j->pids, &pid, sizeof(pid)) == h->base_offset;
}

/* Writes the compacted batches of group g into w; *changed tells whether anything differs. */
static int rewrite_group(struct clean_job *j, const struct clean_group *g, struct out_writer *w,
                         bool *changed)
{
    struct compact_ctx ctx = {&j->map, j->map_end, j->now_ms, j->delete_retention_ms,
                              COMPACT_MAX_DECOMPRESSED};
    *changed = g->n > 1;
    for (size_t i = g->first; i < g->first + g->n; i++) {
        struct seg_reader r;
        reader_init(&r, j, &j->segs[i]);
        const uint8_t *p;
        size_t len;
        int rc;
        while ((rc = reader_next(&r, &p, &len)) == 1) {
            struct kbatch_header h;
            kbatch_parse_header(p, &h);
            struct compact_result res;
            rc = compact_batch(&ctx, p, len, j->keep_batches || producer_last(j, &h), &res);
            if (rc != 0) {
                j->why = "corrupt_batch";
                return rc;
            }
            if (kbatch_last_offset(&h) == j->log_end - 1 &&
                (res.kind == COMPACT_DROPPED || res.kind == COMPACT_EMPTY)) {
                /* the log's last batch stays whole (cleaner.h); no horizon to wake up for */
                mem_free(res.out);
                res = (struct compact_result){.kind = COMPACT_VERBATIM, .horizon_ms = -1};
            }
            j->st.bytes_read += (int64_t)len;
            if (res.decoded) {
                j->st.records_read += res.records_in;
                j->st.records_removed += res.records_in - res.records_kept;
                j->st.tombstones_removed += res.tombstones_dropped;
            }
            if (res.horizon_ms >= 0)
                j->horizon_ms =
                    j->horizon_ms < 0 ? res.horizon_ms : MIN(j->horizon_ms, res.horizon_ms);
            if (res.kind != COMPACT_VERBATIM)
                *changed = true;
            size_t written = 0;
            if (res.kind == COMPACT_VERBATIM) {
                rc = out_append(j, w, p, len);
                written = len;
            } else if (res.kind != COMPACT_DROPPED) {
                rc = out_append(j, w, res.out, res.out_len);
                written = res.out_len;
            }
            if (rc == 0)
                rc = throttle(j, len + written); /* read and written */
            mem_free(res.out);
            if (rc != 0) {
                j->why = rc == -ERR_CLOSED ? "cancelled" : "write_failed";
                return rc;
            }
        }
        if (rc < 0)
            return rc;
    }
    int rc = out_flush(w);
    if (rc != 0)
        j->why = "write_failed";
    return rc;
}

/* The pass is over: the checkpoint moves to the end of the mapped range. */
static void finish_pass(struct clean_job *j)
{
    struct clean_checkpoint ck = {MAX(j->map_end, j->ckpt.first_dirty), j->ckpt.gaps_below,
                                  j->horizon_ms};
    int rc = clean_checkpoint_write(j->dirref->fd, &ck, true);
    if (rc != 0) {
        /* the swaps are done; a stale checkpoint only means redoing work */
        log_warn("cleaner_checkpoint_write_failed", "dir=%s error=\"%s\"", j->dir, err_str(rc));
    }
    j->phase = CLEAN_DONE;
    j->rc = 0;
}

/* Writes groups from j->cur on until one changed (phase COMMIT) or none is left (DONE). */
static int write_next_group(struct clean_job *j)
{
    int dirfd = j->dirref->fd;
    for (; j->cur < j->n_groups; j->cur++) {
        const struct clean_group *g = &j->groups[j->cur];
        snprintf(j->cleaned_name, sizeof(j->cleaned_name), "%020" PRId64 "-%020" PRId64 ".cleaned",
                 g->base, g->end);
        snprintf(j->swap_name, sizeof(j->swap_name), "%020" PRId64 "-%020" PRId64 ".swap", g->base,
                 g->end);
        int fd = io_create(dirfd, j->cleaned_name, O_RDWR | O_TRUNC, 0644);
        if (fd < 0) {
            j->why = "create_failed";
            return fd;
        }
        int64_t group_bytes = 0;
        for (size_t i = g->first; i < g->first + g->n; i++)
            group_bytes += j->segs[i].size;
        size_t cap = (size_t)MIN(group_bytes + 1, (int64_t)WRITE_CHUNK);
        struct out_writer w = {segment_adopt(g->base, fd), mem_alloc(cap), 0, 0, cap};
        bool changed = false;
        int rc = rewrite_group(j, g, &w, &changed);
        mem_free(w.buf);
        if (rc == 0 && changed) {
            rc = io_fdatasync(fd);
            if (rc != 0)
                j->why = "fdatasync_failed";
        }
        if (rc == 0 && changed && g->end > j->ckpt.gaps_below) {
            /* before the commit: recovery must accept this group's gaps */
            struct clean_checkpoint ck = j->ckpt;
            ck.gaps_below = g->end;
            rc = clean_checkpoint_write(dirfd, &ck, true);
            if (rc == 0)
                j->ckpt.gaps_below = g->end;
            else
                j->why = "checkpoint_write_failed";
        }
        if (rc != 0 || !changed) {
            segment_free(w.seg);
            int r = io_unlink(dirfd, j->cleaned_name);
            if (r != 0)
                log_warn("cleaner_unlink_failed", "dir=%s file=%s error=\"%s\"", j->dir,
                         j->cleaned_name, err_str(r));
            if (rc != 0)
                return rc;
            continue;
        }
        struct segment *seg = w.seg;
        seg->end = g->end;
        if (seg->max_ts >= 0)
            tindex_maybe_append(&seg->tidx, seg->max_ts, (uint32_t)(seg->max_ts_offset - g->base));
        j->oidx = oindex_encode(&seg->oidx, &j->oidx_len);
        j->tidx = tindex_encode(&seg->tidx, &j->tidx_len);
        j->out_before = 0;
        for (size_t i = g->first; i < g->first + g->n; i++)
            j->out_before += j->segs[i].size;
        j->out = seg;
        j->phase = CLEAN_COMMIT;
        return 0;
    }
    finish_pass(j);
    return 0;
}

/* ---- the steps ---- */

static void post(struct clean_job *j, enum completion_kind kind, int64_t base);

static void fail(struct clean_job *j, int rc)
{
    j->phase = CLEAN_DONE;
    j->rc = rc;
    if (!j->why)
        j->why = rc == -ERR_CLOSED ? "cancelled" : "error";
}

static void step_build(struct clean_job *j)
{
    int64_t bytes = 0;
    for (size_t i = 0; i < j->n_segs; i++)
        bytes += j->segs[i].size;
    log_info("log_clean_started",
             "dir=%s segments=%zu bytes=%" PRId64 " first_dirty=%" PRId64 " end=%" PRId64, j->dir,
             j->n_segs, bytes, j->first_dirty, j->segs[j->n_segs - 1].end);
    j->st.first_dirty = j->first_dirty;
    keymap_init(&j->map, j->map_bytes);
    keymap_init(&j->pids, PIDS_MAP_BYTES);
    int rc = build_map(j);
    if (rc == 0) {
        j->bad_offset = -1;
        j->st.cleaned_upto = j->map_end;
        plan_groups(j);
        rc = write_next_group(j);
    }
    if (rc != 0)
        fail(j, rc);
}

/* C2: the group at j->cur is committed; puts its files in place. */
static int swap_files(struct clean_job *j)
{
    const struct clean_group *g = &j->groups[j->cur];
    int dirfd = j->dirref->fd;
    j->why = "swap_step_failed";
    int rc = io_fsync_dir(dirfd); /* the commit rename is durable... */
    for (size_t i = g->first; i < g->first + g->n && rc == 0; i++)
        rc = segment_remove_files(dirfd, j->segs[i].base);
    if (rc == 0)
        rc = io_fsync_dir(dirfd); /* ...and so are the unlinks, before X.log reappears */
    char name[SEGMENT_NAME_MAX];
    segment_file_name(name, sizeof(name), g->base, ".log");
    if (rc == 0)
        rc = io_rename(dirfd, j->swap_name, name);
    segment_file_name(name, sizeof(name), g->base, ".index");
    if (rc == 0)
        rc = io_write_file_atomic(dirfd, name, j->oidx, j->oidx_len, true);
    segment_file_name(name, sizeof(name), g->base, ".timeindex");
    if (rc == 0)
        rc = io_write_file_atomic(dirfd, name, j->tidx, j->tidx_len, true);
    mem_free(j->oidx);
    mem_free(j->tidx);
    j->oidx = j->tidx = NULL;
    if (rc != 0)
        return rc;
    j->why = NULL;
    j->st.segments_before += (int)g->n;
    j->st.segments_after++;
    j->st.bytes_before += j->out_before;
    return 0;
}

static void swapped(struct clean_job *j, int64_t base)
{
    if (j->cl)
        post(j, EV_SWAPPED, base);
    else
        j->swapped_base = base;
}

static void step_swap(struct clean_job *j)
{
    int rc = swap_files(j);
    if (rc != 0) {
        j->fence = true;
        fail(j, rc);
        return;
    }
    swapped(j, j->groups[j->cur].base);
    j->cur++;
    rc = write_next_group(j);
    if (rc != 0)
        fail(j, rc);
}

static void run_step(struct clean_job *j)
{
    if (j->phase == CLEAN_BUILD)
        step_build(j);
    else if (j->phase == CLEAN_SWAP)
        step_swap(j);
}

/* ---- jobs ---- */

static struct clean_job *job_new(struct cleaner *cl, size_t map_bytes, int64_t io_rate)
{
    struct clean_job *j = mem_calloc(1, sizeof(*j));
    j->cl = cl;
    j->keep_batches = cl && cl->keep_batches;
    j->map_bytes = map_bytes;
    j->io_rate = io_rate;
    j->phase = CLEAN_BUILD;
    j->start_ns = time_mono_ns();
    j->bad_offset = -1;
    j->horizon_ms = -1;
    j->swapped_base = -1;
    return j;
}

/* Removes the current group's uncommitted output. */
static void discard_output(struct clean_job *j)
{
    if (!j->out)
        return;
    segment_free(j->out);
    j->out = NULL;
    int rc = io_unlink(j->dirref->fd, j->cleaned_name);
    if (rc != 0)
        log_warn("cleaner_unlink_failed", "dir=%s file=%s error=\"%s\"", j->dir, j->cleaned_name,
                 err_str(rc));
    mem_free(j->oidx);
    mem_free(j->tidx);
    j->oidx = j->tidx = NULL;
}

static void job_free(struct clean_job *j)
{
    if (j->reg_pprev) {
        *j->reg_pprev = j->reg_next;
        if (j->reg_next)
            j->reg_next->reg_pprev = j->reg_pprev;
        j->cl->n_jobs--;
    }
    CHECK(!j->out);
    keymap_free(&j->map);
    keymap_free(&j->pids);
    for (size_t i = 0; i < j->n_segs; i++)
        fileref_put(j->segs[i].file);
    mem_free(j->segs);
    mem_free(j->groups);
    mem_free(j->oidx);
    mem_free(j->tidx);
    mem_free(j->buf);
    mem_free(j->dir);
    fileref_put(j->dirref);
    mem_free(j);
}

/* The pass is over: tells the log, logs the pass, frees the job. */
static void finish_job(struct clean_job *j)
{
    struct clean_pass_stats *st = &j->st;
    st->duration_ms = (time_mono_ns() - j->start_ns) / 1000000;
    plog_clean_finished(j->log, j);
    double secs = (double)MAX(st->duration_ms, 1) / 1000.0;
    double mbps = (double)st->bytes_read / 1e6 / secs;
    if (j->rc == 0) {
        log_info("log_cleaned",
                 "dir=%s segments_before=%d segments_after=%d bytes_before=%" PRId64
                 " bytes_after=%" PRId64 " bytes_read=%" PRId64 " records_read=%" PRId64
                 " records_removed=%" PRId64 " tombstones_removed=%" PRId64 " keys=%" PRId64
                 " first_dirty=%" PRId64 " cleaned_upto=%" PRId64 " map_full=%s"
                 " duration_ms=%" PRId64 " mb_per_s=%.1f",
                 j->dir, st->segments_before, st->segments_after, st->bytes_before, st->bytes_after,
                 st->bytes_read, st->records_read, st->records_removed, st->tombstones_removed,
                 st->keys, st->first_dirty, st->cleaned_upto, st->map_full ? "true" : "false",
                 st->duration_ms, mbps);
    } else if (j->rc == -ERR_CLOSED && j->why && !strcmp(j->why, "cancelled")) {
        log_debug("log_clean_stopped", "dir=%s reason=%s", j->dir, j->why ? j->why : "");
    } else {
        log_warn("log_clean_failed", "dir=%s reason=%s offset=%" PRId64 " error=\"%s\"", j->dir,
                 j->why ? j->why : "", j->bad_offset, err_str(j->rc));
    }
    struct cleaner *cl = j->cl;
    if (cl) {
        struct cleaner_stats *s = &cl->stats;
        if (j->rc == 0) {
            s->passes++;
            s->last_duration_ms = st->duration_ms;
            s->max_duration_ms = MAX(s->max_duration_ms, st->duration_ms);
            s->last_mb_per_s = mbps;
        } else {
            s->passes_failed++;
        }
        s->bytes_read += (uint64_t)st->bytes_read;
        s->bytes_written += (uint64_t)st->bytes_after;
        s->bytes_reclaimed += (uint64_t)MAX(st->bytes_before - st->bytes_after, 0);
        s->records_removed += (uint64_t)st->records_removed;
        s->tombstones_removed += (uint64_t)st->tombstones_removed;
    }
    job_free(j);
}

/* R1 for the job's current group; on failure the pass ends. */
static void commit(struct clean_job *j)
{
    int64_t size = j->out->size;
    int rc = plog_clean_commit(j->log, j);
    if (rc == 0) {
        j->st.bytes_after += size;
        j->phase = CLEAN_SWAP;
        return;
    }
    discard_output(j);
    j->why = rc == -ERR_CLOSED ? "log_changed" : "commit_failed";
    fail(j, rc);
}

/* ---- threads ---- */

static void wake_reactor(struct cleaner *cl)
{
    uint64_t one = 1;
    while (write(cl->efd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
}

static void post(struct clean_job *j, enum completion_kind kind, int64_t base)
{
    struct cleaner *cl = j->cl;
    lock(cl);
    MEM_GROW(cl->done, cl->cap_done, cl->n_done + 1);
    cl->done[cl->n_done++] = (struct completion){j, kind, base};
    unlock(cl);
    wake_reactor(cl);
}

static void enqueue(struct cleaner *cl, struct clean_job *j)
{
    lock(cl);
    j->next = NULL;
    j->queued = true;
    if (cl->tail)
        cl->tail->next = j;
    else
        cl->head = j;
    cl->tail = j;
    CHECK(pthread_cond_signal(&cl->work_cv) == 0);
    unlock(cl);
}

static void *thread_main(void *arg)
{
    struct cleaner *cl = arg;
    lock(cl);
    for (;;) {
        while (!cl->stop && !cl->head)
            CHECK(pthread_cond_wait(&cl->work_cv, &cl->mu) == 0);
        if (cl->stop)
            break;
        struct clean_job *j = cl->head;
        cl->head = j->next;
        if (!cl->head)
            cl->tail = NULL;
        j->queued = false;
        j->running = true;
        unlock(cl);
        run_step(j);
        lock(cl);
        j->running = false;
        if (!cancelled(j)) {
            MEM_GROW(cl->done, cl->cap_done, cl->n_done + 1);
            cl->done[cl->n_done++] = (struct completion){j, EV_STEP, 0};
            wake_reactor(cl);
        }
        CHECK(pthread_cond_broadcast(&cl->idle_cv) == 0);
    }
    unlock(cl);
    return NULL;
}

int cleaner_start(const struct cleaner_config *cfg, struct cleaner **out)
{
    struct cleaner *cl = mem_calloc(1, sizeof(*cl));
    cl->n_threads = MAX(cfg->threads, 1);
    int64_t total = MAX(cfg->dedupe_buffer_bytes, (int64_t)KEYMAP_MIN_SLOTS * KEYMAP_SLOT_BYTES);
    cl->map_bytes = (size_t)(total / cl->n_threads);
    cl->io_rate = cfg->io_max_bytes_per_second;
    cl->keep_batches = cfg->keep_batches;
    cl->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (cl->efd < 0) {
        int e = -errno;
        mem_free(cl);
        return e;
    }
    CHECK(pthread_mutex_init(&cl->mu, NULL) == 0);
    CHECK(pthread_cond_init(&cl->work_cv, NULL) == 0);
    CHECK(pthread_cond_init(&cl->idle_cv, NULL) == 0);
    cl->threads = mem_calloc((size_t)cl->n_threads, sizeof(*cl->threads));
    for (int i = 0; i < cl->n_threads; i++) {
        int rc = pthread_create(&cl->threads[i], NULL, thread_main, cl);
        if (rc != 0) {
            cl->n_threads = i;
            cleaner_stop(cl);
            return -rc;
        }
    }
    *out = cl;
    return 0;
}

int cleaner_fd(const struct cleaner *cl)
{
    return cl->efd;
}

void cleaner_get_stats(const struct cleaner *cl, struct cleaner_stats *out)
{
    *out = cl->stats;
}

void clean_job_abandon(struct clean_job *j)
{
    struct cleaner *cl = j->cl;
    int64_t *swaps = NULL;
    size_t n_swaps = 0, cap_swaps = 0;
    bool step_pending = false;
    if (cl) {
        lock(cl);
        __atomic_store_n(&j->cancel, 1, __ATOMIC_RELEASE);
        if (j->queued) {
            struct clean_job **pp = &cl->head;
            struct clean_job *prev = NULL;
            while (*pp != j) {
                prev = *pp;
                pp = &(*pp)->next;
            }
            *pp = j->next;
            if (cl->tail == j)
                cl->tail = prev;
            j->queued = false;
        }
        while (j->running)
            CHECK(pthread_cond_wait(&cl->idle_cv, &cl->mu) == 0);
        size_t k = 0;
        for (size_t i = 0; i < cl->n_done; i++) {
            struct completion *c = &cl->done[i];
            if (c->job != j) {
                cl->done[k++] = *c;
            } else if (c->kind == EV_SWAPPED) {
                MEM_GROW(swaps, cap_swaps, n_swaps + 1);
                swaps[n_swaps++] = c->base;
            } else {
                step_pending = true;
            }
        }
        cl->n_done = k;
        unlock(cl);
    }
    (void)step_pending; /* the phase tells what the step left behind */
    for (size_t i = 0; i < n_swaps; i++)
        plog_clean_swapped(j->log, swaps[i]);
    mem_free(swaps);
    switch (j->phase) {
    case CLEAN_BUILD:
        fail(j, -ERR_CLOSED);
        break;
    case CLEAN_COMMIT:
        discard_output(j);
        fail(j, -ERR_CLOSED);
        break;
    case CLEAN_SWAP: {
        /* committed but its files are not in place yet: finish that much now */
        int rc = swap_files(j);
        if (rc != 0) {
            j->fence = true;
            fail(j, rc);
        } else {
            plog_clean_swapped(j->log, j->groups[j->cur].base);
            fail(j, -ERR_CLOSED);
        }
        break;
    }
    case CLEAN_DONE:
        break;
    }
    finish_job(j);
}

void cleaner_stop(struct cleaner *cl)
{
    while (cl->jobs)
        clean_job_abandon(cl->jobs);
    lock(cl);
    cl->stop = true;
    CHECK(pthread_cond_broadcast(&cl->work_cv) == 0);
    unlock(cl);
    for (int i = 0; i < cl->n_threads; i++)
        pthread_join(cl->threads[i], NULL);
    CHECK(cl->n_done == 0 && !cl->head);
    mem_free(cl->threads);
    mem_free(cl->done);
    mem_free(cl->offers);
    close(cl->efd);
    pthread_mutex_destroy(&cl->mu);
    pthread_cond_destroy(&cl->work_cv);
    pthread_cond_destroy(&cl->idle_cv);
    mem_free(cl);
}

int cleaner_poll(struct cleaner *cl)
{
    uint64_t v;
    while (read(cl->efd, &v, sizeof(v)) < 0 && errno == EINTR) {
    }
    lock(cl);
    struct completion *done = cl->done;
    size_t n = cl->n_done;
    cl->done = NULL;
    cl->n_done = cl->cap_done = 0;
    unlock(cl);
    int finished = 0;
    for (size_t i = 0; i < n; i++) {
        struct clean_job *j = done[i].job;
        if (done[i].kind == EV_SWAPPED) {
            plog_clean_swapped(j->log, done[i].base);
            continue;
        }
        if (j->phase == CLEAN_COMMIT) {
            commit(j);
            if (j->phase == CLEAN_SWAP) {
                enqueue(cl, j);
                continue;
            }
        }
        finish_job(j);
        finished++;
    }
    mem_free(done);
    return finished;
}

void cleaner_offer(struct cleaner *cl, struct plog *log, int64_t now_ms)
{
    double score;
    if (!plog_clean_candidate(log, now_ms, false, &score))
        return;
    MEM_GROW(cl->offers, cl->cap_offers, cl->n_offers + 1);
    cl->offers[cl->n_offers++] = (struct offer){log, score, now_ms};
}

int cleaner_dispatch(struct cleaner *cl)
{
    int started = 0;
    while (cl->n_jobs < cl->n_threads && cl->n_offers > 0) {
        size_t best = 0;
        for (size_t i = 1; i < cl->n_offers; i++)
            if (cl->offers[i].score > cl->offers[best].score)
                best = i;
        struct offer o = cl->offers[best];
        cl->offers[best] = cl->offers[--cl->n_offers];
        struct clean_job *j = job_new(cl, cl->map_bytes, cl->io_rate);
        if (plog_clean_prepare(o.log, o.now_ms, j) != 0) {
            job_free(j);
            continue;
        }
        j->reg_next = cl->jobs;
        if (cl->jobs)
            cl->jobs->reg_pprev = &j->reg_next;
        j->reg_pprev = &cl->jobs;
        cl->jobs = j;
        cl->n_jobs++;
        enqueue(cl, j);
        started++;
    }
    cl->n_offers = 0;
    return started;
}

int cleaner_run_once(struct plog *log, int64_t now_ms, bool force, size_t map_bytes,
                     struct clean_pass_stats *st)
{
    return cleaner_run_once_keeping(log, now_ms, force, map_bytes, false, st);
}

int cleaner_run_once_keeping(struct plog *log, int64_t now_ms, bool force, size_t map_bytes,
                             bool keep_batches, struct clean_pass_stats *st)
{
    double score;
    if (!plog_clean_candidate(log, now_ms, force, &score))
        return 0;
    struct clean_job *j = job_new(NULL, map_bytes, 0);
    j->keep_batches = keep_batches;
    if (plog_clean_prepare(log, now_ms, j) != 0) {
        job_free(j);
        return 0;
    }
    run_step(j);
    while (j->phase == CLEAN_COMMIT) {
        commit(j);
        if (j->phase != CLEAN_SWAP)
            break;
        run_step(j);
        if (j->swapped_base >= 0) {
            plog_clean_swapped(log, j->swapped_base);
            j->swapped_base = -1;
        }
    }
    int rc = j->rc;
    if (st) {
        *st = j->st;
        st->duration_ms = (time_mono_ns() - j->start_ns) / 1000000;
    }
    finish_job(j);
    return rc == 0 ? 1 : rc;
}
