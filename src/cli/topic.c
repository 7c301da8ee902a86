/* streampulse topic create|list|describe|alter|delete, through the Kafka protocol.
 *
 * list and describe read a Metadata response for all topics (never one naming the topic, which
 * could make a broker auto-create it); describe adds the topics' configurations from
 * DescribeConfigs. create, delete and alter use librdkafka's admin API (CreateTopics,
 * DeleteTopics, DescribeConfigs + AlterConfigs).
 *
 * alter: librdkafka 2.0.2 has only the non-incremental AlterConfigs, which replaces a topic's
 * whole set of dynamic configs and reverts everything left out to its default. So alter reads
 * the topic's current overrides (entries whose source is DYNAMIC_TOPIC_CONFIG; for brokers that
 * report no source, non-default and writable ones), applies --config and --delete-config to
 * that set, and sends the merged set. Two concurrent alters can still lose one another's change
 * (read-modify-write without a version check); IncrementalAlterConfigs would fix that.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "cli/common.h"
#include "cli/reassign.h"

#define ADMIN_WAIT_MARGIN_MS 5000 /* past the request timeout, for librdkafka to answer */

/* A config name and value. */
struct kv {
    char *key;   /* owned */
    char *value; /* owned; NULL for --delete-config */
};

struct kv_list {
    struct kv *items; /* owned */
    size_t len;       /* used */
    size_t cap;       /* allocated */
};

struct topic_opts {
    const char *sub;        /* "create", "list", ... */
    char **names;           /* positional topic names (argv entries) */
    int names_len;          /* entries in names */
    int partitions;         /* --partitions, -1: broker default */
    int replication;        /* --replication-factor, -1: broker default */
    struct kv_list configs; /* --config k=v, in order */
    struct kv_list deletes; /* --delete-config k (value NULL) */
    bool if_not_exists;     /* --if-not-exists */
    bool if_exists;         /* --if-exists */
    bool all;               /* --all: list internal topics too */
    bool all_configs;       /* --all-configs: describe shows defaults too */
    bool set_partitions;    /* --partitions given */
    bool set_replication;   /* --replication-factor given */
};

static const char topic_help[] =
    "Usage: streampulse topic SUBCOMMAND [ARGS] [OPTIONS]\n"
    "\n"
    "  topic create NAME... [--partitions N] [--replication-factor R] [--config K=V]...\n"
    "                       [--if-not-exists]\n"
    "      create topics; N and R default to the broker's num.partitions and\n"
    "      default.replication.factor. --if-not-exists: an existing topic is not an error.\n"
    "  topic list [--all]\n"
    "      topic names, one per line, sorted; names starting with \"__\" (internal topics)\n"
    "      only with --all.\n"
    "  topic describe NAME... [--all-configs]\n"
    "      partitions with leader, replicas and in-sync replicas, and the topic's configs\n"
    "      that differ from the defaults (with --all-configs: every config and its source).\n"
    "  topic alter NAME [--config K=V]... [--delete-config K]... [--replication-factor R]\n"
    "      set or remove topic config overrides; the other overrides are kept.\n"
    "      --replication-factor R grows every partition to R replicas on the brokers with the\n"
    "      fewest replicas of the topic (AlterPartitionReassignments: the new replicas catch\n"
    "      up, then vote) and waits, for at most --timeout, until every move is done.\n"
    "  topic delete NAME... [--if-exists]\n"
    "      delete topics. --if-exists: a missing topic is not an error.\n"
    "\n"
    "Options:\n"
    "  -p, --partitions N            (create) partition count (default: broker default)\n"
    "  -r, --replication-factor R    (create, alter) replicas per partition (create default:\n"
    "                                broker default)\n"
    "  -c, --config K=V              (create, alter) topic config, repeatable\n"
    "      --delete-config K         (alter) remove the override K, repeatable\n"
    "      --if-not-exists           (create) skip topics that exist\n"
    "      --if-exists               (delete) skip topics that do not exist\n"
    "      --all                     (list) include internal topics\n"
    "      --all-configs             (describe) show every config, defaults included\n"
    "\n" CLI_COMMON_HELP;

enum {
    OPT_DELETE_CONFIG = CLI_OPT_CMD,
    OPT_IF_NOT_EXISTS,
    OPT_IF_EXISTS,
    OPT_ALL,
    OPT_ALL_CONFIGS,
};

static const struct option topic_longopts[] = {
    {"partitions", required_argument, NULL, 'p'},
    {"replication-factor", required_argument, NULL, 'r'},
    {"config", required_argument, NULL, 'c'},
    {"delete-config", required_argument, NULL, OPT_DELETE_CONFIG},
    {"if-not-exists", no_argument, NULL, OPT_IF_NOT_EXISTS},
    {"if-exists", no_argument, NULL, OPT_IF_EXISTS},
    {"all", no_argument, NULL, OPT_ALL},
    {"all-configs", no_argument, NULL, OPT_ALL_CONFIGS},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

/* --- kv lists ----------------------------------------------------------------------------- */

static struct kv *kv_find(struct kv_list *l, const char *key)
{
    for (size_t i = 0; i < l->len; i++)
        if (strcmp(l->items[i].key, key) == 0)
            return &l->items[i];
    return NULL;
}

/* Sets key to value (NULL allowed), replacing an earlier entry of the same key. */
static void kv_set(struct kv_list *l, const char *key, const char *value)
{
    struct kv *e = kv_find(l, key);
    if (e) {
        mem_free(e->value);
        e->value = value ? mem_strdup(value) : NULL;
        return;
    }
    MEM_GROW(l->items, l->cap, l->len + 1);
    l->items[l->len++] = (struct kv){mem_strdup(key), value ? mem_strdup(value) : NULL};
}

static void kv_remove(struct kv_list *l, const char *key)
{
    struct kv *e = kv_find(l, key);
    if (!e)
        return;
    mem_free(e->key);
    mem_free(e->value);
    *e = l->items[--l->len];
}

static void kv_free(struct kv_list *l)
{
    for (size_t i = 0; i < l->len; i++) {
        mem_free(l->items[i].key);
        mem_free(l->items[i].value);
    }
    mem_free(l->items);
    memset(l, 0, sizeof(*l));
}

static int kv_cmp(const void *a, const void *b)
{
    return strcmp(((const struct kv *)a)->key, ((const struct kv *)b)->key);
}

static void kv_print_joined(FILE *out, struct kv_list *l)
{
    qsort(l->items, l->len, sizeof(l->items[0]), kv_cmp);
    for (size_t i = 0; i < l->len; i++)
        fprintf(out, "%s%s=%s", i ? "," : "", l->items[i].key,
                l->items[i].value ? l->items[i].value : "");
}

/* --- admin plumbing ------------------------------------------------------------------------ */

static rd_kafka_t *admin_new(struct cli_common *c)
{
    rd_kafka_conf_t *conf = cli_conf_new(c);
    if (cli_conf_set(c, conf, "allow.auto.create.topics", "false") ||
        cli_conf_apply_user(c, conf)) {
        rd_kafka_conf_destroy(conf);
        return NULL;
    }
    return cli_client_new(c, RD_KAFKA_PRODUCER, conf);
}

static rd_kafka_AdminOptions_t *admin_options(const struct cli_common *c, rd_kafka_t *rk,
                                              rd_kafka_admin_op_t op)
{
    char err[256];
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(rk, op);
    rd_kafka_AdminOptions_set_request_timeout(ao, c->timeout_ms, err, sizeof(err));
    if (op == RD_KAFKA_ADMIN_OP_CREATETOPICS || op == RD_KAFKA_ADMIN_OP_DELETETOPICS)
        rd_kafka_AdminOptions_set_operation_timeout(ao, c->timeout_ms, err, sizeof(err));
    return ao;
}

/* Waits for the result of one admin request. Returns the event (caller destroys it) or NULL
 * with the reason printed, including a request-level error. */
static rd_kafka_event_t *admin_wait(const struct cli_common *c, rd_kafka_queue_t *q,
                                    const char *doing)
{
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, c->timeout_ms + ADMIN_WAIT_MARGIN_MS);
    if (!ev) {
        cli_report_cluster_error(c, doing, RD_KAFKA_RESP_ERR__TIMED_OUT);
        return NULL;
    }
    rd_kafka_resp_err_t err = rd_kafka_event_error(ev);
    if (err) {
        char last[512];
        cli_last_log_error(last, sizeof(last));
        if (err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT)
            cli_error(c, "%s: no answer from %s within %.1f s: %s%s%s%s", doing, c->brokers,
                      c->timeout_ms / 1000.0, rd_kafka_event_error_string(ev),
                      last[0] ? " (last error: " : "", last, last[0] ? ")" : "");
        else
            cli_error(c, "%s: %s", doing, rd_kafka_event_error_string(ev));
        rd_kafka_event_destroy(ev);
        return NULL;
    }
    return ev;
}

/* Metadata for all topics, or NULL with the reason printed. */
static const struct rd_kafka_metadata *metadata_all(const struct cli_common *c, rd_kafka_t *rk)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &md, c->timeout_ms);
    if (err) {
        cli_report_cluster_error(c, "metadata request", err);
        return NULL;
    }
    return md;
}

static const rd_kafka_metadata_topic_t *md_find(const struct rd_kafka_metadata *md,
                                                const char *name)
{
    for (int i = 0; i < md->topic_cnt; i++)
        if (strcmp(md->topics[i].topic, name) == 0)
            return &md->topics[i];
    return NULL;
}

/* --- create / delete ----------------------------------------------------------------------- */

/* Prints one line per topic result; returns the number of failures (skippable errors aside). */
static int report_topic_results(const struct cli_common *c, const rd_kafka_topic_result_t **res,
                                size_t n, const char *verb, rd_kafka_resp_err_t skippable,
                                const char *skip_note)
{
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        const char *name = rd_kafka_topic_result_name(res[i]);
        rd_kafka_resp_err_t err = rd_kafka_topic_result_error(res[i]);
        if (!err) {
            printf("%s topic %s\n", verb, name);
        } else if (err == skippable && skip_note) {
            printf("topic %s %s\n", name, skip_note);
        } else {
            const char *why = rd_kafka_topic_result_error_string(res[i]);
            cli_error(c, "topic '%s': %s", name, why && why[0] ? why : rd_kafka_err2str(err));
            failures++;
        }
    }
    return failures;
}

static int topic_create(struct cli_common *c, const struct topic_opts *o, rd_kafka_t *rk)
{
    char err[512];
    rd_kafka_NewTopic_t **nt = mem_calloc((size_t)o->names_len, sizeof(*nt));
    int rc = CLI_EXIT_FAIL;
    int made = 0;
    for (; made < o->names_len; made++) {
        nt[made] =
            rd_kafka_NewTopic_new(o->names[made], o->partitions, o->replication, err, sizeof(err));
        if (!nt[made]) {
            cli_error(c, "topic '%s': %s", o->names[made], err);
            goto out_free;
        }
        for (size_t j = 0; j < o->configs.len; j++)
            rd_kafka_NewTopic_set_config(nt[made], o->configs.items[j].key,
                                         o->configs.items[j].value);
    }
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = admin_options(c, rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_CreateTopics(rk, nt, (size_t)made, ao, q);
    rd_kafka_event_t *ev = admin_wait(c, q, "create topics");
    if (ev) {
        size_t n;
        const rd_kafka_topic_result_t **res =
            rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
        int failures =
            report_topic_results(c, res, n, "created", RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS,
                                 o->if_not_exists ? "already exists" : NULL);
        rc = failures ? CLI_EXIT_FAIL : CLI_EXIT_OK;
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_queue_destroy(q);
out_free:
    rd_kafka_NewTopic_destroy_array(nt, (size_t)made);
    mem_free(nt);
    return rc;
}

static int topic_delete(struct cli_common *c, const struct topic_opts *o, rd_kafka_t *rk)
{
    rd_kafka_DeleteTopic_t **dt = mem_calloc((size_t)o->names_len, sizeof(*dt));
    for (int i = 0; i < o->names_len; i++)
        dt[i] = rd_kafka_DeleteTopic_new(o->names[i]);
    int rc = CLI_EXIT_FAIL;
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = admin_options(c, rk, RD_KAFKA_ADMIN_OP_DELETETOPICS);
    rd_kafka_DeleteTopics(rk, dt, (size_t)o->names_len, ao, q);
    rd_kafka_event_t *ev = admin_wait(c, q, "delete topics");
    if (ev) {
        size_t n;
        const rd_kafka_topic_result_t **res =
            rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &n);
        int failures =
            report_topic_results(c, res, n, "deleted", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
                                 o->if_exists ? "does not exist" : NULL);
        rc = failures ? CLI_EXIT_FAIL : CLI_EXIT_OK;
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_queue_destroy(q);
    rd_kafka_DeleteTopic_destroy_array(dt, (size_t)o->names_len);
    mem_free(dt);
    return rc;
}

/* --- list ---------------------------------------------------------------------------------- */

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int topic_list(struct cli_common *c, const struct topic_opts *o, rd_kafka_t *rk)
{
    const struct rd_kafka_metadata *md = metadata_all(c, rk);
    if (!md)
        return CLI_EXIT_FAIL;
    const char **names = mem_calloc((size_t)md->topic_cnt + 1, sizeof(*names));
    size_t n = 0;
    for (int i = 0; i < md->topic_cnt; i++) {
        const char *name = md->topics[i].topic;
        if (!o->all && strncmp(name, "__", 2) == 0)
            continue;
        names[n++] = name;
    }
    qsort(names, n, sizeof(names[0]), str_cmp);
    for (size_t i = 0; i < n; i++)
        printf("%s\n", names[i]);
    mem_free(names);
    rd_kafka_metadata_destroy(md);
    return CLI_EXIT_OK;
}

/* --- describe configs ---------------------------------------------------------------------- */

/* Is entry a topic-level override that AlterConfigs would wipe if left out? */
static bool entry_is_override(const rd_kafka_ConfigEntry_t *e)
{
    rd_kafka_ConfigSource_t src = rd_kafka_ConfigEntry_source(e);
    if (src == RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG)
        return true;
    /* DescribeConfigs v0 has no source, only is_default. */
    return src == RD_KAFKA_CONFIG_SOURCE_UNKNOWN_CONFIG && !rd_kafka_ConfigEntry_is_default(e) &&
           !rd_kafka_ConfigEntry_is_read_only(e);
}

/* Sends one DescribeConfigs request for the topics in names. On success returns the result
 * event (caller destroys it; *res and *res_cnt point into it), else NULL with the reason printed.
 */
static rd_kafka_event_t *describe_configs(struct cli_common *c, rd_kafka_t *rk, char **names,
                                          int names_len, const rd_kafka_ConfigResource_t ***res,
                                          size_t *res_cnt)
{
    rd_kafka_ConfigResource_t **cr = mem_calloc((size_t)names_len, sizeof(*cr));
    for (int i = 0; i < names_len; i++)
        cr[i] = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, names[i]);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = admin_options(c, rk, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS);
    rd_kafka_DescribeConfigs(rk, cr, (size_t)names_len, ao, q);
    rd_kafka_event_t *ev = admin_wait(c, q, "describe configs");
    if (ev)
        *res = rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev),
                                                         res_cnt);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_queue_destroy(q);
    rd_kafka_ConfigResource_destroy_array(cr, (size_t)names_len);
    mem_free(cr);
    return ev;
}

static const rd_kafka_ConfigResource_t *resource_find(const rd_kafka_ConfigResource_t **res,
                                                      size_t n, const char *name)
{
    for (size_t i = 0; res && i < n; i++)
        if (strcmp(rd_kafka_ConfigResource_name(res[i]), name) == 0)
            return res[i];
    return NULL;
}

/* --- describe ------------------------------------------------------------------------------ */

static int part_cmp(const void *a, const void *b)
{
    int32_t x = ((const rd_kafka_metadata_partition_t *)a)->id;
    int32_t y = ((const rd_kafka_metadata_partition_t *)b)->id;
    return (x > y) - (x < y);
}

static void print_broker_ids(const int32_t *ids, int n)
{
    for (int i = 0; i < n; i++)
        printf("%s%d", i ? "," : "", (int)ids[i]);
}

static void print_partitions(const rd_kafka_metadata_topic_t *t)
{
    rd_kafka_metadata_partition_t *parts =
        mem_dup(t->partitions, (size_t)t->partition_cnt * sizeof(*parts));
    qsort(parts, (size_t)t->partition_cnt, sizeof(*parts), part_cmp);
    for (int i = 0; i < t->partition_cnt; i++) {
        const rd_kafka_metadata_partition_t *p = &parts[i];
        printf("\tTopic: %s\tPartition: %d\tLeader: ", t->topic, (int)p->id);
        if (p->leader >= 0)
            printf("%d", (int)p->leader);
        else
            printf("none");
        printf("\tReplicas: ");
        print_broker_ids(p->replicas, p->replica_cnt);
        printf("\tIsr: ");
        print_broker_ids(p->isrs, p->isr_cnt);
        if (p->err)
            printf("\tError: %s", rd_kafka_err2str(p->err));
        printf("\n");
    }
    mem_free(parts);
}

/* Prints the "Configs:" field of the header line (overrides), or every entry on its own line
 * with --all-configs. Returns -1 if the resource carries an error (printed). */
static int print_configs(const struct cli_common *c, const struct topic_opts *o,
                         const rd_kafka_ConfigResource_t *r, bool lines)
{
    if (rd_kafka_ConfigResource_error(r)) {
        if (!lines)
            printf("\tConfigs: (unavailable)");
        else
            cli_error(c, "configs of topic '%s': %s", rd_kafka_ConfigResource_name(r),
                      rd_kafka_ConfigResource_error_string(r));
        return -1;
    }
    size_t n;
    const rd_kafka_ConfigEntry_t **entries = rd_kafka_ConfigResource_configs(r, &n);
    if (!lines) {
        struct kv_list overrides = {0};
        for (size_t i = 0; i < n; i++)
            if (entry_is_override(entries[i]))
                kv_set(&overrides, rd_kafka_ConfigEntry_name(entries[i]),
                       rd_kafka_ConfigEntry_is_sensitive(entries[i])
                           ? "(sensitive)"
                           : rd_kafka_ConfigEntry_value(entries[i]));
        printf("\tConfigs: ");
        kv_print_joined(stdout, &overrides);
        kv_free(&overrides);
        return 0;
    }
    if (!o->all_configs)
        return 0;
    for (size_t i = 0; i < n; i++) {
        const char *value = rd_kafka_ConfigEntry_value(entries[i]);
        if (rd_kafka_ConfigEntry_is_sensitive(entries[i]))
            value = "(sensitive)";
        printf("\tConfig: %s=%s\tSource: %s%s\n", rd_kafka_ConfigEntry_name(entries[i]),
               value ? value : "",
               rd_kafka_ConfigSource_name(rd_kafka_ConfigEntry_source(entries[i])),
               rd_kafka_ConfigEntry_is_read_only(entries[i]) ? "\tReadOnly: true" : "");
    }
    return 0;
}

static int topic_describe(struct cli_common *c, const struct topic_opts *o, rd_kafka_t *rk)
{
    const struct rd_kafka_metadata *md = metadata_all(c, rk);
    if (!md)
        return CLI_EXIT_FAIL;
    int rc = CLI_EXIT_OK;
    /* Ask only for topics that exist: one unknown name fails no one else. */
    char **known = mem_calloc((size_t)o->names_len, sizeof(*known));
    int known_len = 0;
    for (int i = 0; i < o->names_len; i++) {
        if (md_find(md, o->names[i]))
            known[known_len++] = o->names[i];
    }
    const rd_kafka_ConfigResource_t **res = NULL;
    size_t res_cnt = 0;
    rd_kafka_event_t *ev = NULL;
    if (known_len > 0) {
        ev = describe_configs(c, rk, known, known_len, &res, &res_cnt);
        if (!ev)
            rc = CLI_EXIT_FAIL; /* reason printed; partitions are still shown */
    }
    for (int i = 0; i < o->names_len; i++) {
        const rd_kafka_metadata_topic_t *t = md_find(md, o->names[i]);
        if (!t) {
            cli_error(c, "topic '%s' does not exist", o->names[i]);
            rc = CLI_EXIT_FAIL;
            continue;
        }
        int rf = 0;
        for (int p = 0; p < t->partition_cnt; p++)
            if (t->partitions[p].replica_cnt > rf)
                rf = t->partitions[p].replica_cnt;
        printf("Topic: %s\tPartitionCount: %d\tReplicationFactor: %d", t->topic, t->partition_cnt,
               rf);
        const rd_kafka_ConfigResource_t *r = resource_find(res, res_cnt, t->topic);
        if (r)
            print_configs(c, o, r, false);
        else
            printf("\tConfigs: (unavailable)");
        if (t->err)
            printf("\tError: %s", rd_kafka_err2str(t->err));
        printf("\n");
        if (r && print_configs(c, o, r, true) != 0)
            rc = CLI_EXIT_FAIL;
        print_partitions(t);
    }
    if (ev)
        rd_kafka_event_destroy(ev);
    mem_free(known);
    rd_kafka_metadata_destroy(md);
    return rc;
}

/* --- alter --------------------------------------------------------------------------------- */

/* Fills *current with the topic's overrides. Returns 0, or -1 with the reason printed. */
static int read_overrides(struct cli_common *c, rd_kafka_t *rk, char *name, struct kv_list *current)
{
    const rd_kafka_ConfigResource_t **res = NULL;
    size_t res_cnt = 0;
    rd_kafka_event_t *ev = describe_configs(c, rk, &name, 1, &res, &res_cnt);
    if (!ev)
        return -1;
    int rc = -1;
    const rd_kafka_ConfigResource_t *r = resource_find(res, res_cnt, name);
    if (!r) {
        cli_error(c, "describe configs: no answer for topic '%s'", name);
    } else if (rd_kafka_ConfigResource_error(r) == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        cli_error(c, "topic '%s' does not exist", name);
    } else if (rd_kafka_ConfigResource_error(r)) {
        cli_error(c, "configs of topic '%s': %s", name, rd_kafka_ConfigResource_error_string(r));
    } else {
        size_t n;
        const rd_kafka_ConfigEntry_t **entries = rd_kafka_ConfigResource_configs(r, &n);
        rc = 0;
        for (size_t i = 0; i < n; i++) {
            if (!entry_is_override(entries[i]))
                continue;
            const char *key = rd_kafka_ConfigEntry_name(entries[i]);
            if (rd_kafka_ConfigEntry_is_sensitive(entries[i])) {
                /* Its value is hidden from us, so we cannot send it back unchanged. */
                cli_error(c,
                          "topic '%s' has the sensitive override %s, whose value cannot be "
                          "read back; this alter would erase it",
                          name, key);
                rc = -1;
                break;
            }
            kv_set(current, key, rd_kafka_ConfigEntry_value(entries[i]));
        }
    }
    rd_kafka_event_destroy(ev);
    return rc;
}

static int topic_alter(struct cli_common *c, const struct topic_opts *o, rd_kafka_t *rk)
{
    char *name = o->names[0];
    struct kv_list merged = {0};
    int rc = CLI_EXIT_FAIL;
    if (read_overrides(c, rk, name, &merged) != 0)
        goto out_free;
    for (size_t i = 0; i < o->deletes.len; i++)
        kv_remove(&merged, o->deletes.items[i].key);
    for (size_t i = 0; i < o->configs.len; i++)
        kv_set(&merged, o->configs.items[i].key, o->configs.items[i].value);

    rd_kafka_ConfigResource_t *cr = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, name);
    for (size_t i = 0; i < merged.len; i++)
        rd_kafka_ConfigResource_set_config(cr, merged.items[i].key, merged.items[i].value);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = admin_options(c, rk, RD_KAFKA_ADMIN_OP_ALTERCONFIGS);
    rd_kafka_AlterConfigs(rk, &cr, 1, ao, q);
    rd_kafka_event_t *ev = admin_wait(c, q, "alter configs");
    if (ev) {
        size_t n;
        const rd_kafka_ConfigResource_t **res =
            rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(ev), &n);
        const rd_kafka_ConfigResource_t *r = resource_find(res, n, name);
        if (!r) {
            cli_error(c, "alter configs: no answer for topic '%s'", name);
        } else if (rd_kafka_ConfigResource_error(r)) {
            cli_error(c, "topic '%s': %s", name, rd_kafka_ConfigResource_error_string(r));
        } else {
            printf("altered topic %s; its overrides now: ", name);
            kv_print_joined(stdout, &merged);
            printf("\n");
            rc = CLI_EXIT_OK;
        }
        rd_kafka_event_destroy(ev);
    }
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_queue_destroy(q);
    rd_kafka_ConfigResource_destroy(cr);
out_free:
    kv_free(&merged);
    return rc;
}

/* --- argument parsing and dispatch --------------------------------------------------------- */

static int parse_args(struct cli_common *c, struct topic_opts *o, int argc, char **argv)
{
    long long n;
    int opt;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, "p:r:c:" CLI_COMMON_SHORTOPTS, topic_longopts, NULL)) !=
           -1) {
        int rc = cli_common_opt(c, opt, optarg);
        if (rc < 0)
            return -1;
        if (rc > 0)
            continue;
        char *key;
        const char *value;
        switch (opt) {
        case 'p':
            if (cli_parse_int(c, "--partitions", optarg, 1, INT32_MAX, &n) != 0)
                return -1;
            o->partitions = (int)n;
            o->set_partitions = true;
            break;
        case 'r':
            if (cli_parse_int(c, "--replication-factor", optarg, 1, INT16_MAX, &n) != 0)
                return -1;
            o->replication = (int)n;
            o->set_replication = true;
            break;
        case 'c':
            if (cli_split_kv(optarg, &key, &value) != 0) {
                cli_error(c, "--config needs KEY=VALUE, got '%s'", optarg);
                return -1;
            }
            kv_set(&o->configs, key, value);
            free(key);
            break;
        case OPT_DELETE_CONFIG:
            if (!optarg[0] || strchr(optarg, '=')) {
                cli_error(c, "--delete-config needs a config name, got '%s'", optarg);
                return -1;
            }
            kv_set(&o->deletes, optarg, NULL);
            break;
        case OPT_IF_NOT_EXISTS:
            o->if_not_exists = true;
            break;
        case OPT_IF_EXISTS:
            o->if_exists = true;
            break;
        case OPT_ALL:
            o->all = true;
            break;
        case OPT_ALL_CONFIGS:
            o->all_configs = true;
            break;
        default:
            return -1;
        }
    }
    o->names = argv + optind;
    o->names_len = argc - optind;
    return 0;
}

/* Rejects options that mean nothing for the sub-command, and wrong name counts. */
static int check_args(struct cli_common *c, const struct topic_opts *o)
{
    const char *s = o->sub;
    bool create = !strcmp(s, "create"), alter = !strcmp(s, "alter");
    struct {
        bool given;
        bool allowed;
        const char *name;
    } checks[] = {
        {o->set_partitions, create, "--partitions"},
        {o->set_replication, create || alter, "--replication-factor"},
        {o->configs.len > 0, create || alter, "--config"},
        {o->deletes.len > 0, alter, "--delete-config"},
        {o->if_not_exists, create, "--if-not-exists"},
        {o->if_exists, !strcmp(s, "delete"), "--if-exists"},
        {o->all, !strcmp(s, "list"), "--all"},
        {o->all_configs, !strcmp(s, "describe"), "--all-configs"},
    };
    for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
        if (checks[i].given && !checks[i].allowed) {
            cli_error(c, "%s does not apply to 'topic %s'", checks[i].name, s);
            return -1;
        }
    }
    if (!strcmp(s, "list")) {
        if (o->names_len > 0) {
            cli_error(c, "'topic list' takes no names (got '%s')", o->names[0]);
            return -1;
        }
    } else if (alter) {
        if (o->names_len != 1) {
            cli_error(c, "'topic alter' takes exactly one topic name");
            return -1;
        }
        if (o->configs.len == 0 && o->deletes.len == 0 && !o->set_replication) {
            cli_error(c, "'topic alter' needs --config K=V, --delete-config K or "
                         "--replication-factor R");
            return -1;
        }
    } else if (o->names_len == 0) {
        cli_error(c, "'topic %s' needs at least one topic name", s);
        return -1;
    }
    return 0;
}

int cli_topic(int argc, char **argv)
{
    static const char *const subs[] = {"create", "list", "describe", "alter", "delete"};
    struct cli_common c;
    cli_common_init(&c, "topic");
    struct topic_opts o = {.partitions = -1, .replication = -1};
    int rc = CLI_EXIT_USAGE;
    char cmd[32];
    o.sub = cli_sub_command(&c, topic_help, subs, sizeof(subs) / sizeof(subs[0]), argc, argv, cmd,
                            sizeof(cmd), &rc);
    if (!o.sub)
        goto out;
    if (parse_args(&c, &o, argc - 1, argv + 1) != 0 || (!c.help && check_args(&c, &o) != 0)) {
        fprintf(stderr, "Run 'streampulse topic --help' for usage.\n");
        goto out;
    }
    if (c.help) {
        fputs(topic_help, stdout);
        rc = CLI_EXIT_OK;
        goto out;
    }
    rd_kafka_t *rk = admin_new(&c);
    if (!rk) {
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    if (!strcmp(o.sub, "create"))
        rc = topic_create(&c, &o, rk);
    else if (!strcmp(o.sub, "list"))
        rc = topic_list(&c, &o, rk);
    else if (!strcmp(o.sub, "describe"))
        rc = topic_describe(&c, &o, rk);
    else if (!strcmp(o.sub, "alter")) {
        rc = o.configs.len || o.deletes.len ? topic_alter(&c, &o, rk) : CLI_EXIT_OK;
        if (rc == CLI_EXIT_OK && o.set_replication)
            rc = topic_alter_replication(&c, o.names[0], o.replication, rk);
    }
    else
        rc = topic_delete(&c, &o, rk);
    rd_kafka_destroy(rk);
out:
    kv_free(&o.configs);
    kv_free(&o.deletes);
    cli_common_free(&c);
    return rc;
}
