/* Test-side codecs for the Kafka messages of kafka/msg.h, written from Kafka's JSON message
 * definitions independently of kafka/msg_*.c: request encoders (what a client sends), response
 * decoders (what a client reads), and sample messages for every API and version in range.
 *
 * Used by the kmsg_* unit tests and by tests/fuzz (seed corpus). Nothing here calls the test
 * runner, so it links into other programs too. */
#ifndef SP_TEST_KMSG_TESTENC_H
#define SP_TEST_KMSG_TESTENC_H

#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "kafka/msg.h"
#include "kafka/msg_group.h"
#include "kafka/msg_producer.h"
#include "kafka/wire.h"

union kmsg_any_req {
    struct api_versions_req api_versions;
    struct metadata_req metadata;
    struct produce_req produce;
    struct fetch_req fetch;
    struct list_offsets_req list_offsets;
    struct create_topics_req create_topics;
    struct delete_topics_req delete_topics;
    struct create_partitions_req create_partitions;
    struct describe_configs_req describe_configs;
    struct alter_configs_req alter_configs;
    struct delete_records_req delete_records;
    struct init_producer_id_req init_producer_id;
    struct find_coordinator_req find_coordinator;
    struct join_group_req join_group;
    struct sync_group_req sync_group;
    struct heartbeat_req heartbeat;
    struct leave_group_req leave_group;
    struct offset_commit_req offset_commit;
    struct offset_fetch_req offset_fetch;
    struct describe_groups_req describe_groups;
    struct list_groups_req list_groups;
    struct delete_groups_req delete_groups;
    struct offset_delete_req offset_delete;
    struct incremental_alter_configs_req incremental_alter_configs;
    struct describe_cluster_req describe_cluster;
    struct describe_log_dirs_req describe_log_dirs;
    struct offset_for_leader_epoch_req offset_for_leader_epoch;
    struct alter_reassign_req alter_reassignments;
    struct list_reassign_req list_reassignments;
    struct elect_leaders_req elect_leaders;
    struct raft_voter_req raft_voter; /* AddRaftVoter, RemoveRaftVoter */
    struct sasl_handshake_req sasl_handshake;
    struct sasl_authenticate_req sasl_authenticate;
    struct describe_scram_req describe_scram;
    struct alter_scram_req alter_scram;
    struct describe_quotas_req describe_quotas;
    struct alter_quotas_req alter_quotas;
    struct describe_acls_req describe_acls;
    struct create_acls_req create_acls;
    struct delete_acls_req delete_acls;
};

union kmsg_any_resp {
    struct api_versions_resp api_versions;
    struct metadata_resp metadata;
    struct produce_resp produce;
    struct fetch_resp fetch;
    struct list_offsets_resp list_offsets;
    struct create_topics_resp create_topics;
    struct delete_topics_resp delete_topics;
    struct create_partitions_resp create_partitions;
    struct describe_configs_resp describe_configs;
    struct alter_configs_resp alter_configs;
    struct delete_records_resp delete_records;
    struct init_producer_id_resp init_producer_id;
    struct find_coordinator_resp find_coordinator;
    struct join_group_resp join_group;
    struct sync_group_resp sync_group;
    struct heartbeat_resp heartbeat;
    struct leave_group_resp leave_group;
    struct offset_commit_resp offset_commit;
    struct offset_fetch_resp offset_fetch;
    struct describe_groups_resp describe_groups;
    struct list_groups_resp list_groups;
    struct delete_groups_resp delete_groups;
    struct offset_delete_resp offset_delete;
    struct alter_configs_resp incremental_alter_configs;
    struct describe_cluster_resp describe_cluster;
    struct describe_log_dirs_resp describe_log_dirs;
    struct offset_for_leader_epoch_resp offset_for_leader_epoch;
    struct alter_reassign_resp alter_reassignments;
    struct list_reassign_resp list_reassignments;
    struct elect_leaders_resp elect_leaders;
    struct raft_voter_resp raft_voter;
    struct sasl_handshake_resp sasl_handshake;
    struct sasl_authenticate_resp sasl_authenticate;
    struct describe_scram_resp describe_scram;
    struct alter_scram_resp alter_scram;
    struct describe_quotas_resp describe_quotas;
    struct alter_quotas_resp alter_quotas;
    struct describe_acls_resp describe_acls;
    struct create_acls_resp create_acls;
    struct delete_acls_resp delete_acls;
};

/* Fetch response records in samples and in tdec_resp output: write_records appends them. */
struct trecords {
    const uint8_t *p;
    int32_t len;
};
void trecords_write(struct kwriter *w, void *data);

/* When set, every tagged-field section the test encoders write in flexible versions carries
 * two unknown fields instead of none (decoders must skip them). */
extern bool tenc_unknown_tags;

/* Corruption hook: when mode is set, the at-th length or count field the test encoders write
 * (strings, bytes and arrays, in writing order, counted in seen) is replaced:
 *   TC_HUGE: an array count or byte length of INT32_MAX, a string length of INT16_MAX
 *            (non-flexible) or INT32_MAX (compact): far beyond the end of any sample;
 *   TC_VARINT_OVERFLOW: (compact forms only) an unsigned varint that does not fit 32 bits.
 * The rest of the message is written as usual. */
enum { TC_NONE, TC_HUGE, TC_VARINT_OVERFLOW };
struct tcorrupt {
    int mode;
    int at;
    int seen;
};
extern struct tcorrupt tenc_corrupt;

/* Number of sample variants: 0 = every array non-empty, nullable fields set; 1 = nullable
 * fields null and arrays empty (or null where allowed). */
#define TSAMPLE_VARIANTS 2

/* Request header v1 (flexible = false) or v2. */
void tenc_header(struct kwriter *w, int16_t key, int16_t v, int32_t correlation_id,
                 struct kstr client_id, bool flexible);

/* Fills q with a sample request of (key, v); absent fields hold the decoder's defaults.
 * Returns false for keys not in kafka/api.h. */
bool tsample_req(int16_t key, int16_t v, int variant, struct arena *a, union kmsg_any_req *q);
/* Encodes a request body of (key, v). */
void tenc_req(struct kwriter *w, int16_t key, int16_t v, const union kmsg_any_req *q);
/* Decodes a request body with the code under test (kmsg_decode_*). */
int tdecode_req(struct kreader *r, int16_t key, int16_t v, struct arena *a, union kmsg_any_req *q);

/* Sample responses, encoding with the code under test, and test-side decoding. */
bool tsample_resp(int16_t key, int16_t v, int variant, struct arena *a, union kmsg_any_resp *p);
void tencode_resp(struct kwriter *w, int16_t key, int16_t v, const union kmsg_any_resp *p);
int tdec_resp(struct kreader *r, int16_t key, int16_t v, struct arena *a, union kmsg_any_resp *p);

/* A complete request (header v1/v2 as the API requires, then body) into a flat buffer that
 * the caller frees with mem_free. */
uint8_t *tbuild_request(int16_t key, int16_t v, int variant, size_t *len);

/* The consumer-group APIs (kmsg_testenc_group.c), called by the functions above for the keys
 * they do not know; each returns false for keys that are not group APIs. */
bool tgroup_enc_req(struct kwriter *w, int16_t key, int16_t v, const union kmsg_any_req *q);
bool tgroup_decode_req(struct kreader *r, int16_t key, int16_t v, struct arena *a,
                       union kmsg_any_req *q, int *rc);
bool tgroup_sample_req(int16_t key, int16_t v, int var, struct arena *a, union kmsg_any_req *q);
bool tgroup_sample_resp(int16_t key, int16_t v, int var, struct arena *a, union kmsg_any_resp *p);
bool tgroup_encode_resp(struct kwriter *w, int16_t key, int16_t v, const union kmsg_any_resp *p);
bool tgroup_dec_resp(struct kreader *r, int16_t key, int16_t v, struct arena *a,
                     union kmsg_any_resp *p);
/* Field-by-field equality of group requests/responses, failing the test on a difference
 * (kmsg_group_test.c: unit tests only). */
void tgroup_req_eq(int16_t key, const union kmsg_any_req *x, const union kmsg_any_req *y);
void tgroup_resp_eq(int16_t key, const union kmsg_any_resp *x, const union kmsg_any_resp *y);

#endif
