/* A bounded set of open files: the descriptors of segments and partition directories, so that
 * the number of partitions is bounded by disk and memory, not by `ulimit -n` (as RocksDB's
 * max_open_files). A file not used lately is closed; the next use opens it again by name.
 *
 * Owners (storage/segment.c, storage/plog.c) embed a struct fdcache_entry per file. The cache
 * holds one reference (base/iobuf.h's fileref) on each open entry's file; fdcache_open hands the
 * caller a reference of its own, so closing an entry while someone uses it only drops the cache's
 * reference, and the descriptor closes when the last user puts it: an in-flight sendfile or a
 * flusher job never sees its file closed.
 *
 * Each entry has an owner (a partition's log): an open made for one owner never closes another
 * entry of the same owner. So code working on one partition may use the raw descriptor of that
 * partition's directory (plog_dirfd) without a reference, until it opens a file of another
 * partition. Segment files are always used through references.
 *
 * Invariants:
 *   1. An entry is on the LRU list (most recently used first) exactly when e->file != NULL and
 *      e->cache != NULL; n_open counts them.
 *   2. After an open or adopt, n_open <= limit, unless entries of the opening owner (or, after
 *      FDCACHE_SKIP_MAX of them at the cold end, any) are all that is left to close: one
 *      partition's own files may exceed the limit while it works, and the next open of another
 *      owner closes them.
 *   3. The cache's reference is the only one it takes: evicting an entry never closes a
 *      descriptor another reference still holds.
 *
 * Threading: the reactor thread only (the flusher and cleaner threads get references). A NULL
 * cache means "no cache": an entry's file stays open until the owner forgets it (tools, tests,
 * the metadata log). */
#ifndef SP_STORAGE_FDCACHE_H
#define SP_STORAGE_FDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/iobuf.h"

#define FDCACHE_MIN_LIMIT 16 /* the smallest limit a configuration may set */
#define FDCACHE_SKIP_MAX 64  /* same-owner entries an eviction looks past (bounds its cost) */

struct fdcache;

struct fdcache_entry {
    struct fileref *file; /* the cache's (or, with no cache, the owner's) reference, or NULL */
    struct fdcache *cache; /* set while cached */
    const void *owner;     /* entries of one owner do not evict each other */
    struct fdcache_entry *prev, *next;
};

struct fdcache_stats {
    size_t open;        /* entries with an open file */
    size_t limit;
    uint64_t reopens;   /* files opened again after an eviction */
    uint64_t evictions; /* files closed to stay within the limit */
    uint64_t errors;    /* reopens that failed */
};

struct fdcache *fdcache_new(size_t limit);
/* Every entry must have been forgotten. NULL is fine. */
void fdcache_free(struct fdcache *c);
void fdcache_set_limit(struct fdcache *c, size_t limit);
void fdcache_stats(const struct fdcache *c, struct fdcache_stats *out);

/* Gives the entry f, a file its owner just opened (the entry takes the reference), and caches
 * it (c may be NULL: then it stays open). May close least recently used entries of other
 * owners (e->owner must be set). */
void fdcache_adopt(struct fdcache *c, struct fdcache_entry *e, struct fileref *f);

/* A reference to e's file (the caller puts it), opening it again when it was closed: path
 * `dir/name` (name NULL: dir itself) with flags (O_CLOEXEC is added). Returns 0 with *out, or
 * -errno (counted, and e stays closed). An open entry is only moved to the front. */
int fdcache_open(struct fdcache *c, struct fdcache_entry *e, const char *dir, const char *name,
                 int flags, struct fileref **out);

/* Drops e's file (closing it unless someone holds a reference) and unlinks it. */
void fdcache_forget(struct fdcache_entry *e);

#endif
