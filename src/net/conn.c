/* A client connection: size-prefixed frames in, ordered responses out.
 *
 * Owns: the socket, an input buffer holding at most the unparsed tail of the stream, the FIFO
 * of response slots and the output iobuf (responses whose turn has come, not yet sent).
 *
 * Input. A read lands in the listener's shared 64 KiB scratch buffer while the connection holds
 * no partial frame; complete frames are handed to on_frame straight from there, and only the
 * unparsed tail is copied into the connection's own buffer (rbuf), sized to that tail. Further
 * reads go into rbuf, which grows as bytes arrive: to 64 KiB, then by doubling, never past the
 * frame being read unless that frame is smaller than 64 KiB. After each readable event a small
 * rbuf (<= 64 KiB) is trimmed to what it holds and freed when empty, so an idle connection
 * owns no input buffer and a stalled one owns what it sent. A large rbuf (big frames, e.g.
 * produce batches) is kept for the next frames while the connection is busy, and trimmed the
 * same way once no bytes arrived for RBUF_KEEP_MS (idle timer): regrowing and faulting in a
 * fresh multi-MiB buffer per frame would cost more than the frame's own copy.
 *
 * Output. A slot completed out of turn keeps its response; when the head slot completes, every
 * completed slot at the head moves (iobuf_move, no copy) into `out`, which is written with
 * sendmsg (memory chunks, up to IOV_MAX at once) and sendfile (file chunks) until the socket is
 * full; then REACTOR_WRITE is watched until `out` drains. Completions made while the connection
 * is delivering frames are corked and written once after the batch (fewer, larger writes).
 *
 * TLS (an endpoint with listener_tls). The connection starts HANDSHAKING: readiness drives
 * tls_handshake() (watching exactly what it waits for), the handshake timer closes it after
 * handshake_timeout_ms, and no frame is read before the handshake is done. Then reads go
 * through tls_read() into the same buffers; since OpenSSL may hold decrypted bytes that epoll
 * will not report again, a read event that stops with bytes pending re-arms the kick timer.
 * Writes go a record at a time: up to TLS_RECORD_MAX bytes of `out` from its head are gathered
 * into the listener's record buffer (file ranges read with pread), or written straight from a
 * memory chunk that holds a whole record, or, with kernel TLS, file ranges go to
 * SSL_sendfile. A write that must wait (TLS_WANT_WRITE) is repeated with the same leading bytes,
 * as OpenSSL requires: `out` is consumed only by what OpenSSL reports written, and it only ever
 * grows at its tail, so gathering again from its head yields those bytes again.
 *
 * Invariants:
 *  1. refs = 1 (the listener's, until conn_finalize) + the callbacks running on c; c is freed
 *     only when refs reaches 0, so no callback ever sees c freed under it.
 *  2. fd >= 0  <=>  state == CONN_OPEN; an open connection is registered with the reactor for
 *     exactly `watching`.
 *  3. slots_head..slots_tail are the reserved slots not yet moved to `out`, in reservation
 *     order; nslots counts them. Each slot has refs = (linked to c) + (not yet completed).
 *  4. queued_bytes = bytes of completed responses not yet sent (in `out` or in slots).
 *  5. paused == (queued_bytes > max_queued_bytes || nslots > max_inflight), refreshed by
 *     update_flow() after each change to either. While paused no frame is delivered; the
 *     REACTOR_READ watch is dropped lazily, at the next read event.
 *  6. rbuf[rstart, rend) is unparsed input. rbuf is reallocated only while no frame taken from
 *     it is being delivered.
 *  7. tls != NULL only while the socket is open; handshaking only while tls != NULL, and no
 *     frame is delivered and no byte of `out` written while handshaking.
 *
 * States and transitions:
 *   CONN_OPEN, TLS handshaking --tls_handshake() done (handshake_done)--> CONN_OPEN
 *                 (failure or the handshake timer: conn_close)
 *   CONN_OPEN    --conn_close() (EOF, error, bad frame, caller)-->  CONN_CLOSING
 *                 socket closed, output dropped, kick timer armed (0 ms)
 *   CONN_CLOSING --conn_finalize() (kick timer, or listener_close)--> CONN_DONE
 *                 slots detached, unlinked from the listener, on_close() run
 *   CONN_DONE    --last reference dropped (conn_unref)--> freed
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/check.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "net/conn.h"
#include "net/conn_internal.h"
#include "net/tls.h"

/* Reads per readable event before yielding to other connections (level-triggered: the rest is
 * picked up next iteration). A TLS read returns one record (16 KiB) at most: more of them. */
#define READS_PER_EVENT 8
#define TLS_READS_PER_EVENT 64
#define DEFAULT_HANDSHAKE_TIMEOUT_MS 10000
#define ANONYMOUS "User:ANONYMOUS"
/* ... and bytes: each frame is handled as it arrives (a 1 MiB produce request costs ms of
 * validation and appending), and an event that read many MiB would hold the iteration, so
 * timers (Raft heartbeats) and the end-of-iteration flush of replication traffic would wait
 * behind it for 100+ ms. */
#define READ_BYTES_PER_EVENT ((size_t)1 << 20)
/* sendfile count per call; the kernel caps a call near 2 GiB anyway. */
#define SENDFILE_MAX ((size_t)1 << 30)
/* An empty `out` whose chunk array grew past this many entries gives it back. */
#define OUT_CHUNKS_KEEP 64
/* A large input buffer is given back after this long without input. */
#define RBUF_KEEP_MS 1000

enum conn_state { CONN_OPEN, CONN_CLOSING, CONN_DONE };

struct conn_slot {
    struct conn *c;         /* NULL once detached from the connection */
    struct conn_slot *next; /* FIFO order */
    struct iobuf resp;      /* the response, once completed */
    int refs;               /* invariant 3 */
    bool completed;         /* conn_slot_complete ran */
};

struct conn {
    struct listener *l;
    struct listener_ep *ep; /* the endpoint it arrived on */
    struct reactor *r;
    struct conn *prev; /* listener's list */
    struct conn *next;
    int fd;
    enum conn_state state;
    int refs; /* invariant 1 */
    uint64_t id;
    void *user;
    uint32_t watching;         /* events registered with the reactor */
    bool paused;               /* invariant 5 */
    bool corked;               /* delivering frames: completions wait for the batch's end */
    struct reactor_timer kick; /* deferred work: finalize, or deliver frames after a resume */
    struct reactor_timer idle; /* gives back a large rbuf once input stops */
    int64_t last_input_ms;     /* reactor time of the last readable event */
    uint8_t *rbuf;             /* invariant 6 */
    size_t rcap;
    size_t rstart;
    size_t rend;
    struct conn_slot *slots_head;
    struct conn_slot *slots_tail;
    size_t nslots;
    struct iobuf out;
    size_t queued_bytes; /* invariant 4 */
    char peer[INET6_ADDRSTRLEN + 10];
    struct tls *tls;                /* invariant 7; NULL: plaintext */
    bool handshaking;               /* TLS handshake not done yet */
    bool tls_read_wants_write;      /* a TLS read waits for the socket to be writable */
    bool tls_write_wants_read;      /* a TLS write waits for the socket to be readable */
    struct reactor_timer handshake; /* closes a connection whose handshake takes too long */
    char *principal;                /* owned; NULL: ANONYMOUS */
};

static void flush(struct conn *c);
static void deliver_rbuf(struct conn *c);
static void rbuf_trim(struct conn *c);
static void on_readable(struct conn *c);

#if DCHECK_ENABLED
/* The invariants of the design comment, walked in full (sanitizer and debug builds). */
static bool conn_valid(const struct conn *c)
{
    if (c->refs < 1 || (c->fd >= 0) != (c->state == CONN_OPEN))
        return false;
    if ((c->tls && c->state != CONN_OPEN) || (c->handshaking && !c->tls))
        return false;
    size_t n = 0, queued = iobuf_pending(&c->out);
    const struct conn_slot *last = NULL;
    for (const struct conn_slot *s = c->slots_head; s; s = s->next) {
        if (s->c != c || s->refs != (s->completed ? 1 : 2))
            return false;
        queued += s->completed ? iobuf_pending(&s->resp) : 0;
        last = s;
        n++;
    }
    if (n != c->nslots || last != c->slots_tail)
        return false;
    if (c->rstart > c->rend || c->rend > c->rcap || (c->rbuf == NULL && c->rcap != 0))
        return false;
    if (c->state != CONN_OPEN)
        return c->watching == 0 && c->queued_bytes == 0;
    const struct conn_limits *lim = &c->l->lim;
    bool over = c->queued_bytes > lim->max_queued_bytes || c->nslots > lim->max_inflight;
    return queued == c->queued_bytes && over == c->paused;
}
#define CONN_DCHECK(c) DCHECK((c)->state == CONN_DONE || conn_valid(c))
#else
#define CONN_DCHECK(c) ((void)0)
#endif

/* ---- lifetime ---- */

static void conn_unref(struct conn *c)
{
    CHECK(c->refs > 0);
    if (--c->refs > 0)
        return;
    CHECK(c->state == CONN_DONE && c->slots_head == NULL);
    struct listener *l = c->l;
    iobuf_destroy(&c->out);
    mem_free(c->rbuf);
    mem_free(c->principal);
    mem_free(c);
    listener_unref(l);
}

static void slot_unref(struct conn_slot *s)
{
    CHECK(s->refs > 0);
    if (--s->refs > 0)
        return;
    iobuf_destroy(&s->resp);
    mem_free(s);
}

static void set_watch(struct conn *c, uint32_t events)
{
    if (c->state != CONN_OPEN || events == c->watching)
        return;
    int rc = reactor_mod(c->r, c->fd, events);
    if (rc != 0) {
        log_warn("conn_watch_failed", "conn=%llu peer=%s err=\"%s\"", (unsigned long long)c->id,
                 c->peer, err_str(rc));
        conn_close(c);
        return;
    }
    c->watching = events;
}

void conn_close(struct conn *c)
{
    CONN_DCHECK(c);
    if (c->state != CONN_OPEN)
        return;
    reactor_del(c->r, c->fd);
    reactor_timer_stop(c->r, &c->handshake);
    tls_free(c->tls); /* close_notify if the session is healthy */
    c->tls = NULL;
    c->handshaking = false;
    close(c->fd);
    c->fd = -1;
    c->watching = 0;
    c->state = CONN_CLOSING;
    c->l->nopen--;
    /* rbuf may be under an on_frame call right now: it goes with c. */
    iobuf_destroy(&c->out);
    c->queued_bytes = 0;
    reactor_timer_start(c->r, &c->kick, 0);
    log_debug("conn_closed", "conn=%llu peer=%s", (unsigned long long)c->id, c->peer);
    CONN_DCHECK(c);
}

static void conn_fail(struct conn *c, const char *event, int rc)
{
    if (rc == -ECONNRESET || rc == -EPIPE)
        log_debug(event, "conn=%llu peer=%s err=\"%s\"", (unsigned long long)c->id, c->peer,
                  err_str(rc));
    else
        log_info(event, "conn=%llu peer=%s err=\"%s\"", (unsigned long long)c->id, c->peer,
                 err_str(rc));
    conn_close(c);
}

void conn_finalize(struct conn *c)
{
    if (c->state == CONN_DONE)
        return;
    conn_close(c);
    reactor_timer_stop(c->r, &c->kick);
    reactor_timer_stop(c->r, &c->idle);
    reactor_timer_stop(c->r, &c->handshake);
    c->state = CONN_DONE;
    while (c->slots_head) {
        struct conn_slot *s = c->slots_head;
        c->slots_head = s->next;
        s->c = NULL;
        s->next = NULL;
        slot_unref(s);
    }
    c->slots_tail = NULL;
    c->nslots = 0;
    struct listener *l = c->l;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->prev = c->next = NULL;
    if (l->h.on_close)
        l->h.on_close(c, l->h.data);
    conn_unref(c);
}

static void kick_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct conn *c = data;
    c->refs++;
    CONN_DCHECK(c);
    if (c->state == CONN_CLOSING) {
        conn_finalize(c);
    } else if (c->state == CONN_OPEN && c->tls && !c->handshaking && tls_pending(c->tls)) {
        on_readable(c); /* OpenSSL holds input that epoll will not report */
    } else if (c->state == CONN_OPEN && !c->handshaking) {
        deliver_rbuf(c);
        if (c->state == CONN_OPEN && !(c->watching & REACTOR_WRITE))
            flush(c);
        rbuf_trim(c);
    }
    CONN_DCHECK(c);
    conn_unref(c);
}

/* ---- flow control ---- */

static void update_flow(struct conn *c)
{
    if (c->state != CONN_OPEN)
        return;
    const struct conn_limits *lim = &c->l->lim;
    bool over = c->queued_bytes > lim->max_queued_bytes || c->nslots > lim->max_inflight;
    if (over == c->paused)
        return;
    c->paused = over;
    if (over)
        return; /* the READ watch goes at the next read event (invariant 5) */
    set_watch(c, c->watching | REACTOR_READ);
    if ((c->rbuf && c->rend > c->rstart) || (c->tls && tls_pending(c->tls)))
        reactor_timer_start(c->r, &c->kick, 0); /* frames already buffered */
}

/* ---- output ---- */

static ssize_t send_memory(struct conn *c, size_t *want)
{
    struct iovec iov[IOV_MAX];
    const struct iobuf *b = &c->out;
    int n = 0;
    size_t total = 0, i = b->head;
    for (; i < b->n && n < IOV_MAX && !b->chunks[i].file; i++) {
        size_t skip = i == b->head ? b->head_off : 0;
        if (b->chunks[i].len == skip)
            continue;
        iov[n].iov_base = b->chunks[i].data + skip;
        iov[n].iov_len = b->chunks[i].len - skip;
        total += iov[n].iov_len;
        n++;
    }
    /* A file range follows: let the kernel put these bytes in the same segment as its start. */
    int flags = MSG_NOSIGNAL | (i < b->n && b->chunks[i].file ? MSG_MORE : 0);
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)n};
    *want = total;
    if (n == 0)
        return 0; /* only empty chunks before a file range: iobuf_consume(0) skips them */
    return sendmsg(c->fd, &msg, flags);
}

static ssize_t send_file(struct conn *c, size_t *want)
{
    const struct iobuf_chunk *ch = &c->out.chunks[c->out.head];
    off_t off = ch->file_off + (off_t)c->out.head_off;
    size_t len = ch->len - c->out.head_off;
    *want = len < SENDFILE_MAX ? len : SENDFILE_MAX;
    return sendfile(c->fd, ch->file->fd, &off, *want);
}

/* ---- TLS output ---- */

/* Logs a failed TLS read or write (the session is unusable) and closes c. */
static void tls_fail(struct conn *c, const char *event)
{
    char q[200];
    const char *why = tls_error(c->tls);
    log_info(event, "conn=%llu peer=%s reason=%s", (unsigned long long)c->id, c->peer,
             log_quote(q, sizeof(q), why, strlen(why)));
    conn_close(c);
}

/* Copies up to cap bytes of `out`, from its head, into buf: memory chunks, and file ranges
 * unless they go by sendfile (stops there). Returns the bytes copied, or -errno if a file read
 * failed, or -ERR_SHORT if a file range ends early. */
static ssize_t gather(struct conn *c, uint8_t *buf, size_t cap, bool files)
{
    const struct iobuf *b = &c->out;
    size_t len = 0;
    for (size_t i = b->head; i < b->n && len < cap; i++) {
        const struct iobuf_chunk *ch = &b->chunks[i];
        size_t skip = i == b->head ? b->head_off : 0;
        size_t take = MIN(ch->len - skip, cap - len);
        if (!ch->file) {
            memcpy(buf + len, ch->data + skip, take);
            len += take;
            continue;
        }
        if (!files)
            break;
        ssize_t n;
        do {
            n = pread(ch->file->fd, buf + len, take, ch->file_off + (off_t)skip);
        } while (n < 0 && errno == EINTR);
        if (n < 0)
            return -errno;
        if (n == 0 && take > 0)
            return -ERR_SHORT;
        len += (size_t)n;
        if ((size_t)n < take)
            break; /* the rest of the range next time */
    }
    return (ssize_t)len;
}

/* Writes one record (or one sendfile) from the head of `out`. *n: bytes written. *rc: an error
 * reading file bytes (TLS_ERROR is returned then). */
static enum tls_status send_tls(struct conn *c, size_t *n, int *rc)
{
    const struct iobuf *b = &c->out;
    const struct iobuf_chunk *ch = &b->chunks[b->head];
    size_t avail = ch->len - b->head_off;
    bool ktls = tls_ktls_send(c->tls);
    *n = 0;
    *rc = 0;
    if (ch->file && ktls)
        return tls_sendfile(c->tls, ch->file->fd, ch->file_off + (off_t)b->head_off,
                            MIN(avail, SENDFILE_MAX), n);
    if (!ch->file && avail >= TLS_RECORD_MAX) /* a whole record in place: no copy */
        return tls_write(c->tls, ch->data + b->head_off, TLS_RECORD_MAX, n);
    ssize_t len = gather(c, c->l->tls_wbuf, TLS_RECORD_MAX, !ktls);
    if (len < 0) {
        *rc = (int)len;
        return TLS_ERROR;
    }
    if (len == 0)
        return TLS_OK; /* only empty chunks before a file range: iobuf_consume(0) skips them */
    return tls_write(c->tls, c->l->tls_wbuf, (size_t)len, n);
}

/* flush() for TLS: a record at a time until `out` drains or OpenSSL waits for the socket. */
static void flush_tls(struct conn *c)
{
    if (c->handshaking)
        return; /* invariant 7 */
    c->tls_write_wants_read = false;
    while (c->state == CONN_OPEN && iobuf_pending(&c->out) > 0) {
        size_t n;
        int rc;
        enum tls_status st = send_tls(c, &n, &rc);
        if (st == TLS_WANT_WRITE || st == TLS_WANT_READ) {
            c->tls_write_wants_read = st == TLS_WANT_READ;
            set_watch(c, st == TLS_WANT_WRITE ? c->watching | REACTOR_WRITE
                                              : (c->watching | REACTOR_READ) & ~REACTOR_WRITE);
            update_flow(c);
            return;
        }
        if (st != TLS_OK) {
            if (rc == -ERR_SHORT)
                conn_fail(c, "conn_sendfile_short", rc);
            else if (rc != 0)
                conn_fail(c, "conn_file_read_failed", rc);
            else
                tls_fail(c, "tls_write_failed");
            return;
        }
        iobuf_consume(&c->out, n);
        c->queued_bytes -= n;
        c->l->stats.bytes_out += (uint64_t)n;
    }
    if (c->state != CONN_OPEN)
        return;
    if (c->out.cap > OUT_CHUNKS_KEEP)
        iobuf_destroy(&c->out);
    set_watch(c, c->watching & ~REACTOR_WRITE);
    update_flow(c);
}

/* Writes `out` until it drains or the socket is full. */
static void flush(struct conn *c)
{
    if (c->tls) {
        flush_tls(c);
        return;
    }
    while (c->state == CONN_OPEN && iobuf_pending(&c->out) > 0) {
        bool file = c->out.chunks[c->out.head].file != NULL;
        size_t want = 0;
        ssize_t n = file ? send_file(c, &want) : send_memory(c, &want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            set_watch(c, c->watching | REACTOR_WRITE);
            update_flow(c);
            return;
        }
        if (n < 0) {
            conn_fail(c, file ? "conn_sendfile_failed" : "conn_write_failed", -errno);
            return;
        }
        if (n == 0 && want > 0) {
            /* sendfile hit the end of the file: the range was wrong and the client would wait
             * for bytes that never come. */
            conn_fail(c, "conn_sendfile_short", -ERR_SHORT);
            return;
        }
        iobuf_consume(&c->out, (size_t)n);
        c->queued_bytes -= (size_t)n;
        c->l->stats.bytes_out += (uint64_t)n;
        if ((size_t)n < want) {
            /* The socket is full; EPOLLOUT tells when it has room (saves an EAGAIN call). */
            set_watch(c, c->watching | REACTOR_WRITE);
            update_flow(c);
            return;
        }
    }
    if (c->state != CONN_OPEN)
        return;
    if (c->out.cap > OUT_CHUNKS_KEEP)
        iobuf_destroy(&c->out);
    set_watch(c, c->watching & ~REACTOR_WRITE);
    update_flow(c);
}

/* Moves every completed slot at the head of the FIFO to `out`. */
static void advance_slots(struct conn *c)
{
    while (c->slots_head && c->slots_head->completed) {
        struct conn_slot *s = c->slots_head;
        c->slots_head = s->next;
        if (!c->slots_head)
            c->slots_tail = NULL;
        c->nslots--;
        iobuf_move(&c->out, &s->resp);
        s->c = NULL;
        slot_unref(s);
    }
}

struct conn_slot *conn_slot_reserve(struct conn *c)
{
    CONN_DCHECK(c);
    struct conn_slot *s = mem_alloc(sizeof(*s));
    iobuf_init(&s->resp);
    s->next = NULL;
    s->completed = false;
    if (c->state != CONN_OPEN) {
        s->c = NULL;
        s->refs = 1;
        return s;
    }
    s->c = c;
    s->refs = 2;
    if (c->slots_tail)
        c->slots_tail->next = s;
    else
        c->slots_head = s;
    c->slots_tail = s;
    c->nslots++;
    update_flow(c);
    CONN_DCHECK(c);
    return s;
}

void conn_slot_complete(struct conn_slot *s, struct iobuf *resp)
{
    CHECK(!s->completed);
    struct conn *c = s->c;
    if (c)
        CONN_DCHECK(c);
    s->completed = true;
    if (!c || c->state != CONN_OPEN) {
        iobuf_destroy(resp);
        slot_unref(s);
        return;
    }
    c->queued_bytes += iobuf_pending(resp);
    iobuf_move(&s->resp, resp);
    bool head = s == c->slots_head;
    slot_unref(s); /* the connection's reference remains until the slot is sent */
    if (head)
        advance_slots(c);
    if (head && !c->corked && !(c->watching & REACTOR_WRITE))
        flush(c);
    else
        update_flow(c);
    CONN_DCHECK(c);
}

/* ---- input ---- */

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool frame_size_ok(struct conn *c, int32_t size)
{
    if (size < 0) {
        log_warn("frame_size_invalid", "conn=%llu peer=%s size=%d", (unsigned long long)c->id,
                 c->peer, (int)size);
        conn_close(c);
        return false;
    }
    if ((size_t)size > c->l->lim.max_frame_bytes) {
        /* a TLS ClientHello starts 16 03 0x: name the likely mistake */
        bool tls_hello = ((uint32_t)size >> 16) == 0x1603 && !c->tls;
        log_warn("frame_too_large", "conn=%llu peer=%s size=%d max=%zu%s",
                 (unsigned long long)c->id, c->peer, (int)size, c->l->lim.max_frame_bytes,
                 tls_hello ? " hint=tls_client_on_plaintext_listener" : "");
        conn_close(c);
        return false;
    }
    return true;
}

/* Hands every complete frame at the start of p[0, len) to on_frame, stopping early when the
 * connection closes or pauses. Returns the bytes consumed. */
static size_t deliver(struct conn *c, uint8_t *p, size_t len)
{
    struct listener *l = c->l;
    size_t off = 0;
    c->corked = true;
    while (c->state == CONN_OPEN && !c->paused && len - off >= 4) {
        int32_t size = (int32_t)be32(p + off);
        if (!frame_size_ok(c, size))
            break;
        if (len - off - 4 < (size_t)size)
            break;
        uint8_t *frame = p + off + 4;
        off += 4 + (size_t)size;
        l->stats.frames_in++;
        l->h.on_frame(c, frame, (size_t)size, l->h.data);
        /* Over the byte limit because of corked responses: send before settling for a pause. */
        if (c->paused && c->state == CONN_OPEN && !(c->watching & REACTOR_WRITE))
            flush(c);
    }
    c->corked = false;
    return off;
}

/* After a delivery: drops what was consumed, moving the rest to the front. */
static void rbuf_settle(struct conn *c)
{
    size_t pending = c->rend - c->rstart;
    if (c->state != CONN_OPEN) {
        mem_free(c->rbuf);
        c->rbuf = NULL;
        c->rcap = c->rstart = c->rend = 0;
        return;
    }
    if (c->paused || c->rstart == 0)
        return; /* paused: complete frames wait where they are */
    memmove(c->rbuf, c->rbuf + c->rstart, pending);
    c->rstart = 0;
    c->rend = pending;
}

/* Keeps only the bytes held (none: no buffer). Not while paused frames wait at rstart > 0. */
static void rbuf_shrink(struct conn *c)
{
    if (!c->rbuf || c->rstart != 0 || c->rcap == c->rend)
        return;
    if (c->rend == 0) {
        mem_free(c->rbuf);
        c->rbuf = NULL;
        c->rcap = 0;
        return;
    }
    c->rbuf = mem_realloc(c->rbuf, c->rend);
    c->rcap = c->rend;
}

/* Between events: small buffers shrink at once; a large one waits for the idle timer. */
static void rbuf_trim(struct conn *c)
{
    if (c->rcap <= CONN_READ_CHUNK) {
        rbuf_shrink(c);
        return;
    }
    c->last_input_ms = reactor_now_ms(c->r);
    if (!reactor_timer_active(&c->idle))
        reactor_timer_start(c->r, &c->idle, RBUF_KEEP_MS);
}

static void idle_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct conn *c = data;
    if (c->state != CONN_OPEN)
        return;
    int64_t quiet_ms = reactor_now_ms(r) - c->last_input_ms;
    if (quiet_ms < RBUF_KEEP_MS) {
        reactor_timer_start(r, t, RBUF_KEEP_MS - quiet_ms);
        return;
    }
    rbuf_shrink(c);
}

static void deliver_rbuf(struct conn *c)
{
    if (!c->rbuf || c->paused || c->state != CONN_OPEN)
        return;
    c->rstart += deliver(c, c->rbuf + c->rstart, c->rend - c->rstart);
    rbuf_settle(c);
}

/* Keeps the unparsed tail of a read into the scratch buffer. */
static void rbuf_stash(struct conn *c, const uint8_t *p, size_t len)
{
    CHECK(c->rbuf == NULL);
    c->rbuf = mem_alloc(len);
    memcpy(c->rbuf, p, len);
    c->rcap = len;
    c->rstart = 0;
    c->rend = len;
}

/* Total bytes (prefix included) of the frame starting at rbuf[rstart], or 0 if not known yet. */
static size_t rbuf_frame_total(const struct conn *c)
{
    if (c->rend - c->rstart < 4)
        return 0;
    return 4 + (size_t)(int32_t)be32(c->rbuf + c->rstart); /* checked when first parsed */
}

/* Room to read into rbuf, which holds the start of one incomplete frame: 64 KiB, or twice what
 * has arrived, capped by the frame's size unless that is below 64 KiB. */
static size_t rbuf_make_room(struct conn *c)
{
    CHECK(c->rstart == 0);
    size_t total = rbuf_frame_total(c);
    size_t want = MAX((size_t)CONN_READ_CHUNK, 2 * c->rend);
    if (total > CONN_READ_CHUNK)
        want = MIN(want, total);
    if (want > c->rcap) {
        c->rbuf = mem_realloc(c->rbuf, want);
        c->rcap = want;
    }
    CHECK(c->rcap > c->rend);
    return c->rcap - c->rend;
}

/* read(2) through TLS when c has it: > 0 bytes, 0 at EOF, or -1 with errno (EAGAIN: nothing
 * now). A TLS failure is logged and closes c (-1, EPROTO). */
static ssize_t read_some(struct conn *c, uint8_t *dst, size_t room)
{
    if (!c->tls)
        return read(c->fd, dst, room);
    size_t n;
    enum tls_status st = tls_read(c->tls, dst, room, &n);
    c->tls_read_wants_write = st == TLS_WANT_WRITE;
    switch (st) {
    case TLS_OK:
        return (ssize_t)n;
    case TLS_WANT_WRITE:
        set_watch(c, c->watching | REACTOR_WRITE);
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
    tls_fail(c, "tls_read_failed");
    errno = EPROTO;
    return -1;
}

static void on_readable(struct conn *c)
{
    struct listener *l = c->l;
    if (c->tls_write_wants_read)
        flush(c); /* the write waited for this event */
    if (c->state != CONN_OPEN)
        return;
    if (c->paused) {
        set_watch(c, c->watching & ~REACTOR_READ);
        return;
    }
    deliver_rbuf(c); /* frames left from before a pause go first */
    size_t got = 0;
    int reads = c->tls ? TLS_READS_PER_EVENT : READS_PER_EVENT;
    for (int i = 0; i < reads && got < READ_BYTES_PER_EVENT && c->state == CONN_OPEN && !c->paused;
         i++) {
        bool scratch = c->rbuf == NULL;
        size_t room = scratch ? CONN_READ_CHUNK : rbuf_make_room(c);
        uint8_t *dst = scratch ? l->scratch : c->rbuf + c->rend;
        ssize_t n = read_some(c, dst, room);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n < 0) {
            if (c->state == CONN_OPEN)
                conn_fail(c, "conn_read_failed", -errno);
            break;
        }
        if (n == 0) {
            log_debug("conn_eof", "conn=%llu peer=%s", (unsigned long long)c->id, c->peer);
            conn_close(c);
            break;
        }
        l->stats.bytes_in += (uint64_t)n;
        got += (size_t)n;
        if (scratch) {
            size_t used = deliver(c, dst, (size_t)n);
            if (c->state == CONN_OPEN && used < (size_t)n)
                rbuf_stash(c, dst + used, (size_t)n - used);
        } else {
            c->rend += (size_t)n;
            deliver_rbuf(c);
        }
        if ((size_t)n < room && !c->tls)
            break; /* most likely drained: don't pay for an EAGAIN (TLS reads are a record) */
    }
    if (c->state == CONN_OPEN && !(c->watching & REACTOR_WRITE))
        flush(c);
    rbuf_trim(c);
    if (c->state == CONN_OPEN && c->tls && !c->paused && tls_pending(c->tls))
        reactor_timer_start(c->r, &c->kick, 0); /* decrypted input that epoll will not report */
}

/* ---- TLS handshake ---- */

static void handshake_failed(struct conn *c, const char *why)
{
    struct listener_ep *ep = c->ep;
    c->l->stats.tls_handshake_failures++;
    ep->tls_fail_unlogged++;
    if (listener_warn_allowed(c->l, &ep->tls_warn_ms)) {
        char q[200];
        log_warn("tls_handshake_failed", "listener=%s port=%d peer=%s reason=%s failures=%llu",
                 ep->name[0] ? ep->name : "-", ep->port, c->peer,
                 log_quote(q, sizeof(q), why, strlen(why)),
                 (unsigned long long)ep->tls_fail_unlogged);
        ep->tls_fail_unlogged = 0;
    }
    conn_close(c);
}

static void handshake_timeout_cb(struct reactor *r, struct reactor_timer *t, void *data)
{
    struct conn *c = data;
    if (c->state == CONN_OPEN && c->handshaking)
        handshake_failed(c, "handshake timed out");
}

/* The handshake is done: the principal from the client certificate, then ordinary I/O. */
static void handshake_done(struct conn *c)
{
    const struct listener_tls *lt = c->ep->tls;
    reactor_timer_stop(c->r, &c->handshake);
    c->handshaking = false;
    char subject[CONN_PRINCIPAL_MAX];
    if (tls_peer_subject(c->tls, subject, sizeof(subject))) {
        char name[CONN_PRINCIPAL_MAX];
        int rc = 0;
        if (lt->principal)
            rc = lt->principal(subject, name, sizeof(name), lt->data);
        else if (snprintf(name, sizeof(name), "User:%s", subject) >= (int)sizeof(name))
            rc = -1; /* too long to be a principal */
        if (rc != 0) {
            char q[CONN_PRINCIPAL_MAX + 8];
            log_warn("tls_principal_unmapped", "conn=%llu peer=%s subject=%s action=close "
                     "(no ssl.principal.mapping.rules rule applies)",
                     (unsigned long long)c->id, c->peer,
                     log_quote(q, sizeof(q), subject, strlen(subject)));
            c->l->stats.tls_handshake_failures++;
            conn_close(c);
            return;
        }
        c->principal = mem_strdup(name);
    }
    c->l->stats.tls_handshakes++;
    char q[CONN_PRINCIPAL_MAX + 8];
    const char *principal = conn_principal(c);
    log_info("tls_handshake_done", "conn=%llu listener=%s peer=%s version=%s cipher=%s "
             "principal=%s sendfile=%s ktls_recv=%s",
             (unsigned long long)c->id, c->ep->name[0] ? c->ep->name : "-", c->peer,
             tls_version(c->tls), tls_cipher(c->tls),
             log_quote(q, sizeof(q), principal, strlen(principal)),
             tls_ktls_send(c->tls) ? "ktls" : "copy", tls_ktls_recv(c->tls) ? "true" : "false");
    set_watch(c, REACTOR_READ);
    if (c->state == CONN_OPEN)
        on_readable(c); /* a request may have come with the client's Finished */
}

static void handshake_step(struct conn *c)
{
    switch (tls_handshake(c->tls)) {
    case TLS_OK:
        handshake_done(c);
        return;
    case TLS_WANT_READ:
        set_watch(c, REACTOR_READ);
        return;
    case TLS_WANT_WRITE:
        set_watch(c, REACTOR_WRITE);
        return;
    case TLS_EOF:
        handshake_failed(c, "connection closed during the handshake");
        return;
    case TLS_ERROR:
        handshake_failed(c, tls_error(c->tls));
        return;
    }
}

static void io_cb(struct reactor *r, int fd, uint32_t events, void *data)
{
    struct conn *c = data;
    c->refs++;
    CONN_DCHECK(c);
    if (events & REACTOR_ERROR) {
        int err = 0;
        socklen_t len = sizeof(err);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err == 0)
            err = ECONNRESET;
        if (c->handshaking)
            handshake_failed(c, err_str(-err));
        else
            conn_fail(c, "conn_socket_error", -err);
    }
    if (c->state == CONN_OPEN && c->handshaking) {
        handshake_step(c);
    } else {
        if ((events & REACTOR_WRITE) && c->state == CONN_OPEN && c->tls_read_wants_write)
            on_readable(c);
        if ((events & REACTOR_WRITE) && c->state == CONN_OPEN)
            flush(c);
        if ((events & REACTOR_READ) && c->state == CONN_OPEN)
            on_readable(c);
    }
    CONN_DCHECK(c);
    conn_unref(c);
}

/* ---- accept-time setup and accessors ---- */

static void format_peer(char *buf, size_t cap, const struct sockaddr *sa, socklen_t len)
{
    char host[INET6_ADDRSTRLEN], serv[8];
    if (getnameinfo(sa, len, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(buf, cap, "unknown");
        return;
    }
    if (sa->sa_family == AF_INET6)
        snprintf(buf, cap, "[%s]:%s", host, serv);
    else
        snprintf(buf, cap, "%s:%s", host, serv);
}

/* An accepted connection of a TLS endpoint: its session, and the handshake deadline. */
static int tls_start(struct conn *c)
{
    const struct listener_tls *lt = c->ep->tls;
    struct ssl_ctx_st *ctx = lt->ctx_get(reactor_now_ms(c->r), lt->data);
    c->tls = ctx ? tls_new(ctx, c->fd) : NULL;
    if (!c->tls)
        return -ENOMEM;
    c->handshaking = true;
    int64_t timeout = lt->handshake_timeout_ms > 0 ? lt->handshake_timeout_ms
                                                   : DEFAULT_HANDSHAKE_TIMEOUT_MS;
    reactor_timer_start(c->r, &c->handshake, timeout);
    return 0;
}

void conn_start(struct listener_ep *ep, int fd, const struct sockaddr *peer, socklen_t peer_len)
{
    static uint64_t next_id;
    struct listener *l = ep->l;
    struct conn *c = mem_calloc(1, sizeof(*c));
    c->l = l;
    c->ep = ep;
    c->r = l->r;
    c->fd = fd;
    c->id = __atomic_add_fetch(&next_id, 1, __ATOMIC_RELAXED);
    c->refs = 1;
    reactor_timer_init(&c->kick, kick_cb, c);
    reactor_timer_init(&c->idle, idle_cb, c);
    reactor_timer_init(&c->handshake, handshake_timeout_cb, c);
    format_peer(c->peer, sizeof(c->peer), peer, peer_len);
    int rc = ep->tls ? tls_start(c) : 0;
    if (rc != 0) {
        log_warn("tls_setup_failed", "listener=%s peer=%s err=\"%s\"",
                 ep->name[0] ? ep->name : "-", c->peer, err_str(rc));
        close(fd);
        mem_free(c);
        return;
    }
    rc = reactor_add(l->r, fd, REACTOR_READ, io_cb, c);
    if (rc != 0) {
        log_warn("conn_watch_failed", "peer=%s err=\"%s\"", c->peer, err_str(rc));
        reactor_timer_stop(c->r, &c->handshake);
        tls_free(c->tls);
        close(fd);
        mem_free(c);
        return;
    }
    c->watching = REACTOR_READ;
    l->refs++;
    l->nopen++;
    l->stats.accepted++;
    c->next = l->conns;
    if (l->conns)
        l->conns->prev = c;
    l->conns = c;
    log_debug("conn_open", "conn=%llu peer=%s", (unsigned long long)c->id, c->peer);
    if (l->h.on_open) {
        c->refs++;
        l->h.on_open(c, l->h.data);
        conn_unref(c);
    }
}

bool conn_closing(const struct conn *c)
{
    return c->state != CONN_OPEN;
}

void conn_set_user(struct conn *c, void *user)
{
    c->user = user;
}

void *conn_get_user(const struct conn *c)
{
    return c->user;
}

const char *conn_peer(const struct conn *c)
{
    return c->peer;
}

uint64_t conn_id(const struct conn *c)
{
    return c->id;
}

size_t conn_rbuf_capacity(const struct conn *c)
{
    return c->rcap;
}

int conn_endpoint(const struct conn *c)
{
    return c->ep->index;
}

bool conn_tls(const struct conn *c)
{
    return c->ep->tls != NULL;
}

const char *conn_principal(const struct conn *c)
{
    return c->principal ? c->principal : ANONYMOUS;
}
