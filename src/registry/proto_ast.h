/* The parsed form of a Protobuf schema, shared by the files of registry/ that build it
 * (proto_parse.c from text, proto_desc.c from a FileDescriptorProto), check and link it
 * (proto_link.c), print it (proto_print.c) and compare it (proto_compat.c). Not a public
 * interface: callers use registry/protobuf.h.
 *
 * Everything of one schema lives in its arena and dies with it. Lists are pointer vectors
 * (struct pvec) in declaration order. The tree keeps what Confluent's canonical form prints:
 * type names as written (and, once linked, what they resolve to), option values as written
 * (numbers and identifiers as their token text, strings decoded), reserved and extension
 * ranges per statement.
 *
 * Invariants once proto_link() succeeded:
 *  1. Every named type reference (field, map value, rpc, extendee) has `type` set to a message
 *     or enum of a file visible from where it is written.
 *  2. full_name of a type is its package, enclosing messages and name joined by dots, no
 *     leading dot; the schema's symbol table maps it (and every package, field, enum value,
 *     oneof, service and extension) to one symbol.
 *  3. Field numbers inside a message are unique and valid; a message's fields vector holds its
 *     fields outside oneofs, each oneof its own. */
#ifndef SP_REGISTRY_PROTO_AST_H
#define SP_REGISTRY_PROTO_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/strmap.h"
#include "registry/protobuf.h"

#define PROTO_FIELD_NUMBER_MAX 536870911 /* 2^29 - 1 */
#define PROTO_RESERVED_LO 19000          /* the protobuf library's own numbers */
#define PROTO_RESERVED_HI 19999

struct pvec {
    void **v;
    size_t n;
    size_t cap;
};

struct proto_pos {
    uint32_t line; /* 1-based; 0: no position (built from a descriptor) */
    uint32_t col;  /* 1-based byte column */
};

/* Option values, with Wire's (Confluent's parser's) kinds. */
enum proto_val_kind {
    PV_STRING, /* s[0, len): the decoded bytes */
    PV_BOOL,   /* s: "true" or "false" */
    PV_NUMBER, /* s: the token as written, sign included ("-0x10", "1.5e3", "-inf") */
    PV_ENUM,   /* s: an identifier (enum value name, inf, nan) */
    PV_MAP,    /* ents: a text-format message, keys in first-seen order, repeats made lists */
    PV_LIST,   /* items */
    PV_OPTION, /* opt: a nested option, as in (a).b.c = 1 */
};

struct proto_val {
    enum proto_val_kind kind;
    const char *s;
    size_t len;
    struct pvec ents;  /* struct proto_mapent * */
    struct pvec items; /* struct proto_val * */
    struct proto_option *opt;
};

struct proto_mapent {
    const char *key; /* a field name, or "[full.name]" for an extension */
    struct proto_val *val;
};

struct proto_option {
    const char *name; /* without parentheses */
    bool paren;       /* written (name): a custom option */
    struct proto_val *val;
    struct proto_pos pos;
};

enum proto_label { PL_NONE, PL_OPTIONAL, PL_REQUIRED, PL_REPEATED };

/* Scalar types carry FieldDescriptorProto.Type's numbers; 0 is a named type. */
enum proto_scalar {
    PS_NAMED = 0,
    PS_DOUBLE = 1,
    PS_FLOAT = 2,
    PS_INT64 = 3,
    PS_UINT64 = 4,
    PS_INT32 = 5,
    PS_FIXED64 = 6,
    PS_FIXED32 = 7,
    PS_BOOL = 8,
    PS_STRING = 9,
    PS_BYTES = 12,
    PS_UINT32 = 13,
    PS_SFIXED32 = 15,
    PS_SFIXED64 = 16,
    PS_SINT32 = 17,
    PS_SINT64 = 18,
};

struct proto_type;
struct proto_file;

struct proto_tref {
    const char *text;        /* as written: "int32", "Bar", ".pkg.Bar" */
    int scalar;              /* enum proto_scalar */
    struct proto_type *type; /* PS_NAMED, once linked: the message or enum */
    struct proto_pos pos;
};

struct proto_oneof;

struct proto_field {
    const char *name;
    int32_t number;
    enum proto_label label;
    bool is_map;
    struct proto_tref type;     /* the field's type; for a map, its value type */
    struct proto_tref key;      /* a map's key type */
    const char *type_text;      /* as Confluent prints it: the type, or "map<K, V>" */
    struct proto_val *dflt;     /* [default = ...], or NULL */
    const char *json_name;      /* [json_name = "..."], or NULL */
    struct pvec options;        /* struct proto_option *, default and json_name taken out */
    struct proto_oneof *oneof;  /* the oneof it belongs to, or NULL */
    struct proto_type *scope;   /* the message it is declared in, NULL at file level */
    struct proto_tref extendee; /* an extension's extendee (text NULL for plain fields) */
    struct proto_pos pos;
};

/* A proto2 group: a field whose type is the block's fields (nothing else is allowed in it). */
struct proto_group {
    enum proto_label label;
    const char *name;
    int32_t number;
    struct pvec fields; /* struct proto_field * */
    struct proto_pos pos;
};

struct proto_oneof {
    const char *name;
    struct pvec fields;  /* struct proto_field * */
    struct pvec groups;  /* struct proto_group * */
    struct pvec options; /* struct proto_option * */
    struct proto_pos pos;
};

/* One item of a reserved or extensions statement. */
struct proto_range {
    const char *name; /* a reserved name, or NULL for numbers */
    int64_t start;
    int64_t end;      /* inclusive */
    bool to;          /* written as a range (start to end) */
    bool max;         /* written "to max" */
};

struct proto_ranges {
    struct pvec items;   /* struct proto_range * */
    struct pvec options; /* extensions only: struct proto_option * */
    struct proto_pos pos;
};

struct proto_enum_value {
    const char *name;
    int32_t number;
    struct pvec options;
    struct proto_pos pos;
};

struct proto_extend {
    struct proto_tref extendee;
    struct pvec fields;        /* struct proto_field * (groups are refused in extend blocks) */
    struct proto_type *scope;  /* enclosing message, or NULL at file level */
    struct proto_pos pos;
};

enum proto_type_kind { PT_MESSAGE, PT_ENUM };

struct proto_type {
    enum proto_type_kind kind;
    const char *name;
    const char *full_name;     /* set by proto_link */
    struct proto_file *file;
    struct proto_type *parent; /* enclosing message, or NULL */
    struct pvec options;       /* struct proto_option * */
    struct pvec reserved;      /* struct proto_ranges * */
    /* messages */
    struct pvec fields;        /* struct proto_field *, those outside oneofs */
    struct pvec oneofs;        /* struct proto_oneof * */
    struct pvec groups;        /* struct proto_group * */
    struct pvec nested;        /* struct proto_type *, messages and enums in order */
    struct pvec extensions;    /* struct proto_ranges * */
    struct pvec extends;       /* struct proto_extend * */
    bool map_entry;            /* option map_entry = true (from a descriptor) */
    /* enums */
    struct pvec values;        /* struct proto_enum_value * */
    struct proto_pos pos;
};

struct proto_rpc {
    const char *name;
    struct proto_tref req;
    struct proto_tref resp;
    bool req_stream;
    bool resp_stream;
    struct pvec options;
    struct proto_pos pos;
};

struct proto_service {
    const char *name;
    struct pvec rpcs;    /* struct proto_rpc * */
    struct pvec options;
    struct proto_pos pos;
};

enum proto_import_kind { PI_PLAIN, PI_PUBLIC, PI_WEAK };

struct proto_import {
    const char *path;
    enum proto_import_kind kind;
    struct proto_file *file; /* once loaded */
    struct proto_pos pos;
};

struct proto_file {
    const char *path;      /* import path; "" for the schema's own file */
    const char *id;        /* the reference's identity, NULL if none (see protobuf.h) */
    int syntax;            /* 2 or 3 */
    bool syntax_written;   /* the file has a syntax statement */
    const char *package;   /* NULL if none */
    struct pvec imports;   /* struct proto_import * */
    struct pvec options;
    struct pvec types;     /* struct proto_type *, top level, in order */
    struct pvec extends;   /* struct proto_extend * */
    struct pvec services;  /* struct proto_service * */
    int state;             /* proto_link's: 0 new, 1 loading, 2 loaded */
};

enum proto_sym_kind {
    SYM_PACKAGE,
    SYM_MESSAGE,
    SYM_ENUM,
    SYM_ENUM_VALUE,
    SYM_FIELD,
    SYM_ONEOF,
    SYM_EXTENSION,
    SYM_SERVICE,
    SYM_RPC,
};

struct proto_sym {
    enum proto_sym_kind kind;
    struct proto_file *file; /* NULL for packages (any file may add to one) */
    void *node;              /* the type, field, ... */
};

struct proto_schema {
    struct arena arena;
    struct proto_file *root;
    struct pvec files;   /* struct proto_file *, root first */
    struct strmap syms;  /* full name -> struct proto_sym * */
    size_t text_total;   /* bytes of text parsed, for PROTO_TEXT_MAX */
    bool oom;            /* PROTO_MEMORY_MAX was passed */
};

/* Allocation in the schema's arena; past PROTO_MEMORY_MAX it sets s->oom (and still returns
 * memory, so callers need not check at once: parsers check s->oom at their checkpoints). */
void *proto_alloc(struct proto_schema *s, size_t size);
char *proto_strndup(struct proto_schema *s, const char *p, size_t n);
void pvec_push(struct proto_schema *s, struct pvec *v, void *p);

/* Parses .proto text into f (path and id already set). Returns 0, or -1 with a message. */
int proto_parse_text(struct proto_schema *s, struct proto_file *f, const char *text, size_t len,
                     char *err, size_t errcap);
/* Parses a serialized FileDescriptorProto into f. Returns 0, or -1 with a message. */
int proto_parse_descriptor(struct proto_schema *s, struct proto_file *f, const uint8_t *p,
                           size_t len, char *err, size_t errcap);
/* Decodes base64 text (RFC 4648, padding optional, no other characters) into a fresh buffer
 * (release with mem_free). Returns NULL if text is not base64. */
uint8_t *proto_base64_decode(const char *text, size_t len, size_t *out_len);

/* The text of a built-in file (google/protobuf/timestamp.proto, ...), or NULL. */
const char *proto_builtin(const char *path);

/* Parses text[0, len) into s->root (already allocated, path ""), loads every import (through
 * lookup and the built-ins), then builds the symbol table, resolves every type name and checks
 * the rules listed in protobuf.h. 0, or -1 with a message. */
int proto_link(struct proto_schema *s, const char *text, size_t len, proto_lookup_fn lookup,
               void *data, char *err, size_t errcap);

/* Helpers for the printers and the checker. */
const char *proto_scalar_name(int scalar);
int proto_scalar_from_name(const char *name, size_t len); /* 0 if not a scalar keyword */
const struct proto_option *proto_find_option(const struct pvec *options, const char *name);
bool proto_option_true(const struct pvec *options, const char *name);
/* The key and value fields of a map entry message (numbers 1 and 2), or NULL. */
const struct proto_field *proto_entry_field(const struct proto_type *entry, int32_t number);
const struct proto_sym *proto_sym_get(const struct proto_schema *s, const char *full_name);

#endif
