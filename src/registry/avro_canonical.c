/* The three written forms of an Avro schema, and its fingerprint (contract in registry/avro.h).
 *
 * avro_canonical() and avro_normalized() reproduce what Confluent's registry stores, which is
 * Avro Java's Schema.toString() as Jackson writes it; the differences between the two are
 * listed in avro.h. The JSON spelling follows Jackson's defaults:
 *   - strings: '"' and '\' escaped, \b \t \f \n \r by name, other controls as \u00XX (upper-case
 *     hex), everything else (non-ASCII included) as is;
 *   - integers as their value (IntNode, LongNode, BigIntegerNode), every other number as a
 *     double in Java's Double.toString spelling (shortest digits that read back; "100.0",
 *     "1.5E-5", "1.0E7"), NaN and infinities as the strings "NaN", "Infinity", "-Infinity".
 *
 * Named types are written in full the first time they are met in the walk and by name after
 * (the `known` set), which is also what ends the walk of a recursive type. Property keys are
 * sorted by bytes (Java sorts by UTF-16 units: the same order unless keys hold characters
 * beyond U+FFFF next to ones in U+E000-U+FFFF). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"
#include "base/mem.h"
#include "base/strmap.h"
#include "registry/avro.h"
#include "registry/avro_impl.h"

/* ---- Jackson's JSON spelling ---- */

void avro_json_string(struct strbuf *out, const char *s, size_t n)
{
    static const char hex[] = "0123456789ABCDEF";
    strbuf_putc(out, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        strbuf_append(out, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            strbuf_puts(out, "\\\"");
            break;
        case '\\':
            strbuf_puts(out, "\\\\");
            break;
        case '\b':
            strbuf_puts(out, "\\b");
            break;
        case '\t':
            strbuf_puts(out, "\\t");
            break;
        case '\f':
            strbuf_puts(out, "\\f");
            break;
        case '\n':
            strbuf_puts(out, "\\n");
            break;
        case '\r':
            strbuf_puts(out, "\\r");
            break;
        default: {
            char e[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], '\0'};
            strbuf_puts(out, e);
        }
        }
    }
    strbuf_append(out, s + run, n - run);
    strbuf_putc(out, '"');
}

static void cstr(struct strbuf *out, const char *s)
{
    avro_json_string(out, s, strlen(s));
}

/* Shortest decimal digits of d that read back to d (as a float when is_float): digits[] gets
 * them (no dot), *exp10 the exponent of the first digit. */
static size_t shortest_digits(double d, bool is_float, char *digits, int *exp10)
{
    char buf[40];
    int max = is_float ? 9 : 17;
    for (int p = 1; p <= max; p++) {
        snprintf(buf, sizeof(buf), "%.*e", p - 1, d);
        bool back = is_float ? strtof(buf, NULL) == (float)d : strtod(buf, NULL) == d;
        if (back || p == max)
            break;
    }
    /* Java writes at least two significant digits ("4.9E-324", not "5.0E-324"): when one
     * digit reads back, the closest two-digit decimal is taken (trailing zeros dropped). */
    if (buf[1] == 'e')
        snprintf(buf, sizeof(buf), "%.1e", d);
    size_t n = 0;
    const char *q = buf;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9')
            digits[n++] = *q;
    *exp10 = atoi(q + 1);
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return n;
}

/* Java's Double.toString (or Float.toString) of d. */
static void java_number(struct strbuf *out, double d, bool is_float)
{
    if (isnan(d)) {
        strbuf_puts(out, "\"NaN\"");
        return;
    }
    if (isinf(d)) {
        strbuf_puts(out, d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        return;
    }
    if (d == 0) {
        strbuf_puts(out, signbit(d) ? "-0.0" : "0.0");
        return;
    }
    if (d < 0)
        strbuf_putc(out, '-');
    double a = fabs(d);
    char dig[24];
    int e;
    size_t n = shortest_digits(a, is_float, dig, &e);
    if (a >= 1e-3 && a < 1e7) {
        if (e >= 0) {
            for (int i = 0; i <= e; i++)
                strbuf_putc(out, (size_t)i < n ? dig[i] : '0');
            strbuf_putc(out, '.');
            if ((size_t)e + 1 < n)
                strbuf_append(out, dig + e + 1, n - (size_t)e - 1);
            else
                strbuf_putc(out, '0');
        } else {
            strbuf_puts(out, "0.");
            for (int i = 0; i < -e - 1; i++)
                strbuf_putc(out, '0');
            strbuf_append(out, dig, n);
        }
        return;
    }
    strbuf_putc(out, dig[0]);
    strbuf_putc(out, '.');
    if (n > 1)
        strbuf_append(out, dig + 1, n - 1);
    else
        strbuf_putc(out, '0');
    strbuf_printf(out, "E%d", e);
}

void avro_json_write(struct strbuf *out, const struct json_value *v)
{
    switch (v->type) {
    case JSON_NULL:
        strbuf_puts(out, "null");
        return;
    case JSON_BOOL:
        strbuf_puts(out, v->boolean ? "true" : "false");
        return;
    case JSON_NUMBER:
        if (v->is_int)
            strbuf_printf(out, "%lld", (long long)v->int_value);
        else if (v->integral)
            strbuf_append(out, v->str, v->str_len); /* a BigInteger: the literal is canonical */
        else
            java_number(out, v->number, false);
        return;
    case JSON_STRING:
        avro_json_string(out, v->str, v->str_len);
        return;
    case JSON_ARRAY:
        strbuf_putc(out, '[');
        for (const struct json_value *x = v->child; x; x = x->next) {
            if (x != v->child)
                strbuf_putc(out, ',');
            avro_json_write(out, x);
        }
        strbuf_putc(out, ']');
        return;
    case JSON_OBJECT:
        strbuf_putc(out, '{');
        for (const struct json_value *m = v->child; m; m = m->next) {
            if (m != v->child)
                strbuf_putc(out, ',');
            avro_json_string(out, m->key, m->key_len);
            strbuf_putc(out, ':');
            avro_json_write(out, m);
        }
        strbuf_putc(out, '}');
        return;
    }
}

/* ---- normalize=true: defaults converted to their type (Avro Java's JacksonUtils) ---- */

/* s[0, n) as Java's new String(s.getBytes(ISO_8859_1), ISO_8859_1): code points above U+00FF
 * become '?'. The input is well-formed UTF-8 (the JSON parser checked it). */
static void latin1_string(struct strbuf *out, const char *s, size_t n)
{
    struct strbuf tmp;
    strbuf_init(&tmp);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        size_t l = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
        if (l == 2 && c <= 0xc3)
            strbuf_append(&tmp, s + i, 2); /* U+0080-U+00FF */
        else if (l == 1)
            strbuf_putc(&tmp, (char)c);
        else
            strbuf_putc(&tmp, '?');
        i += l;
    }
    avro_json_string(out, strbuf_str(&tmp), tmp.len);
    strbuf_destroy(&tmp);
}

static bool convert(struct strbuf *out, const struct avro_node *t, const struct json_value *v,
                    long *budget);

static bool convert_number(struct strbuf *out, const struct avro_node *t,
                           const struct json_value *v)
{
    enum avro_type tt = t ? t->type : AVRO_NULL;
    bool generic = !t;
    if (v->integral && !v->is_int)
        return false; /* a BigIntegerNode converts to nothing */
    if (v->is_int) {
        if (generic || tt == AVRO_LONG || tt == AVRO_INT) {
            /* an IntNode or a LongNode: the value either way */
            strbuf_printf(out, "%lld", (long long)v->int_value);
            return true;
        }
        if (tt == AVRO_FLOAT || tt == AVRO_DOUBLE) {
            java_number(out, tt == AVRO_FLOAT ? (double)(float)v->int_value : (double)v->int_value,
                        tt == AVRO_FLOAT);
            return true;
        }
        return false;
    }
    if (generic || tt == AVRO_DOUBLE) {
        java_number(out, v->number, false);
        return true;
    }
    if (tt == AVRO_FLOAT) {
        java_number(out, (double)(float)v->number, true);
        return true;
    }
    return false;
}

static bool convert_container(struct strbuf *out, const struct avro_node *t,
                              const struct json_value *v, long *budget)
{
    if (v->type == JSON_ARRAY) {
        if (t && t->type != AVRO_ARRAY)
            return false;
        strbuf_putc(out, '[');
        for (const struct json_value *x = v->child; x; x = x->next) {
            if (x != v->child)
                strbuf_putc(out, ',');
            if (!convert(out, t ? t->items : NULL, x, budget))
                return false;
        }
        strbuf_putc(out, ']');
        return true;
    }
    strbuf_putc(out, '{');
    for (const struct json_value *m = v->child; m; m = m->next) {
        const struct avro_node *vt = NULL;
        if (t && t->type == AVRO_MAP) {
            vt = t->items;
        } else if (t && t->type == AVRO_RECORD) {
            const struct avro_field *f = avro_record_field(t, m->key, m->key_len);
            if (!f)
                return false;
            vt = f->type;
        }
        if (m != v->child)
            strbuf_putc(out, ',');
        avro_json_string(out, m->key, m->key_len);
        strbuf_putc(out, ':');
        if (!convert(out, vt, m, budget))
            return false;
    }
    strbuf_putc(out, '}');
    return true;
}

/* v converted for type t (NULL: no type), as JacksonUtils.toObject then back to JSON; false
 * where Java gets no object (the caller then writes the value as it is). A union tries its
 * branches in turn, which nested unions of records could make exponential: the budget (steps
 * left) bounds it, and running out is a failure like the others. */
static bool convert(struct strbuf *out, const struct avro_node *t, const struct json_value *v,
                    long *budget)
{
    if (--*budget < 0)
        return false;
    if (v->type == JSON_NULL) {
        strbuf_puts(out, "null");
        return true;
    }
    if (t && t->type == AVRO_UNION) {
        for (size_t i = 0; i < t->n_branches; i++) {
            if (t->branches[i]->type == AVRO_NULL)
                continue;
            struct strbuf tmp;
            strbuf_init(&tmp);
            bool ok = convert(&tmp, t->branches[i], v, budget);
            if (ok)
                strbuf_append(out, strbuf_str(&tmp), tmp.len);
            strbuf_destroy(&tmp);
            if (ok)
                return true;
        }
        return false;
    }
    switch (v->type) {
    case JSON_BOOL:
        avro_json_write(out, v);
        return true;
    case JSON_NUMBER:
        return convert_number(out, t, v);
    case JSON_STRING:
        if (!t || t->type == AVRO_STRING || t->type == AVRO_ENUM) {
            avro_json_string(out, v->str, v->str_len);
            return true;
        }
        if (t->type == AVRO_BYTES || t->type == AVRO_FIXED) {
            latin1_string(out, v->str, v->str_len);
            return true;
        }
        return false;
    case JSON_ARRAY:
    case JSON_OBJECT:
        return convert_container(out, t, v, budget);
    case JSON_NULL:
        break;
    }
    return false;
}

/* ---- Schema.toString() ---- */

struct writer {
    struct strbuf *o;
    bool normalized;
    struct strmap known; /* full names already written in full */
};

static bool is_type_name(const char *s)
{
    static const char *const names[] = {"null",   "boolean", "int",    "long",   "float",
                                        "double", "bytes",   "string", "record", "enum",
                                        "array",  "map",     "union",  "fixed"};
    for (size_t i = 0; i < ARRAY_LEN(names); i++)
        if (strcmp(s, names[i]) == 0)
            return true;
    return false;
}

static bool same_space(const char *a, const char *b)
{
    return a && b && strcmp(a, b) == 0;
}

/* Avro Java's Name.getQualified(): the simple name where the namespace is the enclosing one
 * (unless it would read as a type name), the full name otherwise. */
static void qualified(struct writer *w, const struct avro_name *nm, const char *space)
{
    if (same_space(nm->space, space) && !is_type_name(nm->name))
        cstr(w->o, nm->name);
    else
        cstr(w->o, nm->full);
}

static void key(struct writer *w, const char *k)
{
    strbuf_putc(w->o, ',');
    cstr(w->o, k);
    strbuf_putc(w->o, ':');
}

static int prop_cmp(const void *a, const void *b)
{
    const struct avro_prop *x = *(const struct avro_prop *const *)a;
    const struct avro_prop *y = *(const struct avro_prop *const *)b;
    return strcmp(x->key, y->key);
}

/* Properties: in document order; normalized, a valid logical type's attributes first
 * (logicalType, then a decimal's precision and a non-zero scale) and the rest by key. */
static void write_props(struct writer *w, const struct avro_prop *props, size_t n,
                        const struct avro_node *t)
{
    if (n == 0)
        return;
    const struct avro_prop **order = mem_alloc(n * sizeof(*order));
    size_t k = 0;
    if (w->normalized && t && t->logical != AVRO_LT_NONE) {
        const char *first[3] = {"logicalType", NULL, NULL};
        if (t->logical == AVRO_LT_DECIMAL) {
            first[1] = "precision";
            first[2] = t->scale ? "scale" : NULL;
        }
        for (size_t f = 0; f < 3 && first[f]; f++)
            for (size_t i = 0; i < n; i++)
                if (strcmp(props[i].key, first[f]) == 0)
                    order[k++] = &props[i];
    }
    size_t head = k;
    for (size_t i = 0; i < n; i++) {
        bool taken = false;
        for (size_t j = 0; j < head && !taken; j++)
            taken = order[j] == &props[i];
        if (!taken)
            order[k++] = &props[i];
    }
    if (w->normalized)
        qsort(order + head, k - head, sizeof(*order), prop_cmp);
    for (size_t i = 0; i < k; i++) {
        key(w, order[i]->key);
        avro_json_write(w->o, order[i]->value);
    }
    mem_free(order);
}

/* Java's getAliases() string of an alias (sorted on, under normalize=true). */
static const char *alias_sort_key(const struct avro_node *t, const struct avro_name *a,
                                  struct strbuf *tmp)
{
    strbuf_reset(tmp);
    if (!a->space && t->name.space)
        strbuf_putc(tmp, '.');
    strbuf_puts(tmp, a->space ? a->full : a->name);
    return strbuf_str(tmp);
}

static int alias_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void write_type_aliases(struct writer *w, const struct avro_node *t)
{
    if (t->n_aliases == 0)
        return;
    key(w, "aliases");
    strbuf_putc(w->o, '[');
    if (!w->normalized) {
        for (size_t i = 0; i < t->n_aliases; i++) {
            if (i)
                strbuf_putc(w->o, ',');
            qualified(w, &t->aliases[i], t->name.space);
        }
        strbuf_putc(w->o, ']');
        return;
    }
    /* Sort "key\0index" strings, then write in that order. */
    char **keys = mem_alloc(t->n_aliases * sizeof(*keys));
    struct strbuf tmp;
    strbuf_init(&tmp);
    for (size_t i = 0; i < t->n_aliases; i++) {
        const char *k = alias_sort_key(t, &t->aliases[i], &tmp);
        size_t kl = strlen(k);
        keys[i] = mem_alloc(kl + 1 + sizeof(size_t));
        memcpy(keys[i], k, kl + 1);
        memcpy(keys[i] + kl + 1, &i, sizeof(size_t));
    }
    qsort(keys, t->n_aliases, sizeof(*keys), alias_cmp);
    for (size_t i = 0; i < t->n_aliases; i++) {
        size_t idx;
        memcpy(&idx, keys[i] + strlen(keys[i]) + 1, sizeof(size_t));
        if (i)
            strbuf_putc(w->o, ',');
        qualified(w, &t->aliases[idx], t->name.space);
        mem_free(keys[i]);
    }
    mem_free(keys);
    strbuf_destroy(&tmp);
    strbuf_putc(w->o, ']');
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void write_field_aliases(struct writer *w, const struct avro_field *f)
{
    if (f->n_aliases == 0)
        return;
    const char **v = mem_alloc(f->n_aliases * sizeof(*v));
    memcpy(v, f->aliases, f->n_aliases * sizeof(*v));
    if (w->normalized)
        qsort(v, f->n_aliases, sizeof(*v), str_cmp);
    key(w, "aliases");
    strbuf_putc(w->o, '[');
    for (size_t i = 0; i < f->n_aliases; i++) {
        if (i)
            strbuf_putc(w->o, ',');
        cstr(w->o, v[i]);
    }
    strbuf_putc(w->o, ']');
    mem_free(v);
}

/* "name", then "namespace" where it differs from the enclosing one (Name.writeName()). */
static void write_name(struct writer *w, const struct avro_node *t, const char *space)
{
    key(w, "name");
    cstr(w->o, t->name.name);
    if (t->name.space) {
        if (!same_space(t->name.space, space)) {
            key(w, "namespace");
            cstr(w->o, t->name.space);
        }
    } else if (space) {
        key(w, "namespace");
        strbuf_puts(w->o, "\"\"");
    }
}

static void write_doc(struct writer *w, const char *doc, bool named)
{
    if (!doc || (w->normalized && named && !doc[0]))
        return;
    key(w, "doc");
    cstr(w->o, doc);
}

static void write_node(struct writer *w, const struct avro_node *t, const char *space);

static void write_default(struct writer *w, const struct avro_field *f)
{
    key(w, "default");
    if (!w->normalized) {
        avro_json_write(w->o, f->def);
        return;
    }
    struct strbuf tmp;
    strbuf_init(&tmp);
    long budget = 1L << 20;
    if (convert(&tmp, f->type, f->def, &budget))
        strbuf_append(w->o, strbuf_str(&tmp), tmp.len);
    else
        avro_json_write(w->o, f->def);
    strbuf_destroy(&tmp);
}

static void write_field(struct writer *w, const struct avro_field *f, const char *space)
{
    strbuf_puts(w->o, "{\"name\":");
    cstr(w->o, f->name);
    key(w, "type");
    write_node(w, f->type, space);
    write_doc(w, f->doc, false);
    if (f->def)
        write_default(w, f);
    static const char *const orders[] = {"ascending", "descending", "ignore"};
    if (f->order != AVRO_ORDER_ASCENDING) {
        key(w, "order");
        cstr(w->o, orders[f->order]);
    }
    write_field_aliases(w, f);
    write_props(w, f->props, f->n_props, NULL);
    strbuf_putc(w->o, '}');
}

/* A named type met before is written by name; true when that happened. */
static bool named_ref(struct writer *w, const struct avro_node *t, const char *space)
{
    size_t n = strlen(t->name.full);
    if (!strmap_get(&w->known, t->name.full, n)) {
        strmap_put(&w->known, t->name.full, n, (void *)t);
        return false;
    }
    qualified(w, &t->name, space);
    return true;
}

static void write_named(struct writer *w, const struct avro_node *t, const char *space)
{
    if (named_ref(w, t, space))
        return;
    const char *kind = t->type == AVRO_RECORD ? (t->is_error && !w->normalized ? "error" : "record")
                                              : avro_type_name(t->type);
    strbuf_puts(w->o, "{\"type\":");
    cstr(w->o, kind);
    write_name(w, t, space);
    write_doc(w, t->doc, true);
    if (t->type == AVRO_RECORD) {
        key(w, "fields");
        strbuf_putc(w->o, '[');
        for (size_t i = 0; i < t->n_fields; i++) {
            if (i)
                strbuf_putc(w->o, ',');
            write_field(w, &t->fields[i], t->name.space);
        }
        strbuf_putc(w->o, ']');
    } else if (t->type == AVRO_ENUM) {
        key(w, "symbols");
        strbuf_putc(w->o, '[');
        for (size_t i = 0; i < t->n_symbols; i++) {
            if (i)
                strbuf_putc(w->o, ',');
            cstr(w->o, t->symbols[i]);
        }
        strbuf_putc(w->o, ']');
        if (t->enum_default) {
            key(w, "default");
            cstr(w->o, t->enum_default);
        }
    } else {
        key(w, "size");
        strbuf_printf(w->o, "%d", (int)t->size);
    }
    write_props(w, t->props, t->n_props, t);
    write_type_aliases(w, t);
    strbuf_putc(w->o, '}');
}

static void write_node(struct writer *w, const struct avro_node *t, const char *space)
{
    switch (t->type) {
    case AVRO_RECORD:
    case AVRO_ENUM:
    case AVRO_FIXED:
        write_named(w, t, space);
        return;
    case AVRO_UNION:
        strbuf_putc(w->o, '[');
        for (size_t i = 0; i < t->n_branches; i++) {
            if (i)
                strbuf_putc(w->o, ',');
            write_node(w, t->branches[i], space);
        }
        strbuf_putc(w->o, ']');
        return;
    case AVRO_ARRAY:
    case AVRO_MAP:
        strbuf_puts(w->o, "{\"type\":");
        cstr(w->o, avro_type_name(t->type));
        key(w, t->type == AVRO_ARRAY ? "items" : "values");
        write_node(w, t->items, space);
        write_props(w, t->props, t->n_props, t);
        strbuf_putc(w->o, '}');
        return;
    default:
        if (t->n_props == 0) {
            cstr(w->o, avro_type_name(t->type));
            return;
        }
        strbuf_puts(w->o, "{\"type\":");
        cstr(w->o, avro_type_name(t->type));
        write_props(w, t->props, t->n_props, t);
        strbuf_putc(w->o, '}');
        return;
    }
}

static void write_schema(const struct avro_schema *s, struct strbuf *out, bool normalized)
{
    struct writer w = {.o = out, .normalized = normalized};
    strmap_init(&w.known);
    /* Confluent passes the references to toString(): their roots are written by name. */
    for (size_t i = 0; i < s->n_refs; i++) {
        const struct avro_node *r = s->refs[i]->root;
        if (r->name.full)
            strmap_put(&w.known, r->name.full, strlen(r->name.full), (void *)r);
    }
    write_node(&w, s->root, NULL);
    strmap_destroy(&w.known);
}

void avro_canonical(const struct avro_schema *s, struct strbuf *out)
{
    write_schema(s, out, false);
}

void avro_normalized(const struct avro_schema *s, struct strbuf *out)
{
    write_schema(s, out, true);
}

/* ---- Parsing Canonical Form ---- */

static void pcf_node(struct strbuf *o, struct strmap *env, const struct avro_node *t)
{
    switch (t->type) {
    case AVRO_UNION:
        strbuf_putc(o, '[');
        for (size_t i = 0; i < t->n_branches; i++) {
            if (i)
                strbuf_putc(o, ',');
            pcf_node(o, env, t->branches[i]);
        }
        strbuf_putc(o, ']');
        return;
    case AVRO_ARRAY:
    case AVRO_MAP:
        strbuf_puts(o, t->type == AVRO_ARRAY ? "{\"type\":\"array\",\"items\":"
                                             : "{\"type\":\"map\",\"values\":");
        pcf_node(o, env, t->items);
        strbuf_putc(o, '}');
        return;
    case AVRO_RECORD:
    case AVRO_ENUM:
    case AVRO_FIXED:
        break;
    default:
        cstr(o, avro_type_name(t->type));
        return;
    }
    size_t n = strlen(t->name.full);
    if (strmap_get(env, t->name.full, n)) {
        cstr(o, t->name.full);
        return;
    }
    strmap_put(env, t->name.full, n, (void *)t);
    strbuf_puts(o, "{\"name\":");
    cstr(o, t->name.full);
    strbuf_puts(o, ",\"type\":");
    cstr(o, avro_type_name(t->type));
    if (t->type == AVRO_ENUM) {
        strbuf_puts(o, ",\"symbols\":[");
        for (size_t i = 0; i < t->n_symbols; i++) {
            if (i)
                strbuf_putc(o, ',');
            cstr(o, t->symbols[i]);
        }
        strbuf_putc(o, ']');
    } else if (t->type == AVRO_FIXED) {
        strbuf_printf(o, ",\"size\":%d", (int)t->size);
    } else {
        strbuf_puts(o, ",\"fields\":[");
        for (size_t i = 0; i < t->n_fields; i++) {
            if (i)
                strbuf_putc(o, ',');
            strbuf_puts(o, "{\"name\":");
            cstr(o, t->fields[i].name);
            strbuf_puts(o, ",\"type\":");
            pcf_node(o, env, t->fields[i].type);
            strbuf_putc(o, '}');
        }
        strbuf_putc(o, ']');
    }
    strbuf_putc(o, '}');
}

void avro_pcf(const struct avro_schema *s, struct strbuf *out)
{
    struct strmap env;
    strmap_init(&env);
    pcf_node(out, &env, s->root);
    strmap_destroy(&env);
}

/* ---- fingerprints ---- */

#define CRC64_AVRO_EMPTY 0xc15d213aa4d7a795ULL

static uint64_t crc64_table[256];
static pthread_once_t crc64_once = PTHREAD_ONCE_INIT;

static void crc64_init(void)
{
    for (unsigned i = 0; i < 256; i++) {
        uint64_t fp = i;
        for (int j = 0; j < 8; j++)
            fp = (fp >> 1) ^ (CRC64_AVRO_EMPTY & (0 - (fp & 1)));
        crc64_table[i] = fp;
    }
}

uint64_t avro_crc64(const void *p, size_t n)
{
    pthread_once(&crc64_once, crc64_init);
    const unsigned char *b = p;
    uint64_t fp = CRC64_AVRO_EMPTY;
    for (size_t i = 0; i < n; i++)
        fp = (fp >> 8) ^ crc64_table[(fp ^ b[i]) & 0xff];
    return fp;
}

uint64_t avro_fingerprint(const struct avro_schema *s)
{
    struct strbuf pcf;
    strbuf_init(&pcf);
    avro_pcf(s, &pcf);
    uint64_t fp = avro_crc64(strbuf_str(&pcf), pcf.len);
    strbuf_destroy(&pcf);
    return fp;
}
