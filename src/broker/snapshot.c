#include "broker/snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/mem.h"
#include "broker/internal.h"
#include "group/coordinator.h"
#include "group/group.h"
#include "storage/plog.h"

static int topic_cmp(const void *a, const void *b)
{
    const struct topic *x = *(const struct topic *const *)a, *y = *(const struct topic *const *)b;
    return strcmp(x->name, y->name);
}

struct topic **snapshot_topics(struct broker *b, size_t *n)
{
    struct topic **v = mem_calloc(b->topics.len ? b->topics.len : 1, sizeof(*v));
    size_t k = 0, it = 0;
    const char *key;
    void *val;
    while (strmap_next(&b->topics, &it, &key, &val))
        v[k++] = val;
    qsort(v, k, sizeof(*v), topic_cmp);
    *n = k;
    return v;
}

static int group_cmp(const void *a, const void *b)
{
    const struct group *x = *(const struct group *const *)a, *y = *(const struct group *const *)b;
    return strcmp(x->id, y->id);
}

struct group **snapshot_groups(struct broker *b, size_t *n)
{
    *n = 0;
    if (!b->groups)
        return mem_calloc(1, sizeof(struct group *));
    struct arena a;
    arena_init(&a, 4096);
    struct list_groups_req req = {0};
    struct list_groups_resp resp;
    coordinator_list(b->groups, &req, &a, &resp);
    struct group **v = mem_calloc(resp.n_groups ? (size_t)resp.n_groups : 1, sizeof(*v));
    for (int32_t i = 0; i < resp.n_groups; i++) {
        struct group *g = coordinator_find(b->groups, resp.groups[i].group_id);
        if (g)
            v[(*n)++] = g;
    }
    arena_destroy(&a);
    qsort(v, *n, sizeof(*v), group_cmp);
    return v;
}

static int offset_cmp(const void *a, const void *b)
{
    const struct group_offset *x = *(const struct group_offset *const *)a;
    const struct group_offset *y = *(const struct group_offset *const *)b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

const struct group_offset **snapshot_offsets(const struct group *g, size_t *n)
{
    int32_t cnt = group_offset_count(g);
    const struct group_offset **v = mem_calloc(cnt > 0 ? (size_t)cnt : 1, sizeof(*v));
    size_t k = 0, it = 0;
    const struct group_offset *o;
    while (k < (size_t)cnt && (o = group_offset_next(g, &it)))
        v[k++] = o;
    qsort(v, k, sizeof(*v), offset_cmp);
    *n = k;
    return v;
}

int64_t snapshot_lag(struct broker *b, const struct group_offset *o)
{
    const struct partition *p = partition_find(b, kstr_c(o->topic), o->partition);
    if (!p)
        return -1;
    int64_t lag = plog_high_watermark(p->log) - o->offset;
    return lag > 0 ? lag : 0;
}
