/* Round trips of every API and version in range:
 *   requests:  sample --(test-side encoder)--> bytes --(kmsg_decode_*)--> struct == sample,
 *              with and without unknown tagged fields at every level of flexible versions;
 *   responses: sample --(kmsg_encode_*)--> bytes --(test-side decoder)--> struct == sample.
 * Samples hold, for fields a version lacks, the defaults msg.h documents, so comparing every
 * field also checks that decoders set those defaults. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "kafka/api.h"
#include "kmsg_testenc.h"
#include "test.h"

/* ---- comparisons ---- */

static void str_eq(struct kstr x, struct kstr y)
{
    ASSERT_EQ(x.len, y.len);
    if (x.len > 0)
        ASSERT_MEMEQ(x.p, y.p, (size_t)x.len);
}

static void bytes_eq(struct kbytes x, struct kbytes y)
{
    ASSERT_EQ(x.len, y.len);
    if (x.len > 0)
        ASSERT_MEMEQ(x.p, y.p, (size_t)x.len);
}

static void i32s_eq(const int32_t *x, int32_t nx, const int32_t *y, int32_t ny)
{
    ASSERT_EQ(nx, ny);
    for (int32_t i = 0; i < nx; i++)
        ASSERT_EQ(x[i], y[i]);
}

static void acl_eq(const struct kacl *a, const struct kacl *b)
{
    ASSERT_EQ(a->resource_type, b->resource_type);
    str_eq(a->resource_name, b->resource_name);
    ASSERT_EQ(a->pattern_type, b->pattern_type);
    str_eq(a->principal, b->principal);
    str_eq(a->host, b->host);
    ASSERT_EQ(a->operation, b->operation);
    ASSERT_EQ(a->permission, b->permission);
}

static void entity_eq(const struct kquota_entity_part *a, int32_t na,
                      const struct kquota_entity_part *b, int32_t nb)
{
    ASSERT_EQ(na, nb);
    for (int32_t i = 0; i < na; i++) {
        str_eq(a[i].type, b[i].type);
        str_eq(a[i].name, b[i].name);
    }
}

static void strs_eq(const struct kstr *x, int32_t nx, const struct kstr *y, int32_t ny)
{
    ASSERT_EQ(nx, ny);
    for (int32_t i = 0; i < nx; i++)
        str_eq(x[i], y[i]);
}

static void uuid_eq(struct kuuid x, struct kuuid y)
{
    ASSERT_MEMEQ(x.b, y.b, sizeof(x.b));
}

/* Arrays of ids beside arrays of names: both absent (NULL) or n equal ids. */
static void uuids_eq(const struct kuuid *x, const struct kuuid *y, int32_t n)
{
    ASSERT_EQ(x == NULL, y == NULL);
    for (int32_t i = 0; x && i < n; i++)
        uuid_eq(x[i], y[i]);
}

static void configs_eq(const struct config_entry *x, int32_t nx, const struct config_entry *y,
                       int32_t ny)
{
    ASSERT_EQ(nx, ny);
    for (int32_t i = 0; i < nx; i++) {
        str_eq(x[i].name, y[i].name);
        str_eq(x[i].value, y[i].value);
    }
}

static void req_eq(int16_t key, const union kmsg_any_req *x, const union kmsg_any_req *y)
{
    switch (key) {
    case KAPI_API_VERSIONS:
        str_eq(x->api_versions.client_software_name, y->api_versions.client_software_name);
        str_eq(x->api_versions.client_software_version, y->api_versions.client_software_version);
        break;
    case KAPI_METADATA: {
        const struct metadata_req *a = &x->metadata, *b = &y->metadata;
        strs_eq(a->topics, a->n_topics, b->topics, b->n_topics);
        uuids_eq(a->topic_ids, b->topic_ids, a->n_topics);
        ASSERT_EQ(a->allow_auto_topic_creation, b->allow_auto_topic_creation);
        ASSERT_EQ(a->include_cluster_authorized_operations,
                  b->include_cluster_authorized_operations);
        ASSERT_EQ(a->include_topic_authorized_operations, b->include_topic_authorized_operations);
        break;
    }
    case KAPI_PRODUCE: {
        const struct produce_req *a = &x->produce, *b = &y->produce;
        str_eq(a->transactional_id, b->transactional_id);
        ASSERT_EQ(a->acks, b->acks);
        ASSERT_EQ(a->timeout_ms, b->timeout_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].name, b->topics[i].name);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                ASSERT_EQ(a->topics[i].partitions[j].index, b->topics[i].partitions[j].index);
                bytes_eq(a->topics[i].partitions[j].records, b->topics[i].partitions[j].records);
            }
        }
        break;
    }
    case KAPI_FETCH: {
        const struct fetch_req *a = &x->fetch, *b = &y->fetch;
        ASSERT_EQ(a->replica_id, b->replica_id);
        ASSERT_EQ(a->max_wait_ms, b->max_wait_ms);
        ASSERT_EQ(a->min_bytes, b->min_bytes);
        ASSERT_EQ(a->max_bytes, b->max_bytes);
        ASSERT_EQ(a->isolation_level, b->isolation_level);
        ASSERT_EQ(a->session_id, b->session_id);
        ASSERT_EQ(a->session_epoch, b->session_epoch);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            const struct fetch_req_topic *ta = &a->topics[i], *tb = &b->topics[i];
            str_eq(ta->topic, tb->topic);
            uuid_eq(ta->topic_id, tb->topic_id);
            ASSERT_EQ(ta->n_partitions, tb->n_partitions);
            for (int32_t j = 0; j < ta->n_partitions; j++) {
                const struct fetch_req_partition *pa = &ta->partitions[j], *pb = &tb->partitions[j];
                ASSERT_EQ(pa->partition, pb->partition);
                ASSERT_EQ(pa->current_leader_epoch, pb->current_leader_epoch);
                ASSERT_EQ(pa->fetch_offset, pb->fetch_offset);
                ASSERT_EQ(pa->last_fetched_epoch, pb->last_fetched_epoch);
                ASSERT_EQ(pa->log_start_offset, pb->log_start_offset);
                ASSERT_EQ(pa->partition_max_bytes, pb->partition_max_bytes);
            }
        }
        ASSERT_EQ(a->n_forgotten, b->n_forgotten);
        for (int32_t i = 0; i < a->n_forgotten; i++) {
            str_eq(a->forgotten[i].topic, b->forgotten[i].topic);
            uuid_eq(a->forgotten[i].topic_id, b->forgotten[i].topic_id);
            i32s_eq(a->forgotten[i].partitions, a->forgotten[i].n_partitions,
                    b->forgotten[i].partitions, b->forgotten[i].n_partitions);
        }
        str_eq(a->rack_id, b->rack_id);
        break;
    }
    case KAPI_LIST_OFFSETS: {
        const struct list_offsets_req *a = &x->list_offsets, *b = &y->list_offsets;
        ASSERT_EQ(a->replica_id, b->replica_id);
        ASSERT_EQ(a->isolation_level, b->isolation_level);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].name, b->topics[i].name);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                const struct list_offsets_req_partition *pa = &a->topics[i].partitions[j];
                const struct list_offsets_req_partition *pb = &b->topics[i].partitions[j];
                ASSERT_EQ(pa->partition_index, pb->partition_index);
                ASSERT_EQ(pa->current_leader_epoch, pb->current_leader_epoch);
                ASSERT_EQ(pa->timestamp, pb->timestamp);
            }
        }
        break;
    }
    case KAPI_CREATE_TOPICS: {
        const struct create_topics_req *a = &x->create_topics, *b = &y->create_topics;
        ASSERT_EQ(a->timeout_ms, b->timeout_ms);
        ASSERT_EQ(a->validate_only, b->validate_only);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            const struct create_topics_req_topic *ta = &a->topics[i], *tb = &b->topics[i];
            str_eq(ta->name, tb->name);
            ASSERT_EQ(ta->num_partitions, tb->num_partitions);
            ASSERT_EQ(ta->replication_factor, tb->replication_factor);
            ASSERT_EQ(ta->n_assignments, tb->n_assignments);
            for (int32_t j = 0; j < ta->n_assignments; j++) {
                ASSERT_EQ(ta->assignments[j].partition_index, tb->assignments[j].partition_index);
                i32s_eq(ta->assignments[j].broker_ids, ta->assignments[j].n_broker_ids,
                        tb->assignments[j].broker_ids, tb->assignments[j].n_broker_ids);
            }
            configs_eq(ta->configs, ta->n_configs, tb->configs, tb->n_configs);
        }
        break;
    }
    case KAPI_DELETE_TOPICS:
        strs_eq(x->delete_topics.topic_names, x->delete_topics.n_topic_names,
                y->delete_topics.topic_names, y->delete_topics.n_topic_names);
        uuids_eq(x->delete_topics.topic_ids, y->delete_topics.topic_ids,
                 x->delete_topics.n_topic_names);
        ASSERT_EQ(x->delete_topics.timeout_ms, y->delete_topics.timeout_ms);
        break;
    case KAPI_CREATE_PARTITIONS: {
        const struct create_partitions_req *a = &x->create_partitions, *b = &y->create_partitions;
        ASSERT_EQ(a->timeout_ms, b->timeout_ms);
        ASSERT_EQ(a->validate_only, b->validate_only);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            const struct create_partitions_req_topic *ta = &a->topics[i], *tb = &b->topics[i];
            str_eq(ta->name, tb->name);
            ASSERT_EQ(ta->count, tb->count);
            ASSERT_EQ(ta->n_assignments, tb->n_assignments);
            for (int32_t j = 0; j < ta->n_assignments; j++)
                i32s_eq(ta->assignments[j].broker_ids, ta->assignments[j].n_broker_ids,
                        tb->assignments[j].broker_ids, tb->assignments[j].n_broker_ids);
        }
        break;
    }
    case KAPI_DESCRIBE_CONFIGS: {
        const struct describe_configs_req *a = &x->describe_configs, *b = &y->describe_configs;
        ASSERT_EQ(a->include_synonyms, b->include_synonyms);
        ASSERT_EQ(a->include_documentation, b->include_documentation);
        ASSERT_EQ(a->n_resources, b->n_resources);
        for (int32_t i = 0; i < a->n_resources; i++) {
            ASSERT_EQ(a->resources[i].resource_type, b->resources[i].resource_type);
            str_eq(a->resources[i].resource_name, b->resources[i].resource_name);
            strs_eq(a->resources[i].configuration_keys, a->resources[i].n_configuration_keys,
                    b->resources[i].configuration_keys, b->resources[i].n_configuration_keys);
        }
        break;
    }
    case KAPI_ALTER_CONFIGS: {
        const struct alter_configs_req *a = &x->alter_configs, *b = &y->alter_configs;
        ASSERT_EQ(a->validate_only, b->validate_only);
        ASSERT_EQ(a->n_resources, b->n_resources);
        for (int32_t i = 0; i < a->n_resources; i++) {
            ASSERT_EQ(a->resources[i].resource_type, b->resources[i].resource_type);
            str_eq(a->resources[i].resource_name, b->resources[i].resource_name);
            configs_eq(a->resources[i].configs, a->resources[i].n_configs, b->resources[i].configs,
                       b->resources[i].n_configs);
        }
        break;
    }
    case KAPI_DELETE_RECORDS: {
        const struct delete_records_req *a = &x->delete_records, *b = &y->delete_records;
        ASSERT_EQ(a->timeout_ms, b->timeout_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].name, b->topics[i].name);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                ASSERT_EQ(a->topics[i].partitions[j].partition_index,
                          b->topics[i].partitions[j].partition_index);
                ASSERT_EQ(a->topics[i].partitions[j].offset, b->topics[i].partitions[j].offset);
            }
        }
        break;
    }
    case KAPI_INIT_PRODUCER_ID:
        str_eq(x->init_producer_id.transactional_id, y->init_producer_id.transactional_id);
        ASSERT_EQ(x->init_producer_id.transaction_timeout_ms,
                  y->init_producer_id.transaction_timeout_ms);
        ASSERT_EQ(x->init_producer_id.producer_id, y->init_producer_id.producer_id);
        ASSERT_EQ(x->init_producer_id.producer_epoch, y->init_producer_id.producer_epoch);
        break;
    case KAPI_FIND_COORDINATOR:
        str_eq(x->find_coordinator.key, y->find_coordinator.key);
        ASSERT_EQ(x->find_coordinator.key_type, y->find_coordinator.key_type);
        strs_eq(x->find_coordinator.coordinator_keys, x->find_coordinator.n_coordinator_keys,
                y->find_coordinator.coordinator_keys, y->find_coordinator.n_coordinator_keys);
        break;
    case KAPI_INCREMENTAL_ALTER_CONFIGS: {
        const struct incremental_alter_configs_req *a = &x->incremental_alter_configs;
        const struct incremental_alter_configs_req *b = &y->incremental_alter_configs;
        ASSERT_EQ(a->validate_only, b->validate_only);
        ASSERT_EQ(a->n_resources, b->n_resources);
        for (int32_t i = 0; i < a->n_resources; i++) {
            const struct incremental_alter_configs_req_resource *ra = &a->resources[i];
            const struct incremental_alter_configs_req_resource *rb = &b->resources[i];
            ASSERT_EQ(ra->resource_type, rb->resource_type);
            str_eq(ra->resource_name, rb->resource_name);
            ASSERT_EQ(ra->n_configs, rb->n_configs);
            for (int32_t j = 0; j < ra->n_configs; j++) {
                str_eq(ra->configs[j].name, rb->configs[j].name);
                ASSERT_EQ(ra->configs[j].config_operation, rb->configs[j].config_operation);
                str_eq(ra->configs[j].value, rb->configs[j].value);
            }
        }
        break;
    }
    case KAPI_DESCRIBE_CLUSTER:
        ASSERT_EQ(x->describe_cluster.include_cluster_authorized_operations,
                  y->describe_cluster.include_cluster_authorized_operations);
        ASSERT_EQ(x->describe_cluster.endpoint_type, y->describe_cluster.endpoint_type);
        break;
    case KAPI_DESCRIBE_ACLS:
        acl_eq(&x->describe_acls.filter, &y->describe_acls.filter);
        break;
    case KAPI_CREATE_ACLS:
    case KAPI_DELETE_ACLS: {
        bool c = key == KAPI_CREATE_ACLS;
        int32_t n = c ? x->create_acls.n_creations : x->delete_acls.n_filters;
        ASSERT_EQ(n, c ? y->create_acls.n_creations : y->delete_acls.n_filters);
        for (int32_t i = 0; i < n; i++)
            acl_eq(c ? &x->create_acls.creations[i] : &x->delete_acls.filters[i],
                   c ? &y->create_acls.creations[i] : &y->delete_acls.filters[i]);
        break;
    }
    case KAPI_SASL_HANDSHAKE:
        str_eq(x->sasl_handshake.mechanism, y->sasl_handshake.mechanism);
        break;
    case KAPI_SASL_AUTHENTICATE:
        ASSERT_EQ(x->sasl_authenticate.auth_bytes.len, y->sasl_authenticate.auth_bytes.len);
        ASSERT(memcmp(x->sasl_authenticate.auth_bytes.p, y->sasl_authenticate.auth_bytes.p,
                      (size_t)x->sasl_authenticate.auth_bytes.len) == 0);
        break;
    case KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS:
        strs_eq(x->describe_scram.users, x->describe_scram.n_users, y->describe_scram.users,
                y->describe_scram.n_users);
        break;
    case KAPI_DESCRIBE_CLIENT_QUOTAS: {
        const struct describe_quotas_req *a = &x->describe_quotas, *b = &y->describe_quotas;
        ASSERT_EQ(a->n_components, b->n_components);
        ASSERT_EQ(a->strict, b->strict);
        for (int32_t i = 0; i < a->n_components; i++) {
            str_eq(a->components[i].entity_type, b->components[i].entity_type);
            ASSERT_EQ(a->components[i].match_type, b->components[i].match_type);
            str_eq(a->components[i].match, b->components[i].match);
        }
        break;
    }
    case KAPI_ALTER_CLIENT_QUOTAS: {
        const struct alter_quotas_req *a = &x->alter_quotas, *b = &y->alter_quotas;
        ASSERT_EQ(a->n_entries, b->n_entries);
        ASSERT_EQ(a->validate_only, b->validate_only);
        for (int32_t i = 0; i < a->n_entries; i++) {
            entity_eq(a->entries[i].entity, a->entries[i].n_entity, b->entries[i].entity,
                      b->entries[i].n_entity);
            ASSERT_EQ(a->entries[i].n_ops, b->entries[i].n_ops);
            for (int32_t j = 0; j < a->entries[i].n_ops; j++) {
                str_eq(a->entries[i].ops[j].key, b->entries[i].ops[j].key);
                ASSERT(a->entries[i].ops[j].value == b->entries[i].ops[j].value);
                ASSERT_EQ(a->entries[i].ops[j].remove, b->entries[i].ops[j].remove);
            }
        }
        break;
    }
    case KAPI_ALTER_USER_SCRAM_CREDENTIALS: {
        const struct alter_scram_req *a = &x->alter_scram, *b = &y->alter_scram;
        ASSERT_EQ(a->n_deletions, b->n_deletions);
        for (int32_t i = 0; i < a->n_deletions; i++) {
            str_eq(a->deletions[i].name, b->deletions[i].name);
            ASSERT_EQ(a->deletions[i].mechanism, b->deletions[i].mechanism);
        }
        ASSERT_EQ(a->n_upsertions, b->n_upsertions);
        for (int32_t i = 0; i < a->n_upsertions; i++) {
            const struct alter_scram_upsertion *ua = &a->upsertions[i], *ub = &b->upsertions[i];
            str_eq(ua->name, ub->name);
            ASSERT_EQ(ua->mechanism, ub->mechanism);
            ASSERT_EQ(ua->iterations, ub->iterations);
            ASSERT_EQ(ua->salt.len, ub->salt.len);
            ASSERT(memcmp(ua->salt.p, ub->salt.p, (size_t)ua->salt.len) == 0);
            ASSERT_EQ(ua->salted_password.len, ub->salted_password.len);
            ASSERT(memcmp(ua->salted_password.p, ub->salted_password.p,
                          (size_t)ua->salted_password.len) == 0);
        }
        break;
    }
    case KAPI_ADD_RAFT_VOTER:
    case KAPI_REMOVE_RAFT_VOTER: {
        const struct raft_voter_req *a = &x->raft_voter, *b = &y->raft_voter;
        str_eq(a->cluster_id, b->cluster_id);
        ASSERT_EQ(a->timeout_ms, b->timeout_ms);
        ASSERT_EQ(a->voter_id, b->voter_id);
        ASSERT(memcmp(a->voter_directory_id.b, b->voter_directory_id.b, 16) == 0);
        ASSERT_EQ(a->n_listeners, b->n_listeners);
        break;
    }
    case KAPI_ALTER_PARTITION_REASSIGNMENTS: {
        const struct alter_reassign_req *a = &x->alter_reassignments, *b = &y->alter_reassignments;
        ASSERT_EQ(a->timeout_ms, b->timeout_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].name, b->topics[i].name);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                const struct alter_reassign_req_partition *pa = &a->topics[i].partitions[j];
                const struct alter_reassign_req_partition *pb = &b->topics[i].partitions[j];
                ASSERT_EQ(pa->partition_index, pb->partition_index);
                i32s_eq(pa->replicas, pa->n_replicas, pb->replicas, pb->n_replicas);
            }
        }
        break;
    }
    case KAPI_ELECT_LEADERS: {
        const struct elect_leaders_req *a = &x->elect_leaders, *b = &y->elect_leaders;
        ASSERT_EQ(a->election_type, b->election_type);
        ASSERT_EQ(a->timeout_ms, b->timeout_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].topic, b->topics[i].topic);
            i32s_eq(a->topics[i].partitions, a->topics[i].n_partitions, b->topics[i].partitions,
                    b->topics[i].n_partitions);
        }
        break;
    }
    case KAPI_LIST_PARTITION_REASSIGNMENTS: {
        const struct list_reassign_req *a = &x->list_reassignments, *b = &y->list_reassignments;
        ASSERT_EQ(a->timeout_ms, b->timeout_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].name, b->topics[i].name);
            i32s_eq(a->topics[i].partitions, a->topics[i].n_partitions, b->topics[i].partitions,
                    b->topics[i].n_partitions);
        }
        break;
    }
    case KAPI_DESCRIBE_LOG_DIRS: {
        const struct describe_log_dirs_req *a = &x->describe_log_dirs, *b = &y->describe_log_dirs;
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].topic, b->topics[i].topic);
            i32s_eq(a->topics[i].partitions, a->topics[i].n_partitions, b->topics[i].partitions,
                    b->topics[i].n_partitions);
        }
        break;
    }
    case KAPI_OFFSET_FOR_LEADER_EPOCH: {
        const struct offset_for_leader_epoch_req *a = &x->offset_for_leader_epoch;
        const struct offset_for_leader_epoch_req *b = &y->offset_for_leader_epoch;
        ASSERT_EQ(a->replica_id, b->replica_id);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].topic, b->topics[i].topic);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                const struct offset_for_leader_epoch_req_partition *pa =
                    &a->topics[i].partitions[j];
                const struct offset_for_leader_epoch_req_partition *pb =
                    &b->topics[i].partitions[j];
                ASSERT_EQ(pa->partition, pb->partition);
                ASSERT_EQ(pa->current_leader_epoch, pb->current_leader_epoch);
                ASSERT_EQ(pa->leader_epoch, pb->leader_epoch);
            }
        }
        break;
    }
    default:
        tgroup_req_eq(key, x, y);
    }
}

static void metadata_resp_eq(const struct metadata_resp *a, const struct metadata_resp *b)
{
    ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
    ASSERT_EQ(a->n_brokers, b->n_brokers);
    for (int32_t i = 0; i < a->n_brokers; i++) {
        ASSERT_EQ(a->brokers[i].node_id, b->brokers[i].node_id);
        str_eq(a->brokers[i].host, b->brokers[i].host);
        ASSERT_EQ(a->brokers[i].port, b->brokers[i].port);
        str_eq(a->brokers[i].rack, b->brokers[i].rack);
    }
    str_eq(a->cluster_id, b->cluster_id);
    ASSERT_EQ(a->controller_id, b->controller_id);
    ASSERT_EQ(a->cluster_authorized_operations, b->cluster_authorized_operations);
    ASSERT_EQ(a->n_topics, b->n_topics);
    for (int32_t i = 0; i < a->n_topics; i++) {
        const struct metadata_topic *ta = &a->topics[i], *tb = &b->topics[i];
        ASSERT_EQ(ta->error_code, tb->error_code);
        str_eq(ta->name, tb->name);
        uuid_eq(ta->topic_id, tb->topic_id);
        ASSERT_EQ(ta->is_internal, tb->is_internal);
        ASSERT_EQ(ta->topic_authorized_operations, tb->topic_authorized_operations);
        ASSERT_EQ(ta->n_partitions, tb->n_partitions);
        for (int32_t j = 0; j < ta->n_partitions; j++) {
            const struct metadata_partition *pa = &ta->partitions[j], *pb = &tb->partitions[j];
            ASSERT_EQ(pa->error_code, pb->error_code);
            ASSERT_EQ(pa->partition_index, pb->partition_index);
            ASSERT_EQ(pa->leader_id, pb->leader_id);
            ASSERT_EQ(pa->leader_epoch, pb->leader_epoch);
            i32s_eq(pa->replica_nodes, pa->n_replica_nodes, pb->replica_nodes, pb->n_replica_nodes);
            i32s_eq(pa->isr_nodes, pa->n_isr_nodes, pb->isr_nodes, pb->n_isr_nodes);
            i32s_eq(pa->offline_replicas, pa->n_offline_replicas, pb->offline_replicas,
                    pb->n_offline_replicas);
        }
    }
}

static void fetch_resp_eq(const struct fetch_resp *a, const struct fetch_resp *b)
{
    ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
    ASSERT_EQ(a->error_code, b->error_code);
    ASSERT_EQ(a->session_id, b->session_id);
    ASSERT_EQ(a->n_topics, b->n_topics);
    for (int32_t i = 0; i < a->n_topics; i++) {
        const struct fetch_resp_topic *ta = &a->topics[i], *tb = &b->topics[i];
        str_eq(ta->topic, tb->topic);
        uuid_eq(ta->topic_id, tb->topic_id);
        ASSERT_EQ(ta->n_partitions, tb->n_partitions);
        for (int32_t j = 0; j < ta->n_partitions; j++) {
            const struct fetch_resp_partition *pa = &ta->partitions[j], *pb = &tb->partitions[j];
            ASSERT_EQ(pa->partition_index, pb->partition_index);
            ASSERT_EQ(pa->error_code, pb->error_code);
            ASSERT_EQ(pa->high_watermark, pb->high_watermark);
            ASSERT_EQ(pa->last_stable_offset, pb->last_stable_offset);
            ASSERT_EQ(pa->log_start_offset, pb->log_start_offset);
            ASSERT_EQ(pa->n_aborted, pb->n_aborted);
            for (int32_t k = 0; k < pa->n_aborted; k++) {
                ASSERT_EQ(pa->aborted[k].producer_id, pb->aborted[k].producer_id);
                ASSERT_EQ(pa->aborted[k].first_offset, pb->aborted[k].first_offset);
            }
            ASSERT_EQ(pa->preferred_read_replica, pb->preferred_read_replica);
            ASSERT_EQ(pa->records_len, pb->records_len);
            const struct trecords *ra = pa->records_data, *rb = pb->records_data;
            ASSERT_EQ(ra->len, rb->len);
            if (ra->len > 0)
                ASSERT_MEMEQ(ra->p, rb->p, (size_t)ra->len);
        }
    }
}

static void describe_configs_resp_eq(const struct describe_configs_resp *a,
                                     const struct describe_configs_resp *b)
{
    ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
    ASSERT_EQ(a->n_results, b->n_results);
    for (int32_t i = 0; i < a->n_results; i++) {
        const struct describe_configs_result *ra = &a->results[i], *rb = &b->results[i];
        ASSERT_EQ(ra->error_code, rb->error_code);
        str_eq(ra->error_message, rb->error_message);
        ASSERT_EQ(ra->resource_type, rb->resource_type);
        str_eq(ra->resource_name, rb->resource_name);
        ASSERT_EQ(ra->n_configs, rb->n_configs);
        for (int32_t j = 0; j < ra->n_configs; j++) {
            const struct describe_configs_entry *ca = &ra->configs[j], *cb = &rb->configs[j];
            str_eq(ca->name, cb->name);
            str_eq(ca->value, cb->value);
            ASSERT_EQ(ca->read_only, cb->read_only);
            ASSERT_EQ(ca->is_default, cb->is_default);
            ASSERT_EQ(ca->config_source, cb->config_source);
            ASSERT_EQ(ca->is_sensitive, cb->is_sensitive);
            ASSERT_EQ(ca->config_type, cb->config_type);
            str_eq(ca->documentation, cb->documentation);
            ASSERT_EQ(ca->n_synonyms, cb->n_synonyms);
            for (int32_t k = 0; k < ca->n_synonyms; k++) {
                str_eq(ca->synonyms[k].name, cb->synonyms[k].name);
                str_eq(ca->synonyms[k].value, cb->synonyms[k].value);
                ASSERT_EQ(ca->synonyms[k].source, cb->synonyms[k].source);
            }
        }
    }
}

static void resp_eq(int16_t key, const union kmsg_any_resp *x, const union kmsg_any_resp *y)
{
    switch (key) {
    case KAPI_API_VERSIONS: {
        const struct api_versions_resp *a = &x->api_versions, *b = &y->api_versions;
        ASSERT_EQ(a->error_code, b->error_code);
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_keys, b->n_keys);
        for (int32_t i = 0; i < a->n_keys; i++) {
            ASSERT_EQ(a->keys[i].api_key, b->keys[i].api_key);
            ASSERT_EQ(a->keys[i].min_version, b->keys[i].min_version);
            ASSERT_EQ(a->keys[i].max_version, b->keys[i].max_version);
        }
        break;
    }
    case KAPI_METADATA:
        metadata_resp_eq(&x->metadata, &y->metadata);
        break;
    case KAPI_PRODUCE: {
        const struct produce_resp *a = &x->produce, *b = &y->produce;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].name, b->topics[i].name);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                const struct produce_resp_partition *pa = &a->topics[i].partitions[j];
                const struct produce_resp_partition *pb = &b->topics[i].partitions[j];
                ASSERT_EQ(pa->index, pb->index);
                ASSERT_EQ(pa->error_code, pb->error_code);
                ASSERT_EQ(pa->base_offset, pb->base_offset);
                ASSERT_EQ(pa->log_append_time_ms, pb->log_append_time_ms);
                ASSERT_EQ(pa->log_start_offset, pb->log_start_offset);
                ASSERT_EQ(pa->n_record_errors, pb->n_record_errors);
                for (int32_t k = 0; k < pa->n_record_errors; k++) {
                    ASSERT_EQ(pa->record_errors[k].batch_index, pb->record_errors[k].batch_index);
                    str_eq(pa->record_errors[k].batch_index_error_message,
                           pb->record_errors[k].batch_index_error_message);
                }
                str_eq(pa->error_message, pb->error_message);
            }
        }
        break;
    }
    case KAPI_FETCH:
        fetch_resp_eq(&x->fetch, &y->fetch);
        break;
    case KAPI_LIST_OFFSETS: {
        const struct list_offsets_resp *a = &x->list_offsets, *b = &y->list_offsets;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].name, b->topics[i].name);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                const struct list_offsets_resp_partition *pa = &a->topics[i].partitions[j];
                const struct list_offsets_resp_partition *pb = &b->topics[i].partitions[j];
                ASSERT_EQ(pa->partition_index, pb->partition_index);
                ASSERT_EQ(pa->error_code, pb->error_code);
                ASSERT_EQ(pa->timestamp, pb->timestamp);
                ASSERT_EQ(pa->offset, pb->offset);
                ASSERT_EQ(pa->leader_epoch, pb->leader_epoch);
            }
        }
        break;
    }
    case KAPI_CREATE_TOPICS: {
        const struct create_topics_resp *a = &x->create_topics, *b = &y->create_topics;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            const struct create_topics_resp_topic *ta = &a->topics[i], *tb = &b->topics[i];
            str_eq(ta->name, tb->name);
            uuid_eq(ta->topic_id, tb->topic_id);
            ASSERT_EQ(ta->error_code, tb->error_code);
            str_eq(ta->error_message, tb->error_message);
            ASSERT_EQ(ta->num_partitions, tb->num_partitions);
            ASSERT_EQ(ta->replication_factor, tb->replication_factor);
            ASSERT_EQ(ta->n_configs, tb->n_configs);
            for (int32_t j = 0; j < ta->n_configs; j++) {
                const struct create_topics_resp_config *ca = &ta->configs[j], *cb = &tb->configs[j];
                str_eq(ca->name, cb->name);
                str_eq(ca->value, cb->value);
                ASSERT_EQ(ca->read_only, cb->read_only);
                ASSERT_EQ(ca->config_source, cb->config_source);
                ASSERT_EQ(ca->is_sensitive, cb->is_sensitive);
            }
        }
        break;
    }
    case KAPI_DELETE_TOPICS: {
        const struct delete_topics_resp *a = &x->delete_topics, *b = &y->delete_topics;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_responses, b->n_responses);
        for (int32_t i = 0; i < a->n_responses; i++) {
            str_eq(a->responses[i].name, b->responses[i].name);
            uuid_eq(a->responses[i].topic_id, b->responses[i].topic_id);
            ASSERT_EQ(a->responses[i].error_code, b->responses[i].error_code);
            str_eq(a->responses[i].error_message, b->responses[i].error_message);
        }
        break;
    }
    case KAPI_CREATE_PARTITIONS: {
        const struct create_partitions_resp *a = &x->create_partitions, *b = &y->create_partitions;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_results, b->n_results);
        for (int32_t i = 0; i < a->n_results; i++) {
            str_eq(a->results[i].name, b->results[i].name);
            ASSERT_EQ(a->results[i].error_code, b->results[i].error_code);
            str_eq(a->results[i].error_message, b->results[i].error_message);
        }
        break;
    }
    case KAPI_DESCRIBE_CONFIGS:
        describe_configs_resp_eq(&x->describe_configs, &y->describe_configs);
        break;
    case KAPI_INCREMENTAL_ALTER_CONFIGS: /* the same response */
    case KAPI_ALTER_CONFIGS: {
        const struct alter_configs_resp *a = &x->alter_configs, *b = &y->alter_configs;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_responses, b->n_responses);
        for (int32_t i = 0; i < a->n_responses; i++) {
            ASSERT_EQ(a->responses[i].error_code, b->responses[i].error_code);
            str_eq(a->responses[i].error_message, b->responses[i].error_message);
            ASSERT_EQ(a->responses[i].resource_type, b->responses[i].resource_type);
            str_eq(a->responses[i].resource_name, b->responses[i].resource_name);
        }
        break;
    }
    case KAPI_DELETE_RECORDS: {
        const struct delete_records_resp *a = &x->delete_records, *b = &y->delete_records;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].name, b->topics[i].name);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                const struct delete_records_resp_partition *pa = &a->topics[i].partitions[j];
                const struct delete_records_resp_partition *pb = &b->topics[i].partitions[j];
                ASSERT_EQ(pa->partition_index, pb->partition_index);
                ASSERT_EQ(pa->low_watermark, pb->low_watermark);
                ASSERT_EQ(pa->error_code, pb->error_code);
            }
        }
        break;
    }
    case KAPI_INIT_PRODUCER_ID: {
        const struct init_producer_id_resp *a = &x->init_producer_id, *b = &y->init_producer_id;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        ASSERT_EQ(a->producer_id, b->producer_id);
        ASSERT_EQ(a->producer_epoch, b->producer_epoch);
        break;
    }
    case KAPI_FIND_COORDINATOR: {
        const struct find_coordinator_resp *a = &x->find_coordinator, *b = &y->find_coordinator;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        str_eq(a->error_message, b->error_message);
        ASSERT_EQ(a->node_id, b->node_id);
        str_eq(a->host, b->host);
        ASSERT_EQ(a->port, b->port);
        ASSERT_EQ(a->n_coordinators, b->n_coordinators);
        for (int32_t i = 0; i < a->n_coordinators; i++) {
            const struct find_coordinator_coordinator *ca = &a->coordinators[i];
            const struct find_coordinator_coordinator *cb = &b->coordinators[i];
            str_eq(ca->key, cb->key);
            ASSERT_EQ(ca->node_id, cb->node_id);
            str_eq(ca->host, cb->host);
            ASSERT_EQ(ca->port, cb->port);
            ASSERT_EQ(ca->error_code, cb->error_code);
            str_eq(ca->error_message, cb->error_message);
        }
        break;
    }
    case KAPI_DESCRIBE_CLUSTER: {
        const struct describe_cluster_resp *a = &x->describe_cluster, *b = &y->describe_cluster;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        str_eq(a->error_message, b->error_message);
        ASSERT_EQ(a->endpoint_type, b->endpoint_type);
        str_eq(a->cluster_id, b->cluster_id);
        ASSERT_EQ(a->controller_id, b->controller_id);
        ASSERT_EQ(a->cluster_authorized_operations, b->cluster_authorized_operations);
        ASSERT_EQ(a->n_brokers, b->n_brokers);
        for (int32_t i = 0; i < a->n_brokers; i++) {
            ASSERT_EQ(a->brokers[i].broker_id, b->brokers[i].broker_id);
            str_eq(a->brokers[i].host, b->brokers[i].host);
            ASSERT_EQ(a->brokers[i].port, b->brokers[i].port);
            str_eq(a->brokers[i].rack, b->brokers[i].rack);
        }
        break;
    }
    case KAPI_DESCRIBE_ACLS: {
        const struct describe_acls_resp *a = &x->describe_acls, *b = &y->describe_acls;
        ASSERT_EQ(a->error_code, b->error_code);
        ASSERT_EQ(a->n_resources, b->n_resources);
        for (int32_t i = 0; i < a->n_resources; i++) {
            ASSERT_EQ(a->resources[i].resource_type, b->resources[i].resource_type);
            str_eq(a->resources[i].resource_name, b->resources[i].resource_name);
            ASSERT_EQ(a->resources[i].pattern_type, b->resources[i].pattern_type);
            ASSERT_EQ(a->resources[i].n_acls, b->resources[i].n_acls);
            for (int32_t j = 0; j < a->resources[i].n_acls; j++) {
                str_eq(a->resources[i].acls[j].principal, b->resources[i].acls[j].principal);
                str_eq(a->resources[i].acls[j].host, b->resources[i].acls[j].host);
                ASSERT_EQ(a->resources[i].acls[j].operation, b->resources[i].acls[j].operation);
                ASSERT_EQ(a->resources[i].acls[j].permission, b->resources[i].acls[j].permission);
            }
        }
        break;
    }
    case KAPI_CREATE_ACLS:
        ASSERT_EQ(x->create_acls.n_results, y->create_acls.n_results);
        for (int32_t i = 0; i < x->create_acls.n_results; i++) {
            ASSERT_EQ(x->create_acls.results[i].error_code, y->create_acls.results[i].error_code);
            str_eq(x->create_acls.results[i].error_message, y->create_acls.results[i].error_message);
        }
        break;
    case KAPI_DELETE_ACLS:
        ASSERT_EQ(x->delete_acls.n_results, y->delete_acls.n_results);
        for (int32_t i = 0; i < x->delete_acls.n_results; i++) {
            const struct delete_acls_filter_result *a = &x->delete_acls.results[i],
                                                   *b = &y->delete_acls.results[i];
            ASSERT_EQ(a->error_code, b->error_code);
            str_eq(a->error_message, b->error_message);
            ASSERT_EQ(a->n_matches, b->n_matches);
            for (int32_t j = 0; j < a->n_matches; j++) {
                ASSERT_EQ(a->matches[j].error_code, b->matches[j].error_code);
                acl_eq(&a->matches[j].acl, &b->matches[j].acl);
            }
        }
        break;
    case KAPI_SASL_HANDSHAKE: {
        const struct sasl_handshake_resp *a = &x->sasl_handshake, *b = &y->sasl_handshake;
        ASSERT_EQ(a->error_code, b->error_code);
        ASSERT_EQ(a->n_mechanisms, b->n_mechanisms);
        for (int32_t i = 0; i < a->n_mechanisms; i++)
            ASSERT_STREQ(a->mechanisms[i], b->mechanisms[i]);
        break;
    }
    case KAPI_SASL_AUTHENTICATE: {
        const struct sasl_authenticate_resp *a = &x->sasl_authenticate, *b = &y->sasl_authenticate;
        ASSERT_EQ(a->error_code, b->error_code);
        str_eq(a->error_message, b->error_message);
        ASSERT_EQ(a->auth_bytes.len, b->auth_bytes.len);
        ASSERT(memcmp(a->auth_bytes.p, b->auth_bytes.p, (size_t)a->auth_bytes.len) == 0);
        ASSERT_EQ(a->session_lifetime_ms, b->session_lifetime_ms);
        break;
    }
    case KAPI_DESCRIBE_CLIENT_QUOTAS: {
        const struct describe_quotas_resp *a = &x->describe_quotas, *b = &y->describe_quotas;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        str_eq(a->error_message, b->error_message);
        ASSERT_EQ(a->n_entries, b->n_entries);
        for (int32_t i = 0; i < a->n_entries; i++) {
            entity_eq(a->entries[i].entity, a->entries[i].n_entity, b->entries[i].entity,
                      b->entries[i].n_entity);
            ASSERT_EQ(a->entries[i].n_values, b->entries[i].n_values);
            for (int32_t j = 0; j < a->entries[i].n_values; j++) {
                str_eq(a->entries[i].values[j].key, b->entries[i].values[j].key);
                ASSERT(a->entries[i].values[j].value == b->entries[i].values[j].value);
            }
        }
        break;
    }
    case KAPI_ALTER_CLIENT_QUOTAS: {
        const struct alter_quotas_resp *a = &x->alter_quotas, *b = &y->alter_quotas;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_entries, b->n_entries);
        for (int32_t i = 0; i < a->n_entries; i++) {
            ASSERT_EQ(a->entries[i].error_code, b->entries[i].error_code);
            str_eq(a->entries[i].error_message, b->entries[i].error_message);
            entity_eq(a->entries[i].entity, a->entries[i].n_entity, b->entries[i].entity,
                      b->entries[i].n_entity);
        }
        break;
    }
    case KAPI_DESCRIBE_USER_SCRAM_CREDENTIALS: {
        const struct describe_scram_resp *a = &x->describe_scram, *b = &y->describe_scram;
        ASSERT_EQ(a->error_code, b->error_code);
        ASSERT_EQ(a->n_results, b->n_results);
        for (int32_t i = 0; i < a->n_results; i++) {
            str_eq(a->results[i].user, b->results[i].user);
            ASSERT_EQ(a->results[i].error_code, b->results[i].error_code);
            str_eq(a->results[i].error_message, b->results[i].error_message);
            ASSERT_EQ(a->results[i].n_credentials, b->results[i].n_credentials);
            for (int32_t j = 0; j < a->results[i].n_credentials; j++) {
                ASSERT_EQ(a->results[i].credentials[j].mechanism,
                          b->results[i].credentials[j].mechanism);
                ASSERT_EQ(a->results[i].credentials[j].iterations,
                          b->results[i].credentials[j].iterations);
            }
        }
        break;
    }
    case KAPI_ALTER_USER_SCRAM_CREDENTIALS: {
        const struct alter_scram_resp *a = &x->alter_scram, *b = &y->alter_scram;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_results, b->n_results);
        for (int32_t i = 0; i < a->n_results; i++) {
            str_eq(a->results[i].user, b->results[i].user);
            ASSERT_EQ(a->results[i].error_code, b->results[i].error_code);
            str_eq(a->results[i].error_message, b->results[i].error_message);
        }
        break;
    }
    case KAPI_ADD_RAFT_VOTER:
    case KAPI_REMOVE_RAFT_VOTER: {
        const struct raft_voter_resp *a = &x->raft_voter, *b = &y->raft_voter;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        str_eq(a->error_message, b->error_message);
        break;
    }
    case KAPI_ALTER_PARTITION_REASSIGNMENTS: {
        const struct alter_reassign_resp *a = &x->alter_reassignments, *b = &y->alter_reassignments;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        str_eq(a->error_message, b->error_message);
        ASSERT_EQ(a->n_responses, b->n_responses);
        for (int32_t i = 0; i < a->n_responses; i++) {
            str_eq(a->responses[i].name, b->responses[i].name);
            ASSERT_EQ(a->responses[i].n_partitions, b->responses[i].n_partitions);
            for (int32_t j = 0; j < a->responses[i].n_partitions; j++) {
                const struct alter_reassign_resp_partition *pa = &a->responses[i].partitions[j];
                const struct alter_reassign_resp_partition *pb = &b->responses[i].partitions[j];
                ASSERT_EQ(pa->partition_index, pb->partition_index);
                ASSERT_EQ(pa->error_code, pb->error_code);
                str_eq(pa->error_message, pb->error_message);
            }
        }
        break;
    }
    case KAPI_ELECT_LEADERS: {
        const struct elect_leaders_resp *a = &x->elect_leaders, *b = &y->elect_leaders;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        ASSERT_EQ(a->n_results, b->n_results);
        for (int32_t i = 0; i < a->n_results; i++) {
            str_eq(a->results[i].topic, b->results[i].topic);
            ASSERT_EQ(a->results[i].n_partitions, b->results[i].n_partitions);
            for (int32_t j = 0; j < a->results[i].n_partitions; j++) {
                const struct elect_leaders_resp_partition *pa = &a->results[i].partitions[j];
                const struct elect_leaders_resp_partition *pb = &b->results[i].partitions[j];
                ASSERT_EQ(pa->partition_id, pb->partition_id);
                ASSERT_EQ(pa->error_code, pb->error_code);
                str_eq(pa->error_message, pb->error_message);
            }
        }
        break;
    }
    case KAPI_LIST_PARTITION_REASSIGNMENTS: {
        const struct list_reassign_resp *a = &x->list_reassignments, *b = &y->list_reassignments;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].name, b->topics[i].name);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                const struct list_reassign_resp_partition *pa = &a->topics[i].partitions[j];
                const struct list_reassign_resp_partition *pb = &b->topics[i].partitions[j];
                ASSERT_EQ(pa->partition_index, pb->partition_index);
                i32s_eq(pa->replicas, pa->n_replicas, pb->replicas, pb->n_replicas);
                i32s_eq(pa->adding, pa->n_adding, pb->adding, pb->n_adding);
                i32s_eq(pa->removing, pa->n_removing, pb->removing, pb->n_removing);
            }
        }
        break;
    }
    case KAPI_DESCRIBE_LOG_DIRS: {
        const struct describe_log_dirs_resp *a = &x->describe_log_dirs, *b = &y->describe_log_dirs;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->error_code, b->error_code);
        ASSERT_EQ(a->n_results, b->n_results);
        for (int32_t i = 0; i < a->n_results; i++) {
            const struct describe_log_dirs_result *ra = &a->results[i], *rb = &b->results[i];
            ASSERT_EQ(ra->error_code, rb->error_code);
            str_eq(ra->log_dir, rb->log_dir);
            ASSERT_EQ(ra->total_bytes, rb->total_bytes);
            ASSERT_EQ(ra->usable_bytes, rb->usable_bytes);
            ASSERT_EQ(ra->n_topics, rb->n_topics);
            for (int32_t j = 0; j < ra->n_topics; j++) {
                str_eq(ra->topics[j].name, rb->topics[j].name);
                ASSERT_EQ(ra->topics[j].n_partitions, rb->topics[j].n_partitions);
                for (int32_t k = 0; k < ra->topics[j].n_partitions; k++) {
                    const struct describe_log_dirs_partition *pa = &ra->topics[j].partitions[k];
                    const struct describe_log_dirs_partition *pb = &rb->topics[j].partitions[k];
                    ASSERT_EQ(pa->partition_index, pb->partition_index);
                    ASSERT_EQ(pa->partition_size, pb->partition_size);
                    ASSERT_EQ(pa->offset_lag, pb->offset_lag);
                    ASSERT_EQ(pa->is_future_key, pb->is_future_key);
                }
            }
        }
        break;
    }
    case KAPI_OFFSET_FOR_LEADER_EPOCH: {
        const struct offset_for_leader_epoch_resp *a = &x->offset_for_leader_epoch;
        const struct offset_for_leader_epoch_resp *b = &y->offset_for_leader_epoch;
        ASSERT_EQ(a->throttle_time_ms, b->throttle_time_ms);
        ASSERT_EQ(a->n_topics, b->n_topics);
        for (int32_t i = 0; i < a->n_topics; i++) {
            str_eq(a->topics[i].topic, b->topics[i].topic);
            ASSERT_EQ(a->topics[i].n_partitions, b->topics[i].n_partitions);
            for (int32_t j = 0; j < a->topics[i].n_partitions; j++) {
                const struct offset_for_leader_epoch_resp_partition *pa =
                    &a->topics[i].partitions[j];
                const struct offset_for_leader_epoch_resp_partition *pb =
                    &b->topics[i].partitions[j];
                ASSERT_EQ(pa->error_code, pb->error_code);
                ASSERT_EQ(pa->partition, pb->partition);
                ASSERT_EQ(pa->leader_epoch, pb->leader_epoch);
                ASSERT_EQ(pa->end_offset, pb->end_offset);
            }
        }
        break;
    }
    default:
        tgroup_resp_eq(key, x, y);
    }
}

/* ---- the round trips ---- */

static void request_roundtrip(int16_t key, int16_t v, int variant, bool unknown_tags)
{
    struct arena a;
    arena_init(&a, 0);
    union kmsg_any_req want, got;
    ASSERT(tsample_req(key, v, variant, &a, &want));

    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    tenc_unknown_tags = unknown_tags;
    tenc_req(&w, key, v, &want);
    tenc_unknown_tags = false;
    size_t len;
    uint8_t *buf = iobuf_flatten(&b, &len);

    struct kreader r;
    kr_init(&r, buf, len);
    int rc = tdecode_req(&r, key, v, &a, &got);
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "%s v%d variant %d: decode rc %d", kafka_api_name(key), v,
                  variant, rc);
    ASSERT_EQ(kr_left(&r), 0);
    req_eq(key, &want, &got);

    mem_free(buf);
    iobuf_destroy(&b);
    arena_destroy(&a);
}

static void response_roundtrip(int16_t key, int16_t v, int variant)
{
    struct arena a;
    arena_init(&a, 0);
    union kmsg_any_resp want, got;
    ASSERT(tsample_resp(key, v, variant, &a, &want));

    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    tencode_resp(&w, key, v, &want);
    size_t len;
    uint8_t *buf = iobuf_flatten(&b, &len);

    struct kreader r;
    kr_init(&r, buf, len);
    if (tdec_resp(&r, key, v, &a, &got) != 0)
        test_fail(__FILE__, __LINE__, "%s v%d variant %d: response does not parse",
                  kafka_api_name(key), v, variant);
    ASSERT_EQ(kr_left(&r), 0);
    resp_eq(key, &want, &got);

    mem_free(buf);
    iobuf_destroy(&b);
    arena_destroy(&a);
}

TEST(kmsg_requests_roundtrip_every_api_and_version)
{
    int n;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    int cases = 0;
    for (int i = 0; i < n; i++)
        for (int16_t v = apis[i].min_version; v <= apis[i].max_version; v++)
            for (int var = 0; var < TSAMPLE_VARIANTS; var++) {
                request_roundtrip(apis[i].key, v, var, false);
                cases++;
            }
    ASSERT_CMP(cases, >=, 2 * 40);
}

TEST(kmsg_requests_skip_unknown_tagged_fields_at_every_level)
{
    int n;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    int flexible = 0;
    for (int i = 0; i < n; i++)
        for (int16_t v = apis[i].min_version; v <= apis[i].max_version; v++) {
            if (!kafka_api_flexible(apis[i].key, v))
                continue;
            flexible++;
            for (int var = 0; var < TSAMPLE_VARIANTS; var++)
                request_roundtrip(apis[i].key, v, var, true);
        }
    /* Produce v9, Fetch v12-13, ListOffsets v6-7, Metadata v9-12, ApiVersions v3-4,
     * FindCoordinator v3-4, CreateTopics v5-7, DeleteTopics v4-6, DeleteRecords v2,
     * AlterConfigs v2; JoinGroup v6-9, SyncGroup v4-5, Heartbeat v4, LeaveGroup v4-5,
     * OffsetCommit v8-9, OffsetFetch v6-8, DescribeGroups v5, ListGroups v3-4, DeleteGroups v2;
     * InitProducerId v2-5; OffsetForLeaderEpoch v4, DescribeLogDirs v2-4,
     * IncrementalAlterConfigs v1, DescribeCluster v0-1, DescribeConfigs v4,
     * AlterPartitionReassignments v0, ListPartitionReassignments v0, AddRaftVoter v0,
     * RemoveRaftVoter v0, SaslAuthenticate v2, Describe/AlterUserScramCredentials v0,
     * Describe/Create/DeleteAcls v2-3, Describe/AlterClientQuotas v1, ElectLeaders v2 */
    ASSERT_EQ(flexible, 67);
}

TEST(kmsg_responses_roundtrip_every_api_and_version)
{
    int n;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    for (int i = 0; i < n; i++)
        for (int16_t v = apis[i].min_version; v <= apis[i].max_version; v++)
            for (int var = 0; var < TSAMPLE_VARIANTS; var++)
                response_roundtrip(apis[i].key, v, var);
}

/* Versions outside the table are refused, not misread. */
TEST(kmsg_decoders_refuse_versions_out_of_range)
{
    struct arena a;
    arena_init(&a, 0);
    uint8_t buf[64] = {0};
    union kmsg_any_req q;
    int n;
    const struct kafka_api_info *apis = kafka_api_all(&n);
    for (int i = 0; i < n; i++) {
        int16_t bad[] = {(int16_t)(apis[i].min_version - 1), (int16_t)(apis[i].max_version + 1), -1,
                         INT16_MAX};
        for (size_t j = 0; j < ARRAY_LEN(bad); j++) {
            if (bad[j] >= apis[i].min_version && bad[j] <= apis[i].max_version)
                continue;
            struct kreader r;
            kr_init(&r, buf, sizeof(buf));
            ASSERT_EQ(tdecode_req(&r, apis[i].key, bad[j], &a, &q), -ERR_UNSUPPORTED);
        }
    }
    arena_destroy(&a);
}

/* ---- encoder invariants: broker bugs abort instead of sending a corrupt response ---- */

/* Runs fn in a child and reports whether it died of SIGABRT. */
static bool aborts(void (*fn)(void))
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2); /* the CHECK message is expected */
        fn();
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void encode_fetch_partition(struct fetch_resp_partition *p)
{
    struct fetch_resp_topic t = {.topic = kstr_c("t"), .partitions = p, .n_partitions = 1};
    struct fetch_resp resp = {.topics = &t, .n_topics = 1};
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    kmsg_encode_fetch(&w, 11, &resp);
    iobuf_destroy(&b);
}

static void fetch_records_without_callback(void)
{
    struct fetch_resp_partition p = {.records_len = 10, .write_records = NULL};
    encode_fetch_partition(&p);
}

static void write_three(struct kwriter *w, void *data)
{
    kw_raw(w, "abc", 3);
}

static void fetch_callback_writes_too_little(void)
{
    struct fetch_resp_partition p = {.records_len = 4, .write_records = write_three};
    encode_fetch_partition(&p);
}

static void fetch_callback_writes_exactly(void)
{
    struct fetch_resp_partition p = {.records_len = 3, .write_records = write_three};
    encode_fetch_partition(&p);
}

static void find_coordinator_null_host(void)
{
    struct find_coordinator_resp resp = {.host = KSTR_NULL};
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    kmsg_encode_find_coordinator(&w, 1, &resp);
    iobuf_destroy(&b);
}

static void encode_out_of_range_version(void)
{
    struct api_versions_resp resp = {0};
    struct iobuf b;
    iobuf_init(&b);
    struct kwriter w = {&b};
    kmsg_encode_api_versions(&w, 5, &resp);
    iobuf_destroy(&b);
}

TEST(kmsg_encoders_check_their_invariants)
{
    ASSERT(aborts(fetch_records_without_callback));
    ASSERT(aborts(fetch_callback_writes_too_little));
    ASSERT(!aborts(fetch_callback_writes_exactly));
    ASSERT(aborts(encode_out_of_range_version));
    if (DCHECK_ENABLED)
        ASSERT(aborts(find_coordinator_null_host));
}
