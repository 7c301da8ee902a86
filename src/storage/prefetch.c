/* Read-ahead of partition directories on a few threads, ahead of a restart's opens
 * (storage/prefetch.h).
 *
 * Owns: a copy of the directory names, the threads, and a cursor shared by them.
 *
 * Invariants (under mu):
 *   1. next <= n: dirs[0..next) have been taken by a thread or passed over (invariants 5 and
 *      6); none is taken twice.
 *   2. A thread takes dirs[next] only while next < limit, and limit only grows (to the last
 *      position reported plus window, at most n): the threads never read more than window
 *      directories ahead of the opener (a sampling step may pass limit; what it passes over
 *      is never read).
 *   3. busy counts the threads reading a directory; idle_cv is signalled whenever it drops to
 *      zero, so prefetch_wait_idle returns once nothing the window allows is left.
 *   4. The threads only read: nothing here writes to a file, a directory or a shared structure
 *      outside this file.
 *   5. After PREFETCH_WARM_STREAK directories in a row found cached already, listing and files
 *      (a restart soon after a stop), only one directory in PREFETCH_SAMPLE is looked at, until
 *      one is not cached or the opener reports a read of its own (prefetch_missed): with a warm
 *      cache the threads' opens would only take CPU from the opener.
 *   6. A thread never takes a directory the opener has reached (passed <= next when one is
 *      taken): read behind the opener, it would only cost CPU. */
#include "storage/prefetch.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/check.h"
#include "base/mem.h"
#include "storage/io.h"

#define PREFETCH_WARM_STREAK 8
#define PREFETCH_SAMPLE 64

struct prefetch {
    char **dirs;
    size_t n;
    size_t window;
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* the threads wait for the window to move (or stop) */
    pthread_cond_t idle_cv; /* prefetch_wait_idle waits for busy == 0 */
    size_t next;
    size_t limit;
    size_t passed; /* dirs[0..passed) the opener has reached */
    int busy;
    unsigned warm_streak; /* directories in a row found cached already */
    bool stop;
    struct prefetch_stats stats;
    pthread_t *threads;
    int n_threads;
};

/* Whether the byte at off of fd is in the page cache already (a read that would not wait).
 * Not a pure question: on a miss the kernel starts reading that byte's page before it answers
 * EAGAIN, and if the thread was preempted meanwhile (a busy machine) the read has finished and
 * the probe answers yes. So a yes vouches for that one page only. */
static bool cached(int fd, off_t off)
{
    char b;
    struct iovec v = {&b, 1};
    return preadv2(fd, &v, 1, off, RWF_NOWAIT) == 1;
}

/* Reads one file ahead: all of it, or the tail of a big one; unless it is cached already.
 * Returns false when it had to be read (true: cached, empty, or not to be read at all). */
static bool read_file_ahead(int dfd, const char *name, struct prefetch_stats *st)
{
    int fd = io_open_noatime(dfd, name, O_RDONLY | O_NOFOLLOW);
    if (fd < 0)
        return true;
    bool warm = true;
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
        off_t off = sb.st_size > PREFETCH_FILE_MAX ? sb.st_size - PREFETCH_FILE_MAX : 0;
        size_t len = (size_t)(sb.st_size - off);
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        warm = cached(fd, off);
        st->cached += warm;
        /* the probe vouches for its own page only: a window past it is read ahead regardless
         * (on pages cached already readahead(2) only looks them up) */
        bool past_probe = (size_t)off % page + len > page;
        if ((!warm || past_probe) && readahead(fd, off, len) == 0 && !warm) {
            st->files++;
            st->bytes += len;
        }
    }
    close(fd);
    return warm;
}

/* Returns whether dir and every file of it were cached already. The directory's own blocks
 * count: after a kill -9 the segments' tails were just written (cached) while the directories,
 * last listed at the previous start, may have been reclaimed since, and each opener's listing
 * would then wait for the disk on its own. Whether its listing read from the disk is what this
 * thread's block-input count says (a listing has no probe like the files' RWF_NOWAIT). */
static bool read_dir_ahead(const char *dir, struct prefetch_stats *st)
{
    long in0 = io_thread_blocks_read();
    int fd = io_open_noatime(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0)
        return false;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return false;
    }
    st->dirs++;
    struct dirent *e = readdir(d); /* the first reads the directory's blocks */
    bool warm = in0 >= 0 && io_thread_blocks_read() == in0;
    st->dirs_cold += !warm;
    /* of the segments, the last (recovery reads its tail); no index or producer snapshot (read
     * when first used, not by an open) */
    char last_log[sizeof(e->d_name)] = "";
    for (; e != NULL; e = readdir(d)) {
        const char *name = e->d_name;
        if (name[0] == '.' || (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) ||
            io_has_suffix(name, ".index") || io_has_suffix(name, ".timeindex") ||
            io_has_suffix(name, ".snapshot"))
            continue;
        if (io_has_suffix(name, ".log")) {
            if (strcmp(name, last_log) > 0)
                snprintf(last_log, sizeof(last_log), "%s", name);
            continue;
        }
        warm &= read_file_ahead(dirfd(d), name, st);
    }
    if (last_log[0])
        warm &= read_file_ahead(dirfd(d), last_log, st);
    closedir(d);
    return warm;
}

static void *prefetch_main(void *arg)
{
    struct prefetch *pf = arg;
    CHECK(pthread_mutex_lock(&pf->mu) == 0);
    for (;;) {
        for (;;) {
            if (pf->next < pf->passed)
                pf->next = pf->passed; /* invariant 6 */
            if (pf->stop || pf->next < pf->limit)
                break;
            CHECK(pthread_cond_wait(&pf->work_cv, &pf->mu) == 0);
        }
        if (pf->stop)
            break;
        size_t i = pf->next;
        /* invariant 5: a warm cache is only sampled */
        size_t step = pf->warm_streak >= PREFETCH_WARM_STREAK ? PREFETCH_SAMPLE : 1;
        pf->next = step < pf->n - i ? i + step : pf->n; /* may pass limit: skipped */
        pf->busy++;
        CHECK(pthread_mutex_unlock(&pf->mu) == 0);
        struct prefetch_stats st = {0};
        bool warm = read_dir_ahead(pf->dirs[i], &st);
        CHECK(pthread_mutex_lock(&pf->mu) == 0);
        pf->warm_streak = warm ? pf->warm_streak + 1 : 0;
        pf->stats.dirs += st.dirs;
        pf->stats.dirs_cold += st.dirs_cold;
        pf->stats.files += st.files;
        pf->stats.cached += st.cached;
        pf->stats.bytes += st.bytes;
        if (--pf->busy == 0)
            CHECK(pthread_cond_broadcast(&pf->idle_cv) == 0);
    }
    CHECK(pthread_mutex_unlock(&pf->mu) == 0);
    return NULL;
}

static void free_pf(struct prefetch *pf)
{
    for (size_t i = 0; i < pf->n; i++)
        mem_free(pf->dirs[i]);
    mem_free(pf->dirs);
    mem_free(pf->threads);
    pthread_cond_destroy(&pf->idle_cv);
    pthread_cond_destroy(&pf->work_cv);
    pthread_mutex_destroy(&pf->mu);
    mem_free(pf);
}

struct prefetch *prefetch_start(const char *const *dirs, size_t n, int threads, size_t window)
{
    if (n == 0 || threads <= 0 || window == 0)
        return NULL;
    struct prefetch *pf = mem_calloc(1, sizeof(*pf));
    pf->dirs = mem_calloc(n, sizeof(*pf->dirs));
    for (size_t i = 0; i < n; i++)
        pf->dirs[i] = mem_strdup(dirs[i]);
    pf->n = n;
    pf->window = window;
    pf->limit = window < n ? window : n;
    CHECK(pthread_mutex_init(&pf->mu, NULL) == 0);
    CHECK(pthread_cond_init(&pf->work_cv, NULL) == 0);
    CHECK(pthread_cond_init(&pf->idle_cv, NULL) == 0);
    pf->threads = mem_calloc((size_t)threads, sizeof(*pf->threads));
    /* an optimization: fewer threads (or none, then no prefetch) if they cannot be had */
    while (pf->n_threads < threads &&
           pthread_create(&pf->threads[pf->n_threads], NULL, prefetch_main, pf) == 0)
        pf->n_threads++;
    if (pf->n_threads == 0) {
        free_pf(pf);
        return NULL;
    }
    return pf;
}

void prefetch_reached(struct prefetch *pf, size_t i)
{
    if (!pf)
        return;
    size_t limit = i < pf->n && pf->n - i > pf->window ? i + pf->window : pf->n;
    CHECK(pthread_mutex_lock(&pf->mu) == 0);
    pf->passed = MAX(pf->passed, MIN(i + 1, pf->n));
    if (limit > pf->limit) {
        /* wake the threads only if this made work for them (not when a sampling step passed
         * the new limit too: a wake-up per partition opened cost the opener its CPU) */
        bool starved = pf->next >= pf->limit;
        pf->limit = limit;
        if (starved && pf->next < limit)
            CHECK(pthread_cond_broadcast(&pf->work_cv) == 0);
    }
    CHECK(pthread_mutex_unlock(&pf->mu) == 0);
}

void prefetch_missed(struct prefetch *pf)
{
    if (!pf)
        return;
    CHECK(pthread_mutex_lock(&pf->mu) == 0);
    pf->warm_streak = 0;
    pf->stats.missed++;
    CHECK(pthread_mutex_unlock(&pf->mu) == 0);
}

void prefetch_wait_idle(struct prefetch *pf)
{
    if (!pf)
        return;
    CHECK(pthread_mutex_lock(&pf->mu) == 0);
    while (pf->next < pf->limit || pf->busy > 0)
        CHECK(pthread_cond_wait(&pf->idle_cv, &pf->mu) == 0);
    CHECK(pthread_mutex_unlock(&pf->mu) == 0);
}

void prefetch_stop(struct prefetch *pf, struct prefetch_stats *stats)
{
    if (!pf) {
        if (stats)
            memset(stats, 0, sizeof(*stats));
        return;
    }
    CHECK(pthread_mutex_lock(&pf->mu) == 0);
    pf->stop = true;
    CHECK(pthread_cond_broadcast(&pf->work_cv) == 0);
    CHECK(pthread_mutex_unlock(&pf->mu) == 0);
    for (int i = 0; i < pf->n_threads; i++)
        CHECK(pthread_join(pf->threads[i], NULL) == 0);
    if (stats)
        *stats = pf->stats;
    free_pf(pf);
}
