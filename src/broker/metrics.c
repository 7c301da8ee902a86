/* Request accounting and the Prometheus view of the broker (see metrics.h).
 *
 * Metric families, in output order (labels in braces):
 *   streampulse_kafka_requests_total{api}                  counter
 *   streampulse_kafka_request_errors_total{api}            counter
 *   streampulse_kafka_request_latency_seconds{api}         histogram
 *   streampulse_kafka_connections                          gauge
 *   streampulse_kafka_connections_accepted_total           counter
 *   streampulse_kafka_connections_refused_total            counter
 *   streampulse_kafka_received_bytes_total                 counter
 *   streampulse_kafka_sent_bytes_total                     counter
 *   streampulse_storage_fsync_latency_seconds              histogram
 *   streampulse_storage_fsync_errors_total                 counter
 *   streampulse_topics, streampulse_partitions             gauge
 *   streampulse_partition_log_start_offset{topic,partition}   gauge
 *   streampulse_partition_log_end_offset{topic,partition}     gauge
 *   streampulse_partition_high_watermark{topic,partition}     gauge
 *   streampulse_partition_size_bytes{topic,partition}         gauge
 *   streampulse_partition_segments{topic,partition}           gauge
 *   streampulse_partition_leader_epoch{topic,partition}       gauge
 *   streampulse_partition_fenced{topic,partition}             gauge
 *   streampulse_partition_appended_records_total{topic,partition} counter
 *   streampulse_partition_appended_bytes_total{topic,partition}   counter
 *   streampulse_groups{state}                              gauge
 *   streampulse_group_members{group}                       gauge
 *   streampulse_group_committed_offset{group,topic,partition} gauge
 *   streampulse_group_lag{group,topic,partition}           gauge
 *   streampulse_schema_registry_subjects, _schemas        gauge
 *   streampulse_schema_registry_records_applied_total, _records_skipped_total   counter
 *   streampulse_schema_registry_waiting_requests          gauge
 *   and the families of cluster_metrics_write (broker/cluster.h)
 * Lag is max(0, HW - committed offset), the definition `streampulse group describe` uses (its
 * log end is what ListOffsets(latest) answers: the high watermark). Partitions without a
 * committed offset have no lag sample; committed offsets of partitions that no longer exist
 * have no lag sample either. */
#include "broker/metrics.h"

#include <stdio.h>

#include "base/check.h"
#include "base/mem.h"
#include "base/prom.h"
#include "base/time.h"
#include "broker/authz.h"
#include "broker/cluster.h"
#include "broker/internal.h"
#include "broker/quotas.h"
#include "broker/snapshot.h"
#include "group/coordinator.h"
#include "group/group.h"
#include "storage/fdcache.h"
#include "storage/flusher.h"
#include "storage/plog.h"

#define NS_PER_S 1e9

void kreq_stats_init(struct kreq_stats *s)
{
    for (size_t i = 0; i < ARRAY_LEN(s->api); i++) {
        s->api[i].requests = 0;
        s->api[i].errors = 0;
        histogram_init(&s->api[i].latency, histogram_latency_ns, histogram_latency_ns_count);
    }
}

void kreq_stats_completed(struct kreq_stats *s, int16_t key, int64_t recv_ns, bool error)
{
    struct kreq_api_stats *a = kreq_stats_for(s, key);
    if (error)
        a->errors++;
    if (recv_ns > 0) {
        int64_t dt = time_mono_ns() - recv_ns;
        histogram_observe(&a->latency, dt > 0 ? (uint64_t)dt : 0);
    }
}

struct partition_gauge {
    const char *name;
    enum prom_type type;
    const char *help;
    int64_t (*get)(const struct partition *p);
};

static int64_t p_start(const struct partition *p)
{
    return plog_start_offset(p->log);
}
static int64_t p_end(const struct partition *p)
{
    return plog_end_offset(p->log);
}
static int64_t p_hw(const struct partition *p)
{
    return plog_high_watermark(p->log);
}
static int64_t p_size(const struct partition *p)
{
    return plog_size_bytes(p->log);
}
static int64_t p_segments(const struct partition *p)
{
    return plog_segment_count(p->log);
}
static int64_t p_epoch(const struct partition *p)
{
    return p->leader_epoch;
}
static int64_t p_fenced(const struct partition *p)
{
    return plog_fenced(p->log) ? 1 : 0;
}
static int64_t p_records(const struct partition *p)
{
    return (int64_t)p->records_in;
}
static int64_t p_bytes(const struct partition *p)
{
    return (int64_t)p->bytes_in;
}

static const struct partition_gauge partition_gauges[] = {
    {"streampulse_partition_log_start_offset", PROM_GAUGE,
     "First offset still in the partition's log.", p_start},
    {"streampulse_partition_log_end_offset", PROM_GAUGE,
     "Offset the next appended record gets (LEO).", p_end},
    {"streampulse_partition_high_watermark", PROM_GAUGE,
     "Offset below which records are committed and visible to consumers.", p_hw},
    {"streampulse_partition_size_bytes", PROM_GAUGE, "Bytes of all the partition's segments.",
     p_size},
    {"streampulse_partition_segments", PROM_GAUGE, "Segments of the partition's log.", p_segments},
    {"streampulse_partition_leader_epoch", PROM_GAUGE, "Leader epoch (Raft term) of the partition.",
     p_epoch},
    {"streampulse_partition_fenced", PROM_GAUGE,
     "1 when the partition refuses writes after a write or fsync error.", p_fenced},
    {"streampulse_partition_appended_records_total", PROM_COUNTER,
     "Records appended to the partition since the broker started.", p_records},
    {"streampulse_partition_appended_bytes_total", PROM_COUNTER,
     "Record batch bytes appended to the partition since the broker started.", p_bytes},
};

static void write_partitions(struct broker *b, struct strbuf *out)
{
    size_t n;
    struct topic **ts = snapshot_topics(b, &n);
    prom_family(out, "streampulse_topics", PROM_GAUGE, "Topics, internal ones included.");
    prom_sample_u64(out, "streampulse_topics", NULL, 0, n);
    prom_family(out, "streampulse_partitions", PROM_GAUGE, "Partitions of all topics.");
    prom_sample_i64(out, "streampulse_partitions", NULL, 0, b->total_partitions);
    for (size_t g = 0; g < ARRAY_LEN(partition_gauges); g++) {
        const struct partition_gauge *pg = &partition_gauges[g];
        prom_family(out, pg->name, pg->type, pg->help);
        for (size_t i = 0; i < n; i++) {
            for (int32_t k = 0; k < ts[i]->n_parts; k++) {
                const struct partition *p = ts[i]->parts[k];
                char idx[16];
                snprintf(idx, sizeof(idx), "%d", (int)p->index);
                struct prom_label l[] = {prom_label("topic", ts[i]->name),
                                         prom_label("partition", idx)};
                prom_sample_i64(out, pg->name, l, 2, pg->get(p));
            }
        }
    }
    mem_free(ts);
}

static void write_requests(struct broker *b, struct strbuf *out)
{
    int n_apis;
    const struct kafka_api_info *apis = kafka_api_all(&n_apis);
    static const char *const names[] = {"streampulse_kafka_requests_total",
                                        "streampulse_kafka_request_errors_total"};
    static const char *const helps[] = {
        "Kafka requests received, by API (unknown: keys not implemented, bad headers).",
        "Kafka requests answered with an error code, or by closing the connection."};
    for (int f = 0; f < 2; f++) {
        prom_family(out, names[f], PROM_COUNTER, helps[f]);
        for (int i = 0; i <= n_apis; i++) {
            const struct kreq_api_stats *a =
                &b->req_stats.api[i < n_apis ? apis[i].key : KREQ_STATS_UNKNOWN];
            struct prom_label l = prom_label("api", i < n_apis ? apis[i].name : "unknown");
            prom_sample_u64(out, names[f], &l, 1, f == 0 ? a->requests : a->errors);
        }
    }
    const char *lat = "streampulse_kafka_request_latency_seconds";
    prom_family(out, lat, PROM_HISTOGRAM,
                "Time from a request's frame arriving to its response being complete (waits of "
                "acks=all produces and long-polling fetches included).");
    for (int i = 0; i < n_apis; i++) {
        struct prom_label l = prom_label("api", apis[i].name);
        prom_histogram(out, lat, &l, 1, &b->req_stats.api[apis[i].key].latency, NS_PER_S);
    }
}

static void write_network(struct broker *b, struct strbuf *out)
{
    struct conn_stats cs;
    listener_get_stats(b->lis, &cs);
    prom_family(out, "streampulse_kafka_connections", PROM_GAUGE, "Open Kafka client connections.");
    prom_sample_i64(out, "streampulse_kafka_connections", NULL, 0,
                    listener_connection_count(b->lis));
    prom_family(out, "streampulse_kafka_connections_accepted_total", PROM_COUNTER,
                "Kafka client connections accepted.");
    prom_sample_u64(out, "streampulse_kafka_connections_accepted_total", NULL, 0, cs.accepted);
    prom_family(out, "streampulse_kafka_connections_refused_total", PROM_COUNTER,
                "Kafka client connections closed at once: max.connections reached.");
    prom_sample_u64(out, "streampulse_kafka_connections_refused_total", NULL, 0, cs.refused);
    prom_family(out, "streampulse_kafka_received_bytes_total", PROM_COUNTER,
                "Bytes read from Kafka client connections.");
    prom_sample_u64(out, "streampulse_kafka_received_bytes_total", NULL, 0, cs.bytes_in);
    prom_family(out, "streampulse_kafka_sent_bytes_total", PROM_COUNTER,
                "Bytes written to Kafka client connections.");
    prom_sample_u64(out, "streampulse_kafka_sent_bytes_total", NULL, 0, cs.bytes_out);
    const char *auth = "streampulse_sasl_authentications_total";
    prom_family(out, auth, PROM_COUNTER,
                "SASL exchanges on SASL_PLAINTEXT and SASL_SSL listeners, by outcome.");
    struct prom_label ok = prom_label("result", "success"), bad = prom_label("result", "failure");
    prom_sample_u64(out, auth, &ok, 1, b->sasl_successes);
    prom_sample_u64(out, auth, &bad, 1, b->sasl_failures);
    prom_family(out, "streampulse_produce_recompressed_batches_total", PROM_COUNTER,
                "Produced batches stored in their topic's compression.type instead of the "
                "producer's codec.");
    prom_sample_u64(out, "streampulse_produce_recompressed_batches_total", NULL, 0,
                    b->recompressed_batches);
    const char *rb = "streampulse_produce_recompressed_bytes_total";
    prom_family(out, rb, PROM_COUNTER,
                "Bytes of those batches as produced (side=in) and as stored (side=out).");
    struct prom_label in = prom_label("side", "in"), outl = prom_label("side", "out");
    prom_sample_u64(out, rb, &in, 1, b->recompressed_bytes_in);
    prom_sample_u64(out, rb, &outl, 1, b->recompressed_bytes_out);
    uint64_t thr[2];
    quota_counts(b, thr);
    const char *qt = "streampulse_quota_throttled_responses_total";
    prom_family(out, qt, PROM_COUNTER,
                "Responses held back because the client was over its producer_byte_rate "
                "(direction=produce) or consumer_byte_rate (direction=fetch) quota.");
    struct prom_label qp = prom_label("direction", "produce"), qf = prom_label("direction", "fetch");
    prom_sample_u64(out, qt, &qp, 1, thr[0]);
    prom_sample_u64(out, qt, &qf, 1, thr[1]);
    uint64_t allowed, denied;
    authz_counts(b, &allowed, &denied);
    const char *az = "streampulse_authorizations_total";
    prom_family(out, az, PROM_COUNTER,
                "ACL decisions of the authorizer (authorizer.class.name), by outcome.");
    struct prom_label al = prom_label("result", "allowed"), de = prom_label("result", "denied");
    prom_sample_u64(out, az, &al, 1, allowed);
    prom_sample_u64(out, az, &de, 1, denied);
}

static void write_storage(struct broker *b, struct strbuf *out)
{
    struct flusher_stats fs;
    flusher_get_stats(b->fl, &fs);
    const char *lat = "streampulse_storage_fsync_latency_seconds";
    prom_family(out, lat, PROM_HISTOGRAM,
                "Duration of each fdatasync/fsync of log files and directories (flusher thread).");
    prom_histogram(out, lat, NULL, 0, &fs.sync_latency, NS_PER_S);
    prom_family(out, "streampulse_storage_fsync_errors_total", PROM_COUNTER,
                "Failed syncs (each fences its partition).");
    prom_sample_u64(out, "streampulse_storage_fsync_errors_total", NULL, 0, fs.sync_errors);
    struct fdcache_stats cs;
    fdcache_stats(b->files, &cs);
    prom_family(out, "streampulse_storage_open_files", PROM_GAUGE,
                "Log segment and partition directory descriptors open in the open-file cache.");
    prom_sample_u64(out, "streampulse_storage_open_files", NULL, 0, cs.open);
    prom_family(out, "streampulse_storage_open_files_limit", PROM_GAUGE,
                "What the open-file cache keeps open at most (log.max.open.files).");
    prom_sample_u64(out, "streampulse_storage_open_files_limit", NULL, 0, cs.limit);
    prom_family(out, "streampulse_storage_file_reopens_total", PROM_COUNTER,
                "Log files opened again after the cache had closed them.");
    prom_sample_u64(out, "streampulse_storage_file_reopens_total", NULL, 0, cs.reopens);
    prom_family(out, "streampulse_storage_file_evictions_total", PROM_COUNTER,
                "Log files the cache closed to stay within its limit.");
    prom_sample_u64(out, "streampulse_storage_file_evictions_total", NULL, 0, cs.evictions);
    prom_family(out, "streampulse_storage_file_reopen_errors_total", PROM_COUNTER,
                "Log files that could not be opened again (each fails the read or write that "
                "needed it).");
    prom_sample_u64(out, "streampulse_storage_file_reopen_errors_total", NULL, 0, cs.errors);
}

/* ---- groups ---- */

static void write_groups(struct broker *b, struct strbuf *out)
{
    size_t n;
    struct group **gs = snapshot_groups(b, &n);
    uint64_t per_state[GROUP_DEAD + 1] = {0};
    for (size_t i = 0; i < n; i++)
        per_state[gs[i]->state]++;
    prom_family(out, "streampulse_groups", PROM_GAUGE, "Consumer groups, by state.");
    for (int s = GROUP_EMPTY; s <= GROUP_DEAD; s++) {
        struct prom_label l = prom_label("state", group_state_name((enum group_state)s));
        prom_sample_u64(out, "streampulse_groups", &l, 1, per_state[s]);
    }
    prom_family(out, "streampulse_group_members", PROM_GAUGE, "Members of each consumer group.");
    for (size_t i = 0; i < n; i++) {
        struct prom_label l = prom_label("group", gs[i]->id);
        prom_sample_i64(out, "streampulse_group_members", &l, 1, gs[i]->n_members);
    }
    static const char *const names[] = {"streampulse_group_committed_offset",
                                        "streampulse_group_lag"};
    static const char *const helps[] = {
        "Offset committed by the group for the partition (the next record it will read).",
        "Records of the partition the group has not committed yet: max(0, high watermark - "
        "committed offset)."};
    for (int f = 0; f < 2; f++) {
        prom_family(out, names[f], PROM_GAUGE, helps[f]);
        for (size_t i = 0; i < n; i++) {
            size_t no;
            const struct group_offset **os = snapshot_offsets(gs[i], &no);
            for (size_t k = 0; k < no; k++) {
                int64_t v = f == 0 ? os[k]->offset : snapshot_lag(b, os[k]);
                if (v < 0)
                    continue;
                char idx[16];
                snprintf(idx, sizeof(idx), "%d", (int)os[k]->partition);
                struct prom_label l[] = {prom_label("group", gs[i]->id),
                                         prom_label("topic", os[k]->topic),
                                         prom_label("partition", idx)};
                prom_sample_i64(out, names[f], l, 3, v);
            }
            mem_free(os);
        }
    }
    mem_free(gs);
}

void broker_metrics_write(struct broker *b, struct strbuf *out)
{
    write_requests(b, out);
    write_network(b, out);
    write_storage(b, out);
    write_partitions(b, out);
    write_groups(b, out);
    schemas_metrics_write(b, out); /* schemas.c */
    cluster_metrics_write(b, out); /* cluster_status.c */
}
