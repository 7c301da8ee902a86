/* What an open reads for the reads right after it. The batch heads (plog_open_head): the first
 * batch of each of the last PLOG_OPEN_HEADS leader epochs, as the log holds it, until the log
 * changes or the open's listing is forgotten; anything else is left to a read of the log. The
 * window (plog_read_head, segment_read_at): the bytes of the open's last scan, until dropped. */
#include <errno.h>
#include <string.h>

#include "base/endian.h"
#include "kafka/batch.h"
#include "storage/epoch_cache.h"
#include "storage/segment.h"
#include "storage_util.h"

/* The header of the batch at off, read from the log itself. */
static void header_at(struct plog *log, int64_t off, uint8_t *hdr)
{
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, off, plog_end_offset(log), 1, &r), 0);
    ASSERT_EQ(r.first_offset, off);
    uint8_t *b = su_read_bytes(&r);
    memcpy(hdr, b, KBATCH_HEADER_SIZE);
    mem_free(b);
    fileref_put(r.file);
}

TEST(storage_plog_open_reads_the_heads_of_the_last_epochs)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 2048;
    cfg.index_interval_bytes = 256;
    const char *dir = su_dir("h");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    /* epochs 1..6, three batches each, across several segments */
    int64_t starts[7];
    for (int32_t e = 1; e <= 6; e++) {
        starts[e] = su_append(log, 2, 100, 1000 + e, e);
        su_append(log, 1, 100, 1000 + e, e);
        su_append(log, 3, 100, 1000 + e, e);
    }
    ASSERT_CMP(plog_segment_count(log), >=, 3);
    plog_set_high_watermark(log, plog_end_offset(log));
    plog_close(log);

    for (int clean = 0; clean <= 1; clean++) {
        log = su_open(dir, &cfg, clean, NULL);
        uint8_t got[KBATCH_HEADER_SIZE], want[KBATCH_HEADER_SIZE];
        for (int32_t e = 6; e > 6 - PLOG_OPEN_HEADS; e--) {
            ASSERT_EQ(plog_open_head(log, starts[e], got, sizeof(got)), KBATCH_HEADER_SIZE);
            header_at(log, starts[e], want);
            ASSERT_MEMEQ(got, want, sizeof(got));
            ASSERT_EQ((int64_t)be_get64(got), starts[e]);
            ASSERT_EQ((int32_t)be_get32(got + 12), e); /* partitionLeaderEpoch */
        }
        /* a shorter buffer takes the header's first bytes */
        ASSERT_EQ(plog_open_head(log, starts[6], got, 8), 8);
        ASSERT_EQ((int64_t)be_get64(got), starts[6]);
        /* older epochs and offsets that start no epoch were not read */
        ASSERT_EQ(plog_open_head(log, starts[6 - PLOG_OPEN_HEADS], got, sizeof(got)), -ENOENT);
        ASSERT_EQ(plog_open_head(log, starts[6] + 2, got, sizeof(got)), -ENOENT);
        if (clean) {
            /* forgotten with the open's listing (the first replica's open does it) */
            plog_forget_open_listing(log);
            ASSERT_EQ(plog_open_head(log, starts[6], got, sizeof(got)), -ENOENT);
        } else {
            /* the log changed: an append since the open */
            su_append(log, 1, 100, 2000, 6);
            ASSERT_EQ(plog_open_head(log, starts[6], got, sizeof(got)), -ENOENT);
            plog_set_high_watermark(log, plog_end_offset(log));
        }
        plog_close(log);
    }
}

/* A log start inside a batch: the epoch it cuts now starts where no batch does (read, and known
 * absent: 0), and the epochs wholly below it are not read. */
TEST(storage_plog_open_heads_stop_at_the_log_start)
{
    struct plog_config cfg = su_config();
    const char *dir = su_dir("s");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    int64_t a = su_append(log, 4, 50, 1, 1);
    int64_t b = su_append(log, 4, 50, 2, 2);
    plog_set_high_watermark(log, plog_end_offset(log));
    ASSERT_EQ(plog_truncate_prefix(log, b + 1), 0); /* inside epoch 2's first batch */
    plog_close(log);
    log = su_open(dir, &cfg, true, NULL);
    uint8_t got[KBATCH_HEADER_SIZE];
    ASSERT_EQ(plog_open_head(log, a, got, sizeof(got)), -ENOENT);
    ASSERT_EQ(plog_start_offset(log), b + 1);
    ASSERT_EQ(plog_open_head(log, b + 1, got, sizeof(got)), 0);
    plog_close(log);
}

/* The open's window (storage/segment.h): the bytes the open's scan of the active segment read
 * serve the reads after the open, until it is dropped; a read past it goes to the file. */
TEST(storage_plog_open_window_serves_reads_until_dropped)
{
    struct plog_config cfg = su_config();
    const char *dir = su_dir("w");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    su_append(log, 2, 50, 10, 1);
    int64_t second = su_append(log, 3, 50, 11, 1); /* starts no epoch: not one of the heads */
    su_append(log, 1, 50, 12, 2);
    plog_set_high_watermark(log, plog_end_offset(log));
    uint8_t want[KBATCH_HEADER_SIZE];
    header_at(log, second, want);
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, second, plog_end_offset(log), 1, &r), 0);
    int64_t pos = r.pos;
    fileref_put(r.file);
    plog_close(log);

    for (int clean = 0; clean <= 1; clean++) {
        ASSERT_EQ(plog_open_unsynced(dir, &cfg, NULL, NULL, clean, &log, NULL), 0);
        /* the file changes behind the log's back (a byte of the attributes' unused bits): the
         * log still answers with what its open read */
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, su_seg(0, ".log"));
        int fd = open(path, O_WRONLY);
        ASSERT_CMP(fd, >=, 0);
        uint8_t poke = (uint8_t)(want[KBATCH_OFF_ATTRIBUTES] ^ 0x80);
        ASSERT_EQ(pwrite(fd, &poke, 1, pos + KBATCH_OFF_ATTRIBUTES), 1);
        uint8_t got[KBATCH_HEADER_SIZE];
        ASSERT_EQ(plog_open_head(log, second, got, sizeof(got)), -ENOENT);
        ASSERT_EQ(plog_read_head(log, second, got, sizeof(got)), KBATCH_HEADER_SIZE);
        ASSERT_MEMEQ(got, want, sizeof(got));
        /* dropped: read from the file */
        plog_drop_open_window(log);
        ASSERT_EQ(plog_read_head(log, second, got, sizeof(got)), KBATCH_HEADER_SIZE);
        ASSERT_EQ(got[KBATCH_OFF_ATTRIBUTES], poke);
        ASSERT_EQ(pwrite(fd, &want[KBATCH_OFF_ATTRIBUTES], 1, pos + KBATCH_OFF_ATTRIBUTES), 1);
        close(fd);
        /* no batch starts inside a batch or at the end */
        ASSERT_EQ(plog_read_head(log, second + 1, got, sizeof(got)), 0);
        ASSERT_EQ(plog_read_head(log, plog_end_offset(log), got, sizeof(got)), 0);
        ASSERT_EQ(plog_open_finish_many(&log, 1), 0);
        plog_close(log);
    }
}

/* A segment's window never disagrees with its file: kept below a recovery's cut, gone at a
 * truncation (the bytes after it may be written again) and at a seal. */
TEST(storage_segment_window_stays_below_cuts_and_goes_at_truncation)
{
    struct plog_config cfg = su_config();
    const char *dir = su_dir("c");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    su_append(log, 2, 50, 10, 1);
    int64_t second = su_append(log, 2, 50, 11, 1);
    plog_set_high_watermark(log, plog_end_offset(log));
    plog_close(log);
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, su_seg(0, ".log"));
    int64_t valid = su_file_size(dir, su_seg(0, ".log"));
    int fd = open(path, O_WRONLY | O_APPEND);
    ASSERT_CMP(fd, >=, 0);
    ASSERT_EQ(write(fd, "torn tail", 9), 9);
    close(fd);

    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    ASSERT_CMP(dfd, >=, 0);
    struct segment *seg;
    ASSERT_EQ(segment_open(dfd, 0, &seg), 0);
    struct epoch_cache ec;
    epoch_cache_init(&ec);
    int32_t epoch = -1;
    struct segment_recovery rec;
    ASSERT_EQ(segment_recover(seg, 4096, &epoch, &ec, &rec), 0);
    ASSERT_EQ(rec.cut_bytes, 9);
    ASSERT_EQ(seg->size, valid);
    ASSERT(seg->win != NULL);
    ASSERT_EQ(seg->win->pos, 0);
    ASSERT_EQ((int64_t)seg->win->len, valid); /* the file's valid bytes, not the cut ones */
    uint8_t hdr[KBATCH_HEADER_SIZE];
    ASSERT_EQ(segment_read_at(seg, valid - 1, hdr, 2), 1); /* past the window: the file's end */
    struct batch_info b;
    ASSERT_EQ(segment_find(seg, 0, -1, true, second, &b), 1);
    ASSERT_EQ(b.base, second);
    ASSERT_EQ(segment_truncate(seg, &b, second, 4096), 0);
    ASSERT(seg->win == NULL);
    ASSERT_EQ(segment_recover(seg, 4096, &epoch, &ec, &rec), 0);
    ASSERT(seg->win != NULL);
    struct fileref *files[2];
    int n = 0;
    segment_seal(seg, dfd, files, &n);
    for (int i = 0; i < n; i++)
        fileref_put(files[i]);
    ASSERT(seg->win == NULL);
    segment_free(seg);
    epoch_cache_free(&ec);
    close(dfd);
}
