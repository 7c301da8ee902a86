/* plog_reset (a Raft install restarts the log empty at an offset) and plog_retention_start.
 *
 * The crash test cuts the power after every possible number of storage calls: from that call on
 * every write, sync, create, rename and unlink fails without effect (directory operations made
 * before it stand, as on a real disk after their fsync). The log is then closed under the same
 * dead I/O (nothing more reaches the disk) and reopened; it must be either the old log, batch for
 * batch, or the new empty one, never a mix. */
#include <dirent.h>
#include <errno.h>

#include "base/errors.h"
#include "storage/io.h"
#include "storage_util.h"

/* ---- a log to reset: several segments, two epochs ---- */

static struct plog_config reset_config(void)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 4096;
    return cfg;
}

static void fill(struct plog *log, int n)
{
    for (int i = 0; i < n; i++)
        su_append(log, 3, 200, 1000 + i, i < n / 2 ? 1 : 2); /* ~700 bytes: a roll every 5 */
    plog_set_high_watermark(log, plog_end_offset(log));
}

/* Every batch below LEO as stored. */
static uint8_t *all_bytes(struct plog *log, size_t *len)
{
    uint8_t *buf = NULL;
    size_t used = 0, cap = 0;
    int64_t off = plog_start_offset(log);
    for (int guard = 0; off < plog_end_offset(log); guard++) {
        ASSERT_CMP(guard, <, 10000);
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, plog_end_offset(log), 1 << 20, &r), 0);
        ASSERT_CMP(r.len, >, 0);
        MEM_GROW(buf, cap, used + r.len);
        ASSERT_EQ(pread(r.file->fd, buf + used, r.len, r.pos), (ssize_t)r.len);
        fileref_put(r.file);
        used += r.len;
        off = r.next_offset;
    }
    *len = used;
    return buf;
}

static int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    ASSERT(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += io_has_suffix(de->d_name, suffix);
    closedir(d);
    return n;
}

/* The log is the new empty one at offset. */
static void assert_reset_at(struct plog *log, const char *dir, int64_t offset)
{
    ASSERT_EQ(plog_start_offset(log), offset);
    ASSERT_EQ(plog_high_watermark(log), offset);
    ASSERT_EQ(plog_end_offset(log), offset);
    ASSERT_EQ(plog_durable_offset(log), offset);
    ASSERT_EQ(plog_segment_count(log), 1);
    ASSERT_EQ(plog_size_bytes(log), 0);
    ASSERT_EQ(plog_epoch_count(log), 0);
    ASSERT_EQ(plog_last_epoch(log), -1);
    ASSERT_EQ(count_files(dir, ".log"), 1);
    ASSERT(su_exists(dir, su_seg(offset, ".log")));
    ASSERT(!su_exists(dir, "log-reset"));
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, offset - 1, offset + 10, 1024, &r), -ERR_OUT_OF_RANGE);
    ASSERT_EQ(plog_read(log, offset, offset + 10, 1024, &r), 0);
    ASSERT_EQ(r.len, 0);
}

/* Appends after a reset continue at the offset, under a new epoch; they survive a reopen. */
static void assert_appends_after(struct plog *log, const char *dir, int64_t offset)
{
    ASSERT_EQ(su_append(log, 2, 50, 5000, 7), offset);
    ASSERT_EQ(su_append(log, 1, 50, 5001, 7), offset + 2);
    ASSERT_EQ(plog_epoch_count(log), 1);
    ASSERT_EQ(plog_epoch_end_offset(log, 7), offset + 3);
    plog_flush(log);
    ASSERT_EQ(plog_durable_offset(log), offset + 3);
    struct plog_config cfg = reset_config();
    plog_close(log);
    log = su_open(dir, &cfg, false, NULL);
    ASSERT_EQ(plog_start_offset(log), offset);
    ASSERT_EQ(plog_end_offset(log), offset + 3);
    int32_t epoch;
    int64_t start;
    ASSERT_EQ(plog_epoch_count(log), 1);
    plog_epoch_at(log, 0, &epoch, &start);
    ASSERT_EQ(epoch, 7);
    ASSERT_EQ(start, offset);
    plog_close(log);
}

struct reset_hooks {
    int resets;
    int64_t offset;
    int truncations;
};

static void on_reset(struct plog *log, int64_t offset, void *data)
{
    struct reset_hooks *h = data;
    ASSERT_EQ(plog_end_offset(log), offset);
    h->resets++;
    h->offset = offset;
}

static void on_truncated(struct plog *log, int64_t leo, void *data)
{
    struct reset_hooks *h = data;
    h->truncations++;
}

TEST(storage_plog_reset_restarts_empty_above_and_below_the_end)
{
    struct plog_config cfg = reset_config();
    /* above LEO: a follower far behind the leader's log start */
    const char *dir = su_dir("above");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    fill(log, 30);
    ASSERT_CMP(plog_segment_count(log), >=, 5);
    ASSERT_EQ(plog_truncate_prefix(log, 20), 0);
    struct reset_hooks h = {0};
    plog_set_hooks(log, &(struct plog_hooks){.truncated = on_truncated, .data = &h, .reset = on_reset});
    ASSERT_EQ(plog_reset(log, 1000), 0);
    ASSERT_EQ(h.resets, 1);
    ASSERT_EQ(h.offset, 1000);
    ASSERT_EQ(h.truncations, 0);
    assert_reset_at(log, dir, 1000);
    plog_set_hooks(log, NULL);
    /* a clean reopen and an unclean one find the same empty log */
    plog_close(log);
    log = su_open(dir, &cfg, true, NULL);
    assert_reset_at(log, dir, 1000);
    plog_close(log);
    log = su_open(dir, &cfg, false, NULL);
    assert_reset_at(log, dir, 1000);
    assert_appends_after(log, dir, 1000);

    /* below LEO: a follower whose log diverged beyond the leader's install point; a segment
     * of the old log has exactly the new base (its files must not survive in the new log) */
    dir = su_dir("below");
    log = su_open(dir, &cfg, false, NULL);
    fill(log, 30);
    int64_t base = -1;
    for (int i = 0; i < 40; i++) {
        if (su_exists(dir, su_seg(3 * i, ".log")) && 3 * i > 0) {
            base = 3 * i;
            break;
        }
    }
    ASSERT_CMP(base, >, 0);
    ASSERT_CMP(base, <, plog_end_offset(log));
    /* without a reset hook the truncated hook says the log now ends at the offset */
    plog_set_hooks(log, &(struct plog_hooks){.truncated = on_truncated, .data = &h});
    ASSERT_EQ(plog_reset(log, base), 0);
    ASSERT_EQ(h.truncations, 1);
    plog_set_hooks(log, NULL);
    assert_reset_at(log, dir, base);
    plog_close(log);
    log = su_open(dir, &cfg, false, NULL);
    assert_reset_at(log, dir, base);
    assert_appends_after(log, dir, base);
}

/* ---- crash points ---- */

static struct {
    long calls_left; /* storage calls until the power fails; < 0: failed */
    long calls;
} pc;

static bool dead(void)
{
    pc.calls++;
    if (pc.calls_left < 0)
        return true;
    if (pc.calls_left-- == 0) {
        pc.calls_left = -1;
        return true;
    }
    return false;
}

static ssize_t pc_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    return dead() ? (errno = EIO, -1) : pwrite(fd, buf, n, off);
}
static int pc_fdatasync(int fd)
{
    return dead() ? (errno = EIO, -1) : fdatasync(fd);
}
static int pc_fsync(int fd)
{
    return dead() ? (errno = EIO, -1) : fsync(fd);
}
static int pc_ftruncate(int fd, off_t len)
{
    return dead() ? (errno = EIO, -1) : ftruncate(fd, len);
}
static int pc_openat(int dirfd, const char *name, int flags, mode_t mode)
{
    return dead() ? (errno = EIO, -1) : openat(dirfd, name, flags, mode);
}
static int pc_renameat(int od, const char *on, int nd, const char *nn)
{
    return dead() ? (errno = EIO, -1) : renameat(od, on, nd, nn);
}
static int pc_unlinkat(int dirfd, const char *name, int flags)
{
    return dead() ? (errno = EIO, -1) : unlinkat(dirfd, name, flags);
}

static const struct storage_io pc_io = {pc_pwrite, pc_fdatasync, pc_fsync,    pc_ftruncate,
                                        pc_openat, pc_renameat,  pc_unlinkat, NULL};

TEST_T(storage_plog_reset_crash_at_every_step_leaves_old_or_new, 60)
{
    struct plog_config cfg = reset_config();
    int olds = 0, news = 0;
    bool finished = false;
    for (long k = 0; k < 200 && !finished; k++) {
        char name[32];
        snprintf(name, sizeof(name), "k%ld", k);
        const char *dir = su_dir(name);
        struct plog *log = su_open(dir, &cfg, false, NULL);
        fill(log, 30);
        ASSERT_EQ(plog_truncate_prefix(log, 9), 0);
        plog_flush(log);
        int64_t old_start = plog_start_offset(log), old_end = plog_end_offset(log);
        size_t old_len;
        uint8_t *old = all_bytes(log, &old_len);
        int64_t offset = k % 2 ? 2000 : 45; /* above the end, or inside the old log */

        pc.calls_left = k;
        pc.calls = 0;
        storage_io_set(&pc_io);
        int rc = plog_reset(log, offset);
        finished = rc == 0 && pc.calls_left >= 0;
        plog_close(log); /* the power is off: nothing it writes reaches the disk */
        storage_io_set(NULL);

        log = su_open(dir, &cfg, false, NULL);
        if (plog_end_offset(log) == old_end && plog_start_offset(log) == old_start) {
            ASSERT(!finished);
            size_t len;
            uint8_t *now = all_bytes(log, &len);
            ASSERT_EQ(len, old_len);
            ASSERT_MEMEQ(now, old, len);
            ASSERT_EQ(plog_epoch_count(log), 2);
            mem_free(now);
            ASSERT_EQ(news, 0); /* once the reset committed, every later cut keeps it */
            olds++;
            plog_close(log);
        } else {
            assert_reset_at(log, dir, offset);
            news++;
            assert_appends_after(log, dir, offset);
        }
        mem_free(old);
    }
    ASSERT(finished);
    ASSERT_CMP(olds, >=, 3); /* the marker's temp file write, sync, rename */
    ASSERT_CMP(news, >=, 5); /* every step after the marker's rename */
}

TEST(storage_plog_retention_start_predicts_apply_retention)
{
    struct plog_config cfg = reset_config();
    const char *dir = su_dir("ret");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    fill(log, 40);
    int segs = plog_segment_count(log);
    ASSERT_CMP(segs, >=, 7);
    /* nothing configured: nothing to delete */
    ASSERT_EQ(plog_retention_start(log, 1000000), 0);
    cfg.retention_bytes = 3 * 4096;
    plog_set_config(log, &cfg);
    /* HW bounds it: no segment at or above HW goes */
    plog_restore_high_watermark(log, 20);
    int64_t capped = plog_retention_start(log, 1000000);
    ASSERT_CMP(capped, <=, 20);
    ASSERT_CMP(capped, >, 0);
    plog_restore_high_watermark(log, plog_end_offset(log));
    int64_t want = plog_retention_start(log, 1000000);
    ASSERT_CMP(want, >, capped);
    ASSERT_EQ(plog_start_offset(log), 0); /* it deleted nothing */
    ASSERT_EQ(plog_segment_count(log), segs);
    ASSERT_CMP(plog_apply_retention(log, 1000000), >, 0);
    ASSERT_EQ(plog_start_offset(log), want);
    ASSERT_EQ(plog_retention_start(log, 1000000), want); /* nothing more */
    /* by time: every closed segment is older than a day from now */
    cfg.retention_bytes = -1;
    cfg.retention_ms = 1000;
    plog_set_config(log, &cfg);
    int64_t all = plog_retention_start(log, 1000 + 86400000);
    ASSERT_CMP(all, >, want);
    ASSERT_CMP(all, <=, plog_end_offset(log));
    ASSERT_CMP(plog_apply_retention(log, 1000 + 86400000), >, 0);
    ASSERT_EQ(plog_start_offset(log), all);
    ASSERT_EQ(plog_segment_count(log), 1);
    plog_close(log);
}

TEST(storage_plog_reset_a_damaged_marker_fails_the_open)
{
    struct plog_config cfg = reset_config();
    const char *dir = su_dir("damaged");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    fill(log, 10);
    plog_close(log);
    char path[1024];
    snprintf(path, sizeof(path), "%s/log-reset", dir);
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fputs("12x\n", f);
    fclose(f);
    ASSERT_EQ(plog_open(dir, &cfg, NULL, NULL, false, &log, NULL), -ERR_CORRUPT);
    /* a good one is finished at open */
    f = fopen(path, "w");
    ASSERT(f);
    fputs("70\n", f);
    fclose(f);
    log = su_open(dir, &cfg, true, NULL);
    assert_reset_at(log, dir, 70);
    assert_appends_after(log, dir, 70);
}
