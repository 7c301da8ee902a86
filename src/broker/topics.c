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
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "base/workpool.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "broker/producers.h"
#include "controller/image.h"
#include "group/coordinator.h"
#include "kafka/errors.h"
#include "kafka/names.h"
#include "storage/catalog.h"
#include "storage/cleaner.h"
#include "storage/fdcache.h"
#include "storage/io.h"
#include "storage/plog.h"
#include "storage/prefetch.h"

/* Logs opened unsynced at a restart before one syncfs finishes them (storage/plog.h). */
#define TOPICS_OPEN_CHUNK 4096
#define TOPICS_OPEN_THREADS 8   /* at most: one per CPU */
#define TOPICS_OPEN_WINDOW 1024 /* partitions opened ahead of the one taken next */

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
 * for plog_open_finish_many to finish (storage/plog.h); NULL: a new partition, opened whole.
 * files: the cache its files go to (NULL: they stay open, for plog_use_file_cache). Touches
 * nothing shared but the store's values of its own directory: topics_load runs it on several
 * threads. */
static int partition_open(struct broker *b, struct topic *t, int32_t index,
                          struct plog_recovery *rec, struct fdcache *files, struct partition **out)
{
    char dir[BROKER_PATH_MAX + TOPIC_NAME_MAX + 32];
    catalog_partition_dir(b->cat, t->name, index, dir, sizeof(dir));
    struct plog_config pc;
    topic_config_to_plog(&t->cfg, &pc);
    pc.kv = b->kv;
    pc.kv_read_only = files == NULL && rec != NULL; /* a restart's opener thread */
    struct plog *log;
    int rc = rec ? plog_open_unsynced(dir, &pc, b->fl, files, b->startup_clean, &log, rec)
                 : plog_open(dir, &pc, b->fl, files, b->startup_clean, &log, NULL);
    if (rc == -EAGAIN && pc.kv_read_only)
        return rc; /* topics_load opens it again on the store's own thread */
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
    plog_drop_open_window(log); /* the producer state's rebuild was its last reader */
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

/* A restart's opens (topics_load): one job per partition, run on a few threads by
 * base/workpool.h and taken on this one in order. */
struct load_job {
    struct topic *t;
    int32_t index;
    struct partition *part;
    struct plog_recovery rec;
};

struct load {
    struct broker *b;
    struct broker_startup *info;
    struct load_job *jobs;
    struct prefetch *pf;
    struct plog **pending; /* taken, not finished yet: a syncfs finishes a chunk */
    size_t n_pending;
    size_t keep_from; /* the jobs from here on keep their files open for the cache */
    int64_t finish_ms; /* spent finishing (the syncs), for the log line */
};

static int load_run(size_t i, size_t *fds, void *data)
{
    struct load *l = data;
    struct load_job *j = &l->jobs[i];
    prefetch_reached(l->pf, i);
    long in0 = io_thread_blocks_read();
    int rc = partition_open(l->b, j->t, j->index, &j->rec, NULL, &j->part);
    if (in0 >= 0 && io_thread_blocks_read() != in0)
        prefetch_missed(l->pf); /* the read-ahead is not keeping up with a cold cache */
    /* the cache would close the files of all but the last partitions as it takes them in: they
     * are closed here instead, off the reactor's thread */
    if (rc == 0 && i < l->keep_from)
        plog_drop_files(j->part->log);
    *fds = rc == 0 ? plog_open_files(j->part->log) : 0;
    return rc;
}

static int load_finish_pending(struct load *l)
{
    int64_t t0 = time_mono_ms();
    int rc = l->n_pending > 0 ? plog_open_finish_many(l->pending, l->n_pending) : 0;
    l->n_pending = 0;
    l->finish_ms += time_mono_ms() - t0;
    return rc;
}

static int load_take(size_t i, int rc, void *data)
{
    struct load *l = data;
    struct load_job *j = &l->jobs[i];
    if (rc == -EAGAIN) { /* its open must write to the store: here, with the cache */
        struct plog_recovery first = j->rec; /* what it truncated stays truncated */
        rc = partition_open(l->b, j->t, j->index, &j->rec, l->b->files, &j->part);
        j->rec.truncated_bytes += first.truncated_bytes;
        if (rc != 0)
            return rc;
    } else if (rc != 0) {
        return rc;
    } else {
        plog_use_file_cache(j->part->log, l->b->files);
    }
    CHECK(j->t->n_parts == j->index);
    j->t->parts[j->index] = j->part;
    j->t->n_parts++;
    l->info->segments_validated += j->rec.segments_validated;
    l->info->truncated_bytes += j->rec.truncated_bytes;
    l->pending[l->n_pending++] = j->part->log;
    return l->n_pending == TOPICS_OPEN_CHUNK ? load_finish_pending(l) : 0;
}

/* A partition opened after another failed: finished and closed again (the broker does not
 * start). */
static void load_discard(size_t i, int rc, void *data)
{
    struct load *l = data;
    struct load_job *j = &l->jobs[i];
    if (rc != 0) /* nothing opened (-EAGAIN included) */
        return;
    plog_use_file_cache(j->part->log, l->b->files);
    (void)plog_open_finish_many(&j->part->log, 1);
    partition_close(l->b, j->part, false);
}

int topics_load(struct broker *b, struct broker_startup *info)
{
    struct catalog_topic *cts;
    int32_t n;
    int rc = catalog_load(b->cat, &cts, &n);
    if (rc != 0)
        return rc;
    b->startup_clean = info->clean;
    int64_t t0 = time_mono_ms();
    size_t n_jobs = 0, at = 0;
    for (int32_t i = 0; i < n; i++)
        n_jobs += (size_t)MAX(cts[i].partitions, 0);
    struct load l = {.b = b, .info = info};
    l.jobs = mem_calloc(n_jobs ? n_jobs : 1, sizeof(*l.jobs));
    char **dirs = mem_calloc(n_jobs ? n_jobs : 1, sizeof(*dirs));
    struct topic **topics = mem_calloc(n ? (size_t)n : 1, sizeof(*topics));
    for (int32_t i = 0; i < n; i++) {
        struct catalog_topic *ct = &cts[i];
        struct topic_config_kv *kvs =
            mem_calloc((size_t)(ct->n_configs ? ct->n_configs : 1), sizeof(*kvs));
        for (int j = 0; j < ct->n_configs; j++)
            kvs[j] = (struct topic_config_kv){ct->configs[j].key, ct->configs[j].value};
        struct topic *t = topic_new(b, ct->name, ct->partitions, kvs, ct->n_configs);
        mem_free(kvs);
        memcpy(t->id, ct->id, sizeof(t->id));
        topics[i] = t;
        for (int32_t p = 0; p < ct->partitions; p++) {
            char dir[BROKER_PATH_MAX + TOPIC_NAME_MAX + 32];
            catalog_partition_dir(b->cat, ct->name, p, dir, sizeof(dir));
            dirs[at] = mem_strdup(dir);
            l.jobs[at++] = (struct load_job){.t = t, .index = p};
        }
    }
    /* the partitions' files are read ahead on a few threads while they open */
    l.pf = prefetch_start((const char *const *)dirs, n_jobs, PREFETCH_THREADS, PREFETCH_WINDOW);
    for (size_t i = 0; i < n_jobs; i++)
        mem_free(dirs[i]);
    mem_free(dirs);
    /* opened unsynced on a thread per CPU (a partition's open is mostly system calls on its own
     * directory), taken here in order: their files handed to the cache, and finished a chunk at
     * a time (one syncfs per chunk instead of each recovered log's fdatasyncs, the chunk
     * bounding the index files held open meanwhile). The descriptors of logs opened but not
     * taken yet stay within a quarter of the cache's limit. */
    l.pending = mem_calloc(TOPICS_OPEN_CHUNK, sizeof(*l.pending));
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = (int)MIN(MAX(cpus, 1), TOPICS_OPEN_THREADS);
    struct fdcache_stats fs;
    fdcache_stats(b->files, &fs);
    size_t keep = fs.limit / 4; /* partitions: their directory and segments, about two each */
    l.keep_from = n_jobs > keep ? n_jobs - keep : 0;
    struct workpool_ops ops = {load_run, load_take, load_discard};
    rc = workpool_run(n_jobs, threads, TOPICS_OPEN_WINDOW, MAX(fs.limit / 4, 64), &ops, &l);
    int frc = load_finish_pending(&l);
    rc = rc != 0 ? rc : frc;
    mem_free(l.pending);
    for (int32_t i = 0; i < n; i++) {
        struct topic *t = topics[i];
        strmap_put(&b->topics, t->name, strlen(t->name), t);
        b->total_partitions += t->n_parts;
        info->topics++;
        info->partitions += t->n_parts;
    }
    mem_free(topics);
    mem_free(l.jobs);
    struct prefetch_stats ps;
    prefetch_stop(l.pf, &ps);
    if (l.pf)
        log_info("partitions_prefetched",
                 "partitions=%zu dirs_looked_at=%" PRIu64 " dirs_read=%" PRIu64
                 " files_read_ahead=%" PRIu64 " files_cached=%" PRIu64 " bytes=%" PRIu64
                 " opener_reads=%" PRIu64,
                 n_jobs, ps.dirs, ps.dirs_cold, ps.files, ps.cached, ps.bytes, ps.missed);
    log_info("partitions_opened", "partitions=%zu threads=%d ms=%" PRId64 " finish_ms=%" PRId64,
             n_jobs, threads, time_mono_ms() - t0, l.finish_ms);
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
        rc = partition_open(b, t, p, NULL, b->files, &t->parts[p]);
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
        rc = partition_open(b, t, p, NULL, b->files, &t->parts[p]);
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
