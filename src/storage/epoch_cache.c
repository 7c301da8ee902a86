#include "storage/epoch_cache.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "storage/io.h"

/* Refuse absurd checkpoint files before parsing them. */
#define EPOCH_FILE_MAX (1 << 20)
#define EPOCH_LINE_MAX 48

void epoch_cache_init(struct epoch_cache *c)
{
    memset(c, 0, sizeof(*c));
}

void epoch_cache_free(struct epoch_cache *c)
{
    mem_free(c->e);
    epoch_cache_init(c);
}

int32_t epoch_cache_last_epoch(const struct epoch_cache *c)
{
    return c->n ? c->e[c->n - 1].epoch : -1;
}

bool epoch_cache_assign(struct epoch_cache *c, int32_t epoch, int64_t start)
{
    if (epoch < 0 || (c->n && epoch <= c->e[c->n - 1].epoch))
        return false;
    if (c->n && start < c->e[c->n - 1].start)
        start = c->e[c->n - 1].start;
    MEM_GROW_FROM(c->e, c->cap, c->n + 1, 2); /* most logs have seen a few epochs */
    c->e[c->n++] = (struct epoch_entry){epoch, start};
    return true;
}

int64_t epoch_cache_end_offset(const struct epoch_cache *c, int32_t epoch, int64_t leo)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].epoch > epoch)
            return c->e[i].start;
    return leo;
}

bool epoch_cache_truncate_end(struct epoch_cache *c, int64_t end)
{
    size_t n = c->n;
    while (c->n > 0 && c->e[c->n - 1].start >= end)
        c->n--;
    return n != c->n;
}

bool epoch_cache_truncate_start(struct epoch_cache *c, int64_t start)
{
    size_t drop = 0;
    while (drop + 1 < c->n && c->e[drop + 1].start <= start)
        drop++;
    bool changed = drop > 0;
    if (drop) {
        memmove(c->e, c->e + drop, (c->n - drop) * sizeof(*c->e));
        c->n -= drop;
    }
    if (c->n && c->e[0].start < start) {
        c->e[0].start = start;
        changed = true;
    }
    return changed;
}

/* Parses one decimal integer ending at a space or newline; sticky failure through *ok. */
static int64_t parse_int(const char **p, const char *end, char term, bool *ok)
{
    const char *s = *p;
    bool neg = false;
    if (s < end && *s == '-') {
        neg = true;
        s++;
    }
    const char *digits = s;
    int64_t v = 0;
    while (s < end && *s >= '0' && *s <= '9') {
        if (v > (INT64_MAX - 9) / 10) {
            *ok = false;
            return 0;
        }
        v = v * 10 + (*s - '0');
        s++;
    }
    if (s == digits || s == end || *s != term) {
        *ok = false;
        return 0;
    }
    *p = s + 1;
    return neg ? -v : v;
}

int epoch_cache_decode(struct epoch_cache *c, const char *buf, size_t len)
{
    epoch_cache_free(c);
    const char *p = buf, *end = buf + len;
    bool ok = true;
    int64_t version = parse_int(&p, end, '\n', &ok);
    int64_t count = parse_int(&p, end, '\n', &ok);
    /* each entry needs at least "0 0\n" */
    if (!ok || version != 0 || count < 0 || count > (end - p) / 4)
        return -ERR_CORRUPT;
    for (int64_t i = 0; i < count; i++) {
        int64_t epoch = parse_int(&p, end, ' ', &ok);
        int64_t start = parse_int(&p, end, '\n', &ok);
        bool in_order = c->n == 0 || (epoch > c->e[c->n - 1].epoch && start >= c->e[c->n - 1].start);
        if (!ok || epoch < 0 || epoch > INT32_MAX || start < 0 || !in_order) {
            epoch_cache_free(c);
            return -ERR_CORRUPT;
        }
        epoch_cache_assign(c, (int32_t)epoch, start);
    }
    if (p != end) {
        epoch_cache_free(c);
        return -ERR_CORRUPT;
    }
    return 0;
}

int epoch_cache_load(struct epoch_cache *c, int dirfd)
{
    epoch_cache_free(c);
    char *buf = mem_alloc(EPOCH_FILE_MAX);
    ssize_t len = io_read_small_file(dirfd, EPOCH_CACHE_FILE, buf, EPOCH_FILE_MAX);
    int rc = len < 0 ? (len == -ERR_TOO_LARGE ? -ERR_CORRUPT : (int)len)
                     : epoch_cache_decode(c, buf, (size_t)len);
    mem_free(buf);
    return rc;
}

char *epoch_cache_encode(const struct epoch_cache *c, size_t *len)
{
    size_t cap = 32 + c->n * EPOCH_LINE_MAX;
    char *buf = mem_alloc(cap);
    size_t n = (size_t)snprintf(buf, cap, "0\n%zu\n", c->n);
    for (size_t i = 0; i < c->n; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%" PRId32 " %" PRId64 "\n", c->e[i].epoch,
                              c->e[i].start);
    *len = n;
    return buf;
}

int epoch_cache_store(const struct epoch_cache *c, int dirfd, bool sync)
{
    size_t len;
    char *buf = epoch_cache_encode(c, &len);
    int rc = io_write_file_atomic(dirfd, EPOCH_CACHE_FILE, buf, len, sync);
    mem_free(buf);
    return rc;
}
