/* libFuzzer target: Avro schemas (registry/avro.h), as clients send them to the registry.
 *
 * The input is split at its first NUL into two schema texts A and B (B may be empty). Each is
 * parsed strictly and leniently (the lenient parse must accept whatever the strict one does);
 * a refusal must explain itself. For every accepted schema: the canonical and normalized
 * strings parse again (with the same flags) and give themselves back
 * (the lookup string is a fixed point), the PCF of the canonical string is the schema's PCF,
 * the normalized string is its own canonical string (as Confluent stores normalize=true),
 * the fingerprint is the CRC-64-AVRO of the PCF, and the schema reads itself. When both parse,
 * A and B are judged against each other both ways, and a verdict of "incompatible" always
 * comes with reasons. Inputs are copied to exact-size buffers, so an over-read is an ASan
 * report. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/avro.h"
#include "registry/compat_level.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct avro_schema *parse(const char *text, size_t len, unsigned flags)
{
    struct avro_parse_opts o = {.flags = flags};
    struct avro_schema *s = NULL;
    char err[256];
    err[0] = '\0';
    int rc = avro_schema_parse(text, len, &o, &s, err, sizeof(err));
    if (rc != 0 && (rc != -ERR_INVALID || s != NULL || !err[0]))
        abort();
    return s;
}

typedef void (*form_fn)(const struct avro_schema *, struct strbuf *);

/* f(parse(f(s))) == f(s). */
static void fixed_point(const struct avro_schema *s, form_fn f, unsigned flags)
{
    struct strbuf a, b;
    strbuf_init(&a);
    strbuf_init(&b);
    f(s, &a);
    struct avro_schema *again = parse(a.p, a.len, flags);
    if (!again)
        abort();
    f(again, &b);
    if (a.len != b.len || memcmp(a.p, b.p, a.len) != 0)
        abort();
    avro_schema_free(again);
    strbuf_destroy(&a);
    strbuf_destroy(&b);
}

static void check_one(const struct avro_schema *s, unsigned flags)
{
    fixed_point(s, avro_canonical, flags);
    fixed_point(s, avro_normalized, flags);
    /* Not the PCF: a null-namespace type inside a namespaced one is written as a bare name
     * there, which reads back as the enclosing namespace's (the form's known flaw, kept:
     * fingerprints must be Avro's). */
    struct strbuf pcf, canon, pcf2;
    strbuf_init(&pcf);
    strbuf_init(&canon);
    strbuf_init(&pcf2);
    avro_pcf(s, &pcf);
    if (avro_fingerprint(s) != avro_crc64(pcf.p, pcf.len))
        abort();
    avro_canonical(s, &canon);
    struct avro_schema *c = parse(canon.p, canon.len, flags);
    avro_pcf(c, &pcf2);
    if (pcf.len != pcf2.len || memcmp(pcf.p, pcf2.p, pcf.len) != 0)
        abort();
    avro_schema_free(c);
    /* What normalize=true registers is a schema whose lookup string is itself. */
    struct strbuf norm, norm_canon;
    strbuf_init(&norm);
    strbuf_init(&norm_canon);
    avro_normalized(s, &norm);
    struct avro_schema *n = parse(norm.p, norm.len, flags);
    avro_canonical(n, &norm_canon);
    if (norm.len != norm_canon.len || memcmp(norm.p, norm_canon.p, norm.len) != 0)
        abort();
    avro_schema_free(n);
    strbuf_destroy(&norm);
    strbuf_destroy(&norm_canon);
    strbuf_destroy(&pcf);
    strbuf_destroy(&canon);
    strbuf_destroy(&pcf2);
    struct compat_reasons r;
    compat_reasons_init(&r);
    if (!avro_can_read(s, s, "new", "old", &r) || r.n != 0)
        abort();
    compat_reasons_free(&r);
}

static void check_pair(const struct avro_schema *a, const struct avro_schema *b)
{
    for (int dir = 0; dir < 2; dir++) {
        const struct avro_schema *r = dir ? b : a, *w = dir ? a : b;
        struct compat_reasons reasons;
        compat_reasons_init(&reasons);
        bool ok = avro_can_read(r, w, "new", "old", &reasons);
        if (ok != (reasons.n == 0))
            abort();
        if (avro_can_read(r, w, "new", "old", NULL) != ok)
            abort();
        compat_reasons_free(&reasons);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t alen = nul ? (size_t)(nul - data) : size;
    size_t blen = nul ? size - alen - 1 : 0;
    char *a = mem_alloc(alen ? alen : 1), *b = mem_alloc(blen ? blen : 1);
    memcpy(a, data, alen);
    if (blen)
        memcpy(b, nul + 1, blen);

    struct avro_schema *sa = parse(a, alen, 0), *la = parse(a, alen, AVRO_PARSE_LENIENT);
    if (sa && !la)
        abort();
    if (sa)
        check_one(sa, 0);
    if (la)
        check_one(la, AVRO_PARSE_LENIENT);
    struct avro_schema *sb = nul ? parse(b, blen, 0) : NULL;
    if (sb)
        check_one(sb, 0);
    if (sa && sb)
        check_pair(sa, sb);
    avro_schema_free(sa);
    avro_schema_free(la);
    avro_schema_free(sb);
    mem_free(a);
    mem_free(b);
    return 0;
}
