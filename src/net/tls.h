/* The TLS record layer of one connection, on OpenSSL 3: the server side of an accepted
 * connection (net/conn.c drives it) or the client side of an outbound one (net/dial.c, and the
 * blocking bootstrap query of replication/discover.c over poll).
 *
 * Non-blocking throughout: every call does what the socket allows now and says what it waits
 * for (TLS_WANT_READ / TLS_WANT_WRITE), so the reactor's readiness drives the handshake, reads
 * and writes alike. A call that returned WANT_* must be repeated with the same bytes once the
 * socket is ready (a longer buffer that starts with them is fine: the context is built with
 * SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER and SSL_MODE_ENABLE_PARTIAL_WRITE, security/tls_context.c).
 *
 * Writes go one record at a time (at most TLS_RECORD_MAX plaintext bytes a call). With kernel
 * TLS for sending (the kernel has the `tls` ULP and the cipher suits it), tls_sendfile() sends
 * file bytes with SSL_sendfile, without copying them through user space; without it the caller
 * reads them and uses tls_write() (tls_ktls_send() tells which).
 *
 * OpenSSL's per-thread error queue is left empty by every function here.
 *
 * Ownership: a struct tls owns its SSL (and through it a reference on the SSL_CTX), never the
 * file descriptor. Reactor thread only. */
#ifndef SP_NET_TLS_H
#define SP_NET_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TLS_RECORD_MAX 16384 /* plaintext bytes of one record */

struct tls;
struct ssl_ctx_st;

enum tls_status {
    TLS_OK,         /* done (for read/write: *n bytes moved, > 0) */
    TLS_WANT_READ,  /* repeat once the socket is readable */
    TLS_WANT_WRITE, /* repeat once the socket is writable */
    TLS_EOF,        /* the peer closed (close_notify, or a clean TCP close) */
    TLS_ERROR,      /* fatal: the reason is in tls_error() */
};

/* A server-side TLS connection over fd with ctx. Returns NULL if OpenSSL cannot create it. */
struct tls *tls_new(struct ssl_ctx_st *ctx, int fd);
/* A client-side one (it sends the ClientHello; ctx is a client context: what it verifies of
 * the server's certificate is the context's business). Returns NULL as tls_new. */
struct tls *tls_new_client(struct ssl_ctx_st *ctx, int fd);
/* Sends close_notify if the connection is established and healthy (best effort, never waits),
 * then frees everything. NULL is fine. */
void tls_free(struct tls *t);

enum tls_status tls_handshake(struct tls *t);
enum tls_status tls_read(struct tls *t, void *buf, size_t cap, size_t *n);
enum tls_status tls_write(struct tls *t, const void *buf, size_t len, size_t *n);
/* Kernel TLS only (tls_ktls_send()): len bytes of fd from off. */
enum tls_status tls_sendfile(struct tls *t, int fd, off_t off, size_t len, size_t *n);

/* Decrypted or received bytes OpenSSL holds that the socket will not signal again. */
bool tls_pending(const struct tls *t);
bool tls_ktls_send(const struct tls *t);
bool tls_ktls_recv(const struct tls *t);
/* After a TLS_ERROR: why ("wrong version number", "http request", "certificate verify failed",
 * "handshake timed out", ...). */
const char *tls_error(const struct tls *t);

/* After the handshake. "TLSv1.3", "TLS_AES_256_GCM_SHA384". */
const char *tls_version(const struct tls *t);
const char *tls_cipher(const struct tls *t);
/* The verified peer certificate's subject in RFC 2253 form ("CN=alice,O=acme") into out: the
 * client's on a server connection, the server's on a client one. Returns 1, or 0 when the peer
 * sent no certificate (ssl.client.auth=none or requested) or it was not verified. */
int tls_peer_subject(const struct tls *t, char *out, size_t cap);

#endif
