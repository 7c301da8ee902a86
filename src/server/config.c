#include "server/config.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"
#include "base/log.h"
#include "base/mem.h"
#include "broker/topic_config.h"

enum ctype {
    C_INT,      /* int32 field */
    C_LONG,     /* int64 field */
    C_BOOL,     /* bool field */
    C_DOUBLE,   /* double field */
    C_STR,      /* char[] field */
    C_LISTENER, /* host + port fields */
    C_PATH,     /* char[] field, one directory */
    C_POLICY,   /* cleanup policy text */
    C_TSTYPE,   /* CreateTime | LogAppendTime */
    C_LEVEL,    /* log level */
    C_ADMIN,    /* admin_host + admin_port: host:port, or empty to disable */
    C_VOTERS,   /* quorum_voters text + voters[]: id@host:port,... or empty */
    C_CLUSTER,  /* cluster_host + cluster_port: host:port, or empty */
};

struct key {
    const char *name;
    enum ctype type;
    size_t off;       /* field offset in struct broker_config */
    size_t size;      /* field size (strings) */
    const char *dflt; /* default, as text */
    int64_t min, max; /* integer bounds */
    int64_t scale;    /* alias unit: the value is multiplied by this (hours -> ms) */
    int priority;     /* among keys writing the same field, the higher wins */
    const char *doc;
};

#define F(field) offsetof(struct broker_config, field), sizeof(((struct broker_config *)0)->field)
#define LMAX INT64_MAX
#define IMAX INT32_MAX

static const struct key keys[] = {
    {"node.id", C_INT, F(node_id), "1", 0, IMAX, 1, 0, "this broker's id"},
    {"listeners", C_LISTENER, F(listener_host), "PLAINTEXT://127.0.0.1:9092", 0, 0, 1, 0,
     "where clients connect"},
    {"advertised.listeners", C_LISTENER, F(advertised_host), "", 0, 0, 1, 0,
     "address given to clients in Metadata (default: listeners)"},
    {"log.dirs", C_PATH, F(log_dirs), "./data", 0, 0, 1, 0, "data directory (one)"},
    {"log.dir", C_PATH, F(log_dirs), "./data", 0, 0, 1, -1, "alias of log.dirs"},
    {"num.partitions", C_INT, F(num_partitions), "1", 1, 100000, 1, 0,
     "partitions of auto-created topics and CreateTopics with -1"},
    {"default.replication.factor", C_INT, F(default_replication_factor), "1", 1, 32767, 1, 0,
     "replication factor when a client asks for -1"},
    {"auto.create.topics.enable", C_BOOL, F(auto_create_topics), "true", 0, 0, 1, 0,
     "create unknown topics asked for in Metadata"},
    {"delete.topic.enable", C_BOOL, F(delete_topic_enable), "true", 0, 0, 1, 0,
     "allow DeleteTopics"},
    {"log.retention.ms", C_LONG, F(log_retention_ms), "604800000", -1, LMAX, 1, 2,
     "delete closed segments older than this (-1: never)"},
    {"log.retention.minutes", C_LONG, F(log_retention_ms), "10080", -1, LMAX / 60000, 60000, 1,
     "retention in minutes (log.retention.ms wins)"},
    {"log.retention.hours", C_LONG, F(log_retention_ms), "168", -1, LMAX / 3600000, 3600000, 0,
     "retention in hours (log.retention.ms/minutes win)"},
    {"log.retention.bytes", C_LONG, F(log_retention_bytes), "-1", -1, LMAX, 1, 0,
     "per-partition size above which closed segments are deleted (-1: no limit)"},
    {"log.segment.bytes", C_LONG, F(log_segment_bytes), "1073741824", 14, IMAX, 1, 0,
     "roll to a new segment at this size"},
    {"log.roll.ms", C_LONG, F(log_roll_ms), "604800000", 1, LMAX, 1, 1,
     "roll a non-empty segment older than this"},
    {"log.roll.hours", C_LONG, F(log_roll_ms), "168", 1, LMAX / 3600000, 3600000, 0,
     "segment age limit in hours (log.roll.ms wins)"},
    {"log.retention.check.interval.ms", C_LONG, F(log_retention_check_interval_ms), "300000", 1,
     LMAX, 1, 0, "how often retention and segment.ms are applied"},
    {"log.index.interval.bytes", C_INT, F(log_index_interval_bytes), "4096", 0, IMAX, 1, 0,
     "bytes of log between offset index entries"},
    {"log.cleanup.policy", C_POLICY, F(log_cleanup_policy), "delete", 0, 0, 1, 0,
     "delete, compact or compact,delete"},
    {"log.message.timestamp.type", C_TSTYPE, F(log_message_timestamp_type), "CreateTime", 0, 0, 1,
     0, "CreateTime or LogAppendTime"},
    {"message.max.bytes", C_INT, F(message_max_bytes), "1048588", 0, IMAX, 1, 0,
     "largest record batch accepted"},
    {"socket.request.max.bytes", C_INT, F(socket_request_max_bytes), "104857600", 64, IMAX, 1, 0,
     "largest request frame; larger frames close the connection"},
    {"max.connections", C_INT, F(max_connections), "10000", 1, 1000000, 1, 0,
     "client connections at once"},
    {"fetch.max.bytes", C_INT, F(fetch_max_bytes), "57671680", 1024, IMAX, 1, 0,
     "cap on one Fetch response"},
    {"min.insync.replicas", C_INT, F(min_insync_replicas), "1", 1, IMAX, 1, 0,
     "default of the topic setting"},
    {"log.cleaner.delete.retention.ms", C_LONG, F(log_cleaner_delete_retention_ms), "86400000", 0,
     LMAX, 1, 0, "how long tombstones of compacted topics are kept"},
    {"log.cleaner.min.compaction.lag.ms", C_LONG, F(log_cleaner_min_compaction_lag_ms), "0", 0,
     LMAX, 1, 0, "minimum age before a record may be compacted"},
    {"log.cleaner.min.cleanable.ratio", C_DOUBLE, F(log_cleaner_min_cleanable_ratio), "0.5", 0, 1,
     1, 0, "dirty ratio that triggers cleaning"},
    {"log.cleaner.enable", C_BOOL, F(log_cleaner_enable), "true", 0, 0, 1, 0,
     "compact topics with cleanup.policy=compact (__consumer_offsets among them)"},
    {"log.cleaner.backoff.ms", C_LONG, F(log_cleaner_backoff_ms), "15000", 1, LMAX, 1, 0,
     "how often the cleaner looks for logs to clean when idle"},
    {"log.cleaner.threads", C_INT, F(log_cleaner_threads), "1", 1, 64, 1, 0,
     "cleaner threads (logs cleaned at once)"},
    {"log.cleaner.dedupe.buffer.size", C_LONG, F(log_cleaner_dedupe_buffer_size), "134217728",
     65536, LMAX, 1, 0, "memory for the cleaners' key maps, all threads together"},
    {"log.cleaner.io.max.bytes.per.second", C_LONG, F(log_cleaner_io_max_bytes_per_second),
     "9223372036854775807", 1, LMAX, 1, 0, "cleaner read+write rate limit"},
    {"log.flush.interval.messages", C_LONG, F(log_flush_interval_messages),
     "9223372036854775807", 1, LMAX, 1, 0, "fsync after this many acks=0/1 messages"},
    {"log.flush.interval.ms", C_LONG, F(log_flush_interval_ms), "9223372036854775807", 0, LMAX, 1,
     0, "fsync acks=0/1 data at least this often"},
    {"producer.id.expiration.ms", C_LONG, F(producer_id_expiration_ms), "86400000", 1, LMAX, 1,
     0, "forget an idempotent producer's sequence state after this long without a write"},
    {"producer.state.max.producers", C_INT, F(producer_state_max_producers), "1000", 1, 262144,
     1, 0, "idempotent producers tracked per partition (least recently used forgotten first)"},
    {"max.partitions", C_INT, F(max_partitions), "10000", 1, 1000000, 1, 0,
     "cap on partitions across all topics"},
    {"log.level", C_LEVEL, F(log_level), "info", 0, 0, 1, 0, "debug, info, warn or error"},
    {"group.initial.rebalance.delay.ms", C_INT, F(group_initial_rebalance_delay_ms), "3000", 0,
     IMAX, 1, 0, "how long a new group waits for more members before its first rebalance"},
    {"group.min.session.timeout.ms", C_INT, F(group_min_session_timeout_ms), "6000", 1, IMAX, 1,
     0, "smallest session timeout a consumer may ask for"},
    {"group.max.session.timeout.ms", C_INT, F(group_max_session_timeout_ms), "1800000", 1, IMAX,
     1, 0, "largest session timeout a consumer may ask for"},
    {"group.max.size", C_INT, F(group_max_size), "1000", 1, 100000, 1, 0,
     "members of one consumer group"},
    {"group.max.metadata.bytes", C_INT, F(group_max_metadata_bytes), "1048576", 1024, 67108864,
     1, 0, "one member's protocol metadata in JoinGroup, and one assignment in SyncGroup"},
    {"offsets.topic.num.partitions", C_INT, F(offsets_topic_num_partitions), "16", 1, 1000, 1, 0,
     "partitions of __consumer_offsets (fixed once the topic exists)"},
    {"offsets.retention.minutes", C_INT, F(offsets_retention_minutes), "10080", 1, IMAX, 1, 0,
     "committed offsets of an empty group are kept this long"},
    {"offsets.retention.check.interval.ms", C_LONG, F(offsets_retention_check_interval_ms),
     "600000", 1, LMAX, 1, 0, "how often expired offsets are removed"},
    {"offset.metadata.max.bytes", C_INT, F(offset_metadata_max_bytes), "4096", 0, IMAX, 1, 0,
     "metadata string of a committed offset"},
    {"admin.listener", C_ADMIN, F(admin_host), "127.0.0.1:9644", 0, 0, 1, 0,
     "HTTP admin listener (/metrics, /healthz, /v1/topics, /v1/groups); empty: off"},
    {"offsets.topic.replication.factor", C_INT, F(offsets_topic_replication_factor), "3", 1,
     32767, 1, 0, "replicas of __consumer_offsets partitions in cluster mode"},
    {"auto.leader.rebalance.enable", C_BOOL, F(auto_leader_rebalance_enable), "true", 0, 0, 1, 0,
     "cluster mode: hand each partition's leadership back to its preferred replica"},
    {"leader.imbalance.check.interval.seconds", C_INT, F(leader_imbalance_check_interval_s),
     "300", 1, IMAX, 1, 0, "cluster mode: how often preferred leaders are checked"},
    {"controller.quorum.voters", C_VOTERS, F(quorum_voters), "", 0, 0, 1, 0,
     "id@host:port,... inter-broker addresses of the metadata voters; set: cluster mode"},
    {"cluster.listener", C_CLUSTER, F(cluster_host), "", 0, 0, 1, 0,
     "inter-broker host:port (default: the node's voter entry; a single node: 127.0.0.1, any "
     "free port)"},
};

#define NKEYS ((int)ARRAY_LEN(keys))

static const struct key *find_key(const char *name)
{
    for (int i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

int config_parse_listener(const char *s, char *host, size_t hostcap, int *port, char *err,
                          size_t errcap)
{
    const char *p = s;
    const char *sep = strstr(p, "://");
    if (sep) {
        size_t plen = (size_t)(sep - p);
        /* the listener name may be anything Kafka allows (PLAINTEXT, INTERNAL...), but the
         * security protocol is plaintext only for now */
        if (plen == 0) {
            snprintf(err, errcap, "missing listener name before ://");
            return -1;
        }
        if ((plen == 3 && !strncmp(p, "SSL", 3)) || !strncmp(p, "SASL_", 5)) {
            snprintf(err, errcap, "%.*s listeners are not supported yet (PLAINTEXT only)",
                     (int)plen, p);
            return -1;
        }
        p = sep + 3;
    }
    if (strchr(p, ',')) {
        snprintf(err, errcap, "only one listener is supported");
        return -1;
    }
    const char *colon;
    const char *h = p;
    size_t hlen;
    if (*p == '[') {
        const char *close = strchr(p, ']');
        if (!close || close[1] != ':') {
            snprintf(err, errcap, "bad IPv6 address in '%s' (expected [addr]:port)", s);
            return -1;
        }
        h = p + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(p, ':');
        if (!colon) {
            snprintf(err, errcap, "missing :port in '%s'", s);
            return -1;
        }
        hlen = (size_t)(colon - p);
    }
    if (hlen >= hostcap) {
        snprintf(err, errcap, "host name too long in '%s'", s);
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(colon + 1, &end, 10);
    if (errno || *end || colon[1] == '\0' || v < 0 || v > 65535) {
        snprintf(err, errcap, "bad port in '%s' (0-65535)", s);
        return -1;
    }
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    *port = (int)v;
    return 0;
}

/* Parses controller.quorum.voters: "id@host:port" entries separated by commas (spaces around
 * them allowed). Ids unique, ports 1..65535, at most BROKER_VOTERS_MAX entries. */
static int parse_voters(const char *value, struct broker_voter *out, int *n_out, char *err,
                        size_t errcap)
{
    int n = 0;
    const char *p = value;
    while (*p) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, ",");
        while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--;
        char ent[BROKER_HOST_MAX + 32];
        if (len == 0 || len >= sizeof(ent)) {
            snprintf(err, errcap, "%s entry %d", len ? "too long" : "empty", n + 1);
            return -1;
        }
        memcpy(ent, p, len);
        ent[len] = '\0';
        if (n == BROKER_VOTERS_MAX) {
            snprintf(err, errcap, "more than %d voters", BROKER_VOTERS_MAX);
            return -1;
        }
        char *at = strchr(ent, '@');
        if (!at) {
            snprintf(err, errcap, "entry '%s' is not id@host:port", ent);
            return -1;
        }
        *at = '\0';
        char *end;
        errno = 0;
        long id = strtol(ent, &end, 10);
        if (errno || *end || !ent[0] || id < 0 || id > INT32_MAX) {
            snprintf(err, errcap, "bad node id '%s' (0-%d)", ent, INT32_MAX);
            return -1;
        }
        char lerr[200];
        struct broker_voter *v = &out[n];
        if (config_parse_listener(at + 1, v->host, sizeof(v->host), &v->port, lerr,
                                  sizeof(lerr)) != 0 || strstr(at + 1, "://")) {
            snprintf(err, errcap, "entry %ld: %s", id, strstr(at + 1, "://") ?
                     "expected host:port" : lerr);
            return -1;
        }
        if (v->port == 0 || !v->host[0]) {
            snprintf(err, errcap, "entry %ld: needs a host and a port from 1 to 65535", id);
            return -1;
        }
        v->id = (int32_t)id;
        for (int i = 0; i < n; i++)
            if (out[i].id == v->id) {
                snprintf(err, errcap, "node id %ld appears twice", id);
                return -1;
            }
        n++;
        p += strcspn(p, ",");
        if (*p == ',') {
            p++;
            if (!*p) {
                snprintf(err, errcap, "empty entry %d", n + 1);
                return -1;
            }
        }
    }
    *n_out = n;
    return 0;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

struct state {
    struct broker_config *cfg;
    bool set[64];     /* key explicitly given */
};

/* Applies name=value. Returns 0 or -1 with err. */
static int apply(struct state *st, const char *name, const char *value, char *err, size_t errcap)
{
    const struct key *k = find_key(name);
    if (!k) {
        snprintf(err, errcap, "unknown config key '%s'", name);
        return -1;
    }
    char *field = (char *)st->cfg + k->off;
    int64_t iv = 0;
    char *end;
    switch (k->type) {
    case C_INT:
    case C_LONG:
        errno = 0;
        iv = strtoll(value, &end, 10);
        if (errno || *end || !*value || iv < k->min || iv > k->max) {
            snprintf(err, errcap, "bad value '%s' for %s: expected an integer from %" PRId64
                     " to %" PRId64, value, name, k->min, k->max);
            return -1;
        }
        if (k->scale > 1 && iv > 0)
            iv *= k->scale;
        /* aliases (hours/minutes/ms) write the same field: the most precise key wins */
        for (int i = 0; i < NKEYS; i++) {
            if (keys[i].off == k->off && st->set[i] && keys[i].priority > k->priority)
                return 0;
        }
        if (k->type == C_INT)
            *(int32_t *)field = (int32_t)iv;
        else
            *(int64_t *)field = iv;
        return 0;
    case C_BOOL:
        if (strcmp(value, "true") == 0)
            *(bool *)field = true;
        else if (strcmp(value, "false") == 0)
            *(bool *)field = false;
        else {
            snprintf(err, errcap, "bad value '%s' for %s: expected true or false", value, name);
            return -1;
        }
        return 0;
    case C_DOUBLE: {
        errno = 0;
        double d = strtod(value, &end);
        if (errno || *end || !*value || !(d >= (double)k->min && d <= (double)k->max)) {
            snprintf(err, errcap, "bad value '%s' for %s: expected a number from %" PRId64
                     " to %" PRId64, value, name, k->min, k->max);
            return -1;
        }
        *(double *)field = d;
        return 0;
    }
    case C_STR:
    case C_PATH:
        if (strlen(value) >= k->size) {
            snprintf(err, errcap, "value of %s is too long", name);
            return -1;
        }
        if (k->type == C_PATH && (!*value || strchr(value, ','))) {
            snprintf(err, errcap, "bad value '%s' for %s: expected one directory", value, name);
            return -1;
        }
        for (int i = 0; i < NKEYS; i++) {
            if (keys[i].off == k->off && st->set[i] && keys[i].priority > k->priority)
                return 0;
        }
        strcpy(field, value);
        return 0;
    case C_POLICY:
    case C_TSTYPE: {
        const char *tkey = k->type == C_POLICY ? "cleanup.policy" : "message.timestamp.type";
        char terr[256];
        if (!topic_config_validate(tkey, strlen(tkey), value, strlen(value), terr, sizeof(terr))) {
            snprintf(err, errcap, "bad value '%s' for %s: %s", value, name, terr);
            return -1;
        }
        if (strlen(value) >= k->size) {
            snprintf(err, errcap, "value of %s is too long", name);
            return -1;
        }
        strcpy(field, value);
        return 0;
    }
    case C_LEVEL:
        if (log_level_parse(value) < 0) {
            snprintf(err, errcap, "bad value '%s' for %s: expected debug, info, warn or error",
                     value, name);
            return -1;
        }
        strcpy(field, value);
        return 0;
    case C_ADMIN: {
        char lerr[200];
        if (!*value) {
            st->cfg->admin_host[0] = '\0';
            st->cfg->admin_port = -1;
            return 0;
        }
        if (config_parse_listener(value, st->cfg->admin_host, sizeof(st->cfg->admin_host),
                                  &st->cfg->admin_port, lerr, sizeof(lerr)) != 0) {
            snprintf(err, errcap, "bad value '%s' for %s: %s (or empty to disable)", value, name,
                     lerr);
            return -1;
        }
        return 0;
    }
    case C_VOTERS: {
        char verr[400];
        if (strlen(value) >= k->size) {
            snprintf(err, errcap, "value of %s is too long", name);
            return -1;
        }
        struct broker_voter v[BROKER_VOTERS_MAX];
        int n = 0;
        if (parse_voters(value, v, &n, verr, sizeof(verr)) != 0) {
            snprintf(err, errcap, "bad value '%s' for %s: %s", value, name, verr);
            return -1;
        }
        strcpy(field, value);
        memcpy(st->cfg->voters, v, sizeof(v));
        st->cfg->n_voters = n;
        return 0;
    }
    case C_CLUSTER: {
        char lerr[200];
        if (!*value) {
            st->cfg->cluster_host[0] = '\0';
            st->cfg->cluster_port = -1;
            return 0;
        }
        if (strstr(value, "://") ||
            config_parse_listener(value, st->cfg->cluster_host, sizeof(st->cfg->cluster_host),
                                  &st->cfg->cluster_port, lerr, sizeof(lerr)) != 0) {
            st->cfg->cluster_host[0] = '\0';
            st->cfg->cluster_port = -1;
            snprintf(err, errcap,
                     "bad value '%s' for %s: expected host:port (port 0-65535; 0: any free port)",
                     value, name);
            return -1;
        }
        return 0;
    }
    case C_LISTENER: {
        char host[BROKER_HOST_MAX];
        int port;
        char lerr[200];
        if (!*value) { /* advertised.listeners empty: derived later */
            st->cfg->advertised_host[0] = '\0';
            st->cfg->advertised_port = -1;
            return 0;
        }
        if (config_parse_listener(value, host, sizeof(host), &port, lerr, sizeof(lerr)) != 0) {
            snprintf(err, errcap, "bad value '%s' for %s: %s", value, name, lerr);
            return -1;
        }
        if (k->off == offsetof(struct broker_config, listener_host)) {
            strcpy(st->cfg->listener_host, host);
            st->cfg->listener_port = port;
        } else {
            if (port == 0) {
                snprintf(err, errcap, "bad value '%s' for %s: advertised port cannot be 0", value,
                         name);
                return -1;
            }
            strcpy(st->cfg->advertised_host, host);
            st->cfg->advertised_port = port;
        }
        return 0;
    }
    }
    return -1;
}

static int apply_line(struct state *st, char *line, const char *where, char *err, size_t errcap)
{
    char *s = trim(line);
    if (!*s || *s == '#' || *s == '!')
        return 0;
    size_t klen = strcspn(s, "=: \t");
    char *v = s + klen;
    if (*v == '\0') {
        snprintf(err, errcap, "%s: expected key=value, got '%s'", where, s);
        return -1;
    }
    *v++ = '\0';
    v = trim(v);
    if (*v == '=' || *v == ':')
        v = trim(v + 1);
    char kerr[512];
    if (apply(st, s, v, kerr, sizeof(kerr)) != 0) {
        snprintf(err, errcap, "%s: %s", where, kerr);
        return -1;
    }
    const struct key *k = find_key(s);
    st->set[k - keys] = true;
    return 0;
}

static void describe(struct broker_config *cfg, const struct state *st)
{
    cfg->entries = mem_calloc((size_t)NKEYS, sizeof(*cfg->entries));
    cfg->n_entries = 0;
    for (int i = 0; i < NKEYS; i++) {
        const struct key *k = &keys[i];
        if (k->scale > 1 || k->priority < 0)
            continue; /* aliases are reported through the key they set */
        const char *field = (const char *)cfg + k->off;
        char buf[BROKER_PATH_MAX + 64];
        switch (k->type) {
        case C_INT:
            snprintf(buf, sizeof(buf), "%" PRId32, *(const int32_t *)field);
            break;
        case C_LONG:
            snprintf(buf, sizeof(buf), "%" PRId64, *(const int64_t *)field);
            break;
        case C_BOOL:
            snprintf(buf, sizeof(buf), "%s", *(const bool *)field ? "true" : "false");
            break;
        case C_DOUBLE:
            snprintf(buf, sizeof(buf), "%g", *(const double *)field);
            break;
        case C_LISTENER:
            if (k->off == offsetof(struct broker_config, listener_host))
                snprintf(buf, sizeof(buf), "PLAINTEXT://%s:%d", cfg->listener_host,
                         cfg->listener_port);
            else
                snprintf(buf, sizeof(buf), "PLAINTEXT://%s:%d", cfg->advertised_host,
                         cfg->advertised_port);
            break;
        case C_CLUSTER:
            if (cfg->cluster_port < 0)
                buf[0] = '\0';
            else if (strchr(cfg->cluster_host, ':'))
                snprintf(buf, sizeof(buf), "[%s]:%d", cfg->cluster_host, cfg->cluster_port);
            else
                snprintf(buf, sizeof(buf), "%s:%d", cfg->cluster_host, cfg->cluster_port);
            break;
        case C_ADMIN:
            if (cfg->admin_port < 0)
                buf[0] = '\0';
            else if (strchr(cfg->admin_host, ':'))
                snprintf(buf, sizeof(buf), "[%s]:%d", cfg->admin_host, cfg->admin_port);
            else
                snprintf(buf, sizeof(buf), "%s:%d", cfg->admin_host, cfg->admin_port);
            break;
        default:
            snprintf(buf, sizeof(buf), "%s", field);
            break;
        }
        bool set = st->set[i];
        for (int j = 0; j < NKEYS; j++)
            if (keys[j].off == k->off && st->set[j])
                set = true;
        struct broker_config_entry *e = &cfg->entries[cfg->n_entries++];
        e->name = k->name;
        e->value = mem_strdup(buf);
        e->is_default = !set;
        e->sensitive = false;
    }
}

/* The quorum's cross-key rules, once every key is read: a voter's cluster address is its own
 * voter entry, unless cluster.listener is also given: it then listens there, and its voter entry
 * is only how the peers reach it (through a proxy, as the fault tests do); a broker that is not
 * a voter needs cluster.listener, at a fixed port others can dial. Without voters the node is
 * standalone: cluster.listener if given, else 127.0.0.1 on any free port. */
static int cluster_settle(struct broker_config *cfg, char *err, size_t errcap)
{
    bool listener_set = cfg->cluster_port >= 0;
    if (cfg->n_voters == 0) {
        if (!listener_set) {
            snprintf(cfg->cluster_host, sizeof(cfg->cluster_host), "127.0.0.1");
            cfg->cluster_port = 0;
        }
        return 0;
    }
    for (int i = 0; i < cfg->n_voters; i++) {
        const struct broker_voter *v = &cfg->voters[i];
        if (v->id != cfg->node_id)
            continue;
        if (listener_set)
            return 0; /* listens there; peers reach it through its voter entry (a proxy, NAT) */
        snprintf(cfg->cluster_host, sizeof(cfg->cluster_host), "%s", v->host);
        cfg->cluster_port = v->port;
        return 0;
    }
    if (!listener_set || cfg->cluster_port == 0) {
        snprintf(err, errcap, "node.id=%d is not in controller.quorum.voters: set "
                 "cluster.listener (its inter-broker host:port, a fixed port the voters can "
                 "dial)", cfg->node_id);
        return -1;
    }
    return 0;
}

int config_load(struct broker_config *cfg, const char *file, char *const *sets, int nsets,
                char *err, size_t errcap)
{
    static_assert(ARRAY_LEN(keys) <= 64, "state arrays hold 64 keys");
    memset(cfg, 0, sizeof(*cfg));
    struct state st = {.cfg = cfg};
    for (int i = 0; i < NKEYS; i++) {
        if (keys[i].scale > 1 || keys[i].priority < 0)
            continue; /* defaults come from the primary key */
        char kerr[512];
        CHECK(apply(&st, keys[i].name, keys[i].dflt, kerr, sizeof(kerr)) == 0);
    }
    cfg->advertised_port = -1;

    if (file) {
        FILE *f = fopen(file, "r");
        if (!f) {
            snprintf(err, errcap, "cannot read config file %s: %s", file, strerror(errno));
            return -1;
        }
        char line[8192];
        int lineno = 0;
        while (fgets(line, sizeof(line), f)) {
            lineno++;
            char where[BROKER_PATH_MAX + 32];
            snprintf(where, sizeof(where), "%s:%d", file, lineno);
            if (strlen(line) == sizeof(line) - 1 && line[sizeof(line) - 2] != '\n') {
                snprintf(err, errcap, "%s: line too long", where);
                fclose(f);
                return -1;
            }
            if (apply_line(&st, line, where, err, errcap) != 0) {
                fclose(f);
                return -1;
            }
        }
        fclose(f);
    }
    for (int i = 0; i < nsets; i++) {
        char *dup = mem_strdup(sets[i]);
        char where[64];
        snprintf(where, sizeof(where), "--set #%d", i + 1);
        if (!strchr(dup, '=')) {
            snprintf(err, errcap, "%s: expected key=value, got '%s'", where, sets[i]);
            mem_free(dup);
            return -1;
        }
        int rc = apply_line(&st, dup, where, err, errcap);
        mem_free(dup);
        if (rc != 0)
            return -1;
    }
    if (cfg->advertised_port < 0) {
        /* advertise what clients can reach: a wildcard bind advertises loopback */
        const char *h = cfg->listener_host;
        if (!*h || !strcmp(h, "0.0.0.0") || !strcmp(h, "::"))
            h = "127.0.0.1";
        snprintf(cfg->advertised_host, sizeof(cfg->advertised_host), "%s", h);
        cfg->advertised_port = cfg->listener_port; /* 0: filled in once bound */
    }
    if (cluster_settle(cfg, err, errcap) != 0)
        return -1;
    if (cfg->default_replication_factor > 1 && cfg->n_voters == 0)
        log_warn("config_replication_factor", "default.replication.factor=%d but this node "
                 "starts alone: topics created with -1 fail until enough brokers join",
                 cfg->default_replication_factor);
    describe(cfg, &st);
    return 0;
}

void config_free(struct broker_config *cfg)
{
    for (int i = 0; i < cfg->n_entries; i++)
        mem_free(cfg->entries[i].value);
    mem_free(cfg->entries);
    cfg->entries = NULL;
    cfg->n_entries = 0;
}

void config_print_keys(void)
{
    for (int i = 0; i < NKEYS; i++)
        printf("  %-36s %-28s %s\n", keys[i].name, keys[i].dflt[0] ? keys[i].dflt : "(listeners)",
               keys[i].doc);
}
