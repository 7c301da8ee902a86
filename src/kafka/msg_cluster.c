/* DescribeCluster (key 60) v0-1, flexible from v0 (DescribeClusterRequest/Response.json; v1 adds
 * EndpointType), and DescribeLogDirs (key 35) v0-4 (DescribeLogDirsRequest/Response.json;
 * flexible from v2; v3 adds a top-level ErrorCode, v4 each directory's TotalBytes and
 * UsableBytes). */
#include "kafka/msg_int.h"

/* ---- DescribeCluster ---- */

int kmsg_decode_describe_cluster(struct kreader *r, int16_t v, struct arena *a,
                                 struct describe_cluster_req *out)
{
    (void)a;
    if (!kmsg_version_ok(KAPI_DESCRIBE_CLUSTER, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_DESCRIBE_CLUSTER, v);
    *out = (struct describe_cluster_req){.endpoint_type = KAFKA_ENDPOINT_BROKERS};
    out->include_cluster_authorized_operations = kr_bool(r);
    if (v >= 1)
        out->endpoint_type = kr_i8(r);
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_describe_cluster(struct kwriter *w, int16_t v,
                                  const struct describe_cluster_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DESCRIBE_CLUSTER, v));
    bool flex = kafka_api_flexible(KAPI_DESCRIBE_CLUSTER, v);
    kw_i32(w, resp->throttle_time_ms);
    kw_error_code(w, resp->error_code);
    kmsg_wr_nstr(w, flex, resp->error_message); /* nullable */
    if (v >= 1)
        kw_i8(w, resp->endpoint_type);
    kmsg_wr_str(w, flex, resp->cluster_id);
    kw_i32(w, resp->controller_id);
    kmsg_wr_array(w, flex, resp->n_brokers);
    for (int32_t i = 0; i < resp->n_brokers; i++) {
        const struct describe_cluster_broker *b = &resp->brokers[i];
        kw_i32(w, b->broker_id);
        kmsg_wr_str(w, flex, b->host);
        kw_i32(w, b->port);
        kmsg_wr_nstr(w, flex, b->rack); /* nullable */
        kw_tags(w, flex);
    }
    kw_i32(w, resp->cluster_authorized_operations);
    kw_tags(w, flex);
}

/* ---- DescribeLogDirs ---- */

int kmsg_decode_describe_log_dirs(struct kreader *r, int16_t v, struct arena *a,
                                  struct describe_log_dirs_req *out)
{
    if (!kmsg_version_ok(KAPI_DESCRIBE_LOG_DIRS, v))
        return -ERR_UNSUPPORTED;
    bool flex = kafka_api_flexible(KAPI_DESCRIBE_LOG_DIRS, v);
    *out = (struct describe_log_dirs_req){0};
    size_t topic_min = kmsg_min_str(flex) + kmsg_min_array(flex) + kmsg_min_tags(flex);
    int32_t n = kr_array(r, flex, topic_min); /* nullable: every topic */
    out->topics = kmsg_alloc(a, n, sizeof(*out->topics));
    out->n_topics = n;
    for (int32_t i = 0; i < n; i++) {
        struct describe_log_dirs_req_topic *t = &out->topics[i];
        t->topic = kmsg_rd_str(r, flex);
        t->partitions = kmsg_rd_i32s(r, flex, a, false, &t->n_partitions);
        kr_tags(r, flex);
    }
    kr_tags(r, flex);
    return kmsg_rd_done(r);
}

void kmsg_encode_describe_log_dirs(struct kwriter *w, int16_t v,
                                   const struct describe_log_dirs_resp *resp)
{
    CHECK(kmsg_version_ok(KAPI_DESCRIBE_LOG_DIRS, v));
    bool flex = kafka_api_flexible(KAPI_DESCRIBE_LOG_DIRS, v);
    kw_i32(w, resp->throttle_time_ms);
    if (v >= 3)
        kw_error_code(w, resp->error_code);
    kmsg_wr_array(w, flex, resp->n_results);
    for (int32_t i = 0; i < resp->n_results; i++) {
        const struct describe_log_dirs_result *res = &resp->results[i];
        kw_error_code(w, res->error_code);
        kmsg_wr_str(w, flex, res->log_dir);
        kmsg_wr_array(w, flex, res->n_topics);
        for (int32_t j = 0; j < res->n_topics; j++) {
            const struct describe_log_dirs_topic *t = &res->topics[j];
            kmsg_wr_str(w, flex, t->name);
            kmsg_wr_array(w, flex, t->n_partitions);
            for (int32_t k = 0; k < t->n_partitions; k++) {
                const struct describe_log_dirs_partition *p = &t->partitions[k];
                kw_i32(w, p->partition_index);
                kw_i64(w, p->partition_size);
                kw_i64(w, p->offset_lag);
                kw_bool(w, p->is_future_key);
                kw_tags(w, flex);
            }
            kw_tags(w, flex);
        }
        if (v >= 4) {
            kw_i64(w, res->total_bytes);
            kw_i64(w, res->usable_bytes);
        }
        kw_tags(w, flex);
    }
    kw_tags(w, flex);
}
