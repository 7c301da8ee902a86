/* A log opened on a thread other than the store's owner (plog_config.kv_read_only, files NULL),
 * as a restart opens its partitions (broker/topics.c): every open that would write to the store
 * fails with -EAGAIN having changed nothing the owner's open does not do again, and the owner's
 * open then gives the log a plain open would; an open that needs no write succeeds and hands
 * its files to a cache afterwards. */
#include <errno.h>
#include <string.h>

#include "storage/fdcache.h"
#include "storage/kvstore.h"
#include "storage_util.h"

static struct kvstore *store(void)
{
    struct kvstore *kv;
    ASSERT_EQ(kv_open(su_dir("kvstore"), &kv), 0);
    return kv;
}

static struct plog_config kv_config(struct kvstore *kv, bool read_only)
{
    struct plog_config cfg = su_config();
    cfg.kv = kv;
    cfg.kv_read_only = read_only;
    return cfg;
}

static int open_elsewhere(const char *dir, struct kvstore *kv, bool clean, struct plog **out)
{
    struct plog_config cfg = kv_config(kv, true);
    return plog_open_unsynced(dir, &cfg, NULL, NULL, clean, out, NULL);
}

static int64_t stored_rp(struct kvstore *kv, const char *dir)
{
    uint8_t b[8];
    ASSERT_EQ(kv_get(kv, dir, "recovery-point", b, sizeof(b)), 8);
    int64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | b[i];
    return v;
}

static int count_logs(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof(cmd), "ls %s | grep -c '\\.log$'", dir);
    FILE *f = popen(cmd, "r");
    ASSERT(f);
    int n = -1;
    ASSERT_EQ(fscanf(f, "%d", &n), 1);
    pclose(f);
    return n;
}

TEST(storage_plog_open_elsewhere_refuses_a_new_directory_with_old_values)
{
    struct kvstore *kv = store();
    const char *dir = su_dir("p-0");
    ASSERT_EQ(kv_put(kv, "p-0", "recovery-point", "\0\0\0\0\0\0\0\x07", 8), 0);
    struct plog *log = NULL;
    ASSERT_EQ(open_elsewhere(dir, kv, false, &log), -EAGAIN);
    ASSERT(log == NULL);
    ASSERT(!su_exists(test_tmpdir(), "p-0")); /* not made */
    ASSERT_EQ(stored_rp(kv, "p-0"), 7);
    struct plog_config cfg = kv_config(kv, false);
    log = su_open(dir, &cfg, false, NULL);
    ASSERT_EQ(plog_end_offset(log), 0);
    ASSERT_EQ(stored_rp(kv, "p-0"), 0); /* the old incarnation's value purged */
    plog_close(log);
    ASSERT_EQ(kv_close(kv), 0);
}

TEST(storage_plog_open_elsewhere_refuses_a_directory_without_segments)
{
    struct kvstore *kv = store();
    const char *dir = su_dir("p-1");
    ASSERT_EQ(mkdir(dir, 0755), 0);
    struct plog *log = NULL;
    ASSERT_EQ(open_elsewhere(dir, kv, false, &log), -EAGAIN);
    ASSERT_EQ(count_logs(dir), 0);
    ASSERT(!kv_has_dir(kv, "p-1"));
    struct plog_config cfg = kv_config(kv, false);
    log = su_open(dir, &cfg, false, NULL);
    ASSERT_EQ(count_logs(dir), 1);
    ASSERT_EQ(stored_rp(kv, "p-1"), 0);
    plog_close(log);
    ASSERT_EQ(kv_close(kv), 0);
}

/* A log of n batches of two records (epoch 1) in dir, written and closed with the store. */
static void write_log(struct kvstore *kv, const char *dir, int n)
{
    struct plog_config cfg = kv_config(kv, false);
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < n; i++)
        su_append(log, 2, 50, 1000 + i, 1);
    plog_close(log);
}

/* One of the log's offset files (`<offset>\n`, as plog.c writes them) put in dir by hand. */
static void write_offset(const char *dir, const char *name, int64_t offset)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ASSERT(f);
    fprintf(f, "%lld\n", (long long)offset);
    ASSERT_EQ(fclose(f), 0);
}

TEST(storage_plog_open_elsewhere_leaves_an_interrupted_reset_to_the_owner)
{
    struct kvstore *kv = store();
    const char *dir = su_dir("p-2");
    write_log(kv, dir, 5);
    /* the marker of a reset that passed its commit point, as plog_reset writes it */
    write_offset(dir, "log-reset", 100);
    struct plog *log = NULL;
    ASSERT_EQ(open_elsewhere(dir, kv, false, &log), -EAGAIN);
    ASSERT_EQ(count_logs(dir), 1);
    ASSERT(su_exists(dir, "log-reset"));
    ASSERT_EQ(stored_rp(kv, "p-2"), 10);
    struct plog_config cfg = kv_config(kv, false);
    log = su_open(dir, &cfg, false, NULL);
    ASSERT_EQ(plog_start_offset(log), 100);
    ASSERT_EQ(plog_end_offset(log), 100);
    ASSERT(!su_exists(dir, "log-reset"));
    ASSERT_EQ(stored_rp(kv, "p-2"), 100);
    plog_close(log);
    ASSERT_EQ(kv_close(kv), 0);
}

TEST(storage_plog_open_elsewhere_leaves_a_changed_checkpoint_to_the_owner)
{
    struct kvstore *kv = store();
    const char *dir = su_dir("p-3");
    write_log(kv, dir, 3);
    /* a log start past the log's end: the open restarts the log empty there, which changes
     * the leader-epoch checkpoint, stored at once */
    write_offset(dir, "log-start-offset", 20);
    struct plog *log = NULL;
    ASSERT_EQ(open_elsewhere(dir, kv, false, &log), -EAGAIN);
    ASSERT(su_exists(dir, su_seg(0, ".log")));
    ASSERT_EQ(count_logs(dir), 1);
    struct plog_config cfg = kv_config(kv, false);
    log = su_open(dir, &cfg, false, NULL);
    ASSERT_EQ(plog_start_offset(log), 20);
    ASSERT_EQ(plog_end_offset(log), 20);
    plog_close(log);
    ASSERT(!su_exists(dir, su_seg(0, ".log")));
    ASSERT_EQ(stored_rp(kv, "p-3"), 20);
    ASSERT_EQ(kv_close(kv), 0);
}

TEST(storage_plog_open_elsewhere_hands_its_files_to_a_cache)
{
    struct kvstore *kv = store();
    const char *dir = su_dir("p-4");
    struct plog_config cfg = kv_config(kv, false);
    cfg.segment_bytes = 1024;
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 12; i++)
        su_append(log, 2, 200, 1000 + i, 1); /* ~470 bytes: a roll every other */
    plog_close(log);
    int segs = count_logs(dir);
    ASSERT_CMP(segs, >=, 4);
    ASSERT_EQ(open_elsewhere(dir, kv, false, &log), 0);
    /* every file it opened is still open: the directory and each segment at least */
    ASSERT_CMP(plog_open_files(log), >=, (size_t)segs + 1);
    struct fdcache *files = fdcache_new(64);
    plog_use_file_cache(log, files);
    struct fdcache_stats fs;
    fdcache_stats(files, &fs);
    ASSERT_CMP(fs.open, >=, (size_t)segs + 1); /* the cache's now, to close when it must */
    fdcache_set_limit(files, 2);
    fdcache_stats(files, &fs);
    ASSERT_CMP(fs.open, <=, (size_t)2);
    ASSERT_EQ(plog_open_finish_many(&log, 1), 0);
    /* read through the cache: every batch, files reopened as needed */
    int64_t off = 0;
    int batches = 0;
    while (off < plog_end_offset(log)) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, plog_end_offset(log), 600, &r), 0);
        ASSERT_CMP(r.len, >, 0);
        fileref_put(r.file);
        off = r.next_offset;
        ASSERT_CMP(++batches, <=, 12);
    }
    ASSERT_EQ(off, 24);
    /* the open's flag was its own: the owner's appends store the recovery point as usual */
    su_append(log, 2, 200, 5000, 1);
    plog_set_high_watermark(log, plog_end_offset(log));
    plog_close(log);
    ASSERT_EQ(stored_rp(kv, "p-4"), 26);
    fdcache_stats(files, &fs);
    ASSERT_EQ(fs.open, 0);
    fdcache_free(files);
    ASSERT_EQ(kv_close(kv), 0);
}
