/* Simulated logs: entries with real payload bytes, a CRC per entry (as Kafka batches have),
 * and a chain hash per entry that fingerprints the whole log up to it (for log matching).
 * A node keeps two: the log its adapter sees (writes applied) and the durable image. */
#include <string.h>

#include "base/check.h"
#include "base/crc32c.h"
#include "base/mem.h"
#include "sim.h"

uint64_t rng_next(struct rng *g)
{
    uint64_t z = (g->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t rng_below(struct rng *g, uint64_t n)
{
    return n ? rng_next(g) % n : 0;
}

int64_t rng_range(struct rng *g, int64_t lo, int64_t hi)
{
    return lo + (int64_t)rng_below(g, (uint64_t)(hi - lo + 1));
}

bool rng_pm(struct rng *g, int per_mille)
{
    return (int)rng_below(g, 1000) < per_mille;
}

static uint64_t mix(uint64_t z)
{
    z = (z ^ (z >> 33)) * 0xff51afd7ed558ccdULL;
    z = (z ^ (z >> 33)) * 0xc4ceb9fe1a85ec53ULL;
    return z ^ (z >> 33);
}

uint32_t sentry_crc(const struct sentry *e)
{
    int64_t hdr[4] = {e->first, e->last, e->term, (int64_t)e->kind << 32 | e->len};
    uint32_t c = crc32c(0, hdr, sizeof(hdr));
    return crc32c(c, e->payload, e->len);
}

uint64_t chain_next(uint64_t prev, const struct sentry *e)
{
    uint64_t h = mix(prev ^ 0x5851f42d4c957f2dULL);
    h = mix(h ^ (uint64_t)e->first);
    h = mix(h ^ (uint64_t)e->last * 3);
    h = mix(h ^ (uint64_t)e->term * 7);
    h = mix(h ^ ((uint64_t)e->kind << 40 | (uint64_t)e->len << 8));
    return mix(h ^ e->data_crc);
}

void sentry_copy(struct sentry *dst, const struct sentry *src)
{
    *dst = *src;
    dst->payload = mem_alloc(src->len + 1); /* never a zero-byte allocation */
    if (src->len)
        memcpy(dst->payload, src->payload, src->len);
}

void sentry_free(struct sentry *e)
{
    mem_free(e->payload);
    e->payload = NULL;
}

void slog_init(struct slog *l, int64_t start, int64_t prev_term, uint64_t prev_chain,
               const struct raft_conf_at *base)
{
    memset(l, 0, sizeof(*l));
    l->start = start;
    l->prev_term = prev_term;
    l->prev_chain = prev_chain;
    l->base = *base;
}

static void drop_from(struct slog *l, size_t k)
{
    for (size_t i = k; i < l->n; i++)
        sentry_free(&l->e[i]);
    l->n = k;
}

void slog_free(struct slog *l)
{
    drop_from(l, 0);
    mem_free(l->e);
    memset(l, 0, sizeof(*l));
}

void slog_copy(struct slog *dst, const struct slog *src)
{
    slog_free(dst);
    *dst = *src;
    dst->e = NULL;
    dst->n = dst->cap = 0;
    MEM_GROW(dst->e, dst->cap, src->n + 1);
    for (size_t i = 0; i < src->n; i++)
        sentry_copy(&dst->e[i], &src->e[i]);
    dst->n = src->n;
}

int64_t slog_last(const struct slog *l)
{
    return l->n ? l->e[l->n - 1].last : l->start - 1;
}

long slog_find(const struct slog *l, int64_t index)
{
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->e[mid].last < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < l->n && l->e[lo].first <= index)
        return (long)lo;
    return -1;
}

bool slog_chain_at(const struct slog *l, int64_t index, uint64_t *chain)
{
    if (index == l->start - 1) {
        *chain = l->prev_chain;
        return true;
    }
    long k = slog_find(l, index);
    if (k < 0 || l->e[k].last != index)
        return false;
    *chain = l->e[k].chain;
    return true;
}

int64_t slog_term_at(const struct slog *l, int64_t index)
{
    if (index == l->start - 1)
        return l->prev_term;
    long k = slog_find(l, index);
    return k < 0 ? -1 : l->e[k].term;
}

uint64_t slog_last_chain(const struct slog *l)
{
    return l->n ? l->e[l->n - 1].chain : l->prev_chain;
}

bool slog_truncate(struct slog *l, int64_t from)
{
    if (from > slog_last(l))
        return true;
    if (from < l->start)
        return false;
    long k = slog_find(l, from);
    if (k < 0 || l->e[k].first != from)
        return false;
    drop_from(l, (size_t)k);
    return true;
}

void slog_append(struct slog *l, const struct sentry *e)
{
    CHECK(e->first == slog_last(l) + 1);
    MEM_GROW(l->e, l->cap, l->n + 1);
    sentry_copy(&l->e[l->n++], e);
}

void slog_install(struct slog *l, int64_t index, int64_t term, uint64_t chain,
                  const struct raft_conf *conf)
{
    drop_from(l, 0);
    l->start = index + 1;
    l->prev_term = term;
    l->prev_chain = chain;
    l->base = (struct raft_conf_at){.index = index, .conf = *conf};
}

void slog_compact(struct slog *l, int64_t new_start)
{
    size_t k = 0;
    while (k < l->n && l->e[k].last < new_start) {
        if (l->e[k].kind == RAFT_ENTRY_CONFIG) {
            struct raft_conf c;
            CHECK(raft_conf_decode(&c, l->e[k].payload, l->e[k].len) == 0);
            l->base = (struct raft_conf_at){.index = l->e[k].last, .conf = c};
        }
        k++;
    }
    CHECK(k == l->n ? new_start == slog_last(l) + 1 : l->e[k].first == new_start);
    if (k > 0) {
        l->prev_term = l->e[k - 1].term;
        l->prev_chain = l->e[k - 1].chain;
    }
    for (size_t i = 0; i < k; i++)
        sentry_free(&l->e[i]);
    if (k > 0)
        memmove(l->e, l->e + k, (l->n - k) * sizeof(*l->e));
    l->n -= k;
    l->start = new_start;
}

size_t slog_confs(const struct slog *l, struct raft_conf_at *out, size_t cap)
{
    size_t n = 0;
    out[n++] = l->base;
    for (size_t i = 0; i < l->n && n < cap; i++) {
        if (l->e[i].kind != RAFT_ENTRY_CONFIG)
            continue;
        out[n].index = l->e[i].last;
        CHECK(raft_conf_decode(&out[n].conf, l->e[i].payload, l->e[i].len) == 0);
        n++;
    }
    return n;
}

/* ---- messages ----------------------------------------------------------------------------------
 */

struct smsg *smsg_new(const struct raft_msg *m, const struct sentry *const *ents, size_t n)
{
    size_t bytes = sizeof(struct smsg) + n * sizeof(struct raft_entry);
    for (size_t i = 0; i < n; i++)
        bytes += ents[i]->len;
    struct smsg *s = mem_alloc(bytes);
    s->m = *m;
    struct raft_entry *re = (struct raft_entry *)(s + 1);
    uint8_t *p = (uint8_t *)(re + n);
    for (size_t i = 0; i < n; i++) {
        re[i] = (struct raft_entry){.first = ents[i]->first,
                                    .last = ents[i]->last,
                                    .term = ents[i]->term,
                                    .kind = ents[i]->kind,
                                    .payload = p,
                                    .len = ents[i]->len};
        memcpy(p, ents[i]->payload, ents[i]->len);
        p += ents[i]->len;
    }
    s->m.entries = n ? re : NULL;
    s->m.n_entries = n;
    return s;
}

struct smsg *smsg_dup(const struct smsg *s)
{
    const struct sentry *ptrs[64];
    struct sentry tmp[64];
    size_t n = s->m.n_entries;
    CHECK(n <= 64);
    for (size_t i = 0; i < n; i++) {
        const struct raft_entry *e = &s->m.entries[i];
        tmp[i] = (struct sentry){.first = e->first,
                                 .last = e->last,
                                 .term = e->term,
                                 .kind = e->kind,
                                 .len = (uint32_t)e->len,
                                 .payload = (uint8_t *)e->payload};
        ptrs[i] = &tmp[i];
    }
    return smsg_new(&s->m, ptrs, n);
}

void smsg_free(struct smsg *s)
{
    mem_free(s);
}

/* ---- u64 map -----------------------------------------------------------------------------------
 */

static size_t slot_of(const struct u64map *m, uint64_t k)
{
    size_t i = (size_t)mix(k) & (m->cap - 1);
    while (m->k[i] != 0 && m->k[i] != k)
        i = (i + 1) & (m->cap - 1);
    return i;
}

bool u64map_get(const struct u64map *m, uint64_t k, uint64_t *v)
{
    if (m->cap == 0)
        return false;
    size_t i = slot_of(m, k);
    if (m->k[i] != k)
        return false;
    *v = m->v[i];
    return true;
}

void u64map_put(struct u64map *m, uint64_t k, uint64_t v)
{
    CHECK(k != 0);
    if ((m->n + 1) * 2 > m->cap) {
        struct u64map g = {.cap = m->cap ? m->cap * 2 : 1024};
        g.k = mem_calloc(g.cap, sizeof(*g.k));
        g.v = mem_calloc(g.cap, sizeof(*g.v));
        for (size_t i = 0; i < m->cap; i++)
            if (m->k[i])
                u64map_put(&g, m->k[i], m->v[i]);
        u64map_free(m);
        *m = g;
    }
    size_t i = slot_of(m, k);
    if (m->k[i] == 0)
        m->n++;
    m->k[i] = k;
    m->v[i] = v;
}

void u64map_free(struct u64map *m)
{
    mem_free(m->k);
    mem_free(m->v);
    memset(m, 0, sizeof(*m));
}
