/* `streampulse cluster status`: asks brokers' admin listeners for GET /v1/cluster and prints the
 * cluster's brokers, its controller and a table of every partition the answering nodes replicate.
 *
 * Transport: cli/admin_client.h (one HTTP/1.0 GET per node, plain or HTTPS with Basic
 * credentials, --timeout per node). The answer is untrusted: it is parsed with base/json_parse.h
 * (bounded depth and size) and every field is looked up with its type checked; anything
 * missing prints as "-".
 *
 * Merging: each node lists only its own replicas, and only a partition's leader knows its
 * followers' progress. With several --admin addresses every node is asked; for each
 * (topic, partition) the entry of the node that leads it wins, else the first one seen. Brokers
 * and controller come from the first node that answered. A node that does not answer is
 * reported on stderr; the command fails only when none answers. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_parse.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "cli/admin_client.h"
#include "cli/common.h"
#include "cli/reassign.h"
#include "cli/voters.h"

#define JSON_DEPTH 32
#define JSON_VALUES_MAX (1u << 22)

/* ---- the command ---- */

struct node_answer {
    const char *addr;
    struct json_doc doc;
    const struct json_value *root; /* doc.root, a JSON object, or NULL */
};

/* Leader entries first, then the first seen: index into parts of the chosen one, per key. */
struct pick {
    const struct json_value *part;
    bool leader;
};

static void print_replicas(const struct json_value *p)
{
    const struct json_value *r = json_get(p, "replicas", JSON_ARRAY);
    char line[128] = "";
    size_t used = 0;
    for (const struct json_value *x = r ? r->child : NULL; x && used + 24 < sizeof(line);
         x = x->next) /* 24: ",%lld" */
        if (x->type == JSON_NUMBER)
            used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%lld", used ? "," : "",
                                     (long long)json_int_or(x, -1));
    printf("  %-10s", used ? line : "-");
}

static void print_lags(const struct json_value *p, bool leader)
{
    const struct json_value *f = json_get(p, "followers", JSON_ARRAY);
    if (!leader || !f) {
        printf("  (no leader answered)");
        return;
    }
    printf(" ");
    for (const struct json_value *x = f->child; x; x = x->next) {
        const struct json_value *lag = json_get(x, "lag", JSON_NUMBER);
        long long id = json_get_int(x, "id", -1);
        if (lag)
            printf(" %lld:%lld", id, (long long)json_int_or(lag, -1));
        else
            printf(" %lld:?", id);
    }
}

static int pick_cmp(const void *x, const void *y)
{
    const struct pick *a = x, *b = y;
    int c = strcmp(json_get_str(a->part, "topic", ""), json_get_str(b->part, "topic", ""));
    if (c != 0)
        return c;
    int64_t pa = json_get_int(a->part, "partition", -1), pb = json_get_int(b->part, "partition", -1);
    return (pa > pb) - (pa < pb);
}

static int status_print(struct node_answer *ans, size_t n)
{
    const struct json_value *first = NULL;
    for (size_t i = 0; i < n && !first; i++)
        first = ans[i].root;
    printf("cluster %s\n", json_get_str(first, "cluster_id", "-"));
    const struct json_value *ctl = json_get(first, "controller", JSON_OBJECT);
    long long cl = json_get_int(ctl, "leader", -1);
    const struct json_value *ct = json_get(ctl, "term", JSON_NUMBER);
    char term[32] = "unknown";
    if (ct)
        snprintf(term, sizeof(term), "%lld", (long long)json_int_or(ct, -1));
    char voters[128] = "";
    const struct json_value *vs = json_get(ctl, "voters", JSON_ARRAY);
    size_t at = 0;
    for (const struct json_value *x = vs ? vs->child : NULL; x && at < sizeof(voters) - 24;
         x = x->next)
        at += (size_t)snprintf(voters + at, sizeof(voters) - at, "%s%lld",
                               at ? "," : ", voters ", (long long)json_int_or(x, -1));
    if (cl >= 0)
        printf("controller: leader %lld, term %s%s\n", cl, term, voters);
    else
        printf("controller: no leader known, term %s%s\n", term, voters);
    printf("\nbrokers:\n  %-4s %-22s %-22s %s\n", "ID", "ADDRESS", "CLUSTER ADDRESS", "STATE");
    const struct json_value *brs = json_get(first, "brokers", JSON_ARRAY);
    for (const struct json_value *br = brs ? brs->child : NULL; br; br = br->next) {
        char addr[300];
        snprintf(addr, sizeof(addr), "%.255s:%lld", json_get_str(br, "host", "?"),
                 (long long)json_get_int(br, "port", -1));
        const struct json_value *fenced = json_get(br, "fenced", JSON_BOOL);
        printf("  %-4lld %-22s %-22s %s\n", (long long)json_get_int(br, "id", -1), addr,
               json_get_str(br, "cluster_address", "-"),
               fenced && fenced->boolean ? "fenced" : "live");
    }

    size_t cap = 0, np = 0;
    for (size_t i = 0; i < n; i++) {
        const struct json_value *ps = json_get(ans[i].root, "partitions", JSON_ARRAY);
        cap += ps ? ps->n : 0;
    }
    struct pick *picks = mem_calloc(cap ? cap : 1, sizeof(*picks));
    for (size_t i = 0; i < n; i++) {
        const struct json_value *ps = json_get(ans[i].root, "partitions", JSON_ARRAY);
        for (const struct json_value *p = ps ? ps->child : NULL; p; p = p->next) {
            bool lead = strcmp(json_get_str(p, "role", ""), "leader") == 0;
            size_t j = 0;
            for (; j < np; j++)
                if (pick_cmp(&picks[j], &(struct pick){p, lead}) == 0)
                    break;
            if (j == np)
                picks[np++] = (struct pick){p, lead};
            else if (lead && !picks[j].leader)
                picks[j] = (struct pick){p, lead};
        }
    }
    qsort(picks, np, sizeof(*picks), pick_cmp);
    printf("\npartitions:\n  %-24s %4s %6s %6s  %-10s %10s  %s\n", "TOPIC", "PART", "LEADER",
           "TERM", "REPLICAS", "HW", "FOLLOWER LAG (id:records)");
    for (size_t i = 0; i < np; i++) {
        const struct json_value *p = picks[i].part;
        long long leader = json_get_int(p, "leader", -1);
        char lbuf[24] = "none";
        if (leader >= 0)
            snprintf(lbuf, sizeof(lbuf), "%lld", leader);
        printf("  %-24s %4lld %6s %6lld", json_get_str(p, "topic", "?"),
               (long long)json_get_int(p, "partition", -1), lbuf,
               (long long)json_get_int(p, "term", -1));
        print_replicas(p);
        printf(" %10lld", (long long)json_get_int(p, "high_watermark", -1));
        print_lags(p, picks[i].leader);
        printf("\n");
    }
    if (np == 0)
        printf("  (none)\n");
    mem_free(picks);
    return CLI_EXIT_OK;
}

static const char status_help[] =
    "Usage: streampulse cluster status [--admin HOST:PORT[,...]] [--timeout SECS]\n"
    "           [--admin-cafile PEM [--admin-user NAME [--admin-password-stdin |\n"
    "            --admin-password-file FILE]]]\n"
    "\n"
    "Asks brokers' HTTP admin listeners (GET /v1/cluster) and prints the registered brokers,\n"
    "the controller's leader and term, and every partition the answering brokers replicate:\n"
    "its Raft leader, term, replicas, high watermark and each follower's lag (records it\n"
    "lacks), as the partition's leader reports it. Give every node's admin address to see\n"
    "every partition with its lag: each node knows only its own replicas, and only a leader\n"
    "knows its followers' progress.\n"
    "\n"
    "Options:\n"
    "      --admin HOST:PORT[,...]  admin listeners to ask (default $STREAMPULSE_ADMIN, else\n"
    "                               " ADMIN_DEFAULT_ADDR ")\n"
    "      --timeout SECS           per-node connect/read timeout (default 10)\n" ADMIN_CLIENT_HELP
    "  -h, --help                   this help\n";

/* GET /v1/cluster of addr into *a. Returns whether it answered a JSON object. */
static bool ask_node(const struct admin_client *ac, const char *addr, int timeout_ms,
                     struct node_answer *a)
{
    struct strbuf body;
    strbuf_init(&body);
    char err[512];
    int status = 0;
    a->addr = addr;
    if (admin_client_call(ac, addr, timeout_ms, "GET", "/v1/cluster", NULL, 0, &status, &body, err,
                          sizeof(err)) != 0) {
        fprintf(stderr, "cluster status: %s\n", err);
    } else if (status != 200) {
        fprintf(stderr, "cluster status: %s answered HTTP %d to GET /v1/cluster%s\n", addr, status,
                admin_client_status_hint(ac, status));
    } else {
        struct json_limits lim = {.depth_max = JSON_DEPTH, .values_max = JSON_VALUES_MAX};
        if (json_parse(&a->doc, body.p, body.len, &lim, err, sizeof(err)) != 0 ||
            a->doc.root->type != JSON_OBJECT)
            fprintf(stderr, "cluster status: %s answered something that is not a JSON object\n",
                    addr);
        else
            a->root = a->doc.root;
    }
    strbuf_destroy(&body);
    return a->root != NULL;
}

static int cluster_status(int argc, char **argv)
{
    static const struct option longopts[] = {
        ADMIN_CLIENT_LONGOPTS,
        {"timeout", required_argument, NULL, 't'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct admin_client_opts ao = {0};
    ao.addr = getenv("STREAMPULSE_ADMIN");
    if (!ao.addr || !*ao.addr)
        ao.addr = ADMIN_DEFAULT_ADDR;
    int timeout_ms = CLI_DEFAULT_TIMEOUT_MS;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (admin_client_opt(&ao, opt, optarg))
            continue;
        switch (opt) {
        case 't': {
            char *end;
            double s = strtod(optarg, &end);
            if (*end != 0 || !(s > 0) || s > 3600) {
                fprintf(stderr, "cluster status: --timeout wants seconds in (0, 3600], got '%s'\n",
                        optarg);
                return CLI_EXIT_USAGE;
            }
            timeout_ms = (int)(s * 1000);
            if (timeout_ms < 1)
                timeout_ms = 1;
            break;
        }
        case 'h':
            fputs(status_help, stdout);
            return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cluster status: unknown option or missing value: '%s'\n\n%s",
                    argv[optind - 1], status_help);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cluster status: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    struct admin_client ac;
    int arc = admin_client_init(&ac, "cluster status", &ao);
    if (arc != 0) {
        admin_client_free(&ac);
        return arc;
    }
    char *list = mem_calloc(1, strlen(ao.addr) + 1);
    memcpy(list, ao.addr, strlen(ao.addr));
    size_t cap = 1;
    for (const char *s = list; *s; s++)
        cap += *s == ',';
    struct node_answer *ans = mem_calloc(cap, sizeof(*ans));
    size_t n = 0, answered = 0;
    char *save = NULL;
    for (char *a = strtok_r(list, ",", &save); a && n < cap; a = strtok_r(NULL, ",", &save)) {
        if (cli_interrupted)
            break;
        answered += ask_node(&ac, a, timeout_ms, &ans[n++]);
    }
    int rc;
    if (cli_interrupted)
        rc = CLI_EXIT_INTERRUPTED;
    else if (n == 0) {
        fprintf(stderr, "cluster status: --admin names no address\n");
        rc = CLI_EXIT_USAGE;
    } else if (answered == 0) {
        fprintf(stderr, "cluster status: no admin listener answered\n");
        rc = CLI_EXIT_FAIL;
    } else {
        rc = status_print(ans, n);
    }
    for (size_t i = 0; i < n; i++)
        json_doc_free(&ans[i].doc);
    mem_free(ans);
    mem_free(list);
    admin_client_free(&ac);
    return rc;
}

static const char cluster_help[] =
    "Usage: streampulse cluster status|voters|decommission [OPTIONS]\n"
    "\n"
    "Sub-commands:\n"
    "  status                 brokers, controller and partitions' replication\n"
    "  voters add|remove NODE change the metadata quorum's voters\n"
    "  decommission NODE      move every replica off a broker and out of the voters\n"
    "\n"
    "Run 'streampulse cluster SUB-COMMAND --help' for its options.\n";

int cli_cluster(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(cluster_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "status") == 0)
        return cluster_status(argc - 1, argv + 1);
    if (strcmp(argv[1], "voters") == 0)
        return cli_cluster_voters(argc - 1, argv + 1);
    if (strcmp(argv[1], "decommission") == 0)
        return cli_cluster_decommission(argc - 1, argv + 1);
    fprintf(stderr, "cluster: unknown sub-command '%s'\n\n%s", argv[1], cluster_help);
    return CLI_EXIT_USAGE;
}
