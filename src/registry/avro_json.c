/* Avro binary data to Avro's JSON encoding (the specification's "JSON Encoding": a union is
 * null or {"branch name": value}, bytes and fixed are strings of code points U+0000-U+00FF),
 * for `streampulse consume --decode`.
 *
 * The bytes are untrusted (any record of a topic): every read is bounded by the input, nesting
 * by AVRO_DECODE_DEPTH_MAX (a recursive record nests as deep as its data), the values of
 * arrays and maps by AVRO_DECODE_ITEMS_MAX in all (items of a zero-size type cost no bytes),
 * and the output by AVRO_DECODE_OUT_MAX. Stateless. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/errors.h"
#include "base/json.h"
#include "base/varint.h"
#include "registry/avro.h"

struct rd {
    const uint8_t *p;
    const uint8_t *end;
    size_t items; /* array and map values so far */
    struct strbuf *out;
    char *err;
    size_t errcap;
};

static int fail(struct rd *r, const char *what)
{
    snprintf(r->err, r->errcap, "%s at byte %zu from the end", what, (size_t)(r->end - r->p));
    return -ERR_INVALID;
}

static int read_long(struct rd *r, int64_t *v)
{
    size_t n = varint64_get(r->p, r->end, v);
    if (n == 0)
        return fail(r, "a long that is cut short or longer than 10 bytes");
    r->p += n;
    return 0;
}

static int read_int(struct rd *r, int64_t *v)
{
    if (read_long(r, v) != 0)
        return -ERR_INVALID;
    if (*v < INT32_MIN || *v > INT32_MAX)
        return fail(r, "an int out of range");
    return 0;
}

/* A length, then that many bytes. */
static int read_bytes(struct rd *r, const uint8_t **p, size_t *n)
{
    int64_t len;
    if (read_long(r, &len) != 0)
        return -ERR_INVALID;
    if (len < 0 || len > r->end - r->p)
        return fail(r, "a length beyond the data");
    *p = r->p;
    *n = (size_t)len;
    r->p += len;
    return 0;
}

static void put_latin1(struct strbuf *out, const uint8_t *p, size_t n)
{
    /* each byte as the code point of that value, in UTF-8, JSON-escaped */
    struct strbuf tmp;
    strbuf_init(&tmp);
    for (size_t i = 0; i < n; i++) {
        if (p[i] < 0x80) {
            strbuf_putc(&tmp, (char)p[i]);
        } else {
            strbuf_putc(&tmp, (char)(0xc0 | (p[i] >> 6)));
            strbuf_putc(&tmp, (char)(0x80 | (p[i] & 0x3f)));
        }
    }
    json_escape(out, tmp.p ? tmp.p : "", tmp.len);
    strbuf_destroy(&tmp);
}

static void put_double(struct strbuf *out, double d)
{
    if (isnan(d) || isinf(d))
        strbuf_puts(out, isnan(d) ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else
        strbuf_printf(out, "%.17g", d);
}

static int value(struct rd *r, const struct avro_node *n, int depth);

static int block_items(struct rd *r, int64_t *count)
{
    if (read_long(r, count) != 0)
        return -ERR_INVALID;
    if (*count < 0) { /* a negative count is followed by the block's size in bytes */
        int64_t size;
        if (*count == INT64_MIN || read_long(r, &size) != 0 || size < 0)
            return fail(r, "a bad block header");
        *count = -*count;
    }
    if ((uint64_t)*count > AVRO_DECODE_ITEMS_MAX - r->items)
        return fail(r, "more array or map items than allowed");
    r->items += (size_t)*count;
    return 0;
}

static int array_or_map(struct rd *r, const struct avro_node *n, int depth)
{
    bool map = n->type == AVRO_MAP;
    strbuf_putc(r->out, map ? '{' : '[');
    bool first = true;
    for (;;) {
        int64_t count;
        if (block_items(r, &count) != 0)
            return -ERR_INVALID;
        if (count == 0)
            break;
        for (int64_t i = 0; i < count; i++) {
            if (!first)
                strbuf_putc(r->out, ',');
            first = false;
            if (map) {
                const uint8_t *k;
                size_t kn;
                if (read_bytes(r, &k, &kn) != 0)
                    return -ERR_INVALID;
                json_escape(r->out, (const char *)k, kn);
                strbuf_putc(r->out, ':');
            }
            if (value(r, n->items, depth + 1) != 0)
                return -ERR_INVALID;
        }
    }
    strbuf_putc(r->out, map ? '}' : ']');
    return 0;
}

/* The name a union branch is written under. */
static const char *branch_name(const struct avro_node *b)
{
    return b->name.full ? b->name.full : avro_type_name(b->type);
}

static int value(struct rd *r, const struct avro_node *n, int depth)
{
    if (depth > AVRO_DECODE_DEPTH_MAX)
        return fail(r, "data nested deeper than allowed");
    if (r->out->len > AVRO_DECODE_OUT_MAX)
        return fail(r, "a decoded value larger than allowed");
    int64_t v;
    const uint8_t *p;
    size_t len;
    switch (n->type) {
    case AVRO_NULL:
        strbuf_puts(r->out, "null");
        return 0;
    case AVRO_BOOLEAN:
        if (r->p >= r->end || *r->p > 1)
            return fail(r, "a boolean that is not 0 or 1");
        strbuf_puts(r->out, *r->p++ ? "true" : "false");
        return 0;
    case AVRO_INT:
        if (read_int(r, &v) != 0)
            return -ERR_INVALID;
        strbuf_printf(r->out, "%lld", (long long)v);
        return 0;
    case AVRO_LONG:
        if (read_long(r, &v) != 0)
            return -ERR_INVALID;
        strbuf_printf(r->out, "%lld", (long long)v);
        return 0;
    case AVRO_FLOAT: {
        if (r->end - r->p < 4)
            return fail(r, "a float cut short");
        uint32_t u = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 |
                     (uint32_t)r->p[3] << 24;
        float f;
        memcpy(&f, &u, 4);
        r->p += 4;
        put_double(r->out, f);
        return 0;
    }
    case AVRO_DOUBLE: {
        if (r->end - r->p < 8)
            return fail(r, "a double cut short");
        uint64_t u = 0;
        for (int i = 7; i >= 0; i--)
            u = u << 8 | r->p[i];
        double d;
        memcpy(&d, &u, 8);
        r->p += 8;
        put_double(r->out, d);
        return 0;
    }
    case AVRO_BYTES:
        if (read_bytes(r, &p, &len) != 0)
            return -ERR_INVALID;
        put_latin1(r->out, p, len);
        return 0;
    case AVRO_STRING:
        if (read_bytes(r, &p, &len) != 0)
            return -ERR_INVALID;
        json_escape(r->out, (const char *)p, len);
        return 0;
    case AVRO_FIXED:
        if (r->end - r->p < n->size)
            return fail(r, "a fixed cut short");
        put_latin1(r->out, r->p, (size_t)n->size);
        r->p += n->size;
        return 0;
    case AVRO_ENUM:
        if (read_int(r, &v) != 0)
            return -ERR_INVALID;
        if (v < 0 || (uint64_t)v >= n->n_symbols)
            return fail(r, "an enum index beyond its symbols");
        json_escape(r->out, n->symbols[v], strlen(n->symbols[v]));
        return 0;
    case AVRO_ARRAY:
    case AVRO_MAP:
        return array_or_map(r, n, depth);
    case AVRO_UNION: {
        if (read_long(r, &v) != 0)
            return -ERR_INVALID;
        if (v < 0 || (uint64_t)v >= n->n_branches)
            return fail(r, "a union branch beyond its branches");
        const struct avro_node *b = n->branches[v];
        if (b->type == AVRO_NULL) {
            strbuf_puts(r->out, "null");
            return 0;
        }
        strbuf_putc(r->out, '{');
        const char *name = branch_name(b);
        json_escape(r->out, name, strlen(name));
        strbuf_putc(r->out, ':');
        if (value(r, b, depth + 1) != 0)
            return -ERR_INVALID;
        strbuf_putc(r->out, '}');
        return 0;
    }
    case AVRO_RECORD:
        strbuf_putc(r->out, '{');
        for (size_t i = 0; i < n->n_fields; i++) {
            if (i)
                strbuf_putc(r->out, ',');
            json_escape(r->out, n->fields[i].name, strlen(n->fields[i].name));
            strbuf_putc(r->out, ':');
            if (value(r, n->fields[i].type, depth + 1) != 0)
                return -ERR_INVALID;
        }
        strbuf_putc(r->out, '}');
        return 0;
    }
    return fail(r, "an unknown type");
}

int avro_decode_json(const struct avro_schema *s, const uint8_t *p, size_t n, struct strbuf *out,
                     char *err, size_t errcap)
{
    struct rd r = {p, p + n, 0, out, err, errcap};
    if (value(&r, avro_schema_root(s), 0) != 0)
        return -ERR_INVALID;
    if (r.p != r.end)
        return fail(&r, "bytes left after the value");
    return 0;
}
