/* The Protobuf schema language of the registry (registry/protobuf.h): compatibility by level,
 * refusals of malformed .proto text, canonical and normalized forms, message indexes,
 * imports through schema references, FileDescriptorProto input.
 *
 * Expected values were worked out from Confluent's rules (its protobuf diff package, read in
 * the schema-registry sources) and protoc's, case by case; the base64 descriptor was made with
 * Debian's python3-protobuf (descriptor_pb2, shown next to it). The levels are derived from
 * the pairwise proto_can_read() by a local helper, as the registry's level logic does:
 * BACKWARD = the new schema reads the latest, FORWARD = the latest reads the new one, FULL =
 * both, the transitive ones against every earlier version. */
#include <stdio.h>

#include "base/errors.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/protobuf.h"
#include "test.h"

/* ---- helpers ---- */

struct ref {
    const char *name;
    const char *text;
    const char *id;
};

static int refs_lookup(const char *name, struct proto_source *src, void *data)
{
    for (const struct ref *r = data; r && r->name; r++) {
        if (strcmp(r->name, name) == 0) {
            src->text = r->text;
            src->len = strlen(r->text);
            src->id = r->id;
            return 0;
        }
    }
    return -ERR_NOT_FOUND;
}

static struct proto_schema *parse_refs(const char *text, const struct ref *refs)
{
    struct proto_schema *s = NULL;
    char err[PROTO_ERR_MAX];
    int rc = proto_parse(text, strlen(text), refs_lookup, (void *)refs, &s, err, sizeof(err));
    if (rc != 0)
        test_fail(__FILE__, __LINE__, "parse failed: %s\n--- schema:\n%s", err, text);
    return s;
}

static struct proto_schema *parse(const char *text)
{
    return parse_refs(text, NULL);
}

/* The refusal's message for text ("" if it parsed). */
static void parse_error(const char *text, size_t len, char *err, size_t cap)
{
    struct proto_schema *s = NULL;
    int rc = proto_parse(text, len, NULL, NULL, &s, err, cap);
    if (rc == 0) {
        proto_free(s);
        err[0] = '\0';
        return;
    }
    ASSERT_EQ(rc, -ERR_INVALID);
    ASSERT(s == NULL);
    ASSERT(err[0] != '\0');
}

static char *canonical_of(const struct proto_schema *s, bool normalize)
{
    struct strbuf b;
    strbuf_init(&b);
    proto_canonical(s, normalize, &b);
    char *r = mem_strdup(strbuf_str(&b));
    strbuf_destroy(&b);
    return r;
}

static char *canonical(const char *text, bool normalize)
{
    struct proto_schema *s = parse(text);
    char *r = canonical_of(s, normalize);
    proto_free(s);
    return r;
}

/* ---- compatibility by level ---- */

enum level { NONE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL,
             FULL_TRANSITIVE, LEVELS };
static const char *const level_names[LEVELS] = {"NONE", "BACKWARD", "BACKWARD_TRANSITIVE",
                                                "FORWARD", "FORWARD_TRANSITIVE", "FULL",
                                                "FULL_TRANSITIVE"};

static bool reads(const struct proto_schema *reader, const struct proto_schema *writer)
{
    struct proto_reasons r = {0};
    bool ok = proto_can_read(reader, writer, "new", "old", &r);
    /* Every refusal explains itself, and only a refusal has reasons. */
    ASSERT_EQ(ok, r.n == 0);
    for (size_t i = 0; i < r.n; i++)
        ASSERT(strncmp(r.v[i], "{errorType:\"", 12) == 0);
    proto_reasons_free(&r);
    return ok;
}

/* The registry's level rule over a history (oldest first) and the schema being registered. */
static bool level_allows(enum level lv, const struct proto_schema *next,
                         struct proto_schema *const *hist, size_t n)
{
    const struct proto_schema *latest = hist[n - 1];
    bool ok = true;
    switch (lv) {
    case NONE: return true;
    case BACKWARD: return reads(next, latest);
    case FORWARD: return reads(latest, next);
    case FULL: return reads(next, latest) && reads(latest, next);
    case BACKWARD_TRANSITIVE:
        for (size_t i = 0; i < n; i++)
            ok = ok && reads(next, hist[i]);
        return ok;
    case FORWARD_TRANSITIVE:
        for (size_t i = 0; i < n; i++)
            ok = ok && reads(hist[i], next);
        return ok;
    default:
        for (size_t i = 0; i < n; i++)
            ok = ok && reads(next, hist[i]) && reads(hist[i], next);
        return ok;
    }
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

#define P3 "syntax = \"proto3\";\n"
#define P2 "syntax = \"proto2\";\n"
#define V(t) {t, NULL}
#define ALL "yyyyyyy"
#define BACK_ONLY "yyynnnn" /* the new schema reads old data; old readers may not read new */
#define FWD_ONLY "ynnyynn"  /* old readers read new data; the new schema may not read old */
#define NEITHER "ynnnnnn"

static const struct ref common_v1[] = {
    {"common.proto",
     P3 "package acme.common;\nmessage Money { string currency = 1; int64 units = 2; }\n",
     "common.proto/1"},
    {NULL, NULL, NULL},
};
static const struct ref common_v2_ok[] = {
    {"common.proto",
     P3 "package acme.common;\n"
        "message Money { string currency = 1; int64 units = 2; int32 nanos = 3; }\n",
     "common.proto/2"},
    {NULL, NULL, NULL},
};
static const struct ref common_v2_bad[] = {
    {"common.proto",
     P3 "package acme.common;\nmessage Money { string currency = 1; double units = 2; }\n",
     "common.proto/2"},
    {NULL, NULL, NULL},
};
/* The same subject and version as common_v1, but other text: not compared (Confluent trusts
 * that a subject's version never changes). */
static const struct ref common_v1_same_id[] = {
    {"common.proto",
     P3 "package acme.common;\nmessage Money { string currency = 1; double units = 2; }\n",
     "common.proto/1"},
    {NULL, NULL, NULL},
};

#define ORDER_WITH_MONEY                                                                           \
    P3 "package acme.shop;\nimport \"common.proto\";\n"                                           \
       "message Order { string id = 1; acme.common.Money total = 2; }\n"

static const struct compat_case compat_cases[] = {
    {"identical", {V(P3 "message A { string s = 1; }")}, V(P3 "message A { string s = 1; }"),
     ALL},
    {"whitespace and comments only",
     {V(P3 "message A { string s = 1; int32 n = 2; }")},
     V(P3 "// an order\nmessage A {\n  string s = 1; /* the id */\n\n  int32 n = 2;\n}\n"), ALL},
    {"field added", {V(P3 "message A { string s = 1; }")},
     V(P3 "message A { string s = 1; int32 n = 2; }"), ALL},
    {"field removed", {V(P3 "message A { string s = 1; int32 n = 2; }")},
     V(P3 "message A { string s = 1; }"), ALL},
    {"field renamed", {V(P3 "message A { string s = 1; }")}, V(P3 "message A { string t = 1; }"),
     ALL},
    {"field renumbered (removed and added)", {V(P3 "message A { string s = 1; }")},
     V(P3 "message A { string s = 2; }"), ALL},
    {"int32 to int64", {V(P3 "message A { int32 n = 1; }")}, V(P3 "message A { int64 n = 1; }"),
     ALL},
    {"int32 to uint64", {V(P3 "message A { int32 n = 1; }")},
     V(P3 "message A { uint64 n = 1; }"), ALL},
    {"uint32 to bool", {V(P3 "message A { uint32 n = 1; }")}, V(P3 "message A { bool n = 1; }"),
     ALL},
    {"int32 to sint32", {V(P3 "message A { int32 n = 1; }")},
     V(P3 "message A { sint32 n = 1; }"), NEITHER},
    {"sint32 to sint64", {V(P3 "message A { sint32 n = 1; }")},
     V(P3 "message A { sint64 n = 1; }"), ALL},
    {"fixed32 to sfixed32", {V(P3 "message A { fixed32 n = 1; }")},
     V(P3 "message A { sfixed32 n = 1; }"), ALL},
    {"fixed64 to sfixed64", {V(P3 "message A { fixed64 n = 1; }")},
     V(P3 "message A { sfixed64 n = 1; }"), ALL},
    {"fixed32 to fixed64", {V(P3 "message A { fixed32 n = 1; }")},
     V(P3 "message A { fixed64 n = 1; }"), NEITHER},
    {"float to double", {V(P3 "message A { float n = 1; }")},
     V(P3 "message A { double n = 1; }"), NEITHER},
    {"string to bytes", {V(P3 "message A { string s = 1; }")}, V(P3 "message A { bytes s = 1; }"),
     ALL},
    {"string to int32", {V(P3 "message A { string s = 1; }")}, V(P3 "message A { int32 s = 1; }"),
     NEITHER},
    {"int32 to an enum", {V(P3 "message A { int32 c = 1; }")},
     V(P3 "message A { Color c = 1; }\nenum Color { RED = 0; BLUE = 1; }"), ALL},
    {"scalar to message", {V(P3 "message A { int32 c = 1; }\nmessage B { int32 x = 1; }")},
     V(P3 "message A { B c = 1; }\nmessage B { int32 x = 1; }"), NEITHER},
    {"message type renamed",
     {V(P3 "message A { B c = 1; }\nmessage B { int32 x = 1; }")},
     V(P3 "message A { C c = 1; }\nmessage C { int32 x = 1; }"), NEITHER},
    {"unused message removed",
     {V(P3 "message A { int32 x = 1; }\nmessage B { int32 y = 1; }")},
     V(P3 "message A { int32 x = 1; }"), FWD_ONLY},
    {"message added", {V(P3 "message A { int32 x = 1; }")},
     V(P3 "message A { int32 x = 1; }\nmessage B { int32 y = 1; }"), BACK_ONLY},
    {"nested message gains a field",
     {V(P3 "message A { B b = 1; message B { int32 x = 1; } }")},
     V(P3 "message A { B b = 1; message B { int32 x = 1; string y = 2; } }"), ALL},
    {"nested message changes a kind",
     {V(P3 "message A { B b = 1; message B { int32 x = 1; } }")},
     V(P3 "message A { B b = 1; message B { string x = 1; } }"), NEITHER},
    {"messages reordered",
     {V(P3 "message A { int32 x = 1; }\nmessage B { int32 y = 1; }")},
     V(P3 "message B { int32 y = 1; }\nmessage A { int32 x = 1; }"), ALL},
    {"enum value added", {V(P3 "message A { E e = 1; }\nenum E { X = 0; }")},
     V(P3 "message A { E e = 1; }\nenum E { X = 0; Y = 1; }"), ALL},
    {"enum value removed", {V(P3 "message A { E e = 1; }\nenum E { X = 0; Y = 1; }")},
     V(P3 "message A { E e = 1; }\nenum E { X = 0; }"), ALL},
    {"enum value renamed", {V(P3 "message A { E e = 1; }\nenum E { X = 0; Y = 1; }")},
     V(P3 "message A { E e = 1; }\nenum E { X = 0; Z = 1; }"), ALL},
    {"unused enum removed", {V(P3 "message A { int32 x = 1; }\nenum E { X = 0; }")},
     V(P3 "message A { int32 x = 1; }"), ALL},
    {"package changed", {V(P3 "package a;\nmessage A { int32 x = 1; }")},
     V(P3 "package b;\nmessage A { int32 x = 1; }"), NEITHER},
    {"proto2 required field added", {V(P2 "message A { optional int32 x = 1; }")},
     V(P2 "message A { optional int32 x = 1; required string id = 2; }"), NEITHER},
    {"proto2 required field removed",
     {V(P2 "message A { optional int32 x = 1; required string id = 2; }")},
     V(P2 "message A { optional int32 x = 1; }"), NEITHER},
    {"proto2 optional number made required", {V(P2 "message A { optional int32 x = 1; }")},
     V(P2 "message A { required int32 x = 1; }"), NEITHER},
    {"proto2 optional string made repeated", {V(P2 "message A { optional string s = 1; }")},
     V(P2 "message A { repeated string s = 1; }"), ALL},
    {"proto3 optional number made repeated", {V(P3 "message A { optional int32 x = 1; }")},
     V(P3 "message A { repeated int32 x = 1; }"), NEITHER},
    {"proto3 plain number made repeated (no written label to compare)",
     {V(P3 "message A { int32 x = 1; }")}, V(P3 "message A { repeated int32 x = 1; }"), ALL},
    {"message field made repeated",
     {V(P3 "message A { optional B b = 1; }\nmessage B { int32 x = 1; }")},
     V(P3 "message A { repeated B b = 1; }\nmessage B { int32 x = 1; }"), ALL},
    {"map value int32 to int64", {V(P3 "message A { map<string, int32> m = 1; }")},
     V(P3 "message A { map<string, int64> m = 1; }"), ALL},
    {"map value int32 to string", {V(P3 "message A { map<string, int32> m = 1; }")},
     V(P3 "message A { map<string, string> m = 1; }"), NEITHER},
    {"map key string to int32", {V(P3 "message A { map<string, int32> m = 1; }")},
     V(P3 "message A { map<int32, int32> m = 1; }"), NEITHER},
    {"map to repeated message",
     {V(P3 "message A { map<string, int32> m = 1; }\nmessage E { string key = 1; int32 value = 2; }")},
     V(P3 "message A { repeated E m = 1; }\nmessage E { string key = 1; int32 value = 2; }"),
     NEITHER},
    {"map value qualified another way",
     {V(P3 "message A { map<string, S> m = 1; message S { int32 x = 1; } }")},
     V(P3 "message A { map<string, A.S> m = 1; message S { int32 x = 1; } }"), ALL},
    {"one field moved into a new oneof", {V(P3 "message A { string a = 1; string b = 2; }")},
     V(P3 "message A { string a = 1; oneof o { string b = 2; } }"), ALL},
    {"two fields moved into a new oneof", {V(P3 "message A { string a = 1; string b = 2; }")},
     V(P3 "message A { oneof o { string a = 1; string b = 2; } }"), FWD_ONLY},
    {"field added to a oneof", {V(P3 "message A { oneof o { string a = 1; } }")},
     V(P3 "message A { oneof o { string a = 1; int32 b = 2; } }"), BACK_ONLY},
    {"field removed from a oneof", {V(P3 "message A { oneof o { string a = 1; int32 b = 2; } }")},
     V(P3 "message A { oneof o { string a = 1; } }"), FWD_ONLY},
    {"field moved out of a oneof", {V(P3 "message A { oneof o { string a = 1; int32 b = 2; } }")},
     V(P3 "message A { oneof o { string a = 1; } int32 b = 2; }"), BACK_ONLY},
    {"oneof renamed", {V(P3 "message A { oneof o { string a = 1; int32 b = 2; } }")},
     V(P3 "message A { oneof p { string a = 1; int32 b = 2; } }"), ALL},
    {"whole oneof removed", {V(P3 "message A { int32 x = 3; oneof o { string a = 1; int32 b = 2; } }")},
     V(P3 "message A { int32 x = 3; }"), ALL},
    {"well-known type changed",
     {V(P3 "import \"google/protobuf/timestamp.proto\";\n"
           "import \"google/protobuf/duration.proto\";\n"
           "message A { google.protobuf.Timestamp t = 1; }")},
     V(P3 "import \"google/protobuf/timestamp.proto\";\n"
          "import \"google/protobuf/duration.proto\";\n"
          "message A { google.protobuf.Duration t = 1; }"),
     NEITHER},
    {"services and rpcs are not compared",
     {V(P3 "message A { int32 x = 1; }\nservice S { rpc Get (A) returns (A); }")},
     V(P3 "message A { int32 x = 1; }\nservice S { rpc Put (stream A) returns (stream A); }"),
     ALL},
    {"imported type, reference unchanged", {{ORDER_WITH_MONEY, common_v1}},
     {ORDER_WITH_MONEY, common_v1}, ALL},
    {"imported type gains a field in a new reference version", {{ORDER_WITH_MONEY, common_v1}},
     {ORDER_WITH_MONEY, common_v2_ok}, ALL},
    {"imported type changes a kind in a new reference version", {{ORDER_WITH_MONEY, common_v1}},
     {ORDER_WITH_MONEY, common_v2_bad}, NEITHER},
    {"imported type, same reference id, not compared again", {{ORDER_WITH_MONEY, common_v1}},
     {ORDER_WITH_MONEY, common_v1_same_id}, ALL},
    {"local message moved into an import",
     {V(P3 "package acme.shop;\nmessage Order { string id = 1; Money total = 2; }\n"
           "message Money { string currency = 1; int64 units = 2; }\n")},
     {P3 "package acme.shop;\nimport \"common.proto\";\n"
         "message Order { string id = 1; acme.common.Money total = 2; }\n",
      common_v1},
     FWD_ONLY},
    {"transitive: a kind change two versions back",
     {V(P3 "message A { int32 x = 1; }"), V(P3 "message A { }")},
     V(P3 "message A { string x = 1; }"), "yynynyn"},
    {"transitive: a message removed and added back",
     {V(P3 "message A { int32 x = 1; }\nmessage B { int32 y = 1; }"),
      V(P3 "message A { int32 x = 1; }\nmessage B { int32 y = 1; }")},
     V(P3 "message A { int32 x = 1; }\nmessage B { int32 y = 1; string z = 2; }"), ALL},
    {"transitive: forward only breaks on the oldest",
     {V(P3 "message A { oneof o { string a = 1; } }"),
      V(P3 "message A { oneof o { string a = 1; int32 b = 2; } }")},
     V(P3 "message A { oneof o { string a = 1; int32 b = 2; } int32 c = 3; }"), "yyyynyn"},
    {"descriptor form read by the same schema in text",
     {V("CgpzaG9wLnByb3RvEgRzaG9wGh9nb29nbGUvcHJvdG9idWYvdGltZXN0YW1wLnByb3RvIoACCgVPcmRlchIKCgJp"
        "ZBgBIAEoCRImCgJhdBgCIAEoCzIaLmdvb2dsZS5wcm90b2J1Zi5UaW1lc3RhbXASIwoEdGFncxgDIAMoCzIVLnNo"
        "b3AuT3JkZXIuVGFnc0VudHJ5EhEKBG5vdGUYBCABKAlIAIgBARIOCgRjYXJkGAUgASgJSAESGgoFc3RhdGUYBiAB"
        "KA4yCy5zaG9wLlN0YXRlEhEKA3F0eRgHIAMoBUIEEAEYARorCglUYWdzRW50cnkSCwoDa2V5GAEgASgJEg0KBXZh"
        "bHVlGAIgASgDOgI4AUIHCgVfbm90ZUIFCgNwYXlKBAgKEAtKBAgUEB5SA29sZCoaCgVTdGF0ZRIHCgNORVcQABII"
        "CgRET05FEAEyKQoEU2hvcBIhCgNQdXQSCy5zaG9wLk9yZGVyGgsuc2hvcC5PcmRlcjABQgwKCGNvbS5zaG9wSAJi"
        "BnByb3RvMw==")},
     V(P3 "package shop;\nimport \"google/protobuf/timestamp.proto\";\n"
          "message Order {\n  reserved 10, 20 to 29; reserved \"old\";\n"
          "  string id = 1; google.protobuf.Timestamp at = 2; map<string, int64> tags = 3;\n"
          "  optional string note = 4; oneof pay { string card = 5; } State state = 6;\n"
          "  repeated int32 qty = 7 [packed = true, deprecated = true];\n}\n"
          "enum State { NEW = 0; DONE = 1; }\n"
          "service Shop { rpc Put (Order) returns (stream Order); }\n"),
     ALL},
};

TEST(registry_protobuf_compat_levels_table)
{
    size_t n_cases = sizeof(compat_cases) / sizeof(compat_cases[0]);
    ASSERT_CMP(n_cases, >=, 40);
    for (size_t i = 0; i < n_cases; i++) {
        const struct compat_case *c = &compat_cases[i];
        struct proto_schema *hist[3];
        size_t n = 0;
        while (n < 3 && c->history[n].text) {
            hist[n] = parse_refs(c->history[n].text, c->history[n].refs);
            n++;
        }
        struct proto_schema *next = parse_refs(c->next.text, c->next.refs);
        ASSERT_EQ(strlen(c->expect), LEVELS);
        for (int lv = 0; lv < LEVELS; lv++) {
            bool want = c->expect[lv] == 'y';
            bool got = level_allows((enum level)lv, next, hist, n);
            if (got != want)
                test_fail(__FILE__, __LINE__, "case \"%s\": %s is %s, expected %s", c->name,
                          level_names[lv], got ? "compatible" : "incompatible",
                          want ? "compatible" : "incompatible");
        }
        proto_free(next);
        for (size_t k = 0; k < n; k++)
            proto_free(hist[k]);
    }
}

static void assert_differences(const char *original, const struct ref *ro, const char *update,
                               const struct ref *ru, const char *const *want, bool want_ok)
{
    struct proto_schema *a = parse_refs(original, ro), *b = parse_refs(update, ru);
    struct proto_reasons r = {0};
    ASSERT_EQ(proto_differences(a, b, &r), want_ok);
    size_t n = 0;
    while (want[n])
        n++;
    if (r.n != n) {
        for (size_t i = 0; i < r.n; i++)
            fprintf(stderr, "  got %s\n", r.v[i]);
        ASSERT_EQ(r.n, n);
    }
    for (size_t i = 0; i < n; i++)
        ASSERT_STREQ(r.v[i], want[i]);
    proto_reasons_free(&r);
    proto_free(a);
    proto_free(b);
}

TEST(registry_protobuf_differences_paths)
{
    static const char *const oneof_merge[] = {
        "MULTIPLE_FIELDS_MOVED_TO_ONEOF #/A/o", "ONEOF_ADDED #/A/o", "ONEOF_FIELD_ADDED #/A/o/3",
        NULL};
    assert_differences(P3 "message A { string a = 1; string b = 2; }", NULL,
                       P3 "message A { oneof o { string a = 1; string b = 2; int32 c = 3; } }",
                       NULL, oneof_merge, false);
    static const char *const nested[] = {"FIELD_ADDED #/W/T/2", "MESSAGE_ADDED #/X", NULL};
    assert_differences(P3 "message W { message T { string s = 1; } }", NULL,
                       P3 "message W { message T { string s = 1; int32 n = 2; } }\nmessage X {}",
                       NULL, nested, true);
    static const char *const import_change[] = {"FIELD_SCALAR_KIND_CHANGED #/Money/2",
                                                "FIELD_NAMED_TYPE_CHANGED #/Order/2", NULL};
    assert_differences(ORDER_WITH_MONEY, common_v1, ORDER_WITH_MONEY, common_v2_bad,
                       import_change, false);
    static const char *const pkg[] = {"PACKAGE_CHANGED #/", "MESSAGE_MOVED #/A",
                                      "MESSAGE_ADDED #/B", "ENUM_CONST_CHANGED #/E/1", NULL};
    assert_differences(P3 "package p;\nmessage A {}\nenum E { X = 0; Y = 1; }", NULL,
                       P3 "package q;\nmessage B {}\nmessage A {}\nenum E { X = 0; Z = 1; }",
                       NULL, pkg, false);
}

TEST(registry_protobuf_verbose_reasons)
{
    struct proto_schema *old = parse(P3 "message Order { int32 id = 1; Item item = 2; }\n"
                                        "message Item { int32 n = 1; }");
    struct proto_schema *neu = parse(P3 "message Order { string id = 1; }");
    struct proto_reasons r = {0};
    ASSERT(!proto_can_read(neu, old, "new", "old", &r));
    ASSERT_EQ(r.n, 2);
    ASSERT_STREQ(r.v[0], "{errorType:\"FIELD_SCALAR_KIND_CHANGED\", description:\"The kind of a "
                         "SCALAR field at path '#/Order/1' in the new schema does not match its "
                         "kind in the old schema\"}");
    ASSERT_STREQ(r.v[1], "{errorType:\"MESSAGE_REMOVED\", description:\"The new schema is "
                         "missing a MESSAGE type at path '#/Item' in the old schema\"}");
    proto_reasons_free(&r);
    /* FORWARD asks the old schema to read the new: the labels trade places. */
    ASSERT(!proto_can_read(old, neu, "old", "new", &r));
    ASSERT_EQ(r.n, 1);
    ASSERT_STREQ(r.v[0], "{errorType:\"FIELD_SCALAR_KIND_CHANGED\", description:\"The kind of a "
                         "SCALAR field at path '#/Order/1' in the old schema does not match its "
                         "kind in the new schema\"}");
    proto_reasons_free(&r);
    ASSERT(!proto_can_read(old, neu, NULL, NULL, NULL));
    proto_free(old);
    proto_free(neu);
}

TEST(registry_protobuf_compat_recursive_imported_types)
{
    /* A recursive imported type compared across reference versions ends (Struct-like). */
    static const struct ref v1[] = {
        {"tree.proto", P3 "package t;\nmessage Node { repeated Node kids = 1; Leaf leaf = 2; }\n"
                          "message Leaf { int32 v = 1; }\n", "tree/1"},
        {NULL, NULL, NULL}};
    static const struct ref v2[] = {
        {"tree.proto", P3 "package t;\nmessage Node { repeated Node kids = 1; Leaf leaf = 2; }\n"
                          "message Leaf { string v = 1; }\n", "tree/2"},
        {NULL, NULL, NULL}};
    const char *text = P3 "import \"tree.proto\";\nmessage Doc { t.Node root = 1; }\n";
    struct proto_schema *a = parse_refs(text, v1), *b = parse_refs(text, v2);
    ASSERT(reads(a, a));
    ASSERT(!reads(b, a));
    ASSERT(!reads(a, b));
    proto_free(a);
    proto_free(b);
    a = parse(P3 "import \"google/protobuf/struct.proto\";\nmessage D { google.protobuf.Struct s = 1; }");
    ASSERT(reads(a, a));
    proto_free(a);
}

/* ---- malformed input ---- */

struct bad_case {
    const char *text;
    const char *message; /* the whole message, line:col included */
};

static const struct bad_case bad_cases[] = {
    {"message A {", "1:12: Reached end of input in message definition (missing '}')."},
    {"syntax = \"proto3\"; message A { int32 x = 1 }", "1:44: Expected \";\"."},
    {"syntax = \"proto4\";", "1:10: Unrecognized syntax identifier \"proto4\".  This parser only "
                             "recognizes \"proto2\" and \"proto3\"."},
    {"edition = \"2023\";\nmessage A {}", "1:1: Editions are not supported (edition = ...): "
                                          "write syntax = \"proto2\" or syntax = \"proto3\"."},
    {"package a;\nsyntax = \"proto3\";", "2:1: 'syntax' element must be the first declaration "
                                         "in a file."},
    {"package a; package b;", "1:12: Multiple package definitions."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 0; }", "2:13: Field numbers must be positive "
                                                         "integers."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 536870912; }",
     "2:13: Field numbers cannot be greater than 536870911."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 19500; }",
     "2:13: Field numbers 19000 through 19999 are reserved for the protocol buffer library "
     "implementation."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 1; string y = 1; }",
     "2:26: Field number 1 has already been used in \"A\" by field \"x\"."},
    {"syntax = \"proto3\";\nmessage A { reserved 2 to 5; int32 x = 3; }",
     "2:30: Field \"x\" uses reserved number 3."},
    {"syntax = \"proto3\";\nmessage A { reserved \"x\"; int32 x = 3; }",
     "2:27: Field name \"x\" is reserved."},
    {"syntax = \"proto3\";\nmessage A { reserved 5 to 2; }",
     "2:13: Reserved range end number must be greater than start number."},
    {"syntax = \"proto3\";\nmessage A { reserved 1 to 5, 3; }",
     "2:13: Reserved range 3 overlaps with already-defined range 1 to 5."},
    {"syntax = \"proto3\";\nmessage A { reserved foo; }",
     "2:22: Reserved names must be string literals. (Only editions supports identifiers.)"},
    {"syntax = \"proto3\";\nmessage A { required int32 x = 1; }",
     "2:13: Required fields are not allowed in proto3."},
    {"syntax = \"proto2\";\nmessage A { int32 x = 1; }",
     "2:13: Expected \"required\", \"optional\", or \"repeated\"."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 1 [default = 5]; }",
     "2:13: Explicit default values are not allowed in proto3."},
    {"syntax = \"proto2\";\nmessage A { optional int32 x = 1 [default = \"a\"]; }",
     "2:13: Expected integer for field default value."},
    {"syntax = \"proto2\";\nmessage A { optional int32 x = 1 [default = 3000000000]; }",
     "2:13: Integer out of range."},
    {"syntax = \"proto2\";\nmessage A { optional uint32 x = 1 [default = -1]; }",
     "2:13: Unsigned field can't have negative default value."},
    {"syntax = \"proto2\";\nmessage A { optional bool x = 1 [default = 1]; }",
     "2:13: Expected \"true\" or \"false\"."},
    {"syntax = \"proto2\";\nmessage A { optional E e = 1 [default = C]; }\nenum E { B = 1; }",
     "2:13: Enum type \"E\" has no value named \"C\"."},
    {"syntax = \"proto2\";\nmessage A { repeated int32 x = 1 [default = 1]; }",
     "2:13: Repeated fields can't have default values."},
    {"syntax = \"proto3\";\nmessage A { B b = 1; }", "2:13: \"B\" is not defined."},
    {"syntax = \"proto3\";\npackage p;\nmessage A { q.B b = 1; }", "3:13: \"q.B\" is not defined."},
    {"syntax = \"proto3\";\nmessage A { message B {} }\n"
     "message C { message A {} A.B x = 1; }",
     "3:26: \"A.B\" is resolved to \"C.A.B\", which is not defined. The innermost scope is "
     "searched first in name resolution. Consider using a leading '.'(i.e., \".A.B\") to start "
     "from the outermost scope."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 1; }\nmessage B { A.x y = 1; }",
     "3:13: \"A.x\" is not a type."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 1; }\nmessage A { int32 y = 1; }",
     "3:1: \"A\" is already defined in \"\" (as a message)."},
    {"syntax = \"proto3\";\nenum E { X = 0; }\nenum F { X = 0; }",
     "3:10: \"X\" is already defined in \"\". Note that enum values use C++ scoping rules, "
     "meaning that enum values are siblings of their type, not children of it."},
    {"syntax = \"proto3\";\nenum E { X = 1; }", "2:10: The first enum value must be zero in proto3."},
    {"syntax = \"proto3\";\nenum E { X = 0; Y = 0; }",
     "2:17: \"Y\" uses the same enum value as \"X\". If this is intended, set 'option allow_alias "
     "= true;' to the enum definition."},
    {"syntax = \"proto3\";\nenum E { option allow_alias = true; X = 0; Y = 1; }",
     "2:1: \"E\" declares support for enum aliases but no enum values share field numbers. "
     "Please remove the unnecessary 'option allow_alias = true;' declaration."},
    {"syntax = \"proto3\";\nenum E { }", "2:1: Enums must contain at least one value."},
    {"syntax = \"proto3\";\nmessage A { map<float, int32> m = 1; }",
     "2:17: Key in map fields cannot be float/double, bytes or message types."},
    {"syntax = \"proto3\";\nmessage A { repeated map<string, int32> m = 1; }",
     "2:13: Field labels (required/optional/repeated) are not allowed on map fields."},
    {"syntax = \"proto3\";\nmessage A { oneof o { map<string, int32> m = 1; } }",
     "2:23: Map fields are not allowed in oneofs."},
    {"syntax = \"proto3\";\nmessage A { oneof o { repeated int32 x = 1; } }",
     "2:23: Fields in oneofs must not have labels (required / optional / repeated)."},
    {"syntax = \"proto3\";\nmessage A { oneof o { } }", "2:13: Oneof must have at least one field."},
    {"syntax = \"proto3\";\nmessage A { optional group G = 1 { } }",
     "2:22: Group syntax is no longer supported in proto3."},
    {"syntax = \"proto2\";\nmessage A { optional group g = 1 { } }",
     "2:28: Group names must start with a capital letter."},
    {"syntax = \"proto3\";\nmessage A { extensions 100 to 200; }",
     "2:13: Extension ranges are not allowed in proto3."},
    {"syntax = \"proto3\";\nmessage A { }\nextend A { int32 x = 1; }",
     "3:1: Extensions in proto3 are only allowed for defining options."},
    {"syntax = \"proto2\";\nmessage A { extensions 100 to 200; }\nextend A { optional int32 x = 5; }",
     "3:12: \"A\" does not declare 5 as an extension number."},
    {"syntax = \"proto2\";\nmessage A { extensions 10 to 20; optional int32 x = 15; }",
     "2:34: Extension range 10 to 20 includes field \"x\" (15)."},
    {"syntax = \"proto3\";\nimport \"missing.proto\";",
     "2:1: Import \"missing.proto\" was not found (no schema reference of that name)."},
    {"syntax = \"proto3\";\nimport \"a.proto\";\nimport \"a.proto\";",
     "3:1: Import \"a.proto\" was listed twice."},
    {"syntax = \"proto3\";\nmessage A { string s = 1 [json_name = 5]; }",
     "2:27: Expected string for json_name."},
    {"syntax = \"proto3\";\nservice S { rpc M (E) returns (E); }\nenum E { X = 0; }",
     "2:20: \"E\" is not a message type."},
    {"syntax = \"proto3\";\nmessage A { string s = 1; } /* unterminated",
     "2:29: End-of-file inside block comment."},
    {"syntax = \"proto3\";\noption java_package = \"abc\n\";",
     "2:23: String literals cannot cross line boundaries."},
    {"syntax = \"proto3\";\noption java_package = \"a\\qb\";",
     "2:25: Invalid escape sequence in string literal."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 12abc; }",
     "2:25: Need space between number and identifier."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 09; }",
     "2:23: Numbers starting with leading zero must be in octal."},
    {"syntax = \"proto3\";\nmessage A { int32 x = 3000000000; }", "2:23: Integer out of range."},
    {"syntax = \"proto3\";\nmessage \xc3\xa9 {}", "2:9: Invalid character 0xc3 in text."},
    {"syntax = \"proto3\";\nfoo bar;", "2:1: Expected top-level statement (e.g. \"message\")."},
    {"syntax = \"proto3\";\noption (a).b = { x: [1, 2 };",
     "2:27: Expected \",\"."},
    {"syntax = \"proto3\";\noption (a) = { x 1 };", "2:18: Expected \":\"."},
};

TEST(registry_protobuf_malformed_table)
{
    size_t n = sizeof(bad_cases) / sizeof(bad_cases[0]);
    ASSERT_CMP(n, >=, 40);
    for (size_t i = 0; i < n; i++) {
        char err[PROTO_ERR_MAX];
        parse_error(bad_cases[i].text, strlen(bad_cases[i].text), err, sizeof(err));
        if (strcmp(err, bad_cases[i].message) != 0)
            test_fail(__FILE__, __LINE__, "case %zu:\n%s\n  got:  \"%s\"\n  want: \"%s\"", i,
                      bad_cases[i].text, err, bad_cases[i].message);
    }
}

TEST(registry_protobuf_refuses_nul_bytes_and_empty_input)
{
    char err[PROTO_ERR_MAX];
    static const char nul[] = "syntax = \"proto3\";\nmessage A {}\0message B {}";
    parse_error(nul, sizeof(nul) - 1, err, sizeof(err));
    ASSERT_STREQ(err, "2:13: Invalid character 0x00 in text.");
    /* An empty file is a valid schema with nothing in it (as protoc has it). */
    struct proto_schema *s = parse("");
    ASSERT(proto_default_name(s) == NULL);
    proto_free(s);
    /* A short error buffer still gets a NUL-terminated prefix. */
    char small[8];
    parse_error("message", 7, small, sizeof(small));
    ASSERT_EQ(strlen(small), 7);
}

TEST(registry_protobuf_import_errors)
{
    char err[PROTO_ERR_MAX];
    struct proto_schema *s = NULL;
    static const struct ref cycle[] = {
        {"a.proto", "syntax = \"proto3\";\nimport \"b.proto\";", "a/1"},
        {"b.proto", "syntax = \"proto3\";\nimport \"a.proto\";", "b/1"},
        {NULL, NULL, NULL}};
    const char *root = "syntax = \"proto3\";\nimport \"a.proto\";";
    ASSERT_EQ(proto_parse(root, strlen(root), refs_lookup, (void *)cycle, &s, err, sizeof(err)),
              -ERR_INVALID);
    ASSERT_STREQ(err, "b.proto:2:1: File recursively imports itself: a.proto -> b.proto -> "
                      "a.proto");
    /* An error inside an import names the file. */
    static const struct ref broken[] = {
        {"a.proto", "syntax = \"proto3\";\nmessage X { int32 y = 1 }", "a/1"}, {NULL, NULL, NULL}};
    ASSERT_EQ(proto_parse(root, strlen(root), refs_lookup, (void *)broken, &s, err, sizeof(err)),
              -ERR_INVALID);
    ASSERT_STREQ(err, "a.proto:2:25: Expected \";\".");
    /* A type of a file imported by an import is not visible, unless imported publicly. */
    static const struct ref chain[] = {
        {"a.proto", "syntax = \"proto3\";\nimport \"b.proto\";", "a/1"},
        {"b.proto", "syntax = \"proto3\";\npackage b;\nmessage B {}", "b/1"},
        {NULL, NULL, NULL}};
    const char *uses_b = "syntax = \"proto3\";\nimport \"a.proto\";\nmessage A { b.B x = 1; }";
    ASSERT_EQ(proto_parse(uses_b, strlen(uses_b), refs_lookup, (void *)chain, &s, err,
                          sizeof(err)),
              -ERR_INVALID);
    ASSERT_STREQ(err, "3:13: \"b.B\" seems to be defined in \"b.proto\", which is not imported "
                      "by \"the schema\".  To use it here, please add the necessary import.");
    static const struct ref public_chain[] = {
        {"a.proto", "syntax = \"proto3\";\nimport public \"b.proto\";", "a/1"},
        {"b.proto", "syntax = \"proto3\";\npackage b;\nmessage B {}", "b/1"},
        {NULL, NULL, NULL}};
    s = parse_refs(uses_b, public_chain);
    proto_free(s);
    /* A lookup failure other than not-found refuses too. */
    ASSERT_EQ(proto_parse(root, strlen(root), NULL, NULL, &s, err, sizeof(err)), -ERR_INVALID);
    ASSERT_STREQ(err, "2:1: Import \"a.proto\" was not found (no schema reference of that name).");
}

TEST_T(registry_protobuf_limits_refuse_cleanly, 30)
{
    char err[PROTO_ERR_MAX];
    struct strbuf b;
    strbuf_init(&b);
    /* Nesting far past the limit (a recursive parser would need a deep stack). */
    for (int i = 0; i < 50000; i++)
        strbuf_printf(&b, "message M%d {", i);
    parse_error(b.p, b.len, err, sizeof(err));
    ASSERT(strstr(err, "Messages nested too deeply (more than 32 levels).") != NULL);
    strbuf_reset(&b);
    strbuf_puts(&b, "syntax = \"proto3\";\noption (x) = ");
    for (int i = 0; i < 100000; i++)
        strbuf_puts(&b, "{a:");
    parse_error(b.p, b.len, err, sizeof(err));
    ASSERT(strstr(err, "Option value nested too deeply") != NULL);
    /* Exactly the limit is fine. */
    strbuf_reset(&b);
    for (int i = 0; i < PROTO_DEPTH_MAX; i++)
        strbuf_printf(&b, "message M%d {", i);
    for (int i = 0; i < PROTO_DEPTH_MAX; i++)
        strbuf_putc(&b, '}');
    struct proto_schema *s = parse(b.p);
    proto_free(s);
    /* Too much text. */
    strbuf_reset(&b);
    strbuf_puts(&b, "syntax = \"proto3\";\n");
    while (b.len <= PROTO_TEXT_MAX)
        strbuf_puts(&b, "// padding padding padding padding padding padding padding padding\n");
    parse_error(b.p, b.len, err, sizeof(err));
    ASSERT_STREQ(err, "Schema too large: its text and imports pass 1048576 bytes.");
    strbuf_destroy(&b);
}

/* ---- canonical forms ---- */

static const char canon_input[] =
    "// Orders.\n"
    "syntax = \"proto3\";\n"
    "import \"google/protobuf/timestamp.proto\";\n"
    "package acme.shop;\n"
    "option java_package = 'com.acme' \".shop\";\n"
    "enum Status { NEW = 0; PAID = 1 [deprecated=true]; }\n"
    "message Order {\n"
    "  /* fields */ string id = 1 [json_name = \"ID\", deprecated = true];\n"
    "  map < string , Item > items = 2;\n"
    "  google.protobuf.Timestamp at = 3;\n"
    "  oneof pay { string card = 5; bytes token = 4; }\n"
    "  reserved 9, 10 to 12, 100 to max; reserved \"old\";\n"
    "  Status status = 6;\n"
    "  message Item { int64 qty = 1; }\n"
    "}\n"
    "service Shop { rpc Put (stream Order) returns (Order) { option deprecated = true; } }\n";

static const char canon_expect[] =
    "syntax = \"proto3\";\n"
    "package acme.shop;\n"
    "\n"
    "import \"google/protobuf/timestamp.proto\";\n"
    "\n"
    "option java_package = \"com.acme.shop\";\n"
    "\n"
    "message Order {\n"
    "  reserved 9, 10 to 12, 100 to max;\n"
    "  reserved \"old\";\n"
    "\n"
    "  string id = 1 [\n"
    "    deprecated = true,\n"
    "    json_name = \"ID\"\n"
    "  ];\n"
    "  map<string, Item> items = 2;\n"
    "  google.protobuf.Timestamp at = 3;\n"
    "  Status status = 6;\n"
    "\n"
    "  oneof pay {\n"
    "    string card = 5;\n"
    "    bytes token = 4;\n"
    "  }\n"
    "\n"
    "  message Item {\n"
    "    int64 qty = 1;\n"
    "  }\n"
    "}\n"
    "enum Status {\n"
    "  NEW = 0;\n"
    "  PAID = 1 [deprecated = true];\n"
    "}\n"
    "\n"
    "service Shop {\n"
    "  rpc Put (stream Order) returns (Order) {\n"
    "    option deprecated = true;\n"
    "  };\n"
    "}\n";

static const char canon_normalized[] =
    "syntax = \"proto3\";\n"
    "package acme.shop;\n"
    "\n"
    "import \"google/protobuf/timestamp.proto\";\n"
    "\n"
    "option java_package = \"com.acme.shop\";\n"
    "\n"
    "message Order {\n"
    "  reserved 9;\n"
    "  reserved 10 to 12;\n"
    "  reserved 100 to max;\n"
    "  reserved \"old\";\n"
    "\n"
    "  string id = 1 [\n"
    "    deprecated = true,\n"
    "    json_name = \"ID\"\n"
    "  ];\n"
    "  map<string, .acme.shop.Order.Item> items = 2;\n"
    "  .google.protobuf.Timestamp at = 3;\n"
    "  .acme.shop.Status status = 6;\n"
    "\n"
    "  oneof pay {\n"
    "    bytes token = 4;\n"
    "    string card = 5;\n"
    "  }\n"
    "\n"
    "  message Item {\n"
    "    int64 qty = 1;\n"
    "  }\n"
    "}\n"
    "enum Status {\n"
    "  NEW = 0;\n"
    "  PAID = 1 [deprecated = true];\n"
    "}\n"
    "\n"
    "service Shop {\n"
    "  rpc Put (stream .acme.shop.Order) returns (.acme.shop.Order) {\n"
    "    option deprecated = true;\n"
    "  };\n"
    "}\n";

TEST(registry_protobuf_canonical_form)
{
    char *c = canonical(canon_input, false);
    ASSERT_STREQ(c, canon_expect);
    /* The canonical text parses back to itself. */
    char *again = canonical(c, false);
    ASSERT_STREQ(again, c);
    mem_free(again);
    mem_free(c);
    c = canonical(canon_input, true);
    ASSERT_STREQ(c, canon_normalized);
    again = canonical(c, true);
    ASSERT_STREQ(again, c);
    mem_free(again);
    mem_free(c);
}

TEST(registry_protobuf_canonical_ignores_layout_and_comments)
{
    const char *a = P3 "message A { int32 x = 1; string y = 2 [deprecated = true]; }";
    const char *b = "/* x */ syntax\n=\n\"proto3\"\n;// y\nmessage   A{int32 x=1;;string y\n=\n2"
                    "[ deprecated=true ] ; } ;";
    char *ca = canonical(a, false), *cb = canonical(b, false);
    ASSERT_STREQ(ca, cb);
    ASSERT_STREQ(ca, "syntax = \"proto3\";\n\nmessage A {\n  int32 x = 1;\n"
                     "  string y = 2 [deprecated = true];\n}\n");
    mem_free(ca);
    mem_free(cb);
    /* Field order and option order are kept in the canonical form but not the normalized. */
    const char *c = P3 "option java_package = \"p\"; option go_package = \"g\";\n"
                       "message A { string y = 2; int32 x = 1; }";
    const char *d = P3 "option go_package = \"g\"; option java_package = \"p\";\n"
                       "message A { int32 x = 1; string y = 2; }";
    ca = canonical(c, false);
    cb = canonical(d, false);
    ASSERT(strcmp(ca, cb) != 0);
    mem_free(ca);
    mem_free(cb);
    ca = canonical(c, true);
    cb = canonical(d, true);
    ASSERT_STREQ(ca, cb);
    mem_free(ca);
    mem_free(cb);
    /* Qualified and unqualified type names normalize alike. */
    ca = canonical(P3 "package p;\nmessage A { B b = 1; }\nmessage B {}", true);
    cb = canonical(P3 "package p;\nmessage A { .p.B b = 1; }\nmessage B {}", true);
    ASSERT_STREQ(ca, cb);
    mem_free(ca);
    mem_free(cb);
}

TEST(registry_protobuf_canonical_options_and_values)
{
    /* Aggregate option values, custom option names, string escapes, proto2 defaults. */
    const char *text =
        P2 "package p;\nimport \"google/protobuf/descriptor.proto\";\n"
           "message Rule { optional int32 min = 1; repeated string tag = 2; }\n"
           "extend google.protobuf.FieldOptions { optional Rule rule = 50000; }\n"
           "message A {\n"
           "  optional string s = 1 [default = \"a\\\"b\\n\\x01\", (rule).min = 0x10];\n"
           "  optional double d = 2 [default = -inf];\n"
           "  optional int32 n = 3 [(rule) = { tag: \"x\" tag: \"y\" min: 1 }, (p.rule).tag = \"z\"];\n"
           "}\n";
    char *c = canonical(text, false);
    ASSERT_STREQ(c, "syntax = \"proto2\";\n"
                    "package p;\n\n"
                    "import \"google/protobuf/descriptor.proto\";\n\n"
                    "message Rule {\n  optional int32 min = 1;\n  repeated string tag = 2;\n}\n"
                    "message A {\n"
                    "  optional string s = 1 [\n"
                    "    (rule).min = 0x10,\n"
                    "    default = \"a\\\"b\\n\\001\"\n"
                    "  ];\n"
                    "  optional double d = 2 [default = -inf];\n"
                    "  optional int32 n = 3 [\n"
                    "    (rule) = {\n"
                    "      tag: [\n"
                    "        \"x\",\n"
                    "        \"y\"\n"
                    "      ],\n"
                    "      min: 1\n"
                    "    },\n"
                    "    (p.rule).tag = \"z\"\n"
                    "  ];\n"
                    "}\n\n"
                    "extend google.protobuf.FieldOptions {\n  optional Rule rule = 50000;\n}\n");
    char *again = canonical(c, false);
    ASSERT_STREQ(again, c);
    mem_free(again);
    mem_free(c);
    c = canonical(text, true);
    ASSERT_STREQ(c, "package p;\n\n"
                    "import \"google/protobuf/descriptor.proto\";\n\n"
                    "message Rule {\n  optional int32 min = 1;\n  repeated string tag = 2;\n}\n"
                    "message A {\n"
                    "  optional string s = 1 [\n"
                    "    default = \"a\\\"b\\n\\001\",\n"
                    "    (p.rule) = {\n"
                    "      min: 16\n"
                    "    }\n"
                    "  ];\n"
                    "  optional double d = 2 [default = -inf];\n"
                    "  optional int32 n = 3 [(p.rule) = {\n"
                    "    min: 1,\n"
                    "    tag: [\n"
                    "      \"x\",\n"
                    "      \"y\",\n"
                    "      \"z\"\n"
                    "    ]\n"
                    "  }];\n"
                    "}\n\n"
                    "extend .google.protobuf.FieldOptions {\n"
                    "  optional .p.Rule rule = 50000;\n}\n");
    again = canonical(c, true);
    ASSERT_STREQ(again, c);
    mem_free(again);
    mem_free(c);
}

TEST(registry_protobuf_normalized_numbers)
{
    const char *text = P2 "message A {\n"
                          "  optional double a = 1 [default = 1.23456];\n"
                          "  optional double b = 2 [default = 1e3];\n"
                          "  optional int64 c = 3 [default = -0x10];\n"
                          "  optional int32 d = 4 [default = 017];\n"
                          "  optional float e = 5 [default = 2.5];\n"
                          "  optional double f = 6 [default = nan];\n"
                          "}\n";
    char *c = canonical(text, true);
    ASSERT_STREQ(c, "\nmessage A {\n"
                    "  optional double a = 1 [default = 1.235];\n"
                    "  optional double b = 2 [default = 1000];\n"
                    "  optional int64 c = 3 [default = -16];\n"
                    "  optional int32 d = 4 [default = 15];\n"
                    "  optional float e = 5 [default = 2.5];\n"
                    "  optional double f = 6 [default = nan];\n"
                    "}\n");
    mem_free(c);
}

/* python3-protobuf: FileDescriptorProto(name='shop.proto', package='shop', syntax='proto3',
 * dependency=['google/protobuf/timestamp.proto'], options java_package='com.shop' and
 * optimize_for=CODE_SIZE; message Order { id=1 string; at=2 .google.protobuf.Timestamp;
 * tags=3 repeated .shop.Order.TagsEntry (nested TagsEntry, map_entry, key string, value
 * int64); note=4 string proto3_optional in oneof _note; card=5 string in oneof pay; state=6
 * .shop.State; qty=7 repeated int32 [packed, deprecated]; reserved [10,11) [20,30) "old" };
 * enum State { NEW=0; DONE=1 }; service Shop { Put(.shop.Order) returns (stream .shop.Order) }),
 * serialized, base64. */
static const char shop_descriptor[] =
    "CgpzaG9wLnByb3RvEgRzaG9wGh9nb29nbGUvcHJvdG9idWYvdGltZXN0YW1wLnByb3RvIoACCgVPcmRlchIKCgJp"
    "ZBgBIAEoCRImCgJhdBgCIAEoCzIaLmdvb2dsZS5wcm90b2J1Zi5UaW1lc3RhbXASIwoEdGFncxgDIAMoCzIVLnNo"
    "b3AuT3JkZXIuVGFnc0VudHJ5EhEKBG5vdGUYBCABKAlIAIgBARIOCgRjYXJkGAUgASgJSAESGgoFc3RhdGUYBiAB"
    "KA4yCy5zaG9wLlN0YXRlEhEKA3F0eRgHIAMoBUIEEAEYARorCglUYWdzRW50cnkSCwoDa2V5GAEgASgJEg0KBXZh"
    "bHVlGAIgASgDOgI4AUIHCgVfbm90ZUIFCgNwYXlKBAgKEAtKBAgUEB5SA29sZCoaCgVTdGF0ZRIHCgNORVcQABII"
    "CgRET05FEAEyKQoEU2hvcBIhCgNQdXQSCy5zaG9wLk9yZGVyGgsuc2hvcC5PcmRlcjABQgwKCGNvbS5zaG9wSAJi"
    "BnByb3RvMw==";

TEST(registry_protobuf_descriptor_input)
{
    char *c = canonical(shop_descriptor, false);
    ASSERT_STREQ(c, "syntax = \"proto3\";\n"
                    "package shop;\n\n"
                    "import \"google/protobuf/timestamp.proto\";\n\n"
                    "option java_package = \"com.shop\";\n"
                    "option optimize_for = CODE_SIZE;\n\n"
                    "message Order {\n"
                    "  reserved 10;\n  reserved 20 to 29;\n  reserved \"old\";\n\n"
                    "  string id = 1;\n"
                    "  .google.protobuf.Timestamp at = 2;\n"
                    "  repeated .shop.Order.TagsEntry tags = 3;\n"
                    "  optional string note = 4;\n"
                    "  .shop.State state = 6;\n"
                    "  repeated int32 qty = 7 [\n    packed = true,\n    deprecated = true\n  ];\n\n"
                    "  oneof pay {\n    string card = 5;\n  }\n\n"
                    "  message TagsEntry {\n    option map_entry = true;\n  \n"
                    "    string key = 1;\n    int64 value = 2;\n  }\n"
                    "}\n"
                    "enum State {\n  NEW = 0;\n  DONE = 1;\n}\n\n"
                    "service Shop {\n  rpc Put (.shop.Order) returns (stream .shop.Order);\n}\n");
    /* Its canonical text parses as .proto and prints the same. */
    char *again = canonical(c, false);
    ASSERT_STREQ(again, c);
    mem_free(again);
    mem_free(c);
    /* Normalized, the map entry prints as a map. */
    c = canonical(shop_descriptor, true);
    ASSERT(strstr(c, "  map<string, int64> tags = 3;\n") != NULL);
    ASSERT(strstr(c, "TagsEntry") == NULL);
    mem_free(c);
    /* Garbage that happens to be base64 is refused, naming both readings. */
    char err[PROTO_ERR_MAX];
    parse_error("QUJD", 4, err, sizeof(err));
    ASSERT(strncmp(err, "Not .proto text; as base64 of a FileDescriptorProto: ", 53) == 0);
}

/* ---- message indexes ---- */

static const char indexed[] =
    P3 "package p;\n"
       "message A { message A1 {} enum E { X = 0; } message A2 { message A21 {} } }\n"
       "enum Top { T = 0; }\n"
       "message B {}\n";

TEST(registry_protobuf_message_indexes)
{
    struct proto_schema *s = parse(indexed);
    ASSERT_STREQ(proto_default_name(s), "p.A");
    struct {
        int32_t idx[3];
        size_t n;
        const char *name;
    } cases[] = {
        {{0}, 0, "p.A"},        {{0}, 1, "p.A"},        {{1}, 1, "p.B"},
        {{0, 0}, 2, "p.A.A1"},  {{0, 1}, 2, "p.A.A2"},  {{0, 1, 0}, 3, "p.A.A2.A21"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strbuf b;
        strbuf_init(&b);
        ASSERT_EQ(proto_message_name(s, cases[i].idx, cases[i].n, &b), 0);
        ASSERT_STREQ(strbuf_str(&b), cases[i].name);
        strbuf_destroy(&b);
        int32_t idx[PROTO_INDEXES_MAX];
        size_t n;
        ASSERT_EQ(proto_message_indexes(s, cases[i].name, idx, &n), 0);
        size_t want_n = cases[i].n ? cases[i].n : 1;
        ASSERT_EQ(n, want_n);
        for (size_t k = 0; k < n; k++)
            ASSERT_EQ(idx[k], cases[i].idx[k]);
    }
    struct strbuf b;
    strbuf_init(&b);
    int32_t bad1[] = {2}, bad2[] = {0, 2}, bad3[] = {-1};
    ASSERT_EQ(proto_message_name(s, bad1, 1, &b), -ERR_NOT_FOUND);
    ASSERT_EQ(proto_message_name(s, bad2, 2, &b), -ERR_NOT_FOUND);
    ASSERT_EQ(proto_message_name(s, bad3, 1, &b), -ERR_NOT_FOUND);
    strbuf_destroy(&b);
    int32_t idx[PROTO_INDEXES_MAX];
    size_t n;
    ASSERT_EQ(proto_message_indexes(s, ".p.A.A2", idx, &n), 0);
    ASSERT_EQ(n, 2);
    ASSERT_EQ(proto_message_indexes(s, "p.Top", idx, &n), -ERR_NOT_FOUND);
    ASSERT_EQ(proto_message_indexes(s, "p.A.E", idx, &n), -ERR_NOT_FOUND);
    ASSERT_EQ(proto_message_indexes(s, "google.protobuf.Any", idx, &n), -ERR_NOT_FOUND);
    proto_free(s);
}

TEST(registry_protobuf_default_name_through_public_import)
{
    static const struct ref leaf[] = {
        {"leaf.proto", P3 "package l;\nenum E { X = 0; }\nmessage M {}", "leaf/1"},
        {NULL, NULL, NULL}};
    struct proto_schema *s = parse_refs(P3 "import public \"leaf.proto\";", leaf);
    ASSERT_STREQ(proto_default_name(s), "l.M");
    struct strbuf b;
    strbuf_init(&b);
    ASSERT_EQ(proto_message_name(s, NULL, 0, &b), 0);
    ASSERT_STREQ(strbuf_str(&b), "l.M");
    strbuf_destroy(&b);
    proto_free(s);
    s = parse(P3 "package q;\nenum Only { Z = 0; }");
    ASSERT_STREQ(proto_default_name(s), "q.Only");
    proto_free(s);
}

TEST(registry_protobuf_message_indexes_wire_form)
{
    uint8_t buf[1 + 5 * (PROTO_INDEXES_MAX + 1)];
    int32_t first[] = {0};
    ASSERT_EQ(proto_msgidx_encode(first, 1, buf), 1);
    ASSERT_EQ(buf[0], 0);
    ASSERT_EQ(proto_msgidx_encode(first, 0, buf), 1);
    int32_t path[] = {1, 0, 300};
    size_t len = proto_msgidx_encode(path, 3, buf);
    /* zigzag: count 3 -> 6, 1 -> 2, 0 -> 0, 300 -> 600 = 0xd8 0x04 */
    static const uint8_t want[] = {6, 2, 0, 0xd8, 0x04};
    ASSERT_EQ(len, sizeof(want));
    ASSERT_MEMEQ(buf, want, sizeof(want));
    int32_t idx[PROTO_INDEXES_MAX];
    size_t n;
    ASSERT_EQ(proto_msgidx_decode(buf, buf + len, idx, &n), len);
    ASSERT_EQ(n, 3);
    ASSERT_EQ(idx[2], 300);
    static const uint8_t zero[] = {0};
    ASSERT_EQ(proto_msgidx_decode(zero, zero + 1, idx, &n), 1);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(idx[0], 0);
    ASSERT_EQ(proto_msgidx_decode(buf, buf + len - 1, idx, &n), 0); /* cut short */
    static const uint8_t negative[] = {2, 1};                       /* [-1] */
    ASSERT_EQ(proto_msgidx_decode(negative, negative + 2, idx, &n), 0);
    static const uint8_t too_many[] = {0x7e};                       /* 63 indexes */
    ASSERT_EQ(proto_msgidx_decode(too_many, too_many + 1, idx, &n), 0);
}

TEST(registry_protobuf_resolution_scopes)
{
    /* Relative names are searched outward; a leading dot starts at the root. */
    const char *text = P3 "package a.b;\n"
                          "message X {}\n"
                          "message M {\n"
                          "  message X {}\n"
                          "  X inner = 1;\n"
                          "  .a.b.X outer = 2;\n"
                          "  b.X via_package = 3;\n"
                          "  M.X via_self = 4;\n"
                          "}\n";
    char *c = canonical(text, true);
    ASSERT(strstr(c, "  .a.b.M.X inner = 1;\n") != NULL);
    ASSERT(strstr(c, "  .a.b.X outer = 2;\n") != NULL);
    ASSERT(strstr(c, "  .a.b.X via_package = 3;\n") != NULL);
    ASSERT(strstr(c, "  .a.b.M.X via_self = 4;\n") != NULL);
    mem_free(c);
    /* Groups (proto2) parse and print; compatibility ignores them. */
    const char *g = P2 "message A { optional group G = 1 { optional int32 x = 2; } }";
    c = canonical(g, false);
    ASSERT_STREQ(c, "syntax = \"proto2\";\n\nmessage A {\n  optional group G = 1 {\n"
                    "    optional int32 x = 2;\n  }\n}\n");
    mem_free(c);
}
