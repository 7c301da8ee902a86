/* Record output: compiled format strings and JSON. See format.h for the formats. */
#include "cli/format.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "base/mem.h"

/* One piece of a compiled format: literal bytes, or a record field. */
struct fmt_tok {
    char field;     /* 0 for a literal, else the conversion letter ('k', 'v', ...) */
    char *lit;      /* literal bytes (may contain NUL), owned */
    size_t lit_len; /* bytes in lit */
};

struct fmt {
    struct fmt_tok *toks; /* in output order, owned */
    size_t len;           /* tokens used */
    size_t cap;           /* tokens allocated */
};

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static void push_lit(struct fmt *f, const char *buf, size_t n)
{
    if (n == 0)
        return;
    MEM_GROW(f->toks, f->cap, f->len + 1);
    f->toks[f->len++] = (struct fmt_tok){.field = 0, .lit = mem_dup(buf, n), .lit_len = n};
}

static void push_field(struct fmt *f, char field)
{
    MEM_GROW(f->toks, f->cap, f->len + 1);
    f->toks[f->len++] = (struct fmt_tok){.field = field};
}

int fmt_compile(const char *spec, struct fmt **out, char *err, size_t err_cap)
{
    struct fmt *f = mem_calloc(1, sizeof(*f));
    size_t n = strlen(spec);
    char *lit = mem_alloc(n + 1); /* the pending literal never outgrows the spec */
    size_t lit_len = 0;
    for (size_t i = 0; i < n; i++) {
        char c = spec[i];
        if (c == '\\') {
            char e = spec[i + 1]; /* '\0' at the end of spec */
            switch (e) {
            case 'n':
                lit[lit_len++] = '\n';
                i++;
                continue;
            case 't':
                lit[lit_len++] = '\t';
                i++;
                continue;
            case 'r':
                lit[lit_len++] = '\r';
                i++;
                continue;
            case '\\':
                lit[lit_len++] = '\\';
                i++;
                continue;
            case '0':
                lit[lit_len++] = '\0';
                i++;
                continue;
            case 'x': {
                int hi = i + 2 < n ? hexval(spec[i + 2]) : -1;
                int lo = i + 3 < n ? hexval(spec[i + 3]) : -1;
                if (hi < 0 || lo < 0) {
                    snprintf(err, err_cap, "\\x needs two hex digits (at offset %zu)", i);
                    goto fail;
                }
                lit[lit_len++] = (char)(hi * 16 + lo);
                i += 3;
                continue;
            }
            default:
                snprintf(err, err_cap, "unknown escape '\\%c' (use \\n \\t \\r \\\\ \\0 \\xNN)",
                         e ? e : ' ');
                goto fail;
            }
        }
        if (c != '%') {
            lit[lit_len++] = c;
            continue;
        }
        char conv = spec[i + 1];
        if (conv == '%') {
            lit[lit_len++] = '%';
            i++;
            continue;
        }
        if (!conv || !strchr("kvspotThKS", conv)) {
            snprintf(err, err_cap,
                     "unknown conversion '%%%c' (use %%k %%v %%p %%o %%t %%h %%T %%K %%S %%%%)",
                     conv ? conv : ' ');
            goto fail;
        }
        push_lit(f, lit, lit_len);
        lit_len = 0;
        push_field(f, conv == 's' ? 'v' : conv);
        i++;
    }
    push_lit(f, lit, lit_len);
    mem_free(lit);
    *out = f;
    return 0;
fail:
    mem_free(lit);
    fmt_free(f);
    return -1;
}

void fmt_free(struct fmt *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->len; i++)
        mem_free(f->toks[i].lit);
    mem_free(f->toks);
    mem_free(f);
}

static void write_headers_plain(FILE *out, const rd_kafka_message_t *m)
{
    rd_kafka_headers_t *hdrs;
    if (rd_kafka_message_headers(m, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return;
    const char *name;
    const void *val;
    size_t size;
    for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == 0; i++) {
        if (i > 0)
            fputc(',', out);
        fputs(name, out);
        fputc('=', out);
        if (val)
            fwrite(val, 1, size, out);
    }
}

void fmt_write(FILE *out, const struct fmt *f, const rd_kafka_message_t *m,
               const struct fmt_bytes *key, const struct fmt_bytes *value)
{
    const void *kp = key ? key->p : m->key, *vp = value ? value->p : m->payload;
    size_t kn = key ? key->len : m->key_len, vn = value ? value->len : m->len;
    for (size_t i = 0; i < f->len; i++) {
        const struct fmt_tok *t = &f->toks[i];
        switch (t->field) {
        case 0:
            fwrite(t->lit, 1, t->lit_len, out);
            break;
        case 'k':
            if (kp)
                fwrite(kp, 1, kn, out);
            break;
        case 'v':
            if (vp)
                fwrite(vp, 1, vn, out);
            break;
        case 'p':
            fprintf(out, "%" PRId32, m->partition);
            break;
        case 'o':
            fprintf(out, "%" PRId64, m->offset);
            break;
        case 't':
            fprintf(out, "%" PRId64, rd_kafka_message_timestamp(m, NULL));
            break;
        case 'T':
            fputs(m->rkt ? rd_kafka_topic_name(m->rkt) : "", out);
            break;
        case 'h':
            write_headers_plain(out, m);
            break;
        case 'K':
            fprintf(out, "%zd", kp ? (ssize_t)kn : (ssize_t)-1);
            break;
        case 'S':
            fprintf(out, "%zd", vp ? (ssize_t)vn : (ssize_t)-1);
            break;
        }
    }
}

/* Length of the well-formed UTF-8 sequence at p (of n bytes left), or 0 if p[0] does not start
 * one (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF). */
static size_t utf8_seq_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    if (c < 0x80)
        return 1;
    if (c < 0xC2 || c > 0xF4)
        return 0;
    size_t need = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (n < need)
        return 0;
    for (size_t i = 1; i < need; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] >= 0xA0) || (c == 0xF0 && p[1] < 0x90) ||
        (c == 0xF4 && p[1] >= 0x90))
        return 0;
    return need;
}

void fmt_json_string(FILE *out, const void *data, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = data;
    size_t run = 0; /* bytes at p[i - run .. i) that go out unchanged */
    fputc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = p[i];
        size_t seq = utf8_seq_len(p + i, len - i);
        bool plain = seq > 1 || (seq == 1 && c >= 0x20 && c != '"' && c != '\\');
        if (plain) {
            run += seq;
            i += seq;
            continue;
        }
        fwrite(p + i - run, 1, run, out);
        run = 0;
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\b':
            fputs("\\b", out);
            break;
        case '\f':
            fputs("\\f", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default: {
            /* a control byte, or a byte outside well-formed UTF-8: its Latin-1 code point */
            char esc[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            fputs(esc, out);
        }
        }
        i++;
    }
    fwrite(p + len - run, 1, run, out);
    fputc('"', out);
}

static void json_bytes_or_null(FILE *out, const void *p, size_t len)
{
    if (p)
        fmt_json_string(out, p, len);
    else
        fputs("null", out);
}

void fmt_write_json(FILE *out, const rd_kafka_message_t *m, const char *key_json,
                    const char *value_json)
{
    const char *topic = m->rkt ? rd_kafka_topic_name(m->rkt) : "";
    fputs("{\"topic\":", out);
    fmt_json_string(out, topic, strlen(topic));
    fprintf(out, ",\"partition\":%" PRId32 ",\"offset\":%" PRId64 ",\"timestamp\":", m->partition,
            m->offset);
    int64_t ts = rd_kafka_message_timestamp(m, NULL);
    if (ts >= 0)
        fprintf(out, "%" PRId64, ts);
    else
        fputs("null", out);
    fputs(",\"key\":", out);
    if (key_json)
        fputs(key_json, out);
    else
        json_bytes_or_null(out, m->key, m->key_len);
    fputs(",\"value\":", out);
    if (value_json)
        fputs(value_json, out);
    else
        json_bytes_or_null(out, m->payload, m->len);
    fputs(",\"headers\":[", out);
    rd_kafka_headers_t *hdrs;
    if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char *name;
        const void *val;
        size_t size;
        for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &val, &size) == 0; i++) {
            fputs(i ? ",{\"key\":" : "{\"key\":", out);
            fmt_json_string(out, name, strlen(name));
            fputs(",\"value\":", out);
            json_bytes_or_null(out, val, size);
            fputc('}', out);
        }
    }
    fputs("]}\n", out);
}
