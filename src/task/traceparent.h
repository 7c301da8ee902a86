/* W3C Trace Context `traceparent` values (https://www.w3.org/TR/trace-context/):
 *
 *   VERSION "-" TRACE_ID "-" PARENT_ID "-" FLAGS     e.g.
 *   00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01
 *
 * two, 32, 16 and two lowercase hex digits. Version ff is invalid; a trace id or parent id of
 * all zeros is invalid. Version 00 is exactly 55 characters; a higher version may append
 * "-..." fields, which a version-00 reader ignores. Pure.
 */
#ifndef SP_TASK_TRACEPARENT_H
#define SP_TASK_TRACEPARENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRACEPARENT_LEN 55 /* a version-00 value, without NUL */

struct traceparent {
    char version[3];   /* two hex digits + NUL */
    char trace_id[33]; /* 32 hex digits + NUL */
    char parent_id[17];
    char flags[3];
};

/* Parses the len bytes at s. Returns true with *out filled if they are a valid traceparent. */
bool traceparent_parse(const char *s, size_t len, struct traceparent *out);

/* The traceparent of a child span of tp: version 00, the same trace id and flags, span_id (8
 * bytes, as 16 hex digits) as the new parent id. An all-zero span_id is replaced by one with
 * its last byte set to 1, since zero is invalid. Writes TRACEPARENT_LEN characters and a NUL
 * into out. */
void traceparent_child(const struct traceparent *tp, const uint8_t span_id[8],
                       char out[TRACEPARENT_LEN + 1]);

#endif
