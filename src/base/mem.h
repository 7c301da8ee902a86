/* Allocation. Every function aborts the process on out-of-memory (as Redis's zmalloc does):
 * the broker bounds its memory with limits and backpressure, not by handling NULL everywhere. */
#ifndef SP_BASE_MEM_H
#define SP_BASE_MEM_H

#include <stddef.h>

void *mem_alloc(size_t size);                      /* uninitialised */
void *mem_calloc(size_t n, size_t size);           /* zeroed; n*size overflow aborts */
void *mem_realloc(void *p, size_t size);
void mem_free(void *p);                            /* NULL is fine */
char *mem_strdup(const char *s);
char *mem_strndup(const char *s, size_t n);        /* always NUL-terminated */
void *mem_dup(const void *p, size_t n);

/* Grow *arr (of *cap elements of elem_size) so that it holds at least need elements: first
 * (> 0) of them when it had none, then doubling. */
void mem_grow_from(void **arr, size_t *cap, size_t need, size_t elem_size, size_t first);
/* The same, starting at 8. */
void mem_grow(void **arr, size_t *cap, size_t need, size_t elem_size);
#define MEM_GROW(arr, cap, need) mem_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))
#define MEM_GROW_FROM(arr, cap, need, first)                                                       \
    mem_grow_from((void **)&(arr), &(cap), (need), sizeof(*(arr)), (first))

#endif
