/* The Protobuf schema language of the schema registry (schema type PROTOBUF), as pure functions
 * over text: a parser of .proto files (proto2 and proto3) with their imports, the canonical form
 * Confluent's registry compares and stores, Confluent's message indexes, and Confluent's
 * pairwise compatibility rules.
 *
 * A schema is one file plus every file it imports. Import paths are Confluent's schema
 * reference names: the caller's lookup turns a path into text (a registered reference's schema);
 * the well-known files Confluent ships (google/protobuf/..., google/type/...,
 * confluent/meta.proto, confluent/type/decimal.proto) are built in and used when the lookup
 * does not know the path. Like Confluent, a text that does not parse as .proto but is base64 of
 * a serialized FileDescriptorProto (what confluent-kafka-python's serializer registers) is
 * taken as that descriptor.
 *
 * Checked as protoc checks them: syntax, types resolved with protobuf's scoping rules (relative
 * names searched outward through the enclosing messages and the package, a leading dot for
 * absolute names, only names of files imported directly or through `import public`), field
 * numbers (1 .. 2^29-1 but not 19000-19999, unique, not reserved, not inside an extension
 * range), names unique in their scope (enum values are siblings of their enum), proto3's rules
 * (no required fields, defaults, groups or extension ranges; `extend` only of option messages;
 * the first enum value zero), enum aliases, map keys, oneofs, default values against their
 * field's type, extensions against their extendee's ranges. Custom options are kept as written
 * but not checked against their extension's type (Confluent does not either). Editions
 * (`edition = "2023";`) are refused with a message saying so. Groups (proto2) are parsed and
 * kept, with fields only inside them (and not in extend blocks); compatibility ignores them as
 * Confluent does. A message with `option map_entry = true` (how a descriptor, and its canonical
 * text, spells a map) must be a map's entry: key = 1, value = 2, and only named by a repeated
 * field of the message around it. A descriptor whose names .proto text could not spell is
 * refused, so every accepted schema has a canonical text.
 *
 * Every refusal is one message: "line:col: what" for the schema's own text, "path:line:col:
 * what" for an imported file. Inputs are bounded (PROTO_TEXT_MAX bytes over all files,
 * PROTO_FILES_MAX files, PROTO_DEPTH_MAX levels of nesting, PROTO_MEMORY_MAX bytes of parsed
 * form), so deep or huge input is refused, never a stack overflow.
 *
 * No global state: safe on any thread. */
#ifndef SP_REGISTRY_PROTOBUF_H
#define SP_REGISTRY_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

#define PROTO_TEXT_MAX (1u << 20)      /* bytes of text, the schema and its imports together */
#define PROTO_FILES_MAX 128            /* files of one schema, itself and its imports */
#define PROTO_DEPTH_MAX 32             /* nested messages; nested option values; imports deep */
#define PROTO_MEMORY_MAX (64u << 20)   /* bytes of the parsed form of one schema */
#define PROTO_ERR_MAX 320              /* room a refusal's message needs */
#define PROTO_INDEXES_MAX 32           /* message indexes in one path (nesting bounds them) */

struct proto_schema;

/* What a lookup hands back for an import path. text[0, len) must stay valid until proto_parse
 * returns (the schema keeps copies). id names the reference (Confluent's subject and version,
 * e.g. "common.proto/3"), or is NULL: two schemas whose imported type comes from references with
 * the same non-NULL id are not compared inside that type (Confluent skips a reference to the
 * same subject and version). */
struct proto_source {
    const char *text;
    size_t len;
    const char *id;
};

/* Returns 0 with *src filled, or -ERR_NOT_FOUND when it does not know name (the built-in
 * well-known files are then tried). Any other negative value refuses the import. */
typedef int (*proto_lookup_fn)(const char *name, struct proto_source *src, void *data);

/* Parses text[0, len) and every file it imports (through lookup, which may be NULL: built-ins
 * only) and checks it all. Returns 0 with *out (release with proto_free), or -ERR_INVALID with
 * a NUL-terminated message in err (errcap bytes; PROTO_ERR_MAX is enough) and *out NULL. */
int proto_parse(const char *text, size_t len, proto_lookup_fn lookup, void *data,
                struct proto_schema **out, char *err, size_t errcap);
void proto_free(struct proto_schema *s);

/* Appends the schema's own file printed in Confluent's canonical format (ProtobufSchema's
 * canonicalString(): fixed layout, no comments, messages before enums at each level, options
 * as written); with normalize, Confluent's normalized form (normalize=true): types fully
 * qualified with a leading dot, fields by number, options sorted by name and custom option names
 * qualified, reserved and extension ranges one per line in order, imports sorted, proto2's
 * syntax line left out. The same schema in other whitespace, comments or (normalized) order
 * prints the same. The output parses back to a schema that prints the same. */
void proto_canonical(const struct proto_schema *s, bool normalize, struct strbuf *out);

/* The serializer's default message: the full name of the file's first message (or, lacking
 * one, its first enum), as Confluent's name(); NULL if the file declares no type. For a file
 * that only re-exports one other (`import public` and nothing else), that file's first. */
const char *proto_default_name(const struct proto_schema *s);

/* Confluent's message indexes: idx[0] the position among the file's top-level messages,
 * idx[1] among that message's nested messages, and so on (enums are not counted; n == 0 means
 * [0]). Appends the message's full name to name and returns 0, or -ERR_NOT_FOUND. */
int proto_message_name(const struct proto_schema *s, const int32_t *idx, size_t n,
                       struct strbuf *name);
/* The reverse: the indexes of the message full_name (with or without a leading dot) into idx
 * (room for PROTO_INDEXES_MAX), their count in *n. 0, or -ERR_NOT_FOUND. */
int proto_message_indexes(const struct proto_schema *s, const char *full_name, int32_t *idx,
                          size_t *n);
/* The indexes' wire form in a record (after the magic byte and schema id): a zigzag varint
 * count then each index as a zigzag varint, with [0] written as the single byte 0.
 * encode: writes at most 1 + 5 * (n + 1) bytes to p, returns the length. decode: reads
 * [p, end) into idx (room for PROTO_INDEXES_MAX), returns the bytes read, or 0 if malformed,
 * cut short or longer than PROTO_INDEXES_MAX (a count of 0 decodes as [0], *n = 1). */
size_t proto_msgidx_encode(const int32_t *idx, size_t n, uint8_t *p);
size_t proto_msgidx_decode(const uint8_t *p, const uint8_t *end, int32_t *idx, size_t *n);

/* A record's payload after Confluent's magic byte and schema id, p[0, n): the message indexes
 * (proto_msgidx_decode) and the message they name, decoded with s and appended to out as JSON
 * (see proto_json.c for the mapping). The bytes are untrusted: returns 0, or -ERR_INVALID with
 * the reason in err (malformed or cut short, a wire type that does not match the field's type,
 * groups, nesting deeper than PROTO_DECODE_DEPTH_MAX, more than PROTO_DECODE_OUT_MAX bytes of
 * JSON). */
#define PROTO_DECODE_DEPTH_MAX 64
#define PROTO_DECODE_OUT_MAX (16u << 20)
int proto_decode_json(const struct proto_schema *s, const uint8_t *p, size_t n,
                      struct strbuf *out, char *err, size_t errcap);

/* Messages, one per difference. */
struct proto_reasons {
    char **v; /* v[0, n): NUL-terminated, owned */
    size_t n;
    size_t cap;
};
#define PROTO_REASONS_MAX 200 /* kept per call; the verdict still counts every difference */
void proto_reasons_free(struct proto_reasons *r);

/* Whether data written with writer can be read with reader, by Confluent's rules (its
 * ProtobufSchema.isBackwardCompatible(previous = writer) on this = reader): every difference
 * from writer to reader is judged; messages removed, field kinds or scalar groups changed,
 * message types changed, numeric labels changed, required fields added or removed, oneof
 * members removed or fields newly made exclusive, the package changed are incompatible; fields,
 * messages, enums and enum values added or removed, renames, string/bytes label changes,
 * message moves, oneofs added, removed or left are not. Levels (BACKWARD = new reads old, ...)
 * are the caller's: see registry/compat_level.h.
 *
 * If reasons is non-NULL, each incompatible difference appends Confluent's verbose message,
 * e.g. {errorType:"FIELD_KIND_CHANGED", description:"The type of a field at path
 * '#/Order/2' in the new schema does not match the old schema"}, with reader_label and
 * writer_label ("new", "old") in the places Confluent puts them. */
bool proto_can_read(const struct proto_schema *reader, const struct proto_schema *writer,
                    const char *reader_label, const char *writer_label,
                    struct proto_reasons *reasons);

/* Every difference from original to update, compatible or not, as "TYPE #/path" (e.g.
 * "FIELD_ADDED #/Order/3"), in Confluent's order. Returns whether all are compatible. */
bool proto_differences(const struct proto_schema *original, const struct proto_schema *update,
                       struct proto_reasons *out);

#endif
