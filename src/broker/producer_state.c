/* Idempotent-producer state of one partition (broker/producer_state.h).
 *
 * Owns: the entries (one mem_alloc each), a chained hash index by producer id (bucket count a
 * power of two, doubled whenever the entries would outnumber the buckets), and the LRU list.
 *
 * States of an entry: absent --pstate_update--> live --(idle >= expiration_ms)--> expired
 * (invisible to lookups) --pstate_expire / pstate_update--> freed or renewed; live --(table
 * full, least recently used)--> evicted (freed). */
#include "broker/producer_state.h"

#include <string.h>

#include "base/check.h"
#include "base/crc32c.h"
#include "base/endian.h"
#include "base/errors.h"
#include "base/list.h"
#include "base/mem.h"
#include "kafka/batch.h"

#define SNAPSHOT_MAGIC "SPPS"
#define SNAPSHOT_VERSION 1
#define BATCH_SLOT_BYTES 32

static_assert(PSTATE_ENTRY_BYTES == 24 + PSTATE_BATCHES * BATCH_SLOT_BYTES, "entry layout");

struct entry {
    int64_t pid;
    int16_t epoch;
    uint8_t n;                                   /* batches kept, 1..PSTATE_BATCHES */
    struct pstate_batch batches[PSTATE_BATCHES]; /* oldest first */
    int64_t last_ms;                             /* broker time of the last append */
    struct entry *next;                          /* hash chain */
    struct list_node lru;                        /* in pstate.lru, least recent first */
};

struct pstate {
    struct pstate_limits lim;
    struct entry **buckets; /* n_buckets chains */
    size_t n_buckets;       /* power of two */
    size_t count;
    struct list_node lru;
    uint64_t evictions;
};

static uint64_t mix(int64_t pid)
{
    uint64_t x = (uint64_t)pid + 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static struct entry **slot_of(const struct pstate *t, int64_t pid)
{
    struct entry **s = &t->buckets[mix(pid) & (t->n_buckets - 1)];
    while (*s && (*s)->pid != pid)
        s = &(*s)->next;
    return s;
}

static struct entry *find(const struct pstate *t, int64_t pid)
{
    return *slot_of(t, pid);
}

static bool expired(const struct pstate *t, const struct entry *e, int64_t now_ms)
{
    return now_ms - e->last_ms >= t->lim.expiration_ms;
}

static void grow(struct pstate *t)
{
    size_t n = t->n_buckets * 2;
    struct entry **b = mem_calloc(n, sizeof(*b));
    for (size_t i = 0; i < t->n_buckets; i++) {
        struct entry *e = t->buckets[i];
        while (e) {
            struct entry *next = e->next;
            size_t k = mix(e->pid) & (n - 1);
            e->next = b[k];
            b[k] = e;
            e = next;
        }
    }
    mem_free(t->buckets);
    t->buckets = b;
    t->n_buckets = n;
}

static void remove_entry(struct pstate *t, struct entry *e)
{
    struct entry **s = slot_of(t, e->pid);
    CHECK(*s == e);
    *s = e->next;
    list_remove(&e->lru);
    t->count--;
    mem_free(e);
}

static void evict_beyond(struct pstate *t, size_t max)
{
    while (t->count > max) {
        remove_entry(t, LIST_ENTRY(t->lru.next, struct entry, lru));
        t->evictions++;
    }
}

/* A new entry at the LRU tail, making room first. */
static struct entry *insert(struct pstate *t, int64_t pid)
{
    evict_beyond(t, (size_t)t->lim.max_producers - 1);
    if (t->count + 1 > t->n_buckets)
        grow(t);
    struct entry *e = mem_calloc(1, sizeof(*e));
    e->pid = pid;
    list_init(&e->lru);
    list_push_back(&t->lru, &e->lru);
    struct entry **s = &t->buckets[mix(pid) & (t->n_buckets - 1)];
    e->next = *s;
    *s = e;
    t->count++;
    return e;
}

struct pstate *pstate_new(const struct pstate_limits *lim)
{
    CHECK(lim->max_producers >= 1 && lim->expiration_ms >= 1);
    struct pstate *t = mem_calloc(1, sizeof(*t));
    t->lim = *lim;
    t->n_buckets = 16;
    t->buckets = mem_calloc(t->n_buckets, sizeof(*t->buckets));
    list_init(&t->lru);
    return t;
}

void pstate_clear(struct pstate *t)
{
    while (!list_empty(&t->lru))
        remove_entry(t, LIST_ENTRY(t->lru.next, struct entry, lru));
}

void pstate_free(struct pstate *t)
{
    if (!t)
        return;
    pstate_clear(t);
    mem_free(t->buckets);
    mem_free(t);
}

void pstate_set_limits(struct pstate *t, const struct pstate_limits *lim)
{
    CHECK(lim->max_producers >= 1 && lim->expiration_ms >= 1);
    t->lim = *lim;
    evict_beyond(t, (size_t)lim->max_producers);
    DCHECK((pstate_check_invariants(t), true));
}

int32_t pstate_last_seq(int32_t first_seq, int32_t last_offset_delta)
{
    if (first_seq > INT32_MAX - last_offset_delta)
        return last_offset_delta - (INT32_MAX - first_seq) - 1;
    return first_seq + last_offset_delta;
}

bool pstate_tracks(const struct kbatch_header *h)
{
    return h->producer_id >= 0 && !kbatch_is_control(h);
}

void pstate_batch_of(const struct kbatch_header *h, int64_t base_offset, struct pstate_batch *out)
{
    *out = (struct pstate_batch){
        .first_seq = h->base_sequence,
        .last_seq = pstate_last_seq(h->base_sequence, h->last_offset_delta),
        .first_offset = base_offset,
        .last_offset = base_offset + h->last_offset_delta,
        .timestamp = h->max_timestamp,
    };
}

static bool in_sequence(int32_t last_seq, int32_t next_seq)
{
    return (int64_t)next_seq == (int64_t)last_seq + 1 || (next_seq == 0 && last_seq == INT32_MAX);
}

enum pstate_verdict pstate_check(struct pstate *t, int64_t pid, int16_t epoch, int32_t first_seq,
                                 int32_t last_seq, int64_t now_ms, struct pstate_batch *dup)
{
    const struct entry *e = find(t, pid);
    if (!e || expired(t, e, now_ms))
        return PSTATE_APPEND; /* unknown producer: any sequence (KIP-360) */
    if (epoch < e->epoch)
        return PSTATE_STALE_EPOCH;
    if (epoch > e->epoch)
        return first_seq == 0 ? PSTATE_APPEND : PSTATE_OUT_OF_ORDER;
    for (int i = 0; i < e->n; i++) {
        if (e->batches[i].first_seq == first_seq && e->batches[i].last_seq == last_seq) {
            *dup = e->batches[i];
            return PSTATE_DUPLICATE;
        }
    }
    return in_sequence(e->batches[e->n - 1].last_seq, first_seq) ? PSTATE_APPEND
                                                                 : PSTATE_OUT_OF_ORDER;
}

void pstate_update(struct pstate *t, int64_t pid, int16_t epoch, const struct pstate_batch *b,
                   int64_t now_ms)
{
    struct entry *e = find(t, pid);
    if (!e) {
        e = insert(t, pid);
        e->epoch = epoch;
    } else {
        list_remove(&e->lru);
        list_push_back(&t->lru, &e->lru);
        if (expired(t, e, now_ms) || e->epoch != epoch) {
            e->n = 0;
            e->epoch = epoch;
        }
    }
    if (e->n == PSTATE_BATCHES) {
        memmove(e->batches, e->batches + 1, (PSTATE_BATCHES - 1) * sizeof(e->batches[0]));
        e->n--;
    }
    e->batches[e->n++] = *b;
    e->last_ms = now_ms;
    DCHECK((pstate_check_invariants(t), true));
}

int pstate_expire(struct pstate *t, int64_t now_ms)
{
    int n = 0;
    struct list_node *it, *tmp;
    LIST_FOREACH_SAFE(it, tmp, &t->lru)
    {
        struct entry *e = LIST_ENTRY(it, struct entry, lru);
        if (expired(t, e, now_ms)) {
            remove_entry(t, e);
            n++;
        }
    }
    DCHECK((pstate_check_invariants(t), true));
    return n;
}

size_t pstate_count(const struct pstate *t)
{
    return t->count;
}

uint64_t pstate_evictions(const struct pstate *t)
{
    return t->evictions;
}

int64_t pstate_max_pid(const struct pstate *t)
{
    int64_t max = -1;
    struct list_node *it, *tmp;
    LIST_FOREACH_SAFE(it, tmp, &t->lru)
    {
        max = MAX(max, LIST_ENTRY(it, struct entry, lru)->pid);
    }
    return max;
}

bool pstate_get(const struct pstate *t, int64_t pid, int16_t *epoch, struct pstate_batch *batches,
                int *n_batches, int64_t *last_ms)
{
    const struct entry *e = find(t, pid);
    if (!e)
        return false;
    if (epoch)
        *epoch = e->epoch;
    if (batches)
        memcpy(batches, e->batches, e->n * sizeof(*batches));
    if (n_batches)
        *n_batches = e->n;
    if (last_ms)
        *last_ms = e->last_ms;
    return true;
}

/* ---- snapshots ---- */


static void encode_entry(uint8_t *p, const struct entry *e)
{
    memset(p, 0, PSTATE_ENTRY_BYTES);
    be_put64(p, (uint64_t)e->pid);
    be_put64(p + 8, (uint64_t)e->last_ms);
    be_put16(p + 16, (uint16_t)e->epoch);
    p[18] = e->n;
    for (int i = 0; i < e->n; i++) {
        uint8_t *b = p + 24 + i * BATCH_SLOT_BYTES;
        be_put32(b, (uint32_t)e->batches[i].first_seq);
        be_put32(b + 4, (uint32_t)e->batches[i].last_seq);
        be_put64(b + 8, (uint64_t)e->batches[i].first_offset);
        be_put64(b + 16, (uint64_t)e->batches[i].last_offset);
        be_put64(b + 24, (uint64_t)e->batches[i].timestamp);
    }
}

uint8_t *pstate_encode(const struct pstate *t, int64_t offset, int64_t now_ms, size_t *len)
{
    size_t cap = PSTATE_HEADER_BYTES + t->count * PSTATE_ENTRY_BYTES + 4;
    uint8_t *buf = mem_alloc(cap);
    uint32_t n = 0;
    struct list_node *it, *tmp;
    LIST_FOREACH_SAFE(it, tmp, &t->lru)
    {
        const struct entry *e = LIST_ENTRY(it, struct entry, lru);
        if (expired(t, e, now_ms))
            continue;
        encode_entry(buf + PSTATE_HEADER_BYTES + n * PSTATE_ENTRY_BYTES, e);
        n++;
    }
    memcpy(buf, SNAPSHOT_MAGIC, 4);
    be_put16(buf + 4, SNAPSHOT_VERSION);
    be_put16(buf + 6, 0);
    be_put64(buf + 8, (uint64_t)offset);
    be_put32(buf + 16, n);
    size_t body = PSTATE_HEADER_BYTES + (size_t)n * PSTATE_ENTRY_BYTES;
    be_put32(buf + body, crc32c(0, buf, body));
    *len = body + 4;
    return buf;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* Decodes one entry into *e (batches, epoch, pid, last_ms); false if implausible. */
static bool decode_entry(const uint8_t *p, int64_t snap_offset, struct entry *e)
{
    e->pid = (int64_t)be_get64(p);
    e->last_ms = (int64_t)be_get64(p + 8);
    e->epoch = (int16_t)be_get16(p + 16);
    e->n = p[18];
    if (e->pid < 0 || e->epoch < 0 || e->n < 1 || e->n > PSTATE_BATCHES || p[19] != 0 ||
        be_get32(p + 20) != 0)
        return false;
    int64_t prev_last = -1;
    for (int i = 0; i < PSTATE_BATCHES; i++) {
        const uint8_t *b = p + 24 + i * BATCH_SLOT_BYTES;
        if (i >= e->n) {
            if (!all_zero(b, BATCH_SLOT_BYTES))
                return false;
            continue;
        }
        struct pstate_batch *x = &e->batches[i];
        x->first_seq = (int32_t)be_get32(b);
        x->last_seq = (int32_t)be_get32(b + 4);
        x->first_offset = (int64_t)be_get64(b + 8);
        x->last_offset = (int64_t)be_get64(b + 16);
        x->timestamp = (int64_t)be_get64(b + 24);
        if (x->first_seq < 0 || x->last_seq < 0 || x->first_offset <= prev_last ||
            x->last_offset < x->first_offset || x->last_offset >= snap_offset)
            return false;
        prev_last = x->last_offset;
    }
    return true;
}

int pstate_decode(struct pstate *t, const uint8_t *p, size_t len, int64_t now_ms, int64_t *offset)
{
    CHECK(t->count == 0);
    if (len < PSTATE_HEADER_BYTES + 4 || memcmp(p, SNAPSHOT_MAGIC, 4) != 0 ||
        be_get16(p + 4) != SNAPSHOT_VERSION || be_get16(p + 6) != 0)
        return -ERR_CORRUPT;
    int64_t snap_offset = (int64_t)be_get64(p + 8);
    uint32_t n = be_get32(p + 16);
    if (snap_offset < 0 || n > PSTATE_SNAPSHOT_MAX_ENTRIES ||
        len != PSTATE_HEADER_BYTES + (size_t)n * PSTATE_ENTRY_BYTES + 4 ||
        be_get32(p + len - 4) != crc32c(0, p, len - 4))
        return -ERR_CORRUPT;
    for (uint32_t i = 0; i < n; i++) {
        struct entry x;
        if (!decode_entry(p + PSTATE_HEADER_BYTES + (size_t)i * PSTATE_ENTRY_BYTES, snap_offset,
                          &x) ||
            find(t, x.pid) != NULL) {
            pstate_clear(t);
            return -ERR_CORRUPT;
        }
        if (expired(t, &x, now_ms))
            continue;
        struct entry *e = insert(t, x.pid);
        e->epoch = x.epoch;
        e->n = x.n;
        memcpy(e->batches, x.batches, sizeof(e->batches));
        e->last_ms = x.last_ms;
    }
    *offset = snap_offset;
    DCHECK((pstate_check_invariants(t), true));
    return 0;
}

void pstate_check_invariants(const struct pstate *t)
{
    size_t in_buckets = 0, in_lru = 0;
    for (size_t i = 0; i < t->n_buckets; i++)
        for (const struct entry *e = t->buckets[i]; e; e = e->next) {
            CHECK((mix(e->pid) & (t->n_buckets - 1)) == i);
            in_buckets++;
        }
    struct list_node *it, *tmp;
    LIST_FOREACH_SAFE(it, tmp, &t->lru)
    {
        const struct entry *e = LIST_ENTRY(it, struct entry, lru);
        CHECK(find(t, e->pid) == e);
        CHECK(e->n >= 1 && e->n <= PSTATE_BATCHES);
        for (int i = 1; i < e->n; i++)
            CHECK(e->batches[i].first_offset > e->batches[i - 1].last_offset);
        in_lru++;
    }
    CHECK(in_buckets == t->count && in_lru == t->count);
    CHECK(t->count <= (size_t)t->lim.max_producers);
}
