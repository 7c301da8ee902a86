/* A librdkafka group consumer for the group integration tests.
 *
 *   rdkafka_group BROKER GROUP TOPIC OUT STOPFILE [options]
 *     --assignor NAME     partition.assignment.strategy (range, roundrobin, cooperative-sticky)
 *     --instance ID       group.instance.id (static membership)
 *     --session MS        session.timeout.ms (default 6000; heartbeats every 500 ms)
 *     --manual            commit each record synchronously after it is written (at-least-once)
 *     --delay-us N        sleep N us after each record (to be killed mid-stream)
 *     --pause-after N     after N records: commit, pause every assigned partition and stay in
 *                         the group without consuming (writes "paused" to OUT.events)
 *
 * Appends "partition offset value" per record to OUT (flushed before the commit), and one line
 * per rebalance event "assign|revoke p,p,..." to OUT.events. Runs until STOPFILE exists, then
 * commits (unless --manual), closes the consumer (leaving the group) and exits 0. */
#include <librdkafka/rdkafka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static FILE *events;

static void log_event(const char *what, const rd_kafka_topic_partition_list_t *parts)
{
    fprintf(events, "%s ", what);
    for (int i = 0; i < parts->cnt; i++)
        fprintf(events, "%s%d", i ? "," : "", parts->elems[i].partition);
    fprintf(events, "\n");
    fflush(events);
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    int cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        log_event("assign", parts);
        if (cooperative)
            rd_kafka_error_destroy(rd_kafka_incremental_assign(rk, parts));
        else
            rd_kafka_assign(rk, parts);
    } else {
        log_event("revoke", parts);
        if (cooperative)
            rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
        else
            rd_kafka_assign(rk, NULL);
    }
}

static void set(rd_kafka_conf_t *conf, const char *k, const char *v)
{
    char err[256];
    if (rd_kafka_conf_set(conf, k, v, err, sizeof(err)) != RD_KAFKA_CONF_OK) {
        fprintf(stderr, "%s=%s: %s\n", k, v, err);
        exit(2);
    }
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s BROKER GROUP TOPIC OUT STOPFILE [options]\n", argv[0]);
        return 2;
    }
    const char *broker = argv[1], *group = argv[2], *topic = argv[3], *out_path = argv[4],
               *stop = argv[5];
    const char *assignor = "range", *instance = NULL, *session = "6000";
    int manual = 0;
    long delay_us = 0, pause_after = -1, consumed = 0;
    for (int i = 6; i < argc; i++) {
        if (!strcmp(argv[i], "--assignor") && i + 1 < argc)
            assignor = argv[++i];
        else if (!strcmp(argv[i], "--instance") && i + 1 < argc)
            instance = argv[++i];
        else if (!strcmp(argv[i], "--session") && i + 1 < argc)
            session = argv[++i];
        else if (!strcmp(argv[i], "--manual"))
            manual = 1;
        else if (!strcmp(argv[i], "--delay-us") && i + 1 < argc)
            delay_us = atol(argv[++i]);
        else if (!strcmp(argv[i], "--pause-after") && i + 1 < argc)
            pause_after = atol(argv[++i]);
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    char ev_path[4096];
    snprintf(ev_path, sizeof(ev_path), "%s.events", out_path);
    FILE *out = fopen(out_path, "a");
    events = fopen(ev_path, "a");
    if (!out || !events) {
        perror("fopen");
        return 2;
    }
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    set(conf, "bootstrap.servers", broker);
    set(conf, "group.id", group);
    set(conf, "client.id", instance ? instance : "rdkafka-group");
    set(conf, "partition.assignment.strategy", assignor);
    set(conf, "session.timeout.ms", session);
    set(conf, "heartbeat.interval.ms", "500");
    set(conf, "auto.offset.reset", "earliest");
    set(conf, "enable.auto.commit", manual ? "false" : "true");
    set(conf, "auto.commit.interval.ms", "500");
    set(conf, "topic.metadata.refresh.interval.ms", "2000");
    if (instance)
        set(conf, "group.instance.id", instance);
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    char err[512];
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
    if (!rk) {
        fprintf(stderr, "rd_kafka_new: %s\n", err);
        return 2;
    }
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t e = rd_kafka_subscribe(rk, sub);
    rd_kafka_topic_partition_list_destroy(sub);
    if (e) {
        fprintf(stderr, "subscribe: %s\n", rd_kafka_err2str(e));
        return 1;
    }
    while (access(stop, F_OK) != 0) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (!m)
            continue;
        if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                fprintf(stderr, "consumer error: %s\n", rd_kafka_message_errstr(m));
            rd_kafka_message_destroy(m);
            continue;
        }
        fprintf(out, "%d %lld %.*s\n", m->partition, (long long)m->offset, (int)m->len,
                (const char *)m->payload);
        fflush(out);
        if (manual) {
            rd_kafka_resp_err_t ce = rd_kafka_commit_message(rk, m, 0);
            if (ce)
                fprintf(stderr, "commit: %s\n", rd_kafka_err2str(ce));
        }
        rd_kafka_message_destroy(m);
        if (delay_us)
            usleep((useconds_t)delay_us);
        if (++consumed == pause_after) {
            rd_kafka_resp_err_t ce = rd_kafka_commit(rk, NULL, 0);
            rd_kafka_topic_partition_list_t *as = NULL;
            rd_kafka_assignment(rk, &as);
            rd_kafka_pause_partitions(rk, as);
            rd_kafka_topic_partition_list_destroy(as);
            fprintf(events, "paused %s\n", ce ? rd_kafka_err2str(ce) : "committed");
            fflush(events);
        }
    }
    if (!manual) {
        rd_kafka_resp_err_t ce = rd_kafka_commit(rk, NULL, 0);
        if (ce && ce != RD_KAFKA_RESP_ERR__NO_OFFSET)
            fprintf(stderr, "final commit: %s\n", rd_kafka_err2str(ce));
    }
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    fclose(out);
    fclose(events);
    return 0;
}
