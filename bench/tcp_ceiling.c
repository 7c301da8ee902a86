/* tcp_ceiling: loopback TCP throughput, the ceiling a broker on this machine cannot beat.
 *
 *   build/bench/tcp_ceiling [--seconds N] [--write-bytes B]
 *
 * One sender thread writes B-byte buffers (default 1 MiB) into a connected 127.0.0.1 socket for
 * N seconds (default 3); one receiver thread reads and counts. Prints
 *   tcp_ceiling mb_per_s=F secs=F bytes=N write_bytes=B
 * where mb_per_s is MiB/s received (2^20 bytes, the unit streampulse bench uses). Exit 1 on a
 * socket error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct run {
    int fd;               /* this thread's end of the connection */
    size_t write_bytes;   /* sender: bytes per write() */
    int64_t deadline_ns;  /* sender: stop writing at this monotonic time */
    uint64_t bytes;       /* receiver: bytes read */
    int64_t last_read_ns; /* receiver: time of the last read that returned data */
    int err;              /* errno of a failure, 0 if none */
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void *sender(void *arg)
{
    struct run *r = arg;
    char *buf = malloc(r->write_bytes);
    if (!buf) {
        r->err = ENOMEM;
        return NULL;
    }
    memset(buf, 'x', r->write_bytes);
    while (now_ns() < r->deadline_ns) {
        size_t off = 0;
        while (off < r->write_bytes) {
            ssize_t n = write(r->fd, buf + off, r->write_bytes - off);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                r->err = errno;
                goto out;
            }
            off += (size_t)n;
        }
    }
out:
    shutdown(r->fd, SHUT_WR); /* the receiver sees EOF */
    free(buf);
    return NULL;
}

static void *receiver(void *arg)
{
    struct run *r = arg;
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    if (!buf) {
        r->err = ENOMEM;
        return NULL;
    }
    for (;;) {
        ssize_t n = read(r->fd, buf, cap);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            r->err = errno;
            break;
        }
        if (n == 0)
            break;
        r->bytes += (uint64_t)n;
        r->last_read_ns = now_ns();
    }
    free(buf);
    return NULL;
}

/* Connects a loopback pair: *a is the client end, *b the accepted end. */
static int loopback_pair(int *a, int *b)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0)
        return -1;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(lfd, 1) != 0 ||
        getsockname(lfd, (struct sockaddr *)&addr, &len) != 0)
        goto fail;
    *a = socket(AF_INET, SOCK_STREAM, 0);
    if (*a < 0 || connect(*a, (struct sockaddr *)&addr, sizeof(addr)) != 0)
        goto fail;
    *b = accept(lfd, NULL, NULL);
    if (*b < 0)
        goto fail;
    close(lfd);
    return 0;
fail:
    close(lfd);
    return -1;
}

int main(int argc, char **argv)
{
    double secs = 3;
    long write_bytes = 1 << 20;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
            secs = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--write-bytes") && i + 1 < argc) {
            write_bytes = atol(argv[++i]);
        } else {
            fprintf(stderr, "usage: tcp_ceiling [--seconds N] [--write-bytes B]\n");
            return !strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ? 0 : 2;
        }
    }
    if (!(secs > 0 && secs <= 600) || write_bytes < 1 || write_bytes > (1 << 30)) {
        fprintf(stderr, "tcp_ceiling: --seconds must be in (0, 600], --write-bytes in [1, 2^30]\n");
        return 2;
    }
    int a, b;
    if (loopback_pair(&a, &b) != 0) {
        perror("tcp_ceiling: loopback connection");
        return 1;
    }
    int64_t start = now_ns();
    struct run tx = {
        .fd = a, .write_bytes = (size_t)write_bytes, .deadline_ns = start + (int64_t)(secs * 1e9)};
    struct run rx = {.fd = b, .last_read_ns = start};
    pthread_t t_tx, t_rx;
    pthread_create(&t_rx, NULL, receiver, &rx);
    pthread_create(&t_tx, NULL, sender, &tx);
    pthread_join(t_tx, NULL);
    pthread_join(t_rx, NULL);
    close(a);
    close(b);
    if (tx.err || rx.err) {
        fprintf(stderr, "tcp_ceiling: %s\n", strerror(tx.err ? tx.err : rx.err));
        return 1;
    }
    double elapsed = (double)(rx.last_read_ns - start) / 1e9;
    if (elapsed <= 0)
        elapsed = 1e-9;
    printf("tcp_ceiling mb_per_s=%.1f secs=%.3f bytes=%llu write_bytes=%ld\n",
           (double)rx.bytes / 1048576.0 / elapsed, elapsed, (unsigned long long)rx.bytes,
           write_bytes);
    return 0;
}
