/* Records decoded through their schemas (registry/schema.h reg_schema_decode): Avro's binary
 * encoding to its JSON encoding, Protobuf's wire format to its JSON mapping, with the bytes
 * built here by hand from the specifications, and malformed data refused with a reason. */
#include <stdio.h>

#include "base/errors.h"
#include "base/strbuf.h"
#include "registry/schema.h"
#include "test.h"

static struct reg_schema *parse(enum reg_type t, const char *text)
{
    struct reg_schema *s = NULL;
    char err[REG_ERR_MAX];
    if (reg_schema_parse(t, text, strlen(text), NULL, 0, NULL, NULL, false, &s, err, sizeof err))
        test_fail(__FILE__, __LINE__, "schema refused: %s", err);
    return s;
}

/* Decodes n bytes; the JSON, or "ERR: reason". */
static const char *decode(const struct reg_schema *s, const void *p, size_t n)
{
    static char buf[2048];
    struct strbuf out;
    strbuf_init(&out);
    char err[256];
    if (reg_schema_decode(s, p, n, &out, err, sizeof err) == 0)
        snprintf(buf, sizeof buf, "%s", strbuf_str(&out));
    else
        snprintf(buf, sizeof buf, "ERR: %s", err);
    strbuf_destroy(&out);
    return buf;
}

TEST(registry_avro_binary_decodes_to_its_json_encoding)
{
    struct reg_schema *s = parse(
        REG_AVRO,
        "{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"n\",\"fields\":["
        "{\"name\":\"i\",\"type\":\"int\"},{\"name\":\"l\",\"type\":\"long\"},"
        "{\"name\":\"s\",\"type\":\"string\"},{\"name\":\"b\",\"type\":\"boolean\"},"
        "{\"name\":\"d\",\"type\":\"double\"},{\"name\":\"u\",\"type\":[\"null\",\"string\",\"int\"]},"
        "{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\"]}},"
        "{\"name\":\"a\",\"type\":{\"type\":\"array\",\"items\":\"int\"}},"
        "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"long\"}},"
        "{\"name\":\"f\",\"type\":{\"type\":\"fixed\",\"name\":\"F\",\"size\":2}},"
        "{\"name\":\"y\",\"type\":\"bytes\"}]}");
    /* i=-1 (zigzag 1), l=300 (zigzag 600: 0xd8 0x04), s="hé" (3 bytes), b=true, d=1.5,
     * u=branch 1 "x", e=B, a=[1,2] in one block, m={"k":-2} with a negative block count and
     * its size, f=0x00ff, y="\x80" */
    static const uint8_t data[] = {0x01, 0xd8, 0x04, 0x06, 'h', 0xc3, 0xa9, 0x01,
                                   0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0x02, 0x02, 'x', 0x02,
                                   0x04, 0x02, 0x04, 0x00, 0x01, 0x06, 0x02, 'k', 0x03, 0x00,
                                   0x00, 0xff, 0x02, 0x80};
    ASSERT_STREQ(decode(s, data, sizeof data),
                 "{\"i\":-1,\"l\":300,\"s\":\"h\xc3\xa9\",\"b\":true,\"d\":1.5,"
                 "\"u\":{\"string\":\"x\"},\"e\":\"B\",\"a\":[1,2],\"m\":{\"k\":-2},"
                 "\"f\":\"\\u0000\xc3\xbf\",\"y\":\"\xc2\x80\"}");
    /* cut short anywhere, or one byte too many: refused */
    for (size_t cut = 0; cut < sizeof data; cut++)
        ASSERT(strncmp(decode(s, data, cut), "ERR: ", 5) == 0);
    uint8_t more[sizeof data + 1];
    memcpy(more, data, sizeof data);
    more[sizeof data] = 0;
    ASSERT(strstr(decode(s, more, sizeof more), "bytes left after the value") != NULL);
    reg_schema_free(s);

    struct reg_schema *u = parse(REG_AVRO, "[\"null\",{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}]");
    static const uint8_t nul[] = {0x00}, bad_branch[] = {0x04}, bad_symbol[] = {0x02, 0x02};
    ASSERT_STREQ(decode(u, nul, 1), "null");
    ASSERT(strstr(decode(u, bad_branch, 1), "union branch beyond") != NULL);
    ASSERT(strstr(decode(u, bad_symbol, 2), "enum index beyond") != NULL);
    reg_schema_free(u);

    /* a recursive record nests only as deep as allowed; a huge array count is refused */
    struct reg_schema *list = parse(REG_AVRO,
                                    "{\"type\":\"record\",\"name\":\"L\",\"fields\":[{\"name\":"
                                    "\"next\",\"type\":[\"null\",\"L\"]}]}");
    uint8_t deep[200];
    memset(deep, 0x02, sizeof deep);
    ASSERT(strstr(decode(list, deep, sizeof deep), "nested deeper") != NULL);
    reg_schema_free(list);
    struct reg_schema *nulls = parse(REG_AVRO, "{\"type\":\"array\",\"items\":\"null\"}");
    static const uint8_t many[] = {0xfe, 0xff, 0xff, 0xff, 0x0f}; /* 2^31 - 1 nulls */
    ASSERT(strstr(decode(nulls, many, sizeof many), "more array or map items") != NULL);
    reg_schema_free(nulls);
}

TEST(registry_protobuf_wire_format_decodes_to_its_json_mapping)
{
    struct reg_schema *s = parse(
        REG_PROTOBUF,
        "syntax = \"proto3\"; package p;\n"
        "message Other { int32 x = 1; }\n"
        "message M {\n"
        "  enum Kind { K0 = 0; K1 = 1; }\n"
        "  int64 big_id = 1; string name = 2; repeated int32 nums = 3; Kind kind = 4;\n"
        "  bytes raw = 5; map<string, int32> counts = 6; Other other = 7; sint32 neg = 8;\n"
        "  double ratio = 9; bool flag = 10;\n"
        "  oneof choice { string text = 11; int32 number = 12; }\n"
        "}\n");
    /* indexes [1] (M, the second message: count 1 as zigzag 2, index 1 as zigzag 2), then
     * big_id=5, name="n", nums packed [1,2], kind=K1, raw="hi", counts {"a":3}, other {x:4},
     * neg=-3 (zigzag 5), ratio=0.5, flag=true, an unknown field 99 (varint), number=7 */
    static const uint8_t data[] = {
        0x02, 0x02,                                     /* indexes */
        0x08, 0x05,                                     /* big_id */
        0x12, 0x01, 'n',                                /* name */
        0x1a, 0x02, 0x01, 0x02,                         /* nums, packed */
        0x20, 0x01,                                     /* kind */
        0x2a, 0x02, 'h', 'i',                           /* raw */
        0x32, 0x05, 0x0a, 0x01, 'a', 0x10, 0x03,        /* counts entry */
        0x3a, 0x02, 0x08, 0x04,                         /* other */
        0x40, 0x05,                                     /* neg */
        0x49, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f,             /* ratio */
        0x50, 0x01,                                     /* flag */
        0x98, 0x06, 0x01,                               /* field 99: unknown, skipped */
        0x60, 0x07,                                     /* number */
    };
    ASSERT_STREQ(decode(s, data, sizeof data),
                 "{\"bigId\":\"5\",\"name\":\"n\",\"nums\":[1,2],\"kind\":\"K1\",\"raw\":\"aGk=\","
                 "\"counts\":{\"a\":3},\"other\":{\"x\":4},\"neg\":-3,\"ratio\":0.5,"
                 "\"flag\":true,\"number\":7}");
    /* without indexes (as @kafkajs/confluent-schema-registry writes): the first message */
    static const uint8_t bare[] = {0x08, 0x09};
    ASSERT_STREQ(decode(s, bare, sizeof bare), "{\"x\":9}");
    /* a wire type that does not match the field's type */
    static const uint8_t wrong[] = {0x02, 0x02, 0x0a, 0x01, 'x'}; /* big_id as bytes */
    ASSERT(strncmp(decode(s, wrong, sizeof wrong), "ERR: ", 5) == 0);
    /* cut short inside the message */
    for (size_t cut = 3; cut < sizeof data - 1; cut++) {
        const char *r = decode(s, data, cut);
        if (strncmp(r, "ERR: ", 5) != 0 && r[0] != '{')
            test_fail(__FILE__, __LINE__, "cut %zu: %s", cut, r);
    }
    /* groups are refused */
    static const uint8_t group[] = {0x02, 0x02, 0x0b, 0x0c};
    ASSERT(strncmp(decode(s, group, sizeof group), "ERR: ", 5) == 0);
    reg_schema_free(s);
}
