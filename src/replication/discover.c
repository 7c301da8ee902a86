/* Quorum discovery (contract in replication/discover.h). One blocking attempt per server:
 * resolve, non-blocking connect polled to the attempt's deadline, with TLS the client
 * handshake (net/tls.h, non-blocking too: poll for what it waits for), write the
 * QUORUM_DESCRIBE frame, read one size-prefixed frame back (at most DISCOVER_FRAME_MAX bytes)
 * and decode it. Stateless: nothing outlives the call but *out. */
#include "replication/discover.h"

#include <errno.h>
#include <stdbool.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/endian.h"
#include "base/errors.h"
#include "base/iobuf.h"
#include "base/mem.h"
#include "base/time.h"
#include "net/dial.h"
#include "net/tls.h"
#include "security/peer_auth.h"

#define DISCOVER_ATTEMPT_MS 2000
#define DISCOVER_RETRY_MS 200
#define DISCOVER_FRAME_MAX 4096 /* a QUORUM_INFO of 7 voters with the longest hosts: < 2 KiB */

/* Waits until fd is ready for events or the deadline; 0, or -ERR_TIMEOUT / -errno. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - time_mono_ms();
        if (left <= 0)
            return -ERR_TIMEOUT;
        struct pollfd p = {.fd = fd, .events = events};
        int rc = poll(&p, 1, (int)left);
        if (rc > 0)
            return 0;
        if (rc < 0 && errno != EINTR)
            return -errno;
    }
}

/* One attempt's connection: the socket and, with TLS, its session (or NULL). */
struct chan {
    int fd;
    struct tls *tls;
};

/* Waits for what OpenSSL asked for. */
static int tls_wait(const struct chan *ch, enum tls_status st, int64_t deadline)
{
    return wait_fd(ch->fd, st == TLS_WANT_READ ? POLLIN : POLLOUT, deadline);
}

/* The client handshake, to the deadline. 0, -ERR_TIMEOUT / -errno (poll), or -EPROTO. */
static int tls_connect(struct chan *ch, int64_t deadline)
{
    for (;;) {
        enum tls_status st = tls_handshake(ch->tls);
        if (st == TLS_OK)
            return 0;
        if (st != TLS_WANT_READ && st != TLS_WANT_WRITE)
            return -EPROTO;
        int rc = tls_wait(ch, st, deadline);
        if (rc != 0)
            return rc;
    }
}

/* io_all through TLS: -ERR_SHORT on a clean close, -EPROTO when the session failed. */
static int tls_io_all(struct chan *ch, uint8_t *buf, size_t len, bool writing, int64_t deadline)
{
    size_t done = 0;
    while (done < len) {
        size_t n = 0;
        enum tls_status st = writing ? tls_write(ch->tls, buf + done, len - done, &n)
                                     : tls_read(ch->tls, buf + done, len - done, &n);
        if (st == TLS_OK) {
            done += n;
            continue;
        }
        if (st == TLS_EOF)
            return -ERR_SHORT;
        if (st == TLS_ERROR)
            return -EPROTO;
        int rc = tls_wait(ch, st, deadline);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int io_all(struct chan *ch, uint8_t *buf, size_t len, bool writing, int64_t deadline)
{
    if (ch->tls)
        return tls_io_all(ch, buf, len, writing, deadline);
    int fd = ch->fd;
    size_t done = 0;
    while (done < len) {
        int rc = wait_fd(fd, writing ? POLLOUT : POLLIN, deadline);
        if (rc != 0)
            return rc;
        ssize_t n = writing ? send(fd, buf + done, len - done, MSG_NOSIGNAL)
                            : recv(fd, buf + done, len - done, 0);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -ERR_SHORT; /* closed before the whole answer came */
        done += (size_t)n;
    }
    return 0;
}

static int dial(const struct discover_server *s, int64_t deadline, int *out)
{
    char serv[16];
    snprintf(serv, sizeof(serv), "%d", s->port);
    struct addrinfo hints = {
        .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    if (getaddrinfo(s->host, serv, &hints, &res) != 0 || !res)
        return -ERR_NOT_FOUND;
    int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int rc = fd < 0 ? -errno : 0;
    if (rc == 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0 && errno != EINPROGRESS)
        rc = -errno;
    freeaddrinfo(res);
    if (rc == 0)
        rc = wait_fd(fd, POLLOUT, deadline);
    if (rc == 0) {
        int soerr = 0;
        socklen_t l = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &l) != 0)
            rc = -errno;
        else if (soerr != 0)
            rc = -soerr;
    }
    if (rc != 0) {
        if (fd >= 0)
            close(fd);
        return rc;
    }
    *out = fd;
    return 0;
}

/* Opens the TLS session of an attempt. 0, or a negative code with the reason in err. */
static int tls_open(const struct discover_server *s, const struct dial_tls *tls, struct chan *ch,
                    int64_t deadline, char *err, size_t errcap)
{
    struct ssl_ctx_st *ctx = tls->ctx_get(time_mono_ms(), tls->data);
    ch->tls = ctx ? tls_new_client(ctx, ch->fd) : NULL;
    if (!ch->tls) {
        snprintf(err, errcap, "%s:%d: cannot start a TLS session", s->host, s->port);
        return -ENOMEM;
    }
    int rc = tls_connect(ch, deadline);
    if (rc == -EPROTO && !strncmp(tls_error(ch->tls), "certificate verify failed", 25))
        snprintf(err, errcap, "%s:%d: TLS: its certificate is not trusted: %s (does "
                 "cluster.ssl.truststore.location hold the cluster's CA?)", s->host, s->port,
                 tls_error(ch->tls));
    else if (rc == -EPROTO)
        snprintf(err, errcap, "%s:%d: TLS handshake failed: %s (is it a TLS cluster listener, "
                 "with cluster.ssl.* set there?)", s->host, s->port, tls_error(ch->tls));
    else if (rc != 0)
        snprintf(err, errcap, "%s:%d: TLS handshake: %s", s->host, s->port, err_str(rc));
    return rc;
}

static void chan_close(struct chan *ch)
{
    tls_free(ch->tls);
    ch->tls = NULL;
    close(ch->fd);
}

/* One server: 0 and *out, or a negative code with the reason in err. */
static int ask(const struct discover_server *s, int32_t self, const struct peer_secret *secret,
               const struct dial_tls *tls, int64_t deadline, struct rpc_quorum_info *out,
               char *err, size_t errcap)
{
    bool auth = secret && secret->len > 0;
    uint8_t nonce[PEER_AUTH_NONCE];
    if (auth && peer_auth_nonce(nonce) != 0) {
        snprintf(err, errcap, "no random bytes for the nonce");
        return -EIO;
    }
    struct chan ch = {.fd = -1};
    int rc = dial(s, deadline, &ch.fd);
    if (rc != 0) {
        snprintf(err, errcap, "%s:%d: %s", s->host, s->port, err_str(rc));
        return rc;
    }
    if (tls && (rc = tls_open(s, tls, &ch, deadline, err, errcap)) != 0) {
        chan_close(&ch);
        return rc;
    }
    struct iobuf b;
    iobuf_init(&b);
    rpc_encode_quorum_describe(&b, self, auth ? nonce : NULL);
    size_t len;
    uint8_t *req = iobuf_flatten(&b, &len);
    iobuf_destroy(&b);
    rc = io_all(&ch, req, len, true, deadline);
    mem_free(req);
    uint8_t size[4];
    if (rc == 0)
        rc = io_all(&ch, size, sizeof(size), false, deadline);
    uint32_t n = rc == 0 ? be_get32(size) : 0;
    if (rc == 0 && (n < RPC_HEADER_BYTES || n > DISCOVER_FRAME_MAX))
        rc = -ERR_CORRUPT;
    uint8_t frame[DISCOVER_FRAME_MAX];
    if (rc == 0)
        rc = io_all(&ch, frame, n, false, deadline);
    if (rc == -EPROTO) { /* after our certificate went: the server refused it */
        snprintf(err, errcap, "%s:%d: TLS session refused: %s (is cluster.ssl.keystore.location's "
                 "certificate signed by the cluster's CA?)", s->host, s->port,
                 tls_error(ch.tls));
        chan_close(&ch);
        return rc;
    }
    chan_close(&ch);
    if (rc == -ERR_SHORT || rc == -ECONNRESET) { /* a Kafka listener closes on our frame */
        snprintf(err, errcap, "%s:%d closed the connection without an answer: not a StreamPulse "
                 "cluster listener (cluster.listener of a running node)%s?", s->host, s->port,
                 tls ? "" : ", or one that requires TLS (cluster.ssl.* set there)");
        return rc;
    }
    if (rc != 0) {
        snprintf(err, errcap, "%s:%d: %s", s->host, s->port, err_str(rc));
        return rc;
    }
    struct rpc_header h;
    const uint8_t *body;
    size_t body_len;
    rc = rpc_decode_header(frame, n, &h, &body, &body_len);
    if (rc == 0 && h.type == RPC_ERROR) {
        struct rpc_error e;
        if (rpc_decode_error(body, body_len, &e) == 0) {
            snprintf(err, errcap, "%s:%d refused: %.*s", s->host, s->port, (int)e.text_len,
                     e.text);
            return -ERR_INVALID;
        }
        rc = -ERR_CORRUPT;
    }
    const uint8_t *proof = NULL;
    if (rc == 0 &&
        (h.type != RPC_QUORUM_INFO || rpc_decode_quorum_info(body, body_len, out, &proof) != 0))
        rc = -ERR_CORRUPT;
    if (rc == 0 && auth) {
        uint8_t want[PEER_AUTH_PROOF];
        if (proof)
            peer_auth_msg_proof(secret, "sp-quorum", nonce, body, body_len - RPC_PROOF_LEN, want);
        if (!proof || !peer_auth_equal(want, proof)) {
            snprintf(err, errcap, "%s:%d answered without a good proof of the inter-broker "
                     "secret (cluster.secret.file differs, or is not set there)", s->host,
                     s->port);
            return -EACCES;
        }
    }
    if (rc != 0) {
        snprintf(err, errcap, "%s:%d: not a StreamPulse cluster listener (%s)", s->host, s->port,
                 rc == -ERR_UNSUPPORTED ? "another protocol version" : "unexpected answer");
        return rc;
    }
    return 0;
}

int discover_quorum(const struct discover_server *servers, size_t n, int32_t self,
                    const struct peer_secret *secret, const struct dial_tls *tls,
                    int64_t timeout_ms, struct rpc_quorum_info *out, char *err, size_t errcap)
{
    int64_t end = time_mono_ms() + timeout_ms;
    snprintf(err, errcap, "no bootstrap server");
    for (;;) {
        for (size_t i = 0; i < n; i++) {
            int64_t now = time_mono_ms();
            if (now >= end)
                return -ERR_TIMEOUT;
            int64_t deadline = now + DISCOVER_ATTEMPT_MS < end ? now + DISCOVER_ATTEMPT_MS : end;
            if (ask(&servers[i], self, secret, tls, deadline, out, err, errcap) == 0)
                return 0;
        }
        if (n == 0 || time_mono_ms() + DISCOVER_RETRY_MS >= end)
            return -ERR_TIMEOUT;
        usleep(DISCOVER_RETRY_MS * 1000);
    }
}
