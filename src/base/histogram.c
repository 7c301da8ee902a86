#include "base/histogram.h"

#include <string.h>

#include "base/check.h"

#define US 1000ull
#define MS 1000000ull
#define S 1000000000ull

const uint64_t histogram_latency_ns[] = {
    50 * US,  100 * US, 250 * US, 500 * US, 1 * MS,    2500 * US, 5 * MS, 10 * MS, 25 * MS, 50 * MS,
    100 * MS, 250 * MS, 500 * MS, 1 * S,    2500 * MS, 5 * S,     10 * S, 30 * S,  60 * S,
};
const size_t histogram_latency_ns_count = ARRAY_LEN(histogram_latency_ns);
static_assert(ARRAY_LEN(histogram_latency_ns) <= HISTOGRAM_BOUNDS_MAX, "too many bounds");

void histogram_init(struct histogram *h, const uint64_t *bounds, size_t n)
{
    CHECK(n <= HISTOGRAM_BOUNDS_MAX);
    for (size_t i = 1; i < n; i++)
        CHECK(bounds[i - 1] < bounds[i]);
    memset(h, 0, sizeof(*h));
    h->bounds = bounds;
    h->n_bounds = (uint32_t)n;
}

uint64_t histogram_cumulative(const struct histogram *h, size_t i)
{
    CHECK(i <= h->n_bounds);
    uint64_t c = 0;
    for (size_t k = 0; k <= i; k++)
        c += h->buckets[k];
    return c;
}

void histogram_merge(struct histogram *dst, const struct histogram *src)
{
    CHECK(dst->n_bounds == src->n_bounds);
    for (uint32_t i = 0; i < src->n_bounds; i++)
        CHECK(dst->bounds[i] == src->bounds[i]);
    for (uint32_t i = 0; i <= src->n_bounds; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum += src->sum;
}
