/* Listening sockets and client connections speaking 4-byte-size-prefixed frames.
 *
 * A listener accepts non-blocking TCP connections (TCP_NODELAY) up to a cap; beyond it new
 * connections are accepted and closed at once (logged, rate-limited). Each connection:
 *
 *  - reads frames: a big-endian int32 size, then that many bytes. A size < 0 or above
 *    max_frame_bytes closes the connection *before* any allocation for it; the frame buffer
 *    grows only as bytes actually arrive (64 KiB, then doubling, per readable event), so a
 *    client announcing 100 MiB and sending 10 bytes costs 10 bytes once the event is handled.
 *    Every complete frame is handed to on_frame() in arrival order; the frame bytes are valid
 *    only during the call (the handler copies what it keeps).
 *  - pipelines: the handler reserves a response slot per request (conn_slot_reserve) before
 *    returning, and completes it now or later (conn_slot_complete). Responses go out strictly
 *    in slot order. A request that gets no response (Produce acks=0) reserves no slot.
 *  - writes with writev for memory chunks and sendfile for file chunks of the response iobufs,
 *    directly when the socket accepts them, else on EPOLLOUT.
 *  - backpressure: stops reading while the bytes of queued responses exceed max_queued_bytes or
 *    the reserved-but-unsent slots exceed max_inflight; resumes when below again.
 *  - closes on EOF, error, an oversized frame, or conn_close(); then on_close() runs once.
 *
 * A listener may listen on several endpoints (Kafka's listeners: PLAINTEXT://...,SECURE://...),
 * sharing the limits, the handler and the connection cap; conn_endpoint() tells on which one a
 * connection arrived. An endpoint with TLS (struct listener_tls) runs the TLS handshake first
 * (net/tls.h), bounded by handshake_timeout_ms, and delivers no frame before it is done; frames
 * and responses then travel as TLS records with the same buffering, ordering and backpressure.
 * A handshake that fails or times out closes the connection (logged, rate-limited per
 * endpoint). File chunks go out with SSL_sendfile where the kernel does TLS (kTLS), else read
 * and written through OpenSSL, a record at a time. A verified client certificate gives the
 * connection its principal (listener_tls.principal); otherwise it is "User:ANONYMOUS".
 *
 * Lifetime: conn_close() (or EOF, error) closes the socket at once; on_close() then runs from
 * the reactor loop later in the same iteration or the next one, never from inside conn_close()
 * or another conn_* call (listener_close() excepted). The struct conn is freed after on_close
 * returns, never inside a callback that was given it (closing from inside on_frame is safe).
 * A slot outlives its connection: completing a slot whose connection has closed just frees it.
 *
 * SIGPIPE: listener_open() sets SIGPIPE to SIG_IGN if it is at its default (sendfile(2) cannot
 * suppress it per call); writes to a vanished peer then fail with EPIPE and close the conn.
 *
 * All on the reactor thread. */
#ifndef SP_NET_CONN_H
#define SP_NET_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/iobuf.h"
#include "net/reactor.h"

struct conn;
struct conn_slot;
struct listener;
struct ssl_ctx_st;

#define LISTENER_ENDPOINTS_MAX 8
#define CONN_PRINCIPAL_MAX 1024 /* bytes of a principal, NUL included */

/* TLS on an endpoint. Borrowed: must outlive the listener. */
struct listener_tls {
    /* The context for a connection accepted now (borrowed: the connection takes its own
     * reference), or NULL to close it. now_ms: the reactor's clock. */
    struct ssl_ctx_st *(*ctx_get)(int64_t now_ms, void *data);
    /* Writes the principal of a verified client certificate with subject (RFC 2253) into out;
     * returns 0, or non-zero to close the connection (no mapping rule applies). Optional: NULL
     * makes the principal "User:" + subject. */
    int (*principal)(const char *subject, char *out, size_t cap, void *data);
    void *data;
    int64_t handshake_timeout_ms; /* 0: 10000 */
};

/* One listening address of a listener. */
struct listener_endpoint {
    const char *name;               /* for logs ("PLAINTEXT", "SECURE"); NULL: none */
    const char *host;               /* as listener_open's */
    int port;                       /* 0: any free port */
    const struct listener_tls *tls; /* NULL: plaintext */
};

struct conn_handler {
    /* A complete frame (without its size prefix). */
    void (*on_frame)(struct conn *c, uint8_t *frame, size_t len, void *data);
    /* The connection is closing; slots still held elsewhere stay valid. Optional. */
    void (*on_close)(struct conn *c, void *data);
    /* A connection was accepted. Optional. */
    void (*on_open)(struct conn *c, void *data);
    void *data;
};

/* A field left at 0 takes the default named in its comment; max_connections <= 0: no cap. */
struct conn_limits {
    size_t max_frame_bytes;  /* socket.request.max.bytes, 100 MiB */
    size_t max_queued_bytes; /* response bytes queued before reading pauses, 64 MiB */
    size_t max_inflight;     /* requests awaiting their response before reading pauses, 1000 */
    int max_connections;     /* accepted connections at once, beyond which new ones are closed */
};

/* Binds host:port (host may be "0.0.0.0", "::", a name or an address; port 0 picks a free
 * port), listens and starts accepting on r. Returns 0 or -errno (the caller reports e.g.
 * EADDRINUSE). lim NULL: every limit at its default. */
int listener_open(struct reactor *r, const char *host, int port, const struct conn_limits *lim,
                  const struct conn_handler *h, struct listener **out);
int listener_port(const struct listener *l); /* the bound port (of the first endpoint) */
/* Opens one listener on n (1..LISTENER_ENDPOINTS_MAX) endpoints, each bound as listener_open
 * binds. Returns 0, or -errno with *failed (if not NULL) the index of the endpoint that could
 * not be bound; nothing stays open then. */
int listener_open_endpoints(struct reactor *r, const struct listener_endpoint *eps, int n,
                            const struct conn_limits *lim, const struct conn_handler *h,
                            struct listener **out, int *failed);
int listener_endpoint_port(const struct listener *l, int i); /* endpoint i's bound port */
/* Only binds and listens, as listener_open does (SO_REUSEADDR, non-blocking, close-on-exec),
 * for servers that handle their own connections (the HTTP admin listener). Returns the
 * listening fd (owned by the caller) and *bound, or -errno. */
int listener_bind_tcp(const char *host, int port, int *bound);
/* Stops accepting and closes every connection (on_close runs for each, from inside this call).
 * l must not be used afterwards; its memory goes once no callback holds it. Call once, and
 * before reactor_free(). */
void listener_close(struct listener *l);
/* Connections with an open socket (those counted against max_connections). */
int listener_connection_count(const struct listener *l);

/* Reserves the next response slot. The returned slot must be completed exactly once. */
struct conn_slot *conn_slot_reserve(struct conn *c);
/* Hands the response bytes (moved out of resp, which is left empty) to the slot and sends
 * whatever is now in order. If the connection is gone the bytes are dropped. */
void conn_slot_complete(struct conn_slot *s, struct iobuf *resp);

/* Closes the connection (deferred if called from its own callback). Pending slots are dropped
 * when completed. */
void conn_close(struct conn *c);
bool conn_closing(const struct conn *c);

/* Per-connection user pointer (e.g. the broker's session). */
void conn_set_user(struct conn *c, void *user);
void *conn_get_user(const struct conn *c);
/* "127.0.0.1:53412" */
const char *conn_peer(const struct conn *c);
/* Unique id for logs. */
uint64_t conn_id(const struct conn *c);
/* Bytes allocated for c's input buffer: what an unfinished frame has sent so far (0 when none),
 * except that a buffer above 64 KiB is kept for reuse until input stops for 1 s. For metrics
 * and the tests that check an announced frame size is not allocated up front. */
size_t conn_rbuf_capacity(const struct conn *c);
/* The index of the endpoint (listener_open_endpoints) c arrived on; 0 for listener_open. */
int conn_endpoint(const struct conn *c);
/* Whether c is a TLS connection, and its principal: from its verified client certificate, else
 * "User:ANONYMOUS". Valid while c is. */
bool conn_tls(const struct conn *c);
const char *conn_principal(const struct conn *c);

struct conn_stats {
    uint64_t bytes_in;
    uint64_t bytes_out;
    uint64_t frames_in;
    uint64_t accepted;
    uint64_t refused; /* closed at accept because of the connection cap */
    uint64_t tls_handshakes;         /* TLS handshakes completed */
    uint64_t tls_handshake_failures; /* failed, timed out or refused (no principal) */
};
void listener_get_stats(const struct listener *l, struct conn_stats *out);

#endif
