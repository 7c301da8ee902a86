#include "net_test_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#define NT_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#define NT_HAVE_LSAN 1
#endif
#endif

void nt_pump_for(struct reactor *r, int ms)
{
    int64_t end = time_mono_ms() + ms;
    while (time_mono_ms() < end)
        ASSERT_EQ(reactor_run_once(r, 2), 0);
}

int nt_connect(int port, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT(fd >= 0);
    if (rcvbuf > 0)
        ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
    int one = 1;
    ASSERT_EQ(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)), 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    /* completes from the kernel's backlog, before the server accepts */
    ASSERT_EQ(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    ASSERT_EQ(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
    return fd;
}

void nt_write_all(struct reactor *r, int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    int64_t end = time_mono_ms() + 5000;
    while (n > 0) {
        ssize_t k = write(fd, b, n);
        if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
            ASSERT(time_mono_ms() < end);
            ASSERT_EQ(reactor_run_once(r, 2), 0);
            continue;
        }
        ASSERT(k > 0);
        b += k;
        n -= (size_t)k;
    }
}

void nt_read_exact(struct reactor *r, int fd, void *buf, size_t n, int timeout_ms)
{
    uint8_t *b = buf;
    size_t got = 0;
    int64_t end = time_mono_ms() + timeout_ms;
    while (got < n) {
        ssize_t k = read(fd, b + got, n - got);
        if (k > 0) {
            got += (size_t)k;
            continue;
        }
        if (k == 0)
            test_fail(__FILE__, __LINE__, "EOF after %zu of %zu bytes", got, n);
        ASSERT(errno == EAGAIN || errno == EINTR);
        if (time_mono_ms() >= end)
            test_fail(__FILE__, __LINE__, "timed out after %zu of %zu bytes", got, n);
        ASSERT_EQ(reactor_run_once(r, 2), 0);
    }
}

size_t nt_wait_closed(struct reactor *r, int fd, int timeout_ms)
{
    uint8_t buf[65536];
    size_t discarded = 0;
    int64_t end = time_mono_ms() + timeout_ms;
    for (;;) {
        ssize_t k = read(fd, buf, sizeof(buf));
        if (k == 0 || (k < 0 && errno == ECONNRESET))
            return discarded;
        if (k > 0) {
            discarded += (size_t)k;
            continue;
        }
        ASSERT(errno == EAGAIN || errno == EINTR);
        if (time_mono_ms() >= end)
            test_fail(__FILE__, __LINE__, "connection still open after %d ms", timeout_ms);
        ASSERT_EQ(reactor_run_once(r, 2), 0);
    }
}

size_t nt_available(int fd)
{
    int n = 0;
    ASSERT_EQ(ioctl(fd, FIONREAD, &n), 0);
    return (size_t)n;
}

void nt_put_be32(uint8_t *dst, uint32_t v)
{
    dst[0] = (uint8_t)(v >> 24);
    dst[1] = (uint8_t)(v >> 16);
    dst[2] = (uint8_t)(v >> 8);
    dst[3] = (uint8_t)v;
}

uint32_t nt_get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

size_t nt_frame(uint8_t *dst, const void *payload, uint32_t len)
{
    nt_put_be32(dst, len);
    memcpy(dst + 4, payload, len);
    return 4 + (size_t)len;
}

void nt_leak_check(void)
{
#ifdef NT_HAVE_LSAN
    /* exits non-zero (failing the test) and prints the leak if there is one */
    if (__lsan_do_recoverable_leak_check() != 0)
        test_fail(__FILE__, __LINE__, "memory leaked (see the LeakSanitizer report above)");
#endif
}

static size_t alloc_peak;

#ifdef NT_HAVE_LSAN
/* Exported by every sanitizer runtime (declared in clang's sanitizer/allocator_interface.h,
 * which GCC 12 does not ship). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
#endif

#ifdef NT_HAVE_LSAN
static void peak_malloc_hook(const volatile void *p, size_t size)
{
    size_t cur = __atomic_load_n(&alloc_peak, __ATOMIC_RELAXED);
    while (size > cur &&
           !__atomic_compare_exchange_n(&alloc_peak, &cur, size, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED)) {
    }
}

static void peak_free_hook(const volatile void *p)
{
}
#endif

bool nt_alloc_peak_available(void)
{
#ifdef NT_HAVE_LSAN
    return true;
#else
    return false;
#endif
}

void nt_alloc_peak_reset(void)
{
#ifdef NT_HAVE_LSAN
    static bool installed;
    if (!installed) {
        ASSERT(__sanitizer_install_malloc_and_free_hooks(peak_malloc_hook, peak_free_hook) != 0);
        installed = true;
    }
#endif
    __atomic_store_n(&alloc_peak, 0, __ATOMIC_RELAXED);
}

size_t nt_alloc_peak(void)
{
    return __atomic_load_n(&alloc_peak, __ATOMIC_RELAXED);
}
