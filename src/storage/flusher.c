/* The flusher thread: fdatasync off the reactor thread, with group commit.
 *
 * Owns: a queue of flush_reqs (one per plog, each queued at most once), a FIFO of completions,
 * the eventfd that tells the reactor completions are waiting, and the statistics.
 *
 * States of a flush_req: idle -> queued (flusher_submit) -> running (thread took it; its files
 * were moved out) -> idle (completion posted). A submit while running queues it again, so
 * appends made during a sync are covered by the next one (group commit).
 *
 * Invariants:
 *   1. A queued or running req is attached; detach waits out `running` and removes `queued`.
 *   2. A completion names an attached req (detach removes the req's completions), so
 *      flusher_poll never touches a freed plog.
 *   3. The thread only touches files through references it owns, so segment deletion or plog
 *      close never pulls an fd from under a sync.
 *   4. The thread never holds the mutex while syncing.
 *   5. A pass (everything taken at once) may be spread over the helper threads, one request
 *      per helper at a time, a request's files synced in order by one thread; completions are
 *      posted only after every request of the pass has finished, each with its own result, so
 *      an append is reported durable only after its own files' syncs returned. */
#include "storage/flusher.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base/check.h"
#include "base/iobuf.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "storage/epoch_cache.h"
#include "storage/io.h"

#define FLUSHER_HELPERS 15 /* threads that sync with the flusher's own: 16 syncs at once */

struct completion {
    struct flush_req *req;
    int64_t target;
    uint64_t gen;
    uint64_t epochs_version; /* of the leader-epoch snapshot stored, 0 none */
    int rc;
};

struct flusher {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* the thread waits for work */
    pthread_cond_t idle_cv; /* detach waits for a running req */
    struct flush_req *head; /* queue */
    struct flush_req *tail;
    struct completion *done; /* FIFO: [done_head, n_done) pending */
    size_t done_head;
    size_t n_done;
    size_t cap_done;
    struct flush_req *attached; /* registry of attached reqs */
    int efd;
    bool stop;
    struct flusher_stats stats;
    /* helpers: while the thread runs a pass of several requests, they take requests of it too */
    pthread_t helpers[FLUSHER_HELPERS];
    int n_helpers;
    pthread_mutex_t pool_mu;  /* protects the pool_ fields (never held while syncing) */
    pthread_cond_t pool_go;   /* helpers wait for a pass */
    pthread_cond_t pool_idle; /* the thread waits for the helpers to finish theirs */
    struct job *pool_jobs;    /* the pass: [pool_next, pool_n) not yet taken */
    size_t pool_n;
    size_t pool_next;
    struct fileref **pool_files;
    uint64_t pool_pass; /* bumped per pass */
    int pool_busy;      /* helpers inside the current pass */
    bool pool_stop;
};

/* One taken request, as the thread sees it. */
struct job {
    struct flush_req *req;
    size_t first_file; /* range in the thread's file array */
    size_t n_files;
    struct fileref *dir;
    struct epoch_cache *epochs; /* snapshot to store after the files (owned), or NULL */
    uint64_t epochs_version;
    int64_t target;
    uint64_t gen;
    bool syncfs; /* the files stand for their filesystems (flush_req.syncfs) */
    int rc;
};

static void lock(const struct flusher *fl)
{
    CHECK(pthread_mutex_lock((pthread_mutex_t *)&fl->mu) == 0);
}
static void unlock(const struct flusher *fl)
{
    CHECK(pthread_mutex_unlock((pthread_mutex_t *)&fl->mu) == 0);
}

static void wake_reactor(struct flusher *fl)
{
    uint64_t one = 1;
    while (write(fl->efd, &one, sizeof(one)) < 0 && errno == EINTR) {
    }
}

/* Folds n syncs that took since t0_ns (and failed if rc) into the stats, under the mutex. */
static void account(struct flusher *fl, int64_t t0_ns, int rc, unsigned n)
{
    uint64_t dt = (uint64_t)(time_mono_ns() - t0_ns);
    lock(fl);
    fl->stats.syncs += n;
    fl->stats.sync_ns_total += dt;
    if (dt > fl->stats.sync_ns_max)
        fl->stats.sync_ns_max = dt;
    histogram_observe(&fl->stats.sync_latency, dt);
    if (rc != 0)
        fl->stats.sync_errors++;
    unlock(fl);
}

static int timed_sync(struct flusher *fl, int fd, bool dir, bool fs)
{
    int64_t t0 = time_mono_ns();
    int rc = fs ? io_syncfs(fd) : dir ? io_fsync_dir(fd) : io_fdatasync(fd);
    account(fl, t0, rc, 1);
    return rc;
}

/* The checkpoint's store: the temp file's fdatasync and the directory's fsync. */
static int timed_epochs_store(struct flusher *fl, const struct epoch_cache *c, int dirfd)
{
    int64_t t0 = time_mono_ns();
    int rc = epoch_cache_store(c, dirfd, true);
    account(fl, t0, rc, 2);
    return rc;
}

static void run_job(struct flusher *fl, struct job *job, struct fileref **files)
{
    for (size_t i = 0; i < job->n_files; i++) {
        struct fileref *f = files[job->first_file + i];
        /* after a failure the log is fenced: syncing the rest would prove nothing */
        if (job->rc == 0)
            job->rc = timed_sync(fl, f->fd, false, job->syncfs);
        fileref_put(f);
    }
    if (job->dir) {
        /* the checkpoint's store ends with the directory's fsync */
        if (job->rc == 0 && job->epochs)
            job->rc = timed_epochs_store(fl, job->epochs, job->dir->fd);
        else if (job->rc == 0)
            job->rc = timed_sync(fl, job->dir->fd, true, false);
        fileref_put(job->dir);
    }
    if (job->epochs) {
        epoch_cache_free(job->epochs);
        mem_free(job->epochs);
        job->epochs = NULL;
    } else {
        job->epochs_version = 0;
    }
    if (job->rc != 0)
        log_error("fsync_failed", "error=\"%s\"", strerror(-job->rc));
}

/* Takes and runs requests of the current pass until none is left. Called with pool_mu held;
 * returns with it held. */
static void take_jobs(struct flusher *fl)
{
    while (fl->pool_next < fl->pool_n) {
        struct job *job = &fl->pool_jobs[fl->pool_next++];
        struct fileref **files = fl->pool_files;
        CHECK(pthread_mutex_unlock(&fl->pool_mu) == 0);
        run_job(fl, job, files);
        CHECK(pthread_mutex_lock(&fl->pool_mu) == 0);
    }
}

static void *helper_main(void *arg)
{
    struct flusher *fl = arg;
    CHECK(pthread_mutex_lock(&fl->pool_mu) == 0);
    uint64_t seen = fl->pool_pass;
    for (;;) {
        while (!fl->pool_stop && fl->pool_pass == seen)
            CHECK(pthread_cond_wait(&fl->pool_go, &fl->pool_mu) == 0);
        if (fl->pool_stop)
            break;
        seen = fl->pool_pass;
        fl->pool_busy++;
        take_jobs(fl);
        if (--fl->pool_busy == 0)
            CHECK(pthread_cond_signal(&fl->pool_idle) == 0);
    }
    CHECK(pthread_mutex_unlock(&fl->pool_mu) == 0);
    return NULL;
}

/* Runs a pass: each request's files and directory in order, different requests in parallel
 * on the helpers (the disk serves concurrent syncs of different files at once; one thread
 * syncing ten thousand partitions in turn was the bound of a many-partition produce). Returns
 * once every request of the pass has its result; none is reported before. */
static void run_jobs(struct flusher *fl, struct job *jobs, size_t n_jobs, struct fileref **files)
{
    if (n_jobs < 2 || fl->n_helpers == 0) {
        for (size_t j = 0; j < n_jobs; j++)
            run_job(fl, &jobs[j], files);
        return;
    }
    CHECK(pthread_mutex_lock(&fl->pool_mu) == 0);
    fl->pool_jobs = jobs;
    fl->pool_n = n_jobs;
    fl->pool_next = 0;
    fl->pool_files = files;
    fl->pool_pass++;
    CHECK(pthread_cond_broadcast(&fl->pool_go) == 0);
    take_jobs(fl);
    while (fl->pool_busy > 0)
        CHECK(pthread_cond_wait(&fl->pool_idle, &fl->pool_mu) == 0);
    fl->pool_jobs = NULL; /* a helper waking late finds nothing to take */
    fl->pool_n = fl->pool_next = 0;
    CHECK(pthread_mutex_unlock(&fl->pool_mu) == 0);
}

static void *flusher_main(void *arg)
{
    struct flusher *fl = arg;
    struct job *jobs = NULL;
    size_t cap_jobs = 0;
    struct fileref **files = NULL;
    size_t cap_files = 0;
    lock(fl);
    for (;;) {
        while (!fl->head && !fl->stop)
            CHECK(pthread_cond_wait(&fl->work_cv, &fl->mu) == 0);
        if (!fl->head)
            break;
        /* take everything queued: one pass syncs each file once */
        size_t n_jobs = 0, n_files = 0;
        for (struct flush_req *r = fl->head; r; r = r->next) {
            MEM_GROW(jobs, cap_jobs, n_jobs + 1);
            MEM_GROW(files, cap_files, n_files + r->n_files);
            memcpy(files + n_files, r->files, r->n_files * sizeof(*files));
            CHECK(!r->epochs || r->dir);
            jobs[n_jobs++] =
                (struct job){r,         n_files, r->n_files, r->dir, r->epochs, r->epochs_version,
                             r->target, r->gen,  r->syncfs,  0};
            n_files += r->n_files;
            r->n_files = 0;
            r->dir = NULL;
            r->epochs = NULL;
            r->queued = false;
            r->running = true;
        }
        fl->head = fl->tail = NULL;
        unlock(fl);
        run_jobs(fl, jobs, n_jobs, files);
        lock(fl);
        for (size_t j = 0; j < n_jobs; j++) {
            MEM_GROW(fl->done, fl->cap_done, fl->n_done + 1);
            fl->done[fl->n_done++] = (struct completion){jobs[j].req, jobs[j].target, jobs[j].gen,
                                                         jobs[j].epochs_version, jobs[j].rc};
            jobs[j].req->running = false;
        }
        CHECK(pthread_cond_broadcast(&fl->idle_cv) == 0);
        unlock(fl);
        wake_reactor(fl);
        lock(fl);
    }
    unlock(fl);
    mem_free(jobs);
    mem_free(files);
    return NULL;
}

static void stop_helpers(struct flusher *fl)
{
    CHECK(pthread_mutex_lock(&fl->pool_mu) == 0);
    fl->pool_stop = true;
    CHECK(pthread_cond_broadcast(&fl->pool_go) == 0);
    CHECK(pthread_mutex_unlock(&fl->pool_mu) == 0);
    for (int i = 0; i < fl->n_helpers; i++)
        CHECK(pthread_join(fl->helpers[i], NULL) == 0);
    fl->n_helpers = 0;
    pthread_cond_destroy(&fl->pool_idle);
    pthread_cond_destroy(&fl->pool_go);
    pthread_mutex_destroy(&fl->pool_mu);
}

int flusher_start(struct flusher **out)
{
    struct flusher *fl = mem_calloc(1, sizeof(*fl));
    histogram_init(&fl->stats.sync_latency, histogram_latency_ns, histogram_latency_ns_count);
    fl->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fl->efd < 0) {
        int e = -errno;
        mem_free(fl);
        return e;
    }
    CHECK(pthread_mutex_init(&fl->mu, NULL) == 0);
    CHECK(pthread_cond_init(&fl->work_cv, NULL) == 0);
    CHECK(pthread_cond_init(&fl->idle_cv, NULL) == 0);
    CHECK(pthread_mutex_init(&fl->pool_mu, NULL) == 0);
    CHECK(pthread_cond_init(&fl->pool_go, NULL) == 0);
    CHECK(pthread_cond_init(&fl->pool_idle, NULL) == 0);
    /* helpers are an optimization: fewer (or none) if threads cannot be had */
    while (fl->n_helpers < FLUSHER_HELPERS &&
           pthread_create(&fl->helpers[fl->n_helpers], NULL, helper_main, fl) == 0)
        fl->n_helpers++;
    int rc = pthread_create(&fl->thread, NULL, flusher_main, fl);
    if (rc != 0) {
        stop_helpers(fl);
        pthread_cond_destroy(&fl->idle_cv);
        pthread_cond_destroy(&fl->work_cv);
        pthread_mutex_destroy(&fl->mu);
        close(fl->efd);
        mem_free(fl);
        return -rc;
    }
    *out = fl;
    return 0;
}

void flusher_stop(struct flusher *fl)
{
    if (!fl)
        return;
    lock(fl);
    fl->stop = true;
    CHECK(pthread_cond_signal(&fl->work_cv) == 0);
    unlock(fl);
    CHECK(pthread_join(fl->thread, NULL) == 0);
    stop_helpers(fl);
    /* the thread drained the queue; plogs left open sync inline from now on */
    lock(fl);
    for (struct flush_req *r = fl->attached; r; r = r->reg_next)
        r->fl = NULL;
    unlock(fl);
    flusher_poll(fl);
    lock(fl);
    for (struct flush_req *r = fl->attached; r;) {
        struct flush_req *next = r->reg_next;
        r->reg_prev = r->reg_next = NULL;
        r = next;
    }
    fl->attached = NULL;
    unlock(fl);
    pthread_cond_destroy(&fl->idle_cv);
    pthread_cond_destroy(&fl->work_cv);
    pthread_mutex_destroy(&fl->mu);
    close(fl->efd);
    mem_free(fl->done);
    mem_free(fl);
}

int flusher_fd(const struct flusher *fl)
{
    return fl->efd;
}

int flusher_poll(struct flusher *fl)
{
    uint64_t v;
    while (read(fl->efd, &v, sizeof(v)) < 0 && errno == EINTR) {
    }
    int n = 0;
    lock(fl);
    while (fl->done_head < fl->n_done) {
        /* one at a time: a callback may detach (close) a plog, which edits the FIFO */
        struct completion c = fl->done[fl->done_head++];
        if (fl->done_head == fl->n_done)
            fl->done_head = fl->n_done = 0;
        unlock(fl);
        c.req->done(c.req, c.target, c.gen, c.epochs_version, c.rc, true);
        n++;
        lock(fl);
    }
    unlock(fl);
    return n;
}

void flusher_get_stats(const struct flusher *fl, struct flusher_stats *out)
{
    lock(fl);
    *out = fl->stats;
    unlock(fl);
}

void flusher_attach(struct flusher *fl, struct flush_req *req)
{
    CHECK(req->done && !req->fl);
    lock(fl);
    req->fl = fl;
    req->reg_prev = NULL;
    req->reg_next = fl->attached;
    if (fl->attached)
        fl->attached->reg_prev = req;
    fl->attached = req;
    unlock(fl);
}

static bool has_file(const struct flush_req *req, const struct fileref *f)
{
    for (size_t i = 0; i < req->n_files; i++)
        if (req->files[i] == f)
            return true;
    return false;
}

static void drop_epochs(struct flush_req *req)
{
    if (!req->epochs)
        return;
    epoch_cache_free(req->epochs);
    mem_free(req->epochs);
    req->epochs = NULL;
    req->epochs_version = 0;
}

void flusher_submit(struct flusher *fl, struct flush_req *req, struct fileref **files, size_t n,
                    struct fileref *dir, struct epoch_cache *epochs, uint64_t epochs_version,
                    int64_t target, uint64_t gen)
{
    lock(fl);
    CHECK(req->fl == fl);
    for (size_t i = 0; i < n; i++) {
        if (has_file(req, files[i])) {
            fileref_put(files[i]);
            continue;
        }
        MEM_GROW(req->files, req->cap_files, req->n_files + 1);
        req->files[req->n_files++] = files[i];
    }
    if (dir) {
        if (req->dir)
            fileref_put(dir);
        else
            req->dir = dir;
    }
    if (epochs) {
        drop_epochs(req);
        req->epochs = epochs;
        req->epochs_version = epochs_version;
    }
    req->target = target;
    req->gen = gen;
    if (!req->queued) {
        req->queued = true;
        req->next = NULL;
        if (fl->tail)
            fl->tail->next = req;
        else
            fl->head = req;
        fl->tail = req;
        CHECK(pthread_cond_signal(&fl->work_cv) == 0);
    }
    unlock(fl);
}

void flusher_quiesce(struct flusher *fl, struct flush_req *req)
{
    lock(fl);
    CHECK(req->fl == fl);
    drop_epochs(req);
    while (req->running)
        CHECK(pthread_cond_wait(&fl->idle_cv, &fl->mu) == 0);
    unlock(fl);
}

/* Takes req off the attached list. Called with the mutex held. */
static void unregister(struct flusher *fl, struct flush_req *req)
{
    if (req->reg_prev)
        req->reg_prev->reg_next = req->reg_next;
    else
        fl->attached = req->reg_next;
    if (req->reg_next)
        req->reg_next->reg_prev = req->reg_prev;
    req->reg_prev = req->reg_next = NULL;
    req->fl = NULL;
}

void flusher_release(struct flusher *fl, struct flush_req *req)
{
    lock(fl);
    CHECK(!req->queued && !req->running);
    unregister(fl, req);
    unlock(fl);
}

void flusher_detach(struct flusher *fl, struct flush_req *req)
{
    lock(fl);
    CHECK(req->fl == fl);
    if (req->queued) {
        struct flush_req **pp = &fl->head, *prev = NULL;
        while (*pp != req) {
            prev = *pp;
            pp = &(*pp)->next;
        }
        *pp = req->next;
        if (fl->tail == req)
            fl->tail = prev;
        req->queued = false;
        req->next = NULL;
    }
    while (req->running)
        CHECK(pthread_cond_wait(&fl->idle_cv, &fl->mu) == 0);
    struct completion *mine = NULL;
    size_t n_mine = 0, cap_mine = 0, keep = fl->done_head;
    for (size_t i = fl->done_head; i < fl->n_done; i++) {
        if (fl->done[i].req == req) {
            MEM_GROW(mine, cap_mine, n_mine + 1);
            mine[n_mine++] = fl->done[i];
        } else {
            fl->done[keep++] = fl->done[i];
        }
    }
    fl->n_done = keep;
    if (fl->done_head == fl->n_done)
        fl->done_head = fl->n_done = 0;
    unregister(fl, req);
    unlock(fl);
    for (size_t i = 0; i < n_mine; i++)
        req->done(req, mine[i].target, mine[i].gen, mine[i].epochs_version, mine[i].rc, false);
    mem_free(mine);
}
