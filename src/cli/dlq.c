/* streampulse dlq replay: dead letters back to the topic they came from.
 *
 * Reads the dead-letter topic from where the replay group (--group, default
 * "streampulse-dlq-replay") left off, or from the beginning, up to the end offsets it finds when
 * it starts (letters dead-lettered meanwhile wait for the next replay). Each letter is produced
 * (acks=all) to --to, else to its sp-orig-topic, into its sp-orig-partition when that topic has
 * such a partition; with its key, value and headers except sp-attempts and sp-not-before (so
 * the worker starts again at attempt 1), plus sp-replay-of: "DLQ/PARTITION/OFFSET".
 *
 * Progress: in batches of BATCH_MAX letters, the producer is flushed and then the replay group
 * commits, per dead-letter partition, the offset after the last letter whose copy was
 * acknowledged with every earlier one. So a rerun does not send a letter twice, unless a run
 * died between an acknowledgement and its commit (at most one batch; at-least-once). Two
 * replays of the same topic and group must not run at once.
 *
 * The consumer uses assign() at explicit offsets (no group membership); its commits are
 * OffsetCommit with generation -1, which a broker accepts while the group has no members.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/time.h"
#include "cli/common.h"
#include "cli/worker.h"

#define BATCH_MAX 500
#define DEFAULT_GROUP "streampulse-dlq-replay"

struct dlq_opts {
    const char *sub;   /* "replay" */
    const char *topic; /* --topic: the dead-letter topic */
    const char *to;    /* --to: target topic for every letter, else each one's sp-orig-topic */
    const char *group; /* --group: where progress is committed */
    int64_t count;     /* -n: replay at most this many, 0 for all */
};

/* A dead-letter partition being replayed. */
struct dpart {
    int32_t partition;
    int64_t end;       /* stop here: the high watermark at start */
    int64_t next;      /* offset after the last letter taken */
    int64_t commit_at; /* committed so far (the start offset at first) */
    bool done;         /* reached end */
    bool blocked;      /* a letter failed: nothing after it is committed */
};

/* One letter of the current batch. */
struct sent {
    struct dpart *dp;
    int64_t offset;
    rd_kafka_resp_err_t err; /* delivery result */
    bool reported;           /* its delivery report came */
};

static const char dlq_help[] =
    "Usage: streampulse dlq replay --topic DLQ [--to TOPIC] [--group G] [-n COUNT]\n"
    "\n"
    "Sends the dead letters of DLQ (written by `streampulse worker`) back to the topic they\n"
    "came from (header sp-orig-topic), or to TOPIC with --to, into their original partition\n"
    "where that topic has it. The copies keep key, value and headers, except that the attempt\n"
    "count and not-before time are removed (the worker runs them again from attempt 1) and\n"
    "sp-replay-of=DLQ/PARTITION/OFFSET is added.\n"
    "\n"
    "Progress is committed under consumer group G (default " DEFAULT_GROUP "), after each\n"
    "batch of copies is acknowledged: a rerun continues after the last replayed letter and\n"
    "does not send it again (unless a run is killed between acknowledgement and commit).\n"
    "A replay stops at the end offsets it finds at start. Do not run two at once.\n"
    "\n"
    "Options:\n"
    "  -t, --topic DLQ      the dead-letter topic (required)\n"
    "      --to TOPIC       send every letter here instead of its sp-orig-topic\n"
    "  -g, --group G        consumer group that records the progress\n"
    "  -n, --count N        replay at most N letters\n"
    "\n" CLI_COMMON_HELP;

enum {
    OPT_TO = CLI_OPT_CMD,
};

static const struct option dlq_longopts[] = {
    {"topic", required_argument, NULL, 't'},
    {"to", required_argument, NULL, OPT_TO},
    {"group", required_argument, NULL, 'g'},
    {"count", required_argument, NULL, 'n'},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

static int parse_args(struct cli_common *c, struct dlq_opts *o, int argc, char **argv)
{
    long long n;
    int opt;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, "t:g:n:" CLI_COMMON_SHORTOPTS, dlq_longopts, NULL)) !=
           -1) {
        int rc = cli_common_opt(c, opt, optarg);
        if (rc < 0)
            return -1;
        if (rc > 0)
            continue;
        switch (opt) {
        case 't':
            o->topic = optarg;
            break;
        case OPT_TO:
            o->to = optarg;
            break;
        case 'g':
            o->group = optarg;
            break;
        case 'n':
            if (cli_parse_int(c, "--count", optarg, 1, INT64_MAX, &n) != 0)
                return -1;
            o->count = n;
            break;
        default:
            return -1;
        }
    }
    if (c->help)
        return 0;
    if (optind >= argc) {
        cli_error(c, "missing sub-command: replay");
        return -1;
    }
    o->sub = argv[optind++];
    if (strcmp(o->sub, "replay") != 0) {
        cli_error(c, "unknown sub-command '%s' (replay)", o->sub);
        return -1;
    }
    if (optind < argc) {
        cli_error(c, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    if (!o->topic || !o->topic[0]) {
        cli_error(c, "-t/--topic is required");
        return -1;
    }
    if (!o->group[0] || (o->to && !o->to[0])) {
        cli_error(c, "--group and --to must not be empty");
        return -1;
    }
    return 0;
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    struct sent *s = m->_private;
    s->err = m->err;
    s->reported = true;
}

struct replay {
    struct cli_common *c;
    const struct dlq_opts *o;
    rd_kafka_t *rk;  /* consumer of the dead-letter topic */
    rd_kafka_t *prk; /* producer of the copies */
    struct dpart *parts;
    int n_parts;
    struct sent batch[BATCH_MAX];
    int n_batch;
    uint64_t replayed;  /* copies acknowledged */
    uint64_t failed;    /* copies not delivered, or letters that cannot be replayed */
    char *cached_topic; /* target whose partition count is cached */
    int cached_count;   /* its partitions, 0 if unknown */
};

/* Partition count of a target topic (one look-up per distinct topic in a row). */
static int target_partitions(struct replay *r, const char *topic)
{
    if (r->cached_topic && strcmp(r->cached_topic, topic) == 0)
        return r->cached_count;
    mem_free(r->cached_topic);
    r->cached_topic = mem_strdup(topic);
    r->cached_count = 0;
    int n;
    if (cli_topic_partition_count(r->c, r->rk, topic, &n) == 0)
        r->cached_count = n;
    return r->cached_count;
}

/* Produces one letter's copy. Returns false if the letter cannot be replayed (reported). */
static bool send_one(struct replay *r, struct dpart *dp, rd_kafka_message_t *m)
{
    rd_kafka_headers_t *src = NULL;
    rd_kafka_message_headers(m, &src);
    char *orig = r->o->to ? NULL : hdr_get_str(src, HDR_ORIG_TOPIC);
    const char *target = r->o->to ? r->o->to : orig;
    if (!target || !target[0]) {
        cli_error(r->c, "%s/%d/%" PRId64 " has no %s header: say where it goes with --to",
                  r->o->topic, (int)dp->partition, m->offset, HDR_ORIG_TOPIC);
        mem_free(orig);
        return false;
    }
    int cnt = target_partitions(r, target);
    if (cnt <= 0) {
        mem_free(orig);
        return false; /* the reason is printed */
    }
    int64_t op;
    int32_t partition = RD_KAFKA_PARTITION_UA;
    if (hdr_get_int(src, HDR_ORIG_PARTITION, 0, INT32_MAX, &op) && op < cnt)
        partition = (int32_t)op;

    static const char *const drop[] = {HDR_ATTEMPTS, HDR_NOT_BEFORE, HDR_REPLAY_OF, NULL};
    rd_kafka_headers_t *h = hdr_copy_without(src, drop);
    if (!h)
        h = rd_kafka_headers_new(1);
    char from[512];
    snprintf(from, sizeof(from), "%s/%d/%" PRId64, r->o->topic, (int)dp->partition, m->offset);
    rd_kafka_header_add(h, HDR_REPLAY_OF, -1, from, -1);

    struct sent *s = &r->batch[r->n_batch];
    *s = (struct sent){.dp = dp, .offset = m->offset};
    for (;;) {
        rd_kafka_resp_err_t err = rd_kafka_producev(
            r->prk, RD_KAFKA_V_TOPIC(target), RD_KAFKA_V_PARTITION(partition),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(m->payload, m->len),
            RD_KAFKA_V_KEY(m->key, m->key_len), RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_OPAQUE(s),
            RD_KAFKA_V_END);
        if (!err)
            break;
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
            rd_kafka_headers_destroy(h);
            cli_error(r->c, "%s: cannot produce to '%s': %s", from, target, rd_kafka_err2str(err));
            mem_free(orig);
            return false;
        }
        rd_kafka_poll(r->prk, 10);
    }
    r->n_batch++;
    mem_free(orig);
    return true;
}

/* Waits for every copy of the batch, then commits each partition up to its first failure. */
static int flush_and_commit(struct replay *r)
{
    int64_t deadline = time_mono_ms() + r->c->timeout_ms + 5000;
    for (;;) {
        bool all = true;
        for (int i = 0; i < r->n_batch && all; i++)
            all = r->batch[i].reported;
        if (all)
            break;
        if (time_mono_ms() > deadline) {
            rd_kafka_purge(r->prk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
            rd_kafka_flush(r->prk, 1000);
            break;
        }
        rd_kafka_flush(r->prk, 100);
    }
    for (int i = 0; i < r->n_batch; i++) {
        struct sent *s = &r->batch[i];
        if (!s->reported)
            s->err = RD_KAFKA_RESP_ERR__TIMED_OUT;
        if (s->err) {
            if (!s->dp->blocked)
                cli_error(r->c, "%s/%d/%" PRId64 " not replayed: %s", r->o->topic,
                          (int)s->dp->partition, s->offset, rd_kafka_err2str(s->err));
            s->dp->blocked = true;
            r->failed++;
        } else {
            r->replayed++;
            if (!s->dp->blocked)
                s->dp->commit_at = s->offset + 1;
        }
    }
    r->n_batch = 0;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(r->n_parts);
    for (int i = 0; i < r->n_parts; i++)
        rd_kafka_topic_partition_list_add(l, r->o->topic, r->parts[i].partition)->offset =
            r->parts[i].commit_at;
    rd_kafka_resp_err_t err = rd_kafka_commit(r->rk, l, 0);
    for (int i = 0; !err && i < l->cnt; i++)
        err = l->elems[i].err;
    rd_kafka_topic_partition_list_destroy(l);
    if (err) {
        cli_error(r->c, "committing the replay progress of group '%s': %s", r->o->group,
                  rd_kafka_err2str(err));
        return -1;
    }
    return 0;
}

/* Finds each partition's committed offset and end; assigns those with letters left. */
static int plan(struct replay *r, int partitions)
{
    struct cli_common *c = r->c;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; p++)
        rd_kafka_topic_partition_list_add(l, r->o->topic, p);
    rd_kafka_resp_err_t err = rd_kafka_committed(r->rk, l, c->timeout_ms);
    if (err) {
        cli_report_cluster_error(c, "fetching the replay group's offsets", err);
        rd_kafka_topic_partition_list_destroy(l);
        return -1;
    }
    r->parts = mem_calloc((size_t)partitions, sizeof(*r->parts));
    rd_kafka_topic_partition_list_t *assign = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; p++) {
        int64_t lo, hi;
        err = rd_kafka_query_watermark_offsets(r->rk, r->o->topic, p, &lo, &hi, c->timeout_ms);
        if (err) {
            cli_report_cluster_error(c, "reading the dead-letter topic's offsets", err);
            rd_kafka_topic_partition_list_destroy(assign);
            rd_kafka_topic_partition_list_destroy(l);
            return -1;
        }
        int64_t start = l->elems[p].offset >= lo ? l->elems[p].offset : lo;
        struct dpart *dp = &r->parts[r->n_parts++];
        *dp = (struct dpart){.partition = p, .end = hi, .next = start, .commit_at = start};
        dp->done = start >= hi;
        if (!dp->done)
            rd_kafka_topic_partition_list_add(assign, r->o->topic, p)->offset = start;
    }
    rd_kafka_topic_partition_list_destroy(l);
    err = assign->cnt ? rd_kafka_assign(r->rk, assign) : RD_KAFKA_RESP_ERR_NO_ERROR;
    rd_kafka_topic_partition_list_destroy(assign);
    if (err) {
        cli_error(c, "cannot read '%s': %s", r->o->topic, rd_kafka_err2str(err));
        return -1;
    }
    return 0;
}

static bool all_done(const struct replay *r)
{
    for (int i = 0; i < r->n_parts; i++)
        if (!r->parts[i].done && !r->parts[i].blocked)
            return false;
    return true;
}

static int replay_loop(struct replay *r)
{
    int64_t idle_deadline = time_mono_ms() + r->c->timeout_ms;
    bool stop = false;
    while (!stop && !all_done(r) && !cli_interrupted) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r->rk, 100);
        rd_kafka_poll(r->prk, 0);
        if (!m) {
            if (time_mono_ms() > idle_deadline) {
                cli_error(r->c, "no letters arrived within %.1f s", r->c->timeout_ms / 1000.0);
                r->failed++;
                break;
            }
            continue;
        }
        idle_deadline = time_mono_ms() + r->c->timeout_ms;
        struct dpart *dp = NULL;
        for (int i = 0; i < r->n_parts; i++)
            if (r->parts[i].partition == m->partition)
                dp = &r->parts[i];
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            if (dp && m->offset >= dp->end)
                dp->done = true;
        } else if (m->err) {
            cli_error(r->c, "reading '%s': %s", r->o->topic, rd_kafka_message_errstr(m));
            r->failed++;
            stop = true;
        } else if (dp && !dp->done && !dp->blocked && m->offset < dp->end &&
                   m->offset >= dp->next) {
            if (send_one(r, dp, m)) {
                dp->next = m->offset + 1;
            } else {
                dp->blocked = true; /* the letter stays; nothing after it is committed */
                r->failed++;
            }
            if (m->offset + 1 >= dp->end)
                dp->done = true;
            if (r->o->count && r->replayed + (uint64_t)r->n_batch >= (uint64_t)r->o->count)
                stop = true;
        }
        rd_kafka_message_destroy(m);
        if (r->n_batch == BATCH_MAX && flush_and_commit(r) != 0)
            return -1;
    }
    return flush_and_commit(r);
}

static int dlq_replay(struct cli_common *c, const struct dlq_opts *o)
{
    struct replay r = {.c = c, .o = o};
    int rc = CLI_EXIT_FAIL;
    cli_log_hide_role_warnings(true);
    rd_kafka_conf_t *conf = cli_conf_new(c);
    if (cli_conf_set(c, conf, "group.id", o->group) ||
        cli_conf_set(c, conf, "enable.auto.commit", "false") ||
        cli_conf_set(c, conf, "enable.auto.offset.store", "false") ||
        cli_conf_set(c, conf, "enable.partition.eof", "true") ||
        cli_conf_set(c, conf, "allow.auto.create.topics", "false") ||
        cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        return CLI_EXIT_FAIL;
    }
    r.rk = cli_client_new(c, RD_KAFKA_CONSUMER, conf);
    if (!r.rk)
        return CLI_EXIT_FAIL;
    char tmo[32];
    snprintf(tmo, sizeof(tmo), "%d", c->timeout_ms);
    conf = cli_conf_new(c);
    if (cli_conf_set(c, conf, "acks", "all") || cli_conf_set(c, conf, "linger.ms", "5") ||
        cli_conf_set(c, conf, "enable.idempotence", "true") ||
        cli_conf_set(c, conf, "message.timeout.ms", tmo) || cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        goto out_consumer;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    r.prk = cli_client_new(c, RD_KAFKA_PRODUCER, conf);
    if (!r.prk)
        goto out_consumer;
    int partitions;
    if (cli_topic_partition_count(c, r.rk, o->topic, &partitions) != 0 || plan(&r, partitions) != 0)
        goto out_producer;
    rc = replay_loop(&r) == 0 && r.failed == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    if (cli_interrupted)
        rc = CLI_EXIT_INTERRUPTED;
    fprintf(stderr, "replayed %" PRIu64 " dead letters from %s%s%s%s\n", r.replayed, o->topic,
            o->to ? " to " : "", o->to ? o->to : "", r.failed ? " (some failed, see above)" : "");
    rd_kafka_consumer_close(r.rk);
out_producer:
    rd_kafka_flush(r.prk, 1000);
    rd_kafka_destroy(r.prk);
out_consumer:
    rd_kafka_destroy(r.rk);
    mem_free(r.parts);
    mem_free(r.cached_topic);
    return rc;
}

int cli_dlq(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c, "dlq");
    struct dlq_opts o = {.group = DEFAULT_GROUP};
    int rc;
    if (parse_args(&c, &o, argc, argv) != 0) {
        fprintf(stderr, "Run 'streampulse dlq --help' for usage.\n");
        rc = CLI_EXIT_USAGE;
    } else if (c.help) {
        fputs(dlq_help, stdout);
        rc = CLI_EXIT_OK;
    } else {
        rc = dlq_replay(&c, &o);
    }
    cli_common_free(&c);
    return rc;
}
