/* The admin listener's client for the CLI (see admin_client.h). Stateless between calls: each
 * call connects, (handshakes,) sends one request and reads the answer until the server closes
 * the connection, as every admin listener answer ends with `Connection: close`. */
#include "cli/admin_client.h"

#include <arpa/inet.h>
#include <errno.h>
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
#include "cli/common.h"
#include "base/base64.h"
#include "security/scram.h"

int admin_client_opt(struct admin_client_opts *o, int opt, const char *arg)
{
    switch (opt) {
    case ADMIN_OPT_ADDR:
        o->addr = arg;
        return 1;
    case ADMIN_OPT_CAFILE:
        o->cafile = arg;
        return 1;
    case ADMIN_OPT_USER:
        o->user = arg;
        return 1;
    case ADMIN_OPT_PASSWORD_STDIN:
        o->password_stdin = true;
        return 1;
    case ADMIN_OPT_PASSWORD_FILE:
        o->password_file = arg;
        return 1;
    }
    return 0;
}

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

/* Writes all of p[0, n). Returns 0 or -1 (errno). */
static int conn_write(SSL *ssl, int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w;
        if (ssl) {
            size_t done = 0;
            w = SSL_write_ex(ssl, p, n, &done) == 1 ? (ssize_t)done : -1;
        } else {
            w = write(fd, p, n);
        }
        if (w < 0 && errno == EINTR && !cli_interrupted)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
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

const char *admin_client_status_hint(const struct admin_client *ac, int status)
{
    if (status == 401)
        return ac->auth ? " (the user name or password is wrong)"
                        : " (this admin listener asks for credentials: --admin-user NAME with "
                          "--admin-password-stdin, --admin-password-file or "
                          "$STREAMPULSE_ADMIN_PASSWORD)";
    if (status == 403)
        return " (the user is not in the broker's super.users)";
    if (status == 404 || status == 405)
        return " (a broker too old?)";
    return "";
}

/* The request's bytes into req. */
static void build_request(struct strbuf *req, const struct admin_client *ac, const char *addr,
                          const char *method, const char *path, const char *body, size_t body_len)
{
    strbuf_printf(req, "%s %s HTTP/1.0\r\nHost: %s\r\n", method, path, addr);
    if (ac->auth)
        strbuf_printf(req, "Authorization: %s\r\n", ac->auth);
    if (body)
        strbuf_printf(req, "Content-Type: application/json\r\nContent-Length: %zu\r\n", body_len);
    strbuf_puts(req, "\r\n");
    if (body)
        strbuf_append(req, body, body_len);
}

/* Splits the answer resp into its status and body (appended to out). Returns 0 or -1 with the
 * reason in err. */
static int parse_answer(const struct admin_client *ac, const char *addr, const struct strbuf *resp,
                        int *status, struct strbuf *out, char *err, size_t errcap)
{
    const char *d = strbuf_str(resp);
    const char *end = memmem(d, resp->len, "\r\n\r\n", 4);
    *status = 0;
    if (resp->len < 12 || sscanf(d, "HTTP/1.%*[01] %3d", status) != 1 || !end) {
        snprintf(err, errcap, "%s did not answer HTTP%s", addr,
                 ac->ctx ? "" : " (an admin listener with HTTPS? give --admin-cafile)");
        return -1;
    }
    const char *body = end + 4;
    size_t body_len = resp->len - (size_t)(body - d);
    const char *cl = NULL;
    for (const char *l = strstr(d, "\r\n"); l && l < end; l = strstr(l + 2, "\r\n"))
        if (strncasecmp(l + 2, "Content-Length:", 15) == 0)
            cl = l + 17;
    if (cl && strtoull(cl, NULL, 10) != body_len) {
        snprintf(err, errcap, "the answer of %s was cut short", addr);
        return -1;
    }
    strbuf_append(out, body, body_len);
    return 0;
}

int admin_client_call(const struct admin_client *ac, const char *addr, int timeout_ms,
                      const char *method, const char *path, const char *body, size_t body_len,
                      int *status, struct strbuf *out, char *err, size_t errcap)
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
    build_request(&req, ac, addr, method, path, body, body_len);
    int wr = conn_write(ssl, fd, req.p, req.len);
    OPENSSL_cleanse(req.p, req.len); /* credentials, and a body that may hold a secret */
    strbuf_destroy(&req);
    int rc = 0;
    struct strbuf resp;
    strbuf_init(&resp);
    if (wr != 0) {
        snprintf(err, errcap, "sending to %s failed: %s", addr, strerror(errno));
        rc = -1;
    }
    char buf[8192];
    while (rc == 0) {
        ssize_t n = conn_read(ssl, fd, buf, sizeof(buf));
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR && !cli_interrupted)
                continue;
            snprintf(err, errcap, "reading from %s failed: %s", addr,
                     errno == EAGAIN ? "timed out" : strerror(errno));
            rc = -1;
        } else if (resp.len + (size_t)n > ADMIN_ANSWER_MAX) {
            snprintf(err, errcap, "the answer of %s is too large", addr);
            rc = -1;
        } else {
            strbuf_append(&resp, buf, (size_t)n);
        }
    }
    SSL_free(ssl);
    close(fd);
    if (rc == 0)
        rc = parse_answer(ac, addr, &resp, status, out, err, errcap);
    strbuf_destroy(&resp);
    return rc;
}

void admin_client_encode(struct strbuf *out, const char *s, size_t len)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~') {
            strbuf_putc(out, (char)c);
        } else {
            strbuf_putc(out, '%');
            strbuf_putc(out, hex[c >> 4]);
            strbuf_putc(out, hex[c & 15]);
        }
    }
}

/* The TLS client context: TLS 1.2 at least, the server verified against cafile. Returns NULL
 * with the reason printed. */
static SSL_CTX *client_ctx(const char *cmd, const char *cafile)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) {
        fprintf(stderr, "streampulse %s: cannot set up TLS\n", cmd);
        SSL_CTX_free(ctx);
        return NULL;
    }
    if (SSL_CTX_load_verify_locations(ctx, cafile, NULL) != 1) {
        unsigned long e = ERR_peek_error();
        fprintf(stderr, "streampulse %s: --admin-cafile %s: %s\n", cmd, cafile,
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

/* The first line of file into buf (cap bytes), without its line end: its length, or -1. */
static ssize_t read_file_line(const char *file, char *buf, size_t cap)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return -2;
    ssize_t n = -1;
    if (fgets(buf, (int)cap, f)) {
        size_t l = strlen(buf);
        bool ended = l > 0 && buf[l - 1] == '\n';
        if (ended)
            buf[--l] = '\0';
        if (l > 0 && buf[l - 1] == '\r')
            buf[--l] = '\0';
        n = ended || feof(f) ? (ssize_t)l : -1;
    }
    fclose(f);
    return n;
}

/* The admin password as o says: its length in pw, or < 0 with the reason printed. */
static ssize_t read_password(const char *cmd, const struct admin_client_opts *o, char *pw,
                             size_t cap)
{
    ssize_t pl = -1;
    const char *env = getenv("STREAMPULSE_ADMIN_PASSWORD");
    const char *why;
    if (o->password_stdin) {
        pl = cli_read_line(pw, cap);
        why = "no admin password on standard input";
    } else if (o->password_file) {
        pl = read_file_line(o->password_file, pw, cap);
        why = "no admin password in the first line of --admin-password-file";
        if (pl == -2) {
            fprintf(stderr, "streampulse %s: --admin-password-file %s: %s\n", cmd, o->password_file,
                    strerror(errno));
            return -1;
        }
    } else {
        if (env && *env && strlen(env) < cap) {
            pl = (ssize_t)strlen(env);
            memcpy(pw, env, (size_t)pl);
        }
        why = "--admin-user needs a password: --admin-password-stdin (its first line), "
              "--admin-password-file or $STREAMPULSE_ADMIN_PASSWORD";
    }
    if (pl <= 0 || pl > SCRAM_PASSWORD_MAX) {
        fprintf(stderr, "streampulse %s: %s\n", cmd,
                pl > SCRAM_PASSWORD_MAX ? "the admin password is longer than 1024 bytes" : why);
        return -1;
    }
    return pl;
}

int admin_client_init(struct admin_client *ac, const char *cmd, const struct admin_client_opts *o)
{
    memset(ac, 0, sizeof(*ac));
    ac->cmd = cmd;
    const char *user = o->user;
    if (user && !o->cafile) {
        fprintf(stderr,
                "streampulse %s: --admin-user needs --admin-cafile: credentials are "
                "sent over HTTPS only\n",
                cmd);
        return CLI_EXIT_USAGE;
    }
    if ((o->password_stdin || o->password_file) && !user) {
        fprintf(stderr, "streampulse %s: --admin-password-%s needs --admin-user\n", cmd,
                o->password_stdin ? "stdin" : "file");
        return CLI_EXIT_USAGE;
    }
    if (o->password_stdin && o->password_file) {
        fprintf(stderr,
                "streampulse %s: give --admin-password-stdin or --admin-password-file, "
                "not both\n",
                cmd);
        return CLI_EXIT_USAGE;
    }
    if (user && (!*user || strchr(user, ':') || strlen(user) > SCRAM_USER_MAX)) {
        fprintf(stderr, "streampulse %s: --admin-user: a name of 1 to %d bytes without ':'\n", cmd,
                SCRAM_USER_MAX);
        return CLI_EXIT_USAGE;
    }
    if (user) {
        char pw[SCRAM_PASSWORD_MAX + 2];
        ssize_t pl = read_password(cmd, o, pw, sizeof(pw));
        if (pl < 0) {
            OPENSSL_cleanse(pw, sizeof(pw));
            return CLI_EXIT_USAGE;
        }
        ac->auth = basic_auth(user, pw, (size_t)pl);
        OPENSSL_cleanse(pw, sizeof(pw));
    }
    if (o->cafile && !(ac->ctx = client_ctx(cmd, o->cafile)))
        return CLI_EXIT_FAIL;
    return 0;
}

void admin_client_free(struct admin_client *ac)
{
    if (ac->auth)
        OPENSSL_cleanse(ac->auth, strlen(ac->auth));
    mem_free(ac->auth);
    SSL_CTX_free(ac->ctx);
    memset(ac, 0, sizeof(*ac));
}
