/* A Raft replica's hard state on disk: term and vote (raft.h contract 2), plus a commit hint.
 *
 * File `raft-hard-state` in the partition directory, 32 bytes, big-endian:
 *   0 magic "RHS1" | 4 term i64 | 12 vote i32 | 16 commit i64 | 24 reserved u32 (0) |
 *   28 crc u32 (CRC-32C of bytes 0..27)
 * Written whole by io_write_file_atomic (temp file, fdatasync, rename, directory fsync), so a
 * crash leaves either the old or the new file, never a mix; a file that is there but does not
 * check out is corruption (-ERR_CORRUPT), never silently read as "no vote": forgetting a vote
 * would let this node vote twice in one term.
 *
 * The commit hint is an index known to be committed and durable in the log when the file was
 * written (the plog does not persist its high watermark). It may lag; it is only a head start
 * for the high watermark after a restart. */
#ifndef SP_RAFT_HARDSTATE_H
#define SP_RAFT_HARDSTATE_H

#include <stdint.h>

#define RAFT_HARD_STATE_FILE "raft-hard-state"
#define RAFT_HARD_STATE_SIZE 32

struct raft_hard_state {
    int64_t term;   /* current term (>= 0) */
    int32_t vote;   /* vote in term, RAFT_NONE if none */
    int64_t commit; /* commit hint (-1: none) */
};

/* Reads the file from dirfd. A missing file gives term 0, no vote, commit -1 and returns 0.
 * Returns 0, -ERR_CORRUPT (wrong size, magic, CRC or out-of-range fields) or -errno. */
int raft_hard_state_load(int dirfd, struct raft_hard_state *hs);

/* Replaces the file durably (see above) before returning. Returns 0 or -errno (the old file is
 * then intact). */
int raft_hard_state_store(int dirfd, const struct raft_hard_state *hs);

#endif
