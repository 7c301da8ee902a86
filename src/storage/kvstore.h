/* The node's store of small per-partition state: values keyed by (directory, name), held in
 * memory and logged to one append-only file in the data directory, instead of a small file
 * each in every partition directory. A restart of tens of thousands of partitions then reads
 * one file, not hundreds of thousands, and a whole broker's worth of Raft hard states becomes
 * durable with one fdatasync.
 *
 * What goes here (storage/plog.c, replication/replica.c): a partition's recovery point and
 * leader-epoch checkpoint, and its Raft hard state, under the directory's base name and the
 * names those files had. Each reader asks the store first and, where it holds nothing, the
 * file (a data directory an older release wrote); once the store has a value, the file is
 * never read again.
 *
 * Contract:
 *   - kv_get sees every kv_put and kv_del made before it, at once.
 *   - Durability: a put survives a crash (kill -9 or power cut) once a kv_sync begun after it
 *     has returned 0. Before that it may be lost, and then every later put is lost too: what
 *     a crash leaves is the effect of a prefix of the puts, in order. So a value put after
 *     another never survives without it (a recovery point put after the leader-epoch
 *     checkpoint it relies on needs no sync of its own).
 *   - A directory's values go with kv_del_dir; a directory made anew must first lose any old
 *     incarnation's values, durably (storage/plog.c does it before mkdir).
 *   - Write or sync errors are returned to the caller at hand and leave the memory as the
 *     truth: the next kv_sync rewrites the whole file from memory (a new file, fdatasync'ed
 *     and renamed over the old one), so a failed write is never taken for a durable one.
 *
 * Threading: one thread (the broker's reactor, the owner) calls everything, except that the
 * fdatasync of an asynchronous sync (kv_sync_begin ... kv_sync_end) runs on another (the
 * flusher) with the file reference it was given, and that kv_get, kv_peek and kv_has_dir may
 * be called from other threads for directories the owner does not change meanwhile (a
 * restart's parallel opens, broker/topics.c). */
#ifndef SP_STORAGE_KVSTORE_H
#define SP_STORAGE_KVSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct kvstore;
struct fileref;

#define KV_FILE "kvstore"
#define KV_DIR_MAX 255 /* bytes of a directory key */
#define KV_NAME_MAX 64 /* bytes of a name */
#define KV_VALUE_MAX (1u << 20)

struct kv_stats {
    size_t dirs;           /* directories with values */
    size_t values;         /* values held */
    int64_t live_bytes;    /* what a rewrite of the file would write */
    int64_t file_bytes;    /* the file's size, buffered records included */
    uint64_t puts;         /* kv_put, kv_del and kv_del_dir calls that changed something */
    uint64_t syncs;        /* fdatasyncs of the file that succeeded */
    uint64_t rewrites;     /* whole-file rewrites (compactions, and after errors) */
    uint64_t write_errors; /* writes and syncs that failed */
};

/* Opens (creating it if missing) the store at path and replays it: records up to the first that
 * does not check out (a crash's torn tail) are applied. A file that had such a tail, or is much
 * larger than what it holds, is rewritten at once. Returns 0 and *out, or -errno / -ERR_CORRUPT
 * (the file is not a store). */
int kv_open(const char *path, struct kvstore **out);
/* Writes out and syncs what was put (a clean stop leaves it durable), then frees (at the last
 * kv_sync_end, if asynchronous syncs are still out: theirs is the only call allowed after).
 * Returns the first error; the store is closed anyway. NULL is fine. */
int kv_close(struct kvstore *kv);

/* The value of (dir, name) into buf (cap bytes): its length, -ENOENT, or -ERR_TOO_LARGE. */
ssize_t kv_get(const struct kvstore *kv, const char *dir, const char *name, void *buf, size_t cap);
/* The same without a copy: *val points at the value (valid until the next change of the
 * store), *len its length. 0 or -ENOENT. */
int kv_peek(const struct kvstore *kv, const char *dir, const char *name, const void **val,
            size_t *len);
/* Whether dir has any value. */
bool kv_has_dir(const struct kvstore *kv, const char *dir);

/* Sets, removes one value, or every value of dir (not durable until a kv_sync). Lengths beyond
 * KV_DIR_MAX, KV_NAME_MAX, KV_VALUE_MAX are refused with -ERR_INVALID. Returns 0 or -errno
 * (writing buffered records failed; the change is made in memory all the same). */
int kv_put(struct kvstore *kv, const char *dir, const char *name, const void *val, size_t len);
int kv_del(struct kvstore *kv, const char *dir, const char *name);
int kv_del_dir(struct kvstore *kv, const char *dir);

/* Hands buffered records to the file (write(2), no sync). Called now and then by the owner so
 * that a kill -9 loses little: an unsynced value lost costs only a longer recovery. */
int kv_flush(struct kvstore *kv);
/* Makes everything put so far durable (on this thread). 0 or -errno. */
int kv_sync(struct kvstore *kv);
/* The same in two halves: begin writes out what is buffered (rewriting the file if an error
 * made that necessary) and gives a reference to the file to fdatasync elsewhere and the
 * sequence it covers; end reports the sync's result (0 makes that sequence durable). */
int kv_sync_begin(struct kvstore *kv, struct fileref **file, uint64_t *seq);
void kv_sync_end(struct kvstore *kv, uint64_t seq, int rc);
/* Whether every put up to now is durable. */
bool kv_synced(const struct kvstore *kv);

void kv_get_stats(const struct kvstore *kv, struct kv_stats *out);

/* For tests and the fuzz target: a store held in memory only, replayed from a file's bytes (as
 * kv_open replays them: *valid is where the records it kept end); -ERR_CORRUPT when they do not
 * start with a store's header. Puts change the memory only. */
int kv_open_bytes(const uint8_t *data, size_t len, size_t *valid, struct kvstore **out);
/* The file a rewrite writes: the header and one PUT per value (mem_alloc'd, length *len). */
uint8_t *kv_image(const struct kvstore *kv, size_t *len);

#endif
