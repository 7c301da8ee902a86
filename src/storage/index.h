/* Sparse per-segment indexes, in memory and in their on-disk encoding.
 *
 * Offset index (.index): entries (relative offset, file position) of batch starts, one every
 * index.interval.bytes of log. Big-endian u32 + u32 on disk (Kafka's layout). Relative offsets
 * are baseOffset - segment base; positions are byte positions in the .log file.
 *
 * Time index (.timeindex): entries (timestamp, relative offset): the running maximum of the
 * batches' maxTimestamp, recorded when it grows, at the batch where it was reached. Big-endian
 * i64 + u32 on disk. The last entry holds the segment's largest timestamp (a closing entry is
 * added when a segment is sealed).
 *
 * Invariants (checked on every append and on decode, since index files come from disk):
 *   1. offset index: rel and pos strictly increase.
 *   2. time index: ts strictly increases, rel never decreases.
 *   3. decoded entries lie inside the segment (rel < rel_limit, pos < pos_limit).
 *
 * Not thread-safe; owned by one segment. */
#ifndef SP_STORAGE_INDEX_H
#define SP_STORAGE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OINDEX_ENTRY_SIZE 8
#define TINDEX_ENTRY_SIZE 12

struct oindex_entry {
    uint32_t rel; /* batch baseOffset - segment base */
    uint32_t pos; /* file position of the batch */
};

struct oindex {
    struct oindex_entry *e; /* sorted by rel and pos */
    size_t n;               /* entries in use */
    size_t cap;             /* entries allocated */
};

struct tindex_entry {
    int64_t ts;   /* running max timestamp */
    uint32_t rel; /* batch where it was reached */
};

struct tindex {
    struct tindex_entry *e;
    size_t n;
    size_t cap;
};

void oindex_init(struct oindex *ix);
void oindex_free(struct oindex *ix); /* leaves an empty index */
/* Appends an entry; both fields must exceed the last entry's (CHECK). */
void oindex_append(struct oindex *ix, uint32_t rel, uint32_t pos);
/* The last entry with rel <= rel; false if there is none. */
bool oindex_floor(const struct oindex *ix, uint32_t rel, struct oindex_entry *out);
/* The last entry with rel <= max_rel and pos <= max_pos; false if there is none. */
bool oindex_floor_bounded(const struct oindex *ix, uint32_t max_rel, uint32_t max_pos,
                          struct oindex_entry *out);
/* Drops entries with pos >= pos. */
void oindex_truncate(struct oindex *ix, uint32_t pos);
/* Encodes into a mem_alloc'd buffer of *len bytes (NULL when empty). */
uint8_t *oindex_encode(const struct oindex *ix, size_t *len);
/* Replaces ix with the decoded entries. -ERR_CORRUPT (ix left empty) if the bytes break an
 * invariant or an entry lies outside [0, rel_limit) x [0, pos_limit). */
int oindex_decode(struct oindex *ix, const uint8_t *p, size_t len, uint64_t rel_limit,
                  uint64_t pos_limit);

void tindex_init(struct tindex *ix);
void tindex_free(struct tindex *ix);
/* Appends (ts, rel) if ts exceeds the last entry's timestamp; returns whether it did. */
bool tindex_maybe_append(struct tindex *ix, int64_t ts, uint32_t rel);
bool tindex_last(const struct tindex *ix, struct tindex_entry *out);
/* The last entry with ts < ts; false if there is none. */
bool tindex_floor_below(const struct tindex *ix, int64_t ts, struct tindex_entry *out);
/* Drops entries with rel >= rel. */
void tindex_truncate(struct tindex *ix, uint32_t rel);
uint8_t *tindex_encode(const struct tindex *ix, size_t *len);
int tindex_decode(struct tindex *ix, const uint8_t *p, size_t len, uint64_t rel_limit);

#endif
