/* Controller requests and answers as bytes: the body of the CONTROLLER_REQUEST and
 * CONTROLLER_RESPONSE frames (replication/rpc.h) with which a node forwards a command to the
 * controller leader (controller/runtime.h) and gets its outcome back.
 *
 * Request body (big-endian, strings int16 length + bytes, null = length -1):
 *   i8 type, then by type
 *     CREATE_TOPIC       name string, n_partitions i32, rf i32, configs
 *     DELETE_TOPIC       name string
 *     CREATE_PARTITIONS  name string, n_total i32
 *     ALTER_CONFIGS      resource_type i8, resource string, configs
 *     REGISTER_BROKER    node_id i32, incarnation uuid, host string, port i32,
 *                        cluster_addr string, n_endpoints i32 (0..CTL_ENDPOINTS_MAX) and per endpoint listener
 *                        string, host string, port i32
 *     HEARTBEAT          node_id i32, incarnation uuid, caught_up i8 (0/1)
 *     ALLOC_PIDS         node_id i32, incarnation uuid, pid_floor i64 (>= 0)
 *     REASSIGN           name string, partition i32, n i32 (0 = cancel, 1..CTL_REPLICAS_MAX),
 *                        replicas i32[n]
 *     PARTITION_REPLICAS topic_id uuid, partition i32, n i32 (1..CTL_REPLICAS_MAX),
 *                        voters i32[n]
 *     VOTERS             add i8 (1 add, 0 remove), node i32 (>= 0)
 *     USER_SCRAM         the USER_SCRAM record's fields (controller/records.h), same layout
 *     ACL                the ACL record's fields, same layout
 *     QUOTA              a whole QUOTA record (type, version and fields, ctl_rec_encode)
 *   configs: i32 n (0..CTL_REQ_CONFIGS_MAX), n times key string, value nullable string.
 * Answer body (CTL_ANSWER_BYTES): error i16 (Kafka code), topic_id uuid (CREATE_TOPIC),
 * pid_first i64, pid_size i32 (ALLOC_PIDS; 0 otherwise).
 *
 * Decoding takes bytes from the network: lengths are checked against the bytes left and their
 * bounds, strings must not hold a NUL byte, the body must end exactly where the frame does.
 * Value checks (name rules, ranges) are the commands' (controller/commands.h): a well-formed
 * request with bad values decodes and is refused by the command with its Kafka error. */
#ifndef SP_CONTROLLER_REQUEST_H
#define SP_CONTROLLER_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/iobuf.h"
#include "controller/commands.h"
#include "kafka/wire.h"

#define CTL_REQ_CONFIGS_MAX 1000
#define CTL_REQ_STRING_MAX 32767 /* bytes of one string (int16 length) */
#define CTL_ANSWER_BYTES (2 + 16 + 8 + 4)

enum ctl_req_type {
    CTL_REQ_CREATE_TOPIC = 1,
    CTL_REQ_DELETE_TOPIC,
    CTL_REQ_CREATE_PARTITIONS,
    CTL_REQ_ALTER_CONFIGS,
    CTL_REQ_REGISTER_BROKER,
    CTL_REQ_HEARTBEAT,
    CTL_REQ_ALLOC_PIDS,
    CTL_REQ_REASSIGN,           /* AlterPartitionReassignments, one partition */
    CTL_REQ_PARTITION_REPLICAS, /* a partition leader reports its committed voters */
    CTL_REQ_VOTERS,             /* AddRaftVoter / RemoveRaftVoter of the metadata quorum */
    CTL_REQ_USER_SCRAM,         /* a SCRAM credential set or deleted */
    CTL_REQ_ACL,                /* an ACL binding added or removed */
    CTL_REQ_QUOTA,              /* a client quota set or removed */
    CTL_REQ_TYPE_END_,
};

/* One command. Built by the caller (pointers are the caller's) or by ctl_request_decode (then
 * every pointer points into storage the request owns: release with ctl_request_free). */
struct ctl_request {
    uint8_t type;                           /* enum ctl_req_type */
    const char *name;                       /* topic; ALTER_CONFIGS: the resource */
    int32_t n_partitions;                   /* CREATE_TOPIC: count; CREATE_PARTITIONS: total */
    int32_t rf;                             /* CREATE_TOPIC */
    int8_t resource_type;                   /* ALTER_CONFIGS: CTL_RESOURCE_* */
    const struct ctl_config_entry *configs; /* CREATE_TOPIC, ALTER_CONFIGS */
    size_t n_configs;
    struct ctl_broker_reg reg; /* REGISTER_BROKER: all; HEARTBEAT, ALLOC_PIDS: node_id and
                                  incarnation */
    bool caught_up;            /* HEARTBEAT */
    int64_t pid_floor;         /* ALLOC_PIDS: the block starts at or above this id */
    struct kuuid topic_id;     /* PARTITION_REPLICAS */
    int32_t partition;         /* REASSIGN, PARTITION_REPLICAS */
    int32_t n_replicas;        /* REASSIGN (0: cancel), PARTITION_REPLICAS */
    int32_t replicas[CTL_REPLICAS_MAX];
    bool voter_add;            /* VOTERS: add (else remove)... */
    int32_t voter;             /* ...this node */
    struct ctl_rec_user user;  /* USER_SCRAM */
    struct ctl_rec_acl acl;    /* ACL */
    struct ctl_rec_quota quota; /* QUOTA */
    void *owned_;              /* decoded storage, or NULL */
};

struct ctl_answer {
    int16_t error;       /* KERR_* */
    struct kuuid topic_id;
    int64_t pid_first;
    int32_t pid_size;
};

/* Whether req can be encoded: a known type, the strings its type needs non-NULL (a config
 * value may be NULL: a deletion), n_configs <= CTL_REQ_CONFIGS_MAX, every string at most
 * CTL_REQ_STRING_MAX bytes. Requests built from client input are checked with this first. */
bool ctl_request_well_formed(const struct ctl_request *req);
/* Appends the request body to out. req must be well formed (CHECK). */
void ctl_request_encode(const struct ctl_request *req, struct iobuf *out);
/* Decodes exactly len bytes into *out (zeroed first). Returns 0 (release with
 * ctl_request_free) or -ERR_CORRUPT (nothing to release). */
int ctl_request_decode(const uint8_t *p, size_t len, struct ctl_request *out);
void ctl_request_free(struct ctl_request *req);

/* The answer body: exactly CTL_ANSWER_BYTES bytes into buf. */
void ctl_answer_encode(const struct ctl_answer *a, uint8_t buf[CTL_ANSWER_BYTES]);
/* Returns 0 or -ERR_CORRUPT (wrong length). */
int ctl_answer_decode(const uint8_t *p, size_t len, struct ctl_answer *out);

const char *ctl_req_type_name(uint8_t type);

#endif
