/* JSON Schema documents to the model, and their canonical forms (contract in
 * registry/json_schema.h).
 *
 * A schema owns its documents (the text's JSON tree and each referenced document's, in docs[],
 * the text's first) and the model's nodes (in its arena); nodes point into the trees.
 *
 * Loading (struct loader, alive for one json_schema_parse call):
 *   1. Each JSON value is modelled at most once: `memo` maps a value to its node, so a
 *      subschema reached by several $refs is one node, and recursion through $ref ends.
 *   2. load() follows the JSON nesting only (bounded by JSON_SCHEMA_DEPTH_MAX); a $ref gives a
 *      JSK_REF node queued on `pending`, whose target is loaded from the queue afterwards, so
 *      a long chain of references costs no stack.
 *   3. When the queue is empty every JSK_REF's target is walked to a node that is not a $ref;
 *      a walk longer than the number of $refs is a cycle of $refs alone and is refused.
 * `path` is the location of the schema being loaded ("#/properties/a", or "url#/..." in a
 * referenced document), for the refusals' messages.
 *
 * Canonical forms print the document's JSON as Jackson does (see the header); the normalized
 * form sorts members by UTF-16 code units, as Java's TreeMap of Strings does. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/arena.h"
#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "registry/avro_impl.h"
#include "registry/json_schema.h"

struct js_doc {
    struct json_doc doc;
    const char *url; /* the reference name ("" for the schema's own text) */
    const char *id;  /* the root's $id (or id), without a trailing '#', or NULL */
};

struct json_schema {
    struct arena arena; /* the nodes and their arrays */
    struct js_doc docs[JSON_SCHEMA_DOCS_MAX];
    size_t n_docs;
    const struct json_schema_node *root;
};

enum draft { DRAFT_4, DRAFT_6, DRAFT_7, DRAFT_2019, DRAFT_2020 };

struct memo_slot {
    const struct json_value *key;
    struct json_schema_node *node;
};

struct pending {
    struct json_schema_node *node;
    size_t doc;
    const char *where; /* the location of the $ref, for messages */
};

struct loader {
    struct json_schema *s;
    json_schema_lookup_fn lookup;
    void *data;
    enum draft draft;
    struct memo_slot *memo; /* open addressing, cap a power of two */
    size_t memo_n;
    size_t memo_cap;
    struct pending *pending;
    size_t n_pending;
    size_t cap_pending;
    struct strbuf path;
    size_t bytes; /* of the model so far */
    char *err;
    size_t errcap;
    int rc;
};

/* ---- errors and locations ---- */

static int fail(struct loader *L, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct loader *L, int rc, const char *fmt, ...)
{
    if (L->rc != 0)
        return L->rc;
    L->rc = rc;
    if (L->errcap == 0)
        return rc;
    int n = 0;
    if (L->path.len) {
        n = snprintf(L->err, L->errcap, "%s: ", strbuf_str(&L->path));
        if (n < 0 || (size_t)n >= L->errcap)
            return rc;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->err + n, L->errcap - (size_t)n, fmt, ap);
    va_end(ap);
    return rc;
}

/* Appends "/name" to the path, name escaped as a JSON pointer token (~0, ~1). */
static size_t path_push(struct loader *L, const char *name, size_t len)
{
    size_t mark = L->path.len;
    strbuf_putc(&L->path, '/');
    for (size_t i = 0; i < len; i++) {
        if (name[i] == '~')
            strbuf_puts(&L->path, "~0");
        else if (name[i] == '/')
            strbuf_puts(&L->path, "~1");
        else if (name[i] == '\0')
            strbuf_puts(&L->path, "\\u0000");
        else
            strbuf_putc(&L->path, name[i]);
    }
    return mark;
}

static size_t path_push_index(struct loader *L, const char *name, size_t i)
{
    size_t mark = path_push(L, name, strlen(name));
    strbuf_printf(&L->path, "/%zu", i);
    return mark;
}

static void path_pop(struct loader *L, size_t mark)
{
    L->path.len = mark;
    if (L->path.p)
        L->path.p[mark] = '\0';
}

static const char *type_name(const struct json_value *v)
{
    static const char *const names[] = {"null",     "a boolean", "a number",
                                        "a string", "an array",  "an object"};
    return names[v->type];
}

/* ---- keywords by draft ---- */

/* The draft that introduced key (DRAFT_4 for the older ones). */
static enum draft keyword_since(const char *key)
{
    static const struct {
        const char *key;
        enum draft since;
    } later[] = {
        {"const", DRAFT_6},
        {"contains", DRAFT_6},
        {"propertyNames", DRAFT_6},
        {"if", DRAFT_7},
        {"then", DRAFT_7},
        {"else", DRAFT_7},
        {"dependentRequired", DRAFT_2019},
        {"dependentSchemas", DRAFT_2019},
        {"unevaluatedProperties", DRAFT_2019},
        {"unevaluatedItems", DRAFT_2019},
        {"minContains", DRAFT_2019},
        {"maxContains", DRAFT_2019},
        {"$defs", DRAFT_2019},
        {"$anchor", DRAFT_2019},
        {"prefixItems", DRAFT_2020},
    };
    for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++)
        if (strcmp(later[i].key, key) == 0)
            return later[i].since;
    return DRAFT_4;
}

/* The member key of o if key is a keyword of the schema's draft (else it is only kept in the
 * text, as Everit keeps unknown keywords). */
static const struct json_value *member(const struct loader *L, const struct json_value *o,
                                       const char *key)
{
    return L->draft >= keyword_since(key) ? json_member(o, key) : NULL;
}

/* ---- the memo: JSON value -> node ---- */

static size_t memo_hash(const struct json_value *v, size_t cap)
{
    uintptr_t x = (uintptr_t)v;
    x ^= x >> 17;
    x *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(x >> 7) & (cap - 1);
}

static struct json_schema_node *memo_get(const struct loader *L, const struct json_value *v)
{
    if (L->memo_cap == 0)
        return NULL;
    for (size_t i = memo_hash(v, L->memo_cap);; i = (i + 1) & (L->memo_cap - 1)) {
        if (L->memo[i].key == v)
            return L->memo[i].node;
        if (L->memo[i].key == NULL)
            return NULL;
    }
}

static void memo_put(struct loader *L, const struct json_value *v, struct json_schema_node *n)
{
    if (2 * (L->memo_n + 1) > L->memo_cap) {
        size_t cap = L->memo_cap ? 2 * L->memo_cap : 64;
        struct memo_slot *old = L->memo;
        size_t old_cap = L->memo_cap;
        L->memo = mem_calloc(cap, sizeof(*L->memo));
        L->memo_cap = cap;
        for (size_t i = 0; i < old_cap; i++) {
            if (!old[i].key)
                continue;
            size_t j = memo_hash(old[i].key, cap);
            while (L->memo[j].key)
                j = (j + 1) & (cap - 1);
            L->memo[j] = old[i];
        }
        mem_free(old);
    }
    size_t j = memo_hash(v, L->memo_cap);
    while (L->memo[j].key)
        j = (j + 1) & (L->memo_cap - 1);
    L->memo[j].key = v;
    L->memo[j].node = n;
    L->memo_n++;
}

/* ---- the model's memory ---- */

/* Zeroed memory for the model, counted against JSON_SCHEMA_MEMORY_MAX: past it the load fails
 * (-ERR_TOO_LARGE), the memory is still given so that callers need no check of their own, and
 * load() stops at its next call. */
static void *model_calloc(struct loader *L, size_t n, size_t size)
{
    L->bytes += n * size + 16;
    if (L->bytes > JSON_SCHEMA_MEMORY_MAX)
        fail(L, -ERR_TOO_LARGE, "the schema needs more than %u MiB of memory",
             JSON_SCHEMA_MEMORY_MAX >> 20);
    return arena_calloc(&L->s->arena, n, size);
}

static char *model_strndup(struct loader *L, const char *s, size_t n)
{
    L->bytes += n + 16;
    return arena_strndup(&L->s->arena, s, n);
}

/* ---- keyword readers ---- */

static struct json_schema_node *new_node(struct loader *L, enum json_schema_kind kind,
                                         const struct json_value *json)
{
    struct json_schema_node *n = model_calloc(L, 1, sizeof(*n));
    n->kind = kind;
    n->json = json;
    n->min_length = n->max_length = -1;
    n->min_properties = n->max_properties = -1;
    n->min_items = n->max_items = n->min_contains = n->max_contains = -1;
    n->additional_permitted = true;
    n->additional_items_permitted = true;
    return n;
}

/* A non-negative integer keyword into *out (left alone when absent). */
static int get_count(struct loader *L, const struct json_value *o, const char *key, int64_t *out)
{
    const struct json_value *v = member(L, o, key);
    if (!v)
        return 0;
    if (v->type != JSON_NUMBER || !v->is_int || v->int_value < 0 || v->int_value > INT32_MAX)
        return fail(L, -ERR_INVALID, "%s must be a non-negative integer, not %s", key,
                    v->type == JSON_NUMBER ? v->str : type_name(v));
    *out = v->int_value;
    return 0;
}

static int get_num(struct loader *L, const struct json_value *o, const char *key,
                   struct json_schema_num *out)
{
    const struct json_value *v = member(L, o, key);
    if (!v)
        return 0;
    if (v->type != JSON_NUMBER)
        return fail(L, -ERR_INVALID, "%s must be a number, not %s", key, type_name(v));
    out->present = true;
    out->value = v->number;
    out->text = v->str;
    return 0;
}

static int get_string(struct loader *L, const struct json_value *o, const char *key,
                      const char **out)
{
    const struct json_value *v = member(L, o, key);
    if (!v)
        return 0;
    if (v->type != JSON_STRING)
        return fail(L, -ERR_INVALID, "%s must be a string, not %s", key, type_name(v));
    if (out)
        *out = v->str;
    return 0;
}

static int get_bool(struct loader *L, const struct json_value *o, const char *key, bool *out)
{
    const struct json_value *v = member(L, o, key);
    if (!v)
        return 0;
    if (v->type != JSON_BOOL)
        return fail(L, -ERR_INVALID, "%s must be a boolean, not %s", key, type_name(v));
    *out = v->boolean;
    return 0;
}

static int bytes_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int rc = memcmp(a, b, al < bl ? al : bl);
    return rc ? rc : (al > bl) - (al < bl);
}

static int prop_cmp(const void *a, const void *b)
{
    const struct json_schema_prop *x = a, *y = b;
    return bytes_cmp(x->name, x->name_len, y->name, y->name_len);
}

static int dep_cmp(const void *a, const void *b)
{
    const struct json_schema_dep *x = a, *y = b;
    return bytes_cmp(x->name, x->name_len, y->name, y->name_len);
}

static int str_cmp(const void *a, const void *b)
{
    const struct json_value *x = *(const struct json_value *const *)a;
    const struct json_value *y = *(const struct json_value *const *)b;
    return bytes_cmp(x->str, x->str_len, y->str, y->str_len);
}

/* An array of distinct strings (required, a property dependency, a type list); *sorted (if
 * not NULL) gets its strings sorted by bytes, in the arena. */
static int check_string_set(struct loader *L, const struct json_value *v, const char *key,
                            const struct json_value ***sorted)
{
    if (v->type != JSON_ARRAY)
        return fail(L, -ERR_INVALID, "%s must be an array of strings, not %s", key, type_name(v));
    const struct json_value **s = model_calloc(L, v->n + 1, sizeof(*s));
    size_t n = 0;
    for (const struct json_value *a = v->child; a; a = a->next) {
        if (a->type != JSON_STRING)
            return fail(L, -ERR_INVALID, "%s must hold strings only, not %s", key, type_name(a));
        s[n++] = a;
    }
    qsort(s, n, sizeof(*s), str_cmp);
    for (size_t i = 1; i < n; i++)
        if (str_cmp(&s[i - 1], &s[i]) == 0)
            return fail(L, -ERR_INVALID, "%s names \"%s\" twice", key, s[i]->str);
    if (sorted)
        *sorted = s;
    return 0;
}

static const struct json_schema_node *load(struct loader *L, size_t doc,
                                           const struct json_value *v);

/* The schema member key of o (NULL when absent or on error). */
static const struct json_schema_node *load_member(struct loader *L, size_t doc,
                                                  const struct json_value *o, const char *key)
{
    const struct json_value *v = member(L, o, key);
    if (!v || L->rc)
        return NULL;
    size_t mark = path_push(L, key, strlen(key));
    const struct json_schema_node *n = load(L, doc, v);
    if (L->rc == 0)
        path_pop(L, mark);
    return n;
}

/* An object whose members are schemas (properties, patternProperties, dependentSchemas). */
static int load_schema_map(struct loader *L, size_t doc, const struct json_value *o,
                           const char *key, const struct json_schema_prop **out, size_t *n_out)
{
    const struct json_value *v = member(L, o, key);
    if (!v)
        return 0;
    if (v->type != JSON_OBJECT)
        return fail(L, -ERR_INVALID, "%s must be an object, not %s", key, type_name(v));
    struct json_schema_prop *p = model_calloc(L, v->n + 1, sizeof(*p));
    size_t i = 0;
    size_t mark = path_push(L, key, strlen(key));
    for (const struct json_value *m = v->child; m; m = m->next, i++) {
        size_t mark2 = path_push(L, m->key, m->key_len);
        p[i].name = m->key;
        p[i].name_len = m->key_len;
        p[i].schema = load(L, doc, m);
        if (L->rc)
            return L->rc;
        path_pop(L, mark2);
    }
    path_pop(L, mark);
    *out = p;
    *n_out = i;
    return 0;
}

/* A non-empty array of schemas (allOf, anyOf, oneOf, items as a list, prefixItems). */
static int load_schema_list(struct loader *L, size_t doc, const struct json_value *v,
                            const char *key, const struct json_schema_node ***out, size_t *n_out)
{
    if (v->type != JSON_ARRAY || v->n == 0)
        return fail(L, -ERR_INVALID, "%s must be a non-empty array of schemas, not %s", key,
                    v->type == JSON_ARRAY ? "an empty array" : type_name(v));
    const struct json_schema_node **list = model_calloc(L, v->n, sizeof(*list));
    size_t i = 0;
    for (const struct json_value *a = v->child; a; a = a->next, i++) {
        size_t mark = path_push_index(L, key, i);
        list[i] = load(L, doc, a);
        if (L->rc)
            return L->rc;
        path_pop(L, mark);
    }
    *out = list;
    *n_out = i;
    return 0;
}

/* ---- the kinds ---- */

static int load_string(struct loader *L, const struct json_value *o, struct json_schema_node *n)
{
    if (get_count(L, o, "minLength", &n->min_length) ||
        get_count(L, o, "maxLength", &n->max_length) || get_string(L, o, "pattern", &n->pattern) ||
        get_string(L, o, "format", NULL))
        return L->rc;
    return 0;
}

/* exclusiveMaximum: a number (draft 6 on), or draft 4's boolean beside maximum (kept in the
 * text, not compared, as Confluent does not). */
static int get_exclusive(struct loader *L, const struct json_value *o, const char *key,
                         struct json_schema_num *out)
{
    const struct json_value *v = member(L, o, key);
    if (!v || v->type == JSON_NUMBER)
        return get_num(L, o, key, out);
    if (v->type == JSON_BOOL && L->draft == DRAFT_4)
        return 0;
    return fail(L, -ERR_INVALID, "%s must be %s, not %s", key,
                L->draft == DRAFT_4 ? "a boolean or a number" : "a number", type_name(v));
}

static int load_number(struct loader *L, const struct json_value *o, struct json_schema_node *n)
{
    if (get_num(L, o, "minimum", &n->minimum) || get_num(L, o, "maximum", &n->maximum) ||
        get_exclusive(L, o, "exclusiveMinimum", &n->exclusive_minimum) ||
        get_exclusive(L, o, "exclusiveMaximum", &n->exclusive_maximum) ||
        get_num(L, o, "multipleOf", &n->multiple_of))
        return L->rc;
    if (n->multiple_of.present && !(n->multiple_of.value > 0))
        return fail(L, -ERR_INVALID, "multipleOf must be greater than 0, not %s",
                    n->multiple_of.text);
    return 0;
}

static int load_dependencies(struct loader *L, size_t doc, const struct json_value *o,
                             const char *key, bool arrays, bool schemas,
                             struct json_schema_dep *deps, size_t *n)
{
    const struct json_value *v = member(L, o, key);
    if (!v)
        return 0;
    if (v->type != JSON_OBJECT)
        return fail(L, -ERR_INVALID, "%s must be an object, not %s", key, type_name(v));
    size_t mark = path_push(L, key, strlen(key));
    for (const struct json_value *m = v->child; m; m = m->next) {
        size_t mark2 = path_push(L, m->key, m->key_len);
        struct json_schema_dep *d = &deps[(*n)++];
        d->name = m->key;
        d->name_len = m->key_len;
        if (arrays && m->type == JSON_ARRAY) {
            if (check_string_set(L, m, key, NULL))
                return L->rc;
            d->names = m;
        } else if (schemas && (m->type == JSON_OBJECT || m->type == JSON_BOOL)) {
            d->schema = load(L, doc, m);
            if (L->rc)
                return L->rc;
        } else {
            return fail(L, -ERR_INVALID, "a dependency must be %s, not %s",
                        arrays && schemas ? "an array of strings or a schema"
                        : arrays          ? "an array of strings"
                                          : "a schema",
                        type_name(m));
        }
        path_pop(L, mark2);
    }
    path_pop(L, mark);
    return 0;
}

static int load_object(struct loader *L, size_t doc, const struct json_value *o,
                       struct json_schema_node *n)
{
    if (load_schema_map(L, doc, o, "properties", &n->props, &n->n_props) ||
        load_schema_map(L, doc, o, "patternProperties", &n->pattern_props, &n->n_pattern_props))
        return L->rc;
    const struct json_value *req = member(L, o, "required");
    if (req) {
        if (check_string_set(L, req, "required", &n->required_by_name))
            return L->rc;
        n->required = req;
        n->n_required = req->n;
    }
    const struct json_value *ap = member(L, o, "additionalProperties");
    if (ap && ap->type == JSON_BOOL) {
        n->additional_permitted = ap->boolean;
    } else if (ap && ap->type == JSON_OBJECT) {
        n->additional = load_member(L, doc, o, "additionalProperties");
    } else if (ap) {
        return fail(L, -ERR_INVALID, "additionalProperties must be a boolean or a schema, not %s",
                    type_name(ap));
    }
    size_t cap = 0;
    const char *dep_keys[] = {"dependencies", "dependentRequired", "dependentSchemas"};
    for (size_t i = 0; i < 3; i++) {
        const struct json_value *d = member(L, o, dep_keys[i]);
        cap += d && d->type == JSON_OBJECT ? d->n : 0;
    }
    struct json_schema_dep *deps = model_calloc(L, cap + 1, sizeof(*deps));
    if (load_dependencies(L, doc, o, "dependencies", true, true, deps, &n->n_deps) ||
        load_dependencies(L, doc, o, "dependentRequired", true, false, deps, &n->n_deps) ||
        load_dependencies(L, doc, o, "dependentSchemas", false, true, deps, &n->n_deps))
        return L->rc;
    qsort(deps, n->n_deps, sizeof(*deps), dep_cmp);
    n->deps = deps;
    struct json_schema_prop *byname = model_calloc(L, n->n_props + 1, sizeof(*byname));
    if (n->n_props)
        memcpy(byname, n->props, n->n_props * sizeof(*byname));
    qsort(byname, n->n_props, sizeof(*byname), prop_cmp);
    n->props_by_name = byname;
    if (get_count(L, o, "minProperties", &n->min_properties) ||
        get_count(L, o, "maxProperties", &n->max_properties))
        return L->rc;
    load_member(L, doc, o, "propertyNames");
    n->unevaluated = load_member(L, doc, o, "unevaluatedProperties");
    return L->rc;
}

static int load_array(struct loader *L, size_t doc, const struct json_value *o,
                      struct json_schema_node *n)
{
    const struct json_value *items = member(L, o, "items");
    const struct json_value *prefix = member(L, o, "prefixItems");
    const struct json_value *more = member(L, o, "additionalItems");
    if (prefix) {
        /* 2020-12: prefixItems is the list, items what may follow it */
        if (load_schema_list(L, doc, prefix, "prefixItems", &n->item_list, &n->n_item_list))
            return L->rc;
        more = items;
        items = NULL;
    }
    if (items && items->type == JSON_BOOL && L->draft == DRAFT_2020) {
        /* 2020-12 as Confluent translates it: false closes the array, true says nothing */
        n->additional_items_permitted = items->boolean;
        items = NULL;
    }
    if (items && items->type == JSON_ARRAY) {
        if (load_schema_list(L, doc, items, "items", &n->item_list, &n->n_item_list))
            return L->rc;
    } else if (items && (items->type == JSON_OBJECT || items->type == JSON_BOOL)) {
        n->items = load_member(L, doc, o, "items");
    } else if (items) {
        return fail(L, -ERR_INVALID, "items must be a schema or an array of schemas, not %s",
                    type_name(items));
    }
    const char *more_key = prefix ? "items" : "additionalItems";
    if (more && more->type == JSON_BOOL) {
        n->additional_items_permitted = more->boolean;
    } else if (more && more->type == JSON_OBJECT) {
        n->additional_items = load_member(L, doc, o, more_key);
    } else if (more) {
        return fail(L, -ERR_INVALID, "%s must be a boolean or a schema, not %s", more_key,
                    type_name(more));
    }
    if (get_count(L, o, "minItems", &n->min_items) || get_count(L, o, "maxItems", &n->max_items) ||
        get_count(L, o, "minContains", &n->min_contains) ||
        get_count(L, o, "maxContains", &n->max_contains) ||
        get_bool(L, o, "uniqueItems", &n->unique_items))
        return L->rc;
    load_member(L, doc, o, "contains");
    n->unevaluated = load_member(L, doc, o, "unevaluatedItems");
    return L->rc;
}

/* Everit's keyword groups: any of them without a type gives a node of that kind. */
static const char *const array_keys[] = {
    "items",       "additionalItems", "minItems",    "maxItems",         "uniqueItems", "contains",
    "prefixItems", "minContains",     "maxContains", "unevaluatedItems", NULL};
static const char *const object_keys[] = {
    "properties",        "required",          "minProperties",         "maxProperties",
    "dependencies",      "patternProperties", "additionalProperties",  "propertyNames",
    "dependentRequired", "dependentSchemas",  "unevaluatedProperties", NULL};
static const char *const number_keys[] = {"minimum",          "maximum",    "exclusiveMinimum",
                                          "exclusiveMaximum", "multipleOf", NULL};
static const char *const string_keys[] = {"minLength", "maxLength", "pattern", "format", NULL};
static const char *const conditional_keys[] = {"if", "then", "else", NULL};

static bool has_any(const struct loader *L, const struct json_value *o, const char *const *keys)
{
    for (; *keys; keys++)
        if (member(L, o, *keys))
            return true;
    return false;
}

/* The node for one type name, its keywords read from o; NULL (and L->rc) on error. */
static struct json_schema_node *load_typed(struct loader *L, size_t doc, const struct json_value *o,
                                           const char *type)
{
    struct json_schema_node *n = NULL;
    if (strcmp(type, "string") == 0) {
        n = new_node(L, JSK_STRING, o);
        load_string(L, o, n);
    } else if (strcmp(type, "number") == 0 || strcmp(type, "integer") == 0) {
        n = new_node(L, JSK_NUMBER, o);
        n->requires_integer = type[0] == 'i';
        load_number(L, o, n);
    } else if (strcmp(type, "object") == 0) {
        n = new_node(L, JSK_OBJECT, o);
        load_object(L, doc, o, n);
    } else if (strcmp(type, "array") == 0) {
        n = new_node(L, JSK_ARRAY, o);
        load_array(L, doc, o, n);
    } else if (strcmp(type, "boolean") == 0) {
        n = new_node(L, JSK_BOOLEAN, o);
    } else if (strcmp(type, "null") == 0) {
        n = new_node(L, JSK_NULL, o);
    } else {
        fail(L, -ERR_INVALID, "unknown type \"%s\"", type);
    }
    return L->rc ? NULL : n;
}

#define BUILDERS_MAX 12

struct builders {
    struct json_schema_node *v[BUILDERS_MAX];
    size_t n;
};

static void add_builder(struct builders *b, struct json_schema_node *n)
{
    CHECK(b->n < BUILDERS_MAX);
    b->v[b->n++] = n;
}

/* Marks the keyword group (array, object, number, string) that type takes. */
static void take_group(const char *type, bool taken[4])
{
    static const char *const names[] = {"array", "object", "number", "string", "integer"};
    for (int g = 0; g < 5; g++)
        if (strcmp(type, names[g]) == 0)
            taken[g == 4 ? 2 : g] = true;
}

static int load_type(struct loader *L, size_t doc, const struct json_value *o,
                     const struct json_value *t, struct builders *b, bool taken[4])
{
    if (t->type == JSON_STRING) {
        struct json_schema_node *n = load_typed(L, doc, o, t->str);
        if (n)
            add_builder(b, n);
        take_group(t->str, taken);
        return L->rc;
    }
    if (t->type != JSON_ARRAY || t->n == 0)
        return fail(L, -ERR_INVALID,
                    "type must be a string or a non-empty array of strings, not %s",
                    t->type == JSON_ARRAY ? "an empty array" : type_name(t));
    if (check_string_set(L, t, "type", NULL))
        return L->rc;
    struct json_schema_node *any = new_node(L, JSK_COMBINED, o);
    any->criterion = JSC_ANY;
    const struct json_schema_node **subs = model_calloc(L, t->n, sizeof(*subs));
    for (const struct json_value *a = t->child; a; a = a->next) {
        subs[any->n_subs] = load_typed(L, doc, o, a->str);
        if (L->rc)
            return L->rc;
        take_group(a->str, taken);
        any->n_subs++;
    }
    any->subs = subs;
    add_builder(b, any);
    return 0;
}

static int load_combinators(struct loader *L, size_t doc, const struct json_value *o,
                            struct builders *b)
{
    static const char *const keys[] = {"allOf", "anyOf", "oneOf"};
    for (int c = 0; c < 3; c++) {
        const struct json_value *v = member(L, o, keys[c]);
        if (!v)
            continue;
        struct json_schema_node *n = new_node(L, JSK_COMBINED, o);
        n->criterion = (enum json_schema_criterion)c;
        if (load_schema_list(L, doc, v, keys[c], &n->subs, &n->n_subs))
            return L->rc;
        add_builder(b, n);
    }
    return 0;
}

static int load_common(struct loader *L, const struct json_value *o, struct json_schema_node *n)
{
    const char *id_key = L->draft == DRAFT_4 ? "id" : "$id";
    if (get_string(L, o, "title", NULL) || get_string(L, o, "description", NULL) ||
        get_string(L, o, id_key, NULL) || get_string(L, o, "$schema", NULL) ||
        get_string(L, o, "$comment", NULL) || get_string(L, o, "$anchor", NULL))
        return L->rc;
    n->title = member(L, o, "title");
    n->description = member(L, o, "description");
    n->id = member(L, o, id_key);
    n->def = member(L, o, "default");
    const struct json_value *ct = member(L, o, "connect.type");
    if (ct && ct->type == JSON_STRING)
        n->connect_type = ct->str;
    static const char *const defs[] = {"definitions", "$defs"};
    for (int i = 0; i < 2; i++) {
        const struct json_value *d = member(L, o, defs[i]);
        if (d && d->type != JSON_OBJECT)
            return fail(L, -ERR_INVALID, "%s must be an object, not %s", defs[i], type_name(d));
    }
    return 0;
}

static void queue_ref(struct loader *L, struct json_schema_node *n, size_t doc)
{
    MEM_GROW(L->pending, L->cap_pending, L->n_pending + 1);
    L->pending[L->n_pending].node = n;
    L->pending[L->n_pending].doc = doc;
    L->pending[L->n_pending].where = model_strndup(L, strbuf_str(&L->path), L->path.len);
    L->n_pending++;
}

static const struct json_schema_node *load(struct loader *L, size_t doc, const struct json_value *v)
{
    if (L->rc)
        return NULL;
    struct json_schema_node *n = memo_get(L, v);
    if (n)
        return n;
    if (v->type == JSON_BOOL) {
        n = new_node(L, v->boolean ? JSK_TRUE : JSK_FALSE, v);
        memo_put(L, v, n);
        return n;
    }
    if (v->type != JSON_OBJECT) {
        fail(L, -ERR_INVALID, "a schema must be an object or a boolean, not %s", type_name(v));
        return NULL;
    }
    n = new_node(L, JSK_EMPTY, v);
    memo_put(L, v, n);
    if (load_common(L, v, n))
        return NULL;
    const struct json_value *ref = member(L, v, "$ref");
    if (ref) {
        if (ref->type != JSON_STRING) {
            fail(L, -ERR_INVALID, "$ref must be a string, not %s", type_name(ref));
            return NULL;
        }
        if (L->draft < DRAFT_2019) {
            /* drafts up to 7: the $ref replaces its siblings */
            n->kind = JSK_REF;
            n->ref = ref->str;
            queue_ref(L, n, doc);
            return n;
        }
    }
    struct builders b = {.n = 0};
    if (ref) {
        /* 2019-09 on: the $ref applies beside its siblings (queued below, once its node is
         * known) */
        struct json_schema_node *rn = new_node(L, JSK_REF, v);
        rn->ref = ref->str;
        add_builder(&b, rn);
    }
    const struct json_value *e = member(L, v, "enum");
    if (e) {
        if (e->type != JSON_ARRAY) {
            fail(L, -ERR_INVALID, "enum must be an array, not %s", type_name(e));
            return NULL;
        }
        struct json_schema_node *en = new_node(L, JSK_ENUM, v);
        en->values = e;
        add_builder(&b, en);
    }
    if (load_combinators(L, doc, v, &b))
        return NULL;
    if (member(L, v, "not")) {
        struct json_schema_node *nn = new_node(L, JSK_NOT, v);
        nn->not_schema = load_member(L, doc, v, "not");
        if (L->rc)
            return NULL;
        add_builder(&b, nn);
    }
    const struct json_value *c = member(L, v, "const");
    if (c) {
        struct json_schema_node *cn = new_node(L, JSK_CONST, v);
        cn->value = c;
        add_builder(&b, cn);
    }
    /* A type takes its own keywords; the keyword groups of kinds it does not name still give
     * nodes of their own, as Everit's property sniffer finds them. */
    static const char *const *const groups[] = {array_keys, object_keys, number_keys, string_keys};
    static const char *const group_types[] = {"array", "object", "number", "string"};
    bool taken[4] = {false};
    const struct json_value *t = member(L, v, "type");
    if (t && load_type(L, doc, v, t, &b, taken))
        return NULL;
    for (int g = 0; g < 4; g++) {
        if (taken[g] || !has_any(L, v, groups[g]))
            continue;
        struct json_schema_node *tn = load_typed(L, doc, v, group_types[g]);
        if (!tn)
            return NULL;
        add_builder(&b, tn);
    }
    if (has_any(L, v, conditional_keys)) {
        struct json_schema_node *cn = new_node(L, JSK_CONDITIONAL, v);
        load_member(L, doc, v, "if");
        load_member(L, doc, v, "then");
        load_member(L, doc, v, "else");
        if (L->rc)
            return NULL;
        add_builder(&b, cn);
    }
    if (b.n == 1 && b.v[0]->kind == JSK_REF) {
        n->kind = JSK_REF;
        n->ref = b.v[0]->ref;
        queue_ref(L, n, doc);
    } else if (b.n == 1) {
        /* the one kind becomes the node itself, keeping the common keywords */
        struct json_schema_node common = *n;
        *n = *b.v[0];
        n->title = common.title;
        n->description = common.description;
        n->id = common.id;
        n->def = common.def;
        n->connect_type = common.connect_type;
    } else if (b.n > 1) {
        n->kind = JSK_COMBINED;
        n->criterion = JSC_ALL;
        const struct json_schema_node **subs = model_calloc(L, b.n, sizeof(*subs));
        memcpy(subs, b.v, b.n * sizeof(*subs));
        n->subs = subs;
        n->n_subs = b.n;
        if (ref)
            queue_ref(L, b.v[0], doc);
    }
    return n;
}

/* ---- documents and $ref resolution ---- */

/* The draft that $schema names, as Confluent's SpecificationVersion.getFromUrl() reads it (one
 * of the meta-schema URLs, a trailing '#' dropped); any other value means draft 7. */
static enum draft draft_of(const struct json_value *root)
{
    static const struct {
        const char *url; /* after "http://" or "https://" */
        enum draft draft;
    } urls[] = {
        {"json-schema.org/draft-04/schema", DRAFT_4},
        {"json-schema.org/schema", DRAFT_4},
        {"json-schema.org/draft-06/schema", DRAFT_6},
        {"json-schema.org/draft-07/schema", DRAFT_7},
        {"json-schema.org/draft/2019-09/schema", DRAFT_2019},
        {"json-schema.org/draft/2020-12/schema", DRAFT_2020},
    };
    const struct json_value *v = json_get(root, "$schema", JSON_STRING);
    if (!v)
        return DRAFT_7;
    const char *s = v->str;
    size_t n = v->str_len;
    if (n && s[n - 1] == '#')
        n--;
    size_t skip = strncmp(s, "http://", 7) == 0 ? 7 : strncmp(s, "https://", 8) == 0 ? 8 : 0;
    if (skip == 0)
        return DRAFT_7;
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++)
        if (strlen(urls[i].url) == n - skip && memcmp(urls[i].url, s + skip, n - skip) == 0)
            return urls[i].draft;
    return DRAFT_7;
}

/* Every number's exponent must fit Java's BigDecimal (an int scale), as Jackson reads it.
 * Recursion follows the JSON nesting (at most JSON_SCHEMA_DEPTH_MAX). */
static int check_numbers(struct loader *L, const struct json_value *v)
{
    for (; v; v = v->next) {
        if (v->type == JSON_NUMBER && !v->integral) {
            const char *e = strpbrk(v->str, "eE");
            if (e) {
                errno = 0;
                long long x = strtoll(e + 1, NULL, 10);
                if (errno || x > 999999999 || x < -999999999)
                    return fail(L, -ERR_INVALID, "the number %s is out of range", v->str);
            }
        }
        if ((v->type == JSON_ARRAY || v->type == JSON_OBJECT) && check_numbers(L, v->child))
            return L->rc;
    }
    return 0;
}

static int add_doc(struct loader *L, const char *url, const char *text, size_t len)
{
    struct json_schema *s = L->s;
    if (s->n_docs == JSON_SCHEMA_DOCS_MAX)
        return fail(L, -ERR_TOO_LARGE, "more than %d referenced documents",
                    JSON_SCHEMA_DOCS_MAX - 1);
    if (len > JSON_SCHEMA_TEXT_MAX)
        return fail(L, -ERR_TOO_LARGE, "the text is larger than %u bytes", JSON_SCHEMA_TEXT_MAX);
    struct js_doc *d = &s->docs[s->n_docs];
    struct json_limits lim = {.depth_max = JSON_SCHEMA_DEPTH_MAX, .values_max = len + 1};
    char jerr[160];
    int rc = json_parse(&d->doc, text, len, &lim, jerr, sizeof(jerr));
    s->n_docs++;
    if (rc != 0)
        return fail(L, rc == -ERR_TOO_LARGE ? -ERR_TOO_LARGE : -ERR_INVALID, "not valid JSON %s",
                    jerr);
    d->url = arena_strndup(&s->arena, url, strlen(url));
    if (check_numbers(L, d->doc.root))
        return L->rc;
    const struct json_value *root = d->doc.root;
    if (root->type != JSON_OBJECT && root->type != JSON_BOOL)
        return fail(L, -ERR_INVALID, "a schema must be an object or a boolean, not %s",
                    type_name(root));
    const char *id = json_get_str(root, "$id", json_get_str(root, "id", NULL));
    if (id) {
        size_t n = strlen(id);
        if (n && id[n - 1] == '#')
            n--;
        d->id = arena_strndup(&s->arena, id, n);
    }
    return 0;
}

/* The value a JSON pointer (a URI fragment: %XX decoded first) names in root, or NULL. */
static const struct json_value *pointer_walk(const struct json_value *root, const char *frag)
{
    size_t n = strlen(frag);
    char *p = mem_alloc(n + 1), *tok = mem_alloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (frag[i] == '%' && i + 2 < n && isxdigit((unsigned char)frag[i + 1]) &&
            isxdigit((unsigned char)frag[i + 2])) {
            char hex[3] = {frag[i + 1], frag[i + 2], '\0'};
            p[k++] = (char)strtol(hex, NULL, 16);
            i += 2;
        } else {
            p[k++] = frag[i];
        }
    }
    const struct json_value *v = root;
    for (size_t i = 0; v && i < k;) {
        if (p[i++] != '/') {
            v = NULL;
            break;
        }
        size_t t = 0;
        while (i < k && p[i] != '/') {
            char c = p[i++];
            if (c == '~' && i < k && (p[i] == '0' || p[i] == '1'))
                c = p[i++] == '0' ? '~' : '/';
            tok[t++] = c;
        }
        tok[t] = '\0';
        const struct json_value *next = NULL;
        if (v->type == JSON_OBJECT) {
            for (const struct json_value *m = v->child; m && !next; m = m->next)
                if (m->key_len == t && memcmp(m->key, tok, t) == 0)
                    next = m;
        } else if (v->type == JSON_ARRAY && t > 0 && t < 10 && (tok[0] != '0' || t == 1) &&
                   strspn(tok, "0123456789") == t) {
            long idx = strtol(tok, NULL, 10);
            next = v->child;
            while (next && idx-- > 0)
                next = next->next;
        }
        v = next;
    }
    mem_free(tok);
    mem_free(p);
    return v;
}

/* The document that url names, loading it through the lookup if need be. */
static int find_doc(struct loader *L, size_t from, const char *url, size_t *out)
{
    struct json_schema *s = L->s;
    if (url[0] == '\0') {
        *out = from;
        return 0;
    }
    for (size_t i = 0; i < s->n_docs; i++) {
        if ((s->docs[i].id && strcmp(s->docs[i].id, url) == 0) ||
            (i > 0 && strcmp(s->docs[i].url, url) == 0)) {
            *out = i;
            return 0;
        }
    }
    struct json_schema_source src = {NULL, 0};
    int rc = L->lookup ? L->lookup(url, &src, L->data) : -ERR_NOT_FOUND;
    /* Confluent registers a reference at its name resolved against the root's $id: an
     * absolute $ref under the $id's directory names the reference by the rest. */
    const char *base = s->docs[0].id, *slash = base ? strrchr(base, '/') : NULL;
    size_t dir = slash ? (size_t)(slash - base) + 1 : 0;
    if (rc == -ERR_NOT_FOUND && L->lookup && dir && strncmp(url, base, dir) == 0 && url[dir])
        rc = L->lookup(url + dir, &src, L->data);
    if (rc != 0)
        return fail(L, -ERR_INVALID, "$ref \"%s\": no schema reference named \"%s\"", url, url);
    char *where = mem_strdup(strbuf_str(&L->path));
    strbuf_reset(&L->path);
    strbuf_puts(&L->path, url);
    rc = add_doc(L, url, src.text, src.len);
    strbuf_reset(&L->path);
    strbuf_puts(&L->path, where);
    mem_free(where);
    if (rc)
        return rc;
    *out = s->n_docs - 1;
    return 0;
}

static int resolve_one(struct loader *L, struct json_schema_node *n, size_t doc)
{
    const char *ref = n->ref;
    const char *hash = strchr(ref, '#');
    size_t ulen = hash ? (size_t)(hash - ref) : strlen(ref);
    char *url = mem_strndup(ref, ulen);
    size_t target_doc = 0;
    int rc = find_doc(L, doc, url, &target_doc);
    mem_free(url);
    if (rc)
        return rc;
    const char *frag = hash ? hash + 1 : "";
    const struct json_value *root = L->s->docs[target_doc].doc.root;
    if (frag[0] != '\0' && frag[0] != '/')
        return fail(L, -ERR_INVALID, "$ref \"%s\": only JSON pointers are supported after '#'",
                    ref);
    const struct json_value *v = pointer_walk(root, frag);
    if (!v && strncmp(frag, "/$defs/", 7) == 0) {
        /* Confluent copies a document's top-level definitions into its $defs (where $defs
         * lacks the name), so "#/$defs/X" finds a definitions/X */
        const char *end = strchr(frag + 7, '/');
        size_t name_end = end ? (size_t)(end - frag) : strlen(frag);
        char *named = mem_strndup(frag, name_end); /* "/$defs/X" */
        const struct json_value *defs = json_member(root, "$defs");
        if (!pointer_walk(root, named) && (!defs || defs->type == JSON_OBJECT)) {
            struct strbuf alt;
            strbuf_init(&alt);
            strbuf_puts(&alt, "/definitions/");
            strbuf_puts(&alt, frag + 7);
            v = pointer_walk(root, strbuf_str(&alt));
            strbuf_destroy(&alt);
        }
        mem_free(named);
    }
    if (!v)
        return fail(L, -ERR_INVALID, "$ref \"%s\" points to nothing", ref);
    strbuf_reset(&L->path);
    if (L->s->docs[target_doc].url[0])
        strbuf_puts(&L->path, L->s->docs[target_doc].url);
    strbuf_putc(&L->path, '#');
    strbuf_puts(&L->path, frag);
    n->target = load(L, target_doc, v);
    return L->rc;
}

static int resolve_refs(struct loader *L)
{
    for (size_t i = 0; i < L->n_pending; i++) {
        strbuf_reset(&L->path);
        strbuf_puts(&L->path, L->pending[i].where);
        if (resolve_one(L, L->pending[i].node, L->pending[i].doc))
            return L->rc;
    }
    for (size_t i = 0; i < L->n_pending; i++) {
        struct json_schema_node *n = L->pending[i].node;
        const struct json_schema_node *t = n->target;
        for (size_t steps = 0; t->kind == JSK_REF; steps++) {
            if (steps > L->n_pending) {
                strbuf_reset(&L->path);
                strbuf_puts(&L->path, L->pending[i].where);
                return fail(L, -ERR_INVALID, "$ref \"%s\" only leads back to itself", n->ref);
            }
            t = t->target;
        }
        n->target = t;
    }
    return 0;
}

int json_schema_parse(const char *text, size_t len, json_schema_lookup_fn lookup, void *data,
                      struct json_schema **out, char *err, size_t errcap)
{
    *out = NULL;
    if (errcap)
        err[0] = '\0';
    struct json_schema *s = mem_calloc(1, sizeof(*s));
    arena_init(&s->arena, 0);
    struct loader L = {.s = s, .lookup = lookup, .data = data, .err = err, .errcap = errcap};
    strbuf_init(&L.path);
    if (add_doc(&L, "", text, len) == 0) {
        L.draft = draft_of(s->docs[0].doc.root);
        strbuf_reset(&L.path);
        strbuf_putc(&L.path, '#');
        const struct json_schema_node *root = load(&L, 0, s->docs[0].doc.root);
        if (L.rc == 0 && resolve_refs(&L) == 0)
            s->root = root->kind == JSK_REF ? root->target : root;
    }
    int rc = L.rc;
    mem_free(L.memo);
    mem_free(L.pending);
    strbuf_destroy(&L.path);
    if (rc != 0) {
        json_schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void json_schema_free(struct json_schema *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n_docs; i++)
        json_doc_free(&s->docs[i].doc);
    arena_destroy(&s->arena);
    mem_free(s);
}

const struct json_schema_node *json_schema_root(const struct json_schema *s)
{
    return s->root;
}

const char *json_schema_title(const struct json_schema *s)
{
    return json_get_str(s->docs[0].doc.root, "title", NULL);
}

/* ---- canonical forms ---- */

/* Java's BigDecimal.toString() of a JSON number literal with a fraction or an exponent. */
static void big_decimal(struct strbuf *out, const char *lit)
{
    const char *p = lit;
    bool neg = *p == '-';
    if (neg)
        p++;
    char digits[JSON_NUMBER_TEXT_MAX + 1];
    size_t nd = 0;
    long long scale = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        digits[nd++] = *p;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, scale++)
            digits[nd++] = *p;
    }
    if (*p == 'e' || *p == 'E')
        scale -= strtoll(p + 1, NULL, 10);
    size_t lead = 0;
    while (lead + 1 < nd && digits[lead] == '0')
        lead++;
    const char *d = digits + lead;
    nd -= lead;
    bool zero = nd == 1 && d[0] == '0';
    if (neg && !zero)
        strbuf_putc(out, '-');
    long long adjusted = -scale + (long long)(nd - 1);
    if (scale == 0) {
        strbuf_append(out, d, nd);
    } else if (scale > 0 && adjusted >= -6) {
        if ((long long)nd > scale) {
            strbuf_append(out, d, nd - (size_t)scale);
            strbuf_putc(out, '.');
            strbuf_append(out, d + nd - (size_t)scale, (size_t)scale);
        } else {
            strbuf_puts(out, "0.");
            for (long long i = 0; i < scale - (long long)nd; i++)
                strbuf_putc(out, '0');
            strbuf_append(out, d, nd);
        }
    } else {
        strbuf_putc(out, d[0]);
        if (nd > 1) {
            strbuf_putc(out, '.');
            strbuf_append(out, d + 1, nd - 1);
        }
        strbuf_printf(out, "E%s%lld", adjusted >= 0 ? "+" : "", adjusted);
    }
}

static void write_number(struct strbuf *out, const struct json_value *v)
{
    if (!v->integral)
        big_decimal(out, v->str);
    else if (strcmp(v->str, "-0") == 0)
        strbuf_putc(out, '0');
    else
        strbuf_append(out, v->str, v->str_len);
}

/* Java's String.compareTo: UTF-16 code units. UTF-8 byte order is code point order, which
 * differs only where a character beyond U+FFFF (a surrogate pair, 0xD800..) meets one in
 * U+E000..U+FFFF: the lead bytes 0xF0.. versus 0xEE/0xEF. */
static int utf16_rank(unsigned char lead)
{
    if (lead >= 0xF0)
        return 0xED; /* surrogates sort before U+E000 */
    return lead;
}

static int key_cmp(const void *a, const void *b)
{
    const struct json_value *x = *(const struct json_value *const *)a;
    const struct json_value *y = *(const struct json_value *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)x->key[i], d = (unsigned char)y->key[i];
        if (c == d)
            continue;
        /* At the first differing byte both are at the same offset inside or at the start of
         * a sequence; only a lead-byte difference between 3- and 4-byte forms reorders. */
        if ((c >= 0xEE && d >= 0xF0) || (c >= 0xF0 && d >= 0xEE)) {
            int rc = utf16_rank(c) - utf16_rank(d);
            if (rc != 0)
                return rc;
        }
        return c - d;
    }
    return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static void write_json(struct strbuf *out, const struct json_value *v, bool sorted)
{
    switch (v->type) {
    case JSON_NULL:
        strbuf_puts(out, "null");
        return;
    case JSON_BOOL:
        strbuf_puts(out, v->boolean ? "true" : "false");
        return;
    case JSON_NUMBER:
        write_number(out, v);
        return;
    case JSON_STRING:
        avro_json_string(out, v->str, v->str_len);
        return;
    case JSON_ARRAY:
        strbuf_putc(out, '[');
        for (const struct json_value *a = v->child; a; a = a->next) {
            if (a != v->child)
                strbuf_putc(out, ',');
            write_json(out, a, sorted);
        }
        strbuf_putc(out, ']');
        return;
    case JSON_OBJECT:
        break;
    }
    const struct json_value **m = mem_alloc((v->n + 1) * sizeof(*m));
    size_t n = 0;
    for (const struct json_value *c = v->child; c; c = c->next)
        m[n++] = c;
    if (sorted)
        qsort(m, n, sizeof(*m), key_cmp);
    strbuf_putc(out, '{');
    for (size_t i = 0; i < n; i++) {
        if (i)
            strbuf_putc(out, ',');
        avro_json_string(out, m[i]->key, m[i]->key_len);
        strbuf_putc(out, ':');
        write_json(out, m[i], sorted);
    }
    strbuf_putc(out, '}');
    mem_free(m);
}

void json_schema_write_json(struct strbuf *out, const struct json_value *v, bool sorted)
{
    write_json(out, v, sorted);
}

void json_schema_canonical(const struct json_schema *s, bool normalize, struct strbuf *out)
{
    write_json(out, s->docs[0].doc.root, normalize);
}

bool json_schema_same(const struct json_schema *a, const struct json_schema *b)
{
    if (a->n_docs != b->n_docs)
        return false;
    bool same = true;
    struct strbuf x, y;
    strbuf_init(&x);
    strbuf_init(&y);
    for (size_t i = 0; same && i < a->n_docs; i++) {
        strbuf_reset(&x);
        strbuf_reset(&y);
        write_json(&x, a->docs[i].doc.root, false);
        write_json(&y, b->docs[i].doc.root, false);
        same = strcmp(a->docs[i].url, b->docs[i].url) == 0 && x.len == y.len &&
               memcmp(strbuf_str(&x), strbuf_str(&y), x.len) == 0;
    }
    strbuf_destroy(&x);
    strbuf_destroy(&y);
    return same;
}
