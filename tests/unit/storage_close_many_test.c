/* plog_close_many: a stop's close of many logs with two filesystem-wide syncs. */
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
