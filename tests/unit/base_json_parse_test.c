/* The strict JSON reader (base/json_parse.h): what it accepts, how it decodes, what it refuses
 * and where, and its limits. */
#include "base/check.h"
#include "base/errors.h"
#include "base/json.h"
#include "base/json_parse.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "base/time.h"
#include "test.h"

static int parse(struct json_doc *d, const char *s)
{
    char err[128];
    return json_parse(d, s, strlen(s), NULL, err, sizeof(err));
}

TEST(json_parse_reads_every_kind_of_value)
{
    struct json_doc d;
    const char *s =
        " {\"name\": \"alice\", \"n\": 4096, \"neg\": -12, \"f\": 1.5e2, \"t\": true,"
        " \"no\": false, \"z\": null, \"arr\": [1, [], {}, \"x\"], \"big\": 9223372036854775807,"
        " \"huge\": 9223372036854775808, \"e\": 1e400}\r\n\t";
    ASSERT_EQ(parse(&d, s), 0);
    const struct json_value *r = d.root;
    ASSERT_EQ(r->type, JSON_OBJECT);
    ASSERT_EQ(r->n, 11);
    ASSERT_STREQ(json_get_str(r, "name", NULL), "alice");
    ASSERT_EQ(json_get_int(r, "n", -1), 4096);
    ASSERT_EQ(json_get_int(r, "neg", 0), -12);
    const struct json_value *f = json_get(r, "f", JSON_NUMBER);
    ASSERT(f && !f->is_int && f->number == 150.0);
    ASSERT_EQ(json_get_int(r, "f", 7), 7); /* not written as an integer */
    ASSERT(json_get(r, "t", JSON_BOOL)->boolean);
    ASSERT(!json_get(r, "no", JSON_BOOL)->boolean);
    ASSERT(json_get(r, "z", JSON_NULL) != NULL);
    ASSERT(json_get(r, "z", JSON_STRING) == NULL); /* mistyped: NULL */
    ASSERT(json_member(r, "absent") == NULL);
    const struct json_value *a = json_get(r, "arr", JSON_ARRAY);
    ASSERT_EQ(a->n, 4);
    ASSERT_EQ(json_int_or(a->child, 0), 1);
    ASSERT_EQ(a->child->next->type, JSON_ARRAY);
    ASSERT_EQ(a->child->next->next->type, JSON_OBJECT);
    ASSERT_STREQ(a->child->next->next->next->str, "x");
    ASSERT(a->child->next->next->next->next == NULL);
    ASSERT_EQ(json_get_int(r, "big", 0), INT64_MAX);
    const struct json_value *h = json_get(r, "huge", JSON_NUMBER);
    ASSERT(h && !h->is_int); /* beyond int64: a double only */
    ASSERT(json_get(r, "e", JSON_NUMBER) != NULL);
    /* NULL-tolerant look-ups */
    ASSERT(json_member(NULL, "x") == NULL);
    ASSERT_EQ(json_get_int(NULL, "x", 3), 3);
    ASSERT_STREQ(json_get_str(a, "x", "d"), "d");
    json_doc_free(&d);
    /* scalars at the top */
    ASSERT_EQ(parse(&d, "\"s\""), 0);
    ASSERT_EQ(d.root->type, JSON_STRING);
    json_doc_free(&d);
    ASSERT_EQ(parse(&d, "-0"), 0);
    ASSERT(d.root->is_int && d.root->int_value == 0);
    json_doc_free(&d);
}

TEST(json_parse_decodes_strings)
{
    struct json_doc d;
    ASSERT_EQ(parse(&d, "\"q\\\"b\\\\s\\/n\\nr\\rt\\tb\\bf\\f\""), 0);
    ASSERT_STREQ(d.root->str, "q\"b\\s/n\nr\rt\tb\bf\f");
    json_doc_free(&d);
    /* \u escapes to UTF-8: 1, 2, 3 bytes, and a surrogate pair to 4 */
    ASSERT_EQ(parse(&d, "\"\\u0041\\u00e9\\u20AC\\ud83d\\ude00\""), 0);
    ASSERT_EQ(d.root->str_len, 1 + 2 + 3 + 4);
    ASSERT_MEMEQ(d.root->str, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10);
    json_doc_free(&d);
    /* raw UTF-8 passes through; \u0000 is a NUL inside the string */
    ASSERT_EQ(parse(&d, "\"j\xc3\xbcrgen\\u0000x\""), 0);
    ASSERT_EQ(d.root->str_len, 9);
    ASSERT_MEMEQ(d.root->str, "j\xc3\xbcrgen\0x", 9);
    json_doc_free(&d);
    /* keys are decoded the same way */
    ASSERT_EQ(parse(&d, "{\"\\u006eame\": 1}"), 0);
    ASSERT_EQ(json_get_int(d.root, "name", 0), 1);
    json_doc_free(&d);
    /* what base/json.h writes, this reads back */
    struct strbuf s;
    strbuf_init(&s);
    static const char odd[] = "a\"b\\c\x01\x1f/\xc3\xa9";
    json_escape(&s, odd, sizeof(odd) - 1);
    ASSERT_EQ(json_parse(&d, s.p, s.len, NULL, NULL, 0), 0);
    ASSERT_EQ(d.root->str_len, sizeof(odd) - 1);
    ASSERT_MEMEQ(d.root->str, odd, sizeof(odd) - 1);
    json_doc_free(&d);
    strbuf_destroy(&s);
}

struct bad {
    const char *in;
    const char *err; /* the start of the message */
};

TEST(json_parse_refuses_what_is_not_strict_json)
{
    static const struct bad cases[] = {
        {"", "at byte 0: a value is missing"},
        {"   ", "at byte 3: a value is missing"},
        {"{", "at byte 1: expected a member name"},
        {"{\"a\" 1}", "at byte 5: expected ':'"},
        {"{\"a\":1,}", "at byte 7: expected a member name"},
        {"[1,]", "at byte 3: not a value"},
        {"[1 2]", "at byte 3: expected ',' or ']'"},
        {"{\"a\":1 \"b\":2}", "at byte 7: expected ',' or '}'"},
        {"{\"a\":1,\"b\":2,\"a\":3}", "at byte 0: an object gives a member name twice"},
        {"[1] [2]", "at byte 4: text after the value"},
        {"{} x", "at byte 3: text after the value"},
        {"tru", "at byte 0: not a value"},
        {"True", "at byte 0: not a value"},
        {"nul", "at byte 0: not a value"},
        {"'a'", "at byte 0: not a value"},
        {"01", "at byte 1: text after the value"},
        {"+1", "at byte 0: not a value"},
        {"-", "at byte 0: not a value"},
        {"1.", "at byte 0: a digit must follow the decimal point"},
        {".5", "at byte 0: not a value"},
        {"1e", "at byte 0: a digit must follow the exponent"},
        {"NaN", "at byte 0: not a value"},
        {"0x10", "at byte 1: text after the value"},
        {"\"abc", "at byte 4: an unterminated string"},
        {"\"a\\", "at byte 2: an unterminated string"},
        {"\"a\nb\"", "at byte 2: a control character in a string"},
        {"\"a\tb\"", "at byte 2: a control character in a string"},
        {"\"\\x41\"", "at byte 2: an unknown escape"},
        {"\"\\u12\"", "at byte 3: \\u needs four hex digits"},
        {"\"\\u12g4\"", "at byte 3: \\u needs four hex digits"},
        {"\"\\ud800\"", "at byte 7: a high surrogate without a low one"},
        {"\"\\ud800\\u0041\"", "at byte 7: a high surrogate without a low one"},
        {"\"\\udc00\"", "at byte 7: a low surrogate without a high one"},
        {"\"\xff\"", "at byte 1: ill-formed UTF-8 in a string"},
        {"\"\xc3\"", "at byte 1: ill-formed UTF-8 in a string"},
        {"\"\xed\xa0\x80\"", "at byte 1: ill-formed UTF-8 in a string"}, /* a raw surrogate */
        {"\"\xc0\xaf\"", "at byte 1: ill-formed UTF-8 in a string"},     /* overlong */
        {"[\"a\",", "at byte 5: a value is missing"},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct json_doc d;
        char err[128] = "";
        int rc = json_parse(&d, cases[i].in, strlen(cases[i].in), NULL, err, sizeof(err));
        if (rc != -ERR_INVALID || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
            test_fail(__FILE__, __LINE__, "case %zu (%s): rc %d, '%s', want '%s'", i, cases[i].in,
                      rc, err, cases[i].err);
        ASSERT(d.root == NULL);
        json_doc_free(&d);
    }
    /* a NUL byte is no whitespace, and the parser reads only len bytes */
    struct json_doc d;
    ASSERT_EQ(json_parse(&d, "1\0", 2, NULL, NULL, 0), -ERR_INVALID);
    json_doc_free(&d);
    ASSERT_EQ(json_parse(&d, "[1]]", 3, NULL, NULL, 0), 0);
    json_doc_free(&d);
    ASSERT_EQ(json_parse(&d, "\"ab\"", 3, NULL, NULL, 0), -ERR_INVALID);
    json_doc_free(&d);
}

TEST(json_parse_enforces_its_limits)
{
    struct json_doc d;
    char err[128];
    struct json_limits lim = {.depth_max = 3, .values_max = 5};
    ASSERT_EQ(json_parse(&d, "[[[1]]]", 7, &lim, err, sizeof(err)), 0);
    json_doc_free(&d);
    ASSERT_EQ(json_parse(&d, "[[[[1]]]]", 9, &lim, err, sizeof(err)), -ERR_TOO_LARGE);
    ASSERT_STREQ(err, "at byte 3: nested too deep");
    json_doc_free(&d);
    ASSERT_EQ(json_parse(&d, "[1,2,3,4]", 9, &lim, err, sizeof(err)), 0); /* 5 values */
    json_doc_free(&d);
    ASSERT_EQ(json_parse(&d, "[1,2,3,4,5]", 11, &lim, err, sizeof(err)), -ERR_TOO_LARGE);
    ASSERT_STREQ(err, "at byte 9: too many values");
    json_doc_free(&d);
    /* the default depth, whatever the text: a deep one is refused, not a stack overflow */
    size_t n = 100000;
    char *deep = mem_alloc(n);
    memset(deep, '[', n);
    ASSERT_EQ(json_parse(&d, deep, n, NULL, err, sizeof(err)), -ERR_TOO_LARGE);
    ASSERT_STREQ(err, "at byte 32: nested too deep");
    json_doc_free(&d);
    lim = (struct json_limits){.depth_max = 1 << 20, .values_max = 1 << 20};
    ASSERT_EQ(json_parse(&d, deep, n, &lim, err, sizeof(err)), -ERR_TOO_LARGE);
    json_doc_free(&d);
    mem_free(deep);
    /* numbers: 64 characters at most */
    char num[80];
    memset(num, '1', 64);
    ASSERT_EQ(json_parse(&d, num, 64, NULL, err, sizeof(err)), 0);
    ASSERT(!d.root->is_int);
    json_doc_free(&d);
    memset(num, '1', 65);
    ASSERT_EQ(json_parse(&d, num, 65, NULL, err, sizeof(err)), -ERR_TOO_LARGE);
    json_doc_free(&d);
}

TEST(json_parse_costs_little_for_hostile_objects)
{
    /* many members (their names checked for repeats by sorting) and many strings (each
     * allocated at its own length): a 1 MB text parses quickly and within a few MB */
    struct strbuf s;
    strbuf_init(&s);
    strbuf_putc(&s, '{');
    for (int i = 0; i < 60000; i++)
        strbuf_printf(&s, "%s\"k%d\":\"v\"", i ? "," : "", i);
    strbuf_putc(&s, '}');
    struct json_doc d;
    struct json_limits lim = {.values_max = 1 << 20};
    int64_t t0 = time_mono_ms();
    ASSERT_EQ(json_parse(&d, s.p, s.len, &lim, NULL, 0), 0);
    ASSERT_CMP(time_mono_ms() - t0, <, 2000);
    ASSERT_EQ(d.root->n, 60000);
    ASSERT_CMP(d.arena.allocated, <, 16 * s.len);
    json_doc_free(&d);
    strbuf_destroy(&s);
}

TEST(json_parse_keeps_offsets_and_number_literals)
{
    /* What the schema registry needs to write numbers back as Jackson does and to say where
     * a schema is wrong: each value's offset, a number's literal, whether it is integral. */
    struct json_doc d;
    const char *s = " {\"a\": [1.50, -0, 1e2, 123456789012345678901234567890], \"b\": \"x\"}";
    ASSERT_EQ(parse(&d, s), 0);
    ASSERT_EQ(d.root->offset, 1);
    const struct json_value *a = json_member(d.root, "a");
    ASSERT_EQ(a->offset, 7);
    const struct json_value *n = a->child;
    ASSERT_EQ(n->offset, 8);
    ASSERT_STREQ(n->str, "1.50");
    ASSERT_EQ(n->str_len, 4);
    ASSERT(!n->integral && !n->is_int && n->number == 1.5);
    n = n->next;
    ASSERT_STREQ(n->str, "-0");
    ASSERT(n->integral && n->is_int && n->int_value == 0);
    n = n->next;
    ASSERT_STREQ(n->str, "1e2");
    ASSERT(!n->integral && n->number == 100.0);
    n = n->next;
    ASSERT_STREQ(n->str, "123456789012345678901234567890");
    ASSERT(n->integral && !n->is_int); /* integral, beyond int64 */
    ASSERT_EQ(n->offset, 23);
    const struct json_value *b = json_member(d.root, "b");
    ASSERT_EQ(b->offset, 61);
    ASSERT_STREQ(b->str, "x");
    ASSERT(!b->integral);
    json_doc_free(&d);
}
