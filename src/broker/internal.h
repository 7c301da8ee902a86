/* Shared state of the broker/ files. Not a public interface: server/ uses broker.h only.
 *
 * Ownership: the broker owns topics (strmap by name); a topic owns its partitions; a partition
 * owns its plog. Parked requests (acks=all produces waiting for fsync, long-polling fetches)
 * are owned by themselves and linked into the partitions they wait on; deleting a partition
 * completes them first, so no parked request ever points to a freed partition. */
#ifndef SP_BROKER_INTERNAL_H
#define SP_BROKER_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/iobuf.h"
#include "base/list.h"
#include "base/strmap.h"
#include "broker/broker.h"
#include "broker/config.h"
#include "broker/metrics.h"
#include "broker/topic_config.h"
#include "kafka/api.h"
#include "kafka/msg.h"
#include "kafka/names.h"
#include "kafka/wire.h"
#include "net/conn.h"
#include "net/reactor.h"

struct broker_producers;
struct catalog;
struct cleaner;
struct cluster;
struct coordinator;
struct elect;
struct flusher;
struct kvstore;
struct partition_producers;
struct plog;

#define TOPIC_NAME_MAX KTOPIC_NAME_MAX
#define KV_FLUSH_MS 1000 /* the store's buffered records reach its file at least this often */

struct partition {
    struct topic *topic;             /* owner */
    int32_t index;                   /* partition number */
    struct plog *log;                /* owned */
    int32_t leader_epoch;            /* Raft term of this (single-voter) group */
    struct list_node acks_waiters;   /* struct acks_wait, in offset order */
    struct list_node fetch_watchers; /* struct fetch_watch */
    int64_t unflushed_records;       /* acks=0/1 records appended since the last flush request */
    size_t hidden_bytes;             /* bytes appended and not yet below HW (upper bound) */
    int64_t last_flush_ms;           /* monotonic time of the last flush request */
    uint64_t records_in;             /* records appended since start (metrics) */
    uint64_t bytes_in;               /* batch bytes appended since start */
    struct partition_producers *producers; /* idempotent-producer state (broker/producers.h) */
    struct host_group *group; /* its Raft group while one runs here (cluster.c), else NULL */
    bool coord_loading;       /* __consumer_offsets led here: its groups replay once ... */
    int64_t coord_load_at;    /* ... the commit index reaches this (the log's end when it won) */
};

struct topic {
    char *name;               /* owned; also the strmap key (copied there) */
    uint8_t id[16];           /* topic id */
    bool internal;            /* __consumer_offsets and friends */
    struct partition **parts; /* owned, n_parts entries */
    int32_t n_parts;
    struct topic_config_kv *overrides; /* owned strings, n_overrides entries */
    int n_overrides;
    struct topic_config cfg; /* effective config */
};

struct broker {
    struct reactor *r;
    const struct broker_config *cfg;
    struct catalog *cat;
    struct flusher *fl;
    struct fdcache *files; /* open segment and directory descriptors of every partition log */
    struct kvstore *kv;    /* the partitions' small state: recovery points, leader-epoch
                            * checkpoints, Raft hard states (storage/kvstore.h) */
    struct reactor_timer kv_timer; /* writes out its buffered records (KV_FLUSH_MS) */
    struct listener *lis;
    struct strmap topics; /* name -> struct topic * */
    int32_t total_partitions;
    char cluster_id[32];
    int advertised_port;  /* cfg's, or the bound port when configured as 0 */
    struct arena scratch; /* per-request decode memory, reset after each request */
    uint64_t recompressed_batches;   /* batches produce stored in the topic's codec */
    uint64_t recompressed_bytes_in;  /* ... their bytes as they came */
    uint64_t recompressed_bytes_out; /* ... and as they were stored */
    uint64_t sasl_failures;  /* SASL exchanges that failed (sasl.c) */
    uint64_t sasl_successes; /* SASL exchanges that authenticated */
    struct list_node sasl_held; /* answers to failed exchanges not sent yet (sasl.c) */
    struct reactor_timer retention_timer;
    struct reactor_timer flush_timer; /* flush.ms: armed only while some topic sets it */
    int64_t flush_tick_ms;            /* its period, 0 when off */
    int flusher_fd;
    struct kreq_stats req_stats;        /* per-API requests, errors, latency (metrics.h) */
    struct broker_producers *producers; /* producer ids, expiry (broker/producers.h) */
    struct cleaner *cleaner;            /* log compaction (NULL when log.cleaner.enable=false) */
    struct reactor_timer cleaner_timer; /* every log.cleaner.backoff.ms: offer logs */
    bool stopping;
    bool startup_clean;         /* the previous run shut down cleanly */
    struct coordinator *groups; /* consumer groups (groups.c) */
    struct cluster *cluster;    /* the quorum, transport and replicas (cluster.h); NULL only
                                 * before cluster_start and after cluster_stop */
    struct authz *authz;        /* ACL checks (authz.h); NULL: authorizer off */
    struct quota_state *quotas; /* client quota rates (quotas.h); NULL until a quota applies */
    struct list_node held;      /* responses held for a quota (response_send_after) */
    struct elect *elect;        /* ElectLeaders in flight (elect.h); NULL until the first */
    struct schemas *schemas;    /* the schema registry (schemas.h); NULL until first used */
    struct topic_ready *topic_ready; /* CreateTopics/CreatePartitions answers waiting for
                                      * leaders (topic_ready.h); NULL until the first */
};

/* Per-connection state. */
struct session {
    struct broker *b;
    struct conn *conn;
    struct list_node fetch_ops; /* parked fetches of this connection (struct fetch_op) */
    struct sasl_session *sasl;  /* a SASL listener's connection: its exchange (sasl.c) */
    char acl_host[64];          /* the client's address for ACLs; "" until the first check */
};

/* One request being handled. */
struct request {
    struct broker *b;
    struct session *s;
    struct conn *conn;
    struct kreq_header hdr;
    struct kreader body; /* positioned after the header */
    struct arena *arena; /* scratch: valid until the handler returns */
    uint8_t *frame;      /* the whole frame (mutable: produce rewrites batch headers) */
    size_t frame_len;
};

/* A response under construction: size prefix + response header + body. */
struct response {
    struct iobuf buf;
    struct kwriter w;
    size_t size_pos;
    int16_t api_key;          /* the request's, for its metrics */
    int64_t recv_ns;          /* when its frame arrived */
    struct kreq_stats *stats; /* where it is counted (NULL: nowhere) */
    uint64_t errors_before;   /* kw_error_codes_written() at response_begin */
};

void response_begin(struct response *resp, const struct kreq_header *h);
/* Patches the size and hands the bytes to the slot. */
void response_send(struct response *resp, struct conn_slot *slot);
/* As response_send, delay_ms later (a client over its quota: broker/quotas.h); delay_ms <= 0
 * sends now. Held responses are sent when the broker stops. */
void response_send_after(struct broker *b, struct response *resp, struct conn_slot *slot,
                         int64_t delay_ms);
/* Patches the size prefix and counts the response in its API's metrics: what response_send does
 * before handing the bytes over (for a caller that sends them itself, later). */
void response_seal(struct response *resp);

/* Handlers: decode the body, reserve a slot (unless no response is due) and answer now or
 * later. Return 0, or -ERR_CORRUPT for a malformed body (the caller closes the connection;
 * no slot may have been reserved in that case). */
int handle_api_versions(struct request *req);
int handle_metadata(struct request *req);
int handle_produce(struct request *req);
int handle_fetch(struct request *req);
int handle_list_offsets(struct request *req);
int handle_init_producer_id(struct request *req); /* producers.c */
int handle_create_topics(struct request *req);
int handle_delete_topics(struct request *req);
int handle_create_partitions(struct request *req);
int handle_describe_configs(struct request *req);
int handle_alter_configs(struct request *req);
int handle_incremental_alter_configs(struct request *req); /* admin.c */
int handle_describe_log_dirs(struct request *req);         /* admin.c */
int handle_describe_cluster(struct request *req);          /* metadata.c */
int handle_alter_partition_reassignments(struct request *req); /* reassign.c */
int handle_list_partition_reassignments(struct request *req);  /* reassign.c */
int handle_add_raft_voter(struct request *req);                /* voters.c */
int handle_sasl_handshake(struct request *req);                /* sasl.c */
int handle_describe_acls(struct request *req);                 /* acls.c */
int handle_create_acls(struct request *req);                   /* acls.c */
int handle_delete_acls(struct request *req);                   /* acls.c */
int handle_sasl_authenticate(struct request *req);             /* sasl.c */
int handle_describe_user_scram_credentials(struct request *req); /* users.c */
int handle_alter_user_scram_credentials(struct request *req);    /* users.c */
/* The USER_SCRAM controller command for one credential of name (untrusted bytes), as
 * AlterUserScramCredentials carries it: a deletion (salted NULL) or an upsertion, whose
 * salted password becomes StoredKey and ServerKey here (security/scram.h). Returns KERR_NONE
 * with *cmd filled, or the Kafka error: UNACCEPTABLE_CREDENTIAL (name, iterations, salt or
 * salted password), UNSUPPORTED_SASL_MECHANISM, UNKNOWN_SERVER_ERROR (OpenSSL failed).
 * users.c; the admin listener's /v1/users (admin_users.c) builds its commands with it too. */
struct ctl_request;
int16_t users_command(struct ctl_request *cmd, struct kstr name, int8_t mech, int32_t iterations,
                      struct kbytes salt, const struct kbytes *salted);
int handle_remove_raft_voter(struct request *req);             /* voters.c */
int handle_offset_for_leader_epoch(struct request *req);   /* offsets.c */
int handle_elect_leaders(struct request *req);             /* elect.c */
int handle_delete_records(struct request *req);
int handle_find_coordinator(struct request *req);
/* FindCoordinator answers, for both modes: not available (why in the error message), or this
 * broker. */
struct find_coordinator_resp;
void find_coordinator_unavailable(struct find_coordinator_resp *resp, const char *why);
void find_coordinator_self(const struct request *req, struct find_coordinator_resp *resp);
/* The address Metadata and FindCoordinator give a client on c: its listener's advertised one
 * (broker.c). */
void broker_advertised(const struct broker *b, const struct conn *c, struct kstr *host,
                       int32_t *port);
/* groups.c */
int handle_join_group(struct request *req);
int handle_sync_group(struct request *req);
int handle_heartbeat(struct request *req);
int handle_leave_group(struct request *req);
int handle_offset_commit(struct request *req);
int handle_offset_fetch(struct request *req);
int handle_describe_groups(struct request *req);
int handle_list_groups(struct request *req);
int handle_delete_groups(struct request *req);
int handle_offset_delete(struct request *req);

/* ---- groups.c: the group coordinator's storage ---- */

#define OFFSETS_TOPIC "__consumer_offsets"

/* Creates the coordinator and replays __consumer_offsets into it (when the topic exists).
 * Returns 0 or a negative code with err set. */
int groups_start(struct broker *b, char *err, size_t errcap);
/* Frees the coordinator; call after the logs are closed (appends in flight have completed). */
void groups_stop(struct broker *b);
/* This broker's replica of __consumer_offsets-<index> became the Raft leader
 * (leading) or stopped being it. Its groups are replayed once everything the new leader's log
 * held when it won is committed (groups_offsets_commit), and dropped when it stops leading. */
void groups_offsets_leader(struct broker *b, struct partition *p, bool leading);
/* The commit index of __consumer_offsets-<index>'s Raft group advanced. */
void groups_offsets_commit(struct broker *b, struct partition *p, int64_t commit);
/* Its topic configs when __consumer_offsets is created (compact, 100 MiB segments). */
#define OFFSETS_TOPIC_N_OVERRIDES 2
extern const struct topic_config_kv offsets_topic_overrides[OFFSETS_TOPIC_N_OVERRIDES];

/* ---- schemas.c: the schema registry's hooks ---- */

/* The commit index of _schemas-0's local replica advanced: apply, answer the write waiting. */
void schemas_commit(struct broker *b, struct partition *p, int64_t commit);
/* This broker's replica of _schemas-0 became the leader, or stopped being it. */
void schemas_leader(struct broker *b, struct partition *p, bool leading);
/* The metadata image changed: with `_schemas` and no replica of it here, the store starts
 * following it through the leader. */
void schemas_image_changed(struct broker *b);
/* An RPC_BROKER_REQUEST / RESPONSE frame whose body starts with SCHEMAS_RPC_KIND or
 * SCHEMAS_FOLLOW_KIND (broker/schemas_rpc.h). */
void schemas_deliver(struct broker *b, int32_t from, uint8_t type, uint64_t request_id,
                     const uint8_t *body, size_t len);
/* Answers every request still waiting (50003) and frees the service. */
void schemas_stop(struct broker *b);
/* The registry's families for /metrics (broker/metrics.h lists them). */
void schemas_metrics_write(struct broker *b, struct strbuf *out);
/* Whether a live version of subject uses schema id, as this broker's store knows it now
 * (after applying what its replica of _schemas has committed). */
bool schemas_subject_uses(struct broker *b, const char *subject, int32_t id);

/* ---- log_scan.c: reading a partition's own log back ---- */

struct krecord;
/* One record of a data batch, at its offset. */
typedef void (*log_record_fn)(void *arg, const struct krecord *rec, int64_t offset);
struct log_scan_stats {
    int batches; /* read (control batches included) */
    int skipped; /* that did not validate or decompress, or whose records ran short */
    int64_t next; /* the offset after the last batch read */
};
/* Calls fn for every record of the data batches of p's log from `from` (the log start if
 * earlier) up to `to` (exclusive; batches are read whole: pass the high watermark), on this
 * thread. *st is filled (zero it first). Returns 0, or a negative code when the log could not
 * be read (st->next then says how far it got). */
int partition_scan(struct partition *p, int64_t from, int64_t to, log_record_fn fn, void *arg,
                   struct log_scan_stats *st);
/* Bytes read from a log: whole batches, as stored. */
struct log_read_buf {
    uint8_t *p; /* owned by the caller (mem_free), grown as needed and reused across reads */
    size_t cap;
    size_t len;   /* bytes of whole batches read */
    int64_t next; /* the offset after the last batch read (the start of the read if none) */
};
/* Reads the batches of p's log from offset (the log start if earlier) below `to`, at most
 * max_bytes of them unless the first alone is larger (plog_read), into *out. Returns 0 (len 0
 * when nothing lies below `to`), -ERR_OUT_OF_RANGE (offset beyond the log end) or -errno. */
int partition_read_batches(struct partition *p, int64_t offset, int64_t to, size_t max_bytes,
                           struct log_read_buf *out);
/* As partition_scan, over batches in memory (buf[0, len), as partition_read_batches gives
 * them: bytes from another broker are checked the same way); stops at a batch cut short. */
void log_scan_buffer(const uint8_t *buf, size_t len, log_record_fn fn, void *arg,
                     struct log_scan_stats *st);

/* ApiVersions error reply for an unsupported version (KIP-511). */
void api_versions_reply_unsupported(struct request *req);

/* ---- topics.c: the topic registry ---- */

/* The broker's own topics (__consumer_offsets, __transaction_state, __cluster_metadata):
 * listed as internal in Metadata, written only by the broker, never deleted by a client. */
bool topic_name_internal(const char *name);
/* Validates a topic name as Kafka does: 1..249 of [a-zA-Z0-9._-], not "." or "..". */
bool topic_name_valid(struct kstr name, char *err, size_t errcap);
/* Whether the name (a struct kstr) of element i of an array of stride-byte elements, the first
 * of whose names is at names, repeats one of elements 0..i-1 (duplicate topics in a request). */
bool kstr_dup_before(const struct kstr *names, int32_t i, size_t stride);
/* admin.c: checks the configs of a CreateTopics or AlterConfigs resource (names non-empty, keys
 * known, values valid). Returns KERR_NONE and *out (n entries, NUL-terminated copies in a; a null
 * value stays NULL), or the error with a message in err. */
int16_t admin_check_configs(struct arena *a, const struct config_entry *cfgs, int32_t n,
                            struct topic_config_kv **out, char *err, size_t errcap);
/* AlterConfigs: KERR_NONE for a topic resource; INVALID_REQUEST with the reason in err for a
 * broker (static configuration) or any other resource type. */
int16_t admin_alter_resource_check(int8_t resource_type, char *err, size_t errcap);
struct topic *topic_find(struct broker *b, struct kstr name);
/* The name of the topic whose id is id (the metadata image's id, which Metadata gives clients),
 * or KSTR_NULL if there is none. The name is valid
 * until the topic goes away: copy it to keep it past the request. */
struct kstr topic_name_by_id(struct broker *b, struct kuuid id);
struct partition *partition_find(struct broker *b, struct kstr topic, int32_t index);
/* Loads every topic of the catalog and opens (recovers) its logs. */
int topics_load(struct broker *b, struct broker_startup *info);
/* Creates the local topic of id (the metadata image's; persisted in the catalog, logs
 * created). overrides must be validated. Returns 0 or a negative code with err set. */
int topic_create(struct broker *b, struct kstr name, const uint8_t id[16], int32_t partitions,
                 const struct topic_config_kv *overrides, int n_overrides, char *err,
                 size_t errcap);
/* Gives the local topic the image's id (a catalog written before local topics took it). Returns
 * 0 or a negative code (the catalog not rewritten; the old id stays). */
int topic_set_id(struct broker *b, struct topic *t, const uint8_t id[16]);
/* Deletes a topic: completes its parked requests, removes it from the catalog and its data. */
int topic_delete(struct broker *b, struct topic *t);
/* Grows a topic to `count` partitions. */
int topic_add_partitions(struct broker *b, struct topic *t, int32_t count, char *err,
                         size_t errcap);
/* Replaces the topic's overrides (validated), persists and applies them. */
int topic_set_overrides(struct broker *b, struct topic *t, const struct topic_config_kv *kvs, int n,
                        char *err, size_t errcap);
/* Closes every topic's logs (clean shutdown) and frees the registry. */
void topics_close_all(struct broker *b);
/* Applies retention and segment.ms to every partition. */
void topics_apply_retention(struct broker *b);
/* Offers every partition to the log cleaner and starts passes on idle cleaner threads. */
void topics_offer_cleaning(struct broker *b);
/* Re-arms (or stops) the flush.ms timer after topic configs changed. */
void flush_timer_update(struct broker *b);

/* ---- flush policy (produce.c) ---- */

/* Records that n acks=0/1 records were appended to p, and asks for a sync when the topic's
 * flush.messages is reached. */
void flush_policy_appended(struct partition *p, int64_t n);
/* Timer work: syncs partitions whose unflushed data is older than their flush.ms. */
void flush_policy_tick(struct broker *b);

/* ---- produce.c ---- */

/* Fails every acks=all wait on p (partition going away). */
void produce_fail_waiters(struct partition *p, int16_t error_code);
/* The same, except the waits of proposals made in term (>= 0; -1: none spared): a leadership of
 * this node in term is reported after the core became leader, and what was proposed in term
 * meanwhile is still this leader's to settle (failing it would have a client retry, and
 * duplicate, a record that commits). */
void produce_fail_waiters_but(struct partition *p, int64_t term, int16_t error_code);
/* p's Raft group committed up to commit (HW = commit + 1, set by the replica):
 * settles the acks=all waits it covers (replica_proposal_state: COMMITTED -> success, LOST ->
 * NOT_LEADER_OR_FOLLOWER) and wakes parked fetches. */
struct replica;
void produce_raft_commit(struct partition *p, const struct replica *rp, int64_t commit);
/* KERR_NONE if this broker leads p's Raft group now, else NOT_LEADER_OR_FOLLOWER (or
 * KAFKA_STORAGE_ERROR when the local replica failed on a disk error). */
int16_t partition_leader_check(struct broker *b, struct partition *p);
/* For reads (Fetch, ListOffsets): partition_leader_check, except that a local replica that
 * failed on a disk error and is its group's only voter still serves what it committed
 * (KERR_NONE): nobody else holds that data (as a single node always did). */
int16_t partition_read_check(struct broker *b, struct partition *p);
/* Whether g, this broker's replica of a partition (cluster_group; NULL: none here), is such a
 * failed sole replica (Metadata then names this broker leader, with KAFKA_STORAGE_ERROR). */
bool group_serves_failed(struct broker *b, const struct host_group *g);
/* Moves p's log start up to new_start (DeleteRecords; new_start <= HW), through p's Raft replica
 * (replica_compact: clamped to what Raft allows, rounded down to a batch start), so the Raft log
 * start moves with the plog's; -ERR_NOT_LEADER without a local Raft group. Returns 0 (read
 * plog_start_offset for the result) or a negative code. */
int partition_truncate_prefix(struct broker *b, struct partition *p, int64_t new_start);
/* Applies retention to p (the retention timer): plog_apply_retention's deletions, through
 * p's Raft replica (plog_retention_start, then replica_compact),
 * and nothing while p has no local Raft group (the plog is the group's log). Every replica
 * applies it on its own, as Kafka's do. */
void partition_apply_retention(struct broker *b, struct partition *p, int64_t now_ms);

/* Appends a batch the broker built itself (e.g. group metadata, committed offsets) to p, as
 * an acks=all write: cb(arg, rc, base_offset) runs once the batch is durable (rc 0: committed by a
 * durable majority of p's Raft group) or the write failed later (rc < 0;
 * also when the partition goes away or its leadership is lost). Returns 0 if the append was
 * made (cb will run), or a negative code (nothing written, cb will not run; -ERR_NOT_LEADER when
 * this broker does not lead p). The batch must be valid (kbatch_validate);
 * its baseOffset and leader epoch are rewritten in place. */
typedef void (*internal_append_cb)(void *arg, int rc, int64_t base_offset);
int broker_internal_append(struct broker *b, struct partition *p, uint8_t *batch, size_t len,
                           internal_append_cb cb, void *arg);

/* ---- fetch.c ---- */

/* New data is visible on p (HW advanced by `bytes`): wake parked fetches. */
void fetch_notify(struct partition *p, size_t bytes);
/* Completes every parked fetch that watches p now (partition going away). */
void fetch_wake_all(struct partition *p);
/* Cancels the parked fetches of a closing connection. */
void fetch_cancel_session(struct session *s);

/* ---- errors ---- */

/* Maps an internal error (storage) to the Kafka error code for a produce/fetch response. */
int16_t kafka_error_from_rc(int rc);

#endif
