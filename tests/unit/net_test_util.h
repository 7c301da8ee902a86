/* Helpers for the net/ tests: loopback clients driven from the test process, which also runs
 * the reactor (reactor_run_once) between client steps. */
#ifndef SP_NET_TEST_UTIL_H
#define SP_NET_TEST_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/time.h"
#include "net/reactor.h"

/* Runs reactor iterations until cond holds or ms pass; fails the test on timeout. */
#define NT_PUMP_UNTIL(r, cond, ms)                                                                 \
    do {                                                                                           \
        int64_t nt_end_ = time_mono_ms() + (ms);                                                   \
        while (!(cond) && time_mono_ms() < nt_end_)                                                \
            ASSERT_EQ(reactor_run_once((r), 5), 0);                                                \
        if (!(cond))                                                                               \
            test_fail(__FILE__, __LINE__, "timed out waiting for %s", #cond);                      \
    } while (0)

/* Runs reactor iterations for ms milliseconds. */
void nt_pump_for(struct reactor *r, int ms);

/* A connected, non-blocking TCP client socket to 127.0.0.1:port. rcvbuf > 0 sets SO_RCVBUF
 * before connecting (so the window stays small). */
int nt_connect(int port, int rcvbuf);

/* Writes all n bytes, running r whenever the socket is full. */
void nt_write_all(struct reactor *r, int fd, const void *p, size_t n);

/* Reads until n bytes arrived, running r in between. Fails the test after timeout_ms. */
void nt_read_exact(struct reactor *r, int fd, void *buf, size_t n, int timeout_ms);

/* Runs r until the peer closes fd's connection (EOF or reset), discarding data; returns the
 * bytes discarded. Fails the test after timeout_ms. */
size_t nt_wait_closed(struct reactor *r, int fd, int timeout_ms);

/* Bytes readable on fd right now, without running anything (0 if none). */
size_t nt_available(int fd);

/* Writes a frame (big-endian size prefix + payload) into dst; returns 4 + len. */
size_t nt_frame(uint8_t *dst, const void *payload, uint32_t len);
void nt_put_be32(uint8_t *dst, uint32_t v);
uint32_t nt_get_be32(const uint8_t *p);

/* Largest single allocation (malloc/realloc, any thread) since nt_alloc_peak_reset(), seen
 * through ASan's allocation hooks. nt_alloc_peak_available() is false in builds without ASan. */
bool nt_alloc_peak_available(void);
void nt_alloc_peak_reset(void);
size_t nt_alloc_peak(void);

/* Under ASan: fails the test if anything allocated is unreachable (call after freeing all). */
void nt_leak_check(void);

#endif
