/* idle_conns: N idle client connections to one broker (bench/scale/run).
 *
 *   build/bench/scale/idle_conns HOST PORT N [HOLD_S]
 *
 * Opens N TCP connections in turn, sends ApiVersions v0 on each and reads its answer (checking
 * the correlation id), so every connection has been through the broker's request path once.
 * Then prints `ready conns=N ms=F` (stdout, flushed) and holds every connection open, idle,
 * until SIGTERM/SIGINT or HOLD_S seconds (default 300) have passed. Needs `ulimit -n` above N.
 * Exit 1 on a failed connect, write or read (with what and which connection), 2 on bad usage. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int full_io(int fd, void *buf, size_t len, int writing)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = writing ? write(fd, (char *)buf + off, len - off)
                            : read(fd, (char *)buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n == 0 ? -EPIPE : -errno;
        off += (size_t)n;
    }
    return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ApiVersions v0, correlation id corr, client id "idle"; then reads and checks the answer. */
static int api_versions(int fd, uint32_t corr)
{
    uint8_t req[4 + 2 + 2 + 4 + 2 + 4] = {0};
    put32(req, sizeof(req) - 4);
    req[5] = 18; /* api key 18, version 0 */
    put32(req + 8, corr);
    req[13] = 4;
    memcpy(req + 14, "idle", 4);
    int rc = full_io(fd, req, sizeof(req), 1);
    uint8_t hdr[8];
    if (rc == 0)
        rc = full_io(fd, hdr, sizeof(hdr), 0);
    if (rc != 0)
        return rc;
    uint32_t size = get32(hdr);
    if (get32(hdr + 4) != corr || size < 4 || size > (1u << 20))
        return -EPROTO;
    uint8_t rest[4096];
    for (size -= 4; size > 0;) {
        size_t take = size < sizeof(rest) ? size : sizeof(rest);
        if ((rc = full_io(fd, rest, take, 0)) != 0)
            return rc;
        size -= (uint32_t)take;
    }
    return 0;
}

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: idle_conns HOST PORT N [HOLD_S]\n");
        return 2;
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    long n = atol(argv[3]);
    int hold_s = argc > 4 ? atoi(argv[4]) : 300;
    if (inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 || n <= 0 || n > 1000000 || hold_s <= 0) {
        fprintf(stderr, "idle_conns: want an IPv4 HOST, a PORT, N in 1..1000000, HOLD_S > 0\n");
        return 2;
    }
    struct sigaction act = {.sa_handler = on_signal};
    sigaction(SIGTERM, &act, NULL);
    sigaction(SIGINT, &act, NULL);
    sigaction(SIGALRM, &act, NULL);
    int *fds = calloc((size_t)n, sizeof(*fds));
    double t0 = now_ms();
    for (long i = 0; i < n; i++) {
        fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fds[i] < 0) {
            fprintf(stderr, "idle_conns: socket %ld: %s\n", i, strerror(errno));
            return 1;
        }
        int one = 1;
        setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) != 0) {
            fprintf(stderr, "idle_conns: connect %ld: %s\n", i, strerror(errno));
            return 1;
        }
        int rc = api_versions(fds[i], (uint32_t)i);
        if (rc != 0) {
            fprintf(stderr, "idle_conns: ApiVersions on connection %ld: %s\n", i, strerror(-rc));
            return 1;
        }
    }
    printf("ready conns=%ld ms=%.1f\n", n, now_ms() - t0);
    fflush(stdout);
    alarm((unsigned)hold_s);
    while (!stop)
        pause();
    for (long i = 0; i < n; i++)
        close(fds[i]);
    free(fds);
    return 0;
}
