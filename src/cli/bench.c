/* streampulse bench: produce N records to a fresh topic, then consume them back.
 *
 * Produce phase: one producer tuned for throughput (linger.ms=5, batch.num.messages=10000, a
 * client queue of at most 1M records and 32 MiB, like the Java producer's buffer.memory: a
 * bigger queue only adds queueing to the latency, and measured slower too), payloads taken at
 * varying offsets of a 1 MiB pool of random alphanumerics (so compression sees realistic, not
 * constant, data; the pool is not copied: records point into it). Each record's latency runs from
 * its enqueue (rd_kafka_produce) to its delivery report, served by rd_kafka_poll() after every
 * enqueue; the phase lasts from the first enqueue to the last delivery report.
 *
 * Consume phase: a consumer without a group (queued.min.messages=1000000, so that prefetching
 * does not stall) starts every partition at the beginning on one queue and counts records until it
 * has N; it fails if no record arrives for --timeout. Its throughput is timed from the first record
 * to the last; first_ms is the time from starting the partitions to the first record (connection,
 * offset lookup, first fetch).
 *
 * Output: one line per phase on stdout, key=value, stable for scripts:
 *   bench phase=produce topic=T partitions=P acks=A compression=C size=S records=N errors=E
 *         secs=F records_per_s=F mb_per_s=F p50_ms=F p99_ms=F p999_ms=F max_ms=F
 *   bench phase=consume topic=T partitions=P acks=A compression=C size=S records=N errors=E
 *         secs=F records_per_s=F mb_per_s=F first_ms=F
 * mb_per_s counts record values only, in MiB/s (2^20 bytes), as Kafka's perf tools do.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/check.h"
#include "base/mem.h"
#include "base/time.h"
#include "cli/common.h"

#define POOL_BYTES (1u << 20)     /* random payload pool */
#define POOL_STRIDE 4099u         /* offset step between consecutive records (prime) */
#define SIZE_MAX_BYTES (16 << 20) /* largest --size */
#define CONSUME_BATCH 1000        /* messages per rd_kafka_consume_batch_queue() */
#define BENCH_CONFIGS_MAX 16      /* --topic-config options */

struct bench_opts {
    const char *topic;       /* --topic, NULL: a generated fresh name */
    int partitions;          /* --partitions */
    int replication;         /* --replication-factor, -1: broker default */
    const char *acks;        /* --acks: "1" or "all" */
    const char *compression; /* --compression */
    size_t size;             /* --size: value bytes per record */
    int64_t records;         /* --records */
    int64_t rate;            /* --rate: records per second, 0 = as fast as possible */
    bool keep;               /* --keep-topic */
    const char *configs[BENCH_CONFIGS_MAX]; /* --topic-config KEY=VALUE (argv's) */
    int n_configs;
};

/* Produce-phase bookkeeping, touched only from this thread (delivery reports come through
 * rd_kafka_poll). */
struct produce_run {
    int64_t *enqueued_ns;          /* per record index: enqueue time, owned */
    int64_t *latency_ns;           /* latencies of delivered records, in arrival order, owned */
    int64_t delivered;             /* entries used in latency_ns */
    int64_t failed;                /* delivery reports with an error */
    int64_t last_report_ns;        /* time of the latest delivery report */
    rd_kafka_resp_err_t first_err; /* first delivery error, for the message */
};

static const char bench_help[] =
    "Usage: streampulse bench [OPTIONS]\n"
    "\n"
    "Produces --records records of --size bytes to a fresh topic, measuring throughput and\n"
    "per-record latency (enqueue to delivery report), then consumes them back from the\n"
    "beginning and measures throughput. Prints one key=value line per phase:\n"
    "  bench phase=produce topic=T partitions=P acks=A compression=C size=S records=N\n"
    "        errors=E secs=F records_per_s=F mb_per_s=F p50_ms=F p99_ms=F p999_ms=F max_ms=F\n"
    "  bench phase=consume topic=T partitions=P acks=A compression=C size=S records=N\n"
    "        errors=E secs=F records_per_s=F mb_per_s=F first_ms=F\n"
    "mb_per_s counts record values only, in MiB/s. Produce latency runs from enqueue to\n"
    "delivery report; consume secs from the first record to the last, first_ms from\n"
    "starting the consumer to the first record. The producer uses linger.ms=5,\n"
    "batch.num.messages=10000, queue.buffering.max.messages=1000000 and\n"
    "queue.buffering.max.kbytes=32768; -X applies to both producer and consumer and\n"
    "overrides these. Latencies are measured at full load, so they include queueing,\n"
    "unless --rate paces the producer below what the cluster can take.\n"
    "\n"
    "Options:\n"
    "  -t, --topic NAME               topic to create (default: streampulse-bench-PID-TIME);\n"
    "                                 it must not exist yet\n"
    "  -p, --partitions N             partitions of the topic (default 1)\n"
    "  -r, --replication-factor R     replicas (default: the broker's default)\n"
    "  -a, --acks 1|all               producer acks (default all)\n"
    "  -z, --compression CODEC        none|gzip|snappy|lz4|zstd (default none)\n"
    "  -s, --size BYTES               value size (default 100)\n"
    "  -n, --records N                records to produce (default 1000000)\n"
    "      --rate N                   enqueue at most N records per second (default 0:\n"
    "                                 unpaced)\n"
    "      --keep-topic               do not delete the topic afterwards\n"
    "      --topic-config KEY=VALUE   a config of the topic created (repeatable), e.g.\n"
    "                                 compression.type=zstd\n"
    "\n" CLI_COMMON_HELP;

enum {
    OPT_KEEP = CLI_OPT_CMD,
    OPT_RATE,
    OPT_TOPIC_CONFIG,
};

static const struct option bench_longopts[] = {
    {"topic", required_argument, NULL, 't'},
    {"partitions", required_argument, NULL, 'p'},
    {"replication-factor", required_argument, NULL, 'r'},
    {"acks", required_argument, NULL, 'a'},
    {"compression", required_argument, NULL, 'z'},
    {"size", required_argument, NULL, 's'},
    {"records", required_argument, NULL, 'n'},
    {"keep-topic", no_argument, NULL, OPT_KEEP},
    {"rate", required_argument, NULL, OPT_RATE},
    {"topic-config", required_argument, NULL, OPT_TOPIC_CONFIG},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

static int parse_args(struct cli_common *c, struct bench_opts *o, int argc, char **argv)
{
    static const char *const codecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    long long n;
    int opt;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, "t:p:r:a:z:s:n:" CLI_COMMON_SHORTOPTS, bench_longopts,
                              NULL)) != -1) {
        int rc = cli_common_opt(c, opt, optarg);
        if (rc < 0)
            return -1;
        if (rc > 0)
            continue;
        switch (opt) {
        case 't':
            o->topic = optarg;
            break;
        case 'p':
            if (cli_parse_int(c, "--partitions", optarg, 1, 100000, &n) != 0)
                return -1;
            o->partitions = (int)n;
            break;
        case 'r':
            if (cli_parse_int(c, "--replication-factor", optarg, 1, INT16_MAX, &n) != 0)
                return -1;
            o->replication = (int)n;
            break;
        case 'a':
            if (strcmp(optarg, "1") && strcmp(optarg, "all") && strcmp(optarg, "-1")) {
                cli_error(c, "--acks must be 1 or all, got '%s'", optarg);
                return -1;
            }
            o->acks = strcmp(optarg, "1") == 0 ? "1" : "all";
            break;
        case 'z': {
            bool ok = false;
            for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
                ok = ok || strcmp(optarg, codecs[i]) == 0;
            if (!ok) {
                cli_error(c, "--compression must be none, gzip, snappy, lz4 or zstd, got '%s'",
                          optarg);
                return -1;
            }
            o->compression = optarg;
            break;
        }
        case 's':
            if (cli_parse_int(c, "--size", optarg, 0, SIZE_MAX_BYTES, &n) != 0)
                return -1;
            o->size = (size_t)n;
            break;
        case 'n':
            if (cli_parse_int(c, "--records", optarg, 1, INT32_MAX, &n) != 0)
                return -1;
            o->records = n;
            break;
        case OPT_KEEP:
            o->keep = true;
            break;
        case OPT_RATE:
            if (cli_parse_int(c, "--rate", optarg, 0, INT32_MAX, &n) != 0)
                return -1;
            o->rate = n;
            break;
        case OPT_TOPIC_CONFIG:
            if (!strchr(optarg, '=') || optarg[0] == '=') {
                cli_error(c, "--topic-config: expected KEY=VALUE, got '%s'", optarg);
                return -1;
            }
            if (o->n_configs == BENCH_CONFIGS_MAX) {
                cli_error(c, "--topic-config: at most %d", BENCH_CONFIGS_MAX);
                return -1;
            }
            o->configs[o->n_configs++] = optarg;
            break;
        default:
            return -1;
        }
    }
    if (!c->help && optind < argc) {
        cli_error(c, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    return 0;
}

/* --- topic setup and teardown -------------------------------------------------------------- */

static rd_kafka_event_t *admin_call_wait(const struct cli_common *c, rd_kafka_queue_t *q)
{
    return rd_kafka_queue_poll(q, c->timeout_ms + 5000);
}

/* Creates the topic. Returns 0 if created, 1 if creation is not possible but the broker may
 * auto-create it (warning printed), -1 on a hard failure (printed). */
static int create_topic(const struct cli_common *c, const struct bench_opts *o, rd_kafka_t *rk)
{
    char err[512];
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t mderr = rd_kafka_metadata(rk, 1, NULL, &md, c->timeout_ms);
    if (mderr) {
        cli_report_cluster_error(c, "metadata request", mderr);
        return -1;
    }
    bool exists = false;
    for (int i = 0; i < md->topic_cnt; i++)
        exists = exists || strcmp(md->topics[i].topic, o->topic) == 0;
    rd_kafka_metadata_destroy(md);
    if (exists) {
        cli_error(c, "topic '%s' already exists; bench needs a fresh topic", o->topic);
        return -1;
    }
    rd_kafka_NewTopic_t *nt =
        rd_kafka_NewTopic_new(o->topic, o->partitions, o->replication, err, sizeof(err));
    if (!nt) {
        cli_error(c, "topic '%s': %s", o->topic, err);
        return -1;
    }
    for (int i = 0; i < o->n_configs; i++) {
        char kv[512];
        snprintf(kv, sizeof(kv), "%s", o->configs[i]);
        char *eq = strchr(kv, '=');
        if (eq)
            *eq = '\0';
        if (!eq || rd_kafka_NewTopic_set_config(nt, kv, eq + 1) != RD_KAFKA_RESP_ERR_NO_ERROR) {
            cli_error(c, "--topic-config %s: refused by librdkafka", o->configs[i]);
            rd_kafka_NewTopic_destroy(nt);
            return -1;
        }
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(ao, c->timeout_ms, err, sizeof(err));
    rd_kafka_AdminOptions_set_operation_timeout(ao, c->timeout_ms, err, sizeof(err));
    rd_kafka_CreateTopics(rk, &nt, 1, ao, q);
    rd_kafka_event_t *ev = admin_call_wait(c, q);
    int rc = -1;
    rd_kafka_resp_err_t e = RD_KAFKA_RESP_ERR__TIMED_OUT;
    const char *why = "no answer";
    if (ev) {
        e = rd_kafka_event_error(ev);
        why = rd_kafka_event_error_string(ev);
        if (!e) {
            size_t n;
            const rd_kafka_topic_result_t **res =
                rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
            e = n == 1 ? rd_kafka_topic_result_error(res[0]) : RD_KAFKA_RESP_ERR__FAIL;
            why = n == 1 ? rd_kafka_topic_result_error_string(res[0]) : "no topic result";
        }
    }
    if (!e) {
        rc = 0;
    } else if (e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
        cli_error(c, "topic '%s' already exists; bench needs a fresh topic", o->topic);
    } else {
        /* The cluster answered the metadata request above, so it is reachable: go on. */
        fprintf(stderr,
                "streampulse bench: warning: cannot create topic '%s' (%s); relying on the "
                "broker to auto-create it, so --partitions may not apply\n",
                o->topic, why && why[0] ? why : rd_kafka_err2str(e));
        rc = 1;
    }
    if (ev)
        rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    return rc;
}

static void delete_topic(const struct cli_common *c, const char *topic, rd_kafka_t *rk)
{
    char err[256];
    rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(topic);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_DELETETOPICS);
    /* After an interrupt the broker may be gone too: do not keep the user waiting. */
    int timeout_ms = cli_interrupted && c->timeout_ms > 2000 ? 2000 : c->timeout_ms;
    rd_kafka_AdminOptions_set_request_timeout(ao, timeout_ms, err, sizeof(err));
    rd_kafka_DeleteTopics(rk, &dt, 1, ao, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, timeout_ms + 1000);
    rd_kafka_resp_err_t e = ev ? rd_kafka_event_error(ev) : RD_KAFKA_RESP_ERR__TIMED_OUT;
    if (ev && !e) {
        size_t n;
        const rd_kafka_topic_result_t **res =
            rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n);
        e = n == 1 ? rd_kafka_topic_result_error(res[0]) : RD_KAFKA_RESP_ERR__FAIL;
    }
    if (e)
        fprintf(stderr, "streampulse bench: warning: cannot delete topic '%s': %s\n", topic,
                rd_kafka_err2str(e));
    if (ev)
        rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_queue_destroy(q);
    rd_kafka_DeleteTopic_destroy(dt);
}

/* Waits (up to the command timeout) until every partition of the topic has a leader, so the
 * produce phase does not time a fresh topic's election (a cluster elects its replicas' leaders
 * after CreateTopics answers). Returns 0, or -1 after a warning (the phase then goes on). */
static int wait_leaders(const struct cli_common *c, rd_kafka_t *rk, const char *topic)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    if (!rkt)
        return -1;
    int64_t deadline = time_mono_ns() + (int64_t)c->timeout_ms * 1000000;
    int rc = -1;
    while (rc != 0 && time_mono_ns() < deadline && !cli_interrupted) {
        const struct rd_kafka_metadata *md = NULL;
        if (rd_kafka_metadata(rk, 0, rkt, &md, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            bool ready =
                md->topic_cnt == 1 && !md->topics[0].err && md->topics[0].partition_cnt > 0;
            for (int i = 0; ready && i < md->topics[0].partition_cnt; i++)
                ready = !md->topics[0].partitions[i].err && md->topics[0].partitions[i].leader >= 0;
            rc = ready ? 0 : -1;
            rd_kafka_metadata_destroy(md);
        }
        if (rc != 0)
            usleep(50 * 1000);
    }
    rd_kafka_topic_destroy(rkt);
    if (rc != 0)
        fprintf(stderr, "streampulse bench: warning: topic '%s' has partitions without a leader\n",
                topic);
    return rc;
}

/* --- produce phase ------------------------------------------------------------------------- */

static void dr_msg_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    struct produce_run *r = opaque;
    int64_t now = time_mono_ns();
    r->last_report_ns = now;
    if (m->err) {
        if (r->failed++ == 0)
            r->first_err = m->err;
        return;
    }
    size_t idx = (size_t)(uintptr_t)m->_private;
    r->latency_ns[r->delivered++] = now - r->enqueued_ns[idx];
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of sorted v[0..n), in ms. */
static double pct_ms(const int64_t *v, int64_t n, double pct)
{
    if (n == 0)
        return 0;
    int64_t rank = (int64_t)(pct / 100.0 * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return (double)v[rank - 1] / 1e6;
}

static char *make_pool(size_t size)
{
    static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    size_t len = POOL_BYTES + size;
    char *pool = mem_alloc(len);
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13; /* xorshift64 */
        x ^= x >> 7;
        x ^= x << 17;
        pool[i] = alnum[x % (sizeof(alnum) - 1)];
    }
    return pool;
}

static rd_kafka_t *producer_new(struct cli_common *c, const struct bench_opts *o,
                                struct produce_run *r)
{
    rd_kafka_conf_t *conf = cli_conf_new(c);
    if (cli_conf_set(c, conf, "acks", o->acks) ||
        cli_conf_set(c, conf, "compression.codec", o->compression) ||
        cli_conf_set(c, conf, "linger.ms", "5") ||
        cli_conf_set(c, conf, "batch.num.messages", "10000") ||
        cli_conf_set(c, conf, "queue.buffering.max.messages", "1000000") ||
        cli_conf_set(c, conf, "queue.buffering.max.kbytes", "32768") ||
        cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, dr_msg_cb);
    rd_kafka_conf_set_opaque(conf, r);
    return cli_client_new(c, RD_KAFKA_PRODUCER, conf);
}

static int produce_phase(struct cli_common *c, const struct bench_opts *o, rd_kafka_t *rk,
                         struct produce_run *r, const char *pool, int partitions)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    if (!rkt) {
        cli_error(c, "topic '%s': %s", o->topic, rd_kafka_err2str(rd_kafka_last_error()));
        return -1;
    }
    int64_t start = time_mono_ns();
    int64_t i = 0;
    for (; i < o->records && !cli_interrupted; i++) {
        const char *payload = pool + ((uint64_t)i * POOL_STRIDE) % POOL_BYTES;
        if (o->rate > 0) { /* record i is due i/rate seconds after the start */
            int64_t due = start + (int64_t)((double)i * 1e9 / (double)o->rate);
            int64_t now;
            while ((now = time_mono_ns()) < due && !cli_interrupted)
                rd_kafka_poll(rk, (int)MIN((due - now) / 1000000, 10));
        }
        r->enqueued_ns[i] = time_mono_ns();
        while (rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, 0, (void *)payload, o->size, NULL, 0,
                                (void *)(uintptr_t)i) == -1) {
            rd_kafka_resp_err_t err = rd_kafka_last_error();
            if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
                cli_error(c, "produce: %s", rd_kafka_err2str(err));
                goto out_flush;
            }
            rd_kafka_poll(rk, 1);
        }
        rd_kafka_poll(rk, 0);
    }
out_flush:
    while (r->delivered + r->failed < i) {
        rd_kafka_flush(rk, 100);
        if (cli_interrupted) {
            rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
            rd_kafka_flush(rk, 1000);
            break;
        }
    }
    rd_kafka_topic_destroy(rkt);
    if (r->failed > 0)
        cli_error(c, "%" PRId64 " of %" PRId64 " records failed, the first with: %s", r->failed, i,
                  rd_kafka_err2str(r->first_err));
    if (cli_interrupted || i < o->records)
        return -1;

    double secs =
        cli_secs((r->last_report_ns > start ? r->last_report_ns : time_mono_ns()) - start);
    qsort(r->latency_ns, (size_t)r->delivered, sizeof(int64_t), cmp_i64);
    printf("bench phase=produce topic=%s partitions=%d acks=%s compression=%s size=%zu "
           "records=%" PRId64 " errors=%" PRId64 " secs=%.3f records_per_s=%.0f mb_per_s=%.2f "
           "p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f\n",
           o->topic, partitions, o->acks, o->compression, o->size, r->delivered, r->failed, secs,
           (double)r->delivered / secs, (double)r->delivered * (double)o->size / 1048576.0 / secs,
           pct_ms(r->latency_ns, r->delivered, 50), pct_ms(r->latency_ns, r->delivered, 99),
           pct_ms(r->latency_ns, r->delivered, 99.9), pct_ms(r->latency_ns, r->delivered, 100));
    fflush(stdout);
    return r->failed > 0 ? -1 : 0;
}

/* --- consume phase ------------------------------------------------------------------------- */

static int consume_phase(struct cli_common *c, const struct bench_opts *o, int partitions,
                         int64_t expect)
{
    /* -X goes to both clients; the consumer need not warn about producer-only properties. */
    cli_log_hide_role_warnings(true);
    rd_kafka_conf_t *conf = cli_conf_new(c);
    if (cli_conf_set(c, conf, "enable.partition.eof", "false") ||
        cli_conf_set(c, conf, "enable.auto.offset.store", "false") ||
        cli_conf_set(c, conf, "queued.min.messages", "1000000") || /* see consume.c */
        cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    rd_kafka_t *rk = cli_client_new(c, RD_KAFKA_CONSUMER, conf);
    if (!rk)
        return -1;
    /* Learn the partition leaders first, so that first_ms does not include metadata. */
    int known;
    if (cli_topic_partition_count(c, rk, o->topic, &known) != 0) {
        rd_kafka_destroy(rk);
        return -1;
    }
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    int rc = -1;
    int64_t start = time_mono_ns();
    int started = 0;
    for (; started < partitions; started++) {
        if (rd_kafka_consume_start_queue(rkt, started, RD_KAFKA_OFFSET_BEGINNING, q) == -1) {
            cli_error(c, "cannot start reading partition %d: %s", started,
                      rd_kafka_err2str(rd_kafka_last_error()));
            goto out_stop;
        }
    }
    int64_t got = 0, bytes = 0, errors = 0;
    int64_t last_progress = start;
    int64_t first_ns = 0; /* arrival of the first record */
    rd_kafka_message_t *batch[CONSUME_BATCH];
    while (got < expect && !cli_interrupted) {
        ssize_t n = rd_kafka_consume_batch_queue(q, 100, batch, CONSUME_BATCH);
        for (ssize_t i = 0; i < n; i++) {
            if (batch[i]->err) {
                if (errors++ == 0)
                    cli_error(c, "consume: %s", rd_kafka_message_errstr(batch[i]));
            } else {
                if (got == 0)
                    first_ns = time_mono_ns();
                got++;
                bytes += (int64_t)batch[i]->len;
            }
            rd_kafka_message_destroy(batch[i]);
        }
        int64_t now = time_mono_ns();
        if (n > 0)
            last_progress = now;
        else if (now - last_progress > (int64_t)c->timeout_ms * 1000000) {
            cli_error(c,
                      "consumed only %" PRId64 " of %" PRId64 " records: nothing arrived for "
                      "%.1f s",
                      got, expect, c->timeout_ms / 1000.0);
            goto out_stop;
        }
        rd_kafka_poll(rk, 0);
    }
    if (got < expect)
        goto out_stop; /* interrupted */
    int64_t end = time_mono_ns();
    /* Throughput from the first record to the last; the start-up (connect, offset lookup, the
     * first fetch) is reported on its own as first_ms. */
    double secs = cli_secs(end - first_ns);
    if (secs <= 0)
        secs = 1e-9;
    printf("bench phase=consume topic=%s partitions=%d acks=%s compression=%s size=%zu "
           "records=%" PRId64 " errors=%" PRId64 " secs=%.3f records_per_s=%.0f mb_per_s=%.2f "
           "first_ms=%.3f\n",
           o->topic, partitions, o->acks, o->compression, o->size, got, errors, secs,
           (double)got / secs, (double)bytes / 1048576.0 / secs, (double)(first_ns - start) / 1e6);
    fflush(stdout);
    if (bytes != expect * (int64_t)o->size)
        cli_error(c, "consumed %" PRId64 " value bytes, expected %" PRId64, bytes,
                  expect * (int64_t)o->size);
    else
        rc = 0;
out_stop:
    for (int p = 0; p < started; p++)
        rd_kafka_consume_stop(rkt, p);
    rd_kafka_queue_destroy(q);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return rc;
}

/* --- run ----------------------------------------------------------------------------------- */

static int bench_run(struct cli_common *c, struct bench_opts *o)
{
    struct produce_run r = {0};
    rd_kafka_t *rk = producer_new(c, o, &r);
    if (!rk)
        return CLI_EXIT_FAIL;
    int rc = CLI_EXIT_FAIL;
    char *pool = NULL;
    int created = create_topic(c, o, rk);
    if (created < 0)
        goto out_destroy;
    int partitions;
    if (cli_topic_partition_count(c, rk, o->topic, &partitions) != 0)
        goto out_delete;
    if (created == 0 && partitions != o->partitions)
        fprintf(stderr, "streampulse bench: warning: topic has %d partitions, asked for %d\n",
                partitions, o->partitions);
    (void)wait_leaders(c, rk, o->topic);
    pool = make_pool(o->size);
    r.enqueued_ns = mem_alloc((size_t)o->records * sizeof(int64_t));
    r.latency_ns = mem_alloc((size_t)o->records * sizeof(int64_t));
    if (produce_phase(c, o, rk, &r, pool, partitions) != 0)
        goto out_delete;
    if (consume_phase(c, o, partitions, r.delivered) != 0)
        goto out_delete;
    rc = CLI_EXIT_OK;
out_delete:
    if (!o->keep)
        delete_topic(c, o->topic, rk);
out_destroy:
    rd_kafka_destroy(rk);
    mem_free(r.enqueued_ns);
    mem_free(r.latency_ns);
    mem_free(pool);
    if (rc != CLI_EXIT_OK && cli_interrupted)
        rc = CLI_EXIT_INTERRUPTED;
    return rc;
}

int cli_bench(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c, "bench");
    struct bench_opts o = {
        .partitions = 1,
        .replication = -1,
        .acks = "all",
        .compression = "none",
        .size = 100,
        .records = 1000000,
    };
    char topic[96];
    int rc;
    if (parse_args(&c, &o, argc, argv) != 0) {
        fprintf(stderr, "Run 'streampulse bench --help' for usage.\n");
        rc = CLI_EXIT_USAGE;
    } else if (c.help) {
        fputs(bench_help, stdout);
        rc = CLI_EXIT_OK;
    } else {
        if (!o.topic) {
            snprintf(topic, sizeof(topic), "streampulse-bench-%d-%lld", (int)getpid(),
                     (long long)(time_wall_ms() / 1000));
            o.topic = topic;
        }
        rc = bench_run(&c, &o);
    }
    cli_common_free(&c);
    return rc;
}
