/* libFuzzer target: the registry's Protobuf schemas (registry/protobuf.h), text from clients.
 *
 * The input up to its first NUL is the schema (in an exact-size copy, so any over-read is an
 * ASan report); what follows is the text of "dep.proto", the one schema reference the lookup
 * knows (the built-in well-known files are there too). Checked: a refusal has a message; an
 * accepted schema prints a canonical and a normalized form, each of which parses back (with
 * the same references) and prints the same again; the schema can read itself, and it and its
 * canonical re-parse read each other; the default message's indexes lead back to its name.
 * When dep.proto parses as a schema of its own, it and the schema are compared both ways: a
 * verdict has reasons exactly when it is a refusal. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/protobuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct dep {
    const char *text;
    size_t len;
};

static int lookup(const char *name, struct proto_source *src, void *data)
{
    const struct dep *d = data;
    if (!d->text || strcmp(name, "dep.proto") != 0)
        return -ERR_NOT_FOUND;
    src->text = d->text;
    src->len = d->len;
    src->id = "dep.proto/1";
    return 0;
}

static struct proto_schema *parse(const char *text, size_t len, struct dep *d)
{
    char *copy = mem_alloc(len ? len : 1);
    memcpy(copy, text, len);
    char err[PROTO_ERR_MAX];
    struct proto_schema *s = NULL;
    int rc = proto_parse(copy, len, lookup, d, &s, err, sizeof(err));
    mem_free(copy);
    if (rc != 0 && (rc != -ERR_INVALID || s != NULL || err[0] == '\0'))
        abort();
    return s;
}

/* Prints s, parses the print, prints that: the two prints must agree. */
static struct proto_schema *reprint(const struct proto_schema *s, bool normalize, struct dep *d)
{
    struct strbuf a, b;
    strbuf_init(&a);
    strbuf_init(&b);
    proto_canonical(s, normalize, &a);
    struct proto_schema *t = parse(a.p ? a.p : "", a.len, d);
    if (!t)
        abort();
    proto_canonical(t, normalize, &b);
    if (a.len != b.len || memcmp(strbuf_str(&a), strbuf_str(&b), a.len) != 0)
        abort();
    strbuf_destroy(&a);
    strbuf_destroy(&b);
    return t;
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
    struct proto_schema *s = parse(p, len, &d);
    if (!s)
        return 0;
    struct proto_schema *c = reprint(s, false, &d);
    struct proto_schema *n = reprint(s, true, &d);
    struct proto_reasons r = {0};
    if (!proto_can_read(s, s, "new", "old", &r) || r.n != 0)
        abort();
    if (!proto_can_read(s, c, NULL, NULL, NULL) || !proto_can_read(c, s, NULL, NULL, NULL))
        abort();
    const char *name = proto_default_name(s);
    int32_t idx[PROTO_INDEXES_MAX];
    size_t k;
    if (name && proto_message_indexes(s, name, idx, &k) == 0) {
        struct strbuf b;
        strbuf_init(&b);
        if (proto_message_name(s, idx, k, &b) != 0 || strcmp(strbuf_str(&b), name) != 0)
            abort();
        strbuf_destroy(&b);
    }
    if (d.text) {
        struct dep none = {NULL, 0};
        struct proto_schema *o = parse(d.text, d.len, &none);
        for (int dir = 0; o && dir < 2; dir++) {
            struct proto_reasons why = {0};
            bool ok = dir ? proto_can_read(o, s, "new", "old", &why)
                          : proto_can_read(s, o, "new", "old", &why);
            if (ok != (why.n == 0))
                abort();
            proto_reasons_free(&why);
        }
        proto_free(o);
    }
    proto_free(n);
    proto_free(c);
    proto_free(s);
    return 0;
}
