/* The topic registry: topics by name, their partitions and logs, persisted in the catalog.
 *
 * Lifecycle of a topic: created (catalog file written, then logs created) -> live -> deleted
 * (parked requests on its partitions answered, catalog file removed, logs destroyed).
 *
 * Invariants:
 *  1. A topic is in b->topics iff its catalog file exists (modulo a crash between the two
 *     steps, which the next start resolves: logs are created on load if missing).
 *  2. b->total_partitions is the sum of n_parts over all topics and never exceeds
 *     max.partitions.
 *  3. A partition's leader_epoch is >= the epoch of every batch in its log. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "broker/producers.h"
#include "controller/image.h"
#include "group/coordinator.h"
#include "kafka/errors.h"
#include "kafka/names.h"
#include "storage/catalog.h"
#include "storage/cleaner.h"
#include "storage/plog.h"
#include "storage/prefetch.h"

/* Logs opened unsynced at a restart before one syncfs finishes them (storage/plog.h). */
#define TOPICS_OPEN_CHUNK 4096

bool topic_name_valid(struct kstr name, char *err, size_t errcap)
{
    const char *why = ktopic_name_problem(name.p, name.len > 0 ? (size_t)name.len : 0);
    if (why)
        snprintf(err, errcap, "%s", why);
    return !why;
}

struct topic *topic_find(struct broker *b, struct kstr name)
{
    if (name.len <= 0)
        return NULL;
    return strmap_get(&b->topics, name.p, (size_t)name.len);
}

struct kstr topic_name_by_id(struct broker *b, struct kuuid id)
{
    if (kuuid_is_zero(id))
        return KSTR_NULL;
    const struct ctl_topic *t = ctl_image_topic_by_id(cluster_image(b->cluster), id);
    return t ? kstr_c(t->name) : KSTR_NULL;
}

struct partition *partition_find(struct broker *b, struct kstr topic, int32_t index)
{
    struct topic *t = topic_find(b, topic);
    if (!t || index < 0 || index >= t->n_parts)
        return NULL;
    return t->parts[index];
}

/* Opens partition index of t. rec: a restart's (topics_load), whose log is opened unsynced
 * for plog_open_finish_many to finish (storage/plog.h); NULL: a new partition, opened whole. */
static int partition_open(struct broker *b, struct topic *t, int32_t index,
                          struct plog_recovery *rec, struct partition **out)
{
    char dir[BROKER_PATH_MAX + TOPIC_NAME_MAX + 32];
    catalog_partition_dir(b->cat, t->name, index, dir, sizeof(dir));
    struct plog_config pc;
    topic_config_to_plog(&t->cfg, &pc);
    pc.kv = b->kv;
    struct plog *log;
    int rc = rec ? plog_open_unsynced(dir, &pc, b->fl, b->files, b->startup_clean, &log, rec)
                 : plog_open(dir, &pc, b->fl, b->files, b->startup_clean, &log, NULL);
    if (rc != 0) {
        log_error("partition_open_failed", "topic=%s partition=%d dir=%s error=\"%s\"", t->name,
                  index, dir, err_str(rc));
        return rc;
    }
    struct partition *p = mem_calloc(1, sizeof(*p));
    p->topic = t;
    p->index = index;
    p->log = log;
    int32_t e = plog_last_epoch(log);
    p->leader_epoch = e < 0 ? 0 : e;
    p->coord_loading = false;
    list_init(&p->acks_waiters);
    list_init(&p->fetch_watchers);
    partition_producers_open(b, p);
    *out = p;
    return 0;
}

/* What closing p does before its log closes: waiters answered, the producer state's snapshot. */
static void partition_close_begin(struct partition *p, bool destroy, bool sync)
{
    produce_fail_waiters(p, destroy ? KERR_UNKNOWN_TOPIC_OR_PARTITION : KERR_REQUEST_TIMED_OUT);
    fetch_wake_all(p);
    partition_producers_close(p, destroy, sync);
}

static void partition_close(struct broker *b, struct partition *p, bool destroy)
{
    (void)b;
    partition_close_begin(p, destroy, true);
    if (destroy) {
        int rc = plog_destroy(p->log);
        if (rc != 0)
            log_warn("partition_remove_failed", "topic=%s partition=%d error=\"%s\"",
                     p->topic->name, p->index, err_str(rc));
    } else {
        plog_close(p->log);
    }
    mem_free(p);
}

static void overrides_free(struct topic_config_kv *kvs, int n)
{
    for (int i = 0; i < n; i++) {
        mem_free((char *)kvs[i].key);
        mem_free((char *)kvs[i].value);
    }
    mem_free(kvs);
}

static struct topic_config_kv *overrides_dup(const struct topic_config_kv *kvs, int n, int *out_n)
{
    struct topic_config_kv *d = mem_calloc((size_t)(n ? n : 1), sizeof(*d));
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!kvs[i].value)
            continue; /* null value: back to the default, i.e. no override */
        d[k].key = mem_strdup(kvs[i].key);
        d[k].value = mem_strdup(kvs[i].value);
        k++;
    }
    *out_n = k;
    return d;
}

static void topic_free(struct topic *t)
{
    overrides_free(t->overrides, t->n_overrides);
    mem_free(t->parts);
    mem_free(t->name);
    mem_free(t);
}

bool topic_name_internal(const char *name)
{
    return strcmp(name, "__consumer_offsets") == 0 || strcmp(name, "__transaction_state") == 0 ||
           strcmp(name, "__cluster_metadata") == 0;
}

static struct topic *topic_new(struct broker *b, const char *name, int32_t n_parts,
                               const struct topic_config_kv *overrides, int n_overrides)
{
    struct topic *t = mem_calloc(1, sizeof(*t));
    t->name = mem_strdup(name);
    t->internal = topic_name_internal(name);
    t->parts = mem_calloc((size_t)n_parts, sizeof(*t->parts));
    t->overrides = overrides_dup(overrides, n_overrides, &t->n_overrides);
    topic_config_resolve(&t->cfg, b->cfg, t->overrides, t->n_overrides);
    return t;
}

static void to_catalog(const struct topic *t, int32_t n_parts, struct catalog_topic *ct)
{
    ct->name = t->name;
    ct->partitions = n_parts;
    memcpy(ct->id, t->id, sizeof(ct->id));
    ct->configs = mem_calloc((size_t)(t->n_overrides ? t->n_overrides : 1), sizeof(*ct->configs));
    ct->n_configs = t->n_overrides;
    for (int i = 0; i < t->n_overrides; i++) {
        ct->configs[i].key = (char *)t->overrides[i].key;
        ct->configs[i].value = (char *)t->overrides[i].value;
    }
}

static int save_topic(struct broker *b, const struct topic *t, int32_t n_parts)
{
    struct catalog_topic ct;
    to_catalog(t, n_parts, &ct);
    int rc = catalog_save_topic(b->cat, &ct);
    mem_free(ct.configs);
    return rc;
}

int topics_load(struct broker *b, struct broker_startup *info)
{
    struct catalog_topic *cts;
    int32_t n;
    int rc = catalog_load(b->cat, &cts, &n);
    if (rc != 0)
        return rc;
    b->startup_clean = info->clean;
    /* the partitions' files are read ahead on a few threads while they open in turn here */
    size_t n_dirs = 0, at = 0;
    for (int32_t i = 0; i < n; i++)
        n_dirs += (size_t)MAX(cts[i].partitions, 0);
    char **dirs = mem_calloc(n_dirs ? n_dirs : 1, sizeof(*dirs));
    for (int32_t i = 0; i < n; i++) {
        for (int32_t p = 0; p < cts[i].partitions; p++) {
            char dir[BROKER_PATH_MAX + TOPIC_NAME_MAX + 32];
            catalog_partition_dir(b->cat, cts[i].name, p, dir, sizeof(dir));
            dirs[at++] = mem_strdup(dir);
        }
    }
    struct prefetch *pf =
        prefetch_start((const char *const *)dirs, n_dirs, PREFETCH_THREADS, PREFETCH_WINDOW);
    for (size_t i = 0; i < n_dirs; i++)
        mem_free(dirs[i]);
    mem_free(dirs);
    /* opened unsynced, finished a chunk at a time: one syncfs per chunk instead of each
     * recovered log's fdatasyncs, the chunk bounding the index files held open meanwhile */
    struct plog **pending = mem_calloc(TOPICS_OPEN_CHUNK, sizeof(*pending));
    size_t n_pending = 0;
    at = 0;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        struct catalog_topic *ct = &cts[i];
        struct topic_config_kv *kvs =
            mem_calloc((size_t)(ct->n_configs ? ct->n_configs : 1), sizeof(*kvs));
        for (int j = 0; j < ct->n_configs; j++)
            kvs[j] = (struct topic_config_kv){ct->configs[j].key, ct->configs[j].value};
        struct topic *t = topic_new(b, ct->name, ct->partitions, kvs, ct->n_configs);
        mem_free(kvs);
        memcpy(t->id, ct->id, sizeof(t->id));
        for (int32_t p = 0; p < ct->partitions; p++) {
            struct plog_recovery rec = {0};
            prefetch_reached(pf, at++);
            rc = partition_open(b, t, p, &rec, &t->parts[p]);
            if (rc != 0)
                break;
            t->n_parts++;
            info->segments_validated += rec.segments_validated;
            info->truncated_bytes += rec.truncated_bytes;
            pending[n_pending++] = t->parts[p]->log;
            if (n_pending == TOPICS_OPEN_CHUNK) {
                rc = plog_open_finish_many(pending, n_pending);
                n_pending = 0;
                if (rc != 0)
                    break;
            }
        }
        strmap_put(&b->topics, t->name, strlen(t->name), t);
        b->total_partitions += t->n_parts;
        info->topics++;
        info->partitions += t->n_parts;
    }
    if (n_pending > 0) {
        int frc = plog_open_finish_many(pending, n_pending);
        rc = rc != 0 ? rc : frc;
    }
    mem_free(pending);
    struct prefetch_stats ps;
    prefetch_stop(pf, &ps);
    if (pf)
        log_info("partitions_prefetched",
                 "partitions=%zu dirs_looked_at=%" PRIu64 " files_read_ahead=%" PRIu64
                 " files_cached=%" PRIu64 " bytes=%" PRIu64,
                 n_dirs, ps.dirs, ps.files, ps.cached, ps.bytes);
    catalog_topics_free(cts, n);
    return rc;
}

int topic_create(struct broker *b, struct kstr name, const uint8_t id[16], int32_t partitions,
                 const struct topic_config_kv *overrides, int n_overrides, char *err, size_t errcap)
{
    CHECK(partitions > 0);
    if (b->total_partitions + (int64_t)partitions > b->cfg->max_partitions) {
        snprintf(err, errcap,
                 "Creating %d partitions would exceed the broker's limit of %d partitions "
                 "(max.partitions)",
                 partitions, b->cfg->max_partitions);
        return -ERR_LIMIT;
    }
    char *cname = mem_strndup(name.p, (size_t)name.len);
    struct topic *t = topic_new(b, cname, partitions, overrides, n_overrides);
    mem_free(cname);
    memcpy(t->id, id, sizeof(t->id));
    int rc = save_topic(b, t, partitions);
    if (rc != 0) {
        snprintf(err, errcap, "Cannot persist topic: %s", err_str(rc));
        topic_free(t);
        return rc;
    }
    for (int32_t p = 0; p < partitions; p++) {
        rc = partition_open(b, t, p, NULL, &t->parts[p]);
        if (rc != 0) {
            snprintf(err, errcap, "Cannot create partition %d: %s", p, err_str(rc));
            for (int32_t q = 0; q < t->n_parts; q++)
                partition_close(b, t->parts[q], true);
            (void)catalog_delete_topic(b->cat, t->name, partitions);
            topic_free(t);
            return rc;
        }
        t->n_parts++;
    }
    strmap_put(&b->topics, t->name, strlen(t->name), t);
    b->total_partitions += t->n_parts;
    log_info("topic_created", "topic=%s partitions=%d overrides=%d", t->name, t->n_parts,
             t->n_overrides);
    if (t->cfg.flush_ms < INT64_MAX / 2)
        flush_timer_update(b);
    return 0;
}

int topic_set_id(struct broker *b, struct topic *t, const uint8_t id[16])
{
    uint8_t old[16];
    memcpy(old, t->id, sizeof(old));
    memcpy(t->id, id, sizeof(t->id));
    int rc = save_topic(b, t, t->n_parts);
    if (rc != 0)
        memcpy(t->id, old, sizeof(old));
    return rc;
}

int topic_delete(struct broker *b, struct topic *t)
{
    /* the catalog file goes first: once it is gone the topic is deleted, whatever happens to
     * the data directories next (a crash leaves *.deleted debris that the next start removes) */
    int rc = catalog_delete_topic(b->cat, t->name, t->n_parts);
    if (rc != 0)
        log_warn("topic_delete_incomplete", "topic=%s error=\"%s\"", t->name, err_str(rc));
    strmap_del(&b->topics, t->name, strlen(t->name));
    b->total_partitions -= t->n_parts;
    for (int32_t i = 0; i < t->n_parts; i++)
        partition_close(b, t->parts[i], true);
    log_info("topic_deleted", "topic=%s", t->name);
    if (b->groups)
        coordinator_forget_topic(b->groups, t->name);
    topic_free(t);
    return 0;
}

int topic_add_partitions(struct broker *b, struct topic *t, int32_t count, char *err, size_t errcap)
{
    CHECK(count > t->n_parts);
    int32_t add = count - t->n_parts;
    if (b->total_partitions + (int64_t)add > b->cfg->max_partitions) {
        snprintf(err, errcap,
                 "Adding %d partitions would exceed the broker's limit of %d "
                 "partitions (max.partitions)",
                 add, b->cfg->max_partitions);
        return -ERR_LIMIT;
    }
    int rc = save_topic(b, t, count);
    if (rc != 0) {
        snprintf(err, errcap, "Cannot persist topic: %s", err_str(rc));
        return rc;
    }
    t->parts = mem_realloc(t->parts, (size_t)count * sizeof(*t->parts));
    int32_t old = t->n_parts;
    for (int32_t p = old; p < count; p++) {
        rc = partition_open(b, t, p, NULL, &t->parts[p]);
        if (rc != 0) {
            snprintf(err, errcap, "Cannot create partition %d: %s", p, err_str(rc));
            break;
        }
        t->n_parts++;
        b->total_partitions++;
    }
    if (rc != 0)
        (void)save_topic(b, t, t->n_parts); /* persist what exists */
    else
        log_info("partitions_created", "topic=%s partitions=%d previous=%d", t->name, count, old);
    return rc;
}

int topic_set_overrides(struct broker *b, struct topic *t, const struct topic_config_kv *kvs, int n,
                        char *err, size_t errcap)
{
    int old_n = t->n_overrides;
    struct topic_config_kv *old = t->overrides;
    t->overrides = overrides_dup(kvs, n, &t->n_overrides);
    int rc = save_topic(b, t, t->n_parts);
    if (rc != 0) {
        snprintf(err, errcap, "Cannot persist topic config: %s", err_str(rc));
        overrides_free(t->overrides, t->n_overrides);
        t->overrides = old;
        t->n_overrides = old_n;
        return rc;
    }
    overrides_free(old, old_n);
    topic_config_resolve(&t->cfg, b->cfg, t->overrides, t->n_overrides);
    struct plog_config pc;
    topic_config_to_plog(&t->cfg, &pc);
    for (int32_t i = 0; i < t->n_parts; i++)
        plog_set_config(t->parts[i]->log, &pc);
    log_info("topic_config_altered", "topic=%s overrides=%d", t->name, t->n_overrides);
    flush_timer_update(b);
    return 0;
}

/* A stop: every partition's log is closed at once (plog_close_many: two filesystem-wide syncs
 * rather than each log's own, which one after another took most of a stop at thousands of
 * partitions). */
void topics_close_all(struct broker *b)
{
    size_t it = 0;
    const char *k;
    void *v;
    size_t n = 0;
    while (strmap_next(&b->topics, &it, &k, &v))
        n += (size_t)((struct topic *)v)->n_parts;
    bool fs_sync = plog_close_many_syncs_fs(n);
    struct plog **logs = mem_calloc(n ? n : 1, sizeof(*logs));
    size_t k_logs = 0;
    it = 0;
    while (strmap_next(&b->topics, &it, &k, &v)) {
        struct topic *t = v;
        for (int32_t i = 0; i < t->n_parts; i++) {
            partition_close_begin(t->parts[i], false, !fs_sync);
            logs[k_logs++] = t->parts[i]->log;
        }
    }
    plog_close_many(logs, k_logs);
    mem_free(logs);
    it = 0;
    while (strmap_next(&b->topics, &it, &k, &v)) {
        struct topic *t = v;
        for (int32_t i = 0; i < t->n_parts; i++)
            mem_free(t->parts[i]);
        topic_free(t);
    }
    strmap_destroy(&b->topics);
    strmap_init(&b->topics);
    b->total_partitions = 0;
}

void topics_apply_retention(struct broker *b)
{
    int64_t now = time_wall_ms();
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&b->topics, &it, &k, &v)) {
        struct topic *t = v;
        for (int32_t i = 0; i < t->n_parts; i++) {
            (void)plog_maybe_roll(t->parts[i]->log, now);
            partition_apply_retention(b, t->parts[i], now);
        }
    }
}

void topics_offer_cleaning(struct broker *b)
{
    if (!b->cleaner)
        return;
    int64_t now = time_wall_ms();
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&b->topics, &it, &k, &v)) {
        struct topic *t = v;
        for (int32_t i = 0; i < t->n_parts; i++)
            cleaner_offer(b->cleaner, t->parts[i]->log, now);
    }
    cleaner_dispatch(b->cleaner);
}
