/* A small HTTP/1.1 server on the reactor, for the admin listener (server/admin.h), in plain
 * HTTP or HTTPS.
 *
 * One request per connection: read the head (server/http.h) and the body its Content-Length
 * announces, call the handler, write the response with `Connection: close`, then close. It never blocks the reactor (non-blocking
 * sockets, writes resumed on EPOLLOUT) and bounds everything a client controls:
 *   - connections: at most max_connections at once; beyond that a new connection gets a
 *     best-effort 503 and is closed;
 *   - input: HTTP_HEAD_MAX bytes of head per connection (buffer allocated on accept), then
 *     a body of at most body_max bytes (the buffer grows to the announced length once the
 *     head is complete; more is refused with 413 at the head, before it is sent). A body is
 *     framed by Content-Length only: POST and PUT without it get 411, and so does any
 *     Transfer-Encoding (chunked); bytes after the body (a pipelined request) are never read
 *     as a request. No `100 Continue` is sent: a client that waits for one sends its body after
 *     its own timeout (curl: 1 s; a body under 1 MiB it sends at once);
 *   - time: the whole request must arrive within timeout_ms of the accept (slow senders get
 *     408), the response must be taken within timeout_ms of its start (slow readers are
 *     dropped);
 *   - HTTPS (a struct listener_tls hook, net/conn.h): the TLS handshake (net/tls.h) runs first,
 *     non-blocking, and must be done within the hook's handshake_timeout_ms (0: timeout_ms) of
 *     the accept; the head's timeout_ms then starts. A failed handshake (garbage, a plaintext
 *     request, a client that does not trust the certificate) closes the connection, counted and
 *     logged (admin_tls_handshake_failed, at most a line a second); the context comes from the
 *     hook at each accept, so a reloaded certificate serves the next connection;
 *   - a response the handler asks to hold (delay_ms: a failed authentication) waits at most
 *     HTTPD_HOLD_MAX_MS before it is written, reading nothing meanwhile;
 *   - after the response, the write side is shut down and input is drained for at most
 *     LINGER_MS (so that unread request bytes do not turn the close into a reset that destroys
 *     the response in flight), then the socket is closed.
 * Every method goes to the handler, which answers 405 (with an Allow header) for those its path
 * does not take; HEAD gets the head of the handler's answer only. A malformed or oversized
 * head gets the status http_parse_request() names. The request buffer is wiped once answered.
 *
 * All on the reactor thread. The handler runs synchronously and must not call httpd_close(). */
#ifndef SP_SERVER_HTTPD_H
#define SP_SERVER_HTTPD_H

#include <stdint.h>

#include "base/strbuf.h"
#include "net/reactor.h"
#include "server/http.h"

struct httpd;
struct listener_tls;

struct httpd_limits {
    int max_connections; /* 0: 32 */
    int64_t timeout_ms;  /* 0: 10000 */
    size_t body_max;     /* request body bytes, at most HTTP_BODY_LIMIT; 0: HTTP_BODY_MAX */
};

#define HTTPD_HOLD_MAX_MS 10000

struct httpd_pending;

/* What the handler fills in. body is empty (initialised) when the handler is called. */
struct httpd_response {
    int status;                /* 200 unless set */
    const char *content_type;  /* static string, or NULL */
    const char *extra_headers; /* static "Name: value\r\n..." lines, or NULL */
    int64_t delay_ms;          /* > 0: hold the response this long (at most HTTPD_HOLD_MAX_MS) */
    struct strbuf body;
    struct httpd_pending *pending; /* set by httpd_defer() */
};

/* Called by a handler that answers later (the answer waits for a commit): the connection waits,
 * reading nothing, for httpd_finish() on the handle returned. What resp holds when the handler
 * returns is the answer sent instead if timeout_ms passes first. The caller must call
 * httpd_finish() exactly once for every handle, also after the connection or the server is
 * gone (it then only frees the handle). The request (req and its body) is not valid after the
 * handler returns: copy what the answer needs. */
struct httpd_pending *httpd_defer(struct httpd_response *resp);
/* Sends the deferred answer (status, static content_type, body moved from *body, which is left
 * empty) and frees p. */
void httpd_finish(struct httpd_pending *p, int status, const char *content_type,
                  struct strbuf *body);

/* req->peer is the client's address (no port) as inet_ntop writes it (IPv4-mapped IPv6 as
 * IPv4); req->body[0, body_len) the request's body (valid during the call only). */
typedef void (*httpd_handler_fn)(const struct http_request *req, struct httpd_response *resp,
                                 void *data);

/* Binds host:port (port 0: any free port) and serves on r; with tls (borrowed, must outlive
 * the server; its principal callback is not used), HTTPS only. Returns 0 or -errno. */
int httpd_open(struct reactor *r, const char *host, int port, const struct httpd_limits *lim,
               const struct listener_tls *tls, httpd_handler_fn fn, void *data, struct httpd **out);
int httpd_port(const struct httpd *h);
/* Closes the listening socket and every connection at once, and frees h. */
void httpd_close(struct httpd *h);

#define HTTPD_STATUS_MAX 600

struct httpd_stats {
    uint64_t accepted;                    /* connections served */
    uint64_t refused;                     /* closed at accept: too many connections */
    uint64_t timeouts;                    /* connections dropped for being too slow */
    uint64_t tls_handshake_failures;      /* HTTPS connections closed at the handshake (it
                                             failed or timed out) */
    uint64_t responses[HTTPD_STATUS_MAX]; /* responses sent (started), by status */
    int open;                             /* connections now */
};
const struct httpd_stats *httpd_get_stats(const struct httpd *h);

#endif
