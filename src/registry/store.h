/* The schema registry's state, built from the records of the `_schemas` topic, in Confluent
 * Schema Registry's formats (so a topic it wrote loads as is, and it could load ours):
 *
 *   key {"keytype":"SCHEMA","subject":S,"version":V,"magic":1}
 *       value {"subject":S,"version":V,"id":I,"schemaType":T,"references":[...],
 *              "schema":TEXT,"deleted":B}    (schemaType left out for AVRO)
 *       null: version V of S is gone for good (a permanent delete)
 *   key {"keytype":"CONFIG","subject":S|null,"magic":0}
 *       value {"compatibilityLevel":L}; null: the subject's (or the global) level is removed
 *   key {"keytype":"MODE","subject":S|null,"magic":0}
 *       value {"mode":M}; null: removed
 *   key {"keytype":"DELETE_SUBJECT","subject":S,"magic":0}
 *       value {"subject":S,"version":V}: versions <= V of S are soft-deleted
 *   key {"keytype":"CLEAR_SUBJECT","subject":S,"magic":0}
 *       value {"subject":S}: S's soft-deleted versions are gone for good
 *   key {"keytype":"NOOP",...}: nothing
 *
 * A record that does not parse, or of a kind not listed, is skipped and counted (never fatal:
 * the topic may have been written by another registry). Records are applied in offset order;
 * a later record of the same key replaces the earlier one, as compaction would.
 *
 * Ids: a schema id names one (type, text, references) across all subjects. next id = the
 * highest id ever applied + 1, so an id is not given twice by this store (see the note in
 * store.c about ids that compaction has removed).
 *
 * Invariants:
 *  1. Each subject's versions are sorted by version, each version at most once.
 *  2. Every version's id is in the id table; an id stays in the table while some version (or
 *     none: ids are never forgotten while the store lives) names it.
 *  3. Strings are owned copies; nothing points into a record after reg_store_apply returns.
 *
 * Not thread-safe: one owner (the broker's reactor). */
#ifndef SP_REGISTRY_STORE_H
#define SP_REGISTRY_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/json.h"
#include "base/strbuf.h"
#include "base/strmap.h"
#include "registry/compat_level.h"
#include "registry/schema.h"

#define REG_SUBJECT_MAX 512 /* bytes of a subject name */

enum reg_mode { REG_MODE_READWRITE, REG_MODE_READONLY, REG_MODE_IMPORT };

/* "READWRITE", "READONLY", "IMPORT" (case-insensitive). 0 or -ERR_INVALID. */
int reg_mode_parse(const char *s, size_t len, enum reg_mode *out);
const char *reg_mode_name(enum reg_mode m);

struct reg_id {
    int32_t id;
    enum reg_type type;
    char *text; /* the schema as stored: its canonical form */
    size_t len;
    struct reg_ref *refs;
    size_t n_refs;
};

struct reg_version {
    int32_t version;
    int32_t id;
    bool deleted; /* soft-deleted */
};

struct reg_subject {
    char *name;
    struct reg_version *v; /* sorted by version (invariant 1) */
    size_t n;
    size_t cap;
    bool has_level;
    enum compat_level level;
    bool has_mode;
    enum reg_mode mode;
};

struct reg_store {
    struct strmap subjects; /* name -> struct reg_subject */
    struct strmap by_content; /* content key (store.c) -> struct reg_id */
    struct reg_id **ids;    /* sorted by id */
    size_t n_ids;
    size_t cap_ids;
    int32_t max_id;          /* highest id applied; 0 before any */
    bool has_level;          /* a global level record was applied */
    enum compat_level level; /* the global level (BACKWARD unless set) */
    bool has_mode;
    enum reg_mode mode; /* the global mode (READWRITE unless set) */
    uint64_t applied;   /* records applied */
    uint64_t skipped;   /* records not understood */
};

void reg_store_init(struct reg_store *st);
void reg_store_destroy(struct reg_store *st);

/* Applies one record of `_schemas` (value NULL: a tombstone). Returns 0, or -ERR_INVALID for a
 * record skipped (counted in st->skipped). */
int reg_store_apply(struct reg_store *st, const char *key, size_t klen, const char *value,
                    size_t vlen);

struct reg_subject *reg_store_subject(const struct reg_store *st, const char *name);
const struct reg_id *reg_store_id(const struct reg_store *st, int32_t id);
/* The version v of subject s, or NULL. */
const struct reg_version *reg_subject_version(const struct reg_subject *s, int32_t v);
/* The highest version not deleted (or, with deleted, of any), or NULL. */
const struct reg_version *reg_subject_latest(const struct reg_subject *s, bool deleted);
/* Versions not deleted. */
size_t reg_subject_live(const struct reg_subject *s);

/* The id registered for exactly this (type, text, references), or 0. */
int32_t reg_store_find(const struct reg_store *st, enum reg_type type, const char *text,
                       size_t len, const struct reg_ref *refs, size_t n_refs);
/* Whether two reference lists are equal (same names, subjects, versions, order). */
bool reg_refs_equal(const struct reg_ref *a, size_t na, const struct reg_ref *b, size_t nb);

/* A reg_resolve_fn over the store (data: the store): live versions only. */
int reg_store_resolve(const char *subject, int32_t version, struct reg_resolved *out, void *data);

/* Record encoders: append the key or value JSON to out. */
void reg_key_schema(struct strbuf *out, const char *subject, int32_t version);
void reg_value_schema(struct strbuf *out, const char *subject, int32_t version,
                      const struct reg_id *id, bool deleted);
void reg_key_config(struct strbuf *out, const char *subject /* NULL: global */);
void reg_value_config(struct strbuf *out, enum compat_level level);
void reg_key_mode(struct strbuf *out, const char *subject /* NULL: global */);
void reg_value_mode(struct strbuf *out, enum reg_mode mode);
void reg_key_noop(struct strbuf *out);

/* Writes a references array ([{"name":..,"subject":..,"version":..}, ...]) as j's next value. */
void reg_refs_write(struct json *j, const struct reg_ref *refs, size_t n);

#endif
