/* slow_sync.so: an LD_PRELOAD shim for integration tests that makes the flushes of one file
 * slow, as a loaded disk's are (t_topic_create_ready: the node's kvstore, where every new
 * partition's first Raft hard state must be durable before it can lead).
 *
 * Every fdatasync(2) and fsync(2) of a file whose last path component is $SLOW_SYNC_NAME waits
 * $SLOW_SYNC_MS milliseconds before it goes to libc's; every other call goes straight there.
 * Without both variables set it changes nothing. Built as build/itest/slow_sync.so (Makefile). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*sync_fn)(int);

static void slow_down(int fd)
{
    const char *name = getenv("SLOW_SYNC_NAME");
    const char *ms = getenv("SLOW_SYNC_MS");
    if (!name || !ms)
        return;
    char link[64], path[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0)
        return;
    path[n] = '\0';
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, name) != 0)
        return;
    long v = strtol(ms, NULL, 10);
    struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static int forward(const char *name, int fd)
{
    sync_fn real = (sync_fn)dlsym(RTLD_NEXT, name);
    return real(fd);
}

int fdatasync(int fd)
{
    slow_down(fd);
    return forward("fdatasync", fd);
}

int fsync(int fd)
{
    slow_down(fd);
    return forward("fsync", fd);
}
