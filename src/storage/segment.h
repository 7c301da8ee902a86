/* A segment: one `<base %020lld>.log` file of whole record batches, and its sparse indexes
 * (`.index`, `.timeindex`, storage/index.h).
 *
 * Lifecycle (the plog drives it):
 *   created/opened --segment_append--> active --segment_seal--> sealed (closed, read-only)
 *   active <--segment_truncate-- (suffix truncation may re-open the last sealed one)
 *   any --segment_free + segment_remove_files--> gone
 * An active segment keeps its indexes in memory; a sealed one has them on disk and in memory
 * only while loaded (segment_load_index / segment_unload_index; the plog bounds how many).
 *
 * Invariants:
 *   1. [0, size) of the file holds whole batches with strictly increasing offsets; every batch
 *      offset lies in [base, base+2^31). end is the offset after the last batch (base when
 *      empty), except that a sealed segment ends where the next one begins: compaction removes
 *      batches, so offsets may have gaps, also before the first and after the last batch. A gap
 *      is legitimate only below gaps_below (what the cleaner may have rewritten); recovery cuts
 *      the log at any other.
 *   2. index entries point at batch starts below size (loaded indexes are validated, and reads
 *      double-check the header an entry points at).
 *   3. max_ts is the largest maxTimestamp of the batches (-1 when unknown/empty).
 *   4. win, when set, holds exactly the file's bytes [win->pos, win->pos + win->len), all below
 *      size: set only by the open's scans, dropped by whatever may rewrite those bytes.
 *
 * Bytes read from the file are untrusted: scans report -ERR_CORRUPT / -ERR_SHORT, never CHECK. */
#ifndef SP_STORAGE_SEGMENT_H
#define SP_STORAGE_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/iobuf.h"
#include "storage/fdcache.h"
#include "storage/index.h"

struct epoch_cache;

#define SEGMENT_NAME_MAX 40     /* "%020lld" + ".timeindex.tmp" + NUL */
#define SEGMENT_SCAN_BUF 65536  /* header reads go through a buffer this large */
#define SEGMENT_REL_MAX INT32_MAX

/* A batch header as found in a segment file. */
struct batch_info {
    int64_t pos;    /* file position */
    int64_t base;   /* baseOffset */
    int64_t last;   /* base + lastOffsetDelta */
    int64_t size;   /* total bytes (batchLength + 12) */
    int64_t max_ts; /* maxTimestamp */
    int32_t epoch;  /* partitionLeaderEpoch */
    int32_t records; /* recordsCount: 0 for a record-less batch (a Raft NOOP/CONFIG entry, or
                      * one the cleaner emptied but kept for a producer's sequence) */
};

/* Bytes [pos, pos + len) of a segment's file, kept in memory exactly as the file has them (see
 * segment_window_drop for how long). */
struct segment_window {
    int64_t pos;
    size_t len;
    uint8_t bytes[];
};

/* Buffered, bounds-checked reader of consecutive batch headers. */
struct batch_scanner {
    int fd;
    int64_t pos;      /* next batch */
    int64_t limit;    /* no batch may extend past this (file size) */
    int64_t fill_end; /* buffer refills need not read past this (a hint) */
    uint8_t *buf;
    size_t cap;
    const struct segment_window *win; /* serves the fills it covers instead of a pread */
    const uint8_t *data; /* the bytes at buf_pos: buf, or win's */
    int64_t buf_pos;     /* file position of data[0] */
    size_t buf_len;      /* valid bytes at data */
};

void scanner_init(struct batch_scanner *s, int fd, int64_t pos, int64_t limit, uint8_t *buf,
                  size_t cap);
struct segment;
/* scanner_init over seg's file (limit: its size), reading through seg's window if it has one. */
void scanner_init_seg(struct batch_scanner *s, int fd, const struct segment *seg, int64_t pos,
                      uint8_t *buf, size_t cap);
/* Reads the header at s->pos into *b and advances past the batch. Returns 1, 0 at s->limit,
 * -ERR_SHORT if the batch (or its header) runs past limit, -ERR_CORRUPT for an impossible header
 * (*why says which check failed), or -errno. */
int scanner_next(struct batch_scanner *s, struct batch_info *b, const char **why);
/* Whether b's CRC-32C is right (reads the batch through the buffer). *err gets -errno on a
 * read error (then false). */
bool scanner_crc_ok(struct batch_scanner *s, const struct batch_info *b, int *err);

struct segment {
    int64_t base;            /* offset in the file name; first batch's baseOffset */
    int64_t end;             /* offset after the last batch */
    int64_t size;            /* bytes of whole batches */
    int64_t max_ts;          /* largest maxTimestamp, -1 if none */
    int64_t max_ts_offset;   /* baseOffset of the batch holding max_ts */
    int64_t first_append_ms; /* wall time of the first append (segment.ms), -1 if empty */
    struct fdcache_entry fe; /* the .log file (O_RDWR): use segment_file(), it may be closed */
    struct fdcache *fc;      /* the cache fe lives in (segment_attach), NULL: always open */
    const char *dir;         /* the partition directory (the plog's), to open fe again */
    uint64_t id;             /* unique in the process: identity that survives a reopen */
    struct oindex oidx;      /* valid when index_loaded */
    struct tindex tidx;      /* valid when index_loaded */
    int64_t bytes_since_index; /* log bytes since the last offset-index entry */
    uint64_t index_tick;     /* LRU stamp of the last index use (plog's) */
    int64_t gaps_below;      /* offset gaps are legitimate before batches starting <= this */
    bool index_loaded;       /* oidx/tidx describe the whole file */
    bool sealed;             /* closed; index files written */
    bool dirty;              /* written/truncated since last handed to a sync */
    bool swapping;           /* a cleaner swap still renames/unlinks files by this base: the
                              * plog must not touch them by name (delete, rewrite indexes) */
    struct segment_window *win; /* what the open's last scan read (segment_recover,
                                 * segment_load_tail), or NULL */
};

/* `<base %020lld><ext>`: the name of a segment's file (and of the other offset-named files of a
 * partition directory: snapshots, cleaner swaps). */
void segment_file_name(char *buf, size_t cap, int64_t base, const char *ext);
/* Parses the 20 leading decimal digits of such a name into *offset. Returns false if name does
 * not start with 20 digits or they overflow int64. The caller checks what follows them. */
bool segment_name_offset(const char *name, int64_t *offset);

/* Creates an empty segment (truncating any leftover file of that name). Returns 0 or -errno. */
int segment_create(int dirfd, int64_t base, struct segment **out);
/* Opens an existing .log file; size is the file size, end unknown (= base) until loaded. */
int segment_open(int dirfd, int64_t base, struct segment **out);
/* Wraps fd, an open empty file that will become the segment at base (the cleaner writes its
 * output this way before renaming it into place). Indexes are in memory, nothing is dirty.
 * Takes ownership of fd. */
struct segment *segment_adopt(int64_t base, int fd);
void segment_free(struct segment *seg);

/* Puts the segment's file in cache fc (NULL: it stays open), to be opened again by name in dir
 * (which must outlive the segment) after an eviction. Until then the file is never closed. The
 * dir pointer is also the cache owner (storage/fdcache.h): pass the plog's own copy. */
void segment_attach(struct segment *seg, struct fdcache *fc, const char *dir);
/* A reference to the segment's .log file (the caller puts it), opening it again if the cache
 * closed it. Returns 0 or -errno. Every function below that reads or writes the file gets one
 * this way, so they all may fail with what open(2) fails with (EMFILE, ENOENT...). */
int segment_file(const struct segment *seg, struct fileref **out);
/* The open's window: segment_recover and segment_load_tail keep the bytes of their last read
 * (up to SEGMENT_SCAN_BUF at the end of the file) on the segment, and until it is dropped the
 * scans and reads below take from it what it covers instead of reading the file: at a restart
 * the reads that follow an open (the first batches of the last leader epochs, the producer
 * state's scan from its snapshot) mostly fall in the active segment's last bytes, which were
 * read a moment ago. Truncations and seals drop it (so it never disagrees with the file: bytes
 * past a truncation may be written again); the owner drops it once the open's reads are done,
 * since it holds up to SEGMENT_SCAN_BUF bytes. */
void segment_window_drop(struct segment *seg);
/* Reads n bytes at file position pos, from the window when it covers them: the count read
 * (short at the end of the file) or -errno. */
ssize_t segment_read_at(const struct segment *seg, int64_t pos, void *buf, size_t n);

/* Unlinks the segment's three files. */
int segment_remove_files(int dirfd, int64_t base);

/* Records batch b (already in the file at b->pos) in the in-memory state and indexes. */
void segment_note_batch(struct segment *seg, const struct batch_info *b, int32_t interval);

/* Writes batch (len bytes, header b) at the end of the file and notes it. Returns 0; -ENOSPC if
 * the disk is full and the file was cut back to its previous size (nothing written); any other
 * -errno means the file may hold a partial batch (the caller fences). */
int segment_append(struct segment *seg, const uint8_t *batch, size_t len,
                   const struct batch_info *b, int32_t interval);

/* Writes the .index and .timeindex files (adding the closing time entry) through temp files
 * and renames, and marks the segment sealed. *files receives up to 2 filerefs to fdatasync
 * (the caller owns them), *n_files their count. Returns 0 or -errno (the indexes can be
 * rebuilt from the log, so callers only log this). */
int segment_seal(struct segment *seg, int dirfd, struct fileref **files, int *n_files);

/* Loads the indexes of a sealed segment whose size and end are known; rebuilds them by scanning
 * (and rewrites the files) if they are missing or fail validation. Returns 0, 1 if it had to
 * rebuild, or -errno / -ERR_CORRUPT when the log itself cannot be scanned. */
int segment_load_index(struct segment *seg, int dirfd, int32_t interval);
void segment_unload_index(struct segment *seg);

/* Rebuilds indexes, end and max_ts by scanning headers (no CRC) of [0, size). */
int segment_rebuild_index(struct segment *seg, int32_t interval);

/* Clean-open check of the last segment: loads its index files and scans the headers after the
 * last index entry (a segment of at most SEGMENT_SCAN_BUF bytes: scans it whole and rebuilds the
 * indexes, without their files); succeeds only if they chain exactly to the end of the file.
 * Sets end, max_ts and the index state. -ERR_CORRUPT when the caller must fall back to
 * validation. */
int segment_load_tail(struct segment *seg, int dirfd, int32_t interval);

/* Trusted sealed segment with known end: reads max_ts from the last time-index entry, falling
 * back to segment_load_index() when the file is missing or implausible (returns as it does). */
int segment_load_meta(struct segment *seg, int dirfd, int32_t interval);

/* What recovery found in one segment. */
struct segment_recovery {
    int64_t valid_bytes;  /* bytes of valid batches kept */
    int64_t cut_bytes;    /* bytes cut from the file */
    int64_t cut_offset;   /* offset where the cut happened (expected next offset), or -1 */
    const char *reason;   /* why, when cut */
};

/* Validates the whole file batch by batch (length, bounds, magic, CRC-32C, baseOffset equal to
 * the expected next offset starting at base, or after it when it is <= gaps_below, epochs not
 * below *epoch), rebuilding indexes, end,
 * max_ts and adding new epochs to ec; truncates the file at the first invalid byte. *epoch is
 * updated to the last batch's epoch. Returns 0 (also after a cut) or -errno. */
int segment_recover(struct segment *seg, int32_t interval, int32_t *epoch, struct epoch_cache *ec,
                    struct segment_recovery *rec);

/* Finds the first batch with last offset >= offset, scanning from from_pos, a batch start
 * whose baseOffset must be from_offset (exact, e.g. an index entry) or, when not exact, at least
 * from_offset (a read hint saying "the first batch at or after from_offset starts here": the
 * offsets in between may be a compaction gap); from_offset -1 checks nothing. Returns 1 with
 * *b, 0 if the segment has no such batch, -ERR_CORRUPT if the headers do not chain (a stale
 * hint or index), or -errno. */
int segment_find(const struct segment *seg, int64_t from_pos, int64_t from_offset, bool exact,
                 int64_t offset, struct batch_info *b);

/* Extends a read that starts with batch first: adds following whole batches while their last
 * offset is below max_offset and the total stays within max_bytes (the first batch always
 * counts). Uses the offset index (when loaded) to skip over batches. *len and *next_offset
 * receive the range; *stop the header of the batch right after it when that was read
 * (stop->size == 0 otherwise). Returns 0, -ERR_CORRUPT (index or headers inconsistent) or
 * -errno. */
int segment_extend(const struct segment *seg, const struct batch_info *first, int64_t max_offset,
                   size_t max_bytes, size_t *len, int64_t *next_offset, struct batch_info *stop);

/* Cuts the file at batch b (which must be a batch of the segment, from segment_find), keeping
 * batches before it; end becomes new_end. Needs the index loaded. Returns 0 or -errno (the
 * caller fences). */
int segment_truncate(struct segment *seg, const struct batch_info *b, int64_t new_end,
                     int32_t interval);

/* Scans from from_pos for the first batch with maxTimestamp >= ts and last offset >= min_offset.
 * Returns 1 with *b, 0 if none, or <0. */
int segment_find_timestamp(const struct segment *seg, int64_t from_pos, int64_t ts,
                           int64_t min_offset, struct batch_info *b);
/* Reads batch b (a batch of seg, as segment_find_timestamp gives it) whole into buf, which holds
 * b->size bytes. Returns 0, -ERR_CORRUPT if the file ends inside it, or -errno. */
int segment_read_batch(const struct segment *seg, const struct batch_info *b, uint8_t *buf);

#endif
