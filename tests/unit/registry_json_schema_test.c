/* JSON Schema in the registry (registry/json_schema.h): compatibility by level through
 * compat_check(), refusals of malformed schemas, canonical and normalized forms, $ref
 * resolution (local pointers, recursion, schema references), depth limits.
 *
 * Expected verdicts were worked out case by case from Confluent's rules (the json-schema-
 * provider diff package read in the schema-registry sources: each difference's type, and the
 * STRICT policy's compatible set). BACKWARD = the new schema reads the latest
 * (SchemaDiff.compare(original = latest, update = new) has only compatible differences),
 * FORWARD = the latest reads the new one, FULL = both, transitive ones against every version. */
#include <stdio.h>

#include "base/errors.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/compat_level.h"
#include "registry/json_schema.h"
#include "test.h"

/* ---- helpers ---- */

struct ref {
    const char *url;
    const char *text;
};

static int refs_lookup(const char *url, struct json_schema_source *src, void *data)
{
    for (const struct ref *r = data; r && r->url; r++) {
        if (strcmp(r->url, url) == 0) {
            src->text = r->text;
            src->len = strlen(r->text);
            return 0;
        }
    }
    return -ERR_NOT_FOUND;
}

static struct json_schema *parse_refs(const char *text, const struct ref *refs)
{
    struct json_schema *s = NULL;
    char err[JSON_SCHEMA_ERR_MAX];
    int rc = json_schema_parse(text, strlen(text), refs_lookup, (void *)refs, &s, err, sizeof(err));
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "parse failed: %s\n--- schema:\n%s", err, text);
    return s;
}

static struct json_schema *parse(const char *text)
{
    return parse_refs(text, NULL);
}

/* The refusal's message for text ("" if it parsed). */
static int parse_error(const char *text, size_t len, char *err, size_t cap)
{
    struct json_schema *s = NULL;
    int rc = json_schema_parse(text, len, NULL, NULL, &s, err, cap);
    if (rc == 0) {
        json_schema_free(s);
        err[0] = '\0';
        return 0;
    }
    ASSERT(s == NULL);
    ASSERT(err[0] != '\0');
    return rc;
}

static char *canonical(const char *text, bool normalize)
{
    struct json_schema *s = parse(text);
    struct strbuf b;
    strbuf_init(&b);
    json_schema_canonical(s, normalize, &b);
    char *r = mem_strdup(strbuf_str(&b));
    strbuf_destroy(&b);
    json_schema_free(s);
    return r;
}

/* ---- compatibility by level ---- */

static const char *const level_names[COMPAT_LEVEL_COUNT] = {
    "NONE", "BACKWARD",       "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE",
    "FULL", "FULL_TRANSITIVE"};

/* Checks every directed verdict's reasons while passing it on. */
static bool checked_can_read(const void *reader, const void *writer, const char *rr, const char *wr,
                             struct compat_reasons *reasons, void *data)
{
    (void)data;
    struct compat_reasons mine;
    compat_reasons_init(&mine);
    bool ok = json_schema_can_read(reader, writer, rr, wr, &mine);
    ASSERT_EQ(ok, mine.n == 0);
    for (size_t i = 0; i < mine.n; i++) {
        ASSERT(strncmp(mine.items[i], "{errorType:\"", 12) == 0);
        compat_reasons_add(reasons, "%s", mine.items[i]);
    }
    compat_reasons_free(&mine);
    ASSERT_EQ(ok, json_schema_can_read(reader, writer, NULL, NULL, NULL));
    return ok;
}

struct version {
    const char *text;
    const struct ref *refs;
};

struct compat_case {
    const char *name;
    struct version history[3]; /* oldest first, then {NULL} */
    struct version next;
    /* y/n for NONE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL,
     * FULL_TRANSITIVE */
    const char *expect;
};

#define V(t)                                                                                       \
    {                                                                                              \
        t, NULL                                                                                    \
    }
#define ALL "yyyyyyy"
#define BACK_ONLY "yyynnnn" /* the new schema reads old data; old readers may not read new */
#define FWD_ONLY "ynnyynn"  /* old readers read new data; the new schema may not read old */
#define NEITHER "ynnnnnn"

#define OBJ(props) "{\"type\":\"object\",\"properties\":{" props "}}"
#define CLOSED(props)                                                                              \
    "{\"type\":\"object\",\"properties\":{" props "},\"additionalProperties\":false}"
#define STR "{\"type\":\"string\"}"
#define INT "{\"type\":\"integer\"}"
#define NUM "{\"type\":\"number\"}"
#define PROP(t) OBJ("\"a\":" t)

static const struct ref address_v1[] = {
    {"address.json", "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}"},
    {NULL, NULL}};
static const struct ref address_v2_bad[] = {
    {"address.json", "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"integer\"}}}"},
    {NULL, NULL}};
static const struct ref address_v2_ok[] = {
    {"address.json",
     "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\",\"maxLength\":9}}}"},
    {NULL, NULL}};
#define WITH_ADDRESS OBJ("\"id\":" STR ",\"addr\":{\"$ref\":\"address.json\"}")

#define TREE(extra)                                                                                \
    "{\"type\":\"object\",\"properties\":{\"v\":" extra                                            \
    ",\"kids\":{\"type\":\"array\",\"items\":{\"$ref\":\"#\"}}}}"

static const struct compat_case compat_cases[] = {
    {"identical", {V(OBJ("\"a\":" STR))}, V(OBJ("\"a\":" STR)), ALL},
    {"layout and member order only",
     {V(OBJ("\"a\":" STR ",\"b\":" INT))},
     V("{ \"properties\" : { \"b\" : {\"type\":\"integer\"},\n \"a\": {\"type\":\"string\"} },"
       " \"type\": \"object\" }"),
     ALL},
    {"optional property added to an open content model",
     {V(OBJ("\"a\":" STR))},
     V(OBJ("\"a\":" STR ",\"b\":" INT)),
     FWD_ONLY},
    {"property removed from an open content model",
     {V(OBJ("\"a\":" STR ",\"b\":" INT))},
     V(OBJ("\"a\":" STR)),
     BACK_ONLY},
    {"property with an empty schema added to an open content model",
     {V(OBJ("\"a\":" STR))},
     V(OBJ("\"a\":" STR ",\"b\":{}")),
     ALL},
    {"optional property added to a closed content model",
     {V(CLOSED("\"a\":" STR))},
     V(CLOSED("\"a\":" STR ",\"b\":" INT)),
     BACK_ONLY},
    {"required property added to a closed content model",
     {V(CLOSED("\"a\":" STR))},
     V("{\"type\":\"object\",\"properties\":{\"a\":" STR ",\"b\":" INT
       "},\"required\":[\"b\"],\"additionalProperties\":false}"),
     NEITHER},
    {"required property with a default added to a closed content model",
     {V(CLOSED("\"a\":" STR))},
     V("{\"type\":\"object\",\"properties\":{\"a\":" STR
       ",\"b\":{\"type\":\"integer\",\"default\":0}},\"required\":[\"b\"],"
       "\"additionalProperties\":false}"),
     BACK_ONLY},
    {"property removed from a closed content model",
     {V(CLOSED("\"a\":" STR ",\"b\":" INT))},
     V(CLOSED("\"a\":" STR)),
     FWD_ONLY},
    {"property of schema false removed from a closed content model",
     {V(CLOSED("\"a\":" STR ",\"b\":false"))},
     V(CLOSED("\"a\":" STR)),
     ALL},
    {"property added, covered by a partially open content model",
     {V("{\"type\":\"object\",\"properties\":{\"a\":" STR "},\"additionalProperties\":" STR "}")},
     V("{\"type\":\"object\",\"properties\":{\"a\":" STR ",\"b\":" STR
       "},\"additionalProperties\":" STR "}"),
     ALL},
    {"property added, not covered by a partially open content model",
     {V("{\"type\":\"object\",\"properties\":{\"a\":" STR "},\"additionalProperties\":" STR "}")},
     V("{\"type\":\"object\",\"properties\":{\"a\":" STR ",\"b\":" INT
       "},\"additionalProperties\":" STR "}"),
     NEITHER},
    {"property added, covered by patternProperties",
     {V("{\"type\":\"object\",\"properties\":{\"a\":" STR "},\"patternProperties\":{\"^x_\":" INT
        "},\"additionalProperties\":false}")},
     V("{\"type\":\"object\",\"properties\":{\"a\":" STR ",\"x_n\":" INT
       "},\"patternProperties\":{\"^x_\":" INT "},\"additionalProperties\":false}"),
     ALL},
    {"content model closed", {V(OBJ("\"a\":" STR))}, V(CLOSED("\"a\":" STR)), FWD_ONLY},
    {"content model opened", {V(CLOSED("\"a\":" STR))}, V(OBJ("\"a\":" STR)), BACK_ONLY},
    {"additionalProperties schema added",
     {V(OBJ("\"a\":" STR))},
     V("{\"type\":\"object\",\"properties\":{\"a\":" STR "},\"additionalProperties\":" STR "}"),
     FWD_ONLY},
    {"additionalProperties schema widened",
     {V("{\"type\":\"object\",\"additionalProperties\":" INT "}")},
     V("{\"type\":\"object\",\"additionalProperties\":" NUM "}"),
     BACK_ONLY},
    {"unevaluatedProperties false added",
     {V("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
        "\"properties\":{\"a\":" STR "}}")},
     V("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
       "\"properties\":{\"a\":" STR "},\"unevaluatedProperties\":false}"),
     FWD_ONLY},
    {"required added to an existing property",
     {V(OBJ("\"a\":" STR))},
     V("{\"type\":\"object\",\"properties\":{\"a\":" STR "},\"required\":[\"a\"]}"),
     FWD_ONLY},
    {"required added to an existing property with a default",
     {V(OBJ("\"a\":{\"type\":\"string\",\"default\":\"x\"}"))},
     V("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"default\":\"x\"}},"
       "\"required\":[\"a\"]}"),
     ALL},
    {"required removed",
     {V("{\"type\":\"object\",\"properties\":{\"a\":" STR "},\"required\":[\"a\"]}")},
     V(OBJ("\"a\":" STR)),
     BACK_ONLY},
    {"string to integer", {V(PROP(STR))}, V(PROP(INT)), NEITHER},
    {"integer to number", {V(PROP(INT))}, V(PROP(NUM)), BACK_ONLY},
    {"number to integer", {V(PROP(NUM))}, V(PROP(INT)), FWD_ONLY},
    {"string made nullable",
     {V(PROP(STR))},
     V(PROP("{\"type\":[\"string\",\"null\"]}")),
     BACK_ONLY},
    {"type list extended",
     {V(PROP("{\"type\":[\"string\",\"null\"]}"))},
     V(PROP("{\"type\":[\"string\",\"null\",\"integer\"]}")),
     BACK_ONLY},
    {"type list reordered",
     {V(PROP("{\"type\":[\"string\",\"null\"]}"))},
     V(PROP("{\"type\":[\"null\",\"string\"]}")),
     ALL},
    {"maxLength added",
     {V(PROP(STR))},
     V(PROP("{\"type\":\"string\",\"maxLength\":10}")),
     FWD_ONLY},
    {"maxLength increased",
     {V(PROP("{\"type\":\"string\",\"maxLength\":10}"))},
     V(PROP("{\"type\":\"string\",\"maxLength\":20}")),
     BACK_ONLY},
    {"minLength increased",
     {V(PROP("{\"type\":\"string\",\"minLength\":1}"))},
     V(PROP("{\"type\":\"string\",\"minLength\":5}")),
     FWD_ONLY},
    {"pattern added",
     {V(PROP(STR))},
     V(PROP("{\"type\":\"string\",\"pattern\":\"^a\"}")),
     FWD_ONLY},
    {"pattern changed",
     {V(PROP("{\"type\":\"string\",\"pattern\":\"^a\"}"))},
     V(PROP("{\"type\":\"string\",\"pattern\":\"^b\"}")),
     NEITHER},
    {"pattern removed",
     {V(PROP("{\"type\":\"string\",\"pattern\":\"^a\"}"))},
     V(PROP(STR)),
     BACK_ONLY},
    {"maximum decreased",
     {V(PROP("{\"type\":\"number\",\"maximum\":100}"))},
     V(PROP("{\"type\":\"number\",\"maximum\":50.5}")),
     FWD_ONLY},
    {"minimum decreased",
     {V(PROP("{\"type\":\"number\",\"minimum\":0}"))},
     V(PROP("{\"type\":\"number\",\"minimum\":-1}")),
     BACK_ONLY},
    {"exclusiveMinimum added",
     {V(PROP(NUM))},
     V(PROP("{\"type\":\"number\",\"exclusiveMinimum\":0}")),
     FWD_ONLY},
    {"exclusiveMaximum increased",
     {V(PROP("{\"type\":\"number\",\"exclusiveMaximum\":5}"))},
     V(PROP("{\"type\":\"number\",\"exclusiveMaximum\":6}")),
     BACK_ONLY},
    {"multipleOf expanded",
     {V(PROP("{\"type\":\"number\",\"multipleOf\":2}"))},
     V(PROP("{\"type\":\"number\",\"multipleOf\":4}")),
     FWD_ONLY},
    {"multipleOf changed",
     {V(PROP("{\"type\":\"number\",\"multipleOf\":2}"))},
     V(PROP("{\"type\":\"number\",\"multipleOf\":3}")),
     NEITHER},
    {"multipleOf spelled with another scale",
     {V(PROP("{\"type\":\"number\",\"multipleOf\":0.5}"))},
     V(PROP("{\"type\":\"number\",\"multipleOf\":0.50}")),
     ALL},
    {"multipleOf reduced in decimals",
     {V(PROP("{\"type\":\"number\",\"multipleOf\":0.1}"))},
     V(PROP("{\"type\":\"number\",\"multipleOf\":0.01}")),
     BACK_ONLY},
    {"enum extended",
     {V(PROP("{\"enum\":[\"a\",\"b\"]}"))},
     V(PROP("{\"enum\":[\"a\",\"b\",\"c\"]}")),
     BACK_ONLY},
    {"enum changed",
     {V(PROP("{\"enum\":[\"a\",\"b\"]}"))},
     V(PROP("{\"enum\":[\"a\",\"c\"]}")),
     NEITHER},
    {"enum reordered",
     {V(PROP("{\"enum\":[\"a\",1,null]}"))},
     V(PROP("{\"enum\":[null,\"a\",1]}")),
     ALL},
    {"enum removed beside a type",
     {V(PROP("{\"type\":\"string\",\"enum\":[\"a\",\"b\"]}"))},
     V(PROP(STR)),
     BACK_ONLY},
    {"const changed", {V(PROP("{\"const\":1}"))}, V(PROP("{\"const\":2}")), NEITHER},
    {"const kept",
     {V(PROP("{\"const\":{\"x\":[1,2]}}"))},
     V(PROP("{\"const\":{\"x\":[1,2]}}")),
     ALL},
    {"oneOf branch added",
     {V(PROP("{\"oneOf\":[" STR "," INT "]}"))},
     V(PROP("{\"oneOf\":[" STR "," INT ",{\"type\":\"boolean\"}]}")),
     BACK_ONLY},
    {"oneOf branch removed",
     {V(PROP("{\"oneOf\":[" STR "," INT ",{\"type\":\"boolean\"}]}"))},
     V(PROP("{\"oneOf\":[" STR "," INT "]}")),
     FWD_ONLY},
    {"oneOf to anyOf",
     {V(PROP("{\"oneOf\":[" STR "," INT "]}"))},
     V(PROP("{\"anyOf\":[" STR "," INT "]}")),
     BACK_ONLY},
    {"oneOf branches reordered",
     {V(PROP("{\"oneOf\":[" STR "," INT "]}"))},
     V(PROP("{\"oneOf\":[" INT "," STR "]}")),
     ALL},
    {"oneOf branch changes type",
     {V(PROP("{\"oneOf\":[" STR "," INT "]}"))},
     V(PROP("{\"oneOf\":[" STR ",{\"type\":\"boolean\"}]}")),
     NEITHER},
    {"oneOf branch widened",
     {V(PROP("{\"oneOf\":[" STR "," INT "]}"))},
     V(PROP("{\"oneOf\":[" STR "," NUM "]}")),
     BACK_ONLY},
    {"allOf branch added",
     {V("{\"allOf\":[{\"properties\":{\"a\":" STR "}}]}")},
     V("{\"allOf\":[{\"properties\":{\"a\":" STR "}},{\"required\":[\"a\"]}]}"),
     FWD_ONLY},
    {"singleton oneOf to its branch", {V(PROP("{\"oneOf\":[" STR "]}"))}, V(PROP(STR)), ALL},
    {"object made nullable through oneOf",
     {V(OBJ("\"a\":" STR))},
     V("{\"oneOf\":[{\"type\":\"null\"}," OBJ("\"a\":" STR) "]}"),
     BACK_ONLY},
    {"array items type changed",
     {V(PROP("{\"type\":\"array\",\"items\":" STR "}"))},
     V(PROP("{\"type\":\"array\",\"items\":" INT "}")),
     NEITHER},
    {"array items widened",
     {V(PROP("{\"type\":\"array\",\"items\":" INT "}"))},
     V(PROP("{\"type\":\"array\",\"items\":" NUM "}")),
     BACK_ONLY},
    {"array items schema added",
     {V(PROP("{\"type\":\"array\"}"))},
     V(PROP("{\"type\":\"array\",\"items\":" STR "}")),
     FWD_ONLY},
    {"maxItems added",
     {V(PROP("{\"type\":\"array\"}"))},
     V(PROP("{\"type\":\"array\",\"maxItems\":3}")),
     FWD_ONLY},
    {"minItems decreased",
     {V(PROP("{\"type\":\"array\",\"minItems\":3}"))},
     V(PROP("{\"type\":\"array\",\"minItems\":1}")),
     BACK_ONLY},
    {"uniqueItems added",
     {V(PROP("{\"type\":\"array\"}"))},
     V(PROP("{\"type\":\"array\",\"uniqueItems\":true}")),
     FWD_ONLY},
    {"tuple item removed from an open content model",
     {V(PROP("{\"type\":\"array\",\"items\":[" STR "," INT "]}"))},
     V(PROP("{\"type\":\"array\",\"items\":[" STR "]}")),
     BACK_ONLY},
    {"tuple item added to a closed content model",
     {V(PROP("{\"type\":\"array\",\"items\":[" STR "],\"additionalItems\":false}"))},
     V(PROP("{\"type\":\"array\",\"items\":[" STR "," INT "],\"additionalItems\":false}")),
     BACK_ONLY},
    {"prefixItems item added to a closed content model (2020-12)",
     {V("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"array\","
        "\"prefixItems\":[" STR "],\"items\":false}")},
     V("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"array\","
       "\"prefixItems\":[" STR "," INT "],\"items\":false}"),
     BACK_ONLY},
    {"definition behind a $ref changes type",
     {V("{\"definitions\":{\"a\":" STR "},\"type\":\"object\",\"properties\":{\"x\":{\"$ref\":"
        "\"#/definitions/a\"}}}")},
     V("{\"definitions\":{\"a\":" INT "},\"type\":\"object\",\"properties\":{\"x\":{\"$ref\":"
       "\"#/definitions/a\"}}}"),
     NEITHER},
    {"$ref replaced by the same schema inline",
     {V("{\"$defs\":{\"a\":" STR "},\"type\":\"object\",\"properties\":{\"x\":{\"$ref\":"
        "\"#/$defs/a\"}}}")},
     V(OBJ("\"x\":" STR)),
     ALL},
    {"recursive schema unchanged", {V(TREE(STR))}, V(TREE(STR)), ALL},
    {"recursive schema widened inside the recursion", {V(TREE(INT))}, V(TREE(NUM)), BACK_ONLY},
    {"true to false", {V("true")}, V("false"), FWD_ONLY},
    {"empty schema narrowed to a string", {V(PROP("{}"))}, V(PROP(STR)), FWD_ONLY},
    {"title, description and default changed",
     {V("{\"title\":\"A\",\"description\":\"x\",\"type\":\"string\",\"default\":\"a\"}")},
     V("{\"title\":\"B\",\"description\":\"y\",\"type\":\"string\",\"default\":\"b\"}"),
     ALL},
    {"connect.type bytes on both sides",
     {V(PROP("{\"type\":\"string\",\"connect.type\":\"bytes\"}"))},
     V(PROP("{\"type\":\"number\",\"connect.type\":\"bytes\"}")),
     ALL},
    {"not widened",
     {V("{\"not\":" STR "}")},
     V("{\"not\":{\"type\":[\"string\",\"null\"]}}"),
     FWD_ONLY},
    {"dependency array extended",
     {V("{\"type\":\"object\",\"dependencies\":{\"a\":[\"b\"]}}")},
     V("{\"type\":\"object\",\"dependencies\":{\"a\":[\"b\",\"c\"]}}"),
     FWD_ONLY},
    {"dependency schema removed",
     {V("{\"type\":\"object\",\"dependencies\":{\"a\":{\"required\":[\"b\"]}}}")},
     V("{\"type\":\"object\"}"),
     BACK_ONLY},
    {"minProperties increased",
     {V("{\"type\":\"object\",\"minProperties\":1}")},
     V("{\"type\":\"object\",\"minProperties\":2}"),
     FWD_ONLY},
    {"nested property changes type",
     {V(OBJ("\"o\":" OBJ("\"p\":" OBJ("\"q\":" STR))))},
     V(OBJ("\"o\":" OBJ("\"p\":" OBJ("\"q\":" INT)))),
     NEITHER},
    {"draft 4 exclusiveMaximum boolean beside a lower maximum",
     {V("{\"$schema\":\"http://json-schema.org/draft-04/schema#\",\"type\":\"number\","
        "\"maximum\":10}")},
     V("{\"$schema\":\"http://json-schema.org/draft-04/schema#\",\"type\":\"number\","
       "\"maximum\":5,\"exclusiveMaximum\":true}"),
     FWD_ONLY},
    {"referenced schema, reference unchanged",
     {{WITH_ADDRESS, address_v1}},
     {WITH_ADDRESS, address_v1},
     ALL},
    {"referenced schema changes a property's type",
     {{WITH_ADDRESS, address_v1}},
     {WITH_ADDRESS, address_v2_bad},
     NEITHER},
    {"referenced schema gains a maxLength",
     {{WITH_ADDRESS, address_v1}},
     {WITH_ADDRESS, address_v2_ok},
     FWD_ONLY},
    {"2020-12 $ref with a sibling keyword",
     {V("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$defs\":{\"s\":" STR
        "},\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\"}}}")},
     V("{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"$defs\":{\"s\":" STR
       "},\"properties\":{\"a\":{\"$ref\":\"#/$defs/s\",\"maxLength\":5}}}"),
     FWD_ONLY},
    {"draft 7 $ref siblings ignored",
     {V("{\"definitions\":{\"s\":" STR "},\"properties\":{\"a\":{\"$ref\":\"#/definitions/s\"}}}")},
     V("{\"definitions\":{\"s\":" STR
       "},\"properties\":{\"a\":{\"$ref\":\"#/definitions/s\",\"maxLength\":5}}}"),
     ALL},
    {"a keyword of another kind beside a type removed (Everit gives it a node of its own)",
     {V(PROP("{\"type\":\"string\",\"minimum\":1}"))},
     V(PROP(STR)),
     BACK_ONLY},
    {"const is no keyword in draft 4",
     {V("{\"$schema\":\"http://json-schema.org/draft-04/schema#\",\"type\":\"string\","
        "\"const\":\"a\"}")},
     V("{\"$schema\":\"http://json-schema.org/draft-04/schema#\",\"type\":\"string\","
       "\"const\":\"b\"}"),
     ALL},
    {"transitive: maxLength back under an older version",
     {V(PROP("{\"type\":\"string\",\"maxLength\":30}")),
      V(PROP("{\"type\":\"string\",\"maxLength\":10}"))},
     V(PROP("{\"type\":\"string\",\"maxLength\":20}")),
     "yynnnnn"},
    {"transitive: forward only against the latest",
     {V(PROP("{\"type\":\"string\",\"maxLength\":10}")),
      V(PROP("{\"type\":\"string\",\"maxLength\":30}"))},
     V(PROP("{\"type\":\"string\",\"maxLength\":20}")),
     "ynnynnn"},
    {"transitive: unchanged through three versions",
     {V(PROP(INT)), V(PROP(INT)), V(PROP(INT))},
     V(PROP(INT)),
     ALL},
    {"transitive: widened step by step",
     {V(PROP(INT)), V(PROP("{\"type\":[\"integer\",\"null\"]}"))},
     V(PROP("{\"type\":[\"integer\",\"null\",\"string\"]}")),
     BACK_ONLY},
};

TEST(registry_json_schema_compat_levels_table)
{
    size_t n_cases = sizeof(compat_cases) / sizeof(compat_cases[0]);
    ASSERT_CMP(n_cases, >=, 60);
    for (size_t i = 0; i < n_cases; i++) {
        const struct compat_case *c = &compat_cases[i];
        struct json_schema *hist[3];
        const void *earlier[3];
        size_t n = 0;
        while (n < 3 && c->history[n].text) {
            hist[n] = parse_refs(c->history[n].text, c->history[n].refs);
            earlier[n] = hist[n];
            n++;
        }
        struct json_schema *next = parse_refs(c->next.text, c->next.refs);
        ASSERT_EQ(strlen(c->expect), COMPAT_LEVEL_COUNT);
        for (int lv = 0; lv < COMPAT_LEVEL_COUNT; lv++) {
            bool want = c->expect[lv] == 'y';
            struct compat_reasons r;
            compat_reasons_init(&r);
            size_t failed_at = 99;
            bool got = compat_check((enum compat_level)lv, next, earlier, n, checked_can_read, NULL,
                                    &r, &failed_at);
            if (got != want)
                test_fail(__FILE__, __LINE__, "case \"%s\": %s is %s, expected %s (%s)", c->name,
                          level_names[lv], got ? "compatible" : "incompatible",
                          want ? "compatible" : "incompatible", r.n ? r.items[0] : "no reason");
            ASSERT_EQ(got, r.n == 0);
            if (!got)
                ASSERT_CMP(failed_at, <, n);
            compat_reasons_free(&r);
        }
        json_schema_free(next);
        for (size_t k = 0; k < n; k++)
            json_schema_free(hist[k]);
    }
}

static void assert_differences(const char *original, const char *update, const char *const *want,
                               bool want_ok)
{
    struct json_schema *a = parse(original), *b = parse(update);
    struct compat_reasons r;
    compat_reasons_init(&r);
    ASSERT_EQ(json_schema_differences(a, b, &r), want_ok);
    size_t n = 0;
    while (want[n])
        n++;
    if (r.n != n) {
        for (size_t i = 0; i < r.n; i++)
            fprintf(stderr, "  got %s\n", r.items[i]);
        ASSERT_EQ(r.n, n);
    }
    for (size_t i = 0; i < n; i++)
        ASSERT_STREQ(r.items[i], want[i]);
    compat_reasons_free(&r);
    json_schema_free(a);
    json_schema_free(b);
}

TEST(registry_json_schema_differences_paths)
{
    static const char *const strings[] = {"MAX_LENGTH_INCREASED #/properties/s/maxLength",
                                          "MIN_LENGTH_ADDED #/properties/s/minLength",
                                          "PATTERN_REMOVED #/properties/s/pattern", NULL};
    assert_differences(OBJ("\"s\":{\"type\":\"string\",\"maxLength\":5,\"pattern\":\"x\"}"),
                       OBJ("\"s\":{\"type\":\"string\",\"maxLength\":6,\"minLength\":1}"), strings,
                       false);
    static const char *const objects[] = {
        "TITLE_CHANGED #/", "REQUIRED_ATTRIBUTE_ADDED #/required/a", "TYPE_EXTENDED #/properties/a",
        "OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL #/properties/b", NULL};
    assert_differences("{\"title\":\"x\",\"type\":\"object\",\"properties\":{\"a\":" INT "}}",
                       "{\"type\":\"object\",\"properties\":{\"a\":" NUM ",\"b\":" STR
                       "},\"required\":[\"a\"]}",
                       objects, false);
    static const char *const combined[] = {"SUM_TYPE_EXTENDED #/", "TYPE_EXTENDED #/anyOf/0", NULL};
    assert_differences("{\"anyOf\":[" INT "," STR "]}",
                       "{\"anyOf\":[" NUM "," STR ",{\"type\":\"null\"}]}", combined, true);
    static const char *const items[] = {"ITEM_ADDED_TO_CLOSED_CONTENT_MODEL #/items/1",
                                        "MAX_ITEMS_INCREASED #/maxItems", NULL};
    assert_differences("{\"type\":\"array\",\"items\":[" STR "],\"additionalItems\":false,"
                       "\"maxItems\":1}",
                       "{\"type\":\"array\",\"items\":[" STR "," INT "],\"additionalItems\":false,"
                       "\"maxItems\":2}",
                       items, true);
    /* A shared definition met through two $refs is judged once and reported at both paths. */
    static const char *const shared[] = {"TYPE_CHANGED #/properties/x",
                                         "TYPE_CHANGED #/properties/y", NULL};
    assert_differences("{\"$defs\":{\"d\":" STR "},\"properties\":{\"x\":{\"$ref\":\"#/$defs/d\"},"
                       "\"y\":{\"$ref\":\"#/$defs/d\"}}}",
                       "{\"$defs\":{\"d\":" INT "},\"properties\":{\"x\":{\"$ref\":\"#/$defs/d\"},"
                       "\"y\":{\"$ref\":\"#/$defs/d\"}}}",
                       shared, false);
}

TEST(registry_json_schema_verbose_reasons)
{
    struct json_schema *old =
        parse(OBJ("\"n\":" NUM ",\"s\":{\"type\":\"string\",\"maxLength\":9}"));
    struct json_schema *neu =
        parse(OBJ("\"n\":" INT ",\"s\":{\"type\":\"string\",\"maxLength\":5}"));
    struct compat_reasons r;
    compat_reasons_init(&r);
    ASSERT(!json_schema_can_read(neu, old, "new", "old", &r));
    ASSERT_EQ(r.n, 2);
    ASSERT_STREQ(r.items[0], "{errorType:\"TYPE_NARROWED\", description:\"A type at path "
                             "'#/properties/n' is different between the new schema and the old "
                             "schema'}");
    ASSERT_STREQ(r.items[1], "{errorType:\"MAX_LENGTH_DECREASED\", description:\"The value at "
                             "path '#/properties/s/maxLength' in the new schema is less than its "
                             "value in the old schema'}");
    compat_reasons_free(&r);
    /* FORWARD asks the old schema to read the new one: the roles trade places. */
    struct json_schema *closed = parse(CLOSED("\"a\":" STR ",\"b\":" INT));
    struct json_schema *fewer = parse(CLOSED("\"a\":" STR));
    compat_reasons_init(&r);
    ASSERT(!json_schema_can_read(fewer, closed, "new", "old", &r));
    ASSERT_EQ(r.n, 1);
    ASSERT_STREQ(r.items[0], "{errorType:\"PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL\", "
                             "description:\"The new has a closed content model and is missing a "
                             "property or item present at path '#/properties/b' in the old "
                             "schema'}");
    compat_reasons_free(&r);
    compat_reasons_init(&r);
    ASSERT(!json_schema_can_read(old, closed, "old", "new", &r) || r.n == 0);
    compat_reasons_free(&r);
    json_schema_free(closed);
    json_schema_free(fewer);
    json_schema_free(old);
    json_schema_free(neu);
}

TEST(registry_json_schema_recursion_through_refs_terminates)
{
    /* Mutually recursive definitions, compared both ways and with a change deep inside. */
    static const char a[] =
        "{\"$ref\":\"#/definitions/A\",\"definitions\":{"
        "\"A\":{\"type\":\"object\",\"properties\":{\"b\":{\"$ref\":\"#/definitions/B\"},"
        "\"v\":{\"type\":\"integer\"}}},"
        "\"B\":{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/definitions/A\"},"
        "\"w\":{\"anyOf\":[{\"$ref\":\"#/definitions/A\"},{\"$ref\":\"#/definitions/B\"}]}}}}}";
    static const char b[] =
        "{\"$ref\":\"#/definitions/A\",\"definitions\":{"
        "\"A\":{\"type\":\"object\",\"properties\":{\"b\":{\"$ref\":\"#/definitions/B\"},"
        "\"v\":{\"type\":\"string\"}}},"
        "\"B\":{\"type\":\"object\",\"properties\":{\"a\":{\"$ref\":\"#/definitions/A\"},"
        "\"w\":{\"anyOf\":[{\"$ref\":\"#/definitions/A\"},{\"$ref\":\"#/definitions/B\"}]}}}}}";
    /* x2 differs from x in text only where the comparison does not look (a $ref's
     * sibling), so the two are compared rather than recognized as the same text */
    char a2[sizeof(a) + 32];
    snprintf(a2, sizeof(a2), "{\"description\":\"x\",%s", a + 1);
    struct json_schema *x = parse(a), *y = parse(b), *x2 = parse(a2);
    ASSERT(!json_schema_same(x, x2));
    ASSERT(json_schema_can_read(x, x2, NULL, NULL, NULL));
    ASSERT(json_schema_can_read(x2, x, NULL, NULL, NULL));
    ASSERT(!json_schema_can_read(x, y, NULL, NULL, NULL));
    ASSERT(!json_schema_can_read(y, x, NULL, NULL, NULL));
    json_schema_free(x);
    json_schema_free(x2);
    json_schema_free(y);
}

TEST_T(registry_json_schema_comparison_gives_up_past_its_budget, 30)
{
    struct strbuf a, b;
    strbuf_init(&a);
    strbuf_init(&b);
    strbuf_puts(&a, "{\"oneOf\":[");
    strbuf_puts(&b, "{\"oneOf\":[");
    for (int i = 0; i < 400; i++) {
        strbuf_printf(&a, "%s{\"const\":%d}", i ? "," : "", i);
        strbuf_printf(&b, "%s{\"const\":%d}", i ? "," : "", i + 1);
    }
    strbuf_puts(&a, "]}");
    strbuf_puts(&b, "]}");
    struct json_schema *x = parse(strbuf_str(&a)), *y = parse(strbuf_str(&b));
    struct compat_reasons r;
    compat_reasons_init(&r);
    ASSERT(!json_schema_can_read(y, x, "new", "old", &r));
    ASSERT_EQ(r.n, 1);
    ASSERT_STREQ(r.items[0], "{errorType:\"TOO_COMPLEX\", description:\"The new and old schemas "
                             "are too large or too deeply recursive to compare at path '#/'\'}");
    compat_reasons_free(&r);
    /* The same schema, or one parsed from the same text, needs no comparison. */
    ASSERT(json_schema_can_read(x, x, NULL, NULL, NULL));
    struct json_schema *x2 = parse(strbuf_str(&a));
    ASSERT(json_schema_same(x, x2));
    ASSERT(!json_schema_same(x, y));
    ASSERT(json_schema_can_read(x2, x, NULL, NULL, NULL));
    json_schema_free(x2);
    json_schema_free(x);
    json_schema_free(y);
    strbuf_destroy(&a);
    strbuf_destroy(&b);
}

TEST(registry_json_schema_cycle_assumption_is_revisited)
{
    /* "first" meets the pair (A, A') only inside a trial of the anyOf's branches, where the
     * cycle A -> C -> A is assumed compatible and (C, C') cached so; "second" then compares
     * (C, C') directly. Only the fixpoint pass finds that C' reaches an A' whose y changed. */
#define DEFS(y)                                                                                    \
    "\"definitions\":{\"A\":{\"type\":\"object\",\"properties\":{\"x\":{\"$ref\":"                 \
    "\"#/definitions/C\"},\"y\":{\"type\":\"" y "\"}}},\"C\":{\"type\":\"object\","                \
    "\"properties\":{\"z\":{\"$ref\":\"#/definitions/A\"}}}}"
    struct json_schema *o = parse("{" DEFS("string") ",\"type\":\"object\",\"properties\":{"
                                                     "\"first\":{\"$ref\":\"#/definitions/A\"},"
                                                     "\"second\":{\"$ref\":\"#/definitions/C\"}}}");
    struct json_schema *u =
        parse("{" DEFS("integer") ",\"type\":\"object\",\"properties\":{"
                                  "\"first\":{\"anyOf\":[{\"$ref\":\"#/definitions/A\"},{}]},"
                                  "\"second\":{\"$ref\":\"#/definitions/C\"}}}");
#undef DEFS
    struct compat_reasons r;
    compat_reasons_init(&r);
    ASSERT(!json_schema_differences(o, u, &r));
    bool found = false;
    for (size_t i = 0; i < r.n; i++)
        found = found || strcmp(r.items[i], "TYPE_CHANGED #/properties/second/properties/z/"
                                            "properties/y") == 0;
    ASSERT(found);
    compat_reasons_free(&r);
    ASSERT(!json_schema_can_read(u, o, NULL, NULL, NULL));
    json_schema_free(o);
    json_schema_free(u);
}

/* ---- refusals ---- */

struct bad_case {
    const char *text;
    const char *message;
};

static const struct bad_case bad_cases[] = {
    {"", "not valid JSON at byte 0: a value is missing"},
    {"[1]", "a schema must be an object or a boolean, not an array"},
    {"5", "a schema must be an object or a boolean, not a number"},
    {"\"string\"", "a schema must be an object or a boolean, not a string"},
    {"{\"a\":1,\"a\":2}", "not valid JSON at byte 0: an object gives a member name twice"},
    {"{\"type\":5}", "#: type must be a string or a non-empty array of strings, not a number"},
    {"{\"type\":\"strin\"}", "#: unknown type \"strin\""},
    {"{\"type\":[]}",
     "#: type must be a string or a non-empty array of strings, not an empty array"},
    {"{\"type\":[\"string\",\"string\"]}", "#: type names \"string\" twice"},
    {"{\"type\":[\"string\",1]}", "#: type must hold strings only, not a number"},
    {"{\"properties\":[]}", "#: properties must be an object, not an array"},
    {"{\"properties\":{\"a\":5}}",
     "#/properties/a: a schema must be an object or a boolean, not a number"},
    {"{\"properties\":{\"a/b~\":{\"type\":\"x\"}}}", "#/properties/a~1b~0: unknown type \"x\""},
    {"{\"type\":\"string\",\"maxLength\":-1}",
     "#: maxLength must be a non-negative integer, not -1"},
    {"{\"type\":\"string\",\"minLength\":1.5}",
     "#: minLength must be a non-negative integer, not 1.5"},
    {"{\"minLength\":\"1\"}", "#: minLength must be a non-negative integer, not a string"},
    {"{\"required\":\"a\"}", "#: required must be an array of strings, not a string"},
    {"{\"required\":[\"a\",\"a\"]}", "#: required names \"a\" twice"},
    {"{\"enum\":\"a\"}", "#: enum must be an array, not a string"},
    {"{\"allOf\":[]}", "#: allOf must be a non-empty array of schemas, not an empty array"},
    {"{\"oneOf\":{}}", "#: oneOf must be a non-empty array of schemas, not an object"},
    {"{\"anyOf\":[true,5]}", "#/anyOf/1: a schema must be an object or a boolean, not a number"},
    {"{\"not\":null}", "#/not: a schema must be an object or a boolean, not null"},
    {"{\"$ref\":5}", "#: $ref must be a string, not a number"},
    {"{\"properties\":{\"a\":{\"$ref\":\"#/definitions/missing\"}}}",
     "#/properties/a: $ref \"#/definitions/missing\" points to nothing"},
    {"{\"$ref\":\"other.json\"}",
     "#: $ref \"other.json\": no schema reference named \"other.json\""},
    {"{\"$ref\":\"#\"}", "#: $ref \"#\" only leads back to itself"},
    {"{\"$ref\":\"#foo\"}", "#: $ref \"#foo\": only JSON pointers are supported after '#'"},
    {"{\"type\":\"number\",\"multipleOf\":0}", "#: multipleOf must be greater than 0, not 0"},
    {"{\"type\":\"number\",\"minimum\":\"1\"}", "#: minimum must be a number, not a string"},
    {"{\"type\":\"number\",\"exclusiveMinimum\":true}",
     "#: exclusiveMinimum must be a number, not a boolean"},
    {"{\"additionalProperties\":\"no\"}",
     "#: additionalProperties must be a boolean or a schema, not a string"},
    {"{\"title\":5}", "#: title must be a string, not a number"},
    {"{\"type\":\"array\",\"items\":5}",
     "#: items must be a schema or an array of schemas, not a number"},
    {"{\"type\":\"array\",\"uniqueItems\":\"yes\"}",
     "#: uniqueItems must be a boolean, not a string"},
    {"{\"dependencies\":{\"a\":5}}",
     "#/dependencies/a: a dependency must be an array of strings or a schema, not a number"},
    {"{\"definitions\":[]}", "#: definitions must be an object, not an array"},
    {"{\"default\":1e9999999999}", "the number 1e9999999999 is out of range"},
    {"{\"items\":{\"items\":{\"items\":{\"type\":1}}}}",
     "#/items/items/items: type must be a string or a non-empty array of strings, not a number"},
};

TEST(registry_json_schema_malformed_table)
{
    size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);
    ASSERT_CMP(n, >=, 20);
    for (size_t i = 0; i < n; i++) {
        char err[JSON_SCHEMA_ERR_MAX];
        parse_error(bad_cases[i].text, strlen(bad_cases[i].text), err, sizeof(err));
        if (strcmp(err, bad_cases[i].message) != 0)
            test_fail(__FILE__, __LINE__, "case %zu:\n%s\n  got:  \"%s\"\n  want: \"%s\"", i,
                      bad_cases[i].text, err, bad_cases[i].message);
    }
}

TEST(registry_json_schema_reference_errors)
{
    static const struct ref refs[] = {{"broken.json", "{\"type\":"},
                                      {"deep.json", "{\"definitions\":{\"x\":{\"type\":7}}}"},
                                      {NULL, NULL}};
    char err[JSON_SCHEMA_ERR_MAX];
    struct json_schema *s = NULL;
    static const char t1[] = "{\"$ref\":\"broken.json\"}";
    ASSERT_EQ(json_schema_parse(t1, strlen(t1), refs_lookup, (void *)refs, &s, err, sizeof(err)),
              -ERR_INVALID);
    ASSERT_STREQ(err, "broken.json: not valid JSON at byte 8: a value is missing");
    static const char t2[] = "{\"properties\":{\"p\":{\"$ref\":\"deep.json#/definitions/x\"}}}";
    ASSERT_EQ(json_schema_parse(t2, strlen(t2), refs_lookup, (void *)refs, &s, err, sizeof(err)),
              -ERR_INVALID);
    ASSERT_STREQ(err, "deep.json#/definitions/x: type must be a string or a non-empty array of "
                      "strings, not a number");
    ASSERT(s == NULL);
    /* A $ref to the document's own $id is local. */
    static const char t3[] = "{\"$id\":\"http://x.test/o.json\",\"definitions\":{\"s\":"
                             "{\"type\":\"string\"}},\"properties\":{\"p\":{\"$ref\":"
                             "\"http://x.test/o.json#/definitions/s\"}}}";
    s = parse(t3);
    ASSERT_EQ(json_schema_root(s)->props[0].schema->target->kind, JSK_STRING);
    json_schema_free(s);
    /* A $ref inside a referenced document is resolved in that document. */
    static const struct ref inner[] = {
        {"money.json", "{\"definitions\":{\"u\":{\"type\":\"integer\"}},\"type\":\"object\","
                       "\"properties\":{\"units\":{\"$ref\":\"#/definitions/u\"}}}"},
        {NULL, NULL}};
    s = parse_refs("{\"properties\":{\"m\":{\"$ref\":\"money.json\"},"
                   "\"n\":{\"$ref\":\"money.json#/definitions/u\"}}}",
                   inner);
    const struct json_schema_node *m = json_schema_root(s)->props[0].schema->target;
    ASSERT_EQ(m->kind, JSK_OBJECT);
    ASSERT_EQ(m->props[0].schema->target->kind, JSK_NUMBER);
    ASSERT(m->props[0].schema->target == json_schema_root(s)->props[1].schema->target);
    json_schema_free(s);
    /* Under the root $id's directory, a reference is named by the rest of its URL; and
     * "#/$defs/X" finds definitions/X, as Confluent merges them. */
    static const struct ref named[] = {{"addr.json", "{\"type\":\"string\"}"}, {NULL, NULL}};
    s = parse_refs("{\"$id\":\"https://x.test/s/order.json\",\"definitions\":{\"n\":"
                   "{\"type\":\"integer\"}},\"properties\":{\"a\":{\"$ref\":"
                   "\"https://x.test/s/addr.json\"},\"b\":{\"$ref\":\"#/$defs/n\"}}}",
                   named);
    ASSERT_EQ(json_schema_root(s)->props[0].schema->target->kind, JSK_STRING);
    ASSERT_EQ(json_schema_root(s)->props[1].schema->target->kind, JSK_NUMBER);
    json_schema_free(s);
    char err2[JSON_SCHEMA_ERR_MAX];
    ASSERT_EQ(parse_error("{\"$defs\":{\"n\":{}},\"definitions\":{\"m\":{}},\"$ref\":"
                          "\"#/$defs/n/x\"}",
                          strlen("{\"$defs\":{\"n\":{}},\"definitions\":{\"m\":{}},\"$ref\":"
                                 "\"#/$defs/n/x\"}"),
                          err2, sizeof(err2)),
              -ERR_INVALID);
    ASSERT_STREQ(err2, "#: $ref \"#/$defs/n/x\" points to nothing");
    /* A short error buffer still gets a NUL-terminated prefix. */
    char small[8];
    parse_error("{\"type\":5}", 10, small, sizeof(small));
    ASSERT_EQ(strlen(small), 7);
}

TEST_T(registry_json_schema_depth_limits, 30)
{
    /* Nesting within the limit parses and compares; past it is refused, never a crash. */
    struct strbuf b;
    strbuf_init(&b);
    for (int i = 0; i < 63; i++)
        strbuf_puts(&b, "{\"type\":\"object\",\"properties\":{\"p\":");
    strbuf_puts(&b, "{\"type\":\"string\"}");
    for (int i = 0; i < 63; i++)
        strbuf_puts(&b, "}}");
    /* 127 levels, near the limit; the other side differs at the bottom */
    char *deeper = mem_strdup(strbuf_str(&b));
    memcpy(strstr(deeper, "\"string\""), "\"number\"", 8);
    struct json_schema *s = parse(strbuf_str(&b)), *t = parse(deeper);
    ASSERT(!json_schema_can_read(s, t, NULL, NULL, NULL));
    ASSERT(!json_schema_can_read(t, s, NULL, NULL, NULL));
    mem_free(deeper);
    json_schema_free(s);
    json_schema_free(t);
    strbuf_reset(&b);
    for (int i = 0; i < 64; i++)
        strbuf_puts(&b, "{\"not\":");
    strbuf_puts(&b, "{}");
    for (int i = 0; i < 64; i++)
        strbuf_putc(&b, '}');
    char err0[JSON_SCHEMA_ERR_MAX];
    ASSERT_EQ(parse_error(b.p, b.len, err0, sizeof(err0)), 0);
    strbuf_reset(&b);
    for (int i = 0; i < 64; i++)
        strbuf_puts(&b, "{\"type\":\"object\",\"properties\":{\"p\":");
    strbuf_puts(&b, "{\"type\":\"string\"}");
    for (int i = 0; i < 64; i++)
        strbuf_puts(&b, "}}");
    ASSERT_EQ(parse_error(b.p, b.len, err0, sizeof(err0)), -ERR_TOO_LARGE);
    s = parse("{}");
    t = parse("{}");
    ASSERT(json_schema_can_read(s, t, NULL, NULL, NULL));
    json_schema_free(s);
    json_schema_free(t);
    strbuf_reset(&b);
    for (int i = 0; i < 100000; i++)
        strbuf_puts(&b, "{\"not\":");
    strbuf_puts(&b, "true");
    for (int i = 0; i < 100000; i++)
        strbuf_putc(&b, '}');
    char err[JSON_SCHEMA_ERR_MAX];
    ASSERT_EQ(parse_error(b.p, b.len, err, sizeof(err)), -ERR_TOO_LARGE);
    ASSERT(strstr(err, "not valid JSON at byte ") == err);
    strbuf_destroy(&b);
    /* A text within the size limit whose model would outgrow the memory limit. */
    strbuf_init(&b);
    strbuf_puts(&b, "{\"anyOf\":[{}");
    for (int i = 0; i < 300000; i++)
        strbuf_puts(&b, ",{}");
    strbuf_puts(&b, "]}");
    ASSERT_CMP(b.len, <=, JSON_SCHEMA_TEXT_MAX);
    ASSERT_EQ(parse_error(b.p, b.len, err, sizeof(err)), -ERR_TOO_LARGE);
    ASSERT(strstr(err, ": the schema needs more than 64 MiB of memory") != NULL);
    strbuf_destroy(&b);
    /* A chain of many $refs costs no stack. */
    strbuf_init(&b);
    strbuf_puts(&b, "{\"$ref\":\"#/definitions/d0\",\"definitions\":{");
    for (int i = 0; i < 5000; i++)
        strbuf_printf(&b, "\"d%d\":{\"$ref\":\"#/definitions/d%d\"},", i, i + 1);
    strbuf_puts(&b, "\"d5000\":{\"type\":\"integer\"}}}");
    s = parse(strbuf_str(&b));
    ASSERT_EQ(json_schema_root(s)->kind, JSK_NUMBER);
    json_schema_free(s);
    strbuf_destroy(&b);
}

/* ---- canonical forms ---- */

TEST(registry_json_schema_canonical_is_compact_in_document_order)
{
    static const char text[] = "{ \"type\" : \"object\",\n  \"properties\" : {\n"
                               "    \"b\" : { \"type\" : \"string\" },\n"
                               "    \"a\" : { \"type\" : \"integer\", \"minimum\" : 1 } },\n"
                               "  \"required\" : [ \"b\", \"a\" ] }";
    char *c = canonical(text, false);
    ASSERT_STREQ(c, "{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"string\"},\"a\":"
                    "{\"type\":\"integer\",\"minimum\":1}},\"required\":[\"b\",\"a\"]}");
    char *n = canonical(text, true);
    ASSERT_STREQ(n, "{\"properties\":{\"a\":{\"minimum\":1,\"type\":\"integer\"},\"b\":"
                    "{\"type\":\"string\"}},\"required\":[\"b\",\"a\"],\"type\":\"object\"}");
    /* canonical of canonical is itself; so is normalized of normalized */
    char *cc = canonical(c, false), *nn = canonical(n, true);
    ASSERT_STREQ(cc, c);
    ASSERT_STREQ(nn, n);
    mem_free(c);
    mem_free(n);
    mem_free(cc);
    mem_free(nn);
    char *t = canonical(" true ", false);
    ASSERT_STREQ(t, "true");
    mem_free(t);
}

TEST(registry_json_schema_canonical_numbers_as_jackson_writes_them)
{
    char *c = canonical("{\"default\":[1.50,1e2,0.0000001,-0,-0.0,12345678901234567890123,"
                        "1.5E-3,100e-2,0.000001,-2.5e+3,0e5,7]}",
                        false);
    ASSERT_STREQ(c, "{\"default\":[1.50,1E+2,1E-7,0,0.0,12345678901234567890123,0.0015,1.00,"
                    "0.000001,-2.5E+3,0E+5,7]}");
    char *cc = canonical(c, false);
    ASSERT_STREQ(cc, c);
    mem_free(c);
    mem_free(cc);
}

TEST(registry_json_schema_canonical_strings_and_key_order)
{
    char *c = canonical("{\"description\":\"caf\\u00e9 \\/ \\u0001\\t\\u2028\\\"\"}", false);
    ASSERT_STREQ(c, "{\"description\":\"caf\xc3\xa9 / \\u0001\\t\xe2\x80\xa8\\\"\"}");
    mem_free(c);
    /* Java sorts by UTF-16 units: U+1F600 (a surrogate pair, 0xD83D...) before U+FF21,
     * though its UTF-8 bytes (F0 ...) sort after EF BC A1. */
    char *n = canonical("{\"properties\":{\"\\uFF21\":{},\"\\uD83D\\uDE00\":{},\"z\":{},"
                        "\"Z\":{}}}",
                        true);
    ASSERT_STREQ(n, "{\"properties\":{\"Z\":{},\"z\":{},\"\xf0\x9f\x98\x80\":{},"
                    "\"\xef\xbc\xa1\":{}}}");
    mem_free(n);
    /* Arrays keep their order; objects inside them are sorted too. */
    n = canonical("{\"enum\":[{\"b\":1,\"a\":2},\"x\",[{\"d\":0,\"c\":0}]]}", true);
    ASSERT_STREQ(n, "{\"enum\":[{\"a\":2,\"b\":1},\"x\",[{\"c\":0,\"d\":0}]]}");
    mem_free(n);
}

TEST(registry_json_schema_model_follows_everit)
{
    struct json_schema *s = parse("{\"title\":\"T\",\"type\":\"string\",\"enum\":[\"a\"]}");
    const struct json_schema_node *r = json_schema_root(s);
    ASSERT_EQ(r->kind, JSK_COMBINED);
    ASSERT_EQ(r->criterion, JSC_ALL);
    ASSERT_EQ(r->n_subs, 2);
    ASSERT_EQ(r->subs[0]->kind, JSK_ENUM);
    ASSERT_EQ(r->subs[1]->kind, JSK_STRING);
    ASSERT_STREQ(json_schema_title(s), "T");
    json_schema_free(s);
    s = parse("{\"properties\":{\"a\":{}},\"maxLength\":3}");
    r = json_schema_root(s);
    ASSERT_EQ(r->kind, JSK_COMBINED);
    ASSERT_EQ(r->subs[0]->kind, JSK_OBJECT);
    ASSERT_EQ(r->subs[1]->kind, JSK_STRING);
    ASSERT_EQ(r->subs[1]->max_length, 3);
    ASSERT(json_schema_title(s) == NULL);
    json_schema_free(s);
    s = parse("{\"type\":[\"integer\",\"null\"],\"minimum\":2}");
    r = json_schema_root(s);
    ASSERT_EQ(r->kind, JSK_COMBINED);
    ASSERT_EQ(r->criterion, JSC_ANY);
    ASSERT_EQ(r->subs[0]->kind, JSK_NUMBER);
    ASSERT(r->subs[0]->requires_integer);
    ASSERT(r->subs[0]->minimum.present);
    ASSERT_EQ(r->subs[1]->kind, JSK_NULL);
    json_schema_free(s);
    /* a type takes its own keywords; another kind's keywords still give a node */
    s = parse("{\"type\":\"string\",\"maxLength\":2,\"minimum\":1,\"if\":true}");
    r = json_schema_root(s);
    ASSERT_EQ(r->kind, JSK_COMBINED);
    ASSERT_EQ(r->n_subs, 3);
    ASSERT_EQ(r->subs[0]->kind, JSK_STRING);
    ASSERT_EQ(r->subs[0]->max_length, 2);
    ASSERT_EQ(r->subs[1]->kind, JSK_NUMBER);
    ASSERT_EQ(r->subs[2]->kind, JSK_CONDITIONAL);
    json_schema_free(s);
    /* draft 6 has no if/then/else */
    s = parse("{\"$schema\":\"http://json-schema.org/draft-06/schema#\",\"if\":5}");
    ASSERT_EQ(json_schema_root(s)->kind, JSK_EMPTY);
    json_schema_free(s);
    s = parse("{}");
    ASSERT_EQ(json_schema_root(s)->kind, JSK_EMPTY);
    json_schema_free(s);
}
