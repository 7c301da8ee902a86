/* Arena (bump) allocation for memory that dies together, such as a decoded request.
 *
 * arena_alloc() returns 16-byte aligned memory valid until arena_reset() or arena_destroy().
 * Aborts on out-of-memory like mem_alloc(). Not thread-safe. */
#ifndef SP_BASE_ARENA_H
#define SP_BASE_ARENA_H

#include <stddef.h>

struct arena_chunk;

struct arena {
    struct arena_chunk *head; /* newest chunk, allocation happens here */
    size_t chunk_size;        /* default size of new chunks */
    size_t allocated;         /* bytes handed out since the last reset (for limits/metrics) */
};

void arena_init(struct arena *a, size_t chunk_size);
void *arena_alloc(struct arena *a, size_t size);
void *arena_calloc(struct arena *a, size_t n, size_t size);
char *arena_strndup(struct arena *a, const char *s, size_t n);
/* Frees all but the first chunk; keeps it for reuse. */
void arena_reset(struct arena *a);
void arena_destroy(struct arena *a);

#endif
