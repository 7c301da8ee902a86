/* The configuration side file (replication/conflog.h).
 *
 * Owns: the in-memory copy of the records and an append fd.
 * Invariants:
 *   1. r[] is ordered by strictly increasing index, and the file's first `size` bytes hold
 *      exactly the records of r[] (after a load that found a torn tail, until conflog_rewrite,
 *      the file holds more bytes than `size`; appends then go at `size`, overwriting them).
 *   2. fd >= 0 only while exists. */
#include "replication/conflog.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/check.h"
#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "raft/raft.h"
#include "storage/io.h"

#define REC_FIXED (8 + 8 + 1 + 4)
#define REC_MAX (REC_FIXED + RAFT_CONF_ENCODED_MAX)

static size_t encode(const struct conflog_rec *rec, uint8_t *p)
{
    be_put64(p, (uint64_t)rec->index);
    be_put64(p + 8, (uint64_t)rec->term);
    size_t len = raft_conf_encode(&rec->conf, p + 17);
    p[16] = (uint8_t)len;
    be_put32(p + 17 + len, crc32c(0, p, 17 + len));
    return REC_FIXED + len;
}

/* Decodes one record at p (left bytes): its size, or 0 if it does not check out. */
static size_t decode(const uint8_t *p, size_t left, int64_t prev_index, struct conflog_rec *rec)
{
    if (left < REC_FIXED)
        return 0;
    size_t len = p[16];
    if (left < REC_FIXED + len || crc32c(0, p, 17 + len) != be_get32(p + 17 + len))
        return 0;
    rec->index = (int64_t)be_get64(p);
    rec->term = (int64_t)be_get64(p + 8);
    if (rec->index <= prev_index || rec->term < 0 || rec->term > RAFT_TERM_MAX ||
        raft_conf_decode(&rec->conf, p + 17, len) != 0)
        return 0;
    return REC_FIXED + len;
}

int conflog_load_none(struct conflog *cl)
{
    memset(cl, 0, sizeof(*cl));
    return 0;
}

int conflog_load(struct conflog *cl, int dirfd, bool *torn)
{
    memset(cl, 0, sizeof(*cl));
    if (torn)
        *torn = false;
    uint8_t *buf = mem_alloc(RAFT_CONF_LOG_BYTES_MAX);
    ssize_t n = io_read_small_file(dirfd, RAFT_CONF_LOG_FILE, buf, RAFT_CONF_LOG_BYTES_MAX);
    int rc = 0;
    if (n == -ENOENT)
        goto out_free_buf;
    if (n < 0) {
        rc = n == -ERR_TOO_LARGE ? -ERR_CORRUPT : (int)n;
        goto out_free_buf;
    }
    cl->exists = true;
    size_t pos = 0;
    while (pos < (size_t)n) {
        struct conflog_rec rec;
        size_t sz = decode(buf + pos, (size_t)n - pos, cl->n ? cl->r[cl->n - 1].index : -1, &rec);
        if (sz == 0) {
            log_warn("raft_conf_log_torn", "dirfd=%d offset=%zu bytes=%zu", dirfd, pos,
                     (size_t)n - pos);
            if (torn)
                *torn = true;
            break;
        }
        MEM_GROW(cl->r, cl->cap, cl->n + 1);
        cl->r[cl->n++] = rec;
        pos += sz;
    }
    cl->size = (int64_t)pos;
out_free_buf:
    mem_free(buf);
    return rc;
}

void conflog_free(struct conflog *cl)
{
    mem_free(cl->r);
    memset(cl, 0, sizeof(*cl));
}

int conflog_append(struct conflog *cl, int dirfd, int64_t index, int64_t term,
                   const struct raft_conf *c)
{
    CHECK(cl->n == 0 || index > cl->r[cl->n - 1].index);
    struct conflog_rec rec = {.index = index, .term = term, .conf = *c};
    uint8_t buf[REC_MAX];
    size_t len = encode(&rec, buf);
    if (dirfd < 0)
        return dirfd;
    int fd = io_create(dirfd, RAFT_CONF_LOG_FILE, O_WRONLY | O_CLOEXEC, 0644);
    if (fd < 0)
        return fd;
    bool created = !cl->exists;
    cl->exists = true;
    int rc = io_pwrite_all(fd, buf, len, (off_t)cl->size, NULL);
    if (rc == 0)
        rc = io_fdatasync(fd);
    close(fd);
    if (rc == 0 && created)
        rc = io_fsync_dir(dirfd);
    if (rc != 0)
        return rc;
    cl->size += (int64_t)len;
    MEM_GROW(cl->r, cl->cap, cl->n + 1);
    cl->r[cl->n++] = rec;
    return 0;
}

int conflog_rewrite(struct conflog *cl, int dirfd)
{
    if (dirfd < 0)
        return dirfd;
    uint8_t *buf = mem_alloc(cl->n * REC_MAX + 1);
    size_t len = 0;
    for (size_t i = 0; i < cl->n; i++)
        len += encode(&cl->r[i], buf + len);
    int rc = io_write_file_atomic(dirfd, RAFT_CONF_LOG_FILE, buf, len, true);
    mem_free(buf);
    if (rc != 0)
        return rc;
    cl->exists = true;
    cl->size = (int64_t)len;
    return 0;
}

int conflog_truncate(struct conflog *cl, int dirfd, int64_t from)
{
    size_t k = cl->n;
    while (k > 0 && cl->r[k - 1].index >= from)
        k--;
    if (k == cl->n)
        return 0;
    cl->n = k;
    return conflog_rewrite(cl, dirfd);
}

long conflog_find(const struct conflog *cl, int64_t i)
{
    long k = (long)cl->n - 1;
    while (k >= 0 && cl->r[k].index > i)
        k--;
    return k;
}
