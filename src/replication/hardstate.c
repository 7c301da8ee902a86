/* Encoding and crash-safe replacement of the hard-state file (replication/hardstate.h). Stateless. */
#include "replication/hardstate.h"

#include <errno.h>
#include <string.h>

#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "raft/conf.h"
#include "raft/raft.h"
#include "storage/io.h"

static const uint8_t magic[4] = {'R', 'H', 'S', '1'};

int raft_hard_state_load(int dirfd, struct raft_hard_state *hs)
{
    *hs = (struct raft_hard_state){.term = 0, .vote = RAFT_NONE, .commit = -1};
    uint8_t buf[RAFT_HARD_STATE_SIZE + 1];
    ssize_t n = io_read_small_file(dirfd, RAFT_HARD_STATE_FILE, buf, sizeof(buf));
    if (n == -ENOENT)
        return 0;
    if (n == -ERR_TOO_LARGE)
        return -ERR_CORRUPT;
    if (n < 0)
        return (int)n;
    if (n != RAFT_HARD_STATE_SIZE || memcmp(buf, magic, 4) != 0 ||
        crc32c(0, buf, 28) != be_get32(buf + 28))
        return -ERR_CORRUPT;
    int64_t term = (int64_t)be_get64(buf + 4);
    int32_t vote = (int32_t)be_get32(buf + 12);
    int64_t commit = (int64_t)be_get64(buf + 16);
    if (term < 0 || term > RAFT_TERM_MAX || vote < RAFT_NONE || commit < -1)
        return -ERR_CORRUPT;
    *hs = (struct raft_hard_state){.term = term, .vote = vote, .commit = commit};
    return 0;
}

int raft_hard_state_store(int dirfd, const struct raft_hard_state *hs)
{
    uint8_t buf[RAFT_HARD_STATE_SIZE] = {0};
    memcpy(buf, magic, 4);
    be_put64(buf + 4, (uint64_t)hs->term);
    be_put32(buf + 12, (uint32_t)hs->vote);
    be_put64(buf + 16, (uint64_t)hs->commit);
    be_put32(buf + 28, crc32c(0, buf, 28));
    if (dirfd < 0)
        return dirfd; /* the caller's directory could not be opened: -errno */
    return io_write_file_atomic(dirfd, RAFT_HARD_STATE_FILE, buf, sizeof(buf), true);
}
