/* The tokenizer of .proto text (registry/proto_parse.c's only source of tokens).
 *
 * Tokens as protoc's tokenizer makes them: identifiers ([A-Za-z_][A-Za-z0-9_]*), integers
 * (decimal, 0x hex, 0 octal), floats (1.5, .5, 1e3, 1.5E-3), strings ('...' or "..." with
 * protobuf's escapes), and single-character symbols. Whitespace, // and / * * / comments are
 * skipped. The first error (unterminated comment or string, bad escape, a number run into a
 * name, a control or non-ASCII byte outside strings and comments) sticks: it is recorded with
 * its line:column, and every later token is TK_EOF. */
#ifndef SP_REGISTRY_PROTO_LEX_H
#define SP_REGISTRY_PROTO_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tok_kind { TK_EOF, TK_IDENT, TK_INT, TK_FLOAT, TK_STRING, TK_SYM };

struct tok {
    enum tok_kind kind;
    const char *p; /* the token's text in the source (a string's with its quotes) */
    size_t len;
    uint32_t line;
    uint32_t col;
};

struct lexer {
    const char *p;    /* next byte to scan */
    const char *end;
    uint32_t line;    /* of p */
    uint32_t col;
    struct tok cur;   /* the current token */
    bool failed;
    char *err;        /* the first error's message, "[path:]line:col: what" */
    size_t errcap;
    const char *path; /* prefix of messages ("" for none) */
};

/* Starts on text[0, len) and reads the first token. err (errcap bytes) receives messages. */
void lex_init(struct lexer *lx, const char *text, size_t len, const char *path, char *err,
              size_t errcap);
/* Moves to the next token. */
void lex_next(struct lexer *lx);
/* The token after the current one, without moving (errors found there are not recorded). */
struct tok lex_peek(const struct lexer *lx);
/* Records an error at (line, col) unless one is recorded already; every later token is TK_EOF. */
void lex_error_at(struct lexer *lx, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

bool tok_is_sym(const struct tok *t, char c);
bool tok_is_word(const struct tok *t, const char *word);

/* Decodes a TK_STRING token's content (escapes resolved) into out, which needs t->len bytes;
 * returns the decoded length. The token was checked when it was read. */
size_t lex_string_decode(const struct tok *t, char *out);

#endif
