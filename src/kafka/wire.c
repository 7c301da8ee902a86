#include "kafka/wire.h"

#include "base/varint.h"

static inline const uint8_t *take(struct kreader *r, size_t n)
{
    if (r->err || (size_t)(r->end - r->p) < n) {
        r->err = true;
        return NULL;
    }
    const uint8_t *p = r->p;
    r->p += n;
    return p;
}

int8_t kr_i8(struct kreader *r)
{
    const uint8_t *p = take(r, 1);
    return p ? (int8_t)p[0] : 0;
}

int16_t kr_i16(struct kreader *r)
{
    const uint8_t *p = take(r, 2);
    return p ? (int16_t)((uint16_t)p[0] << 8 | p[1]) : 0;
}

uint32_t kr_u32(struct kreader *r)
{
    const uint8_t *p = take(r, 4);
    return p ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3] : 0;
}

int32_t kr_i32(struct kreader *r)
{
    return (int32_t)kr_u32(r);
}

int64_t kr_i64(struct kreader *r)
{
    uint64_t hi = kr_u32(r);
    uint64_t lo = kr_u32(r);
    return (int64_t)(hi << 32 | lo);
}

bool kr_bool(struct kreader *r)
{
    return kr_i8(r) != 0;
}

double kr_f64(struct kreader *r)
{
    uint64_t u = (uint64_t)kr_i64(r);
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

uint32_t kr_uvarint(struct kreader *r)
{
    uint32_t v = 0;
    if (r->err)
        return 0;
    size_t n = uvarint32_get(r->p, r->end, &v);
    if (!n) {
        r->err = true;
        return 0;
    }
    r->p += n;
    return v;
}

int32_t kr_varint(struct kreader *r)
{
    int32_t v = 0;
    if (r->err)
        return 0;
    size_t n = varint32_get(r->p, r->end, &v);
    if (!n) {
        r->err = true;
        return 0;
    }
    r->p += n;
    return v;
}

int64_t kr_varlong(struct kreader *r)
{
    int64_t v = 0;
    if (r->err)
        return 0;
    size_t n = varint64_get(r->p, r->end, &v);
    if (!n) {
        r->err = true;
        return 0;
    }
    r->p += n;
    return v;
}

struct kuuid kr_uuid(struct kreader *r)
{
    struct kuuid u;
    const uint8_t *p = take(r, 16);
    if (p)
        memcpy(u.b, p, 16);
    else
        memset(u.b, 0, 16);
    return u;
}

const uint8_t *kr_raw(struct kreader *r, size_t n)
{
    return take(r, n);
}

/* Length of a string/bytes field: -1 null, else the length; sets err when impossible. */
static int64_t field_len(struct kreader *r, bool flex, bool wide)
{
    int64_t n;
    if (flex) {
        uint32_t u = kr_uvarint(r);
        n = (int64_t)u - 1;
    } else {
        n = wide ? kr_i32(r) : kr_i16(r);
    }
    if (r->err)
        return -1;
    if (n < -1 || (n > 0 && (uint64_t)n > (uint64_t)(r->end - r->p))) {
        r->err = true;
        return -1;
    }
    return n;
}

struct kstr kr_str(struct kreader *r, bool flex)
{
    int64_t n = field_len(r, flex, false);
    if (n < 0)
        return KSTR_NULL;
    const uint8_t *p = take(r, (size_t)n);
    return p ? (struct kstr){(const char *)p, (int32_t)n} : KSTR_NULL;
}

struct kbytes kr_bytes(struct kreader *r, bool flex)
{
    int64_t n = field_len(r, flex, true);
    if (n < 0)
        return (struct kbytes){NULL, -1};
    const uint8_t *p = take(r, (size_t)n);
    return p ? (struct kbytes){p, (int32_t)n} : (struct kbytes){NULL, -1};
}

int32_t kr_array(struct kreader *r, bool flex, size_t min_elem_bytes)
{
    int64_t n;
    if (flex)
        n = (int64_t)kr_uvarint(r) - 1;
    else
        n = kr_i32(r);
    if (r->err)
        return -1;
    if (n < -1 || n > INT32_MAX) {
        r->err = true;
        return -1;
    }
    if (n > 0) {
        size_t left = (size_t)(r->end - r->p);
        size_t need = min_elem_bytes ? min_elem_bytes : 1;
        if ((uint64_t)n > left / need) {
            r->err = true;
            return -1;
        }
    }
    return (int32_t)n;
}

void kr_tags(struct kreader *r, bool flex)
{
    if (!flex)
        return;
    uint32_t count = kr_uvarint(r);
    if (count > kr_left(r) / 2) { /* each field takes at least tag + size */
        r->err = true;
        return;
    }
    for (uint32_t i = 0; i < count && !r->err; i++) {
        (void)kr_uvarint(r); /* tag */
        uint32_t size = kr_uvarint(r);
        (void)take(r, size);
    }
}

/* ---- writer ---- */

static inline void put(struct kwriter *w, const void *p, size_t n)
{
    iobuf_append(w->b, p, n);
}

void kw_i8(struct kwriter *w, int8_t v)
{
    put(w, &v, 1);
}

static _Thread_local uint64_t error_codes_written;

void kw_error_code(struct kwriter *w, int16_t code)
{
    kw_i16(w, code);
    if (code != 0)
        error_codes_written++;
}

uint64_t kw_error_codes_written(void)
{
    return error_codes_written;
}

void kw_i16(struct kwriter *w, int16_t v)
{
    uint8_t b[2] = {(uint8_t)((uint16_t)v >> 8), (uint8_t)v};
    put(w, b, 2);
}

void kw_u32(struct kwriter *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put(w, b, 4);
}

void kw_i32(struct kwriter *w, int32_t v)
{
    kw_u32(w, (uint32_t)v);
}

void kw_i64(struct kwriter *w, int64_t v)
{
    kw_u32(w, (uint32_t)((uint64_t)v >> 32));
    kw_u32(w, (uint32_t)v);
}

void kw_bool(struct kwriter *w, bool v)
{
    kw_i8(w, v ? 1 : 0);
}

void kw_f64(struct kwriter *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    kw_i64(w, (int64_t)u);
}

void kw_uvarint(struct kwriter *w, uint32_t v)
{
    uint8_t b[VARINT32_MAX_BYTES];
    put(w, b, uvarint32_put(b, v));
}

void kw_uuid(struct kwriter *w, struct kuuid u)
{
    put(w, u.b, 16);
}

void kw_raw(struct kwriter *w, const void *p, size_t n)
{
    put(w, p, n);
}

void kw_str(struct kwriter *w, bool flex, struct kstr s)
{
    if (flex)
        kw_uvarint(w, (uint32_t)(s.len + 1));
    else
        kw_i16(w, (int16_t)s.len);
    if (s.len > 0)
        put(w, s.p, (size_t)s.len);
}

void kw_cstr(struct kwriter *w, bool flex, const char *s)
{
    kw_str(w, flex, kstr_c(s));
}

void kw_bytes(struct kwriter *w, bool flex, struct kbytes b)
{
    if (flex)
        kw_uvarint(w, (uint32_t)(b.len + 1));
    else
        kw_i32(w, b.len);
    if (b.len > 0)
        put(w, b.p, (size_t)b.len);
}

void kw_array(struct kwriter *w, bool flex, int32_t n)
{
    if (flex)
        kw_uvarint(w, (uint32_t)(n + 1));
    else
        kw_i32(w, n);
}

void kw_tags(struct kwriter *w, bool flex)
{
    if (flex)
        kw_uvarint(w, 0);
}

void kw_patch_i32(struct kwriter *w, size_t pos, int32_t v)
{
    uint32_t u = (uint32_t)v;
    uint8_t b[4] = {(uint8_t)(u >> 24), (uint8_t)(u >> 16), (uint8_t)(u >> 8), (uint8_t)u};
    iobuf_patch(w->b, pos, b, 4);
}
