/* The cleaner's key map: record key -> offset of its latest record in the range mapped so far
 * (Kafka's SkimpyOffsetMap, in spirit).
 *
 * Keys are not stored: each is replaced by its 128-bit SipHash under a random per-map key, so a
 * slot is 24 bytes whatever the key length, and no producer can make two keys collide on
 * purpose (an accidental collision among n keys has probability about n^2 / 2^129).
 *
 * Memory is capped: the table grows by doubling up to the largest power-of-two slot count that
 * fits in max_bytes and is never filled beyond 3/4 of that. keymap_room() says how many more
 * keys are sure to fit; the cleaner stops mapping (and cleans in several passes) when a batch
 * might not.
 *
 * Invariants:
 *   1. cap is a power of two, cap <= max_slots; n <= cap * 3 / 4.
 *   2. a slot is empty iff its offset_plus1 is 0; linear probing, no deletions.
 *
 * Not thread-safe: one map per cleaning pass, used by one thread. */
#ifndef SP_STORAGE_KEYMAP_H
#define SP_STORAGE_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/siphash.h"

#define KEYMAP_SLOT_BYTES 24
#define KEYMAP_MIN_SLOTS 256

struct keymap_slot {
    uint64_t h0;           /* key hash, first half */
    uint64_t h1;           /* key hash, second half */
    int64_t offset_plus1;  /* latest offset + 1; 0 = empty slot */
};

struct keymap {
    struct keymap_slot *slots;
    size_t cap;       /* slots allocated (power of two) */
    size_t n;         /* slots in use */
    size_t max_slots; /* cap never grows beyond this */
    uint8_t key[SIPHASH_KEY_SIZE];
};

/* An empty map using at most max_bytes for its table (at least KEYMAP_MIN_SLOTS slots), hashing
 * with a fresh random key. */
void keymap_init(struct keymap *m, size_t max_bytes);
void keymap_free(struct keymap *m);
/* Empties the map (keeps the memory and the hash key). */
void keymap_clear(struct keymap *m);

/* Keys that can still be added without passing the load limit at full size. */
size_t keymap_room(const struct keymap *m);
/* Records that the latest record of key is at offset (keymap_room() must be > 0, CHECK). */
void keymap_put(struct keymap *m, const void *key, size_t len, int64_t offset);
/* The latest offset recorded for key, or -1. */
int64_t keymap_get(const struct keymap *m, const void *key, size_t len);
/* Bytes currently allocated. */
size_t keymap_bytes(const struct keymap *m);

#endif
