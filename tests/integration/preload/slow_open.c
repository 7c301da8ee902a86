/* slow_open.so: an LD_PRELOAD shim for integration tests that makes one kind of file slow to
 * open, as a disk with a cold page cache is (t_restart_slow_disk).
 *
 * Every openat(2) for reading only whose last path component is $SLOW_OPEN_NAME waits
 * $SLOW_OPEN_MS milliseconds before it opens; every other call goes straight to libc's. Without
 * both variables set it changes nothing. Built as build/itest/slow_open.so (Makefile). */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/types.h>

#include "shim.h"

typedef int (*openat_fn)(int, const char *, int, ...);

static void slow_down(const char *path, int flags)
{
    if ((flags & O_ACCMODE) != O_RDONLY)
        return;
    shim_delay_if_named(path, "SLOW_OPEN_NAME", "SLOW_OPEN_MS");
}

static int forward(int dirfd, const char *path, int flags, mode_t mode)
{
    openat_fn real = (openat_fn)dlsym(RTLD_NEXT, "openat");
    return real(dirfd, path, flags, mode);
}

static mode_t mode_arg(int flags, va_list ap)
{
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int openat(int dirfd, const char *path, int flags, ...)
{
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    slow_down(path, flags);
    return forward(dirfd, path, flags, mode);
}

/* the same function under its large-file name (one on 64-bit glibc) */
int openat64(int dirfd, const char *path, int flags, ...) __attribute__((alias("openat")));
