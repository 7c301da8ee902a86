/* The entry just before a Raft log's start, on disk: its index and term (raft.h's restore
 * prev_term), and optionally the configuration in force there (after an install).
 *
 * The plog does not keep the term of the entry before its log start once retention, a prefix
 * truncation or an install removed it; the replica (replication/replica.h) records it here BEFORE it
 * moves the log start, together with the point it moves from. So the file holds up to two
 * points, the old one and the new one, and whichever names the log start found at the next open
 * (log start - 1 == index) is the right one, whether or not the move finished before a crash.
 *
 * File `raft-log-start` in the partition directory, big-endian:
 *   0 magic "RLS1" | 4 n u8 (1..2) | n points: index i64 | term i64 | conf_len u8 |
 *   conf_len bytes of raft_conf encoding (0: no configuration recorded) | then crc u32
 *   (CRC-32C of every byte before it)
 * Written whole by io_write_file_atomic (temp, fdatasync, rename, directory fsync): a crash
 * leaves the old file or the new one. A file that is there but does not check out is
 * -ERR_CORRUPT. Stateless. */
#ifndef SP_RAFT_LOGSTART_H
#define SP_RAFT_LOGSTART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raft/conf.h"

#define RAFT_LOG_START_FILE "raft-log-start"
#define RAFT_LOG_START_POINTS 2

struct raft_log_point {
    int64_t index; /* the entry before the log start (>= 0) */
    int64_t term;  /* its term (>= 1) */
    bool has_conf; /* conf is the configuration in force at index */
    struct raft_conf conf;
};

struct raft_log_start {
    struct raft_log_point p[RAFT_LOG_START_POINTS];
    size_t n; /* 0 (no file) .. RAFT_LOG_START_POINTS */
};

/* Reads the file from dirfd (a missing one gives n = 0). Returns 0, -ERR_CORRUPT or -errno. */
int raft_log_start_load(int dirfd, struct raft_log_start *ls);
/* Replaces the file durably with ls (1 <= n <= RAFT_LOG_START_POINTS, valid points: CHECK).
 * Returns 0 or -errno (the old file is then intact). */
int raft_log_start_store(int dirfd, const struct raft_log_start *ls);
/* The point with that index, or NULL. */
const struct raft_log_point *raft_log_start_find(const struct raft_log_start *ls, int64_t index);

#endif
