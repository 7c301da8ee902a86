/* Strict HTTP/1.1 request-head parsing (see http.h for the contract).
 *
 * The head is scanned line by line from the start of the buffer on every call. A complete line
 * is checked in full; the unfinished last line is checked as far as it goes (the request line
 * only: a header line is checked once it ends), so a request that cannot become valid is
 * refused before its head is complete. Nothing beyond min(len, HTTP_HEAD_MAX) is read. */
#include "server/http.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "base/base64.h"

/* RFC 9110 §5.6.2 tchar. */
static bool is_tchar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    return c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

/* Field value bytes: VCHAR, SP, HTAB, obs-text. */
static bool is_value_char(unsigned char c)
{
    return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/* Looks for the end of the line starting at buf[pos], within buf[0, lim).
 * Returns 1 with *content_end (before CR LF or LF) and *next (after LF), 0 if the line is not
 * finished within lim, -1 for a CR not followed by LF. */
static int line_end(const char *buf, size_t pos, size_t lim, size_t *content_end, size_t *next)
{
    for (size_t i = pos; i < lim; i++) {
        if (buf[i] == '\n') {
            *content_end = i;
            *next = i + 1;
            return 1;
        }
        if (buf[i] == '\r') {
            if (i + 1 == lim)
                return 0;
            if (buf[i + 1] != '\n')
                return -1;
            *content_end = i;
            *next = i + 2;
            return 1;
        }
    }
    return 0;
}

/* Checks the request line p[0, n); complete says whether the line ended there, otherwise only
 * a prefix has arrived. Returns 0 (valid, or a valid prefix) or -status. */
static int parse_request_line(const char *p, size_t n, bool complete, struct http_request *req)
{
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)p[i]))
        i++;
    if (i > HTTP_METHOD_MAX)
        return -501;
    if (i == n)
        return complete ? -400 : 0;
    if (i == 0 || p[i] != ' ')
        return -400;
    req->method = p;
    req->method_len = i;
    size_t t0 = ++i;
    while (i < n && (unsigned char)p[i] > 0x20 && (unsigned char)p[i] < 0x7f)
        i++;
    size_t tlen = i - t0;
    if (tlen > HTTP_TARGET_MAX)
        return -414;
    if (tlen > 0 && p[t0] != '/')
        return -400; /* origin-form only: no absolute-form, authority-form or '*' */
    if (i == n)
        return complete ? -400 : 0;
    if (tlen == 0 || p[i] != ' ')
        return -400;
    const char *target = p + t0;
    const char *q = memchr(target, '?', tlen);
    req->path = target;
    req->path_len = q ? (size_t)(q - target) : tlen;
    req->query = q ? q + 1 : NULL;
    req->query_len = q ? tlen - req->path_len - 1 : 0;
    i++;
    static const char proto[] = "HTTP/";
    size_t vlen = n - i;
    const char *v = p + i;
    size_t cmp = vlen < 5 ? vlen : 5;
    if (memcmp(v, proto, cmp) != 0)
        return -400;
    if (!complete)
        return vlen > 8 ? -400 : 0;
    if (vlen != 8 || v[5] < '0' || v[5] > '9' || v[6] != '.' || v[7] < '0' || v[7] > '9')
        return -400;
    if (v[5] != '1' || (v[7] != '0' && v[7] != '1'))
        return -505;
    req->minor = v[7] - '0';
    return 0;
}

static bool name_is(const char *p, size_t n, const char *name)
{
    return strlen(name) == n && strncasecmp(p, name, n) == 0;
}

/* Content-Length: 1*DIGIT (lists are refused). Returns the value, or -1. */
static int64_t parse_length(const char *p, size_t n)
{
    if (n == 0 || n > 18)
        return -1;
    int64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

/* Checks one complete header field line p[0, n) and notes the fields that matter. */
static int parse_field(const char *p, size_t n, struct http_request *req, bool *chunked)
{
    if (p[0] == ' ' || p[0] == '\t')
        return -400; /* obs-fold */
    size_t i = 0;
    while (i < n && is_tchar((unsigned char)p[i]))
        i++;
    if (i == 0 || i == n || p[i] != ':')
        return -400; /* no name, no colon, or whitespace before the colon */
    size_t name_len = i++;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    size_t v0 = i;
    for (; i < n; i++)
        if (!is_value_char((unsigned char)p[i]))
            return -400;
    size_t v1 = n;
    while (v1 > v0 && (p[v1 - 1] == ' ' || p[v1 - 1] == '\t'))
        v1--;
    if (name_is(p, name_len, "host")) {
        if (req->has_host)
            return -400;
        req->has_host = true;
        req->host = p + v0;
        req->host_len = v1 - v0;
    } else if (name_is(p, name_len, "content-length")) {
        int64_t v = parse_length(p + v0, v1 - v0);
        if (v < 0 || (req->content_length >= 0 && req->content_length != v))
            return -400;
        if (v > HTTP_BODY_LIMIT)
            return -413;
        req->content_length = v;
    } else if (name_is(p, name_len, "transfer-encoding")) {
        *chunked = true; /* refused once the head is complete: 411, or 400 beside a length */
    } else if (name_is(p, name_len, "content-type")) {
        if (req->content_type)
            return -400;
        req->content_type = p + v0;
        req->content_type_len = v1 - v0;
    } else if (name_is(p, name_len, "authorization")) {
        if (req->authorization)
            return -400;
        req->authorization = p + v0;
        req->authorization_len = v1 - v0;
    }
    return 0;
}

int http_parse_request(const char *buf, size_t len, struct http_request *req)
{
    memset(req, 0, sizeof(*req));
    req->content_length = -1;
    size_t lim = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
    bool full = len >= HTTP_HEAD_MAX; /* nothing more will be examined */
    size_t pos = 0;
    /* empty lines before the request line are ignored (RFC 9112 §2.2) */
    while (pos < lim && (buf[pos] == '\n' || buf[pos] == '\r')) {
        if (buf[pos] == '\n') {
            pos++;
        } else if (pos + 1 == lim) {
            return full ? -431 : 0;
        } else if (buf[pos + 1] == '\n') {
            pos += 2;
        } else {
            return -400;
        }
    }
    size_t end, next;
    int rc = line_end(buf, pos, lim, &end, &next);
    if (rc < 0)
        return -400;
    if (rc == 0) {
        size_t n = lim - pos;
        if (n > 0 && buf[pos + n - 1] == '\r')
            n--; /* its LF has not arrived yet */
        int st = parse_request_line(buf + pos, n, false, req);
        if (st < 0)
            return st;
        return full ? -414 : 0;
    }
    int st = parse_request_line(buf + pos, end - pos, true, req);
    if (st < 0)
        return st;
    int fields = 0;
    bool chunked = false;
    for (pos = next;;) {
        rc = line_end(buf, pos, lim, &end, &next);
        if (rc < 0)
            return -400;
        if (rc == 0)
            return full ? -431 : 0;
        if (end == pos)
            break; /* the empty line: end of the head */
        if (++fields > HTTP_FIELDS_MAX)
            return -431;
        st = parse_field(buf + pos, end - pos, req, &chunked);
        if (st < 0)
            return st;
        pos = next;
    }
    if (req->minor == 1 && !req->has_host)
        return -400;
    if (chunked)
        return req->content_length >= 0 ? -400 : -411; /* RFC 9112 §6.3: smuggling otherwise */
    req->head_len = next;
    return (int)next;
}

static bool has_ctl(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
            return true;
    return false;
}

int http_basic_parse(const char *v, size_t len, struct http_basic *out)
{
    memset(out, 0, sizeof(*out));
    static const char scheme[] = "basic";
    size_t sl = sizeof(scheme) - 1;
    if (len <= sl || strncasecmp(v, scheme, sl) != 0 || v[sl] != ' ')
        return -1;
    size_t i = sl;
    while (i < len && v[i] == ' ')
        i++;
    const char *tok = v + i;
    size_t tok_len = len - i;
    if (tok_len == 0 || tok_len > B64_ENCODED_LEN(sizeof(out->buf)))
        return -1;
    size_t n;
    if (b64_decode(tok, tok_len, (uint8_t *)out->buf, sizeof(out->buf), &n) != 0)
        goto fail;
    const char *colon = memchr(out->buf, ':', n);
    if (!colon)
        goto fail;
    size_t ul = (size_t)(colon - out->buf);
    size_t pl = n - ul - 1;
    if (ul == 0 || ul > HTTP_BASIC_USER_MAX || pl == 0 || pl > HTTP_BASIC_PASSWORD_MAX ||
        has_ctl(out->buf, n))
        goto fail;
    out->user = out->buf;
    out->user_len = ul;
    out->password = colon + 1;
    out->password_len = pl;
    return 0;

fail:
    memset(out, 0, sizeof(*out)); /* decoded bytes may be (part of) a password */
    return -1;
}

bool http_method_is(const struct http_request *req, const char *m)
{
    return req->method && strlen(m) == req->method_len &&
           memcmp(req->method, m, req->method_len) == 0;
}

bool http_content_type_is(const struct http_request *req, const char *type)
{
    if (!req->content_type)
        return false;
    const char *semi = memchr(req->content_type, ';', req->content_type_len);
    size_t n = semi ? (size_t)(semi - req->content_type) : req->content_type_len;
    while (n > 0 && (req->content_type[n - 1] == ' ' || req->content_type[n - 1] == '\t'))
        n--;
    return strlen(type) == n && strncasecmp(req->content_type, type, n) == 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int http_percent_decode(const char *s, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '%') {
            if (len - i < 3)
                return -1;
            int hi = hex_digit(s[i + 1]), lo = hex_digit(s[i + 2]);
            if (hi < 0 || lo < 0)
                return -1;
            c = (unsigned char)(hi * 16 + lo);
            i += 2;
        }
        if (c < 0x20 || c == 0x7f || n >= cap)
            return -1;
        out[n++] = (char)c;
    }
    return n > (size_t)INT32_MAX ? -1 : (int)n;
}

const char *http_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 202:
        return "Accepted";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 411:
        return "Length Required";
    case 413:
        return "Content Too Large";
    case 414:
        return "URI Too Long";
    case 415:
        return "Unsupported Media Type";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 505:
        return "HTTP Version Not Supported";
    }
    return "Unknown";
}

void http_write_head(struct strbuf *out, int status, const char *content_type,
                     size_t content_length, const char *extra)
{
    strbuf_printf(out, "HTTP/1.1 %d %s\r\n", status, http_reason(status));
    if (content_type)
        strbuf_printf(out, "Content-Type: %s\r\n", content_type);
    strbuf_printf(out, "Content-Length: %zu\r\nConnection: close\r\nCache-Control: no-store\r\n",
                  content_length);
    if (extra)
        strbuf_puts(out, extra);
    strbuf_puts(out, "\r\n");
}
