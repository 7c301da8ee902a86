/* Read-ahead of many partition directories for a restart that opens them one after another.
 *
 * A restart opens every partition's log (a few at a time, in order); each open lists its
 * directory and reads the tail of its last segment, and, in a directory an older release wrote,
 * a few small checkpoint files. With the page cache cold (after a power cut, or once the machine
 * reclaimed it), each of those reads waits for the disk on its own, one at a time: at tens of
 * thousands of partitions that waiting was about half of a restart. A prefetch walks the same
 * directories ahead of the opener on a few threads of its own, so the disk serves many reads at
 * once and the opener finds them cached.
 *
 * Contract: purely advisory. It only reads (opendir, open O_RDONLY, readahead(2)); a directory
 * or file it cannot read is skipped without a word, since the open that follows reports what is
 * wrong. It stays at most `window` directories ahead of the position the caller last reported
 * (prefetch_reached), so a cache it warms is used before memory pressure could take it back,
 * and never reads a directory the opener has reached. It reads what an open reads: the listing,
 * the small files, and of the segments the last one only; no older segment, index or producer
 * snapshot (those are read when first used, and reading them for fifty thousand partitions cost
 * a restart after kill -9 more than its opens). Each file is read whole up to PREFETCH_FILE_MAX
 * bytes; of a bigger one (a segment), its last PREFETCH_FILE_MAX bytes, where recovery's tail
 * check reads; a file of one page whose page is cached already is left alone (a bigger one is
 * read ahead regardless: readahead(2) passes over what is cached), and once directory after
 * directory is found cached, listing and files (a restart soon after a stop), only a sample of
 * the rest is looked at, until the opener reports a read of its own (prefetch_missed). Its
 * threads hold at most two descriptors each at any time.
 *
 * Threading: prefetch_start and prefetch_stop from one thread; prefetch_reached and
 * prefetch_missed from the openers' threads (they take the lock). */
#ifndef SP_STORAGE_PREFETCH_H
#define SP_STORAGE_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#define PREFETCH_FILE_MAX (1 << 20)
#define PREFETCH_THREADS 8   /* reads in flight at once, besides the opener's */
#define PREFETCH_WINDOW 4096 /* directories ahead of the opener, at most */

struct prefetch;

struct prefetch_stats {
    uint64_t dirs;      /* directories listed */
    uint64_t dirs_cold; /* of which the listing read from the disk */
    uint64_t files;     /* files read ahead */
    uint64_t cached;    /* files found cached already, so not read */
    uint64_t bytes;     /* bytes asked for */
    uint64_t missed;    /* the opener's reports of a read of its own (prefetch_missed) */
};

/* Starts reading ahead dirs[0..n) (copied) on up to `threads` threads, at most `window`
 * directories past the last prefetch_reached (0 at first). Returns NULL when there is nothing
 * to do (n == 0, threads == 0) or no thread could be started: callers go on without. */
struct prefetch *prefetch_start(const char *const *dirs, size_t n, int threads, size_t window);
/* The opener has reached dirs[i] (and is done with those before it). */
void prefetch_reached(struct prefetch *pf, size_t i);
/* The opener had to read from the disk itself (io_thread_blocks_read moved over an open): the
 * threads stop sampling (invariant 5 of prefetch.c) and read every directory ahead again. */
void prefetch_missed(struct prefetch *pf);
/* Waits until every directory the window allows has been read ahead (tests). */
void prefetch_wait_idle(struct prefetch *pf);
/* Stops the threads (those reading finish their file first) and frees pf. NULL is fine.
 * *stats, if given, gets what was done. */
void prefetch_stop(struct prefetch *pf, struct prefetch_stats *stats);

#endif
