/* .proto text to the parsed form of registry/proto_ast.h: a recursive-descent parser over
 * proto_lex.h's tokens, with protoc's grammar and (mostly) its messages.
 *
 * What is checked here is what the grammar alone decides: statement order (syntax first), one
 * package, labels (proto2 fields need one, proto3 forbids required, maps and oneof members
 * take none), groups (proto2 only, capitalised, fields only inside), numbers in range for their
 * int32 slot, option syntax. Names, numbers against each other and types are proto_link.c's.
 *
 * Errors are sticky (the lexer's): after the first one every token is TK_EOF, so every loop
 * here ends, and the caller reads the one message. Nesting of messages and of option values
 * is bounded by PROTO_DEPTH_MAX, so recursion depth is too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "registry/proto_ast.h"
#include "registry/proto_lex.h"

struct parser {
    struct lexer lx;
    struct proto_schema *s;
    struct proto_file *f;
    int depth;       /* messages and option values open */
    int statements;  /* top-level statements read */
};

enum ctx { CTX_MESSAGE, CTX_ONEOF, CTX_EXTEND, CTX_GROUP };

static bool failed(struct parser *p)
{
    if (p->s->oom && !p->lx.failed)
        lex_error_at(&p->lx, p->lx.cur.line, p->lx.cur.col,
                     "Schema too large (its parsed form passes %u bytes).",
                     (unsigned)PROTO_MEMORY_MAX);
    return p->lx.failed;
}

#define errorf(p, ...) lex_error_at(&(p)->lx, (p)->lx.cur.line, (p)->lx.cur.col, __VA_ARGS__)

static struct proto_pos here(const struct parser *p)
{
    return (struct proto_pos){p->lx.cur.line, p->lx.cur.col};
}

static bool at(const struct parser *p, char c)
{
    return tok_is_sym(&p->lx.cur, c);
}

static bool at_word(const struct parser *p, const char *w)
{
    return tok_is_word(&p->lx.cur, w);
}

static bool accept(struct parser *p, char c)
{
    if (!at(p, c))
        return false;
    lex_next(&p->lx);
    return true;
}

static bool expect(struct parser *p, char c)
{
    if (accept(p, c))
        return true;
    errorf(p, "Expected \"%c\".", c);
    return false;
}

static bool accept_word(struct parser *p, const char *w)
{
    if (!at_word(p, w))
        return false;
    lex_next(&p->lx);
    return true;
}

static const char *tok_copy(struct parser *p)
{
    return proto_strndup(p->s, p->lx.cur.p, p->lx.cur.len);
}

/* An identifier; "" after an error. */
static const char *ident(struct parser *p, const char *what)
{
    if (p->lx.cur.kind != TK_IDENT) {
        errorf(p, "Expected %s.", what);
        return "";
    }
    const char *s = tok_copy(p);
    lex_next(&p->lx);
    return s;
}

/* A dotted name, with a leading dot if lead_dot allows it: "a.b.C", ".a.B". */
static const char *dotted(struct parser *p, bool lead_dot, const char *what)
{
    struct strbuf b;
    strbuf_init(&b);
    if (lead_dot && accept(p, '.'))
        strbuf_putc(&b, '.');
    for (;;) {
        if (p->lx.cur.kind != TK_IDENT) {
            errorf(p, "Expected %s.", what);
            break;
        }
        strbuf_append(&b, p->lx.cur.p, p->lx.cur.len);
        lex_next(&p->lx);
        if (!at(p, '.'))
            break;
        lex_next(&p->lx);
        strbuf_putc(&b, '.');
    }
    const char *s = proto_strndup(p->s, strbuf_str(&b), b.len);
    strbuf_destroy(&b);
    return s;
}

/* One or more adjacent string literals, concatenated. */
static const char *strings(struct parser *p, size_t *len)
{
    struct strbuf b;
    strbuf_init(&b);
    if (p->lx.cur.kind != TK_STRING)
        errorf(p, "Expected string.");
    while (p->lx.cur.kind == TK_STRING) {
        char *tmp = proto_alloc(p->s, p->lx.cur.len);
        size_t n = lex_string_decode(&p->lx.cur, tmp);
        strbuf_append(&b, tmp, n);
        lex_next(&p->lx);
    }
    *len = b.len;
    const char *s = proto_strndup(p->s, strbuf_str(&b), b.len);
    strbuf_destroy(&b);
    return s;
}

/* Parses an integer token's text (decimal, 0x hex, 0 octal) into *v; false if it does not fit
 * in uint64. */
static bool int_value(const char *s, size_t len, uint64_t *v)
{
    char buf[72];
    if (len >= sizeof(buf))
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    int base = 10;
    const char *digits = buf;
    if (len > 1 && buf[0] == '0' && (buf[1] == 'x' || buf[1] == 'X')) {
        base = 16;
        digits = buf + 2;
    } else if (len > 1 && buf[0] == '0') {
        base = 8;
        digits = buf + 1;
    }
    uint64_t r = 0;
    for (const char *c = digits; *c; c++) {
        int d = *c >= 'a' ? *c - 'a' + 10 : *c >= 'A' ? *c - 'A' + 10 : *c - '0';
        if (r > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        r = r * (uint64_t)base + (uint64_t)d;
    }
    *v = r;
    return true;
}

/* An integer in [lo, hi], with an optional minus sign if lo < 0. */
static int64_t integer(struct parser *p, int64_t lo, int64_t hi, const char *what)
{
    bool neg = false;
    if (lo < 0 && accept(p, '-'))
        neg = true;
    else if (at(p, '-')) {
        errorf(p, "%s must be a positive integer.", what);
        return 0;
    }
    if (p->lx.cur.kind != TK_INT) {
        errorf(p, "Expected %s.", what);
        return 0;
    }
    uint64_t u;
    if (!int_value(p->lx.cur.p, p->lx.cur.len, &u) || u > (uint64_t)INT64_MAX ||
        (neg ? -(int64_t)u < lo : (int64_t)u > hi)) {
        errorf(p, "Integer out of range.");
        return 0;
    }
    lex_next(&p->lx);
    return neg ? -(int64_t)u : (int64_t)u;
}

static struct proto_val *val_new(struct parser *p, enum proto_val_kind kind)
{
    struct proto_val *v = proto_alloc(p->s, sizeof(*v));
    memset(v, 0, sizeof(*v));
    v->kind = kind;
    return v;
}

/* A scalar value: strings, [-]number, [-]inf/nan, true/false, an identifier. */
static struct proto_val *scalar_value(struct parser *p)
{
    struct proto_val *v;
    if (p->lx.cur.kind == TK_STRING) {
        v = val_new(p, PV_STRING);
        v->s = strings(p, &v->len);
        return v;
    }
    if (at(p, '-')) {
        lex_next(&p->lx);
        struct tok t = p->lx.cur;
        if (t.kind != TK_INT && t.kind != TK_FLOAT &&
            !(t.kind == TK_IDENT && (tok_is_word(&t, "inf") || tok_is_word(&t, "infinity") ||
                                     tok_is_word(&t, "nan")))) {
            errorf(p, "Expected number.");
            return val_new(p, PV_NUMBER);
        }
        v = val_new(p, PV_NUMBER);
        char *s = proto_alloc(p->s, t.len + 2);
        s[0] = '-';
        memcpy(s + 1, t.p, t.len);
        s[t.len + 1] = '\0';
        v->s = s;
        v->len = t.len + 1;
        lex_next(&p->lx);
        return v;
    }
    if (p->lx.cur.kind == TK_INT || p->lx.cur.kind == TK_FLOAT) {
        v = val_new(p, PV_NUMBER);
    } else if (p->lx.cur.kind == TK_IDENT) {
        v = val_new(p, at_word(p, "true") || at_word(p, "false") ? PV_BOOL : PV_ENUM);
    } else {
        errorf(p, "Expected option value.");
        return val_new(p, PV_ENUM);
    }
    v->s = tok_copy(p);
    v->len = p->lx.cur.len;
    lex_next(&p->lx);
    return v;
}

static struct proto_val *aggregate(struct parser *p);

/* Adds key = val to a map value; a repeated key collects its values into a list (as Wire).
 * seen maps the keys so far to their entries. */
static void map_put(struct parser *p, struct proto_val *map, struct strmap *seen,
                    const char *key, struct proto_val *val)
{
    struct proto_mapent *e = strmap_get(seen, key, strlen(key));
    if (!e) {
        e = proto_alloc(p->s, sizeof(*e));
        e->key = key;
        e->val = val;
        pvec_push(p->s, &map->ents, e);
        strmap_put(seen, key, strlen(key), e);
        return;
    }
    if (e->val->kind != PV_LIST) {
        struct proto_val *list = val_new(p, PV_LIST);
        pvec_push(p->s, &list->items, e->val);
        e->val = list;
    }
    if (val->kind == PV_LIST) {
        for (size_t j = 0; j < val->items.n; j++)
            pvec_push(p->s, &e->val->items, val->items.v[j]);
    } else {
        pvec_push(p->s, &e->val->items, val);
    }
}

/* A text-format field name: name, or [full.name] / [type.googleapis.com/full.Name]. */
static const char *agg_key(struct parser *p)
{
    if (!accept(p, '['))
        return ident(p, "field name");
    struct strbuf b;
    strbuf_init(&b);
    strbuf_putc(&b, '[');
    for (;;) {
        if (p->lx.cur.kind != TK_IDENT) {
            errorf(p, "Expected identifier.");
            break;
        }
        strbuf_append(&b, p->lx.cur.p, p->lx.cur.len);
        lex_next(&p->lx);
        if (at(p, '.') || at(p, '/')) {
            strbuf_putc(&b, p->lx.cur.p[0]);
            lex_next(&p->lx);
            continue;
        }
        expect(p, ']');
        break;
    }
    strbuf_putc(&b, ']');
    const char *s = proto_strndup(p->s, strbuf_str(&b), b.len);
    strbuf_destroy(&b);
    return s;
}

static struct proto_val *agg_value(struct parser *p)
{
    if (at(p, '{') || at(p, '<'))
        return aggregate(p);
    if (!at(p, '['))
        return scalar_value(p);
    lex_next(&p->lx);
    struct proto_val *list = val_new(p, PV_LIST);
    if (accept(p, ']'))
        return list;
    while (!failed(p)) {
        pvec_push(p->s, &list->items,
                  at(p, '{') || at(p, '<') ? aggregate(p) : scalar_value(p));
        if (accept(p, ']'))
            break;
        if (!expect(p, ','))
            break;
    }
    return list;
}

/* { key: value ... } (or < ... >), the text format of a message-typed option. */
static struct proto_val *aggregate(struct parser *p)
{
    char close = at(p, '<') ? '>' : '}';
    struct proto_val *map = val_new(p, PV_MAP);
    if (++p->depth > PROTO_DEPTH_MAX) {
        errorf(p, "Option value nested too deeply (more than %d levels).", PROTO_DEPTH_MAX);
        return map;
    }
    lex_next(&p->lx);
    struct strmap seen;
    strmap_init(&seen);
    while (!failed(p) && !accept(p, close)) {
        if (p->lx.cur.kind == TK_EOF) {
            errorf(p, "Expected \"%c\".", close);
            break;
        }
        const char *key = agg_key(p);
        struct proto_val *val;
        if (accept(p, ':')) {
            val = agg_value(p);
        } else if (at(p, '{') || at(p, '<')) {
            val = aggregate(p);
        } else {
            errorf(p, "Expected \":\".");
            break;
        }
        map_put(p, map, &seen, key, val);
        if (!accept(p, ','))
            accept(p, ';');
    }
    strmap_destroy(&seen);
    p->depth--;
    return map;
}

/* An option's name and value: name = value (the statement's "option" and ";" are the caller's). */
static struct proto_option *option_body(struct parser *p)
{
    struct proto_option *o = proto_alloc(p->s, sizeof(*o));
    memset(o, 0, sizeof(*o));
    o->pos = here(p);
    /* The name's parts: name, (ext.name), then .part or .(ext) */
    struct proto_option *parts[PROTO_DEPTH_MAX + 1];
    int n = 0;
    for (;;) {
        struct proto_option *part = n == 0 ? o : proto_alloc(p->s, sizeof(*part));
        if (n > 0) {
            memset(part, 0, sizeof(*part));
            part->pos = here(p);
        }
        if (accept(p, '(')) {
            part->paren = true;
            part->name = dotted(p, true, "option name");
            expect(p, ')');
        } else {
            part->name = ident(p, "option name");
        }
        parts[n++] = part;
        if (failed(p) || !accept(p, '.'))
            break;
        if (n > PROTO_DEPTH_MAX) {
            errorf(p, "Option name has too many parts.");
            break;
        }
    }
    expect(p, '=');
    struct proto_val *v = at(p, '[') || at(p, '{') || at(p, '<') ? agg_value(p) : scalar_value(p);
    for (int i = n - 1; i >= 0; i--) {
        parts[i]->val = v;
        if (i > 0) {
            v = val_new(p, PV_OPTION);
            v->opt = parts[i];
        }
    }
    return o;
}

static void option_statement(struct parser *p, struct pvec *options)
{
    lex_next(&p->lx); /* option */
    struct proto_option *o = option_body(p);
    expect(p, ';');
    if (!failed(p)) {
        if (!o->paren && strcmp(o->name, "map_entry") == 0 && o->val->kind != PV_BOOL)
            errorf(p, "Option \"map_entry\" takes true or false.");
        pvec_push(p->s, options, o);
    }
}

/* [opt = value, ...] after a field or enum value; default and json_name are taken out. */
static void field_options(struct parser *p, struct pvec *options, struct proto_field *field)
{
    if (!accept(p, '['))
        return;
    while (!failed(p)) {
        struct proto_pos pos = here(p);
        struct proto_option *o = option_body(p);
        if (field && !o->paren && o->val->kind != PV_OPTION &&
            (strcmp(o->name, "default") == 0 || strcmp(o->name, "json_name") == 0)) {
            bool is_default = o->name[0] == 'd';
            if (is_default ? field->dflt != NULL : field->json_name != NULL) {
                lex_error_at(&p->lx, pos.line, pos.col, "Already set option \"%s\".", o->name);
                return;
            }
            if (is_default) {
                field->dflt = o->val;
            } else if (o->val->kind != PV_STRING) {
                lex_error_at(&p->lx, pos.line, pos.col, "Expected string for json_name.");
                return;
            } else {
                field->json_name = o->val->s;
            }
        } else {
            pvec_push(p->s, options, o);
        }
        if (accept(p, ']'))
            break;
        if (!expect(p, ','))
            break;
    }
}

static struct proto_tref type_ref(struct parser *p)
{
    struct proto_tref t = {0};
    t.pos = here(p);
    t.text = dotted(p, true, "type name");
    t.scalar = t.text[0] == '.' ? 0 : proto_scalar_from_name(t.text, strlen(t.text));
    return t;
}

static enum proto_label label_of(const struct parser *p)
{
    if (at_word(p, "optional"))
        return PL_OPTIONAL;
    if (at_word(p, "required"))
        return PL_REQUIRED;
    if (at_word(p, "repeated"))
        return PL_REPEATED;
    return PL_NONE;
}

static int32_t field_number(struct parser *p)
{
    return (int32_t)integer(p, 0, INT32_MAX, "field number");
}

static void message_body(struct parser *p, struct proto_type *m);
static void field_statement(struct parser *p, enum ctx ctx, struct proto_type *scope,
                            struct pvec *fields, struct pvec *groups, struct proto_oneof *oneof,
                            struct proto_extend *ext);

/* group Name = N { fields } (the label is read already). */
static void group_rest(struct parser *p, enum proto_label label, struct proto_pos pos,
                       struct proto_type *scope, struct pvec *groups)
{
    if (p->f->syntax == 3) {
        errorf(p, "Group syntax is no longer supported in proto3.");
        return;
    }
    lex_next(&p->lx); /* group */
    struct proto_group *g = proto_alloc(p->s, sizeof(*g));
    memset(g, 0, sizeof(*g));
    g->label = label;
    g->pos = pos;
    if (p->lx.cur.kind == TK_IDENT && !(p->lx.cur.p[0] >= 'A' && p->lx.cur.p[0] <= 'Z')) {
        errorf(p, "Group names must start with a capital letter.");
        return;
    }
    g->name = ident(p, "group name");
    expect(p, '=');
    g->number = field_number(p);
    if (at(p, '[')) {
        errorf(p, "Options on groups are not supported.");
        return;
    }
    expect(p, '{');
    if (++p->depth > PROTO_DEPTH_MAX) {
        errorf(p, "Messages nested too deeply (more than %d levels).", PROTO_DEPTH_MAX);
        return;
    }
    while (!failed(p) && !accept(p, '}')) {
        if (p->lx.cur.kind == TK_EOF) {
            errorf(p, "Reached end of input in group definition (missing '}').");
            break;
        }
        if (accept(p, ';'))
            continue;
        if (at_word(p, "message") || at_word(p, "enum") || at_word(p, "oneof") ||
            at_word(p, "extend") || at_word(p, "extensions") || at_word(p, "reserved") ||
            at_word(p, "option")) {
            errorf(p, "Only fields are supported inside a group.");
            break;
        }
        field_statement(p, CTX_GROUP, scope, &g->fields, NULL, NULL, NULL);
    }
    p->depth--;
    accept(p, ';');
    pvec_push(p->s, groups, g);
}

/* A field, map field or group in a message, oneof, extend or group body. */
static void field_statement(struct parser *p, enum ctx ctx, struct proto_type *scope,
                            struct pvec *fields, struct pvec *groups, struct proto_oneof *oneof,
                            struct proto_extend *ext)
{
    struct proto_pos pos = here(p);
    enum proto_label label = label_of(p);
    if (label != PL_NONE) {
        if (ctx == CTX_ONEOF) {
            errorf(p, "Fields in oneofs must not have labels (required / optional / repeated).");
            return;
        }
        if (label == PL_REQUIRED && p->f->syntax == 3) {
            errorf(p, "Required fields are not allowed in proto3.");
            return;
        }
        lex_next(&p->lx);
    }
    struct tok next = lex_peek(&p->lx);
    bool is_map = at_word(p, "map") && tok_is_sym(&next, '<');
    bool is_group = at_word(p, "group") && next.kind == TK_IDENT;
    if (label == PL_NONE && !is_map && ctx != CTX_ONEOF && p->f->syntax != 3) {
        errorf(p, "Expected \"required\", \"optional\", or \"repeated\".");
        return;
    }
    if (is_group) {
        if (!groups) {
            errorf(p, "Groups are not supported here.");
            return;
        }
        group_rest(p, label, pos, scope, groups);
        return;
    }
    struct proto_field *f = proto_alloc(p->s, sizeof(*f));
    memset(f, 0, sizeof(*f));
    f->pos = pos;
    f->label = label;
    f->oneof = oneof;
    f->scope = scope;
    if (ext)
        f->extendee = ext->extendee;
    if (is_map) {
        if (label != PL_NONE) {
            lex_error_at(&p->lx, pos.line, pos.col,
                         "Field labels (required/optional/repeated) are not allowed on map "
                         "fields.");
            return;
        }
        if (ctx == CTX_ONEOF) {
            errorf(p, "Map fields are not allowed in oneofs.");
            return;
        }
        if (ctx == CTX_EXTEND) {
            errorf(p, "Map fields are not allowed to be extensions.");
            return;
        }
        if (ctx == CTX_GROUP) {
            errorf(p, "Map fields are not supported inside a group.");
            return;
        }
        lex_next(&p->lx); /* map */
        lex_next(&p->lx); /* < */
        f->is_map = true;
        f->key = type_ref(p);
        expect(p, ',');
        f->type = type_ref(p);
        expect(p, '>');
        if (failed(p))
            return;
        size_t n = strlen(f->key.text) + strlen(f->type.text) + 8;
        char *t = proto_alloc(p->s, n);
        snprintf(t, n, "map<%s, %s>", f->key.text, f->type.text);
        f->type_text = t;
    } else {
        f->type = type_ref(p);
        f->type_text = f->type.text;
    }
    f->name = ident(p, "field name");
    expect(p, '=');
    f->number = field_number(p);
    field_options(p, &f->options, f);
    expect(p, ';');
    if (!failed(p))
        pvec_push(p->s, fields, f);
}

/* reserved / extensions: ranges "1, 2 to 5, 9 to max" or (reserved only) names "a", "b". */
static struct proto_ranges *ranges(struct parser *p, bool names_ok, int64_t lo, int64_t hi)
{
    struct proto_ranges *r = proto_alloc(p->s, sizeof(*r));
    memset(r, 0, sizeof(*r));
    r->pos = here(p);
    lex_next(&p->lx); /* reserved / extensions */
    while (!failed(p)) {
        struct proto_range *it = proto_alloc(p->s, sizeof(*it));
        memset(it, 0, sizeof(*it));
        if (p->lx.cur.kind == TK_STRING && names_ok) {
            size_t len;
            it->name = strings(p, &len);
            if (strlen(it->name) != len) {
                errorf(p, "Reserved name contains a NUL byte.");
                break;
            }
        } else if (p->lx.cur.kind == TK_IDENT && names_ok) {
            errorf(p, "Reserved names must be string literals. (Only editions supports "
                      "identifiers.)");
            break;
        } else {
            it->start = integer(p, lo, hi, names_ok ? "field number range" : "field number");
            it->end = it->start;
            if (accept_word(p, "to")) {
                it->to = true;
                if (accept_word(p, "max")) {
                    it->max = true;
                    it->end = hi;
                } else {
                    it->end = integer(p, lo, hi, "field number");
                }
            }
        }
        pvec_push(p->s, &r->items, it);
        if (!accept(p, ','))
            break;
    }
    return r;
}

static struct proto_type *type_new(struct parser *p, enum proto_type_kind kind,
                                   struct proto_type *parent)
{
    struct proto_type *t = proto_alloc(p->s, sizeof(*t));
    memset(t, 0, sizeof(*t));
    t->kind = kind;
    t->file = p->f;
    t->parent = parent;
    t->pos = here(p);
    return t;
}

static void enum_def(struct parser *p, struct proto_type *parent, struct pvec *into)
{
    struct proto_type *e = type_new(p, PT_ENUM, parent);
    lex_next(&p->lx); /* enum */
    e->name = ident(p, "enum name");
    expect(p, '{');
    while (!failed(p) && !accept(p, '}')) {
        if (p->lx.cur.kind == TK_EOF) {
            errorf(p, "Reached end of input in enum definition (missing '}').");
            break;
        }
        if (accept(p, ';'))
            continue;
        if (at_word(p, "option")) {
            option_statement(p, &e->options);
            continue;
        }
        if (at_word(p, "reserved")) {
            struct proto_ranges *r = ranges(p, true, INT32_MIN, INT32_MAX);
            expect(p, ';');
            pvec_push(p->s, &e->reserved, r);
            continue;
        }
        struct proto_enum_value *v = proto_alloc(p->s, sizeof(*v));
        memset(v, 0, sizeof(*v));
        v->pos = here(p);
        v->name = ident(p, "enum constant name");
        expect(p, '=');
        v->number = (int32_t)integer(p, INT32_MIN, INT32_MAX, "integer");
        field_options(p, &v->options, NULL);
        expect(p, ';');
        pvec_push(p->s, &e->values, v);
    }
    pvec_push(p->s, into, e);
}

static void extend_def(struct parser *p, struct proto_type *scope, struct pvec *into)
{
    struct proto_extend *x = proto_alloc(p->s, sizeof(*x));
    memset(x, 0, sizeof(*x));
    x->pos = here(p);
    x->scope = scope;
    lex_next(&p->lx); /* extend */
    x->extendee = type_ref(p);
    if (x->extendee.scalar) {
        lex_error_at(&p->lx, x->extendee.pos.line, x->extendee.pos.col, "Expected message type.");
        return;
    }
    expect(p, '{');
    while (!failed(p) && !accept(p, '}')) {
        if (p->lx.cur.kind == TK_EOF) {
            errorf(p, "Reached end of input in extend definition (missing '}').");
            break;
        }
        if (accept(p, ';'))
            continue;
        if (at_word(p, "message") || at_word(p, "enum") || at_word(p, "oneof") ||
            at_word(p, "extend") || at_word(p, "extensions") || at_word(p, "reserved") ||
            at_word(p, "option")) {
            errorf(p, "Only fields are allowed in an extend block.");
            break;
        }
        field_statement(p, CTX_EXTEND, scope, &x->fields, NULL, NULL, x);
    }
    pvec_push(p->s, into, x);
}

static void oneof_def(struct parser *p, struct proto_type *m)
{
    struct proto_oneof *o = proto_alloc(p->s, sizeof(*o));
    memset(o, 0, sizeof(*o));
    o->pos = here(p);
    lex_next(&p->lx); /* oneof */
    o->name = ident(p, "oneof name");
    expect(p, '{');
    while (!failed(p) && !accept(p, '}')) {
        if (p->lx.cur.kind == TK_EOF) {
            errorf(p, "Reached end of input in oneof definition (missing '}').");
            break;
        }
        if (accept(p, ';'))
            continue;
        if (at_word(p, "option")) {
            option_statement(p, &o->options);
            continue;
        }
        field_statement(p, CTX_ONEOF, m, &o->fields, &o->groups, o, NULL);
    }
    if (!failed(p) && o->fields.n == 0 && o->groups.n == 0)
        lex_error_at(&p->lx, o->pos.line, o->pos.col, "Oneof must have at least one field.");
    pvec_push(p->s, &m->oneofs, o);
}

static void message_def(struct parser *p, struct proto_type *parent, struct pvec *into)
{
    struct proto_type *m = type_new(p, PT_MESSAGE, parent);
    lex_next(&p->lx); /* message */
    m->name = ident(p, "message name");
    expect(p, '{');
    if (++p->depth > PROTO_DEPTH_MAX) {
        errorf(p, "Messages nested too deeply (more than %d levels).", PROTO_DEPTH_MAX);
        return;
    }
    message_body(p, m);
    p->depth--;
    pvec_push(p->s, into, m);
}

static void message_body(struct parser *p, struct proto_type *m)
{
    while (!failed(p) && !accept(p, '}')) {
        if (p->lx.cur.kind == TK_EOF) {
            errorf(p, "Reached end of input in message definition (missing '}').");
            break;
        }
        if (accept(p, ';'))
            continue;
        if (at_word(p, "message")) {
            message_def(p, m, &m->nested);
        } else if (at_word(p, "enum")) {
            enum_def(p, m, &m->nested);
        } else if (at_word(p, "extend")) {
            extend_def(p, m, &m->extends);
        } else if (at_word(p, "option")) {
            option_statement(p, &m->options);
        } else if (at_word(p, "oneof")) {
            oneof_def(p, m);
        } else if (at_word(p, "extensions")) {
            if (p->f->syntax == 3) {
                errorf(p, "Extension ranges are not allowed in proto3.");
                break;
            }
            struct proto_ranges *r = ranges(p, false, 1, PROTO_FIELD_NUMBER_MAX);
            field_options(p, &r->options, NULL);
            expect(p, ';');
            pvec_push(p->s, &m->extensions, r);
        } else if (at_word(p, "reserved")) {
            struct proto_ranges *r = ranges(p, true, 1, PROTO_FIELD_NUMBER_MAX);
            expect(p, ';');
            pvec_push(p->s, &m->reserved, r);
        } else {
            field_statement(p, CTX_MESSAGE, m, &m->fields, &m->groups, NULL, NULL);
        }
    }
}

/* "stream" before a type name (a type called stream is written without it). */
static bool stream_next(const struct parser *p)
{
    struct tok next = lex_peek(&p->lx);
    return at_word(p, "stream") && (next.kind == TK_IDENT || tok_is_sym(&next, '.'));
}

static void rpc_def(struct parser *p, struct proto_service *svc)
{
    struct proto_rpc *r = proto_alloc(p->s, sizeof(*r));
    memset(r, 0, sizeof(*r));
    r->pos = here(p);
    lex_next(&p->lx); /* rpc */
    r->name = ident(p, "method name");
    expect(p, '(');
    if (stream_next(p)) {
        lex_next(&p->lx);
        r->req_stream = true;
    }
    r->req = type_ref(p);
    expect(p, ')');
    if (!failed(p) && !accept_word(p, "returns"))
        errorf(p, "Expected \"returns\".");
    expect(p, '(');
    if (stream_next(p)) {
        lex_next(&p->lx);
        r->resp_stream = true;
    }
    r->resp = type_ref(p);
    expect(p, ')');
    if (accept(p, '{')) {
        while (!failed(p) && !accept(p, '}')) {
            if (accept(p, ';'))
                continue;
            if (!at_word(p, "option")) {
                errorf(p, "Expected \"option\" or \"}\".");
                break;
            }
            option_statement(p, &r->options);
        }
        accept(p, ';');
    } else {
        expect(p, ';');
    }
    pvec_push(p->s, &svc->rpcs, r);
}

static void service_def(struct parser *p)
{
    struct proto_service *svc = proto_alloc(p->s, sizeof(*svc));
    memset(svc, 0, sizeof(*svc));
    svc->pos = here(p);
    lex_next(&p->lx); /* service */
    svc->name = ident(p, "service name");
    expect(p, '{');
    while (!failed(p) && !accept(p, '}')) {
        if (p->lx.cur.kind == TK_EOF) {
            errorf(p, "Reached end of input in service definition (missing '}').");
            break;
        }
        if (accept(p, ';'))
            continue;
        if (at_word(p, "option"))
            option_statement(p, &svc->options);
        else if (at_word(p, "rpc"))
            rpc_def(p, svc);
        else {
            errorf(p, "Expected \"rpc\" or \"option\".");
            break;
        }
    }
    pvec_push(p->s, &p->f->services, svc);
}

static void syntax_statement(struct parser *p)
{
    if (p->statements > 0) {
        errorf(p, "'syntax' element must be the first declaration in a file.");
        return;
    }
    lex_next(&p->lx);
    expect(p, '=');
    struct proto_pos pos = here(p);
    size_t len = 0;
    const char *v = strings(p, &len);
    expect(p, ';');
    if (failed(p))
        return;
    if (strcmp(v, "proto2") == 0)
        p->f->syntax = 2;
    else if (strcmp(v, "proto3") == 0)
        p->f->syntax = 3;
    else
        lex_error_at(&p->lx, pos.line, pos.col,
                     "Unrecognized syntax identifier \"%.40s\".  This parser only recognizes "
                     "\"proto2\" and \"proto3\".",
                     v);
    p->f->syntax_written = true;
}

static void import_statement(struct parser *p)
{
    struct proto_import *im = proto_alloc(p->s, sizeof(*im));
    memset(im, 0, sizeof(*im));
    im->pos = here(p);
    lex_next(&p->lx); /* import */
    if (accept_word(p, "public"))
        im->kind = PI_PUBLIC;
    else if (accept_word(p, "weak"))
        im->kind = PI_WEAK;
    size_t len = 0;
    im->path = strings(p, &len);
    expect(p, ';');
    if (failed(p))
        return;
    if (len == 0 || strlen(im->path) != len) {
        lex_error_at(&p->lx, im->pos.line, im->pos.col, "Import path is empty or holds a NUL.");
        return;
    }
    if (p->f->imports.n >= PROTO_FILES_MAX) {
        lex_error_at(&p->lx, im->pos.line, im->pos.col, "Too many imports (more than %d).",
                     PROTO_FILES_MAX - 1);
        return;
    }
    for (size_t i = 0; i < p->f->imports.n; i++) {
        const struct proto_import *o = p->f->imports.v[i];
        if (strcmp(o->path, im->path) == 0) {
            lex_error_at(&p->lx, im->pos.line, im->pos.col, "Import \"%.100s\" was listed twice.",
                         im->path);
            return;
        }
    }
    pvec_push(p->s, &p->f->imports, im);
}

static void statement(struct parser *p)
{
    if (at_word(p, "syntax")) {
        syntax_statement(p);
    } else if (at_word(p, "edition")) {
        errorf(p, "Editions are not supported (edition = ...): write syntax = \"proto2\" or "
                  "syntax = \"proto3\".");
    } else if (at_word(p, "package")) {
        if (p->f->package) {
            errorf(p, "Multiple package definitions.");
            return;
        }
        lex_next(&p->lx);
        p->f->package = dotted(p, false, "package name");
        expect(p, ';');
    } else if (at_word(p, "import")) {
        import_statement(p);
    } else if (at_word(p, "option")) {
        option_statement(p, &p->f->options);
    } else if (at_word(p, "message")) {
        message_def(p, NULL, &p->f->types);
    } else if (at_word(p, "enum")) {
        enum_def(p, NULL, &p->f->types);
    } else if (at_word(p, "service")) {
        service_def(p);
    } else if (at_word(p, "extend")) {
        extend_def(p, NULL, &p->f->extends);
    } else if (!accept(p, ';')) {
        errorf(p, "Expected top-level statement (e.g. \"message\").");
    }
}

int proto_parse_text(struct proto_schema *s, struct proto_file *f, const char *text, size_t len,
                     char *err, size_t errcap)
{
    struct parser p;
    memset(&p, 0, sizeof(p));
    p.s = s;
    p.f = f;
    f->syntax = 2;
    lex_init(&p.lx, text, len, f->path, err, errcap);
    while (!failed(&p) && p.lx.cur.kind != TK_EOF) {
        statement(&p);
        p.statements++;
    }
    return failed(&p) ? -1 : 0;
}
