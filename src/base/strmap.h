/* A hash map from strings to pointers (open addressing, linear probing, tombstones).
 * The map copies keys; values are the caller's. Iteration order is unspecified. */
#ifndef SP_BASE_STRMAP_H
#define SP_BASE_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strmap_slot {
    char *key;   /* NULL: empty; STRMAP_TOMBSTONE: deleted */
    size_t klen; /* key length */
    uint64_t hash;
    void *value;
};

struct strmap {
    struct strmap_slot *slots;
    size_t cap;  /* power of two, or 0 */
    size_t len;  /* live entries */
    size_t used; /* live + tombstones */
};

void strmap_init(struct strmap *m);
void strmap_destroy(struct strmap *m); /* frees keys, not values */
void *strmap_get(const struct strmap *m, const char *key, size_t klen);
/* Inserts or replaces; returns the previous value or NULL. */
void *strmap_put(struct strmap *m, const char *key, size_t klen, void *value);
/* Removes; returns the removed value or NULL. */
void *strmap_del(struct strmap *m, const char *key, size_t klen);

/* Iterate: for (size_t it = 0; strmap_next(m, &it, &key, &value);) */
bool strmap_next(const struct strmap *m, size_t *it, const char **key, void **value);

uint64_t hash_bytes(const void *p, size_t n); /* 64-bit FNV-1a */

#endif
