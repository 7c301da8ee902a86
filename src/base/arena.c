#include "base/arena.h"

#include <stdint.h>
#include <string.h>

#include "base/check.h"
#include "base/mem.h"

struct arena_chunk {
    struct arena_chunk *next; /* older chunk */
    size_t size;              /* usable bytes in data[] */
    size_t used;              /* bytes handed out */
    _Alignas(16) unsigned char data[];
};

void arena_init(struct arena *a, size_t chunk_size)
{
    a->head = NULL;
    a->chunk_size = chunk_size ? chunk_size : 4096;
    a->allocated = 0;
}

void *arena_alloc(struct arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    CHECK(size < SIZE_MAX / 2);
    struct arena_chunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t cs = size > a->chunk_size ? size : a->chunk_size;
        c = mem_alloc(sizeof(*c) + cs);
        c->size = cs;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->allocated += size;
    return p;
}

void *arena_calloc(struct arena *a, size_t n, size_t size)
{
    CHECK(size == 0 || n <= SIZE_MAX / 4 / size);
    void *p = arena_alloc(a, n * size);
    memset(p, 0, n * size);
    return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void arena_reset(struct arena *a)
{
    struct arena_chunk *c = a->head;
    if (!c)
        return;
    while (c->next) {
        struct arena_chunk *next = c->next;
        mem_free(c);
        c = next;
    }
    c->used = 0;
    a->head = c;
    a->allocated = 0;
}

void arena_destroy(struct arena *a)
{
    struct arena_chunk *c = a->head;
    while (c) {
        struct arena_chunk *next = c->next;
        mem_free(c);
        c = next;
    }
    a->head = NULL;
    a->allocated = 0;
}
