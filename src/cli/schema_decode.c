/* The CLI's registry-backed decoder (see schema_decode.h).
 *
 * Owns the parsed schemas by id (a small sorted array: a topic names few) and the answers of
 * the reference look-ups made while parsing (freed with the decoder). Blocking HTTP, one
 * request at a time (cli/admin_client.h). */
#include "cli/schema_decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json_parse.h"
#include "base/mem.h"
#include "cli/admin_client.h"
#include "cli/common.h"
#include "registry/schema.h"

#define CACHE_MAX 4096

struct cached {
    int32_t id;
    struct reg_schema *s; /* NULL: the id failed once (not asked again) */
    char *why;            /* its failure */
};

struct fetched { /* one GET answer, kept while a schema that parsed through it lives */
    struct json_doc doc;
    struct reg_ref *refs;
    size_t n_refs;
};

struct schema_decoder {
    const struct cli_common *c;
    const char *addr;
    struct admin_client ac;
    struct cached *v;
    size_t n;
    size_t cap;
    struct fetched **answers;
    size_t n_answers;
    size_t cap_answers;
};

struct schema_decoder *schema_decoder_new(const struct cli_common *c, const char *addr)
{
    struct schema_decoder *d = mem_calloc(1, sizeof(*d));
    d->c = c;
    d->addr = addr && *addr ? addr : getenv("STREAMPULSE_REGISTRY");
    if (!d->addr || !*d->addr)
        d->addr = REGISTRY_DEFAULT_ADDR;
    struct admin_client_opts ao = {0};
    (void)admin_client_init(&d->ac, "consume", &ao); /* plain HTTP: nothing can fail */
    return d;
}

static void fetched_free(struct fetched *f)
{
    for (size_t i = 0; i < f->n_refs; i++) {
        mem_free(f->refs[i].name);
        mem_free(f->refs[i].subject);
    }
    mem_free(f->refs);
    json_doc_free(&f->doc);
    mem_free(f);
}

void schema_decoder_free(struct schema_decoder *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n; i++) {
        reg_schema_free(d->v[i].s);
        mem_free(d->v[i].why);
    }
    mem_free(d->v);
    for (size_t i = 0; i < d->n_answers; i++)
        fetched_free(d->answers[i]);
    mem_free(d->answers);
    admin_client_free(&d->ac);
    mem_free(d);
}

/* GET path; the answer parsed (kept in d). NULL with err set when it is not a 200 JSON
 * object. */
static struct fetched *get(struct schema_decoder *d, const char *path, char *err, size_t errcap)
{
    struct strbuf body;
    strbuf_init(&body);
    int status;
    if (admin_client_call(&d->ac, d->addr, d->c->timeout_ms, "GET", path, NULL, 0, &status, &body,
                          err, errcap) != 0) {
        strbuf_destroy(&body);
        return NULL;
    }
    struct fetched *f = mem_calloc(1, sizeof(*f));
    char jerr[64];
    if (json_parse(&f->doc, body.p ? body.p : "", body.len, NULL, jerr, sizeof jerr) != 0 ||
        f->doc.root->type != JSON_OBJECT || status != 200) {
        snprintf(err, errcap, "the registry at %s answered %s %d: %.200s", d->addr, path, status,
                 strbuf_str(&body));
        strbuf_destroy(&body);
        fetched_free(f);
        return NULL;
    }
    strbuf_destroy(&body);
    const struct json_value *refs = json_get(f->doc.root, "references", JSON_ARRAY);
    f->refs = mem_calloc(refs && refs->n ? refs->n : 1, sizeof(*f->refs));
    for (const struct json_value *r = refs ? refs->child : NULL; r; r = r->next)
        f->refs[f->n_refs++] = (struct reg_ref){mem_strdup(json_get_str(r, "name", "")),
                                                mem_strdup(json_get_str(r, "subject", "")),
                                                (int32_t)json_get_int(r, "version", 0)};
    MEM_GROW(d->answers, d->cap_answers, d->n_answers + 1);
    d->answers[d->n_answers++] = f;
    return f;
}

static int answer_schema(const struct fetched *f, struct reg_resolved *out)
{
    const struct json_value *text = json_get(f->doc.root, "schema", JSON_STRING);
    enum reg_type type = REG_AVRO;
    const char *t = json_get_str(f->doc.root, "schemaType", NULL);
    if (!text || (t && reg_type_parse(t, strlen(t), &type) != 0))
        return -1;
    *out = (struct reg_resolved){type, text->str, text->str_len, f->refs, f->n_refs};
    return 0;
}

/* reg_resolve_fn: a reference through GET /subjects/S/versions/V. */
static int resolve(const char *subject, int32_t version, struct reg_resolved *out, void *data)
{
    struct schema_decoder *d = data;
    struct strbuf path;
    strbuf_init(&path);
    strbuf_puts(&path, "/subjects/");
    admin_client_encode(&path, subject, strlen(subject));
    strbuf_printf(&path, "/versions/%d", (int)version);
    char err[256];
    struct fetched *f = get(d, strbuf_str(&path), err, sizeof err);
    strbuf_destroy(&path);
    return f && answer_schema(f, out) == 0 ? 0 : -1;
}

static struct cached *lookup(struct schema_decoder *d, int32_t id)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i].id == id)
            return &d->v[i];
    if (d->n == CACHE_MAX) { /* a topic naming this many ids: forget them all */
        for (size_t i = 0; i < d->n; i++) {
            reg_schema_free(d->v[i].s);
            mem_free(d->v[i].why);
        }
        d->n = 0;
    }
    MEM_GROW(d->v, d->cap, d->n + 1);
    struct cached *c = &d->v[d->n++];
    *c = (struct cached){.id = id};
    char path[64], err[REG_ERR_MAX];
    snprintf(path, sizeof path, "/schemas/ids/%d", (int)id);
    struct fetched *f = get(d, path, err, sizeof err);
    struct reg_resolved r;
    if (f && answer_schema(f, &r) != 0)
        snprintf(err, sizeof err, "the registry's answer for id %d has no schema", (int)id);
    else if (f)
        (void)reg_schema_parse(r.type, r.text, r.len, r.refs, r.n_refs, resolve, d, true, &c->s,
                               err, sizeof err);
    if (!c->s)
        c->why = mem_strdup(err);
    return c;
}

int schema_decoder_decode(struct schema_decoder *d, const void *p, size_t n, struct strbuf *out,
                          char *err, size_t errcap)
{
    const uint8_t *b = p;
    if (!b || n < 5 || b[0] != 0)
        return 1;
    int32_t id = (int32_t)((uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 |
                           (uint32_t)b[4]);
    struct cached *c = lookup(d, id);
    if (!c->s) {
        snprintf(err, errcap, "schema id %d: %s", (int)id, c->why);
        return -1;
    }
    char why[256];
    if (reg_schema_decode(c->s, b + 5, n - 5, out, why, sizeof why) != 0) {
        snprintf(err, errcap, "schema id %d: %s", (int)id, why);
        return -1;
    }
    return 0;
}
