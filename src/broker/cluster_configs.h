/* topic configs held by the metadata log, and preferred-leader balancing.
 *
 * Topic configs (cluster_configs.c). The image's CONFIG records of a topic are its overrides,
 * the same strings the local catalog keeps (storage/catalog.h):
 *   - AlterConfigs (cluster_admin.c) replaces a topic's whole set of overrides, as Kafka's
 *     AlterConfigs does: the broker turns the request into the incremental ops of
 *     CTL_REQ_ALTER_CONFIGS (set every key given, delete every key of the image not given),
 *     computed against its committed image;
 *   - every broker brings its local topics to the image's configs after each image change
 *     (cluster_configs_apply, from cluster.c's reconcile), through topic_set_overrides
 *     (persisted in the catalog, applied to every partition's plog), so a
 *     node that was down while the configs changed applies them when it has replayed the log;
 *   - DescribeConfigs of a topic answers from the image on any broker (admin.c).
 * Entries of the image that this broker's topic_config_validate refuses (none when every
 * broker runs the same version: the controller checks them with cluster_config_check) are
 * left out of what is applied and described.
 *
 * Preferred-leader balancing (cluster_balance.c): Kafka's auto.leader.rebalance.enable and
 * leader.imbalance.check.interval.seconds. At that interval, for every partition this broker's
 * replica leads, if the preferred replica (replicas[0] of the image) is another broker that is
 * registered and unfenced, and its replica has caught up (its match index equals this leader's
 * last index), the leadership is transferred to it (host_transfer) and the move logged. */
#ifndef SP_BROKER_CLUSTER_CONFIGS_H
#define SP_BROKER_CLUSTER_CONFIGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "broker/topic_config.h"
#include "controller/commands.h"
#include "controller/image.h"

struct broker;
struct replica_status;

/* ---- pure functions ---- */

/* The ops (for ctl_cmd_alter_configs) that replace the configs cur[0..n_cur) of a resource by
 * want[0..n_want): every key of want set to its value (want values are non-NULL; keys
 * distinct), then every key of cur absent from want deleted (value NULL), in cur's order.
 * ops must have room for n_cur + n_want entries; strings point into cur and want. Returns the
 * number of ops. */
size_t cluster_configs_replace_ops(const struct ctl_config *cur, size_t n_cur,
                                   const struct topic_config_kv *want, size_t n_want,
                                   struct ctl_config_entry *ops);

/* Whether two sets of overrides are equal: the same keys with the same values, in any order
 * (keys distinct within each set; a NULL value equals only NULL). */
bool cluster_overrides_same(const struct topic_config_kv *a, int na,
                            const struct topic_config_kv *b, int nb);

/* The overrides of topic `topic` in img that topic_config_validate accepts, into out (room
 * for cap; strings point into img, valid until its next change). Returns how many; *refused
 * (may be NULL) gets how many were left out. */
int cluster_image_overrides(const struct ctl_image *img, const char *topic,
                            struct topic_config_kv *out, int cap, int *refused);

/* The controller's config check (ctl_runtime_options.config_check): topic configs must pass
 * topic_config_validate (a NULL value, a deletion, always does); broker configs are refused
 * (INVALID_REQUEST: they are static). */
int16_t cluster_config_check(int8_t resource_type, const char *key, const char *value, void *data);

/* Where p's preferred replica (replicas[0]) stands for a transfer of leadership to it from
 * `self`, st being self's replica status (as its group's leader: the followers' match indexes
 * are the leader's): */
enum cluster_preferred {
    CLUSTER_PREFERRED_SELF,      /* self is the preferred replica */
    CLUSTER_PREFERRED_NOT_LIVE,  /* not registered, or fenced, in img */
    CLUSTER_PREFERRED_NOT_PEER,  /* not a member of the group st describes (yet) */
    CLUSTER_PREFERRED_BEHIND,    /* its match index (-1: unknown) is below caught_up */
    CLUSTER_PREFERRED_READY,     /* live, a member, and its match index >= caught_up */
};
/* The first of these that holds, in the order above; *match (may be NULL) gets the preferred
 * replica's match index (-1 unless NOT_PEER was ruled out). */
enum cluster_preferred cluster_preferred_state(const struct ctl_image *img,
                                               const struct ctl_partition *p, int32_t self,
                                               const struct replica_status *st,
                                               int64_t caught_up, int64_t *match);

/* The broker the leader `self` of partition p should hand leadership to, or -1: p's preferred
 * replica replicas[0] when it is not self, is registered and unfenced in img, and st (the
 * leader's replica status, role leader) shows its match index equal to st->last
 * (cluster_preferred_state with caught_up = st->last is READY). */
int32_t cluster_balance_target(const struct ctl_image *img, const struct ctl_partition *p,
                               int32_t self, const struct replica_status *st);

/* ---- broker hooks (reactor thread, b->cluster non-NULL) ---- */

/* Brings every local topic the image has to the image's overrides (topic_set_overrides when
 * they differ). Returns how many topics changed. Failures are logged and retried at the next
 * image change. */
int cluster_configs_apply(struct broker *b);

/* One balancing pass (see above), whatever the config says. Returns the transfers started. */
size_t cluster_balance(struct broker *b);

#endif
