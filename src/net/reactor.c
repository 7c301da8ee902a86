/* The reactor: epoll (level-triggered) + a binary min-heap of intrusive timers.
 *
 * Owns: the epoll descriptor, a table of watches indexed by fd, the timer heap (pointers to
 * timers embedded in callers' structs) and the cached monotonic clock.
 *
 * Invariants:
 *  1. fds[fd].cb != NULL  <=>  fd is registered with epoll, with interest fds[fd].events.
 *  2. Every epoll registration carries (fds[fd].gen << 32 | fd). reactor_add and reactor_del
 *     bump gen, so an event collected before a del (or a del + re-add of a reused fd number)
 *     no longer matches and is dropped during dispatch.
 *  3. heap[i]->heap_index == i for every armed timer; a timer not in the heap has heap_index
 *     SIZE_MAX. The heap is ordered by (deadline_ms, seq); seq grows with every arming.
 *  4. now_ms only moves forwards and changes only between callbacks (at the top of an
 *     iteration and after epoll_wait), never while callbacks of one phase run.
 *
 * One iteration (reactor_run_once): refresh now -> epoll_wait with the earliest deadline as
 * timeout -> refresh now -> dispatch fd events -> fire expired timers armed before the timer
 * phase began (invariant 3's seq makes "armed before" a comparison).
 *
 * States: RUNNING (reactor_run looping) -> STOPPING (reactor_stop) -> idle (reactor_run returns).
 */
#include "net/reactor.h"

#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "base/check.h"
#include "base/mem.h"
#include "base/time.h"

#define REACTOR_MAX_EVENTS 256

struct fd_watch {
    reactor_fd_cb cb; /* NULL when fd is not watched */
    void *data;
    uint32_t events; /* REACTOR_READ | REACTOR_WRITE currently asked for */
    uint32_t gen;    /* see invariant 2 */
};

struct reactor {
    int epfd;
    struct fd_watch *fds; /* indexed by fd */
    size_t nfds;          /* entries allocated in fds */
    struct reactor_timer **heap;
    size_t heap_len;
    size_t heap_cap;
    uint64_t timer_seq; /* next seq to hand out */
    int64_t now_ms;
    bool stopping;
    struct epoll_event events[REACTOR_MAX_EVENTS];
};

struct reactor *reactor_new(void)
{
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        return NULL;
    struct reactor *r = mem_calloc(1, sizeof(*r));
    r->epfd = epfd;
    r->now_ms = time_mono_ms();
    return r;
}

void reactor_free(struct reactor *r)
{
    if (!r)
        return;
    close(r->epfd);
    mem_free(r->fds);
    mem_free(r->heap);
    mem_free(r);
}

int64_t reactor_now_ms(const struct reactor *r)
{
    return r->now_ms;
}

static void update_now(struct reactor *r)
{
    int64_t now = time_mono_ms();
    if (now > r->now_ms)
        r->now_ms = now;
}

/* ---- fd watches ---- */

static uint32_t to_epoll(uint32_t events)
{
    uint32_t ev = 0;
    if (events & REACTOR_READ)
        ev |= EPOLLIN;
    if (events & REACTOR_WRITE)
        ev |= EPOLLOUT;
    return ev;
}

static uint32_t from_epoll(uint32_t ev)
{
    uint32_t events = 0;
    if (ev & EPOLLIN)
        events |= REACTOR_READ;
    if (ev & EPOLLOUT)
        events |= REACTOR_WRITE;
    if (ev & (EPOLLHUP | EPOLLERR))
        events |= REACTOR_ERROR;
    return events;
}

static int epoll_set(struct reactor *r, int op, int fd)
{
    struct epoll_event ev = {
        .events = to_epoll(r->fds[fd].events),
        .data.u64 = (uint64_t)r->fds[fd].gen << 32 | (uint32_t)fd,
    };
    return epoll_ctl(r->epfd, op, fd, &ev) == 0 ? 0 : -errno;
}

int reactor_add(struct reactor *r, int fd, uint32_t events, reactor_fd_cb cb, void *data)
{
    CHECK(fd >= 0 && cb != NULL);
    if ((size_t)fd >= r->nfds) {
        size_t old = r->nfds;
        MEM_GROW(r->fds, r->nfds, (size_t)fd + 1);
        memset(r->fds + old, 0, (r->nfds - old) * sizeof(*r->fds));
    }
    struct fd_watch *w = &r->fds[fd];
    if (w->cb)
        return -EEXIST;
    w->gen++;
    w->events = events & (REACTOR_READ | REACTOR_WRITE);
    int rc = epoll_set(r, EPOLL_CTL_ADD, fd);
    if (rc != 0)
        return rc;
    w->cb = cb;
    w->data = data;
    return 0;
}

int reactor_mod(struct reactor *r, int fd, uint32_t events)
{
    if (fd < 0 || (size_t)fd >= r->nfds || !r->fds[fd].cb)
        return -ENOENT;
    struct fd_watch *w = &r->fds[fd];
    events &= REACTOR_READ | REACTOR_WRITE;
    if (events == w->events)
        return 0;
    uint32_t old = w->events;
    w->events = events;
    int rc = epoll_set(r, EPOLL_CTL_MOD, fd);
    if (rc != 0)
        w->events = old;
    return rc;
}

void reactor_del(struct reactor *r, int fd)
{
    if (fd < 0 || (size_t)fd >= r->nfds || !r->fds[fd].cb)
        return;
    struct fd_watch *w = &r->fds[fd];
    /* Fails only if fd was already closed, which removed it from the epoll set anyway. */
    (void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, fd, NULL);
    w->cb = NULL;
    w->data = NULL;
    w->events = 0;
    w->gen++;
}

/* ---- timers: binary min-heap on (deadline_ms, seq) ---- */

static bool timer_before(const struct reactor_timer *a, const struct reactor_timer *b)
{
    if (a->deadline_ms != b->deadline_ms)
        return a->deadline_ms < b->deadline_ms;
    return a->seq < b->seq;
}

static void heap_place(struct reactor *r, size_t i, struct reactor_timer *t)
{
    r->heap[i] = t;
    t->heap_index = i;
}

static void heap_sift_up(struct reactor *r, size_t i)
{
    struct reactor_timer *t = r->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!timer_before(t, r->heap[parent]))
            break;
        heap_place(r, i, r->heap[parent]);
        i = parent;
    }
    heap_place(r, i, t);
}

static void heap_sift_down(struct reactor *r, size_t i)
{
    struct reactor_timer *t = r->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= r->heap_len)
            break;
        if (child + 1 < r->heap_len && timer_before(r->heap[child + 1], r->heap[child]))
            child++;
        if (!timer_before(r->heap[child], t))
            break;
        heap_place(r, i, r->heap[child]);
        i = child;
    }
    heap_place(r, i, t);
}

static void heap_remove(struct reactor *r, struct reactor_timer *t)
{
    size_t i = t->heap_index;
    CHECK(i < r->heap_len && r->heap[i] == t);
    t->heap_index = SIZE_MAX;
    struct reactor_timer *last = r->heap[--r->heap_len];
    if (last == t)
        return;
    heap_place(r, i, last);
    if (i > 0 && timer_before(last, r->heap[(i - 1) / 2]))
        heap_sift_up(r, i);
    else
        heap_sift_down(r, i);
}

#if DCHECK_ENABLED
static bool heap_valid(const struct reactor *r)
{
    for (size_t i = 0; i < r->heap_len; i++) {
        if (r->heap[i]->heap_index != i)
            return false;
        if (i > 0 && timer_before(r->heap[i], r->heap[(i - 1) / 2]))
            return false;
    }
    return true;
}
#endif

void reactor_timer_init(struct reactor_timer *t, reactor_timer_cb cb, void *data)
{
    memset(t, 0, sizeof(*t));
    t->heap_index = SIZE_MAX;
    t->cb = cb;
    t->data = data;
}

void reactor_timer_start(struct reactor *r, struct reactor_timer *t, int64_t delay_ms)
{
    if (reactor_timer_active(t))
        heap_remove(r, t);
    t->deadline_ms = r->now_ms + (delay_ms > 0 ? delay_ms : 0);
    t->seq = r->timer_seq++;
    MEM_GROW(r->heap, r->heap_cap, r->heap_len + 1);
    r->heap[r->heap_len] = t;
    t->heap_index = r->heap_len++;
    heap_sift_up(r, t->heap_index);
    DCHECK(heap_valid(r));
}

void reactor_timer_stop(struct reactor *r, struct reactor_timer *t)
{
    if (!reactor_timer_active(t))
        return;
    heap_remove(r, t);
    DCHECK(heap_valid(r));
}

/* Fires every timer due by now that was armed before this phase began. */
static void run_timers(struct reactor *r)
{
    uint64_t seq_limit = r->timer_seq;
    while (r->heap_len > 0) {
        struct reactor_timer *t = r->heap[0];
        if (t->deadline_ms > r->now_ms || t->seq >= seq_limit)
            break;
        heap_remove(r, t);
        t->cb(r, t, t->data);
    }
}

/* ---- the loop ---- */

static int wait_timeout(const struct reactor *r, int timeout_ms)
{
    if (r->heap_len == 0)
        return timeout_ms;
    int64_t due = r->heap[0]->deadline_ms - r->now_ms;
    if (due <= 0)
        return 0;
    if (timeout_ms >= 0 && timeout_ms < due)
        return timeout_ms;
    return due > INT32_MAX ? INT32_MAX : (int)due;
}

static void dispatch(struct reactor *r, const struct epoll_event *ev)
{
    int fd = (int)(uint32_t)ev->data.u64;
    uint32_t gen = (uint32_t)(ev->data.u64 >> 32);
    if ((size_t)fd >= r->nfds)
        return;
    struct fd_watch *w = &r->fds[fd];
    if (!w->cb || w->gen != gen)
        return; /* removed (or removed and re-added) by an earlier callback: invariant 2 */
    /* An earlier callback may have narrowed the interest since the batch was collected. */
    uint32_t events = from_epoll(ev->events) & (w->events | REACTOR_ERROR);
    if (events)
        w->cb(r, fd, events, w->data);
}

int reactor_run_once(struct reactor *r, int timeout_ms)
{
    update_now(r);
    int n = epoll_wait(r->epfd, r->events, REACTOR_MAX_EVENTS, wait_timeout(r, timeout_ms));
    int rc = n < 0 && errno != EINTR ? -errno : 0;
    update_now(r);
    for (int i = 0; i < n; i++)
        dispatch(r, &r->events[i]);
    run_timers(r);
    return rc;
}

int reactor_run(struct reactor *r)
{
    int rc = 0;
    while (!r->stopping && rc == 0)
        rc = reactor_run_once(r, -1);
    r->stopping = false;
    return rc;
}

void reactor_stop(struct reactor *r)
{
    r->stopping = true;
}
