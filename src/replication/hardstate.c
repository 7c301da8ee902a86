/* Encoding and crash-safe in-place update of the hard-state file (replication/hardstate.h).
 * Stateless. */
#include "replication/hardstate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "raft/conf.h"
#include "raft/raft.h"
#include "storage/io.h"

static const uint8_t magic[4] = {'R', 'H', 'S', '1'};

/* Decodes one record; false if it does not check out. */
static bool decode(const uint8_t *buf, struct raft_hard_state *hs)
{
    if (memcmp(buf, magic, 4) != 0 || crc32c(0, buf, 28) != be_get32(buf + 28))
        return false;
    int64_t term = (int64_t)be_get64(buf + 4);
    int32_t vote = (int32_t)be_get32(buf + 12);
    int64_t commit = (int64_t)be_get64(buf + 16);
    if (term < 0 || term > RAFT_TERM_MAX || vote < RAFT_NONE || commit < -1)
        return false;
    *hs = (struct raft_hard_state){.term = term, .vote = vote, .commit = commit};
    return true;
}

static void encode(uint8_t buf[RAFT_HARD_STATE_SIZE], const struct raft_hard_state *hs)
{
    memset(buf, 0, RAFT_HARD_STATE_SIZE);
    memcpy(buf, magic, 4);
    be_put64(buf + 4, (uint64_t)hs->term);
    be_put32(buf + 12, (uint32_t)hs->vote);
    be_put64(buf + 16, (uint64_t)hs->commit);
    be_put32(buf + 28, crc32c(0, buf, 28));
}

void raft_hard_state_encode(const struct raft_hard_state *hs, uint8_t out[RAFT_HARD_STATE_SIZE])
{
    encode(out, hs);
}

int raft_hard_state_decode(const uint8_t *buf, size_t len, struct raft_hard_state *hs)
{
    return len == RAFT_HARD_STATE_SIZE && decode(buf, hs) ? 0 : -ERR_CORRUPT;
}

/* Whether a was written after b: every store has a term, commit and vote at least those of
 * the one before (a vote is only ever cast once in a term). */
static bool newer(const struct raft_hard_state *a, const struct raft_hard_state *b)
{
    if (a->term != b->term)
        return a->term > b->term;
    if (a->commit != b->commit)
        return a->commit > b->commit;
    return a->vote != RAFT_NONE && b->vote == RAFT_NONE;
}

/* The slot of buf (two slots) holding the newest valid record, or -1 if neither checks out. */
static int newest_slot(const uint8_t *buf, struct raft_hard_state *out)
{
    struct raft_hard_state s[2];
    bool ok0 = decode(buf, &s[0]), ok1 = decode(buf + RAFT_HARD_STATE_SIZE, &s[1]);
    int k = ok0 && ok1 ? (newer(&s[1], &s[0]) ? 1 : 0) : ok0 ? 0 : ok1 ? 1 : -1;
    if (k >= 0 && out)
        *out = s[k];
    return k;
}

int raft_hard_state_load(int dirfd, struct raft_hard_state *hs)
{
    *hs = (struct raft_hard_state){.term = 0, .vote = RAFT_NONE, .commit = -1};
    uint8_t buf[RAFT_HARD_STATE_FILE_SIZE + 1];
    ssize_t n = io_read_small_file(dirfd, RAFT_HARD_STATE_FILE, buf, sizeof(buf));
    if (n == -ENOENT)
        return 0;
    if (n == -ERR_TOO_LARGE)
        return -ERR_CORRUPT;
    if (n < 0)
        return (int)n;
    if (n == RAFT_HARD_STATE_SIZE) /* an older release's single record */
        return decode(buf, hs) ? 0 : -ERR_CORRUPT;
    if (n != RAFT_HARD_STATE_FILE_SIZE || newest_slot(buf, hs) < 0)
        return -ERR_CORRUPT;
    return 0;
}

/* Overwrites the slot not holding the newest record, leaving the file open in *fd (not yet
 * synced); 1 if the file is not in the two-slot layout (missing, or an older release's), else
 * 0 or -errno. */
static int write_in_place(int dirfd, const uint8_t rec[RAFT_HARD_STATE_SIZE], int *fd_out)
{
    int fd = openat(dirfd, RAFT_HARD_STATE_FILE, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 1 : -errno;
    uint8_t buf[RAFT_HARD_STATE_FILE_SIZE + 1];
    ssize_t n = io_pread_upto(fd, buf, sizeof(buf), 0);
    int rc = 1;
    if (n == RAFT_HARD_STATE_FILE_SIZE) {
        int slot = newest_slot(buf, NULL) == 0 ? 1 : 0;
        rc = io_pwrite_all(fd, rec, RAFT_HARD_STATE_SIZE, (off_t)slot * RAFT_HARD_STATE_SIZE, NULL);
    } else if (n < 0) {
        rc = (int)n;
    }
    if (rc != 0) {
        close(fd);
        return rc;
    }
    *fd_out = fd;
    return 0;
}

int raft_hard_state_write(int dirfd, const struct raft_hard_state *hs, int *fd)
{
    if (dirfd < 0)
        return dirfd; /* the caller's directory could not be opened: -errno */
    uint8_t rec[RAFT_HARD_STATE_SIZE];
    encode(rec, hs);
    return write_in_place(dirfd, rec, fd);
}

int raft_hard_state_store(int dirfd, const struct raft_hard_state *hs)
{
    int fd = -1;
    int rc = raft_hard_state_write(dirfd, hs, &fd);
    if (rc == 0) {
        rc = io_fdatasync(fd);
        close(fd);
        return rc;
    }
    if (rc != 1)
        return rc;
    /* the first store (or the first after an upgrade) lays the file out whole */
    uint8_t file[RAFT_HARD_STATE_FILE_SIZE] = {0};
    encode(file, hs);
    return io_write_file_atomic(dirfd, RAFT_HARD_STATE_FILE, file, sizeof(file), true);
}
