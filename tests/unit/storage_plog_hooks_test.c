/* plog_set_hooks and plog_scan_headers: what the broker's producer state relies on. */
#include "base/errors.h"
#include "kafka/batch.h"
#include "storage/plog.h"
#include "storage_util.h"

struct hook_log {
    struct plog *log;
    int64_t rolled[64];
    int64_t leo_at_roll[64];
    int n_rolled;
    int64_t truncated[8];
    int n_truncated;
};

static void on_rolled(struct plog *log, int64_t offset, void *data)
{
    struct hook_log *h = data;
    ASSERT(h->n_rolled < 64);
    h->leo_at_roll[h->n_rolled] = plog_end_offset(log);
    h->rolled[h->n_rolled++] = offset;
}

static void on_truncated(struct plog *log, int64_t leo, void *data)
{
    struct hook_log *h = data;
    ASSERT(h->n_truncated < 8);
    ASSERT_EQ(plog_end_offset(log), leo);
    h->truncated[h->n_truncated++] = leo;
}

TEST(storage_plog_hooks_report_rolls_and_suffix_truncations)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 4096;
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    struct hook_log h = {.log = log};
    plog_set_hooks(log, &(struct plog_hooks){.rolled = on_rolled, .truncated = on_truncated, .data = &h});
    for (int i = 0; i < 40; i++)
        su_append(log, 3, 200, 1000 + i, 0); /* ~700-byte batches: a roll every 5 */
    ASSERT_CMP(h.n_rolled, >=, 5);
    ASSERT_EQ(h.n_rolled, plog_segment_count(log) - 1);
    for (int i = 0; i < h.n_rolled; i++) {
        ASSERT_EQ(h.rolled[i], h.leo_at_roll[i]); /* before the batch that caused it */
        ASSERT_EQ(h.rolled[i] % 3, 0);
        if (i > 0)
            ASSERT_CMP(h.rolled[i], >, h.rolled[i - 1]);
    }
    ASSERT_EQ(h.n_truncated, 0);
    ASSERT_EQ(plog_truncate_suffix(log, plog_end_offset(log) + 5), 0); /* no-op */
    ASSERT_EQ(h.n_truncated, 0);
    ASSERT_EQ(plog_truncate_suffix(log, 31), 0); /* inside batch [30, 32] */
    ASSERT_EQ(h.n_truncated, 1);
    ASSERT_EQ(h.truncated[0], 30);
    plog_set_hooks(log, NULL);
    ASSERT_EQ(plog_truncate_suffix(log, 12), 0);
    ASSERT_EQ(h.n_truncated, 1);
    int rolled = h.n_rolled;
    for (int i = 0; i < 20; i++)
        su_append(log, 3, 200, 2000 + i, 0);
    ASSERT_EQ(h.n_rolled, rolled);
    plog_close(log);
}

struct scan_log {
    int64_t bases[256];
    int n;
    int stop_after; /* return 7 after this many calls (0: never) */
};

static int on_header(const uint8_t *hdr, int64_t size, void *data)
{
    struct scan_log *s = data;
    struct kbatch_header h;
    kbatch_parse_header(hdr, &h);
    ASSERT_EQ(h.magic, KBATCH_MAGIC);
    ASSERT_EQ((int64_t)kbatch_size(&h), size);
    ASSERT(s->n < 256);
    s->bases[s->n++] = h.base_offset;
    return s->stop_after && s->n == s->stop_after ? 7 : 0;
}

TEST(storage_plog_scan_headers_walks_batches_from_an_offset_across_segments)
{
    struct plog_config cfg = su_config();
    cfg.segment_bytes = 8192;
    cfg.index_interval_bytes = 512;
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    /* batches of 1..4 records: base offsets recorded to compare */
    int64_t bases[100];
    for (int i = 0; i < 100; i++)
        bases[i] = su_append(log, 1 + i % 4, 150, 1000 + i, 0);
    ASSERT_CMP(plog_segment_count(log), >=, 4);

    struct scan_log s = {0};
    ASSERT_EQ(plog_scan_headers(log, 0, on_header, &s), 0);
    ASSERT_EQ(s.n, 100);
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(s.bases[i], bases[i]);

    /* from inside a batch: that batch first; from a batch start: it first */
    for (int k = 1; k < 100; k += 7) {
        s = (struct scan_log){0};
        ASSERT_EQ(plog_scan_headers(log, bases[k] + (k % 2 ? 0 : 1), on_header, &s), 0);
        int first = k % 2 ? k : (bases[k + 1] - bases[k] > 1 ? k : k + 1);
        ASSERT_EQ(s.n, 100 - first);
        ASSERT_EQ(s.bases[0], bases[first]);
        ASSERT_EQ(s.bases[s.n - 1], bases[99]);
    }

    s = (struct scan_log){0};
    ASSERT_EQ(plog_scan_headers(log, plog_end_offset(log), on_header, &s), 0);
    ASSERT_EQ(s.n, 0);

    s = (struct scan_log){.stop_after = 3};
    ASSERT_EQ(plog_scan_headers(log, 0, on_header, &s), 7);
    ASSERT_EQ(s.n, 3);

    /* below log start: clamped (whole segments went) */
    plog_set_high_watermark(log, plog_end_offset(log));
    ASSERT_EQ(plog_truncate_prefix(log, bases[50]), 0);
    s = (struct scan_log){0};
    ASSERT_EQ(plog_scan_headers(log, 0, on_header, &s), 0);
    ASSERT_EQ(s.n, 50);
    ASSERT_EQ(s.bases[0], bases[50]);
    plog_close(log);

    /* the same after a clean reopen (indexes loaded from files) */
    log = su_open(su_dir("p"), &cfg, true, NULL);
    s = (struct scan_log){0};
    ASSERT_EQ(plog_scan_headers(log, bases[77], on_header, &s), 0);
    ASSERT_EQ(s.n, 23);
    ASSERT_EQ(s.bases[0], bases[77]);
    plog_close(log);
}
