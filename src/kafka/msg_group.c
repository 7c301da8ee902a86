/* Consumer-group messages (see msg_group.h): JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
 * OffsetCommit, OffsetFetch, DescribeGroups, ListGroups, DeleteGroups, OffsetDelete. */
#include "kafka/msg_group.h"

#include "kafka/msg_int.h"

/* A nullable string written where a version forbids null: "" stands in for it. */
static void wr_str_or_empty(struct kwriter *w, bool flex, struct kstr s)
{
    kmsg_wr_str(w, flex, s.len < 0 ? kstr_c("") : s);
}

/* ---- JoinGroup ---- */

int kmsg_decode_join_group(struct kreader *r, int16_t v, struct arena *a,
                           struct join_group_req *out)
{
    if (!kmsg_version_ok(KAPI_JOIN_GROUP, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_JOIN_GROUP, v);
    *out = (struct join_group_req){
        .rebalance_timeout_ms = -1, .group_instance_id = KSTR_NULL, .reason = KSTR_NULL};
    out->group_id = kmsg_rd_str(r, flex);
    out->session_timeout_ms = kr_i32(r);
    if (v >= 1)
        out->rebalance_timeout_ms = kr_i32(r);
    out->member_id = kmsg_rd_str(r, flex);
    if (v >= 5)
        out->group_instance_id = kr_str(r, flex); /* nullable */
    out->protocol_type = kmsg_rd_str(r, flex);
    size_t proto_min = kmsg_min_str(flex) + kmsg_min_bytes(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, proto_min);
    out->protocols = kmsg_alloc(a, n, sizeof(*out->protocols));
    out->n_protocols = n;
    for (int32_t i = 0; i < n; i++) {
        out->protocols[i].name = kmsg_rd_str(r, flex);
        out->protocols[i].metadata = kr_bytes(r, flex);
        if (out->protocols[i].metadata.len < 0)
            r->err = true;
        kr_tags(r, flex);
    }
    if (v >= 8)
        out->reason = kr_str(r, flex); /* nullable */
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_join_group(struct kwriter *w, int16_t v, const struct join_group_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_JOIN_GROUP, v));
    bool flex = kafka_api_flexible(KAPI_JOIN_GROUP, v);
    if (v >= 2)
        kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kw_i32(w, resp->generation_id);
    if (v >= 7) {
        kmsg_wr_nstr(w, flex, resp->protocol_type);
        kmsg_wr_nstr(w, flex, resp->protocol_name);
    } else {
        wr_str_or_empty(w, flex, resp->protocol_name);
    }
    kmsg_wr_str(w, flex, resp->leader);
    if (v >= 9)
        kw_bool(w, resp->skip_assignment);
    kmsg_wr_str(w, flex, resp->member_id);
    kmsg_wr_array(w, flex, resp->n_members);
    for (int32_t i = 0; i < resp->n_members; i++) {
        const struct join_group_member *m = &resp->members[i];
        kmsg_wr_str(w, flex, m->member_id);
        if (v >= 5)
            kmsg_wr_nstr(w, flex, m->group_instance_id);
        DCHECK(m->metadata.len >= 0);
        kw_bytes(w, flex, m->metadata);
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}

/* ---- SyncGroup ---- */

int kmsg_decode_sync_group(struct kreader *r, int16_t v, struct arena *a,
                           struct sync_group_req *out)
{
    if (!kmsg_version_ok(KAPI_SYNC_GROUP, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_SYNC_GROUP, v);
    *out = (struct sync_group_req){.group_instance_id = KSTR_NULL,
                                   .protocol_type = KSTR_NULL,
                                   .protocol_name = KSTR_NULL};
    out->group_id = kmsg_rd_str(r, flex);
    out->generation_id = kr_i32(r);
    out->member_id = kmsg_rd_str(r, flex);
    if (v >= 3)
        out->group_instance_id = kr_str(r, flex);
    if (v >= 5) {
        out->protocol_type = kr_str(r, flex);
        out->protocol_name = kr_str(r, flex);
    }
    size_t min = kmsg_min_str(flex) + kmsg_min_bytes(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, min);
    out->assignments = kmsg_alloc(a, n, sizeof(*out->assignments));
    out->n_assignments = n;
    for (int32_t i = 0; i < n; i++) {
        out->assignments[i].member_id = kmsg_rd_str(r, flex);
        out->assignments[i].assignment = kr_bytes(r, flex);
        if (out->assignments[i].assignment.len < 0)
            r->err = true;
        kr_tags(r, flex);
    }
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_sync_group(struct kwriter *w, int16_t v, const struct sync_group_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_SYNC_GROUP, v));
    bool flex = kafka_api_flexible(KAPI_SYNC_GROUP, v);
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    if (v >= 5) {
        kmsg_wr_nstr(w, flex, resp->protocol_type);
        kmsg_wr_nstr(w, flex, resp->protocol_name);
    }
    DCHECK(resp->assignment.len >= 0);
    kw_bytes(w, flex, resp->assignment);
    kw_tags(w, flex);
}

/* ---- Heartbeat ---- */

int kmsg_decode_heartbeat(struct kreader *r, int16_t v, struct arena *a, struct heartbeat_req *out)
{
    if (!kmsg_version_ok(KAPI_HEARTBEAT, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_HEARTBEAT, v);
    *out = (struct heartbeat_req){.group_instance_id = KSTR_NULL};
    out->group_id = kmsg_rd_str(r, flex);
    out->generation_id = kr_i32(r);
    out->member_id = kmsg_rd_str(r, flex);
    if (v >= 3)
        out->group_instance_id = kr_str(r, flex);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_heartbeat(struct kwriter *w, int16_t v, const struct heartbeat_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_HEARTBEAT, v));
    bool flex = kafka_api_flexible(KAPI_HEARTBEAT, v);
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kw_tags(w, flex);
}

/* ---- LeaveGroup ---- */

int kmsg_decode_leave_group(struct kreader *r, int16_t v, struct arena *a,
                            struct leave_group_req *out)
{
    if (!kmsg_version_ok(KAPI_LEAVE_GROUP, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_LEAVE_GROUP, v);
    *out = (struct leave_group_req){0};
    out->group_id = kmsg_rd_str(r, flex);
    if (v <= 2) {
        struct kstr member = kmsg_rd_str(r, flex);
        out->members = arena_calloc(a, 1, sizeof(*out->members));
        out->members[0] = (struct leave_group_member){member, KSTR_NULL, KSTR_NULL};
        out->n_members = 1;
    } else {
        size_t min = (v >= 5 ? 3 : 2) * kmsg_min_str(flex) + kmsg_min_tags(flex);
        int32_t n = kmsg_rd_array(r, flex, min);
        out->members = kmsg_alloc(a, n, sizeof(*out->members));
        out->n_members = n;
        for (int32_t i = 0; i < n; i++) {
            out->members[i].member_id = kmsg_rd_str(r, flex);
            out->members[i].group_instance_id = kr_str(r, flex);
            out->members[i].reason = v >= 5 ? kr_str(r, flex) : KSTR_NULL; /* nullable */
            kr_tags(r, flex);
        }
    }
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_leave_group(struct kwriter *w, int16_t v, const struct leave_group_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_LEAVE_GROUP, v));
    bool flex = kafka_api_flexible(KAPI_LEAVE_GROUP, v);
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    if (v >= 3) {
        kmsg_wr_array(w, flex, resp->n_members);
        for (int32_t i = 0; i < resp->n_members; i++) {
            const struct leave_group_resp_member *m = &resp->members[i];
            kmsg_wr_str(w, flex, m->member_id);
            kmsg_wr_nstr(w, flex, m->group_instance_id);
            kw_error_code(w, m->error_code);
            kw_tags(w, flex);
        }
    }
    kw_tags(w, flex);
}

/* ---- OffsetCommit ---- */

static void decode_commit_topic(struct kreader *r, int16_t v, bool flex, struct arena *a,
                                struct offset_commit_req_topic *t)
{
    t->name = kmsg_rd_str(r, flex);
    size_t min =
        4 + 8 + (v >= 6 ? 4 : 0) + (v == 1 ? 8 : 0) + kmsg_min_str(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, min);
    t->partitions = kmsg_alloc(a, n, sizeof(*t->partitions));
    t->n_partitions = n;
    for (int32_t i = 0; i < n; i++) {
        struct offset_commit_req_partition *p = &t->partitions[i];
        p->partition_index = kr_i32(r);
        p->committed_offset = kr_i64(r);
        p->committed_leader_epoch = v >= 6 ? kr_i32(r) : -1;
        p->commit_timestamp = v == 1 ? kr_i64(r) : -1;
        p->committed_metadata = kr_str(r, flex); /* nullable */
        kr_tags(r, flex);
    }
    kr_tags(r, flex);
}

int kmsg_decode_offset_commit(struct kreader *r, int16_t v, struct arena *a,
                              struct offset_commit_req *out)
{
    if (!kmsg_version_ok(KAPI_OFFSET_COMMIT, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_OFFSET_COMMIT, v);
    *out = (struct offset_commit_req){.generation_id = -1,
                                      .member_id = {"", 0},
                                      .group_instance_id = KSTR_NULL,
                                      .retention_time_ms = -1};
    out->group_id = kmsg_rd_str(r, flex);
    if (v >= 1) {
        out->generation_id = kr_i32(r);
        out->member_id = kmsg_rd_str(r, flex);
    }
    if (v >= 7)
        out->group_instance_id = kr_str(r, flex);
    if (v >= 2 && v <= 4)
        out->retention_time_ms = kr_i64(r);
    size_t min = kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kmsg_rd_array(r, flex, min);
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++)
        decode_commit_topic(r, v, flex, a, &out->topics[i]);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_offset_commit(struct kwriter *w, int16_t v, const struct offset_commit_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_OFFSET_COMMIT, v));
    bool flex = kafka_api_flexible(KAPI_OFFSET_COMMIT, v);
    if (v >= 3)
        kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct offset_commit_resp_topic *t = &resp->topics[i];
        kmsg_wr_str(w, flex, t->name);
        kmsg_wr_array(w, flex, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            kw_i32(w, t->partitions[j].partition_index);
            kw_error_code(w, t->partitions[j].error_code);
            kw_tags(w, flex);
        }
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}

/* ---- OffsetFetch ---- */

static struct offset_fetch_req_topic *
decode_fetch_topics(struct kreader *r, bool flex, struct arena *a, bool nullable, int32_t *count)
{
    size_t min = kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = nullable ? kr_array(r, flex, min) : kmsg_rd_array(r, flex, min);
    struct offset_fetch_req_topic *topics = kmsg_alloc(a, n, sizeof(*topics));
    for (int32_t i = 0; i < n; i++) {
        struct offset_fetch_req_topic *t = &topics[i];
        t->name = kmsg_rd_str(r, flex);
        t->partition_indexes = kmsg_rd_i32s(r, flex, a, false, &t->n_partition_indexes);
        kr_tags(r, flex);
    }
    *count = n;
    return topics;
}

static void encode_fetch_topics(struct kwriter *w, int16_t v, bool flex,
                                const struct offset_fetch_resp_topic *topics, int32_t n)
{
    kmsg_wr_array(w, flex, n);
    for (int32_t i = 0; i < n; i++) {
        const struct offset_fetch_resp_topic *t = &topics[i];
        kmsg_wr_str(w, flex, t->name);
        kmsg_wr_array(w, flex, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            const struct offset_fetch_resp_partition *p = &t->partitions[j];
            kw_i32(w, p->partition_index);
            kw_i64(w, p->committed_offset);
            if (v >= 5)
                kw_i32(w, p->committed_leader_epoch);
            kmsg_wr_nstr(w, flex, p->metadata);
            kw_error_code(w, p->error_code);
            kw_tags(w, flex);
        }
        kw_tags(w, flex);
    }
}

int kmsg_decode_offset_fetch(struct kreader *r, int16_t v, struct arena *a,
                             struct offset_fetch_req *out)
{
    if (!kmsg_version_ok(KAPI_OFFSET_FETCH, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_OFFSET_FETCH, v);
    *out = (struct offset_fetch_req){.group_id = {"", 0}};
    if (v >= 8) {
        size_t min = kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
        int32_t n = kmsg_rd_array(r, flex, min);
        out->groups = kmsg_alloc(a, n, sizeof(*out->groups));
        out->n_groups = n;
        for (int32_t i = 0; i < n; i++) {
            struct offset_fetch_req_group *g = &out->groups[i];
            g->group_id = kmsg_rd_str(r, flex);
            g->topics = decode_fetch_topics(r, flex, a, true, &g->n_topics);
            kr_tags(r, flex);
        }
    } else {
        out->group_id = kmsg_rd_str(r, flex);
        /* the topic array may be null (all topics) from v2 */
        out->topics = decode_fetch_topics(r, flex, a, v >= 2, &out->n_topics);
    }
    if (v >= 7)
        out->require_stable = kr_bool(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_offset_fetch(struct kwriter *w, int16_t v, const struct offset_fetch_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_OFFSET_FETCH, v));
    bool flex = kafka_api_flexible(KAPI_OFFSET_FETCH, v);
    if (v >= 3)
        kw_i32(w, resp->throttle_time_ms);
    if (v >= 8) {
        kmsg_wr_array(w, flex, resp->n_groups);
        for (int32_t i = 0; i < resp->n_groups; i++) {
            const struct offset_fetch_resp_group *g = &resp->groups[i];
            kmsg_wr_str(w, flex, g->group_id);
            encode_fetch_topics(w, v, flex, g->topics, g->n_topics);
            kw_error_code(w, g->error_code);
            kw_tags(w, flex);
        }
    } else {
        encode_fetch_topics(w, v, flex, resp->topics, resp->n_topics);
        if (v >= 2)
            kw_error_code(w, resp->error_code);
    }
    kw_tags(w, flex);
}

/* ---- DescribeGroups ---- */

int kmsg_decode_describe_groups(struct kreader *r, int16_t v, struct arena *a,
                                struct describe_groups_req *out)
{
    if (!kmsg_version_ok(KAPI_DESCRIBE_GROUPS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_DESCRIBE_GROUPS, v);
    *out = (struct describe_groups_req){0};
    out->groups = kmsg_rd_strs(r, flex, a, false, &out->n_groups);
    if (v >= 3)
        out->include_authorized_operations = kr_bool(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_describe_groups(struct kwriter *w, int16_t v,
                                 const struct describe_groups_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DESCRIBE_GROUPS, v));
    bool flex = kafka_api_flexible(KAPI_DESCRIBE_GROUPS, v);
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_groups);
    for (int32_t i = 0; i < resp->n_groups; i++) {
        const struct describe_groups_group *g = &resp->groups[i];
        kw_error_code(w, g->error_code);
        kmsg_wr_str(w, flex, g->group_id);
        kmsg_wr_str(w, flex, g->group_state);
        kmsg_wr_str(w, flex, g->protocol_type);
        kmsg_wr_str(w, flex, g->protocol_data);
        kmsg_wr_array(w, flex, g->n_members);
        for (int32_t j = 0; j < g->n_members; j++) {
            const struct describe_groups_member *m = &g->members[j];
            kmsg_wr_str(w, flex, m->member_id);
            if (v >= 4)
                kmsg_wr_nstr(w, flex, m->group_instance_id);
            kmsg_wr_str(w, flex, m->client_id);
            kmsg_wr_str(w, flex, m->client_host);
            DCHECK(m->member_metadata.len >= 0 && m->member_assignment.len >= 0);
            kw_bytes(w, flex, m->member_metadata);
            kw_bytes(w, flex, m->member_assignment);
            kw_tags(w, flex);
        }
        if (v >= 3)
            kw_i32(w, g->authorized_operations);
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}

/* ---- ListGroups ---- */

int kmsg_decode_list_groups(struct kreader *r, int16_t v, struct arena *a,
                            struct list_groups_req *out)
{
    if (!kmsg_version_ok(KAPI_LIST_GROUPS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_LIST_GROUPS, v);
    *out = (struct list_groups_req){0};
    if (v >= 4)
        out->states_filter = kmsg_rd_strs(r, flex, a, false, &out->n_states_filter);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_list_groups(struct kwriter *w, int16_t v, const struct list_groups_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_LIST_GROUPS, v));
    bool flex = kafka_api_flexible(KAPI_LIST_GROUPS, v);
    if (v >= 1)
        kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kmsg_wr_array(w, flex, resp->n_groups);
    for (int32_t i = 0; i < resp->n_groups; i++) {
        const struct list_groups_group *g = &resp->groups[i];
        kmsg_wr_str(w, flex, g->group_id);
        kmsg_wr_str(w, flex, g->protocol_type);
        if (v >= 4)
            kmsg_wr_str(w, flex, g->group_state);
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}

/* ---- DeleteGroups ---- */

int kmsg_decode_delete_groups(struct kreader *r, int16_t v, struct arena *a,
                              struct delete_groups_req *out)
{
    if (!kmsg_version_ok(KAPI_DELETE_GROUPS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_DELETE_GROUPS, v);
    *out = (struct delete_groups_req){0};
    out->groups_names = kmsg_rd_strs(r, flex, a, false, &out->n_groups_names);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_delete_groups(struct kwriter *w, int16_t v, const struct delete_groups_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DELETE_GROUPS, v));
    bool flex = kafka_api_flexible(KAPI_DELETE_GROUPS, v);
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_results);
    for (int32_t i = 0; i < resp->n_results; i++) {
        kmsg_wr_str(w, flex, resp->results[i].group_id);
        kw_error_code(w, resp->results[i].error_code);
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}

/* ---- OffsetDelete ---- */

int kmsg_decode_offset_delete(struct kreader *r, int16_t v, struct arena *a,
                              struct offset_delete_req *out)
{
    if (!kmsg_version_ok(KAPI_OFFSET_DELETE, v))
        return -ERR_UNSUPPORTED;
    const bool flex = false;
    *out = (struct offset_delete_req){0};
    out->group_id = kmsg_rd_str(r, flex);
    int32_t n = kmsg_rd_array(r, flex, kmsg_min_str(flex) + kmsg_min_array(flex));
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++) {
        struct offset_delete_req_topic *t = &out->topics[i];
        t->name = kmsg_rd_str(r, flex);
        t->partitions = kmsg_rd_i32s(r, flex, a, false, &t->n_partitions);
    }
    return kmsg_rd_done(r);
}

void kmsg_encode_offset_delete(struct kwriter *w, int16_t v, const struct offset_delete_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_OFFSET_DELETE, v));
    const bool flex = false;
    kw_error_code(w, resp->error_code);
    kw_i32(w, resp->throttle_time_ms);
    kmsg_wr_array(w, flex, resp->n_topics);
    for (int32_t i = 0; i < resp->n_topics; i++) {
        const struct offset_delete_resp_topic *t = &resp->topics[i];
        kmsg_wr_str(w, flex, t->name);
        kmsg_wr_array(w, flex, t->n_partitions);
        for (int32_t j = 0; j < t->n_partitions; j++) {
            kw_i32(w, t->partitions[j].partition_index);
            kw_error_code(w, t->partitions[j].error_code);
        }
    }
}
