#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/errors.h"
#include "storage/flusher.h"
#include "storage/io.h"
#include "storage/plog.h"
#include "storage_util.h"

struct cb_state {
    int calls;
    int64_t last_durable;
    int last_rc;
};

static void flush_cb(struct plog *log, int64_t durable, int rc, void *data)
{
    struct cb_state *s = data;
    s->calls++;
    s->last_durable = durable;
    s->last_rc = rc;
    ASSERT_EQ(plog_durable_offset(log), durable);
}

/* Drives the reactor side: waits on the eventfd with poll(2) and delivers completions until
 * the callback has run `calls` times. */
static void wait_calls(struct flusher *fl, struct cb_state *s, int calls)
{
    for (int i = 0; i < 500 && s->calls < calls; i++) {
        struct pollfd p = {.fd = flusher_fd(fl), .events = POLLIN};
        int n = poll(&p, 1, 20);
        ASSERT_CMP(n, >=, 0);
        if (n > 0)
            flusher_poll(fl);
    }
    ASSERT_CMP(s->calls, >=, calls);
}

static struct plog *open_with(struct flusher *fl, const char *name, struct cb_state *st)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 8 * 1024;
    struct plog *log = NULL;
    ASSERT_EQ(plog_open(su_dir(name), &cfg, fl, NULL, false, &log, NULL), 0);
    plog_set_flush_cb(log, flush_cb, st);
    return log;
}

TEST(storage_flusher_durable_offset_advances_and_callback_runs)
{
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct cb_state st = {0};
    struct plog *log = open_with(fl, "p", &st);
    ASSERT_EQ(plog_durable_offset(log), 0);
    for (int i = 0; i < 5; i++)
        su_append(log, 10, 100, 1000, 0);
    ASSERT_EQ(plog_durable_offset(log), 0);
    plog_flush(log);
    wait_calls(fl, &st, 1);
    ASSERT_EQ(st.last_rc, 0);
    ASSERT_EQ(st.last_durable, 50);
    ASSERT_EQ(plog_durable_offset(log), 50);
    /* group commit: many requests while one sync may be running, fewer syncs than requests */
    int calls_before = st.calls;
    for (int i = 0; i < 20; i++) {
        su_append(log, 10, 100, 1000, 0);
        plog_flush(log);
    }
    int64_t leo = plog_end_offset(log);
    for (int i = 0; i < 500 && plog_durable_offset(log) < leo; i++) {
        struct pollfd p = {.fd = flusher_fd(fl), .events = POLLIN};
        if (poll(&p, 1, 20) > 0)
            flusher_poll(fl);
    }
    ASSERT_EQ(plog_durable_offset(log), leo);
    ASSERT_CMP(st.calls - calls_before, <=, 20);
    ASSERT_EQ(st.last_durable, leo);
    struct flusher_stats stats;
    flusher_get_stats(fl, &stats);
    ASSERT_CMP(stats.syncs, >=, 2);
    ASSERT_EQ(stats.sync_errors, 0);
    ASSERT_CMP(stats.sync_ns_total, >=, stats.sync_ns_max);
    /* a flush with nothing new still answers */
    int c = st.calls;
    plog_flush(log);
    wait_calls(fl, &st, c + 1);
    ASSERT_EQ(st.last_durable, leo);
    plog_close(log);
    flusher_stop(fl);
}

static int fail_fdatasync(int fd)
{
    (void)fd;
    errno = EIO;
    return -1;
}

TEST(storage_flusher_fdatasync_eio_fences_and_reads_still_work)
{
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct cb_state st = {0};
    struct plog *log = open_with(fl, "p", &st);
    for (int i = 0; i < 5; i++)
        su_append(log, 10, 100, 1000, 0);
    struct storage_io io = storage_io_default;
    io.fdatasync = fail_fdatasync;
    storage_io_set(&io);
    plog_flush(log);
    wait_calls(fl, &st, 1);
    storage_io_set(NULL);
    ASSERT_NE(st.last_rc, 0);
    ASSERT(plog_fenced(log));
    ASSERT_EQ(plog_durable_offset(log), 0);
    struct flusher_stats stats;
    flusher_get_stats(fl, &stats);
    ASSERT_CMP(stats.sync_errors, >=, 1);
    /* never retried: appends are refused from now on, even with a healthy disk */
    size_t len;
    uint8_t *b = su_batch(1, 10, 1000, 0, &len);
    int64_t base;
    ASSERT_EQ(plog_append(log, b, len, 0, 1000, &base), -ERR_FENCED);
    mem_free(b);
    ASSERT_EQ(plog_end_offset(log), 50);
    plog_set_high_watermark(log, 50);
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, 0, 50, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.next_offset, 50);
    fileref_put(r.file);
    plog_close(log);
    /* the close did not claim the log clean: the next open validates it */
    struct plog_recovery rec;
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 8 * 1024;
    log = su_open(su_dir("p"), &cfg, true, &rec);
    ASSERT_CMP(rec.segments_validated, >=, 1);
    ASSERT_EQ(plog_end_offset(log), 50);
    ASSERT(!plog_fenced(log));
    plog_close(log);
    flusher_stop(fl);
}

/* pwrite fault injection: the next write is cut short after `short_bytes`, then fails. */
static int fault_errno;
static size_t short_bytes;
static bool fail_ftruncate;
static ssize_t faulty_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (fault_errno == 0)
        return pwrite(fd, buf, n, off);
    if (short_bytes > 0) {
        size_t k = short_bytes < n ? short_bytes : n;
        short_bytes = 0;
        return pwrite(fd, buf, k, off);
    }
    errno = fault_errno;
    return -1;
}
static int faulty_ftruncate(int fd, off_t len)
{
    if (fail_ftruncate) {
        errno = EIO;
        return -1;
    }
    return ftruncate(fd, len);
}

TEST(storage_plog_enospc_cuts_back_and_recovers)
{
    struct plog_config cfg = su_config();
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 3; i++)
        su_append(log, 10, 100, 1000, 0);
    int64_t size = su_file_size(dir, su_seg(0, ".log"));
    struct storage_io io = storage_io_default;
    io.pwrite = faulty_pwrite;
    io.ftruncate = faulty_ftruncate;
    storage_io_set(&io);
    fault_errno = ENOSPC;
    short_bytes = 500; /* a partial write, then the disk is full */
    size_t len;
    uint8_t *b = su_batch(10, 100, 1000, 0, &len);
    int64_t base = -1;
    ASSERT_EQ(plog_append(log, b, len, 0, 1000, &base), -ENOSPC);
    ASSERT_EQ(su_file_size(dir, su_seg(0, ".log")), size);
    ASSERT(!plog_fenced(log));
    ASSERT_EQ(plog_end_offset(log), 30);
    /* space is back */
    fault_errno = 0;
    ASSERT_EQ(plog_append(log, b, len, 0, 1000, &base), 0);
    ASSERT_EQ(base, 30);
    ASSERT_EQ(su_file_size(dir, su_seg(0, ".log")), size + (int64_t)len);
    /* a new epoch whose checkpoint cannot be written: nothing appended */
    fault_errno = ENOSPC;
    ASSERT_EQ(plog_append(log, b, len, 4, 1000, &base), -ENOSPC);
    ASSERT_EQ(plog_last_epoch(log), 0);
    ASSERT(!plog_fenced(log));
    /* ENOSPC and the cut fails too: fenced */
    fail_ftruncate = true;
    ASSERT_NE(plog_append(log, b, len, 0, 1000, &base), 0);
    ASSERT(plog_fenced(log));
    fault_errno = 0;
    fail_ftruncate = false;
    storage_io_set(NULL);
    ASSERT_EQ(plog_append(log, b, len, 0, 1000, &base), -ERR_FENCED);
    mem_free(b);
    plog_close(log);
    /* recovery cuts the partial batch the failed cut left behind */
    struct plog_recovery rec;
    log = su_open(dir, &cfg, true, &rec);
    ASSERT_EQ(plog_end_offset(log), 40);
    plog_close(log);
}

TEST(storage_plog_write_error_fences)
{
    struct plog_config cfg = su_config();
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    su_append(log, 10, 100, 1000, 0);
    struct storage_io io = storage_io_default;
    io.pwrite = faulty_pwrite;
    storage_io_set(&io);
    fault_errno = EIO;
    short_bytes = 100; /* short write, then the retry fails */
    size_t len;
    uint8_t *b = su_batch(10, 100, 1000, 0, &len);
    int64_t base;
    ASSERT_EQ(plog_append(log, b, len, 0, 1000, &base), -EIO);
    ASSERT(plog_fenced(log));
    fault_errno = 0;
    storage_io_set(NULL);
    ASSERT_EQ(plog_append(log, b, len, 0, 1000, &base), -ERR_FENCED);
    plog_set_high_watermark(log, 10);
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, 0, 10, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.next_offset, 10);
    fileref_put(r.file);
    mem_free(b);
    plog_close(log);
}

static int slow_fdatasync(int fd)
{
    usleep(200 * 1000);
    return fdatasync(fd);
}

TEST(storage_flusher_close_waits_for_in_flight_sync)
{
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct cb_state st = {0}, st2 = {0};
    struct plog *log = open_with(fl, "p", &st);
    struct plog *other = open_with(fl, "q", &st2);
    for (int i = 0; i < 5; i++) {
        su_append(log, 10, 100, 1000, 0);
        su_append(other, 10, 100, 1000, 0);
    }
    struct storage_io io = storage_io_default;
    io.fdatasync = slow_fdatasync;
    storage_io_set(&io);
    plog_flush(log);
    plog_flush(other);
    usleep(50 * 1000); /* the thread is now inside a slow sync */
    plog_close(log);   /* must wait, and drop its queued work and completions */
    storage_io_set(NULL);
    wait_calls(fl, &st2, 1);
    ASSERT_EQ(st.calls, 0); /* no callback for a closed log */
    ASSERT_EQ(st2.last_durable, 50);
    /* the closed log was synced and checkpointed by close: a clean open trusts it */
    struct plog_recovery rec;
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 8 * 1024;
    log = su_open(su_dir("p"), &cfg, true, &rec);
    ASSERT_EQ(rec.segments_validated, 0);
    ASSERT_EQ(plog_end_offset(log), 50);
    plog_close(log);
    plog_close(other);
    flusher_stop(fl);
}

TEST(storage_flusher_stop_with_open_logs_falls_back_to_inline)
{
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct cb_state st = {0};
    struct plog *log = open_with(fl, "p", &st);
    su_append(log, 10, 100, 1000, 0);
    plog_flush(log);
    flusher_stop(fl); /* delivers the pending completion */
    ASSERT_EQ(st.calls, 1);
    ASSERT_EQ(plog_durable_offset(log), 10);
    su_append(log, 10, 100, 1000, 0);
    plog_flush(log); /* inline now */
    ASSERT_EQ(st.calls, 2);
    ASSERT_EQ(plog_durable_offset(log), 20);
    plog_close(log);
}

TEST(storage_flusher_roll_flushes_and_syncs_directory)
{
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct cb_state st = {0};
    struct plog *log = open_with(fl, "p", &st);
    /* 8 KiB segments: rolls schedule background flushes on their own */
    for (int i = 0; i < 20; i++)
        su_append(log, 10, 100, 1000, 0);
    ASSERT_CMP(plog_segment_count(log), >=, 3);
    wait_calls(fl, &st, 1);
    ASSERT_CMP(plog_durable_offset(log), >, 0);
    struct flusher_stats stats;
    flusher_get_stats(fl, &stats);
    /* the first roll's sync: sealed log, its 2 index files, the new segment, the directory */
    ASSERT_CMP(stats.syncs, >=, 5);
    plog_close(log);
    flusher_stop(fl);
}

TEST(storage_flusher_sync_overtaken_by_truncation_does_not_count)
{
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct cb_state st = {0};
    struct plog *log = open_with(fl, "p", &st);
    for (int i = 0; i < 5; i++)
        su_append(log, 10, 100, 1000, 1);
    struct storage_io io = storage_io_default;
    io.fdatasync = slow_fdatasync;
    storage_io_set(&io);
    plog_flush(log); /* target 50 */
    usleep(50 * 1000);
    ASSERT_EQ(plog_truncate_suffix(log, 20), 0);
    for (int i = 0; i < 3; i++)
        su_append(log, 10, 100, 1000, 2); /* 20..49 again, not yet synced */
    wait_calls(fl, &st, 1);
    ASSERT_EQ(st.last_rc, 0);
    ASSERT_EQ(plog_durable_offset(log), 0); /* the old sync covered other bytes */
    storage_io_set(NULL);
    plog_flush(log);
    wait_calls(fl, &st, 2);
    ASSERT_EQ(plog_durable_offset(log), 50);
    plog_close(log);
    flusher_stop(fl);
}

/* Many partitions flushed at once: their syncs run in parallel on the helpers, and each keeps
 * its own result (one partition's failed sync fences it alone; every other is durable). */
static struct {
    ino_t bad_ino;     /* fdatasync of this inode fails */
    int in_flight;     /* syncs running now */
    int in_flight_max; /* most at once */
} par;

static int par_fdatasync(int fd)
{
    int now = __atomic_add_fetch(&par.in_flight, 1, __ATOMIC_SEQ_CST);
    int seen = __atomic_load_n(&par.in_flight_max, __ATOMIC_SEQ_CST);
    while (now > seen && !__atomic_compare_exchange_n(&par.in_flight_max, &seen, now, false,
                                                      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    struct timespec disk = {0, 2 * 1000 * 1000}; /* a disk's latency, so syncs overlap */
    nanosleep(&disk, NULL);
    struct stat st;
    bool bad = fstat(fd, &st) == 0 && st.st_ino == par.bad_ino;
    int rc = bad ? -1 : fdatasync(fd);
    __atomic_sub_fetch(&par.in_flight, 1, __ATOMIC_SEQ_CST);
    if (bad)
        errno = EIO;
    return rc;
}

TEST(storage_flusher_many_logs_sync_in_parallel_each_with_its_result)
{
    enum { N = 32, BAD = 7 };
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct cb_state st[N] = {{0}};
    struct plog *logs[N];
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        logs[i] = open_with(fl, name, &st[i]);
        su_append(logs[i], 10, 100, 1000, 0);
    }
    struct stat sb;
    ASSERT_EQ(stat(su_dir("p7/00000000000000000000.log"), &sb), 0);
    par.bad_ino = sb.st_ino;
    struct storage_io io = storage_io_default;
    io.fdatasync = par_fdatasync;
    storage_io_set(&io);
    for (int i = 0; i < N; i++)
        plog_flush(logs[i]);
    for (int i = 0; i < N; i++)
        wait_calls(fl, &st[i], 1);
    storage_io_set(NULL);
    ASSERT_CMP(par.in_flight_max, >, 1);
    for (int i = 0; i < N; i++) {
        if (i == BAD) {
            ASSERT_NE(st[i].last_rc, 0);
            ASSERT(plog_fenced(logs[i]));
            ASSERT_EQ(plog_durable_offset(logs[i]), 0);
        } else {
            ASSERT_EQ(st[i].last_rc, 0);
            ASSERT_EQ(plog_durable_offset(logs[i]), 10);
        }
        plog_close(logs[i]);
    }
    flusher_stop(fl);
}

/* ---- filesystem barriers (plog_fs_barrier) ---- */

static struct {
    int syncfs_calls;
    int syncfs_errno; /* 0: the real syncfs */
} fsb;

static int counting_syncfs(int fd)
{
    __atomic_fetch_add(&fsb.syncfs_calls, 1, __ATOMIC_SEQ_CST);
    if (fsb.syncfs_errno) {
        errno = fsb.syncfs_errno;
        return -1;
    }
    return syncfs(fd);
}

struct barrier_state {
    int calls;
    int rc;
};

static void barrier_cb(int rc, void *data)
{
    struct barrier_state *b = data;
    b->calls++;
    b->rc = rc;
}

static void wait_barrier(struct flusher *fl, struct barrier_state *b)
{
    for (int i = 0; i < 500 && b->calls == 0; i++) {
        struct pollfd p = {.fd = flusher_fd(fl), .events = POLLIN};
        if (poll(&p, 1, 20) > 0)
            flusher_poll(fl);
    }
    ASSERT_EQ(b->calls, 1);
}

/* A barrier is one syncfs, answered once, also after the log it went through is closed; a
 * failed syncfs is reported to its caller and fences nothing. */
TEST(storage_flusher_fs_barrier_is_one_syncfs_and_outlives_its_log)
{
    ASSERT(io_syncfs_reports_errors()); /* Linux 5.8 or later: what the broker relies on */
    struct flusher *fl;
    ASSERT_EQ(flusher_start(&fl), 0);
    struct cb_state st = {0};
    struct plog *log = open_with(fl, "p", &st);
    ASSERT(plog_fs_barrier_available(log));
    su_append(log, 10, 100, 1000, 0);
    struct storage_io io = storage_io_default;
    io.syncfs = counting_syncfs;
    storage_io_set(&io);
    fsb.syncfs_calls = 0;
    fsb.syncfs_errno = 0;
    struct barrier_state b = {0, 1};
    ASSERT_EQ(plog_fs_barrier(log, barrier_cb, &b), PLOG_SIDE_QUEUED);
    plog_close(log);
    wait_barrier(fl, &b);
    ASSERT_EQ(b.rc, 0);
    ASSERT_EQ(fsb.syncfs_calls, 1);

    log = open_with(fl, "p", &st);
    fsb.syncfs_errno = EIO;
    struct barrier_state bad = {0, 0};
    ASSERT_EQ(plog_fs_barrier(log, barrier_cb, &bad), PLOG_SIDE_QUEUED);
    wait_barrier(fl, &bad);
    ASSERT_EQ(bad.rc, -EIO);
    ASSERT(!plog_fenced(log)); /* the caller decides what the lost writes mean */

    /* one still queued at flusher_stop is answered by it */
    fsb.syncfs_errno = 0;
    struct barrier_state last = {0, 1};
    ASSERT_EQ(plog_fs_barrier(log, barrier_cb, &last), PLOG_SIDE_QUEUED);
    plog_close(log);
    flusher_stop(fl);
    storage_io_set(NULL);
    ASSERT_EQ(last.calls, 1);
    ASSERT_EQ(last.rc, 0);
}

/* Without a flusher there is nobody to run a barrier off the reactor: the caller syncs. */
TEST(storage_flusher_fs_barrier_needs_a_flusher)
{
    struct plog_config cfg = su_config();
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    ASSERT(!plog_fs_barrier_available(log));
    struct barrier_state b = {0, 0};
    ASSERT_EQ(plog_fs_barrier(log, barrier_cb, &b), -ENOTSUP);
    ASSERT_EQ(b.calls, 0);
    plog_close(log);
}
