/* Outbound framed connections (contract in net/dial.h).
 *
 * Owns: the socket, the output iobuf (queued frames not yet written), the input buffer
 * (rbuf[0, rlen): bytes of frames not yet complete) and, with TLS, the session (net/tls.h) and
 * a record buffer (wbuf, TLS_RECORD_MAX bytes) that gathers small chunks of `out` into one
 * record.
 *
 * TLS writes go a record at a time from the head of `out`: straight from a memory chunk that
 * holds a whole record, else gathered into wbuf. A write that must wait is repeated with the
 * same leading bytes, as OpenSSL requires: `out` is consumed only by what OpenSSL reports
 * written and only grows at its tail, so gathering again from its head yields those bytes
 * again (and maybe more, which SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER allows). OpenSSL may hold
 * decrypted input that epoll will not report again: a read event that stops on its byte
 * budget with input pending arms the kick timer.
 *
 * Invariants:
 *  1. fd >= 0  <=>  state is CONNECTING, HANDSHAKING or OPEN; then the reactor watches fd for
 *     `watching`.
 *  2. CONNECTING watches REACTOR_WRITE only; HANDSHAKING what tls_handshake waits for; OPEN
 *     watches REACTOR_READ, plus REACTOR_WRITE while `out` holds bytes (unless a TLS write
 *     waits for input: write_wants_read).
 *  3. in_cb counts the reactor callbacks running on d; d is freed only when it is 0, at the end
 *     of the outermost one, or at once by dial_close outside callbacks.
 *  4. rcap <= max(2 * rlen, rlen + DIAL_READ_STEP) after each read: memory follows the bytes
 *     received, not the sizes announced.
 *  5. tls != NULL  =>  state is HANDSHAKING or OPEN (freed by shut); no byte of `out` is
 *     written and no frame delivered before the handshake is done.
 *
 * States and transitions:
 *   CONNECTING --writable, SO_ERROR 0 (fd_cb), plaintext--> OPEN, on_connect
 *   CONNECTING --writable, SO_ERROR 0, TLS (tls_begin)--> HANDSHAKING
 *   HANDSHAKING --tls_handshake() done (handshake_step)--> OPEN, on_connect
 *   CONNECTING/HANDSHAKING/OPEN --failure (fail)--> DEAD, on_close(err), freed after the callback
 *   any --dial_close--> DEAD, freed (deferred while a callback runs)
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/mem.h"
#include "net/dial.h"
#include "net/tls.h"

#define DIAL_READ_STEP (16 * 1024)
#define DIAL_IOV_MAX 64
#define DIAL_READ_BUDGET (4u << 20) /* bytes read per readable event, for fairness */

enum dial_state { DIAL_CONNECTING, DIAL_HANDSHAKING, DIAL_OPEN, DIAL_DEAD };

struct dial {
    struct reactor *r;
    int fd;
    enum dial_state state;
    uint32_t watching;
    int in_cb;
    bool free_pending; /* dead and waiting for the outermost callback to end */
    size_t max_frame;
    struct dial_handler h;
    struct iobuf out;
    uint8_t *rbuf;
    size_t rlen;
    size_t rcap;
    const struct dial_tls *tls_cfg; /* NULL: plaintext */
    struct tls *tls;                /* invariant 5 */
    bool tls_established;           /* the handshake completed */
    bool write_wants_read;          /* a TLS write waits for the socket to be readable */
    bool read_wants_write;          /* a TLS read waits for it to be writable */
    uint8_t *wbuf;                  /* TLS record gathering (TLS_RECORD_MAX), or NULL */
    char tls_error[200];            /* why the session failed, "" while it did not */
    struct reactor_timer kick;      /* decrypted input to deliver (TLS) */
};

static void fd_cb(struct reactor *r, int fd, uint32_t events, void *data);
static void fail(struct dial *d, int err);
static void kick_cb(struct reactor *r, struct reactor_timer *t, void *data);

static void set_watch(struct dial *d, uint32_t ev)
{
    if (d->fd >= 0 && ev != d->watching) {
        (void)reactor_mod(d->r, d->fd, ev);
        d->watching = ev;
    }
}

static void destroy(struct dial *d)
{
    iobuf_destroy(&d->out);
    mem_free(d->rbuf);
    mem_free(d->wbuf);
    mem_free(d);
}

static void shut(struct dial *d)
{
    reactor_timer_stop(d->r, &d->kick);
    tls_free(d->tls); /* close_notify if the session is healthy (before the socket closes) */
    d->tls = NULL;
    if (d->fd >= 0) {
        reactor_del(d->r, d->fd);
        close(d->fd);
        d->fd = -1;
    }
    d->state = DIAL_DEAD;
    iobuf_destroy(&d->out);
}

/* A TLS failure: its reason kept for dial_tls_error, then fail(-EPROTO). */
static void tls_failed(struct dial *d, const char *what, const char *why)
{
    snprintf(d->tls_error, sizeof(d->tls_error), "%s%s", what, why);
    fail(d, -EPROTO);
}

/* A failure seen from a reactor callback: on_close once. */
static void fail(struct dial *d, int err)
{
    if (d->state == DIAL_DEAD)
        return;
    shut(d);
    d->free_pending = true;
    if (d->h.on_close)
        d->h.on_close(d, err, d->h.data);
}

int dial_open(struct reactor *r, const char *host, int port, size_t max_frame_bytes,
              const struct dial_tls *tls, const struct dial_handler *h, struct dial **out)
{
    char serv[16];
    snprintf(serv, sizeof(serv), "%d", port);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    if (getaddrinfo(host, serv, &hints, &res) != 0 || !res)
        return -ERR_NOT_FOUND;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        int rc = -errno;
        freeaddrinfo(res);
        return rc;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    /* The ephemeral port connect() picks may be one a broker on this host is about to listen
     * on (the example cluster's ports are in the ephemeral range, and the kernel picks the same
     * port for the same destination again): with SO_REUSEADDR on both sockets, Linux lets the
     * listener bind anyway (measured: node 3 of config/cluster-node*.properties failed to bind
     * its admin port, taken by node 1's connection to node 3). */
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    int rc = connect(fd, res->ai_addr, res->ai_addrlen);
    freeaddrinfo(res);
    if (rc != 0 && errno != EINPROGRESS) {
        rc = -errno;
        close(fd);
        return rc;
    }
    struct dial *d = mem_calloc(1, sizeof(*d));
    d->r = r;
    d->fd = fd;
    d->state = DIAL_CONNECTING;
    d->max_frame = max_frame_bytes;
    d->h = *h;
    d->tls_cfg = tls;
    iobuf_init(&d->out);
    reactor_timer_init(&d->kick, kick_cb, d);
    /* Connected or not, the socket turns writable once the outcome is known. */
    rc = reactor_add(r, fd, REACTOR_WRITE, fd_cb, d);
    if (rc != 0) {
        close(fd);
        destroy(d);
        return rc;
    }
    d->watching = REACTOR_WRITE;
    *out = d;
    return 0;
}

/* The watch of an open connection (invariant 2). */
static uint32_t open_watch(const struct dial *d)
{
    bool want_write = iobuf_pending(&d->out) > 0 && !d->write_wants_read;
    return REACTOR_READ | (want_write || d->read_wants_write ? REACTOR_WRITE : 0);
}

/* Copies up to TLS_RECORD_MAX bytes of `out`, from its head, into wbuf. */
static size_t gather(struct dial *d)
{
    const struct iobuf *b = &d->out;
    size_t len = 0;
    for (size_t i = b->head; i < b->n && len < TLS_RECORD_MAX; i++) {
        CHECK(!b->chunks[i].file);
        size_t skip = i == b->head ? b->head_off : 0;
        size_t take = MIN(b->chunks[i].len - skip, (size_t)TLS_RECORD_MAX - len);
        memcpy(d->wbuf + len, b->chunks[i].data + skip, take);
        len += take;
    }
    return len;
}

/* write_out for TLS: a record at a time until `out` drains or OpenSSL waits. Returns 0, or
 * -EPROTO (the session failed: tls_error says why). */
static int write_out_tls(struct dial *d)
{
    d->write_wants_read = false;
    while (iobuf_pending(&d->out) > 0) {
        const struct iobuf *b = &d->out;
        const struct iobuf_chunk *ch = &b->chunks[b->head];
        size_t avail = ch->len - b->head_off, n = 0;
        enum tls_status st;
        if (avail >= TLS_RECORD_MAX) { /* a whole record in place: no copy */
            st = tls_write(d->tls, ch->data + b->head_off, TLS_RECORD_MAX, &n);
        } else if (avail == 0) {
            iobuf_consume(&d->out, 0); /* an empty chunk at the head: skipped */
            continue;
        } else {
            if (!d->wbuf)
                d->wbuf = mem_alloc(TLS_RECORD_MAX);
            st = tls_write(d->tls, d->wbuf, gather(d), &n);
        }
        if (st == TLS_WANT_WRITE)
            break;
        if (st == TLS_WANT_READ) {
            d->write_wants_read = true;
            break;
        }
        if (st != TLS_OK) {
            snprintf(d->tls_error, sizeof(d->tls_error), "write: %s", tls_error(d->tls));
            return -EPROTO;
        }
        iobuf_consume(&d->out, n);
    }
    set_watch(d, open_watch(d));
    return 0;
}

/* Writes what the socket takes. Returns 0 or -errno. */
static int write_out(struct dial *d)
{
    if (d->tls)
        return write_out_tls(d);
    while (iobuf_pending(&d->out) > 0) {
        struct iovec iov[DIAL_IOV_MAX];
        int n = 0;
        struct iobuf *b = &d->out;
        for (size_t i = b->head; i < b->n && n < DIAL_IOV_MAX; i++) {
            CHECK(!b->chunks[i].file);
            size_t skip = i == b->head ? b->head_off : 0;
            if (b->chunks[i].len == skip)
                continue;
            iov[n].iov_base = b->chunks[i].data + skip;
            iov[n].iov_len = b->chunks[i].len - skip;
            n++;
        }
        ssize_t w = writev(d->fd, iov, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            return -errno;
        }
        iobuf_consume(b, (size_t)w);
    }
    set_watch(d, REACTOR_READ | (iobuf_pending(&d->out) ? REACTOR_WRITE : 0));
    return 0;
}

void dial_send(struct dial *d, struct iobuf *frames)
{
    if (d->state == DIAL_DEAD) {
        iobuf_destroy(frames);
        return;
    }
    iobuf_move(&d->out, frames);
    if (d->state != DIAL_OPEN)
        return;
    if (write_out(d) != 0) {
        /* on_close may not run from here: let the reactor report the broken socket. */
        (void)shutdown(d->fd, SHUT_RDWR);
        iobuf_destroy(&d->out);
        set_watch(d, REACTOR_READ);
    }
}

size_t dial_pending(const struct dial *d)
{
    return iobuf_pending(&d->out);
}

void dial_close(struct dial *d)
{
    if (d->state != DIAL_DEAD)
        shut(d);
    if (d->in_cb > 0)
        d->free_pending = true;
    else
        destroy(d);
}

static uint32_t be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Hands every complete frame in rbuf to on_frame; keeps the tail. Returns 0 or -ERR_TOO_LARGE. */
static int parse_frames(struct dial *d)
{
    size_t off = 0;
    while (d->state == DIAL_OPEN && d->rlen - off >= 4) {
        uint32_t size = be32(d->rbuf + off);
        if (size > INT32_MAX || size > d->max_frame)
            return -ERR_TOO_LARGE;
        if (d->rlen - off - 4 < size)
            break;
        if (d->h.on_frame)
            d->h.on_frame(d, d->rbuf + off + 4, size, d->h.data);
        off += 4 + (size_t)size;
    }
    if (d->state != DIAL_OPEN)
        return 0;
    memmove(d->rbuf, d->rbuf + off, d->rlen - off);
    d->rlen -= off;
    if (d->rlen == 0) {
        mem_free(d->rbuf);
        d->rbuf = NULL;
        d->rcap = 0;
    }
    return 0;
}

/* read(2), through TLS when d has it: > 0 bytes, 0 at EOF, or -1 with errno (EAGAIN: nothing
 * now; EPROTO: the TLS session failed). */
static ssize_t read_some(struct dial *d, uint8_t *dst, size_t room)
{
    if (!d->tls)
        return read(d->fd, dst, room);
    size_t n;
    enum tls_status st = tls_read(d->tls, dst, room, &n);
    d->read_wants_write = st == TLS_WANT_WRITE;
    switch (st) {
    case TLS_OK:
        return (ssize_t)n;
    case TLS_WANT_WRITE:
        set_watch(d, open_watch(d));
        errno = EAGAIN;
        return -1;
    case TLS_WANT_READ:
        errno = EAGAIN;
        return -1;
    case TLS_EOF:
        return 0;
    case TLS_ERROR:
        break;
    }
    errno = EPROTO;
    return -1;
}

static void read_in(struct dial *d)
{
    size_t budget = DIAL_READ_BUDGET;
    while (d->state == DIAL_OPEN && budget > 0) {
        size_t want = DIAL_READ_STEP;
        if (d->rlen >= 4) {
            /* The size is known (and within the cap, parse_frames checked): grow towards this
             * frame's end by doubling what arrived, so memory follows the bytes received. */
            size_t need = 4 + (size_t)be32(d->rbuf) - d->rlen;
            CHECK(need > 0); /* parse_frames took every complete frame */
            want = MIN(need, MAX((size_t)DIAL_READ_STEP, d->rlen));
        }
        if (d->rcap - d->rlen < want) {
            d->rcap = d->rlen + want;
            d->rbuf = mem_realloc(d->rbuf, d->rcap);
        }
        ssize_t n = read_some(d, d->rbuf + d->rlen, d->rcap - d->rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno == EPROTO) {
            tls_failed(d, "read: ", tls_error(d->tls));
            return;
        }
        if (n <= 0) {
            fail(d, n == 0 ? -ERR_CLOSED : -errno);
            return;
        }
        d->rlen += (size_t)n;
        budget -= MIN(budget, (size_t)n);
        int rc = parse_frames(d);
        if (rc != 0) {
            fail(d, rc);
            return;
        }
    }
    if (d->state == DIAL_OPEN && d->tls && tls_pending(d->tls))
        reactor_timer_start(d->r, &d->kick, 0); /* decrypted input that epoll will not report */
}

/* Opens the TLS session once TCP is connected. Returns 0, or fails d (on_close). */
static int tls_begin(struct dial *d)
{
    struct ssl_ctx_st *ctx = d->tls_cfg->ctx_get(reactor_now_ms(d->r), d->tls_cfg->data);
    d->tls = ctx ? tls_new_client(ctx, d->fd) : NULL;
    if (!d->tls) {
        tls_failed(d, "setup: ", ctx ? "OpenSSL cannot create a session" : "no TLS context");
        return -EPROTO;
    }
    d->state = DIAL_HANDSHAKING;
    return 0;
}

static void connected(struct dial *d)
{
    d->state = DIAL_OPEN;
    set_watch(d, open_watch(d));
    if (d->h.on_connect)
        d->h.on_connect(d, d->h.data);
}

static void handshake_step(struct dial *d)
{
    switch (tls_handshake(d->tls)) {
    case TLS_OK:
        d->tls_established = true;
        connected(d);
        /* what on_connect queued goes now (dial_send wrote it already unless it must wait);
         * input that came with the server's last flight is read on the next event */
        if (d->state == DIAL_OPEN && iobuf_pending(&d->out) > 0) {
            int rc = write_out(d);
            if (rc != 0)
                fail(d, rc);
        }
        if (d->state == DIAL_OPEN && tls_pending(d->tls))
            reactor_timer_start(d->r, &d->kick, 0);
        return;
    case TLS_WANT_READ:
        set_watch(d, REACTOR_READ);
        return;
    case TLS_WANT_WRITE:
        set_watch(d, REACTOR_WRITE);
        return;
    case TLS_EOF:
        tls_failed(d, "handshake: ", "connection closed during the handshake");
        return;
    case TLS_ERROR:
        tls_failed(d, "handshake: ", tls_error(d->tls));
        return;
    }
}

static void kick_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct dial *d = data;
    d->in_cb++;
    if (d->state == DIAL_OPEN)
        read_in(d);
    d->in_cb--;
    if (d->in_cb == 0 && d->free_pending)
        destroy(d);
}

static void fd_cb(struct reactor *r, int fd, uint32_t events, void *data)
{
    struct dial *d = data;
    d->in_cb++;
    if (d->state == DIAL_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
        if (err != 0)
            fail(d, -err);
        else if (!d->tls_cfg)
            connected(d);
        else if (tls_begin(d) == 0)
            handshake_step(d);
    } else if (d->state == DIAL_HANDSHAKING) {
        handshake_step(d);
    } else {
        if ((events & (REACTOR_READ | REACTOR_ERROR)) && d->write_wants_read) {
            int rc = write_out(d); /* the write waited for this event */
            if (rc != 0)
                fail(d, rc);
        }
        if (d->state == DIAL_OPEN && (events & REACTOR_WRITE) && d->read_wants_write)
            read_in(d); /* the read waited for this one */
        if (d->state == DIAL_OPEN && (events & (REACTOR_READ | REACTOR_ERROR)))
            read_in(d);
        if (d->state == DIAL_OPEN && (events & REACTOR_WRITE)) {
            int rc = write_out(d);
            if (rc != 0)
                fail(d, rc);
        }
    }
    d->in_cb--;
    if (d->in_cb == 0 && d->free_pending)
        destroy(d);
}

bool dial_tls_on(const struct dial *d)
{
    return d->tls_cfg != NULL;
}

bool dial_tls_established(const struct dial *d)
{
    return d->tls_established;
}

const char *dial_tls_error(const struct dial *d)
{
    return d->tls_error[0] ? d->tls_error : NULL;
}
