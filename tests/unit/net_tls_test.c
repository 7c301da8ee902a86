/* TLS connections (net/tls.c through net/conn.c) over loopback: the test process is the server
 * (a listener with a TLS endpoint, driven through reactor_run_once) and an OpenSSL client on a
 * non-blocking socket. Keys and certificates are made in memory for each test. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base/check.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "net/conn.h"
#include "net/reactor.h"
#include "net_test_util.h"
#include "test.h"
#include "tls_test_util.h"

/* ---- certificates (tls_test_util.h) ---- */

static SSL_CTX *server_ctx(const struct pki *p, bool require_cert)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
    ASSERT(ctx != NULL);
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE |
                              SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    /* as security/tls_context.c: OpenSSL reads ahead, so decrypted input waits in it unseen by
     * epoll (the kick path of net/conn.c) */
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, 64 * 1024);
    ASSERT_EQ(SSL_CTX_use_certificate(ctx, p->srv), 1);
    ASSERT_EQ(SSL_CTX_use_PrivateKey(ctx, p->srv_key), 1);
    if (require_cert) {
        ASSERT_EQ(X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx), p->ca), 1);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    return ctx;
}

/* ---- the server ---- */

struct tsrv {
    struct reactor *r;
    struct listener *l;
    SSL_CTX *ctx;
    struct listener_tls tls;
    int frames;
    size_t bytes_in;
    int opens, closes;
    char principal[CONN_PRINCIPAL_MAX];
    char subject_seen[CONN_PRINCIPAL_MAX];
    bool tls_seen;
    size_t big;             /* > 0: answer each frame with this many pattern bytes */
    struct fileref *file;   /* and/or with a range of this file */
    size_t file_len;
};

static struct ssl_ctx_st *t_ctx_get(int64_t now_ms, void *data)
{
    struct tsrv *s = data;
    return s->ctx;
}

static int t_principal(const char *subject, char *out, size_t cap, void *data)
{
    struct tsrv *s = data;
    snprintf(s->subject_seen, sizeof(s->subject_seen), "%s", subject);
    if (strstr(subject, "CN=nobody"))
        return -1;
    const char *cn = strstr(subject, "CN=");
    snprintf(out, cap, "User:%.*s", cn ? (int)strcspn(cn + 3, ",") : 0, cn ? cn + 3 : "");
    return 0;
}

/* Echo (4-byte size + frame), then `big` pattern bytes and the file range, if set. */
static void t_on_frame(struct conn *c, uint8_t *frame, size_t len, void *data)
{
    struct tsrv *s = data;
    s->frames++;
    s->bytes_in += len;
    s->tls_seen = conn_tls(c);
    snprintf(s->principal, sizeof(s->principal), "%s", conn_principal(c));
    struct iobuf resp;
    iobuf_init(&resp);
    uint8_t hdr[4];
    nt_put_be32(hdr, (uint32_t)len);
    iobuf_append(&resp, hdr, 4);
    iobuf_append(&resp, frame, len);
    if (s->big) {
        uint8_t *p = iobuf_reserve(&resp, s->big);
        for (size_t i = 0; i < s->big; i++)
            p[i] = (uint8_t)(i * 13 + 5);
        iobuf_commit(&resp, s->big);
    }
    if (s->file)
        iobuf_append_file(&resp, s->file, 0, s->file_len);
    conn_slot_complete(conn_slot_reserve(c), &resp);
}

static void t_on_open(struct conn *c, void *data)
{
    ((struct tsrv *)data)->opens++;
}

static void t_on_close(struct conn *c, void *data)
{
    ((struct tsrv *)data)->closes++;
}

static struct tsrv *tsrv_start(SSL_CTX *ctx, int64_t handshake_timeout_ms)
{
    struct tsrv *s = mem_calloc(1, sizeof(*s));
    s->r = reactor_new();
    s->ctx = ctx;
    s->tls = (struct listener_tls){.ctx_get = t_ctx_get, .principal = t_principal, .data = s,
                                   .handshake_timeout_ms = handshake_timeout_ms};
    struct conn_handler h = {.on_frame = t_on_frame, .on_open = t_on_open,
                             .on_close = t_on_close, .data = s};
    struct listener_endpoint eps[2] = {{"PLAIN", "127.0.0.1", 0, NULL},
                                       {"SECURE", "127.0.0.1", 0, &s->tls}};
    struct conn_limits lim = {.max_connections = 100};
    int failed = -1;
    ASSERT_EQ(listener_open_endpoints(s->r, eps, 2, &lim, &h, &s->l, &failed), 0);
    return s;
}

static int tsrv_tls_port(const struct tsrv *s)
{
    return listener_endpoint_port(s->l, 1);
}

static void tsrv_stop(struct tsrv *s)
{
    listener_close(s->l);
    ASSERT_EQ(s->opens, s->closes);
    reactor_free(s->r);
    SSL_CTX_free(s->ctx);
    fileref_put(s->file);
    mem_free(s);
}

/* ---- the client ---- */

struct tcli {
    SSL_CTX *ctx;
    SSL *ssl;
    int fd;
};

static void tcli_open(struct tcli *c, const struct tsrv *s, const struct pki *p, bool with_cert,
                      int rcvbuf)
{
    c->ctx = SSL_CTX_new(TLS_client_method());
    ASSERT_EQ(X509_STORE_add_cert(SSL_CTX_get_cert_store(c->ctx), p->ca), 1);
    SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER, NULL);
    if (with_cert) {
        ASSERT_EQ(SSL_CTX_use_certificate(c->ctx, p->cli), 1);
        ASSERT_EQ(SSL_CTX_use_PrivateKey(c->ctx, p->cli_key), 1);
    }
    c->fd = nt_connect(tsrv_tls_port(s), rcvbuf);
    c->ssl = SSL_new(c->ctx);
    SSL_set_fd(c->ssl, c->fd);
    SSL_set_connect_state(c->ssl);
}

static void tcli_close(struct tcli *c)
{
    SSL_free(c->ssl);
    SSL_CTX_free(c->ctx);
    close(c->fd);
    ERR_clear_error();
}

/* Runs one client step; a WANT_* runs the reactor once. Returns 1 done, 0 again, -1 failed. */
static int step(struct reactor *r, SSL *ssl, int ret)
{
    if (ret > 0)
        return 1;
    int e = SSL_get_error(ssl, ret);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        ASSERT_EQ(reactor_run_once(r, 2), 0);
        return 0;
    }
    ERR_clear_error();
    return -1;
}

static int tcli_handshake(struct reactor *r, struct tcli *c)
{
    int64_t end = time_mono_ms() + 5000;
    for (;;) {
        int rc = step(r, c->ssl, SSL_do_handshake(c->ssl));
        if (rc != 0)
            return rc;
        ASSERT(time_mono_ms() < end);
    }
}

static void tcli_write(struct reactor *r, struct tcli *c, const uint8_t *p, size_t n)
{
    int64_t end = time_mono_ms() + 10000;
    while (n > 0) {
        int k = (int)MIN(n, (size_t)1 << 20);
        int rc = step(r, c->ssl, SSL_write(c->ssl, p, k));
        ASSERT(rc >= 0);
        if (rc == 1) {
            p += k;
            n -= (size_t)k;
        }
        ASSERT(time_mono_ms() < end);
    }
}

/* Reads exactly n bytes. Returns 0, or -1 if the connection ended first. */
static int tcli_read(struct reactor *r, struct tcli *c, uint8_t *buf, size_t n)
{
    int64_t end = time_mono_ms() + 10000;
    size_t got = 0;
    while (got < n) {
        size_t k = 0;
        int ret = SSL_read_ex(c->ssl, buf + got, n - got, &k);
        if (ret == 1) {
            got += k;
            continue;
        }
        int rc = step(r, c->ssl, ret);
        if (rc < 0)
            return -1;
        ASSERT(time_mono_ms() < end);
    }
    return 0;
}

/* ---- tests ---- */

TEST_T(net_tls_frames_and_responses_round_trip, 30)
{
    struct pki p;
    pki_make(&p, "Test CA");
    struct tsrv *s = tsrv_start(server_ctx(&p, false), 0);
    /* a file range in each response: without kernel TLS it is read and written in records */
    char path[300];
    snprintf(path, sizeof(path), "%s/segment", test_tmpdir());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    s->file_len = 300000;
    uint8_t *fbytes = mem_alloc(s->file_len);
    for (size_t i = 0; i < s->file_len; i++)
        fbytes[i] = (uint8_t)(i * 31 + 7);
    ASSERT_EQ(write(fd, fbytes, s->file_len), (ssize_t)s->file_len);
    s->file = fileref_new(fd);
    s->big = 100000;

    struct tcli c;
    tcli_open(&c, s, &p, false, 16384); /* a small window: the server must wait for room */
    ASSERT_EQ(tcli_handshake(s->r, &c), 1);
    /* many small frames in one write, then one of 3 MiB */
    enum { N = 50 };
    size_t big_frame = 3 << 20;
    uint8_t *out = mem_alloc(N * 16 + big_frame + 4);
    size_t off = 0;
    for (int i = 0; i < N; i++) {
        char payload[16];
        int len = snprintf(payload, sizeof(payload), "frame-%02d", i);
        off += nt_frame(out + off, payload, (uint32_t)len);
    }
    nt_put_be32(out + off, (uint32_t)big_frame);
    for (size_t i = 0; i < big_frame; i++)
        out[off + 4 + i] = (uint8_t)(i * 3);
    tcli_write(s->r, &c, out, off);
    size_t resp_len = s->big + s->file_len;
    uint8_t *in = mem_alloc(4 + big_frame + resp_len);
    for (int i = 0; i < N; i++) {
        ASSERT_EQ(tcli_read(s->r, &c, in, 4 + 8 + resp_len), 0);
        ASSERT_EQ(nt_get_be32(in), 8);
        ASSERT_MEMEQ(in + 4, out + (size_t)i * 12 + 4, 8); /* in order */
        for (size_t k = 0; k < s->big; k++)
            ASSERT_EQ(in[12 + k], (uint8_t)(k * 13 + 5));
        ASSERT_MEMEQ(in + 12 + s->big, fbytes, s->file_len);
    }
    tcli_write(s->r, &c, out + off, 4 + big_frame);
    ASSERT_EQ(tcli_read(s->r, &c, in, 4 + big_frame + resp_len), 0);
    ASSERT_EQ(nt_get_be32(in), big_frame);
    ASSERT_MEMEQ(in + 4, out + off + 4, big_frame);
    ASSERT_EQ(s->frames, N + 1);
    ASSERT(s->tls_seen);
    ASSERT_STREQ(s->principal, "User:ANONYMOUS"); /* no client certificate */
    struct conn_stats st;
    listener_get_stats(s->l, &st);
    ASSERT_EQ(st.tls_handshakes, 1);
    ASSERT_EQ(st.tls_handshake_failures, 0);

    /* the client closes: the server sees EOF and closes too */
    SSL_shutdown(c.ssl);
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    tcli_close(&c);
    mem_free(out);
    mem_free(in);
    mem_free(fbytes);
    tsrv_stop(s);
    pki_free(&p);
}

TEST(net_tls_client_certificate_gives_the_principal)
{
    struct pki p;
    pki_make(&p, "Test CA");
    struct tsrv *s = tsrv_start(server_ctx(&p, true), 0);
    struct tcli c;
    tcli_open(&c, s, &p, true, 0);
    ASSERT_EQ(tcli_handshake(s->r, &c), 1);
    uint8_t f[16];
    size_t n = nt_frame(f, "hi", 2);
    tcli_write(s->r, &c, f, n);
    uint8_t in[6];
    ASSERT_EQ(tcli_read(s->r, &c, in, 6), 0);
    ASSERT_STREQ(s->subject_seen, "CN=alice,O=acme"); /* RFC 2253: most specific first */
    ASSERT_STREQ(s->principal, "User:alice");
    tcli_close(&c);

    /* required: a client without a certificate never gets a frame through */
    tcli_open(&c, s, &p, false, 0);
    int hs = tcli_handshake(s->r, &c);
    if (hs == 1) /* TLS 1.3: the client learns of the refusal on its first read */
        ASSERT_EQ(tcli_read(s->r, &c, in, 1), -1);
    NT_PUMP_UNTIL(s->r, s->closes == 2, 2000);
    ASSERT_EQ(s->frames, 1);
    struct conn_stats st;
    listener_get_stats(s->l, &st);
    ASSERT_EQ(st.tls_handshake_failures, 1);
    tcli_close(&c);
    tsrv_stop(s);
    pki_free(&p);
}

TEST(net_tls_unmapped_principal_closes_the_connection)
{
    struct pki p;
    pki_make(&p, "Test CA");
    X509_free(p.cli);
    p.cli = pki_cert("nobody", "acme", p.cli_key, p.ca, p.ca_key, 9, false);
    struct tsrv *s = tsrv_start(server_ctx(&p, true), 0);
    struct tcli c;
    tcli_open(&c, s, &p, true, 0);
    (void)tcli_handshake(s->r, &c);
    uint8_t in[1];
    ASSERT_EQ(tcli_read(s->r, &c, in, 1), -1);
    ASSERT_EQ(s->closes, 1);
    ASSERT_EQ(s->frames, 0);
    tcli_close(&c);
    tsrv_stop(s);
    pki_free(&p);
}

TEST(net_tls_silent_client_is_closed_at_the_handshake_deadline)
{
    struct pki p;
    pki_make(&p, "Test CA");
    struct tsrv *s = tsrv_start(server_ctx(&p, false), 200);
    int fd = nt_connect(tsrv_tls_port(s), 0);
    NT_PUMP_UNTIL(s->r, s->opens == 1, 2000);
    int64_t t0 = time_mono_ms();
    nt_wait_closed(s->r, fd, 3000);
    ASSERT_CMP(time_mono_ms() - t0, <, 2000);
    NT_PUMP_UNTIL(s->r, s->closes == 1, 2000);
    close(fd);
    /* a client that sends half a ClientHello and stops is closed the same way */
    fd = nt_connect(tsrv_tls_port(s), 0);
    static const uint8_t partial[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00};
    nt_write_all(s->r, fd, partial, sizeof(partial));
    nt_wait_closed(s->r, fd, 3000);
    NT_PUMP_UNTIL(s->r, s->closes == 2, 2000);
    close(fd);
    struct conn_stats st;
    listener_get_stats(s->l, &st);
    ASSERT_EQ(st.tls_handshake_failures, 2);
    tsrv_stop(s);
    pki_free(&p);
}

TEST(net_tls_garbage_and_plaintext_frames_are_closed)
{
    struct pki p;
    pki_make(&p, "Test CA");
    struct tsrv *s = tsrv_start(server_ctx(&p, false), 0);
    static const char http[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    uint8_t kafka[64];
    size_t kn = nt_frame(kafka, "\x00\x12\x00\x03\x00\x00\x00\x01\x00\x00", 10);
    /* an oversized record header: 16 KiB + 2 KiB is the most TLS allows */
    static const uint8_t huge[] = {0x17, 0x03, 0x03, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0};
    const void *inputs[] = {http, kafka, huge};
    size_t lens[] = {sizeof(http) - 1, kn, sizeof(huge)};
    for (int i = 0; i < 3; i++) {
        int fd = nt_connect(tsrv_tls_port(s), 0);
        nt_write_all(s->r, fd, inputs[i], lens[i]);
        nt_wait_closed(s->r, fd, 3000);
        close(fd);
    }
    NT_PUMP_UNTIL(s->r, s->closes == 3, 2000);
    ASSERT_EQ(s->frames, 0);
    /* the plaintext endpoint beside it is untouched */
    int fd = nt_connect(listener_endpoint_port(s->l, 0), 0);
    nt_write_all(s->r, fd, kafka, kn);
    uint8_t in[64];
    nt_read_exact(s->r, fd, in, kn, 2000);
    ASSERT_MEMEQ(in, kafka, kn);
    ASSERT(!s->tls_seen);
    ASSERT_STREQ(s->principal, "User:ANONYMOUS");
    close(fd);
    NT_PUMP_UNTIL(s->r, s->closes == 4, 2000);
    tsrv_stop(s);
    pki_free(&p);
}
