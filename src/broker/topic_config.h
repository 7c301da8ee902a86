/* Topic-level configuration: the keys a topic may override (Kafka's names), their validation,
 * and the effective values (override, else the broker-wide default).
 *
 * Overrides are kept as strings (as CreateTopics/AlterConfigs send them and the catalog stores
 * them); topic_config_resolve() turns them into typed effective values. */
#ifndef SP_BROKER_TOPIC_CONFIG_H
#define SP_BROKER_TOPIC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct broker_config;
struct plog_config;

/* Effective configuration of one topic. */
struct topic_config {
    int64_t retention_ms;              /* retention.ms, -1 = forever */
    int64_t retention_bytes;           /* retention.bytes, -1 = unlimited */
    int64_t segment_bytes;             /* segment.bytes */
    int64_t segment_ms;                /* segment.ms */
    int32_t max_message_bytes;         /* max.message.bytes: largest batch accepted */
    bool cleanup_delete;               /* cleanup.policy contains delete */
    bool cleanup_compact;              /* cleanup.policy contains compact */
    bool log_append_time;              /* message.timestamp.type=LogAppendTime */
    int32_t min_insync_replicas;       /* min.insync.replicas */
    int64_t delete_retention_ms;       /* delete.retention.ms */
    int64_t min_compaction_lag_ms;     /* min.compaction.lag.ms */
    double min_cleanable_dirty_ratio;  /* min.cleanable.dirty.ratio */
    int32_t index_interval_bytes;      /* index.interval.bytes */
    int64_t flush_messages;            /* flush.messages */
    int64_t flush_ms;                  /* flush.ms */
    int compression;                   /* compression.type: KCOMPRESSION_* batches are stored
                                        * in, TOPIC_COMPRESSION_PRODUCER as they come */
    bool key_schema_validation;        /* confluent.key.schema.validation (or Redpanda's
                                          redpanda.key.schema.id.validation) */
    bool value_schema_validation;      /* confluent.value.schema.validation (or Redpanda's) */
};

#define TOPIC_COMPRESSION_PRODUCER (-1)

/* One override as given by a client. */
struct topic_config_kv {
    const char *key;
    const char *value;
};

/* Number of known topic config keys, and the i-th key's name (for DescribeConfigs). */
int topic_config_key_count(void);
const char *topic_config_key_name(int i);
/* The broker config key whose value is the default of topic key i ("log.retention.ms" for
 * "retention.ms"), or NULL when the default is fixed. */
const char *topic_config_broker_key(int i);
/* The fixed default of key i when it has no broker key ("" if none). */
const char *topic_config_default_text(int i);
/* Index of a key, or -1 if unknown. */
int topic_config_key_index(const char *key, size_t len);
/* Whether key i holds a comma-separated list (Kafka's LIST type: cleanup.policy and the
 * replication throttle lists), the keys IncrementalAlterConfigs may APPEND to or SUBTRACT
 * from. */
bool topic_config_is_list(int i);
/* Key i's type as DescribeConfigs v3+ reports it (KAFKA_CONFIG_TYPE_* of kafka/msg.h). */
int8_t topic_config_type(int i);

/* Checks one override. Returns true if valid; otherwise writes a message naming the key and the
 * problem into err (always NUL-terminated). value NULL means "reset to default" and is valid
 * for every known key. */
bool topic_config_validate(const char *key, size_t klen, const char *value, size_t vlen, char *err,
                           size_t errcap);

/* Effective config: broker defaults, then the overrides (which must have been validated; an
 * invalid one is ignored with a log line). */
void topic_config_resolve(struct topic_config *out, const struct broker_config *bc,
                          const struct topic_config_kv *overrides, int n);

/* The effective value of key i as text (for DescribeConfigs) into buf. */
void topic_config_value_text(const struct topic_config *tc, int i, char *buf, size_t cap);

/* Storage parameters derived from the effective config. */
void topic_config_to_plog(const struct topic_config *tc, struct plog_config *out);

#endif
