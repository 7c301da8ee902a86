/* cli_mock: librdkafka's built-in mock cluster behind real TCP listeners, for trying the CLI
 * (and any other librdkafka client) without a broker.
 *
 *   build/itest/cli_mock [-b BROKER_COUNT] [-t TOPIC:PARTITIONS]... [-s]
 *
 * Prints "BROKERS=host:port,..." on stdout, then serves until stdin reaches EOF or SIGINT/SIGTERM
 * (with -s: until SIGINT/SIGTERM only, for running in the background with stdin closed).
 * The mock auto-creates unknown topics on request. It is librdkafka's test double, not a
 * Kafka broker: it lacks most admin APIs (CreateTopics, DeleteTopics, DescribeConfigs, ...).
 * Example:
 *   build/itest/cli_mock -s -t demo:3 >mock.out & MOCK=$!; sleep 0.5
 *   B=$(sed -n 's/^BROKERS=//p' mock.out)
 *   printf 'a\nb\n' | build/streampulse produce -b "$B" -t demo
 *   build/streampulse consume -b "$B" -t demo -e; kill $MOCK
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: cli_mock [-b BROKER_COUNT] [-t TOPIC:PARTITIONS]... [-s]\n");
}

int main(int argc, char **argv)
{
    int brokers = 1;
    int watch_stdin = 1;
    int opt;
    while ((opt = getopt(argc, argv, "b:t:sh")) != -1) {
        if (opt == 's') {
            watch_stdin = 0;
        } else if (opt == 'b') {
            brokers = atoi(optarg);
            if (brokers < 1 || brokers > 16) {
                usage();
                return 2;
            }
        } else if (opt != 't') {
            usage();
            return opt == 'h' ? 0 : 2;
        }
    }

    char err[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof(err));
    rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
    if (!rk) {
        fprintf(stderr, "cli_mock: %s\n", err);
        return 1;
    }
    rd_kafka_mock_cluster_t *mc = rd_kafka_mock_cluster_new(rk, brokers);
    if (!mc) {
        fprintf(stderr, "cli_mock: cannot create the mock cluster\n");
        rd_kafka_destroy(rk);
        return 1;
    }

    int rc = 0;
    optind = 1;
    while ((opt = getopt(argc, argv, "b:t:sh")) != -1) {
        if (opt != 't')
            continue;
        char *colon = strrchr(optarg, ':');
        int parts = colon ? atoi(colon + 1) : 1;
        if (colon)
            *colon = '\0';
        if (parts < 1 ||
            rd_kafka_mock_topic_create(mc, optarg, parts, brokers < 3 ? brokers : 3) != 0) {
            fprintf(stderr, "cli_mock: cannot create topic %s\n", optarg);
            rc = 1;
            goto out;
        }
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    printf("BROKERS=%s\n", rd_kafka_mock_cluster_bootstraps(mc));
    fflush(stdout);

    char buf[256];
    while (!stop) {
        if (!watch_stdin) {
            poll(NULL, 0, 200); /* until a signal sets stop */
            continue;
        }
        struct pollfd pfd = {.fd = STDIN_FILENO, .events = POLLIN};
        int n = poll(&pfd, 1, 200);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0) {
            ssize_t r = read(STDIN_FILENO, buf, sizeof(buf));
            if (r <= 0)
                break; /* EOF: whoever started us is gone */
        }
    }
out:
    rd_kafka_mock_cluster_destroy(mc);
    rd_kafka_destroy(rk);
    return rc;
}
