#include "kafka/batch.h"

#include <string.h>

#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/mem.h"
#include "base/varint.h"
#include "kafka/compress.h"


void kbatch_peek(const uint8_t *p, int64_t *base_offset, int32_t *batch_length)
{
    *base_offset = (int64_t)be_get64(p);
    *batch_length = (int32_t)be_get32(p + 8);
}

void kbatch_parse_header(const uint8_t *p, struct kbatch_header *h)
{
    h->base_offset = (int64_t)be_get64(p + 0);
    h->batch_length = (int32_t)be_get32(p + 8);
    h->partition_leader_epoch = (int32_t)be_get32(p + 12);
    h->magic = (int8_t)p[16];
    h->crc = be_get32(p + 17);
    h->attributes = (int16_t)be_get16(p + 21);
    h->last_offset_delta = (int32_t)be_get32(p + 23);
    h->base_timestamp = (int64_t)be_get64(p + 27);
    h->max_timestamp = (int64_t)be_get64(p + 35);
    h->producer_id = (int64_t)be_get64(p + 43);
    h->producer_epoch = (int16_t)be_get16(p + 51);
    h->base_sequence = (int32_t)be_get32(p + 53);
    h->records_count = (int32_t)be_get32(p + 57);
}

bool kbatch_crc_ok(const uint8_t *p, size_t len)
{
    return crc32c(0, p + KBATCH_OFF_ATTRIBUTES, len - KBATCH_OFF_ATTRIBUTES) == be_get32(p + 17);
}

void kbatch_update_crc(uint8_t *p, size_t len)
{
    be_put32(p + KBATCH_OFF_CRC, crc32c(0, p + KBATCH_OFF_ATTRIBUTES, len - KBATCH_OFF_ATTRIBUTES));
}

void kbatch_set_base_offset(uint8_t *p, int64_t base_offset)
{
    be_put32(p, (uint32_t)((uint64_t)base_offset >> 32));
    be_put32(p + 4, (uint32_t)base_offset);
}

void kbatch_set_leader_epoch(uint8_t *p, int32_t epoch)
{
    be_put32(p + KBATCH_OFF_LEADER_EPOCH, (uint32_t)epoch);
}

void krecord_iter_init(struct krecord_iter *it, const uint8_t *records, size_t len, int32_t count)
{
    kr_init(&it->r, records, len);
    it->remaining = count;
}

int krecord_iter_next(struct krecord_iter *it, struct krecord *rec)
{
    struct kreader *r = &it->r;
    if (it->remaining == 0)
        return kr_left(r) == 0 && kr_ok(r) ? 0 : -ERR_CORRUPT;
    int32_t len = kr_varint(r);
    if (!kr_ok(r) || len < 0 || (size_t)len > kr_left(r))
        return -ERR_CORRUPT;
    struct kreader rr;
    kr_init(&rr, r->p, (size_t)len);
    r->p += len;
    rec->attributes = kr_i8(&rr);
    rec->timestamp_delta = kr_varlong(&rr);
    rec->offset_delta = kr_varint(&rr);
    int32_t klen = kr_varint(&rr);
    if (klen < -1 || (klen > 0 && (size_t)klen > kr_left(&rr)))
        return -ERR_CORRUPT;
    rec->key = (struct kbytes){klen >= 0 ? kr_raw(&rr, (size_t)klen) : NULL, klen};
    int32_t vlen = kr_varint(&rr);
    if (vlen < -1 || (vlen > 0 && (size_t)vlen > kr_left(&rr)))
        return -ERR_CORRUPT;
    rec->value = (struct kbytes){vlen >= 0 ? kr_raw(&rr, (size_t)vlen) : NULL, vlen};
    rec->header_count = kr_varint(&rr);
    if (!kr_ok(&rr) || rec->header_count < 0 || (size_t)rec->header_count > kr_left(&rr))
        return -ERR_CORRUPT;
    rec->headers = rr.p;
    rec->headers_end = rr.end;
    /* walk headers to check their framing: the record must end exactly after them */
    const uint8_t *hp = rr.p;
    struct krecord_header h;
    for (int32_t i = 0; i < rec->header_count; i++)
        if (krecord_next_header(&hp, rr.end, &h) != 1)
            return -ERR_CORRUPT;
    if (hp != rr.end)
        return -ERR_CORRUPT;
    it->remaining--;
    return 1;
}

int krecord_next_header(const uint8_t **p, const uint8_t *end, struct krecord_header *h)
{
    if (*p == end)
        return 0;
    struct kreader r;
    kr_init(&r, *p, (size_t)(end - *p));
    int32_t klen = kr_varint(&r);
    if (!kr_ok(&r) || klen < 0 || (size_t)klen > kr_left(&r))
        return -ERR_CORRUPT;
    h->key = (struct kstr){(const char *)kr_raw(&r, (size_t)klen), klen};
    int32_t vlen = kr_varint(&r);
    if (!kr_ok(&r) || vlen < -1 || (vlen > 0 && (size_t)vlen > kr_left(&r)))
        return -ERR_CORRUPT;
    h->value = (struct kbytes){vlen >= 0 ? kr_raw(&r, (size_t)vlen) : NULL, vlen};
    if (!kr_ok(&r))
        return -ERR_CORRUPT;
    *p = r.p;
    return 1;
}

static int check_records(const uint8_t *rec, size_t len, const struct kbatch_header *h)
{
    struct krecord_iter it;
    struct krecord r;
    krecord_iter_init(&it, rec, len, h->records_count);
    int32_t prev = -1;
    int rc;
    while ((rc = krecord_iter_next(&it, &r)) == 1) {
        if (r.offset_delta <= prev || r.offset_delta > h->last_offset_delta)
            return -ERR_INVALID;
        prev = r.offset_delta;
    }
    return rc;
}

int kbatch_validate(const uint8_t *p, size_t len, bool deep, bool strict_count,
                    size_t max_decompressed)
{
    if (len < KBATCH_HEADER_SIZE)
        return -ERR_CORRUPT;
    struct kbatch_header h;
    kbatch_parse_header(p, &h);
    if (h.batch_length < KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD ||
        kbatch_size(&h) != len)
        return -ERR_CORRUPT;
    if (h.magic != KBATCH_MAGIC)
        return -ERR_INVALID;
    if (!kbatch_crc_ok(p, len))
        return -ERR_CORRUPT;
    if (h.records_count < 0 || h.last_offset_delta < 0)
        return -ERR_INVALID;
    if (h.records_count > 0 && h.records_count - 1 > h.last_offset_delta)
        return -ERR_INVALID;
    if (strict_count && (int64_t)h.records_count != (int64_t)h.last_offset_delta + 1)
        return -ERR_INVALID;
    if (!deep)
        return 0;
    const uint8_t *rec = p + KBATCH_HEADER_SIZE;
    size_t rec_len = len - KBATCH_HEADER_SIZE;
    int codec = kbatch_compression(&h);
    if (codec == KCOMPRESSION_NONE)
        return check_records(rec, rec_len, &h);
    if (codec > KCOMPRESSION_ZSTD)
        return -ERR_UNSUPPORTED;
    uint8_t *out = NULL;
    size_t out_len = 0;
    int rc = kcompress_decompress(codec, rec, rec_len, max_decompressed, &out, &out_len);
    if (rc == 0)
        rc = check_records(out, out_len, &h);
    mem_free(out);
    return rc;
}

int kbatch_recompress(const uint8_t *p, size_t len, int codec, size_t max_decompressed,
                      uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (len < KBATCH_HEADER_SIZE)
        return -ERR_CORRUPT;
    if (codec < KCOMPRESSION_NONE || codec > KCOMPRESSION_ZSTD)
        return -ERR_UNSUPPORTED;
    struct kbatch_header h;
    kbatch_parse_header(p, &h);
    int from = kbatch_compression(&h);
    const uint8_t *rec = p + KBATCH_HEADER_SIZE;
    size_t rec_len = len - KBATCH_HEADER_SIZE;
    uint8_t *plain = NULL, *packed = NULL;
    size_t plain_len = rec_len, packed_len = 0;
    int rc = 0;
    if (from != KCOMPRESSION_NONE) {
        rc = kcompress_decompress(from, rec, rec_len, max_decompressed, &plain, &plain_len);
        if (rc != 0)
            return rc;
        rec = plain;
    }
    if (codec != KCOMPRESSION_NONE) {
        rc = kcompress_compress(codec, rec, plain_len, &packed, &packed_len);
        if (rc != 0) {
            mem_free(plain);
            return rc;
        }
        rec = packed;
        plain_len = packed_len;
    }
    size_t n = KBATCH_HEADER_SIZE + plain_len;
    if (n - KBATCH_LOG_OVERHEAD > INT32_MAX) {
        mem_free(plain);
        mem_free(packed);
        return -ERR_TOO_LARGE;
    }
    uint8_t *b = mem_alloc(n);
    memcpy(b, p, KBATCH_HEADER_SIZE);
    memcpy(b + KBATCH_HEADER_SIZE, rec, plain_len);
    mem_free(plain);
    mem_free(packed);
    be_put32(b + KBATCH_OFF_LENGTH, (uint32_t)(n - KBATCH_LOG_OVERHEAD));
    uint16_t attrs = (uint16_t)((b[KBATCH_OFF_ATTRIBUTES] << 8) | b[KBATCH_OFF_ATTRIBUTES + 1]);
    attrs = (uint16_t)((attrs & ~KBATCH_ATTR_COMPRESSION_MASK) | (unsigned)codec);
    b[KBATCH_OFF_ATTRIBUTES] = (uint8_t)(attrs >> 8);
    b[KBATCH_OFF_ATTRIBUTES + 1] = (uint8_t)attrs;
    kbatch_update_crc(b, n);
    *out = b;
    *out_len = n;
    return 0;
}

/* The first qualifying record of an uncompressed records section (kbatch_find_timestamp). */
static int find_in_records(const uint8_t *rec, size_t len, const struct kbatch_header *h,
                           int64_t ts, int64_t min_offset, int64_t *offset, int64_t *timestamp)
{
    bool append_time = (h->attributes & KBATCH_ATTR_LOG_APPEND_TIME) != 0;
    struct krecord_iter it;
    krecord_iter_init(&it, rec, len, h->records_count);
    struct krecord r;
    int rc;
    while ((rc = krecord_iter_next(&it, &r)) == 1) {
        if (r.offset_delta < 0 || r.offset_delta > h->last_offset_delta)
            return -ERR_CORRUPT;
        int64_t t = h->max_timestamp;
        if (!append_time && __builtin_add_overflow(h->base_timestamp, r.timestamp_delta, &t))
            return -ERR_CORRUPT;
        int64_t o = h->base_offset + r.offset_delta;
        if (t >= ts && o >= min_offset) {
            *offset = o;
            *timestamp = t;
            return 1;
        }
    }
    return rc;
}

int kbatch_find_timestamp(const uint8_t *p, size_t len, int64_t ts, int64_t min_offset,
                          size_t max_decompressed, int64_t *offset, int64_t *timestamp)
{
    int rc = kbatch_validate(p, len, false, false, 0);
    if (rc != 0)
        return rc == -ERR_UNSUPPORTED ? rc : -ERR_CORRUPT;
    struct kbatch_header h;
    kbatch_parse_header(p, &h);
    /* every record offset (base + delta <= base + lastOffsetDelta) must be representable */
    if (h.base_offset < 0 || h.base_offset > INT64_MAX - 1 - h.last_offset_delta)
        return -ERR_CORRUPT;
    if (kbatch_is_control(&h) || h.records_count == 0)
        return 0;
    const uint8_t *rec = p + KBATCH_HEADER_SIZE;
    size_t rec_len = len - KBATCH_HEADER_SIZE;
    int codec = kbatch_compression(&h);
    if (codec == KCOMPRESSION_NONE)
        return find_in_records(rec, rec_len, &h, ts, min_offset, offset, timestamp);
    if (codec > KCOMPRESSION_ZSTD)
        return -ERR_UNSUPPORTED;
    uint8_t *out = NULL;
    size_t out_len = 0;
    rc = kcompress_decompress(codec, rec, rec_len, max_decompressed, &out, &out_len);
    if (rc == 0)
        rc = find_in_records(out, out_len, &h, ts, min_offset, offset, timestamp);
    else if (rc != -ERR_TOO_LARGE && rc != -ERR_UNSUPPORTED)
        rc = -ERR_CORRUPT;
    mem_free(out);
    return rc;
}

void krecord_encode(struct kwriter *w, int64_t timestamp_delta, int32_t offset_delta,
                    struct kbytes key, struct kbytes value, const struct krecord_header *headers,
                    int32_t n_headers)
{
    size_t body = 1 + varint64_size(timestamp_delta) + varint32_size(offset_delta) +
                  varint32_size(key.len) + (key.len > 0 ? (size_t)key.len : 0) +
                  varint32_size(value.len) + (value.len > 0 ? (size_t)value.len : 0) +
                  varint32_size(n_headers);
    for (int32_t i = 0; i < n_headers; i++)
        body += varint32_size(headers[i].key.len) + (size_t)headers[i].key.len +
                varint32_size(headers[i].value.len) +
                (headers[i].value.len > 0 ? (size_t)headers[i].value.len : 0);
    uint8_t tmp[VARINT64_MAX_BYTES];
    kw_raw(w, tmp, varint32_put(tmp, (int32_t)body));
    kw_i8(w, 0);
    kw_raw(w, tmp, varint64_put(tmp, timestamp_delta));
    kw_raw(w, tmp, varint32_put(tmp, offset_delta));
    kw_raw(w, tmp, varint32_put(tmp, key.len));
    if (key.len > 0)
        kw_raw(w, key.p, (size_t)key.len);
    kw_raw(w, tmp, varint32_put(tmp, value.len));
    if (value.len > 0)
        kw_raw(w, value.p, (size_t)value.len);
    kw_raw(w, tmp, varint32_put(tmp, n_headers));
    for (int32_t i = 0; i < n_headers; i++) {
        kw_raw(w, tmp, varint32_put(tmp, headers[i].key.len));
        kw_raw(w, headers[i].key.p, (size_t)headers[i].key.len);
        kw_raw(w, tmp, varint32_put(tmp, headers[i].value.len));
        if (headers[i].value.len > 0)
            kw_raw(w, headers[i].value.p, (size_t)headers[i].value.len);
    }
}

void kbatch_build(struct iobuf *out, int64_t base_timestamp, const struct kbytes *keys,
                  const struct kbytes *values, int32_t count)
{
    struct kwriter w = {out};
    size_t start = kw_pos(&w);
    kw_i64(&w, 0);                           /* baseOffset */
    kw_i32(&w, 0);                           /* batchLength, patched */
    kw_i32(&w, -1);                          /* partitionLeaderEpoch */
    kw_i8(&w, KBATCH_MAGIC);
    kw_u32(&w, 0);                           /* crc, patched */
    kw_i16(&w, 0);                           /* attributes */
    kw_i32(&w, count > 0 ? count - 1 : 0);   /* lastOffsetDelta */
    kw_i64(&w, base_timestamp);
    kw_i64(&w, base_timestamp);              /* maxTimestamp: all records share it */
    kw_i64(&w, -1);                          /* producerId */
    kw_i16(&w, -1);                          /* producerEpoch */
    kw_i32(&w, -1);                          /* baseSequence */
    kw_i32(&w, count);
    for (int32_t i = 0; i < count; i++)
        krecord_encode(&w, 0, i, keys ? keys[i] : (struct kbytes){NULL, -1}, values[i], NULL, 0);
    size_t len = kw_pos(&w) - start;
    kw_patch_i32(&w, start + KBATCH_OFF_LENGTH, (int32_t)(len - KBATCH_LOG_OVERHEAD));
    size_t flen;
    uint8_t *flat = iobuf_flatten(out, &flen);
    uint8_t *b = flat + (flen - len);
    uint32_t crc = crc32c(0, b + KBATCH_OFF_ATTRIBUTES, len - KBATCH_OFF_ATTRIBUTES);
    mem_free(flat);
    uint8_t c[4] = {(uint8_t)(crc >> 24), (uint8_t)(crc >> 16), (uint8_t)(crc >> 8), (uint8_t)crc};
    iobuf_patch(out, start + KBATCH_OFF_CRC, c, 4);
}

void kbatch_build_empty_control(uint8_t *p)
{
    memset(p, 0, KBATCH_HEADER_SIZE);
    be_put32(p + KBATCH_OFF_LENGTH, KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD);
    be_put32(p + KBATCH_OFF_LEADER_EPOCH, UINT32_MAX); /* -1 */
    p[KBATCH_OFF_MAGIC] = KBATCH_MAGIC;
    p[KBATCH_OFF_ATTRIBUTES + 1] = KBATCH_ATTR_CONTROL;
    memset(p + 27, 0xff, 8 + 8 + 8 + 2 + 4); /* timestamps, producerId/Epoch, baseSequence: -1 */
    kbatch_update_crc(p, KBATCH_HEADER_SIZE);
}
