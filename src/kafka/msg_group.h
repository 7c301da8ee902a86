/* Consumer-group request and response bodies and their codecs: JoinGroup (11) 0-9,
 * SyncGroup (14) 0-5, Heartbeat (12) 0-4, LeaveGroup (13) 0-5, OffsetCommit (8) 0-9,
 * OffsetFetch (9) 0-8, DescribeGroups (15) 0-5, ListGroups (16) 0-4, DeleteGroups (42) 0-2 and
 * OffsetDelete (47) 0. FindCoordinator lives in msg.h. The codecs read and write every version
 * listed here; kafka/api.h says which of them the broker serves.
 *
 * Same contract as kafka/msg.h: decoders return 0, -ERR_CORRUPT (truncated body, impossible
 * count or length, a null where the schema forbids one) or -ERR_UNSUPPORTED (version outside
 * kafka/api.h); strings and bytes are slices into the request, arrays come from the arena; fields
 * a version lacks hold the defaults given beside them. Encoders write the fields of the version
 * (the version must be in range: CHECKed).
 *
 * Layouts: apache/kafka clients/src/main/resources/common/message/<Name>Request.json and
 * <Name>Response.json; field names in snake_case. */
#ifndef SP_KAFKA_MSG_GROUP_H
#define SP_KAFKA_MSG_GROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "kafka/wire.h"

/* ---- JoinGroup (11); v6+ flexible ---- */

struct join_group_protocol {
    struct kstr name;
    struct kbytes metadata;
};

struct join_group_req {
    struct kstr group_id;
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms; /* v1+; -1 before (use the session timeout) */
    struct kstr member_id;
    struct kstr group_instance_id; /* v5+, nullable; null before */
    struct kstr protocol_type;
    struct join_group_protocol *protocols;
    int32_t n_protocols;
    struct kstr reason; /* v8+, nullable; null before */
};

struct join_group_member {
    struct kstr member_id;
    struct kstr group_instance_id; /* v5+, nullable */
    struct kbytes metadata;
};

struct join_group_resp {
    int32_t throttle_time_ms; /* v2+ */
    int16_t error_code;
    int32_t generation_id;
    struct kstr protocol_type; /* v7+, nullable */
    struct kstr protocol_name; /* nullable from v7; written as "" before when null */
    struct kstr leader;
    bool skip_assignment; /* v9+ */
    struct kstr member_id;
    struct join_group_member *members;
    int32_t n_members;
};

int kmsg_decode_join_group(struct kreader *r, int16_t v, struct arena *a,
                           struct join_group_req *out);
void kmsg_encode_join_group(struct kwriter *w, int16_t v, const struct join_group_resp *resp);

/* ---- SyncGroup (14); v4+ flexible ---- */

struct sync_group_assignment {
    struct kstr member_id;
    struct kbytes assignment;
};

struct sync_group_req {
    struct kstr group_id;
    int32_t generation_id;
    struct kstr member_id;
    struct kstr group_instance_id; /* v3+, nullable */
    struct kstr protocol_type;     /* v5+, nullable */
    struct kstr protocol_name;     /* v5+, nullable */
    struct sync_group_assignment *assignments;
    int32_t n_assignments;
};

struct sync_group_resp {
    int32_t throttle_time_ms; /* v1+ */
    int16_t error_code;
    struct kstr protocol_type; /* v5+, nullable */
    struct kstr protocol_name; /* v5+, nullable */
    struct kbytes assignment;
};

int kmsg_decode_sync_group(struct kreader *r, int16_t v, struct arena *a,
                           struct sync_group_req *out);
void kmsg_encode_sync_group(struct kwriter *w, int16_t v, const struct sync_group_resp *resp);

/* ---- Heartbeat (12); v4 flexible ---- */

struct heartbeat_req {
    struct kstr group_id;
    int32_t generation_id;
    struct kstr member_id;
    struct kstr group_instance_id; /* v3+, nullable */
};

struct heartbeat_resp {
    int32_t throttle_time_ms; /* v1+ */
    int16_t error_code;
};

int kmsg_decode_heartbeat(struct kreader *r, int16_t v, struct arena *a, struct heartbeat_req *out);
void kmsg_encode_heartbeat(struct kwriter *w, int16_t v, const struct heartbeat_resp *resp);

/* ---- LeaveGroup (13); v4 flexible ---- */

struct leave_group_member {
    struct kstr member_id;
    struct kstr group_instance_id; /* nullable */
    struct kstr reason;            /* v5+, nullable; null before */
};

struct leave_group_req {
    struct kstr group_id;
    /* v0-2 carry one member_id: it is reported as members[0] (instance id null) */
    struct leave_group_member *members;
    int32_t n_members;
};

struct leave_group_resp_member {
    struct kstr member_id;
    struct kstr group_instance_id; /* nullable */
    int16_t error_code;
};

struct leave_group_resp {
    int32_t throttle_time_ms; /* v1+ */
    int16_t error_code;
    struct leave_group_resp_member *members; /* v3+ */
    int32_t n_members;
};

int kmsg_decode_leave_group(struct kreader *r, int16_t v, struct arena *a,
                            struct leave_group_req *out);
void kmsg_encode_leave_group(struct kwriter *w, int16_t v, const struct leave_group_resp *resp);

/* ---- OffsetCommit (8); v8 flexible ---- */

/* v0 has no generation or member (a commit outside any generation, as v1+ with generation -1
 * and member ""); v1 alone has a commit timestamp per partition; v9 is v8 again. */
struct offset_commit_req_partition {
    int32_t partition_index;
    int64_t committed_offset;
    int32_t committed_leader_epoch; /* v6+; -1 */
    struct kstr committed_metadata; /* nullable */
    int64_t commit_timestamp;       /* v1 only (it comes before the metadata there); -1 */
};

struct offset_commit_req_topic {
    struct kstr name;
    struct offset_commit_req_partition *partitions;
    int32_t n_partitions;
};

struct offset_commit_req {
    struct kstr group_id;
    int32_t generation_id;         /* v1+; -1 */
    struct kstr member_id;         /* v1+; "" */
    struct kstr group_instance_id; /* v7+, nullable */
    int64_t retention_time_ms;     /* v2-4; -1 */
    struct offset_commit_req_topic *topics;
    int32_t n_topics;
};

struct offset_commit_resp_partition {
    int32_t partition_index;
    int16_t error_code;
};

struct offset_commit_resp_topic {
    struct kstr name;
    struct offset_commit_resp_partition *partitions;
    int32_t n_partitions;
};

struct offset_commit_resp {
    int32_t throttle_time_ms; /* v3+ */
    struct offset_commit_resp_topic *topics;
    int32_t n_topics;
};

int kmsg_decode_offset_commit(struct kreader *r, int16_t v, struct arena *a,
                              struct offset_commit_req *out);
void kmsg_encode_offset_commit(struct kwriter *w, int16_t v, const struct offset_commit_resp *resp);

/* ---- OffsetFetch (9); v6+ flexible ---- */

/* v0 reads what v1 reads (Kafka kept v0's offsets in ZooKeeper; here every version reads the
 * one offset store). v8 asks for several groups at once: groups, each with its topics, in the
 * request and in the response, which then has no single-group fields. */
struct offset_fetch_req_topic {
    struct kstr name;
    int32_t *partition_indexes;
    int32_t n_partition_indexes;
};

struct offset_fetch_req_group {
    struct kstr group_id;
    struct offset_fetch_req_topic *topics; /* n_topics -1 = all (null) */
    int32_t n_topics;
};

struct offset_fetch_req {
    struct kstr group_id;                  /* v0-7; "" from v8 */
    struct offset_fetch_req_topic *topics; /* v0-7; n_topics -1 = all (null, v2+) */
    int32_t n_topics;
    struct offset_fetch_req_group *groups; /* v8+ */
    int32_t n_groups;
    bool require_stable; /* v7+ */
};

struct offset_fetch_resp_partition {
    int32_t partition_index;
    int64_t committed_offset;       /* -1: none */
    int32_t committed_leader_epoch; /* v5+ */
    struct kstr metadata;           /* nullable */
    int16_t error_code;
};

struct offset_fetch_resp_topic {
    struct kstr name;
    struct offset_fetch_resp_partition *partitions;
    int32_t n_partitions;
};

struct offset_fetch_resp_group {
    struct kstr group_id;
    struct offset_fetch_resp_topic *topics;
    int32_t n_topics;
    int16_t error_code;
};

struct offset_fetch_resp {
    int32_t throttle_time_ms;               /* v3+ */
    struct offset_fetch_resp_topic *topics; /* v0-7 */
    int32_t n_topics;
    int16_t error_code;                     /* v2-7 */
    struct offset_fetch_resp_group *groups; /* v8+ */
    int32_t n_groups;
};

int kmsg_decode_offset_fetch(struct kreader *r, int16_t v, struct arena *a,
                             struct offset_fetch_req *out);
void kmsg_encode_offset_fetch(struct kwriter *w, int16_t v, const struct offset_fetch_resp *resp);

/* ---- DescribeGroups (15); v5 flexible ---- */

#define KAFKA_AUTHORIZED_OPERATIONS_OMITTED INT32_MIN

struct describe_groups_req {
    struct kstr *groups;
    int32_t n_groups;
    bool include_authorized_operations; /* v3+ */
};

struct describe_groups_member {
    struct kstr member_id;
    struct kstr group_instance_id; /* v4+, nullable */
    struct kstr client_id;
    struct kstr client_host;
    struct kbytes member_metadata;
    struct kbytes member_assignment;
};

struct describe_groups_group {
    int16_t error_code;
    struct kstr group_id;
    struct kstr group_state;
    struct kstr protocol_type;
    struct kstr protocol_data;
    struct describe_groups_member *members;
    int32_t n_members;
    int32_t authorized_operations; /* v3+ */
};

struct describe_groups_resp {
    int32_t throttle_time_ms; /* v1+ */
    struct describe_groups_group *groups;
    int32_t n_groups;
};

int kmsg_decode_describe_groups(struct kreader *r, int16_t v, struct arena *a,
                                struct describe_groups_req *out);
void kmsg_encode_describe_groups(struct kwriter *w, int16_t v,
                                 const struct describe_groups_resp *resp);

/* ---- ListGroups (16); v3+ flexible ---- */

struct list_groups_req {
    struct kstr *states_filter; /* v4+; empty = all */
    int32_t n_states_filter;
};

struct list_groups_group {
    struct kstr group_id;
    struct kstr protocol_type;
    struct kstr group_state; /* v4+ */
};

struct list_groups_resp {
    int32_t throttle_time_ms; /* v1+ */
    int16_t error_code;
    struct list_groups_group *groups;
    int32_t n_groups;
};

int kmsg_decode_list_groups(struct kreader *r, int16_t v, struct arena *a,
                            struct list_groups_req *out);
void kmsg_encode_list_groups(struct kwriter *w, int16_t v, const struct list_groups_resp *resp);

/* ---- DeleteGroups (42); v2 flexible ---- */

struct delete_groups_req {
    struct kstr *groups_names;
    int32_t n_groups_names;
};

struct delete_groups_result {
    struct kstr group_id;
    int16_t error_code;
};

struct delete_groups_resp {
    int32_t throttle_time_ms;
    struct delete_groups_result *results;
    int32_t n_results;
};

int kmsg_decode_delete_groups(struct kreader *r, int16_t v, struct arena *a,
                              struct delete_groups_req *out);
void kmsg_encode_delete_groups(struct kwriter *w, int16_t v, const struct delete_groups_resp *resp);

/* ---- OffsetDelete (47); v0 only, not flexible ---- */

struct offset_delete_req_topic {
    struct kstr name;
    int32_t *partitions; /* partition indexes */
    int32_t n_partitions;
};

struct offset_delete_req {
    struct kstr group_id;
    struct offset_delete_req_topic *topics;
    int32_t n_topics;
};

struct offset_delete_resp_partition {
    int32_t partition_index;
    int16_t error_code;
};

struct offset_delete_resp_topic {
    struct kstr name;
    struct offset_delete_resp_partition *partitions;
    int32_t n_partitions;
};

struct offset_delete_resp {
    int16_t error_code;
    int32_t throttle_time_ms;
    struct offset_delete_resp_topic *topics;
    int32_t n_topics;
};

int kmsg_decode_offset_delete(struct kreader *r, int16_t v, struct arena *a,
                              struct offset_delete_req *out);
void kmsg_encode_offset_delete(struct kwriter *w, int16_t v, const struct offset_delete_resp *resp);

#endif
