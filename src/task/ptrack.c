#include "task/ptrack.h"

#include <string.h>

#include "base/check.h"
#include "base/mem.h"
#include "base/strmap.h"

void ptrack_init(struct ptrack *pt, enum ptrack_order order)
{
    memset(pt, 0, sizeof(*pt));
    pt->order = order;
    pt->last_offset = -1;
    pt->popped_next = -1;
    pt->dirty = true;
    pt->idle_until = INT64_MAX;
}

void ptrack_destroy(struct ptrack *pt)
{
    mem_free(pt->scratch);
    pt->scratch = NULL;
    pt->scratch_cap = 0;
}

static size_t *counter(struct ptrack *pt, enum ptrack_state s)
{
    switch (s) {
    case PTRACK_WAITING:
        return &pt->waiting;
    case PTRACK_RUNNING:
        return &pt->running;
    case PTRACK_SETTLING:
        return &pt->settling;
    case PTRACK_DONE:
    default:
        return &pt->done;
    }
}

void ptrack_add(struct ptrack *pt, struct ptrack_rec *r)
{
    CHECK(r->offset > pt->last_offset);
    r->state = PTRACK_WAITING;
    r->key_hash = r->key ? hash_bytes(r->key, r->key_len) : 0;
    r->next = NULL;
    r->prev = pt->tail;
    if (pt->tail)
        pt->tail->next = r;
    else
        pt->head = r;
    pt->tail = r;
    pt->last_offset = r->offset;
    pt->waiting++;
    pt->dirty = true;
}

void ptrack_set_state(struct ptrack *pt, struct ptrack_rec *r, enum ptrack_state s)
{
    (*counter(pt, r->state))--;
    (*counter(pt, s))++;
    r->state = s;
    pt->dirty = true;
}

static bool same_key(const struct ptrack_rec *a, const struct ptrack_rec *b)
{
    return a->key_hash == b->key_hash && a->key_len == b->key_len &&
           memcmp(a->key, b->key, a->key_len) == 0;
}

static struct ptrack_rec *next_in_partition_order(struct ptrack *pt, int64_t now_ms,
                                                  int64_t *soonest)
{
    for (struct ptrack_rec *r = pt->head; r; r = r->next) {
        if (r->state == PTRACK_SETTLING || r->state == PTRACK_DONE)
            continue;
        if (r->state == PTRACK_RUNNING)
            return NULL;
        if (r->due_ms <= now_ms)
            return r;
        *soonest = r->due_ms;
        return NULL;
    }
    return NULL;
}

static struct ptrack_rec *next_in_key_order(struct ptrack *pt, int64_t now_ms, int64_t *soonest)
{
    size_t blocked = 0; /* distinct keys of earlier WAITING or RUNNING records */
    for (struct ptrack_rec *r = pt->head; r; r = r->next) {
        if (r->state == PTRACK_SETTLING || r->state == PTRACK_DONE)
            continue;
        bool is_blocked = false;
        if (r->key) {
            for (size_t i = 0; i < blocked && !is_blocked; i++)
                is_blocked = same_key(pt->scratch[i], r);
        }
        if (is_blocked)
            continue;
        if (r->state == PTRACK_WAITING && r->due_ms <= now_ms)
            return r;
        if (r->state == PTRACK_WAITING && r->due_ms < *soonest)
            *soonest = r->due_ms;
        if (r->key) {
            MEM_GROW(pt->scratch, pt->scratch_cap, blocked + 1);
            pt->scratch[blocked++] = r;
        }
    }
    return NULL;
}

static struct ptrack_rec *next_in_no_order(struct ptrack *pt, int64_t now_ms, int64_t *soonest)
{
    for (struct ptrack_rec *r = pt->head; r; r = r->next) {
        if (r->state != PTRACK_WAITING)
            continue;
        if (r->due_ms <= now_ms)
            return r;
        if (r->due_ms < *soonest)
            *soonest = r->due_ms;
    }
    return NULL;
}

struct ptrack_rec *ptrack_next(struct ptrack *pt, int64_t now_ms, int64_t *wake_ms)
{
    if (!pt->dirty && now_ms < pt->idle_until) {
        /* nothing changed, and no due time has come since the last fruitless walk */
        if (pt->idle_until < *wake_ms)
            *wake_ms = pt->idle_until;
        return NULL;
    }
    if (pt->waiting == 0) {
        pt->dirty = false;
        pt->idle_until = INT64_MAX;
        return NULL;
    }
    int64_t soonest = INT64_MAX;
    struct ptrack_rec *r;
    switch (pt->order) {
    case PTRACK_ORDER_PARTITION:
        r = next_in_partition_order(pt, now_ms, &soonest);
        break;
    case PTRACK_ORDER_KEY:
        r = next_in_key_order(pt, now_ms, &soonest);
        break;
    case PTRACK_ORDER_NONE:
    default:
        r = next_in_no_order(pt, now_ms, &soonest);
        break;
    }
    if (r)
        return r; /* stays dirty: the caller is about to change its state */
    pt->dirty = false;
    pt->idle_until = soonest;
    if (soonest < *wake_ms)
        *wake_ms = soonest;
    return NULL;
}

static void unlink_rec(struct ptrack *pt, struct ptrack_rec *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        pt->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        pt->tail = r->prev;
    r->next = r->prev = NULL;
    (*counter(pt, r->state))--;
    pt->dirty = true;
}

struct ptrack_rec *ptrack_pop_done(struct ptrack *pt)
{
    struct ptrack_rec *r = pt->head;
    if (!r || r->state != PTRACK_DONE)
        return NULL;
    unlink_rec(pt, r);
    pt->popped_next = r->offset + 1;
    return r;
}

int64_t ptrack_commit_offset(const struct ptrack *pt)
{
    if (pt->head)
        return pt->head->offset; /* everything before the head was popped, so DONE */
    return pt->last_offset < 0 ? -1 : pt->last_offset + 1;
}

void ptrack_unlink(struct ptrack *pt, struct ptrack_rec *r)
{
    unlink_rec(pt, r);
}

size_t ptrack_count(const struct ptrack *pt)
{
    return pt->waiting + pt->running + pt->settling + pt->done;
}

void ptrack_check(const struct ptrack *pt)
{
    size_t n[4] = {0, 0, 0, 0};
    int64_t prev = -1;
    const struct ptrack_rec *last = NULL;
    for (const struct ptrack_rec *r = pt->head; r; r = r->next) {
        CHECK(r->offset > prev);
        CHECK(r->prev == last);
        CHECK(r->state <= PTRACK_DONE);
        n[r->state]++;
        prev = r->offset;
        last = r;
    }
    CHECK(pt->tail == last);
    CHECK(n[PTRACK_WAITING] == pt->waiting);
    CHECK(n[PTRACK_RUNNING] == pt->running);
    CHECK(n[PTRACK_SETTLING] == pt->settling);
    CHECK(n[PTRACK_DONE] == pt->done);
    CHECK(prev <= pt->last_offset);
    CHECK(!pt->head || pt->head->offset >= pt->popped_next);
}
