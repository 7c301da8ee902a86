/* Protobuf binary data to JSON (proto3's JSON mapping, as far as a console needs it), for
 * `streampulse consume --decode`: fields under their JSON names (json_name, else lowerCamel
 * of the name) in declaration order, the fields present only; 64-bit integers as strings,
 * enums by value name (the number when unknown), bytes as base64, repeated fields (packed or
 * not) as arrays, maps as objects, messages recursively. Well-known types are written as the
 * messages they are (not their special JSON forms). Fields the schema does not know are
 * skipped; groups (proto2) are refused.
 *
 * The bytes are untrusted: every read is bounded by the input, nesting by
 * PROTO_DECODE_DEPTH_MAX, the output by PROTO_DECODE_OUT_MAX. Stateless. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/base64.h"
#include "base/errors.h"
#include "base/json.h"
#include "base/mem.h"
#include "base/varint.h"
#include "registry/proto_ast.h"
#include "registry/protobuf.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

struct occ {
    const struct proto_field *f;
    int wt;
    uint64_t v;         /* WT_VARINT, WT_I64, WT_I32 */
    const uint8_t *p;   /* WT_LEN */
    size_t len;
};

struct dec {
    struct strbuf *out;
    char *err;
    size_t errcap;
};

static int fail(struct dec *d, const char *what, const char *name)
{
    snprintf(d->err, d->errcap, "%s%s", what, name ? name : "");
    return -ERR_INVALID;
}

/* One field's tag and value at *p; 0, or -1 (malformed). */
static int next_field(const uint8_t **p, const uint8_t *end, uint32_t *number, struct occ *o)
{
    uint64_t tag;
    size_t n = uvarint64_get(*p, end, &tag);
    if (n == 0 || (tag >> 3) == 0 || (tag >> 3) > 536870911u)
        return -1;
    *p += n;
    *number = (uint32_t)(tag >> 3);
    o->wt = (int)(tag & 7);
    switch (o->wt) {
    case WT_VARINT:
        n = uvarint64_get(*p, end, &o->v);
        if (n == 0)
            return -1;
        *p += n;
        return 0;
    case WT_I64:
    case WT_I32: {
        size_t w = o->wt == WT_I64 ? 8 : 4;
        if ((size_t)(end - *p) < w)
            return -1;
        o->v = 0;
        for (size_t i = w; i-- > 0;)
            o->v = o->v << 8 | (*p)[i];
        *p += w;
        return 0;
    }
    case WT_LEN: {
        uint64_t len;
        n = uvarint64_get(*p, end, &len);
        if (n == 0 || len > (uint64_t)(end - *p - (ptrdiff_t)n))
            return -1;
        o->p = *p + n;
        o->len = (size_t)len;
        *p += n + len;
        return 0;
    }
    default:
        return -1; /* groups, and the wire types that do not exist */
    }
}

static const struct proto_field *field_by_number(const struct proto_type *t, uint32_t number)
{
    for (size_t i = 0; i < t->fields.n; i++) {
        const struct proto_field *f = t->fields.v[i];
        if ((uint32_t)f->number == number)
            return f;
    }
    for (size_t i = 0; i < t->oneofs.n; i++) {
        const struct proto_oneof *o = t->oneofs.v[i];
        for (size_t j = 0; j < o->fields.n; j++) {
            const struct proto_field *f = o->fields.v[j];
            if ((uint32_t)f->number == number)
                return f;
        }
    }
    return NULL;
}

static void json_name(struct strbuf *out, const struct proto_field *f)
{
    if (f->json_name) {
        json_escape(out, f->json_name, strlen(f->json_name));
        return;
    }
    struct strbuf n;
    strbuf_init(&n);
    bool up = false;
    for (const char *c = f->name; *c; c++) {
        if (*c == '_') {
            up = true;
            continue;
        }
        strbuf_putc(&n, up ? (char)toupper((unsigned char)*c) : *c);
        up = false;
    }
    json_escape(out, n.p ? n.p : "", n.len);
    strbuf_destroy(&n);
}

static bool packable(int scalar, const struct proto_type *named)
{
    if (scalar == PS_NAMED)
        return named && named->kind == PT_ENUM;
    return scalar != PS_STRING && scalar != PS_BYTES;
}

/* The wire type a scalar (or named type) is written with. */
static int wire_of(int scalar, const struct proto_type *named)
{
    switch (scalar) {
    case PS_DOUBLE:
    case PS_FIXED64:
    case PS_SFIXED64:
        return WT_I64;
    case PS_FLOAT:
    case PS_FIXED32:
    case PS_SFIXED32:
        return WT_I32;
    case PS_STRING:
    case PS_BYTES:
        return WT_LEN;
    case PS_NAMED:
        return named && named->kind == PT_ENUM ? WT_VARINT : WT_LEN;
    default:
        return WT_VARINT;
    }
}

static void put_double(struct strbuf *out, double d)
{
    if (isnan(d) || isinf(d))
        strbuf_puts(out, isnan(d) ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    else
        strbuf_printf(out, "%.17g", d);
}

static int message(struct dec *d, const struct proto_type *t, const uint8_t *p, size_t n,
                   int depth);

/* One value of type (scalar, named) from o. */
static int scalar_value(struct dec *d, int scalar, const struct proto_type *named,
                        const struct occ *o, int depth)
{
    struct strbuf *out = d->out;
    if (o->wt != wire_of(scalar, named))
        return fail(d, "another wire type than its type's in a field of type ",
                    scalar == PS_NAMED ? (named ? named->full_name : "?")
                                       : proto_scalar_name(scalar));
    uint64_t v = o->v;
    switch (scalar) {
    case PS_DOUBLE: {
        double x;
        memcpy(&x, &v, 8);
        put_double(out, x);
        return 0;
    }
    case PS_FLOAT: {
        uint32_t u = (uint32_t)v;
        float x;
        memcpy(&x, &u, 4);
        put_double(out, x);
        return 0;
    }
    case PS_INT32:
        strbuf_printf(out, "%d", (int32_t)v);
        return 0;
    case PS_SFIXED32:
        strbuf_printf(out, "%d", (int32_t)(uint32_t)v);
        return 0;
    case PS_UINT32:
    case PS_FIXED32:
        strbuf_printf(out, "%u", (uint32_t)v);
        return 0;
    case PS_SINT32:
        strbuf_printf(out, "%d", zigzag32_decode((uint32_t)v));
        return 0;
    case PS_INT64:
    case PS_SFIXED64:
        strbuf_printf(out, "\"%lld\"", (long long)(int64_t)v);
        return 0;
    case PS_UINT64:
    case PS_FIXED64:
        strbuf_printf(out, "\"%llu\"", (unsigned long long)v);
        return 0;
    case PS_SINT64:
        strbuf_printf(out, "\"%lld\"", (long long)zigzag64_decode(v));
        return 0;
    case PS_BOOL:
        strbuf_puts(out, v ? "true" : "false");
        return 0;
    case PS_STRING:
        json_escape(out, (const char *)o->p, o->len);
        return 0;
    case PS_BYTES: {
        char *b = mem_alloc(B64_ENCODED_LEN(o->len) + 1);
        b64_encode(o->p, o->len, b, B64_ENCODED_LEN(o->len) + 1);
        strbuf_printf(out, "\"%s\"", b);
        mem_free(b);
        return 0;
    }
    }
    if (!named)
        return fail(d, "a field of an unresolved type", NULL);
    if (named->kind == PT_ENUM) {
        for (size_t i = 0; i < named->values.n; i++) {
            const struct proto_enum_value *ev = named->values.v[i];
            if (ev->number == (int32_t)v) {
                json_escape(out, ev->name, strlen(ev->name));
                return 0;
            }
        }
        strbuf_printf(out, "%d", (int32_t)v);
        return 0;
    }
    return message(d, named, o->p, o->len, depth + 1);
}

/* A map entry's key, as a JSON object key (always a string). */
static int map_key(struct dec *d, const struct proto_field *f, const struct occ *k)
{
    if (!k) { /* absent: the key type's default */
        strbuf_puts(d->out, f->key.scalar == PS_STRING ? "\"\"" : f->key.scalar == PS_BOOL
                                                                     ? "\"false\""
                                                                     : "\"0\"");
        return 0;
    }
    if (f->key.scalar == PS_STRING)
        return scalar_value(d, PS_STRING, NULL, k, 0);
    struct strbuf tmp;
    strbuf_init(&tmp);
    struct strbuf *keep = d->out;
    d->out = &tmp;
    int rc = scalar_value(d, f->key.scalar, NULL, k, 0);
    d->out = keep;
    if (rc == 0) {
        const char *t = strbuf_str(&tmp);
        if (t[0] == '"')
            strbuf_puts(d->out, t);
        else
            strbuf_printf(d->out, "\"%s\"", t);
    }
    strbuf_destroy(&tmp);
    return rc;
}

static int map_entry(struct dec *d, const struct proto_field *f, const struct occ *o, int depth)
{
    const uint8_t *p = o->p, *end = o->p + o->len;
    struct occ key = {0}, val = {0};
    bool has_key = false, has_val = false;
    while (p < end) {
        uint32_t number;
        struct occ x = {0};
        if (next_field(&p, end, &number, &x) != 0)
            return fail(d, "a malformed map entry", NULL);
        if (number == 1)
            key = x, has_key = true;
        else if (number == 2)
            val = x, has_val = true;
    }
    if (map_key(d, f, has_key ? &key : NULL) != 0)
        return -ERR_INVALID;
    strbuf_putc(d->out, ':');
    if (!has_val) {
        strbuf_puts(d->out, f->type.scalar == PS_NAMED && f->type.type &&
                                    f->type.type->kind == PT_MESSAGE
                                ? "{}"
                                : "null");
        return 0;
    }
    return scalar_value(d, f->type.scalar, f->type.type, &val, depth);
}

/* The occurrences of one field, written as its JSON member. */
static int member(struct dec *d, const struct proto_field *f, const struct occ *occ, size_t n,
                  int depth)
{
    if (n == 0)
        return 0;
    struct strbuf *out = d->out;
    json_name(out, f);
    strbuf_putc(out, ':');
    int scalar = f->type.scalar;
    const struct proto_type *named = f->type.type;
    if (f->is_map) {
        strbuf_putc(out, '{');
        for (size_t i = 0; i < n; i++) {
            if (i)
                strbuf_putc(out, ',');
            if (occ[i].wt != WT_LEN || map_entry(d, f, &occ[i], depth) != 0)
                return fail(d, "a malformed map entry", NULL);
        }
        strbuf_putc(out, '}');
        return 0;
    }
    if (f->label != PL_REPEATED)
        return scalar_value(d, scalar, named, &occ[n - 1], depth); /* the last one wins */
    strbuf_putc(out, '[');
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (occ[i].wt == WT_LEN && packable(scalar, named)) {
            int wt = wire_of(scalar, named);
            const uint8_t *p = occ[i].p, *end = occ[i].p + occ[i].len;
            while (p < end) {
                struct occ x = {.f = f, .wt = wt};
                size_t k = 0;
                if (wt == WT_VARINT) {
                    k = uvarint64_get(p, end, &x.v);
                } else {
                    size_t w = wt == WT_I64 ? 8 : 4;
                    if ((size_t)(end - p) >= w) {
                        for (size_t b = w; b-- > 0;)
                            x.v = x.v << 8 | p[b];
                        k = w;
                    }
                }
                if (k == 0)
                    return fail(d, "a packed field cut short", NULL);
                p += k;
                if (!first)
                    strbuf_putc(out, ',');
                first = false;
                if (scalar_value(d, scalar, named, &x, depth) != 0)
                    return -ERR_INVALID;
            }
            continue;
        }
        if (!first)
            strbuf_putc(out, ',');
        first = false;
        if (scalar_value(d, scalar, named, &occ[i], depth) != 0)
            return -ERR_INVALID;
    }
    strbuf_putc(out, ']');
    return 0;
}

/* Gathers f's occurrences from all[0, n) into buf and writes its member. */
static int emit_field(struct dec *d, const struct proto_field *f, const struct occ *all, size_t n,
                      struct occ *buf, bool *first, int depth)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (all[i].f == f)
            buf[k++] = all[i];
    if (k == 0)
        return 0;
    if (!*first)
        strbuf_putc(d->out, ',');
    *first = false;
    return member(d, f, buf, k, depth);
}

static int message(struct dec *d, const struct proto_type *t, const uint8_t *p, size_t n,
                   int depth)
{
    if (depth > PROTO_DECODE_DEPTH_MAX)
        return fail(d, "messages nested deeper than allowed", NULL);
    if (d->out->len > PROTO_DECODE_OUT_MAX)
        return fail(d, "a decoded message larger than allowed", NULL);
    /* every field first (at most one per 2 bytes), then the known ones in declaration order */
    size_t cap = n / 2 + 1, count = 0;
    struct occ *all = mem_calloc(cap, sizeof(*all));
    struct occ *buf = mem_calloc(cap, sizeof(*buf));
    const uint8_t *end = p + n;
    int rc = 0;
    while (p < end) {
        uint32_t number;
        struct occ o = {0};
        if (next_field(&p, end, &number, &o) != 0) {
            rc = fail(d, "a malformed field in a message ", t->full_name);
            goto out;
        }
        o.f = field_by_number(t, number);
        if (o.f && count < cap)
            all[count++] = o; /* unknown fields are skipped */
    }
    strbuf_putc(d->out, '{');
    bool first = true;
    for (size_t i = 0; rc == 0 && i < t->fields.n; i++)
        rc = emit_field(d, t->fields.v[i], all, count, buf, &first, depth);
    for (size_t i = 0; rc == 0 && i < t->oneofs.n; i++) {
        const struct proto_oneof *o = t->oneofs.v[i];
        for (size_t j = 0; rc == 0 && j < o->fields.n; j++)
            rc = emit_field(d, o->fields.v[j], all, count, buf, &first, depth);
    }
    if (rc == 0)
        strbuf_putc(d->out, '}');
out:
    mem_free(all);
    mem_free(buf);
    return rc;
}

static void truncate_to(struct strbuf *out, size_t len)
{
    out->len = len;
    if (out->p)
        out->p[len] = '\0';
}

/* The message that indexes idx[0, n) name, or NULL. */
static const struct proto_type *indexed_message(const struct proto_schema *s, const int32_t *idx,
                                                size_t n)
{
    struct strbuf name;
    strbuf_init(&name);
    const struct proto_sym *sym =
        proto_message_name(s, idx, n, &name) == 0 ? proto_sym_get(s, strbuf_str(&name)) : NULL;
    strbuf_destroy(&name);
    return sym && sym->kind == SYM_MESSAGE ? sym->node : NULL;
}

int proto_decode_json(const struct proto_schema *s, const uint8_t *p, size_t n,
                      struct strbuf *out, char *err, size_t errcap)
{
    struct dec d = {out, err, errcap};
    int32_t idx[PROTO_INDEXES_MAX];
    size_t n_idx;
    size_t used = proto_msgidx_decode(p, p + n, idx, &n_idx);
    const struct proto_type *t = used ? indexed_message(s, idx, n_idx) : NULL;
    if (!t) {
        /* @kafkajs/confluent-schema-registry (3.x) writes no indexes: its message starts at
         * once, and it is the file's first (a message's first byte, a tag, is never a valid
         * start of indexes that name one) */
        static const int32_t first[] = {0};
        t = indexed_message(s, first, 1);
        used = 0;
        if (!t)
            return fail(&d, "the message indexes name no message of the schema", NULL);
    }
    size_t before = out->len;
    int rc = message(&d, t, p + used, n - used, 0);
    if (rc != 0 && used > 0) {
        /* a payload without indexes whose first byte happens to read as some */
        static const int32_t first[] = {0};
        const struct proto_type *t0 = indexed_message(s, first, 1);
        truncate_to(out, before);
        if (t0 && message(&d, t0, p, n, 0) == 0)
            return 0;
        truncate_to(out, before);
        return rc;
    }
    return rc;
}
