/* Encoding and crash-safe replacement of the log-start point file (replication/logstart.h).
 * Stateless. */
#include "replication/logstart.h"

#include <errno.h>
#include <string.h>

#include "base/check.h"
#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "raft/raft.h"
#include "storage/io.h"

static const uint8_t magic[4] = {'R', 'L', 'S', '1'};

#define POINT_MAX (8 + 8 + 1 + RAFT_CONF_ENCODED_MAX)
#define FILE_MAX (4 + 1 + RAFT_LOG_START_POINTS * POINT_MAX + 4)

int raft_log_start_load(int dirfd, struct raft_log_start *ls)
{
    memset(ls, 0, sizeof(*ls));
    uint8_t buf[FILE_MAX + 1];
    ssize_t n = io_read_small_file(dirfd, RAFT_LOG_START_FILE, buf, sizeof(buf));
    if (n == -ENOENT)
        return 0;
    if (n == -ERR_TOO_LARGE)
        return -ERR_CORRUPT;
    if (n < 0)
        return (int)n;
    size_t len = (size_t)n;
    if (len < 4 + 1 + 4 || memcmp(buf, magic, 4) != 0 ||
        crc32c(0, buf, len - 4) != be_get32(buf + len - 4))
        return -ERR_CORRUPT;
    size_t count = buf[4], pos = 5, end = len - 4;
    if (count < 1 || count > RAFT_LOG_START_POINTS)
        return -ERR_CORRUPT;
    struct raft_log_start out = {.n = count};
    for (size_t i = 0; i < count; i++) {
        struct raft_log_point *p = &out.p[i];
        if (end - pos < 17)
            return -ERR_CORRUPT;
        p->index = (int64_t)be_get64(buf + pos);
        p->term = (int64_t)be_get64(buf + pos + 8);
        size_t clen = buf[pos + 16];
        pos += 17;
        if (p->index < 0 || p->term < 1 || p->term > RAFT_TERM_MAX || clen > end - pos)
            return -ERR_CORRUPT;
        if (clen > 0) {
            if (raft_conf_decode(&p->conf, buf + pos, clen) != 0)
                return -ERR_CORRUPT;
            p->has_conf = true;
        }
        pos += clen;
    }
    if (pos != end)
        return -ERR_CORRUPT;
    *ls = out;
    return 0;
}

int raft_log_start_store(int dirfd, const struct raft_log_start *ls)
{
    CHECK(ls->n >= 1 && ls->n <= RAFT_LOG_START_POINTS);
    uint8_t buf[FILE_MAX];
    memcpy(buf, magic, 4);
    buf[4] = (uint8_t)ls->n;
    size_t pos = 5;
    for (size_t i = 0; i < ls->n; i++) {
        const struct raft_log_point *p = &ls->p[i];
        CHECK(p->index >= 0 && p->term >= 1 && p->term <= RAFT_TERM_MAX);
        be_put64(buf + pos, (uint64_t)p->index);
        be_put64(buf + pos + 8, (uint64_t)p->term);
        size_t clen = p->has_conf ? raft_conf_encode(&p->conf, buf + pos + 17) : 0;
        buf[pos + 16] = (uint8_t)clen;
        pos += 17 + clen;
    }
    be_put32(buf + pos, crc32c(0, buf, pos));
    pos += 4;
    if (dirfd < 0)
        return dirfd; /* the caller's directory could not be opened: -errno */
    return io_write_file_atomic(dirfd, RAFT_LOG_START_FILE, buf, pos, true);
}

const struct raft_log_point *raft_log_start_find(const struct raft_log_start *ls, int64_t index)
{
    for (size_t i = ls->n; i-- > 0;)
        if (ls->p[i].index == index)
            return &ls->p[i];
    return NULL;
}
