/* The batch heads an open reads (plog_open_head): the first batch of each of the last
 * PLOG_OPEN_HEADS leader epochs, as the log holds it, until the log changes or the open's
 * listing is forgotten; anything else is left to a read of the log. */
#include <errno.h>
#include <string.h>

#include "base/endian.h"
#include "kafka/batch.h"
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
