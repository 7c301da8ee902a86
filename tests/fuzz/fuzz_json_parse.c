/* libFuzzer target: the strict JSON parser (base/json_parse.h), given bytes as a client would.
 *
 * Checked on every input: a refusal has a reason and an offset within the input; an accepted
 * document has every node's offset within the input, strings that are well-formed UTF-8 of the
 * stated length, numbers whose literal starts as JSON numbers do; written back out (compactly,
 * strings escaped) it parses again to an equal tree; parsing with duplicate keys refused
 * agrees with the duplicates reported; and a tighter depth limit never turns a refusal into an
 * acceptance. Inputs are copied to an exact-size buffer, so an over-read is an ASan report. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/errors.h"
#include "base/json_parse.h"
#include "base/mem.h"
#include "base/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put_str(struct strbuf *o, const char *s, size_t n)
{
    strbuf_putc(o, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == '"' || c == '\\')
            strbuf_printf(o, "\\u%04x", c);
        else
            strbuf_putc(o, (char)c);
    }
    strbuf_putc(o, '"');
}

static void check_str(const char *s, size_t n)
{
    if (!s || s[n] != '\0')
        abort();
    for (size_t i = 0; i < n;) {
        size_t l = utf8_seq_len((const unsigned char *)s + i, n - i);
        if (l == 0)
            abort();
        i += l;
    }
}

static void walk(const struct json_value *v, size_t size, struct strbuf *o, bool *dups)
{
    if (v->offset >= size)
        abort();
    switch (v->type) {
    case JSON_NULL:
        strbuf_puts(o, "null");
        break;
    case JSON_TRUE:
        strbuf_puts(o, "true");
        break;
    case JSON_FALSE:
        strbuf_puts(o, "false");
        break;
    case JSON_NUMBER:
        if (!v->str || v->len == 0 || v->str[v->len] != '\0' ||
            !(v->str[0] == '-' || (v->str[0] >= '0' && v->str[0] <= '9')))
            abort();
        if (v->i64_ok && !v->is_integer)
            abort();
        strbuf_append(o, v->str, v->len);
        break;
    case JSON_STRING:
        check_str(v->str, v->len);
        put_str(o, v->str, v->len);
        break;
    case JSON_ARRAY:
        strbuf_putc(o, '[');
        for (size_t i = 0; i < v->n; i++) {
            if (i)
                strbuf_putc(o, ',');
            walk(v->items[i], size, o, dups);
        }
        strbuf_putc(o, ']');
        break;
    case JSON_OBJECT:
        *dups |= v->dup_keys;
        strbuf_putc(o, '{');
        for (size_t i = 0; i < v->n; i++) {
            const struct json_member *m = &v->members[i];
            check_str(m->key, m->key_len);
            if (m->key_offset >= size)
                abort();
            if (i)
                strbuf_putc(o, ',');
            put_str(o, m->key, m->key_len);
            strbuf_putc(o, ':');
            walk(m->value, size, o, dups);
        }
        strbuf_putc(o, '}');
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = mem_alloc(size ? size : 1);
    memcpy(text, data, size);
    struct arena a;
    arena_init(&a, 0);
    struct json_doc doc;
    struct json_parse_error err;
    struct json_parse_opts opts = {.depth_max = 32};
    int rc = json_parse(text, size, &opts, &a, &doc, &err);
    if (rc != 0) {
        if ((rc != -ERR_INVALID && rc != -ERR_LIMIT) || !err.reason[0] || err.offset > size)
            abort();
        struct json_parse_opts tight = {.depth_max = 4};
        struct json_doc d2;
        if (json_parse(text, size, &tight, &a, &d2, &err) == 0)
            abort();
        goto out;
    }
    struct strbuf o;
    strbuf_init(&o);
    bool dups = false;
    walk(doc.root, size, &o, &dups);
    if (dups != (doc.first_dup_offset != SIZE_MAX))
        abort();
    if (dups && doc.first_dup_offset >= size)
        abort();

    struct json_doc again;
    if (json_parse(o.p, o.len, &opts, &a, &again, &err) != 0 ||
        !json_value_equal(doc.root, again.root) || !json_value_equal(again.root, doc.root))
        abort();

    struct json_parse_opts strict = {.depth_max = 32, .flags = JSON_PARSE_REJECT_DUP_KEYS};
    int src = json_parse(text, size, &strict, &a, &again, &err);
    if (dups ? (src != -ERR_INVALID || err.offset < doc.first_dup_offset) : src != 0)
        abort();
    strbuf_destroy(&o);
out:
    arena_destroy(&a);
    mem_free(text);
    return 0;
}
