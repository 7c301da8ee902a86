/* HTTP/1.1 requests (RFC 9112), parsed strictly, for the admin listener.
 *
 * The admin listener takes small requests: a head, and for the methods that carry one a body
 * of at most HTTP_BODY_MAX bytes framed by Content-Length (no chunked transfer coding). This
 * parser reads the head: the request line, the header fields it needs (Host, Content-Length,
 * Content-Type, Transfer-Encoding, Authorization), and the syntax of the rest, which it checks
 * and skips; server/httpd.c then reads the body the head announces. Input is untrusted bytes
 * from any client (any local process; beyond loopback, anyone who completes a TLS handshake):
 * every limit below is enforced before anything else happens, and nothing is allocated (the
 * request points into the caller's buffer).
 *
 * http_parse_request() is meant to be called again each time more bytes arrive, on the whole
 * buffer so far (the head is small, HTTP_HEAD_MAX at most, so re-scanning costs little). It
 * rejects a bad request line or header line as soon as that line is complete, so garbage is
 * answered at once instead of after the read timeout. */
#ifndef SP_SERVER_HTTP_H
#define SP_SERVER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

#define HTTP_HEAD_MAX 8192   /* request line + header fields + the empty line */
#define HTTP_TARGET_MAX 2048 /* request-target; longer gets 414 */
#define HTTP_METHOD_MAX 16   /* longer method tokens get 501 */
#define HTTP_FIELDS_MAX 64   /* header fields; more get 431 */
#define HTTP_BODY_MAX 65536  /* request body bytes a server takes by default (httpd_limits) */
#define HTTP_BODY_LIMIT (16u << 20) /* Content-Length above this is refused by the parser */

struct http_request {
    const char *method; /* token, not NUL-terminated */
    size_t method_len;
    const char *path; /* request-target up to '?' (starts with '/') */
    size_t path_len;
    const char *query; /* after '?', or NULL */
    size_t query_len;
    int minor;                 /* HTTP/1.<minor>: 0 or 1 */
    bool has_host;             /* a Host field was present */
    const char *host;          /* its value (trimmed), or NULL */
    size_t host_len;
    size_t head_len;           /* bytes of the head, up to and including the empty line */
    const char *authorization; /* the Authorization field's value (trimmed), or NULL */
    size_t authorization_len;
    const char *content_type; /* the Content-Type field's value (trimmed), or NULL */
    size_t content_type_len;
    int64_t content_length; /* Content-Length (0..HTTP_BODY_LIMIT), or -1 without the field */
    /* set by server/httpd.c: */
    const char *peer; /* the client's address without its port */
    const char *body; /* the body: content_length bytes after the head ("" without one) */
    size_t body_len;
};

/* Parses the request head at the start of buf[0, len).
 * Returns head_len (> 0) once the head is complete and valid (*req filled, pointing into buf);
 * 0 if more bytes are needed; or minus an HTTP status for a request to refuse:
 *   -400 malformed (bad request line, bad field syntax, obs-fold, control bytes, bare CR,
 *        missing Host in HTTP/1.1, Host, Authorization or Content-Type given twice,
 *        conflicting or invalid Content-Length, Transfer-Encoding beside Content-Length),
 *   -411 Transfer-Encoding without Content-Length (a chunked body: not accepted; the client
 *        may send the same body with Content-Length),
 *   -413 Content-Length above HTTP_BODY_LIMIT (a server's own, lower limit is httpd's),
 *   -414 request-target longer than HTTP_TARGET_MAX,
 *   -431 head longer than HTTP_HEAD_MAX or more than HTTP_FIELDS_MAX fields,
 *   -501 method token longer than HTTP_METHOD_MAX,
 *   -505 an HTTP version other than 1.0 and 1.1.
 * Up to HTTP_HEAD_MAX bytes are examined; a caller holding that many without a complete head
 * gets -431 (or -414 while the request line is still unfinished). Bare LF line ends are
 * accepted (RFC 9112 §2.2), and so are empty lines before the request line. */
int http_parse_request(const char *buf, size_t len, struct http_request *req);

/* HTTP Basic credentials (RFC 7617), decoded. user-id and password are at most these many
 * bytes (security/scram.h's limits on SCRAM user names and passwords). */
#define HTTP_BASIC_USER_MAX 255
#define HTTP_BASIC_PASSWORD_MAX 1024

struct http_basic {
    char buf[HTTP_BASIC_USER_MAX + 1 + HTTP_BASIC_PASSWORD_MAX]; /* the decoded user-pass */
    const char *user;                                            /* into buf, not NUL-terminated */
    size_t user_len;
    const char *password; /* into buf, after the first ':' */
    size_t password_len;
};

/* Parses an Authorization field value v[0, len) (untrusted) as "Basic" (any case), one or more
 * spaces, and the strict base64 (security/base64.h) of "user-id:password": the user-id is
 * 1..HTTP_BASIC_USER_MAX bytes before the first ':', the password 1..HTTP_BASIC_PASSWORD_MAX
 * bytes after it, neither with a control byte (RFC 7617 §2). Returns 0 with *out filled, or
 * -1: another scheme, bad base64, no ':', an empty or oversized part, a control byte. Reads
 * nothing beyond v[len - 1]. The caller wipes *out (it holds a password). */
int http_basic_parse(const char *v, size_t len, struct http_basic *out);

/* Whether the method is exactly m (methods are case-sensitive). */
bool http_method_is(const struct http_request *req, const char *m);

/* Whether the Content-Type's media type (before any ';' parameter) is type, ignoring case
 * (RFC 9110 §8.3.1); false without the field. */
bool http_content_type_is(const struct http_request *req, const char *type);

/* Percent-decodes s[0, len) (RFC 3986 §2.1: a request-target's path segment or query value)
 * into out (cap bytes). Returns the decoded length, or -1: a '%' not followed by two hex
 * digits, a decoded byte below 0x20 or 0x7f, or more than cap bytes. '+' stays '+'. */
int http_percent_decode(const char *s, size_t len, char *out, size_t cap);

/* The reason phrase for the statuses the admin listener sends ("Unknown" otherwise). */
const char *http_reason(int status);

/* Appends a complete response head: status line, Content-Type (if given), Content-Length,
 * Connection: close, Cache-Control: no-store, any extra header lines (each ending in CRLF, or
 * NULL), and the empty line. */
void http_write_head(struct strbuf *out, int status, const char *content_type,
                     size_t content_length, const char *extra);

#endif
