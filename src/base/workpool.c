/* The ordered work pool (base/workpool.h).
 *
 * Owns, for one workpool_run: the helper threads, and per job its state (waiting, running, run)
 * with run's result and descriptor count, all under one mutex.
 *
 * Invariants (under mu):
 *   1. taken <= next <= n; jobs [0, taken) were taken, [taken, next) started, [next, n) not.
 *   2. next - taken <= window unless stop; fds_held is the sum of fds over jobs run but not
 *      taken.
 *   3. Once stop, no job starts.
 * The caller's thread takes jobs and, when the next to take is not run yet, runs a job itself
 * rather than wait (with one CPU for it and one helper, both open partitions). */
#include "base/workpool.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/check.h"
#include "base/mem.h"

#define WORKPOOL_THREADS_MAX 64

enum { JOB_WAITING, JOB_RUNNING, JOB_RUN };

struct job {
    int state;
    int rc;
    size_t fds;
};

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* a job ran, one was taken, or stop */
    size_t n, next, taken;
    size_t window, fd_budget, fds_held;
    bool stop;
    struct job *jobs;
    const struct workpool_ops *ops;
    void *data;
};

/* Whether a job may start now (invariants 2 and 3). */
static bool can_start(const struct pool *p)
{
    return !p->stop && p->next < p->n && p->next - p->taken < p->window &&
           p->fds_held <= p->fd_budget;
}

/* Starts the next job and runs it with mu released; returns with mu held. */
static void run_next(struct pool *p)
{
    size_t i = p->next++;
    p->jobs[i].state = JOB_RUNNING;
    CHECK(pthread_mutex_unlock(&p->mu) == 0);
    size_t fds = 0;
    int rc = p->ops->run(i, &fds, p->data);
    CHECK(pthread_mutex_lock(&p->mu) == 0);
    p->jobs[i] = (struct job){JOB_RUN, rc, fds};
    p->fds_held += fds;
    CHECK(pthread_cond_broadcast(&p->cv) == 0);
}

static void *helper_main(void *arg)
{
    struct pool *p = arg;
    CHECK(pthread_mutex_lock(&p->mu) == 0);
    for (;;) {
        if (can_start(p))
            run_next(p);
        else if (p->stop || p->next >= p->n)
            break;
        else
            CHECK(pthread_cond_wait(&p->cv, &p->mu) == 0);
    }
    CHECK(pthread_mutex_unlock(&p->mu) == 0);
    return NULL;
}

int workpool_run(size_t n, int threads, size_t window, size_t fd_budget,
                 const struct workpool_ops *ops, void *data)
{
    struct pool p = {
        .n = n, .window = window ? window : 1, .fd_budget = fd_budget, .ops = ops, .data = data};
    p.jobs = mem_calloc(n ? n : 1, sizeof(*p.jobs));
    CHECK(pthread_mutex_init(&p.mu, NULL) == 0);
    CHECK(pthread_cond_init(&p.cv, NULL) == 0);
    pthread_t helpers[WORKPOOL_THREADS_MAX];
    int n_helpers = 0;
    /* helpers are an optimization: fewer (or none) if threads cannot be had */
    while (n_helpers + 1 < threads && n_helpers < WORKPOOL_THREADS_MAX &&
           pthread_create(&helpers[n_helpers], NULL, helper_main, &p) == 0)
        n_helpers++;
    int first = 0;
    CHECK(pthread_mutex_lock(&p.mu) == 0);
    while (p.taken < n && !p.stop) {
        struct job *j = &p.jobs[p.taken];
        if (j->state == JOB_RUN) {
            size_t i = p.taken++;
            p.fds_held -= j->fds;
            CHECK(pthread_cond_broadcast(&p.cv) == 0);
            CHECK(pthread_mutex_unlock(&p.mu) == 0);
            int rc = ops->take(i, j->rc, data);
            CHECK(pthread_mutex_lock(&p.mu) == 0);
            if (rc != 0) {
                first = rc;
                p.stop = true;
                CHECK(pthread_cond_broadcast(&p.cv) == 0);
            }
        } else if (can_start(&p)) {
            run_next(&p);
        } else {
            CHECK(pthread_cond_wait(&p.cv, &p.mu) == 0);
        }
    }
    p.stop = true; /* the helpers leave once their job ran */
    CHECK(pthread_cond_broadcast(&p.cv) == 0);
    CHECK(pthread_mutex_unlock(&p.mu) == 0);
    for (int k = 0; k < n_helpers; k++)
        CHECK(pthread_join(helpers[k], NULL) == 0);
    for (size_t i = p.taken; i < p.next; i++)
        if (p.jobs[i].state == JOB_RUN)
            ops->discard(i, p.jobs[i].rc, data);
    CHECK(pthread_cond_destroy(&p.cv) == 0);
    CHECK(pthread_mutex_destroy(&p.mu) == 0);
    mem_free(p.jobs);
    return first;
}
