/* Fixed-bucket histograms for latency metrics (Prometheus-style cumulative buckets are derived
 * when rendering, see base/prom.h).
 *
 * A histogram counts observations (unsigned integers in the caller's unit, e.g. nanoseconds)
 * into buckets bounded above by an ascending array of bounds; an observation v lands in the
 * first bucket whose bound is >= v (Prometheus' `le`), or in the overflow bucket (+Inf).
 * Observing is a short scan over at most HISTOGRAM_BOUNDS_MAX bounds and three additions: cheap
 * enough for every request. No allocation: the struct is plain data, copied by assignment (the
 * flusher hands out copies of its fsync histogram), and bounds point to static arrays.
 *
 * Not thread-safe: the owner serialises access (reactor thread, or the flusher's mutex). */
#ifndef SP_BASE_HISTOGRAM_H
#define SP_BASE_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>

#define HISTOGRAM_BOUNDS_MAX 24

struct histogram {
    const uint64_t *bounds;                     /* ascending upper bounds, static storage */
    uint32_t n_bounds;                          /* <= HISTOGRAM_BOUNDS_MAX */
    uint64_t buckets[HISTOGRAM_BOUNDS_MAX + 1]; /* per bucket, not cumulative; [n_bounds]: +Inf */
    uint64_t count;                             /* observations */
    uint64_t sum;                               /* their total (wraps after 2^64 units) */
};

/* Request and fsync latencies in nanoseconds: 50 us .. 60 s, in 1-2.5-5 steps. */
extern const uint64_t histogram_latency_ns[];
extern const size_t histogram_latency_ns_count;

/* Zeroes h and sets its bounds (n <= HISTOGRAM_BOUNDS_MAX, strictly ascending: CHECKed). */
void histogram_init(struct histogram *h, const uint64_t *bounds, size_t n);

static inline void histogram_observe(struct histogram *h, uint64_t v)
{
    uint32_t i = 0;
    while (i < h->n_bounds && v > h->bounds[i])
        i++;
    h->buckets[i]++;
    h->count++;
    h->sum += v;
}

/* Observations <= bounds[i] (i < n_bounds), or all of them for i == n_bounds. */
uint64_t histogram_cumulative(const struct histogram *h, size_t i);

/* Adds src's counts to dst (same bounds: CHECKed). For summing shards. */
void histogram_merge(struct histogram *dst, const struct histogram *src);

#endif
