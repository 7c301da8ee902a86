/* streampulse produce: stdin lines -> records.
 *
 * Each input line (without its '\n') is one record; empty lines are skipped, as kcat does.
 * Failures are named by input line number ("input line 18 failed: ..."), which travels with each
 * record as its opaque.
 *
 * Flow: check the topic with a Metadata request (so an unreachable cluster or a missing topic is
 * reported before stdin is read), then enqueue lines as they are read, serving delivery reports
 * in between, and flush at EOF (or on SIGINT/SIGTERM: stop reading, deliver what is queued).
 * Every record ends in exactly one delivery report: delivered, or failed with a reason, after at
 * most message.timeout.ms (= --timeout unless -X overrides it).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "cli/common.h"

#define FAILURES_SHOWN_MAX 20 /* individual failures printed before only counting them */

struct produce_opts {
    const char *topic;        /* -t */
    const char *key_sep;      /* --key-separator, NULL: no keys */
    size_t key_sep_len;       /* strlen(key_sep) */
    const char *acks;         /* --acks: "0", "1" or "all" */
    int32_t partition;        /* --partition, RD_KAFKA_PARTITION_UA: the partitioner decides */
    const char *compression;  /* --compression */
    rd_kafka_headers_t *hdrs; /* --header k=v, copied onto every record */
};

/* Delivery report tallies, updated from rd_kafka_poll() on this thread. */
struct produce_stats {
    uint64_t enqueued;       /* records handed to librdkafka */
    uint64_t delivered;      /* acknowledged as the acks setting requires */
    uint64_t failed;         /* failed at enqueue or in a delivery report */
    uint64_t failed_enqueue; /* of failed: refused by producev() (no delivery report) */
};

static const char produce_help[] =
    "Usage: streampulse produce -t TOPIC [OPTIONS] < lines\n"
    "\n"
    "Writes each line of stdin as one record (empty lines are skipped), flushes at EOF and\n"
    "prints \"produced N records to TOPIC\" on stderr. Exits 1, naming the failed records by\n"
    "input line, if any record is not delivered.\n"
    "\n"
    "Options:\n"
    "  -t, --topic TOPIC         topic to write to (required)\n"
    "  -K, --key-separator SEP   split each line at the first SEP into key and value;\n"
    "                            lines without SEP get no key (default: no keys)\n"
    "  -H, --header KEY=VALUE    add this header to every record (repeatable)\n"
    "      --acks 0|1|all        acknowledgement required per record (default all)\n"
    "  -p, --partition N         write every record to partition N\n"
    "                            (default: librdkafka's partitioner, by key)\n"
    "  -z, --compression CODEC   none|gzip|snappy|lz4|zstd (default none)\n"
    "\n"
    "--timeout also bounds each record's delivery (message.timeout.ms).\n"
    "\n" CLI_COMMON_HELP;

enum {
    OPT_ACKS = CLI_OPT_CMD,
};

static const struct option produce_longopts[] = {
    {"topic", required_argument, NULL, 't'},
    {"key-separator", required_argument, NULL, 'K'},
    {"header", required_argument, NULL, 'H'},
    {"acks", required_argument, NULL, OPT_ACKS},
    {"partition", required_argument, NULL, 'p'},
    {"compression", required_argument, NULL, 'z'},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

static bool compression_valid(const char *codec)
{
    static const char *const codecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
        if (strcmp(codec, codecs[i]) == 0)
            return true;
    return false;
}

static void note_failure(struct produce_stats *st, uint64_t line_no, const char *why)
{
    st->failed++;
    if (st->failed <= FAILURES_SHOWN_MAX) {
        fprintf(stderr, "streampulse produce: input line %llu failed: %s\n",
                (unsigned long long)line_no, why);
    } else if (st->failed == FAILURES_SHOWN_MAX + 1) {
        fprintf(stderr, "streampulse produce: more records failed; counting only\n");
    }
}

static void dr_msg_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    struct produce_stats *st = opaque;
    uint64_t line_no = (uint64_t)(uintptr_t)m->_private;
    if (m->err)
        note_failure(st, line_no, rd_kafka_err2str(m->err));
    else
        st->delivered++;
}

static int parse_args(struct cli_common *c, struct produce_opts *o, int argc, char **argv)
{
    long long n;
    int opt;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, "t:K:H:p:z:" CLI_COMMON_SHORTOPTS, produce_longopts,
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
        case 'K':
            if (!optarg[0]) {
                cli_error(c, "--key-separator must not be empty");
                return -1;
            }
            o->key_sep = optarg;
            o->key_sep_len = strlen(optarg);
            break;
        case 'H': {
            char *key;
            const char *value;
            if (cli_split_kv(optarg, &key, &value) != 0) {
                cli_error(c, "--header needs KEY=VALUE, got '%s'", optarg);
                return -1;
            }
            rd_kafka_header_add(o->hdrs, key, -1, value, -1);
            free(key);
            break;
        }
        case OPT_ACKS:
            if (strcmp(optarg, "0") && strcmp(optarg, "1") && strcmp(optarg, "all") &&
                strcmp(optarg, "-1")) {
                cli_error(c, "--acks must be 0, 1 or all, got '%s'", optarg);
                return -1;
            }
            o->acks = strcmp(optarg, "-1") == 0 ? "all" : optarg;
            break;
        case 'p':
            if (cli_parse_int(c, "--partition", optarg, 0, INT32_MAX, &n) != 0)
                return -1;
            o->partition = (int32_t)n;
            break;
        case 'z':
            if (!compression_valid(optarg)) {
                cli_error(c, "--compression must be none, gzip, snappy, lz4 or zstd, got '%s'",
                          optarg);
                return -1;
            }
            o->compression = optarg;
            break;
        default:
            return -1; /* getopt printed the reason */
        }
    }
    if (c->help)
        return 0;
    if (optind < argc) {
        cli_error(c, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (!o->topic) {
        cli_error(c, "-t/--topic is required");
        return -1;
    }
    return 0;
}

static rd_kafka_t *producer_new(struct cli_common *c, const struct produce_opts *o,
                                struct produce_stats *st)
{
    char buf[32];
    rd_kafka_conf_t *conf = cli_conf_new(c);
    snprintf(buf, sizeof(buf), "%d", c->timeout_ms);
    if (cli_conf_set(c, conf, "acks", o->acks) ||
        cli_conf_set(c, conf, "compression.codec", o->compression) ||
        cli_conf_set(c, conf, "message.timeout.ms", buf) ||
        cli_conf_set(c, conf, "linger.ms", "5") || cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, dr_msg_cb);
    rd_kafka_conf_set_opaque(conf, st);
    return cli_client_new(c, RD_KAFKA_PRODUCER, conf);
}

/* Hands one record to librdkafka, serving delivery reports while its queue is full. */
static void enqueue(rd_kafka_t *rk, rd_kafka_topic_t *rkt, const struct produce_opts *o,
                    struct produce_stats *st, char *line, size_t len, uint64_t line_no)
{
    char *key = NULL;
    size_t key_len = 0;
    char *value = line;
    size_t value_len = len;
    if (o->key_sep) {
        char *sep = memmem(line, len, o->key_sep, o->key_sep_len);
        if (sep) {
            key = line;
            key_len = (size_t)(sep - line);
            value = sep + o->key_sep_len;
            value_len = len - key_len - o->key_sep_len;
        }
    }
    for (;;) {
        /* producev() takes the headers only when it succeeds. */
        rd_kafka_headers_t *hdrs = o->hdrs ? rd_kafka_headers_copy(o->hdrs) : NULL;
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(o->partition),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(value, value_len),
            RD_KAFKA_V_KEY(key, key_len), RD_KAFKA_V_HEADERS(hdrs),
            RD_KAFKA_V_OPAQUE((void *)(uintptr_t)line_no), RD_KAFKA_V_END);
        if (!err) {
            st->enqueued++;
            break;
        }
        if (hdrs)
            rd_kafka_headers_destroy(hdrs);
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            st->failed_enqueue++;
            note_failure(st, line_no, rd_kafka_err2str(err));
            break;
        }
        rd_kafka_poll(rk, 10); /* make room: deliveries free queue slots */
    }
    rd_kafka_poll(rk, 0);
}

/* Waits until every enqueued record has its delivery report. A further SIGINT/SIGTERM while
 * waiting purges what is left, which fails those records at once. */
static void drain(rd_kafka_t *rk, struct produce_stats *st)
{
    bool purged = false;
    cli_interrupted = 0;
    while (st->delivered + (st->failed - st->failed_enqueue) < st->enqueued) {
        rd_kafka_flush(rk, 100);
        if (cli_interrupted && !purged) {
            fprintf(stderr,
                    "streampulse produce: interrupted again: dropping undelivered records\n");
            rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
            purged = true;
        }
    }
}

static int produce_stdin(struct cli_common *c, const struct produce_opts *o)
{
    struct produce_stats st = {0};
    rd_kafka_t *rk = producer_new(c, o, &st);
    if (!rk)
        return CLI_EXIT_FAIL;
    int rc = CLI_EXIT_FAIL;
    int partition_cnt;
    if (cli_topic_partition_count(c, rk, o->topic, &partition_cnt) != 0)
        goto out_destroy;
    if (o->partition != RD_KAFKA_PARTITION_UA && o->partition >= partition_cnt) {
        cli_error(c, "topic '%s' has partitions 0..%d; there is no partition %d", o->topic,
                  partition_cnt - 1, (int)o->partition);
        goto out_destroy;
    }
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    if (!rkt) {
        cli_error(c, "topic '%s': %s", o->topic, rd_kafka_err2str(rd_kafka_last_error()));
        goto out_destroy;
    }

    char *line = NULL;
    size_t line_cap = 0;
    uint64_t line_no = 0;
    bool read_error = false;
    for (;;) {
        errno = 0;
        ssize_t n = getline(&line, &line_cap, stdin);
        if (n < 0) {
            if (errno == EINTR && !cli_interrupted) {
                clearerr(stdin);
                continue;
            }
            read_error = ferror(stdin) && !cli_interrupted;
            break;
        }
        line_no++;
        size_t len = (size_t)n;
        if (len > 0 && line[len - 1] == '\n')
            len--;
        if (len > 0)
            enqueue(rk, rkt, o, &st, line, len, line_no);
        if (cli_interrupted)
            break;
    }
    free(line);
    bool interrupted = cli_interrupted;
    if (read_error)
        cli_error(c, "reading stdin: %s", strerror(errno));
    drain(rk, &st);
    rd_kafka_topic_destroy(rkt);

    uint64_t total = st.delivered + st.failed;
    if (st.failed == 0) {
        fprintf(stderr, "produced %llu records to %s\n", (unsigned long long)st.delivered,
                o->topic);
    } else {
        fprintf(stderr, "produced %llu records to %s; %llu of %llu failed\n",
                (unsigned long long)st.delivered, o->topic, (unsigned long long)st.failed,
                (unsigned long long)total);
    }
    if (interrupted)
        rc = CLI_EXIT_INTERRUPTED;
    else if (st.failed > 0 || read_error)
        rc = CLI_EXIT_FAIL;
    else
        rc = CLI_EXIT_OK;
out_destroy:
    rd_kafka_destroy(rk);
    return rc;
}

int cli_produce(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c, "produce");
    struct produce_opts o = {
        .acks = "all",
        .partition = RD_KAFKA_PARTITION_UA,
        .compression = "none",
        .hdrs = rd_kafka_headers_new(4),
    };
    int rc;
    if (parse_args(&c, &o, argc, argv) != 0) {
        fprintf(stderr, "Run 'streampulse produce --help' for usage.\n");
        rc = CLI_EXIT_USAGE;
    } else if (c.help) {
        fputs(produce_help, stdout);
        rc = CLI_EXIT_OK;
    } else {
        if (rd_kafka_header_cnt(o.hdrs) == 0) {
            rd_kafka_headers_destroy(o.hdrs);
            o.hdrs = NULL;
        }
        rc = produce_stdin(&c, &o);
    }
    if (o.hdrs)
        rd_kafka_headers_destroy(o.hdrs);
    cli_common_free(&c);
    return rc;
}
