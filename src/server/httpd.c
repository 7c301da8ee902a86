/* The admin listener's HTTP server: accept, (TLS handshake,) read one request (head, then the
 * body its Content-Length announces), answer, close.
 *
 * Owns: the listening socket, every connection (a doubly linked list) with its request buffer,
 * response bytes and, for HTTPS, its struct tls; one timer per connection, and the statistics.
 *
 * Invariants:
 *  1. A connection is in the list, registered with the reactor and has its timer armed from
 *     accept until conn_free(), which undoes all three and frees it; nothing touches a
 *     connection after conn_free() (callbacks end right after calling it).
 *  2. stats.open == connections in the list <= max_connections.
 *  3. in_len <= in_cap; in_cap is HTTP_HEAD_MAX until a head announcing a longer request is
 *     read, then head_len + Content-Length (<= HTTP_HEAD_MAX + lim.body_max); req_len is 0
 *     until the head is complete, then head_len + Content-Length, and the request is answered
 *     as soon as in_len >= req_len (bytes beyond it, a pipelined request, are never looked
 *     at). The buffer is wiped before it is freed (it may hold a password).
 *     out_off <= head.len + body.len (the response is the head, then
 *     the handler's body; plain HTTP sends both with one sendmsg, HTTPS one record at a time,
 *     neither copies the body).
 *  4. c->events is what the reactor watches c->fd for; every state sets it to what it waits
 *     for (TLS may need the socket writable to read, or readable to write), so any READ or
 *     WRITE event means "try again" in the state the connection is in. HOLDING watches
 *     nothing (a socket error still ends it).
 *  5. c->tls is set from accept to LINGERING on an HTTPS server, NULL otherwise.
 *  6. c->pending is set exactly in WAITING, and then c->pending->c == c; a pending handle
 *     whose connection is gone has c == NULL (httpd_finish then only frees it). In WAITING,
 *     status, content_type and body hold the fallback answer. WAITING watches nothing.
 *
 * Connection states and transitions:
 *   HANDSHAKING --handshake done--> READING (HTTPS only; the state at accept)
 *   HANDSHAKING --TLS error, EOF or timer (handshake timeout)--> freed (counted, logged)
 *   READING   --request (head and body) complete, or refused (respond)--> WRITING, or
 *               HOLDING (delay_ms), or WAITING (the handler deferred its answer)
 *   WAITING   --httpd_finish(), or timer (timeout_ms: the handler's fallback answer)--> WRITING
 *   READING   --timer (timeout_ms after accept or handshake): 408 (respond)--> WRITING
 *   HOLDING   --timer (delay_ms)--> WRITING
 *   WRITING   --all written (start_linger: close_notify, shutdown SHUT_WR)--> LINGERING
 *   LINGERING --EOF, error, LINGER_DRAIN_MAX bytes or timer (LINGER_MS)--> freed
 *   any       --socket error, or WRITING's timer--> freed
 *   READING   --EOF before a complete request--> freed */
#include "server/httpd.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "net/conn.h"
#include "net/tls.h"

#define DEFAULT_MAX_CONNECTIONS 32
#define DEFAULT_TIMEOUT_MS 10000
#define LINGER_MS 2000
#define LINGER_DRAIN_MAX (64 * 1024)
#define ACCEPT_PAUSE_MS 100
#define ACCEPTS_PER_EVENT 64
#define TLS_LOG_EVERY_MS 1000
#define PEER_MAX 64

enum hconn_state { HC_HANDSHAKING, HC_READING, HC_HOLDING, HC_WAITING, HC_WRITING, HC_LINGERING };

struct httpd_pending {
    struct hconn *c; /* invariant 6 */
};

struct hconn {
    struct httpd *h;
    struct hconn *prev;
    struct hconn *next;
    int fd;
    enum hconn_state state;
    uint32_t events;            /* invariant 4 */
    struct tls *tls;            /* invariant 5 */
    char peer[PEER_MAX];        /* the client's address, without its port */
    char *in;                   /* the request: in_cap bytes */
    size_t in_cap;              /* invariant 3 */
    size_t in_len;              /* bytes read */
    size_t req_len;             /* head + body, once the head is complete; 0 before */
    struct strbuf head;         /* response head */
    struct strbuf body;         /* response body (the handler's, moved here) */
    size_t out_off;             /* bytes of head + body sent */
    size_t drained;             /* bytes discarded while lingering */
    struct reactor_timer timer; /* the deadline of the current state */
    struct httpd_pending *pending; /* invariant 6 */
    int fallback_status;           /* WAITING: the answer at timeout */
    const char *fallback_type;
    const char *fallback_extra;
};

struct httpd {
    struct reactor *r;
    int fd;
    int port;
    struct httpd_limits lim;
    const struct listener_tls *tls; /* NULL: plain HTTP */
    httpd_handler_fn fn;
    void *data;
    struct hconn *conns;
    bool accept_paused;
    struct reactor_timer accept_timer;
    int64_t tls_log_ms;    /* when the last handshake failure was logged */
    uint64_t tls_unlogged; /* failures since, not logged */
    struct httpd_stats stats;
};

/* Wipes and frees the request buffer (a body may hold a password, a head credentials). */
static void drop_request(struct hconn *c)
{
    if (c->in)
        explicit_bzero(c->in, c->in_len);
    mem_free(c->in);
    c->in = NULL;
    c->in_len = c->in_cap = c->req_len = 0;
}

static void conn_free(struct hconn *c)
{
    struct httpd *h = c->h;
    if (c->pending)
        c->pending->c = NULL;
    reactor_timer_stop(h->r, &c->timer);
    reactor_del(h->r, c->fd);
    tls_free(c->tls);
    close(c->fd);
    if (c->prev)
        c->prev->next = c->next;
    else
        h->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    h->stats.open--;
    strbuf_destroy(&c->head);
    strbuf_destroy(&c->body);
    drop_request(c);
    mem_free(c);
}

/* Watches c's socket for events (invariant 4). Returns 0 or a negative code. */
static int watch(struct hconn *c, uint32_t events)
{
    if (events == c->events)
        return 0;
    int rc = reactor_mod(c->h->r, c->fd, events);
    if (rc == 0)
        c->events = events;
    return rc;
}

/* What a TLS call that did not finish waits for, as a watch: -EAGAIN once set, else -EIO. */
static int tls_wait(struct hconn *c, enum tls_status st)
{
    uint32_t ev = st == TLS_WANT_READ ? REACTOR_READ : REACTOR_WRITE;
    return watch(c, ev) == 0 ? -EAGAIN : -EIO;
}

static void tls_failed(struct hconn *c, const char *why)
{
    struct httpd *h = c->h;
    h->stats.tls_handshake_failures++;
    int64_t now = reactor_now_ms(h->r);
    if (h->tls_log_ms && now - h->tls_log_ms < TLS_LOG_EVERY_MS) {
        h->tls_unlogged++;
        return;
    }
    char q[200];
    log_warn("admin_tls_handshake_failed", "port=%d peer=%s reason=%s unlogged=%" PRIu64, h->port,
             c->peer, log_quote(q, sizeof(q), why, strlen(why)), h->tls_unlogged);
    h->tls_log_ms = now;
    h->tls_unlogged = 0;
}

static void start_linger(struct hconn *c)
{
    /* close_notify (HTTPS), then FIN after the response; input still arriving is read and
     * dropped until the peer closes, so the kernel does not answer it with a reset that could
     * discard the response */
    tls_free(c->tls);
    c->tls = NULL;
    (void)shutdown(c->fd, SHUT_WR);
    c->state = HC_LINGERING;
    if (watch(c, REACTOR_READ) != 0) {
        conn_free(c);
        return;
    }
    reactor_timer_start(c->h->r, &c->timer, LINGER_MS);
}

/* Sends response bytes from out_off. Returns the count sent (> 0), -EAGAIN (the watch is set
 * for what it waits for) or another negative code (the connection is done for). */
static ssize_t send_some(struct hconn *c)
{
    const char *p =
        c->out_off < c->head.len ? c->head.p + c->out_off : c->body.p + (c->out_off - c->head.len);
    size_t len = c->out_off < c->head.len ? c->head.len - c->out_off
                                          : c->body.len - (c->out_off - c->head.len);
    if (c->tls) {
        /* a repeated call after WANT_* passes the same bytes: out_off has not moved */
        size_t n;
        enum tls_status st = tls_write(c->tls, p, len, &n);
        if (st == TLS_OK)
            return (ssize_t)n;
        return st == TLS_WANT_READ || st == TLS_WANT_WRITE ? tls_wait(c, st) : -EIO;
    }
    for (;;) {
        struct iovec iov[2];
        int n_iov = 0;
        iov[n_iov++] = (struct iovec){(void *)p, len};
        if (c->out_off < c->head.len && c->body.len > 0)
            iov[n_iov++] = (struct iovec){c->body.p, c->body.len};
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n_iov};
        ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return watch(c, REACTOR_WRITE) == 0 ? -EAGAIN : -EIO;
        return n > 0 ? n : -EIO;
    }
}

/* Reads request bytes into buf. Returns the count (> 0), 0 at EOF, -EAGAIN (the watch is set)
 * or another negative code. */
static ssize_t recv_some(struct hconn *c, char *buf, size_t cap)
{
    if (c->tls) {
        size_t n;
        enum tls_status st = tls_read(c->tls, buf, cap, &n);
        if (st == TLS_OK)
            return (ssize_t)n;
        if (st == TLS_EOF)
            return 0;
        return st == TLS_WANT_READ || st == TLS_WANT_WRITE ? tls_wait(c, st) : -EIO;
    }
    for (;;) {
        ssize_t n = read(c->fd, buf, cap);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return watch(c, REACTOR_READ) == 0 ? -EAGAIN : -EIO;
        return n >= 0 ? n : -EIO;
    }
}

/* Writes what the socket takes. Returns false if c was freed. */
static bool write_some(struct hconn *c)
{
    size_t total = c->head.len + c->body.len;
    while (c->out_off < total) {
        ssize_t n = send_some(c);
        if (n == -EAGAIN)
            return true;
        if (n <= 0) {
            conn_free(c);
            return false;
        }
        c->out_off += (size_t)n;
    }
    strbuf_destroy(&c->head);
    strbuf_destroy(&c->body);
    c->out_off = 0;
    start_linger(c);
    return true;
}

static const char *error_text(int status)
{
    switch (status) {
    case 400:
        return "bad request\n";
    case 405:
        return "method not allowed\n";
    case 408:
        return "request timeout\n";
    case 411:
        return "length required: send the body with Content-Length (chunked transfer coding is "
               "not accepted)\n";
    case 414:
        return "request target too long\n";
    case 431:
        return "request header fields too large\n";
    case 501:
        return "method not implemented\n";
    case 505:
        return "HTTP version not supported: use HTTP/1.1 or HTTP/1.0\n";
    }
    return "";
}

static void start_write(struct hconn *c)
{
    c->state = HC_WRITING;
    reactor_timer_start(c->h->r, &c->timer, c->h->lim.timeout_ms);
    write_some(c);
}

/* Starts sending a response: the head now, the body moved from *body. */
static void send_response(struct hconn *c, int status, const char *content_type,
                          const char *extra, struct strbuf *body, bool head_only)
{
    struct httpd *h = c->h;
    if (status >= 400 && body->len == 0) {
        if (status == 413)
            strbuf_printf(body, "request body too large: at most %zu bytes\n", h->lim.body_max);
        else
            strbuf_puts(body, error_text(status));
        content_type = "text/plain; charset=utf-8";
    }
    http_write_head(&c->head, status, content_type, body->len, extra);
    if (head_only)
        strbuf_destroy(body);
    c->body = *body; /* moved: no copy of a large /metrics body */
    strbuf_init(body);
    if (status > 0 && status < HTTPD_STATUS_MAX)
        h->stats.responses[status]++;
}

struct httpd_pending *httpd_defer(struct httpd_response *resp)
{
    if (!resp->pending)
        resp->pending = mem_calloc(1, sizeof(*resp->pending));
    return resp->pending;
}

void httpd_finish(struct httpd_pending *p, int status, const char *content_type,
                  struct strbuf *body)
{
    struct hconn *c = p->c;
    mem_free(p);
    if (!c) {
        strbuf_destroy(body);
        return;
    }
    c->pending = NULL;
    strbuf_destroy(&c->body); /* the fallback */
    reactor_timer_stop(c->h->r, &c->timer);
    send_response(c, status, content_type, NULL, body, false);
    start_write(c);
}

/* Builds the response (the handler's, or an error) and starts writing it, holds it, or waits
 * for the handler's deferred answer. */
static void respond(struct hconn *c, struct http_request *req, int error_status)
{
    struct httpd *h = c->h;
    struct httpd_response resp = {.status = 200};
    strbuf_init(&resp.body);
    bool head_only = false;
    if (error_status) {
        resp.status = error_status;
    } else {
        head_only = http_method_is(req, "HEAD");
        req->peer = c->peer;
        req->body = c->in + req->head_len;
        req->body_len = req->content_length > 0 ? (size_t)req->content_length : 0;
        h->fn(req, &resp, h->data);
    }
    drop_request(c); /* neither the head (an Authorization field) nor the body is needed now */
    if (resp.pending) {
        c->state = HC_WAITING;
        c->pending = resp.pending;
        c->pending->c = c;
        c->fallback_status = resp.status;
        c->fallback_type = resp.content_type;
        c->fallback_extra = resp.extra_headers;
        c->body = resp.body; /* the fallback, kept until the answer or the timeout */
        if (watch(c, 0) != 0) {
            conn_free(c);
            return;
        }
        reactor_timer_start(h->r, &c->timer, h->lim.timeout_ms);
        return;
    }
    send_response(c, resp.status, resp.content_type, resp.extra_headers, &resp.body, head_only);
    if (resp.delay_ms > 0) {
        c->state = HC_HOLDING;
        if (watch(c, 0) != 0) {
            conn_free(c);
            return;
        }
        reactor_timer_start(h->r, &c->timer,
                            resp.delay_ms < HTTPD_HOLD_MAX_MS ? resp.delay_ms : HTTPD_HOLD_MAX_MS);
        return;
    }
    start_write(c);
}

/* A complete head: the length of the whole request (the body's framing checked), or minus
 * the status to refuse it with. */
static int64_t request_length(const struct http_request *req)
{
    if (req->content_length < 0 && (http_method_is(req, "POST") || http_method_is(req, "PUT")))
        return -411; /* RFC 9110 §8.6: a body without a length */
    return (int64_t)req->head_len + (req->content_length > 0 ? req->content_length : 0);
}

/* READING: takes bytes, answers once the request is complete or refused. */
static void on_readable(struct hconn *c)
{
    for (;;) {
        size_t room = c->in_cap - c->in_len;
        CHECK(room > 0); /* a full buffer always parses to an answer, or holds the request */
        ssize_t n = recv_some(c, c->in + c->in_len, room);
        if (n == -EAGAIN)
            return;
        if (n <= 0) {
            conn_free(c); /* EOF or error before a complete request: nobody to answer */
            return;
        }
        c->in_len += (size_t)n;
        struct http_request req;
        if (c->req_len == 0) {
            int rc = http_parse_request(c->in, c->in_len, &req);
            if (rc < 0) {
                respond(c, NULL, -rc);
                return;
            }
            if (rc == 0)
                continue;
            int64_t len = request_length(&req);
            if (req.content_length > (int64_t)c->h->lim.body_max)
                len = -413;
            if (len < 0) {
                respond(c, NULL, (int)-len);
                return;
            }
            c->req_len = (size_t)len;
            if (c->req_len > c->in_cap) {
                CHECK(c->req_len <= HTTP_HEAD_MAX + c->h->lim.body_max);
                char *in = mem_alloc(c->req_len);
                memcpy(in, c->in, c->in_len);
                explicit_bzero(c->in, c->in_len);
                mem_free(c->in);
                c->in = in;
                c->in_cap = c->req_len;
            }
        }
        if (c->in_len >= c->req_len) {
            /* parsed again: the buffer may have moved since; the head has not changed */
            CHECK(http_parse_request(c->in, c->in_len, &req) > 0);
            respond(c, &req, 0);
            return;
        }
    }
}

/* HANDSHAKING: one step of the TLS handshake; once done, the head is read (its first bytes may
 * have come with the client's Finished and wait in OpenSSL, unseen by the reactor). */
static void on_handshake(struct hconn *c)
{
    enum tls_status st = tls_handshake(c->tls);
    if (st == TLS_OK) {
        c->state = HC_READING;
        reactor_timer_start(c->h->r, &c->timer, c->h->lim.timeout_ms);
        on_readable(c);
        return;
    }
    if (st == TLS_WANT_READ || st == TLS_WANT_WRITE) {
        if (tls_wait(c, st) != -EAGAIN)
            conn_free(c);
        return;
    }
    tls_failed(c, st == TLS_EOF ? "connection closed during the handshake" : tls_error(c->tls));
    conn_free(c);
}

static void on_linger_readable(struct hconn *c)
{
    char buf[4096];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        c->drained += n > 0 ? (size_t)n : 0;
        if (n <= 0 || c->drained > LINGER_DRAIN_MAX) {
            conn_free(c);
            return;
        }
    }
}

static void io_cb(struct reactor *r, int fd, uint32_t events, void *data)
{
    struct hconn *c = data;
    if (events & REACTOR_ERROR) {
        conn_free(c);
        return;
    }
    switch (c->state) { /* invariant 4: the event is the one the state waits for */
    case HC_HANDSHAKING:
        on_handshake(c);
        return;
    case HC_READING:
        on_readable(c);
        return;
    case HC_HOLDING:
    case HC_WAITING:
        return;
    case HC_WRITING:
        write_some(c);
        return;
    case HC_LINGERING:
        on_linger_readable(c);
        return;
    }
}

static void timer_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct hconn *c = data;
    switch (c->state) {
    case HC_HANDSHAKING:
        tls_failed(c, "handshake timed out");
        conn_free(c);
        return;
    case HC_READING:
        c->h->stats.timeouts++;
        respond(c, NULL, 408);
        return;
    case HC_HOLDING:
        start_write(c);
        return;
    case HC_WAITING: {
        c->h->stats.timeouts++;
        c->pending->c = NULL; /* the owner's httpd_finish() only frees it now */
        c->pending = NULL;
        struct strbuf body = c->body;
        strbuf_init(&c->body);
        send_response(c, c->fallback_status, c->fallback_type, c->fallback_extra, &body, false);
        start_write(c);
        return;
    }
    case HC_WRITING:
        c->h->stats.timeouts++;
        conn_free(c);
        return;
    case HC_LINGERING:
        conn_free(c);
        return;
    }
}

static void refuse(struct httpd *h, int fd)
{
    /* in plain text even on an HTTPS port: a TLS client sees a failed handshake, as it would
     * for the close alone */
    static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                               "Connection: close\r\nRetry-After: 1\r\n\r\n";
    (void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    close(fd);
    h->stats.refused++;
}

/* The address of sa without its port, an IPv4-mapped IPv6 address as IPv4. */
static void peer_text(const struct sockaddr_storage *sa, char *out, size_t cap)
{
    snprintf(out, cap, "?");
    if (sa->ss_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)cap);
    } else if (sa->ss_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a))
            inet_ntop(AF_INET, &a->s6_addr[12], out, (socklen_t)cap);
        else
            inet_ntop(AF_INET6, a, out, (socklen_t)cap);
    }
}

static void accept_one(struct httpd *h, int fd, const struct sockaddr_storage *sa)
{
    if (h->stats.open >= h->lim.max_connections) {
        refuse(h, fd);
        return;
    }
    struct tls *tls = NULL;
    if (h->tls) {
        struct ssl_ctx_st *ctx = h->tls->ctx_get(reactor_now_ms(h->r), h->tls->data);
        tls = ctx ? tls_new(ctx, fd) : NULL;
        if (!tls) {
            close(fd);
            return;
        }
    }
    struct hconn *c = mem_calloc(1, sizeof(*c));
    c->h = h;
    c->fd = fd;
    c->tls = tls;
    c->state = tls ? HC_HANDSHAKING : HC_READING;
    c->events = REACTOR_READ;
    peer_text(sa, c->peer, sizeof(c->peer));
    c->in = mem_alloc(HTTP_HEAD_MAX);
    c->in_cap = HTTP_HEAD_MAX;
    strbuf_init(&c->head);
    strbuf_init(&c->body);
    reactor_timer_init(&c->timer, timer_cb, c);
    if (reactor_add(h->r, fd, REACTOR_READ, io_cb, c) != 0) {
        tls_free(tls);
        close(fd);
        mem_free(c->in);
        mem_free(c);
        return;
    }
    c->next = h->conns;
    if (h->conns)
        h->conns->prev = c;
    h->conns = c;
    h->stats.open++;
    h->stats.accepted++;
    int64_t deadline = h->lim.timeout_ms;
    if (tls && h->tls->handshake_timeout_ms > 0)
        deadline = h->tls->handshake_timeout_ms;
    reactor_timer_start(h->r, &c->timer, deadline);
}

static void accept_cb(struct reactor *r, int lfd, uint32_t events, void *data);

static void resume_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct httpd *h = data;
    if (reactor_add(r, h->fd, REACTOR_READ, accept_cb, h) != 0) {
        reactor_timer_start(r, t, ACCEPT_PAUSE_MS);
        return;
    }
    h->accept_paused = false;
}

static void accept_cb(struct reactor *r, int lfd, uint32_t events, void *data)
{
    struct httpd *h = data;
    for (int i = 0; i < ACCEPTS_PER_EVENT; i++) {
        struct sockaddr_storage sa;
        socklen_t sl = sizeof(sa);
        memset(&sa, 0, sizeof(sa));
        int fd = accept4(lfd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            accept_one(h, fd, &sa);
            continue;
        }
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
            continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            /* level-triggered: the pending connection would be reported forever */
            log_warn("admin_accept_paused", "port=%d err=\"%s\"", h->port, err_str(-errno));
            reactor_del(r, lfd);
            h->accept_paused = true;
            reactor_timer_start(r, &h->accept_timer, ACCEPT_PAUSE_MS);
        }
        return;
    }
}

int httpd_open(struct reactor *r, const char *host, int port, const struct httpd_limits *lim,
               const struct listener_tls *tls, httpd_handler_fn fn, void *data, struct httpd **out)
{
    int bound;
    int fd = listener_bind_tcp(host, port, &bound);
    if (fd < 0)
        return fd;
    struct httpd *h = mem_calloc(1, sizeof(*h));
    h->r = r;
    h->fd = fd;
    h->port = bound;
    h->lim = *lim;
    if (h->lim.max_connections <= 0)
        h->lim.max_connections = DEFAULT_MAX_CONNECTIONS;
    if (h->lim.timeout_ms <= 0)
        h->lim.timeout_ms = DEFAULT_TIMEOUT_MS;
    if (h->lim.body_max == 0 || h->lim.body_max > HTTP_BODY_LIMIT)
        h->lim.body_max = h->lim.body_max ? HTTP_BODY_LIMIT : HTTP_BODY_MAX;
    h->tls = tls;
    h->fn = fn;
    h->data = data;
    reactor_timer_init(&h->accept_timer, resume_cb, h);
    int rc = reactor_add(r, fd, REACTOR_READ, accept_cb, h);
    if (rc != 0) {
        close(fd);
        mem_free(h);
        return rc;
    }
    *out = h;
    return 0;
}

int httpd_port(const struct httpd *h)
{
    return h->port;
}

void httpd_close(struct httpd *h)
{
    if (!h)
        return;
    while (h->conns)
        conn_free(h->conns);
    reactor_timer_stop(h->r, &h->accept_timer);
    if (!h->accept_paused)
        reactor_del(h->r, h->fd);
    close(h->fd);
    mem_free(h);
}

const struct httpd_stats *httpd_get_stats(const struct httpd *h)
{
    return &h->stats;
}
