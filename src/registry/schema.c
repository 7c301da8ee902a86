/* Schemas of any type behind one handle (see schema.h).
 *
 * A parsed schema owns copies of every referenced text it reached (flat, dependencies before
 * their dependents, each subject/version once) and, for Avro, their parsed forms, which the
 * root's model points into; all are freed with it.
 *
 * Invariants:
 *  1. deps[i] depends only on deps[j] with j < i: a reference is resolved (and for Avro
 *     parsed) before the schema that refers to it.
 *  2. n_deps <= REG_REFS_MAX; the chain of references being resolved is at most
 *     REG_REF_DEPTH_MAX long, and a subject/version met again on that chain is a cycle,
 *     refused. */
#include "registry/schema.h"

#include <stdio.h>
#include <string.h>

#include "base/errors.h"
#include "base/json_parse.h"
#include "base/mem.h"
#include "registry/avro.h"
#include "registry/json_schema.h"
#include "registry/protobuf.h"

struct dep {
    char *name;
    char *id; /* "subject/version" */
    enum reg_type type;
    char *text;
    size_t len;
    struct avro_schema *avro; /* type AVRO */
};

struct reg_schema {
    enum reg_type type;
    struct avro_schema *avro;
    struct proto_schema *proto;
    struct json_schema *json;
    struct dep deps[REG_REFS_MAX];
    size_t n_deps;
};

static const char *const type_names[REG_TYPE_COUNT] = {"AVRO", "PROTOBUF", "JSON"};

int reg_type_parse(const char *s, size_t len, enum reg_type *out)
{
    for (int i = 0; i < REG_TYPE_COUNT; i++)
        if (strlen(type_names[i]) == len && memcmp(s, type_names[i], len) == 0) {
            *out = (enum reg_type)i;
            return 0;
        }
    return -ERR_INVALID;
}

const char *reg_type_name(enum reg_type t)
{
    return (unsigned)t < REG_TYPE_COUNT ? type_names[t] : "UNKNOWN";
}

bool reg_type_supported(enum reg_type t)
{
    return t == REG_AVRO || t == REG_PROTOBUF || t == REG_JSON;
}

enum reg_type reg_schema_type(const struct reg_schema *s)
{
    return s->type;
}

struct resolving {
    struct reg_schema *s;
    reg_resolve_fn fn;
    void *data;
    bool lenient;
    const char *chain[REG_REF_DEPTH_MAX]; /* ids being resolved, outermost first */
    size_t depth;
    char *err;
    size_t errcap;
};

static int avro_parse_with_deps(struct resolving *rv, const char *text, size_t len,
                                struct avro_schema **out, char *err, size_t errcap)
{
    const struct avro_schema *refs[REG_REFS_MAX];
    size_t n = 0;
    for (size_t i = 0; i < rv->s->n_deps; i++)
        if (rv->s->deps[i].avro)
            refs[n++] = rv->s->deps[i].avro;
    struct avro_parse_opts o = {.refs = refs, .n_refs = n,
                                .flags = rv->lenient ? AVRO_PARSE_LENIENT : 0};
    return avro_schema_parse(text, len, &o, out, err, errcap);
}

static int resolve_refs(struct resolving *rv, const struct reg_ref *refs, size_t n_refs);

/* Resolves one reference (and, first, its own references) into rv->s->deps. */
static int resolve_one(struct resolving *rv, const struct reg_ref *ref)
{
    char id[600];
    snprintf(id, sizeof id, "%s/%d", ref->subject, (int)ref->version);
    for (size_t i = 0; i < rv->depth; i++)
        if (!strcmp(rv->chain[i], id)) {
            snprintf(rv->err, rv->errcap, "Invalid schema: the references form a cycle at %s",
                     id);
            return -ERR_INVALID;
        }
    for (size_t i = 0; i < rv->s->n_deps; i++)
        if (!strcmp(rv->s->deps[i].id, id))
            return 0; /* reached already, through another reference */
    if (rv->depth == REG_REF_DEPTH_MAX) {
        snprintf(rv->err, rv->errcap, "Invalid schema: references nest deeper than %d",
                 REG_REF_DEPTH_MAX);
        return -ERR_INVALID;
    }
    struct reg_resolved r;
    if (rv->fn == NULL || rv->fn(ref->subject, ref->version, &r, rv->data) != 0) {
        snprintf(rv->err, rv->errcap,
                 "Invalid schema: the reference %s (subject '%s', version %d) is not registered",
                 ref->name, ref->subject, (int)ref->version);
        return -ERR_INVALID;
    }
    /* copies first: the resolver's answer is valid until its next call only */
    char *text = mem_alloc(r.len + 1);
    memcpy(text, r.text, r.len);
    text[r.len] = '\0';
    size_t len = r.len;
    enum reg_type type = r.type;
    struct reg_ref sub[REG_REFS_MAX];
    size_t n_sub = r.n_refs < REG_REFS_MAX ? r.n_refs : REG_REFS_MAX;
    for (size_t i = 0; i < n_sub; i++)
        sub[i] = (struct reg_ref){mem_strdup(r.refs[i].name), mem_strdup(r.refs[i].subject),
                                  r.refs[i].version};
    rv->chain[rv->depth++] = id;
    int rc = r.n_refs > REG_REFS_MAX ? -ERR_TOO_LARGE : resolve_refs(rv, sub, n_sub);
    rv->depth--;
    for (size_t i = 0; i < n_sub; i++) {
        mem_free(sub[i].name);
        mem_free(sub[i].subject);
    }
    if (rc == -ERR_TOO_LARGE)
        snprintf(rv->err, rv->errcap, "Invalid schema: more than %d references", REG_REFS_MAX);
    if (rc == 0 && type != rv->s->type) {
        snprintf(rv->err, rv->errcap,
                 "Invalid schema: the reference %s is a %s schema, not %s", ref->name,
                 reg_type_name(type), reg_type_name(rv->s->type));
        rc = -ERR_INVALID;
    }
    if (rc == 0 && rv->s->n_deps == REG_REFS_MAX) {
        snprintf(rv->err, rv->errcap, "Invalid schema: more than %d references", REG_REFS_MAX);
        rc = -ERR_INVALID;
    }
    struct avro_schema *avro = NULL;
    if (rc == 0 && type == REG_AVRO) {
        char why[REG_ERR_MAX];
        rv->lenient = true; /* a stored schema: it was checked when it was registered */
        rc = avro_parse_with_deps(rv, text, len, &avro, why, sizeof why);
        if (rc != 0)
            snprintf(rv->err, rv->errcap, "Invalid schema: the reference %s does not parse: %s",
                     ref->name, why);
    }
    if (rc != 0) {
        mem_free(text);
        return rc < 0 && rc != -ERR_INVALID ? -ERR_INVALID : rc;
    }
    struct dep *d = &rv->s->deps[rv->s->n_deps++];
    *d = (struct dep){mem_strdup(ref->name), mem_strdup(id), type, text, len, avro};
    return 0;
}

static int resolve_refs(struct resolving *rv, const struct reg_ref *refs, size_t n_refs)
{
    for (size_t i = 0; i < n_refs; i++) {
        int rc = resolve_one(rv, &refs[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int proto_lookup(const char *name, struct proto_source *src, void *data)
{
    const struct reg_schema *s = data;
    for (size_t i = 0; i < s->n_deps; i++)
        if (!strcmp(s->deps[i].name, name)) {
            *src = (struct proto_source){s->deps[i].text, s->deps[i].len, s->deps[i].id};
            return 0;
        }
    return -ERR_NOT_FOUND;
}

/* A JSON Schema $ref to another document: the reference of that name (its URL). */
static int json_lookup(const char *url, struct json_schema_source *src, void *data)
{
    const struct reg_schema *s = data;
    for (size_t i = 0; i < s->n_deps; i++)
        if (!strcmp(s->deps[i].name, url)) {
            *src = (struct json_schema_source){s->deps[i].text, s->deps[i].len};
            return 0;
        }
    return -ERR_NOT_FOUND;
}

int reg_schema_parse(enum reg_type t, const char *text, size_t len, const struct reg_ref *refs,
                     size_t n_refs, reg_resolve_fn resolve, void *data, bool lenient,
                     struct reg_schema **out, char *err, size_t errcap)
{
    *out = NULL;
    if (!reg_type_supported(t)) {
        snprintf(err, errcap, "Invalid schema: schema type %s is not supported by this broker",
                 reg_type_name(t));
        return -ERR_INVALID;
    }
    if (n_refs > REG_REFS_MAX) {
        snprintf(err, errcap, "Invalid schema: more than %d references", REG_REFS_MAX);
        return -ERR_INVALID;
    }
    struct reg_schema *s = mem_calloc(1, sizeof(*s));
    s->type = t;
    struct resolving rv = {.s = s, .fn = resolve, .data = data, .err = err, .errcap = errcap};
    int rc = resolve_refs(&rv, refs, n_refs);
    if (rc == 0) {
        char why[REG_ERR_MAX];
        rv.lenient = lenient;
        if (t == REG_AVRO)
            rc = avro_parse_with_deps(&rv, text, len, &s->avro, why, sizeof why);
        else if (t == REG_PROTOBUF)
            rc = proto_parse(text, len, proto_lookup, s, &s->proto, why, sizeof why);
        else
            rc = json_schema_parse(text, len, json_lookup, s, &s->json, why, sizeof why);
        if (rc != 0) {
            snprintf(err, errcap, "Invalid schema: %s", why);
            rc = -ERR_INVALID;
        }
    }
    if (rc != 0) {
        reg_schema_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void reg_schema_free(struct reg_schema *s)
{
    if (!s)
        return;
    avro_schema_free(s->avro); /* before the references its model points into */
    proto_free(s->proto);
    json_schema_free(s->json);
    for (size_t i = s->n_deps; i-- > 0;) {
        avro_schema_free(s->deps[i].avro);
        mem_free(s->deps[i].name);
        mem_free(s->deps[i].id);
        mem_free(s->deps[i].text);
    }
    mem_free(s);
}

void reg_schema_canonical(const struct reg_schema *s, bool normalize, struct strbuf *out)
{
    if (s->type == REG_AVRO) {
        if (normalize)
            avro_normalized(s->avro, out);
        else
            avro_canonical(s->avro, out);
    } else if (s->type == REG_PROTOBUF) {
        proto_canonical(s->proto, normalize, out);
    } else {
        json_schema_canonical(s->json, normalize, out);
    }
}

int reg_schema_decode(const struct reg_schema *s, const uint8_t *p, size_t n, struct strbuf *out,
                      char *err, size_t errcap)
{
    if (s->type == REG_AVRO)
        return avro_decode_json(s->avro, p, n, out, err, errcap);
    if (s->type == REG_PROTOBUF)
        return proto_decode_json(s->proto, p, n, out, err, errcap);
    /* JSON Schema: the payload is the JSON document itself */
    struct json_doc d = {0};
    struct json_limits lim = {.depth_max = JSON_SCHEMA_DEPTH_MAX, .values_max = 1u << 22};
    char why[128];
    int rc = json_parse(&d, (const char *)p, n, &lim, why, sizeof why);
    json_doc_free(&d);
    if (rc != 0) {
        snprintf(err, errcap, "the payload is not JSON: %s", why);
        return -ERR_INVALID;
    }
    strbuf_append(out, p, n);
    return 0;
}

bool reg_schema_can_read(const void *reader, const void *writer, const char *reader_role,
                         const char *writer_role, struct compat_reasons *reasons, void *data)
{
    (void)data;
    const struct reg_schema *r = reader, *w = writer;
    if (r->type != w->type) {
        compat_reasons_add(reasons, "{errorType:'TYPE_MISMATCH', description:'The %s schema is "
                           "of type %s, the %s schema of type %s'}",
                           reader_role, reg_type_name(r->type), writer_role,
                           reg_type_name(w->type));
        return false;
    }
    if (r->type == REG_AVRO)
        return avro_can_read(r->avro, w->avro, reader_role, writer_role, reasons);
    if (r->type == REG_JSON)
        return json_schema_can_read(r->json, w->json, reader_role, writer_role, reasons);
    struct proto_reasons pr = {0};
    bool ok = proto_can_read(r->proto, w->proto, reader_role, writer_role,
                             reasons ? &pr : NULL);
    for (size_t i = 0; i < pr.n; i++)
        compat_reasons_add(reasons, "%s", pr.v[i]);
    if (!ok && reasons && pr.n == 0)
        compat_reasons_add(reasons, "{errorType:'INCOMPATIBLE', description:'The %s schema "
                           "cannot read data written with the %s schema'}",
                           reader_role, writer_role);
    proto_reasons_free(&pr);
    return ok;
}
