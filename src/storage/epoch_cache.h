/* The leader-epoch cache (Raft terms): for each epoch, the first offset written in it.
 *
 * Persisted as `leader-epoch-checkpoint` in Kafka's text layout:
 *   0            version
 *   N            number of entries
 *   <epoch> <start offset>   N lines
 * written to a temp file, fdatasync'ed and renamed (epochs change rarely: once per election).
 *
 * Invariants:
 *   1. epochs strictly increase; start offsets never decrease.
 *   2. the owner keeps every start offset in [log start, LEO] (truncate_end/truncate_start).
 *
 * Not thread-safe; owned by one plog. */
#ifndef SP_STORAGE_EPOCH_CACHE_H
#define SP_STORAGE_EPOCH_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EPOCH_CACHE_FILE "leader-epoch-checkpoint"

struct epoch_entry {
    int32_t epoch;
    int64_t start; /* first offset written in this epoch */
};

struct epoch_cache {
    struct epoch_entry *e; /* ordered by epoch */
    size_t n;
    size_t cap;
};

void epoch_cache_init(struct epoch_cache *c);
void epoch_cache_free(struct epoch_cache *c);

/* Epoch of the last entry, -1 if empty. */
int32_t epoch_cache_last_epoch(const struct epoch_cache *c);

/* Records that epoch starts at start, if epoch is larger than the last one. Returns whether the
 * cache changed. Epochs below the last one are ignored (the caller checks). */
bool epoch_cache_assign(struct epoch_cache *c, int32_t epoch, int64_t start);

/* End offset of epoch: the start of the first larger epoch, or leo if none is larger. */
int64_t epoch_cache_end_offset(const struct epoch_cache *c, int32_t epoch, int64_t leo);

/* Drops entries starting at or after end (suffix truncation). Returns whether it changed. */
bool epoch_cache_truncate_end(struct epoch_cache *c, int64_t end);

/* Prefix truncation to a new log start: drops entries wholly below start and moves the first
 * remaining entry's start up to start. Returns whether it changed. */
bool epoch_cache_truncate_start(struct epoch_cache *c, int64_t start);

/* The checkpoint's bytes in the layout above: mem_alloc'd (the caller frees), length in *len. */
char *epoch_cache_encode(const struct epoch_cache *c, size_t *len);
/* Replaces c with the checkpoint in buf. 0, or -ERR_CORRUPT (c is left empty). */
int epoch_cache_decode(struct epoch_cache *c, const char *buf, size_t len);

/* Loads the checkpoint from dirfd. Returns 0, -ENOENT, -ERR_CORRUPT (malformed or breaking
 * invariant 1; c is left empty) or -errno. */
int epoch_cache_load(struct epoch_cache *c, int dirfd);

/* Persists the checkpoint atomically (temp + fdatasync + rename + directory fsync); with sync
 * false only the temp file and the rename (for a caller that syncs the filesystem next: a
 * checkpoint lost or torn meanwhile is rebuilt from the batches at open). */
int epoch_cache_store(const struct epoch_cache *c, int dirfd, bool sync);

#endif
