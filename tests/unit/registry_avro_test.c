/* Avro schemas (registry/avro.h) and the compatibility levels (registry/compat_level.h).
 *
 * The compatibility table is built from the specification's "Schema Resolution" rules; each
 * case gives the verdict Confluent Schema Registry (Avro Java's SchemaCompatibility) reaches at
 * every level. The Parsing Canonical Form vectors and fingerprints are the Avro project's own
 * (share/test/data/schema-tests.txt); the canonical strings are Avro Java's Schema.toString()
 * as Confluent's AvroSchemaTest expects them, or derived from its rules. */
#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/avro.h"
#include "registry/compat_level.h"
#include "test.h"

static struct avro_schema *parse_refs(const char *text, const struct avro_schema *const *refs,
                                      size_t n_refs, unsigned flags)
{
    struct avro_parse_opts o = {.refs = refs, .n_refs = n_refs, .flags = flags};
    struct avro_schema *s = NULL;
    char err[512];
    if (avro_schema_parse(text, strlen(text), &o, &s, err, sizeof(err)) != 0)
        test_fail(__FILE__, __LINE__, "schema refused: %s\n    %s", err, text);
    return s;
}

static struct avro_schema *parse(const char *text)
{
    return parse_refs(text, NULL, 0, 0);
}

static void refused_with(const char *text, unsigned flags, const char *needle)
{
    struct avro_parse_opts o = {.flags = flags};
    struct avro_schema *s = NULL;
    char err[512] = "";
    int rc = avro_schema_parse(text, strlen(text), &o, &s, err, sizeof(err));
    if (rc != -ERR_INVALID || s != NULL || !strstr(err, needle))
        test_fail(__FILE__, __LINE__, "schema %.200s\n    gave rc %d, error '%s'; want '%s'", text,
                  rc, err, needle);
}

/* The three written forms, in a static buffer per form (tests are single-threaded). */
static const char *form(const struct avro_schema *s, int which)
{
    static struct strbuf bufs[3];
    strbuf_reset(&bufs[which]);
    if (which == 0)
        avro_canonical(s, &bufs[which]);
    else if (which == 1)
        avro_normalized(s, &bufs[which]);
    else
        avro_pcf(s, &bufs[which]);
    return strbuf_str(&bufs[which]);
}
#define CANON(s) form((s), 0)
#define NORM(s) form((s), 1)
#define PCF(s) form((s), 2)

/* ---- model ---- */

TEST(avro_names_follow_the_specification_example)
{
    /* The specification's example of fullname rules. */
    struct avro_schema *s =
        parse("{\"type\":\"record\",\"name\":\"Example\",\"fields\":["
              "{\"name\":\"inheritNull\",\"type\":{\"type\":\"enum\",\"name\":\"Simple\","
              "\"symbols\":[\"a\",\"b\"]}},"
              "{\"name\":\"explicitNamespace\",\"type\":{\"type\":\"fixed\",\"name\":\"Simple\","
              "\"namespace\":\"explicit\",\"size\":12}},"
              "{\"name\":\"fullName\",\"type\":{\"type\":\"record\",\"name\":\"a.full.Name\","
              "\"namespace\":\"ignored\",\"fields\":[{\"name\":\"inheritNamespace\",\"type\":{"
              "\"type\":\"enum\",\"name\":\"Understanding\",\"symbols\":[\"d\",\"e\"]}}]}}]}");
    ASSERT_EQ(avro_schema_named_count(s), 5);
    ASSERT_STREQ(avro_schema_named(s, 0)->name.full, "Example");
    ASSERT_STREQ(avro_schema_named(s, 1)->name.full, "Simple");
    ASSERT_STREQ(avro_schema_named(s, 2)->name.full, "explicit.Simple");
    ASSERT_STREQ(avro_schema_named(s, 3)->name.full, "a.full.Name");
    ASSERT_STREQ(avro_schema_named(s, 3)->name.space, "a.full");
    ASSERT_STREQ(avro_schema_named(s, 4)->name.full, "a.full.Understanding");
    ASSERT(avro_schema_named(s, 0)->name.space == NULL);
    ASSERT_STREQ(avro_schema_name(s), "Example");
    const struct avro_node *root = avro_schema_root(s);
    ASSERT_EQ(root->n_fields, 3);
    ASSERT_EQ(root->fields[1].type->type, AVRO_FIXED);
    ASSERT_EQ(root->fields[1].type->size, 12);
    avro_schema_free(s);

    /* A reference without a dot: the enclosing namespace first, then the null one. */
    s = parse("{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"ns\",\"fields\":["
              "{\"name\":\"a\",\"type\":{\"type\":\"record\",\"name\":\"G\",\"namespace\":\"\","
              "\"fields\":[]}},{\"name\":\"b\",\"type\":\"G\"},"
              "{\"name\":\"c\",\"type\":{\"type\":\"fixed\",\"name\":\"G\",\"size\":1}},"
              "{\"name\":\"d\",\"type\":\"G\"}]}");
    root = avro_schema_root(s);
    ASSERT_STREQ(root->fields[1].type->name.full, "G");
    ASSERT_STREQ(root->fields[3].type->name.full, "ns.G");
    ASSERT(root->fields[0].type == root->fields[1].type); /* one node per named type */
    avro_schema_free(s);

    /* Forward and recursive references. */
    s = parse("{\"type\":\"record\",\"name\":\"List\",\"fields\":["
              "{\"name\":\"head\",\"type\":\"Item\"},"
              "{\"name\":\"next\",\"type\":[\"null\",\"List\"]},"
              "{\"name\":\"first\",\"type\":{\"type\":\"record\",\"name\":\"Item\","
              "\"fields\":[{\"name\":\"v\",\"type\":\"long\"}]}}]}");
    root = avro_schema_root(s);
    ASSERT(root->fields[1].type->branches[1] == root);
    ASSERT(root->fields[0].type == root->fields[2].type);
    ASSERT_EQ(root->fields[0].type->type, AVRO_RECORD);
    avro_schema_free(s);
}

TEST(avro_primitives_and_their_object_forms)
{
    static const char *const names[] = {"null",  "boolean", "int",   "long",
                                        "float", "double",  "bytes", "string"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++) {
        char a[64], b[64];
        snprintf(a, sizeof(a), "\"%s\"", names[i]);
        snprintf(b, sizeof(b), " { \"type\" : \"%s\" } ", names[i]);
        struct avro_schema *x = parse(a), *y = parse(b);
        ASSERT_EQ(avro_schema_root(x)->type, (enum avro_type)i);
        ASSERT_STREQ(CANON(x), a);
        ASSERT_STREQ(CANON(y), a);
        ASSERT_STREQ(PCF(y), a);
        ASSERT(avro_schema_name(x) == NULL);
        avro_schema_free(x);
        avro_schema_free(y);
    }
}

struct lt_case {
    const char *schema;
    enum avro_logical lt;
};

TEST(avro_logical_types_valid_or_ignored)
{
    static const struct lt_case cases[] = {
        {"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":4,\"scale\":2}",
         AVRO_LT_DECIMAL},
        {"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":4}", AVRO_LT_DECIMAL},
        {"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":4,\"scale\":5}",
         AVRO_LT_NONE}, /* scale above precision */
        {"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":0}", AVRO_LT_NONE},
        {"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"scale\":1}", AVRO_LT_NONE},
        {"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":\"4\"}", AVRO_LT_NONE},
        {"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":4.0}", AVRO_LT_NONE},
        {"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":4,\"scale\":-1}",
         AVRO_LT_NONE},
        {"{\"type\":\"fixed\",\"name\":\"d\",\"size\":2,\"logicalType\":\"decimal\","
         "\"precision\":4}",
         AVRO_LT_DECIMAL}, /* 2 bytes hold 4 digits (floor(log10(2^15 - 1))) */
        {"{\"type\":\"fixed\",\"name\":\"d\",\"size\":2,\"logicalType\":\"decimal\","
         "\"precision\":5}",
         AVRO_LT_NONE},
        {"{\"type\":\"string\",\"logicalType\":\"decimal\",\"precision\":4}", AVRO_LT_NONE},
        {"{\"type\":\"bytes\",\"logicalType\":\"big-decimal\"}", AVRO_LT_BIG_DECIMAL},
        {"{\"type\":\"string\",\"logicalType\":\"uuid\"}", AVRO_LT_UUID},
        {"{\"type\":\"fixed\",\"name\":\"u\",\"size\":16,\"logicalType\":\"uuid\"}", AVRO_LT_UUID},
        {"{\"type\":\"fixed\",\"name\":\"u\",\"size\":15,\"logicalType\":\"uuid\"}", AVRO_LT_NONE},
        {"{\"type\":\"int\",\"logicalType\":\"uuid\"}", AVRO_LT_NONE},
        {"{\"type\":\"int\",\"logicalType\":\"date\"}", AVRO_LT_DATE},
        {"{\"type\":\"long\",\"logicalType\":\"date\"}", AVRO_LT_NONE},
        {"{\"type\":\"int\",\"logicalType\":\"time-millis\"}", AVRO_LT_TIME_MILLIS},
        {"{\"type\":\"long\",\"logicalType\":\"time-micros\"}", AVRO_LT_TIME_MICROS},
        {"{\"type\":\"int\",\"logicalType\":\"time-micros\"}", AVRO_LT_NONE},
        {"{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}", AVRO_LT_TIMESTAMP_MILLIS},
        {"{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}", AVRO_LT_TIMESTAMP_MICROS},
        {"{\"type\":\"long\",\"logicalType\":\"timestamp-nanos\"}", AVRO_LT_TIMESTAMP_NANOS},
        {"{\"type\":\"int\",\"logicalType\":\"timestamp-millis\"}", AVRO_LT_NONE},
        {"{\"type\":\"long\",\"logicalType\":\"local-timestamp-millis\"}",
         AVRO_LT_LOCAL_TIMESTAMP_MILLIS},
        {"{\"type\":\"long\",\"logicalType\":\"local-timestamp-micros\"}",
         AVRO_LT_LOCAL_TIMESTAMP_MICROS},
        {"{\"type\":\"long\",\"logicalType\":\"local-timestamp-nanos\"}",
         AVRO_LT_LOCAL_TIMESTAMP_NANOS},
        {"{\"type\":\"fixed\",\"name\":\"du\",\"size\":12,\"logicalType\":\"duration\"}",
         AVRO_LT_DURATION},
        {"{\"type\":\"fixed\",\"name\":\"du\",\"size\":8,\"logicalType\":\"duration\"}",
         AVRO_LT_NONE},
        {"{\"type\":\"long\",\"logicalType\":\"no-such-type\"}", AVRO_LT_NONE},
        {"{\"type\":\"long\",\"logicalType\":7}", AVRO_LT_NONE},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct avro_schema *s = parse(cases[i].schema);
        const struct avro_node *t = avro_schema_root(s);
        if (t->logical != cases[i].lt)
            test_fail(__FILE__, __LINE__, "case %zu %s: logical %d, want %d", i, cases[i].schema,
                      t->logical, cases[i].lt);
        /* Valid or not, the attribute stays a property and is written back. */
        ASSERT(strstr(CANON(s), "\"logicalType\":") != NULL);
        ASSERT(strstr(PCF(s), "logicalType") == NULL);
        avro_schema_free(s);
    }
    struct avro_schema *s = parse(cases[0].schema);
    ASSERT_EQ(avro_schema_root(s)->precision, 4);
    ASSERT_EQ(avro_schema_root(s)->scale, 2);
    ASSERT_STREQ(avro_logical_name(avro_schema_root(s)->logical), "decimal");
    avro_schema_free(s);
}

TEST(avro_defaults_are_checked_against_their_field)
{
#define REC(t, d)                                                                                  \
    "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"f\",\"type\":" t                  \
    ",\"default\":" d "}]}"
    static const char *const good[] = {
        REC("\"null\"", "null"),
        REC("\"boolean\"", "true"),
        REC("\"int\"", "-2147483648"),
        REC("\"long\"", "9223372036854775807"),
        REC("\"float\"", "1"),
        REC("\"double\"", "1.5e300"),
        REC("\"double\"", "\"NaN\""), /* a float or double field reads text as a number */
        REC("\"float\"", "\" -1.5e3f \""),
        REC("\"bytes\"", "\"\\u00ff\""),
        REC("\"string\"", "\"x\""),
        REC("{\"type\":\"fixed\",\"name\":\"F\",\"size\":2}", "\"ab\""),
        REC("{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}", "\"B\""),
        REC("{\"type\":\"array\",\"items\":\"int\"}", "[1,2,3]"),
        REC("{\"type\":\"map\",\"values\":\"long\"}", "{\"a\":1}"),
        REC("[\"null\",\"string\"]", "null"),
        REC("[\"null\",\"string\"]", "\"x\""), /* any branch, as Avro 1.12 */
        REC("[\"string\",\"null\"]", "null"),
        REC("{\"type\":\"record\",\"name\":\"In\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
            "{\"name\":\"b\",\"type\":\"int\",\"default\":0}]}",
            "{\"a\":1}"), /* b falls back on its own default */
    };
    static const char *const bad[] = {
        REC("\"null\"", "0"),
        REC("\"boolean\"", "\"true\""),
        REC("\"int\"", "2147483648"),
        REC("\"int\"", "1.0"),
        REC("\"long\"", "9223372036854775808"),
        REC("\"long\"", "\"1\""),
        REC("\"float\"", "true"),
        REC("\"string\"", "null"),
        REC("\"bytes\"", "1"),
        REC("{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}", "\"Z\""),
        REC("{\"type\":\"array\",\"items\":\"int\"}", "[1,\"a\"]"),
        REC("{\"type\":\"map\",\"values\":\"long\"}", "[]"),
        REC("[\"null\",\"string\"]", "1"),
        REC("{\"type\":\"record\",\"name\":\"In\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"}]}",
            "{}"),
    };
    for (size_t i = 0; i < ARRAY_LEN(good); i++)
        avro_schema_free(parse(good[i]));
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        refused_with(bad[i], 0, "the default");
        /* A stored schema is taken as it is (Confluent does not re-check old schemas). */
        avro_schema_free(parse_refs(bad[i], NULL, 0, AVRO_PARSE_LENIENT));
    }
    refused_with(REC("\"double\"", "\"abc\""), 0, "is not a number");
    refused_with(REC("[\"int\",\"null\"]", "\"x\""), 0, "is not a valid union [int, null]");
    /* A record default whose fallback is itself: bounded, refused. */
    refused_with("{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":\"n\",\"type\":\"L\","
                 "\"default\":{}}]}",
                 0, "the default {} is not a valid L");
#undef REC
}

struct bad_schema {
    const char *text;
    const char *reason;
};

TEST(avro_malformed_schemas_are_refused_with_a_reason)
{
    static const struct bad_schema cases[] = {
        {"", "not valid JSON at byte 0: a value is missing"},
        {"{", "not valid JSON"},
        {"{\"type\":\"int\"} x", "not valid JSON at byte 15: text after the value"},
        {"{\"type\":\"int\",\"type\":\"long\"}", "an object gives a member name twice"},
        {"42", "a schema is a string, an object or an array, not number"},
        {"true", "not boolean"},
        {"null", "not null"},
        {"\"foo\"", "unknown type \"foo\""},
        {"\"record\"", "unknown type \"record\""},
        {"{}", "a schema object needs a \"type\""},
        {"{\"type\":\"bogus\"}", "unknown type \"bogus\""},
        {"{\"type\":{\"type\":\"int\"}}", "\"type\" must be a string"},
        {"{\"type\":\"record\",\"fields\":[]}", "a record needs a \"name\" string"},
        {"{\"type\":\"record\",\"name\":3,\"fields\":[]}", "a record needs a \"name\" string"},
        {"{\"type\":\"record\",\"name\":\"r\"}", "record \"r\" needs a \"fields\" array"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":{}}", "needs a \"fields\" array"},
        {"{\"type\":\"record\",\"name\":\"1r\",\"fields\":[]}", "name \"1r\" is invalid"},
        {"{\"type\":\"record\",\"name\":\"a-b\",\"fields\":[]}", "name \"a-b\" is invalid"},
        {"{\"type\":\"record\",\"name\":\"\",\"fields\":[]}", "name \"\" is invalid"},
        {"{\"type\":\"record\",\"name\":\"a..b\",\"fields\":[]}", "namespace part \"\" is invalid"},
        {"{\"type\":\"record\",\"name\":\"r\",\"namespace\":\"1a.b\",\"fields\":[]}",
         "namespace part \"1a\" is invalid"},
        {"{\"type\":\"record\",\"name\":\"r\",\"namespace\":\"a.\",\"fields\":[]}",
         "namespace part \"\" is invalid"},
        {"{\"type\":\"record\",\"name\":\"int\",\"fields\":[]}",
         "may not be called after a primitive type: \"int\""},
        {"{\"type\":\"enum\",\"name\":\"string\",\"symbols\":[]}", "after a primitive"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[1]}", "a field must be an object"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"type\":\"int\"}]}",
         "a field needs a \"name\" string"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\"}]}",
         "field \"a\" has no \"type\""},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a b\",\"type\":\"int\"}]}",
         "field name \"a b\" is invalid"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
         "{\"name\":\"a\",\"type\":\"long\"}]}",
         "two fields named \"a\""},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"},"
         "{\"name\":\"b\",\"type\":\"long\",\"aliases\":[\"a\"]}]}",
         "alias \"a\" of field \"b\" is the name of another field"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\","
         "\"aliases\":[\"x\"]},{\"name\":\"b\",\"type\":\"long\",\"aliases\":[\"x\"]}]}",
         "share the alias \"x\""},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"Nope\"}]}",
         "unknown type \"Nope\""},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\","
         "\"order\":\"sideways\"}]}",
         "\"order\" must be"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\","
         "\"order\":1}]}",
         "\"order\" must be"},
        {"{\"type\":\"record\",\"name\":\"r\",\"aliases\":\"s\",\"fields\":[]}",
         "\"aliases\" must be an array of strings"},
        {"{\"type\":\"record\",\"name\":\"r\",\"aliases\":[1],\"fields\":[]}",
         "an alias must be a string"},
        {"{\"type\":\"enum\",\"name\":\"e\"}", "enum \"e\" needs a \"symbols\" array"},
        {"{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[\"A\",\"A\"]}",
         "has the symbol \"A\" twice"},
        {"{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[\"1A\"]}",
         "enum symbol \"1A\" is invalid"},
        {"{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[1]}", "a symbol must be a string"},
        {"{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[\"A\"],\"default\":\"B\"}",
         "the default \"B\" is not one of its symbols"},
        {"{\"type\":\"enum\",\"name\":\"e\",\"symbols\":[\"A\"],\"default\":1}",
         "the default 1 is not one of its symbols"},
        {"{\"type\":\"fixed\",\"name\":\"f\"}", "fixed \"f\" needs a \"size\""},
        {"{\"type\":\"fixed\",\"name\":\"f\",\"size\":-1}", "needs a \"size\""},
        {"{\"type\":\"fixed\",\"name\":\"f\",\"size\":1.5}", "needs a \"size\""},
        {"{\"type\":\"fixed\",\"name\":\"f\",\"size\":\"16\"}", "needs a \"size\""},
        {"{\"type\":\"fixed\",\"name\":\"f\",\"size\":2147483648}", "needs a \"size\""},
        {"{\"type\":\"array\"}", "an array needs \"items\""},
        {"{\"type\":\"map\",\"items\":\"int\"}", "a map needs \"values\""},
        {"{\"type\":\"array\",\"items\":\"Nope\"}", "unknown type \"Nope\""},
        {"[[\"int\"]]", "a union may not directly contain another union"},
        {"[\"int\",\"null\",\"int\"]", "a union has two branches of type \"int\""},
        {"[{\"type\":\"array\",\"items\":\"int\"},{\"type\":\"array\",\"items\":\"long\"}]",
         "two branches of type \"array\""},
        {"[{\"type\":\"map\",\"values\":\"int\"},{\"type\":\"map\",\"values\":\"long\"}]",
         "two branches of type \"map\""},
        {"[{\"type\":\"record\",\"name\":\"R\",\"fields\":[]},\"R\"]",
         "two branches of type \"R\""},
        {"[{\"type\":\"record\",\"name\":\"R\",\"fields\":[]},"
         "{\"type\":\"record\",\"name\":\"R\",\"fields\":[]}]",
         "the name \"R\" is defined twice"},
        {"{\"type\":\"record\",\"name\":\"a.R\",\"fields\":[{\"name\":\"x\",\"type\":{"
         "\"type\":\"fixed\",\"name\":\"R\",\"size\":1}}]}",
         "the name \"a.R\" is defined twice"},
        {"[\"int\", 5]", "a schema is a string, an object or an array, not number"},
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"float\","
         "\"default\":\"1.2.3\"}]}",
         "is not a number"},
        {"{\"type\":\"int\",\"k\\u0000\":1}", "may not contain U+0000"},
        {"{\"type\":\"record\",\"name\":\"r\\u0000\",\"fields\":[]}", "may not contain U+0000"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++)
        refused_with(cases[i].text, 0, cases[i].reason);
    /* Offsets point into the text. */
    char err[256];
    struct avro_schema *s;
    const char *t =
        "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"X\"}]}";
    ASSERT_EQ(avro_schema_parse(t, strlen(t), NULL, &s, err, sizeof(err)), -ERR_INVALID);
    ASSERT(strstr(err, "(at byte 57)") != NULL);
    /* A tiny error buffer truncates, still terminated. */
    char tiny[8];
    ASSERT_EQ(avro_schema_parse("{}", 2, NULL, &s, tiny, sizeof(tiny)), -ERR_INVALID);
    ASSERT_EQ(strlen(tiny), 7);
    /* Lenient (stored schemas): names are not checked either. */
    avro_schema_free(parse_refs("{\"type\":\"record\",\"name\":\"1-r\",\"fields\":[{\"name\":"
                                "\"a b\",\"type\":\"int\"}]}",
                                NULL, 0, AVRO_PARSE_LENIENT));
}

static char *deep_arrays(size_t depth)
{
    struct strbuf sb;
    strbuf_init(&sb);
    for (size_t i = 0; i < depth; i++)
        strbuf_puts(&sb, "{\"type\":\"array\",\"items\":");
    strbuf_puts(&sb, "\"int\"");
    for (size_t i = 0; i < depth; i++)
        strbuf_putc(&sb, '}');
    return sb.p;
}

TEST(avro_deep_nesting_refuses_cleanly)
{
    char *text = deep_arrays(10000);
    refused_with(text, 0, "not valid JSON at byte 3072: nested too deep");
    mem_free(text);
    /* A deep but allowed schema works through every function. */
    text = deep_arrays(AVRO_JSON_DEPTH_MAX - 1);
    struct avro_schema *s = parse(text);
    ASSERT_STREQ(CANON(s), text);
    ASSERT(avro_can_read(s, s, "new", "old", NULL));
    ASSERT_EQ(strlen(PCF(s)), strlen(text));
    avro_schema_free(s);
    mem_free(text);
    /* Records nest three JSON levels each: 40 of them fit. */
    struct strbuf sb;
    strbuf_init(&sb);
    for (int i = 0; i < 40; i++)
        strbuf_printf(&sb,
                      "{\"type\":\"record\",\"name\":\"R%d\",\"fields\":[{\"name\":\"f\","
                      "\"type\":",
                      i);
    strbuf_puts(&sb, "\"int\"");
    for (int i = 0; i < 40; i++)
        strbuf_puts(&sb, "}]}");
    s = parse(strbuf_str(&sb));
    ASSERT(avro_can_read(s, s, "new", "old", NULL));
    avro_schema_free(s);
    strbuf_destroy(&sb);
}

/* ---- Parsing Canonical Form and fingerprints (Avro's share/test/data/schema-tests.txt) ---- */

struct pcf_case {
    const char *input;
    const char *canonical;
    int64_t fingerprint; /* 0: none given */
};

TEST(avro_parsing_canonical_form_and_fingerprints)
{
    static const struct pcf_case cases[] = {
        {"\"null\"", "\"null\"", 7195948357588979594},
        {"{\"type\":\"null\"}", "\"null\"", 0},
        {"\"boolean\"", "\"boolean\"", -6970731678124411036},
        {"{\"type\":\"boolean\"}", "\"boolean\"", 0},
        {"\"int\"", "\"int\"", 8247732601305521295},
        {"{\"type\":\"int\"}", "\"int\"", 0},
        {"\"long\"", "\"long\"", -3434872931120570953},
        {"{\"type\":\"long\"}", "\"long\"", 0},
        {"\"float\"", "\"float\"", 5583340709985441680},
        {"{\"type\":\"float\"}", "\"float\"", 0},
        {"\"double\"", "\"double\"", -8181574048448539266},
        {"{\"type\":\"double\"}", "\"double\"", 0},
        {"\"bytes\"", "\"bytes\"", 5746618253357095269},
        {"{\"type\":\"bytes\"}", "\"bytes\"", 0},
        {"\"string\"", "\"string\"", -8142146995180207161},
        {"{\"type\":\"string\"}", "\"string\"", 0},
        {"[  ]", "[]", -1241056759729112623},
        {"[ \"int\"  ]", "[\"int\"]", -5232228896498058493},
        {"[ \"int\" , {\"type\":\"boolean\"} ]", "[\"int\",\"boolean\"]", 5392556393470105090},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"foo\"}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}", -4824392279771201922},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", \"namespace\":\"x.y\"}",
         "{\"name\":\"x.y.foo\",\"type\":\"record\",\"fields\":[]}", 5916914534497305771},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"a.b.foo\", \"namespace\":\"x.y\"}",
         "{\"name\":\"a.b.foo\",\"type\":\"record\",\"fields\":[]}", -4616218487480524110},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", \"doc\":\"Useful info\"}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}", -4824392279771201922},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", \"aliases\":[\"foo\",\"bar\"]}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}", -4824392279771201922},
        {"{\"fields\":[], \"type\":\"record\", \"name\":\"foo\", \"doc\":\"foo\", "
         "\"aliases\":[\"foo\",\"bar\"]}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[]}", -4824392279771201922},
        {"{\"fields\":[{\"type\":{\"type\":\"boolean\"}, \"name\":\"f1\"}], \"type\":\"record\", "
         "\"name\":\"foo\"}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[{\"name\":\"f1\",\"type\":"
         "\"boolean\"}]}",
         7843277075252814651},
        {"{ \"fields\":[{\"type\":\"boolean\", \"aliases\":[], \"name\":\"f1\", "
         "\"default\":true},\n"
         "            {\"order\":\"descending\",\"name\":\"f2\",\"doc\":\"Hello\","
         "\"type\":\"int\"}],\n"
         "  \"type\":\"record\", \"name\":\"foo\"\n}",
         "{\"name\":\"foo\",\"type\":\"record\",\"fields\":[{\"name\":\"f1\",\"type\":"
         "\"boolean\"},{\"name\":\"f2\",\"type\":\"int\"}]}",
         -4860222112080293046},
        {"{\"type\":\"enum\", \"name\":\"foo\", \"symbols\":[\"A1\"]}",
         "{\"name\":\"foo\",\"type\":\"enum\",\"symbols\":[\"A1\"]}", -6342190197741309591},
        {"{\"namespace\":\"x.y.z\", \"type\":\"enum\", \"name\":\"foo\", \"doc\":\"foo bar\", "
         "\"symbols\":[\"A1\", \"A2\"]}",
         "{\"name\":\"x.y.z.foo\",\"type\":\"enum\",\"symbols\":[\"A1\",\"A2\"]}",
         -4448647247586288245},
        {"{\"name\":\"foo\",\"type\":\"fixed\",\"size\":15}",
         "{\"name\":\"foo\",\"type\":\"fixed\",\"size\":15}", 1756455273707447556},
        {"{\"namespace\":\"x.y.z\", \"type\":\"fixed\", \"name\":\"foo\", \"doc\":\"foo bar\", "
         "\"size\":32}",
         "{\"name\":\"x.y.z.foo\",\"type\":\"fixed\",\"size\":32}", -3064184465700546786},
        {"{ \"items\":{\"type\":\"null\"}, \"type\":\"array\"}",
         "{\"type\":\"array\",\"items\":\"null\"}", -589620603366471059},
        {"{ \"values\":\"string\", \"type\":\"map\"}", "{\"type\":\"map\",\"values\":\"string\"}",
         -8732877298790414990},
        {"  {\"name\":\"PigValue\",\"type\":\"record\",\n"
         "   \"fields\":[{\"name\":\"value\", \"type\":[\"null\", \"int\", \"long\", "
         "\"PigValue\"]}]}",
         "{\"name\":\"PigValue\",\"type\":\"record\",\"fields\":[{\"name\":\"value\",\"type\":["
         "\"null\",\"int\",\"long\",\"PigValue\"]}]}",
         -1759257747318642341},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct avro_schema *s = parse(cases[i].input);
        if (strcmp(PCF(s), cases[i].canonical) != 0)
            test_fail(__FILE__, __LINE__, "case %zu: PCF %s, want %s", i, PCF(s),
                      cases[i].canonical);
        if (cases[i].fingerprint)
            ASSERT_UEQ(avro_fingerprint(s), (uint64_t)cases[i].fingerprint);
        /* The PCF of the PCF is itself. */
        struct avro_schema *again = parse(cases[i].canonical);
        ASSERT_STREQ(PCF(again), cases[i].canonical);
        ASSERT_UEQ(avro_fingerprint(again), avro_fingerprint(s));
        avro_schema_free(again);
        avro_schema_free(s);
    }
    /* The specification's example value: "int" is 0x7275d51a3f395c8f. */
    ASSERT_UEQ(avro_crc64("\"int\"", 5), 0x7275d51a3f395c8fULL);
    ASSERT_UEQ(avro_crc64("", 0), 0xc15d213aa4d7a795ULL);
    /* Logical types, defaults and properties are not part of it. */
    struct avro_schema *s = parse("{\"type\":\"record\",\"name\":\"r\",\"namespace\":\"n\","
                                  "\"x\":1,\"fields\":[{\"name\":\"t\",\"type\":{\"type\":\"long\","
                                  "\"logicalType\":\"timestamp-millis\"},\"default\":0}]}");
    ASSERT_STREQ(PCF(s),
                 "{\"name\":\"n.r\",\"type\":\"record\",\"fields\":[{\"name\":\"t\",\"type\":"
                 "\"long\"}]}");
    avro_schema_free(s);
}

/* ---- the registry's strings ---- */

struct canon_case {
    const char *input;
    const char *canonical;  /* avro_canonical() */
    const char *normalized; /* avro_normalized(), NULL: the same as canonical */
};

TEST(avro_canonical_string_is_avro_java_to_string)
{
    static const struct canon_case cases[] = {
        /* Confluent's AvroSchemaTest.testNormalization. */
        {"{\"type\":\"record\",\"name\":\"myrecord\",\"doc\":\"hi\\\"there\",\"fields\":"
         "[{\"type\":\"string\",\"name\":\"f1\",\"doc\":\"bye\\\"now\"}]}",
         "{\"type\":\"record\",\"name\":\"myrecord\",\"doc\":\"hi\\\"there\",\"fields\":"
         "[{\"name\":\"f1\",\"type\":\"string\",\"doc\":\"bye\\\"now\"}]}",
         NULL},
        /* Confluent's testNormalizationPreservesMetadataForPrimitiveTypes. */
        {"{\"connect.name\": \"some.scope.Envelope\",\"fields\": [{\"default\": null,"
         "\"name\": \"before\",\"type\": [\"null\",{\"connect.name\": \"some.scope.Value\","
         "\"fields\": [{\"name\": \"created_at\",\"type\": {\"connect.name\": "
         "\"io.debezium.time.Timestamp\",\"connect.version\": 1,\"type\": \"long\"}},"
         "{\"name\":\"normal_long\",\"type\":\"long\"}],\"name\": \"Value\",\"type\": "
         "\"record\"}]},{\"default\": null,\"name\": \"after\",\"type\": [\"null\",\"Value\"]}],"
         "\"name\": \"Envelope\",\"namespace\": \"some.scope\",\"type\": \"record\"}",
         "{\"type\":\"record\",\"name\":\"Envelope\",\"namespace\":\"some.scope\",\"fields\":["
         "{\"name\":\"before\",\"type\":[\"null\",{\"type\":\"record\",\"name\":\"Value\","
         "\"fields\":[{\"name\":\"created_at\",\"type\":{\"type\":\"long\",\"connect.name\":"
         "\"io.debezium.time.Timestamp\",\"connect.version\":1}},{\"name\":\"normal_long\","
         "\"type\":\"long\"}],\"connect.name\":\"some.scope.Value\"}],\"default\":null},"
         "{\"name\":\"after\",\"type\":[\"null\",\"Value\"],\"default\":null}],"
         "\"connect.name\":\"some.scope.Envelope\"}",
         NULL},
        /* Names shortened where the enclosing namespace allows; "" for the null one inside. */
        {"{\"type\":\"record\",\"name\":\"a.b.R\",\"fields\":["
         "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\"]}},"
         "{\"name\":\"e2\",\"type\":\"a.b.E\"},"
         "{\"name\":\"f\",\"type\":{\"type\":\"fixed\",\"name\":\"c.F\",\"size\":2}},"
         "{\"name\":\"f2\",\"type\":\"c.F\"},"
         "{\"name\":\"n\",\"type\":{\"type\":\"record\",\"name\":\"N\",\"namespace\":\"\","
         "\"fields\":[]}},{\"name\":\"n2\",\"type\":\"N\"},"
         "{\"name\":\"m\",\"type\":{\"type\":\"record\",\"name\":\"record\",\"fields\":[]}},"
         "{\"name\":\"m2\",\"type\":\"record\"}]}",
         "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"a.b\",\"fields\":["
         "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\"]}},"
         "{\"name\":\"e2\",\"type\":\"E\"},"
         "{\"name\":\"f\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"namespace\":\"c\","
         "\"size\":2}},{\"name\":\"f2\",\"type\":\"c.F\"},"
         "{\"name\":\"n\",\"type\":{\"type\":\"record\",\"name\":\"N\",\"namespace\":\"\","
         "\"fields\":[]}},{\"name\":\"n2\",\"type\":\"N\"},"
         "{\"name\":\"m\",\"type\":{\"type\":\"record\",\"name\":\"record\",\"fields\":[]}},"
         "{\"name\":\"m2\",\"type\":\"a.b.record\"}]}",
         NULL},
        /* Field attributes in Java's order; order spelled lower-case, ascending omitted. */
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"aliases\":[\"x\",\"w\",\"x\"],"
         "\"default\":1,\"order\":\"DESCENDING\",\"doc\":\"d\",\"type\":\"int\",\"name\":\"a\","
         "\"zz\":true,\"custom\":{\"k\":[1,2]}},{\"name\":\"b\",\"type\":\"int\","
         "\"order\":\"ascending\"}]}",
         "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\","
         "\"doc\":\"d\",\"default\":1,\"order\":\"descending\",\"aliases\":[\"x\",\"w\"],"
         "\"zz\":true,\"custom\":{\"k\":[1,2]}},{\"name\":\"b\",\"type\":\"int\"}]}",
         "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"int\","
         "\"doc\":\"d\",\"default\":1,\"order\":\"descending\",\"aliases\":[\"w\",\"x\"],"
         "\"custom\":{\"k\":[1,2]},\"zz\":true},{\"name\":\"b\",\"type\":\"int\"}]}"},
        /* Named types: attributes in Java's order, aliases after the properties. */
        {"{\"aliases\":[\"x.T\",\"S\",\"S\"],\"symbols\":[\"A\",\"B\"],\"doc\":\"\","
         "\"default\":\"A\",\"b\":2,\"a\":1,\"name\":\"E\",\"namespace\":\"n\",\"type\":\"enum\"}",
         "{\"type\":\"enum\",\"name\":\"E\",\"namespace\":\"n\",\"doc\":\"\",\"symbols\":[\"A\","
         "\"B\"],\"default\":\"A\",\"b\":2,\"a\":1,\"aliases\":[\"x.T\",\"S\"]}",
         "{\"type\":\"enum\",\"name\":\"E\",\"namespace\":\"n\",\"symbols\":[\"A\",\"B\"],"
         "\"default\":\"A\",\"a\":1,\"b\":2,\"aliases\":[\"S\",\"x.T\"]}"},
        {"{\"type\":\"fixed\",\"size\":16,\"name\":\"md5\",\"doc\":\"hash\",\"aliases\":[\"m\"]}",
         "{\"type\":\"fixed\",\"name\":\"md5\",\"doc\":\"hash\",\"size\":16,\"aliases\":"
         "[\"m\"]}",
         NULL},
        {"{\"type\":\"error\",\"name\":\"Oops\",\"fields\":[]}",
         "{\"type\":\"error\",\"name\":\"Oops\",\"fields\":[]}",
         "{\"type\":\"record\",\"name\":\"Oops\",\"fields\":[]}"},
        /* Properties of primitives, arrays and maps; reserved attributes are dropped. */
        {"{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}",
         "{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}", NULL},
        {"{\"type\":\"int\",\"doc\":\"dropped\",\"name\":\"dropped\",\"k\":\"v\"}",
         "{\"type\":\"int\",\"k\":\"v\"}", NULL},
        {"{\"values\":{\"type\":\"string\",\"avro.java.string\":\"String\"},\"type\":\"map\","
         "\"z\":null,\"y\":false}",
         "{\"type\":\"map\",\"values\":{\"type\":\"string\",\"avro.java.string\":\"String\"},"
         "\"z\":null,\"y\":false}",
         "{\"type\":\"map\",\"values\":{\"type\":\"string\",\"avro.java.string\":\"String\"},"
         "\"y\":false,\"z\":null}"},
        {"{\"items\":\"int\",\"type\":\"array\",\"default\":[]}",
         "{\"type\":\"array\",\"items\":\"int\",\"default\":[]}", NULL},
        /* A valid logical type's attributes come first under normalize; an invalid one's
         * are sorted with the rest. */
        {"{\"type\":\"bytes\",\"scale\":0,\"precision\":4,\"logicalType\":\"decimal\",\"a\":1}",
         "{\"type\":\"bytes\",\"scale\":0,\"precision\":4,\"logicalType\":\"decimal\",\"a\":1}",
         "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":4,\"a\":1,\"scale\":0}"},
        {"{\"type\":\"bytes\",\"scale\":2,\"precision\":4,\"logicalType\":\"decimal\"}",
         "{\"type\":\"bytes\",\"scale\":2,\"precision\":4,\"logicalType\":\"decimal\"}",
         "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":4,\"scale\":2}"},
        {"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"b\":1,\"a\":2}",
         "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"b\":1,\"a\":2}",
         "{\"type\":\"bytes\",\"a\":2,\"b\":1,\"logicalType\":\"decimal\"}"},
        /* Jackson's spelling of strings and numbers. */
        {"{\"type\":\"record\",\"name\":\"r\",\"doc\":\"tab\\there\\u0001\\u001f\\/\\u00e9\\u2028"
         "\",\"fields\":[]}",
         "{\"type\":\"record\",\"name\":\"r\",\"doc\":\"tab\\there\\u0001\\u001F/\xc3\xa9"
         "\xe2\x80\xa8\",\"fields\":[]}",
         NULL},
        {"{\"type\":\"int\",\"n\":[1.50,1e2,-0.0,0.001,1e7,1234567.0,1.5e-5,123456789012345678901,"
         "-12,1e400,5e-324,0.1,100]}",
         "{\"type\":\"int\",\"n\":[1.5,100.0,-0.0,0.001,1.0E7,1234567.0,1.5E-5,"
         "123456789012345678901,-12,\"Infinity\",4.9E-324,0.1,100]}",
         NULL},
        /* Defaults: as written, but the textual number of a float or double field; converted
         * to the field's type under normalize. */
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":["
         "{\"name\":\"d\",\"type\":\"double\",\"default\":1},"
         "{\"name\":\"f\",\"type\":\"float\",\"default\":0.1},"
         "{\"name\":\"s\",\"type\":\"double\",\"default\":\"2.50\"},"
         "{\"name\":\"l\",\"type\":\"long\",\"default\":12345678901},"
         "{\"name\":\"u\",\"type\":[\"double\",\"null\"],\"default\":3},"
         "{\"name\":\"b\",\"type\":\"bytes\",\"default\":\"\\u00ff\\u0100\"},"
         "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"float\"},\"default\":[1,2.5]},"
         "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"double\"},"
         "\"default\":{\"k\":7}}]}",
         "{\"type\":\"record\",\"name\":\"r\",\"fields\":["
         "{\"name\":\"d\",\"type\":\"double\",\"default\":1},"
         "{\"name\":\"f\",\"type\":\"float\",\"default\":0.1},"
         "{\"name\":\"s\",\"type\":\"double\",\"default\":2.5},"
         "{\"name\":\"l\",\"type\":\"long\",\"default\":12345678901},"
         "{\"name\":\"u\",\"type\":[\"double\",\"null\"],\"default\":3},"
         "{\"name\":\"b\",\"type\":\"bytes\",\"default\":\"\xc3\xbf\xc4\x80\"},"
         "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"float\"},\"default\":[1,2.5]},"
         "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"double\"},"
         "\"default\":{\"k\":7}}]}",
         "{\"type\":\"record\",\"name\":\"r\",\"fields\":["
         "{\"name\":\"d\",\"type\":\"double\",\"default\":1.0},"
         "{\"name\":\"f\",\"type\":\"float\",\"default\":0.1},"
         "{\"name\":\"s\",\"type\":\"double\",\"default\":2.5},"
         "{\"name\":\"l\",\"type\":\"long\",\"default\":12345678901},"
         "{\"name\":\"u\",\"type\":[\"double\",\"null\"],\"default\":3.0},"
         "{\"name\":\"b\",\"type\":\"bytes\",\"default\":\"\xc3\xbf?\"},"
         "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"float\"},"
         "\"default\":[1.0,2.5]},"
         "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"double\"},"
         "\"default\":{\"k\":7.0}}]}"},
        /* A named type is written in full where the walk first meets it. */
        {"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"E\"},"
         "{\"name\":\"b\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"X\"]}}]}",
         "{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":{\"type\":"
         "\"enum\",\"name\":\"E\",\"symbols\":[\"X\"]}},{\"name\":\"b\",\"type\":\"E\"}]}",
         NULL},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct avro_schema *s = parse(cases[i].input);
        const char *want_norm = cases[i].normalized ? cases[i].normalized : cases[i].canonical;
        if (strcmp(CANON(s), cases[i].canonical) != 0)
            test_fail(__FILE__, __LINE__, "case %zu canonical:\n    %s\n  want\n    %s", i,
                      CANON(s), cases[i].canonical);
        if (strcmp(NORM(s), want_norm) != 0)
            test_fail(__FILE__, __LINE__, "case %zu normalized:\n    %s\n  want\n    %s", i,
                      NORM(s), want_norm);
        /* Both forms parse back to themselves. */
        struct avro_schema *again = parse(cases[i].canonical);
        ASSERT_STREQ(CANON(again), cases[i].canonical);
        avro_schema_free(again);
        again = parse(want_norm);
        ASSERT_STREQ(NORM(again), want_norm);
        avro_schema_free(again);
        avro_schema_free(s);
    }
}

TEST(avro_same_schema_spelled_differently_has_one_lookup_string)
{
    static const char *const spellings[] = {
        "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"com.acme\",\"fields\":["
        "{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"email\",\"type\":[\"null\",\"string\"],"
        "\"default\":null}]}",
        "  {\n  \"namespace\" : \"com.acme\",\n  \"fields\" : [\n    { \"type\" : \"long\", "
        "\"name\" : \"id\" },\n    { \"default\" : null, \"name\" : \"email\", \"type\" : "
        "[ \"null\", { \"type\" : \"string\" } ] }\n  ],\n  \"name\" : \"User\",\n  \"type\" : "
        "\"record\"\n}\n",
        "{\"name\":\"com.acme.User\",\"type\":\"record\",\"fields\":[{\"name\":\"id\",\"type\":"
        "{\"type\":\"long\"}},{\"name\":\"email\",\"default\":null,\"type\":[\"null\","
        "\"string\"]}]}",
        "{\"type\":\"record\",\"name\":\"\\u0055ser\",\"namespace\":\"com.acme\",\"fields\":["
        "{\"name\":\"id\",\"type\":\"long\",\"order\":\"ascending\"},{\"name\":\"email\","
        "\"type\":[\"null\",\"string\"],\"default\":null}]}",
    };
    const char *want = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"com.acme\","
                       "\"fields\":[{\"name\":\"id\",\"type\":\"long\"},{\"name\":\"email\","
                       "\"type\":[\"null\",\"string\"],\"default\":null}]}";
    uint64_t fp = 0;
    for (size_t i = 0; i < ARRAY_LEN(spellings); i++) {
        struct avro_schema *s = parse(spellings[i]);
        ASSERT_STREQ(CANON(s), want);
        ASSERT_STREQ(NORM(s), want);
        if (i == 0)
            fp = avro_fingerprint(s);
        ASSERT_UEQ(avro_fingerprint(s), fp);
        avro_schema_free(s);
    }
    /* doc and properties change the lookup string but not the PCF; normalize sorts props. */
    struct avro_schema *a = parse("{\"type\":\"int\",\"b\":1,\"a\":2}");
    struct avro_schema *b = parse("{\"a\":2,\"type\":\"int\",\"b\":1}");
    char *ca = mem_strdup(CANON(a)), *na = mem_strdup(NORM(a));
    ASSERT_STREQ(ca, "{\"type\":\"int\",\"b\":1,\"a\":2}");
    ASSERT_STREQ(CANON(b), "{\"type\":\"int\",\"a\":2,\"b\":1}");
    ASSERT_STREQ(na, NORM(b));
    ASSERT_STREQ(na, "{\"type\":\"int\",\"a\":2,\"b\":1}");
    mem_free(ca);
    mem_free(na);
    ASSERT_STREQ(PCF(a), "\"int\"");
    ASSERT_UEQ(avro_fingerprint(a), avro_fingerprint(b));
    avro_schema_free(a);
    avro_schema_free(b);
}

TEST(avro_references_make_other_schemas_types_visible)
{
    struct avro_schema *addr = parse("{\"type\":\"record\",\"name\":\"com.x.Address\","
                                     "\"fields\":[{\"name\":\"street\",\"type\":\"string\"},"
                                     "{\"name\":\"kind\",\"type\":{\"type\":\"enum\",\"name\":"
                                     "\"Kind\",\"symbols\":[\"HOME\",\"WORK\"]}}]}");
    const char *person = "{\"type\":\"record\",\"name\":\"com.x.Person\",\"fields\":["
                         "{\"name\":\"home\",\"type\":\"Address\"},"
                         "{\"name\":\"work\",\"type\":[\"null\",\"com.x.Address\"],"
                         "\"default\":null},{\"name\":\"k\",\"type\":\"Kind\"}]}";
    refused_with(person, 0, "unknown type \"Address\"");
    const struct avro_schema *refs[] = {addr};
    struct avro_schema *p = parse_refs(person, refs, 1, 0);
    const struct avro_node *root = avro_schema_root(p);
    ASSERT(root->fields[0].type == avro_schema_root(addr));
    ASSERT_EQ(avro_schema_named_count(p), 1); /* only its own */
    /* The reference's root by name (Confluent passes references to toString); a type nested
     * in the reference is not a root, so it is written in full. */
    ASSERT_STREQ(CANON(p),
                 "{\"type\":\"record\",\"name\":\"Person\",\"namespace\":\"com.x\",\"fields\":["
                 "{\"name\":\"home\",\"type\":\"Address\"},{\"name\":\"work\",\"type\":[\"null\","
                 "\"Address\"],\"default\":null},{\"name\":\"k\",\"type\":{\"type\":\"enum\","
                 "\"name\":\"Kind\",\"symbols\":[\"HOME\",\"WORK\"]}}]}");
    /* The PCF is self-contained. */
    ASSERT_STREQ(PCF(p),
                 "{\"name\":\"com.x.Person\",\"type\":\"record\",\"fields\":[{\"name\":\"home\","
                 "\"type\":{\"name\":\"com.x.Address\",\"type\":\"record\",\"fields\":[{\"name\":"
                 "\"street\",\"type\":\"string\"},{\"name\":\"kind\",\"type\":{\"name\":"
                 "\"com.x.Kind\",\"type\":\"enum\",\"symbols\":[\"HOME\",\"WORK\"]}}]}},{\"name\":"
                 "\"work\",\"type\":[\"null\",\"com.x.Address\"]},{\"name\":\"k\",\"type\":"
                 "\"com.x.Kind\"}]}");
    /* A bare reference to the referenced type. */
    struct avro_schema *bare = parse_refs("\"com.x.Address\"", refs, 1, 0);
    ASSERT(avro_schema_root(bare) == avro_schema_root(addr));
    ASSERT_STREQ(CANON(bare), "\"com.x.Address\"");
    avro_schema_free(bare);
    /* Redefining a referenced name is refused. */
    struct avro_parse_opts o = {.refs = refs, .n_refs = 1};
    struct avro_schema *s;
    char err[256];
    const char *redef = "{\"type\":\"record\",\"name\":\"com.x.Address\",\"fields\":[]}";
    ASSERT_EQ(avro_schema_parse(redef, strlen(redef), &o, &s, err, sizeof(err)), -ERR_INVALID);
    ASSERT(strstr(err, "already defined by a referenced schema") != NULL);
    /* A reference of a reference, given transitively. */
    struct avro_schema *team =
        parse_refs("{\"type\":\"record\",\"name\":\"com.x.Team\",\"fields\":[{\"name\":\"lead\","
                   "\"type\":\"Person\"}]}",
                   (const struct avro_schema *[]){p}, 1, 0);
    struct avro_schema *team2 =
        parse_refs("{\"type\":\"record\",\"name\":\"com.x.Team\",\"fields\":[{\"name\":\"lead\","
                   "\"type\":\"Person\"},{\"name\":\"size\",\"type\":\"int\",\"default\":0}]}",
                   (const struct avro_schema *[]){p, addr}, 2, 0);
    ASSERT(avro_can_read(team2, team, "new", "old", NULL));
    ASSERT(avro_can_read(team, team2, "old", "new", NULL));
    avro_schema_free(team2);
    avro_schema_free(team);
    avro_schema_free(p);
    avro_schema_free(addr);
}

/* ---- compatibility ---- */

#define R(...) "{\"type\":\"record\",\"name\":\"r\",\"fields\":[" __VA_ARGS__ "]}"
#define F(n, t) "{\"name\":\"" n "\",\"type\":" t "}"
#define FD(n, t, d) "{\"name\":\"" n "\",\"type\":" t ",\"default\":" d "}"
#define FA(n, t, a) "{\"name\":\"" n "\",\"type\":" t ",\"aliases\":[\"" a "\"]}"
#define ENUM(n, ...) "{\"type\":\"enum\",\"name\":\"" n "\",\"symbols\":[" __VA_ARGS__ "]}"
#define ENUMD(n, d, ...)                                                                           \
    "{\"type\":\"enum\",\"name\":\"" n "\",\"default\":\"" d "\",\"symbols\":[" __VA_ARGS__ "]}"
#define FIXED(n, s) "{\"type\":\"fixed\",\"name\":\"" n "\",\"size\":" #s "}"
#define ARR(t) "{\"type\":\"array\",\"items\":" t "}"
#define MAP(t) "{\"type\":\"map\",\"values\":" t "}"
#define S(t) "\"" #t "\""
#define LIST(value_type, ...)                                                                      \
    "{\"type\":\"record\",\"name\":\"LongList\",\"fields\":[{\"name\":\"value\","                  \
    "\"type\":" value_type "},{\"name\":\"next\",\"type\":[\"null\",\"LongList\"]}" __VA_ARGS__    \
    "]}"

struct compat_case {
    const char *what;
    const char *v0;   /* an older version before `old`, or NULL */
    const char *old;  /* the latest registered version */
    const char *new_; /* the schema being registered */
    /* The verdict per level, 'y' compatible / 'n' not, in the order NONE, BACKWARD,
     * BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL, FULL_TRANSITIVE. */
    const char *levels;
};

static const struct compat_case compat_cases[] = {
    /* Primitives: equal types, and the promotions int->long->float->double, string<->bytes. */
    {"int to int", NULL, S(int), S(int), "yyyyyyy"},
    {"int to long", NULL, S(int), S(long), "yyynnnn"},
    {"long to int", NULL, S(long), S(int), "ynnyynn"},
    {"int to float", NULL, S(int), S(float), "yyynnnn"},
    {"int to double", NULL, S(int), S(double), "yyynnnn"},
    {"long to float", NULL, S(long), S(float), "yyynnnn"},
    {"long to double", NULL, S(long), S(double), "yyynnnn"},
    {"float to double", NULL, S(float), S(double), "yyynnnn"},
    {"double to float", NULL, S(double), S(float), "ynnyynn"},
    {"float to long", NULL, S(float), S(long), "ynnyynn"},
    {"string to bytes", NULL, S(string), S(bytes), "yyyyyyy"},
    {"bytes to string", NULL, S(bytes), S(string), "yyyyyyy"},
    {"int to string", NULL, S(int), S(string), "ynnnnnn"},
    {"string to int", NULL, S(string), S(int), "ynnnnnn"},
    {"boolean to int", NULL, S(boolean), S(int), "ynnnnnn"},
    {"null to boolean", NULL, S(null), S(boolean), "ynnnnnn"},
    {"bytes to long", NULL, S(bytes), S(long), "ynnnnnn"},
    {"string to record", NULL, S(string), R(F("a", S(int))), "ynnnnnn"},
    /* Records: fields by name, defaults for what the writer lacks, extra writer fields skipped. */
    {"same record", NULL, R(F("a", S(int))), R(F("a", S(int))), "yyyyyyy"},
    {"add a field with a default", NULL, R(F("a", S(int))),
     R(F("a", S(int)) "," FD("b", S(string), "\"x\"")), "yyyyyyy"},
    {"add a field without a default", NULL, R(F("a", S(int))),
     R(F("a", S(int)) "," F("b", S(string))), "ynnyynn"},
    {"remove a field with a default", NULL, R(F("a", S(int)) "," FD("b", S(string), "\"x\"")),
     R(F("a", S(int))), "yyyyyyy"},
    {"remove a field without a default", NULL, R(F("a", S(int)) "," F("b", S(string))),
     R(F("a", S(int))), "yyynnnn"},
    {"rename a field", NULL, R(F("a", S(int))), R(F("b", S(int))), "ynnnnnn"},
    {"rename a field with an alias", NULL, R(F("a", S(int))), R(FA("b", S(int), "a")), "yyynnnn"},
    {"rename a field with an alias and a default", NULL, R(F("a", S(int))),
     R("{\"name\":\"b\",\"type\":\"int\",\"aliases\":[\"a\"],\"default\":0}"), "yyynnnn"},
    {"rename with a default both ways", NULL, R(FD("a", S(int), "0")), R(FD("b", S(int), "0")),
     "yyyyyyy"},
    {"widen a field", NULL, R(F("a", S(int))), R(F("a", S(long))), "yyynnnn"},
    {"narrow a field", NULL, R(F("a", S(double))), R(F("a", S(float))), "ynnyynn"},
    {"change a field's type", NULL, R(F("a", S(string))), R(F("a", S(int))), "ynnnnnn"},
    {"reorder fields", NULL, R(F("a", S(int)) "," F("b", S(string))),
     R(F("b", S(string)) "," F("a", S(int))), "yyyyyyy"},
    {"rename the record", NULL, R(F("a", S(int))),
     "{\"type\":\"record\",\"name\":\"s\",\"fields\":[{\"name\":\"a\",\"type\":\"int\"}]}",
     "ynnnnnn"},
    {"rename the record with an alias", NULL, R(F("a", S(int))),
     "{\"type\":\"record\",\"name\":\"s\",\"aliases\":[\"r\"],\"fields\":[{\"name\":\"a\","
     "\"type\":\"int\"}]}",
     "yyynnnn"},
    {"change only the namespace (unqualified names match)", NULL,
     "{\"type\":\"record\",\"name\":\"r\",\"namespace\":\"a\",\"fields\":[]}",
     "{\"type\":\"record\",\"name\":\"r\",\"namespace\":\"b\",\"fields\":[]}", "yyyyyyy"},
    {"add an optional field with a null default", NULL, R(F("a", S(int))),
     R(F("a", S(int)) "," FD("b", "[\"null\",\"string\"]", "null")), "yyyyyyy"},
    {"add an optional field without a default", NULL, R(F("a", S(int))),
     R(F("a", S(int)) "," F("b", "[\"null\",\"string\"]")), "ynnyynn"},
    {"make a field optional", NULL, R(F("a", S(string))), R(F("a", "[\"null\",\"string\"]")),
     "yyynnnn"},
    {"make an optional field required", NULL, R(F("a", "[\"null\",\"string\"]")),
     R(F("a", S(string))), "ynnyynn"},
    {"a default where the writer has the field", NULL, R(F("a", S(int))), R(FD("a", S(int), "5")),
     "yyyyyyy"},
    {"change a default", NULL, R(FD("a", S(int), "1")), R(FD("a", S(int), "2")), "yyyyyyy"},
    {"change a doc", NULL, "{\"type\":\"record\",\"name\":\"r\",\"doc\":\"x\",\"fields\":[]}",
     "{\"type\":\"record\",\"name\":\"r\",\"doc\":\"y\",\"fields\":[]}", "yyyyyyy"},
    {"add a field alias only", NULL, R(F("a", S(int))), R(FA("a", S(int), "x")), "yyyyyyy"},
    {"nested record gains a defaulted field", NULL,
     R(F("n", "{\"type\":\"record\",\"name\":\"N\",\"fields\":[" F("x", S(int)) "]}")),
     R(F("n", "{\"type\":\"record\",\"name\":\"N\",\"fields\":[" F("x", S(int)) "," FD("y", S(long),
                                                                                       "0") "]}")),
     "yyyyyyy"},
    {"nested record field changes type", NULL,
     R(F("n", "{\"type\":\"record\",\"name\":\"N\",\"fields\":[" F("x", S(int)) "]}")),
     R(F("n", "{\"type\":\"record\",\"name\":\"N\",\"fields\":[" F("x", S(boolean)) "]}")),
     "ynnnnnn"},
    {"nested record renamed", NULL, R(F("n", "{\"type\":\"record\",\"name\":\"X\",\"fields\":[]}")),
     R(F("n", "{\"type\":\"record\",\"name\":\"Y\",\"fields\":[]}")), "ynnnnnn"},
    {"record to map", NULL, R(F("a", S(int))), MAP(S(int)), "ynnnnnn"},
    {"an enum field with an enum default the writer lacks", NULL, R(F("a", S(int))),
     R(F("a", S(int)) "," F("e", ENUMD("E", "A", "\"A\""))), "ynnyynn"},
    /* Enums: a writer symbol the reader lacks needs the reader's default. */
    {"same enum", NULL, ENUM("E", "\"A\",\"B\""), ENUM("E", "\"A\",\"B\""), "yyyyyyy"},
    {"add a symbol", NULL, ENUM("E", "\"A\",\"B\""), ENUM("E", "\"A\",\"B\",\"C\""), "yyynnnn"},
    {"remove a symbol", NULL, ENUM("E", "\"A\",\"B\",\"C\""), ENUM("E", "\"A\",\"B\""), "ynnyynn"},
    {"add a symbol, new enum has a default", NULL, ENUM("E", "\"A\",\"B\""),
     ENUMD("E", "A", "\"A\",\"B\",\"C\""), "yyynnnn"},
    {"add a symbol, both enums have a default", NULL, ENUMD("E", "A", "\"A\",\"B\""),
     ENUMD("E", "A", "\"A\",\"B\",\"C\""), "yyyyyyy"},
    {"remove a symbol, new enum has a default", NULL, ENUM("E", "\"A\",\"B\",\"C\""),
     ENUMD("E", "A", "\"A\",\"B\""), "yyyyyyy"},
    {"reorder symbols", NULL, ENUM("E", "\"A\",\"B\""), ENUM("E", "\"B\",\"A\""), "yyyyyyy"},
    {"rename the enum", NULL, ENUM("E", "\"A\""), ENUM("F", "\"A\""), "ynnnnnn"},
    {"rename the enum with an alias", NULL, ENUM("E", "\"A\""),
     "{\"type\":\"enum\",\"name\":\"F\",\"aliases\":[\"E\"],\"symbols\":[\"A\"]}", "yyynnnn"},
    {"enum to string", NULL, ENUM("E", "\"A\""), S(string), "ynnnnnn"},
    /* Fixed: same size and name. */
    {"same fixed", NULL, FIXED("F", 16), FIXED("F", 16), "yyyyyyy"},
    {"fixed size change", NULL, FIXED("F", 16), FIXED("F", 8), "ynnnnnn"},
    {"fixed renamed", NULL, FIXED("F", 16), FIXED("G", 16), "ynnnnnn"},
    {"fixed renamed with an alias", NULL, FIXED("F", 16),
     "{\"type\":\"fixed\",\"name\":\"G\",\"aliases\":[\"F\"],\"size\":16}", "yyynnnn"},
    {"fixed to bytes", NULL, FIXED("F", 16), S(bytes), "ynnnnnn"},
    /* Arrays and maps: element-wise. */
    {"array of int to array of long", NULL, ARR(S(int)), ARR(S(long)), "yyynnnn"},
    {"array of string to array of int", NULL, ARR(S(string)), ARR(S(int)), "ynnnnnn"},
    {"map of int to map of long", NULL, MAP(S(int)), MAP(S(long)), "yyynnnn"},
    {"map of long to map of int", NULL, MAP(S(long)), MAP(S(int)), "ynnyynn"},
    {"array to map", NULL, ARR(S(int)), MAP(S(int)), "ynnnnnn"},
    {"map values become optional", NULL, MAP(S(string)), MAP("[\"null\",\"string\"]"), "yyynnnn"},
    {"array items lose a field without a default", NULL, ARR(R(F("a", S(int)) "," F("b", S(int)))),
     ARR(R(F("a", S(int)))), "yyynnnn"},
    {"map of records gains a defaulted field", NULL, MAP(R(F("a", S(int)))),
     MAP(R(F("a", S(int)) "," FD("b", S(int), "0"))), "yyyyyyy"},
    /* Unions, on either side. */
    {"union gains a branch", NULL, "[\"null\",\"string\"]", "[\"null\",\"string\",\"int\"]",
     "yyynnnn"},
    {"union loses a branch", NULL, "[\"null\",\"string\",\"int\"]", "[\"null\",\"string\"]",
     "ynnyynn"},
    {"union reordered", NULL, "[\"null\",\"string\"]", "[\"string\",\"null\"]", "yyyyyyy"},
    {"type becomes a union with it", NULL, S(string), "[\"null\",\"string\"]", "yyynnnn"},
    {"union becomes one of its types", NULL, "[\"null\",\"string\"]", S(string), "ynnyynn"},
    {"union branches promoted", NULL, "[\"null\",\"int\"]", "[\"null\",\"long\"]", "yyynnnn"},
    {"type becomes a union with a promotion of it", NULL, S(int), "[\"null\",\"long\"]", "yyynnnn"},
    {"single-branch union and its type", NULL, "[\"int\"]", S(int), "yyyyyyy"},
    {"empty unions", NULL, "[]", "[]", "yyyyyyy"},
    {"empty union gains a branch", NULL, "[]", "[\"int\"]", "yyynnnn"},
    {"union of records, one renamed", NULL,
     "[{\"type\":\"record\",\"name\":\"A\",\"fields\":[]},"
     "{\"type\":\"record\",\"name\":\"B\",\"fields\":[]}]",
     "[{\"type\":\"record\",\"name\":\"A\",\"fields\":[]},"
     "{\"type\":\"record\",\"name\":\"C\",\"fields\":[]}]",
     "ynnnnnn"},
    {"union of records, one gains a defaulted field", NULL,
     "[{\"type\":\"record\",\"name\":\"A\",\"fields\":[]},"
     "{\"type\":\"record\",\"name\":\"B\",\"fields\":[" F("x", S(int)) "]}]",
     "[{\"type\":\"record\",\"name\":\"A\",\"fields\":[]},"
     "{\"type\":\"record\",\"name\":\"B\",\"fields\":[" F("x", S(int)) "," FD("y", S(int),
                                                                              "1") "]}]",
     "yyyyyyy"},
    {"union of int and string to string", NULL, "[\"int\",\"string\"]", S(string), "ynnyynn"},
    {"union in a field gains null", NULL, R(F("a", "[\"int\",\"string\"]")),
     R(FD("a", "[\"null\",\"int\",\"string\"]", "null")), "yyynnnn"},
    /* Recursive types terminate. */
    {"linked list unchanged", NULL, LIST(S(long)), LIST(S(long)), "yyyyyyy"},
    {"linked list gains a defaulted field", NULL, LIST(S(long)),
     LIST(S(long), "," FD("extra", S(int), "0")), "yyyyyyy"},
    {"linked list value widened", NULL, LIST(S(int)), LIST(S(long)), "yyynnnn"},
    {"linked list gains a field without a default", NULL, LIST(S(long)),
     LIST(S(long), "," F("extra", S(int))), "ynnyynn"},
    {"mutually recursive types", NULL,
     "{\"type\":\"record\",\"name\":\"Tree\",\"fields\":[{\"name\":\"kids\",\"type\":"
     "{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"Node\",\"fields\":["
     "{\"name\":\"t\",\"type\":[\"null\",\"Tree\"]}]}}}]}",
     "{\"type\":\"record\",\"name\":\"Tree\",\"fields\":[{\"name\":\"kids\",\"type\":"
     "{\"type\":\"array\",\"items\":{\"type\":\"record\",\"name\":\"Node\",\"fields\":["
     "{\"name\":\"t\",\"type\":[\"null\",\"Tree\"]},{\"name\":\"w\",\"type\":\"int\","
     "\"default\":1}]}}}]}",
     "yyyyyyy"},
    /* Logical types do not take part (as Avro Java and Confluent judge). */
    {"decimal precision and scale change", NULL,
     "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":4,\"scale\":2}",
     "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":6,\"scale\":3}", "yyyyyyy"},
    {"timestamp-millis to plain long", NULL,
     "{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}", S(long), "yyyyyyy"},
    {"date to timestamp-millis (int to long)", NULL, "{\"type\":\"int\",\"logicalType\":\"date\"}",
     "{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}", "yyynnnn"},
    {"uuid to string", NULL, "{\"type\":\"string\",\"logicalType\":\"uuid\"}", S(string),
     "yyyyyyy"},
    /* Three versions: where the transitive levels see further than the latest. */
    {"required field added back after an optional step", R(F("a", S(int))),
     R(F("a", S(int)) "," FD("b", S(int), "0")), R(F("a", S(int)) "," F("b", S(int))), "yynyyyn"},
    {"int, then long, then long", R(F("a", S(int))), R(F("a", S(long))), R(F("a", S(long))),
     "yyyynyn"},
    {"symbol dropped with a default, then the default dropped", ENUM("E", "\"A\",\"B\",\"C\""),
     ENUMD("E", "A", "\"A\",\"B\""), ENUM("E", "\"A\",\"B\""), "yynyyyn"},
    {"string, then optional, then optional", S(string), "[\"null\",\"string\"]",
     "[\"null\",\"string\"]", "yyyynyn"},
    {"field gains a default, then is removed", R(F("a", S(int)) "," F("c", S(int))),
     R(F("a", S(int)) "," FD("c", S(int), "0")), R(F("a", S(int))), "yyyynyn"},
    {"int, long, double", S(int), S(long), S(double), "yyynnnn"},
    {"float, double, float", S(float), S(double), S(float), "ynnyynn"},
    {"all three the same", R(F("a", S(int))), R(F("a", S(int))), R(F("a", S(int))), "yyyyyyy"},
    {"v0 incompatible, latest fine", S(string), S(int), S(long), "yynnnnn"},
};

struct case_ctx {
    int calls;
};

static bool counting_can_read(const void *reader, const void *writer, const char *rr,
                              const char *wr, struct compat_reasons *reasons, void *data)
{
    ((struct case_ctx *)data)->calls++;
    return avro_can_read(reader, writer, rr, wr, reasons);
}

TEST(avro_compatibility_table_at_every_level)
{
    int checked = 0;
    for (size_t i = 0; i < ARRAY_LEN(compat_cases); i++) {
        const struct compat_case *cc = &compat_cases[i];
        ASSERT_EQ(strlen(cc->levels), COMPAT_LEVEL_COUNT);
        struct avro_schema *v0 = cc->v0 ? parse(cc->v0) : NULL;
        struct avro_schema *old = parse(cc->old), *nw = parse(cc->new_);
        const void *earlier[2];
        size_t n = 0;
        if (v0)
            earlier[n++] = v0;
        earlier[n++] = old;
        /* Each schema reads itself. */
        ASSERT(avro_can_read(old, old, "new", "old", NULL));
        ASSERT(avro_can_read(nw, nw, "new", "old", NULL));
        for (int lv = 0; lv < COMPAT_LEVEL_COUNT; lv++) {
            struct compat_reasons reasons;
            compat_reasons_init(&reasons);
            struct case_ctx ctx = {0};
            size_t failed_at = SIZE_MAX;
            bool got = compat_check((enum compat_level)lv, nw, earlier, n, counting_can_read, &ctx,
                                    &reasons, &failed_at);
            bool want = cc->levels[lv] == 'y';
            if (got != want)
                test_fail(__FILE__, __LINE__, "case %zu '%s' at %s: %s, want %s%s%s", i, cc->what,
                          compat_level_name((enum compat_level)lv),
                          got ? "compatible" : "incompatible", want ? "compatible" : "incompatible",
                          reasons.n ? "; " : "", reasons.n ? reasons.items[0] : "");
            /* An incompatible verdict always says why, and where. */
            ASSERT(got || reasons.n > 0);
            ASSERT(got || failed_at < n);
            ASSERT(!got || reasons.n == 0);
            if (lv == COMPAT_NONE)
                ASSERT_EQ(ctx.calls, 0);
            compat_reasons_free(&reasons);
            checked++;
        }
        avro_schema_free(nw);
        avro_schema_free(old);
        avro_schema_free(v0);
    }
    ASSERT_CMP(ARRAY_LEN(compat_cases), >=, 80);
    ASSERT_EQ(checked, (int)ARRAY_LEN(compat_cases) * COMPAT_LEVEL_COUNT);
}

static void reason_is(const char *reader, const char *writer, const char *want)
{
    struct avro_schema *r = parse(reader), *w = parse(writer);
    struct compat_reasons reasons;
    compat_reasons_init(&reasons);
    ASSERT(!avro_can_read(r, w, "new", "old", &reasons));
    bool found = false;
    for (size_t i = 0; i < reasons.n && !found; i++)
        found = strcmp(reasons.items[i], want) == 0;
    if (!found)
        test_fail(__FILE__, __LINE__, "reasons %s%s do not include\n    %s",
                  reasons.n ? reasons.items[0] : "(none)", reasons.n > 1 ? " ..." : "", want);
    ASSERT(!avro_can_read(r, w, "new", "old", NULL)); /* the same verdict without reasons */
    compat_reasons_free(&reasons);
    avro_schema_free(r);
    avro_schema_free(w);
}

TEST(avro_incompatibilities_are_worded_as_confluent_verbose)
{
    reason_is(R(F("a", S(int)) "," F("b", S(string))), R(F("a", S(int))),
              "{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'b' at "
              "path '/fields/1' in the new schema has no default value and is missing in the old "
              "schema', additionalInfo:'b'}");
    reason_is(R(F("a", S(int))), R(F("a", S(string))),
              "{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a "
              "field in the new schema does not match with the old schema', "
              "additionalInfo:'reader type: INT not compatible with writer type: STRING'}");
    reason_is(ENUM("E", "\"A\""), ENUM("E", "\"A\",\"C\",\"B\""),
              "{errorType:'MISSING_ENUM_SYMBOLS', description:'The new schema is missing enum "
              "symbols '[B, C]' at path '/symbols' in the old schema', additionalInfo:'[B, C]'}");
    reason_is("[\"null\",\"string\"]", "[\"null\",\"string\",\"int\"]",
              "{errorType:'MISSING_UNION_BRANCH', description:'The new schema is missing a type "
              "inside a union field at path '/2' in the old schema', additionalInfo:'reader "
              "union lacking writer type: INT'}");
    reason_is(R(F("a", "[\"null\",\"int\"]")), R(F("a", S(string))),
              "{errorType:'MISSING_UNION_BRANCH', description:'The new schema is missing a type "
              "inside a union field at path '/fields/0/type' in the old schema', "
              "additionalInfo:'reader union lacking writer type: STRING'}");
    reason_is(FIXED("F", 8), FIXED("F", 16),
              "{errorType:'FIXED_SIZE_MISMATCH', description:'The size of FIXED type field at "
              "path '/size' in the new schema does not match with the old schema', "
              "additionalInfo:'expected: 16, found: 8'}");
    reason_is("{\"type\":\"record\",\"name\":\"s\",\"fields\":[]}", R(),
              "{errorType:'NAME_MISMATCH', description:'The name of the schema has changed "
              "(path '/name')', additionalInfo:'expected: r'}");
    reason_is(R(F("a", ARR(S(int)))), R(F("a", ARR(S(string)))),
              "{errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type/items') of "
              "a field in the new schema does not match with the old schema', "
              "additionalInfo:'reader type: INT not compatible with writer type: STRING'}");
    /* A writer union: each branch judged at its index. */
    reason_is(S(string), "[\"null\",\"string\"]",
              "{errorType:'TYPE_MISMATCH', description:'The type (path '/0') of a field in the "
              "new schema does not match with the old schema', additionalInfo:'reader type: "
              "STRING not compatible with writer type: NULL'}");
    /* Several problems are all reported. */
    struct avro_schema *r = parse(R(F("a", S(int)) "," F("b", S(int)) "," F("c", S(int))));
    struct avro_schema *w = parse(R(F("a", S(string))));
    struct compat_reasons reasons;
    compat_reasons_init(&reasons);
    ASSERT(!avro_can_read(r, w, "old", "new", &reasons));
    ASSERT_EQ(reasons.n, 3);
    ASSERT(strstr(reasons.items[0], "in the old schema does not match with the new schema"));
    ASSERT(strstr(reasons.items[1], "'/fields/1'"));
    ASSERT(strstr(reasons.items[2], "'/fields/2'"));
    compat_reasons_free(&reasons);
    avro_schema_free(r);
    avro_schema_free(w);
    /* A reader field whose aliases match two writer fields: refused as Avro Java refuses. */
    r = parse(R("{\"name\":\"a\",\"type\":\"int\",\"aliases\":[\"b\"]}"));
    w = parse(R(F("a", S(int)) "," F("b", S(int))));
    compat_reasons_init(&reasons);
    ASSERT(!avro_can_read(r, w, "new", "old", &reasons));
    ASSERT(strstr(reasons.items[0], "matches multiple fields"));
    compat_reasons_free(&reasons);
    avro_schema_free(r);
    avro_schema_free(w);
}

TEST(avro_compatibility_of_shared_and_recursive_graphs_is_bounded)
{
    /* A record whose 30 fields all refer to the previous level: 2^30 paths, one judgement per
     * pair of nodes. */
    struct strbuf a, b;
    strbuf_init(&a);
    strbuf_init(&b);
    strbuf_puts(&a, "[{\"type\":\"record\",\"name\":\"L0\",\"fields\":[]}");
    strbuf_puts(&b, "[{\"type\":\"record\",\"name\":\"L0\",\"fields\":[{\"name\":\"z\","
                    "\"type\":\"int\",\"default\":0}]}");
    for (int i = 1; i <= 30; i++) {
        for (int k = 0; k < 2; k++) {
            struct strbuf *s = k ? &b : &a;
            strbuf_printf(s, ",{\"type\":\"record\",\"name\":\"L%d\",\"fields\":[", i);
            for (int f = 0; f < 30; f++)
                strbuf_printf(s, "%s{\"name\":\"f%d\",\"type\":\"L%d\"}", f ? "," : "", f, i - 1);
            strbuf_puts(s, "]}");
        }
    }
    strbuf_putc(&a, ']');
    strbuf_putc(&b, ']');
    struct avro_schema *x = parse(strbuf_str(&a)), *y = parse(strbuf_str(&b));
    ASSERT(avro_can_read(y, x, "new", "old", NULL));
    ASSERT(avro_can_read(x, y, "old", "new", NULL)); /* the extra field is skipped */
    avro_schema_free(x);
    avro_schema_free(y);
    strbuf_destroy(&a);
    strbuf_destroy(&b);
}

/* ---- compat_level ---- */

static bool by_table(const void *reader, const void *writer, const char *rr, const char *wr,
                     struct compat_reasons *reasons, void *data)
{
    /* Schemas are ints; reader reads writer when reader >= writer, and data counts calls. */
    int r = *(const int *)reader, w = *(const int *)writer;
    (*(int *)data)++;
    if (r >= w)
        return true;
    compat_reasons_add(reasons, "%s %d cannot read %s %d", rr, r, wr, w);
    return false;
}

TEST(compat_level_names_and_directions)
{
    enum compat_level l;
    ASSERT_EQ(compat_level_parse("BACKWARD", 8, &l), 0);
    ASSERT_EQ(l, COMPAT_BACKWARD);
    ASSERT_EQ(compat_level_parse("full_transitive", 15, &l), 0);
    ASSERT_EQ(l, COMPAT_FULL_TRANSITIVE);
    ASSERT_EQ(compat_level_parse("Forward", 7, &l), 0);
    ASSERT_EQ(l, COMPAT_FORWARD);
    ASSERT_EQ(compat_level_parse("FULLX", 5, &l), -ERR_INVALID);
    ASSERT_EQ(compat_level_parse("FUL", 3, &l), -ERR_INVALID);
    ASSERT_EQ(compat_level_parse("", 0, &l), -ERR_INVALID);
    ASSERT_EQ(compat_level_parse("NONE\0", 5, &l), -ERR_INVALID);
    for (int i = 0; i < COMPAT_LEVEL_COUNT; i++) {
        const char *name = compat_level_name((enum compat_level)i);
        ASSERT_EQ(compat_level_parse(name, strlen(name), &l), 0);
        ASSERT_EQ(l, i);
    }
    ASSERT_STREQ(compat_level_name(COMPAT_FORWARD_TRANSITIVE), "FORWARD_TRANSITIVE");
    ASSERT(compat_level_backward(COMPAT_FULL) && compat_level_forward(COMPAT_FULL));
    ASSERT(!compat_level_backward(COMPAT_FORWARD) && compat_level_forward(COMPAT_FORWARD));
    ASSERT(compat_level_transitive(COMPAT_BACKWARD_TRANSITIVE));
    ASSERT(!compat_level_transitive(COMPAT_FULL));
    ASSERT(!compat_level_backward(COMPAT_NONE) && !compat_level_forward(COMPAT_NONE));
}

TEST(compat_check_latest_or_every_version_newest_first)
{
    int v[] = {5, 3, 4}; /* versions 1..3 */
    const void *earlier[] = {&v[0], &v[1], &v[2]};
    int nw = 4, calls = 0;
    struct compat_reasons r;
    compat_reasons_init(&r);
    size_t failed = SIZE_MAX;
    /* BACKWARD: 4 reads the latest (4): fine, the older 5 is not looked at. */
    ASSERT(compat_check(COMPAT_BACKWARD, &nw, earlier, 3, by_table, &calls, &r, &failed));
    ASSERT_EQ(calls, 1);
    /* BACKWARD_TRANSITIVE: 4, 3 fine, then 5 fails (index 0). */
    calls = 0;
    ASSERT(
        !compat_check(COMPAT_BACKWARD_TRANSITIVE, &nw, earlier, 3, by_table, &calls, &r, &failed));
    ASSERT_EQ(calls, 3);
    ASSERT_EQ(failed, 0);
    ASSERT_EQ(r.n, 1);
    ASSERT_STREQ(r.items[0], "new 4 cannot read old 5");
    compat_reasons_free(&r);
    /* FORWARD_TRANSITIVE: old 4 reads new 4, 3 cannot: stops there (index 1). */
    calls = 0;
    ASSERT(
        !compat_check(COMPAT_FORWARD_TRANSITIVE, &nw, earlier, 3, by_table, &calls, &r, &failed));
    ASSERT_EQ(calls, 2);
    ASSERT_EQ(failed, 1);
    ASSERT_STREQ(r.items[0], "old 3 cannot read new 4");
    compat_reasons_free(&r);
    /* FULL against a latest of 6: both directions run, old-reads-new reasons first. */
    int w6 = 6;
    const void *one[] = {&w6};
    nw = 7;
    calls = 0;
    ASSERT(!compat_check(COMPAT_FULL, &nw, one, 1, by_table, &calls, &r, NULL));
    ASSERT_EQ(calls, 2);
    ASSERT_EQ(r.n, 1);
    ASSERT_STREQ(r.items[0], "old 6 cannot read new 7");
    compat_reasons_free(&r);
    nw = 1; /* both fail: two reasons */
    int w2 = 2;
    one[0] = &w2;
    ASSERT(!compat_check(COMPAT_FULL_TRANSITIVE, &nw, one, 1, by_table, &calls, NULL, NULL));
    w2 = 1;
    ASSERT(compat_check(COMPAT_FULL, &nw, one, 1, by_table, &calls, &r, NULL));
    ASSERT_EQ(r.n, 0);
    /* NONE and a first version: nothing to check. */
    calls = 0;
    ASSERT(compat_check(COMPAT_NONE, &nw, earlier, 3, by_table, &calls, &r, NULL));
    ASSERT(compat_check(COMPAT_FULL_TRANSITIVE, &nw, NULL, 0, by_table, &calls, &r, NULL));
    ASSERT_EQ(calls, 0);
    compat_reasons_add(NULL, "dropped %d", 1); /* a NULL list keeps nothing, and is fine */
    compat_reasons_free(&r);
}

/* T_k: a union of two records whose one field is T_(k-1) (T_0 is int): judging a default
 * against it tries both branches at every level, 2^k ways. */
static void nested_unions(struct strbuf *sb, int k)
{
    if (k == 0) {
        strbuf_puts(sb, "\"int\"");
        return;
    }
    strbuf_printf(sb,
                  "[{\"type\":\"record\",\"name\":\"R%d\",\"fields\":[{\"name\":\"x\","
                  "\"type\":",
                  k);
    nested_unions(sb, k - 1);
    strbuf_printf(sb,
                  "}]},{\"type\":\"record\",\"name\":\"S%d\",\"fields\":[{\"name\":\"x\","
                  "\"type\":",
                  k);
    if (k == 1)
        strbuf_puts(sb, "\"int\"");
    else
        strbuf_printf(sb, "[\"R%d\",\"S%d\"]", k - 1, k - 1);
    strbuf_puts(sb, "}]}]");
}

TEST(avro_big_and_pathological_schemas_stay_fast)
{
    /* 50,000 fields, 50,000 symbols: lookups are hashed, not pairwise. */
    struct strbuf sb;
    strbuf_init(&sb);
    strbuf_puts(&sb, "{\"type\":\"record\",\"name\":\"Wide\",\"fields\":[");
    for (int i = 0; i < 50000; i++)
        strbuf_printf(&sb, "%s{\"name\":\"f%d\",\"type\":\"int\",\"aliases\":[\"a%d\"]}",
                      i ? "," : "", i, i);
    strbuf_puts(&sb, ",{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[");
    for (int i = 0; i < 50000; i++)
        strbuf_printf(&sb, "%s\"S%d\"", i ? "," : "", i);
    strbuf_puts(&sb, "]},\"default\":\"S49999\"}]}");
    struct avro_schema *wide = parse(strbuf_str(&sb));
    ASSERT(avro_can_read(wide, wide, "new", "old", NULL));
    ASSERT_EQ(avro_enum_symbol(avro_schema_root(wide)->fields[50000].type, "S123", 4), 123);
    ASSERT(avro_record_field(avro_schema_root(wide), "f49999", 6) ==
           &avro_schema_root(wide)->fields[49999]);
    ASSERT(avro_record_field(avro_schema_root(wide), "a1", 2) == NULL); /* names, not aliases */
    struct strbuf c;
    strbuf_init(&c);
    avro_canonical(wide, &c);
    ASSERT_CMP(c.len, >, 1000000);
    strbuf_destroy(&c);
    avro_schema_free(wide);
    strbuf_destroy(&sb);

    /* A default against 30 levels of two-record unions: 2^30 ways, bounded, refused. */
    strbuf_init(&sb);
    strbuf_puts(&sb, "{\"type\":\"record\",\"name\":\"Top\",\"fields\":[{\"name\":\"f\",\"type\":");
    nested_unions(&sb, 30);
    strbuf_puts(&sb, ",\"default\":");
    for (int i = 0; i < 30; i++)
        strbuf_puts(&sb, "{\"x\":");
    strbuf_puts(&sb, "\"s\"");
    for (int i = 0; i < 30; i++)
        strbuf_putc(&sb, '}');
    strbuf_puts(&sb, "}]}");
    refused_with(strbuf_str(&sb), 0, "the defaults are too complex to check");
    /* Stored leniently, it still writes (the normalized default falls back to as written). */
    struct avro_schema *s = parse_refs(strbuf_str(&sb), NULL, 0, AVRO_PARSE_LENIENT);
    ASSERT(strstr(NORM(s), "\"default\":{\"x\":{\"x\":") != NULL);
    ASSERT(avro_can_read(s, s, "new", "old", NULL));
    avro_schema_free(s);
    strbuf_destroy(&sb);
}
