/* The Kafka APIs this broker speaks: the one place where keys and version ranges are declared.
 *
 * X(ENUM, key, "Name", min, max, first_flexible)
 *   min/max: the range advertised in ApiVersions. Produce advertises 0 (librdkafka <= 2.0.2
 *   disables compression codecs otherwise) but v0-2 are answered with UNSUPPORTED_VERSION.
 *   first_flexible: the first version using the flexible encoding (KIP-482), from Kafka's JSON
 *   message definitions; versions at or above it use request header v2 / response header v1.
 *
 * Ranges follow ../shared/reference/kafka-protocol-notes.md, except ListGroups, which goes to v4
 * for its StatesFilter, and the flexible versions newer clients use (@platformatic/kafka only
 * implements those: Metadata 9+, Fetch 12+ (its v12 sends topic ids where names go, so v13),
 * FindCoordinator 4+, OffsetFetch 8+, CreateTopics 7, DeleteTopics 6, DescribeGroups 5,
 * AlterConfigs 2, DescribeConfigs 3+: its v2 reads v3's fields), and OffsetCommit 0-1 and
 * OffsetFetch 0 for old clients (sarama 1.2x commits with v1 unless Consumer.Offsets.Retention is
 * set; v0's ZooKeeper-era offsets are the one offset store here, as in Kafka 3.x in KRaft mode).
 * Admin APIs of Kafka 3.x that tools call: OffsetForLeaderEpoch (Raft terms are the leader
 * epochs), DescribeLogDirs, IncrementalAlterConfigs, DescribeCluster, ElectLeaders (PREFERRED
 * elections as Raft leadership transfers), and the reassignment APIs
 * (AlterPartitionReassignments, ListPartitionReassignments: KIP-455), and the voter changes of
 * the metadata quorum (AddRaftVoter, RemoveRaftVoter: KIP-853). Every client picks the highest version both sides have: raising a maximum changes what
 * librdkafka, kafkajs and kafka-python send only up to their own maxima (noted in the reference).
 * Rows are in key order (ApiVersions lists them so). */
#ifndef SP_KAFKA_API_H
#define SP_KAFKA_API_H

#include <stdbool.h>
#include <stdint.h>

#define KAFKA_API_TABLE(X)                                                                         \
    X(PRODUCE, 0, "Produce", 0, 9, 9)                                                              \
    X(FETCH, 1, "Fetch", 4, 13, 12)                                                                \
    X(LIST_OFFSETS, 2, "ListOffsets", 1, 7, 6)                                                     \
    X(METADATA, 3, "Metadata", 0, 12, 9)                                                           \
    X(OFFSET_COMMIT, 8, "OffsetCommit", 0, 9, 8)                                                   \
    X(OFFSET_FETCH, 9, "OffsetFetch", 0, 8, 6)                                                     \
    X(FIND_COORDINATOR, 10, "FindCoordinator", 0, 4, 3)                                            \
    X(JOIN_GROUP, 11, "JoinGroup", 0, 9, 6)                                                        \
    X(HEARTBEAT, 12, "Heartbeat", 0, 4, 4)                                                         \
    X(LEAVE_GROUP, 13, "LeaveGroup", 0, 5, 4)                                                      \
    X(SYNC_GROUP, 14, "SyncGroup", 0, 5, 4)                                                        \
    X(DESCRIBE_GROUPS, 15, "DescribeGroups", 0, 5, 5)                                              \
    X(LIST_GROUPS, 16, "ListGroups", 0, 4, 3)                                                      \
    X(SASL_HANDSHAKE, 17, "SaslHandshake", 0, 1, 99) /* never flexible */                          \
    X(API_VERSIONS, 18, "ApiVersions", 0, 4, 3)                                                    \
    X(CREATE_TOPICS, 19, "CreateTopics", 2, 7, 5)                                                  \
    X(DELETE_TOPICS, 20, "DeleteTopics", 1, 6, 4)                                                  \
    X(DELETE_RECORDS, 21, "DeleteRecords", 0, 2, 2)                                                \
    X(INIT_PRODUCER_ID, 22, "InitProducerId", 0, 5, 2) /* v0: librdkafka idempotence needs it */   \
    X(OFFSET_FOR_LEADER_EPOCH, 23, "OffsetForLeaderEpoch", 0, 4, 4)                                \
    X(DESCRIBE_ACLS, 29, "DescribeAcls", 0, 3, 2)                                                  \
    X(CREATE_ACLS, 30, "CreateAcls", 0, 3, 2)                                                      \
    X(DELETE_ACLS, 31, "DeleteAcls", 0, 3, 2)                                                      \
    X(DESCRIBE_CONFIGS, 32, "DescribeConfigs", 0, 4, 4)                                            \
    X(ALTER_CONFIGS, 33, "AlterConfigs", 0, 2, 2)                                                  \
    X(DESCRIBE_LOG_DIRS, 35, "DescribeLogDirs", 0, 4, 2)                                           \
    X(SASL_AUTHENTICATE, 36, "SaslAuthenticate", 0, 2, 2)                                          \
    X(CREATE_PARTITIONS, 37, "CreatePartitions", 0, 1, 2)                                          \
    X(DELETE_GROUPS, 42, "DeleteGroups", 0, 2, 2)                                                  \
    X(ELECT_LEADERS, 43, "ElectLeaders", 0, 2, 2)                                                  \
    X(INCREMENTAL_ALTER_CONFIGS, 44, "IncrementalAlterConfigs", 0, 1, 1)                           \
    X(ALTER_PARTITION_REASSIGNMENTS, 45, "AlterPartitionReassignments", 0, 0, 0)                   \
    X(LIST_PARTITION_REASSIGNMENTS, 46, "ListPartitionReassignments", 0, 0, 0)                     \
    X(OFFSET_DELETE, 47, "OffsetDelete", 0, 0, 99) /* never flexible */                            \
    X(DESCRIBE_CLIENT_QUOTAS, 48, "DescribeClientQuotas", 0, 1, 1)                               \
    X(ALTER_CLIENT_QUOTAS, 49, "AlterClientQuotas", 0, 1, 1)                                     \
    X(DESCRIBE_USER_SCRAM_CREDENTIALS, 50, "DescribeUserScramCredentials", 0, 0, 0)                \
    X(ALTER_USER_SCRAM_CREDENTIALS, 51, "AlterUserScramCredentials", 0, 0, 0)                      \
    X(DESCRIBE_CLUSTER, 60, "DescribeCluster", 0, 1, 0)                                            \
    X(ADD_RAFT_VOTER, 80, "AddRaftVoter", 0, 0, 0)                                                 \
    X(REMOVE_RAFT_VOTER, 81, "RemoveRaftVoter", 0, 0, 0)

enum kafka_api {
#define X(e, key, name, min, max, flex) KAPI_##e = key,
    KAFKA_API_TABLE(X)
#undef X
};

#define KAFKA_API_KEY_MAX 81 /* highest key we may be asked about; lookups above return NULL */

struct kafka_api_info {
    int16_t key;
    const char *name;
    int16_t min_version;
    int16_t max_version;
    int16_t first_flexible;
};

/* NULL for keys we do not implement. */
const struct kafka_api_info *kafka_api_find(int16_t key);
/* All implemented APIs in key order, for ApiVersions. */
const struct kafka_api_info *kafka_api_all(int *count);
/* Whether (key, version) uses the flexible encoding. Unknown keys are not flexible. */
bool kafka_api_flexible(int16_t key, int16_t version);
/* Name for logs and metrics ("Unknown" for keys we do not implement). */
const char *kafka_api_name(int16_t key);

#endif
