/* The reactor: one epoll loop with timers, owning the thread it runs on (DESIGN.md §2).
 *
 * File descriptors are watched with a callback each; timers are intrusive (embedded in the
 * caller's struct, no allocation) and kept in a binary min-heap ordered by deadline. The loop
 * caches the monotonic time once per iteration (reactor_now_ms). Callbacks may add, modify or
 * remove any watch or timer, including their own, and may call reactor_stop().
 *
 * Not thread-safe: everything runs on the reactor thread. Other threads wake it through an
 * eventfd they own and register here (the flusher does). */
#ifndef SP_NET_REACTOR_H
#define SP_NET_REACTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct reactor;

#define REACTOR_READ 0x1u
#define REACTOR_WRITE 0x2u
/* Delivered in `events` (never requested): peer hung up or the socket has an error. */
#define REACTOR_ERROR 0x4u

typedef void (*reactor_fd_cb)(struct reactor *r, int fd, uint32_t events, void *data);

struct reactor_timer;
typedef void (*reactor_timer_cb)(struct reactor *r, struct reactor_timer *t, void *data);

/* Embed in your struct; initialise with reactor_timer_init before first use. */
struct reactor_timer {
    int64_t deadline_ms;  /* monotonic */
    size_t heap_index;    /* position in the heap, or SIZE_MAX when not armed */
    uint64_t seq;         /* arming order: timers with equal deadlines fire in this order */
    reactor_timer_cb cb;
    void *data;
};

/* Returns NULL on failure (errno set). */
struct reactor *reactor_new(void);
/* Frees the reactor. Watches and timers still registered are simply forgotten. */
void reactor_free(struct reactor *r);

/* Watch fd for events (REACTOR_READ | REACTOR_WRITE, level-triggered). One watch per fd.
 * Returns 0 or -errno. */
int reactor_add(struct reactor *r, int fd, uint32_t events, reactor_fd_cb cb, void *data);
int reactor_mod(struct reactor *r, int fd, uint32_t events);
/* Stops watching fd (does not close it). Events already collected for fd in this iteration
 * are not delivered after this call. */
void reactor_del(struct reactor *r, int fd);

void reactor_timer_init(struct reactor_timer *t, reactor_timer_cb cb, void *data);
/* (Re)arms t to fire once, delay_ms (clamped to >= 0) after reactor_now_ms(). Timers fire in
 * deadline order, equal deadlines in arming order. A timer armed while timers are firing fires
 * no earlier than the next iteration, so a callback re-arming itself with 0 cannot spin. */
void reactor_timer_start(struct reactor *r, struct reactor_timer *t, int64_t delay_ms);
void reactor_timer_stop(struct reactor *r, struct reactor_timer *t);
static inline bool reactor_timer_active(const struct reactor_timer *t)
{
    return t->heap_index != (size_t)-1;
}

/* Runs until reactor_stop(). Returns 0, or -errno if epoll_wait fails other than EINTR. */
int reactor_run(struct reactor *r);
void reactor_stop(struct reactor *r);
/* Runs one iteration, waiting at most timeout_ms for events (-1: until an event or the next
 * timer), then delivering fd events and expired timers (tests). Returns 0 or -errno. */
int reactor_run_once(struct reactor *r, int timeout_ms);

/* Monotonic milliseconds, refreshed at each loop iteration. */
int64_t reactor_now_ms(const struct reactor *r);

#endif
