#include <errno.h>

#include "base/check.h"
#include "base/errors.h"
#include "storage/io.h"
#include "storage/plog.h"
#include "storage/segment.h"
#include "storage_util.h"

struct fill_args {
    int64_t segment_bytes;
    int batches;
};

static void fill(const char *dir, void *arg)
{
    struct fill_args *a = arg;
    struct plog_config cfg = su_config();
    cfg.segment_bytes = a->segment_bytes;
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < a->batches; i++)
        su_append(log, 10, 100, 1000 + i, i / 10);
}

static void append_bytes(const char *dir, const char *name, const void *p, size_t n)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_APPEND);
    ASSERT_CMP(fd, >=, 0);
    ASSERT_EQ(write(fd, p, n), (ssize_t)n);
    close(fd);
}

static void flip_byte(const char *dir, const char *name, off_t pos)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_RDWR);
    ASSERT_CMP(fd, >=, 0);
    uint8_t c;
    ASSERT_EQ(pread(fd, &c, 1, pos), 1);
    c ^= 0x40;
    ASSERT_EQ(pwrite(fd, &c, 1, pos), 1);
    close(fd);
}

static void write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_CMP(fd, >=, 0);
    ASSERT_EQ(write(fd, p, n), (ssize_t)n);
    close(fd);
}

static int64_t last_segment_base(const char *dir, int64_t step, int64_t upto)
{
    int64_t last = -1;
    for (int64_t b = 0; b <= upto; b += step)
        if (su_exists(dir, su_seg(b, ".log")))
            last = b;
    return last;
}

static void check_readable(struct plog *log, int64_t leo)
{
    plog_set_high_watermark(log, leo);
    int64_t off = plog_start_offset(log);
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 5000, &r), 0);
        ASSERT_CMP(r.len, >, 0);
        uint8_t *b = su_read_bytes(&r);
        int64_t first = -1, next = -1;
        su_count_batches(b, r.len, &first, &next);
        ASSERT_EQ(first, off);
        mem_free(b);
        off = r.next_offset;
        fileref_put(r.file);
    }
    ASSERT_EQ(off, leo);
}

static void torn_tail_case(bool clean_flag)
{
    const char *dir = su_dir("p");
    struct fill_args a = {8 * 1024, 50};
    su_crash_after(fill, dir, &a);
    int64_t last = last_segment_base(dir, 10, 500);
    int64_t size = su_file_size(dir, su_seg(last, ".log"));
    /* a torn write: the first 700 bytes of a valid batch */
    size_t len;
    uint8_t *b = su_batch(10, 100, 5, 9, &len);
    kbatch_set_base_offset(b, 500);
    append_bytes(dir, su_seg(last, ".log"), b, 700);
    mem_free(b);
    struct plog_recovery rec;
    struct plog_config cfg = su_config();
    cfg.segment_bytes = a.segment_bytes;
    struct plog *log = su_open(dir, &cfg, clean_flag, &rec);
    ASSERT_EQ(rec.truncated_at, 500);
    ASSERT_EQ(rec.truncated_bytes, 700);
    ASSERT_CMP(rec.segments_validated, >=, 1);
    ASSERT_EQ(plog_end_offset(log), 500);
    ASSERT_EQ(su_file_size(dir, su_seg(last, ".log")), size);
    ASSERT_EQ(plog_last_epoch(log), 4);
    check_readable(log, 500);
    ASSERT_EQ(su_append(log, 10, 100, 5, 5), 500);
    plog_close(log);
    log = su_open(dir, &cfg, true, &rec);
    ASSERT_EQ(rec.segments_validated, 0);
    ASSERT_EQ(plog_end_offset(log), 510);
    plog_close(log);
}

TEST(storage_recovery_torn_tail_truncated_at_last_whole_batch)
{
    torn_tail_case(false);
}

TEST(storage_recovery_clean_flag_with_torn_tail_falls_back_to_validation)
{
    torn_tail_case(true);
}

TEST(storage_recovery_tail_shorter_than_header)
{
    const char *dir = su_dir("p");
    struct fill_args a = {1 << 20, 5};
    su_crash_after(fill, dir, &a);
    uint8_t junk[20] = {0};
    append_bytes(dir, su_seg(0, ".log"), junk, sizeof(junk));
    struct plog_recovery rec;
    struct plog_config cfg = su_config();
    struct plog *log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(rec.truncated_at, 50);
    ASSERT_EQ(rec.truncated_bytes, 20);
    ASSERT_EQ(plog_end_offset(log), 50);
    plog_close(log);
}

TEST(storage_recovery_byte_flip_in_last_segment)
{
    const char *dir = su_dir("p");
    struct fill_args a = {8 * 1024, 46}; /* 7 batches per segment: 4 in the last */
    su_crash_after(fill, dir, &a);
    int64_t last = last_segment_base(dir, 10, 500);
    ASSERT_EQ(last, 420);
    size_t one;
    mem_free(su_batch(10, 100, 5, 0, &one));
    /* flip a byte in the records of the last segment's second batch */
    flip_byte(dir, su_seg(last, ".log"), (off_t)(one + one / 2));
    struct plog_recovery rec;
    struct plog_config cfg = su_config();
    cfg.segment_bytes = a.segment_bytes;
    struct plog *log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(rec.truncated_at, last + 10);
    ASSERT_EQ(plog_end_offset(log), last + 10);
    ASSERT_EQ(su_file_size(dir, su_seg(last, ".log")), (int64_t)one);
    check_readable(log, last + 10);
    plog_close(log);
}

TEST(storage_recovery_byte_flip_mid_log_deletes_later_segments)
{
    const char *dir = su_dir("p");
    struct fill_args a = {8 * 1024, 50};
    su_crash_after(fill, dir, &a);
    /* everything since offset 0 counts as unflushed */
    ASSERT_EQ(unlink(su_dir("p/recovery-point")), 0);
    size_t one;
    mem_free(su_batch(10, 100, 5, 0, &one));
    int per_seg = (int)(a.segment_bytes / (int64_t)one);
    int64_t seg2 = 2 * per_seg * 10;
    ASSERT(su_exists(dir, su_seg(seg2, ".log")));
    /* flip a CRC-covered byte in the third batch of the third segment */
    flip_byte(dir, su_seg(seg2, ".log"), (off_t)(2 * one + 30));
    struct plog_recovery rec;
    struct plog_config cfg = su_config();
    cfg.segment_bytes = a.segment_bytes;
    struct plog *log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(rec.truncated_at, seg2 + 20);
    ASSERT_EQ(plog_end_offset(log), seg2 + 20);
    ASSERT_EQ(plog_segment_count(log), 3);
    ASSERT_CMP(rec.truncated_bytes, >, (int64_t)one);
    ASSERT(!su_exists(dir, su_seg(seg2 + per_seg * 10, ".log")));
    ASSERT_EQ(last_segment_base(dir, 10, 500), seg2);
    check_readable(log, seg2 + 20);
    /* the epoch cache lost the epochs of the deleted range */
    ASSERT_EQ(plog_last_epoch(log), (int32_t)((seg2 + 10) / 100));
    plog_close(log);
}

TEST(storage_recovery_offset_gap_and_bad_length_are_cut)
{
    const char *dir = su_dir("p");
    struct fill_args a = {1 << 20, 5};
    su_crash_after(fill, dir, &a);
    /* a valid batch with the wrong baseOffset (a stale write) */
    size_t len;
    uint8_t *b = su_batch(10, 100, 5, 9, &len);
    kbatch_set_base_offset(b, 70);
    append_bytes(dir, su_seg(0, ".log"), b, len);
    mem_free(b);
    struct plog_recovery rec;
    struct plog_config cfg = su_config();
    struct plog *log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(rec.truncated_at, 50);
    ASSERT_EQ(rec.truncated_bytes, (int64_t)len);
    plog_close(log);
    /* a batchLength that is impossibly small */
    uint8_t hdr[61] = {0};
    hdr[11] = 5;
    hdr[16] = 2;
    append_bytes(dir, su_seg(0, ".log"), hdr, sizeof(hdr));
    ASSERT_EQ(unlink(su_dir("p/recovery-point")), 0);
    log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(rec.truncated_at, 50);
    ASSERT_EQ(rec.truncated_bytes, 61);
    ASSERT_EQ(plog_end_offset(log), 50);
    plog_close(log);
}

TEST(storage_recovery_garbage_segment_and_checkpoints)
{
    const char *dir = su_dir("p");
    struct fill_args a = {8 * 1024, 30};
    su_crash_after(fill, dir, &a);
    write_file(dir, "recovery-point", "banana\n", 7);
    write_file(dir, "log-start-offset", "-5", 2);
    write_file(dir, "leader-epoch-checkpoint", "0\n3\n1 5\n", 8);
    /* a segment of pure garbage after the real ones */
    uint8_t junk[3000];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(i * 7 + 3);
    write_file(dir, su_seg(300, ".log"), junk, sizeof(junk));
    struct plog_recovery rec;
    struct plog_config cfg = su_config();
    cfg.segment_bytes = a.segment_bytes;
    struct plog *log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(plog_start_offset(log), 0);
    ASSERT_EQ(plog_end_offset(log), 300);
    ASSERT_EQ(rec.truncated_at, 300);
    ASSERT_EQ(rec.truncated_bytes, 3000);
    ASSERT_EQ(plog_last_epoch(log), 2);
    ASSERT_EQ(plog_epoch_end_offset(log, 1), 200);
    check_readable(log, 300);
    plog_close(log);
}

TEST(storage_recovery_corrupt_index_files_rebuilt)
{
    const char *dir = su_dir("p");
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 16 * 1024;
    cfg.index_interval_bytes = 1024;
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 40; i++)
        su_append(log, 10, 100, 1000 + i, 0);
    plog_close(log);
    ASSERT(su_file_size(dir, su_seg(0, ".index")) > 0);
    /* sealed segment 0: entries in order but pointing at the wrong places */
    uint8_t wrong[16] = {0, 0, 0, 1, 0, 0, 0, 100, 0, 0, 0, 2, 0, 0, 1, 0};
    write_file(dir, su_seg(0, ".index"), wrong, sizeof(wrong));
    /* the active segment: entries out of order */
    int64_t last = last_segment_base(dir, 10, 400);
    ASSERT_CMP(last, >, 0);
    uint8_t bad[16] = {0, 0, 0, 9, 0, 0, 0, 100, 0, 0, 0, 2, 0, 0, 1, 0};
    write_file(dir, su_seg(last, ".index"), bad, sizeof(bad));
    /* a truncated time index for the middle segment */
    ASSERT(su_exists(dir, su_seg(140, ".timeindex")));
    write_file(dir, su_seg(140, ".timeindex"), bad, 5);
    struct plog_recovery rec;
    log = su_open(dir, &cfg, true, &rec);
    /* the active segment is one read: scanned whole, its index files are never read (a bigger
     * one's bad index sends the open to validation: the test below) */
    ASSERT_EQ(rec.segments_validated, 0);
    ASSERT_EQ(plog_end_offset(log), 400);
    check_readable(log, 400);
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, 25, 400, 1, &r), 0);
    ASSERT_EQ(r.first_offset, 20);
    fileref_put(r.file);
    int64_t off, ts;
    ASSERT_EQ(plog_offset_for_timestamp(log, 1005, &off, &ts), 0);
    ASSERT_EQ(off, 50);
    ASSERT_EQ(plog_offset_for_timestamp(log, 1015, &off, &ts), 0);
    ASSERT_EQ(off, 150);
    plog_close(log);
    /* the rebuilt index was written back: a clean open trusts it again */
    ASSERT_CMP(su_file_size(dir, su_seg(0, ".index")), >, 16);
    log = su_open(dir, &cfg, true, &rec);
    ASSERT_EQ(rec.segments_validated, 0);
    check_readable(log, 400);
    plog_close(log);
}

/* An active segment larger than one read: a clean open trusts its index files, and one that
 * fails its check sends the open to validation, which finds every batch. */
TEST(storage_recovery_bad_index_of_a_big_active_segment_validates)
{
    const char *dir = su_dir("big");
    struct plog_config cfg = su_config();
    cfg.index_interval_bytes = 1024;
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 80; i++)
        su_append(log, 10, 100, 1000 + i, 0);
    plog_close(log);
    ASSERT_CMP(su_file_size(dir, su_seg(0, ".log")), >, SEGMENT_SCAN_BUF);
    struct plog_recovery rec;
    log = su_open(dir, &cfg, true, &rec);
    ASSERT_EQ(rec.segments_validated, 0);
    plog_close(log);
    uint8_t bad[16] = {0, 0, 0, 9, 0, 0, 0, 100, 0, 0, 0, 2, 0, 0, 1, 0};
    write_file(dir, su_seg(0, ".index"), bad, sizeof(bad));
    log = su_open(dir, &cfg, true, &rec);
    ASSERT_EQ(rec.segments_validated, 1);
    ASSERT_EQ(plog_end_offset(log), 800);
    check_readable(log, 800);
    plog_close(log);
}

TEST(storage_recovery_segments_below_log_start_removed)
{
    const char *dir = su_dir("p");
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 4 * 1024;
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 20; i++)
        su_append(log, 10, 100, 1000, 0);
    plog_set_high_watermark(log, 200);
    plog_close(log);
    /* a crash right after log-start-offset was persisted, before the segments were unlinked */
    write_file(dir, "log-start-offset", "95\n", 3);
    log = su_open(dir, &cfg, false, NULL);
    ASSERT_EQ(plog_start_offset(log), 95);
    ASSERT(!su_exists(dir, su_seg(0, ".log")));
    ASSERT(!su_exists(dir, su_seg(30, ".log")));
    ASSERT(su_exists(dir, su_seg(90, ".log")));
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, 94, 200, 1, &r), -ERR_OUT_OF_RANGE);
    plog_close(log);
}

/* ---- an idle log's unclean open syncs nothing it already had synced ---- */

static int n_datasyncs;
static int counting_fdatasync(int fd)
{
    n_datasyncs++;
    return fdatasync(fd);
}

/* Appends, makes it durable (the recovery point reaches the end), appends nothing more, and
 * "crashes": what the next open validates was all synced before. */
static void fill_and_sync(const char *dir, void *arg)
{
    (void)arg;
    struct plog_config cfg = su_config();
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 20; i++)
        su_append(log, 10, 100, 1000 + i, 0);
    plog_close(log); /* syncs and writes the recovery point */
    log = su_open(dir, &cfg, true, NULL);
}

static void fill_unsynced(const char *dir, void *arg)
{
    (void)arg;
    struct plog_config cfg = su_config();
    struct plog *log = su_open(dir, &cfg, true, NULL);
    su_append(log, 10, 100, 5000, 0);
}

TEST(storage_recovery_unclean_open_of_synced_log_syncs_no_segment)
{
    const char *dir = su_dir("idle");
    su_crash_after(fill_and_sync, dir, NULL);
    struct storage_io io = *storage_io_get();
    io.fdatasync = counting_fdatasync;
    storage_io_set(&io);
    n_datasyncs = 0;
    struct plog_config cfg = su_config();
    struct plog_recovery rec;
    struct plog *log = su_open(dir, &cfg, false, &rec);
    ASSERT_CMP(rec.segments_validated, >=, 1); /* validated, as after any kill -9 */
    ASSERT_EQ(n_datasyncs, 0);
    ASSERT_EQ(plog_end_offset(log), 200);
    ASSERT_EQ(plog_durable_offset(log), 200);
    plog_close(log);
    /* bytes after the recovery point are synced by the open that finds them */
    su_crash_after(fill_unsynced, dir, NULL);
    n_datasyncs = 0;
    log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(plog_end_offset(log), 210);
    ASSERT_CMP(n_datasyncs, >=, 1);
    plog_close(log);
    storage_io_set(NULL);
}

/* The recovery point is a fixed-size record with a CRC, rewritten in place; the plain decimal
 * file of older releases is read too, and a record that fails its CRC (a torn write) is not
 * believed: every segment is validated. */
TEST(storage_recovery_point_record_old_layout_and_torn)
{
    const char *dir = su_dir("p");
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 8 * 1024;
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 30; i++)
        su_append(log, 10, 100, 1000 + i, 0);
    int segs = plog_segment_count(log);
    ASSERT_CMP(segs, >=, 3);
    plog_close(log);
    char rec_text[64];
    int fd = open(su_dir("p/recovery-point"), O_RDONLY);
    ASSERT_CMP(fd, >=, 0);
    ssize_t n = read(fd, rec_text, sizeof(rec_text) - 1);
    close(fd);
    ASSERT_EQ(n, 30);
    rec_text[n] = 0;
    ASSERT_EQ(strncmp(rec_text, "00000000000000000300 ", 21), 0);
    ASSERT_EQ(rec_text[29], '\n');
    struct plog_recovery rec;
    /* the record: only the segment holding it is validated */
    log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(rec.segments_validated, 1);
    ASSERT_EQ(plog_end_offset(log), 300);
    plog_close(log);
    /* an older release's file */
    write_file(dir, "recovery-point", "300\n", 4);
    log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(rec.segments_validated, 1);
    plog_close(log);
    /* a torn record: its digits no longer match the CRC */
    rec_text[17] = '1';
    write_file(dir, "recovery-point", rec_text, 30);
    log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(rec.segments_validated, segs);
    ASSERT_EQ(plog_end_offset(log), 300);
    plog_close(log);
}

/* The epochs of fill(30 batches of 10): 0, 1 and 2 starting at 0, 100 and 200. */
static void check_fill_epochs(struct plog *log)
{
    ASSERT_EQ(plog_last_epoch(log), 2);
    ASSERT_EQ(plog_epoch_end_offset(log, 0), 100);
    ASSERT_EQ(plog_epoch_end_offset(log, 1), 200);
    ASSERT_EQ(plog_end_offset(log), 300);
}

static void reopen_and_crash(const char *dir, void *arg)
{
    (void)arg;
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 8 * 1024;
    struct plog *log = su_open(dir, &cfg, false, NULL);
    check_fill_epochs(log);
    CHECK(!su_exists(dir, "leader-epoch-checkpoint"));
}

/* A log killed before its first checkpoint store (a new partition's is lazy) is opened without
 * storing one synchronously: the epochs come from the batches, and the recovery point stays
 * below the first of them until a sync stores them (invariant 10), so a second crash before
 * that still finds every epoch. */
TEST(storage_recovery_missing_checkpoint_is_stored_lazily)
{
    const char *dir = su_dir("lazy-epochs");
    struct fill_args a = {8 * 1024, 30};
    su_crash_after(fill, dir, &a);
    ASSERT(!su_exists(dir, "leader-epoch-checkpoint"));
    su_crash_after(reopen_and_crash, dir, NULL);
    ASSERT(!su_exists(dir, "leader-epoch-checkpoint"));
    ASSERT_CMP(su_recovery_point_on_disk(dir), <=, 0);

    struct plog_config cfg = su_config();
    cfg.segment_bytes = a.segment_bytes;
    struct plog_recovery rec;
    struct plog *log = su_open(dir, &cfg, false, &rec);
    check_fill_epochs(log);
    ASSERT_CMP(rec.segments_validated, >=, 2); /* from the first segment on */
    ASSERT_EQ(su_append(log, 10, 100, 5, 3), 300);
    plog_flush(log); /* no flusher: the sync stores the checkpoint */
    ASSERT(su_exists(dir, "leader-epoch-checkpoint"));
    plog_close(log);
    log = su_open(dir, &cfg, true, &rec);
    ASSERT_EQ(rec.segments_validated, 0);
    ASSERT_EQ(plog_last_epoch(log), 3);
    ASSERT_EQ(plog_epoch_end_offset(log, 1), 200);
    ASSERT_EQ(plog_epoch_end_offset(log, 2), 300);
    plog_close(log);
}
