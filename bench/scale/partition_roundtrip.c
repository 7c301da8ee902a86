/* partition_roundtrip: many partitions on one broker, through librdkafka (bench/scale/run).
 *
 *   build/bench/scale/partition_roundtrip BROKERS create  PREFIX TOPICS PARTS
 *   build/bench/scale/partition_roundtrip BROKERS leaders PREFIX TOPICS PARTS [TIMEOUT_S]
 *   build/bench/scale/partition_roundtrip BROKERS produce PREFIX TOPICS PARTS [RECORDS]
 *   build/bench/scale/partition_roundtrip BROKERS consume PREFIX TOPICS PARTS [RECORDS]
 *
 * The topics are PREFIX-0000 .. PREFIX-(TOPICS-1), PARTS partitions each.
 *   create:  CreateTopics, one topic per request in turn (replication factor 1; a request the
 *            controller timed out is sent again), then Metadata until every partition has a
 *            leader; prints `create ms=F partitions=N per_s=F` over the whole.
 *   leaders: Metadata until every partition of every topic has a leader (bounded by TIMEOUT_S,
 *            default 120); prints `leaders ms=F partitions=N`.
 *   produce: RECORDS records (default: one per partition) of 100 bytes spread round robin over
 *            all partitions, acks=all, linger.ms=5; times the first produce call to the last
 *            delivery report; prints `produce ms=F records=N per_s=F`; exit 1 if any delivery
 *            failed.
 *   consume: assigns every partition from the beginning and reads until RECORDS records
 *            (default one per partition) arrived, checking each partition got exactly
 *            RECORDS/partitions of the records produce wrote (the payload names the partition);
 *            prints `consume ms=F records=N`; exit 1 on a mismatch or after 120 s.
 * Errors go to stderr; exit 1 on any failure, 2 on bad usage. */
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RECORD_BYTES 100
#define WAIT_MAX_S 120

struct run {
    const char *brokers;
    const char *prefix;
    int topics;
    int parts;
    long records;
    int timeout_s;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void topic_name(const struct run *r, int i, char *out, size_t cap)
{
    snprintf(out, cap, "%s-%04d", r->prefix, i);
}

static rd_kafka_t *client(const struct run *r, rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
    char err[512];
    if (rd_kafka_conf_set(conf, "bootstrap.servers", r->brokers, err, sizeof(err)) != 0) {
        fprintf(stderr, "partition_roundtrip: %s\n", err);
        exit(1);
    }
    rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof(err));
    if (!rk) {
        fprintf(stderr, "partition_roundtrip: rd_kafka_new: %s\n", err);
        exit(1);
    }
    return rk;
}

static void conf_set(rd_kafka_conf_t *conf, const char *k, const char *v)
{
    char err[512];
    if (rd_kafka_conf_set(conf, k, v, err, sizeof(err)) != 0) {
        fprintf(stderr, "partition_roundtrip: %s=%s: %s\n", k, v, err);
        exit(1);
    }
}

/* One CreateTopics request for topic i; an existing topic counts as created. Returns 0, 1 for
 * a retriable refusal (the controller timed out: the creation goes on), -1 otherwise. */
static int create_once(rd_kafka_t *rk, rd_kafka_queue_t *q, const struct run *r, int i)
{
    char name[256], err[512];
    topic_name(r, i, name, sizeof(name));
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(name, r->parts, 1, err, sizeof(err));
    if (!nt) {
        fprintf(stderr, "partition_roundtrip: %s: %s\n", name, err);
        return -1;
    }
    rd_kafka_AdminOptions_t *opt = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(opt, WAIT_MAX_S * 1000, err, sizeof(err));
    rd_kafka_AdminOptions_set_operation_timeout(opt, WAIT_MAX_S * 1000, err, sizeof(err));
    rd_kafka_CreateTopics(rk, &nt, 1, opt, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, (WAIT_MAX_S + 10) * 1000);
    int rc = -1;
    if (!ev) {
        fprintf(stderr, "partition_roundtrip: %s: no CreateTopics answer in %d s\n", name,
                WAIT_MAX_S + 10);
    } else if (rd_kafka_event_error(ev)) {
        fprintf(stderr, "partition_roundtrip: %s: %s\n", name, rd_kafka_event_error_string(ev));
    } else {
        size_t n;
        const rd_kafka_topic_result_t **res =
            rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
        rd_kafka_resp_err_t e =
            n == 1 ? rd_kafka_topic_result_error(res[0]) : RD_KAFKA_RESP_ERR__FAIL;
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR || e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
            rc = 0;
        else if (e == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT || e == RD_KAFKA_RESP_ERR_NOT_CONTROLLER)
            rc = 1;
        else
            fprintf(stderr, "partition_roundtrip: %s: %s\n", name,
                    n == 1 && rd_kafka_topic_result_error_string(res[0])
                        ? rd_kafka_topic_result_error_string(res[0])
                        : rd_kafka_err2str(e));
    }
    if (ev)
        rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(opt);
    rd_kafka_NewTopic_destroy(nt);
    return rc;
}

static int create_one(rd_kafka_t *rk, rd_kafka_queue_t *q, const struct run *r, int i)
{
    double deadline = now_ms() + WAIT_MAX_S * 1e3;
    int rc;
    struct timespec pause = {0, 50 * 1000000};
    while ((rc = create_once(rk, q, r, i)) == 1 && now_ms() < deadline)
        nanosleep(&pause, NULL); /* ask again: it finds the topic once created */
    return rc;
}

static int wait_leaders(rd_kafka_t *rk, const struct run *r);

static int do_create(const struct run *r)
{
    rd_kafka_t *rk = client(r, RD_KAFKA_PRODUCER, rd_kafka_conf_new());
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    double t0 = now_ms();
    int rc = 0;
    for (int i = 0; i < r->topics && rc == 0; i++)
        rc = create_one(rk, q, r, i);
    if (rc == 0)
        rc = wait_leaders(rk, r);
    double ms = now_ms() - t0;
    if (rc == 0) {
        long n = (long)r->topics * r->parts;
        printf("create ms=%.1f partitions=%ld per_s=%.1f\n", ms, n, (double)n * 1e3 / ms);
    }
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
    return rc == 0 ? 0 : 1;
}

/* Partitions of our topics that have a leader, per one Metadata request for all topics. */
static long led_partitions(rd_kafka_t *rk, const struct run *r)
{
    const struct rd_kafka_metadata *md;
    if (rd_kafka_metadata(rk, 1, NULL, &md, 30000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return -1;
    long led = 0;
    size_t plen = strlen(r->prefix);
    for (int t = 0; t < md->topic_cnt; t++) {
        const rd_kafka_metadata_topic_t *mt = &md->topics[t];
        if (mt->err || strncmp(mt->topic, r->prefix, plen) != 0 || mt->topic[plen] != '-')
            continue;
        for (int p = 0; p < mt->partition_cnt; p++)
            led += mt->partitions[p].leader >= 0 && mt->partitions[p].err == 0;
    }
    rd_kafka_metadata_destroy(md);
    return led;
}

/* Until every partition has a leader (at most r->timeout_s). */
static int wait_leaders(rd_kafka_t *rk, const struct run *r)
{
    long want = (long)r->topics * r->parts, led = -1;
    double t0 = now_ms(), deadline = t0 + r->timeout_s * 1e3;
    /* 100 ms between asks: a Metadata of 50,000 partitions every 20 ms took a fifth of the
     * broker's reactor while it was electing, so the poll slowed what it measured */
    struct timespec pause = {0, 100 * 1000000};
    while ((led = led_partitions(rk, r)) != want && now_ms() < deadline)
        nanosleep(&pause, NULL); /* re-ask: leaders appear as the broker elects them */
    if (led != want) {
        fprintf(stderr, "partition_roundtrip: %ld of %ld partitions have a leader after %d s\n",
                led, want, r->timeout_s);
        return 1;
    }
    return 0;
}

static int do_leaders(const struct run *r)
{
    rd_kafka_t *rk = client(r, RD_KAFKA_PRODUCER, rd_kafka_conf_new());
    double t0 = now_ms();
    int rc = wait_leaders(rk, r);
    double ms = now_ms() - t0;
    rd_kafka_destroy(rk);
    if (rc == 0)
        printf("leaders ms=%.1f partitions=%ld\n", ms, (long)r->topics * r->parts);
    return rc;
}

struct produce_state {
    long delivered;
    long failed;
    double last_ms;
};

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    struct produce_state *st = opaque;
    if (m->err) {
        if (st->failed++ < 5)
            fprintf(stderr, "partition_roundtrip: delivery to %s [%d]: %s\n",
                    rd_kafka_topic_name(m->rkt), m->partition, rd_kafka_err2str(m->err));
    } else {
        st->delivered++;
    }
    st->last_ms = now_ms();
}

static int do_produce(const struct run *r)
{
    struct produce_state st = {0};
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    conf_set(conf, "acks", "all");
    conf_set(conf, "linger.ms", "5");
    conf_set(conf, "queue.buffering.max.messages", "1000000");
    conf_set(conf, "message.timeout.ms", "120000");
    rd_kafka_conf_set_opaque(conf, &st);
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_t *rk = client(r, RD_KAFKA_PRODUCER, conf);
    rd_kafka_topic_t **rkt = calloc((size_t)r->topics, sizeof(*rkt));
    for (int t = 0; t < r->topics; t++) {
        char name[256];
        topic_name(r, t, name, sizeof(name));
        rkt[t] = rd_kafka_topic_new(rk, name, NULL);
    }
    /* the metadata first, so the timing is the produce path and not the client's discovery */
    if (led_partitions(rk, r) != (long)r->topics * r->parts) {
        fprintf(stderr, "partition_roundtrip: not every partition has a leader\n");
        return 1;
    }
    long total = (long)r->topics * r->parts;
    double t0 = now_ms();
    char payload[RECORD_BYTES];
    for (long i = 0; i < r->records; i++) {
        long slot = i % total;
        int t = (int)(slot / r->parts), p = (int)(slot % r->parts);
        memset(payload, 'x', sizeof(payload));
        int n = snprintf(payload, sizeof(payload), "%d/%d/%ld", t, p, i);
        payload[n] = 'x';
        while (rd_kafka_produce(rkt[t], p, RD_KAFKA_MSG_F_COPY, payload, sizeof(payload), NULL, 0,
                                NULL) != 0)
            rd_kafka_poll(rk, 10); /* queue full: let deliveries drain it */
        rd_kafka_poll(rk, 0);
    }
    while (st.delivered + st.failed < r->records && now_ms() - t0 < WAIT_MAX_S * 1e3)
        rd_kafka_poll(rk, 10);
    double ms = st.last_ms - t0;
    for (int t = 0; t < r->topics; t++)
        rd_kafka_topic_destroy(rkt[t]);
    free(rkt);
    rd_kafka_flush(rk, 1000);
    rd_kafka_destroy(rk);
    if (st.delivered != r->records) {
        fprintf(stderr, "partition_roundtrip: %ld of %ld records delivered (%ld failed)\n",
                st.delivered, r->records, st.failed);
        return 1;
    }
    printf("produce ms=%.1f records=%ld per_s=%.1f\n", ms, r->records, r->records * 1e3 / ms);
    return 0;
}

static int do_consume(const struct run *r)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    conf_set(conf, "group.id", "partition-roundtrip");
    conf_set(conf, "enable.auto.commit", "false");
    conf_set(conf, "enable.partition.eof", "false");
    rd_kafka_t *rk = client(r, RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(rk);
    long total = (long)r->topics * r->parts;
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new((int)total);
    for (int t = 0; t < r->topics; t++) {
        char name[256];
        topic_name(r, t, name, sizeof(name));
        for (int p = 0; p < r->parts; p++)
            rd_kafka_topic_partition_list_add(tp, name, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    double t0 = now_ms();
    if (rd_kafka_assign(rk, tp) != 0) {
        fprintf(stderr, "partition_roundtrip: assign failed\n");
        return 1;
    }
    rd_kafka_topic_partition_list_destroy(tp);
    long *seen = calloc((size_t)total, sizeof(*seen));
    long got = 0, bad = 0;
    while (got < r->records && now_ms() - t0 < WAIT_MAX_S * 1e3) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (!m)
            continue;
        if (m->err) {
            fprintf(stderr, "partition_roundtrip: consume: %s\n", rd_kafka_message_errstr(m));
        } else {
            int t = -1, p = -1;
            char buf[RECORD_BYTES + 1];
            size_t len = m->len < RECORD_BYTES ? m->len : RECORD_BYTES;
            memcpy(buf, m->payload, len);
            buf[len] = 0;
            if (sscanf(buf, "%d/%d/", &t, &p) != 2 || p != m->partition || t < 0 ||
                t >= r->topics || p >= r->parts) {
                if (bad++ < 5)
                    fprintf(stderr, "partition_roundtrip: unexpected record in %s [%d]\n",
                            rd_kafka_topic_name(m->rkt), m->partition);
            } else {
                seen[(long)t * r->parts + p]++;
            }
            got++;
        }
        rd_kafka_message_destroy(m);
    }
    double ms = now_ms() - t0;
    long per = r->records / total, wrong = 0;
    for (long i = 0; i < total; i++)
        wrong += seen[i] != per + (i < r->records % total);
    free(seen);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    if (got != r->records || bad || wrong) {
        fprintf(stderr,
                "partition_roundtrip: consumed %ld of %ld records, %ld unexpected, %ld partitions "
                "with the wrong count\n",
                got, r->records, bad, wrong);
        return 1;
    }
    printf("consume ms=%.1f records=%ld\n", ms, got);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: partition_roundtrip BROKERS create|leaders|produce|consume PREFIX "
                        "TOPICS PARTS [N]\n");
        return 2;
    }
    struct run r = {argv[1], argv[3], atoi(argv[4]), atoi(argv[5]), 0, WAIT_MAX_S};
    if (r.topics <= 0 || r.parts <= 0 || r.topics > 100000 || r.parts > 100000) {
        fprintf(stderr, "partition_roundtrip: TOPICS and PARTS must be 1..100000\n");
        return 2;
    }
    r.records = argc > 6 ? atol(argv[6]) : (long)r.topics * r.parts;
    if (argc > 6 && !strcmp(argv[2], "leaders"))
        r.timeout_s = atoi(argv[6]);
    if (r.records <= 0 || r.timeout_s <= 0) {
        fprintf(stderr, "partition_roundtrip: the count must be positive\n");
        return 2;
    }
    if (!strcmp(argv[2], "create"))
        return do_create(&r);
    if (!strcmp(argv[2], "leaders"))
        return do_leaders(&r);
    if (!strcmp(argv[2], "produce"))
        return do_produce(&r);
    if (!strcmp(argv[2], "consume"))
        return do_consume(&r);
    fprintf(stderr, "partition_roundtrip: unknown mode %s\n", argv[2]);
    return 2;
}
