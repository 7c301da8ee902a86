/* disk_ceiling: durable write throughput of the data directory's disk, the ceiling that acks=all
 * produce (every acknowledged byte fdatasync'ed) cannot beat on this machine.
 *
 *   build/bench/disk_ceiling DIR [--seconds N] [--write-bytes B] [--sync-bytes S]
 *
 * Works like the broker's group commit: a writer thread appends B-byte buffers (default 1 MiB)
 * to a new file in DIR for N seconds (default 3) while a syncer thread calls fdatasync whenever
 * at least S bytes (default 1 MiB) were written since its last call, and once more at the end;
 * the file is then deleted. Prints
 *   disk_ceiling mb_per_s=F secs=F bytes=N write_bytes=B sync_bytes=S syncs=N
 * where mb_per_s is MiB/s made durable (bytes covered by a finished fdatasync, in 2^20 bytes,
 * the unit streampulse bench uses) over the time until the last fdatasync returned. Exit 1 on an
 * I/O error (named on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int usage(void)
{
    fprintf(stderr, "usage: disk_ceiling DIR [--seconds N] [--write-bytes B] [--sync-bytes S]\n");
    return 2;
}

static int parse_pos(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v <= 0)
        return -1;
    *out = v;
    return 0;
}

struct run {
    int fd;
    long long write_bytes;
    long long sync_bytes;
    int64_t deadline_ns;
    _Atomic long long written; /* bytes written so far (writer) */
    _Atomic int writer_done;
    _Atomic int failed;
    long long durable;         /* bytes covered by a finished fdatasync (syncer) */
    long long syncs;
};

static void fail(struct run *r, const char *what, int err)
{
    fprintf(stderr, "disk_ceiling: %s: %s\n", what, err ? strerror(err) : "0 bytes");
    atomic_store(&r->failed, 1);
}

static void *writer(void *arg)
{
    struct run *r = arg;
    char *buf = malloc((size_t)r->write_bytes);
    if (!buf) {
        fail(r, "malloc", ENOMEM);
        atomic_store(&r->writer_done, 1);
        return NULL;
    }
    for (long long i = 0; i < r->write_bytes; i++)
        buf[i] = (char)(i * 131 + 7); /* not all zeroes: no filesystem shortcut */
    while (now_ns() < r->deadline_ns && !atomic_load(&r->failed)) {
        long long off = 0;
        while (off < r->write_bytes) {
            ssize_t n = write(r->fd, buf + off, (size_t)(r->write_bytes - off));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                fail(r, "write", n < 0 ? errno : 0);
                goto out;
            }
            off += n;
        }
        atomic_fetch_add(&r->written, r->write_bytes);
    }
out:
    free(buf);
    atomic_store(&r->writer_done, 1);
    return NULL;
}

static void *syncer(void *arg)
{
    struct run *r = arg;
    for (;;) {
        int done = atomic_load(&r->writer_done);
        long long w = atomic_load(&r->written);
        if (atomic_load(&r->failed))
            return NULL;
        if (w - r->durable >= r->sync_bytes || (done && w > r->durable)) {
            if (fdatasync(r->fd) != 0) {
                fail(r, "fdatasync", errno);
                return NULL;
            }
            r->durable = w;
            r->syncs++;
        } else if (done) {
            return NULL;
        } else {
            struct timespec ts = {0, 100000}; /* 0.1 ms: a flusher thread waiting for work */
            nanosleep(&ts, NULL);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-')
        return usage();
    const char *dir = argv[1];
    long long secs = 3, write_bytes = 1 << 20, sync_bytes = 1 << 20;
    for (int i = 2; i < argc; i += 2) {
        long long *dst = !strcmp(argv[i], "--seconds")       ? &secs
                         : !strcmp(argv[i], "--write-bytes") ? &write_bytes
                         : !strcmp(argv[i], "--sync-bytes")  ? &sync_bytes
                                                             : NULL;
        if (!dst || i + 1 >= argc || parse_pos(argv[i + 1], dst) != 0)
            return usage();
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/disk_ceiling.%d.tmp", dir, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        fprintf(stderr, "disk_ceiling: cannot create %s: %s\n", path, strerror(errno));
        return 1;
    }
    int64_t start = now_ns();
    struct run r = {.fd = fd, .write_bytes = write_bytes, .sync_bytes = sync_bytes,
                    .deadline_ns = start + secs * 1000000000LL};
    pthread_t tw, ts;
    if (pthread_create(&tw, NULL, writer, &r) != 0 || pthread_create(&ts, NULL, syncer, &r) != 0) {
        fprintf(stderr, "disk_ceiling: cannot start threads\n");
        exit(1);
    }
    pthread_join(tw, NULL);
    pthread_join(ts, NULL);
    double elapsed = (double)(now_ns() - start) / 1e9;
    close(fd);
    unlink(path);
    if (atomic_load(&r.failed))
        return 1;
    printf("disk_ceiling mb_per_s=%.1f secs=%.3f bytes=%lld write_bytes=%lld sync_bytes=%lld "
           "syncs=%lld\n",
           (double)r.durable / (1 << 20) / elapsed, elapsed, r.durable, write_bytes, sync_bytes,
           r.syncs);
    return 0;
}
