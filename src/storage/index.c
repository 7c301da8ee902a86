#include "storage/index.h"

#include <string.h>

#include "base/check.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/mem.h"


void oindex_init(struct oindex *ix)
{
    memset(ix, 0, sizeof(*ix));
}

void oindex_free(struct oindex *ix)
{
    mem_free(ix->e);
    oindex_init(ix);
}

void oindex_append(struct oindex *ix, uint32_t rel, uint32_t pos)
{
    CHECK(ix->n == 0 || (rel > ix->e[ix->n - 1].rel && pos > ix->e[ix->n - 1].pos));
    MEM_GROW(ix->e, ix->cap, ix->n + 1);
    ix->e[ix->n++] = (struct oindex_entry){rel, pos};
}

/* Number of leading entries satisfying a predicate that holds on a prefix. */
static size_t prefix_len(const struct oindex *ix, uint32_t max_rel, uint32_t max_pos)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->e[mid].rel <= max_rel && ix->e[mid].pos <= max_pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool oindex_floor(const struct oindex *ix, uint32_t rel, struct oindex_entry *out)
{
    return oindex_floor_bounded(ix, rel, UINT32_MAX, out);
}

bool oindex_floor_bounded(const struct oindex *ix, uint32_t max_rel, uint32_t max_pos,
                          struct oindex_entry *out)
{
    size_t k = prefix_len(ix, max_rel, max_pos);
    if (k == 0)
        return false;
    *out = ix->e[k - 1];
    return true;
}

void oindex_truncate(struct oindex *ix, uint32_t pos)
{
    if (pos == 0) {
        ix->n = 0;
        return;
    }
    ix->n = prefix_len(ix, UINT32_MAX, pos - 1);
}

uint8_t *oindex_encode(const struct oindex *ix, size_t *len)
{
    *len = ix->n * OINDEX_ENTRY_SIZE;
    if (ix->n == 0)
        return NULL;
    uint8_t *buf = mem_alloc(*len);
    for (size_t i = 0; i < ix->n; i++) {
        be_put32(buf + i * OINDEX_ENTRY_SIZE, ix->e[i].rel);
        be_put32(buf + i * OINDEX_ENTRY_SIZE + 4, ix->e[i].pos);
    }
    return buf;
}

int oindex_decode(struct oindex *ix, const uint8_t *p, size_t len, uint64_t rel_limit,
                  uint64_t pos_limit)
{
    oindex_free(ix);
    if (len % OINDEX_ENTRY_SIZE != 0)
        return -ERR_CORRUPT;
    size_t n = len / OINDEX_ENTRY_SIZE;
    if (n == 0)
        return 0;
    ix->e = mem_alloc(n * sizeof(*ix->e));
    ix->cap = n;
    for (size_t i = 0; i < n; i++) {
        uint32_t rel = be_get32(p + i * OINDEX_ENTRY_SIZE);
        uint32_t pos = be_get32(p + i * OINDEX_ENTRY_SIZE + 4);
        bool ordered = i == 0 || (rel > ix->e[i - 1].rel && pos > ix->e[i - 1].pos);
        if (!ordered || rel >= rel_limit || pos >= pos_limit) {
            oindex_free(ix);
            return -ERR_CORRUPT;
        }
        ix->e[i] = (struct oindex_entry){rel, pos};
        ix->n = i + 1;
    }
    return 0;
}

void tindex_init(struct tindex *ix)
{
    memset(ix, 0, sizeof(*ix));
}

void tindex_free(struct tindex *ix)
{
    mem_free(ix->e);
    tindex_init(ix);
}

bool tindex_maybe_append(struct tindex *ix, int64_t ts, uint32_t rel)
{
    if (ix->n > 0 && ts <= ix->e[ix->n - 1].ts)
        return false;
    CHECK(ix->n == 0 || rel >= ix->e[ix->n - 1].rel);
    MEM_GROW(ix->e, ix->cap, ix->n + 1);
    ix->e[ix->n++] = (struct tindex_entry){ts, rel};
    return true;
}

bool tindex_last(const struct tindex *ix, struct tindex_entry *out)
{
    if (ix->n == 0)
        return false;
    *out = ix->e[ix->n - 1];
    return true;
}

bool tindex_floor_below(const struct tindex *ix, int64_t ts, struct tindex_entry *out)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ix->e[mid].ts < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return false;
    *out = ix->e[lo - 1];
    return true;
}

void tindex_truncate(struct tindex *ix, uint32_t rel)
{
    while (ix->n > 0 && ix->e[ix->n - 1].rel >= rel)
        ix->n--;
}

uint8_t *tindex_encode(const struct tindex *ix, size_t *len)
{
    *len = ix->n * TINDEX_ENTRY_SIZE;
    if (ix->n == 0)
        return NULL;
    uint8_t *buf = mem_alloc(*len);
    for (size_t i = 0; i < ix->n; i++) {
        be_put64(buf + i * TINDEX_ENTRY_SIZE, (uint64_t)ix->e[i].ts);
        be_put32(buf + i * TINDEX_ENTRY_SIZE + 8, ix->e[i].rel);
    }
    return buf;
}

int tindex_decode(struct tindex *ix, const uint8_t *p, size_t len, uint64_t rel_limit)
{
    tindex_free(ix);
    if (len % TINDEX_ENTRY_SIZE != 0)
        return -ERR_CORRUPT;
    size_t n = len / TINDEX_ENTRY_SIZE;
    if (n == 0)
        return 0;
    ix->e = mem_alloc(n * sizeof(*ix->e));
    ix->cap = n;
    for (size_t i = 0; i < n; i++) {
        int64_t ts = (int64_t)be_get64(p + i * TINDEX_ENTRY_SIZE);
        uint32_t rel = be_get32(p + i * TINDEX_ENTRY_SIZE + 8);
        bool ordered = i == 0 || (ts > ix->e[i - 1].ts && rel >= ix->e[i - 1].rel);
        if (!ordered || rel >= rel_limit) {
            tindex_free(ix);
            return -ERR_CORRUPT;
        }
        ix->e[i] = (struct tindex_entry){ts, rel};
        ix->n = i + 1;
    }
    return 0;
}
