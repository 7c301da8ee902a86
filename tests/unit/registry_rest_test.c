/* The registry's REST semantics (registry/rest.h) over its store (registry/store.h), and the
 * forwarded-request codec (broker/schemas_rpc.h).
 *
 * Each request runs the way the broker runs it: evaluated against the store, and its writes
 * applied to the store (as their commit would) before the next request, so every test sees the
 * registry's state move exactly as the records it writes say. */
#include <stdarg.h>
#include <stdio.h>

#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "broker/schemas_rpc.h"
#include "registry/rest.h"
#include "registry/store.h"
#include "test.h"

struct answer {
    int status;
    char body[4096];
    size_t writes;
};

/* "METHOD /a/b?k=v&k2=v2" with body; segments and parameters split here (already decoded). */
static struct answer run(struct reg_store *st, const char *line, const char *body)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", line);
    struct reg_rest_req q = {.body = body ? body : "", .body_len = body ? strlen(body) : 0};
    char *sp = strchr(buf, ' ');
    *sp = '\0';
    q.method = buf;
    char *path = sp + 1, *query = strchr(path, '?');
    if (query)
        *query++ = '\0';
    for (char *seg = strtok(path, "/"); seg; seg = strtok(NULL, "/"))
        q.segs[q.n_segs++] = seg;
    for (char *kv = query ? strtok(query, "&") : NULL; kv; kv = strtok(NULL, "&")) {
        char *eq = strchr(kv, '=');
        *eq = '\0';
        q.params[q.n_params++] = (struct reg_param){kv, eq + 1};
    }
    struct reg_result res;
    reg_result_init(&res);
    reg_rest_handle(st, &q, &res);
    struct answer a = {.status = res.status, .writes = res.n_writes};
    snprintf(a.body, sizeof a.body, "%s", strbuf_str(&res.body));
    for (size_t i = 0; i < res.n_writes; i++) {
        const struct reg_write *w = &res.writes[i];
        ASSERT_EQ(reg_store_apply(st, w->key.p, w->key.len, w->tombstone ? NULL : w->value.p,
                                  w->value.len),
                  0);
    }
    if (res.n_writes > 0) /* what writes must be known as a write before it runs */
        ASSERT(reg_rest_is_write(&q));
    reg_result_free(&res);
    return a;
}

#define EXPECT(st_, line_, body_, want_status_, want_text_)                                         \
    do {                                                                                           \
        struct answer a_ = run((st_), (line_), (body_));                                           \
        if (a_.status != (want_status_) || !strstr(a_.body, (want_text_)))                         \
            test_fail(__FILE__, __LINE__, "%s\n    got %d %s\n    want %d ...%s...", (line_),     \
                      a_.status, a_.body, (want_status_), (want_text_));                           \
    } while (0)

static const char *schema_body(const char *schema_json_escaped)
{
    static char b[2048];
    snprintf(b, sizeof b, "{\"schema\":\"%s\"}", schema_json_escaped);
    return b;
}

#define REC_A "{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"A\\\",\\\"fields\\\":[{\\\"name\\\":\\\"x\\\",\\\"type\\\":\\\"int\\\"}]}"
#define REC_A2                                                                                     \
    "{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"A\\\",\\\"fields\\\":[{\\\"name\\\":\\\"x\\\",\\\"type\\\":\\\"int\\\"},{\\\"name\\\":\\\"y\\\",\\\"type\\\":\\\"int\\\",\\\"default\\\":0}]}"
#define REC_A_BAD "{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"A\\\",\\\"fields\\\":[{\\\"name\\\":\\\"x\\\",\\\"type\\\":\\\"string\\\"}]}"

TEST(registry_register_gives_ids_once_and_versions_in_order)
{
    struct reg_store st;
    reg_store_init(&st);
    struct answer a = run(&st, "POST /subjects/s-value/versions", schema_body(REC_A));
    ASSERT_EQ(a.status, 200);
    ASSERT_STREQ(a.body, "{\"id\":1}");
    ASSERT_EQ(a.writes, 1);
    /* the same schema again: its id, nothing written */
    a = run(&st, "POST /subjects/s-value/versions", schema_body(REC_A));
    ASSERT_STREQ(a.body, "{\"id\":1}");
    ASSERT_EQ(a.writes, 0);
    /* the same text spelled differently has one canonical form */
    a = run(&st, "POST /subjects/s-value/versions",
            "{\"schema\":\"{ \\\"name\\\": \\\"A\\\", \\\"type\\\": \\\"record\\\", "
            "\\\"fields\\\": [ {\\\"type\\\": \\\"int\\\", \\\"name\\\": \\\"x\\\"} ] }\"}");
    ASSERT_STREQ(a.body, "{\"id\":1}");
    ASSERT_EQ(a.writes, 0);
    /* under another subject: the same id, version 1 there */
    a = run(&st, "POST /subjects/t-value/versions", schema_body(REC_A));
    ASSERT_STREQ(a.body, "{\"id\":1}");
    ASSERT_EQ(a.writes, 1);
    EXPECT(&st, "POST /subjects/s-value/versions", schema_body(REC_A2), 200, "{\"id\":2}");
    EXPECT(&st, "GET /subjects/s-value/versions", NULL, 200, "[1,2]");
    EXPECT(&st, "GET /subjects", NULL, 200, "[\"s-value\",\"t-value\"]");
    EXPECT(&st, "GET /subjects/s-value/versions/latest", NULL, 200,
           "{\"subject\":\"s-value\",\"version\":2,\"id\":2,\"schema\":");
    EXPECT(&st, "GET /schemas/ids/2/versions", NULL, 200, "[{\"subject\":\"s-value\",\"version\":2}]");
    EXPECT(&st, "GET /schemas/ids/1/subjects", NULL, 200, "[\"s-value\",\"t-value\"]");
    EXPECT(&st, "GET /subjects/s-value/versions/1/schema", NULL, 200, "{\"type\":\"record\"");
    /* lookup */
    EXPECT(&st, "POST /subjects/s-value", schema_body(REC_A), 200, "\"version\":1,\"id\":1");
    EXPECT(&st, "POST /subjects/s-value", schema_body(REC_A_BAD), 404, "\"error_code\":40403");
    EXPECT(&st, "POST /subjects/nobody", schema_body(REC_A), 404, "\"error_code\":40401");
    ASSERT_EQ(st.max_id, 2);
    reg_store_destroy(&st);
}

TEST(registry_incompatible_schemas_are_refused_by_level)
{
    struct reg_store st;
    reg_store_init(&st);
    run(&st, "POST /subjects/s/versions", schema_body(REC_A));
    EXPECT(&st, "POST /subjects/s/versions", schema_body(REC_A_BAD), 409,
           "incompatible with an earlier schema for subject \\\"s\\\", details: [{errorType:'TYPE_MISMATCH'");
    EXPECT(&st, "POST /subjects/s/versions", schema_body(REC_A_BAD), 409,
           "{oldSchemaVersion: 1}, {oldSchema: '");
    EXPECT(&st, "POST /compatibility/subjects/s/versions/latest", schema_body(REC_A_BAD), 200,
           "{\"is_compatible\":false}");
    EXPECT(&st, "POST /compatibility/subjects/s/versions/latest?verbose=true",
           schema_body(REC_A_BAD), 200, "\"is_compatible\":false,\"messages\":[\"{errorType:");
    EXPECT(&st, "POST /compatibility/subjects/s/versions/1", schema_body(REC_A2), 200,
           "{\"is_compatible\":true}");
    EXPECT(&st, "POST /compatibility/subjects/new/versions/latest", schema_body(REC_A_BAD), 200,
           "{\"is_compatible\":true}");
    EXPECT(&st, "POST /compatibility/subjects/new/versions/3", schema_body(REC_A_BAD), 404,
           "40401");
    /* the subject's own level wins over the global one */
    EXPECT(&st, "GET /config/s", NULL, 404, "40408");
    EXPECT(&st, "GET /config/s?defaultToGlobal=true", NULL, 200, "{\"compatibilityLevel\":\"BACKWARD\"}");
    EXPECT(&st, "PUT /config/s", "{\"compatibility\":\"none\"}", 200, "{\"compatibility\":\"NONE\"}");
    EXPECT(&st, "GET /config/s", NULL, 200, "{\"compatibilityLevel\":\"NONE\"}");
    EXPECT(&st, "POST /subjects/s/versions", schema_body(REC_A_BAD), 200, "{\"id\":2}");
    EXPECT(&st, "DELETE /config/s", NULL, 200, "{\"compatibilityLevel\":\"NONE\"}");
    EXPECT(&st, "GET /config/s", NULL, 404, "40408");
    EXPECT(&st, "PUT /config", "{\"compatibility\":\"FULL_TRANSITIVE\"}", 200, "FULL_TRANSITIVE");
    EXPECT(&st, "GET /config", NULL, 200, "{\"compatibilityLevel\":\"FULL_TRANSITIVE\"}");
    EXPECT(&st, "PUT /config", "{\"compatibility\":\"SIDEWAYS\"}", 422, "42203");
    EXPECT(&st, "PUT /config", "{\"other\":1}", 422, "42203");
    reg_store_destroy(&st);
}

TEST(registry_deletes_soft_then_permanent)
{
    struct reg_store st;
    reg_store_init(&st);
    run(&st, "POST /subjects/s/versions", schema_body(REC_A));
    run(&st, "POST /subjects/s/versions", schema_body(REC_A2));
    EXPECT(&st, "DELETE /subjects/s/versions/1?permanent=true", NULL, 404, "40407");
    EXPECT(&st, "DELETE /subjects/s/versions/1", NULL, 200, "1");
    EXPECT(&st, "DELETE /subjects/s/versions/1", NULL, 404, "40406");
    EXPECT(&st, "GET /subjects/s/versions", NULL, 200, "[2]");
    EXPECT(&st, "GET /subjects/s/versions?deleted=true", NULL, 200, "[1,2]");
    EXPECT(&st, "GET /subjects/s/versions/1", NULL, 404, "40402");
    EXPECT(&st, "GET /subjects/s/versions/1?deleted=true", NULL, 200, "\"version\":1");
    EXPECT(&st, "DELETE /subjects/s/versions/1?permanent=true", NULL, 200, "1");
    EXPECT(&st, "GET /subjects/s/versions?deleted=true", NULL, 200, "[2]");
    /* the subject */
    EXPECT(&st, "DELETE /subjects/s?permanent=true", NULL, 404, "40405");
    EXPECT(&st, "DELETE /subjects/s", NULL, 200, "[2]");
    EXPECT(&st, "DELETE /subjects/s", NULL, 404, "40404");
    EXPECT(&st, "GET /subjects", NULL, 200, "[]");
    EXPECT(&st, "GET /subjects?deleted=true", NULL, 200, "[\"s\"]");
    /* a version after soft deletes continues the numbering; the id of the same schema stays */
    EXPECT(&st, "POST /subjects/s/versions", schema_body(REC_A), 200, "{\"id\":1}");
    EXPECT(&st, "GET /subjects/s/versions", NULL, 200, "[3]");
    EXPECT(&st, "DELETE /subjects/s", NULL, 200, "[3]");
    EXPECT(&st, "DELETE /subjects/s?permanent=true", NULL, 200, "[2,3]");
    EXPECT(&st, "GET /subjects?deleted=true", NULL, 200, "[]");
    EXPECT(&st, "GET /subjects/s/versions?deleted=true", NULL, 404, "40401");
    /* ids are never given again */
    EXPECT(&st, "POST /subjects/s/versions", "{\"schema\":\"\\\"string\\\"\"}", 200, "{\"id\":3}");
    reg_store_destroy(&st);
}

TEST(registry_references_resolve_and_protect_what_they_name)
{
    struct reg_store st;
    reg_store_init(&st);
    EXPECT(&st, "POST /subjects/common/versions",
           "{\"schema\":\"{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"Money\\\",\\\"namespace\\\":"
           "\\\"shop\\\",\\\"fields\\\":[{\\\"name\\\":\\\"cents\\\",\\\"type\\\":\\\"long\\\"}]}\"}",
           200, "{\"id\":1}");
    const char *order = "{\"schema\":\"{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"Order\\\","
                        "\\\"fields\\\":[{\\\"name\\\":\\\"total\\\",\\\"type\\\":\\\"shop.Money\\\"}]}\","
                        "\"references\":[{\"name\":\"shop.Money\",\"subject\":\"common\",\"version\":1}]}";
    EXPECT(&st, "POST /subjects/order/versions", order, 200, "{\"id\":2}");
    EXPECT(&st, "GET /subjects/order/versions/1", NULL, 200,
           "\"references\":[{\"name\":\"shop.Money\",\"subject\":\"common\",\"version\":1}]");
    EXPECT(&st, "GET /subjects/common/versions/1/referencedby", NULL, 200, "[2]");
    EXPECT(&st, "DELETE /subjects/common/versions/1", NULL, 422, "42206");
    EXPECT(&st, "DELETE /subjects/common", NULL, 422, "42206");
    /* without the reference the type is unknown; a reference to nothing is refused */
    EXPECT(&st, "POST /subjects/order2/versions",
           "{\"schema\":\"{\\\"type\\\":\\\"record\\\",\\\"name\\\":\\\"O\\\",\\\"fields\\\":"
           "[{\\\"name\\\":\\\"t\\\",\\\"type\\\":\\\"shop.Money\\\"}]}\"}",
           422, "42201");
    EXPECT(&st, "POST /subjects/order2/versions",
           "{\"schema\":\"\\\"int\\\"\",\"references\":[{\"name\":\"x\",\"subject\":\"nope\","
           "\"version\":1}]}",
           422, "is not registered");
    /* once the referring version is gone, the referenced one may go */
    EXPECT(&st, "DELETE /subjects/order/versions/1", NULL, 200, "1");
    EXPECT(&st, "DELETE /subjects/common/versions/1", NULL, 200, "1");
    reg_store_destroy(&st);
}

TEST(registry_protobuf_schemas_register_with_imports)
{
    struct reg_store st;
    reg_store_init(&st);
    EXPECT(&st, "POST /subjects/money.proto/versions",
           "{\"schemaType\":\"PROTOBUF\",\"schema\":\"syntax = \\\"proto3\\\"; package shop; "
           "message Money { int64 cents = 1; }\"}",
           200, "{\"id\":1}");
    EXPECT(&st, "POST /subjects/order-value/versions",
           "{\"schemaType\":\"PROTOBUF\",\"schema\":\"syntax = \\\"proto3\\\"; package shop; "
           "import \\\"money.proto\\\"; message Order { Money total = 1; }\",\"references\":"
           "[{\"name\":\"money.proto\",\"subject\":\"money.proto\",\"version\":1}]}",
           200, "{\"id\":2}");
    EXPECT(&st, "GET /schemas/ids/2", NULL, 200, "{\"schemaType\":\"PROTOBUF\",\"references\":");
    EXPECT(&st, "GET /schemas/ids/2/schema", NULL, 200, "message Order");
    /* a field's type changed: incompatible */
    EXPECT(&st, "POST /subjects/order-value/versions",
           "{\"schemaType\":\"PROTOBUF\",\"schema\":\"syntax = \\\"proto3\\\"; package shop; "
           "import \\\"money.proto\\\"; message Order { string total = 1; }\",\"references\":"
           "[{\"name\":\"money.proto\",\"subject\":\"money.proto\",\"version\":1}]}",
           409, "incompatible");
    EXPECT(&st, "POST /subjects/x/versions",
           "{\"schemaType\":\"PROTOBUF\",\"schema\":\"message {\"}", 422, "42201");
    reg_store_destroy(&st);
}

TEST(registry_modes_gate_writes)
{
    struct reg_store st;
    reg_store_init(&st);
    run(&st, "POST /subjects/s/versions", schema_body(REC_A));
    EXPECT(&st, "GET /mode", NULL, 200, "{\"mode\":\"READWRITE\"}");
    EXPECT(&st, "PUT /mode/s", "{\"mode\":\"READONLY\"}", 200, "{\"mode\":\"READONLY\"}");
    EXPECT(&st, "POST /subjects/s/versions", schema_body(REC_A2), 422, "42205");
    EXPECT(&st, "DELETE /subjects/s/versions/1", NULL, 422, "42205");
    EXPECT(&st, "GET /mode/s", NULL, 200, "READONLY");
    EXPECT(&st, "GET /mode/t", NULL, 404, "40409");
    EXPECT(&st, "DELETE /mode/s", NULL, 200, "READONLY");
    EXPECT(&st, "PUT /mode", "{\"mode\":\"IMPORT\"}", 422, "42205"); /* subjects exist */
    EXPECT(&st, "PUT /mode?force=true", "{\"mode\":\"IMPORT\"}", 200, "IMPORT");
    EXPECT(&st, "POST /subjects/s/versions", schema_body(REC_A2), 422, "the schema's id must be given");
    EXPECT(&st, "POST /subjects/s/versions",
           "{\"schema\":\"\\\"int\\\"\",\"id\":1,\"version\":9}", 422, "names another schema");
    EXPECT(&st, "POST /subjects/s/versions", "{\"schema\":\"\\\"int\\\"\",\"id\":70,\"version\":9}",
           200, "{\"id\":70}");
    EXPECT(&st, "GET /subjects/s/versions/9", NULL, 200, "\"id\":70");
    EXPECT(&st, "PUT /mode", "{\"mode\":\"READWRITE\"}", 200, "READWRITE");
    EXPECT(&st, "POST /subjects/u/versions", "{\"schema\":\"\\\"long\\\"\"}", 200, "{\"id\":71}");
    EXPECT(&st, "POST /subjects/u/versions", "{\"schema\":\"\\\"bytes\\\"\",\"id\":5}", 422,
           "not in import mode");
    EXPECT(&st, "PUT /mode", "{\"mode\":\"ASLEEP\"}", 422, "42204");
    reg_store_destroy(&st);
}

TEST(registry_bad_requests_get_confluents_codes)
{
    struct reg_store st;
    reg_store_init(&st);
    EXPECT(&st, "GET /subjects/s/versions/zero", NULL, 422, "42202");
    EXPECT(&st, "GET /subjects/s/versions/0", NULL, 422, "42202");
    EXPECT(&st, "GET /subjects/s/versions/2147483648", NULL, 422, "42202");
    EXPECT(&st, "GET /subjects/s/versions/latest", NULL, 404, "40401");
    EXPECT(&st, "GET /schemas/ids/0", NULL, 404, "40403");
    EXPECT(&st, "GET /schemas/ids/-1", NULL, 404, "40403");
    EXPECT(&st, "POST /subjects/s/versions", "{\"schema\":", 400, "\"error_code\":400");
    EXPECT(&st, "POST /subjects/s/versions", "\"just a string\"", 400, "a JSON object");
    EXPECT(&st, "POST /subjects/s/versions", "{\"schema\":7}", 422, "42201");
    EXPECT(&st, "POST /subjects/s/versions", "{\"schema\":\"\\\"int\\\"\",\"schemaType\":\"XML\"}",
           422, "42201");
    EXPECT(&st, "POST /subjects/s/versions", "{\"schema\":\"{\\\"type\\\":\\\"enum\\\"}\"}", 422,
           "Invalid schema");
    EXPECT(&st, "GET /nothing/here", NULL, 404, "\"error_code\":404");
    EXPECT(&st, "PATCH /subjects", NULL, 405, "\"error_code\":405");
    EXPECT(&st, "GET /subjects/s/versions/1/other", NULL, 404, "404");
    EXPECT(&st, "PUT /config/s", "[]", 400, "400");
    EXPECT(&st, "GET /schemas/types", NULL, 200, "\"PROTOBUF\",\"AVRO\"]");
    EXPECT(&st, "GET /", NULL, 200, "{}");
    reg_store_destroy(&st);
}

static int apply(struct reg_store *st, const char *k, const char *v)
{
    return reg_store_apply(st, k, strlen(k), v, v ? strlen(v) : 0);
}

TEST(registry_store_loads_confluent_records_and_skips_the_rest)
{
    struct reg_store st;
    reg_store_init(&st);
#define APPLY(k, v) apply(&st, k, v)
    ASSERT_EQ(APPLY("{\"keytype\":\"NOOP\",\"magic\":0}", "{}"), 0);
    ASSERT_EQ(APPLY("{\"keytype\":\"SCHEMA\",\"subject\":\"a\",\"version\":1,\"magic\":1}",
                    "{\"subject\":\"a\",\"version\":1,\"id\":10,\"schema\":\"\\\"int\\\"\","
                    "\"deleted\":false}"),
              0);
    ASSERT_EQ(APPLY("{\"keytype\":\"SCHEMA\",\"subject\":\"a\",\"version\":2,\"magic\":1}",
                    "{\"subject\":\"a\",\"version\":2,\"id\":11,\"schemaType\":\"PROTOBUF\","
                    "\"schema\":\"syntax = \\\"proto3\\\"; message M {}\"}"),
              0);
    ASSERT_EQ(APPLY("{\"keytype\":\"CONFIG\",\"subject\":null,\"magic\":0}",
                    "{\"compatibilityLevel\":\"FULL\"}"),
              0);
    ASSERT_EQ(APPLY("{\"keytype\":\"MODE\",\"subject\":\"a\",\"magic\":0}", "{\"mode\":\"READONLY\"}"),
              0);
    ASSERT_EQ(st.max_id, 11);
    ASSERT_EQ(st.level, COMPAT_FULL);
    struct reg_subject *s = reg_store_subject(&st, "a");
    ASSERT(s && s->n == 2 && s->has_mode && s->mode == REG_MODE_READONLY);
    ASSERT_EQ(reg_store_id(&st, 11)->type, REG_PROTOBUF);
    /* DELETE_SUBJECT soft-deletes up to its version; CLEAR_SUBJECT removes what is deleted */
    ASSERT_EQ(APPLY("{\"keytype\":\"DELETE_SUBJECT\",\"subject\":\"a\",\"magic\":0}",
                    "{\"subject\":\"a\",\"version\":1}"),
              0);
    ASSERT(s->v[0].deleted && !s->v[1].deleted);
    ASSERT_EQ(APPLY("{\"keytype\":\"CLEAR_SUBJECT\",\"subject\":\"a\",\"magic\":0}",
                    "{\"subject\":\"a\"}"),
              0);
    ASSERT_EQ(s->n, 1);
    ASSERT_EQ(s->v[0].version, 2);
    /* a tombstone of the global config resets it */
    ASSERT_EQ(APPLY("{\"keytype\":\"CONFIG\",\"subject\":null,\"magic\":0}", NULL), 0);
    ASSERT_EQ(st.level, COMPAT_BACKWARD);
    /* not understood: counted, nothing changes */
    uint64_t skipped = st.skipped;
    ASSERT_EQ(APPLY("not json", "{}"), -ERR_INVALID);
    ASSERT_EQ(APPLY("{\"keytype\":\"OTHER\"}", "{}"), -ERR_INVALID);
    ASSERT_EQ(APPLY("{\"keytype\":\"SCHEMA\",\"subject\":\"a\",\"version\":0,\"magic\":1}", "{}"),
              -ERR_INVALID);
    ASSERT_EQ(APPLY("{\"keytype\":\"SCHEMA\",\"subject\":\"a\",\"version\":3,\"magic\":1}",
                    "{\"id\":-4,\"schema\":\"x\"}"),
              -ERR_INVALID);
    ASSERT_EQ(APPLY("{\"keytype\":\"CONFIG\",\"subject\":\"a\",\"magic\":0}",
                    "{\"compatibilityLevel\":\"SOMETIMES\"}"),
              -ERR_INVALID);
    ASSERT_EQ(APPLY("[]", "{}"), -ERR_INVALID);
    ASSERT_EQ(st.skipped, skipped + 6);
    ASSERT_EQ(s->n, 1);
    ASSERT_EQ(st.max_id, 11);
#undef APPLY
    reg_store_destroy(&st);
}

TEST(registry_forwarded_requests_round_trip_and_refuse_garbage)
{
    struct reg_rest_req q = {.method = "POST", .segs = {"subjects", "a b", "versions"},
                             .n_segs = 3, .params = {{"normalize", "true"}}, .n_params = 1,
                             .body = "{\"schema\":\"\\\"int\\\"\"}"};
    q.body_len = strlen(q.body);
    struct iobuf out;
    iobuf_init(&out);
    schemas_rpc_req_encode(&out, &q);
    size_t len;
    uint8_t *p = iobuf_flatten(&out, &len);
    iobuf_destroy(&out);
    struct schemas_req d;
    ASSERT_EQ(schemas_rpc_req_decode(p, len, &d), 0);
    ASSERT_STREQ(d.req.method, "POST");
    ASSERT_EQ(d.req.n_segs, 3);
    ASSERT_STREQ(d.req.segs[1], "a b");
    ASSERT_EQ(d.req.n_params, 1);
    ASSERT_STREQ(d.req.params[0].value, "true");
    ASSERT_EQ(d.req.body_len, q.body_len);
    ASSERT(memcmp(d.req.body, q.body, q.body_len) == 0);
    schemas_req_free(&d);
    /* every truncation, and one byte more, is refused */
    for (size_t cut = 0; cut < len; cut++)
        ASSERT_EQ(schemas_rpc_req_decode(p, cut, &d), -ERR_CORRUPT);
    uint8_t *longer = mem_alloc(len + 1);
    memcpy(longer, p, len);
    longer[len] = 0;
    ASSERT_EQ(schemas_rpc_req_decode(longer, len + 1, &d), -ERR_CORRUPT);
    p[0] = 1; /* another kind */
    ASSERT_EQ(schemas_rpc_req_decode(p, len, &d), -ERR_CORRUPT);
    mem_free(longer);
    mem_free(p);

    iobuf_init(&out);
    schemas_rpc_answer_encode(&out, 404, false, "{\"error_code\":40401}", 20);
    p = iobuf_flatten(&out, &len);
    iobuf_destroy(&out);
    int status;
    bool raw;
    const char *body;
    size_t blen;
    ASSERT_EQ(schemas_rpc_answer_decode(p, len, &status, &raw, &body, &blen), 0);
    ASSERT_EQ(status, 404);
    ASSERT(!raw);
    ASSERT_EQ(blen, 20);
    for (size_t cut = 0; cut < len; cut++)
        ASSERT_EQ(schemas_rpc_answer_decode(p, cut, &status, &raw, &body, &blen), -ERR_CORRUPT);
    mem_free(p);
}

TEST(registry_json_schemas_register_with_refs_and_levels)
{
    struct reg_store st;
    reg_store_init(&st);
    EXPECT(&st, "POST /subjects/addr.json/versions",
           "{\"schemaType\":\"JSON\",\"schema\":\"{\\\"type\\\":\\\"object\\\",\\\"properties\\\":"
           "{\\\"city\\\":{\\\"type\\\":\\\"string\\\"}}}\"}",
           200, "{\"id\":1}");
    const char *person = "{\"schemaType\":\"JSON\",\"schema\":\"{\\\"type\\\":\\\"object\\\","
                         "\\\"properties\\\":{\\\"home\\\":{\\\"$ref\\\":\\\"addr.json\\\"}}}\","
                         "\"references\":[{\"name\":\"addr.json\",\"subject\":\"addr.json\","
                         "\"version\":1}]}";
    EXPECT(&st, "POST /subjects/person-value/versions", person, 200, "{\"id\":2}");
    EXPECT(&st, "GET /schemas/ids/2", NULL, 200, "{\"schemaType\":\"JSON\",\"references\":");
    /* an open content model (additionalProperties true by default) that narrows a type */
    EXPECT(&st, "POST /subjects/n-value/versions",
           "{\"schemaType\":\"JSON\",\"schema\":\"{\\\"type\\\":\\\"object\\\",\\\"properties\\\":"
           "{\\\"n\\\":{\\\"type\\\":\\\"number\\\"}}}\"}",
           200, "{\"id\":3}");
    EXPECT(&st, "POST /subjects/n-value/versions",
           "{\"schemaType\":\"JSON\",\"schema\":\"{\\\"type\\\":\\\"object\\\",\\\"properties\\\":"
           "{\\\"n\\\":{\\\"type\\\":\\\"string\\\"}}}\"}",
           409, "incompatible");
    EXPECT(&st, "POST /subjects/x-value/versions",
           "{\"schemaType\":\"JSON\",\"schema\":\"{\\\"type\\\":7}\"}", 422, "42201");
    EXPECT(&st, "GET /schemas/types", NULL, 200, "[\"JSON\",\"PROTOBUF\",\"AVRO\"]");
    reg_store_destroy(&st);
}

static uint8_t *flat(struct iobuf *out, size_t *len)
{
    uint8_t *p = iobuf_flatten(out, len);
    iobuf_destroy(out);
    return p;
}

TEST(registry_follow_codec_round_trips_and_refuses_garbage)
{
    struct iobuf out;
    size_t len;
    iobuf_init(&out);
    schemas_rpc_follow_req_encode(&out, &(struct schemas_follow_req){.from = 42, .wait_ms = 5000});
    uint8_t *p = flat(&out, &len);
    struct schemas_follow_req q;
    ASSERT_EQ(schemas_rpc_follow_req_decode(p, len, &q), 0);
    ASSERT_EQ(q.from, 42);
    ASSERT_EQ(q.wait_ms, 5000);
    for (size_t cut = 0; cut < len; cut++)
        ASSERT_EQ(schemas_rpc_follow_req_decode(p, cut, &q), -ERR_CORRUPT);
    mem_free(p);
    struct schemas_follow_req bad[] = {
        {.from = -1}, {.wait_ms = -1}, {.wait_ms = SCHEMAS_FOLLOW_WAIT_MAX + 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        iobuf_init(&out);
        schemas_rpc_follow_req_encode(&out, &bad[i]);
        p = flat(&out, &len);
        ASSERT_EQ(schemas_rpc_follow_req_decode(p, len, &q), -ERR_CORRUPT);
        mem_free(p);
    }

    const uint8_t batches[] = "0123456789";
    struct schemas_follow_answer a = {.error = SCHEMAS_FOLLOW_OK,
                                      .leader = 3,
                                      .from = 10,
                                      .high_watermark = 20,
                                      .next = 15,
                                      .batches = batches,
                                      .batches_len = 10};
    iobuf_init(&out);
    schemas_rpc_follow_answer_encode(&out, &a);
    p = flat(&out, &len);
    struct schemas_follow_answer d;
    ASSERT_EQ(schemas_rpc_follow_answer_decode(p, len, &d), 0);
    ASSERT_EQ(d.leader, 3);
    ASSERT_EQ(d.from, 10);
    ASSERT_EQ(d.high_watermark, 20);
    ASSERT_EQ(d.next, 15);
    ASSERT_EQ(d.batches_len, 10);
    ASSERT(memcmp(d.batches, batches, 10) == 0);
    for (size_t cut = 0; cut < len; cut++)
        ASSERT_EQ(schemas_rpc_follow_answer_decode(p, cut, &d), -ERR_CORRUPT);
    mem_free(p);
    /* not the leader: no batches, the leader it knows */
    iobuf_init(&out);
    schemas_rpc_follow_answer_encode(
        &out, &(struct schemas_follow_answer){.error = SCHEMAS_FOLLOW_NOT_LEADER, .leader = -1});
    p = flat(&out, &len);
    ASSERT_EQ(schemas_rpc_follow_answer_decode(p, len, &d), 0);
    ASSERT_EQ(d.error, SCHEMAS_FOLLOW_NOT_LEADER);
    ASSERT_EQ(d.leader, -1);
    ASSERT_EQ(d.batches_len, 0);
    mem_free(p);
    /* offsets out of order, batches past the HW, batches that do not move next, a leader
     * below -1, an unknown error: refused */
    struct schemas_follow_answer wrong[] = {
        {.from = 10, .next = 9, .high_watermark = 20},
        {.from = 10, .next = 25, .high_watermark = 20, .batches = batches, .batches_len = 10},
        {.from = 10, .next = 10, .high_watermark = 20, .batches = batches, .batches_len = 10},
        {.from = 10, .next = 15, .high_watermark = 20},
        {.leader = -2, .from = 10, .next = 10, .high_watermark = 20},
        {.error = 7, .from = 10, .next = 10, .high_watermark = 20},
    };
    for (size_t i = 0; i < sizeof wrong / sizeof wrong[0]; i++) {
        iobuf_init(&out);
        schemas_rpc_follow_answer_encode(&out, &wrong[i]);
        p = flat(&out, &len);
        ASSERT_EQ(schemas_rpc_follow_answer_decode(p, len, &d), -ERR_CORRUPT);
        mem_free(p);
    }
}
