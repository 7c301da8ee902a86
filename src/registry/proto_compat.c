/* Confluent's Protobuf compatibility rules (its protobuf/diff package: SchemaDiff,
 * MessageSchemaDiff, FieldSchemaDiff, EnumSchemaDiff), over linked schemas.
 *
 * A comparison walks an original (the writer's schema) and an update (the reader's) and lists
 * every difference, each a type and a path ("#/Order/items/3"); the update can read the
 * original unless a difference's type is outside COMPATIBLE (below).
 *  - files: the package changed; messages and enums matched by name at each level (a message
 *    removed, added, or at another index among its siblings; an enum removed or added).
 *  - messages: fields matched by number across the message, oneof members included. Removed
 *    and added fields (required ones are incompatible), oneofs removed and added, a member
 *    moved out of its oneof (compatible) or fields from different origins (two top-level
 *    fields, or a field and another oneof) brought into one oneof (incompatible), a oneof
 *    member dropped unless its whole oneof went.
 *  - fields: name; kind (scalar, with enums; message; map); scalars in Protobuf's
 *    wire-compatible groups (int32/int64/uint32/uint64/bool/enums, sint32/sint64,
 *    fixed32/sfixed32, fixed64/sfixed64, string/bytes, float, double); a label changed between
 *    two written labels (incompatible for numbers); a message type by its name within its
 *    package, and when it comes from another file whose reference differs, its contents,
 *    compared as a message of its own (an incompatible content change is also a named-type
 *    change of the field); map keys and values as fields.
 *  - enums: constants matched by number (added, removed, renamed: all compatible).
 *
 * Differences from Confluent: the order of differences at one level follows the original's
 * declarations then the update's (Confluent's follows Java hash sets); a pair of imported
 * messages is compared once per call and its result reused (Confluent recomputes it), and a
 * pair being compared is not compared again inside itself (as Confluent's SchemaScope); at most
 * DIFFS_MAX differences are kept per call (the verdict counts all, and a refusal keeps at least
 * one of its reasons). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/proto_ast.h"

#define DIFFS_MAX 20000  /* differences kept in one call, memoized copies included */
#define NESTED_MAX 256   /* imported message pairs being compared inside each other */

#define DIFF_TYPES(X)                                                                              \
    X(PACKAGE_CHANGED, false)                                                                      \
    X(MESSAGE_ADDED, true)                                                                         \
    X(MESSAGE_REMOVED, false)                                                                      \
    X(MESSAGE_MOVED, true)                                                                         \
    X(ENUM_ADDED, true)                                                                            \
    X(ENUM_REMOVED, true)                                                                          \
    X(ENUM_CONST_ADDED, true)                                                                      \
    X(ENUM_CONST_CHANGED, true)                                                                    \
    X(ENUM_CONST_REMOVED, true)                                                                    \
    X(FIELD_ADDED, true)                                                                           \
    X(FIELD_REMOVED, true)                                                                         \
    X(FIELD_NAME_CHANGED, true)                                                                    \
    X(FIELD_KIND_CHANGED, false)                                                                   \
    X(FIELD_SCALAR_KIND_CHANGED, false)                                                            \
    X(FIELD_NAMED_TYPE_CHANGED, false)                                                             \
    X(FIELD_NUMERIC_LABEL_CHANGED, false)                                                          \
    X(FIELD_STRING_OR_BYTES_LABEL_CHANGED, true)                                                   \
    X(REQUIRED_FIELD_ADDED, false)                                                                 \
    X(REQUIRED_FIELD_REMOVED, false)                                                               \
    X(ONEOF_ADDED, true)                                                                           \
    X(ONEOF_REMOVED, true)                                                                         \
    X(ONEOF_FIELD_ADDED, true)                                                                     \
    X(ONEOF_FIELD_REMOVED, false)                                                                  \
    X(ONEOF_FIELD_MOVED_TO_TOP_LEVEL, true)                                                        \
    X(MULTIPLE_FIELDS_MOVED_TO_ONEOF, false)                                                       \
    X(FIELD_MOVED_TO_EXISTING_ONEOF, false)

enum diff_type {
#define X(name, ok) name,
    DIFF_TYPES(X)
#undef X
};

static const struct {
    const char *name;
    bool compatible;
} diff_info[] = {
#define X(name, ok) {#name, ok},
    DIFF_TYPES(X)
#undef X
};

struct diff {
    enum diff_type type;
    char *path; /* "#/a/b" */
};

struct dlist {
    struct diff *v;
    size_t n;
    size_t cap;
    bool incompatible;      /* some difference, kept or not, is not compatible */
    bool kept_incompatible; /* one of those is kept (so a refusal always has a reason) */
};

/* A compared pair of imported messages and what the comparison found. */
struct memo {
    const struct proto_type *o;
    const struct proto_type *u;
    struct dlist diffs;
};

struct cmp {
    struct strbuf path;          /* the current path's segments, each after a '/' */
    const struct proto_type *open[NESTED_MAX]; /* original messages being compared */
    int n_open;
    struct strmap memo;          /* "o-address:u-address" -> struct memo * */
    size_t budget;               /* differences that may still be kept */
};

static void dlist_add(struct cmp *c, struct dlist *l, enum diff_type type, const char *path)
{
    bool bad = !diff_info[type].compatible;
    if (bad)
        l->incompatible = true;
    if (c->budget == 0 && !(bad && !l->kept_incompatible))
        return;
    if (c->budget > 0)
        c->budget--;
    if (bad)
        l->kept_incompatible = true;
    MEM_GROW(l->v, l->cap, l->n + 1);
    l->v[l->n].type = type;
    l->v[l->n].path = mem_strdup(path);
    l->n++;
}

static void dlist_free(struct dlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        mem_free(l->v[i].path);
    mem_free(l->v);
    memset(l, 0, sizeof(*l));
}

static void dlist_append(struct cmp *c, struct dlist *to, const struct dlist *from)
{
    for (size_t i = 0; i < from->n; i++)
        dlist_add(c, to, from->v[i].type, from->v[i].path);
    if (from->incompatible)
        to->incompatible = true;
}

static void add(struct cmp *c, struct dlist *l, enum diff_type type)
{
    char *p = mem_alloc(c->path.len + 3);
    memcpy(p, "#/", 2);
    /* The path buffer holds "/a/b": drop its first slash. */
    const char *segs = c->path.len ? strbuf_str(&c->path) + 1 : "";
    strcpy(p + 2, segs);
    dlist_add(c, l, type, p);
    mem_free(p);
}

static size_t enter(struct cmp *c, const char *segment)
{
    size_t mark = c->path.len;
    strbuf_putc(&c->path, '/');
    strbuf_puts(&c->path, segment);
    return mark;
}

static size_t enter_num(struct cmp *c, int32_t number)
{
    char buf[16];
    snprintf(buf, sizeof(buf), "%d", number);
    return enter(c, buf);
}

static void leave(struct cmp *c, size_t mark)
{
    c->path.len = mark;
    if (c->path.p)
        c->path.p[mark] = '\0';
}

static void add_at(struct cmp *c, struct dlist *l, const char *segment, enum diff_type type)
{
    size_t m = enter(c, segment);
    add(c, l, type);
    leave(c, m);
}

static void add_at_num(struct cmp *c, struct dlist *l, int32_t number, enum diff_type type)
{
    size_t m = enter_num(c, number);
    add(c, l, type);
    leave(c, m);
}

/* ---- fields ---- */

enum kind { K_SCALAR, K_MESSAGE, K_MAP };
enum scalar_kind { SK_GENERAL, SK_SIGNED, SK_STRING_OR_BYTES, SK_FIXED32, SK_FIXED64, SK_FLOAT,
                   SK_DOUBLE };

/* A field's type as the rules see it. */
struct ftype {
    enum kind kind;
    int scalar;                    /* K_SCALAR: the scalar, 0 for an enum */
    const struct proto_type *type; /* the message or enum */
    const struct proto_tref *key;  /* K_MAP */
    const struct proto_tref *value;
};

static struct ftype tref_type(const struct proto_tref *t)
{
    struct ftype f = {0};
    if (t->scalar) {
        f.kind = K_SCALAR;
        f.scalar = t->scalar;
        return f;
    }
    f.type = t->type;
    if (t->type && t->type->kind == PT_ENUM) {
        f.kind = K_SCALAR;
        return f;
    }
    if (t->type && t->type->map_entry) {
        const struct proto_field *k = proto_entry_field(t->type, 1);
        const struct proto_field *v = proto_entry_field(t->type, 2);
        if (k && v) {
            f.kind = K_MAP;
            f.key = &k->type;
            f.value = &v->type;
            return f;
        }
    }
    f.kind = K_MESSAGE;
    return f;
}

static struct ftype field_type(const struct proto_field *fd)
{
    if (fd->is_map) {
        struct ftype f = {.kind = K_MAP, .key = &fd->key, .value = &fd->type};
        return f;
    }
    return tref_type(&fd->type);
}

static enum scalar_kind scalar_kind(const struct ftype *t)
{
    switch (t->scalar) {
    case 0: /* enum */
    case PS_INT32:
    case PS_INT64:
    case PS_UINT32:
    case PS_UINT64:
    case PS_BOOL: return SK_GENERAL;
    case PS_SINT32:
    case PS_SINT64: return SK_SIGNED;
    case PS_STRING:
    case PS_BYTES: return SK_STRING_OR_BYTES;
    case PS_FIXED32:
    case PS_SFIXED32: return SK_FIXED32;
    case PS_FIXED64:
    case PS_SFIXED64: return SK_FIXED64;
    case PS_FLOAT: return SK_FLOAT;
    default: return SK_DOUBLE;
    }
}

/* A type's name within its package: "Outer.Inner". */
static const char *local_name(const struct proto_type *t)
{
    const char *pkg = t->file->package;
    size_t n = pkg ? strlen(pkg) : 0;
    if (n && strncmp(t->full_name, pkg, n) == 0 && t->full_name[n] == '.')
        return t->full_name + n + 1;
    return t->full_name;
}

/* The reference a type's file came from: "" for the schema's own file. */
static const char *reference_of(const struct proto_type *t)
{
    return t->file->path[0] ? t->file->id : "";
}

static void compare_messages(struct cmp *c, struct dlist *l, const struct proto_type *o,
                             const struct proto_type *u);

/* compareMessageTypes: a message in another file is compared as a message of its own, once
 * per pair, its differences added to l's. */
static void compare_named(struct cmp *c, struct dlist *l, const struct proto_type *o,
                          const struct proto_type *u)
{
    if (!o || !u) {
        add(c, l, FIELD_NAMED_TYPE_CHANGED);
        return;
    }
    const char *lo = local_name(o), *lu = local_name(u);
    if (strcmp(lo, lu) != 0) {
        add(c, l, FIELD_NAMED_TYPE_CHANGED);
        return;
    }
    const char *ro = reference_of(o), *ru = reference_of(u);
    if (ro && ru && strcmp(ro, ru) == 0)
        return;
    for (int i = 0; i < c->n_open; i++)
        if (c->open[i] == o)
            return; /* being compared further out: Confluent's SchemaScope skips it */
    char key[48];
    int kl = snprintf(key, sizeof(key), "%p:%p", (const void *)o, (const void *)u);
    struct memo *m = strmap_get(&c->memo, key, (size_t)kl);
    if (!m) {
        if (c->n_open == NESTED_MAX) {
            add(c, l, FIELD_NAMED_TYPE_CHANGED); /* too deep to tell: refuse */
            return;
        }
        struct dlist sub = {0};
        struct strbuf saved = c->path;
        strbuf_init(&c->path);
        /* The sub-comparison's paths start at the type's own name: #/Outer/Inner/... */
        for (const char *p = lo; *p;) {
            const char *dot = strchr(p, '.');
            size_t len = dot ? (size_t)(dot - p) : strlen(p);
            strbuf_putc(&c->path, '/');
            strbuf_append(&c->path, p, len);
            p += len + (dot ? 1 : 0);
        }
        compare_messages(c, &sub, o, u);
        strbuf_destroy(&c->path);
        c->path = saved;
        m = mem_calloc(1, sizeof(*m));
        m->o = o;
        m->u = u;
        m->diffs = sub;
        strmap_put(&c->memo, key, (size_t)kl, m);
    }
    dlist_append(c, l, &m->diffs);
    if (m->diffs.incompatible)
        add(c, l, FIELD_NAMED_TYPE_CHANGED);
}

static void compare_types(struct cmp *c, struct dlist *l, struct ftype o, struct ftype u,
                          enum proto_label ol, enum proto_label ul, bool labels);

static void compare_trefs(struct cmp *c, struct dlist *l, const struct proto_tref *o,
                          const struct proto_tref *u)
{
    compare_types(c, l, tref_type(o), tref_type(u), PL_NONE, PL_NONE, false);
}

/* compareLabelsAndTypes; labels: both fields have a label (Wire's non-null labels). */
static void compare_types(struct cmp *c, struct dlist *l, struct ftype o, struct ftype u,
                          enum proto_label ol, enum proto_label ul, bool labels)
{
    if (o.kind != u.kind) {
        add(c, l, FIELD_KIND_CHANGED);
        return;
    }
    switch (o.kind) {
    case K_SCALAR: {
        enum scalar_kind ko = scalar_kind(&o), ku = scalar_kind(&u);
        if (ko != ku)
            add(c, l, FIELD_SCALAR_KIND_CHANGED);
        else if (labels && ol != ul)
            add(c, l, ko == SK_STRING_OR_BYTES ? FIELD_STRING_OR_BYTES_LABEL_CHANGED
                                               : FIELD_NUMERIC_LABEL_CHANGED);
        break;
    }
    case K_MESSAGE:
        compare_named(c, l, o.type, u.type);
        break;
    case K_MAP:
        compare_trefs(c, l, o.key, u.key);
        compare_trefs(c, l, o.value, u.value);
        break;
    }
}

static void compare_fields(struct cmp *c, struct dlist *l, const struct proto_field *o,
                           const struct proto_field *u)
{
    if (strcmp(o->name, u->name) != 0)
        add(c, l, FIELD_NAME_CHANGED);
    /* Wire gives no label to proto3's plain fields, map fields and oneof members. */
    bool labels = o->label != PL_NONE && u->label != PL_NONE && !o->is_map && !u->is_map;
    compare_types(c, l, field_type(o), field_type(u), o->label, u->label, labels);
}

/* ---- messages ---- */

struct tagged {
    const struct proto_field *f;
    const struct proto_oneof *oneof;
    size_t oneof_index; /* its position in the message's oneofs */
};

static int tagged_cmp(const void *a, const void *b)
{
    int32_t x = ((const struct tagged *)a)->f->number, y = ((const struct tagged *)b)->f->number;
    return x < y ? -1 : x > y;
}

/* The fields of m by number (oneof members included), sorted. */
static struct tagged *by_tag(const struct proto_type *m, size_t *n)
{
    size_t total = m->fields.n;
    for (size_t i = 0; i < m->oneofs.n; i++)
        total += ((const struct proto_oneof *)m->oneofs.v[i])->fields.n;
    struct tagged *v = mem_calloc(total ? total : 1, sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; i < m->fields.n; i++)
        v[k++] = (struct tagged){m->fields.v[i], NULL, 0};
    for (size_t i = 0; i < m->oneofs.n; i++) {
        const struct proto_oneof *o = m->oneofs.v[i];
        for (size_t j = 0; j < o->fields.n; j++)
            v[k++] = (struct tagged){o->fields.v[j], o, i};
    }
    *n = k;
    if (k > 1)
        qsort(v, k, sizeof(*v), tagged_cmp);
    return v;
}

static const struct tagged *find_tag(const struct tagged *v, size_t n, int32_t number)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int32_t x = v[mid].f->number;
        if (x == number)
            return &v[mid];
        if (x < number)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names of m's oneofs, sorted (release with mem_free). */
static const char **oneof_names(const struct proto_type *m)
{
    const char **v = mem_calloc(m->oneofs.n + 1, sizeof(*v));
    for (size_t i = 0; i < m->oneofs.n; i++)
        v[i] = ((const struct proto_oneof *)m->oneofs.v[i])->name;
    if (m->oneofs.n > 1)
        qsort(v, m->oneofs.n, sizeof(*v), str_cmp);
    return v;
}

static bool has_name(const char **names, size_t n, const char *name)
{
    return n && bsearch(&name, names, n, sizeof(*names), str_cmp) != NULL;
}

static int int32_cmp(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return x < y ? -1 : x > y;
}

static void compare_levels(struct cmp *c, struct dlist *l, const struct pvec *o,
                           const struct pvec *u);

/* Does any member of original oneof ob survive (by number) in the update? */
static bool oneof_survives(const struct proto_oneof *ob, const struct tagged *ut, size_t un)
{
    for (size_t i = 0; i < ob->fields.n; i++)
        if (find_tag(ut, un, ((const struct proto_field *)ob->fields.v[i])->number))
            return true;
    return false;
}

static void compare_oneof_origins(struct cmp *c, struct dlist *l, const struct proto_type *u,
                                  const struct tagged *ot, size_t on)
{
    for (size_t i = 0; i < u->oneofs.n; i++) {
        const struct proto_oneof *uo = u->oneofs.v[i];
        const void *groups[2] = {0};
        int n_groups = 0, top_moved = 0;
        for (size_t j = 0; j < uo->fields.n; j++) {
            const struct proto_field *f = uo->fields.v[j];
            const struct tagged *t = find_tag(ot, on, f->number);
            if (!t)
                continue; /* new: old data never set it */
            /* A group: the original oneof, or the original top-level field itself. */
            const void *g = t->oneof ? (const void *)t->oneof : (const void *)t->f;
            if (!t->oneof)
                top_moved++;
            if (n_groups == 0 || (groups[0] != g && (n_groups < 2 || groups[1] != g))) {
                if (n_groups < 2)
                    groups[n_groups] = g;
                n_groups++;
            }
        }
        if (n_groups > 1)
            add_at(c, l, uo->name,
                   top_moved > 1 ? MULTIPLE_FIELDS_MOVED_TO_ONEOF : FIELD_MOVED_TO_EXISTING_ONEOF);
    }
}

static void compare_oneof_sets(struct cmp *c, struct dlist *l, const char **on, size_t no,
                               const char **un, size_t nu)
{
    size_t i = 0, k = 0;
    while (i < no || k < nu) {
        int d = i == no ? 1 : k == nu ? -1 : strcmp(on[i], un[k]);
        if (d < 0)
            add_at(c, l, on[i++], ONEOF_REMOVED);
        else if (d > 0)
            add_at(c, l, un[k++], ONEOF_ADDED);
        else
            i++, k++;
    }
}

/* MessageSchemaDiff.compare (the caller has entered the message's name in the path). */
static void compare_messages(struct cmp *c, struct dlist *l, const struct proto_type *o,
                             const struct proto_type *u)
{
    for (int i = 0; i < c->n_open; i++)
        if (c->open[i] == o)
            return;
    if (c->n_open == NESTED_MAX) {
        l->incompatible = true;
        return;
    }
    c->open[c->n_open++] = o;
    size_t on, un;
    struct tagged *ot = by_tag(o, &on), *ut = by_tag(u, &un);
    const char **onames = oneof_names(o), **unames = oneof_names(u);
    size_t n_on = o->oneofs.n, n_un = u->oneofs.n;
    bool *survives = mem_calloc(n_on + 1, sizeof(bool));
    for (size_t i = 0; i < n_on; i++)
        survives[i] = oneof_survives(o->oneofs.v[i], ut, un);
    compare_oneof_origins(c, l, u, ot, on);
    compare_oneof_sets(c, l, onames, n_on, unames, n_un);
    int32_t *tags = mem_calloc(on + un + 1, sizeof(*tags));
    size_t nt = 0;
    for (size_t i = 0; i < on; i++)
        tags[nt++] = ot[i].f->number;
    for (size_t i = 0; i < un; i++)
        tags[nt++] = ut[i].f->number;
    if (nt > 1)
        qsort(tags, nt, sizeof(*tags), int32_cmp);
    for (size_t i = 0; i < nt; i++) {
        if (i > 0 && tags[i] == tags[i - 1])
            continue;
        const struct tagged *a = find_tag(ot, on, tags[i]), *b = find_tag(ut, un, tags[i]);
        if (!b) {
            if (a->oneof) {
                if (has_name(unames, n_un, a->oneof->name) || survives[a->oneof_index]) {
                    size_t m = enter(c, a->oneof->name);
                    add_at_num(c, l, tags[i], ONEOF_FIELD_REMOVED);
                    leave(c, m);
                }
            } else {
                add_at_num(c, l, tags[i],
                           a->f->label == PL_REQUIRED ? REQUIRED_FIELD_REMOVED : FIELD_REMOVED);
            }
        } else if (!a) {
            if (b->oneof) {
                size_t m = enter(c, b->oneof->name);
                add_at_num(c, l, tags[i], ONEOF_FIELD_ADDED);
                leave(c, m);
            } else {
                add_at_num(c, l, tags[i],
                           b->f->label == PL_REQUIRED ? REQUIRED_FIELD_ADDED : FIELD_ADDED);
            }
        } else {
            if (a->oneof && !b->oneof)
                add_at_num(c, l, tags[i], ONEOF_FIELD_MOVED_TO_TOP_LEVEL);
            size_t m = b->oneof ? enter(c, b->oneof->name) : c->path.len;
            size_t m2 = enter_num(c, tags[i]);
            compare_fields(c, l, a->f, b->f);
            leave(c, m2);
            leave(c, m);
        }
    }
    mem_free(tags);
    mem_free(survives);
    mem_free(onames);
    mem_free(unames);
    mem_free(ot);
    mem_free(ut);
    compare_levels(c, l, &o->nested, &u->nested);
    c->n_open--;
}

/* ---- enums ---- */

struct numbered {
    int32_t number;
    size_t index;
    const struct proto_enum_value *v;
};

static int numbered_cmp(const void *a, const void *b)
{
    const struct numbered *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* e's constants by number; of aliases the last declared (Confluent fills a map by number). */
static struct numbered *by_number(const struct proto_type *e, size_t *n)
{
    struct numbered *v = mem_calloc(e->values.n + 1, sizeof(*v));
    for (size_t i = 0; i < e->values.n; i++) {
        const struct proto_enum_value *ev = e->values.v[i];
        v[i] = (struct numbered){ev->number, i, ev};
    }
    if (e->values.n > 1)
        qsort(v, e->values.n, sizeof(*v), numbered_cmp);
    size_t k = 0;
    for (size_t i = 0; i < e->values.n; i++) {
        if (k > 0 && v[k - 1].number == v[i].number)
            k--;
        v[k++] = v[i];
    }
    *n = k;
    return v;
}

static void compare_enums(struct cmp *c, struct dlist *l, const struct proto_type *o,
                          const struct proto_type *u)
{
    size_t no, nu, i = 0, k = 0;
    struct numbered *a = by_number(o, &no), *b = by_number(u, &nu);
    while (i < no || k < nu) {
        if (k == nu || (i < no && a[i].number < b[k].number)) {
            add_at_num(c, l, a[i++].number, ENUM_CONST_REMOVED);
        } else if (i == no || b[k].number < a[i].number) {
            add_at_num(c, l, b[k++].number, ENUM_CONST_ADDED);
        } else {
            if (strcmp(a[i].v->name, b[k].v->name) != 0)
                add_at_num(c, l, a[i].number, ENUM_CONST_CHANGED);
            i++;
            k++;
        }
    }
    mem_free(a);
    mem_free(b);
}

/* ---- one level of types (SchemaDiff.compareTypeElements) ---- */

/* A level's types of one kind by name, with their index among that kind. */
struct named {
    const char *name;
    int index;
    const struct proto_type *t;
};

static int named_cmp(const void *a, const void *b)
{
    return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

static struct named *by_name(const struct pvec *types, enum proto_type_kind kind, size_t *n)
{
    struct named *v = mem_calloc(types->n + 1, sizeof(*v));
    size_t k = 0;
    for (size_t i = 0; i < types->n; i++) {
        const struct proto_type *t = types->v[i];
        if (t->kind == kind) {
            v[k] = (struct named){t->name, (int)k, t};
            k++;
        }
    }
    if (k > 1)
        qsort(v, k, sizeof(*v), named_cmp);
    *n = k;
    return v;
}

static const struct named *find_named(const struct named *v, size_t n, const char *name)
{
    struct named key = {name, 0, NULL};
    return n ? bsearch(&key, v, n, sizeof(*v), named_cmp) : NULL;
}

static void compare_level_kind(struct cmp *c, struct dlist *l, const struct pvec *o,
                               const struct pvec *u, enum proto_type_kind kind)
{
    size_t no, nu;
    struct named *on = by_name(o, kind, &no), *un = by_name(u, kind, &nu);
    for (size_t i = 0; i < o->n; i++) { /* in the original's order */
        const struct proto_type *ot = o->v[i];
        if (ot->kind != kind)
            continue;
        const struct named *a = find_named(on, no, ot->name);
        const struct named *b = find_named(un, nu, ot->name);
        size_t m = enter(c, ot->name);
        if (kind == PT_ENUM) {
            if (!b)
                add(c, l, ENUM_REMOVED);
            else
                compare_enums(c, l, ot, b->t);
        } else if (!b) {
            if (!ot->map_entry)
                add(c, l, MESSAGE_REMOVED);
        } else {
            compare_messages(c, l, ot, b->t);
            if (a->index != b->index)
                add(c, l, MESSAGE_MOVED);
        }
        leave(c, m);
    }
    for (size_t i = 0; i < u->n; i++) {
        const struct proto_type *ut = u->v[i];
        if (ut->kind != kind || find_named(on, no, ut->name))
            continue;
        if (kind == PT_MESSAGE && ut->map_entry)
            continue;
        add_at(c, l, ut->name, kind == PT_ENUM ? ENUM_ADDED : MESSAGE_ADDED);
    }
    mem_free(on);
    mem_free(un);
}

static void compare_levels(struct cmp *c, struct dlist *l, const struct pvec *o,
                           const struct pvec *u)
{
    compare_level_kind(c, l, o, u, PT_MESSAGE);
    compare_level_kind(c, l, o, u, PT_ENUM);
}

static void compare_schemas(const struct proto_schema *original,
                            const struct proto_schema *update, struct dlist *out)
{
    struct cmp c = {.budget = DIFFS_MAX};
    strbuf_init(&c.path);
    strmap_init(&c.memo);
    const char *po = original->root->package, *pu = update->root->package;
    if ((po == NULL) != (pu == NULL) || (po && strcmp(po, pu) != 0))
        add(&c, out, PACKAGE_CHANGED);
    compare_levels(&c, out, &original->root->types, &update->root->types);
    const char *k;
    void *v;
    for (size_t it = 0; strmap_next(&c.memo, &it, &k, &v);) {
        struct memo *m = v;
        dlist_free(&m->diffs);
        mem_free(m);
    }
    strmap_destroy(&c.memo);
    strbuf_destroy(&c.path);
}

/* ---- reasons ---- */

static void reasons_add(struct proto_reasons *r, char *s)
{
    if (r->n == PROTO_REASONS_MAX) {
        mem_free(s);
        return;
    }
    MEM_GROW(r->v, r->cap, r->n + 1);
    r->v[r->n++] = s;
}

/* Confluent's Difference.toString(), its %s filled with the reader's then the writer's label. */
static char *verbose(const struct diff *d, const char *rd, const char *wr)
{
    struct strbuf b;
    strbuf_init(&b);
    strbuf_printf(&b, "{errorType:\"%s\", description:\"", diff_info[d->type].name);
    const char *p = d->path;
    switch (d->type) {
    case PACKAGE_CHANGED:
        strbuf_printf(&b, "The package at '%s' in the %s schema does not match the package in "
                      "the %s schema", p, rd, wr);
        break;
    case MESSAGE_REMOVED:
        strbuf_printf(&b, "The %s schema is missing a MESSAGE type at path '%s' in the %s schema",
                      rd, p, wr);
        break;
    case FIELD_KIND_CHANGED:
        strbuf_printf(&b, "The type of a field at path '%s' in the %s schema does not match the "
                      "%s schema", p, rd, wr);
        break;
    case FIELD_SCALAR_KIND_CHANGED:
        strbuf_printf(&b, "The kind of a SCALAR field at path '%s' in the %s schema does not "
                      "match its kind in the %s schema", p, rd, wr);
        break;
    case FIELD_NAMED_TYPE_CHANGED:
        strbuf_printf(&b, "The type of a MESSAGE field at path '%s' in the %s schema does not "
                      "match its type in the %s schema", p, rd, wr);
        break;
    case FIELD_NUMERIC_LABEL_CHANGED:
        strbuf_printf(&b, "The label for a NUMERIC field at path '%s' in the %s schema does not "
                      "match its label in the %s schema", p, rd, wr);
        break;
    case REQUIRED_FIELD_ADDED:
        strbuf_printf(&b, "A required field  at path '%s' in the %s schema is missing in the %s "
                      "schema", p, rd, wr);
        break;
    case REQUIRED_FIELD_REMOVED:
        strbuf_printf(&b, "The %s schema is missing a required field at path: '%s' in the %s "
                      "schema", rd, p, wr);
        break;
    case ONEOF_FIELD_REMOVED:
        strbuf_printf(&b, "The %s schema is missing a oneof field at path '%s' in the %s schema",
                      rd, p, wr);
        break;
    case MULTIPLE_FIELDS_MOVED_TO_ONEOF:
        strbuf_printf(&b, "Multiple fields in the oneof at path '%s' in the %s schema are "
                      "outside a oneof in the %s schema", p, rd, wr);
        break;
    case FIELD_MOVED_TO_EXISTING_ONEOF:
        strbuf_printf(&b, "A field in the oneof at path '%s' in the %s schema is outside an "
                      "existing oneof in the %s schema", p, rd, wr);
        break;
    default:
        break;
    }
    strbuf_puts(&b, "\"}");
    char *s = mem_strdup(strbuf_str(&b));
    strbuf_destroy(&b);
    return s;
}

bool proto_can_read(const struct proto_schema *reader, const struct proto_schema *writer,
                    const char *reader_label, const char *writer_label,
                    struct proto_reasons *reasons)
{
    struct dlist l = {0};
    compare_schemas(writer, reader, &l);
    if (reasons)
        for (size_t i = 0; i < l.n; i++)
            if (!diff_info[l.v[i].type].compatible)
                reasons_add(reasons, verbose(&l.v[i], reader_label ? reader_label : "reader",
                                             writer_label ? writer_label : "writer"));
    bool ok = !l.incompatible;
    dlist_free(&l);
    return ok;
}

bool proto_differences(const struct proto_schema *original, const struct proto_schema *update,
                       struct proto_reasons *out)
{
    struct dlist l = {0};
    compare_schemas(original, update, &l);
    for (size_t i = 0; i < l.n; i++) {
        size_t n = strlen(diff_info[l.v[i].type].name) + strlen(l.v[i].path) + 2;
        char *s = mem_alloc(n);
        snprintf(s, n, "%s %s", diff_info[l.v[i].type].name, l.v[i].path);
        reasons_add(out, s);
    }
    bool ok = !l.incompatible;
    dlist_free(&l);
    return ok;
}
