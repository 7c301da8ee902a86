/* Idempotent-producer state of one partition: per producer id, its current epoch and the
 * sequence ranges and offsets of its last PSTATE_BATCHES batches (DESIGN.md §8).
 *
 * The rules are Kafka's (ProducerStateEntry / ProducerAppendInfo / UnifiedLog, origin CLIENT):
 *   - a batch whose epoch is the producer's current one and whose (first, last) sequence equals
 *     one of the kept batches is a duplicate: it is not appended and is answered with the
 *     original offsets;
 *   - an epoch below the current one is INVALID_PRODUCER_EPOCH;
 *   - a newer epoch must start at sequence 0 (else OUT_OF_ORDER_SEQUENCE_NUMBER);
 *   - with the current epoch, the first sequence must follow the last kept one (last + 1, or 0
 *     after INT32_MAX), else OUT_OF_ORDER_SEQUENCE_NUMBER; a retry of a batch older than the
 *     kept ones is therefore out of order too, as in Kafka;
 *   - a producer the partition does not know (never seen, expired, evicted) is accepted with
 *     any sequence (Kafka since KIP-360: its state may have been lost to retention).
 *
 * Limits: at most max_producers entries; adding one more evicts the least recently appended
 * producer (its next batch is then treated as an unknown producer's). An entry idle for
 * expiration_ms or longer (producer.id.expiration.ms) is gone: lookups ignore it and
 * pstate_expire() frees it.
 *
 * Times: last_ms is the broker's wall clock when the producer last appended (not the batch's
 * CreateTime, which a client may set to anything); a batch replayed from the log at recovery
 * counts as appended at recovery time. Expiry therefore never drops a producer early because
 * of a client's clock, at the cost of keeping recovered producers up to one more expiration
 * period.
 *
 * Snapshots (pstate_encode / pstate_decode) hold the whole table, every kept batch included,
 * as of an offset (all batches below it applied). Layout, big-endian:
 *   0 magic "SPPS" | 4 version u16 (1) | 6 reserved u16 (0) | 8 offset i64 | 16 count u32 |
 *   20 count entries of PSTATE_ENTRY_BYTES, least recently used first:
 *      0 producer_id i64 | 8 last_ms i64 | 16 epoch i16 | 18 n_batches u8 (1..5) | 19 u8 0 |
 *      20 u32 0 | 24 five batch slots of 32 bytes, oldest first, unused ones zero:
 *         first_seq i32 | last_seq i32 | first_offset i64 | last_offset i64 | timestamp i64
 *   then CRC-32C (u32) of every byte before it.
 *
 * Invariants (pstate_check_invariants):
 *   1. The hash index and the LRU list hold the same entries; count <= max_producers.
 *   2. Every entry has 1..PSTATE_BATCHES batches with increasing, disjoint offset ranges.
 *   3. The LRU list is in order of the last append (least recent first). */
#ifndef SP_BROKER_PRODUCER_STATE_H
#define SP_BROKER_PRODUCER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PSTATE_BATCHES 5
#define PSTATE_HEADER_BYTES 20
#define PSTATE_ENTRY_BYTES 184
#define PSTATE_SNAPSHOT_MAX_ENTRIES (1 << 18) /* a decode bound, whatever max_producers says */

struct kbatch_header;

/* One appended batch of a producer. */
struct pstate_batch {
    int32_t first_seq;
    int32_t last_seq;
    int64_t first_offset;
    int64_t last_offset;
    int64_t timestamp; /* the batch's maxTimestamp (after LogAppendTime rewriting) */
};

struct pstate_limits {
    int32_t max_producers; /* >= 1 */
    int64_t expiration_ms; /* >= 1 */
};

enum pstate_verdict {
    PSTATE_APPEND,       /* append it (in sequence, or an unknown producer) */
    PSTATE_DUPLICATE,    /* one of the kept batches again: *dup is the original */
    PSTATE_OUT_OF_ORDER, /* a sequence gap, or a new epoch not starting at 0 */
    PSTATE_STALE_EPOCH,  /* an epoch below the producer's current one */
};

struct pstate;

struct pstate *pstate_new(const struct pstate_limits *lim);
void pstate_free(struct pstate *t);
/* New limits apply from now on; a smaller max_producers evicts at once. */
void pstate_set_limits(struct pstate *t, const struct pstate_limits *lim);
/* Forgets every producer (the eviction counter stays). */
void pstate_clear(struct pstate *t);

/* The last sequence of a batch: first_seq + last_offset_delta, wrapping past INT32_MAX to 0
 * as Kafka's DefaultRecordBatch.incrementSequence does. */
int32_t pstate_last_seq(int32_t first_seq, int32_t last_offset_delta);

/* Whether the header carries a producer id (>= 0) and is not a control batch: the batches the
 * table tracks. */
bool pstate_tracks(const struct kbatch_header *h);

/* The table entry for a batch with this header appended at base_offset. */
void pstate_batch_of(const struct kbatch_header *h, int64_t base_offset, struct pstate_batch *out);

/* Judges a batch of producer pid/epoch with sequences [first_seq, last_seq] that a client
 * wants appended now (nothing changes). On PSTATE_DUPLICATE *dup is the original batch. */
enum pstate_verdict pstate_check(struct pstate *t, int64_t pid, int16_t epoch, int32_t first_seq,
                                 int32_t last_seq, int64_t now_ms, struct pstate_batch *dup);

/* Records a batch of pid/epoch that is now in the log (after a successful append, or found in
 * the log at recovery; no checks): a new epoch drops the kept batches, the oldest of
 * PSTATE_BATCHES goes, the producer becomes the most recently used with last_ms = now_ms. */
void pstate_update(struct pstate *t, int64_t pid, int16_t epoch, const struct pstate_batch *b,
                   int64_t now_ms);

/* Frees the producers idle for expiration_ms or longer; returns how many. */
int pstate_expire(struct pstate *t, int64_t now_ms);

size_t pstate_count(const struct pstate *t);
uint64_t pstate_evictions(const struct pstate *t);
/* The largest producer id in the table, -1 if empty. */
int64_t pstate_max_pid(const struct pstate *t);

/* Reads an entry (ignoring expiry): false if pid is not in the table. batches receives up to
 * PSTATE_BATCHES batches, oldest first. Any out pointer may be NULL. */
bool pstate_get(const struct pstate *t, int64_t pid, int16_t *epoch, struct pstate_batch *batches,
                int *n_batches, int64_t *last_ms);

/* Serializes the table as of offset (see the layout above); producers already expired at
 * now_ms are left out. Returns a mem_alloc'd buffer of *len bytes (the caller frees it). */
uint8_t *pstate_encode(const struct pstate *t, int64_t offset, int64_t now_ms, size_t *len);

/* Loads a snapshot into an empty table: the whole buffer must be one valid snapshot (magic,
 * version, length, CRC-32C, and every entry plausible: ids and epochs >= 0, 1..5 batches with
 * sequences >= 0 and increasing offset ranges below the snapshot's offset, unique ids). Entries
 * expired at now_ms are skipped; beyond max_producers the least recently used go. Returns 0
 * with *offset set, or -ERR_CORRUPT (the table is left empty). */
int pstate_decode(struct pstate *t, const uint8_t *p, size_t len, int64_t now_ms, int64_t *offset);

/* DCHECKs the invariants above (walks the whole table). */
void pstate_check_invariants(const struct pstate *t);

#endif
