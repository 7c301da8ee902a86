/* What the Raft core knows about its log without holding any entry: where it starts and ends,
 * and the term of every index, kept as term ranges (the Kafka leader-epoch cache: for each
 * term, the first index written in it). No per-entry metadata: a log of a million batches
 * written in three terms costs three ranges.
 *
 * Indexes are Kafka offsets (>= 0). Index start-1 is the entry just before the log (its term is
 * prev_term: 0 for an empty log at 0, else the term of the last compacted or installed entry).
 * Term 0 belongs to no entry.
 *
 * Invariants (termlog_check):
 *   1. 0 <= start, start - 1 <= last <= TERMLOG_INDEX_MAX, prev_term >= 0.
 *   2. the log is empty (last == start - 1) iff there is no range.
 *   3. ranges[0].first == start; firsts strictly increase and are <= last; terms strictly
 *      increase, are >= 1 and ranges[0].term >= prev_term.
 *
 * Batch boundaries are not stored: callers only ever name indexes that end an entry (see
 * raft.c on why that holds for well-formed traffic). */
#ifndef SP_RAFT_TERMLOG_H
#define SP_RAFT_TERMLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TERMLOG_INDEX_MAX (INT64_MAX / 4)

struct termlog_range {
    int64_t term;  /* term of every index in the range */
    int64_t first; /* first index of the range; it ends where the next begins, or at last */
};

struct termlog {
    int64_t start;                /* first index held */
    int64_t last;                 /* last index held; start - 1 when empty */
    int64_t prev_term;            /* term of index start - 1 */
    struct termlog_range *ranges; /* ascending */
    size_t n;                     /* ranges in use */
    size_t cap;                   /* ranges allocated */
};

/* An empty log that begins at start, after an entry of term prev_term. */
void termlog_init(struct termlog *t, int64_t start, int64_t prev_term);
void termlog_free(struct termlog *t);
/* Empties the log and restarts it at start (after prev_term). */
void termlog_reset(struct termlog *t, int64_t start, int64_t prev_term);
bool termlog_check(const struct termlog *t);

/* Term of index i: prev_term for start - 1, -1 when i is outside [start - 1, last]. */
int64_t termlog_term_at(const struct termlog *t, int64_t i);
int64_t termlog_last_term(const struct termlog *t);
/* First index of the range holding i (start <= i <= last: CHECK). */
int64_t termlog_range_first(const struct termlog *t, int64_t i);

/* Appends indexes [first, last] of term term. first must be t->last + 1, last >= first and
 * term >= the last term and >= 1 (CHECK: callers validate untrusted input first). */
void termlog_append(struct termlog *t, int64_t first, int64_t last, int64_t term);
/* Removes every index >= from (start <= from <= last + 1: CHECK). */
void termlog_truncate(struct termlog *t, int64_t from);
/* Forgets every index < new_start (start < new_start <= last + 1: CHECK); prev_term becomes
 * the term of new_start - 1. */
void termlog_compact(struct termlog *t, int64_t new_start);

/* The last index j <= i (start - 1 <= j) whose term is <= term, chosen so that j ends an entry
 * whenever i does: either i itself (when term_at(i) <= term) or the end of a term range. i must
 * be in [start - 1, last] (CHECK). Used for the fast conflict hint of AppendEntries. */
int64_t termlog_find_le(const struct termlog *t, int64_t i, int64_t term);
/* Like termlog_find_le, but never returns i itself unless term_at(i) == term: when
 * term_at(i) < term, i may sit inside an entry of the caller's log, so it steps back to the
 * end of the range before i's. Used by a leader reading a follower's hint. */
int64_t termlog_find_le_boundary(const struct termlog *t, int64_t i, int64_t term);

#endif
