#include "raft/termlog.h"

#include "base/check.h"
#include "base/mem.h"

void termlog_init(struct termlog *t, int64_t start, int64_t prev_term)
{
    CHECK(start >= 0 && start <= TERMLOG_INDEX_MAX && prev_term >= 0);
    t->start = start;
    t->last = start - 1;
    t->prev_term = prev_term;
    t->ranges = NULL;
    t->n = 0;
    t->cap = 0;
}

void termlog_free(struct termlog *t)
{
    mem_free(t->ranges);
    t->ranges = NULL;
    t->n = t->cap = 0;
}

void termlog_reset(struct termlog *t, int64_t start, int64_t prev_term)
{
    CHECK(start >= 0 && start <= TERMLOG_INDEX_MAX && prev_term >= 0);
    t->start = start;
    t->last = start - 1;
    t->prev_term = prev_term;
    t->n = 0;
}

bool termlog_check(const struct termlog *t)
{
    if (t->start < 0 || t->last < t->start - 1 || t->last > TERMLOG_INDEX_MAX || t->prev_term < 0)
        return false;
    if ((t->last == t->start - 1) != (t->n == 0))
        return false;
    if (t->n == 0)
        return true;
    if (t->ranges[0].first != t->start || t->ranges[0].term < t->prev_term)
        return false;
    for (size_t i = 0; i < t->n; i++) {
        if (t->ranges[i].term < 1 || t->ranges[i].first > t->last)
            return false;
        if (i > 0 && (t->ranges[i].first <= t->ranges[i - 1].first ||
                      t->ranges[i].term <= t->ranges[i - 1].term))
            return false;
    }
    return true;
}

/* Index of the range holding i (start <= i <= last). */
static size_t range_of(const struct termlog *t, int64_t i)
{
    size_t lo = 0, hi = t->n; /* answer in [lo, hi) */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->ranges[mid].first <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

int64_t termlog_term_at(const struct termlog *t, int64_t i)
{
    if (i == t->start - 1)
        return t->prev_term;
    if (i < t->start || i > t->last)
        return -1;
    return t->ranges[range_of(t, i)].term;
}

int64_t termlog_last_term(const struct termlog *t)
{
    return t->n ? t->ranges[t->n - 1].term : t->prev_term;
}

int64_t termlog_range_first(const struct termlog *t, int64_t i)
{
    CHECK(i >= t->start && i <= t->last);
    return t->ranges[range_of(t, i)].first;
}

void termlog_append(struct termlog *t, int64_t first, int64_t last, int64_t term)
{
    CHECK(first == t->last + 1 && last >= first && last <= TERMLOG_INDEX_MAX);
    CHECK(term >= 1 && term >= termlog_last_term(t));
    if (t->n == 0 || t->ranges[t->n - 1].term != term) {
        MEM_GROW_FROM(t->ranges, t->cap, t->n + 1, 2); /* most logs span a few terms */
        t->ranges[t->n++] = (struct termlog_range){.term = term, .first = first};
    }
    t->last = last;
}

void termlog_truncate(struct termlog *t, int64_t from)
{
    CHECK(from >= t->start && from <= t->last + 1);
    while (t->n > 0 && t->ranges[t->n - 1].first >= from)
        t->n--;
    t->last = from - 1;
}

void termlog_compact(struct termlog *t, int64_t new_start)
{
    CHECK(new_start > t->start && new_start <= t->last + 1);
    t->prev_term = termlog_term_at(t, new_start - 1);
    if (new_start > t->last) {
        t->n = 0;
    } else {
        size_t k = range_of(t, new_start);
        for (size_t i = k; i < t->n; i++)
            t->ranges[i - k] = t->ranges[i];
        t->n -= k;
        t->ranges[0].first = new_start;
    }
    t->start = new_start;
}

int64_t termlog_find_le(const struct termlog *t, int64_t i, int64_t term)
{
    CHECK(i >= t->start - 1 && i <= t->last);
    if (i == t->start - 1 || t->n == 0)
        return t->start - 1;
    size_t k = range_of(t, i);
    if (t->ranges[k].term <= term)
        return i;
    while (k > 0 && t->ranges[k - 1].term > term)
        k--;
    /* ranges[k] is the first range with a term > term (among those up to i's): answer is the
     * index just before it, which ends the previous range (or is start - 1). */
    return t->ranges[k].first - 1;
}

int64_t termlog_find_le_boundary(const struct termlog *t, int64_t i, int64_t term)
{
    CHECK(i >= t->start - 1 && i <= t->last);
    if (i == t->start - 1 || t->n == 0)
        return t->start - 1;
    size_t k = range_of(t, i);
    if (t->ranges[k].term == term)
        return i;
    if (t->ranges[k].term < term)
        return t->ranges[k].first - 1;
    return termlog_find_le(t, i, term);
}
