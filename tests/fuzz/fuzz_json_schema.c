/* libFuzzer target: the registry's JSON schemas (registry/json_schema.h), text from clients.
 *
 * The input up to its first NUL is the schema (in an exact-size copy, so any over-read is an
 * ASan report); what follows is the text of "dep.json", the one schema reference the lookup
 * knows. Checked: a refusal has a message; an accepted schema prints a canonical and a
 * normalized form, each of which parses back (with the same reference) and prints the same
 * again; the schema reads itself, its canonical re-parse both ways and its normalized one, with
 * no reason (unless the comparison gave up). When
 * dep.json parses as a schema of its own, it and the schema are compared both ways: a verdict
 * has reasons exactly when it is a refusal. A comparison that gave up (TOO_COMPLEX, past the
 * pair budget) is a refusal with a reason too, so the checks hold for it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/json_schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct dep {
    const char *text;
    size_t len;
};

static int lookup(const char *url, struct json_schema_source *src, void *data)
{
    const struct dep *d = data;
    if (!d->text || strcmp(url, "dep.json") != 0)
        return -ERR_NOT_FOUND;
    src->text = d->text;
    src->len = d->len;
    return 0;
}

static struct json_schema *parse(const char *text, size_t len, struct dep *d)
{
    char *copy = mem_alloc(len ? len : 1);
    memcpy(copy, text, len);
    char err[JSON_SCHEMA_ERR_MAX];
    struct json_schema *s = NULL;
    int rc = json_schema_parse(copy, len, lookup, d, &s, err, sizeof(err));
    mem_free(copy);
    if (rc != 0 && ((rc != -ERR_INVALID && rc != -ERR_TOO_LARGE) || s != NULL || err[0] == '\0'))
        abort();
    return s;
}

/* Prints s, parses the print, prints that: the two prints must agree. */
static struct json_schema *reprint(const struct json_schema *s, bool normalize, struct dep *d)
{
    struct strbuf a, b;
    strbuf_init(&a);
    strbuf_init(&b);
    json_schema_canonical(s, normalize, &a);
    struct json_schema *t = parse(strbuf_str(&a), a.len, d);
    if (!t)
        abort();
    json_schema_canonical(t, normalize, &b);
    if (a.len != b.len || memcmp(strbuf_str(&a), strbuf_str(&b), a.len) != 0)
        abort();
    strbuf_destroy(&a);
    strbuf_destroy(&b);
    return t;
}

/* One directed verdict: reasons exactly when it is a refusal; with must, a refusal only for
 * giving up. */
static void judged(const struct json_schema *reader, const struct json_schema *writer, bool must)
{
    struct compat_reasons why;
    compat_reasons_init(&why);
    bool ok = json_schema_can_read(reader, writer, "new", "old", &why);
    if (ok != (why.n == 0) || ok != json_schema_can_read(reader, writer, NULL, NULL, NULL))
        abort();
    for (size_t i = 0; must && i < why.n; i++)
        if (!strstr(why.items[i], "TOO_COMPLEX"))
            abort();
    compat_reasons_free(&why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    const char *nul = memchr(p, '\0', size);
    size_t len = nul ? (size_t)(nul - p) : size;
    struct dep d = {NULL, 0};
    if (nul) {
        d.text = nul + 1;
        d.len = size - len - 1;
    }
    struct json_schema *s = parse(p, len, &d);
    if (!s)
        return 0;
    struct json_schema *c = reprint(s, false, &d);
    struct json_schema *n = reprint(s, true, &d);
    judged(s, s, true);
    judged(s, c, true);
    judged(c, s, true);
    judged(n, s, true);
    if (d.text) {
        struct dep none = {NULL, 0};
        struct json_schema *o = parse(d.text, d.len, &none);
        if (o) {
            judged(o, s, false);
            judged(s, o, false);
        }
        json_schema_free(o);
    }
    json_schema_free(n);
    json_schema_free(c);
    json_schema_free(s);
    return 0;
}
