/* A small HTTP/1.1 server on the reactor, for the admin listener (server/admin.h).
 *
 * One request per connection: read the head (server/http.h), call the handler, write the
 * response with `Connection: close`, then close. It never blocks the reactor (non-blocking
 * sockets, writes resumed on EPOLLOUT) and bounds everything a client controls:
 *   - connections: at most max_connections at once; beyond that a new connection gets a
 *     best-effort 503 and is closed;
 *   - input: HTTP_HEAD_MAX bytes of head per connection (buffer allocated on accept), no bodies;
 *   - time: the head must arrive within timeout_ms of the accept (slow senders get 408), the
 *     response must be taken within timeout_ms of its start (slow readers are dropped);
 *   - after the response, the write side is shut down and input is drained for at most
 *     LINGER_MS (so that unread request bytes do not turn the close into a reset that destroys
 *     the response in flight), then the socket is closed.
 * Methods: GET and HEAD go to the handler (HEAD gets the head only); anything else gets 405.
 * A malformed or oversized head gets the status http_parse_request() names.
 *
 * All on the reactor thread. The handler runs synchronously and must not call httpd_close(). */
#ifndef SP_SERVER_HTTPD_H
#define SP_SERVER_HTTPD_H

#include <stdint.h>

#include "base/strbuf.h"
#include "net/reactor.h"
#include "server/http.h"

struct httpd;

struct httpd_limits {
    int max_connections; /* 0: 32 */
    int64_t timeout_ms;  /* 0: 10000 */
};

/* What the handler fills in. body is empty (initialised) when the handler is called. */
struct httpd_response {
    int status;                /* 200 unless set */
    const char *content_type;  /* static string, or NULL */
    const char *extra_headers; /* static "Name: value\r\n..." lines, or NULL */
    struct strbuf body;
};

typedef void (*httpd_handler_fn)(const struct http_request *req, struct httpd_response *resp,
                                 void *data);

/* Binds host:port (port 0: any free port) and serves on r. Returns 0 or -errno. */
int httpd_open(struct reactor *r, const char *host, int port, const struct httpd_limits *lim,
               httpd_handler_fn fn, void *data, struct httpd **out);
int httpd_port(const struct httpd *h);
/* Closes the listening socket and every connection at once, and frees h. */
void httpd_close(struct httpd *h);

#define HTTPD_STATUS_MAX 600

struct httpd_stats {
    uint64_t accepted;                    /* connections served */
    uint64_t refused;                     /* closed at accept: too many connections */
    uint64_t timeouts;                    /* connections dropped for being too slow */
    uint64_t responses[HTTPD_STATUS_MAX]; /* responses sent (started), by status */
    int open;                             /* connections now */
};
const struct httpd_stats *httpd_get_stats(const struct httpd *h);

#endif
