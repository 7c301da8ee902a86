#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/time.h"
#include "storage/plog.h"
#include "storage/segment.h"
#include "storage_util.h"

/* Reads [from, max_offset) with max_bytes per call; returns the concatenated bytes. */
static uint8_t *read_range(struct plog *log, int64_t from, int64_t max_offset, size_t max_bytes,
                           size_t *total, int *calls)
{
    size_t cap = 1 << 16, len = 0;
    uint8_t *all = mem_alloc(cap);
    int64_t off = from;
    int n = 0;
    for (;;) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, max_offset, max_bytes, &r), 0);
        if (r.len == 0)
            break;
        ASSERT_EQ(r.first_offset <= off, 1);
        uint8_t *b = su_read_bytes(&r);
        int64_t first = -1, next = -1;
        su_count_batches(b, r.len, &first, &next);
        ASSERT_EQ(first, r.first_offset);
        ASSERT_EQ(next, r.next_offset);
        if (len + r.len > cap) {
            while (len + r.len > cap)
                cap *= 2;
            all = mem_realloc(all, cap);
        }
        memcpy(all + len, b, r.len);
        len += r.len;
        mem_free(b);
        fileref_put(r.file);
        off = r.next_offset;
        n++;
    }
    *total = len;
    if (calls)
        *calls = n;
    return all;
}

TEST(storage_plog_append_read_roundtrip_byte_identical)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 64 * 1024;
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    size_t cap = 1 << 20, len = 0;
    uint8_t *expect = mem_alloc(cap);
    int64_t next = 0;
    for (int i = 0; i < 500; i++) {
        size_t blen;
        int n = 1 + i % 17;
        uint8_t *b = su_batch(n, 100, 1000 + i, i, &blen);
        int64_t base;
        ASSERT_EQ(plog_append(log, b, blen, 3, 1000 + i, &base), 0);
        ASSERT_EQ(base, next);
        /* rewritten in the caller's buffer */
        struct kbatch_header h;
        kbatch_parse_header(b, &h);
        ASSERT_EQ(h.base_offset, base);
        ASSERT_EQ(h.partition_leader_epoch, 3);
        ASSERT(kbatch_crc_ok(b, blen));
        next += n;
        if (len + blen > cap) {
            while (len + blen > cap)
                cap *= 2;
            expect = mem_realloc(expect, cap);
        }
        memcpy(expect + len, b, blen);
        len += blen;
        mem_free(b);
    }
    ASSERT_EQ(plog_end_offset(log), next);
    ASSERT_EQ(plog_high_watermark(log), 0); /* appends do not move HW */
    plog_set_high_watermark(log, next);
    ASSERT_EQ(plog_high_watermark(log), next);
    ASSERT_CMP(plog_segment_count(log), >, 5);
    ASSERT_EQ(plog_size_bytes(log), (int64_t)len);
    size_t sizes[] = {1, 1000, 4096, 100000, SIZE_MAX};
    for (size_t k = 0; k < ARRAY_LEN(sizes); k++) {
        size_t got_len;
        int calls;
        uint8_t *got = read_range(log, 0, next, sizes[k], &got_len, &calls);
        ASSERT_EQ(got_len, len);
        ASSERT_MEMEQ(got, expect, len);
        ASSERT_CMP(calls, >=, plog_segment_count(log));
        mem_free(got);
    }
    /* random starting points: the batch containing the offset comes first */
    for (int64_t off = 0; off < next; off += 37) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, next, 1, &r), 0);
        ASSERT_CMP(r.first_offset, <=, off);
        ASSERT_CMP(r.next_offset, >, off);
        fileref_put(r.file);
    }
    mem_free(expect);
    plog_close(log);
}

TEST(storage_plog_read_limits_and_kip74)
{
    struct plog_config cfg = su_config();
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    size_t one;
    mem_free(su_batch(10, 100, 5, 0, &one));
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(su_append(log, 10, 100, 5, 0), i * 10);
    plog_set_high_watermark(log, 100);
    struct plog_read_result r;
    /* max_bytes: whole batches only */
    ASSERT_EQ(plog_read(log, 0, 100, one * 2 + one / 2, &r), 0);
    ASSERT_EQ(r.len, 2 * one);
    ASSERT_EQ(r.first_offset, 0);
    ASSERT_EQ(r.next_offset, 20);
    ASSERT_EQ(r.pos, 0);
    fileref_put(r.file);
    /* KIP-74: the first batch comes whole even when larger than max_bytes */
    ASSERT_EQ(plog_read(log, 30, 100, 10, &r), 0);
    ASSERT_EQ(r.len, one);
    ASSERT_EQ(r.first_offset, 30);
    ASSERT_EQ(r.pos, (off_t)(3 * one));
    fileref_put(r.file);
    /* max_offset inside batch 2 (20..29): stops before it */
    ASSERT_EQ(plog_read(log, 0, 25, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.next_offset, 20);
    ASSERT_EQ(r.len, 2 * one);
    fileref_put(r.file);
    ASSERT_EQ(plog_read(log, 0, 20, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.next_offset, 20);
    fileref_put(r.file);
    /* first batch not below max_offset: nothing */
    ASSERT_EQ(plog_read(log, 0, 5, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.len, 0);
    ASSERT(r.file == NULL);
    ASSERT_EQ(plog_read(log, 40, 40, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.len, 0);
    /* mid-batch offset returns the containing batch */
    ASSERT_EQ(plog_read(log, 57, 100, 1, &r), 0);
    ASSERT_EQ(r.first_offset, 50);
    ASSERT_EQ(r.next_offset, 60);
    ASSERT_EQ(r.len, one);
    fileref_put(r.file);
    /* ends */
    ASSERT_EQ(plog_read(log, 100, 100, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.len, 0);
    ASSERT_EQ(plog_read(log, 100, INT64_MAX, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.len, 0);
    ASSERT_EQ(plog_read(log, 101, INT64_MAX, SIZE_MAX, &r), -ERR_OUT_OF_RANGE);
    ASSERT_EQ(plog_read(log, -1, INT64_MAX, SIZE_MAX, &r), -ERR_OUT_OF_RANGE);
    /* whole log in one call */
    ASSERT_EQ(plog_read(log, 0, INT64_MAX, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.len, 10 * one);
    ASSERT_EQ(r.next_offset, 100);
    fileref_put(r.file);
    plog_close(log);
}

TEST(storage_plog_roll_by_segment_bytes)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 10 * 1024;
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    size_t one;
    mem_free(su_batch(10, 100, 5, 0, &one));
    for (int i = 0; i < 30; i++)
        su_append(log, 10, 100, 5, 0);
    int per_seg = (int)(cfg.segment_bytes / (int64_t)one);
    int segs = (30 + per_seg - 1) / per_seg;
    ASSERT_EQ(plog_segment_count(log), segs);
    for (int s = 0; s < segs; s++) {
        int64_t base = (int64_t)s * per_seg * 10;
        int64_t size = su_file_size(dir, su_seg(base, ".log"));
        ASSERT_CMP(size, <=, cfg.segment_bytes);
        ASSERT_CMP(size, >, 0);
        if (s + 1 < segs) {
            /* sealed segments have their index files */
            ASSERT(su_exists(dir, su_seg(base, ".index")));
            ASSERT_EQ(su_file_size(dir, su_seg(base, ".timeindex")) % 12, 0);
        }
    }
    /* a batch larger than segment.bytes still goes into an (empty) segment of its own */
    size_t big_len;
    uint8_t *big = su_batch(200, 100, 5, 1, &big_len);
    int64_t base;
    ASSERT_EQ(plog_append(log, big, big_len, 0, 5, &base), 0);
    ASSERT_EQ(plog_segment_count(log), segs + 1);
    ASSERT_EQ(su_file_size(dir, su_seg(base, ".log")), (int64_t)big_len);
    mem_free(big);
    plog_close(log);
}

TEST(storage_plog_roll_by_segment_ms)
{
    struct plog_config cfg = su_config();
    cfg.segment_ms = 1000;
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    ASSERT_EQ(plog_maybe_roll(log, 1000000), 0);
    ASSERT_EQ(plog_segment_count(log), 1); /* empty: never rolled */
    size_t len;
    int64_t base;
    uint8_t *b = su_batch(1, 10, 5, 0, &len);
    ASSERT_EQ(plog_append(log, b, len, 0, 10000, &base), 0);
    ASSERT_EQ(plog_append(log, b, len, 0, 10900, &base), 0);
    ASSERT_EQ(plog_segment_count(log), 1);
    ASSERT_EQ(plog_append(log, b, len, 0, 11001, &base), 0);
    ASSERT_EQ(plog_segment_count(log), 2);
    ASSERT_EQ(base, 2);
    /* the timer path */
    ASSERT_EQ(plog_maybe_roll(log, 11500), 0);
    ASSERT_EQ(plog_segment_count(log), 2);
    ASSERT_EQ(plog_maybe_roll(log, 12002), 0);
    ASSERT_EQ(plog_segment_count(log), 3);
    ASSERT_EQ(plog_end_offset(log), 3);
    mem_free(b);
    plog_close(log);
}

TEST(storage_plog_reopen_clean_keeps_everything)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 16 * 1024;
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 100; i++)
        su_append(log, 1 + i % 7, 100, 1000 + i, 2);
    int64_t leo = plog_end_offset(log);
    int segs = plog_segment_count(log);
    int64_t size = plog_size_bytes(log);
    plog_set_high_watermark(log, leo);
    size_t before_len;
    uint8_t *before = read_range(log, 0, leo, SIZE_MAX, &before_len, NULL);
    plog_close(log);

    struct plog_recovery rec;
    log = su_open(dir, &cfg, true, &rec);
    ASSERT_EQ(rec.segments, segs);
    ASSERT_EQ(rec.segments_validated, 0);
    ASSERT_EQ(rec.truncated_at, -1);
    ASSERT_EQ(plog_end_offset(log), leo);
    ASSERT_EQ(plog_high_watermark(log), leo);
    ASSERT_EQ(plog_durable_offset(log), leo);
    ASSERT_EQ(plog_size_bytes(log), size);
    ASSERT_EQ(plog_last_epoch(log), 2);
    size_t after_len;
    uint8_t *after = read_range(log, 0, leo, 5000, &after_len, NULL);
    ASSERT_EQ(after_len, before_len);
    ASSERT_MEMEQ(after, before, before_len);
    /* appending continues where it left off */
    ASSERT_EQ(su_append(log, 3, 100, 5000, 2), leo);
    plog_close(log);
    log = su_open(dir, &cfg, true, &rec);
    ASSERT_EQ(rec.segments_validated, 0);
    ASSERT_EQ(plog_end_offset(log), leo + 3);
    mem_free(before);
    mem_free(after);
    plog_close(log);
}

/* A clean open scans an active segment that one read holds whole and rebuilds its indexes, so it
 * needs neither index file: gone, the open still trusts the segment (no validation), and reads
 * and timestamp lookups find what they found before. */
TEST(storage_plog_clean_open_of_a_small_active_segment_needs_no_index_files)
{
    struct plog_config cfg = su_config();
    cfg.index_interval_bytes = 256;
    const char *dir = su_dir("small-tail");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 40; i++)
        su_append(log, 1, 100, i == 17 ? 9000 : 1000 + i, 2);
    int64_t leo = plog_end_offset(log);
    plog_set_high_watermark(log, leo);
    size_t before_len;
    uint8_t *before = read_range(log, 23, leo, SIZE_MAX, &before_len, NULL);
    plog_close(log);
    ASSERT_CMP(su_file_size(dir, su_seg(0, ".log")), <=, SEGMENT_SCAN_BUF);
    ASSERT_CMP(su_file_size(dir, su_seg(0, ".index")), >, 0);
    char path[1024];
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, su_seg(0, i ? ".timeindex" : ".index"));
        ASSERT_EQ(unlink(path), 0);
    }
    struct plog_recovery rec;
    log = su_open(dir, &cfg, true, &rec);
    ASSERT_EQ(rec.segments_validated, 0);
    ASSERT_EQ(plog_end_offset(log), leo);
    size_t after_len;
    uint8_t *after = read_range(log, 23, leo, SIZE_MAX, &after_len, NULL);
    ASSERT_EQ(after_len, before_len);
    ASSERT_MEMEQ(after, before, before_len);
    int64_t off, ts;
    ASSERT_EQ(plog_offset_for_max_timestamp(log, &off, &ts), 0);
    ASSERT_EQ(off, 17);
    ASSERT_EQ(ts, 9000);
    ASSERT_EQ(plog_offset_for_timestamp(log, 1030, &off, &ts), 0);
    ASSERT_EQ(off, 17); /* 9000 is the first timestamp >= 1030 */
    ASSERT_EQ(plog_offset_for_timestamp(log, 1018, &off, &ts), 0);
    ASSERT_EQ(off, 17);
    mem_free(before);
    mem_free(after);
    plog_close(log);
}

TEST(storage_plog_truncate_suffix_across_segments_then_append)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 8 * 1024;
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 40; i++)
        su_append(log, 10, 100, 1000 + i, i < 20 ? 1 : 2);
    int segs = plog_segment_count(log);
    ASSERT_CMP(segs, >=, 4);
    /* cut in the middle of a batch of an early segment: the whole batch goes */
    ASSERT_EQ(plog_truncate_suffix(log, 125), 0);
    ASSERT_EQ(plog_end_offset(log), 120);
    ASSERT_CMP(plog_segment_count(log), <, segs);
    ASSERT_EQ(plog_last_epoch(log), 1);
    ASSERT_EQ(plog_epoch_end_offset(log, 1), 120);
    ASSERT_EQ(plog_epoch_end_offset(log, 0), 0);
    ASSERT_EQ(plog_high_watermark(log), 0);
    /* no segment file at or past the cut remains */
    int n_logs = 0;
    for (int64_t b = 0; b <= 400; b += 10)
        if (su_exists(dir, su_seg(b, ".log")))
            n_logs++;
    ASSERT_EQ(n_logs, plog_segment_count(log));
    /* appends continue at the cut, with a new epoch */
    ASSERT_EQ(su_append(log, 5, 100, 9000, 3), 120);
    ASSERT_EQ(plog_epoch_end_offset(log, 1), 120);
    ASSERT_EQ(plog_epoch_end_offset(log, 2), 120);
    ASSERT_EQ(plog_end_offset(log), 125);
    for (int i = 0; i < 20; i++)
        su_append(log, 10, 100, 9000, 3);
    plog_set_high_watermark(log, plog_end_offset(log));
    size_t len;
    uint8_t *all = read_range(log, 0, plog_end_offset(log), 3000, &len, NULL);
    int64_t first = -1, next = -1;
    ASSERT_EQ(su_count_batches(all, len, &first, &next), 12 + 1 + 20);
    ASSERT_EQ(next, 325);
    mem_free(all);
    /* cut exactly at a segment boundary */
    int64_t leo = plog_end_offset(log);
    int before = plog_segment_count(log);
    struct plog_read_result r;
    ASSERT_EQ(plog_truncate_suffix(log, leo), 0); /* no-op */
    plog_close(log);
    /* unclean reopen validates the rewritten tail without cutting anything */
    struct plog_recovery rec;
    log = su_open(dir, &cfg, false, &rec);
    ASSERT_EQ(rec.truncated_at, -1);
    ASSERT_EQ(plog_end_offset(log), leo);
    ASSERT_EQ(plog_segment_count(log), before);
    ASSERT_EQ(plog_last_epoch(log), 3);
    ASSERT_EQ(plog_epoch_end_offset(log, 1), 120);
    (void)r;
    plog_close(log);
}

TEST(storage_plog_reads_after_a_truncation_follow_the_new_batches)
{
    /* reads remember where they ended (read hints, allocated at the first read); a truncation
     * must forget them: the batches written after it lie elsewhere in the file */
    struct plog_config cfg = su_config();
    const char *dir = su_dir("h");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, 0, 0, 1000, &r), 0); /* nothing yet: no hint either */
    ASSERT_EQ(r.len, 0);
    for (int i = 0; i < 30; i++)
        su_append(log, 10, 100, 1000 + i, 1);
    plog_set_high_watermark(log, 100); /* a truncation stays above it */
    size_t len;
    int calls;
    uint8_t *all = read_range(log, 0, 300, 1500, &len, &calls); /* a hint at each call's end */
    ASSERT_CMP(calls, >, 8);
    mem_free(all);
    ASSERT_EQ(plog_truncate_suffix(log, 100), 0);
    for (int i = 0; i < 40; i++)
        su_append(log, 5, 300, 5000 + i, 2); /* other sizes: other positions */
    plog_set_high_watermark(log, plog_end_offset(log));
    ASSERT_EQ(plog_end_offset(log), 300);
    for (int64_t off = 100; off < 300; off += 35) {
        ASSERT_EQ(plog_read(log, off, 300, 1, &r), 0);
        uint8_t *b = su_read_bytes(&r);
        int64_t first = -1, next = -1;
        ASSERT_EQ(su_count_batches(b, r.len, &first, &next), 1);
        ASSERT_EQ(first, off - (off - 100) % 5); /* the new batch of 5 holding off */
        ASSERT_EQ(next, first + 5);
        mem_free(b);
        fileref_put(r.file);
    }
    plog_close(log);
}

TEST(storage_plog_truncate_suffix_on_segment_boundary_reactivates_previous)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 4 * 1024;
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 12; i++)
        su_append(log, 10, 100, 1000, 0);
    ASSERT_CMP(plog_segment_count(log), >=, 3);
    /* find a segment base > 0 */
    int64_t boundary = -1;
    for (int64_t b = 10; b < 120; b += 10)
        if (su_exists(dir, su_seg(b, ".log"))) {
            boundary = b;
            break;
        }
    ASSERT_CMP(boundary, >, 0);
    ASSERT_EQ(plog_truncate_suffix(log, boundary), 0);
    ASSERT_EQ(plog_end_offset(log), boundary);
    ASSERT_EQ(plog_segment_count(log), 1);
    ASSERT(!su_exists(dir, su_seg(boundary, ".log")));
    ASSERT_EQ(su_append(log, 10, 100, 1000, 0), boundary);
    plog_set_high_watermark(log, boundary + 10);
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, boundary, INT64_MAX, SIZE_MAX, &r), 0);
    ASSERT_EQ(r.first_offset, boundary);
    ASSERT_EQ(r.next_offset, boundary + 10);
    fileref_put(r.file);
    plog_close(log);
}

TEST(storage_plog_truncate_prefix_persists_log_start)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 8 * 1024;
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 30; i++)
        su_append(log, 10, 100, 1000, 0);
    plog_set_high_watermark(log, 300);
    int segs = plog_segment_count(log);
    ASSERT_EQ(plog_truncate_prefix(log, 155), 0);
    ASSERT_EQ(plog_start_offset(log), 155);
    ASSERT_CMP(plog_segment_count(log), <, segs);
    ASSERT(!su_exists(dir, su_seg(0, ".log")));
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, 154, INT64_MAX, SIZE_MAX, &r), -ERR_OUT_OF_RANGE);
    ASSERT_EQ(plog_read(log, 155, INT64_MAX, 1, &r), 0);
    ASSERT_EQ(r.first_offset, 150); /* the batch containing the start */
    fileref_put(r.file);
    ASSERT_EQ(plog_truncate_prefix(log, 100), 0); /* never backwards */
    ASSERT_EQ(plog_start_offset(log), 155);
    int64_t ts, off;
    ASSERT_EQ(plog_offset_for_timestamp(log, 0, &off, &ts), 0);
    ASSERT_EQ(off, 155);
    plog_close(log);
    log = su_open(dir, &cfg, true, NULL);
    ASSERT_EQ(plog_start_offset(log), 155);
    ASSERT_EQ(plog_end_offset(log), 300);
    plog_close(log);
    log = su_open(dir, &cfg, false, NULL);
    ASSERT_EQ(plog_start_offset(log), 155);
    ASSERT_EQ(plog_read(log, 154, INT64_MAX, SIZE_MAX, &r), -ERR_OUT_OF_RANGE);
    plog_close(log);
}

TEST(storage_plog_retention_by_time_never_deletes_active)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 4 * 1024;
    cfg.retention_ms = 10000;
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 10; i++)
        su_append(log, 10, 100, 1000, 0); /* old */
    /* 3 batches per segment: segments 0, 30, 60 are wholly old; 90 mixes old and new */
    for (int i = 0; i < 10; i++)
        su_append(log, 10, 100, 100000, 0); /* new */
    ASSERT_EQ(plog_segment_count(log), 7);
    ASSERT_EQ(plog_apply_retention(log, 50000), 0); /* nothing below HW yet */
    plog_set_high_watermark(log, 200);
    ASSERT_EQ(plog_apply_retention(log, 50000), 3);
    ASSERT_EQ(plog_start_offset(log), 90);
    ASSERT_EQ(plog_segment_count(log), 4);
    int64_t start = plog_start_offset(log);
    ASSERT_CMP(start, >, 0);
    ASSERT(!su_exists(dir, su_seg(0, ".log")));
    ASSERT(!su_exists(dir, su_seg(0, ".index")));
    /* everything is old now, but the active segment stays */
    ASSERT_CMP(plog_apply_retention(log, 10000000), >, 0);
    ASSERT_EQ(plog_segment_count(log), 1);
    ASSERT_EQ(plog_end_offset(log), 200);
    ASSERT_EQ(plog_apply_retention(log, 10000000), 0);
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, plog_start_offset(log), INT64_MAX, SIZE_MAX, &r), 0);
    ASSERT_CMP(r.len, >, 0);
    fileref_put(r.file);
    plog_close(log);
    log = su_open(dir, &cfg, true, NULL);
    ASSERT_EQ(plog_segment_count(log), 1);
    ASSERT_EQ(plog_end_offset(log), 200);
    plog_close(log);
}

TEST(storage_plog_retention_by_bytes)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 4 * 1024;
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    for (int i = 0; i < 40; i++)
        su_append(log, 10, 100, 1000, 0);
    plog_set_high_watermark(log, 400);
    int segs = plog_segment_count(log);
    ASSERT_EQ(plog_apply_retention(log, 2000), 0); /* no limits set */
    cfg.retention_bytes = 10 * 1024;
    plog_set_config(log, &cfg);
    int deleted = plog_apply_retention(log, 2000);
    ASSERT_CMP(deleted, >, 0);
    ASSERT_EQ(plog_segment_count(log), segs - deleted);
    ASSERT_CMP(plog_size_bytes(log), >=, cfg.retention_bytes);
    /* one more deletion would go below the limit */
    ASSERT_CMP(plog_size_bytes(log) - 4 * 1024, <, cfg.retention_bytes);
    /* below HW only */
    cfg.retention_bytes = 0;
    plog_set_config(log, &cfg);
    struct plog *l2 = su_open(su_dir("q"), &cfg, false, NULL);
    for (int i = 0; i < 20; i++)
        su_append(l2, 10, 100, 1000, 0);
    ASSERT_EQ(plog_apply_retention(l2, 2000), 0); /* HW is 0 */
    plog_set_high_watermark(l2, 200);
    ASSERT_CMP(plog_apply_retention(l2, 2000), >, 0);
    ASSERT_EQ(plog_segment_count(l2), 1);
    plog_close(l2);
    plog_close(log);
}

TEST(storage_plog_offset_for_timestamp)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 8 * 1024;
    cfg.index_interval_bytes = 1024;
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    /* batch i: offsets 10i..10i+9, timestamp 1000 + 100i, except a late straggler at i=25 */
    for (int i = 0; i < 60; i++)
        su_append(log, 10, 100, i == 25 ? 500 : 1000 + 100 * i, 0);
    int64_t off, ts;
    ASSERT_EQ(plog_offset_for_timestamp(log, 0, &off, &ts), 0);
    ASSERT_EQ(off, 0);
    ASSERT_EQ(ts, 1000);
    ASSERT_EQ(plog_offset_for_timestamp(log, 1000, &off, &ts), 0);
    ASSERT_EQ(off, 0);
    ASSERT_EQ(plog_offset_for_timestamp(log, 1001, &off, &ts), 0);
    ASSERT_EQ(off, 10);
    ASSERT_EQ(ts, 1100);
    for (int i = 1; i < 60; i++) {
        if (i == 25)
            continue;
        ASSERT_EQ(plog_offset_for_timestamp(log, 1000 + 100 * i - 50, &off, &ts), 0);
        int want = i == 26 ? 26 : i;
        ASSERT_EQ(off, want * 10);
        ASSERT_EQ(ts, 1000 + 100 * want);
    }
    ASSERT_EQ(plog_offset_for_timestamp(log, 1000 + 100 * 59, &off, &ts), 0);
    ASSERT_EQ(off, 590);
    ASSERT_EQ(plog_offset_for_timestamp(log, 1000 + 100 * 59 + 1, &off, &ts), 0);
    ASSERT_EQ(off, -1);
    /* survives a restart (indexes from disk) */
    const char *dir = plog_dir(log);
    char d[512];
    snprintf(d, sizeof(d), "%s", dir);
    plog_close(log);
    log = su_open(d, &cfg, true, NULL);
    ASSERT_EQ(plog_offset_for_timestamp(log, 1000 + 100 * 40 - 1, &off, &ts), 0);
    ASSERT_EQ(off, 400);
    plog_close(log);
}

TEST(storage_plog_leader_epoch_cache_across_truncation_and_reopen)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 4 * 1024;
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    ASSERT_EQ(plog_last_epoch(log), -1);
    ASSERT_EQ(plog_epoch_end_offset(log, 0), 0);
    int32_t epochs[] = {1, 1, 1, 2, 2, 5, 5, 5, 7};
    for (size_t i = 0; i < ARRAY_LEN(epochs); i++)
        su_append(log, 10, 100, 1000, epochs[i]);
    ASSERT_EQ(plog_last_epoch(log), 7);
    ASSERT_EQ(plog_epoch_end_offset(log, 0), 0);
    ASSERT_EQ(plog_epoch_end_offset(log, 1), 30);
    ASSERT_EQ(plog_epoch_end_offset(log, 2), 50);
    ASSERT_EQ(plog_epoch_end_offset(log, 3), 50);
    ASSERT_EQ(plog_epoch_end_offset(log, 5), 80);
    ASSERT_EQ(plog_epoch_end_offset(log, 7), 90);
    ASSERT_EQ(plog_epoch_end_offset(log, 9), 90);
    /* the checkpoint is stored with the next sync, not at each new epoch's first append */
    struct stat st;
    ASSERT_EQ(stat(su_dir("p/leader-epoch-checkpoint"), &st), -1);
    plog_flush(log);
    /* then it is on disk in Kafka's layout */
    char buf[256];
    int fd = open(su_dir("p/leader-epoch-checkpoint"), O_RDONLY);
    ASSERT_CMP(fd, >=, 0);
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    ASSERT_CMP(n, >, 0);
    buf[n] = 0;
    ASSERT_STREQ(buf, "0\n4\n1 0\n2 30\n5 50\n7 80\n");
    ASSERT_EQ(plog_truncate_suffix(log, 60), 0);
    ASSERT_EQ(plog_last_epoch(log), 5);
    ASSERT_EQ(plog_epoch_end_offset(log, 5), 60);
    plog_close(log);
    log = su_open(dir, &cfg, false, NULL);
    ASSERT_EQ(plog_last_epoch(log), 5);
    ASSERT_EQ(plog_epoch_end_offset(log, 2), 50);
    ASSERT_EQ(plog_epoch_end_offset(log, 1), 30);
    su_append(log, 10, 100, 1000, 8);
    plog_close(log);
    /* a lost checkpoint is rebuilt from the batches */
    ASSERT_EQ(unlink(su_dir("p/leader-epoch-checkpoint")), 0);
    log = su_open(dir, &cfg, true, NULL);
    ASSERT_EQ(plog_last_epoch(log), 8);
    ASSERT_EQ(plog_epoch_end_offset(log, 1), 30);
    ASSERT_EQ(plog_epoch_end_offset(log, 5), 60);
    ASSERT_EQ(plog_epoch_end_offset(log, 8), 70);
    plog_close(log);
}

TEST(storage_plog_destroy_removes_directory)
{
    struct plog_config cfg = su_config();
    const char *dir = su_dir("p");
    struct plog *log = su_open(dir, &cfg, false, NULL);
    su_append(log, 10, 100, 1000, 0);
    ASSERT_EQ(plog_destroy(log), 0);
    struct stat st;
    ASSERT_EQ(stat(dir, &st), -1);
    ASSERT_EQ(errno, ENOENT);
}

/* Functional test that also prints throughput (run by hand on a non-sanitizer build for
 * numbers: build/unit_tests storage_plog_throughput). */
TEST_T(storage_plog_throughput_append_and_sequential_read, 120)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 64 << 20;
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    const int batches = 100000, per_batch = 10, value = 100;
    size_t len;
    uint8_t *b = su_batch(per_batch, value, 1000, 0, &len);
    int64_t t0 = time_mono_ns();
    for (int i = 0; i < batches; i++) {
        int64_t base;
        ASSERT_EQ(plog_append(log, b, len, 0, 1000, &base), 0);
    }
    int64_t t1 = time_mono_ns();
    int64_t leo = plog_end_offset(log);
    ASSERT_EQ(leo, (int64_t)batches * per_batch);
    plog_set_high_watermark(log, leo);
    /* a consumer fetching 1 MiB at a time */
    int64_t off = 0, records = 0;
    size_t bytes = 0;
    int calls = 0;
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 1 << 20, &r), 0);
        ASSERT_CMP(r.len, >, 0);
        ASSERT_EQ(r.first_offset, off);
        records += r.next_offset - off;
        bytes += r.len;
        off = r.next_offset;
        calls++;
        fileref_put(r.file);
    }
    int64_t t2 = time_mono_ns();
    /* a consumer fetching one batch at a time (worst case for per-call cost) */
    off = 0;
    int small_calls = 0;
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 1, &r), 0);
        ASSERT_EQ(r.len, len);
        off = r.next_offset;
        small_calls++;
        fileref_put(r.file);
    }
    int64_t t3 = time_mono_ns();
    /* a consumer that copies the bytes out (pread) instead of sendfile */
    off = 0;
    uint8_t *copy = mem_alloc(2 << 20);
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 1 << 20, &r), 0);
        ASSERT_EQ(pread(r.file->fd, copy, r.len, r.pos), (ssize_t)r.len);
        off = r.next_offset;
        fileref_put(r.file);
    }
    mem_free(copy);
    int64_t t4 = time_mono_ns();
    ASSERT_EQ(records, leo);
    ASSERT_EQ(bytes, (size_t)batches * len);
    double app_s = (double)(t1 - t0) / 1e9, rd_s = (double)(t2 - t1) / 1e9,
           sm_s = (double)(t3 - t2) / 1e9;
    printf("    append: %.0f records/s %.1f MB/s (%.2f us/batch)\n", (double)leo / app_s,
           (double)batches * (double)len / app_s / 1e6, app_s * 1e6 / batches);
    printf("    read 1 MiB fetches: %.0f records/s %.1f MB/s (%d calls, %.2f us/call)\n",
           (double)records / rd_s, (double)bytes / rd_s / 1e6, calls, rd_s * 1e6 / calls);
    printf("    read one batch per call: %.0f records/s (%.2f us/call)\n",
           (double)leo / sm_s, sm_s * 1e6 / small_calls);
    double cp_s = (double)(t4 - t3) / 1e9;
    printf("    read 1 MiB fetches + pread copy: %.0f records/s %.1f MB/s\n", (double)leo / cp_s,
           (double)bytes / cp_s / 1e6);
    mem_free(b);
    plog_close(log);
}

/* Appends a record-less control batch (a Raft NOOP) and returns its offset. */
static int64_t append_noop(struct plog *log)
{
    uint8_t b[KBATCH_HEADER_SIZE];
    kbatch_build_empty_control(b);
    int64_t base;
    ASSERT_EQ(plog_append(log, b, sizeof(b), 3, 1000, &base), 0);
    return base;
}

/* Reads with plog_read_records: the first offset returned, or -1 when nothing is. */
static int64_t first_with_records(struct plog *log, int64_t from, int64_t max_offset,
                                  size_t max_bytes)
{
    struct plog_read_result r;
    ASSERT_EQ(plog_read_records(log, from, max_offset, max_bytes, &r), 0);
    if (r.len == 0)
        return -1;
    uint8_t *b = su_read_bytes(&r);
    struct kbatch_header h;
    kbatch_parse_header(b, &h);
    ASSERT(h.records_count > 0); /* a read never starts on a record-less batch */
    mem_free(b);
    fileref_put(r.file);
    return r.first_offset;
}

TEST(storage_plog_consumer_reads_pass_over_record_less_batches)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 4096;
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    /* segment 1: data 0-2, noop 3, data 4-5, noop 6, noop 7; then more noops across a roll
     * and data after them in a later segment */
    su_append(log, 3, 10, 1000, 3);
    ASSERT_EQ(append_noop(log), 3);
    su_append(log, 2, 10, 1000, 3);
    ASSERT_EQ(append_noop(log), 6);
    ASSERT_EQ(append_noop(log), 7);
    int64_t leo = plog_end_offset(log);
    plog_set_high_watermark(log, leo);
    ASSERT_EQ(first_with_records(log, 0, leo, 1), 0);
    ASSERT_EQ(first_with_records(log, 3, leo, 1), 4);  /* noop 3 passed over */
    ASSERT_EQ(first_with_records(log, 6, leo, 1), -1); /* only noops below HW */
    ASSERT_EQ(first_with_records(log, 3, 5, 1), -1);   /* data 4-5 reaches past max_offset */
    /* the raw read (Raft, replication) still returns the noop */
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, 6, leo, 1, &r), 0);
    ASSERT_EQ(r.first_offset, 6);
    ASSERT_EQ(r.len, (size_t)KBATCH_HEADER_SIZE);
    fileref_put(r.file);
    /* noops filling the rest of a segment: the read continues in the next one */
    while (plog_segment_count(log) < 3)
        append_noop(log);
    int64_t data = su_append(log, 1, 10, 1000, 3);
    leo = plog_end_offset(log);
    plog_set_high_watermark(log, leo);
    ASSERT_EQ(first_with_records(log, 6, leo, 1), data);
    ASSERT_EQ(first_with_records(log, data, leo, 1), data);
    plog_close(log);
}
