/* Outbound TCP connections speaking the frames of net/conn (a big-endian int32 size, then that
 * many bytes), for clients inside the broker (the Raft transport's connections to its peers).
 *
 * dial_open starts a non-blocking connect; on_connect runs once the socket is connected, or,
 * with TLS (struct dial_tls), once the TLS handshake as a client is done as well: the reactor's
 * readiness drives it (net/tls.h), and the caller bounds it with its own timer (dial_close).
 * Frames then travel as TLS records, with the same queueing. Frames are written with dial_send (queued in memory and written as the socket accepts them,
 * watching REACTOR_WRITE meanwhile). Received frames go to on_frame in order; the bytes are
 * valid during the call only. A frame size < 0 or above max_frame_bytes closes the connection
 * before anything is allocated for it; the input buffer grows only as bytes arrive.
 *
 * Lifetime: the connection ends either by dial_close() (the caller's: no callback runs after it)
 * or by a failure (connect refused, EOF, error, bad frame size): on_close(err) then runs once,
 * from the reactor loop, never from inside a dial_* call. After on_close returns, or after
 * dial_close, the struct dial is gone. dial_close may be called from on_connect and on_frame.
 *
 * All on the reactor thread. */
#ifndef SP_NET_DIAL_H
#define SP_NET_DIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/iobuf.h"
#include "net/reactor.h"

struct dial;
struct ssl_ctx_st;

/* TLS on an outbound connection. Borrowed: must outlive the dial. */
struct dial_tls {
    /* The client context for a connection whose TCP connect just succeeded (borrowed: the
     * connection takes its own reference), or NULL to fail it. now_ms: the reactor's clock. */
    struct ssl_ctx_st *(*ctx_get)(int64_t now_ms, void *data);
    void *data;
};

struct dial_handler {
    void (*on_connect)(struct dial *d, void *data);
    void (*on_frame)(struct dial *d, uint8_t *frame, size_t len, void *data);
    /* err: -errno (connect or socket failure), -ERR_CLOSED (EOF), -ERR_TOO_LARGE (frame),
     * -EPROTO (TLS: handshake refused or failed, a bad record; dial_tls_error says why). */
    void (*on_close)(struct dial *d, int err, void *data);
    void *data;
};

/* Starts connecting to host:port (a numeric address or a name: names are resolved here, with a
 * blocking lookup); tls NULL: plaintext. Returns 0 and *out, or -errno / -ERR_NOT_FOUND (name
 * not resolved) if the attempt failed at once (no callback runs then). */
int dial_open(struct reactor *r, const char *host, int port, size_t max_frame_bytes,
              const struct dial_tls *tls, const struct dial_handler *h, struct dial **out);

/* Queues the bytes of frames (moved out; memory chunks only) and writes what the socket takes.
 * Before on_connect the bytes wait. A write failure surfaces later as on_close. */
void dial_send(struct dial *d, struct iobuf *frames);

/* Bytes queued and not yet written. */
size_t dial_pending(const struct dial *d);

/* Closes the connection and drops queued bytes; no callback runs afterwards. */
void dial_close(struct dial *d);

/* Whether d is (or is to be, once connected) a TLS connection, and whether its handshake is
 * done. */
bool dial_tls_on(const struct dial *d);
bool dial_tls_established(const struct dial *d);
/* Why the TLS session failed ("certificate verify failed: ...", "tlsv13 alert certificate
 * required", "handshake: connection closed during the handshake"), or NULL when it did not:
 * for on_close(-EPROTO), valid during that call. */
const char *dial_tls_error(const struct dial *d);

#endif
