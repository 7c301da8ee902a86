/* ptrack: the records of one partition that a worker has taken from the consumer and not yet
 * committed, in offset order; which of them may run next, and how far the partition may be
 * committed.
 *
 * Owns nothing but its list links: records (struct ptrack_rec, embedded in the caller's job)
 * stay the caller's. Pure: time is a number the caller passes in.
 *
 * Record states and the transitions (all through ptrack_set_state(), except the first):
 *
 *   WAITING   ptrack_add(): taken, not started; may carry a due time (not before due_ms)
 *   RUNNING   the handler runs
 *   SETTLING  the handler has ended; its outcome (a retry or dead-letter copy) is being written.
 *             It no longer holds back later records, but it still holds back the commit.
 *   DONE      finished for good: the handler succeeded, or its copy was acknowledged
 *
 * A record may also go back from RUNNING to WAITING (its run was abandoned, e.g. killed at
 * shutdown, and must run again).
 *
 * Invariants (ptrack_check()):
 *   1. offsets strictly increase from head to tail;
 *   2. the counters waiting/running/settling/done equal the records in each state;
 *   3. commit_offset() never moves backwards: it is the offset of the first record that is not
 *      DONE, or last_offset + 1 when every record is DONE.
 *
 * Which WAITING record may start (ptrack_next()) depends on the order:
 *   PTRACK_ORDER_PARTITION  the first record that is neither SETTLING nor DONE, and only if it is
 *                           WAITING: one record of the partition in flight at a time;
 *   PTRACK_ORDER_KEY        the first WAITING record whose key no earlier WAITING or RUNNING
 *                           record has; records without a key never wait for one another;
 *   PTRACK_ORDER_NONE       any WAITING record.
 * and in every order only once its due time has come.
 */
#ifndef SP_TASK_PTRACK_H
#define SP_TASK_PTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ptrack_order {
    PTRACK_ORDER_PARTITION,
    PTRACK_ORDER_KEY,
    PTRACK_ORDER_NONE,
};

enum ptrack_state {
    PTRACK_WAITING,
    PTRACK_RUNNING,
    PTRACK_SETTLING,
    PTRACK_DONE,
};

struct ptrack_rec {
    struct ptrack_rec *next; /* towards the tail (higher offsets) */
    struct ptrack_rec *prev; /* towards the head */
    int64_t offset;          /* the record's offset in its partition */
    int64_t due_ms;          /* may start once now >= due_ms (caller's clock); 0: at once */
    const void *key;         /* the record's key (not owned), NULL if it has none */
    size_t key_len;          /* bytes at key */
    uint64_t key_hash;       /* set by ptrack_add() */
    enum ptrack_state state; /* see above */
};

struct ptrack {
    enum ptrack_order order;
    struct ptrack_rec *head; /* lowest offset not yet popped */
    struct ptrack_rec *tail; /* highest offset added */
    size_t waiting;          /* records in each state */
    size_t running;
    size_t settling;
    size_t done;
    int64_t last_offset;         /* highest offset ever added, -1 if none */
    int64_t popped_next;         /* offset after the last record popped, -1 if none */
    bool dirty;                  /* something changed since ptrack_next() last found nothing */
    int64_t idle_until;          /* then: no record can start before this time (INT64_MAX: never) */
    struct ptrack_rec **scratch; /* ORDER_KEY: keys seen during a walk */
    size_t scratch_cap;          /* entries allocated in scratch */
};

void ptrack_init(struct ptrack *pt, enum ptrack_order order);
/* Frees the scratch space; the records are the caller's (unlink them first if it matters). */
void ptrack_destroy(struct ptrack *pt);

/* Appends r, which must have a higher offset than any record added before, in state WAITING. The
 * caller sets r->offset, r->due_ms, r->key and r->key_len first. */
void ptrack_add(struct ptrack *pt, struct ptrack_rec *r);

/* A WAITING record that may start at now_ms (see the orders above), or NULL. When it returns
 * NULL, *wake_ms is lowered to the earliest time at which a record could become startable by
 * the clock alone (if any); other events (a state change, an add) are the caller's to notice. */
struct ptrack_rec *ptrack_next(struct ptrack *pt, int64_t now_ms, int64_t *wake_ms);

void ptrack_set_state(struct ptrack *pt, struct ptrack_rec *r, enum ptrack_state s);

/* Removes and returns the head record if it is DONE, else NULL. Call until NULL after records
 * become DONE; the caller then frees them. */
struct ptrack_rec *ptrack_pop_done(struct ptrack *pt);

/* The offset to commit so that every record before it is DONE: the head's offset, or
 * last_offset + 1 if the list is empty; -1 if nothing was ever added. */
int64_t ptrack_commit_offset(const struct ptrack *pt);

/* Removes r from the list whatever its state (for records given up: the partition was revoked).
 * Does not change commit_offset()'s promise: only call it when the partition is being dropped. */
void ptrack_unlink(struct ptrack *pt, struct ptrack_rec *r);

size_t ptrack_count(const struct ptrack *pt);

/* Verifies the invariants above; CHECK-fails on a violation. O(records). */
void ptrack_check(const struct ptrack *pt);

#endif
