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
#include <unistd.h>

#include "shim.h"

typedef int (*sync_fn)(int);

static void slow_down(int fd)
{
    if (!getenv("SLOW_SYNC_NAME") || !getenv("SLOW_SYNC_MS"))
        return;
    char link[64], path[4096];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n <= 0)
        return;
    path[n] = '\0';
    shim_delay_if_named(path, "SLOW_SYNC_NAME", "SLOW_SYNC_MS");
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
