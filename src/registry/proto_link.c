/* Imports, names and the rules that need them (see proto_ast.h, proto_link()).
 *
 * Stages, each over every file of the schema, each ending at the first error:
 *  1. load: every import, depth first, through the caller's lookup and then the built-ins;
 *     a file on the path being loaded again is a cycle. Files are parsed as .proto text, or
 *     (if that fails) as base64 of a FileDescriptorProto.
 *  2. symbols: every package (and its prefixes), type, field, oneof, enum value (in the scope
 *     around its enum, as C++ scoping has it), extension, service and method, by full name.
 *  3. resolve: every type name, with protoc's rules (below), then whether its file is visible.
 *  4. check: numbers, reserved ranges and names, enums, defaults, maps, extensions, proto3.
 *
 * Name resolution (protoc's DescriptorBuilder::LookupSymbol): ".a.B" is absolute. "a.B" from
 * scope x.y: look for the first part "a" as x.y.a, x.a, a in turn; the first that exists and
 * can hold names (a package, message, enum or service) decides: "a.B" must be defined in it, or
 * the name is an error (no further search). A single name "B" found but not a type continues
 * outward. A file sees its own names, those of the files it imports, and those those files
 * import publicly, transitively. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/mem.h"
#include "registry/proto_ast.h"

struct linker {
    struct proto_schema *s;
    proto_lookup_fn lookup;
    void *data;
    char *err;
    size_t errcap;
    bool failed;
    bool *visible;     /* visible[i * n + j]: file j's names are visible from file i */
    size_t n_files;
    const char *chain[PROTO_DEPTH_MAX + 2]; /* paths being loaded, for cycle messages */
    int depth;
};

static int file_index(const struct linker *L, const struct proto_file *f)
{
    for (size_t i = 0; i < L->s->files.n; i++)
        if (L->s->files.v[i] == f)
            return (int)i;
    return -1;
}

__attribute__((format(printf, 4, 5))) static void fail_at(struct linker *L,
                                                          const struct proto_file *f,
                                                          struct proto_pos pos, const char *fmt,
                                                          ...)
{
    if (L->failed)
        return;
    L->failed = true;
    if (L->errcap == 0)
        return;
    int n = 0;
    const char *path = f && f->path[0] ? f->path : NULL;
    if (pos.line && path)
        n = snprintf(L->err, L->errcap, "%s:%u:%u: ", path, pos.line, pos.col);
    else if (pos.line)
        n = snprintf(L->err, L->errcap, "%u:%u: ", pos.line, pos.col);
    else if (path)
        n = snprintf(L->err, L->errcap, "%s: ", path);
    if (n < 0 || (size_t)n >= L->errcap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->err + n, L->errcap - (size_t)n, fmt, ap);
    va_end(ap);
}

/* ---- 1. load ---- */

static struct proto_file *file_new(struct proto_schema *s, const char *path, const char *id)
{
    struct proto_file *f = proto_alloc(s, sizeof(*f));
    memset(f, 0, sizeof(*f));
    f->path = proto_strndup(s, path, strlen(path));
    f->id = id ? proto_strndup(s, id, strlen(id)) : NULL;
    f->syntax = 2;
    return f;
}

/* Parses text as .proto, or else as base64 of a FileDescriptorProto. */
static int parse_source(struct linker *L, struct proto_file *f, const char *text, size_t len)
{
    L->s->text_total += len;
    if (L->s->text_total > PROTO_TEXT_MAX) {
        fail_at(L, f, (struct proto_pos){0}, "Schema too large: its text and imports pass %u "
                "bytes.", (unsigned)PROTO_TEXT_MAX);
        return -1;
    }
    if (proto_parse_text(L->s, f, text, len, L->err, L->errcap) == 0)
        return 0;
    size_t blen = 0;
    uint8_t *bytes = proto_base64_decode(text, len, &blen);
    if (bytes) {
        /* Start f again: a failed text parse may have left declarations in it. */
        const char *path = f->path, *id = f->id;
        int state = f->state;
        memset(f, 0, sizeof(*f));
        f->path = path;
        f->id = id;
        f->state = state;
        f->syntax = 2;
        char err2[PROTO_ERR_MAX];
        int rc = proto_parse_descriptor(L->s, f, bytes, blen, err2, sizeof(err2));
        mem_free(bytes);
        if (rc == 0)
            return 0;
        if (L->errcap)
            snprintf(L->err, L->errcap, "%s%sNot .proto text; as base64 of a "
                     "FileDescriptorProto: %s", f->path, f->path[0] ? ": " : "", err2);
    }
    L->failed = true;
    return -1;
}

static struct proto_file *load(struct linker *L, const char *path, const struct proto_file *from,
                               struct proto_pos pos);

static void load_imports(struct linker *L, struct proto_file *f)
{
    for (size_t i = 0; i < f->imports.n && !L->failed; i++) {
        struct proto_import *im = f->imports.v[i];
        im->file = load(L, im->path, f, im->pos);
    }
}

static struct proto_file *load(struct linker *L, const char *path, const struct proto_file *from,
                               struct proto_pos pos)
{
    for (size_t i = 0; i < L->s->files.n; i++) {
        struct proto_file *f = L->s->files.v[i];
        if (strcmp(f->path, path) != 0)
            continue;
        if (f->state == 2)
            return f;
        char chain[PROTO_ERR_MAX / 2] = "";
        size_t used = 0;
        for (int d = 1; d <= L->depth && used < sizeof(chain); d++) {
            int n = snprintf(chain + used, sizeof(chain) - used, "%s -> ", L->chain[d]);
            used += n > 0 ? (size_t)n : 0;
        }
        fail_at(L, from, pos, "File recursively imports itself: %s%s", chain, path);
        return NULL;
    }
    if (L->depth > PROTO_DEPTH_MAX) {
        fail_at(L, from, pos, "Imports nested too deeply (more than %d levels).", PROTO_DEPTH_MAX);
        return NULL;
    }
    if (L->s->files.n >= PROTO_FILES_MAX) {
        fail_at(L, from, pos, "Too many imported files (more than %d).", PROTO_FILES_MAX - 1);
        return NULL;
    }
    /* Built-ins are the same file in every schema: one id each, so comparisons skip them. */
    char builtin_id[PROTO_ERR_MAX];
    snprintf(builtin_id, sizeof(builtin_id), "builtin:%s", path);
    struct proto_source src = {0};
    int rc = L->lookup ? L->lookup(path, &src, L->data) : -ERR_NOT_FOUND;
    if (rc == -ERR_NOT_FOUND) {
        const char *b = proto_builtin(path);
        if (b) {
            src.text = b;
            src.len = strlen(b);
            src.id = builtin_id;
            rc = 0;
        }
    }
    if (rc != 0 || !src.text) {
        fail_at(L, from, pos, "Import \"%.100s\" was not found (no schema reference of that "
                "name).", path);
        return NULL;
    }
    struct proto_file *f = file_new(L->s, path, src.id);
    f->state = 1;
    pvec_push(L->s, &L->s->files, f);
    if (parse_source(L, f, src.text, src.len) != 0)
        return NULL;
    f->state = 1;
    L->chain[++L->depth] = f->path;
    load_imports(L, f);
    L->depth--;
    f->state = 2;
    return f;
}

/* visible[i][j] for every pair: j is i, a direct import of i, or a public import (transitively)
 * of a visible import. */
static void compute_visibility(struct linker *L)
{
    size_t n = L->s->files.n;
    L->n_files = n;
    L->visible = mem_calloc(n * n, sizeof(bool));
    for (size_t i = 0; i < n; i++) {
        bool *row = L->visible + i * n;
        const struct proto_file *f = L->s->files.v[i];
        row[i] = true;
        for (size_t k = 0; k < f->imports.n; k++)
            row[file_index(L, ((struct proto_import *)f->imports.v[k])->file)] = true;
        /* Close over public imports of visible files (other than i itself). */
        bool grew = true;
        while (grew) {
            grew = false;
            for (size_t j = 0; j < n; j++) {
                if (!row[j] || j == i)
                    continue;
                const struct proto_file *g = L->s->files.v[j];
                for (size_t k = 0; k < g->imports.n; k++) {
                    const struct proto_import *im = g->imports.v[k];
                    int t = file_index(L, im->file);
                    if (im->kind == PI_PUBLIC && !row[t]) {
                        row[t] = true;
                        grew = true;
                    }
                }
            }
        }
    }
}

static bool visible_from(const struct linker *L, const struct proto_file *from,
                         const struct proto_file *to)
{
    if (!to)
        return true; /* packages */
    return L->visible[(size_t)file_index(L, from) * L->n_files + (size_t)file_index(L, to)];
}

/* ---- 2. symbols ---- */

static const char *join(struct proto_schema *s, const char *scope, const char *name)
{
    if (!scope || !scope[0])
        return proto_strndup(s, name, strlen(name));
    size_t a = strlen(scope), b = strlen(name);
    char *r = proto_alloc(s, a + b + 2);
    memcpy(r, scope, a);
    r[a] = '.';
    memcpy(r + a + 1, name, b + 1);
    return r;
}

static const char *sym_kind_name(enum proto_sym_kind k)
{
    switch (k) {
    case SYM_PACKAGE: return "package";
    case SYM_MESSAGE: return "message";
    case SYM_ENUM: return "enum";
    case SYM_ENUM_VALUE: return "enum value";
    case SYM_FIELD: return "field";
    case SYM_ONEOF: return "oneof";
    case SYM_EXTENSION: return "extension";
    case SYM_SERVICE: return "service";
    case SYM_RPC: return "method";
    }
    return "symbol";
}

static void add_sym(struct linker *L, struct proto_file *f, const char *full,
                    enum proto_sym_kind kind, void *node, struct proto_pos pos)
{
    if (L->failed)
        return;
    struct proto_sym *old = strmap_get(&L->s->syms, full, strlen(full));
    if (old) {
        if (kind == SYM_PACKAGE && old->kind == SYM_PACKAGE)
            return;
        const char *dot = strrchr(full, '.');
        const char *name = dot ? dot + 1 : full;
        int scope_len = dot ? (int)(dot - full) : 0;
        if (kind == SYM_PACKAGE || old->kind == SYM_PACKAGE)
            fail_at(L, f, pos, "\"%.100s\" is already defined (as something other than a "
                    "package) in file \"%.100s\".", full,
                    old->file && old->file->path[0] ? old->file->path : "the schema");
        else if (old->file != f)
            fail_at(L, f, pos, "\"%.100s\" is already defined in file \"%.100s\".", full,
                    old->file->path[0] ? old->file->path : "the schema");
        else if (kind == SYM_ENUM_VALUE && old->kind == SYM_ENUM_VALUE)
            fail_at(L, f, pos, "\"%.60s\" is already defined in \"%.*s\". Note that enum "
                    "values use C++ scoping rules, meaning that enum values are siblings of "
                    "their type, not children of it.", name, scope_len, full);
        else
            fail_at(L, f, pos, "\"%.60s\" is already defined in \"%.*s\" (as a %s).", name,
                    scope_len > 100 ? 100 : scope_len, full, sym_kind_name(old->kind));
        return;
    }
    struct proto_sym *sym = proto_alloc(L->s, sizeof(*sym));
    sym->kind = kind;
    sym->file = kind == SYM_PACKAGE ? NULL : f;
    sym->node = node;
    strmap_put(&L->s->syms, full, strlen(full), sym);
}

static void add_fields(struct linker *L, struct proto_file *f, const char *scope,
                       const struct pvec *fields, enum proto_sym_kind kind)
{
    for (size_t i = 0; i < fields->n; i++) {
        struct proto_field *fd = fields->v[i];
        add_sym(L, f, join(L->s, scope, fd->name), kind, fd, fd->pos);
    }
}

static void add_extends(struct linker *L, struct proto_file *f, const char *scope,
                        const struct pvec *extends)
{
    for (size_t i = 0; i < extends->n; i++) {
        const struct proto_extend *x = extends->v[i];
        add_fields(L, f, scope, &x->fields, SYM_EXTENSION);
    }
}

static void add_type(struct linker *L, struct proto_file *f, const char *scope,
                     struct proto_type *t)
{
    t->full_name = join(L->s, scope, t->name);
    if (t->kind == PT_ENUM) {
        add_sym(L, f, t->full_name, SYM_ENUM, t, t->pos);
        for (size_t i = 0; i < t->values.n; i++) {
            struct proto_enum_value *v = t->values.v[i];
            add_sym(L, f, join(L->s, scope, v->name), SYM_ENUM_VALUE, v, v->pos);
        }
        return;
    }
    add_sym(L, f, t->full_name, SYM_MESSAGE, t, t->pos);
    /* A map's entry message, as a descriptor (or its canonical text) declares one. */
    t->map_entry = proto_option_true(&t->options, "map_entry");
    add_fields(L, f, t->full_name, &t->fields, SYM_FIELD);
    for (size_t i = 0; i < t->oneofs.n; i++) {
        struct proto_oneof *o = t->oneofs.v[i];
        add_sym(L, f, join(L->s, t->full_name, o->name), SYM_ONEOF, o, o->pos);
        add_fields(L, f, t->full_name, &o->fields, SYM_FIELD);
    }
    for (size_t i = 0; i < t->nested.n; i++)
        add_type(L, f, t->full_name, t->nested.v[i]);
    add_extends(L, f, t->full_name, &t->extends);
}

static void add_file(struct linker *L, struct proto_file *f)
{
    const char *pkg = f->package ? f->package : "";
    /* Every prefix of the package is a package: a, a.b, a.b.c. */
    if (*pkg) {
        size_t len = strlen(pkg);
        for (size_t i = 1; i <= len; i++)
            if (i == len || pkg[i] == '.')
                add_sym(L, f, proto_strndup(L->s, pkg, i), SYM_PACKAGE, NULL, (struct proto_pos){0});
    }
    for (size_t i = 0; i < f->types.n; i++)
        add_type(L, f, pkg, f->types.v[i]);
    add_extends(L, f, pkg, &f->extends);
    for (size_t i = 0; i < f->services.n; i++) {
        struct proto_service *svc = f->services.v[i];
        const char *full = join(L->s, pkg, svc->name);
        add_sym(L, f, full, SYM_SERVICE, svc, svc->pos);
        for (size_t k = 0; k < svc->rpcs.n; k++) {
            struct proto_rpc *r = svc->rpcs.v[k];
            add_sym(L, f, join(L->s, full, r->name), SYM_RPC, r, r->pos);
        }
    }
}

/* ---- 3. resolve ---- */

static struct proto_sym *find(const struct linker *L, const char *name, size_t len)
{
    return strmap_get(&L->s->syms, name, len);
}

static bool is_aggregate(const struct proto_sym *sym)
{
    return sym->kind == SYM_PACKAGE || sym->kind == SYM_MESSAGE || sym->kind == SYM_ENUM ||
           sym->kind == SYM_SERVICE;
}

static bool is_type(const struct proto_sym *sym)
{
    return sym->kind == SYM_MESSAGE || sym->kind == SYM_ENUM;
}

/* The symbol name (as written) resolves to from scope (a full name, "" for the root), or NULL
 * with a message. */
static const struct proto_sym *lookup_name(struct linker *L, struct proto_file *f,
                                           const char *scope, const char *name,
                                           struct proto_pos pos)
{
    const struct proto_sym *sym = NULL;
    if (name[0] == '.') {
        sym = find(L, name + 1, strlen(name + 1));
        if (!sym) {
            fail_at(L, f, pos, "\"%.200s\" is not defined.", name);
            return NULL;
        }
    } else {
        const char *dot = strchr(name, '.');
        size_t first = dot ? (size_t)(dot - name) : strlen(name);
        size_t slen = strlen(scope);
        char *buf = mem_alloc(slen + strlen(name) + 2);
        for (;;) {
            size_t n = 0;
            if (slen) {
                memcpy(buf, scope, slen);
                buf[slen] = '.';
                n = slen + 1;
            }
            memcpy(buf + n, name, first);
            const struct proto_sym *s1 = find(L, buf, n + first);
            if (s1 && !dot && is_type(s1)) {
                sym = s1;
                break;
            }
            if (s1 && dot && is_aggregate(s1)) {
                strcpy(buf + n, name);
                sym = find(L, buf, strlen(buf));
                if (!sym) {
                    fail_at(L, f, pos, "\"%.100s\" is resolved to \"%.100s\", which is not "
                            "defined. The innermost scope is searched first in name "
                            "resolution. Consider using a leading '.'(i.e., \".%.100s\") to "
                            "start from the outermost scope.", name, buf, name);
                    mem_free(buf);
                    return NULL;
                }
                break;
            }
            if (slen == 0)
                break;
            while (slen > 0 && scope[slen - 1] != '.')
                slen--;
            if (slen > 0)
                slen--; /* drop the dot */
        }
        mem_free(buf);
        if (!sym) {
            fail_at(L, f, pos, "\"%.200s\" is not defined.", name);
            return NULL;
        }
    }
    if (!visible_from(L, f, sym->file)) {
        fail_at(L, f, pos, "\"%.100s\" seems to be defined in \"%.100s\", which is not imported "
                "by \"%.100s\".  To use it here, please add the necessary import.", name,
                sym->file->path, f->path[0] ? f->path : "the schema");
        return NULL;
    }
    return sym;
}

static void resolve_tref(struct linker *L, struct proto_file *f, const char *scope,
                         struct proto_tref *t, bool message_only)
{
    if (L->failed || t->scalar || !t->text)
        return;
    const struct proto_sym *sym = lookup_name(L, f, scope, t->text, t->pos);
    if (!sym)
        return;
    if (!is_type(sym)) {
        fail_at(L, f, t->pos, "\"%.200s\" is not a type.", t->text);
        return;
    }
    if (message_only && sym->kind != SYM_MESSAGE) {
        fail_at(L, f, t->pos, "\"%.200s\" is not a message type.", t->text);
        return;
    }
    if (message_only && ((struct proto_type *)sym->node)->map_entry) {
        fail_at(L, f, t->pos, "\"%.200s\" is a map entry message.", t->text);
        return;
    }
    t->type = sym->node;
}

/* A map entry message stands for a map: only a repeated field of the message around it may
 * name it (entry_ok: fields is that message's own). */
static void check_entry_use(struct linker *L, struct proto_file *f, const struct proto_field *fd,
                            bool entry_ok)
{
    const struct proto_type *t = fd->type.type;
    if (!t || !t->map_entry)
        return;
    if (!entry_ok || fd->is_map || fd->label != PL_REPEATED || t->parent != fd->scope)
        fail_at(L, f, fd->type.pos, "Map entry message \"%.100s\" can only be the type of a "
                "repeated field of \"%.100s\".", t->full_name,
                t->parent ? t->parent->full_name : "");
}

static void resolve_fields(struct linker *L, struct proto_file *f, const char *scope,
                           const struct pvec *fields, bool entry_ok)
{
    for (size_t i = 0; i < fields->n && !L->failed; i++) {
        struct proto_field *fd = fields->v[i];
        resolve_tref(L, f, scope, &fd->type, false);
        if (fd->is_map)
            resolve_tref(L, f, scope, &fd->key, false);
        if (!L->failed)
            check_entry_use(L, f, fd, entry_ok);
    }
}

static void resolve_groups(struct linker *L, struct proto_file *f, const char *scope,
                           const struct pvec *groups)
{
    for (size_t i = 0; i < groups->n; i++)
        resolve_fields(L, f, scope, &((struct proto_group *)groups->v[i])->fields, false);
}

static void resolve_extends(struct linker *L, struct proto_file *f, const char *scope,
                            const struct pvec *extends)
{
    for (size_t i = 0; i < extends->n && !L->failed; i++) {
        struct proto_extend *x = extends->v[i];
        resolve_tref(L, f, scope, &x->extendee, true);
        for (size_t k = 0; k < x->fields.n; k++)
            ((struct proto_field *)x->fields.v[k])->extendee = x->extendee;
        resolve_fields(L, f, scope, &x->fields, false);
    }
}

static void resolve_type(struct linker *L, struct proto_file *f, struct proto_type *t)
{
    if (t->kind != PT_MESSAGE)
        return;
    resolve_fields(L, f, t->full_name, &t->fields, true);
    for (size_t i = 0; i < t->oneofs.n; i++) {
        struct proto_oneof *o = t->oneofs.v[i];
        resolve_fields(L, f, t->full_name, &o->fields, false);
        resolve_groups(L, f, t->full_name, &o->groups);
    }
    resolve_groups(L, f, t->full_name, &t->groups);
    resolve_extends(L, f, t->full_name, &t->extends);
    for (size_t i = 0; i < t->nested.n; i++)
        resolve_type(L, f, t->nested.v[i]);
}

static void resolve_file(struct linker *L, struct proto_file *f)
{
    const char *pkg = f->package ? f->package : "";
    for (size_t i = 0; i < f->types.n; i++)
        resolve_type(L, f, f->types.v[i]);
    resolve_extends(L, f, pkg, &f->extends);
    for (size_t i = 0; i < f->services.n; i++) {
        struct proto_service *svc = f->services.v[i];
        for (size_t k = 0; k < svc->rpcs.n; k++) {
            struct proto_rpc *r = svc->rpcs.v[k];
            resolve_tref(L, f, pkg, &r->req, true);
            resolve_tref(L, f, pkg, &r->resp, true);
        }
    }
}

/* ---- 4. check ---- */

static bool valid_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

/* Integer text (as proto_parse wrote it: optional '-', then decimal, 0x hex or 0 octal). */
static bool parse_int_text(const char *s, bool *neg, uint64_t *v)
{
    *neg = false;
    if (*s == '-') {
        *neg = true;
        s++;
    }
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    } else if (s[0] == '0' && s[1]) {
        base = 8;
        s++;
    }
    if (!*s)
        return false;
    uint64_t r = 0;
    for (; *s; s++) {
        int d;
        if (*s >= '0' && *s <= '9')
            d = *s - '0';
        else if (*s >= 'a' && *s <= 'f')
            d = *s - 'a' + 10;
        else if (*s >= 'A' && *s <= 'F')
            d = *s - 'A' + 10;
        else
            return false;
        if (d >= base || r > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
            return false;
        r = r * (uint64_t)base + (uint64_t)d;
    }
    *v = r;
    return true;
}

static bool is_float_word(const char *s)
{
    if (*s == '-')
        s++;
    return strcmp(s, "inf") == 0 || strcmp(s, "infinity") == 0 || strcmp(s, "nan") == 0;
}

/* A number as the tokenizer reads one, with an optional minus: 12, 0x1f, 017, 1.5, .5,
 * 1e-3, or -inf / -nan (descriptors carry defaults as text). */
static bool is_number_text(const char *s)
{
    bool neg;
    uint64_t u;
    if (is_float_word(s) || parse_int_text(s, &neg, &u))
        return true;
    if (*s == '-')
        s++;
    size_t digits = 0;
    while (*s >= '0' && *s <= '9')
        s++, digits++;
    if (*s == '.') {
        s++;
        while (*s >= '0' && *s <= '9')
            s++, digits++;
    }
    if (digits == 0)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

static void check_default(struct linker *L, struct proto_file *f, const struct proto_field *fd)
{
    const struct proto_val *v = fd->dflt;
    struct proto_pos pos = fd->pos;
    if (f->syntax == 3) {
        fail_at(L, f, pos, "Explicit default values are not allowed in proto3.");
        return;
    }
    if (fd->label == PL_REPEATED) {
        fail_at(L, f, pos, "Repeated fields can't have default values.");
        return;
    }
    if (fd->type.type && fd->type.type->kind == PT_MESSAGE) {
        fail_at(L, f, pos, "Messages can't have default values.");
        return;
    }
    if (fd->type.type) { /* enum */
        const struct proto_type *e = fd->type.type;
        if (v->kind != PV_ENUM) {
            fail_at(L, f, pos, "Default value for an enum field must be an identifier.");
            return;
        }
        for (size_t i = 0; i < e->values.n; i++)
            if (strcmp(((struct proto_enum_value *)e->values.v[i])->name, v->s) == 0)
                return;
        fail_at(L, f, pos, "Enum type \"%.100s\" has no value named \"%.100s\".", e->full_name,
                v->s);
        return;
    }
    int sc = fd->type.scalar;
    if (sc == PS_STRING || sc == PS_BYTES) {
        if (v->kind != PV_STRING)
            fail_at(L, f, pos, "Expected string for field default value.");
        return;
    }
    if (sc == PS_BOOL) {
        if (v->kind != PV_BOOL)
            fail_at(L, f, pos, "Expected \"true\" or \"false\".");
        return;
    }
    if (sc == PS_FLOAT || sc == PS_DOUBLE) {
        if ((v->kind == PV_NUMBER && is_number_text(v->s)) ||
            (v->kind == PV_ENUM && is_float_word(v->s)))
            return;
        fail_at(L, f, pos, "Expected number.");
        return;
    }
    bool neg;
    uint64_t u;
    if (v->kind != PV_NUMBER || !parse_int_text(v->s, &neg, &u)) {
        fail_at(L, f, pos, "Expected integer for field default value.");
        return;
    }
    bool is_unsigned = sc == PS_UINT32 || sc == PS_UINT64 || sc == PS_FIXED32 || sc == PS_FIXED64;
    bool is32 = sc == PS_INT32 || sc == PS_UINT32 || sc == PS_SINT32 || sc == PS_FIXED32 ||
                sc == PS_SFIXED32;
    uint64_t max = is_unsigned ? (is32 ? UINT32_MAX : UINT64_MAX)
                               : (is32 ? (uint64_t)INT32_MAX : (uint64_t)INT64_MAX);
    if (neg && is_unsigned) {
        fail_at(L, f, pos, "Unsigned field can't have negative default value.");
        return;
    }
    if (neg ? u > max + 1 : u > max)
        fail_at(L, f, pos, "Integer out of range.");
}

struct num_use {
    int64_t start;
    int64_t end;
    const char *name;  /* the field, or NULL for a range */
    struct proto_pos pos;
};

static int num_use_cmp(const void *a, const void *b)
{
    const struct num_use *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

static void range_text(char *buf, size_t cap, const struct num_use *u)
{
    if (u->start == u->end)
        snprintf(buf, cap, "%lld", (long long)u->start);
    else
        snprintf(buf, cap, "%lld to %lld", (long long)u->start, (long long)u->end);
}

/* Reserved or extension ranges of a message/enum must be valid and must not overlap each other
 * (kind: "Reserved" / "Extension"). Appends them to uses. */
static void collect_ranges(struct linker *L, struct proto_file *f, const struct pvec *stmts,
                           const char *kind, int64_t lo, struct num_use **uses, size_t *n,
                           size_t *cap)
{
    for (size_t i = 0; i < stmts->n; i++) {
        const struct proto_ranges *r = stmts->v[i];
        for (size_t k = 0; k < r->items.n; k++) {
            const struct proto_range *it = r->items.v[k];
            if (it->name)
                continue;
            if (it->start < lo) {
                fail_at(L, f, r->pos, "%s numbers must be positive integers.", kind);
                return;
            }
            if (it->end < it->start) {
                fail_at(L, f, r->pos, "%s range end number must be greater than start number.",
                        kind);
                return;
            }
            MEM_GROW(*uses, *cap, *n + 1);
            (*uses)[(*n)++] = (struct num_use){it->start, it->end, NULL, r->pos};
        }
    }
}

static void check_overlaps(struct linker *L, struct proto_file *f, struct num_use *u, size_t n,
                           const char *kind)
{
    if (n > 1)
        qsort(u, n, sizeof(*u), num_use_cmp);
    for (size_t i = 1; i < n; i++) {
        if (u[i].start <= u[i - 1].end) {
            char a[48], b[48];
            range_text(a, sizeof(a), &u[i]);
            range_text(b, sizeof(b), &u[i - 1]);
            fail_at(L, f, u[i].pos, "%s range %s overlaps with already-defined range %s.", kind,
                    a, b);
            return;
        }
    }
}

/* Is number inside one of ranges[0, n) (sorted)? */
static const struct num_use *in_ranges(const struct num_use *r, size_t n, int64_t number)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (r[mid].end < number)
            lo = mid + 1;
        else if (r[mid].start > number)
            hi = mid;
        else
            return &r[mid];
    }
    return NULL;
}

static int cstr_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The reserved names of stmts, sorted (release with mem_free). */
static const char **reserved_names(const struct pvec *stmts, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < stmts->n; i++)
        total += ((const struct proto_ranges *)stmts->v[i])->items.n;
    const char **v = mem_calloc(total ? total : 1, sizeof(*v));
    *n = 0;
    for (size_t i = 0; i < stmts->n; i++) {
        const struct proto_ranges *r = stmts->v[i];
        for (size_t k = 0; k < r->items.n; k++) {
            const struct proto_range *it = r->items.v[k];
            if (it->name)
                v[(*n)++] = it->name;
        }
    }
    if (*n > 1)
        qsort(v, *n, sizeof(*v), cstr_cmp);
    return v;
}

static bool name_in(const char **names, size_t n, const char *name)
{
    return n && bsearch(&name, names, n, sizeof(*names), cstr_cmp) != NULL;
}

static void check_reserved_names(struct linker *L, struct proto_file *f, const struct pvec *stmts)
{
    for (size_t i = 0; i < stmts->n; i++) {
        const struct proto_ranges *r = stmts->v[i];
        for (size_t k = 0; k < r->items.n; k++) {
            const struct proto_range *it = r->items.v[k];
            if (it->name && !valid_identifier(it->name)) {
                fail_at(L, f, r->pos, "Reserved name \"%.100s\" is not a valid identifier.",
                        it->name);
                return;
            }
        }
    }
}

/* A field (or group) of message m, for the number checks. */
struct member {
    const char *name;
    int32_t number;
    struct proto_pos pos;
};

static int member_cmp(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return x->number < y->number ? -1 : x->number > y->number ? 1 : 0;
}

static void add_member(struct member **v, size_t *n, size_t *cap, const char *name,
                       int32_t number, struct proto_pos pos)
{
    MEM_GROW(*v, *cap, *n + 1);
    (*v)[(*n)++] = (struct member){name, number, pos};
}

static void add_field_members(struct member **v, size_t *n, size_t *cap, const struct pvec *fs)
{
    for (size_t i = 0; i < fs->n; i++) {
        const struct proto_field *fd = fs->v[i];
        add_member(v, n, cap, fd->name, fd->number, fd->pos);
    }
}

static void add_group_members(struct member **v, size_t *n, size_t *cap, const struct pvec *gs)
{
    for (size_t i = 0; i < gs->n; i++) {
        const struct proto_group *g = gs->v[i];
        add_member(v, n, cap, g->name, g->number, g->pos);
    }
}

static bool check_number(struct linker *L, struct proto_file *f, int64_t number,
                         struct proto_pos pos)
{
    if (number < 1) {
        fail_at(L, f, pos, "Field numbers must be positive integers.");
        return false;
    }
    if (number > PROTO_FIELD_NUMBER_MAX) {
        fail_at(L, f, pos, "Field numbers cannot be greater than %d.", PROTO_FIELD_NUMBER_MAX);
        return false;
    }
    if (number >= PROTO_RESERVED_LO && number <= PROTO_RESERVED_HI) {
        fail_at(L, f, pos, "Field numbers %d through %d are reserved for the protocol buffer "
                "library implementation.", PROTO_RESERVED_LO, PROTO_RESERVED_HI);
        return false;
    }
    return true;
}

static void check_field(struct linker *L, struct proto_file *f, const struct proto_type *m,
                        const struct proto_field *fd)
{
    if (fd->dflt)
        check_default(L, f, fd);
    if (fd->is_map) {
        int k = fd->key.scalar;
        if (fd->key.type && fd->key.type->kind == PT_ENUM)
            fail_at(L, f, fd->key.pos, "Key in map fields cannot be enum types.");
        else if (fd->key.type || k == PS_FLOAT || k == PS_DOUBLE || k == PS_BYTES)
            fail_at(L, f, fd->key.pos, "Key in map fields cannot be float/double, bytes or "
                    "message types.");
    }
    const struct proto_type *e = fd->type.type;
    if (m && f->syntax == 3 && e && e->kind == PT_ENUM && e->file->syntax != 3)
        fail_at(L, f, fd->type.pos, "Enum type \"%.100s\" is not a proto3 enum, but is used in "
                "\"%.100s\" which is a proto3 message type.", e->full_name, m->full_name);
}

/* A map entry message (option map_entry = true, as descriptors declare maps) must be one:
 * key = 1 of a map key's type and value = 2, nothing else. */
static void check_map_entry(struct linker *L, struct proto_file *f, const struct proto_type *m)
{
    const struct proto_field *k = proto_entry_field(m, 1), *v = proto_entry_field(m, 2);
    bool ok = m->fields.n == 2 && m->oneofs.n == 0 && m->groups.n == 0 && k && v &&
              strcmp(k->name, "key") == 0 && strcmp(v->name, "value") == 0 && k->type.scalar &&
              k->type.scalar != PS_FLOAT && k->type.scalar != PS_DOUBLE &&
              k->type.scalar != PS_BYTES && k->label != PL_REPEATED && v->label != PL_REPEATED;
    if (!ok)
        fail_at(L, f, m->pos, "Map entry message \"%.100s\" must have just the fields key = 1 "
                "(of a map key type) and value = 2.", m->full_name);
}

static void check_message(struct linker *L, struct proto_file *f, const struct proto_type *m)
{
    if (m->map_entry) {
        check_map_entry(L, f, m);
        if (L->failed)
            return;
    }
    struct member *mem = NULL;
    size_t n = 0, cap = 0;
    add_field_members(&mem, &n, &cap, &m->fields);
    add_group_members(&mem, &n, &cap, &m->groups);
    for (size_t i = 0; i < m->oneofs.n; i++) {
        const struct proto_oneof *o = m->oneofs.v[i];
        add_field_members(&mem, &n, &cap, &o->fields);
        add_group_members(&mem, &n, &cap, &o->groups);
    }
    struct num_use *res = NULL, *ext = NULL;
    size_t n_res = 0, cap_res = 0, n_ext = 0, cap_ext = 0;
    for (size_t i = 0; i < n && !L->failed; i++)
        check_number(L, f, mem[i].number, mem[i].pos);
    if (!L->failed) {
        if (n > 1)
            qsort(mem, n, sizeof(*mem), member_cmp);
        for (size_t i = 1; i < n; i++) {
            if (mem[i].number == mem[i - 1].number) {
                const struct member *later =
                    mem[i].pos.line > mem[i - 1].pos.line ||
                            (mem[i].pos.line == mem[i - 1].pos.line &&
                             mem[i].pos.col > mem[i - 1].pos.col)
                        ? &mem[i]
                        : &mem[i - 1];
                const struct member *first = later == &mem[i] ? &mem[i - 1] : &mem[i];
                fail_at(L, f, later->pos, "Field number %d has already been used in \"%.100s\" "
                        "by field \"%.100s\".", later->number, m->full_name, first->name);
                break;
            }
        }
    }
    check_reserved_names(L, f, &m->reserved);
    if (!L->failed)
        collect_ranges(L, f, &m->reserved, "Reserved", 1, &res, &n_res, &cap_res);
    if (!L->failed)
        check_overlaps(L, f, res, n_res, "Reserved");
    if (!L->failed)
        collect_ranges(L, f, &m->extensions, "Extension", 1, &ext, &n_ext, &cap_ext);
    if (!L->failed)
        check_overlaps(L, f, ext, n_ext, "Extension");
    for (size_t i = 0; i < n_ext && !L->failed; i++) {
        if (ext[i].end > PROTO_FIELD_NUMBER_MAX)
            fail_at(L, f, ext[i].pos, "Extension numbers cannot be greater than %d.",
                    PROTO_FIELD_NUMBER_MAX);
        const struct num_use *r = in_ranges(res, n_res, ext[i].start);
        for (size_t k = 0; !r && k < n_res; k++)
            if (res[k].start <= ext[i].end && res[k].end >= ext[i].start)
                r = &res[k];
        if (r && !L->failed) {
            char a[48], b[48];
            range_text(a, sizeof(a), &ext[i]);
            range_text(b, sizeof(b), r);
            fail_at(L, f, ext[i].pos, "Extension range %s overlaps with reserved range %s.", a,
                    b);
        }
    }
    size_t n_names = 0;
    const char **names = reserved_names(&m->reserved, &n_names);
    for (size_t i = 0; i < n && !L->failed; i++) {
        if (in_ranges(res, n_res, mem[i].number))
            fail_at(L, f, mem[i].pos, "Field \"%.100s\" uses reserved number %d.", mem[i].name,
                    mem[i].number);
        else if (name_in(names, n_names, mem[i].name))
            fail_at(L, f, mem[i].pos, "Field name \"%.100s\" is reserved.", mem[i].name);
        const struct num_use *x = in_ranges(ext, n_ext, mem[i].number);
        if (x && !L->failed) {
            char a[48];
            range_text(a, sizeof(a), x);
            fail_at(L, f, mem[i].pos, "Extension range %s includes field \"%.100s\" (%d).", a,
                    mem[i].name, mem[i].number);
        }
    }
    mem_free(names);
    mem_free(mem);
    mem_free(res);
    mem_free(ext);
    for (size_t i = 0; i < m->fields.n && !L->failed; i++)
        check_field(L, f, m, m->fields.v[i]);
    for (size_t i = 0; i < m->oneofs.n && !L->failed; i++) {
        const struct proto_oneof *o = m->oneofs.v[i];
        for (size_t k = 0; k < o->fields.n && !L->failed; k++)
            check_field(L, f, m, o->fields.v[k]);
    }
    for (size_t i = 0; i < m->groups.n && !L->failed; i++) {
        const struct proto_group *g = m->groups.v[i];
        for (size_t k = 0; k < g->fields.n && !L->failed; k++) {
            const struct proto_field *fd = g->fields.v[k];
            if (!check_number(L, f, fd->number, fd->pos))
                break;
            check_field(L, f, NULL, fd);
        }
    }
}

struct num_index {
    int64_t number;
    size_t index;
};

static int num_index_cmp(const void *a, const void *b)
{
    const struct num_index *x = a, *y = b;
    if (x->number != y->number)
        return x->number < y->number ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static void check_enum(struct linker *L, struct proto_file *f, const struct proto_type *e)
{
    if (e->values.n == 0) {
        fail_at(L, f, e->pos, "Enums must contain at least one value.");
        return;
    }
    const struct proto_enum_value *first = e->values.v[0];
    if (f->syntax == 3 && first->number != 0) {
        fail_at(L, f, first->pos, "The first enum value must be zero in proto3.");
        return;
    }
    bool allow_alias = proto_option_true(&e->options, "allow_alias");
    /* Values by number, then declaration order: a run of equal numbers is an alias; protoc
     * names the first value (in order) that repeats an earlier one. */
    size_t n = e->values.n;
    struct num_index *order = mem_calloc(n, sizeof(*order));
    for (size_t i = 0; i < n; i++)
        order[i] = (struct num_index){((struct proto_enum_value *)e->values.v[i])->number, i};
    qsort(order, n, sizeof(*order), num_index_cmp);
    bool aliased = false;
    size_t worst = SIZE_MAX, worst_first = 0;
    for (size_t i = 1; i < n; i++) {
        if (order[i].number != order[i - 1].number)
            continue;
        aliased = true;
        size_t run = i - 1;
        while (run > 0 && order[run - 1].number == order[i].number)
            run--;
        if (order[i].index < worst) {
            worst = order[i].index;
            worst_first = order[run].index;
        }
    }
    mem_free(order);
    if (aliased && !allow_alias) {
        const struct proto_enum_value *v = e->values.v[worst], *w = e->values.v[worst_first];
        fail_at(L, f, v->pos, "\"%.100s\" uses the same enum value as \"%.100s\". If this is "
                "intended, set 'option allow_alias = true;' to the enum definition.", v->name,
                w->name);
    }
    if (!L->failed && allow_alias && !aliased)
        fail_at(L, f, e->pos, "\"%.100s\" declares support for enum aliases but no enum values "
                "share field numbers. Please remove the unnecessary 'option allow_alias = "
                "true;' declaration.", e->full_name);
    check_reserved_names(L, f, &e->reserved);
    struct num_use *res = NULL;
    size_t n_res = 0, cap_res = 0;
    if (!L->failed)
        collect_ranges(L, f, &e->reserved, "Reserved", INT32_MIN, &res, &n_res, &cap_res);
    if (!L->failed)
        check_overlaps(L, f, res, n_res, "Reserved");
    size_t n_names = 0;
    const char **names = reserved_names(&e->reserved, &n_names);
    for (size_t i = 0; i < e->values.n && !L->failed; i++) {
        const struct proto_enum_value *v = e->values.v[i];
        if (in_ranges(res, n_res, v->number))
            fail_at(L, f, v->pos, "Enum value \"%.100s\" uses reserved number %d.", v->name,
                    v->number);
        else if (name_in(names, n_names, v->name))
            fail_at(L, f, v->pos, "Enum value \"%.100s\" is reserved.", v->name);
    }
    mem_free(names);
    mem_free(res);
}

static bool is_options_message(const struct proto_type *t)
{
    static const char *const names[] = {
        "google.protobuf.FileOptions",      "google.protobuf.MessageOptions",
        "google.protobuf.FieldOptions",     "google.protobuf.OneofOptions",
        "google.protobuf.EnumOptions",      "google.protobuf.EnumValueOptions",
        "google.protobuf.ServiceOptions",   "google.protobuf.MethodOptions",
        "google.protobuf.ExtensionRangeOptions",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(t->full_name, names[i]) == 0)
            return true;
    return false;
}

static bool in_extension_ranges(const struct proto_type *m, int64_t number)
{
    for (size_t i = 0; i < m->extensions.n; i++) {
        const struct proto_ranges *r = m->extensions.v[i];
        for (size_t k = 0; k < r->items.n; k++) {
            const struct proto_range *it = r->items.v[k];
            if (number >= it->start && number <= it->end)
                return true;
        }
    }
    return false;
}

/* Extension numbers in use: "extendee-address:number" -> the extension's name. */
struct ext_state {
    struct strmap used;
};

static void check_extends(struct linker *L, struct proto_file *f, const struct pvec *extends,
                          struct ext_state *es)
{
    for (size_t i = 0; i < extends->n && !L->failed; i++) {
        const struct proto_extend *x = extends->v[i];
        const struct proto_type *m = x->extendee.type;
        if (f->syntax == 3 && !is_options_message(m)) {
            fail_at(L, f, x->pos, "Extensions in proto3 are only allowed for defining options.");
            return;
        }
        for (size_t k = 0; k < x->fields.n && !L->failed; k++) {
            const struct proto_field *fd = x->fields.v[k];
            if (!check_number(L, f, fd->number, fd->pos))
                return;
            if (fd->label == PL_REQUIRED) {
                fail_at(L, f, fd->pos, "Message extensions cannot have required fields.");
                return;
            }
            if (fd->json_name) {
                fail_at(L, f, fd->pos, "option json_name is not allowed on extension fields.");
                return;
            }
            if (!in_extension_ranges(m, fd->number)) {
                fail_at(L, f, fd->pos, "\"%.100s\" does not declare %d as an extension number.",
                        m->full_name, fd->number);
                return;
            }
            char key[48];
            int kl = snprintf(key, sizeof(key), "%p:%d", (const void *)m, fd->number);
            const char *other = strmap_get(&es->used, key, (size_t)kl);
            if (other) {
                fail_at(L, f, fd->pos, "Extension number %d has already been used in \"%.100s\" "
                        "by extension \"%.100s\".", fd->number, m->full_name, other);
                return;
            }
            strmap_put(&es->used, key, (size_t)kl, (void *)fd->name);
            check_field(L, f, NULL, fd);
        }
    }
}

static void check_type(struct linker *L, struct proto_file *f, const struct proto_type *t,
                       struct ext_state *es)
{
    if (L->failed)
        return;
    if (t->kind == PT_ENUM) {
        check_enum(L, f, t);
        return;
    }
    check_message(L, f, t);
    check_extends(L, f, &t->extends, es);
    for (size_t i = 0; i < t->nested.n; i++)
        check_type(L, f, t->nested.v[i], es);
}

static void check_file(struct linker *L, struct proto_file *f, struct ext_state *es)
{
    for (size_t i = 0; i < f->types.n; i++)
        check_type(L, f, f->types.v[i], es);
    if (!L->failed)
        check_extends(L, f, &f->extends, es);
}

int proto_link(struct proto_schema *s, const char *text, size_t len, proto_lookup_fn lookup,
               void *data, char *err, size_t errcap)
{
    struct linker L = {.s = s, .lookup = lookup, .data = data, .err = err, .errcap = errcap};
    s->root->state = 1;
    L.chain[0] = "";
    if (parse_source(&L, s->root, text, len) == 0)
        load_imports(&L, s->root);
    s->root->state = 2;
    if (!L.failed)
        compute_visibility(&L);
    for (size_t i = 0; i < s->files.n && !L.failed; i++)
        add_file(&L, s->files.v[i]);
    for (size_t i = 0; i < s->files.n && !L.failed; i++)
        resolve_file(&L, s->files.v[i]);
    struct ext_state es;
    strmap_init(&es.used);
    for (size_t i = 0; i < s->files.n && !L.failed; i++)
        check_file(&L, s->files.v[i], &es);
    strmap_destroy(&es.used);
    mem_free(L.visible);
    if (!L.failed && s->oom)
        fail_at(&L, NULL, (struct proto_pos){0}, "Schema too large (its parsed form passes %u "
                "bytes).", (unsigned)PROTO_MEMORY_MAX);
    return L.failed ? -1 : 0;
}
