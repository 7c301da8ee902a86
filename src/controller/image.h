/* The metadata image: the state that the __cluster_metadata log's records build, applied in log
 * order. Every broker holds one (built from the committed records) to answer Metadata requests
 * and to create or remove its local replicas; the controller leader holds one that also includes
 * the records it has appended but not yet seen committed, and validates commands against it
 * (controller/commands.h).
 *
 * Pure and deterministic: no I/O, no clock, no randomness; iteration orders are by broker id,
 * topic name and config (type, resource, key). Two images to which the same records were applied
 * produce byte-identical snapshots.
 *
 * Applying a record that is inconsistent with the image (a partition of an unknown topic, a
 * lower leader epoch, a producer-id block below the last one, ...) is refused with -ERR_INVALID
 * and leaves the image unchanged: the leader never appends such records, but log bytes are not
 * trusted, and every replica refuses the same records so they stay identical. */
#ifndef SP_CONTROLLER_IMAGE_H
#define SP_CONTROLLER_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/records.h"

struct ctl_broker {
    int32_t id;
    struct kuuid incarnation;
    char host[CTL_HOST_MAX + 1];
    int32_t port;
    char cluster_addr[CTL_ADDR_MAX + 1];
    bool fenced; /* a registration starts fenced; BROKER_LIVENESS changes it */
    struct ctl_rec_endpoint endpoints[CTL_ENDPOINTS_MAX]; /* its client listeners (node_id
                                                           * unused), distinct names */
    int32_t n_endpoints; /* 0: registered without them (host and port are its only one) */
};

struct ctl_partition {
    int32_t leader;                     /* -1: none */
    int32_t leader_epoch;               /* -1 until assigned */
    int32_t n_replicas;                 /* 0 until assigned */
    int32_t replicas[CTL_REPLICAS_MAX]; /* replicas[0] is the preferred leader */
    int32_t n_target;                   /* a reassignment in progress: the replicas to end */
    int32_t target[CTL_REPLICAS_MAX];   /* up with (0: none); broker/cluster.c carries it out */
};

struct ctl_topic {
    char name[CTL_NAME_MAX + 1];
    struct kuuid id;
    int32_t n_partitions;
    struct ctl_partition *parts; /* n_partitions, owned */
};

struct ctl_config {
    int8_t resource_type;
    char resource[CTL_NAME_MAX + 1];
    char key[CTL_CONFIG_KEY_MAX + 1];
    char value[CTL_CONFIG_VALUE_MAX + 1];
};

struct ctl_image {
    struct ctl_broker *brokers; /* sorted by id */
    size_t n_brokers;
    size_t cap_brokers;
    struct ctl_topic **topics; /* sorted by name; each owned */
    size_t n_topics;
    size_t cap_topics;
    struct ctl_config *configs; /* sorted by (resource_type, resource, key) */
    size_t n_configs;
    size_t cap_configs;
    bool has_pids;            /* a PRODUCER_IDS record was applied */
    struct ctl_rec_pids pids; /* the last block handed out */
    struct ctl_rec_voters voters; /* the metadata quorum's voters to be (n 0: none asked) */
    struct ctl_rec_user *users;   /* SCRAM credentials, sorted by (name, mechanism) */
    size_t n_users;
    size_t cap_users;
    struct ctl_rec_acl *acls;     /* ACL bindings, sorted (ctl_acl_cmp), none deleted */
    size_t n_acls;
    size_t cap_acls;
    struct ctl_rec_quota *quotas; /* client quotas, sorted (ctl_quota_cmp), none deleted */
    size_t n_quotas;
    size_t cap_quotas;
    uint64_t records_applied; /* records accepted so far (not part of snapshots) */
};

void ctl_image_init(struct ctl_image *img);
void ctl_image_free(struct ctl_image *img); /* leaves an empty image */

/* Applies one record. Returns 0 or -ERR_INVALID (image unchanged). */
int ctl_image_apply(struct ctl_image *img, const struct ctl_rec *r);
/* Applies every record of l in order, stopping at the first refused one (its error). */
int ctl_image_apply_all(struct ctl_image *img, const struct ctl_recs *l);

/* Appends records that rebuild the image on an empty one (brokers, topics with their
 * partitions, configs, the last producer-id block), in a deterministic order. */
void ctl_image_snapshot(const struct ctl_image *img, struct ctl_recs *out);
/* The snapshot in ctl_recs_encode form: equal images give equal bytes. */
void ctl_image_snapshot_encode(const struct ctl_image *img, struct iobuf *out);

/* Queries. Pointers are valid until the next apply or free. */
const struct ctl_broker *ctl_image_broker(const struct ctl_image *img, int32_t id);
bool ctl_image_broker_live(const struct ctl_image *img, int32_t id); /* registered, unfenced */
/* The address broker br advertises on listener name: its BROKER_ENDPOINT of that name, else
 * (registered without endpoints) its registration's host and port. NULL host: it has endpoints
 * but none of that name. */
void ctl_broker_endpoint(const struct ctl_broker *br, const char *listener, const char **host,
                         int32_t *port);
/* The order of ACL bindings in the image: by resource type, pattern, name, principal, host,
 * operation, permission. 0 when they are the same binding. */
int ctl_acl_cmp(const struct ctl_rec_acl *a, const struct ctl_rec_acl *b);
/* The order of client quotas in the image: by entity (user kind, user, client kind, client),
 * then key. 0 when they are the same entity and key. */
int ctl_quota_cmp(const struct ctl_rec_quota *a, const struct ctl_rec_quota *b);
/* The SCRAM credential of user name for mechanism, or NULL. */
const struct ctl_rec_user *ctl_image_user(const struct ctl_image *img, const char *name,
                                          int8_t mechanism);
size_t ctl_image_live_brokers(const struct ctl_image *img);
const struct ctl_topic *ctl_image_topic(const struct ctl_image *img, const char *name);
const struct ctl_topic *ctl_image_topic_by_id(const struct ctl_image *img, struct kuuid id);
/* The partition, or NULL if the topic or partition does not exist. */
const struct ctl_partition *ctl_image_partition(const struct ctl_image *img, struct kuuid topic_id,
                                                int32_t partition);
bool ctl_partition_has_replica(const struct ctl_partition *p, int32_t broker_id);
/* What a LEADERS record (node, back: records.h) does to partition p of img: true with *leader
 * the partition's new leader (-1: none) when it changes p (its epoch then goes one up), false
 * when it leaves p as it is. The commands use it to know whether such a record would change
 * anything; the image applies it to every partition. */
bool ctl_image_leader_change(const struct ctl_image *img, const struct ctl_partition *p,
                             int32_t node, bool back, int32_t *leader);
/* In the reassignment's target (false when none is in progress). */
bool ctl_partition_has_target(const struct ctl_partition *p, int32_t broker_id);
/* Whether a[0..na) and b[0..nb) (each without duplicates) hold the same broker ids. */
bool ctl_ids_same_set(const int32_t *a, int32_t na, const int32_t *b, int32_t nb);
/* A replica now or in the target: the brokers that hold (or are to hold) a copy. */
bool ctl_partition_has_member(const struct ctl_partition *p, int32_t broker_id);
/* The value of one config, or NULL if unset. */
const char *ctl_image_config(const struct ctl_image *img, int8_t resource_type,
                             const char *resource, const char *key);
/* The configs of one resource: *first and the count (contiguous, sorted by key). */
size_t ctl_image_configs_of(const struct ctl_image *img, int8_t resource_type, const char *resource,
                            const struct ctl_config **first);
/* The first producer id after every block handed out so far (0 for a new cluster). */
int64_t ctl_image_pid_next(const struct ctl_image *img);

/* dst (initialised, any content) becomes an identical copy of src (the same snapshot, and the
 * same records_applied), array by array: a few memcpy per topic, no record rebuilt. */
void ctl_image_copy(struct ctl_image *dst, const struct ctl_image *src);

/* What changed for one broker's local replicas between two images (before and after applying
 * some records): partitions are told apart by (topic id, index), so a topic deleted and created
 * again under the same name is a removal and a creation.
 *   CTL_LOCAL_CREATE: the broker replicates it (or is in its reassignment target) in `after` but
 *                     not in `before`;
 *   CTL_LOCAL_REMOVE: in `before` but not in `after` (topic deleted or replica moved away);
 *   CTL_LOCAL_CHANGE: in both, with another leader, leader epoch or replica list.
 * t and p come from `after`, except for CTL_LOCAL_REMOVE (from `before`). Calls come in the
 * images' topic order, removals first. */
enum ctl_local_change {
    CTL_LOCAL_CREATE,
    CTL_LOCAL_REMOVE,
    CTL_LOCAL_CHANGE,
};
typedef void (*ctl_local_cb)(enum ctl_local_change what, const struct ctl_topic *t,
                             int32_t partition, const struct ctl_partition *p, void *data);
void ctl_image_diff_local(const struct ctl_image *before, const struct ctl_image *after,
                          int32_t broker_id, ctl_local_cb cb, void *data);

/* Checks the image's invariants (CHECK): sorted, unique, partitions consistent. */
void ctl_image_check(const struct ctl_image *img);

#endif
