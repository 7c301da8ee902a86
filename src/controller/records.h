/* The records of the __cluster_metadata log: one struct ctl_rec per Kafka record value.
 *
 * Every record value starts with int16 type and int16 version (0, or 1 for a PARTITION with a
 * reassignment target: a record without one is still written at version 0), then
 * the fields of its type, big-endian, strings as int16 length + bytes (Kafka STRING):
 *
 *   1 REGISTER_BROKER   node_id i32, incarnation uuid, host string, port i32,
 *                       cluster_addr string (host:port of the broker's Raft listener)
 *   2 BROKER_LIVENESS   node_id i32, fenced i8 (0/1)
 *   3 TOPIC             name string, topic_id uuid, n_partitions i32
 *   4 PARTITION         topic_id uuid, partition i32, leader i32 (-1 none), leader_epoch i32,
 *                       n_replicas i32, replicas i32[n_replicas] (the partition's voters;
 *                       replicas[0] is the preferred leader); version 1 adds n_target i32
 *                       (1..CTL_REPLICAS_MAX), target i32[n_target]: a reassignment in
 *                       progress (the replicas to end up with; version 0 = none)
 *   5 REMOVE_TOPIC      topic_id uuid
 *   6 CONFIG            resource_type i8 (2 topic, 4 broker: Kafka's ConfigResource types),
 *                       resource string (topic name; broker id in decimal, "" = cluster-wide
 *                       broker default), key string, value nullable string (null = delete)
 *   7 PRODUCER_IDS      broker_id i32, first i64, size i32
 *   8 VOTERS            n i32 (1..CTL_VOTERS_MAX), voters i32[n]: the voters the metadata
 *                       quorum is to have (`cluster voters add/remove`); its Raft leader moves
 *                       the quorum's configuration there (controller/runtime.c "Voter changes")
 *   9 USER_SCRAM        name string (1..CTL_USER_MAX bytes, no control character), mechanism i8
 *                       (1 SCRAM-SHA-256, 2 SCRAM-SHA-512: Kafka's codes), deleted i8 (0/1),
 *                       iterations i32 (4096..16384; 0 when deleted), salt bytes (i16 length,
 *                       1..CTL_SALT_MAX; 0 when deleted), stored_key bytes and server_key bytes
 *                       (i16 length: the mechanism's digest length, 32 or 64; 0 when deleted):
 *                       one SCRAM credential (RFC 5802), never a password
 *  10 ACL               resource_type i8 (Kafka's: 2 topic .. 7 user), resource_name string
 *                       (1..CTL_ACL_NAME_MAX), pattern_type i8 (3 LITERAL, 4 PREFIXED),
 *                       principal string (1..CTL_ACL_PRINCIPAL_MAX), host string
 *                       (1..CTL_HOST_MAX), operation i8 (2 ALL .. 14), permission i8 (2 DENY,
 *                       3 ALLOW), deleted i8 (0/1): one ACL binding added or removed
 *  11 BROKER_ENDPOINT   node_id i32, listener string (1..CTL_LISTENER_MAX, the listener's
 *                       name), host string (1..CTL_HOST_MAX), port i32 (1..65535): the advertised
 *                       address of one client listener of a registered broker; a registration's
 *                       REGISTER_BROKER is followed by one per listener (at most
 *                       CTL_ENDPOINTS_MAX), and Metadata gives a client of listener L the
 *                       brokers' L addresses
 *  12 QUOTA             user_kind i8 (0 not part of the entity, 1 named, 2 the default),
 *                       user string, client_kind i8 (the same for client-id), client string,
 *                       key string (producer_byte_rate, consumer_byte_rate,
 *                       request_percentage, controller_mutation_rate), value f64 (finite,
 *                       > 0; 0 when deleted), deleted i8 (0/1): one client quota set or
 *                       removed (AlterClientQuotas); names are empty unless named
 *  13 LEADERS           node_id i32, back i8 (0/1): leadership leaving or returning to one
 *                       broker, over every partition at once. back 0 (the broker is being
 *                       fenced, or re-registered): each partition node_id leads gets the first
 *                       of its replicas, in order, that is live and not node_id (-1: none);
 *                       back 1 (the broker is unfenced): each leaderless partition node_id
 *                       replicates gets the first of its replicas that is node_id or live. Each
 *                       partition it changes goes one leader epoch up; one already at
 *                       CTL_EPOCH_MAX is left as is. The rule is the image's
 *                       (ctl_image_leader_change), evaluated when the record is applied
 *
 * A PARTITION record carries the whole state of one partition: it both assigns a new partition
 * and changes an existing one (leader election, reassignment), so replay never merges deltas.
 * LEADERS is the one record whose effect depends on the image it meets: a broker's restart
 * moves the leadership of every partition it leads, away and back, and at 50,000 partitions
 * one PARTITION record each was 100,000 records (4.6 MB of metadata log, half a second of the
 * controller's thread) per restart. Its rule reads only what the records before it in the log
 * built, so every node still derives the same image from the same bytes.
 *
 * Decoding takes bytes from the log (disk or network): never trusted. ctl_rec_decode checks
 * every length against the bytes left, every count against its bound (before anything is
 * stored: a record decodes into a fixed-size struct, nothing is allocated), that the value ends
 * exactly where the record does, and the record's own consistency (ctl_rec_valid). Strings are
 * copied NUL-terminated, so a string holding a NUL byte is corrupt. */
#ifndef SP_CONTROLLER_RECORDS_H
#define SP_CONTROLLER_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/iobuf.h"
#include "kafka/names.h"
#include "kafka/wire.h"

#define CTL_NAME_MAX KTOPIC_NAME_MAX /* topic name bytes (Kafka's limit) */
#define CTL_HOST_MAX 255          /* advertised host bytes */
#define CTL_ADDR_MAX 255          /* cluster (Raft) address bytes */
#define CTL_CONFIG_KEY_MAX 255    /* config key bytes */
#define CTL_CONFIG_VALUE_MAX 1024 /* config value bytes */
#define CTL_REPLICAS_MAX 16       /* replicas of one partition */
#define CTL_VOTERS_MAX 7          /* voters of the metadata quorum (RAFT_VOTERS_MAX) */
#define CTL_USER_MAX 255          /* SCRAM user name bytes */
#define CTL_SALT_MAX 64           /* SCRAM salt bytes */
#define CTL_KEY_MAX 64            /* SCRAM StoredKey / ServerKey bytes (SHA-512) */
#define CTL_SCRAM_SHA256 1
#define CTL_SCRAM_SHA512 2
#define CTL_SCRAM_ITER_MIN 4096
#define CTL_SCRAM_ITER_MAX 16384
#define CTL_ACL_NAME_MAX 255      /* ACL resource name bytes */
#define CTL_ACL_PRINCIPAL_MAX 255 /* ACL principal bytes */
#define CTL_LISTENER_MAX 63       /* listener name bytes */
#define CTL_ENDPOINTS_MAX 8       /* client listeners of one broker */
#define CTL_CLIENT_ID_MAX 255     /* quota entity client-id bytes */
#define CTL_QUOTA_KEY_MAX 63      /* quota key bytes */
#define CTL_QUOTA_NONE 0          /* quota entity part kinds */
#define CTL_QUOTA_NAMED 1
#define CTL_QUOTA_DEFAULT 2
#define CTL_PARTITIONS_MAX 10000  /* partitions of one topic */
#define CTL_PID_BLOCK_MAX (1 << 20)
#define CTL_EPOCH_MAX (INT32_MAX - 1) /* largest leader epoch; commands never bump past it */

#define CTL_RESOURCE_TOPIC 2
#define CTL_RESOURCE_BROKER 4

enum ctl_rec_type {
    CTL_REC_REGISTER_BROKER = 1,
    CTL_REC_BROKER_LIVENESS = 2,
    CTL_REC_TOPIC = 3,
    CTL_REC_PARTITION = 4,
    CTL_REC_REMOVE_TOPIC = 5,
    CTL_REC_CONFIG = 6,
    CTL_REC_PRODUCER_IDS = 7,
    CTL_REC_VOTERS = 8,
    CTL_REC_USER_SCRAM = 9,
    CTL_REC_ACL = 10,
    CTL_REC_BROKER_ENDPOINT = 11,
    CTL_REC_QUOTA = 12,
    CTL_REC_LEADERS = 13,
};

struct ctl_rec_broker {
    int32_t node_id;                     /* >= 0 */
    struct kuuid incarnation;            /* changes on every broker start */
    char host[CTL_HOST_MAX + 1];         /* non-empty */
    int32_t port;                        /* 1..65535, for clients */
    char cluster_addr[CTL_ADDR_MAX + 1]; /* may be empty (no Raft listener) */
};

struct ctl_rec_liveness {
    int32_t node_id;
    bool fenced;
};

struct ctl_rec_topic {
    char name[CTL_NAME_MAX + 1]; /* 1..249 bytes of [a-zA-Z0-9._-], not "." or ".." */
    struct kuuid id;             /* not all zero */
    int32_t n_partitions;        /* 1..CTL_PARTITIONS_MAX */
};

struct ctl_rec_partition {
    struct kuuid topic_id;
    int32_t partition;                  /* 0..CTL_PARTITIONS_MAX-1 */
    int32_t leader;                     /* -1, or one of replicas */
    int32_t leader_epoch;               /* 0..CTL_EPOCH_MAX */
    int32_t n_replicas;                 /* 1..CTL_REPLICAS_MAX */
    int32_t replicas[CTL_REPLICAS_MAX]; /* distinct ids >= 0 */
    int32_t n_target;                   /* 0: no reassignment; else 1..CTL_REPLICAS_MAX */
    int32_t target[CTL_REPLICAS_MAX];   /* distinct ids >= 0, not equal to replicas as a set */
};

struct ctl_rec_remove_topic {
    struct kuuid id;
};

struct ctl_rec_config {
    int8_t resource_type;                 /* CTL_RESOURCE_* */
    char resource[CTL_NAME_MAX + 1];      /* topic name, or "" / decimal broker id */
    char key[CTL_CONFIG_KEY_MAX + 1];     /* non-empty */
    bool deleted;                         /* value is null */
    char value[CTL_CONFIG_VALUE_MAX + 1]; /* "" when deleted */
};

struct ctl_rec_pids {
    int32_t broker_id; /* who asked for the block */
    int64_t first;     /* >= 0; first + size does not overflow */
    int32_t size;      /* 1..CTL_PID_BLOCK_MAX */
};

struct ctl_rec_voters {
    int32_t n;                       /* 1..CTL_VOTERS_MAX */
    int32_t ids[CTL_VOTERS_MAX];     /* distinct ids >= 0 */
};

struct ctl_rec_user {
    char name[CTL_USER_MAX + 1];
    int8_t mechanism; /* CTL_SCRAM_SHA256 / CTL_SCRAM_SHA512 */
    bool deleted;     /* the user's credential for this mechanism goes */
    int32_t iterations;
    uint8_t salt_len;
    uint8_t key_len; /* 32 (SHA-256) or 64 (SHA-512); 0 when deleted */
    uint8_t salt[CTL_SALT_MAX];
    uint8_t stored_key[CTL_KEY_MAX];
    uint8_t server_key[CTL_KEY_MAX];
};

struct ctl_rec_acl {
    int8_t resource_type; /* 2..7 */
    int8_t pattern_type;  /* 3 LITERAL, 4 PREFIXED */
    int8_t operation;     /* 2..14 */
    int8_t permission;    /* 2 DENY, 3 ALLOW */
    bool deleted;
    char resource_name[CTL_ACL_NAME_MAX + 1];
    char principal[CTL_ACL_PRINCIPAL_MAX + 1];
    char host[CTL_HOST_MAX + 1];
};

struct ctl_rec_endpoint {
    int32_t node_id;
    char listener[CTL_LISTENER_MAX + 1];
    char host[CTL_HOST_MAX + 1];
    int32_t port;
};

struct ctl_rec_quota {
    int8_t user_kind;   /* CTL_QUOTA_NONE, _NAMED, _DEFAULT */
    int8_t client_kind;
    bool deleted;
    char user[CTL_USER_MAX + 1];        /* "" unless user_kind is NAMED */
    char client[CTL_CLIENT_ID_MAX + 1]; /* "" unless client_kind is NAMED */
    char key[CTL_QUOTA_KEY_MAX + 1];
    double value;
};

struct ctl_rec_leaders {
    int32_t node_id; /* >= 0 */
    bool back;       /* false: leadership leaves node_id; true: leaderless partitions get one */
};

/* Whether key is a client quota key Kafka defines (the four of QUOTA above). */
bool ctl_quota_key_known(const char *key);

struct ctl_rec {
    enum ctl_rec_type type;
    union {
        struct ctl_rec_broker broker;
        struct ctl_rec_liveness liveness;
        struct ctl_rec_topic topic;
        struct ctl_rec_partition partition;
        struct ctl_rec_remove_topic remove_topic;
        struct ctl_rec_config config;
        struct ctl_rec_pids pids;
        struct ctl_rec_voters voters;
        struct ctl_rec_user user;
        struct ctl_rec_acl acl;
        struct ctl_rec_endpoint endpoint;
        struct ctl_rec_quota quota;
        struct ctl_rec_leaders leaders;
    };
};

/* Kafka's topic name rule: 1..249 bytes of [a-zA-Z0-9._-], and not "." or "..". */
bool ctl_topic_name_valid(const char *name, size_t len);
bool ctl_uuid_is_zero(struct kuuid u);
/* The record is internally consistent (bounds, distinct replicas, leader among them, ...). */
bool ctl_rec_valid(const struct ctl_rec *r);
/* A SCRAM user name as records carry it: 1..CTL_USER_MAX bytes, none below 0x20 or 0x7f. */
bool ctl_user_name_valid(const char *name, size_t len);
/* The digest length of a mechanism code (32, 64), 0 for an unknown one. */
int ctl_scram_key_len(int8_t mechanism);

/* Appends r's value bytes to w. r must be valid (CHECK): records are built by our own code. */
void ctl_rec_encode(struct kwriter *w, const struct ctl_rec *r);
/* Decodes exactly len bytes into *out. Returns 0, -ERR_CORRUPT (malformed, truncated, trailing
 * bytes, inconsistent) or -ERR_UNSUPPORTED (unknown type or version). *out is zeroed first. */
int ctl_rec_decode(const uint8_t *p, size_t len, struct ctl_rec *out);

/* A growable list of records; records produced by commands and by snapshots. */
struct ctl_recs {
    struct ctl_rec *v; /* owned */
    size_t n;
    size_t cap;
};

void ctl_recs_init(struct ctl_recs *l);
void ctl_recs_free(struct ctl_recs *l); /* leaves an empty, reusable list */
/* Appends a zeroed record of the given type and returns it (valid until the next push). */
struct ctl_rec *ctl_recs_push(struct ctl_recs *l, enum ctl_rec_type type);

/* A self-framed form of a list (int32 length + value, per record), for tests, fuzzing and
 * snapshot files; the log itself frames records as Kafka records inside batches. */
void ctl_recs_encode(const struct ctl_recs *l, struct iobuf *out);
/* Appends the decoded records to *l. At most max_records are accepted (-ERR_TOO_LARGE beyond),
 * so a hostile count cannot grow memory without bound. Returns 0 or a ctl_rec_decode error;
 * on error *l holds the records decoded before the bad one. */
int ctl_recs_decode(const uint8_t *p, size_t len, size_t max_records, struct ctl_recs *l);

#endif
