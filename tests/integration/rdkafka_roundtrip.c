/* librdkafka round trip: produce N records over P partitions with acks=all and a compression
 * codec, then consume them all back and check every record individually (its value is a
 * function of its key), that none is missing or duplicated, and the count and checksum.
 *
 * usage: rdkafka_roundtrip BROKER TOPIC CODEC RECORDS PARTITIONS */
#include <inttypes.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define VALUE_MAX 200

static uint64_t delivered, delivery_errors;
static uint64_t produced_sum;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The value of record i: 20..180 bytes, partly repetitive so codecs have work to do. */
static size_t make_value(uint64_t i, char *buf)
{
    size_t len = 20 + (size_t)((i * 2654435761u) % 161);
    int n = snprintf(buf, VALUE_MAX, "record-%" PRIu64 "-", i);
    for (size_t k = (size_t)n; k < len; k++)
        buf[k] = (char)('a' + (char)((i + k * (k % 7 == 0 ? 13 : 1)) % 26));
    return len;
}

static uint64_t fnv(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    if (m->err) {
        if (delivery_errors++ < 5)
            fprintf(stderr, "delivery failed: %s\n", rd_kafka_err2str(m->err));
        return;
    }
    delivered++;
    produced_sum += fnv(m->payload, m->len);
}

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "FAIL: %s: %s\n", what, detail);
    exit(1);
}

static void create_topic(const char *broker, const char *topic, int partitions)
{
    char err[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", broker, err, sizeof(err));
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (!rk)
        die("rd_kafka_new", err);
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, 1, err, sizeof(err));
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 15000);
    if (!ev)
        die("CreateTopics", "no answer");
    const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
    size_t n;
    const rd_kafka_topic_result_t **tr = rd_kafka_CreateTopics_result_topics(res, &n);
    if (n != 1 || rd_kafka_topic_result_error(tr[0]))
        die("CreateTopics", n ? rd_kafka_topic_result_error_string(tr[0]) : "no result");
    rd_kafka_event_destroy(ev);
    rd_kafka_NewTopic_destroy(nt);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s BROKER TOPIC CODEC RECORDS PARTITIONS\n", argv[0]);
        return 2;
    }
    const char *broker = argv[1], *topic = argv[2], *codec = argv[3];
    uint64_t n = strtoull(argv[4], NULL, 10);
    int partitions = atoi(argv[5]);
    char err[512];
    create_topic(broker, topic, partitions);

    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    const char *pconf[][2] = {{"bootstrap.servers", broker},
                              {"acks", "all"},
                              {"compression.codec", codec},
                              {"linger.ms", "5"},
                              {"batch.num.messages", "10000"},
                              {"queue.buffering.max.messages", "1000000"},
                              {"queue.buffering.max.kbytes", "1048576"},
                              {"message.timeout.ms", "120000"}};
    for (size_t i = 0; i < sizeof(pconf) / sizeof(pconf[0]); i++)
        if (rd_kafka_conf_set(conf, pconf[i][0], pconf[i][1], err, sizeof(err)) != RD_KAFKA_CONF_OK)
            die(pconf[i][0], err);
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (!p)
        die("producer", err);
    double t0 = now_s();
    char key[32], val[VALUE_MAX];
    for (uint64_t i = 0; i < n; i++) {
        int klen = snprintf(key, sizeof(key), "%" PRIu64, i);
        size_t vlen = make_value(i, val);
        for (;;) {
            rd_kafka_resp_err_t e = rd_kafka_producev(
                p, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, (size_t)klen),
                RD_KAFKA_V_VALUE(val, vlen), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                RD_KAFKA_V_END);
            if (e == RD_KAFKA_RESP_ERR_NO_ERROR)
                break;
            if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                die("produce", rd_kafka_err2str(e));
            rd_kafka_poll(p, 10);
        }
        rd_kafka_poll(p, 0);
    }
    rd_kafka_flush(p, 120000);
    double t1 = now_s();
    rd_kafka_destroy(p);
    if (delivered != n || delivery_errors)
        fprintf(stderr, "FAIL: delivered %" PRIu64 " of %" PRIu64 " (%" PRIu64 " errors)\n",
                delivered, n, delivery_errors), exit(1);

    conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", broker, err, sizeof(err));
    rd_kafka_conf_set(conf, "group.id", "roundtrip-unused", err, sizeof(err));
    rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof(err));
    rd_kafka_conf_set(conf, "check.crcs", "true", err, sizeof(err));
    rd_kafka_t *c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
    if (!c)
        die("consumer", err);
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(partitions);
    for (int i = 0; i < partitions; i++)
        rd_kafka_topic_partition_list_add(tp, topic, i)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(c, tp);
    rd_kafka_topic_partition_list_destroy(tp);

    unsigned char *seen = calloc(n, 1);
    int64_t *next_off = calloc((size_t)partitions, sizeof(int64_t));
    uint64_t got = 0, consumed_sum = 0, per_part_nonempty = 0;
    double deadline = now_s() + 120;
    while (got < n && now_s() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 500);
        if (!m)
            continue;
        if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                die("consume", rd_kafka_message_errstr(m));
            rd_kafka_message_destroy(m);
            continue;
        }
        if (m->offset != next_off[m->partition])
            fprintf(stderr, "FAIL: partition %d offset %" PRId64 " expected %" PRId64 "\n",
                    m->partition, m->offset, next_off[m->partition]), exit(1);
        if (next_off[m->partition] == 0)
            per_part_nonempty++;
        next_off[m->partition] = m->offset + 1;
        char kbuf[32];
        if (!m->key || m->key_len >= sizeof(kbuf))
            die("consume", "record without a proper key");
        memcpy(kbuf, m->key, m->key_len);
        kbuf[m->key_len] = '\0';
        uint64_t i = strtoull(kbuf, NULL, 10);
        size_t vlen = make_value(i, val);
        if (i >= n || m->len != vlen || memcmp(m->payload, val, vlen) != 0)
            fprintf(stderr, "FAIL: record key %s has the wrong value\n", kbuf), exit(1);
        if (seen[i]++)
            fprintf(stderr, "FAIL: record %" PRIu64 " consumed twice\n", i), exit(1);
        consumed_sum += fnv(m->payload, m->len);
        got++;
        rd_kafka_message_destroy(m);
    }
    double t2 = now_s();
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    if (got != n)
        fprintf(stderr, "FAIL: consumed %" PRIu64 " of %" PRIu64 "\n", got, n), exit(1);
    if (consumed_sum != produced_sum)
        die("checksum", "consumed checksum differs from produced");
    if ((int)per_part_nonempty != partitions)
        die("partitioning", "not every partition received records");
    printf("ok codec=%s records=%" PRIu64 " partitions=%d produce_s=%.2f (%.0f rec/s) "
           "consume_s=%.2f (%.0f rec/s) checksum=%016" PRIx64 "\n",
           codec, n, partitions, t1 - t0, (double)n / (t1 - t0), t2 - t1,
           (double)n / (t2 - t1), consumed_sum);
    free(seen);
    free(next_off);
    return 0;
}
