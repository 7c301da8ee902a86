/* The environment of one handler run: "NAME=VALUE" strings built from a record's untrusted
 * bytes, within fixed limits.
 *
 * Values are bytes, but an environment string ends at its first NUL. So a value that contains
 * a NUL byte is given base64-encoded (RFC 4648, with padding) under NAME_B64 instead of NAME;
 * every other value is given as is.
 *
 * Record headers become SP_HEADER_<NAME>: every byte of the header name that is not an ASCII
 * letter or digit becomes '_' and letters are upper-cased ("content-type" ->
 * SP_HEADER_CONTENT_TYPE). If two headers map to the same variable the later one wins (as
 * Kafka's lastHeader()). Headers beyond the limits below are left out and counted in
 * jobenv.dropped.
 *
 * Pure: no I/O; memory from base/mem.h.
 */
#ifndef SP_TASK_JOBENV_H
#define SP_TASK_JOBENV_H

#include <stdbool.h>
#include <stddef.h>

#define JOBENV_HEADER_PREFIX "SP_HEADER_"
#define JOBENV_HNAME_MAX 128           /* header name bytes */
#define JOBENV_HVALUE_MAX (32 * 1024)  /* header value bytes, before encoding */
#define JOBENV_HEADERS_MAX 64          /* SP_HEADER_* variables */
#define JOBENV_HBYTES_MAX (128 * 1024) /* bytes of all SP_HEADER_* values, as stored */
#define JOBENV_VALUE_MAX (64 * 1024)   /* any other value (key, error text), before encoding */

struct jobenv {
    char **vars;         /* "NAME=VALUE", each owned; no NULL terminator (see jobenv_envp) */
    size_t len;          /* entries used */
    size_t cap;          /* entries allocated */
    size_t header_vars;  /* of vars, SP_HEADER_* ones */
    size_t header_bytes; /* their value bytes */
    size_t dropped;      /* headers left out: too long, too many, too much in total */
};

void jobenv_init(struct jobenv *e);
void jobenv_free(struct jobenv *e);

/* Sets name to the len bytes at value (NULL with len 0 is the empty string), replacing an
 * earlier name or name_B64. A value with a NUL byte goes into name_B64 instead. A value longer
 * than JOBENV_VALUE_MAX is not set; returns false then, true otherwise. */
bool jobenv_set(struct jobenv *e, const char *name, const void *value, size_t len);

/* jobenv_set() with a printf-formatted value. */
void jobenv_setf(struct jobenv *e, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Adds a record header as SP_HEADER_<MANGLED> within the JOBENV_H* limits. value may be NULL
 * (a null header value: the empty string). Returns true if set, false if left out (counted in
 * e->dropped). */
bool jobenv_add_header(struct jobenv *e, const char *name, size_t name_len, const void *value,
                       size_t value_len);

/* Writes JOBENV_HEADER_PREFIX and the mangled name into out (NUL-terminated). Returns the
 * length, or 0 if the name is empty or longer than JOBENV_HNAME_MAX or does not fit cap. */
size_t jobenv_header_name(const char *name, size_t len, char *out, size_t cap);

/* A NULL-terminated array for execve()/posix_spawn(): the strings of base (a NULL-terminated
 * array, e.g. the parent's filtered environment) followed by e's. The array is new (release
 * with mem_free()); the strings stay owned by their sources. */
char **jobenv_envp(const struct jobenv *e, char *const *base);

#endif
