/* Kafka wire primitives: a bounds-checked reader and an iobuf-backed writer.
 *
 * Reader: every read checks the bytes that remain. The error is sticky: once a read runs short
 * or sees an impossible length, kr->err is set and every later read yields zero/empty. Decode a
 * whole message, then check kr_ok() once. Strings and bytes are returned as slices into the
 * input buffer (no copy): valid as long as the request buffer is.
 *
 * Array counts are checked against the bytes that remain times the smallest encoded size of
 * one element before anything is allocated (CVE-2022-34917).
 *
 * `flex` selects the flexible (KIP-482) encoding: compact strings/arrays/bytes (uvarint N+1,
 * 0 = null) and tagged fields. */
#ifndef SP_KAFKA_WIRE_H
#define SP_KAFKA_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/iobuf.h"

/* A string or byte slice; len == -1 is null. */
struct kstr {
    const char *p;
    int32_t len;
};
struct kbytes {
    const uint8_t *p;
    int32_t len;
};

#define KSTR_NULL ((struct kstr){NULL, -1})
static inline struct kstr kstr_c(const char *s)
{
    return s ? (struct kstr){s, (int32_t)strlen(s)} : KSTR_NULL;
}
static inline bool kstr_eq(struct kstr a, const char *s)
{
    return a.len >= 0 && (size_t)a.len == strlen(s) && memcmp(a.p, s, (size_t)a.len) == 0;
}

struct kuuid {
    uint8_t b[16];
};

/* Kafka's Uuid.ZERO_UUID: "no id" (a topic named by name only). */
static inline bool kuuid_is_zero(struct kuuid u)
{
    static const uint8_t zero[16];
    return memcmp(u.b, zero, sizeof(zero)) == 0;
}

struct kreader {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* one past the last byte */
    bool err;           /* sticky */
};

static inline void kr_init(struct kreader *r, const void *p, size_t len)
{
    r->p = p;
    r->end = (const uint8_t *)p + len;
    r->err = false;
}
static inline bool kr_ok(const struct kreader *r)
{
    return !r->err;
}
static inline size_t kr_left(const struct kreader *r)
{
    return r->err ? 0 : (size_t)(r->end - r->p);
}

int8_t kr_i8(struct kreader *r);
int16_t kr_i16(struct kreader *r);
int32_t kr_i32(struct kreader *r);
int64_t kr_i64(struct kreader *r);
uint32_t kr_u32(struct kreader *r);
bool kr_bool(struct kreader *r);
double kr_f64(struct kreader *r);
uint32_t kr_uvarint(struct kreader *r);
int32_t kr_varint(struct kreader *r);
int64_t kr_varlong(struct kreader *r);
struct kuuid kr_uuid(struct kreader *r);
/* Takes n raw bytes; returns NULL (and sets err) if fewer remain. */
const uint8_t *kr_raw(struct kreader *r, size_t n);

/* STRING / NULLABLE_STRING (int16 length) or COMPACT_(NULLABLE_)STRING when flex. A null where
 * the schema forbids one is the caller's check. */
struct kstr kr_str(struct kreader *r, bool flex);
/* BYTES / NULLABLE_BYTES (int32 length) or COMPACT_(NULLABLE_)BYTES when flex. */
struct kbytes kr_bytes(struct kreader *r, bool flex);
/* Array count: int32 (-1 = null) or compact uvarint (0 = null, N+1). Returns -1 for null.
 * Sets err if the count is negative (other than null) or cannot fit in the bytes left given that
 * each element needs at least min_elem_bytes. */
int32_t kr_array(struct kreader *r, bool flex, size_t min_elem_bytes);
/* Skips a tagged-field section (only when flex). */
void kr_tags(struct kreader *r, bool flex);

/* Writer: appends big-endian fields to an iobuf. Never fails (memory aborts). */
struct kwriter {
    struct iobuf *b;
};

void kw_i8(struct kwriter *w, int8_t v);
void kw_i16(struct kwriter *w, int16_t v);
/* An int16 error code field. A non-zero one is also counted in a per-thread running total
 * (kw_error_codes_written), so that the broker can tell whether a response it encoded carries
 * an error, wherever the encoder put it (per-API error metrics): encoding is synchronous, so
 * the difference between two readings taken around one encoding belongs to that encoding. */
void kw_error_code(struct kwriter *w, int16_t code);
uint64_t kw_error_codes_written(void);
void kw_i32(struct kwriter *w, int32_t v);
void kw_i64(struct kwriter *w, int64_t v);
void kw_u32(struct kwriter *w, uint32_t v);
void kw_bool(struct kwriter *w, bool v);
void kw_f64(struct kwriter *w, double v);
void kw_uvarint(struct kwriter *w, uint32_t v);
void kw_uuid(struct kwriter *w, struct kuuid u);
void kw_raw(struct kwriter *w, const void *p, size_t n);
void kw_str(struct kwriter *w, bool flex, struct kstr s);
void kw_cstr(struct kwriter *w, bool flex, const char *s); /* NULL writes null */
void kw_bytes(struct kwriter *w, bool flex, struct kbytes b);
/* Array count (n == -1 writes null). */
void kw_array(struct kwriter *w, bool flex, int32_t n);
/* Empty tagged-field section (only when flex). */
void kw_tags(struct kwriter *w, bool flex);
/* Current absolute position, for patching a length later. */
static inline size_t kw_pos(const struct kwriter *w)
{
    return iobuf_total(w->b);
}
void kw_patch_i32(struct kwriter *w, size_t pos, int32_t v);

#endif
