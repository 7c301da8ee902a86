/* The strict JSON parser (base/json_parse.h): the tree it builds, and what RFC 8259 refuses,
 * each refusal with its offset and reason. */
#include <math.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/json_parse.h"
#include "base/mem.h"
#include "test.h"

static int parse_opts(struct arena *a, const char *text, size_t len,
                      const struct json_parse_opts *o, struct json_doc *doc,
                      struct json_parse_error *err)
{
    return json_parse(text, len, o, a, doc, err);
}

static struct json_value *ok(struct arena *a, const char *text)
{
    struct json_doc doc;
    struct json_parse_error err;
    int rc = parse_opts(a, text, strlen(text), NULL, &doc, &err);
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "'%s' refused at %zu: %s", text, err.offset, err.reason);
    return doc.root;
}

TEST(json_parse_builds_the_tree_in_document_order)
{
    struct arena a;
    arena_init(&a, 0);
    struct json_value *v =
        ok(&a, " {\"z\": 1, \"a\": [true, false, null, \"s\"], \"m\": {\"k\": -2.5e1}} \n");
    ASSERT_EQ(v->type, JSON_OBJECT);
    ASSERT_EQ(v->n, 3);
    ASSERT_EQ(v->offset, 1);
    ASSERT_STREQ(v->members[0].key, "z"); /* order as written, not sorted */
    ASSERT_STREQ(v->members[1].key, "a");
    ASSERT_STREQ(v->members[2].key, "m");
    ASSERT(!v->dup_keys);
    const struct json_value *arr = json_object_get(v, "a");
    ASSERT_EQ(arr->type, JSON_ARRAY);
    ASSERT_EQ(arr->n, 4);
    ASSERT_EQ(arr->items[0]->type, JSON_TRUE);
    ASSERT_EQ(arr->items[1]->type, JSON_FALSE);
    ASSERT_EQ(arr->items[2]->type, JSON_NULL);
    ASSERT(json_is_str(arr->items[3], "s"));
    const struct json_value *k = json_object_get(json_object_get(v, "m"), "k");
    ASSERT_EQ(k->type, JSON_NUMBER);
    ASSERT(!k->is_integer);
    ASSERT_STREQ(k->str, "-2.5e1");
    ASSERT(k->f64 == -25.0);
    ASSERT(json_object_get(v, "missing") == NULL);
    ASSERT(json_object_get(arr, "a") == NULL); /* not an object */
    ASSERT_STREQ(json_type_name(k->type), "number");
    arena_destroy(&a);
}

TEST(json_parse_scalars_at_top_level_and_empty_containers)
{
    struct arena a;
    arena_init(&a, 0);
    ASSERT(json_is_str(ok(&a, "\"string\""), "string"));
    ASSERT_EQ(ok(&a, "null")->type, JSON_NULL);
    ASSERT_EQ(ok(&a, " true ")->type, JSON_TRUE);
    struct json_value *n = ok(&a, "0");
    ASSERT(n->is_integer && n->i64_ok && n->i64 == 0);
    ASSERT_EQ(ok(&a, "[]")->n, 0);
    ASSERT_EQ(ok(&a, "{}")->n, 0);
    struct json_value *nested = ok(&a, "[[],{},[[]]]");
    ASSERT_EQ(nested->n, 3);
    ASSERT_EQ(nested->items[2]->items[0]->type, JSON_ARRAY);
    arena_destroy(&a);
}

TEST(json_parse_numbers_keep_text_and_views)
{
    struct arena a;
    arena_init(&a, 0);
    struct json_value *v = ok(&a, "-9223372036854775808");
    ASSERT(v->is_integer && v->i64_ok);
    ASSERT(v->i64 == INT64_MIN);
    v = ok(&a, "9223372036854775807");
    ASSERT(v->i64_ok && v->i64 == INT64_MAX);
    v = ok(&a, "9223372036854775808"); /* one past: an integer, but not an int64 */
    ASSERT(v->is_integer && !v->i64_ok);
    ASSERT_STREQ(v->str, "9223372036854775808");
    v = ok(&a, "123456789012345678901234567890");
    ASSERT(v->is_integer && !v->i64_ok);
    ASSERT(v->f64 > 1.2e29 && v->f64 < 1.3e29);
    v = ok(&a, "1e400"); /* valid JSON beyond double's range */
    ASSERT(!v->is_integer && isinf(v->f64));
    v = ok(&a, "-1E-400");
    ASSERT(v->f64 == 0.0);
    v = ok(&a, "1.0");
    ASSERT(!v->is_integer && !v->i64_ok && v->f64 == 1.0);
    v = ok(&a, "-0");
    ASSERT(v->is_integer && v->i64 == 0);
    ASSERT_STREQ(v->str, "-0");
    v = ok(&a, "12e+2");
    ASSERT(!v->is_integer && v->f64 == 1200.0);
    arena_destroy(&a);
}

TEST(json_parse_strings_decode_escapes_and_pairs)
{
    struct arena a;
    arena_init(&a, 0);
    struct json_value *v = ok(&a, "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"");
    ASSERT_STREQ(v->str, "a\"b\\c/d\b\f\n\r\t");
    v = ok(&a, "\"\\u00e9\\u20AC\\ud83d\\ude00\""); /* é € 😀 */
    ASSERT_STREQ(v->str, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    v = ok(&a, "\"caf\xc3\xa9 \xf0\x9f\x98\x80\""); /* raw UTF-8 passes through */
    ASSERT_STREQ(v->str, "caf\xc3\xa9 \xf0\x9f\x98\x80");
    v = ok(&a, "\"x\\u0000y\""); /* an escaped NUL is data: len tells */
    ASSERT_EQ(v->len, 3);
    ASSERT_MEMEQ(v->str, "x\0y", 3);
    v = ok(&a, "{\"k\\u0041\": 1}");
    ASSERT_STREQ(v->members[0].key, "kA");
    ASSERT_EQ(v->members[0].key_offset, 1);
    arena_destroy(&a);
}

TEST(json_parse_reports_duplicate_keys_or_refuses_them)
{
    struct arena a;
    arena_init(&a, 0);
    const char *text = "{\"a\": 1, \"b\": {\"x\": 1, \"x\": 2}, \"a\": 3}";
    struct json_doc doc;
    struct json_parse_error err;
    ASSERT_EQ(parse_opts(&a, text, strlen(text), NULL, &doc, &err), 0);
    ASSERT(doc.root->dup_keys);
    ASSERT(doc.root->members[1].value->dup_keys);
    ASSERT_EQ(doc.root->n, 3);                         /* both members kept */
    ASSERT_EQ(doc.first_dup_offset, 23);               /* the second "x", before the second "a" */
    ASSERT_EQ(json_object_get(doc.root, "a")->i64, 1); /* lookups see the first */
    struct json_parse_opts strict = {.flags = JSON_PARSE_REJECT_DUP_KEYS};
    ASSERT_EQ(parse_opts(&a, text, strlen(text), &strict, &doc, &err), -ERR_INVALID);
    ASSERT_EQ(err.offset, 23);
    ASSERT(strstr(err.reason, "duplicate key") != NULL);

    /* A big object takes the sorting path; the duplicate is found either way. */
    char big[4096];
    size_t n = 0;
    n += (size_t)snprintf(big + n, sizeof(big) - n, "{");
    for (int i = 0; i < 200; i++)
        n += (size_t)snprintf(big + n, sizeof(big) - n, "%s\"k%d\":%d", i ? "," : "", i, i);
    size_t dup_at = n + 1;
    n += (size_t)snprintf(big + n, sizeof(big) - n, ",\"k7\":0}");
    ASSERT_EQ(parse_opts(&a, big, n, NULL, &doc, &err), 0);
    ASSERT(doc.root->dup_keys);
    ASSERT_EQ(doc.first_dup_offset, dup_at);
    big[dup_at + 2] = 'x'; /* "kx": no duplicate left */
    ASSERT_EQ(parse_opts(&a, big, n, NULL, &doc, &err), 0);
    ASSERT(!doc.root->dup_keys);
    ASSERT_EQ(doc.first_dup_offset, SIZE_MAX);
    arena_destroy(&a);
}

struct bad {
    const char *text;
    size_t offset;
    const char *reason;
};

TEST(json_parse_refuses_what_rfc8259_refuses)
{
    static const struct bad cases[] = {
        {"", 0, "empty document"},
        {"  \n\t ", 5, "empty document"},
        {"[1,2,]", 5, "trailing comma in array"},
        {"{\"a\":1,}", 7, "trailing comma in object"},
        {"[1 2]", 3, "',' or ']' expected"},
        {"{\"a\" 1}", 5, "':' expected"},
        {"{a:1}", 1, "a string key expected"},
        {"{\"a\":1 \"b\":2}", 7, "',' or '}' expected"},
        {"[,1]", 1, "unexpected ','"},
        {"01", 0, "leading zero"},
        {"-01", 1, "leading zero"},
        {"+1", 0, "unexpected '+'"},
        {"1.", 2, "a digit expected after the decimal point"},
        {".5", 0, "unexpected '.'"},
        {"1e", 2, "a digit expected in the exponent"},
        {"1e+", 3, "a digit expected in the exponent"},
        {"-", 1, "a digit expected in number"},
        {"-a", 1, "a digit expected in number"},
        {"NaN", 0, "unexpected 'N'"},
        {"Infinity", 0, "unexpected 'I'"},
        {"tru", 0, "unexpected 't'"},
        {"nul", 0, "unexpected 'n'"},
        {"'a'", 0, "unexpected '''"},
        {"\"abc", 0, "unterminated string"},
        {"\"a\\", 0, "unterminated string"},
        {"\"a\tb\"", 2, "unescaped control character 0x09"},
        {"\"a\nb\"", 2, "unescaped control character 0x0a"},
        {"\"\\x\"", 1, "bad escape \\'x'"},
        {"\"\\u12\"", 1, "bad \\u escape"},
        {"\"\\u12G4\"", 1, "bad \\u escape"},
        {"\"\\ud800\"", 1, "lone high surrogate"},
        {"\"\\ud800x\"", 1, "lone high surrogate"},
        {"\"\\ud800\\u0041\"", 1, "lone high surrogate"},
        {"\"\\udc00\"", 1, "lone low surrogate"},
        {"\"\\ude00\\ud83d\"", 1, "lone low surrogate"}, /* a reversed pair */
        {"\"\xc3\"", 1, "ill-formed UTF-8"},
        {"\"\xc0\xaf\"", 1, "ill-formed UTF-8"},         /* overlong '/' */
        {"\"\xed\xa0\x80\"", 1, "ill-formed UTF-8"},     /* an encoded surrogate */
        {"\"\xf4\x90\x80\x80\"", 1, "ill-formed UTF-8"}, /* beyond U+10FFFF */
        {"\"\x80\"", 1, "ill-formed UTF-8"},             /* a stray continuation byte */
        {"\xef\xbb\xbf{}", 0, "unexpected byte 0xef"},   /* a byte order mark */
        {"{} x", 3, "trailing characters after the value: 'x'"},
        {"1 2", 2, "trailing characters"},
        {"[1]]", 3, "trailing characters"},
        {"{}{}", 2, "trailing characters"},
        {"[1", 2, "',' or ']' expected in array, found end of input"},
        {"{\"a\":", 5, "a value expected, found end of input"},
        {"/* c */ 1", 0, "unexpected '/'"},
        {"[1,\n2,\n]", 7, "trailing comma"},
    };
    struct arena a;
    arena_init(&a, 0);
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct json_doc doc = {.root = NULL};
        struct json_parse_error err;
        const char *t = cases[i].text;
        int rc = parse_opts(&a, t, strlen(t), NULL, &doc, &err);
        if (rc != -ERR_INVALID || err.offset != cases[i].offset ||
            !strstr(err.reason, cases[i].reason))
            test_fail(__FILE__, __LINE__, "case %zu '%s': rc %d at %zu '%s', want %zu '%s'", i, t,
                      rc, err.offset, err.reason, cases[i].offset, cases[i].reason);
        ASSERT(doc.root == NULL);
    }
    /* A NUL byte inside the given length is outside the grammar too. */
    struct json_doc doc;
    struct json_parse_error err;
    ASSERT_EQ(parse_opts(&a, "[1]\0", 4, NULL, &doc, &err), -ERR_INVALID);
    ASSERT_EQ(err.offset, 3);
    ASSERT_EQ(parse_opts(&a, "\"a\0b\"", 5, NULL, &doc, &err), -ERR_INVALID);
    ASSERT(strstr(err.reason, "control character 0x00") != NULL);
    /* Only len bytes are read: the text need not be NUL-terminated. */
    ASSERT_EQ(parse_opts(&a, "[1]xyz", 3, NULL, &doc, &err), 0);
    arena_destroy(&a);
}

static char *nested(size_t depth, char open, char close)
{
    char *s = mem_alloc(2 * depth + 1);
    memset(s, open, depth);
    memset(s + depth, close, depth);
    s[2 * depth] = '\0';
    return s;
}

TEST(json_parse_limits_depth_without_recursion)
{
    struct arena a;
    arena_init(&a, 0);
    struct json_doc doc;
    struct json_parse_error err;
    char *s = nested(JSON_PARSE_DEPTH_DEFAULT, '[', ']');
    ASSERT_EQ(parse_opts(&a, s, strlen(s), NULL, &doc, &err), 0);
    mem_free(s);
    s = nested(JSON_PARSE_DEPTH_DEFAULT + 1, '[', ']');
    ASSERT_EQ(parse_opts(&a, s, strlen(s), NULL, &doc, &err), -ERR_LIMIT);
    ASSERT_EQ(err.offset, JSON_PARSE_DEPTH_DEFAULT);
    ASSERT(strstr(err.reason, "nesting deeper than 64") != NULL);
    mem_free(s);

    struct json_parse_opts o = {.depth_max = 3};
    ASSERT_EQ(parse_opts(&a, "{\"a\":[{}]}", 10, &o, &doc, &err), 0);
    ASSERT_EQ(parse_opts(&a, "{\"a\":[{\"b\":[]}]}", 16, &o, &doc, &err), -ERR_LIMIT);
    ASSERT_EQ(err.offset, 11);

    /* 100,000 levels, allowed by the caller: the parser's own stack is on the heap. */
    size_t deep = 100000;
    s = nested(deep, '[', ']');
    o.depth_max = (int)deep;
    ASSERT_EQ(parse_opts(&a, s, 2 * deep, &o, &doc, &err), 0);
    const struct json_value *v = doc.root;
    size_t d = 1;
    while (v->n) {
        v = v->items[0];
        d++;
    }
    ASSERT_EQ(d, deep);
    /* Unterminated at that depth: refused, the open frames freed (ASan checks the leak). */
    ASSERT_EQ(parse_opts(&a, s, deep + 10, &o, &doc, &err), -ERR_INVALID);
    mem_free(s);
    arena_destroy(&a);
}

TEST(json_value_equal_compares_values_not_spelling)
{
    struct arena a;
    arena_init(&a, 0);
    ASSERT(json_value_equal(ok(&a, "{\"a\":[1,2.0,\"x\"],\"b\":null}"),
                            ok(&a, "{\"b\":null,\"a\":[1,2,\"x\"]}")));
    ASSERT(json_value_equal(ok(&a, "1"), ok(&a, "1.0")));
    ASSERT(json_value_equal(ok(&a, "100"), ok(&a, "1e2")));
    ASSERT(json_value_equal(ok(&a, "99999999999999999999"), ok(&a, "99999999999999999999")));
    ASSERT(!json_value_equal(ok(&a, "99999999999999999999"), ok(&a, "99999999999999999998")));
    ASSERT(!json_value_equal(ok(&a, "[1,2]"), ok(&a, "[2,1]")));
    ASSERT(!json_value_equal(ok(&a, "{\"a\":1}"), ok(&a, "{\"a\":1,\"b\":1}")));
    ASSERT(!json_value_equal(ok(&a, "{\"a\":1,\"b\":1}"), ok(&a, "{\"a\":1}")));
    ASSERT(!json_value_equal(ok(&a, "\"1\""), ok(&a, "1")));
    ASSERT(!json_value_equal(ok(&a, "true"), ok(&a, "false")));
    ASSERT(!json_value_equal(ok(&a, "\"a\\u0000\""), ok(&a, "\"a\"")));
    arena_destroy(&a);
}
