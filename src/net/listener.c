/* A listener: one or more listening sockets (endpoints) that accept connections up to a shared
 * cap and hand them to conn.c.
 *
 * Owns: the listening descriptors, the list of its connections (until their on_close runs), the
 * shared 64 KiB read buffer (and, with a TLS endpoint, the 16 KiB record buffer) and the
 * statistics.
 *
 * Invariants:
 *  1. refs = 1 while open (dropped by listener_close) + 1 per struct conn not yet freed + 1 per
 *     listener callback running; the struct is freed when refs reaches 0, so connections and
 *     callbacks never see it freed under them.
 *  2. nopen = connections in `conns` whose socket is open; accepting stops adding at
 *     max_connections (excess sockets are accepted and closed at once).
 *  3. every endpoint's fd is registered with the reactor iff the listener is ACCEPTING.
 *
 * States and transitions:
 *   ACCEPTING --accept4 fails with EMFILE/ENFILE/ENOBUFS/ENOMEM (pause_accepting)--> PAUSED
 *   PAUSED    --accept_timer, 100 ms later (resume_cb)--> ACCEPTING
 *   either    --listener_close--> CLOSED (every connection finalized, on_close run)
 *   CLOSED    --last reference dropped (listener_unref)--> freed
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "net/conn.h"
#include "net/conn_internal.h"
#include "net/tls.h"

#define LISTEN_BACKLOG 1024
/* Accepts per readable event; level-triggered, so the rest waits one iteration. */
#define ACCEPTS_PER_EVENT 1024
#define ACCEPT_PAUSE_MS 100
#define WARN_INTERVAL_MS 1000

/* Defaults for limits left at 0 (the values conn.h documents). */
#define DEFAULT_MAX_FRAME_BYTES ((size_t)100 << 20)
#define DEFAULT_MAX_QUEUED_BYTES ((size_t)64 << 20)
#define DEFAULT_MAX_INFLIGHT 1000

static void accept_cb(struct reactor *r, int fd, uint32_t events, void *data);

void listener_unref(struct listener *l)
{
    CHECK(l->refs > 0);
    if (--l->refs > 0)
        return;
    CHECK(l->closed && l->conns == NULL);
    mem_free(l->scratch);
    mem_free(l->tls_wbuf);
    mem_free(l);
}

/* True at most once per WARN_INTERVAL_MS for each *last_ms, so floods cannot flood the log. */
bool listener_warn_allowed(struct listener *l, int64_t *last_ms)
{
    int64_t now = reactor_now_ms(l->r);
    if (*last_ms != 0 && now - *last_ms < WARN_INTERVAL_MS)
        return false;
    *last_ms = now;
    return true;
}

static void resume_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct listener *l = data;
    if (l->closed || !l->accept_paused)
        return;
    for (int i = 0; i < l->n_eps; i++) {
        int rc = reactor_add(r, l->eps[i].fd, REACTOR_READ, accept_cb, &l->eps[i]);
        if (rc != 0) {
            log_error("accept_resume_failed", "port=%d err=\"%s\"", l->eps[i].port, err_str(rc));
            for (int j = 0; j < i; j++)
                reactor_del(r, l->eps[j].fd);
            reactor_timer_start(r, &l->accept_timer, ACCEPT_PAUSE_MS);
            return;
        }
    }
    l->accept_paused = false;
}

/* Out of descriptors or memory: accept4 would fail again at once, and level-triggered epoll
 * would report the pending connection forever. Stop watching for a while (every endpoint: they
 * share the descriptor table). */
static void pause_accepting(struct listener *l, int port, int err)
{
    if (listener_warn_allowed(l, &l->pause_warn_ms))
        log_warn("accept_paused", "port=%d err=\"%s\" pause_ms=%d open=%d", port,
                 err_str(-err), ACCEPT_PAUSE_MS, l->nopen);
    for (int i = 0; i < l->n_eps; i++)
        reactor_del(l->r, l->eps[i].fd);
    l->accept_paused = true;
    reactor_timer_start(l->r, &l->accept_timer, ACCEPT_PAUSE_MS);
}

static void refuse(struct listener *l, int port, int fd)
{
    close(fd);
    l->stats.refused++;
    l->refused_unlogged++;
    if (listener_warn_allowed(l, &l->refuse_warn_ms)) {
        log_warn("connection_refused", "port=%d reason=max_connections max_connections=%d "
                 "refused=%llu",
                 port, l->lim.max_connections, (unsigned long long)l->refused_unlogged);
        l->refused_unlogged = 0;
    }
}

static void accept_one(struct listener_ep *ep, int fd, const struct sockaddr *sa, socklen_t len)
{
    struct listener *l = ep->l;
    if (l->lim.max_connections > 0 && l->nopen >= l->lim.max_connections) {
        refuse(l, ep->port, fd);
        return;
    }
    int one = 1;
    /* Latency over packet count: responses are written whole, so Nagle only adds delay. */
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        log_debug("tcp_nodelay_failed", "port=%d err=\"%s\"", ep->port, err_str(-errno));
    conn_start(ep, fd, sa, len);
}

static void accept_cb(struct reactor *r, int lfd, uint32_t events, void *data)
{
    struct listener_ep *ep = data;
    struct listener *l = ep->l;
    l->refs++;
    for (int i = 0; i < ACCEPTS_PER_EVENT && !l->closed && !l->accept_paused; i++) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        int fd = accept4(ep->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            accept_one(ep, fd, (struct sockaddr *)&ss, len);
            continue;
        }
        int err = errno;
        if (err == EINTR || err == ECONNABORTED || err == EPROTO)
            continue;
        if (err == EAGAIN || err == EWOULDBLOCK)
            break;
        if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
            pause_accepting(l, ep->port, err);
            break;
        }
        log_error("accept_failed", "port=%d err=\"%s\"", ep->port, err_str(-err));
        break;
    }
    listener_unref(l);
}

/* Binds and listens on the first address of host:port that works. Returns fd or -errno. */
static int bind_listen(const char *host, int port)
{
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC,
        .ai_socktype = SOCK_STREAM,
        .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
    };
    char serv[16];
    snprintf(serv, sizeof(serv), "%d", port);
    struct addrinfo *res = NULL;
    int gai = getaddrinfo(host && host[0] ? host : NULL, serv, &hints, &res);
    if (gai != 0) {
        char q[256];
        log_error("listener_resolve_failed", "host=%s port=%d err=%s",
                  log_quote(q, sizeof(q), host ? host : "", host ? strlen(host) : 0), port,
                  gai_strerror(gai));
        return gai == EAI_SYSTEM && errno ? -errno : -EADDRNOTAVAIL;
    }
    int rc = -EADDRNOTAVAIL;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                        ai->ai_protocol);
        if (fd < 0) {
            rc = -errno;
            continue;
        }
        int one = 1;
        if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
            bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, LISTEN_BACKLOG) != 0) {
            rc = -errno;
            close(fd);
            continue;
        }
        rc = fd;
        break;
    }
    freeaddrinfo(res);
    return rc;
}

static int bound_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    if (getsockname(fd, (struct sockaddr *)&ss, &len) != 0)
        return -errno;
    if (ss.ss_family == AF_INET)
        return ntohs(((struct sockaddr_in *)&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    return -EAFNOSUPPORT;
}

static void limits_fill(struct conn_limits *lim)
{
    if (lim->max_frame_bytes == 0)
        lim->max_frame_bytes = DEFAULT_MAX_FRAME_BYTES;
    if (lim->max_frame_bytes > INT32_MAX)
        lim->max_frame_bytes = INT32_MAX; /* the prefix cannot say more */
    if (lim->max_queued_bytes == 0)
        lim->max_queued_bytes = DEFAULT_MAX_QUEUED_BYTES;
    if (lim->max_inflight == 0)
        lim->max_inflight = DEFAULT_MAX_INFLIGHT;
}

int listener_open_endpoints(struct reactor *r, const struct listener_endpoint *eps, int n,
                            const struct conn_limits *lim, const struct conn_handler *h,
                            struct listener **out, int *failed)
{
    CHECK(h && h->on_frame);
    CHECK(n >= 1 && n <= LISTENER_ENDPOINTS_MAX);
    /* sendfile has no MSG_NOSIGNAL, nor has OpenSSL's socket BIO: a peer that vanished
     * mid-response must yield EPIPE, not kill the broker. Only the default disposition is
     * changed. */
    struct sigaction sa;
    if (sigaction(SIGPIPE, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL)
        signal(SIGPIPE, SIG_IGN);

    struct listener *l = mem_calloc(1, sizeof(*l));
    l->r = r;
    l->lim = lim ? *lim : (struct conn_limits){0};
    limits_fill(&l->lim);
    l->h = *h;
    l->refs = 1;
    reactor_timer_init(&l->accept_timer, resume_cb, l);
    int rc = 0, i;
    bool tls = false;
    for (i = 0; i < n; i++) {
        struct listener_ep *ep = &l->eps[i];
        ep->l = l;
        ep->index = i;
        ep->tls = eps[i].tls;
        snprintf(ep->name, sizeof(ep->name), "%s", eps[i].name ? eps[i].name : "");
        tls |= ep->tls != NULL;
        rc = eps[i].port < 0 || eps[i].port > 65535 ? -EINVAL : bind_listen(eps[i].host,
                                                                            eps[i].port);
        if (rc < 0)
            goto out_close;
        ep->fd = rc;
        l->n_eps = i + 1;
        rc = bound_port(ep->fd);
        if (rc < 0)
            goto out_close;
        ep->port = rc;
    }
    for (i = 0; i < n; i++) {
        rc = reactor_add(r, l->eps[i].fd, REACTOR_READ, accept_cb, &l->eps[i]);
        if (rc != 0) {
            for (int j = 0; j < i; j++)
                reactor_del(r, l->eps[j].fd);
            goto out_close;
        }
    }
    l->scratch = mem_alloc(CONN_READ_CHUNK);
    if (tls)
        l->tls_wbuf = mem_alloc(TLS_RECORD_MAX);
    for (i = 0; i < n; i++) {
        char q[256];
        const char *host = eps[i].host;
        log_debug("listener_open", "name=%s host=%s port=%d tls=%s max_connections=%d",
                  l->eps[i].name[0] ? l->eps[i].name : "-",
                  log_quote(q, sizeof(q), host ? host : "", host ? strlen(host) : 0),
                  l->eps[i].port, l->eps[i].tls ? "true" : "false", l->lim.max_connections);
    }
    *out = l;
    return 0;

out_close:
    if (failed)
        *failed = i;
    for (int j = 0; j < l->n_eps; j++)
        close(l->eps[j].fd);
    mem_free(l);
    return rc;
}

int listener_open(struct reactor *r, const char *host, int port, const struct conn_limits *lim,
                  const struct conn_handler *h, struct listener **out)
{
    struct listener_endpoint ep = {.host = host, .port = port};
    return listener_open_endpoints(r, &ep, 1, lim, h, out, NULL);
}

int listener_bind_tcp(const char *host, int port, int *bound)
{
    if (port < 0 || port > 65535)
        return -EINVAL;
    int fd = bind_listen(host, port);
    if (fd < 0)
        return fd;
    int rc = bound_port(fd);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    *bound = rc;
    return fd;
}

int listener_port(const struct listener *l)
{
    return l->eps[0].port;
}

int listener_endpoint_port(const struct listener *l, int i)
{
    CHECK(i >= 0 && i < l->n_eps);
    return l->eps[i].port;
}

int listener_connection_count(const struct listener *l)
{
    return l->nopen;
}

void listener_get_stats(const struct listener *l, struct conn_stats *out)
{
    *out = l->stats;
}

void listener_close(struct listener *l)
{
    if (l->closed)
        return;
    l->closed = true;
    l->refs++; /* on_close callbacks below must not free l under this loop */
    reactor_timer_stop(l->r, &l->accept_timer);
    for (int i = 0; i < l->n_eps; i++) {
        if (!l->accept_paused)
            reactor_del(l->r, l->eps[i].fd);
        close(l->eps[i].fd);
        l->eps[i].fd = -1;
    }
    while (l->conns)
        conn_finalize(l->conns);
    for (int i = 0; i < l->n_eps; i++)
        log_info("listener_closed", "port=%d", l->eps[i].port);
    listener_unref(l);
    listener_unref(l); /* the reference held while open */
}
