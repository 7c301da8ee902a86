/* Reactor: timers (order, stop/restart, self re-arm), fd watches, removal during a batch. */
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/time.h"
#include "net/reactor.h"
#include "test.h"

/* Runs iterations until *done or timeout_ms passes. */
static void run_until(struct reactor *r, const bool *done, int timeout_ms)
{
    int64_t end = time_mono_ms() + timeout_ms;
    while (!*done && time_mono_ms() < end)
        ASSERT_EQ(reactor_run_once(r, 10), 0);
}

struct order_log {
    int ids[16];
    int n;
};

struct tagged_timer {
    struct reactor_timer t;
    int id;
    struct order_log *log;
};

static void log_timer_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct tagged_timer *tt = data;
    tt->log->ids[tt->log->n++] = tt->id;
}

TEST(net_reactor_timers_fire_in_deadline_order)
{
    struct reactor *r = reactor_new();
    ASSERT(r != NULL);
    struct order_log log = {0};
    struct tagged_timer t[5];
    int delays[5] = {40, 10, 25, 10, 0};
    for (int i = 0; i < 5; i++) {
        t[i].id = i;
        t[i].log = &log;
        reactor_timer_init(&t[i].t, log_timer_cb, &t[i]);
        ASSERT(!reactor_timer_active(&t[i].t));
    }
    for (int i = 0; i < 5; i++) {
        reactor_timer_start(r, &t[i].t, delays[i]);
        ASSERT(reactor_timer_active(&t[i].t));
    }
    int64_t start = reactor_now_ms(r);
    while (log.n < 5 && reactor_now_ms(r) - start < 2000)
        ASSERT_EQ(reactor_run_once(r, -1), 0);
    ASSERT_EQ(log.n, 5);
    /* deadline order; the two 10 ms timers in the order they were armed */
    int want[5] = {4, 1, 3, 2, 0};
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(log.ids[i], want[i]);
    for (int i = 0; i < 5; i++)
        ASSERT(!reactor_timer_active(&t[i].t));
    ASSERT_CMP(reactor_now_ms(r) - start, >=, 40);
    reactor_free(r);
}

struct sorted_check {
    struct reactor_timer t;
    int id;
    int64_t *last_deadline;
    int *fired;
};

static void sorted_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct sorted_check *sc = data;
    ASSERT(sc->id % 3 != 0); /* stopped ones never fire */
    ASSERT_CMP(t->deadline_ms, >=, *sc->last_deadline);
    *sc->last_deadline = t->deadline_ms;
    ++*sc->fired;
}

TEST(net_reactor_timers_many_random_fire_sorted)
{
    struct reactor *r = reactor_new();
    enum { N = 300 };
    static struct sorted_check t[N];
    int64_t last = INT64_MIN;
    int fired = 0;
    unsigned seed = 12345;
    for (int i = 0; i < N; i++) {
        t[i] = (struct sorted_check){.id = i, .last_deadline = &last, .fired = &fired};
        reactor_timer_init(&t[i].t, sorted_cb, &t[i]);
        seed = seed * 1103515245u + 12345u;
        reactor_timer_start(r, &t[i].t, (seed >> 16) % 30);
    }
    /* stop every third one: removal from the middle must keep the heap ordered */
    for (int i = 0; i < N; i += 3)
        reactor_timer_stop(r, &t[i].t);
    int expected = N - (N + 2) / 3;
    int64_t end = time_mono_ms() + 2000;
    while (fired < expected && time_mono_ms() < end)
        ASSERT_EQ(reactor_run_once(r, 5), 0);
    ASSERT_EQ(fired, expected);
    reactor_free(r);
}

struct counter {
    struct reactor_timer t;
    int fired;
    int limit;
};

static void count_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct counter *c = data;
    c->fired++;
}

TEST(net_reactor_timer_stop_and_restart)
{
    struct reactor *r = reactor_new();
    struct counter a = {0}, b = {0};
    reactor_timer_init(&a.t, count_cb, &a);
    reactor_timer_init(&b.t, count_cb, &b);
    reactor_timer_start(r, &a.t, 5);
    reactor_timer_stop(r, &a.t);
    ASSERT(!reactor_timer_active(&a.t));
    reactor_timer_stop(r, &a.t); /* stopping twice is harmless */
    reactor_timer_start(r, &b.t, 10);
    reactor_timer_start(r, &a.t, 200);
    reactor_timer_start(r, &a.t, 20); /* restart while armed moves the deadline */
    int64_t start = reactor_now_ms(r);
    while (a.fired == 0 && reactor_now_ms(r) - start < 1000)
        reactor_run_once(r, -1);
    ASSERT_EQ(a.fired, 1);
    ASSERT_EQ(b.fired, 1);
    ASSERT_CMP(reactor_now_ms(r) - start, <, 200);
    /* nothing armed any more: a bounded wait returns without firing anything */
    reactor_run_once(r, 30);
    ASSERT_EQ(a.fired, 1);
    ASSERT_EQ(b.fired, 1);
    reactor_free(r);
}

static void rearm_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct counter *c = data;
    c->fired++;
    if (c->fired < c->limit)
        reactor_timer_start(r, t, 0);
}

TEST(net_reactor_timer_rearms_itself_once_per_iteration)
{
    struct reactor *r = reactor_new();
    struct counter c = {.limit = 5};
    reactor_timer_init(&c.t, rearm_cb, &c);
    reactor_timer_start(r, &c.t, 0);
    for (int i = 1; i <= 5; i++) {
        ASSERT_EQ(reactor_run_once(r, 1000), 0);
        ASSERT_EQ(c.fired, i); /* a 0 ms re-arm waits for the next iteration: no spinning */
    }
    ASSERT(!reactor_timer_active(&c.t));
    reactor_free(r);
}

struct fd_rec {
    int calls;
    uint32_t events;
    int fd;
};

static void rec_cb(struct reactor *r, int fd, uint32_t events, void *data)
{
    struct fd_rec *rec = data;
    rec->calls++;
    rec->events = events;
    rec->fd = fd;
}

TEST(net_reactor_fd_watch_add_mod_del)
{
    struct reactor *r = reactor_new();
    int p[2];
    ASSERT_EQ(pipe2(p, O_NONBLOCK), 0);
    struct fd_rec rd = {0}, wr = {0};
    ASSERT_EQ(reactor_add(r, p[0], REACTOR_READ, rec_cb, &rd), 0);
    ASSERT_EQ(reactor_add(r, p[0], REACTOR_READ, rec_cb, &rd), -EEXIST);
    ASSERT_EQ(reactor_run_once(r, 0), 0);
    ASSERT_EQ(rd.calls, 0);

    ASSERT_EQ(write(p[1], "x", 1), 1);
    ASSERT_EQ(reactor_run_once(r, 100), 0);
    ASSERT_EQ(rd.calls, 1);
    ASSERT_EQ(rd.fd, p[0]);
    ASSERT_UEQ(rd.events, REACTOR_READ);
    ASSERT_EQ(reactor_run_once(r, 0), 0); /* level-triggered: still readable */
    ASSERT_EQ(rd.calls, 2);

    ASSERT_EQ(reactor_mod(r, p[0], 0), 0);
    ASSERT_EQ(reactor_run_once(r, 20), 0);
    ASSERT_EQ(rd.calls, 2);
    ASSERT_EQ(reactor_mod(r, p[0], REACTOR_READ), 0);
    ASSERT_EQ(reactor_run_once(r, 100), 0);
    ASSERT_EQ(rd.calls, 3);

    reactor_del(r, p[0]);
    ASSERT_EQ(reactor_run_once(r, 20), 0);
    ASSERT_EQ(rd.calls, 3);
    ASSERT_EQ(reactor_mod(r, p[0], REACTOR_READ), -ENOENT);
    reactor_del(r, p[0]); /* twice is harmless */

    ASSERT_EQ(reactor_add(r, p[1], REACTOR_WRITE, rec_cb, &wr), 0);
    ASSERT_EQ(reactor_run_once(r, 100), 0);
    ASSERT_EQ(wr.calls, 1);
    ASSERT_UEQ(wr.events, REACTOR_WRITE);

    /* a re-add after del works and delivers again */
    ASSERT_EQ(reactor_add(r, p[0], REACTOR_READ, rec_cb, &rd), 0);
    ASSERT_EQ(reactor_run_once(r, 100), 0);
    ASSERT_EQ(rd.calls, 4);
    close(p[0]);
    close(p[1]);
    reactor_free(r);
}

TEST(net_reactor_error_delivered_without_being_asked)
{
    struct reactor *r = reactor_new();
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
    struct fd_rec rec = {0};
    ASSERT_EQ(reactor_add(r, sv[0], 0, rec_cb, &rec), 0);
    close(sv[1]);
    ASSERT_EQ(reactor_run_once(r, 100), 0);
    ASSERT_EQ(rec.calls, 1);
    ASSERT_UEQ(rec.events, REACTOR_ERROR);
    reactor_del(r, sv[0]);
    close(sv[0]);
    reactor_free(r);
}

/* Two readable pipes; whichever callback runs first removes the other. */
struct del_pair {
    struct reactor *r;
    int fds[2];
    int calls[2];
    struct fd_rec fresh;
    int fresh_pipe[2];
};

static void del_other_cb(struct reactor *r, int fd, uint32_t events, void *data)
{
    struct del_pair *dp = data;
    int me = fd == dp->fds[0] ? 0 : 1;
    dp->calls[me]++;
    char ch;
    ASSERT_EQ(read(fd, &ch, 1), 1);
    if (dp->calls[0] + dp->calls[1] > 1)
        return;
    int other = dp->fds[1 - me];
    reactor_del(r, other);
    /* close it and hand its number to a new, readable pipe with another callback: the stale
     * event collected for the old registration must not reach the new one either */
    close(other);
    ASSERT_EQ(pipe2(dp->fresh_pipe, O_NONBLOCK), 0);
    ASSERT_EQ(write(dp->fresh_pipe[1], "y", 1), 1);
    ASSERT_EQ(reactor_add(r, dp->fresh_pipe[0], REACTOR_READ, rec_cb, &dp->fresh), 0);
}

TEST(net_reactor_del_from_callback_suppresses_pending_event)
{
    struct reactor *r = reactor_new();
    struct del_pair dp = {.r = r};
    int a[2], b[2];
    ASSERT_EQ(pipe2(a, O_NONBLOCK), 0);
    ASSERT_EQ(pipe2(b, O_NONBLOCK), 0);
    dp.fds[0] = a[0];
    dp.fds[1] = b[0];
    ASSERT_EQ(reactor_add(r, a[0], REACTOR_READ, del_other_cb, &dp), 0);
    ASSERT_EQ(reactor_add(r, b[0], REACTOR_READ, del_other_cb, &dp), 0);
    ASSERT_EQ(write(a[1], "x", 1), 1);
    ASSERT_EQ(write(b[1], "x", 1), 1);
    usleep(1000);
    ASSERT_EQ(reactor_run_once(r, 100), 0);
    ASSERT_EQ(dp.calls[0] + dp.calls[1], 1);
    /* the new registration was not fed the old fd's event in that same iteration */
    ASSERT_EQ(dp.fresh.calls, 0);
    /* but it works from the next iteration on */
    ASSERT_EQ(reactor_run_once(r, 100), 0);
    ASSERT_EQ(dp.fresh.calls, 1);
    reactor_free(r);
}

/* Narrowing another fd's interest mid-batch also filters its pending event. */
struct mod_pair {
    int rd;
    int wr;
    int calls_wr;
};

static void narrow_cb(struct reactor *r, int fd, uint32_t events, void *data)
{
    struct mod_pair *mp = data;
    if (fd == mp->wr) {
        mp->calls_wr++;
        return;
    }
    ASSERT_EQ(reactor_mod(r, mp->wr, 0), 0);
}

TEST(net_reactor_mod_from_callback_filters_pending_event)
{
    struct reactor *r = reactor_new();
    int a[2], b[2];
    ASSERT_EQ(pipe2(a, O_NONBLOCK), 0);
    ASSERT_EQ(pipe2(b, O_NONBLOCK), 0);
    struct mod_pair mp = {.rd = a[0], .wr = b[1]};
    /* register the write end first and the read end second, then run twice so that either
     * order of delivery is exercised */
    ASSERT_EQ(write(a[1], "x", 1), 1);
    ASSERT_EQ(reactor_add(r, a[0], REACTOR_READ, narrow_cb, &mp), 0);
    ASSERT_EQ(reactor_add(r, b[1], REACTOR_WRITE, narrow_cb, &mp), 0);
    ASSERT_EQ(reactor_run_once(r, 100), 0);
    int first = mp.calls_wr; /* 1 if the write end came first in the batch, else 0 */
    ASSERT_CMP(first, <=, 1);
    ASSERT_EQ(reactor_run_once(r, 20), 0);
    ASSERT_EQ(mp.calls_wr, first); /* never again once narrowed */
    reactor_free(r);
}

static void stop_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    int *n = data;
    if (++*n == 3)
        reactor_stop(r);
    else
        reactor_timer_start(r, t, 1);
}

TEST(net_reactor_run_returns_after_stop)
{
    struct reactor *r = reactor_new();
    int n = 0;
    struct reactor_timer t;
    reactor_timer_init(&t, stop_cb, &n);
    reactor_timer_start(r, &t, 1);
    ASSERT_EQ(reactor_run(r), 0);
    ASSERT_EQ(n, 3);
    bool done = false;
    run_until(r, &done, 10); /* still usable after run returns */
    reactor_free(r);
}
