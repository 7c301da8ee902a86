/* libFuzzer target: the admin listener's untrusted input and its escapers.
 *
 * First byte even: the rest is an HTTP request head for http_parse_request (server/http.h),
 * given in an exact-size copy so any over-read is an ASan report. Checked: the result is 0, a
 * head length within the input and HTTP_HEAD_MAX, or minus a 4xx/5xx status; a full buffer
 * never asks for more; a parsed head points inside the input with a path starting with '/';
 * the head alone parses to the same length; and no prefix of a valid head is refused (the
 * early refusal of unfinished lines never rejects what would become valid). A head with an
 * Authorization field has its value checked as below.
 *
 * First byte 1 mod 8: the rest is a label value / JSON string. The Prometheus escaper's output
 * must be well-formed UTF-8 with no raw line feed or unescaped quote; the JSON escaper's output
 * must be well-formed UTF-8, quoted, with no raw control character and no unescaped quote.
 *
 * First byte 5 mod 8: the rest is a JSON text (a /v1/users body) for json_parse
 * (base/json_parse.h), in an exact-size copy, under small limits and the defaults. Checked:
 * the result is 0 or -ERR_INVALID / -ERR_TOO_LARGE with a message, and a refusal leaves no
 * root; an accepted tree respects the limits, its strings and member names are well-formed
 * UTF-8, and written back with base/json.h it parses again to the same tree (types, strings,
 * integers, item counts).
 *
 * First byte 3 mod 4: the rest is an Authorization value for http_basic_parse, in an exact-size
 * copy. Accepted credentials lie inside the struct's buffer, have a user of 1..255 bytes
 * without ':' and a password of 1..1024 bytes, no control byte, and re-encode to the same
 * token; a refusal leaves the struct zeroed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/json.h"
#include "base/json_parse.h"
#include "base/mem.h"
#include "base/prom.h"
#include "base/strbuf.h"
#include "base/base64.h"
#include "server/http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_basic(const char *p, size_t len)
{
    char *copy = mem_alloc(len ? len : 1);
    memcpy(copy, p, len);
    struct http_basic b;
    int rc = http_basic_parse(copy, len, &b);
    if (rc != 0) {
        const char *z = (const char *)&b;
        for (size_t i = 0; i < sizeof(b); i++)
            if (z[i] != 0)
                abort();
    } else {
        const char *lo = b.buf, *hi = b.buf + sizeof(b.buf);
        if (b.user != lo || b.user_len < 1 || b.user_len > HTTP_BASIC_USER_MAX ||
            b.password != b.user + b.user_len + 1 || b.password_len < 1 ||
            b.password_len > HTTP_BASIC_PASSWORD_MAX || b.password + b.password_len > hi ||
            memchr(b.user, ':', b.user_len) || b.user[b.user_len] != ':')
            abort();
        for (const char *q = b.user; q < b.password + b.password_len; q++)
            if ((unsigned char)*q < 0x20 || *q == 0x7f)
                abort();
        /* the token is the strict encoding of user:password: it must encode back to itself */
        size_t n = b.user_len + 1 + b.password_len;
        char enc[B64_ENCODED_LEN(sizeof(b.buf)) + 1];
        size_t el = b64_encode(b.buf, n, enc, sizeof(enc));
        if (len < el || memcmp(copy + len - el, enc, el) != 0)
            abort();
    }
    mem_free(copy);
}

static int parse_copy(const char *p, size_t len, struct http_request *req)
{
    char *copy = mem_alloc(len ? len : 1);
    memcpy(copy, p, len);
    int rc = http_parse_request(copy, len, req);
    if (rc > 0) {
        const char *end = copy + len;
        if (req->method < copy || req->method + req->method_len > end || req->path < copy ||
            req->path + req->path_len > end || req->path_len == 0 || req->path[0] != '/' ||
            req->method_len == 0 || (req->query && req->query + req->query_len > end))
            abort();
        if (req->authorization &&
            (req->authorization < copy || req->authorization + req->authorization_len > end))
            abort();
        if (req->authorization)
            fuzz_basic(req->authorization, req->authorization_len);
        req->authorization = NULL; /* the copy goes now */
    }
    mem_free(copy);
    return rc;
}

static void fuzz_parser(const char *p, size_t len)
{
    struct http_request req;
    int rc = parse_copy(p, len, &req);
    if (rc > 0 && ((size_t)rc > len || rc > HTTP_HEAD_MAX))
        abort();
    if (rc < 0 && (-rc < 400 || -rc > 599))
        abort();
    if (rc == 0 && len >= HTTP_HEAD_MAX)
        abort(); /* the server would wait forever with a full buffer */
    if (rc > 0) {
        if (parse_copy(p, (size_t)rc, &req) != rc)
            abort();
        size_t cuts[] = {(size_t)rc - 1, (size_t)rc / 2, (size_t)rc / 3, 1};
        for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
            if (cuts[i] < (size_t)rc && parse_copy(p, cuts[i], &req) != 0)
                abort();
    }
}

static void utf8_or_abort(const struct strbuf *s)
{
    const unsigned char *u = (const unsigned char *)strbuf_str(s);
    for (size_t i = 0; i < s->len;) {
        size_t n = utf8_seq_len(u + i, s->len - i);
        if (n == 0)
            abort();
        i += n;
    }
}

static void fuzz_escapers(const char *p, size_t len)
{
    char *copy = mem_alloc(len ? len : 1);
    memcpy(copy, p, len);
    struct strbuf s;
    strbuf_init(&s);
    prom_escape_label_value(&s, copy, len);
    utf8_or_abort(&s);
    for (size_t i = 0; i < s.len; i++) {
        if (s.p[i] == '\n')
            abort();
        if (s.p[i] == '\\' || s.p[i] == '"') {
            if (s.p[i] == '"' || i + 1 == s.len || !strchr("\\\"n", s.p[i + 1]))
                abort();
            i++;
        }
    }
    strbuf_reset(&s);
    json_escape(&s, copy, len);
    utf8_or_abort(&s);
    if (s.len < 2 || s.p[0] != '"' || s.p[s.len - 1] != '"')
        abort();
    for (size_t i = 1; i + 1 < s.len; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (c < 0x20 || c == '"')
            abort();
        if (c == '\\') {
            if (i + 2 == s.len || !strchr("\"\\/bfnrtu", s.p[i + 1]))
                abort();
            i++;
        }
    }
    strbuf_destroy(&s);
    mem_free(copy);
}

static void utf8_bytes_or_abort(const char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq_len((const unsigned char *)p + i, n - i);
        if (k == 0)
            abort();
        i += k;
    }
}

/* Checks v (at depth d) and writes it back with the writer; returns the values counted. */
static size_t json_walk(const struct json_value *v, int d, struct json *w)
{
    size_t n = 1;
    switch (v->type) {
    case JSON_NULL:
        json_null(w);
        break;
    case JSON_BOOL:
        json_bool(w, v->boolean);
        break;
    case JSON_NUMBER:
        if (v->is_int)
            json_i64(w, v->int_value);
        else
            json_null(w); /* doubles do not round-trip as text: compared as null below */
        break;
    case JSON_STRING:
        utf8_bytes_or_abort(v->str, v->str_len);
        if (v->str[v->str_len] != '\0')
            abort();
        json_str(w, v->str, v->str_len);
        break;
    case JSON_ARRAY:
    case JSON_OBJECT: {
        if (d >= JSON_DEPTH_MAX - 1)
            abort(); /* the limits below keep it shallower */
        bool obj = v->type == JSON_OBJECT;
        if (obj)
            json_obj_begin(w);
        else
            json_arr_begin(w);
        size_t items = 0;
        for (const struct json_value *c = v->child; c; c = c->next) {
            if (obj) {
                utf8_bytes_or_abort(c->key, c->key_len);
                if (memchr(c->key, 0, c->key_len))
                    json_key(w, "\x01nul"); /* the writer takes C strings; compared below */
                else
                    json_key(w, c->key);
            }
            n += json_walk(c, d + 1, w);
            items++;
        }
        if (items != v->n)
            abort();
        if (obj)
            json_obj_end(w);
        else
            json_arr_end(w);
        break;
    }
    }
    return n;
}

static bool json_same(const struct json_value *a, const struct json_value *b)
{
    bool anum = a->type == JSON_NUMBER && !a->is_int;
    if (anum)
        return b->type == JSON_NULL;
    if (a->type != b->type || a->n != b->n)
        return false;
    if (a->type == JSON_BOOL)
        return a->boolean == b->boolean;
    if (a->type == JSON_NUMBER)
        return b->is_int && a->int_value == b->int_value;
    if (a->type == JSON_STRING)
        return a->str_len == b->str_len && memcmp(a->str, b->str, a->str_len) == 0;
    const struct json_value *x = a->child, *y = b->child;
    for (; x && y; x = x->next, y = y->next) {
        if (a->type == JSON_OBJECT && !memchr(x->key, 0, x->key_len) &&
            (x->key_len != y->key_len || memcmp(x->key, y->key, x->key_len) != 0))
            return false;
        if (!json_same(x, y))
            return false;
    }
    return !x && !y;
}

static void fuzz_json_with(const char *copy, size_t len, const struct json_limits *lim)
{
    struct json_doc d;
    char err[128] = "";
    int rc = json_parse(&d, copy, len, lim, err, sizeof(err));
    if (rc != 0) {
        if ((rc != -ERR_INVALID && rc != -ERR_TOO_LARGE) || d.root || strncmp(err, "at byte ", 8))
            abort();
        json_doc_free(&d);
        return;
    }
    struct strbuf s;
    strbuf_init(&s);
    struct json w;
    json_init(&w, &s);
    size_t values = json_walk(d.root, 0, &w);
    if (lim && values > lim->values_max)
        abort();
    struct json_doc again;
    /* names with NUL were written differently: their objects may now hold duplicates */
    int rc2 = json_parse(&again, s.p, s.len, NULL, err, sizeof(err));
    if (rc2 == 0 && !json_same(d.root, again.root))
        abort();
    if (rc2 != 0 && !strstr(err, "twice"))
        abort();
    json_doc_free(&again);
    strbuf_destroy(&s);
    json_doc_free(&d);
}

static void fuzz_json(const char *p, size_t len)
{
    char *copy = mem_alloc(len ? len : 1);
    memcpy(copy, p, len);
    struct json_limits small = {.depth_max = 2, .values_max = 16}; /* a /v1/users body's */
    fuzz_json_with(copy, len, &small);
    struct json_limits deeper = {.depth_max = 12, .values_max = 4096};
    fuzz_json_with(copy, len, &deeper);
    mem_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] % 2 == 0)
        fuzz_parser((const char *)data + 1, size - 1);
    else if (data[0] % 8 == 1)
        fuzz_escapers((const char *)data + 1, size - 1);
    else if (data[0] % 8 == 5)
        fuzz_json((const char *)data + 1, size - 1);
    else
        fuzz_basic((const char *)data + 1, size - 1);
    return 0;
}
