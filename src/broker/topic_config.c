#include "broker/topic_config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"
#include "base/log.h"
#include "broker/config.h"
#include "kafka/msg.h"
#include "storage/plog.h"

enum kind {
    K_LONG,   /* integer >= min (int64) */
    K_INT,    /* integer in [min, INT32_MAX] */
    K_BOOL,   /* true|false */
    K_POLICY, /* delete | compact | compact,delete */
    K_TSTYPE, /* CreateTime | LogAppendTime */
    K_RATIO,  /* 0.0 .. 1.0 */
    K_COMPRESSION, /* producer */
    K_STRING, /* any text */
};

/* X(key, kind, min, broker_key, default_text)
 * broker_key: the broker-wide setting that provides the default (NULL: default_text).
 * Keys after "min.insync.replicas" in Kafka's list that we accept but do not act on are marked
 * in the README ("accepted for compatibility"). Alphabetical, as Kafka lists them. */
#define TOPIC_CONFIG_TABLE(X)                                                                      \
    X("cleanup.policy", K_POLICY, 0, "log.cleanup.policy", NULL)                                   \
    X("compression.type", K_COMPRESSION, 0, "compression.type", NULL)                              \
    X("confluent.key.schema.validation", K_BOOL, 0, NULL, "false")                                 \
    X("confluent.value.schema.validation", K_BOOL, 0, NULL, "false")                               \
    X("delete.retention.ms", K_LONG, 0, "log.cleaner.delete.retention.ms", NULL)                   \
    X("file.delete.delay.ms", K_LONG, 0, NULL, "60000")                                            \
    X("flush.messages", K_LONG, 1, "log.flush.interval.messages", NULL)                            \
    X("flush.ms", K_LONG, 0, "log.flush.interval.ms", NULL)                                        \
    X("follower.replication.throttled.replicas", K_STRING, 0, NULL, "")                            \
    X("index.interval.bytes", K_INT, 0, "log.index.interval.bytes", NULL)                          \
    X("leader.replication.throttled.replicas", K_STRING, 0, NULL, "")                              \
    X("max.compaction.lag.ms", K_LONG, 1, NULL, "9223372036854775807")                             \
    X("max.message.bytes", K_INT, 0, "message.max.bytes", NULL)                                    \
    X("message.downconversion.enable", K_BOOL, 0, NULL, "true")                                    \
    X("message.format.version", K_STRING, 0, NULL, "3.0-IV1") /* Kafka 3.x: ignored (v2 only) */   \
    X("message.timestamp.difference.max.ms", K_LONG, 0, NULL, "9223372036854775807")               \
    X("message.timestamp.type", K_TSTYPE, 0, "log.message.timestamp.type", NULL)                   \
    X("min.cleanable.dirty.ratio", K_RATIO, 0, "log.cleaner.min.cleanable.ratio", NULL)            \
    X("min.compaction.lag.ms", K_LONG, 0, "log.cleaner.min.compaction.lag.ms", NULL)               \
    X("min.insync.replicas", K_INT, 1, "min.insync.replicas", NULL)                                \
    X("preallocate", K_BOOL, 0, NULL, "false")                                                     \
    X("redpanda.key.schema.id.validation", K_BOOL, 0, NULL, "false")                               \
    X("redpanda.value.schema.id.validation", K_BOOL, 0, NULL, "false")                             \
    X("retention.bytes", K_LONG, -1, "log.retention.bytes", NULL)                                  \
    X("retention.ms", K_LONG, -1, "log.retention.ms", NULL)                                        \
    X("segment.bytes", K_INT, 14, "log.segment.bytes", NULL)                                       \
    X("segment.index.bytes", K_INT, 4, NULL, "10485760")                                           \
    X("segment.jitter.ms", K_LONG, 0, NULL, "0")                                                   \
    X("segment.ms", K_LONG, 1, "log.roll.ms", NULL)                                                \
    X("unclean.leader.election.enable", K_BOOL, 0, NULL, "false")

struct key_info {
    const char *name;
    enum kind kind;
    int64_t min;
    const char *broker_key;
    const char *default_text;
};

static const struct key_info keys[] = {
#define X(name, kind, min, bkey, dflt) {name, kind, min, bkey, dflt},
    TOPIC_CONFIG_TABLE(X)
#undef X
};

enum {
#define X(name, kind, min, bkey, dflt) +1
    N_KEYS = 0 TOPIC_CONFIG_TABLE(X)
#undef X
};

int topic_config_key_count(void)
{
    return N_KEYS;
}

const char *topic_config_key_name(int i)
{
    CHECK(i >= 0 && i < N_KEYS);
    return keys[i].name;
}

const char *topic_config_default_text(int i)
{
    CHECK(i >= 0 && i < topic_config_key_count());
    return keys[i].default_text ? keys[i].default_text : "";
}

const char *topic_config_broker_key(int i)
{
    CHECK(i >= 0 && i < N_KEYS);
    return keys[i].broker_key;
}

int topic_config_key_index(const char *key, size_t len)
{
    for (int i = 0; i < N_KEYS; i++)
        if (strlen(keys[i].name) == len && memcmp(keys[i].name, key, len) == 0)
            return i;
    return -1;
}

bool topic_config_is_list(int i)
{
    CHECK(i >= 0 && i < N_KEYS);
    return keys[i].kind == K_POLICY ||
           !strcmp(keys[i].name, "follower.replication.throttled.replicas") ||
           !strcmp(keys[i].name, "leader.replication.throttled.replicas");
}

int8_t topic_config_type(int i)
{
    CHECK(i >= 0 && i < N_KEYS);
    if (topic_config_is_list(i))
        return KAFKA_CONFIG_TYPE_LIST;
    switch (keys[i].kind) {
    case K_LONG:
        return KAFKA_CONFIG_TYPE_LONG;
    case K_INT:
        return KAFKA_CONFIG_TYPE_INT;
    case K_BOOL:
        return KAFKA_CONFIG_TYPE_BOOLEAN;
    case K_RATIO:
        return KAFKA_CONFIG_TYPE_DOUBLE;
    default:
        return KAFKA_CONFIG_TYPE_STRING;
    }
}

#define CODEC_BAD (-2)

/* compression.type's values (Kafka's names) into a KCOMPRESSION_* code,
 * TOPIC_COMPRESSION_PRODUCER, or CODEC_BAD. */
static int parse_codec(const char *v)
{
    static const char *const names[] = {"uncompressed", "gzip", "snappy", "lz4", "zstd"};
    if (!strcmp(v, "producer"))
        return TOPIC_COMPRESSION_PRODUCER;
    for (int i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
        if (!strcmp(v, names[i]))
            return i; /* KCOMPRESSION_NONE .. KCOMPRESSION_ZSTD */
    return CODEC_BAD;
}

static const char *codec_text(int c)
{
    static const char *const names[] = {"uncompressed", "gzip", "snappy", "lz4", "zstd"};
    return c >= 0 && c <= 4 ? names[c] : "producer";
}

static bool parse_i64(const char *s, int64_t *out)
{
    if (!*s)
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return false;
    *out = v;
    return true;
}

static bool parse_policy(const char *s, bool *del, bool *compact)
{
    *del = *compact = false;
    char buf[64];
    if (strlen(s) >= sizeof(buf) || !*s)
        return false;
    strcpy(buf, s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ')
            tok++;
        size_t n = strlen(tok);
        while (n && tok[n - 1] == ' ')
            tok[--n] = '\0';
        if (strcmp(tok, "delete") == 0)
            *del = true;
        else if (strcmp(tok, "compact") == 0)
            *compact = true;
        else
            return false;
    }
    return *del || *compact;
}

/* Validates text for key info k; err gets the reason. */
static bool check_value(const struct key_info *k, const char *v, char *err, size_t errcap)
{
    int64_t n;
    bool a, b;
    switch (k->kind) {
    case K_LONG:
    case K_INT:
        if (!parse_i64(v, &n) || n < k->min || (k->kind == K_INT && n > INT32_MAX)) {
            snprintf(err, errcap, "Invalid value %s for configuration %s: must be an integer >= %" PRId64 "%s",
                     v, k->name, k->min, k->kind == K_INT ? " and <= 2147483647" : "");
            return false;
        }
        return true;
    case K_BOOL:
        if (strcmp(v, "true") && strcmp(v, "false")) {
            snprintf(err, errcap, "Invalid value %s for configuration %s: must be true or false", v,
                     k->name);
            return false;
        }
        return true;
    case K_POLICY:
        if (!parse_policy(v, &a, &b)) {
            snprintf(err, errcap,
                     "Invalid value %s for configuration %s: must be delete, compact or "
                     "compact,delete",
                     v, k->name);
            return false;
        }
        return true;
    case K_TSTYPE:
        if (strcmp(v, "CreateTime") && strcmp(v, "LogAppendTime")) {
            snprintf(err, errcap,
                     "Invalid value %s for configuration %s: must be CreateTime or LogAppendTime",
                     v, k->name);
            return false;
        }
        return true;
    case K_RATIO: {
        char *end;
        errno = 0;
        double d = strtod(v, &end);
        if (errno || *end || !*v || !(d >= 0.0 && d <= 1.0)) {
            snprintf(err, errcap, "Invalid value %s for configuration %s: must be between 0 and 1",
                     v, k->name);
            return false;
        }
        return true;
    }
    case K_COMPRESSION:
        if (parse_codec(v) == CODEC_BAD) {
            snprintf(err, errcap,
                     "Invalid value %s for configuration %s: String must be one of: "
                     "uncompressed, zstd, lz4, snappy, gzip, producer",
                     v, k->name);
            return false;
        }
        return true;
    case K_STRING:
        return true;
    }
    return false;
}

bool topic_config_validate(const char *key, size_t klen, const char *value, size_t vlen, char *err,
                           size_t errcap)
{
    CHECK(errcap > 0);
    err[0] = '\0';
    int i = topic_config_key_index(key, klen);
    if (i < 0) {
        snprintf(err, errcap, "Unknown topic config name: %.*s", (int)(klen > 200 ? 200 : klen),
                 key);
        return false;
    }
    if (!value)
        return true;
    char buf[256];
    if (vlen >= sizeof(buf)) {
        snprintf(err, errcap, "Value of configuration %s is too long", keys[i].name);
        return false;
    }
    memcpy(buf, value, vlen);
    buf[vlen] = '\0';
    if (strlen(buf) != vlen) {
        snprintf(err, errcap, "Value of configuration %s contains a NUL byte", keys[i].name);
        return false;
    }
    return check_value(&keys[i], buf, err, errcap);
}

static void apply(struct topic_config *tc, int i, const char *v)
{
    const char *name = keys[i].name;
    int64_t n = 0;
    if (keys[i].kind == K_LONG || keys[i].kind == K_INT)
        (void)parse_i64(v, &n);
    if (!strcmp(name, "cleanup.policy"))
        (void)parse_policy(v, &tc->cleanup_delete, &tc->cleanup_compact);
    else if (!strcmp(name, "compression.type"))
        tc->compression = parse_codec(v);
    else if (!strcmp(name, "delete.retention.ms"))
        tc->delete_retention_ms = n;
    else if (!strcmp(name, "flush.messages"))
        tc->flush_messages = n;
    else if (!strcmp(name, "flush.ms"))
        tc->flush_ms = n;
    else if (!strcmp(name, "index.interval.bytes"))
        tc->index_interval_bytes = (int32_t)n;
    else if (!strcmp(name, "max.message.bytes"))
        tc->max_message_bytes = (int32_t)n;
    else if (!strcmp(name, "message.timestamp.type"))
        tc->log_append_time = strcmp(v, "LogAppendTime") == 0;
    else if (!strcmp(name, "min.cleanable.dirty.ratio"))
        tc->min_cleanable_dirty_ratio = strtod(v, NULL);
    else if (!strcmp(name, "min.compaction.lag.ms"))
        tc->min_compaction_lag_ms = n;
    else if (!strcmp(name, "min.insync.replicas"))
        tc->min_insync_replicas = (int32_t)n;
    else if (!strcmp(name, "retention.bytes"))
        tc->retention_bytes = n;
    else if (!strcmp(name, "retention.ms"))
        tc->retention_ms = n;
    else if (!strcmp(name, "segment.bytes"))
        tc->segment_bytes = n;
    else if (!strcmp(name, "segment.ms"))
        tc->segment_ms = n;
    else if (!strcmp(name, "confluent.key.schema.validation") ||
             !strcmp(name, "redpanda.key.schema.id.validation"))
        tc->key_schema_validation |= !strcmp(v, "true"); /* Confluent's and Redpanda's names */
    else if (!strcmp(name, "confluent.value.schema.validation") ||
             !strcmp(name, "redpanda.value.schema.id.validation"))
        tc->value_schema_validation |= !strcmp(v, "true");
    /* the remaining keys are accepted for compatibility and have no effect */
}

void topic_config_resolve(struct topic_config *out, const struct broker_config *bc,
                          const struct topic_config_kv *overrides, int n)
{
    memset(out, 0, sizeof(*out));
    out->retention_ms = bc->log_retention_ms;
    out->retention_bytes = bc->log_retention_bytes;
    out->segment_bytes = bc->log_segment_bytes;
    out->segment_ms = bc->log_roll_ms;
    out->max_message_bytes = bc->message_max_bytes;
    (void)parse_policy(bc->log_cleanup_policy, &out->cleanup_delete, &out->cleanup_compact);
    out->log_append_time = strcmp(bc->log_message_timestamp_type, "LogAppendTime") == 0;
    out->min_insync_replicas = bc->min_insync_replicas;
    out->delete_retention_ms = bc->log_cleaner_delete_retention_ms;
    out->min_compaction_lag_ms = bc->log_cleaner_min_compaction_lag_ms;
    out->min_cleanable_dirty_ratio = bc->log_cleaner_min_cleanable_ratio;
    out->index_interval_bytes = bc->log_index_interval_bytes;
    out->flush_messages = bc->log_flush_interval_messages;
    out->flush_ms = bc->log_flush_interval_ms;
    out->compression = parse_codec(bc->compression_type);
    if (out->compression == CODEC_BAD) /* config.c refuses it first */
        out->compression = TOPIC_COMPRESSION_PRODUCER;
    for (int j = 0; j < n; j++) {
        char err[256];
        const char *k = overrides[j].key, *v = overrides[j].value;
        if (!v)
            continue;
        if (!topic_config_validate(k, strlen(k), v, strlen(v), err, sizeof(err))) {
            log_warn("topic_config_ignored", "key=%s reason=\"%s\"", k, err);
            continue;
        }
        apply(out, topic_config_key_index(k, strlen(k)), v);
    }
}

void topic_config_value_text(const struct topic_config *tc, int i, char *buf, size_t cap)
{
    const char *name = keys[i].name;
    if (!strcmp(name, "cleanup.policy"))
        snprintf(buf, cap, "%s", tc->cleanup_compact && tc->cleanup_delete ? "compact,delete"
                                 : tc->cleanup_compact                     ? "compact"
                                                                           : "delete");
    else if (!strcmp(name, "compression.type"))
        snprintf(buf, cap, "%s", codec_text(tc->compression));
    else if (!strcmp(name, "delete.retention.ms"))
        snprintf(buf, cap, "%" PRId64, tc->delete_retention_ms);
    else if (!strcmp(name, "flush.messages"))
        snprintf(buf, cap, "%" PRId64, tc->flush_messages);
    else if (!strcmp(name, "flush.ms"))
        snprintf(buf, cap, "%" PRId64, tc->flush_ms);
    else if (!strcmp(name, "index.interval.bytes"))
        snprintf(buf, cap, "%" PRId32, tc->index_interval_bytes);
    else if (!strcmp(name, "max.message.bytes"))
        snprintf(buf, cap, "%" PRId32, tc->max_message_bytes);
    else if (!strcmp(name, "message.timestamp.type"))
        snprintf(buf, cap, "%s", tc->log_append_time ? "LogAppendTime" : "CreateTime");
    else if (!strcmp(name, "min.cleanable.dirty.ratio"))
        snprintf(buf, cap, "%g", tc->min_cleanable_dirty_ratio);
    else if (!strcmp(name, "min.compaction.lag.ms"))
        snprintf(buf, cap, "%" PRId64, tc->min_compaction_lag_ms);
    else if (!strcmp(name, "min.insync.replicas"))
        snprintf(buf, cap, "%" PRId32, tc->min_insync_replicas);
    else if (!strcmp(name, "retention.bytes"))
        snprintf(buf, cap, "%" PRId64, tc->retention_bytes);
    else if (!strcmp(name, "retention.ms"))
        snprintf(buf, cap, "%" PRId64, tc->retention_ms);
    else if (!strcmp(name, "segment.bytes"))
        snprintf(buf, cap, "%" PRId64, tc->segment_bytes);
    else if (!strcmp(name, "segment.ms"))
        snprintf(buf, cap, "%" PRId64, tc->segment_ms);
    else
        snprintf(buf, cap, "%s", keys[i].default_text ? keys[i].default_text : "");
}

void topic_config_to_plog(const struct topic_config *tc, struct plog_config *out)
{
    out->segment_bytes = tc->segment_bytes;
    out->segment_ms = tc->segment_ms;
    /* compact-only topics are not deleted by time or size (Kafka semantics) */
    out->retention_ms = tc->cleanup_delete ? tc->retention_ms : -1;
    out->retention_bytes = tc->cleanup_delete ? tc->retention_bytes : -1;
    out->index_interval_bytes = tc->index_interval_bytes;
    out->compact = tc->cleanup_compact;
    out->delete_retention_ms = tc->delete_retention_ms;
    out->min_compaction_lag_ms = tc->min_compaction_lag_ms;
    out->min_cleanable_dirty_ratio = tc->min_cleanable_dirty_ratio;
    out->kv = NULL; /* the broker's, set where a log is opened */
    out->kv_read_only = false;
}
