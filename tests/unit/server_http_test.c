/* The admin listener's HTTP layer: the request-head parser (server/http.h) on fixed inputs,
 * and the server (server/httpd.h) over loopback sockets driven by reactor_run_once. */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/check.h"
#include "base/mem.h"
#include "net/reactor.h"
#include "net_test_util.h"
#include "base/base64.h"
#include "server/http.h"
#include "server/httpd.h"
#include "test.h"

static int parse(const char *s, struct http_request *req)
{
    return http_parse_request(s, strlen(s), req);
}

TEST(http_parse_valid_get)
{
    struct http_request req;
    const char *s = "GET /metrics?x=1&y HTTP/1.1\r\nHost: localhost:9644\r\n"
                    "User-Agent: Prometheus/2.45\r\nAccept: text/plain;q=1,*/*;q=0.1\r\n\r\nextra";
    int rc = parse(s, &req);
    ASSERT_EQ(rc, (int)(strstr(s, "extra") - s));
    ASSERT(http_method_is(&req, "GET"));
    ASSERT(!http_method_is(&req, "GE"));
    ASSERT_EQ(req.path_len, 8);
    ASSERT(memcmp(req.path, "/metrics", 8) == 0);
    ASSERT_EQ(req.query_len, 5);
    ASSERT(memcmp(req.query, "x=1&y", 5) == 0);
    ASSERT_EQ(req.minor, 1);
    ASSERT(req.has_host);
    /* HTTP/1.0 needs no Host; bare LF line ends and leading empty lines are accepted */
    ASSERT(parse("\r\n\nGET / HTTP/1.0\n\n", &req) > 0);
    ASSERT_EQ(req.minor, 0);
    ASSERT(parse("GET /healthz HTTP/1.1\r\nhOsT:x\r\nContent-Length: 0\r\n\r\n", &req) > 0);
}

TEST(http_parse_is_incremental)
{
    const char *s = "GET /v1/topics HTTP/1.1\r\nHost: a\r\nX-Y:  z \r\n\r\n";
    size_t n = strlen(s);
    struct http_request req;
    for (size_t i = 0; i < n; i++)
        ASSERT_EQ(http_parse_request(s, i, &req), 0);
    ASSERT_EQ(http_parse_request(s, n, &req), (int)n);
}

struct bad_case {
    const char *in;
    int status;
};

TEST(http_parse_refuses_malformed_requests)
{
    static const struct bad_case cases[] = {
        {"garbage\r\n\r\n", 400},
        {"\x00\x00\x00\x10", 400}, /* a Kafka frame: refused before any line ends */
        {"\x16\x03\x01\x02", 400}, /* a TLS ClientHello */
        {"GET  / HTTP/1.1\r\n", 400},
        {"GET / HTTP/1.1 \r\n", 400},
        {"GET http://x/ HTTP/1.1\r\n", 400},
        {"GET * HTTP/1.1\r\n", 400},
        {"GET /a\x01 HTTP/1.1\r\n", 400},
        {"GET / HTTX/1.1\r\n", 400},
        {"GET / HTTP/1.1\rX", 400}, /* bare CR */
        {"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\n: x\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Basic eA==\r\n"
         "authorization: Basic eQ==\r\n\r\n",
         400},                           /* which one would count? */
        {"GET / HTTP/1.1\r\n\r\n", 400}, /* HTTP/1.1 without Host */
        {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n", 400},
        {"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\nContent-Length: 1\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 16777217\r\n\r\n", 413},
        {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 999999999999999999\r\n\r\n", 413},
        {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 9999999999999999999\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", 400},
        {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 411},
        {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 411},
        {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
         400}, /* which framing counts? (request smuggling) */
        {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
         400},
        {"POST / HTTP/1.1\r\nHost: a\r\nContent-Type: a/b\r\nContent-Type: a/b\r\n\r\n", 400},
        {"GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
        {"GET / HTTP/1.2\r\nHost: a\r\n\r\n", 505},
        {"ABCDEFGHIJKLMNOPQRSTUVWXYZ / HTTP/1.1\r\n", 501},
    };
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct http_request req;
        int rc = http_parse_request(cases[i].in,
                                    strlen(cases[i].in) + (cases[i].in[0] == 0 ? 4 : 0), &req);
        if (rc != -cases[i].status)
            test_fail(__FILE__, __LINE__, "case %zu: got %d, want %d", i, rc, -cases[i].status);
    }
}

TEST(http_parse_enforces_size_limits)
{
    char *buf = mem_alloc(HTTP_HEAD_MAX + 100);
    struct http_request req;
    /* a head that does not end within HTTP_HEAD_MAX */
    int n = snprintf(buf, HTTP_HEAD_MAX, "GET / HTTP/1.1\r\nHost: a\r\nX: ");
    memset(buf + n, 'a', HTTP_HEAD_MAX + 100 - (size_t)n);
    ASSERT_EQ(http_parse_request(buf, HTTP_HEAD_MAX - 1, &req), 0);
    ASSERT_EQ(http_parse_request(buf, HTTP_HEAD_MAX, &req), -431);
    ASSERT_EQ(http_parse_request(buf, HTTP_HEAD_MAX + 100, &req), -431);
    /* a request line that does not end within HTTP_HEAD_MAX */
    memcpy(buf, "GET /", 5);
    memset(buf + 5, 'a', HTTP_HEAD_MAX + 95);
    ASSERT_EQ(http_parse_request(buf, HTTP_TARGET_MAX, &req), 0);
    ASSERT_EQ(http_parse_request(buf, HTTP_TARGET_MAX + 10, &req), -414);
    /* too many fields */
    struct strbuf s;
    strbuf_init(&s);
    strbuf_puts(&s, "GET / HTTP/1.1\r\nHost: a\r\n");
    for (int i = 0; i < HTTP_FIELDS_MAX; i++)
        strbuf_printf(&s, "X-%d: v\r\n", i);
    strbuf_puts(&s, "\r\n");
    ASSERT_EQ(http_parse_request(s.p, s.len, &req), -431);
    strbuf_destroy(&s);
    mem_free(buf);
}

TEST(http_parse_notes_body_framing_host_and_content_type)
{
    struct http_request req;
    const char *r = "POST /v1/users HTTP/1.1\r\nHost:  127.0.0.1:9644 \r\n"
                    "Content-Type: Application/JSON ; charset=utf-8\r\nContent-Length: 65536\r\n\r\n";
    ASSERT_EQ(parse(r, &req), (int)strlen(r));
    ASSERT_EQ(req.content_length, 65536);
    ASSERT_EQ(req.host_len, 14);
    ASSERT(memcmp(req.host, "127.0.0.1:9644", 14) == 0);
    ASSERT(http_content_type_is(&req, "application/json"));
    ASSERT(!http_content_type_is(&req, "application/jso"));
    ASSERT(!http_content_type_is(&req, "text/plain"));
    ASSERT(req.body == NULL && req.body_len == 0); /* httpd's to set */
    ASSERT(parse("DELETE /x HTTP/1.0\r\n\r\n", &req) > 0);
    ASSERT_EQ(req.content_length, -1);
    ASSERT(req.host == NULL && req.content_type == NULL);
    ASSERT(!http_content_type_is(&req, "application/json"));
    ASSERT(parse("POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n"
                 "Content-Length: 0\r\nContent-Type:text/plain\r\n\r\n",
                 &req) > 0); /* the same length twice is one length */
    ASSERT_EQ(req.content_length, 0);
    ASSERT(http_content_type_is(&req, "TEXT/PLAIN"));
}

TEST(http_percent_decode_is_strict)
{
    char out[16];
    ASSERT_EQ(http_percent_decode("al%69ce", 7, out, sizeof(out)), 5);
    ASSERT(memcmp(out, "alice", 5) == 0);
    ASSERT_EQ(http_percent_decode("a%2Fb%3f%20+", 12, out, sizeof(out)), 6);
    ASSERT(memcmp(out, "a/b? +", 6) == 0);
    ASSERT_EQ(http_percent_decode("%C3%BC", 6, out, sizeof(out)), 2);
    ASSERT_EQ(http_percent_decode("", 0, out, sizeof(out)), 0);
    static const char *const bad[] = {"%", "%4", "a%4", "%zz", "%4g", "%00", "%1F", "%7f", "%0A"};
    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        if (http_percent_decode(bad[i], strlen(bad[i]), out, sizeof(out)) != -1)
            test_fail(__FILE__, __LINE__, "'%s' decoded", bad[i]);
    ASSERT_EQ(http_percent_decode("0123456789abcdef", 16, out, sizeof(out)), 16);
    ASSERT_EQ(http_percent_decode("0123456789abcdefg", 17, out, sizeof(out)), -1); /* no room */
    ASSERT_EQ(http_percent_decode("%41%", 3, out, sizeof(out)), 1); /* reads only len bytes */
}

TEST(http_parse_notes_the_authorization_field)
{
    struct http_request req;
    const char *r = "GET /metrics HTTP/1.1\r\nHost: a\r\nAUTHORIZATION:   Basic YTpi  \r\n\r\n";
    ASSERT_EQ(parse(r, &req), (int)strlen(r));
    ASSERT(req.authorization != NULL);
    ASSERT_EQ(req.authorization_len, 10); /* without the spaces around it */
    ASSERT(memcmp(req.authorization, "Basic YTpi", 10) == 0);
    ASSERT_EQ(parse("GET / HTTP/1.1\r\nHost: a\r\n\r\n", &req), 27);
    ASSERT(req.authorization == NULL);
    ASSERT_EQ(req.authorization_len, 0);
    ASSERT(req.peer == NULL); /* httpd's to set */
    /* an oversized field makes the head oversized: 431 before anything looks at it */
    char *big = mem_alloc(HTTP_HEAD_MAX + 64);
    int n = snprintf(big, 64, "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Basic ");
    memset(big + n, 'A', HTTP_HEAD_MAX + 64 - (size_t)n);
    ASSERT_EQ(http_parse_request(big, HTTP_HEAD_MAX + 64, &req), -431);
    mem_free(big);
}

static int basic(const char *v, struct http_basic *b)
{
    return http_basic_parse(v, strlen(v), b);
}

/* "Basic " + base64(plain[0, len)). */
static char *basic_of(const char *plain, size_t len)
{
    char *out = mem_alloc(6 + B64_ENCODED_LEN(len) + 1);
    memcpy(out, "Basic ", 6);
    b64_encode(plain, len, out + 6, B64_ENCODED_LEN(len) + 1);
    return out;
}

TEST(http_basic_parse_accepts_rfc7617_credentials)
{
    struct http_basic b;
    ASSERT_EQ(basic("Basic YWRtaW46cGFzcw==", &b), 0); /* admin:pass */
    ASSERT_EQ(b.user_len, 5);
    ASSERT(memcmp(b.user, "admin", 5) == 0);
    ASSERT_EQ(b.password_len, 4);
    ASSERT(memcmp(b.password, "pass", 4) == 0);
    ASSERT_EQ(basic("bAsIc    YWRtaW46cGFzcw==", &b), 0); /* the scheme in any case, spaces */
    ASSERT_EQ(b.user_len, 5);
    char *v = basic_of("a:b:c", 5); /* the password may hold ':' */
    ASSERT_EQ(basic(v, &b), 0);
    ASSERT_EQ(b.user_len, 1);
    ASSERT_EQ(b.password_len, 3);
    ASSERT(memcmp(b.password, "b:c", 3) == 0);
    mem_free(v);
    /* the largest parts */
    char plain[HTTP_BASIC_USER_MAX + 1 + HTTP_BASIC_PASSWORD_MAX];
    memset(plain, 'u', HTTP_BASIC_USER_MAX);
    plain[HTTP_BASIC_USER_MAX] = ':';
    memset(plain + HTTP_BASIC_USER_MAX + 1, 'p', HTTP_BASIC_PASSWORD_MAX);
    v = basic_of(plain, sizeof(plain));
    ASSERT_EQ(basic(v, &b), 0);
    ASSERT_EQ(b.user_len, HTTP_BASIC_USER_MAX);
    ASSERT_EQ(b.password_len, HTTP_BASIC_PASSWORD_MAX);
    mem_free(v);
    /* UTF-8 is fine (only control bytes are refused) */
    v = basic_of("j\xc3\xbcrgen:p\xc3\xa4ss", 13);
    ASSERT_EQ(basic(v, &b), 0);
    ASSERT_EQ(b.user_len, 7);
    mem_free(v);
}

TEST(http_basic_parse_refuses_bad_credentials)
{
    struct http_basic b;
    static const char *const bad[] = {
        "",
        "Basic",
        "Basic ",
        "Basic    ",
        "Basicx YWRtaW46cGFzcw==",
        "Bearer YWRtaW46cGFzcw==",
        "Digest username=\"admin\"",
        "Basic\tYWRtaW46cGFzcw==", /* not a space */
        "Basic YWRtaW4=",          /* "admin": no colon */
        "Basic YWRtaW46cGFzcw",    /* unpadded */
        "Basic YWRtaW46cGFzcw===", /* over-padded */
        "Basic YWRt aW46cGFzcw==", /* a space inside */
        "Basic YWRtaW46cGFzcw==x", /* a character after the padding */
        "Basic !!!!",              /* not the alphabet */
        "Basic YWRtaW46cGFzcx==",  /* non-zero padding bits */
        "Basic YWRtaW4tcGFzcw__",  /* the URL-safe alphabet */
        "Basic OnBhc3M=",          /* ":pass": no user */
        "Basic YWRtaW46",          /* "admin:": no password */
        "Basic Og==",              /* ":" */
    };
    for (size_t i = 0; i < ARRAY_LEN(bad); i++)
        if (basic(bad[i], &b) != -1)
            test_fail(__FILE__, __LINE__, "case %zu (%s) accepted", i, bad[i]);
    /* control bytes, NUL included, in either part */
    static const char *const ctl[] = {"a\x01:b", "a:b\x7f", "a:\nb", "a\tb:c"};
    for (size_t i = 0; i < ARRAY_LEN(ctl); i++) {
        char *v = basic_of(ctl[i], strlen(ctl[i]));
        ASSERT_EQ(basic(v, &b), -1);
        mem_free(v);
    }
    char *v = basic_of("a\0b:c", 5);
    ASSERT_EQ(basic(v, &b), -1);
    mem_free(v);
    v = basic_of("ab:c\0", 5);
    ASSERT_EQ(basic(v, &b), -1);
    mem_free(v);
    /* one byte over either limit, and a token longer than any valid one */
    char plain[HTTP_BASIC_USER_MAX + 2 + HTTP_BASIC_PASSWORD_MAX + 2];
    memset(plain, 'u', sizeof(plain));
    plain[HTTP_BASIC_USER_MAX + 1] = ':';
    v = basic_of(plain, HTTP_BASIC_USER_MAX + 3);
    ASSERT_EQ(basic(v, &b), -1);
    mem_free(v);
    plain[HTTP_BASIC_USER_MAX + 1] = 'u';
    plain[1] = ':';
    v = basic_of(plain, 2 + HTTP_BASIC_PASSWORD_MAX + 1);
    ASSERT_EQ(basic(v, &b), -1);
    mem_free(v);
    v = basic_of(plain, sizeof(plain));
    ASSERT_EQ(basic(v, &b), -1);
    mem_free(v);
    /* nothing decoded stays behind after a refusal (it may be a password) */
    v = basic_of("nocolon-secret", 14);
    ASSERT_EQ(basic(v, &b), -1);
    mem_free(v);
    for (size_t i = 0; i < sizeof(b.buf); i++)
        ASSERT_EQ(b.buf[i], 0);
    ASSERT(b.user == NULL && b.password == NULL);
    /* the parser reads only the bytes it is given */
    const char *full = "Basic YWRtaW46cGFzcw==!!!";
    ASSERT_EQ(http_basic_parse(full, 22, &b), 0);
    ASSERT_EQ(b.password_len, 4);
    for (size_t n = 0; n < 22; n++)
        if (n < 6 || (n - 6) % 4 != 0)
            ASSERT_EQ(http_basic_parse(full, n, &b), -1);
}

TEST(http_write_head_is_complete)
{
    struct strbuf s;
    strbuf_init(&s);
    http_write_head(&s, 405, "text/plain", 12, "Allow: GET, HEAD\r\n");
    ASSERT_STREQ(strbuf_str(&s), "HTTP/1.1 405 Method Not Allowed\r\nContent-Type: text/plain\r\n"
                                 "Content-Length: 12\r\nConnection: close\r\n"
                                 "Cache-Control: no-store\r\nAllow: GET, HEAD\r\n\r\n");
    strbuf_destroy(&s);
}

/* ---- the server over loopback ---- */

struct tsrv {
    struct reactor *r;
    struct httpd *h;
    int calls;
    size_t body_bytes; /* size of the /big body */
};

static void tsrv_handle(const struct http_request *req, struct httpd_response *resp, void *data)
{
    struct tsrv *t = data;
    t->calls++;
    if (req->path_len == 4 && memcmp(req->path, "/big", 4) == 0) {
        static char chunk[26 * 1024];
        for (size_t i = 0; i < sizeof(chunk); i++)
            chunk[i] = (char)('a' + i % 26);
        for (size_t n = 0; n < t->body_bytes; n += sizeof(chunk))
            strbuf_append(&resp->body, chunk, MIN(sizeof(chunk), t->body_bytes - n));
        resp->content_type = "text/plain";
        return;
    }
    if (req->path_len == 5 && memcmp(req->path, "/echo", 5) == 0) {
        resp->content_type = "text/plain";
        strbuf_printf(&resp->body, "%.*s %zu:", (int)req->method_len, req->method, req->body_len);
        strbuf_append(&resp->body, req->body, req->body_len);
        return;
    }
    if (!http_method_is(req, "GET") && !http_method_is(req, "HEAD")) {
        resp->status = 405;
        resp->extra_headers = "Allow: GET, HEAD\r\n";
        return;
    }
    if (req->path_len == 5 && memcmp(req->path, "/held", 5) == 0) {
        resp->status = 401;
        resp->delay_ms = 300;
        resp->extra_headers = "WWW-Authenticate: Basic realm=\"t\"\r\n";
        strbuf_printf(&resp->body, "peer=%s\n", req->peer);
        return;
    }
    resp->content_type = "text/plain";
    strbuf_printf(&resp->body, "path=%.*s\n", (int)req->path_len, req->path);
}

static void tsrv_open(struct tsrv *t, int max_conns, int64_t timeout_ms)
{
    memset(t, 0, sizeof(*t));
    t->r = reactor_new();
    ASSERT(t->r);
    struct httpd_limits lim = {.max_connections = max_conns, .timeout_ms = timeout_ms};
    ASSERT_EQ(httpd_open(t->r, "127.0.0.1", 0, &lim, NULL, tsrv_handle, t, &t->h), 0);
    ASSERT(httpd_port(t->h) > 0);
}

static void tsrv_close(struct tsrv *t)
{
    httpd_close(t->h);
    reactor_free(t->r);
}

/* Sends req and returns everything the server sends until it closes (mem_alloc'd, NUL
 * terminated). */
static char *exchange(struct tsrv *t, const char *req, size_t *len_out)
{
    int fd = nt_connect(httpd_port(t->h), 0);
    nt_write_all(t->r, fd, req, strlen(req));
    struct strbuf s;
    strbuf_init(&s);
    int64_t end = time_mono_ms() + 5000;
    for (;;) {
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0) {
            strbuf_append(&s, buf, (size_t)n);
            continue;
        }
        if (n == 0)
            break;
        ASSERT(errno == EAGAIN || errno == EINTR);
        ASSERT(time_mono_ms() < end);
        ASSERT_EQ(reactor_run_once(t->r, 2), 0);
    }
    close(fd);
    strbuf_putc(&s, '\0');
    if (len_out)
        *len_out = s.len - 1;
    return s.p;
}

TEST(httpd_answers_get_head_and_refuses_other_methods)
{
    struct tsrv t;
    tsrv_open(&t, 4, 5000);
    char *r = exchange(&t, "GET /x?q HTTP/1.1\r\nHost: a\r\n\r\n", NULL);
    ASSERT(strncmp(r, "HTTP/1.1 200 OK\r\n", 17) == 0);
    ASSERT(strstr(r, "Content-Length: 8\r\n"));
    ASSERT(strstr(r, "Connection: close\r\n"));
    ASSERT(strstr(r, "\r\n\r\npath=/x\n"));
    mem_free(r);
    r = exchange(&t, "HEAD /x HTTP/1.1\r\nHost: a\r\n\r\n", NULL);
    ASSERT(strstr(r, "Content-Length: 8\r\n"));
    ASSERT(strstr(r, "\r\n\r\n")[4] == '\0'); /* no body */
    mem_free(r);
    r = exchange(&t, "DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n", NULL);
    ASSERT(strncmp(r, "HTTP/1.1 405 ", 13) == 0);
    ASSERT(strstr(r, "Allow: GET, HEAD\r\n"));
    mem_free(r);
    r = exchange(&t, "GET /x HTTP/1.1\r\n\r\n", NULL);
    ASSERT(strncmp(r, "HTTP/1.1 400 ", 13) == 0);
    mem_free(r);
    ASSERT_EQ(t.calls, 3); /* the handler answers DELETE's 405 */
    const struct httpd_stats *st = httpd_get_stats(t.h);
    ASSERT_EQ(st->responses[200], 2);
    ASSERT_EQ(st->responses[405], 1);
    ASSERT_EQ(st->responses[400], 1);
    nt_pump_for(t.r, 20);
    ASSERT_EQ(st->open, 0);
    tsrv_close(&t);
}

TEST(httpd_reads_request_bodies)
{
    struct tsrv t;
    tsrv_open(&t, 4, 5000);
    char *r = exchange(&t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello", NULL);
    ASSERT(strncmp(r, "HTTP/1.1 200 OK\r\n", 17) == 0);
    ASSERT(strstr(r, "\r\n\r\nPOST 5:hello"));
    mem_free(r);
    /* bytes after the announced body (a pipelined request, or junk) are not part of it */
    r = exchange(&t, "PUT /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nokGET /echo HTTP/1.1\r\n\r\n",
                 NULL);
    ASSERT(strstr(r, "\r\n\r\nPUT 2:ok") && !strstr(r, "GET"));
    mem_free(r);
    /* DELETE, GET: no length, no body; POST with a zero length */
    r = exchange(&t, "DELETE /echo HTTP/1.1\r\nHost: a\r\n\r\n", NULL);
    ASSERT(strstr(r, "\r\n\r\nDELETE 0:"));
    mem_free(r);
    r = exchange(&t, "POST /echo HTTP/1.0\r\nContent-Length: 0\r\n\r\n", NULL);
    ASSERT(strstr(r, "\r\n\r\nPOST 0:"));
    mem_free(r);
    /* the largest body, beyond the head buffer's size */
    struct strbuf req;
    strbuf_init(&req);
    strbuf_printf(&req, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n", HTTP_BODY_MAX);
    for (int i = 0; i < HTTP_BODY_MAX; i++)
        strbuf_putc(&req, (char)('a' + i % 26));
    size_t len;
    r = exchange(&t, strbuf_str(&req), &len);
    const char *body = strstr(r, "\r\n\r\nPOST 65536:");
    ASSERT(body);
    body += strlen("\r\n\r\nPOST 65536:");
    ASSERT_EQ(len - (size_t)(body - r), HTTP_BODY_MAX);
    ASSERT(memcmp(body, req.p + req.len - HTTP_BODY_MAX, HTTP_BODY_MAX) == 0);
    mem_free(r);
    strbuf_destroy(&req);
    ASSERT_EQ(t.calls, 5);
    /* refused at the head: no length, chunked, too long (the body never sent) */
    r = exchange(&t, "POST /echo HTTP/1.1\r\nHost: a\r\n\r\n{}", NULL);
    ASSERT(strncmp(r, "HTTP/1.1 411 Length Required\r\n", 30) == 0);
    ASSERT(strstr(r, "Content-Length"));
    mem_free(r);
    r = exchange(&t, "POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                 NULL);
    ASSERT(strncmp(r, "HTTP/1.1 411 ", 13) == 0);
    ASSERT(strstr(r, "chunked"));
    mem_free(r);
    r = exchange(&t, "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 65537\r\n\r\n", NULL);
    ASSERT(strncmp(r, "HTTP/1.1 413 ", 13) == 0);
    mem_free(r);
    ASSERT_EQ(t.calls, 5);
    nt_pump_for(t.r, 20);
    ASSERT_EQ(httpd_get_stats(t.h)->open, 0);
    tsrv_close(&t);
}

TEST(httpd_takes_a_body_in_pieces_and_times_out_an_unfinished_one)
{
    struct tsrv t;
    tsrv_open(&t, 4, 300);
    /* byte by byte: the same answer */
    int fd = nt_connect(httpd_port(t.h), 0);
    static const char req[] = "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nabcd";
    for (size_t i = 0; i < sizeof(req) - 1; i++) {
        nt_write_all(t.r, fd, req + i, 1);
        nt_pump_for(t.r, 1);
    }
    char buf[256];
    nt_read_exact(t.r, fd, buf, 17, 3000);
    ASSERT(memcmp(buf, "HTTP/1.1 200 OK\r\n", 17) == 0);
    size_t n = nt_wait_closed(t.r, fd, 3000);
    ASSERT_CMP(n, >, 0);
    close(fd);
    ASSERT_EQ(t.calls, 1);
    /* a body that stops short: 408 at the deadline, the handler never called */
    fd = nt_connect(httpd_port(t.h), 0);
    static const char part[] = "POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc";
    nt_write_all(t.r, fd, part, sizeof(part) - 1);
    nt_read_exact(t.r, fd, buf, 12, 3000);
    ASSERT(memcmp(buf, "HTTP/1.1 408", 12) == 0);
    nt_wait_closed(t.r, fd, 3000);
    close(fd);
    /* a client that goes away mid-body is freed without an answer */
    fd = nt_connect(httpd_port(t.h), 0);
    nt_write_all(t.r, fd, part, sizeof(part) - 1);
    NT_PUMP_UNTIL(t.r, httpd_get_stats(t.h)->open == 1, 2000);
    close(fd);
    NT_PUMP_UNTIL(t.r, httpd_get_stats(t.h)->open == 0, 2000);
    ASSERT_EQ(t.calls, 1);
    ASSERT_EQ(httpd_get_stats(t.h)->timeouts, 1);
    tsrv_close(&t);
}

TEST(httpd_response_survives_unread_request_bytes)
{
    /* a client that sends more than the head (pipelined junk) must still get the whole
     * response: the server lingers instead of resetting the connection */
    struct tsrv t;
    tsrv_open(&t, 4, 5000);
    t.body_bytes = 300000;
    struct strbuf req;
    strbuf_init(&req);
    strbuf_puts(&req, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n");
    for (int i = 0; i < 2000; i++)
        strbuf_puts(&req, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n");
    size_t len;
    char *r = exchange(&t, req.p, &len);
    const char *body = strstr(r, "\r\n\r\n");
    ASSERT(body);
    ASSERT_EQ(len - (size_t)(body + 4 - r), 300000);
    ASSERT_EQ(t.calls, 1);
    mem_free(r);
    strbuf_destroy(&req);
    tsrv_close(&t);
}

TEST(httpd_holds_a_response_the_handler_delays)
{
    struct tsrv t;
    tsrv_open(&t, 4, 5000);
    int64_t t0 = time_mono_ms();
    char *r = exchange(&t, "GET /held HTTP/1.1\r\nHost: a\r\n\r\n", NULL);
    ASSERT_CMP(time_mono_ms() - t0, >=, 290);
    ASSERT(strncmp(r, "HTTP/1.1 401 Unauthorized\r\n", 26) == 0);
    ASSERT(strstr(r, "\r\nWWW-Authenticate: Basic realm=\"t\"\r\n"));
    ASSERT(strstr(r, "\r\n\r\npeer=127.0.0.1\n"));
    mem_free(r);
    /* a client that goes away while its answer is held is freed, and others are served */
    int fd = nt_connect(httpd_port(t.h), 0);
    static const char held[] = "GET /held HTTP/1.1\r\nHost: a\r\n\r\n";
    nt_write_all(t.r, fd, held, sizeof(held) - 1);
    NT_PUMP_UNTIL(t.r, httpd_get_stats(t.h)->responses[401] == 2, 2000);
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    close(fd); /* a reset */
    NT_PUMP_UNTIL(t.r, httpd_get_stats(t.h)->open == 0, 2000);
    r = exchange(&t, "GET /x HTTP/1.1\r\nHost: a\r\n\r\n", NULL);
    ASSERT(strncmp(r, "HTTP/1.1 200 OK\r\n", 17) == 0);
    mem_free(r);
    tsrv_close(&t);
}

TEST(httpd_times_out_slow_senders_with_408)
{
    struct tsrv t;
    tsrv_open(&t, 4, 200);
    int fd = nt_connect(httpd_port(t.h), 0);
    nt_write_all(t.r, fd, "GET / HTTP/1.1\r\nHost:", 21);
    int64_t t0 = time_mono_ms();
    char buf[256];
    nt_read_exact(t.r, fd, buf, 12, 3000);
    ASSERT(memcmp(buf, "HTTP/1.1 408", 12) == 0);
    ASSERT_CMP(time_mono_ms() - t0, >=, 150);
    nt_wait_closed(t.r, fd, 3000);
    close(fd);
    ASSERT_EQ(httpd_get_stats(t.h)->timeouts, 1);
    ASSERT_EQ(t.calls, 0);
    tsrv_close(&t);
}

TEST(httpd_drops_slow_readers)
{
    struct tsrv t;
    tsrv_open(&t, 4, 300);
    t.body_bytes = 8 << 20; /* far more than the socket buffers hold */
    int fd = nt_connect(httpd_port(t.h), 4096);
    nt_write_all(t.r, fd, "GET /big HTTP/1.1\r\nHost: a\r\n\r\n", 30);
    /* never read: the write deadline passes */
    NT_PUMP_UNTIL(t.r, httpd_get_stats(t.h)->timeouts == 1, 5000);
    ASSERT_EQ(httpd_get_stats(t.h)->open, 0);
    close(fd);
    tsrv_close(&t);
}

TEST(httpd_caps_connections_with_503)
{
    struct tsrv t;
    tsrv_open(&t, 2, 5000);
    int a = nt_connect(httpd_port(t.h), 0);
    int b = nt_connect(httpd_port(t.h), 0);
    NT_PUMP_UNTIL(t.r, httpd_get_stats(t.h)->open == 2, 2000);
    int c = nt_connect(httpd_port(t.h), 0);
    char buf[64];
    nt_read_exact(t.r, c, buf, 12, 3000);
    ASSERT(memcmp(buf, "HTTP/1.1 503", 12) == 0);
    nt_wait_closed(t.r, c, 3000);
    ASSERT_EQ(httpd_get_stats(t.h)->refused, 1);
    /* the open ones still work */
    nt_write_all(t.r, a, "GET /a HTTP/1.0\r\n\r\n", 19);
    nt_read_exact(t.r, a, buf, 15, 3000);
    ASSERT(memcmp(buf, "HTTP/1.1 200 OK", 15) == 0);
    close(a);
    close(b);
    close(c);
    tsrv_close(&t); /* closes b's connection, still waiting for a head */
}
