/* Power-cut simulation through the storage I/O seam.
 *
 * A workload appends batches (with flushes, segment rolls, epoch changes and clean reopen
 * cycles) while every write, truncate and sync is recorded per inode. At a random point the
 * "power fails": from then on I/O calls do nothing, and each file is rebuilt as a disk could
 * leave it — its content at its last fdatasync plus a random prefix of the writes made since,
 * the last of them possibly torn at a sector boundary, sometimes with only a random subset of
 * the sectors of those writes. Recovery must then open the log without help, and the log must
 * be a valid prefix of what was appended that contains every batch acknowledged as durable.
 *
 * Directory operations (create, rename, unlink) are treated as taking effect at once; the
 * model is about file data, which is where torn tails come from. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/mem.h"
#include "storage/io.h"
#include "storage/kvstore.h"
#include "storage_util.h"
#include "test.h"

#define SECTOR 512
#define MAX_INODES 256
#define MAX_OPS 4096

struct op {
    ino_t ino;
    bool trunc;     /* ftruncate to off, else a write of len bytes at off */
    off_t off;
    uint8_t *data;
    size_t len;
};

struct inode_state {
    ino_t ino;
    bool synced;    /* has a durable image */
    uint8_t *image; /* content at the last fdatasync */
    size_t image_len;
};

static struct {
    bool crashed;
    long ops_left; /* I/O calls until the power fails */
    struct op ops[MAX_OPS];
    int n_ops;
    struct inode_state inodes[MAX_INODES];
    int n_inodes;
    uint64_t rng;
} sim;

static uint64_t rnd(void)
{
    sim.rng ^= sim.rng << 13;
    sim.rng ^= sim.rng >> 7;
    sim.rng ^= sim.rng << 17;
    return sim.rng;
}

static ino_t ino_of(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

static struct inode_state *inode(ino_t ino)
{
    for (int i = 0; i < sim.n_inodes; i++)
        if (sim.inodes[i].ino == ino)
            return &sim.inodes[i];
    CHECK(sim.n_inodes < MAX_INODES);
    struct inode_state *s = &sim.inodes[sim.n_inodes++];
    memset(s, 0, sizeof(*s));
    s->ino = ino;
    return s;
}

/* Counts one I/O call; returns true if the power has failed (the call must do nothing). */
static bool tick(void)
{
    if (sim.crashed)
        return true;
    if (--sim.ops_left <= 0)
        sim.crashed = true;
    return sim.crashed;
}

static void record(ino_t ino, bool trunc, off_t off, const void *data, size_t len)
{
    if (sim.n_ops == MAX_OPS) { /* keep memory bounded: fold the oldest op away */
        mem_free(sim.ops[0].data);
        memmove(sim.ops, sim.ops + 1, (MAX_OPS - 1) * sizeof(sim.ops[0]));
        sim.n_ops--;
    }
    struct op *o = &sim.ops[sim.n_ops++];
    o->ino = ino;
    o->trunc = trunc;
    o->off = off;
    o->len = len;
    o->data = data ? mem_dup(data, len) : NULL;
    (void)inode(ino);
}

static ssize_t sim_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    if (tick())
        return (ssize_t)n;
    ssize_t w = pwrite(fd, buf, n, off);
    if (w > 0)
        record(ino_of(fd), false, off, buf, (size_t)w);
    return w;
}

static int sim_ftruncate(int fd, off_t len)
{
    if (tick())
        return 0;
    int rc = ftruncate(fd, len);
    if (rc == 0)
        record(ino_of(fd), true, len, NULL, 0);
    return rc;
}

static int sim_fdatasync(int fd)
{
    if (tick())
        return 0;
    ino_t ino = ino_of(fd);
    struct inode_state *s = inode(ino);
    struct stat st;
    CHECK(fstat(fd, &st) == 0);
    mem_free(s->image);
    s->image_len = (size_t)st.st_size;
    s->image = mem_alloc(s->image_len + 1);
    /* the descriptor may be write-only: read the content through /proc */
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    int rfd = open(path, O_RDONLY | O_CLOEXEC);
    CHECK(rfd >= 0);
    CHECK(pread(rfd, s->image, s->image_len, 0) == (ssize_t)s->image_len);
    close(rfd);
    s->synced = true;
    /* ops of this inode are now durable: drop them */
    int k = 0;
    for (int i = 0; i < sim.n_ops; i++) {
        if (sim.ops[i].ino == ino)
            mem_free(sim.ops[i].data);
        else
            sim.ops[k++] = sim.ops[i];
    }
    sim.n_ops = k;
    return 0;
}

/* Directories: their operations take effect at once in the model (above), so a real fsync
 * would only wait for the disk. */
static int sim_fsync(int fd)
{
    (void)fd;
    (void)tick();
    return 0;
}

static int sim_openat(int dirfd, const char *name, int flags, mode_t mode)
{
    if (sim.crashed) {
        /* after the power failed nothing reaches the disk: hand out a scratch descriptor */
        return open("/dev/null", O_RDWR | O_CLOEXEC);
    }
    int fd = openat(dirfd, name, flags, mode);
    if (fd >= 0 && (flags & O_TRUNC))
        record(ino_of(fd), true, 0, NULL, 0);
    return fd;
}

static int sim_renameat(int od, const char *on, int nd, const char *nn)
{
    return tick() ? 0 : renameat(od, on, nd, nn);
}

static int sim_unlinkat(int dirfd, const char *name, int flags)
{
    return tick() ? 0 : unlinkat(dirfd, name, flags);
}

static const struct storage_io sim_io = {
    .pwrite = sim_pwrite,
    .fdatasync = sim_fdatasync,
    .fsync = sim_fsync,
    .ftruncate = sim_ftruncate,
    .openat = sim_openat,
    .renameat = sim_renameat,
    .unlinkat = sim_unlinkat,
};

/* After the cut: the real calls, but no sync waits for the disk. Nothing here is crashed
 * again, so what recovery syncs need not reach it. */
static int no_sync(int fd)
{
    (void)fd;
    return 0;
}

static const struct storage_io *recovery_io(void)
{
    static struct storage_io io;
    io = storage_io_default;
    io.fdatasync = no_sync;
    io.fsync = no_sync;
    io.syncfs = no_sync;
    return &io;
}

/* Applies op o to a buffer, keeping only `len` bytes of a write (a torn write) and, if
 * sectors_mask, only some of its sectors. */
static void apply(uint8_t **buf, size_t *blen, const struct op *o, size_t len, bool subset)
{
    if (o->trunc) {
        size_t nl = (size_t)o->off;
        if (nl > *blen) {
            *buf = mem_realloc(*buf, nl + 1);
            memset(*buf + *blen, 0, nl - *blen);
        }
        *blen = nl;
        return;
    }
    size_t end = (size_t)o->off + len;
    if (end > *blen) {
        *buf = mem_realloc(*buf, end + 1);
        memset(*buf + *blen, 0, end - *blen);
        *blen = end;
    }
    for (size_t s = 0; s < len; s += SECTOR) {
        size_t k = MIN((size_t)SECTOR, len - s);
        if (subset && (rnd() & 1))
            continue;
        memcpy(*buf + o->off + s, o->data + s, k);
    }
}

/* Rebuilds every file in dir as the power cut left it. */
static void power_cut(const char *dir)
{
    DIR *d = opendir(dir);
    CHECK(d);
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        struct inode_state *s = NULL;
        for (int i = 0; i < sim.n_inodes; i++)
            if (sim.inodes[i].ino == st.st_ino)
                s = &sim.inodes[i];
        if (!s)
            continue; /* never written in this run */
        uint8_t *buf = mem_alloc(1);
        size_t blen = 0;
        if (s->synced) {
            buf = mem_realloc(buf, s->image_len + 1);
            memcpy(buf, s->image, s->image_len);
            blen = s->image_len;
        }
        /* the unsynced ops of this inode, in order */
        int idx[MAX_OPS], n = 0;
        for (int i = 0; i < sim.n_ops; i++)
            if (sim.ops[i].ino == st.st_ino)
                idx[n++] = i;
        int keep = n ? (int)(rnd() % (uint64_t)(n + 1)) : 0;
        bool subset = rnd() % 8 == 0;
        for (int i = 0; i < keep; i++)
            apply(&buf, &blen, &sim.ops[idx[i]], sim.ops[idx[i]].len, subset);
        if (keep < n && !sim.ops[idx[keep]].trunc && rnd() % 2) {
            const struct op *o = &sim.ops[idx[keep]];
            size_t torn = (size_t)(rnd() % (o->len / SECTOR + 1)) * SECTOR;
            apply(&buf, &blen, o, MIN(torn, o->len), false);
        }
        int fd = open(path, O_WRONLY | O_TRUNC);
        CHECK(fd >= 0);
        CHECK(write(fd, buf, blen) == (ssize_t)blen);
        close(fd);
        mem_free(buf);
    }
    closedir(d);
}

static void sim_reset(uint64_t seed, long ops_until_cut)
{
    for (int i = 0; i < sim.n_ops; i++)
        mem_free(sim.ops[i].data);
    for (int i = 0; i < sim.n_inodes; i++)
        mem_free(sim.inodes[i].image);
    memset(&sim, 0, sizeof(sim));
    sim.rng = seed * 0x9e3779b97f4a7c15ull + 1;
    sim.ops_left = ops_until_cut;
}

struct appended {
    int64_t base;
    int64_t end; /* last offset + 1 */
    uint8_t *bytes;
    size_t len;
};

static int64_t acked_end;

static void on_flush(struct plog *log, int64_t durable, int rc, void *data)
{
    if (rc == 0 && !sim.crashed && durable > acked_end)
        acked_end = durable;
}

/* Where the cut points' logs go: a directory of its own on /dev/shm when there is one. The
 * disk is simulated (the seam above), so the filesystem only holds the files, and ext4's
 * creation and deletion of a thousand logs' files was two thirds of this test's time. */
static char cut_root[256];

static void cut_root_make(void)
{
    snprintf(cut_root, sizeof(cut_root), "/dev/shm/sp-powercut-XXXXXX");
    if (!mkdtemp(cut_root))
        snprintf(cut_root, sizeof(cut_root), "%s", test_tmpdir());
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 ? 0 : -1;
}

static void remove_tree(const char *path)
{
    CHECK(nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0);
}

/* One run: workload until the cut, then recovery checks. With kv, the log keeps its recovery
 * point and leader-epoch checkpoint in a kvstore (storage/kvstore.h) whose file is in the
 * partition's directory, so the cut tears it as it tears the log's files. */
static void run_point(uint64_t seed, long cut_after, bool kv)
{
    char dir[512], kvpath[600];
    snprintf(dir, sizeof(dir), "%s/p%llu", cut_root, (unsigned long long)seed);
    snprintf(kvpath, sizeof(kvpath), "%s/kvstore", dir);
    sim_reset(seed, cut_after);
    acked_end = 0;
    storage_io_set(&sim_io);
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 6000 + (int64_t)(rnd() % 8000);
    cfg.index_interval_bytes = 512;
    if (kv) {
        CHECK(mkdir(dir, 0755) == 0);
        CHECK(kv_open(kvpath, &cfg.kv) == 0);
    }
    struct plog *log = NULL;
    CHECK(plog_open(dir, &cfg, NULL, NULL, true, &log, NULL) == 0);
    plog_set_flush_cb(log, on_flush, NULL);
    struct appended app[400];
    int napp = 0;
    int32_t epoch = 0;
    for (int i = 0; i < 400 && !sim.crashed; i++) {
        size_t len;
        int n = 1 + (int)(rnd() % 6);
        uint8_t *b = su_batch(n, 20 + (int)(rnd() % 300), 1000 + i, (int)(seed + (uint64_t)i),
                              &len);
        if (rnd() % 40 == 0)
            epoch++;
        int64_t base;
        int rc = plog_append(log, b, len, epoch, 1000 + i, &base);
        if (rc == 0) {
            app[napp++] = (struct appended){base, base + n, b, len};
        } else {
            mem_free(b);
        }
        if (rnd() % 3 == 0)
            plog_flush(log);
        if (rnd() % 50 == 0 && !sim.crashed) { /* a clean restart in the middle */
            plog_close(log);
            CHECK(plog_open(dir, &cfg, NULL, NULL, true, &log, NULL) == 0);
            plog_set_flush_cb(log, on_flush, NULL);
        }
    }
    /* the power fails (if the workload ended first, it fails now) */
    sim.crashed = true;
    plog_close(log); /* frees memory; nothing reaches the disk any more */
    kv_close(cfg.kv);
    storage_io_set(recovery_io());
    power_cut(dir);
    if (kv && kv_open(kvpath, &cfg.kv) != 0)
        test_fail(__FILE__, __LINE__, "seed %llu cut %ld: the kvstore does not open",
                  (unsigned long long)seed, cut_after);

    struct plog_recovery rec;
    log = NULL;
    int rc = plog_open(dir, &cfg, NULL, NULL, false, &log, &rec);
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "seed %llu cut %ld: recovery failed: %d",
                  (unsigned long long)seed, cut_after, rc);
    int64_t leo = plog_end_offset(log);
    if (leo < acked_end)
        test_fail(__FILE__, __LINE__, "seed %llu cut %ld: acknowledged up to %lld, recovered %lld",
                  (unsigned long long)seed, cut_after, (long long)acked_end, (long long)leo);
    /* every recovered batch is exactly what was appended at that offset */
    int64_t off = 0;
    int k = 0;
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 1, &r), 0);
        ASSERT(r.len > 0);
        while (k < napp && app[k].base < r.first_offset)
            k++;
        ASSERT(k < napp);
        ASSERT_EQ(app[k].base, r.first_offset);
        ASSERT_EQ(app[k].len, r.len);
        uint8_t *got = mem_alloc(r.len);
        ASSERT_EQ(pread(r.file->fd, got, r.len, r.pos), (ssize_t)r.len);
        /* the stored copy has its baseOffset and epoch rewritten in app[k].bytes already */
        if (memcmp(got, app[k].bytes, r.len) != 0)
            test_fail(__FILE__, __LINE__, "seed %llu cut %ld: batch at %lld differs",
                      (unsigned long long)seed, cut_after, (long long)r.first_offset);
        mem_free(got);
        fileref_put(r.file);
        off = r.next_offset;
    }
    /* and the log takes appends again */
    size_t len;
    uint8_t *b = su_batch(1, 10, 5000, 1, &len);
    int64_t base;
    ASSERT_EQ(plog_append(log, b, len, epoch + 1, 5000, &base), 0);
    ASSERT_EQ(base, leo);
    mem_free(b);
    plog_close(log);
    kv_close(cfg.kv);
    storage_io_set(NULL);
    for (int i = 0; i < napp; i++)
        mem_free(app[i].bytes);
    sim_reset(0, 0);
    remove_tree(dir); /* a failing point's stays, for a look */
}

TEST_T(storage_powercut_recovery_keeps_every_acknowledged_batch, 300)
{
    /* 1,000 cut points: the I/O call after which the power fails, spread over the workload;
     * every other one with the log's small state in a kvstore */
    cut_root_make();
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        sim.rng = seed * 7919;
        long cut = 1 + (long)(rnd() % 900);
        run_point(seed, cut, seed % 2 == 0);
    }
    if (strcmp(cut_root, test_tmpdir()) != 0)
        CHECK(rmdir(cut_root) == 0);
}
