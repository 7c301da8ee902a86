/* The flusher: a thread that runs fdatasync off the reactor thread, with group commit.
 *
 * plog_flush() queues work here; the thread takes every queued request at once, syncs each file
 * once, and posts completions. The reactor watches flusher_fd() (an eventfd) for readability and
 * then calls flusher_poll(), which delivers completions to the plogs (advancing their durable
 * offset, or fencing them on error) and their flush callbacks, on the reactor thread.
 *
 * Also used for other blocking file work that must not stall the reactor (directory fsyncs,
 * removal of deleted partition directories). */
#ifndef SP_STORAGE_FLUSHER_H
#define SP_STORAGE_FLUSHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/histogram.h"

struct flusher;
struct fileref;
struct epoch_cache;

/* Starts the thread. Returns 0 and *out, or -errno. */
int flusher_start(struct flusher **out);
/* Drains queued work, joins the thread, frees. Completions still pending are delivered first.
 * Plogs still open afterwards fall back to syncing inline in plog_flush(). */
void flusher_stop(struct flusher *fl);
/* Readable when completions are waiting. */
int flusher_fd(const struct flusher *fl);
/* Delivers waiting completions; returns how many. Reactor thread only. */
int flusher_poll(struct flusher *fl);

/* Statistics (for metrics): syncs done and the total time spent in them. */
struct flusher_stats {
    uint64_t syncs;
    uint64_t sync_errors;
    uint64_t sync_ns_total;
    uint64_t sync_ns_max;
    struct histogram sync_latency; /* ns per fdatasync/fsync (histogram_latency_ns buckets) */
};
void flusher_get_stats(const struct flusher *fl, struct flusher_stats *out);

/* ---- Storage-internal: how a plog talks to the flusher (not for the broker) ----
 *
 * Each plog embeds one flush_req. Files handed to it accumulate (deduplicated) until the thread
 * takes the request; a request is queued at most once, so every submission made while a sync
 * runs is grouped into the next one. Completions come back through req->done on the reactor
 * thread. All fields below `done` are protected by the flusher's mutex while attached. */
struct flush_req {
    /* called on the reactor thread for each completed sync; epochs_version is that of the
     * leader-epoch snapshot the sync stored (0: none); notify is false when the owner is
     * detaching (then only the state is updated, no callback runs) */
    void (*done)(struct flush_req *req, int64_t target, uint64_t gen, uint64_t epochs_version,
                 int rc, bool notify);
    struct flusher *fl;         /* NULL when not attached (or the flusher stopped) */
    struct fileref **files;     /* to fdatasync at the next sync; refs owned */
    size_t n_files;             /* entries in files */
    size_t cap_files;           /* entries allocated */
    struct fileref *dir;        /* directory to fsync at the next sync (ref owned), or NULL */
    struct epoch_cache *epochs; /* epoch snapshot to store after the files (owned), or NULL */
    uint64_t epochs_version;    /* the owner's version of that snapshot */
    int64_t target;             /* durable offset the next sync establishes */
    uint64_t gen;               /* owner's generation for target */
    bool syncfs;                /* set by the owner before attaching: each file stands for its
                                   filesystem, made durable whole by syncfs(2) (a barrier,
                                   storage/plog.h plog_fs_barrier) rather than fdatasync'ed */
    bool queued;                /* in the flusher's queue */
    bool running;               /* the thread is syncing it */
    struct flush_req *next;     /* queue link */
    struct flush_req *reg_prev; /* attached list */
    struct flush_req *reg_next;
};

/* Registers req (its `done` set, other fields zero). Reactor thread. */
void flusher_attach(struct flusher *fl, struct flush_req *req);
/* Adds files (taking over the n references in files[]), the directory (a reference, or NULL)
 * and the target, and queues req if it is not queued. epochs (owned from here, or NULL) is a
 * leader-epoch snapshot of version epochs_version, replacing one not yet taken: once the files
 * are synced the thread stores it as the directory's checkpoint (epoch_cache_store, whose
 * directory fsync stands for the directory's), and the completion names its version. A
 * snapshot needs the directory (dir, or one given earlier for the same sync). */
void flusher_submit(struct flusher *fl, struct flush_req *req, struct fileref **files, size_t n,
                    struct fileref *dir, struct epoch_cache *epochs, uint64_t epochs_version,
                    int64_t target, uint64_t gen);
/* Drops req's snapshot not yet taken and waits until no sync of req is running, so the caller
 * may write the checkpoint itself without a store of the thread's overtaking it. */
void flusher_quiesce(struct flusher *fl, struct flush_req *req);
/* Unqueues req, waits for its running sync, applies its undelivered completions with
 * notify=false and unregisters it. Files not yet synced stay in req->files/req->dir for the
 * owner. Afterwards req->fl is NULL. */
void flusher_detach(struct flusher *fl, struct flush_req *req);
/* Unregisters a one-shot req from within its own completion (neither queued nor running: a
 * filesystem barrier), also while flusher_stop delivers the last completions (req->fl is NULL
 * then, so fl is passed). req may be freed afterwards. */
void flusher_release(struct flusher *fl, struct flush_req *req);

#endif
