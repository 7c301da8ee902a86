/* Avro schemas for the schema registry: the schema language as pure functions over text.
 *
 *   avro_schema_parse()   JSON text (or the bare-string form, "string") -> a model, every
 *                         refusal explained (the registry answers 42201 "Invalid schema" with
 *                         that text)
 *   avro_canonical()      the string the registry stores, returns and compares to find an
 *                         already registered schema: what Confluent's AvroSchema
 *                         .canonicalString() gives (Avro Java's Schema.toString())
 *   avro_normalized()     the same after Confluent's normalize=true
 *   avro_pcf()            the specification's Parsing Canonical Form; avro_fingerprint() its
 *                         CRC-64-AVRO (Rabin) fingerprint
 *   avro_can_read()       schema resolution: can a reader read all data of a writer
 *
 * The model follows the Avro specification (1.12) where it is firm, and Avro Java 1.12 (which
 * Confluent Schema Registry runs) where the specification leaves a choice:
 *   - Names: a name with a dot is a full name (a namespace attribute beside it is ignored);
 *     otherwise the namespace attribute, else the enclosing named type's, qualifies it. Name
 *     parts and enum symbols are [A-Za-z_][A-Za-z0-9_]*; no named type may be called after a
 *     primitive; no full name is defined twice (nor one a referenced schema defines). A
 *     reference without a dot is looked up in the enclosing namespace, then in the null one.
 *     A name may be used before (or inside, for recursion) its definition in the same text.
 *   - Other schemas' named types are visible through avro_parse_opts.refs (Confluent's schema
 *     references: the caller passes the already parsed schemas, the references' references
 *     included).
 *   - Unions: no union directly inside a union, no two branches of the same unnamed type or of
 *     the same full name; [] is a (useless) union.
 *   - Field defaults are checked against the field's type (a union's default against any of its
 *     branches, as Avro 1.12; a textual default of a float or double field is read as a
 *     number, as Avro Java does); an enum's default must be one of its symbols (so must an
 *     enum-typed field default).
 *   - Logical types: decimal (bytes or fixed, 0 < precision, precision within what the fixed
 *     size holds, 0 <= scale <= precision), big-decimal, uuid (string or fixed 16), date,
 *     time-millis (int), time-micros, timestamp-*, local-timestamp-* (long), duration (fixed
 *     12). An invalid or unknown one is ignored, the underlying type stands (the attribute is
 *     kept as a property).
 *   - Attributes the specification does not define are kept as properties, in document order,
 *     and written back by the canonical forms but the PCF. doc and aliases are kept; doc of a
 *     non-string kind is ignored as Avro Java ignores it.
 *   - Compatibility ignores logical types (as Avro Java's SchemaCompatibility and so Confluent
 *     do: decimal(4,2) and decimal(6,3) over bytes are compatible).
 *
 * AVRO_PARSE_LENIENT is for schemas already stored (a `_schemas` topic, possibly written by
 * Confluent): name syntax and defaults are not checked, as Confluent does not re-check them.
 *
 * Limits: JSON nesting is at most AVRO_JSON_DEPTH_MAX (deeper text is refused, never a stack
 * overflow); the text's size cap is the caller's. Every recursion here is bounded by that
 * depth times the chain of references. Thread-safe on distinct schemas; a parsed schema is
 * immutable and may be shared between threads. */
#ifndef SP_REGISTRY_AVRO_H
#define SP_REGISTRY_AVRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/json_parse.h"
#include "base/strbuf.h"
#include "registry/compat_level.h"

#define AVRO_JSON_DEPTH_MAX 128

enum avro_type {
    AVRO_NULL,
    AVRO_BOOLEAN,
    AVRO_INT,
    AVRO_LONG,
    AVRO_FLOAT,
    AVRO_DOUBLE,
    AVRO_BYTES,
    AVRO_STRING,
    AVRO_RECORD,
    AVRO_ENUM,
    AVRO_ARRAY,
    AVRO_MAP,
    AVRO_UNION,
    AVRO_FIXED,
};

enum avro_logical {
    AVRO_LT_NONE, /* none, or an invalid or unknown one (ignored) */
    AVRO_LT_DECIMAL,
    AVRO_LT_BIG_DECIMAL,
    AVRO_LT_UUID,
    AVRO_LT_DATE,
    AVRO_LT_TIME_MILLIS,
    AVRO_LT_TIME_MICROS,
    AVRO_LT_TIMESTAMP_MILLIS,
    AVRO_LT_TIMESTAMP_MICROS,
    AVRO_LT_TIMESTAMP_NANOS,
    AVRO_LT_LOCAL_TIMESTAMP_MILLIS,
    AVRO_LT_LOCAL_TIMESTAMP_MICROS,
    AVRO_LT_LOCAL_TIMESTAMP_NANOS,
    AVRO_LT_DURATION,
};

enum avro_order {
    AVRO_ORDER_ASCENDING,
    AVRO_ORDER_DESCENDING,
    AVRO_ORDER_IGNORE,
};

/* An attribute the specification does not define (kept, see above). */
struct avro_prop {
    const char *key; /* NUL-terminated UTF-8 */
    const struct json_value *value;
};

struct avro_name {
    const char *name;  /* the simple name */
    const char *space; /* the namespace, or NULL for the null namespace */
    const char *full;  /* space.name, or name */
};

struct avro_node;
struct strmap;

struct avro_field {
    const char *name;
    const char *doc; /* NULL if none */
    const struct avro_node *type;
    const struct json_value *def; /* the default, or NULL if none */
    enum avro_order order;
    const char **aliases; /* distinct, in document order */
    size_t n_aliases;
    const struct avro_prop *props;
    size_t n_props;
    size_t offset; /* byte offset of the field's object in the text */
};

/* One schema node. Named types (record, enum, fixed) are shared: every reference to one
 * points at its single node, so a recursive record's graph has a cycle. */
struct avro_node {
    enum avro_type type;
    bool is_error; /* record: declared with "type": "error" */
    enum avro_logical logical;
    int32_t precision;               /* decimal */
    int32_t scale;                   /* decimal */
    struct avro_name name;           /* named types; all NULL otherwise */
    const char *doc;                 /* named types: NULL if none */
    const struct avro_name *aliases; /* named types: distinct full names, in document order */
    size_t n_aliases;
    const struct avro_field *fields; /* record */
    size_t n_fields;
    const char **symbols; /* enum */
    size_t n_symbols;
    const char *enum_default;          /* enum: NULL if none */
    int32_t size;                      /* fixed */
    const struct avro_node *items;     /* array: items; map: values */
    const struct avro_node **branches; /* union */
    size_t n_branches;
    const struct avro_prop *props;
    size_t n_props;
    const struct strmap *index; /* record: field names, enum: symbols -> position + 1 */
};

struct avro_schema;

enum avro_parse_flags {
    AVRO_PARSE_LENIENT = 1 << 0, /* stored schemas: no name syntax or default checks */
};

struct avro_parse_opts {
    const struct avro_schema *const *refs; /* schemas whose named types are visible */
    size_t n_refs;
    unsigned flags; /* enum avro_parse_flags */
};

/* Parses text[0, len). opts may be NULL (no references, strict). Returns 0 with *out owning
 * the schema (release with avro_schema_free()), or -ERR_INVALID with the reason in err
 * (NUL-terminated, truncated to err_size). The referenced schemas must outlive *out: its
 * model points into them. */
int avro_schema_parse(const char *text, size_t len, const struct avro_parse_opts *opts,
                      struct avro_schema **out, char *err, size_t err_size);
void avro_schema_free(struct avro_schema *s);

const struct avro_node *avro_schema_root(const struct avro_schema *s);
/* The full name of the root if it is a record (Confluent's AvroSchema.name()), else NULL. */
const char *avro_schema_name(const struct avro_schema *s);
/* Named types defined in the text, in the order their definitions appear. */
size_t avro_schema_named_count(const struct avro_schema *s);
const struct avro_node *avro_schema_named(const struct avro_schema *s, size_t i);

/* The field of record rec named name[0, len), or NULL. O(1). */
const struct avro_field *avro_record_field(const struct avro_node *rec, const char *name,
                                           size_t len);
/* The position of symbol s[0, len) in enum e, or -1. O(1). */
long avro_enum_symbol(const struct avro_node *e, const char *s, size_t len);

/* The lower-case type name ("record"); avro_type_upper() gives Avro Java's ("RECORD"). */
const char *avro_type_name(enum avro_type t);
const char *avro_type_upper(enum avro_type t);
/* The logical type's name ("timestamp-millis"), NULL for AVRO_LT_NONE. */
const char *avro_logical_name(enum avro_logical lt);

/* Canonical forms, appended to out. All three are compact JSON in UTF-8 (non-ASCII unescaped),
 * named types written in full at their first appearance and by name afterwards.
 *
 * avro_canonical(): Avro Java's Schema.toString(references) byte for byte in the cases the
 * tests cover: attributes in Avro Java's order (type, name, namespace when it differs from the
 * enclosing one, doc, fields/symbols/items/values/size, default, properties in document order,
 * aliases; fields: name, type, doc, default, order unless ascending, aliases, properties),
 * names shortened where the enclosing namespace allows, Jackson's string escapes and number
 * spelling (1.50 -> 1.5, 1e2 -> 100.0). Named types that are the roots of referenced schemas
 * are written by name, as Confluent passes them to toString.
 *
 * avro_normalized(): what Confluent registers under normalize=true (AvroSchema.normalize()
 * then canonicalString()): as avro_canonical() but properties sorted by key (a valid logical
 * type's attributes first), aliases sorted, a named type's empty doc dropped, "error" written
 * as "record", and field defaults converted to the field's type (1 -> 1.0 for a double).
 *
 * avro_pcf(): Parsing Canonical Form ([PRIMITIVES], [FULLNAMES], [STRIP], [ORDER], [STRINGS],
 * [INTEGERS], [WHITESPACE]); referenced types are written in full. */
void avro_canonical(const struct avro_schema *s, struct strbuf *out);
void avro_normalized(const struct avro_schema *s, struct strbuf *out);
void avro_pcf(const struct avro_schema *s, struct strbuf *out);

/* CRC-64-AVRO of p[0, n) (the specification's fingerprint64), and of the schema's PCF. */
uint64_t avro_crc64(const void *p, size_t n);
uint64_t avro_fingerprint(const struct avro_schema *s);

/* Schema resolution, as Avro Java's SchemaCompatibility judges it: true when `reader` can
 * read all data written with `writer`. When false, appends to reasons (may be NULL) one
 * Confluent verbose message per incompatibility found:
 *   {errorType:'TYPE_MISMATCH', description:'The type (path '/fields/0/type') of a field in
 *    the new schema does not match with the old schema', additionalInfo:'reader type: STRING
 *    not compatible with writer type: INT'}
 * with reader_role and writer_role ("new", "old") in the descriptions. Kinds: NAME_MISMATCH,
 * FIXED_SIZE_MISMATCH, MISSING_ENUM_SYMBOLS, READER_FIELD_MISSING_DEFAULT_VALUE,
 * TYPE_MISMATCH, MISSING_UNION_BRANCH. Recursive types terminate (a pair of nodes under
 * judgement is assumed compatible when met again). */
bool avro_can_read(const struct avro_schema *reader, const struct avro_schema *writer,
                   const char *reader_role, const char *writer_role,
                   struct compat_reasons *reasons);

/* Avro binary data p[0, n) written with s, as Avro's JSON encoding appended to out (a union
 * as null or {"branch": value}, named branches by full name; bytes and fixed as strings of
 * U+0000-U+00FF; NaN and infinities as the strings "NaN", "Infinity", "-Infinity"; logical
 * types as their underlying type). The data is untrusted: returns 0, or -ERR_INVALID with the
 * reason in err when it is cut short, has bytes left over, nests deeper than
 * AVRO_DECODE_DEPTH_MAX, holds more than AVRO_DECODE_ITEMS_MAX array and map values, or
 * decodes to more than AVRO_DECODE_OUT_MAX bytes (out then holds a partial text). */
#define AVRO_DECODE_DEPTH_MAX 64
#define AVRO_DECODE_ITEMS_MAX (1u << 20)
#define AVRO_DECODE_OUT_MAX (16u << 20)
int avro_decode_json(const struct avro_schema *s, const uint8_t *p, size_t n, struct strbuf *out,
                     char *err, size_t errcap);

/* avro_can_read() as a compat_can_read_fn (registry/compat_level.h): reader and writer are
 * const struct avro_schema pointers; data is unused. */
bool avro_compat_can_read(const void *reader, const void *writer, const char *reader_role,
                          const char *writer_role, struct compat_reasons *reasons, void *data);

#endif
