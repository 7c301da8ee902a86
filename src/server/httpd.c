/* The admin listener's HTTP server: accept, read one request head, answer, close.
 *
 * Owns: the listening socket, every connection (a doubly linked list) with its head buffer and
 * response bytes, one timer per connection, and the statistics.
 *
 * Invariants:
 *  1. A connection is in the list, registered with the reactor and has its timer armed from
 *     accept until conn_free(), which undoes all three and frees it; nothing touches a
 *     connection after conn_free() (callbacks end right after calling it).
 *  2. stats.open == connections in the list <= max_connections.
 *  3. in_len <= HTTP_HEAD_MAX; out_off <= head.len + body.len (the response is the head, then
 *     the handler's body, sent with one sendmsg without copying the body).
 *
 * Connection states and transitions:
 *   READING   --head complete or refused (respond)--> WRITING
 *   READING   --timer (timeout_ms after accept): 408 (respond)--> WRITING
 *   WRITING   --all written (finish_write: shutdown SHUT_WR)--> LINGERING
 *   LINGERING --EOF, error, LINGER_DRAIN_MAX bytes or timer (LINGER_MS)--> freed
 *   any       --socket error, or WRITING's timer--> freed
 *   READING   --EOF before a complete head--> freed */
#include "server/httpd.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "net/conn.h"

#define DEFAULT_MAX_CONNECTIONS 32
#define DEFAULT_TIMEOUT_MS 10000
#define LINGER_MS 2000
#define LINGER_DRAIN_MAX (64 * 1024)
#define ACCEPT_PAUSE_MS 100
#define ACCEPTS_PER_EVENT 64

enum hconn_state { HC_READING, HC_WRITING, HC_LINGERING };

struct hconn {
    struct httpd *h;
    struct hconn *prev;
    struct hconn *next;
    int fd;
    enum hconn_state state;
    char *in;                   /* HTTP_HEAD_MAX bytes */
    size_t in_len;              /* invariant 3 */
    struct strbuf head;         /* response head */
    struct strbuf body;         /* response body (the handler's, moved here) */
    size_t out_off;             /* bytes of head + body sent */
    size_t drained;             /* bytes discarded while lingering */
    struct reactor_timer timer; /* the deadline of the current state */
};

struct httpd {
    struct reactor *r;
    int fd;
    int port;
    struct httpd_limits lim;
    httpd_handler_fn fn;
    void *data;
    struct hconn *conns;
    bool accept_paused;
    struct reactor_timer accept_timer;
    struct httpd_stats stats;
};

static void conn_free(struct hconn *c)
{
    struct httpd *h = c->h;
    reactor_timer_stop(h->r, &c->timer);
    reactor_del(h->r, c->fd);
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
    mem_free(c->in);
    mem_free(c);
}

static void start_linger(struct hconn *c)
{
    /* FIN after the response; input still arriving is read and dropped until the peer closes,
     * so the kernel does not answer it with a reset that could discard the response */
    (void)shutdown(c->fd, SHUT_WR);
    c->state = HC_LINGERING;
    if (reactor_mod(c->h->r, c->fd, REACTOR_READ) != 0) {
        conn_free(c);
        return;
    }
    reactor_timer_start(c->h->r, &c->timer, LINGER_MS);
}

/* Writes what the socket takes. Returns false if c was freed. */
static bool write_some(struct hconn *c)
{
    size_t total = c->head.len + c->body.len;
    while (c->out_off < total) {
        struct iovec iov[2];
        int n_iov = 0;
        if (c->out_off < c->head.len)
            iov[n_iov++] = (struct iovec){c->head.p + c->out_off, c->head.len - c->out_off};
        size_t body_off = c->out_off > c->head.len ? c->out_off - c->head.len : 0;
        if (c->body.len > body_off)
            iov[n_iov++] = (struct iovec){c->body.p + body_off, c->body.len - body_off};
        struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n_iov};
        ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (reactor_mod(c->h->r, c->fd, REACTOR_WRITE) != 0) {
                conn_free(c);
                return false;
            }
            return true;
        }
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
        return "method not allowed: use GET\n";
    case 408:
        return "request timeout\n";
    case 413:
        return "request bodies are not accepted\n";
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

/* Builds the response (the handler's, or an error) and starts writing it. */
static void respond(struct hconn *c, const struct http_request *req, int error_status)
{
    struct httpd *h = c->h;
    struct httpd_response resp = {.status = 200};
    strbuf_init(&resp.body);
    bool head_only = false;
    if (error_status) {
        resp.status = error_status;
    } else if (http_method_is(req, "GET") || http_method_is(req, "HEAD")) {
        head_only = http_method_is(req, "HEAD");
        h->fn(req, &resp, h->data);
    } else {
        resp.status = 405;
    }
    if (resp.status >= 400 && resp.body.len == 0) {
        strbuf_puts(&resp.body, error_text(resp.status));
        resp.content_type = "text/plain; charset=utf-8";
    }
    const char *extra = resp.status == 405 ? "Allow: GET, HEAD\r\n" : resp.extra_headers;
    http_write_head(&c->head, resp.status, resp.content_type, resp.body.len, extra);
    if (head_only)
        strbuf_destroy(&resp.body);
    c->body = resp.body; /* moved: no copy of a large /metrics body */
    if (resp.status > 0 && resp.status < HTTPD_STATUS_MAX)
        h->stats.responses[resp.status]++;
    mem_free(c->in);
    c->in = NULL;
    c->in_len = 0;
    c->state = HC_WRITING;
    reactor_timer_start(h->r, &c->timer, h->lim.timeout_ms);
    write_some(c);
}

/* READING: takes bytes, answers once the head is complete or refused. */
static void on_readable(struct hconn *c)
{
    for (;;) {
        size_t room = HTTP_HEAD_MAX - c->in_len;
        ssize_t n = room ? read(c->fd, c->in + c->in_len, room) : 0;
        if (room && n < 0 && errno == EINTR)
            continue;
        if (room && n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (room && n <= 0) {
            conn_free(c); /* EOF or error before a complete head: nobody to answer */
            return;
        }
        c->in_len += (size_t)n;
        struct http_request req;
        int rc = http_parse_request(c->in, c->in_len, &req);
        if (rc > 0) {
            respond(c, &req, 0);
            return;
        }
        if (rc < 0) {
            respond(c, NULL, -rc);
            return;
        }
        CHECK(room > 0); /* a full buffer always parses to an answer */
    }
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
    switch (c->state) {
    case HC_READING:
        if (events & REACTOR_READ)
            on_readable(c);
        return;
    case HC_WRITING:
        if (events & REACTOR_WRITE)
            write_some(c);
        return;
    case HC_LINGERING:
        if (events & REACTOR_READ)
            on_linger_readable(c);
        return;
    }
}

static void timer_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct hconn *c = data;
    if (c->state == HC_READING) {
        c->h->stats.timeouts++;
        respond(c, NULL, 408);
        return;
    }
    if (c->state == HC_WRITING)
        c->h->stats.timeouts++;
    conn_free(c);
}

static void refuse(struct httpd *h, int fd)
{
    static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                               "Connection: close\r\nRetry-After: 1\r\n\r\n";
    (void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    close(fd);
    h->stats.refused++;
}

static void accept_one(struct httpd *h, int fd)
{
    if (h->stats.open >= h->lim.max_connections) {
        refuse(h, fd);
        return;
    }
    struct hconn *c = mem_calloc(1, sizeof(*c));
    c->h = h;
    c->fd = fd;
    c->state = HC_READING;
    c->in = mem_alloc(HTTP_HEAD_MAX);
    strbuf_init(&c->head);
    strbuf_init(&c->body);
    reactor_timer_init(&c->timer, timer_cb, c);
    if (reactor_add(h->r, fd, REACTOR_READ, io_cb, c) != 0) {
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
    reactor_timer_start(h->r, &c->timer, h->lim.timeout_ms);
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
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            accept_one(h, fd);
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
               httpd_handler_fn fn, void *data, struct httpd **out)
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
