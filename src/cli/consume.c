/* streampulse consume: a topic's records -> stdout.
 *
 * Two ways to read, chosen by --group:
 *   - without --group: no consumer group at all. The topic's partitions (or the one given with
 *     --partition) are started at --from on one queue with librdkafka's simple consumer
 *     (rd_kafka_consume_start_queue), as kcat -C does; nothing is committed.
 *   - with --group G: rd_kafka_subscribe() as member of group G; the broker assigns partitions,
 *     consumption resumes from G's committed offsets, and offsets are committed automatically
 *     (enable.auto.commit) and once more when the consumer closes.
 *
 * Both start with a Metadata request for the topic, so a missing topic or an unreachable cluster
 * is an error in words within --timeout, not a silent wait.
 *
 * End conditions: -n COUNT records printed; --exit and every partition at its end (high
 * watermark) once; SIGINT/SIGTERM. Output is flushed after each batch, so a pipe sees records as
 * they arrive.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "cli/common.h"
#include "cli/schema_decode.h"
#include "cli/format.h"

#define BATCH_MAX 1000 /* messages taken from the queue per call */

enum from_kind {
    FROM_DEFAULT,   /* --from not given: beginning (or the group's committed offsets) */
    FROM_BEGINNING, /* --from beginning */
    FROM_END,       /* --from end */
    FROM_OFFSET,    /* --from N: absolute offset */
    FROM_TAIL,      /* --from -N: N records before each partition's end */
};

struct consume_opts {
    const char *topic;   /* -t */
    enum from_kind from; /* --from */
    int64_t from_n;      /* offset for FROM_OFFSET, count for FROM_TAIL */
    int64_t count;       /* -n, 0 for no limit */
    int32_t partition;   /* --partition, RD_KAFKA_PARTITION_UA for all */
    const char *group;   /* --group */
    bool exit_at_end;    /* -e/--exit */
    bool json;           /* --json */
    struct fmt *fmt;     /* --format, NULL: value per line */
    bool decode;         /* --decode */
    const char *registry;               /* --registry */
    struct schema_decoder *decoder;     /* with --decode */
    const struct cli_common *c;
};

/* Progress of one run. */
struct consume_state {
    int64_t printed;              /* records written to stdout */
    int eof_needed;               /* partitions that must reach their end before --exit stops */
    int eof_seen;                 /* of those, partitions that did */
    bool *at_eof;                 /* per partition id: reached its end (only with --exit), owned */
    int32_t at_eof_len;           /* entries in at_eof */
    rd_kafka_resp_err_t last_err; /* latest error reported, to not repeat it */
    int32_t last_err_partition;   /* its partition */
    bool failed;                  /* a permanent error was reported */
    bool done;                    /* an end condition was met */
};

static const char consume_help[] =
    "Usage: streampulse consume -t TOPIC [OPTIONS]\n"
    "\n"
    "Prints a topic's records on stdout, by default each record's value on its own line.\n"
    "Without --group it reads all partitions (or --partition N) and commits nothing; with\n"
    "--group G it joins consumer group G, resumes from G's committed offsets and commits.\n"
    "\n"
    "Options:\n"
    "  -t, --topic TOPIC        topic to read (required)\n"
    "  -o, --from WHERE         beginning | end | N (absolute offset) | -N (the last N\n"
    "                           records of each partition); default beginning, as kcat -C.\n"
    "                           With --group only beginning|end, and only where the group has\n"
    "                           no committed offset (auto.offset.reset); default beginning.\n"
    "  -n, --count COUNT        exit after COUNT records (default: no limit)\n"
    "  -p, --partition N        read only partition N (not with --group)\n"
    "  -g, --group G            consume as member of group G and commit offsets\n"
    "  -e, --exit               exit once every partition has been read to its end\n"
    "  -f, --format FMT         print each record through FMT instead of its value; no newline\n"
    "                           is added. %k key, %v (or %s) value, %p partition, %o offset,\n"
    "                           %t timestamp (ms), %h headers as k=v,k=v, %T topic,\n"
    "                           %K key length, %S value length, %% percent;\n"
    "                           escapes \\n \\t \\r \\\\ \\0 \\xNN. Example: -f '%k=%v\\n'\n"
    "  -J, --json               one JSON object per record and line:\n"
    "                           "
    "{\"topic\",\"partition\",\"offset\",\"timestamp\",\"key\",\"value\",\n"
    "                            \"headers\":[{\"key\",\"value\"}]}; a null key/value is null.\n"
    "                           Valid UTF-8 is kept as is; every byte that is not part of\n"
    "                           valid UTF-8 is written as \\u00XX (read as Latin-1), so binary\n"
    "                           payloads are not exactly recoverable from JSON.\n"
    "  -D, --decode             a key or value in the schema registry's framing (magic byte\n"
    "                           0, a schema id) is printed as JSON through its schema: Avro's\n"
    "                           JSON encoding, Protobuf's JSON mapping, JSON as it is; with\n"
    "                           --json it is the key's or value's member as JSON, not a string.\n"
    "                           One that does not decode is printed as it is, with the reason\n"
    "                           on stderr.\n"
    "      --registry HOST:PORT the schema registry (default: $STREAMPULSE_REGISTRY, else\n"
    "                           " REGISTRY_DEFAULT_ADDR ")\n"
    "\n"
    "A null value prints as an empty line. Exits 1 if the topic does not exist, the cluster\n"
    "is unreachable within --timeout, or the consumer hits a permanent error.\n"
    "\n" CLI_COMMON_HELP;

enum {
    OPT_JSON_LONG = CLI_OPT_CMD,
    OPT_REGISTRY,
};

static const struct option consume_longopts[] = {
    {"topic", required_argument, NULL, 't'},
    {"from", required_argument, NULL, 'o'},
    {"count", required_argument, NULL, 'n'},
    {"partition", required_argument, NULL, 'p'},
    {"group", required_argument, NULL, 'g'},
    {"exit", no_argument, NULL, 'e'},
    {"format", required_argument, NULL, 'f'},
    {"json", no_argument, NULL, 'J'},
    {"decode", no_argument, NULL, 'D'},
    {"registry", required_argument, NULL, OPT_REGISTRY},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

static int parse_from(struct cli_common *c, struct consume_opts *o, const char *s)
{
    long long n;
    if (strcmp(s, "beginning") == 0) {
        o->from = FROM_BEGINNING;
    } else if (strcmp(s, "end") == 0) {
        o->from = FROM_END;
    } else if (s[0] == '-') {
        if (cli_parse_int(c, "--from", s + 1, 1, INT64_MAX, &n) != 0)
            return -1;
        o->from = FROM_TAIL;
        o->from_n = n;
    } else {
        if (cli_parse_int(c, "--from", s, 0, INT64_MAX, &n) != 0)
            return -1;
        o->from = FROM_OFFSET;
        o->from_n = n;
    }
    return 0;
}

static int parse_args(struct cli_common *c, struct consume_opts *o, int argc, char **argv)
{
    long long n;
    int opt;
    const char *format = NULL;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, "t:o:n:p:g:ef:JD" CLI_COMMON_SHORTOPTS, consume_longopts,
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
        case 'o':
            if (parse_from(c, o, optarg) != 0)
                return -1;
            break;
        case 'n':
            if (cli_parse_int(c, "--count", optarg, 1, INT64_MAX, &n) != 0)
                return -1;
            o->count = n;
            break;
        case 'p':
            if (cli_parse_int(c, "--partition", optarg, 0, INT32_MAX, &n) != 0)
                return -1;
            o->partition = (int32_t)n;
            break;
        case 'g':
            if (!optarg[0]) {
                cli_error(c, "--group must not be empty");
                return -1;
            }
            o->group = optarg;
            break;
        case 'e':
            o->exit_at_end = true;
            break;
        case 'f':
            format = optarg;
            break;
        case 'J':
            o->json = true;
            break;
        case 'D':
            o->decode = true;
            break;
        case OPT_REGISTRY:
            o->registry = optarg;
            break;
        default:
            return -1;
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
    if (format && o->json) {
        cli_error(c, "--format and --json exclude each other");
        return -1;
    }
    if (o->group && o->partition != RD_KAFKA_PARTITION_UA) {
        cli_error(c, "--partition cannot be used with --group (the group assigns partitions)");
        return -1;
    }
    if (o->group && (o->from == FROM_OFFSET || o->from == FROM_TAIL)) {
        cli_error(c, "with --group, --from takes only beginning or end");
        return -1;
    }
    if (format) {
        char err[256];
        if (fmt_compile(format, &o->fmt, err, sizeof(err)) != 0) {
            cli_error(c, "--format: %s", err);
            return -1;
        }
    }
    return 0;
}

/* With --decode: p[0, n) through its schema into out (JSON); false when it is not framed or
 * does not decode (the reason said on stderr), and it is printed as it is. */
static bool decoded(const struct consume_opts *o, const rd_kafka_message_t *m, const void *p,
                    size_t n, struct strbuf *out)
{
    char err[512];
    int rc = schema_decoder_decode(o->decoder, p, n, out, err, sizeof err);
    if (rc < 0)
        cli_error(o->c, "partition %d offset %lld: %s", (int)m->partition, (long long)m->offset,
                  err);
    return rc == 0;
}

static void print_record(const struct consume_opts *o, const rd_kafka_message_t *m)
{
    struct strbuf key, value;
    strbuf_init(&key);
    strbuf_init(&value);
    bool k = o->decode && decoded(o, m, m->key, m->key_len, &key);
    bool v = o->decode && decoded(o, m, m->payload, m->len, &value);
    /* the decoded texts in place of the bytes (m itself is passed on: librdkafka finds its
     * headers and timestamp through it) */
    struct fmt_bytes kb = {key.p, key.len}, vb = {value.p, value.len};
    if (o->json) {
        fmt_write_json(stdout, m, k ? strbuf_str(&key) : NULL, v ? strbuf_str(&value) : NULL);
    } else if (o->fmt) {
        fmt_write(stdout, o->fmt, m, k ? &kb : NULL, v ? &vb : NULL);
    } else {
        const void *p = v ? vb.p : m->payload;
        if (p)
            fwrite(p, 1, v ? vb.len : m->len, stdout);
        putchar('\n');
    }
    strbuf_destroy(&key);
    strbuf_destroy(&value);
}

/* Errors after which reading on makes no sense. Others (a broker going away, a request timing
 * out) are retried inside librdkafka and only reported. */
static bool err_is_permanent(rd_kafka_resp_err_t err)
{
    switch (err) {
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE:
    case RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR__UNKNOWN_GROUP:
    case RD_KAFKA_RESP_ERR_INVALID_GROUP_ID:
    case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE: /* e.g. a broker without group support */
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
        return true;
    default:
        return false;
    }
}

static void mark_eof(struct consume_state *s, int32_t partition)
{
    if (partition < 0 || partition >= s->at_eof_len || s->at_eof[partition])
        return;
    s->at_eof[partition] = true;
    if (++s->eof_seen >= s->eof_needed && s->eof_needed > 0)
        s->done = true;
}

/* Handles one message or event from the consumer. */
static void handle(struct cli_common *c, const struct consume_opts *o, struct consume_state *s,
                   const rd_kafka_message_t *m)
{
    if (s->done)
        return;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (o->exit_at_end)
            mark_eof(s, m->partition);
        return;
    }
    if (m->err) {
        /* librdkafka repeats a transient error on every retry: say it once per change. */
        bool repeat = m->err == s->last_err && m->partition == s->last_err_partition;
        s->last_err = m->err;
        s->last_err_partition = m->partition;
        if (!repeat || err_is_permanent(m->err)) {
            if (m->rkt)
                cli_error(c, "topic '%s' partition %d: %s", rd_kafka_topic_name(m->rkt),
                          (int)m->partition, rd_kafka_message_errstr(m));
            else
                cli_error(c, "%s", rd_kafka_message_errstr(m));
        }
        if (err_is_permanent(m->err)) {
            s->failed = true;
            s->done = true;
        }
        return;
    }
    /* With --exit a partition is finished at its first end; later records belong to no one. */
    if (o->exit_at_end && m->partition < s->at_eof_len && s->at_eof[m->partition])
        return;
    print_record(o, m);
    s->printed++;
    if (o->count > 0 && s->printed >= o->count)
        s->done = true;
}

static int64_t start_offset(const struct consume_opts *o)
{
    switch (o->from) {
    case FROM_END:
        return RD_KAFKA_OFFSET_END;
    case FROM_OFFSET:
        return o->from_n;
    case FROM_TAIL:
        return RD_KAFKA_OFFSET_TAIL(o->from_n);
    case FROM_DEFAULT:
    case FROM_BEGINNING:
    default:
        return RD_KAFKA_OFFSET_BEGINNING;
    }
}

static rd_kafka_conf_t *consumer_conf(struct cli_common *c, const struct consume_opts *o)
{
    rd_kafka_conf_t *conf = cli_conf_new(c);
    const char *reset = o->from == FROM_END ? "latest" : "earliest";
    if (cli_conf_set(c, conf, "enable.partition.eof", o->exit_at_end ? "true" : "false") ||
        cli_conf_set(c, conf, "auto.offset.reset", reset) ||
        cli_conf_set(c, conf, "allow.auto.create.topics", "false") ||
        /* All partitions share one queue, whose length librdkafka 2.0.2 checks against each
         * partition's queued.min.messages: with the default (100000) fetching stalls for up to
         * a second whenever the shared queue is long. */
        cli_conf_set(c, conf, "queued.min.messages", "1000000") ||
        (o->group && cli_conf_set(c, conf, "group.id", o->group)) ||
        (!o->group && cli_conf_set(c, conf, "enable.auto.offset.store", "false")) ||
        cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    return conf;
}

/* The simple consumer: all wanted partitions on one queue, nothing committed. */
static int consume_partitions(struct cli_common *c, const struct consume_opts *o,
                              struct consume_state *s, rd_kafka_t *rk, int partition_cnt)
{
    if (o->partition != RD_KAFKA_PARTITION_UA && o->partition >= partition_cnt) {
        cli_error(c, "topic '%s' has partitions 0..%d; there is no partition %d", o->topic,
                  partition_cnt - 1, (int)o->partition);
        return CLI_EXIT_FAIL;
    }
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    if (!rkt) {
        cli_error(c, "topic '%s': %s", o->topic, rd_kafka_err2str(rd_kafka_last_error()));
        return CLI_EXIT_FAIL;
    }
    int rc = CLI_EXIT_FAIL;
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    int32_t first = o->partition == RD_KAFKA_PARTITION_UA ? 0 : o->partition;
    int32_t last = o->partition == RD_KAFKA_PARTITION_UA ? partition_cnt - 1 : o->partition;
    int32_t started = first;
    for (; started <= last; started++) {
        if (rd_kafka_consume_start_queue(rkt, started, start_offset(o), q) == -1) {
            cli_error(c, "cannot start reading partition %d: %s", (int)started,
                      rd_kafka_err2str(rd_kafka_last_error()));
            goto out_stop;
        }
    }
    s->eof_needed = last - first + 1;
    rd_kafka_message_t *batch[BATCH_MAX];
    while (!s->done && !cli_interrupted) {
        ssize_t n = rd_kafka_consume_batch_queue(q, 100, batch, BATCH_MAX);
        for (ssize_t i = 0; i < n; i++) {
            handle(c, o, s, batch[i]);
            rd_kafka_message_destroy(batch[i]);
        }
        if (n > 0)
            fflush(stdout);
        rd_kafka_poll(rk, 0); /* errors and logs on the main queue */
    }
    rc = s->failed ? CLI_EXIT_FAIL : cli_interrupted ? CLI_EXIT_INTERRUPTED : CLI_EXIT_OK;
out_stop:
    for (int32_t p = first; p < started; p++)
        rd_kafka_consume_stop(rkt, p);
    rd_kafka_queue_destroy(q);
    rd_kafka_topic_destroy(rkt);
    return rc;
}

/* Group rebalances: count the assignment for --exit, apply it. */
static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    struct consume_state *s = opaque;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        /* A new assignment starts the end-of-partition count afresh. */
        memset(s->at_eof, 0, (size_t)s->at_eof_len * sizeof(bool));
        s->eof_seen = 0;
        s->eof_needed = parts->cnt;
        if (!strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE"))
            rd_kafka_error_destroy(rd_kafka_incremental_assign(rk, parts));
        else
            rd_kafka_assign(rk, parts);
    } else {
        s->eof_needed = 0;
        if (!strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE"))
            rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
        else
            rd_kafka_assign(rk, NULL);
    }
}

static int consume_group(struct cli_common *c, const struct consume_opts *o,
                         struct consume_state *s, rd_kafka_t *rk)
{
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, o->topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(rk, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (err) {
        cli_error(c, "cannot subscribe to '%s': %s", o->topic, rd_kafka_err2str(err));
        return CLI_EXIT_FAIL;
    }
    while (!s->done && !cli_interrupted) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
        if (!m)
            continue;
        handle(c, o, s, m);
        rd_kafka_message_destroy(m);
        fflush(stdout);
    }
    /* Commits the consumed offsets and leaves the group. */
    err = rd_kafka_consumer_close(rk);
    if (err)
        cli_error(c, "closing the consumer: %s", rd_kafka_err2str(err));
    return s->failed ? CLI_EXIT_FAIL : cli_interrupted ? CLI_EXIT_INTERRUPTED : CLI_EXIT_OK;
}

static int consume_run(struct cli_common *c, const struct consume_opts *o)
{
    struct consume_state s = {0};
    rd_kafka_conf_t *conf = consumer_conf(c, o);
    if (!conf)
        return CLI_EXIT_FAIL;
    if (o->group)
        rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_conf_set_opaque(conf, &s);
    rd_kafka_t *rk = cli_client_new(c, RD_KAFKA_CONSUMER, conf);
    if (!rk)
        return CLI_EXIT_FAIL;
    int rc = CLI_EXIT_FAIL;
    int partition_cnt;
    if (cli_topic_partition_count(c, rk, o->topic, &partition_cnt) != 0)
        goto out_destroy;
    /* Partition ids run 0..cnt-1; a group member may later see more after a partition add. */
    s.at_eof_len = partition_cnt;
    s.at_eof = mem_calloc((size_t)partition_cnt, sizeof(bool));
    if (o->group)
        rc = consume_group(c, o, &s, rk);
    else
        rc = consume_partitions(c, o, &s, rk, partition_cnt);
    fflush(stdout);
out_destroy:
    rd_kafka_destroy(rk);
    mem_free(s.at_eof);
    return rc;
}

int cli_consume(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c, "consume");
    struct consume_opts o = {.partition = RD_KAFKA_PARTITION_UA};
    int rc;
    if (parse_args(&c, &o, argc, argv) != 0) {
        fprintf(stderr, "Run 'streampulse consume --help' for usage.\n");
        rc = CLI_EXIT_USAGE;
    } else if (c.help) {
        fputs(consume_help, stdout);
        rc = CLI_EXIT_OK;
    } else {
        o.c = &c;
        if (o.decode)
            o.decoder = schema_decoder_new(&c, o.registry);
        rc = consume_run(&c, &o);
    }
    schema_decoder_free(o.decoder);
    fmt_free(o.fmt);
    cli_common_free(&c);
    return rc;
}
