/* Replica placement and leader choice (controller/placement.h). Stateless. */
#include "controller/placement.h"

#include <stdbool.h>
#include <stdlib.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"

struct load {
    int32_t id;
    int64_t replicas; /* replicas hosted */
    int64_t leaders;  /* preferred leaderships (replicas[0]) */
};

static int load_cmp(const void *a, const void *b)
{
    const struct load *x = a, *y = b;
    if (x->replicas != y->replicas)
        return x->replicas < y->replicas ? -1 : 1;
    if (x->leaders != y->leaders)
        return x->leaders < y->leaders ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static struct load *load_find(struct load *l, size_t n, int32_t id)
{
    for (size_t i = 0; i < n; i++)
        if (l[i].id == id)
            return &l[i];
    return NULL;
}

/* The live brokers with the load the image puts on them. */
static struct load *loads_of(const struct ctl_image *img, size_t *n_out)
{
    size_t n = 0;
    struct load *l = mem_calloc(img->n_brokers + 1, sizeof(*l));
    for (size_t i = 0; i < img->n_brokers; i++)
        if (!img->brokers[i].fenced)
            l[n++].id = img->brokers[i].id;
    for (size_t t = 0; t < img->n_topics; t++) {
        const struct ctl_topic *topic = img->topics[t];
        for (int32_t p = 0; p < topic->n_partitions; p++) {
            const struct ctl_partition *part = &topic->parts[p];
            for (int32_t r = 0; r < part->n_replicas; r++) {
                struct load *x = load_find(l, n, part->replicas[r]);
                if (x == NULL)
                    continue;
                x->replicas++;
                x->leaders += r == 0;
            }
        }
    }
    *n_out = n;
    return l;
}

int ctl_place(const struct ctl_image *img, int32_t n, int32_t rf, int32_t *out)
{
    CHECK(n >= 0);
    if (rf < 1 || (size_t)rf > ctl_image_live_brokers(img))
        return -ERR_INVALID;
    size_t n_live;
    struct load *l = loads_of(img, &n_live);
    for (int32_t p = 0; p < n; p++) {
        qsort(l, n_live, sizeof(*l), load_cmp);
        /* The rf least loaded; the one of them with the fewest leaderships leads. */
        size_t lead = 0;
        for (size_t i = 1; i < (size_t)rf; i++)
            if (l[i].leaders < l[lead].leaders ||
                (l[i].leaders == l[lead].leaders && l[i].id < l[lead].id))
                lead = i;
        int32_t *row = &out[(size_t)p * (size_t)rf];
        row[0] = l[lead].id;
        size_t k = 1;
        for (size_t i = 0; i < (size_t)rf; i++) {
            l[i].replicas++;
            if (i != lead)
                row[k++] = l[i].id;
        }
        l[lead].leaders++;
    }
    mem_free(l);
    return 0;
}

int32_t ctl_elect_leader(const struct ctl_image *img, const struct ctl_partition *p,
                         const int32_t *excluded, size_t n_excluded)
{
    for (int32_t i = 0; i < p->n_replicas; i++) {
        int32_t id = p->replicas[i];
        bool out = false;
        for (size_t j = 0; j < n_excluded; j++)
            out = out || excluded[j] == id;
        if (!out && ctl_image_broker_live(img, id))
            return id;
    }
    return -1;
}
