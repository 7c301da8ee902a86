/* Avro schema text -> model (contract in registry/avro.h).
 *
 * The JSON tree (base/json_parse.h) is walked recursively; the recursion is bounded by the
 * tree's depth, which the JSON parser limits to AVRO_JSON_DEPTH_MAX. Everything is allocated
 * in the schema's arena, so a refusal frees it all at once.
 *
 * Names are resolved in one pass with a fix-up list: a reference to a name not yet defined
 * (a forward or recursive use) records the slot that must point at it, and once the whole text
 * is read every such slot gets its node or the parse fails with the unknown name. Checks that
 * need resolved types (no union inside a union, no two branches alike, defaults matching
 * their field's type) run after that.
 *
 * Invariants of a parsed schema:
 *   1. Every node pointer in the model is non-NULL and points into this schema's arena or into
 *      a referenced schema's (whose lifetime the caller guarantees).
 *   2. Each full name of `named` maps to exactly one node; no name is defined both here and in
 *      a reference.
 *   3. Without AVRO_PARSE_LENIENT, every field default is valid for the field's type.
 *   4. Every record has its field-name index and every enum its symbol index (`index`).
 *
 * Cost: names, field names, aliases, symbols and union branches are looked up in hash maps,
 * so a schema of n bytes parses in about linear time however wide its records or enums;
 * checking a default against unions of records, exponential in the worst case, runs on a
 * step budget (DEFAULT_BUDGET) and refuses the schema when it runs out. */
#include "registry/avro.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "base/strmap.h"
#include "registry/avro_impl.h"

#define DEFAULT_DEPTH_MAX 256     /* record defaults that fall back on nested field defaults */
#define DEFAULT_BUDGET (1L << 22) /* steps to check every default of a schema */

struct fixup {
    const struct avro_node **slot; /* where the resolved node goes */
    const char *full;              /* the name qualified by the enclosing namespace */
    const char *bare;              /* the name as written, tried next (NULL: same as full) */
    size_t offset;                 /* where the reference is, for the error */
};

struct pending_field {
    struct avro_field *field;
    const struct avro_node *record;
};

struct pending_union {
    const struct avro_node *node;
    size_t offset; /* the union's array in the text */
};

struct pctx {
    struct avro_schema *s;
    struct arena *a;
    bool strict;
    struct strmap own;  /* full name -> node, defined in this text */
    struct strmap refd; /* full name -> node, defined by a referenced schema */
    struct fixup *fixups;
    size_t n_fixups, cap_fixups;
    struct pending_union *unions;
    size_t n_unions, cap_unions;
    struct pending_field *fields;
    size_t n_fields, cap_fields;
    const struct avro_node **named;
    size_t n_named, cap_named;
    char *err;
    size_t err_size;
    bool failed;
};

static const char *const primitive_names[] = {
    [AVRO_NULL] = "null",   [AVRO_BOOLEAN] = "boolean", [AVRO_INT] = "int",
    [AVRO_LONG] = "long",   [AVRO_FLOAT] = "float",     [AVRO_DOUBLE] = "double",
    [AVRO_BYTES] = "bytes", [AVRO_STRING] = "string",
};

static const char *const type_names[] = {
    [AVRO_NULL] = "null",   [AVRO_BOOLEAN] = "boolean", [AVRO_INT] = "int",
    [AVRO_LONG] = "long",   [AVRO_FLOAT] = "float",     [AVRO_DOUBLE] = "double",
    [AVRO_BYTES] = "bytes", [AVRO_STRING] = "string",   [AVRO_RECORD] = "record",
    [AVRO_ENUM] = "enum",   [AVRO_ARRAY] = "array",     [AVRO_MAP] = "map",
    [AVRO_UNION] = "union", [AVRO_FIXED] = "fixed",
};

static const char *const type_upper[] = {
    [AVRO_NULL] = "NULL",   [AVRO_BOOLEAN] = "BOOLEAN", [AVRO_INT] = "INT",
    [AVRO_LONG] = "LONG",   [AVRO_FLOAT] = "FLOAT",     [AVRO_DOUBLE] = "DOUBLE",
    [AVRO_BYTES] = "BYTES", [AVRO_STRING] = "STRING",   [AVRO_RECORD] = "RECORD",
    [AVRO_ENUM] = "ENUM",   [AVRO_ARRAY] = "ARRAY",     [AVRO_MAP] = "MAP",
    [AVRO_UNION] = "UNION", [AVRO_FIXED] = "FIXED",
};

static const char *const logical_names[] = {
    [AVRO_LT_DECIMAL] = "decimal",
    [AVRO_LT_BIG_DECIMAL] = "big-decimal",
    [AVRO_LT_UUID] = "uuid",
    [AVRO_LT_DATE] = "date",
    [AVRO_LT_TIME_MILLIS] = "time-millis",
    [AVRO_LT_TIME_MICROS] = "time-micros",
    [AVRO_LT_TIMESTAMP_MILLIS] = "timestamp-millis",
    [AVRO_LT_TIMESTAMP_MICROS] = "timestamp-micros",
    [AVRO_LT_TIMESTAMP_NANOS] = "timestamp-nanos",
    [AVRO_LT_LOCAL_TIMESTAMP_MILLIS] = "local-timestamp-millis",
    [AVRO_LT_LOCAL_TIMESTAMP_MICROS] = "local-timestamp-micros",
    [AVRO_LT_LOCAL_TIMESTAMP_NANOS] = "local-timestamp-nanos",
    [AVRO_LT_DURATION] = "duration",
};

const char *avro_type_name(enum avro_type t)
{
    return (unsigned)t < ARRAY_LEN(type_names) ? type_names[t] : "?";
}

const char *avro_type_upper(enum avro_type t)
{
    return (unsigned)t < ARRAY_LEN(type_upper) ? type_upper[t] : "?";
}

const char *avro_logical_name(enum avro_logical lt)
{
    return lt != AVRO_LT_NONE && (unsigned)lt < ARRAY_LEN(logical_names) ? logical_names[lt] : NULL;
}

/* ---- JSON ---- */

static const char *jtype_name(enum json_type t)
{
    switch (t) {
    case JSON_NULL:
        return "null";
    case JSON_BOOL:
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

/* ---- errors ---- */

static int perr(struct pctx *c, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int perr(struct pctx *c, size_t offset, const char *fmt, ...)
{
    if (c->failed)
        return -ERR_INVALID;
    c->failed = true;
    struct strbuf sb;
    strbuf_init(&sb);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&sb, fmt, ap);
    va_end(ap);
    strbuf_printf(&sb, " (at byte %zu)", offset);
    if (c->err_size) {
        snprintf(c->err, c->err_size, "%s", strbuf_str(&sb));
    }
    strbuf_destroy(&sb);
    return -ERR_INVALID;
}

/* A short printable form of a JSON value for messages: compact, at most ~60 bytes. */
static const char *show(struct pctx *c, const struct json_value *v)
{
    struct strbuf sb;
    strbuf_init(&sb);
    avro_json_write(&sb, v);
    if (sb.len > 64) {
        sb.len = 60;
        /* back up to a UTF-8 boundary, so the message stays well-formed */
        while (sb.len && ((unsigned char)sb.p[sb.len] & 0xc0) == 0x80)
            sb.len--;
        sb.p[sb.len] = '\0';
        strbuf_puts(&sb, "...");
    }
    char *r = arena_strndup(c->a, strbuf_str(&sb), sb.len);
    strbuf_destroy(&sb);
    return r;
}

/* ---- names ---- */

static bool name_char(unsigned char ch, bool first)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_' ||
           (!first && ch >= '0' && ch <= '9');
}

static bool valid_name(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!name_char((unsigned char)s[i], i == 0))
            return false;
    return true;
}

static int check_name(struct pctx *c, const char *what, const char *s, size_t n, size_t off)
{
    if (!c->strict || valid_name(s, n))
        return 0;
    return perr(c, off,
                "%s \"%.*s\" is invalid: a name starts with [A-Za-z_] and continues with "
                "[A-Za-z0-9_]",
                what, (int)MIN(n, 80), s);
}

/* Every dot-separated part of a full name, and the simple name, are valid names. */
static int check_full(struct pctx *c, const struct avro_name *nm, size_t off)
{
    if (!c->strict)
        return nm->name[0] ? 0 : perr(c, off, "a named type needs a non-empty name");
    if (nm->space) {
        const char *p = nm->space;
        for (;;) {
            const char *dot = strchr(p, '.');
            size_t n = dot ? (size_t)(dot - p) : strlen(p);
            if (check_name(c, "namespace part", p, n, off) != 0)
                return -ERR_INVALID;
            if (!dot)
                break;
            p = dot + 1;
        }
    }
    return check_name(c, "name", nm->name, strlen(nm->name), off);
}

static bool is_primitive(const char *s, enum avro_type *t)
{
    for (size_t i = 0; i < ARRAY_LEN(primitive_names); i++)
        if (strcmp(s, primitive_names[i]) == 0) {
            if (t)
                *t = (enum avro_type)i;
            return true;
        }
    return false;
}

static const char *join(struct pctx *c, const char *space, const char *name)
{
    if (!space)
        return name;
    size_t sl = strlen(space), nl = strlen(name);
    char *p = arena_alloc(c->a, sl + nl + 2);
    memcpy(p, space, sl);
    p[sl] = '.';
    memcpy(p + sl + 1, name, nl + 1);
    return p;
}

/* A name as written, qualified by `space` when it has no dot (Avro Java's Name). */
static struct avro_name make_name(struct pctx *c, const char *written, const char *space)
{
    struct avro_name nm;
    const char *dot = strrchr(written, '.');
    if (dot) {
        nm.space = dot == written ? NULL : arena_strndup(c->a, written, (size_t)(dot - written));
        nm.name = dot + 1;
    } else {
        nm.space = space && space[0] ? space : NULL;
        nm.name = written;
    }
    nm.full = join(c, nm.space, nm.name);
    return nm;
}

static const struct avro_node *lookup(const struct pctx *c, const char *full)
{
    size_t n = strlen(full);
    const struct avro_node *t = strmap_get(&c->own, full, n);
    return t ? t : strmap_get(&c->refd, full, n);
}

static int define(struct pctx *c, struct avro_node *t, size_t off)
{
    if (is_primitive(t->name.full, NULL))
        return perr(c, off, "a named type may not be called after a primitive type: \"%s\"",
                    t->name.full);
    if (check_full(c, &t->name, off) != 0)
        return -ERR_INVALID;
    size_t n = strlen(t->name.full);
    if (strmap_get(&c->own, t->name.full, n))
        return perr(c, off, "the name \"%s\" is defined twice", t->name.full);
    if (strmap_get(&c->refd, t->name.full, n))
        return perr(c, off, "the name \"%s\" is already defined by a referenced schema",
                    t->name.full);
    strmap_put(&c->own, t->name.full, n, t);
    MEM_GROW(c->named, c->cap_named, c->n_named + 1);
    c->named[c->n_named++] = t;
    return 0;
}

/* ---- attributes ---- */

static bool in_set(const char *key, const char *const *set)
{
    for (; *set; set++)
        if (strcmp(key, *set) == 0)
            return true;
    return false;
}

static const char *const schema_reserved[] = {"doc",       "fields",  "items",   "name",
                                              "namespace", "size",    "symbols", "values",
                                              "type",      "aliases", NULL};
static const char *const enum_reserved[] = {"doc",       "fields",  "items",   "name",
                                            "namespace", "size",    "symbols", "values",
                                            "type",      "aliases", "default", NULL};
static const char *const field_reserved[] = {"default", "doc",     "name", "order",
                                             "type",    "aliases", NULL};

/* The members of obj outside `reserved`, in document order. A key with a NUL byte in it
 * cannot be written back faithfully as a C string: refused. */
static int take_props(struct pctx *c, const struct json_value *obj, const char *const *reserved,
                      const struct avro_prop **out, size_t *n_out)
{
    size_t n = 0;
    struct avro_prop *props = arena_alloc(c->a, obj->n * sizeof(*props) + 1);
    for (const struct json_value *m = obj->child; m; m = m->next) {
        if (strlen(m->key) != m->key_len)
            return perr(c, m->offset, "an attribute name may not contain U+0000");
        if (in_set(m->key, reserved))
            continue;
        props[n++] = (struct avro_prop){.key = m->key, .value = m};
    }
    *out = props;
    *n_out = n;
    return 0;
}

static const struct json_value *prop(const struct avro_node *t, const char *key)
{
    for (size_t i = 0; i < t->n_props; i++)
        if (strcmp(t->props[i].key, key) == 0)
            return t->props[i].value;
    return NULL;
}

/* A string without NUL bytes (names, symbols, docs): the model keeps C strings. */
static int c_string(struct pctx *c, const struct json_value *v, const char *what)
{
    if (strlen(v->str) != v->str_len)
        return perr(c, v->offset, "%s may not contain U+0000", what);
    return 0;
}

/* doc: a string, or ignored (Avro Java ignores a doc of any other kind). */
static int take_doc(struct pctx *c, const struct json_value *obj, const char **out)
{
    const struct json_value *d = json_member(obj, "doc");
    *out = NULL;
    if (!d || d->type != JSON_STRING)
        return 0;
    if (c_string(c, d, "a doc") != 0)
        return -ERR_INVALID;
    *out = d->str;
    return 0;
}

/* aliases: an array of strings, duplicates dropped (Avro Java keeps a set). */
static int take_alias_strings(struct pctx *c, const struct json_value *obj, const char ***out,
                              size_t *n_out)
{
    const struct json_value *al = json_member(obj, "aliases");
    *out = NULL;
    *n_out = 0;
    if (!al)
        return 0;
    if (al->type != JSON_ARRAY)
        return perr(c, al->offset, "\"aliases\" must be an array of strings");
    const char **v = arena_alloc(c->a, al->n * sizeof(*v) + 1);
    size_t n = 0;
    struct strmap seen;
    strmap_init(&seen);
    int rc = 0;
    for (const struct json_value *a = al->child; a && rc == 0; a = a->next) {
        if (a->type != JSON_STRING)
            rc = perr(c, a->offset, "an alias must be a string, not %s", jtype_name(a->type));
        else if (c_string(c, a, "an alias") != 0)
            rc = -ERR_INVALID;
        else if (!strmap_put(&seen, a->str, a->str_len, (void *)a))
            v[n++] = a->str;
    }
    strmap_destroy(&seen);
    *out = v;
    *n_out = n;
    return rc;
}

static int take_type_aliases(struct pctx *c, const struct json_value *obj, struct avro_node *t)
{
    const char **strs;
    size_t n;
    if (take_alias_strings(c, obj, &strs, &n) != 0)
        return -ERR_INVALID;
    struct avro_name *al = arena_alloc(c->a, n * sizeof(*al) + 1);
    size_t k = 0;
    struct strmap seen;
    strmap_init(&seen);
    for (size_t i = 0; i < n; i++) {
        struct avro_name nm = make_name(c, strs[i], t->name.space);
        if (!strmap_put(&seen, nm.full, strlen(nm.full), (void *)strs[i]))
            al[k++] = nm;
    }
    strmap_destroy(&seen);
    t->aliases = al;
    t->n_aliases = k;
    return 0;
}

/* A lookup map owned by the schema (freed with it). */
static struct strmap *new_index(struct pctx *c)
{
    struct strmap *m = mem_alloc(sizeof(*m));
    strmap_init(m);
    struct avro_schema *s = c->s;
    MEM_GROW(s->indexes, s->cap_indexes, s->n_indexes + 1);
    s->indexes[s->n_indexes++] = m;
    return m;
}

static void *position(size_t i)
{
    return (void *)(uintptr_t)(i + 1);
}

static size_t unposition(const void *p)
{
    return (size_t)(uintptr_t)p - 1;
}

const struct avro_field *avro_record_field(const struct avro_node *rec, const char *name,
                                           size_t len)
{
    if (rec->type != AVRO_RECORD || !rec->index)
        return NULL;
    void *p = strmap_get(rec->index, name, len);
    return p ? &rec->fields[unposition(p)] : NULL;
}

long avro_enum_symbol(const struct avro_node *e, const char *s, size_t len)
{
    if (e->type != AVRO_ENUM || !e->index)
        return -1;
    void *p = strmap_get(e->index, s, len);
    return p ? (long)unposition(p) : -1;
}

/* ---- logical types ---- */

static bool int32_prop(const struct json_value *v, int32_t *out)
{
    if (!v || v->type != JSON_NUMBER || !v->is_int || v->int_value < INT32_MIN ||
        v->int_value > INT32_MAX)
        return false;
    *out = (int32_t)v->int_value;
    return true;
}

static bool decimal_ok(struct avro_node *t)
{
    if (t->type != AVRO_BYTES && t->type != AVRO_FIXED)
        return false;
    int32_t precision, scale = 0;
    if (!int32_prop(prop(t, "precision"), &precision))
        return false;
    const struct json_value *sv = prop(t, "scale");
    if (sv && !int32_prop(sv, &scale))
        return false;
    if (precision <= 0 || scale < 0 || scale > precision)
        return false;
    if (t->type == AVRO_FIXED) {
        /* Avro Java's bound: round(floor(log10(2) * (8 * size - 1))) digits. */
        double max = floor(log10(2.0) * (8.0 * t->size - 1.0));
        if ((double)precision > max)
            return false;
    }
    t->precision = precision;
    t->scale = scale;
    return true;
}

/* Sets t->logical from the logicalType property when it is known and valid for t. */
static void find_logical(struct avro_node *t)
{
    const struct json_value *lv = prop(t, "logicalType");
    t->logical = AVRO_LT_NONE;
    if (!lv || lv->type != JSON_STRING)
        return;
    enum avro_logical lt = AVRO_LT_NONE;
    for (size_t i = 1; i < ARRAY_LEN(logical_names); i++)
        if (strcmp(lv->str, logical_names[i]) == 0)
            lt = (enum avro_logical)i;
    bool ok = false;
    switch (lt) {
    case AVRO_LT_NONE:
        break;
    case AVRO_LT_DECIMAL:
        ok = decimal_ok(t);
        break;
    case AVRO_LT_BIG_DECIMAL:
        ok = t->type == AVRO_BYTES;
        break;
    case AVRO_LT_UUID:
        ok = t->type == AVRO_STRING || (t->type == AVRO_FIXED && t->size == 16);
        break;
    case AVRO_LT_DATE:
    case AVRO_LT_TIME_MILLIS:
        ok = t->type == AVRO_INT;
        break;
    case AVRO_LT_TIME_MICROS:
    case AVRO_LT_TIMESTAMP_MILLIS:
    case AVRO_LT_TIMESTAMP_MICROS:
    case AVRO_LT_TIMESTAMP_NANOS:
    case AVRO_LT_LOCAL_TIMESTAMP_MILLIS:
    case AVRO_LT_LOCAL_TIMESTAMP_MICROS:
    case AVRO_LT_LOCAL_TIMESTAMP_NANOS:
        ok = t->type == AVRO_LONG;
        break;
    case AVRO_LT_DURATION:
        ok = t->type == AVRO_FIXED && t->size == 12;
        break;
    }
    if (ok)
        t->logical = lt;
}

/* ---- schemas ---- */

static int parse_schema(struct pctx *c, const struct json_value *v, const char *space,
                        const struct avro_node **slot);

static struct avro_node *new_node(struct pctx *c, enum avro_type t)
{
    struct avro_node *n = arena_calloc(c->a, 1, sizeof(*n));
    n->type = t;
    return n;
}

/* A type named by a string: a primitive, or a named type (now, or once the text is read). */
static int parse_reference(struct pctx *c, const struct json_value *v, const char *space,
                           const struct avro_node **slot)
{
    if (c_string(c, v, "a type name") != 0)
        return -ERR_INVALID;
    enum avro_type pt;
    if (is_primitive(v->str, &pt)) {
        *slot = new_node(c, pt);
        return 0;
    }
    const char *full = v->str;
    if (space && space[0] && !strchr(v->str, '.'))
        full = join(c, space, v->str);
    const struct avro_node *t = lookup(c, full);
    if (!t && full != v->str)
        t = lookup(c, v->str);
    if (t) {
        *slot = t;
        return 0;
    }
    MEM_GROW(c->fixups, c->cap_fixups, c->n_fixups + 1);
    c->fixups[c->n_fixups++] = (struct fixup){
        .slot = slot,
        .full = full,
        .bare = full != v->str ? v->str : NULL,
        .offset = v->offset,
    };
    *slot = NULL;
    return 0;
}

static int parse_field(struct pctx *c, const struct json_value *fv, struct avro_node *rec,
                       struct avro_field *f)
{
    if (fv->type != JSON_OBJECT)
        return perr(c, fv->offset, "record \"%s\": a field must be an object, not %s",
                    rec->name.full, jtype_name(fv->type));
    f->offset = fv->offset;
    const struct json_value *nv = json_member(fv, "name");
    if (!nv || nv->type != JSON_STRING)
        return perr(c, fv->offset, "record \"%s\": a field needs a \"name\" string",
                    rec->name.full);
    if (c_string(c, nv, "a field name") != 0 ||
        check_name(c, "field name", nv->str, nv->str_len, nv->offset) != 0)
        return -ERR_INVALID;
    f->name = nv->str;
    const struct json_value *tv = json_member(fv, "type");
    if (!tv)
        return perr(c, fv->offset, "record \"%s\": field \"%s\" has no \"type\"", rec->name.full,
                    f->name);
    if (parse_schema(c, tv, rec->name.space, &f->type) != 0)
        return -ERR_INVALID;
    if (take_doc(c, fv, &f->doc) != 0)
        return -ERR_INVALID;
    const struct json_value *ov = json_member(fv, "order");
    f->order = AVRO_ORDER_ASCENDING;
    if (ov) {
        static const char *const orders[] = {"ascending", "descending", "ignore"};
        bool found = false;
        for (size_t i = 0; ov->type == JSON_STRING && i < ARRAY_LEN(orders); i++)
            if (strcasecmp(ov->str, orders[i]) == 0 && strlen(ov->str) == ov->str_len) {
                f->order = (enum avro_order)i;
                found = true;
            }
        if (!found)
            return perr(c, ov->offset,
                        "field \"%s\": \"order\" must be \"ascending\", \"descending\" or "
                        "\"ignore\", not %s",
                        f->name, show(c, ov));
    }
    f->def = json_member(fv, "default");
    if (take_alias_strings(c, fv, &f->aliases, &f->n_aliases) != 0)
        return -ERR_INVALID;
    if (take_props(c, fv, field_reserved, &f->props, &f->n_props) != 0)
        return -ERR_INVALID;
    MEM_GROW(c->fields, c->cap_fields, c->n_fields + 1);
    c->fields[c->n_fields++] = (struct pending_field){.field = f, .record = rec};
    return 0;
}

/* Two fields of a record may not share a name, nor may an alias of one be the name or an
 * alias of another (aliases are names: Avro's uniqueness rule; it also keeps a field from
 * matching two fields of a writer). Builds the record's field index. */
static int index_fields(struct pctx *c, struct avro_node *rec)
{
    struct strmap *names = new_index(c);
    rec->index = names;
    for (size_t i = 0; i < rec->n_fields; i++) {
        const struct avro_field *f = &rec->fields[i];
        if (strmap_put(names, f->name, strlen(f->name), position(i)))
            return perr(c, f->offset, "record \"%s\" has two fields named \"%s\"", rec->name.full,
                        f->name);
    }
    struct strmap aliases;
    strmap_init(&aliases);
    int rc = 0;
    for (size_t i = 0; i < rec->n_fields && rc == 0; i++) {
        const struct avro_field *f = &rec->fields[i];
        for (size_t k = 0; k < f->n_aliases && rc == 0; k++) {
            const char *a = f->aliases[k];
            void *other = strmap_get(names, a, strlen(a));
            void *shared = strmap_put(&aliases, a, strlen(a), position(i));
            if (other && unposition(other) != i)
                rc = perr(c, f->offset,
                          "record \"%s\": alias \"%s\" of field \"%s\" is the name of another "
                          "field",
                          rec->name.full, a, f->name);
            else if (shared && unposition(shared) != i)
                rc = perr(c, f->offset,
                          "record \"%s\": fields \"%s\" and \"%s\" share the alias \"%s\"",
                          rec->name.full, rec->fields[unposition(shared)].name, f->name, a);
        }
    }
    strmap_destroy(&aliases);
    return rc;
}

/* name, namespace, doc, aliases of a named type, then its definition is registered (before its
 * body, so the body may refer to it). */
static int named_head(struct pctx *c, const struct json_value *v, const char *space,
                      struct avro_node *t)
{
    const struct json_value *nv = json_member(v, "name");
    if (!nv || nv->type != JSON_STRING)
        return perr(c, v->offset, "a %s needs a \"name\" string", avro_type_name(t->type));
    if (c_string(c, nv, "a name") != 0)
        return -ERR_INVALID;
    const struct json_value *sv = json_member(v, "namespace");
    if (sv && sv->type == JSON_STRING) {
        if (c_string(c, sv, "a namespace") != 0)
            return -ERR_INVALID;
        space = sv->str;
    }
    t->name = make_name(c, nv->str, space);
    if (take_doc(c, v, &t->doc) != 0 || take_type_aliases(c, v, t) != 0)
        return -ERR_INVALID;
    return define(c, t, nv->offset);
}

static int parse_record(struct pctx *c, const struct json_value *v, const char *space,
                        struct avro_node *t)
{
    if (named_head(c, v, space, t) != 0)
        return -ERR_INVALID;
    const struct json_value *fs = json_member(v, "fields");
    if (!fs || fs->type != JSON_ARRAY)
        return perr(c, v->offset, "record \"%s\" needs a \"fields\" array", t->name.full);
    struct avro_field *fields = arena_calloc(c->a, fs->n + 1, sizeof(*fields));
    t->fields = fields;
    t->n_fields = fs->n;
    size_t i = 0;
    for (const struct json_value *fv = fs->child; fv; fv = fv->next, i++)
        if (parse_field(c, fv, t, &fields[i]) != 0)
            return -ERR_INVALID;
    if (index_fields(c, t) != 0)
        return -ERR_INVALID;
    return take_props(c, v, schema_reserved, &t->props, &t->n_props);
}

static int parse_enum(struct pctx *c, const struct json_value *v, const char *space,
                      struct avro_node *t)
{
    if (named_head(c, v, space, t) != 0)
        return -ERR_INVALID;
    const struct json_value *sv = json_member(v, "symbols");
    if (!sv || sv->type != JSON_ARRAY)
        return perr(c, v->offset, "enum \"%s\" needs a \"symbols\" array", t->name.full);
    const char **syms = arena_alloc(c->a, sv->n * sizeof(*syms) + 1);
    struct strmap *index = new_index(c);
    t->index = index;
    size_t i = 0;
    for (const struct json_value *s = sv->child; s; s = s->next, i++) {
        if (s->type != JSON_STRING)
            return perr(c, s->offset, "enum \"%s\": a symbol must be a string, not %s",
                        t->name.full, jtype_name(s->type));
        if (c_string(c, s, "a symbol") != 0 ||
            check_name(c, "enum symbol", s->str, s->str_len, s->offset) != 0)
            return -ERR_INVALID;
        if (strmap_put(index, s->str, s->str_len, position(i)))
            return perr(c, s->offset, "enum \"%s\" has the symbol \"%s\" twice", t->name.full,
                        s->str);
        syms[i] = s->str;
    }
    t->symbols = syms;
    t->n_symbols = sv->n;
    const struct json_value *dv = json_member(v, "default");
    if (dv) {
        if (dv->type != JSON_STRING || avro_enum_symbol(t, dv->str, dv->str_len) < 0)
            return perr(c, dv->offset, "enum \"%s\": the default %s is not one of its symbols",
                        t->name.full, show(c, dv));
        t->enum_default = dv->str;
    }
    return take_props(c, v, enum_reserved, &t->props, &t->n_props);
}

static int parse_fixed(struct pctx *c, const struct json_value *v, const char *space,
                       struct avro_node *t)
{
    if (named_head(c, v, space, t) != 0)
        return -ERR_INVALID;
    const struct json_value *sz = json_member(v, "size");
    int32_t size;
    if (!int32_prop(sz, &size) || size < 0)
        return perr(c, sz ? sz->offset : v->offset,
                    "fixed \"%s\" needs a \"size\": an integer from 0 to 2147483647", t->name.full);
    t->size = size;
    return take_props(c, v, schema_reserved, &t->props, &t->n_props);
}

static int parse_object(struct pctx *c, const struct json_value *v, const char *space,
                        const struct avro_node **slot)
{
    const struct json_value *tv = json_member(v, "type");
    if (!tv)
        return perr(c, v->offset, "a schema object needs a \"type\"");
    if (tv->type != JSON_STRING)
        return perr(c, tv->offset,
                    "\"type\" must be a string naming a type, not %s (a schema object's "
                    "\"type\" cannot itself be a schema)",
                    jtype_name(tv->type));
    if (c_string(c, tv, "a type name") != 0)
        return -ERR_INVALID;
    const char *ts = tv->str;
    enum avro_type pt;
    struct avro_node *t;
    int rc = 0;
    if (is_primitive(ts, &pt)) {
        t = new_node(c, pt);
        rc = take_props(c, v, schema_reserved, &t->props, &t->n_props);
    } else if (strcmp(ts, "record") == 0 || strcmp(ts, "error") == 0) {
        t = new_node(c, AVRO_RECORD);
        t->is_error = ts[0] == 'e';
        rc = parse_record(c, v, space, t);
    } else if (strcmp(ts, "enum") == 0) {
        t = new_node(c, AVRO_ENUM);
        rc = parse_enum(c, v, space, t);
    } else if (strcmp(ts, "fixed") == 0) {
        t = new_node(c, AVRO_FIXED);
        rc = parse_fixed(c, v, space, t);
    } else if (strcmp(ts, "array") == 0 || strcmp(ts, "map") == 0) {
        bool array = ts[0] == 'a';
        t = new_node(c, array ? AVRO_ARRAY : AVRO_MAP);
        const struct json_value *iv = json_member(v, array ? "items" : "values");
        if (!iv)
            return perr(c, v->offset, "%s needs \"%s\"", array ? "an array" : "a map",
                        array ? "items" : "values");
        rc = parse_schema(c, iv, space, &t->items);
        if (rc == 0)
            rc = take_props(c, v, schema_reserved, &t->props, &t->n_props);
    } else {
        /* {"type": "some.Name"}: a reference to a named type in object form. */
        return parse_reference(c, tv, space, slot);
    }
    if (rc != 0)
        return -ERR_INVALID;
    find_logical(t);
    *slot = t;
    return 0;
}

static int parse_union(struct pctx *c, const struct json_value *v, const char *space,
                       const struct avro_node **slot)
{
    struct avro_node *t = new_node(c, AVRO_UNION);
    const struct avro_node **br = arena_calloc(c->a, v->n + 1, sizeof(*br));
    t->branches = br;
    t->n_branches = v->n;
    size_t i = 0;
    for (const struct json_value *b = v->child; b; b = b->next, i++)
        if (parse_schema(c, b, space, &br[i]) != 0)
            return -ERR_INVALID;
    MEM_GROW(c->unions, c->cap_unions, c->n_unions + 1);
    c->unions[c->n_unions++] = (struct pending_union){.node = t, .offset = v->offset};
    *slot = t;
    return 0;
}

static int parse_schema(struct pctx *c, const struct json_value *v, const char *space,
                        const struct avro_node **slot)
{
    switch (v->type) {
    case JSON_STRING:
        return parse_reference(c, v, space, slot);
    case JSON_OBJECT:
        return parse_object(c, v, space, slot);
    case JSON_ARRAY:
        return parse_union(c, v, space, slot);
    default:
        return perr(c, v->offset, "a schema is a string, an object or an array, not %s",
                    jtype_name(v->type));
    }
}

/* ---- checks after resolution ---- */

static int resolve(struct pctx *c)
{
    for (size_t i = 0; i < c->n_fixups; i++) {
        const struct fixup *f = &c->fixups[i];
        const struct avro_node *t = lookup(c, f->full);
        if (!t && f->bare)
            t = lookup(c, f->bare);
        if (!t)
            return perr(c, f->offset, "unknown type \"%s\"", f->bare ? f->bare : f->full);
        *f->slot = t;
    }
    return 0;
}

/* The key by which a union tells its branches apart (Avro Java's getFullName()). */
static const char *branch_key(const struct avro_node *t)
{
    return t->name.full ? t->name.full : avro_type_name(t->type);
}

static int check_unions(struct pctx *c)
{
    for (size_t u = 0; u < c->n_unions; u++) {
        const struct avro_node *t = c->unions[u].node;
        size_t off = c->unions[u].offset;
        struct strmap keys;
        strmap_init(&keys);
        int rc = 0;
        for (size_t i = 0; i < t->n_branches && rc == 0; i++) {
            const struct avro_node *b = t->branches[i];
            const char *k = branch_key(b);
            if (b->type == AVRO_UNION)
                rc = perr(c, off, "a union may not directly contain another union");
            else if (strmap_put(&keys, k, strlen(k), (void *)b))
                rc = perr(c, off, "a union has two branches of type \"%s\"", k);
        }
        strmap_destroy(&keys);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static bool valid_default(const struct avro_node *t, const struct json_value *v, int depth,
                          long *budget);

/* "int", "com.acme.Rec", "union [null, string]": a type in a message. */
static const char *describe_type(struct pctx *c, const struct avro_node *t)
{
    if (t->type != AVRO_UNION)
        return branch_key(t);
    struct strbuf sb;
    strbuf_init(&sb);
    strbuf_puts(&sb, "union [");
    for (size_t i = 0; i < t->n_branches; i++)
        strbuf_printf(&sb, "%s%s", i ? ", " : "", branch_key(t->branches[i]));
    strbuf_putc(&sb, ']');
    const char *r = arena_strndup(c->a, strbuf_str(&sb), sb.len);
    strbuf_destroy(&sb);
    return r;
}

static bool valid_record_default(const struct avro_node *t, const struct json_value *v, int depth,
                                 long *budget)
{
    if (v->type != JSON_OBJECT)
        return false;
    /* The object's members by field, in one pass (objects and records may both be big). */
    const struct json_value **given = mem_calloc(t->n_fields + 1, sizeof(*given));
    for (const struct json_value *m = v->child; m; m = m->next) {
        const struct avro_field *f = avro_record_field(t, m->key, m->key_len);
        if (f && !given[f - t->fields])
            given[f - t->fields] = m;
    }
    bool ok = true;
    for (size_t i = 0; i < t->n_fields && ok; i++) {
        const struct avro_field *f = &t->fields[i];
        const struct json_value *x = given[i] ? given[i] : f->def;
        ok = x && valid_default(f->type, x, depth + 1, budget);
    }
    mem_free(given);
    return ok;
}

/* Avro Java's Schema.isValidDefault, and an enum's value must be one of its symbols. A union
 * tries every branch, which on nested unions of records could take exponential time: the
 * budget (steps left) bounds it, and running out is a refusal the caller words. */
static bool valid_default(const struct avro_node *t, const struct json_value *v, int depth,
                          long *budget)
{
    if (depth > DEFAULT_DEPTH_MAX || --*budget < 0)
        return false;
    switch (t->type) {
    case AVRO_NULL:
        return v->type == JSON_NULL;
    case AVRO_BOOLEAN:
        return v->type == JSON_BOOL;
    case AVRO_INT:
        return v->type == JSON_NUMBER && v->is_int && v->int_value >= INT32_MIN &&
               v->int_value <= INT32_MAX;
    case AVRO_LONG:
        return v->type == JSON_NUMBER && v->is_int;
    case AVRO_FLOAT:
    case AVRO_DOUBLE:
        return v->type == JSON_NUMBER;
    case AVRO_STRING:
    case AVRO_BYTES:
    case AVRO_FIXED:
        return v->type == JSON_STRING;
    case AVRO_ENUM:
        return v->type == JSON_STRING && avro_enum_symbol(t, v->str, v->str_len) >= 0;
    case AVRO_ARRAY:
        if (v->type != JSON_ARRAY)
            return false;
        for (const struct json_value *x = v->child; x; x = x->next)
            if (!valid_default(t->items, x, depth + 1, budget))
                return false;
        return true;
    case AVRO_MAP:
        if (v->type != JSON_OBJECT)
            return false;
        for (const struct json_value *x = v->child; x; x = x->next)
            if (!valid_default(t->items, x, depth + 1, budget))
                return false;
        return true;
    case AVRO_UNION:
        for (size_t i = 0; i < t->n_branches; i++)
            if (valid_default(t->branches[i], v, depth + 1, budget))
                return true;
        return false;
    case AVRO_RECORD:
        return valid_record_default(t, v, depth, budget);
    }
    return false;
}

/* Java's Double.parseDouble for the text of a float or double field's default: optional
 * blanks and sign, NaN, Infinity, or a decimal number (".5" and "5." included) with an
 * optional exponent and f/F/d/D suffix. */
static bool java_parse_double(const char *s, double *out)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f')
        s++;
    char buf[512];
    size_t n = 0;
    if (*s == '+' || *s == '-')
        buf[n++] = *s++;
    bool neg = n && buf[0] == '-';
    const char *rest;
    if (strncmp(s, "NaN", 3) == 0) {
        *out = NAN;
        rest = s + 3;
    } else if (strncmp(s, "Infinity", 8) == 0) {
        *out = neg ? -INFINITY : INFINITY;
        rest = s + 8;
    } else {
        size_t digits = 0;
        bool dot = false;
        while ((*s >= '0' && *s <= '9') || *s == '.') {
            if (*s != '.')
                digits++;
            else if (dot)
                return false;
            else
                dot = true;
            if (n + 1 >= sizeof(buf))
                return false;
            buf[n++] = *s++;
        }
        if (digits == 0)
            return false;
        if (*s == 'e' || *s == 'E') {
            buf[n++] = *s++;
            if (*s == '+' || *s == '-')
                buf[n++] = *s++;
            if (*s < '0' || *s > '9')
                return false;
            while (*s >= '0' && *s <= '9') {
                if (n + 1 >= sizeof(buf))
                    return false;
                buf[n++] = *s++;
            }
        }
        if (*s == 'f' || *s == 'F' || *s == 'd' || *s == 'D')
            s++;
        buf[n] = '\0';
        *out = strtod(buf, NULL);
        rest = s;
    }
    while (*rest == ' ' || *rest == '\t' || *rest == '\n' || *rest == '\r' || *rest == '\f')
        rest++;
    return *rest == '\0';
}

/* Avro Java reads a textual default of a float or double field as a number: done for every
 * field first, so record defaults that fall back on nested field defaults see numbers. */
static int convert_float_defaults(struct pctx *c)
{
    for (size_t i = 0; i < c->n_fields; i++) {
        struct avro_field *f = c->fields[i].field;
        const struct json_value *d = f->def;
        if (!d || d->type != JSON_STRING ||
            (f->type->type != AVRO_FLOAT && f->type->type != AVRO_DOUBLE))
            continue;
        double x;
        if (strlen(d->str) != d->str_len || !java_parse_double(d->str, &x))
            return perr(c, d->offset, "record \"%s\": field \"%s\": the default %s is not a number",
                        c->fields[i].record->name.full, f->name, show(c, d));
        struct json_value *num = arena_calloc(c->a, 1, sizeof(*num));
        num->type = JSON_NUMBER;
        num->offset = d->offset;
        num->str = d->str;
        num->str_len = d->str_len;
        num->number = x;
        f->def = num;
    }
    return 0;
}

static int check_defaults(struct pctx *c)
{
    if (convert_float_defaults(c) != 0)
        return -ERR_INVALID;
    long budget = DEFAULT_BUDGET;
    for (size_t i = 0; c->strict && i < c->n_fields; i++) {
        const struct avro_field *f = c->fields[i].field;
        if (!f->def || valid_default(f->type, f->def, 0, &budget))
            continue;
        if (budget < 0)
            return perr(c, f->def->offset,
                        "record \"%s\": field \"%s\": the defaults are too complex to check",
                        c->fields[i].record->name.full, f->name);
        return perr(
            c, f->def->offset, "record \"%s\": field \"%s\": the default %s is not a valid %s",
            c->fields[i].record->name.full, f->name, show(c, f->def), describe_type(c, f->type));
    }
    return 0;
}

/* ---- references ---- */

/* The named types of every referenced schema (and, transitively, of theirs) become visible.
 * A name two references define is taken from the first (they are normally one schema). Each
 * schema is visited once, however many paths lead to it. */
static void add_refs(struct pctx *c, const struct avro_schema *const *refs, size_t n)
{
    struct strmap visited;
    strmap_init(&visited);
    const struct avro_schema **todo = NULL;
    size_t n_todo = 0, cap_todo = 0;
    for (size_t i = n; i-- > 0;) {
        MEM_GROW(todo, cap_todo, n_todo + 1);
        todo[n_todo++] = refs[i];
    }
    while (n_todo) {
        const struct avro_schema *r = todo[--n_todo];
        if (strmap_put(&visited, (const char *)&r, sizeof(r), (void *)r))
            continue;
        for (size_t k = 0; k < r->n_named; k++) {
            const char *full = r->named[k]->name.full;
            if (!strmap_get(&c->refd, full, strlen(full)))
                strmap_put(&c->refd, full, strlen(full), (void *)r->named[k]);
        }
        for (size_t i = r->n_refs; i-- > 0;) {
            MEM_GROW(todo, cap_todo, n_todo + 1);
            todo[n_todo++] = r->refs[i];
        }
    }
    mem_free(todo);
    strmap_destroy(&visited);
}

static void pctx_destroy(struct pctx *c)
{
    strmap_destroy(&c->own);
    strmap_destroy(&c->refd);
    mem_free(c->fixups);
    mem_free(c->unions);
    mem_free(c->fields);
    mem_free(c->named);
}

int avro_schema_parse(const char *text, size_t len, const struct avro_parse_opts *opts,
                      struct avro_schema **out, char *err, size_t err_size)
{
    struct avro_schema *s = mem_calloc(1, sizeof(*s));
    arena_init(&s->arena, 16384);
    struct pctx c = {
        .s = s,
        .a = &s->arena,
        .strict = !(opts && (opts->flags & AVRO_PARSE_LENIENT)),
        .err = err,
        .err_size = err_size,
    };
    if (err_size)
        err[0] = '\0';
    strmap_init(&c.own);
    strmap_init(&c.refd);
    /* Every value takes at least a byte of text: the values limit is the length, so the text's
     * size (the caller's cap) is what bounds the tree. */
    struct json_limits lim = {.depth_max = AVRO_JSON_DEPTH_MAX, .values_max = len + 1};
    char jerr[160];
    if (json_parse(&s->doc, text, len, &lim, jerr, sizeof(jerr)) != 0) {
        if (err_size)
            snprintf(err, err_size, "not valid JSON %s", jerr);
        c.failed = true;
        goto fail;
    }
    if (opts && opts->n_refs) {
        add_refs(&c, opts->refs, opts->n_refs);
        s->refs = arena_alloc(&s->arena, opts->n_refs * sizeof(*s->refs));
        memcpy(s->refs, opts->refs, opts->n_refs * sizeof(*s->refs));
        s->n_refs = opts->n_refs;
    }
    if (parse_schema(&c, s->doc.root, NULL, &s->root) != 0 || resolve(&c) != 0 ||
        check_unions(&c) != 0 || check_defaults(&c) != 0)
        goto fail;
    s->named = arena_alloc(&s->arena, c.n_named * sizeof(*s->named) + 1);
    if (c.n_named)
        memcpy(s->named, c.named, c.n_named * sizeof(*s->named));
    s->n_named = c.n_named;
    pctx_destroy(&c);
    *out = s;
    return 0;
fail:
    pctx_destroy(&c);
    avro_schema_free(s);
    return -ERR_INVALID;
}

void avro_schema_free(struct avro_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_indexes; i++) {
        strmap_destroy(s->indexes[i]);
        mem_free(s->indexes[i]);
    }
    mem_free(s->indexes);
    json_doc_free(&s->doc);
    arena_destroy(&s->arena);
    mem_free(s);
}

const struct avro_node *avro_schema_root(const struct avro_schema *s)
{
    return s->root;
}

const char *avro_schema_name(const struct avro_schema *s)
{
    return s->root->type == AVRO_RECORD ? s->root->name.full : NULL;
}

size_t avro_schema_named_count(const struct avro_schema *s)
{
    return s->n_named;
}

const struct avro_node *avro_schema_named(const struct avro_schema *s, size_t i)
{
    CHECK(i < s->n_named);
    return s->named[i];
}
