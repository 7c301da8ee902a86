/* The canonical text of a schema's own file (proto_canonical() of registry/protobuf.h), in
 * the layout of Confluent's ProtobufSchemaUtils.toString (what canonicalString() returns, and
 * what the registry stores): two-space indentation, one declaration per line, a blank line
 * between the sections of a file or message, and inside a message: reserved, options, fields,
 * oneofs, groups, extension ranges, extend blocks, nested messages, nested enums. Messages come
 * before enums at every level (their order is kept: message indexes count it). A default and a
 * json_name print as the last field options. Numbers and identifiers print as written.
 *
 * Normalized (normalize=true, Confluent's toNormalizedString): proto2's syntax line left out;
 * imports sorted and deduplicated; field, map-value, rpc and extendee types fully qualified
 * with a leading dot; fields (also in oneofs, groups and extend blocks) by number, oneofs by
 * their first number, enum values by number then name; reserved and extension ranges one item
 * per statement in order, a one-number range as the number; options sorted by name, custom
 * option names qualified, `(opt).a.b = v` rewritten as `(opt) = { a: { b: v } }`, repeated
 * settings of one non-repeated custom option merged into one aggregate; aggregate keys sorted,
 * empty lists dropped, one-element lists unwrapped; numbers reformatted as Java's DecimalFormat
 * does (decimal integers, at most three fraction digits).
 *
 * Differences from Confluent's text, where its text would not parse back: strings escape
 * control and ill-formed UTF-8 bytes as octal; a bytes field's default is quoted; weak
 * imports print (after public ones). Normalization's temporary values live in an arena of the
 * call. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "registry/proto_ast.h"

struct pctx {
    const struct proto_schema *s;
    bool normalize;
    struct arena arena;   /* normalized values */
    const char *scope;    /* package and enclosing types, for option names */
};

/* An option as printed: from the tree, or rewritten by normalization. */
struct popt {
    const char *name;
    bool paren;
    const struct proto_val *val;
};

static void *lalloc(struct pctx *c, size_t n)
{
    void *p = arena_alloc(&c->arena, n ? n : 1);
    memset(p, 0, n);
    return p;
}

static void lpush(struct pctx *c, struct pvec *v, void *p)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        void **nv = arena_alloc(&c->arena, cap * sizeof(void *));
        if (v->n)
            memcpy(nv, v->v, v->n * sizeof(void *));
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = p;
}

/* Sorts pointers stably (Java's sorts are): qsort on (pointer, original position). */
struct slot {
    void *p;
    size_t i;
    int (*cmp)(const void *, const void *);
};

static int slot_cmp(const void *a, const void *b)
{
    const struct slot *x = a, *y = b;
    int d = x->cmp(&x->p, &y->p);
    return d ? d : x->i < y->i ? -1 : x->i > y->i;
}

static void stable_sort(struct pctx *c, void **v, size_t n,
                        int (*cmp)(const void *, const void *))
{
    if (n < 2)
        return;
    struct slot *s = arena_alloc(&c->arena, n * sizeof(*s));
    for (size_t i = 0; i < n; i++)
        s[i] = (struct slot){v[i], i, cmp};
    qsort(s, n, sizeof(*s), slot_cmp);
    for (size_t i = 0; i < n; i++)
        v[i] = s[i].p;
}

static const char *lprintf(struct pctx *c, const char *a, const char *b, const char *d)
{
    size_t n = strlen(a) + strlen(b) + strlen(d) + 1;
    char *r = arena_alloc(&c->arena, n);
    snprintf(r, n, "%s%s%s", a, b, d);
    return r;
}

/* appendIndented: every line of src (a trailing empty one dropped) with two spaces before it. */
static void indent(struct strbuf *dst, const struct strbuf *src)
{
    const char *p = strbuf_str(src), *end = p + src->len;
    while (end > p && end[-1] == '\n')
        end--;
    if (p == end) {
        strbuf_puts(dst, "  \n");
        return;
    }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl ? nl : end;
        strbuf_puts(dst, "  ");
        strbuf_append(dst, p, (size_t)(le - p));
        strbuf_putc(dst, '\n');
        p = nl ? nl + 1 : end;
    }
}

/* ---- values ---- */

static void escape(struct strbuf *b, const char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        const char *e = NULL;
        switch (c) {
        case '\a': e = "\\a"; break;
        case '\b': e = "\\b"; break;
        case '\f': e = "\\f"; break;
        case '\n': e = "\\n"; break;
        case '\r': e = "\\r"; break;
        case '\t': e = "\\t"; break;
        case '\v': e = "\\v"; break;
        case '\\': e = "\\\\"; break;
        case '\'': e = "\\'"; break;
        case '"': e = "\\\""; break;
        default: break;
        }
        if (e) {
            strbuf_puts(b, e);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            strbuf_printf(b, "\\%03o", c);
            i++;
        } else if (c < 0x80) {
            strbuf_putc(b, (char)c);
            i++;
        } else {
            size_t n = utf8_seq_len((const unsigned char *)s + i, len - i);
            if (n == 0) {
                strbuf_printf(b, "\\%03o", c);
                i++;
            } else {
                strbuf_append(b, s + i, n);
                i += n;
            }
        }
    }
}

static void quoted(struct strbuf *b, const char *s, size_t len)
{
    strbuf_putc(b, '"');
    escape(b, s, len);
    strbuf_putc(b, '"');
}

/* The shortest decimal digits that read back as v (as Java's Double.toString picks them):
 * digits[] and the decimal exponent of the first digit. */
static int shortest_digits(double v, char *digits, int *exp10)
{
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v || prec == 17)
            break;
    }
    int n = 0;
    const char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[n++] = *p;
    *exp10 = *p == 'e' ? atoi(p + 1) : 0;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return n;
}

/* Java's new DecimalFormat() (pattern #,##0.###, grouping off) of v: the shortest digits
 * rounded HALF_EVEN to three fraction digits, no exponent, trailing zeros dropped. */
static void decimal_format(struct strbuf *b, double v)
{
    bool neg = signbit(v);
    char digits[32];
    int e;
    int n = shortest_digits(fabs(v), digits, &e);
    struct strbuf ip, fp; /* integer and fraction digits */
    strbuf_init(&ip);
    strbuf_init(&fp);
    if (e >= 0) {
        for (int i = 0; i <= e; i++)
            strbuf_putc(&ip, i < n ? digits[i] : '0');
        for (int i = e + 1; i < n; i++)
            strbuf_putc(&fp, digits[i]);
    } else {
        strbuf_putc(&ip, '0');
        for (int i = 0; i < -e - 1; i++)
            strbuf_putc(&fp, '0');
        strbuf_append(&fp, digits, (size_t)n);
    }
    while (fp.len < 3)
        strbuf_putc(&fp, '0');
    bool up = false;
    if (fp.len > 3) {
        char first = fp.p[3];
        bool rest = false;
        for (size_t i = 4; i < fp.len; i++)
            rest |= fp.p[i] != '0';
        up = first > '5' || (first == '5' && (rest || (fp.p[2] - '0') % 2 == 1));
    }
    fp.len = 3;
    fp.p[3] = '\0';
    if (up) {
        int i = 2;
        while (i >= 0 && fp.p[i] == '9')
            fp.p[i--] = '0';
        if (i >= 0) {
            fp.p[i]++;
        } else {
            int k = (int)ip.len - 1;
            while (k >= 0 && ip.p[k] == '9')
                ip.p[k--] = '0';
            if (k >= 0) {
                ip.p[k]++;
            } else {
                struct strbuf t;
                strbuf_init(&t);
                strbuf_putc(&t, '1');
                strbuf_append(&t, ip.p, ip.len);
                strbuf_destroy(&ip);
                ip = t;
            }
        }
    }
    while (fp.len > 0 && fp.p[fp.len - 1] == '0')
        fp.p[--fp.len] = '\0';
    if (neg)
        strbuf_putc(b, '-');
    strbuf_append(b, ip.p, ip.len);
    if (fp.len) {
        strbuf_putc(b, '.');
        strbuf_append(b, fp.p, fp.len);
    }
    strbuf_destroy(&ip);
    strbuf_destroy(&fp);
}

/* A number token as written, or (normalized) as NumberUtils.createNumber then DecimalFormat
 * print it; tokens that are not numbers (-inf, nan) stay. */
static void number(const struct pctx *c, struct strbuf *b, const char *s)
{
    if (!c->normalize) {
        strbuf_puts(b, s);
        return;
    }
    const char *p = s;
    bool neg = *p == '-';
    if (neg)
        p++;
    bool is_float = !(p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) && strpbrk(p, ".eE");
    if (!is_float) {
        int base = 10;
        const char *q = p;
        if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X')) {
            base = 16;
            q += 2;
        } else if (q[0] == '0' && q[1]) {
            base = 8;
            q++;
        }
        char *end;
        unsigned long long v = strtoull(q, &end, base);
        if (*q && !*end && !(v == ULLONG_MAX && strcmp(q, "18446744073709551615") != 0)) {
            strbuf_printf(b, "%s%llu", neg ? "-" : "", v); /* -0 stays -0, as -0.0 does */
            return;
        }
        strbuf_puts(b, s);
        return;
    }
    char *end;
    double d = strtod(s, &end);
    if (*end || isnan(d) || isinf(d)) {
        strbuf_puts(b, s);
        return;
    }
    float f = (float)d;
    bool zero_text = true;
    for (const char *q = p; *q && *q != 'e' && *q != 'E'; q++)
        if (*q >= '1' && *q <= '9')
            zero_text = false;
    if (!isinf(f) && !(f == 0.0f && !zero_text))
        d = (double)f;
    decimal_format(b, d);
}

static void option_text(struct pctx *c, struct strbuf *b, const struct popt *o);
static void map_body(struct pctx *c, struct strbuf *b, const struct proto_val *map);

/* formatOptionMapOrListValue */
static void value_text(struct pctx *c, struct strbuf *b, const struct proto_val *v)
{
    switch (v->kind) {
    case PV_STRING:
        quoted(b, v->s, v->len);
        break;
    case PV_BOOL:
    case PV_ENUM:
        strbuf_puts(b, v->s);
        break;
    case PV_NUMBER:
        number(c, b, v->s);
        break;
    case PV_MAP:
        strbuf_puts(b, "{\n");
        map_body(c, b, v);
        strbuf_putc(b, '}');
        break;
    case PV_LIST:
        if (c->normalize && v->items.n == 1) {
            value_text(c, b, v->items.v[0]);
            break;
        }
        strbuf_puts(b, "[\n");
        for (size_t i = 0; i < v->items.n; i++) {
            struct strbuf t;
            strbuf_init(&t);
            value_text(c, &t, v->items.v[i]);
            if (i + 1 < v->items.n)
                strbuf_putc(&t, ',');
            indent(b, &t);
            strbuf_destroy(&t);
        }
        strbuf_putc(b, ']');
        break;
    case PV_OPTION: {
        struct popt o = {v->opt->name, v->opt->paren, v->opt->val};
        option_text(c, b, &o);
        break;
    }
    }
}

static const char *resolve_ext(const struct pctx *c, const char *name);

static int ent_cmp(const void *a, const void *b)
{
    const struct proto_mapent *x = *(const struct proto_mapent *const *)a;
    const struct proto_mapent *y = *(const struct proto_mapent *const *)b;
    return strcmp(x->key, y->key);
}

/* The entries of an aggregate, normalized: empty lists dropped, extension keys qualified,
 * sorted by key (the first of equal keys kept). */
static struct pvec normalized_entries(struct pctx *c, const struct proto_val *map)
{
    struct pvec v = {0};
    for (size_t i = 0; i < map->ents.n; i++) {
        const struct proto_mapent *e = map->ents.v[i];
        if (e->val->kind == PV_LIST && e->val->items.n == 0)
            continue;
        const char *key = e->key;
        size_t kl = strlen(key);
        if (kl > 2 && key[0] == '[' && key[kl - 1] == ']') {
            char *inner = arena_alloc(&c->arena, kl - 1);
            memcpy(inner, key + 1, kl - 2);
            inner[kl - 2] = '\0';
            const char *r = resolve_ext(c, inner);
            if (r)
                key = lprintf(c, "[", r, "]");
        }
        struct proto_mapent *ne = lalloc(c, sizeof(*ne));
        ne->key = key;
        ne->val = e->val;
        lpush(c, &v, ne);
    }
    stable_sort(c, v.v, v.n, ent_cmp);
    struct pvec out = {0};
    for (size_t i = 0; i < v.n; i++)
        if (i == 0 || ent_cmp(&v.v[i - 1], &v.v[i]) != 0)
            lpush(c, &out, v.v[i]);
    return out;
}

/* formatOptionMap: "key: value," lines, indented. */
static void map_body(struct pctx *c, struct strbuf *b, const struct proto_val *map)
{
    struct pvec ents = c->normalize ? normalized_entries(c, map) : map->ents;
    for (size_t i = 0; i < ents.n; i++) {
        const struct proto_mapent *e = ents.v[i];
        struct strbuf t;
        strbuf_init(&t);
        strbuf_puts(&t, e->key);
        strbuf_puts(&t, ": ");
        value_text(c, &t, e->val);
        if (i + 1 < ents.n)
            strbuf_putc(&t, ',');
        indent(b, &t);
        strbuf_destroy(&t);
    }
}

/* toString(OptionElement): name = value, (a).b = value, name = {...}. */
static void option_text(struct pctx *c, struct strbuf *b, const struct popt *o)
{
    if (o->paren)
        strbuf_printf(b, "(%s)", o->name);
    else
        strbuf_puts(b, o->name);
    const struct proto_val *v = o->val;
    switch (v->kind) {
    case PV_OPTION: {
        strbuf_putc(b, '.');
        struct popt n = {v->opt->name, v->opt->paren, v->opt->val};
        option_text(c, b, &n);
        break;
    }
    case PV_MAP:
        strbuf_puts(b, " = {\n");
        map_body(c, b, v);
        strbuf_putc(b, '}');
        break;
    case PV_LIST: /* appendOptions: [x] or [\n  x,\n  y\n] */
        strbuf_puts(b, " = ");
        if (v->items.n == 1) {
            strbuf_putc(b, '[');
            value_text(c, b, v->items.v[0]);
            strbuf_putc(b, ']');
            break;
        }
        strbuf_puts(b, "[\n");
        for (size_t i = 0; i < v->items.n; i++) {
            struct strbuf t;
            strbuf_init(&t);
            value_text(c, &t, v->items.v[i]);
            if (i + 1 < v->items.n)
                strbuf_putc(&t, ',');
            indent(b, &t);
            strbuf_destroy(&t);
        }
        strbuf_putc(b, ']');
        break;
    default:
        strbuf_puts(b, " = ");
        value_text(c, b, v);
    }
}

/* ---- option normalization (FormatContext.filterOptions) ---- */

static const char *resolve_ext(const struct pctx *c, const char *name)
{
    if (name[0] == '.') {
        const struct proto_sym *sym = proto_sym_get(c->s, name + 1);
        return sym && sym->kind == SYM_EXTENSION ? name + 1 : NULL;
    }
    size_t slen = strlen(c->scope);
    size_t nlen = strlen(name);
    char *buf = arena_alloc((struct arena *)&c->arena, slen + nlen + 2);
    for (;;) {
        size_t k = 0;
        if (slen) {
            memcpy(buf, c->scope, slen);
            buf[slen] = '.';
            k = slen + 1;
        }
        memcpy(buf + k, name, nlen + 1);
        const struct proto_sym *sym = proto_sym_get(c->s, buf);
        if (sym && sym->kind == SYM_EXTENSION)
            return buf;
        if (slen == 0)
            return NULL;
        while (slen > 0 && c->scope[slen - 1] != '.')
            slen--;
        if (slen > 0)
            slen--;
    }
}

static struct proto_val *lval(struct pctx *c, enum proto_val_kind kind)
{
    struct proto_val *v = lalloc(c, sizeof(*v));
    v->kind = kind;
    return v;
}

static void map_add(struct pctx *c, struct proto_val *map, const char *key,
                    const struct proto_val *v)
{
    struct proto_mapent *e = lalloc(c, sizeof(*e));
    e->key = key;
    e->val = (struct proto_val *)v;
    lpush(c, &map->ents, e);
}

/* transform(): (a).b.c = v becomes (a) = { b: { c: v } }. */
static const struct proto_val *transform(struct pctx *c, const struct proto_val *v)
{
    if (v->kind != PV_OPTION)
        return v;
    struct proto_val *map = lval(c, PV_MAP);
    map_add(c, map, v->opt->name, transform(c, v->opt->val));
    return map;
}

static bool val_equal(const struct proto_val *a, const struct proto_val *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case PV_MAP:
        if (a->ents.n != b->ents.n)
            return false;
        for (size_t i = 0; i < a->ents.n; i++) {
            const struct proto_mapent *x = a->ents.v[i], *y = b->ents.v[i];
            if (strcmp(x->key, y->key) != 0 || !val_equal(x->val, y->val))
                return false;
        }
        return true;
    case PV_LIST:
        if (a->items.n != b->items.n)
            return false;
        for (size_t i = 0; i < a->items.n; i++)
            if (!val_equal(a->items.v[i], b->items.v[i]))
                return false;
        return true;
    case PV_OPTION:
        return strcmp(a->opt->name, b->opt->name) == 0 && a->opt->paren == b->opt->paren &&
               val_equal(a->opt->val, b->opt->val);
    default:
        return a->len == b->len && memcmp(a->s, b->s, a->len) == 0;
    }
}

static const struct proto_type *message_type_of(const struct proto_field *f)
{
    return f && f->type.type && f->type.type->kind == PT_MESSAGE ? f->type.type : NULL;
}

static const struct proto_field *field_named(const struct proto_type *m, const char *name)
{
    for (size_t i = 0; i < m->fields.n; i++) {
        const struct proto_field *f = m->fields.v[i];
        if (strcmp(f->name, name) == 0)
            return f;
    }
    for (size_t i = 0; i < m->oneofs.n; i++) {
        const struct proto_oneof *o = m->oneofs.v[i];
        for (size_t k = 0; k < o->fields.n; k++) {
            const struct proto_field *f = o->fields.v[k];
            if (strcmp(f->name, name) == 0)
                return f;
        }
    }
    return NULL;
}

static struct proto_val *merge_maps(struct pctx *c, const struct proto_field *container,
                                    const struct proto_val *a, const struct proto_val *b);

static void add_flat(struct pctx *c, struct proto_val *list, const struct proto_val *v)
{
    if (v->kind == PV_LIST) {
        for (size_t i = 0; i < v->items.n; i++)
            add_flat(c, list, v->items.v[i]);
        return;
    }
    for (size_t i = 0; i < list->items.n; i++)
        if (val_equal(list->items.v[i], v))
            return;
    lpush(c, &list->items, (void *)v);
}

/* mergeOptionValues */
static const struct proto_val *merge_values(struct pctx *c, const struct proto_field *field,
                                            const struct proto_val *a, const struct proto_val *b)
{
    bool singular = field && field->label != PL_REPEATED;
    if (singular && a->kind == PV_MAP && b->kind == PV_MAP && message_type_of(field))
        return merge_maps(c, field, a, b);
    if (singular)
        return b;
    struct proto_val *list = lval(c, PV_LIST);
    add_flat(c, list, a);
    add_flat(c, list, b);
    return list;
}

/* mergeOptionMaps */
static struct proto_val *merge_maps(struct pctx *c, const struct proto_field *container,
                                    const struct proto_val *a, const struct proto_val *b)
{
    const struct proto_type *ct = message_type_of(container);
    struct proto_val *m = lval(c, PV_MAP);
    for (size_t i = 0; i < a->ents.n; i++) {
        const struct proto_mapent *e = a->ents.v[i];
        map_add(c, m, e->key, e->val);
    }
    for (size_t i = 0; i < b->ents.n; i++) {
        const struct proto_mapent *e = b->ents.v[i];
        const struct proto_field *nested = ct ? field_named(ct, e->key) : NULL;
        size_t k = 0;
        while (k < m->ents.n && strcmp(((struct proto_mapent *)m->ents.v[k])->key, e->key) != 0)
            k++;
        if (k == m->ents.n) {
            map_add(c, m, e->key, e->val);
        } else {
            struct proto_mapent *me = m->ents.v[k];
            me->val = (struct proto_val *)merge_values(c, nested, me->val, e->val);
        }
    }
    return m;
}

static int popt_cmp(const void *a, const void *b)
{
    return strcmp((*(const struct popt *const *)a)->name, (*(const struct popt *const *)b)->name);
}

/* The options to print, in order (dflt and json_name, when given, are a field's). Returns the
 * count; *out is in the call's arena. */
static size_t filter_options(struct pctx *c, const struct pvec *options, const struct popt *extra,
                             size_t n_extra, struct popt **out)
{
    size_t n = options->n + n_extra;
    struct popt *v = lalloc(c, (n ? n : 1) * sizeof(*v));
    for (size_t i = 0; i < options->n; i++) {
        const struct proto_option *o = options->v[i];
        v[i] = (struct popt){o->name, o->paren, o->val};
    }
    for (size_t i = 0; i < n_extra; i++)
        v[options->n + i] = extra[i];
    *out = v;
    if (!c->normalize || n == 0)
        return n;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].paren)
            continue;
        const char *r = resolve_ext(c, v[i].name);
        if (r) {
            v[i].name = r;
            v[i].val = transform(c, v[i].val);
        }
    }
    {
        void **ptrs = arena_alloc(&c->arena, n * sizeof(void *));
        for (size_t i = 0; i < n; i++) {
            struct popt *copy = lalloc(c, sizeof(*copy));
            *copy = v[i];
            ptrs[i] = copy;
        }
        stable_sort(c, ptrs, n, popt_cmp);
        for (size_t i = 0; i < n; i++)
            v[i] = *(struct popt *)ptrs[i];
    }
    size_t w = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && strcmp(v[j].name, v[i].name) == 0)
            j++;
        const struct proto_sym *sym = proto_sym_get(c->s, v[i].name);
        const struct proto_field *ext = sym && sym->kind == SYM_EXTENSION ? sym->node : NULL;
        if (ext && ext->label != PL_REPEATED) {
            struct popt acc = v[i];
            for (size_t k = i + 1; k < j; k++) {
                const struct proto_val *rep = transform(c, v[k].val);
                if (acc.val->kind == PV_MAP && rep->kind == PV_MAP)
                    acc = (struct popt){v[k].name, v[k].paren,
                                        merge_maps(c, ext, acc.val, rep)};
                else
                    acc = (struct popt){v[k].name, v[k].paren, rep};
            }
            v[w++] = acc;
        } else {
            while (i < j)
                v[w++] = v[i++];
        }
        i = j;
    }
    return w;
}

static void option_lines(struct pctx *c, struct strbuf *b, const struct popt *opts, size_t n,
                         bool indented)
{
    for (size_t i = 0; i < n; i++) {
        struct strbuf t;
        strbuf_init(&t);
        strbuf_puts(&t, "option ");
        option_text(c, &t, &opts[i]);
        strbuf_puts(&t, ";\n");
        if (indented)
            indent(b, &t);
        else
            strbuf_append(b, t.p, t.len);
        strbuf_destroy(&t);
    }
}

/* appendOptions: [one] or [\n  a,\n  b\n] */
static void bracket_options(struct pctx *c, struct strbuf *b, const struct popt *opts, size_t n)
{
    if (n == 1) {
        strbuf_putc(b, '[');
        option_text(c, b, &opts[0]);
        strbuf_putc(b, ']');
        return;
    }
    strbuf_puts(b, "[\n");
    for (size_t i = 0; i < n; i++) {
        struct strbuf t;
        strbuf_init(&t);
        option_text(c, &t, &opts[i]);
        if (i + 1 < n)
            strbuf_putc(&t, ',');
        indent(b, &t);
        strbuf_destroy(&t);
    }
    strbuf_putc(b, ']');
}

/* ---- declarations ---- */

static const char *label_text(enum proto_label l)
{
    switch (l) {
    case PL_OPTIONAL: return "optional ";
    case PL_REQUIRED: return "required ";
    case PL_REPEATED: return "repeated ";
    default: return "";
    }
}

static const char *qualified(struct pctx *c, const struct proto_type *t)
{
    return lprintf(c, ".", t->full_name, "");
}

static const char *tref_text(struct pctx *c, const struct proto_tref *t)
{
    if (c->normalize && t->type)
        return qualified(c, t->type);
    return t->text;
}

static void field_text(struct pctx *c, struct strbuf *b, const struct proto_field *f)
{
    enum proto_label label = f->label;
    const char *type = f->type_text;
    int default_kind = PV_ENUM;
    const struct proto_tref *vt = &f->type;
    if (c->normalize) {
        const struct proto_type *t = f->type.type;
        if (f->is_map || (t && t->kind == PT_MESSAGE && t->map_entry)) {
            const char *key, *val;
            if (f->is_map) {
                key = f->key.text;
                val = tref_text(c, &f->type);
            } else {
                const struct proto_field *k = proto_entry_field(t, 1);
                const struct proto_field *v = proto_entry_field(t, 2);
                key = k ? k->type.text : "";
                val = v ? tref_text(c, &v->type) : "";
            }
            type = lprintf(c, "map<", key, lprintf(c, ", ", val, ">"));
            label = PL_NONE;
        } else if (t) {
            type = qualified(c, t);
        }
    }
    if (!vt->type) {
        int sc = vt->scalar;
        default_kind = sc == PS_STRING || sc == PS_BYTES ? PV_STRING
                       : sc == PS_BOOL                   ? PV_BOOL
                                                         : PV_NUMBER;
    }
    strbuf_printf(b, "%s%s %s = %d", label_text(label), type, f->name, f->number);
    struct popt extra[2];
    size_t n_extra = 0;
    struct proto_val *dv = NULL, *jv = NULL;
    if (f->dflt) {
        dv = lval(c, (enum proto_val_kind)default_kind);
        const struct proto_val *src = f->dflt;
        dv->s = src->s;
        dv->len = src->len;
        if (default_kind == PV_STRING && src->kind != PV_STRING)
            dv->kind = PV_STRING;
        extra[n_extra++] = (struct popt){"default", false, dv};
    }
    if (f->json_name) {
        jv = lval(c, PV_STRING);
        jv->s = f->json_name;
        jv->len = strlen(f->json_name);
        extra[n_extra++] = (struct popt){"json_name", false, jv};
    }
    struct popt *opts;
    size_t n = filter_options(c, &f->options, extra, n_extra, &opts);
    if (n) {
        strbuf_putc(b, ' ');
        bracket_options(c, b, opts, n);
    }
    strbuf_puts(b, ";\n");
}

static int field_num_cmp(const void *a, const void *b)
{
    const struct proto_field *x = *(const struct proto_field *const *)a;
    const struct proto_field *y = *(const struct proto_field *const *)b;
    return x->number < y->number ? -1 : x->number > y->number;
}

/* The fields in print order (by number if normalized), in the call's arena. */
static struct pvec fields_ordered(struct pctx *c, const struct pvec *fields)
{
    struct pvec v = {0};
    for (size_t i = 0; i < fields->n; i++)
        lpush(c, &v, fields->v[i]);
    if (c->normalize && v.n > 1)
        qsort(v.v, v.n, sizeof(void *), field_num_cmp);
    return v;
}

static void field_lines(struct pctx *c, struct strbuf *b, const struct pvec *fields)
{
    struct pvec v = fields_ordered(c, fields);
    for (size_t i = 0; i < v.n; i++) {
        struct strbuf t;
        strbuf_init(&t);
        field_text(c, &t, v.v[i]);
        indent(b, &t);
        strbuf_destroy(&t);
    }
}

static void group_text(struct pctx *c, struct strbuf *b, const struct proto_group *g)
{
    strbuf_printf(b, "%sgroup %s = %d {", label_text(g->label), g->name, g->number);
    if (g->fields.n) {
        strbuf_putc(b, '\n');
        field_lines(c, b, &g->fields);
    }
    strbuf_puts(b, "}\n");
}

static int group_num_cmp(const void *a, const void *b)
{
    const struct proto_group *x = *(const struct proto_group *const *)a;
    const struct proto_group *y = *(const struct proto_group *const *)b;
    return x->number < y->number ? -1 : x->number > y->number;
}

static void group_lines(struct pctx *c, struct strbuf *b, const struct pvec *groups)
{
    struct pvec v = {0};
    for (size_t i = 0; i < groups->n; i++)
        lpush(c, &v, groups->v[i]);
    if (c->normalize && v.n > 1)
        qsort(v.v, v.n, sizeof(void *), group_num_cmp);
    for (size_t i = 0; i < v.n; i++) {
        struct strbuf t;
        strbuf_init(&t);
        group_text(c, &t, v.v[i]);
        indent(b, &t);
        strbuf_destroy(&t);
    }
}

static void range_item(const struct pctx *c, struct strbuf *b, const struct proto_range *r,
                       int64_t max)
{
    if (r->name) {
        strbuf_printf(b, "\"%s\"", r->name);
    } else if (!r->to || (c->normalize && r->start == r->end)) {
        strbuf_printf(b, "%lld", (long long)r->start);
    } else if (r->max || r->end >= max) {
        strbuf_printf(b, "%lld to max", (long long)r->start);
    } else {
        strbuf_printf(b, "%lld to %lld", (long long)r->start, (long long)r->end);
    }
}

/* The sort key of a reserved item: its start, names last, then its Kotlin toString. */
struct ritem {
    const struct proto_range *r;
    const struct proto_ranges *stmt;
    int64_t key;
    char text[48];
};

static int ritem_cmp(const void *a, const void *b)
{
    const struct ritem *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return strcmp(x->r->name ? x->r->name : x->text, y->r->name ? y->r->name : y->text);
}

static int ritem_ptr_cmp(const void *a, const void *b)
{
    return ritem_cmp(*(const void *const *)a, *(const void *const *)b);
}

static void ranges_lines(struct pctx *c, struct strbuf *b, const struct pvec *stmts,
                         const char *keyword, int64_t max, bool secondary)
{
    if (!c->normalize) {
        for (size_t i = 0; i < stmts->n; i++) {
            const struct proto_ranges *rs = stmts->v[i];
            struct strbuf t;
            strbuf_init(&t);
            strbuf_printf(&t, "%s ", keyword);
            for (size_t k = 0; k < rs->items.n; k++) {
                if (k)
                    strbuf_puts(&t, ", ");
                range_item(c, &t, rs->items.v[k], max);
            }
            struct popt *opts;
            size_t n = filter_options(c, &rs->options, NULL, 0, &opts);
            if (n) {
                strbuf_putc(&t, ' ');
                bracket_options(c, &t, opts, n);
            }
            strbuf_puts(&t, ";\n");
            indent(b, &t);
            strbuf_destroy(&t);
        }
        return;
    }
    size_t total = 0;
    for (size_t i = 0; i < stmts->n; i++)
        total += ((const struct proto_ranges *)stmts->v[i])->items.n;
    struct ritem *items = lalloc(c, (total ? total : 1) * sizeof(*items));
    size_t n = 0;
    for (size_t i = 0; i < stmts->n; i++) {
        const struct proto_ranges *rs = stmts->v[i];
        for (size_t k = 0; k < rs->items.n; k++) {
            const struct proto_range *r = rs->items.v[k];
            struct ritem *it = &items[n++];
            it->r = r;
            it->stmt = rs;
            it->key = r->name ? INT64_MAX : r->start;
            if (r->to)
                snprintf(it->text, sizeof(it->text), "%lld..%lld", (long long)r->start,
                         (long long)r->end);
            else
                snprintf(it->text, sizeof(it->text), "%lld", (long long)r->start);
            if (!secondary)
                it->text[0] = '\0';
        }
    }
    void **order = arena_alloc(&c->arena, (n ? n : 1) * sizeof(void *));
    for (size_t i = 0; i < n; i++)
        order[i] = &items[i];
    stable_sort(c, order, n, ritem_ptr_cmp);
    for (size_t j = 0; j < n; j++) {
        size_t i = (size_t)((struct ritem *)order[j] - items);
        struct strbuf t;
        strbuf_init(&t);
        strbuf_printf(&t, "%s ", keyword);
        range_item(c, &t, items[i].r, max);
        struct popt *opts;
        size_t no = filter_options(c, &items[i].stmt->options, NULL, 0, &opts);
        if (no) {
            strbuf_putc(&t, ' ');
            bracket_options(c, &t, opts, no);
        }
        strbuf_puts(&t, ";\n");
        indent(b, &t);
        strbuf_destroy(&t);
    }
}

static void oneof_text(struct pctx *c, struct strbuf *b, const struct proto_oneof *o)
{
    strbuf_printf(b, "oneof %s {", o->name);
    struct popt *opts;
    size_t n = filter_options(c, &o->options, NULL, 0, &opts);
    if (n) {
        strbuf_putc(b, '\n');
        option_lines(c, b, opts, n, true);
    }
    if (o->fields.n) {
        strbuf_putc(b, '\n');
        field_lines(c, b, &o->fields);
    }
    if (o->groups.n) {
        strbuf_putc(b, '\n');
        group_lines(c, b, &o->groups);
    }
    strbuf_puts(b, "}\n");
}

static int32_t first_number(struct pctx *c, const struct proto_oneof *o)
{
    struct pvec v = fields_ordered(c, &o->fields);
    return v.n ? ((const struct proto_field *)v.v[0])->number : INT32_MAX;
}

struct first_of {
    int32_t number;
    const struct proto_oneof *o;
};

static int first_of_cmp(const void *a, const void *b)
{
    const struct first_of *x = *(const struct first_of *const *)a;
    const struct first_of *y = *(const struct first_of *const *)b;
    return x->number < y->number ? -1 : x->number > y->number;
}

static void oneof_lines(struct pctx *c, struct strbuf *b, const struct pvec *oneofs)
{
    struct pvec v = {0};
    for (size_t i = 0; i < oneofs->n; i++) {
        const struct proto_oneof *o = oneofs->v[i];
        if (!c->normalize || o->fields.n)
            lpush(c, &v, (void *)o);
    }
    if (c->normalize && v.n > 1) {
        struct first_of *keys = arena_alloc(&c->arena, v.n * sizeof(*keys));
        for (size_t i = 0; i < v.n; i++) {
            keys[i] = (struct first_of){first_number(c, v.v[i]), v.v[i]};
            v.v[i] = &keys[i];
        }
        stable_sort(c, v.v, v.n, first_of_cmp);
        for (size_t i = 0; i < v.n; i++)
            v.v[i] = (void *)((struct first_of *)v.v[i])->o;
    }
    for (size_t i = 0; i < v.n; i++) {
        struct strbuf t;
        strbuf_init(&t);
        oneof_text(c, &t, v.v[i]);
        indent(b, &t);
        strbuf_destroy(&t);
    }
}

/* Extend blocks; normalized, regrouped by their resolved extendee in first-seen order. */
static void extend_lines(struct pctx *c, struct strbuf *b, const struct pvec *extends,
                         bool indented)
{
    struct pvec names = {0}, groups = {0};
    struct strmap seen; /* normalized: extendee -> its group */
    strmap_init(&seen);
    for (size_t i = 0; i < extends->n; i++) {
        const struct proto_extend *x = extends->v[i];
        const char *name = c->normalize && x->extendee.type ? qualified(c, x->extendee.type)
                                                              : x->extendee.text;
        struct pvec *g = c->normalize ? strmap_get(&seen, name, strlen(name)) : NULL;
        if (!g) {
            g = lalloc(c, sizeof(struct pvec));
            lpush(c, &names, (void *)name);
            lpush(c, &groups, g);
            if (c->normalize)
                strmap_put(&seen, name, strlen(name), g);
        }
        for (size_t f = 0; f < x->fields.n; f++)
            lpush(c, g, x->fields.v[f]);
    }
    strmap_destroy(&seen);
    for (size_t i = 0; i < names.n; i++) {
        struct strbuf t;
        strbuf_init(&t);
        strbuf_printf(&t, "extend %s {", (const char *)names.v[i]);
        const struct pvec *g = groups.v[i];
        if (g->n) {
            strbuf_putc(&t, '\n');
            field_lines(c, &t, g);
        }
        strbuf_puts(&t, "}\n");
        if (indented)
            indent(b, &t);
        else
            strbuf_append(b, t.p, t.len);
        strbuf_destroy(&t);
    }
}

static void enum_text(struct pctx *c, struct strbuf *b, const struct proto_type *e);
static void message_text(struct pctx *c, struct strbuf *b, const struct proto_type *m);

/* Types at one level: messages (not synthetic map entries when normalized), then enums. */
static void type_lines(struct pctx *c, struct strbuf *b, const struct pvec *types, bool indented)
{
    for (int kind = PT_MESSAGE; kind <= PT_ENUM; kind++) {
        for (size_t i = 0; i < types->n; i++) {
            const struct proto_type *t = types->v[i];
            if ((int)t->kind != kind || (c->normalize && t->map_entry))
                continue;
            const char *saved = c->scope;
            c->scope = t->full_name;
            struct strbuf s;
            strbuf_init(&s);
            if (kind == PT_MESSAGE)
                message_text(c, &s, t);
            else
                enum_text(c, &s, t);
            c->scope = saved;
            if (indented)
                indent(b, &s);
            else
                strbuf_append(b, s.p, s.len);
            strbuf_destroy(&s);
        }
    }
}

static bool any_types(const struct pctx *c, const struct pvec *types)
{
    for (size_t i = 0; i < types->n; i++) {
        const struct proto_type *t = types->v[i];
        if (!(c->normalize && t->kind == PT_MESSAGE && t->map_entry))
            return true;
    }
    return false;
}

static void message_text(struct pctx *c, struct strbuf *b, const struct proto_type *m)
{
    strbuf_printf(b, "message %s {", m->name);
    if (m->reserved.n) {
        strbuf_putc(b, '\n');
        ranges_lines(c, b, &m->reserved, "reserved", PROTO_FIELD_NUMBER_MAX, true);
    }
    struct popt *opts;
    size_t n = filter_options(c, &m->options, NULL, 0, &opts);
    if (n) {
        strbuf_putc(b, '\n');
        option_lines(c, b, opts, n, true);
    }
    if (m->fields.n) {
        strbuf_putc(b, '\n');
        field_lines(c, b, &m->fields);
    }
    if (m->oneofs.n) {
        strbuf_putc(b, '\n');
        oneof_lines(c, b, &m->oneofs);
    }
    if (m->groups.n) {
        strbuf_putc(b, '\n');
        group_lines(c, b, &m->groups);
    }
    if (m->extensions.n) {
        strbuf_putc(b, '\n');
        ranges_lines(c, b, &m->extensions, "extensions", PROTO_FIELD_NUMBER_MAX, false);
    }
    if (m->extends.n) {
        strbuf_putc(b, '\n');
        extend_lines(c, b, &m->extends, true);
    }
    if (any_types(c, &m->nested)) {
        strbuf_putc(b, '\n');
        type_lines(c, b, &m->nested, true);
    }
    strbuf_puts(b, "}\n");
}

static int value_cmp(const void *a, const void *b)
{
    const struct proto_enum_value *x = *(const struct proto_enum_value *const *)a;
    const struct proto_enum_value *y = *(const struct proto_enum_value *const *)b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void enum_text(struct pctx *c, struct strbuf *b, const struct proto_type *e)
{
    strbuf_printf(b, "enum %s {", e->name);
    if (e->reserved.n) {
        strbuf_putc(b, '\n');
        ranges_lines(c, b, &e->reserved, "reserved", INT32_MAX, true);
    }
    if (e->reserved.n == 0 && (e->options.n || e->values.n))
        strbuf_putc(b, '\n');
    struct popt *opts;
    size_t n = filter_options(c, &e->options, NULL, 0, &opts);
    option_lines(c, b, opts, n, true);
    struct pvec v = {0};
    for (size_t i = 0; i < e->values.n; i++)
        lpush(c, &v, e->values.v[i]);
    if (c->normalize) {
        stable_sort(c, v.v, v.n, value_cmp);
        /* proto3 wants a zero first: with negative values, the first zero goes before them
         * (Confluent's order would not parse back). */
        size_t z = 0;
        while (e->file->syntax == 3 && z < v.n &&
               ((const struct proto_enum_value *)v.v[z])->number < 0)
            z++;
        if (z > 0 && z < v.n) {
            void *zero = v.v[z];
            memmove(v.v + 1, v.v, z * sizeof(void *));
            v.v[0] = zero;
        }
    }
    for (size_t i = 0; i < v.n; i++) {
        const struct proto_enum_value *ev = v.v[i];
        struct strbuf t;
        strbuf_init(&t);
        strbuf_printf(&t, "%s = %d", ev->name, ev->number);
        struct popt *vo;
        size_t nv = filter_options(c, &ev->options, NULL, 0, &vo);
        if (nv) {
            strbuf_putc(&t, ' ');
            bracket_options(c, &t, vo, nv);
        }
        strbuf_puts(&t, ";\n");
        indent(b, &t);
        strbuf_destroy(&t);
    }
    strbuf_puts(b, "}\n");
}

static void service_text(struct pctx *c, struct strbuf *b, const struct proto_service *svc)
{
    strbuf_printf(b, "service %s {", svc->name);
    struct popt *opts;
    size_t n = filter_options(c, &svc->options, NULL, 0, &opts);
    if (n) {
        strbuf_putc(b, '\n');
        option_lines(c, b, opts, n, true);
    }
    if (svc->rpcs.n)
        strbuf_putc(b, '\n');
    for (size_t i = 0; i < svc->rpcs.n; i++) {
        const struct proto_rpc *r = svc->rpcs.v[i];
        struct strbuf t;
        strbuf_init(&t);
        strbuf_printf(&t, "rpc %s (%s%s) returns (%s%s)", r->name, r->req_stream ? "stream " : "",
                      tref_text(c, &r->req), r->resp_stream ? "stream " : "",
                      tref_text(c, &r->resp));
        struct popt *ro;
        size_t nr = filter_options(c, &r->options, NULL, 0, &ro);
        if (nr) {
            strbuf_puts(&t, " {\n");
            option_lines(c, &t, ro, nr, true);
            strbuf_putc(&t, '}');
        }
        strbuf_puts(&t, ";\n");
        indent(b, &t);
        strbuf_destroy(&t);
    }
    strbuf_puts(b, "}\n");
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void import_lines(struct pctx *c, struct strbuf *b, const struct proto_file *f,
                         enum proto_import_kind kind, const char *keyword)
{
    struct pvec v = {0};
    for (size_t i = 0; i < f->imports.n; i++) {
        const struct proto_import *im = f->imports.v[i];
        if (im->kind == kind)
            lpush(c, &v, (void *)im->path);
    }
    if (c->normalize && v.n > 1)
        qsort(v.v, v.n, sizeof(void *), str_cmp);
    for (size_t i = 0; i < v.n; i++) {
        if (c->normalize && i > 0 && strcmp(v.v[i - 1], v.v[i]) == 0)
            continue;
        strbuf_printf(b, "import %s\"", keyword);
        escape(b, v.v[i], strlen(v.v[i]));
        strbuf_puts(b, "\";\n");
    }
}

void proto_canonical(const struct proto_schema *s, bool normalize, struct strbuf *out)
{
    struct pctx c = {.s = s, .normalize = normalize};
    arena_init(&c.arena, 16u << 10);
    const struct proto_file *f = s->root;
    c.scope = f->package ? f->package : "";
    if (f->syntax_written && (!normalize || f->syntax == 3))
        strbuf_printf(out, "syntax = \"proto%d\";\n", f->syntax);
    if (f->package)
        strbuf_printf(out, "package %s;\n", f->package);
    if (f->imports.n) {
        strbuf_putc(out, '\n');
        import_lines(&c, out, f, PI_PLAIN, "");
        import_lines(&c, out, f, PI_PUBLIC, "public ");
        import_lines(&c, out, f, PI_WEAK, "weak ");
    }
    struct popt *opts;
    size_t n = filter_options(&c, &f->options, NULL, 0, &opts);
    if (n) {
        strbuf_putc(out, '\n');
        option_lines(&c, out, opts, n, false);
    }
    if (any_types(&c, &f->types)) {
        strbuf_putc(out, '\n');
        type_lines(&c, out, &f->types, false);
    }
    if (f->extends.n) {
        strbuf_putc(out, '\n');
        extend_lines(&c, out, &f->extends, false);
    }
    if (f->services.n) {
        strbuf_putc(out, '\n');
        for (size_t i = 0; i < f->services.n; i++)
            service_text(&c, out, f->services.v[i]);
    }
    arena_destroy(&c.arena);
}
