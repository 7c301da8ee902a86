/* The cleaner's pieces: SipHash, the key map, and batch compaction (storage/compact.h). */
#include "base/errors.h"
#include "base/siphash.h"
#include "kafka/compress.h"
#include "storage/compact.h"
#include "storage/keymap.h"
#include "storage_util.h"

/* ---- SipHash ---- */

TEST(siphash_reference_vectors)
{
    uint8_t key[16], msg[64];
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        msg[i] = (uint8_t)i;
    /* the reference implementation's vectors (key 00..0f, message 00..len-1) */
    ASSERT_UEQ(siphash64(key, msg, 0), 0x726fdb47dd0e0e31ULL);
    ASSERT_UEQ(siphash64(key, msg, 15), 0xa129ca6149be45e5ULL);
    ASSERT_UEQ(siphash64(key, msg, 63), 0x958a324ceb064572ULL);
    uint64_t h[2];
    siphash128(key, msg, 0, h);
    ASSERT_UEQ(h[0], 0xe6a825ba047f81a3ULL);
    ASSERT_UEQ(h[1], 0x930255c71472f66dULL);
}

/* ---- key map ---- */

TEST(keymap_put_get_latest_wins_and_grows)
{
    struct keymap m;
    keymap_init(&m, 1 << 20);
    ASSERT_EQ(keymap_get(&m, "a", 1), -1);
    keymap_put(&m, "a", 1, 5);
    keymap_put(&m, "b", 1, 6);
    keymap_put(&m, "a", 1, 9);
    keymap_put(&m, "", 0, 3); /* the empty key is a key */
    ASSERT_EQ(keymap_get(&m, "a", 1), 9);
    ASSERT_EQ(keymap_get(&m, "b", 1), 6);
    ASSERT_EQ(keymap_get(&m, "", 0), 3);
    ASSERT_EQ(keymap_get(&m, "c", 1), -1);
    ASSERT_EQ(m.n, 3);
    /* many keys: the table grows and every one is found */
    char k[32];
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(k, sizeof(k), "key-%d", i);
        keymap_put(&m, k, (size_t)n, 100 + i);
    }
    for (int i = 0; i < 20000; i++) {
        int n = snprintf(k, sizeof(k), "key-%d", i);
        ASSERT_EQ(keymap_get(&m, k, (size_t)n), 100 + i);
    }
    ASSERT_CMP(keymap_bytes(&m), <=, 1 << 20);
    keymap_free(&m);
}

TEST(keymap_memory_cap_and_room)
{
    struct keymap m;
    keymap_init(&m, 64 * 1024); /* 2048 slots of 24 bytes fit: 1536 keys at 3/4 load */
    ASSERT_EQ(m.max_slots, 2048);
    ASSERT_EQ(keymap_room(&m), 1536);
    char k[32];
    int i = 0;
    while (keymap_room(&m) > 0) {
        int n = snprintf(k, sizeof(k), "k%d", i);
        keymap_put(&m, k, (size_t)n, i);
        i++;
    }
    ASSERT_EQ(i, 1536);
    ASSERT_CMP(keymap_bytes(&m), <=, 64 * 1024);
    /* updating a key needs no room */
    keymap_put(&m, "k7", 2, 99999);
    ASSERT_EQ(keymap_get(&m, "k7", 2), 99999);
    keymap_clear(&m);
    ASSERT_EQ(keymap_get(&m, "k7", 2), -1);
    ASSERT_EQ(keymap_room(&m), 1536);
    keymap_free(&m);
}

TEST(keymap_hash_key_differs_per_map)
{
    struct keymap a, b;
    keymap_init(&a, 1 << 16);
    keymap_init(&b, 1 << 16);
    ASSERT(memcmp(a.key, b.key, sizeof(a.key)) != 0);
    keymap_free(&a);
    keymap_free(&b);
}

/* ---- batch compaction ---- */

struct drec {
    int64_t offset;
    char key[32];   /* "" with key_null */
    char value[64];
    bool key_null;
    bool tombstone;
    int64_t ts;
    int32_t headers;
};

/* Decodes a whole batch into recs; returns the record count. */
static int decode(const uint8_t *p, size_t len, struct drec *recs, int cap)
{
    ASSERT_EQ(kbatch_validate(p, len, true, false, 1 << 20), 0);
    struct cbatch cb;
    ASSERT_EQ(cbatch_decode(&cb, p, len, 1 << 20), 0);
    struct krecord_iter it;
    krecord_iter_init(&it, cb.recs, cb.recs_len, cb.h.records_count);
    struct krecord r;
    int n = 0;
    int rc;
    while ((rc = krecord_iter_next(&it, &r)) == 1) {
        ASSERT_CMP(n, <, cap);
        struct drec *d = &recs[n++];
        memset(d, 0, sizeof(*d));
        d->offset = cb.h.base_offset + r.offset_delta;
        d->key_null = r.key.len < 0;
        if (r.key.len > 0)
            memcpy(d->key, r.key.p, (size_t)r.key.len);
        d->tombstone = r.value.len < 0;
        if (r.value.len > 0)
            memcpy(d->value, r.value.p, (size_t)r.value.len);
        d->ts = cb.h.base_timestamp + r.timestamp_delta;
        d->headers = r.header_count;
    }
    ASSERT_EQ(rc, 0);
    cbatch_free(&cb);
    return n;
}

static const struct su_rec five[] = {
    {"a", "a1", 1000}, {"b", "b1", 1001}, {"a", "a2", 1003}, {NULL, "nokey", 1002},
    {"c", "c1", 1004},
};

/* A map saying: a's latest is at 102, b's at 500 (later batch), c's at 104. */
static void five_map(struct keymap *m)
{
    keymap_init(m, 1 << 16);
    keymap_put(m, "a", 1, 102);
    keymap_put(m, "b", 1, 500);
    keymap_put(m, "c", 1, 104);
}

static void codec_case(int codec)
{
    size_t len;
    uint8_t *b = su_kbatch(five, 5, codec, 77, 3, 40, &len);
    kbatch_set_base_offset(b, 100);
    kbatch_set_leader_epoch(b, 6);
    struct keymap m;
    five_map(&m);
    struct compact_ctx c = {&m, 1000, 5000, 100, 1 << 20};
    struct compact_result r;
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_REWRITTEN);
    ASSERT_EQ(r.records_in, 5);
    ASSERT_EQ(r.records_kept, 3);
    struct kbatch_header h, o;
    kbatch_parse_header(b, &h);
    kbatch_parse_header(r.out, &o);
    /* offsets, epochs and producer fields are those of the original */
    ASSERT_EQ(o.base_offset, 100);
    ASSERT_EQ(o.last_offset_delta, 4);
    ASSERT_EQ(o.partition_leader_epoch, 6);
    ASSERT_EQ(o.producer_id, 77);
    ASSERT_EQ(o.producer_epoch, 3);
    ASSERT_EQ(o.base_sequence, 40);
    ASSERT_EQ(o.records_count, 3);
    ASSERT_EQ(kbatch_compression(&o), codec);
    ASSERT_EQ(o.base_timestamp, h.base_timestamp);
    ASSERT_EQ(o.max_timestamp, 1004);
    ASSERT(kbatch_crc_ok(r.out, r.out_len));
    struct drec d[8];
    ASSERT_EQ(decode(r.out, r.out_len, d, 8), 3);
    ASSERT_EQ(d[0].offset, 102);
    ASSERT_STREQ(d[0].value, "a2");
    ASSERT_EQ(d[0].ts, 1003);
    ASSERT_EQ(d[0].headers, 0);
    ASSERT_EQ(d[1].offset, 103);
    ASSERT(d[1].key_null); /* no key: kept */
    ASSERT_STREQ(d[1].value, "nokey");
    ASSERT_EQ(d[1].headers, 1);
    ASSERT_EQ(d[2].offset, 104);
    ASSERT_STREQ(d[2].value, "c1");
    mem_free(r.out);
    mem_free(b);
    keymap_free(&m);
}

TEST(compact_rewrites_none)
{
    codec_case(KCOMPRESSION_NONE);
}
TEST(compact_rewrites_gzip_with_gzip)
{
    codec_case(KCOMPRESSION_GZIP);
}
TEST(compact_rewrites_snappy_with_snappy)
{
    codec_case(KCOMPRESSION_SNAPPY);
}
TEST(compact_rewrites_lz4_with_lz4)
{
    codec_case(KCOMPRESSION_LZ4);
}
TEST(compact_rewrites_zstd_with_zstd)
{
    codec_case(KCOMPRESSION_ZSTD);
}

TEST(compact_unchanged_batch_is_verbatim_and_beyond_map_end_untouched)
{
    size_t len;
    uint8_t *b = su_kbatch(five, 5, KCOMPRESSION_LZ4, -1, -1, -1, &len);
    kbatch_set_base_offset(b, 100);
    struct keymap m;
    keymap_init(&m, 1 << 16);
    keymap_put(&m, "a", 1, 102);
    keymap_put(&m, "b", 1, 101);
    keymap_put(&m, "c", 1, 104);
    struct compact_ctx c = {&m, 1000, 5000, 100, 1 << 20};
    struct compact_result r;
    /* "a" at 100 is superseded by 102: not verbatim */
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_REWRITTEN);
    mem_free(r.out);
    /* starting at map_end: never touched even though it holds a superseded record */
    c.map_end = 100;
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_VERBATIM);
    ASSERT(!r.decoded);
    /* the map is the authority: without "a" in it, both of its records stay */
    c.map_end = 1000;
    keymap_clear(&m);
    keymap_put(&m, "b", 1, 101);
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_VERBATIM);
    ASSERT_EQ(r.records_kept, 5);
    static const struct su_rec distinct[] = {{"x", "1", 10}, {"y", "2", 11}};
    uint8_t *d = su_kbatch(distinct, 2, KCOMPRESSION_NONE, -1, -1, -1, &len);
    kbatch_set_base_offset(d, 200);
    ASSERT_EQ(compact_batch(&c, d, len, false, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_VERBATIM);
    ASSERT_EQ(r.records_kept, 2);
    mem_free(d);
    mem_free(b);
    keymap_free(&m);
}

TEST(compact_emptied_batch_dropped_or_kept_as_producer_header)
{
    static const struct su_rec two[] = {{"a", "1", 2000}, {"b", "2", 2500}};
    size_t len;
    uint8_t *b = su_kbatch(two, 2, KCOMPRESSION_ZSTD, 9, 2, 17, &len);
    kbatch_set_base_offset(b, 50);
    kbatch_set_leader_epoch(b, 4);
    struct keymap m;
    keymap_init(&m, 1 << 16);
    keymap_put(&m, "a", 1, 90);
    keymap_put(&m, "b", 1, 91);
    struct compact_ctx c = {&m, 1000, 5000, 100, 1 << 20};
    struct compact_result r;
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_DROPPED);
    ASSERT_EQ(r.records_in - r.records_kept, 2);
    ASSERT_EQ(compact_batch(&c, b, len, true, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_EMPTY);
    ASSERT_EQ(r.out_len, KBATCH_HEADER_SIZE);
    ASSERT_EQ(kbatch_validate(r.out, r.out_len, true, false, 1 << 20), 0);
    struct kbatch_header o;
    kbatch_parse_header(r.out, &o);
    ASSERT_EQ(o.base_offset, 50);
    ASSERT_EQ(o.last_offset_delta, 1);
    ASSERT_EQ(o.partition_leader_epoch, 4);
    ASSERT_EQ(o.producer_id, 9);
    ASSERT_EQ(o.producer_epoch, 2);
    ASSERT_EQ(o.base_sequence, 17);
    ASSERT_EQ(o.records_count, 0);
    ASSERT_EQ(kbatch_compression(&o), KCOMPRESSION_NONE);
    ASSERT_EQ(o.base_timestamp, 2500);
    ASSERT_EQ(o.max_timestamp, 2500);
    /* an empty header stays while it is its producer's last, and goes after */
    struct compact_result r2;
    ASSERT_EQ(compact_batch(&c, r.out, r.out_len, true, &r2), 0);
    ASSERT_EQ(r2.kind, COMPACT_VERBATIM);
    ASSERT_EQ(compact_batch(&c, r.out, r.out_len, false, &r2), 0);
    ASSERT_EQ(r2.kind, COMPACT_DROPPED);
    mem_free(r.out);
    mem_free(b);
    keymap_free(&m);
}

TEST(compact_tombstone_horizon_stamped_then_expired)
{
    static const struct su_rec recs[] = {
        {"k1", "v", 1000}, {"k2", NULL, 1010}, {"k3", "w", 1020}};
    size_t len;
    uint8_t *b = su_kbatch(recs, 3, KCOMPRESSION_SNAPPY, -1, -1, -1, &len);
    kbatch_set_base_offset(b, 10);
    struct compact_ctx c = {NULL, 1000, 50000, 3000, 1 << 20};
    /* first clean: nothing superseded, but the tombstone's clock starts */
    struct compact_result r;
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_REWRITTEN);
    ASSERT_EQ(r.horizon_ms, 53000);
    struct kbatch_header o;
    kbatch_parse_header(r.out, &o);
    ASSERT(o.attributes & KBATCH_ATTR_DELETE_HORIZON);
    ASSERT_EQ(o.base_timestamp, 53000);
    ASSERT_EQ(o.max_timestamp, 1020);
    ASSERT_EQ(kbatch_compression(&o), KCOMPRESSION_SNAPPY);
    struct drec d[4];
    ASSERT_EQ(decode(r.out, r.out_len, d, 4), 3);
    /* timestamps survive the new base */
    ASSERT_EQ(d[0].ts, 1000);
    ASSERT_EQ(d[1].ts, 1010);
    ASSERT(d[1].tombstone);
    ASSERT_EQ(d[2].ts, 1020);
    /* before the horizon: kept as it is */
    struct compact_result r2;
    c.now_ms = 52999;
    ASSERT_EQ(compact_batch(&c, r.out, r.out_len, false, &r2), 0);
    ASSERT_EQ(r2.kind, COMPACT_VERBATIM);
    ASSERT_EQ(r2.horizon_ms, 53000);
    /* at the horizon: the tombstone goes, the flag too, the timestamps stay */
    c.now_ms = 53000;
    ASSERT_EQ(compact_batch(&c, r.out, r.out_len, false, &r2), 0);
    ASSERT_EQ(r2.kind, COMPACT_REWRITTEN);
    ASSERT_EQ(r2.tombstones_dropped, 1);
    ASSERT_EQ(r2.horizon_ms, -1);
    kbatch_parse_header(r2.out, &o);
    ASSERT(!(o.attributes & KBATCH_ATTR_DELETE_HORIZON));
    ASSERT_EQ(decode(r2.out, r2.out_len, d, 4), 2);
    ASSERT_EQ(d[0].offset, 10);
    ASSERT_EQ(d[0].ts, 1000);
    ASSERT_EQ(d[1].offset, 12);
    ASSERT_EQ(d[1].ts, 1020);
    /* a tombstone superseded by a later record goes at once */
    struct keymap m;
    keymap_init(&m, 1 << 16);
    keymap_put(&m, "k2", 2, 99);
    c.map = &m;
    c.now_ms = 50000;
    ASSERT_EQ(compact_batch(&c, b, len, false, &r2), 0);
    ASSERT_EQ(r2.kind, COMPACT_REWRITTEN);
    ASSERT_EQ(r2.records_kept, 2);
    ASSERT_EQ(r2.horizon_ms, -1);
    mem_free(r2.out);
    mem_free(r.out);
    mem_free(b);
    keymap_free(&m);
}

TEST(compact_control_and_transactional_batches_untouched)
{
    static const struct su_rec one[] = {{"a", "1", 5}};
    size_t len;
    uint8_t *b = su_kbatch(one, 1, KCOMPRESSION_NONE, 3, 0, 0, &len);
    struct keymap m;
    keymap_init(&m, 1 << 16);
    keymap_put(&m, "a", 1, 100);
    struct compact_ctx c = {&m, 1000, 5000, 100, 1 << 20};
    struct compact_result r;
    b[KBATCH_OFF_ATTRIBUTES + 1] |= KBATCH_ATTR_CONTROL;
    kbatch_update_crc(b, len);
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_VERBATIM);
    b[KBATCH_OFF_ATTRIBUTES + 1] ^= KBATCH_ATTR_CONTROL | KBATCH_ATTR_TRANSACTIONAL;
    kbatch_update_crc(b, len);
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), 0);
    ASSERT_EQ(r.kind, COMPACT_VERBATIM);
    mem_free(b);
    keymap_free(&m);
}

TEST(compact_corrupt_batches_are_errors)
{
    size_t len;
    uint8_t *b = su_kbatch(five, 5, KCOMPRESSION_GZIP, -1, -1, -1, &len);
    struct compact_ctx c = {NULL, 1000, 5000, 100, 1 << 20};
    struct compact_result r;
    /* a flipped byte: CRC mismatch */
    b[len - 3] ^= 0x10;
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), -ERR_CORRUPT);
    ASSERT(r.out == NULL);
    /* a right CRC over a broken gzip stream */
    kbatch_update_crc(b, len);
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), -ERR_CORRUPT);
    mem_free(b);
    /* more records claimed than present, CRC fixed up */
    b = su_kbatch(five, 5, KCOMPRESSION_NONE, -1, -1, -1, &len);
    b[60] = 4;
    kbatch_update_crc(b, len);
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), -ERR_CORRUPT);
    /* an unknown codec */
    b[60] = 5;
    b[KBATCH_OFF_ATTRIBUTES + 1] = 6;
    kbatch_update_crc(b, len);
    ASSERT_EQ(compact_batch(&c, b, len, false, &r), -ERR_UNSUPPORTED);
    /* too short to be a batch */
    ASSERT_EQ(compact_batch(&c, b, 30, false, &r), -ERR_CORRUPT);
    mem_free(b);
}
