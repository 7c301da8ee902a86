/* topic configs from the metadata image (see cluster_configs.h).
 *
 * No state of its own: the image (cluster.c's controller runtime) holds the configs, each local
 * topic (topics.c) holds the overrides it applies. cluster_configs_apply runs on the cluster
 * timer after an image change (cluster.c's reconcile), never inside a controller callback, and
 * makes the second equal to the first for every local topic the image has.
 *
 * Invariant: after cluster_configs_apply returned without a failure, every local topic named in
 * the image has exactly cluster_image_overrides() of it as overrides (so a pass over an
 * unchanged image changes nothing and logs nothing). */
#include "broker/cluster_configs.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/mem.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "kafka/errors.h"

size_t cluster_configs_replace_ops(const struct ctl_config *cur, size_t n_cur,
                                   const struct topic_config_kv *want, size_t n_want,
                                   struct ctl_config_entry *ops)
{
    size_t n = 0;
    for (size_t i = 0; i < n_want; i++)
        ops[n++] = (struct ctl_config_entry){want[i].key, want[i].value};
    for (size_t i = 0; i < n_cur; i++) {
        bool kept = false;
        for (size_t j = 0; j < n_want && !kept; j++)
            kept = strcmp(cur[i].key, want[j].key) == 0;
        if (!kept)
            ops[n++] = (struct ctl_config_entry){cur[i].key, NULL};
    }
    return n;
}

static bool value_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

bool cluster_overrides_same(const struct topic_config_kv *a, int na,
                            const struct topic_config_kv *b, int nb)
{
    if (na != nb)
        return false;
    for (int i = 0; i < na; i++) {
        int j = 0;
        while (j < nb && strcmp(a[i].key, b[j].key) != 0)
            j++;
        if (j == nb || !value_eq(a[i].value, b[j].value))
            return false;
    }
    return true;
}

int cluster_image_overrides(const struct ctl_image *img, const char *topic,
                            struct topic_config_kv *out, int cap, int *refused)
{
    const struct ctl_config *cf;
    size_t n_cf = ctl_image_configs_of(img, CTL_RESOURCE_TOPIC, topic, &cf);
    int n = 0, bad = 0;
    for (size_t i = 0; i < n_cf; i++) {
        char err[256];
        if (n == cap || !topic_config_validate(cf[i].key, strlen(cf[i].key), cf[i].value,
                                               strlen(cf[i].value), err, sizeof(err))) {
            bad++;
            continue;
        }
        out[n++] = (struct topic_config_kv){cf[i].key, cf[i].value};
    }
    if (refused)
        *refused = bad;
    return n;
}

int16_t cluster_config_check(int8_t resource_type, const char *key, const char *value, void *data)
{
    (void)data;
    if (resource_type != CTL_RESOURCE_TOPIC)
        return KERR_INVALID_REQUEST;
    if (!value)
        return KERR_NONE; /* a deletion: even of a key this version does not know */
    char err[256];
    if (!topic_config_validate(key, strlen(key), value, strlen(value), err, sizeof(err)))
        return KERR_INVALID_CONFIG;
    return KERR_NONE;
}

int cluster_configs_apply(struct broker *b)
{
    const struct ctl_image *img = cluster_image(b->cluster);
    int n_keys = topic_config_key_count();
    struct topic_config_kv *kv = mem_calloc((size_t)n_keys, sizeof(*kv));
    int changed = 0;
    for (size_t ti = 0; ti < img->n_topics; ti++) {
        const struct ctl_topic *t = img->topics[ti];
        struct topic *lt = topic_find(b, (struct kstr){t->name, (int32_t)strlen(t->name)});
        if (!lt)
            continue; /* no local replica */
        int refused;
        int n = cluster_image_overrides(img, t->name, kv, n_keys, &refused);
        if (cluster_overrides_same(kv, n, lt->overrides, lt->n_overrides))
            continue;
        char err[256];
        int old_n = lt->n_overrides;
        if (topic_set_overrides(b, lt, kv, n, err, sizeof(err)) != 0) {
            log_error("cluster_topic_configs_failed", "topic=%s error=\"%s\"", t->name, err);
            continue;
        }
        changed++;
        log_info("cluster_topic_configs_applied",
                 "topic=%s overrides=%d previous=%d refused=%d retention_ms=%" PRId64
                 " retention_bytes=%" PRId64 " segment_bytes=%" PRId64 " compact=%d delete=%d",
                 t->name, n, old_n, refused, lt->cfg.retention_ms, lt->cfg.retention_bytes,
                 lt->cfg.segment_bytes, lt->cfg.cleanup_compact, lt->cfg.cleanup_delete);
    }
    mem_free(kv);
    return changed;
}
