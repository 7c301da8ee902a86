/* Sorted snapshots of the broker's topics, groups and committed offsets, for the scrape-time
 * views (metrics.c, status.c). Each returns a mem_alloc'd array the caller frees with mem_free;
 * the pointers in it are valid until the reactor runs anything else (the views use them at
 * once). O(n log n) in what is listed; never called on the request path. */
#ifndef SP_BROKER_SNAPSHOT_H
#define SP_BROKER_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

struct broker;
struct group;
struct group_offset;
struct topic;

/* Every topic (internal ones included), by name. */
struct topic **snapshot_topics(struct broker *b, size_t *n);
/* Every group the coordinator has loaded, by id. */
struct group **snapshot_groups(struct broker *b, size_t *n);
/* A group's committed offsets, by topic then partition. */
const struct group_offset **snapshot_offsets(const struct group *g, size_t *n);

/* Lag of a committed offset: max(0, HW - committed), as `streampulse group describe` computes
 * it; -1 when the partition does not exist (any more). */
int64_t snapshot_lag(struct broker *b, const struct group_offset *o);

#endif
