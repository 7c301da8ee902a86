/* Outbound framed connections (contract in net/dial.h).
 *
 * Owns: the socket, the output iobuf (queued frames not yet written) and the input buffer
 * (rbuf[0, rlen): bytes of frames not yet complete).
 *
 * Invariants:
 *  1. fd >= 0  <=>  state is CONNECTING or OPEN; then the reactor watches fd for `watching`.
 *  2. CONNECTING watches REACTOR_WRITE only; OPEN watches REACTOR_READ, plus REACTOR_WRITE
 *     while `out` holds bytes.
 *  3. in_cb counts the reactor callbacks running on d; d is freed only when it is 0, at the end
 *     of the outermost one, or at once by dial_close outside callbacks.
 *  4. rcap <= max(2 * rlen, rlen + DIAL_READ_STEP) after each read: memory follows the bytes
 *     received, not the sizes announced.
 *
 * States and transitions:
 *   CONNECTING --writable, SO_ERROR 0 (fd_cb)--> OPEN, on_connect
 *   CONNECTING/OPEN --failure (fail)--> DEAD, on_close(err), freed after the callback
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

#define DIAL_READ_STEP (16 * 1024)
#define DIAL_IOV_MAX 64
#define DIAL_READ_BUDGET (4u << 20) /* bytes read per readable event, for fairness */

enum dial_state { DIAL_CONNECTING, DIAL_OPEN, DIAL_DEAD };

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
};

static void fd_cb(struct reactor *r, int fd, uint32_t events, void *data);

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
    mem_free(d);
}

static void shut(struct dial *d)
{
    if (d->fd >= 0) {
        reactor_del(d->r, d->fd);
        close(d->fd);
        d->fd = -1;
    }
    d->state = DIAL_DEAD;
    iobuf_destroy(&d->out);
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
              const struct dial_handler *h, struct dial **out)
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
    iobuf_init(&d->out);
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

/* Writes what the socket takes. Returns 0 or -errno. */
static int write_out(struct dial *d)
{
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
        ssize_t n = read(d->fd, d->rbuf + d->rlen, d->rcap - d->rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
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
        if (err != 0) {
            fail(d, -err);
        } else {
            d->state = DIAL_OPEN;
            set_watch(d, REACTOR_READ | (iobuf_pending(&d->out) ? REACTOR_WRITE : 0));
            if (d->h.on_connect)
                d->h.on_connect(d, d->h.data);
        }
    } else {
        if (events & (REACTOR_READ | REACTOR_ERROR))
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
