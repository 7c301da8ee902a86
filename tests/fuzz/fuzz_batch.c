/* libFuzzer target: record batch validation (deep, with decompression) and record iteration.
 *
 * Input: one mode byte, then the batch. Mode bit 0 rewrites batchLength and the CRC to match
 * the input, so the fuzzer gets past them to the records and codecs; bit 1 selects
 * strict_count. A batch that validates must then iterate to exactly recordsCount records with
 * well-formed headers: validation and iteration disagreeing is a bug (abort). Every input also
 * goes through kbatch_find_timestamp (ListOffsets by time): a batch that validates and has
 * records (not control) must give its first record for the earliest possible time, or
 * -ERR_CORRUPT when a record's timestamp overflows. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "kafka/batch.h"
#include "kafka/compress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DECOMPRESSED (1 << 20)

static void iterate(const uint8_t *rec, size_t len, const struct kbatch_header *h)
{
    struct krecord_iter it;
    struct krecord r;
    krecord_iter_init(&it, rec, len, h->records_count);
    int32_t n = 0;
    int rc;
    while ((rc = krecord_iter_next(&it, &r)) == 1) {
        const uint8_t *hp = r.headers;
        struct krecord_header hdr;
        int32_t nh = 0;
        int hrc;
        while ((hrc = krecord_next_header(&hp, r.headers_end, &hdr)) == 1)
            nh++;
        if (hrc != 0 || nh != r.header_count)
            abort();
        if (r.key.len > 0 && (r.key.p < rec || r.key.p + r.key.len > rec + len))
            abort();
        if (r.value.len > 0 && (r.value.p < rec || r.value.p + r.value.len > rec + len))
            abort();
        n++;
    }
    if (rc != 0 || n != h->records_count)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    size_t len = size - 1;
    uint8_t *buf = mem_dup(data + 1, len);
    if ((mode & 1) && len >= KBATCH_HEADER_SIZE) {
        uint32_t bl = (uint32_t)(len - KBATCH_LOG_OVERHEAD);
        buf[8] = (uint8_t)(bl >> 24);
        buf[9] = (uint8_t)(bl >> 16);
        buf[10] = (uint8_t)(bl >> 8);
        buf[11] = (uint8_t)bl;
        kbatch_update_crc(buf, len);
    }
    int64_t off, ts;
    int found = kbatch_find_timestamp(buf, len, INT64_MIN, 0, MAX_DECOMPRESSED, &off, &ts);
    (void)kbatch_find_timestamp(buf, len, len >= 43 ? (int64_t)len * 977 : 0, (int64_t)mode,
                                MAX_DECOMPRESSED, &off, &ts);
    if (kbatch_validate(buf, len, true, (mode & 2) != 0, MAX_DECOMPRESSED) == 0) {
        struct kbatch_header h;
        kbatch_parse_header(buf, &h);
        if (!kbatch_is_control(&h) && h.records_count > 0 && h.base_offset >= 0 &&
            h.base_offset <= INT64_MAX - 1 - h.last_offset_delta && found != 1 &&
            found != -ERR_CORRUPT)
            abort(); /* a valid data batch has a first record */
        const uint8_t *rec = buf + KBATCH_HEADER_SIZE;
        size_t rec_len = len - KBATCH_HEADER_SIZE;
        int codec = kbatch_compression(&h);
        if (codec == KCOMPRESSION_NONE) {
            iterate(rec, rec_len, &h);
        } else {
            uint8_t *out;
            size_t out_len;
            if (kcompress_decompress(codec, rec, rec_len, MAX_DECOMPRESSED, &out, &out_len) != 0)
                abort(); /* validated, yet does not decompress */
            iterate(out, out_len, &h);
            mem_free(out);
        }
    }
    mem_free(buf);
    return 0;
}
