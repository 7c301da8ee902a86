/* Opening a data directory that a single-node release wrote (broker/legacy.h).
 *
 * Such a release kept its topics in the local catalog only, wrote its partition logs with
 * leader epoch 0 and had no metadata log. This one keeps topics in the metadata log and runs
 * every partition as a Raft group whose terms start at 1. The upgrade, in broker_start:
 *   1. legacy_pending: standalone, no metadata log, and the catalog holds topics (or the marker
 *      of an upgrade under way is there);
 *   2. legacy_prepare, before the metadata log exists: the marker `upgrade-in-progress` is
 *      written durably, then every local partition's batches get epoch 1 (plog_raise_epochs);
 *   3. the cluster starts (a fresh metadata log, this node its only voter) and the node
 *      registers;
 *   4. legacy_import: every local topic the image lacks is created through the controller
 *      with its partition count and configs (one replica: this node), and once every command is
 *      answered the marker goes. Reconcile then runs each partition as a Raft group over the
 *      log it already has (local topics are matched by name).
 * A crash at any step redoes the upgrade from step 2 at the next start (every step is
 * idempotent: epochs are only raised, topics the image has are skipped). Everything else a
 * data directory holds carries over as it is: record offsets (a group of one voter writes no
 * no-op), committed offsets (the records in __consumer_offsets), producer state (snapshots and
 * the log) and the producer-id block file (its next block start becomes the floor of the blocks
 * the controller grants: broker/producers.c). */
#include "broker/legacy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "controller/image.h"
#include "controller/request.h"
#include "kafka/errors.h"
#include "storage/catalog.h"
#include "storage/io.h"
#include "storage/plog.h"

#define MARKER "upgrade-in-progress"
#define IMPORT_MAX_MS 30000

static bool exists_at(int dirfd, const char *name)
{
    struct stat st;
    return fstatat(dirfd, name, &st, 0) == 0;
}

bool legacy_pending(const struct broker *b)
{
    if (b->cfg->n_voters > 0)
        return false; /* a static quorum's node: it never was a single-node release's */
    int dfd = open(b->cfg->log_dirs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return false;
    bool marker = exists_at(dfd, MARKER);
    bool metadata = exists_at(dfd, CLUSTER_METADATA_DIR);
    close(dfd);
    return marker || (!metadata && b->topics.len > 0);
}

int legacy_prepare(struct broker *b, char *err, size_t errcap)
{
    int dfd = open(b->cfg->log_dirs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        int e = -errno;
        snprintf(err, errcap, "cannot open %s: %s", b->cfg->log_dirs, err_str(e));
        return e;
    }
    static const char text[] = "a single-node data directory is being upgraded\n";
    int rc = io_write_file_atomic(dfd, MARKER, text, sizeof(text) - 1, true);
    close(dfd);
    if (rc != 0) {
        snprintf(err, errcap, "cannot write %s/%s: %s", b->cfg->log_dirs, MARKER, err_str(rc));
        return rc;
    }
    log_info("legacy_upgrade_started", "dir=%s topics=%zu", b->cfg->log_dirs, b->topics.len);
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&b->topics, &it, &k, &v)) {
        struct topic *t = v;
        for (int32_t i = 0; i < t->n_parts; i++) {
            rc = plog_raise_epochs(t->parts[i]->log, 1);
            if (rc != 0) {
                snprintf(err, errcap, "cannot upgrade %s-%d: %s", t->name, i, err_str(rc));
                return rc;
            }
            t->parts[i]->leader_epoch = MAX(t->parts[i]->leader_epoch, 1);
        }
    }
    return 0;
}

struct import {
    int pending;    /* commands not answered yet */
    int failed;
    bool abandoned; /* legacy_import gave up waiting: the last answer frees this */
};

struct import_item {
    struct import *im;
    char *topic;
};

static void created(struct ctl_runtime *rt, const struct ctl_answer *a, void *data)
{
    struct import_item *item = data;
    (void)rt;
    if (a->error != KERR_NONE && a->error != KERR_TOPIC_ALREADY_EXISTS) {
        log_error("legacy_topic_import_failed", "topic=%s error=%s", item->topic,
                  kafka_error_name(a->error));
        item->im->failed++;
    } else {
        log_info("legacy_topic_imported", "topic=%s", item->topic);
    }
    struct import *im = item->im;
    mem_free(item->topic);
    mem_free(item);
    if (--im->pending == 0 && im->abandoned)
        mem_free(im);
}

int legacy_import(struct broker *b, char *err, size_t errcap)
{
    struct import *im = mem_calloc(1, sizeof(*im));
    const struct ctl_image *img = cluster_image(b->cluster);
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&b->topics, &it, &k, &v)) {
        struct topic *t = v;
        if (ctl_image_topic(img, t->name))
            continue;
        struct ctl_config_entry *cfgs =
            mem_calloc((size_t)(t->n_overrides > 0 ? t->n_overrides : 1), sizeof(*cfgs));
        for (int i = 0; i < t->n_overrides; i++)
            cfgs[i] = (struct ctl_config_entry){t->overrides[i].key, t->overrides[i].value};
        struct ctl_request cmd = {.type = CTL_REQ_CREATE_TOPIC,
                                  .name = t->name,
                                  .n_partitions = t->n_parts,
                                  .rf = 1,
                                  .configs = cfgs,
                                  .n_configs = (size_t)t->n_overrides};
        struct import_item *item = mem_calloc(1, sizeof(*item));
        item->im = im;
        item->topic = mem_strdup(t->name);
        im->pending++;
        cluster_submit(b->cluster, &cmd, created, item);
        mem_free(cfgs);
    }
    int64_t start = time_mono_ms();
    while (im->pending > 0 && time_mono_ms() - start < IMPORT_MAX_MS)
        reactor_run_once(b->r, 5);
    int failed = im->failed, pending = im->pending;
    if (pending > 0)
        im->abandoned = true; /* answered later (at the latest when the controller closes) */
    else
        mem_free(im);
    if (pending > 0 || failed > 0) {
        snprintf(err, errcap,
                 "upgrading %s: %d topics could not be put in the metadata log (%d unanswered); "
                 "nothing was lost, the next start tries again",
                 b->cfg->log_dirs, failed, pending);
        return -ERR_BUSY;
    }
    int dfd = open(b->cfg->log_dirs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = dfd < 0 ? -errno : 0;
    if (rc == 0 && unlinkat(dfd, MARKER, 0) != 0 && errno != ENOENT)
        rc = -errno;
    if (rc == 0)
        rc = io_fsync_dir(dfd);
    if (dfd >= 0)
        close(dfd);
    if (rc != 0) {
        snprintf(err, errcap, "cannot remove %s/%s: %s", b->cfg->log_dirs, MARKER, err_str(rc));
        return rc;
    }
    log_info("legacy_upgrade_done", "dir=%s ms=%" PRId64, b->cfg->log_dirs,
             time_mono_ms() - start);
    return 0;
}
