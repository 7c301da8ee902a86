/* Replica placement and leader choice: pure functions of the image (deterministic: ties go to
 * the lower broker id).
 *
 * New partitions (ctl_place): partitions are placed one after the other; each takes the rf live
 * brokers with the fewest replicas in the whole image (ties: fewer preferred leaderships, then
 * lower id), and among those the one with the fewest preferred leaderships becomes replicas[0],
 * the preferred leader. Hence every partition's replicas are distinct, and on a cluster whose
 * live broker set has not changed and from which nothing was removed, per-broker replica counts
 * stay within 1 of each other (if all counts are c or c+1 before a step, the rf smallest are
 * taken, so after it they are again within 1). Preferred leaderships are spread by the same
 * greedy rule; they are not always within 1 when replication factors mix (a broker with the
 * fewest leaderships may not be among the brokers with the fewest replicas), see the property
 * test for the bound that holds in practice.
 *
 * Leader choice (ctl_elect_leader): the first replica, in replica order (so the preferred leader
 * when it is available), that is live in the image and not excluded; -1 if none. The caller bumps
 * the leader epoch. */
#ifndef SP_CONTROLLER_PLACEMENT_H
#define SP_CONTROLLER_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "controller/image.h"

/* Places n partitions of rf replicas each on the live brokers of img: out receives n rows of
 * rf ids (row i = partition i's replicas, preferred leader first); it has n * rf entries.
 * Returns 0, or -ERR_INVALID if rf < 1 or rf > the number of live brokers (out untouched). */
int ctl_place(const struct ctl_image *img, int32_t n, int32_t rf, int32_t *out);

/* The new leader of p: see above. excluded may be NULL when n_excluded is 0. */
int32_t ctl_elect_leader(const struct ctl_image *img, const struct ctl_partition *p,
                         const int32_t *excluded, size_t n_excluded);

#endif
