/* Record-batch compaction: what the log cleaner does to one batch.
 *
 * Given a batch from a segment and the cleaner's key map, decides which records stay and
 * produces the batch that replaces it:
 *   - a record whose key has a later record in the map is removed (superseded);
 *   - a tombstone (null value) stays until its batch's delete horizon has passed (KIP-534: the
 *     first clean that keeps a tombstone stamps the batch with attribute bit 0x40 and
 *     baseTimestamp = now + delete.retention.ms; a later clean after that time removes it);
 *   - records without a key are kept (Kafka refuses them on compacted topics, but one written
 *     before the topic became compacted is data, not garbage);
 *   - records at or after map_end, control batches and transactional batches are not touched
 *     (no transaction support yet: their fate depends on markers the cleaner does not track).
 *
 * The replacement keeps baseOffset, lastOffsetDelta, partitionLeaderEpoch, producerId,
 * producerEpoch and baseSequence, so every kept record keeps its offset and a producer's
 * sequence range stays what it was. It is compressed with the batch's own codec and its CRC is
 * recomputed. A batch that loses all its records is dropped, or, when the caller says it holds
 * a producer's last sequence (keep_header), replaced by an empty header (recordsCount 0, no
 * compression, baseTimestamp = maxTimestamp), as Kafka does.
 *
 * Bytes come from disk and are untrusted: anything that does not decode is -ERR_CORRUPT (or
 * -ERR_TOO_LARGE past max_decompressed, -ERR_UNSUPPORTED for an unknown codec); nothing here
 * CHECKs batch content. */
#ifndef SP_STORAGE_COMPACT_H
#define SP_STORAGE_COMPACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka/batch.h"

struct keymap;

#define COMPACT_MAX_DECOMPRESSED (64u << 20) /* records section of one batch, decompressed */

/* A batch's records section, decompressed if needed. */
struct cbatch {
    struct kbatch_header h;
    const uint8_t *recs; /* records section (points into the batch or into plain) */
    size_t recs_len;
    uint8_t *plain;      /* owned decompression buffer, or NULL */
};

/* Checks the batch (size, magic, CRC, counts) and decompresses its records. On success cb must
 * be released with cbatch_free(). */
int cbatch_decode(struct cbatch *cb, const uint8_t *p, size_t len, size_t max_decompressed);
void cbatch_free(struct cbatch *cb);

/* Calls fn(arg, offset, key) for every record with a non-null key (the map-building pass).
 * Checks record framing and that offset deltas increase within [0, lastOffsetDelta]. Returns 0,
 * -ERR_CORRUPT, or the first non-zero value fn returned. */
int cbatch_each_key(const struct cbatch *cb,
                    int (*fn)(void *arg, int64_t offset, const uint8_t *key, size_t len),
                    void *arg);

struct compact_ctx {
    const struct keymap *map;   /* latest offsets of the keys of the mapped range; NULL: none */
    int64_t map_end;            /* batches starting at or after this are kept as they are */
    int64_t now_ms;             /* wall clock of this clean */
    int64_t delete_retention_ms; /* tombstone lifetime once cleaned */
    size_t max_decompressed;
};

enum compact_kind {
    COMPACT_VERBATIM,  /* keep the batch byte for byte */
    COMPACT_REWRITTEN, /* replace it with out */
    COMPACT_EMPTY,     /* replace it with out, an empty header */
    COMPACT_DROPPED,   /* remove it */
};

struct compact_result {
    enum compact_kind kind;
    uint8_t *out;          /* REWRITTEN / EMPTY: mem_alloc'd replacement, caller frees */
    size_t out_len;
    int32_t records_in;    /* records in the batch (0 when not decoded) */
    int32_t records_kept;
    int32_t tombstones_dropped;
    int64_t horizon_ms;    /* delete horizon of the tombstones it still holds, else -1 */
    bool decoded;          /* the records were examined */
};

/* Compacts one batch (len bytes at p, length-checked by the caller). Returns 0 with *r filled,
 * or a negative code (then r->out is NULL). */
int compact_batch(const struct compact_ctx *c, const uint8_t *p, size_t len, bool keep_header,
                  struct compact_result *r);

/* Builds an empty batch header (61 bytes into out) standing for the batch at p: same offsets,
 * epochs, producer fields and maxTimestamp; no records, no compression. */
void compact_empty_header(const uint8_t *p, uint8_t out[KBATCH_HEADER_SIZE]);

#endif
