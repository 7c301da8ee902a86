/* A streaming JSON writer for the admin listener's /v1 endpoints.
 *
 * The writer tracks nesting and places the commas and colons itself, so callers only say what
 * comes next:
 *
 *   json_obj_begin(&j); json_key(&j, "name"); json_str(&j, s, n); json_obj_end(&j);
 *
 * Strings are escaped per RFC 8259: quote, backslash and control characters (U+0000-U+001F)
 * get escapes; ill-formed UTF-8 becomes U+FFFD, so the output is always valid JSON text in
 * UTF-8 whatever bytes clients put into topic names, group or member ids. Misuse (a value where
 * a key is due, unbalanced ends, nesting deeper than JSON_DEPTH_MAX) is a CHECK failure: the
 * callers are code, not input. */
#ifndef SP_BASE_JSON_H
#define SP_BASE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

#define JSON_DEPTH_MAX 16

struct json {
    struct strbuf *out;
    int depth;                      /* open containers */
    bool in_object[JSON_DEPTH_MAX]; /* per level: object (keys due) or array */
    bool has_items[JSON_DEPTH_MAX]; /* per level: a comma is due before the next item */
    bool key_pending;               /* a key was written; its value comes next */
};

void json_init(struct json *j, struct strbuf *out);
void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
/* The next member's name (inside an object). */
void json_key(struct json *j, const char *key);
void json_str(struct json *j, const char *s, size_t len);
void json_cstr(struct json *j, const char *s); /* NULL writes null */
void json_i64(struct json *j, int64_t v);
void json_u64(struct json *j, uint64_t v);
void json_f64(struct json *j, double v); /* NaN and infinities write null */
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* True when every container opened has been closed. */
bool json_done(const struct json *j);

/* The escaped form of s[0, len), with its quotes. */
void json_escape(struct strbuf *out, const char *s, size_t len);

#endif
