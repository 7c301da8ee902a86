/* Producer ids for InitProducerId (DESIGN.md §8): an allocator that hands out ids from blocks,
 * and the sources that supply the blocks.
 *
 * A block source never supplies an id twice, across restarts included. The broker's source
 * (cluster_pid_source_new, broker/cluster.h) obtains blocks from the controller, which records
 * each block in the metadata log before granting it; it answers -EAGAIN until its block has
 * arrived, and the allocator asks early (when PID_PREFETCH_PERCENT of the current block is used)
 * so that the wait rarely shows. The local source is what the last single-node release used
 * (<log.dirs>/producer-id-block: the end of a block persisted with write temp, fdatasync,
 * rename, fsync the directory before the block is handed out); the broker now only reads it
 * for the floor of an upgraded data directory (broker/legacy.h), and the unit tests drive it.
 *
 * Threading: reactor thread only. The local source's fsync runs inline, once per PID_BLOCK_SIZE
 * ids. */
#ifndef SP_BROKER_PRODUCER_IDS_H
#define SP_BROKER_PRODUCER_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PID_BLOCK_SIZE 1000
#define PID_PREFETCH_PERCENT 90
#define PID_FILE "producer-id-block"
/* How far past the highest producer id found in the logs allocation restarts when the block
 * file is corrupt (the ids handed out but never written anywhere are unknown). */
#define PID_CORRUPT_MARGIN 1000000

/* Ids [first, first + count). */
struct pid_block {
    int64_t first;
    int64_t count;
};

struct pid_source {
    /* Supplies the next block, durable before it returns: 0 with *out, -EAGAIN when a block is
     * on its way (ask again later), or another negative code. */
    int (*next_block)(struct pid_source *src, struct pid_block *out);
    /* Every id below this may have been handed out (the end of the last block supplied, in
     * this run or an earlier one); ids at or above it never were. */
    int64_t (*issued_end)(const struct pid_source *src);
    void (*destroy)(struct pid_source *src);
};

/* The local source: <dir>/producer-id-block holds the start of the next block, as text
 * ("version=1", "next.block.start=N", "crc32c=<hex of the two lines before>"). Blocks start at
 * max(file value, floor); floor is the broker's lower bound (one past the highest producer id
 * in any partition's state). A missing file starts at floor; a corrupt one is logged
 * (event=producer_id_block_corrupt) and allocation restarts at floor + PID_CORRUPT_MARGIN.
 * Returns 0 with *out, or a negative code with err set (the directory cannot be opened, the
 * file cannot be read). */
int pid_local_source_open(const char *dir, int64_t floor, struct pid_source **out, char *err,
                          size_t errcap);

struct pid_allocator;

/* Takes ownership of src. */
struct pid_allocator *pid_allocator_new(struct pid_source *src);
void pid_allocator_free(struct pid_allocator *a);

/* The next producer id: 0 with *id, -EAGAIN (no block yet: the caller answers with a
 * retriable error), or the source's error. */
int pid_allocator_next(struct pid_allocator *a, int64_t *id);

/* Asks the source for a block now when the allocator has none to hand out (a source that
 * answers -EAGAIN has been asked; the next pid_allocator_next takes what arrived), so the first
 * InitProducerId after a start does not wait. */
void pid_allocator_prefetch(struct pid_allocator *a);

/* Whether id may have been handed out (by this allocator or an earlier run's). */
bool pid_allocator_issued(const struct pid_allocator *a, int64_t id);

#endif
