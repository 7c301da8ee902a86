/* JSON Schema for the schema registry (schema type JSON), as pure functions over text:
 *
 *   json_schema_parse()      text -> a model, every refusal explained (the registry answers
 *                            42201 "Invalid schema" with that text)
 *   json_schema_canonical()  the string the registry stores, returns and compares: Confluent's
 *                            JsonSchema.canonicalString(), or its normalize=true form
 *   json_schema_can_read()   Confluent's JSON Schema compatibility (its diff package): can a
 *                            reader schema read all data a writer schema accepts
 *
 * What is accepted is what Confluent's JSON provider accepts from drafts 4, 6 and 7 (the
 * $schema URL picks the draft; none means draft 7), with the 2019-09/2020-12 keywords that are
 * cheap ($defs, prefixItems, dependentRequired, dependentSchemas, unevaluatedProperties,
 * unevaluatedItems, minContains/maxContains):
 *   - The text is strict JSON (base/json_parse.h: duplicate member names are refused, where
 *     Jackson keeps the last) and a schema is an object or a boolean, at the root and wherever
 *     a keyword takes a schema.
 *   - Keywords of the wrong JSON type are refused with the schema's location ("#/properties/a:
 *     maxLength must be a non-negative integer"); so are unknown type names, negative lengths
 *     and counts, a zero or negative multipleOf, and required / enum / type arrays with
 *     repeated or mistyped items. Unknown keywords are kept (canonical form) and ignored.
 *   - $ref (drafts <= 7: its sibling keywords are ignored, as the specification says; from
 *     2019-09 on it is one more kind beside them, an allOf member when there are others) is a
 *     URL: "#" plus a JSON pointer ("#/definitions/X", "#/$defs/X", "#/properties/a/items", with
 *     ~0 ~1 and %XX escapes) is resolved in the same document, as is a URL equal to the root's
 *     $id (or id, draft 4) before the '#'; "#/$defs/X" finds a top-level definitions/X when
 *     $defs has no X, as Confluent merges the two. Any other URL is a Confluent schema
 *     reference whose name is the URL (or, for a URL under the root $id's directory, the rest
 *     of it): the caller's lookup gives its text, parsed as a document of its own (the part
 *     after '#' a pointer in it). A pointer to nothing, a reference the lookup does
 *     not know and a chain of $refs that only leads back to itself are refused; so are
 *     anchors ("#foo"). Only the root's $id is a base: a nested $id does not move relative
 *     references.
 *   - 2020-12's items is read as Confluent translates it: beside prefixItems it says what may
 *     follow them, alone a schema for every item; items false closes the array, true says
 *     nothing.
 *   - Where Jackson is more lenient than RFC 8259 (NaN, text after the value, repeated names)
 *     the text is refused.
 *   - Only the subschemas reachable from the root (through keywords and $refs) are checked and
 *     modelled, as Confluent's loader (Everit) loads them: unused definitions are not looked at.
 *
 * The model follows Everit's (the library Confluent's diff works on), since the compatibility
 * rules are written against it: an object schema loads to nodes by its keywords, in Everit's
 * order — enum, allOf/anyOf/oneOf (one node each), not, const, "type" (a list of types is an
 * anyOf of one node per type; each type takes its own kind's keywords), then each group of
 * array, object, number or string keywords whose kind the type did not name (so
 * {"type":"string","minimum":1} is a string and a number), then if/then/else; more than one
 * node is a synthetic allOf of them, none the empty schema. title, description, $id, default
 * and connect.type stay with the object's node. Keywords a draft does not have (const in draft
 * 4, if in draft 6, dependentRequired before 2019-09, ...) are kept in the text only.
 *
 * Limits: JSON nesting at most JSON_SCHEMA_DEPTH_MAX levels, the text (and each referenced
 * document) at most JSON_SCHEMA_TEXT_MAX bytes, JSON_SCHEMA_DOCS_MAX documents per schema, the
 * model at most JSON_SCHEMA_MEMORY_MAX bytes;
 * deeper or larger input is refused, never a stack overflow. Recursion through $ref is
 * followed without recursion in C (each subschema is modelled once). A comparison looks at each
 * pair of nodes once per pass (memoized, as Confluent's; a cycle is assumed compatible, then
 * passes repeat with what the last one found, as Confluent's fixpoint does) and gives up, as
 * incompatible with a reason saying so, past JSON_SCHEMA_PAIRS_MAX pairs,
 * JSON_SCHEMA_COMPARE_DEPTH_MAX nested pairs or 8 passes. patternProperties decide whether a
 * property is covered only when the pattern is literal text with an optional ^ and $ (there is
 * no regex engine at this layer); any other pattern covers nothing.
 *
 * No global state; a parsed schema is immutable and may be shared between threads. */
#ifndef SP_REGISTRY_JSON_SCHEMA_H
#define SP_REGISTRY_JSON_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/json_parse.h"
#include "base/strbuf.h"
#include "registry/compat_level.h"

#define JSON_SCHEMA_DEPTH_MAX 128          /* JSON nesting of one document */
#define JSON_SCHEMA_TEXT_MAX (1u << 20)    /* bytes of one document */
#define JSON_SCHEMA_DOCS_MAX 64            /* documents: the schema and its references */
#define JSON_SCHEMA_ERR_MAX 320            /* room a refusal's message needs */
#define JSON_SCHEMA_MEMORY_MAX (64u << 20) /* bytes of one schema's model (beside its JSON) */
#define JSON_SCHEMA_PAIRS_MAX 100000       /* node pairs one comparison may judge */
#define JSON_SCHEMA_COMPARE_DEPTH_MAX 256  /* nested pairs in one comparison */
#define JSON_SCHEMA_REASONS_MAX 100        /* reasons kept per comparison */

enum json_schema_kind {
    JSK_TRUE,        /* true */
    JSK_FALSE,       /* false */
    JSK_EMPTY,       /* an object with no validation keyword: {} */
    JSK_REF,         /* $ref: target */
    JSK_NULL,        /* type null */
    JSK_BOOLEAN,     /* type boolean */
    JSK_STRING,      /* type string, or string keywords */
    JSK_NUMBER,      /* type number or integer, or number keywords */
    JSK_OBJECT,      /* type object, or object keywords */
    JSK_ARRAY,       /* type array, or array keywords */
    JSK_ENUM,        /* enum */
    JSK_CONST,       /* const */
    JSK_COMBINED,    /* allOf, anyOf, oneOf, a type list, or several of the kinds above */
    JSK_NOT,         /* not */
    JSK_CONDITIONAL, /* if / then / else (not compared, as Confluent does not) */
};

enum json_schema_criterion { JSC_ALL, JSC_ANY, JSC_ONE };

/* A number keyword (minimum, multipleOf, ...): absent unless present. */
struct json_schema_num {
    bool present;
    double value;
    const char *text; /* the literal as written */
};

struct json_schema_node;

struct json_schema_prop {
    const char *name; /* NUL-terminated UTF-8 (may hold NUL: name_len) */
    size_t name_len;
    const struct json_schema_node *schema;
};

struct json_schema_dep {
    const char *name;
    size_t name_len;
    const struct json_value *names;        /* property dependency: an array of strings */
    const struct json_schema_node *schema; /* schema dependency */
};

struct json_schema_node {
    enum json_schema_kind kind;
    const struct json_value *json; /* the schema's JSON (object or boolean) */
    /* common, on the node the object loads to (NULL when absent) */
    const struct json_value *title;
    const struct json_value *description;
    const struct json_value *id;
    const struct json_value *def;
    const char *connect_type;
    /* JSK_REF */
    const char *ref;
    const struct json_schema_node *target; /* never a JSK_REF */
    /* JSK_STRING (-1: absent) */
    int64_t min_length;
    int64_t max_length;
    const char *pattern;
    /* JSK_NUMBER */
    bool requires_integer;
    struct json_schema_num minimum, maximum, exclusive_minimum, exclusive_maximum, multiple_of;
    /* JSK_OBJECT */
    const struct json_schema_prop *props; /* properties, in document order */
    size_t n_props;
    const struct json_schema_prop *props_by_name; /* the same sorted by name (bytes) */
    const struct json_value *required;            /* the required array, or NULL */
    const struct json_value **required_by_name;   /* its n_required strings sorted */
    size_t n_required;
    bool additional_permitted;                 /* additionalProperties is not false */
    const struct json_schema_node *additional; /* additionalProperties as a schema, or NULL */
    const struct json_schema_prop *pattern_props;
    size_t n_pattern_props;
    const struct json_schema_dep *deps; /* sorted by name (bytes) */
    size_t n_deps;
    int64_t min_properties, max_properties;     /* -1: absent */
    const struct json_schema_node *unevaluated; /* unevaluatedProperties / Items, or NULL */
    /* JSK_ARRAY */
    const struct json_schema_node *items;      /* items as one schema, or NULL */
    const struct json_schema_node **item_list; /* items as a list (prefixItems) */
    size_t n_item_list;
    bool additional_items_permitted;
    const struct json_schema_node *additional_items;          /* as a schema, or NULL */
    int64_t min_items, max_items, min_contains, max_contains; /* -1: absent */
    bool unique_items;
    /* JSK_ENUM: values; JSK_CONST: value */
    const struct json_value *values;
    const struct json_value *value;
    /* JSK_COMBINED */
    enum json_schema_criterion criterion;
    const struct json_schema_node **subs;
    size_t n_subs;
    /* JSK_NOT */
    const struct json_schema_node *not_schema;
};

struct json_schema;

/* A referenced document's text; it must stay valid until json_schema_parse returns (the
 * schema keeps its own copy of the parsed tree). */
struct json_schema_source {
    const char *text;
    size_t len;
};

/* Returns 0 with *src filled for the reference named url (the $ref before its '#'), or
 * -ERR_NOT_FOUND. */
typedef int (*json_schema_lookup_fn)(const char *url, struct json_schema_source *src, void *data);

/* Parses text[0, len), with lookup (may be NULL: no references) for $refs to other documents.
 * Returns 0 with *out (release with json_schema_free()), or -ERR_INVALID (-ERR_TOO_LARGE for a
 * limit) with a NUL-terminated message in err (errcap bytes; JSON_SCHEMA_ERR_MAX is enough)
 * and *out NULL. */
int json_schema_parse(const char *text, size_t len, json_schema_lookup_fn lookup, void *data,
                      struct json_schema **out, char *err, size_t errcap);
void json_schema_free(struct json_schema *s);

/* The root node (never a JSK_REF: a root $ref is followed). */
const struct json_schema_node *json_schema_root(const struct json_schema *s);
/* The root's title, Confluent's name() for a JSON schema; NULL if none (or not a string). */
const char *json_schema_title(const struct json_schema *s);

/* Appends the schema's own document as Confluent stores it: compact JSON of the text as
 * Jackson writes it (members in document order; strings with '"', '\' and control characters
 * escaped, \u00XX upper-case, non-ASCII as is; integers as written without a sign on zero,
 * other numbers as Java's BigDecimal.toString() of the literal: 1.50 stays 1.50, 1e2 is
 * 1E+2, 0.0000001 is 1E-7). With normalize, Confluent's normalize=true: the same with every
 * object's members sorted by name (Java's order: UTF-16 code units). Canonical text parses
 * to a schema whose canonical text is the same. */
void json_schema_canonical(const struct json_schema *s, bool normalize, struct strbuf *out);

/* Whether a and b were parsed from the same documents: their own texts' canonical forms and
 * every referenced document's (by name) agree. Such schemas have no difference to compare. */
bool json_schema_same(const struct json_schema *a, const struct json_schema *b);

/* Appends the JSON value v as json_schema_canonical() writes it (sorted: as normalized). */
void json_schema_write_json(struct strbuf *out, const struct json_value *v, bool sorted);

/* Whether data valid under writer is valid under reader by Confluent's rules (its
 * SchemaDiff.compare(original = writer, update = reader) under the default STRICT policy:
 * every difference is typed, e.g. TYPE_NARROWED, and compatible unless its type is outside
 * Confluent's compatible set). When false, appends to reasons (may be NULL) Confluent's verbose
 * message per incompatible difference (at most JSON_SCHEMA_REASONS_MAX), e.g.
 *   {errorType:"TYPE_NARROWED", description:"A type at path '#/properties/n' is different
 *    between the new schema and the old schema'}
 * (the closing quote is Confluent's, as its Difference.toString() writes it) with reader_role
 * and writer_role ("new", "old") where Confluent puts them. */
bool json_schema_can_read(const struct json_schema *reader, const struct json_schema *writer,
                          const char *reader_role, const char *writer_role,
                          struct compat_reasons *reasons);

/* json_schema_can_read() as a compat_can_read_fn (registry/compat_level.h): reader and
 * writer are const struct json_schema pointers; data is unused. */
bool json_schema_compat_can_read(const void *reader, const void *writer, const char *reader_role,
                                 const char *writer_role, struct compat_reasons *reasons,
                                 void *data);

/* Every difference from original to update, compatible or not, as "TYPE #/path"
 * ("MAX_LENGTH_INCREASED #/properties/s/maxLength"), in the order found (at most
 * JSON_SCHEMA_REASONS_MAX). Returns whether all are compatible. */
bool json_schema_differences(const struct json_schema *original, const struct json_schema *update,
                             struct compat_reasons *out);

#endif
