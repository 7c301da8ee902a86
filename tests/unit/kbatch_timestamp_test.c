/* ListOffsets by time inside a batch: kbatch_find_timestamp on plain and compressed batches, and
 * plog_offset_for_timestamp / plog_offset_for_max_timestamp, which use it on the batch the time
 * index finds. Records within one batch need not be in timestamp order (librdkafka stamps each
 * with the time the application gave), so the answer is the first record, by offset, whose
 * timestamp reaches the target: Kafka's answer, not the batch's first offset. */
#include "base/check.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/batch.h"
#include "kafka/compress.h"
#include "storage/plog.h"
#include "storage_util.h"
#include "test.h"

#include <string.h>

static const int all_codecs[] = {KCOMPRESSION_NONE, KCOMPRESSION_GZIP, KCOMPRESSION_SNAPPY,
                                 KCOMPRESSION_LZ4, KCOMPRESSION_ZSTD};

/* The two records librdkafka's test produces in one batch, and a third out of order. */
static const struct su_rec three[] = {
    {"a", "one", 1234}, {"b", "two", 999999999999LL}, {"c", "three", 5000}};

static uint8_t *batch_at(int codec, int64_t base, size_t *len)
{
    uint8_t *b = su_kbatch(three, 3, codec, -1, -1, -1, len);
    kbatch_set_base_offset(b, base); /* outside the CRC */
    return b;
}

TEST(kbatch_find_timestamp_looks_at_each_record_in_every_codec)
{
    for (size_t c = 0; c < ARRAY_LEN(all_codecs); c++) {
        size_t len;
        uint8_t *b = batch_at(all_codecs[c], 100, &len);
        int64_t off = -7, ts = -7;
        ASSERT_EQ(kbatch_find_timestamp(b, len, 999999999999LL, 0, 1 << 20, &off, &ts), 1);
        ASSERT_EQ(off, 101);
        ASSERT_EQ(ts, 999999999999LL);
        /* 2000: the second record already reaches it (the third, 5000, comes later) */
        ASSERT_EQ(kbatch_find_timestamp(b, len, 2000, 0, 1 << 20, &off, &ts), 1);
        ASSERT_EQ(off, 101);
        ASSERT_EQ(ts, 999999999999LL);
        ASSERT_EQ(kbatch_find_timestamp(b, len, 0, 0, 1 << 20, &off, &ts), 1);
        ASSERT_EQ(off, 100);
        ASSERT_EQ(ts, 1234);
        /* records below min_offset do not count */
        ASSERT_EQ(kbatch_find_timestamp(b, len, 0, 102, 1 << 20, &off, &ts), 1);
        ASSERT_EQ(off, 102);
        ASSERT_EQ(ts, 5000);
        ASSERT_EQ(kbatch_find_timestamp(b, len, 999999999999LL, 102, 1 << 20, &off, &ts), 0);
        ASSERT_EQ(kbatch_find_timestamp(b, len, 999999999999LL + 1, 0, 1 << 20, &off, &ts), 0);
        mem_free(b);
    }
}

TEST(kbatch_find_timestamp_log_append_time_and_control_batches)
{
    size_t len;
    uint8_t *b = batch_at(KCOMPRESSION_NONE, 0, &len);
    /* LogAppendTime: every record carries the batch's maxTimestamp */
    b[KBATCH_OFF_ATTRIBUTES + 1] |= KBATCH_ATTR_LOG_APPEND_TIME;
    kbatch_update_crc(b, len);
    int64_t off, ts;
    ASSERT_EQ(kbatch_find_timestamp(b, len, 1, 0, 1 << 20, &off, &ts), 1);
    ASSERT_EQ(off, 0);
    ASSERT_EQ(ts, 999999999999LL);
    /* control batches hold no record a consumer sees */
    b[KBATCH_OFF_ATTRIBUTES + 1] = KBATCH_ATTR_CONTROL;
    kbatch_update_crc(b, len);
    ASSERT_EQ(kbatch_find_timestamp(b, len, 0, 0, 1 << 20, &off, &ts), 0);
    uint8_t empty[KBATCH_HEADER_SIZE];
    kbatch_build_empty_control(empty);
    ASSERT_EQ(kbatch_find_timestamp(empty, sizeof(empty), -1, 0, 1 << 20, &off, &ts), 0);
    mem_free(b);
}

TEST(kbatch_find_timestamp_refuses_bad_batches)
{
    int64_t off, ts;
    for (size_t c = 0; c < ARRAY_LEN(all_codecs); c++) {
        size_t len;
        uint8_t *b = batch_at(all_codecs[c], 0, &len);
        /* every truncation: the batch length no longer matches */
        for (size_t n = 0; n < len; n++)
            ASSERT_EQ(kbatch_find_timestamp(b, n, 0, 0, 1 << 20, &off, &ts), -ERR_CORRUPT);
        /* a flipped byte in the records: the CRC */
        b[len - 1] ^= 0x40;
        ASSERT_EQ(kbatch_find_timestamp(b, len, 0, 0, 1 << 20, &off, &ts), -ERR_CORRUPT);
        mem_free(b);
    }
    /* decompression beyond the cap */
    size_t len;
    uint8_t *b = batch_at(KCOMPRESSION_ZSTD, 0, &len);
    ASSERT_EQ(kbatch_find_timestamp(b, len, 0, 0, 8, &off, &ts), -ERR_TOO_LARGE);
    mem_free(b);
    /* a record whose timestamp delta overflows baseTimestamp: corrupt, not undefined */
    struct iobuf rb;
    iobuf_init(&rb);
    struct kwriter w = {&rb};
    krecord_encode(&w, INT64_MAX, 0, (struct kbytes){NULL, -1}, (struct kbytes){NULL, -1}, NULL, 0);
    size_t rlen;
    uint8_t *rec = iobuf_flatten(&rb, &rlen);
    iobuf_destroy(&rb);
    len = KBATCH_HEADER_SIZE + rlen;
    b = mem_calloc(1, len);
    uint8_t hdr[KBATCH_HEADER_SIZE];
    kbatch_build_empty_control(hdr);
    memcpy(b, hdr, KBATCH_HEADER_SIZE);
    memcpy(b + KBATCH_HEADER_SIZE, rec, rlen);
    b[KBATCH_OFF_ATTRIBUTES + 1] = 0; /* a data batch */
    for (int i = 0; i < 8; i++)
        b[27 + i] = (uint8_t)((uint64_t)1000 >> (56 - 8 * i)); /* baseTimestamp 1000 */
    b[KBATCH_OFF_RECORDS_COUNT + 3] = 1;
    int32_t blen = (int32_t)(len - KBATCH_LOG_OVERHEAD);
    for (int i = 0; i < 4; i++)
        b[KBATCH_OFF_LENGTH + i] = (uint8_t)((uint32_t)blen >> (24 - 8 * i));
    kbatch_update_crc(b, len);
    ASSERT_EQ(kbatch_validate(b, len, true, true, 1 << 20), 0);
    ASSERT_EQ(kbatch_find_timestamp(b, len, 0, 0, 1 << 20, &off, &ts), -ERR_CORRUPT);
    mem_free(rec);
    mem_free(b);
}

TEST(plog_offset_for_timestamp_answers_the_record_not_its_batch)
{
    for (size_t c = 0; c < ARRAY_LEN(all_codecs); c++) {
        struct plog_config cfg = su_config();
        char name[16];
        snprintf(name, sizeof(name), "t%zu", c);
        struct plog *log = su_open(su_dir(name), &cfg, false, NULL);
        /* offsets 0-1: librdkafka's pair; 2-4: the three above; 5: one record at 10000 */
        ASSERT_EQ(su_append_recs(log, three, 2, all_codecs[c], -1, -1), 0);
        ASSERT_EQ(su_append_recs(log, three, 3, all_codecs[c], -1, -1), 2);
        struct su_rec late[] = {{"d", "four", 10000}};
        ASSERT_EQ(su_append_recs(log, late, 1, all_codecs[c], -1, -1), 5);
        plog_set_high_watermark(log, 6);
        int64_t off, ts;
        ASSERT_EQ(plog_offset_for_timestamp(log, 999999999999LL, &off, &ts), 0);
        ASSERT_EQ(off, 1);
        ASSERT_EQ(ts, 999999999999LL);
        ASSERT_EQ(plog_offset_for_timestamp(log, 1235, &off, &ts), 0);
        ASSERT_EQ(off, 1);
        ASSERT_EQ(plog_offset_for_timestamp(log, 1234, &off, &ts), 0);
        ASSERT_EQ(off, 0);
        ASSERT_EQ(ts, 1234);
        /* the latest record with the largest timestamp: offset 1 (offset 3 has it too) */
        ASSERT_EQ(plog_offset_for_max_timestamp(log, &off, &ts), 0);
        ASSERT_EQ(off, 1);
        ASSERT_EQ(ts, 999999999999LL);
        /* below the log start, records do not count: offset 3 is the first at that time left */
        ASSERT_EQ(plog_truncate_prefix(log, 2), 0);
        ASSERT_EQ(plog_offset_for_timestamp(log, 999999999999LL, &off, &ts), 0);
        ASSERT_EQ(off, 3);
        ASSERT_EQ(plog_truncate_prefix(log, 4), 0);
        /* only offsets 4 (5000) and 5 (10000) are left: the batch holding 4 reaches
         * 999999999999 only through offset 3, so the answer lies past it (none) */
        ASSERT_EQ(plog_offset_for_timestamp(log, 999999999999LL, &off, &ts), 0);
        ASSERT_EQ(off, -1);
        ASSERT_EQ(plog_offset_for_timestamp(log, 6000, &off, &ts), 0);
        ASSERT_EQ(off, 5);
        ASSERT_EQ(ts, 10000);
        ASSERT_EQ(plog_offset_for_timestamp(log, 4000, &off, &ts), 0);
        ASSERT_EQ(off, 4);
        ASSERT_EQ(ts, 5000);
        plog_close(log);
    }
}
