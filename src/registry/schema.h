/* One registered schema, whatever its language: the registry's view of registry/avro.h,
 * registry/protobuf.h and registry/json_schema.h behind one type.
 *
 *   reg_schema_parse()      text + schema type + Confluent references -> a parsed schema, or
 *                           the refusal's text (the REST API answers 42201 with it)
 *   reg_schema_canonical()  the text the registry stores and compares (normalize: Confluent's
 *                           normalize=true form)
 *   reg_schema_can_read()   the language's directed check, as a compat_can_read_fn
 *
 * References are Confluent's: a list of {name, subject, version}. The caller's resolver turns
 * a subject and version into the stored text, type and references of that version; the
 * references' references are resolved too (at most REG_REFS_MAX schemas in all, REG_REF_DEPTH_MAX
 * deep, a cycle refused). Avro sees every named type of the resolved schemas; Protobuf's imports
 * and JSON Schema's $refs to other documents are looked up by reference name (an import path, a
 * URL) across them all.
 *
 * Pure: no global state, nothing kept from the resolver but copies. */
#ifndef SP_REGISTRY_SCHEMA_H
#define SP_REGISTRY_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"
#include "registry/compat_level.h"

enum reg_type { REG_AVRO, REG_PROTOBUF, REG_JSON };
#define REG_TYPE_COUNT 3

#define REG_REFS_MAX 64     /* schemas one schema's references reach, transitively */
#define REG_REF_DEPTH_MAX 8 /* references of references of ... */
#define REG_ERR_MAX 512     /* room a refusal's text needs */

/* "AVRO", "PROTOBUF", "JSON" (exactly, as Confluent). 0 or -ERR_INVALID. */
int reg_type_parse(const char *s, size_t len, enum reg_type *out);
const char *reg_type_name(enum reg_type t);
/* Whether this build can parse and judge schemas of type t. */
bool reg_type_supported(enum reg_type t);

struct reg_ref {
    char *name;    /* the reference's name: an Avro full name, a .proto import path, a URL */
    char *subject; /* where the referenced schema is registered */
    int32_t version;
};

/* What a resolver hands back for (subject, version); valid until the next call. */
struct reg_resolved {
    enum reg_type type;
    const char *text;
    size_t len;
    const struct reg_ref *refs;
    size_t n_refs;
};
/* 0 with *out filled, or -ERR_NOT_FOUND (no such version, or it is deleted). */
typedef int (*reg_resolve_fn)(const char *subject, int32_t version, struct reg_resolved *out,
                              void *data);

struct reg_schema;

/* Parses text[0, len) of type t with references refs[0, n_refs) through resolve (which may be
 * NULL when n_refs is 0). lenient: a schema already stored (Avro's lenient parse; Protobuf and
 * JSON are parsed as usual). Returns 0 with *out (release with reg_schema_free), or
 * -ERR_INVALID with a NUL-terminated reason in err (errcap bytes; REG_ERR_MAX is enough). */
int reg_schema_parse(enum reg_type t, const char *text, size_t len, const struct reg_ref *refs,
                     size_t n_refs, reg_resolve_fn resolve, void *data, bool lenient,
                     struct reg_schema **out, char *err, size_t errcap);
void reg_schema_free(struct reg_schema *s);
enum reg_type reg_schema_type(const struct reg_schema *s);

/* Appends the stored form: Avro's canonical string, Protobuf's canonical text, JSON Schema's
 * compact document (with normalize, each language's normalized form). */
void reg_schema_canonical(const struct reg_schema *s, bool normalize, struct strbuf *out);

/* A record's payload after the magic byte and the schema id, p[0, n) (for Protobuf the
 * message indexes come first), decoded with s and appended to out as JSON: Avro's JSON
 * encoding, Protobuf's JSON mapping, a JSON Schema payload as the JSON it is. Untrusted bytes:
 * 0, or -ERR_INVALID with the reason in err. */
int reg_schema_decode(const struct reg_schema *s, const uint8_t *p, size_t n, struct strbuf *out,
                      char *err, size_t errcap);

/* compat_can_read_fn over two const struct reg_schema * of the same type (of different types
 * they are incompatible). data is unused. */
bool reg_schema_can_read(const void *reader, const void *writer, const char *reader_role,
                         const char *writer_role, struct compat_reasons *reasons, void *data);

#endif
