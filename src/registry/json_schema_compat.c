/* Confluent's JSON Schema compatibility (contract in registry/json_schema.h): the differences
 * from an original (writer) schema to an update (reader), each typed as Confluent's diff
 * package types it, and the update compatible when every difference is in Confluent's
 * compatible set under its default STRICT policy (the `ok` column below).
 *
 * The walk follows SchemaDiff.compare: $refs are followed; a combined update (anyOf/oneOf)
 * may take a plain original into one of its branches, a combined original (allOf) may narrow to
 * a plain update; kinds that differ are TYPE_CHANGED unless the original is false or the update
 * accepts everything; then the kind's own keywords are compared. Combined schemas match their
 * branches by a maximum bipartite matching over the compatible branch pairs (Kuhn's augmenting
 * paths), as Confluent's MaximumCardinalityMatch does.
 *
 * State (struct cmp, one per comparison):
 *   1. memo: each (original node, update node) pair is judged once; its differences are kept
 *      with paths relative to the pair and rebased where the pair is met again, so shared
 *      subschemas and combined cross products cost one judgement per pair.
 *   2. A pair met again while it is being judged (recursion through $ref) counts as compatible
 *      in a first pass; later passes (diff_schemas) give it what the pass before found, until
 *      the set of incompatible pairs is stable, as Confluent's fixpoint does.
 *   3. At most JSON_SCHEMA_PAIRS_MAX pairs and JSON_SCHEMA_COMPARE_DEPTH_MAX nested pairs:
 *      past either, the comparison records TOO_COMPLEX, an incompatible difference of our own,
 *      and `gave_up` makes the whole verdict a refusal with that reason.
 *   4. A difference list keeps at most JSON_SCHEMA_REASONS_MAX incompatible and as many
 *      compatible entries; `incompatible` is exact whatever was dropped. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/json_schema.h"

/* Message families of Confluent's Difference.error(). */
enum msg {
    M_NONE,
    M_KEYWORD,    /* a keyword added or removed */
    M_INCREASED,  /* a value increased */
    M_DECREASED,  /* a value decreased */
    M_CHANGED,    /* a value changed */
    M_NARROWED,   /* fewer elements */
    M_EXTENDED,   /* more elements */
    M_TYPE,       /* a type changed */
    M_ADDED_OPEN, /* a property or item added to an open content model */
    M_REQ_UNOPEN, /* a required property added to an unopen content model */
    M_REMOVED_CLOSED,
    M_REMOVED_NOT_COVERED,
    M_ADDED_NOT_COVERED,
    M_TOO_COMPLEX,
};

/* X(type, compatible under STRICT, message family) */
#define DIFF_TYPES(X)                                                                              \
    X(ID_CHANGED, 1, M_NONE)                                                                       \
    X(DESCRIPTION_CHANGED, 1, M_NONE)                                                              \
    X(TITLE_CHANGED, 1, M_NONE)                                                                    \
    X(DEFAULT_CHANGED, 1, M_NONE)                                                                  \
    X(SCHEMA_ADDED, 0, M_NONE)                                                                     \
    X(SCHEMA_REMOVED, 1, M_NONE)                                                                   \
    X(TYPE_EXTENDED, 1, M_NONE)                                                                    \
    X(TYPE_NARROWED, 0, M_TYPE)                                                                    \
    X(TYPE_CHANGED, 0, M_TYPE)                                                                     \
    X(MAX_LENGTH_ADDED, 0, M_KEYWORD)                                                              \
    X(MAX_LENGTH_REMOVED, 1, M_NONE)                                                               \
    X(MAX_LENGTH_INCREASED, 1, M_NONE)                                                             \
    X(MAX_LENGTH_DECREASED, 0, M_DECREASED)                                                        \
    X(MIN_LENGTH_ADDED, 0, M_KEYWORD)                                                              \
    X(MIN_LENGTH_REMOVED, 1, M_NONE)                                                               \
    X(MIN_LENGTH_INCREASED, 0, M_INCREASED)                                                        \
    X(MIN_LENGTH_DECREASED, 1, M_NONE)                                                             \
    X(PATTERN_ADDED, 0, M_KEYWORD)                                                                 \
    X(PATTERN_REMOVED, 1, M_NONE)                                                                  \
    X(PATTERN_CHANGED, 0, M_CHANGED)                                                               \
    X(MAXIMUM_ADDED, 0, M_KEYWORD)                                                                 \
    X(MAXIMUM_REMOVED, 1, M_NONE)                                                                  \
    X(MAXIMUM_INCREASED, 1, M_NONE)                                                                \
    X(MAXIMUM_DECREASED, 0, M_DECREASED)                                                           \
    X(MINIMUM_ADDED, 0, M_KEYWORD)                                                                 \
    X(MINIMUM_REMOVED, 1, M_NONE)                                                                  \
    X(MINIMUM_INCREASED, 0, M_INCREASED)                                                           \
    X(MINIMUM_DECREASED, 1, M_NONE)                                                                \
    X(EXCLUSIVE_MAXIMUM_ADDED, 0, M_KEYWORD)                                                       \
    X(EXCLUSIVE_MAXIMUM_REMOVED, 1, M_NONE)                                                        \
    X(EXCLUSIVE_MAXIMUM_INCREASED, 1, M_NONE)                                                      \
    X(EXCLUSIVE_MAXIMUM_DECREASED, 0, M_DECREASED)                                                 \
    X(EXCLUSIVE_MINIMUM_ADDED, 0, M_KEYWORD)                                                       \
    X(EXCLUSIVE_MINIMUM_REMOVED, 1, M_NONE)                                                        \
    X(EXCLUSIVE_MINIMUM_INCREASED, 0, M_INCREASED)                                                 \
    X(EXCLUSIVE_MINIMUM_DECREASED, 1, M_NONE)                                                      \
    X(MULTIPLE_OF_ADDED, 0, M_KEYWORD)                                                             \
    X(MULTIPLE_OF_REMOVED, 1, M_NONE)                                                              \
    X(MULTIPLE_OF_EXPANDED, 0, M_INCREASED)                                                        \
    X(MULTIPLE_OF_REDUCED, 1, M_NONE)                                                              \
    X(MULTIPLE_OF_CHANGED, 0, M_CHANGED)                                                           \
    X(REQUIRED_ATTRIBUTE_ADDED, 0, M_KEYWORD)                                                      \
    X(REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED, 1, M_NONE)                                            \
    X(REQUIRED_ATTRIBUTE_REMOVED, 1, M_NONE)                                                       \
    X(MAX_PROPERTIES_ADDED, 0, M_KEYWORD)                                                          \
    X(MAX_PROPERTIES_REMOVED, 1, M_NONE)                                                           \
    X(MAX_PROPERTIES_INCREASED, 1, M_NONE)                                                         \
    X(MAX_PROPERTIES_DECREASED, 0, M_DECREASED)                                                    \
    X(MIN_PROPERTIES_ADDED, 0, M_KEYWORD)                                                          \
    X(MIN_PROPERTIES_REMOVED, 1, M_NONE)                                                           \
    X(MIN_PROPERTIES_INCREASED, 0, M_INCREASED)                                                    \
    X(MIN_PROPERTIES_DECREASED, 1, M_NONE)                                                         \
    X(ADDITIONAL_PROPERTIES_ADDED, 1, M_NONE)                                                      \
    X(ADDITIONAL_PROPERTIES_REMOVED, 0, M_KEYWORD)                                                 \
    X(ADDITIONAL_PROPERTIES_EXTENDED, 1, M_NONE)                                                   \
    X(ADDITIONAL_PROPERTIES_NARROWED, 0, M_NARROWED)                                               \
    X(DEPENDENCY_ARRAY_ADDED, 0, M_KEYWORD)                                                        \
    X(DEPENDENCY_ARRAY_REMOVED, 1, M_NONE)                                                         \
    X(DEPENDENCY_ARRAY_EXTENDED, 0, M_EXTENDED)                                                    \
    X(DEPENDENCY_ARRAY_NARROWED, 1, M_NONE)                                                        \
    X(DEPENDENCY_ARRAY_CHANGED, 0, M_CHANGED)                                                      \
    X(DEPENDENCY_SCHEMA_ADDED, 0, M_KEYWORD)                                                       \
    X(DEPENDENCY_SCHEMA_REMOVED, 1, M_NONE)                                                        \
    X(REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL, 0, M_ADDED_OPEN)                              \
    X(REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL, 0, M_ADDED_OPEN)                 \
    X(OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL, 0, M_ADDED_OPEN)                              \
    X(PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL, 1, M_NONE)                           \
    X(REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL, 0, M_REQ_UNOPEN)                            \
    X(REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL, 1, M_NONE)                     \
    X(OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL, 1, M_NONE)                                  \
    X(PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL, 1, M_NONE)                                         \
    X(PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL, 1, M_NONE)                            \
    X(PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL, 0, M_REMOVED_CLOSED)                             \
    X(PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, 1, M_NONE)                      \
    X(PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, 0, M_REMOVED_NOT_COVERED)      \
    X(PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, 1, M_NONE)                        \
    X(PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, 0, M_ADDED_NOT_COVERED)          \
    X(UNEVALUATED_PROPERTIES_ADDED, 1, M_NONE)                                                     \
    X(UNEVALUATED_PROPERTIES_REMOVED, 0, M_KEYWORD)                                                \
    X(UNEVALUATED_PROPERTIES_EXTENDED, 1, M_NONE)                                                  \
    X(UNEVALUATED_PROPERTIES_NARROWED, 0, M_NARROWED)                                              \
    X(MAX_ITEMS_ADDED, 0, M_KEYWORD)                                                               \
    X(MAX_ITEMS_REMOVED, 1, M_NONE)                                                                \
    X(MAX_ITEMS_INCREASED, 1, M_NONE)                                                              \
    X(MAX_ITEMS_DECREASED, 0, M_DECREASED)                                                         \
    X(MIN_ITEMS_ADDED, 0, M_KEYWORD)                                                               \
    X(MIN_ITEMS_REMOVED, 1, M_NONE)                                                                \
    X(MIN_ITEMS_INCREASED, 0, M_INCREASED)                                                         \
    X(MIN_ITEMS_DECREASED, 1, M_NONE)                                                              \
    X(MAX_CONTAINS_ADDED, 0, M_KEYWORD)                                                            \
    X(MAX_CONTAINS_REMOVED, 1, M_NONE)                                                             \
    X(MAX_CONTAINS_INCREASED, 1, M_NONE)                                                           \
    X(MAX_CONTAINS_DECREASED, 0, M_DECREASED)                                                      \
    X(MIN_CONTAINS_ADDED, 0, M_KEYWORD)                                                            \
    X(MIN_CONTAINS_REMOVED, 1, M_NONE)                                                             \
    X(MIN_CONTAINS_INCREASED, 0, M_INCREASED)                                                      \
    X(MIN_CONTAINS_DECREASED, 1, M_NONE)                                                           \
    X(UNIQUE_ITEMS_ADDED, 0, M_KEYWORD)                                                            \
    X(UNIQUE_ITEMS_REMOVED, 1, M_NONE)                                                             \
    X(ADDITIONAL_ITEMS_ADDED, 1, M_NONE)                                                           \
    X(ADDITIONAL_ITEMS_REMOVED, 0, M_KEYWORD)                                                      \
    X(ADDITIONAL_ITEMS_EXTENDED, 1, M_NONE)                                                        \
    X(ADDITIONAL_ITEMS_NARROWED, 0, M_NARROWED)                                                    \
    X(UNEVALUATED_ITEMS_ADDED, 1, M_NONE)                                                          \
    X(UNEVALUATED_ITEMS_REMOVED, 0, M_KEYWORD)                                                     \
    X(UNEVALUATED_ITEMS_EXTENDED, 1, M_NONE)                                                       \
    X(UNEVALUATED_ITEMS_NARROWED, 0, M_NARROWED)                                                   \
    X(ITEM_ADDED_TO_OPEN_CONTENT_MODEL, 0, M_ADDED_OPEN)                                           \
    X(ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL, 1, M_NONE)                               \
    X(ITEM_ADDED_TO_CLOSED_CONTENT_MODEL, 1, M_NONE)                                               \
    X(ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL, 1, M_NONE)                                             \
    X(ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL, 1, M_NONE)                                \
    X(ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL, 0, M_REMOVED_CLOSED)                                 \
    X(ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, 1, M_NONE)                          \
    X(ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, 0, M_REMOVED_NOT_COVERED)          \
    X(ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, 1, M_NONE)                            \
    X(ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL, 0, M_ADDED_NOT_COVERED)              \
    X(ENUM_ARRAY_EXTENDED, 1, M_NONE)                                                              \
    X(ENUM_ARRAY_NARROWED, 0, M_NARROWED)                                                          \
    X(ENUM_ARRAY_CHANGED, 0, M_TYPE)                                                               \
    X(COMBINED_TYPE_EXTENDED, 1, M_NONE)                                                           \
    X(COMBINED_TYPE_CHANGED, 0, M_TYPE)                                                            \
    X(PRODUCT_TYPE_EXTENDED, 0, M_EXTENDED)                                                        \
    X(PRODUCT_TYPE_NARROWED, 1, M_NONE)                                                            \
    X(SUM_TYPE_EXTENDED, 1, M_EXTENDED)                                                            \
    X(SUM_TYPE_NARROWED, 0, M_NARROWED)                                                            \
    X(COMBINED_TYPE_SUBSCHEMAS_CHANGED, 0, M_TYPE)                                                 \
    X(NOT_TYPE_EXTENDED, 0, M_EXTENDED)                                                            \
    X(NOT_TYPE_NARROWED, 1, M_NONE)                                                                \
    X(TOO_COMPLEX, 0, M_TOO_COMPLEX)

enum dtype {
#define X(name, ok, msg) name,
    DIFF_TYPES(X)
#undef X
};

static const struct {
    const char *name;
    bool ok;
    enum msg msg;
} dtypes[] = {
#define X(name, ok, msg) {#name, ok, msg},
    DIFF_TYPES(X)
#undef X
};

/* ---- difference lists ---- */

struct diff {
    enum dtype type;
    char *path; /* relative to the pair: "" (the pair itself) or "properties/a/maxLength" */
};

struct dlist {
    struct diff *v;
    size_t n;
    size_t cap;
    size_t n_bad;      /* incompatible entries kept */
    bool incompatible; /* exact, whatever was dropped */
};

static void dlist_free(struct dlist *d)
{
    for (size_t i = 0; i < d->n; i++)
        mem_free(d->v[i].path);
    mem_free(d->v);
    *d = (struct dlist){0};
}

/* Appends type at prefix[/rel] (the path is built here, owned by the list). */
static void dlist_push(struct dlist *d, enum dtype type, const char *prefix, const char *rel)
{
    bool ok = dtypes[type].ok;
    if (!ok)
        d->incompatible = true;
    size_t kept_ok = d->n - d->n_bad;
    if (ok ? kept_ok >= JSON_SCHEMA_REASONS_MAX : d->n_bad >= JSON_SCHEMA_REASONS_MAX)
        return;
    size_t a = strlen(prefix), b = rel ? strlen(rel) : 0;
    char *p = mem_alloc(a + b + 2);
    memcpy(p, prefix, a);
    size_t k = a;
    if (b) {
        if (a)
            p[k++] = '/';
        memcpy(p + k, rel, b);
        k += b;
    }
    p[k] = '\0';
    MEM_GROW(d->v, d->cap, d->n + 1);
    d->v[d->n].type = type;
    d->v[d->n].path = p;
    d->n++;
    if (!ok)
        d->n_bad++;
}

/* Appends every entry of src rebased onto prefix. */
static void dlist_append(struct dlist *d, const struct dlist *src, const char *prefix)
{
    for (size_t i = 0; i < src->n; i++)
        dlist_push(d, src->v[i].type, prefix, src->v[i].path);
    if (src->incompatible)
        d->incompatible = true;
}

/* ---- the comparison's state ---- */

struct pair {
    const struct json_schema_node *o;
    const struct json_schema_node *u;
    bool done; /* else being judged */
    struct dlist diffs;
};

struct cmp {
    struct pair **slots; /* open addressing, cap a power of two */
    size_t n;
    size_t cap;
    int depth;
    bool gave_up;           /* a limit was met somewhere: the verdict is a refusal */
    bool optimistic;        /* a cycle was assumed compatible in this pass */
    const struct cmp *seed; /* the pairs an earlier pass found incompatible, or NULL */
};

static size_t pair_hash(const void *o, const void *u, size_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)o * 0x9E3779B97F4A7C15ull ^ (uint64_t)(uintptr_t)u;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    return (size_t)x & (cap - 1);
}

static struct pair *pair_find(const struct cmp *c, const struct json_schema_node *o,
                              const struct json_schema_node *u)
{
    if (c->cap == 0)
        return NULL;
    for (size_t i = pair_hash(o, u, c->cap);; i = (i + 1) & (c->cap - 1)) {
        struct pair *p = c->slots[i];
        if (!p)
            return NULL;
        if (p->o == o && p->u == u)
            return p;
    }
}

static struct pair *pair_add(struct cmp *c, const struct json_schema_node *o,
                             const struct json_schema_node *u)
{
    if (2 * (c->n + 1) > c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        struct pair **slots = mem_calloc(cap, sizeof(*slots));
        for (size_t i = 0; i < c->cap; i++) {
            struct pair *p = c->slots[i];
            if (!p)
                continue;
            size_t j = pair_hash(p->o, p->u, cap);
            while (slots[j])
                j = (j + 1) & (cap - 1);
            slots[j] = p;
        }
        mem_free(c->slots);
        c->slots = slots;
        c->cap = cap;
    }
    struct pair *p = mem_calloc(1, sizeof(*p));
    p->o = o;
    p->u = u;
    size_t j = pair_hash(o, u, c->cap);
    while (c->slots[j])
        j = (j + 1) & (c->cap - 1);
    c->slots[j] = p;
    c->n++;
    return p;
}

static void cmp_destroy(struct cmp *c)
{
    for (size_t i = 0; i < c->cap; i++) {
        if (c->slots[i]) {
            dlist_free(&c->slots[i]->diffs);
            mem_free(c->slots[i]);
        }
    }
    mem_free(c->slots);
}

/* ---- JSON values ---- */

/* The distinct values of an array, each as its normalized JSON text, sorted: Java's equality
 * of the values Everit keeps (a Set of them for enum) is, near enough, equality of that text
 * (1 and 1.0 differ, as Integer and BigDecimal do; member order does not matter). */
struct vset {
    char **v;
    size_t n;
};

static int cstr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *value_text(const struct json_value *v)
{
    struct strbuf b;
    strbuf_init(&b);
    json_schema_write_json(&b, v, true);
    char *t = mem_strdup(strbuf_str(&b));
    strbuf_destroy(&b);
    return t;
}

static void vset_init(struct vset *s, const struct json_value *arr)
{
    s->v = mem_alloc((arr->n + 1) * sizeof(*s->v));
    s->n = 0;
    for (const struct json_value *x = arr->child; x; x = x->next)
        s->v[s->n++] = value_text(x);
    qsort(s->v, s->n, sizeof(*s->v), cstr_cmp);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (k && strcmp(s->v[k - 1], s->v[i]) == 0)
            mem_free(s->v[i]);
        else
            s->v[k++] = s->v[i];
    }
    s->n = k;
}

static void vset_free(struct vset *s)
{
    for (size_t i = 0; i < s->n; i++)
        mem_free(s->v[i]);
    mem_free(s->v);
}

/* Every value of a is in b. */
static bool vset_contains_all(const struct vset *b, const struct vset *a)
{
    size_t j = 0;
    for (size_t i = 0; i < a->n; i++) {
        while (j < b->n && strcmp(b->v[j], a->v[i]) < 0)
            j++;
        if (j == b->n || strcmp(b->v[j], a->v[i]) != 0)
            return false;
    }
    return true;
}

/* How the array u relates to the array o as sets: 0 equal, 1 u has more, 2 u has fewer, 3
 * neither holds the other. */
static int set_relation(const struct json_value *o, const struct json_value *u)
{
    struct vset a, b;
    vset_init(&a, o);
    vset_init(&b, u);
    bool up = vset_contains_all(&b, &a), down = vset_contains_all(&a, &b);
    vset_free(&a);
    vset_free(&b);
    return up && down ? 0 : up ? 1 : down ? 2 : 3;
}

/* a and b (either may be NULL: absent) are the same value, as above. */
static bool same_value(const struct json_value *a, const struct json_value *b)
{
    if (!a || !b)
        return a == b;
    char *x = value_text(a), *y = value_text(b);
    bool same = strcmp(x, y) == 0;
    mem_free(x);
    mem_free(y);
    return same;
}

static int name_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int rc = memcmp(a, b, al < bl ? al : bl);
    return rc ? rc : (al > bl) - (al < bl);
}

/* Whether the required array (sorted strings) of n names name[0, len). */
static bool names_contain(const struct json_schema_node *n, const char *name, size_t len)
{
    size_t lo = 0, hi = n->n_required;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct json_value *v = n->required_by_name[mid];
        int rc = name_cmp(v->str, v->str_len, name, len);
        if (rc == 0)
            return true;
        if (rc < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* ---- the walk ---- */

static size_t enter(struct strbuf *p, const char *seg, size_t len)
{
    size_t mark = p->len;
    if (p->len)
        strbuf_putc(p, '/');
    strbuf_append(p, seg, len);
    return mark;
}

static size_t enter_s(struct strbuf *p, const char *seg)
{
    return enter(p, seg, strlen(seg));
}

static void leave(struct strbuf *p, size_t mark)
{
    p->len = mark;
    if (p->p)
        p->p[mark] = '\0';
}

static void add(struct dlist *d, const struct strbuf *p, enum dtype t, const char *attr)
{
    dlist_push(d, t, strbuf_str(p), attr);
}

static void compare(struct cmp *c, const struct json_schema_node *o,
                    const struct json_schema_node *u, struct dlist *out, struct strbuf *path);

/* compare() into a list of its own, paths as in out; true when compatible. */
static bool trial(struct cmp *c, const struct json_schema_node *o, const struct json_schema_node *u,
                  struct dlist *tmp, struct strbuf *path)
{
    *tmp = (struct dlist){0};
    compare(c, o, u, tmp, path);
    return !tmp->incompatible;
}

static bool empty_kind(const struct json_schema_node *n)
{
    return n && (n->kind == JSK_EMPTY || n->kind == JSK_TRUE);
}

static bool false_kind(const struct json_schema_node *n)
{
    return n && n->kind == JSK_FALSE;
}

static void compare_count(struct dlist *d, struct strbuf *p, const char *attr, int64_t o, int64_t u,
                          enum dtype added)
{
    /* added, removed, increased, decreased follow each other in the table */
    if (o == u)
        return;
    if (o < 0)
        add(d, p, added, attr);
    else if (u < 0)
        add(d, p, added + 1, attr);
    else
        add(d, p, o < u ? added + 2 : added + 3, attr);
}

static void compare_limit(struct dlist *d, struct strbuf *p, const char *attr,
                          const struct json_schema_num *o, const struct json_schema_num *u,
                          enum dtype added)
{
    if (!o->present && !u->present)
        return;
    if (!o->present)
        add(d, p, added, attr);
    else if (!u->present)
        add(d, p, added + 1, attr);
    else if (o->value < u->value)
        add(d, p, added + 2, attr);
    else if (o->value > u->value)
        add(d, p, added + 3, attr);
}

/* A number literal as m * 10^e with m exact, or false when it does not fit. */
static bool decimal_of(const char *s, __int128 *m, int *e)
{
    __int128 v = 0;
    int exp = 0, digits = 0;
    bool neg = *s == '-', frac = false;
    if (neg)
        s++;
    for (; *s; s++) {
        if (*s == '.') {
            frac = true;
            continue;
        }
        if (*s == 'e' || *s == 'E') {
            long x = strtol(s + 1, NULL, 10);
            if (x > 300 || x < -300)
                return false;
            exp += (int)x;
            break;
        }
        if (v != 0 || *s != '0')
            digits++;
        if (digits > 30)
            return false;
        v = v * 10 + (*s - '0');
        if (frac)
            exp--;
    }
    *m = neg ? -v : v;
    *e = exp;
    return true;
}

/* a is a whole multiple of b (b != 0), as BigDecimal.remainder() == 0. */
static bool multiple(const char *a, const char *b, double av, double bv)
{
    __int128 ma, mb;
    int ea, eb;
    if (decimal_of(a, &ma, &ea) && decimal_of(b, &mb, &eb) && mb != 0) {
        int e = ea < eb ? ea : eb;
        bool fits = ea - e <= 8 && eb - e <= 8;
        for (int i = 0; fits && i < ea - e; i++)
            ma *= 10;
        for (int i = 0; fits && i < eb - e; i++)
            mb *= 10;
        if (fits)
            return ma % mb == 0;
    }
    double r = fmod(av, bv);
    return r == 0;
}

static void compare_number(struct dlist *d, struct strbuf *p, const struct json_schema_node *o,
                           const struct json_schema_node *u)
{
    compare_limit(d, p, "maximum", &o->maximum, &u->maximum, MAXIMUM_ADDED);
    compare_limit(d, p, "minimum", &o->minimum, &u->minimum, MINIMUM_ADDED);
    compare_limit(d, p, "exclusiveMaximum", &o->exclusive_maximum, &u->exclusive_maximum,
                  EXCLUSIVE_MAXIMUM_ADDED);
    compare_limit(d, p, "exclusiveMinimum", &o->exclusive_minimum, &u->exclusive_minimum,
                  EXCLUSIVE_MINIMUM_ADDED);
    const struct json_schema_num *om = &o->multiple_of, *um = &u->multiple_of;
    if (om->present || um->present) {
        bool equal = om->present && um->present &&
                     multiple(om->text, um->text, om->value, um->value) &&
                     multiple(um->text, om->text, um->value, om->value);
        if (equal)
            ;
        else if (!om->present)
            add(d, p, MULTIPLE_OF_ADDED, "multipleOf");
        else if (!um->present)
            add(d, p, MULTIPLE_OF_REMOVED, "multipleOf");
        else if (multiple(um->text, om->text, um->value, om->value))
            add(d, p, MULTIPLE_OF_EXPANDED, "multipleOf");
        else if (multiple(om->text, um->text, om->value, um->value))
            add(d, p, MULTIPLE_OF_REDUCED, "multipleOf");
        else
            add(d, p, MULTIPLE_OF_CHANGED, "multipleOf");
    }
    if (o->requires_integer != u->requires_integer)
        add(d, p, o->requires_integer ? TYPE_EXTENDED : TYPE_NARROWED, NULL);
}

static void compare_string(struct dlist *d, struct strbuf *p, const struct json_schema_node *o,
                           const struct json_schema_node *u)
{
    compare_count(d, p, "maxLength", o->max_length, u->max_length, MAX_LENGTH_ADDED);
    compare_count(d, p, "minLength", o->min_length, u->min_length, MIN_LENGTH_ADDED);
    if (!o->pattern && u->pattern)
        add(d, p, PATTERN_ADDED, "pattern");
    else if (o->pattern && !u->pattern)
        add(d, p, PATTERN_REMOVED, "pattern");
    else if (o->pattern && strcmp(o->pattern, u->pattern) != 0)
        add(d, p, PATTERN_CHANGED, "pattern");
}

static void compare_enum(struct dlist *d, struct strbuf *p, const struct json_value *o,
                         const struct json_value *u)
{
    static const enum dtype types[] = {ENUM_ARRAY_EXTENDED, ENUM_ARRAY_EXTENDED,
                                       ENUM_ARRAY_NARROWED, ENUM_ARRAY_CHANGED};
    int rel = set_relation(o, u);
    if (rel != 0)
        add(d, p, types[rel], "enum");
}

/* ---- objects ---- */

static const struct json_schema_node *prop_of(const struct json_schema_node *n, const char *name,
                                              size_t len)
{
    size_t lo = 0, hi = n->n_props;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct json_schema_prop *q = &n->props_by_name[mid];
        int rc = name_cmp(q->name, q->name_len, name, len);
        if (rc == 0)
            return q->schema;
        if (rc < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The differences of a property or item judged against a partially open content model's
 * schema, then whether that schema covers it (yes) or not (no). */
static void covered(struct cmp *c, struct dlist *d, struct strbuf *p,
                    const struct json_schema_node *o, const struct json_schema_node *u,
                    enum dtype yes, enum dtype no)
{
    struct dlist tmp;
    bool ok = trial(c, o, u, &tmp, p);
    dlist_append(d, &tmp, "");
    dlist_free(&tmp);
    add(d, p, ok ? yes : no, NULL);
}

static bool open_unevaluated(const struct json_schema_node *n)
{
    return !n->unevaluated || empty_kind(n->unevaluated);
}

static bool object_open(const struct json_schema_node *n)
{
    return n->additional_permitted && !n->additional && n->n_pattern_props == 0 &&
           open_unevaluated(n);
}

#define PATTERNS_JUDGED_MAX 64 /* patternProperties looked at per property (a bound on work) */

/* Whether a patternProperties regex finds a match in name. Only patterns of literal
 * characters with an optional ^ and $ are judged; any other pattern is taken as no match
 * (this model has no regex engine). */
static bool pattern_finds(const char *pat, const char *name, size_t len)
{
    size_t pl = strlen(pat);
    bool head = pl && pat[0] == '^', tail = pl > (size_t)head && pat[pl - 1] == '$';
    const char *lit = pat + head;
    size_t ll = pl - head - tail;
    if (strcspn(lit, "\\.[]()*+?{}|^$") < ll)
        return false;
    if (ll > len)
        return false;
    for (size_t at = 0; at + ll <= len; at++) {
        if ((head && at > 0) || (tail && at + ll != len))
            continue;
        if (memcmp(name + at, lit, ll) == 0)
            return true;
    }
    return false;
}

static const struct json_schema_node *object_partial(const struct json_schema_node *n,
                                                     const char *name, size_t len)
{
    for (size_t i = 0; i < n->n_pattern_props && i < PATTERNS_JUDGED_MAX; i++)
        if (pattern_finds(n->pattern_props[i].name, name, len))
            return n->pattern_props[i].schema;
    if (n->additional)
        return n->additional;
    if (n->additional_permitted && n->unevaluated && !false_kind(n->unevaluated) &&
        !empty_kind(n->unevaluated))
        return n->unevaluated;
    return NULL;
}

static void compare_required(struct dlist *d, struct strbuf *p, const struct json_schema_node *o,
                             const struct json_schema_node *u)
{
    size_t m = enter_s(p, "required");
    for (size_t i = 0; i < o->n_props; i++) {
        const struct json_schema_prop *op = &o->props[i];
        const struct json_schema_node *us = prop_of(u, op->name, op->name_len);
        if (!us)
            continue;
        bool was = names_contain(o, op->name, op->name_len);
        bool is = names_contain(u, op->name, op->name_len);
        size_t m2 = enter(p, op->name, op->name_len);
        if (was && !is)
            add(d, p, REQUIRED_ATTRIBUTE_REMOVED, NULL);
        else if (!was && is)
            add(d, p, us->def ? REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED : REQUIRED_ATTRIBUTE_ADDED,
                NULL);
        leave(p, m2);
    }
    leave(p, m);
}

static void property_removed(struct cmp *c, struct dlist *d, struct strbuf *p,
                             const struct json_schema_node *u, const struct json_schema_prop *op)
{
    if (object_open(u)) {
        add(d, p, PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL, NULL);
        return;
    }
    const struct json_schema_node *partial = object_partial(u, op->name, op->name_len);
    if (partial) {
        covered(c, d, p, op->schema, partial,
                PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL);
    } else {
        add(d, p,
            false_kind(op->schema) ? PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
                                   : PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL,
            NULL);
    }
}

static void property_added(struct cmp *c, struct dlist *d, struct strbuf *p,
                           const struct json_schema_node *o, const struct json_schema_node *u,
                           const struct json_schema_prop *up)
{
    bool required = names_contain(u, up->name, up->name_len);
    if (object_open(o)) {
        if (empty_kind(up->schema))
            add(d, p, PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL, NULL);
        else if (required)
            add(d, p,
                up->schema->def ? REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL
                                : REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL,
                NULL);
        else
            add(d, p, OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL, NULL);
        return;
    }
    const struct json_schema_node *partial = object_partial(o, up->name, up->name_len);
    if (partial) {
        covered(c, d, p, partial, up->schema,
                PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL);
    }
    if (required)
        add(d, p,
            up->schema->def ? REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL
                            : REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL,
            NULL);
    else
        add(d, p, OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL, NULL);
}

static void compare_properties(struct cmp *c, struct dlist *d, struct strbuf *p,
                               const struct json_schema_node *o, const struct json_schema_node *u)
{
    size_t m = enter_s(p, "properties");
    for (size_t i = 0; i < o->n_props; i++) {
        const struct json_schema_prop *op = &o->props[i];
        const struct json_schema_node *us = prop_of(u, op->name, op->name_len);
        size_t m2 = enter(p, op->name, op->name_len);
        if (us)
            compare(c, op->schema, us, d, p);
        else
            property_removed(c, d, p, u, op);
        leave(p, m2);
    }
    for (size_t i = 0; i < u->n_props; i++) {
        const struct json_schema_prop *up = &u->props[i];
        if (prop_of(o, up->name, up->name_len))
            continue;
        size_t m2 = enter(p, up->name, up->name_len);
        property_added(c, d, p, o, u, up);
        leave(p, m2);
    }
    leave(p, m);
}

static const struct json_schema_dep *dep_of(const struct json_schema_node *n, const char *name,
                                            size_t len, bool schema)
{
    size_t lo = 0, hi = n->n_deps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct json_schema_dep *q = &n->deps[mid];
        if (name_cmp(q->name, q->name_len, name, len) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n->n_deps && name_cmp(n->deps[lo].name, n->deps[lo].name_len, name, len) == 0; lo++)
        if ((n->deps[lo].schema != NULL) == schema)
            return &n->deps[lo];
    return NULL;
}

static void compare_dependencies(struct cmp *c, struct dlist *d, struct strbuf *p,
                                 const struct json_schema_node *o, const struct json_schema_node *u)
{
    size_t m = enter_s(p, "dependencies");
    for (int schema = 0; schema < 2; schema++) {
        for (int side = 0; side < 2; side++) {
            const struct json_schema_node *a = side ? u : o, *b = side ? o : u;
            for (size_t i = 0; i < a->n_deps; i++) {
                const struct json_schema_dep *ad = &a->deps[i];
                if ((ad->schema != NULL) != schema)
                    continue;
                const struct json_schema_dep *bd = dep_of(b, ad->name, ad->name_len, schema);
                if (side && bd)
                    continue; /* judged from the original's side */
                size_t m2 = enter(p, ad->name, ad->name_len);
                if (!bd) {
                    enum dtype t =
                        schema ? (side ? DEPENDENCY_SCHEMA_ADDED : DEPENDENCY_SCHEMA_REMOVED)
                               : (side ? DEPENDENCY_ARRAY_ADDED : DEPENDENCY_ARRAY_REMOVED);
                    add(d, p, t, NULL);
                } else if (schema) {
                    compare(c, ad->schema, bd->schema, d, p);
                } else {
                    static const enum dtype types[] = {
                        DEPENDENCY_ARRAY_EXTENDED, DEPENDENCY_ARRAY_EXTENDED,
                        DEPENDENCY_ARRAY_NARROWED, DEPENDENCY_ARRAY_CHANGED};
                    int rel = set_relation(ad->names, bd->names);
                    if (rel != 0)
                        add(d, p, types[rel], NULL);
                }
                leave(p, m2);
            }
        }
    }
    leave(p, m);
}

/* additionalProperties or additionalItems: (permitted, schema) pairs. */
static void compare_additional(struct cmp *c, struct dlist *d, struct strbuf *p, const char *key,
                               bool op, const struct json_schema_node *os, bool up,
                               const struct json_schema_node *us, enum dtype added,
                               enum dtype removed, enum dtype extended, enum dtype narrowed)
{
    size_t m = enter_s(p, key);
    if (op != up)
        add(d, p, up ? added : removed, NULL);
    else if (!os && us)
        add(d, p, narrowed, NULL);
    else if (os && !us)
        add(d, p, extended, NULL);
    else if (os && us)
        compare(c, os, us, d, p);
    leave(p, m);
}

/* unevaluatedProperties or unevaluatedItems. */
static void compare_unevaluated(struct cmp *c, struct dlist *d, struct strbuf *p, const char *key,
                                const struct json_schema_node *o, const struct json_schema_node *u,
                                enum dtype added)
{
    enum dtype removed = added + 1, extended = added + 2, narrowed = added + 3;
    if (!o && !u)
        return;
    size_t m = enter_s(p, key);
    if (!o)
        add(d, p, false_kind(u) ? removed : narrowed, NULL);
    else if (!u)
        add(d, p, false_kind(o) ? added : extended, NULL);
    else if (false_kind(o) && !false_kind(u))
        add(d, p, added, NULL);
    else if (!false_kind(o) && false_kind(u))
        add(d, p, removed, NULL);
    else if (empty_kind(o) && !empty_kind(u))
        add(d, p, narrowed, NULL);
    else if (!empty_kind(o) && empty_kind(u))
        add(d, p, extended, NULL);
    else
        compare(c, o, u, d, p);
    leave(p, m);
}

static void compare_object(struct cmp *c, struct dlist *d, struct strbuf *p,
                           const struct json_schema_node *o, const struct json_schema_node *u)
{
    compare_required(d, p, o, u);
    compare_properties(c, d, p, o, u);
    compare_dependencies(c, d, p, o, u);
    compare_additional(c, d, p, "additionalProperties", o->additional_permitted, o->additional,
                       u->additional_permitted, u->additional, ADDITIONAL_PROPERTIES_ADDED,
                       ADDITIONAL_PROPERTIES_REMOVED, ADDITIONAL_PROPERTIES_EXTENDED,
                       ADDITIONAL_PROPERTIES_NARROWED);
    compare_unevaluated(c, d, p, "unevaluatedProperties", o->unevaluated, u->unevaluated,
                        UNEVALUATED_PROPERTIES_ADDED);
    compare_count(d, p, "maxProperties", o->max_properties, u->max_properties,
                  MAX_PROPERTIES_ADDED);
    compare_count(d, p, "minProperties", o->min_properties, u->min_properties,
                  MIN_PROPERTIES_ADDED);
}

/* ---- arrays ---- */

static bool array_open(const struct json_schema_node *n)
{
    return n->additional_items_permitted && !n->additional_items && open_unevaluated(n);
}

static const struct json_schema_node *array_partial(const struct json_schema_node *n)
{
    if (n->additional_items)
        return n->additional_items;
    if (n->additional_items_permitted && n->unevaluated && !false_kind(n->unevaluated) &&
        !empty_kind(n->unevaluated))
        return n->unevaluated;
    return NULL;
}

static void item_removed(struct cmp *c, struct dlist *d, struct strbuf *p,
                         const struct json_schema_node *os, const struct json_schema_node *u)
{
    if (array_open(u)) {
        add(d, p, ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL, NULL);
        return;
    }
    const struct json_schema_node *partial = array_partial(u);
    if (partial) {
        covered(c, d, p, os, partial, ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL);
    } else {
        add(d, p,
            false_kind(os) ? ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
                           : ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL,
            NULL);
    }
}

static void item_added(struct cmp *c, struct dlist *d, struct strbuf *p,
                       const struct json_schema_node *o, const struct json_schema_node *us)
{
    if (array_open(o)) {
        add(d, p,
            empty_kind(us) ? ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
                           : ITEM_ADDED_TO_OPEN_CONTENT_MODEL,
            NULL);
        return;
    }
    const struct json_schema_node *partial = array_partial(o);
    if (partial) {
        covered(c, d, p, partial, us, ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
                ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL);
    } else {
        add(d, p, ITEM_ADDED_TO_CLOSED_CONTENT_MODEL, NULL);
    }
}

static void compare_array(struct cmp *c, struct dlist *d, struct strbuf *p,
                          const struct json_schema_node *o, const struct json_schema_node *u)
{
    size_t m = enter_s(p, "items");
    compare(c, o->items, u->items, d, p);
    leave(p, m);
    size_t n = o->n_item_list > u->n_item_list ? o->n_item_list : u->n_item_list;
    for (size_t i = 0; i < n; i++) {
        m = enter_s(p, "items");
        strbuf_printf(p, "/%zu", i);
        if (i < o->n_item_list && i < u->n_item_list)
            compare(c, o->item_list[i], u->item_list[i], d, p);
        else if (i < o->n_item_list)
            item_removed(c, d, p, o->item_list[i], u);
        else
            item_added(c, d, p, o, u->item_list[i]);
        leave(p, m);
    }
    compare_additional(c, d, p, "additionalItems", o->additional_items_permitted,
                       o->additional_items, u->additional_items_permitted, u->additional_items,
                       ADDITIONAL_ITEMS_ADDED, ADDITIONAL_ITEMS_REMOVED, ADDITIONAL_ITEMS_EXTENDED,
                       ADDITIONAL_ITEMS_NARROWED);
    compare_unevaluated(c, d, p, "unevaluatedItems", o->unevaluated, u->unevaluated,
                        UNEVALUATED_ITEMS_ADDED);
    compare_count(d, p, "maxItems", o->max_items, u->max_items, MAX_ITEMS_ADDED);
    compare_count(d, p, "minItems", o->min_items, u->min_items, MIN_ITEMS_ADDED);
    if (o->unique_items != u->unique_items)
        add(d, p, o->unique_items ? UNIQUE_ITEMS_REMOVED : UNIQUE_ITEMS_ADDED, "uniqueItems");
    compare_count(d, p, "maxContains", o->max_contains, u->max_contains, MAX_CONTAINS_ADDED);
    compare_count(d, p, "minContains", o->min_contains, u->min_contains, MIN_CONTAINS_ADDED);
}

/* ---- combined schemas ---- */

static const char *criterion_name(enum json_schema_criterion c)
{
    return c == JSC_ALL ? "allOf" : c == JSC_ANY ? "anyOf" : "oneOf";
}

/* The distinct branches of n into out (room for n->n_subs), as Confluent's set of JsonSchema
 * collapses them: the same kind from the same JSON text. */
static size_t distinct(const struct json_schema_node *n, const struct json_schema_node **out)
{
    char **text = mem_alloc(n->n_subs * sizeof(*text));
    size_t k = 0;
    for (size_t i = 0; i < n->n_subs; i++) {
        const struct json_schema_node *b = n->subs[i];
        char *t = value_text(b->json);
        size_t j = 0;
        while (j < k &&
               !(out[j]->kind == b->kind && out[j]->requires_integer == b->requires_integer &&
                 strcmp(text[j], t) == 0))
            j++;
        if (j == k) {
            text[k] = t;
            out[k++] = b;
        } else {
            mem_free(t);
        }
    }
    for (size_t i = 0; i < k; i++)
        mem_free(text[i]);
    mem_free(text);
    return k;
}

struct matching {
    size_t no, nu;
    struct dlist *edge; /* no * nu: the pair's differences */
    bool *ok;           /* no * nu: compatible */
    long *match_u;      /* per update branch: the original branch matched, or -1 */
    bool *seen;
};

static bool augment(struct matching *mt, size_t i)
{
    for (size_t j = 0; j < mt->nu; j++) {
        if (!mt->ok[i * mt->nu + j] || mt->seen[j])
            continue;
        mt->seen[j] = true;
        if (mt->match_u[j] < 0 || augment(mt, (size_t)mt->match_u[j])) {
            mt->match_u[j] = (long)i;
            return true;
        }
    }
    return false;
}

static void compare_combined(struct cmp *c, struct dlist *d, struct strbuf *p,
                             const struct json_schema_node *o, const struct json_schema_node *u)
{
    if (o->criterion != u->criterion) {
        bool so = o->n_subs == 1, su = u->n_subs == 1;
        if (u->criterion == JSC_ANY || (so && su) || (so && u->criterion == JSC_ONE) ||
            (su && o->criterion == JSC_ALL)) {
            add(d, p, COMBINED_TYPE_EXTENDED, NULL);
        } else {
            add(d, p, COMBINED_TYPE_CHANGED, NULL);
            return;
        }
    }
    if (o->n_subs * u->n_subs > JSON_SCHEMA_PAIRS_MAX) {
        c->gave_up = true;
        add(d, p, TOO_COMPLEX, NULL);
        return;
    }
    const struct json_schema_node **os = mem_alloc(o->n_subs * sizeof(*os));
    const struct json_schema_node **us = mem_alloc(u->n_subs * sizeof(*us));
    struct matching mt = {.no = distinct(o, os), .nu = distinct(u, us)};
    if (mt.no < mt.nu)
        add(d, p, u->criterion == JSC_ALL ? PRODUCT_TYPE_EXTENDED : SUM_TYPE_EXTENDED, NULL);
    else if (mt.no > mt.nu)
        add(d, p, o->criterion == JSC_ALL ? PRODUCT_TYPE_NARROWED : SUM_TYPE_NARROWED, NULL);
    mt.edge = mem_calloc(mt.no * mt.nu, sizeof(*mt.edge));
    mt.ok = mem_calloc(mt.no * mt.nu, sizeof(*mt.ok));
    mt.match_u = mem_alloc((mt.nu + 1) * sizeof(*mt.match_u));
    mt.seen = mem_alloc(mt.nu + 1);
    for (size_t i = 0; i < mt.no; i++) {
        size_t m = enter_s(p, criterion_name(o->criterion));
        strbuf_printf(p, "/%zu", i);
        for (size_t j = 0; j < mt.nu; j++)
            mt.ok[i * mt.nu + j] = trial(c, os[i], us[j], &mt.edge[i * mt.nu + j], p);
        leave(p, m);
    }
    for (size_t j = 0; j < mt.nu; j++)
        mt.match_u[j] = -1;
    size_t matched = 0;
    for (size_t i = 0; i < mt.no; i++) {
        memset(mt.seen, 0, mt.nu);
        matched += augment(&mt, i);
    }
    for (size_t j = 0; j < mt.nu; j++)
        if (mt.match_u[j] >= 0)
            dlist_append(d, &mt.edge[(size_t)mt.match_u[j] * mt.nu + j], "");
    if (matched < (mt.no < mt.nu ? mt.no : mt.nu))
        add(d, p, COMBINED_TYPE_SUBSCHEMAS_CHANGED, NULL);
    for (size_t k = 0; k < mt.no * mt.nu; k++)
        dlist_free(&mt.edge[k]);
    mem_free(mt.edge);
    mem_free(mt.ok);
    mem_free(mt.match_u);
    mem_free(mt.seen);
    mem_free(os);
    mem_free(us);
}

/* ---- one pair ---- */

static bool bytes_type(const struct json_schema_node *n)
{
    return n->connect_type && strcmp(n->connect_type, "bytes") == 0;
}

/* A plain schema against the branches of a combined one: the first branch it is compatible
 * with (original plain, update combined when plain_is_original; else the other way round)
 * gives its differences, marked SUM_TYPE_EXTENDED or PRODUCT_TYPE_NARROWED unless the
 * combined schema has one branch only. False when no branch is compatible. */
static bool into_branch(struct cmp *c, const struct json_schema_node *plain,
                        const struct json_schema_node *comb, bool plain_is_original,
                        struct dlist *d, struct strbuf *p)
{
    for (size_t i = 0; i < comb->n_subs; i++) {
        struct dlist tmp;
        bool ok = plain_is_original ? trial(c, plain, comb->subs[i], &tmp, p)
                                    : trial(c, comb->subs[i], plain, &tmp, p);
        if (ok) {
            dlist_append(d, &tmp, "");
            if (comb->n_subs > 1)
                add(d, p, plain_is_original ? SUM_TYPE_EXTENDED : PRODUCT_TYPE_NARROWED, NULL);
        }
        dlist_free(&tmp);
        if (ok)
            return true;
    }
    return false;
}

/* SchemaDiff.compareTypes: differences relative to the pair (path starts empty). */
static void compare_types(struct cmp *c, const struct json_schema_node *o,
                          const struct json_schema_node *u, struct dlist *d, struct strbuf *p)
{
    bool oc = o->kind == JSK_COMBINED, uc = u->kind == JSK_COMBINED;
    if (!oc && uc && (u->n_subs == 1 || u->criterion != JSC_ALL) &&
        into_branch(c, o, u, true, d, p))
        return;
    if (oc && !uc && (o->n_subs == 1 || o->criterion == JSC_ALL) &&
        into_branch(c, u, o, false, d, p))
        return;
    if (o->kind != u->kind) {
        if (o->kind == JSK_FALSE || empty_kind(u) || (bytes_type(o) && bytes_type(u)))
            return;
        add(d, p, TYPE_CHANGED, NULL);
        return;
    }
    if (!same_value(o->id, u->id))
        add(d, p, ID_CHANGED, NULL);
    if (!same_value(o->title, u->title))
        add(d, p, TITLE_CHANGED, NULL);
    if (!same_value(o->description, u->description))
        add(d, p, DESCRIPTION_CHANGED, NULL);
    if (!same_value(o->def, u->def))
        add(d, p, DEFAULT_CHANGED, NULL);
    switch (o->kind) {
    case JSK_STRING:
        compare_string(d, p, o, u);
        break;
    case JSK_NUMBER:
        compare_number(d, p, o, u);
        break;
    case JSK_CONST:
        if (!same_value(o->value, u->value))
            add(d, p, ENUM_ARRAY_CHANGED, "const");
        break;
    case JSK_ENUM:
        compare_enum(d, p, o->values, u->values);
        break;
    case JSK_COMBINED:
        compare_combined(c, d, p, o, u);
        break;
    case JSK_NOT: {
        struct dlist tmp;
        size_t m = enter_s(p, "not");
        bool ok = trial(c, u->not_schema, o->not_schema, &tmp, p);
        dlist_free(&tmp);
        add(d, p, ok ? NOT_TYPE_NARROWED : NOT_TYPE_EXTENDED, NULL);
        leave(p, m);
        break;
    }
    case JSK_OBJECT:
        compare_object(c, d, p, o, u);
        break;
    case JSK_ARRAY:
        compare_array(c, d, p, o, u);
        break;
    default:
        break;
    }
}

/* SchemaDiff.compare: the pair's differences (memoized) appended to out at path. */
static void compare(struct cmp *c, const struct json_schema_node *o,
                    const struct json_schema_node *u, struct dlist *out, struct strbuf *path)
{
    if (!o && !u)
        return;
    if (!o || !u) {
        add(out, path, o ? SCHEMA_REMOVED : SCHEMA_ADDED, NULL);
        return;
    }
    if (o->kind == JSK_REF)
        o = o->target;
    if (u->kind == JSK_REF)
        u = u->target;
    if (o == u)
        return; /* a node against itself: no difference that matters */
    struct pair *pr = pair_find(c, o, u);
    if (pr && !pr->done) {
        /* A cycle: what an earlier pass found for the pair, else assumed compatible. */
        const struct pair *known = c->seed ? pair_find(c->seed, o, u) : NULL;
        if (known)
            dlist_append(out, &known->diffs, strbuf_str(path));
        else
            c->optimistic = true;
        return;
    }
    if (!pr) {
        if (c->n >= JSON_SCHEMA_PAIRS_MAX || c->depth >= JSON_SCHEMA_COMPARE_DEPTH_MAX) {
            c->gave_up = true;
            add(out, path, TOO_COMPLEX, NULL);
            return;
        }
        pr = pair_add(c, o, u);
        struct strbuf rel;
        strbuf_init(&rel);
        struct dlist d = {0};
        c->depth++;
        compare_types(c, o, u, &d, &rel);
        c->depth--;
        strbuf_destroy(&rel);
        pr->diffs = d;
        pr->done = true;
    }
    dlist_append(out, &pr->diffs, strbuf_str(path));
}

/* ---- entry points ---- */

static void describe(struct strbuf *b, const struct diff *df, const char *r, const char *w)
{
    const char *path = df->path;
    const char *sep = "#/";
    switch (dtypes[df->type].msg) {
    case M_KEYWORD:
        strbuf_printf(b,
                      "The keyword at path '%s%s' in the %s schema is not present in the %s schema",
                      sep, path, r, w);
        break;
    case M_INCREASED:
        strbuf_printf(
            b, "The value at path '%s%s' in the %s schema is more than its value in the %s schema",
            sep, path, r, w);
        break;
    case M_DECREASED:
        strbuf_printf(
            b, "The value at path '%s%s' in the %s schema is less than its value in the %s schema",
            sep, path, r, w);
        break;
    case M_CHANGED:
        strbuf_printf(b, "The value at path '%s%s' is different between the %s and %s schema", sep,
                      path, r, w);
        break;
    case M_NARROWED:
        strbuf_printf(b,
                      "An array or combined type at path '%s%s' has fewer elements in the %s "
                      "schema than the %s schema",
                      sep, path, r, w);
        break;
    case M_EXTENDED:
        strbuf_printf(b,
                      "An array or combined type at path '%s%s' has more elements in the %s schema "
                      "than the %s schema",
                      sep, path, r, w);
        break;
    case M_TYPE:
        strbuf_printf(b,
                      "A type at path '%s%s' is different between the %s schema and the %s schema",
                      sep, path, r, w);
        break;
    case M_ADDED_OPEN:
        strbuf_printf(b,
                      "The %s schema has an open content model and has a property or item at path "
                      "'%s%s' which is missing in the %s schema",
                      r, sep, path, w);
        break;
    case M_REQ_UNOPEN:
        strbuf_printf(b,
                      "The %s schema has an unopen content model and has a required property at "
                      "path '%s%s' which is missing in the %s schema",
                      r, sep, path, w);
        break;
    case M_REMOVED_CLOSED:
        strbuf_printf(b,
                      "The %s has a closed content model and is missing a property or item present "
                      "at path '%s%s' in the %s schema",
                      r, sep, path, w);
        break;
    case M_REMOVED_NOT_COVERED:
        strbuf_printf(b,
                      "A property or item is missing in the %s schema but present at path '%s%s' "
                      "in the %s schema and is not covered by its partially open content model",
                      r, sep, path, w);
        break;
    case M_ADDED_NOT_COVERED:
        strbuf_printf(b,
                      "The %s schema has a property or item at path '%s%s' which is missing in the "
                      "%s schema and is not covered by its partially open content model",
                      r, sep, path, w);
        break;
    case M_TOO_COMPLEX:
        strbuf_printf(
            b,
            "The %s and %s schemas are too large or too deeply recursive to compare at path '%s%s'",
            r, w, sep, path);
        break;
    case M_NONE:
        break;
    }
}

/* The pairs of c found incompatible, with their differences, into seed (empty); whether they
 * are exactly the pairs of old (NULL: none). */
static bool collect_incompatible(const struct cmp *c, struct cmp *seed, const struct cmp *old)
{
    bool same = true;
    for (size_t i = 0; i < c->cap; i++) {
        const struct pair *p = c->slots[i];
        if (!p || !p->done || !p->diffs.incompatible)
            continue;
        struct pair *q = pair_add(seed, p->o, p->u);
        q->done = true;
        dlist_append(&q->diffs, &p->diffs, "");
        same = same && old && pair_find(old, p->o, p->u);
    }
    return same && seed->n == (old ? old->n : 0);
}

#define FIXPOINT_PASSES_MAX 8

/* The differences from original to update, in *d (release with dlist_free).
 *
 * As Confluent's SchemaDiff.compare: a pass that assumed a cycle compatible may have cached a
 * pair as compatible on that assumption, so passes repeat, each told the pairs the one before
 * found incompatible, until no assumption was made or the set of incompatible pairs stops
 * growing (at most FIXPOINT_PASSES_MAX passes; past that the comparison gives up). */
static void diff_schemas(const struct json_schema *original, const struct json_schema *update,
                         struct dlist *d)
{
    *d = (struct dlist){0};
    if (json_schema_same(original, update))
        return;
    struct cmp seed = {0};
    bool gave_up = false;
    for (int pass = 0;; pass++) {
        struct cmp c = {.seed = pass ? &seed : NULL};
        struct strbuf path;
        strbuf_init(&path);
        dlist_free(d);
        compare(&c, json_schema_root(original), json_schema_root(update), d, &path);
        strbuf_destroy(&path);
        struct cmp next = {0};
        bool done =
            !c.optimistic || c.gave_up || collect_incompatible(&c, &next, pass ? &seed : NULL);
        gave_up = c.gave_up || (!done && pass + 1 == FIXPOINT_PASSES_MAX);
        cmp_destroy(&c);
        cmp_destroy(&seed);
        seed = next;
        if (done || gave_up)
            break;
    }
    cmp_destroy(&seed);
    /* A limit met inside a trial (a branch, a covering schema) may not show in the result:
     * giving up is a refusal whatever the trial's failure led to. */
    bool shown = false;
    for (size_t i = 0; i < d->n; i++)
        shown = shown || d->v[i].type == TOO_COMPLEX;
    if (gave_up && !shown)
        dlist_push(d, TOO_COMPLEX, "", NULL);
}

bool json_schema_can_read(const struct json_schema *reader, const struct json_schema *writer,
                          const char *reader_role, const char *writer_role,
                          struct compat_reasons *reasons)
{
    struct dlist d;
    diff_schemas(writer, reader, &d);
    bool ok = !d.incompatible;
    for (size_t i = 0; reasons && i < d.n; i++) {
        if (dtypes[d.v[i].type].ok)
            continue;
        struct strbuf b;
        strbuf_init(&b);
        describe(&b, &d.v[i], reader_role ? reader_role : "new", writer_role ? writer_role : "old");
        /* Confluent's Difference.toString() closes the description with a single quote */
        compat_reasons_add(reasons, "{errorType:\"%s\", description:\"%s'}",
                           dtypes[d.v[i].type].name, strbuf_str(&b));
        strbuf_destroy(&b);
    }
    dlist_free(&d);
    return ok;
}

bool json_schema_compat_can_read(const void *reader, const void *writer, const char *reader_role,
                                 const char *writer_role, struct compat_reasons *reasons,
                                 void *data)
{
    (void)data;
    return json_schema_can_read(reader, writer, reader_role, writer_role, reasons);
}

bool json_schema_differences(const struct json_schema *original, const struct json_schema *update,
                             struct compat_reasons *out)
{
    struct dlist d;
    diff_schemas(original, update, &d);
    bool ok = !d.incompatible;
    for (size_t i = 0; i < d.n; i++)
        compat_reasons_add(out, "%s #/%s", dtypes[d.v[i].type].name, d.v[i].path);
    dlist_free(&d);
    return ok;
}
