/* Test-side request encoders, response decoders and samples (see kmsg_testenc.h).
 *
 * Written from apache/kafka clients/src/main/resources/common/message/<Name>Request.json and
 * <Name>Response.json, field by field, without looking at kafka/msg_*.c: a misreading of the
 * schema in one should not be copied into the other. */
#include "kmsg_testenc.h"

#include <string.h>

#include "base/mem.h"
#include "kafka/api.h"

bool tenc_unknown_tags;
struct tcorrupt tenc_corrupt;

/* ---- primitives (written here rather than taken from kw_str & co.) ---- */

static void t_tags(struct kwriter *w, bool flex)
{
    if (!flex)
        return;
    if (!tenc_unknown_tags) {
        kw_uvarint(w, 0);
        return;
    }
    kw_uvarint(w, 2);
    kw_uvarint(w, 7); /* tag */
    kw_uvarint(w, 3); /* size */
    kw_raw(w, "abc", 3);
    kw_uvarint(w, 300); /* a two-byte tag */
    kw_uvarint(w, 0);
}

/* Writes a corrupted length instead of the real one if the hook says so. */
static bool t_corrupt_len(struct kwriter *w, bool flex, bool wide)
{
    if (tenc_corrupt.seen++ != tenc_corrupt.at || tenc_corrupt.mode == TC_NONE)
        return false;
    if (tenc_corrupt.mode == TC_VARINT_OVERFLOW && flex) {
        static const uint8_t overflow[] = {0xff, 0xff, 0xff, 0xff, 0x7f};
        kw_raw(w, overflow, sizeof(overflow));
    } else if (flex) {
        kw_uvarint(w, (uint32_t)INT32_MAX + 1);
    } else if (wide) {
        kw_i32(w, INT32_MAX);
    } else {
        kw_i16(w, INT16_MAX);
    }
    return true;
}

/* A length or count: uvarint N+1 when flex, else int32 (wide) or int16. */
static void t_len(struct kwriter *w, bool flex, bool wide, int32_t n)
{
    if (t_corrupt_len(w, flex, wide))
        return;
    if (flex)
        kw_uvarint(w, (uint32_t)(n + 1));
    else if (wide)
        kw_i32(w, n);
    else
        kw_i16(w, (int16_t)n);
}

static void t_str(struct kwriter *w, bool flex, struct kstr s)
{
    t_len(w, flex, false, s.len);
    if (s.len > 0)
        kw_raw(w, s.p, (size_t)s.len);
}

static void t_bytes(struct kwriter *w, bool flex, struct kbytes b)
{
    t_len(w, flex, true, b.len);
    if (b.len > 0)
        kw_raw(w, b.p, (size_t)b.len);
}

static void t_arr(struct kwriter *w, bool flex, int32_t n)
{
    t_len(w, flex, true, n);
}

static void t_i32s(struct kwriter *w, bool flex, const int32_t *v, int32_t n)
{
    t_arr(w, flex, n);
    for (int32_t i = 0; i < n; i++)
        kw_i32(w, v[i]);
}

void trecords_write(struct kwriter *w, void *data)
{
    const struct trecords *rec = data;
    if (rec->len > 0)
        kw_raw(w, rec->p, (size_t)rec->len);
}

void tenc_header(struct kwriter *w, int16_t key, int16_t v, int32_t correlation_id,
                 struct kstr client_id, bool flexible)
{
    kw_i16(w, key);
    kw_i16(w, v);
    kw_i32(w, correlation_id);
    kw_i16(w, (int16_t)client_id.len); /* int16 length even in header v2 */
    if (client_id.len > 0)
        kw_raw(w, client_id.p, (size_t)client_id.len);
    t_tags(w, flexible);
}

/* ---- request encoders ---- */

static void enc_api_versions(struct kwriter *w, int16_t v, bool f, const struct api_versions_req *q)
{
    if (v >= 3) {
        t_str(w, f, q->client_software_name);
        t_str(w, f, q->client_software_version);
    }
    t_tags(w, f);
}

static void enc_metadata(struct kwriter *w, int16_t v, bool f, const struct metadata_req *q)
{
    if (v == 0 && q->n_topics < 0) {
        t_arr(w, f, 0); /* "all topics" is an empty array in v0 */
    } else {
        t_arr(w, f, q->n_topics);
        for (int32_t i = 0; i < q->n_topics; i++) {
            if (v >= 10)
                kw_uuid(w, q->topic_ids[i]);
            t_str(w, f, q->topics[i]);
            t_tags(w, f);
        }
    }
    if (v >= 4)
        kw_bool(w, q->allow_auto_topic_creation);
    if (v >= 8 && v <= 10)
        kw_bool(w, q->include_cluster_authorized_operations);
    if (v >= 8)
        kw_bool(w, q->include_topic_authorized_operations);
    t_tags(w, f);
}

static void enc_produce(struct kwriter *w, int16_t v, bool f, const struct produce_req *q)
{
    if (v >= 3)
        t_str(w, f, q->transactional_id);
    kw_i16(w, q->acks);
    kw_i32(w, q->timeout_ms);
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        const struct produce_req_topic *t = &q->topics[i];
        t_str(w, f, t->name);
        t_arr(w, f, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            kw_i32(w, t->partitions[j].index);
            t_bytes(w, f, t->partitions[j].records);
            t_tags(w, f);
        }
        t_tags(w, f);
    }
    t_tags(w, f);
}

static void enc_fetch(struct kwriter *w, int16_t v, bool f, const struct fetch_req *q)
{
    kw_i32(w, q->replica_id);
    kw_i32(w, q->max_wait_ms);
    kw_i32(w, q->min_bytes);
    if (v >= 3)
        kw_i32(w, q->max_bytes);
    if (v >= 4)
        kw_i8(w, q->isolation_level);
    if (v >= 7) {
        kw_i32(w, q->session_id);
        kw_i32(w, q->session_epoch);
    }
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        const struct fetch_req_topic *t = &q->topics[i];
        if (v >= 13)
            kw_uuid(w, t->topic_id);
        else
            t_str(w, f, t->topic);
        t_arr(w, f, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct fetch_req_partition *p = &t->partitions[j];
            kw_i32(w, p->partition);
            if (v >= 9)
                kw_i32(w, p->current_leader_epoch);
            kw_i64(w, p->fetch_offset);
            if (v >= 12)
                kw_i32(w, p->last_fetched_epoch);
            if (v >= 5)
                kw_i64(w, p->log_start_offset);
            kw_i32(w, p->partition_max_bytes);
            t_tags(w, f);
        }
        t_tags(w, f);
    }
    if (v >= 7) {
        t_arr(w, f, q->n_forgotten);
        for (int32_t i = 0; i < q->n_forgotten; i++) {
            if (v >= 13)
                kw_uuid(w, q->forgotten[i].topic_id);
            else
                t_str(w, f, q->forgotten[i].topic);
            t_i32s(w, f, q->forgotten[i].partitions, q->forgotten[i].n_partitions);
            t_tags(w, f);
        }
    }
    if (v >= 11)
        t_str(w, f, q->rack_id);
    t_tags(w, f);
}

static void enc_list_offsets(struct kwriter *w, int16_t v, bool f, const struct list_offsets_req *q)
{
    kw_i32(w, q->replica_id);
    if (v >= 2)
        kw_i8(w, q->isolation_level);
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        const struct list_offsets_req_topic *t = &q->topics[i];
        t_str(w, f, t->name);
        t_arr(w, f, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            kw_i32(w, t->partitions[j].partition_index);
            if (v >= 4)
                kw_i32(w, t->partitions[j].current_leader_epoch);
            kw_i64(w, t->partitions[j].timestamp);
            t_tags(w, f);
        }
        t_tags(w, f);
    }
    t_tags(w, f);
}

static void enc_configs(struct kwriter *w, bool f, const struct config_entry *c, int32_t n)
{
    t_arr(w, f, n);
    for (int32_t i = 0; i < n; i++) {
        t_str(w, f, c[i].name);
        t_str(w, f, c[i].value);
        t_tags(w, f);
    }
}

static void enc_create_topics(struct kwriter *w, int16_t v, bool f,
                              const struct create_topics_req *q)
{
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        const struct create_topics_req_topic *t = &q->topics[i];
        t_str(w, f, t->name);
        kw_i32(w, t->num_partitions);
        kw_i16(w, t->replication_factor);
        t_arr(w, f, t->n_assignments);
        for (int32_t j = 0; j < t->n_assignments; j++) {
            kw_i32(w, t->assignments[j].partition_index);
            t_i32s(w, f, t->assignments[j].broker_ids, t->assignments[j].n_broker_ids);
            t_tags(w, f);
        }
        enc_configs(w, f, t->configs, t->n_configs);
        t_tags(w, f);
    }
    kw_i32(w, q->timeout_ms);
    if (v >= 1)
        kw_bool(w, q->validate_only);
    t_tags(w, f);
}

static void enc_delete_topics(struct kwriter *w, int16_t v, bool f,
                              const struct delete_topics_req *q)
{
    t_arr(w, f, q->n_topic_names);
    for (int32_t i = 0; i < q->n_topic_names; i++) {
        t_str(w, f, q->topic_names[i]);
        if (v >= 6) {
            kw_uuid(w, q->topic_ids[i]);
            t_tags(w, f);
        }
    }
    kw_i32(w, q->timeout_ms);
    t_tags(w, f);
}

static void enc_create_partitions(struct kwriter *w, int16_t v, bool f,
                                  const struct create_partitions_req *q)
{
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        const struct create_partitions_req_topic *t = &q->topics[i];
        t_str(w, f, t->name);
        kw_i32(w, t->count);
        t_arr(w, f, t->n_assignments);
        for (int32_t j = 0; j < t->n_assignments; j++) {
            t_i32s(w, f, t->assignments[j].broker_ids, t->assignments[j].n_broker_ids);
            t_tags(w, f);
        }
        t_tags(w, f);
    }
    kw_i32(w, q->timeout_ms);
    kw_bool(w, q->validate_only);
    t_tags(w, f);
}

static void enc_describe_configs(struct kwriter *w, int16_t v, bool f,
                                 const struct describe_configs_req *q)
{
    t_arr(w, f, q->n_resources);
    for (int32_t i = 0; i < q->n_resources; i++) {
        const struct describe_configs_req_resource *res = &q->resources[i];
        kw_i8(w, res->resource_type);
        t_str(w, f, res->resource_name);
        t_arr(w, f, res->n_configuration_keys);
        for (int32_t j = 0; j < res->n_configuration_keys; j++)
            t_str(w, f, res->configuration_keys[j]);
        t_tags(w, f);
    }
    if (v >= 1)
        kw_bool(w, q->include_synonyms);
    if (v >= 3)
        kw_bool(w, q->include_documentation);
    t_tags(w, f);
}

static void enc_alter_configs(struct kwriter *w, int16_t v, bool f,
                              const struct alter_configs_req *q)
{
    t_arr(w, f, q->n_resources);
    for (int32_t i = 0; i < q->n_resources; i++) {
        const struct alter_configs_req_resource *res = &q->resources[i];
        kw_i8(w, res->resource_type);
        t_str(w, f, res->resource_name);
        enc_configs(w, f, res->configs, res->n_configs);
        t_tags(w, f);
    }
    kw_bool(w, q->validate_only);
    t_tags(w, f);
}

static void enc_delete_records(struct kwriter *w, int16_t v, bool f,
                               const struct delete_records_req *q)
{
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        const struct delete_records_req_topic *t = &q->topics[i];
        t_str(w, f, t->name);
        t_arr(w, f, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            kw_i32(w, t->partitions[j].partition_index);
            kw_i64(w, t->partitions[j].offset);
            t_tags(w, f);
        }
        t_tags(w, f);
    }
    kw_i32(w, q->timeout_ms);
    t_tags(w, f);
}

static void enc_init_producer_id(struct kwriter *w, int16_t v, bool f,
                                 const struct init_producer_id_req *q)
{
    t_str(w, f, q->transactional_id);
    kw_i32(w, q->transaction_timeout_ms);
    if (v >= 3) {
        kw_i64(w, q->producer_id);
        kw_i16(w, q->producer_epoch);
    }
    t_tags(w, f);
}

static void enc_find_coordinator(struct kwriter *w, int16_t v, bool f,
                                 const struct find_coordinator_req *q)
{
    if (v <= 3)
        t_str(w, f, q->key);
    if (v >= 1)
        kw_i8(w, q->key_type);
    if (v >= 4) {
        t_arr(w, f, q->n_coordinator_keys);
        for (int32_t i = 0; i < q->n_coordinator_keys; i++)
            t_str(w, f, q->coordinator_keys[i]);
    }
    t_tags(w, f);
}

static void enc_incremental_alter_configs(struct kwriter *w, int16_t v, bool f,
                                          const struct incremental_alter_configs_req *q)
{
    t_arr(w, f, q->n_resources);
    for (int32_t i = 0; i < q->n_resources; i++) {
        const struct incremental_alter_configs_req_resource *res = &q->resources[i];
        kw_i8(w, res->resource_type);
        t_str(w, f, res->resource_name);
        t_arr(w, f, res->n_configs);
        for (int32_t j = 0; j < res->n_configs; j++) {
            t_str(w, f, res->configs[j].name);
            kw_i8(w, res->configs[j].config_operation);
            t_str(w, f, res->configs[j].value);
            t_tags(w, f);
        }
        t_tags(w, f);
    }
    kw_bool(w, q->validate_only);
    t_tags(w, f);
}

static void enc_describe_cluster(struct kwriter *w, int16_t v, bool f,
                                 const struct describe_cluster_req *q)
{
    kw_bool(w, q->include_cluster_authorized_operations);
    if (v >= 1)
        kw_i8(w, q->endpoint_type);
    t_tags(w, f);
}

static void enc_alter_reassignments(struct kwriter *w, bool f, const struct alter_reassign_req *q)
{
    kw_i32(w, q->timeout_ms);
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        t_str(w, f, q->topics[i].name);
        t_arr(w, f, q->topics[i].n_partitions);
        for (int32_t j = 0; j < q->topics[i].n_partitions; j++) {
            const struct alter_reassign_req_partition *p = &q->topics[i].partitions[j];
            kw_i32(w, p->partition_index);
            t_i32s(w, f, p->replicas, p->n_replicas);
            t_tags(w, f);
        }
        t_tags(w, f);
    }
    t_tags(w, f);
}

static void enc_elect_leaders(struct kwriter *w, int16_t v, bool f,
                              const struct elect_leaders_req *q)
{
    if (v >= 1)
        kw_i8(w, q->election_type);
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        t_str(w, f, q->topics[i].topic);
        t_i32s(w, f, q->topics[i].partitions, q->topics[i].n_partitions);
        t_tags(w, f);
    }
    kw_i32(w, q->timeout_ms);
    t_tags(w, f);
}

static void enc_raft_voter(struct kwriter *w, bool add, const struct raft_voter_req *q)
{
    t_str(w, true, q->cluster_id);
    if (add)
        kw_i32(w, q->timeout_ms);
    kw_i32(w, q->voter_id);
    kw_uuid(w, q->voter_directory_id);
    if (add) {
        t_arr(w, true, q->n_listeners);
        for (int32_t i = 0; i < q->n_listeners; i++) {
            t_str(w, true, kstr_c(i ? "CONTROLLER" : "PLAINTEXT"));
            t_str(w, true, kstr_c("127.0.0.1"));
            kw_i16(w, (int16_t)(9092 + i));
            t_tags(w, true);
        }
    }
    t_tags(w, true);
}

static void enc_sasl(struct kwriter *w, int16_t key, int16_t v, const union kmsg_any_req *q)
{
    if (key == KAPI_SASL_HANDSHAKE) {
        t_str(w, false, q->sasl_handshake.mechanism);
        return;
    }
    bool f = v >= 2;
    t_bytes(w, f, q->sasl_authenticate.auth_bytes);
    t_tags(w, f);
}

static void enc_acl(struct kwriter *w, int16_t v, bool f, const struct kacl *a)
{
    kw_i8(w, a->resource_type);
    t_str(w, f, a->resource_name);
    if (v >= 1)
        kw_i8(w, a->pattern_type);
    t_str(w, f, a->principal);
    t_str(w, f, a->host);
    kw_i8(w, a->operation);
    kw_i8(w, a->permission);
}

static void enc_acls(struct kwriter *w, int16_t key, int16_t v, bool f, const union kmsg_any_req *q)
{
    if (key == KAPI_DESCRIBE_ACLS) {
        enc_acl(w, v, f, &q->describe_acls.filter);
        t_tags(w, f);
        return;
    }
    const struct kacl *l = key == KAPI_CREATE_ACLS ? q->create_acls.creations : q->delete_acls.filters;
    int32_t n = key == KAPI_CREATE_ACLS ? q->create_acls.n_creations : q->delete_acls.n_filters;
    t_arr(w, f, n);
    for (int32_t i = 0; i < n; i++) {
        enc_acl(w, v, f, &l[i]);
        t_tags(w, f);
    }
    t_tags(w, f);
}

static void enc_describe_scram(struct kwriter *w, const struct describe_scram_req *q)
{
    t_arr(w, true, q->n_users);
    for (int32_t i = 0; i < q->n_users; i++) {
        t_str(w, true, q->users[i]);
        t_tags(w, true);
    }
    t_tags(w, true);
}

static void enc_alter_scram(struct kwriter *w, const struct alter_scram_req *q)
{
    t_arr(w, true, q->n_deletions);
    for (int32_t i = 0; i < q->n_deletions; i++) {
        t_str(w, true, q->deletions[i].name);
        kw_i8(w, q->deletions[i].mechanism);
        t_tags(w, true);
    }
    t_arr(w, true, q->n_upsertions);
    for (int32_t i = 0; i < q->n_upsertions; i++) {
        const struct alter_scram_upsertion *u = &q->upsertions[i];
        t_str(w, true, u->name);
        kw_i8(w, u->mechanism);
        kw_i32(w, u->iterations);
        t_bytes(w, true, u->salt);
        t_bytes(w, true, u->salted_password);
        t_tags(w, true);
    }
    t_tags(w, true);
}

static void enc_entity(struct kwriter *w, bool f, const struct kquota_entity_part *e, int32_t n)
{
    t_arr(w, f, n);
    for (int32_t i = 0; i < n; i++) {
        t_str(w, f, e[i].type);
        t_str(w, f, e[i].name);
        t_tags(w, f);
    }
}

static void enc_quotas(struct kwriter *w, int16_t key, bool f, const union kmsg_any_req *q)
{
    if (key == KAPI_DESCRIBE_CLIENT_QUOTAS) {
        const struct describe_quotas_req *d = &q->describe_quotas;
        t_arr(w, f, d->n_components);
        for (int32_t i = 0; i < d->n_components; i++) {
            t_str(w, f, d->components[i].entity_type);
            kw_i8(w, d->components[i].match_type);
            t_str(w, f, d->components[i].match);
            t_tags(w, f);
        }
        kw_i8(w, d->strict ? 1 : 0);
        t_tags(w, f);
        return;
    }
    const struct alter_quotas_req *x = &q->alter_quotas;
    t_arr(w, f, x->n_entries);
    for (int32_t i = 0; i < x->n_entries; i++) {
        enc_entity(w, f, x->entries[i].entity, x->entries[i].n_entity);
        t_arr(w, f, x->entries[i].n_ops);
        for (int32_t j = 0; j < x->entries[i].n_ops; j++) {
            t_str(w, f, x->entries[i].ops[j].key);
            kw_f64(w, x->entries[i].ops[j].value);
            kw_i8(w, x->entries[i].ops[j].remove ? 1 : 0);
            t_tags(w, f);
        }
        t_tags(w, f);
    }
    kw_i8(w, x->validate_only ? 1 : 0);
    t_tags(w, f);
}

static void enc_list_reassignments(struct kwriter *w, bool f, const struct list_reassign_req *q)
{
    kw_i32(w, q->timeout_ms);
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        t_str(w, f, q->topics[i].name);
        t_i32s(w, f, q->topics[i].partitions, q->topics[i].n_partitions);
        t_tags(w, f);
    }
    t_tags(w, f);
}

static void enc_describe_log_dirs(struct kwriter *w, int16_t v, bool f,
                                  const struct describe_log_dirs_req *q)
{
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        t_str(w, f, q->topics[i].topic);
        t_i32s(w, f, q->topics[i].partitions, q->topics[i].n_partitions);
        t_tags(w, f);
    }
    t_tags(w, f);
}

static void enc_offset_for_leader_epoch(struct kwriter *w, int16_t v, bool f,
                                        const struct offset_for_leader_epoch_req *q)
{
    if (v >= 3)
        kw_i32(w, q->replica_id);
    t_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        const struct offset_for_leader_epoch_req_topic *t = &q->topics[i];
        t_str(w, f, t->topic);
        t_arr(w, f, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            kw_i32(w, t->partitions[j].partition);
            if (v >= 2)
                kw_i32(w, t->partitions[j].current_leader_epoch);
            kw_i32(w, t->partitions[j].leader_epoch);
            t_tags(w, f);
        }
        t_tags(w, f);
    }
    t_tags(w, f);
}

void tenc_req(struct kwriter *w, int16_t key, int16_t v, const union kmsg_any_req *q)
{
    bool f = kafka_api_flexible(key, v);
    switch (key) {
    case KAPI_API_VERSIONS:
        enc_api_versions(w, v, f, &q->api_versions);
        break;
    case KAPI_METADATA:
        enc_metadata(w, v, f, &q->metadata);
        break;
    case KAPI_PRODUCE:
        enc_produce(w, v, f, &q->produce);
        break;
    case KAPI_FETCH:
        enc_fetch(w, v, f, &q->fetch);
        break;
    case KAPI_LIST_OFFSETS:
        enc_list_offsets(w, v, f, &q->list_offsets);
        break;
    case KAPI_CREATE_TOPICS:
        enc_create_topics(w, v, f, &q->create_topics);
        break;
    case KAPI_DELETE_TOPICS:
        enc_delete_topics(w, v, f, &q->delete_topics);
        break;
    case KAPI_CREATE_PARTITIONS:
        enc_create_partitions(w, v, f, &q->create_partitions);
        break;
    case KAPI_DESCRIBE_CONFIGS:
        enc_describe_configs(w, v, f, &q->describe_configs);
        break;
    case KAPI_ALTER_CONFIGS:
        enc_alter_configs(w, v, f, &q->alter_configs);
        break;
    case KAPI_DELETE_RECORDS:
        enc_delete_records(w, v, f, &q->delete_records);
        break;
    case KAPI_INIT_PRODUCER_ID:
        enc_init_producer_id(w, v, f, &q->init_producer_id);
        break;
    case KAPI_FIND_COORDINATOR:
        enc_find_coordinator(w, v, f, &q->find_coordinator);
        break;
    case KAPI_INCREMENTAL_ALTER_CONFIGS:
        enc_incremental_alter_configs(w, v, f, &q->incremental_alter_configs);
        break;
    case KAPI_DESCRIBE_CLUSTER:
        enc_describe_cluster(w, v, f, &q->describe_cluster);
        break;
    case KAPI_DESCRIBE_LOG_DIRS:
        enc_describe_log_dirs(w, v, f, &q->describe_log_dirs);
        break;
    case KAPI_ALTER_PARTITION_REASSIGNMENTS:
        enc_alter_reassignments(w, f, &q->alter_reassignments);
        break;
    case KAPI_LIST_PARTITION_REASSIGNMENTS:
        enc_list_reassignments(w, f, &q->list_reassignments);
        break;
    case KAPI_ELECT_LEADERS:
        enc_elect_leaders(w, v, f, &q->elect_leaders);
        break;
    case KAPI_ADD_RAFT_VOTER:
    case KAPI_REMOVE_RAFT_VOTER:
        enc_raft_voter(w, key == KAPI_ADD_RAFT_VOTER, &q->raft_voter);
        break;
    case KAPI_SASL_HANDSHAKE:
    case KAPI_SASL_AUTHENTICATE:
        enc_sasl(w, key, v, q);
        break;
    case KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS:
        enc_describe_scram(w, &q->describe_scram);
        break;
    case KAPI_DESCRIBE_CLIENT_QUOTAS:
    case KAPI_ALTER_CLIENT_QUOTAS:
        enc_quotas(w, key, f, q);
        break;
    case KAPI_DESCRIBE_ACLS:
    case KAPI_CREATE_ACLS:
    case KAPI_DELETE_ACLS:
        enc_acls(w, key, v, f, q);
        break;
    case KAPI_ALTER_USER_SCRAM_CREDENTIALS:
        enc_alter_scram(w, &q->alter_scram);
        break;
    case KAPI_OFFSET_FOR_LEADER_EPOCH:
        enc_offset_for_leader_epoch(w, v, f, &q->offset_for_leader_epoch);
        break;
    default:
        (void)tgroup_enc_req(w, key, v, q);
        break;
    }
}

int tdecode_req(struct kreader *r, int16_t key, int16_t v, struct arena *a, union kmsg_any_req *q)
{
    switch (key) {
    case KAPI_API_VERSIONS:
        return kmsg_decode_api_versions(r, v, a, &q->api_versions);
    case KAPI_METADATA:
        return kmsg_decode_metadata(r, v, a, &q->metadata);
    case KAPI_PRODUCE:
        return kmsg_decode_produce(r, v, a, &q->produce);
    case KAPI_FETCH:
        return kmsg_decode_fetch(r, v, a, &q->fetch);
    case KAPI_LIST_OFFSETS:
        return kmsg_decode_list_offsets(r, v, a, &q->list_offsets);
    case KAPI_CREATE_TOPICS:
        return kmsg_decode_create_topics(r, v, a, &q->create_topics);
    case KAPI_DELETE_TOPICS:
        return kmsg_decode_delete_topics(r, v, a, &q->delete_topics);
    case KAPI_CREATE_PARTITIONS:
        return kmsg_decode_create_partitions(r, v, a, &q->create_partitions);
    case KAPI_DESCRIBE_CONFIGS:
        return kmsg_decode_describe_configs(r, v, a, &q->describe_configs);
    case KAPI_ALTER_CONFIGS:
        return kmsg_decode_alter_configs(r, v, a, &q->alter_configs);
    case KAPI_DELETE_RECORDS:
        return kmsg_decode_delete_records(r, v, a, &q->delete_records);
    case KAPI_INIT_PRODUCER_ID:
        return kmsg_decode_init_producer_id(r, v, a, &q->init_producer_id);
    case KAPI_FIND_COORDINATOR:
        return kmsg_decode_find_coordinator(r, v, a, &q->find_coordinator);
    case KAPI_INCREMENTAL_ALTER_CONFIGS:
        return kmsg_decode_incremental_alter_configs(r, v, a, &q->incremental_alter_configs);
    case KAPI_DESCRIBE_CLUSTER:
        return kmsg_decode_describe_cluster(r, v, a, &q->describe_cluster);
    case KAPI_DESCRIBE_LOG_DIRS:
        return kmsg_decode_describe_log_dirs(r, v, a, &q->describe_log_dirs);
    case KAPI_ALTER_PARTITION_REASSIGNMENTS:
        return kmsg_decode_alter_reassignments(r, v, a, &q->alter_reassignments);
    case KAPI_LIST_PARTITION_REASSIGNMENTS:
        return kmsg_decode_list_reassignments(r, v, a, &q->list_reassignments);
    case KAPI_ELECT_LEADERS:
        return kmsg_decode_elect_leaders(r, v, a, &q->elect_leaders);
    case KAPI_ADD_RAFT_VOTER:
    case KAPI_REMOVE_RAFT_VOTER:
        return kmsg_decode_raft_voter(r, key == KAPI_ADD_RAFT_VOTER, v, &q->raft_voter);
    case KAPI_SASL_HANDSHAKE:
        return kmsg_decode_sasl_handshake(r, v, &q->sasl_handshake);
    case KAPI_SASL_AUTHENTICATE:
        return kmsg_decode_sasl_authenticate(r, v, &q->sasl_authenticate);
    case KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS:
        return kmsg_decode_describe_scram(r, v, a, &q->describe_scram);
    case KAPI_DESCRIBE_CLIENT_QUOTAS:
        return kmsg_decode_describe_quotas(r, v, a, &q->describe_quotas);
    case KAPI_ALTER_CLIENT_QUOTAS:
        return kmsg_decode_alter_quotas(r, v, a, &q->alter_quotas);
    case KAPI_DESCRIBE_ACLS:
        return kmsg_decode_describe_acls(r, v, &q->describe_acls);
    case KAPI_CREATE_ACLS:
        return kmsg_decode_create_acls(r, v, a, &q->create_acls);
    case KAPI_DELETE_ACLS:
        return kmsg_decode_delete_acls(r, v, a, &q->delete_acls);
    case KAPI_ALTER_USER_SCRAM_CREDENTIALS:
        return kmsg_decode_alter_scram(r, v, a, &q->alter_scram);
    case KAPI_OFFSET_FOR_LEADER_EPOCH:
        return kmsg_decode_offset_for_leader_epoch(r, v, a, &q->offset_for_leader_epoch);
    default: {
        int rc;
        return tgroup_decode_req(r, key, v, a, q, &rc) ? rc : -1;
    }
    }
}

/* ---- sample requests ---- */

#define S(s) kstr_c(s)

static void *alloc(struct arena *a, int32_t n, size_t size)
{
    return n > 0 ? arena_calloc(a, (size_t)n, size) : NULL;
}

/* A recognisable non-zero topic id: bytes seed, seed+1, ... */
static struct kuuid uuid_n(uint8_t seed)
{
    struct kuuid u;
    for (int i = 0; i < 16; i++)
        u.b[i] = (uint8_t)(seed + i);
    return u;
}

static int32_t *ints(struct arena *a, int32_t n, int32_t base)
{
    int32_t *v = alloc(a, n, sizeof(*v));
    for (int32_t i = 0; i < n; i++)
        v[i] = base + i * 3;
    return v;
}

static struct kbytes bytes_c(const char *s)
{
    return (struct kbytes){(const uint8_t *)s, (int32_t)strlen(s)};
}

static void sample_api_versions(int16_t v, int var, struct api_versions_req *q)
{
    *q = (struct api_versions_req){KSTR_NULL, KSTR_NULL};
    if (v >= 3) {
        q->client_software_name = var ? S("") : S("librdkafka");
        q->client_software_version = var ? S("") : S("2.0.2");
    }
}

static void sample_metadata(int16_t v, int var, struct arena *a, struct metadata_req *q)
{
    *q = (struct metadata_req){.allow_auto_topic_creation = true};
    if (var) {
        q->n_topics = -1;
        return;
    }
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    q->topics[0] = S("orders");
    q->topics[1] = S("payments");
    if (v >= 10) { /* the second one asked for by id only */
        q->topic_ids = alloc(a, 2, sizeof(*q->topic_ids));
        q->topic_ids[1] = uuid_n(0x40);
        q->topics[1] = KSTR_NULL;
    }
    if (v >= 4)
        q->allow_auto_topic_creation = false;
    if (v >= 8 && v <= 10)
        q->include_cluster_authorized_operations = true;
    if (v >= 8)
        q->include_topic_authorized_operations = true;
}

static void sample_produce(int16_t v, int var, struct arena *a, struct produce_req *q)
{
    *q = (struct produce_req){.transactional_id = KSTR_NULL, .acks = -1, .timeout_ms = 30000};
    if (var) {
        q->acks = 1;
        q->n_topics = 1;
        q->topics = alloc(a, 1, sizeof(*q->topics));
        q->topics[0].name = S("t");
        q->topics[0].n_partitions = 1;
        q->topics[0].partitions = alloc(a, 1, sizeof(struct produce_req_partition));
        q->topics[0].partitions[0] = (struct produce_req_partition){9, {NULL, -1}};
        return;
    }
    if (v >= 3)
        q->transactional_id = S("txn-1");
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    struct produce_req_topic *t = &q->topics[0];
    t->name = S("orders");
    t->n_partitions = 2;
    t->partitions = alloc(a, 2, sizeof(*t->partitions));
    t->partitions[0] = (struct produce_req_partition){0, bytes_c("batch-bytes-0")};
    t->partitions[1] = (struct produce_req_partition){7, bytes_c("xyz")};
    t = &q->topics[1];
    t->name = S("payments");
    t->n_partitions = 1;
    t->partitions = alloc(a, 1, sizeof(*t->partitions));
    t->partitions[0] = (struct produce_req_partition){3, {(const uint8_t *)"", 0}};
}

static void sample_fetch(int16_t v, int var, struct arena *a, struct fetch_req *q)
{
    *q = (struct fetch_req){.replica_id = -1,
                            .max_wait_ms = 500,
                            .min_bytes = 1,
                            .max_bytes = INT32_MAX,
                            .session_epoch = -1,
                            .rack_id = S("")};
    if (v >= 3)
        q->max_bytes = 52428800;
    if (v >= 4)
        q->isolation_level = 1;
    if (var)
        return;
    if (v >= 7) {
        q->session_id = 17;
        q->session_epoch = 3;
    }
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    for (int i = 0; i < 2; i++) {
        struct fetch_req_topic *t = &q->topics[i];
        t->topic = i ? S("payments") : S("orders");
        if (v >= 13) {
            t->topic = S("");
            t->topic_id = uuid_n((uint8_t)(0x10 * (i + 1)));
        }
        t->n_partitions = 2 - i;
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int j = 0; j < t->n_partitions; j++) {
            struct fetch_req_partition *p = &t->partitions[j];
            p->partition = j * 5 + i;
            p->current_leader_epoch = v >= 9 ? 40 + j : -1;
            p->fetch_offset = 1000000007LL * (j + 1) + i;
            p->last_fetched_epoch = v >= 12 ? 30 + j : -1;
            p->log_start_offset = v >= 5 ? 11 + j : -1;
            p->partition_max_bytes = 1048576 + j;
        }
    }
    if (v >= 7) {
        q->n_forgotten = 1;
        q->forgotten = alloc(a, 1, sizeof(*q->forgotten));
        q->forgotten[0].topic = v >= 13 ? S("") : S("old");
        if (v >= 13)
            q->forgotten[0].topic_id = uuid_n(0x70);
        q->forgotten[0].n_partitions = 3;
        q->forgotten[0].partitions = ints(a, 3, 1);
    }
    if (v >= 11)
        q->rack_id = S("rack-a");
}

static void sample_list_offsets(int16_t v, int var, struct arena *a, struct list_offsets_req *q)
{
    *q = (struct list_offsets_req){.replica_id = -1};
    if (v >= 2)
        q->isolation_level = 1;
    if (var)
        return;
    q->n_topics = 1;
    q->topics = alloc(a, 1, sizeof(*q->topics));
    q->topics[0].name = S("orders");
    q->topics[0].n_partitions = 3;
    q->topics[0].partitions = alloc(a, 3, sizeof(struct list_offsets_req_partition));
    for (int j = 0; j < 3; j++) {
        struct list_offsets_req_partition *p = &q->topics[0].partitions[j];
        p->partition_index = j;
        p->current_leader_epoch = v >= 4 ? 7 + j : -1;
        p->timestamp = j == 2 ? 1700000000000LL : -1 - j;
    }
}

static void sample_create_topics(int16_t v, int var, struct arena *a, struct create_topics_req *q)
{
    *q = (struct create_topics_req){.timeout_ms = 60000};
    if (var)
        return;
    q->validate_only = v >= 1;
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    struct create_topics_req_topic *t = &q->topics[0];
    t->name = S("new-topic");
    t->num_partitions = 3;
    t->replication_factor = 1;
    t->n_configs = 2;
    t->configs = alloc(a, 2, sizeof(*t->configs));
    t->configs[0] = (struct config_entry){S("cleanup.policy"), S("compact")};
    t->configs[1] = (struct config_entry){S("retention.ms"), KSTR_NULL};
    t = &q->topics[1];
    t->name = S("manual");
    t->num_partitions = -1;
    t->replication_factor = -1;
    t->n_assignments = 2;
    t->assignments = alloc(a, 2, sizeof(*t->assignments));
    for (int j = 0; j < 2; j++) {
        t->assignments[j].partition_index = j;
        t->assignments[j].n_broker_ids = 2;
        t->assignments[j].broker_ids = ints(a, 2, j + 1);
    }
}

static void sample_delete_topics(int16_t v, int var, struct arena *a, struct delete_topics_req *q)
{
    *q = (struct delete_topics_req){.timeout_ms = 1000};
    if (var)
        return;
    q->n_topic_names = 2;
    q->topic_names = alloc(a, 2, sizeof(*q->topic_names));
    q->topic_names[0] = S("a");
    q->topic_names[1] = S("bb");
    if (v >= 6) { /* the second one named by id only */
        q->topic_ids = alloc(a, 2, sizeof(*q->topic_ids));
        q->topic_ids[1] = uuid_n(0x20);
        q->topic_names[1] = KSTR_NULL;
    }
}

static void sample_create_partitions(int16_t v, int var, struct arena *a,
                                     struct create_partitions_req *q)
{
    *q = (struct create_partitions_req){.timeout_ms = 100};
    if (var)
        return;
    q->validate_only = true;
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    q->topics[0] = (struct create_partitions_req_topic){S("orders"), 6, NULL, -1};
    struct create_partitions_req_topic *t = &q->topics[1];
    t->name = S("t2");
    t->count = 3;
    t->n_assignments = 2;
    t->assignments = alloc(a, 2, sizeof(*t->assignments));
    for (int j = 0; j < 2; j++) {
        t->assignments[j].n_broker_ids = j + 1;
        t->assignments[j].broker_ids = ints(a, j + 1, 1);
    }
}

static void sample_describe_configs(int16_t v, int var, struct arena *a,
                                    struct describe_configs_req *q)
{
    *q = (struct describe_configs_req){0};
    q->n_resources = var ? 1 : 2;
    q->resources = alloc(a, q->n_resources, sizeof(*q->resources));
    q->resources[0] = (struct describe_configs_req_resource){KAFKA_RESOURCE_TOPIC, S("orders"),
                                                             NULL, var ? 0 : -1};
    if (var)
        return;
    struct describe_configs_req_resource *res = &q->resources[1];
    res->resource_type = KAFKA_RESOURCE_BROKER;
    res->resource_name = S("1");
    res->n_configuration_keys = 2;
    res->configuration_keys = alloc(a, 2, sizeof(struct kstr));
    res->configuration_keys[0] = S("log.retention.ms");
    res->configuration_keys[1] = S("num.partitions");
    q->include_synonyms = v >= 1;
    q->include_documentation = v >= 3;
}

static void sample_alter_configs(int16_t v, int var, struct arena *a, struct alter_configs_req *q)
{
    *q = (struct alter_configs_req){0};
    if (var)
        return;
    q->validate_only = true;
    q->n_resources = 1;
    q->resources = alloc(a, 1, sizeof(*q->resources));
    struct alter_configs_req_resource *res = &q->resources[0];
    res->resource_type = KAFKA_RESOURCE_TOPIC;
    res->resource_name = S("orders");
    res->n_configs = 2;
    res->configs = alloc(a, 2, sizeof(*res->configs));
    res->configs[0] = (struct config_entry){S("retention.ms"), S("1000")};
    res->configs[1] = (struct config_entry){S("cleanup.policy"), KSTR_NULL};
}

static void sample_delete_records(int16_t v, int var, struct arena *a, struct delete_records_req *q)
{
    *q = (struct delete_records_req){.timeout_ms = 500};
    if (var)
        return;
    q->n_topics = 1;
    q->topics = alloc(a, 1, sizeof(*q->topics));
    q->topics[0].name = S("orders");
    q->topics[0].n_partitions = 2;
    q->topics[0].partitions = alloc(a, 2, sizeof(struct delete_records_req_partition));
    q->topics[0].partitions[0] = (struct delete_records_req_partition){0, 100};
    q->topics[0].partitions[1] = (struct delete_records_req_partition){1, -1};
}

/* Variant 0: a KIP-360 re-init of an idempotent producer (v3+); 1: a transactional id. */
static void sample_init_producer_id(int16_t v, int var, struct init_producer_id_req *q)
{
    *q = (struct init_producer_id_req){var ? S("txn-1") : KSTR_NULL, var ? 60000 : -1, -1, -1};
    if (v >= 3 && !var) {
        q->producer_id = 4321;
        q->producer_epoch = 7;
    }
}

static void sample_find_coordinator(int16_t v, int var, struct arena *a,
                                    struct find_coordinator_req *q)
{
    *q = (struct find_coordinator_req){.key = var ? S("") : S("group-1")};
    if (v >= 1 && !var)
        q->key_type = KAFKA_COORDINATOR_TRANSACTION;
    if (v >= 4) {
        q->key = S("");
        q->n_coordinator_keys = var ? 0 : 3;
        q->coordinator_keys = alloc(a, q->n_coordinator_keys, sizeof(*q->coordinator_keys));
        if (!var) {
            q->coordinator_keys[0] = S("group-1");
            q->coordinator_keys[1] = S("");
            q->coordinator_keys[2] = S("group-3");
        }
    }
}

static void sample_incremental_alter_configs(int16_t v, int var, struct arena *a,
                                             struct incremental_alter_configs_req *q)
{
    *q = (struct incremental_alter_configs_req){0};
    if (var)
        return;
    q->validate_only = true;
    q->n_resources = 2;
    q->resources = alloc(a, 2, sizeof(*q->resources));
    struct incremental_alter_configs_req_resource *res = &q->resources[0];
    res->resource_type = KAFKA_RESOURCE_TOPIC;
    res->resource_name = S("orders");
    res->n_configs = 3;
    res->configs = alloc(a, 3, sizeof(*res->configs));
    res->configs[0] = (struct incremental_alter_config){S("retention.ms"), 0, S("1000")};
    res->configs[1] = (struct incremental_alter_config){S("segment.ms"), 1, KSTR_NULL};
    res->configs[2] = (struct incremental_alter_config){S("cleanup.policy"), 2, S("compact")};
    q->resources[1] =
        (struct incremental_alter_configs_req_resource){KAFKA_RESOURCE_BROKER, S("1"), NULL, 0};
}

static void sample_describe_cluster(int16_t v, int var, struct describe_cluster_req *q)
{
    *q = (struct describe_cluster_req){.include_cluster_authorized_operations = !var,
                                       .endpoint_type = KAFKA_ENDPOINT_BROKERS};
    if (v >= 1 && !var)
        q->endpoint_type = KAFKA_ENDPOINT_CONTROLLERS;
}

/* var 0: two topics, one partition with replicas, one that cancels; var 1: no topics */
static void sample_alter_reassignments(int var, struct arena *a, struct alter_reassign_req *q)
{
    *q = (struct alter_reassign_req){.timeout_ms = 30000};
    if (var)
        return;
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    struct alter_reassign_req_partition *p = alloc(a, 2, sizeof(*p));
    p[0] = (struct alter_reassign_req_partition){0, ints(a, 3, 1), 3};
    p[1] = (struct alter_reassign_req_partition){5, NULL, -1};
    q->topics[0] = (struct alter_reassign_req_topic){S("orders"), p, 2};
    q->topics[1] = (struct alter_reassign_req_topic){S("x"), NULL, 0};
}

/* var 0: two topics (UNCLEAN from v1), one without partitions; var 1: null (every partition) */
static void sample_elect_leaders(int16_t v, int var, struct arena *a, struct elect_leaders_req *q)
{
    *q = (struct elect_leaders_req){.election_type = KAFKA_ELECTION_PREFERRED,
                                    .n_topics = -1,
                                    .timeout_ms = 60000 - var};
    if (var)
        return;
    if (v >= 1)
        q->election_type = KAFKA_ELECTION_UNCLEAN;
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    q->topics[0] = (struct elect_leaders_req_topic){S("orders"), ints(a, 3, 0), 3};
    q->topics[1] = (struct elect_leaders_req_topic){S("x"), NULL, 0};
}

/* var 0: two topics; var 1: null (every reassignment) */
static void sample_raft_voter(bool add, int var, struct raft_voter_req *q)
{
    *q = (struct raft_voter_req){.cluster_id = var ? S("sp-cluster") : KSTR_NULL,
                                 .timeout_ms = add ? 30000 : 0,
                                 .voter_id = 2 + var,
                                 .n_listeners = add ? 1 + var : 0};
    q->voter_directory_id.b[0] = (uint8_t)(7 + var);
}

static void sample_list_reassignments(int var, struct arena *a, struct list_reassign_req *q)
{
    *q = (struct list_reassign_req){.timeout_ms = 1000, .n_topics = -1};
    if (var)
        return;
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    q->topics[0] = (struct list_reassign_req_topic){S("orders"), ints(a, 2, 0), 2};
    q->topics[1] = (struct list_reassign_req_topic){S("x"), NULL, 0};
}

static void sample_describe_log_dirs(int16_t v, int var, struct arena *a,
                                     struct describe_log_dirs_req *q)
{
    *q = (struct describe_log_dirs_req){.n_topics = -1};
    if (var)
        return;
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    q->topics[0] = (struct describe_log_dirs_req_topic){S("orders"), ints(a, 3, 0), 3};
    q->topics[1] = (struct describe_log_dirs_req_topic){S("x"), NULL, 0};
}

static void sample_offset_for_leader_epoch(int16_t v, int var, struct arena *a,
                                           struct offset_for_leader_epoch_req *q)
{
    *q = (struct offset_for_leader_epoch_req){.replica_id = -2};
    if (v >= 3 && !var)
        q->replica_id = -1;
    if (var)
        return;
    q->n_topics = 1;
    q->topics = alloc(a, 1, sizeof(*q->topics));
    q->topics[0].topic = S("orders");
    q->topics[0].n_partitions = 2;
    q->topics[0].partitions = alloc(a, 2, sizeof(struct offset_for_leader_epoch_req_partition));
    q->topics[0].partitions[0] = (struct offset_for_leader_epoch_req_partition){0, -1, 3};
    q->topics[0].partitions[1] =
        (struct offset_for_leader_epoch_req_partition){5, v >= 2 ? 7 : -1, 6};
}

bool tsample_req(int16_t key, int16_t v, int var, struct arena *a, union kmsg_any_req *q)
{
    memset(q, 0, sizeof(*q));
    switch (key) {
    case KAPI_API_VERSIONS:
        sample_api_versions(v, var, &q->api_versions);
        return true;
    case KAPI_METADATA:
        sample_metadata(v, var, a, &q->metadata);
        return true;
    case KAPI_PRODUCE:
        sample_produce(v, var, a, &q->produce);
        return true;
    case KAPI_FETCH:
        sample_fetch(v, var, a, &q->fetch);
        return true;
    case KAPI_LIST_OFFSETS:
        sample_list_offsets(v, var, a, &q->list_offsets);
        return true;
    case KAPI_CREATE_TOPICS:
        sample_create_topics(v, var, a, &q->create_topics);
        return true;
    case KAPI_DELETE_TOPICS:
        sample_delete_topics(v, var, a, &q->delete_topics);
        return true;
    case KAPI_CREATE_PARTITIONS:
        sample_create_partitions(v, var, a, &q->create_partitions);
        return true;
    case KAPI_DESCRIBE_CONFIGS:
        sample_describe_configs(v, var, a, &q->describe_configs);
        return true;
    case KAPI_ALTER_CONFIGS:
        sample_alter_configs(v, var, a, &q->alter_configs);
        return true;
    case KAPI_DELETE_RECORDS:
        sample_delete_records(v, var, a, &q->delete_records);
        return true;
    case KAPI_INIT_PRODUCER_ID:
        sample_init_producer_id(v, var, &q->init_producer_id);
        return true;
    case KAPI_FIND_COORDINATOR:
        sample_find_coordinator(v, var, a, &q->find_coordinator);
        return true;
    case KAPI_INCREMENTAL_ALTER_CONFIGS:
        sample_incremental_alter_configs(v, var, a, &q->incremental_alter_configs);
        return true;
    case KAPI_DESCRIBE_CLUSTER:
        sample_describe_cluster(v, var, &q->describe_cluster);
        return true;
    case KAPI_DESCRIBE_LOG_DIRS:
        sample_describe_log_dirs(v, var, a, &q->describe_log_dirs);
        return true;
    case KAPI_ALTER_PARTITION_REASSIGNMENTS:
        sample_alter_reassignments(var, a, &q->alter_reassignments);
        return true;
    case KAPI_LIST_PARTITION_REASSIGNMENTS:
        sample_list_reassignments(var, a, &q->list_reassignments);
        return true;
    case KAPI_ELECT_LEADERS:
        sample_elect_leaders(v, var, a, &q->elect_leaders);
        return true;
    case KAPI_ADD_RAFT_VOTER:
    case KAPI_REMOVE_RAFT_VOTER:
        sample_raft_voter(key == KAPI_ADD_RAFT_VOTER, var, &q->raft_voter);
        return true;
    case KAPI_SASL_HANDSHAKE:
        q->sasl_handshake.mechanism = var ? S("SCRAM-SHA-512") : S("PLAIN");
        return true;
    case KAPI_SASL_AUTHENTICATE:
        q->sasl_authenticate.auth_bytes =
            var ? (struct kbytes){(const uint8_t *)"n,,n=user,r=abc", 15} : (struct kbytes){
                                                                             (const uint8_t *)"", 0};
        return true;
    case KAPI_DESCRIBE_ACLS:
        q->describe_acls.filter = (struct kacl){var ? 2 : 1, var ? S("orders-") : KSTR_NULL,
                                                v >= 1 ? (int8_t)(var ? 4 : 2) : 3,
                                                var ? S("User:alice") : KSTR_NULL,
                                                var ? S("*") : KSTR_NULL, (int8_t)(var ? 3 : 1),
                                                (int8_t)(var ? 3 : 1)};
        return true;
    case KAPI_CREATE_ACLS:
    case KAPI_DELETE_ACLS: {
        struct kacl *l = alloc(a, 2, sizeof(*l));
        l[0] = (struct kacl){2, S("orders-"), v >= 1 ? 4 : 3, S("User:alice"), S("*"), 4, 3};
        l[1] = (struct kacl){3, S("g1"), 3, S("User:bob"), S("10.0.0.1"), 3, 2};
        if (key == KAPI_CREATE_ACLS)
            q->create_acls = (struct create_acls_req){l, 1 + var};
        else
            q->delete_acls = (struct delete_acls_req){l, 1 + var};
        return true;
    }
    case KAPI_DESCRIBE_CLIENT_QUOTAS: {
        struct describe_quotas_req *x = &q->describe_quotas;
        *x = (struct describe_quotas_req){.n_components = 1 + var, .strict = var};
        x->components = alloc(a, 2, sizeof(*x->components));
        x->components[0] = (struct describe_quotas_component){S("user"), 0, S("alice")};
        x->components[1] = (struct describe_quotas_component){S("client-id"), 1, KSTR_NULL};
        return true;
    }
    case KAPI_ALTER_CLIENT_QUOTAS: {
        struct alter_quotas_req *x = &q->alter_quotas;
        *x = (struct alter_quotas_req){.n_entries = 1 + var, .validate_only = var};
        x->entries = alloc(a, 2, sizeof(*x->entries));
        struct kquota_entity_part *e = alloc(a, 2, sizeof(*e));
        e[0] = (struct kquota_entity_part){S("user"), S("alice")};
        e[1] = (struct kquota_entity_part){S("client-id"), KSTR_NULL};
        struct alter_quotas_op *o = alloc(a, 2, sizeof(*o));
        o[0] = (struct alter_quotas_op){S("producer_byte_rate"), 1048576.5, false};
        o[1] = (struct alter_quotas_op){S("consumer_byte_rate"), 0, true};
        x->entries[0] = (struct alter_quotas_entry){e, 2, o, 2};
        x->entries[1] = (struct alter_quotas_entry){e, 1, o, 1};
        return true;
    }
    case KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS:
        q->describe_scram = (struct describe_scram_req){.n_users = var ? 2 : -1};
        if (var) {
            q->describe_scram.users = alloc(a, 2, sizeof(struct kstr));
            q->describe_scram.users[0] = S("alice");
            q->describe_scram.users[1] = S("bob");
        }
        return true;
    case KAPI_ALTER_USER_SCRAM_CREDENTIALS: {
        struct alter_scram_req *x = &q->alter_scram;
        *x = (struct alter_scram_req){.n_deletions = var, .n_upsertions = 1 + var};
        x->deletions = alloc(a, 1, sizeof(*x->deletions));
        x->deletions[0] = (struct alter_scram_deletion){S("old"), 2};
        x->upsertions = alloc(a, 2, sizeof(*x->upsertions));
        for (int i = 0; i < 2; i++)
            x->upsertions[i] = (struct alter_scram_upsertion){
                i ? S("bob") : S("alice"), (int8_t)(1 + i), 4096 * (1 + i),
                (struct kbytes){(const uint8_t *)"saltsalt", 8},
                (struct kbytes){(const uint8_t *)"0123456789abcdef0123456789abcdef", 32}};
        return true;
    }
    case KAPI_OFFSET_FOR_LEADER_EPOCH:
        sample_offset_for_leader_epoch(v, var, a, &q->offset_for_leader_epoch);
        return true;
    default:
        return tgroup_sample_req(key, v, var, a, q);
    }
}

uint8_t *tbuild_request(int16_t key, int16_t v, int variant, size_t *len)
{
    struct arena a;
    arena_init(&a, 0);
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    union kmsg_any_req q;
    tsample_req(key, v, variant, &a, &q);
    tenc_header(&w, key, v, 1234, S("test-client"), kafka_api_flexible(key, v));
    tenc_req(&w, key, v, &q);
    uint8_t *out = iobuf_flatten(&b, len);
    iobuf_destroy(&b);
    arena_destroy(&a);
    return out;
}

/* ---- sample responses ---- */

static void sresp_api_versions(int16_t v, int var, struct arena *a, struct api_versions_resp *p)
{
    *p = (struct api_versions_resp){.error_code = var ? 35 : 0};
    if (v >= 1)
        p->throttle_time_ms = var ? 0 : 5;
    if (var)
        return;
    p->n_keys = 3;
    p->keys = alloc(a, 3, sizeof(*p->keys));
    p->keys[0] = (struct api_versions_key){0, 0, 7};
    p->keys[1] = (struct api_versions_key){1, 4, 11};
    p->keys[2] = (struct api_versions_key){18, 0, 3};
}

static void sresp_metadata(int16_t v, int var, struct arena *a, struct metadata_resp *p)
{
    *p = (struct metadata_resp){
        .cluster_id = KSTR_NULL, .controller_id = -1, .cluster_authorized_operations = INT32_MIN};
    if (v >= 3)
        p->throttle_time_ms = 9;
    if (var)
        return;
    if (v >= 2)
        p->cluster_id = S("cluster-x");
    if (v >= 1)
        p->controller_id = 1;
    if (v >= 8 && v <= 10)
        p->cluster_authorized_operations = 0x34;
    p->n_brokers = 2;
    p->brokers = alloc(a, 2, sizeof(*p->brokers));
    p->brokers[0] = (struct metadata_broker){1, S("localhost"), 9092, v >= 1 ? S("r1") : KSTR_NULL};
    p->brokers[1] = (struct metadata_broker){2, S("h2"), 9093, KSTR_NULL};
    p->n_topics = 2;
    p->topics = alloc(a, 2, sizeof(*p->topics));
    struct metadata_topic *t = &p->topics[0];
    t->name = S("orders");
    if (v >= 10)
        t->topic_id = uuid_n(0x80);
    t->is_internal = v >= 1;
    t->topic_authorized_operations = v >= 8 ? 0x12 : INT32_MIN;
    t->n_partitions = 2;
    t->partitions = alloc(a, 2, sizeof(*t->partitions));
    for (int j = 0; j < 2; j++) {
        struct metadata_partition *mp = &t->partitions[j];
        mp->error_code = (int16_t)(j * 9);
        mp->partition_index = j;
        mp->leader_id = j + 1;
        mp->leader_epoch = v >= 7 ? 4 + j : -1;
        mp->n_replica_nodes = 2;
        mp->replica_nodes = ints(a, 2, 1);
        mp->n_isr_nodes = 1;
        mp->isr_nodes = ints(a, 1, 1 + j);
        if (v >= 5) {
            mp->n_offline_replicas = j;
            mp->offline_replicas = ints(a, j, 2);
        }
    }
    t = &p->topics[1];
    t->error_code = v >= 10 ? 100 : 3;
    t->name = v >= 12 ? KSTR_NULL : S("missing"); /* an unknown id (nullable name from v12) */
    if (v >= 10)
        t->topic_id = uuid_n(0x90);
    t->topic_authorized_operations = INT32_MIN;
}

static void sresp_produce(int16_t v, int var, struct arena *a, struct produce_resp *p)
{
    *p = (struct produce_resp){0};
    if (v >= 1)
        p->throttle_time_ms = 3;
    if (var)
        return;
    p->n_topics = 1;
    p->topics = alloc(a, 1, sizeof(*p->topics));
    p->topics[0].name = S("orders");
    p->topics[0].n_partitions = 2;
    p->topics[0].partitions = alloc(a, 2, sizeof(struct produce_resp_partition));
    for (int j = 0; j < 2; j++) {
        struct produce_resp_partition *pp = &p->topics[0].partitions[j];
        pp->index = j;
        pp->error_code = (int16_t)(j * 6);
        pp->base_offset = j ? -1 : 100;
        pp->log_append_time_ms = v >= 2 && j == 0 ? 1700000000123LL : -1;
        pp->log_start_offset = v >= 5 ? 5 : -1;
        pp->error_message = v >= 8 && j ? S("bad batch") : KSTR_NULL;
        if (v >= 8 && j) {
            pp->n_record_errors = 2;
            pp->record_errors = alloc(a, 2, sizeof(*pp->record_errors));
            pp->record_errors[0] = (struct produce_record_error){0, S("record 0")};
            pp->record_errors[1] = (struct produce_record_error){3, KSTR_NULL};
        }
    }
}

static struct trecords *trec(struct arena *a, const char *s, int32_t len)
{
    struct trecords *rec = arena_calloc(a, 1, sizeof(*rec));
    rec->p = (const uint8_t *)s;
    rec->len = len;
    return rec;
}

static void sresp_fetch(int16_t v, int var, struct arena *a, struct fetch_resp *p)
{
    *p = (struct fetch_resp){.throttle_time_ms = 1};
    if (var)
        return;
    if (v >= 7)
        p->session_id = 42;
    p->n_topics = 1;
    p->topics = alloc(a, 1, sizeof(*p->topics));
    struct fetch_resp_topic *t = &p->topics[0];
    t->topic = v >= 13 ? S("") : S("orders");
    if (v >= 13)
        t->topic_id = uuid_n(0x33);
    t->n_partitions = 3;
    t->partitions = alloc(a, 3, sizeof(*t->partitions));
    static const char recs[] = "pretend-record-batch-bytes";
    for (int j = 0; j < 3; j++) {
        struct fetch_resp_partition *fp = &t->partitions[j];
        fp->partition_index = j;
        fp->error_code = (int16_t)(j == 1 ? 1 : 0);
        fp->high_watermark = 10 + j;
        fp->last_stable_offset = v >= 4 ? 10 + j : -1;
        fp->log_start_offset = v >= 5 ? j : -1;
        fp->n_aborted = j == 0 ? 2 : (j == 1 ? -1 : 0);
        fp->aborted = alloc(a, fp->n_aborted, sizeof(*fp->aborted));
        for (int k = 0; k < fp->n_aborted; k++)
            fp->aborted[k] = (struct fetch_aborted_txn){7 + k, 3 + k};
        fp->preferred_read_replica = v >= 11 && j == 0 ? 2 : -1;
        fp->records_len = j == 0 ? (int32_t)sizeof(recs) - 1 : (j == 1 ? -1 : 0);
        fp->write_records = trecords_write;
        fp->records_data = trec(a, j == 1 ? NULL : recs, fp->records_len);
    }
}

static void sresp_list_offsets(int16_t v, int var, struct arena *a, struct list_offsets_resp *p)
{
    *p = (struct list_offsets_resp){0};
    if (v >= 2)
        p->throttle_time_ms = 2;
    if (var)
        return;
    p->n_topics = 1;
    p->topics = alloc(a, 1, sizeof(*p->topics));
    p->topics[0].name = S("orders");
    p->topics[0].n_partitions = 2;
    p->topics[0].partitions = alloc(a, 2, sizeof(struct list_offsets_resp_partition));
    p->topics[0].partitions[0] =
        (struct list_offsets_resp_partition){0, 0, 1000, 42, v >= 4 ? 3 : -1};
    p->topics[0].partitions[1] = (struct list_offsets_resp_partition){1, 3, -1, -1, -1};
}

static void sresp_create_topics(int16_t v, int var, struct arena *a, struct create_topics_resp *p)
{
    *p = (struct create_topics_resp){0};
    if (v >= 2)
        p->throttle_time_ms = 1;
    if (var)
        return;
    p->n_topics = 2;
    p->topics = alloc(a, 2, sizeof(*p->topics));
    p->topics[0] = (struct create_topics_resp_topic){.name = S("new"),
                                                     .error_message = KSTR_NULL,
                                                     .num_partitions = -1,
                                                     .replication_factor = -1,
                                                     .n_configs = -1};
    p->topics[1] =
        (struct create_topics_resp_topic){.name = S("bad"),
                                          .error_code = 36,
                                          .error_message = v >= 1 ? S("exists") : KSTR_NULL,
                                          .num_partitions = -1,
                                          .replication_factor = -1,
                                          .n_configs = -1};
    if (v >= 5) {
        struct create_topics_resp_topic *t = &p->topics[0];
        t->num_partitions = 3;
        t->replication_factor = 1;
        t->n_configs = 2;
        t->configs = alloc(a, 2, sizeof(*t->configs));
        t->configs[0] =
            (struct create_topics_resp_config){S("cleanup.policy"), S("compact"), false, 1, false};
        t->configs[1] =
            (struct create_topics_resp_config){S("sasl.jaas.config"), KSTR_NULL, true, 5, true};
    }
    if (v >= 7)
        p->topics[0].topic_id = uuid_n(0x50);
}

static void sresp_delete_topics(int16_t v, int var, struct arena *a, struct delete_topics_resp *p)
{
    *p = (struct delete_topics_resp){0};
    if (v >= 1)
        p->throttle_time_ms = 1;
    if (var)
        return;
    p->n_responses = 2;
    p->responses = alloc(a, 2, sizeof(*p->responses));
    p->responses[0] = (struct delete_topics_resp_topic){.name = S("a"), .error_message = KSTR_NULL};
    p->responses[1] = (struct delete_topics_resp_topic){
        .name = S("bb"), .error_code = 3, .error_message = KSTR_NULL};
    if (v >= 5)
        p->responses[1].error_message = S("no such topic");
    if (v >= 6) { /* an unknown id: no name */
        p->responses[0].topic_id = uuid_n(0x60);
        p->responses[1] =
            (struct delete_topics_resp_topic){KSTR_NULL, uuid_n(0x61), 100, S("unknown id")};
    }
}

static void sresp_create_partitions(int16_t v, int var, struct arena *a,
                                    struct create_partitions_resp *p)
{
    *p = (struct create_partitions_resp){.throttle_time_ms = 1};
    if (var)
        return;
    p->n_results = 2;
    p->results = alloc(a, 2, sizeof(*p->results));
    p->results[0] = (struct create_partitions_resp_result){S("orders"), 0, KSTR_NULL};
    p->results[1] = (struct create_partitions_resp_result){S("t2"), 37, S("bad count")};
}

static void sresp_describe_configs(int16_t v, int var, struct arena *a,
                                   struct describe_configs_resp *p)
{
    *p = (struct describe_configs_resp){.throttle_time_ms = 1};
    if (var)
        return;
    p->n_results = 2;
    p->results = alloc(a, 2, sizeof(*p->results));
    struct describe_configs_result *res = &p->results[0];
    res->error_message = KSTR_NULL;
    res->resource_type = KAFKA_RESOURCE_TOPIC;
    res->resource_name = S("orders");
    res->n_configs = 2;
    res->configs = alloc(a, 2, sizeof(*res->configs));
    struct describe_configs_entry *c = &res->configs[0];
    c->name = S("retention.ms");
    c->value = S("1000");
    c->documentation = KSTR_NULL;
    if (v >= 3) {
        c->config_type = KAFKA_CONFIG_TYPE_LONG;
        c->documentation = S("How long to keep records.");
    }
    c->is_default = v == 0;
    c->config_source = v >= 1 ? KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC : -1;
    if (v >= 1) {
        c->n_synonyms = 2;
        c->synonyms = alloc(a, 2, sizeof(*c->synonyms));
        c->synonyms[0] = (struct describe_configs_synonym){S("retention.ms"), S("1000"), 1};
        c->synonyms[1] = (struct describe_configs_synonym){S("log.retention.ms"), KSTR_NULL, 5};
    }
    c = &res->configs[1];
    c->name = S("password");
    c->value = KSTR_NULL;
    c->documentation = KSTR_NULL;
    c->read_only = true;
    c->config_source = v >= 1 ? KAFKA_CONFIG_SOURCE_STATIC_BROKER : -1;
    c->is_sensitive = true;
    res = &p->results[1];
    res->error_code = 3;
    res->error_message = S("unknown");
    res->resource_type = KAFKA_RESOURCE_BROKER;
    res->resource_name = S("9");
}

static void sresp_alter_configs(int16_t v, int var, struct arena *a, struct alter_configs_resp *p)
{
    *p = (struct alter_configs_resp){.throttle_time_ms = 1};
    if (var)
        return;
    p->n_responses = 2;
    p->responses = alloc(a, 2, sizeof(*p->responses));
    p->responses[0] = (struct alter_configs_resp_resource){0, KSTR_NULL, 2, S("orders")};
    p->responses[1] = (struct alter_configs_resp_resource){40, S("bad value"), 4, S("1")};
}

static void sresp_delete_records(int16_t v, int var, struct arena *a, struct delete_records_resp *p)
{
    *p = (struct delete_records_resp){.throttle_time_ms = 1};
    if (var)
        return;
    p->n_topics = 1;
    p->topics = alloc(a, 1, sizeof(*p->topics));
    p->topics[0].name = S("orders");
    p->topics[0].n_partitions = 2;
    p->topics[0].partitions = alloc(a, 2, sizeof(struct delete_records_resp_partition));
    p->topics[0].partitions[0] = (struct delete_records_resp_partition){0, 100, 0};
    p->topics[0].partitions[1] = (struct delete_records_resp_partition){1, -1, 3};
}

static void sresp_init_producer_id(int16_t v, int var, struct init_producer_id_resp *p)
{
    if (var)
        *p = (struct init_producer_id_resp){0, 16, -1, -1}; /* NOT_COORDINATOR */
    else
        *p = (struct init_producer_id_resp){3, 0, (int64_t)1 << 40, 32766};
}

static void sresp_find_coordinator(int16_t v, int var, struct arena *a,
                                   struct find_coordinator_resp *p)
{
    *p = (struct find_coordinator_resp){
        .error_message = KSTR_NULL, .node_id = 1, .host = S("localhost"), .port = 9092};
    if (v >= 1)
        p->throttle_time_ms = 1;
    if (v >= 4) {
        *p = (struct find_coordinator_resp){
            .throttle_time_ms = 1, .error_message = KSTR_NULL, .host = S("")};
        p->n_coordinators = var ? 0 : 2;
        p->coordinators = alloc(a, p->n_coordinators, sizeof(*p->coordinators));
        if (!var) {
            p->coordinators[0] = (struct find_coordinator_coordinator){
                S("group-1"), 1, S("localhost"), 9092, 0, KSTR_NULL};
            p->coordinators[1] = (struct find_coordinator_coordinator){
                S("group-2"), -1, S(""), -1, 15, S("not available")};
        }
        return;
    }
    if (var) {
        p->error_code = 15;
        p->error_message = v >= 1 ? S("not available") : KSTR_NULL;
        p->node_id = -1;
        p->host = S("");
        p->port = -1;
    }
}

static void sresp_describe_cluster(int16_t v, int var, struct arena *a,
                                   struct describe_cluster_resp *p)
{
    *p = (struct describe_cluster_resp){.throttle_time_ms = 2,
                                        .error_message = KSTR_NULL,
                                        .endpoint_type = KAFKA_ENDPOINT_BROKERS,
                                        .cluster_id = S("cluster-x"),
                                        .controller_id = 1,
                                        .cluster_authorized_operations = INT32_MIN};
    if (var) {
        p->error_code = 115;
        p->error_message = S("no");
        p->cluster_id = S("");
        p->controller_id = -1;
        return;
    }
    p->n_brokers = 2;
    p->brokers = alloc(a, 2, sizeof(*p->brokers));
    p->brokers[0] = (struct describe_cluster_broker){1, S("h1"), 9092, S("rack-a")};
    p->brokers[1] = (struct describe_cluster_broker){2, S("h2"), 9093, KSTR_NULL};
}

static void sresp_alter_reassignments(int var, struct arena *a, struct alter_reassign_resp *p)
{
    *p = (struct alter_reassign_resp){.throttle_time_ms = 3, .error_message = KSTR_NULL};
    if (var) {
        p->error_code = 41; /* NOT_CONTROLLER */
        p->error_message = S("not now");
        return;
    }
    p->n_responses = 1;
    p->responses = alloc(a, 1, sizeof(*p->responses));
    struct alter_reassign_resp_partition *q = alloc(a, 2, sizeof(*q));
    q[0] = (struct alter_reassign_resp_partition){0, 0, KSTR_NULL};
    q[1] = (struct alter_reassign_resp_partition){7, 39, S("bad")};
    p->responses[0] = (struct alter_reassign_resp_topic){S("orders"), q, 2};
}

/* var 0: one topic, a success and two refusals; var 1: the top-level error, no results */
static void sresp_elect_leaders(int16_t v, int var, struct arena *a, struct elect_leaders_resp *p)
{
    *p = (struct elect_leaders_resp){.throttle_time_ms = 5};
    if (var) {
        p->error_code = v >= 1 ? 31 : 0; /* CLUSTER_AUTHORIZATION_FAILED */
        return;
    }
    p->n_results = 1;
    p->results = alloc(a, 1, sizeof(*p->results));
    struct elect_leaders_resp_partition *q = alloc(a, 3, sizeof(*q));
    q[0] = (struct elect_leaders_resp_partition){0, 0, KSTR_NULL};
    q[1] = (struct elect_leaders_resp_partition){1, 84, S("not needed")};
    q[2] = (struct elect_leaders_resp_partition){9, 3, S("No such partition as orders-9")};
    p->results[0] = (struct elect_leaders_resp_topic){S("orders"), q, 3};
}

static void sresp_list_reassignments(int var, struct arena *a, struct list_reassign_resp *p)
{
    *p = (struct list_reassign_resp){.throttle_time_ms = 4, .error_message = KSTR_NULL};
    if (var)
        return;
    p->n_topics = 1;
    p->topics = alloc(a, 1, sizeof(*p->topics));
    struct list_reassign_resp_partition *q = alloc(a, 1, sizeof(*q));
    q[0] = (struct list_reassign_resp_partition){2, ints(a, 3, 1), 3, ints(a, 2, 2), 2, NULL, 0};
    p->topics[0] = (struct list_reassign_resp_topic){S("orders"), q, 1};
}

static void sresp_describe_log_dirs(int16_t v, int var, struct arena *a,
                                    struct describe_log_dirs_resp *p)
{
    *p = (struct describe_log_dirs_resp){.throttle_time_ms = 1};
    if (v >= 3 && var)
        p->error_code = 31;
    if (var)
        return;
    p->n_results = 1;
    p->results = alloc(a, 1, sizeof(*p->results));
    struct describe_log_dirs_result *res = &p->results[0];
    *res = (struct describe_log_dirs_result){.log_dir = S("/data"),
                                             .total_bytes = v >= 4 ? 1LL << 40 : -1,
                                             .usable_bytes = v >= 4 ? 1LL << 39 : -1};
    res->n_topics = 1;
    res->topics = alloc(a, 1, sizeof(*res->topics));
    res->topics[0].name = S("orders");
    res->topics[0].n_partitions = 2;
    res->topics[0].partitions = alloc(a, 2, sizeof(struct describe_log_dirs_partition));
    res->topics[0].partitions[0] = (struct describe_log_dirs_partition){0, 12345, 0, false};
    res->topics[0].partitions[1] = (struct describe_log_dirs_partition){3, 0, 7, true};
}

static void sresp_offset_for_leader_epoch(int16_t v, int var, struct arena *a,
                                          struct offset_for_leader_epoch_resp *p)
{
    *p = (struct offset_for_leader_epoch_resp){.throttle_time_ms = v >= 2 ? 3 : 0};
    if (var)
        return;
    p->n_topics = 1;
    p->topics = alloc(a, 1, sizeof(*p->topics));
    p->topics[0].topic = S("orders");
    p->topics[0].n_partitions = 2;
    p->topics[0].partitions = alloc(a, 2, sizeof(struct offset_for_leader_epoch_resp_partition));
    p->topics[0].partitions[0] =
        (struct offset_for_leader_epoch_resp_partition){0, 0, v >= 1 ? 3 : -1, 1000};
    p->topics[0].partitions[1] = (struct offset_for_leader_epoch_resp_partition){74, 5, -1, -1};
}

bool tsample_resp(int16_t key, int16_t v, int var, struct arena *a, union kmsg_any_resp *p)
{
    memset(p, 0, sizeof(*p));
    switch (key) {
    case KAPI_API_VERSIONS:
        sresp_api_versions(v, var, a, &p->api_versions);
        return true;
    case KAPI_METADATA:
        sresp_metadata(v, var, a, &p->metadata);
        return true;
    case KAPI_PRODUCE:
        sresp_produce(v, var, a, &p->produce);
        return true;
    case KAPI_FETCH:
        sresp_fetch(v, var, a, &p->fetch);
        return true;
    case KAPI_LIST_OFFSETS:
        sresp_list_offsets(v, var, a, &p->list_offsets);
        return true;
    case KAPI_CREATE_TOPICS:
        sresp_create_topics(v, var, a, &p->create_topics);
        return true;
    case KAPI_DELETE_TOPICS:
        sresp_delete_topics(v, var, a, &p->delete_topics);
        return true;
    case KAPI_CREATE_PARTITIONS:
        sresp_create_partitions(v, var, a, &p->create_partitions);
        return true;
    case KAPI_DESCRIBE_CONFIGS:
        sresp_describe_configs(v, var, a, &p->describe_configs);
        return true;
    case KAPI_ALTER_CONFIGS:
        sresp_alter_configs(v, var, a, &p->alter_configs);
        return true;
    case KAPI_DELETE_RECORDS:
        sresp_delete_records(v, var, a, &p->delete_records);
        return true;
    case KAPI_INIT_PRODUCER_ID:
        sresp_init_producer_id(v, var, &p->init_producer_id);
        return true;
    case KAPI_FIND_COORDINATOR:
        sresp_find_coordinator(v, var, a, &p->find_coordinator);
        return true;
    case KAPI_INCREMENTAL_ALTER_CONFIGS:
        sresp_alter_configs(v, var, a, &p->incremental_alter_configs);
        return true;
    case KAPI_DESCRIBE_CLUSTER:
        sresp_describe_cluster(v, var, a, &p->describe_cluster);
        return true;
    case KAPI_DESCRIBE_LOG_DIRS:
        sresp_describe_log_dirs(v, var, a, &p->describe_log_dirs);
        return true;
    case KAPI_ALTER_PARTITION_REASSIGNMENTS:
        sresp_alter_reassignments(var, a, &p->alter_reassignments);
        return true;
    case KAPI_ELECT_LEADERS:
        sresp_elect_leaders(v, var, a, &p->elect_leaders);
        return true;
    case KAPI_LIST_PARTITION_REASSIGNMENTS:
        sresp_list_reassignments(var, a, &p->list_reassignments);
        return true;
    case KAPI_SASL_HANDSHAKE: {
        static const char *const mechs[] = {"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"};
        p->sasl_handshake = (struct sasl_handshake_resp){var ? 33 : 0, mechs, 3 - var};
        return true;
    }
    case KAPI_SASL_AUTHENTICATE:
        p->sasl_authenticate = (struct sasl_authenticate_resp){
            .error_code = var ? 58 : 0,
            .error_message = var ? S("Authentication failed") : KSTR_NULL,
            .auth_bytes = {(const uint8_t *)"v=abc", var ? 0 : 5},
            .session_lifetime_ms = v >= 1 ? 3600000 : 0};
        return true;
    case KAPI_DESCRIBE_CLIENT_QUOTAS: {
        struct describe_quotas_resp *x = &p->describe_quotas;
        *x = (struct describe_quotas_resp){.throttle_time_ms = 3, .error_message = KSTR_NULL,
                                           .n_entries = var ? 1 : -1};
        if (!var) {
            x->error_code = 42;
            x->error_message = S("bad filter");
            return true;
        }
        x->entries = alloc(a, 1, sizeof(*x->entries));
        struct kquota_entity_part *e = alloc(a, 1, sizeof(*e));
        e[0] = (struct kquota_entity_part){S("user"), KSTR_NULL};
        struct kquota_value *vals = alloc(a, 2, sizeof(*vals));
        vals[0] = (struct kquota_value){S("producer_byte_rate"), 2048};
        vals[1] = (struct kquota_value){S("consumer_byte_rate"), 0.25};
        x->entries[0] = (struct describe_quotas_entry){e, 1, vals, 2};
        return true;
    }
    case KAPI_ALTER_CLIENT_QUOTAS: {
        struct alter_quotas_resp *x = &p->alter_quotas;
        *x = (struct alter_quotas_resp){.throttle_time_ms = 4, .n_entries = 1 + var};
        x->entries = alloc(a, 2, sizeof(*x->entries));
        struct kquota_entity_part *e = alloc(a, 2, sizeof(*e));
        e[0] = (struct kquota_entity_part){S("user"), S("bob")};
        e[1] = (struct kquota_entity_part){S("client-id"), KSTR_NULL};
        x->entries[0] = (struct alter_quotas_result){0, KSTR_NULL, e, 2};
        x->entries[1] = (struct alter_quotas_result){42, S("no such key"), e, 1};
        return true;
    }
    case KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS: {
        struct describe_scram_resp *x = &p->describe_scram;
        *x = (struct describe_scram_resp){.throttle_time_ms = 1, .error_message = KSTR_NULL,
                                          .n_results = 1 + var};
        x->results = alloc(a, 2, sizeof(*x->results));
        struct describe_scram_credential *c = alloc(a, 2, sizeof(*c));
        c[0] = (struct describe_scram_credential){1, 4096};
        c[1] = (struct describe_scram_credential){2, 8192};
        x->results[0] = (struct describe_scram_result){S("alice"), 0, KSTR_NULL, c, 2};
        x->results[1] = (struct describe_scram_result){S("nobody"), 91, S("no user"), NULL, 0};
        return true;
    }
    case KAPI_DESCRIBE_ACLS: {
        struct describe_acls_resp *x = &p->describe_acls;
        *x = (struct describe_acls_resp){.throttle_time_ms = 1, .error_message = KSTR_NULL,
                                         .n_resources = var};
        x->resources = alloc(a, 1, sizeof(*x->resources));
        struct kacl *l = alloc(a, 2, sizeof(*l));
        l[0] = (struct kacl){.principal = S("User:alice"), .host = S("*"), .operation = 4,
                             .permission = 3};
        l[1] = (struct kacl){.principal = S("User:*"), .host = S("h"), .operation = 2,
                             .permission = 2};
        x->resources[0] = (struct describe_acls_resource){2, S("orders-"), v >= 1 ? 4 : 3, l, 2};
        return true;
    }
    case KAPI_CREATE_ACLS: {
        struct create_acls_resp *x = &p->create_acls;
        *x = (struct create_acls_resp){.throttle_time_ms = 1, .n_results = 1 + var};
        x->results = alloc(a, 2, sizeof(*x->results));
        x->results[0] = (struct kacl_result){0, KSTR_NULL};
        x->results[1] = (struct kacl_result){42, S("bad")};
        return true;
    }
    case KAPI_DELETE_ACLS: {
        struct delete_acls_resp *x = &p->delete_acls;
        *x = (struct delete_acls_resp){.throttle_time_ms = 1, .n_results = 1 + var};
        x->results = alloc(a, 2, sizeof(*x->results));
        struct delete_acls_match *m = alloc(a, 1, sizeof(*m));
        m[0] = (struct delete_acls_match){0, KSTR_NULL,
                                          {2, S("t"), v >= 1 ? 4 : 3, S("User:a"), S("*"), 3, 3}};
        x->results[0] = (struct delete_acls_filter_result){0, KSTR_NULL, m, 1};
        x->results[1] = (struct delete_acls_filter_result){42, S("no"), NULL, 0};
        return true;
    }
    case KAPI_ALTER_USER_SCRAM_CREDENTIALS: {
        struct alter_scram_resp *x = &p->alter_scram;
        *x = (struct alter_scram_resp){.throttle_time_ms = 2, .n_results = 1 + var};
        x->results = alloc(a, 2, sizeof(*x->results));
        x->results[0] = (struct alter_scram_result){S("alice"), 0, KSTR_NULL};
        x->results[1] = (struct alter_scram_result){S("x"), 93, S("bad")};
        return true;
    }
    case KAPI_ADD_RAFT_VOTER:
    case KAPI_REMOVE_RAFT_VOTER:
        p->raft_voter = (struct raft_voter_resp){.throttle_time_ms = var,
                                                 .error_code = var ? 126 : 0,
                                                 .error_message = var ? S("dup") : KSTR_NULL};
        return true;
    case KAPI_OFFSET_FOR_LEADER_EPOCH:
        sresp_offset_for_leader_epoch(v, var, a, &p->offset_for_leader_epoch);
        return true;
    default:
        return tgroup_sample_resp(key, v, var, a, p);
    }
}

void tencode_resp(struct kwriter *w, int16_t key, int16_t v, const union kmsg_any_resp *p)
{
    switch (key) {
    case KAPI_API_VERSIONS:
        kmsg_encode_api_versions(w, v, &p->api_versions);
        break;
    case KAPI_METADATA:
        kmsg_encode_metadata(w, v, &p->metadata);
        break;
    case KAPI_PRODUCE:
        kmsg_encode_produce(w, v, &p->produce);
        break;
    case KAPI_FETCH:
        kmsg_encode_fetch(w, v, &p->fetch);
        break;
    case KAPI_LIST_OFFSETS:
        kmsg_encode_list_offsets(w, v, &p->list_offsets);
        break;
    case KAPI_CREATE_TOPICS:
        kmsg_encode_create_topics(w, v, &p->create_topics);
        break;
    case KAPI_DELETE_TOPICS:
        kmsg_encode_delete_topics(w, v, &p->delete_topics);
        break;
    case KAPI_CREATE_PARTITIONS:
        kmsg_encode_create_partitions(w, v, &p->create_partitions);
        break;
    case KAPI_DESCRIBE_CONFIGS:
        kmsg_encode_describe_configs(w, v, &p->describe_configs);
        break;
    case KAPI_ALTER_CONFIGS:
        kmsg_encode_alter_configs(w, v, &p->alter_configs);
        break;
    case KAPI_DELETE_RECORDS:
        kmsg_encode_delete_records(w, v, &p->delete_records);
        break;
    case KAPI_INIT_PRODUCER_ID:
        kmsg_encode_init_producer_id(w, v, &p->init_producer_id);
        break;
    case KAPI_FIND_COORDINATOR:
        kmsg_encode_find_coordinator(w, v, &p->find_coordinator);
        break;
    case KAPI_INCREMENTAL_ALTER_CONFIGS:
        kmsg_encode_incremental_alter_configs(w, v, &p->incremental_alter_configs);
        break;
    case KAPI_DESCRIBE_CLUSTER:
        kmsg_encode_describe_cluster(w, v, &p->describe_cluster);
        break;
    case KAPI_DESCRIBE_LOG_DIRS:
        kmsg_encode_describe_log_dirs(w, v, &p->describe_log_dirs);
        break;
    case KAPI_ALTER_PARTITION_REASSIGNMENTS:
        kmsg_encode_alter_reassignments(w, v, &p->alter_reassignments);
        break;
    case KAPI_ELECT_LEADERS:
        kmsg_encode_elect_leaders(w, v, &p->elect_leaders);
        break;
    case KAPI_LIST_PARTITION_REASSIGNMENTS:
        kmsg_encode_list_reassignments(w, v, &p->list_reassignments);
        break;
    case KAPI_ADD_RAFT_VOTER:
    case KAPI_REMOVE_RAFT_VOTER:
        kmsg_encode_raft_voter(w, key == KAPI_ADD_RAFT_VOTER, v, &p->raft_voter);
        break;
    case KAPI_SASL_HANDSHAKE:
        kmsg_encode_sasl_handshake(w, v, &p->sasl_handshake);
        break;
    case KAPI_SASL_AUTHENTICATE:
        kmsg_encode_sasl_authenticate(w, v, &p->sasl_authenticate);
        break;
    case KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS:
        kmsg_encode_describe_scram(w, v, &p->describe_scram);
        break;
    case KAPI_DESCRIBE_CLIENT_QUOTAS:
        kmsg_encode_describe_quotas(w, v, &p->describe_quotas);
        break;
    case KAPI_ALTER_CLIENT_QUOTAS:
        kmsg_encode_alter_quotas(w, v, &p->alter_quotas);
        break;
    case KAPI_ALTER_USER_SCRAM_CREDENTIALS:
        kmsg_encode_alter_scram(w, v, &p->alter_scram);
        break;
    case KAPI_DESCRIBE_ACLS:
        kmsg_encode_describe_acls(w, v, &p->describe_acls);
        break;
    case KAPI_CREATE_ACLS:
        kmsg_encode_create_acls(w, v, &p->create_acls);
        break;
    case KAPI_DELETE_ACLS:
        kmsg_encode_delete_acls(w, v, &p->delete_acls);
        break;
    case KAPI_OFFSET_FOR_LEADER_EPOCH:
        kmsg_encode_offset_for_leader_epoch(w, v, &p->offset_for_leader_epoch);
        break;
    default:
        (void)tgroup_encode_resp(w, key, v, p);
        break;
    }
}

/* ---- test-side response decoders ---- */

/* Reads the tagged-field section; the broker must write it empty. */
static void d_tags(struct kreader *r, bool flex)
{
    if (flex && kr_uvarint(r) != 0)
        r->err = true;
}

static int32_t d_arr(struct kreader *r, bool flex)
{
    int32_t n = kr_array(r, flex, 1);
    return n;
}

static int32_t dec_entity(struct kreader *r, bool f, struct arena *a,
                          struct kquota_entity_part **out)
{
    int32_t n = d_arr(r, f);
    *out = alloc(a, n > 0 ? n : 1, sizeof(**out));
    for (int32_t i = 0; i < n; i++) {
        (*out)[i].type = kr_str(r, f);
        (*out)[i].name = kr_str(r, f);
        d_tags(r, f);
    }
    return n;
}

static int32_t *d_i32s(struct kreader *r, bool flex, struct arena *a, int32_t *n)
{
    *n = d_arr(r, flex);
    int32_t *v = alloc(a, *n, sizeof(*v));
    for (int32_t i = 0; i < *n; i++)
        v[i] = kr_i32(r);
    return v;
}

static void dec_api_versions(struct kreader *r, int16_t v, bool f, struct arena *a,
                             struct api_versions_resp *p)
{
    p->error_code = kr_i16(r);
    p->n_keys = d_arr(r, f);
    p->keys = alloc(a, p->n_keys, sizeof(*p->keys));
    for (int32_t i = 0; i < p->n_keys; i++) {
        p->keys[i].api_key = kr_i16(r);
        p->keys[i].min_version = kr_i16(r);
        p->keys[i].max_version = kr_i16(r);
        d_tags(r, f);
    }
    if (v >= 1)
        p->throttle_time_ms = kr_i32(r);
    d_tags(r, f);
}

static void dec_metadata(struct kreader *r, int16_t v, bool f, struct arena *a,
                         struct metadata_resp *p)
{
    p->controller_id = -1;
    p->cluster_id = KSTR_NULL;
    p->cluster_authorized_operations = INT32_MIN;
    if (v >= 3)
        p->throttle_time_ms = kr_i32(r);
    p->n_brokers = d_arr(r, f);
    p->brokers = alloc(a, p->n_brokers, sizeof(*p->brokers));
    for (int32_t i = 0; i < p->n_brokers; i++) {
        struct metadata_broker *b = &p->brokers[i];
        b->node_id = kr_i32(r);
        b->host = kr_str(r, f);
        b->port = kr_i32(r);
        b->rack = v >= 1 ? kr_str(r, f) : KSTR_NULL;
        d_tags(r, f);
    }
    if (v >= 2)
        p->cluster_id = kr_str(r, f);
    if (v >= 1)
        p->controller_id = kr_i32(r);
    p->n_topics = d_arr(r, f);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct metadata_topic *t = &p->topics[i];
        t->error_code = kr_i16(r);
        t->name = kr_str(r, f);
        if (v < 12 && t->name.len < 0)
            r->err = true; /* nullable only from v12 */
        if (v >= 10)
            t->topic_id = kr_uuid(r);
        if (v >= 1)
            t->is_internal = kr_bool(r);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            struct metadata_partition *mp = &t->partitions[j];
            mp->error_code = kr_i16(r);
            mp->partition_index = kr_i32(r);
            mp->leader_id = kr_i32(r);
            mp->leader_epoch = v >= 7 ? kr_i32(r) : -1;
            mp->replica_nodes = d_i32s(r, f, a, &mp->n_replica_nodes);
            mp->isr_nodes = d_i32s(r, f, a, &mp->n_isr_nodes);
            if (v >= 5)
                mp->offline_replicas = d_i32s(r, f, a, &mp->n_offline_replicas);
            d_tags(r, f);
        }
        t->topic_authorized_operations = v >= 8 ? kr_i32(r) : INT32_MIN;
        d_tags(r, f);
    }
    if (v >= 8 && v <= 10)
        p->cluster_authorized_operations = kr_i32(r);
    d_tags(r, f);
}

static void dec_produce(struct kreader *r, int16_t v, bool f, struct arena *a,
                        struct produce_resp *p)
{
    p->n_topics = d_arr(r, f);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct produce_resp_topic *t = &p->topics[i];
        t->name = kr_str(r, f);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            struct produce_resp_partition *pp = &t->partitions[j];
            pp->index = kr_i32(r);
            pp->error_code = kr_i16(r);
            pp->base_offset = kr_i64(r);
            pp->log_append_time_ms = v >= 2 ? kr_i64(r) : -1;
            pp->log_start_offset = v >= 5 ? kr_i64(r) : -1;
            pp->error_message = KSTR_NULL;
            if (v >= 8) {
                pp->n_record_errors = d_arr(r, f);
                pp->record_errors = alloc(a, pp->n_record_errors, sizeof(*pp->record_errors));
                for (int32_t k = 0; k < pp->n_record_errors; k++) {
                    pp->record_errors[k].batch_index = kr_i32(r);
                    pp->record_errors[k].batch_index_error_message = kr_str(r, f);
                    d_tags(r, f);
                }
                pp->error_message = kr_str(r, f);
            }
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    if (v >= 1)
        p->throttle_time_ms = kr_i32(r);
    d_tags(r, f);
}

static void dec_fetch(struct kreader *r, int16_t v, bool f, struct arena *a, struct fetch_resp *p)
{
    if (v >= 1)
        p->throttle_time_ms = kr_i32(r);
    if (v >= 7) {
        p->error_code = kr_i16(r);
        p->session_id = kr_i32(r);
    }
    p->n_topics = d_arr(r, f);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct fetch_resp_topic *t = &p->topics[i];
        if (v >= 13) {
            t->topic = S("");
            t->topic_id = kr_uuid(r);
        } else {
            t->topic = kr_str(r, f);
        }
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            struct fetch_resp_partition *fp = &t->partitions[j];
            fp->partition_index = kr_i32(r);
            fp->error_code = kr_i16(r);
            fp->high_watermark = kr_i64(r);
            fp->last_stable_offset = v >= 4 ? kr_i64(r) : -1;
            fp->log_start_offset = v >= 5 ? kr_i64(r) : -1;
            fp->n_aborted = -1;
            if (v >= 4) {
                fp->n_aborted = d_arr(r, f);
                fp->aborted = alloc(a, fp->n_aborted, sizeof(*fp->aborted));
                for (int32_t k = 0; k < fp->n_aborted; k++) {
                    fp->aborted[k].producer_id = kr_i64(r);
                    fp->aborted[k].first_offset = kr_i64(r);
                    d_tags(r, f);
                }
            }
            fp->preferred_read_replica = v >= 11 ? kr_i32(r) : -1;
            struct kbytes rec = kr_bytes(r, f);
            fp->records_len = rec.len;
            fp->write_records = trecords_write;
            fp->records_data = trec(a, (const char *)rec.p, rec.len);
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_list_offsets(struct kreader *r, int16_t v, bool f, struct arena *a,
                             struct list_offsets_resp *p)
{
    if (v >= 2)
        p->throttle_time_ms = kr_i32(r);
    p->n_topics = d_arr(r, f);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct list_offsets_resp_topic *t = &p->topics[i];
        t->name = kr_str(r, f);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            struct list_offsets_resp_partition *lp = &t->partitions[j];
            lp->partition_index = kr_i32(r);
            lp->error_code = kr_i16(r);
            lp->timestamp = kr_i64(r);
            lp->offset = kr_i64(r);
            lp->leader_epoch = v >= 4 ? kr_i32(r) : -1;
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_create_topics(struct kreader *r, int16_t v, bool f, struct arena *a,
                              struct create_topics_resp *p)
{
    if (v >= 2)
        p->throttle_time_ms = kr_i32(r);
    p->n_topics = d_arr(r, f);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct create_topics_resp_topic *t = &p->topics[i];
        t->name = kr_str(r, f);
        if (v >= 7)
            t->topic_id = kr_uuid(r);
        t->error_code = kr_i16(r);
        t->error_message = v >= 1 ? kr_str(r, f) : KSTR_NULL;
        t->num_partitions = -1;
        t->replication_factor = -1;
        t->n_configs = -1;
        if (v >= 5) {
            t->num_partitions = kr_i32(r);
            t->replication_factor = kr_i16(r);
            t->n_configs = d_arr(r, f);
            t->configs = alloc(a, t->n_configs, sizeof(*t->configs));
            for (int32_t j = 0; j < t->n_configs; j++) {
                struct create_topics_resp_config *c = &t->configs[j];
                c->name = kr_str(r, f);
                c->value = kr_str(r, f);
                c->read_only = kr_bool(r);
                c->config_source = kr_i8(r);
                c->is_sensitive = kr_bool(r);
                d_tags(r, f);
            }
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_delete_topics(struct kreader *r, int16_t v, bool f, struct arena *a,
                              struct delete_topics_resp *p)
{
    if (v >= 1)
        p->throttle_time_ms = kr_i32(r);
    p->n_responses = d_arr(r, f);
    p->responses = alloc(a, p->n_responses, sizeof(*p->responses));
    for (int32_t i = 0; i < p->n_responses; i++) {
        struct delete_topics_resp_topic *t = &p->responses[i];
        t->name = kr_str(r, f);
        if (v < 6 && t->name.len < 0)
            r->err = true; /* nullable only from v6 */
        if (v >= 6)
            t->topic_id = kr_uuid(r);
        t->error_code = kr_i16(r);
        t->error_message = v >= 5 ? kr_str(r, f) : KSTR_NULL;
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_create_partitions(struct kreader *r, int16_t v, bool f, struct arena *a,
                                  struct create_partitions_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->n_results = d_arr(r, f);
    p->results = alloc(a, p->n_results, sizeof(*p->results));
    for (int32_t i = 0; i < p->n_results; i++) {
        p->results[i].name = kr_str(r, f);
        p->results[i].error_code = kr_i16(r);
        p->results[i].error_message = kr_str(r, f);
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_describe_configs(struct kreader *r, int16_t v, bool f, struct arena *a,
                                 struct describe_configs_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->n_results = d_arr(r, f);
    p->results = alloc(a, p->n_results, sizeof(*p->results));
    for (int32_t i = 0; i < p->n_results; i++) {
        struct describe_configs_result *res = &p->results[i];
        res->error_code = kr_i16(r);
        res->error_message = kr_str(r, f);
        res->resource_type = kr_i8(r);
        res->resource_name = kr_str(r, f);
        res->n_configs = d_arr(r, f);
        res->configs = alloc(a, res->n_configs, sizeof(*res->configs));
        for (int32_t j = 0; j < res->n_configs; j++) {
            struct describe_configs_entry *c = &res->configs[j];
            c->name = kr_str(r, f);
            c->value = kr_str(r, f);
            c->read_only = kr_bool(r);
            if (v == 0)
                c->is_default = kr_bool(r);
            c->config_source = v >= 1 ? kr_i8(r) : -1;
            c->is_sensitive = kr_bool(r);
            if (v >= 1) {
                c->n_synonyms = d_arr(r, f);
                c->synonyms = alloc(a, c->n_synonyms, sizeof(*c->synonyms));
                for (int32_t k = 0; k < c->n_synonyms; k++) {
                    c->synonyms[k].name = kr_str(r, f);
                    c->synonyms[k].value = kr_str(r, f);
                    c->synonyms[k].source = kr_i8(r);
                    d_tags(r, f);
                }
            }
            c->documentation = KSTR_NULL;
            if (v >= 3) {
                c->config_type = kr_i8(r);
                c->documentation = kr_str(r, f);
            }
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_alter_configs(struct kreader *r, int16_t v, bool f, struct arena *a,
                              struct alter_configs_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->n_responses = d_arr(r, f);
    p->responses = alloc(a, p->n_responses, sizeof(*p->responses));
    for (int32_t i = 0; i < p->n_responses; i++) {
        struct alter_configs_resp_resource *res = &p->responses[i];
        res->error_code = kr_i16(r);
        res->error_message = kr_str(r, f);
        res->resource_type = kr_i8(r);
        res->resource_name = kr_str(r, f);
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_delete_records(struct kreader *r, int16_t v, bool f, struct arena *a,
                               struct delete_records_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->n_topics = d_arr(r, f);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct delete_records_resp_topic *t = &p->topics[i];
        t->name = kr_str(r, f);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            t->partitions[j].partition_index = kr_i32(r);
            t->partitions[j].low_watermark = kr_i64(r);
            t->partitions[j].error_code = kr_i16(r);
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_init_producer_id(struct kreader *r, int16_t v, bool f,
                                 struct init_producer_id_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->error_code = kr_i16(r);
    p->producer_id = kr_i64(r);
    p->producer_epoch = kr_i16(r);
    d_tags(r, f);
}

static void dec_find_coordinator(struct kreader *r, int16_t v, bool f, struct arena *a,
                                 struct find_coordinator_resp *p)
{
    if (v >= 1)
        p->throttle_time_ms = kr_i32(r);
    if (v >= 4) {
        p->error_message = KSTR_NULL;
        p->host = S("");
        p->n_coordinators = d_arr(r, f);
        p->coordinators = alloc(a, p->n_coordinators, sizeof(*p->coordinators));
        for (int32_t i = 0; i < p->n_coordinators; i++) {
            struct find_coordinator_coordinator *c = &p->coordinators[i];
            c->key = kr_str(r, f);
            c->node_id = kr_i32(r);
            c->host = kr_str(r, f);
            c->port = kr_i32(r);
            c->error_code = kr_i16(r);
            c->error_message = kr_str(r, f);
            d_tags(r, f);
        }
        d_tags(r, f);
        return;
    }
    p->error_code = kr_i16(r);
    p->error_message = v >= 1 ? kr_str(r, f) : KSTR_NULL;
    p->node_id = kr_i32(r);
    p->host = kr_str(r, f);
    p->port = kr_i32(r);
    d_tags(r, f);
}

static void dec_describe_cluster(struct kreader *r, int16_t v, bool f, struct arena *a,
                                 struct describe_cluster_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->error_code = kr_i16(r);
    p->error_message = kr_str(r, f);
    p->endpoint_type = v >= 1 ? kr_i8(r) : KAFKA_ENDPOINT_BROKERS;
    p->cluster_id = kr_str(r, f);
    p->controller_id = kr_i32(r);
    p->n_brokers = d_arr(r, f);
    p->brokers = alloc(a, p->n_brokers, sizeof(*p->brokers));
    for (int32_t i = 0; i < p->n_brokers; i++) {
        p->brokers[i].broker_id = kr_i32(r);
        p->brokers[i].host = kr_str(r, f);
        p->brokers[i].port = kr_i32(r);
        p->brokers[i].rack = kr_str(r, f);
        d_tags(r, f);
    }
    p->cluster_authorized_operations = kr_i32(r);
    d_tags(r, f);
}

static void dec_alter_reassignments(struct kreader *r, bool f, struct arena *a,
                                    struct alter_reassign_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->error_code = kr_i16(r);
    p->error_message = kr_str(r, f);
    p->n_responses = d_arr(r, f);
    p->responses = alloc(a, p->n_responses, sizeof(*p->responses));
    for (int32_t i = 0; i < p->n_responses; i++) {
        struct alter_reassign_resp_topic *t = &p->responses[i];
        t->name = kr_str(r, f);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            t->partitions[j].partition_index = kr_i32(r);
            t->partitions[j].error_code = kr_i16(r);
            t->partitions[j].error_message = kr_str(r, f);
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_elect_leaders(struct kreader *r, int16_t v, bool f, struct arena *a,
                              struct elect_leaders_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->error_code = v >= 1 ? kr_i16(r) : 0;
    p->n_results = d_arr(r, f);
    p->results = alloc(a, p->n_results, sizeof(*p->results));
    for (int32_t i = 0; i < p->n_results; i++) {
        struct elect_leaders_resp_topic *t = &p->results[i];
        t->topic = kr_str(r, f);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            t->partitions[j].partition_id = kr_i32(r);
            t->partitions[j].error_code = kr_i16(r);
            t->partitions[j].error_message = kr_str(r, f);
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_list_reassignments(struct kreader *r, bool f, struct arena *a,
                                   struct list_reassign_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->error_code = kr_i16(r);
    p->error_message = kr_str(r, f);
    p->n_topics = d_arr(r, f);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct list_reassign_resp_topic *t = &p->topics[i];
        t->name = kr_str(r, f);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            struct list_reassign_resp_partition *q = &t->partitions[j];
            q->partition_index = kr_i32(r);
            q->replicas = d_i32s(r, f, a, &q->n_replicas);
            q->adding = d_i32s(r, f, a, &q->n_adding);
            q->removing = d_i32s(r, f, a, &q->n_removing);
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_describe_log_dirs(struct kreader *r, int16_t v, bool f, struct arena *a,
                                  struct describe_log_dirs_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->error_code = v >= 3 ? kr_i16(r) : 0;
    p->n_results = d_arr(r, f);
    p->results = alloc(a, p->n_results, sizeof(*p->results));
    for (int32_t i = 0; i < p->n_results; i++) {
        struct describe_log_dirs_result *res = &p->results[i];
        res->error_code = kr_i16(r);
        res->log_dir = kr_str(r, f);
        res->n_topics = d_arr(r, f);
        res->topics = alloc(a, res->n_topics, sizeof(*res->topics));
        for (int32_t j = 0; j < res->n_topics; j++) {
            struct describe_log_dirs_topic *t = &res->topics[j];
            t->name = kr_str(r, f);
            t->n_partitions = d_arr(r, f);
            t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
            for (int32_t k = 0; k < t->n_partitions; k++) {
                t->partitions[k].partition_index = kr_i32(r);
                t->partitions[k].partition_size = kr_i64(r);
                t->partitions[k].offset_lag = kr_i64(r);
                t->partitions[k].is_future_key = kr_bool(r);
                d_tags(r, f);
            }
            d_tags(r, f);
        }
        res->total_bytes = v >= 4 ? kr_i64(r) : -1;
        res->usable_bytes = v >= 4 ? kr_i64(r) : -1;
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_offset_for_leader_epoch(struct kreader *r, int16_t v, bool f, struct arena *a,
                                        struct offset_for_leader_epoch_resp *p)
{
    p->throttle_time_ms = v >= 2 ? kr_i32(r) : 0;
    p->n_topics = d_arr(r, f);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct offset_for_leader_epoch_resp_topic *t = &p->topics[i];
        t->topic = kr_str(r, f);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            t->partitions[j].error_code = kr_i16(r);
            t->partitions[j].partition = kr_i32(r);
            t->partitions[j].leader_epoch = v >= 1 ? kr_i32(r) : -1;
            t->partitions[j].end_offset = kr_i64(r);
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

int tdec_resp(struct kreader *r, int16_t key, int16_t v, struct arena *a, union kmsg_any_resp *p)
{
    bool f = kafka_api_flexible(key, v);
    memset(p, 0, sizeof(*p));
    switch (key) {
    case KAPI_API_VERSIONS:
        dec_api_versions(r, v, f, a, &p->api_versions);
        break;
    case KAPI_METADATA:
        dec_metadata(r, v, f, a, &p->metadata);
        break;
    case KAPI_PRODUCE:
        dec_produce(r, v, f, a, &p->produce);
        break;
    case KAPI_FETCH:
        dec_fetch(r, v, f, a, &p->fetch);
        break;
    case KAPI_LIST_OFFSETS:
        dec_list_offsets(r, v, f, a, &p->list_offsets);
        break;
    case KAPI_CREATE_TOPICS:
        dec_create_topics(r, v, f, a, &p->create_topics);
        break;
    case KAPI_DELETE_TOPICS:
        dec_delete_topics(r, v, f, a, &p->delete_topics);
        break;
    case KAPI_CREATE_PARTITIONS:
        dec_create_partitions(r, v, f, a, &p->create_partitions);
        break;
    case KAPI_DESCRIBE_CONFIGS:
        dec_describe_configs(r, v, f, a, &p->describe_configs);
        break;
    case KAPI_ALTER_CONFIGS:
        dec_alter_configs(r, v, f, a, &p->alter_configs);
        break;
    case KAPI_DELETE_RECORDS:
        dec_delete_records(r, v, f, a, &p->delete_records);
        break;
    case KAPI_INIT_PRODUCER_ID:
        dec_init_producer_id(r, v, f, &p->init_producer_id);
        break;
    case KAPI_FIND_COORDINATOR:
        dec_find_coordinator(r, v, f, a, &p->find_coordinator);
        break;
    case KAPI_INCREMENTAL_ALTER_CONFIGS:
        dec_alter_configs(r, v, f, a, &p->incremental_alter_configs);
        break;
    case KAPI_DESCRIBE_CLUSTER:
        dec_describe_cluster(r, v, f, a, &p->describe_cluster);
        break;
    case KAPI_DESCRIBE_LOG_DIRS:
        dec_describe_log_dirs(r, v, f, a, &p->describe_log_dirs);
        break;
    case KAPI_ALTER_PARTITION_REASSIGNMENTS:
        dec_alter_reassignments(r, f, a, &p->alter_reassignments);
        break;
    case KAPI_ELECT_LEADERS:
        dec_elect_leaders(r, v, f, a, &p->elect_leaders);
        break;
    case KAPI_LIST_PARTITION_REASSIGNMENTS:
        dec_list_reassignments(r, f, a, &p->list_reassignments);
        break;
    case KAPI_SASL_HANDSHAKE: {
        p->sasl_handshake.error_code = kr_i16(r);
        int32_t n = d_arr(r, false);
        const char **m = alloc(a, n, sizeof(char *));
        for (int32_t i = 0; i < n; i++) {
            struct kstr x = kr_str(r, false);
            m[i] = x.len >= 0 ? arena_strndup(a, x.p, (size_t)x.len) : "";
        }
        p->sasl_handshake.mechanisms = m;
        p->sasl_handshake.n_mechanisms = n;
        break;
    }
    case KAPI_SASL_AUTHENTICATE:
        p->sasl_authenticate.error_code = kr_i16(r);
        p->sasl_authenticate.error_message = kr_str(r, f);
        p->sasl_authenticate.auth_bytes = kr_bytes(r, f);
        if (v >= 1)
            p->sasl_authenticate.session_lifetime_ms = kr_i64(r);
        d_tags(r, f);
        break;
    case KAPI_DESCRIBE_CLIENT_QUOTAS: {
        struct describe_quotas_resp *x = &p->describe_quotas;
        x->throttle_time_ms = kr_i32(r);
        x->error_code = kr_i16(r);
        x->error_message = kr_str(r, f);
        x->n_entries = d_arr(r, f);
        x->entries = alloc(a, x->n_entries > 0 ? x->n_entries : 1, sizeof(*x->entries));
        for (int32_t i = 0; i < x->n_entries; i++) {
            struct describe_quotas_entry *e = &x->entries[i];
            e->n_entity = dec_entity(r, f, a, &e->entity);
            e->n_values = d_arr(r, f);
            e->values = alloc(a, e->n_values, sizeof(*e->values));
            for (int32_t j = 0; j < e->n_values; j++) {
                e->values[j].key = kr_str(r, f);
                e->values[j].value = kr_f64(r);
                d_tags(r, f);
            }
            d_tags(r, f);
        }
        d_tags(r, f);
        break;
    }
    case KAPI_ALTER_CLIENT_QUOTAS: {
        struct alter_quotas_resp *x = &p->alter_quotas;
        x->throttle_time_ms = kr_i32(r);
        x->n_entries = d_arr(r, f);
        x->entries = alloc(a, x->n_entries, sizeof(*x->entries));
        for (int32_t i = 0; i < x->n_entries; i++) {
            x->entries[i].error_code = kr_i16(r);
            x->entries[i].error_message = kr_str(r, f);
            x->entries[i].n_entity = dec_entity(r, f, a, &x->entries[i].entity);
            d_tags(r, f);
        }
        d_tags(r, f);
        break;
    }
    case KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS: {
        struct describe_scram_resp *x = &p->describe_scram;
        x->throttle_time_ms = kr_i32(r);
        x->error_code = kr_i16(r);
        x->error_message = kr_str(r, f);
        x->n_results = d_arr(r, f);
        x->results = alloc(a, x->n_results, sizeof(*x->results));
        for (int32_t i = 0; i < x->n_results; i++) {
            struct describe_scram_result *res = &x->results[i];
            res->user = kr_str(r, f);
            res->error_code = kr_i16(r);
            res->error_message = kr_str(r, f);
            res->n_credentials = d_arr(r, f);
            res->credentials = alloc(a, res->n_credentials, sizeof(*res->credentials));
            for (int32_t j = 0; j < res->n_credentials; j++) {
                res->credentials[j].mechanism = kr_i8(r);
                res->credentials[j].iterations = kr_i32(r);
                d_tags(r, f);
            }
            d_tags(r, f);
        }
        d_tags(r, f);
        break;
    }
    case KAPI_DESCRIBE_ACLS: {
        struct describe_acls_resp *x = &p->describe_acls;
        x->throttle_time_ms = kr_i32(r);
        x->error_code = kr_i16(r);
        x->error_message = kr_str(r, f);
        x->n_resources = d_arr(r, f);
        x->resources = alloc(a, x->n_resources, sizeof(*x->resources));
        for (int32_t i = 0; i < x->n_resources; i++) {
            struct describe_acls_resource *res = &x->resources[i];
            res->resource_type = kr_i8(r);
            res->resource_name = kr_str(r, f);
            res->pattern_type = v >= 1 ? kr_i8(r) : 3;
            res->n_acls = d_arr(r, f);
            res->acls = alloc(a, res->n_acls, sizeof(*res->acls));
            for (int32_t j = 0; j < res->n_acls; j++) {
                res->acls[j].principal = kr_str(r, f);
                res->acls[j].host = kr_str(r, f);
                res->acls[j].operation = kr_i8(r);
                res->acls[j].permission = kr_i8(r);
                d_tags(r, f);
            }
            d_tags(r, f);
        }
        d_tags(r, f);
        break;
    }
    case KAPI_CREATE_ACLS: {
        struct create_acls_resp *x = &p->create_acls;
        x->throttle_time_ms = kr_i32(r);
        x->n_results = d_arr(r, f);
        x->results = alloc(a, x->n_results, sizeof(*x->results));
        for (int32_t i = 0; i < x->n_results; i++) {
            x->results[i].error_code = kr_i16(r);
            x->results[i].error_message = kr_str(r, f);
            d_tags(r, f);
        }
        d_tags(r, f);
        break;
    }
    case KAPI_DELETE_ACLS: {
        struct delete_acls_resp *x = &p->delete_acls;
        x->throttle_time_ms = kr_i32(r);
        x->n_results = d_arr(r, f);
        x->results = alloc(a, x->n_results, sizeof(*x->results));
        for (int32_t i = 0; i < x->n_results; i++) {
            struct delete_acls_filter_result *fr = &x->results[i];
            fr->error_code = kr_i16(r);
            fr->error_message = kr_str(r, f);
            fr->n_matches = d_arr(r, f);
            fr->matches = alloc(a, fr->n_matches, sizeof(*fr->matches));
            for (int32_t j = 0; j < fr->n_matches; j++) {
                struct delete_acls_match *m = &fr->matches[j];
                m->error_code = kr_i16(r);
                m->error_message = kr_str(r, f);
                m->acl.resource_type = kr_i8(r);
                m->acl.resource_name = kr_str(r, f);
                m->acl.pattern_type = v >= 1 ? kr_i8(r) : 3;
                m->acl.principal = kr_str(r, f);
                m->acl.host = kr_str(r, f);
                m->acl.operation = kr_i8(r);
                m->acl.permission = kr_i8(r);
                d_tags(r, f);
            }
            d_tags(r, f);
        }
        d_tags(r, f);
        break;
    }
    case KAPI_ALTER_USER_SCRAM_CREDENTIALS: {
        struct alter_scram_resp *x = &p->alter_scram;
        x->throttle_time_ms = kr_i32(r);
        x->n_results = d_arr(r, f);
        x->results = alloc(a, x->n_results, sizeof(*x->results));
        for (int32_t i = 0; i < x->n_results; i++) {
            x->results[i].user = kr_str(r, f);
            x->results[i].error_code = kr_i16(r);
            x->results[i].error_message = kr_str(r, f);
            d_tags(r, f);
        }
        d_tags(r, f);
        break;
    }
    case KAPI_ADD_RAFT_VOTER:
    case KAPI_REMOVE_RAFT_VOTER:
        p->raft_voter.throttle_time_ms = kr_i32(r);
        p->raft_voter.error_code = kr_i16(r);
        p->raft_voter.error_message = kr_str(r, f);
        d_tags(r, f);
        break;
    case KAPI_OFFSET_FOR_LEADER_EPOCH:
        dec_offset_for_leader_epoch(r, v, f, a, &p->offset_for_leader_epoch);
        break;
    default:
        if (!tgroup_dec_resp(r, key, v, a, p))
            return -1;
        break;
    }
    return kr_ok(r) ? 0 : -1;
}
