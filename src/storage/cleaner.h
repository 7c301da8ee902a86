/* The log cleaner: compaction of logs with cleanup.policy=compact (storage/compact.h says what
 * happens to each batch; this is the machinery around it).
 *
 * Threads. Cleaning runs on cleaner threads (log.cleaner.threads), never on the reactor. The
 * reactor only picks logs (cleaner_offer / cleaner_dispatch), and for each finished segment
 * group performs the commit: a rename and an in-memory swap of segment structs (cleaner_poll,
 * woken by cleaner_fd()). Blocking work (reading, writing, fdatasync, directory fsync, unlinks)
 * stays on the cleaner thread.
 *
 * A pass over one log (Kafka's Cleaner.clean):
 *   1. map: the keys of the dirty range [first dirty, end of the cleanable prefix) -> offset of
 *      their latest record, in a key map capped at log.cleaner.dedupe.buffer.size / threads. A
 *      full map ends the mapped range early (at a batch boundary): the rest waits for the next
 *      pass, so any dirty range is cleaned in as many passes as it takes.
 *   2. rewrite: the segments from the first one through the one holding the end of the mapped
 *      range, in groups of consecutive segments whose sizes add up to at most segment.bytes,
 *      each group into one new segment that keeps the first one's base offset.
 *   3. swap each group in (the protocol below), in offset order, one at a time.
 *   4. checkpoint: `cleaner-checkpoint` records the new first dirty offset.
 * The cleanable prefix: sealed segments (never the active one), fully below HW, already handed
 * to a sync, and (min.compaction.lag.ms) whose newest timestamp is old enough. A log is cleaned
 * when its dirty ratio (dirty bytes / cleanable bytes) exceeds min.cleanable.dirty.ratio, or
 * when a kept tombstone's delete horizon has passed.
 *
 * Producer state. A batch whose records all go is dropped unless it is the last batch of its
 * producer id among the segments the pass saw: that one stays as an empty header (Kafka's
 * rule), so the producer's id, epoch and last sequence survive. Rebuilding producer state from
 * a compacted log must accept sequence gaps between the batches it finds.
 *
 * The log's last batch is never dropped or emptied (its expired tombstones wait for the next
 * write, delete.retention.ms being a minimum): removing it would end the log in an offset gap,
 * where a consumer's position stays below the high watermark for good (librdkafka then never
 * reports the end of the partition). Kafka avoids this by rolling segments only on append, so
 * its last batch is always in the uncleaned active segment; segment.ms rolls here on a timer.
 *
 * On-disk swap protocol for a group of old segments with bases X = b0 < ... < bk, followed by a
 * segment at E (the group covers offsets [X, E)):
 *   C1 (thread)  write `X-E.cleaned` (%020lld-%020lld), fdatasync it; write cleaner-checkpoint
 *                with gaps_below >= E, fsynced with its directory entry.
 *   R1 (reactor) check the group is still exactly what was read (same files, sealed, below HW,
 *                log not fenced); rename `X-E.cleaned` -> `X-E.swap` (the commit point); swap
 *                the segment structs in memory; the new segment is marked `swapping`.
 *   C2 (thread)  fsync the directory (the commit is durable); unlink every old segment's .log,
 *                .index, .timeindex; fsync the directory; rename `X-E.swap` -> `X.log`; write
 *                X.index and X.timeindex (temp file, fdatasync, rename, directory fsync).
 *   R2 (reactor) clear `swapping`.
 * Recovery (cleaner_recover_dir, at every plog_open, before segments are listed): delete
 * `*.cleaned`; for each `X-E.swap`: unlink every segment file with base in [X, E), fsync the
 * directory, rename the swap file to X.log, fsync the directory. Why any crash leaves a
 * correct log:
 *   - before the rename of R1 is durable, the directory holds the old segments (untouched)
 *     and maybe a .cleaned file: recovery deletes it, the log is as before the pass;
 *   - once it is durable, the .swap file is complete (fdatasync'ed before the rename) and
 *     covers exactly [X, E) by its name: recovery removes whatever is left of the old
 *     segments in that range and renames it, whatever subset of C2 had happened (each C2 step
 *     is repeated or skipped idempotently). The old files are unlinked only after the commit
 *     is durable (C2's first fsync), and the final rename only after the unlinks are durable
 *     (its second), so no state exists where both old and new data, or neither, are live;
 *   - index files are derived data: missing ones are rebuilt from the log at open, and the
 *     old X.index is gone (durably) before the new X.log appears.
 *   - gaps: the cleaned segment has offset gaps; recovery validation accepts a gap only
 *     before a batch starting at or below the checkpoint's gaps_below, which was made durable
 *     before the commit, so a crash never makes recovery cut a cleaned segment.
 * While a swap is pending (R1..R2) the plog neither deletes the segment (retention waits) nor
 * writes index files for it, and keeps its indexes in memory.
 *
 * Tombstones follow KIP-534 (storage/compact.h): removed on a pass after their batch's delete
 * horizon, and only when below the end of the pass's mapped range, so an older record of the
 * same key is always removed by an earlier or the same pass (earlier groups swap first).
 *
 * Untrusted input: a batch that does not decode stops the pass and disables cleaning of that
 * log until restart (event=cleaner_disabled), leaving the log as it was. */
#ifndef SP_STORAGE_CLEANER_H
#define SP_STORAGE_CLEANER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "storage/keymap.h"

struct cleaner;
struct fileref;
struct plog;
struct segment;

struct cleaner_config {
    int threads;                     /* log.cleaner.threads */
    int64_t dedupe_buffer_bytes;     /* log.cleaner.dedupe.buffer.size: all key maps together */
    int64_t io_max_bytes_per_second; /* log.cleaner.io.max.bytes.per.second, <= 0 unlimited */
    /* A batch that loses every record becomes an empty header instead of going away, so the
     * log keeps every offset (a Raft log must: a follower catching up reads it contiguously,
     * and offsets are Raft indexes). The broker always sets it. */
    bool keep_batches;
};

/* What one pass did (also the log line of event=log_cleaned). */
struct clean_pass_stats {
    int segments_before;     /* old segments replaced */
    int segments_after;      /* new segments swapped in */
    int64_t bytes_read;      /* bytes of the segments read while rewriting */
    int64_t bytes_before;    /* of the replaced segments */
    int64_t bytes_after;     /* of their replacements */
    int64_t records_read;    /* records examined while rewriting */
    int64_t records_removed; /* superseded records and expired tombstones */
    int64_t tombstones_removed;
    int64_t first_dirty;  /* dirty range of the pass: [first_dirty, cleaned_upto) */
    int64_t cleaned_upto; /* the new first dirty offset */
    int64_t keys;         /* distinct keys mapped */
    int64_t duration_ms;
    bool map_full; /* the key map filled up: the dirty range continues */
};

/* Cleaner statistics (for metrics). */
struct cleaner_stats {
    uint64_t passes;          /* passes completed */
    uint64_t passes_failed;   /* passes aborted (log changed, I/O error, corrupt batch) */
    uint64_t bytes_read;      /* segment bytes read while rewriting */
    uint64_t bytes_written;   /* cleaned segment bytes swapped in */
    uint64_t bytes_reclaimed; /* before - after, over all swaps */
    uint64_t records_removed;
    uint64_t tombstones_removed;
    int64_t last_duration_ms; /* of the last completed pass */
    double last_mb_per_s;     /* bytes_read of the last pass / its duration */
    int64_t max_duration_ms;
};

/* Starts the threads. Returns 0 and *out, or -errno. */
int cleaner_start(const struct cleaner_config *cfg, struct cleaner **out);
/* Abandons the jobs still running (their logs stay consistent: a committed swap is finished
 * inline), joins the threads, frees. Reactor thread. */
void cleaner_stop(struct cleaner *cl);
/* Readable when the reactor has work waiting (call cleaner_poll). */
int cleaner_fd(const struct cleaner *cl);
/* Commits finished groups and finishes passes; returns the number of passes that ended.
 * Reactor thread. */
int cleaner_poll(struct cleaner *cl);
/* Considers log for cleaning (compaction on, nothing in flight, dirty enough or a tombstone
 * horizon passed); the filthiest offered logs get the idle threads at cleaner_dispatch. */
void cleaner_offer(struct cleaner *cl, struct plog *log, int64_t now_ms);
/* Starts passes for the best offers on idle threads and forgets all offers. Returns how many
 * started. */
int cleaner_dispatch(struct cleaner *cl);
void cleaner_get_stats(const struct cleaner *cl, struct cleaner_stats *out);

/* Runs one pass over log on the calling thread (tests and tools): the same steps as a cleaner
 * thread, with commits inline. force ignores the dirty ratio (not the cleanable prefix).
 * map_bytes caps the key map; io_rate throttles (<= 0: no limit). Returns 1 if a pass ran
 * (*st filled), 0 if there was nothing to clean, or a negative code (the pass failed; the log
 * is as before it, or fenced if a swap step failed). st may be NULL. */
int cleaner_run_once(struct plog *log, int64_t now_ms, bool force, size_t map_bytes,
                     struct clean_pass_stats *st);
/* The same, with cleaner_config's keep_batches (cleaner_run_once: false). */
int cleaner_run_once_keeping(struct plog *log, int64_t now_ms, bool force, size_t map_bytes,
                             bool keep_batches, struct clean_pass_stats *st);

/* ---- Storage-internal: shared by cleaner.c and plog.c (not for the broker) ---- */

#define CLEANER_CHECKPOINT_FILE "cleaner-checkpoint"

/* The persisted cleaner state of one log. */
struct clean_checkpoint {
    int64_t first_dirty; /* offsets below were cleaned (0 when never) */
    int64_t gaps_below;  /* the cleaner may have rewritten offsets below this (-1: never) */
    int64_t horizon_ms;  /* earliest delete horizon among kept tombstones (-1: none) */
};
/* Reads the checkpoint: 0, -ENOENT, or -ERR_CORRUPT for a damaged file. */
int clean_checkpoint_read(int dirfd, struct clean_checkpoint *out);
int clean_checkpoint_write(int dirfd, const struct clean_checkpoint *c, bool sync);

/* Completes or rolls back interrupted swaps in a partition directory (see above), whose names
 * are in `names` (a listing of dirfd). Returns 0 when it found nothing to do, 1 when it changed
 * the directory (the listing is stale: list again), or -errno. dir names it in log lines. */
struct io_dir_list;
int cleaner_recover_dir(int dirfd, const char *dir, const struct io_dir_list *names);

/* One sealed segment as a pass saw it. */
struct clean_seg {
    int64_t base;
    int64_t end; /* next segment's base */
    int64_t size;
    struct fileref *file; /* reference held by the job (open even if the cache closes it) */
    uint64_t id;          /* the segment's id: the identity the commit checks */
};

/* Consecutive segments rewritten into one. */
struct clean_group {
    size_t first; /* index in the job's segs */
    size_t n;
    int64_t base; /* = segs[first].base */
    int64_t end;  /* = segs[first + n - 1].end */
};

enum clean_phase {
    CLEAN_BUILD,  /* thread: map, plan, write the first group */
    CLEAN_COMMIT, /* reactor: a group's .cleaned file is ready (R1) */
    CLEAN_SWAP,   /* thread: C2 for the committed group, then write the next */
    CLEAN_DONE,   /* reactor: the pass is over; rc says how */
};

struct clean_job {
    /* ---- input, filled by plog_clean_prepare on the reactor ---- */
    struct plog *log;       /* reactor side only */
    char *dir;              /* for log lines (owned) */
    struct fileref *dirref; /* the partition directory (reference owned) */
    struct clean_seg *segs; /* the cleanable prefix, oldest first (owned) */
    size_t n_segs;
    int64_t first_dirty;
    int64_t log_end;              /* LEO when the pass began */
    struct clean_checkpoint ckpt; /* as of the start of the pass */
    int64_t now_ms;
    int64_t delete_retention_ms;
    int64_t segment_bytes;
    int32_t index_interval;
    /* ---- set by the runner ---- */
    struct cleaner *cl; /* NULL when run inline */
    size_t map_bytes;
    int64_t io_rate;
    bool keep_batches; /* an emptied batch stays as an empty header (cleaner_config) */
    /* ---- thread state ---- */
    struct keymap map;
    struct keymap pids; /* producer id -> base offset of its last batch */
    bool pids_full;     /* too many producers: keep every emptied batch's header */
    int64_t map_end;    /* end of the mapped range */
    struct clean_group *groups;
    size_t n_groups;
    size_t cur;            /* group being written or swapped */
    struct segment *out;   /* COMMIT: the group's new segment (moves to the plog) */
    char cleaned_name[64]; /* "X-E.cleaned" of the current group */
    char swap_name[64];    /* "X-E.swap" */
    uint8_t *oidx;         /* encoded index files of the current group */
    size_t oidx_len;
    uint8_t *tidx;
    size_t tidx_len;
    int64_t horizon_ms;   /* earliest delete horizon of the tombstones kept */
    int64_t out_before;   /* bytes of the current group's old segments */
    int64_t swapped_base; /* inline runs: a swap finished (R2 due), else -1 */
    uint8_t *buf;         /* read buffer */
    size_t buf_cap;
    int64_t start_ns;
    int64_t throttle_bytes; /* bytes read/written, for the io rate */
    struct clean_pass_stats st;
    /* ---- control ---- */
    enum clean_phase phase;
    int rc;                     /* CLEAN_DONE: 0 or why the pass failed */
    const char *why;            /* what failed (log lines) */
    int64_t bad_offset;         /* corrupt batch found here, or -1 */
    bool fence;                 /* a swap step failed after the commit: fence the log */
    int cancel;                 /* atomic: the log is going away, stop soon */
    bool queued;                /* in the thread queue (cleaner mutex) */
    bool running;               /* a thread runs a step (cleaner mutex) */
    struct clean_job *next;     /* thread queue link */
    struct clean_job *reg_next; /* the cleaner's registry of live jobs */
    struct clean_job **reg_pprev;
};

/* The log is closing, truncating or being destroyed: stops its pass, leaving the directory
 * consistent (a committed swap is finished inline, uncommitted output removed) and frees the
 * job. Reactor thread. */
void clean_job_abandon(struct clean_job *job);

#endif
