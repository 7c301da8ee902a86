/* A growable, always NUL-terminated text buffer, for building text responses (the admin
 * listener's /metrics and JSON bodies). Appends never fail (memory aborts, see base/mem.h).
 *
 * Ownership: the strbuf owns p; strbuf_destroy() frees it and leaves an empty, reusable buffer.
 * p may move on every append: do not keep pointers into it across appends. */
#ifndef SP_BASE_STRBUF_H
#define SP_BASE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
    char *p;    /* NULL until the first append; then p[len] == '\0' */
    size_t len; /* bytes of text, without the terminator */
    size_t cap; /* bytes allocated */
};

void strbuf_init(struct strbuf *s);
void strbuf_destroy(struct strbuf *s);
/* Empties the buffer, keeping its memory. */
void strbuf_reset(struct strbuf *s);
void strbuf_append(struct strbuf *s, const void *p, size_t n);
void strbuf_puts(struct strbuf *s, const char *str);
void strbuf_putc(struct strbuf *s, char c);
void strbuf_printf(struct strbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(struct strbuf *s, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* The text ("" for an empty buffer, never NULL). */
const char *strbuf_str(const struct strbuf *s);

/* Length (1-4) of the well-formed UTF-8 sequence at p[0, n) (n > 0), or 0 if it is not one
 * (stray continuation byte, overlong form, surrogate, above U+10FFFF, cut short). For the
 * escapers of base/prom.h and base/json.h, which replace ill-formed bytes with U+FFFD. */
size_t utf8_seq_len(const unsigned char *p, size_t n);

#endif
