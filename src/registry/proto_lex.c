/* The .proto tokenizer (see proto_lex.h). Scanning checks a string's escapes as it reads the
 * token, so lex_string_decode() only has to translate them. */
#include "registry/proto_lex.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static bool is_alpha(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(int c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int hex_val(int c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return c - 'A' + 10;
}

void lex_error_at(struct lexer *lx, uint32_t line, uint32_t col, const char *fmt, ...)
{
    if (lx->failed)
        return;
    lx->failed = true;
    if (lx->errcap == 0)
        return;
    int n;
    if (lx->path && lx->path[0])
        n = snprintf(lx->err, lx->errcap, "%s:%u:%u: ", lx->path, line, col);
    else
        n = snprintf(lx->err, lx->errcap, "%u:%u: ", line, col);
    if (n < 0 || (size_t)n >= lx->errcap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lx->err + n, lx->errcap - (size_t)n, fmt, ap);
    va_end(ap);
}

static int peekc(const struct lexer *lx, size_t ahead)
{
    return lx->p + ahead < lx->end ? (unsigned char)lx->p[ahead] : -1;
}

static void advance(struct lexer *lx)
{
    if (*lx->p == '\n') {
        lx->line++;
        lx->col = 1;
    } else {
        lx->col++;
    }
    lx->p++;
}

/* Skips whitespace and comments; false after an error. */
static bool skip_space(struct lexer *lx)
{
    for (;;) {
        int c = peekc(lx, 0);
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            advance(lx);
        } else if (c == '/' && peekc(lx, 1) == '/') {
            while (lx->p < lx->end && *lx->p != '\n')
                advance(lx);
        } else if (c == '/' && peekc(lx, 1) == '*') {
            uint32_t line = lx->line, col = lx->col;
            advance(lx);
            advance(lx);
            for (;;) {
                if (lx->p >= lx->end) {
                    lex_error_at(lx, line, col, "End-of-file inside block comment.");
                    return false;
                }
                if (*lx->p == '*' && peekc(lx, 1) == '/') {
                    advance(lx);
                    advance(lx);
                    break;
                }
                advance(lx);
            }
        } else {
            return true;
        }
    }
}

/* Checks one escape sequence starting after the backslash at lx->p; advances past it. */
static bool scan_escape(struct lexer *lx)
{
    uint32_t line = lx->line, col = lx->col - 1;
    int c = peekc(lx, 0);
    if (c < 0)
        return true; /* the caller reports the unterminated string */
    if (strchr("abfnrtv\\?'\"", c)) {
        advance(lx);
        return true;
    }
    if (c >= '0' && c <= '7') {
        int v = 0;
        for (int i = 0; i < 3 && peekc(lx, 0) >= '0' && peekc(lx, 0) <= '7'; i++) {
            v = v * 8 + (peekc(lx, 0) - '0');
            advance(lx);
        }
        if (v > 255) {
            lex_error_at(lx, line, col, "Octal escape out of range in string literal.");
            return false;
        }
        return true;
    }
    if (c == 'x' || c == 'X') {
        advance(lx);
        if (!is_hex(peekc(lx, 0))) {
            lex_error_at(lx, line, col, "Expected hex digits for escape sequence.");
            return false;
        }
        for (int i = 0; i < 2 && is_hex(peekc(lx, 0)); i++)
            advance(lx);
        return true;
    }
    if (c == 'u' || c == 'U') {
        int digits = c == 'u' ? 4 : 8;
        uint32_t v = 0;
        advance(lx);
        for (int i = 0; i < digits; i++) {
            if (!is_hex(peekc(lx, 0))) {
                lex_error_at(lx, line, col, "Expected %d hex digits for \\%c escape sequence.",
                             digits, c);
                return false;
            }
            v = v * 16 + (uint32_t)hex_val(peekc(lx, 0));
            advance(lx);
        }
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
            lex_error_at(lx, line, col, "Invalid Unicode code point in escape sequence.");
            return false;
        }
        return true;
    }
    lex_error_at(lx, line, col, "Invalid escape sequence in string literal.");
    return false;
}

static void scan_string(struct lexer *lx)
{
    char quote = *lx->p;
    uint32_t line = lx->line, col = lx->col;
    advance(lx);
    for (;;) {
        if (lx->p >= lx->end) {
            lex_error_at(lx, line, col, "Unexpected end of string.");
            return;
        }
        char c = *lx->p;
        if (c == '\n') {
            lex_error_at(lx, line, col, "String literals cannot cross line boundaries.");
            return;
        }
        if (c == '\0') {
            lex_error_at(lx, lx->line, lx->col, "Invalid NUL byte in string literal.");
            return;
        }
        advance(lx);
        if (c == quote)
            return;
        if (c == '\\' && !scan_escape(lx))
            return;
    }
}

static void scan_number(struct lexer *lx, struct tok *t)
{
    t->kind = TK_INT;
    if (peekc(lx, 0) == '0' && (peekc(lx, 1) == 'x' || peekc(lx, 1) == 'X')) {
        advance(lx);
        advance(lx);
        if (!is_hex(peekc(lx, 0))) {
            lex_error_at(lx, t->line, t->col, "\"0x\" must be followed by hex digits.");
            return;
        }
        while (is_hex(peekc(lx, 0)))
            advance(lx);
    } else if (peekc(lx, 0) == '0' && is_digit(peekc(lx, 1))) {
        while (is_digit(peekc(lx, 0))) {
            if (peekc(lx, 0) > '7') {
                lex_error_at(lx, t->line, t->col,
                             "Numbers starting with leading zero must be in octal.");
                return;
            }
            advance(lx);
        }
    } else {
        while (is_digit(peekc(lx, 0)))
            advance(lx);
        if (peekc(lx, 0) == '.') {
            t->kind = TK_FLOAT;
            advance(lx);
            while (is_digit(peekc(lx, 0)))
                advance(lx);
        }
        if (peekc(lx, 0) == 'e' || peekc(lx, 0) == 'E') {
            t->kind = TK_FLOAT;
            advance(lx);
            if (peekc(lx, 0) == '-' || peekc(lx, 0) == '+')
                advance(lx);
            if (!is_digit(peekc(lx, 0))) {
                lex_error_at(lx, t->line, t->col, "\"e\" must be followed by exponent.");
                return;
            }
            while (is_digit(peekc(lx, 0)))
                advance(lx);
        }
    }
    if (is_alpha(peekc(lx, 0)) || is_digit(peekc(lx, 0)) || peekc(lx, 0) == '.')
        lex_error_at(lx, lx->line, lx->col, "Need space between number and identifier.");
}

static void scan(struct lexer *lx, struct tok *t)
{
    memset(t, 0, sizeof(*t));
    t->kind = TK_EOF;
    if (lx->failed || !skip_space(lx)) {
        t->line = lx->line;
        t->col = lx->col;
        return;
    }
    t->p = lx->p;
    t->line = lx->line;
    t->col = lx->col;
    if (lx->p >= lx->end)
        return;
    int c = peekc(lx, 0);
    if (is_alpha(c)) {
        t->kind = TK_IDENT;
        while (is_alpha(peekc(lx, 0)) || is_digit(peekc(lx, 0)))
            advance(lx);
    } else if (is_digit(c) || (c == '.' && is_digit(peekc(lx, 1)))) {
        scan_number(lx, t);
    } else if (c == '"' || c == '\'') {
        t->kind = TK_STRING;
        scan_string(lx);
    } else if (c > ' ' && c < 0x7f) {
        t->kind = TK_SYM;
        advance(lx);
    } else {
        lex_error_at(lx, lx->line, lx->col, "Invalid character 0x%02x in text.", (unsigned)c);
    }
    t->len = (size_t)(lx->p - t->p);
    if (lx->failed) {
        t->kind = TK_EOF;
        t->len = 0;
    }
}

void lex_init(struct lexer *lx, const char *text, size_t len, const char *path, char *err,
              size_t errcap)
{
    memset(lx, 0, sizeof(*lx));
    lx->p = text;
    lx->end = text + len;
    lx->line = 1;
    lx->col = 1;
    lx->err = err;
    lx->errcap = errcap;
    lx->path = path;
    if (errcap)
        err[0] = '\0';
    scan(lx, &lx->cur);
}

void lex_next(struct lexer *lx)
{
    scan(lx, &lx->cur);
}

struct tok lex_peek(const struct lexer *lx)
{
    struct lexer copy = *lx;
    char scratch[8];
    copy.err = scratch;
    copy.errcap = sizeof(scratch);
    struct tok t;
    scan(&copy, &t);
    return t;
}

bool tok_is_sym(const struct tok *t, char c)
{
    return t->kind == TK_SYM && t->p[0] == c;
}

bool tok_is_word(const struct tok *t, const char *word)
{
    return t->kind == TK_IDENT && strlen(word) == t->len && memcmp(t->p, word, t->len) == 0;
}

static size_t put_utf8(char *out, uint32_t v)
{
    if (v < 0x80) {
        out[0] = (char)v;
        return 1;
    }
    if (v < 0x800) {
        out[0] = (char)(0xC0 | (v >> 6));
        out[1] = (char)(0x80 | (v & 0x3F));
        return 2;
    }
    if (v < 0x10000) {
        out[0] = (char)(0xE0 | (v >> 12));
        out[1] = (char)(0x80 | ((v >> 6) & 0x3F));
        out[2] = (char)(0x80 | (v & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (v >> 18));
    out[1] = (char)(0x80 | ((v >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((v >> 6) & 0x3F));
    out[3] = (char)(0x80 | (v & 0x3F));
    return 4;
}

size_t lex_string_decode(const struct tok *t, char *out)
{
    const char *p = t->p + 1, *end = t->p + t->len - 1;
    size_t n = 0;
    while (p < end) {
        char c = *p++;
        if (c != '\\') {
            out[n++] = c;
            continue;
        }
        c = *p++;
        switch (c) {
        case 'a': out[n++] = '\a'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'v': out[n++] = '\v'; break;
        case 'x':
        case 'X': {
            int v = 0;
            for (int i = 0; i < 2 && p < end && is_hex(*p); i++)
                v = v * 16 + hex_val(*p++);
            out[n++] = (char)v;
            break;
        }
        case 'u':
        case 'U': {
            int digits = c == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int i = 0; i < digits; i++)
                v = v * 16 + (uint32_t)hex_val(*p++);
            n += put_utf8(out + n, v);
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0';
                for (int i = 0; i < 2 && p < end && *p >= '0' && *p <= '7'; i++)
                    v = v * 8 + (*p++ - '0');
                out[n++] = (char)v;
            } else {
                out[n++] = c; /* \\ \? \' \" */
            }
        }
    }
    return n;
}
