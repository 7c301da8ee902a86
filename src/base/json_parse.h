/* A strict JSON reader (RFC 8259) for untrusted text: the admin listener's request bodies
 * (server/admin.c, broker/admin_users.c) and the CLI's view of the admin listener's answers
 * (cli/admin_client.h). base/json.h is the writer.
 *
 * json_parse() builds the whole tree in an arena owned by the document, or refuses the text
 * with the byte offset and the reason. Strict means: exactly one value with only whitespace
 * (space, tab, LF, CR) around it; the literals true, false and null; numbers in RFC 8259's
 * grammar (no leading zeros, '+', NaN, hex) and at most JSON_NUMBER_TEXT_MAX characters;
 * strings of well-formed UTF-8 without raw control characters, with the escapes \" \\ \/ \b
 * \f \n \r \t and \uXXXX (a surrogate pair makes one code point; a lone surrogate is refused);
 * object members with distinct names. Limits (struct json_limits) bound the nesting depth and
 * the number of values, so a hostile text costs O(len) time and at most about
 * max_values * (sizeof(struct json_value) + 16) + 2 * len bytes (a number keeps its literal).
 * Decoded strings may hold NUL bytes (from \u0000): use their lengths. */
#ifndef SP_BASE_JSON_PARSE_H
#define SP_BASE_JSON_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"

#define JSON_NUMBER_TEXT_MAX 64 /* characters of one number */

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT };

struct json_value {
    enum json_type type;
    bool boolean;             /* JSON_BOOL */
    bool is_int;              /* JSON_NUMBER written as an integer that fits int64 */
    bool integral;            /* JSON_NUMBER written without fraction or exponent (any size) */
    double number;            /* JSON_NUMBER (strtod of the text; may be an infinity) */
    int64_t int_value;        /* exact, when is_int */
    size_t offset;            /* byte offset in the text of the value's first character */
    const char *str;          /* JSON_STRING: decoded UTF-8; JSON_NUMBER: the literal as
                                 written; NUL-terminated after str_len; else NULL */
    size_t str_len;           /* bytes of str */
    const char *key;          /* as a member of an object: its name (decoded, NUL-terminated) */
    size_t key_len;           /* bytes of key */
    struct json_value *child; /* JSON_ARRAY / JSON_OBJECT: the first item or member */
    struct json_value *next;  /* the next sibling in the parent, or NULL */
    size_t n;                 /* JSON_ARRAY / JSON_OBJECT: items or members */
};

struct json_limits {
    int depth_max;     /* containers nested deeper are refused; 0: 32 */
    size_t values_max; /* values in all (containers count); 0: 65536 */
};

struct json_doc {
    struct arena arena;
    struct json_value *root; /* NULL until parsed */
};

/* Parses text[0, len). Returns 0 with doc->root set, or -ERR_INVALID (not JSON as above) or
 * -ERR_TOO_LARGE (a limit) with "at byte N: reason" in err and doc->root NULL. Either way
 * release doc with json_doc_free(). lim NULL: the defaults. */
int json_parse(struct json_doc *doc, const char *text, size_t len, const struct json_limits *lim,
               char *err, size_t errcap);
/* Frees what doc holds (a zeroed struct json_doc too). */
void json_doc_free(struct json_doc *doc);

/* Look-ups, NULL-tolerant (a NULL or mistyped value gives the default), for reading answers
 * whose shape is not guaranteed. */

/* The member of object o named key (exact bytes), or NULL (absent, or o no object). */
const struct json_value *json_member(const struct json_value *o, const char *key);
/* The member key if it has type t, else NULL. */
const struct json_value *json_get(const struct json_value *o, const char *key, enum json_type t);
/* An integer's value (is_int), else def. */
int64_t json_int_or(const struct json_value *v, int64_t def);
/* The integer member key, else def. */
int64_t json_get_int(const struct json_value *o, const char *key, int64_t def);
/* The string member key, else def. */
const char *json_get_str(const struct json_value *o, const char *key, const char *def);

#endif
