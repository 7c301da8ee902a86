#include "storage/keymap.h"

#include <sys/random.h>

#include "base/check.h"
#include "base/mem.h"
#include "base/time.h"

static size_t load_limit(size_t cap)
{
    return cap / 4 * 3;
}

static void random_key(uint8_t *key)
{
    if (getrandom(key, SIPHASH_KEY_SIZE, 0) == SIPHASH_KEY_SIZE)
        return;
    /* no entropy source: still a key nobody can predict from outside the process */
    uint64_t t = (uint64_t)time_mono_ns() ^ (uint64_t)(uintptr_t)key;
    for (int i = 0; i < SIPHASH_KEY_SIZE; i++) {
        t = t * 6364136223846793005ULL + 1442695040888963407ULL;
        key[i] = (uint8_t)(t >> 56);
    }
}

void keymap_init(struct keymap *m, size_t max_bytes)
{
    size_t max_slots = KEYMAP_MIN_SLOTS;
    while (max_slots * 2 <= max_bytes / KEYMAP_SLOT_BYTES && max_slots <= SIZE_MAX / 4)
        max_slots *= 2;
    m->max_slots = max_slots;
    m->cap = MIN(max_slots, (size_t)4096);
    m->n = 0;
    m->slots = mem_calloc(m->cap, sizeof(*m->slots));
    random_key(m->key);
}

void keymap_free(struct keymap *m)
{
    mem_free(m->slots);
    m->slots = NULL;
    m->cap = m->n = 0;
}

void keymap_clear(struct keymap *m)
{
    for (size_t i = 0; i < m->cap; i++)
        m->slots[i].offset_plus1 = 0;
    m->n = 0;
}

size_t keymap_room(const struct keymap *m)
{
    return load_limit(m->max_slots) - m->n;
}

size_t keymap_bytes(const struct keymap *m)
{
    return m->cap * sizeof(*m->slots);
}

static struct keymap_slot *probe(struct keymap_slot *slots, size_t cap, uint64_t h0, uint64_t h1)
{
    size_t i = (size_t)h0 & (cap - 1);
    for (;;) {
        struct keymap_slot *s = &slots[i];
        if (s->offset_plus1 == 0 || (s->h0 == h0 && s->h1 == h1))
            return s;
        i = (i + 1) & (cap - 1);
    }
}

static void grow(struct keymap *m)
{
    size_t cap = m->cap * 2;
    struct keymap_slot *slots = mem_calloc(cap, sizeof(*slots));
    for (size_t i = 0; i < m->cap; i++) {
        const struct keymap_slot *s = &m->slots[i];
        if (s->offset_plus1 != 0)
            *probe(slots, cap, s->h0, s->h1) = *s;
    }
    mem_free(m->slots);
    m->slots = slots;
    m->cap = cap;
}

void keymap_put(struct keymap *m, const void *key, size_t len, int64_t offset)
{
    CHECK(offset >= 0 && offset < INT64_MAX);
    uint64_t h[2];
    siphash128(m->key, key, len, h);
    struct keymap_slot *s = probe(m->slots, m->cap, h[0], h[1]);
    if (s->offset_plus1 != 0) {
        if (offset + 1 > s->offset_plus1)
            s->offset_plus1 = offset + 1;
        return;
    }
    CHECK(keymap_room(m) > 0);
    if (m->n + 1 > load_limit(m->cap) && m->cap < m->max_slots) {
        grow(m);
        s = probe(m->slots, m->cap, h[0], h[1]);
    }
    *s = (struct keymap_slot){h[0], h[1], offset + 1};
    m->n++;
}

int64_t keymap_get(const struct keymap *m, const void *key, size_t len)
{
    uint64_t h[2];
    siphash128(m->key, key, len, h);
    const struct keymap_slot *s = probe(m->slots, m->cap, h[0], h[1]);
    return s->offset_plus1 - 1;
}
