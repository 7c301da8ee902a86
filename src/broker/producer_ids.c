/* Producer-id allocator and the local block source (broker/producer_ids.h).
 *
 * Allocator state: cur (the block ids come from; next is the next one), pending (a block
 * obtained early, or none). Transitions, all in pid_allocator_next: cur exhausted -> cur =
 * pending, or a block asked for now; cur PID_PREFETCH_PERCENT used and no pending -> ask for
 * pending (a failure here is only retried later).
 *
 * Invariants:
 *   1. cur.first <= next <= cur.first + cur.count; pending, when present, starts at or after
 *      the end of cur.
 *   2. Local source: the file on disk says next.block.start >= the end of every block
 *      supplied (it is written before the block is returned). */
#include "broker/producer_ids.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/check.h"
#include "base/crc32c.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "storage/io.h"

/* ---- the local source ---- */

struct local_source {
    struct pid_source base;
    int dirfd;
    char *dir;
    int64_t next; /* start of the next block: what the file says */
};

/* The two content lines of the file for value v into buf; returns their length. */
static int format_body(char *buf, size_t cap, int64_t v)
{
    return snprintf(buf, cap, "version=1\nnext.block.start=%" PRId64 "\n", v);
}

static int write_file(struct local_source *s, int64_t v)
{
    char buf[128];
    int n = format_body(buf, sizeof(buf), v);
    uint32_t crc = crc32c(0, buf, (size_t)n);
    n += snprintf(buf + n, sizeof(buf) - (size_t)n, "crc32c=%08x\n", crc);
    return io_write_file_atomic(s->dirfd, PID_FILE, buf, (size_t)n, true);
}

/* Parses the file; -ERR_CORRUPT unless it is exactly what write_file writes. */
static int parse_file(const char *buf, size_t len, int64_t *v)
{
    const char *p = buf, *end = buf + len;
    const char *body_end = NULL;
    static const char key[] = "version=1\nnext.block.start=";
    if (len < sizeof(key) - 1 || memcmp(p, key, sizeof(key) - 1) != 0)
        return -ERR_CORRUPT;
    p += sizeof(key) - 1;
    int64_t x = 0;
    int digits = 0;
    while (p < end && *p >= '0' && *p <= '9' && digits < 18) {
        x = x * 10 + (*p++ - '0');
        digits++;
    }
    if (digits == 0 || p >= end || *p != '\n')
        return -ERR_CORRUPT;
    body_end = ++p;
    char want[128];
    int n = format_body(want, sizeof(want), x);
    if ((size_t)n != (size_t)(body_end - buf) || memcmp(want, buf, (size_t)n) != 0)
        return -ERR_CORRUPT; /* leading zeros and the like */
    char tail[32];
    int m = snprintf(tail, sizeof(tail), "crc32c=%08x\n", crc32c(0, buf, (size_t)n));
    if ((size_t)(end - body_end) != (size_t)m || memcmp(body_end, tail, (size_t)m) != 0)
        return -ERR_CORRUPT;
    *v = x;
    return 0;
}

static int local_next_block(struct pid_source *src, struct pid_block *out)
{
    struct local_source *s = (struct local_source *)src;
    if (s->next > INT64_MAX - PID_BLOCK_SIZE)
        return -ERR_LIMIT;
    int64_t end = s->next + PID_BLOCK_SIZE;
    int rc = write_file(s, end);
    if (rc != 0) {
        log_error("producer_id_block_write_failed", "dir=%s error=\"%s\"", s->dir, err_str(rc));
        return rc;
    }
    *out = (struct pid_block){s->next, PID_BLOCK_SIZE};
    s->next = end;
    log_debug("producer_id_block", "first=%" PRId64 " count=%d", out->first, PID_BLOCK_SIZE);
    return 0;
}

static int64_t local_issued_end(const struct pid_source *src)
{
    return ((const struct local_source *)src)->next;
}

static void local_destroy(struct pid_source *src)
{
    struct local_source *s = (struct local_source *)src;
    close(s->dirfd);
    mem_free(s->dir);
    mem_free(s);
}

int pid_local_source_open(const char *dir, int64_t floor, struct pid_source **out, char *err,
                          size_t errcap)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        int e = -errno;
        snprintf(err, errcap, "cannot open %s: %s", dir, err_str(e));
        return e;
    }
    char buf[256];
    ssize_t n = io_read_small_file(dfd, PID_FILE, buf, sizeof(buf));
    int64_t v = 0;
    floor = MAX(floor, 0);
    if (n == -ENOENT) {
        v = floor;
    } else if (n < 0 && n != -ERR_TOO_LARGE) {
        snprintf(err, errcap, "cannot read %s/%s: %s", dir, PID_FILE, err_str((int)n));
        close(dfd);
        return (int)n;
    } else if (n < 0 || parse_file(buf, (size_t)n, &v) != 0) {
        v = floor + PID_CORRUPT_MARGIN;
        log_error("producer_id_block_corrupt",
                  "dir=%s file=%s action=restart_allocation next_block_start=%" PRId64, dir,
                  PID_FILE, v);
    } else {
        v = MAX(v, floor);
    }
    struct local_source *s = mem_calloc(1, sizeof(*s));
    s->base = (struct pid_source){local_next_block, local_issued_end, local_destroy};
    s->dirfd = dfd;
    s->dir = mem_strdup(dir);
    s->next = v;
    *out = &s->base;
    return 0;
}

/* ---- the allocator ---- */

struct pid_allocator {
    struct pid_source *src;
    struct pid_block cur;     /* count 0: none yet */
    int64_t next;             /* next id of cur */
    struct pid_block pending; /* count 0: none */
};

struct pid_allocator *pid_allocator_new(struct pid_source *src)
{
    struct pid_allocator *a = mem_calloc(1, sizeof(*a));
    a->src = src;
    return a;
}

void pid_allocator_free(struct pid_allocator *a)
{
    if (!a)
        return;
    a->src->destroy(a->src);
    mem_free(a);
}

int pid_allocator_next(struct pid_allocator *a, int64_t *id)
{
    if (a->next >= a->cur.first + a->cur.count) {
        if (a->pending.count > 0) {
            a->cur = a->pending;
            a->pending = (struct pid_block){0};
        } else {
            struct pid_block b;
            int rc = a->src->next_block(a->src, &b);
            if (rc != 0)
                return rc;
            CHECK(b.count > 0 && b.first >= 0);
            a->cur = b;
        }
        a->next = a->cur.first;
    }
    *id = a->next++;
    if (a->pending.count == 0 &&
        (a->next - a->cur.first) * 100 >= a->cur.count * PID_PREFETCH_PERCENT) {
        struct pid_block b;
        if (a->src->next_block(a->src, &b) == 0) {
            CHECK(b.count > 0 && b.first >= a->cur.first + a->cur.count);
            a->pending = b;
        }
    }
    return 0;
}

void pid_allocator_prefetch(struct pid_allocator *a)
{
    if (a->next < a->cur.first + a->cur.count || a->pending.count > 0)
        return;
    struct pid_block b;
    if (a->src->next_block(a->src, &b) == 0) {
        CHECK(b.count > 0 && b.first >= 0);
        a->pending = b;
    }
}

bool pid_allocator_issued(const struct pid_allocator *a, int64_t id)
{
    return id >= 0 && id < a->src->issued_end(a->src);
}
