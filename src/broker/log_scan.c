/* Reading a partition's own log back, record by record: how the broker's internal topics
 * (__consumer_offsets for the group coordinator, _schemas for the schema registry) rebuild
 * their state from what is committed. Bytes from disk are checked, never trusted: a batch that
 * does not validate or decompress is skipped and counted. Stateless. */
#include <errno.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/mem.h"
#include "broker/internal.h"
#include "kafka/batch.h"
#include "kafka/compress.h"
#include "storage/plog.h"

#define SCAN_READ_BYTES (1u << 20)
#define SCAN_DECOMPRESSED_MAX (64u << 20)

static void scan_batch(const uint8_t *batch, size_t len, log_record_fn fn, void *arg,
                       struct log_scan_stats *st)
{
    struct kbatch_header h;
    kbatch_parse_header(batch, &h);
    st->batches++;
    if (kbatch_is_control(&h) || h.records_count <= 0)
        return;
    if (kbatch_validate(batch, len, false, false, 0) != 0) {
        st->skipped++;
        return;
    }
    const uint8_t *recs = batch + KBATCH_HEADER_SIZE;
    size_t recs_len = len - KBATCH_HEADER_SIZE;
    uint8_t *plain = NULL;
    if (kbatch_compression(&h) != KCOMPRESSION_NONE) {
        size_t out_len;
        if (kcompress_decompress(kbatch_compression(&h), recs, recs_len, SCAN_DECOMPRESSED_MAX,
                                 &plain, &out_len) != 0) {
            st->skipped++;
            return;
        }
        recs = plain;
        recs_len = out_len;
    }
    struct krecord_iter it;
    krecord_iter_init(&it, recs, recs_len, h.records_count);
    struct krecord rec;
    int rc;
    while ((rc = krecord_iter_next(&it, &rec)) == 1)
        fn(arg, &rec, h.base_offset + rec.offset_delta);
    if (rc < 0)
        st->skipped++;
    mem_free(plain);
}

int partition_read_batches(struct partition *part, int64_t offset, int64_t to, size_t max_bytes,
                           struct log_read_buf *out)
{
    struct plog *log = part->log;
    if (offset < plog_start_offset(log))
        offset = plog_start_offset(log);
    out->len = 0;
    out->next = offset;
    if (offset >= to)
        return 0;
    struct plog_read_result res;
    int rc = plog_read(log, offset, to, max_bytes, &res);
    if (rc != 0 || res.len == 0)
        return rc;
    if (res.len > out->cap) {
        out->cap = res.len;
        out->p = mem_realloc(out->p, out->cap);
    }
    ssize_t n = pread(res.file->fd, out->p, res.len, res.pos);
    fileref_put(res.file);
    if (n < 0 || (size_t)n != res.len)
        return n < 0 ? -errno : -ERR_SHORT;
    out->len = res.len;
    out->next = res.next_offset > offset ? res.next_offset : offset;
    return 0;
}

void log_scan_buffer(const uint8_t *buf, size_t len, log_record_fn fn, void *arg,
                     struct log_scan_stats *st)
{
    size_t pos = 0;
    while (pos + KBATCH_HEADER_SIZE <= len) {
        int64_t base;
        int32_t blen;
        kbatch_peek(buf + pos, &base, &blen);
        if (blen < KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD ||
            pos + (size_t)blen + KBATCH_LOG_OVERHEAD > len)
            break;
        size_t sz = (size_t)blen + KBATCH_LOG_OVERHEAD;
        scan_batch(buf + pos, sz, fn, arg, st);
        pos += sz;
    }
}

int partition_scan(struct partition *part, int64_t from, int64_t to, log_record_fn fn, void *arg,
                   struct log_scan_stats *st)
{
    int64_t offset = from < plog_start_offset(part->log) ? plog_start_offset(part->log) : from;
    st->next = offset;
    struct log_read_buf buf = {0};
    int rc = 0;
    while (offset < to) {
        rc = partition_read_batches(part, offset, to, SCAN_READ_BYTES, &buf);
        if (rc != 0 || buf.len == 0)
            break;
        log_scan_buffer(buf.p, buf.len, fn, arg, st);
        if (buf.next <= offset)
            break; /* no progress: never loop */
        offset = buf.next;
        st->next = offset;
    }
    mem_free(buf.p);
    return rc;
}
