/* An ordered work pool: n jobs run on a few threads (the caller's among them) and are handed back
 * to the caller's thread one by one in index order, each once it has run. A restart opens its
 * partitions this way (broker/topics.c): the opens, mostly system calls on different
 * directories, run in parallel, while what must stay on the reactor thread (the file cache,
 * the syncs of a batch of logs, the topic registry) happens in order as each is handed back.
 *
 * Bounds: a job starts only while fewer than `window` jobs are run but not yet taken, and while
 * the descriptors those hold (as run reports them) are at most `fd_budget`; a job may take the
 * total beyond it (its own count is known only once it ran).
 *
 * Contract of the callbacks (data is passed to each):
 *   run(i, &fds)  any thread, once per job started: does job i, returns its result and sets
 *                 *fds to the descriptors it holds until taken.
 *   take(i, rc)   the caller's thread, in index order, once per job run: rc is run's result. A
 *                 nonzero return stops the pool: no job starts after it, and the jobs that ran
 *                 but were not taken go to discard.
 *   discard(i, rc) the caller's thread, after a stop, once per job run and never taken.
 * workpool_run returns the first nonzero take() result, or 0 when every job was taken. */
#ifndef SP_BASE_WORKPOOL_H
#define SP_BASE_WORKPOOL_H

#include <stddef.h>

struct workpool_ops {
    int (*run)(size_t i, size_t *fds, void *data);
    int (*take)(size_t i, int rc, void *data);
    void (*discard)(size_t i, int rc, void *data);
};

/* Runs jobs 0..n-1 on `threads` threads in all (1: only the caller's; more threads than can be
 * started are done without). */
int workpool_run(size_t n, int threads, size_t window, size_t fd_budget,
                 const struct workpool_ops *ops, void *data);

#endif
