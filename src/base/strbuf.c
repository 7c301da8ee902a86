#include "base/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/check.h"
#include "base/mem.h"

void strbuf_init(struct strbuf *s)
{
    s->p = NULL;
    s->len = 0;
    s->cap = 0;
}

void strbuf_destroy(struct strbuf *s)
{
    mem_free(s->p);
    strbuf_init(s);
}

void strbuf_reset(struct strbuf *s)
{
    s->len = 0;
    if (s->p)
        s->p[0] = '\0';
}

/* Room for n more bytes plus the terminator. */
static void reserve(struct strbuf *s, size_t n)
{
    CHECK(n < SIZE_MAX / 2 - s->len);
    size_t need = s->len + n + 1;
    if (need <= s->cap)
        return;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < need)
        cap *= 2;
    s->p = mem_realloc(s->p, cap);
    s->cap = cap;
}

void strbuf_append(struct strbuf *s, const void *p, size_t n)
{
    reserve(s, n);
    if (n)
        memcpy(s->p + s->len, p, n);
    s->len += n;
    s->p[s->len] = '\0';
}

void strbuf_puts(struct strbuf *s, const char *str)
{
    strbuf_append(s, str, strlen(str));
}

void strbuf_putc(struct strbuf *s, char c)
{
    reserve(s, 1);
    s->p[s->len++] = c;
    s->p[s->len] = '\0';
}

void strbuf_vprintf(struct strbuf *s, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    reserve(s, 64);
    int n = vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
    CHECK(n >= 0);
    if ((size_t)n >= s->cap - s->len) {
        reserve(s, (size_t)n);
        n = vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap2);
        CHECK(n >= 0 && (size_t)n < s->cap - s->len);
    }
    va_end(ap2);
    s->len += (size_t)n;
}

void strbuf_printf(struct strbuf *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(s, fmt, ap);
    va_end(ap);
}

const char *strbuf_str(const struct strbuf *s)
{
    return s->p ? s->p : "";
}

size_t utf8_seq_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return 1;
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0; /* continuation byte, 0xc0/0xc1 (overlong), 0xf5.. */
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}
