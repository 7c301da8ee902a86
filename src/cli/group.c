/* streampulse group list|describe|delete|reset-offsets, through librdkafka's admin API.
 *
 *   list            ListConsumerGroups (ListGroups): group, state
 *   describe G      DescribeConsumerGroups (DescribeGroups): state, protocol, members with
 *                   client id, host and assigned partitions; ListConsumerGroupOffsets
 *                   (OffsetFetch) for the committed offsets and ListOffsets (watermarks) for
 *                   the log end offsets: per partition committed, log end and lag
 *   delete G...     DeleteGroups
 *   reset-offsets G --topic T --to-earliest|--to-latest|--to-offset N|--to-datetime T
 *                   AlterConsumerGroupOffsets (OffsetCommit with generation -1, which the
 *                   broker accepts only while the group has no members); refused here too while
 *                   the group has members, with their count.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/mem.h"
#include "cli/common.h"

#define ADMIN_WAIT_MARGIN_MS 5000

enum reset_to { RESET_NONE, RESET_EARLIEST, RESET_LATEST, RESET_OFFSET, RESET_DATETIME };

struct group_opts {
    const char *sub; /* "list", "describe", ... */
    char **names;    /* positional group names */
    int names_len;
    const char *topic; /* --topic (reset-offsets) */
    enum reset_to to;  /* which --to-* */
    int64_t to_value;  /* --to-offset N, or --to-datetime as ms since the epoch */
    bool dry_run;      /* --dry-run: print the plan, change nothing */
};

static const char group_help[] =
    "Usage: streampulse group SUBCOMMAND [ARGS] [OPTIONS]\n"
    "\n"
    "  group list\n"
    "      consumer groups with their state, one per line, sorted.\n"
    "  group describe GROUP\n"
    "      state, protocol, members (id, client id, host, assigned partitions), and per\n"
    "      partition: committed offset, log end offset and lag.\n"
    "  group delete GROUP...\n"
    "      delete groups that have no members, with their committed offsets.\n"
    "  group reset-offsets GROUP --topic T (--to-earliest | --to-latest | --to-offset N |\n"
    "                      --to-datetime YYYY-MM-DDTHH:MM:SS[Z] | --to-datetime MS) [--dry-run]\n"
    "      set the group's committed offsets of every partition of T; refused while the group\n"
    "      has members. --to-offset is clamped to the partition's range; --to-datetime picks\n"
    "      the first offset at or after that time (UTC), or the log end.\n"
    "\n" CLI_COMMON_HELP;

enum {
    OPT_TOPIC = CLI_OPT_CMD,
    OPT_TO_EARLIEST,
    OPT_TO_LATEST,
    OPT_TO_OFFSET,
    OPT_TO_DATETIME,
    OPT_DRY_RUN,
};

static const struct option group_longopts[] = {
    {"topic", required_argument, NULL, OPT_TOPIC},
    {"to-earliest", no_argument, NULL, OPT_TO_EARLIEST},
    {"to-latest", no_argument, NULL, OPT_TO_LATEST},
    {"to-offset", required_argument, NULL, OPT_TO_OFFSET},
    {"to-datetime", required_argument, NULL, OPT_TO_DATETIME},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

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
    return ao;
}

/* The result event of one admin request, or NULL with the reason printed. */
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
        if (err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT)
            cli_report_cluster_error(c, doing, err);
        else
            cli_error(c, "%s: %s", doing, rd_kafka_event_error_string(ev));
        rd_kafka_event_destroy(ev);
        return NULL;
    }
    return ev;
}

static const char *state_name(rd_kafka_consumer_group_state_t s)
{
    return rd_kafka_consumer_group_state_name(s);
}

/* --- list ---------------------------------------------------------------------------------- */

struct listed {
    const char *id;
    const char *state;
};

static int listed_cmp(const void *a, const void *b)
{
    return strcmp(((const struct listed *)a)->id, ((const struct listed *)b)->id);
}

static int group_list(struct cli_common *c, rd_kafka_t *rk)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *ao = admin_options(c, rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS);
    rd_kafka_ListConsumerGroups(rk, ao, q);
    rd_kafka_AdminOptions_destroy(ao);
    int rc = CLI_EXIT_FAIL;
    rd_kafka_event_t *ev = admin_wait(c, q, "list groups");
    if (!ev)
        goto out_queue;
    const rd_kafka_ListConsumerGroups_result_t *res = rd_kafka_event_ListConsumerGroups_result(ev);
    size_t n, n_err;
    const rd_kafka_ConsumerGroupListing_t **valid =
        rd_kafka_ListConsumerGroups_result_valid(res, &n);
    const rd_kafka_error_t **errs = rd_kafka_ListConsumerGroups_result_errors(res, &n_err);
    struct listed *l = mem_calloc(n ? n : 1, sizeof(*l));
    for (size_t i = 0; i < n; i++)
        l[i] = (struct listed){rd_kafka_ConsumerGroupListing_group_id(valid[i]),
                               state_name(rd_kafka_ConsumerGroupListing_state(valid[i]))};
    qsort(l, n, sizeof(*l), listed_cmp);
    for (size_t i = 0; i < n; i++)
        printf("%s\t%s\n", l[i].id, l[i].state);
    mem_free(l);
    for (size_t i = 0; i < n_err; i++)
        cli_error(c, "list groups: %s", rd_kafka_error_string(errs[i]));
    rc = n_err ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    rd_kafka_event_destroy(ev);
out_queue:
    rd_kafka_queue_destroy(q);
    return rc;
}

/* --- describe ------------------------------------------------------------------------------ */

/* Describes one group; returns the event (caller destroys) and *desc, or NULL (printed). */
static rd_kafka_event_t *describe_one(struct cli_common *c, rd_kafka_t *rk, rd_kafka_queue_t *q,
                                      const char *group,
                                      const rd_kafka_ConsumerGroupDescription_t **desc)
{
    rd_kafka_AdminOptions_t *ao = admin_options(c, rk, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS);
    const char *groups[1] = {group};
    rd_kafka_DescribeConsumerGroups(rk, groups, 1, ao, q);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_event_t *ev = admin_wait(c, q, "describe group");
    if (!ev)
        return NULL;
    size_t n;
    const rd_kafka_ConsumerGroupDescription_t **d = rd_kafka_DescribeConsumerGroups_result_groups(
        rd_kafka_event_DescribeConsumerGroups_result(ev), &n);
    const rd_kafka_error_t *err = n == 1 ? rd_kafka_ConsumerGroupDescription_error(d[0]) : NULL;
    if (n != 1 || err) {
        cli_error(c, "describe group '%s': %s", group,
                  err ? rd_kafka_error_string(err) : "no answer for the group");
        rd_kafka_event_destroy(ev);
        return NULL;
    }
    *desc = d[0];
    return ev;
}

/* The group's committed offsets (all partitions), as a list the caller destroys; NULL on
 * error (printed). */
static rd_kafka_topic_partition_list_t *committed_offsets(struct cli_common *c, rd_kafka_t *rk,
                                                          rd_kafka_queue_t *q, const char *group)
{
    rd_kafka_ListConsumerGroupOffsets_t *req = rd_kafka_ListConsumerGroupOffsets_new(group, NULL);
    rd_kafka_AdminOptions_t *ao = admin_options(c, rk, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS);
    rd_kafka_ListConsumerGroupOffsets(rk, &req, 1, ao, q);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_ListConsumerGroupOffsets_destroy(req);
    rd_kafka_event_t *ev = admin_wait(c, q, "fetch committed offsets");
    if (!ev)
        return NULL;
    size_t n;
    const rd_kafka_group_result_t **g = rd_kafka_ListConsumerGroupOffsets_result_groups(
        rd_kafka_event_ListConsumerGroupOffsets_result(ev), &n);
    rd_kafka_topic_partition_list_t *out = NULL;
    if (n != 1 || rd_kafka_group_result_error(g[0])) {
        cli_error(c, "fetch committed offsets of '%s': %s", group,
                  n == 1 ? rd_kafka_error_string(rd_kafka_group_result_error(g[0])) : "no answer");
    } else {
        const rd_kafka_topic_partition_list_t *p = rd_kafka_group_result_partitions(g[0]);
        out = p ? rd_kafka_topic_partition_list_copy(p) : rd_kafka_topic_partition_list_new(0);
    }
    rd_kafka_event_destroy(ev);
    return out;
}

static int tp_cmp(const void *a, const void *b)
{
    const rd_kafka_topic_partition_t *x = a, *y = b;
    int r = strcmp(x->topic, y->topic);
    return r ? r : (x->partition > y->partition) - (x->partition < y->partition);
}

/* Who owns topic-partition in the description ("-" if nobody). */
static const char *owner_of(const rd_kafka_ConsumerGroupDescription_t *d, const char *topic,
                            int32_t partition)
{
    size_t n = rd_kafka_ConsumerGroupDescription_member_count(d);
    for (size_t i = 0; i < n; i++) {
        const rd_kafka_MemberDescription_t *m = rd_kafka_ConsumerGroupDescription_member(d, i);
        const rd_kafka_topic_partition_list_t *a =
            rd_kafka_MemberAssignment_partitions(rd_kafka_MemberDescription_assignment(m));
        if (a && rd_kafka_topic_partition_list_find(a, topic, partition))
            return rd_kafka_MemberDescription_consumer_id(m);
    }
    return "-";
}

static void print_members(const rd_kafka_ConsumerGroupDescription_t *d)
{
    size_t n = rd_kafka_ConsumerGroupDescription_member_count(d);
    printf("MEMBERS: %zu\n", n);
    for (size_t i = 0; i < n; i++) {
        const rd_kafka_MemberDescription_t *m = rd_kafka_ConsumerGroupDescription_member(d, i);
        const char *inst = rd_kafka_MemberDescription_group_instance_id(m);
        printf("  MEMBER %s CLIENT-ID %s HOST %s%s%s PARTITIONS ",
               rd_kafka_MemberDescription_consumer_id(m), rd_kafka_MemberDescription_client_id(m),
               rd_kafka_MemberDescription_host(m), inst ? " INSTANCE " : "", inst ? inst : "");
        const rd_kafka_topic_partition_list_t *a =
            rd_kafka_MemberAssignment_partitions(rd_kafka_MemberDescription_assignment(m));
        if (!a || a->cnt == 0) {
            printf("-\n");
            continue;
        }
        rd_kafka_topic_partition_list_t *s = rd_kafka_topic_partition_list_copy(a);
        rd_kafka_topic_partition_list_sort(s, NULL, NULL);
        for (int k = 0; k < s->cnt; k++)
            printf("%s%s:%d", k ? "," : "", s->elems[k].topic, s->elems[k].partition);
        printf("\n");
        rd_kafka_topic_partition_list_destroy(s);
    }
}

static int group_describe(struct cli_common *c, const struct group_opts *o, rd_kafka_t *rk)
{
    const char *group = o->names[0];
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    int rc = CLI_EXIT_FAIL;
    const rd_kafka_ConsumerGroupDescription_t *d;
    rd_kafka_event_t *ev = describe_one(c, rk, q, group, &d);
    if (!ev)
        goto out_queue;
    rd_kafka_topic_partition_list_t *committed = committed_offsets(c, rk, q, group);
    if (!committed)
        goto out_event;
    rd_kafka_consumer_group_state_t st = rd_kafka_ConsumerGroupDescription_state(d);
    if (st == RD_KAFKA_CONSUMER_GROUP_STATE_DEAD && committed->cnt == 0) {
        cli_error(c, "group '%s' does not exist", group);
        goto out_committed;
    }
    const char *proto = rd_kafka_ConsumerGroupDescription_partition_assignor(d);
    printf("GROUP: %s\nSTATE: %s\nPROTOCOL: %s\n", group, state_name(st),
           proto && proto[0] ? proto : "-");
    print_members(d);
    /* every partition that is committed or assigned */
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_copy(committed);
    size_t nm = rd_kafka_ConsumerGroupDescription_member_count(d);
    for (size_t i = 0; i < nm; i++) {
        const rd_kafka_topic_partition_list_t *a = rd_kafka_MemberAssignment_partitions(
            rd_kafka_MemberDescription_assignment(rd_kafka_ConsumerGroupDescription_member(d, i)));
        for (int k = 0; a && k < a->cnt; k++)
            if (!rd_kafka_topic_partition_list_find(parts, a->elems[k].topic,
                                                    a->elems[k].partition))
                rd_kafka_topic_partition_list_add(parts, a->elems[k].topic, a->elems[k].partition)
                    ->offset = RD_KAFKA_OFFSET_INVALID;
    }
    qsort(parts->elems, (size_t)parts->cnt, sizeof(parts->elems[0]), tp_cmp);
    printf("%-24s %9s %12s %12s %10s  %s\n", "TOPIC", "PARTITION", "COMMITTED", "LOG-END", "LAG",
           "MEMBER");
    int64_t total_lag = 0;
    for (int i = 0; i < parts->cnt; i++) {
        const rd_kafka_topic_partition_t *p = &parts->elems[i];
        int64_t lo = -1, hi = -1;
        rd_kafka_resp_err_t err =
            rd_kafka_query_watermark_offsets(rk, p->topic, p->partition, &lo, &hi, c->timeout_ms);
        char comm[24] = "-", end[24] = "-", lag[24] = "-";
        if (p->offset >= 0)
            snprintf(comm, sizeof(comm), "%lld", (long long)p->offset);
        if (!err)
            snprintf(end, sizeof(end), "%lld", (long long)hi);
        if (!err && p->offset >= 0) {
            int64_t l = hi - p->offset > 0 ? hi - p->offset : 0;
            total_lag += l;
            snprintf(lag, sizeof(lag), "%lld", (long long)l);
        } else if (!err && p->offset < 0) {
            snprintf(lag, sizeof(lag), "%lld", (long long)(hi - lo)); /* nothing committed */
            total_lag += hi - lo;
        }
        printf("%-24s %9d %12s %12s %10s  %s\n", p->topic, p->partition, comm, end, lag,
               owner_of(d, p->topic, p->partition));
    }
    printf("TOTAL-LAG: %lld\n", (long long)total_lag);
    rd_kafka_topic_partition_list_destroy(parts);
    rc = CLI_EXIT_OK;
out_committed:
    rd_kafka_topic_partition_list_destroy(committed);
out_event:
    rd_kafka_event_destroy(ev);
out_queue:
    rd_kafka_queue_destroy(q);
    return rc;
}

/* --- delete -------------------------------------------------------------------------------- */

static int group_delete(struct cli_common *c, const struct group_opts *o, rd_kafka_t *rk)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_DeleteGroup_t **dg = mem_calloc((size_t)o->names_len, sizeof(*dg));
    for (int i = 0; i < o->names_len; i++)
        dg[i] = rd_kafka_DeleteGroup_new(o->names[i]);
    rd_kafka_AdminOptions_t *ao = admin_options(c, rk, RD_KAFKA_ADMIN_OP_DELETEGROUPS);
    rd_kafka_DeleteGroups(rk, dg, (size_t)o->names_len, ao, q);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_DeleteGroup_destroy_array(dg, (size_t)o->names_len);
    mem_free(dg);
    int rc = CLI_EXIT_FAIL;
    rd_kafka_event_t *ev = admin_wait(c, q, "delete groups");
    if (!ev)
        goto out_queue;
    size_t n;
    const rd_kafka_group_result_t **res =
        rd_kafka_DeleteGroups_result_groups(rd_kafka_event_DeleteGroups_result(ev), &n);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        const rd_kafka_error_t *err = rd_kafka_group_result_error(res[i]);
        const char *name = rd_kafka_group_result_name(res[i]);
        if (!err) {
            printf("deleted group %s\n", name);
        } else {
            rd_kafka_resp_err_t code = rd_kafka_error_code(err);
            cli_error(c, "group '%s': %s", name,
                      code == RD_KAFKA_RESP_ERR_NON_EMPTY_GROUP
                          ? "the group has active members; stop them first"
                      : code == RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND ? "no such group"
                                                                     : rd_kafka_error_string(err));
            failures++;
        }
    }
    rc = failures ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    rd_kafka_event_destroy(ev);
out_queue:
    rd_kafka_queue_destroy(q);
    return rc;
}

/* --- reset-offsets ------------------------------------------------------------------------- */

/* "2024-05-01T12:00:00Z" (UTC, Z optional) or milliseconds since the epoch. */
static int parse_datetime(const char *s, int64_t *ms)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*s && !*end && v >= 0) {
        *ms = v;
        return 0;
    }
    struct tm tm = {0};
    const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest || (*rest && strcmp(rest, "Z") != 0))
        return -1;
    time_t t = timegm(&tm);
    if (t == (time_t)-1)
        return -1;
    *ms = (int64_t)t * 1000;
    return 0;
}

/* Fills target offsets for every partition of the topic. */
static int plan_offsets(struct cli_common *c, const struct group_opts *o, rd_kafka_t *rk,
                        rd_kafka_topic_partition_list_t *plan)
{
    int n;
    if (cli_topic_partition_count(c, rk, o->topic, &n) != 0)
        return -1;
    for (int p = 0; p < n; p++)
        rd_kafka_topic_partition_list_add(plan, o->topic, p);
    if (o->to == RESET_DATETIME) {
        for (int p = 0; p < n; p++)
            plan->elems[p].offset = o->to_value;
        rd_kafka_resp_err_t err = rd_kafka_offsets_for_times(rk, plan, c->timeout_ms);
        if (err) {
            cli_report_cluster_error(c, "look up offsets by time", err);
            return -1;
        }
    }
    for (int p = 0; p < n; p++) {
        int64_t lo, hi;
        rd_kafka_resp_err_t err =
            rd_kafka_query_watermark_offsets(rk, o->topic, p, &lo, &hi, c->timeout_ms);
        if (err) {
            cli_report_cluster_error(c, "look up offsets", err);
            return -1;
        }
        rd_kafka_topic_partition_t *tp = &plan->elems[p];
        switch (o->to) {
        case RESET_EARLIEST:
            tp->offset = lo;
            break;
        case RESET_LATEST:
            tp->offset = hi;
            break;
        case RESET_OFFSET:
            tp->offset = o->to_value < lo ? lo : (o->to_value > hi ? hi : o->to_value);
            break;
        default: /* datetime: past the last record is the log end */
            if (tp->err || tp->offset < 0)
                tp->offset = hi;
            tp->err = RD_KAFKA_RESP_ERR_NO_ERROR;
            break;
        }
    }
    return 0;
}

static int group_reset_offsets(struct cli_common *c, const struct group_opts *o, rd_kafka_t *rk)
{
    const char *group = o->names[0];
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    int rc = CLI_EXIT_FAIL;
    const rd_kafka_ConsumerGroupDescription_t *d;
    rd_kafka_event_t *ev = describe_one(c, rk, q, group, &d);
    if (!ev)
        goto out_queue;
    size_t members = rd_kafka_ConsumerGroupDescription_member_count(d);
    rd_kafka_event_destroy(ev);
    if (members > 0) {
        cli_error(c, "group '%s' has %zu active member%s; stop %s before resetting offsets", group,
                  members, members == 1 ? "" : "s", members == 1 ? "it" : "them");
        goto out_queue;
    }
    rd_kafka_topic_partition_list_t *plan = rd_kafka_topic_partition_list_new(8);
    if (plan_offsets(c, o, rk, plan) != 0)
        goto out_plan;
    if (o->dry_run) {
        for (int i = 0; i < plan->cnt; i++)
            printf("%s\t%d\t%lld\t(dry run)\n", plan->elems[i].topic, plan->elems[i].partition,
                   (long long)plan->elems[i].offset);
        rc = CLI_EXIT_OK;
        goto out_plan;
    }
    rd_kafka_AlterConsumerGroupOffsets_t *req = rd_kafka_AlterConsumerGroupOffsets_new(group, plan);
    rd_kafka_AdminOptions_t *ao = admin_options(c, rk, RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS);
    rd_kafka_AlterConsumerGroupOffsets(rk, &req, 1, ao, q);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_AlterConsumerGroupOffsets_destroy(req);
    ev = admin_wait(c, q, "reset offsets");
    if (!ev)
        goto out_plan;
    size_t n;
    const rd_kafka_group_result_t **g = rd_kafka_AlterConsumerGroupOffsets_result_groups(
        rd_kafka_event_AlterConsumerGroupOffsets_result(ev), &n);
    if (n != 1 || rd_kafka_group_result_error(g[0])) {
        cli_error(c, "reset offsets of '%s': %s", group,
                  n == 1 ? rd_kafka_error_string(rd_kafka_group_result_error(g[0])) : "no answer");
    } else {
        const rd_kafka_topic_partition_list_t *res = rd_kafka_group_result_partitions(g[0]);
        int failures = 0;
        for (int i = 0; res && i < res->cnt; i++) {
            const rd_kafka_topic_partition_t *tp = &res->elems[i];
            if (tp->err) {
                cli_error(c, "%s [%d]: %s", tp->topic, tp->partition, rd_kafka_err2str(tp->err));
                failures++;
            } else {
                printf("%s\t%d\t%lld\n", tp->topic, tp->partition, (long long)tp->offset);
            }
        }
        rc = failures ? CLI_EXIT_FAIL : CLI_EXIT_OK;
    }
    rd_kafka_event_destroy(ev);
out_plan:
    rd_kafka_topic_partition_list_destroy(plan);
out_queue:
    rd_kafka_queue_destroy(q);
    return rc;
}

/* --- arguments ----------------------------------------------------------------------------- */

static int set_to(struct cli_common *c, struct group_opts *o, enum reset_to to)
{
    if (o->to != RESET_NONE) {
        cli_error(c, "give only one of --to-earliest, --to-latest, --to-offset, --to-datetime");
        return -1;
    }
    o->to = to;
    return 0;
}

static int parse_args(struct cli_common *c, struct group_opts *o, int argc, char **argv)
{
    long long n;
    int opt;
    cli_getopt_reset();
    while ((opt = getopt_long(argc, argv, CLI_COMMON_SHORTOPTS, group_longopts, NULL)) != -1) {
        int rc = cli_common_opt(c, opt, optarg);
        if (rc < 0)
            return -1;
        if (rc > 0)
            continue;
        switch (opt) {
        case OPT_TOPIC:
            o->topic = optarg;
            break;
        case OPT_TO_EARLIEST:
            if (set_to(c, o, RESET_EARLIEST))
                return -1;
            break;
        case OPT_TO_LATEST:
            if (set_to(c, o, RESET_LATEST))
                return -1;
            break;
        case OPT_TO_OFFSET:
            if (set_to(c, o, RESET_OFFSET) ||
                cli_parse_int(c, "--to-offset", optarg, 0, INT64_MAX, &n) != 0)
                return -1;
            o->to_value = n;
            break;
        case OPT_TO_DATETIME:
            if (set_to(c, o, RESET_DATETIME))
                return -1;
            if (parse_datetime(optarg, &o->to_value) != 0) {
                cli_error(c,
                          "--to-datetime: expected YYYY-MM-DDTHH:MM:SS (UTC) or milliseconds "
                          "since the epoch, got '%s'",
                          optarg);
                return -1;
            }
            break;
        case OPT_DRY_RUN:
            o->dry_run = true;
            break;
        default:
            return -1; /* getopt printed why */
        }
    }
    o->names = argv + optind;
    o->names_len = argc - optind;
    return 0;
}

static int check_args(struct cli_common *c, const struct group_opts *o)
{
    bool reset = !strcmp(o->sub, "reset-offsets");
    if (!reset && (o->topic || o->to != RESET_NONE || o->dry_run)) {
        cli_error(c, "--topic, --to-* and --dry-run apply only to 'group reset-offsets'");
        return -1;
    }
    if (!strcmp(o->sub, "list")) {
        if (o->names_len > 0) {
            cli_error(c, "'group list' takes no names (got '%s')", o->names[0]);
            return -1;
        }
    } else if (!strcmp(o->sub, "delete")) {
        if (o->names_len == 0) {
            cli_error(c, "'group delete' needs at least one group name");
            return -1;
        }
    } else if (o->names_len != 1) {
        cli_error(c, "'group %s' takes exactly one group name", o->sub);
        return -1;
    }
    if (reset && (!o->topic || o->to == RESET_NONE)) {
        cli_error(c, "'group reset-offsets' needs --topic T and one of --to-earliest, "
                     "--to-latest, --to-offset N, --to-datetime T");
        return -1;
    }
    return 0;
}

int cli_group(int argc, char **argv)
{
    static const char *const subs[] = {"list", "describe", "delete", "reset-offsets"};
    struct cli_common c;
    cli_common_init(&c, "group");
    struct group_opts o = {0};
    int rc = CLI_EXIT_USAGE;
    char cmd[32];
    o.sub = cli_sub_command(&c, group_help, subs, sizeof(subs) / sizeof(subs[0]), argc, argv, cmd,
                            sizeof(cmd), &rc);
    if (!o.sub)
        goto out;
    if (parse_args(&c, &o, argc - 1, argv + 1) != 0 || (!c.help && check_args(&c, &o) != 0)) {
        fprintf(stderr, "Run 'streampulse group --help' for usage.\n");
        goto out;
    }
    if (c.help) {
        fputs(group_help, stdout);
        rc = CLI_EXIT_OK;
        goto out;
    }
    rd_kafka_t *rk = admin_new(&c);
    if (!rk) {
        rc = CLI_EXIT_FAIL;
        goto out;
    }
    if (!strcmp(o.sub, "list"))
        rc = group_list(&c, rk);
    else if (!strcmp(o.sub, "describe"))
        rc = group_describe(&c, &o, rk);
    else if (!strcmp(o.sub, "delete"))
        rc = group_delete(&c, &o, rk);
    else
        rc = group_reset_offsets(&c, &o, rk);
    rd_kafka_destroy(rk);
out:
    cli_common_free(&c);
    return rc;
}
