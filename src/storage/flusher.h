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

#include <stdint.h>

struct flusher;

/* Starts the thread. Returns 0 and *out, or -errno. */
int flusher_start(struct flusher **out);
/* Drains queued work, joins the thread, frees. Completions still pending are delivered first. */
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
};
void flusher_get_stats(const struct flusher *fl, struct flusher_stats *out);

#endif
