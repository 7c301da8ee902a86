/* libFuzzer target: the strict JSON reader (base/json_parse.h), given bytes as a client would.
 *
 * Checked on every input: a refusal is one of the documented codes with "at byte N: reason",
 * N within the input; an accepted document has every value's offset within the input, member
 * names exactly on object members, counts that match the children, strings (and names) that
 * are well-formed UTF-8 of the stated length, numbers whose literal is as long as allowed and
 * consistent with is_int and integral; written back out (compactly, strings escaped, numbers as
 * their literals) it parses again to the same tree; and a tighter depth limit never turns a
 * refusal into an acceptance. Inputs are copied to an exact-size buffer, so an over-read is an
 * ASan report. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static void walk(const struct json_value *v, size_t size, bool member, struct strbuf *o)
{
    if (v->offset >= size || (member != (v->key != NULL)))
        abort();
    if (member) {
        check_str(v->key, v->key_len);
        put_str(o, v->key, v->key_len);
        strbuf_putc(o, ':');
    }
    switch (v->type) {
    case JSON_NULL:
        strbuf_puts(o, "null");
        break;
    case JSON_BOOL:
        strbuf_puts(o, v->boolean ? "true" : "false");
        break;
    case JSON_NUMBER:
        if (!v->str || v->str_len == 0 || v->str_len > JSON_NUMBER_TEXT_MAX ||
            v->str[v->str_len] != '\0' || (v->is_int && !v->integral))
            abort();
        if (v->integral != (strpbrk(v->str, ".eE") == NULL))
            abort();
        strbuf_append(o, v->str, v->str_len);
        break;
    case JSON_STRING:
        check_str(v->str, v->str_len);
        put_str(o, v->str, v->str_len);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT: {
        bool obj = v->type == JSON_OBJECT;
        strbuf_putc(o, obj ? '{' : '[');
        size_t n = 0;
        for (const struct json_value *c = v->child; c; c = c->next, n++) {
            if (c != v->child)
                strbuf_putc(o, ',');
            walk(c, size, obj, o);
        }
        if (n != v->n)
            abort();
        strbuf_putc(o, obj ? '}' : ']');
        break;
    }
    }
}

static bool same(const struct json_value *a, const struct json_value *b)
{
    if (a->type != b->type || a->key_len != b->key_len ||
        (a->key && memcmp(a->key, b->key, a->key_len) != 0))
        return false;
    switch (a->type) {
    case JSON_NULL:
        return true;
    case JSON_BOOL:
        return a->boolean == b->boolean;
    case JSON_NUMBER:
    case JSON_STRING:
        return a->str_len == b->str_len && memcmp(a->str, b->str, a->str_len) == 0 &&
               a->is_int == b->is_int && (!a->is_int || a->int_value == b->int_value);
    case JSON_ARRAY:
    case JSON_OBJECT:
        if (a->n != b->n)
            return false;
        for (const struct json_value *x = a->child, *y = b->child; x; x = x->next, y = y->next)
            if (!same(x, y))
                return false;
        return true;
    }
    return false;
}

static void check_refusal(int rc, const char *err, size_t size)
{
    size_t at;
    if ((rc != -ERR_INVALID && rc != -ERR_TOO_LARGE) || sscanf(err, "at byte %zu: ", &at) != 1 ||
        at > size || !strchr(err, ':')[1])
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = mem_alloc(size ? size : 1);
    memcpy(text, data, size);
    struct json_doc doc, again;
    char err[128];
    struct json_limits lim = {.depth_max = 24, .values_max = 4096};
    int rc = json_parse(&doc, text, size, &lim, err, sizeof(err));
    if (rc != 0) {
        check_refusal(rc, err, size);
        struct json_limits tight = {.depth_max = 4, .values_max = 4096};
        if (json_parse(&again, text, size, &tight, err, sizeof(err)) == 0)
            abort();
        json_doc_free(&again);
        goto out;
    }
    struct strbuf o;
    strbuf_init(&o);
    walk(doc.root, size, false, &o);
    if (json_parse(&again, o.p, o.len, &lim, err, sizeof(err)) != 0 || !same(doc.root, again.root))
        abort();
    json_doc_free(&again);
    strbuf_destroy(&o);
out:
    json_doc_free(&doc);
    mem_free(text);
    return 0;
}
