/* The configuration side file of a partition's Raft log (DESIGN.md §6).
 *
 * A CONFIG entry is stored in the Kafka log as a record-less control batch (so no client ever
 * sees it as data); its voter configuration lives here, keyed by (index, term). The pair names
 * the entry uniquely (Raft's log matching), so a record whose entry was truncated away and
 * replaced is recognised by the term and dropped by the owner.
 *
 * File `raft-conf-log` in the partition directory: append-only records, big-endian,
 *   index i64 | term i64 | len u8 | raft_conf encoding (len bytes) | crc u32 (CRC-32C of all
 *   the bytes before it in the record)
 * with indexes strictly increasing. An append is fdatasync'ed before conflog_append returns
 * (the directory too when the file is created), so the record is durable before the control
 * batch it describes is written. Loading stops at the first record that does not check out (a
 * torn tail after a crash) and reports it. Rewrites (to drop records) are atomic:
 * io_write_file_atomic.
 *
 * Not thread-safe; owned by one replica. */
#ifndef SP_RAFT_CONFLOG_H
#define SP_RAFT_CONFLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raft/conf.h"

#define RAFT_CONF_LOG_FILE "raft-conf-log"
#define RAFT_CONF_LOG_BYTES_MAX (1 << 20) /* a longer file is treated as corrupt */

struct conflog_rec {
    int64_t index;         /* the CONFIG entry's index (Kafka offset) */
    int64_t term;          /* its term */
    struct raft_conf conf; /* its configuration */
};

/* No descriptor is kept between calls (a partition's files live in storage's open-file cache):
 * each write is given the partition directory and opens the file for as long as it takes. */
struct conflog {
    int64_t size;           /* bytes of valid records in the file */
    bool exists;            /* the file exists on disk */
    struct conflog_rec *r;  /* records, index ascending */
    size_t n;               /* records */
    size_t cap;             /* allocated */
};

/* Loads the file from dirfd into cl (a missing file is empty). *torn (may be NULL) tells
 * whether bytes after the last good record were ignored; the owner then rewrites the file
 * (conflog_rewrite) before appending. Returns 0, -ERR_CORRUPT (larger than
 * RAFT_CONF_LOG_BYTES_MAX) or -errno; release with conflog_free either way. */
int conflog_load(struct conflog *cl, int dirfd, bool *torn);
/* What conflog_load gives for a missing file, for a caller that knows it is missing. */
int conflog_load_none(struct conflog *cl);
void conflog_free(struct conflog *cl);

/* Appends a record durably. index must exceed the last record's (CHECK). Returns 0 or -errno
 * (the record is then not in memory; the file may hold a torn tail that the next load drops). */
int conflog_append(struct conflog *cl, int dirfd, int64_t index, int64_t term,
                   const struct raft_conf *c);

/* Drops every record with index >= from, rewriting the file if any was dropped. Returns 0 or
 * -errno (memory is updated either way: the records dropped belong to entries already gone
 * from the log, and a stale record is recognised by its term on the next load). */
int conflog_truncate(struct conflog *cl, int dirfd, int64_t from);

/* Rewrites the file from the records in memory (after the owner removed some). Returns 0 or
 * -errno. */
int conflog_rewrite(struct conflog *cl, int dirfd);

/* Index of the last record with index <= i, or -1. */
long conflog_find(const struct conflog *cl, int64_t i);

#endif
