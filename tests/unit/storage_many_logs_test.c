/* Many logs at once with filesystem-wide syncs: plog_close_many (a stop's close, two syncfs)
 * and plog_open_unsynced + plog_open_finish_many (a restart's open, one syncfs); and the
 * recovery point an unclean plog_open raises is not synced. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/check.h"
#include "storage/io.h"
#include "storage/plog.h"
#include "storage_util.h"

#define LOGS 3

static struct {
    int syncfs_calls;
    int fdatasyncs;
    int syncfs_errno;          /* 0: the real syncfs */
    char dirs[LOGS][512];      /* checked at the first syncfs */
    int64_t rp_at_first[LOGS]; /* the recovery points on disk then */
} T;

static int t_fdatasync(int fd)
{
    T.fdatasyncs++;
    return fdatasync(fd);
}

static int t_syncfs(int fd)
{
    if (T.syncfs_calls++ == 0)
        for (int i = 0; i < LOGS; i++)
            T.rp_at_first[i] = su_recovery_point_on_disk(T.dirs[i]);
    if (T.syncfs_errno) {
        errno = T.syncfs_errno;
        return -1;
    }
    return syncfs(fd);
}

/* Three logs with records in two epochs each (so each has a checkpoint to store at close). */
static void open_logs(struct plog **logs, int64_t *leo, const char *tag)
{
    struct plog_config cfg = su_config();
    for (int i = 0; i < LOGS; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s-%d", tag, i);
        snprintf(T.dirs[i], sizeof(T.dirs[i]), "%s", su_dir(name));
        logs[i] = su_open(T.dirs[i], &cfg, false, NULL);
        for (int k = 0; k < 10 + i; k++)
            su_append(logs[i], 2, 50, 1000 + k, k < 5 ? 1 : 2);
        leo[i] = plog_end_offset(logs[i]);
    }
}

static void install_io(void)
{
    static struct storage_io io;
    io = storage_io_default;
    io.fdatasync = t_fdatasync;
    io.syncfs = t_syncfs;
    storage_io_set(&io);
}

/* Each log reopens clean as it was: nothing validated, every record and the last epoch there. */
static void check_reopen(const int64_t *leo)
{
    struct plog_config cfg = su_config();
    for (int i = 0; i < LOGS; i++) {
        struct plog_recovery rec;
        struct plog *log = su_open(T.dirs[i], &cfg, true, &rec);
        ASSERT_EQ(rec.segments_validated, 0);
        ASSERT_EQ(rec.truncated_at, -1);
        ASSERT_EQ(plog_end_offset(log), leo[i]);
        ASSERT_EQ(plog_last_epoch(log), 2);
        ASSERT_EQ(su_recovery_point_on_disk(T.dirs[i]), leo[i]);
        plog_close(log);
    }
}

/* The fast way: no log syncs its own files; the recovery points reach the disk only after the
 * first syncfs, which makes what they cover durable. */
TEST(storage_close_many_syncs_the_filesystem_twice)
{
    memset(&T, 0, sizeof(T));
    struct plog *logs[LOGS];
    int64_t leo[LOGS];
    open_logs(logs, leo, "fast");
    install_io();
    plog_close_many(logs, LOGS);
    storage_io_set(NULL);
    if (plog_close_many_syncs_fs(LOGS)) {
        ASSERT_EQ(T.syncfs_calls, 2);
        ASSERT_EQ(T.fdatasyncs, 0);
        for (int i = 0; i < LOGS; i++)
            ASSERT_CMP(T.rp_at_first[i], <, leo[i]); /* not yet at the first barrier */
    } else {
        /* a kernel whose syncfs reports no write-back errors: each log syncs its own */
        ASSERT_EQ(T.syncfs_calls, 0);
        ASSERT_CMP(T.fdatasyncs, >=, LOGS);
    }
    check_reopen(leo);
}

/* A first syncfs that fails: every log is closed the slow way, with its own syncs. */
TEST(storage_close_many_falls_back_when_syncfs_fails)
{
    memset(&T, 0, sizeof(T));
    T.syncfs_errno = EIO;
    struct plog *logs[LOGS];
    int64_t leo[LOGS];
    open_logs(logs, leo, "eio");
    install_io();
    plog_close_many(logs, LOGS);
    storage_io_set(NULL);
    ASSERT_EQ(T.syncfs_calls, plog_close_many_syncs_fs(LOGS) ? 1 : 0);
    ASSERT_CMP(T.fdatasyncs, >=, LOGS); /* each log's segment, at least */
    check_reopen(leo);
}

/* One log (or none): plog_close as always. */
TEST(storage_close_many_of_one_log_is_plog_close)
{
    memset(&T, 0, sizeof(T));
    struct plog *logs[LOGS];
    int64_t leo[LOGS];
    open_logs(logs, leo, "one");
    install_io();
    plog_close_many(logs, 1);
    plog_close_many(logs + 1, 2);
    plog_close_many(NULL, 0);
    storage_io_set(NULL);
    ASSERT_CMP(T.fdatasyncs, >=, 1);
    check_reopen(leo);
}

/* ---- a restart's open ---- */

/* 20 batches synced (closed, recovery point 200), then 1 to 3 more left in the page cache
 * only by a "kill -9": what the next open validates and must make durable. */
static void fill_then_crash(const char *dir, void *arg)
{
    int extra = *(const int *)arg;
    struct plog_config cfg = su_config();
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 20; i++)
        su_append(log, 10, 100, 1000 + i, 1);
    plog_close(log);
    log = su_open(dir, &cfg, true, NULL);
    for (int i = 0; i < extra; i++)
        su_append(log, 10, 100, 2000 + i, 2);
}

static void crashed_logs(const char *tag)
{
    for (int i = 0; i < LOGS; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s-%d", tag, i);
        snprintf(T.dirs[i], sizeof(T.dirs[i]), "%s", su_dir(name));
        int extra = 1 + i;
        su_crash_after(fill_then_crash, T.dirs[i], &extra);
        ASSERT_EQ(su_recovery_point_on_disk(T.dirs[i]), 200);
    }
}

/* Opens the crashed logs unsynced: no sync at all, every record readable, nothing moved on
 * disk yet. */
static void open_unsynced(struct plog **logs)
{
    struct plog_config cfg = su_config();
    for (int i = 0; i < LOGS; i++) {
        struct plog_recovery rec;
        ASSERT_EQ(plog_open_unsynced(T.dirs[i], &cfg, NULL, NULL, false, &logs[i], &rec), 0);
        ASSERT_CMP(rec.segments_validated, >=, 1);
        ASSERT_EQ(plog_end_offset(logs[i]), 200 + 10 * (1 + i));
        ASSERT_EQ(plog_high_watermark(logs[i]), plog_end_offset(logs[i]));
    }
    ASSERT_EQ(T.fdatasyncs, 0);
    ASSERT_EQ(T.syncfs_calls, 0);
    for (int i = 0; i < LOGS; i++)
        ASSERT_EQ(su_recovery_point_on_disk(T.dirs[i]), 200);
}

/* Finished: durable to the end, the recovery point there on disk; reopened after one more
 * "kill -9" (nothing appended), every record is there. */
static void check_finished(struct plog **logs)
{
    struct plog_config cfg = su_config();
    for (int i = 0; i < LOGS; i++) {
        int64_t leo = plog_end_offset(logs[i]);
        ASSERT_EQ(plog_durable_offset(logs[i]), leo);
        ASSERT_EQ(su_recovery_point_on_disk(T.dirs[i]), leo);
        plog_close(logs[i]);
        struct plog_recovery rec;
        struct plog *log = su_open(T.dirs[i], &cfg, false, &rec);
        ASSERT_EQ(plog_end_offset(log), leo);
        ASSERT_EQ(rec.truncated_at, -1);
        plog_close(log);
    }
}

/* One syncfs for every log, before any recovery point moves (what it covers must be durable
 * first: invariant 7), and no fdatasync at all: the raised recovery points are not synced. */
TEST(storage_open_many_one_syncfs_then_recovery_points)
{
    memset(&T, 0, sizeof(T));
    crashed_logs("one");
    install_io();
    struct plog *logs[LOGS];
    open_unsynced(logs);
    ASSERT_EQ(plog_open_finish_many(logs, LOGS), 0);
    if (io_syncfs_reports_errors()) {
        ASSERT_EQ(T.syncfs_calls, 1);
        ASSERT_EQ(T.fdatasyncs, 0);
        for (int i = 0; i < LOGS; i++)
            ASSERT_EQ(T.rp_at_first[i], 200);
    } else {
        /* a kernel whose syncfs reports no write-back errors: each log syncs its own */
        ASSERT_EQ(T.syncfs_calls, 0);
        ASSERT_EQ(T.fdatasyncs, LOGS);
    }
    storage_io_set(NULL);
    check_finished(logs);
}

/* A syncfs that fails: each log syncs its own segment (and only that: not its recovery
 * point), and all is durable as before. */
TEST(storage_open_many_falls_back_when_syncfs_fails)
{
    memset(&T, 0, sizeof(T));
    crashed_logs("fail");
    install_io();
    T.syncfs_errno = EIO;
    struct plog *logs[LOGS];
    open_unsynced(logs);
    ASSERT_EQ(plog_open_finish_many(logs, LOGS), 0);
    ASSERT_EQ(T.syncfs_calls, io_syncfs_reports_errors() ? 1 : 0);
    ASSERT_EQ(T.fdatasyncs, LOGS);
    T.syncfs_errno = 0;
    storage_io_set(NULL);
    check_finished(logs);
}

/* plog_open after a kill -9: the validated segment is synced, the recovery point raised over
 * it is written unsynced (one fdatasync, not two); a recovery point lowered because the
 * leader-epoch checkpoint under it was lost is synced (invariant 10). */
TEST(storage_open_raised_recovery_point_unsynced_lowered_synced)
{
    memset(&T, 0, sizeof(T));
    const char *dir = su_dir("single");
    snprintf(T.dirs[0], sizeof(T.dirs[0]), "%s", dir);
    int extra = 1;
    su_crash_after(fill_then_crash, dir, &extra);
    install_io();
    struct plog_config cfg = su_config();
    struct plog_recovery rec;
    struct plog *log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(plog_end_offset(log), 210);
    ASSERT_EQ(T.fdatasyncs, 1);
    ASSERT_EQ(su_recovery_point_on_disk(dir), 210);
    plog_close(log);

    /* closed cleanly: recovery point 210, checkpoint stored; then the checkpoint is lost */
    char path[1024];
    snprintf(path, sizeof(path), "%s/leader-epoch-checkpoint", dir);
    ASSERT_EQ(unlink(path), 0);
    T.fdatasyncs = 0;
    log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(plog_end_offset(log), 210);
    ASSERT_EQ(plog_last_epoch(log), 2);
    ASSERT_EQ(su_recovery_point_on_disk(dir), 0); /* below the first epoch not stored */
    ASSERT_EQ(T.fdatasyncs, 1);                   /* that lowering, synced */
    storage_io_set(NULL);
    plog_close(log);
}

/* While a restart's open is unfinished, plog_open_names lists the directory as the open found
 * it (a producer snapshot's owner reads it instead of listing again); the finish drops it. A
 * whole plog_open has none to give. */
TEST(storage_open_names_until_the_finish)
{
    memset(&T, 0, sizeof(T));
    crashed_logs("names");
    char path[600];
    snprintf(path, sizeof(path), "%s/00000000000000000007.snapshot", T.dirs[0]);
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT(fd >= 0);
    close(fd);
    struct plog *logs[LOGS];
    open_unsynced(logs);
    const struct io_dir_list *names = plog_open_names(logs[0]);
    ASSERT(names != NULL);
    ASSERT(io_dir_list_has(names, "00000000000000000007.snapshot"));
    ASSERT(io_dir_list_has(names, "recovery-point"));
    ASSERT(io_dir_list_has(names, "00000000000000000000.log"));
    ASSERT(!io_dir_list_has(plog_open_names(logs[1]), "00000000000000000007.snapshot"));
    ASSERT_EQ(plog_open_finish_many(logs, LOGS), 0);
    for (int i = 0; i < LOGS; i++)
        ASSERT(plog_open_names(logs[i]) == NULL);
    for (int i = 0; i < LOGS; i++)
        plog_close(logs[i]);
    struct plog_config cfg = su_config();
    struct plog *log = su_open(T.dirs[0], &cfg, false, NULL);
    ASSERT(plog_open_names(log) == NULL);
    plog_close(log);
}
