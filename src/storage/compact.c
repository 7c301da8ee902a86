/* Record-batch compaction (storage/compact.h).
 *
 * A batch is examined record by record; the kept records of a rewritten batch are copied byte
 * for byte when the batch's baseTimestamp stays, and re-encoded with new timestamp deltas when
 * it changes (the delete horizon takes its place, or goes away). Offsets never change: the
 * baseOffset is kept, so offsetDeltas stay valid. */
#include "storage/compact.h"

#include <string.h>

#include "base/check.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/mem.h"
#include "base/varint.h"
#include "kafka/compress.h"
#include "storage/keymap.h"

/* ---- small helpers ---- */


struct bbuf {
    uint8_t *p;
    size_t len;
    size_t cap;
};

static uint8_t *bbuf_reserve(struct bbuf *b, size_t n)
{
    MEM_GROW(b->p, b->cap, b->len + n);
    return b->p + b->len;
}

static void bbuf_put(struct bbuf *b, const void *p, size_t n)
{
    if (n == 0)
        return;
    memcpy(bbuf_reserve(b, n), p, n);
    b->len += n;
}

/* ---- decoding ---- */

int cbatch_decode(struct cbatch *cb, const uint8_t *p, size_t len, size_t max_decompressed)
{
    memset(cb, 0, sizeof(*cb));
    int rc = kbatch_validate(p, len, false, false, 0);
    if (rc != 0)
        return rc == -ERR_UNSUPPORTED ? rc : -ERR_CORRUPT;
    kbatch_parse_header(p, &cb->h);
    /* every record offset (base + delta <= base + lastOffsetDelta) must be representable */
    if (cb->h.base_offset < 0 || cb->h.base_offset > INT64_MAX - 1 - cb->h.last_offset_delta)
        return -ERR_CORRUPT;
    int codec = kbatch_compression(&cb->h);
    if (codec > KCOMPRESSION_ZSTD)
        return -ERR_UNSUPPORTED;
    cb->recs = p + KBATCH_HEADER_SIZE;
    cb->recs_len = len - KBATCH_HEADER_SIZE;
    if (codec == KCOMPRESSION_NONE || cb->h.records_count == 0)
        return 0;
    size_t out_len = 0;
    rc = kcompress_decompress(codec, cb->recs, cb->recs_len, max_decompressed, &cb->plain,
                              &out_len);
    if (rc != 0)
        return rc == -ERR_TOO_LARGE || rc == -ERR_UNSUPPORTED ? rc : -ERR_CORRUPT;
    cb->recs = cb->plain;
    cb->recs_len = out_len;
    return 0;
}

void cbatch_free(struct cbatch *cb)
{
    mem_free(cb->plain);
    cb->plain = NULL;
}

typedef int (*record_fn)(void *arg, const struct krecord *rec, const uint8_t *raw, size_t raw_len);

/* Walks every record, checking framing and offset deltas; fn sees each with its raw bytes. */
static int each_record(const struct cbatch *cb, record_fn fn, void *arg)
{
    if (cb->h.records_count == 0)
        return cb->recs_len == 0 || kbatch_compression(&cb->h) != KCOMPRESSION_NONE
                   ? 0
                   : -ERR_CORRUPT;
    struct krecord_iter it;
    krecord_iter_init(&it, cb->recs, cb->recs_len, cb->h.records_count);
    int32_t prev = -1;
    for (;;) {
        const uint8_t *start = it.r.p;
        struct krecord rec;
        int rc = krecord_iter_next(&it, &rec);
        if (rc == 0)
            return 0;
        if (rc < 0)
            return -ERR_CORRUPT;
        if (rec.offset_delta <= prev || rec.offset_delta > cb->h.last_offset_delta)
            return -ERR_CORRUPT;
        prev = rec.offset_delta;
        rc = fn(arg, &rec, start, (size_t)(it.r.p - start));
        if (rc != 0)
            return rc;
    }
}

struct each_key_arg {
    int64_t base;
    int (*fn)(void *arg, int64_t offset, const uint8_t *key, size_t len);
    void *arg;
};

static int each_key_cb(void *arg, const struct krecord *rec, const uint8_t *raw, size_t raw_len)
{
    struct each_key_arg *a = arg;
    if (rec->key.len < 0)
        return 0;
    return a->fn(a->arg, a->base + rec->offset_delta, rec->key.p, (size_t)rec->key.len);
}

int cbatch_each_key(const struct cbatch *cb,
                    int (*fn)(void *arg, int64_t offset, const uint8_t *key, size_t len),
                    void *arg)
{
    struct each_key_arg a = {cb->h.base_offset, fn, arg};
    return each_record(cb, each_key_cb, &a);
}

/* ---- compaction ---- */

/* One kept record: where its bytes are and what its absolute timestamp is. */
struct kept {
    const uint8_t *raw;
    size_t raw_len;
    int64_t ts;
    struct krecord rec;
};

struct scan {
    const struct compact_ctx *c;
    int64_t base;       /* baseOffset */
    int64_t base_ts;    /* baseTimestamp */
    bool has_horizon;   /* attribute 0x40 */
    struct kept *kept;
    size_t n_kept;
    size_t cap_kept;
    int32_t records_in;
    int32_t tombs_kept;
    int32_t tombs_dropped;
    int64_t min_ts;     /* of kept records */
    int64_t max_ts;
};

static int scan_cb(void *arg, const struct krecord *rec, const uint8_t *raw, size_t raw_len)
{
    struct scan *s = arg;
    const struct compact_ctx *c = s->c;
    s->records_in++;
    int64_t ts;
    if (__builtin_add_overflow(s->base_ts, rec->timestamp_delta, &ts))
        return -ERR_CORRUPT;
    int64_t offset = s->base + rec->offset_delta;
    if (rec->key.len >= 0) {
        int64_t latest = c->map ? keymap_get(c->map, rec->key.p, (size_t)rec->key.len) : -1;
        if (latest > offset)
            return 0; /* superseded */
        if (rec->value.len < 0) {
            /* a horizon of INT64_MAX (retention too long to add) never passes */
            if (s->has_horizon && s->base_ts != INT64_MAX && c->now_ms >= s->base_ts) {
                s->tombs_dropped++;
                return 0;
            }
            s->tombs_kept++;
        }
    }
    MEM_GROW(s->kept, s->cap_kept, s->n_kept + 1);
    s->kept[s->n_kept++] = (struct kept){raw, raw_len, ts, *rec};
    s->min_ts = s->n_kept == 1 ? ts : MIN(s->min_ts, ts);
    s->max_ts = s->n_kept == 1 ? ts : MAX(s->max_ts, ts);
    return 0;
}

/* Appends rec re-encoded with a new timestamp delta. */
static void encode_record(struct bbuf *b, const struct krecord *rec, int64_t ts_delta)
{
    size_t hdr_len = (size_t)(rec->headers_end - rec->headers);
    size_t body = 1 + varint64_size(ts_delta) + varint32_size(rec->offset_delta) +
                  varint32_size(rec->key.len) + (rec->key.len > 0 ? (size_t)rec->key.len : 0) +
                  varint32_size(rec->value.len) +
                  (rec->value.len > 0 ? (size_t)rec->value.len : 0) +
                  varint32_size(rec->header_count) + hdr_len;
    uint8_t *p = bbuf_reserve(b, body + VARINT32_MAX_BYTES);
    uint8_t *q = p;
    q += varint32_put(q, (int32_t)body);
    *q++ = (uint8_t)rec->attributes;
    q += varint64_put(q, ts_delta);
    q += varint32_put(q, rec->offset_delta);
    q += varint32_put(q, rec->key.len);
    if (rec->key.len > 0) {
        memcpy(q, rec->key.p, (size_t)rec->key.len);
        q += rec->key.len;
    }
    q += varint32_put(q, rec->value.len);
    if (rec->value.len > 0) {
        memcpy(q, rec->value.p, (size_t)rec->value.len);
        q += rec->value.len;
    }
    q += varint32_put(q, rec->header_count);
    if (hdr_len > 0) {
        memcpy(q, rec->headers, hdr_len);
        q += hdr_len;
    }
    b->len += (size_t)(q - p);
}

void compact_empty_header(const uint8_t *p, uint8_t out[KBATCH_HEADER_SIZE])
{
    struct kbatch_header h;
    kbatch_parse_header(p, &h);
    memcpy(out, p, KBATCH_HEADER_SIZE);
    be_put32(out + KBATCH_OFF_LENGTH, KBATCH_HEADER_SIZE - KBATCH_LOG_OVERHEAD);
    uint16_t attrs = (uint16_t)h.attributes &
                     (uint16_t) ~(KBATCH_ATTR_COMPRESSION_MASK | KBATCH_ATTR_DELETE_HORIZON);
    be_put16(out + KBATCH_OFF_ATTRIBUTES, attrs);
    be_put64(out + 27, (uint64_t)h.max_timestamp); /* baseTimestamp */
    be_put64(out + KBATCH_OFF_MAX_TIMESTAMP, (uint64_t)h.max_timestamp);
    be_put32(out + 57, 0); /* recordsCount */
    kbatch_update_crc(out, KBATCH_HEADER_SIZE);
}

/* Builds the replacement batch from the kept records. */
static int rewrite(const struct scan *s, const uint8_t *p, const struct kbatch_header *h,
                   struct compact_result *r)
{
    const struct compact_ctx *c = s->c;
    uint16_t attrs = (uint16_t)h->attributes;
    int64_t new_base_ts;
    if (s->tombs_kept > 0 && !s->has_horizon) {
        /* the first clean that keeps a tombstone starts its clock (saturated: never expires) */
        if (__builtin_add_overflow(c->now_ms, c->delete_retention_ms, &new_base_ts))
            new_base_ts = INT64_MAX;
        attrs |= KBATCH_ATTR_DELETE_HORIZON;
    } else if (s->tombs_kept > 0) {
        new_base_ts = s->base_ts;
    } else {
        attrs &= (uint16_t)~KBATCH_ATTR_DELETE_HORIZON;
        new_base_ts = s->has_horizon ? s->min_ts : s->base_ts;
    }
    struct bbuf recs = {0};
    for (size_t i = 0; i < s->n_kept; i++) {
        const struct kept *k = &s->kept[i];
        int64_t delta;
        if (new_base_ts == s->base_ts) {
            bbuf_put(&recs, k->raw, k->raw_len);
        } else if (__builtin_sub_overflow(k->ts, new_base_ts, &delta)) {
            mem_free(recs.p);
            return -ERR_CORRUPT;
        } else {
            encode_record(&recs, &k->rec, delta);
        }
    }
    int codec = kbatch_compression(h);
    uint8_t *section = recs.p;
    size_t section_len = recs.len;
    uint8_t *z = NULL;
    if (codec != KCOMPRESSION_NONE) {
        int rc = kcompress_compress(codec, recs.p, recs.len, &z, &section_len);
        if (rc != 0) {
            mem_free(recs.p);
            return rc;
        }
        section = z;
    }
    size_t total = KBATCH_HEADER_SIZE + section_len;
    if (total - KBATCH_LOG_OVERHEAD > (size_t)INT32_MAX) {
        mem_free(recs.p);
        mem_free(z);
        return -ERR_TOO_LARGE;
    }
    uint8_t *out = mem_alloc(total);
    memcpy(out, p, KBATCH_HEADER_SIZE);
    be_put32(out + KBATCH_OFF_LENGTH, (uint32_t)(total - KBATCH_LOG_OVERHEAD));
    be_put16(out + KBATCH_OFF_ATTRIBUTES, attrs);
    be_put64(out + 27, (uint64_t)new_base_ts);
    int64_t max_ts = (attrs & KBATCH_ATTR_LOG_APPEND_TIME) ? h->max_timestamp : s->max_ts;
    be_put64(out + KBATCH_OFF_MAX_TIMESTAMP, (uint64_t)max_ts);
    be_put32(out + 57, (uint32_t)s->n_kept);
    memcpy(out + KBATCH_HEADER_SIZE, section, section_len);
    kbatch_update_crc(out, total);
    mem_free(recs.p);
    mem_free(z);
    r->kind = COMPACT_REWRITTEN;
    r->out = out;
    r->out_len = total;
    r->horizon_ms =
        (attrs & KBATCH_ATTR_DELETE_HORIZON) && new_base_ts != INT64_MAX ? new_base_ts : -1;
    return 0;
}

int compact_batch(const struct compact_ctx *c, const uint8_t *p, size_t len, bool keep_header,
                  struct compact_result *r)
{
    memset(r, 0, sizeof(*r));
    r->horizon_ms = -1;
    if (len < KBATCH_HEADER_SIZE)
        return -ERR_CORRUPT;
    struct kbatch_header h;
    kbatch_parse_header(p, &h);
    if (kbatch_is_control(&h) || (h.attributes & KBATCH_ATTR_TRANSACTIONAL) ||
        h.base_offset >= c->map_end) {
        int rc = kbatch_validate(p, len, false, false, 0);
        if (rc != 0)
            return -ERR_CORRUPT;
        r->kind = COMPACT_VERBATIM;
        return 0;
    }
    struct cbatch cb;
    int rc = cbatch_decode(&cb, p, len, c->max_decompressed);
    if (rc != 0)
        return rc;
    struct scan s = {
        .c = c,
        .base = h.base_offset,
        .base_ts = h.base_timestamp,
        .has_horizon = (h.attributes & KBATCH_ATTR_DELETE_HORIZON) != 0,
    };
    rc = each_record(&cb, scan_cb, &s);
    if (rc != 0)
        goto out;
    r->decoded = true;
    r->records_in = s.records_in;
    r->records_kept = (int32_t)s.n_kept;
    r->tombstones_dropped = s.tombs_dropped;
    bool stamp = s.tombs_kept > 0 && !s.has_horizon;
    if (s.records_in == 0) {
        /* an empty header kept by an earlier clean: it goes once a later batch of its
         * producer carries the sequence state */
        r->kind = keep_header ? COMPACT_VERBATIM : COMPACT_DROPPED;
    } else if (s.n_kept == (size_t)s.records_in && !stamp) {
        r->kind = COMPACT_VERBATIM;
        r->horizon_ms = s.tombs_kept > 0 ? s.base_ts : -1;
    } else if (s.n_kept == 0 && keep_header) {
        r->kind = COMPACT_EMPTY;
        r->out = mem_alloc(KBATCH_HEADER_SIZE);
        r->out_len = KBATCH_HEADER_SIZE;
        compact_empty_header(p, r->out);
    } else if (s.n_kept == 0) {
        r->kind = COMPACT_DROPPED;
    } else {
        rc = rewrite(&s, p, &h, r);
    }
out:
    mem_free(s.kept);
    cbatch_free(&cb);
    return rc;
}
