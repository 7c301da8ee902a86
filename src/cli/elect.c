/* `streampulse leader-election`: Kafka's kafka-leader-election.sh. Sends one ElectLeaders (v2,
 * KIP-460) raw (cli/kraw.h: librdkafka 2.0.2 has no call for it) to the first broker of -b that
 * answers, which finds each partition's leader and has it hand the leadership to the
 * preferred replica (broker/elect.h), and prints the results as kafka-leader-election.sh does:
 *
 *   Successfully completed leader election (PREFERRED) for partitions t-0, t-1
 *   Valid replica already elected for partitions t-2
 *   Error completing leader election (PREFERRED) for partition: t-3: NAME: message
 *
 * (each line only when it has partitions; with --all-topic-partitions the broker leaves out
 * those that need no election, so nothing may be printed). Exit 0 when no partition failed, 1
 * when one did ("N replica(s) could not be elected" on stderr) or the request was refused ("Not
 * authorized to perform leader election" without ALTER on the cluster), 2 for a bad command
 * line or election file.
 *
 * Partitions: --all-topic-partitions (topic_partitions null), --topic T --partition P, --topic T
 * alone (every partition of T, from Metadata: an extension of kafka-leader-election.sh, which
 * requires --partition), or --path-to-json-file F in Kafka's format
 * {"partitions": [{"topic": "foo", "partition": 1}, ...]} (members other than these ignored,
 * duplicates refused, as Kafka refuses them). The request waits --timeout for the elections.
 *
 * Like the other raw commands the request goes over PLAINTEXT; -X properties are checked, and
 * a security.protocol other than PLAINTEXT is refused (exit 2) rather than ignored. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/json_parse.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "cli/common.h"
#include "cli/kraw.h"

#define KEY_ELECT_LEADERS 43
#define ELECT_VERSION 2
#define ERR_CLUSTER_AUTHORIZATION_FAILED 31
#define ERR_ELECTION_NOT_NEEDED 84
#define JSON_FILE_MAX (16u << 20)
#define PARTITIONS_MAX (1 << 20) /* the broker's bound on one request */

enum {
    OPT_ELECTION_TYPE = CLI_OPT_CMD,
    OPT_ALL,
    OPT_TOPIC,
    OPT_PARTITION,
    OPT_JSON_FILE,
};

static const char elect_help[] =
    "Usage: streampulse leader-election --election-type preferred|unclean\n"
    "           (--all-topic-partitions | --topic T [--partition P] | --path-to-json-file F)\n"
    "           [OPTIONS]\n"
    "\n"
    "Elects partition leaders, as kafka-leader-election.sh does (ElectLeaders). PREFERRED moves\n"
    "the leadership of each partition to its preferred replica (the first of its replicas)\n"
    "when that broker is live and has caught up, and waits until it leads; a partition it\n"
    "leads already needs no election. UNCLEAN cannot happen here (a partition is a Raft group,\n"
    "whose leader needs a majority of its replicas): a partition with a leader needs no\n"
    "election, one without gets ELIGIBLE_LEADERS_NOT_AVAILABLE.\n"
    "\n"
    "Options:\n"
    "      --election-type T      preferred or unclean (required)\n"
    "      --all-topic-partitions every partition of every topic; those that need no\n"
    "                             election are not listed\n"
    "      --topic T              the partitions of topic T (all of them without --partition)\n"
    "      --partition P          only partition P of --topic\n"
    "      --path-to-json-file F  the partitions F lists: {\"partitions\": [{\"topic\": \"foo\",\n"
    "                             \"partition\": 1}, ...]}\n"
    "The request goes over PLAINTEXT to the first broker of -b that answers, and waits up to\n"
    "--timeout for the elections. Exit 0 when no partition failed, 1 otherwise.\n"
    "\n" CLI_COMMON_HELP;

struct tp {
    char *topic; /* owned */
    int32_t partition;
};

struct tp_list {
    struct tp *v;
    size_t n;
    size_t cap;
};

static void tp_add(struct tp_list *l, const char *topic, size_t len, int32_t partition)
{
    MEM_GROW(l->v, l->cap, l->n + 1);
    char *t = mem_alloc(len + 1);
    memcpy(t, topic, len);
    t[len] = '\0';
    l->v[l->n++] = (struct tp){t, partition};
}

static void tp_free(struct tp_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        mem_free(l->v[i].topic);
    mem_free(l->v);
    *l = (struct tp_list){0};
}

static int tp_cmp(const void *a, const void *b)
{
    const struct tp *x = a, *y = b;
    int c = strcmp(x->topic, y->topic);
    return c ? c : (x->partition > y->partition) - (x->partition < y->partition);
}

/* Kafka's names for the codes an ElectLeaders answer carries; librdkafka's for the rest. */
static const char *error_name(int16_t ec)
{
    switch (ec) {
    case 3:
        return "UNKNOWN_TOPIC_OR_PARTITION";
    case 6:
        return "NOT_LEADER_OR_FOLLOWER";
    case 7:
        return "REQUEST_TIMED_OUT";
    case 31:
        return "CLUSTER_AUTHORIZATION_FAILED";
    case 42:
        return "INVALID_REQUEST";
    case 80:
        return "PREFERRED_LEADER_NOT_AVAILABLE";
    case 83:
        return "ELIGIBLE_LEADERS_NOT_AVAILABLE";
    case 84:
        return "ELECTION_NOT_NEEDED";
    default:
        return rd_kafka_err2name((rd_kafka_resp_err_t)ec);
    }
}

/* The partitions of F (Kafka's election file) into *l, sorted; 0, or -1 with the reason said. */
static int read_json_file(const struct cli_common *c, const char *path, struct tp_list *l)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_error(c, "--path-to-json-file: cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    struct strbuf text;
    strbuf_init(&text);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && text.len <= JSON_FILE_MAX)
        strbuf_append(&text, buf, n);
    bool failed = ferror(f) != 0;
    fclose(f);
    int rc = -1;
    struct json_doc doc = {0};
    char err[256];
    const struct json_value *parts = NULL;
    if (failed || text.len > JSON_FILE_MAX) {
        cli_error(c, "--path-to-json-file: %s: %s", path,
                  failed ? "read error" : "larger than 16 MiB");
        goto out;
    }
    struct json_limits lim = {.depth_max = 8, .values_max = 4 * PARTITIONS_MAX};
    if (json_parse(&doc, text.p ? text.p : "", text.len, &lim, err, sizeof(err)) != 0) {
        cli_error(c, "--path-to-json-file: %s is not JSON (%s)", path, err);
        goto out;
    }
    parts = json_get(doc.root, "partitions", JSON_ARRAY);
    if (!parts) {
        cli_error(c,
                  "--path-to-json-file: %s: replica election data is missing a \"partitions\" "
                  "array",
                  path);
        goto out;
    }
    size_t i = 0;
    for (const struct json_value *e = parts->child; e; e = e->next, i++) {
        const struct json_value *t = json_get(e, "topic", JSON_STRING);
        int64_t p = json_get_int(e, "partition", -1);
        if (!t || t->str_len == 0 || memchr(t->str, 0, t->str_len) || p < 0 || p > INT32_MAX) {
            cli_error(c,
                      "--path-to-json-file: %s: entry %zu needs a \"topic\" (a non-empty "
                      "string) and a \"partition\" (an integer >= 0)",
                      path, i);
            goto out;
        }
        tp_add(l, t->str, t->str_len, (int32_t)p);
    }
    if (l->n > PARTITIONS_MAX) {
        cli_error(c, "--path-to-json-file: %s: more than %d partitions", path, PARTITIONS_MAX);
        goto out;
    }
    qsort(l->v, l->n, sizeof(*l->v), tp_cmp);
    for (size_t k = 1; k < l->n; k++)
        if (tp_cmp(&l->v[k - 1], &l->v[k]) == 0) {
            cli_error(c,
                      "--path-to-json-file: %s: replica election data contains duplicate "
                      "partitions: %s-%d",
                      path, l->v[k].topic, (int)l->v[k].partition);
            goto out;
        }
    rc = 0;
out:
    json_doc_free(&doc);
    strbuf_destroy(&text);
    return rc;
}

/* The ElectLeaders v2 body: l (sorted by topic) or, with all, null. */
static void build_body(struct strbuf *b, int8_t type, bool all, const struct tp_list *l,
                       int timeout_ms)
{
    kraw_w8(b, type);
    if (all) {
        kraw_warray(b, -1);
    } else {
        int32_t topics = 0;
        for (size_t i = 0; i < l->n; i++)
            topics += i == 0 || strcmp(l->v[i].topic, l->v[i - 1].topic) != 0;
        kraw_warray(b, topics);
        for (size_t i = 0; i < l->n;) {
            size_t j = i;
            while (j < l->n && strcmp(l->v[j].topic, l->v[i].topic) == 0)
                j++;
            kraw_wcstr(b, l->v[i].topic);
            kraw_warray(b, (int32_t)(j - i));
            for (size_t k = i; k < j; k++)
                kraw_w32(b, l->v[k].partition);
            kraw_wuvar(b, 0);
            i = j;
        }
    }
    kraw_w32(b, timeout_ms);
    kraw_wuvar(b, 0);
}

/* Prints "<head> t-0, t-1" when the list is not empty. */
static void print_list(const char *head, const struct strbuf *list)
{
    if (list->len > 0)
        printf("%s %s\n", head, strbuf_str(list));
}

static void list_add(struct strbuf *list, const char *topic, int32_t partition)
{
    if (list->len > 0)
        strbuf_append(list, ", ", 2);
    strbuf_printf(list, "%s-%d", topic, (int)partition);
}

/* Sends the request and prints the answer. Returns a CLI_EXIT_* code. */
static int elect(const struct cli_common *c, int8_t type, bool all, const struct tp_list *l)
{
    const char *tname = type == 0 ? "PREFERRED" : "UNCLEAN";
    struct strbuf body, resp, ok, noop, failed_lines;
    strbuf_init(&body);
    strbuf_init(&resp);
    strbuf_init(&ok);
    strbuf_init(&noop);
    strbuf_init(&failed_lines);
    build_body(&body, type, all, l, c->timeout_ms);
    char err[512];
    int rc = CLI_EXIT_FAIL;
    if (kraw_call(c->brokers, KEY_ELECT_LEADERS, ELECT_VERSION, &body, c->timeout_ms + 5000, &resp,
                  err, sizeof(err)) != 0) {
        cli_error(c, "ElectLeaders: %s", err);
        goto out;
    }
    struct kraw_reader r = {(const uint8_t *)resp.p, (const uint8_t *)resp.p + resp.len, 0};
    (void)kraw_r32(&r); /* throttle */
    int16_t top = kraw_r16(&r);
    int failed = 0;
    int32_t nt = kraw_rarray(&r);
    for (int32_t i = 0; i < nt && !r.bad; i++) {
        char topic[256], msg[1024];
        kraw_rcstr(&r, topic, sizeof(topic));
        int32_t np = kraw_rarray(&r);
        for (int32_t j = 0; j < np && !r.bad; j++) {
            int32_t p = kraw_r32(&r);
            int16_t ec = kraw_r16(&r);
            if (!kraw_rcstr(&r, msg, sizeof(msg)))
                msg[0] = '\0';
            kraw_rtags(&r);
            if (r.bad)
                break;
            if (ec == 0) {
                list_add(&ok, topic, p);
            } else if (ec == ERR_ELECTION_NOT_NEEDED) {
                list_add(&noop, topic, p);
            } else if (ec == ERR_CLUSTER_AUTHORIZATION_FAILED) {
                top = ec;
            } else {
                strbuf_printf(&failed_lines,
                              "Error completing leader election (%s) for partition: %s-%d: "
                              "%s%s%s\n",
                              tname, topic, (int)p, error_name(ec), msg[0] ? ": " : "", msg);
                failed++;
            }
        }
        kraw_rtags(&r);
    }
    kraw_rtags(&r);
    if (r.bad || r.p != r.end) {
        cli_error(c, "ElectLeaders: malformed answer");
        goto out;
    }
    if (top == ERR_CLUSTER_AUTHORIZATION_FAILED) {
        printf("Not authorized to perform leader election\n");
        cli_error(c, "CLUSTER_AUTHORIZATION_FAILED: ElectLeaders needs ALTER on the cluster");
        goto out;
    }
    if (top != 0) {
        cli_error(c, "ElectLeaders refused: %s", error_name(top));
        goto out;
    }
    char head[96];
    snprintf(head, sizeof(head), "Successfully completed leader election (%s) for partitions",
             tname);
    print_list(head, &ok);
    print_list("Valid replica already elected for partitions", &noop);
    if (failed_lines.len > 0)
        fputs(strbuf_str(&failed_lines), stdout);
    if (failed > 0) {
        cli_error(c, "%d replica(s) could not be elected", failed);
        goto out;
    }
    rc = CLI_EXIT_OK;
out:
    strbuf_destroy(&body);
    strbuf_destroy(&resp);
    strbuf_destroy(&ok);
    strbuf_destroy(&noop);
    strbuf_destroy(&failed_lines);
    return rc;
}

/* Whether the -X security.protocol in effect (the last one; none: PLAINTEXT) is PLAINTEXT. */
static bool plaintext(const struct cli_common *c)
{
    static const char key[] = "security.protocol=";
    const char *proto = "plaintext";
    for (size_t i = 0; i < c->props_len; i++)
        if (strncmp(c->props[i], key, sizeof(key) - 1) == 0)
            proto = c->props[i] + sizeof(key) - 1;
    return strcasecmp(proto, "plaintext") == 0;
}

/* Every partition of topic (Metadata through librdkafka, -X applied) into *l. */
static int topic_partitions(const struct cli_common *c, const char *topic, struct tp_list *l)
{
    rd_kafka_conf_t *conf = cli_conf_new(c);
    if (cli_conf_set(c, conf, "allow.auto.create.topics", "false") ||
        cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    rd_kafka_t *rk = cli_client_new(c, RD_KAFKA_PRODUCER, conf);
    if (!rk)
        return -1;
    int n = 0;
    int rc = cli_topic_partition_count(c, rk, topic, &n);
    rd_kafka_destroy(rk);
    for (int p = 0; rc == 0 && p < n; p++)
        tp_add(l, topic, strlen(topic), p);
    return rc;
}

int cli_leader_election(int argc, char **argv)
{
    static const struct option longopts[] = {
        CLI_COMMON_LONGOPTS,
        {"election-type", required_argument, NULL, OPT_ELECTION_TYPE},
        {"all-topic-partitions", no_argument, NULL, OPT_ALL},
        {"topic", required_argument, NULL, OPT_TOPIC},
        {"partition", required_argument, NULL, OPT_PARTITION},
        {"path-to-json-file", required_argument, NULL, OPT_JSON_FILE},
        {NULL, 0, NULL, 0},
    };
    struct cli_common c;
    cli_common_init(&c, "leader-election");
    int rc = CLI_EXIT_USAGE, opt;
    int8_t type = -1;
    bool all = false;
    const char *topic = NULL, *json = NULL;
    long long partition = -1;
    struct tp_list l = {0};
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, longopts, NULL)) != -1) {
        int h = cli_common_opt(&c, opt, optarg);
        if (h < 0)
            goto out;
        if (h == 1)
            continue;
        if (opt == OPT_ELECTION_TYPE) {
            if (strcasecmp(optarg, "preferred") == 0) {
                type = 0;
            } else if (strcasecmp(optarg, "unclean") == 0) {
                type = 1;
            } else {
                cli_error(&c, "--election-type: '%s' is not preferred or unclean", optarg);
                goto out;
            }
        } else if (opt == OPT_ALL) {
            all = true;
        } else if (opt == OPT_TOPIC) {
            topic = optarg;
        } else if (opt == OPT_PARTITION) {
            if (cli_parse_int(&c, "--partition", optarg, 0, INT32_MAX, &partition) != 0)
                goto out;
        } else if (opt == OPT_JSON_FILE) {
            json = optarg;
        } else {
            cli_error(&c, "unknown option or missing value: '%s'", argv[optind - 1]);
            goto out;
        }
    }
    if (c.help) {
        fputs(elect_help, stdout);
        rc = CLI_EXIT_OK;
        goto out;
    }
    if (optind < argc) {
        cli_error(&c, "unexpected argument '%s'", argv[optind]);
        goto out;
    }
    if (type < 0) {
        cli_error(&c, "missing required option: --election-type (preferred or unclean)");
        goto out;
    }
    if ((all ? 1 : 0) + (topic ? 1 : 0) + (json ? 1 : 0) != 1) {
        cli_error(&c, "one and only one of these options is required: --topic, "
                      "--all-topic-partitions, --path-to-json-file");
        goto out;
    }
    if (partition >= 0 && !topic) {
        cli_error(&c, "--partition is only allowed with --topic");
        goto out;
    }
    if (topic && (!topic[0] || strlen(topic) > 249)) {
        cli_error(&c, "--topic: a topic name has 1 to 249 characters");
        goto out;
    }
    if (!plaintext(&c)) {
        cli_error(&c, "the request is sent raw over PLAINTEXT (librdkafka 2.0.2 has no "
                      "ElectLeaders): give -b a PLAINTEXT listener and no other "
                      "security.protocol");
        goto out;
    }
    rd_kafka_conf_t *conf = cli_conf_new(&c); /* the -X given must be valid ones */
    int bad = cli_conf_apply_user(&c, conf);
    rd_kafka_conf_destroy(conf);
    if (bad)
        goto out;
    if (json && read_json_file(&c, json, &l) != 0)
        goto out;
    rc = CLI_EXIT_FAIL;
    if (topic && partition >= 0)
        tp_add(&l, topic, strlen(topic), (int32_t)partition);
    else if (topic && topic_partitions(&c, topic, &l) != 0)
        goto out;
    rc = elect(&c, type, all, &l);
out:
    tp_free(&l);
    cli_common_free(&c);
    return rc;
}
