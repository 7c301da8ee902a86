/* The registry's REST semantics (see rest.h): routing, then one function per route, each
 * reading the store and either answering or answering with records to write.
 *
 * Schemas are compared in their stored form: a registration parses the text (with its
 * references, through the store) and looks for its canonical text (normalized with
 * normalize=true). Earlier versions are parsed again, leniently, when a compatibility check
 * needs them; nothing parsed is kept between requests. */
#include "registry/rest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/errors.h"
#include "base/json.h"
#include "base/json_parse.h"
#include "base/mem.h"
#include "registry/rest_authz.h"

#define JSON_BODY_DEPTH_MAX 64

void reg_result_init(struct reg_result *r)
{
    memset(r, 0, sizeof(*r));
    r->status = 200;
    r->content_type = REG_CONTENT_TYPE;
    strbuf_init(&r->body);
}

void reg_result_free(struct reg_result *r)
{
    for (size_t i = 0; i < r->n_writes; i++) {
        strbuf_destroy(&r->writes[i].key);
        strbuf_destroy(&r->writes[i].value);
    }
    mem_free(r->writes);
    strbuf_destroy(&r->body);
    r->writes = NULL;
    r->n_writes = 0;
}

void reg_rest_error(struct reg_result *out, int code, const char *fmt, ...)
{
    struct strbuf msg;
    strbuf_init(&msg);
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(&msg, fmt, ap);
    va_end(ap);
    out->status = code >= 10000 ? code / 100 : code;
    out->content_type = REG_CONTENT_TYPE;
    strbuf_reset(&out->body);
    struct json j;
    json_init(&j, &out->body);
    json_obj_begin(&j);
    json_key(&j, "error_code");
    json_i64(&j, code);
    json_key(&j, "message");
    json_str(&j, msg.p ? msg.p : "", msg.len);
    json_obj_end(&j);
    strbuf_destroy(&msg);
}

/* Appends a write; returns it for the caller to fill key and value. */
static struct reg_write *add_write(struct reg_result *out, bool tombstone)
{
    out->writes = mem_realloc(out->writes, (out->n_writes + 1) * sizeof(*out->writes));
    struct reg_write *w = &out->writes[out->n_writes++];
    strbuf_init(&w->key);
    strbuf_init(&w->value);
    w->tombstone = tombstone;
    return w;
}

static const char *param(const struct reg_rest_req *req, const char *key)
{
    for (size_t i = 0; i < req->n_params; i++)
        if (!strcmp(req->params[i].key, key))
            return req->params[i].value;
    return NULL;
}

static bool param_true(const struct reg_rest_req *req, const char *key)
{
    const char *v = param(req, key);
    return v && !strcasecmp(v, "true");
}

static bool method_is(const struct reg_rest_req *req, const char *m)
{
    return !strcmp(req->method, m);
}

static bool seg_is(const struct reg_rest_req *req, size_t i, const char *s)
{
    return i < req->n_segs && !strcmp(req->segs[i], s);
}

/* ---- versions and subjects ---- */

#define VERSION_LATEST (-1)

/* "latest", -1 or 1..2^31-1; 0, or a 42202 answer. */
static int parse_version(const char *s, int32_t *out, struct reg_result *res)
{
    if (!strcmp(s, "latest") || !strcmp(s, "-1")) {
        *out = VERSION_LATEST;
        return 0;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s < '0' || *s > '9' || *end || errno || v < 1 || v > INT32_MAX) {
        reg_rest_error(res, 42202,
                       "The specified version '%s' is not a valid version id. Allowed values are "
                       "between [1, 2^31-1] and the string \"latest\"",
                       s);
        return -1;
    }
    *out = (int32_t)v;
    return 0;
}

/* A subject name: 1..REG_SUBJECT_MAX bytes of well-formed UTF-8 without control characters
 * (so that it is stored, and read back, exactly as asked). */
static bool subject_ok(const char *s, struct reg_result *res)
{
    size_t n = strlen(s);
    bool ok = n > 0 && n <= REG_SUBJECT_MAX;
    for (size_t i = 0; ok && i < n;) {
        size_t k = utf8_seq_len((const unsigned char *)s + i, n - i);
        ok = k > 0 && (unsigned char)s[i] >= 0x20 && s[i] != 0x7f;
        i += k;
    }
    if (!ok)
        reg_rest_error(res, 42208, "Invalid subject: it must be 1 to %d bytes of UTF-8 without "
                       "control characters", REG_SUBJECT_MAX);
    return ok;
}

/* The subject, or NULL with a 40401 answer. With deleted false, a subject whose versions are
 * all soft-deleted does not exist. */
static struct reg_subject *subject_or_404(const struct reg_store *st, const char *name,
                                          bool deleted, struct reg_result *res)
{
    struct reg_subject *s = reg_store_subject(st, name);
    if (!s || s->n == 0 || (!deleted && reg_subject_live(s) == 0)) {
        reg_rest_error(res, 40401, "Subject '%s' not found.", name);
        return NULL;
    }
    return s;
}

static const struct reg_version *version_or_404(const struct reg_subject *s, int32_t v,
                                                bool deleted, struct reg_result *res)
{
    const struct reg_version *ver =
        v == VERSION_LATEST ? reg_subject_latest(s, deleted) : reg_subject_version(s, v);
    if (!ver || (!deleted && ver->deleted)) {
        if (v == VERSION_LATEST)
            reg_rest_error(res, 40402, "Version latest not found.");
        else
            reg_rest_error(res, 40402, "Version %d not found.", (int)v);
        return NULL;
    }
    return ver;
}

static enum compat_level subject_level(const struct reg_store *st, const struct reg_subject *s)
{
    return s && s->has_level ? s->level : st->level;
}

static enum reg_mode subject_mode(const struct reg_store *st, const char *name)
{
    const struct reg_subject *s = reg_store_subject(st, name);
    return s && s->has_mode ? s->mode : st->mode;
}

/* Whether a live version of any subject references subject/version. */
static bool is_referenced(const struct reg_store *st, const char *subject, int32_t version,
                          struct strbuf *ids_json)
{
    bool any = false;
    struct json j;
    if (ids_json) {
        json_init(&j, ids_json);
        json_arr_begin(&j);
    }
    for (size_t i = 0; i < st->n_ids; i++) {
        const struct reg_id *id = st->ids[i];
        bool refers = false;
        for (size_t r = 0; r < id->n_refs && !refers; r++)
            refers = id->refs[r].version == version && !strcmp(id->refs[r].subject, subject);
        if (!refers)
            continue;
        /* only if some live version still uses this id */
        bool live = false;
        size_t it = 0;
        const char *k;
        void *v;
        while (!live && strmap_next(&st->subjects, &it, &k, &v)) {
            const struct reg_subject *s = v;
            for (size_t x = 0; x < s->n && !live; x++)
                live = s->v[x].id == id->id && !s->v[x].deleted;
        }
        if (!live)
            continue;
        any = true;
        if (ids_json)
            json_i64(&j, id->id);
    }
    if (ids_json)
        json_arr_end(&j);
    return any;
}

/* ---- answers ---- */

static void write_version(struct json *j, const struct reg_store *st, const char *subject,
                          const struct reg_version *v)
{
    const struct reg_id *id = reg_store_id(st, v->id);
    json_obj_begin(j);
    json_key(j, "subject");
    json_cstr(j, subject);
    json_key(j, "version");
    json_i64(j, v->version);
    json_key(j, "id");
    json_i64(j, v->id);
    if (id && id->type != REG_AVRO) {
        json_key(j, "schemaType");
        json_cstr(j, reg_type_name(id->type));
    }
    if (id && id->n_refs) {
        json_key(j, "references");
        reg_refs_write(j, id->refs, id->n_refs);
    }
    json_key(j, "schema");
    json_str(j, id ? id->text : "", id ? id->len : 0);
    json_obj_end(j);
}

static void answer_raw_schema(const struct reg_id *id, struct reg_result *res)
{
    strbuf_append(&res->body, id->text, id->len);
    res->content_type = id->type == REG_PROTOBUF ? "text/plain; charset=utf-8" : REG_CONTENT_TYPE;
}

/* ---- the body of a registration, lookup or compatibility check ---- */

struct schema_body {
    struct json_doc doc;
    const struct json_value *schema;
    enum reg_type type;
    struct reg_ref *refs;
    size_t n_refs;
    int64_t id;      /* IMPORT: the id asked for, else -1 */
    int64_t version; /* IMPORT: the version asked for, else -1 */
};

static void schema_body_free(struct schema_body *b)
{
    for (size_t i = 0; i < b->n_refs; i++) {
        mem_free(b->refs[i].name);
        mem_free(b->refs[i].subject);
    }
    mem_free(b->refs);
    json_doc_free(&b->doc);
}

/* Parses a JSON body into doc; 0, or a 400 answer. */
static int parse_json_body(const struct reg_rest_req *req, struct json_doc *doc,
                           struct reg_result *res)
{
    struct json_limits lim = {.depth_max = JSON_BODY_DEPTH_MAX, .values_max = 1u << 18};
    char err[160];
    if (json_parse(doc, req->body, req->body_len, &lim, err, sizeof err) != 0) {
        reg_rest_error(res, 400, "The request body is not JSON: %s", err);
        return -1;
    }
    if (doc->root->type != JSON_OBJECT) {
        reg_rest_error(res, 400, "The request body must be a JSON object");
        return -1;
    }
    return 0;
}

static int parse_schema_body(const struct reg_rest_req *req, struct schema_body *b,
                             struct reg_result *res)
{
    memset(b, 0, sizeof(*b));
    b->id = b->version = -1;
    if (parse_json_body(req, &b->doc, res) != 0)
        return -1;
    const struct json_value *root = b->doc.root;
    b->schema = json_get(root, "schema", JSON_STRING);
    if (!b->schema) {
        reg_rest_error(res, 42201, "Invalid schema: the request has no \"schema\" string");
        return -1;
    }
    const struct json_value *t = json_member(root, "schemaType");
    b->type = REG_AVRO;
    if (t && t->type != JSON_NULL &&
        (t->type != JSON_STRING || reg_type_parse(t->str, t->str_len, &b->type) != 0 ||
         !reg_type_supported(b->type))) {
        reg_rest_error(res, 42201, "Invalid schema: unknown or unsupported schemaType %s",
                       t->type == JSON_STRING ? t->str : "(not a string)");
        return -1;
    }
    const struct json_value *refs = json_member(root, "references");
    if (refs && refs->type != JSON_NULL) {
        if (refs->type != JSON_ARRAY || refs->n > REG_REFS_MAX) {
            reg_rest_error(res, 42201, "Invalid schema: references must be an array of at most "
                           "%d references", REG_REFS_MAX);
            return -1;
        }
        b->refs = mem_calloc(refs->n ? refs->n : 1, sizeof(*b->refs));
        for (const struct json_value *r = refs->child; r; r = r->next) {
            const char *name = json_get_str(r, "name", NULL);
            const char *subject = json_get_str(r, "subject", NULL);
            int64_t version = json_get_int(r, "version", -2);
            if (!name || !subject || !*subject || strlen(subject) > REG_SUBJECT_MAX ||
                version < -1 || version == 0 || version > INT32_MAX) {
                reg_rest_error(res, 42201, "Invalid schema: a reference needs a name, a subject "
                               "and a version");
                return -1;
            }
            b->refs[b->n_refs++] =
                (struct reg_ref){mem_strdup(name), mem_strdup(subject), (int32_t)version};
        }
    }
    b->id = json_get_int(root, "id", -1);
    b->version = json_get_int(root, "version", -1);
    return 0;
}

/* Resolves "latest" (-1) references to the version they name now. 0, or a 42201 answer. */
static int pin_refs(const struct reg_store *st, struct schema_body *b, struct reg_result *res)
{
    for (size_t i = 0; i < b->n_refs; i++) {
        if (b->refs[i].version != VERSION_LATEST)
            continue;
        const struct reg_version *v =
            reg_subject_latest(reg_store_subject(st, b->refs[i].subject), false);
        if (!v) {
            reg_rest_error(res, 42201, "Invalid schema: the reference %s names subject '%s', "
                           "which has no version", b->refs[i].name, b->refs[i].subject);
            return -1;
        }
        b->refs[i].version = v->version;
    }
    return 0;
}

/* Parses the body's schema and gives its stored form. 0, or a 42201 answer. */
static int body_schema(const struct reg_store *st, struct schema_body *b, bool normalize,
                       struct reg_schema **out, struct strbuf *canonical, struct reg_result *res)
{
    if (pin_refs(st, b, res) != 0)
        return -1;
    char err[REG_ERR_MAX];
    if (reg_schema_parse(b->type, b->schema->str, b->schema->str_len, b->refs, b->n_refs,
                         reg_store_resolve, (void *)st, false, out, err, sizeof err) != 0) {
        reg_rest_error(res, 42201, "%s", err);
        return -1;
    }
    reg_schema_canonical(*out, normalize, canonical);
    return 0;
}

/* The parsed schema of a stored version (lenient), or NULL. */
static struct reg_schema *stored_schema(const struct reg_store *st, const struct reg_version *v)
{
    const struct reg_id *id = reg_store_id(st, v->id);
    if (!id)
        return NULL;
    struct reg_schema *s = NULL;
    char err[REG_ERR_MAX];
    if (reg_schema_parse(id->type, id->text, id->len, id->refs, id->n_refs, reg_store_resolve,
                         (void *)st, true, &s, err, sizeof err) != 0)
        return NULL;
    return s;
}

/* Judges s against the given versions (oldest first) at level. Returns whether compatible; the
 * reasons go to reasons (may be NULL). */
static bool judge(const struct reg_store *st, enum compat_level level, const struct reg_schema *s,
                  const struct reg_version *const *vers, size_t n, struct compat_reasons *reasons)
{
    if (level == COMPAT_NONE || n == 0)
        return true;
    const void **earlier = mem_calloc(n, sizeof(*earlier));
    bool ok = true;
    size_t parsed = 0;
    for (size_t i = 0; i < n; i++) {
        earlier[i] = stored_schema(st, vers[i]);
        if (!earlier[i]) {
            compat_reasons_add(reasons, "The stored schema of version %d does not parse",
                               (int)vers[i]->version);
            ok = false;
        }
        parsed++;
    }
    size_t failed_at = 0;
    if (ok)
        ok = compat_check(level, s, earlier, n, reg_schema_can_read, NULL, reasons, &failed_at);
    if (!ok && failed_at < n) {
        /* what Confluent adds after the differences */
        const struct reg_id *old = reg_store_id(st, vers[failed_at]->id);
        compat_reasons_add(reasons, "{oldSchemaVersion: %d}", (int)vers[failed_at]->version);
        compat_reasons_add(reasons, "{oldSchema: '%.*s'}", old ? (int)old->len : 0,
                           old ? old->text : "");
        compat_reasons_add(reasons, "{validateFields: 'false', compatibility: '%s'}",
                           compat_level_name(level));
    }
    for (size_t i = 0; i < parsed; i++)
        reg_schema_free((struct reg_schema *)earlier[i]);
    mem_free(earlier);
    return ok;
}

/* The live versions of s, oldest first, into *out (caller frees). */
static size_t live_versions(const struct reg_subject *s, const struct reg_version ***out)
{
    *out = mem_calloc(s && s->n ? s->n : 1, sizeof(**out));
    size_t n = 0;
    for (size_t i = 0; s && i < s->n; i++)
        if (!s->v[i].deleted)
            (*out)[n++] = &s->v[i];
    return n;
}

/* Confluent's "details" text: the reasons as a Java list prints them. */
static void reasons_text(struct strbuf *out, const struct compat_reasons *r)
{
    strbuf_putc(out, '[');
    for (size_t i = 0; i < r->n; i++)
        strbuf_printf(out, "%s%s", i ? ", " : "", r->items[i]);
    strbuf_putc(out, ']');
}

/* ---- routes ---- */

static void route_register(const struct reg_store *st, const struct reg_rest_req *req,
                           const char *subject, struct reg_result *res)
{
    enum reg_mode mode = subject_mode(st, subject);
    if (mode == REG_MODE_READONLY) {
        reg_rest_error(res, 42205, "Subject %s is in read-only mode", subject);
        return;
    }
    struct schema_body b;
    struct reg_schema *s = NULL;
    struct strbuf canon;
    strbuf_init(&canon);
    if (parse_schema_body(req, &b, res) != 0 ||
        body_schema(st, &b, param_true(req, "normalize"), &s, &canon, res) != 0)
        goto out;
    if (mode != REG_MODE_IMPORT && (b.id >= 0 || b.version >= 0)) {
        reg_rest_error(res, 42205, "Subject %s is not in import mode: a schema's id and version "
                       "may be given only in IMPORT mode", subject);
        goto out;
    }
    if (mode == REG_MODE_IMPORT && (b.id < 1 || b.id > INT32_MAX)) {
        reg_rest_error(res, 42205, "Subject %s is in import mode: the schema's id must be given",
                       subject);
        goto out;
    }
    const struct reg_subject *sub = reg_store_subject(st, subject);
    int32_t found = reg_store_find(st, b.type, canon.p, canon.len, b.refs, b.n_refs);
    /* already registered under this subject: its id, nothing written */
    for (size_t i = 0; sub && found && i < sub->n; i++)
        if (!sub->v[i].deleted && sub->v[i].id == found &&
            (mode != REG_MODE_IMPORT || found == b.id)) {
            struct json j;
            json_init(&j, &res->body);
            json_obj_begin(&j);
            json_key(&j, "id");
            json_i64(&j, found);
            json_obj_end(&j);
            goto out;
        }
    struct reg_id id = {.type = b.type, .text = canon.p, .len = canon.len, .refs = b.refs,
                        .n_refs = b.n_refs};
    const struct reg_version *latest = reg_subject_latest(sub, true);
    int32_t version = latest ? latest->version + 1 : 1;
    if (mode == REG_MODE_IMPORT) {
        const struct reg_id *had = reg_store_id(st, (int32_t)b.id);
        if (had && (had->type != b.type || had->len != canon.len ||
                    memcmp(had->text, canon.p, canon.len) ||
                    !reg_refs_equal(had->refs, had->n_refs, b.refs, b.n_refs))) {
            reg_rest_error(res, 42205, "Overwrite new schema with id %d is not permitted: the id "
                           "names another schema", (int)b.id);
            goto out;
        }
        id.id = (int32_t)b.id;
        if (b.version >= 1 && b.version <= INT32_MAX) {
            if (reg_subject_version(sub, (int32_t)b.version)) {
                reg_rest_error(res, 42205, "Version %d of subject %s exists already",
                               (int)b.version, subject);
                goto out;
            }
            version = (int32_t)b.version;
        }
    } else {
        const struct reg_version **vers;
        size_t n = live_versions(sub, &vers);
        struct compat_reasons reasons;
        compat_reasons_init(&reasons);
        bool ok = judge(st, subject_level(st, sub), s, vers, n, &reasons);
        mem_free(vers);
        if (!ok) {
            struct strbuf details;
            strbuf_init(&details);
            reasons_text(&details, &reasons);
            reg_rest_error(res, 409, "Schema being registered is incompatible with an earlier "
                           "schema for subject \"%s\", details: %s", subject,
                           strbuf_str(&details));
            strbuf_destroy(&details);
            compat_reasons_free(&reasons);
            goto out;
        }
        compat_reasons_free(&reasons);
        if (st->max_id == INT32_MAX && !found) {
            reg_rest_error(res, 50001, "Error in the backend data store: no schema id is left");
            goto out;
        }
        id.id = found ? found : st->max_id + 1;
    }
    struct reg_write *w = add_write(res, false);
    reg_key_schema(&w->key, subject, version);
    reg_value_schema(&w->value, subject, version, &id, false);
    struct json j;
    json_init(&j, &res->body);
    json_obj_begin(&j);
    json_key(&j, "id");
    json_i64(&j, id.id);
    json_obj_end(&j);
out:
    reg_schema_free(s);
    strbuf_destroy(&canon);
    schema_body_free(&b);
}

static void route_lookup(const struct reg_store *st, const struct reg_rest_req *req,
                         const char *subject, struct reg_result *res)
{
    bool deleted = param_true(req, "deleted");
    struct schema_body b;
    struct reg_schema *s = NULL;
    struct strbuf canon;
    strbuf_init(&canon);
    const struct reg_subject *sub = subject_or_404(st, subject, deleted, res);
    if (!sub || parse_schema_body(req, &b, res) != 0 ||
        body_schema(st, &b, param_true(req, "normalize"), &s, &canon, res) != 0) {
        if (!sub)
            memset(&b, 0, sizeof(b));
        goto out;
    }
    int32_t found = reg_store_find(st, b.type, canon.p, canon.len, b.refs, b.n_refs);
    for (size_t i = sub->n; found && i-- > 0;)
        if (sub->v[i].id == found && (deleted || !sub->v[i].deleted)) {
            struct json j;
            json_init(&j, &res->body);
            write_version(&j, st, subject, &sub->v[i]);
            goto out;
        }
    reg_rest_error(res, 40403, "Schema not found");
out:
    reg_schema_free(s);
    strbuf_destroy(&canon);
    schema_body_free(&b);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void route_subjects(const struct reg_store *st, const struct reg_rest_req *req,
                           struct reg_result *res)
{
    bool deleted = param_true(req, "deleted");
    const char *prefix = param(req, "subjectPrefix");
    size_t n = 0;
    const char **names = mem_calloc(st->subjects.len + 1, sizeof(*names));
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&st->subjects, &it, &k, &v)) {
        const struct reg_subject *s = v;
        if (s->n == 0 || (!deleted && reg_subject_live(s) == 0))
            continue;
        if (prefix && strncmp(s->name, prefix, strlen(prefix)))
            continue;
        if (!reg_authz_may_list(req, s->name))
            continue;
        names[n++] = s->name;
    }
    qsort(names, n, sizeof(*names), cmp_names);
    struct json j;
    json_init(&j, &res->body);
    json_arr_begin(&j);
    for (size_t i = 0; i < n; i++)
        json_cstr(&j, names[i]);
    json_arr_end(&j);
    mem_free(names);
}

static void route_versions(const struct reg_store *st, const struct reg_rest_req *req,
                           const char *subject, struct reg_result *res)
{
    bool deleted = param_true(req, "deleted");
    const struct reg_subject *s = subject_or_404(st, subject, deleted, res);
    if (!s)
        return;
    struct json j;
    json_init(&j, &res->body);
    json_arr_begin(&j);
    for (size_t i = 0; i < s->n; i++)
        if (deleted || !s->v[i].deleted)
            json_i64(&j, s->v[i].version);
    json_arr_end(&j);
}

/* GET /subjects/{s}/versions/{v}[/schema|/referencedby] */
static void route_version_get(const struct reg_store *st, const struct reg_rest_req *req,
                              const char *subject, const char *vtext, const char *tail,
                              struct reg_result *res)
{
    bool deleted = param_true(req, "deleted");
    int32_t v;
    if (parse_version(vtext, &v, res) != 0)
        return;
    const struct reg_subject *s = subject_or_404(st, subject, deleted, res);
    const struct reg_version *ver = s ? version_or_404(s, v, deleted, res) : NULL;
    if (!ver)
        return;
    if (tail && !strcmp(tail, "referencedby")) {
        is_referenced(st, subject, ver->version, &res->body);
        return;
    }
    if (tail && !strcmp(tail, "schema")) {
        const struct reg_id *id = reg_store_id(st, ver->id);
        if (id)
            answer_raw_schema(id, res);
        return;
    }
    struct json j;
    json_init(&j, &res->body);
    write_version(&j, st, subject, ver);
}

static void answer_int(struct reg_result *res, int64_t v)
{
    strbuf_printf(&res->body, "%lld", (long long)v);
}

static void route_version_delete(const struct reg_store *st, const struct reg_rest_req *req,
                                 const char *subject, const char *vtext, struct reg_result *res)
{
    bool permanent = param_true(req, "permanent");
    int32_t v;
    if (parse_version(vtext, &v, res) != 0)
        return;
    if (subject_mode(st, subject) == REG_MODE_READONLY) {
        reg_rest_error(res, 42205, "Subject %s is in read-only mode", subject);
        return;
    }
    const struct reg_subject *s = subject_or_404(st, subject, true, res);
    const struct reg_version *ver = s ? version_or_404(s, v, true, res) : NULL;
    if (!ver)
        return;
    if (!permanent && ver->deleted) {
        reg_rest_error(res, 40406, "Subject '%s' Version %d was soft deleted.Set permanent=true "
                       "to delete permanently", subject, (int)ver->version);
        return;
    }
    if (permanent && !ver->deleted) {
        reg_rest_error(res, 40407, "Subject '%s' Version %d was not deleted first before being "
                       "permanently deleted", subject, (int)ver->version);
        return;
    }
    if (is_referenced(st, subject, ver->version, NULL)) {
        reg_rest_error(res, 42206, "One or more references exist to the schema "
                       "{magic=1,keytype=SCHEMA,subject=%s,version=%d}.", subject,
                       (int)ver->version);
        return;
    }
    const struct reg_id *id = reg_store_id(st, ver->id);
    struct reg_write *w = add_write(res, permanent);
    reg_key_schema(&w->key, subject, ver->version);
    if (!permanent && id)
        reg_value_schema(&w->value, subject, ver->version, id, true);
    answer_int(res, ver->version);
}

static void route_subject_delete(const struct reg_store *st, const struct reg_rest_req *req,
                                 const char *subject, struct reg_result *res)
{
    bool permanent = param_true(req, "permanent");
    if (subject_mode(st, subject) == REG_MODE_READONLY) {
        reg_rest_error(res, 42205, "Subject %s is in read-only mode", subject);
        return;
    }
    const struct reg_subject *s = subject_or_404(st, subject, true, res);
    if (!s)
        return;
    size_t live = reg_subject_live(s);
    if (!permanent && live == 0) {
        reg_rest_error(res, 40404, "Subject '%s' was soft deleted.Set permanent=true to delete "
                       "permanently", subject);
        return;
    }
    if (permanent && live > 0) {
        reg_rest_error(res, 40405, "Subject '%s' was not deleted first before being permanently "
                       "deleted", subject);
        return;
    }
    for (size_t i = 0; i < s->n; i++)
        if (is_referenced(st, subject, s->v[i].version, NULL)) {
            reg_rest_error(res, 42206, "One or more references exist to the schema "
                           "{magic=1,keytype=SCHEMA,subject=%s,version=%d}.", subject,
                           (int)s->v[i].version);
            return;
        }
    struct json j;
    json_init(&j, &res->body);
    json_arr_begin(&j);
    for (size_t i = 0; i < s->n; i++) {
        if (!permanent && s->v[i].deleted)
            continue; /* soft: the live versions; permanent: all, each soft-deleted already */
        const struct reg_id *id = reg_store_id(st, s->v[i].id);
        struct reg_write *w = add_write(res, permanent);
        reg_key_schema(&w->key, subject, s->v[i].version);
        if (!permanent && id)
            reg_value_schema(&w->value, subject, s->v[i].version, id, true);
        json_i64(&j, s->v[i].version);
    }
    json_arr_end(&j);
}

/* GET /schemas/ids/{id}[/schema|/versions|/subjects] */
static void route_id(const struct reg_store *st, const struct reg_rest_req *req,
                     const char *idtext, const char *tail, struct reg_result *res)
{
    char *end;
    errno = 0;
    long long n = strtoll(idtext, &end, 10);
    const struct reg_id *id = NULL;
    if (*idtext >= '0' && *idtext <= '9' && !*end && !errno && n >= 1 && n <= INT32_MAX)
        id = reg_store_id(st, (int32_t)n);
    if (!id) {
        reg_rest_error(res, 40403, "Schema %s not found", idtext);
        return;
    }
    struct json j;
    json_init(&j, &res->body);
    if (!tail) {
        json_obj_begin(&j);
        if (id->type != REG_AVRO) {
            json_key(&j, "schemaType");
            json_cstr(&j, reg_type_name(id->type));
        }
        if (id->n_refs) {
            json_key(&j, "references");
            reg_refs_write(&j, id->refs, id->n_refs);
        }
        json_key(&j, "schema");
        json_str(&j, id->text, id->len);
        json_obj_end(&j);
        return;
    }
    if (!strcmp(tail, "schema")) {
        answer_raw_schema(id, res);
        return;
    }
    bool deleted = param_true(req, "deleted");
    bool subjects = !strcmp(tail, "subjects");
    const char **names = mem_calloc(st->subjects.len + 1, sizeof(*names));
    size_t nn = 0;
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&st->subjects, &it, &k, &v)) {
        const struct reg_subject *s = v;
        for (size_t i = 0; i < s->n; i++)
            if (s->v[i].id == id->id && (deleted || !s->v[i].deleted)) {
                if (reg_authz_may_list(req, s->name))
                    names[nn++] = s->name;
                break;
            }
    }
    qsort(names, nn, sizeof(*names), cmp_names);
    json_arr_begin(&j);
    for (size_t x = 0; x < nn; x++) {
        if (subjects) {
            json_cstr(&j, names[x]);
            continue;
        }
        const struct reg_subject *s = reg_store_subject(st, names[x]);
        for (size_t i = 0; i < s->n; i++)
            if (s->v[i].id == id->id && (deleted || !s->v[i].deleted)) {
                json_obj_begin(&j);
                json_key(&j, "subject");
                json_cstr(&j, s->name);
                json_key(&j, "version");
                json_i64(&j, s->v[i].version);
                json_obj_end(&j);
            }
    }
    json_arr_end(&j);
    mem_free(names);
}

static void route_types(struct reg_result *res)
{
    struct json j;
    json_init(&j, &res->body);
    json_arr_begin(&j);
    static const enum reg_type order[] = {REG_JSON, REG_PROTOBUF, REG_AVRO};
    for (size_t i = 0; i < 3; i++)
        if (reg_type_supported(order[i]))
            json_cstr(&j, reg_type_name(order[i]));
    json_arr_end(&j);
}

static void answer_setting(struct reg_result *res, const char *key, const char *value)
{
    struct json j;
    json_init(&j, &res->body);
    json_obj_begin(&j);
    json_key(&j, key);
    json_cstr(&j, value);
    json_obj_end(&j);
}

/* /config[/{s}] and /mode[/{s}] */
static void route_setting(const struct reg_store *st, const struct reg_rest_req *req,
                          bool is_mode, const char *subject, struct reg_result *res)
{
    const struct reg_subject *s = subject ? reg_store_subject(st, subject) : NULL;
    bool has = subject ? s && (is_mode ? s->has_mode : s->has_level) : true;
    const char *cur = is_mode ? reg_mode_name(subject && has ? s->mode : st->mode)
                              : compat_level_name(subject && has ? s->level : st->level);
    const char *get_key = is_mode ? "mode" : "compatibilityLevel";
    if (method_is(req, "GET")) {
        if (!has && !param_true(req, "defaultToGlobal")) {
            if (is_mode)
                reg_rest_error(res, 40409, "Subject '%s' does not have subject-level mode "
                               "configured", subject);
            else
                reg_rest_error(res, 40408, "Subject '%s' does not have subject-level "
                               "compatibility configured", subject);
            return;
        }
        answer_setting(res, get_key, cur);
        return;
    }
    if (method_is(req, "DELETE")) {
        if (subject && !s) {
            reg_rest_error(res, 40401, "Subject '%s' not found.", subject);
            return;
        }
        struct reg_write *w = add_write(res, true);
        if (is_mode)
            reg_key_mode(&w->key, subject);
        else
            reg_key_config(&w->key, subject);
        answer_setting(res, get_key, cur);
        return;
    }
    /* PUT */
    struct json_doc doc = {0};
    if (parse_json_body(req, &doc, res) != 0) {
        json_doc_free(&doc);
        return;
    }
    const struct json_value *f = json_get(doc.root, is_mode ? "mode" : "compatibility",
                                          JSON_STRING);
    enum compat_level level = COMPAT_BACKWARD;
    enum reg_mode mode = REG_MODE_READWRITE;
    if (is_mode && (!f || reg_mode_parse(f->str, f->str_len, &mode) != 0)) {
        reg_rest_error(res, 42204, "Invalid mode. Valid values are READWRITE, READONLY, IMPORT");
    } else if (!is_mode && (!f || compat_level_parse(f->str, f->str_len, &level) != 0)) {
        reg_rest_error(res, 42203, "Invalid compatibility level. Valid values are none, "
                       "backward, forward, full, backward_transitive, forward_transitive, and "
                       "full_transitive");
    } else if (is_mode && mode == REG_MODE_IMPORT && !param_true(req, "force") &&
               (subject ? s && reg_subject_live(s) > 0 : st->subjects.len > 0)) {
        reg_rest_error(res, 42205, "Cannot import since found existing subjects");
    } else {
        struct reg_write *w = add_write(res, false);
        if (is_mode) {
            reg_key_mode(&w->key, subject);
            reg_value_mode(&w->value, mode);
            answer_setting(res, "mode", reg_mode_name(mode));
        } else {
            reg_key_config(&w->key, subject);
            reg_value_config(&w->value, level);
            answer_setting(res, "compatibility", compat_level_name(level));
        }
    }
    json_doc_free(&doc);
}

/* POST /compatibility/subjects/{s}/versions[/{v}] */
static void route_compat(const struct reg_store *st, const struct reg_rest_req *req,
                         const char *subject, const char *vtext, struct reg_result *res)
{
    int32_t v = VERSION_LATEST;
    if (vtext && parse_version(vtext, &v, res) != 0)
        return;
    const struct reg_subject *sub = reg_store_subject(st, subject);
    bool no_versions = reg_subject_live(sub) == 0;
    if (vtext && v != VERSION_LATEST && no_versions) {
        reg_rest_error(res, 40401, "Subject '%s' not found.", subject);
        return;
    }
    const struct reg_version *one = NULL;
    if (vtext && !no_versions && !(one = version_or_404(sub, v, false, res)))
        return;
    struct schema_body b;
    struct reg_schema *s = NULL;
    struct strbuf canon;
    strbuf_init(&canon);
    struct compat_reasons reasons;
    compat_reasons_init(&reasons);
    if (parse_schema_body(req, &b, res) != 0 ||
        body_schema(st, &b, param_true(req, "normalize"), &s, &canon, res) != 0)
        goto out;
    enum compat_level level = subject_level(st, sub);
    bool ok;
    if (one) {
        /* one version: the level's direction, against that version only */
        static const enum compat_level plain[] = {
            COMPAT_NONE, COMPAT_BACKWARD, COMPAT_BACKWARD, COMPAT_FORWARD,
            COMPAT_FORWARD, COMPAT_FULL, COMPAT_FULL};
        ok = judge(st, plain[level], s, &one, 1, &reasons);
    } else {
        const struct reg_version **vers;
        size_t n = live_versions(sub, &vers);
        ok = judge(st, level, s, vers, n, &reasons);
        mem_free(vers);
    }
    struct json j;
    json_init(&j, &res->body);
    json_obj_begin(&j);
    json_key(&j, "is_compatible");
    json_bool(&j, ok);
    if (param_true(req, "verbose")) {
        json_key(&j, "messages");
        json_arr_begin(&j);
        for (size_t i = 0; i < reasons.n; i++)
            json_cstr(&j, reasons.items[i]);
        json_arr_end(&j);
    }
    json_obj_end(&j);
out:
    compat_reasons_free(&reasons);
    reg_schema_free(s);
    strbuf_destroy(&canon);
    schema_body_free(&b);
}

bool reg_rest_is_write(const struct reg_rest_req *req)
{
    if (method_is(req, "PUT") || method_is(req, "DELETE"))
        return true;
    /* POST /subjects/{s}/versions registers; lookups and compatibility checks only read */
    return method_is(req, "POST") && req->n_segs == 3 && seg_is(req, 0, "subjects") &&
           seg_is(req, 2, "versions");
}

static void not_found(struct reg_result *res)
{
    reg_rest_error(res, 404, "HTTP 404 Not Found");
}

static void not_allowed(struct reg_result *res)
{
    reg_rest_error(res, 405, "HTTP 405 Method Not Allowed");
}

static void route_subjects_tree(const struct reg_store *st, const struct reg_rest_req *req,
                                struct reg_result *res)
{
    size_t n = req->n_segs;
    if (n == 1) {
        method_is(req, "GET") ? route_subjects(st, req, res) : not_allowed(res);
        return;
    }
    const char *subject = req->segs[1];
    if (!subject_ok(subject, res))
        return;
    if (n == 2) {
        if (method_is(req, "POST"))
            route_lookup(st, req, subject, res);
        else if (method_is(req, "DELETE"))
            route_subject_delete(st, req, subject, res);
        else
            not_allowed(res);
        return;
    }
    if (!seg_is(req, 2, "versions") || n > 5) {
        not_found(res);
        return;
    }
    if (n == 3) {
        if (method_is(req, "GET"))
            route_versions(st, req, subject, res);
        else if (method_is(req, "POST"))
            route_register(st, req, subject, res);
        else
            not_allowed(res);
        return;
    }
    const char *tail = n == 5 ? req->segs[4] : NULL;
    if (tail && strcmp(tail, "schema") && strcmp(tail, "referencedby")) {
        not_found(res);
        return;
    }
    if (method_is(req, "GET"))
        route_version_get(st, req, subject, req->segs[3], tail, res);
    else if (method_is(req, "DELETE") && !tail)
        route_version_delete(st, req, subject, req->segs[3], res);
    else
        not_allowed(res);
}

void reg_rest_handle(const struct reg_store *st, const struct reg_rest_req *req,
                     struct reg_result *out)
{
    size_t n = req->n_segs;
    bool get = method_is(req, "GET") || method_is(req, "HEAD");
    if (!reg_authz_check(st, req, out))
        return;
    if (n == 0) {
        get ? (void)strbuf_puts(&out->body, "{}") : not_allowed(out);
        return;
    }
    const char *top = req->segs[0];
    if (!strcmp(top, "subjects")) {
        route_subjects_tree(st, req, out);
    } else if (!strcmp(top, "schemas")) {
        if (n == 2 && seg_is(req, 1, "types"))
            get ? route_types(out) : not_allowed(out);
        else if ((n == 3 || n == 4) && seg_is(req, 1, "ids") &&
                 (n == 3 || seg_is(req, 3, "schema") || seg_is(req, 3, "versions") ||
                  seg_is(req, 3, "subjects")))
            get ? route_id(st, req, req->segs[2], n == 4 ? req->segs[3] : NULL, out)
                : not_allowed(out);
        else
            not_found(out);
    } else if ((!strcmp(top, "config") || !strcmp(top, "mode")) && n <= 2) {
        bool is_mode = !strcmp(top, "mode");
        if (!get && !method_is(req, "PUT") && !method_is(req, "DELETE"))
            not_allowed(out);
        else if (n == 2 && !subject_ok(req->segs[1], out))
            return;
        else
            route_setting(st, req, is_mode, n == 2 ? req->segs[1] : NULL, out);
    } else if (!strcmp(top, "compatibility") && (n == 4 || n == 5) &&
               seg_is(req, 1, "subjects") && seg_is(req, 3, "versions")) {
        if (!method_is(req, "POST"))
            not_allowed(out);
        else if (subject_ok(req->segs[2], out))
            route_compat(st, req, req->segs[2], n == 5 ? req->segs[4] : NULL, out);
    } else {
        not_found(out);
    }
}
