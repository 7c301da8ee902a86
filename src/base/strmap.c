#include "base/strmap.h"

#include <string.h>

#include "base/mem.h"

static char tombstone;
#define STRMAP_TOMBSTONE (&tombstone)

uint64_t hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

void strmap_init(struct strmap *m)
{
    memset(m, 0, sizeof(*m));
}

void strmap_destroy(struct strmap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key && m->slots[i].key != STRMAP_TOMBSTONE)
            mem_free(m->slots[i].key);
    mem_free(m->slots);
    strmap_init(m);
}

static struct strmap_slot *find(const struct strmap *m, const char *key, size_t klen, uint64_t h)
{
    if (!m->cap)
        return NULL;
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        struct strmap_slot *s = &m->slots[i];
        if (!s->key)
            return NULL;
        if (s->key != STRMAP_TOMBSTONE && s->hash == h && s->klen == klen &&
            memcmp(s->key, key, klen) == 0)
            return s;
    }
}

static void rehash(struct strmap *m, size_t ncap)
{
    struct strmap_slot *old = m->slots;
    size_t ocap = m->cap;
    m->slots = mem_calloc(ncap, sizeof(*m->slots));
    m->cap = ncap;
    m->used = m->len;
    for (size_t i = 0; i < ocap; i++) {
        if (!old[i].key || old[i].key == STRMAP_TOMBSTONE)
            continue;
        size_t j = old[i].hash & (ncap - 1);
        while (m->slots[j].key)
            j = (j + 1) & (ncap - 1);
        m->slots[j] = old[i];
    }
    mem_free(old);
}

void *strmap_get(const struct strmap *m, const char *key, size_t klen)
{
    struct strmap_slot *s = find(m, key, klen, hash_bytes(key, klen));
    return s ? s->value : NULL;
}

void *strmap_put(struct strmap *m, const char *key, size_t klen, void *value)
{
    uint64_t h = hash_bytes(key, klen);
    struct strmap_slot *s = find(m, key, klen, h);
    if (s) {
        void *prev = s->value;
        s->value = value;
        return prev;
    }
    if ((m->used + 1) * 4 >= m->cap * 3)
        rehash(m, m->cap ? (m->len * 2 >= m->cap ? m->cap * 2 : m->cap) : 16);
    size_t i = h & (m->cap - 1);
    while (m->slots[i].key && m->slots[i].key != STRMAP_TOMBSTONE)
        i = (i + 1) & (m->cap - 1);
    if (!m->slots[i].key)
        m->used++;
    m->slots[i].key = mem_strndup(key, klen);
    m->slots[i].klen = klen;
    m->slots[i].hash = h;
    m->slots[i].value = value;
    m->len++;
    return NULL;
}

void *strmap_del(struct strmap *m, const char *key, size_t klen)
{
    struct strmap_slot *s = find(m, key, klen, hash_bytes(key, klen));
    if (!s)
        return NULL;
    void *prev = s->value;
    mem_free(s->key);
    s->key = STRMAP_TOMBSTONE;
    s->value = NULL;
    m->len--;
    return prev;
}

bool strmap_next(const struct strmap *m, size_t *it, const char **key, void **value)
{
    while (*it < m->cap) {
        struct strmap_slot *s = &m->slots[(*it)++];
        if (s->key && s->key != STRMAP_TOMBSTONE) {
            *key = s->key;
            *value = s->value;
            return true;
        }
    }
    return false;
}
