/* libFuzzer target: records decoded through their schemas (registry/schema.h
 * reg_schema_decode: Avro binary to JSON, Protobuf wire format to JSON), on bytes as any record
 * of a topic holds them.
 *
 * Input: one byte choosing the type (even: Avro, odd: Protobuf), the schema text up to the
 * first NUL, then the data. A schema that parses is given the data; the decoder must return 0
 * with valid JSON (checked with the strict reader) or -ERR_INVALID with a reason, never crash,
 * leak or read beyond the data (it is copied to an exact-size buffer). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/json_parse.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > 64 * 1024)
        return 0;
    enum reg_type t = data[0] & 1 ? REG_PROTOBUF : REG_AVRO;
    const uint8_t *nul = memchr(data + 1, 0, size - 1);
    if (!nul)
        return 0;
    size_t tlen = (size_t)(nul - data - 1);
    struct reg_schema *s = NULL;
    char err[REG_ERR_MAX];
    if (reg_schema_parse(t, (const char *)data + 1, tlen, NULL, 0, NULL, NULL, false, &s, err,
                         sizeof err) != 0)
        return 0;
    size_t n = size - tlen - 2;
    uint8_t *copy = mem_alloc(n ? n : 1);
    memcpy(copy, nul + 1, n);
    struct strbuf out;
    strbuf_init(&out);
    char why[256] = "";
    int rc = reg_schema_decode(s, copy, n, &out, why, sizeof why);
    if (rc == 0) {
        struct json_doc d = {0};
        struct json_limits lim = {.depth_max = 1000, .values_max = 1u << 24};
        char jerr[128];
        if (json_parse(&d, out.p ? out.p : "", out.len, &lim, jerr, sizeof jerr) != 0)
            abort(); /* the decoder wrote something that is not JSON */
        json_doc_free(&d);
    } else if (rc != -ERR_INVALID || !why[0]) {
        abort();
    }
    strbuf_destroy(&out);
    mem_free(copy);
    reg_schema_free(s);
    return 0;
}
