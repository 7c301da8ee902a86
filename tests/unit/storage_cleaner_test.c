/* The log cleaner on real logs: passes, thresholds, tombstones, producer headers, reads and
 * recovery across offset gaps, corrupt input, threads, and a crash at every step of a swap. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <sys/wait.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/time.h"
#include "storage/cleaner.h"
#include "storage/compact.h"
#include "storage/io.h"
#include "storage_util.h"

#define NKEYS 50

/* What the log must say: each key's latest value ("" = tombstone). */
struct model {
    char latest[NKEYS][24];
    bool tomb[NKEYS];
    bool written[NKEYS];
    int64_t records;
};

static struct plog_config compact_config(int64_t segment_bytes)
{
    struct plog_config c = su_config();
    c.segment_bytes = segment_bytes;
    c.index_interval_bytes = 512;
    c.compact = true;
    c.delete_retention_ms = 1000;
    c.min_compaction_lag_ms = 0;
    c.min_cleanable_dirty_ratio = 0.5;
    return c;
}

static uint32_t lcg(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

/* Appends `batches` batches of 10 records over NKEYS keys (every 13th a tombstone), codecs
 * rotating, every third batch from producer 7; then makes everything durable and committed. */
static void fill_log(struct plog *log, struct model *m, int batches, uint32_t seed, int64_t ts0)
{
    static char keys[10][16], vals[10][24];
    static int32_t seq = 0;
    for (int b = 0; b < batches; b++) {
        struct su_rec recs[10];
        int64_t base = plog_end_offset(log);
        for (int i = 0; i < 10; i++) {
            int k = (int)(lcg(&seed) % NKEYS);
            snprintf(keys[i], sizeof(keys[i]), "k%03d", k);
            snprintf(vals[i], sizeof(vals[i]), "v%" PRId64, base + i);
            bool tomb = (base + i) % 13 == 0;
            recs[i] = (struct su_rec){keys[i], tomb ? NULL : vals[i], ts0 + base + i};
            m->written[k] = true;
            m->tomb[k] = tomb;
            snprintf(m->latest[k], sizeof(m->latest[k]), "%s", tomb ? "" : vals[i]);
        }
        bool idem = b % 3 == 0;
        su_append_recs(log, recs, 10, b % 5, idem ? 7 : -1, idem ? seq : -1);
        if (idem)
            seq += 10;
        m->records += 10;
    }
    plog_flush(log);
    plog_set_high_watermark(log, plog_end_offset(log));
}

struct seen {
    char latest[NKEYS][24];
    bool tomb[NKEYS];
    bool present[NKEYS];
    int64_t records;
    int64_t tombstones;
    int64_t batches;
    int64_t empty_batches;
};

static void seen_record(struct seen *s, const struct krecord *r)
{
    s->records++;
    if (r->key.len != 4)
        return;
    int k = atoi((const char *)r->key.p + 1);
    s->present[k] = true;
    s->tomb[k] = r->value.len < 0;
    s->tombstones += r->value.len < 0;
    memset(s->latest[k], 0, sizeof(s->latest[k]));
    if (r->value.len > 0)
        memcpy(s->latest[k], r->value.p, (size_t)MIN(r->value.len, 23));
}

/* Reads the whole log in small reads (hints, indexes and gaps all exercised), validating every
 * batch deeply and checking offsets only increase. */
static void read_all(struct plog *log, struct seen *s, size_t max_bytes)
{
    memset(s, 0, sizeof(*s));
    int64_t off = plog_start_offset(log), leo = plog_end_offset(log), prev_last = -1;
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, max_bytes, &r), 0);
        if (r.len == 0)
            break;
        ASSERT_CMP(r.first_offset, >=, off - 0); /* a batch at or after off, or holding it */
        uint8_t *buf = su_read_bytes(&r);
        size_t pos = 0;
        while (pos < r.len) {
            struct kbatch_header h;
            kbatch_parse_header(buf + pos, &h);
            size_t sz = kbatch_size(&h);
            ASSERT_EQ(kbatch_validate(buf + pos, sz, true, false, 1 << 24), 0);
            ASSERT_CMP(h.base_offset, >, prev_last);
            prev_last = kbatch_last_offset(&h);
            s->batches++;
            s->empty_batches += h.records_count == 0;
            struct cbatch cb;
            ASSERT_EQ(cbatch_decode(&cb, buf + pos, sz, 1 << 24), 0);
            struct krecord_iter it;
            krecord_iter_init(&it, cb.recs, cb.recs_len, h.records_count);
            struct krecord rec;
            int rc;
            while ((rc = krecord_iter_next(&it, &rec)) == 1)
                if (h.base_offset + rec.offset_delta >= off)
                    seen_record(s, &rec);
            ASSERT_EQ(rc, 0);
            cbatch_free(&cb);
            pos += sz;
        }
        mem_free(buf);
        ASSERT_CMP(r.next_offset, >, off);
        off = r.next_offset;
        fileref_put(r.file);
    }
    ASSERT_EQ(off, leo);
}

/* Every key's latest value is there (tombstones: a tombstone, or nothing when expired_ok). */
static void check_latest(struct plog *log, const struct model *m, bool expired_ok)
{
    struct seen s;
    read_all(log, &s, 700);
    for (int k = 0; k < NKEYS; k++) {
        if (!m->written[k]) {
            ASSERT(!s.present[k]);
            continue;
        }
        if (m->tomb[k]) {
            if (!(expired_ok && !s.present[k]))
                ASSERT(s.present[k] && s.tomb[k]);
        } else {
            if (!s.present[k] || strcmp(s.latest[k], m->latest[k]) != 0)
                test_fail(__FILE__, __LINE__, "key k%03d: latest %s, log says %s", k, m->latest[k],
                          s.present[k] ? s.latest[k] : "(absent)");
        }
    }
}

static struct plog *make_log(const char *name, struct plog_config *cfg, struct model *m,
                             int batches)
{
    memset(m, 0, sizeof(*m));
    struct plog *log = su_open(su_dir(name), cfg, false, NULL);
    fill_log(log, m, batches, 1, 1000);
    return log;
}

TEST(cleaner_keeps_latest_value_per_key_and_shrinks)
{
    struct plog_config cfg = compact_config(4096);
    struct model m;
    struct plog *log = make_log("p", &cfg, &m, 200);
    int64_t leo = plog_end_offset(log), size = plog_size_bytes(log);
    int segs = plog_segment_count(log);
    struct clean_pass_stats st;
    ASSERT_EQ(cleaner_run_once(log, 5000, false, 1 << 20, &st), 1);
    ASSERT_EQ(plog_end_offset(log), leo);
    ASSERT_EQ(plog_start_offset(log), 0);
    ASSERT_CMP(plog_size_bytes(log), <, size / 4);
    ASSERT_EQ(plog_segment_count(log), segs); /* groups are made by the sizes before */
    ASSERT_EQ(st.first_dirty, 0);
    ASSERT_EQ(st.cleaned_upto, plog_cleaned_offset(log));
    ASSERT_CMP(st.cleaned_upto, >, leo - 200);
    ASSERT(!st.map_full);
    ASSERT_CMP(st.records_removed, >, 1500);
    ASSERT_EQ(st.keys, NKEYS);
    check_latest(log, &m, false);
    /* the cleaned range holds at most one record per key */
    struct seen s;
    read_all(log, &s, 1 << 20);
    ASSERT_CMP(s.records, <=, NKEYS + (leo - st.cleaned_upto));
    /* nothing left to do: below the ratio */
    ASSERT_EQ(cleaner_run_once(log, 5000, false, 1 << 20, &st), 0);
    /* a forced pass merges the small cleaned segments into one */
    ASSERT_EQ(cleaner_run_once(log, 5000, true, 1 << 20, &st), 1);
    ASSERT_EQ(plog_segment_count(log), 2);
    ASSERT_EQ(st.segments_before, segs - 1);
    ASSERT_EQ(st.segments_after, 1);
    ASSERT_EQ(st.records_removed, 0);
    check_latest(log, &m, false);
    plog_close(log);
    /* a clean reopen trusts it, an unclean one validates it: both keep every latest value */
    log = su_open(su_dir("p"), &cfg, true, NULL);
    check_latest(log, &m, false);
    ASSERT_EQ(plog_cleaned_offset(log), st.cleaned_upto);
    plog_close(log);
    ASSERT_EQ(unlink(su_dir("p/recovery-point")), 0);
    struct plog_recovery rec;
    log = su_open(su_dir("p"), &cfg, false, &rec);
    ASSERT_CMP(rec.segments_validated, >=, 2);
    ASSERT_EQ(rec.truncated_bytes, 0);
    ASSERT_EQ(plog_end_offset(log), leo);
    check_latest(log, &m, false);
    plog_close(log);
}

/* The batch that holds offset (or the first one after it), by brute force. */
static bool brute_find(struct plog *log, int64_t offset, int64_t *base)
{
    struct seen unused;
    (void)unused;
    int64_t leo = plog_end_offset(log);
    int64_t off = plog_start_offset(log);
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 1, &r), 0);
        if (r.len == 0)
            return false;
        fileref_put(r.file);
        if (r.next_offset > offset) {
            *base = r.first_offset;
            return true;
        }
        off = r.next_offset;
    }
    return false;
}

TEST(cleaner_reads_indexes_hints_and_timestamps_across_gaps)
{
    /* stderr to a file: an index or hint that trips over a gap logs index_corrupt */
    char errpath[512];
    snprintf(errpath, sizeof(errpath), "%s/stderr", test_tmpdir());
    ASSERT(freopen(errpath, "w", stderr) != NULL);
    struct plog_config cfg = compact_config(8192);
    struct model m;
    struct plog *log = make_log("p", &cfg, &m, 300);
    ASSERT_EQ(cleaner_run_once(log, 5000, true, 1 << 20, NULL), 1);
    int64_t leo = plog_end_offset(log);
    /* the batches that exist, in order: (base, last, max_ts), and the records left in them */
    int64_t bases[4000], lasts[4000], maxts[4000];
    static int64_t rec_offsets[40000];
    int n = 0, n_recs = 0;
    int64_t off = 0;
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 1, &r), 0);
        uint8_t *b = su_read_bytes(&r);
        struct kbatch_header h;
        kbatch_parse_header(b, &h);
        ASSERT_EQ(kbatch_size(&h), r.len);
        bases[n] = h.base_offset;
        lasts[n] = kbatch_last_offset(&h);
        maxts[n] = h.max_timestamp;
        n++;
        struct cbatch cb;
        ASSERT_EQ(cbatch_decode(&cb, b, r.len, 1 << 20), 0);
        struct krecord_iter it;
        krecord_iter_init(&it, cb.recs, cb.recs_len, cb.h.records_count);
        struct krecord rec;
        while (krecord_iter_next(&it, &rec) == 1)
            rec_offsets[n_recs++] = h.base_offset + rec.offset_delta;
        cbatch_free(&cb);
        mem_free(b);
        off = r.next_offset;
        fileref_put(r.file);
    }
    ASSERT_CMP(n, >, 10);
    int gaps = 0;
    for (int i = 1; i < n; i++)
        gaps += bases[i] > lasts[i - 1] + 1;
    ASSERT_CMP(gaps, >=, 3);
    /* every offset, in random order (index lookups), finds the first batch ending at or after
     * it, and reading on from there is sequential (hints) */
    uint32_t seed = 7;
    for (int t = 0; t < 3000; t++) {
        int64_t o = (int64_t)(lcg(&seed) % (uint32_t)leo);
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, o, leo, 1 + lcg(&seed) % 3000, &r), 0);
        int i = 0;
        while (lasts[i] < o)
            i++;
        ASSERT_EQ(r.first_offset, bases[i]);
        fileref_put(r.file);
    }
    int64_t b0;
    ASSERT(brute_find(log, 0, &b0));
    ASSERT_EQ(b0, bases[0]);
    /* ListOffsets by time: the first record left whose timestamp (1000 + its offset, as
     * fill_log writes them) reaches ts, which the cleaner may have removed from the batch start */
    int moved = 0;
    for (int64_t ts = 900; ts < 1000 + leo + 10; ts += 7) {
        int64_t got, got_ts;
        ASSERT_EQ(plog_offset_for_timestamp(log, ts, &got, &got_ts), 0);
        int i = 0;
        while (i < n_recs && 1000 + rec_offsets[i] < ts)
            i++;
        if (i == n_recs) {
            ASSERT_EQ(got, -1);
        } else {
            ASSERT_EQ(got, rec_offsets[i]);
            ASSERT_EQ(got_ts, 1000 + rec_offsets[i]);
            int j = 0;
            while (j < n && maxts[j] < ts)
                j++;
            moved += got != bases[j]; /* the batch's own answer would have been wrong */
        }
    }
    ASSERT_CMP(moved, >, 0);
    /* sequential readers with small budgets: hints across gaps */
    struct seen s1, s2;
    read_all(log, &s1, 200);
    read_all(log, &s2, 5000);
    ASSERT_EQ(s1.records, s2.records);
    check_latest(log, &m, false);
    plog_close(log);
    fflush(stderr);
    char buf[1 << 16];
    FILE *f = fopen(errpath, "r");
    size_t got = fread(buf, 1, sizeof(buf) - 1, f);
    buf[got] = 0;
    fclose(f);
    ASSERT(strstr(buf, "index_corrupt") == NULL);
    ASSERT(strstr(buf, "index_rebuilt") == NULL);
}

TEST(cleaner_recovery_keeps_gaps_below_checkpoint_only)
{
    struct plog_config cfg = compact_config(4096);
    struct model m;
    struct plog *log = make_log("p", &cfg, &m, 100);
    ASSERT_EQ(cleaner_run_once(log, 5000, true, 1 << 20, NULL), 1);
    int64_t leo = plog_end_offset(log);
    plog_close(log);
    /* a gap above what the cleaner rewrote is corruption: write a batch with a skipped
     * offset at the end of the active segment */
    char path[600];
    int64_t last_base = -1;
    for (int64_t b = 0; b <= leo; b++)
        if (su_exists(su_dir("p"), su_seg(b, ".log")))
            last_base = b;
    size_t len;
    uint8_t *b = su_batch(2, 10, 5, 1, &len);
    kbatch_set_base_offset(b, leo + 3);
    snprintf(path, sizeof(path), "%s/%s", su_dir("p"), su_seg(last_base, ".log"));
    int fd = open(path, O_WRONLY | O_APPEND);
    ASSERT_EQ(write(fd, b, len), (ssize_t)len);
    close(fd);
    mem_free(b);
    ASSERT_EQ(unlink(su_dir("p/recovery-point")), 0);
    struct plog_recovery rec;
    log = su_open(su_dir("p"), &cfg, false, &rec);
    ASSERT_EQ(rec.truncated_at, leo);
    ASSERT_EQ(rec.truncated_bytes, (int64_t)len);
    ASSERT_EQ(plog_end_offset(log), leo);
    check_latest(log, &m, false);
    plog_close(log);
    /* a lost checkpoint: the gaps are accepted (a compacted log is never cut), with a warning */
    ASSERT_EQ(unlink(su_dir("p/recovery-point")), 0);
    FILE *f = fopen(su_dir("p/cleaner-checkpoint"), "w");
    fputs("garbage", f);
    fclose(f);
    log = su_open(su_dir("p"), &cfg, false, &rec);
    ASSERT_EQ(rec.truncated_bytes, 0);
    check_latest(log, &m, false);
    plog_close(log);
}

TEST(cleaner_dirty_ratio_and_compaction_lag_thresholds)
{
    struct plog_config cfg = compact_config(4096);
    struct model m;
    struct plog *log = make_log("p", &cfg, &m, 100);
    double score;
    /* never cleaned: everything cleanable is dirty */
    ASSERT(plog_clean_candidate(log, 5000, false, &score));
    ASSERT(score > 0.99);
    ASSERT_EQ(cleaner_run_once(log, 5000, false, 1 << 20, NULL), 1);
    ASSERT(!plog_clean_candidate(log, 5000, false, &score));
    /* more data until a new segment is sealed: dirty, at some ratio in (0, 1) */
    struct plog_config c2 = cfg;
    c2.min_cleanable_dirty_ratio = 0.999;
    plog_set_config(log, &c2);
    int more = 0;
    do {
        fill_log(log, &m, 1, 2 + (uint32_t)more, 1000);
        ASSERT_CMP(++more, <, 100);
        plog_clean_candidate(log, 5000, false, &score);
    } while (score == 0);
    ASSERT(score > 0 && score < 0.99);
    double low = score;
    c2.min_cleanable_dirty_ratio = low - 0.01;
    plog_set_config(log, &c2);
    ASSERT(plog_clean_candidate(log, 5000, false, &score));
    c2.min_cleanable_dirty_ratio = low; /* Kafka: strictly above */
    plog_set_config(log, &c2);
    ASSERT(!plog_clean_candidate(log, 5000, false, &score));
    /* min.compaction.lag.ms: segments with records younger than the lag wait */
    fill_log(log, &m, 200, 3, 100000);
    c2.min_cleanable_dirty_ratio = 0.01;
    c2.min_compaction_lag_ms = 50000;
    plog_set_config(log, &c2);
    /* at now = 105000 every new record is younger than the lag: a pass stops before them */
    int64_t leo = plog_end_offset(log);
    struct clean_pass_stats st;
    int rc = cleaner_run_once(log, 100000 + 5000, true, 1 << 20, &st);
    ASSERT_EQ(rc, 1);
    ASSERT_CMP(st.cleaned_upto, <=, leo - 2000 + 10);
    ASSERT_CMP(st.cleaned_upto, >, 900);
    /* later, they are old enough */
    ASSERT(plog_clean_candidate(log, 100000 + leo + 60000, false, &score));
    ASSERT_EQ(cleaner_run_once(log, 100000 + leo + 60000, false, 1 << 20, &st), 1);
    ASSERT_CMP(plog_cleaned_offset(log), >, leo - 200);
    check_latest(log, &m, false);
    /* compaction off: never a candidate */
    c2.compact = false;
    plog_set_config(log, &c2);
    ASSERT(!plog_clean_candidate(log, INT64_MAX / 2, true, &score));
    plog_close(log);
}

TEST(cleaner_tombstones_kept_for_delete_retention_then_removed)
{
    struct plog_config cfg = compact_config(4096);
    cfg.delete_retention_ms = 10000;
    struct model m;
    struct plog *log = make_log("p", &cfg, &m, 100);
    int tombs = 0;
    for (int k = 0; k < NKEYS; k++)
        tombs += m.written[k] && m.tomb[k];
    ASSERT_CMP(tombs, >, 0);
    /* the first pass keeps the tombstones and starts their clock */
    ASSERT_EQ(cleaner_run_once(log, 50000, false, 1 << 20, NULL), 1);
    struct seen s;
    check_latest(log, &m, false);
    read_all(log, &s, 1 << 20);
    ASSERT_CMP(s.tombstones, >=, tombs);
    /* nothing dirty: not a candidate until the horizon */
    double score;
    ASSERT(!plog_clean_candidate(log, 59999, false, &score));
    ASSERT(plog_clean_candidate(log, 60000, false, &score));
    /* the horizon survives a restart (cleaner checkpoint) */
    plog_close(log);
    log = su_open(su_dir("p"), &cfg, true, NULL);
    ASSERT(!plog_clean_candidate(log, 59999, false, &score));
    ASSERT(plog_clean_candidate(log, 60000, false, &score));
    struct clean_pass_stats st;
    ASSERT_EQ(cleaner_run_once(log, 60000, false, 1 << 20, &st), 1);
    ASSERT_CMP(st.tombstones_removed, >=, 1);
    check_latest(log, &m, true);
    read_all(log, &s, 1 << 20);
    /* only tombstones in the uncleaned active segment may remain */
    int64_t tail = plog_end_offset(log) - plog_cleaned_offset(log);
    ASSERT_CMP(s.tombstones, <=, tail);
    for (int k = 0; k < NKEYS; k++)
        if (m.written[k] && !m.tomb[k])
            ASSERT(s.present[k]);
    ASSERT(!plog_clean_candidate(log, 70000, false, &score));
    plog_close(log);
}

TEST(cleaner_small_key_map_cleans_in_several_passes)
{
    struct plog_config cfg = compact_config(16384);
    cfg.min_cleanable_dirty_ratio = 0;
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    /* 1000 distinct keys, each written 3 times */
    char keys[20][16], vals[20][16];
    for (int round = 0; round < 3; round++) {
        for (int b = 0; b < 50; b++) {
            struct su_rec recs[20];
            for (int i = 0; i < 20; i++) {
                snprintf(keys[i], sizeof(keys[i]), "key%04d", b * 20 + i);
                snprintf(vals[i], sizeof(vals[i]), "r%d", round);
                recs[i] = (struct su_rec){keys[i], vals[i], 1000};
            }
            su_append_recs(log, recs, 20, KCOMPRESSION_NONE, -1, -1);
        }
    }
    plog_flush(log);
    plog_set_high_watermark(log, plog_end_offset(log));
    int passes = 0;
    struct clean_pass_stats st;
    bool saw_full = false;
    /* 6 KiB of map: 192 keys per pass */
    while (cleaner_run_once(log, 5000, false, 6 * 1024, &st) == 1) {
        passes++;
        saw_full |= st.map_full;
        ASSERT_CMP(st.keys, <=, 192);
        ASSERT_CMP(passes, <, 100);
    }
    ASSERT(saw_full);
    ASSERT_CMP(passes, >=, 5);
    /* every key once, with its last value (bar what the active segment holds) */
    int64_t off = 0, leo = plog_end_offset(log), cleaned = plog_cleaned_offset(log);
    int count[1000] = {0};
    char last[1000] = {0};
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 1 << 20, &r), 0);
        uint8_t *buf = su_read_bytes(&r);
        size_t pos = 0;
        while (pos < r.len) {
            struct kbatch_header h;
            kbatch_parse_header(buf + pos, &h);
            struct cbatch cb;
            ASSERT_EQ(cbatch_decode(&cb, buf + pos, kbatch_size(&h), 1 << 20), 0);
            struct krecord_iter it;
            krecord_iter_init(&it, cb.recs, cb.recs_len, h.records_count);
            struct krecord rec;
            while (krecord_iter_next(&it, &rec) == 1) {
                int64_t o = h.base_offset + rec.offset_delta;
                int k = atoi((const char *)rec.key.p + 3);
                if (o < cleaned)
                    count[k]++;
                last[k] = rec.value.p[1];
            }
            cbatch_free(&cb);
            pos += kbatch_size(&h);
        }
        mem_free(buf);
        off = r.next_offset;
        fileref_put(r.file);
    }
    for (int k = 0; k < 1000; k++) {
        ASSERT_CMP(count[k], <=, 1);
        ASSERT_EQ(last[k], '2');
    }
    plog_close(log);
}

/* Raw batch headers of the whole log. */
static int headers(struct plog *log, struct kbatch_header *out, int cap)
{
    int n = 0;
    int64_t off = plog_start_offset(log), leo = plog_end_offset(log);
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 1 << 20, &r), 0);
        uint8_t *buf = su_read_bytes(&r);
        for (size_t pos = 0; pos < r.len; pos += kbatch_size(&out[n - 1])) {
            ASSERT_CMP(n, <, cap);
            kbatch_parse_header(buf + pos, &out[n++]);
        }
        mem_free(buf);
        off = r.next_offset;
        fileref_put(r.file);
    }
    return n;
}

TEST(cleaner_keeps_empty_header_for_each_producers_last_batch)
{
    struct plog_config cfg = compact_config(1 << 20);
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    static const struct su_rec ab[] = {{"a", "1", 100}, {"b", "2", 101}};
    static const struct su_rec ab2[] = {{"a", "3", 102}, {"b", "4", 103}};
    static const struct su_rec c[] = {{"c", "5", 104}};
    su_append_recs(log, ab, 2, KCOMPRESSION_GZIP, 11, 0);   /* 0-1: producer 11, seq 0-1 */
    su_append_recs(log, ab, 2, KCOMPRESSION_NONE, 12, 0);   /* 2-3: producer 12 */
    su_append_recs(log, ab, 2, KCOMPRESSION_LZ4, 11, 2);    /* 4-5: producer 11, seq 2-3 */
    su_append_recs(log, ab2, 2, KCOMPRESSION_NONE, -1, -1); /* 6-7: supersedes all above */
    su_append_recs(log, c, 1, KCOMPRESSION_NONE, 13, 5);    /* 8: producer 13, stays */
    struct plog_config roll = cfg;
    roll.segment_bytes = 1;
    plog_set_config(log, &roll);
    su_append_recs(log, c, 1, KCOMPRESSION_NONE, -1, -1); /* 9: in a new active segment */
    plog_set_config(log, &cfg);
    plog_flush(log);
    plog_set_high_watermark(log, plog_end_offset(log));
    ASSERT_EQ(cleaner_run_once(log, 5000, true, 1 << 20, NULL), 1);
    struct kbatch_header h[16];
    int n = headers(log, h, 16);
    ASSERT_EQ(n, 5);
    /* producer 12's only batch and 11's last remain as empty headers; 11's first is gone */
    ASSERT_EQ(h[0].base_offset, 2);
    ASSERT_EQ(h[0].producer_id, 12);
    ASSERT_EQ(h[0].records_count, 0);
    ASSERT_EQ(h[0].last_offset_delta, 1);
    ASSERT_EQ(h[1].base_offset, 4);
    ASSERT_EQ(h[1].producer_id, 11);
    ASSERT_EQ(h[1].base_sequence, 2);
    ASSERT_EQ(h[1].records_count, 0);
    ASSERT_EQ(h[1].last_offset_delta, 1);
    ASSERT_EQ(kbatch_compression(&h[1]), KCOMPRESSION_NONE);
    ASSERT_EQ(h[2].base_offset, 6);
    ASSERT_EQ(h[2].records_count, 2);
    ASSERT_EQ(h[3].base_offset, 8);
    ASSERT_EQ(h[3].producer_id, 13);
    ASSERT_EQ(h[4].base_offset, 9);
    /* a later batch of producer 12 makes its empty header redundant */
    plog_set_config(log, &roll);
    su_append_recs(log, c, 1, KCOMPRESSION_NONE, 12, 2);
    su_append_recs(log, c, 1, KCOMPRESSION_NONE, -1, -1);
    plog_set_config(log, &cfg);
    plog_flush(log);
    plog_set_high_watermark(log, plog_end_offset(log));
    ASSERT_EQ(cleaner_run_once(log, 5000, true, 1 << 20, NULL), 1);
    n = headers(log, h, 16);
    for (int i = 0; i < n; i++)
        ASSERT(!(h[i].producer_id == 12 && h[i].base_offset == 2));
    ASSERT_EQ(h[0].base_offset, 4); /* producer 11's last stays */
    plog_close(log);
}

/* keep_batches (cluster mode): a batch that loses every record stays as an empty header, so
 * the log still holds every offset, batch after batch (a Raft log has no gaps). */
TEST(cleaner_keep_batches_leaves_no_offset_gap)
{
    for (int keep = 0; keep <= 1; keep++) {
        struct plog_config cfg = compact_config(1 << 20);
        char name[16];
        snprintf(name, sizeof(name), "k%d", keep);
        struct plog *log = su_open(su_dir(name), &cfg, false, NULL);
        static const struct su_rec ab[] = {{"a", "1", 100}, {"b", "2", 101}};
        static const struct su_rec ab2[] = {{"a", "3", 102}, {"b", "4", 103}};
        su_append_recs(log, ab, 2, KCOMPRESSION_NONE, -1, -1);  /* 0-1: superseded */
        su_append_recs(log, ab, 2, KCOMPRESSION_ZSTD, -1, -1);  /* 2-3: superseded */
        su_append_recs(log, ab2, 2, KCOMPRESSION_NONE, -1, -1); /* 4-5: the latest */
        struct plog_config roll = cfg;
        roll.segment_bytes = 1;
        plog_set_config(log, &roll);
        su_append_recs(log, ab2, 1, KCOMPRESSION_NONE, -1, -1); /* 6: a new active segment */
        plog_set_config(log, &cfg);
        plog_flush(log);
        plog_set_high_watermark(log, plog_end_offset(log));
        ASSERT_EQ(cleaner_run_once_keeping(log, 5000, true, 1 << 20, keep, NULL), 1);
        struct kbatch_header h[8];
        int n = headers(log, h, 8);
        if (!keep) {
            ASSERT_EQ(n, 2); /* the emptied batches are gone: offsets 0-3 are a gap */
            ASSERT_EQ(h[0].base_offset, 4);
        } else {
            ASSERT_EQ(n, 4);
            int64_t next = 0;
            for (int i = 0; i < n; i++) {
                ASSERT_EQ(h[i].base_offset, next); /* contiguous */
                next = kbatch_last_offset(&h[i]) + 1;
            }
            ASSERT_EQ(h[0].records_count, 0);
            ASSERT_EQ(h[1].records_count, 0);
            ASSERT_EQ(h[2].records_count, 2);
        }
        plog_close(log);
    }
}

TEST(cleaner_corrupt_batch_stops_pass_and_disables_log)
{
    struct plog_config cfg = compact_config(4096);
    struct model m;
    struct plog *log = make_log("p", &cfg, &m, 60);
    plog_close(log);
    /* a CRC-covered byte in the second segment's first batch */
    int64_t second = -1;
    for (int64_t b = 1; b < 600 && second < 0; b++)
        if (su_exists(su_dir("p"), su_seg(b, ".log")))
            second = b;
    ASSERT_CMP(second, >, 0);
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", su_dir("p"), su_seg(second, ".log"));
    int fd = open(path, O_RDWR);
    uint8_t c;
    ASSERT_EQ(pread(fd, &c, 1, 70), 1);
    c ^= 0x01;
    ASSERT_EQ(pwrite(fd, &c, 1, 70), 1);
    close(fd);
    log = su_open(su_dir("p"), &cfg, true, NULL);
    int64_t size = plog_size_bytes(log);
    int segs = plog_segment_count(log);
    ASSERT_EQ(cleaner_run_once(log, 5000, false, 1 << 20, NULL), -ERR_CORRUPT);
    ASSERT_EQ(plog_size_bytes(log), size);
    ASSERT_EQ(plog_segment_count(log), segs);
    ASSERT(!su_exists(su_dir("p"), "00000000000000000000-00000000000000000000.cleaned"));
    double score;
    ASSERT(!plog_clean_candidate(log, 5000, true, &score));
    ASSERT(!plog_fenced(log));
    plog_close(log);
}

/* ---- crash at every step of a pass ---- */

static int io_ops, io_crash_at, io_fail_at;

static bool io_step(void)
{
    io_ops++;
    if (io_ops == io_crash_at)
        _exit(42); /* kill -9: what reached the page cache stays */
    if (io_ops == io_fail_at) {
        errno = EIO;
        return false;
    }
    return true;
}

static ssize_t t_pwrite(int fd, const void *b, size_t n, off_t o)
{
    return io_step() ? pwrite(fd, b, n, o) : -1;
}
/* A process crash keeps the page cache: syncing adds nothing to these tests but time. */
static int t_fdatasync(int fd)
{
    return io_step() ? 0 : -1;
}
static int t_fsync(int fd)
{
    return io_step() ? 0 : -1;
}
static int nosync(int fd)
{
    return 0;
}
static int t_ftruncate(int fd, off_t l)
{
    return io_step() ? ftruncate(fd, l) : -1;
}
static int t_openat(int d, const char *n, int f, mode_t m)
{
    return io_step() ? openat(d, n, f, m) : -1;
}
static int t_renameat(int a, const char *x, int b, const char *y)
{
    return io_step() ? renameat(a, x, b, y) : -1;
}
static int t_unlinkat(int d, const char *n, int f)
{
    return io_step() ? unlinkat(d, n, f) : -1;
}

static const struct storage_io counting_io = {t_pwrite, t_fdatasync, t_fsync,    t_ftruncate,
                                              t_openat, t_renameat,  t_unlinkat, NULL};
static int real_openat(int d, const char *n, int f, mode_t m)
{
    return openat(d, n, f, m);
}
static const struct storage_io nosync_io = {pwrite,      nosync,   nosync,   ftruncate,
                                            real_openat, renameat, unlinkat, NULL};

/* These tests simulate process crashes, for which the file system does not matter: tmpfs
 * (when there is one) spares them the disk's metadata journaling, and the test a minute. */
static const char *crash_dir(const char *name)
{
    static char base[256], path[8][512];
    static int k;
    if (!base[0]) {
        snprintf(base, sizeof(base), "/dev/shm/sp-cleaner-%d", (int)getpid());
        if (mkdir(base, 0755) != 0)
            snprintf(base, sizeof(base), "%s", test_tmpdir());
    }
    char *p = path[k++ % 8];
    snprintf(p, 512, "%s/%s", base, name);
    return p;
}

static void crash_dir_remove(void)
{
    char base[256];
    snprintf(base, sizeof(base), "/dev/shm/sp-cleaner-%d", (int)getpid());
    io_remove_tree(AT_FDCWD, base);
}

/* A log of several groups, closed cleanly, and its model. */
static void crash_fixture(const char *name, struct model *m)
{
    struct plog_config cfg = compact_config(3000);
    memset(m, 0, sizeof(*m));
    struct plog *log = su_open(crash_dir(name), &cfg, false, NULL);
    fill_log(log, m, 45, 1, 1000); /* three groups of segments to swap */
    plog_close(log);
}

/* Opens the fixture and cleans it with the io seam counting, crashing at step crash_at.
 * Returns the child's exit status: 42 = crashed, 0 = the pass finished first. */
static int crash_child(const char *name, int crash_at)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    ASSERT_CMP(pid, >=, 0);
    if (pid == 0) {
        struct plog_config cfg = compact_config(3000);
        struct plog *log = su_open(crash_dir(name), &cfg, true, NULL);
        io_ops = 0;
        io_crash_at = crash_at;
        storage_io_set(&counting_io);
        int rc = cleaner_run_once(log, 5000, true, 1 << 20, NULL);
        _exit(rc == 1 ? 0 : 3);
    }
    int status;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT(WIFEXITED(status));
    return WEXITSTATUS(status);
}

TEST_T(cleaner_crash_at_every_step_of_a_pass_loses_nothing, 300)
{
    storage_io_set(&nosync_io);
    struct model m;
    int steps = 0, swaps = 0;
    for (int at = 1;; at++) {
        char name[32];
        snprintf(name, sizeof(name), "c%d", at);
        crash_fixture(name, &m);
        int64_t leo_before;
        {
            struct plog_config cfg = compact_config(3000);
            struct plog *log = su_open(crash_dir(name), &cfg, true, NULL);
            leo_before = plog_end_offset(log);
            plog_close(log);
        }
        int st = crash_child(name, at);
        ASSERT(st == 42 || st == 0);
        /* the directory as the crash left it: a committed swap not yet completed */
        DIR *d = opendir(crash_dir(name));
        ASSERT(d != NULL);
        struct dirent *de;
        while ((de = readdir(d)) != NULL)
            swaps += io_has_suffix(de->d_name, ".swap");
        closedir(d);
        /* reopen as after a kill -9 (no clean marker): readable, complete, same LEO */
        struct plog_config cfg = compact_config(3000);
        struct plog_recovery rec;
        struct plog *log = su_open(crash_dir(name), &cfg, false, &rec);
        ASSERT_EQ(plog_end_offset(log), leo_before);
        ASSERT_EQ(rec.truncated_bytes, 0);
        check_latest(log, &m, false);
        /* no debris, and the next pass completes the job */
        ASSERT(!su_exists(crash_dir(name), "recovery-point.tmp"));
        plog_set_high_watermark(log, plog_end_offset(log));
        int rc = cleaner_run_once(log, 5000, true, 1 << 20, NULL);
        ASSERT_CMP(rc, >=, 0);
        check_latest(log, &m, false);
        plog_close(log);
        log = su_open(crash_dir(name), &cfg, true, NULL);
        check_latest(log, &m, false);
        plog_close(log);
        io_remove_tree(AT_FDCWD, crash_dir(name));
        if (st == 0) {
            steps = at - 1;
            break;
        }
    }
    crash_dir_remove();
    /* several groups, each with a dozen steps or more */
    ASSERT_CMP(steps, >, 40);
    ASSERT_CMP(swaps, >=, 3);
    printf("  crashed at each of %d I/O steps\n", steps);
}

TEST_T(cleaner_failed_io_at_every_step_keeps_log_consistent, 300)
{
    storage_io_set(&nosync_io);
    struct model m;
    int steps = 0;
    for (int at = 1;; at++) {
        char name[32];
        snprintf(name, sizeof(name), "f%d", at);
        crash_fixture(name, &m);
        struct plog_config cfg = compact_config(3000);
        struct plog *log = su_open(crash_dir(name), &cfg, true, NULL);
        io_ops = 0;
        io_crash_at = 0;
        io_fail_at = at;
        storage_io_set(&counting_io);
        int rc = cleaner_run_once(log, 5000, true, 1 << 20, NULL);
        storage_io_set(&nosync_io);
        io_fail_at = 0;
        /* whatever failed, the open log still reads every latest value */
        check_latest(log, &m, false);
        if (rc < 0 && plog_fenced(log))
            ASSERT(rc != -ERR_CORRUPT);
        plog_close(log);
        log = su_open(crash_dir(name), &cfg, false, NULL);
        check_latest(log, &m, false);
        ASSERT(cleaner_run_once(log, 5000, true, 1 << 20, NULL) >= 0);
        check_latest(log, &m, false);
        plog_close(log);
        io_remove_tree(AT_FDCWD, crash_dir(name));
        if (rc == 1 && io_ops < at) {
            steps = at - 1;
            break;
        }
        ASSERT_CMP(at, <, 2000);
    }
    crash_dir_remove();
    ASSERT_CMP(steps, >, 40);
}

/* ---- threads ---- */

static void poll_until(struct cleaner *cl, int passes)
{
    int done = 0;
    int64_t deadline = time_mono_ms() + 20000;
    while (done < passes) {
        struct pollfd p = {cleaner_fd(cl), POLLIN, 0};
        poll(&p, 1, 100);
        done += cleaner_poll(cl);
        ASSERT_CMP(time_mono_ms(), <, deadline);
    }
}

TEST_T(cleaner_threads_clean_several_logs, 60)
{
    struct cleaner_config cc = {2, 1 << 20, 0, false};
    struct cleaner *cl;
    ASSERT_EQ(cleaner_start(&cc, &cl), 0);
    struct plog_config cfg = compact_config(4096);
    struct model m[3];
    struct plog *logs[3];
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "p%d", i);
        logs[i] = make_log(name, &cfg, &m[i], 80 + 40 * i);
    }
    for (int i = 0; i < 3; i++)
        cleaner_offer(cl, logs[i], 5000);
    ASSERT_EQ(cleaner_dispatch(cl), 2); /* two threads */
    poll_until(cl, 2);
    for (int i = 0; i < 3; i++)
        cleaner_offer(cl, logs[i], 5000);
    ASSERT_EQ(cleaner_dispatch(cl), 1); /* the two cleaned ones are below the ratio now */
    poll_until(cl, 1);
    struct cleaner_stats st;
    cleaner_get_stats(cl, &st);
    ASSERT_EQ(st.passes, 3);
    ASSERT_EQ(st.passes_failed, 0);
    ASSERT_CMP(st.bytes_reclaimed, >, 0);
    ASSERT_CMP(st.records_removed, >, 1000);
    for (int i = 0; i < 3; i++) {
        ASSERT_CMP(plog_cleaned_offset(logs[i]), >, 0);
        check_latest(logs[i], &m[i], false);
        plog_close(logs[i]);
    }
    cleaner_stop(cl);
}

TEST_T(cleaner_log_closed_or_truncated_mid_pass, 60)
{
    /* a slow cleaner (io throttled), interrupted at different moments */
    for (int delay_ms = 0; delay_ms <= 400; delay_ms += 50) {
        struct cleaner_config cc = {1, 1 << 20, 400 * 1000, false};
        struct cleaner *cl;
        ASSERT_EQ(cleaner_start(&cc, &cl), 0);
        struct plog_config cfg = compact_config(4096);
        struct model m;
        char name[16];
        snprintf(name, sizeof(name), "d%d", delay_ms);
        struct plog *log = make_log(name, &cfg, &m, 100);
        int64_t leo = plog_end_offset(log);
        /* a batch above HW that Raft may take back */
        static const struct su_rec extra[] = {{"zz", "x", 1}};
        su_append_recs(log, extra, 1, KCOMPRESSION_NONE, -1, -1);
        cleaner_offer(cl, log, 5000);
        ASSERT_EQ(cleaner_dispatch(cl), 1);
        int64_t until = time_mono_ms() + delay_ms;
        while (time_mono_ms() < until) {
            struct pollfd p = {cleaner_fd(cl), POLLIN, 0};
            poll(&p, 1, 10);
            cleaner_poll(cl);
        }
        if (delay_ms % 100 == 50) {
            /* Raft-style truncation above HW stops the pass; the log stays consistent */
            ASSERT_EQ(plog_truncate_suffix(log, leo), 0);
            ASSERT(!plog_fenced(log));
            ASSERT_EQ(plog_end_offset(log), leo);
            check_latest(log, &m, false);
        }
        plog_close(log); /* abandons the pass if it still runs */
        cleaner_stop(cl);
        log = su_open(su_dir(name), &cfg, false, NULL);
        ASSERT_EQ(plog_end_offset(log), leo + (delay_ms % 100 == 50 ? 0 : 1));
        check_latest(log, &m, false);
        plog_close(log);
    }
}

TEST_T(cleaner_throughput, 120)
{
    /* per codec: 20k keys, 200k records of ~100 bytes; prints MB/s of segment bytes cleaned
     * (one pass: key map, rewrite, fdatasync, swaps) */
    static const char *names[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    for (int codec = KCOMPRESSION_NONE; codec <= KCOMPRESSION_ZSTD; codec++) {
        struct plog_config cfg = compact_config(2 << 20);
        struct plog *log = su_open(su_dir(names[codec]), &cfg, false, NULL);
        static char keys[100][16], vals[100][100];
        uint32_t seed = 3;
        for (int b = 0; b < 2000; b++) {
            struct su_rec recs[100];
            for (int i = 0; i < 100; i++) {
                snprintf(keys[i], sizeof(keys[i]), "key%05u", lcg(&seed) % 20000);
                for (int c = 0; c < 99; c++)
                    vals[i][c] = (char)('a' + (lcg(&seed) >> 4) % 16);
                vals[i][99] = 0;
                recs[i] = (struct su_rec){keys[i], vals[i], 1000 + b};
            }
            su_append_recs(log, recs, 100, codec, -1, -1);
        }
        plog_flush(log);
        plog_set_high_watermark(log, plog_end_offset(log));
        int64_t before = plog_size_bytes(log);
        int64_t t0 = time_mono_ns();
        struct clean_pass_stats st;
        ASSERT_EQ(cleaner_run_once(log, 5000, true, 64 << 20, &st), 1);
        double secs = (double)(time_mono_ns() - t0) / 1e9;
        printf("  %-6s cleaned %5.1f MB -> %4.1f MB in %.2f s: %6.1f MB/s, %5.0f k records/s\n",
               names[codec], (double)before / 1e6, (double)plog_size_bytes(log) / 1e6, secs,
               (double)st.bytes_read / 1e6 / secs, (double)st.records_read / 1e3 / secs);
        ASSERT_CMP(st.records_removed, >, 120000);
        plog_close(log);
    }
}

/* The offset after the last batch of the log, by reading it all. */
static int64_t read_end(struct plog *log)
{
    int64_t off = plog_start_offset(log), leo = plog_end_offset(log), end = off;
    while (off < leo) {
        struct plog_read_result r;
        ASSERT_EQ(plog_read(log, off, leo, 1 << 20, &r), 0);
        if (r.len == 0)
            break;
        end = r.next_offset;
        off = r.next_offset;
        fileref_put(r.file);
    }
    return end;
}

TEST(cleaner_never_drops_the_batch_that_ends_the_log)
{
    struct plog_config cfg = compact_config(1 << 20);
    cfg.delete_retention_ms = 1000;
    cfg.min_cleanable_dirty_ratio = 0;
    cfg.segment_ms = 0;
    struct plog *log = su_open(su_dir("p"), &cfg, false, NULL);
    static const struct su_rec live[] = {{"a", "1", 100}, {"b", "2", 101}, {"c", "3", 102}};
    static const struct su_rec tombs[] = {{"a", NULL, 103}, {"b", NULL, 104}};
    su_append_recs(log, live, 3, KCOMPRESSION_NONE, -1, -1);
    su_append_recs(log, tombs, 2, KCOMPRESSION_NONE, -1, -1); /* 3-4: the log ends here */
    ASSERT_EQ(plog_maybe_roll(log, 200), 0); /* segment.ms: the active segment is now empty */
    plog_flush(log);
    plog_set_high_watermark(log, plog_end_offset(log));
    ASSERT_EQ(plog_end_offset(log), 5);
    ASSERT_EQ(cleaner_run_once(log, 10000, false, 1 << 20, NULL), 1); /* horizon 11000 */
    double score;
    ASSERT(plog_clean_candidate(log, 11000, false, &score));
    struct clean_pass_stats st;
    ASSERT_EQ(cleaner_run_once(log, 11000, false, 1 << 20, &st), 1);
    /* the tombstones' batch ends the log: kept whole, so a reader's position reaches LEO */
    ASSERT_EQ(st.tombstones_removed, 0);
    ASSERT_EQ(read_end(log), 5);
    struct kbatch_header h[8];
    ASSERT_EQ(headers(log, h, 8), 2);
    ASSERT_EQ(h[1].records_count, 2);
    /* and no pass every backoff for it */
    ASSERT(!plog_clean_candidate(log, 12000, false, &score));
    /* once the log goes on, the expired tombstones go */
    static const struct su_rec more[] = {{"c", "4", 300}};
    su_append_recs(log, more, 1, KCOMPRESSION_NONE, -1, -1);
    ASSERT_EQ(plog_maybe_roll(log, 400), 0);
    plog_flush(log);
    plog_set_high_watermark(log, plog_end_offset(log));
    ASSERT_EQ(cleaner_run_once(log, 12000, false, 1 << 20, &st), 1);
    ASSERT_EQ(st.tombstones_removed, 2);
    ASSERT_EQ(read_end(log), 6);
    int n = headers(log, h, 8);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(h[0].base_offset, 5);
    plog_close(log);
}

TEST(cleaner_swap_leaves_readers_of_old_segments_their_bytes)
{
    struct plog_config cfg = compact_config(4096);
    struct model m;
    struct plog *log = make_log("p", &cfg, &m, 60);
    /* a fetch took a range of the first segment (a sendfile may still be reading it) */
    struct plog_read_result r;
    ASSERT_EQ(plog_read(log, 0, plog_end_offset(log), 1 << 20, &r), 0);
    ASSERT_CMP(r.len, >, 1000);
    uint8_t *before = su_read_bytes(&r);
    ASSERT_EQ(cleaner_run_once(log, 5000, true, 1 << 20, NULL), 1);
    /* the old file is gone from the directory, its bytes are not gone from the reader */
    struct stat st;
    ASSERT_EQ(fstat(r.file->fd, &st), 0);
    ASSERT_EQ(st.st_nlink, 0);
    uint8_t *after = su_read_bytes(&r);
    ASSERT_MEMEQ(before, after, r.len);
    int64_t first = -1, next = -1;
    ASSERT_CMP(su_count_batches(after, r.len, &first, &next), >, 1);
    ASSERT_EQ(first, 0);
    mem_free(before);
    mem_free(after);
    fileref_put(r.file);
    check_latest(log, &m, false);
    plog_close(log);
}
