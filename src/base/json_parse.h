/* A strict RFC 8259 JSON parser into a tree, for text that comes from clients: schema registry
 * bodies, Avro schemas, JSON Schemas. (The writer is base/json.h.)
 *
 * What it accepts is exactly RFC 8259's grammar: one value, optionally surrounded by
 * whitespace (space, tab, CR, LF). Refused, each with the byte offset where the problem is and a
 * reason: empty input, trailing characters after the value, trailing commas, leading zeros,
 * '+' signs, bare '.5' or '5.', NaN/Infinity, single quotes, comments, a byte order mark,
 * unescaped control characters (U+0000-U+001F) in strings, bad escapes, lone or reversed
 * surrogates in \u escapes, ill-formed UTF-8 anywhere in a string (overlong forms, encoded
 * surrogates, beyond U+10FFFF), and nesting deeper than the caller's limit.
 *
 * The tree:
 *   - Objects keep their members in document order. Duplicate keys are kept (both members
 *     stay) and reported: json_value.dup_keys on the object and json_doc.first_dup_offset for
 *     the document, so the caller decides; JSON_PARSE_REJECT_DUP_KEYS makes them an error.
 *   - Strings are decoded (escapes resolved, surrogate pairs combined) into UTF-8, always
 *     NUL-terminated; a string may itself contain NUL bytes (from \u0000), so use len.
 *   - Numbers keep their literal text (as written, NUL-terminated) plus views: is_integer (no
 *     fraction and no exponent), i64 with i64_ok (an integer literal within int64), and f64
 *     (the nearest double; +-HUGE_VAL for literals beyond double's range, which are valid JSON).
 *     The double view is read with strtod under the "C" locale, which the broker never changes.
 *
 * Memory: every node, string and array of the tree comes from the caller's arena, and lives
 * until the arena is reset or destroyed; a document of n bytes takes at most about 40 n bytes
 * of arena. Parsing is iterative (no recursion), so the depth limit, not the C stack, bounds
 * nesting; time is O(n log n) in the input (the log from duplicate detection in big objects).
 * The size cap on the input is the caller's. Not thread-safe per arena; no global state. */
#ifndef SP_BASE_JSON_PARSE_H
#define SP_BASE_JSON_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

#define JSON_PARSE_DEPTH_DEFAULT 64 /* nested arrays/objects, when the options say 0 */

enum json_type {
    JSON_NULL,
    JSON_FALSE,
    JSON_TRUE,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT,
};

struct json_member;

struct json_value {
    enum json_type type;
    bool is_integer; /* number: no fraction, no exponent */
    bool i64_ok;     /* number: is_integer and within int64 (then i64 holds it) */
    bool dup_keys;   /* object: two members have the same key */
    size_t offset;   /* byte offset in the input of the value's first character */
    const char *str; /* string: decoded UTF-8; number: the literal; else NULL */
    size_t len;      /* bytes of str (without the terminating NUL) */
    union {
        struct {         /* number */
            int64_t i64; /* see i64_ok */
            double f64;  /* the nearest double */
        };
        struct {      /* array, object */
            size_t n; /* items or members */
            union {
                struct json_value **items;   /* array: n items in order */
                struct json_member *members; /* object: n members in document order */
            };
        };
    };
};

struct json_member {
    const char *key; /* decoded UTF-8, NUL-terminated (may contain NUL: use key_len) */
    size_t key_len;
    size_t key_offset; /* byte offset of the key's opening quote */
    struct json_value *value;
};

enum json_parse_flags {
    JSON_PARSE_REJECT_DUP_KEYS = 1 << 0, /* a duplicate key in any object is an error */
};

struct json_parse_opts {
    int depth_max;  /* most nested arrays/objects; 0: JSON_PARSE_DEPTH_DEFAULT */
    unsigned flags; /* enum json_parse_flags */
};

struct json_doc {
    struct json_value *root;
    size_t first_dup_offset; /* key offset of the first duplicate key, or SIZE_MAX if none */
};

struct json_parse_error {
    size_t offset;   /* byte offset in the input where the problem was found */
    char reason[96]; /* what is wrong, e.g. "trailing comma in array" */
};

/* Parses text[0, len) (need not be NUL-terminated; NUL bytes in it are refused like any other
 * character outside the grammar). opts may be NULL for the defaults.
 *
 * Returns 0 and fills *doc (its tree in the arena), or, with *err filled in, -ERR_INVALID for
 * text that is not JSON (or has a duplicate key under JSON_PARSE_REJECT_DUP_KEYS) and
 * -ERR_LIMIT for nesting deeper than the limit; on error *doc is untouched and the arena
 * may hold partial allocations (reset it). */
int json_parse(const char *text, size_t len, const struct json_parse_opts *opts, struct arena *a,
               struct json_doc *doc, struct json_parse_error *err);

/* The value of the first member named key (a NUL-terminated key without NUL bytes) of the
 * object v, or NULL when v is not an object or has no such member. Linear in the members. */
const struct json_value *json_object_get(const struct json_value *v, const char *key);

/* True when v is a string equal to s (NUL-terminated). */
bool json_is_str(const struct json_value *v, const char *s);

/* Deep equality of two trees: numbers by value (two integer literals exactly, by i64 or else
 * by their digits; otherwise by the double views, so 1 == 1.0 == 10e-1), strings by bytes,
 * arrays item by item in order, objects as sets of keys (member order aside; for a duplicated
 * key its first member counts). Recursion is bounded by the trees' depth (the parse limit). */
bool json_value_equal(const struct json_value *a, const struct json_value *b);

/* A text name for the type: "null", "boolean", "number", "string", "array", "object". */
const char *json_type_name(enum json_type t);

#endif
