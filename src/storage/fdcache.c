/* The open-file cache (storage/fdcache.h): an intrusive doubly linked LRU list of entries whose
 * file is open, and counters. Opening by name goes through one stack buffer: a path longer than
 * PATH_MAX is -ENAMETOOLONG, never truncated. */
#include "storage/fdcache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>

#include "base/check.h"
#include "base/mem.h"

struct fdcache {
    struct fdcache_entry *head, *tail; /* most / least recently used */
    size_t n_open;
    size_t limit;
    uint64_t reopens, evictions, errors;
};

struct fdcache *fdcache_new(size_t limit)
{
    struct fdcache *c = mem_calloc(1, sizeof(*c));
    c->limit = limit;
    return c;
}

void fdcache_free(struct fdcache *c)
{
    if (!c)
        return;
    CHECK(c->n_open == 0 && !c->head);
    mem_free(c);
}

void fdcache_stats(const struct fdcache *c, struct fdcache_stats *out)
{
    *out = (struct fdcache_stats){c->n_open, c->limit, c->reopens, c->evictions, c->errors};
}

static void unlink_entry(struct fdcache *c, struct fdcache_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
    c->n_open--;
}

static void push_front(struct fdcache *c, struct fdcache_entry *e)
{
    e->cache = c;
    e->prev = NULL;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    else
        c->tail = e;
    c->head = e;
    c->n_open++;
}

/* Closes least recently used entries not of owner until within the limit. */
static void trim(struct fdcache *c, const void *owner)
{
    struct fdcache_entry *v = c->tail;
    int skipped = 0;
    while (c->n_open > c->limit && v) {
        if (owner && v->owner == owner) {
            if (++skipped > FDCACHE_SKIP_MAX)
                return;
            v = v->prev;
            continue;
        }
        struct fdcache_entry *prev = v->prev;
        unlink_entry(c, v);
        v->cache = NULL;
        fileref_put(v->file);
        v->file = NULL;
        c->evictions++;
        v = prev;
    }
}

void fdcache_set_limit(struct fdcache *c, size_t limit)
{
    c->limit = limit;
    trim(c, NULL);
}

void fdcache_adopt(struct fdcache *c, struct fdcache_entry *e, struct fileref *f)
{
    CHECK(!e->file && !e->cache && f && (e->owner || !c));
    e->file = f;
    if (!c)
        return;
    push_front(c, e);
    trim(c, e->owner);
}

int fdcache_open(struct fdcache *c, struct fdcache_entry *e, const char *dir, const char *name,
                 int flags, struct fileref **out)
{
    if (e->file) {
        if (e->cache && e->cache->head != e) {
            struct fdcache *owner = e->cache;
            unlink_entry(owner, e);
            push_front(owner, e);
        }
        *out = fileref_get(e->file);
        return 0;
    }
    char path[PATH_MAX];
    int n = name ? snprintf(path, sizeof(path), "%s/%s", dir, name)
                 : snprintf(path, sizeof(path), "%s", dir);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        if (c)
            c->errors++;
        return -ENAMETOOLONG;
    }
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE) && c) {
        /* out of descriptors (references in flight, e.g. a Fetch over thousands of
         * partitions, hold more than the limit leaves room for): give back half of what the
         * cache keeps, and try once more */
        size_t limit = c->limit;
        c->limit /= 2;
        trim(c, e->owner);
        c->limit = limit;
        fd = open(path, flags | O_CLOEXEC);
    }
    if (fd < 0) {
        if (c)
            c->errors++;
        return -errno;
    }
    if (c)
        c->reopens++;
    fdcache_adopt(c, e, fileref_new(fd));
    *out = fileref_get(e->file);
    return 0;
}

void fdcache_forget(struct fdcache_entry *e)
{
    if (e->cache)
        unlink_entry(e->cache, e);
    e->cache = NULL;
    fileref_put(e->file);
    e->file = NULL;
}
