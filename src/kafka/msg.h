/* Kafka request and response bodies: plain structs, and their codecs.
 *
 * Decoders: kmsg_decode_<api>(r, version, arena, out) fill *out from the body that follows the
 * request header. Strings, bytes and record sets are slices into the request buffer (no copy);
 * arrays are allocated from the arena. They return 0, or -ERR_CORRUPT when the body is truncated
 * or has an impossible length/count (the caller answers INVALID_REQUEST or closes). Fields absent
 * from a version are left at the defaults given beside them. Array counts are -1 for a null
 * array (where the schema allows one) and 0 for empty. A null string or array where the schema
 * forbids one is -ERR_CORRUPT (as in Kafka's own parsers), so non-nullable kstr fields always
 * have len >= 0. A version outside the range of kafka/api.h gives -ERR_UNSUPPORTED. On success
 * the reader stands just after the body: bytes left over are the caller's to judge.
 *
 * Encoders: kmsg_encode_<api>(w, version, resp) append the response body (not the response
 * header) in the layout of that version; fields a version lacks are skipped. The version must be
 * in the range of kafka/api.h (CHECKed); a null in a non-nullable string or array is a caller
 * bug (DCHECKed).
 *
 * Field names follow Kafka's JSON message definitions (clients/src/main/resources/common/
 * message/<Name>.json) in snake_case. */
#ifndef SP_KAFKA_MSG_H
#define SP_KAFKA_MSG_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "kafka/wire.h"

/* ---- headers ---- */

struct kreq_stats;

struct kreq_header {
    int16_t api_key;
    int16_t api_version;
    int32_t correlation_id;
    struct kstr client_id; /* may be null */
    bool flexible;         /* header v2 was used (tagged fields follow client_id) */
    /* Not on the wire: set by the receiver and carried by every copy of the header, so that a
     * response completed later is still accounted to its request (broker/metrics.h). */
    int64_t recv_ns;          /* monotonic time the frame arrived; 0: not measured */
    struct kreq_stats *stats; /* where the response is counted; NULL: nowhere */
};

/* Decodes a request header. The flexible form (v2) is used when (api_key, api_version) is a
 * flexible version we implement; ApiVersions requests above our range are read as v1 (KIP-511:
 * the body is then ignored), and so are requests for keys we do not implement. client_id keeps
 * its int16 length in both forms. Returns 0 or -ERR_CORRUPT. */
int kmsg_decode_header(struct kreader *r, struct kreq_header *h);

/* Response header v0 (correlation id) or v1 (plus empty tagged fields). ApiVersions always uses
 * v0, whatever the request version. */
void kmsg_encode_resp_header(struct kwriter *w, const struct kreq_header *h);

/* ---- ApiVersions (18) ---- */

struct api_versions_req {
    struct kstr client_software_name;    /* v3+; null before */
    struct kstr client_software_version; /* v3+; null before */
};

struct api_versions_key {
    int16_t api_key;
    int16_t min_version;
    int16_t max_version;
};

struct api_versions_resp {
    int16_t error_code;
    struct api_versions_key *keys;
    int32_t n_keys;
    int32_t throttle_time_ms; /* v1+ */
};

int kmsg_decode_api_versions(struct kreader *r, int16_t v, struct arena *a,
                             struct api_versions_req *out);
void kmsg_encode_api_versions(struct kwriter *w, int16_t v, const struct api_versions_resp *resp);

/* ---- Metadata (3) ---- */

struct metadata_req {
    struct kstr *topics;              /* names; null (len -1) from v10 when asked for by id */
    struct kuuid *topic_ids;          /* v10+, one per topic (all zero: by name); NULL before */
    int32_t n_topics;                 /* -1 = all topics (v1+ null; v0 empty, reported as -1) */
    bool allow_auto_topic_creation;   /* v4+; default true */
    bool include_cluster_authorized_operations; /* v8+ */
    bool include_topic_authorized_operations;   /* v8+ */
};

struct metadata_broker {
    int32_t node_id;
    struct kstr host;
    int32_t port;
    struct kstr rack; /* v1+, nullable */
};

struct metadata_partition {
    int16_t error_code;
    int32_t partition_index;
    int32_t leader_id;
    int32_t leader_epoch; /* v7+ */
    int32_t *replica_nodes;
    int32_t n_replica_nodes;
    int32_t *isr_nodes;
    int32_t n_isr_nodes;
    int32_t *offline_replicas; /* v5+ */
    int32_t n_offline_replicas;
};

struct metadata_topic {
    int16_t error_code;
    struct kstr name;
    struct kuuid topic_id; /* v10+ */
    bool is_internal;      /* v1+ */
    struct metadata_partition *partitions;
    int32_t n_partitions;
    int32_t topic_authorized_operations; /* v8+; -2147483648 = not requested */
};

struct metadata_resp {
    int32_t throttle_time_ms; /* v3+ */
    struct metadata_broker *brokers;
    int32_t n_brokers;
    struct kstr cluster_id; /* v2+, nullable */
    int32_t controller_id;  /* v1+ */
    struct metadata_topic *topics;
    int32_t n_topics;
    int32_t cluster_authorized_operations; /* v8+ */
};

int kmsg_decode_metadata(struct kreader *r, int16_t v, struct arena *a, struct metadata_req *out);
void kmsg_encode_metadata(struct kwriter *w, int16_t v, const struct metadata_resp *resp);

/* ---- Produce (0) ---- */

struct produce_req_partition {
    int32_t index;
    struct kbytes records; /* the record batch bytes as sent; len -1 = null */
};

struct produce_req_topic {
    struct kstr name;
    struct produce_req_partition *partitions;
    int32_t n_partitions;
};

struct produce_req {
    struct kstr transactional_id; /* v3+, nullable; null before */
    int16_t acks;
    int32_t timeout_ms;
    struct produce_req_topic *topics;
    int32_t n_topics;
};

struct produce_record_error {
    int32_t batch_index;
    struct kstr batch_index_error_message; /* nullable */
};

struct produce_resp_partition {
    int32_t index;
    int16_t error_code;
    int64_t base_offset;
    int64_t log_append_time_ms; /* v2+; -1 unless LogAppendTime */
    int64_t log_start_offset;   /* v5+ */
    struct produce_record_error *record_errors; /* v8+ */
    int32_t n_record_errors;
    struct kstr error_message; /* v8+, nullable */
};

struct produce_resp_topic {
    struct kstr name;
    struct produce_resp_partition *partitions;
    int32_t n_partitions;
};

struct produce_resp {
    struct produce_resp_topic *topics;
    int32_t n_topics;
    int32_t throttle_time_ms; /* v1+ */
};

int kmsg_decode_produce(struct kreader *r, int16_t v, struct arena *a, struct produce_req *out);
void kmsg_encode_produce(struct kwriter *w, int16_t v, const struct produce_resp *resp);

/* ---- Fetch (1) ---- */

struct fetch_req_partition {
    int32_t partition;
    int32_t current_leader_epoch; /* v9+; -1 */
    int64_t fetch_offset;
    int32_t last_fetched_epoch; /* v12+; -1 */
    int64_t log_start_offset;   /* v5+; -1 */
    int32_t partition_max_bytes;
};

/* From v13 topics are named by id: the decoder leaves topic empty ("") for the broker to fill
 * in from topic_id. */
struct fetch_req_topic {
    struct kstr topic;     /* v0-12 */
    struct kuuid topic_id; /* v13+ */
    struct fetch_req_partition *partitions;
    int32_t n_partitions;
};

struct fetch_req_forgotten {
    struct kstr topic;     /* v7-12; "" from v13 */
    struct kuuid topic_id; /* v13+ */
    int32_t *partitions;
    int32_t n_partitions;
};

struct fetch_req {
    int32_t replica_id;
    int32_t max_wait_ms;
    int32_t min_bytes;
    int32_t max_bytes;      /* v3+; default INT32_MAX */
    int8_t isolation_level; /* v4+; 0 read_uncommitted, 1 read_committed */
    int32_t session_id;     /* v7+; 0 */
    int32_t session_epoch;  /* v7+; -1 */
    struct fetch_req_topic *topics;
    int32_t n_topics;
    struct fetch_req_forgotten *forgotten; /* v7+ */
    int32_t n_forgotten;
    struct kstr rack_id; /* v11+; "" */
};

struct fetch_aborted_txn {
    int64_t producer_id;
    int64_t first_offset;
};

/* The records of one partition are written by a callback rather than held in the struct, so
 * they can be file ranges (sendfile) instead of bytes: the encoder writes the length prefix
 * (records_len; -1 writes null) and then calls write_records(w, data). */
struct fetch_resp_partition {
    int32_t partition_index;
    int16_t error_code;
    int64_t high_watermark;
    int64_t last_stable_offset; /* v4+ */
    int64_t log_start_offset;   /* v5+ */
    struct fetch_aborted_txn *aborted; /* v4+; n_aborted -1 = null */
    int32_t n_aborted;
    int32_t preferred_read_replica; /* v11+; -1 */
    int32_t records_len;
    void (*write_records)(struct kwriter *w, void *data); /* appends exactly records_len bytes */
    void *records_data;
};

struct fetch_resp_topic {
    struct kstr topic;     /* v0-12 */
    struct kuuid topic_id; /* v13+ */
    struct fetch_resp_partition *partitions;
    int32_t n_partitions;
};

struct fetch_resp {
    int32_t throttle_time_ms; /* v1+ */
    int16_t error_code;       /* v7+ */
    int32_t session_id;       /* v7+ */
    struct fetch_resp_topic *topics;
    int32_t n_topics;
};

int kmsg_decode_fetch(struct kreader *r, int16_t v, struct arena *a, struct fetch_req *out);
void kmsg_encode_fetch(struct kwriter *w, int16_t v, const struct fetch_resp *resp);

/* ---- ListOffsets (2) ---- */

#define KAFKA_OFFSET_LATEST (-1)
#define KAFKA_OFFSET_EARLIEST (-2)
#define KAFKA_OFFSET_MAX_TIMESTAMP (-3)

struct list_offsets_req_partition {
    int32_t partition_index;
    int32_t current_leader_epoch; /* v4+; -1 */
    int64_t timestamp;            /* -1 latest, -2 earliest, else a timestamp in ms */
};

struct list_offsets_req_topic {
    struct kstr name;
    struct list_offsets_req_partition *partitions;
    int32_t n_partitions;
};

struct list_offsets_req {
    int32_t replica_id;
    int8_t isolation_level; /* v2+ */
    struct list_offsets_req_topic *topics;
    int32_t n_topics;
};

struct list_offsets_resp_partition {
    int32_t partition_index;
    int16_t error_code;
    int64_t timestamp; /* v1+ */
    int64_t offset;    /* v1+ */
    int32_t leader_epoch; /* v4+ */
};

struct list_offsets_resp_topic {
    struct kstr name;
    struct list_offsets_resp_partition *partitions;
    int32_t n_partitions;
};

struct list_offsets_resp {
    int32_t throttle_time_ms; /* v2+ */
    struct list_offsets_resp_topic *topics;
    int32_t n_topics;
};

int kmsg_decode_list_offsets(struct kreader *r, int16_t v, struct arena *a,
                             struct list_offsets_req *out);
void kmsg_encode_list_offsets(struct kwriter *w, int16_t v, const struct list_offsets_resp *resp);

/* ---- CreateTopics (19) ---- */

struct config_entry {
    struct kstr name;
    struct kstr value; /* nullable */
};

struct create_topics_assignment {
    int32_t partition_index;
    int32_t *broker_ids;
    int32_t n_broker_ids;
};

struct create_topics_req_topic {
    struct kstr name;
    int32_t num_partitions;     /* -1 = broker default */
    int16_t replication_factor; /* -1 = broker default */
    struct create_topics_assignment *assignments;
    int32_t n_assignments;
    struct config_entry *configs;
    int32_t n_configs;
};

struct create_topics_req {
    struct create_topics_req_topic *topics;
    int32_t n_topics;
    int32_t timeout_ms;
    bool validate_only; /* v1+ */
};

struct create_topics_resp_config {
    struct kstr name;
    struct kstr value; /* nullable */
    bool read_only;
    int8_t config_source;
    bool is_sensitive;
};

struct create_topics_resp_topic {
    struct kstr name;
    struct kuuid topic_id; /* v7+ */
    int16_t error_code;
    struct kstr error_message;                 /* v1+, nullable */
    int32_t num_partitions;                    /* v5+; -1 */
    int16_t replication_factor;                /* v5+; -1 */
    struct create_topics_resp_config *configs; /* v5+; n_configs -1 = null */
    int32_t n_configs;
};

struct create_topics_resp {
    int32_t throttle_time_ms; /* v2+ */
    struct create_topics_resp_topic *topics;
    int32_t n_topics;
};

int kmsg_decode_create_topics(struct kreader *r, int16_t v, struct arena *a,
                              struct create_topics_req *out);
void kmsg_encode_create_topics(struct kwriter *w, int16_t v, const struct create_topics_resp *resp);

/* ---- DeleteTopics (20); v4 is flexible ---- */

/* v6 names each topic by name or by id (Topics); earlier versions by name (TopicNames). Both
 * are reported as topic_names, with topic_ids beside them from v6. */
struct delete_topics_req {
    struct kstr *topic_names; /* null (len -1) from v6 when named by id */
    struct kuuid *topic_ids;  /* v6+, one per topic (all zero: by name); NULL before */
    int32_t n_topic_names;
    int32_t timeout_ms;
};

struct delete_topics_resp_topic {
    struct kstr name;      /* nullable from v6 */
    struct kuuid topic_id; /* v6+ */
    int16_t error_code;
    struct kstr error_message; /* v5+, nullable */
};

struct delete_topics_resp {
    int32_t throttle_time_ms; /* v1+ */
    struct delete_topics_resp_topic *responses;
    int32_t n_responses;
};

int kmsg_decode_delete_topics(struct kreader *r, int16_t v, struct arena *a,
                              struct delete_topics_req *out);
void kmsg_encode_delete_topics(struct kwriter *w, int16_t v, const struct delete_topics_resp *resp);

/* ---- CreatePartitions (37) ---- */

struct create_partitions_assignment {
    int32_t *broker_ids;
    int32_t n_broker_ids;
};

struct create_partitions_req_topic {
    struct kstr name;
    int32_t count; /* new total partition count */
    struct create_partitions_assignment *assignments; /* nullable: n_assignments -1 */
    int32_t n_assignments;
};

struct create_partitions_req {
    struct create_partitions_req_topic *topics;
    int32_t n_topics;
    int32_t timeout_ms;
    bool validate_only;
};

struct create_partitions_resp_result {
    struct kstr name;
    int16_t error_code;
    struct kstr error_message; /* nullable */
};

struct create_partitions_resp {
    int32_t throttle_time_ms;
    struct create_partitions_resp_result *results;
    int32_t n_results;
};

int kmsg_decode_create_partitions(struct kreader *r, int16_t v, struct arena *a,
                                  struct create_partitions_req *out);
void kmsg_encode_create_partitions(struct kwriter *w, int16_t v,
                                   const struct create_partitions_resp *resp);

/* ---- DescribeConfigs (32) ---- */

#define KAFKA_RESOURCE_TOPIC 2
#define KAFKA_RESOURCE_BROKER 4

#define KAFKA_CONFIG_SOURCE_UNKNOWN 0
#define KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC 1
#define KAFKA_CONFIG_SOURCE_STATIC_BROKER 4
#define KAFKA_CONFIG_SOURCE_DEFAULT 5

struct describe_configs_req_resource {
    int8_t resource_type;
    struct kstr resource_name;
    struct kstr *configuration_keys; /* nullable: n -1 = all */
    int32_t n_configuration_keys;
};

struct describe_configs_req {
    struct describe_configs_req_resource *resources;
    int32_t n_resources;
    bool include_synonyms;      /* v1+ */
    bool include_documentation; /* v3+ */
};

/* ConfigType of DescribeConfigs v3+ (Kafka's ConfigDef.Type) */
#define KAFKA_CONFIG_TYPE_UNKNOWN 0
#define KAFKA_CONFIG_TYPE_BOOLEAN 1
#define KAFKA_CONFIG_TYPE_STRING 2
#define KAFKA_CONFIG_TYPE_INT 3
#define KAFKA_CONFIG_TYPE_LONG 5
#define KAFKA_CONFIG_TYPE_DOUBLE 6
#define KAFKA_CONFIG_TYPE_LIST 7

struct describe_configs_synonym {
    struct kstr name;
    struct kstr value; /* nullable */
    int8_t source;
};

struct describe_configs_entry {
    struct kstr name;
    struct kstr value; /* nullable */
    bool read_only;
    bool is_default; /* v0 only */
    int8_t config_source; /* v1+ */
    bool is_sensitive;
    struct describe_configs_synonym *synonyms; /* v1+ */
    int32_t n_synonyms;
    int8_t config_type;        /* v3+; KAFKA_CONFIG_TYPE_* */
    struct kstr documentation; /* v3+, nullable */
};

struct describe_configs_result {
    int16_t error_code;
    struct kstr error_message; /* nullable */
    int8_t resource_type;
    struct kstr resource_name;
    struct describe_configs_entry *configs;
    int32_t n_configs;
};

struct describe_configs_resp {
    int32_t throttle_time_ms;
    struct describe_configs_result *results;
    int32_t n_results;
};

int kmsg_decode_describe_configs(struct kreader *r, int16_t v, struct arena *a,
                                 struct describe_configs_req *out);
void kmsg_encode_describe_configs(struct kwriter *w, int16_t v,
                                  const struct describe_configs_resp *resp);

/* ---- AlterConfigs (33) ---- */

struct alter_configs_req_resource {
    int8_t resource_type;
    struct kstr resource_name;
    struct config_entry *configs;
    int32_t n_configs;
    /* Not on the wire: set by the broker when it built this resource from an
     * IncrementalAlterConfigs one whose operations are wrong already (non-zero: the resource is
     * answered with this error and message and nothing changes). The decoder leaves 0. */
    int16_t error_code;
    struct kstr error_message;
};

struct alter_configs_req {
    struct alter_configs_req_resource *resources;
    int32_t n_resources;
    bool validate_only;
};

struct alter_configs_resp_resource {
    int16_t error_code;
    struct kstr error_message; /* nullable */
    int8_t resource_type;
    struct kstr resource_name;
};

struct alter_configs_resp {
    int32_t throttle_time_ms;
    struct alter_configs_resp_resource *responses;
    int32_t n_responses;
};

int kmsg_decode_alter_configs(struct kreader *r, int16_t v, struct arena *a,
                              struct alter_configs_req *out);
void kmsg_encode_alter_configs(struct kwriter *w, int16_t v, const struct alter_configs_resp *resp);

/* ---- IncrementalAlterConfigs (44); v1 flexible ---- */

#define KAFKA_CONFIG_OP_SET 0
#define KAFKA_CONFIG_OP_DELETE 1
#define KAFKA_CONFIG_OP_APPEND 2
#define KAFKA_CONFIG_OP_SUBTRACT 3

struct incremental_alter_config {
    struct kstr name;
    int8_t config_operation; /* KAFKA_CONFIG_OP_*; anything else is the broker's to refuse */
    struct kstr value;       /* nullable */
};

struct incremental_alter_configs_req_resource {
    int8_t resource_type;
    struct kstr resource_name;
    struct incremental_alter_config *configs;
    int32_t n_configs;
};

struct incremental_alter_configs_req {
    struct incremental_alter_configs_req_resource *resources;
    int32_t n_resources;
    bool validate_only;
};

/* The response has AlterConfigs' fields in every version (struct alter_configs_resp). */
int kmsg_decode_incremental_alter_configs(struct kreader *r, int16_t v, struct arena *a,
                                          struct incremental_alter_configs_req *out);
void kmsg_encode_incremental_alter_configs(struct kwriter *w, int16_t v,
                                           const struct alter_configs_resp *resp);

/* ---- DescribeCluster (60); flexible from v0 ---- */

#define KAFKA_ENDPOINT_BROKERS 1
#define KAFKA_ENDPOINT_CONTROLLERS 2

struct describe_cluster_req {
    bool include_cluster_authorized_operations;
    int8_t endpoint_type; /* v1+; KAFKA_ENDPOINT_BROKERS before */
};

struct describe_cluster_broker {
    int32_t broker_id;
    struct kstr host;
    int32_t port;
    struct kstr rack; /* nullable */
};

struct describe_cluster_resp {
    int32_t throttle_time_ms;
    int16_t error_code;
    struct kstr error_message; /* nullable */
    int8_t endpoint_type;      /* v1+ */
    struct kstr cluster_id;
    int32_t controller_id;
    struct describe_cluster_broker *brokers;
    int32_t n_brokers;
    int32_t cluster_authorized_operations;
};

int kmsg_decode_describe_cluster(struct kreader *r, int16_t v, struct arena *a,
                                 struct describe_cluster_req *out);
void kmsg_encode_describe_cluster(struct kwriter *w, int16_t v,
                                  const struct describe_cluster_resp *resp);

/* ---- DescribeAcls (29), CreateAcls (30), DeleteAcls (31): v0-3, flexible from v2 ---- */

/* One ACL binding, or a filter of them (names null: any; types ANY). The pattern type is
 * carried from v1; v0 means LITERAL (3). */
struct kacl {
    int8_t resource_type;
    struct kstr resource_name; /* nullable in filters */
    int8_t pattern_type;
    struct kstr principal; /* nullable in filters */
    struct kstr host;      /* nullable in filters */
    int8_t operation;
    int8_t permission;
};

struct describe_acls_req {
    struct kacl filter;
};

struct describe_acls_resource {
    int8_t resource_type;
    struct kstr resource_name;
    int8_t pattern_type;
    struct kacl *acls; /* principal, host, operation, permission used */
    int32_t n_acls;
};

struct describe_acls_resp {
    int32_t throttle_time_ms;
    int16_t error_code;
    struct kstr error_message; /* nullable */
    struct describe_acls_resource *resources;
    int32_t n_resources;
};

struct create_acls_req {
    struct kacl *creations;
    int32_t n_creations;
};

struct kacl_result {
    int16_t error_code;
    struct kstr error_message; /* nullable */
};

struct create_acls_resp {
    int32_t throttle_time_ms;
    struct kacl_result *results;
    int32_t n_results;
};

struct delete_acls_req {
    struct kacl *filters;
    int32_t n_filters;
};

struct delete_acls_match {
    int16_t error_code;
    struct kstr error_message; /* nullable */
    struct kacl acl;
};

struct delete_acls_filter_result {
    int16_t error_code;
    struct kstr error_message; /* nullable */
    struct delete_acls_match *matches;
    int32_t n_matches;
};

struct delete_acls_resp {
    int32_t throttle_time_ms;
    struct delete_acls_filter_result *results;
    int32_t n_results;
};

int kmsg_decode_describe_acls(struct kreader *r, int16_t v, struct describe_acls_req *out);
void kmsg_encode_describe_acls(struct kwriter *w, int16_t v, const struct describe_acls_resp *resp);
int kmsg_decode_create_acls(struct kreader *r, int16_t v, struct arena *a,
                            struct create_acls_req *out);
void kmsg_encode_create_acls(struct kwriter *w, int16_t v, const struct create_acls_resp *resp);
int kmsg_decode_delete_acls(struct kreader *r, int16_t v, struct arena *a,
                            struct delete_acls_req *out);
void kmsg_encode_delete_acls(struct kwriter *w, int16_t v, const struct delete_acls_resp *resp);

/* ---- DescribeClientQuotas (48), AlterClientQuotas (49): v0-1, flexible from v1 ---- */

/* One part of a quota entity: type ("user", "client-id", "ip") and name (null: the default). */
struct kquota_entity_part {
    struct kstr type;
    struct kstr name; /* nullable */
};

struct kquota_value {
    struct kstr key;
    double value;
};

struct describe_quotas_component {
    struct kstr entity_type;
    int8_t match_type; /* 0 exact name, 1 default, 2 any specified name */
    struct kstr match; /* nullable */
};

struct describe_quotas_req {
    struct describe_quotas_component *components;
    int32_t n_components;
    bool strict;
};

struct describe_quotas_entry {
    struct kquota_entity_part *entity;
    int32_t n_entity;
    struct kquota_value *values;
    int32_t n_values;
};

struct describe_quotas_resp {
    int32_t throttle_time_ms;
    int16_t error_code;
    struct kstr error_message;             /* nullable */
    struct describe_quotas_entry *entries; /* n_entries -1: null (with an error) */
    int32_t n_entries;
};

struct alter_quotas_op {
    struct kstr key;
    double value;
    bool remove;
};

struct alter_quotas_entry {
    struct kquota_entity_part *entity;
    int32_t n_entity;
    struct alter_quotas_op *ops;
    int32_t n_ops;
};

struct alter_quotas_req {
    struct alter_quotas_entry *entries;
    int32_t n_entries;
    bool validate_only;
};

struct alter_quotas_result {
    int16_t error_code;
    struct kstr error_message; /* nullable */
    struct kquota_entity_part *entity;
    int32_t n_entity;
};

struct alter_quotas_resp {
    int32_t throttle_time_ms;
    struct alter_quotas_result *entries;
    int32_t n_entries;
};

int kmsg_decode_describe_quotas(struct kreader *r, int16_t v, struct arena *a,
                                struct describe_quotas_req *out);
void kmsg_encode_describe_quotas(struct kwriter *w, int16_t v,
                                 const struct describe_quotas_resp *resp);
int kmsg_decode_alter_quotas(struct kreader *r, int16_t v, struct arena *a,
                             struct alter_quotas_req *out);
void kmsg_encode_alter_quotas(struct kwriter *w, int16_t v, const struct alter_quotas_resp *resp);

/* ---- SaslHandshake (17) v0-1, SaslAuthenticate (36) v0-2 (flexible from v2) ---- */

struct sasl_handshake_req {
    struct kstr mechanism;
};

struct sasl_handshake_resp {
    int16_t error_code;
    const char *const *mechanisms; /* NUL-terminated names */
    int32_t n_mechanisms;
};

struct sasl_authenticate_req {
    struct kbytes auth_bytes;
};

struct sasl_authenticate_resp {
    int16_t error_code;
    struct kstr error_message; /* nullable */
    struct kbytes auth_bytes;
    int64_t session_lifetime_ms; /* v1+ */
};

int kmsg_decode_sasl_handshake(struct kreader *r, int16_t v, struct sasl_handshake_req *out);
void kmsg_encode_sasl_handshake(struct kwriter *w, int16_t v,
                                const struct sasl_handshake_resp *resp);
int kmsg_decode_sasl_authenticate(struct kreader *r, int16_t v, struct sasl_authenticate_req *out);
void kmsg_encode_sasl_authenticate(struct kwriter *w, int16_t v,
                                   const struct sasl_authenticate_resp *resp);

/* ---- DescribeUserScramCredentials (50) v0, AlterUserScramCredentials (51) v0; flexible ---- */

struct describe_scram_req {
    struct kstr *users; /* NULL with n_users -1: every user */
    int32_t n_users;
};

struct describe_scram_credential {
    int8_t mechanism;
    int32_t iterations;
};

struct describe_scram_result {
    struct kstr user;
    int16_t error_code;
    struct kstr error_message; /* nullable */
    struct describe_scram_credential *credentials;
    int32_t n_credentials;
};

struct describe_scram_resp {
    int32_t throttle_time_ms;
    int16_t error_code;
    struct kstr error_message; /* nullable */
    struct describe_scram_result *results;
    int32_t n_results;
};

struct alter_scram_deletion {
    struct kstr name;
    int8_t mechanism;
};

struct alter_scram_upsertion {
    struct kstr name;
    int8_t mechanism;
    int32_t iterations;
    struct kbytes salt;
    struct kbytes salted_password;
};

struct alter_scram_req {
    struct alter_scram_deletion *deletions;
    int32_t n_deletions;
    struct alter_scram_upsertion *upsertions;
    int32_t n_upsertions;
};

struct alter_scram_result {
    struct kstr user;
    int16_t error_code;
    struct kstr error_message; /* nullable */
};

struct alter_scram_resp {
    int32_t throttle_time_ms;
    struct alter_scram_result *results;
    int32_t n_results;
};

int kmsg_decode_describe_scram(struct kreader *r, int16_t v, struct arena *a,
                               struct describe_scram_req *out);
void kmsg_encode_describe_scram(struct kwriter *w, int16_t v, const struct describe_scram_resp *resp);
int kmsg_decode_alter_scram(struct kreader *r, int16_t v, struct arena *a,
                            struct alter_scram_req *out);
void kmsg_encode_alter_scram(struct kwriter *w, int16_t v, const struct alter_scram_resp *resp);

/* ---- AddRaftVoter (80) and RemoveRaftVoter (81); v0, flexible (KIP-853) ---- */

struct raft_voter_req {
    struct kstr cluster_id; /* nullable: not checked */
    int32_t timeout_ms;     /* AddRaftVoter only */
    int32_t voter_id;
    struct kuuid voter_directory_id;
    int32_t n_listeners; /* AddRaftVoter: the voter's endpoints (ours come from its registration) */
};

struct raft_voter_resp {
    int32_t throttle_time_ms;
    int16_t error_code;
    struct kstr error_message; /* nullable */
};

/* add: AddRaftVoter, else RemoveRaftVoter. */
int kmsg_decode_raft_voter(struct kreader *r, bool add, int16_t v, struct raft_voter_req *out);
void kmsg_encode_raft_voter(struct kwriter *w, bool add, int16_t v,
                            const struct raft_voter_resp *resp);

/* ---- AlterPartitionReassignments (45) and ListPartitionReassignments (46); v0, flexible ---- */

struct alter_reassign_req_partition {
    int32_t partition_index;
    int32_t *replicas; /* NULL with n_replicas -1: cancel the reassignment in progress */
    int32_t n_replicas;
};
struct alter_reassign_req_topic {
    struct kstr name;
    struct alter_reassign_req_partition *partitions;
    int32_t n_partitions;
};
struct alter_reassign_req {
    int32_t timeout_ms;
    struct alter_reassign_req_topic *topics;
    int32_t n_topics;
};
struct alter_reassign_resp_partition {
    int32_t partition_index;
    int16_t error_code;
    struct kstr error_message; /* nullable */
};
struct alter_reassign_resp_topic {
    struct kstr name;
    struct alter_reassign_resp_partition *partitions;
    int32_t n_partitions;
};
struct alter_reassign_resp {
    int32_t throttle_time_ms;
    int16_t error_code;
    struct kstr error_message; /* nullable */
    struct alter_reassign_resp_topic *responses;
    int32_t n_responses;
};
int kmsg_decode_alter_reassignments(struct kreader *r, int16_t v, struct arena *a,
                                    struct alter_reassign_req *out);
void kmsg_encode_alter_reassignments(struct kwriter *w, int16_t v,
                                     const struct alter_reassign_resp *resp);

struct list_reassign_req_topic {
    struct kstr name;
    int32_t *partitions;
    int32_t n_partitions;
};
struct list_reassign_req {
    int32_t timeout_ms;
    struct list_reassign_req_topic *topics; /* n_topics -1 (null): every reassignment */
    int32_t n_topics;
};
struct list_reassign_resp_partition {
    int32_t partition_index;
    int32_t *replicas; /* the current replica set, adding ones included (Kafka's) */
    int32_t n_replicas;
    int32_t *adding;
    int32_t n_adding;
    int32_t *removing;
    int32_t n_removing;
};
struct list_reassign_resp_topic {
    struct kstr name;
    struct list_reassign_resp_partition *partitions;
    int32_t n_partitions;
};
struct list_reassign_resp {
    int32_t throttle_time_ms;
    int16_t error_code;
    struct kstr error_message; /* nullable */
    struct list_reassign_resp_topic *topics;
    int32_t n_topics;
};
int kmsg_decode_list_reassignments(struct kreader *r, int16_t v, struct arena *a,
                                   struct list_reassign_req *out);
void kmsg_encode_list_reassignments(struct kwriter *w, int16_t v,
                                    const struct list_reassign_resp *resp);

/* ---- ElectLeaders (43); v2 flexible ---- */

#define KAFKA_ELECTION_PREFERRED 0
#define KAFKA_ELECTION_UNCLEAN 1

struct elect_leaders_req_topic {
    struct kstr topic;
    int32_t *partitions;
    int32_t n_partitions;
};
struct elect_leaders_req {
    int8_t election_type;                   /* v1+; v0: KAFKA_ELECTION_PREFERRED */
    struct elect_leaders_req_topic *topics; /* n_topics -1 (null): every partition */
    int32_t n_topics;
    int32_t timeout_ms;
};
struct elect_leaders_resp_partition {
    int32_t partition_id;
    int16_t error_code;
    struct kstr error_message; /* nullable */
};
struct elect_leaders_resp_topic {
    struct kstr topic;
    struct elect_leaders_resp_partition *partitions;
    int32_t n_partitions;
};
struct elect_leaders_resp {
    int32_t throttle_time_ms;
    int16_t error_code; /* v1+ */
    struct elect_leaders_resp_topic *results;
    int32_t n_results;
};
int kmsg_decode_elect_leaders(struct kreader *r, int16_t v, struct arena *a,
                              struct elect_leaders_req *out);
void kmsg_encode_elect_leaders(struct kwriter *w, int16_t v, const struct elect_leaders_resp *resp);

/* ---- DescribeLogDirs (35); v2+ flexible ---- */

struct describe_log_dirs_req_topic {
    struct kstr topic;
    int32_t *partitions;
    int32_t n_partitions;
};

struct describe_log_dirs_req {
    struct describe_log_dirs_req_topic *topics; /* n_topics -1 = every topic (null) */
    int32_t n_topics;
};

struct describe_log_dirs_partition {
    int32_t partition_index;
    int64_t partition_size;
    int64_t offset_lag;
    bool is_future_key;
};

struct describe_log_dirs_topic {
    struct kstr name;
    struct describe_log_dirs_partition *partitions;
    int32_t n_partitions;
};

struct describe_log_dirs_result {
    int16_t error_code;
    struct kstr log_dir;
    struct describe_log_dirs_topic *topics;
    int32_t n_topics;
    int64_t total_bytes;  /* v4+; -1 */
    int64_t usable_bytes; /* v4+; -1 */
};

struct describe_log_dirs_resp {
    int32_t throttle_time_ms;
    int16_t error_code; /* v3+ */
    struct describe_log_dirs_result *results;
    int32_t n_results;
};

int kmsg_decode_describe_log_dirs(struct kreader *r, int16_t v, struct arena *a,
                                  struct describe_log_dirs_req *out);
void kmsg_encode_describe_log_dirs(struct kwriter *w, int16_t v,
                                   const struct describe_log_dirs_resp *resp);

/* ---- OffsetForLeaderEpoch (23); v4 flexible ---- */

struct offset_for_leader_epoch_req_partition {
    int32_t partition;
    int32_t current_leader_epoch; /* v2+; -1 */
    int32_t leader_epoch;
};

struct offset_for_leader_epoch_req_topic {
    struct kstr topic;
    struct offset_for_leader_epoch_req_partition *partitions;
    int32_t n_partitions;
};

struct offset_for_leader_epoch_req {
    int32_t replica_id; /* v3+; -2 (a consumer's debugging request) before */
    struct offset_for_leader_epoch_req_topic *topics;
    int32_t n_topics;
};

struct offset_for_leader_epoch_resp_partition {
    int16_t error_code;
    int32_t partition;
    int32_t leader_epoch; /* v1+; -1 */
    int64_t end_offset;   /* -1 */
};

struct offset_for_leader_epoch_resp_topic {
    struct kstr topic;
    struct offset_for_leader_epoch_resp_partition *partitions;
    int32_t n_partitions;
};

struct offset_for_leader_epoch_resp {
    int32_t throttle_time_ms; /* v2+ */
    struct offset_for_leader_epoch_resp_topic *topics;
    int32_t n_topics;
};

int kmsg_decode_offset_for_leader_epoch(struct kreader *r, int16_t v, struct arena *a,
                                        struct offset_for_leader_epoch_req *out);
void kmsg_encode_offset_for_leader_epoch(struct kwriter *w, int16_t v,
                                         const struct offset_for_leader_epoch_resp *resp);

/* ---- DeleteRecords (21) ---- */

struct delete_records_req_partition {
    int32_t partition_index;
    int64_t offset; /* delete below this; -1 = up to the high watermark */
};

struct delete_records_req_topic {
    struct kstr name;
    struct delete_records_req_partition *partitions;
    int32_t n_partitions;
};

struct delete_records_req {
    struct delete_records_req_topic *topics;
    int32_t n_topics;
    int32_t timeout_ms;
};

struct delete_records_resp_partition {
    int32_t partition_index;
    int64_t low_watermark;
    int16_t error_code;
};

struct delete_records_resp_topic {
    struct kstr name;
    struct delete_records_resp_partition *partitions;
    int32_t n_partitions;
};

struct delete_records_resp {
    int32_t throttle_time_ms;
    struct delete_records_resp_topic *topics;
    int32_t n_topics;
};

int kmsg_decode_delete_records(struct kreader *r, int16_t v, struct arena *a,
                               struct delete_records_req *out);
void kmsg_encode_delete_records(struct kwriter *w, int16_t v,
                                const struct delete_records_resp *resp);

/* ---- FindCoordinator (10); v3 is flexible ---- */

#define KAFKA_COORDINATOR_GROUP 0
#define KAFKA_COORDINATOR_TRANSACTION 1

/* v4 batches keys: coordinator_keys in the request, coordinators in the response (key and the
 * single-coordinator fields are then unused). */
struct find_coordinator_req {
    struct kstr key;               /* v0-3; "" from v4 */
    int8_t key_type;               /* v1+; 0 group */
    struct kstr *coordinator_keys; /* v4+ */
    int32_t n_coordinator_keys;
};

struct find_coordinator_coordinator {
    struct kstr key;
    int32_t node_id;
    struct kstr host;
    int32_t port;
    int16_t error_code;
    struct kstr error_message; /* nullable */
};

struct find_coordinator_resp {
    int32_t throttle_time_ms;                          /* v1+ */
    int16_t error_code;                                /* v0-3 */
    struct kstr error_message;                         /* v1-3, nullable */
    int32_t node_id;                                   /* v0-3 */
    struct kstr host;                                  /* v0-3 */
    int32_t port;                                      /* v0-3 */
    struct find_coordinator_coordinator *coordinators; /* v4+ */
    int32_t n_coordinators;
};

int kmsg_decode_find_coordinator(struct kreader *r, int16_t v, struct arena *a,
                                 struct find_coordinator_req *out);
void kmsg_encode_find_coordinator(struct kwriter *w, int16_t v,
                                  const struct find_coordinator_resp *resp);

#endif
