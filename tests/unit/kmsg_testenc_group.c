/* Test-side codecs and samples of the consumer-group messages (kafka/msg_group.h), in the manner
 * of kmsg_testenc.c: written from apache/kafka's JoinGroup*.json, SyncGroup*.json,
 * Heartbeat*.json, LeaveGroup*.json, OffsetCommit*.json, OffsetFetch*.json, DescribeGroups*.json,
 * ListGroups*.json, DeleteGroups*.json and OffsetDelete*.json, field by field, without looking at
 * kafka/msg_group.c. kmsg_testenc.c's switches hand these keys over here. */
#include <string.h>

#include "base/mem.h"
#include "kafka/api.h"
#include "kmsg_testenc.h"

/* ---- primitives (the same rules as kmsg_testenc.c: tagged fields, corruption hook) ---- */

static void g_tags(struct kwriter *w, bool flex)
{
    if (!flex)
        return;
    if (!tenc_unknown_tags) {
        kw_uvarint(w, 0);
        return;
    }
    kw_uvarint(w, 2);
    kw_uvarint(w, 9);
    kw_uvarint(w, 2);
    kw_raw(w, "zz", 2);
    kw_uvarint(w, 1000);
    kw_uvarint(w, 0);
}

static void g_len(struct kwriter *w, bool flex, bool wide, int32_t n)
{
    if (tenc_corrupt.seen++ == tenc_corrupt.at && tenc_corrupt.mode != TC_NONE) {
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
        return;
    }
    if (flex)
        kw_uvarint(w, (uint32_t)(n + 1));
    else if (wide)
        kw_i32(w, n);
    else
        kw_i16(w, (int16_t)n);
}

static void g_str(struct kwriter *w, bool flex, struct kstr s)
{
    g_len(w, flex, false, s.len);
    if (s.len > 0)
        kw_raw(w, s.p, (size_t)s.len);
}

static void g_bytes(struct kwriter *w, bool flex, struct kbytes b)
{
    g_len(w, flex, true, b.len);
    if (b.len > 0)
        kw_raw(w, b.p, (size_t)b.len);
}

static void g_arr(struct kwriter *w, bool flex, int32_t n)
{
    g_len(w, flex, true, n);
}

/* ---- request encoders ---- */

static void enc_join(struct kwriter *w, int16_t v, bool f, const struct join_group_req *q)
{
    g_str(w, f, q->group_id);
    kw_i32(w, q->session_timeout_ms);
    if (v >= 1)
        kw_i32(w, q->rebalance_timeout_ms);
    g_str(w, f, q->member_id);
    if (v >= 5)
        g_str(w, f, q->group_instance_id);
    g_str(w, f, q->protocol_type);
    g_arr(w, f, q->n_protocols);
    for (int32_t i = 0; i < q->n_protocols; i++) {
        g_str(w, f, q->protocols[i].name);
        g_bytes(w, f, q->protocols[i].metadata);
        g_tags(w, f);
    }
    if (v >= 8)
        g_str(w, f, q->reason);
    g_tags(w, f);
}

static void enc_sync(struct kwriter *w, int16_t v, bool f, const struct sync_group_req *q)
{
    g_str(w, f, q->group_id);
    kw_i32(w, q->generation_id);
    g_str(w, f, q->member_id);
    if (v >= 3)
        g_str(w, f, q->group_instance_id);
    if (v >= 5) {
        g_str(w, f, q->protocol_type);
        g_str(w, f, q->protocol_name);
    }
    g_arr(w, f, q->n_assignments);
    for (int32_t i = 0; i < q->n_assignments; i++) {
        g_str(w, f, q->assignments[i].member_id);
        g_bytes(w, f, q->assignments[i].assignment);
        g_tags(w, f);
    }
    g_tags(w, f);
}

static void enc_heartbeat(struct kwriter *w, int16_t v, bool f, const struct heartbeat_req *q)
{
    g_str(w, f, q->group_id);
    kw_i32(w, q->generation_id);
    g_str(w, f, q->member_id);
    if (v >= 3)
        g_str(w, f, q->group_instance_id);
    g_tags(w, f);
}

static void enc_leave(struct kwriter *w, int16_t v, bool f, const struct leave_group_req *q)
{
    g_str(w, f, q->group_id);
    if (v <= 2) {
        g_str(w, f, q->members[0].member_id);
    } else {
        g_arr(w, f, q->n_members);
        for (int32_t i = 0; i < q->n_members; i++) {
            g_str(w, f, q->members[i].member_id);
            g_str(w, f, q->members[i].group_instance_id);
            if (v >= 5)
                g_str(w, f, q->members[i].reason);
            g_tags(w, f);
        }
    }
    g_tags(w, f);
}

static void enc_commit(struct kwriter *w, int16_t v, bool f, const struct offset_commit_req *q)
{
    g_str(w, f, q->group_id);
    if (v >= 1) {
        kw_i32(w, q->generation_id);
        g_str(w, f, q->member_id);
    }
    if (v >= 7)
        g_str(w, f, q->group_instance_id);
    if (v >= 2 && v <= 4)
        kw_i64(w, q->retention_time_ms);
    g_arr(w, f, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        const struct offset_commit_req_topic *t = &q->topics[i];
        g_str(w, f, t->name);
        g_arr(w, f, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct offset_commit_req_partition *p = &t->partitions[j];
            kw_i32(w, p->partition_index);
            kw_i64(w, p->committed_offset);
            if (v >= 6)
                kw_i32(w, p->committed_leader_epoch);
            if (v == 1)
                kw_i64(w, p->commit_timestamp);
            g_str(w, f, p->committed_metadata);
            g_tags(w, f);
        }
        g_tags(w, f);
    }
    g_tags(w, f);
}

static void enc_fetch_topics(struct kwriter *w, bool f, const struct offset_fetch_req_topic *topics,
                             int32_t n)
{
    g_arr(w, f, n);
    for (int32_t i = 0; i < n; i++) {
        g_str(w, f, topics[i].name);
        g_arr(w, f, topics[i].n_partition_indexes);
        for (int32_t j = 0; j < topics[i].n_partition_indexes; j++)
            kw_i32(w, topics[i].partition_indexes[j]);
        g_tags(w, f);
    }
}

static void enc_fetch_offsets(struct kwriter *w, int16_t v, bool f,
                              const struct offset_fetch_req *q)
{
    if (v >= 8) {
        g_arr(w, f, q->n_groups);
        for (int32_t i = 0; i < q->n_groups; i++) {
            g_str(w, f, q->groups[i].group_id);
            enc_fetch_topics(w, f, q->groups[i].topics, q->groups[i].n_topics);
            g_tags(w, f);
        }
    } else {
        g_str(w, f, q->group_id);
        enc_fetch_topics(w, f, q->topics, q->n_topics);
    }
    if (v >= 7)
        kw_bool(w, q->require_stable);
    g_tags(w, f);
}

static void enc_describe(struct kwriter *w, int16_t v, bool f, const struct describe_groups_req *q)
{
    g_arr(w, f, q->n_groups);
    for (int32_t i = 0; i < q->n_groups; i++)
        g_str(w, f, q->groups[i]);
    if (v >= 3)
        kw_bool(w, q->include_authorized_operations);
    g_tags(w, f);
}

static void enc_list(struct kwriter *w, int16_t v, bool f, const struct list_groups_req *q)
{
    if (v >= 4) {
        g_arr(w, f, q->n_states_filter);
        for (int32_t i = 0; i < q->n_states_filter; i++)
            g_str(w, f, q->states_filter[i]);
    }
    g_tags(w, f);
}

static void enc_delete(struct kwriter *w, int16_t v, bool f, const struct delete_groups_req *q)
{
    g_arr(w, f, q->n_groups_names);
    for (int32_t i = 0; i < q->n_groups_names; i++)
        g_str(w, f, q->groups_names[i]);
    g_tags(w, f);
}

static void enc_offset_delete(struct kwriter *w, const struct offset_delete_req *q)
{
    g_str(w, false, q->group_id);
    g_arr(w, false, q->n_topics);
    for (int32_t i = 0; i < q->n_topics; i++) {
        g_str(w, false, q->topics[i].name);
        g_arr(w, false, q->topics[i].n_partitions);
        for (int32_t j = 0; j < q->topics[i].n_partitions; j++)
            kw_i32(w, q->topics[i].partitions[j]);
    }
}

bool tgroup_enc_req(struct kwriter *w, int16_t key, int16_t v, const union kmsg_any_req *q)
{
    bool f = kafka_api_flexible(key, v);
    switch (key) {
    case KAPI_JOIN_GROUP:
        enc_join(w, v, f, &q->join_group);
        return true;
    case KAPI_SYNC_GROUP:
        enc_sync(w, v, f, &q->sync_group);
        return true;
    case KAPI_HEARTBEAT:
        enc_heartbeat(w, v, f, &q->heartbeat);
        return true;
    case KAPI_LEAVE_GROUP:
        enc_leave(w, v, f, &q->leave_group);
        return true;
    case KAPI_OFFSET_COMMIT:
        enc_commit(w, v, f, &q->offset_commit);
        return true;
    case KAPI_OFFSET_FETCH:
        enc_fetch_offsets(w, v, f, &q->offset_fetch);
        return true;
    case KAPI_DESCRIBE_GROUPS:
        enc_describe(w, v, f, &q->describe_groups);
        return true;
    case KAPI_LIST_GROUPS:
        enc_list(w, v, f, &q->list_groups);
        return true;
    case KAPI_DELETE_GROUPS:
        enc_delete(w, v, f, &q->delete_groups);
        return true;
    case KAPI_OFFSET_DELETE:
        enc_offset_delete(w, &q->offset_delete);
        return true;
    default:
        return false;
    }
}

bool tgroup_decode_req(struct kreader *r, int16_t key, int16_t v, struct arena *a,
                       union kmsg_any_req *q, int *rc)
{
    switch (key) {
    case KAPI_JOIN_GROUP:
        *rc = kmsg_decode_join_group(r, v, a, &q->join_group);
        return true;
    case KAPI_SYNC_GROUP:
        *rc = kmsg_decode_sync_group(r, v, a, &q->sync_group);
        return true;
    case KAPI_HEARTBEAT:
        *rc = kmsg_decode_heartbeat(r, v, a, &q->heartbeat);
        return true;
    case KAPI_LEAVE_GROUP:
        *rc = kmsg_decode_leave_group(r, v, a, &q->leave_group);
        return true;
    case KAPI_OFFSET_COMMIT:
        *rc = kmsg_decode_offset_commit(r, v, a, &q->offset_commit);
        return true;
    case KAPI_OFFSET_FETCH:
        *rc = kmsg_decode_offset_fetch(r, v, a, &q->offset_fetch);
        return true;
    case KAPI_DESCRIBE_GROUPS:
        *rc = kmsg_decode_describe_groups(r, v, a, &q->describe_groups);
        return true;
    case KAPI_LIST_GROUPS:
        *rc = kmsg_decode_list_groups(r, v, a, &q->list_groups);
        return true;
    case KAPI_DELETE_GROUPS:
        *rc = kmsg_decode_delete_groups(r, v, a, &q->delete_groups);
        return true;
    case KAPI_OFFSET_DELETE:
        *rc = kmsg_decode_offset_delete(r, v, a, &q->offset_delete);
        return true;
    default:
        return false;
    }
}

/* ---- sample requests ---- */

#define S(s) kstr_c(s)

static void *alloc(struct arena *a, int32_t n, size_t size)
{
    return n > 0 ? arena_calloc(a, (size_t)n, size) : NULL;
}

static struct kbytes B(const char *s)
{
    return (struct kbytes){(const uint8_t *)s, (int32_t)strlen(s)};
}

static void sample_join(int16_t v, int var, struct arena *a, struct join_group_req *q)
{
    *q = (struct join_group_req){.group_id = S("g1"),
                                 .session_timeout_ms = 10000,
                                 .rebalance_timeout_ms = v >= 1 ? 300000 : -1,
                                 .member_id = S(""),
                                 .group_instance_id = KSTR_NULL,
                                 .protocol_type = S("consumer"),
                                 .reason = KSTR_NULL};
    if (var)
        return; /* no protocols, no instance id */
    q->member_id = S("rdkafka-0b5c");
    if (v >= 5)
        q->group_instance_id = S("static-1");
    if (v >= 8)
        q->reason = S("rebalance requested");
    q->n_protocols = 2;
    q->protocols = alloc(a, 2, sizeof(*q->protocols));
    q->protocols[0] = (struct join_group_protocol){S("range"), B("\x00\x01range-meta")};
    q->protocols[1] = (struct join_group_protocol){S("roundrobin"), {(const uint8_t *)"", 0}};
}

static void sample_sync(int16_t v, int var, struct arena *a, struct sync_group_req *q)
{
    *q = (struct sync_group_req){.group_id = S("g1"),
                                 .generation_id = 7,
                                 .member_id = S("m-1"),
                                 .group_instance_id = KSTR_NULL,
                                 .protocol_type = KSTR_NULL,
                                 .protocol_name = KSTR_NULL};
    if (var)
        return;
    if (v >= 3)
        q->group_instance_id = S("i-1");
    if (v >= 5) {
        q->protocol_type = S("consumer");
        q->protocol_name = S("range");
    }
    q->n_assignments = 2;
    q->assignments = alloc(a, 2, sizeof(*q->assignments));
    q->assignments[0] = (struct sync_group_assignment){S("m-1"), B("assign-1")};
    q->assignments[1] = (struct sync_group_assignment){S("m-2"), {(const uint8_t *)"", 0}};
}

static void sample_heartbeat(int16_t v, int var, struct heartbeat_req *q)
{
    *q = (struct heartbeat_req){S("g1"), 3, S("m-1"), KSTR_NULL};
    if (!var && v >= 3)
        q->group_instance_id = S("i-9");
}

static void sample_leave(int16_t v, int var, struct arena *a, struct leave_group_req *q)
{
    *q = (struct leave_group_req){.group_id = S("g1")};
    if (v <= 2) {
        q->n_members = 1;
        q->members = alloc(a, 1, sizeof(*q->members));
        q->members[0] = (struct leave_group_member){var ? S("") : S("m-1"), KSTR_NULL, KSTR_NULL};
        return;
    }
    if (var)
        return;
    q->n_members = 2;
    q->members = alloc(a, 2, sizeof(*q->members));
    q->members[0] = (struct leave_group_member){S("m-1"), KSTR_NULL, KSTR_NULL};
    q->members[1] = (struct leave_group_member){S(""), S("inst-2"), v >= 5 ? S("bye") : KSTR_NULL};
}

static void sample_commit(int16_t v, int var, struct arena *a, struct offset_commit_req *q)
{
    *q = (struct offset_commit_req){.group_id = S("g1"),
                                    .generation_id = -1,
                                    .member_id = S(""),
                                    .group_instance_id = KSTR_NULL,
                                    .retention_time_ms = -1};
    if (var)
        return;
    if (v >= 1) {
        q->generation_id = 4;
        q->member_id = S("m-1");
    }
    if (v >= 7)
        q->group_instance_id = S("i-1");
    if (v >= 2 && v <= 4)
        q->retention_time_ms = 86400000;
    q->n_topics = 2;
    q->topics = alloc(a, 2, sizeof(*q->topics));
    for (int i = 0; i < 2; i++) {
        struct offset_commit_req_topic *t = &q->topics[i];
        t->name = i ? S("payments") : S("orders");
        t->n_partitions = 2 - i;
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int j = 0; j < t->n_partitions; j++) {
            struct offset_commit_req_partition *p = &t->partitions[j];
            p->partition_index = j * 4 + i;
            p->committed_offset = 5000000000LL + j;
            p->committed_leader_epoch = v >= 6 ? 2 + j : -1;
            p->commit_timestamp = v == 1 ? 1700000000000LL + j : -1;
            p->committed_metadata = j ? KSTR_NULL : S("meta");
        }
    }
}

static void sample_fetch_offsets(int16_t v, int var, struct arena *a, struct offset_fetch_req *q)
{
    *q = (struct offset_fetch_req){.group_id = S("g1")};
    if (v >= 8) { /* two groups: one asks for every topic (null), one for a partition list */
        q->group_id = S("");
        q->require_stable = !var;
        if (var)
            return;
        q->n_groups = 2;
        q->groups = alloc(a, 2, sizeof(*q->groups));
        q->groups[0] = (struct offset_fetch_req_group){S("g1"), NULL, -1};
        struct offset_fetch_req_group *g = &q->groups[1];
        g->group_id = S("g2");
        g->n_topics = 1;
        g->topics = alloc(a, 1, sizeof(*g->topics));
        g->topics[0].name = S("orders");
        g->topics[0].n_partition_indexes = 2;
        g->topics[0].partition_indexes = alloc(a, 2, sizeof(int32_t));
        g->topics[0].partition_indexes[0] = 0;
        g->topics[0].partition_indexes[1] = 5;
        return;
    }
    if (var) {
        q->n_topics = v >= 2 ? -1 : 0; /* null (all topics) from v2 */
        return;
    }
    q->n_topics = 1;
    q->topics = alloc(a, 1, sizeof(*q->topics));
    q->topics[0].name = S("orders");
    q->topics[0].n_partition_indexes = 3;
    q->topics[0].partition_indexes = alloc(a, 3, sizeof(int32_t));
    for (int j = 0; j < 3; j++)
        q->topics[0].partition_indexes[j] = j * 2;
    if (v >= 7)
        q->require_stable = true;
}

static void sample_describe(int16_t v, int var, struct arena *a, struct describe_groups_req *q)
{
    *q = (struct describe_groups_req){0};
    if (var)
        return;
    q->n_groups = 2;
    q->groups = alloc(a, 2, sizeof(*q->groups));
    q->groups[0] = S("g1");
    q->groups[1] = S("");
    if (v >= 3)
        q->include_authorized_operations = true;
}

static void sample_list(int16_t v, int var, struct arena *a, struct list_groups_req *q)
{
    *q = (struct list_groups_req){0};
    if (var || v < 4)
        return;
    q->n_states_filter = 2;
    q->states_filter = alloc(a, 2, sizeof(*q->states_filter));
    q->states_filter[0] = S("Stable");
    q->states_filter[1] = S("Empty");
}

static void sample_delete(int var, struct arena *a, struct delete_groups_req *q)
{
    *q = (struct delete_groups_req){0};
    if (var)
        return;
    q->n_groups_names = 2;
    q->groups_names = alloc(a, 2, sizeof(*q->groups_names));
    q->groups_names[0] = S("g1");
    q->groups_names[1] = S("g2");
}

static void sample_offset_delete(int var, struct arena *a, struct offset_delete_req *q)
{
    *q = (struct offset_delete_req){.group_id = S("g1")};
    if (var)
        return;
    q->n_topics = 1;
    q->topics = alloc(a, 1, sizeof(*q->topics));
    q->topics[0].name = S("orders");
    q->topics[0].n_partitions = 2;
    q->topics[0].partitions = alloc(a, 2, sizeof(int32_t));
    q->topics[0].partitions[0] = 0;
    q->topics[0].partitions[1] = 5;
}

bool tgroup_sample_req(int16_t key, int16_t v, int var, struct arena *a, union kmsg_any_req *q)
{
    switch (key) {
    case KAPI_JOIN_GROUP:
        sample_join(v, var, a, &q->join_group);
        return true;
    case KAPI_SYNC_GROUP:
        sample_sync(v, var, a, &q->sync_group);
        return true;
    case KAPI_HEARTBEAT:
        sample_heartbeat(v, var, &q->heartbeat);
        return true;
    case KAPI_LEAVE_GROUP:
        sample_leave(v, var, a, &q->leave_group);
        return true;
    case KAPI_OFFSET_COMMIT:
        sample_commit(v, var, a, &q->offset_commit);
        return true;
    case KAPI_OFFSET_FETCH:
        sample_fetch_offsets(v, var, a, &q->offset_fetch);
        return true;
    case KAPI_DESCRIBE_GROUPS:
        sample_describe(v, var, a, &q->describe_groups);
        return true;
    case KAPI_LIST_GROUPS:
        sample_list(v, var, a, &q->list_groups);
        return true;
    case KAPI_DELETE_GROUPS:
        sample_delete(var, a, &q->delete_groups);
        return true;
    case KAPI_OFFSET_DELETE:
        sample_offset_delete(var, a, &q->offset_delete);
        return true;
    default:
        return false;
    }
}

/* ---- sample responses ---- */

static void sresp_join(int16_t v, int var, struct arena *a, struct join_group_resp *p)
{
    *p = (struct join_group_resp){.throttle_time_ms = v >= 2 ? 5 : 0,
                                  .generation_id = 3,
                                  .protocol_type = KSTR_NULL,
                                  .protocol_name = S("range"),
                                  .leader = S("m-1"),
                                  .member_id = S("m-2")};
    if (v >= 7)
        p->protocol_type = S("consumer");
    if (var) {
        p->error_code = 79;
        p->generation_id = -1;
        p->protocol_name = v >= 7 ? KSTR_NULL : S("");
        p->protocol_type = KSTR_NULL;
        p->leader = S("");
        return;
    }
    p->n_members = 2;
    p->members = alloc(a, 2, sizeof(*p->members));
    p->members[0] = (struct join_group_member){S("m-1"), KSTR_NULL, B("meta-1")};
    p->members[1] = (struct join_group_member){S("m-2"), v >= 5 ? S("inst") : KSTR_NULL,
                                               {(const uint8_t *)"", 0}};
    p->skip_assignment = v >= 9;
}

static void sresp_sync(int16_t v, int var, struct sync_group_resp *p)
{
    *p = (struct sync_group_resp){.throttle_time_ms = v >= 1 ? 2 : 0,
                                  .protocol_type = KSTR_NULL,
                                  .protocol_name = KSTR_NULL,
                                  .assignment = B("\x00\x00assignment")};
    if (var) {
        p->error_code = 27;
        p->assignment = (struct kbytes){(const uint8_t *)"", 0};
        return;
    }
    if (v >= 5) {
        p->protocol_type = S("consumer");
        p->protocol_name = S("roundrobin");
    }
}

static void sresp_leave(int16_t v, int var, struct arena *a, struct leave_group_resp *p)
{
    *p = (struct leave_group_resp){.throttle_time_ms = v >= 1 ? 1 : 0, .error_code = 0};
    if (var) {
        p->error_code = 25;
        return;
    }
    if (v >= 3) {
        p->n_members = 2;
        p->members = alloc(a, 2, sizeof(*p->members));
        p->members[0] = (struct leave_group_resp_member){S("m-1"), KSTR_NULL, 0};
        p->members[1] = (struct leave_group_resp_member){S(""), S("inst-2"), 82};
    }
}

static void sresp_commit(int16_t v, int var, struct arena *a, struct offset_commit_resp *p)
{
    *p = (struct offset_commit_resp){.throttle_time_ms = v >= 3 ? 4 : 0};
    if (var)
        return;
    p->n_topics = 1;
    p->topics = alloc(a, 1, sizeof(*p->topics));
    p->topics[0].name = S("orders");
    p->topics[0].n_partitions = 2;
    p->topics[0].partitions = alloc(a, 2, sizeof(*p->topics[0].partitions));
    p->topics[0].partitions[0] = (struct offset_commit_resp_partition){0, 0};
    p->topics[0].partitions[1] = (struct offset_commit_resp_partition){9, 3};
}

static void sresp_fetch_offsets(int16_t v, int var, struct arena *a, struct offset_fetch_resp *p)
{
    *p = (struct offset_fetch_resp){.throttle_time_ms = v >= 3 ? 6 : 0};
    if (v >= 8) {
        if (var)
            return;
        p->n_groups = 2;
        p->groups = alloc(a, 2, sizeof(*p->groups));
        p->groups[0] = (struct offset_fetch_resp_group){S("g1"), NULL, 0, 0};
        p->groups[1] = (struct offset_fetch_resp_group){S("g2"), NULL, 1, 0};
        struct offset_fetch_resp_topic *t = alloc(a, 1, sizeof(*t));
        p->groups[1].topics = t;
        t->name = S("orders");
        t->n_partitions = 2;
        t->partitions = alloc(a, 2, sizeof(*t->partitions));
        t->partitions[0] = (struct offset_fetch_resp_partition){0, 42, 3, S("md"), 0};
        t->partitions[1] = (struct offset_fetch_resp_partition){5, -1, -1, KSTR_NULL, 0};
        p->groups[0].error_code = 16; /* NOT_COORDINATOR */
        return;
    }
    if (var) {
        if (v >= 2)
            p->error_code = 14;
        return;
    }
    p->n_topics = 1;
    p->topics = alloc(a, 1, sizeof(*p->topics));
    p->topics[0].name = S("orders");
    p->topics[0].n_partitions = 2;
    p->topics[0].partitions = alloc(a, 2, sizeof(*p->topics[0].partitions));
    p->topics[0].partitions[0] =
        (struct offset_fetch_resp_partition){0, 42, v >= 5 ? 3 : -1, S("md"), 0};
    p->topics[0].partitions[1] = (struct offset_fetch_resp_partition){1, -1, -1, KSTR_NULL, 3};
}

static void sresp_describe(int16_t v, int var, struct arena *a, struct describe_groups_resp *p)
{
    *p = (struct describe_groups_resp){.throttle_time_ms = v >= 1 ? 7 : 0};
    if (var)
        return;
    p->n_groups = 2;
    p->groups = alloc(a, 2, sizeof(*p->groups));
    struct describe_groups_group *g = &p->groups[0];
    *g = (struct describe_groups_group){0, S("g1"), S("Stable"), S("consumer"), S("range"),
                                        NULL, 2,
                                        v >= 3 ? 0x7fff : KAFKA_AUTHORIZED_OPERATIONS_OMITTED};
    g->members = alloc(a, 2, sizeof(*g->members));
    g->members[0] = (struct describe_groups_member){S("m-1"), v >= 4 ? S("i-1") : KSTR_NULL,
                                                    S("rdkafka"), S("/127.0.0.1"), B("sub"),
                                                    B("assign")};
    g->members[1] = (struct describe_groups_member){S("m-2"), KSTR_NULL, S(""), S(""),
                                                    {(const uint8_t *)"", 0},
                                                    {(const uint8_t *)"", 0}};
    p->groups[1] = (struct describe_groups_group){0, S("gone"), S("Dead"), S(""), S(""),
                                                  NULL, 0,
                                                  KAFKA_AUTHORIZED_OPERATIONS_OMITTED};
}

static void sresp_list(int16_t v, int var, struct arena *a, struct list_groups_resp *p)
{
    *p = (struct list_groups_resp){.throttle_time_ms = v >= 1 ? 8 : 0};
    if (var)
        return;
    p->n_groups = 2;
    p->groups = alloc(a, 2, sizeof(*p->groups));
    p->groups[0] = (struct list_groups_group){S("g1"), S("consumer"), S("")};
    p->groups[1] = (struct list_groups_group){S("g2"), S(""), S("")};
    if (v >= 4) {
        p->groups[0].group_state = S("Stable");
        p->groups[1].group_state = S("Empty");
    }
}

static void sresp_delete(int var, struct arena *a, struct delete_groups_resp *p)
{
    *p = (struct delete_groups_resp){.throttle_time_ms = 9};
    if (var)
        return;
    p->n_results = 2;
    p->results = alloc(a, 2, sizeof(*p->results));
    p->results[0] = (struct delete_groups_result){S("g1"), 0};
    p->results[1] = (struct delete_groups_result){S("g2"), 68};
}

static void sresp_offset_delete(int var, struct arena *a, struct offset_delete_resp *p)
{
    *p = (struct offset_delete_resp){.throttle_time_ms = 1};
    if (var) {
        p->error_code = 69;
        return;
    }
    p->n_topics = 1;
    p->topics = alloc(a, 1, sizeof(*p->topics));
    p->topics[0].name = S("orders");
    p->topics[0].n_partitions = 2;
    p->topics[0].partitions = alloc(a, 2, sizeof(*p->topics[0].partitions));
    p->topics[0].partitions[0] = (struct offset_delete_resp_partition){0, 0};
    p->topics[0].partitions[1] = (struct offset_delete_resp_partition){1, 86};
}

bool tgroup_sample_resp(int16_t key, int16_t v, int var, struct arena *a, union kmsg_any_resp *p)
{
    switch (key) {
    case KAPI_JOIN_GROUP:
        sresp_join(v, var, a, &p->join_group);
        return true;
    case KAPI_SYNC_GROUP:
        sresp_sync(v, var, &p->sync_group);
        return true;
    case KAPI_HEARTBEAT:
        p->heartbeat = (struct heartbeat_resp){v >= 1 ? 3 : 0, (int16_t)(var ? 27 : 0)};
        return true;
    case KAPI_LEAVE_GROUP:
        sresp_leave(v, var, a, &p->leave_group);
        return true;
    case KAPI_OFFSET_COMMIT:
        sresp_commit(v, var, a, &p->offset_commit);
        return true;
    case KAPI_OFFSET_FETCH:
        sresp_fetch_offsets(v, var, a, &p->offset_fetch);
        return true;
    case KAPI_DESCRIBE_GROUPS:
        sresp_describe(v, var, a, &p->describe_groups);
        return true;
    case KAPI_LIST_GROUPS:
        sresp_list(v, var, a, &p->list_groups);
        return true;
    case KAPI_DELETE_GROUPS:
        sresp_delete(var, a, &p->delete_groups);
        return true;
    case KAPI_OFFSET_DELETE:
        sresp_offset_delete(var, a, &p->offset_delete);
        return true;
    default:
        return false;
    }
}

bool tgroup_encode_resp(struct kwriter *w, int16_t key, int16_t v, const union kmsg_any_resp *p)
{
    switch (key) {
    case KAPI_JOIN_GROUP:
        kmsg_encode_join_group(w, v, &p->join_group);
        return true;
    case KAPI_SYNC_GROUP:
        kmsg_encode_sync_group(w, v, &p->sync_group);
        return true;
    case KAPI_HEARTBEAT:
        kmsg_encode_heartbeat(w, v, &p->heartbeat);
        return true;
    case KAPI_LEAVE_GROUP:
        kmsg_encode_leave_group(w, v, &p->leave_group);
        return true;
    case KAPI_OFFSET_COMMIT:
        kmsg_encode_offset_commit(w, v, &p->offset_commit);
        return true;
    case KAPI_OFFSET_FETCH:
        kmsg_encode_offset_fetch(w, v, &p->offset_fetch);
        return true;
    case KAPI_DESCRIBE_GROUPS:
        kmsg_encode_describe_groups(w, v, &p->describe_groups);
        return true;
    case KAPI_LIST_GROUPS:
        kmsg_encode_list_groups(w, v, &p->list_groups);
        return true;
    case KAPI_DELETE_GROUPS:
        kmsg_encode_delete_groups(w, v, &p->delete_groups);
        return true;
    case KAPI_OFFSET_DELETE:
        kmsg_encode_offset_delete(w, v, &p->offset_delete);
        return true;
    default:
        return false;
    }
}

/* ---- test-side response decoders ---- */

static void d_tags(struct kreader *r, bool flex)
{
    if (flex && kr_uvarint(r) != 0)
        r->err = true;
}

static int32_t d_arr(struct kreader *r, bool flex)
{
    return kr_array(r, flex, 1);
}

static void dec_join(struct kreader *r, int16_t v, bool f, struct arena *a,
                     struct join_group_resp *p)
{
    p->throttle_time_ms = v >= 2 ? kr_i32(r) : 0;
    p->error_code = kr_i16(r);
    p->generation_id = kr_i32(r);
    p->protocol_type = v >= 7 ? kr_str(r, f) : KSTR_NULL;
    p->protocol_name = kr_str(r, f);
    p->leader = kr_str(r, f);
    p->skip_assignment = v >= 9 ? kr_bool(r) : false;
    p->member_id = kr_str(r, f);
    p->n_members = d_arr(r, f);
    p->members = alloc(a, p->n_members, sizeof(*p->members));
    for (int32_t i = 0; i < p->n_members; i++) {
        p->members[i].member_id = kr_str(r, f);
        p->members[i].group_instance_id = v >= 5 ? kr_str(r, f) : KSTR_NULL;
        p->members[i].metadata = kr_bytes(r, f);
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_sync(struct kreader *r, int16_t v, bool f, struct sync_group_resp *p)
{
    p->throttle_time_ms = v >= 1 ? kr_i32(r) : 0;
    p->error_code = kr_i16(r);
    p->protocol_type = v >= 5 ? kr_str(r, f) : KSTR_NULL;
    p->protocol_name = v >= 5 ? kr_str(r, f) : KSTR_NULL;
    p->assignment = kr_bytes(r, f);
    d_tags(r, f);
}

static void dec_leave(struct kreader *r, int16_t v, bool f, struct arena *a,
                      struct leave_group_resp *p)
{
    p->throttle_time_ms = v >= 1 ? kr_i32(r) : 0;
    p->error_code = kr_i16(r);
    if (v >= 3) {
        p->n_members = d_arr(r, f);
        p->members = alloc(a, p->n_members, sizeof(*p->members));
        for (int32_t i = 0; i < p->n_members; i++) {
            p->members[i].member_id = kr_str(r, f);
            p->members[i].group_instance_id = kr_str(r, f);
            p->members[i].error_code = kr_i16(r);
            d_tags(r, f);
        }
    }
    d_tags(r, f);
}

static void dec_commit(struct kreader *r, int16_t v, bool f, struct arena *a,
                       struct offset_commit_resp *p)
{
    p->throttle_time_ms = v >= 3 ? kr_i32(r) : 0;
    p->n_topics = d_arr(r, f);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct offset_commit_resp_topic *t = &p->topics[i];
        t->name = kr_str(r, f);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            t->partitions[j].partition_index = kr_i32(r);
            t->partitions[j].error_code = kr_i16(r);
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    d_tags(r, f);
}

static struct offset_fetch_resp_topic *dec_fetch_topics(struct kreader *r, int16_t v, bool f,
                                                        struct arena *a, int32_t *n);

static void dec_fetch_offsets(struct kreader *r, int16_t v, bool f, struct arena *a,
                              struct offset_fetch_resp *p)
{
    p->throttle_time_ms = v >= 3 ? kr_i32(r) : 0;
    if (v >= 8) {
        p->n_groups = d_arr(r, f);
        p->groups = alloc(a, p->n_groups, sizeof(*p->groups));
        for (int32_t i = 0; i < p->n_groups; i++) {
            struct offset_fetch_resp_group *g = &p->groups[i];
            g->group_id = kr_str(r, f);
            g->topics = dec_fetch_topics(r, v, f, a, &g->n_topics);
            g->error_code = kr_i16(r);
            d_tags(r, f);
        }
    } else {
        p->topics = dec_fetch_topics(r, v, f, a, &p->n_topics);
        p->error_code = v >= 2 ? kr_i16(r) : 0;
    }
    d_tags(r, f);
}

static struct offset_fetch_resp_topic *dec_fetch_topics(struct kreader *r, int16_t v, bool f,
                                                        struct arena *a, int32_t *n)
{
    *n = d_arr(r, f);
    struct offset_fetch_resp_topic *topics = alloc(a, *n, sizeof(*topics));
    for (int32_t i = 0; i < *n; i++) {
        struct offset_fetch_resp_topic *t = &topics[i];
        t->name = kr_str(r, f);
        t->n_partitions = d_arr(r, f);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            struct offset_fetch_resp_partition *pp = &t->partitions[j];
            pp->partition_index = kr_i32(r);
            pp->committed_offset = kr_i64(r);
            pp->committed_leader_epoch = v >= 5 ? kr_i32(r) : -1;
            pp->metadata = kr_str(r, f);
            pp->error_code = kr_i16(r);
            d_tags(r, f);
        }
        d_tags(r, f);
    }
    return topics;
}

static void dec_describe(struct kreader *r, int16_t v, bool f, struct arena *a,
                         struct describe_groups_resp *p)
{
    p->throttle_time_ms = v >= 1 ? kr_i32(r) : 0;
    p->n_groups = d_arr(r, f);
    p->groups = alloc(a, p->n_groups, sizeof(*p->groups));
    for (int32_t i = 0; i < p->n_groups; i++) {
        struct describe_groups_group *g = &p->groups[i];
        g->error_code = kr_i16(r);
        g->group_id = kr_str(r, f);
        g->group_state = kr_str(r, f);
        g->protocol_type = kr_str(r, f);
        g->protocol_data = kr_str(r, f);
        g->n_members = d_arr(r, f);
        g->members = alloc(a, g->n_members, sizeof(*g->members));
        for (int32_t j = 0; j < g->n_members; j++) {
            struct describe_groups_member *m = &g->members[j];
            m->member_id = kr_str(r, f);
            m->group_instance_id = v >= 4 ? kr_str(r, f) : KSTR_NULL;
            m->client_id = kr_str(r, f);
            m->client_host = kr_str(r, f);
            m->member_metadata = kr_bytes(r, f);
            m->member_assignment = kr_bytes(r, f);
            d_tags(r, f);
        }
        g->authorized_operations = v >= 3 ? kr_i32(r) : KAFKA_AUTHORIZED_OPERATIONS_OMITTED;
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_list(struct kreader *r, int16_t v, bool f, struct arena *a,
                     struct list_groups_resp *p)
{
    p->throttle_time_ms = v >= 1 ? kr_i32(r) : 0;
    p->error_code = kr_i16(r);
    p->n_groups = d_arr(r, f);
    p->groups = alloc(a, p->n_groups, sizeof(*p->groups));
    for (int32_t i = 0; i < p->n_groups; i++) {
        p->groups[i].group_id = kr_str(r, f);
        p->groups[i].protocol_type = kr_str(r, f);
        p->groups[i].group_state = v >= 4 ? kr_str(r, f) : S("");
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_delete(struct kreader *r, bool f, struct arena *a, struct delete_groups_resp *p)
{
    p->throttle_time_ms = kr_i32(r);
    p->n_results = d_arr(r, f);
    p->results = alloc(a, p->n_results, sizeof(*p->results));
    for (int32_t i = 0; i < p->n_results; i++) {
        p->results[i].group_id = kr_str(r, f);
        p->results[i].error_code = kr_i16(r);
        d_tags(r, f);
    }
    d_tags(r, f);
}

static void dec_offset_delete(struct kreader *r, struct arena *a, struct offset_delete_resp *p)
{
    p->error_code = kr_i16(r);
    p->throttle_time_ms = kr_i32(r);
    p->n_topics = d_arr(r, false);
    p->topics = alloc(a, p->n_topics, sizeof(*p->topics));
    for (int32_t i = 0; i < p->n_topics; i++) {
        struct offset_delete_resp_topic *t = &p->topics[i];
        t->name = kr_str(r, false);
        t->n_partitions = d_arr(r, false);
        t->partitions = alloc(a, t->n_partitions, sizeof(*t->partitions));
        for (int32_t j = 0; j < t->n_partitions; j++) {
            t->partitions[j].partition_index = kr_i32(r);
            t->partitions[j].error_code = kr_i16(r);
        }
    }
}

bool tgroup_dec_resp(struct kreader *r, int16_t key, int16_t v, struct arena *a,
                     union kmsg_any_resp *p)
{
    bool f = kafka_api_flexible(key, v);
    switch (key) {
    case KAPI_JOIN_GROUP:
        dec_join(r, v, f, a, &p->join_group);
        return true;
    case KAPI_SYNC_GROUP:
        dec_sync(r, v, f, &p->sync_group);
        return true;
    case KAPI_HEARTBEAT:
        p->heartbeat.throttle_time_ms = v >= 1 ? kr_i32(r) : 0;
        p->heartbeat.error_code = kr_i16(r);
        d_tags(r, f);
        return true;
    case KAPI_LEAVE_GROUP:
        dec_leave(r, v, f, a, &p->leave_group);
        return true;
    case KAPI_OFFSET_COMMIT:
        dec_commit(r, v, f, a, &p->offset_commit);
        return true;
    case KAPI_OFFSET_FETCH:
        dec_fetch_offsets(r, v, f, a, &p->offset_fetch);
        return true;
    case KAPI_DESCRIBE_GROUPS:
        dec_describe(r, v, f, a, &p->describe_groups);
        return true;
    case KAPI_LIST_GROUPS:
        dec_list(r, v, f, a, &p->list_groups);
        return true;
    case KAPI_DELETE_GROUPS:
        dec_delete(r, f, a, &p->delete_groups);
        return true;
    case KAPI_OFFSET_DELETE:
        dec_offset_delete(r, a, &p->offset_delete);
        return true;
    default:
        return false;
    }
}
