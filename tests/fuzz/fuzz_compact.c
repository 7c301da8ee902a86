/* libFuzzer target: the cleaner's batch compaction (storage/compact.h) on untrusted bytes.
 *
 * Input: one mode byte, then the batch. Mode bit 0 rewrites batchLength and the CRC to match
 * the input (so the fuzzer reaches records and codecs); bit 1 keeps a producer's emptied
 * header; bits 2-3 choose the clock against the delete horizon; bits 4-7 shift the offsets
 * the key map gives each key of the batch (so some records are superseded, some not).
 * Whatever the input, compaction must not crash; a replacement it builds must validate deeply,
 * keep the offsets, producer fields and codec, and be left as it is by a second pass with the
 * same map and clock (compaction is idempotent). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "kafka/batch.h"
#include "storage/compact.h"
#include "storage/keymap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DECOMPRESSED (1 << 20)

struct fill {
    struct keymap *map;
    int shift;
};

static int put_key(void *arg, int64_t offset, const uint8_t *key, size_t len)
{
    struct fill *f = arg;
    int64_t delta = f->shift - 8; /* -8..7 */
    /* offsets come from the input: keep offset + delta inside [0, INT64_MAX) without overflow */
    if (offset < -delta || offset >= INT64_MAX - (delta > 0 ? delta : 0))
        return 0;
    if (keymap_room(f->map) > 0)
        keymap_put(f->map, key, len, offset + delta);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    size_t len = size - 1;
    uint8_t *buf = mem_alloc(len + 1);
    memcpy(buf, data + 1, len);
    if ((mode & 1) && len >= KBATCH_HEADER_SIZE) {
        uint32_t bl = (uint32_t)(len - KBATCH_LOG_OVERHEAD);
        buf[8] = (uint8_t)(bl >> 24);
        buf[9] = (uint8_t)(bl >> 16);
        buf[10] = (uint8_t)(bl >> 8);
        buf[11] = (uint8_t)bl;
        kbatch_update_crc(buf, len);
    }
    struct keymap map;
    keymap_init(&map, 1 << 16);
    /* a fixed hash key instead of the random one: the same input takes the same probe paths,
     * so a fuzz run from a fixed seed is reproducible */
    memset(map.key, 0x5a, sizeof(map.key));
    struct cbatch cb;
    if (len >= KBATCH_HEADER_SIZE && cbatch_decode(&cb, buf, len, MAX_DECOMPRESSED) == 0) {
        struct fill f = {&map, mode >> 4};
        (void)cbatch_each_key(&cb, put_key, &f);
        cbatch_free(&cb);
    }
    static const int64_t clocks[] = {0, 1000, INT64_MAX / 4, INT64_MAX};
    struct compact_ctx c = {&map, INT64_MAX, clocks[(mode >> 2) & 3], 5000, MAX_DECOMPRESSED};
    bool keep = (mode & 2) != 0;
    struct compact_result r;
    int rc = compact_batch(&c, buf, len, keep, &r);
    if (rc != 0 && r.out)
        abort();
    if (rc == 0 && (r.kind == COMPACT_REWRITTEN || r.kind == COMPACT_EMPTY)) {
        if (kbatch_validate(r.out, r.out_len, true, false, MAX_DECOMPRESSED) != 0)
            abort();
        struct kbatch_header a, b;
        kbatch_parse_header(buf, &a);
        kbatch_parse_header(r.out, &b);
        if (a.base_offset != b.base_offset || a.last_offset_delta != b.last_offset_delta ||
            a.producer_id != b.producer_id || a.base_sequence != b.base_sequence ||
            a.producer_epoch != b.producer_epoch ||
            a.partition_leader_epoch != b.partition_leader_epoch ||
            b.records_count != r.records_kept)
            abort();
        if (r.kind == COMPACT_REWRITTEN && kbatch_compression(&a) != kbatch_compression(&b))
            abort();
        struct compact_result again;
        if (compact_batch(&c, r.out, r.out_len, keep, &again) != 0 ||
            again.kind != COMPACT_VERBATIM)
            abort();
        mem_free(again.out);
    }
    mem_free(r.out);
    keymap_free(&map);
    mem_free(buf);
    return 0;
}
