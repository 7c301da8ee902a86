/* Avro schema resolution as a compatibility check (contract in registry/avro.h).
 *
 * The rules are the specification's "Schema Resolution", judged the way Avro Java's
 * SchemaCompatibility judges them (and so Confluent): every incompatibility found is reported
 * with its location, a JSON pointer into the reader schema (/fields/0/type/items).
 *
 * A (reader node, writer node) pair is judged once: a memo maps each pair to its verdict, and
 * a pair met again while it is still being judged (a recursive type) is taken as compatible,
 * which ends the walk of cyclic graphs; the memo also keeps schemas that share named types from
 * being walked once per path. A union asks "does some branch read this?" without reasons (a
 * probe); a verdict a probe memoized is judged again when its reasons are wanted.
 *
 * Invariants:
 *   1. path[0, depth) is the location of the pair being judged; path[0] is the root's "".
 *   2. A memo entry is IN_PROGRESS exactly while its pair is on the C stack.
 *   3. The recursion is at most DEPTH_MAX deep; beyond it the pair is judged incompatible
 *      with a reason, never a stack overflow. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/check.h"
#include "base/mem.h"
#include "base/strbuf.h"
#include "registry/avro.h"
#include "registry/avro_impl.h"

#define DEPTH_MAX 2000

enum memo_state {
    MEMO_EMPTY,
    MEMO_IN_PROGRESS,
    MEMO_DONE,
};

struct memo {
    const struct avro_node *r; /* reader */
    const struct avro_node *w; /* writer */
    uint8_t state;             /* enum memo_state */
    bool ok;                   /* MEMO_DONE: the verdict */
    bool reported;             /* MEMO_DONE: judged with reasons wanted */
};

struct token {
    const char *s; /* a literal token, or NULL for a number */
    long idx;
};

struct cctx {
    struct memo *memo; /* open addressing, cap a power of two */
    size_t memo_cap;
    size_t memo_len;
    struct token *path;
    size_t depth;
    size_t path_cap;
    const char *rrole;
    const char *wrole;
};

/* ---- the memo ---- */

static size_t memo_hash(const struct avro_node *r, const struct avro_node *w)
{
    uint64_t h = (uint64_t)(uintptr_t)r * 0x9e3779b97f4a7c15ULL;
    h ^= (uint64_t)(uintptr_t)w + 0x7f4a7c159e3779b9ULL + (h << 6) + (h >> 2);
    h ^= h >> 29;
    return (size_t)h;
}

static struct memo *memo_find(struct cctx *c, const struct avro_node *r, const struct avro_node *w,
                              bool insert)
{
    if (insert && (c->memo_len + 1) * 2 > c->memo_cap) {
        size_t old_cap = c->memo_cap;
        struct memo *old = c->memo;
        c->memo_cap = old_cap ? old_cap * 2 : 64;
        c->memo = mem_calloc(c->memo_cap, sizeof(*c->memo));
        for (size_t i = 0; i < old_cap; i++) {
            if (old[i].state == MEMO_EMPTY)
                continue;
            size_t j = memo_hash(old[i].r, old[i].w) & (c->memo_cap - 1);
            while (c->memo[j].state != MEMO_EMPTY)
                j = (j + 1) & (c->memo_cap - 1);
            c->memo[j] = old[i];
        }
        mem_free(old);
    }
    if (c->memo_cap == 0)
        return NULL;
    size_t j = memo_hash(r, w) & (c->memo_cap - 1);
    while (c->memo[j].state != MEMO_EMPTY) {
        if (c->memo[j].r == r && c->memo[j].w == w)
            return &c->memo[j];
        j = (j + 1) & (c->memo_cap - 1);
    }
    if (!insert)
        return NULL;
    c->memo[j] = (struct memo){.r = r, .w = w, .state = MEMO_IN_PROGRESS};
    c->memo_len++;
    return &c->memo[j];
}

/* ---- locations and reasons ---- */

static void push(struct cctx *c, const char *s, long idx)
{
    MEM_GROW(c->path, c->path_cap, c->depth + 1);
    c->path[c->depth++] = (struct token){.s = s, .idx = idx};
}

static void pop(struct cctx *c)
{
    CHECK(c->depth > 0);
    c->depth--;
}

static void location(const struct cctx *c, struct strbuf *out)
{
    strbuf_putc(out, '/');
    for (size_t i = 1; i < c->depth; i++) {
        if (i > 1)
            strbuf_putc(out, '/');
        if (c->path[i].s)
            strbuf_puts(out, c->path[i].s); /* fixed words: nothing to escape */
        else
            strbuf_printf(out, "%ld", c->path[i].idx);
    }
}

enum kind {
    NAME_MISMATCH,
    FIXED_SIZE_MISMATCH,
    MISSING_ENUM_SYMBOLS,
    READER_FIELD_MISSING_DEFAULT_VALUE,
    TYPE_MISMATCH,
    MISSING_UNION_BRANCH,
};

static const char *const kind_names[] = {
    [NAME_MISMATCH] = "NAME_MISMATCH",
    [FIXED_SIZE_MISMATCH] = "FIXED_SIZE_MISMATCH",
    [MISSING_ENUM_SYMBOLS] = "MISSING_ENUM_SYMBOLS",
    [READER_FIELD_MISSING_DEFAULT_VALUE] = "READER_FIELD_MISSING_DEFAULT_VALUE",
    [TYPE_MISMATCH] = "TYPE_MISMATCH",
    [MISSING_UNION_BRANCH] = "MISSING_UNION_BRANCH",
};

/* One incompatibility, in Confluent's words (its Difference.error()). */
static bool incompatible(struct cctx *c, struct compat_reasons *reasons, enum kind k,
                         const char *info)
{
    if (!reasons)
        return false;
    struct strbuf p;
    strbuf_init(&p);
    location(c, &p);
    const char *path = strbuf_str(&p);
    struct strbuf d;
    strbuf_init(&d);
    switch (k) {
    case FIXED_SIZE_MISMATCH:
        strbuf_printf(&d,
                      "The size of FIXED type field at path '%s' in the %s schema does not "
                      "match with the %s schema",
                      path, c->rrole, c->wrole);
        break;
    case TYPE_MISMATCH:
        strbuf_printf(&d,
                      "The type (path '%s') of a field in the %s schema does not match with "
                      "the %s schema",
                      path, c->rrole, c->wrole);
        break;
    case NAME_MISMATCH:
        strbuf_printf(&d, "The name of the schema has changed (path '%s')", path);
        break;
    case MISSING_ENUM_SYMBOLS:
        strbuf_printf(&d,
                      "The %s schema is missing enum symbols '%s' at path '%s' in the %s "
                      "schema",
                      c->rrole, info, path, c->wrole);
        break;
    case MISSING_UNION_BRANCH:
        strbuf_printf(&d,
                      "The %s schema is missing a type inside a union field at path '%s' in "
                      "the %s schema",
                      c->rrole, path, c->wrole);
        break;
    case READER_FIELD_MISSING_DEFAULT_VALUE:
        strbuf_printf(&d,
                      "The field '%s' at path '%s' in the %s schema has no default value and "
                      "is missing in the %s schema",
                      info, path, c->rrole, c->wrole);
        break;
    }
    compat_reasons_add(reasons, "{errorType:'%s', description:'%s', additionalInfo:'%s'}",
                       kind_names[k], strbuf_str(&d), info);
    strbuf_destroy(&d);
    strbuf_destroy(&p);
    return false;
}

static bool type_mismatch(struct cctx *c, struct compat_reasons *reasons, const struct avro_node *r,
                          const struct avro_node *w)
{
    if (!reasons)
        return false;
    struct strbuf m;
    strbuf_init(&m);
    strbuf_printf(&m, "reader type: %s not compatible with writer type: %s",
                  avro_type_upper(r->type), avro_type_upper(w->type));
    incompatible(c, reasons, TYPE_MISMATCH, strbuf_str(&m));
    strbuf_destroy(&m);
    return false;
}

static bool missing_branch(struct cctx *c, struct compat_reasons *reasons,
                           const struct avro_node *w)
{
    if (!reasons)
        return false;
    struct strbuf m;
    strbuf_init(&m);
    strbuf_printf(&m, "reader union lacking writer type: %s", avro_type_upper(w->type));
    incompatible(c, reasons, MISSING_UNION_BRANCH, strbuf_str(&m));
    strbuf_destroy(&m);
    return false;
}

/* ---- the rules ---- */

static bool judge(struct cctx *c, const char *tok, long idx, const struct avro_node *r,
                  const struct avro_node *w, struct compat_reasons *reasons);

/* Whether r can read w, reasons aside (Avro Java's nested getCompatibility(reader, writer)). */
static bool probe(struct cctx *c, const struct avro_node *r, const struct avro_node *w)
{
    return judge(c, "", 0, r, w, NULL);
}

/* Names match: the same simple name, or the writer's full name is a reader alias. */
static bool check_names(struct cctx *c, const struct avro_node *r, const struct avro_node *w,
                        struct compat_reasons *reasons)
{
    if (strcmp(r->name.name, w->name.name) == 0)
        return true;
    for (size_t i = 0; i < r->n_aliases; i++) {
        const struct avro_name *a = &r->aliases[i];
        /* Java's getAliases() spells a null-namespace alias of a namespaced type ".name",
         * which then matches no full name. */
        if (!a->space && r->name.space)
            continue;
        if (strcmp(a->full, w->name.full) == 0)
            return true;
    }
    push(c, "name", 0);
    struct strbuf m;
    strbuf_init(&m);
    strbuf_printf(&m, "expected: %s", w->name.full);
    incompatible(c, reasons, NAME_MISMATCH, strbuf_str(&m));
    strbuf_destroy(&m);
    pop(c);
    return false;
}

static bool check_size(struct cctx *c, const struct avro_node *r, const struct avro_node *w,
                       struct compat_reasons *reasons)
{
    if (r->size == w->size)
        return true;
    push(c, "size", 0);
    struct strbuf m;
    strbuf_init(&m);
    strbuf_printf(&m, "expected: %d, found: %d", (int)w->size, (int)r->size);
    incompatible(c, reasons, FIXED_SIZE_MISMATCH, strbuf_str(&m));
    strbuf_destroy(&m);
    pop(c);
    return false;
}

static int sym_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every writer symbol is a reader symbol, or the reader has a default to read it as. */
static bool check_symbols(struct cctx *c, const struct avro_node *r, const struct avro_node *w,
                          struct compat_reasons *reasons)
{
    const char **missing = mem_alloc((w->n_symbols + 1) * sizeof(*missing));
    size_t n = 0;
    for (size_t i = 0; i < w->n_symbols; i++)
        if (avro_enum_symbol(r, w->symbols[i], strlen(w->symbols[i])) < 0)
            missing[n++] = w->symbols[i];
    bool ok = n == 0 || r->enum_default;
    if (!ok && reasons) {
        qsort(missing, n, sizeof(*missing), sym_cmp);
        struct strbuf m;
        strbuf_init(&m);
        strbuf_putc(&m, '[');
        for (size_t i = 0; i < n; i++)
            strbuf_printf(&m, "%s%s", i ? ", " : "", missing[i]);
        strbuf_putc(&m, ']');
        push(c, "symbols", 0);
        incompatible(c, reasons, MISSING_ENUM_SYMBOLS, strbuf_str(&m));
        pop(c);
        strbuf_destroy(&m);
    }
    mem_free(missing);
    return ok;
}

/* The writer field a reader field reads: by name or by one of the reader field's aliases.
 * *several is set when they name different writer fields (Avro Java throws there). */
static const struct avro_field *writer_field(const struct avro_node *w, const struct avro_field *rf,
                                             bool *several)
{
    const struct avro_field *found = avro_record_field(w, rf->name, strlen(rf->name));
    *several = false;
    for (size_t k = 0; k < rf->n_aliases; k++) {
        const struct avro_field *wf = avro_record_field(w, rf->aliases[k], strlen(rf->aliases[k]));
        if (!wf || wf == found)
            continue;
        if (found)
            *several = true;
        else
            found = wf;
    }
    return found;
}

static bool check_fields(struct cctx *c, const struct avro_node *r, const struct avro_node *w,
                         struct compat_reasons *reasons)
{
    bool ok = true;
    push(c, "fields", 0);
    for (size_t i = 0; i < r->n_fields; i++) {
        const struct avro_field *rf = &r->fields[i];
        push(c, NULL, (long)i);
        bool several;
        const struct avro_field *wf = writer_field(w, rf, &several);
        if (several) {
            compat_reasons_add(reasons,
                               "Unexpected exception during compatibility check: Reader record "
                               "field %s matches multiple fields in writer record schema %s",
                               rf->name, w->name.full);
            ok = false;
        } else if (wf) {
            ok = judge(c, "type", 0, rf->type, wf->type, reasons) && ok;
        } else if (!rf->def) {
            if (rf->type->type == AVRO_ENUM && rf->type->enum_default)
                /* Avro Java judges the field's enum against the writer record here: a type
                 * mismatch, whatever the enum's default. */
                ok = judge(c, "type", 0, rf->type, w, reasons) && ok;
            else
                ok = incompatible(c, reasons, READER_FIELD_MISSING_DEFAULT_VALUE, rf->name) && ok;
        }
        pop(c);
    }
    pop(c);
    return ok;
}

static bool same_type(struct cctx *c, const struct avro_node *r, const struct avro_node *w,
                      struct compat_reasons *reasons)
{
    bool ok = true;
    switch (r->type) {
    case AVRO_ARRAY:
        return judge(c, "items", 0, r->items, w->items, reasons);
    case AVRO_MAP:
        return judge(c, "values", 0, r->items, w->items, reasons);
    case AVRO_FIXED:
    case AVRO_ENUM:
    case AVRO_RECORD:
        /* Both checks run when reasons are wanted (Avro Java reports both); a probe stops at
         * the first. */
        ok = check_names(c, r, w, reasons);
        if (!ok && !reasons)
            return false;
        if (r->type == AVRO_FIXED)
            return check_size(c, r, w, reasons) && ok;
        if (r->type == AVRO_ENUM)
            return check_symbols(c, r, w, reasons) && ok;
        return check_fields(c, r, w, reasons) && ok;
    case AVRO_UNION:
        /* Every branch the writer may have written must be readable by the reader union. */
        for (size_t i = 0; i < w->n_branches; i++) {
            push(c, NULL, (long)i);
            if (!probe(c, r, w->branches[i]))
                ok = missing_branch(c, reasons, w->branches[i]);
            pop(c);
        }
        return ok;
    default:
        return true; /* the same primitive */
    }
}

static bool promotable(enum avro_type r, enum avro_type w)
{
    switch (r) {
    case AVRO_LONG:
        return w == AVRO_INT;
    case AVRO_FLOAT:
        return w == AVRO_INT || w == AVRO_LONG;
    case AVRO_DOUBLE:
        return w == AVRO_INT || w == AVRO_LONG || w == AVRO_FLOAT;
    case AVRO_BYTES:
        return w == AVRO_STRING;
    case AVRO_STRING:
        return w == AVRO_BYTES;
    default:
        return false;
    }
}

static bool calculate(struct cctx *c, const struct avro_node *r, const struct avro_node *w,
                      struct compat_reasons *reasons)
{
    if (r->type == w->type)
        return same_type(c, r, w, reasons);
    if (w->type == AVRO_UNION) {
        /* The reader must read each branch the writer may have written. */
        bool ok = true;
        for (size_t i = 0; i < w->n_branches; i++)
            ok = judge(c, NULL, (long)i, r, w->branches[i], reasons) && ok;
        return ok;
    }
    if (r->type == AVRO_UNION) {
        for (size_t i = 0; i < r->n_branches; i++)
            if (probe(c, r->branches[i], w))
                return true;
        return missing_branch(c, reasons, w);
    }
    if (promotable(r->type, w->type))
        return true;
    return type_mismatch(c, reasons, r, w);
}

/* Avro Java's getCompatibility(token, reader, writer, location), memoized. */
static bool judge(struct cctx *c, const char *tok, long idx, const struct avro_node *r,
                  const struct avro_node *w, struct compat_reasons *reasons)
{
    push(c, tok, idx);
    bool ok;
    struct memo *m = memo_find(c, r, w, false);
    if (m && m->state == MEMO_IN_PROGRESS) {
        ok = true; /* met again while being judged: compatible unless shown otherwise */
    } else if (m && (m->ok || m->reported || !reasons)) {
        ok = m->ok;
    } else if (c->depth > DEPTH_MAX) {
        compat_reasons_add(reasons, "the schemas nest too deeply to compare (over %d levels)",
                           DEPTH_MAX);
        ok = false;
    } else {
        if (m)
            m->state = MEMO_IN_PROGRESS; /* a probe's verdict, judged again with reasons */
        else
            memo_find(c, r, w, true);
        ok = calculate(c, r, w, reasons);
        m = memo_find(c, r, w, false); /* the table may have grown meanwhile */
        m->state = MEMO_DONE;
        m->ok = ok;
        m->reported = reasons != NULL;
    }
    pop(c);
    return ok;
}

bool avro_can_read(const struct avro_schema *reader, const struct avro_schema *writer,
                   const char *reader_role, const char *writer_role, struct compat_reasons *reasons)
{
    struct cctx c = {.rrole = reader_role, .wrole = writer_role};
    bool ok = judge(&c, "", 0, reader->root, writer->root, reasons);
    CHECK(c.depth == 0);
    mem_free(c.memo);
    mem_free(c.path);
    return ok;
}

bool avro_compat_can_read(const void *reader, const void *writer, const char *reader_role,
                          const char *writer_role, struct compat_reasons *reasons, void *data)
{
    (void)data;
    return avro_can_read(reader, writer, reader_role, writer_role, reasons);
}
