/* Record batch v2 (magic 2): the unit of storage, replication and transfer.
 *
 * Layout (big-endian), 61-byte header then records:
 *   0 baseOffset i64 | 8 batchLength i32 (= total - 12) | 12 partitionLeaderEpoch i32 |
 *   16 magic i8 | 17 crc u32 (CRC-32C of bytes 21..end) | 21 attributes i16 |
 *   23 lastOffsetDelta i32 | 27 baseTimestamp i64 | 35 maxTimestamp i64 | 43 producerId i64 |
 *   51 producerEpoch i16 | 53 baseSequence i32 | 57 recordsCount i32 | 61 records...
 *
 * baseOffset and partitionLeaderEpoch are outside the CRC: the broker rewrites them in place
 * (kbatch_set_base_offset / kbatch_set_leader_epoch) without recomputing it.
 *
 * Record (all varints zigzag): length varint | attributes i8 | timestampDelta varlong |
 * offsetDelta varint | keyLen varint (-1 null) | key | valueLen varint (-1 null) | value |
 * headerCount varint | per header: keyLen varint, key, valueLen varint (-1 null), value. */
#ifndef SP_KAFKA_BATCH_H
#define SP_KAFKA_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kafka/wire.h"

#define KBATCH_HEADER_SIZE 61
#define KBATCH_LOG_OVERHEAD 12 /* baseOffset + batchLength: bytes not counted by batchLength */
#define KBATCH_MAGIC 2

#define KBATCH_OFF_BASE_OFFSET 0
#define KBATCH_OFF_LENGTH 8
#define KBATCH_OFF_LEADER_EPOCH 12
#define KBATCH_OFF_MAGIC 16
#define KBATCH_OFF_CRC 17
#define KBATCH_OFF_ATTRIBUTES 21
#define KBATCH_OFF_MAX_TIMESTAMP 35
#define KBATCH_OFF_RECORDS_COUNT 57

#define KBATCH_ATTR_COMPRESSION_MASK 0x07
#define KBATCH_ATTR_LOG_APPEND_TIME 0x08
#define KBATCH_ATTR_TRANSACTIONAL 0x10
#define KBATCH_ATTR_CONTROL 0x20
#define KBATCH_ATTR_DELETE_HORIZON 0x40

enum kcompression {
    KCOMPRESSION_NONE = 0,
    KCOMPRESSION_GZIP = 1,
    KCOMPRESSION_SNAPPY = 2,
    KCOMPRESSION_LZ4 = 3,
    KCOMPRESSION_ZSTD = 4,
};

struct kbatch_header {
    int64_t base_offset;
    int32_t batch_length;
    int32_t partition_leader_epoch;
    int8_t magic;
    uint32_t crc;
    int16_t attributes;
    int32_t last_offset_delta;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
    int32_t records_count;
};

/* Total bytes of the batch on the wire / on disk. */
static inline size_t kbatch_size(const struct kbatch_header *h)
{
    return (size_t)h->batch_length + KBATCH_LOG_OVERHEAD;
}
static inline int64_t kbatch_last_offset(const struct kbatch_header *h)
{
    return h->base_offset + h->last_offset_delta;
}
static inline int kbatch_compression(const struct kbatch_header *h)
{
    return h->attributes & KBATCH_ATTR_COMPRESSION_MASK;
}
static inline bool kbatch_is_control(const struct kbatch_header *h)
{
    return (h->attributes & KBATCH_ATTR_CONTROL) != 0;
}

/* Parses the fixed header from p (at least KBATCH_HEADER_SIZE bytes). Does not validate. */
void kbatch_parse_header(const uint8_t *p, struct kbatch_header *h);
/* Reads only baseOffset and batchLength (the first 12 bytes). */
void kbatch_peek(const uint8_t *p, int64_t *base_offset, int32_t *batch_length);

/* Checks a batch as stored or received:
 *   - len >= 61 and batchLength + 12 == len (exactly one batch),
 *   - magic 2, CRC-32C over bytes 21..end matches,
 *   - recordsCount >= 0, lastOffsetDelta >= 0, and for a non-empty batch
 *     recordsCount == lastOffsetDelta + 1... unless it is compacted (see below),
 *   - if `deep`, the records section is decoded (decompressed when compressed, with output
 *     capped at max_decompressed) and must hold exactly recordsCount well-formed records whose
 *     offsetDeltas increase and stay <= lastOffsetDelta.
 * Compacted batches may hold fewer records than lastOffsetDelta + 1; `strict_count` requires
 * equality (what a producer must send). Returns 0, -ERR_CORRUPT (CRC, layout or record
 * framing), -ERR_INVALID (count mismatch, bad magic) or -ERR_UNSUPPORTED (unknown codec). */
int kbatch_validate(const uint8_t *p, size_t len, bool deep, bool strict_count,
                    size_t max_decompressed);

/* Whether the CRC of the batch at p (len bytes, header already length-checked) is right. */
bool kbatch_crc_ok(const uint8_t *p, size_t len);
/* Recomputes and stores the CRC (after the broker changed covered fields). */
void kbatch_update_crc(uint8_t *p, size_t len);

/* The batch at p (len bytes, already validated: kbatch_validate) with its records section in
 * codec instead (KCOMPRESSION_*; decompressed first when compressed, output capped at
 * max_decompressed): header fields kept but the compression bits of attributes and
 * batchLength, CRC recomputed. Returns 0 with *out (mem_alloc'd, *out_len bytes; the caller
 * frees it), or -ERR_CORRUPT, -ERR_TOO_LARGE, -ERR_UNSUPPORTED (unknown codec). What topic
 * compression.type does, as Kafka's broker recompresses. */
int kbatch_recompress(const uint8_t *p, size_t len, int codec, size_t max_decompressed,
                      uint8_t **out, size_t *out_len);

void kbatch_set_base_offset(uint8_t *p, int64_t base_offset);
void kbatch_set_leader_epoch(uint8_t *p, int32_t epoch);

/* ListOffsets by time inside one batch (p, len: exactly one stored batch): the first record,
 * in offset order, whose timestamp is >= ts and whose offset is >= min_offset. Returns 1 with
 * *offset and *timestamp (that record's), 0 if no record qualifies (control batches never do:
 * consumers do not see their records), or -ERR_CORRUPT (layout, CRC, record framing),
 * -ERR_UNSUPPORTED (unknown codec), -ERR_TOO_LARGE (compressed records beyond
 * max_decompressed). A record's timestamp is baseTimestamp + its timestampDelta; in a
 * LogAppendTime batch every record has the batch's maxTimestamp, as Kafka reports it. */
int kbatch_find_timestamp(const uint8_t *p, size_t len, int64_t ts, int64_t min_offset,
                          size_t max_decompressed, int64_t *offset, int64_t *timestamp);

/* One decoded record. Slices point into the records section (or the decompression buffer). */
struct krecord_header {
    struct kstr key;
    struct kbytes value; /* len -1 = null */
};

struct krecord {
    int8_t attributes;
    int64_t timestamp_delta;
    int32_t offset_delta;
    struct kbytes key;   /* len -1 = null */
    struct kbytes value; /* len -1 = null (tombstone) */
    int32_t header_count;
    const uint8_t *headers; /* raw header bytes; iterate with krecord_next_header */
    const uint8_t *headers_end;
};

/* Iterates over records in an (uncompressed) records section. */
struct krecord_iter {
    struct kreader r;
    int32_t remaining; /* records still expected */
};

void krecord_iter_init(struct krecord_iter *it, const uint8_t *records, size_t len, int32_t count);
/* Returns 1 with *rec filled, 0 at the end (all records read and no bytes left), or
 * -ERR_CORRUPT. */
int krecord_iter_next(struct krecord_iter *it, struct krecord *rec);
/* Reads the next header from [*p, end); returns 1, 0 at end, or -ERR_CORRUPT. */
int krecord_next_header(const uint8_t **p, const uint8_t *end, struct krecord_header *h);

/* Appends one record to out (used by tests and tools; the broker never re-encodes). */
void krecord_encode(struct kwriter *w, int64_t timestamp_delta, int32_t offset_delta,
                    struct kbytes key, struct kbytes value, const struct krecord_header *headers,
                    int32_t n_headers);

/* Builds a complete uncompressed batch in out (tests and tools): base offset 0, producer -1,
 * records as given; fills the CRC. */
void kbatch_build(struct iobuf *out, int64_t base_timestamp, const struct kbytes *keys,
                  const struct kbytes *values, int32_t count);

/* Writes into p a record-less control batch: KBATCH_HEADER_SIZE bytes, magic 2, attributes
 * CONTROL, lastOffsetDelta 0 (it covers exactly one offset), timestamps -1, producer id/epoch
 * and base sequence -1, 0 records, CRC filled. Base offset 0 and leader epoch -1: the log sets
 * both on append. Raft's own entries (NOOP, CONFIG) are stored as these: every client skips a
 * control batch, and this one carries no record a client could mistake for data. The bytes are
 * deterministic, so every replica stores the same batch. */
void kbatch_build_empty_control(uint8_t *p);

#endif
