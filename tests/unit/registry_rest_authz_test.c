/* The registry's authorization (registry/rest_authz.h): the route -> (resource, operation) table,
 * and its enforcement by reg_rest_handle (403 40301, listings filtered, Confluent's SCHEMA_READ
 * rule for ids), with a fake decision that allows what a small rule list names. */
#include <stdio.h>

#include "registry/rest.h"
#include "registry/rest_authz.h"
#include "registry/store.h"
#include "test.h"

/* --- the table ------------------------------------------------------------------------------ */

static struct reg_need need_of(const char *method, const char *path)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    struct reg_rest_req q = {.method = method};
    for (char *seg = strtok(buf, "/"); seg; seg = strtok(NULL, "/"))
        q.segs[q.n_segs++] = seg;
    struct reg_need nd;
    reg_authz_need(&q, &nd);
    return nd;
}

struct row {
    const char *method, *path;
    enum reg_need_kind kind;
    enum reg_resource resource;
    const char *name;
    enum reg_op op;
};

TEST(registry_authz_route_table_names_resource_and_operation)
{
    const enum reg_resource SUB = REG_RESOURCE_SUBJECT, REG = REG_RESOURCE_REGISTRY;
    const struct row rows[] = {
        {"GET", "/", REG_NEED_OPEN, 0, NULL, 0},
        {"GET", "/schemas/types", REG_NEED_OPEN, 0, NULL, 0},
        {"GET", "/schemas/ids/7", REG_NEED_SCHEMA_ID, 0, "7", REG_OP_READ},
        {"GET", "/schemas/ids/7/schema", REG_NEED_SCHEMA_ID, 0, "7", REG_OP_READ},
        {"GET", "/schemas/ids/7/subjects", REG_NEED_SCHEMA_ID, 0, "7", REG_OP_READ},
        {"GET", "/schemas/ids/7/versions", REG_NEED_SCHEMA_ID, 0, "7", REG_OP_READ},
        {"HEAD", "/schemas/ids/7", REG_NEED_SCHEMA_ID, 0, "7", REG_OP_READ},
        {"GET", "/subjects", REG_NEED_LIST, 0, NULL, 0},
        {"POST", "/subjects/s", REG_NEED_RESOURCE, SUB, "s", REG_OP_READ},
        {"DELETE", "/subjects/s", REG_NEED_RESOURCE, SUB, "s", REG_OP_DELETE},
        {"GET", "/subjects/s/versions", REG_NEED_RESOURCE, SUB, "s", REG_OP_DESCRIBE},
        {"POST", "/subjects/s/versions", REG_NEED_RESOURCE, SUB, "s", REG_OP_WRITE},
        {"GET", "/subjects/s/versions/1", REG_NEED_RESOURCE, SUB, "s", REG_OP_READ},
        {"GET", "/subjects/s/versions/latest/schema", REG_NEED_RESOURCE, SUB, "s", REG_OP_READ},
        {"GET", "/subjects/s/versions/1/referencedby", REG_NEED_RESOURCE, REG, NULL,
         REG_OP_DESCRIBE},
        {"DELETE", "/subjects/s/versions/1", REG_NEED_RESOURCE, SUB, "s", REG_OP_DELETE},
        {"GET", "/config", REG_NEED_RESOURCE, REG, NULL, REG_OP_DESCRIBE_CONFIGS},
        {"PUT", "/config", REG_NEED_RESOURCE, REG, NULL, REG_OP_ALTER_CONFIGS},
        {"DELETE", "/config", REG_NEED_RESOURCE, REG, NULL, REG_OP_ALTER_CONFIGS},
        {"GET", "/mode", REG_NEED_RESOURCE, REG, NULL, REG_OP_DESCRIBE_CONFIGS},
        {"PUT", "/mode", REG_NEED_RESOURCE, REG, NULL, REG_OP_ALTER_CONFIGS},
        {"GET", "/config/s", REG_NEED_RESOURCE, SUB, "s", REG_OP_DESCRIBE_CONFIGS},
        {"PUT", "/config/s", REG_NEED_RESOURCE, SUB, "s", REG_OP_ALTER_CONFIGS},
        {"DELETE", "/mode/s", REG_NEED_RESOURCE, SUB, "s", REG_OP_ALTER_CONFIGS},
        {"GET", "/mode/s", REG_NEED_RESOURCE, SUB, "s", REG_OP_DESCRIBE_CONFIGS},
        {"POST", "/compatibility/subjects/s/versions", REG_NEED_RESOURCE, SUB, "s", REG_OP_READ},
        {"POST", "/compatibility/subjects/s/versions/latest", REG_NEED_RESOURCE, SUB, "s",
         REG_OP_READ},
        /* what the router answers 404 or 405 needs nothing */
        {"PUT", "/subjects", REG_NEED_OPEN, 0, NULL, 0},
        {"GET", "/subjects/s/nope", REG_NEED_OPEN, 0, NULL, 0},
        {"PATCH", "/subjects/s/versions", REG_NEED_OPEN, 0, NULL, 0},
        {"POST", "/schemas/ids/7", REG_NEED_OPEN, 0, NULL, 0},
        {"GET", "/config/a/b", REG_NEED_OPEN, 0, NULL, 0},
        {"GET", "/compatibility/subjects/s/versions", REG_NEED_OPEN, 0, NULL, 0},
        {"GET", "/nosuch", REG_NEED_OPEN, 0, NULL, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct row *r = &rows[i];
        struct reg_need nd = need_of(r->method, r->path);
        if (nd.kind != r->kind)
            test_fail(__FILE__, __LINE__, "%s %s: kind %d, want %d", r->method, r->path,
                      (int)nd.kind, (int)r->kind);
        if (r->kind == REG_NEED_OPEN || r->kind == REG_NEED_LIST)
            continue;
        if (r->kind == REG_NEED_RESOURCE)
            ASSERT_EQ(nd.resource, r->resource);
        ASSERT_EQ(nd.op, r->op);
        if (r->name)
            ASSERT_STREQ(nd.name, r->name);
        else
            ASSERT(nd.name == NULL);
    }
    ASSERT_STREQ(reg_op_name(REG_OP_DESCRIBE_CONFIGS), "DescribeConfigs");
    ASSERT_STREQ(reg_op_name(REG_OP_WRITE), "Write");
    ASSERT_STREQ(reg_resource_name(REG_RESOURCE_SUBJECT), "Subject");
    ASSERT_STREQ(reg_resource_name(REG_RESOURCE_REGISTRY), "Registry");
}

/* --- enforcement ---------------------------------------------------------------------------- */

/* The fake decision: allowed when a rule names the resource, a prefix of the name (the registry:
 * any name) and the operation exactly. Counts the audited and the quiet checks. */
struct rule {
    enum reg_resource resource;
    const char *prefix;
    enum reg_op op;
};

struct fake {
    const struct rule *rules;
    size_t n;
    int audited, quiet;
};

static bool fake_allows(void *data, enum reg_resource r, const char *name, enum reg_op op,
                        bool audit)
{
    struct fake *f = data;
    audit ? f->audited++ : f->quiet++;
    ASSERT(r == REG_RESOURCE_REGISTRY ? name == NULL : name != NULL);
    for (size_t i = 0; i < f->n; i++)
        if (f->rules[i].resource == r && f->rules[i].op == op &&
            (r == REG_RESOURCE_REGISTRY ||
             !strncmp(name, f->rules[i].prefix, strlen(f->rules[i].prefix))))
            return true;
    return false;
}

struct answer {
    int status;
    char body[2048];
};

/* "METHOD /a/b" with body, evaluated as the authorizer z (NULL: none); writes applied. */
static struct answer run(struct reg_store *st, const struct reg_authz *z, const char *line,
                         const char *body)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", line);
    char *sp = strchr(buf, ' ');
    *sp = '\0';
    struct reg_rest_req q = {
        .method = buf, .body = body ? body : "", .body_len = body ? strlen(body) : 0, .authz = z};
    for (char *seg = strtok(sp + 1, "/"); seg; seg = strtok(NULL, "/"))
        q.segs[q.n_segs++] = seg;
    struct reg_result res;
    reg_result_init(&res);
    reg_rest_handle(st, &q, &res);
    struct answer a = {.status = res.status};
    snprintf(a.body, sizeof a.body, "%s", strbuf_str(&res.body));
    for (size_t i = 0; i < res.n_writes; i++) {
        const struct reg_write *w = &res.writes[i];
        ASSERT_EQ(reg_store_apply(st, w->key.p, w->key.len, w->tombstone ? NULL : w->value.p,
                                  w->value.len),
                  0);
    }
    reg_result_free(&res);
    return a;
}

#define EXPECT(st_, z_, line_, body_, want_status_, want_text_)                                    \
    do {                                                                                           \
        struct answer a_ = run((st_), (z_), (line_), (body_));                                     \
        if (a_.status != (want_status_) || !strstr(a_.body, (want_text_)))                         \
            test_fail(__FILE__, __LINE__, "%s\n    got %d %s\n    want %d ...%s...", (line_),      \
                      a_.status, a_.body, (want_status_), (want_text_));                           \
    } while (0)

#define SCHEMA_INT "{\"schema\":\"\\\"int\\\"\"}"
#define SCHEMA_STR "{\"schema\":\"\\\"string\\\"\"}"

TEST(registry_authz_denies_with_40301_filters_lists_and_reads_ids_by_subject)
{
    struct reg_store st;
    reg_store_init(&st);
    /* as the registry's admin: orders-value and pay-value share id 1; id 2 is pay-value's only */
    EXPECT(&st, NULL, "POST /subjects/orders-value/versions", SCHEMA_INT, 200, "{\"id\":1}");
    EXPECT(&st, NULL, "POST /subjects/pay-value/versions", SCHEMA_INT, 200, "{\"id\":1}");
    EXPECT(&st, NULL, "PUT /config/pay-value", "{\"compatibility\":\"NONE\"}", 200, "NONE");
    EXPECT(&st, NULL, "POST /subjects/pay-value/versions", SCHEMA_STR, 200, "{\"id\":2}");

    /* alice: READ, WRITE and DESCRIBE on subjects prefixed orders- */
    const struct rule alice[] = {{REG_RESOURCE_SUBJECT, "orders-", REG_OP_READ},
                                 {REG_RESOURCE_SUBJECT, "orders-", REG_OP_WRITE},
                                 {REG_RESOURCE_SUBJECT, "orders-", REG_OP_DESCRIBE}};
    struct fake f = {alice, 3, 0, 0};
    struct reg_authz z = {fake_allows, &f};
    EXPECT(&st, &z, "POST /subjects/orders-key/versions", SCHEMA_STR, 200, "{\"id\":2}");
    EXPECT(&st, &z, "POST /subjects/pay-value/versions", SCHEMA_STR, 403,
           "{\"error_code\":40301,\"message\":\"User is denied operation Write on Subject: "
           "pay-value\"}");
    ASSERT_EQ(f.audited, 2);
    /* a listing names only what it may describe, and such checks are not audited */
    EXPECT(&st, &z, "GET /subjects", NULL, 200, "[\"orders-key\",\"orders-value\"]");
    EXPECT(&st, NULL, "GET /subjects", NULL, 200,
           "[\"orders-key\",\"orders-value\",\"pay-value\"]");
    ASSERT_EQ(f.audited, 2);
    ASSERT_CMP(f.quiet, >=, 3);
    /* ids: READ on some subject using it */
    EXPECT(&st, &z, "GET /schemas/ids/1", NULL, 200, "\"schema\":\"\\\"int\\\"\"");
    EXPECT(&st, &z, "GET /schemas/ids/2/schema", NULL, 200, "\"string\"");
    EXPECT(&st, &z, "GET /schemas/ids/1/subjects", NULL, 200, "[\"orders-value\"]");
    EXPECT(&st, &z, "GET /schemas/ids/1/versions", NULL, 200,
           "[{\"subject\":\"orders-value\",\"version\":1}]");
    EXPECT(&st, &z, "GET /schemas/ids/99", NULL, 404, "\"error_code\":40403");
    /* the registry as a whole and other subjects' settings: refused */
    EXPECT(&st, &z, "GET /config", NULL, 403,
           "User is denied operation DescribeConfigs on Registry");
    EXPECT(&st, &z, "PUT /config", "{\"compatibility\":\"NONE\"}", 403,
           "User is denied operation AlterConfigs on Registry\"");
    EXPECT(&st, &z, "GET /config/pay-value", NULL, 403,
           "denied operation DescribeConfigs on Subject: pay-value");
    EXPECT(&st, &z, "DELETE /subjects/orders-key", NULL, 403, "denied operation Delete on Subject");
    EXPECT(&st, &z, "POST /compatibility/subjects/orders-value/versions/latest", SCHEMA_INT, 200,
           "\"is_compatible\":true");
    EXPECT(&st, &z, "GET /schemas/types", NULL, 200, "AVRO");
    EXPECT(&st, &z, "GET /", NULL, 200, "{}");

    /* bob: READ on orders-value only: no id 2 (only pay-value and orders-key use it) */
    const struct rule bob[] = {{REG_RESOURCE_SUBJECT, "orders-value", REG_OP_READ}};
    struct fake fb = {bob, 1, 0, 0};
    struct reg_authz zb = {fake_allows, &fb};
    EXPECT(&st, &zb, "GET /subjects/orders-value/versions/1", NULL, 200, "\"id\":1");
    EXPECT(&st, &zb, "GET /schemas/ids/2", NULL, 403,
           "{\"error_code\":40301,\"message\":\"User is denied operation Read on Schema: 2\"}");
    EXPECT(&st, &zb, "GET /subjects", NULL, 200, "[]"); /* no DESCRIBE: our fake implies none */
    EXPECT(&st, &zb, "POST /subjects/orders-value/versions", SCHEMA_STR, 403, "Write on Subject");
    /* an admin with the registry's configs */
    const struct rule ops[] = {{REG_RESOURCE_REGISTRY, NULL, REG_OP_ALTER_CONFIGS}};
    struct fake fo = {ops, 1, 0, 0};
    struct reg_authz zo = {fake_allows, &fo};
    EXPECT(&st, &zo, "PUT /config", "{\"compatibility\":\"FULL\"}", 200, "FULL");
    EXPECT(&st, NULL, "GET /config", NULL, 200, "\"compatibilityLevel\":\"FULL\"");
    reg_store_destroy(&st);
}
