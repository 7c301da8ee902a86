/* Kafka wire error codes (int16 in responses). Only these go on the wire; internal code uses
 * base/errors.h and maps at the protocol edge. */
#ifndef SP_KAFKA_ERRORS_H
#define SP_KAFKA_ERRORS_H

#include <stdint.h>

#define KAFKA_ERROR_TABLE(X)                                                                       \
    X(UNKNOWN_SERVER_ERROR, -1)                                                                    \
    X(NONE, 0)                                                                                     \
    X(OFFSET_OUT_OF_RANGE, 1)                                                                      \
    X(CORRUPT_MESSAGE, 2)                                                                          \
    X(UNKNOWN_TOPIC_OR_PARTITION, 3)                                                               \
    X(INVALID_FETCH_SIZE, 4)                                                                       \
    X(LEADER_NOT_AVAILABLE, 5)                                                                     \
    X(NOT_LEADER_OR_FOLLOWER, 6)                                                                   \
    X(REQUEST_TIMED_OUT, 7)                                                                        \
    X(BROKER_NOT_AVAILABLE, 8)                                                                     \
    X(REPLICA_NOT_AVAILABLE, 9)                                                                    \
    X(MESSAGE_TOO_LARGE, 10)                                                                       \
    X(STALE_CONTROLLER_EPOCH, 11)                                                                  \
    X(OFFSET_METADATA_TOO_LARGE, 12)                                                               \
    X(NETWORK_EXCEPTION, 13)                                                                       \
    X(COORDINATOR_LOAD_IN_PROGRESS, 14)                                                            \
    X(COORDINATOR_NOT_AVAILABLE, 15)                                                               \
    X(NOT_COORDINATOR, 16)                                                                         \
    X(INVALID_TOPIC_EXCEPTION, 17)                                                                 \
    X(RECORD_LIST_TOO_LARGE, 18)                                                                   \
    X(NOT_ENOUGH_REPLICAS, 19)                                                                     \
    X(NOT_ENOUGH_REPLICAS_AFTER_APPEND, 20)                                                        \
    X(INVALID_REQUIRED_ACKS, 21)                                                                   \
    X(ILLEGAL_GENERATION, 22)                                                                      \
    X(INCONSISTENT_GROUP_PROTOCOL, 23)                                                             \
    X(INVALID_GROUP_ID, 24)                                                                        \
    X(UNKNOWN_MEMBER_ID, 25)                                                                       \
    X(INVALID_SESSION_TIMEOUT, 26)                                                                 \
    X(REBALANCE_IN_PROGRESS, 27)                                                                   \
    X(INVALID_COMMIT_OFFSET_SIZE, 28)                                                              \
    X(TOPIC_AUTHORIZATION_FAILED, 29)                                                              \
    X(GROUP_AUTHORIZATION_FAILED, 30)                                                              \
    X(CLUSTER_AUTHORIZATION_FAILED, 31)                                                            \
    X(INVALID_TIMESTAMP, 32)                                                                       \
    X(UNSUPPORTED_SASL_MECHANISM, 33)                                                              \
    X(ILLEGAL_SASL_STATE, 34)                                                                      \
    X(UNSUPPORTED_VERSION, 35)                                                                     \
    X(TOPIC_ALREADY_EXISTS, 36)                                                                    \
    X(INVALID_PARTITIONS, 37)                                                                      \
    X(INVALID_REPLICATION_FACTOR, 38)                                                              \
    X(INVALID_REPLICA_ASSIGNMENT, 39)                                                              \
    X(INVALID_CONFIG, 40)                                                                          \
    X(NOT_CONTROLLER, 41)                                                                          \
    X(INVALID_REQUEST, 42)                                                                         \
    X(UNSUPPORTED_FOR_MESSAGE_FORMAT, 43)                                                          \
    X(POLICY_VIOLATION, 44)                                                                        \
    X(OUT_OF_ORDER_SEQUENCE_NUMBER, 45)                                                            \
    X(DUPLICATE_SEQUENCE_NUMBER, 46)                                                               \
    X(INVALID_PRODUCER_EPOCH, 47)                                                                  \
    X(INVALID_TXN_STATE, 48)                                                                       \
    X(INVALID_PRODUCER_ID_MAPPING, 49)                                                             \
    X(INVALID_TRANSACTION_TIMEOUT, 50)                                                             \
    X(CONCURRENT_TRANSACTIONS, 51)                                                                 \
    X(TRANSACTION_COORDINATOR_FENCED, 52)                                                          \
    X(TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 53)                                                   \
    X(SECURITY_DISABLED, 54)                                                                       \
    X(OPERATION_NOT_ATTEMPTED, 55)                                                                 \
    X(KAFKA_STORAGE_ERROR, 56)                                                                     \
    X(LOG_DIR_NOT_FOUND, 57)                                                                       \
    X(SASL_AUTHENTICATION_FAILED, 58)                                                              \
    X(UNKNOWN_PRODUCER_ID, 59)                                                                     \
    X(REASSIGNMENT_IN_PROGRESS, 60)                                                                \
    X(NON_EMPTY_GROUP, 68)                                                                         \
    X(GROUP_ID_NOT_FOUND, 69)                                                                      \
    X(FETCH_SESSION_ID_NOT_FOUND, 70)                                                              \
    X(INVALID_FETCH_SESSION_EPOCH, 71)                                                             \
    X(LISTENER_NOT_FOUND, 72)                                                                      \
    X(TOPIC_DELETION_DISABLED, 73)                                                                 \
    X(FENCED_LEADER_EPOCH, 74)                                                                     \
    X(UNKNOWN_LEADER_EPOCH, 75)                                                                    \
    X(UNSUPPORTED_COMPRESSION_TYPE, 76)                                                            \
    X(STALE_BROKER_EPOCH, 77)                                                                      \
    X(OFFSET_NOT_AVAILABLE, 78)                                                                    \
    X(MEMBER_ID_REQUIRED, 79)                                                                      \
    X(PREFERRED_LEADER_NOT_AVAILABLE, 80)                                                          \
    X(GROUP_MAX_SIZE_REACHED, 81)                                                                  \
    X(FENCED_INSTANCE_ID, 82)                                                                      \
    X(ELIGIBLE_LEADERS_NOT_AVAILABLE, 83)                                                          \
    X(ELECTION_NOT_NEEDED, 84)                                                                     \
    X(NO_REASSIGNMENT_IN_PROGRESS, 85)                                                             \
    X(GROUP_SUBSCRIBED_TO_TOPIC, 86)                                                               \
    X(INVALID_RECORD, 87)                                                                          \
    X(UNSTABLE_OFFSET_COMMIT, 88)                                                                  \
    X(THROTTLING_QUOTA_EXCEEDED, 89)                                                               \
    X(PRODUCER_FENCED, 90)                                                                         \
    X(RESOURCE_NOT_FOUND, 91)                                                                      \
    X(DUPLICATE_RESOURCE, 92)                                                                      \
    X(UNACCEPTABLE_CREDENTIAL, 93)                                                                 \
    X(UNKNOWN_TOPIC_ID, 100)                                                                       \
    X(INCONSISTENT_CLUSTER_ID, 104)                                                                \
    X(UNSUPPORTED_ENDPOINT_TYPE, 115)                                                              \
    X(INVALID_VOTER_KEY, 125)                                                                      \
    X(DUPLICATE_VOTER, 126)                                                                        \
    X(VOTER_NOT_FOUND, 127)

enum kafka_error {
#define X(name, code) KERR_##name = code,
    KAFKA_ERROR_TABLE(X)
#undef X
};

/* "OFFSET_OUT_OF_RANGE" etc.; "UNKNOWN(<code>)" text is not produced: unknown codes give
 * "UNKNOWN_ERROR_CODE". */
const char *kafka_error_name(int16_t code);

#endif
