/* `streampulse acl add|list|remove`: Kafka ACL bindings, managed as kafka-acls.sh
 * (kafka.admin.AclCommand) manages them, through CreateAcls (30), DescribeAcls (29) and
 * DeleteAcls (31).
 *
 * A command line names resources (--topic, --group, --transactional-id, --registry-subject,
 * each repeatable, and --cluster, --registry-global) and entries (principals x hosts x
 * operations, with a permission). The command is the product of the two:
 *   add     one binding per (resource, principal, host, operation);
 *   remove  one filter per the same product, what was not given left open (any principal, host,
 *           operation, permission);
 *   list    one filter per resource (none: every binding), printed per resource pattern.
 * Everything is checked before anything is sent, and a bad command line is one line on stderr
 * and exit 2: principals (User:NAME, security/acl.h), hosts ("*" or an IP literal), operations
 * valid for the resource type (Kafka's AclEntry.supportedOperations, plus All), pattern types
 * valid for the sub-command, the option combinations kafka-acls refuses.
 *
 * Two transports, chosen by the security.protocol that -X leaves in effect:
 *  - PLAINTEXT (the default): the requests go raw (cli/kraw.h, version 3) to the first broker of
 *    -b that accepts a connection, as `streampulse user` does. Not librdkafka, because 2.0.2
 *    (1) drops DescribeAcls' top-level error, so that a broker without an authorizer, or a
 *    principal without DESCRIBE on the cluster, would list as "no ACLs"; and (2) has no
 *    TransactionalId resource type (AclBinding_new refuses type 5, and type 5 reads back as
 *    UNKNOWN). The other -X properties are checked but have no effect on this path.
 *  - SSL, SASL_PLAINTEXT, SASL_SSL: librdkafka's admin API with every -X applied, and its two
 *    gaps: --transactional-id is refused, and an empty listing comes with a note that it may
 *    also be a refusal.
 * Both fill the same struct acl items (the broker's error goes into each), so building, printing
 * and the exit status are shared. Exit 1 when the broker refused any binding or filter.
 *
 * Output is kafka-acls' (Kafka 3.9+, tools/AclCommand.java), which scripts grep: per resource
 *   Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`:
 *   <TAB>(principal=User:a, host=*, operation=READ, permissionType=ALLOW)
 *   <empty line>
 * ("Adding ACLs for resource `...`: " for add, with kafka-acls' leading space before the first
 * entry; "Removed ACLs for resource `...`:" for remove, which kafka-acls does not print).
 * Unlike kafka-acls, the order is fixed (sorted by resource, principal, host, operation).
 *
 * Deliberate differences from kafka-acls: add needs --operation (kafka-acls defaults to All, an
 * easy way to grant everything by mistake); remove without --operation, --allow-host or
 * --deny-host matches any operation and host (kafka-acls' default All and "*" remove only
 * those); remove takes --principal (either permission); options a sub-command does not use are
 * refused, not ignored.
 *
 * Memory: every string of a run is either an argv entry or lives in the run's arena. */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/arena.h"
#include "base/check.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "cli/common.h"
#include "cli/kraw.h"
#include "security/acl.h"

#define KEY_DESCRIBE_ACLS 29
#define KEY_CREATE_ACLS 30
#define KEY_DELETE_ACLS 31
#define ACL_API_VERSION 3 /* flexible (kraw's only kind) and with the USER resource type */
#define ERR_CLUSTER_AUTHORIZATION_FAILED 31
#define ERR_SECURITY_DISABLED 54
#define ACL_ITEMS_MAX 10000 /* bindings or filters one command line may make */
#define ADMIN_WAIT_MARGIN_MS 5000

#define OP(x) (1u << (ACL_OP_##x))

enum {
    OPT_TOPIC = CLI_OPT_CMD,
    OPT_GROUP,
    OPT_CLUSTER,
    OPT_TXN_ID,
    OPT_REGISTRY_SUBJECT,
    OPT_REGISTRY_GLOBAL,
    OPT_PATTERN,
    OPT_ALLOW_PRINCIPAL,
    OPT_DENY_PRINCIPAL,
    OPT_PRINCIPAL,
    OPT_ALLOW_HOST,
    OPT_DENY_HOST,
    OPT_OPERATION,
    OPT_PRODUCER,
    OPT_CONSUMER,
    OPT_IDEMPOTENT,
    OPT_FORCE,
};

static const char acl_help[] =
    "Usage: streampulse acl add (--allow-principal P | --deny-principal P)...\n"
    "                 [--allow-host H]... [--deny-host H]...\n"
    "                 (--operation OP... | --producer [--idempotent] | --consumer)\n"
    "                 RESOURCE... [--resource-pattern-type literal|prefixed]\n"
    "       streampulse acl list [RESOURCE...] [--resource-pattern-type T] [--principal P]...\n"
    "       streampulse acl remove [--allow-principal P... | --deny-principal P...\n"
    "                 | --principal P...] [--allow-host H]... [--deny-host H]...\n"
    "                 [--operation OP... | --producer [--idempotent] | --consumer]\n"
    "                 RESOURCE... [--resource-pattern-type T] [--force]\n"
    "\n"
    "Kafka ACLs, as kafka-acls.sh manages them: a binding allows or denies a principal, from a\n"
    "host, an operation on the resources a pattern names (the authorizer must be on:\n"
    "authorizer.class.name). add makes one binding per resource, principal, host and operation;\n"
    "remove deletes the bindings that match, what is not given matching anything (any operation,\n"
    "host, principal); list prints the bindings per resource pattern, as kafka-acls does.\n"
    "\n"
    "Resources (repeatable and combinable; the literal name \"*\" is every resource of its type):\n"
    "      --topic NAME               --group NAME\n"
    "      --transactional-id ID      --cluster          (the one cluster resource)\n"
    "      --registry-subject NAME    a schema registry subject (Redpanda's rpk flag)\n"
    "      --registry-global          the schema registry as a whole (global config and mode)\n"
    "      --resource-pattern-type T  literal (default) or prefixed: the pattern the names make;\n"
    "                                 list and remove also take any (any pattern type, the name\n"
    "                                 exactly) and match (every pattern that covers the name:\n"
    "                                 literal, \"*\", prefixed). list without a resource: any.\n"
    "Entries:\n"
    "      --allow-principal P        User:NAME (User:* is everyone), repeatable\n"
    "      --deny-principal P         the same, for DENY bindings (DENY wins over ALLOW)\n"
    "      --allow-host H, --deny-host H\n"
    "                                 * or an IP address, repeatable; add's default is *\n"
    "      --operation OP             Read, Write, Create, Delete, Alter, Describe,\n"
    "                                 ClusterAction, DescribeConfigs, AlterConfigs,\n"
    "                                 IdempotentWrite or All (any case), repeatable; each must\n"
    "                                 be valid for the resource type (Write is not, on a group)\n"
    "      --producer                 Write, Describe, Create on the topics; Write, Describe on\n"
    "                                 the transactional ids (needs --topic)\n"
    "      --idempotent               with --producer: IdempotentWrite on the cluster\n"
    "      --consumer                 Read, Describe on the topics, Read on the groups (needs\n"
    "                                 --topic and --group)\n"
    "      --principal P              (list, remove) only P's bindings, either permission\n"
    "      --force                    (remove) do not ask; without it remove asks on a terminal\n"
    "                                 and refuses when standard input is not one\n"
    "\n"
    "On a PLAINTEXT connection (the default) the ACL requests are sent directly, so every\n"
    "resource type and every error of the broker comes through; -X security.protocol=SSL or\n"
    "SASL_* goes through librdkafka 2.0.2, which has no --transactional-id nor the registry's\n"
    "resources and cannot tell an empty listing from a refused one. Exit 1 when the broker\n"
    "refused a binding or filter.\n"
    "\n" CLI_COMMON_HELP;

static const struct option acl_longopts[] = {
    {"topic", required_argument, NULL, OPT_TOPIC},
    {"group", required_argument, NULL, OPT_GROUP},
    {"cluster", no_argument, NULL, OPT_CLUSTER},
    {"transactional-id", required_argument, NULL, OPT_TXN_ID},
    {"registry-subject", required_argument, NULL, OPT_REGISTRY_SUBJECT},
    {"registry-global", no_argument, NULL, OPT_REGISTRY_GLOBAL},
    {"resource-pattern-type", required_argument, NULL, OPT_PATTERN},
    {"allow-principal", required_argument, NULL, OPT_ALLOW_PRINCIPAL},
    {"deny-principal", required_argument, NULL, OPT_DENY_PRINCIPAL},
    {"principal", required_argument, NULL, OPT_PRINCIPAL},
    {"allow-host", required_argument, NULL, OPT_ALLOW_HOST},
    {"deny-host", required_argument, NULL, OPT_DENY_HOST},
    {"operation", required_argument, NULL, OPT_OPERATION},
    {"producer", no_argument, NULL, OPT_PRODUCER},
    {"consumer", no_argument, NULL, OPT_CONSUMER},
    {"idempotent", no_argument, NULL, OPT_IDEMPOTENT},
    {"force", no_argument, NULL, OPT_FORCE},
    CLI_COMMON_LONGOPTS,
    {NULL, 0, NULL, 0},
};

/* A binding, or a filter when a string is NULL or an enum is ANY, with the broker's answer. */
struct acl {
    enum acl_resource_type type;
    enum acl_pattern_type pattern;
    const char *name;      /* NULL: any name (filters) */
    const char *principal; /* NULL: any principal (filters) */
    const char *host;      /* NULL: any host (filters) */
    enum acl_operation op;
    enum acl_permission perm;
    int16_t error;       /* the broker's error code for this binding or filter; 0: none */
    const char *message; /* its message, or NULL */
};

struct acl_list {
    struct acl *v; /* owned */
    size_t n;      /* used */
    size_t cap;    /* allocated */
};

struct strv {
    const char **v; /* owned array of argv strings */
    size_t n;       /* used */
    size_t cap;     /* allocated */
};

struct acl_opts {
    const char *sub;           /* "add", "list" or "remove" */
    struct acl_list res;       /* the resources given (type and name; pattern set by check) */
    const char *pattern_arg;   /* --resource-pattern-type as given, NULL if not */
    struct strv allow_princ;   /* --allow-principal */
    struct strv deny_princ;    /* --deny-principal */
    struct strv princ;         /* --principal */
    struct strv allow_hosts;   /* --allow-host */
    struct strv deny_hosts;    /* --deny-host */
    uint32_t ops;              /* --operation: bit 1 << enum acl_operation */
    const char *bad_operation; /* the first --operation that did not parse */
    bool cluster;              /* --cluster given */
    bool registry_global;      /* --registry-global given */
    bool producer;             /* --producer */
    bool consumer;             /* --consumer */
    bool idempotent;           /* --idempotent */
    bool force;                /* --force */
};

/* One run: the transport and the memory of everything received. */
struct run {
    struct cli_common *c;
    struct arena arena;  /* strings and messages from the broker */
    rd_kafka_t *rk;      /* NULL: raw requests (PLAINTEXT) */
    rd_kafka_queue_t *q; /* rk's admin results */
    int16_t told;        /* the request-wide refusal reported already (report_error), or 0 */
};

/* --- small helpers ------------------------------------------------------------------------ */

static void strv_add(struct strv *s, const char *x)
{
    MEM_GROW(s->v, s->cap, s->n + 1);
    s->v[s->n++] = x;
}

static void acl_list_add(struct acl_list *l, const struct acl *a)
{
    MEM_GROW(l->v, l->cap, l->n + 1);
    l->v[l->n++] = *a;
}

static void acl_list_free(struct acl_list *l)
{
    mem_free(l->v);
    memset(l, 0, sizeof(*l));
}

static int popcount32(uint32_t x)
{
    return __builtin_popcount(x);
}

static const char *resource_flag(enum acl_resource_type t)
{
    switch (t) {
    case ACL_RESOURCE_TOPIC:
        return "--topic";
    case ACL_RESOURCE_GROUP:
        return "--group";
    case ACL_RESOURCE_CLUSTER:
        return "--cluster";
    case ACL_RESOURCE_TRANSACTIONAL_ID:
        return "--transactional-id";
    case ACL_RESOURCE_SUBJECT:
        return "--registry-subject";
    case ACL_RESOURCE_REGISTRY:
        return "--registry-global";
    default:
        return "?";
    }
}

static const char *resource_words(enum acl_resource_type t)
{
    switch (t) {
    case ACL_RESOURCE_TOPIC:
        return "a topic";
    case ACL_RESOURCE_GROUP:
        return "a group";
    case ACL_RESOURCE_CLUSTER:
        return "the cluster";
    case ACL_RESOURCE_SUBJECT:
        return "a subject";
    case ACL_RESOURCE_REGISTRY:
        return "the registry";
    default:
        return "a transactional id";
    }
}

/* Kafka's AclEntry.supportedOperations, and ALL. */
static uint32_t valid_ops(enum acl_resource_type t)
{
    switch (t) {
    case ACL_RESOURCE_TOPIC:
        return OP(ALL) | OP(READ) | OP(WRITE) | OP(CREATE) | OP(DESCRIBE) | OP(DELETE) | OP(ALTER) |
               OP(DESCRIBE_CONFIGS) | OP(ALTER_CONFIGS);
    case ACL_RESOURCE_GROUP:
        return OP(ALL) | OP(READ) | OP(DESCRIBE) | OP(DELETE) | OP(DESCRIBE_CONFIGS) |
               OP(ALTER_CONFIGS);
    case ACL_RESOURCE_CLUSTER:
        return OP(ALL) | OP(CREATE) | OP(CLUSTER_ACTION) | OP(DESCRIBE_CONFIGS) |
               OP(ALTER_CONFIGS) | OP(IDEMPOTENT_WRITE) | OP(ALTER) | OP(DESCRIBE);
    case ACL_RESOURCE_TRANSACTIONAL_ID:
        return OP(ALL) | OP(DESCRIBE) | OP(WRITE);
    case ACL_RESOURCE_SUBJECT: /* Redpanda's Schema Registry Authorization */
    case ACL_RESOURCE_REGISTRY:
        return OP(ALL) | OP(READ) | OP(WRITE) | OP(DELETE) | OP(DESCRIBE) | OP(DESCRIBE_CONFIGS) |
               OP(ALTER_CONFIGS);
    default:
        return 0;
    }
}

/* The operations --producer and --consumer grant on a resource type (kafka-acls'). */
static uint32_t role_ops(const struct acl_opts *o, enum acl_resource_type t)
{
    uint32_t m = 0;
    if (o->producer && t == ACL_RESOURCE_TOPIC)
        m |= OP(WRITE) | OP(DESCRIBE) | OP(CREATE);
    if (o->producer && t == ACL_RESOURCE_TRANSACTIONAL_ID)
        m |= OP(WRITE) | OP(DESCRIBE);
    if (o->producer && o->idempotent && t == ACL_RESOURCE_CLUSTER)
        m |= OP(IDEMPOTENT_WRITE);
    if (o->consumer && t == ACL_RESOURCE_TOPIC)
        m |= OP(READ) | OP(DESCRIBE);
    if (o->consumer && t == ACL_RESOURCE_GROUP)
        m |= OP(READ);
    return m;
}

/* "Read, Write, ..." for the operations of mask, in Kafka's Pascal case. */
static void ops_words(uint32_t mask, struct strbuf *b)
{
    for (int op = ACL_OP_ALL; op <= ACL_OP_DESCRIBE_TOKENS; op++)
        if (mask & (1u << op))
            strbuf_printf(b, "%s%s", b->len ? ", " : "",
                          acl_operation_name((enum acl_operation)op));
}

static bool host_valid(const char *h)
{
    unsigned char addr[16];
    if (strcmp(h, ACL_WILDCARD) == 0)
        return true;
    return strlen(h) <= ACL_HOST_MAX &&
           (inet_pton(AF_INET, h, addr) == 1 || inet_pton(AF_INET6, h, addr) == 1);
}

/* Kafka's enum constant for a Pascal-case name: "ClusterAction" -> "CLUSTER_ACTION". */
static void sb_enum(struct strbuf *b, const char *pascal)
{
    for (const char *p = pascal; *p; p++) {
        if (p != pascal && isupper((unsigned char)*p))
            strbuf_putc(b, '_');
        strbuf_putc(b, (char)toupper((unsigned char)*p));
    }
}

/* ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL), as Kafka's toString. */
static void sb_pattern(struct strbuf *b, const struct acl *a)
{
    strbuf_puts(b, "ResourcePattern(resourceType=");
    sb_enum(b, acl_resource_type_name(a->type));
    strbuf_printf(b, ", name=%s, patternType=%s)", a->name ? a->name : "<any>",
                  acl_pattern_type_name(a->pattern));
}

/* (principal=User:a, host=*, operation=READ, permissionType=ALLOW), as Kafka's toString. */
static void sb_entry(struct strbuf *b, const struct acl *a)
{
    strbuf_printf(b, "(principal=%s, host=%s, operation=", a->principal ? a->principal : "<any>",
                  a->host ? a->host : "<any>");
    sb_enum(b, acl_operation_name(a->op));
    strbuf_puts(b, ", permissionType=");
    sb_enum(b, acl_permission_name(a->perm));
    strbuf_puts(b, ")");
}

static int cmp_str(const char *a, const char *b)
{
    if (!a || !b)
        return (a != NULL) - (b != NULL);
    return strcmp(a, b);
}

static int cmp_pattern(const struct acl *a, const struct acl *b)
{
    if (a->type != b->type)
        return (int)a->type - (int)b->type;
    int c = cmp_str(a->name, b->name);
    return c ? c : (int)a->pattern - (int)b->pattern;
}

static int cmp_acl(const void *pa, const void *pb)
{
    const struct acl *a = pa, *b = pb;
    int c = cmp_pattern(a, b);
    if (!c)
        c = cmp_str(a->principal, b->principal);
    if (!c)
        c = cmp_str(a->host, b->host);
    if (!c)
        c = (int)a->op - (int)b->op;
    return c ? c : (int)a->perm - (int)b->perm;
}

/* Sorts l and drops repeats. */
static void acl_list_sort_unique(struct acl_list *l)
{
    if (l->n == 0)
        return;
    qsort(l->v, l->n, sizeof(l->v[0]), cmp_acl);
    size_t k = 1;
    for (size_t i = 1; i < l->n; i++)
        if (cmp_acl(&l->v[k - 1], &l->v[i]) != 0)
            l->v[k++] = l->v[i];
    l->n = k;
}

enum print_style { PRINT_CURRENT, PRINT_ADDING, PRINT_REMOVED };

/* Prints sorted l as kafka-acls does, a block per resource pattern; with principal, only that
 * principal's bindings. */
static void print_grouped(const struct acl_list *l, enum print_style style, const char *principal)
{
    static const char *const heads[] = {"Current ACLs for", "Adding ACLs for", "Removed ACLs for"};
    struct strbuf b;
    strbuf_init(&b);
    for (size_t i = 0; i < l->n;) {
        size_t end = i, shown = 0;
        while (end < l->n && cmp_pattern(&l->v[i], &l->v[end]) == 0)
            end++;
        for (size_t j = i; j < end; j++) {
            if (principal && cmp_str(principal, l->v[j].principal) != 0)
                continue;
            if (shown++ == 0) {
                strbuf_reset(&b);
                sb_pattern(&b, &l->v[i]);
                printf("%s resource `%s`:%s\n", heads[style], strbuf_str(&b),
                       style == PRINT_ADDING ? " " : "");
            }
            strbuf_reset(&b);
            sb_entry(&b, &l->v[j]);
            printf("%s\t%s\n", style == PRINT_ADDING && shown == 1 ? " " : "", strbuf_str(&b));
        }
        if (shown)
            printf("\n");
        i = end;
    }
    strbuf_destroy(&b);
}

/* Reports the broker's error about item a (verb: "add", "remove", "list"). The refusals of a
 * whole request, SECURITY_DISABLED and CLUSTER_AUTHORIZATION_FAILED, come once per item but are
 * said once per run; SECURITY_DISABLED in the words of the broker's missing setting. */
static void report_error(struct run *r, const char *verb, const struct acl *a, int16_t code,
                         const char *message)
{
    const char *name = rd_kafka_err2name((rd_kafka_resp_err_t)code);
    const char *text =
        message && message[0] ? message : rd_kafka_err2str((rd_kafka_resp_err_t)code);
    if (code == ERR_SECURITY_DISABLED || code == ERR_CLUSTER_AUTHORIZATION_FAILED) {
        if (r->told == code)
            return;
        r->told = code;
        if (code == ERR_SECURITY_DISABLED)
            cli_error(r->c, "the broker has no authorizer (set authorizer.class.name): %s", name);
        else
            cli_error(r->c, "not authorized: %s: %s", name, text);
        return;
    }
    struct strbuf b;
    strbuf_init(&b);
    sb_entry(&b, a);
    strbuf_puts(&b, " on `");
    sb_pattern(&b, a);
    cli_error(r->c, "cannot %s %s`: %s: %s", verb, strbuf_str(&b), name, text);
    strbuf_destroy(&b);
}

/* --- raw requests (PLAINTEXT) -------------------------------------------------------------- */

/* A compact (nullable) string into the run's arena; NULL when null. */
static const char *raw_str(struct run *r, struct kraw_reader *rd)
{
    uint32_t n = kraw_ruvar(rd);
    if (rd->bad || n == 0)
        return NULL;
    if (n - 1 > (size_t)(rd->end - rd->p)) {
        rd->bad = true;
        return NULL;
    }
    const char *s = arena_strndup(&r->arena, (const char *)rd->p, n - 1);
    rd->p += n - 1;
    return s;
}

/* A binding or filter as CreateAcls' creations and the filters of DescribeAcls and DeleteAcls
 * carry it (v2+), with its tagged fields. */
static void raw_put_acl(struct strbuf *b, const struct acl *a)
{
    kraw_w8(b, (int8_t)a->type);
    kraw_wcstr(b, a->name);
    kraw_w8(b, (int8_t)a->pattern);
    kraw_wcstr(b, a->principal);
    kraw_wcstr(b, a->host);
    kraw_w8(b, (int8_t)a->op);
    kraw_w8(b, (int8_t)a->perm);
    kraw_wuvar(b, 0);
}

/* Sends body as api (what: its name); the answer's body goes to resp. 0, or -1 said. */
static int raw_call(struct run *r, int16_t key, const char *what, const struct strbuf *body,
                    struct strbuf *resp)
{
    char err[512];
    if (kraw_call(r->c->brokers, key, ACL_API_VERSION, body, r->c->timeout_ms, resp, err,
                  sizeof(err)) != 0) {
        cli_error(r->c, "%s: %s", what, err);
        return -1;
    }
    return 0;
}

static int raw_create(struct run *r, struct acl_list *l)
{
    struct strbuf body, resp;
    strbuf_init(&body);
    strbuf_init(&resp);
    kraw_warray(&body, (int32_t)l->n);
    for (size_t i = 0; i < l->n; i++)
        raw_put_acl(&body, &l->v[i]);
    kraw_wuvar(&body, 0);
    int rc = raw_call(r, KEY_CREATE_ACLS, "CreateAcls", &body, &resp);
    if (rc == 0) {
        struct kraw_reader rd = {(const uint8_t *)resp.p, (const uint8_t *)resp.p + resp.len, 0};
        (void)kraw_r32(&rd); /* throttle */
        int32_t n = kraw_rarray(&rd);
        for (int32_t i = 0; i < n && (size_t)i < l->n && !rd.bad; i++) {
            l->v[i].error = kraw_r16(&rd);
            l->v[i].message = raw_str(r, &rd);
            kraw_rtags(&rd);
        }
        kraw_rtags(&rd);
        if (rd.bad || n != (int32_t)l->n) {
            cli_error(r->c, "CreateAcls: malformed answer (%d results for %zu bindings)", n, l->n);
            rc = -1;
        }
    }
    strbuf_destroy(&body);
    strbuf_destroy(&resp);
    return rc;
}

/* Reads DescribeAcls' resources into out. */
static void raw_read_resources(struct run *r, struct kraw_reader *rd, struct acl_list *out)
{
    int32_t n = kraw_rarray(rd);
    for (int32_t i = 0; i < n && !rd->bad; i++) {
        struct acl a = {0};
        a.type = (enum acl_resource_type)kraw_r8(rd);
        a.name = raw_str(r, rd);
        a.pattern = (enum acl_pattern_type)kraw_r8(rd);
        int32_t m = kraw_rarray(rd);
        for (int32_t j = 0; j < m && !rd->bad; j++) {
            a.principal = raw_str(r, rd);
            a.host = raw_str(r, rd);
            a.op = (enum acl_operation)kraw_r8(rd);
            a.perm = (enum acl_permission)kraw_r8(rd);
            kraw_rtags(rd);
            if (!rd->bad)
                acl_list_add(out, &a);
        }
        kraw_rtags(rd);
    }
}

/* DescribeAcls of f: the bindings go to out; the broker's error into f. */
static int raw_describe(struct run *r, struct acl *f, struct acl_list *out)
{
    struct strbuf body, resp;
    strbuf_init(&body);
    strbuf_init(&resp);
    raw_put_acl(&body, f); /* the filter's fields, then the request's tagged fields */
    int rc = raw_call(r, KEY_DESCRIBE_ACLS, "DescribeAcls", &body, &resp);
    if (rc == 0) {
        struct kraw_reader rd = {(const uint8_t *)resp.p, (const uint8_t *)resp.p + resp.len, 0};
        (void)kraw_r32(&rd);
        f->error = kraw_r16(&rd);
        f->message = raw_str(r, &rd);
        raw_read_resources(r, &rd, out);
        kraw_rtags(&rd);
        if (rd.bad) {
            cli_error(r->c, "DescribeAcls: malformed answer");
            rc = -1;
        }
    }
    strbuf_destroy(&body);
    strbuf_destroy(&resp);
    return rc;
}

/* One matching binding of a DeleteAcls filter result, with its own error. */
static void raw_read_match(struct run *r, struct kraw_reader *rd, struct acl *a)
{
    a->error = kraw_r16(rd);
    a->message = raw_str(r, rd);
    a->type = (enum acl_resource_type)kraw_r8(rd);
    a->name = raw_str(r, rd);
    a->pattern = (enum acl_pattern_type)kraw_r8(rd);
    a->principal = raw_str(r, rd);
    a->host = raw_str(r, rd);
    a->op = (enum acl_operation)kraw_r8(rd);
    a->perm = (enum acl_permission)kraw_r8(rd);
    kraw_rtags(rd);
}

/* DeleteAcls of the filters l: each filter's error into it, every matching binding to out. */
static int raw_delete(struct run *r, struct acl_list *l, struct acl_list *out)
{
    struct strbuf body, resp;
    strbuf_init(&body);
    strbuf_init(&resp);
    kraw_warray(&body, (int32_t)l->n);
    for (size_t i = 0; i < l->n; i++)
        raw_put_acl(&body, &l->v[i]);
    kraw_wuvar(&body, 0);
    int rc = raw_call(r, KEY_DELETE_ACLS, "DeleteAcls", &body, &resp);
    if (rc == 0) {
        struct kraw_reader rd = {(const uint8_t *)resp.p, (const uint8_t *)resp.p + resp.len, 0};
        (void)kraw_r32(&rd);
        int32_t n = kraw_rarray(&rd);
        for (int32_t i = 0; i < n && (size_t)i < l->n && !rd.bad; i++) {
            l->v[i].error = kraw_r16(&rd);
            l->v[i].message = raw_str(r, &rd);
            int32_t m = kraw_rarray(&rd);
            for (int32_t j = 0; j < m && !rd.bad; j++) {
                struct acl a = {0};
                raw_read_match(r, &rd, &a);
                if (!rd.bad)
                    acl_list_add(out, &a);
            }
            kraw_rtags(&rd);
        }
        kraw_rtags(&rd);
        if (rd.bad || n != (int32_t)l->n) {
            cli_error(r->c, "DeleteAcls: malformed answer (%d results for %zu filters)", n, l->n);
            rc = -1;
        }
    }
    strbuf_destroy(&body);
    strbuf_destroy(&resp);
    return rc;
}

/* --- librdkafka (SSL, SASL_*) -------------------------------------------------------------- */

static rd_kafka_AdminOptions_t *rdk_options(struct run *r, rd_kafka_admin_op_t op)
{
    char err[256];
    rd_kafka_AdminOptions_t *ao = rd_kafka_AdminOptions_new(r->rk, op);
    rd_kafka_AdminOptions_set_request_timeout(ao, r->c->timeout_ms, err, sizeof(err));
    return ao;
}

/* Waits for the admin result; NULL with the reason said (request-level error included). */
static rd_kafka_event_t *rdk_wait(struct run *r, const char *what)
{
    rd_kafka_event_t *ev = rd_kafka_queue_poll(r->q, r->c->timeout_ms + ADMIN_WAIT_MARGIN_MS);
    if (!ev) {
        cli_report_cluster_error(r->c, what, RD_KAFKA_RESP_ERR__TIMED_OUT);
        return NULL;
    }
    rd_kafka_resp_err_t err = rd_kafka_event_error(ev);
    if (err) {
        if (err == RD_KAFKA_RESP_ERR__TIMED_OUT || err == RD_KAFKA_RESP_ERR__TRANSPORT)
            cli_report_cluster_error(r->c, what, err);
        else
            cli_error(r->c, "%s: %s", what, rd_kafka_event_error_string(ev));
        rd_kafka_event_destroy(ev);
        return NULL;
    }
    return ev;
}

/* librdkafka's copy of a (NULL when it refuses one, reason said). */
static void *rdk_acl(struct run *r, const struct acl *a, bool filter)
{
    char err[256];
    rd_kafka_AclBinding_t *b = (filter ? rd_kafka_AclBindingFilter_new : rd_kafka_AclBinding_new)(
        (rd_kafka_ResourceType_t)a->type, a->name, (rd_kafka_ResourcePatternType_t)a->pattern,
        a->principal, a->host, (rd_kafka_AclOperation_t)a->op,
        (rd_kafka_AclPermissionType_t)a->perm, err, sizeof(err));
    if (!b)
        cli_error(r->c, "librdkafka refuses the %s: %s", filter ? "filter" : "binding", err);
    return b;
}

static void rdk_free_acls(rd_kafka_AclBinding_t **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (v[i])
            rd_kafka_AclBinding_destroy(v[i]);
    mem_free(v);
}

/* l's items as librdkafka bindings or filters (*out, n entries), or -1 said. */
static int rdk_acls(struct run *r, const struct acl_list *l, bool filter,
                    rd_kafka_AclBinding_t ***out)
{
    *out = mem_calloc(l->n ? l->n : 1, sizeof(**out));
    for (size_t i = 0; i < l->n; i++)
        if (!((*out)[i] = rdk_acl(r, &l->v[i], filter)))
            return -1;
    return 0;
}

static const char *rdk_str(struct run *r, const char *s)
{
    return s ? arena_strndup(&r->arena, s, strlen(s)) : NULL;
}

static void rdk_error_into(struct run *r, const rd_kafka_error_t *e, struct acl *a)
{
    if (!e)
        return;
    a->error = (int16_t)rd_kafka_error_code(e);
    a->message = rdk_str(r, rd_kafka_error_string(e));
}

static void rdk_binding_into(struct run *r, const rd_kafka_AclBinding_t *b, struct acl *a)
{
    a->type = (enum acl_resource_type)rd_kafka_AclBinding_restype(b);
    a->name = rdk_str(r, rd_kafka_AclBinding_name(b));
    a->pattern = (enum acl_pattern_type)rd_kafka_AclBinding_resource_pattern_type(b);
    a->principal = rdk_str(r, rd_kafka_AclBinding_principal(b));
    a->host = rdk_str(r, rd_kafka_AclBinding_host(b));
    a->op = (enum acl_operation)rd_kafka_AclBinding_operation(b);
    a->perm = (enum acl_permission)rd_kafka_AclBinding_permission_type(b);
}

static int rdk_create(struct run *r, struct acl_list *l)
{
    rd_kafka_AclBinding_t **v;
    int rc = rdk_acls(r, l, false, &v);
    if (rc == 0) {
        rd_kafka_AdminOptions_t *ao = rdk_options(r, RD_KAFKA_ADMIN_OP_CREATEACLS);
        rd_kafka_CreateAcls(r->rk, v, l->n, ao, r->q);
        rd_kafka_AdminOptions_destroy(ao);
        rd_kafka_event_t *ev = rdk_wait(r, "CreateAcls");
        rc = ev ? 0 : -1;
        size_t n = 0;
        const rd_kafka_acl_result_t **res =
            ev ? rd_kafka_CreateAcls_result_acls(rd_kafka_event_CreateAcls_result(ev), &n) : NULL;
        for (size_t i = 0; i < n && i < l->n; i++)
            rdk_error_into(r, rd_kafka_acl_result_error(res[i]), &l->v[i]);
        if (ev)
            rd_kafka_event_destroy(ev);
    }
    rdk_free_acls(v, l->n);
    return rc;
}

static int rdk_describe(struct run *r, struct acl *f, struct acl_list *out)
{
    rd_kafka_AclBinding_t *flt = rdk_acl(r, f, true);
    if (!flt)
        return -1;
    rd_kafka_AdminOptions_t *ao = rdk_options(r, RD_KAFKA_ADMIN_OP_DESCRIBEACLS);
    rd_kafka_DescribeAcls(r->rk, flt, ao, r->q);
    rd_kafka_AdminOptions_destroy(ao);
    rd_kafka_AclBinding_destroy(flt);
    rd_kafka_event_t *ev = rdk_wait(r, "DescribeAcls");
    if (!ev)
        return -1;
    size_t n = 0;
    const rd_kafka_AclBinding_t **res =
        rd_kafka_DescribeAcls_result_acls(rd_kafka_event_DescribeAcls_result(ev), &n);
    for (size_t i = 0; i < n; i++) {
        struct acl a = {0};
        rdk_binding_into(r, res[i], &a);
        acl_list_add(out, &a);
    }
    rd_kafka_event_destroy(ev);
    return 0;
}

static int rdk_delete(struct run *r, struct acl_list *l, struct acl_list *out)
{
    rd_kafka_AclBinding_t **v;
    int rc = rdk_acls(r, l, true, &v);
    if (rc == 0) {
        rd_kafka_AdminOptions_t *ao = rdk_options(r, RD_KAFKA_ADMIN_OP_DELETEACLS);
        rd_kafka_DeleteAcls(r->rk, v, l->n, ao, r->q);
        rd_kafka_AdminOptions_destroy(ao);
        rd_kafka_event_t *ev = rdk_wait(r, "DeleteAcls");
        rc = ev ? 0 : -1;
        size_t n = 0;
        const rd_kafka_DeleteAcls_result_response_t **res =
            ev ? rd_kafka_DeleteAcls_result_responses(rd_kafka_event_DeleteAcls_result(ev), &n)
               : NULL;
        for (size_t i = 0; i < n && i < l->n; i++) {
            rdk_error_into(r, rd_kafka_DeleteAcls_result_response_error(res[i]), &l->v[i]);
            size_t m = 0;
            const rd_kafka_AclBinding_t **match =
                rd_kafka_DeleteAcls_result_response_matching_acls(res[i], &m);
            for (size_t j = 0; j < m; j++) {
                struct acl a = {0};
                rdk_binding_into(r, match[j], &a);
                rdk_error_into(r, rd_kafka_AclBinding_error(match[j]), &a);
                acl_list_add(out, &a);
            }
        }
        if (ev)
            rd_kafka_event_destroy(ev);
    }
    rdk_free_acls(v, l->n);
    return rc;
}

/* --- the transport ------------------------------------------------------------------------- */

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

/* Checks every -X and, off PLAINTEXT, makes the librdkafka client. 0, or -1 said. */
static int run_open(struct run *r, struct cli_common *c)
{
    r->c = c;
    arena_init(&r->arena, 16384);
    rd_kafka_conf_t *conf = cli_conf_new(c);
    if (cli_conf_apply_user(c, conf) != 0) {
        rd_kafka_conf_destroy(conf);
        return -1;
    }
    if (plaintext(c)) {
        rd_kafka_conf_destroy(conf);
        return 0;
    }
    r->rk = cli_client_new(c, RD_KAFKA_PRODUCER, conf);
    if (!r->rk)
        return -1;
    r->q = rd_kafka_queue_new(r->rk);
    return 0;
}

static void run_close(struct run *r)
{
    if (r->q)
        rd_kafka_queue_destroy(r->q);
    if (r->rk)
        rd_kafka_destroy(r->rk);
    if (r->c)
        arena_destroy(&r->arena);
}

static int send_create(struct run *r, struct acl_list *l)
{
    return r->rk ? rdk_create(r, l) : raw_create(r, l);
}

static int send_describe(struct run *r, struct acl *f, struct acl_list *out)
{
    return r->rk ? rdk_describe(r, f, out) : raw_describe(r, f, out);
}

static int send_delete(struct run *r, struct acl_list *l, struct acl_list *out)
{
    return r->rk ? rdk_delete(r, l, out) : raw_delete(r, l, out);
}

/* --- the sub-commands ---------------------------------------------------------------------- */

static int acl_add(struct run *r, struct acl_list *bindings)
{
    print_grouped(bindings, PRINT_ADDING, NULL);
    fflush(stdout);
    if (send_create(r, bindings) != 0)
        return CLI_EXIT_FAIL;
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < bindings->n; i++) {
        struct acl *a = &bindings->v[i];
        if (a->error) {
            report_error(r, "add", a, a->error, a->message);
            rc = CLI_EXIT_FAIL;
        }
    }
    return rc;
}

static int acl_list(struct run *r, struct acl_list *filters, const struct strv *principals)
{
    struct acl_list found = {0};
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < filters->n && rc == CLI_EXIT_OK; i++) {
        struct acl *f = &filters->v[i];
        if (send_describe(r, f, &found) != 0) {
            rc = CLI_EXIT_FAIL;
        } else if (f->error) {
            report_error(r, "list", f, f->error, f->message);
            rc = CLI_EXIT_FAIL;
        }
    }
    if (rc == CLI_EXIT_OK) {
        acl_list_sort_unique(&found);
        for (size_t i = 0; i < principals->n; i++) {
            printf("ACLs for principal `%s`\n", principals->v[i]);
            print_grouped(&found, PRINT_CURRENT, principals->v[i]);
        }
        if (principals->n == 0)
            print_grouped(&found, PRINT_CURRENT, NULL);
        if (found.n == 0 && r->rk)
            cli_error(r->c, "note: no ACLs listed; through librdkafka 2.0.2 (-X security.protocol) "
                            "a broker's refusal (no authorizer, no DESCRIBE on the cluster) looks "
                            "the same");
    }
    acl_list_free(&found);
    return rc;
}

/* Asks on the terminal whether to remove what filters match. CLI_EXIT_OK to go on. */
static int confirm_remove(const struct cli_common *c, const struct acl_list *filters)
{
    struct strbuf b;
    strbuf_init(&b);
    fprintf(stderr, "Are you sure you want to remove the ACLs that match:\n");
    for (size_t i = 0; i < filters->n; i++) {
        strbuf_reset(&b);
        sb_entry(&b, &filters->v[i]);
        strbuf_puts(&b, " on `");
        sb_pattern(&b, &filters->v[i]);
        fprintf(stderr, "\t%s`\n", strbuf_str(&b));
    }
    strbuf_destroy(&b);
    fprintf(stderr, "(y/n) ");
    fflush(stderr);
    char line[64];
    bool got = fgets(line, sizeof(line), stdin) != NULL;
    if (cli_interrupted)
        return CLI_EXIT_INTERRUPTED;
    line[got ? strcspn(line, "\r\n") : 0] = '\0';
    if (strcasecmp(line, "y") == 0 || strcasecmp(line, "yes") == 0)
        return CLI_EXIT_OK;
    cli_error(c, "nothing removed");
    return CLI_EXIT_FAIL;
}

static int acl_remove(struct run *r, struct acl_list *filters)
{
    struct acl_list removed = {0}, done = {0};
    int rc = send_delete(r, filters, &removed) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    for (size_t i = 0; rc == CLI_EXIT_OK && i < filters->n; i++) {
        struct acl *f = &filters->v[i];
        if (f->error)
            report_error(r, "remove", f, f->error, f->message);
    }
    for (size_t i = 0; i < removed.n; i++) {
        struct acl *a = &removed.v[i];
        if (a->error)
            report_error(r, "remove", a, a->error, a->message);
        else
            acl_list_add(&done, a);
    }
    bool failed = rc != CLI_EXIT_OK;
    for (size_t i = 0; i < filters->n; i++)
        failed |= filters->v[i].error != 0;
    for (size_t i = 0; i < removed.n; i++)
        failed |= removed.v[i].error != 0;
    acl_list_sort_unique(&done);
    print_grouped(&done, PRINT_REMOVED, NULL);
    if (!failed && done.n == 0)
        printf("No ACLs matched; nothing removed.\n");
    acl_list_free(&removed);
    acl_list_free(&done);
    return failed ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* --- the command line ---------------------------------------------------------------------- */

static void add_resource(struct acl_opts *o, enum acl_resource_type t, const char *name)
{
    struct acl a = {.type = t, .name = name};
    acl_list_add(&o->res, &a);
}

/* One option other than the common ones. 0, or -1 when it is unknown. */
static int parse_opt(struct acl_opts *o, int opt, const char *arg)
{
    enum acl_operation op;
    switch (opt) {
    case OPT_TOPIC:
        add_resource(o, ACL_RESOURCE_TOPIC, arg);
        return 0;
    case OPT_GROUP:
        add_resource(o, ACL_RESOURCE_GROUP, arg);
        return 0;
    case OPT_TXN_ID:
        add_resource(o, ACL_RESOURCE_TRANSACTIONAL_ID, arg);
        return 0;
    case OPT_CLUSTER:
        o->cluster = true;
        return 0;
    case OPT_REGISTRY_SUBJECT:
        add_resource(o, ACL_RESOURCE_SUBJECT, arg);
        return 0;
    case OPT_REGISTRY_GLOBAL:
        o->registry_global = true;
        return 0;
    case OPT_PATTERN:
        o->pattern_arg = arg;
        return 0;
    case OPT_ALLOW_PRINCIPAL:
        strv_add(&o->allow_princ, arg);
        return 0;
    case OPT_DENY_PRINCIPAL:
        strv_add(&o->deny_princ, arg);
        return 0;
    case OPT_PRINCIPAL:
        strv_add(&o->princ, arg);
        return 0;
    case OPT_ALLOW_HOST:
        strv_add(&o->allow_hosts, arg);
        return 0;
    case OPT_DENY_HOST:
        strv_add(&o->deny_hosts, arg);
        return 0;
    case OPT_OPERATION:
        op = acl_operation_parse(arg);
        if (op <= ACL_OP_ANY && !o->bad_operation)
            o->bad_operation = arg;
        o->ops |= op > ACL_OP_ANY ? 1u << op : 0;
        return 0;
    case OPT_PRODUCER:
        o->producer = true;
        return 0;
    case OPT_CONSUMER:
        o->consumer = true;
        return 0;
    case OPT_IDEMPOTENT:
        o->idempotent = true;
        return 0;
    case OPT_FORCE:
        o->force = true;
        return 0;
    default:
        return -1;
    }
}

static int parse_args(struct cli_common *c, struct acl_opts *o, int argc, char **argv)
{
    int opt;
    cli_getopt_reset();
    opterr = 0; /* said below, in the command's own words */
    while ((opt = getopt_long(argc, argv, ":" CLI_COMMON_SHORTOPTS, acl_longopts, NULL)) != -1) {
        int h = cli_common_opt(c, opt, optarg);
        if (h < 0)
            return -1;
        if (h == 0 && parse_opt(o, opt, optarg) != 0) {
            cli_error(c, "%s: '%s'", opt == ':' ? "missing value" : "unknown option",
                      argv[optind - 1]);
            return -1;
        }
    }
    if (optind < argc) {
        cli_error(c,
                  "unexpected argument '%s' (name resources with --topic, --group, --cluster, "
                  "--transactional-id, --registry-subject or --registry-global)",
                  argv[optind]);
        return -1;
    }
    return 0;
}

/* The options a sub-command does not take. 0, or -1 said. */
static int check_applicable(const struct cli_common *c, const struct acl_opts *o)
{
    bool add = !strcmp(o->sub, "add"), list = !strcmp(o->sub, "list");
    if (list && (o->allow_princ.n || o->deny_princ.n || o->allow_hosts.n || o->deny_hosts.n ||
                 o->ops || o->bad_operation || o->producer || o->consumer || o->idempotent)) {
        cli_error(c, "list takes resources, --resource-pattern-type and --principal only");
        return -1;
    }
    if (add && o->princ.n) {
        cli_error(c, "--principal is for list and remove; add takes --allow-principal or "
                     "--deny-principal");
        return -1;
    }
    if (o->force && strcmp(o->sub, "remove") != 0) {
        cli_error(c, "--force is for remove only");
        return -1;
    }
    if (o->princ.n && (o->allow_princ.n || o->deny_princ.n)) {
        cli_error(c, "--principal does not go with --allow-principal or --deny-principal");
        return -1;
    }
    return 0;
}

/* kafka-acls' rules for --producer, --consumer and --idempotent. 0, or -1 said. */
static int check_roles(const struct cli_common *c, const struct acl_opts *o)
{
    bool has_topic = false, has_group = false, has_txn = false;
    for (size_t i = 0; i < o->res.n; i++) {
        has_topic |= o->res.v[i].type == ACL_RESOURCE_TOPIC;
        has_group |= o->res.v[i].type == ACL_RESOURCE_GROUP;
        has_txn |= o->res.v[i].type == ACL_RESOURCE_TRANSACTIONAL_ID;
    }
    const char *why = NULL;
    if (o->idempotent && !o->producer)
        why = "--idempotent goes with --producer";
    else if ((o->producer || o->consumer) &&
             (o->ops || o->bad_operation || o->deny_princ.n || o->deny_hosts.n))
        why = "--producer and --consumer take no --operation, --deny-principal or --deny-host";
    else if (o->producer && !has_topic)
        why = "--producer needs a --topic";
    else if (o->consumer && (!has_topic || !has_group))
        why = "--consumer needs a --topic and a --group";
    else if (o->consumer && !o->producer && (o->cluster || has_txn))
        why = "--consumer takes no --cluster or --transactional-id (unless with --producer)";
    if (why)
        cli_error(c, "%s", why);
    return why ? -1 : 0;
}

static int check_principals(const struct cli_common *c, const char *flag, const struct strv *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (!acl_principal_valid(s->v[i])) {
            cli_error(c, "%s: '%s' is not a principal (User:NAME, User:* for everyone)", flag,
                      s->v[i]);
            return -1;
        }
    }
    return 0;
}

static int check_hosts(const struct cli_common *c, const char *flag, const struct strv *hosts,
                       const char *principal_flag, size_t n_principals)
{
    if (hosts->n && !n_principals) {
        cli_error(c, "%s needs %s", flag, principal_flag);
        return -1;
    }
    for (size_t i = 0; i < hosts->n; i++) {
        if (!host_valid(hosts->v[i])) {
            cli_error(c, "%s: '%s' is not * or an IP address (ACL hosts are client addresses)",
                      flag, hosts->v[i]);
            return -1;
        }
    }
    return 0;
}

/* The pattern type: parsed, valid for the sub-command, set on every resource. The cluster is
 * LITERAL "kafka-cluster" (also when --idempotent brings it beside prefixed topics), or the
 * filter type any or match, which find that literal pattern. 0, or -1 said. */
static int check_pattern(const struct cli_common *c, struct acl_opts *o)
{
    bool add = !strcmp(o->sub, "add");
    enum acl_pattern_type p = ACL_PATTERN_LITERAL;
    if (o->pattern_arg) {
        p = acl_pattern_type_parse(o->pattern_arg);
        if (p == ACL_PATTERN_UNKNOWN) {
            cli_error(c, "--resource-pattern-type: '%s' is not literal, prefixed, any or match",
                      o->pattern_arg);
            return -1;
        }
        if (add && p != ACL_PATTERN_LITERAL && p != ACL_PATTERN_PREFIXED) {
            cli_error(c,
                      "--resource-pattern-type %s is not valid when adding ACLs (literal or "
                      "prefixed)",
                      o->pattern_arg);
            return -1;
        }
    }
    if ((o->cluster || o->registry_global) && p == ACL_PATTERN_PREFIXED) {
        cli_error(c, "%s: the %s resource has a literal pattern only",
                  o->cluster ? "--cluster" : "--registry-global",
                  o->cluster ? "cluster" : "registry");
        return -1;
    }
    if (o->cluster || o->idempotent)
        add_resource(o, ACL_RESOURCE_CLUSTER, ACL_CLUSTER_NAME);
    if (o->registry_global)
        add_resource(o, ACL_RESOURCE_REGISTRY, ACL_REGISTRY_NAME);
    for (size_t i = 0; i < o->res.n; i++) {
        struct acl *a = &o->res.v[i];
        bool filter_type = p == ACL_PATTERN_ANY || p == ACL_PATTERN_MATCH;
        bool single = a->type == ACL_RESOURCE_CLUSTER || a->type == ACL_RESOURCE_REGISTRY;
        a->pattern = single && !filter_type ? ACL_PATTERN_LITERAL : p;
    }
    return 0;
}

static int check_names(const struct cli_common *c, const struct acl_opts *o)
{
    for (size_t i = 0; i < o->res.n; i++) {
        const struct acl *a = &o->res.v[i];
        size_t len = strlen(a->name);
        if (len == 0 || len > ACL_NAME_MAX) {
            cli_error(c, "%s: a name of 1 to %d bytes, not '%s'", resource_flag(a->type),
                      ACL_NAME_MAX, a->name);
            return -1;
        }
    }
    return 0;
}

/* The operations for resource a: explicit, or the roles'. Each explicit one must be valid for
 * its type; a role must grant something on every resource named. 0 (*mask; 0: any, remove
 * only) or -1 said. */
static int resource_ops(const struct cli_common *c, const struct acl_opts *o, const struct acl *a,
                        uint32_t *mask)
{
    bool single = a->type == ACL_RESOURCE_CLUSTER || a->type == ACL_RESOURCE_REGISTRY;
    const char *name = single ? "" : a->name;
    const char *sep = single ? "" : " ";
    if (o->producer || o->consumer) {
        const char *roles = !o->consumer   ? "--producer grants"
                            : !o->producer ? "--consumer grants"
                                           : "--producer and --consumer grant";
        *mask = role_ops(o, a->type);
        if (*mask == 0)
            cli_error(c, "%s%s%s: %s nothing on %s%s", resource_flag(a->type), sep, name, roles,
                      resource_words(a->type),
                      a->type == ACL_RESOURCE_CLUSTER ? " (--idempotent: IdempotentWrite)" : "");
        return *mask ? 0 : -1;
    }
    *mask = o->ops;
    uint32_t bad = o->ops & ~valid_ops(a->type);
    if (bad) {
        struct strbuf b;
        strbuf_init(&b);
        ops_words(valid_ops(a->type), &b);
        cli_error(c, "--operation %s is not valid for %s%s%s (%s takes %s)",
                  acl_operation_name((enum acl_operation)__builtin_ctz(bad)),
                  resource_flag(a->type), sep, name, resource_words(a->type), strbuf_str(&b));
        strbuf_destroy(&b);
        return -1;
    }
    return 0;
}

/* One group of entries: principals (NULL: any) x hosts (NULL: any) with a permission. */
struct entries {
    enum acl_permission perm;
    const char *const *principals;
    size_t n_principals;
    const char *const *hosts;
    size_t n_hosts;
};

static const char *const any_one[] = {NULL};
static const char *const wildcard_one[] = {ACL_WILDCARD};

/* The entry groups of the command line: add's bindings (default host "*") or remove's filters
 * (unset fields any). Returns how many groups were set in g[0..3). */
static size_t entry_groups(const struct acl_opts *o, bool add, struct entries g[3])
{
    const char *const *dflt_host = add ? wildcard_one : any_one;
    size_t n = 0;
    if (o->allow_princ.n)
        g[n++] = (struct entries){ACL_PERM_ALLOW, o->allow_princ.v, o->allow_princ.n,
                                  o->allow_hosts.n ? o->allow_hosts.v : dflt_host,
                                  o->allow_hosts.n ? o->allow_hosts.n : 1};
    if (o->deny_princ.n)
        g[n++] = (struct entries){ACL_PERM_DENY, o->deny_princ.v, o->deny_princ.n,
                                  o->deny_hosts.n ? o->deny_hosts.v : dflt_host,
                                  o->deny_hosts.n ? o->deny_hosts.n : 1};
    if (!add && n == 0)
        g[n++] = (struct entries){ACL_PERM_ANY, o->princ.n ? o->princ.v : any_one,
                                  o->princ.n ? o->princ.n : 1, any_one, 1};
    return n;
}

/* Appends resource a x entries e x the operations of mask (0: ANY) to out. */
static void add_product(const struct acl *a, const struct entries *e, uint32_t mask,
                        struct acl_list *out)
{
    for (size_t p = 0; p < e->n_principals; p++)
        for (size_t h = 0; h < e->n_hosts; h++)
            for (int op = ACL_OP_ANY; op <= ACL_OP_DESCRIBE_TOKENS; op++) {
                if (mask ? !(mask & (1u << op)) : op != ACL_OP_ANY)
                    continue;
                struct acl x = *a;
                x.principal = e->principals[p];
                x.host = e->hosts[h];
                x.op = (enum acl_operation)op;
                x.perm = e->perm;
                acl_list_add(out, &x);
            }
}

/* add's bindings or remove's filters, into out. 0, or -1 said. */
static int build_items(const struct cli_common *c, const struct acl_opts *o, struct acl_list *out)
{
    bool add = !strcmp(o->sub, "add");
    struct entries g[3];
    size_t ng = entry_groups(o, add, g), per_op = 0, total = 0;
    uint32_t *masks = mem_calloc(o->res.n, sizeof(*masks));
    int rc = 0;
    for (size_t i = 0; i < ng; i++)
        per_op += g[i].n_principals * g[i].n_hosts;
    for (size_t i = 0; i < o->res.n && rc == 0; i++) {
        rc = resource_ops(c, o, &o->res.v[i], &masks[i]);
        total += per_op * (size_t)(masks[i] ? popcount32(masks[i]) : 1);
    }
    if (rc == 0 && total > ACL_ITEMS_MAX) {
        cli_error(c, "that makes %zu %s, more than %d at once", total, add ? "bindings" : "filters",
                  ACL_ITEMS_MAX);
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < o->res.n; i++)
        for (size_t k = 0; k < ng; k++)
            add_product(&o->res.v[i], &g[k], masks[i], out);
    mem_free(masks);
    acl_list_sort_unique(out);
    return rc;
}

/* list's filters: one per resource, or one for every binding. */
static void build_list_filters(const struct acl_opts *o, struct acl_list *out)
{
    struct acl any = {.type = ACL_RESOURCE_ANY, .op = ACL_OP_ANY, .perm = ACL_PERM_ANY};
    any.pattern = o->pattern_arg ? acl_pattern_type_parse(o->pattern_arg) : ACL_PATTERN_ANY;
    if (o->res.n == 0)
        acl_list_add(out, &any);
    for (size_t i = 0; i < o->res.n; i++) {
        struct acl f = o->res.v[i];
        f.op = ACL_OP_ANY;
        f.perm = ACL_PERM_ANY;
        acl_list_add(out, &f);
    }
}

/* Everything about the command line, then the items to send (bindings for add, filters for
 * list and remove). 0, or -1 said. */
static int check_args(struct cli_common *c, struct acl_opts *o, struct acl_list *items)
{
    bool add = !strcmp(o->sub, "add"), list = !strcmp(o->sub, "list");
    if (check_applicable(c, o) || check_roles(c, o) || check_pattern(c, o) || check_names(c, o))
        return -1;
    if (o->bad_operation) {
        struct strbuf b;
        strbuf_init(&b);
        ops_words(valid_ops(ACL_RESOURCE_TOPIC) | valid_ops(ACL_RESOURCE_CLUSTER), &b);
        cli_error(c, "--operation: '%s' is not one of %s", o->bad_operation, strbuf_str(&b));
        strbuf_destroy(&b);
        return -1;
    }
    if (check_principals(c, "--allow-principal", &o->allow_princ) ||
        check_principals(c, "--deny-principal", &o->deny_princ) ||
        check_principals(c, "--principal", &o->princ) ||
        check_hosts(c, "--allow-host", &o->allow_hosts, "--allow-principal", o->allow_princ.n) ||
        check_hosts(c, "--deny-host", &o->deny_hosts, "--deny-principal", o->deny_princ.n))
        return -1;
    if (list) {
        build_list_filters(o, items);
        return 0;
    }
    const char *why = NULL;
    if (o->res.n == 0)
        why = "name a resource: --topic, --group, --cluster, --transactional-id, "
              "--registry-subject or --registry-global";
    else if (add && !o->allow_princ.n && !o->deny_princ.n)
        why = "give --allow-principal or --deny-principal";
    else if (add && !o->ops && !o->producer && !o->consumer)
        why = "give --operation, --producer or --consumer";
    if (why) {
        cli_error(c, "%s", why);
        return -1;
    }
    return build_items(c, o, items);
}

static void opts_free(struct acl_opts *o)
{
    acl_list_free(&o->res);
    mem_free(o->allow_princ.v);
    mem_free(o->deny_princ.v);
    mem_free(o->princ.v);
    mem_free(o->allow_hosts.v);
    mem_free(o->deny_hosts.v);
}

/* The first item librdkafka 2.0.2 cannot carry (a type it does not know), or NULL. */
static const struct acl *rdk_unsupported(const struct acl_list *items)
{
    for (size_t i = 0; i < items->n; i++) {
        enum acl_resource_type t = items->v[i].type;
        if (t == ACL_RESOURCE_TRANSACTIONAL_ID || t == ACL_RESOURCE_SUBJECT ||
            t == ACL_RESOURCE_REGISTRY)
            return &items->v[i];
    }
    return NULL;
}

static int run_sub(struct cli_common *c, struct acl_opts *o, struct acl_list *items)
{
    const struct acl *unsupported = plaintext(c) ? NULL : rdk_unsupported(items);
    if (unsupported) {
        cli_error(c, "%s: librdkafka 2.0.2 has no %s resource type; use a PLAINTEXT listener",
                  resource_flag(unsupported->type), acl_resource_type_name(unsupported->type));
        return CLI_EXIT_USAGE;
    }
    if (!strcmp(o->sub, "remove") && !o->force) {
        if (!isatty(STDIN_FILENO)) {
            cli_error(c, "standard input is not a terminal: pass --force to remove without "
                         "confirmation");
            return CLI_EXIT_USAGE;
        }
        int rc = confirm_remove(c, items);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    struct run r = {0};
    int rc = CLI_EXIT_FAIL;
    if (run_open(&r, c) == 0) {
        if (!strcmp(o->sub, "add"))
            rc = acl_add(&r, items);
        else if (!strcmp(o->sub, "list"))
            rc = acl_list(&r, items, &o->princ);
        else
            rc = acl_remove(&r, items);
    }
    run_close(&r);
    return rc == CLI_EXIT_FAIL && cli_interrupted ? CLI_EXIT_INTERRUPTED : rc;
}

int cli_acl(int argc, char **argv)
{
    static const char *const subs[] = {"add", "list", "remove"};
    struct cli_common c;
    cli_common_init(&c, "acl");
    struct acl_opts o = {0};
    struct acl_list items = {0};
    int rc = CLI_EXIT_USAGE;
    char cmd[32];
    o.sub = cli_sub_command(&c, acl_help, subs, ARRAY_LEN(subs), argc, argv, cmd, sizeof(cmd), &rc);
    if (!o.sub)
        goto out;
    if (parse_args(&c, &o, argc - 1, argv + 1) != 0 ||
        (!c.help && check_args(&c, &o, &items) != 0)) {
        fprintf(stderr, "Run 'streampulse acl --help' for usage.\n");
        goto out;
    }
    if (c.help) {
        fputs(acl_help, stdout);
        rc = CLI_EXIT_OK;
        goto out;
    }
    rc = run_sub(&c, &o, &items);
out:
    acl_list_free(&items);
    opts_free(&o);
    cli_common_free(&c);
    return rc;
}
