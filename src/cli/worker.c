/* streampulse worker: runs a command once per record of a topic, as a member of a consumer
 * group, with retries through a retry topic and a dead-letter topic for what keeps failing.
 *
 * Owns: a librdkafka consumer (member of --group, subscribed to TOPIC and TOPIC.retry), a
 * producer for the retry and dead-letter copies, the handler processes, and per assigned
 * partition a ptrack (task/ptrack.h) of the records taken and not yet committed.
 *
 * One thread does everything (librdkafka's own threads aside). Its loop waits in poll() on a
 * self-pipe (written by SIGCHLD/SIGTERM/SIGINT handlers and by librdkafka when its consumer or
 * producer queue becomes non-empty) and on the handlers' stderr pipes, with a timeout for the
 * next due time (a held retry, a --timeout, a commit). Each pass (service()) reaps exited
 * handlers, kills timed-out ones, serves delivery reports, takes records from the consumer,
 * starts handlers while fewer than --concurrency run, commits, and pauses partitions that have
 * too much buffered.
 *
 * Invariants:
 *   1. A partition's offset is committed only up to its first record that is not DONE
 *      (ptrack_commit_offset()); a record is DONE once its handler exited 0, or once its retry or
 *      dead-letter copy was acknowledged by the broker (acks=all). So a record is never
 *      committed before its outcome is safe: at-least-once.
 *   2. At most --concurrency handlers exist at any time (w->running), orphans included.
 *   3. A job is in exactly one of: its partition's ptrack only (WAITING, DONE, or SETTLING with
 *      nothing in flight), w->running (RUNNING), the producer (in_producer) or w->republish
 *      (in_republish). An orphan (part == NULL: its partition was given up) is freed by whoever
 *      holds it next: the reaper, the delivery report, or the republish pass.
 *   4. A record of the retry topic starts no earlier than its sp-not-before (held in the
 *      ptrack with a due time; the partition keeps being consumed and other records run). A
 *      not-before further ahead than --backoff's max is clamped to it (headers are untrusted).
 *
 * States of the worker: running -> stopping (SIGTERM/SIGINT, --drain finished, fatal error:
 * begin_stop()) -> finished (finish(): kill what still runs after --grace, commit, leave the
 * group). Partitions come and go in rebalance_cb(): assigned -> revoking (give_up(): wait up to
 * --grace for their running handlers and copies, commit, drop) -> gone. The default assignor
 * (roundrobin) is eager: a rebalance revokes every partition and assigns them afresh; with
 * -X partition.assignment.strategy=cooperative-sticky only the partitions that move are.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/duration.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include "cli/common.h"
#include "cli/schema_decode.h"
#include "cli/worker.h"

#define BUFFER_PER_PARTITION 1000 /* records taken and not committed before pausing it */
#define CONSUME_BATCH_MAX 500     /* records taken from the consumer per pass */
#define COMMIT_INTERVAL_MS 200    /* periodic asynchronous commits */
#define POLL_MAX_MS 100           /* the loop runs at least this often */
#define REAP_AFTER_KILL_MS 2000   /* how long finish() waits for killed handlers to go */
#define REPUBLISH_MAX_MS 30000    /* longest wait before producing a failed copy again */
#define CONCURRENCY_MAX 1024
#define KEY_LOG_MAX 80 /* bytes of a key shown in a log line */

static const char worker_help[] =
    "Usage: streampulse worker --topic TOPIC --group GROUP [OPTIONS] [--] CMD [ARGS...]\n"
    "\n"
    "Runs CMD once per record of TOPIC as a member of consumer group GROUP: the record's value\n"
    "on stdin, its key, coordinates, attempt and headers in the environment. A record's offset\n"
    "is committed once CMD exited 0 for it and for every earlier record of its partition\n"
    "(at-least-once). A failed run is written to TOPIC.retry with a not-before time (exponential\n"
    "backoff with jitter) and run again from there; after --max-attempts it goes to TOPIC.dlq\n"
    "with the error. Both topics are created if missing, with TOPIC's partition count.\n"
    "\n"
    "Options:\n"
    "  -t, --topic TOPIC        the jobs topic (required; must exist)\n"
    "  -g, --group GROUP        consumer group of the workers (required)\n"
    "  -c, --concurrency N      handlers running at once, across partitions (default 1)\n"
    "      --order MODE         within a partition of TOPIC: partition (default) runs one record\n"
    "                           at a time, in offset order; key runs records with different keys\n"
    "                           in parallel and those with the same key in order (records\n"
    "                           without a key in parallel); none runs any record in parallel\n"
    "      --max-attempts K     runs per record before it is dead-lettered (default 5)\n"
    "      --backoff SPEC       retry delays: FIRST[,FACTORx][,max=MAX][,jitter=J]\n"
    "                           (default " BACKOFF_DEFAULT_SPEC "); the delay after failed\n"
    "                           attempt n is min(MAX, FIRST*FACTOR^(n-1)) shortened by a random\n"
    "                           share of at most J\n"
    "      --timeout DURATION   kill a run (its whole process group) after this long and count\n"
    "                           it as failed (e.g. 30s, 5m; a bare number is seconds;\n"
    "                           default: no limit)\n"
    "      --grace DURATION     on SIGTERM, and when partitions are taken away by a rebalance,\n"
    "                           how long running handlers may finish before they are killed\n"
    "                           (default 30s)\n"
    "      --retry-topic NAME   default TOPIC.retry\n"
    "      --dlq-topic NAME     default TOPIC.dlq\n"
    "      --drain              exit 0 once every assigned partition has been read to its end\n"
    "                           and no record is waiting, held for a retry, running or being\n"
    "                           written (for batch runs and benchmarks)\n"
    "      --log-level LEVEL    debug, info (default), warn or error\n"
    "  -D, --decode             a value in the schema registry's framing (magic byte 0, a\n"
    "                           schema id) reaches the handler as JSON through its schema\n"
    "                           (as consume --decode prints it), its id in SP_SCHEMA_ID; one\n"
    "                           that does not decode reaches it as it is, the reason in\n"
    "                           SP_DECODE_ERROR. Retry and dead-letter copies keep the bytes.\n"
    "      --registry HOST:PORT the schema registry (default: $STREAMPULSE_REGISTRY, else\n"
    "                           " REGISTRY_DEFAULT_ADDR ")\n"
    "\n"
    "Environment of CMD (besides the worker's own, minus inherited SP_* variables):\n"
    "  SP_TOPIC, SP_PARTITION, SP_OFFSET   where this copy of the record was read (TOPIC or\n"
    "                                      the retry topic)\n"
    "  SP_ORIG_TOPIC, SP_ORIG_PARTITION, SP_ORIG_OFFSET   the record's place in TOPIC\n"
    "  SP_KEY (absent for a null key), SP_VALUE_NULL=1 for a null value, SP_TIMESTAMP (ms)\n"
    "  SP_ATTEMPT (1, 2, ...), SP_MAX_ATTEMPTS, SP_GROUP\n"
    "  SP_LAST_ERROR     why the previous attempt failed (retries and replays)\n"
    "  SP_REPLAY_OF      TOPIC/PARTITION/OFFSET of the dead letter it was replayed from\n"
    "  TRACEPARENT, TRACESTATE   the W3C trace context headers (a valid traceparent only)\n"
    "  SP_HEADER_<NAME>  each other header; NAME is the header name upper-cased with every byte\n"
    "                    but A-Z, 0-9 turned into '_'; the later of two equal names wins\n"
    "  A value with a NUL byte is given base64-encoded as NAME_B64 instead of NAME. Limits:\n"
    "  64 headers, names up to 128 bytes, values up to 32 KiB, 128 KiB of header values;\n"
    "  SP_HEADERS_DROPPED counts headers left out; a key over 64 KiB sets SP_KEY_DROPPED=1.\n"
    "\n"
    "stdout of CMD is the worker's; the last 1 KiB of its stderr goes into the error text.\n"
    "The worker logs one key=value line per event on stderr. On SIGTERM it stops taking\n"
    "records, lets running handlers finish within --grace, kills the rest (their records are\n"
    "not committed and run again later), commits, leaves the group and exits 0; a second\n"
    "signal kills the handlers at once. SIGINT does the same, then ends by SIGINT (status 130).\n"
    "\n"
    "Common options:\n"
    "  -b, --bootstrap-server HOST:PORT[,...]\n"
    "                         brokers to bootstrap from (default: $STREAMPULSE_BROKERS,\n"
    "                         else " CLI_DEFAULT_BROKERS ")\n"
    "  -X KEY=VALUE           any librdkafka property for both the consumer and the producer,\n"
    "                         repeatable; applied last (e.g. -X session.timeout.ms=6000)\n"
    "      --cluster-timeout SECS   how long to wait for the cluster at start (default 10)\n"
    "  -v, --verbose          show librdkafka's log lines on stderr\n"
    "  -h, --help             this help\n";

enum {
    OPT_MAX_ATTEMPTS = CLI_OPT_CMD,
    OPT_BACKOFF,
    OPT_RUN_TIMEOUT,
    OPT_GRACE,
    OPT_ORDER,
    OPT_RETRY_TOPIC,
    OPT_DLQ_TOPIC,
    OPT_DRAIN,
    OPT_LOG_LEVEL,
    OPT_REGISTRY,
};

static const struct option worker_longopts[] = {
    {"topic", required_argument, NULL, 't'},
    {"group", required_argument, NULL, 'g'},
    {"concurrency", required_argument, NULL, 'c'},
    {"max-attempts", required_argument, NULL, OPT_MAX_ATTEMPTS},
    {"backoff", required_argument, NULL, OPT_BACKOFF},
    {"timeout", required_argument, NULL, OPT_RUN_TIMEOUT},
    {"grace", required_argument, NULL, OPT_GRACE},
    {"order", required_argument, NULL, OPT_ORDER},
    {"retry-topic", required_argument, NULL, OPT_RETRY_TOPIC},
    {"dlq-topic", required_argument, NULL, OPT_DLQ_TOPIC},
    {"drain", no_argument, NULL, OPT_DRAIN},
    {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
    {"decode", no_argument, NULL, 'D'},
    {"registry", required_argument, NULL, OPT_REGISTRY},
    {"bootstrap-server", required_argument, NULL, 'b'},
    {"cluster-timeout", required_argument, NULL, CLI_OPT_TIMEOUT},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* --- options ------------------------------------------------------------------------------ */

static int parse_duration_opt(struct cli_common *c, const char *opt, const char *arg, int64_t *out)
{
    if (duration_parse_ms(arg, strlen(arg), "s", out) != 0) {
        cli_error(c, "%s: '%s' is not a duration such as 500ms, 30s or 5m", opt, arg);
        return -1;
    }
    return 0;
}

/* Whether cmd names an executable file, the way posix_spawnp() will look for it. */
static bool cmd_found(const char *cmd)
{
    struct stat st;
    if (strchr(cmd, '/'))
        return access(cmd, X_OK) == 0 && stat(cmd, &st) == 0 && S_ISREG(st.st_mode);
    const char *path = getenv("PATH");
    if (!path || !path[0])
        path = "/bin:/usr/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        char full[4096];
        snprintf(full, sizeof(full), "%.*s/%s", (int)len, len ? path : ".", cmd);
        if (access(full, X_OK) == 0 && stat(full, &st) == 0 && S_ISREG(st.st_mode))
            return true;
        if (!colon)
            break;
        path = colon + 1;
    }
    return false;
}

static int parse_args(struct cli_common *c, struct worker_opts *o, int argc, char **argv)
{
    long long n;
    int opt;
    const char *backoff = BACKOFF_DEFAULT_SPEC;
    const char *retry = NULL, *dlq = NULL;
    cli_getopt_reset();
    /* '+': stop at the first non-option, so CMD's own options are left alone even without -- */
    while ((opt = getopt_long(argc, argv, "+t:g:c:D" CLI_COMMON_SHORTOPTS, worker_longopts, NULL)) !=
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
        case 'g':
            o->group = optarg;
            break;
        case 'c':
            if (cli_parse_int(c, "--concurrency", optarg, 1, CONCURRENCY_MAX, &n) != 0)
                return -1;
            o->concurrency = (int)n;
            break;
        case OPT_MAX_ATTEMPTS:
            if (cli_parse_int(c, "--max-attempts", optarg, 1, 1000, &n) != 0)
                return -1;
            o->max_attempts = (int)n;
            break;
        case OPT_BACKOFF:
            backoff = optarg;
            break;
        case OPT_RUN_TIMEOUT:
            if (parse_duration_opt(c, "--timeout", optarg, &o->run_timeout_ms) != 0)
                return -1;
            if (o->run_timeout_ms == 0) {
                cli_error(c, "--timeout must be more than 0");
                return -1;
            }
            break;
        case OPT_GRACE:
            if (parse_duration_opt(c, "--grace", optarg, &o->grace_ms) != 0)
                return -1;
            break;
        case OPT_ORDER:
            if (strcmp(optarg, "partition") == 0) {
                o->order = PTRACK_ORDER_PARTITION;
            } else if (strcmp(optarg, "key") == 0) {
                o->order = PTRACK_ORDER_KEY;
            } else if (strcmp(optarg, "none") == 0) {
                o->order = PTRACK_ORDER_NONE;
            } else {
                cli_error(c, "--order must be partition, key or none, got '%s'", optarg);
                return -1;
            }
            break;
        case OPT_RETRY_TOPIC:
            retry = optarg;
            break;
        case OPT_DLQ_TOPIC:
            dlq = optarg;
            break;
        case OPT_DRAIN:
            o->drain = true;
            break;
        case OPT_LOG_LEVEL:
            if (log_level_parse(optarg) < 0) {
                cli_error(c, "--log-level must be debug, info, warn or error, got '%s'", optarg);
                return -1;
            }
            log_set_level((enum log_level)log_level_parse(optarg));
            break;
        case 'D':
            o->decode = true;
            break;
        case OPT_REGISTRY:
            o->registry = optarg;
            break;
        default:
            return -1; /* getopt printed the reason */
        }
    }
    if (c->help)
        return 0;
    if (!o->topic || !o->topic[0]) {
        cli_error(c, "-t/--topic is required");
        return -1;
    }
    if (!o->group || !o->group[0]) {
        cli_error(c, "-g/--group is required");
        return -1;
    }
    char err[256];
    if (backoff_parse(backoff, &o->backoff, err, sizeof(err)) != 0) {
        cli_error(c, "--backoff '%s': %s", backoff, err);
        return -1;
    }
    if (optind >= argc) {
        cli_error(c, "no command given: put it last, after --, e.g. -- ./handle-job.sh");
        return -1;
    }
    o->cmd = argv + optind;
    if (!o->cmd[0][0] || !cmd_found(o->cmd[0])) {
        cli_error(c, "command '%s' not found or not executable%s", o->cmd[0],
                  strchr(o->cmd[0], '/') ? "" : " (looked in $PATH)");
        return -1;
    }
    size_t tlen = strlen(o->topic);
    o->retry_topic = retry ? mem_strdup(retry) : mem_alloc(tlen + 7);
    if (!retry)
        snprintf(o->retry_topic, tlen + 7, "%s.retry", o->topic);
    o->dlq_topic = dlq ? mem_strdup(dlq) : mem_alloc(tlen + 5);
    if (!dlq)
        snprintf(o->dlq_topic, tlen + 5, "%s.dlq", o->topic);
    if (!strcmp(o->retry_topic, o->topic) || !strcmp(o->dlq_topic, o->topic) ||
        !strcmp(o->retry_topic, o->dlq_topic)) {
        cli_error(c, "the jobs, retry and dead-letter topics must be three different topics");
        return -1;
    }
    return 0;
}

/* --- signals and waking up ---------------------------------------------------------------- */

static int sig_wake_fd = -1; /* the self-pipe's write end, for the signal handler */

static void on_signal(int sig)
{
    int saved = errno;
    if (sig != SIGCHLD) {
        if (!cli_signal)
            cli_signal = sig;
        cli_interrupted = 1;
    }
    if (sig_wake_fd >= 0) {
        char b = 's';
        ssize_t r = write(sig_wake_fd, &b, 1); /* a full pipe already means "wake up" */
        (void)r;
    }
    errno = saved;
}

static void signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGCHLD, &sa, NULL);
}

/* --- partitions --------------------------------------------------------------------------- */

static struct wpart *part_find(struct worker *w, const char *topic, int32_t partition)
{
    for (size_t i = 0; i < w->n_parts; i++)
        if (w->parts[i]->partition == partition && strcmp(w->parts[i]->topic, topic) == 0)
            return w->parts[i];
    return NULL;
}

static void part_add(struct worker *w, const char *topic, int32_t partition)
{
    if (part_find(w, topic, partition))
        return;
    struct wpart *p = mem_calloc(1, sizeof(*p));
    p->topic = mem_strdup(topic);
    p->partition = partition;
    p->is_retry = strcmp(topic, w->o.retry_topic) == 0;
    /* retry copies are independent jobs whose order means nothing: any may run once due */
    ptrack_init(&p->pt, p->is_retry ? PTRACK_ORDER_NONE : w->o.order);
    p->commit_sent = p->committed = -1;
    MEM_GROW(w->parts, w->parts_cap, w->n_parts + 1);
    w->parts[w->n_parts++] = p;
}

static void kill_job(struct job *j, bool for_stop)
{
    if (j->pid > 0 && !j->stop_killed && !(j->timed_out && !for_stop)) {
        kill(-j->pid, SIGKILL);
        if (for_stop)
            j->stop_killed = true;
        else
            j->timed_out = true;
    }
}

/* Forgets p and its records; running handlers are killed, jobs still held elsewhere become
 * orphans (invariant 3). */
static void part_drop(struct worker *w, struct wpart *p)
{
    struct ptrack_rec *r;
    while ((r = p->pt.head)) {
        struct job *j = (struct job *)r;
        enum ptrack_state s = r->state;
        ptrack_unlink(&p->pt, r);
        if (s == PTRACK_RUNNING) {
            kill_job(j, true);
            j->part = NULL; /* freed when reaped */
        } else if (s == PTRACK_SETTLING && (j->in_producer || j->in_republish)) {
            j->part = NULL; /* freed by its delivery report or the republish pass */
        } else {
            job_free(j);
        }
    }
    ptrack_destroy(&p->pt);
    for (size_t i = 0; i < w->n_parts; i++) {
        if (w->parts[i] == p) {
            w->parts[i] = w->parts[--w->n_parts];
            break;
        }
    }
    mem_free(p->topic);
    mem_free(p);
}

/* "topic[0,1,2] topic.retry[0]" for a log line. */
static void format_parts(const rd_kafka_topic_partition_list_t *l, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; i < l->cnt && o + 32 < cap; i++) {
        bool same = i > 0 && strcmp(l->elems[i].topic, l->elems[i - 1].topic) == 0;
        int n = same ? snprintf(buf + o - 1, cap - o + 1, ",%d]", (int)l->elems[i].partition)
                     : snprintf(buf + o, cap - o, "%s%s[%d]", o ? " " : "", l->elems[i].topic,
                                (int)l->elems[i].partition);
        if (n < 0)
            break;
        o += same ? (size_t)n - 1 : (size_t)n;
    }
}

/* --- commits ------------------------------------------------------------------------------ */

/* Commits how far the partitions (ps[0..n), or all if ps is NULL) may be committed. Async:
 * sends only what advanced since the last send; sync: what is not yet acknowledged, and waits. */
static void commit(struct worker *w, bool sync, struct wpart **ps, size_t n)
{
    if (!ps) {
        ps = w->parts;
        n = w->n_parts;
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)n + 1);
    for (size_t i = 0; i < n; i++) {
        struct wpart *p = ps[i];
        struct ptrack_rec *r;
        while ((r = ptrack_pop_done(&p->pt)))
            job_free((struct job *)r);
        int64_t off = ptrack_commit_offset(&p->pt);
        if (off < 0 || off <= (sync ? p->committed : p->commit_sent))
            continue;
        rd_kafka_topic_partition_list_add(l, p->topic, p->partition)->offset = off;
        p->commit_sent = off;
    }
    if (l->cnt > 0) {
        rd_kafka_resp_err_t err = rd_kafka_commit(w->rk, l, sync ? 0 : 1);
        if (err && !sync)
            log_warn("commit_failed", "error=\"%s\"", rd_kafka_err2str(err));
        for (int i = 0; sync && i < l->cnt; i++) {
            rd_kafka_topic_partition_t *e = &l->elems[i];
            struct wpart *p = part_find(w, e->topic, e->partition);
            rd_kafka_resp_err_t perr = err ? err : e->err;
            if (perr) {
                log_warn("commit_failed", "topic=%s partition=%d offset=%" PRId64 " error=\"%s\"",
                         e->topic, (int)e->partition, e->offset, rd_kafka_err2str(perr));
                if (p)
                    p->commit_sent = p->committed;
            } else if (p && e->offset > p->committed) {
                p->committed = e->offset;
            }
        }
    }
    rd_kafka_topic_partition_list_destroy(l);
}

static void commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                      rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
    struct worker *w = opaque;
    (void)rk;
    if (err == RD_KAFKA_RESP_ERR__NO_OFFSET || !offsets)
        return;
    for (int i = 0; i < offsets->cnt; i++) {
        rd_kafka_topic_partition_t *e = &offsets->elems[i];
        struct wpart *p = part_find(w, e->topic, e->partition);
        rd_kafka_resp_err_t perr = err ? err : e->err;
        if (perr) {
            log_warn("commit_failed", "topic=%s partition=%d offset=%" PRId64 " error=\"%s\"",
                     e->topic, (int)e->partition, e->offset, rd_kafka_err2str(perr));
            if (p)
                p->commit_sent = p->committed; /* send it again with the next commit */
        } else if (p && e->offset > p->committed) {
            p->committed = e->offset;
        }
    }
}

/* --- jobs --------------------------------------------------------------------------------- */

static const char *key_for_log(const struct job *j, char *buf, size_t cap)
{
    if (!j->key)
        return "null";
    return log_quote(buf, cap, j->key, j->key_len < KEY_LOG_MAX ? j->key_len : KEY_LOG_MAX);
}

static void schedule_republish(struct worker *w, struct job *j)
{
    int shift = j->publish_tries < 8 ? j->publish_tries : 8;
    int64_t wait = (int64_t)100 << shift;
    if (wait > REPUBLISH_MAX_MS)
        wait = REPUBLISH_MAX_MS;
    j->republish_ms = time_mono_ms() + wait;
    j->in_republish = true;
    j->republish_next = w->republish;
    w->republish = j;
}

static void publish(struct worker *w, struct job *j)
{
    if (job_publish(w, j) == 0) {
        j->in_producer = true;
    } else {
        j->publish_tries++;
        schedule_republish(w, j);
    }
}

/* A run failed (j->error says why): the copy goes to the retry or the dead-letter topic. */
static void job_failed(struct worker *w, struct job *j, int64_t ms)
{
    j->failed_at_ms = time_wall_ms();
    j->to_dlq = j->attempt >= w->o.max_attempts;
    int64_t delay = 0;
    if (!j->to_dlq) {
        double u = (double)(worker_random() >> 11) * 0x1.0p-53;
        delay = backoff_delay_ms(&w->o.backoff, j->attempt, u);
        j->not_before_ms = j->failed_at_ms + delay;
    }
    ptrack_set_state(&j->part->pt, &j->rec, PTRACK_SETTLING);
    char kb[KEY_LOG_MAX + 16], eb[WORKER_TAIL_MAX * 2];
    log_warn("job_failed",
             "topic=%s partition=%d offset=%" PRId64 " key=%s attempt=%d ms=%" PRId64
             " next=%s delay_ms=%" PRId64 " error=%s",
             j->part->topic, (int)j->part->partition, j->offset, key_for_log(j, kb, sizeof(kb)),
             j->attempt, ms, j->to_dlq ? "dlq" : "retry", delay,
             log_quote(eb, sizeof(eb), j->error, strlen(j->error)));
    publish(w, j);
}

static void run_job(struct worker *w, struct job *j)
{
    ptrack_set_state(&j->part->pt, &j->rec, PTRACK_RUNNING);
    w->st.runs++;
    if (!w->st.first_start_ms)
        w->st.first_start_ms = time_mono_ms();
    if (job_spawn(w, j) != 0) {
        w->st.failed++;
        job_failed(w, j, 0);
        return;
    }
    char kb[KEY_LOG_MAX + 16];
    log_debug("job_started", "topic=%s partition=%d offset=%" PRId64 " key=%s attempt=%d pid=%d",
              j->part->topic, (int)j->part->partition, j->offset, key_for_log(j, kb, sizeof(kb)),
              j->attempt, (int)j->pid);
    w->running[w->n_running++] = j;
}

/* The handler of j exited with status. */
static void job_exited(struct worker *w, struct job *j, int status)
{
    int64_t now = time_mono_ms();
    int64_t ms = now - j->started_ms;
    w->st.last_end_ms = now;
    j->pid = 0;
    job_read_stderr(j);
    if (j->err_fd >= 0) {
        close(j->err_fd); /* a grandchild may hold it open: we do not wait for it */
        j->err_fd = -1;
    }
    if (!j->part || j->stop_killed) {
        w->st.abandoned++;
        log_info("job_abandoned",
                 "topic=%s partition=%d offset=%" PRId64 " attempt=%d ms=%" PRId64 " reason=%s",
                 j->from_retry ? w->o.retry_topic : w->o.topic, (int)j->partition, j->offset,
                 j->attempt, ms, j->part ? "shutdown" : "revoked");
        if (!j->part) {
            job_free(j);
        } else {
            /* not committed: it runs again, here or at the next owner */
            ptrack_set_state(&j->part->pt, &j->rec, PTRACK_WAITING);
        }
        return;
    }
    if (!j->timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        ptrack_set_state(&j->part->pt, &j->rec, PTRACK_DONE);
        w->st.succeeded++;
        char kb[KEY_LOG_MAX + 16];
        log_info("job_done",
                 "topic=%s partition=%d offset=%" PRId64 " key=%s attempt=%d ms=%" PRId64,
                 j->part->topic, (int)j->part->partition, j->offset, key_for_log(j, kb, sizeof(kb)),
                 j->attempt, ms);
        return;
    }
    w->st.failed++;
    mem_free(j->error);
    j->error = job_describe_failure(w, j, status);
    job_failed(w, j, ms);
}

static void reap(struct worker *w)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0)
            return;
        for (size_t i = 0; i < w->n_running; i++) {
            struct job *j = w->running[i];
            if (j->pid == pid) {
                w->running[i] = w->running[--w->n_running];
                job_exited(w, j, status);
                break;
            }
        }
    }
}

static void check_timeouts(struct worker *w, int64_t now)
{
    for (size_t i = 0; i < w->n_running; i++) {
        struct job *j = w->running[i];
        if (!j->timed_out && !j->stop_killed && now >= j->deadline_ms)
            kill_job(j, false);
    }
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    struct worker *w = opaque;
    struct job *j = m->_private;
    (void)rk;
    w->inflight--;
    j->in_producer = false;
    if (!j->part) {
        job_free(j);
        return;
    }
    char kb[KEY_LOG_MAX + 16];
    if (m->err) {
        j->publish_tries++;
        log_warn("publish_failed",
                 "topic=%s partition=%d offset=%" PRId64 " to=%s tries=%d error=\"%s\"",
                 j->part->topic, (int)j->part->partition, j->offset,
                 j->to_dlq ? w->o.dlq_topic : w->o.retry_topic, j->publish_tries,
                 rd_kafka_err2str(m->err));
        if (!w->purging)
            schedule_republish(w, j);
        return; /* SETTLING: the record is not committed */
    }
    if (j->to_dlq) {
        w->st.dead++;
        log_warn("job_dead_lettered",
                 "topic=%s partition=%d offset=%" PRId64 " key=%s attempts=%d dlq=%s "
                 "dlq_partition=%d dlq_offset=%" PRId64,
                 j->part->topic, (int)j->part->partition, j->offset, key_for_log(j, kb, sizeof(kb)),
                 j->attempt, w->o.dlq_topic, (int)m->partition, m->offset);
    } else {
        w->st.retried++;
        log_info("job_retry_queued",
                 "topic=%s partition=%d offset=%" PRId64 " key=%s attempt=%d retry_partition=%d "
                 "retry_offset=%" PRId64 " not_before=%" PRId64,
                 j->part->topic, (int)j->part->partition, j->offset, key_for_log(j, kb, sizeof(kb)),
                 j->attempt, (int)m->partition, m->offset, j->not_before_ms);
        /* --drain must not call the retry partition finished before it has read this copy */
        struct wpart *rp = part_find(w, w->o.retry_topic, m->partition);
        if (rp && m->offset > rp->pt.last_offset && m->offset + 1 > rp->must_reach) {
            rp->must_reach = m->offset + 1;
            rp->at_end = false;
        }
    }
    ptrack_set_state(&j->part->pt, &j->rec, PTRACK_DONE);
}

static void republish_due(struct worker *w, int64_t now)
{
    struct job **pp = &w->republish;
    while (*pp) {
        struct job *j = *pp;
        if (j->republish_ms > now) {
            pp = &j->republish_next;
            continue;
        }
        *pp = j->republish_next;
        j->in_republish = false;
        if (!j->part)
            job_free(j);
        else
            publish(w, j);
    }
}

/* --- taking records ----------------------------------------------------------------------- */

static bool err_is_fatal(rd_kafka_resp_err_t err)
{
    switch (err) {
    case RD_KAFKA_RESP_ERR__FATAL:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR__INVALID_ARG:
    case RD_KAFKA_RESP_ERR_INVALID_GROUP_ID:
    case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
        return true;
    default:
        return false;
    }
}

static void begin_stop(struct worker *w, const char *reason);

static void take(struct worker *w, rd_kafka_message_t *m)
{
    const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : "";
    struct wpart *p = m->rkt ? part_find(w, topic, m->partition) : NULL;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        if (p && m->offset >= p->must_reach)
            p->at_end = true;
        return;
    }
    if (m->err) {
        if (m->err != w->last_err || err_is_fatal(m->err))
            log_error("consumer_error", "topic=%s partition=%d error=\"%s\"", topic,
                      (int)m->partition, rd_kafka_message_errstr(m));
        w->last_err = m->err;
        if (err_is_fatal(m->err)) {
            w->failed = true;
            begin_stop(w, "fatal_error");
        }
        return;
    }
    w->last_err = RD_KAFKA_RESP_ERR_NO_ERROR;
    /* not ours any more (fetched before a revocation), or seen already */
    if (!p || p->revoking || m->offset <= p->pt.last_offset)
        return;
    struct job *j = job_from_message(w, p, m);
    ptrack_add(&p->pt, &j->rec);
    p->at_end = false;
    w->st.taken++;
}

static bool take_batch(struct worker *w)
{
    for (int i = 0; i < CONSUME_BATCH_MAX; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(w->rk, 0);
        if (!m)
            return false;
        take(w, m);
        rd_kafka_message_destroy(m);
    }
    return true; /* there may be more */
}

/* Starts handlers while slots are free, partitions in turn. Returns the earliest time a held
 * record becomes due (INT64_MAX if none). */
static int64_t start_jobs(struct worker *w, int64_t now)
{
    int64_t wake = INT64_MAX;
    if (w->stopping || w->n_parts == 0)
        return wake;
    bool progress = true;
    while (progress && w->n_running < (size_t)w->o.concurrency) {
        progress = false;
        for (size_t k = 0; k < w->n_parts && w->n_running < (size_t)w->o.concurrency; k++) {
            struct wpart *p = w->parts[(w->rr + k) % w->n_parts];
            if (p->revoking)
                continue;
            struct ptrack_rec *r = ptrack_next(&p->pt, now, &wake);
            if (!r)
                continue;
            run_job(w, (struct job *)r);
            progress = true;
        }
        w->rr++;
    }
    return wake;
}

/* Pauses partitions with too much buffered (or all, when stopping); resumes them below half. */
static void flow_control(struct worker *w)
{
    rd_kafka_topic_partition_list_t *pause = NULL, *resume = NULL;
    for (size_t i = 0; i < w->n_parts; i++) {
        struct wpart *p = w->parts[i];
        size_t n = ptrack_count(&p->pt);
        if (!p->paused && (w->stopping || n >= BUFFER_PER_PARTITION)) {
            if (!pause)
                pause = rd_kafka_topic_partition_list_new(4);
            rd_kafka_topic_partition_list_add(pause, p->topic, p->partition);
            p->paused = true;
        } else if (p->paused && !w->stopping && n <= BUFFER_PER_PARTITION / 2) {
            if (!resume)
                resume = rd_kafka_topic_partition_list_new(4);
            rd_kafka_topic_partition_list_add(resume, p->topic, p->partition);
            p->paused = false;
        }
    }
    if (pause) {
        rd_kafka_pause_partitions(w->rk, pause);
        rd_kafka_topic_partition_list_destroy(pause);
    }
    if (resume) {
        rd_kafka_resume_partitions(w->rk, resume);
        rd_kafka_topic_partition_list_destroy(resume);
    }
}

/* --- the loop ----------------------------------------------------------------------------- */

static void begin_stop(struct worker *w, const char *reason)
{
    if (w->stopping)
        return;
    w->stopping = true;
    w->stop_deadline_ms = time_mono_ms() + w->o.grace_ms;
    char g[32];
    log_info("worker_stopping", "reason=%s running=%zu grace=%s", reason, w->n_running,
             duration_format(w->o.grace_ms, g, sizeof(g)));
}

static void check_signals(struct worker *w)
{
    if (!cli_interrupted)
        return;
    cli_interrupted = 0;
    if (!w->stopping) {
        begin_stop(w, cli_signal == SIGINT ? "SIGINT" : "SIGTERM");
    } else if (w->stop_deadline_ms > time_mono_ms()) {
        log_warn("worker_stop_now", "reason=second_signal running=%zu", w->n_running);
        w->stop_deadline_ms = time_mono_ms();
    }
}

/* Waits up to timeout_ms for the self-pipe or a handler's stderr. */
static void wait_events(struct worker *w, int timeout_ms)
{
    struct pollfd pfd[CONCURRENCY_MAX + 1];
    struct job *owner[CONCURRENCY_MAX + 1];
    nfds_t n = 0;
    pfd[n].fd = w->wake_rd;
    pfd[n].events = POLLIN;
    owner[n++] = NULL;
    for (size_t i = 0; i < w->n_running; i++) {
        if (w->running[i]->err_fd < 0)
            continue;
        pfd[n].fd = w->running[i]->err_fd;
        pfd[n].events = POLLIN;
        owner[n++] = w->running[i];
    }
    if (poll(pfd, n, timeout_ms) <= 0)
        return;
    if (pfd[0].revents) {
        char buf[256];
        while (read(w->wake_rd, buf, sizeof(buf)) > 0)
            ;
    }
    for (nfds_t i = 1; i < n; i++)
        if (pfd[i].revents)
            job_read_stderr(owner[i]);
}

/* One pass over everything that may have happened. consume: also take records (not from
 * inside a rebalance callback, which runs within rd_kafka_consumer_poll()). Returns the poll
 * timeout until the next due time. */
static int service(struct worker *w, bool consume)
{
    check_signals(w);
    reap(w);
    int64_t now = time_mono_ms();
    check_timeouts(w, now);
    rd_kafka_poll(w->prk, 0);
    republish_due(w, now);
    bool more = consume && take_batch(w);
    now = time_mono_ms();
    int64_t wake = start_jobs(w, now);
    if (now >= w->commit_due_ms) {
        commit(w, false, NULL, 0);
        w->commit_due_ms = now + COMMIT_INTERVAL_MS;
    }
    if (consume)
        flow_control(w);

    if (more)
        return 0;
    int64_t t = now + POLL_MAX_MS;
    if (wake < t)
        t = wake;
    for (size_t i = 0; i < w->n_running; i++)
        if (w->running[i]->deadline_ms < t)
            t = w->running[i]->deadline_ms;
    for (struct job *j = w->republish; j; j = j->republish_next)
        if (j->republish_ms < t)
            t = j->republish_ms;
    if (w->stopping && w->stop_deadline_ms < t)
        t = w->stop_deadline_ms;
    return t <= now ? 0 : (int)(t - now);
}

static bool parts_busy(struct wpart **ps, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ps[i]->pt.running || ps[i]->pt.settling)
            return true;
    return false;
}

static bool drained(const struct worker *w)
{
    if (!w->ever_assigned || w->n_running || w->inflight || w->republish)
        return false;
    for (size_t i = 0; i < w->n_parts; i++)
        if (!w->parts[i]->at_end || ptrack_count(&w->parts[i]->pt) > 0)
            return false;
    return true;
}

/* --- rebalances --------------------------------------------------------------------------- */

/* Partitions taken away: unless lost, their running handlers and copies get up to --grace (or
 * what is left of it when stopping), then what finished is committed; then they are dropped. */
static void give_up(struct worker *w, const rd_kafka_topic_partition_list_t *parts, bool lost)
{
    struct wpart **ps = mem_calloc((size_t)parts->cnt + 1, sizeof(*ps));
    size_t n = 0;
    for (int i = 0; i < parts->cnt; i++) {
        struct wpart *p = part_find(w, parts->elems[i].topic, parts->elems[i].partition);
        if (p) {
            p->revoking = true;
            ps[n++] = p;
        }
    }
    if (!lost) {
        int64_t deadline = time_mono_ms() + w->o.grace_ms;
        for (;;) {
            int timeout = service(w, false);
            int64_t now = time_mono_ms();
            int64_t end =
                w->stopping && w->stop_deadline_ms < deadline ? w->stop_deadline_ms : deadline;
            if (!parts_busy(ps, n) || now >= end)
                break;
            wait_events(w, (int)(end - now < timeout ? end - now : timeout));
        }
        commit(w, true, ps, n);
    }
    rd_kafka_topic_partition_list_t *resume = rd_kafka_topic_partition_list_new(4);
    for (size_t i = 0; i < n; i++)
        if (ps[i]->paused)
            rd_kafka_topic_partition_list_add(resume, ps[i]->topic, ps[i]->partition);
    if (resume->cnt)
        rd_kafka_resume_partitions(w->rk, resume); /* a later owner (maybe us) starts afresh */
    rd_kafka_topic_partition_list_destroy(resume);
    for (size_t i = 0; i < n; i++)
        part_drop(w, ps[i]);
    mem_free(ps);
}

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    struct worker *w = opaque;
    bool coop = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
    char list[1024];
    format_parts(parts, list, sizeof(list));
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        for (int i = 0; i < parts->cnt; i++)
            part_add(w, parts->elems[i].topic, parts->elems[i].partition);
        if (parts->cnt > 0)
            w->ever_assigned = true;
        log_info("partitions_assigned", "partitions=\"%s\" count=%d", list, parts->cnt);
        if (coop)
            rd_kafka_error_destroy(rd_kafka_incremental_assign(rk, parts));
        else
            rd_kafka_assign(rk, parts);
        return;
    }
    bool lost = rd_kafka_assignment_lost(rk);
    log_info(lost ? "partitions_lost" : "partitions_revoked", "partitions=\"%s\" count=%d", list,
             parts->cnt);
    give_up(w, parts, lost);
    if (coop)
        rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
    else
        rd_kafka_assign(rk, NULL);
}

/* --- setup and shutdown ------------------------------------------------------------------- */

static rd_kafka_t *consumer_new(struct worker *w)
{
    struct cli_common *c = w->c;
    rd_kafka_conf_t *conf = cli_conf_new(c);
    if (cli_conf_set(c, conf, "group.id", w->o.group) ||
        cli_conf_set(c, conf, "enable.auto.commit", "false") ||
        cli_conf_set(c, conf, "enable.auto.offset.store", "false") ||
        cli_conf_set(c, conf, "auto.offset.reset", "earliest") ||
        cli_conf_set(c, conf, "allow.auto.create.topics", "false") ||
        /* roundrobin over the partitions of both topics gives every worker its share of each:
         * cooperative-sticky balances only the total, and can leave a worker with nothing but
         * retry partitions. Eager rebalances stop every partition for a moment (give_up()
         * lets running handlers finish first); -X may choose cooperative-sticky anyway. */
        cli_conf_set(c, conf, "partition.assignment.strategy", "roundrobin") ||
        cli_conf_set(c, conf, "enable.partition.eof", w->o.drain ? "true" : "false") ||
        cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_conf_set_offset_commit_cb(conf, commit_cb);
    rd_kafka_conf_set_opaque(conf, w);
    return cli_client_new(c, RD_KAFKA_CONSUMER, conf);
}

static rd_kafka_t *producer_new(struct worker *w)
{
    struct cli_common *c = w->c;
    rd_kafka_conf_t *conf = cli_conf_new(c);
    /* acks=all: a failed record is committed only once its copy is durable. No timeout: the
     * copy is retried until delivered (or until shutdown purges it, uncommitted). Idempotence:
     * a retried send of a copy whose acknowledgement was lost is not written twice. */
    if (cli_conf_set(c, conf, "acks", "all") || cli_conf_set(c, conf, "message.timeout.ms", "0") ||
        cli_conf_set(c, conf, "enable.idempotence", "true") ||
        cli_conf_set(c, conf, "linger.ms", "1") || cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_conf_set_opaque(conf, w);
    return cli_client_new(c, RD_KAFKA_PRODUCER, conf);
}

/* Creates the retry and dead-letter topics (partitions: the jobs topic's) where missing. */
static int create_topics(struct worker *w, int partitions)
{
    struct cli_common *c = w->c;
    char err[512];
    const char *names[2] = {w->o.retry_topic, w->o.dlq_topic};
    rd_kafka_NewTopic_t *nt[2];
    for (int i = 0; i < 2; i++) {
        nt[i] = rd_kafka_NewTopic_new(names[i], partitions, -1, err, sizeof(err));
        if (!nt[i]) {
            cli_error(c, "topic '%s': %s", names[i], err);
            if (i)
                rd_kafka_NewTopic_destroy(nt[0]);
            return -1;
        }
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(w->prk);
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(w->prk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(ao, c->timeout_ms, err, sizeof(err));
    rd_kafka_AdminOptions_set_operation_timeout(ao, c->timeout_ms, err, sizeof(err));
    rd_kafka_CreateTopics(w->prk, nt, 2, ao, q);
    int rc = -1;
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, c->timeout_ms + 5000);
    if (!ev) {
        cli_report_cluster_error(c, "create topics", RD_KAFKA_RESP_ERR__TIMED_OUT);
    } else if (rd_kafka_event_error(ev)) {
        cli_error(c, "create topics %s, %s: %s", names[0], names[1],
                  rd_kafka_event_error_string(ev));
    } else {
        size_t n;
        const rd_kafka_topic_result_t **res =
            rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
        rc = 0;
        for (size_t i = 0; i < n; i++) {
            rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);
            if (!e) {
                log_info("topic_created", "topic=%s partitions=%d",
                         rd_kafka_topic_result_name(res[i]), partitions);
            } else if (e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
                const char *why = rd_kafka_topic_result_error_string(res[i]);
                cli_error(c, "cannot create topic '%s': %s", rd_kafka_topic_result_name(res[i]),
                          why && why[0] ? why : rd_kafka_err2str(e));
                rc = -1;
            }
        }
    }
    if (ev)
        rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy_array(nt, 2);
    return rc;
}

static int setup(struct worker *w)
{
    struct cli_common *c = w->c;
    cli_log_hide_role_warnings(true); /* -X goes to both clients */
    w->rk = consumer_new(w);
    if (!w->rk)
        return -1;
    w->prk = producer_new(w);
    if (!w->prk)
        return -1;
    int partitions;
    /* the consumer's Metadata request does not auto-create the jobs topic */
    if (cli_topic_partition_count(c, w->rk, w->o.topic, &partitions) != 0)
        return -1;
    if (create_topics(w, partitions) != 0)
        return -1;
    int cnt;
    if (cli_topic_partition_count(c, w->rk, w->o.retry_topic, &cnt) != 0)
        return -1;
    w->retry_partitions = cnt;
    if (cli_topic_partition_count(c, w->rk, w->o.dlq_topic, &cnt) != 0)
        return -1;
    w->dlq_partitions = cnt;
    w->retry_rkt = rd_kafka_topic_new(w->prk, w->o.retry_topic, NULL);
    w->dlq_rkt = rd_kafka_topic_new(w->prk, w->o.dlq_topic, NULL);
    if (!w->retry_rkt || !w->dlq_rkt) {
        cli_error(c, "topic handles: %s", rd_kafka_err2str(rd_kafka_last_error()));
        return -1;
    }

    rd_kafka_poll_set_consumer(w->rk);
    rd_kafka_queue_t *cq = rd_kafka_queue_get_consumer(w->rk);
    rd_kafka_queue_io_event_enable(cq, w->wake_wr, "c", 1);
    rd_kafka_queue_destroy(cq);
    rd_kafka_queue_t *pq = rd_kafka_queue_get_main(w->prk);
    rd_kafka_queue_io_event_enable(pq, w->wake_wr, "p", 1);
    rd_kafka_queue_destroy(pq);

    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(2);
    rd_kafka_topic_partition_list_add(topics, w->o.topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_topic_partition_list_add(topics, w->o.retry_topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(w->rk, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (err) {
        cli_error(c, "cannot subscribe to '%s' and '%s': %s", w->o.topic, w->o.retry_topic,
                  rd_kafka_err2str(err));
        return -1;
    }
    char b[128], t[32], g[32];
    char cmd[512];
    log_quote(cmd, sizeof(cmd), w->o.cmd[0], strlen(w->o.cmd[0]));
    log_info("worker_started",
             "topic=%s retry_topic=%s dlq_topic=%s group=%s partitions=%d concurrency=%d "
             "order=%s max_attempts=%d backoff=%s timeout=%s grace=%s cmd=%s",
             w->o.topic, w->o.retry_topic, w->o.dlq_topic, w->o.group, partitions, w->o.concurrency,
             w->o.order == PTRACK_ORDER_KEY    ? "key"
             : w->o.order == PTRACK_ORDER_NONE ? "none"
                                               : "partition",
             w->o.max_attempts, backoff_format(&w->o.backoff, b, sizeof(b)),
             w->o.run_timeout_ms ? duration_format(w->o.run_timeout_ms, t, sizeof(t)) : "none",
             duration_format(w->o.grace_ms, g, sizeof(g)), cmd);
    return 0;
}

/* After the loop: kill what still runs, give up undelivered copies, commit, leave the group. */
static void finish(struct worker *w)
{
    for (size_t i = 0; i < w->n_running; i++)
        kill_job(w->running[i], true);
    int64_t until = time_mono_ms() + REAP_AFTER_KILL_MS;
    while (w->n_running > 0 && time_mono_ms() < until) {
        int timeout = service(w, false);
        wait_events(w, timeout < 50 ? timeout : 50);
    }
    /* copies not acknowledged by now: their records stay uncommitted and run again later */
    w->purging = true;
    rd_kafka_purge(w->prk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_flush(w->prk, 1000);
    rd_kafka_poll(w->prk, 0);
    while (w->republish) {
        struct job *j = w->republish;
        w->republish = j->republish_next;
        j->in_republish = false;
        if (!j->part)
            job_free(j);
    }
    commit(w, true, NULL, 0);
    /* leaves the group; the revocation callback drops every partition */
    rd_kafka_resp_err_t err = rd_kafka_consumer_close(w->rk);
    if (err)
        log_warn("consumer_close_failed", "error=\"%s\"", rd_kafka_err2str(err));
    while (w->n_parts)
        part_drop(w, w->parts[0]);
    reap(w);
    /* handlers that ignored SIGKILL's arrival so far (uninterruptible sleep) are left behind */
    for (size_t i = 0; i < w->n_running; i++)
        job_free(w->running[i]);
    w->n_running = 0;
}

static void report(const struct worker *w)
{
    double busy_s = w->st.first_start_ms && w->st.last_end_ms > w->st.first_start_ms
                        ? (double)(w->st.last_end_ms - w->st.first_start_ms) / 1000.0
                        : 0;
    log_info("worker_stopped",
             "taken=%" PRIu64 " runs=%" PRIu64 " succeeded=%" PRIu64 " failed=%" PRIu64
             " retried=%" PRIu64 " dead_lettered=%" PRIu64 " abandoned=%" PRIu64
             " busy_s=%.3f runs_per_s=%.1f",
             w->st.taken, w->st.runs, w->st.succeeded, w->st.failed, w->st.retried, w->st.dead,
             w->st.abandoned, busy_s, busy_s > 0 ? (double)w->st.runs / busy_s : 0.0);
}

static void worker_free(struct worker *w)
{
    if (w->retry_rkt)
        rd_kafka_topic_destroy(w->retry_rkt);
    if (w->dlq_rkt)
        rd_kafka_topic_destroy(w->dlq_rkt);
    if (w->prk) {
        rd_kafka_queue_t *pq = rd_kafka_queue_get_main(w->prk);
        rd_kafka_queue_io_event_enable(pq, -1, NULL, 0);
        rd_kafka_queue_destroy(pq);
        rd_kafka_destroy(w->prk);
    }
    if (w->rk)
        rd_kafka_destroy(w->rk);
    sig_wake_fd = -1;
    if (w->wake_rd >= 0)
        close(w->wake_rd);
    if (w->wake_wr >= 0)
        close(w->wake_wr);
    mem_free(w->running);
    mem_free(w->parts);
    mem_free(w->base_env);
    schema_decoder_free(w->decoder);
}

/* fds 0-2 must be open: a memfd or pipe landing on one of them would be dup2()ed onto itself
 * in the handler and so keep its close-on-exec flag. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int nfd = open("/dev/null", O_RDWR);
            if (nfd >= 0 && nfd != fd) {
                dup2(nfd, fd);
                close(nfd);
            }
        }
    }
}

static int worker_run(struct cli_common *c, struct worker_opts *o)
{
    struct worker w;
    memset(&w, 0, sizeof(w));
    w.c = c;
    w.o = *o;
    w.wake_rd = w.wake_wr = -1;
    ensure_std_fds();
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        cli_error(c, "pipe: %s", strerror(errno));
        return CLI_EXIT_FAIL;
    }
    w.wake_rd = fds[0];
    w.wake_wr = fds[1];
    sig_wake_fd = w.wake_wr;
    signals_install();
    w.running = mem_calloc((size_t)o->concurrency, sizeof(*w.running));
    w.base_env = worker_base_env();
    if (o->decode)
        w.decoder = schema_decoder_new(c, o->registry);

    int rc = CLI_EXIT_FAIL;
    if (setup(&w) != 0)
        goto out;
    for (;;) {
        int timeout = service(&w, true);
        bool busy = w.n_running || w.inflight || w.republish;
        if (w.stopping && (!busy || time_mono_ms() >= w.stop_deadline_ms))
            break;
        if (!w.stopping && w.o.drain && drained(&w)) {
            begin_stop(&w, "drained");
            continue;
        }
        wait_events(&w, timeout);
    }
    finish(&w);
    report(&w);
    if (w.failed)
        rc = CLI_EXIT_FAIL;
    else if (cli_signal == SIGINT)
        rc = CLI_EXIT_INTERRUPTED;
    else
        rc = CLI_EXIT_OK;
out:
    worker_free(&w);
    return rc;
}

int cli_worker(int argc, char **argv)
{
    struct cli_common c;
    cli_common_init(&c, "worker");
    struct worker_opts o = {
        .concurrency = 1,
        .max_attempts = 5,
        .grace_ms = 30000,
        .order = PTRACK_ORDER_PARTITION,
    };
    int rc;
    if (parse_args(&c, &o, argc, argv) != 0) {
        fprintf(stderr, "Run 'streampulse worker --help' for usage.\n");
        rc = CLI_EXIT_USAGE;
    } else if (c.help) {
        fputs(worker_help, stdout);
        rc = CLI_EXIT_OK;
    } else {
        rc = worker_run(&c, &o);
    }
    mem_free(o.retry_topic);
    mem_free(o.dlq_topic);
    cli_common_free(&c);
    return rc;
}
