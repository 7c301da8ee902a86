/* The records of __consumer_offsets, in Kafka's formats (apache/kafka group-coordinator
 * src/main/resources/common/message/{OffsetCommit,GroupMetadata}{Key,Value}.json), so tools that
 * read the topic make sense of it. Every key and value starts with an int16 version.
 *
 *   OffsetCommitKey   v0/v1: group string, topic string, partition int32        (we write v1)
 *   OffsetCommitValue v0-v4: offset int64, leaderEpoch int32 (v3+), metadata string,
 *                     commitTimestamp int64, expireTimestamp int64 (v1 only); v4 flexible
 *                                                                                (we write v3)
 *   GroupMetadataKey  v2: group string
 *   GroupMetadataValue v0-v4: protocolType string, generation int32, protocol nullable string,
 *                     leader nullable string, currentStateTimestamp int64 (v2+), members
 *                     [memberId, groupInstanceId nullable (v3+), clientId, clientHost,
 *                     rebalanceTimeout int32 (v1+), sessionTimeout int32, subscription bytes,
 *                     assignment bytes]; v4 flexible                             (we write v3)
 *
 * A null value is a tombstone (offset deleted, group deleted). Decoders take bytes from disk:
 * bounded, sticky-error reads; they return 0, -ERR_CORRUPT or -ERR_UNSUPPORTED (a version we do
 * not know, e.g. the KIP-848 record types, which replay skips). Slices point into the input. */
#ifndef SP_GROUP_RECORDS_H
#define SP_GROUP_RECORDS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "group/group.h"
#include "kafka/wire.h"

#define GREC_KEY_OFFSET_V0 0
#define GREC_KEY_OFFSET_V1 1
#define GREC_KEY_GROUP 2

struct grec_key {
    int16_t version;   /* 0/1 offset commit, 2 group metadata */
    struct kstr group;
    struct kstr topic; /* offset keys */
    int32_t partition; /* offset keys */
};

struct grec_offset_value {
    int64_t offset;
    int32_t leader_epoch; /* -1 before v3 */
    struct kstr metadata;
    int64_t commit_ts_ms;
};

int grec_decode_key(const uint8_t *p, size_t len, struct grec_key *out);
int grec_decode_offset_value(const uint8_t *p, size_t len, struct grec_offset_value *out);
/* Fills *out (members from the arena). */
int grec_decode_group_value(const uint8_t *p, size_t len, struct arena *a,
                            struct group_restore *out);

void grec_encode_offset_key(struct kwriter *w, struct kstr group, struct kstr topic,
                            int32_t partition);
void grec_encode_group_key(struct kwriter *w, struct kstr group);
void grec_encode_offset_value(struct kwriter *w, const struct grec_offset_value *v);
/* The group as it stands: members with their metadata for the selected protocol and their
 * assignment (an Empty group has none). */
void grec_encode_group_value(struct kwriter *w, const struct group *g);

/* Java's String.hashCode over the UTF-16 form of a UTF-8 string (invalid bytes count as
 * U+FFFD, as Java's decoder makes them), and Kafka's partition choice abs(hash) % n. */
int32_t grec_java_hash(struct kstr s);
int32_t grec_partition_for(struct kstr group, int32_t n_partitions);

#endif
