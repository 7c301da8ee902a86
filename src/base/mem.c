#include "base/mem.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void oom(size_t size)
{
    fprintf(stderr, "level=fatal event=out_of_memory bytes=%zu\n", size);
    abort();
}

void *mem_alloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        oom(size);
    return p;
}

void *mem_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        oom(SIZE_MAX);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *mem_realloc(void *p, size_t size)
{
    void *q = realloc(p, size ? size : 1);
    if (!q)
        oom(size);
    return q;
}

void mem_free(void *p)
{
    free(p);
}

char *mem_strdup(const char *s)
{
    return mem_dup(s, strlen(s) + 1);
}

char *mem_strndup(const char *s, size_t n)
{
    char *p = mem_alloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void *mem_dup(const void *p, size_t n)
{
    void *q = mem_alloc(n);
    if (n)
        memcpy(q, p, n);
    return q;
}

void mem_grow(void **arr, size_t *cap, size_t need, size_t elem_size)
{
    mem_grow_from(arr, cap, need, elem_size, 8);
}

void mem_grow_from(void **arr, size_t *cap, size_t need, size_t elem_size, size_t first)
{
    if (need <= *cap)
        return;
    size_t ncap = *cap ? *cap : first ? first : 1;
    while (ncap < need)
        ncap *= 2;
    if (elem_size && ncap > SIZE_MAX / elem_size)
        oom(SIZE_MAX);
    *arr = mem_realloc(*arr, ncap * elem_size);
    *cap = ncap;
}
