/* What the LD_PRELOAD shims of the integration tests (the .c files beside this one) share:
 * each makes calls on one named file slow. Header-only, as each shim is one shared object. */
#ifndef SP_ITEST_PRELOAD_SHIM_H
#define SP_ITEST_PRELOAD_SHIM_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Waits $ms_var milliseconds when path's last component is $name_var; returns at once when
 * either variable is unset or path is NULL. */
static inline void shim_delay_if_named(const char *path, const char *name_var, const char *ms_var)
{
    const char *name = getenv(name_var);
    const char *ms = getenv(ms_var);
    if (!name || !ms || !path)
        return;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, name) != 0)
        return;
    long v = strtol(ms, NULL, 10);
    struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

#endif
