/* The node's small-state store (storage/kvstore.h): values back after a reopen, what a kill -9
 * keeps (a prefix of the puts), a torn or foreign file, compaction, and write and sync errors
 * that must never pass for durability. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "storage/io.h"
#include "storage/kvstore.h"
#include "storage_util.h"

static const char *kv_path(const char *name)
{
    return su_dir(name);
}

static struct kvstore *kv_must_open(const char *path)
{
    struct kvstore *kv = NULL;
    ASSERT_EQ(kv_open(path, &kv), 0);
    return kv;
}

static int64_t file_size(const char *path)
{
    struct stat st;
    ASSERT_EQ(stat(path, &st), 0);
    return st.st_size;
}

/* The value of (dir, name) as a string, "" when missing. */
static const char *get_str(struct kvstore *kv, const char *dir, const char *name)
{
    static char buf[256];
    ssize_t n = kv_get(kv, dir, name, buf, sizeof(buf) - 1);
    if (n == -ENOENT)
        return "";
    ASSERT(n >= 0);
    buf[n] = 0;
    return buf;
}

static void put_str(struct kvstore *kv, const char *dir, const char *name, const char *v)
{
    ASSERT_EQ(kv_put(kv, dir, name, v, strlen(v)), 0);
}

TEST(storage_kvstore_put_get_del_and_reopen)
{
    const char *path = kv_path("kv1");
    struct kvstore *kv = kv_must_open(path);
    ASSERT_STREQ(get_str(kv, "t-0", "recovery-point"), "");
    ASSERT(!kv_has_dir(kv, "t-0"));
    put_str(kv, "t-0", "recovery-point", "12");
    put_str(kv, "t-0", "raft-hard-state", "term 3");
    put_str(kv, "t-1", "recovery-point", "7");
    put_str(kv, "t-0", "recovery-point", "13"); /* replaces */
    ASSERT_STREQ(get_str(kv, "t-0", "recovery-point"), "13");
    ASSERT_STREQ(get_str(kv, "t-0", "raft-hard-state"), "term 3");
    ASSERT(kv_has_dir(kv, "t-1"));
    ASSERT(!kv_has_dir(kv, "t"));
    ASSERT_EQ(kv_put(kv, "t-2", "empty", "", 0), 0); /* an empty value is a value */
    char small[2];
    ASSERT_EQ(kv_get(kv, "t-0", "raft-hard-state", small, sizeof(small)), -ERR_TOO_LARGE);
    ASSERT_EQ(kv_get(kv, "t-2", "empty", small, sizeof(small)), 0);
    ASSERT_EQ(kv_del(kv, "t-0", "raft-hard-state"), 0);
    ASSERT_EQ(kv_del(kv, "t-0", "never-there"), 0);
    ASSERT_STREQ(get_str(kv, "t-0", "raft-hard-state"), "");
    ASSERT_EQ(kv_del_dir(kv, "t-1"), 0);
    ASSERT(!kv_has_dir(kv, "t-1"));
    struct kv_stats st;
    kv_get_stats(kv, &st);
    ASSERT_EQ(st.dirs, 2);
    ASSERT_EQ(st.values, 2);
    ASSERT(!kv_synced(kv));
    ASSERT_EQ(kv_close(kv), 0);

    kv = kv_must_open(path);
    ASSERT_STREQ(get_str(kv, "t-0", "recovery-point"), "13");
    ASSERT_STREQ(get_str(kv, "t-0", "raft-hard-state"), "");
    ASSERT_STREQ(get_str(kv, "t-1", "recovery-point"), "");
    ASSERT_EQ(kv_get(kv, "t-2", "empty", small, sizeof(small)), 0);
    ASSERT(kv_synced(kv));
    ASSERT_EQ(kv_close(kv), 0);
}

TEST(storage_kvstore_refuses_bad_keys_and_values)
{
    struct kvstore *kv = kv_must_open(kv_path("kv2"));
    char big_dir[KV_DIR_MAX + 2], big_name[KV_NAME_MAX + 2];
    memset(big_dir, 'd', sizeof(big_dir) - 1);
    big_dir[sizeof(big_dir) - 1] = 0;
    memset(big_name, 'n', sizeof(big_name) - 1);
    big_name[sizeof(big_name) - 1] = 0;
    ASSERT_EQ(kv_put(kv, big_dir, "x", "v", 1), -ERR_INVALID);
    ASSERT_EQ(kv_put(kv, "d", big_name, "v", 1), -ERR_INVALID);
    ASSERT_EQ(kv_put(kv, "", "x", "v", 1), -ERR_INVALID);
    ASSERT_EQ(kv_put(kv, "d", "", "v", 1), -ERR_INVALID);
    ASSERT_EQ(kv_put(kv, "d", "x", "v", KV_VALUE_MAX + 1), -ERR_INVALID);
    ASSERT_EQ(kv_del_dir(kv, ""), -ERR_INVALID);
    big_dir[KV_DIR_MAX] = 0; /* exactly the limits: taken */
    big_name[KV_NAME_MAX] = 0;
    ASSERT_EQ(kv_put(kv, big_dir, big_name, "v", 1), 0);
    ASSERT_STREQ(get_str(kv, big_dir, big_name), "v");
    ASSERT_EQ(kv_close(kv), 0);
    kv = kv_must_open(kv_path("kv2"));
    ASSERT_STREQ(get_str(kv, big_dir, big_name), "v");
    ASSERT_EQ(kv_close(kv), 0);
}

/* A child puts, writes out, puts more (only buffered) and dies as kill -9 would: what was
 * written is there, in order; what was only buffered is not. */
static void puts_then_die(const char *path, void *arg)
{
    (void)arg;
    struct kvstore *kv = kv_must_open(path);
    put_str(kv, "a-0", "recovery-point", "1");
    put_str(kv, "a-0", "leader-epoch-checkpoint", "e1");
    ASSERT_EQ(kv_sync(kv), 0);
    put_str(kv, "a-0", "recovery-point", "2");
    ASSERT_EQ(kv_flush(kv), 0);                /* written, not synced: a kill -9 keeps it */
    put_str(kv, "a-0", "recovery-point", "3"); /* buffered only */
    _exit(0);
}

TEST(storage_kvstore_a_kill_keeps_what_was_written)
{
    const char *path = kv_path("kv3");
    su_crash_after(puts_then_die, path, NULL);
    struct kvstore *kv = kv_must_open(path);
    ASSERT_STREQ(get_str(kv, "a-0", "recovery-point"), "2");
    ASSERT_STREQ(get_str(kv, "a-0", "leader-epoch-checkpoint"), "e1");
    ASSERT_EQ(kv_close(kv), 0);
}

/* Cuts the file at every length: each open keeps exactly the records wholly before the cut
 * (a prefix of the puts), drops the rest, and leaves a file that takes appends again. */
TEST(storage_kvstore_a_torn_tail_keeps_the_prefix)
{
    const char *path = kv_path("kv4");
    struct kvstore *kv = kv_must_open(path);
    int64_t ends[6];
    ends[0] = file_size(path);
    for (int i = 1; i < 6; i++) {
        char v[16];
        snprintf(v, sizeof(v), "%d", i);
        put_str(kv, "p-0", "recovery-point", v);
        ASSERT_EQ(kv_flush(kv), 0);
        ends[i] = file_size(path);
    }
    ASSERT_EQ(kv_close(kv), 0);
    int64_t full = file_size(path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    uint8_t whole[4096];
    ASSERT(full < (int64_t)sizeof(whole));
    ASSERT_EQ(read(fd, whole, (size_t)full), (ssize_t)full);
    close(fd);
    const char *torn = su_dir("kv4-torn");
    for (int64_t cut = ends[0]; cut <= full; cut++) {
        fd = open(torn, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_EQ(write(fd, whole, (size_t)cut), (ssize_t)cut);
        close(fd);
        int kept = 0;
        while (kept < 5 && ends[kept + 1] <= cut)
            kept++;
        kv = kv_must_open(torn);
        char want[16] = "";
        if (kept > 0)
            snprintf(want, sizeof(want), "%d", kept);
        ASSERT_STREQ(get_str(kv, "p-0", "recovery-point"), want);
        /* the torn bytes are gone: a file cut inside a record is rewritten to the one value
         * left; one cut between records is kept as it is */
        ASSERT_EQ(file_size(torn), cut == ends[kept] ? cut : kept > 0 ? ends[1] : ends[0]);
        put_str(kv, "p-0", "after", "x");
        ASSERT_EQ(kv_close(kv), 0);
        kv = kv_must_open(torn);
        ASSERT_STREQ(get_str(kv, "p-0", "after"), "x");
        ASSERT_STREQ(get_str(kv, "p-0", "recovery-point"), want);
        ASSERT_EQ(kv_close(kv), 0);
    }
}

#define BIG_N 40
#define BIG_VALUE_MAX 300000

static size_t big_len(int i)
{
    return 1000 + (size_t)(i * 7919) % (BIG_VALUE_MAX - 1000);
}

/* Opens the big store and checks that exactly values 0..kept-1 are there, whole. */
static void big_expect(const char *path, int kept)
{
    static uint8_t got[BIG_VALUE_MAX];
    struct kvstore *kv = kv_must_open(path);
    for (int i = 0; i < BIG_N; i++) {
        char dir[16];
        snprintf(dir, sizeof(dir), "d-%d", i);
        ssize_t n = kv_get(kv, dir, "v", got, sizeof(got));
        if (i >= kept) {
            ASSERT_EQ(n, -ENOENT);
            continue;
        }
        ASSERT_EQ(n, (ssize_t)big_len(i));
        for (size_t k = 0; k < (size_t)n; k++)
            ASSERT_EQ(got[k], (uint8_t)(i + 1));
    }
    ASSERT_EQ(kv_close(kv), 0);
}

/* A store several times bigger than replay's reads (2 MiB), records of many sizes across their
 * edges: every value comes back; a bad byte in a record past the first read keeps exactly the
 * records before it. */
TEST(storage_kvstore_a_big_file_replays_across_its_reads)
{
    const char *path = kv_path("kv-big");
    struct kvstore *kv = kv_must_open(path);
    static uint8_t val[BIG_VALUE_MAX];
    int64_t ends[BIG_N + 1];
    ends[0] = file_size(path);
    for (int i = 0; i < BIG_N; i++) {
        memset(val, i + 1, big_len(i));
        char dir[16];
        snprintf(dir, sizeof(dir), "d-%d", i);
        ASSERT_EQ(kv_put(kv, dir, "v", val, big_len(i)), 0);
        ASSERT_EQ(kv_flush(kv), 0);
        ends[i + 1] = file_size(path);
    }
    ASSERT_EQ(kv_close(kv), 0);
    ASSERT_CMP(ends[BIG_N], >, 4 << 20);
    big_expect(path, BIG_N);

    int bad = 0; /* the record holding the file's byte at 3 MiB: inside the second read */
    while (ends[bad + 1] <= 3 << 20)
        bad++;
    int fd = open(path, O_RDWR | O_CLOEXEC);
    ASSERT(fd >= 0);
    uint8_t byte;
    ASSERT_EQ(pread(fd, &byte, 1, ends[bad] + 20), 1);
    byte ^= 0x01;
    ASSERT_EQ(pwrite(fd, &byte, 1, ends[bad] + 20), 1);
    close(fd);
    big_expect(path, bad);
    ASSERT_EQ(file_size(path), ends[bad]); /* the rest was dropped at the first open */
}

TEST(storage_kvstore_refuses_a_file_that_is_not_a_store)
{
    const char *path = kv_path("kv5");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_EQ(write(fd, "not a store at all", 18), 18);
    close(fd);
    struct kvstore *kv = NULL;
    ASSERT_EQ(kv_open(path, &kv), -ERR_CORRUPT);
    ASSERT(kv == NULL);
    ASSERT_EQ(file_size(path), 18); /* left as it was */
    ASSERT_EQ(kv_open(su_dir("no-such-dir/kvstore"), &kv), -ENOENT);
}

/* Replacing values makes the file grow; it is rewritten to what it holds now and then, and at
 * an open that finds it mostly dead. */
TEST(storage_kvstore_compacts)
{
    const char *path = kv_path("kv6");
    struct kvstore *kv = kv_must_open(path);
    char v[64];
    for (int i = 0; i < 200000; i++) {
        snprintf(v, sizeof(v), "value %d", i);
        ASSERT_EQ(kv_put(kv, i % 2 ? "x-1" : "x-0", "recovery-point", v, strlen(v)), 0);
    }
    struct kv_stats st;
    kv_get_stats(kv, &st);
    ASSERT_CMP(st.rewrites, >=, 1);
    ASSERT_CMP(st.file_bytes, <, (8 << 20) + (64 << 10) + 4 * st.live_bytes);
    ASSERT_EQ(kv_close(kv), 0);
    kv = kv_must_open(path);
    ASSERT_STREQ(get_str(kv, "x-0", "recovery-point"), "value 199998");
    ASSERT_STREQ(get_str(kv, "x-1", "recovery-point"), "value 199999");
    kv_get_stats(kv, &st);
    ASSERT_EQ(kv_close(kv), 0);
    ASSERT_CMP(file_size(path), <=, 2 * st.live_bytes + (1 << 20) + 8);
}

static struct {
    int pwrite_errno;
    int fdatasync_errno;
    int pwrites;
} F;

static ssize_t f_pwrite(int fd, const void *buf, size_t n, off_t off)
{
    F.pwrites++;
    if (F.pwrite_errno) {
        /* half of it reaches the file: a torn record */
        ssize_t r = pwrite(fd, buf, n / 2, off);
        (void)r;
        errno = F.pwrite_errno;
        return -1;
    }
    return pwrite(fd, buf, n, off);
}

static int f_fdatasync(int fd)
{
    if (F.fdatasync_errno) {
        errno = F.fdatasync_errno;
        return -1;
    }
    return fdatasync(fd);
}

/* A failed write or sync is never taken for durability: the memory stays the truth, the next
 * sync writes it whole to a new file, and a reopen finds every value. */
TEST(storage_kvstore_write_and_sync_errors_rewrite_from_memory)
{
    const char *path = kv_path("kv7");
    static struct storage_io io;
    io = storage_io_default;
    io.pwrite = f_pwrite;
    io.fdatasync = f_fdatasync;
    storage_io_set(&io);
    memset(&F, 0, sizeof(F));
    struct kvstore *kv = kv_must_open(path);
    put_str(kv, "e-0", "a", "1");
    ASSERT_EQ(kv_sync(kv), 0);

    F.pwrite_errno = ENOSPC;
    put_str(kv, "e-0", "b", "2");
    ASSERT_EQ(kv_flush(kv), -ENOSPC);
    ASSERT_STREQ(get_str(kv, "e-0", "b"), "2"); /* in memory all the same */
    put_str(kv, "e-0", "c", "3");
    ASSERT_EQ(kv_sync(kv), -ENOSPC); /* the rewrite cannot be written either */
    ASSERT(!kv_synced(kv));
    F.pwrite_errno = 0;
    ASSERT_EQ(kv_sync(kv), 0);
    ASSERT(kv_synced(kv));
    struct kv_stats st;
    kv_get_stats(kv, &st);
    ASSERT_CMP(st.rewrites, >=, 1);
    ASSERT_CMP(st.write_errors, >=, 2);

    put_str(kv, "e-0", "d", "4");
    F.fdatasync_errno = EIO;
    ASSERT_EQ(kv_sync(kv), -EIO);
    ASSERT(!kv_synced(kv));
    F.fdatasync_errno = 0;
    F.pwrites = 0;
    ASSERT_EQ(kv_sync(kv), 0);
    ASSERT_EQ(F.pwrites, 1); /* the whole file, not an append after the failed sync */
    ASSERT_EQ(kv_close(kv), 0);
    storage_io_set(NULL);

    kv = kv_must_open(path);
    ASSERT_STREQ(get_str(kv, "e-0", "a"), "1");
    ASSERT_STREQ(get_str(kv, "e-0", "b"), "2");
    ASSERT_STREQ(get_str(kv, "e-0", "c"), "3");
    ASSERT_STREQ(get_str(kv, "e-0", "d"), "4");
    ASSERT_EQ(kv_close(kv), 0);
}

/* The asynchronous halves: the sequence a begin covers is durable once its end reports 0,
 * puts made meanwhile are not. */
TEST(storage_kvstore_sync_in_two_halves)
{
    struct kvstore *kv = kv_must_open(kv_path("kv8"));
    put_str(kv, "s-0", "a", "1");
    struct fileref *f;
    uint64_t seq;
    ASSERT_EQ(kv_sync_begin(kv, &f, &seq), 0);
    put_str(kv, "s-0", "b", "2");
    ASSERT_EQ(fdatasync(f->fd), 0);
    kv_sync_end(kv, seq, 0);
    fileref_put(f);
    ASSERT(!kv_synced(kv)); /* b came after */
    ASSERT_EQ(kv_sync_begin(kv, &f, &seq), 0);
    kv_sync_end(kv, seq, -EIO);
    fileref_put(f);
    ASSERT(!kv_synced(kv));
    ASSERT_EQ(kv_sync(kv), 0);
    ASSERT(kv_synced(kv));
    ASSERT_EQ(kv_close(kv), 0);
}
