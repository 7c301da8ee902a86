/* One TLS connection on OpenSSL 3, server or client side (tls.h).
 *
 * Owns the SSL. States: HANDSHAKING (tls_handshake until TLS_OK) -> ESTABLISHED (reads and
 * writes) -> FAILED (after any fatal error: no close_notify may be sent then) or freed.
 *
 * Invariants:
 *  1. OpenSSL's error queue is empty when a function here returns (each call starts from an
 *     empty queue, so SSL_get_error() sees only its own errors).
 *  2. failed is set after the first TLS_ERROR and stays set. */
#include "net/tls.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "base/mem.h"

struct tls {
    SSL *ssl;
    bool established;
    bool failed; /* invariant 2 */
    char error[160];
};

static struct tls *make(struct ssl_ctx_st *ctx, int fd, bool client)
{
    ERR_clear_error();
    SSL *ssl = SSL_new(ctx);
    if (!ssl || SSL_set_fd(ssl, fd) != 1) {
        SSL_free(ssl);
        ERR_clear_error();
        return NULL;
    }
    if (client)
        SSL_set_connect_state(ssl);
    else
        SSL_set_accept_state(ssl);
    struct tls *t = mem_calloc(1, sizeof(*t));
    t->ssl = ssl;
    return t;
}

struct tls *tls_new(struct ssl_ctx_st *ctx, int fd)
{
    return make(ctx, fd, false);
}

struct tls *tls_new_client(struct ssl_ctx_st *ctx, int fd)
{
    return make(ctx, fd, true);
}

void tls_free(struct tls *t)
{
    if (!t)
        return;
    if (t->established && !t->failed) {
        /* one attempt to send close_notify; the socket closes right after whatever happens */
        (void)SSL_shutdown(t->ssl);
    }
    SSL_free(t->ssl);
    ERR_clear_error();
    mem_free(t);
}

/* Records why a call failed: OpenSSL's first queued reason, or the socket's errno. */
static void set_error(struct tls *t, int ssl_err, int saved_errno)
{
    unsigned long e = ERR_peek_error();
    long verify = SSL_get_verify_result(t->ssl);
    if (e && ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED && verify != X509_V_OK) {
        /* which check failed: "unable to get local issuer certificate" (another CA), ... */
        snprintf(t->error, sizeof(t->error), "certificate verify failed: %s",
                 X509_verify_cert_error_string(verify));
    } else if (e) {
        const char *r = ERR_reason_error_string(e);
        if (r)
            snprintf(t->error, sizeof(t->error), "%s", r);
        else
            snprintf(t->error, sizeof(t->error), "OpenSSL error 0x%lx", e);
    } else if (ssl_err == SSL_ERROR_SYSCALL && saved_errno) {
        snprintf(t->error, sizeof(t->error), "%s", strerror(saved_errno));
    } else if (ssl_err == SSL_ERROR_SYSCALL) {
        snprintf(t->error, sizeof(t->error), "connection closed during the handshake");
    } else {
        snprintf(t->error, sizeof(t->error), "TLS error %d", ssl_err);
    }
    t->failed = true;
    ERR_clear_error();
}

/* Maps the outcome of an SSL_* call that returned ok (1) or not. */
static enum tls_status outcome(struct tls *t, int ret, bool ok)
{
    if (ok)
        return TLS_OK;
    int saved_errno = errno;
    int e = SSL_get_error(t->ssl, ret);
    switch (e) {
    case SSL_ERROR_WANT_READ:
        ERR_clear_error();
        return TLS_WANT_READ;
    case SSL_ERROR_WANT_WRITE:
        ERR_clear_error();
        return TLS_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN:
        ERR_clear_error();
        return TLS_EOF;
    case SSL_ERROR_SYSCALL:
    case SSL_ERROR_SSL:
        /* EOF without close_notify once established: librdkafka and others just close the
         * socket, the ordinary end of a Kafka connection (whose frames carry their own sizes,
         * so a truncation cannot pass for a shorter message). OpenSSL 3 reports it as
         * "unexpected eof while reading", 1.1 as a SYSCALL error without errno. */
        if (t->established &&
            ((e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0 && saved_errno == 0) ||
             ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
            ERR_clear_error();
            return TLS_EOF;
        }
        break;
    default:
        break;
    }
    set_error(t, e, saved_errno);
    return TLS_ERROR;
}

enum tls_status tls_handshake(struct tls *t)
{
    if (t->failed)
        return TLS_ERROR;
    ERR_clear_error();
    errno = 0;
    int ret = SSL_do_handshake(t->ssl);
    enum tls_status st = outcome(t, ret, ret == 1);
    if (st == TLS_OK)
        t->established = true;
    return st;
}

enum tls_status tls_read(struct tls *t, void *buf, size_t cap, size_t *n)
{
    *n = 0;
    if (t->failed)
        return TLS_ERROR;
    ERR_clear_error();
    errno = 0;
    int ret = SSL_read_ex(t->ssl, buf, cap, n);
    return outcome(t, ret, ret == 1 && *n > 0);
}

enum tls_status tls_write(struct tls *t, const void *buf, size_t len, size_t *n)
{
    *n = 0;
    if (t->failed)
        return TLS_ERROR;
    ERR_clear_error();
    errno = 0;
    int ret = SSL_write_ex(t->ssl, buf, len, n);
    return outcome(t, ret, ret == 1);
}

enum tls_status tls_sendfile(struct tls *t, int fd, off_t off, size_t len, size_t *n)
{
    *n = 0;
    if (t->failed)
        return TLS_ERROR;
    ERR_clear_error();
    errno = 0;
    ossl_ssize_t ret = SSL_sendfile(t->ssl, fd, off, len, 0);
    if (ret > 0) {
        *n = (size_t)ret;
        return TLS_OK;
    }
    if (ret == 0 && len > 0) {
        snprintf(t->error, sizeof(t->error), "the file ends before the range to send");
        t->failed = true;
        ERR_clear_error();
        return TLS_ERROR;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == EBUSY) {
        ERR_clear_error();
        return TLS_WANT_WRITE;
    }
    return outcome(t, (int)ret, false);
}

bool tls_pending(const struct tls *t)
{
    return SSL_has_pending(t->ssl) == 1;
}

bool tls_ktls_send(const struct tls *t)
{
    return BIO_get_ktls_send(SSL_get_wbio(t->ssl)) != 0;
}

bool tls_ktls_recv(const struct tls *t)
{
    return BIO_get_ktls_recv(SSL_get_rbio(t->ssl)) != 0;
}

const char *tls_error(const struct tls *t)
{
    return t->error[0] ? t->error : "no error";
}

const char *tls_version(const struct tls *t)
{
    return SSL_get_version(t->ssl);
}

const char *tls_cipher(const struct tls *t)
{
    const char *name = SSL_get_cipher_name(t->ssl);
    return name ? name : "none";
}

int tls_peer_subject(const struct tls *t, char *out, size_t cap)
{
    out[0] = '\0';
    X509 *cert = SSL_get0_peer_certificate(t->ssl);
    if (!cert || SSL_get_verify_result(t->ssl) != X509_V_OK)
        return 0;
    BIO *b = BIO_new(BIO_s_mem());
    if (!b) {
        ERR_clear_error();
        return 0;
    }
    /* RFC 2253 as Java's X500Principal.getName() gives it: most specific attribute first,
     * UTF-8 kept as is (OpenSSL would escape it as \XX otherwise) */
    X509_NAME_print_ex(b, X509_get_subject_name(cert), 0,
                       (XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB) | ASN1_STRFLGS_UTF8_CONVERT);
    int n = BIO_read(b, out, (int)(cap > 1 ? cap - 1 : 0));
    out[n > 0 ? n : 0] = '\0';
    BIO_free(b);
    ERR_clear_error();
    return 1;
}
