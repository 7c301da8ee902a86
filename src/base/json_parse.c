/* The strict JSON parser (contract in base/json_parse.h).
 *
 * One pass over the input with an explicit stack of open containers, so nesting is bounded by
 * the depth limit rather than the C stack. Each open container gathers its items (or members)
 * in a growable buffer of its own frame; when it closes they are copied into the arena at
 * their final size, so the tree holds no slack.
 *
 * Invariants:
 *   1. stack[0, depth) are the open containers, innermost last; depth <= depth_max.
 *   2. want is what the grammar allows next: a value, an object key, or (after a value) a
 *      separator or the innermost container's close.
 *   3. Every byte consumed belongs to the grammar: an error stops at the first one that does
 *      not, and reports its offset. */
#include "base/json_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "base/strbuf.h"

struct frame {
    struct json_value *v; /* the container being filled */
    void *buf;            /* items (array) or members (object) so far */
    size_t n;             /* entries in buf */
    size_t cap;           /* capacity of buf, in entries */
};

struct parser {
    const unsigned char *p; /* the input */
    size_t len;             /* its length */
    size_t pos;             /* next byte to read */
    struct arena *a;
    int depth_max;
    unsigned flags;
    struct frame *stack; /* open containers, innermost last */
    size_t depth;        /* open containers */
    size_t stack_cap;
    size_t first_dup; /* offset of the first duplicate key, or SIZE_MAX */
    struct json_parse_error *err;
    int rc; /* the error code once set */
};

static int fail(struct parser *ps, int rc, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(struct parser *ps, int rc, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err->reason, sizeof(ps->err->reason), fmt, ap);
    va_end(ap);
    ps->err->offset = at;
    ps->rc = rc;
    return rc;
}

static void skip_ws(struct parser *ps)
{
    while (ps->pos < ps->len) {
        unsigned char c = ps->p[ps->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        ps->pos++;
    }
}

static int byte_at(const struct parser *ps, size_t i)
{
    return i < ps->len ? ps->p[i] : -1;
}

static int peek(const struct parser *ps)
{
    return byte_at(ps, ps->pos);
}

static struct json_value *new_value(struct parser *ps, enum json_type t, size_t at)
{
    struct json_value *v = arena_calloc(ps->a, 1, sizeof(*v));
    v->type = t;
    v->offset = at;
    return v;
}

static const char *describe(int c)
{
    static _Thread_local char buf[16];
    if (c < 0)
        return "end of input";
    if (c >= 0x20 && c < 0x7f)
        snprintf(buf, sizeof(buf), "'%c'", c);
    else
        snprintf(buf, sizeof(buf), "byte 0x%02x", c);
    return buf;
}

/* ---- strings ---- */

static int hex4(const unsigned char *p, uint32_t *out)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* A \u escape at p[i] (pointing at the backslash); on success *cp is the code point (a
 * surrogate pair combined) and *used the bytes consumed. */
static int unicode_escape(struct parser *ps, size_t i, size_t end, uint32_t *cp, size_t *used)
{
    const unsigned char *p = ps->p;
    uint32_t hi;
    if (end - i < 6 || hex4(p + i + 2, &hi) != 0)
        return fail(ps, -ERR_INVALID, i, "bad \\u escape: four hex digits expected");
    if (hi >= 0xdc00 && hi <= 0xdfff)
        return fail(ps, -ERR_INVALID, i, "lone low surrogate \\u%04x", (unsigned)hi);
    if (hi < 0xd800 || hi > 0xdbff) {
        *cp = hi;
        *used = 6;
        return 0;
    }
    uint32_t lo;
    if (end - i < 12 || p[i + 6] != '\\' || p[i + 7] != 'u' || hex4(p + i + 8, &lo) != 0 ||
        lo < 0xdc00 || lo > 0xdfff)
        return fail(ps, -ERR_INVALID, i, "lone high surrogate \\u%04x", (unsigned)hi);
    *cp = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
    *used = 12;
    return 0;
}

/* A string starting at the opening quote at pos: *out (arena) is its decoded text. */
static int parse_string(struct parser *ps, const char **out, size_t *out_len)
{
    const unsigned char *p = ps->p;
    size_t start = ps->pos + 1, end = start;
    /* First pass: find the closing quote, so the decoded text (never longer) can be
     * allocated once at the raw length. */
    while (end < ps->len && p[end] != '"')
        end += p[end] == '\\' ? 2 : 1;
    if (end >= ps->len)
        return fail(ps, -ERR_INVALID, ps->pos, "unterminated string");
    char *o = arena_alloc(ps->a, end - start + 1);
    size_t n = 0, i = start;
    while (i < end) {
        unsigned char c = p[i];
        if (c < 0x20)
            return fail(ps, -ERR_INVALID, i, "unescaped control character 0x%02x in string", c);
        if (c >= 0x80) {
            size_t sl = utf8_seq_len(p + i, end - i);
            if (sl == 0)
                return fail(ps, -ERR_INVALID, i, "ill-formed UTF-8 in string");
            memcpy(o + n, p + i, sl);
            n += sl;
            i += sl;
            continue;
        }
        if (c != '\\') {
            o[n++] = (char)c;
            i++;
            continue;
        }
        char e = (char)p[i + 1];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *hit = e ? strchr(from, e) : NULL;
        if (hit) {
            o[n++] = to[hit - from];
            i += 2;
            continue;
        }
        if (e != 'u')
            return fail(ps, -ERR_INVALID, i, "bad escape \\%s in string",
                        describe((unsigned char)e));
        uint32_t cp = 0;
        size_t used = 0;
        if (unicode_escape(ps, i, end, &cp, &used) != 0)
            return ps->rc;
        n += put_utf8(o + n, cp);
        i += used;
    }
    o[n] = '\0';
    *out = o;
    *out_len = n;
    ps->pos = end + 1;
    return 0;
}

/* ---- numbers ---- */

static size_t digits(const struct parser *ps, size_t i)
{
    while (i < ps->len && ps->p[i] >= '0' && ps->p[i] <= '9')
        i++;
    return i;
}

static int parse_number(struct parser *ps, struct json_value *v)
{
    const unsigned char *p = ps->p;
    size_t start = ps->pos, i = start;
    bool neg = false;
    if (p[i] == '-') {
        neg = true;
        i++;
    }
    if (i >= ps->len || p[i] < '0' || p[i] > '9')
        return fail(ps, -ERR_INVALID, i, "a digit expected in number, found %s",
                    describe(byte_at(ps, i)));
    size_t int_start = i;
    if (p[i] == '0') {
        i++;
        if (i < ps->len && p[i] >= '0' && p[i] <= '9')
            return fail(ps, -ERR_INVALID, int_start, "leading zero in number");
    } else {
        i = digits(ps, i);
    }
    size_t int_end = i;
    bool integer = true;
    if (i < ps->len && p[i] == '.') {
        integer = false;
        size_t f = digits(ps, i + 1);
        if (f == i + 1)
            return fail(ps, -ERR_INVALID, i + 1, "a digit expected after the decimal point");
        i = f;
    }
    if (i < ps->len && (p[i] == 'e' || p[i] == 'E')) {
        integer = false;
        i++;
        if (i < ps->len && (p[i] == '+' || p[i] == '-'))
            i++;
        size_t e = digits(ps, i);
        if (e == i)
            return fail(ps, -ERR_INVALID, i, "a digit expected in the exponent");
        i = e;
    }
    v->str = arena_strndup(ps->a, (const char *)p + start, i - start);
    v->len = i - start;
    v->is_integer = integer;
    if (integer) {
        /* Accumulate as a negative number, whose range is the larger. */
        int64_t acc = 0;
        bool ok = true;
        for (size_t k = int_start; k < int_end && ok; k++) {
            int d = p[k] - '0';
            if (acc < (INT64_MIN + d) / 10)
                ok = false;
            else
                acc = acc * 10 - d;
        }
        if (ok && !neg && acc == INT64_MIN)
            ok = false;
        v->i64_ok = ok;
        v->i64 = ok ? (neg ? acc : -acc) : 0;
    }
    errno = 0;
    v->f64 = strtod(v->str, NULL); /* overflow gives +-HUGE_VAL: valid JSON, the caller's call */
    ps->pos = i;
    return 0;
}

/* ---- literals ---- */

static int parse_literal(struct parser *ps, struct json_value **out)
{
    static const struct {
        const char *word;
        enum json_type t;
    } lits[] = {{"true", JSON_TRUE}, {"false", JSON_FALSE}, {"null", JSON_NULL}};
    for (size_t k = 0; k < ARRAY_LEN(lits); k++) {
        size_t wl = strlen(lits[k].word);
        if (ps->len - ps->pos >= wl && memcmp(ps->p + ps->pos, lits[k].word, wl) == 0) {
            *out = new_value(ps, lits[k].t, ps->pos);
            ps->pos += wl;
            return 0;
        }
    }
    return fail(ps, -ERR_INVALID, ps->pos, "unexpected %s where a value was expected",
                describe(peek(ps)));
}

/* ---- containers ---- */

static int push(struct parser *ps, struct json_value *v)
{
    if ((int)ps->depth >= ps->depth_max)
        return fail(ps, -ERR_LIMIT, v->offset, "nesting deeper than %d", ps->depth_max);
    MEM_GROW(ps->stack, ps->stack_cap, ps->depth + 1);
    ps->stack[ps->depth++] = (struct frame){.v = v};
    return 0;
}

static int member_cmp(const void *a, const void *b)
{
    const struct json_member *x = *(const struct json_member *const *)a;
    const struct json_member *y = *(const struct json_member *const *)b;
    size_t n = MIN(x->key_len, y->key_len);
    int c = memcmp(x->key, y->key, n);
    if (c != 0)
        return c;
    if (x->key_len != y->key_len)
        return x->key_len < y->key_len ? -1 : 1;
    return x->key_offset < y->key_offset ? -1 : x->key_offset > y->key_offset;
}

static bool same_key(const struct json_member *x, const struct json_member *y)
{
    return x->key_len == y->key_len && memcmp(x->key, y->key, x->key_len) == 0;
}

/* The offset of the first duplicate key (in document order) of m[0, n), or SIZE_MAX. Sorting
 * keeps a big object O(n log n); small ones compare pairwise. */
static size_t find_dup(const struct json_member *m, size_t n)
{
    size_t best = SIZE_MAX;
    if (n <= 16) {
        for (size_t i = 1; i < n; i++)
            for (size_t j = 0; j < i; j++)
                if (same_key(&m[i], &m[j]) && m[i].key_offset < best)
                    best = m[i].key_offset;
        return best;
    }
    const struct json_member **s = mem_alloc(n * sizeof(*s));
    for (size_t i = 0; i < n; i++)
        s[i] = &m[i];
    qsort(s, n, sizeof(*s), member_cmp);
    for (size_t i = 1; i < n; i++)
        if (same_key(s[i], s[i - 1]) && s[i]->key_offset < best)
            best = s[i]->key_offset; /* s[i] is the later of an equal pair (stable by offset) */
    mem_free(s);
    return best;
}

/* Closes the innermost container: its entries move into the arena. */
static int pop(struct parser *ps, struct json_value **out)
{
    struct frame *f = &ps->stack[--ps->depth];
    struct json_value *v = f->v;
    v->n = f->n;
    if (v->type == JSON_ARRAY) {
        v->items = arena_alloc(ps->a, f->n * sizeof(*v->items) + 1);
        if (f->n)
            memcpy(v->items, f->buf, f->n * sizeof(*v->items));
    } else {
        v->members = arena_alloc(ps->a, f->n * sizeof(*v->members) + 1);
        if (f->n)
            memcpy(v->members, f->buf, f->n * sizeof(*v->members));
        size_t dup = find_dup(v->members, v->n);
        if (dup != SIZE_MAX) {
            v->dup_keys = true;
            if (dup < ps->first_dup)
                ps->first_dup = dup;
            if (ps->flags & JSON_PARSE_REJECT_DUP_KEYS) {
                mem_free(f->buf);
                return fail(ps, -ERR_INVALID, dup, "duplicate key in object");
            }
        }
    }
    mem_free(f->buf);
    *out = v;
    return 0;
}

static void add_item(struct frame *f, struct json_value *item)
{
    struct json_value **items = f->buf;
    MEM_GROW(items, f->cap, f->n + 1);
    items[f->n++] = item;
    f->buf = items;
}

/* Reads `"key" :` into a new member of the innermost object (its value comes next). */
static int parse_key(struct parser *ps)
{
    skip_ws(ps);
    if (peek(ps) != '"')
        return fail(ps, -ERR_INVALID, ps->pos, "a string key expected in object, found %s",
                    describe(peek(ps)));
    struct frame *f = &ps->stack[ps->depth - 1];
    struct json_member m = {.key_offset = ps->pos};
    if (parse_string(ps, &m.key, &m.key_len) != 0)
        return ps->rc;
    skip_ws(ps);
    if (peek(ps) != ':')
        return fail(ps, -ERR_INVALID, ps->pos, "':' expected after object key, found %s",
                    describe(peek(ps)));
    ps->pos++;
    struct json_member *ms = f->buf;
    MEM_GROW(ms, f->cap, f->n + 1);
    ms[f->n++] = m;
    f->buf = ms;
    return 0;
}

/* One value at pos; containers are pushed (their first entry, or their close, is read by the
 * caller's loop). *out is the finished value, or NULL when a container was opened. */
static int parse_value(struct parser *ps, struct json_value **out)
{
    skip_ws(ps);
    *out = NULL;
    int c = peek(ps);
    size_t at = ps->pos;
    if (c == '{' || c == '[') {
        struct json_value *v = new_value(ps, c == '{' ? JSON_OBJECT : JSON_ARRAY, at);
        if (push(ps, v) != 0)
            return ps->rc;
        ps->pos++;
        skip_ws(ps);
        int close = c == '{' ? '}' : ']';
        if (peek(ps) == close) {
            ps->pos++;
            return pop(ps, out);
        }
        return c == '{' ? parse_key(ps) : 0;
    }
    if (c == '"') {
        struct json_value *v = new_value(ps, JSON_STRING, at);
        if (parse_string(ps, &v->str, &v->len) != 0)
            return ps->rc;
        *out = v;
        return 0;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
        struct json_value *v = new_value(ps, JSON_NUMBER, at);
        if (parse_number(ps, v) != 0)
            return ps->rc;
        *out = v;
        return 0;
    }
    if (c < 0)
        return fail(ps, -ERR_INVALID, at, "a value expected, found end of input");
    return parse_literal(ps, out);
}

/* After a finished value v: file it into the innermost container, then read the separator or
 * close that follows. *next_value is set when another value is due; *out when the innermost
 * container closed (and so is itself a finished value). */
static int after_value(struct parser *ps, struct json_value *v, bool *next_value,
                       struct json_value **out)
{
    struct frame *f = &ps->stack[ps->depth - 1];
    bool object = f->v->type == JSON_OBJECT;
    if (object)
        ((struct json_member *)f->buf)[f->n - 1].value = v;
    else
        add_item(f, v);
    *next_value = false;
    *out = NULL;
    skip_ws(ps);
    int c = peek(ps);
    if (c == ',') {
        ps->pos++;
        skip_ws(ps);
        int close = object ? '}' : ']';
        if (peek(ps) == close)
            return fail(ps, -ERR_INVALID, ps->pos, "trailing comma in %s",
                        object ? "object" : "array");
        *next_value = true;
        return object ? parse_key(ps) : 0;
    }
    if ((object && c == '}') || (!object && c == ']')) {
        ps->pos++;
        return pop(ps, out);
    }
    return fail(ps, -ERR_INVALID, ps->pos, "',' or '%c' expected in %s, found %s",
                object ? '}' : ']', object ? "object" : "array", describe(c));
}

static int run(struct parser *ps, struct json_value **root)
{
    struct json_value *v;
    if (parse_value(ps, &v) != 0)
        return ps->rc;
    for (;;) {
        if (!v) { /* a container opened: its first value is due */
            if (parse_value(ps, &v) != 0)
                return ps->rc;
            continue;
        }
        if (ps->depth == 0)
            break;
        bool next_value;
        struct json_value *closed;
        if (after_value(ps, v, &next_value, &closed) != 0)
            return ps->rc;
        if (next_value) {
            if (parse_value(ps, &v) != 0)
                return ps->rc;
        } else {
            v = closed;
        }
    }
    skip_ws(ps);
    if (ps->pos != ps->len)
        return fail(ps, -ERR_INVALID, ps->pos, "trailing characters after the value: %s",
                    describe(peek(ps)));
    *root = v;
    return 0;
}

int json_parse(const char *text, size_t len, const struct json_parse_opts *opts, struct arena *a,
               struct json_doc *doc, struct json_parse_error *err)
{
    struct parser ps = {
        .p = (const unsigned char *)text,
        .len = len,
        .a = a,
        .depth_max = opts && opts->depth_max > 0 ? opts->depth_max : JSON_PARSE_DEPTH_DEFAULT,
        .flags = opts ? opts->flags : 0,
        .first_dup = SIZE_MAX,
        .err = err,
    };
    err->offset = 0;
    err->reason[0] = '\0';
    skip_ws(&ps);
    if (ps.pos == len) {
        fail(&ps, -ERR_INVALID, ps.pos, "empty document");
        return ps.rc;
    }
    struct json_value *root = NULL;
    int rc = run(&ps, &root);
    for (size_t i = 0; i < ps.depth; i++)
        mem_free(ps.stack[i].buf);
    mem_free(ps.stack);
    if (rc != 0)
        return rc;
    doc->root = root;
    doc->first_dup_offset = ps.first_dup;
    return 0;
}

const struct json_value *json_object_get(const struct json_value *v, const char *key)
{
    if (!v || v->type != JSON_OBJECT)
        return NULL;
    size_t kl = strlen(key);
    for (size_t i = 0; i < v->n; i++)
        if (v->members[i].key_len == kl && memcmp(v->members[i].key, key, kl) == 0)
            return v->members[i].value;
    return NULL;
}

bool json_is_str(const struct json_value *v, const char *s)
{
    return v && v->type == JSON_STRING && strlen(s) == v->len && memcmp(v->str, s, v->len) == 0;
}

static const struct json_value *get_n(const struct json_value *v, const char *key, size_t kl)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->members[i].key_len == kl && memcmp(v->members[i].key, key, kl) == 0)
            return v->members[i].value;
    return NULL;
}

static bool numbers_equal(const struct json_value *a, const struct json_value *b)
{
    if (a->is_integer && b->is_integer) {
        if (a->i64_ok || b->i64_ok)
            return a->i64_ok && b->i64_ok && a->i64 == b->i64;
        return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    }
    return a->f64 == b->f64;
}

bool json_value_equal(const struct json_value *a, const struct json_value *b)
{
    if (a->type != b->type)
        return false;
    switch (a->type) {
    case JSON_NULL:
    case JSON_FALSE:
    case JSON_TRUE:
        return true;
    case JSON_NUMBER:
        return numbers_equal(a, b);
    case JSON_STRING:
        return a->len == b->len && memcmp(a->str, b->str, a->len) == 0;
    case JSON_ARRAY:
        if (a->n != b->n)
            return false;
        for (size_t i = 0; i < a->n; i++)
            if (!json_value_equal(a->items[i], b->items[i]))
                return false;
        return true;
    case JSON_OBJECT:
        /* Same key sets: every key of a is in b with an equal value, and vice versa. */
        for (size_t i = 0; i < a->n; i++) {
            const struct json_member *m = &a->members[i];
            if (get_n(a, m->key, m->key_len) != m->value)
                continue; /* a later duplicate: the first member of the key counts */
            const struct json_value *o = get_n(b, m->key, m->key_len);
            if (!o || !json_value_equal(m->value, o))
                return false;
        }
        for (size_t i = 0; i < b->n; i++)
            if (!get_n(a, b->members[i].key, b->members[i].key_len))
                return false;
        return true;
    }
    return false;
}

const char *json_type_name(enum json_type t)
{
    switch (t) {
    case JSON_NULL:
        return "null";
    case JSON_FALSE:
    case JSON_TRUE:
        return "boolean";
    case JSON_NUMBER:
        return "number";
    case JSON_STRING:
        return "string";
    case JSON_ARRAY:
        return "array";
    case JSON_OBJECT:
        return "object";
    }
    return "?";
}
