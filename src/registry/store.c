/* The registry's state from `_schemas` records (see store.h for the formats).
 *
 * Owns: the subjects (a map by name), the id table (sorted by id, binary-searched) and the
 * content index (type + text + references -> id), every string in them.
 *
 * Invariants (beyond store.h's):
 *  1. by_content holds one entry per distinct content, naming the lowest id with that content
 *     (a topic written elsewhere may hold two ids of one content).
 *  2. A subject stays in the map once it has had a version or a config; it is removed when its
 *     last version is removed for good and it has neither level nor mode of its own.
 *
 * About ids and compaction: the highest id is learnt from the SCHEMA records present. When a
 * schema is deleted for good, its tombstone stays in the compacted topic for the topic's
 * delete.retention.ms; a store rebuilt after the tombstone is gone could give that id again if
 * it was the highest. Confluent's registry has the same property. */
#include "registry/store.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/errors.h"
#include "base/json.h"
#include "base/json_parse.h"
#include "base/mem.h"

static const char *const mode_names[] = {"READWRITE", "READONLY", "IMPORT"};

int reg_mode_parse(const char *s, size_t len, enum reg_mode *out)
{
    for (int i = 0; i < 3; i++)
        if (strlen(mode_names[i]) == len && strncasecmp(s, mode_names[i], len) == 0) {
            *out = (enum reg_mode)i;
            return 0;
        }
    return -ERR_INVALID;
}

const char *reg_mode_name(enum reg_mode m)
{
    return (unsigned)m < 3 ? mode_names[m] : "READWRITE";
}

void reg_store_init(struct reg_store *st)
{
    memset(st, 0, sizeof(*st));
    strmap_init(&st->subjects);
    strmap_init(&st->by_content);
    st->level = COMPAT_BACKWARD;
    st->mode = REG_MODE_READWRITE;
}

static void refs_free(struct reg_ref *refs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        mem_free(refs[i].name);
        mem_free(refs[i].subject);
    }
    mem_free(refs);
}

static void subject_free(struct reg_subject *s)
{
    mem_free(s->name);
    mem_free(s->v);
    mem_free(s);
}

void reg_store_destroy(struct reg_store *st)
{
    size_t it = 0;
    const char *k;
    void *v;
    while (strmap_next(&st->subjects, &it, &k, &v))
        subject_free(v);
    strmap_destroy(&st->subjects);
    strmap_destroy(&st->by_content);
    for (size_t i = 0; i < st->n_ids; i++) {
        mem_free(st->ids[i]->text);
        refs_free(st->ids[i]->refs, st->ids[i]->n_refs);
        mem_free(st->ids[i]);
    }
    mem_free(st->ids);
    memset(st, 0, sizeof(*st));
}

bool reg_refs_equal(const struct reg_ref *a, size_t na, const struct reg_ref *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (strcmp(a[i].name, b[i].name) || strcmp(a[i].subject, b[i].subject) ||
            a[i].version != b[i].version)
            return false;
    return true;
}

/* type, then each reference, then the text; NUL bytes separate (names hold none). */
static void content_key(struct strbuf *k, enum reg_type type, const char *text, size_t len,
                        const struct reg_ref *refs, size_t n_refs)
{
    strbuf_printf(k, "%d", (int)type);
    strbuf_putc(k, '\0');
    for (size_t i = 0; i < n_refs; i++) {
        strbuf_printf(k, "%s", refs[i].name);
        strbuf_putc(k, '\0');
        strbuf_printf(k, "%s", refs[i].subject);
        strbuf_putc(k, '\0');
        strbuf_printf(k, "%d", (int)refs[i].version);
        strbuf_putc(k, '\0');
    }
    strbuf_putc(k, '\1');
    strbuf_append(k, text, len);
}

int32_t reg_store_find(const struct reg_store *st, enum reg_type type, const char *text,
                       size_t len, const struct reg_ref *refs, size_t n_refs)
{
    struct strbuf k;
    strbuf_init(&k);
    content_key(&k, type, text, len, refs, n_refs);
    const struct reg_id *id = strmap_get(&st->by_content, k.p, k.len);
    strbuf_destroy(&k);
    return id ? id->id : 0;
}

/* The position of id in st->ids, or where it would go. */
static size_t id_pos(const struct reg_store *st, int32_t id)
{
    size_t lo = 0, hi = st->n_ids;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st->ids[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const struct reg_id *reg_store_id(const struct reg_store *st, int32_t id)
{
    size_t i = id_pos(st, id);
    return i < st->n_ids && st->ids[i]->id == id ? st->ids[i] : NULL;
}

struct reg_subject *reg_store_subject(const struct reg_store *st, const char *name)
{
    return strmap_get(&st->subjects, name, strlen(name));
}

static struct reg_subject *subject_get_or_add(struct reg_store *st, const char *name)
{
    struct reg_subject *s = reg_store_subject(st, name);
    if (!s) {
        s = mem_calloc(1, sizeof(*s));
        s->name = mem_strdup(name);
        strmap_put(&st->subjects, name, strlen(name), s);
    }
    return s;
}

static void subject_maybe_drop(struct reg_store *st, struct reg_subject *s)
{
    if (s->n == 0 && !s->has_level && !s->has_mode) {
        strmap_del(&st->subjects, s->name, strlen(s->name));
        subject_free(s);
    }
}

const struct reg_version *reg_subject_version(const struct reg_subject *s, int32_t v)
{
    for (size_t i = 0; s && i < s->n; i++)
        if (s->v[i].version == v)
            return &s->v[i];
    return NULL;
}

const struct reg_version *reg_subject_latest(const struct reg_subject *s, bool deleted)
{
    for (size_t i = s ? s->n : 0; i-- > 0;)
        if (deleted || !s->v[i].deleted)
            return &s->v[i];
    return NULL;
}

size_t reg_subject_live(const struct reg_subject *s)
{
    size_t n = 0;
    for (size_t i = 0; s && i < s->n; i++)
        n += !s->v[i].deleted;
    return n;
}

int reg_store_resolve(const char *subject, int32_t version, struct reg_resolved *out, void *data)
{
    const struct reg_store *st = data;
    const struct reg_subject *s = reg_store_subject(st, subject);
    const struct reg_version *v = version == -1 ? reg_subject_latest(s, false)
                                                : reg_subject_version(s, version);
    const struct reg_id *id = v && !v->deleted ? reg_store_id(st, v->id) : NULL;
    if (!id)
        return -ERR_NOT_FOUND;
    *out = (struct reg_resolved){id->type, id->text, id->len, id->refs, id->n_refs};
    return 0;
}

/* ---- applying records ---- */

static bool str_is(const struct json_value *v, const char *s)
{
    return v && v->type == JSON_STRING && v->str_len == strlen(s) && !memcmp(v->str, s, v->str_len);
}

/* A subject name from a record: a string without NUL, at most REG_SUBJECT_MAX bytes. */
static const char *subject_of(const struct json_value *o)
{
    const struct json_value *s = json_get(o, "subject", JSON_STRING);
    if (!s || s->str_len == 0 || s->str_len > REG_SUBJECT_MAX || strlen(s->str) != s->str_len)
        return NULL;
    return s->str;
}

static int parse_refs(const struct json_value *arr, struct reg_ref **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!arr || arr->type == JSON_NULL)
        return 0;
    if (arr->type != JSON_ARRAY || arr->n > REG_REFS_MAX)
        return -ERR_INVALID;
    struct reg_ref *refs = mem_calloc(arr->n ? arr->n : 1, sizeof(*refs));
    size_t n = 0;
    for (const struct json_value *r = arr->child; r; r = r->next) {
        const char *name = json_get_str(r, "name", NULL);
        const char *subject = json_get_str(r, "subject", NULL);
        int64_t version = json_get_int(r, "version", -2);
        if (!name || !subject || version < 1 || version > INT32_MAX ||
            strlen(subject) > REG_SUBJECT_MAX) {
            refs_free(refs, n);
            return -ERR_INVALID;
        }
        refs[n++] = (struct reg_ref){mem_strdup(name), mem_strdup(subject), (int32_t)version};
    }
    *out = refs;
    *n_out = n;
    return 0;
}

static void content_index(struct reg_store *st, struct reg_id *id)
{
    struct strbuf k;
    strbuf_init(&k);
    content_key(&k, id->type, id->text, id->len, id->refs, id->n_refs);
    struct reg_id *had = strmap_get(&st->by_content, k.p, k.len);
    if (!had || had->id > id->id)
        strmap_put(&st->by_content, k.p, k.len, id);
    strbuf_destroy(&k);
}

/* The id of a SCHEMA value: found (same id) or added. A known id keeps its first content. */
static int id_learn(struct reg_store *st, const struct json_value *val, int32_t *out)
{
    int64_t id = json_get_int(val, "id", -1);
    const struct json_value *text = json_get(val, "schema", JSON_STRING);
    const struct json_value *tv = json_member(val, "schemaType");
    enum reg_type type = REG_AVRO;
    if (id < 1 || id > INT32_MAX || !text)
        return -ERR_INVALID;
    if (tv && tv->type != JSON_NULL &&
        (tv->type != JSON_STRING || reg_type_parse(tv->str, tv->str_len, &type) != 0))
        return -ERR_INVALID;
    *out = (int32_t)id;
    if (reg_store_id(st, (int32_t)id))
        return 0;
    struct reg_id *r = mem_calloc(1, sizeof(*r));
    if (parse_refs(json_member(val, "references"), &r->refs, &r->n_refs) != 0) {
        mem_free(r);
        return -ERR_INVALID;
    }
    r->id = (int32_t)id;
    r->type = type;
    r->text = mem_alloc(text->str_len + 1);
    memcpy(r->text, text->str, text->str_len + 1);
    r->len = text->str_len;
    if (st->n_ids == st->cap_ids) {
        st->cap_ids = st->cap_ids ? st->cap_ids * 2 : 16;
        st->ids = mem_realloc(st->ids, st->cap_ids * sizeof(*st->ids));
    }
    size_t pos = id_pos(st, r->id);
    memmove(st->ids + pos + 1, st->ids + pos, (st->n_ids - pos) * sizeof(*st->ids));
    st->ids[pos] = r;
    st->n_ids++;
    if (r->id > st->max_id)
        st->max_id = r->id;
    content_index(st, r);
    return 0;
}

static void version_remove(struct reg_subject *s, int32_t version)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].version == version) {
            memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
            s->n--;
            return;
        }
}

static void version_put(struct reg_subject *s, int32_t version, int32_t id, bool deleted)
{
    size_t i = 0;
    while (i < s->n && s->v[i].version < version)
        i++;
    if (i < s->n && s->v[i].version == version) {
        s->v[i].id = id;
        s->v[i].deleted = deleted;
        return;
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4;
        s->v = mem_realloc(s->v, s->cap * sizeof(*s->v));
    }
    memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
    s->v[i] = (struct reg_version){version, id, deleted};
    s->n++;
}

static int apply_schema(struct reg_store *st, const struct json_value *key,
                        const struct json_value *val)
{
    const char *subject = subject_of(key);
    int64_t version = json_get_int(key, "version", -1);
    if (!subject || version < 1 || version > INT32_MAX)
        return -ERR_INVALID;
    if (!val) { /* tombstone: gone for good */
        struct reg_subject *s = reg_store_subject(st, subject);
        if (s) {
            version_remove(s, (int32_t)version);
            subject_maybe_drop(st, s);
        }
        return 0;
    }
    if (val->type != JSON_OBJECT)
        return -ERR_INVALID;
    int32_t id;
    if (id_learn(st, val, &id) != 0)
        return -ERR_INVALID;
    const struct json_value *del = json_get(val, "deleted", JSON_BOOL);
    version_put(subject_get_or_add(st, subject), (int32_t)version, id, del && del->boolean);
    return 0;
}

/* CONFIG and MODE: subject NULL (JSON null or absent) is the global setting. */
static int apply_setting(struct reg_store *st, bool is_mode, const struct json_value *key,
                         const struct json_value *val)
{
    const struct json_value *sv = json_member(key, "subject");
    const char *subject = NULL;
    if (sv && sv->type != JSON_NULL && !(subject = subject_of(key)))
        return -ERR_INVALID;
    int parsed = 0;
    if (val) {
        const struct json_value *f =
            json_get(val, is_mode ? "mode" : "compatibilityLevel", JSON_STRING);
        if (!f)
            return -ERR_INVALID;
        if (is_mode) {
            enum reg_mode m;
            if (reg_mode_parse(f->str, f->str_len, &m) != 0)
                return -ERR_INVALID;
            parsed = (int)m;
        } else {
            enum compat_level l;
            if (compat_level_parse(f->str, f->str_len, &l) != 0)
                return -ERR_INVALID;
            parsed = (int)l;
        }
    }
    bool *has;
    struct reg_subject *s = NULL;
    enum compat_level *lvl;
    enum reg_mode *mode;
    if (subject) {
        s = val ? subject_get_or_add(st, subject) : reg_store_subject(st, subject);
        if (!s)
            return 0;
        has = is_mode ? &s->has_mode : &s->has_level;
        lvl = &s->level;
        mode = &s->mode;
    } else {
        has = is_mode ? &st->has_mode : &st->has_level;
        lvl = &st->level;
        mode = &st->mode;
    }
    *has = val != NULL;
    if (is_mode)
        *mode = val ? (enum reg_mode)parsed : REG_MODE_READWRITE;
    else
        *lvl = val ? (enum compat_level)parsed : COMPAT_BACKWARD;
    if (s)
        subject_maybe_drop(st, s);
    return 0;
}

static int apply_delete_subject(struct reg_store *st, const struct json_value *key,
                                const struct json_value *val, bool clear)
{
    const char *subject = subject_of(key);
    if (!subject)
        return -ERR_INVALID;
    if (!val)
        return 0; /* a compacted-away marker: nothing to do */
    struct reg_subject *s = reg_store_subject(st, subject);
    if (!s)
        return 0;
    if (clear) {
        for (size_t i = s->n; i-- > 0;)
            if (s->v[i].deleted)
                version_remove(s, s->v[i].version);
        subject_maybe_drop(st, s);
        return 0;
    }
    int64_t upto = json_get_int(val, "version", -1);
    if (upto < 1)
        return -ERR_INVALID;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].version <= upto)
            s->v[i].deleted = true;
    return 0;
}

static int apply_parsed(struct reg_store *st, const struct json_value *key,
                        const struct json_value *val)
{
    if (key->type != JSON_OBJECT || (val && val->type != JSON_OBJECT))
        return -ERR_INVALID;
    const struct json_value *kt = json_member(key, "keytype");
    if (str_is(kt, "SCHEMA"))
        return apply_schema(st, key, val);
    if (str_is(kt, "CONFIG"))
        return apply_setting(st, false, key, val);
    if (str_is(kt, "MODE"))
        return apply_setting(st, true, key, val);
    if (str_is(kt, "DELETE_SUBJECT"))
        return apply_delete_subject(st, key, val, false);
    if (str_is(kt, "CLEAR_SUBJECT"))
        return apply_delete_subject(st, key, val, true);
    if (str_is(kt, "NOOP"))
        return 0;
    return -ERR_INVALID;
}

int reg_store_apply(struct reg_store *st, const char *key, size_t klen, const char *value,
                    size_t vlen)
{
    struct json_limits lim = {.depth_max = 16, .values_max = 1u << 16};
    struct json_doc kd = {0}, vd = {0};
    char err[128];
    int rc = -ERR_INVALID;
    if (key && json_parse(&kd, key, klen, &lim, err, sizeof err) == 0 &&
        (!value || json_parse(&vd, value, vlen, &lim, err, sizeof err) == 0))
        rc = apply_parsed(st, kd.root, value ? vd.root : NULL);
    json_doc_free(&kd);
    json_doc_free(&vd);
    if (rc == 0)
        st->applied++;
    else
        st->skipped++;
    return rc;
}

/* ---- encoders ---- */

void reg_refs_write(struct json *j, const struct reg_ref *refs, size_t n)
{
    json_arr_begin(j);
    for (size_t i = 0; i < n; i++) {
        json_obj_begin(j);
        json_key(j, "name");
        json_cstr(j, refs[i].name);
        json_key(j, "subject");
        json_cstr(j, refs[i].subject);
        json_key(j, "version");
        json_i64(j, refs[i].version);
        json_obj_end(j);
    }
    json_arr_end(j);
}

static void key_begin(struct json *j, struct strbuf *out, const char *type)
{
    json_init(j, out);
    json_obj_begin(j);
    json_key(j, "keytype");
    json_cstr(j, type);
}

void reg_key_schema(struct strbuf *out, const char *subject, int32_t version)
{
    struct json j;
    key_begin(&j, out, "SCHEMA");
    json_key(&j, "subject");
    json_cstr(&j, subject);
    json_key(&j, "version");
    json_i64(&j, version);
    json_key(&j, "magic");
    json_i64(&j, 1);
    json_obj_end(&j);
}

void reg_value_schema(struct strbuf *out, const char *subject, int32_t version,
                      const struct reg_id *id, bool deleted)
{
    struct json j;
    json_init(&j, out);
    json_obj_begin(&j);
    json_key(&j, "subject");
    json_cstr(&j, subject);
    json_key(&j, "version");
    json_i64(&j, version);
    json_key(&j, "id");
    json_i64(&j, id->id);
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
    json_key(&j, "deleted");
    json_bool(&j, deleted);
    json_obj_end(&j);
}

static void setting_key(struct strbuf *out, const char *type, const char *subject)
{
    struct json j;
    key_begin(&j, out, type);
    json_key(&j, "subject");
    json_cstr(&j, subject); /* NULL: null, the global setting */
    json_key(&j, "magic");
    json_i64(&j, 0);
    json_obj_end(&j);
}

void reg_key_config(struct strbuf *out, const char *subject)
{
    setting_key(out, "CONFIG", subject);
}

void reg_key_mode(struct strbuf *out, const char *subject)
{
    setting_key(out, "MODE", subject);
}

void reg_value_config(struct strbuf *out, enum compat_level level)
{
    struct json j;
    json_init(&j, out);
    json_obj_begin(&j);
    json_key(&j, "compatibilityLevel");
    json_cstr(&j, compat_level_name(level));
    json_obj_end(&j);
}

void reg_value_mode(struct strbuf *out, enum reg_mode mode)
{
    struct json j;
    json_init(&j, out);
    json_obj_begin(&j);
    json_key(&j, "mode");
    json_cstr(&j, reg_mode_name(mode));
    json_obj_end(&j);
}

void reg_key_noop(struct strbuf *out)
{
    struct json j;
    key_begin(&j, out, "NOOP");
    json_key(&j, "magic");
    json_i64(&j, 0);
    json_obj_end(&j);
}
