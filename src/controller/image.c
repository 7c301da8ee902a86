/* The metadata image (controller/image.h).
 *
 * Owns: the broker array, the topic array (each topic and its partition array), the config
 * array, and the last producer-id block.
 *
 * Invariants (ctl_image_check):
 *   1. brokers sorted by strictly increasing id; topics by strictly increasing name; configs by
 *      strictly increasing (resource_type, resource, key).
 *   2. Topic ids are non-zero and distinct.
 *   3. Every partition is either unassigned (no replicas, leader -1, epoch -1) or assigned:
 *      1..CTL_REPLICAS_MAX distinct replicas, leader -1 or one of them, epoch >= 0.
 *   4. Every topic config names an existing topic (RemoveTopic drops them).
 *   5. voters.n == 0 (no VOTERS record yet) or a valid VOTERS record's set.
 *   6. users sorted by strictly increasing (name, mechanism), none deleted.
 *   7. acls sorted by strictly increasing ctl_acl_cmp, none deleted.
 *   9. quotas sorted by strictly increasing ctl_quota_cmp, none deleted.
 *   8. A broker's endpoints have distinct listener names (at most CTL_ENDPOINTS_MAX);
 *      REGISTER_BROKER clears them, BROKER_ENDPOINT sets one.
 *
 * Transitions, one per record type (ctl_image_apply): REGISTER_BROKER adds or replaces a broker
 * (fenced); BROKER_LIVENESS fences/unfences; TOPIC creates a topic or grows its partition count
 * (new partitions unassigned); PARTITION assigns or changes one partition (the leader epoch
 * never goes down); REMOVE_TOPIC drops a topic and its configs; CONFIG sets or deletes a key;
 * PRODUCER_IDS records a block that starts at or after the end of the previous one; VOTERS
 * replaces the metadata quorum's voters to be; USER_SCRAM sets or deletes one credential (a
 * delete of none is a no-op).
 *
 * Lookups by topic id scan the topic array: metadata changes are rare and topic counts modest.
 */
#include "controller/image.h"

#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"

void ctl_image_init(struct ctl_image *img)
{
    memset(img, 0, sizeof(*img));
}

static void topic_free(struct ctl_topic *t)
{
    mem_free(t->parts);
    mem_free(t);
}

void ctl_image_free(struct ctl_image *img)
{
    for (size_t i = 0; i < img->n_topics; i++)
        topic_free(img->topics[i]);
    mem_free(img->topics);
    mem_free(img->brokers);
    mem_free(img->configs);
    mem_free(img->users);
    mem_free(img->acls);
    mem_free(img->quotas);
    ctl_image_init(img);
}

/* ---- lookups ---- */

/* Index of the first broker with id >= id. */
static size_t broker_lower(const struct ctl_image *img, int32_t id)
{
    size_t lo = 0, hi = img->n_brokers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (img->brokers[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct ctl_broker *ctl_image_broker(const struct ctl_image *img, int32_t id)
{
    size_t i = broker_lower(img, id);
    return i < img->n_brokers && img->brokers[i].id == id ? &img->brokers[i] : NULL;
}

bool ctl_image_broker_live(const struct ctl_image *img, int32_t id)
{
    const struct ctl_broker *b = ctl_image_broker(img, id);
    return b != NULL && !b->fenced;
}

size_t ctl_image_live_brokers(const struct ctl_image *img)
{
    size_t n = 0;
    for (size_t i = 0; i < img->n_brokers; i++)
        n += !img->brokers[i].fenced;
    return n;
}

static size_t topic_lower(const struct ctl_image *img, const char *name)
{
    size_t lo = 0, hi = img->n_topics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(img->topics[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct ctl_topic *ctl_image_topic(const struct ctl_image *img, const char *name)
{
    size_t i = topic_lower(img, name);
    return i < img->n_topics && strcmp(img->topics[i]->name, name) == 0 ? img->topics[i] : NULL;
}

static bool uuid_eq(struct kuuid a, struct kuuid b)
{
    return memcmp(a.b, b.b, sizeof(a.b)) == 0;
}

static size_t topic_index_by_id(const struct ctl_image *img, struct kuuid id)
{
    for (size_t i = 0; i < img->n_topics; i++)
        if (uuid_eq(img->topics[i]->id, id))
            return i;
    return img->n_topics;
}

const struct ctl_topic *ctl_image_topic_by_id(const struct ctl_image *img, struct kuuid id)
{
    size_t i = topic_index_by_id(img, id);
    return i < img->n_topics ? img->topics[i] : NULL;
}

const struct ctl_partition *ctl_image_partition(const struct ctl_image *img, struct kuuid topic_id,
                                                int32_t partition)
{
    const struct ctl_topic *t = ctl_image_topic_by_id(img, topic_id);
    if (t == NULL || partition < 0 || partition >= t->n_partitions)
        return NULL;
    return &t->parts[partition];
}

bool ctl_partition_has_replica(const struct ctl_partition *p, int32_t broker_id)
{
    for (int32_t i = 0; i < p->n_replicas; i++)
        if (p->replicas[i] == broker_id)
            return true;
    return false;
}

bool ctl_partition_has_target(const struct ctl_partition *p, int32_t broker_id)
{
    for (int32_t i = 0; i < p->n_target; i++)
        if (p->target[i] == broker_id)
            return true;
    return false;
}

bool ctl_ids_same_set(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    if (na != nb)
        return false;
    for (int32_t i = 0; i < na; i++) {
        bool in = false;
        for (int32_t j = 0; j < nb; j++)
            in |= a[i] == b[j];
        if (!in)
            return false;
    }
    return true;
}

bool ctl_partition_has_member(const struct ctl_partition *p, int32_t broker_id)
{
    return ctl_partition_has_replica(p, broker_id) || ctl_partition_has_target(p, broker_id);
}

static int config_cmp(int8_t type, const char *resource, const char *key,
                      const struct ctl_config *c)
{
    if (type != c->resource_type)
        return type < c->resource_type ? -1 : 1;
    int d = strcmp(resource, c->resource);
    if (d != 0 || key == NULL)
        return d;
    return strcmp(key, c->key);
}

/* Index of the first config >= (type, resource, key); key NULL sorts before every key. */
static size_t config_lower(const struct ctl_image *img, int8_t type, const char *resource,
                           const char *key)
{
    size_t lo = 0, hi = img->n_configs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int d = config_cmp(type, resource, key, &img->configs[mid]);
        if (d > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const char *ctl_image_config(const struct ctl_image *img, int8_t resource_type,
                             const char *resource, const char *key)
{
    size_t i = config_lower(img, resource_type, resource, key);
    if (i < img->n_configs && config_cmp(resource_type, resource, key, &img->configs[i]) == 0)
        return img->configs[i].value;
    return NULL;
}

size_t ctl_image_configs_of(const struct ctl_image *img, int8_t resource_type, const char *resource,
                            const struct ctl_config **first)
{
    size_t i = config_lower(img, resource_type, resource, NULL);
    size_t j = i;
    while (j < img->n_configs && config_cmp(resource_type, resource, NULL, &img->configs[j]) == 0)
        j++;
    *first = i < img->n_configs ? &img->configs[i] : NULL;
    return j - i;
}

int64_t ctl_image_pid_next(const struct ctl_image *img)
{
    return img->has_pids ? img->pids.first + img->pids.size : 0;
}

/* ---- apply ---- */

static int apply_register(struct ctl_image *img, const struct ctl_rec_broker *r)
{
    size_t i = broker_lower(img, r->node_id);
    if (i == img->n_brokers || img->brokers[i].id != r->node_id) {
        MEM_GROW(img->brokers, img->cap_brokers, img->n_brokers + 1);
        memmove(&img->brokers[i + 1], &img->brokers[i],
                (img->n_brokers - i) * sizeof(img->brokers[0]));
        img->n_brokers++;
    }
    struct ctl_broker *b = &img->brokers[i];
    memset(b, 0, sizeof(*b));
    b->id = r->node_id;
    b->incarnation = r->incarnation;
    memcpy(b->host, r->host, sizeof(b->host));
    b->port = r->port;
    memcpy(b->cluster_addr, r->cluster_addr, sizeof(b->cluster_addr));
    b->fenced = true;
    return 0;
}

/* One listener of a registered broker: replaces the one of the same name, else is added. */
static int apply_endpoint(struct ctl_image *img, const struct ctl_rec_endpoint *r)
{
    size_t i = broker_lower(img, r->node_id);
    if (i == img->n_brokers || img->brokers[i].id != r->node_id)
        return -ERR_INVALID;
    struct ctl_broker *b = &img->brokers[i];
    int32_t k = 0;
    while (k < b->n_endpoints && strcmp(b->endpoints[k].listener, r->listener) != 0)
        k++;
    if (k == CTL_ENDPOINTS_MAX)
        return -ERR_INVALID;
    b->endpoints[k] = *r;
    b->endpoints[k].node_id = r->node_id;
    if (k == b->n_endpoints)
        b->n_endpoints++;
    return 0;
}

void ctl_broker_endpoint(const struct ctl_broker *br, const char *listener, const char **host,
                         int32_t *port)
{
    *host = br->host;
    *port = br->port;
    if (br->n_endpoints == 0)
        return;
    *host = NULL;
    *port = -1;
    for (int32_t k = 0; k < br->n_endpoints; k++)
        if (!strcmp(br->endpoints[k].listener, listener)) {
            *host = br->endpoints[k].host;
            *port = br->endpoints[k].port;
        }
}

static int apply_liveness(struct ctl_image *img, const struct ctl_rec_liveness *r)
{
    size_t i = broker_lower(img, r->node_id);
    if (i == img->n_brokers || img->brokers[i].id != r->node_id)
        return -ERR_INVALID;
    img->brokers[i].fenced = r->fenced;
    return 0;
}

static void parts_unassigned(struct ctl_partition *p, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        memset(&p[i], 0, sizeof(p[i]));
        p[i].leader = -1;
        p[i].leader_epoch = -1;
    }
}

static int apply_topic(struct ctl_image *img, const struct ctl_rec_topic *r)
{
    size_t i = topic_lower(img, r->name);
    if (i < img->n_topics && strcmp(img->topics[i]->name, r->name) == 0) {
        struct ctl_topic *t = img->topics[i];
        if (!uuid_eq(t->id, r->id) || r->n_partitions < t->n_partitions)
            return -ERR_INVALID;
        t->parts = mem_realloc(t->parts, (size_t)r->n_partitions * sizeof(t->parts[0]));
        parts_unassigned(&t->parts[t->n_partitions], r->n_partitions - t->n_partitions);
        t->n_partitions = r->n_partitions;
        return 0;
    }
    if (topic_index_by_id(img, r->id) < img->n_topics)
        return -ERR_INVALID; /* the id belongs to another name */
    struct ctl_topic *t = mem_calloc(1, sizeof(*t));
    memcpy(t->name, r->name, sizeof(t->name));
    t->id = r->id;
    t->n_partitions = r->n_partitions;
    t->parts = mem_alloc((size_t)r->n_partitions * sizeof(t->parts[0]));
    parts_unassigned(t->parts, r->n_partitions);
    MEM_GROW(img->topics, img->cap_topics, img->n_topics + 1);
    memmove(&img->topics[i + 1], &img->topics[i], (img->n_topics - i) * sizeof(img->topics[0]));
    img->topics[i] = t;
    img->n_topics++;
    return 0;
}

static int apply_partition(struct ctl_image *img, const struct ctl_rec_partition *r)
{
    size_t i = topic_index_by_id(img, r->topic_id);
    if (i == img->n_topics || r->partition >= img->topics[i]->n_partitions)
        return -ERR_INVALID;
    struct ctl_partition *p = &img->topics[i]->parts[r->partition];
    if (r->leader_epoch < p->leader_epoch)
        return -ERR_INVALID;
    memset(p, 0, sizeof(*p));
    p->leader = r->leader;
    p->leader_epoch = r->leader_epoch;
    p->n_replicas = r->n_replicas;
    memcpy(p->replicas, r->replicas, (size_t)r->n_replicas * sizeof(r->replicas[0]));
    p->n_target = r->n_target;
    memcpy(p->target, r->target, (size_t)r->n_target * sizeof(r->target[0]));
    return 0;
}

bool ctl_image_leader_change(const struct ctl_image *img, const struct ctl_partition *p,
                             int32_t node, bool back, int32_t *leader)
{
    if (p->n_replicas == 0 || p->leader_epoch >= CTL_EPOCH_MAX)
        return false; /* unassigned, or at the epoch limit (only a forged log gets there) */
    if (back ? p->leader != -1 || !ctl_partition_has_replica(p, node) : p->leader != node)
        return false;
    *leader = -1;
    for (int32_t k = 0; k < p->n_replicas && *leader < 0; k++) {
        int32_t c = p->replicas[k];
        if (back ? c == node || ctl_image_broker_live(img, c)
                 : c != node && ctl_image_broker_live(img, c))
            *leader = c;
    }
    return true;
}

/* LEADERS (records.h): the broker must be registered; O(partitions). */
static int apply_leaders(struct ctl_image *img, const struct ctl_rec_leaders *r)
{
    if (ctl_image_broker(img, r->node_id) == NULL)
        return -ERR_INVALID;
    for (size_t i = 0; i < img->n_topics; i++) {
        struct ctl_topic *t = img->topics[i];
        for (int32_t k = 0; k < t->n_partitions; k++) {
            struct ctl_partition *p = &t->parts[k];
            int32_t leader;
            if (ctl_image_leader_change(img, p, r->node_id, r->back, &leader)) {
                p->leader = leader;
                p->leader_epoch++;
            }
        }
    }
    return 0;
}

static void config_remove_range(struct ctl_image *img, size_t i, size_t n)
{
    memmove(&img->configs[i], &img->configs[i + n],
            (img->n_configs - i - n) * sizeof(img->configs[0]));
    img->n_configs -= n;
}

static int apply_remove_topic(struct ctl_image *img, const struct ctl_rec_remove_topic *r)
{
    size_t i = topic_index_by_id(img, r->id);
    if (i == img->n_topics)
        return -ERR_INVALID;
    struct ctl_topic *t = img->topics[i];
    const struct ctl_config *first;
    size_t n = ctl_image_configs_of(img, CTL_RESOURCE_TOPIC, t->name, &first);
    if (n > 0)
        config_remove_range(img, (size_t)(first - img->configs), n);
    topic_free(t);
    memmove(&img->topics[i], &img->topics[i + 1], (img->n_topics - i - 1) * sizeof(img->topics[0]));
    img->n_topics--;
    return 0;
}

static int apply_config(struct ctl_image *img, const struct ctl_rec_config *r)
{
    if (r->resource_type == CTL_RESOURCE_TOPIC && ctl_image_topic(img, r->resource) == NULL)
        return -ERR_INVALID;
    size_t i = config_lower(img, r->resource_type, r->resource, r->key);
    bool found = i < img->n_configs &&
                 config_cmp(r->resource_type, r->resource, r->key, &img->configs[i]) == 0;
    if (r->deleted) {
        if (found)
            config_remove_range(img, i, 1);
        return 0; /* deleting an unset key is a no-op, as in Kafka */
    }
    if (!found) {
        MEM_GROW(img->configs, img->cap_configs, img->n_configs + 1);
        memmove(&img->configs[i + 1], &img->configs[i],
                (img->n_configs - i) * sizeof(img->configs[0]));
        img->n_configs++;
    }
    struct ctl_config *c = &img->configs[i];
    memset(c, 0, sizeof(*c));
    c->resource_type = r->resource_type;
    memcpy(c->resource, r->resource, sizeof(c->resource));
    memcpy(c->key, r->key, sizeof(c->key));
    memcpy(c->value, r->value, sizeof(c->value));
    return 0;
}

static int user_cmp(const char *name, int8_t mech, const struct ctl_rec_user *u)
{
    int c = strcmp(name, u->name);
    return c != 0 ? c : mech - u->mechanism;
}

/* Index of the first user >= (name, mech). */
static size_t user_lower(const struct ctl_image *img, const char *name, int8_t mech)
{
    size_t lo = 0, hi = img->n_users;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (user_cmp(name, mech, &img->users[mid]) > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct ctl_rec_user *ctl_image_user(const struct ctl_image *img, const char *name,
                                          int8_t mechanism)
{
    size_t i = user_lower(img, name, mechanism);
    return i < img->n_users && user_cmp(name, mechanism, &img->users[i]) == 0 ? &img->users[i]
                                                                               : NULL;
}

static int apply_user(struct ctl_image *img, const struct ctl_rec_user *r)
{
    size_t i = user_lower(img, r->name, r->mechanism);
    bool found = i < img->n_users && user_cmp(r->name, r->mechanism, &img->users[i]) == 0;
    if (r->deleted) {
        if (found) {
            memmove(&img->users[i], &img->users[i + 1],
                    (img->n_users - i - 1) * sizeof(img->users[0]));
            img->n_users--;
        }
        return 0;
    }
    if (!found) {
        MEM_GROW(img->users, img->cap_users, img->n_users + 1);
        memmove(&img->users[i + 1], &img->users[i], (img->n_users - i) * sizeof(img->users[0]));
        img->n_users++;
    }
    img->users[i] = *r;
    return 0;
}

int ctl_acl_cmp(const struct ctl_rec_acl *a, const struct ctl_rec_acl *b)
{
    int c = a->resource_type - b->resource_type;
    if (!c)
        c = a->pattern_type - b->pattern_type;
    if (!c)
        c = strcmp(a->resource_name, b->resource_name);
    if (!c)
        c = strcmp(a->principal, b->principal);
    if (!c)
        c = strcmp(a->host, b->host);
    if (!c)
        c = a->operation - b->operation;
    if (!c)
        c = a->permission - b->permission;
    return c;
}

int ctl_quota_cmp(const struct ctl_rec_quota *a, const struct ctl_rec_quota *b)
{
    int c = a->user_kind - b->user_kind;
    if (!c)
        c = strcmp(a->user, b->user);
    if (!c)
        c = a->client_kind - b->client_kind;
    if (!c)
        c = strcmp(a->client, b->client);
    if (!c)
        c = strcmp(a->key, b->key);
    return c;
}

/* Sets (replacing the value) or removes (one not there: no-op) one entity's quota key. */
static int apply_quota(struct ctl_image *img, const struct ctl_rec_quota *r)
{
    size_t lo = 0, hi = img->n_quotas;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ctl_quota_cmp(&img->quotas[mid], r) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool found = lo < img->n_quotas && ctl_quota_cmp(&img->quotas[lo], r) == 0;
    if (r->deleted) {
        if (found) {
            memmove(&img->quotas[lo], &img->quotas[lo + 1],
                    (img->n_quotas - lo - 1) * sizeof(*r));
            img->n_quotas--;
        }
        return 0;
    }
    if (!found) {
        MEM_GROW(img->quotas, img->cap_quotas, img->n_quotas + 1);
        memmove(&img->quotas[lo + 1], &img->quotas[lo], (img->n_quotas - lo) * sizeof(*r));
        img->n_quotas++;
    }
    img->quotas[lo] = *r;
    return 0;
}

/* Adds (a binding there already: no-op) or removes (one not there: no-op) one binding. */
static int apply_acl(struct ctl_image *img, const struct ctl_rec_acl *r)
{
    size_t lo = 0, hi = img->n_acls;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ctl_acl_cmp(&img->acls[mid], r) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool found = lo < img->n_acls && ctl_acl_cmp(&img->acls[lo], r) == 0;
    if (r->deleted) {
        if (found) {
            memmove(&img->acls[lo], &img->acls[lo + 1], (img->n_acls - lo - 1) * sizeof(*r));
            img->n_acls--;
        }
        return 0;
    }
    if (found)
        return 0;
    MEM_GROW(img->acls, img->cap_acls, img->n_acls + 1);
    memmove(&img->acls[lo + 1], &img->acls[lo], (img->n_acls - lo) * sizeof(*r));
    img->acls[lo] = *r;
    img->n_acls++;
    return 0;
}

static int apply_pids(struct ctl_image *img, const struct ctl_rec_pids *r)
{
    if (r->first < ctl_image_pid_next(img))
        return -ERR_INVALID; /* would overlap a block already handed out */
    img->pids = *r;
    img->has_pids = true;
    return 0;
}

static int apply_one(struct ctl_image *img, const struct ctl_rec *r)
{
    switch (r->type) {
    case CTL_REC_REGISTER_BROKER:
        return apply_register(img, &r->broker);
    case CTL_REC_BROKER_LIVENESS:
        return apply_liveness(img, &r->liveness);
    case CTL_REC_TOPIC:
        return apply_topic(img, &r->topic);
    case CTL_REC_PARTITION:
        return apply_partition(img, &r->partition);
    case CTL_REC_REMOVE_TOPIC:
        return apply_remove_topic(img, &r->remove_topic);
    case CTL_REC_CONFIG:
        return apply_config(img, &r->config);
    case CTL_REC_PRODUCER_IDS:
        return apply_pids(img, &r->pids);
    case CTL_REC_VOTERS:
        img->voters = r->voters;
        return 0;
    case CTL_REC_USER_SCRAM:
        return apply_user(img, &r->user);
    case CTL_REC_ACL:
        return apply_acl(img, &r->acl);
    case CTL_REC_BROKER_ENDPOINT:
        return apply_endpoint(img, &r->endpoint);
    case CTL_REC_QUOTA:
        return apply_quota(img, &r->quota);
    case CTL_REC_LEADERS:
        return apply_leaders(img, &r->leaders);
    }
    return -ERR_INVALID;
}

int ctl_image_apply(struct ctl_image *img, const struct ctl_rec *r)
{
    if (DCHECK_ENABLED)
        ctl_image_check(img);
    if (!ctl_rec_valid(r))
        return -ERR_INVALID;
    int rc = apply_one(img, r);
    if (rc == 0)
        img->records_applied++;
    if (DCHECK_ENABLED)
        ctl_image_check(img);
    return rc;
}

int ctl_image_apply_all(struct ctl_image *img, const struct ctl_recs *l)
{
    for (size_t i = 0; i < l->n; i++) {
        int rc = ctl_image_apply(img, &l->v[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* ---- snapshot ---- */

/* Calls emit with each snapshot record in order (one record on the stack: no list is built). */
typedef void (*emit_fn)(const struct ctl_rec *r, void *data);

static void snapshot_brokers(const struct ctl_image *img, struct ctl_rec *r, emit_fn emit,
                             void *data)
{
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct ctl_broker *b = &img->brokers[i];
        memset(r, 0, sizeof(*r));
        r->type = CTL_REC_REGISTER_BROKER;
        r->broker.node_id = b->id;
        r->broker.incarnation = b->incarnation;
        memcpy(r->broker.host, b->host, sizeof(b->host));
        r->broker.port = b->port;
        memcpy(r->broker.cluster_addr, b->cluster_addr, sizeof(b->cluster_addr));
        emit(r, data);
        for (int32_t k = 0; k < b->n_endpoints; k++) {
            memset(r, 0, sizeof(*r));
            r->type = CTL_REC_BROKER_ENDPOINT;
            r->endpoint = b->endpoints[k];
            r->endpoint.node_id = b->id;
            emit(r, data);
        }
        if (!b->fenced) {
            memset(r, 0, sizeof(*r));
            r->type = CTL_REC_BROKER_LIVENESS;
            r->liveness.node_id = b->id;
            r->liveness.fenced = false;
            emit(r, data);
        }
    }
}

static void snapshot_topics(const struct ctl_image *img, struct ctl_rec *r, emit_fn emit,
                            void *data)
{
    for (size_t i = 0; i < img->n_topics; i++) {
        const struct ctl_topic *t = img->topics[i];
        memset(r, 0, sizeof(*r));
        r->type = CTL_REC_TOPIC;
        memcpy(r->topic.name, t->name, sizeof(t->name));
        r->topic.id = t->id;
        r->topic.n_partitions = t->n_partitions;
        emit(r, data);
        for (int32_t p = 0; p < t->n_partitions; p++) {
            const struct ctl_partition *part = &t->parts[p];
            if (part->n_replicas == 0)
                continue;
            memset(r, 0, sizeof(*r));
            r->type = CTL_REC_PARTITION;
            r->partition.topic_id = t->id;
            r->partition.partition = p;
            r->partition.leader = part->leader;
            r->partition.leader_epoch = part->leader_epoch;
            r->partition.n_replicas = part->n_replicas;
            memcpy(r->partition.replicas, part->replicas, sizeof(part->replicas));
            r->partition.n_target = part->n_target;
            memcpy(r->partition.target, part->target, sizeof(part->target));
            emit(r, data);
        }
    }
}

static void snapshot_each(const struct ctl_image *img, emit_fn emit, void *data)
{
    struct ctl_rec r;
    snapshot_brokers(img, &r, emit, data);
    snapshot_topics(img, &r, emit, data);
    for (size_t i = 0; i < img->n_configs; i++) {
        const struct ctl_config *c = &img->configs[i];
        memset(&r, 0, sizeof(r));
        r.type = CTL_REC_CONFIG;
        r.config.resource_type = c->resource_type;
        memcpy(r.config.resource, c->resource, sizeof(c->resource));
        memcpy(r.config.key, c->key, sizeof(c->key));
        memcpy(r.config.value, c->value, sizeof(c->value));
        emit(&r, data);
    }
    if (img->has_pids) {
        memset(&r, 0, sizeof(r));
        r.type = CTL_REC_PRODUCER_IDS;
        r.pids = img->pids;
        emit(&r, data);
    }
    if (img->voters.n > 0) {
        memset(&r, 0, sizeof(r));
        r.type = CTL_REC_VOTERS;
        r.voters = img->voters;
        emit(&r, data);
    }
    for (size_t i = 0; i < img->n_users; i++) {
        memset(&r, 0, sizeof(r));
        r.type = CTL_REC_USER_SCRAM;
        r.user = img->users[i];
        emit(&r, data);
    }
    for (size_t i = 0; i < img->n_acls; i++) {
        memset(&r, 0, sizeof(r));
        r.type = CTL_REC_ACL;
        r.acl = img->acls[i];
        emit(&r, data);
    }
    for (size_t i = 0; i < img->n_quotas; i++) {
        memset(&r, 0, sizeof(r));
        r.type = CTL_REC_QUOTA;
        r.quota = img->quotas[i];
        emit(&r, data);
    }
}

static void emit_push(const struct ctl_rec *r, void *data)
{
    *ctl_recs_push(data, r->type) = *r;
}

void ctl_image_snapshot(const struct ctl_image *img, struct ctl_recs *out)
{
    snapshot_each(img, emit_push, out);
}

static void emit_encode(const struct ctl_rec *r, void *data)
{
    struct kwriter *w = data;
    size_t pos = kw_pos(w);
    kw_i32(w, 0);
    ctl_rec_encode(w, r);
    kw_patch_i32(w, pos, (int32_t)(kw_pos(w) - pos - 4));
}

void ctl_image_snapshot_encode(const struct ctl_image *img, struct iobuf *out)
{
    struct kwriter w = {out};
    snapshot_each(img, emit_encode, &w);
}

/* n elements of elem bytes, or NULL for none (cap set to n). */
static void *dup_array(const void *p, size_t n, size_t elem, size_t *cap)
{
    *cap = n;
    return n > 0 ? mem_dup(p, n * elem) : NULL;
}

void ctl_image_copy(struct ctl_image *dst, const struct ctl_image *src)
{
    ctl_image_free(dst);
    *dst = *src; /* the scalars; every array is replaced below */
    dst->brokers =
        dup_array(src->brokers, src->n_brokers, sizeof(*src->brokers), &dst->cap_brokers);
    dst->configs =
        dup_array(src->configs, src->n_configs, sizeof(*src->configs), &dst->cap_configs);
    dst->users = dup_array(src->users, src->n_users, sizeof(*src->users), &dst->cap_users);
    dst->acls = dup_array(src->acls, src->n_acls, sizeof(*src->acls), &dst->cap_acls);
    dst->quotas = dup_array(src->quotas, src->n_quotas, sizeof(*src->quotas), &dst->cap_quotas);
    dst->topics = dup_array(src->topics, src->n_topics, sizeof(*src->topics), &dst->cap_topics);
    for (size_t i = 0; i < src->n_topics; i++) {
        const struct ctl_topic *t = src->topics[i];
        struct ctl_topic *c = mem_dup(t, sizeof(*t));
        size_t cap;
        c->parts = dup_array(t->parts, (size_t)t->n_partitions, sizeof(*t->parts), &cap);
        dst->topics[i] = c;
    }
}

/* ---- local replica changes ---- */

static bool partition_same(const struct ctl_partition *a, const struct ctl_partition *b)
{
    return a->leader == b->leader && a->leader_epoch == b->leader_epoch &&
           a->n_replicas == b->n_replicas &&
           memcmp(a->replicas, b->replicas, (size_t)a->n_replicas * sizeof(a->replicas[0])) == 0 &&
           a->n_target == b->n_target &&
           memcmp(a->target, b->target, (size_t)a->n_target * sizeof(a->target[0])) == 0;
}

/* Partitions of t that broker_id replicates and that other (the same topic in the other image,
 * or NULL) does not give it. */
static void diff_missing(const struct ctl_topic *t, const struct ctl_topic *other,
                         int32_t broker_id, enum ctl_local_change what, ctl_local_cb cb, void *data)
{
    for (int32_t p = 0; p < t->n_partitions; p++) {
        if (!ctl_partition_has_member(&t->parts[p], broker_id))
            continue;
        bool there = other != NULL && p < other->n_partitions &&
                     ctl_partition_has_member(&other->parts[p], broker_id);
        if (!there)
            cb(what, t, p, &t->parts[p], data);
    }
}

void ctl_image_diff_local(const struct ctl_image *before, const struct ctl_image *after,
                          int32_t broker_id, ctl_local_cb cb, void *data)
{
    for (size_t i = 0; i < before->n_topics; i++) {
        const struct ctl_topic *t = before->topics[i];
        diff_missing(t, ctl_image_topic_by_id(after, t->id), broker_id, CTL_LOCAL_REMOVE, cb, data);
    }
    for (size_t i = 0; i < after->n_topics; i++) {
        const struct ctl_topic *t = after->topics[i];
        const struct ctl_topic *old = ctl_image_topic_by_id(before, t->id);
        diff_missing(t, old, broker_id, CTL_LOCAL_CREATE, cb, data);
        for (int32_t p = 0; old != NULL && p < old->n_partitions && p < t->n_partitions; p++) {
            const struct ctl_partition *a = &old->parts[p], *b = &t->parts[p];
            if (ctl_partition_has_member(a, broker_id) &&
                ctl_partition_has_member(b, broker_id) && !partition_same(a, b))
                cb(CTL_LOCAL_CHANGE, t, p, b, data);
        }
    }
}

/* ---- invariants ---- */

static void partition_check(const struct ctl_partition *p)
{
    if (p->n_replicas == 0) {
        CHECK(p->leader == -1 && p->leader_epoch == -1);
        return;
    }
    CHECK(p->n_replicas >= 1 && p->n_replicas <= CTL_REPLICAS_MAX && p->leader_epoch >= 0);
    CHECK(p->leader == -1 || ctl_partition_has_replica(p, p->leader));
    for (int32_t i = 0; i < p->n_replicas; i++)
        for (int32_t j = 0; j < i; j++)
            CHECK(p->replicas[i] != p->replicas[j]);
    CHECK(p->n_target >= 0 && p->n_target <= CTL_REPLICAS_MAX);
    for (int32_t i = 0; i < p->n_target; i++)
        for (int32_t j = 0; j < i; j++)
            CHECK(p->target[i] != p->target[j]);
}

void ctl_image_check(const struct ctl_image *img)
{
    for (size_t i = 1; i < img->n_brokers; i++)
        CHECK(img->brokers[i - 1].id < img->brokers[i].id);
    for (size_t i = 0; i < img->n_brokers; i++) {
        const struct ctl_broker *b = &img->brokers[i];
        CHECK(b->n_endpoints >= 0 && b->n_endpoints <= CTL_ENDPOINTS_MAX);
        for (int32_t k = 0; k < b->n_endpoints; k++)
            for (int32_t j = 0; j < k; j++)
                CHECK(strcmp(b->endpoints[j].listener, b->endpoints[k].listener) != 0);
    }
    for (size_t i = 0; i < img->n_topics; i++) {
        const struct ctl_topic *t = img->topics[i];
        CHECK(i == 0 || strcmp(img->topics[i - 1]->name, t->name) < 0);
        CHECK(!ctl_uuid_is_zero(t->id) && topic_index_by_id(img, t->id) == i);
        CHECK(t->n_partitions >= 1 && t->n_partitions <= CTL_PARTITIONS_MAX);
        for (int32_t p = 0; p < t->n_partitions; p++)
            partition_check(&t->parts[p]);
    }
    for (size_t i = 0; i < img->n_configs; i++) {
        const struct ctl_config *c = &img->configs[i];
        CHECK(i == 0 ||
              config_cmp(c->resource_type, c->resource, c->key, &img->configs[i - 1]) > 0);
        CHECK(c->resource_type != CTL_RESOURCE_TOPIC || ctl_image_topic(img, c->resource) != NULL);
    }
    for (size_t i = 0; i < img->n_users; i++) {
        const struct ctl_rec_user *u = &img->users[i];
        CHECK(!u->deleted);
        CHECK(i == 0 || user_cmp(u->name, u->mechanism, &img->users[i - 1]) > 0);
    }
    for (size_t i = 0; i < img->n_quotas; i++) {
        CHECK(!img->quotas[i].deleted);
        CHECK(i == 0 || ctl_quota_cmp(&img->quotas[i], &img->quotas[i - 1]) > 0);
    }
    for (size_t i = 0; i < img->n_acls; i++) {
        CHECK(!img->acls[i].deleted);
        CHECK(i == 0 || ctl_acl_cmp(&img->acls[i], &img->acls[i - 1]) > 0);
    }
}
