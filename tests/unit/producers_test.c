/* A partition's producer state against its log (broker/producers.h): snapshots at roll and
 * close, recovery from the newest valid snapshot plus the log after it, suffix truncation,
 * retention. Runs the real plog and the produce-path calls in produce.c's order. */
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/internal.h"
#include "broker/producer_state.h"
#include "broker/producers.h"
#include "kafka/batch.h"
#include "kafka/errors.h"
#include "storage/io.h"
#include "storage/plog.h"
#include "storage_util.h"

struct fx {
    struct broker_config cfg;
    struct broker b;
    struct topic t;
    struct partition p;
    struct plog_config pc;
    const char *dir;
};

/* A reopen, as a restart's topics_load does it: the log opened unsynced (the producer state
 * then reads the open's listing of the directory for its snapshots), finished after. */
static void fx_open(struct fx *f, bool clean)
{
    ASSERT_EQ(plog_open_unsynced(f->dir, &f->pc, NULL, NULL, clean, &f->p.log, NULL), 0);
    ASSERT(plog_open_names(f->p.log) != NULL);
    partition_producers_open(&f->b, &f->p);
    ASSERT_EQ(plog_open_finish_many(&f->p.log, 1), 0);
}

static void fx_init(struct fx *f, int64_t segment_bytes)
{
    memset(f, 0, sizeof(*f));
    f->cfg.producer_id_expiration_ms = 86400000;
    f->cfg.producer_state_max_producers = 1000;
    f->b.cfg = &f->cfg;
    f->t.name = "t";
    f->p.topic = &f->t;
    f->pc = su_config();
    f->pc.segment_bytes = segment_bytes;
    f->dir = su_dir("t-0");
    /* a new partition: opened whole, as a created one is (no listing: its own) */
    f->p.log = su_open(f->dir, &f->pc, false, NULL);
    partition_producers_open(&f->b, &f->p);
}

/* A crash as far as producer state goes: no closing snapshot. */
static void fx_crash(struct fx *f)
{
    partition_producers_close(&f->p, true, true);
    plog_close(f->p.log);
}

static void fx_close(struct fx *f)
{
    partition_producers_close(&f->p, false, true);
    plog_close(f->p.log);
}

static uint8_t *pbatch(int64_t pid, int16_t epoch, int32_t seq, int n, size_t *len)
{
    uint8_t *b = su_batch(n, 40, time_wall_ms(), seq, len);
    for (int i = 0; i < 8; i++)
        b[43 + i] = (uint8_t)((uint64_t)pid >> (56 - 8 * i));
    b[51] = (uint8_t)((uint16_t)epoch >> 8);
    b[52] = (uint8_t)epoch;
    for (int i = 0; i < 4; i++)
        b[53 + i] = (uint8_t)((uint32_t)seq >> (24 - 8 * i));
    kbatch_update_crc(b, *len);
    return b;
}

/* What produce.c does with one batch; *base is the offset it got (or already had). */
static int16_t produce(struct fx *f, int64_t pid, int16_t epoch, int32_t seq, int n, int64_t *base,
                       bool *dup)
{
    size_t len;
    uint8_t *b = pbatch(pid, epoch, seq, n, &len);
    struct kbatch_header h;
    kbatch_parse_header(b, &h);
    struct produce_resp_partition out = {.base_offset = -1};
    int64_t now = time_wall_ms();
    bool d = false;
    int16_t ec = producers_before_append(&f->p, &h, now, &out, &d);
    if (ec == KERR_NONE && d) {
        *base = out.base_offset;
    } else if (ec == KERR_NONE) {
        ASSERT_EQ(plog_append(f->p.log, b, len, 0, now, base), 0); /* the hook records it */
    }
    if (dup)
        *dup = d;
    mem_free(b);
    return ec;
}

static int64_t produce_ok(struct fx *f, int64_t pid, int16_t epoch, int32_t seq, int n)
{
    int64_t base = -1;
    bool dup;
    ASSERT_EQ(produce(f, pid, epoch, seq, n, &base, &dup), KERR_NONE);
    ASSERT(!dup);
    return base;
}

/* ---- comparing states ---- */

#define NPIDS 3
static const int64_t pids[NPIDS] = {1000, 1001, 5000000000LL};

struct saved {
    bool present[NPIDS];
    int16_t epoch[NPIDS];
    int n[NPIDS];
    struct pstate_batch b[NPIDS][PSTATE_BATCHES];
};

static void save(struct fx *f, struct saved *s)
{
    struct pstate *t = partition_producers_table(&f->p);
    for (int i = 0; i < NPIDS; i++)
        s->present[i] = pstate_get(t, pids[i], &s->epoch[i], s->b[i], &s->n[i], NULL);
}

static void expect_saved(struct fx *f, const struct saved *s)
{
    struct saved now;
    save(f, &now);
    for (int i = 0; i < NPIDS; i++) {
        ASSERT_EQ(now.present[i], s->present[i]);
        if (!s->present[i])
            continue;
        ASSERT_EQ(now.epoch[i], s->epoch[i]);
        ASSERT_EQ(now.n[i], s->n[i]);
        ASSERT_MEMEQ(now.b[i], s->b[i], (size_t)s->n[i] * sizeof(s->b[i][0]));
    }
}

/* Snapshot offsets in the directory, ascending (up to cap). */
static int snapshot_files(const char *dir, int64_t *offs, int cap)
{
    DIR *d = opendir(dir);
    ASSERT(d != NULL);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        long long v;
        char tail[32];
        if (sscanf(de->d_name, "%20lld%31s", &v, tail) == 2 && strcmp(tail, ".snapshot") == 0) {
            ASSERT(n < cap);
            offs[n++] = v;
        }
    }
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && offs[j - 1] > offs[j]; j--) {
            int64_t x = offs[j];
            offs[j] = offs[j - 1];
            offs[j - 1] = x;
        }
    return n;
}

/* Cuts the snapshot at offset to 30 bytes: a torn file its CRC rejects. */
static void tear_snapshot(const char *dir, int64_t offset)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%020lld.snapshot", dir, (long long)offset);
    int fd = open(path, O_WRONLY);
    ASSERT(fd >= 0);
    ASSERT_EQ(ftruncate(fd, 30), 0);
    close(fd);
}

/* Three producers, rounds batches each, interleaved; returns the next sequence (all equal). */
static int32_t fill(struct fx *f, int rounds, int32_t seq, int16_t epoch)
{
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < NPIDS; i++)
            produce_ok(f, pids[i], epoch, seq, 2);
        seq += 2;
    }
    return seq;
}

TEST(producers_recovery_uses_the_newest_snapshot_and_the_log_after_it)
{
    struct fx f;
    fx_init(&f, 4096);
    int32_t seq = fill(&f, 60, 0, 0);
    int64_t offs[8];
    int n = snapshot_files(f.dir, offs, 8);
    ASSERT_EQ(n, SNAPSHOTS_KEPT); /* written at every roll, older ones pruned */
    ASSERT_CMP(plog_segment_count(f.p.log), >, 3);
    struct saved before;
    save(&f, &before);
    int64_t leo = plog_end_offset(f.p.log);
    fx_crash(&f);

    fx_open(&f, false);
    ASSERT(!partition_producers_pending(&f.p)); /* tracked batches follow the snapshot */
    struct producers_stats st;
    partition_producers_stats(&f.p, &st);
    ASSERT_EQ(st.snapshot_offset, offs[n - 1]);
    ASSERT_EQ(st.scanned_from, offs[n - 1]);
    ASSERT_EQ(st.batches_replayed, (leo - offs[n - 1]) / 2); /* two records per batch */
    ASSERT_CMP(st.batches_replayed, >, 0);
    ASSERT_EQ(st.invalid_snapshots, 0);
    expect_saved(&f, &before);

    /* a retry of each producer's last batch is a duplicate with its original offset */
    for (int i = 0; i < NPIDS; i++) {
        int64_t base;
        bool dup;
        ASSERT_EQ(produce(&f, pids[i], 0, seq - 2, 2, &base, &dup), KERR_NONE);
        ASSERT(dup);
        ASSERT_EQ(base, before.b[i][before.n[i] - 1].first_offset);
        ASSERT_EQ(produce(&f, pids[i], 0, seq + 2, 2, &base, &dup),
                  KERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    }
    ASSERT_EQ(plog_end_offset(f.p.log), leo);
    fill(&f, 1, seq, 0);
    fx_close(&f);
}

TEST(producers_a_corrupt_snapshot_falls_back_to_an_older_one_or_the_log)
{
    struct fx f;
    fx_init(&f, 4096);
    fill(&f, 60, 0, 0);
    struct saved before;
    save(&f, &before);
    fx_crash(&f);
    int64_t offs[8];
    int n = snapshot_files(f.dir, offs, 8);
    ASSERT_EQ(n, 2);
    tear_snapshot(f.dir, offs[1]); /* the newest one */
    fx_open(&f, false);
    struct producers_stats st;
    partition_producers_stats(&f.p, &st);
    ASSERT_EQ(st.invalid_snapshots, 1);
    ASSERT_EQ(st.snapshot_offset, offs[0]);
    ASSERT_EQ(st.snapshots, 1);
    ASSERT_EQ(snapshot_files(f.dir, offs, 8), 1); /* the torn one is gone */
    expect_saved(&f, &before);
    fx_crash(&f);

    /* flip a byte of the remaining one: no snapshot left, the whole log is scanned */
    char path[600];
    snprintf(path, sizeof(path), "%s/%020lld.snapshot", f.dir, (long long)offs[0]);
    int fd = open(path, O_RDWR);
    ASSERT(fd >= 0);
    uint8_t byte;
    ASSERT_EQ(pread(fd, &byte, 1, 40), 1);
    byte ^= 0x10;
    ASSERT_EQ(pwrite(fd, &byte, 1, 40), 1);
    close(fd);
    fx_open(&f, false);
    partition_producers_stats(&f.p, &st);
    ASSERT_EQ(st.invalid_snapshots, 1);
    ASSERT_EQ(st.snapshot_offset, -1);
    ASSERT_EQ(st.scanned_from, 0);
    ASSERT_EQ(st.batches_replayed, 180);
    expect_saved(&f, &before);
    fx_close(&f);
}

TEST(producers_suffix_truncation_rebuilds_and_drops_snapshots_above_it)
{
    struct fx f;
    fx_init(&f, 4096);
    int32_t seq = fill(&f, 30, 0, 0);
    int64_t cut = plog_end_offset(f.p.log);
    struct saved at_cut;
    save(&f, &at_cut);
    int32_t seq_at_cut = seq;
    seq = fill(&f, 40, seq, 0); /* several rolls past the cut */
    int64_t offs[8];
    ASSERT_EQ(snapshot_files(f.dir, offs, 8), 2);
    ASSERT_CMP(offs[0], >, cut);

    ASSERT_EQ(plog_truncate_suffix(f.p.log, cut), 0);
    ASSERT_EQ(plog_end_offset(f.p.log), cut);
    int n = snapshot_files(f.dir, offs, 8);
    for (int i = 0; i < n; i++)
        ASSERT_CMP(offs[i], <=, cut);
    expect_saved(&f, &at_cut);
    /* the producers continue from the cut; what they wrote after it is gone */
    int64_t base;
    bool dup;
    ASSERT_EQ(produce(&f, pids[0], 0, seq - 2, 2, &base, &dup), KERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    ASSERT_EQ(produce(&f, pids[0], 0, seq_at_cut, 2, &base, &dup), KERR_NONE);
    ASSERT(!dup);
    ASSERT_EQ(base, cut);
    struct saved after;
    save(&f, &after);

    /* a crash now must not resurrect anything from before the truncation */
    fx_crash(&f);
    fx_open(&f, false);
    expect_saved(&f, &after);
    fx_close(&f);
}

TEST(producers_a_snapshot_above_the_log_end_is_deleted_at_open)
{
    struct fx f;
    fx_init(&f, 1 << 20);
    fill(&f, 5, 0, 0);
    struct saved before;
    save(&f, &before);
    int64_t leo = plog_end_offset(f.p.log);
    fx_crash(&f);
    /* a valid snapshot of another history, above LEO (as after a torn tail) */
    struct pstate *other = pstate_new(&(struct pstate_limits){10, 86400000});
    struct pstate_batch b = {0, 0, 0, leo + 50, time_wall_ms()};
    pstate_update(other, pids[0], 7, &b, time_wall_ms());
    size_t len;
    uint8_t *bytes = pstate_encode(other, leo + 100, time_wall_ms(), &len);
    char name[64];
    snprintf(name, sizeof(name), "%020lld.snapshot", (long long)(leo + 100));
    int dfd = open(f.dir, O_RDONLY | O_DIRECTORY);
    ASSERT_EQ(io_write_file_atomic(dfd, name, bytes, len, false), 0);
    close(dfd);
    mem_free(bytes);
    pstate_free(other);

    fx_open(&f, false);
    int64_t offs[8];
    ASSERT_EQ(snapshot_files(f.dir, offs, 8), 0);
    struct producers_stats st;
    partition_producers_stats(&f.p, &st);
    ASSERT_EQ(st.snapshot_offset, -1);
    expect_saved(&f, &before);
    fx_close(&f);
}

TEST(producers_a_clean_close_leaves_a_snapshot_at_the_log_end_and_nothing_to_scan)
{
    struct fx f;
    fx_init(&f, 1 << 20);
    fill(&f, 20, 0, 3);
    struct saved before;
    save(&f, &before);
    int64_t leo = plog_end_offset(f.p.log);
    fx_close(&f);
    int64_t offs[8];
    ASSERT_EQ(snapshot_files(f.dir, offs, 8), 1);
    ASSERT_EQ(offs[0], leo);
    fx_open(&f, true);
    struct producers_stats st;
    partition_producers_stats(&f.p, &st);
    ASSERT_EQ(st.snapshot_offset, leo);
    ASSERT_EQ(st.batches_replayed, 0);
    expect_saved(&f, &before);
    /* an unchanged log is not snapshotted again */
    struct stat s1, s2;
    char path[600];
    snprintf(path, sizeof(path), "%s/%020lld.snapshot", f.dir, (long long)leo);
    ASSERT_EQ(stat(path, &s1), 0);
    usleep(20000);
    fx_close(&f);
    ASSERT_EQ(stat(path, &s2), 0);
    ASSERT_EQ(s1.st_ino, s2.st_ino);
    ASSERT_EQ(s1.st_mtim.tv_nsec, s2.st_mtim.tv_nsec);
}

/* A snapshot larger than the open's first read of it (load_snapshot's stack buffer) is read
 * whole too: every producer comes back from it, none from the log. */
TEST(producers_a_big_snapshot_is_read_whole)
{
    struct fx f;
    fx_init(&f, 1 << 20);
    enum { MANY = 40 }; /* 40 entries of PSTATE_ENTRY_BYTES: more than 4 KiB */
    for (int i = 0; i < MANY; i++)
        produce_ok(&f, 7000 + i, 1, 0, 2);
    int64_t leo = plog_end_offset(f.p.log);
    fx_close(&f);
    char path[600];
    snprintf(path, sizeof(path), "%s/%020lld.snapshot", f.dir, (long long)leo);
    struct stat sb;
    ASSERT_EQ(stat(path, &sb), 0);
    ASSERT_CMP(sb.st_size, >, 4096);
    fx_open(&f, true);
    struct producers_stats st;
    partition_producers_stats(&f.p, &st);
    ASSERT_EQ(st.snapshot_offset, leo);
    ASSERT_EQ(st.batches_replayed, 0);
    struct pstate *t = partition_producers_table(&f.p);
    for (int i = 0; i < MANY; i++) {
        int16_t epoch;
        struct pstate_batch b[PSTATE_BATCHES];
        int n;
        ASSERT(pstate_get(t, 7000 + i, &epoch, b, &n, NULL));
        ASSERT_EQ(epoch, 1);
        ASSERT_EQ(n, 1);
    }
    fx_close(&f);
}

TEST(producers_state_outlives_retention_of_its_batches)
{
    struct fx f;
    fx_init(&f, 4096);
    produce_ok(&f, 77, 0, 0, 2);
    produce_ok(&f, 77, 0, 2, 2);
    fill(&f, 40, 0, 0);
    plog_set_high_watermark(f.p.log, plog_end_offset(f.p.log));
    ASSERT_EQ(plog_truncate_prefix(f.p.log, plog_end_offset(f.p.log) - 10), 0);
    ASSERT_CMP(plog_segment_count(f.p.log), <=, 2);
    int64_t base;
    bool dup;
    /* as in Kafka, the producer is still known: its next batch must follow */
    ASSERT_EQ(produce(&f, 77, 0, 9, 1, &base, &dup), KERR_OUT_OF_ORDER_SEQUENCE_NUMBER);
    fx_crash(&f);
    fx_open(&f, false);
    ASSERT_EQ(produce(&f, 77, 0, 2, 2, &base, &dup), KERR_NONE);
    ASSERT(dup); /* from the snapshot: the batch itself is gone from the log */
    ASSERT_EQ(produce(&f, 77, 0, 4, 1, &base, &dup), KERR_NONE);
    ASSERT(!dup);
    fx_close(&f);
}

TEST(producers_reject_batches_with_a_producer_id_but_no_epoch_or_sequence)
{
    struct fx f;
    fx_init(&f, 1 << 20);
    int64_t base;
    ASSERT_EQ(produce(&f, 5, -1, 0, 1, &base, NULL), KERR_INVALID_RECORD);
    ASSERT_EQ(produce(&f, 5, 0, -1, 1, &base, NULL), KERR_INVALID_RECORD);
    ASSERT_EQ(produce(&f, 5, 0, INT32_MIN, 1, &base, NULL), KERR_INVALID_RECORD);
    /* no producer id (-1 and other negatives): not tracked, appended as they come */
    ASSERT_EQ(produce(&f, -1, -1, -1, 1, &base, NULL), KERR_NONE);
    ASSERT_EQ(produce(&f, -1, -1, -1, 1, &base, NULL), KERR_NONE);
    ASSERT_EQ(plog_end_offset(f.p.log), 2);
    ASSERT_EQ(pstate_count(partition_producers_table(&f.p)), 0);
    fx_close(&f);
}

TEST(producers_a_log_reset_drops_every_snapshot_and_the_state)
{
    struct fx f;
    fx_init(&f, 4096);
    (void)fill(&f, 40, 0, 0); /* several rolls: snapshots below the end */
    int64_t offs[8];
    ASSERT_CMP(snapshot_files(f.dir, offs, 8), >=, 1);
    struct saved s;
    save(&f, &s);
    ASSERT(s.present[0]);
    /* a Raft install: the log restarts empty above everything it held */
    int64_t at = plog_end_offset(f.p.log) + 1000;
    plog_set_high_watermark(f.p.log, plog_end_offset(f.p.log));
    ASSERT_EQ(plog_reset(f.p.log, at), 0);
    ASSERT_EQ(snapshot_files(f.dir, offs, 8), 0);
    save(&f, &s);
    for (int i = 0; i < NPIDS; i++)
        ASSERT(!s.present[i]);
    /* the producers start over on the new log; nothing comes back at reopen */
    ASSERT_EQ(produce_ok(&f, pids[1], 3, 0, 2), at);
    save(&f, &s);
    fx_crash(&f);
    fx_open(&f, false);
    expect_saved(&f, &s);
    fx_close(&f);
}

/* After a clean stop the open reads no snapshot: the first use does (here a file spoilt after
 * the open is found spoilt then, and the log stands in for it). */
TEST(producers_a_restart_reads_the_snapshot_at_the_first_use)
{
    struct fx f;
    fx_init(&f, 1 << 20);
    int32_t seq = fill(&f, 20, 0, 3);
    struct saved before;
    save(&f, &before);
    int64_t leo = plog_end_offset(f.p.log);
    fx_close(&f);
    fx_open(&f, true);
    ASSERT(partition_producers_pending(&f.p));
    tear_snapshot(f.dir, leo);
    /* a retry of a producer's last batch: judged on the state loaded now */
    int64_t base;
    bool dup;
    ASSERT_EQ(produce(&f, pids[0], 3, seq - 2, 2, &base, &dup), KERR_NONE);
    ASSERT(dup);
    ASSERT_EQ(base, before.b[0][before.n[0] - 1].first_offset);
    ASSERT(!partition_producers_pending(&f.p));
    struct producers_stats st;
    partition_producers_stats(&f.p, &st);
    ASSERT_EQ(st.invalid_snapshots, 1);
    ASSERT_EQ(st.snapshot_offset, -1);
    expect_saved(&f, &before);
    fx_close(&f);
}

/* Batches without a producer id leave the state pending; a roll loads it (its snapshot must
 * hold the producers, not an empty table), and so does a tracked batch a follower copies. */
TEST(producers_a_pending_state_is_loaded_by_a_roll_and_by_a_copied_batch)
{
    struct fx f;
    fx_init(&f, 4096);
    int32_t seq = fill(&f, 5, 0, 0);
    struct saved before;
    save(&f, &before);
    fx_close(&f);
    fx_open(&f, true);
    ASSERT(partition_producers_pending(&f.p));
    int segs = plog_segment_count(f.p.log);
    int64_t roll_at = -1;
    while (partition_producers_pending(&f.p)) {
        ASSERT_CMP(plog_segment_count(f.p.log), ==, segs); /* pending until the roll */
        roll_at = plog_end_offset(f.p.log);
        int64_t base;
        size_t len;
        uint8_t *b = su_batch(2, 40, time_wall_ms(), 0, &len); /* no producer id */
        ASSERT_EQ(plog_append(f.p.log, b, len, 0, time_wall_ms(), &base), 0);
        mem_free(b);
    }
    ASSERT_CMP(plog_segment_count(f.p.log), >, segs);
    int64_t offs[8];
    int n = snapshot_files(f.dir, offs, 8);
    ASSERT_CMP(n, >=, 1);
    ASSERT_EQ(offs[n - 1], roll_at);
    fx_crash(&f);
    fx_open(&f, false); /* the roll's snapshot, and untracked batches after it */
    ASSERT(partition_producers_pending(&f.p));
    expect_saved(&f, &before);
    fx_crash(&f);

    fx_open(&f, false);
    ASSERT(partition_producers_pending(&f.p));
    size_t len;
    uint8_t *b = pbatch(pids[1], 0, seq, 2, &len);
    int64_t copied;
    ASSERT_EQ(plog_append(f.p.log, b, len, 0, time_wall_ms(), &copied), 0); /* as Raft copies */
    mem_free(b);
    ASSERT(!partition_producers_pending(&f.p));
    int64_t base;
    bool dup;
    ASSERT_EQ(produce(&f, pids[1], 0, seq, 2, &base, &dup), KERR_NONE);
    ASSERT(dup);
    ASSERT_EQ(base, copied);
    ASSERT_EQ(produce(&f, pids[0], 0, seq - 2, 2, &base, &dup), KERR_NONE);
    ASSERT(dup); /* the older producers came with it */
    fx_close(&f);
}

/* A suffix truncation of a pending state's log (a follower's, after a leader change) cuts only
 * batches without a producer id: the state it loads is the snapshot's, whole. */
TEST(producers_a_pending_state_survives_a_truncation_of_untracked_batches)
{
    struct fx f;
    fx_init(&f, 1 << 20);
    int32_t seq = fill(&f, 5, 0, 0);
    struct saved before;
    save(&f, &before);
    fx_close(&f);
    fx_open(&f, true);
    ASSERT(partition_producers_pending(&f.p));
    int64_t cut = -1;
    for (int i = 0; i < 4; i++) {
        size_t len;
        uint8_t *b = su_batch(2, 40, time_wall_ms(), 0, &len); /* no producer id */
        int64_t base;
        ASSERT_EQ(plog_append(f.p.log, b, len, 0, time_wall_ms(), &base), 0);
        mem_free(b);
        if (i == 1)
            cut = base;
    }
    ASSERT(partition_producers_pending(&f.p));
    ASSERT_EQ(plog_truncate_suffix(f.p.log, cut), 0);
    ASSERT(!partition_producers_pending(&f.p));
    expect_saved(&f, &before);
    int64_t base;
    bool dup;
    ASSERT_EQ(produce(&f, pids[2], 0, seq - 2, 2, &base, &dup), KERR_NONE);
    ASSERT(dup);
    ASSERT_EQ(plog_end_offset(f.p.log), cut);
    fx_close(&f);
}
