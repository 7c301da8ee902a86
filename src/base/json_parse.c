/* The strict JSON reader (see json_parse.h for the contract).
 *
 * Recursive descent over text[0, len) with a position that only moves forward; the first error
 * is kept (with its offset) and ends the parse. Recursion is as deep as the nesting, which the
 * depth limit bounds (at most DEPTH_CAP whatever the caller asks, for the stack's sake). Values
 * are allocated from the document's arena as they are met; a container's children form a
 * singly linked list kept in order through a tail pointer. */
#include "base/json_parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/strbuf.h"

#define DEFAULT_DEPTH_MAX 32
#define DEFAULT_VALUES_MAX 65536
#define DEPTH_CAP 256

struct parser {
    const char *p;   /* the text */
    size_t len;      /* its bytes */
    size_t pos;      /* next byte to read */
    struct arena *a; /* the document's */
    int depth_max;
    size_t values_max;
    size_t values; /* made so far */
    int rc;        /* 0, or the first error */
    size_t err_pos;
    const char *why; /* static text, with rc */
};

static bool failed(struct parser *ps, int rc, const char *why)
{
    if (ps->rc == 0) {
        ps->rc = rc;
        ps->err_pos = ps->pos;
        ps->why = why;
    }
    return false;
}

static void skip_ws(struct parser *ps)
{
    while (ps->pos < ps->len) {
        char c = ps->p[ps->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return;
        ps->pos++;
    }
}

static struct json_value *new_value(struct parser *ps, enum json_type t)
{
    if (ps->values >= ps->values_max) {
        failed(ps, -ERR_TOO_LARGE, "too many values");
        return NULL;
    }
    ps->values++;
    struct json_value *v = arena_calloc(ps->a, 1, sizeof(*v));
    v->type = t;
    v->offset = ps->pos;
    return v;
}

static int hex4(const char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    return v;
}

static void put_utf8(char *out, size_t *n, uint32_t cp)
{
    if (cp < 0x80) {
        out[(*n)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*n)++] = (char)(0xc0 | (cp >> 6));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out[(*n)++] = (char)(0xe0 | (cp >> 12));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    } else {
        out[(*n)++] = (char)(0xf0 | (cp >> 18));
        out[(*n)++] = (char)(0x80 | ((cp >> 12) & 0x3f));
        out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[(*n)++] = (char)(0x80 | (cp & 0x3f));
    }
}

/* A \u escape at pos (after the backslash and 'u'), a surrogate pair taken whole. */
static bool unicode_escape(struct parser *ps, char *out, size_t *n)
{
    if (ps->len - ps->pos < 4)
        return failed(ps, -ERR_INVALID, "\\u needs four hex digits");
    int hi = hex4(ps->p + ps->pos);
    if (hi < 0)
        return failed(ps, -ERR_INVALID, "\\u needs four hex digits");
    ps->pos += 4;
    uint32_t cp = (uint32_t)hi;
    if (hi >= 0xdc00 && hi <= 0xdfff)
        return failed(ps, -ERR_INVALID, "a low surrogate without a high one");
    if (hi >= 0xd800 && hi <= 0xdbff) {
        if (ps->len - ps->pos < 6 || ps->p[ps->pos] != '\\' || ps->p[ps->pos + 1] != 'u')
            return failed(ps, -ERR_INVALID, "a high surrogate without a low one");
        int lo = hex4(ps->p + ps->pos + 2);
        if (lo < 0xdc00 || lo > 0xdfff)
            return failed(ps, -ERR_INVALID, "a high surrogate without a low one");
        ps->pos += 6;
        cp = 0x10000 + (((uint32_t)hi - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
    }
    put_utf8(out, n, cp);
    return true;
}

/* A string from pos (at its opening quote) into the arena. Decoded it is never longer than
 * its text (an escape of k bytes gives at most k bytes of UTF-8), so the text's length up to
 * the closing quote, found first, is the room it takes. */
static bool parse_string(struct parser *ps, const char **out, size_t *out_len)
{
    ps->pos++; /* the quote */
    size_t cap = 0;
    for (size_t i = ps->pos; i < ps->len && ps->p[i] != '"'; i++, cap++)
        if (ps->p[i] == '\\' && i + 1 < ps->len) {
            i++;
            cap++;
        }
    char *s = arena_alloc(ps->a, cap + 1);
    size_t n = 0;
    while (ps->pos < ps->len) {
        unsigned char c = (unsigned char)ps->p[ps->pos];
        if (c == '"') {
            ps->pos++;
            s[n] = '\0';
            *out = s;
            *out_len = n;
            return true;
        }
        if (c < 0x20)
            return failed(ps, -ERR_INVALID, "a control character in a string");
        if (c == '\\') {
            if (ps->pos + 1 >= ps->len)
                break;
            char e = ps->p[ps->pos + 1];
            ps->pos += 2;
            switch (e) {
            case '"':
            case '\\':
            case '/':
                s[n++] = e;
                break;
            case 'b':
                s[n++] = '\b';
                break;
            case 'f':
                s[n++] = '\f';
                break;
            case 'n':
                s[n++] = '\n';
                break;
            case 'r':
                s[n++] = '\r';
                break;
            case 't':
                s[n++] = '\t';
                break;
            case 'u':
                if (!unicode_escape(ps, s, &n))
                    return false;
                break;
            default:
                ps->pos -= 1;
                return failed(ps, -ERR_INVALID, "an unknown escape");
            }
            continue;
        }
        if (c < 0x80) {
            s[n++] = (char)c;
            ps->pos++;
            continue;
        }
        size_t k = utf8_seq_len((const unsigned char *)ps->p + ps->pos, ps->len - ps->pos);
        if (k == 0)
            return failed(ps, -ERR_INVALID, "ill-formed UTF-8 in a string");
        memcpy(s + n, ps->p + ps->pos, k);
        n += k;
        ps->pos += k;
    }
    return failed(ps, -ERR_INVALID, "an unterminated string");
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool parse_number(struct parser *ps, struct json_value *v)
{
    size_t s = ps->pos, i = s;
    const char *p = ps->p;
    if (i < ps->len && p[i] == '-')
        i++;
    if (i >= ps->len || !is_digit(p[i]))
        return failed(ps, -ERR_INVALID, "not a value");
    if (p[i] == '0') {
        i++;
    } else {
        while (i < ps->len && is_digit(p[i]))
            i++;
    }
    bool integer = true;
    if (i < ps->len && p[i] == '.') {
        integer = false;
        i++;
        if (i >= ps->len || !is_digit(p[i]))
            return failed(ps, -ERR_INVALID, "a digit must follow the decimal point");
        while (i < ps->len && is_digit(p[i]))
            i++;
    }
    if (i < ps->len && (p[i] == 'e' || p[i] == 'E')) {
        integer = false;
        i++;
        if (i < ps->len && (p[i] == '+' || p[i] == '-'))
            i++;
        if (i >= ps->len || !is_digit(p[i]))
            return failed(ps, -ERR_INVALID, "a digit must follow the exponent");
        while (i < ps->len && is_digit(p[i]))
            i++;
    }
    if (i - s > JSON_NUMBER_TEXT_MAX)
        return failed(ps, -ERR_TOO_LARGE, "a number longer than 64 characters");
    /* The literal stays with the value: callers that write numbers back as they were given
     * (schema registry canonical forms) need more than a double. */
    char *buf = arena_alloc(ps->a, i - s + 1);
    memcpy(buf, p + s, i - s);
    buf[i - s] = '\0';
    v->str = buf;
    v->str_len = i - s;
    v->integral = integer;
    v->number = strtod(buf, NULL);
    if (integer) {
        errno = 0;
        long long x = strtoll(buf, NULL, 10);
        v->is_int = errno == 0;
        v->int_value = v->is_int ? (int64_t)x : 0;
    }
    ps->pos = i;
    return true;
}

static bool parse_value(struct parser *ps, struct json_value **out, int depth);

static int member_cmp(const void *x, const void *y)
{
    const struct json_value *a = *(const struct json_value *const *)x;
    const struct json_value *b = *(const struct json_value *const *)y;
    if (a->key_len != b->key_len)
        return a->key_len < b->key_len ? -1 : 1;
    return memcmp(a->key, b->key, a->key_len);
}

/* Whether two members of o share a name: sorted, so hostile names cost O(n log n). */
static bool has_duplicate(struct parser *ps, const struct json_value *o)
{
    if (o->n < 2)
        return false;
    const struct json_value **m = arena_alloc(ps->a, o->n * sizeof(*m));
    size_t i = 0;
    for (const struct json_value *c = o->child; c; c = c->next)
        m[i++] = c;
    qsort(m, o->n, sizeof(*m), member_cmp);
    for (i = 1; i < o->n; i++)
        if (member_cmp(&m[i - 1], &m[i]) == 0)
            return true;
    return false;
}

static bool parse_container(struct parser *ps, struct json_value *v, int depth)
{
    bool obj = v->type == JSON_OBJECT;
    char close = obj ? '}' : ']';
    if (depth >= ps->depth_max)
        return failed(ps, -ERR_TOO_LARGE, "nested too deep");
    size_t open_at = ps->pos;
    ps->pos++; /* the opening bracket */
    skip_ws(ps);
    if (ps->pos < ps->len && ps->p[ps->pos] == close) {
        ps->pos++;
        return true;
    }
    struct json_value **tail = &v->child;
    for (;;) {
        const char *key = NULL;
        size_t key_len = 0;
        skip_ws(ps);
        if (obj) {
            if (ps->pos >= ps->len || ps->p[ps->pos] != '"')
                return failed(ps, -ERR_INVALID, "expected a member name");
            if (!parse_string(ps, &key, &key_len))
                return false;
            skip_ws(ps);
            if (ps->pos >= ps->len || ps->p[ps->pos] != ':')
                return failed(ps, -ERR_INVALID, "expected ':'");
            ps->pos++;
        }
        struct json_value *item;
        if (!parse_value(ps, &item, depth + 1))
            return false;
        item->key = key;
        item->key_len = key_len;
        *tail = item;
        tail = &item->next;
        v->n++;
        skip_ws(ps);
        if (ps->pos >= ps->len)
            return failed(ps, -ERR_INVALID, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        char c = ps->p[ps->pos++];
        if (c == close && obj && has_duplicate(ps, v)) {
            ps->pos = open_at;
            return failed(ps, -ERR_INVALID, "an object gives a member name twice");
        }
        if (c == close)
            return true;
        if (c != ',') {
            ps->pos--;
            return failed(ps, -ERR_INVALID, obj ? "expected ',' or '}'" : "expected ',' or ']'");
        }
    }
}

static bool literal(struct parser *ps, const char *word)
{
    size_t n = strlen(word);
    if (ps->len - ps->pos < n || memcmp(ps->p + ps->pos, word, n) != 0)
        return failed(ps, -ERR_INVALID, "not a value");
    ps->pos += n;
    return true;
}

static bool parse_value(struct parser *ps, struct json_value **out, int depth)
{
    skip_ws(ps);
    if (ps->pos >= ps->len)
        return failed(ps, -ERR_INVALID, "a value is missing");
    char c = ps->p[ps->pos];
    enum json_type t = c == '{'               ? JSON_OBJECT
                       : c == '['             ? JSON_ARRAY
                       : c == '"'             ? JSON_STRING
                       : c == 't' || c == 'f' ? JSON_BOOL
                       : c == 'n'             ? JSON_NULL
                                              : JSON_NUMBER;
    struct json_value *v = new_value(ps, t);
    if (!v)
        return false;
    *out = v;
    switch (t) {
    case JSON_OBJECT:
    case JSON_ARRAY:
        return parse_container(ps, v, depth);
    case JSON_STRING:
        return parse_string(ps, &v->str, &v->str_len);
    case JSON_BOOL:
        v->boolean = c == 't';
        return literal(ps, v->boolean ? "true" : "false");
    case JSON_NULL:
        return literal(ps, "null");
    case JSON_NUMBER:
        return parse_number(ps, v);
    }
    return false;
}

int json_parse(struct json_doc *doc, const char *text, size_t len, const struct json_limits *lim,
               char *err, size_t errcap)
{
    arena_init(&doc->arena, len < 1024 ? 1024 : 4096);
    doc->root = NULL;
    struct parser ps = {
        .p = text,
        .len = len,
        .a = &doc->arena,
        .depth_max = lim && lim->depth_max > 0 ? lim->depth_max : DEFAULT_DEPTH_MAX,
        .values_max = lim && lim->values_max > 0 ? lim->values_max : DEFAULT_VALUES_MAX,
    };
    if (ps.depth_max > DEPTH_CAP)
        ps.depth_max = DEPTH_CAP;
    struct json_value *root = NULL;
    if (parse_value(&ps, &root, 0)) {
        skip_ws(&ps);
        if (ps.pos < ps.len)
            failed(&ps, -ERR_INVALID, "text after the value");
    }
    if (ps.rc != 0) {
        if (errcap)
            snprintf(err, errcap, "at byte %zu: %s", ps.err_pos, ps.why);
        arena_reset(&doc->arena);
        return ps.rc;
    }
    doc->root = root;
    return 0;
}

void json_doc_free(struct json_doc *doc)
{
    arena_destroy(&doc->arena);
    doc->root = NULL;
}

const struct json_value *json_member(const struct json_value *o, const char *key)
{
    if (!o || o->type != JSON_OBJECT)
        return NULL;
    size_t kl = strlen(key);
    for (const struct json_value *m = o->child; m; m = m->next)
        if (m->key_len == kl && memcmp(m->key, key, kl) == 0)
            return m;
    return NULL;
}

const struct json_value *json_get(const struct json_value *o, const char *key, enum json_type t)
{
    const struct json_value *m = json_member(o, key);
    return m && m->type == t ? m : NULL;
}

int64_t json_int_or(const struct json_value *v, int64_t def)
{
    return v && v->type == JSON_NUMBER && v->is_int ? v->int_value : def;
}

int64_t json_get_int(const struct json_value *o, const char *key, int64_t def)
{
    return json_int_or(json_member(o, key), def);
}

const char *json_get_str(const struct json_value *o, const char *key, const char *def)
{
    const struct json_value *v = json_get(o, key, JSON_STRING);
    return v ? v->str : def;
}
