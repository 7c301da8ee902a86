/* `streampulse cluster status`: asks brokers' admin listeners for GET /v1/cluster and prints the
 * cluster's brokers, its controller and a table of every partition the answering nodes replicate.
 *
 * Transport: one HTTP/1.0 GET per node over a plain blocking socket with send/receive timeouts
 * (--timeout); the body is read until the server closes. With --admin-cafile the GET goes over
 * TLS (OpenSSL's client, TLS 1.2 at least): the server's certificate must chain to that CA file
 * and name the host given (its IP address or DNS name), else the node counts as not answering;
 * there is no way to turn the check off. With --admin-user the request carries HTTP Basic
 * credentials (an admin listener with HTTPS asks for a super user's), over TLS only: the
 * password comes from the first line of stdin (--admin-password-stdin) or
 * $STREAMPULSE_ADMIN_PASSWORD, never the command line, and is wiped once sent. The answer is
 * untrusted: a small JSON reader (below) builds a tree with bounded depth and size and every
 * field is looked up with its type checked; anything missing prints as "-".
 *
 * Merging: each node lists only its own replicas, and only a partition's leader knows its
 * followers' progress. With several --admin addresses every node is asked; for each
 * (topic, partition) the entry of the node that leads it wins, else the first one seen. Brokers
 * and controller come from the first node that answered. A node that does not answer is
 * reported on stderr; the command fails only when none answers. */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "base/mem.h"
#include "base/strbuf.h"
#include "cli/common.h"
#include "cli/reassign.h"
#include "cli/voters.h"
#include "security/base64.h"
#include "security/scram.h"

#define CLUSTER_DEFAULT_ADMIN "127.0.0.1:9644"
#define JSON_MAX_DEPTH 32
#define BODY_MAX (16u << 20)

/* ---- a small JSON reader ---- */

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
    enum jtype type;
    bool b;
    double num;
    char *str;          /* J_STR, owned */
    struct jval *items; /* J_ARR / J_OBJ values, owned */
    char **keys;        /* J_OBJ keys, owned */
    size_t n;
};

struct jreader {
    const char *p;
    const char *end;
};

static void jfree(struct jval *v)
{
    for (size_t i = 0; i < v->n; i++) {
        jfree(&v->items[i]);
        if (v->keys)
            mem_free(v->keys[i]);
    }
    mem_free(v->items);
    mem_free(v->keys);
    mem_free(v->str);
    memset(v, 0, sizeof(*v));
}

static void jskip(struct jreader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
        r->p++;
}

static int jlit(struct jreader *r, const char *lit)
{
    size_t n = strlen(lit);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, lit, n) != 0)
        return -1;
    r->p += n;
    return 0;
}

/* A string after its opening quote; \u escapes outside ASCII become '?'. */
static int jstring(struct jreader *r, char **out)
{
    struct strbuf s;
    strbuf_init(&s);
    while (r->p < r->end && *r->p != '"') {
        char c = *r->p++;
        if (c == '\\') {
            if (r->p >= r->end)
                break;
            char e = *r->p++;
            switch (e) {
            case 'n':
                c = '\n';
                break;
            case 't':
                c = '\t';
                break;
            case 'r':
                c = '\r';
                break;
            case 'b':
                c = '\b';
                break;
            case 'f':
                c = '\f';
                break;
            case 'u': {
                if (r->end - r->p < 4)
                    goto bad;
                char hex[5] = {r->p[0], r->p[1], r->p[2], r->p[3], 0};
                char *endp;
                long cp = strtol(hex, &endp, 16);
                if (*endp != 0)
                    goto bad;
                r->p += 4;
                c = cp < 0x80 ? (char)cp : '?';
                break;
            }
            default:
                c = e;
                break;
            }
        }
        strbuf_putc(&s, c);
    }
    if (r->p >= r->end)
        goto bad;
    r->p++;
    *out = mem_calloc(1, s.len + 1);
    memcpy(*out, strbuf_str(&s), s.len);
    strbuf_destroy(&s);
    return 0;
bad:
    strbuf_destroy(&s);
    return -1;
}

static int jparse(struct jreader *r, struct jval *v, int depth);

static int jcontainer(struct jreader *r, struct jval *v, int depth, bool obj)
{
    size_t cap = 0;
    jskip(r);
    if (r->p < r->end && *r->p == (obj ? '}' : ']')) {
        r->p++;
        return 0;
    }
    for (;;) {
        if (v->n == cap) {
            cap = cap ? 2 * cap : 8;
            v->items = mem_realloc(v->items, cap * sizeof(*v->items));
            if (obj)
                v->keys = mem_realloc(v->keys, cap * sizeof(*v->keys));
        }
        char *key = NULL;
        jskip(r);
        if (obj) {
            if (r->p >= r->end || *r->p != '"')
                return -1;
            r->p++;
            if (jstring(r, &key) != 0)
                return -1;
            jskip(r);
            if (r->p >= r->end || *r->p != ':') {
                mem_free(key);
                return -1;
            }
            r->p++;
        }
        memset(&v->items[v->n], 0, sizeof(v->items[v->n]));
        if (obj)
            v->keys[v->n] = key;
        v->n++; /* counted before parsing so jfree releases a half-parsed item */
        if (jparse(r, &v->items[v->n - 1], depth + 1) != 0)
            return -1;
        jskip(r);
        if (r->p >= r->end)
            return -1;
        char c = *r->p++;
        if (c == ',')
            continue;
        return c == (obj ? '}' : ']') ? 0 : -1;
    }
}

static int jparse(struct jreader *r, struct jval *v, int depth)
{
    if (depth > JSON_MAX_DEPTH)
        return -1;
    jskip(r);
    if (r->p >= r->end)
        return -1;
    char c = *r->p;
    if (c == '{' || c == '[') {
        r->p++;
        v->type = c == '{' ? J_OBJ : J_ARR;
        return jcontainer(r, v, depth, c == '{');
    }
    if (c == '"') {
        r->p++;
        v->type = J_STR;
        return jstring(r, &v->str);
    }
    if (c == 't' || c == 'f') {
        v->type = J_BOOL;
        v->b = c == 't';
        return jlit(r, v->b ? "true" : "false");
    }
    if (c == 'n') {
        v->type = J_NULL;
        return jlit(r, "null");
    }
    char buf[64];
    size_t n = 0;
    while (r->p < r->end && n < sizeof(buf) - 1 && *r->p && strchr("+-0123456789.eE", *r->p))
        buf[n++] = *r->p++;
    buf[n] = 0;
    char *endp;
    v->type = J_NUM;
    v->num = strtod(buf, &endp);
    return n > 0 && *endp == 0 ? 0 : -1;
}

static const struct jval *jget(const struct jval *o, const char *key, enum jtype type)
{
    if (!o || o->type != J_OBJ)
        return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->keys[i], key) == 0)
            return o->items[i].type == type ? &o->items[i] : NULL;
    return NULL;
}

/* A number as an integer; out of range (or NaN) gives def: the bytes are untrusted. */
static long long jll(const struct jval *v, long long def)
{
    if (!v || v->type != J_NUM || !(v->num >= -9e18 && v->num <= 9e18))
        return def;
    return (long long)v->num;
}

/* The integer member key, or def when absent or not a number. */
static long long jint(const struct jval *o, const char *key, long long def)
{
    return jll(jget(o, key, J_NUM), def);
}

static const char *jstr(const struct jval *o, const char *key, const char *def)
{
    const struct jval *v = jget(o, key, J_STR);
    return v ? v->str : def;
}

/* ---- HTTP ---- */

/* How to reach the admin listeners: plain HTTP, or HTTPS verified against a CA file, with or
 * without Basic credentials. */
struct admin_client {
    SSL_CTX *ctx; /* HTTPS: verifies against --admin-cafile; NULL: plain */
    char *auth;   /* "Basic base64(user:password)", or NULL (wiped, freed) */
};

/* OpenSSL's first queued reason (and the verification result, if that failed), into err. */
static void tls_reason(SSL *ssl, const char *addr, char *err, size_t errcap)
{
    unsigned long e = ERR_peek_error();
    long v = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
    if (v != X509_V_OK)
        snprintf(err, errcap, "TLS with %s failed: the server's certificate: %s", addr,
                 X509_verify_cert_error_string(v));
    else if (e)
        snprintf(err, errcap, "TLS with %s failed: %s (an admin listener without HTTPS?)", addr,
                 ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "OpenSSL error");
    else
        snprintf(err, errcap, "TLS with %s failed: %s", addr,
                 errno == EAGAIN ? "timed out"
                 : errno         ? strerror(errno)
                                 : "connection closed");
    ERR_clear_error();
}

/* The host part of addr ("host:port", "[v6]:port") into out. */
static void addr_host(const char *addr, char *out, size_t cap)
{
    const char *colon = strrchr(addr, ':');
    size_t n = colon ? (size_t)(colon - addr) : strlen(addr);
    if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
        addr++;
        n -= 2;
    }
    if (n >= cap)
        n = cap - 1;
    memcpy(out, addr, n);
    out[n] = '\0';
}

/* A TLS client over the connected fd, checking the server's certificate for addr's host.
 * Returns the SSL, or NULL with the reason in err. */
static SSL *tls_connect(const struct admin_client *ac, int fd, const char *addr, char *err,
                        size_t errcap)
{
    char host[256];
    addr_host(addr, host, sizeof(host));
    SSL *ssl = SSL_new(ac->ctx);
    if (!ssl || SSL_set_fd(ssl, fd) != 1) {
        tls_reason(NULL, addr, err, errcap);
        SSL_free(ssl);
        return NULL;
    }
    unsigned char ip[16];
    bool is_ip = inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1;
    int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
                   : SSL_set1_host(ssl, host) && SSL_set_tlsext_host_name(ssl, host);
    errno = 0;
    if (ok != 1 || SSL_connect(ssl) != 1) {
        tls_reason(ssl, addr, err, errcap);
        SSL_free(ssl);
        return NULL;
    }
    return ssl;
}

static ssize_t conn_write(SSL *ssl, int fd, const char *p, size_t n)
{
    if (!ssl)
        return write(fd, p, n);
    size_t done = 0;
    return SSL_write_ex(ssl, p, n, &done) == 1 ? (ssize_t)done : -1;
}

/* Reads into buf: > 0 bytes, 0 at the end (the server closed), -1 on error (errno). */
static ssize_t conn_read(SSL *ssl, int fd, char *buf, size_t cap)
{
    if (!ssl)
        return read(fd, buf, cap);
    size_t n = 0;
    errno = 0;
    if (SSL_read_ex(ssl, buf, cap, &n) == 1)
        return (ssize_t)n;
    int e = SSL_get_error(ssl, 0);
    unsigned long q = ERR_peek_error();
    ERR_clear_error();
    if (e == SSL_ERROR_ZERO_RETURN ||
        (e == SSL_ERROR_SSL && ERR_GET_REASON(q) == SSL_R_UNEXPECTED_EOF_WHILE_READING))
        return 0; /* close_notify, or a close without it (the body has a Content-Length) */
    if (errno == 0)
        errno = e == SSL_ERROR_WANT_READ ? EAGAIN : EPROTO;
    return -1;
}

/* What a status other than 200 means to the user. */
static const char *status_hint(int status, const struct admin_client *ac)
{
    if (status == 401)
        return ac->auth ? " (the user name or password is wrong)"
                        : " (this admin listener asks for credentials: --admin-user NAME with "
                          "--admin-password-stdin or $STREAMPULSE_ADMIN_PASSWORD)";
    if (status == 403)
        return " (the user is not in the broker's super.users)";
    return " (a broker too old?)";
}

/* GET /v1/cluster from addr ("host:port"); the body in *out. Returns 0, or -1 with the reason
 * in err. */
static int http_get(const char *addr, int timeout_ms, const struct admin_client *ac,
                    struct strbuf *out, char *err, size_t errcap)
{
    int fd = cli_tcp_connect(addr, timeout_ms, "the admin listener at ", err, errcap);
    if (fd < 0)
        return -1;
    SSL *ssl = NULL;
    if (ac->ctx && !(ssl = tls_connect(ac, fd, addr, err, errcap))) {
        close(fd);
        return -1;
    }
    struct strbuf req;
    strbuf_init(&req);
    strbuf_printf(&req, "GET /v1/cluster HTTP/1.0\r\nHost: %s\r\n", addr);
    if (ac->auth)
        strbuf_printf(&req, "Authorization: %s\r\n", ac->auth);
    strbuf_puts(&req, "\r\n");
    ssize_t wn = conn_write(ssl, fd, req.p, req.len);
    bool sent = wn == (ssize_t)req.len;
    OPENSSL_cleanse(req.p, req.len);
    strbuf_destroy(&req);
    if (!sent) {
        snprintf(err, errcap, "sending to %s failed: %s", addr, strerror(errno));
        SSL_free(ssl);
        close(fd);
        return -1;
    }
    struct strbuf resp;
    strbuf_init(&resp);
    char buf[8192];
    int rc = 0;
    for (;;) {
        ssize_t n = conn_read(ssl, fd, buf, sizeof(buf));
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR && !cli_interrupted)
                continue;
            snprintf(err, errcap, "reading from %s failed: %s", addr,
                     errno == EAGAIN ? "timed out" : strerror(errno));
            rc = -1;
            break;
        }
        if (resp.len + (size_t)n > BODY_MAX) {
            snprintf(err, errcap, "the answer of %s is too large", addr);
            rc = -1;
            break;
        }
        strbuf_append(&resp, buf, (size_t)n);
    }
    SSL_free(ssl);
    close(fd);
    if (rc != 0) {
        strbuf_destroy(&resp);
        return -1;
    }
    const char *d = strbuf_str(&resp);
    int status = 0;
    if (resp.len < 12 || sscanf(d, "HTTP/%*d.%*d %d", &status) != 1) {
        snprintf(err, errcap, "%s did not answer HTTP%s", addr,
                 ac->ctx ? "" : " (an admin listener with HTTPS? give --admin-cafile)");
        strbuf_destroy(&resp);
        return -1;
    }
    const char *body = memmem(d, resp.len, "\r\n\r\n", 4);
    if (status != 200 || !body) {
        snprintf(err, errcap, "%s answered HTTP %d to GET /v1/cluster%s", addr, status,
                 status_hint(status, ac));
        strbuf_destroy(&resp);
        return -1;
    }
    body += 4;
    strbuf_append(out, body, resp.len - (size_t)(body - d));
    strbuf_destroy(&resp);
    return 0;
}

/* The TLS client context: TLS 1.2 at least, the server verified against cafile. Returns NULL
 * with the reason printed. */
static SSL_CTX *client_ctx(const char *cafile)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
        fprintf(stderr, "cluster status: cannot set up TLS\n");
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (SSL_CTX_load_verify_locations(ctx, cafile, NULL) != 1) {
        unsigned long e = ERR_peek_error();
        fprintf(stderr, "cluster status: --admin-cafile %s: %s\n", cafile,
                ERR_reason_error_string(e) ? ERR_reason_error_string(e) : "cannot read it");
        ERR_clear_error();
        SSL_CTX_free(ctx);
        return NULL;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

/* "Basic base64(user:password)" (mem_alloc'd; the caller wipes and frees it). */
static char *basic_auth(const char *user, const char *pw, size_t pw_len)
{
    size_t ul = strlen(user), n = ul + 1 + pw_len;
    char *plain = mem_alloc(n);
    memcpy(plain, user, ul);
    plain[ul] = ':';
    memcpy(plain + ul + 1, pw, pw_len);
    size_t cap = 6 + B64_ENCODED_LEN(n) + 1;
    char *out = mem_alloc(cap);
    memcpy(out, "Basic ", 6);
    b64_encode(plain, n, out + 6, cap - 6);
    OPENSSL_cleanse(plain, n);
    mem_free(plain);
    return out;
}


/* Sets up ac from the options. Returns 0, or CLI_EXIT_USAGE / CLI_EXIT_FAIL with the reason
 * printed. */
static int admin_client_init(struct admin_client *ac, const char *cafile, const char *user,
                             bool pw_stdin)
{
    memset(ac, 0, sizeof(*ac));
    if (user && !cafile) {
        fprintf(stderr, "cluster status: --admin-user needs --admin-cafile: credentials are "
                        "sent over HTTPS only\n");
        return CLI_EXIT_USAGE;
    }
    if (pw_stdin && !user) {
        fprintf(stderr, "cluster status: --admin-password-stdin needs --admin-user\n");
        return CLI_EXIT_USAGE;
    }
    if (user && (!*user || strchr(user, ':') || strlen(user) > SCRAM_USER_MAX)) {
        fprintf(stderr, "cluster status: --admin-user: a name of 1 to %d bytes without ':'\n",
                SCRAM_USER_MAX);
        return CLI_EXIT_USAGE;
    }
    if (user) {
        char pw[SCRAM_PASSWORD_MAX + 2];
        ssize_t pl = -1;
        const char *env = getenv("STREAMPULSE_ADMIN_PASSWORD");
        if (pw_stdin) {
            pl = cli_read_line(pw, sizeof(pw));
        } else if (env && *env && strlen(env) < sizeof(pw)) {
            pl = (ssize_t)strlen(env);
            memcpy(pw, env, (size_t)pl);
        }
        if (pl <= 0 || pl > SCRAM_PASSWORD_MAX) {
            OPENSSL_cleanse(pw, sizeof(pw));
            fprintf(stderr, "cluster status: %s\n",
                    pl > SCRAM_PASSWORD_MAX ? "the password is longer than 1024 bytes"
                    : pw_stdin              ? "no password on standard input"
                               : "--admin-user needs a password: --admin-password-stdin (its "
                                 "first line) or $STREAMPULSE_ADMIN_PASSWORD");
            return CLI_EXIT_USAGE;
        }
        ac->auth = basic_auth(user, pw, (size_t)pl);
        OPENSSL_cleanse(pw, sizeof(pw));
    }
    if (cafile && !(ac->ctx = client_ctx(cafile))) {
        if (ac->auth)
            OPENSSL_cleanse(ac->auth, strlen(ac->auth));
        mem_free(ac->auth);
        ac->auth = NULL;
        return CLI_EXIT_FAIL;
    }
    return 0;
}

static void admin_client_free(struct admin_client *ac)
{
    if (ac->auth)
        OPENSSL_cleanse(ac->auth, strlen(ac->auth));
    mem_free(ac->auth);
    SSL_CTX_free(ac->ctx);
    memset(ac, 0, sizeof(*ac));
}

/* ---- the command ---- */

struct node_answer {
    const char *addr;
    struct jval root;
    bool ok;
};

/* Leader entries first, then the first seen: index into parts of the chosen one, per key. */
struct pick {
    const struct jval *part;
    bool leader;
};

static void print_replicas(const struct jval *p)
{
    const struct jval *r = jget(p, "replicas", J_ARR);
    char line[128] = "";
    size_t used = 0;
    for (size_t i = 0; r && i < r->n && used + 24 < sizeof(line); i++) /* 24: ",%lld" */
        if (r->items[i].type == J_NUM)
            used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%lld", i ? "," : "",
                                     jll(&r->items[i], -1));
    printf("  %-10s", used ? line : "-");
}

static void print_lags(const struct jval *p, bool leader)
{
    const struct jval *f = jget(p, "followers", J_ARR);
    if (!leader || !f) {
        printf("  (no leader answered)");
        return;
    }
    printf(" ");
    for (size_t i = 0; i < f->n; i++) {
        const struct jval *lag = jget(&f->items[i], "lag", J_NUM);
        long long id = jint(&f->items[i], "id", -1);
        if (lag)
            printf(" %lld:%lld", id, jll(lag, -1));
        else
            printf(" %lld:?", id);
    }
}

static int pick_cmp(const void *x, const void *y)
{
    const struct pick *a = x, *b = y;
    int c = strcmp(jstr(a->part, "topic", ""), jstr(b->part, "topic", ""));
    if (c != 0)
        return c;
    long long pa = jint(a->part, "partition", -1), pb = jint(b->part, "partition", -1);
    return (pa > pb) - (pa < pb);
}

static int status_print(struct node_answer *ans, size_t n)
{
    const struct jval *first = NULL;
    for (size_t i = 0; i < n && !first; i++)
        if (ans[i].ok)
            first = &ans[i].root;
    printf("cluster %s\n", jstr(first, "cluster_id", "-"));
    const struct jval *ctl = jget(first, "controller", J_OBJ);
    long long cl = jint(ctl, "leader", -1);
    const struct jval *ct = jget(ctl, "term", J_NUM);
    char term[32] = "unknown";
    if (ct)
        snprintf(term, sizeof(term), "%lld", jll(ct, -1));
    char voters[128] = "";
    const struct jval *vs = jget(ctl, "voters", J_ARR);
    for (size_t i = 0, at = 0; vs && i < vs->n && at < sizeof(voters) - 24; i++)
        at += (size_t)snprintf(voters + at, sizeof(voters) - at, "%s%lld", i ? "," : ", voters ",
                               jll(&vs->items[i], -1));
    if (cl >= 0)
        printf("controller: leader %lld, term %s%s\n", cl, term, voters);
    else
        printf("controller: no leader known, term %s%s\n", term, voters);
    printf("\nbrokers:\n  %-4s %-22s %-22s %s\n", "ID", "ADDRESS", "CLUSTER ADDRESS", "STATE");
    const struct jval *brs = jget(first, "brokers", J_ARR);
    for (size_t i = 0; brs && i < brs->n; i++) {
        const struct jval *br = &brs->items[i];
        char addr[300];
        snprintf(addr, sizeof(addr), "%s:%lld", jstr(br, "host", "?"), jint(br, "port", -1));
        const struct jval *fenced = jget(br, "fenced", J_BOOL);
        printf("  %-4lld %-22s %-22s %s\n", jint(br, "id", -1), addr,
               jstr(br, "cluster_address", "-"), fenced && fenced->b ? "fenced" : "live");
    }

    size_t cap = 0, np = 0;
    for (size_t i = 0; i < n; i++) {
        const struct jval *ps = ans[i].ok ? jget(&ans[i].root, "partitions", J_ARR) : NULL;
        cap += ps ? ps->n : 0;
    }
    struct pick *picks = mem_calloc(cap ? cap : 1, sizeof(*picks));
    for (size_t i = 0; i < n; i++) {
        const struct jval *ps = ans[i].ok ? jget(&ans[i].root, "partitions", J_ARR) : NULL;
        for (size_t k = 0; ps && k < ps->n; k++) {
            const struct jval *p = &ps->items[k];
            bool lead = strcmp(jstr(p, "role", ""), "leader") == 0;
            size_t j = 0;
            for (; j < np; j++)
                if (pick_cmp(&picks[j], &(struct pick){p, lead}) == 0)
                    break;
            if (j == np)
                picks[np++] = (struct pick){p, lead};
            else if (lead && !picks[j].leader)
                picks[j] = (struct pick){p, lead};
        }
    }
    qsort(picks, np, sizeof(*picks), pick_cmp);
    printf("\npartitions:\n  %-24s %4s %6s %6s  %-10s %10s  %s\n", "TOPIC", "PART", "LEADER",
           "TERM", "REPLICAS", "HW", "FOLLOWER LAG (id:records)");
    for (size_t i = 0; i < np; i++) {
        const struct jval *p = picks[i].part;
        long long leader = jint(p, "leader", -1);
        char lbuf[24] = "none";
        if (leader >= 0)
            snprintf(lbuf, sizeof(lbuf), "%lld", leader);
        printf("  %-24s %4lld %6s %6lld", jstr(p, "topic", "?"), jint(p, "partition", -1), lbuf,
               jint(p, "term", -1));
        print_replicas(p);
        printf(" %10lld", jint(p, "high_watermark", -1));
        print_lags(p, picks[i].leader);
        printf("\n");
    }
    if (np == 0)
        printf("  (none)\n");
    mem_free(picks);
    return CLI_EXIT_OK;
}

static const char status_help[] =
    "Usage: streampulse cluster status [--admin HOST:PORT[,...]] [--timeout SECS]\n"
    "           [--admin-cafile PEM [--admin-user NAME [--admin-password-stdin]]]\n"
    "\n"
    "Asks brokers' HTTP admin listeners (GET /v1/cluster) and prints the registered brokers,\n"
    "the controller's leader and term, and every partition the answering brokers replicate:\n"
    "its Raft leader, term, replicas, high watermark and each follower's lag (records it\n"
    "lacks), as the partition's leader reports it. Give every node's admin address to see\n"
    "every partition with its lag: each node knows only its own replicas, and only a leader\n"
    "knows its followers' progress.\n"
    "\n"
    "Options:\n"
    "      --admin HOST:PORT[,...]  admin listeners to ask (default $STREAMPULSE_ADMIN, else\n"
    "                               " CLUSTER_DEFAULT_ADMIN ")\n"
    "      --timeout SECS           per-node connect/read timeout (default 10)\n"
    "      --admin-cafile PEM       HTTPS: the CA certificates the admin listeners'\n"
    "                               certificates must chain to (they must also name the\n"
    "                               HOST given: its IP address or DNS name)\n"
    "      --admin-user NAME        HTTP Basic credentials of a super user (HTTPS only); the\n"
    "                               password from $STREAMPULSE_ADMIN_PASSWORD, or\n"
    "      --admin-password-stdin   from the first line of standard input\n"
    "  -h, --help                   this help\n";

static int cluster_status(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"admin", required_argument, NULL, 'a'},
        {"timeout", required_argument, NULL, 't'},
        {"admin-cafile", required_argument, NULL, 'C'},
        {"admin-user", required_argument, NULL, 'U'},
        {"admin-password-stdin", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *cafile = NULL, *user = NULL;
    bool pw_stdin = false;
    const char *admin = getenv("STREAMPULSE_ADMIN");
    if (!admin || !*admin)
        admin = CLUSTER_DEFAULT_ADMIN;
    int timeout_ms = CLI_DEFAULT_TIMEOUT_MS;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'a':
            admin = optarg;
            break;
        case 'C':
            cafile = optarg;
            break;
        case 'U':
            user = optarg;
            break;
        case 'P':
            pw_stdin = true;
            break;
        case 't': {
            char *end;
            double s = strtod(optarg, &end);
            if (*end != 0 || !(s > 0) || s > 3600) {
                fprintf(stderr, "cluster status: --timeout wants seconds in (0, 3600], got '%s'\n",
                        optarg);
                return CLI_EXIT_USAGE;
            }
            timeout_ms = (int)(s * 1000);
            if (timeout_ms < 1)
                timeout_ms = 1;
            break;
        }
        case 'h':
            fputs(status_help, stdout);
            return CLI_EXIT_OK;
        default:
            fprintf(stderr, "cluster status: unknown option or missing value: '%s'\n\n%s",
                    argv[optind - 1], status_help);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "cluster status: unexpected argument '%s'\n", argv[optind]);
        return CLI_EXIT_USAGE;
    }
    struct admin_client ac;
    int arc = admin_client_init(&ac, cafile, user, pw_stdin);
    if (arc != 0)
        return arc;
    char *list = mem_calloc(1, strlen(admin) + 1);
    memcpy(list, admin, strlen(admin));
    size_t cap = 1;
    for (const char *s = list; *s; s++)
        cap += *s == ',';
    struct node_answer *ans = mem_calloc(cap, sizeof(*ans));
    size_t n = 0, answered = 0;
    char *save = NULL;
    for (char *a = strtok_r(list, ",", &save); a && n < cap; a = strtok_r(NULL, ",", &save)) {
        if (cli_interrupted)
            break;
        ans[n].addr = a;
        struct strbuf body;
        strbuf_init(&body);
        char err[512];
        if (http_get(a, timeout_ms, &ac, &body, err, sizeof(err)) != 0) {
            fprintf(stderr, "cluster status: %s\n", err);
        } else {
            struct jreader r = {strbuf_str(&body), strbuf_str(&body) + body.len};
            if (jparse(&r, &ans[n].root, 0) != 0 || ans[n].root.type != J_OBJ) {
                jfree(&ans[n].root);
                fprintf(stderr, "cluster status: %s answered something that is not a JSON object\n",
                        a);
            } else {
                ans[n].ok = true;
                answered++;
            }
        }
        strbuf_destroy(&body);
        n++;
    }
    int rc;
    if (cli_interrupted)
        rc = CLI_EXIT_INTERRUPTED;
    else if (n == 0) {
        fprintf(stderr, "cluster status: --admin names no address\n");
        rc = CLI_EXIT_USAGE;
    } else if (answered == 0) {
        fprintf(stderr, "cluster status: no admin listener answered\n");
        rc = CLI_EXIT_FAIL;
    } else {
        rc = status_print(ans, n);
    }
    for (size_t i = 0; i < n; i++)
        jfree(&ans[i].root);
    mem_free(ans);
    mem_free(list);
    admin_client_free(&ac);
    return rc;
}

static const char cluster_help[] =
    "Usage: streampulse cluster status|voters|decommission [OPTIONS]\n"
    "\n"
    "Sub-commands:\n"
    "  status                 brokers, controller and partitions' replication\n"
    "  voters add|remove NODE change the metadata quorum's voters\n"
    "  decommission NODE      move every replica off a broker and out of the voters\n"
    "\n"
    "Run 'streampulse cluster SUB-COMMAND --help' for its options.\n";

int cli_cluster(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        fputs(cluster_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "status") == 0)
        return cluster_status(argc - 1, argv + 1);
    if (strcmp(argv[1], "voters") == 0)
        return cli_cluster_voters(argc - 1, argv + 1);
    if (strcmp(argv[1], "decommission") == 0)
        return cli_cluster_decommission(argc - 1, argv + 1);
    fprintf(stderr, "cluster: unknown sub-command '%s'\n\n%s", argv[1], cluster_help);
    return CLI_EXIT_USAGE;
}
