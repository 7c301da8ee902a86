/* A partition's log: the segmented, CRC-checked, append-only file set of one topic partition.
 *
 * This is also the partition's Raft log (DESIGN.md §6): entry = record batch, index = offset,
 * term = the batch's partitionLeaderEpoch. Hence the Raft-shaped operations: append with an
 * epoch, truncate a suffix, a leader-epoch checkpoint, and a high watermark (HW, the commit
 * index) kept apart from the log end offset (LEO). A single-node broker is a Raft group of one:
 * it sets HW itself.
 *
 * Positions: log_start <= hw <= leo; durable <= leo is what fdatasync has covered.
 *
 * Threading: all functions run on the reactor thread. Durability work (fdatasync) goes to the
 * flusher thread (storage/flusher.h); its completions come back through flusher_poll(), which
 * calls the plog's flush callback on the reactor thread.
 *
 * Errors: a failed write or fsync fences the plog (plog_fenced() becomes true). A fenced plog
 * refuses appends with -ERR_FENCED and never un-fences; reads keep working. ENOSPC on append is
 * the exception: the partial write is cut off again and -ENOSPC returned without fencing, so
 * produces work again once space is free (if the cut fails, the plog is fenced).
 *
 * Directory layout: <dir>/<base_offset %020d>.log, .index, .timeindex; leader-epoch-checkpoint;
 * recovery-point (offset below which everything was fdatasync'ed: where unclean recovery starts
 * validating); log-start-offset (written by plog_truncate_prefix and plog_reset); log-reset
 * (only while a plog_reset is under way); cleaner-checkpoint and,
 * during a compaction swap, <base>-<end>.cleaned / .swap (storage/cleaner.h). All of them are
 * checked when read back; a damaged index or checkpoint is rebuilt from the batches, never
 * trusted. With the node's small-state store (plog_config.kv) the recovery point and the
 * leader-epoch checkpoint are kept there instead of in files.
 *
 * Offset gaps: compaction (storage/cleaner.h) removes records and whole batches but never
 * moves one, so a compacted log has gaps. Reads starting in a gap start at the next batch;
 * reads, indexes, hints, timestamps, retention and recovery all allow for them.
 *
 * Syscalls that can fail on a sick disk go through storage/io.h, where tests inject faults. */
#ifndef SP_STORAGE_PLOG_H
#define SP_STORAGE_PLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/iobuf.h"

struct fdcache;
struct io_dir_list;
struct kvstore;
struct flusher;
struct plog;

struct plog_config {
    int64_t segment_bytes;        /* roll when the active segment would exceed this */
    int64_t segment_ms;           /* roll a non-empty active segment older than this */
    int64_t retention_ms;         /* -1: keep forever */
    int64_t retention_bytes;      /* -1: no size limit */
    int32_t index_interval_bytes; /* sparse index entry every this many log bytes (4096) */
    bool compact;                 /* cleanup.policy has compact: the cleaner may clean it */
    int64_t delete_retention_ms;  /* tombstones stay this long after their first clean */
    int64_t min_compaction_lag_ms; /* segments with newer records are not cleaned yet */
    double min_cleanable_dirty_ratio; /* clean when dirty / cleanable bytes exceeds this */
    struct kvstore *kv; /* where the recovery point and leader-epoch checkpoint live (under the
                         * directory's base name; storage/kvstore.h), or NULL: files in the
                         * directory. Taken at open (plog_set_config keeps the log's own). */
    bool kv_read_only;  /* opened on a thread other than the store's owner: an open that would
                         * have to write to the store (a directory made anew while the store
                         * holds values under its name, a reset to finish, a checkpoint that
                         * recovery changed, a log with no segment yet) fails with -EAGAIN
                         * instead, having done nothing that the same open on the owner's
                         * thread does not do again */
};

/* What recovery found, for the startup log line and tests. */
struct plog_recovery {
    int segments;            /* segments loaded */
    int segments_validated;  /* segments scanned batch by batch */
    int64_t truncated_bytes; /* bytes cut from the tail (0 if none) */
    int64_t truncated_at;    /* offset of the first batch cut, or -1 */
};

/* Opens (creating if needed) the log in dir. clean = the broker shut down cleanly last time:
 * then indexes are trusted and nothing is scanned. Otherwise every segment from the one holding
 * the recovery point on is validated batch by batch (size, CRC-32C, offsets strictly after the
 * previous batch, epochs non-decreasing) and the log is truncated at the first invalid byte,
 * deleting any later segments; each cut is logged (event=log_truncated with dir, offset, bytes
 * and reason). Indexes and the leader-epoch cache are rebuilt for scanned segments.
 * On success *out owns the log; release with plog_close(). rec may be NULL.
 * HW starts at LEO (a single node's whole log is committed; Raft lowers it later if needed).
 * Whatever recovery kept is fdatasync'ed before returning, so durable_offset starts at LEO too.
 * A clean open also requires the recovery point to equal the LEO found (plog_close writes it
 * only after a successful sync), else it falls back to validation (event=clean_open_fallback).
 * fl may be NULL: plog_flush() then syncs inline (tests, tools). files is the open-file cache
 * (storage/fdcache.h) the log's segment and directory descriptors live in, so an idle log may
 * hold none; NULL keeps them open for the log's life. */
int plog_open(const char *dir, const struct plog_config *cfg, struct flusher *fl,
              struct fdcache *files, bool clean, struct plog **out, struct plog_recovery *rec);

/* A restart's open of many logs, in two halves: plog_open_unsynced does what plog_open does
 * but for the final sync of what recovery kept (a segment validated after an unclean stop may
 * hold bytes only the page cache has) and what follows it: the recovery point, the flusher.
 * Until plog_open_finish_many finished it, the log may be read (HW = LEO) and closed, nothing
 * else. plog_open_finish_many finishes n such logs with one filesystem-wide sync (io_syncfs)
 * in place of each log's own fdatasyncs, which one after another on the reactor took most of a
 * restart after kill -9 at tens of thousands of partitions (PostgreSQL's
 * recovery_init_sync_method=syncfs is the same idea); logs on another filesystem than the
 * first that wants a sync, and all of them when syncfs cannot be relied on (an older kernel,
 * fewer than two logs to sync) or fails (event=open_syncfs_failed), sync their own files, as
 * plog_open does. A log holds the descriptors of the index files its recovery wrote until it
 * is finished: finish them in batches (a few thousand). Returns 0 or the first error (event
 * partition_open_failed; that log is fenced, every log is finished or fenced and stays the
 * caller's to close). */
int plog_open_unsynced(const char *dir, const struct plog_config *cfg, struct flusher *fl,
                       struct fdcache *files, bool clean, struct plog **out,
                       struct plog_recovery *rec);
int plog_open_finish_many(struct plog **logs, size_t n);

/* Flushes indexes and checkpoints (for a clean restart) and closes files. Safe while a flush
 * is in flight: waits for the flusher to finish with this log first. The results of syncs that
 * finished meanwhile are applied silently: no flush callback runs once plog_close has begun.
 * All segment files are fdatasync'ed; a fenced log (or one whose final sync fails) is not
 * marked recoverable, so its next open validates it. */
void plog_close(struct plog *log);

/* A clean stop's close of many logs: what plog_close does for each, with two filesystem-wide
 * syncs (io_syncfs) in place of each log's own, which one after another took most of a stop at
 * thousands of partitions. First every log's closing writes (its active segment sealed, its
 * leader-epoch checkpoint) are made unsynced, then one syncfs makes them and every segment's
 * data durable (per 1024 logs: a sealed log holds its new index files open until synced);
 * only then are the recovery points written, and a last syncfs makes them durable: a recovery
 * point never becomes durable before what it covers. Logs on another
 * filesystem than the first, and every log when syncfs cannot be relied on
 * (!plog_close_many_syncs_fs: an older kernel, fewer than two logs) or when the first syncfs
 * fails, are closed by plog_close instead, with their own syncs and errors. A failed second
 * syncfs writes each recovery point again, synced. Frees the logs (not the array). */
void plog_close_many(struct plog **logs, size_t n);
/* Whether plog_close_many(logs, n) makes the logs durable with filesystem-wide syncs, so that
 * their owners may write their own files in the partition directories (producer snapshots)
 * unsynced just before it: the first syncfs covers them too. */
bool plog_close_many_syncs_fs(size_t n);

/* Closes and removes the log's directory and everything in it (topic deletion). */
int plog_destroy(struct plog *log);

void plog_set_config(struct plog *log, const struct plog_config *cfg);
const char *plog_dir(const struct plog *log);
/* The node's store the log keeps its small state in, or NULL (plog_config.kv), and the key of
 * its directory there (the directory's base name): replication/replica.c keeps the Raft hard
 * state beside them. */
struct kvstore *plog_kv(const struct plog *log);
const char *plog_kv_dir(const struct plog *log);
/* A log opened with no file cache (files NULL: every file it opened stays open) hands its
 * files to files now, which may close them (and the least recently used of other logs) to stay
 * within its limit: a restart opens logs on several threads without the cache, which belongs
 * to the reactor, and the reactor adopts them in turn. */
void plog_use_file_cache(struct plog *log, struct fdcache *files);
/* Closes the directory and segment files a log opened with no file cache holds (they are
 * opened again when needed; the index files an unfinished open holds stay): a restart's
 * opener thread drops those the cache would close at once. */
void plog_drop_files(struct plog *log);
/* Descriptors the log holds open itself (not through a cache): its directory, segments and the
 * index files waiting for their first sync. */
size_t plog_open_files(const struct plog *log);
/* The names in the log's directory as plog_open_unsynced listed them, while the open is not
 * finished (NULL after: the listing is dropped then). The files the open itself created or
 * removed (a new empty segment, stray temp and index files) may differ from it; any other file
 * (a producer snapshot, say) is in it exactly when it exists. */
const struct io_dir_list *plog_open_names(const struct plog *log);
/* Whether name was in the directory when the log was opened: 1 or 0, or -1 once the listing is
 * forgotten (plog_forget_open_listing, which the first replica opened on the log calls: the
 * Raft side files it asks about are created by replicas only, so until then the answer holds
 * for them; files the log itself writes are another matter). Spares a restart of many
 * partitions a probe for each file most of them lack. */
int plog_listed_at_open(const struct plog *log, const char *name);
/* Also forgets the open's batch heads (plog_open_head). */
void plog_forget_open_listing(struct plog *log);
/* The leader epochs whose first batch header a restart's open reads. */
#define PLOG_OPEN_HEADS 4
/* The header of the batch at offset as the open read it (the first batch of each of the last
 * PLOG_OPEN_HEADS leader epochs is, by an open of an existing directory): its first
 * min(cap, KBATCH_HEADER_SIZE) bytes into buf and their count, 0 when no batch starts at
 * offset, -ENOENT when the open did not read it, after plog_forget_open_listing, or once the
 * log has changed (an append or a truncation since). A restart's opener thread reads them while
 * it has the files open, so the replicas' restore, one after another on the reactor, need not
 * open each file again. */
ssize_t plog_open_head(const struct plog *log, int64_t offset, void *buf, size_t cap);
/* The header of the batch at offset as plog_open_head gives it, or read from the log when the
 * open did not read it: its count, 0 when no batch starts at offset, or -errno. */
ssize_t plog_read_head(struct plog *log, int64_t offset, void *buf, size_t cap);
/* Ends the open's window (storage/segment.h, segment_window_drop): the bytes an open's scan of
 * the active segment read, which the reads right after the open (its batch heads, the producer
 * state's rebuild) take instead of reading the file again. The opener calls this once those are
 * done; plog_forget_open_listing and the end of the open (plog_open_finish_many) do too. */
void plog_drop_open_window(struct plog *log);
/* The partition directory's descriptor, for files of the layers above kept beside the log
 * (Raft's hard state, producer snapshots): opened again if the cache closed it, or -errno. Do
 * not keep it: it stays valid only until a file of another partition is opened. */
int plog_dirfd(struct plog *log);

int64_t plog_start_offset(const struct plog *log);
int64_t plog_end_offset(const struct plog *log); /* LEO: the offset the next batch gets */
int64_t plog_high_watermark(const struct plog *log);
int64_t plog_durable_offset(const struct plog *log); /* every offset below is fdatasync'ed */
int64_t plog_size_bytes(const struct plog *log);     /* all segments */
int plog_segment_count(const struct plog *log);
bool plog_fenced(const struct plog *log);

/* Sets HW (clamped to [log_start, LEO]); HW never moves below its current value except
 * through plog_truncate_suffix(). */
void plog_set_high_watermark(struct plog *log, int64_t hw);

/* Appends one record batch. batch/len must be a batch that passed kbatch_validate(); its
 * baseOffset is overwritten with LEO and its partitionLeaderEpoch with epoch (in place, in the
 * caller's buffer) and the bytes are written as they are. Rolls the segment first when
 * segment.bytes / segment.ms / the relative-offset range require it. Updates the sparse
 * indexes and, when epoch is new, the leader-epoch checkpoint. now_ms is used for segment.ms.
 * On success *base_offset is the batch's first offset and LEO has advanced past it.
 * Returns 0, -ERR_FENCED, -ENOSPC (nothing written), or another -errno (the log is now fenced).
 * Epochs must not decrease (CHECK). */
int plog_append(struct plog *log, uint8_t *batch, size_t len, int32_t epoch, int64_t now_ms,
                int64_t *base_offset);

/* Result of a read: one contiguous byte range of one segment file, holding whole batches. */
struct plog_read_result {
    struct fileref *file; /* a reference the caller owns (fileref_put), NULL if len == 0 */
    off_t pos;            /* file position of the first batch */
    size_t len;           /* bytes: whole batches only */
    int64_t first_offset; /* base offset of the first batch returned */
    int64_t next_offset;  /* offset after the last batch returned */
};

/* Reads batches starting with the one containing `offset`, from a single segment, stopping
 * before any batch whose last offset is >= max_offset (pass HW for consumers) and before
 * max_bytes would be exceeded, except that the first batch is always returned whole when it
 * lies below max_offset, even if larger than max_bytes (KIP-74).
 * Returns 0 (len may be 0 when offset == max_offset or nothing is below it),
 * -ERR_OUT_OF_RANGE if offset < log start or offset > LEO, or -errno on an I/O error.
 * When offset falls in a gap (deleted range), reading starts at the next batch. */
int plog_read(struct plog *log, int64_t offset, int64_t max_offset, size_t max_bytes,
              struct plog_read_result *out);
/* plog_read for consumers (Fetch): the read starts at the first batch holding records at or
 * after the one containing offset, passing over record-less batches (Raft's NOOP and CONFIG
 * entries, batches the cleaner emptied) as if they were a gap; len 0 if no batch with records
 * lies below max_offset. So a response never consists of record-less batches only: with
 * nothing else to read kafka-python 2.0.2 crashes (IndexError) and kafkajs 2.2.4 jumps to
 * HW - 1, past any data the response left out. Record-less batches after the first batch
 * are returned (clients step over them). */
int plog_read_records(struct plog *log, int64_t offset, int64_t max_offset, size_t max_bytes,
                      struct plog_read_result *out);

/* ListOffsets by time: the earliest offset whose record has a timestamp >= ts, and that
 * record's timestamp in *record_ts, as Kafka answers. The time index finds the first batch
 * whose maxTimestamp reaches ts; its records are then read (decompressed if need be,
 * kbatch_find_timestamp) for the first one that does, and later batches if none of its records
 * at or above log start does. *offset = -1 when no record qualifies. Offsets below log start
 * are skipped; HW is not applied (the broker filters). The special timestamps -1/-2 are the
 * broker's (LEO / log start). A batch whose records decompress beyond 64 MiB is answered as a
 * whole (its base offset and maxTimestamp). Returns 0, -ERR_CORRUPT (a batch read back fails
 * its CRC or framing) or -errno. */
int plog_offset_for_timestamp(struct plog *log, int64_t ts, int64_t *offset, int64_t *record_ts);
/* ListOffsets MAX_TIMESTAMP (-3, KIP-734): the first record, at or above log start, carrying
 * the largest timestamp of the log, and that timestamp; *offset = -1 in a log without records.
 * Returns as plog_offset_for_timestamp. */
int plog_offset_for_max_timestamp(struct plog *log, int64_t *offset, int64_t *record_ts);

/* Removes every batch with offset >= offset (Raft conflict truncation). offset must be >= HW
 * and >= log start (CHECK); truncation also trims the leader-epoch cache. A batch that contains
 * offset is removed whole, so LEO becomes that batch's base offset (<= offset). Durable offset
 * and recovery point are lowered to the new LEO (a sync still in flight no longer counts).
 * offset >= LEO is a no-op. Returns 0, -ERR_FENCED, or -errno (the log is now fenced). */
int plog_truncate_suffix(struct plog *log, int64_t offset);

/* Advances the log start offset to new_start (DeleteRecords), deleting whole segments that lie
 * entirely below it; persisted in log-start-offset (fsynced before anything is deleted).
 * new_start must be <= HW (CHECK); a new_start <= log start is a no-op. Returns 0 or -errno
 * (the old log start stays; the log is not fenced). */
int plog_truncate_prefix(struct plog *log, int64_t new_start);

/* Applies retention.ms (against each closed segment's largest timestamp, or its file mtime when
 * its batches carry none) and retention.bytes (oldest closed segments first) by deleting whole
 * closed segments; the active segment is never deleted, nor a segment holding offsets at or
 * above HW, nor one whose compaction swap is still pending (it waits for the next call).
 * Log start moves to the first remaining segment. Returns the number of segments
 * deleted. Logs event=segment_deleted per segment; fsyncs the directory after deleting. */
int plog_apply_retention(struct plog *log, int64_t now_ms);

/* The log start plog_apply_retention would leave now (the base of the first segment it would
 * keep; the current log start when it would delete nothing), without deleting anything: the
 * Raft adapter moves the log start itself (replication/replica.h replica_compact). */
int64_t plog_retention_start(const struct plog *log, int64_t now_ms);

/* Discards the whole log and restarts it empty at offset (a Raft install: a replica that fell
 * below the leader's log start truncates fully). Afterwards log start = HW = LEO = durable =
 * offset, the leader-epoch cache is empty, the cleaner state is fresh, and the reset hook runs
 * (or, without one, the truncated hook with leo = offset).
 * Crash-safe: the marker file `log-reset` (the offset) is written durably first; it is the
 * commit point. Then every segment file is removed, the checkpoints rewritten (empty epoch
 * cache, log start and recovery point = offset, no cleaner checkpoint), the marker removed and
 * the new empty segment created, with directory fsyncs in between. A crash before the marker is
 * durable leaves the old log untouched; after, plog_open finishes the reset (event
 * log_reset_resumed) and opens the new empty log (a damaged marker fails the open: how far the
 * reset got is unknown). Returns 0, -ERR_FENCED, or -errno: before the commit point the old log
 * stays usable; after it the log is fenced (reopen to finish). */
int plog_reset(struct plog *log, int64_t offset);

/* Rolls the active segment if it is non-empty and older than segment.ms (called from a timer). */
int plog_maybe_roll(struct plog *log, int64_t now_ms);

/* Leader-epoch cache (Raft terms): the epoch of the last batch (-1 if empty), and the end
 * offset of an epoch: the start offset of the first larger epoch, or LEO (OffsetForLeaderEpoch
 * semantics). Literally so at the edges: an epoch below every cached one gets the first cached
 * start offset, one above the last epoch gets LEO (Kafka answers UNDEFINED for both; the
 * caller compares with plog_last_epoch() if it needs to tell). */
int32_t plog_last_epoch(const struct plog *log);
int64_t plog_epoch_end_offset(const struct plog *log, int32_t epoch);
/* Read-only view of the leader-epoch cache (the Raft adapter's term ranges): the number of
 * entries, and entry i (0 <= i < count, CHECK): epoch *epoch starts at offset *start. Entries
 * ascend in both; the first starts at log start and every start is below LEO. */
size_t plog_epoch_count(const struct plog *log);
void plog_epoch_at(const struct plog *log, size_t i, int32_t *epoch, int64_t *start);

/* The Raft adapter, right after plog_open only: open sets HW = LEO (a single node's whole log is
 * committed), which is wrong for a replica of a multi-node group; this puts HW back to the
 * commit index the adapter restored (clamped to [log start, LEO]), lowering it if needed. */
void plog_restore_high_watermark(struct plog *log, int64_t hw);

/* Durability. plog_flush() asks the flusher to make everything appended so far durable
 * (fdatasync of every dirty segment file, and of the directory after segment create/delete).
 * Requests made while a sync runs are grouped into the next one (group commit). When a sync
 * completes, durable_offset advances and cb(log, durable_offset, rc, data) runs on the reactor
 * thread (from flusher_poll); rc != 0 means the sync failed and the log is now fenced.
 * Every plog_flush() is answered by a callback (several may share one), even when there was
 * nothing new to sync. The log also requests a flush by itself when it rolls a segment, so the
 * recovery point advances under acks=1 loads; the callback runs for those too. Without a
 * flusher (fl NULL at open, or after flusher_stop) the sync runs inline and the callback is
 * called before plog_flush returns. On a fenced log plog_flush does nothing. */
typedef void (*plog_flush_cb)(struct plog *log, int64_t durable_offset, int rc, void *data);
void plog_set_flush_cb(struct plog *log, plog_flush_cb cb, void *data);
void plog_flush(struct plog *log);

/* Durability of a side file of the partition (the Raft hard state, which the replica writes
 * itself): an fdatasync of f, the caller's reference (taken), off the reactor thread, so that
 * thousands of groups changing term at once (a restart) sync in parallel rather than one after
 * another. With a flusher: returns PLOG_SIDE_QUEUED and later calls cb(log, rc, data) on the
 * reactor thread (from flusher_poll) once the sync returned, unless the plog is closed first
 * (then nothing is known of that sync). At most one side sync per plog is in flight (CHECK).
 * Without a flusher it syncs here and returns 0 or -errno; cb is not called. */
#define PLOG_SIDE_QUEUED 1
typedef void (*plog_side_cb)(struct plog *log, int rc, void *data);
int plog_sync_side_file(struct plog *log, struct fileref *f, plog_side_cb cb, void *data);
/* The side sync in flight (if any) calls no callback when it returns (its owner is going). */
void plog_side_cancel(struct plog *log);

/* A filesystem barrier, for many small writes the caller made itself to files of the log's
 * filesystem (the hard states of fifty thousand groups campaigning at a restart, each of which
 * would otherwise need its own fdatasync and so its own device flush): once every write made to
 * that filesystem before the call is durable (one syncfs(2), off the reactor thread),
 * cb(rc, data) runs on the reactor thread from flusher_poll; rc != 0 means some write-back on
 * the filesystem failed since the last barrier, and nothing written before the call may be taken
 * as durable. The barrier holds one descriptor (of the log's directory) and does not belong to
 * the log: it may be in flight after plog_close, and its callback still runs (flusher_stop
 * delivers it). Available only with a flusher and where syncfs reports write-back errors
 * (Linux 5.8; plog_fs_barrier_available). Returns PLOG_SIDE_QUEUED, -ENOTSUP when not
 * available, or -errno (the directory could not be opened). */
typedef void (*plog_barrier_cb)(int rc, void *data);
bool plog_fs_barrier_available(const struct plog *log);
int plog_fs_barrier(struct plog *log, plog_barrier_cb cb, void *data);

/* Hooks for state derived from the log's batches (the broker's producer state, which keeps
 * snapshots named by offset next to the segments). Both run on the reactor thread, from inside
 * the plog call named; they may read the log (plog_scan_headers) but must not append, truncate
 * or close it.
 *   rolled(log, offset): a new segment starts at offset = LEO; every batch below it is in
 *     sealed segments. Runs in plog_append (before the batch that caused the roll is written)
 *     and plog_maybe_roll.
 *   truncated(log, leo): plog_truncate_suffix removed every batch at and above leo (the new
 *     LEO). Not called when the truncation was a no-op or failed.
 *   reset(log, offset): plog_reset discarded every batch; the log restarts empty at offset.
 *   appended(log, batch, len): plog_append wrote this batch (as stored: base offset and epoch
 *     set), whoever appended it (a client's produce at the leader, a Raft follower's copy). */
struct plog_hooks {
    void (*rolled)(struct plog *log, int64_t offset, void *data);
    void (*truncated)(struct plog *log, int64_t leo, void *data);
    void *data;
    /* plog_reset emptied the log: it restarts at offset (may be NULL: truncated is called) */
    void (*reset)(struct plog *log, int64_t offset, void *data);
    /* may be NULL */
    void (*appended)(struct plog *log, const uint8_t *batch, size_t len, void *data);
};
/* Installs hooks (copied; NULL removes them). */
void plog_set_hooks(struct plog *log, const struct plog_hooks *hooks);

/* Calls fn(header, size, data) for every batch whose last offset is >= from (clamped to log
 * start), in offset order up to LEO: header is the batch's first KBATCH_HEADER_SIZE bytes as
 * stored (valid during the call only), size its total length. Reads headers only (no CRC check:
 * open already validated whatever it did not trust). Stops at the first nonzero return of fn
 * and returns it; otherwise returns 0, or -ERR_CORRUPT / -errno when the headers cannot be read
 * or do not chain. */
typedef int (*plog_header_fn)(const uint8_t *header, int64_t size, void *data);
int plog_scan_headers(struct plog *log, int64_t from, plog_header_fn fn, void *data);

/* Raises the partitionLeaderEpoch of every batch below floor to floor, in place (the CRC does not
 * cover it), and rebuilds the leader-epoch cache. For a log a single-node release wrote before
 * partitions were Raft logs: its batches carry epoch 0, and Raft terms start at 1. Batches are
 * rewritten from the last one back (each segment fdatasync'ed), so a crash part way leaves
 * epochs that never decrease along the log, which recovery accepts; running it again finishes.
 * Returns 0 (nothing to do included) or -errno / -ERR_* (the log is then fenced). */
int plog_raise_epochs(struct plog *log, int32_t floor);

/* The cleaner's first dirty offset (offsets below it have been compacted). */
int64_t plog_cleaned_offset(const struct plog *log);

/* ---- Storage-internal: the cleaner's side door (storage/cleaner.c), reactor thread only ---- */

struct clean_job;

/* Whether the log should be cleaned now: compaction on, not fenced or disabled, no pass in
 * flight, a cleanable prefix, and (unless force) a dirty ratio above the threshold or a
 * passed tombstone horizon. *score ranks candidates (the dirty ratio). */
bool plog_clean_candidate(struct plog *log, int64_t now_ms, bool force, double *score);
/* Fills job's input with the cleanable prefix (segment references, first dirty offset,
 * checkpoint, configs) and records the pass as in flight. Returns 0, 1 if there is nothing
 * cleanable, or -errno if a file could not be opened (nothing is in flight then). */
int plog_clean_prepare(struct plog *log, int64_t now_ms, struct clean_job *job);
/* R1 of the swap protocol for job's current group: checks the group is unchanged, renames its
 * .cleaned file to .swap and swaps the segments in memory (the new one marked swapping; job->out
 * moves to the log). Returns 0, -ERR_CLOSED if the log changed under the pass, or -errno. */
int plog_clean_commit(struct plog *log, struct clean_job *job);
/* R2: the swap of the segment at base finished on disk. */
void plog_clean_swapped(struct plog *log, int64_t base);
/* The pass is over (job->rc): updates the cleaner state (first dirty offset, horizon), or
 * disables cleaning after a corrupt batch, or fences the log after a failed swap step. */
void plog_clean_finished(struct plog *log, struct clean_job *job);

#endif
