/* The open-file cache alone, and partition logs living in one with a tiny limit: descriptors
 * stay bounded however many logs there are, and every read, write, sync, roll and restart
 * works through files the cache closed and opened again. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>

#include "base/errors.h"
#include "storage/fdcache.h"
#include "storage/plog.h"
#include "storage_util.h"

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    ASSERT(d != NULL);
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3; /* ".", ".." and the directory itself */
}

static struct fileref *open_file(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", test_tmpdir(), name);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_CMP(fd, >=, 0);
    return fileref_new(fd);
}

TEST(storage_fdcache_closes_least_recently_used_of_other_owners)
{
    struct fdcache *c = fdcache_new(2);
    struct fdcache_entry e[4] = {{.owner = "a"}, {.owner = "b"}, {.owner = "c"}, {.owner = "c"}};
    const char *names[4] = {"f0", "f1", "f2", "f3"};
    int base = open_fds();
    fdcache_adopt(c, &e[0], open_file(names[0]));
    fdcache_adopt(c, &e[1], open_file(names[1]));
    ASSERT_EQ(open_fds(), base + 2);
    /* e[0] used last: e[1] is the one to go */
    struct fileref *f;
    ASSERT_EQ(fdcache_open(c, &e[0], test_tmpdir(), names[0], O_RDWR, &f), 0);
    fileref_put(f);
    fdcache_adopt(c, &e[2], open_file(names[2]));
    ASSERT(e[1].file == NULL && e[0].file != NULL && e[2].file != NULL);
    ASSERT_EQ(open_fds(), base + 2);
    /* an owner's own entries never close each other: c exceeds the limit with its second */
    fdcache_adopt(c, &e[3], open_file(names[3]));
    ASSERT(e[0].file == NULL && e[2].file != NULL && e[3].file != NULL);
    struct fdcache_stats st;
    fdcache_stats(c, &st);
    ASSERT_EQ(st.open, 2);
    ASSERT_EQ(st.evictions, 2);
    /* a reference taken before an eviction keeps the descriptor open and usable */
    ASSERT_EQ(fdcache_open(c, &e[2], test_tmpdir(), names[2], O_RDWR, &f), 0);
    ASSERT_EQ(pwrite(f->fd, "xyz", 3, 0), 3);
    fileref_put(f);
    ASSERT_EQ(fdcache_open(c, &e[1], test_tmpdir(), names[1], O_RDWR, &f), 0); /* again */
    fileref_put(f);
    fdcache_stats(c, &st);
    ASSERT_EQ(st.reopens, 1);
    ASSERT(e[1].file != NULL);
    /* opening a missing file fails cleanly and is counted */
    struct fdcache_entry gone = {.owner = "d"};
    ASSERT_EQ(fdcache_open(c, &gone, test_tmpdir(), "no-such-file", O_RDWR, &f), -ENOENT);
    ASSERT(gone.file == NULL);
    fdcache_stats(c, &st);
    ASSERT_EQ(st.errors, 1);
    for (int i = 0; i < 4; i++)
        fdcache_forget(&e[i]);
    fdcache_free(c);
    ASSERT_EQ(open_fds(), base);
}

TEST(storage_fdcache_reference_outlives_eviction)
{
    struct fdcache *c = fdcache_new(1);
    struct fdcache_entry a = {.owner = "a"}, b = {.owner = "b"};
    fdcache_adopt(c, &a, open_file("r0"));
    struct fileref *held;
    ASSERT_EQ(fdcache_open(c, &a, test_tmpdir(), "r0", O_RDWR, &held), 0);
    ASSERT_EQ(pwrite(held->fd, "hello", 5, 0), 5);
    fdcache_adopt(c, &b, open_file("r1")); /* closes a's cached descriptor... */
    ASSERT(a.file == NULL);
    char buf[5];
    ASSERT_EQ(pread(held->fd, buf, 5, 0), 5); /* ...but not the one held */
    ASSERT_MEMEQ(buf, "hello", 5);
    fileref_put(held);
    fdcache_forget(&a);
    fdcache_forget(&b);
    fdcache_free(c);
}

#define N_LOGS 40
#define LIMIT 16

static struct plog *open_cached(struct fdcache *c, int i, bool clean)
{
    char name[32];
    snprintf(name, sizeof(name), "p%d", i);
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 4096; /* several segments per log */
    struct plog *log = NULL;
    ASSERT_EQ(plog_open(su_dir(name), &cfg, NULL, c, clean, &log, NULL), 0);
    return log;
}

/* Reads all of log from offset 0 and checks every batch. Returns the records' next offset. */
static int64_t read_all(struct plog *log)
{
    int64_t off = 0, end = plog_end_offset(log);
    while (off < end) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, end, 1 << 20, &r), 0);
        ASSERT(r.len > 0);
        uint8_t *p = su_read_bytes(&r);
        int64_t first = -1, next = -1;
        su_count_batches(p, r.len, &first, &next);
        ASSERT_EQ(first, off);
        mem_free(p);
        fileref_put(r.file);
        off = r.next_offset;
    }
    return off;
}

TEST(storage_fdcache_many_logs_stay_within_the_limit)
{
    struct fdcache *c = fdcache_new(LIMIT);
    struct plog *logs[N_LOGS];
    int base = open_fds();
    for (int i = 0; i < N_LOGS; i++)
        logs[i] = open_cached(c, i, false);
    /* rounds of appends across every log: segments roll, and each append may need its log's
     * files opened again */
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < N_LOGS; i++)
            su_append(logs[i], 5, 200, 1000 + round, 0);
        /* sealed segments' index files are held until their sync (no flusher here) */
        for (int i = 0; i < N_LOGS; i++)
            plog_flush(logs[i]);
        ASSERT_CMP(open_fds() - base, <=, LIMIT + 2); /* one log's own files beyond it */
    }
    struct fdcache_stats st;
    fdcache_stats(c, &st);
    ASSERT_CMP(st.reopens, >, 0);
    ASSERT_CMP(st.evictions, >, 0);
    for (int i = 0; i < N_LOGS; i++) {
        ASSERT_CMP(plog_segment_count(logs[i]), >, 1);
        /* syncing reopens dirty segments the cache closed */
        plog_flush(logs[i]);
        ASSERT(!plog_fenced(logs[i]));
        ASSERT_EQ(plog_durable_offset(logs[i]), plog_end_offset(logs[i]));
    }
    for (int i = 0; i < N_LOGS; i++)
        ASSERT_EQ(read_all(logs[i]), 30);
    ASSERT_CMP(open_fds() - base, <=, LIMIT + 4);
    for (int i = 0; i < N_LOGS; i++)
        plog_close(logs[i]);
    fdcache_stats(c, &st);
    ASSERT_EQ(st.open, 0);
    ASSERT_EQ(open_fds(), base);
    /* a clean restart and an unclean one (validation scans every segment) in the cache */
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < N_LOGS; i++)
            logs[i] = open_cached(c, i, pass == 0);
        ASSERT_CMP(open_fds() - base, <=, LIMIT + 8);
        for (int i = 0; i < N_LOGS; i++) {
            ASSERT_EQ(plog_end_offset(logs[i]), 30);
            ASSERT_EQ(read_all(logs[i]), 30);
        }
        for (int i = 0; i < N_LOGS; i++)
            plog_close(logs[i]);
    }
    ASSERT_EQ(open_fds(), base);
    fdcache_free(c);
}

TEST(storage_fdcache_read_in_flight_survives_eviction_and_lost_file_fails_cleanly)
{
    struct fdcache *c = fdcache_new(LIMIT);
    struct plog *a = open_cached(c, 100, false);
    su_append(a, 3, 100, 1000, 0);
    struct plog_read_result r;
    ASSERT_EQ(plog_read(a, 0, 3, 1 << 20, &r), 0);
    /* other logs push a's files out of the cache */
    struct plog *others[LIMIT + 2];
    for (int i = 0; i < LIMIT + 2; i++) {
        others[i] = open_cached(c, 200 + i, false);
        su_append(others[i], 1, 10, 1000, 0);
    }
    uint8_t *p = su_read_bytes(&r); /* the response's reference still reads */
    int64_t first = -1, next = -1;
    ASSERT_EQ(su_count_batches(p, r.len, &first, &next), 1);
    ASSERT_EQ(next, 3);
    mem_free(p);
    fileref_put(r.file);
    /* a's segment disappears while closed: the next read fails with the error, no crash */
    const char *dir = plog_dir(a);
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, su_seg(0, ".log"));
    ASSERT_EQ(unlink(path), 0);
    ASSERT_EQ(plog_read(a, 0, 3, 1 << 20, &r), -ENOENT);
    struct fdcache_stats st;
    fdcache_stats(c, &st);
    ASSERT_CMP(st.errors, >=, 1);
    /* an append needs the file too: it fails (and fences, as any failed write) */
    size_t len;
    uint8_t *b = su_batch(1, 10, 1000, 9, &len);
    int64_t base;
    ASSERT_CMP(plog_append(a, b, len, 0, 1000, &base), <, 0);
    mem_free(b);
    plog_close(a);
    for (int i = 0; i < LIMIT + 2; i++)
        plog_close(others[i]);
    fdcache_free(c);
}
