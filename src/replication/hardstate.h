/* A Raft replica's hard state on disk: term and vote (raft.h contract 2), plus a commit hint.
 *
 * File `raft-hard-state` in the partition directory: two slots of 32 bytes, each a record,
 * big-endian:
 *   0 magic "RHS1" | 4 term i64 | 12 vote i32 | 16 commit i64 | 24 reserved u32 (0) |
 *   28 crc u32 (CRC-32C of bytes 0..27)
 * A store overwrites the slot that does not hold the newest record in place (one pwrite and one
 * fdatasync: no temp file, rename or directory fsync, which at thousands of partitions made
 * every start slow) and the newest valid slot is the state; the newest is the one with the
 * larger term, then commit, then a vote (successive stores never lower any of them). A crash
 * mid-store tears only the slot being written, whose store had not returned, so the other
 * slot's state is the one every message sent so far was based on. The first store writes the
 * whole file by io_write_file_atomic. A 32-byte file (one record, written whole by older
 * releases) is read as before; older releases cannot read the two-slot file (a downgrade must
 * keep the data directory of that release). A file that is there but has no valid record is
 * corruption (-ERR_CORRUPT), never silently read as "no vote": forgetting a vote would let
 * this node vote twice in one term. (A newest slot damaged after its store completed is
 * indistinguishable from a torn one and reads as the older slot.)
 *
 * The commit hint is an index known to be committed and durable in the log when the file was
 * written (the plog does not persist its high watermark). It may lag; it is only a head start
 * for the high watermark after a restart. */
#ifndef SP_RAFT_HARDSTATE_H
#define SP_RAFT_HARDSTATE_H

#include <stddef.h>
#include <stdint.h>

#define RAFT_HARD_STATE_FILE "raft-hard-state"
#define RAFT_HARD_STATE_SIZE 32                              /* one record */
#define RAFT_HARD_STATE_FILE_SIZE (2 * RAFT_HARD_STATE_SIZE) /* the file: two slots */

struct raft_hard_state {
    int64_t term;   /* current term (>= 0) */
    int32_t vote;   /* vote in term, RAFT_NONE if none */
    int64_t commit; /* commit hint (-1: none) */
};

/* One record (the layout above) of hs, for a store that keeps the hard state elsewhere (the
 * node's kvstore: replication/replica.c); decode checks magic, CRC and ranges. */
void raft_hard_state_encode(const struct raft_hard_state *hs, uint8_t out[RAFT_HARD_STATE_SIZE]);
int raft_hard_state_decode(const uint8_t *buf, size_t len, struct raft_hard_state *hs);

/* Reads the file from dirfd. A missing file gives term 0, no vote, commit -1 and returns 0.
 * Returns 0, -ERR_CORRUPT (wrong size, magic, CRC or out-of-range fields) or -errno. */
int raft_hard_state_load(int dirfd, struct raft_hard_state *hs);

/* The first half of a store, for a caller that syncs elsewhere (replication/replica.c hands
 * the fdatasync to the flusher): writes hs into the slot not holding the newest record and
 * returns 0 with the file's descriptor in *fd, for the caller to fdatasync and close. Until that
 * fdatasync returned, hs is not durable and the caller must neither report it (raft.h contract
 * 2) nor write again: a second write would overwrite the slot of the last durable state. Returns
 * 1 when the file is not in the two-slot layout (missing, or an older release's; then
 * raft_hard_state_store lays it out, durably), or -errno (the newest record is intact). */
int raft_hard_state_write(int dirfd, const struct raft_hard_state *hs, int *fd);

/* Stores hs durably (see above) before returning. Returns 0 or -errno (the newest record before
 * the call is then intact). */
int raft_hard_state_store(int dirfd, const struct raft_hard_state *hs);

#endif
