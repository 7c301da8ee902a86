/* The public entry of the Protobuf schema language (registry/protobuf.h): parsing a schema
 * (the work is proto_parse.c, proto_desc.c and proto_link.c), its lifetime, message indexes,
 * and the small helpers the other proto_*.c files share.
 *
 * A struct proto_schema owns one arena holding its files and everything parsed from them, and
 * a symbol table (strmap, its keys on the heap) of full names into that arena. It is immutable
 * once proto_parse() returns it. */
#include "registry/protobuf.h"

#include <string.h>

#include "base/errors.h"
#include "base/base64.h"
#include "base/mem.h"
#include "base/varint.h"
#include "registry/proto_ast.h"

#define ARENA_CHUNK (64u << 10)

void *proto_alloc(struct proto_schema *s, size_t size)
{
    if (s->arena.allocated + size > PROTO_MEMORY_MAX)
        s->oom = true;
    return arena_alloc(&s->arena, size ? size : 1);
}

char *proto_strndup(struct proto_schema *s, const char *p, size_t n)
{
    char *r = proto_alloc(s, n + 1);
    memcpy(r, p, n);
    r[n] = '\0';
    return r;
}

void pvec_push(struct proto_schema *s, struct pvec *v, void *p)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        void **nv = proto_alloc(s, cap * sizeof(void *));
        if (v->n)
            memcpy(nv, v->v, v->n * sizeof(void *));
        v->v = nv;
        v->cap = cap;
    }
    v->v[v->n++] = p;
}

static const char *const scalar_names[19] = {
    [PS_DOUBLE] = "double",     [PS_FLOAT] = "float",       [PS_INT64] = "int64",
    [PS_UINT64] = "uint64",     [PS_INT32] = "int32",       [PS_FIXED64] = "fixed64",
    [PS_FIXED32] = "fixed32",   [PS_BOOL] = "bool",         [PS_STRING] = "string",
    [PS_BYTES] = "bytes",       [PS_UINT32] = "uint32",     [PS_SFIXED32] = "sfixed32",
    [PS_SFIXED64] = "sfixed64", [PS_SINT32] = "sint32",     [PS_SINT64] = "sint64",
};

const char *proto_scalar_name(int scalar)
{
    if (scalar <= 0 || scalar >= (int)(sizeof(scalar_names) / sizeof(scalar_names[0])))
        return NULL;
    return scalar_names[scalar];
}

int proto_scalar_from_name(const char *name, size_t len)
{
    for (int i = 1; i < (int)(sizeof(scalar_names) / sizeof(scalar_names[0])); i++)
        if (scalar_names[i] && strlen(scalar_names[i]) == len &&
            memcmp(scalar_names[i], name, len) == 0)
            return i;
    return 0;
}

const struct proto_option *proto_find_option(const struct pvec *options, const char *name)
{
    const struct proto_option *found = NULL;
    for (size_t i = 0; i < options->n; i++) {
        const struct proto_option *o = options->v[i];
        if (!o->paren && o->val->kind != PV_OPTION && strcmp(o->name, name) == 0)
            found = o;
    }
    return found;
}

bool proto_option_true(const struct pvec *options, const char *name)
{
    const struct proto_option *o = proto_find_option(options, name);
    return o && o->val->kind == PV_BOOL && strcmp(o->val->s, "true") == 0;
}

const struct proto_field *proto_entry_field(const struct proto_type *entry, int32_t number)
{
    for (size_t i = 0; i < entry->fields.n; i++) {
        const struct proto_field *f = entry->fields.v[i];
        if (f->number == number)
            return f;
    }
    return NULL;
}

const struct proto_sym *proto_sym_get(const struct proto_schema *s, const char *full_name)
{
    return strmap_get(&s->syms, full_name, strlen(full_name));
}

uint8_t *proto_base64_decode(const char *text, size_t len, size_t *out_len)
{
    /* the padding may be left out (some encoders do); otherwise the strict decoding */
    while (len > 0 && text[len - 1] == '=')
        len--;
    if (len == 0 || len % 4 == 1)
        return NULL;
    char *padded = mem_alloc(len + 3);
    memcpy(padded, text, len);
    size_t plen = len;
    while (plen % 4)
        padded[plen++] = '=';
    uint8_t *out = mem_alloc(B64_DECODED_MAX(plen) + 1);
    int rc = b64_decode(padded, plen, out, B64_DECODED_MAX(plen) + 1, out_len);
    mem_free(padded);
    if (rc != 0) {
        mem_free(out);
        return NULL;
    }
    return out;
}

void proto_free(struct proto_schema *s)
{
    if (!s)
        return;
    strmap_destroy(&s->syms);
    arena_destroy(&s->arena);
    mem_free(s);
}

int proto_parse(const char *text, size_t len, proto_lookup_fn lookup, void *data,
                struct proto_schema **out, char *err, size_t errcap)
{
    *out = NULL;
    if (errcap)
        err[0] = '\0';
    struct proto_schema *s = mem_calloc(1, sizeof(*s));
    arena_init(&s->arena, ARENA_CHUNK);
    strmap_init(&s->syms);
    struct proto_file *root = proto_alloc(s, sizeof(*root));
    memset(root, 0, sizeof(*root));
    root->path = "";
    root->syntax = 2;
    s->root = root;
    pvec_push(s, &s->files, root);
    if (proto_link(s, text, len, lookup, data, err, errcap) != 0) {
        proto_free(s);
        return -ERR_INVALID;
    }
    *out = s;
    return 0;
}

/* The file the serializer's names refer to: the schema's own, or, for a file that only
 * re-exports another (no types, one `import public`, no other import), that one. */
static const struct proto_file *effective_file(const struct proto_schema *s)
{
    const struct proto_file *f = s->root;
    if (f->types.n > 0 || f->imports.n != 1)
        return f;
    const struct proto_import *im = f->imports.v[0];
    if (im->kind != PI_PUBLIC || !im->file || im->file->types.n == 0)
        return f;
    return im->file;
}

const char *proto_default_name(const struct proto_schema *s)
{
    const struct proto_file *f = effective_file(s);
    for (int kind = PT_MESSAGE; kind <= PT_ENUM; kind++)
        for (size_t i = 0; i < f->types.n; i++) {
            const struct proto_type *t = f->types.v[i];
            if ((int)t->kind == kind)
                return t->full_name;
        }
    return NULL;
}

static const struct proto_type *message_at(const struct pvec *types, int32_t index)
{
    int32_t k = 0;
    for (size_t i = 0; i < types->n; i++) {
        const struct proto_type *t = types->v[i];
        if (t->kind != PT_MESSAGE)
            continue;
        if (k++ == index)
            return t;
    }
    return NULL;
}

int proto_message_name(const struct proto_schema *s, const int32_t *idx, size_t n,
                       struct strbuf *name)
{
    static const int32_t first[1] = {0};
    if (n == 0) {
        idx = first;
        n = 1;
    }
    const struct pvec *types = &effective_file(s)->types;
    const struct proto_type *t = NULL;
    for (size_t i = 0; i < n; i++) {
        t = message_at(types, idx[i]);
        if (!t)
            return -ERR_NOT_FOUND;
        types = &t->nested;
    }
    strbuf_puts(name, t->full_name);
    return 0;
}

int proto_message_indexes(const struct proto_schema *s, const char *full_name, int32_t *idx,
                          size_t *n)
{
    if (full_name[0] == '.')
        full_name++;
    const struct proto_sym *sym = proto_sym_get(s, full_name);
    const struct proto_file *f = effective_file(s);
    if (!sym || sym->kind != SYM_MESSAGE || sym->file != f)
        return -ERR_NOT_FOUND;
    const struct proto_type *chain[PROTO_INDEXES_MAX];
    size_t depth = 0;
    for (const struct proto_type *t = sym->node; t; t = t->parent) {
        if (depth == PROTO_INDEXES_MAX)
            return -ERR_NOT_FOUND;
        chain[depth++] = t;
    }
    for (size_t i = 0; i < depth; i++) {
        const struct proto_type *t = chain[depth - 1 - i];
        const struct pvec *types = t->parent ? &t->parent->nested : &f->types;
        int32_t k = 0;
        for (size_t j = 0; j < types->n; j++) {
            const struct proto_type *u = types->v[j];
            if (u == t)
                break;
            if (u->kind == PT_MESSAGE)
                k++;
        }
        idx[i] = k;
    }
    *n = depth;
    return 0;
}

size_t proto_msgidx_encode(const int32_t *idx, size_t n, uint8_t *p)
{
    if (n == 0 || (n == 1 && idx[0] == 0)) {
        p[0] = 0;
        return 1;
    }
    size_t len = varint32_put(p, (int32_t)n);
    for (size_t i = 0; i < n; i++)
        len += varint32_put(p + len, idx[i]);
    return len;
}

size_t proto_msgidx_decode(const uint8_t *p, const uint8_t *end, int32_t *idx, size_t *n)
{
    int32_t count;
    size_t len = varint32_get(p, end, &count);
    if (len == 0 || count < 0 || count > PROTO_INDEXES_MAX)
        return 0;
    if (count == 0) {
        idx[0] = 0;
        *n = 1;
        return len;
    }
    for (int32_t i = 0; i < count; i++) {
        size_t k = varint32_get(p + len, end, &idx[i]);
        if (k == 0 || idx[i] < 0)
            return 0;
        len += k;
    }
    *n = (size_t)count;
    return len;
}

void proto_reasons_free(struct proto_reasons *r)
{
    for (size_t i = 0; i < r->n; i++)
        mem_free(r->v[i]);
    mem_free(r->v);
    r->v = NULL;
    r->n = r->cap = 0;
}
