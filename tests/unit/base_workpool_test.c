/* The ordered work pool (base/workpool.h): every job runs once and is taken once, in index order;
 * the window and the descriptor budget bound what runs ahead; a failed take stops it and what
 * ran but was not taken is discarded. */
#include <pthread.h>
#include <string.h>

#include "base/workpool.h"
#include "test.h"

#define JOBS 2000

static struct {
    pthread_mutex_t mu;
    int runs[JOBS];
    int takes[JOBS];
    int discards[JOBS];
    size_t next_take;
    size_t taken;
    size_t running_ahead_max; /* jobs run or running but not taken, at most */
    size_t in_flight;         /* started, not taken */
    size_t fds_ahead_max;
    size_t fds_ahead;
    size_t fds_each;
    size_t fail_at; /* take returns an error here (JOBS: never) */
    bool order_ok;
} W;

static void reset(size_t fds_each, size_t fail_at)
{
    memset(&W, 0, sizeof(W));
    pthread_mutex_init(&W.mu, NULL);
    W.fds_each = fds_each;
    W.fail_at = fail_at;
    W.order_ok = true;
}

static int run(size_t i, size_t *fds, void *data)
{
    (void)data;
    pthread_mutex_lock(&W.mu);
    W.runs[i]++;
    W.in_flight++;
    if (W.in_flight > W.running_ahead_max)
        W.running_ahead_max = W.in_flight;
    pthread_mutex_unlock(&W.mu);
    volatile unsigned spin = 0; /* a little work, so that jobs overlap */
    for (unsigned k = 0; k < 2000 + (unsigned)(i % 7) * 500; k++)
        spin += k;
    pthread_mutex_lock(&W.mu);
    W.fds_ahead += W.fds_each;
    if (W.fds_ahead > W.fds_ahead_max)
        W.fds_ahead_max = W.fds_ahead;
    pthread_mutex_unlock(&W.mu);
    *fds = W.fds_each;
    return i % 5 == 0 ? 7 : 0; /* a result to pass through */
}

static int take(size_t i, int rc, void *data)
{
    (void)data;
    pthread_mutex_lock(&W.mu);
    W.order_ok = W.order_ok && i == W.next_take && rc == (i % 5 == 0 ? 7 : 0) && W.runs[i] == 1;
    W.next_take = i + 1;
    W.takes[i]++;
    W.taken++;
    W.in_flight--;
    W.fds_ahead -= W.fds_each;
    pthread_mutex_unlock(&W.mu);
    return i == W.fail_at ? -5 : 0;
}

static void discard(size_t i, int rc, void *data)
{
    (void)data;
    (void)rc;
    W.discards[i]++;
}

static const struct workpool_ops ops = {run, take, discard};

TEST(base_workpool_takes_every_job_once_in_order)
{
    for (int threads = 1; threads <= 4; threads++) {
        reset(0, JOBS);
        ASSERT_EQ(workpool_run(JOBS, threads, 64, 1000, &ops, NULL), 0);
        ASSERT(W.order_ok);
        ASSERT_EQ(W.taken, JOBS);
        for (int i = 0; i < JOBS; i++) {
            ASSERT_EQ(W.runs[i], 1);
            ASSERT_EQ(W.takes[i], 1);
            ASSERT_EQ(W.discards[i], 0);
        }
        /* the window (the job being handed over counts here until its take returns) */
        ASSERT_CMP(W.running_ahead_max, <=, 64 + 1);
    }
    reset(0, JOBS);
    ASSERT_EQ(workpool_run(0, 3, 8, 10, &ops, NULL), 0);
    ASSERT_EQ(W.taken, 0);
}

TEST(base_workpool_descriptor_budget_bounds_the_jobs_ahead)
{
    /* 10 descriptors a job, a budget of 50: at most 5 run ahead, and one more per thread
     * (a job's count is known only once it ran) */
    reset(10, JOBS);
    ASSERT_EQ(workpool_run(JOBS, 4, 1000, 50, &ops, NULL), 0);
    ASSERT(W.order_ok);
    ASSERT_EQ(W.taken, JOBS);
    ASSERT_CMP(W.fds_ahead_max, <=, 50 + 10 * 4 + 10); /* and the one being handed over */
}

TEST(base_workpool_a_failed_take_stops_and_discards_what_ran)
{
    for (int threads = 1; threads <= 4; threads += 3) {
        reset(1, 300);
        ASSERT_EQ(workpool_run(JOBS, threads, 64, 1000, &ops, NULL), -5);
        ASSERT(W.order_ok);
        ASSERT_EQ(W.taken, 301);
        int discarded = 0;
        for (int i = 0; i < JOBS; i++) {
            ASSERT_EQ(W.takes[i], i <= 300 ? 1 : 0);
            ASSERT_EQ(W.discards[i], i > 300 ? W.runs[i] : 0); /* every job run is accounted */
            ASSERT_CMP(W.runs[i], <=, 1);
            discarded += W.discards[i];
        }
        ASSERT_CMP(discarded, <=, 64); /* nothing starts after the stop */
    }
}
